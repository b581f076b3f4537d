// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libFuzzer target over texpr's shape logic: broadcast_shapes, check_broadcastable, reduction axes, matmul
// shape rules, leaf accessors over arbitrary (negative, zero) strides, the evaluation of small int32 graphs
// built from the input bytes, and extent arithmetic at every shape constructor (tensor, view, generators,
// reshape, broadcast_to, slice, .npy headers, DLPack structs) with extents from 0 to INT64_MAX and below 0,
// each checked against an independent reference in 128-bit arithmetic: the outcome is the right result or
// shape_error / interop_error / io_error, never anything else. Any mismatch aborts.
// Built with clang++ -fsanitize=fuzzer by .ci/reliability.sh, and with replay_main.cpp as a ctest.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <texpr/texpr.hpp>
#include <texpr/interop/npy.hpp>
#if __has_include(<dlpack/dlpack.h>)
#include <texpr/interop/dlpack.hpp>
#define TEXPR_FUZZ_DLPACK 1
#endif
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <unistd.h>

namespace tx = texpr;

namespace {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_shapes: invariant violated: %s %s\n", what, detail.c_str());
  std::abort();
}
#define FUZZ_ASSERT(cond, detail) \
  do {                            \
    if (!(cond)) fail(#cond, detail); \
  } while (0)

// Reads the input bytes; past the end it yields zeros, so every input is a valid program.
struct reader {
  const std::uint8_t* p;
  std::size_t n;
  std::uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  int pick(int count) { return byte() % count; }
  std::int32_t i32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | byte();
    return static_cast<std::int32_t>(v);
  }
  // Mostly small extents (0..4, where broadcasting is interesting), sometimes anything.
  tx::index_t extent(bool any) {
    const std::uint8_t b = byte();
    if (any && b >= 250) {
      std::uint64_t v = 0;
      for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
      return static_cast<tx::index_t>(v);
    }
    return b % 5;
  }
  template <std::size_t R> tx::shape_t<R> shape(bool any) {
    tx::shape_t<R> s{};
    for (auto& e : s) e = extent(any);
    return s;
  }
};

// Reference NumPy broadcasting, written independently of texpr (right-aligned, 1 stretches).
template <std::size_t RA, std::size_t RB> bool ref_broadcast(const tx::shape_t<RA>& a, const tx::shape_t<RB>& b, std::vector<tx::index_t>& out) {
  const std::size_t r = RA > RB ? RA : RB;
  out.assign(r, 0);
  for (std::size_t k = 0; k < r; ++k) {  // k counts from the right
    const tx::index_t x = k < RA ? a[RA - 1 - k] : 1, y = k < RB ? b[RB - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) return false;
    out[r - 1 - k] = x == 1 ? y : x;
  }
  // The result must be a shape texpr can hold: extents >= 0, nonzero extents' product within int64.
  i128 product = 1;
  for (auto e : out) {
    if (e < 0) return false;
    if (e != 0) product *= e;
    if (product > INT64_MAX) return false;
  }
  return true;
}

template <std::size_t RA, std::size_t RB> void broadcast_case(reader& in) {
  const auto a = in.shape<RA>(true);
  const auto b = in.shape<RB>(true);
  std::vector<tx::index_t> want;
  const bool ok = ref_broadcast(a, b, want);
  bool threw = false;
  try {
    const auto got = tx::broadcast_shapes(a, b);
    for (std::size_t i = 0; i < got.size(); ++i) FUZZ_ASSERT(got[i] == want[i], tx::to_string(a) + tx::to_string(b));
    const auto sym = tx::broadcast_shapes(b, a);
    FUZZ_ASSERT(sym == got, "broadcasting is symmetric");
    tx::check_broadcastable(a, got, "a");  // both operands broadcast to the result
    tx::check_broadcastable(b, got, "b");
  } catch (const tx::shape_error& e) {
    threw = true;
    const std::string msg = e.what();
    FUZZ_ASSERT(msg.find(tx::to_string(a)) != std::string::npos && msg.find(tx::to_string(b)) != std::string::npos, msg);
  }
  FUZZ_ASSERT(threw != ok, tx::to_string(a) + " with " + tx::to_string(b));
}

template <std::size_t RF, std::size_t RT> void check_broadcastable_case(reader& in) {
  if constexpr (RF <= RT) {
    const auto from = in.shape<RF>(true);
    const auto to = in.shape<RT>(true);
    bool ok = true;
    for (std::size_t i = 0; i < RF; ++i)
      if (from[i] != to[i + RT - RF] && from[i] != 1) ok = false;
    bool threw = false;
    try {
      tx::check_broadcastable(from, to, "x");
    } catch (const tx::shape_error&) {
      threw = true;
    }
    FUZZ_ASSERT(threw != ok, tx::to_string(from) + " to " + tx::to_string(to));
  }
}

template <std::size_t R> tx::tensor<std::int32_t, R> small_tensor(reader& in, const tx::shape_t<R>& s) {
  tx::tensor<std::int32_t, R> t(s);
  for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<std::int8_t>(in.byte());
  return t;
}

// Row-major unravel.
template <std::size_t R> std::array<tx::index_t, R> unravel(tx::index_t i, const tx::shape_t<R>& s) {
  std::array<tx::index_t, R> idx{};
  for (std::size_t d = R; d-- > 0;) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}

template <std::size_t R> void reduce_case(reader& in) {
  const auto s = in.shape<R>(false);
  auto x = small_tensor<R>(in, s);
  const tx::index_t axis = static_cast<std::int8_t>(in.byte()) % 6;  // -5 .. 5
  const bool valid = axis >= -static_cast<tx::index_t>(R) && axis < static_cast<tx::index_t>(R);
  const int op = in.pick(3);
  try {
    auto e = tx::sum(x, axis);
    FUZZ_ASSERT(valid, "axis accepted");
    const std::size_t ax = static_cast<std::size_t>(axis < 0 ? axis + static_cast<tx::index_t>(R) : axis);
    tx::shape_t<R - 1> os{};
    for (std::size_t d = 0, o = 0; d < R; ++d)
      if (d != ax) os[o++] = s[d];
    FUZZ_ASSERT(e.shape() == os, tx::to_string(e.shape()));
    const bool empty_axis = s[ax] == 0 && tx::shape_size(os) != 0;
    tx::tensor<std::int32_t, R - 1> got;
    try {
      if (op == 0) got = tx::sum(x, axis);
      else if (op == 1) got = tx::max(x * 2, axis);
      else got = tx::min(x, axis);
      FUZZ_ASSERT(op == 0 || !empty_axis, "max/min over an empty axis must throw");
    } catch (const tx::shape_error&) {
      FUZZ_ASSERT(op != 0 && empty_axis, "unexpected shape_error");
      return;
    }
    FUZZ_ASSERT(got.shape() == os, "result shape");
    for (tx::index_t o = 0; o < got.size(); ++o) {
      auto oi = unravel<R - 1>(o, os);
      std::int64_t acc = op == 0 ? 0 : op == 1 ? INT64_MIN : INT64_MAX;
      for (tx::index_t l = 0; l < s[ax]; ++l) {
        std::array<tx::index_t, R> idx{};
        for (std::size_t d = 0, k = 0; d < R; ++d) idx[d] = d == ax ? l : oi[k++];
        tx::index_t off = 0;
        for (std::size_t d = 0; d < R; ++d) off = off * s[d] + idx[d];
        const std::int64_t v = x.data()[off] * (op == 1 ? 2 : 1);
        acc = op == 0 ? acc + v : op == 1 ? (v > acc ? v : acc) : (v < acc ? v : acc);
      }
      FUZZ_ASSERT(got.data()[o] == acc, "reduction value");
    }
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!valid, e.what());
    FUZZ_ASSERT(std::string(e.what()).find(tx::to_string(s)) != std::string::npos, e.what());
  }
}

template <std::size_t RA, std::size_t RB> void matmul_case(reader& in) {
  const auto as = in.shape<RA>(false);
  auto bs = in.shape<RB>(false);
  if (in.pick(2)) bs[RB - 2] = as[RA - 1];  // usually compatible
  if (RA == 3 && RB == 3 && in.pick(2)) bs[0] = as[0];
  auto a = small_tensor<RA>(in, as);
  auto b = small_tensor<RB>(in, bs);
  const bool inner_ok = as[RA - 1] == bs[RB - 2];
  // Batch dimensions broadcast (NumPy): equal, or one of them 1.
  const bool batch_ok = !(RA == 3 && RB == 3) || as[0] == bs[0] || as[0] == 1 || bs[0] == 1;
  try {
    tx::tensor<std::int32_t, (RA > RB ? RA : RB)> c = tx::matmul(a, b);
    FUZZ_ASSERT(inner_ok && batch_ok, "matmul accepted bad shapes");
    const tx::index_t m = as[RA - 2], k = as[RA - 1], n = bs[RB - 1];
    const tx::index_t ba = RA == 3 ? as[0] : 1, bb = RB == 3 ? bs[0] : 1;
    const tx::index_t batch = ba == 1 ? bb : ba;
    FUZZ_ASSERT(c.size() == batch * m * n, "matmul result size");
    for (tx::index_t p = 0; p < batch; ++p)
      for (tx::index_t i = 0; i < m; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          std::int64_t acc = 0;
          const tx::index_t pa = ba == 1 ? 0 : p, pb = bb == 1 ? 0 : p;
          for (tx::index_t l = 0; l < k; ++l)
            acc += std::int64_t(a.data()[pa * m * k + i * k + l]) * b.data()[pb * k * n + l * n + j];
          FUZZ_ASSERT(c.data()[(p * m + i) * n + j] == acc, "matmul value");
        }
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!(inner_ok && batch_ok), e.what());
    const std::string msg = e.what();
    FUZZ_ASSERT(msg.find(tx::to_string(as)) != std::string::npos && msg.find(tx::to_string(bs)) != std::string::npos, msg);
  }
}

// A strided view (strides in -3..3, zero included) over a buffer, plus a broadcast partner; the sum is
// evaluated into a fresh tensor or, aliasing, into a second view over the same buffer.
void view_case(reader& in) {
  constexpr std::size_t R = 3;
  const auto s = in.shape<R>(false);
  tx::shape_t<R> st{};
  for (auto& v : st) v = static_cast<tx::index_t>(in.pick(7)) - 3;
  tx::index_t lo = 0, hi = 0;
  for (std::size_t d = 0; d < R; ++d) {
    if (s[d] == 0) continue;
    const tx::index_t span = (s[d] - 1) * st[d];
    (span < 0 ? lo : hi) += span;
  }
  std::vector<std::int32_t> buf(static_cast<std::size_t>(hi - lo + 8));
  for (auto& v : buf) v = static_cast<std::int8_t>(in.byte());
  std::int32_t* base = buf.data() - lo + in.pick(4);
  tx::view<std::int32_t, R> v(base, s, st);
  // Partner: each dimension of v's shape, or 1 (broadcast), with rank 1..3 via a rank-3 shape padded with 1s.
  tx::shape_t<R> ps = s;
  for (auto& e : ps)
    if (in.pick(3) == 0) e = 1;
  auto partner = small_tensor<R>(in, ps);
  // The accessor's strides: 0 on size-1 dimensions, the view's own elsewhere.
  tx::context<tx::host> ctx;
  const auto acc = tx::detail::read(v, s, ctx);
  for (std::size_t d = 0; d < R; ++d) FUZZ_ASSERT(acc.st[d] == (s[d] == 1 ? 0 : st[d]), "accessor stride");
  const auto before = buf;
  auto read_before = [&](const std::array<tx::index_t, R>& idx) {
    tx::index_t off = 0;
    for (std::size_t d = 0; d < R; ++d) off += idx[d] * st[d];
    return before[static_cast<std::size_t>(base - buf.data() + off)];
  };
  auto want = [&](tx::index_t i) {
    const auto idx = unravel<R>(i, s);
    tx::index_t po = 0;
    for (std::size_t d = 0; d < R; ++d) po = po * ps[d] + (ps[d] == 1 ? 0 : idx[d]);
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(read_before(idx)) + static_cast<std::uint32_t>(partner.data()[po]));
  };
  if (in.pick(2) == 0) {
    tx::tensor<std::int32_t, R> out = v + partner;
    for (tx::index_t i = 0; i < out.size(); ++i) FUZZ_ASSERT(out.data()[i] == want(i), "strided + broadcast");
    return;
  }
  // Aliasing: a destination view over the same buffer with its own injective layout (row-major strides, maybe
  // reversed, at an offset), evaluated as if the source had been read first.
  tx::shape_t<R> ds = tx::contiguous_strides(s);
  std::int32_t* dbase = buf.data() + in.pick(static_cast<int>(buf.size()));
  const tx::index_t need = tx::shape_size(s);
  if (need > 0 && (dbase - buf.data()) + need > static_cast<tx::index_t>(buf.size())) dbase = buf.data();
  if (need > static_cast<tx::index_t>(buf.size())) return;
  tx::view<std::int32_t, R> dst(dbase, s, ds);
  dst = v + partner;
  for (tx::index_t i = 0; i < need; ++i) FUZZ_ASSERT(dbase[i] == want(i), "aliased assignment");
}

// A small int32 graph: op(op(a, b), c) with ops from the bytes, broadcasting shapes, against i128 wrap.
void graph_case(reader& in) {
  const auto out = in.shape<2>(false);
  auto sh = [&] {
    tx::shape_t<2> s = out;
    for (auto& e : s)
      if (in.pick(3) == 0) e = 1;
    return s;
  };
  const auto sa = sh(), sb = sh(), sc = sh();
  auto a = small_tensor<2>(in, sa);
  auto b = small_tensor<2>(in, sb);
  auto c = small_tensor<2>(in, sc);
  for (auto* t : {&a, &b, &c})
    if (in.pick(4) == 0)
      for (tx::index_t i = 0; i < t->size(); ++i) t->data()[i] = in.i32();  // full range: wrap-around
  const int o1 = in.pick(6), o2 = in.pick(6);
  auto apply = [](int op, i128 x, i128 y) -> std::int32_t {
    i128 r;
    switch (op) {
      case 0: r = x + y; break;
      case 1: r = x - y; break;
      case 2: r = x * y; break;
      case 3: r = y == 0 ? 0 : x / y; break;
      case 4: r = x > y ? x : y; break;
      default: r = x < y ? x : y; break;
    }
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<u128>(r)));
  };
  auto lazy = [](int op, const auto& x, const auto& y) {
    tx::tensor<std::int32_t, 2> r;
    switch (op) {
      case 0: r = x + y; break;
      case 1: r = x - y; break;
      case 2: r = x * y; break;
      case 3: r = x / y; break;
      case 4: r = tx::maximum(x, y); break;
      default: r = tx::minimum(x, y); break;
    }
    return r;
  };
  tx::tensor<std::int32_t, 2> ab = lazy(o1, a, b);
  tx::tensor<std::int32_t, 2> got = lazy(o2, ab, c);
  tx::shape_t<2> want_shape{};
  for (std::size_t d = 0; d < 2; ++d) want_shape[d] = sa[d] != 1 || sb[d] != 1 || sc[d] != 1 ? out[d] : 1;
  FUZZ_ASSERT(got.shape() == want_shape, tx::to_string(got.shape()));
  auto at = [](const tx::tensor<std::int32_t, 2>& t, tx::index_t i, tx::index_t j) {
    return t.data()[(t.shape()[0] == 1 ? 0 : i) * t.shape()[1] + (t.shape()[1] == 1 ? 0 : j)];
  };
  for (tx::index_t i = 0; i < got.shape()[0]; ++i)
    for (tx::index_t j = 0; j < got.shape()[1]; ++j) {
      const std::int32_t w = apply(o2, apply(o1, at(a, i, j), at(b, i, j)), at(c, i, j));
      FUZZ_ASSERT(got.data()[i * got.shape()[1] + j] == w, "graph value");
    }
}

// ---- Extent arithmetic: extents drawn from the edges of int64, references in 128-bit arithmetic. ----

// An extent, stride or index from the interesting values: 0, 1, small, near 2^31, 2^32, near 2^62, negative,
// INT64_MIN and INT64_MAX, or any 64-bit value.
tx::index_t edgy(reader& in) {
  constexpr tx::index_t table[] = {0, 1, 2, 3, 4, 5, 7, -1, -2, -5,
                                   (tx::index_t(1) << 31) - 1, tx::index_t(1) << 31, tx::index_t(1) << 32,
                                   (tx::index_t(1) << 60) + 1, (tx::index_t(1) << 61), (tx::index_t(1) << 62) - 1,
                                   tx::index_t(1) << 62, (tx::index_t(1) << 62) + 1, INT64_MAX, INT64_MAX - 1,
                                   INT64_MIN, INT64_MIN + 1, -(tx::index_t(1) << 62), 1000000, 1000000000000};
  const std::uint8_t b = in.byte();
  if (b < 200) return table[b % std::size(table)];
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | in.byte();
  return static_cast<tx::index_t>(v);
}
template <std::size_t R> tx::shape_t<R> edgy_shape(reader& in) {
  tx::shape_t<R> s{};
  for (auto& e : s) e = in.pick(3) ? static_cast<tx::index_t>(in.pick(5)) : edgy(in);
  return s;
}

// NumPy's rule: extents >= 0 and the product of the nonzero ones, times the element size, within int64.
template <std::size_t R> bool ref_valid(const tx::shape_t<R>& s, std::size_t bytes) {
  i128 product = static_cast<i128>(bytes);
  for (auto e : s) {
    if (e < 0) return false;
    if (e != 0) product *= e;
    if (product > INT64_MAX) return false;
  }
  return true;
}
// The element count, saturated at 2^63 (only compared); -1 for a shape with a negative extent and no zero.
template <std::size_t R> i128 ref_count(const tx::shape_t<R>& s) {
  for (auto e : s)
    if (e == 0) return 0;
  i128 n = 1;
  for (auto e : s) {
    if (e < 0) return -1;
    n = n * e > i128(INT64_MAX) ? i128(INT64_MAX) + 1 : n * e;
  }
  return n;
}
// The strided span in bytes, lowest to highest byte touched, of a non-empty shape (0 when empty).
template <std::size_t R> i128 ref_span(const tx::shape_t<R>& s, const tx::shape_t<R>& st, i128 bytes, i128& lo, i128& hi) {
  lo = hi = 0;
  for (std::size_t d = 0; d < R; ++d)
    if (s[d] == 0) return 0;
  for (std::size_t d = 0; d < R; ++d) (st[d] < 0 ? lo : hi) += i128(s[d] - 1) * st[d];
  lo *= bytes;
  hi *= bytes;
  return hi - lo + bytes;
}

constexpr tx::index_t small_count = 4096;  // shapes with more elements are built, never allocated or read

// A tensor, a lazy generator and a view over one element (stride 0: any valid shape fits) or a random strided
// view, each accepted exactly when the reference says the shape (and span) is valid.
template <std::size_t R> void constructor_case(reader& in) {
  const auto s = edgy_shape<R>(in);
  const bool valid = ref_valid(s, sizeof(float));
  const bool small = valid && ref_count(s) <= small_count;
  const std::string what = tx::to_string(s);
  if (!valid || small) {
    try {
      tx::tensor<float, R> t(s);
      FUZZ_ASSERT(valid && t.shape() == s && t.size() == static_cast<tx::index_t>(ref_count(s)), what);
      for (tx::index_t i = 0; i < t.size(); ++i) FUZZ_ASSERT(t.data()[i] == 0.0f, what);
    } catch (const tx::shape_error& e) {
      FUZZ_ASSERT(!valid, what + ": " + e.what());
      FUZZ_ASSERT(std::string(e.what()).find(what) != std::string::npos, e.what());
    }
  }
  try {
    auto z = tx::full(s, 2.0f);
    FUZZ_ASSERT(valid && z.shape() == s, what);
    if (small) {
      tx::tensor<float, 0> total = tx::sum(z);
      FUZZ_ASSERT(total() == 2.0f * static_cast<float>(ref_count(s)), what);
    }
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!valid, what + ": " + e.what());
  }
  try {
    (void)tx::random::uniform<float>(s, 7);
    FUZZ_ASSERT(valid, what);
  } catch (const tx::shape_error&) {
    FUZZ_ASSERT(!valid, what);
  }
  float buf[64] = {};
  for (int i = 0; i < 64; ++i) buf[i] = static_cast<float>(i);
  tx::shape_t<R> st{};
  const bool random_strides = in.pick(2);
  if (random_strides)
    for (auto& v : st) v = in.pick(2) ? static_cast<tx::index_t>(in.pick(7)) - 3 : edgy(in);
  i128 lo = 0, hi = 0;
  const i128 span = valid ? ref_span(s, st, sizeof(float), lo, hi) : 0;
  const bool view_ok = valid && span <= INT64_MAX;
  float* base = buf + 32;
  try {
    tx::view<float, R> v(base, s, st);
    FUZZ_ASSERT(view_ok, what + " strides " + tx::to_string(st));
    FUZZ_ASSERT(v.shape() == s && v.strides() == st, what);
    // Read it only when every element lies in buf.
    if (small && 32 * 4 + lo >= 0 && 32 * 4 + hi + 4 <= i128(sizeof(buf))) {
      tx::tensor<float, R> copy = v;
      for (tx::index_t i = 0; i < copy.size(); ++i) {
        tx::index_t off = 0, rest = i;
        for (std::size_t d = R; d-- > 0;) {
          off += (rest % s[d]) * st[d];
          rest /= s[d];
        }
        FUZZ_ASSERT(copy.data()[i] == base[off], what + " strided read");
      }
    }
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!view_ok, what + " strides " + tx::to_string(st) + ": " + e.what());
  }
}

// reshape of a small tensor to a target with extents from the edges (one may be -1), against NumPy's rules.
template <std::size_t RO> void reshape_case(reader& in) {
  const auto src = in.shape<2>(false);
  auto x = small_tensor<2>(in, src);
  tx::index_t target[RO];
  for (auto& e : target) e = in.pick(2) ? static_cast<tx::index_t>(in.pick(6)) - 1 : edgy(in);
  const i128 n = ref_count(src);
  // Reference: at most one -1, no other negative; the known extents (-1 as 1) a valid shape; the count n.
  bool ok = true;
  int infer = -1;
  tx::shape_t<RO> known{};
  for (std::size_t d = 0; d < RO; ++d) {
    known[d] = target[d] == -1 && infer < 0 ? 1 : target[d];
    if (target[d] == -1 && infer < 0) infer = static_cast<int>(d);
    else if (target[d] < 0) ok = false;
  }
  ok = ok && ref_valid(known, sizeof(std::int32_t));
  tx::shape_t<RO> want = known;
  if (ok && infer >= 0) {
    const i128 k = ref_count(known);
    want[static_cast<std::size_t>(infer)] = k == 0 ? 0 : static_cast<tx::index_t>(n / k);
  }
  ok = ok && ref_count(want) == n;
  try {
    tx::tensor<std::int32_t, RO> y = tx::reshape(x, target);
    FUZZ_ASSERT(ok && y.shape() == want, tx::to_string(want));
    for (tx::index_t i = 0; i < y.size(); ++i) FUZZ_ASSERT(y.data()[i] == x.data()[i], "reshape keeps row-major order");
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!ok, e.what());
  }
}

// broadcast_to a target from the edges: valid when the target is and every source extent is 1 or equal.
template <std::size_t RI, std::size_t RO> void broadcast_to_case(reader& in) {
  tx::shape_t<RI> src{};
  for (auto& e : src) e = in.pick(2) ? 1 : static_cast<tx::index_t>(in.pick(4));
  auto x = small_tensor<RI>(in, src);
  auto target = edgy_shape<RO>(in);
  for (std::size_t i = 0; i < RI; ++i)
    if (in.pick(2)) target[i + RO - RI] = src[i];
  bool ok = ref_valid(target, sizeof(std::int32_t));
  for (std::size_t i = 0; i < RI; ++i) ok = ok && (src[i] == 1 || src[i] == target[i + RO - RI]);
  try {
    auto b = tx::broadcast_to(x, target);
    FUZZ_ASSERT(ok && b.shape() == target, tx::to_string(target));
    if (ref_count(target) <= small_count) {
      tx::tensor<std::int32_t, RO> y = b;
      for (tx::index_t i = 0; i < y.size(); ++i) {
        const auto idx = unravel<RO>(i, target);
        tx::index_t off = 0;
        for (std::size_t d = 0; d < RI; ++d) off = off * src[d] + (src[d] == 1 ? 0 : idx[d + RO - RI]);
        FUZZ_ASSERT(y.data()[i] == x.data()[off], "broadcast value");
      }
    }
  } catch (const tx::shape_error& e) {
    FUZZ_ASSERT(!ok, e.what());
  }
}

// slice with begin, end and step from the edges (any sign and size) against Python's range(n)[b:e:s].
void slice_case(reader& in) {
  const tx::index_t n = in.pick(7);
  tx::tensor<std::int32_t, 2> x = small_tensor<2>(in, tx::shape_t<2>{n, 2});
  const tx::index_t b = edgy(in), e = edgy(in), st = edgy(in);
  std::vector<tx::index_t> want;
  if (st != 0) {
    const bool up = st > 0;
    const i128 lower = up ? 0 : -1, upper = up ? n : n - 1;
    auto adjust = [&](i128 i) { return i < 0 ? (i + n < lower ? lower : i + n) : (i > upper ? upper : i); };
    for (i128 i = adjust(b), stop = adjust(e); up ? i < stop : i > stop; i += st) want.push_back(static_cast<tx::index_t>(i));
  }
  try {
    tx::tensor<std::int32_t, 2> y = tx::slice(x, 0, b, e, st);
    FUZZ_ASSERT(st != 0, "step 0 accepted");
    FUZZ_ASSERT(y.shape()[0] == static_cast<tx::index_t>(want.size()) && y.shape()[1] == 2, tx::to_string(y.shape()));
    for (std::size_t i = 0; i < want.size(); ++i)
      for (tx::index_t j = 0; j < 2; ++j) FUZZ_ASSERT(y(i, j) == x(want[i], j), "slice value");
  } catch (const tx::shape_error&) {
    FUZZ_ASSERT(st == 0, "slice threw for a nonzero step");
  }
}

// A .npy file whose header holds extents from the edges (and data when the shape is small): load_npy gives the
// array or io_error.
template <std::size_t R> void npy_case(reader& in) {
  auto s = edgy_shape<R>(in);
  for (auto& e : s)
    if (e < 0) e = e == INT64_MIN ? 0 : -e;  // the header grammar has no sign; negatives are a parse error elsewhere
  const bool valid = ref_valid(s, sizeof(float));
  const bool small = valid && ref_count(s) <= 64;
  std::string dict = "{'descr': '<f4', 'fortran_order': " + std::string(in.pick(2) ? "True" : "False") + ", 'shape': (";
  for (std::size_t d = 0; d < R; ++d) dict += std::to_string(s[d]) + (d + 1 < R ? ", " : R == 1 ? "," : "");
  dict += "), }";
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  std::vector<float> values;
  if (small)
    for (i128 i = 0; i < ref_count(s); ++i) values.push_back(static_cast<float>(in.pick(100)));
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("texpr_fuzz_shapes_" + std::to_string(::getpid()) + ".npy");
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    const auto t = tx::load_npy<float, R>(file);
    FUZZ_ASSERT(small && t.shape() == s, dict);
  } catch (const tx::io_error& e) {
    FUZZ_ASSERT(!small, dict + ": " + e.what());
  }
}

#if defined(TEXPR_FUZZ_DLPACK)
// A hand-built DLTensor with a shape, strides, byte_offset, device code and data pointer from the edges:
// from_dlpack gives the right view or interop_error, never undefined behaviour.
template <std::size_t R> void dlpack_case(reader& in) {
  alignas(8) static float buf[64];
  std::int64_t shape[R == 0 ? 1 : R], strides[R == 0 ? 1 : R];
  const auto s = edgy_shape<R>(in);
  tx::shape_t<R> st{};
  for (std::size_t d = 0; d < R; ++d) {
    shape[d] = s[d];
    st[d] = strides[d] = in.pick(2) ? static_cast<tx::index_t>(in.pick(7)) - 3 : edgy(in);
  }
  const bool null_strides = in.pick(3) == 0;
  constexpr std::int32_t devices[] = {1, 3, 2, 13, 99, 0, -1, 255, 17, INT32_MAX};
  const std::int32_t device = devices[in.pick(static_cast<int>(std::size(devices)))];
  constexpr std::uint64_t offsets[] = {0, 4, 3, 8, std::uint64_t(1) << 62, std::uint64_t(1) << 63, UINT64_MAX - 3,
                                       std::uint64_t(INT64_MAX) - 3};
  const std::uint64_t byte_offset = offsets[in.pick(static_cast<int>(std::size(offsets)))];
  const bool null_data = in.pick(3) == 0;
  DLTensor t{};
  t.data = null_data ? nullptr : buf;
  std::memcpy(&t.device.device_type, &device, sizeof(device));
  t.ndim = static_cast<std::int32_t>(R);
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = null_strides ? nullptr : strides;
  t.byte_offset = byte_offset;
  // Reference.
  bool ok = (device == 1 || device == 3) && byte_offset % 4 == 0;
  bool valid = true;
  for (auto e : s) valid = valid && e >= 0;
  ok = ok && valid && ref_valid(s, sizeof(float));
  tx::shape_t<R> want_strides = st;
  if (ok && null_strides) {
    tx::index_t acc = 1;
    for (std::size_t d = R; d-- > 0;) {
      want_strides[d] = acc;
      acc = static_cast<tx::index_t>(i128(acc) * s[d] > INT64_MAX ? 0 : acc * s[d]);
    }
  }
  i128 lo = 0, hi = 0;
  if (ok) ok = ref_span(s, want_strides, 4, lo, hi) <= INT64_MAX;
  if (ok) ok = byte_offset <= std::uint64_t(INT64_MAX);
  const i128 low = i128(byte_offset) + lo, high = i128(byte_offset) + hi + 4;
  if (ok) ok = low >= INT64_MIN && high <= INT64_MAX;
  const bool empty = ref_count(s) == 0;
  if (ok && !null_data) {
    const i128 addr = static_cast<i128>(reinterpret_cast<std::uintptr_t>(buf));
    const i128 a_lo = addr + (empty ? i128(byte_offset) : low), a_hi = addr + (empty ? i128(byte_offset) : high);
    ok = a_lo >= 0 && a_hi <= i128(UINTPTR_MAX);
  }
  if (ok && null_data) ok = empty;
  try {
    const auto v = tx::from_dlpack<const float, R>(t);
    FUZZ_ASSERT(ok, "from_dlpack accepted shape " + tx::to_string(s) + " strides " + tx::to_string(want_strides) +
                        " byte_offset " + std::to_string(byte_offset) + " device " + std::to_string(device));
    FUZZ_ASSERT(v.shape() == s && (empty || v.strides() == want_strides), "from_dlpack layout");
    if (!null_data)
      FUZZ_ASSERT(reinterpret_cast<std::uintptr_t>(v.data()) == reinterpret_cast<std::uintptr_t>(buf) + byte_offset,
                  "from_dlpack pointer");
  } catch (const tx::interop_error& e) {
    FUZZ_ASSERT(!ok, e.what());
  }
}
#endif

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  reader in{data, size};
  using fn = void (*)(reader&);
  static constexpr fn broadcast_cases[] = {
      broadcast_case<0, 0>, broadcast_case<0, 2>, broadcast_case<1, 1>, broadcast_case<1, 3>, broadcast_case<2, 1>,
      broadcast_case<2, 2>, broadcast_case<3, 1>, broadcast_case<3, 3>, check_broadcastable_case<1, 3>,
      check_broadcastable_case<2, 2>, check_broadcastable_case<3, 3>, check_broadcastable_case<0, 2>};
  static constexpr fn eval_cases[] = {reduce_case<1>,     reduce_case<2>,     reduce_case<3>,     matmul_case<2, 2>,
                                      matmul_case<3, 3>,  matmul_case<2, 3>,  matmul_case<3, 2>,  view_case,
                                      graph_case};
  static constexpr fn extent_cases[] = {
      constructor_case<1>, constructor_case<2>, constructor_case<3>, reshape_case<1>, reshape_case<2>, reshape_case<3>,
      broadcast_to_case<1, 1>, broadcast_to_case<1, 2>, broadcast_to_case<2, 3>, slice_case, npy_case<1>, npy_case<3>,
#if defined(TEXPR_FUZZ_DLPACK)
      dlpack_case<1>, dlpack_case<2>, dlpack_case<3>,
#endif
  };
  const std::uint8_t kind = in.byte();
  if (kind & 1) broadcast_cases[(kind >> 1) % std::size(broadcast_cases)](in);
  else if (kind & 2) eval_cases[(kind >> 2) % std::size(eval_cases)](in);
  else extent_cases[(kind >> 2) % std::size(extent_cases)](in);
  return 0;
}

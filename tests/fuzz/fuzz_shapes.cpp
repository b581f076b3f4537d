// libFuzzer target over texpr's shape logic: broadcast_shapes, check_broadcastable, reduction axes, matmul
// shape rules, leaf accessors over arbitrary (negative, zero) strides, and the evaluation of small int32
// graphs built from the input bytes, each checked against an independent reference. Any mismatch aborts.
// Built with clang++ -fsanitize=fuzzer by .ci/reliability.sh, and with replay_main.cpp as a ctest.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <texpr/texpr.hpp>

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
  const std::uint8_t kind = in.byte();
  if (kind & 1) broadcast_cases[(kind >> 1) % std::size(broadcast_cases)](in);
  else eval_cases[(kind >> 1) % std::size(eval_cases)](in);
  return 0;
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// host_kernels::pairwise_reduce: reductions over everything, along one axis, or over several axes (sum_to). Each
// reduction accumulates blocks of 256 elements in 16 independent lanes (lane k takes elements k, k + 16, ...: at
// most 16 each) and combines the lanes by a tree and the blocks pairwise (a binary counter), so the rounding error
// grows like (16 + 4 + log2(n / 256)) ulp rather than n. Inputs are cut at boundaries that depend only on their
// shape and the parts combined in a fixed order: the result does not depend on the thread count.
//
// Speed: the lanes are vectors (see "Vector lanes"), a block is read in order, one block after another, so a row
// or a range streams at memory bandwidth; a non-last axis is read four rows at a time in wide column tiles.
//
// Code size: the engine (lanes, cascades, axis walks, threading) is compiled once per (op, accumulator, element
// type) and reads its operand through a block_reader; only that reader (a loop filling a buffer from the fused
// operand) is compiled per operand expression. The plan and its driver are eval/reduction_plan.hpp's.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/eval/reduction_plan.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

inline constexpr index_t lanes = 16;   // independent accumulators: vectorisable and pairwise-like
inline constexpr index_t block = 256;  // elements per block before the cascade (error grows as block/lanes)
inline constexpr index_t reduce_chunk = block << 8;  // fixed reduction pieces: 256 blocks

// Element i (at index `base + i` of the reduced range) of get, lifted into the accumulator.
template <class A, class Op, class Get> A lifted(const Op& op, const Get& get, index_t base, index_t i) {
  return op.template lift<A>(widen(get(i)), base + i);
}

// Reduces get(begin .. begin+len) with `lanes` accumulators, then a tree over the lanes.
template <class A, class Op, class Get> A reduce_block(const Op& op, const Get& get, index_t base, index_t begin, index_t len) {
  A lane[lanes];
  for (auto& l : lane) l = op.template identity<A>();
  index_t i = 0;
  for (; i + lanes <= len; i += lanes)
    for (index_t k = 0; k < lanes; ++k) lane[k] = op.combine(lane[k], lifted<A>(op, get, base, begin + i + k));
  for (; i < len; ++i) lane[i % lanes] = op.combine(lane[i % lanes], lifted<A>(op, get, base, begin + i));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (index_t k = 0; k < w; ++k) lane[k] = op.combine(lane[k], lane[k + w]);
  return lane[0];
}

// Pairwise combination of block results (a binary counter): error grows with log2(blocks).
template <class A, class Op> struct cascade {
  const Op& op;
  A stack[64];
  int top = 0;
  std::size_t count = 0;
  explicit cascade(const Op& o) : op(o) {}
  void push(A v) {
    for (std::size_t c = count++; c & 1u; c >>= 1) v = op.combine(stack[--top], v);
    stack[top++] = v;
  }
  A result() const {
    A r = op.template identity<A>();
    for (int i = top; i-- > 0;) r = op.combine(stack[i], r);
    return r;
  }
};

// The per-column twin of cascade: the same binary counter over rows of block results (one value per output
// column of an axis reduction), so each column is combined exactly as cascade combines scalars.
template <class A, class Op> struct column_cascade {
  const Op& op;
  index_t width;         // columns per row
  std::unique_ptr<A[]> stack;  // level l holds row l: columns [l * width, (l + 1) * width)
  index_t top = 0;
  std::size_t count = 0;
  // Room for `blocks` pushes: the counter never holds more than bit_width(blocks) rows.
  column_cascade(const Op& o, index_t width_, index_t blocks)
      : op(o), width(width_), stack(new A[static_cast<std::size_t>(width_) * std::bit_width(static_cast<std::size_t>(blocks))]) {}
  void clear() {
    top = 0;
    count = 0;
  }
  // Pushes the row v[0, w) (w <= width); v is overwritten.
  void push(A* v, index_t w) {
    for (std::size_t c = count++; c & 1u; c >>= 1) {
      const A* below = stack.get() + --top * width;
      for (index_t j = 0; j < w; ++j) v[j] = op.combine(below[j], v[j]);
    }
    A* slot = stack.get() + top++ * width;
    for (index_t j = 0; j < w; ++j) slot[j] = v[j];
  }
  // out[0, w) = the combined columns, newest row first (as cascade::result).
  void result(A* out, index_t w) const {
    for (index_t j = 0; j < w; ++j) out[j] = op.template identity<A>();
    for (index_t i = top; i-- > 0;) {
      const A* s = stack.get() + i * width;
      for (index_t j = 0; j < w; ++j) out[j] = op.combine(s[j], out[j]);
    }
  }
};

// G consecutive full blocks from `begin` at once, each reduced exactly as reduce_block does (same order of
// operations, so the same result), interleaved so that G accumulator chains and G lane trees overlap. The
// generic form: every op where the compiler has no vector extensions.
template <int G, class A, class Op, class Get> void reduce_blocks(const Op& op, const Get& get, index_t base, index_t begin, A* out) {
  A lane[G][lanes];
  for (auto& l : lane)
    for (auto& v : l) v = op.template identity<A>();
  for (index_t i = 0; i < block; i += lanes)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < lanes; ++k)
        lane[g][k] = op.combine(lane[g][k], lifted<A>(op, get, base, begin + g * block + i + k));
  for (index_t w = lanes / 2; w > 0; w /= 2)
    for (int g = 0; g < G; ++g)
      for (index_t k = 0; k < w; ++k) lane[g][k] = op.combine(lane[g][k], lane[g][k + w]);
  for (int g = 0; g < G; ++g) out[g] = lane[g][0];
}

// Vector lanes. reduce_block's 16 lanes as GCC/Clang vectors (vector extensions, no intrinsics: the header is
// also host code under nvcc), for the ops whose combine of a lane with its next element is the same arithmetic in
// every lane: sum, sum_to and mean add, prod multiplies, max and min select, var and stddev take a Welford step
// (every lane has seen as many elements), logsumexp rescales with one exp. The same operations in the same order
// as reduce_block, so the same results. (A lane array indexed by block was kept in registers only partly: one
// accumulator chain went through the stack, a store-to-load round trip per add. Named vectors stay in
// registers.) argmax and argmin select a value and the step it came at.
#if (defined(__GNUC__) || defined(__clang__)) && !defined(TEXPR_REDUCE_NO_VECTORS)
#define TEXPR_REDUCE_VECTORS 1
#if defined(__CUDACC__)
#define TEXPR_REDUCE_UNROLL  // nvcc's front end rejects "GCC unroll"; the host compiler unrolls the short loops anyway
#else
#define TEXPR_REDUCE_UNROLL _Pragma("GCC unroll 16")
#endif
#if defined(__clang__) || defined(__CUDACC__)
// (clang: a loop hint that cannot be honoured, e.g. for a producer calling a non-vectorisable function, is a
// -Wpass-failed warning in the user's build, so clang gets none)
#define TEXPR_REDUCE_IVDEP
#else
#define TEXPR_REDUCE_IVDEP _Pragma("GCC ivdep")
#endif
#else
#define TEXPR_REDUCE_VECTORS 0
#define TEXPR_REDUCE_UNROLL
#define TEXPR_REDUCE_IVDEP
#endif

using lane_fold = op::vector_fold;

template <class A> inline constexpr bool lane_number_v = std::is_same_v<A, float> || std::is_same_v<A, double> ||
                                                         std::is_same_v<A, std::int32_t> || std::is_same_v<A, std::int64_t>;
template <class A> struct lane_indexed : std::false_type {};
template <class C> struct lane_indexed<op::indexed<C>> : std::bool_constant<lane_number_v<C>> {};

/// The lane form that runs for op Op with accumulator A: the fold Op declares, where the lanes hold A (numbers
/// and bool for add, mul, max and min; double moments; float or double scaled sums; indexed numbers), else none.
template <class Op, class A> constexpr lane_fold lane_fold_of() {
  constexpr lane_fold F = Op::fold;
  if constexpr (!TEXPR_REDUCE_VECTORS) return lane_fold::none;
  else if constexpr (F == lane_fold::moments) return std::is_same_v<A, op::moments<double>> ? F : lane_fold::none;
  else if constexpr (F == lane_fold::logsumexp)
    return std::is_same_v<A, op::scaled_sum<float>> || std::is_same_v<A, op::scaled_sum<double>> ? F : lane_fold::none;
  else if constexpr (F == lane_fold::argmax || F == lane_fold::argmin) return lane_indexed<A>::value ? F : lane_fold::none;
  else if constexpr (F == lane_fold::max || F == lane_fold::min) return lane_number_v<A> || std::is_same_v<A, bool> ? F : lane_fold::none;
  else return lane_number_v<A> ? F : lane_fold::none;
}

#if TEXPR_REDUCE_VECTORS
// The lanes as `parts` vectors of the target's width (wider GCC vectors are split by the compiler, through the
// stack on some targets): one 64-byte vector of floats with AVX-512, two with AVX, four with SSE2 or NEON.
#if defined(__AVX512F__)
inline constexpr std::size_t lane_vector_bytes = 64;
#elif defined(__AVX__)
inline constexpr std::size_t lane_vector_bytes = 32;
#else
inline constexpr std::size_t lane_vector_bytes = 16;
#endif
template <class E> struct lane_vector_of;
template <> struct lane_vector_of<float> { typedef float type __attribute__((vector_size(lane_vector_bytes))); };
template <> struct lane_vector_of<double> { typedef double type __attribute__((vector_size(lane_vector_bytes))); };
template <> struct lane_vector_of<std::int32_t> {
  typedef std::int32_t type __attribute__((vector_size(lane_vector_bytes)));
};
template <> struct lane_vector_of<std::int64_t> {
  typedef std::int64_t type __attribute__((vector_size(lane_vector_bytes)));
};
template <> struct lane_vector_of<std::uint32_t> {
  typedef std::uint32_t type __attribute__((vector_size(lane_vector_bytes)));
};
template <> struct lane_vector_of<std::uint64_t> {
  typedef std::uint64_t type __attribute__((vector_size(lane_vector_bytes)));
};
template <class E> struct lane_group {
  using vec = typename lane_vector_of<E>::type;
  using mask = decltype(vec{} != vec{});
  static constexpr int parts = static_cast<int>(lanes * sizeof(E) / lane_vector_bytes);
  static_assert(parts >= 1 && parts * lane_vector_bytes == lanes * sizeof(E));
  vec v[parts];
};
#define TEXPR_REDUCE_PARTS(G, p) \
  TEXPR_REDUCE_UNROLL            \
  for (int p = 0; p < std::remove_cvref_t<decltype(G)>::parts; ++p)

// The lane type of a number accumulator: integers add and multiply in their unsigned type (wrap_add and wrap_mul
// without UB), compare in their own.
template <lane_fold F, class A> struct lane_element_of {
  using type = A;
};
template <lane_fold F, class A>
  requires(std::is_integral_v<A> && !std::is_same_v<A, bool> && (F == lane_fold::add || F == lane_fold::mul))
struct lane_element_of<F, A> {
  using type = std::make_unsigned_t<A>;
};
template <lane_fold F> struct lane_element_of<F, bool> {  // any and all: max and min over 0 and 1
  using type = std::uint32_t;
};

template <class E> inline void to_lanes(lane_group<E>& x, const E* t) { std::memcpy(&x.v, t, sizeof x.v); }
template <class E> inline void from_lanes(E* t, const lane_group<E>& x) { std::memcpy(t, &x.v, sizeof x.v); }
template <class E> inline void fill_lanes(lane_group<E>& x, E value) {
  E t[lanes];
  for (index_t k = 0; k < lanes; ++k) t[k] = value;
  to_lanes(x, t);
}

// x = field(lifted element) for the elements j .. j + 16 (reduced-range indices from base + j).
template <class A, class E, class Op, class Get, class Field>
inline void load_lanes(lane_group<E>& x, const Op& op, const Get& get, index_t base, index_t j, const Field& field) {
  E t[lanes];
  TEXPR_REDUCE_UNROLL
  for (index_t k = 0; k < lanes; ++k) t[k] = static_cast<E>(field(lifted<A>(op, get, base, j + k)));
  to_lanes(x, t);
}
// A block of numbers (sum, prod, max, min): `steps` steps of 16, then `tail` elements into lanes 0 .. tail.
template <lane_fold F, class A, class Op, class Get>
inline A number_block(const Op& op, const Get& get, index_t base, index_t begin, index_t steps, index_t tail) {
  using E = typename lane_element_of<F, A>::type;
  const auto self = [](A v) { return v; };
  const E id = static_cast<E>(op.template identity<A>());
  lane_group<E> acc, x;
  fill_lanes(acc, id);
  typename lane_group<E>::mask nan{};
  const auto fold = [&](bool exact) {
    for (index_t s = 0; s < steps; ++s) {
      load_lanes<A>(x, op, get, base, begin + s * lanes, self);
      TEXPR_REDUCE_PARTS(acc, p) {
        auto& a = acc.v[p];
        const auto& b = x.v[p];
        if constexpr (F == lane_fold::add) a = a + b;
        else if constexpr (F == lane_fold::mul) a = a * b;
        else {
          typename lane_group<E>::vec m;
          if constexpr (F == lane_fold::max) m = b > a ? b : a;
          else m = b < a ? b : a;
          if constexpr (std::is_floating_point_v<E>) {
            if (exact) {  // Op::combine: a NaN in a, else in b, wins
              m = b != b ? b : m;
              m = a != a ? a : m;
            } else {
              nan |= b != b;
            }
          }
          a = m;
        }
      }
    }
  };
  // max and min: the NaN tests make a step a chain of four dependent operations (12 cycles where one max is 2):
  // select without them and note NaN, then reduce a block that holds one again, exactly (on numbers the two agree).
  constexpr bool two_pass = (F == lane_fold::max || F == lane_fold::min) && std::is_floating_point_v<E>;
  fold(!two_pass);
  if constexpr (two_pass) {
    bool any = false;
    for (std::size_t k = 0; k < sizeof nan / sizeof nan[0]; ++k) any |= nan[k] != 0;
    if (any) {
      fill_lanes(acc, id);
      fold(true);
    }
  }
  A lane[lanes];
  if constexpr (std::is_same_v<E, A>) {
    from_lanes(lane, acc);
  } else {
    E t[lanes];
    from_lanes(t, acc);
    for (index_t k = 0; k < lanes; ++k) lane[k] = static_cast<A>(t[k]);
  }
  const index_t last = begin + steps * lanes;
  for (index_t k = 0; k < tail; ++k) lane[k] = op.combine(lane[k], lifted<A>(op, get, base, last + k));
  for (index_t w = lanes / 2; w > 0; w /= 2)  // (loops of w, which compilers vectorise: not unrolled)
    for (index_t k = 0; k < w; ++k) lane[k] = op.combine(lane[k], lane[k + w]);
  return lane[0];
}

// var and stddev: after s full steps every lane holds s elements, so moment_reduction::combine of a lane with the
// next element {x, 0, 1} is the same Welford step in every lane (its 1 / (s + 1) shared). The lane tree is
// combine as well, lane by lane without branches (so that it vectorises; a division per combine).
template <class A, class Op, class Get>
inline A moment_block(const Op& op, const Get& get, index_t base, index_t begin, index_t steps, index_t tail) {
  using C = decltype(A::mean);
  const auto value = [](const A& v) { return v.mean; };
  lane_group<C> mean, m2, x;
  fill_lanes(mean, static_cast<C>(0));
  fill_lanes(m2, static_cast<C>(0));
  for (index_t s = 0; s < steps; ++s) {
    load_lanes<A>(x, op, get, base, begin + s * lanes, value);
    // combine(a = {mean, m2, s}, b = {x, 0, 1}), as moment_reduction::combine computes it
    const C fb = static_cast<C>(1) / static_cast<C>(s + 1), an = static_cast<C>(s);
    TEXPR_REDUCE_PARTS(mean, p) {
      if (s == 0) {  // combine(identity, b) is b
        mean.v[p] = x.v[p];
      } else {
        const auto delta = x.v[p] - mean.v[p];
        mean.v[p] = mean.v[p] + delta * fb;
        m2.v[p] = m2.v[p] + delta * delta * an * fb;  // (+ b.m2, which is +0: m2 is never -0)
      }
    }
  }
  C mv[lanes], m2v[lanes], nv[lanes];
  from_lanes(mv, mean);
  from_lanes(m2v, m2);
  for (index_t k = 0; k < lanes; ++k) nv[k] = static_cast<C>(steps);
  const index_t last = begin + steps * lanes;
  for (index_t k = 0; k < tail; ++k) {
    const A a = op.combine(A{mv[k], m2v[k], steps}, lifted<A>(op, get, base, last + k));
    mv[k] = a.mean;
    m2v[k] = a.m2;
    nv[k] = static_cast<C>(a.n);
  }
  // The tree: combine(a, b) = b.n == 0 ? a : a.n == 0 ? b : Chan's merge, computed as combine computes it, on
  // vectors of 8 lanes (those at or above w are not read again).
  typedef C half __attribute__((vector_size(lanes / 2 * sizeof(C))));
  for (index_t w = lanes / 2; w > 0; w /= 2) {
    half ma, mb, sa, sb, na, nb;
    std::memcpy(&ma, mv, sizeof ma);
    std::memcpy(&mb, mv + w, sizeof mb);
    std::memcpy(&sa, m2v, sizeof sa);
    std::memcpy(&sb, m2v + w, sizeof sb);
    std::memcpy(&na, nv, sizeof na);
    std::memcpy(&nb, nv + w, sizeof nb);
    const half n = na + nb, delta = mb - ma, zero = {};
    half new_mean, new_m2;
    if (tail == 0 && steps > 0) {  // every lane holds `steps` elements, 2^level times: fb = nb / n is 1/2
      const C fb = static_cast<C>(0.5);
      new_mean = ma + delta * fb;
      new_m2 = sa + sb + delta * delta * na * fb;
    } else {
      const half fb = nb / n;
      const half r_mean = ma + delta * fb, r_m2 = sa + sb + delta * delta * na * fb;
      new_mean = nb == zero ? ma : na == zero ? mb : r_mean;
      new_m2 = nb == zero ? sa : na == zero ? sb : r_m2;
    }
    std::memcpy(mv, &new_mean, sizeof new_mean);
    std::memcpy(m2v, &new_m2, sizeof new_m2);
    std::memcpy(nv, &n, sizeof n);
  }
  return A{mv[0], m2v[0], static_cast<index_t>(nv[0])};
}

// logsumexp: combine of a lane {max, sum} with the next element {x, 1}, without branches: the one exp, of
// -|x - max|, is exp(max - x) when x is the new maximum and exp(x - max) otherwise. The lane tree likewise.
template <class A, class Op, class Get>
inline A logsumexp_block(const Op& op, const Get& get, index_t base, index_t begin, index_t steps, index_t tail) {
  using C = decltype(A::max);
  using V = typename lane_group<C>::vec;
  const auto value = [](const A& v) { return v.max; };
  const A id = op.template identity<A>();
  lane_group<C> m, sum, x, e;
  fill_lanes(m, id.max);
  fill_lanes(sum, id.sum);
  constexpr C nan_c = std::numeric_limits<C>::quiet_NaN();
  const auto exp_neg_abs = [](C* d) {
    TEXPR_REDUCE_UNROLL
    for (index_t k = 0; k < lanes; ++k) d[k] = detail::exp_(-detail::fabs_(d[k]));
  };
  for (index_t s = 0; s < steps; ++s) {
    load_lanes<A>(x, op, get, base, begin + s * lanes, value);
    C d[lanes];
    TEXPR_REDUCE_PARTS(e, p) e.v[p] = x.v[p] - m.v[p];
    from_lanes(d, e);
    exp_neg_abs(d);
    to_lanes(e, d);
    TEXPR_REDUCE_PARTS(m, p) {
      const V zero = {}, one = zero + static_cast<C>(1), nan = zero + nan_c;
      const V mp = m.v[p], sp = sum.v[p], xp = x.v[p], ep = e.v[p];
      const auto up = xp > mp;  // x is the new maximum: {x, 1 + sum * exp(max - x)}, or {x, 1} after the identity
      const V sum_up = sp == zero ? one : one + sp * ep;
      const V sum_down = xp == mp ? sp + one : sp + ep;  // equal maxima (infinite ones too): no exp
      const auto bad = (xp != xp) | (mp != mp);          // NaN: {NaN, 1}
      sum.v[p] = bad ? one : up ? sum_up : sum_down;
      m.v[p] = bad ? nan : up ? xp : mp;
    }
  }
  C mv[lanes], sv[lanes];
  from_lanes(mv, m);
  from_lanes(sv, sum);
  const index_t last = begin + steps * lanes;
  for (index_t k = 0; k < tail; ++k) {
    const A a = op.combine(A{mv[k], sv[k]}, lifted<A>(op, get, base, last + k));
    mv[k] = a.max;
    sv[k] = a.sum;
  }
  // The tree: combine(a, b) with hi the larger maximum and lo the other (a on ties): lo empty gives hi, equal
  // maxima add the sums, else hi.sum + lo.sum * exp(lo.max - hi.max); NaN gives {NaN, 1}. Each level computes 8
  // lanes (simple loops of 8, which compilers vectorise): those at or above w are not read again.
  for (index_t w = lanes / 2; w > 0; w /= 2) {
    C e[lanes / 2];
    for (index_t k = 0; k < lanes / 2; ++k) e[k] = -detail::fabs_(mv[k + w] - mv[k]);  // lo.max - hi.max
    for (index_t k = 0; k < lanes / 2; ++k) e[k] = detail::exp_(e[k]);
    for (index_t k = 0; k < lanes / 2; ++k) {
      const C ma = mv[k], sa = sv[k], mb = mv[k + w], sb = sv[k + w];
      const bool b_up = mb > ma, bad = ma != ma || mb != mb;
      const C hi_m = b_up ? mb : ma, hi_s = b_up ? sb : sa, lo_m = b_up ? ma : mb, lo_s = b_up ? sa : sb;
      const C r_s = lo_s == 0 ? hi_s : lo_m == hi_m ? hi_s + lo_s : hi_s + lo_s * e[k];
      mv[k] = bad ? nan_c : hi_m;
      sv[k] = bad ? static_cast<C>(1) : r_s;
    }
  }
  return A{mv[0], sv[0]};
}

// argmax and argmin: a lane {value, index} takes the next element {x, i} (i above every index it holds) when x
// is better, or NaN while the lane is not: arg_reduction::combine's choice. The first step takes every element
// (each beats or ties the identity, whose index is the largest, or is NaN). The lanes keep the step at which
// they took their value, a number of the value's type, so that one mask selects both.
template <bool Max, class A, class Op, class Get>
inline A arg_block(const Op& op, const Get& get, index_t base, index_t begin, index_t steps, index_t tail) {
  using C = decltype(A::value);
  using V = typename lane_group<C>::vec;
  const auto value = [](const A& v) { return v.value; };
  const A id = op.template identity<A>();
  lane_group<C> val, pos, x;
  fill_lanes(val, id.value);
  fill_lanes(pos, static_cast<C>(-1));
  typename lane_group<C>::mask nan{};
  const auto fold = [&](bool exact) {
    if (steps == 0) return;
    load_lanes<A>(val, op, get, base, begin, value);
    fill_lanes(pos, static_cast<C>(0));
    if constexpr (std::is_floating_point_v<C>) TEXPR_REDUCE_PARTS(val, p) nan |= val.v[p] != val.v[p];
    for (index_t s = 1; s < steps; ++s) {
      load_lanes<A>(x, op, get, base, begin + s * lanes, value);
      lane_group<C> steps_at;
      fill_lanes(steps_at, static_cast<C>(s));
      const V step = steps_at.v[0];
      TEXPR_REDUCE_PARTS(val, p) {
        const V a = val.v[p], b = x.v[p];
        typename lane_group<C>::mask take;
        if constexpr (Max) take = b > a;
        else take = b < a;
        if constexpr (std::is_floating_point_v<C>) {
          // Without the NaN tests the value chain is one max or min: a new NaN (b) is noted, and a block that has
          // one is reduced again with them (a NaN in a takes nothing either way).
          if (exact) take = (a == a) & (take | (b != b));
          else nan |= b != b;
        }
        val.v[p] = take ? b : a;
        pos.v[p] = take ? step : pos.v[p];
      }
    }
  };
  fold(!std::is_floating_point_v<C>);
  if constexpr (std::is_floating_point_v<C>) {
    bool any = false;
    for (std::size_t k = 0; k < sizeof nan / sizeof nan[0]; ++k) any |= nan[k] != 0;
    if (any) fold(true);
  }
  // Positions in the block (exact in C: below 256), the identity's as `block`, after every real one.
  C vv[lanes], pv[lanes];
  from_lanes(vv, val);
  from_lanes(pv, pos);
  for (index_t k = 0; k < lanes; ++k)
    pv[k] = pv[k] < 0 ? static_cast<C>(block) : pv[k] * static_cast<C>(lanes) + static_cast<C>(k);
  for (index_t k = 0; k < tail; ++k) {
    const index_t at = steps * lanes + k;
    const A a = op.combine(A{vv[k], pv[k] == static_cast<C>(block) ? id.index : static_cast<index_t>(pv[k])},
                           A{lifted<A>(op, get, base, begin + at).value, at});
    vv[k] = a.value;
    pv[k] = a.index == id.index ? static_cast<C>(block) : static_cast<C>(a.index);
  }
  // The tree: arg_reduction::combine lane by lane without branches (random data mispredicts them half the time),
  // on vectors of 8 lanes (those at or above w are not read again).
  typedef C half __attribute__((vector_size(lanes / 2 * sizeof(C))));
  for (index_t w = lanes / 2; w > 0; w /= 2) {
    half va, vb, pa, pb;
    std::memcpy(&va, vv, sizeof va);
    std::memcpy(&vb, vv + w, sizeof vb);
    std::memcpy(&pa, pv, sizeof pa);
    std::memcpy(&pb, pv + w, sizeof pb);
    const auto first_b = pb < pa;
    auto better_b = vb < va, better_a = va < vb;
    if constexpr (Max) {
      better_b = vb > va;
      better_a = va > vb;
    }
    auto take = better_b | (~better_a & first_b);  // numbers: the better, on ties the first
    if constexpr (std::is_floating_point_v<C>) {
      const auto na = va != va, nb = vb != vb;  // NaN: the NaN, the first of two
      take = (na | nb) ? (nb & (~na | first_b)) : take;
    }
    const half v = take ? vb : va, p = take ? pb : pa;
    std::memcpy(vv, &v, sizeof v);
    std::memcpy(pv, &p, sizeof p);
  }
  return pv[0] == static_cast<C>(block) ? id : A{vv[0], base + begin + static_cast<index_t>(pv[0])};
}

// reduce_block with vector lanes: the same operations in the same order, so the same result.
template <class A, class Op, class Get>
A reduce_block_vec(const Op& op, const Get& get, index_t base, index_t begin, index_t len) {
  constexpr lane_fold F = lane_fold_of<Op, A>();
  const index_t steps = len / lanes, tail = len % lanes;
  if constexpr (F == lane_fold::moments) return moment_block<A>(op, get, base, begin, steps, tail);
  else if constexpr (F == lane_fold::logsumexp) return logsumexp_block<A>(op, get, base, begin, steps, tail);
  else if constexpr (F == lane_fold::argmax) return arg_block<true, A>(op, get, base, begin, steps, tail);
  else if constexpr (F == lane_fold::argmin) return arg_block<false, A>(op, get, base, begin, steps, tail);
  else return number_block<F, A>(op, get, base, begin, steps, tail);
}
#endif

// Pushes the block results of get(0 .. n) (indices base .. base + n of the reduced range) into c, in order.
// Vector lanes: one block after another, so that memory is read in order. Reading several blocks at once (one
// vector chain per block) reads as many interleaved 1 KiB streams, which the hardware prefetchers do not follow:
// 4 blocks at a time read 64 MiB at 7-10 GB/s where a sequential loop reads 25-30 GB/s. One chain of 16 adds per
// block keeps up with memory, and out-of-order execution overlaps consecutive blocks (their chains are
// independent) when the data is in cache.
template <class A, class Op, class Get> void push_blocks(cascade<A, Op>& c, const Get& get, index_t base, index_t n) {
#if TEXPR_REDUCE_VECTORS
  if constexpr (lane_fold_of<Op, A>() != lane_fold::none) {
    for (index_t b = 0; b < n; b += block)
      c.push(reduce_block_vec<A>(c.op, get, base, b, n - b < block ? n - b : block));
    return;
  }
#endif
  constexpr int G = 4;
  index_t b = 0;
  for (; b + G * block <= n; b += G * block) {
    A r[G];
    reduce_blocks<G, A>(c.op, get, base, b, r);
    for (const A& v : r) c.push(v);
  }
  for (; b < n; b += block) c.push(reduce_block<A>(c.op, get, base, b, n - b < block ? n - b : block));
}

// ---- The producer: what is compiled per operand expression ------------------------------------------------------
// The engine below reads its operand through a block_reader, one virtual call per piece of up to chunk_elements
// elements, so the lanes, cascades, axis walks and threading are compiled once per (op, accumulator, element
// type), not once per fused operand; an operand costs only the loop that evaluates a piece into a buffer in L1
// (or, for memory of the element type, a pointer into it).

/// One task's reader of a reduction operand's elements, in row-major order of the operand's shape, widened.
template <class W> struct block_reader {
  virtual ~block_reader() = default;
  /// Elements [begin, begin + n) with n <= chunk_elements (any n when the producer is direct) and, unless the
  /// operand is dense, within one row: a pointer to them, into memory or into buf (room for chunk_elements),
  /// valid until the next read into buf.
  virtual const W* read(index_t begin, index_t n, W* buf) = 0;
};

/// An operand as the engine sees it: whether it is dense, its row length, and one reader per task.
template <class W> struct block_producer {
  bool dense = false;   ///< Any range may be read (else reads stay within a row).
  bool direct = false;  ///< Dense memory of W: a read of any length returns a pointer into it.
  index_t row = 1;      ///< Extent of the operand's last axis.
  /// A reader for one task.
  virtual std::unique_ptr<block_reader<W>> open() const = 0;

 protected:
  ~block_producer() = default;
};

/// True for accessors over memory whose elements are already W (a dense read is a pointer into them).
template <class Acc, class W> concept memory_of = std::is_same_v<typename Acc::value_type, W> && requires(const Acc& a) {
  { a.src.p } -> std::convertible_to<const W*>;
};

/// The producer of accessor Acc (rank R output): dense operands by linear(i), others row by row through their
/// chunk reader (one seek per row).
template <class Acc, std::size_t R> struct accessor_producer final : block_producer<compute_t<typename Acc::value_type>> {
  using W = compute_t<typename Acc::value_type>;
  Acc acc;
  shape_t<R> shape;
  accessor_producer(const Acc& a, const shape_t<R>& s) : acc(a), shape(s) {
    this->dense = a.dense();
    this->direct = this->dense && memory_of<Acc, W>;
    if constexpr (R > 0) this->row = s[R - 1];
  }
  struct reader final : block_reader<W> {
    const accessor_producer& p;
    line_reader<Acc> lines;
    index_t current = -1;  // the row the chunk reader is bound to
    explicit reader(const accessor_producer& producer) : p(producer), lines(producer.acc) {}
    const W* read(index_t begin, index_t n, W* buf) override {
      if (p.dense) {
        if constexpr (memory_of<Acc, W>) {
          return lines.acc.src.p + begin;
        } else {
          const Acc a = lines.acc;
          fill(buf, n, [&](index_t k) { return widen(a.linear(begin + k)); });
          return buf;
        }
      }
      if constexpr (R > 0) {
        const index_t r = begin / p.row;
        if (r != current) {
          index_t idx[R] = {};
          row_index(r, p.shape, idx);
          lines.acc.seek(idx, R - 1);
          lines.reader->bind(lines.acc, p.row);
          current = r;
        }
        lines.reader->start(begin - r * p.row, n);
        const auto ch = *lines.reader;
        if constexpr (memory_of<Acc, W>)
          if (ch.p != ch.buf) return ch.p;  // a unit-stride row of memory (a buffer is refilled by the next read)
        fill(buf, n, [&](index_t k) { return widen(ch[k]); });
      }
      return buf;
    }
  };
  // buf[0, n) = get(0 .. n), in runs of 16 that never alias the operand (buf is the engine's own buffer): at -O2
  // compilers vectorise only loops of a known count without run-time alias checks.
  template <class Get> static void fill(W* buf, index_t n, const Get& get) {
    index_t k = 0;
    for (; k + lanes <= n; k += lanes) {
      W* out = buf + k;
      TEXPR_REDUCE_IVDEP
      for (index_t j = 0; j < lanes; ++j) out[j] = get(k + j);
    }
    for (; k < n; ++k) buf[k] = get(k);
  }
  std::unique_ptr<block_reader<W>> open() const override { return std::make_unique<reader>(*this); }
};

// ---- The engine: compiled per (op, accumulator, element type) ---------------------------------------------------

/// Element i of a piece read into memory.
template <class W> struct piece {
  const W* p;
  W operator()(index_t i) const { return p[i]; }
};

/// One task's reader and its buffers (`rows` pieces of chunk_elements).
template <class W> struct task_reader {
  std::unique_ptr<block_reader<W>> rd;
  std::unique_ptr<W[]> buf;
  bool direct;
  task_reader(const block_producer<W>& src, index_t rows)
      : rd(src.open()), buf(new W[static_cast<std::size_t>(rows * chunk_elements)]), direct(src.direct) {}
  const W* read(index_t begin, index_t n, index_t slot = 0) { return rd->read(begin, n, buf.get() + slot * chunk_elements); }
};

/// Reductions of a block_producer<W> by Op into accumulators A. Every element is combined as the blocks, lanes
/// and cascades above describe, so the result depends on the shape only, not on the thread count or the operand.
template <class Op, class A, class W> struct reduction_engine {
  /// Pushes the blocks of elements [begin, begin + n) (reduced-range indices from base) into c.
  static void push_range(cascade<A, Op>& c, task_reader<W>& in, index_t begin, index_t base, index_t n) {
    if (in.direct) {  // memory: the whole range in one pass, as the lanes stream it
      push_blocks<A>(c, piece<W>{in.read(begin, n)}, base, n);
      return;
    }
    for (index_t j0 = 0; j0 < n; j0 += chunk_elements) {
      const index_t m = n - j0 < chunk_elements ? n - j0 : chunk_elements;
      push_blocks<A>(c, piece<W>{in.read(begin + j0, m)}, base + j0, m);
    }
  }
  /// Elements [begin, begin + n) reduced (within one row unless the operand is dense).
  static A range(const Op& op, task_reader<W>& in, index_t begin, index_t base, index_t n) {
#if TEXPR_REDUCE_VECTORS
    // One block: its result (the cascade would return combine(result, identity), the result itself).
    if constexpr (lane_fold_of<Op, A>() != lane_fold::none)
      if (n > 0 && n <= block) return reduce_block_vec<A>(op, piece<W>{in.read(begin, n)}, base, 0, n);
#endif
    cascade<A, Op> c(op);
    push_range(c, in, begin, base, n);
    return c.result();
  }
  /// A row of `len` elements from `begin`, as a strided row was always reduced: through the cascade.
  static A row(const Op& op, task_reader<W>& in, index_t begin, index_t base, index_t len) {
    cascade<A, Op> c(op);
    push_range(c, in, begin, base, len);
    return c.result();
  }

  /// The accumulator over all `size` elements (> 0). Dense: fixed pieces of reduce_chunk elements; otherwise rows
  /// grouped into pieces that depend only on the shape. Pieces are combined pairwise in order.
  static A all(const Op& op, const block_producer<W>& src, index_t size) {
    if (src.dense) {
      const index_t pieces = (size + reduce_chunk - 1) / reduce_chunk;
      if (pieces == 1) {
        task_reader<W> in(src, 1);
        return range(op, in, 0, 0, size);
      }
      std::unique_ptr<A[]> part(new A[static_cast<std::size_t>(pieces)]);
      for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
        task_reader<W> in(src, 1);
        for (index_t p = p0; p < p1; ++p) {
          const index_t b = p * reduce_chunk, e = b + reduce_chunk < size ? b + reduce_chunk : size;
          part[p] = range(op, in, b, b, e - b);
        }
      });
      cascade<A, Op> c(op);
      for (index_t p = 0; p < pieces; ++p) c.push(part[p]);
      return c.result();
    }
    const index_t len = src.row, rows = size / len;
    const index_t rows_per_piece = len >= reduce_chunk ? 1 : reduce_chunk / len;
    const index_t pieces = (rows + rows_per_piece - 1) / rows_per_piece;
    std::unique_ptr<A[]> part(new A[static_cast<std::size_t>(pieces)]);
    for_ranges(pieces, 1, [&](index_t p0, index_t p1) {
      task_reader<W> in(src, 1);
      for (index_t p = p0; p < p1; ++p) {
        const index_t r0 = p * rows_per_piece, r1 = r0 + rows_per_piece < rows ? r0 + rows_per_piece : rows;
        cascade<A, Op> rows_c(op);
        for (index_t r = r0; r < r1; ++r) rows_c.push(row(op, in, r * len, r * len, len));
        part[p] = rows_c.result();
      }
    });
    cascade<A, Op> c(op);
    for (index_t p = 0; p < pieces; ++p) c.push(part[p]);
    return c.result();
  }

  /// out[r] = the reduction of row r (len elements) for r < rows, finalised; rows are independent, so threads
  /// split them.
  template <class T> static void rows(const Op& op, const block_producer<W>& src, index_t rows, index_t len, T* out) {
    for_ranges(rows, (elementwise_grain + len) / (len + 1), [&](index_t r0, index_t r1) {
      task_reader<W> in(src, 1);
      for (index_t r = r0; r < r1; ++r) {
        const A v = src.dense ? range(op, in, r * len, 0, len) : row(op, in, r * len, 0, len);
        out[r] = op.template finalize<T>(v, len);
      }
    });
  }

  /// out[(o, m, j)] = the reduction along l of the operand viewed as [outer][len][mid][inner], finalised.
  /// Whole rows are streamed and accumulated into a row of accumulators, in blocks of 16 rows whose per-column
  /// results go through a per-column pairwise cascade, so every output element sees the same summation depth as
  /// a reduction over everything (16 sequential, then log2). Threads split the (outer, mid, column-tile) tiles;
  /// each output element is computed the same way whatever the split or the tile width.
  template <class T>
  static void columns(const Op& op, const block_producer<W>& src, index_t outer, index_t len, index_t mid, index_t inner, T* out) {
    constexpr index_t rows_per_block = 16;
    // Tile width: a dense input is read in row pieces of up to 16 KiB of accumulators (a 4 KiB piece per row
    // is a page, and the prefetchers restart on each), narrower while that leaves a thread without a tile; a
    // strided input reads chunk_elements at most.
    index_t tile = chunk_elements;
    if (src.dense) {
      constexpr index_t wide = 16384 / sizeof(A) > chunk_elements ? 16384 / sizeof(A) : chunk_elements;
      const index_t threads = num_threads();
      tile = inner < wide ? (inner + lanes - 1) / lanes * lanes : wide;
      while (tile > chunk_elements && outer * mid * ((inner + tile - 1) / tile) < threads)
        tile = (tile / 2 + lanes - 1) / lanes * lanes;
      if (tile < chunk_elements) tile = inner < chunk_elements ? tile : chunk_elements;
    }
    const index_t col_chunks = (inner + tile - 1) / tile;
    const index_t tiles = outer * mid * col_chunks;
    const index_t tile_work = len * (inner < tile ? inner : tile);
    const index_t stride = mid * inner;  // from row l to row l + 1
    for_ranges(tiles, (elementwise_grain + tile_work) / (tile_work + 1), [&](index_t t0, index_t t1) {
      task_reader<W> in(src, 4);
      std::unique_ptr<A[]> part(new A[static_cast<std::size_t>(tile)]);
      column_cascade<A, Op> columns(op, tile, (len + rows_per_block - 1) / rows_per_block);
      for (index_t t = t0; t < t1; ++t) {
        const index_t cc = t % col_chunks, om = t / col_chunks;
        const index_t o = om / mid, m = om % mid;
        const index_t j0 = cc * tile, w = inner - j0 < tile ? inner - j0 : tile;
        columns.clear();
        for (index_t l0 = 0; l0 < len; l0 += rows_per_block) {
          for (index_t j = 0; j < w; ++j) part[j] = op.template identity<A>();
          const index_t l1 = l0 + rows_per_block < len ? l0 + rows_per_block : len;
          for (index_t c0 = 0; c0 < w; c0 += chunk_elements) {
            const index_t cw = w - c0 < chunk_elements ? w - c0 : chunk_elements;
            A* acc = part.get() + c0;
            index_t l = l0;
            const index_t b0 = ((o * len + l0) * mid + m) * inner + j0 + c0;  // row l0's piece
            // Four rows per pass over part (each element still combined row after row, in order): a quarter
            // of the loads and stores of part.
            for (; l + 4 <= l1; l += 4) {
              const index_t b = b0 + (l - l0) * stride;
              const W* x0 = in.read(b, cw, 0);
              const W* x1 = in.read(b + stride, cw, 1);
              const W* x2 = in.read(b + 2 * stride, cw, 2);
              const W* x3 = in.read(b + 3 * stride, cw, 3);
              for (index_t j = 0; j < cw; ++j) {
                A v = op.combine(acc[j], op.template lift<A>(x0[j], l));
                v = op.combine(v, op.template lift<A>(x1[j], l + 1));
                v = op.combine(v, op.template lift<A>(x2[j], l + 2));
                acc[j] = op.combine(v, op.template lift<A>(x3[j], l + 3));
              }
            }
            for (; l < l1; ++l) {
              const W* x = in.read(b0 + (l - l0) * stride, cw, 0);
              for (index_t j = 0; j < cw; ++j) acc[j] = op.combine(acc[j], op.template lift<A>(x[j], l));
            }
          }
          columns.push(part.get(), w);
        }
        columns.result(part.get(), w);
        T* o_row = out + (o * mid + m) * inner + j0;
        for (index_t j = 0; j < w; ++j) o_row[j] = op.template finalize<T>(part[j], len);
      }
    });
  }
};

/// The host's two reduction kernels, as eval/reduction_plan.hpp's driver calls them.
struct reduction_kernels {
  template <class A, class Op, class Acc, std::size_t R, class T>
  void all(const Op& op, const Acc& acc, const reduction_plan<R>& p, T* out) const {
    using W = compute_t<typename Acc::value_type>;
    if constexpr (R == 0) {
      out[0] = op.template finalize<T>(op.template lift<A>(widen(acc.linear(0)), 0), 1);
    } else if (p.size == 0) {
      out[0] = op.template finalize<T>(op.template identity<A>(), 0);
    } else {
      const accessor_producer<Acc, R> src(acc, p.shape);
      out[0] = op.template finalize<T>(reduction_engine<Op, A, W>::all(op, src, p.size), p.size);
    }
  }
  template <class A, class Op, class Acc, std::size_t R, class T>
  void axis(const Op& op, const Acc& acc, const reduction_plan<R>& p, T* out) const {
    using W = compute_t<typename Acc::value_type>;
    if (p.n_out == 0) return;
    const accessor_producer<Acc, R> src(acc, p.shape);
    if (p.along_rows()) reduction_engine<Op, A, W>::rows(op, src, p.n_out, p.len, out);
    else reduction_engine<Op, A, W>::columns(op, src, p.outer, p.len, p.mid, p.inner, out);
  }
};

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R>
void pairwise_reduce::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  detail::run_reduction(n, dest, ctx, detail::host_impl::reduction_kernels{});
}

} // namespace texpr::host_kernels

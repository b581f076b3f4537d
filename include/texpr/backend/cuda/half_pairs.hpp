// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise results computed N at a time by the cuda kernels, 16-bit floats two at a time: half and bfloat16 add,
// subtract and multiply as one half2 / bfloat162 instruction per pair, negate and abs on the sign bits, any other
// arithmetic op in float with its results rounded to 16 bits in pairs. Each is bitwise detail::apply_op (compute in
// float, round once per node) for every result that is not NaN; a NaN stays NaN, its payload may differ.
//   One add, subtract or multiply of two 16-bit values: float's 24-bit significand is at least 2p + 2 bits of half
//   (p = 11) and bfloat16 (p = 8), so rounding the exact result to float and then to 16 bits equals rounding it to
//   16 bits once (Figueroa, "When is double rounding innocuous?", SIGNUM 1995); below float's normal range a sum of
//   two 16-bit values is exact in float, and a bfloat16 product that float rounds is under half the least bfloat16
//   subnormal either way, so it rounds to a zero of its sign both ways. The pair instructions round once to nearest
//   even (the _rn forms, which ptxas never contracts into an fma) and keep subnormals; bfloat16 has them from sm_80
//   (sm_80's are one fma with 1 or -0, exact as well), so an sm_75 build computes bfloat16 in float.
// This header compiles everywhere (the registry names it); the pair code exists only in device code.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr::detail::cuda_impl {

/// How results of an elementwise op are computed two at a time.
enum class pair_rule {
  per_element,       ///< One at a time: not a 16-bit result, or no arithmetic (where, comparisons).
  rounded_in_pairs,  ///< Computed in float, rounded to 16 bits two at a time.
  packed_add,        ///< One half2 / bfloat162 add.rn per pair.
  packed_subtract,   ///< One half2 / bfloat162 sub.rn per pair.
  packed_multiply,   ///< One half2 / bfloat162 mul.rn per pair.
  sign_flip,         ///< negate: the sign bits flipped (exact).
  sign_clear,        ///< abs: the sign bits cleared (exact).
};

/// The rule for Op with result R and operands V... on compute capability Arch (times 10: 800 for sm_80).
template <class Op, class R, int Arch, class... V>
constexpr pair_rule pair_rule_for() {
  if constexpr (!is_float16_v<R> || selecting_op<Op> || predicate_op<Op>)
    return pair_rule::per_element;
  else if constexpr (!(std::is_same_v<V, R> && ...))
    return pair_rule::rounded_in_pairs;
  else if constexpr (std::is_same_v<Op, op::negate>)
    return pair_rule::sign_flip;
  else if constexpr (std::is_same_v<Op, op::abs>)
    return pair_rule::sign_clear;
  else if constexpr (std::is_same_v<R, bfloat16> && Arch < 800)
    return pair_rule::rounded_in_pairs;
  else if constexpr (std::is_same_v<Op, op::add>)
    return pair_rule::packed_add;
  else if constexpr (std::is_same_v<Op, op::subtract>)
    return pair_rule::packed_subtract;
  else if constexpr (std::is_same_v<Op, op::multiply>)
    return pair_rule::packed_multiply;
  else
    return pair_rule::rounded_in_pairs;
}

#if defined(TEXPR_DEVICE_CODE)
/// CUDA's pair type of 16-bit float R.
template <class R>
using cuda_pair_t = std::conditional_t<std::is_same_v<R, half>, __half2, __nv_bfloat162>;

/// x[0] and x[1] as one word, x[0] in the low half (the layout of __half2).
template <class R>
__device__ inline std::uint32_t pair_word(const R* x) {
  return static_cast<std::uint32_t>(x[0].bits) | (static_cast<std::uint32_t>(x[1].bits) << 16);
}
template <class P>
__device__ inline P word_as(std::uint32_t w) {
  P p;
  memcpy(&p, &w, sizeof p);
  return p;
}
template <class P>
__device__ inline std::uint32_t as_word(P p) {
  std::uint32_t w;
  memcpy(&w, &p, sizeof w);
  return w;
}

/// Results k and k + 1 of Op on the operands' elements from x..., as one word.
template <class Op, class R, pair_rule Rule, class... V>
__device__ inline std::uint32_t pair_result(const V*... x) {
  using P = cuda_pair_t<R>;
  if constexpr (Rule == pair_rule::sign_flip) {
    return pair_word(x...) ^ 0x80008000u;
  } else if constexpr (Rule == pair_rule::sign_clear) {
    return pair_word(x...) & 0x7FFF7FFFu;
  } else if constexpr (Rule == pair_rule::packed_add) {
    return as_word(__hadd2_rn(word_as<P>(pair_word(x))...));
  } else if constexpr (Rule == pair_rule::packed_subtract) {
    return as_word(__hsub2_rn(word_as<P>(pair_word(x))...));
  } else if constexpr (Rule == pair_rule::packed_multiply) {
    return as_word(__hmul2_rn(word_as<P>(pair_word(x))...));
  } else {
    // detail::narrow's rounding (to float, then to nearest even 16-bit), two at a time: cvt.rn.f16x2.f32 and
    // cvt.rn.bf16x2.f32 from sm_80.
    const float lo = static_cast<float>(compute_op<Op, R>(x[0]...));
    const float hi = static_cast<float>(compute_op<Op, R>(x[1]...));
    if constexpr (std::is_same_v<R, half>)
      return as_word(__floats2half2_rn(lo, hi));
    else
      return as_word(__floats2bfloat162_rn(lo, hi));
  }
}
#endif

/// out[k] = apply_op<Op, R>(in[k]...) for k < N; in device code 16-bit results two at a time (pair_rule_for).
template <class Op, class R, int N, class... V>
TEXPR_HOST_DEVICE inline void apply_pairs(R (&out)[N], const V (&... in)[N]) {
#if defined(TEXPR_DEVICE_CODE)
  constexpr pair_rule rule = pair_rule_for<Op, R, __CUDA_ARCH__, V...>();
  if constexpr (rule != pair_rule::per_element && N % 2 == 0) {
#pragma unroll
    for (int k = 0; k < N; k += 2) {
      const std::uint32_t w = pair_result<Op, R, rule>((in + k)...);
      out[k].bits = static_cast<std::uint16_t>(w);
      out[k + 1].bits = static_cast<std::uint16_t>(w >> 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = apply_op<Op, R>(in[k]...);
  }
#else
  for (int k = 0; k < N; ++k) out[k] = apply_op<Op, R>(in[k]...);
#endif
}

}  // namespace texpr::detail::cuda_impl

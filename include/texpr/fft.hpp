// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Discrete Fourier transforms, opt-in (texpr/texpr.hpp does not include it): tx::fft::fft, ifft, rfft, irfft, fft2,
// ifft2, fftn, fftfreq, rfftfreq, fftshift and ifftshift, as numpy.fft (lengths cut or padded with n, any axis,
// the norm modes). The host rows run texpr's own FFT engine (backend/host/fft_engine.hpp; nothing to link:
// texpr::fft is an INTERFACE target); cuda has no rows yet, so evaluating one on cuda is the usual compile error
// naming op, dtype, cuda. No gradients yet: texpr has no complex gradients.
#pragma once

#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/backend/host/fft.hpp"
#include "texpr/expr/fft.hpp"
#include "texpr/texpr.hpp"

namespace texpr {
namespace detail {

/// axis (negative counts from the end) as 0 .. R - 1; out of range throws the shape_error naming op and shape.
template <std::size_t R>
std::size_t fft_axis(index_t axis, const shape_t<R>& s, std::string_view op, const texpr::source_location& loc) {
  const index_t r = static_cast<index_t>(R);
  if (axis < -r || axis >= r)
    throw shape_error(at(loc) + "texpr: fft::" + std::string(op) + " axis " + std::to_string(axis) +
                      " is out of range for shape " + to_string(s));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

/// The transform length: n, or `fallback` (the axis' extent; irfft's 2 (m - 1)) where n is -1; below 1 throws the
/// shape_error naming op and shape (NumPy: "Invalid number of FFT data points").
template <std::size_t R>
index_t fft_length(index_t n, index_t fallback, const shape_t<R>& s, std::size_t axis, std::string_view op,
                   const texpr::source_location& loc) {
  const index_t length = n == -1 ? fallback : n;
  if (length < 1)
    throw shape_error(at(loc) + "texpr: fft::" + std::string(op) + " needs a transform length n >= 1; got " +
                      std::to_string(length) + (n == -1 ? " from axis " + std::to_string(axis) : std::string()) +
                      " of shape " + to_string(s));
  return length;
}

/// What a transform of length n multiplies by: the direction that `mode` names scaled by 1 / n, ortho by 1 / sqrt(n).
inline double fft_scale(fft::norm mode, index_t n, bool forward) {
  const double len = static_cast<double>(n);
  if (mode == fft::norm::ortho) return 1 / std::sqrt(len);
  const bool scaled = forward ? mode == fft::norm::forward : mode == fft::norm::backward;
  return scaled ? 1 / len : 1.0;
}

/// x captured as a complex expression: complex stays, float becomes complex64 and double complex128 (NumPy's
/// float32 semantics, as PyTorch's); other dtypes do not compile.
template <class A>
auto fft_complex_operand(A&& x) {
  using T = typename captured_t<A>::value_type;
  static_assert(is_complex_v<T> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                "texpr: tx::fft takes float, double, complex64 or complex128; cast other dtypes first");
  if constexpr (is_complex_v<T>)
    return capture(std::forward<A>(x));
  else
    return capture(cast<std::complex<T>>(std::forward<A>(x)));
}

/// The node of a complex transform Op (fft or ifft) of x.
template <class Op, class A>
auto fft_complex_node(A&& x, index_t n, index_t axis, fft::norm mode, const texpr::source_location& loc) {
  static_assert(captured_t<A>::rank >= 1, "texpr: tx::fft transforms need rank 1 or more");
  auto c = fft_complex_operand(std::forward<A>(x));
  const std::size_t a = fft_axis(axis, c.shape(), Op::name, loc);
  const index_t length = fft_length(n, c.shape()[a], c.shape(), a, Op::name, loc);
  const double scale = fft_scale(mode, length, std::is_same_v<Op, op::fft>);
  return fft_expr<Op, decltype(c)>(std::move(c), a, length, scale);
}

/// c rolled along `axis` by m / 2 (fftshift: numpy.roll(x, m // 2)) or back by -(m / 2) (ifftshift), m its extent.
template <class C>
auto fft_roll_half(const C& c, std::size_t axis, bool inverse) {
  const index_t m = c.shape()[axis];
  const index_t cut = inverse ? m / 2 : m - m / 2;  // the first `cut` elements move to the end
  const auto a = static_cast<index_t>(axis);
  return concat(a, slice(c, a, cut, m), slice(c, a, 0, cut));
}
/// c rolled as fft_roll_half along every axis from D on.
template <std::size_t D, class C>
auto fft_roll_all(const C& c, bool inverse) {
  if constexpr (D == C::rank)
    return c;
  else
    return fft_roll_all<D + 1>(capture(fft_roll_half(c, D, inverse)), inverse);
}

}  // namespace detail

namespace fft {

/// Lazy forward discrete Fourier transform along `axis` (numpy.fft.fft): X_k = sum_j x_j exp(-2 pi i jk / n),
/// scaled as `mode` says. Each line is cut or padded with zeros to n (-1: the axis' extent); float input gives
/// complex64 and double complex128 (NumPy gives complex128 for both; texpr keeps float32, as PyTorch).
template <operand A>
auto fft(A&& x, index_t n = -1, index_t axis = -1, norm mode = norm::backward,
         texpr::source_location loc = texpr::source_location::current()) {
  return detail::fft_complex_node<op::fft>(std::forward<A>(x), n, axis, mode, loc);
}

/// Lazy inverse discrete Fourier transform along `axis` (numpy.fft.ifft): x_j = (1 / n) sum_k X_k exp(+2 pi i jk /
/// n) under the default mode; n, axis and dtypes as fft.
template <operand A>
auto ifft(A&& x, index_t n = -1, index_t axis = -1, norm mode = norm::backward,
          texpr::source_location loc = texpr::source_location::current()) {
  return detail::fft_complex_node<op::ifft>(std::forward<A>(x), n, axis, mode, loc);
}

/// Lazy transform of real x along `axis` to its n / 2 + 1 non-negative frequencies (numpy.fft.rfft): float gives
/// complex64, double complex128; each line cut or padded with zeros to n (-1: the axis' extent).
template <operand A>
auto rfft(A&& x, index_t n = -1, index_t axis = -1, norm mode = norm::backward,
          texpr::source_location loc = texpr::source_location::current()) {
  using C = detail::captured_t<A>;
  using T = typename C::value_type;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "texpr: tx::fft::rfft takes float or double (for complex input use tx::fft::fft)");
  static_assert(C::rank >= 1, "texpr: tx::fft transforms need rank 1 or more");
  auto c = detail::capture(std::forward<A>(x));
  const std::size_t a = detail::fft_axis(axis, c.shape(), "rfft", loc);
  const index_t length = detail::fft_length(n, c.shape()[a], c.shape(), a, "rfft", loc);
  return fft_expr<op::rfft, C>(std::move(c), a, length, detail::fft_scale(mode, length, true));
}

/// Lazy inverse of rfft along `axis` (numpy.fft.irfft): the n / 2 + 1 first values of each line (cut or padded with
/// zeros) taken as the non-negative frequencies of a Hermitian spectrum, to a real line of length n (-1: 2 (m - 1)
/// for an axis of m). complex64 gives float, complex128 double (real input is taken as complex).
template <operand A>
auto irfft(A&& x, index_t n = -1, index_t axis = -1, norm mode = norm::backward,
           texpr::source_location loc = texpr::source_location::current()) {
  static_assert(detail::captured_t<A>::rank >= 1, "texpr: tx::fft transforms need rank 1 or more");
  auto c = detail::fft_complex_operand(std::forward<A>(x));
  const std::size_t a = detail::fft_axis(axis, c.shape(), "irfft", loc);
  const index_t length = detail::fft_length(n, 2 * (c.shape()[a] - 1), c.shape(), a, "irfft", loc);
  return fft_expr<op::irfft, decltype(c)>(std::move(c), a, length, detail::fft_scale(mode, length, false));
}

/// Lazy two-dimensional transform over the last two axes (numpy.fft.fft2 with the default axes): fft along each.
template <operand A>
auto fft2(A&& x, norm mode = norm::backward, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(detail::captured_t<A>::rank >= 2, "texpr: tx::fft::fft2 needs rank 2 or more");
  return fft(fft(std::forward<A>(x), -1, -1, mode, loc), -1, -2, mode, loc);
}
/// Lazy inverse of fft2 over the last two axes (numpy.fft.ifft2).
template <operand A>
auto ifft2(A&& x, norm mode = norm::backward, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(detail::captured_t<A>::rank >= 2, "texpr: tx::fft::ifft2 needs rank 2 or more");
  return ifft(ifft(std::forward<A>(x), -1, -1, mode, loc), -1, -2, mode, loc);
}

}  // namespace fft

namespace detail {
/// fft along axes D, D - 1, ..., 0 of x (tx::fft::fftn).
template <std::size_t D, class A>
auto fftn_from(A&& x, fft::norm mode, const texpr::source_location& loc) {
  auto y = fft::fft(std::forward<A>(x), -1, static_cast<index_t>(D), mode, loc);
  if constexpr (D == 0)
    return y;
  else
    return fftn_from<D - 1>(std::move(y), mode, loc);
}
}  // namespace detail

namespace fft {

/// Lazy transform over every axis (numpy.fft.fftn with the default axes): fft along each, last axis first.
template <operand A>
auto fftn(A&& x, norm mode = norm::backward, texpr::source_location loc = texpr::source_location::current()) {
  constexpr std::size_t R = texpr::detail::captured_t<A>::rank;
  static_assert(R >= 1, "texpr: tx::fft::fftn needs rank 1 or more");
  return texpr::detail::fftn_from<R - 1>(std::forward<A>(x), mode, loc);
}

/// The sample frequencies of a transform of length n with sample spacing d (numpy.fft.fftfreq): [0, 1, ...,
/// (n - 1) / 2, -(n / 2), ..., -1] / (d n), a lazy rank-1 expression of dtype T (double, as NumPy, by default) on B.
template <class T = double, class B = host>
auto fftfreq(index_t n, double d = 1.0, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "texpr: tx::fft::fftfreq gives float or double");
  if (n < 1) throw shape_error(texpr::detail::at(loc) + "texpr: fft::fftfreq needs n >= 1; got " + std::to_string(n));
  auto i = arange<std::int64_t, B>(n, loc);
  auto k = where(i < static_cast<std::int64_t>((n + 1) / 2), i, i - static_cast<std::int64_t>(n));
  return cast<T>(std::move(k)) * static_cast<T>(1.0 / (static_cast<double>(n) * d));
}

/// The non-negative sample frequencies rfft's n / 2 + 1 outputs stand for (numpy.fft.rfftfreq): [0, 1, ..., n / 2]
/// / (d n), a lazy rank-1 expression of dtype T (double by default) on B.
template <class T = double, class B = host>
auto rfftfreq(index_t n, double d = 1.0, texpr::source_location loc = texpr::source_location::current()) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "texpr: tx::fft::rfftfreq gives float or double");
  if (n < 1) throw shape_error(texpr::detail::at(loc) + "texpr: fft::rfftfreq needs n >= 1; got " + std::to_string(n));
  return cast<T>(arange<std::int64_t, B>(n / 2 + 1, loc)) * static_cast<T>(1.0 / (static_cast<double>(n) * d));
}

/// x with the zero frequency moved to the centre of `axis` (numpy.fft.fftshift with one axis): a lazy roll by
/// m / 2, two slices concatenated.
template <operand A>
auto fftshift(A&& x, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  auto c = texpr::detail::capture(std::forward<A>(x));
  return texpr::detail::fft_roll_half(c, texpr::detail::fft_axis(axis, c.shape(), "fftshift", loc), false);
}
/// fftshift over every axis (numpy.fft.fftshift's default).
template <operand A>
auto fftshift(A&& x) {
  return texpr::detail::fft_roll_all<0>(texpr::detail::capture(std::forward<A>(x)), false);
}
/// The inverse of fftshift along `axis` (numpy.fft.ifftshift with one axis): a roll by -(m / 2).
template <operand A>
auto ifftshift(A&& x, index_t axis, texpr::source_location loc = texpr::source_location::current()) {
  auto c = texpr::detail::capture(std::forward<A>(x));
  return texpr::detail::fft_roll_half(c, texpr::detail::fft_axis(axis, c.shape(), "ifftshift", loc), true);
}
/// ifftshift over every axis (numpy.fft.ifftshift's default).
template <operand A>
auto ifftshift(A&& x) {
  return texpr::detail::fft_roll_all<0>(texpr::detail::capture(std::forward<A>(x)), true);
}

}  // namespace fft
}  // namespace texpr

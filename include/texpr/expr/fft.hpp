// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FFT nodes (op/fft.hpp): fft_expr, one transform per line of one axis, the other axes a batch; the normalisation
// modes. Reached through texpr/fft.hpp.
#pragma once

#include <complex>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/fft.hpp"

namespace texpr {

namespace fft {
/// Which direction is scaled, as NumPy's `norm`: backward (the inverse by 1/n; the default), ortho (both by
/// 1/sqrt(n)), forward (the forward by 1/n).
enum class norm { backward, ortho, forward };
}  // namespace fft

namespace detail {
/// The dtype of Op's result on operand dtype T: rfft makes complex, irfft real, fft and ifft keep T.
template <class Op, class T>
struct fft_result {
  using type = T;
};
template <class T>
struct fft_result<op::rfft, T> {
  using type = std::complex<T>;
};
template <class T>
struct fft_result<op::irfft, T> {
  using type = typename T::value_type;
};
}  // namespace detail

/// Op along one axis of its operand C: each line of that axis (length m) is cut or padded with zeros to the
/// transform's input length (n; n / 2 + 1 for irfft), transformed, and multiplied by the normalisation's scale.
/// The result has C's shape with the axis' extent n (n / 2 + 1 for rfft).
template <class Op, class C>
class fft_expr : public expr_base<fft_expr<Op, C>> {
 public:
  using texpr_node = void;
  using op_type = Op;
  using children = detail::type_list<C>;
  using value_type = typename detail::fft_result<Op, typename C::value_type>::type;
  using kernel_dtype = typename C::value_type;  ///< The registry key: the operand's dtype.
  using backend = typename C::backend;
  static constexpr std::size_t rank = C::rank;

  /// Op of c along `axis` (0 .. rank - 1) with transform length n (>= 1) and output scale (checked by the builders).
  fft_expr(C c, std::size_t axis, index_t n, double scale) : c_{{std::move(c)}}, axis_(axis), n_(n), scale_(scale) {}
  /// The operand's shape with the axis' extent the output length.
  shape_t<rank> shape() const {
    auto s = detail::get<0>(c_).shape();
    s[axis_] = std::is_same_v<Op, op::rfft> ? n_ / 2 + 1 : n_;
    return s;
  }
  /// The operand.
  const detail::tuple<C>& operands() const { return c_; }
  /// The transformed axis (non-negative).
  std::size_t axis() const { return axis_; }
  /// The transform length n (the real length for rfft and irfft).
  index_t length() const { return n_; }
  /// What every output is multiplied by (1, 1 / n or 1 / sqrt(n)).
  double scale() const { return scale_; }
  /// The same op over another operand of the same shape.
  template <class D>
  fft_expr<Op, D> with_operands(D d) const {
    return fft_expr<Op, D>(std::move(d), axis_, n_, scale_);
  }

 private:
  detail::tuple<C> c_;
  std::size_t axis_;
  index_t n_;
  double scale_;
};

}  // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Eigen interop (optional; needs Eigen 3 on the include path): texpr views of Eigen dense matrices, maps, blocks and
// refs, column- or row-major, with their strides, and Eigen maps of texpr's rank-2 host tensors and views. No copies
// either way: both sides see the same memory, which the original owner keeps alive.
#pragma once

#include <Eigen/Core>

#include <cstddef>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

namespace detail {
/// Eigen dense expressions with direct access to their coefficients (Matrix, Map, Block of those, Ref).
template <class M> concept eigen_direct = requires(M& m) {
  typename std::remove_cvref_t<M>::Scalar;
  { m.data() };
  { m.outerStride() };
  { m.innerStride() };
  { m.rows() };
  { m.cols() };
};
} // namespace detail

/// A rank-2 host view of an Eigen dense object with direct access (Matrix, Map, Block, Ref): shape (rows, cols),
/// strides from its storage order, outer and inner strides. Const objects give views of const elements.
template <detail::eigen_direct M> auto from_eigen(M& m) {
  using D = std::remove_cvref_t<M>;
  using S = std::remove_pointer_t<decltype(m.data())>;  // const Scalar for const objects
  const index_t outer = static_cast<index_t>(m.outerStride()), inner = static_cast<index_t>(m.innerStride());
  const shape_t<2> shape{static_cast<index_t>(m.rows()), static_cast<index_t>(m.cols())};
  // Column-major: (i, j) at i * inner + j * outer; row-major: (i, j) at i * outer + j * inner.
  const shape_t<2> strides = D::IsRowMajor ? shape_t<2>{outer, inner} : shape_t<2>{inner, outer};
  return view<S, 2, host>(m.data(), shape, strides);
}

/// The Eigen map type to_eigen returns for element type S (const for read-only views).
template <class S>
using eigen_map_t = Eigen::Map<std::conditional_t<std::is_const_v<S>, const Eigen::Matrix<std::remove_const_t<S>, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                                                  Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>,
                               Eigen::Unaligned, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

/// An Eigen map of a rank-2 host view, any strides (a transposed view maps as Eigen's transpose would).
template <class S> eigen_map_t<S> to_eigen(const view<S, 2, host>& v) {
  return eigen_map_t<S>(v.data(), v.shape()[0], v.shape()[1], Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(v.strides()[0], v.strides()[1]));
}
/// An Eigen map of a rank-2 host tensor's storage (writable; the tensor must outlive the map).
template <class T> eigen_map_t<T> to_eigen(tensor<T, 2, host>& t) { return to_eigen(t.view()); }
/// A read-only Eigen map of a rank-2 host tensor's storage.
template <class T> eigen_map_t<const T> to_eigen(const tensor<T, 2, host>& t) { return to_eigen(t.view()); }

} // namespace texpr

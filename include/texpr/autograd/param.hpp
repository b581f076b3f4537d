// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::param: a tensor marked, by a tag type, as a parameter that tx::grad differentiates with respect to.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/fwd.hpp"

namespace texpr {

/// Leaf referring to a named tensor that is a parameter with compile-time identity Tag. It reads like a
/// tensor_ref (placement shows it as a leaf in the tensor's memory); its type carries Tag, so the gradient graph
/// for each parameter is built at compile time from the forward graph's type. Reading it after the tensor was
/// destroyed or moved from throws std::logic_error.
template <class Tag, class Tensor> class param_ref : public expr_base<param_ref<Tag, Tensor>> {
  detail::tensor_handle<const Tensor> t_;

 public:
  using texpr_node = void;
  using param_tag = Tag;  ///< The parameter's identity.
  using tensor_type = Tensor;  ///< The referenced tensor's type.
  using value_type = typename Tensor::value_type;
  using kernel_dtype = value_type;
  using op_type = op::leaf;
  using backend = typename Tensor::backend;
  using children = detail::type_list<>;
  static constexpr std::size_t rank = Tensor::rank;

  /// References t; t must outlive the expressions built from this parameter.
  explicit param_ref(const Tensor& t) : t_(t) {}
  /// The referenced tensor's current shape.
  shape_t<rank> shape() const { return t_.get().shape(); }
  /// The referenced tensor.
  const Tensor& get() const { return t_.get(); }
  /// The memory the leaf reads.
  template <class B> view<const value_type, rank, backend> storage(context<B>&) const { return t_.get().view(); }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }
};

/// Holds for parameter leaves made by tx::param.
template <class N>
concept parameter = node<N> && requires { typename std::remove_cvref_t<N>::param_tag; };

/// Marks a named floating-point tensor as the parameter Tag: `auto w = tx::param<struct W>(w_tensor);`.
template <class Tag, class T, std::size_t R, class B> auto param(const tensor<T, R, B>& t) {
  static_assert(is_floating_v<T>, "texpr: a parameter must have a floating dtype (gradients of integers are not defined)");
  return param_ref<Tag, tensor<T, R, B>>(t);
}
/// A temporary tensor cannot be a parameter: the gradient would refer to a destroyed tensor.
template <class Tag, class T, std::size_t R, class B> auto param(tensor<T, R, B>&& t) = delete;

/// The tag of the I-th parameter of a group made by tx::params; Group keeps two groups of one loss apart.
template <std::size_t I, class Group = void> struct param_index {};

namespace detail {
template <class Group, class... Tensors, std::size_t... I> auto make_params(std::index_sequence<I...>, const Tensors&... ts) {
  return std::tuple{param<param_index<I, Group>>(ts)...};
}
} // namespace detail

/// Marks named tensors as parameters without a tag type each: `auto [w1, b1] = tx::params(m.w1, m.b1);` tags
/// them param_index<0>, param_index<1>, ... (a std::tuple, which tx::grad and tx::value_and_grad also take whole).
/// A second group in the same loss names its own Group type: `tx::params<struct encoder>(...)`. Unlike local tag
/// structs (`tx::param<struct w>` in two blocks of one function template, which clang rejects as two definitions
/// with one mangled name), it declares nothing.
template <class Group = void, class... Tensors> auto params(Tensors&&... ts) {
  static_assert((std::is_lvalue_reference_v<Tensors> && ...),
                "texpr: tx::params takes named tensors (a temporary would be destroyed before its gradient is read)");
  return detail::make_params<Group>(std::index_sequence_for<Tensors...>{}, std::as_const(ts)...);
}

} // namespace texpr

// The sum_to node: a gradient summed back over the dimensions its operand was broadcast along.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "texpr/autograd/detail/memo.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/reduction.hpp"

namespace texpr::detail {

/// Reads through accessor A, or through L when the node had to reduce (the choice is made once, at
/// evaluation; -O3 hoists the test out of the loops).
template <class T, class A, class L> struct either_accessor {
  A a{};
  L l{};
  bool use_a = true;
  bool dense() const { return use_a ? a.dense() : l.dense(); }
  TEXPR_HOST_DEVICE T linear(index_t i) const { return use_a ? a.linear(i) : l.linear(i); }
  TEXPR_HOST_DEVICE T at(const index_t* idx) const { return use_a ? a.at(idx) : l.at(idx); }
  TEXPR_HOST_DEVICE void seek_row(const index_t* idx) {
    if (use_a) a.seek_row(idx);
    else l.seek_row(idx);
  }
  TEXPR_HOST_DEVICE T in_row(index_t j) const { return use_a ? a.in_row(j) : l.in_row(j); }
};

/// C summed to a target shape of rank R (NumPy's "unbroadcast"): child dimensions missing from the target
/// or of extent 1 there are summed; child dimensions of extent 1 broadcast up to the target. It is an
/// op::sum node (the sum kernel runs on every reduced axis); when nothing needs summing at run time it
/// reads C through C's own fused accessor. Backend is given because C may be made of scalars only.
template <class C, std::size_t R, class Backend> class sum_to_expr : public expr_base<sum_to_expr<C, R, Backend>> {
  static constexpr std::size_t rc = C::rank;

 public:
  using texpr_node = void;
  using op_type = op::sum;
  using value_type = typename C::value_type;
  using kernel_dtype = value_type;
  using backend = Backend;
  using children = type_list<C>;
  static constexpr std::size_t rank = R;
  /// Fuses like its child: over an elementwise child it is read through accessors; over a matmul (say) it
  /// evaluates the child straight into the destination when nothing needs summing.
  static constexpr bool is_elementwise = C::is_elementwise;

  /// Validates that c's shape broadcasts from, or sums to, target; throws shape_error naming both.
  sum_to_expr(C c, const shape_t<R>& target) : c_(std::move(c)), shape_(target) {
    const auto cs = c_.shape();
    for (std::size_t d = 0; d != rc; ++d) {
      const index_t te = target_extent(d);
      if (cs[d] != te && cs[d] != 1 && te != 1)
        throw shape_error("texpr: cannot sum a gradient of shape " + texpr::to_string(cs) + " to shape " +
                          texpr::to_string(target));
    }
  }

  /// The target shape.
  const shape_t<R>& shape() const { return shape_; }
  /// The summed expression.
  const C& child() const { return c_; }

  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, context<B>& ctx) const {
    if constexpr (rc <= R) {
      using A = decltype(c_.accessor(out, ctx));
      either_accessor<value_type, A, leaf_accessor<value_type, RO>> acc;
      if (needs_sum()) {
        acc.use_a = false;
        acc.l = summed(out, ctx);
      } else {
        acc.a = c_.accessor(out, ctx);
      }
      return acc;
    } else {
      return summed(out, ctx);
    }
  }
  template <class T, class B> void evaluate_into(const view<T, R, B>& dest, context<B>& ctx) const {
    if constexpr (rc == R) {
      if (!needs_sum() && c_.shape() == dest.shape()) {
        detail::evaluate_into(dest, c_, ctx);  // qualified: the member would hide it
        return;
      }
    }
    executor<B>::assign(dest, accessor(dest.shape(), ctx), ctx);
  }
  template <class F> void for_each_child(F&& f) const { f(c_); }
  template <class F> void for_each_leaf(F&& f, bool) const { c_.for_each_leaf(f, false); }

 private:
  // Extent of the target dimension aligned (from the right) with child dimension d; 1 where it has none.
  index_t target_extent(std::size_t d) const { return d + R + 1 > rc ? shape_[d + R - rc] : 1; }
  bool sums(const shape_t<rc>& cs, std::size_t d) const { return target_extent(d) == 1 && cs[d] != 1; }
  bool needs_sum() const {
    const auto cs = c_.shape();
    for (std::size_t d = 0; d < rc; ++d)
      if (sums(cs, d)) return true;
    return false;
  }

  // Evaluates C, sums every axis that needs it (one sum kernel per axis, keeping it as extent 1), then reads
  // the result with the target's alignment. The sums read memory through leaf accessors only, so every
  // sum_to of a dtype and rank shares one reduction kernel: summing through C's fused accessor would
  // instantiate a device reduction per gradient graph (nvcc then needs minutes), for a path that runs only
  // when a parameter really was broadcast (biases), where one extra pass over the gradient is cheap.
  template <std::size_t RO, class B> leaf_accessor<value_type, RO> summed(const shape_t<RO>& out, context<B>& ctx) const {
    using T = value_type;
    const auto v = value_view(c_, ctx);
    const shape_t<rc> cs = v.shape();
    shape_t<rc> cur = cs;
    const T* data = v.data();
    shape_t<rc> strides = v.strides();
    if constexpr (rc > 0) {
      for (std::size_t d = 0; d < rc; ++d) {
        if (!sums(cs, d)) continue;
        shape_t<rc - 1> reduced{};
        for (std::size_t i = 0, o = 0; i < rc; ++i)
          if (i != d) reduced[o++] = cur[i];
        auto t = std::make_shared<tensor<T, rc - 1, B>>();
        t->allocate_uninitialized(reduced, ctx.stream);
        executor<B>::template reduce_axis<op::sum>(make_leaf_accessor<T>(data, cur, strides, cur), cur, d, t->view(), ctx);
        ctx.keep.push_back(t);
        data = t->data();
        cur[d] = 1;
        strides = contiguous_strides(cur);
      }
    }
    shape_t<R> s{}, st{};
    for (std::size_t i = 0; i < R; ++i) {
      if (i + rc >= R) {
        s[i] = cur[i + rc - R];
        st[i] = strides[i + rc - R];
      } else {
        s[i] = 1;
      }
    }
    return make_leaf_accessor<T>(data, s, st, out);
  }

  C c_;
  shape_t<R> shape_{};
};

} // namespace texpr::detail

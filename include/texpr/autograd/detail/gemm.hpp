// The gemm node: a matmul whose operands may be read transposed, as the matmul gradients need.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "texpr/autograd/detail/memo.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/matmul.hpp"

namespace texpr::detail {

/// Swaps the last two dimensions of a view (no copy: strides only).
template <class T, std::size_t R, class B> view<T, R, B> transposed_view(const view<T, R, B>& v) {
  auto s = v.shape();
  auto st = v.strides();
  std::swap(s[R - 2], s[R - 1]);
  std::swap(st[R - 2], st[R - 1]);
  return view<T, R, B>(v.data(), s, st);
}

/// op(A) x op(B) where op transposes the last two dimensions when TA / TB. It is an op::matmul node (the
/// registry's GEMM kernel); a transposed operand is copied row-major first (the registry has no transpose
/// op and the GEMM takes row-major operands). Memo operands are read from their shared tensor, not copied.
/// Shapes follow tx::matmul: rank 2 x rank 2, or batched with a rank-3 side.
template <class A, class B, bool TA, bool TB> class gemm_expr : public expr_base<gemm_expr<A, B, TA, TB>> {
  static_assert((A::rank == 2 || A::rank == 3) && (B::rank == 2 || B::rank == 3),
                "texpr: matmul takes operands of rank 2 (matrices) or 3 (batches of matrices)");

 public:
  using texpr_node = void;
  using op_type = op::matmul;
  using children = type_list<A, B>;
  using value_type = typename A::value_type;
  using kernel_dtype = value_type;
  using backend = typename common_backend<typename A::backend, typename B::backend>::type;
  static constexpr std::size_t rank = A::rank > B::rank ? A::rank : B::rank;
  static constexpr bool is_elementwise = false;

  /// Builds the node; mismatched inner or batch dimensions throw shape_error naming both (transposed) shapes.
  gemm_expr(A a, B b) : a_(std::move(a)), b_(std::move(b)) {
    const auto as = op_shape<TA>(a_.shape());
    const auto bs = op_shape<TB>(b_.shape());
    if (as[A::rank - 1] != bs[B::rank - 2])
      throw shape_error("texpr: matmul inner dimensions differ: LHS shape = " + texpr::to_string(as) +
                        " RHS shape = " + texpr::to_string(bs));
    if constexpr (rank == 3) {
      const index_t ba = A::rank == 3 ? as[0] : -1, bb = B::rank == 3 ? bs[0] : -1;
      if (ba >= 0 && bb >= 0 && ba != bb)
        throw shape_error("texpr: matmul batch sizes differ: LHS shape = " + texpr::to_string(as) +
                          " RHS shape = " + texpr::to_string(bs));
      shape_[0] = ba >= 0 ? ba : bb;
    }
    shape_[rank - 2] = as[A::rank - 2];
    shape_[rank - 1] = bs[B::rank - 1];
  }

  /// (m, n) or (batch, m, n).
  const shape_t<rank>& shape() const { return shape_; }

  template <class T, class Bk> void evaluate_into(const view<T, rank, Bk>& dest, context<Bk>& ctx) const {
    auto av = operand(a_, std::bool_constant<TA>{}, ctx);
    auto bv = operand(b_, std::bool_constant<TB>{}, ctx);
    const index_t m = av.shape()[A::rank - 2], k = av.shape()[A::rank - 1], n = bv.shape()[B::rank - 1];
    const index_t batch = rank == 3 ? shape_[0] : 1;
    const index_t a_step = A::rank == 3 ? m * k : 0;
    const index_t b_step = B::rank == 3 ? k * n : 0;
    executor<Bk>::gemm(batch, m, n, k, av.data(), a_step, bv.data(), b_step, dest.data(), m * n, ctx);
  }
  template <std::size_t RO, class Bk> auto accessor(const shape_t<RO>& out, context<Bk>& ctx) const {
    auto v = materialize(*this, ctx);
    return make_leaf_accessor(v.data(), v.shape(), v.strides(), out);
  }
  template <class F> void for_each_child(F&& f) const {
    f(a_);
    f(b_);
  }
  template <class F> void for_each_leaf(F&& f, bool) const {
    a_.for_each_leaf(f, false);
    b_.for_each_leaf(f, false);
  }

 private:
  template <bool T, std::size_t R> static shape_t<R> op_shape(shape_t<R> s) {
    if constexpr (T) std::swap(s[R - 2], s[R - 1]);
    return s;
  }
  template <class N, bool T, class Bk> static auto operand(const N& x, std::bool_constant<T>, context<Bk>& ctx) {
    auto v = value_view(x, ctx);
    if constexpr (T) return make_contiguous(transposed_view(v), ctx);
    else return make_contiguous(v, ctx);
  }

  A a_;
  B b_;
  shape_t<rank> shape_{};
};

} // namespace texpr::detail

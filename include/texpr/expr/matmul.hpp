// Lazy matrix product: (m, k) x (k, n), batched when either side has a leading batch dimension.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/matmul.hpp"

namespace texpr {

namespace detail {
template <class B> struct executor;
template <class N, class B> auto materialize(const N& n, context<B>& ctx);
template <class N, class B> auto materialize_contiguous(const N& n, context<B>& ctx);
} // namespace detail

/// Matrix product node. Rank 2 x rank 2 gives (m, n); a rank-3 side gives (batch, m, n), a rank-2 side
/// being shared by every batch.
template <class A, class B> class matmul_expr : public expr_base<matmul_expr<A, B>> {
  static_assert((A::rank == 2 || A::rank == 3) && (B::rank == 2 || B::rank == 3),
                "texpr: matmul takes operands of rank 2 (matrices) or 3 (batches of matrices)");

 public:
  using texpr_node = void;
  using op_type = op::matmul;
  using children = detail::type_list<A, B>;
  using kernel_dtype = typename A::value_type;
  using value_type = typename A::value_type;
  using backend = typename detail::common_backend<typename A::backend, typename B::backend>::type;
  static constexpr std::size_t rank = A::rank > B::rank ? A::rank : B::rank;
  static constexpr bool is_elementwise = false;

  /// Builds the node; inner-dimension or batch mismatch throws shape_error naming both shapes.
  matmul_expr(A a, B b) : a_(std::move(a)), b_(std::move(b)) { shape_ = result_shape(); }

  /// (m, n) or (batch, m, n).
  const shape_t<rank>& shape() const { return shape_; }

  template <class T, class Bk> void evaluate_into(const view<T, rank, Bk>& dest, detail::context<Bk>& ctx) const {
    const auto as = a_.shape();
    const auto bs = b_.shape();
    const index_t m = as[A::rank - 2], k = as[A::rank - 1], n = bs[B::rank - 1];
    const index_t batch = rank == 3 ? shape_[0] : 1;
    auto av = detail::materialize_contiguous(a_, ctx);
    auto bv = detail::materialize_contiguous(b_, ctx);
    const index_t a_step = A::rank == 3 ? m * k : 0;
    const index_t b_step = B::rank == 3 ? k * n : 0;
    detail::executor<Bk>::gemm(batch, m, n, k, av.data(), a_step, bv.data(), b_step, dest.data(), m * n, ctx);
  }
  template <std::size_t RO, class Bk> auto accessor(const shape_t<RO>& out, detail::context<Bk>& ctx) const {
    auto v = detail::materialize(*this, ctx);
    return detail::make_leaf_accessor(v.data(), v.shape(), v.strides(), out);
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
  shape_t<rank> result_shape() const {
    const auto as = a_.shape();
    const auto bs = b_.shape();
    const index_t ka = as[A::rank - 1], kb = bs[B::rank - 2];
    if (ka != kb)
      throw shape_error("texpr: matmul inner dimensions differ: LHS shape = " + texpr::to_string(as) +
                        " RHS shape = " + texpr::to_string(bs));
    shape_t<rank> out{};
    if constexpr (rank == 3) {
      const index_t ba = A::rank == 3 ? as[0] : -1, bb = B::rank == 3 ? bs[0] : -1;
      if (ba >= 0 && bb >= 0 && ba != bb)
        throw shape_error("texpr: matmul batch sizes differ: LHS shape = " + texpr::to_string(as) +
                          " RHS shape = " + texpr::to_string(bs));
      out[0] = ba >= 0 ? ba : bb;
    }
    out[rank - 2] = as[A::rank - 2];
    out[rank - 1] = bs[B::rank - 1];
    return out;
  }

  A a_;
  B b_;
  shape_t<rank> shape_{};
};

/// Lazy matrix product of two operands of one dtype and backend.
template <operand A, operand B> auto matmul(A&& a, B&& b) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  detail::check_same_dtype<typename CA::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CA::backend, typename CB::backend>();
  return matmul_expr<CA, CB>(detail::capture(std::forward<A>(a)), detail::capture(std::forward<B>(b)));
}

} // namespace texpr

// The memo node: a sub-result that several gradient graphs share, evaluated once per evaluation context.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <typeindex>
#include <typeinfo>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail {

/// What one memoised sub-result remembers: the tensor it was last evaluated into. The tensor itself is
/// owned by the evaluation context (ctx.keep), so the cache dies with the context and is never stale.
struct memo_state {
  std::weak_ptr<void> cache;
};

/// Placement-transparent wrapper: to runs_on and tx::placement it is the node C (same op, dtype, children).
/// Evaluating it computes C once per evaluation context; every copy of the node (every gradient graph
/// built by one tx::grad call) then reads the same tensor. Evaluate the graphs of one step together
/// (tx::eval_all) to share it; separate evaluations each recompute it, so results never go stale.
/// Not thread-safe: do not evaluate graphs that share a memo from several threads at once.
template <class C> class memo_expr : public expr_base<memo_expr<C>> {
 public:
  using texpr_node = void;
  using op_type = typename C::op_type;
  using kernel_dtype = typename C::kernel_dtype;
  using value_type = typename C::value_type;
  using backend = typename C::backend;
  using children = typename C::children;
  static constexpr std::size_t rank = C::rank;
  static constexpr bool is_elementwise = false;
  static constexpr bool is_memo = true;

  /// Wraps c; copies of this node share `state`.
  memo_expr(C c, std::shared_ptr<memo_state> state) : c_(std::move(c)), state_(std::move(state)) {}
  /// The wrapped node's shape.
  decltype(auto) shape() const { return c_.shape(); }
  /// The wrapped node.
  const C& wrapped() const { return c_; }

  /// The value, evaluated into a tensor kept by ctx the first time this context asks for it.
  template <class B> view<const value_type, rank, B> get(context<B>& ctx) const {
    using tensor_t = tensor<value_type, rank, B>;
    if (auto cached = state_->cache.lock())
      for (const auto& k : ctx.keep)
        if (k.get() == cached.get()) return std::as_const(*static_cast<tensor_t*>(cached.get())).view();
    auto t = std::make_shared<tensor_t>();
    t->allocate_uninitialized(c_.shape(), ctx.stream);
    detail::evaluate_into(t->view(), c_, ctx);  // qualified: the member evaluate_into would hide it
    ctx.keep.push_back(t);
    state_->cache = t;
    return std::as_const(*t).view();
  }

  template <class T, class B> void evaluate_into(const view<T, rank, B>& dest, context<B>& ctx) const {
    auto v = get(ctx);
    executor<B>::assign(dest, make_leaf_accessor<value_type>(v.data(), v.shape(), v.strides(), dest.shape()), ctx);
  }
  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, context<B>& ctx) const {
    auto v = get(ctx);
    return make_leaf_accessor<value_type>(v.data(), v.shape(), v.strides(), out);
  }
  template <class F> void for_each_child(F&& f) const { c_.for_each_child(f); }
  template <class F> void for_each_leaf(F&& f, bool) const { c_.for_each_leaf(f, false); }

 private:
  C c_;
  std::shared_ptr<memo_state> state_;
};

template <class N> concept memo_node = requires { requires std::remove_cvref_t<N>::is_memo; };

/// A node's value as a read-only view on B: memo nodes give their shared tensor, leaves their memory, and
/// anything else is evaluated into a temporary kept by ctx.
template <class N, class B> auto value_view(const N& n, context<B>& ctx) {
  if constexpr (memo_node<N>) return n.get(ctx);
  else return materialize(n, ctx);
}

/// Like value_view, but row-major contiguous (strided views are copied), as GEMM needs.
template <class T, std::size_t R, class B> view<const T, R, B> make_contiguous(view<const T, R, B> v, context<B>& ctx) {
  if (v.is_contiguous()) return v;
  auto t = std::make_shared<tensor<T, R, B>>();
  t->allocate_uninitialized(v.shape(), ctx.stream);
  evaluate_into(t->view(), v, ctx);
  ctx.keep.push_back(t);
  return std::as_const(*t).view();
}

/// Memo states of one tx::grad call, keyed by the forward node they stand for (its address in the loss
/// graph and its type, since a node and its first child can share an address) and by what is stored.
class memo_table {
 public:
  /// What a memo caches for a forward node: its value, the gradient flowing into it, or into an operand.
  enum class kind { value, gradient, operand_gradient_0, operand_gradient_1 };

  template <class N> std::shared_ptr<memo_state> state(const N& forward_node, kind k) {
    auto& s = states_[key{static_cast<const void*>(&forward_node), std::type_index(typeid(N)), k}];
    if (!s) s = std::make_shared<memo_state>();
    return s;
  }
  /// Wraps c in a memo node shared by everything memoised for (forward_node, k).
  template <class N, class C> memo_expr<C> wrap(const N& forward_node, kind k, C c) {
    return memo_expr<C>(std::move(c), state(forward_node, k));
  }

 private:
  struct key {
    const void* address;
    std::type_index type;
    kind what;
    bool operator<(const key& o) const {
      if (address != o.address) return std::less<const void*>{}(address, o.address);
      if (type != o.type) return type < o.type;
      return what < o.what;
    }
  };
  std::map<key, std::shared_ptr<memo_state>> states_;
};

} // namespace texpr::detail

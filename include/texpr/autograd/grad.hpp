// Reverse-mode gradients: tx::grad, tx::value_and_grad and tx::eval_all. Gradient graphs are ordinary
// texpr graphs whose types are computed from the forward graph's type, so runs_on and placement apply.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/autograd/detail/broadcast_axis.hpp"
#include "texpr/autograd/detail/gemm.hpp"
#include "texpr/autograd/detail/memo.hpp"
#include "texpr/autograd/detail/sum_to.hpp"
#include "texpr/autograd/diagnostics.hpp"
#include "texpr/autograd/param.hpp"
#include "texpr/autograd/rules.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/matmul.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/placement/runs_on.hpp"

namespace texpr {

namespace detail {

template <class N> struct is_map : std::false_type {};
template <class Op, class... C> struct is_map<map_expr<Op, C...>> : std::true_type {};
template <class N> struct is_reduce_all : std::false_type {};
template <class Op, class C> struct is_reduce_all<reduce_expr<Op, C>> : std::true_type {};
template <class N> struct is_reduce_axis : std::false_type {};
template <class Op, class C> struct is_reduce_axis<reduce_axis_expr<Op, C>> : std::true_type {};
template <class N> struct is_matmul : std::false_type {};
template <class A, class B> struct is_matmul<matmul_expr<A, B>> : std::true_type {};

template <class N> inline constexpr bool is_no_gradient_v = std::is_same_v<std::remove_cvref_t<N>, no_gradient>;

/// Returned once a diagnostic has fired, so that the walk ends quietly (one error, not a cascade).
struct gradient_failed {};
template <class N> inline constexpr bool is_failed_v = std::is_same_v<std::remove_cvref_t<N>, gradient_failed>;
template <class N> inline constexpr bool is_plain_leaf_v =
    std::is_same_v<typename N::op_type, op::leaf> || std::is_same_v<typename N::op_type, op::scalar>;

// Whether the parameter Tag occurs in N's graph (a compile-time walk of the children lists).
template <class N, class Tag, class Children = typename N::children> struct contains_param;
template <class N, class Tag, class... C> struct contains_param<N, Tag, type_list<C...>> {
  static constexpr bool self = [] {
    if constexpr (parameter<N>) return std::is_same_v<typename N::param_tag, Tag>;
    else return false;
  }();
  static constexpr bool value = self || (contains_param<C, Tag>::value || ...);
};
template <class N, class Tag> inline constexpr bool contains_param_v = contains_param<N, Tag>::value;

// matmul_expr keeps its operands private; for_each_child hands them out in order (by reference into the
// loss graph, so their addresses identify them).
template <class A, class B> std::pair<const A*, const B*> matmul_operands(const matmul_expr<A, B>& n) {
  const A* a = nullptr;
  const B* b = nullptr;
  int i = 0;
  n.for_each_child([&](const auto& c) {
    using C = std::remove_cvref_t<decltype(c)>;
    if constexpr (std::is_same_v<C, A>)
      if (i == 0) a = &c;
    if constexpr (std::is_same_v<C, B>)
      if (i == 1) b = &c;
    ++i;
  });
  return {a, b};
}

// A copy of forward node n for use inside gradient graphs: every non-elementwise node (matmul, reductions)
// and every materialised matmul operand becomes a memo, keyed by the forward node it copies, so all the
// gradient graphs of one tx::grad call evaluate it once. Elementwise nodes are copied (they fuse).
template <class N> auto memoize(const N& n, memo_table& t);

template <class N> auto memo_operand(const N& n, memo_table& t) {
  auto m = memoize(n, t);
  using M = decltype(m);
  if constexpr (is_plain_leaf_v<M> || memo_node<M>) return m;
  else return t.wrap(n, memo_table::kind::value, std::move(m));
}

template <class N> auto memoize(const N& n, memo_table& t) {
  if constexpr (is_map<N>::value) {
    return std::apply(
        [&](const auto&... c) {
          return map_expr<typename N::op_type, decltype(memoize(c, t))...>(memoize(c, t)...);
        },
        n.operands());
  } else if constexpr (is_matmul<N>::value) {
    const auto [a, b] = matmul_operands(n);
    using MA = decltype(memo_operand(*a, t));
    using MB = decltype(memo_operand(*b, t));
    return t.wrap(n, memo_table::kind::value, gemm_expr<MA, MB, false, false>(memo_operand(*a, t), memo_operand(*b, t)));
  } else if constexpr (is_reduce_all<N>::value) {
    using M = decltype(memoize(n.child(), t));
    return t.wrap(n, memo_table::kind::value, reduce_expr<typename N::op_type, M>(memoize(n.child(), t)));
  } else if constexpr (is_reduce_axis<N>::value) {
    using M = decltype(memoize(n.child(), t));
    return t.wrap(n, memo_table::kind::value,
                  reduce_axis_expr<typename N::op_type, M>(memoize(n.child(), t), static_cast<index_t>(n.axis())));
  } else {
    return n;  // leaves, scalars, parameters
  }
}

/// What one backward walk (one parameter) needs: the shared memo table and the parameter's tensor.
struct grad_builder {
  memo_table& memo;
  const void* tensor;
};

template <class Tag, class N, class G> auto backprop(const N& n, const G& g, grad_builder& b);

// Sends the contribution `local` into child c. Elementwise children take it as it is (it may still be
// broadcast beyond c's shape: the final sum_to at the parameter sums it once); other nodes need their exact
// shape, so it is summed to c's shape first.
template <class Tag, class C, class G> auto flow(const C& c, G local, grad_builder& b) {
  if constexpr (is_failed_v<G>) {
    return gradient_failed{};
  } else if constexpr (is_no_gradient_v<G> || !contains_param_v<C, Tag>) {
    return no_gradient{};
  } else if constexpr (C::is_elementwise) {
    return backprop<Tag>(c, local, b);
  } else {
    using B = typename common_backend<typename C::backend, typename G::backend>::type;
    return backprop<Tag>(c, sum_to_expr<G, C::rank, B>(std::move(local), c.shape()), b);
  }
}

inline no_gradient add_all() { return {}; }
template <class X, class... Rest> auto add_all(X x, Rest... rest) {
  auto r = add_all(std::move(rest)...);
  if constexpr (is_failed_v<X> || is_failed_v<decltype(r)>) return gradient_failed{};
  else if constexpr (is_no_gradient_v<X>) return r;
  else if constexpr (is_no_gradient_v<decltype(r)>) return x;
  else return std::move(x) + std::move(r);
}

template <class Tag, std::size_t I, class Op, class... C, class G>
auto backprop_operand(const map_expr<Op, C...>& n, const G& g, grad_builder& b) {
  using child_t = std::tuple_element_t<I, std::tuple<C...>>;
  if constexpr (!contains_param_v<child_t, Tag>) {
    return no_gradient{};
  } else {
    auto local = std::apply(
        // The result goes in as a memo: rules that use it (exp, tanh, sigmoid, sqrt, elu) read it from memory,
        // shared with the forward pass, instead of evaluating the transcendental function again.
        [&](const auto&... x) { return gradient_rule<Op>::template partial<I>(g, memo_operand(n, b.memo), memoize(x, b.memo)...); },
        n.operands());
    return flow<Tag>(std::get<I>(n.operands()), std::move(local), b);
  }
}

template <class Tag, class Op, class... C, class G, std::size_t... I>
auto backprop_map(const map_expr<Op, C...>& n, const G& g, grad_builder& b, std::index_sequence<I...>) {
  if constexpr (!has_gradient_rule<Op>) {
    (void)sizeof(diagnostic::no_gradient_rule<Op, dtype_tag_t<typename map_expr<Op, C...>::kernel_dtype>>);
    return gradient_failed{};
  } else {
    return add_all(backprop_operand<Tag, I>(n, g, b)...);
  }
}

// max/min: the subgradient shares g equally among the elements equal to the extreme value.
template <class X, class M, class G, class Count> auto share_among_extremes(const X& x, const M& m, const G& g, const Count& count) {
  return where(x == m, g / count, 0);
}

template <class Tag, class Op, class C, class G> auto backprop_reduce_all(const reduce_expr<Op, C>& n, const G& g, grad_builder& b) {
  using T = typename C::value_type;
  const auto& x = n.child();
  if constexpr (std::is_same_v<Op, op::sum>) {
    return flow<Tag>(x, g, b);
  } else if constexpr (std::is_same_v<Op, op::mean>) {
    return flow<Tag>(x, scale(g, 1.0 / static_cast<double>(shape_size(x.shape()))), b);
  } else if constexpr (std::is_same_v<Op, op::max> || std::is_same_v<Op, op::min>) {
    auto xm = memoize(x, b.memo);
    auto m = memoize(n, b.memo);
    auto count = sum(cast<T>(xm == m));
    return flow<Tag>(x, share_among_extremes(xm, m, g, count), b);
  } else {
    (void)sizeof(diagnostic::no_gradient_rule<Op, dtype_tag_t<T>>);
    return gradient_failed{};
  }
}

template <class Tag, class Op, class C, class G>
auto backprop_reduce_axis(const reduce_axis_expr<Op, C>& n, const G& g, grad_builder& b) {
  using T = typename C::value_type;
  using N = reduce_axis_expr<Op, C>;
  const auto& x = n.child();
  const std::size_t axis = n.axis();
  const index_t len = x.shape()[axis];
  // Spreads a value of the result's shape back along the reduced axis (plain broadcasting at rank 0).
  auto spread = [&](auto e) {
    if constexpr (N::rank == 0) return e;
    else return broadcast_axis_expr<decltype(e)>(std::move(e), axis, len);
  };
  if constexpr (std::is_same_v<Op, op::sum>) {
    return flow<Tag>(x, spread(g), b);
  } else if constexpr (std::is_same_v<Op, op::mean>) {
    return flow<Tag>(x, scale(spread(g), 1.0 / static_cast<double>(len)), b);
  } else if constexpr (std::is_same_v<Op, op::max> || std::is_same_v<Op, op::min>) {
    auto xm = memoize(x, b.memo);
    auto count = spread(sum(cast<T>(xm == spread(memoize(n, b.memo))), static_cast<index_t>(axis)));
    return flow<Tag>(x, share_among_extremes(xm, spread(memoize(n, b.memo)), spread(g), count), b);
  } else {
    (void)sizeof(diagnostic::no_gradient_rule<Op, dtype_tag_t<T>>);
    return gradient_failed{};
  }
}

// The gradient flowing into operand X of a matmul: a memo (every parameter below X reads it), except when
// X is a leaf, whose gradient has one reader and is best evaluated straight into the result.
template <class X, class N, class E> auto shared_unless_leaf(const N& n, memo_table::kind k, E e, grad_builder& b) {
  if constexpr (is_plain_leaf_v<X>) return e;
  else return b.memo.wrap(n, k, std::move(e));
}

// C = A B: dA = dC B^T, dB = A^T dC (summed over the batch for a rank-2 operand of a batched product).
// dC and both products are memos, shared by every parameter's walk.
template <class Tag, class A, class B, class G> auto backprop_matmul(const matmul_expr<A, B>& n, const G& g, grad_builder& b) {
  using N = matmul_expr<A, B>;
  const auto operands = matmul_operands(n);  // not a structured binding: clang 14 cannot capture those
  const A* pa = operands.first;
  const B* pb = operands.second;
  auto gm = b.memo.wrap(n, memo_table::kind::gradient, g);
  auto to_a = [&] {
    if constexpr (!contains_param_v<A, Tag>) {
      return no_gradient{};
    } else {
      using MB = decltype(memo_operand(*pb, b.memo));
      auto ga = shared_unless_leaf<A>(n, memo_table::kind::operand_gradient_0,
                                      gemm_expr<decltype(gm), MB, false, true>(gm, memo_operand(*pb, b.memo)), b);
      if constexpr (A::rank < N::rank) return flow<Tag>(*pa, sum(std::move(ga), 0), b);
      else return flow<Tag>(*pa, std::move(ga), b);
    }
  };
  auto to_b = [&] {
    if constexpr (!contains_param_v<B, Tag>) {
      return no_gradient{};
    } else {
      using MA = decltype(memo_operand(*pa, b.memo));
      auto gb = shared_unless_leaf<B>(n, memo_table::kind::operand_gradient_1,
                                      gemm_expr<MA, decltype(gm), true, false>(memo_operand(*pa, b.memo), gm), b);
      if constexpr (B::rank < N::rank) return flow<Tag>(*pb, sum(std::move(gb), 0), b);
      else return flow<Tag>(*pb, std::move(gb), b);
    }
  };
  return add_all(to_a(), to_b());
}

template <class Tag, class N, class G> auto backprop(const N& n, const G& g, grad_builder& b) {
  if constexpr (!contains_param_v<N, Tag>) {
    return no_gradient{};
  } else if constexpr (parameter<N>) {
    if (static_cast<const void*>(&n.get()) != b.tensor)
      throw std::invalid_argument("texpr: two different tensors are marked as the same parameter (one tag); give "
                                  "each parameter its own tag type");
    return g;
  } else if constexpr (is_map<N>::value) {
    return backprop_map<Tag>(n, g, b, std::make_index_sequence<N::children::size>{});
  } else if constexpr (is_reduce_all<N>::value) {
    return backprop_reduce_all<Tag>(n, g, b);
  } else if constexpr (is_reduce_axis<N>::value) {
    return backprop_reduce_axis<Tag>(n, g, b);
  } else if constexpr (is_matmul<N>::value) {
    return backprop_matmul<Tag>(n, g, b);
  } else {
    (void)sizeof(diagnostic::no_gradient_rule<typename N::op_type, dtype_tag_t<typename N::kernel_dtype>>);
    return gradient_failed{};
  }
}

// The gradient graph of loss with respect to parameter p: the contributions of every occurrence, summed to
// p's shape.
template <class Loss, class P> auto gradient_graph(const Loss& loss, const P& p, memo_table& memo) {
  using Tag = typename P::param_tag;
  using T = typename Loss::value_type;
  // After a diagnostic, a zero graph of the right type keeps the user's code from piling up more errors.
  auto placeholder = [&] { return sum_to_expr<scalar_expr<T>, P::rank, typename P::backend>(make_scalar<T>(0), p.shape()); };
  if constexpr (!contains_param_v<Loss, Tag>) {
    (void)sizeof(diagnostic::loss_does_not_depend_on<Tag>);
    return placeholder();
  } else {
    grad_builder b{memo, &p.get()};
    auto contribution = backprop<Tag>(loss, make_scalar<T>(1), b);
    using G = decltype(contribution);
    if constexpr (is_failed_v<G>) {
      return placeholder();
    } else if constexpr (is_no_gradient_v<G>) {
      (void)sizeof(diagnostic::loss_not_differentiable_in<Tag>);
      return placeholder();
    } else {
      return sum_to_expr<G, P::rank, typename P::backend>(std::move(contribution), p.shape());
    }
  }
}

template <class Loss> constexpr void check_loss() {
  static_assert(node<Loss>, "texpr: tx::grad differentiates an expression built from tx::param leaves");
  if constexpr (node<Loss>) {
    static_assert(Loss::rank == 0, "texpr: tx::grad needs a scalar (rank-0) loss, e.g. tx::mean(...) or tx::sum(...)");
    static_assert(is_floating_v<typename Loss::value_type>, "texpr: tx::grad needs a floating-point loss");
  }
}

// Evaluates node n into a new tensor inside the shared context ctx.
template <class E, class B> auto eval_in(const E& e, context<B>& ctx) {
  auto n = capture(e);
  using N = decltype(n);
  tensor<typename N::value_type, N::rank, B> out;
  out.allocate_uninitialized(n.shape(), ctx.stream);
  evaluate_into(out.view(), n, ctx);
  return out;
}

template <class Tuple, class Backend> struct all_run_on_impl : std::false_type {};
template <class... E, class Backend> struct all_run_on_impl<std::tuple<E...>, Backend>
    : std::bool_constant<(runs_on<E, Backend> && ...)> {};

} // namespace detail

/// Gradients of a scalar loss with respect to parameters made by tx::param: a std::tuple of lazy gradient
/// expressions, one per parameter, each with the parameter's shape and dtype. They are ordinary texpr
/// graphs (check them with tx::runs_on, print them with tx::placement). Forward sub-results they share
/// (matmuls, reductions, incoming gradients) are memos: evaluate the graphs together with tx::eval_all to
/// compute each once. Graphs capture shapes when built, like every texpr node; rebuild them if shapes change.
template <operand Loss, parameter... P> auto grad(const Loss& loss, const P&... params) {
  detail::check_loss<Loss>();
  detail::memo_table memo;
  return std::tuple{detail::gradient_graph(loss, params, memo)...};
}

/// Like tx::grad, with the loss itself first: (loss, d loss / d p...). The loss graph shares its memos
/// with the gradient graphs, so tx::eval_all evaluates the forward pass once.
template <operand Loss, parameter... P> auto value_and_grad(const Loss& loss, const P&... params) {
  detail::check_loss<Loss>();
  detail::memo_table memo;
  auto value = detail::memoize(loss, memo);
  return std::tuple{std::move(value), detail::gradient_graph(loss, params, memo)...};
}

/// Evaluates several expressions into new tensors in one evaluation context, so memos they share (the
/// graphs of one tx::grad / tx::value_and_grad call) are computed once. Returns a std::tuple of tensors.
template <operand... E> auto eval_all(const E&... e) {
  using B = typename detail::common_backend<typename detail::captured_t<const E&>::backend...>::type;
  static_assert(backend_tag<B>, "texpr: eval_all needs expressions with tensor operands on one backend");
  detail::context<B> ctx{};
  return std::tuple{detail::eval_in(e, ctx)...};
}
/// eval_all over a tuple of expressions (what tx::grad and tx::value_and_grad return).
template <class... E> auto eval_all(const std::tuple<E...>& graphs) {
  return std::apply([](const auto&... e) { return eval_all(e...); }, graphs);
}

/// Holds when every graph of a tuple (what tx::grad returns) runs entirely on Backend.
template <class Tuple, class Backend>
concept all_run_on = detail::all_run_on_impl<std::remove_cvref_t<Tuple>, Backend>::value;

} // namespace texpr

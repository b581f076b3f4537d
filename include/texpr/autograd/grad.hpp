// Reverse-mode gradients: tx::grad, tx::value_and_grad and tx::eval_all. Gradient graphs are ordinary texpr
// graphs (runs_on and placement apply). The forward values they read are saved: each is computed once per
// evaluation context and read as a leaf, so a gradient graph's type holds saved leaves, not copies of the forward
// graph, and grows linearly with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>

#include "texpr/autograd/diagnostics.hpp"
#include "texpr/autograd/param.hpp"
#include "texpr/autograd/rules.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/saved.hpp"
#include "texpr/placement/report.hpp"
#include "texpr/placement/runs_on.hpp"

namespace texpr::detail {

/// A slot computing `node` (whose operands are already leaves or saved values) once per evaluation context.
/// Where the node cannot be evaluated (no kernel, or a cuda node outside nvcc) get() is never reached: the saved
/// leaf's offender makes every evaluation of a graph that reads it a compile error first. CudaCompiler is part
/// of the type so that the two definitions never meet in one program.
template <class Node, class B, bool CudaCompiler = cuda_compiler_v>
class computed_slot final : public slot<typename Node::value_type, Node::rank, B> {
  using T = typename Node::value_type;
  static constexpr std::size_t R = Node::rank;

 public:
  computed_slot(Node node, std::string what) : slot<T, R, B>(node.shape(), std::move(what)), node_(std::move(node)) {}

  view<const T, R, B> get(context<B>& ctx) override {
    if constexpr (graph_check<Node, B>::ok && (CudaCompiler || !std::is_same_v<B, cuda>)) {
      if (context_ == ctx.id)
        if (auto cached = cache_.lock()) return std::as_const(*static_cast<tensor<T, R, B>*>(cached.get())).view();
      auto t = std::make_shared<tensor<T, R, B>>();
      t->allocate_uninitialized(node_.shape(), ctx.stream);
      evaluate_into(t->view(), node_, ctx);
      ctx.keep.push_back(t);
      cache_ = t;
      context_ = ctx.id;
      return std::as_const(*t).view();
    } else {
      throw std::logic_error("texpr: a saved value that cannot be evaluated here was evaluated");
    }
  }
  void report(std::string& out, std::size_t depth, report_state& st) const override {
    report_node<B>(node_, depth, out, st);
  }

 private:
  Node node_;
  std::weak_ptr<void> cache_;
  std::uint64_t context_ = 0;
};

/// The saved values of one tx::grad / tx::value_and_grad call, keyed by the forward node they stand for (its
/// address in the loss graph, its type, since a node and its first operand can share an address) and by what
/// is saved (its value or the gradient flowing into it).
class tape {
 public:
  /// What is saved for a forward node.
  enum class kind { value, gradient };

  /// The saved leaf of `computation` for (forward_node, k); one slot per key, made on first request.
  template <class Forward, class Node> TEXPR_NOINLINE auto save(const Forward& forward_node, kind k, Node computation) {
    using B = typename Node::backend;
    using T = typename Node::value_type;
    using leaf = saved_ref<T, Node::rank, B, offender_summary_t<typename graph_check<Node, B>::offender>>;
    auto& s = slots_[key{static_cast<const void*>(&forward_node), std::type_index(typeid(Forward)), k}];
    if (!s) {
      std::string what = k == kind::value ? std::string(op_label<typename Forward::op_type>())
                                          : "gradient into " + op_label<typename Forward::op_type>();
      s = std::make_shared<computed_slot<Node, B>>(std::move(computation), std::move(what));
    }
    return leaf(std::static_pointer_cast<slot<T, Node::rank, B>>(s));
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
  std::map<key, std::shared_ptr<slot_base>> slots_;
};

// ---- which forward values the backward pass reads -----------------------------------------------------------

template <class N, class Tags, class Children = typename N::children> struct contains_any_param;
template <class N, class Tags, class... C> struct contains_any_param<N, Tags, type_list<C...>> {
  static constexpr bool self = [] {
    if constexpr (parameter<N>) return contains_v<Tags, typename N::param_tag>;
    else return false;
  }();
  static constexpr bool value = self || (contains_any_param<C, Tags>::value || ...);
};
/// True when node N's graph holds a parameter whose tag is in the type_list Tags.
template <class N, class Tags> inline constexpr bool contains_any_param_v = contains_any_param<N, Tags>::value;

template <class N, class Tags, class Children = typename N::children> struct backward_reads;
template <class N, class Tags, class... C> struct backward_reads<N, Tags, type_list<C...>> {
  template <std::size_t... I> static constexpr unsigned bits(std::index_sequence<I...>) {
    unsigned b = 0;
    ((b |= contains_any_param_v<C, Tags> ? rule_uses<typename N::op_type, I>() : 0u), ...);
    return b;
  }
  /// What the rules of N read for the operands that lead to a parameter (uses_out / uses_operand bits).
  static constexpr unsigned value = bits(std::index_sequence_for<C...>{});
};

/// True when the gradients read node N's result (its rule needs it for an operand that leads to a parameter).
template <class N, class Tags> inline constexpr bool reads_out_v = (backward_reads<N, Tags>::value & uses_out) != 0;
/// True when the gradients read operand J of node N.
template <class N, class Tags, std::size_t J>
inline constexpr bool reads_operand_v = (backward_reads<N, Tags>::value & uses_operand(J)) != 0;

template <class G> struct is_sum_to : std::false_type {};
template <class C, std::size_t R> struct is_sum_to<reduce_expr<op::sum_to, C, R>> : std::true_type {};
template <class G> inline constexpr bool is_sum_to_v = is_sum_to<std::remove_cvref_t<G>>::value;

/// The gradient walk's failure marker, returned once a diagnostic fired (one error, not a cascade).
struct gradient_failed {};
template <class G> inline constexpr bool is_failed_v = std::is_same_v<std::remove_cvref_t<G>, gradient_failed>;
template <class G> inline constexpr bool is_no_gradient_v = std::is_same_v<std::remove_cvref_t<G>, no_gradient>;

/// Builds the forward proxies and gradient graphs of one call, for the parameters with tags Tags.
template <class Tags> struct gradient_builder {
  tape& t;
  const void* param_tensor = nullptr;  // the walk's parameter, to reject two tensors marked with one tag

  /// The forward value of n as the gradient graphs read it: leaves as they are; a node the backward pass reads
  /// (Needed), or a computed node (reduction, matmul), or one whose own rule reads its result, saved; any other
  /// node rebuilt over its operands' proxies (fused into whatever reads it).
  template <bool Needed, class N> TEXPR_NOINLINE auto fwd(const N& n) {
    constexpr op::kind k = kind_of_v<N>;
    if constexpr (k == op::kind::memory || k == op::kind::constant || k == op::kind::generator) {
      return n;
    } else {
      auto rebuilt = rebuild(n, std::make_index_sequence<N::children::size>{});
      constexpr bool save = Needed || k == op::kind::computed || (contains_any_param_v<N, Tags> && reads_out_v<N, Tags>);
      if constexpr (save) return t.save(n, tape::kind::value, std::move(rebuilt));
      else return rebuilt;
    }
  }

  template <class N, std::size_t... J> auto rebuild(const N& n, std::index_sequence<J...>) {
    return n.with_operands(fwd<reads_operand_v<N, Tags, J>>(get<J>(n.operands()))...);
  }

  /// The contribution of node n's subtree to the gradient of parameter Tag, given the gradient g flowing into n.
  template <class Tag, class N, class G> TEXPR_NOINLINE auto back(const N& n, const G& g) {
    using Op = typename N::op_type;
    if constexpr (!contains_any_param_v<N, type_list<Tag>>) {
      return no_gradient{};
    } else if constexpr (parameter<N>) {
      if (static_cast<const void*>(&n.get()) != param_tensor)
        throw std::invalid_argument("texpr: two different tensors are marked as the same parameter (one tag); give "
                                    "each parameter its own tag type");
      return g;
    } else if constexpr (!has_gradient_rule<Op>) {
      (void)sizeof(diagnostic::no_gradient_rule<Op, dtype_tag_t<typename N::kernel_dtype>>);
      return gradient_failed{};
    } else {
      // The gradient into a computed node is saved: every parameter's walk below reads it, computed once.
      if constexpr (kind_of_v<N> == op::kind::computed && !std::is_same_v<typename G::backend, any_backend>) {
        auto gs = t.save(n, tape::kind::gradient, g);
        return back_operands<Tag>(n, gs, std::make_index_sequence<N::children::size>{});
      } else {
        return back_operands<Tag>(n, g, std::make_index_sequence<N::children::size>{});
      }
    }
  }

  template <class Tag, class N, class G, std::size_t... J> auto back_operands(const N& n, const G& g, std::index_sequence<J...> js) {
    return add_all(back_operand<Tag, J>(n, g, js)...);
  }

  template <class Tag, std::size_t I, class N, class G, std::size_t... J>
  TEXPR_NOINLINE auto back_operand(const N& n, const G& g, std::index_sequence<J...>) {
    using Op = typename N::op_type;
    using C = tuple_element_t<I, std::remove_cvref_t<decltype(n.operands())>>;
    if constexpr (!contains_any_param_v<C, type_list<Tag>>) {
      return no_gradient{};
    } else {
      auto out = [&] {
        if constexpr ((rule_uses<Op, I>() & uses_out) != 0) return fwd<true>(n);
        else return no_gradient{};  // unused by the rule
      }();
      auto local = gradient_rule<Op>::template partial<I>(n, g, out, fwd<reads_operand_v<N, Tags, J>>(get<J>(n.operands()))...);
      return flow<Tag>(get<I>(n.operands()), std::move(local));
    }
  }

  /// Sends a rule's contribution into operand c: elementwise operands and leaves take it as it is (it may still be
  /// broadcast beyond c's shape; the final sum_to sums it once); other nodes get exactly their shape.
  template <class Tag, class C, class L> auto flow(const C& c, L local) {
    if constexpr (is_failed_v<L>) return gradient_failed{};
    else if constexpr (is_no_gradient_v<L>) return no_gradient{};
    else if constexpr (kind_of_v<C> == op::kind::elementwise || kind_of_v<C> == op::kind::memory) return back<Tag>(c, local);
    else return back<Tag>(c, sum_to(std::move(local), c.shape()));
  }

  static no_gradient add_all() { return {}; }
  template <class X, class... Rest> static auto add_all(X x, Rest... rest) {
    auto r = add_all(std::move(rest)...);
    if constexpr (is_failed_v<X> || is_failed_v<decltype(r)>) return gradient_failed{};
    else if constexpr (is_no_gradient_v<X>) return r;
    else if constexpr (is_no_gradient_v<decltype(r)>) return x;
    else return std::move(x) + std::move(r);
  }

  /// The gradient graph of loss with respect to parameter p: every occurrence's contribution, summed to p's shape.
  template <class Loss, class P> auto gradient_graph(const Loss& loss, const P& p) {
    using Tag = typename P::param_tag;
    using T = typename Loss::value_type;
    // After a diagnostic, a zero graph of the right type keeps the user's code from piling up more errors.
    auto placeholder = [&] { return sum_to(constant_expr<T, P::rank, typename P::backend>(T(0), p.shape()), p.shape()); };
    if constexpr (!contains_any_param_v<Loss, type_list<Tag>>) {
      (void)sizeof(diagnostic::loss_does_not_depend_on<Tag>);
      return placeholder();
    } else {
      param_tensor = &p.get();
      auto contribution = back<Tag>(loss, make_scalar<T>(1));
      using G = decltype(contribution);
      if constexpr (is_failed_v<G>) {
        return placeholder();
      } else if constexpr (is_no_gradient_v<G>) {
        (void)sizeof(diagnostic::loss_not_differentiable_in<Tag>);
        return placeholder();
      } else if constexpr (std::is_same_v<typename G::backend, any_backend>) {
        // Constants only (the gradient of sum(p) is 1 everywhere): place them on the parameter's backend.
        return sum_to(std::move(contribution) + constant_expr<T, P::rank, typename P::backend>(T(0), p.shape()), p.shape());
      } else if constexpr (is_sum_to_v<G> && G::rank == P::rank) {
        return contribution;  // a rule already summed it to the parameter's shape
      } else {
        return sum_to(std::move(contribution), p.shape());
      }
    }
  }
};

template <class Loss> constexpr bool check_loss() {
  static_assert(node<Loss>, "texpr: tx::grad differentiates an expression built from tx::param leaves");
  if constexpr (node<Loss>) {
    static_assert(Loss::rank == 0, "texpr: tx::grad needs a scalar (rank-0) loss, e.g. tx::mean(...) or tx::sum(...)");
    static_assert(is_floating_v<typename Loss::value_type>, "texpr: tx::grad needs a floating-point loss");
    return Loss::rank == 0 && is_floating_v<typename Loss::value_type>;
  }
  return false;
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
    : std::bool_constant<(graph_check<captured_t<E>, Backend>::ok && ...)> {};

} // namespace texpr::detail

namespace texpr {

/// Gradients of a scalar loss with respect to parameters made by tx::param: a std::tuple of lazy gradient
/// expressions, one per parameter, each with the parameter's shape and dtype. They are ordinary texpr graphs
/// (check them with tx::runs_on, print them with tx::placement). The forward values they read, and gradients
/// several of them share, are saved values: evaluate the graphs together with tx::eval_all to compute each once.
/// Graphs capture shapes when built, like every texpr node; rebuild them if shapes change.
template <operand Loss, parameter... P> auto grad(const Loss& loss, const P&... params) {
  if constexpr (detail::check_loss<Loss>()) {
    detail::tape t;
    detail::gradient_builder<detail::type_list<typename P::param_tag...>> b{t};
    return std::tuple{b.gradient_graph(loss, params)...};
  }
}

/// Like tx::grad, with the loss itself first: (loss, d loss / d p...). The loss is a saved value shared with the
/// gradient graphs, so tx::eval_all evaluates the forward pass once.
template <operand Loss, parameter... P> auto value_and_grad(const Loss& loss, const P&... params) {
  if constexpr (detail::check_loss<Loss>()) {
    detail::tape t;
    detail::gradient_builder<detail::type_list<typename P::param_tag...>> b{t};
    auto value = b.template fwd<true>(loss);
    return std::tuple{std::move(value), b.gradient_graph(loss, params)...};
  }
}

/// Evaluates several expressions into new tensors in one evaluation context, so saved values they share (the
/// graphs of one tx::grad / tx::value_and_grad call) are computed once. Returns a std::tuple of tensors.
template <operand... E> auto eval_all(const E&... e) {
  using B = typename detail::common_backend<typename detail::captured_t<const E&>::backend...>::type;
  static_assert(backend_tag<B>, "texpr: eval_all needs expressions with tensor operands on one backend");
  detail::require_backend_compiler<B>();
  stream_t stream = nullptr;
  ((stream = stream ? stream : detail::preferred_stream(detail::capture(e))), ...);
  context<B> ctx{stream, {}};
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

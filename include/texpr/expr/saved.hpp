// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Saved values: leaves whose memory is computed once per evaluation context and shared by every graph holding
// the same slot. Autograd saves the forward values its gradients read and the gradients several branches share,
// so gradient graphs stay small (their types hold saved leaves, not copies of the forward graph).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "texpr/core/context.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"

namespace texpr {

namespace detail {
/// What a saved value's plan_read / plan_bind receive: the placement walk's state (placement/report.hpp's
/// plan_state derives from it). Defined here, beside those functions, so that expr/ names nothing of a higher
/// layer; the implementations (autograd/) convert it back.
struct plan_walk {
 protected:
  plan_walk() = default;
  ~plan_walk() = default;
};
} // namespace detail

/// What every saved value has, whatever its dtype: a label and a placement report of its computation.
class slot_base {
 public:
  virtual ~slot_base() = default;
  /// What the value is, for placement reports (the op that computes it, or "gradient into <op>").
  const std::string& what() const { return what_; }

 protected:
  /// A slot described as `what` in errors.
  explicit slot_base(std::string what) : what_(std::move(what)) {}

 private:
  std::string what_;
};

/// A saved value that another saved value's kernel may write while it computes its own: the sums of that value over
/// its leading axes (a bias gradient, beside the delta it sums). The writer asks claim() for the memory.
template <class T, class Backend> class column_sums_sink {
 public:
  /// Contiguous memory for the sums in ctx, which then count as computed there; nullptr when they already are.
  virtual T* claim(context<Backend>& ctx) = 0;
  /// The number of sums (the product of the kept trailing extents).
  virtual index_t columns() const = 0;
  /// The placement walk's claim, by saved #`writer`'s kernel `kernel`: the sums' computation is that kernel.
  virtual void plan_claim(detail::plan_walk& state, std::size_t writer, std::string_view kernel) const = 0;

 protected:
  ~column_sums_sink() = default;
};

/// A shared, lazily computed value of dtype T, rank R on Backend.
template <class T, std::size_t R, class Backend> class slot : public slot_base {
 public:
  /// The value, computed the first time ctx asks for it and kept by ctx; later asks in ctx reuse it.
  virtual view<const T, R, Backend> get(context<Backend>& ctx) = 0;
  /// Asks that the value, when ctx first computes it, be computed into `dest` (contiguous, the value's shape),
  /// which outlives ctx: tx::eval_all binds a graph that is a saved value to its result tensor, saving a copy.
  /// False when the value is already computed in ctx, or lives elsewhere (the caller then copies).
  virtual bool bind(context<Backend>& ctx, const view<T, R, Backend>& dest) {
    (void)ctx;
    (void)dest;
    return false;
  }
  /// The placement walk (placement/report.hpp) reading the value, saved #`number` of `state`: its computation's
  /// lines and kernels the first time `state`'s evaluation context would compute it. Returns the strides of the
  /// value's memory.
  virtual shape_t<R> plan_read(detail::plan_walk& state, std::size_t number) const = 0;
  /// The placement walk binding the value to a fresh result (bind): false where bind would refuse.
  virtual bool plan_bind(detail::plan_walk& state, std::size_t number) const = 0;
  /// The value's shape.
  const shape_t<R>& shape() const { return shape_; }
  /// Lets the kernel that computes this value also write `sums`, its sums over its leading axes, where the
  /// backend can (tx::placement shows which); otherwise the sums are computed on their own.
  void write_column_sums(std::weak_ptr<column_sums_sink<T, Backend>> sums) { column_sums_ = std::move(sums); }
  /// Whether write_column_sums was given sums (still alive).
  bool writes_column_sums() const { return !column_sums_.expired(); }

  /// Counts one reader of the value in evaluation context `context_id` (tx::eval_all counts every reader before it
  /// evaluates); the first count in a context also counts the readers the value's own computation holds.
  virtual void count_reader(std::uint64_t context_id) const {
    if (readers_context_ != context_id) {
      readers_context_ = context_id;
      readers_ = 0;
      count_inputs(context_id);
    }
    ++readers_;
  }
  /// A counted reader is done with the value in ctx: after the last, its memory goes back (a later read, which the
  /// count says cannot happen, would compute it again). Uncounted contexts keep every value to their end.
  virtual void reader_done(context<Backend>& ctx) const {
    if (readers_context_ != ctx.id || readers_ == 0) return;
    if (--readers_ == 0) release(ctx);
  }

 protected:
  /// A slot of `shape`, described as `what` in errors.
  slot(const shape_t<R>& shape, std::string what) : slot_base(std::move(what)), shape_(shape) {}
  /// Counts the readers of other saved values that computing this one holds (its computation's saved leaves).
  virtual void count_inputs(std::uint64_t context_id) const { (void)context_id; }
  /// Gives back the memory of the value computed in ctx (nothing where it is not this slot's own).
  virtual void release(context<Backend>& ctx) const { (void)ctx; }
  std::weak_ptr<column_sums_sink<T, Backend>> column_sums_;  ///< what write_column_sums gave

 private:
  shape_t<R> shape_;
  mutable std::uint64_t readers_context_ = 0;  // the context readers_ counts in
  mutable std::size_t readers_ = 0;            // readers not yet done there
};

/// The placement check of a saved value's computation, as a saved leaf carries it: offender_summary<void> when
/// every node has a kernel, else offender_summary<Diagnostic, Args...>. The diagnostic is spelled as a template and
/// its arguments, not as the type Diagnostic<Args...>, so that argument-dependent lookup on expressions holding
/// the leaf never instantiates it (which would fire its static_assert).
template <template <class...> class Diagnostic, class... Args> struct offender_summary {
  using type = Diagnostic<Args...>;  ///< The diagnostic naming the first offending node.
};
namespace detail {
template <class... A> using no_offender = void;
template <class D> struct summarize { using type = offender_summary<no_offender>; };
template <template <class...> class D, class... A> struct summarize<D<A...>> { using type = offender_summary<D, A...>; };
} // namespace detail
/// The summary of a placement check's offender type (void or a diagnostic).
template <class Offender> using offender_summary_t = typename detail::summarize<Offender>::type;

/// Leaf reading a slot. Summary (an offender_summary) is the placement check of the slot's computation on Backend,
/// so runs_on and placement errors see through saved values without the leaf's type holding the computation's.
template <class T, std::size_t R, class Backend, class Summary>
class saved_ref : public expr_base<saved_ref<T, R, Backend, Summary>> {
 public:
  using texpr_node = void;
  using op_type = op::saved;
  using value_type = T;
  using kernel_dtype = T;
  using backend = Backend;
  using children = detail::type_list<>;
  using offender = typename Summary::type;  ///< The computation's first node without a kernel on Backend (void: none).
  static constexpr std::size_t rank = R;

  /// Reads slot s.
  explicit saved_ref(std::shared_ptr<slot<T, R, Backend>> s) : s_(std::move(s)) {}
  /// The value's shape.
  const shape_t<R>& shape() const { return s_->shape(); }
  /// The memory the leaf reads (computed once per context).
  view<const T, R, Backend> storage(context<Backend>& ctx) const { return s_->get(ctx); }
  /// The slot (its identity is the value's).
  const slot<T, R, Backend>& get_slot() const { return *s_; }
  /// The slot, for binding its value to a destination (slot::bind).
  slot<T, R, Backend>& get_slot() { return *s_; }
  /// The slot's shared handle (a sum of gradients holds the saved gradients it adds).
  const std::shared_ptr<slot<T, R, Backend>>& slot_handle() const { return s_; }
  /// No operands.
  const detail::tuple<>& operands() const { return detail::no_operands(); }

 private:
  std::shared_ptr<slot<T, R, Backend>> s_;
};

/// A shared value (tx::share): a saved leaf over a slot that holds its computation. The leaf's type names the
/// value (dtype, rank, backend) and what checks need of the computation, not the computation itself, so a value
/// computed from shared values below it has a type of fixed size however deep the stack (a residual stream read
/// twice per layer would otherwise double its type's name per layer). Copies share the slot: every reader of every
/// copy reads one value, computed once per evaluation context, and the gradients of all its readers are summed
/// before they flow into it once.
/// - Summary: the placement check of the computation on Backend (an offender_summary).
/// - Params: the type_list of the parameter tags the computation holds (through shared values below it too), so
///   autograd knows at compile time which parameters a gradient reaches through it.
/// - Gradient: the gradient walk's check of the computation (offender_summary of the first node on a parameter's
///   path without a gradient rule, or of none), fired by tx::grad when it reaches the value.
/// - Slot: the slot type tx::share makes (autograd differentiates the computation through it).
template <class T, std::size_t R, class Backend, class Summary, class Params, class Gradient, class Slot>
class shared_value : public expr_base<shared_value<T, R, Backend, Summary, Params, Gradient, Slot>> {
 public:
  using texpr_node = void;
  using op_type = op::saved;
  using value_type = T;
  using kernel_dtype = T;
  using backend = Backend;
  using children = detail::type_list<>;
  using offender = typename Summary::type;  ///< The computation's first node without a kernel on its backend (void: none).
  using param_tags = Params;                ///< The parameter tags the computation holds.
  using gradient_check = Gradient;          ///< The computation's gradient check (an offender_summary).
  static constexpr std::size_t rank = R;

  /// The value slot `s` computes.
  explicit shared_value(std::shared_ptr<Slot> s) : s_(std::move(s)) {}
  /// The value's shape.
  const shape_t<rank>& shape() const { return s_->shape(); }
  /// The memory the leaf reads (computed once per context).
  view<const T, R, Backend> storage(context<Backend>& ctx) const { return s_->get(ctx); }
  /// The slot (its identity is the value's).
  const slot<T, R, Backend>& get_slot() const { return *s_; }
  /// The slot, for binding its value to a destination (slot::bind).
  slot<T, R, Backend>& get_slot() { return *s_; }
  /// The slot with its own type, for autograd (which differentiates the computation through it).
  Slot& shared_slot() const { return *s_; }
  /// No operands: readers read the value, not the computation.
  const detail::tuple<>& operands() const { return detail::no_operands(); }

 private:
  std::shared_ptr<Slot> s_;
};

namespace detail {
template <class N> struct is_saved : std::false_type {};
template <class T, std::size_t R, class B, class O> struct is_saved<saved_ref<T, R, B, O>> : std::true_type {};
template <class T, std::size_t R, class B, class O, class P, class G, class S>
struct is_saved<shared_value<T, R, B, O, P, G, S>> : std::true_type {};
template <class N> struct is_shared : std::false_type {};
template <class T, std::size_t R, class B, class O, class P, class G, class S>
struct is_shared<shared_value<T, R, B, O, P, G, S>> : std::true_type {};
} // namespace detail

/// True for saved leaves (shared values included).
template <class N> inline constexpr bool is_saved_v = detail::is_saved<std::remove_cvref_t<N>>::value;
/// True for shared values (tx::share).
template <class N> inline constexpr bool is_shared_v = detail::is_shared<std::remove_cvref_t<N>>::value;

namespace detail {
/// Calls f(leaf) for each saved leaf in node n's graph (once per occurrence, left to right), not looking inside them.
template <class N, class F> void for_each_saved(const N& n, F&& f) {
  if constexpr (is_saved_v<N>) {
    f(n);
  } else {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (for_each_saved(get<J>(n.operands()), f), ...);
    }(std::make_index_sequence<N::children::size>{});
  }
}
/// Tells saved value s that one of its readers in ctx is done (values of another backend count in their own).
template <class S, class B> void reader_done_in(const S& s, context<B>& ctx) {
  if constexpr (requires { s.reader_done(ctx); }) s.reader_done(ctx);
}
/// Counts graph n's reads of saved values as readers in ctx, before ctx evaluates it: a value whose readers are all
/// counted gives its memory back after the last of them (in a context that counted nothing, values live to its end).
template <class N, class B> void count_saved_readers(const N& n, context<B>& ctx) {
  for_each_saved(n, [&](const auto& s) { s.get_slot().count_reader(ctx.id); });
}
/// Graph n, evaluated in ctx, is done with the saved values it read.
template <class N, class B> void saved_readers_done(const N& n, context<B>& ctx) {
  for_each_saved(n, [&](const auto& s) { reader_done_in(s.get_slot(), ctx); });
}
} // namespace detail

} // namespace texpr

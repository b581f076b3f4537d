// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reverse-mode gradients: tx::grad, tx::value_and_grad and tx::eval_all. Gradient graphs are ordinary texpr
// graphs (runs_on and placement apply). The forward values they read are saved: each is computed once per
// evaluation context and read as a leaf, so a gradient graph's type holds saved leaves, not copies of the forward
// graph, and grows linearly with it.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <typeinfo>
#include <utility>
#include <vector>

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

/// Whether a saved Node that passes through (a sum_to of nothing) over memory is that memory: computed_slot's get()
/// and the placement walk both ask.
template <class Node> constexpr bool reads_operand_memory() {
  if constexpr (requires(const Node& n) { n.passes_through(); n.child(); }) {
    using C = std::remove_cvref_t<decltype(std::declval<const Node&>().child())>;
    return kind_of_v<C> == op::kind::memory && std::is_same_v<typename C::value_type, typename Node::value_type> &&
           C::rank == Node::rank;
  } else {
    return false;
  }
}

/// Whether Node is a reduction of a saved value (a sum_to of one): that value is computed first, since its kernel
/// may write this one (column_sums_sink).
template <class Node> constexpr bool reduces_saved_value() {
  if constexpr (requires(const Node& n) { n.child(); })
    return is_saved_v<std::remove_cvref_t<decltype(std::declval<const Node&>().child())>>;
  else
    return false;
}

/// The memory of a saved value in the evaluation context that last computed it: the destination tx::eval_all bound
/// to it there, or a tensor that context keeps (context::values) until the value's last reader is done. The state
/// computed_slot and sum_slot share.
template <class T, std::size_t R, class B> class context_value {
 public:
  /// Whether the value counts as computed in ctx (it may have been given back since).
  bool computed_in(const context<B>& ctx) const { return context_ == ctx.id; }
  /// Whether the value computed in ctx is still there to read.
  bool held_in(const context<B>& ctx) const { return context_ == ctx.id && (bound_ || !cache_.expired()); }
  /// Whether its memory is a bound destination, not its own.
  bool bound() const { return bound_; }
  /// The value's memory (held_in holds).
  view<const T, R, B> read() const {
    if (bound_) return *bind_dest_;
    return std::as_const(*static_cast<tensor<T, R, B>*>(cache_.lock().get())).view();
  }
  /// Asks that the value in ctx be computed into dest (slot::bind): false when it is computed there already, bound
  /// there already, or dest is not contiguous memory of `shape`.
  bool bind(const context<B>& ctx, const view<T, R, B>& dest, const shape_t<R>& shape) {
    if (context_ == ctx.id || bind_context_ == ctx.id || !dest.is_contiguous() || dest.shape() != shape) return false;
    bind_context_ = ctx.id;
    bind_dest_.emplace(dest);  // (a view's operator= writes elements; this rebinds)
    return true;
  }
  /// The memory of the value in ctx (the bound destination, or a new tensor of `shape` ctx keeps), which now counts
  /// as computed there.
  view<T, R, B> fresh(context<B>& ctx, const shape_t<R>& shape) {
    context_ = ctx.id;
    if (bind_context_ == ctx.id && bind_dest_) {
      bound_ = true;
      return *bind_dest_;
    }
    bound_ = false;
    auto t = std::make_shared<tensor<T, R, B>>();
    t->allocate_uninitialized(shape, ctx.stream);
    value_index_ = ctx.values.size();
    ctx.values.push_back(t);
    cache_ = t;
    return t->view();
  }
  /// Gives back the value's own memory in ctx (after its last reader).
  void release(context<B>& ctx) const {
    if (context_ == ctx.id && !bound_ && value_index_ < ctx.values.size()) ctx.values[value_index_].reset();
  }
  /// True the first time per context: the value's own reads of other saved values are reported done once.
  bool first_report(const context<B>& ctx) {
    if (done_context_ == ctx.id) return false;
    done_context_ = ctx.id;
    return true;
  }

 private:
  std::optional<view<T, R, B>> bind_dest_;  // where bind() asked the value of context bind_context_ to go
  std::uint64_t bind_context_ = 0;
  bool bound_ = false;
  std::weak_ptr<void> cache_;
  std::uint64_t context_ = 0;
  std::size_t value_index_ = 0;     // the value's entry in ctx.values (context_'s)
  std::uint64_t done_context_ = 0;  // the context in which the reads were reported done
};

/// A slot computing `node` (whose operands are already leaves or saved values) once per evaluation context.
/// Where the node cannot be evaluated (no kernel, or a cuda node outside nvcc) get() is never reached: the saved
/// leaf's offender makes every evaluation of a graph that reads it a compile error first. MayWriteSums: whether the
/// value's kernel may also write the column sums registered on it (a saved gradient, which a bias gradient sums);
/// a forward value's slot never compiles that kernel. CudaCompiler is part of the type so that the two definitions
/// never meet in one program.
template <class Node, class B, bool MayWriteSums = true, bool CudaCompiler = cuda_compiler_v>
class computed_slot final : public slot<typename Node::value_type, Node::rank, B>,
                            public column_sums_sink<typename Node::value_type, B> {
  using T = typename Node::value_type;
  static constexpr std::size_t R = Node::rank;
  static constexpr bool runs_here = graph_check<Node, B>::ok && (CudaCompiler || !std::is_same_v<B, cuda>);
  static constexpr bool writes_sums = MayWriteSums && offers_column_sums_v<B, Node>;

 public:
  computed_slot(Node node, std::string what) : slot<T, R, B>(node.shape(), std::move(what)), node_(std::move(node)) {}

  view<const T, R, B> get(context<B>& ctx) override {
    if constexpr (runs_here) {
      if constexpr (reads_operand_memory<Node>())
        if (passes_through(node_)) return materialize(node_.child(), ctx);  // the operand's memory is the value
      if constexpr (reduces_saved_value<Node>())
        if (!value_.computed_in(ctx)) (void)node_.child().storage(ctx);  // may claim() this value
      if (!value_.held_in(ctx)) {
        // The saved values it reads first, so that theirs are given back before this one takes its memory.
        for_each_saved(node_, [&](const auto& s) {
          if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(s)>::backend, B>) (void)s.storage(ctx);
        });
        const view<T, R, B> dest = value_.fresh(ctx, node_.shape());
        temporaries_scope<B> scope(ctx);
        compute(dest, ctx);
      }
      if (value_.first_report(ctx)) for_each_saved(node_, [&](const auto& s) { reader_done_in(s.get_slot(), ctx); });
      return value_.read();
    } else {
      throw std::logic_error("texpr: a saved value that cannot be evaluated here was evaluated");
    }
  }
  bool bind(context<B>& ctx, const view<T, R, B>& dest) override {
    if (passes_through(node_)) return false;  // its value is its operand's memory
    return value_.bind(ctx, dest, node_.shape());
  }
  T* claim(context<B>& ctx) override {
    if constexpr (runs_here) {
      if (value_.computed_in(ctx)) return nullptr;
      return value_.fresh(ctx, node_.shape()).data();
    } else {
      throw std::logic_error("texpr: a saved value that cannot be evaluated here was evaluated");
    }
  }
  index_t columns() const override { return shape_size(node_.shape()); }
  // A value that is its operand's memory (get()'s first branch) is read where its readers read it: they count as
  // the operand's.
  void count_reader(std::uint64_t context_id) const override {
    if (is_operand_memory()) for_each_saved(node_, [&](const auto& s) { s.get_slot().count_reader(context_id); });
    else slot<T, R, B>::count_reader(context_id);
  }
  void reader_done(context<B>& ctx) const override {
    if (is_operand_memory()) for_each_saved(node_, [&](const auto& s) { reader_done_in(s.get_slot(), ctx); });
    else slot<T, R, B>::reader_done(ctx);
  }
  TEXPR_REPORT_PATH shape_t<R> plan_read(plan_walk& walk, std::size_t number) const override {
    auto& st = static_cast<plan_state&>(walk);
    if constexpr (reads_operand_memory<Node>()) {
      if (passes_through(node_)) {  // get(): the operand's memory, at every read (its first read shown)
        shape_t<R> strides{};
        st.elsewhere(number, !st.first_computation(this), [&] {
          node_line<B>(node_, st, "none: reduces no axis, its operand is the result");
          strides = st.operand(0, [&] { return plan_materialize<B>(node_.child(), st); }).strides;
        });
        return strides;
      }
    }
    if constexpr (reduces_saved_value<Node>()) {  // get(): the summed value first (its kernel may write this one)
      if (std::find(st.computed.begin(), st.computed.end(), this) == st.computed.end())
        st.elsewhere(number, true, [&] { (void)detail::plan_read<B>(node_.child(), st); });
    }
    if (st.first_computation(this)) {
      st.elsewhere(number, false, [&] {
        for_each_saved(node_, [&](const auto& s) {  // get()'s order: the saved values it reads first
          if constexpr (std::is_same_v<typename std::remove_cvref_t<decltype(s)>::backend, B>)
            (void)s.get_slot().plan_read(st, static_cast<std::size_t>(st.number(&s.get_slot())));
        });
        if (const auto sums = fused_sums()) {
          st.column_sums_next = true;
          plan_evaluate<B>(node_, true, st);
          sums->plan_claim(st, number, column_sums_kernel());
        } else {
          plan_evaluate<B>(node_, true, st);
        }
      });
    }
    return contiguous_strides(node_.shape());
  }
  TEXPR_REPORT_PATH bool plan_bind(plan_walk& walk, std::size_t) const override {
    auto& st = static_cast<plan_state&>(walk);
    return !passes_through(node_) && std::find(st.computed.begin(), st.computed.end(), this) == st.computed.end();
  }
  TEXPR_REPORT_PATH void plan_claim(plan_walk& walk, std::size_t writer, std::string_view kernel) const override {
    auto& st = static_cast<plan_state&>(walk);
    if (!st.first_computation(this)) return;
    const int id = st.number(this);
    st.elsewhere(static_cast<std::size_t>(id), false, [&] {
      node_line<B>(node_, st, "written by saved #" + std::to_string(writer) + "'s kernel (" + std::string(kernel) + ")");
    });
  }

 private:
  bool is_operand_memory() const {
    if constexpr (reads_operand_memory<Node>()) return passes_through(node_);
    else return false;
  }
  void count_inputs(std::uint64_t context_id) const override {
    for_each_saved(node_, [&](const auto& s) { s.get_slot().count_reader(context_id); });
  }
  void release(context<B>& ctx) const override { value_.release(ctx); }
  // The sums this value's kernel writes too, when it can (the same decision in evaluation and placement).
  std::shared_ptr<column_sums_sink<T, B>> fused_sums() const {
    if constexpr (writes_sums) {
      if (auto s = this->column_sums_.lock())
        if (fuses_column_sums<B>(node_, s->columns())) return s;
    }
    return nullptr;
  }
  static std::string_view column_sums_kernel() {
    if constexpr (writes_sums) return kernel<typename Node::op_type, typename Node::kernel_dtype, B>::column_sums_name;
    else return {};
  }
  void compute(const view<T, R, B>& dest, context<B>& ctx) {
    if constexpr (runs_here) {
      if constexpr (writes_sums) {
        if (const auto s = fused_sums()) {
          if (T* sums = s->claim(ctx)) {
            evaluate_with_column_sums(dest, node_, sums, s->columns(), ctx);
            return;
          }
        }
      }
      evaluate_into(dest, node_, ctx);
    }
  }

  Node node_;
  context_value<T, R, B> value_;
};

/// A value that is the sum of other saved values (its parts), added once per evaluation context: the gradient of a
/// shared value (one part per reader) and a parameter's gradient through shared values (one part per shared value
/// that reaches it). One part is read in place; none is zeros.
template <class T, std::size_t R, class B, bool CudaCompiler = cuda_compiler_v>
class sum_slot final : public slot<T, R, B> {
  static constexpr bool runs_here = CudaCompiler || !std::is_same_v<B, cuda>;

 public:
  sum_slot(const shape_t<R>& shape, std::string what) : slot<T, R, B>(shape, std::move(what)) {}
  /// Adds a part (of this value's shape): the sum includes it at every later evaluation.
  void add(std::shared_ptr<slot<T, R, B>> part) { parts_.push_back(std::move(part)); }
  /// The number of parts so far.
  std::size_t parts() const { return parts_.size(); }

  view<const T, R, B> get(context<B>& ctx) override {
    if (parts_.size() == 1) return parts_[0]->get(ctx);
    if constexpr (runs_here) {
      if (value_.held_in(ctx)) return value_.read();
      // Each part is done with once it is added (reported once per context).
      const bool report = value_.first_report(ctx);
      const auto added = [&](std::size_t i) {
        if (report) parts_[i]->reader_done(ctx);
      };
      if (parts_.empty()) {
        const view<T, R, B> dest = value_.fresh(ctx, this->shape());
        evaluate_into(dest, constant_expr<T, R, B>(T(0), this->shape()), ctx);
        return dest;
      }
      const auto first = parts_[0]->get(ctx);
      const auto second = parts_[1]->get(ctx);
      const view<T, R, B> dest = value_.fresh(ctx, this->shape());
      {
        temporaries_scope<B> scope(ctx);
        evaluate_into(dest, first + second, ctx);
      }
      added(0);
      added(1);
      for (std::size_t i = 2; i != parts_.size(); ++i) {
        {
          const auto part = parts_[i]->get(ctx);
          temporaries_scope<B> scope(ctx);
          evaluate_into(dest, view<const T, R, B>(dest) + part, ctx);
        }
        added(i);
      }
      return dest;
    } else {
      throw std::logic_error("texpr: a saved value that cannot be evaluated here was evaluated");
    }
  }
  // One part is read in place: this value's readers count as that part's.
  void count_reader(std::uint64_t context_id) const override {
    if (parts_.size() == 1) parts_[0]->count_reader(context_id);
    else slot<T, R, B>::count_reader(context_id);
  }
  void reader_done(context<B>& ctx) const override {
    if (parts_.size() == 1) parts_[0]->reader_done(ctx);
    else slot<T, R, B>::reader_done(ctx);
  }
  bool bind(context<B>& ctx, const view<T, R, B>& dest) override {
    if (parts_.size() == 1) return parts_[0]->bind(ctx, dest);
    return value_.bind(ctx, dest, this->shape());
  }
  // get()'s order: each part's computation before the pass that adds it.
  TEXPR_REPORT_PATH shape_t<R> plan_read(plan_walk& walk, std::size_t number) const override {
    if (parts_.size() == 1) return parts_[0]->plan_read(walk, number);
    auto& st = static_cast<plan_state&>(walk);
    if (st.first_computation(this)) {
      st.elsewhere(number, false, [&] {
        const view<const T, R, B> planned(unchecked_t{}, nullptr, this->shape(), contiguous_strides(this->shape()), nullptr);
        if (parts_.empty()) {
          plan_evaluate<B>(constant_expr<T, R, B>(T(0), this->shape()), true, st);
          return;
        }
        for (std::size_t i = 0; i != parts_.size(); ++i) {
          (void)parts_[i]->plan_read(st, static_cast<std::size_t>(st.number(parts_[i].get())));
          if (i >= 1) plan_evaluate<B>(planned + planned, true, st);
        }
      });
    }
    return contiguous_strides(this->shape());
  }
  TEXPR_REPORT_PATH bool plan_bind(plan_walk& walk, std::size_t number) const override {
    if (parts_.size() == 1) return parts_[0]->plan_bind(walk, number);
    auto& st = static_cast<plan_state&>(walk);
    return std::find(st.computed.begin(), st.computed.end(), this) == st.computed.end();
  }

 private:
  void count_inputs(std::uint64_t context_id) const override {
    for (const auto& p : parts_) p->count_reader(context_id);
  }
  void release(context<B>& ctx) const override { value_.release(ctx); }

  std::vector<std::shared_ptr<slot<T, R, B>>> parts_;
  context_value<T, R, B> value_;
};

class tape;

/// The slot of a shared value (tx::share), whatever its computation's type: the computation's value, until
/// autograd differentiates it; from then on the forward value autograd saved for it (the computation over saved
/// values), so that the forward pass and the backward pass read one computation of each value below it.
template <class T, std::size_t R, class B> class shared_slot_base : public slot<T, R, B> {
 public:
  /// Computes the value as `saved` does from now on (a gradient walk's forward value for it).
  void compute_as(std::shared_ptr<slot<T, R, B>> saved) { saved_ = std::move(saved); }
  /// The first reader's gradient reached the value in a gradient walk on tape t: walks the computation once with
  /// `gradient` (the sum of every reader's, complete when it is evaluated), saving the forward values the rules
  /// read (compute_as) and adding each parameter's contribution to its sum in t.
  virtual void differentiate(tape& t, std::shared_ptr<slot<T, R, B>> gradient) = 0;

  view<const T, R, B> get(context<B>& ctx) override { return current().get(ctx); }
  bool bind(context<B>& ctx, const view<T, R, B>& dest) override { return current().bind(ctx, dest); }
  void count_reader(std::uint64_t context_id) const override { current().count_reader(context_id); }
  void reader_done(context<B>& ctx) const override { current().reader_done(ctx); }
  TEXPR_REPORT_PATH shape_t<R> plan_read(plan_walk& walk, std::size_t number) const override {
    return current().plan_read(walk, number);
  }
  TEXPR_REPORT_PATH bool plan_bind(plan_walk& walk, std::size_t number) const override {
    return current().plan_bind(walk, number);
  }

 protected:
  /// The slot of `own`'s value (a slot computing the value's computation), described as `what`.
  shared_slot_base(const shape_t<R>& shape, std::string what, std::shared_ptr<slot<T, R, B>> own)
      : slot<T, R, B>(shape, std::move(what)), own_(std::move(own)) {}

 private:
  slot<T, R, B>& current() const { return saved_ ? *saved_ : *own_; }
  std::shared_ptr<slot<T, R, B>> own_;
  std::shared_ptr<slot<T, R, B>> saved_;
};

template <class N, class Children = typename N::children> struct contains_parameter;
template <class N, class... C> struct contains_parameter<N, type_list<C...>>
    : std::bool_constant<parameter<N> || (contains_parameter<C>::value || ...)> {};
/// True when node N's graph holds a parameter leaf (any tag).
template <class N> inline constexpr bool contains_parameter_v = contains_parameter<N>::value;

/// n with every parameter leaf read as a plain tensor_ref: a saved value's computation needs the tensor, not the
/// parameter's tag, so two layers whose computations differ only in their parameters' tags share one slot type
/// (and one instantiation of its evaluation).
template <class N> auto untagged(const N& n) {
  if constexpr (parameter<N>) {
    return tensor_ref<const typename N::tensor_type>(n.get());
  } else if constexpr (!contains_parameter_v<N>) {
    return n;
  } else {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      return n.with_operands(untagged(get<J>(n.operands()))...);
    }(std::make_index_sequence<N::children::size>{});
  }
}

/// The saved values of one tx::grad / tx::value_and_grad call, keyed by the forward node they stand for (its
/// address in the loss graph, its type, since a node and its first operand can share an address) and by what
/// is saved (its value or the gradient flowing into it).
class tape {
 public:
  /// What is saved for a forward node.
  enum class kind { value, gradient };

  /// The saved leaf of `computation` for (forward_node, K); one slot per key, made on first request.
  template <kind K, class Forward, class Node>
  TEXPR_NOINLINE auto save(const Forward& forward_node, const Node& computation) {
    auto& s = slot_for(static_cast<const void*>(&forward_node), std::type_index(typeid(Forward)), K);
    return saved_leaf<K>(s, untagged(computation), &op_label<typename Forward::op_type>);
  }

  /// The saved leaf of sum_to(g, shape) for a saved gradient g summed over its leading axes (a bias gradient):
  /// g's kernel is asked to write the sums too (slot::write_column_sums) when shape is g's trailing extents.
  template <class G, std::size_t R> auto column_sums(const G& g, const shape_t<R>& shape) {
    auto node = sum_to(g, shape);
    using Node = decltype(node);
    using B = typename Node::backend;
    using T = typename Node::value_type;
    using leaf = saved_ref<T, R, B, offender_summary_t<typename graph_check<Node, B>::offender>>;
    auto s = std::make_shared<computed_slot<Node, B>>(std::move(node), "sum_to of " + g.get_slot().what());
    bool trailing = true;
    for (std::size_t d = 0; d != R; ++d) trailing = trailing && shape[d] == g.shape()[G::rank - R + d];
    G writer = g;  // (a leaf: a handle on the shared slot)
    if (trailing && !writer.get_slot().writes_column_sums()) writer.get_slot().write_column_sums(s);
    return leaf(std::static_pointer_cast<slot<T, R, B>>(s));
  }

  /// The sum of the gradients flowing into shared value `value` (one part per reader), made on first request.
  template <class T, std::size_t R, class B>
  std::shared_ptr<sum_slot<T, R, B>> gradient_sum(const slot_base& value, const shape_t<R>& shape) {
    return sum_for<T, R, B>(sums_[&value], shape, [&] { return "gradient into " + value.what(); });
  }
  /// The part of the gradient of parameter `tag` (over `tensor`) that flows through shared values, made on first
  /// request. Shared values' walks and the call's own walk meet here by tag (each walk numbers its own parameters).
  template <class T, std::size_t R, class B>
  std::shared_ptr<sum_slot<T, R, B>> parameter_sum(const void* tag, const void* tensor, const shape_t<R>& shape) {
    auto& entry = parameter_sums_[tag];
    if (entry.tensor == nullptr) entry.tensor = tensor;
    else if (entry.tensor != tensor) throw_two_tensors_one_tag();
    return sum_for<T, R, B>(entry.sum, shape, [] { return std::string("gradient through shared values"); });
  }
  /// Two different tensors marked as one parameter.
  [[noreturn]] TEXPR_NOINLINE static void throw_two_tensors_one_tag() {
    throw std::invalid_argument("texpr: two different tensors are marked as the same parameter (one tag); give "
                                "each parameter its own tag type");
  }
  /// A saved value standing for contribution c (already on its backend): c's own slot when c is a saved leaf, else a
  /// new slot computing c. c's graph must run where it lives (the same check as every saved value's).
  template <class C> auto part(const C& c) {
    using B = typename C::backend;
    using T = typename C::value_type;
    if constexpr (is_saved_v<C> && !is_shared_v<C>) {
      return c.slot_handle();
    } else {
      auto node = untagged(c);
      using Node = decltype(node);
      check_placement<Node, B>();
      return std::static_pointer_cast<slot<T, Node::rank, B>>(
          std::make_shared<computed_slot<Node, B>>(std::move(node), label(kind::gradient, &op_label<typename C::op_type>)));
    }
  }

 private:
  template <class T, std::size_t R, class B, class What>
  static std::shared_ptr<sum_slot<T, R, B>> sum_for(std::shared_ptr<slot_base>& s, const shape_t<R>& shape, What what) {
    if (!s) s = std::make_shared<sum_slot<T, R, B>>(shape, what());
    return std::static_pointer_cast<sum_slot<T, R, B>>(s);
  }
  struct parameter_entry {
    std::shared_ptr<slot_base> sum;
    const void* tensor = nullptr;
  };
  std::map<const void*, std::shared_ptr<slot_base>> sums_;
  std::map<const void*, parameter_entry> parameter_sums_;  // by tag_id

  // save's work once per (untagged) computation type, shared by the forward nodes whose saved values compute alike.
  // Only a saved gradient's kernel may write the column sums of a bias gradient beside it.
  template <kind K, class Node>
  TEXPR_NOINLINE static auto saved_leaf(std::shared_ptr<slot_base>& s, Node node, std::string (*op)()) {
    using B = typename Node::backend;
    using T = typename Node::value_type;
    using leaf = saved_ref<T, Node::rank, B, offender_summary_t<typename graph_check<Node, B>::offender>>;
    if (!s) s = std::make_shared<computed_slot<Node, B, K == kind::gradient>>(std::move(node), label(K, op));
    return leaf(std::static_pointer_cast<slot<T, Node::rank, B>>(s));
  }
  // save's work that does not depend on the node types, once for all of them.
  TEXPR_NOINLINE std::shared_ptr<slot_base>& slot_for(const void* address, std::type_index type, kind k) {
    return slots_[key{address, type, k}];
  }
  TEXPR_NOINLINE static std::string label(kind k, std::string (*op)()) {
    return k == kind::value ? op() : "gradient into " + op();
  }

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
/// True when the type_list A and the type_list Tags have a tag in common.
template <class A, class Tags> struct any_in;
template <class... A, class Tags> struct any_in<type_list<A...>, Tags> : std::bool_constant<(contains_v<Tags, A> || ...)> {};
// A shared value holds the parameters of its computation (its gradient flows into them).
template <class T, std::size_t R, class B, class O, class P, class G, class S, class Tags>
struct contains_any_param<shared_value<T, R, B, O, P, G, S>, Tags, type_list<>> {
  static constexpr bool value = any_in<P, Tags>::value;
};
/// True when node N's graph holds a parameter whose tag is in the type_list Tags.
template <class N, class Tags> inline constexpr bool contains_any_param_v = contains_any_param<N, Tags>::value;

template <class N, class Tags, class Children = typename N::children> struct shared_holds_param;
template <class N, class Tags, class... C> struct shared_holds_param<N, Tags, type_list<C...>>
    : std::bool_constant<(shared_holds_param<C, Tags>::value || ...)> {};
template <class T, std::size_t R, class B, class O, class P, class G, class S, class Tags>
struct shared_holds_param<shared_value<T, R, B, O, P, G, S>, Tags, type_list<>> : any_in<P, Tags> {};
/// True when some of parameter Tag's gradient in graph N flows through a shared value (then it is a sum_slot's).
template <class N, class Tag> inline constexpr bool shared_holds_param_v = shared_holds_param<N, type_list<Tag>>::value;

template <class N, class Tags, class Children = typename N::children> struct backward_reads;
template <class N, class Tags, class... C> struct backward_reads<N, Tags, type_list<C...>> {
  template <std::size_t... I> static constexpr unsigned bits(std::index_sequence<I...>) {
    unsigned b = 0;
    ((b |= contains_any_param_v<C, Tags> ? rule_uses<typename N::op_type, I, N>() : 0u), ...);
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


/// The gradient walk's failure marker, returned once a diagnostic fired (one error, not a cascade).
struct gradient_failed {};
template <class G> inline constexpr bool is_failed_v = std::is_same_v<std::remove_cvref_t<G>, gradient_failed>;
template <class G> inline constexpr bool is_no_gradient_v = std::is_same_v<std::remove_cvref_t<G>, no_gradient>;

/// Index of Tag in the type_list Tags.
template <class Tag, class Tags> struct tag_index;
template <class Tag, class... T> struct tag_index<Tag, type_list<T...>> {
  static constexpr std::size_t value = [] {
    constexpr bool same[] = {std::is_same_v<Tag, T>...};
    for (std::size_t i = 0; i != sizeof...(T); ++i)
      if (same[i]) return i;
    return sizeof...(T);
  }();
};

/// Tag at index I of the type_list Tags.
template <std::size_t I, class Tags> struct tag_at;
template <std::size_t I, class H, class... T> struct tag_at<I, type_list<H, T...>> : tag_at<I - 1, type_list<T...>> {};
template <class H, class... T> struct tag_at<0, type_list<H, T...>> { using type = H; };
/// A parameter tag's identity at run time (tags may be incomplete types, which typeid refuses).
template <class Tag> inline constexpr char tag_id = 0;

template <class N, bool = parameter<N>> struct own_tag { using type = type_list<>; };
template <class N> struct own_tag<N, true> { using type = type_list<typename N::param_tag>; };
template <class N, class Children = typename N::children> struct param_tags_of;
template <class N, class... C> struct param_tags_of<N, type_list<C...>> {
  using type = unique_t<join_lists_t<typename own_tag<N>::type, typename param_tags_of<C>::type...>>;
};
template <class T, std::size_t R, class B, class O, class P, class G, class S>
struct param_tags_of<shared_value<T, R, B, O, P, G, S>, type_list<>> { using type = P; };
/// The tags of the parameters node N's graph holds (through shared values too), each once.
template <class N> using param_tags_of_t = typename param_tags_of<N>::type;

template <class... X> struct first_non_void { using type = void; };
template <class H, class... X> struct first_non_void<H, X...> {
  using type = std::conditional_t<std::is_void_v<H>, typename first_non_void<X...>::type, H>;
};
template <class N, class Tags, class Children = typename N::children> struct gradient_offender;
template <class N, class Tags, class... C> struct gradient_offender<N, Tags, type_list<C...>> {
  static auto pick() {
    if constexpr (!contains_any_param_v<N, Tags> || parameter<N>) {
      return std::type_identity<void>{};
    } else if constexpr (is_complex_v<typename N::value_type> || is_complex_v<typename N::kernel_dtype>) {
      return std::type_identity<diagnostic::no_complex_gradient<typename N::op_type, dtype_tag_t<typename N::kernel_dtype>>>{};
    } else if constexpr (!has_gradient_rule<typename N::op_type>) {
      return std::type_identity<diagnostic::no_gradient_rule<typename N::op_type, dtype_tag_t<typename N::kernel_dtype>>>{};
    } else {
      return std::type_identity<typename first_non_void<typename gradient_offender<C, Tags>::type...>::type>{};
    }
  }
  using type = typename decltype(pick())::type;
};
template <class T, std::size_t R, class B, class O, class P, class G, class S, class Tags>
struct gradient_offender<shared_value<T, R, B, O, P, G, S>, Tags, type_list<>> {
  using type = std::conditional_t<any_in<P, Tags>::value, typename G::type, void>;
};
/// The diagnostic a gradient walk of N for the parameters Tags would fire first (void: none): its first node on a
/// parameter's path without a gradient rule. A shared value carries its computation's, so that tx::grad reports it
/// where the walk reaches the value (the walk itself is instantiated when the value is made, and must not fire).
template <class N, class Tags> using gradient_offender_t = typename gradient_offender<N, Tags>::type;

/// Sum of two contributions to one parameter's gradient (either may be absent or failed). Each is already summed
/// to the parameter's shape where it reached the parameter (back() on a parameter leaf), so they add as they are.
template <class X, class Y> auto add_contributions(X x, Y y) {
  if constexpr (is_failed_v<X> || is_failed_v<Y>) return gradient_failed{};
  else if constexpr (is_no_gradient_v<X>) return y;
  else if constexpr (is_no_gradient_v<Y>) return x;
  else return std::move(x) + std::move(y);
}

/// Builds the forward proxies and the gradient graphs of one call for the parameters with tags Tags, in one
/// reverse walk: back(n, g) returns every parameter's contribution from n's subtree at once (a tuple with one
/// member per tag, no_gradient where the subtree does not hold that parameter), so the walk is instantiated once
/// per forward node whatever the number of parameters.
template <class Tags> struct gradient_builder {
  static constexpr std::size_t params = Tags::size;
  tape& t;
  std::array<const void*, (params > 0 ? params : 1)> param_tensors{};  // each tag's tensor, to reject two under one tag

  /// The forward value of n as the gradient graphs read it: leaves as they are; a node the backward pass reads
  /// (Needed), or one whose own rule reads its result, saved; any other node rebuilt over its operands' proxies.
  /// A proxy that is not saved is read only inside the computation of the saved value above it (a rule that reads
  /// a value makes it Needed), so it is evaluated once, fused there: elu(x w + b) is one saved value, one GEMM
  /// with its epilogue, and the product x w is never kept.
  template <bool Needed, class N> TEXPR_NOINLINE auto fwd(const N& n) {
    constexpr op::kind k = kind_of_v<N>;
    if constexpr (k == op::kind::memory || k == op::kind::constant || k == op::kind::generator) {
      return n;
    } else {
      auto rebuilt = rebuild(n, std::make_index_sequence<N::children::size>{});
      constexpr bool save = Needed || (contains_any_param_v<N, Tags> && reads_out_v<N, Tags>);
      if constexpr (save) return t.save<tape::kind::value>(n, std::move(rebuilt));
      else return rebuilt;
    }
  }

  template <class N, std::size_t... J> auto rebuild(const N& n, std::index_sequence<J...>) {
    return n.with_operands(fwd<reads_operand_v<N, Tags, J>>(get<J>(n.operands()))...);
  }

  /// Every parameter's contribution: no_gradient for each.
  static auto none() { return none_impl(std::make_index_sequence<params>{}); }
  template <std::size_t... I> static auto none_impl(std::index_sequence<I...>) {
    return make_tuple(((void)I, no_gradient{})...);
  }
  /// Every parameter's contribution failed (a diagnostic fired).
  static auto failed() { return failed_impl(std::make_index_sequence<params>{}); }
  template <std::size_t... I> static auto failed_impl(std::index_sequence<I...>) {
    return make_tuple(((void)I, gradient_failed{})...);
  }
  /// g for the parameters tagged Tag, nothing for the others.
  template <class Tag, class G, class... T, std::size_t... I> static auto only(const G& g, type_list<T...>, std::index_sequence<I...>) {
    return make_tuple([&] {
      if constexpr (std::is_same_v<T, Tag>) return g;
      else return no_gradient{};
    }()...);
  }
  /// The member-wise sum of two contribution tuples.
  template <class X, class Y, std::size_t... I> static auto add_tuples(const X& x, const Y& y, std::index_sequence<I...>) {
    return make_tuple(add_contributions(get<I>(x), get<I>(y))...);
  }
  template <class X> static X add_all(X x) { return x; }
  template <class X, class Y, class... Rest> static auto add_all(const X& x, const Y& y, const Rest&... rest) {
    return add_all(add_tuples(x, y, std::make_index_sequence<params>{}), rest...);
  }

  /// Whether the gradient g flowing into n is saved (computed once, read as memory by every branch below n):
  /// when n is computed (its rules read g more than once, or it feeds several parameters), or when n fans out to
  /// several operands that lead to parameters and g is itself computed (a leaf or constant is already shared).
  template <class N, class G> static constexpr bool save_gradient() {
    if constexpr (std::is_same_v<typename G::backend, any_backend> || kind_of_v<G> == op::kind::memory ||
                  kind_of_v<G> == op::kind::constant) {
      return false;
    } else {
      return kind_of_v<N> == op::kind::computed || (fan_out<N>() > 1);
    }
  }
  template <class N> static constexpr std::size_t fan_out() { return fan_out_impl<N>(typename N::children{}); }
  template <class N, class... C> static constexpr std::size_t fan_out_impl(type_list<C...>) {
    return (std::size_t{0} + ... + std::size_t{contains_any_param_v<C, Tags>});
  }

  /// The contributions of node n's subtree to every parameter's gradient, given the gradient g flowing into n.
  template <class N, class G> TEXPR_NOINLINE auto back(const N& n, const G& g) {
    using Op = typename N::op_type;
    if constexpr (!contains_any_param_v<N, Tags>) {
      return none();
    } else if constexpr (parameter<N>) {
      constexpr std::size_t p = tag_index<typename N::param_tag, Tags>::value;
      if (static_cast<const void*>(&n.get()) != param_tensors[p]) tape::throw_two_tensors_one_tag();
      // A contribution may be broadcast beyond the parameter's shape (elementwise rules pass g on as it is): it is
      // summed to that shape here, where it arrives, so that two uses of one parameter, one broadcast and one not,
      // add correctly (sum(x * b) + sum(b) is colsum(x) + 1, not colsum(x) + rows). A sum_to that sums nothing
      // runs no kernel.
      using T = typename N::value_type;
      if constexpr (std::is_same_v<typename G::backend, any_backend>) {
        // Constants only (the gradient of sum(p) is 1 everywhere): placed on the parameter's backend first.
        auto placed = g + constant_expr<T, G::rank, typename N::backend>(T(0), g.shape());
        return only<typename N::param_tag>(sum_to(std::move(placed), n.shape()), Tags{}, std::make_index_sequence<params>{});
      } else if constexpr (is_saved_v<G> && (G::rank > N::rank)) {
        // A saved gradient summed over its leading axes (a bias gradient): written beside g where g is computed.
        return only<typename N::param_tag>(t.column_sums(g, n.shape()), Tags{}, std::make_index_sequence<params>{});
      } else {
        return only<typename N::param_tag>(sum_to(g, n.shape()), Tags{}, std::make_index_sequence<params>{});
      }
    } else if constexpr (is_shared_v<N>) {
      // Every reader adds its gradient to the value's sum; the first one has the slot walk the computation once,
      // with the sum (complete when it is evaluated), and the parameters' contributions go to their sums in the
      // tape (gradient_graph).
      using T = typename N::value_type;
      using B = typename N::backend;
      if constexpr (!std::is_void_v<gradient_offender_t<N, Tags>>) {
        (void)sizeof(gradient_offender_t<N, Tags>);
        return failed();
      } else {
        auto sum = t.gradient_sum<T, N::rank, B>(n.get_slot(), n.shape());
        sum->add(t.part(sum_to(on_backend<T, B>(g), n.shape())));
        if (sum->parts() == 1) n.shared_slot().differentiate(t, std::static_pointer_cast<slot<T, N::rank, B>>(sum));
        return none();
      }
    } else if constexpr (is_complex_v<typename N::value_type> || is_complex_v<typename N::kernel_dtype>) {
      (void)sizeof(diagnostic::no_complex_gradient<Op, dtype_tag_t<typename N::kernel_dtype>>);
      return failed();
    } else if constexpr (!has_gradient_rule<Op>) {
      (void)sizeof(diagnostic::no_gradient_rule<Op, dtype_tag_t<typename N::kernel_dtype>>);
      return failed();
    } else if constexpr (save_gradient<N, G>()) {
      auto gs = t.save<tape::kind::gradient>(n, g);
      return back_operands(n, gs, std::make_index_sequence<N::children::size>{});
    } else {
      return back_operands(n, g, std::make_index_sequence<N::children::size>{});
    }
  }

  /// g on backend B: a gradient made of constants only (the loss's own, 1) is placed there first.
  template <class T, class B, class G> static auto on_backend(const G& g) {
    if constexpr (std::is_same_v<typename G::backend, any_backend>) return g + constant_expr<T, G::rank, B>(T(0), g.shape());
    else return g;
  }
  /// Adds each parameter's contribution from a shared value's computation to that parameter's sum.
  template <class All, std::size_t... I> void to_parameter_sums(const All& all, std::index_sequence<I...>) {
    (to_parameter_sum<I>(get<I>(all)), ...);
  }
  template <std::size_t I, class C> void to_parameter_sum(const C& c) {
    if constexpr (!is_no_gradient_v<C> && !is_failed_v<C>)
      t.parameter_sum<typename C::value_type, C::rank, typename C::backend>(&tag_id<typename tag_at<I, Tags>::type>,
                                                                             param_tensors[I], c.shape())
          ->add(t.part(c));
  }

  template <class N, class G, std::size_t... J> auto back_operands(const N& n, const G& g, std::index_sequence<J...> js) {
    return add_all(back_operand<J>(n, g, js)...);
  }

  template <std::size_t I, class N, class G, std::size_t... J>
  TEXPR_NOINLINE auto back_operand(const N& n, const G& g, std::index_sequence<J...>) {
    using Op = typename N::op_type;
    using C = tuple_element_t<I, std::remove_cvref_t<decltype(n.operands())>>;
    if constexpr (!contains_any_param_v<C, Tags>) {
      return none();
    } else {
      auto out = [&] {
        if constexpr ((rule_uses<Op, I, N>() & uses_out) != 0) return fwd<true>(n);
        else return no_gradient{};  // unused by the rule
      }();
      auto local = gradient_rule<Op>::template partial<I>(n, g, out, fwd<reads_operand_v<N, Tags, J>>(get<J>(n.operands()))...);
      return flow(get<I>(n.operands()), std::move(local));
    }
  }

  /// Sends a rule's contribution into operand c: elementwise operands and leaves take it as it is (it may still be
  /// broadcast beyond c's shape; the final sum_to sums it once); other nodes get exactly their shape.
  template <class C, class L> auto flow(const C& c, L local) {
    if constexpr (is_failed_v<L>) return failed();
    else if constexpr (is_no_gradient_v<L>) return none();
    else if constexpr (kind_of_v<C> == op::kind::elementwise || kind_of_v<C> == op::kind::memory) return back(c, local);
    else return back(c, sum_to(std::move(local), c.shape()));
  }

  /// The gradient graph of parameter p (the I-th) from its summed contribution.
  template <std::size_t I, class Loss, class P, class G> auto gradient_graph(const P& p, G contribution) {
    using Tag = typename P::param_tag;
    using T = typename Loss::value_type;
    // After a diagnostic, a zero graph of the right type keeps the user's code from piling up more errors.
    auto placeholder = [&] { return sum_to(constant_expr<T, P::rank, typename P::backend>(T(0), p.shape()), p.shape()); };
    if constexpr (!contains_any_param_v<Loss, type_list<Tag>>) {
      (void)sizeof(diagnostic::loss_does_not_depend_on<Tag>);
      return placeholder();
    } else if constexpr (is_failed_v<G>) {
      return placeholder();
    } else if constexpr (shared_holds_param_v<Loss, Tag>) {
      // The part through shared values, summed in the tape (every contribution there passed its placement check).
      using B = typename P::backend;
      using leaf = saved_ref<typename P::value_type, P::rank, B, offender_summary_t<void>>;
      auto shared_part = leaf(std::static_pointer_cast<slot<typename P::value_type, P::rank, B>>(
          t.parameter_sum<typename P::value_type, P::rank, B>(&tag_id<Tag>, static_cast<const void*>(&p.get()), p.shape())));
      if constexpr (is_no_gradient_v<G>) return shared_part;
      else return contribution + shared_part;
    } else if constexpr (is_no_gradient_v<G>) {
      (void)sizeof(diagnostic::loss_not_differentiable_in<Tag>);
      return placeholder();
    } else {
      return contribution;  // each use's contribution was summed to the parameter's shape where it arrived
    }
  }

  /// Every parameter's gradient graph, in the order of params, from one reverse walk of loss.
  template <class Loss, class... P> auto gradient_graphs(const Loss& loss, const P&... ps) {
    std::size_t i = 0;
    ((param_tensors[i++] = static_cast<const void*>(&ps.get())), ...);
    using T = typename Loss::value_type;
    auto all = back(loss, make_scalar<T>(1));
    return graphs_of(loss, all, std::index_sequence_for<P...>{}, ps...);
  }
  template <class Loss, class All, std::size_t... I, class... P>
  auto graphs_of(const Loss&, const All& all, std::index_sequence<I...>, const P&... ps) {
    return std::tuple{gradient_graph<I, Loss>(ps, get<I>(all))...};
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

// A new tensor for graph e's result in ctx; a graph that is a saved value (the loss, a bias gradient) is bound to
// it, so that the value is computed straight into it whichever graph first reads it. True in `bound` then.
template <class E, class B> auto result_for(const E& e, context<B>& ctx, bool& bound) {
  auto n = capture(e);
  using N = decltype(n);
  tensor<typename N::value_type, N::rank, B> out;
  out.allocate_uninitialized(n.shape(), ctx.stream);
  if constexpr (is_saved_v<N> && std::is_same_v<typename N::backend, B>) bound = n.get_slot().bind(ctx, out.view());
  return out;
}
// Evaluates graph e into its result `out` inside the shared context ctx.
// Then the graph's reads of saved values are done (eval_all counted them as readers).
template <class E, class T, std::size_t R, class B> void eval_in(const E& e, tensor<T, R, B>& out, bool bound, context<B>& ctx) {
  auto n = capture(e);
  {
    temporaries_scope<B> scope(ctx);
    bool computed = false;
    if constexpr (is_saved_v<decltype(n)>) {
      if (bound) (void)n.storage(ctx);  // computed into out, here or by an earlier graph
      computed = bound;
    }
    if (!computed) evaluate_into(out.view(), n, ctx);
  }
  saved_readers_done(n, ctx);
}
template <class... E, std::size_t... I, class B>
auto eval_all_in(context<B>& ctx, std::index_sequence<I...>, const E&... e) {
  bool bound[sizeof...(E) > 0 ? sizeof...(E) : 1] = {};
  // Every reader of every saved value, counted first: each value's memory goes back after its last reader.
  (count_saved_readers(capture(e), ctx), ...);
  auto results = std::tuple{result_for(e, ctx, bound[I])...};
  (eval_in(e, std::get<I>(results), bound[I], ctx), ...);
  return results;
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
    return b.gradient_graphs(loss, params...);
  }
}

/// Like tx::grad, with the loss itself first: (loss, d loss / d p...). The loss is a saved value shared with the
/// gradient graphs, so tx::eval_all evaluates the forward pass once.
template <operand Loss, parameter... P> auto value_and_grad(const Loss& loss, const P&... params) {
  if constexpr (detail::check_loss<Loss>()) {
    detail::tape t;
    detail::gradient_builder<detail::type_list<typename P::param_tag...>> b{t};
    auto value = b.template fwd<true>(loss);
    return std::tuple_cat(std::tuple{std::move(value)}, b.gradient_graphs(loss, params...));
  }
}

/// tx::grad over a group of parameters (what tx::params returns): the gradients in the group's order.
template <operand Loss, parameter... P> auto grad(const Loss& loss, const std::tuple<P...>& group) {
  return std::apply([&](const P&... p) { return grad(loss, p...); }, group);
}
/// tx::value_and_grad over a group of parameters (what tx::params returns): (loss, gradients in the group's order).
template <operand Loss, parameter... P> auto value_and_grad(const Loss& loss, const std::tuple<P...>& group) {
  return std::apply([&](const P&... p) { return value_and_grad(loss, p...); }, group);
}

/// Evaluates several expressions into new tensors in one evaluation context, so saved values they share (the
/// graphs of one tx::grad / tx::value_and_grad call) are computed once. Returns a std::tuple of tensors.
template <operand... E> auto eval_all(const E&... e) {
  using B = typename detail::common_backend<typename detail::captured_t<const E&>::backend...>::type;
  static_assert(backend_tag<B>, "texpr: eval_all needs expressions with tensor operands on one backend");
  detail::require_backend_compiler<B>();
  stream_t stream = nullptr;
  ((stream = stream ? stream : detail::preferred_stream(detail::capture(e))), ...);
  context<B> ctx{detail::memory<B>::resolve(stream), {}, {}};
  return detail::eval_all_in(ctx, std::index_sequence_for<E...>{}, e...);
}
/// eval_all over a tuple of expressions (what tx::grad and tx::value_and_grad return).
template <class... E> auto eval_all(const std::tuple<E...>& graphs) {
  return std::apply([](const auto&... e) { return eval_all(e...); }, graphs);
}

namespace detail {
/// Calls f(leaf) for each parameter leaf of node n's graph, not looking inside shared values (their own walks do).
template <class N, class F> void for_each_parameter(const N& n, F&& f) {
  if constexpr (parameter<N>) {
    f(n);
  } else if constexpr (!is_shared_v<N>) {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (for_each_parameter(get<J>(n.operands()), f), ...);
    }(std::make_index_sequence<N::children::size>{});
  }
}

/// The slot of tx::share(n): holds the computation (one object for every copy of the value) and differentiates
/// it for the parameters it holds. Instantiating that walk here, where the computation's type is known, is what
/// lets the value's own type leave the computation out.
template <class N, class B> class shared_slot final : public shared_slot_base<typename N::value_type, N::rank, B> {
  using T = typename N::value_type;
  static constexpr std::size_t R = N::rank;
  using tags = param_tags_of_t<N>;

 public:
  /// The slot of `computation`'s value, described as `what`.
  shared_slot(N computation, std::string what)
      : shared_slot_base<T, R, B>(computation.shape(), what, std::make_shared<computed_slot<N, B, false>>(computation, what)),
        computation_(std::move(computation)) {}

  void differentiate(tape& t, std::shared_ptr<slot<T, R, B>> gradient) override {
    if constexpr (tags::size > 0 && std::is_void_v<gradient_offender_t<N, tags>>) {
      gradient_builder<tags> walk{t};
      for_each_parameter(computation_, [&](const auto& p) {
        const void* tensor = static_cast<const void*>(&p.get());
        auto& known = walk.param_tensors[tag_index<typename std::remove_cvref_t<decltype(p)>::param_tag, tags>::value];
        if (known == nullptr) known = tensor;  // (two tensors under one tag: back() on the leaf throws)
      });
      this->compute_as(t.part(walk.template fwd<true>(computation_)));
      using leaf = saved_ref<T, R, B, offender_summary_t<void>>;
      walk.to_parameter_sums(walk.back(computation_, leaf(std::move(gradient))), std::make_index_sequence<tags::size>{});
    } else {
      // Unreachable: a value without parameters gets no gradient, and tx::grad reports the offender of one whose
      // walk would fail (gradient_builder::back) before any walk runs.
      (void)t;
      (void)gradient;
      throw std::logic_error("texpr: internal error: a shared value without a gradient walk was differentiated");
    }
  }

 private:
  N computation_;
};
} // namespace detail

/// A shared value: e computed once per evaluation context however many readers (and copies of the result) read it,
/// and differentiated once, through the sum of its readers' gradients. Write `auto x1 = tx::share(block(x));` for a
/// value that several expressions read (a residual stream, the q, k and v slices of one product): without it each
/// reader holds its own copy of e's tree and evaluates it. Readers read it as memory (it is not fused into them).
/// The result's type has a fixed size whatever e's (it names the value, not e), so stacking shared layers keeps
/// types and compile times linear in depth. Tensors, views and constants are returned as they are (they are memory
/// already).
template <operand E> auto share(E&& e) {
  auto n = detail::capture(std::forward<E>(e));
  using N = decltype(n);
  constexpr op::kind k = detail::kind_of_v<N>;
  if constexpr (k == op::kind::memory || k == op::kind::constant) {
    return n;
  } else {
    using B = typename N::backend;
    static_assert(backend_tag<B>, "texpr: tx::share needs an expression with a tensor operand (it has no backend)");
    using T = typename N::value_type;
    using tags = detail::param_tags_of_t<N>;
    using S = shared_value<T, N::rank, B, offender_summary_t<typename detail::graph_check<N, B>::offender>, tags,
                           offender_summary_t<detail::gradient_offender_t<N, tags>>, detail::shared_slot_base<T, N::rank, B>>;
    std::string what = "shared " + detail::op_label<typename N::op_type>();
    return S(std::make_shared<detail::shared_slot<N, B>>(std::move(n), std::move(what)));
  }
}

/// Holds when every graph of a tuple (what tx::grad returns) runs entirely on Backend.
template <class Tuple, class Backend>
concept all_run_on = detail::all_run_on_impl<std::remove_cvref_t<Tuple>, Backend>::value;

} // namespace texpr

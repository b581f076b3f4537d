// The broadcast_axis node: a gradient spread back along the axis an axis reduction removed.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "texpr/autograd/detail/memo.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr::detail {

/// G (rank R - 1) read as rank R with `extent` copies along `axis`. The registry has no broadcast_to or
/// expand_dims op, so this node is an identity op::cast<T> (a fused elementwise copy): it evaluates G once
/// and its readers see G's memory with a zero stride on the inserted axis. Placement shows it as cast<T>.
template <class G> class broadcast_axis_expr : public expr_base<broadcast_axis_expr<G>> {
 public:
  using texpr_node = void;
  using value_type = typename G::value_type;
  using kernel_dtype = value_type;
  using op_type = op::cast<value_type>;
  using backend = typename G::backend;
  using children = type_list<G>;
  static constexpr std::size_t rank = G::rank + 1;
  static constexpr bool is_elementwise = true;

  /// Inserts `axis` (0 <= axis < rank) of the given extent into g's shape.
  broadcast_axis_expr(G g, std::size_t axis, index_t extent) : g_(std::move(g)), axis_(axis) {
    const auto gs = g_.shape();
    if (axis > G::rank)
      throw shape_error("texpr: cannot insert axis " + std::to_string(axis) + " into shape " + texpr::to_string(gs));
    for (std::size_t d = 0, i = 0; d < rank; ++d) shape_[d] = d == axis ? extent : gs[i++];
  }
  /// g's shape with the axis inserted.
  const shape_t<rank>& shape() const { return shape_; }

  template <std::size_t RO, class B> auto accessor(const shape_t<RO>& out, context<B>& ctx) const {
    const auto v = value_view(g_, ctx);
    shape_t<rank> s{}, st{};
    for (std::size_t d = 0, i = 0; d < rank; ++d) {
      if (d == axis_) {
        s[d] = 1;  // extent 1, stride 0: make_leaf_accessor broadcasts it to the output
      } else {
        s[d] = v.shape()[i];
        st[d] = v.strides()[i];
        ++i;
      }
    }
    return make_leaf_accessor<value_type>(v.data(), s, st, out);
  }
  template <class F> void for_each_child(F&& f) const { f(g_); }
  template <class F> void for_each_leaf(F&& f, bool) const { g_.for_each_leaf(f, false); }

 private:
  G g_;
  std::size_t axis_;
  shape_t<rank> shape_{};
};

} // namespace texpr::detail

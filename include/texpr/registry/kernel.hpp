// The kernel registry's primary template, the predicates over it, and the machinery that turns a backend's table
// (one row per op: its dtypes and the implementation that runs) into kernel specialisations.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/type_list.hpp"

namespace texpr {

/// The kernel that evaluates op Op on dtype T on Backend. Declared, never defined in general: a backend's table
/// specialises it, for each of its rows, to derive from the implementation that runs (host::fused_elementwise,
/// cuda::block_reduce, ...), so a row names real code and a missing row leaves nothing to call. The
/// implementation's static `name` is what tx::placement prints.
template <class Op, class T, class Backend> struct kernel;

/// Specialise (partially, if you like) to true_type to forbid kernels, e.g. all double work on cuda.
template <class Op, class T, class Backend> struct forbidden : std::false_type {};

/// True when user code forbids (Op, T, Backend).
template <class Op, class T, class Backend>
inline constexpr bool forbidden_v = forbidden<Op, T, Backend>::value;

/// Holds when the registry has a kernel for (Op, T, Backend), forbidden or not.
template <class Op, class T, class Backend>
concept registered_kernel = requires {
  { kernel<Op, T, Backend>::name } -> std::convertible_to<std::string_view>;
};

/// Holds when (Op, T, Backend) has a registered kernel that user code does not forbid.
template <class Op, class T, class Backend>
concept has_kernel = registered_kernel<Op, T, Backend> && !forbidden_v<Op, T, Backend>;

/// Stands for the dtype in a table row whose op depends on it (`cast<T>`), where the rows are listed.
struct dtype_parameter {};

namespace detail {
template <class Op, class T> struct substitute_dtype { using type = Op; };
template <template <class> class Op, class T> struct substitute_dtype<Op<dtype_parameter>, T> { using type = Op<T>; };
} // namespace detail

/// One row of a backend's table: Op (written with dtype_parameter where it depends on the dtype), the row's
/// dtype column as written (`declared + half_floats`), the implementation and the backend.
template <class Op, class DtypesExpr, class Implementation, class Backend> struct registry_row {
  /// The op tag for dtype T.
  template <class T> using op_for = typename detail::substitute_dtype<Op, T>::type;
  /// The dtypes the row registers, resolved against the op's declared set.
  using dtypes = resolve_dtypes_t<DtypesExpr, declared_dtypes_t<Op>>;
  using implementation = Implementation;  ///< What runs.
  using backend = Backend;                ///< Where.
};

/// One registered (op, dtype, backend): a row expanded for one of its dtypes.
template <class Op, class T, class Backend> struct registry_entry {
  using op_type = Op;         ///< Op tag.
  using value_type = T;       ///< dtype.
  using backend = Backend;    ///< Backend tag.
};

namespace detail {
template <class Row, class Dtypes> struct row_entries;
template <class Row, class... T> struct row_entries<Row, dtype_set<T...>> {
  using type = type_list<registry_entry<typename Row::template op_for<T>, T, typename Row::backend>...>;
};
template <class Rows> struct expand_rows;
template <class... Rows> struct expand_rows<type_list<Rows...>> {
  using type = join_lists_t<typename row_entries<Rows, typename Rows::dtypes>::type...>;
};
} // namespace detail

/// Every (op, dtype) a list of rows registers, row by row, dtypes in the support matrix's order.
template <class Rows> using registry_entries_t = typename detail::expand_rows<Rows>::type;

} // namespace texpr

/// Expands one table row into the kernel specialisation: for every dtype T of the row, kernel<op, T, BACKEND>
/// derives from the implementation. OP may use T (`cast<T>`).
#define TEXPR_REGISTRY_SPECIALISATION(BACKEND, NS, OP, DTYPES, IMPL)                                          \
  template <class T>                                                                                          \
    requires in_dtype_set_v<resolve_dtypes_t<std::remove_cvref_t<decltype(DTYPES)>,                           \
                                             declared_dtypes_t<op::OP>>, T>                                   \
  struct kernel<op::OP, T, BACKEND> : NS::IMPL {};

/// Expands one table row into its registry_row (where the rows are listed, T names dtype_parameter).
#define TEXPR_REGISTRY_ROW_TYPE(BACKEND, NS, OP, DTYPES, IMPL) \
  registry_row<op::OP, std::remove_cvref_t<decltype(DTYPES)>, NS::IMPL, BACKEND>,

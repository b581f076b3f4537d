// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernel registry's primary template, the predicates over it, and the machinery that turns a backend's table
// (one row per op: its dtypes, the implementation that runs and, on cuda, the oldest GPU architecture it runs on)
// into kernel specialisations.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

#include "texpr/core/arch.hpp"
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

/// Specialise (partially, if you like) to true_type to forbid a cuda kernel when the build targets compute
/// capability Arch, e.g. float64 matmul on the GPUs where double runs at 1/64 of float speed:
/// `template <int A> requires (A == 86 || A == 89) struct tx::forbidden_on_arch<tx::op::matmul, double, A> : std::true_type {};`
template <class Op, class T, int Arch> struct forbidden_on_arch : std::false_type {};

/// Holds when the registry has a kernel for (Op, T, Backend), forbidden or not.
template <class Op, class T, class Backend>
concept registered_kernel = requires {
  { kernel<Op, T, Backend>::name } -> std::convertible_to<std::string_view>;
};

/// Holds when (Op, T, Backend) has a registered kernel that user code does not forbid (on any architecture:
/// has_kernel_for adds the build's targets).
template <class Op, class T, class Backend>
concept has_kernel = registered_kernel<Op, T, Backend> && !forbidden_v<Op, T, Backend>;

/// The oldest compute capability kernel<Op, T, Backend> runs on (its `min_arch`; 0 when it has none, as every
/// host kernel).
template <class Op, class T, class Backend>
inline constexpr int kernel_min_arch_v = [] {
  if constexpr (requires { kernel<Op, T, Backend>::min_arch; }) return static_cast<int>(kernel<Op, T, Backend>::min_arch);
  else return 0;
}();

namespace detail {
// The first target of Targets that kernel<Op, T, Backend> is too new for, as sm<A>; void when none.
template <class Op, class T, class Backend, class Targets> struct first_target_below;
template <class Op, class T, class Backend> struct first_target_below<Op, T, Backend, cuda_targets<>> { using type = void; };
template <class Op, class T, class Backend, int A, int... As> struct first_target_below<Op, T, Backend, cuda_targets<A, As...>> {
  using type = std::conditional_t<(A < kernel_min_arch_v<Op, T, Backend>), sm<A>,
                                  typename first_target_below<Op, T, Backend, cuda_targets<As...>>::type>;
};
// The first target of Targets on which user code forbids (Op, T) through forbidden_on_arch, as sm<A>; void when none.
template <class Op, class T, class Targets> struct first_target_forbidden;
template <class Op, class T> struct first_target_forbidden<Op, T, cuda_targets<>> { using type = void; };
template <class Op, class T, int A, int... As> struct first_target_forbidden<Op, T, cuda_targets<A, As...>> {
  using type = std::conditional_t<forbidden_on_arch<Op, T, A>::value, sm<A>,
                                  typename first_target_forbidden<Op, T, cuda_targets<As...>>::type>;
};
} // namespace detail

/// The first of Targets (cuda_targets<...>) that kernel<Op, T, Backend> needs a newer architecture than, as
/// sm<A>; void when it runs on all of them.
template <class Op, class T, class Backend, class Targets = targets_of_t<Backend>>
using target_below_kernel_t = typename detail::first_target_below<Op, T, Backend, Targets>::type;

/// The first of Targets on which user code forbids (Op, T) through forbidden_on_arch, as sm<A>; void when none.
template <class Op, class T, class Targets>
using target_forbidden_t = typename detail::first_target_forbidden<Op, T, Targets>::type;

/// Holds when (Op, T, Backend) has a kernel that runs on every architecture of Targets (default: the build's on
/// cuda) and that user code forbids on none.
template <class Op, class T, class Backend, class Targets = targets_of_t<Backend>>
concept has_kernel_for = has_kernel<Op, T, Backend> && std::is_void_v<target_below_kernel_t<Op, T, Backend, Targets>> &&
                         std::is_void_v<target_forbidden_t<Op, T, Targets>>;

/// Stands for the dtype in a table row whose op depends on it (`cast<T>`), where the rows are listed.
struct dtype_parameter {};

namespace detail {
template <class Op, class T> struct substitute_dtype { using type = Op; };
template <template <class> class Op, class T> struct substitute_dtype<Op<dtype_parameter>, T> { using type = Op<T>; };
} // namespace detail

// ---- the architecture column of the cuda table ----

/// Architecture column: the row runs on every architecture.
struct any_arch_t {};
/// Architecture column value: no floor.
inline constexpr any_arch_t any_arch{};

/// Architecture column: the row's dtypes in Dtypes need compute capability Arch or newer; the others need none.
template <int Arch, class Dtypes> struct arch_floor {};

/// Architecture column: `sm_80` alone, every dtype of the row needs sm_80 or newer; `sm_80(dtype_set<bfloat16>{})`,
/// only those dtypes do.
template <int Arch> struct arch_column {
  /// Only the dtypes of set s need sm_Arch.
  template <class... T> constexpr arch_floor<Arch, dtype_set<T...>> operator()(dtype_set<T...>) const { return {}; }
};
inline constexpr arch_column<75> sm_75{};  ///< Turing: int8 tensor cores.
inline constexpr arch_column<80> sm_80{};  ///< Ampere: bfloat16 GEMMs.
inline constexpr arch_column<89> sm_89{};  ///< Ada: FP8 tensor cores.
inline constexpr arch_column<90> sm_90{};  ///< Hopper.

/// Architecture column: several floors (`sm_80(a) + sm_89(b)`); a dtype needs the newest that names it.
template <class... Floors> struct arch_floors {};
/// Combines architecture floors.
template <int A, class S, int B, class R> constexpr arch_floors<arch_floor<A, S>, arch_floor<B, R>> operator+(arch_floor<A, S>, arch_floor<B, R>) { return {}; }
/// See the overload above.
template <class... F, int B, class R> constexpr arch_floors<F..., arch_floor<B, R>> operator+(arch_floors<F...>, arch_floor<B, R>) { return {}; }

namespace detail {
template <class Column, class T, class Declared> struct column_min_arch { static constexpr int value = 0; };  // any_arch
template <int A, class T, class Declared> struct column_min_arch<arch_column<A>, T, Declared> { static constexpr int value = A; };
template <int A, class S, class T, class Declared> struct column_min_arch<arch_floor<A, S>, T, Declared> {
  static constexpr int value = in_dtype_set_v<resolve_dtypes_t<S, Declared>, T> ? A : 0;
};
template <class... F, class T, class Declared> struct column_min_arch<arch_floors<F...>, T, Declared> {
  static constexpr int value = [] {
    int m = 0;
    ((m = column_min_arch<F, T, Declared>::value > m ? column_min_arch<F, T, Declared>::value : m), ...);
    return m;
  }();
};
} // namespace detail

/// The compute capability a table's architecture column asks of dtype T (0: none), for an op declaring Declared.
template <class Column, class T, class Declared>
inline constexpr int column_min_arch_v = detail::column_min_arch<Column, T, Declared>::value;

/// One row of a backend's table: Op (written with dtype_parameter where it depends on the dtype), the row's
/// dtype column as written (`declared + half_floats`), the implementation, the backend and the architecture
/// column (any_arch on the host).
template <class Op, class DtypesExpr, class Implementation, class Backend, class ArchColumn = any_arch_t> struct registry_row {
  /// The op tag for dtype T.
  template <class T> using op_for = typename detail::substitute_dtype<Op, T>::type;
  /// The dtypes the row registers, resolved against the op's declared set.
  using dtypes = resolve_dtypes_t<DtypesExpr, declared_dtypes_t<Op>>;
  using implementation = Implementation;  ///< What runs.
  using backend = Backend;                ///< Where.
  /// The oldest compute capability the row's kernel for dtype T runs on (0: any).
  template <class T> static constexpr int min_arch = column_min_arch_v<ArchColumn, T, declared_dtypes_t<Op>>;
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

/// Expands one table row with an architecture column into the kernel specialisation, whose `min_arch` is the
/// oldest compute capability it runs on for T.
#define TEXPR_REGISTRY_SPECIALISATION_ARCH(BACKEND, NS, OP, DTYPES, IMPL, ARCH)                               \
  template <class T>                                                                                          \
    requires in_dtype_set_v<resolve_dtypes_t<std::remove_cvref_t<decltype(DTYPES)>,                           \
                                             declared_dtypes_t<op::OP>>, T>                                   \
  struct kernel<op::OP, T, BACKEND> : NS::IMPL {                                                              \
    static constexpr int min_arch =                                                                           \
        column_min_arch_v<std::remove_cvref_t<decltype(ARCH)>, T, declared_dtypes_t<op::OP>>;                 \
  };

/// Expands one table row into its registry_row (where the rows are listed, T names dtype_parameter).
#define TEXPR_REGISTRY_ROW_TYPE(BACKEND, NS, OP, DTYPES, IMPL) \
  registry_row<op::OP, std::remove_cvref_t<decltype(DTYPES)>, NS::IMPL, BACKEND>,

/// Expands one table row with an architecture column into its registry_row.
#define TEXPR_REGISTRY_ROW_TYPE_ARCH(BACKEND, NS, OP, DTYPES, IMPL, ARCH) \
  registry_row<op::OP, std::remove_cvref_t<decltype(DTYPES)>, NS::IMPL, BACKEND, std::remove_cvref_t<decltype(ARCH)>>,

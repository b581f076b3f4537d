// The kernel registry's primary template and the predicates over it.
#pragma once

#include <concepts>
#include <string_view>
#include <type_traits>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"

namespace texpr {

/// One specialisation per (op, dtype, backend) that really runs; declared, never defined in general.
/// A specialisation holds `static constexpr std::string_view name`, the kernel shown by tx::placement.
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

/// One row of a built-in registry table.
template <class Op, class T, class Backend>
struct registry_entry {
  using op_type = Op;          ///< Op tag.
  using value_type = T;        ///< dtype.
  using backend = Backend;     ///< Backend tag.
};

} // namespace texpr

/// Expands one registry table line into the kernel specialisation.
#define TEXPR_REGISTER_KERNEL(BACKEND, OP, T, KERNEL)                   \
  template <> struct kernel<op::OP, T, BACKEND> {                       \
    static constexpr std::string_view name = #KERNEL;                   \
  };

// Generator op tags: values computed from the element index, fused into whatever reads them (no memory). Each has
// a `source<T>`, the device-copyable function of the element's row-major index that strided accessors read.
#pragma once

#include <cstdint>
#include <string_view>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/detail/math.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// start, start + step, start + 2 step, ... (NumPy's arange); integers wrap around, floats compute in double.
struct arange {
  static constexpr std::string_view name = "arange";  ///< Shown by tx::placement.
  static constexpr kind category = kind::generator;   ///< Computed from the index.
  static constexpr auto dtypes = numeric;              ///< Defined on.
  /// Element i: start + i * step.
  template <class T> struct source {
    using value_type = T;
    static constexpr bool is_memory = false;
    using step_t = std::conditional_t<is_floating_v<T>, double, T>;
    step_t start, step;
    TEXPR_HOST_DEVICE T operator()(index_t i) const {
      if constexpr (is_floating_v<T>) return detail::narrow<T>(start + static_cast<double>(i) * step);
      else return detail::wrap_add(start, detail::wrap_mul(static_cast<T>(i), step));
    }
  };
};

} // namespace texpr::op

// The matmul op tag.
#pragma once

#include <string_view>

namespace texpr::op {

/// Matrix product: (m, k) x (k, n), or batched with a leading batch dimension on either side.
struct matmul { static constexpr std::string_view name = "matmul"; };

} // namespace texpr::op

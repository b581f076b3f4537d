// The host kernel registry: one line per (op, dtype) that runs on the CPU. Read it as a table.
// The support matrix in docs/support_matrix.md and README.md is generated from this table.
#pragma once

#include <cstdint>

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/detail/type_list.hpp"
#include "texpr/op/elementwise.hpp"
#include "texpr/op/matmul.hpp"
#include "texpr/op/reduction.hpp"
#include "texpr/registry/kernel.hpp"

// clang-format off
/// The host table. Columns: op tag (in texpr::op), dtype, kernel (the implementation placement reports).
/// Integer mean is deliberately absent: cast to a floating dtype first (no implicit promotion).
#define TEXPR_HOST_REGISTRY(X) \
  X(add,                        float,         fused_elementwise) \
  X(add,                        double,        fused_elementwise) \
  X(add,                        std::int32_t,  fused_elementwise) \
  X(add,                        std::int64_t,  fused_elementwise) \
  X(subtract,                   float,         fused_elementwise) \
  X(subtract,                   double,        fused_elementwise) \
  X(subtract,                   std::int32_t,  fused_elementwise) \
  X(subtract,                   std::int64_t,  fused_elementwise) \
  X(multiply,                   float,         fused_elementwise) \
  X(multiply,                   double,        fused_elementwise) \
  X(multiply,                   std::int32_t,  fused_elementwise) \
  X(multiply,                   std::int64_t,  fused_elementwise) \
  X(divide,                     float,         fused_elementwise) \
  X(divide,                     double,        fused_elementwise) \
  X(divide,                     std::int32_t,  fused_elementwise) \
  X(divide,                     std::int64_t,  fused_elementwise) \
  X(maximum,                    float,         fused_elementwise) \
  X(maximum,                    double,        fused_elementwise) \
  X(maximum,                    std::int32_t,  fused_elementwise) \
  X(maximum,                    std::int64_t,  fused_elementwise) \
  X(minimum,                    float,         fused_elementwise) \
  X(minimum,                    double,        fused_elementwise) \
  X(minimum,                    std::int32_t,  fused_elementwise) \
  X(minimum,                    std::int64_t,  fused_elementwise) \
  X(pow,                        float,         fused_elementwise) \
  X(pow,                        double,        fused_elementwise) \
  X(elu,                        float,         fused_elementwise) \
  X(elu,                        double,        fused_elementwise) \
  X(exp,                        float,         fused_elementwise) \
  X(exp,                        double,        fused_elementwise) \
  X(log,                        float,         fused_elementwise) \
  X(log,                        double,        fused_elementwise) \
  X(sqrt,                       float,         fused_elementwise) \
  X(sqrt,                       double,        fused_elementwise) \
  X(tanh,                       float,         fused_elementwise) \
  X(tanh,                       double,        fused_elementwise) \
  X(sigmoid,                    float,         fused_elementwise) \
  X(sigmoid,                    double,        fused_elementwise) \
  X(negate,                     float,         fused_elementwise) \
  X(negate,                     double,        fused_elementwise) \
  X(negate,                     std::int32_t,  fused_elementwise) \
  X(negate,                     std::int64_t,  fused_elementwise) \
  X(abs,                        float,         fused_elementwise) \
  X(abs,                        double,        fused_elementwise) \
  X(abs,                        std::int32_t,  fused_elementwise) \
  X(abs,                        std::int64_t,  fused_elementwise) \
  X(relu,                       float,         fused_elementwise) \
  X(relu,                       double,        fused_elementwise) \
  X(relu,                       std::int32_t,  fused_elementwise) \
  X(relu,                       std::int64_t,  fused_elementwise) \
  X(equal,                      float,         fused_elementwise) \
  X(equal,                      double,        fused_elementwise) \
  X(equal,                      std::int32_t,  fused_elementwise) \
  X(equal,                      std::int64_t,  fused_elementwise) \
  X(equal,                      bool,          fused_elementwise) \
  X(not_equal,                  float,         fused_elementwise) \
  X(not_equal,                  double,        fused_elementwise) \
  X(not_equal,                  std::int32_t,  fused_elementwise) \
  X(not_equal,                  std::int64_t,  fused_elementwise) \
  X(not_equal,                  bool,          fused_elementwise) \
  X(less,                       float,         fused_elementwise) \
  X(less,                       double,        fused_elementwise) \
  X(less,                       std::int32_t,  fused_elementwise) \
  X(less,                       std::int64_t,  fused_elementwise) \
  X(less_equal,                 float,         fused_elementwise) \
  X(less_equal,                 double,        fused_elementwise) \
  X(less_equal,                 std::int32_t,  fused_elementwise) \
  X(less_equal,                 std::int64_t,  fused_elementwise) \
  X(greater,                    float,         fused_elementwise) \
  X(greater,                    double,        fused_elementwise) \
  X(greater,                    std::int32_t,  fused_elementwise) \
  X(greater,                    std::int64_t,  fused_elementwise) \
  X(greater_equal,              float,         fused_elementwise) \
  X(greater_equal,              double,        fused_elementwise) \
  X(greater_equal,              std::int32_t,  fused_elementwise) \
  X(greater_equal,              std::int64_t,  fused_elementwise) \
  X(logical_and,                bool,          fused_elementwise) \
  X(logical_or,                 bool,          fused_elementwise) \
  X(logical_not,                bool,          fused_elementwise) \
  X(where,                      float,         fused_elementwise) \
  X(where,                      double,        fused_elementwise) \
  X(where,                      std::int32_t,  fused_elementwise) \
  X(where,                      std::int64_t,  fused_elementwise) \
  X(where,                      bool,          fused_elementwise) \
  X(cast<float>,                float,         fused_elementwise) \
  X(cast<double>,               double,        fused_elementwise) \
  X(cast<std::int32_t>,         std::int32_t,  fused_elementwise) \
  X(cast<std::int64_t>,         std::int64_t,  fused_elementwise) \
  X(cast<bool>,                 bool,          fused_elementwise) \
  X(cast<half>,                 half,          fused_elementwise) \
  X(cast<bfloat16>,             bfloat16,      fused_elementwise) \
  X(sum,                        float,         pairwise_reduce) \
  X(sum,                        double,        pairwise_reduce) \
  X(sum,                        std::int32_t,  pairwise_reduce) \
  X(sum,                        std::int64_t,  pairwise_reduce) \
  X(prod,                       float,         pairwise_reduce) \
  X(prod,                       double,        pairwise_reduce) \
  X(prod,                       std::int32_t,  pairwise_reduce) \
  X(prod,                       std::int64_t,  pairwise_reduce) \
  X(max,                        float,         pairwise_reduce) \
  X(max,                        double,        pairwise_reduce) \
  X(max,                        std::int32_t,  pairwise_reduce) \
  X(max,                        std::int64_t,  pairwise_reduce) \
  X(min,                        float,         pairwise_reduce) \
  X(min,                        double,        pairwise_reduce) \
  X(min,                        std::int32_t,  pairwise_reduce) \
  X(min,                        std::int64_t,  pairwise_reduce) \
  X(mean,                       float,         pairwise_reduce) \
  X(mean,                       double,        pairwise_reduce) \
  X(matmul,                     float,         blocked_gemm) \
  X(matmul,                     double,        blocked_gemm) \
  X(matmul,                     std::int32_t,  blocked_gemm) \
  X(matmul,                     std::int64_t,  blocked_gemm)
// clang-format on

namespace texpr {

#define TEXPR_HOST_LINE(OP, T, KERNEL) TEXPR_REGISTER_KERNEL(host, OP, T, KERNEL)
TEXPR_HOST_REGISTRY(TEXPR_HOST_LINE)
#undef TEXPR_HOST_LINE

/// Every built-in host registry row, in table order (tests and the support matrix enumerate it).
#define TEXPR_HOST_ENTRY(OP, T, KERNEL) registry_entry<op::OP, T, host>,
using host_registry = detail::strip_void_t<detail::type_list<TEXPR_HOST_REGISTRY(TEXPR_HOST_ENTRY) void>>;
#undef TEXPR_HOST_ENTRY

} // namespace texpr

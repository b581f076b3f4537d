// The cuda kernel registry: one line per (op, dtype) that runs on the GPU. Read it as a table.
// It needs no CUDA headers, so any compiler can check placement; kernels compile only under nvcc.
// 16-bit floats compute and accumulate in float. Integer matmul and integer mean have no cuda kernel.
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
/// The cuda table. Columns: op tag (in texpr::op), dtype, kernel (the implementation placement reports).
#define TEXPR_CUDA_REGISTRY(X) \
  X(add,                        float,         fused_elementwise) \
  X(add,                        double,        fused_elementwise) \
  X(add,                        half,          fused_elementwise) \
  X(add,                        bfloat16,      fused_elementwise) \
  X(add,                        std::int32_t,  fused_elementwise) \
  X(add,                        std::int64_t,  fused_elementwise) \
  X(subtract,                   float,         fused_elementwise) \
  X(subtract,                   double,        fused_elementwise) \
  X(subtract,                   half,          fused_elementwise) \
  X(subtract,                   bfloat16,      fused_elementwise) \
  X(subtract,                   std::int32_t,  fused_elementwise) \
  X(subtract,                   std::int64_t,  fused_elementwise) \
  X(multiply,                   float,         fused_elementwise) \
  X(multiply,                   double,        fused_elementwise) \
  X(multiply,                   half,          fused_elementwise) \
  X(multiply,                   bfloat16,      fused_elementwise) \
  X(multiply,                   std::int32_t,  fused_elementwise) \
  X(multiply,                   std::int64_t,  fused_elementwise) \
  X(divide,                     float,         fused_elementwise) \
  X(divide,                     double,        fused_elementwise) \
  X(divide,                     half,          fused_elementwise) \
  X(divide,                     bfloat16,      fused_elementwise) \
  X(divide,                     std::int32_t,  fused_elementwise) \
  X(divide,                     std::int64_t,  fused_elementwise) \
  X(maximum,                    float,         fused_elementwise) \
  X(maximum,                    double,        fused_elementwise) \
  X(maximum,                    half,          fused_elementwise) \
  X(maximum,                    bfloat16,      fused_elementwise) \
  X(maximum,                    std::int32_t,  fused_elementwise) \
  X(maximum,                    std::int64_t,  fused_elementwise) \
  X(minimum,                    float,         fused_elementwise) \
  X(minimum,                    double,        fused_elementwise) \
  X(minimum,                    half,          fused_elementwise) \
  X(minimum,                    bfloat16,      fused_elementwise) \
  X(minimum,                    std::int32_t,  fused_elementwise) \
  X(minimum,                    std::int64_t,  fused_elementwise) \
  X(pow,                        float,         fused_elementwise) \
  X(pow,                        double,        fused_elementwise) \
  X(pow,                        half,          fused_elementwise) \
  X(pow,                        bfloat16,      fused_elementwise) \
  X(elu,                        float,         fused_elementwise) \
  X(elu,                        double,        fused_elementwise) \
  X(elu,                        half,          fused_elementwise) \
  X(elu,                        bfloat16,      fused_elementwise) \
  X(exp,                        float,         fused_elementwise) \
  X(exp,                        double,        fused_elementwise) \
  X(exp,                        half,          fused_elementwise) \
  X(exp,                        bfloat16,      fused_elementwise) \
  X(log,                        float,         fused_elementwise) \
  X(log,                        double,        fused_elementwise) \
  X(log,                        half,          fused_elementwise) \
  X(log,                        bfloat16,      fused_elementwise) \
  X(sqrt,                       float,         fused_elementwise) \
  X(sqrt,                       double,        fused_elementwise) \
  X(sqrt,                       half,          fused_elementwise) \
  X(sqrt,                       bfloat16,      fused_elementwise) \
  X(tanh,                       float,         fused_elementwise) \
  X(tanh,                       double,        fused_elementwise) \
  X(tanh,                       half,          fused_elementwise) \
  X(tanh,                       bfloat16,      fused_elementwise) \
  X(sigmoid,                    float,         fused_elementwise) \
  X(sigmoid,                    double,        fused_elementwise) \
  X(sigmoid,                    half,          fused_elementwise) \
  X(sigmoid,                    bfloat16,      fused_elementwise) \
  X(negate,                     float,         fused_elementwise) \
  X(negate,                     double,        fused_elementwise) \
  X(negate,                     half,          fused_elementwise) \
  X(negate,                     bfloat16,      fused_elementwise) \
  X(negate,                     std::int32_t,  fused_elementwise) \
  X(negate,                     std::int64_t,  fused_elementwise) \
  X(abs,                        float,         fused_elementwise) \
  X(abs,                        double,        fused_elementwise) \
  X(abs,                        half,          fused_elementwise) \
  X(abs,                        bfloat16,      fused_elementwise) \
  X(abs,                        std::int32_t,  fused_elementwise) \
  X(abs,                        std::int64_t,  fused_elementwise) \
  X(relu,                       float,         fused_elementwise) \
  X(relu,                       double,        fused_elementwise) \
  X(relu,                       half,          fused_elementwise) \
  X(relu,                       bfloat16,      fused_elementwise) \
  X(relu,                       std::int32_t,  fused_elementwise) \
  X(relu,                       std::int64_t,  fused_elementwise) \
  X(equal,                      float,         fused_elementwise) \
  X(equal,                      double,        fused_elementwise) \
  X(equal,                      half,          fused_elementwise) \
  X(equal,                      bfloat16,      fused_elementwise) \
  X(equal,                      std::int32_t,  fused_elementwise) \
  X(equal,                      std::int64_t,  fused_elementwise) \
  X(equal,                      bool,          fused_elementwise) \
  X(not_equal,                  float,         fused_elementwise) \
  X(not_equal,                  double,        fused_elementwise) \
  X(not_equal,                  half,          fused_elementwise) \
  X(not_equal,                  bfloat16,      fused_elementwise) \
  X(not_equal,                  std::int32_t,  fused_elementwise) \
  X(not_equal,                  std::int64_t,  fused_elementwise) \
  X(not_equal,                  bool,          fused_elementwise) \
  X(less,                       float,         fused_elementwise) \
  X(less,                       double,        fused_elementwise) \
  X(less,                       half,          fused_elementwise) \
  X(less,                       bfloat16,      fused_elementwise) \
  X(less,                       std::int32_t,  fused_elementwise) \
  X(less,                       std::int64_t,  fused_elementwise) \
  X(less_equal,                 float,         fused_elementwise) \
  X(less_equal,                 double,        fused_elementwise) \
  X(less_equal,                 half,          fused_elementwise) \
  X(less_equal,                 bfloat16,      fused_elementwise) \
  X(less_equal,                 std::int32_t,  fused_elementwise) \
  X(less_equal,                 std::int64_t,  fused_elementwise) \
  X(greater,                    float,         fused_elementwise) \
  X(greater,                    double,        fused_elementwise) \
  X(greater,                    half,          fused_elementwise) \
  X(greater,                    bfloat16,      fused_elementwise) \
  X(greater,                    std::int32_t,  fused_elementwise) \
  X(greater,                    std::int64_t,  fused_elementwise) \
  X(greater_equal,              float,         fused_elementwise) \
  X(greater_equal,              double,        fused_elementwise) \
  X(greater_equal,              half,          fused_elementwise) \
  X(greater_equal,              bfloat16,      fused_elementwise) \
  X(greater_equal,              std::int32_t,  fused_elementwise) \
  X(greater_equal,              std::int64_t,  fused_elementwise) \
  X(logical_and,                bool,          fused_elementwise) \
  X(logical_or,                 bool,          fused_elementwise) \
  X(logical_not,                bool,          fused_elementwise) \
  X(where,                      float,         fused_elementwise) \
  X(where,                      double,        fused_elementwise) \
  X(where,                      half,          fused_elementwise) \
  X(where,                      bfloat16,      fused_elementwise) \
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
  X(sum,                        float,         cub_reduce) \
  X(sum,                        double,        cub_reduce) \
  X(sum,                        half,          cub_reduce) \
  X(sum,                        bfloat16,      cub_reduce) \
  X(sum,                        std::int32_t,  cub_reduce) \
  X(sum,                        std::int64_t,  cub_reduce) \
  X(prod,                       float,         cub_reduce) \
  X(prod,                       double,        cub_reduce) \
  X(prod,                       half,          cub_reduce) \
  X(prod,                       bfloat16,      cub_reduce) \
  X(prod,                       std::int32_t,  cub_reduce) \
  X(prod,                       std::int64_t,  cub_reduce) \
  X(max,                        float,         cub_reduce) \
  X(max,                        double,        cub_reduce) \
  X(max,                        half,          cub_reduce) \
  X(max,                        bfloat16,      cub_reduce) \
  X(max,                        std::int32_t,  cub_reduce) \
  X(max,                        std::int64_t,  cub_reduce) \
  X(min,                        float,         cub_reduce) \
  X(min,                        double,        cub_reduce) \
  X(min,                        half,          cub_reduce) \
  X(min,                        bfloat16,      cub_reduce) \
  X(min,                        std::int32_t,  cub_reduce) \
  X(min,                        std::int64_t,  cub_reduce) \
  X(mean,                       float,         cub_reduce) \
  X(mean,                       double,        cub_reduce) \
  X(mean,                       half,          cub_reduce) \
  X(mean,                       bfloat16,      cub_reduce) \
  X(matmul,                     float,         cublas_gemm) \
  X(matmul,                     double,        cublas_gemm) \
  X(matmul,                     half,          cublas_gemm) \
  X(matmul,                     bfloat16,      cublas_gemm)
// clang-format on

namespace texpr {

#define TEXPR_CUDA_LINE(OP, T, KERNEL) TEXPR_REGISTER_KERNEL(cuda, OP, T, KERNEL)
TEXPR_CUDA_REGISTRY(TEXPR_CUDA_LINE)
#undef TEXPR_CUDA_LINE

/// Every built-in cuda registry row, in table order (tests and the support matrix enumerate it).
#define TEXPR_CUDA_ENTRY(OP, T, KERNEL) registry_entry<op::OP, T, cuda>,
using cuda_registry = detail::strip_void_t<detail::type_list<TEXPR_CUDA_REGISTRY(TEXPR_CUDA_ENTRY) void>>;
#undef TEXPR_CUDA_ENTRY

} // namespace texpr

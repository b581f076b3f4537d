// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda registry, one part: the checks of tests/core/registry_checks.hpp (the host suite's) run on the device for
// the rows of this part. Part 0 holds the elementwise chains (every elementwise row, one fused kernel per dtype);
// the other rows (casts, copies, layouts, reductions, matmul) are dealt to the parts by index, so the parts compile
// in parallel. CMake compiles this file once per part, defining TEXPR_CUDA_REGISTRY_PART.
#include "cuda/support.cuh"

#include "core/registry_checks.hpp"

#ifndef TEXPR_CUDA_REGISTRY_PART
#error "tests/cuda/CMakeLists.txt defines TEXPR_CUDA_REGISTRY_PART for each copy of this unit"
#endif

namespace {
constexpr std::size_t parts = TEXPR_CUDA_REGISTRY_PARTS;
constexpr std::size_t part = TEXPR_CUDA_REGISTRY_PART;
// Index 0 is the chains; row i of the table is index i + 1 and goes to part (i % (parts - 1)) + 1.
constexpr bool mine(std::size_t index) { return index == 0 ? part == 0 : part != 0 && (index - 1) % (parts - 1) + 1 == part; }
} // namespace

TEST_CASE("cuda registry part " DOCTEST_TOSTR(TEXPR_CUDA_REGISTRY_PART) ": its rows pass on the device") {
  const std::size_t checked = regcheck::check_rows<tx::cuda, tx::cuda_rows>([](std::size_t i) { return mine(i); });
  // The parts together check every entry: part p's share is counted independently here.
  std::size_t expected = 0;
  tx::detail::for_each_indexed(tx::cuda_rows{}, [&]<class Row, std::size_t I>() {
    std::size_t n = 0;  // the row's entries this build's architectures run (bfloat16 matmul needs sm_80)
    tx::detail::for_each_type(typename tx::detail::set_list<typename Row::dtypes>::type{}, [&]<class T>() {
      n += tx::has_kernel_for<typename Row::template op_for<T>, T, tx::cuda> ? 1 : 0;
    });
    const bool chained = regcheck::is_chained<typename Row::template op_for<float>>;
    if (chained ? part == 0 : mine(I + 1)) expected += n;
  });
  CHECK(checked == expected);
  CHECK(checked > 0);
}

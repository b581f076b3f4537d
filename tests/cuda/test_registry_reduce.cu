// Cuda registry, reductions and matmul: every such line on the device, reductions over everything and along
// every axis of rank 1-3 inputs, matmul plain and batched (see registry_checks.cuh).
#include "cuda/registry_checks.cuh"

TEST_CASE("every reduction and matmul line of the cuda registry has a passing numeric test on the device") {
  const std::size_t tested = cutest::check_registry_part<false>();
  CHECK(tested == cutest::registry_part_size<false>());
  CHECK(tested == 32);  // 5 reductions x 6 dtypes, less integer mean (2), plus 4 matmul dtypes
}

// Cuda registry, elementwise half: every elementwise, where and cast line on the device (see registry_checks.cuh).
#include "cuda/registry_checks.cuh"

TEST_CASE("every elementwise line of the cuda registry has a passing numeric test on the device") {
  const std::size_t tested = cutest::check_registry_part<true>();
  CHECK(tested == cutest::registry_part_size<true>());
  CHECK(tested > 120);
}

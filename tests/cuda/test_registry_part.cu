// Cuda registry, one part: every line i of the cuda table with i % registry_parts == TEXPR_CUDA_REGISTRY_PART
// runs on the device against the host backend or the long double reference (see registry_checks.cuh).
// CMake compiles this file once per part, defining the part (tests/cuda/CMakeLists.txt).
#include "cuda/registry_checks.cuh"

#ifndef TEXPR_CUDA_REGISTRY_PART
#error "tests/cuda/CMakeLists.txt defines TEXPR_CUDA_REGISTRY_PART for each copy of this unit"
#endif

TEST_CASE("cuda registry part " DOCTEST_TOSTR(TEXPR_CUDA_REGISTRY_PART) ": every line of this part passes on the device") {
  constexpr std::size_t part = TEXPR_CUDA_REGISTRY_PART;
  const std::size_t tested = cutest::check_registry_part<part>();
  CHECK(tested == cutest::registry_part_size<part>());
  CHECK(tested > 0);
}

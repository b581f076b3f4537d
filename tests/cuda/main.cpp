// doctest main for the CUDA test program: with no usable device it reports itself skipped (exit 77, CTest's
// SKIP_RETURN_CODE) instead of failing, so CI can build every CUDA test without a GPU.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime.h>

#include <cstdio>

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA device (cudaGetDeviceCount: %s)\n",
                e != cudaSuccess ? cudaGetErrorName(e) : "0 devices");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

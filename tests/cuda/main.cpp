// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest main for the CUDA test program. It skips (exit 77, CTest's SKIP_RETURN_CODE) only where there is no
// GPU to test: no CUDA driver installed (CI) or a driver that sees no device. Any other failure to reach the device,
// a driver older than the runtime on a GPU machine included, fails loudly with the error's name.

#include <doctest/doctest.h>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdio>

namespace {

// True when the CUDA driver library can be loaded. Without it, cudaGetDeviceCount reports
// cudaErrorInsufficientDriver, the same status as a driver too old for this runtime; only the first means "no GPU".
bool driver_installed() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return false;
  dlclose(lib);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e == cudaErrorNoDevice || (e == cudaSuccess && devices == 0)) {
    std::printf("SKIPPED: the CUDA driver sees no device (cudaGetDeviceCount: %s)\n",
                e == cudaSuccess ? "0 devices" : cudaGetErrorName(e));
    return 77;
  }
  if (e == cudaErrorInsufficientDriver && !driver_installed()) {
    std::printf("SKIPPED: no CUDA driver on this machine (libcuda.so.1 not found; cudaGetDeviceCount: %s)\n",
                cudaGetErrorName(e));
    return 77;
  }
  if (e != cudaSuccess) {
    std::printf("FAILED: cannot reach the GPU: cudaGetDeviceCount returned %s (%s)\n", cudaGetErrorName(e),
                cudaGetErrorString(e));
    return 1;
  }
  doctest::Context context(argc, argv);
  return context.run();
}

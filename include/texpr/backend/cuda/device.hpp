// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::cuda_device_info and tx::cuda_device_available: what the current GPU is, asked at run time.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "texpr/backend/cuda/error.hpp"

namespace texpr {

/// Properties of one CUDA device that matter when choosing dtypes (e.g. whether to forbid double).
struct cuda_device_properties {
  int device = 0;                 ///< Device ordinal.
  std::string name;               ///< Marketing name, e.g. "NVIDIA H200".
  int major = 0;                  ///< Compute capability, major part.
  int minor = 0;                  ///< Compute capability, minor part.
  std::size_t total_memory = 0;   ///< Global memory in bytes.
  int multiprocessors = 0;        ///< Number of SMs.
  int fp32_to_fp64_ratio = 0;     ///< cudaDevAttrSingleToDoublePrecisionPerfRatio (2 on H100/H200, 64 on gaming GPUs).
  bool fp64_full_rate = false;    ///< True when FP64 runs at half the FP32 rate or better (ratio <= 2).
};

/// Number of usable CUDA devices; 0 (never an exception) when there is no device or no driver.
inline int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

/// True when at least one CUDA device is usable.
inline bool cuda_device_available() noexcept { return cuda_device_count() > 0; }

/// Empty when a device is usable, else why not, e.g. "cudaGetDeviceCount: cudaErrorNoDevice (no CUDA-capable device is detected)".
inline std::string cuda_unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  if (n == 0) return "cudaGetDeviceCount: 0 devices";
  return {};
}

/// Properties of `device` (default: the current device); throws cuda_error when there is none.
inline cuda_device_properties cuda_device_info(int device = -1) {
  if (device < 0) TEXPR_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  TEXPR_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  cuda_device_properties info;
  info.device = device;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.total_memory = prop.totalGlobalMem;
  info.multiprocessors = prop.multiProcessorCount;
  TEXPR_CUDA_CHECK(cudaDeviceGetAttribute(&info.fp32_to_fp64_ratio, cudaDevAttrSingleToDoublePrecisionPerfRatio, device));
  info.fp64_full_rate = info.fp32_to_fp64_ratio > 0 && info.fp32_to_fp64_ratio <= 2;
  return info;
}

} // namespace texpr

#endif // __CUDACC__

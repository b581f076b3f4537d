// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::cuda_error and TEXPR_CUDA_CHECK: every CUDA runtime and cuBLAS status is checked, in every build mode.
#pragma once

#if defined(__CUDACC__)

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace texpr {

/// Thrown when a CUDA runtime or cuBLAS call fails; what() names the call, the status and file:line.
class cuda_error : public std::runtime_error {
 public:
  /// Builds the message "texpr: CUDA call `call` failed with status at file:line".
  cuda_error(std::string call, std::string status, std::string file, int line, int code)
      : std::runtime_error("texpr: CUDA call `" + call + "` failed with " + status + " at " + file + ":" +
                           std::to_string(line)),
        call_(std::move(call)), status_(std::move(status)), file_(std::move(file)), line_(line), code_(code) {}
  /// The failing call, as written in the source.
  const std::string& call() const noexcept { return call_; }
  /// The status name and description, e.g. "cudaErrorMemoryAllocation (out of memory)".
  const std::string& status() const noexcept { return status_; }
  /// Source file of the failing call.
  const std::string& file() const noexcept { return file_; }
  /// Source line of the failing call.
  int line() const noexcept { return line_; }
  /// The raw cudaError_t or cublasStatus_t value.
  int code() const noexcept { return code_; }

 private:
  std::string call_, status_, file_;
  int line_;
  int code_;
};

namespace detail {

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  // Clear the runtime's last-error slot: a recoverable failure (out of memory) must not resurface at the
  // next kernel launch check. Sticky errors stay sticky whatever we do.
  (void)cudaGetLastError();
  throw cuda_error(call, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")", file, line,
                   static_cast<int>(e));
}

inline void cuda_check(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw cuda_error(call, std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")", file, line,
                   static_cast<int>(s));
}

} // namespace detail
} // namespace texpr

/// Checks a cudaError_t or cublasStatus_t expression; throws tx::cuda_error on failure. Never compiled out.
#define TEXPR_CUDA_CHECK(...) ::texpr::detail::cuda_check((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)

/// Checks the launch of the kernel just enqueued (bad configuration, missing image for this GPU, ...).
#define TEXPR_CUDA_CHECK_LAUNCH() TEXPR_CUDA_CHECK(cudaGetLastError())

#endif // __CUDACC__

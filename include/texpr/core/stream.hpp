// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The stream handle type, spelled without CUDA headers so every compiler sees the same signatures.
#pragma once

struct CUstream_st;  // cudaStream_t is `CUstream_st*` in the CUDA runtime headers.

namespace texpr {

/// A CUDA stream (same type as cudaStream_t); nullptr means the default stream. Ignored on host.
using stream_t = CUstream_st*;

} // namespace texpr

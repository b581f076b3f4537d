// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fused GEMM epilogues: whether a backend can apply an elementwise tree to a matmul's output tiles as the GEMM
// finishes them (elu(x w + b) without writing and re-reading x w). A backend that can specialises fused_epilogue.
#pragma once

namespace texpr {

/// Backend's fused-epilogue implementation: `available`, and when true, `impl` (with a static `name` for
/// tx::placement and `run(node, dest, ctx)`, called when detail::dispatch_of (placement/dispatch.hpp) chose it).
template <class Backend> struct fused_epilogue {
  static constexpr bool available = false;  ///< No fused epilogue on this backend: separate passes.
};

} // namespace texpr

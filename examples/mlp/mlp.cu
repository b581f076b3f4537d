// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA build of the MLP example: the same source, compiled by nvcc, trains on the GPU.
#include "mlp.cpp"

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr_standin: what a program linked against the CUDA stand-in (instead of libcudart and libcublas) asked the
// GPU to do: kernel launches by name, cuBLAS GEMMs, cuSOLVER calls, allocations, copies, memsets and host synchronisations.
// Use: build the test with nvcc, link texpr_cuda_standin and set CUDA_RUNTIME_LIBRARY None; then
//   texpr_standin::scope s;  /* run cuda code */  const auto r = s.taken();  CHECK(r.gemms.size() == 1);
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace texpr_standin {

/// A grid or block extent, as the launch passed it.
struct extent3 {
  unsigned x = 1, y = 1, z = 1;
};

/// One kernel launch (nothing ran).
struct launch {
  std::string kernel;            ///< Demangled device-function name, "<unregistered>" for an unknown host stub.
  extent3 grid;                  ///< Grid of the launch.
  extent3 block;                 ///< Block of the launch.
  std::size_t shared_bytes = 0;  ///< Dynamic shared memory.
  const void* stream = nullptr;  ///< The stream it was enqueued on (nullptr: the legacy default stream).
  std::size_t order = 0;         ///< Position among all launches and GEMMs since the program started.
};

/// One cuBLAS GEMM call, in cuBLAS's column-major terms: texpr's row-major C (rows x cols) = A B is the call
/// m = cols, n = rows (it computes C^T = B^T A^T).
struct gemm {
  int m = 0;                     ///< Rows of cuBLAS's op(A) and C.
  int n = 0;                     ///< Columns of cuBLAS's op(B) and C.
  int k = 0;                     ///< The summed dimension.
  int batch = 1;                 ///< Batch count (1 for a plain GEMM).
  int transa = 0;                ///< cublasOperation_t of cuBLAS's A (0: N, 1: T, 2: C).
  int transb = 0;                ///< cublasOperation_t of cuBLAS's B.
  int a_type = 0;                ///< cudaDataType_t of A (0: CUDA_R_32F).
  int b_type = 0;                ///< cudaDataType_t of B.
  int c_type = 0;                ///< cudaDataType_t of C.
  int compute_type = 0;          ///< cublasComputeType_t (68: CUBLAS_COMPUTE_32F), or the legacy cudaDataType_t.
  const void* stream = nullptr;  ///< The stream the handle was set to.
  std::size_t order = 0;         ///< Position among all launches and GEMMs since the program started.
  std::size_t workspace = 0;     ///< Bytes of the workspace set on the handle (0: cuBLAS's own pool).
};

/// One cuSOLVER dense call, or one cuBLAS trsm (its data are not touched: no factorisation runs; info is written, see
/// fail_solver_call). Fields a call does not take stay at their defaults.
struct solver_call {
  std::string function;          ///< The entry point, e.g. "cusolverDnXpotrf" or "cusolverDnXpotrf_bufferSize".
  long long n = 0;               ///< The matrix order (getrf, geqrf, orgqr: its columns).
  long long m = 0;               ///< geqrf, orgqr and gesvd: the matrix's rows; 0 for the others.
  long long k = 0;               ///< orgqr: the reflectors; 0 for the others.
  long long lwork = 0;           ///< orgqr (legacy API): the workspace in elements passed (0 for the size query).
  int uplo = 0;                  ///< cublasFillMode_t (0: lower, 1: upper) of potrf, syevd and trsm; 0 for the others.
  int type = 0;                  ///< cudaDataType_t of A (0: CUDA_R_32F, 1: CUDA_R_64F).
  int trans = 0;                 ///< getrs and trsm: cublasOperation_t of A (0: N, 1: T); 0 for the others.
  long long nrhs = 0;            ///< getrs and trsm: the right-hand sides; 0 for the others.
  int side = 0;                  ///< trsm: cublasSideMode_t (0: left, 1: right); 0 for the others.
  long long lda = 0;             ///< trsm: A's leading dimension; 0 for the others.
  long long ldb = 0;             ///< trsm: B's leading dimension; 0 for the others.
  int jobz = 0;                  ///< syevd: cusolverEigMode_t (0: eigenvalues only, 1: and eigenvectors).
  char jobu = 0;                 ///< gesvd: 'N', 'S' or 'A' (U's columns: none, min(m, n), m); 0 for the others.
  char jobvt = 0;                ///< gesvd: the same for Vᵀ's rows; 0 for the others.
  long long ldu = 0;             ///< gesvd: U's leading dimension; 0 for the others.
  bool vectors = false;          ///< gesvd: U and VT were passed (non-null).
  bool pivots = false;           ///< getrf and getrs: a pivot array was passed (null: no pivoting).
  const void* stream = nullptr;  ///< The stream the handle was set to.
  std::size_t workspace = 0;     ///< Bytes of the device workspace passed (0 for the size query).
  const void* handle = nullptr;  ///< The cusolverDn handle (trsm: the cuBLAS handle).
  std::size_t order = 0;         ///< Position among all launches, GEMMs and solver calls since the program started.
};

/// One device allocation (cudaMalloc or cudaMallocAsync).
struct allocation {
  std::size_t bytes = 0;        ///< Requested size.
  bool stream_ordered = false;  ///< cudaMallocAsync rather than cudaMalloc.
};

/// Direction of a copy, cudaMemcpyKind's values.
enum class copy_kind { host_to_host = 0, host_to_device = 1, device_to_host = 2, device_to_device = 3, inferred = 4 };

/// One cudaMemcpy or cudaMemcpyAsync (performed on the host-backed memory).
struct copy {
  copy_kind kind = copy_kind::inferred;  ///< As passed; cudaMemcpyDefault stays `inferred`.
  std::size_t bytes = 0;                 ///< Bytes copied.
  bool async = false;                    ///< cudaMemcpyAsync rather than cudaMemcpy.
};

/// What made the host wait for the device.
enum class sync_kind { stream, device, event, synchronous_copy };

/// One cudaGraphLaunch (the graph's kernels are not recorded again: they ran at capture).
struct graph_launch {
  std::size_t nodes = 0;         ///< Nodes of the launched graph (kernels, GEMMs, copies, memsets captured).
  const void* stream = nullptr;  ///< The stream it was enqueued on.
};

/// One stream capture, from cudaStreamBeginCapture to cudaStreamEndCapture.
struct capture {
  const void* stream = nullptr;  ///< The captured stream.
  int mode = 0;                  ///< cudaStreamCaptureMode (1: thread-local).
  std::size_t nodes = 0;         ///< Launches, GEMMs, copies and memsets recorded into it.
  bool invalidated = false;      ///< A call not allowed during capture ended it (cudaStreamEndCapture failed).
};

/// Everything recorded since the last reset(): vectors in call order.
struct record {
  std::vector<launch> launches;         ///< Kernel launches.
  std::vector<gemm> gemms;              ///< cuBLAS GEMMs.
  std::vector<allocation> allocations;  ///< Device allocations.
  std::size_t frees = 0;                ///< cudaFree and cudaFreeAsync of non-null pointers.
  std::vector<sync_kind> syncs;         ///< Host waits (stream, device, event synchronize; synchronous copies).
  std::vector<copy> copies;             ///< Copies of any direction.
  std::size_t memsets = 0;              ///< cudaMemset and cudaMemsetAsync calls.
  std::vector<capture> captures;        ///< Finished stream captures.
  std::vector<graph_launch> graph_launches;  ///< cudaGraphLaunch calls.
  std::size_t workspaces = 0;           ///< cublasSetWorkspace calls with a non-null workspace.
  std::vector<solver_call> solver_calls;  ///< cuSOLVER calls (size queries and factorisations).
  std::size_t solver_handles = 0;       ///< cusolverDnCreate calls.

  /// Sum of the allocations' bytes.
  std::size_t allocated_bytes() const;
  /// Copies of one direction.
  std::size_t copies_of(copy_kind kind) const;
  /// Launch counts by kernel family (kernel_family of each name), sorted by name.
  std::map<std::string, std::size_t> launches_by_family() const;
};

/// A copy of everything recorded since the last reset().
record snapshot();

/// Makes the `call`-th factorisation (cusolverDnXpotrf, Xgetrf, Xsyevd, Xgeqrf or Xgesvd) from now (0: the next)
/// write `info` instead of 0 (one at a time).
void fail_solver_call(std::size_t call, int info);

/// Forgets everything recorded (registered kernels and live allocations are kept).
void reset();

/// Bytes the program holds in device allocations now (allocated and not yet freed).
std::size_t live_bytes();

/// A demangled kernel name without namespaces' noise, template arguments and parameters:
/// "void texpr::detail::cuda_impl::assign_vectorized<float, ...>(float*, ...)" -> "cuda_impl::assign_vectorized".
std::string kernel_family(const std::string& kernel);

/// A multi-line, human-readable summary of a record: launches by family, GEMMs with shapes, allocations, syncs.
std::string describe(const record& r);

/// One line per launch and GEMM in call order: kernel family, grid and block, or the GEMM's shape.
std::string describe_launches(const record& r);

/// Records what happens during its lifetime: taken() is everything recorded since construction.
class scope {
 public:
  /// Remembers how much was recorded so far.
  scope();
  /// Everything recorded between construction and now.
  record taken() const;

 private:
  record start_;
};

}  // namespace texpr_standin

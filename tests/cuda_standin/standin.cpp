// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA stand-in: the CUDA runtime, cuBLAS (GEMMs, trsm) and cuSOLVER (dense potrf, getrf, getrs, syevd, geqrf, orgqr, gesvd) entry points texpr uses, plus nvcc's
// kernel registration and launch plumbing, defined so that an nvcc-built test links against this instead of
// libcudart, libcublas and libcusolver and runs on
// a machine without a GPU or driver. Every call is recorded (texpr_standin::snapshot) and nothing executes: kernels
// and GEMMs do not run, so device values are garbage. Allocations are real host memory (256-byte aligned, as the
// device pool's are) so that copies and memsets really move bytes and a stray host read does not crash; one device
// of compute capability 9.0 with 132 SMs is reported. Stream capture counts the work recorded on the captured stream
// and refuses what CUDA refuses then (host waits, host copies, cudaMalloc); a graph launch is recorded as one call.
// Limits: no kernel, event timing, graph contents, texture, multi-device
// or driver-API behaviour; a call texpr does not make is missing and shows up as an undefined symbol at link time.
#include "standin.hpp"

#include <cublas_api.h>
#include <cusolverDn.h>
#include <cuda_runtime_api.h>

#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <utility>

// Opaque handles of the CUDA headers, given a body here: the handles are addresses of these.
struct CUstream_st {
  unsigned flags = 0;
};
struct CUevent_st {
  unsigned flags = 0;
};
struct CUmemPoolHandle_st {
  int device = 0;
};
struct cublasContext {
  cudaStream_t stream = nullptr;
  std::size_t workspace = 0;
};
struct cusolverDnContext {
  cudaStream_t stream = nullptr;
};
struct cusolverDnParams {
  int unused = 0;
};
struct CUgraph_st {
  std::size_t nodes = 0;
};
struct CUgraphExec_st {
  std::size_t nodes = 0;
};

namespace texpr_standin {
namespace {

/// Everything the stand-in knows, behind one mutex; leaked so that calls from static and thread-local
/// destructors (texpr's cached cuBLAS handles) still find it.
struct state {
  std::mutex mutex;
  record rec;
  std::unordered_map<const void*, std::string> kernels;  // host stub -> demangled device name
  std::map<std::uintptr_t, std::size_t> live;            // allocation start -> bytes
  std::size_t work = 0;                                  // launches and GEMMs so far, never reset
  std::map<const void*, capture> capturing;              // streams being captured
  CUmemPoolHandle_st pool;
  std::size_t solver_countdown = 0;  // fail_solver_call: factorisations left before the failing one
  int solver_info = 0;               // its info (0: none pending)
};

state& the_state() {
  static state* s = new state;
  return *s;
}

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// Device memory stands in as host memory with the pool's alignment: texpr picks vector loads by address.
constexpr std::size_t alignment = 256;

void* allocate(std::size_t bytes, bool stream_ordered) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) return nullptr;
  std::memset(p, 0, rounded);  // what a kernel would have written (an info, a flag) reads as 0, not heap garbage
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec.allocations.push_back({bytes, stream_ordered});
  s.live[reinterpret_cast<std::uintptr_t>(p)] = bytes;
  return p;
}

void release(void* p) {
  if (!p) return;
  {
    state& s = the_state();
    std::lock_guard lock(s.mutex);
    ++s.rec.frees;
    s.live.erase(reinterpret_cast<std::uintptr_t>(p));
  }
  std::free(p);
}

/// Whether p lies in a live stand-in allocation (the caller holds the mutex).
bool is_device(const state& s, const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = s.live.upper_bound(a);
  if (it == s.live.begin()) return false;
  --it;
  return a < it->first + std::max<std::size_t>(it->second, 1);
}

void record_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, bool async) {
  if (bytes) std::memmove(dst, src, bytes);
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec.copies.push_back({static_cast<copy_kind>(kind), bytes, async});
  // A synchronous copy to the host waits for the device; cudaMemcpyDefault decides by where dst lives.
  const bool to_host = kind == cudaMemcpyDeviceToHost || (kind == cudaMemcpyDefault && !is_device(s, dst));
  if (!async && to_host) s.rec.syncs.push_back(sync_kind::synchronous_copy);
}

/// Counts a node into the capture of `stream`, if one runs (the caller holds the mutex).
void add_node(state& s, const void* stream) {
  const auto it = s.capturing.find(stream);
  if (it != s.capturing.end()) ++it->second.nodes;
}

/// Whether `stream` is being captured; a call that is not allowed then invalidates the capture.
bool capture_refuses(const void* stream) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  const auto it = s.capturing.find(stream);
  if (it == s.capturing.end()) return false;
  it->second.invalidated = true;
  return true;
}

/// Whether any capture runs (a call that is never allowed during capture, cudaMalloc, then fails).
bool any_capture() {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  return !s.capturing.empty();
}

void record_sync(sync_kind kind) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec.syncs.push_back(kind);
}

void record_launch(const void* stub, dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  const auto it = s.kernels.find(stub);
  s.rec.launches.push_back({it == s.kernels.end() ? std::string("<unregistered>") : it->second,
                            {grid.x, grid.y, grid.z},
                            {block.x, block.y, block.z},
                            shared,
                            stream,
                            s.work++});
  add_node(s, stream);
}

void record_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, long long m, long long n, long long k,
                 long long batch, cudaDataType at, cudaDataType bt, cudaDataType ct, int compute) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec.gemms.push_back({static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), static_cast<int>(batch),
                         static_cast<int>(ta), static_cast<int>(tb), static_cast<int>(at), static_cast<int>(bt),
                         static_cast<int>(ct), compute, h ? h->stream : nullptr, s.work++, h ? h->workspace : 0});
  add_node(s, h ? h->stream : nullptr);
}

// The launch configuration nvcc's <<<>>> pushes and the host stub pops, per thread as in the runtime.
struct call_configuration {
  dim3 grid, block;
  std::size_t shared = 0;
  cudaStream_t stream = nullptr;
};
thread_local std::vector<call_configuration> configurations;

cudaError_t last_error = cudaSuccess;  // never set: nothing the stand-in does fails

}  // namespace

std::size_t record::allocated_bytes() const {
  std::size_t sum = 0;
  for (const auto& a : allocations) sum += a.bytes;
  return sum;
}

std::size_t record::copies_of(copy_kind kind) const {
  return static_cast<std::size_t>(
      std::count_if(copies.begin(), copies.end(), [&](const copy& c) { return c.kind == kind; }));
}

std::map<std::string, std::size_t> record::launches_by_family() const {
  std::map<std::string, std::size_t> out;
  for (const auto& l : launches) ++out[kernel_family(l.kernel)];
  return out;
}

record snapshot() {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  return s.rec;
}

void reset() {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec = record{};
}

std::size_t live_bytes() {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  std::size_t sum = 0;
  for (const auto& [p, bytes] : s.live) sum += bytes;
  return sum;
}

std::string kernel_family(const std::string& kernel) {
  std::string name = kernel;
  if (name.empty() || name[0] == '<') return name;    // "<unregistered>"
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);  // a template kernel's demangled name carries its return type
  // Cut at the first '<' or '(' outside "(anonymous namespace)".
  std::size_t cut = 0;
  for (; cut < name.size(); ++cut) {
    if (name.compare(cut, 21, "(anonymous namespace)") == 0) {
      cut += 20;
      continue;
    }
    if (name[cut] == '<' || name[cut] == '(') break;
  }
  name.resize(cut);
  // Keep the last two components: "cuda_impl::assign_vectorized" names texpr's kernels without its namespaces.
  const std::size_t last = name.rfind("::");
  if (last != std::string::npos && last > 0) {
    const std::size_t before = name.rfind("::", last - 1);
    if (before != std::string::npos) name.erase(0, before + 2);
  }
  return name;
}

std::string describe(const record& r) {
  std::ostringstream out;
  out << "launches " << r.launches.size() << ":\n";
  for (const auto& [family, count] : r.launches_by_family()) out << "  " << count << " x " << family << "\n";
  out << "gemms " << r.gemms.size() << " (cuBLAS m x n x k, batch; texpr's rows = n, cols = m):\n";
  for (const auto& g : r.gemms)
    out << "  " << g.m << " x " << g.n << " x " << g.k << (g.transa ? " A^T" : "") << (g.transb ? " B^T" : "")
        << ", batch " << g.batch << "\n";
  out << "allocations " << r.allocations.size() << " (" << r.allocated_bytes() << " bytes):";
  for (const auto& a : r.allocations) out << " " << a.bytes;
  out << "\nfrees " << r.frees << "\nsyncs " << r.syncs.size() << ":";
  static const char* const sync_names[] = {"stream", "device", "event", "synchronous_copy"};
  for (const auto k : r.syncs) out << " " << sync_names[static_cast<int>(k)];
  out << "\ncaptures " << r.captures.size() << ", graph launches " << r.graph_launches.size();
  out << "\ncopies " << r.copies.size() << " (h2d " << r.copies_of(copy_kind::host_to_device) << ", d2h "
      << r.copies_of(copy_kind::device_to_host) << ", d2d " << r.copies_of(copy_kind::device_to_device) << "), memsets "
      << r.memsets << "\n";
  return out.str();
}

std::string describe_launches(const record& r) {
  std::map<std::size_t, std::string> lines;  // by call order
  for (const auto& l : r.launches) {
    std::ostringstream line;
    line << kernel_family(l.kernel) << " <<<" << l.grid.x << ", " << l.block.x << ", " << l.shared_bytes << ">>>";
    lines[l.order] = line.str();
  }
  for (const auto& g : r.gemms) {
    std::ostringstream line;
    line << "cuBLAS gemm " << g.m << " x " << g.n << " x " << g.k << (g.transa ? " A^T" : "")
         << (g.transb ? " B^T" : "") << ", batch " << g.batch;
    lines[g.order] = line.str();
  }
  std::string out;
  for (const auto& [order, line] : lines) out += "  " + line + "\n";
  return out;
}

void fail_solver_call(std::size_t call, int info) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  s.solver_countdown = call;
  s.solver_info = info;
}

scope::scope() : start_(snapshot()) {}

record scope::taken() const {
  const record now = snapshot();
  const auto tail = [](const auto& all, const auto& before) {
    std::remove_cvref_t<decltype(all)> out;
    if (all.size() > before.size()) out.assign(all.begin() + static_cast<std::ptrdiff_t>(before.size()), all.end());
    return out;
  };
  record r;
  r.launches = tail(now.launches, start_.launches);
  r.gemms = tail(now.gemms, start_.gemms);
  r.allocations = tail(now.allocations, start_.allocations);
  r.frees = now.frees > start_.frees ? now.frees - start_.frees : 0;
  r.syncs = tail(now.syncs, start_.syncs);
  r.copies = tail(now.copies, start_.copies);
  r.memsets = now.memsets > start_.memsets ? now.memsets - start_.memsets : 0;
  r.captures = tail(now.captures, start_.captures);
  r.graph_launches = tail(now.graph_launches, start_.graph_launches);
  r.workspaces = now.workspaces > start_.workspaces ? now.workspaces - start_.workspaces : 0;
  r.solver_calls = tail(now.solver_calls, start_.solver_calls);
  r.solver_handles = now.solver_handles > start_.solver_handles ? now.solver_handles - start_.solver_handles : 0;
  return r;
}

}  // namespace texpr_standin

using texpr_standin::the_state;

// ---- nvcc's registration and launch plumbing (crt/host_runtime.h, crt/device_functions.h) ----
extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) {
  // The handle only has to be unique and stable; the fat binary itself is never loaded.
  return static_cast<void**>(fat_cubin);
}

void __cudaRegisterFatBinaryEnd(void**) {}

void __cudaUnregisterFatBinary(void**) {}

void __cudaRegisterFunction(void**, const char* host_fun, char*, const char* device_name, int, uint3*, uint3*, dim3*,
                            dim3*, int*) {
  auto& s = the_state();
  std::string name = texpr_standin::demangle(device_name);
  std::lock_guard lock(s.mutex);
  s.kernels[host_fun] = std::move(name);
}

void __cudaRegisterVar(void**, char*, char*, const char*, int, std::size_t, int, int) {}

void __cudaRegisterManagedVar(void**, void**, char*, const char*, int, std::size_t, int, int) {}

char __cudaInitModule(void**) { return 1; }

unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, std::size_t shared, CUstream_st* stream) {
  texpr_standin::configurations.push_back({grid, block, shared, stream});
  return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, std::size_t* shared, void* stream) {
  auto& stack = texpr_standin::configurations;
  if (stack.empty()) return cudaErrorMissingConfiguration;
  const auto c = stack.back();
  stack.pop_back();
  *grid = c.grid;
  *block = c.block;
  *shared = c.shared;
  *static_cast<cudaStream_t*>(stream) = c.stream;
  return cudaSuccess;
}

// The kernel handle is the host stub's address: launches are attributed through the registration table.
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* fun) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(fun));
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void**, std::size_t shared,
                               cudaStream_t stream) {
  texpr_standin::record_launch(reinterpret_cast<const void*>(kernel), grid, block, shared, stream);
  return cudaSuccess;
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, std::size_t shared,
                                    cudaStream_t stream) {
  return __cudaLaunchKernel(kernel, grid, block, args, shared, stream);
}

}  // extern "C"

// ---- the CUDA runtime API (cuda_runtime_api.h) ----

cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void**, std::size_t shared, cudaStream_t stream) {
  texpr_standin::record_launch(func, grid, block, shared, stream);
  return cudaSuccess;
}

// What CUB's device-wide algorithms launch through: a launch with a configuration struct (attributes ignored).
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void**) {
  texpr_standin::record_launch(func, config->gridDim, config->blockDim, config->dynamicSmemBytes, config->stream);
  return cudaSuccess;
}

// CUB sizes its grids from these: an sm_90 kernel of 32 registers and no static shared memory.
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void*) {
  *attributes = cudaFuncAttributes{};
  attributes->maxThreadsPerBlock = 1024;
  attributes->numRegs = 32;
  attributes->ptxVersion = 90;
  attributes->binaryVersion = 90;
  attributes->maxDynamicSharedSizeBytes = 48 << 10;
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void*, int block_size, std::size_t, unsigned) {
  *blocks = block_size > 0 ? (2048 / block_size > 32 ? 32 : 2048 / block_size) : 0;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : cudaErrorInvalidDevice; }

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "texpr CUDA stand-in (H200-like)", sizeof(prop->name) - 1);
  prop->totalGlobalMem = std::size_t(141) << 30;
  prop->sharedMemPerBlock = 48 << 10;
  prop->sharedMemPerBlockOptin = 227 << 10;
  prop->sharedMemPerMultiprocessor = 228 << 10;
  prop->regsPerBlock = 65536;
  prop->regsPerMultiprocessor = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsPerMultiProcessor = 2048;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  prop->l2CacheSize = 50 << 20;
  prop->memoryPoolsSupported = 1;
  prop->concurrentManagedAccess = 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  // The attributes a launch or dtype decision may ask, with an H200's values; any other reads as 0.
  static constexpr std::pair<cudaDeviceAttr, int> attributes[] = {
      {cudaDevAttrMultiProcessorCount, 132},
      {cudaDevAttrComputeCapabilityMajor, 9},
      {cudaDevAttrComputeCapabilityMinor, 0},
      {cudaDevAttrSingleToDoublePrecisionPerfRatio, 2},
      {cudaDevAttrWarpSize, 32},
      {cudaDevAttrMaxThreadsPerBlock, 1024},
      {cudaDevAttrMaxThreadsPerMultiProcessor, 2048},
      {cudaDevAttrMaxSharedMemoryPerBlock, 48 << 10},
      {cudaDevAttrMaxSharedMemoryPerBlockOptin, 227 << 10},
      {cudaDevAttrMaxSharedMemoryPerMultiprocessor, 228 << 10},
      {cudaDevAttrMaxRegistersPerBlock, 65536},
      {cudaDevAttrL2CacheSize, 50 << 20},
      {cudaDevAttrMaxBlockDimX, 1024},
      {cudaDevAttrMaxBlockDimY, 1024},
      {cudaDevAttrMaxBlockDimZ, 64},
      {cudaDevAttrMaxGridDimX, 0x7fffffff},
      {cudaDevAttrMaxGridDimY, 65535},
      {cudaDevAttrMaxGridDimZ, 65535},
      {cudaDevAttrMemoryPoolsSupported, 1},
  };
  *value = 0;
  for (const auto& [a, v] : attributes)
    if (a == attr) *value = v;
  return cudaSuccess;
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = texpr_standin::last_error;
  texpr_standin::last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError() { return texpr_standin::last_error; }

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice:
      return "cudaErrorNoDevice";
    case cudaErrorMissingConfiguration:
      return "cudaErrorMissingConfiguration";
    case cudaErrorStreamCaptureUnsupported:
      return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
      return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorIllegalState:
      return "cudaErrorIllegalState";
    default:
      return "cudaError (texpr CUDA stand-in)";
  }
}

const char* cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "error reported by the texpr CUDA stand-in";
}

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (texpr_standin::any_capture()) return cudaErrorStreamCaptureUnsupported;  // not allowed during capture
  *p = texpr_standin::allocate(bytes, false);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) {
  *p = texpr_standin::allocate(bytes, true);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}

cudaError_t cudaFree(void* p) {
  texpr_standin::release(p);
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t) {
  texpr_standin::release(p);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *pool = &the_state().pool;
  return cudaSuccess;
}

cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) { return cudaSuccess; }

cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream) {
  if (bytes) std::memset(p, value, bytes);
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  ++s.rec.memsets;
  texpr_standin::add_node(s, stream);
  return cudaSuccess;
}

cudaError_t cudaMemset(void* p, int value, std::size_t bytes) { return cudaMemsetAsync(p, value, bytes, nullptr); }

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  // A copy to or from host memory is not captured (the stand-in has no pinned memory: all host memory is pageable).
  if (kind != cudaMemcpyDeviceToDevice && texpr_standin::capture_refuses(stream)) return cudaErrorStreamCaptureUnsupported;
  texpr_standin::record_copy(dst, src, bytes, kind, true);
  {
    auto& s = the_state();
    std::lock_guard lock(s.mutex);
    texpr_standin::add_node(s, stream);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  texpr_standin::record_copy(dst, src, bytes, kind, false);
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p) {
  *attributes = cudaPointerAttributes{};
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  if (texpr_standin::is_device(s, p)) {
    attributes->type = cudaMemoryTypeDevice;
    attributes->device = 0;
    attributes->devicePointer = const_cast<void*>(p);
  } else {
    attributes->type = cudaMemoryTypeUnregistered;
    attributes->device = -2;
  }
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  *stream = new CUstream_st{};
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned flags) {
  *stream = new CUstream_st{flags};
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (texpr_standin::capture_refuses(stream)) return cudaErrorStreamCaptureUnsupported;
  texpr_standin::record_sync(texpr_standin::sync_kind::stream);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  if (texpr_standin::any_capture()) return cudaErrorStreamCaptureUnsupported;
  texpr_standin::record_sync(texpr_standin::sync_kind::device);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = new CUevent_st{};
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned flags) {
  *event = new CUevent_st{flags};
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }

cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) { return cudaSuccess; }

cudaError_t cudaEventSynchronize(cudaEvent_t) {
  texpr_standin::record_sync(texpr_standin::sync_kind::event);
  return cudaSuccess;
}

// ---- stream capture and graphs: a capture counts the nodes recorded on its stream; a launch records the graph ----

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (stream == nullptr || stream == cudaStreamLegacy) return cudaErrorStreamCaptureUnsupported;
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  if (s.capturing.count(stream)) return cudaErrorIllegalState;
  s.capturing[stream] = texpr_standin::capture{stream, static_cast<int>(mode), 0, false};
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* graph) {
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  const auto it = s.capturing.find(stream);
  *graph = nullptr;
  if (it == s.capturing.end()) return cudaErrorIllegalState;
  const texpr_standin::capture c = it->second;
  s.capturing.erase(it);
  s.rec.captures.push_back(c);
  if (c.invalidated) return cudaErrorStreamCaptureInvalidated;
  *graph = new CUgraph_st{c.nodes};
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* status) {
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  const auto it = s.capturing.find(stream);
  *status = it == s.capturing.end() ? cudaStreamCaptureStatusNone
            : it->second.invalidated ? cudaStreamCaptureStatusInvalidated
                                     : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, std::size_t* count) {
  if (nodes) return cudaErrorInvalidValue;  // the stand-in has no node handles: only the count
  *count = graph->nodes;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  *exec = new CUgraphExec_st{graph->nodes};
  return cudaSuccess;
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  s.rec.graph_launches.push_back({exec->nodes, stream});
  ++s.work;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete graph;
  return cudaSuccess;
}

// ---- cuBLAS (cublas_api.h; cublas_v2.h maps cublasCreate to cublasCreate_v2 and so on) ----

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  handle->workspace = 0;  // as in cuBLAS: setting the stream resets the workspace to cuBLAS's own pool
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* stream) {
  *stream = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t, cublasMath_t) { return CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void* workspace, std::size_t bytes) {
  handle->workspace = workspace ? bytes : 0;
  if (workspace) {
    auto& s = the_state();
    std::lock_guard lock(s.mutex);
    ++s.rec.workspaces;
  }
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS (texpr CUDA stand-in)";
}

const char* cublasGetStatusString(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "success" : "error reported by the texpr CUDA stand-in";
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void*, const void*, cudaDataType a_type, int, const void*, cudaDataType b_type,
                            int, const void*, void*, cudaDataType c_type, int, cublasComputeType_t compute,
                            cublasGemmAlgo_t) {
  texpr_standin::record_gemm(handle, transa, transb, m, n, k, 1, a_type, b_type, c_type, static_cast<int>(compute));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void*, const void*, cudaDataType a_type, int,
                                          long long, const void*, cudaDataType b_type, int, long long, const void*,
                                          void*, cudaDataType c_type, int, long long, int batch,
                                          cublasComputeType_t compute, cublasGemmAlgo_t) {
  texpr_standin::record_gemm(handle, transa, transb, m, n, k, batch, a_type, b_type, c_type, static_cast<int>(compute));
  return CUBLAS_STATUS_SUCCESS;
}

namespace texpr_standin {
namespace {
/// Records a cuBLAS trsm (side, uplo, trans, diag; m x n B) as a solver_call: n = the order of A, nrhs = B's other
/// extent (texpr's right-hand sides whichever the side).
void record_trsm(const char* function, cublasHandle_t h, cublasSideMode_t side, cublasFillMode_t uplo,
                 cublasOperation_t trans, int64_t m, int64_t n, int type, int64_t lda, int64_t ldb) {
  solver_call c;
  c.function = function;
  c.side = static_cast<int>(side);
  c.uplo = static_cast<int>(uplo);
  c.trans = static_cast<int>(trans);
  c.n = side == CUBLAS_SIDE_LEFT ? m : n;
  c.nrhs = side == CUBLAS_SIDE_LEFT ? n : m;
  c.type = type;
  c.lda = lda;
  c.ldb = ldb;
  c.workspace = h ? h->workspace : 0;
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  c.stream = h ? h->stream : nullptr;
  c.handle = h;
  c.order = s.work++;
  s.rec.solver_calls.push_back(std::move(c));
  add_node(s, h ? h->stream : nullptr);
}
}  // namespace
}  // namespace texpr_standin

cublasStatus_t cublasStrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                 cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n, const float*,
                                 const float*, int64_t lda, float*, int64_t ldb) {
  if (diag != CUBLAS_DIAG_NON_UNIT) return CUBLAS_STATUS_NOT_SUPPORTED;  // texpr never asks for a unit diagonal
  texpr_standin::record_trsm("cublasStrsm_v2_64", handle, side, uplo, trans, m, n, 0, lda, ldb);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDtrsm_v2_64(cublasHandle_t handle, cublasSideMode_t side, cublasFillMode_t uplo,
                                 cublasOperation_t trans, cublasDiagType_t diag, int64_t m, int64_t n, const double*,
                                 const double*, int64_t lda, double*, int64_t ldb) {
  if (diag != CUBLAS_DIAG_NON_UNIT) return CUBLAS_STATUS_NOT_SUPPORTED;
  texpr_standin::record_trsm("cublasDtrsm_v2_64", handle, side, uplo, trans, m, n, 1, lda, ldb);
  return CUBLAS_STATUS_SUCCESS;
}

// ---- cuSOLVER dense (cusolverDn.h): handles, the 64-bit API's params, potrf, getrf, getrs and syevd ----

namespace texpr_standin {
namespace {
/// Records c (its function and arguments filled in) as made on handle h.
void record_solver(solver_call c, cusolverDnHandle_t h) {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  c.stream = h ? h->stream : nullptr;
  c.handle = h;
  c.order = s.work++;
  s.rec.solver_calls.push_back(std::move(c));
  add_node(s, h ? h->stream : nullptr);
}

void record_solver(const char* function, cusolverDnHandle_t h, cublasFillMode_t uplo, long long n, cudaDataType type,
                   std::size_t workspace) {
  solver_call c;
  c.function = function;
  c.n = n;
  c.uplo = static_cast<int>(uplo);
  c.type = static_cast<int>(type);
  c.workspace = workspace;
  record_solver(std::move(c), h);
}

/// The info a factorisation writes: 0, or fail_solver_call's when its countdown ends.
int next_info() {
  state& s = the_state();
  std::lock_guard lock(s.mutex);
  int value = 0;
  if (s.solver_info != 0) {
    if (s.solver_countdown == 0) value = std::exchange(s.solver_info, 0);
    else --s.solver_countdown;
  }
  return value;
}

/// Some workspace size that grows with n, as the real queries' do.
std::size_t workspace_for(int64_t n) { return static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * 8 + 1024; }
}  // namespace
}  // namespace texpr_standin

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
  *handle = new cusolverDnContext{};
  auto& s = the_state();
  std::lock_guard lock(s.mutex);
  ++s.rec.solver_handles;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  delete handle;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle, cudaStream_t stream) {
  handle->stream = stream;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t* params) {
  *params = new cusolverDnParams{};
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t params) {
  delete params;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXpotrf_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t, cublasFillMode_t uplo,
                                             int64_t n, cudaDataType type, const void*, int64_t, cudaDataType,
                                             size_t* device_bytes, size_t* host_bytes) {
  texpr_standin::record_solver("cusolverDnXpotrf_bufferSize", handle, uplo, n, type, 0);
  *device_bytes = texpr_standin::workspace_for(n);
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXpotrf(cusolverDnHandle_t handle, cusolverDnParams_t, cublasFillMode_t uplo, int64_t n,
                                  cudaDataType type, void*, int64_t, cudaDataType, void*, size_t device_bytes, void*,
                                  size_t, int* info) {
  texpr_standin::record_solver("cusolverDnXpotrf", handle, uplo, n, type, device_bytes);
  *info = texpr_standin::next_info();  // device memory is host memory here; the factorisation itself does not run
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgetrf_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t, int64_t, int64_t n,
                                             cudaDataType type, const void*, int64_t, cudaDataType,
                                             size_t* device_bytes, size_t* host_bytes) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgetrf_bufferSize";
  c.n = n;
  c.type = static_cast<int>(type);
  texpr_standin::record_solver(std::move(c), handle);
  *device_bytes = texpr_standin::workspace_for(n);
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgetrf(cusolverDnHandle_t handle, cusolverDnParams_t, int64_t, int64_t n,
                                  cudaDataType type, void*, int64_t, int64_t* ipiv, cudaDataType, void*,
                                  size_t device_bytes, void*, size_t, int* info) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgetrf";
  c.n = n;
  c.type = static_cast<int>(type);
  c.workspace = device_bytes;
  c.pivots = ipiv != nullptr;
  texpr_standin::record_solver(std::move(c), handle);
  *info = texpr_standin::next_info();
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgetrs(cusolverDnHandle_t handle, cusolverDnParams_t, cublasOperation_t trans, int64_t n,
                                  int64_t nrhs, cudaDataType type, const void*, int64_t, const int64_t* ipiv,
                                  cudaDataType, void*, int64_t, int* info) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgetrs";
  c.n = n;
  c.type = static_cast<int>(type);
  c.trans = static_cast<int>(trans);
  c.nrhs = nrhs;
  c.pivots = ipiv != nullptr;
  texpr_standin::record_solver(std::move(c), handle);
  *info = 0;  // getrs fails only on a bad argument
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXsyevd_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t, cusolverEigMode_t jobz,
                                             cublasFillMode_t uplo, int64_t n, cudaDataType type, const void*, int64_t,
                                             cudaDataType, const void*, cudaDataType, size_t* device_bytes,
                                             size_t* host_bytes) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXsyevd_bufferSize";
  c.n = n;
  c.uplo = static_cast<int>(uplo);
  c.type = static_cast<int>(type);
  c.jobz = static_cast<int>(jobz);
  texpr_standin::record_solver(std::move(c), handle);
  *device_bytes = texpr_standin::workspace_for(n);
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXsyevd(cusolverDnHandle_t handle, cusolverDnParams_t, cusolverEigMode_t jobz,
                                  cublasFillMode_t uplo, int64_t n, cudaDataType type, void*, int64_t, cudaDataType,
                                  void*, cudaDataType, void*, size_t device_bytes, void*, size_t, int* info) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXsyevd";
  c.n = n;
  c.uplo = static_cast<int>(uplo);
  c.type = static_cast<int>(type);
  c.jobz = static_cast<int>(jobz);
  c.workspace = device_bytes;
  texpr_standin::record_solver(std::move(c), handle);
  *info = texpr_standin::next_info();
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgeqrf_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t, int64_t m, int64_t n,
                                             cudaDataType type, const void*, int64_t, cudaDataType, const void*,
                                             cudaDataType, size_t* device_bytes, size_t* host_bytes) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgeqrf_bufferSize";
  c.m = m;
  c.n = n;
  c.type = static_cast<int>(type);
  texpr_standin::record_solver(std::move(c), handle);
  *device_bytes = texpr_standin::workspace_for(n);
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgeqrf(cusolverDnHandle_t handle, cusolverDnParams_t, int64_t m, int64_t n,
                                  cudaDataType type, void*, int64_t, cudaDataType, void*, cudaDataType, void*,
                                  size_t device_bytes, void*, size_t, int* info) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgeqrf";
  c.m = m;
  c.n = n;
  c.type = static_cast<int>(type);
  c.workspace = device_bytes;
  texpr_standin::record_solver(std::move(c), handle);
  *info = texpr_standin::next_info();
  return CUSOLVER_STATUS_SUCCESS;
}

namespace texpr_standin {
namespace {
/// Records a legacy orgqr call or its size query (lwork: the elements passed, 0 for the query).
void record_orgqr(const char* function, cusolverDnHandle_t h, int m, int n, int k, int type, int lwork) {
  solver_call c;
  c.function = function;
  c.m = m;
  c.n = n;
  c.k = k;
  c.type = type;
  c.lwork = lwork;
  c.workspace = static_cast<std::size_t>(lwork) * (type == 0 ? sizeof(float) : sizeof(double));
  record_solver(std::move(c), h);
}
}  // namespace
}  // namespace texpr_standin

cusolverStatus_t cusolverDnSorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const float*, int,
                                             const float*, int* lwork) {
  texpr_standin::record_orgqr("cusolverDnSorgqr_bufferSize", handle, m, n, k, 0, 0);
  *lwork = static_cast<int>(texpr_standin::workspace_for(n) / sizeof(float));
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDorgqr_bufferSize(cusolverDnHandle_t handle, int m, int n, int k, const double*, int,
                                             const double*, int* lwork) {
  texpr_standin::record_orgqr("cusolverDnDorgqr_bufferSize", handle, m, n, k, 1, 0);
  *lwork = static_cast<int>(texpr_standin::workspace_for(n) / sizeof(double));
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSorgqr(cusolverDnHandle_t handle, int m, int n, int k, float*, int, const float*, float*,
                                  int lwork, int* info) {
  texpr_standin::record_orgqr("cusolverDnSorgqr", handle, m, n, k, 0, lwork);
  *info = 0;  // orgqr fails only on a bad argument
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDorgqr(cusolverDnHandle_t handle, int m, int n, int k, double*, int, const double*, double*,
                                  int lwork, int* info) {
  texpr_standin::record_orgqr("cusolverDnDorgqr", handle, m, n, k, 1, lwork);
  *info = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgesvd_bufferSize(cusolverDnHandle_t handle, cusolverDnParams_t, signed char jobu,
                                             signed char jobvt, int64_t m, int64_t n, cudaDataType type, const void*,
                                             int64_t, cudaDataType, const void*, cudaDataType, const void* u,
                                             int64_t ldu, cudaDataType, const void* vt, int64_t, cudaDataType,
                                             size_t* device_bytes, size_t* host_bytes) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgesvd_bufferSize";
  c.m = m;
  c.n = n;
  c.type = static_cast<int>(type);
  c.jobu = static_cast<char>(jobu);
  c.jobvt = static_cast<char>(jobvt);
  c.ldu = ldu;
  c.vectors = u != nullptr && vt != nullptr;
  texpr_standin::record_solver(std::move(c), handle);
  *device_bytes = texpr_standin::workspace_for(m);
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXgesvd(cusolverDnHandle_t handle, cusolverDnParams_t, signed char jobu, signed char jobvt,
                                  int64_t m, int64_t n, cudaDataType type, void*, int64_t, cudaDataType, void*,
                                  cudaDataType, void* u, int64_t ldu, cudaDataType, void* vt, int64_t, cudaDataType,
                                  void*, size_t device_bytes, void*, size_t, int* info) {
  texpr_standin::solver_call c;
  c.function = "cusolverDnXgesvd";
  c.m = m;
  c.n = n;
  c.type = static_cast<int>(type);
  c.jobu = static_cast<char>(jobu);
  c.jobvt = static_cast<char>(jobvt);
  c.ldu = ldu;
  c.vectors = u != nullptr && vt != nullptr;
  c.workspace = device_bytes;
  texpr_standin::record_solver(std::move(c), handle);
  *info = texpr_standin::next_info();
  return CUSOLVER_STATUS_SUCCESS;
}

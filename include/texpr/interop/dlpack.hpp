// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack exchange (needs <dlpack/dlpack.h>, 0.6 or later): tx::from_dlpack views a tensor, tx::to_dlpack exports one.
#pragma once

#if __has_include(<dlpack/dlpack.h>)
#include <dlpack/dlpack.h>
#else
#error "texpr/interop/dlpack.hpp needs <dlpack/dlpack.h>: install DLPack (Debian: libdlpack-dev) or add its include/ \
directory to the include path"
#endif

#include <atomic>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#include "texpr/backend/cuda/stream.hpp"
#endif
#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/type_list.hpp"
#include "texpr/interop/pointer_check.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

namespace detail {

// bool got its own type code in DLPack 0.8; before, producers sent it as an 8-bit unsigned integer.
#if defined(DLPACK_MAJOR_VERSION) || (defined(DLPACK_VERSION) && DLPACK_VERSION >= 80)
inline constexpr std::uint8_t dlpack_bool_code = kDLBool;
#else
inline constexpr std::uint8_t dlpack_bool_code = kDLUInt;
#endif

/// The DLPack dtype of element type T (one lane); only texpr's dtypes have one.
template <class T> constexpr DLDataType dlpack_dtype() {
  using V = std::remove_const_t<T>;
  constexpr auto make = [](std::uint8_t code, std::uint8_t bits) {
    DLDataType d{};
    d.code = code;
    d.bits = bits;
    d.lanes = 1;
    return d;
  };
  if constexpr (std::is_same_v<V, float>) return make(kDLFloat, 32);
  else if constexpr (std::is_same_v<V, double>) return make(kDLFloat, 64);
  else if constexpr (std::is_same_v<V, half>) return make(kDLFloat, 16);
  else if constexpr (std::is_same_v<V, texpr::bfloat16>) return make(kDLBfloat, 16);
  else if constexpr (std::is_same_v<V, std::int32_t>) return make(kDLInt, 32);
  else if constexpr (std::is_same_v<V, std::int64_t>) return make(kDLInt, 64);
  else if constexpr (std::is_same_v<V, bool>) return make(dlpack_bool_code, 8);
  else if constexpr (std::is_same_v<V, std::complex<float>>) return make(kDLComplex, 64);  // bits of the whole number
  else if constexpr (std::is_same_v<V, std::complex<double>>) return make(kDLComplex, 128);
  else {
    static_assert(always_false_v<T>, "texpr: DLPack exchange supports texpr's dtypes only: float, double, half, "
                                     "bfloat16, std::int32_t, std::int64_t, bool, std::complex<float> and "
                                     "std::complex<double>");
    return make(0, 0);
  }
}

/// "int64", "float16", "bool", "float32x4": a DLPack dtype as texpr names dtypes.
inline std::string dlpack_dtype_name(DLDataType d) {
  std::string name;
  if (d.code == dlpack_bool_code && d.bits == 8 && dlpack_bool_code != kDLUInt) name = "bool";
  else {
    switch (d.code) {
      case kDLInt: name = "int"; break;
      case kDLUInt: name = "uint"; break;
      case kDLFloat: name = "float"; break;
      case kDLBfloat: name = "bfloat"; break;
      case kDLComplex: name = "complex"; break;
      case kDLOpaqueHandle: name = "opaque"; break;
      default: name = "type code " + std::to_string(d.code) + " of "; break;
    }
    name += std::to_string(d.bits);
  }
  if (d.lanes != 1) name += "x" + std::to_string(d.lanes);
  return name;
}

/// The device type code as the producer stored it. Read as bytes: a code this header does not know (a newer DLPack,
/// or garbage) loaded as a DLDeviceType would be undefined behaviour, so it is validated as an integer first.
inline std::int64_t dlpack_device_code(const DLDevice& d) noexcept {
  std::underlying_type_t<DLDeviceType> code{};
  static_assert(sizeof(code) == sizeof(d.device_type), "texpr: DLDeviceType's storage is its underlying type");
  std::memcpy(&code, &d.device_type, sizeof(code));
  return static_cast<std::int64_t>(code);
}

/// "kDLCPU", "kDLCUDA", ...: the DLPack enumerator's name for a device type code ("" for a code DLPack does not
/// define), by value, so headers of every version agree.
inline std::string dlpack_device_name(std::int64_t code) {
  switch (code) {
    case 1: return "kDLCPU";
    case 2: return "kDLCUDA";
    case 3: return "kDLCUDAHost";
    case 4: return "kDLOpenCL";
    case 7: return "kDLVulkan";
    case 8: return "kDLMetal";
    case 9: return "kDLVPI";
    case 10: return "kDLROCM";
    case 11: return "kDLROCMHost";
    case 12: return "kDLExtDev";
    case 13: return "kDLCUDAManaged";
    case 14: return "kDLOneAPI";
    case 15: return "kDLWebGPU";
    case 16: return "kDLHexagon";
    case 17: return "kDLMAIA";
    default: return "";
  }
}

/// The device named for an error: "kDLROCM", or "unknown device_type code 99".
inline std::string dlpack_device_text(std::int64_t code) {
  const std::string name = dlpack_device_name(code);
  return name.empty() ? "unknown device_type code " + std::to_string(code) : name;
}

/// The view's first element, data + byte_offset, after checking that neither it nor the strided span from it
/// leaves the address space or int64 (interop_error naming the field); null for null data.
template <class V, std::size_t R>
V* dlpack_first_element(const DLTensor& t, const shape_t<R>& shape, const shape_t<R>& strides, bool strides_given,
                        const std::string& who) {
  index_t lo = 0, hi = 0;
  if (!strided_byte_span(shape, strides, sizeof(V), lo, hi))
    throw interop_error(who + "strides " + texpr::to_string(strides) + " over shape " + texpr::to_string(shape) +
                        " span more bytes than fit in int64" + (strides_given ? "" : " (strides null: row-major)"));
  if (t.byte_offset > static_cast<std::uint64_t>(PTRDIFF_MAX))
    throw interop_error(who + "byte_offset " + std::to_string(t.byte_offset) + " does not fit in int64");
  // Offsets from data: byte_offset + lo to byte_offset + hi + sizeof(V) must be representable, and so must the
  // addresses they reach (computed as integers: a pointer that wraps is undefined behaviour before it is read).
  const auto offset = static_cast<index_t>(t.byte_offset);
  index_t low = 0, high = 0;
  if (!add_fits(offset, lo, low) || !add_fits(offset, hi, high) || !add_fits(high, static_cast<index_t>(sizeof(V)), high))
    throw interop_error(who + "byte_offset " + std::to_string(t.byte_offset) + " plus the span of strides " +
                        texpr::to_string(strides) + " over shape " + texpr::to_string(shape) + " overflows int64");
  if (!t.data) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  if (shape_size(shape) == 0) low = high = offset;  // only data + byte_offset itself is formed
  const bool below = low < 0 && base < static_cast<std::uintptr_t>(-(low + 1)) + 1;
  const bool above = base > UINTPTR_MAX - static_cast<std::uintptr_t>(high);
  if (below || above)
    throw interop_error(who + "data + byte_offset " + std::to_string(t.byte_offset) + " with strides " +
                        texpr::to_string(strides) + " over shape " + texpr::to_string(shape) +
                        " leaves the address space");
  return reinterpret_cast<V*>(base + static_cast<std::uintptr_t>(offset));
}

/// Number of to_dlpack results whose deleter has not run yet (tests use it to prove each deleter frees its export).
inline std::atomic<std::ptrdiff_t> dlpack_exports_alive{0};

/// What a to_dlpack result owns: the managed struct itself, the shape and strides it points to, and (for a moved-in
/// tensor) the tensor. The deleter deletes this whole object.
template <class Managed, class Owned, std::size_t R> struct dlpack_export {
  Managed managed{};
  Owned owned;
  std::int64_t shape[R == 0 ? 1 : R]{};
  std::int64_t strides[R == 0 ? 1 : R]{};

  explicit dlpack_export(Owned o) : owned(std::move(o)) {
    dlpack_exports_alive.fetch_add(1, std::memory_order_relaxed);
  }
  dlpack_export(const dlpack_export&) = delete;
  dlpack_export& operator=(const dlpack_export&) = delete;
  ~dlpack_export() { dlpack_exports_alive.fetch_sub(1, std::memory_order_relaxed); }

  static void deleter(Managed* self) noexcept { delete static_cast<dlpack_export*>(self->manager_ctx); }
};

struct no_owner {};

/// The device a tx::cuda pointer lives on (the current device for a null pointer), after waiting for `stream` so
/// that a consumer on any stream sees the finished values.
template <class B> std::int32_t dlpack_export_device([[maybe_unused]] const void* p, [[maybe_unused]] stream_t stream) {
  if constexpr (std::is_same_v<B, host>) return 0;
  else {
    static_assert(cuda_compiler_v && !always_false_v<B>,
                  "texpr: to_dlpack of a tx::cuda tensor or view asks CUDA for its device and waits for its stream; "
                  "compile this file with nvcc");
#if defined(__CUDACC__)
    int dev = 0;
    TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
    if (p) {
      cudaPointerAttributes a{};
      TEXPR_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
      if (a.type == cudaMemoryTypeDevice) dev = a.device;
    }
    TEXPR_CUDA_CHECK(cudaStreamSynchronize(resolve_stream(stream)));  // a null stream is texpr's
    kernel_log::record_sync();
    return dev;
#else
    return 0;
#endif
  }
}

/// Fills `e`'s DLTensor from a texpr view's fields.
template <class E, class T, std::size_t R, class B>
void fill_dlpack_tensor(E& e, const view<T, R, B>& v) {
  DLTensor& t = e.managed.dl_tensor;
  for (std::size_t d = 0; d != R; ++d) {
    e.shape[d] = v.shape()[d];
    e.strides[d] = v.strides()[d];
  }
  t.data = const_cast<std::remove_const_t<T>*>(v.data());  // read-only exports say so only through the flags
  t.device.device_type = std::is_same_v<B, host> ? kDLCPU : kDLCUDA;
  t.device.device_id = dlpack_export_device<B>(v.data(), v.stream());
  t.ndim = static_cast<std::int32_t>(R);
  t.dtype = dlpack_dtype<T>();
  t.shape = e.shape;
  t.strides = e.strides;
  t.byte_offset = 0;
}

template <class Managed, class T, std::size_t R, class B> Managed* export_tensor(tensor<T, R, B>&& t) {
  auto* e = new dlpack_export<Managed, tensor<T, R, B>, R>(std::move(t));
  try {
    fill_dlpack_tensor(*e, e->owned.view());
  } catch (...) {
    delete e;
    throw;
  }
  e->managed.manager_ctx = e;
  e->managed.deleter = &dlpack_export<Managed, tensor<T, R, B>, R>::deleter;
  return &e->managed;
}

template <class Managed, class T, std::size_t R, class B> Managed* export_view(const view<T, R, B>& v) {
  auto* e = new dlpack_export<Managed, no_owner, R>(no_owner{});
  try {
    fill_dlpack_tensor(*e, v);
  } catch (...) {
    delete e;
    throw;
  }
  e->managed.manager_ctx = e;
  e->managed.deleter = &dlpack_export<Managed, no_owner, R>::deleter;
  return &e->managed;
}

} // namespace detail

/// A view of a DLPack tensor's memory as view<T, R, B> (T may be const). Checks, and throws interop_error naming
/// what differs: dtype (code, bits and one lane against T), rank (ndim), device (kDLCPU or kDLCUDAHost for
/// tx::host, kDLCUDA or kDLCUDAManaged for tx::cuda; an unknown code is named), byte_offset (a multiple of
/// sizeof(T); it is applied), extents (as every shape: >= 0, byte size within int64), the byte span of the strides
/// and of byte_offset plus it (within int64 and the address space), and pointer. Null strides mean compact row-major; other strides (in elements) are used as given. For tx::cuda
/// under nvcc the tensor must be on the current device, and its pointer is checked as check_device_pointer does
/// in debug builds or with TEXPR_CHECK_DEVICE_POINTERS. The view does not own the memory: the tensor's owner
/// must keep it alive while the view (or anything evaluated lazily from it) is used. `stream` becomes the view's.
template <class T, std::size_t R, class B = host>
view<T, R, B> from_dlpack(const DLTensor& t, stream_t stream = nullptr) {
  static_assert(is_backend_v<B>, "texpr: from_dlpack's backend must be tx::host or tx::cuda");
  using V = std::remove_const_t<T>;
  const std::string who = "texpr: from_dlpack: ";
  constexpr DLDataType want = detail::dlpack_dtype<T>();
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1) {
    std::string detail_text = "code " + std::to_string(t.dtype.code) + ", " + std::to_string(t.dtype.bits) + " bits";
    if (t.dtype.lanes != 1) detail_text += ", " + std::to_string(t.dtype.lanes) + " lanes";
    throw interop_error(who + "expected dtype " + std::string(dtype_name_v<V>) + ", tensor has " +
                        detail::dlpack_dtype_name(t.dtype) + " (" + detail_text + ")");
  }
  if (t.ndim != static_cast<std::int32_t>(R))
    throw interop_error(who + "expected a rank-" + std::to_string(R) + " tensor, tensor has ndim " +
                        std::to_string(t.ndim));
  const std::int64_t type = detail::dlpack_device_code(t.device);
  if constexpr (std::is_same_v<B, host>) {
    if (type != kDLCPU && type != kDLCUDAHost)
      throw interop_error(who + "expected a kDLCPU tensor for tx::host, got " + detail::dlpack_device_text(type));
  } else {
    if (type != kDLCUDA && type != kDLCUDAManaged)
      throw interop_error(who + "expected a kDLCUDA tensor for tx::cuda, got " + detail::dlpack_device_text(type));
#if defined(__CUDACC__)
    int current = 0;
    TEXPR_CUDA_CHECK(cudaGetDevice(&current));
    if (type == kDLCUDA && t.device.device_id != current)
      throw interop_error(who + "the tensor is on cuda device " + std::to_string(t.device.device_id) +
                          ", the current device is " + std::to_string(current) + "; call cudaSetDevice(" +
                          std::to_string(t.device.device_id) + ") first");
#endif
  }
  if (t.byte_offset % sizeof(V) != 0)
    throw interop_error(who + "byte_offset " + std::to_string(t.byte_offset) + " is not a multiple of the " +
                        std::string(dtype_name_v<V>) + " size (" + std::to_string(sizeof(V)) + " bytes)");
  if (R != 0 && !t.shape) throw interop_error(who + "the tensor has ndim " + std::to_string(R) + " but no shape");
  shape_t<R> shape{};
  shape_t<R> strides{};
  for (std::size_t d = 0; d != R; ++d) {
    shape[d] = t.shape[d];
    if (shape[d] < 0)
      throw interop_error(who + "negative extent " + std::to_string(shape[d]) + " in dimension " + std::to_string(d));
  }
  const std::string problem = detail::shape_problem(shape, sizeof(V));
  if (!problem.empty()) throw interop_error(who + "shape " + texpr::to_string(shape) + " is " + problem);
  if (t.strides)
    for (std::size_t d = 0; d != R; ++d) strides[d] = t.strides[d];
  else
    strides = contiguous_strides(shape);
  const index_t size = shape_size(shape);
  T* p = detail::dlpack_first_element<V, R>(t, shape, strides, t.strides != nullptr, who);
  if (p) {
    if (reinterpret_cast<std::uintptr_t>(p) % alignof(V) != 0)
      throw interop_error(who + "data + byte_offset is not aligned for " + std::string(dtype_name_v<V>) + " (" +
                          std::to_string(alignof(V)) + " bytes)");
  } else if (size != 0) {
    throw interop_error(who + "null data for a tensor of shape " + texpr::to_string(shape));
  }
#if defined(__CUDACC__)
  if constexpr (std::is_same_v<B, cuda>) detail::auto_check_device_pointer(p, size, "from_dlpack");
#endif
  return view<T, R, B>(detail::unchecked_t{}, p, shape, strides, stream);
}

/// from_dlpack of a DLManagedTensor's tensor (legacy DLPack exchange). The view does not own the memory: the
/// caller keeps `m` alive while the view is used and calls m->deleter(m) afterwards, as the producer asked.
template <class T, std::size_t R, class B = host>
view<T, R, B> from_dlpack(const DLManagedTensor* m, stream_t stream = nullptr) {
  if (!m) throw interop_error("texpr: from_dlpack: null DLManagedTensor");
  return from_dlpack<T, R, B>(m->dl_tensor, stream);
}

/// Hands a tensor to a DLPack consumer: the result's manager_ctx owns the moved-in tensor and the shape and
/// strides arrays, and its deleter frees all of them, so the memory lives until the consumer calls deleter
/// (exactly once). For tx::cuda (nvcc only) the result names the tensor's device, and to_dlpack first waits for the
/// tensor's stream so that the consumer may read on any stream; the deleter releases the memory on that stream.
template <class T, std::size_t R, class B> DLManagedTensor* to_dlpack(tensor<T, R, B>&& t) {
  return detail::export_tensor<DLManagedTensor>(std::move(t));
}

/// Exports a view without ownership: the deleter frees only the shape and strides. The viewed memory must outlive
/// the consumer's use of the result. A view of const elements must not be written through by the consumer.
template <class T, std::size_t R, class B> DLManagedTensor* to_dlpack(const view<T, R, B>& v) {
  return detail::export_view<DLManagedTensor>(v);
}

/// Rejects a named tensor: to_dlpack takes ownership. Pass std::move(t), or export a non-owning t.view().
template <class T, std::size_t R, class B> DLManagedTensor* to_dlpack(const tensor<T, R, B>&) {
  static_assert(detail::always_false_v<T>, "texpr: to_dlpack takes ownership of a tensor: pass std::move(t), or "
                                           "export a non-owning t.view() that t outlives");
  return nullptr;
}

#if defined(DLPACK_MAJOR_VERSION)

/// from_dlpack of a DLManagedTensorVersioned (DLPack 1.x). Also throws interop_error when the major version
/// differs from this header's (the struct's layout is then unknown; the caller must still call its deleter) and
/// when the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY) but T is not const.
template <class T, std::size_t R, class B = host>
view<T, R, B> from_dlpack(const DLManagedTensorVersioned* m, stream_t stream = nullptr) {
  if (!m) throw interop_error("texpr: from_dlpack: null DLManagedTensorVersioned");
  if (m->version.major != DLPACK_MAJOR_VERSION)
    throw interop_error("texpr: from_dlpack: the tensor is DLPack " + std::to_string(m->version.major) + "." +
                        std::to_string(m->version.minor) + ", texpr was compiled with DLPack " +
                        std::to_string(DLPACK_MAJOR_VERSION) + ".x");
  if constexpr (!std::is_const_v<T>)
    if (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
      throw interop_error("texpr: from_dlpack: the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY); view it as "
                          "const " + std::string(dtype_name_v<T>));
  return from_dlpack<T, R, B>(m->dl_tensor, stream);
}

/// to_dlpack as a DLManagedTensorVersioned (DLPack 1.x); ownership as for to_dlpack(tensor&&).
template <class T, std::size_t R, class B> DLManagedTensorVersioned* to_dlpack_versioned(tensor<T, R, B>&& t) {
  DLManagedTensorVersioned* m = detail::export_tensor<DLManagedTensorVersioned>(std::move(t));
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  return m;
}

/// to_dlpack of a view as a DLManagedTensorVersioned; a view of const elements is flagged read-only.
template <class T, std::size_t R, class B> DLManagedTensorVersioned* to_dlpack_versioned(const view<T, R, B>& v) {
  DLManagedTensorVersioned* m = detail::export_view<DLManagedTensorVersioned>(v);
  m->version.major = DLPACK_MAJOR_VERSION;
  m->version.minor = DLPACK_MINOR_VERSION;
  if constexpr (std::is_const_v<T>) m->flags |= DLPACK_FLAG_BITMASK_READ_ONLY;
  return m;
}

/// Rejects a named tensor: to_dlpack_versioned takes ownership. Pass std::move(t), or export t.view().
template <class T, std::size_t R, class B> DLManagedTensorVersioned* to_dlpack_versioned(const tensor<T, R, B>&) {
  static_assert(detail::always_false_v<T>, "texpr: to_dlpack_versioned takes ownership of a tensor: pass "
                                           "std::move(t), or export a non-owning t.view() that t outlives");
  return nullptr;
}

#endif // DLPACK_MAJOR_VERSION

} // namespace texpr

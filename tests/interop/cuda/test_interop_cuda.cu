// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda interop routes: thrust::device_vector and thrust::device_ptr views in expressions, the device-pointer
// check (host memory rejected with its message; device, managed and pinned memory accepted), and DLPack on kDLCUDA
// (to_dlpack and from_dlpack round trips, host memory posing as kDLCUDA). Built with TEXPR_CHECK_DEVICE_POINTERS,
// so the interop entry points check their pointers in this Release build too. Skipped (exit 77) without a device.
#include "core/support.hpp"

#include <texpr/interop/pointer_check.hpp>
#include <texpr/interop/thrust.hpp>
#if TEXPR_TEST_DLPACK
#include <texpr/interop/dlpack.hpp>
#endif

#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/sequence.h>

#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <vector>

namespace {

template <class T> struct device_buffer {  // cudaMalloc'd memory, freed at scope end
  T* p = nullptr;
  explicit device_buffer(std::size_t n) {
    TEXPR_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    TEXPR_CUDA_CHECK(cudaMemset(p, 0, n * sizeof(T)));
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  ~device_buffer() { (void)cudaFree(p); }
};

int current_device() {
  int d = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

} // namespace

TEST_CASE("as_view of thrust::device_vector: values through texpr expressions, writes back into the vector") {
  thrust::device_vector<float> a(6);
  thrust::sequence(a.begin(), a.end());  // 0, 1, ..., 5
  thrust::device_vector<float> b(6, 10.0f);
  auto va = tx::as_view(a, {2, 3});
  static_assert(std::is_same_v<decltype(va), tx::view<float, 2, tx::cuda>>);
  CHECK(va.data() == thrust::raw_pointer_cast(a.data()));
  tx::tensor<float, 2, tx::cuda> c = va * 2.0f + tx::as_view(b, tx::shape_t<2>{2, 3});
  const auto hc = tx::to_host(c);
  for (tx::index_t i = 0; i < 2; ++i)
    for (tx::index_t j = 0; j < 3; ++j) CHECK(hc(i, j) == 2.0f * static_cast<float>(3 * i + j) + 10.0f);

  tx::as_view(b) = tx::as_view(a) + 1.0f;
  const thrust::host_vector<float> hb = b;
  CHECK(hb[0] == 1.0f);
  CHECK(hb[5] == 6.0f);

  const thrust::device_vector<float>& ca = a;
  static_assert(std::is_same_v<decltype(tx::as_view(ca)), tx::view<const float, 1, tx::cuda>>);
  CHECK(tx::sum(tx::as_view(ca)).item() == 15.0f);

  CHECK_THROWS_WITH_AS(tx::as_view(a, {4, 2}),
                       doctest::Contains("a thrust::device_vector of 6 elements cannot be viewed with shape (4, 2) "
                                         "(8 elements)"),
                       tx::shape_error);
  thrust::device_vector<double> empty;
  CHECK(tx::as_view(empty).size() == 0);  // null data, nothing to check
}

TEST_CASE("as_view of a thrust::device_ptr (a raw device pointer) with a shape") {
  device_buffer<double> mem(12);
  auto v = tx::as_view(thrust::device_pointer_cast(mem.p), {3, 4});
  static_assert(std::is_same_v<decltype(v), tx::view<double, 2, tx::cuda>>);
  v = v + 2.5;
  CHECK(tx::sum(v).item() == 30.0);
  auto cv = tx::as_view(thrust::device_ptr<const double>(mem.p), tx::shape_t<1>{12});
  static_assert(!decltype(cv)::writable);
  CHECK(tx::to_host(cv)(11) == 2.5);
}

TEST_CASE("check_device_pointer: host memory is rejected with its message, device memory accepted") {
  std::vector<float> host(12, 1.0f);
  CHECK_THROWS_WITH_AS(tx::check_device_pointer(host.data()),
                       doctest::Contains("expected device memory for tx::cuda, got host memory at"), tx::interop_error);
  CHECK_THROWS_WITH_AS(tx::check_device_pointer(host.data()), doctest::Contains("copy it with tx::to_device"),
                       tx::interop_error);
  CHECK_THROWS_WITH_AS(tx::as_view(thrust::device_pointer_cast(host.data()), {3, 4}),
                       doctest::Contains("as_view: expected device memory for tx::cuda, got host memory"),
                       tx::interop_error);
  CHECK_THROWS_WITH_AS(tx::check_device_pointer(nullptr), doctest::Contains("got a null pointer"), tx::interop_error);

  device_buffer<float> dev(4);
  CHECK_NOTHROW(tx::check_device_pointer(dev.p));
  CHECK_NOTHROW(tx::check_device_pointer(dev.p + 3));  // inside an allocation
  float* managed = nullptr;
  TEXPR_CUDA_CHECK(cudaMallocManaged(&managed, 4 * sizeof(float)));
  CHECK_NOTHROW(tx::check_device_pointer(managed));
  TEXPR_CUDA_CHECK(cudaFree(managed));
  float* pinned = nullptr;
  TEXPR_CUDA_CHECK(cudaMallocHost(&pinned, 4 * sizeof(float)));
  CHECK_NOTHROW(tx::check_device_pointer(pinned));  // mapped at the same address (unified addressing)
  TEXPR_CUDA_CHECK(cudaFreeHost(pinned));
  tx::tensor<float, 1, tx::cuda> t(tx::shape_t<1>{8});
  CHECK_NOTHROW(tx::check_device_pointer(t.data()));  // stream-ordered pool memory
}

#if TEXPR_TEST_DLPACK
TEST_CASE("DLPack on kDLCUDA: round trips, device id, host memory posing as device memory") {
  const int dev = current_device();
  const tx::tensor<float, 2> h({2, 3}, {1, 2, 3, 4, 5, 6});
  auto d = tx::to_device(h);
  const float* p = d.data();
  DLManagedTensor* m = tx::to_dlpack(std::move(d));
  CHECK(m->dl_tensor.data == p);
  CHECK(m->dl_tensor.device.device_type == kDLCUDA);
  CHECK(m->dl_tensor.device.device_id == dev);
  auto v = tx::from_dlpack<float, 2, tx::cuda>(m);
  CHECK(v.data() == p);
  tx::tensor<float, 2, tx::cuda> r = v * 2.0f;
  const auto hr = tx::to_host(r);
  CHECK(hr(1, 2) == 12.0f);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 2>(m)),
                       doctest::Contains("expected a kDLCPU tensor for tx::host, got kDLCUDA"), tx::interop_error);

  thrust::device_vector<float> dv(4, 3.0f);
  DLManagedTensor* mv = tx::to_dlpack(tx::as_view(dv));
  CHECK(mv->dl_tensor.data == thrust::raw_pointer_cast(dv.data()));
  CHECK(mv->dl_tensor.device.device_id == dev);
  CHECK(tx::sum(tx::from_dlpack<const float, 1, tx::cuda>(mv)).item() == 12.0f);
  mv->deleter(mv);
  m->deleter(m);
  CHECK(tx::detail::dlpack_exports_alive.load() == 0);

  // Host memory that a producer labels kDLCUDA: the pointer check catches it.
  std::vector<float> host(4);
  std::int64_t shape[1] = {4};
  DLTensor t{};
  t.data = host.data();
  t.device.device_type = kDLCUDA;
  t.device.device_id = dev;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1, tx::cuda>(t)),
                       doctest::Contains("from_dlpack: expected device memory for tx::cuda, got host memory"),
                       tx::interop_error);
  t.device.device_id = dev + 1;
  const std::string other_device = "the tensor is on cuda device " + std::to_string(dev + 1);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1, tx::cuda>(t)), doctest::Contains(other_device.c_str()),
                       tx::interop_error);
  // Managed memory, as kDLCUDAManaged.
  float* managed = nullptr;
  TEXPR_CUDA_CHECK(cudaMallocManaged(&managed, 4 * sizeof(float)));
  for (int i = 0; i < 4; ++i) managed[i] = static_cast<float>(i);
  t.data = managed;
  t.device.device_type = kDLCUDAManaged;
  t.device.device_id = 0;
  CHECK(tx::sum(tx::from_dlpack<float, 1, tx::cuda>(t)).item() == 6.0f);
  TEXPR_CUDA_CHECK(cudaFree(managed));
}
#else
TEST_CASE("DLPack on kDLCUDA") {
  MESSAGE("dlpack.h not found: DLPack tests skipped");
}
#endif

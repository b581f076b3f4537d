// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack exchange (include/texpr/interop/dlpack.hpp): round trips through to_dlpack and from_dlpack, hand-built
// DLTensors (null and explicit strides, byte_offset), every check's message, and who frees what. Built with the
// DLPack tests only when CMake finds dlpack/dlpack.h (TEXPR_TEST_DLPACK=1); otherwise one case says they were skipped.
#include "core/support.hpp"

#if TEXPR_TEST_DLPACK

#include <texpr/interop/dlpack.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

/// A DLManagedTensor built by hand over user memory, its deleter counting calls (the producer side of a test).
struct hand_made {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  DLManagedTensor managed{};
  int deleted = 0;

  hand_made(void* data, DLDataType dtype, std::vector<std::int64_t> s, std::vector<std::int64_t> st = {},
            DLDeviceType device = kDLCPU)
      : shape(std::move(s)), strides(std::move(st)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device.device_type = device;
    t.device.device_id = 0;
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<hand_made*>(self->manager_ctx)->deleted; };
  }
  hand_made(const hand_made&) = delete;
  hand_made& operator=(const hand_made&) = delete;
  DLTensor& tensor() { return managed.dl_tensor; }
};

DLDataType dl(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) {
  DLDataType d{};
  d.code = code;
  d.bits = bits;
  d.lanes = lanes;
  return d;
}

std::ptrdiff_t alive() { return tx::detail::dlpack_exports_alive.load(); }

template <class T> T value(int i) {
  if constexpr (std::is_same_v<T, bool>) return i % 2 == 1;
  else if constexpr (tx::is_float16_v<T>) return T(static_cast<float>(i) * 0.5f);
  else return static_cast<T>(i * 3 - 4);
}

template <class T> bool same(T a, T b) {
  if constexpr (tx::is_float16_v<T>) return a.bits == b.bits;
  else return a == b;
}

static_assert(std::is_same_v<decltype(tx::from_dlpack<const float, 2>(std::declval<const DLManagedTensor*>())),
                             tx::view<const float, 2, tx::host>>);
static_assert(std::is_same_v<decltype(tx::from_dlpack<float, 1, tx::cuda>(std::declval<const DLManagedTensor*>())),
                             tx::view<float, 1, tx::cuda>>);
static_assert(std::is_same_v<decltype(tx::to_dlpack(std::declval<tx::tensor<float, 2>&&>())), DLManagedTensor*>);

} // namespace

TEST_CASE("a tensor through to_dlpack and back: same memory, same values, freed by the deleter") {
  const std::ptrdiff_t before = alive();
  tx::tensor<float, 2> t({2, 3}, {1, 2, 3, 4, 5, 6});
  const float* p = t.data();
  DLManagedTensor* m = tx::to_dlpack(std::move(t));
  CHECK(t.empty());  // NOLINT(bugprone-use-after-move): the export owns the storage now
  CHECK(alive() == before + 1);

  const DLTensor& d = m->dl_tensor;
  CHECK(d.data == p);
  CHECK(d.device.device_type == kDLCPU);
  CHECK(d.device.device_id == 0);
  CHECK(d.ndim == 2);
  CHECK(d.dtype.code == kDLFloat);
  CHECK(d.dtype.bits == 32);
  CHECK(d.dtype.lanes == 1);
  CHECK(d.shape[0] == 2);
  CHECK(d.shape[1] == 3);
  REQUIRE(d.strides != nullptr);  // DLPack 1.2 requires strides when ndim > 0
  CHECK(d.strides[0] == 3);
  CHECK(d.strides[1] == 1);
  CHECK(d.byte_offset == 0);
  CHECK(m->manager_ctx != nullptr);

  auto v = tx::from_dlpack<float, 2>(m);
  CHECK(v.data() == p);
  CHECK(v.shape() == tx::shape_t<2>{2, 3});
  CHECK(v.strides() == tx::shape_t<2>{3, 1});
  CHECK(v(1, 2) == 6.0f);
  v(0, 0) = 10.0f;  // writes reach the exported storage
  CHECK(static_cast<const float*>(d.data)[0] == 10.0f);
  tx::tensor<float, 2> twice = v * 2.0f;
  CHECK(twice(0, 0) == 20.0f);
  CHECK(twice(1, 1) == 10.0f);
  auto cv = tx::from_dlpack<const float, 2>(m);
  static_assert(!decltype(cv)::writable);
  CHECK(cv.data() == p);

  m->deleter(m);
  CHECK(alive() == before);
}

TEST_CASE_TEMPLATE("every texpr dtype round trips with its DLPack code", T, float, double, std::int32_t, std::int64_t,
                   bool, tx::half, tx::bfloat16) {
  tx::tensor<T, 1> t({5});
  for (int i = 0; i != 5; ++i) t(i) = value<T>(i);
  const T* p = t.data();
  DLManagedTensor* m = tx::to_dlpack(std::move(t));
  const DLDataType want = tx::detail::dlpack_dtype<T>();
  CHECK(m->dl_tensor.dtype.code == want.code);
  CHECK(m->dl_tensor.dtype.bits == 8 * sizeof(T));
  if constexpr (std::is_same_v<T, tx::half>) CHECK(want.code == kDLFloat);
  if constexpr (std::is_same_v<T, tx::bfloat16>) CHECK(want.code == kDLBfloat);
  if constexpr (std::is_same_v<T, bool>) CHECK(want.code == tx::detail::dlpack_bool_code);
  auto v = tx::from_dlpack<const T, 1>(m);
  CHECK(v.data() == p);
  for (int i = 0; i != 5; ++i) CHECK(same(v(i), value<T>(i)));
  m->deleter(m);
}

TEST_CASE("to_dlpack of a view exports without owning; its deleter frees only the metadata") {
  const std::ptrdiff_t before = alive();
  std::vector<double> mem = {1, 2, 3, 4, 5, 6};
  // Column-major 3x2 over mem: element (i, j) at i + 3 j.
  tx::view<double, 2> colmajor(mem.data(), {3, 2}, {1, 3});
  DLManagedTensor* m = tx::to_dlpack(colmajor);
  CHECK(alive() == before + 1);
  CHECK(m->dl_tensor.data == mem.data());
  CHECK(m->dl_tensor.strides[0] == 1);
  CHECK(m->dl_tensor.strides[1] == 3);
  auto back = tx::from_dlpack<double, 2>(m);
  CHECK(back(2, 1) == 6.0);
  CHECK(back(1, 0) == 2.0);
  m->deleter(m);
  CHECK(alive() == before);
  CHECK(mem[5] == 6.0);  // the memory is the user's, untouched

  // A read-only view and a rank-0 tensor export too.
  const std::vector<double>& cmem = mem;
  DLManagedTensor* c = tx::to_dlpack(tx::view<const double, 1>(cmem.data(), {6}));
  CHECK(c->dl_tensor.data == mem.data());
  c->deleter(c);
  tx::tensor<std::int64_t, 0> s(tx::shape_t<0>{});
  DLManagedTensor* z = tx::to_dlpack(std::move(s));
  CHECK(z->dl_tensor.ndim == 0);
  CHECK(tx::from_dlpack<std::int64_t, 0>(z).item() == 0);
  z->deleter(z);
  // An empty tensor: null data, size 0.
  DLManagedTensor* e = tx::to_dlpack(tx::tensor<float, 2>());
  CHECK(e->dl_tensor.data == nullptr);
  CHECK(tx::from_dlpack<float, 2>(e).size() == 0);
  e->deleter(e);
  CHECK(alive() == before);
}

TEST_CASE("hand-built DLTensors: null strides, explicit strides, byte_offset") {
  std::array<float, 8> mem = {0, 1, 2, 3, 4, 5, 6, 7};
  SUBCASE("null strides mean compact row-major") {
    hand_made h(mem.data(), dl(kDLFloat, 32), {2, 4});
    auto v = tx::from_dlpack<float, 2>(&h.managed);
    CHECK(v.strides() == tx::shape_t<2>{4, 1});
    CHECK(v(1, 2) == 6.0f);
  }
  SUBCASE("explicit strides, in elements, are used as given") {
    hand_made h(mem.data(), dl(kDLFloat, 32), {4, 2}, {1, 4});  // column-major 4x2
    auto v = tx::from_dlpack<const float, 2>(&h.managed);
    CHECK(v.strides() == tx::shape_t<2>{1, 4});
    CHECK(v(3, 1) == 7.0f);
    CHECK(v(1, 0) == 1.0f);
    tx::tensor<float, 2> t = v + 0.0f;  // an evaluation through the strides
    CHECK(t(2, 1) == 6.0f);
    hand_made every_other(mem.data(), dl(kDLFloat, 32), {4}, {2});
    CHECK(tx::from_dlpack<float, 1>(&every_other.managed)(3) == 6.0f);
  }
  SUBCASE("byte_offset moves the first element") {
    hand_made h(mem.data(), dl(kDLFloat, 32), {2, 2});
    h.tensor().byte_offset = 3 * sizeof(float);
    auto v = tx::from_dlpack<float, 2>(&h.managed);
    CHECK(v.data() == mem.data() + 3);
    CHECK(v(0, 0) == 3.0f);
    CHECK(v(1, 1) == 6.0f);
  }
  SUBCASE("the stream argument becomes the view's") {
    hand_made h(mem.data(), dl(kDLFloat, 32), {8});
    auto* s = reinterpret_cast<tx::stream_t>(std::uintptr_t{0x10});
    CHECK(tx::from_dlpack<float, 1>(&h.managed, s).stream() == s);
  }
  SUBCASE("pinned host memory (kDLCUDAHost) is host memory") {
    hand_made h(mem.data(), dl(kDLFloat, 32), {8}, {}, kDLCUDAHost);
    CHECK(tx::from_dlpack<float, 1>(&h.managed)(7) == 7.0f);
  }
}

TEST_CASE("from_dlpack never calls the producer's deleter; the caller calls it once") {
  std::vector<std::int32_t> mem = {1, 2, 3};
  hand_made h(mem.data(), dl(kDLInt, 32), {3});
  {
    auto v = tx::from_dlpack<std::int32_t, 1>(&h.managed);
    tx::tensor<std::int32_t, 1> t = v * 2;
    CHECK(t(2) == 6);
  }
  CHECK(h.deleted == 0);
  h.managed.deleter(&h.managed);
  CHECK(h.deleted == 1);
}

TEST_CASE("from_dlpack's checks name what differs") {
  std::array<std::int64_t, 8> mem{};
  hand_made h(mem.data(), dl(kDLInt, 64), {2, 4});
  using Err = tx::interop_error;
  static_assert(std::is_base_of_v<std::invalid_argument, Err>);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 2>(&h.managed)),
                       doctest::Contains("from_dlpack: expected dtype float32, tensor has int64 (code 0, 64 bits)"),
                       Err);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int32_t, 2>(&h.managed)),
                       doctest::Contains("expected dtype int32, tensor has int64 (code 0, 64 bits)"), Err);
  h.tensor().dtype = dl(kDLFloat, 32, 4);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 2>(&h.managed)),
                       doctest::Contains("expected dtype float32, tensor has float32x4 (code 2, 32 bits, 4 lanes)"),
                       Err);
  h.tensor().dtype = dl(kDLFloat, 16);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<tx::bfloat16, 2>(&h.managed)),
                       doctest::Contains("expected dtype bfloat16, tensor has float16 (code 2, 16 bits)"), Err);
  h.tensor().dtype = dl(kDLUInt, 16);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<tx::half, 2>(&h.managed)),
                       doctest::Contains("expected dtype float16, tensor has uint16 (code 1, 16 bits)"), Err);
  h.tensor().dtype = dl(kDLInt, 64);

  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 3>(&h.managed)),
                       doctest::Contains("expected a rank-3 tensor, tensor has ndim 2"), Err);

  h.tensor().device.device_type = kDLCUDA;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("expected a kDLCPU tensor for tx::host, got kDLCUDA"), Err);
  h.tensor().device.device_type = kDLCUDAManaged;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("expected a kDLCPU tensor for tx::host, got kDLCUDAManaged"), Err);
  h.tensor().device.device_type = kDLCPU;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2, tx::cuda>(&h.managed)),
                       doctest::Contains("expected a kDLCUDA tensor for tx::cuda, got kDLCPU"), Err);
  h.tensor().device.device_type = kDLROCM;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2, tx::cuda>(&h.managed)),
                       doctest::Contains("expected a kDLCUDA tensor for tx::cuda, got kDLROCM"), Err);
  h.tensor().device.device_type = kDLCPU;

  h.tensor().byte_offset = 12;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("byte_offset 12 is not a multiple of the int64 size (8 bytes)"), Err);
  h.tensor().byte_offset = 0;

  h.tensor().shape[1] = -4;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("negative extent -4 in dimension 1"), Err);
  h.tensor().shape[1] = 4;

  h.tensor().data = nullptr;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("null data for a tensor of shape (2, 4)"), Err);
  h.tensor().data = reinterpret_cast<char*>(mem.data()) + 1;  // a misaligned producer
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)),
                       doctest::Contains("data + byte_offset is not aligned for int64 (8 bytes)"), Err);
  h.tensor().data = mem.data();

  h.tensor().shape = nullptr;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<std::int64_t, 2>(&h.managed)), doctest::Contains("ndim 2 but no shape"), Err);
  h.tensor().shape = h.shape.data();

  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(static_cast<const DLManagedTensor*>(nullptr))),
                       doctest::Contains("null DLManagedTensor"), Err);
  CHECK(tx::from_dlpack<std::int64_t, 2>(&h.managed).size() == 8);  // the tensor itself was never broken
  CHECK(h.deleted == 0);
}

TEST_CASE("from_dlpack: element counts that wrap to 0 over null data are rejected, naming the shape") {
  constexpr std::int64_t p32 = std::int64_t(1) << 32;
  hand_made h(nullptr, dl(kDLFloat, 32), {p32, p32});
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 2>(&h.managed)), doctest::Contains("shape (4294967296, 4294967296) is too large"),
                       tx::interop_error);
  h.tensor().shape[0] = 0;  // (0, 2^32): empty, over null data, is fine
  CHECK(tx::from_dlpack<float, 2>(&h.managed).size() == 0);
  const std::int64_t p62 = std::int64_t(1) << 62;
  hand_made z(nullptr, dl(kDLFloat, 32), {0, p62, p62});
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 3>(&z.managed)), doctest::Contains("too large"), tx::interop_error);
}

TEST_CASE("from_dlpack: strides and byte_offset whose byte span overflows, and unknown device codes, are rejected") {
  std::array<float, 4> mem{};
  const std::int64_t p = std::int64_t(1) << 61;
  hand_made h(mem.data(), dl(kDLFloat, 32), {4}, {p});
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("strides (2305843009213693952,)"),
                       tx::interop_error);
  h.tensor().strides[0] = -p;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("strides"), tx::interop_error);
  h.tensor().strides[0] = std::int64_t(1) << 60;  // 3 * 2^60 elements fit in int64, their 4-byte span does not
  CHECK_THROWS_AS((tx::from_dlpack<float, 1>(&h.managed)), tx::interop_error);
  h.tensor().strides[0] = 1;

  h.tensor().byte_offset = std::uint64_t(1) << 63;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("byte_offset 9223372036854775808"),
                       tx::interop_error);
  // 2^62 bytes in, then a stride that reaches 2^62 bytes further: the end offset overflows int64.
  h.tensor().byte_offset = std::uint64_t(1) << 62;
  h.tensor().shape[0] = 2;
  h.tensor().strides[0] = std::int64_t(1) << 60;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("byte_offset 4611686018427387904"),
                       tx::interop_error);
  // A pointer whose offset wraps the address space (never dereferenced: the check is on integers).
  h.tensor().strides[0] = 1;
  h.tensor().data = reinterpret_cast<void*>(UINTPTR_MAX - 15);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("leaves the address space"),
                       tx::interop_error);
  h.tensor().data = mem.data();
  h.tensor().byte_offset = 4;
  h.tensor().shape[0] = 3;
  CHECK(tx::from_dlpack<float, 1>(&h.managed).data() == mem.data() + 1);

  // A device code DLPack does not define is read as an integer, never as an out-of-range enumerator.
  const std::int32_t unknown = 99;
  static_assert(sizeof(h.tensor().device.device_type) == sizeof(unknown));
  std::memcpy(&h.tensor().device.device_type, &unknown, sizeof(unknown));
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(&h.managed)), doctest::Contains("unknown device_type code 99"),
                       tx::interop_error);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1, tx::cuda>(&h.managed)), doctest::Contains("unknown device_type code 99"),
                       tx::interop_error);
}

TEST_CASE("a tx::cuda view of a kDLCUDA tensor, in a host translation unit (no device checks without nvcc)") {
  std::array<float, 4> fake{};  // never read: the view is only built
  hand_made h(fake.data(), dl(kDLFloat, 32), {4}, {}, kDLCUDA);
  auto v = tx::from_dlpack<float, 1, tx::cuda>(&h.managed);
  CHECK(v.data() == fake.data());
  h.tensor().device.device_type = kDLCUDAManaged;
  CHECK(tx::from_dlpack<const float, 1, tx::cuda>(&h.managed).size() == 4);
}

#if defined(DLPACK_MAJOR_VERSION)
TEST_CASE("DLManagedTensorVersioned (DLPack 1.x): version, read-only flag") {
  const std::ptrdiff_t before = alive();
  tx::tensor<float, 1> t({3}, {1, 2, 3});
  DLManagedTensorVersioned* m = tx::to_dlpack_versioned(std::move(t));
  CHECK(m->version.major == DLPACK_MAJOR_VERSION);
  CHECK(m->version.minor == DLPACK_MINOR_VERSION);
  CHECK(m->flags == 0);
  CHECK(tx::from_dlpack<float, 1>(m)(2) == 3.0f);
  std::vector<float> mem = {4, 5};
  DLManagedTensorVersioned* r = tx::to_dlpack_versioned(tx::view<const float, 1>(mem.data(), {2}));
  CHECK((r->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  CHECK(tx::from_dlpack<const float, 1>(r)(1) == 5.0f);
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(r)), doctest::Contains("read-only (DLPACK_FLAG_BITMASK_READ_ONLY)"),
                       tx::interop_error);
  m->version.major = DLPACK_MAJOR_VERSION + 1;
  CHECK_THROWS_WITH_AS((tx::from_dlpack<float, 1>(m)), doctest::Contains("texpr was compiled with DLPack"),
                       tx::interop_error);
  m->deleter(m);
  r->deleter(r);
  CHECK(alive() == before);
}
#endif

#else // TEXPR_TEST_DLPACK

TEST_CASE("DLPack") {
  MESSAGE("dlpack.h not found: DLPack tests skipped");
}

#endif // TEXPR_TEST_DLPACK

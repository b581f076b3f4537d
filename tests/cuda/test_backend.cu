// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cuda backend beyond the registry table: device info, streams (evaluation never waits for the device, and
// every read or write of a tensor uses its stream), errors (out of memory, shapes), views over foreign device memory,
// strided and aliased destinations, empty inputs, NaN in reductions, the reduction paths by line length and by
// column layout, tensors of more than 2^31 elements, TF32 and half/bfloat16 matmul at larger sizes, 16-bit
// elementwise bitwise against the per-element rule on every path, broadcast elementwise on the rows kernel and its
// fallbacks, bias gradients written beside the delta they sum, and the cuSOLVER (and cuBLAS trsm, and lstsq's GEMMs)
// linalg rows against the host's LAPACK ones.
#include "cuda/support.cuh"

#include <texpr/linalg.hpp>

#include <thrust/device_vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using cutest::dev;
using test::ld;

__global__ void spin_until(volatile int* flag, long long max_cycles) {
  const long long start = clock64();
  while (*flag == 0 && clock64() - start < max_cycles) {
  }
}

struct stream_guard {
  cudaStream_t s = nullptr;
  stream_guard() { TEXPR_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  stream_guard(const stream_guard&) = delete;
  stream_guard& operator=(const stream_guard&) = delete;
  ~stream_guard() { (void)cudaStreamDestroy(s); }
};

/// A host-mapped flag and a kernel spinning on it: blocks a stream until release() (or about 10 s).
struct stream_blocker {
  int* flag = nullptr;
  int* dflag = nullptr;
  explicit stream_blocker(cudaStream_t s) {
    TEXPR_CUDA_CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    *flag = 0;
    TEXPR_CUDA_CHECK(cudaHostGetDevicePointer(&dflag, flag, 0));
    spin_until<<<1, 1, 0, s>>>(dflag, 20'000'000'000LL);
    TEXPR_CUDA_CHECK_LAUNCH();
  }
  stream_blocker(const stream_blocker&) = delete;
  stream_blocker& operator=(const stream_blocker&) = delete;
  void release() { *reinterpret_cast<volatile int*>(flag) = 1; }
  ~stream_blocker() {
    release();
    (void)cudaDeviceSynchronize();
    (void)cudaFreeHost(flag);
  }
};

/// Sum (mean when `mean`) of x along `axis` on the device, from x's own aligned buffer (dense rows of a multiple
/// of the vector width take the 16-byte column tiles) and from the same values one element past it (dense but
/// unaligned: per-column cursors). Both must equal bitwise (one fold order per column) and match a long double sum;
/// Fused: reads exp(x) * 2 instead of x.
template <class T, std::size_t R, bool Fused = false>
void check_columns(const tx::shape_t<R>& s, std::size_t axis, bool mean = false) {
  INFO(tx::dtype_name_v<T>, " ", tx::to_string(s), " axis ", axis, mean ? " mean" : " sum",
       Fused ? " of exp(x) * 2" : "");
  const auto h = test::random<T, R>(s);
  const auto aligned = dev(h);
  tx::tensor<T, 1> hs(tx::shape_t<1>{h.size() + 1});
  hs.data()[0] = T(0);
  std::copy(h.data(), h.data() + h.size(), hs.data() + 1);
  const auto shifted_buffer = dev(hs);
  const tx::view<const T, R, tx::cuda> shifted(shifted_buffer.data() + 1, s);
  const auto ax = static_cast<tx::index_t>(axis);
  const auto reduce = [&](const auto& x) {
    if constexpr (Fused)
      return mean ? tx::to_host(tx::mean(tx::exp(x) * T(2), ax)) : tx::to_host(tx::sum(tx::exp(x) * T(2), ax));
    else return mean ? tx::to_host(tx::mean(x, ax)) : tx::to_host(tx::sum(x, ax));
  };
  const auto vec = reduce(std::as_const(aligned).view());
  const auto scalar = reduce(shifted);
  tx::index_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= s[d];
  for (std::size_t d = axis + 1; d < R; ++d) inner *= s[d];
  const tx::index_t len = s[axis];
  REQUIRE(vec.size() == outer * inner);
  int failures = 0;
  for (tx::index_t o = 0; o < outer; ++o)
    for (tx::index_t j = 0; j < inner; ++j) {
      ld want = 0, mag = 0;
      for (tx::index_t l = 0; l < len; ++l) {
        const ld v = test::wide(h.data()[(o * len + l) * inner + j]);
        const ld x = Fused ? 2 * std::exp(v) : v;
        want += x;
        mag += std::fabs(x);
      }
      if (mean) {
        want /= len;
        mag /= len;
      }
      const T got = vec.data()[o * inner + j], other = scalar.data()[o * inner + j];
      if (!test::close(got, want, mag) || std::memcmp(&got, &other, sizeof(T)) != 0) {
        if (++failures <= 3)
          FAIL_CHECK("output (", o, ", ", j, "): 16-byte path ", static_cast<double>(test::wide(got)), ", scalar path ",
                     static_cast<double>(test::wide(other)), ", want ", static_cast<double>(want));
      }
    }
  REQUIRE(failures == 0);
}

} // namespace

TEST_CASE("cuda_device_info describes the current device") {
  REQUIRE(tx::cuda_device_available());
  CHECK(tx::cuda_unavailable_reason().empty());
  const auto info = tx::cuda_device_info();
  MESSAGE("device: ", info.name, " sm_", info.major, info.minor, ", ", info.multiprocessors, " SMs, ",
          info.total_memory >> 20, " MiB, fp32/fp64 ratio ", info.fp32_to_fp64_ratio);
  CHECK(!info.name.empty());
  CHECK(info.major >= 5);
  CHECK(info.total_memory > 0);
  CHECK(info.multiprocessors > 0);
  CHECK(info.fp64_full_rate == (info.fp32_to_fp64_ratio > 0 && info.fp32_to_fp64_ratio <= 2));
  CHECK_THROWS_AS(tx::cuda_device_info(tx::cuda_device_count()), tx::cuda_error);
}

TEST_CASE("a fused graph with a reduction inside runs on the device") {
  auto h = test::random<float, 2>({37, 129});
  auto x = dev(h);
  auto graph = tx::sigmoid(x - tx::mean(x)) * 2.0f + tx::sum(x, 0);
  static_assert(tx::runs_on<decltype(graph), tx::cuda>);
  const std::string report = tx::placement(graph);
  CHECK(report.find("fused_elementwise") != std::string::npos);
  CHECK(report.find("block_reduce") != std::string::npos);
  const auto got = tx::to_host(graph);
  ld mean = 0;
  for (tx::index_t i = 0; i < h.size(); ++i) mean += h.data()[i];
  mean /= static_cast<ld>(h.size());
  for (tx::index_t i = 0; i < 37; ++i)
    for (tx::index_t j = 0; j < 129; ++j) {
      ld col = 0;
      for (tx::index_t r = 0; r < 37; ++r) col += h(r, j);
      const ld want = 2 / (1 + std::exp(-(h(i, j) - mean))) + col;
      REQUIRE(test::close(got(i, j), want, 37));
    }
}

TEST_CASE("destinations: strided views, unaligned views, in-place updates and aliasing") {
  auto ha = test::random<float, 2>({64, 48});
  auto a = dev(ha);
  SUBCASE("in place: a = a * 2 + 1 reads each element where it writes it") {
    a = a * 2.0f + 1.0f;
    const auto got = tx::to_host(a);
    for (tx::index_t i = 0; i < ha.size(); ++i) REQUIRE(got.data()[i] == ha.data()[i] * 2.0f + 1.0f);
  }
  SUBCASE("a square transpose into itself goes through a temporary") {
    auto hs = test::random<float, 2>({33, 33});
    auto s = dev(hs);
    s = tx::transpose(s) + 0.0f;
    const auto got = tx::to_host(s);
    for (tx::index_t i = 0; i < 33; ++i)
      for (tx::index_t j = 0; j < 33; ++j) REQUIRE(got(i, j) == hs(j, i));
  }
  SUBCASE("writing through a slice (every other column)") {
    tx::slice(a, 1, 0, 48, 2) = tx::slice(a, 1, 0, 48, 2) * 0.0f + tx::max(tx::slice(a, 1, 0, 48, 2), 0) * 0.0f + 5.0f;
    const auto got = tx::to_host(a);
    for (tx::index_t i = 0; i < 64; ++i)
      for (tx::index_t j = 0; j < 48; ++j) REQUIRE(got(i, j) == (j % 2 == 0 ? 5.0f : ha(i, j)));
  }
  SUBCASE("an axis reduction into a strided view is buffered") {
    // Row maxima (64, 1) into column 0 of a (64, 2) tensor: a destination with a stride of 2; column 1 untouched.
    tx::tensor<float, 2, tx::cuda> out(tx::shape_t<2>{64, 2});
    tx::slice(out, 1, 1, 2) = tx::full<tx::cuda>(tx::shape_t<2>{64, 1}, -7.0f);
    tx::slice(out, 1, 0, 1) = tx::max(a, 1, tx::keepdims);
    const auto got = tx::to_host(out);
    for (tx::index_t i = 0; i < 64; ++i) {
      float m = ha(i, 0);
      for (tx::index_t j = 1; j < 48; ++j) m = std::max(m, ha(i, j));
      REQUIRE(got(i, 0) == m);
      REQUIRE(got(i, 1) == -7.0f);
    }
  }
  SUBCASE("unaligned operands and destination take the scalar path") {
    const tx::view<const float, 1, tx::cuda> src(a.data() + 1, {1001});
    tx::tensor<float, 1, tx::cuda> buf(tx::shape_t<1>{1003});
    tx::view<float, 1, tx::cuda> dst(buf.data() + 1, {1001});
    dst = tx::exp(src);
    const auto got = tx::to_host(buf);
    for (tx::index_t i = 0; i < 1001; ++i) REQUIRE(test::close(got(i + 1), std::exp(test::wide(ha.data()[i + 1]))));
    CHECK(got(0) == 0.0f);
    CHECK(got(1002) == 0.0f);
  }
}

TEST_CASE("empty inputs and rank-0 results") {
  tx::tensor<float, 2, tx::cuda> e(tx::shape_t<2>{0, 5});
  CHECK(tx::sum(e).item() == 0.0f);
  CHECK(std::isnan(tx::mean(e).item()));
  CHECK(tx::prod(e).item() == 1.0f);
  CHECK_THROWS_AS(tx::max(e).item(), tx::shape_error);
  const auto s0 = tx::to_host(tx::sum(e, 0));
  REQUIRE(s0.shape() == tx::shape_t<1>{5});
  for (tx::index_t j = 0; j < 5; ++j) CHECK(s0(j) == 0.0f);
  CHECK(tx::to_host(tx::sum(e, 1)).size() == 0);
  tx::tensor<float, 2, tx::cuda> f = tx::exp(e);
  CHECK(f.size() == 0);
  auto h = test::random<double, 1>({5});
  auto d = dev(h);
  tx::tensor<double, 0, tx::cuda> r = tx::sum(d) * 2.0;
  CHECK(test::close(tx::to_host(r)(), 2 * (test::wide(h(0)) + h(1) + h(2) + h(3) + h(4))));
}

TEST_CASE("NaN propagates through max, min, maximum and minimum on the device") {
  auto h = test::random<float, 2>({70, 1500});
  h(3, 7) = std::numeric_limits<float>::quiet_NaN();  // in row 3 and column 7
  const auto x = dev(h);
  CHECK(std::isnan(tx::max(x).item()));
  CHECK(std::isnan(tx::min(x).item()));
  const auto rows = tx::to_host(tx::max(x, 1));
  const auto cols = tx::to_host(tx::min(x, 0));
  for (tx::index_t i = 0; i < 70; ++i) CHECK(std::isnan(rows(i)) == (i == 3));
  for (tx::index_t j = 0; j < 1500; ++j) CHECK(std::isnan(cols(j)) == (j == 7));
  tx::tensor<float, 1> a({4}, {1, std::numeric_limits<float>::quiet_NaN(), 3, -0.0f});
  tx::tensor<float, 1> b({4}, {std::numeric_limits<float>::quiet_NaN(), 2, 1, 0.0f});
  const auto mx = tx::to_host(tx::maximum(dev(a), dev(b)));
  const auto mn = tx::to_host(tx::minimum(dev(a), dev(b)));
  CHECK(std::isnan(mx(0)));
  CHECK(std::isnan(mx(1)));
  CHECK(mx(2) == 3.0f);
  CHECK(std::isnan(mn(0)));
  CHECK(std::isnan(mn(1)));
  CHECK(mn(2) == 1.0f);
  CHECK(std::signbit(mx(3)));  // ties return the first operand (-0), as documented
}

TEST_CASE("last-axis reductions on every path: a warp per line, a block per line, and split lines") {
  // 1025..8192-element lines with few rows take one block per line in a single pass; longer lines with few rows are
  // split into chunks and combined in a second pass; short lines take a warp each.
  for (const tx::shape_t<2> s : {tx::shape_t<2>{8, 1025}, tx::shape_t<2>{64, 4000}, tx::shape_t<2>{3, 8192},
                                 tx::shape_t<2>{2, 100000}, tx::shape_t<2>{1000, 300}}) {
    INFO("shape ", tx::to_string(s));
    auto h = test::random<double, 2>(s);
    const auto got = tx::to_host(tx::sum(dev(h), 1));
    for (tx::index_t i = 0; i < s[0]; ++i) {
      ld want = 0, mag = 0;
      for (tx::index_t j = 0; j < s[1]; ++j) {
        want += h(i, j);
        mag += std::fabs(test::wide(h(i, j)));
      }
      REQUIRE(test::close(got(i), want, mag));
    }
  }
}

TEST_CASE("non-last-axis reductions: 16-byte column tiles, bitwise equal to the scalar column path") {
  // [128, 256] over axis 0: a bias gradient. The rank-3 axis-0 sums and means are small 64 x 1024 x 1024 ones.
  check_columns<float, 2>({128, 256}, 0);
  check_columns<float, 3>({64, 96, 100}, 0);
  check_columns<float, 3>({64, 96, 100}, 0, true);
  check_columns<float, 3>({5, 40, 72}, 1);
  check_columns<float, 2, true>({256, 132}, 0);  // fused: each memory leaf read in vector loads
  // Few columns and a long axis: the axis is split into chunks and combined in a second pass.
  check_columns<float, 2>({3000, 200}, 0);
  check_columns<tx::half, 2>({1000, 24}, 0, true);
  // A row length that is no multiple of 4 floats (scalar path on both sides) but of 2 doubles.
  check_columns<float, 2>({37, 1030}, 0);
  check_columns<double, 2>({37, 1030}, 0);
  // 16-bit dtypes: 8 columns per load and 256-column tiles (the last one partly past the end: 264 columns).
  check_columns<tx::half, 2>({300, 264}, 0);
  check_columns<tx::bfloat16, 3>({5, 40, 72}, 1);
  check_columns<tx::bfloat16, 2>({700, 8}, 0);
}

TEST_CASE("casts from bfloat16 and half round-trip through every dtype") {
  tx::tensor<tx::bfloat16, 1> hb({6}, {tx::bfloat16(1.5f), tx::bfloat16(-2.75f), tx::bfloat16(1e30f), tx::bfloat16(-0.0f),
                                       tx::bfloat16(std::numeric_limits<float>::quiet_NaN()), tx::bfloat16(3e-39f)});
  const auto b = dev(hb);
  const auto f = tx::to_host(tx::cast<float>(b));
  const auto i = tx::to_host(tx::cast<std::int32_t>(b));
  const auto h = tx::to_host(tx::cast<tx::half>(b));
  for (tx::index_t k = 0; k < 6; ++k) {
    const float v = static_cast<float>(hb(k));
    if (std::isnan(v)) {
      CHECK(std::isnan(f(k)));
      CHECK(i(k) == 0);
      continue;
    }
    CHECK(f(k) == v);  // widening is exact
    CHECK(test::wide(i(k)) == test::convert_ref<std::int32_t>(v));
    CHECK(test::wide(h(k)) == test::convert_ref<tx::half>(v));
  }
}

TEST_CASE("tensors of more than 2^31 elements: an elementwise op and a sum") {
  const tx::index_t n = (tx::index_t(1) << 31) + 5;
  std::size_t free_bytes = 0, total = 0;
  TEXPR_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < 3 * sizeof(float) * static_cast<std::size_t>(n)) {
    MESSAGE("skipped: needs ", (3 * sizeof(float) * static_cast<std::size_t>(n)) >> 30, " GiB of device memory, ",
            free_bytes >> 30, " GiB free");
    return;
  }
  tx::tensor<float, 1, tx::cuda> x(tx::shape_t<1>{n});  // zeros
  x = x + 1.0f;
  tx::tensor<float, 1, tx::cuda> y = x * 2.0f + tx::cast<float>(tx::arange<std::int64_t, tx::cuda>(n) == n - 1);
  // The count in double is exact; the elements past 2^31 were written.
  CHECK(tx::sum(tx::cast<double>(x)).item() == static_cast<double>(n));
  const auto tail = tx::to_host(tx::slice(y, 0, n - 3, n));
  CHECK(tail(0) == 2.0f);
  CHECK(tail(1) == 2.0f);
  CHECK(tail(2) == 3.0f);
}

TEST_CASE("user streams: every step is enqueued on the stream and nothing waits for the device") {
  stream_guard sg;
  const tx::stream_t s = sg.s;
  auto ha = test::random<float, 2>({256, 256});
  auto a = tx::to_device(ha, s);
  // warm up: kernels, cuBLAS handle and pool on this stream (first uses may synchronise once)
  {
    tx::tensor<float, 2, tx::cuda> w(tx::matmul(a, a) + tx::sum(a, 0), s);
    tx::tensor<float, 0, tx::cuda> m(tx::mean(tx::exp(a)), s);
    tx::tensor<float, 1, tx::cuda> mx(tx::max(w, 1), s);
    (void)tx::to_host(m);
  }
  stream_blocker block(s);
  const auto t0 = std::chrono::steady_clock::now();
  tx::tensor<float, 2, tx::cuda> c(tx::matmul(a, a) + tx::sum(a, 0), s);
  tx::tensor<float, 0, tx::cuda> m(tx::mean(tx::exp(a)), s);
  tx::tensor<float, 1, tx::cuda> mx(tx::max(c, 1), s);
  const double enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  block.release();
  MESSAGE("enqueueing matmul + axis sum + mean + max took ", enqueue_s * 1e3, " ms behind a blocked stream");
  CHECK(enqueue_s < 2.0);
  CHECK(c.stream() == s);
  const auto hc = tx::to_host(c);  // waits for s
  const float hm = tx::to_host(m)();
  ld me = 0;
  for (tx::index_t i = 0; i < ha.size(); ++i) me += std::exp(test::wide(ha.data()[i]));
  CHECK(test::close(hm, me / static_cast<ld>(ha.size()), 1));
  for (tx::index_t i : {0, 17, 255})
    for (tx::index_t j : {0, 100, 255}) {
      ld v = 0, mag = 0;
      for (tx::index_t p = 0; p < 256; ++p) {
        v += test::wide(ha(i, p)) * ha(p, j);
        mag += std::fabs(test::wide(ha(i, p)) * ha(p, j));
      }
      for (tx::index_t r = 0; r < 256; ++r) v += ha(r, j);
      REQUIRE(test::close(hc(i, j), v, mag + 256));
    }
}

TEST_CASE("reads and writes of a tensor use its stream: item(), to_host of views and expressions, assignment through views") {
  // Each read is issued while the tensor's (non-blocking) stream is still blocked behind the write it must see. Work
  // on the default stream would not wait for it and would read the old values.
  stream_guard sg;
  const tx::stream_t s = sg.s;
  tx::tensor<float, 1, tx::cuda> t(tx::shape_t<1>{4096}, s);  // zeros, on s
  (void)tx::to_host(t);
  auto released_after = [](stream_blocker& b) {
    return std::thread([&b] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      b.release();
    });
  };
  {
    stream_blocker block(s);
    t = t + 1.0f;  // on s, behind the blocker
    auto releaser = released_after(block);
    CHECK(tx::sum(t).item() == 4096.0f);  // item() runs on s: waits for the write
    releaser.join();
  }
  {
    stream_blocker block(s);
    t = t + 1.0f;
    auto releaser = released_after(block);
    const auto v = tx::to_host(tx::slice(t, 0, 0, 4096, 2));  // a strided view: evaluated and copied on s
    CHECK(v(0) == 2.0f);
    CHECK(v(2047) == 2.0f);
    releaser.join();
  }
  {
    stream_blocker block(s);
    auto releaser = released_after(block);
    tx::view<float, 1, tx::cuda> vw = t.view();  // carries s
    vw = vw * 3.0f;                               // enqueued on s behind the blocker
    CHECK(vw.stream() == s);
    releaser.join();
    const auto back = tx::to_host(t);
    CHECK(back(0) == 6.0f);
    CHECK(back(4095) == 6.0f);
  }
}

TEST_CASE("errors: out of memory throws cuda_error and leaves tensors intact; shapes are checked") {
  auto h = test::random<float, 1>({1000});
  auto keep = dev(h);
  SUBCASE("a huge new tensor") {
    try {
      tx::tensor<float, 1, tx::cuda> huge(tx::shape_t<1>{tx::index_t(1) << 42});  // 16 TiB
      FAIL("allocating 16 TiB succeeded");
    } catch (const tx::cuda_error& e) {
      const std::string what = e.what();
      MESSAGE(what);
      CHECK(what.find("cudaMallocAsync") != std::string::npos);
      CHECK(what.find("cudaErrorMemoryAllocation") != std::string::npos);
      CHECK(e.line() > 0);
    }
  }
  SUBCASE("re-allocating an existing tensor") {
    CHECK_THROWS_AS(keep.allocate_uninitialized(tx::shape_t<1>{tx::index_t(1) << 42}, nullptr), tx::cuda_error);
    REQUIRE(keep.size() == 1000);
  }
  // the tensor is untouched and the device still works (the error did not stick)
  const auto back = tx::to_host(keep * 1.0f);
  for (tx::index_t i = 0; i < 1000; ++i) REQUIRE(back(i) == h(i));
  tx::tensor<float, 2, tx::cuda> a(tx::shape_t<2>{3, 4}), b(tx::shape_t<2>{4, 3});
  CHECK_THROWS_WITH_AS(a + b, doctest::Contains("LHS shape = (3, 4) RHS shape = (4, 3)"), tx::shape_error);
  CHECK_THROWS_AS(tx::matmul(a, a), tx::shape_error);
  CHECK_THROWS_AS(tx::sum(a, 2), tx::shape_error);
  tx::tensor<float, 2, tx::cuda> c(tx::shape_t<2>{3, 3});
  CHECK_THROWS_AS(c = a * 2.0f, tx::shape_error);
}

TEST_CASE("views over cudaMalloc memory and thrust::device_vector") {
  SUBCASE("cudaMalloc") {
    float* p = nullptr;
    TEXPR_CUDA_CHECK(cudaMalloc(&p, 4 * 8 * sizeof(float)));
    TEXPR_CUDA_CHECK(cudaMemset(p, 0, 4 * 8 * sizeof(float)));
    tx::view<float, 2, tx::cuda> v(p, {4, 8});
    auto h = test::random<float, 1>({8});
    v = v + tx::exp(dev(h)) + 0.0f * tx::sum(v, 0);  // reads v through a reduction too: buffered
    const auto got = tx::to_host(v);
    for (tx::index_t i = 0; i < 4; ++i)
      for (tx::index_t j = 0; j < 8; ++j) REQUIRE(test::close(got(i, j), std::exp(test::wide(h(j)))));
    TEXPR_CUDA_CHECK(cudaFree(p));
  }
  SUBCASE("thrust::device_vector") {
    thrust::device_vector<double> storage(300, 1.5);
    tx::view<double, 2, tx::cuda> v(thrust::raw_pointer_cast(storage.data()), {10, 30});
    v = v * 2.0 + 1.0;
    const tx::view<const double, 2, tx::cuda> cv = v;
    CHECK(tx::sum(cv).item() == 300 * 4.0);
    CHECK(storage[299] == 4.0);
    const auto col = tx::to_host(tx::mean(cv, 0));
    for (tx::index_t j = 0; j < 30; ++j) CHECK(col(j) == 4.0);
  }
}

TEST_CASE("matmul: half and bfloat16 at larger sizes, float with and without TF32, k = 0") {
  auto a = test::random<float, 3>({4, 96, 512}, -1, 1);
  auto b = test::random<float, 2>({512, 80}, -1, 1);
  auto da = dev(a);
  auto db = dev(b);
  auto run = [&](auto tag, ld tol) {
    using T = decltype(tag);
    const auto ta = tx::to_host(tx::cast<T>(da));
    const auto tb = tx::to_host(tx::cast<T>(db));
    const auto tc = tx::to_host(tx::matmul(tx::cast<T>(da), tx::cast<T>(db)));
    for (tx::index_t q = 0; q < 4; q += 3)
      for (tx::index_t i = 0; i < 96; i += 19)
        for (tx::index_t j = 0; j < 80; j += 13) {
          ld s = 0, mag = 0;
          for (tx::index_t p = 0; p < 512; ++p) {
            const ld x = test::wide(ta(q, i, p)), y = test::wide(tb(p, j));
            s += x * y;
            mag += std::fabs(x * y);
          }
          REQUIRE_MESSAGE(test::close(tc(q, i, j), s, mag, tol), "C(", q, ", ", i, ", ", j, ")");
        }
  };
  SUBCASE("float, exact fp32") {
    REQUIRE_FALSE(tx::cuda_tf32());
    run(float{}, 1e-5L);
  }
  SUBCASE("float with TF32 opted in (restored however the subcase ends)") {
    cutest::tf32_scope tf32(true);
    run(float{}, 2e-3L);  // 10-bit mantissa products, fp32 accumulation
  }
  SUBCASE("double") { run(double{}, 1e-13L); }
  SUBCASE("half, fp32 accumulation") { run(tx::half{}, test::tolerance<tx::half>()); }
  SUBCASE("bfloat16, fp32 accumulation") { run(tx::bfloat16{}, test::tolerance<tx::bfloat16>()); }
  SUBCASE("k = 0 gives zeros") {
    tx::tensor<float, 2, tx::cuda> x(tx::shape_t<2>{3, 0}), y(tx::shape_t<2>{0, 4});
    const auto z = tx::to_host(tx::matmul(x, y));
    REQUIRE(z.shape() == tx::shape_t<2>{3, 4});
    for (tx::index_t i = 0; i < z.size(); ++i) CHECK(z.data()[i] == 0.0f);
  }
  CHECK_FALSE(tx::cuda_tf32());
}

TEST_CASE("tf32_scope restores the previous setting when a check inside it fails") {
  REQUIRE_FALSE(tx::cuda_tf32());
  try {
    cutest::tf32_scope tf32(true);
    CHECK(tx::cuda_tf32());
    throw std::runtime_error("a failing REQUIRE throws like this");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(tx::cuda_tf32());
}

namespace training_tags {  // parameter tags at namespace scope: nvcc's kernel stubs cannot name function-local types
struct x;
struct weight;
struct bias;
}  // namespace training_tags

TEST_CASE("training ops on the device: dropout, layer_norm and slice gradients against long double closed forms") {
  constexpr tx::index_t rows = 33, cols = 20;
  auto hx = test::random<float, 2>({rows, cols}, -2, 2);
  auto hw = test::random<float, 1>({cols}, 0.5, 1.5);
  auto hb = test::random<float, 1>({cols}, -1, 1);
  auto hv = test::random<float, 2>({rows, cols}, -1, 1);
  auto hs = test::random<float, 2>({rows, 7}, -1, 1);  // weights of slice(x, 1, 19, -100, -3): columns 19, 16, ..., 1
  auto x = dev(hx), v = dev(hv), s = dev(hs);
  auto w = dev(hw), b = dev(hb);
  auto X = tx::param<training_tags::x>(x);
  auto W = tx::param<training_tags::weight>(w);
  auto B = tx::param<training_tags::bias>(b);
  const double p = 0.3;
  auto loss = tx::sum(tx::dropout(tx::layer_norm(X, W, B), p, 99) * v) + tx::sum(tx::slice(tx::tanh(X), 1, 19, -100, -3) * s);
  auto step = tx::value_and_grad(loss, X, W, B);
  static_assert(tx::all_run_on<decltype(step), tx::cuda>);
  CHECK(tx::placement(std::get<1>(step)).find("dropout_mask") != std::string::npos);
  const auto [dl, dgx, dgw, dgb] = tx::eval_all(std::get<0>(step), std::get<1>(step), std::get<2>(step), std::get<3>(step));
  const auto gx = tx::to_host(dgx);
  const auto gw = tx::to_host(dgw);
  const auto gb = tx::to_host(dgb);
  // The mask from Philox's words as docs/semantics.md states it: kept where uniform<double> >= p.
  const auto key = tx::detail::philox_seed(99);
  auto kept = [&](tx::index_t i) {
    const auto words = tx::detail::philox_at(key, 0, i);
    return tx::detail::unit_53(words.w[0], words.w[1]) >= p;
  };
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  std::vector<ld> want_x(static_cast<std::size_t>(rows * cols)), want_w(cols, 0), want_b(cols, 0);
  ld want_loss = 0;
  for (tx::index_t r = 0; r < rows; ++r) {
    ld mean = 0, var = 0;
    for (tx::index_t k = 0; k < cols; ++k) mean += hx(r, k);
    mean /= cols;
    for (tx::index_t k = 0; k < cols; ++k) var += (hx(r, k) - mean) * (hx(r, k) - mean);
    var /= cols;
    const ld rstd = 1 / std::sqrt(var + 1e-5L);
    ld gw_mean = 0, gwx_mean = 0;
    std::vector<ld> gy(cols), xhat(cols);
    for (tx::index_t k = 0; k < cols; ++k) {
      xhat[k] = (hx(r, k) - mean) * rstd;
      gy[k] = kept(r * cols + k) ? test::wide(hv(r, k)) * scale : 0;
      want_loss += gy[k] * (xhat[k] * hw(k) + hb(k));
      want_w[k] += gy[k] * xhat[k];
      want_b[k] += gy[k];
      gw_mean += gy[k] * hw(k) / cols;
      gwx_mean += gy[k] * hw(k) * xhat[k] / cols;
    }
    for (tx::index_t k = 0; k < cols; ++k)
      want_x[r * cols + k] = rstd * (gy[k] * hw(k) - gw_mean - xhat[k] * gwx_mean);
    for (tx::index_t j = 0; j < 7; ++j) {
      const tx::index_t k = 19 - 3 * j;
      const ld t = std::tanh(static_cast<ld>(hx(r, k)));
      want_loss += t * hs(r, j);
      want_x[r * cols + k] += (1 - t * t) * hs(r, j);
    }
  }
  CHECK(test::close(tx::to_host(dl).item(), want_loss, rows * cols, 1e-5L));
  for (tx::index_t i = 0; i < rows * cols; ++i) {
    INFO("dx element " << i);
    CHECK(test::close(gx.data()[i], want_x[static_cast<std::size_t>(i)], 4, 1e-5L));
  }
  for (tx::index_t k = 0; k < cols; ++k) {
    INFO("dweight, dbias element " << k);
    CHECK(test::close(gw(k), want_w[static_cast<std::size_t>(k)], rows, 1e-5L));
    CHECK(test::close(gb(k), want_b[static_cast<std::size_t>(k)], rows, 1e-5L));
  }
}

namespace {
/// Three steps of an optimiser made by `make` over device parameters (each a multi-tensor launch; the first
/// writes the state without reading it), against `rule` (one element's update at step t, PyTorch's formulas, in
/// long double) applied on the host; relative 1e-5.
template <class Make, class Rule> void compare_optimiser(const char* name, Make make, Rule rule) {
  INFO(name);
  auto w1 = test::random<float, 2>({37, 19}, -1, 1), w2 = test::random<float, 2>({19, 5}, -2, 2);
  auto b1 = test::random<float, 1>({19}, -0.5, 0.5), b2 = test::random<float, 1>({5}, -3, 3);
  const auto g1 = test::random<float, 2>({37, 19}, -1, 1), g2 = test::random<float, 2>({19, 5}, -3, 3);
  const auto h1 = test::random<float, 1>({19}, -2, 2), h2 = test::random<float, 1>({5}, -0.1, 0.1);
  auto dw1 = dev(w1), dw2 = dev(w2);
  auto db1 = dev(b1), db2 = dev(b2);
  const auto dg1 = dev(g1), dg2 = dev(g2);
  const auto dh1 = dev(h1), dh2 = dev(h2);
  auto opt = make(std::tie(dw1, db1, dw2, db2));
  for (int step = 0; step < 3; ++step) opt.step(std::tie(dg1, dh1, dg2, dh2));
  const auto check = [&](const auto& p0, const auto& g, const auto& got_dev) {
    const auto got = tx::to_host(got_dev);
    for (tx::index_t i = 0; i < p0.size(); ++i) {
      ld p = p0.data()[i], s1 = 0, s2 = 0;
      for (int t = 1; t <= 3; ++t) rule(p, static_cast<ld>(g.data()[i]), s1, s2, t);
      REQUIRE(std::abs(static_cast<ld>(got.data()[i]) - p) <= 1e-5L * (1 + std::abs(p)));
    }
  };
  check(w1, g1, dw1);
  check(b1, h1, db1);
  check(w2, g2, dw2);
  check(b2, h2, db2);
}
} // namespace

TEST_CASE("optimisers on the device: multi-tensor steps against PyTorch's formulas") {
  compare_optimiser("sgd", [](auto p) { return tx::optim::sgd(p, {.lr = 0.1, .weight_decay = 0.01}); },
                    [](ld& p, ld g, ld&, ld&, int) { p -= 0.1L * (g + 0.01L * p); });
  const auto momentum = [](ld lr, ld mom, ld damp, ld wd, bool nesterov) {
    return [=](ld& p, ld g, ld& b, ld&, int t) {
      const ld d = g + wd * p;
      b = t == 1 ? d : mom * b + (1 - damp) * d;
      p -= nesterov ? lr * (d + mom * b) : lr * b;
    };
  };
  compare_optimiser("sgd momentum", [](auto p) { return tx::optim::sgd(p, {.lr = 0.05, .momentum = 0.9, .dampening = 0.1}); },
                    momentum(0.05L, 0.9L, 0.1L, 0, false));
  compare_optimiser("sgd nesterov",
                    [](auto p) { return tx::optim::sgd(p, {.lr = 0.05, .momentum = 0.8, .weight_decay = 1e-3, .nesterov = true}); },
                    momentum(0.05L, 0.8L, 0, 1e-3L, true));
  const auto adam = [](ld lr, ld wd, bool decoupled) {
    return [=](ld& p, ld g, ld& m, ld& v, int t) {
      const ld b1 = 0.9L, b2 = 0.999L, eps = 1e-8L;
      const ld d = decoupled ? g : g + wd * p;
      m = b1 * m + (1 - b1) * d;
      v = b2 * v + (1 - b2) * d * d;
      const ld decay = decoupled ? 1 - lr * wd : 1;
      p = decay * p - lr / (1 - std::pow(b1, static_cast<ld>(t))) * m / (std::sqrt(v) / std::sqrt(1 - std::pow(b2, static_cast<ld>(t))) + eps);
    };
  };
  compare_optimiser("adam", [](auto p) { return tx::optim::adam(p, {.lr = 1e-2, .weight_decay = 1e-3}); }, adam(1e-2L, 1e-3L, false));
  compare_optimiser("adamw", [](auto p) { return tx::optim::adamw(p, {.lr = 1e-2, .weight_decay = 0.05}); }, adam(1e-2L, 0.05L, true));
}

namespace capture_tags {
struct w;
struct b;
} // namespace capture_tags

TEST_CASE("a captured step replayed equals the same steps run eagerly") {
  // loss = cross_entropy(x w + b, y); SGD. Two copies of the parameters: one stepped eagerly, one by replays.
  auto hx = test::random<float, 2>({16, 12}, -1, 1);
  auto hw = test::random<float, 2>({12, 6}, -0.5, 0.5);
  auto hb = test::random<float, 1>({6}, -0.2, 0.2);
  tx::tensor<std::int64_t, 1> hy({16});
  for (tx::index_t i = 0; i < 16; ++i) hy(i) = (i * 5) % 6;
  auto x = dev(hx);
  auto y = dev(hy);
  auto we = dev(hw), wc = dev(hw);
  auto be = dev(hb), bc = dev(hb);
  const auto graphs_of = [&](const auto& w, const auto& b) {
    auto W = tx::param<capture_tags::w>(w);
    auto B = tx::param<capture_tags::b>(b);
    return tx::value_and_grad(tx::cross_entropy(tx::matmul(x.view(), W) + B, y.view()), W, B);
  };
  tx::optim::sgd eager_opt(std::tie(we, be), {.lr = 0.5});
  tx::optim::sgd captured_opt(std::tie(wc, bc), {.lr = 0.5});
  const auto eager_graphs = graphs_of(we, be);
  const auto captured_graphs = graphs_of(wc, bc);
  captured_opt.step(tx::eval_all(captured_graphs));  // warm-up, also a step
  eager_opt.step(tx::eval_all(eager_graphs));
  auto step = tx::capture_step(captured_graphs, [&](const auto& r) { captured_opt.step(r); });  // runs nothing yet
  float eager_loss = 0;
  for (int i = 0; i < 40; ++i) {  // every replay reuses the stream's tickets: each launch must leave them at zero
    step.replay();
    const auto r = tx::eval_all(eager_graphs);
    eager_loss = std::get<0>(r).item();
    eager_opt.step(r);
  }
  CHECK(std::abs(std::get<0>(step.results()).item() - eager_loss) <= 1e-5f * (1 + std::abs(eager_loss)));
  const auto w_eager = tx::to_host(we), w_captured = tx::to_host(wc);
  for (tx::index_t i = 0; i < w_eager.size(); ++i)
    REQUIRE(std::abs(w_eager.data()[i] - w_captured.data()[i]) <= 1e-5f * (1 + std::abs(w_eager.data()[i])));
  CHECK(step.graph().nodes() > 0);
  unsigned ticket = 1;
  TEXPR_CUDA_CHECK(cudaMemcpy(&ticket, tx::detail::stream_tickets::instance().get(step.graph().stream()),
                              sizeof ticket, cudaMemcpyDeviceToHost));
  CHECK(ticket == 0u);
}

TEST_CASE("last-block tickets: 300 reductions in a row on one stream, each exact, the ticket zero after") {
  // No memset between launches (stream_tickets): a launch that left its ticket non-zero would make the next one's
  // "last block" finish early, with a partial sum. Sizes alternate between several block counts.
  const auto hx = test::random<float, 1>({(1 << 20) + 37}, -1, 1);
  const auto x = dev(hx);
  const tx::index_t sizes[] = {(1 << 20) + 37, 5000, 1 << 16, 257};
  ld reference[4] = {};
  for (int k = 0; k < 4; ++k)
    for (tx::index_t i = 0; i < sizes[k]; ++i) reference[k] += hx.data()[i];
  for (int i = 0; i < 300; ++i) {
    const int k = i % 4;
    const auto part = tx::slice(x.view(), 0, 0, sizes[k]);
    const float got = tx::eval(tx::sum(part * (1.0f + static_cast<float>(i % 3)))).item();
    const ld want = reference[k] * (1 + i % 3);
    REQUIRE(std::abs(static_cast<ld>(got) - want) <= 1e-4L * (1 + std::sqrt(static_cast<ld>(sizes[k]))));
  }
  unsigned ticket = 1;
  TEXPR_CUDA_CHECK(cudaMemcpy(&ticket, tx::detail::stream_tickets::instance().get(tx::cuda_stream()), sizeof ticket,
                              cudaMemcpyDeviceToHost));
  CHECK(ticket == 0u);
}

namespace {
/// cross_entropy of logits z (rows x classes) and labels in long double: NaN for a label outside [0, classes).
ld cross_entropy_reference(const tx::tensor<float, 2>& z, const std::vector<std::int64_t>& labels) {
  ld total = 0;
  const tx::index_t rows = z.extent(0), classes = z.extent(1);
  for (tx::index_t r = 0; r < rows; ++r) {
    ld m = -std::numeric_limits<ld>::infinity();
    for (tx::index_t j = 0; j < classes; ++j) m = std::max<ld>(m, z(r, j));
    ld s = 0;
    for (tx::index_t j = 0; j < classes; ++j) s += std::exp(static_cast<ld>(z(r, j)) - m);
    const std::int64_t l = labels[static_cast<std::size_t>(r)];
    total += l >= 0 && l < classes ? std::log(s) + m - z(r, l) : std::numeric_limits<ld>::quiet_NaN();
  }
  return total / static_cast<ld>(rows);
}
} // namespace

TEST_CASE("cross_entropy in one launch: many rows, strided logits, int32 labels, NaN and bad labels, 16-bit") {
  for (const tx::index_t rows : {1, 37, 70000}) {  // 70000 rows: more than one row per warp
    INFO("rows " << rows);
    const tx::index_t classes = rows == 1 ? 1000 : 13;  // 1000: a row longer than a warp
    auto hz = test::random<float, 2>({rows, classes}, -8, 8);
    std::vector<std::int64_t> labels(static_cast<std::size_t>(rows));
    tx::tensor<std::int64_t, 1> hl({rows});
    tx::tensor<std::int32_t, 1> hl32({rows});
    for (tx::index_t i = 0; i < rows; ++i) {
      labels[static_cast<std::size_t>(i)] = (i * 7 + 3) % classes;
      hl(i) = labels[static_cast<std::size_t>(i)];
      hl32(i) = static_cast<std::int32_t>(hl(i));
    }
    const auto z = dev(hz);
    const auto l = dev(hl);
    const auto l32 = dev(hl32);
    const ld want = cross_entropy_reference(hz, labels);
    tx::kernel_log log;
    const float got = tx::cross_entropy(z, l).item();
    CHECK(log.count("row_cross_entropy") == 1);
    CHECK(std::abs(got - want) <= 1e-5L * (1 + std::abs(want)));
    CHECK(std::abs(tx::cross_entropy(z, l32).item() - want) <= 1e-5L * (1 + std::abs(want)));
    // The same logits read transposed (a strided operand).
    const auto zt = dev(tx::tensor<float, 2>(tx::transpose(hz)));
    CHECK(std::abs(tx::cross_entropy(tx::transpose(zt), l).item() - want) <= 1e-5L * (1 + std::abs(want)));
    // bfloat16 logits (computed in float): within bfloat16's rounding of the inputs.
    const auto zb = tx::eval(tx::cast<tx::bfloat16>(z));
    CHECK(std::abs(static_cast<float>(tx::cross_entropy(zb, l).item()) - want) <= 0.05L * (1 + std::abs(want)));
  }
  auto hz = test::random<float, 2>({4, 5}, -1, 1);
  tx::tensor<std::int64_t, 1> hl({4});
  for (tx::index_t i = 0; i < 4; ++i) hl(i) = i;
  SUBCASE("a NaN logit gives NaN") {
    hz(2, 3) = std::numeric_limits<float>::quiet_NaN();
    CHECK(std::isnan(tx::cross_entropy(dev(hz), dev(hl)).item()));
  }
  SUBCASE("a label outside [0, classes) gives NaN") {
    hl(1) = 5;
    CHECK(std::isnan(tx::cross_entropy(dev(hz), dev(hl)).item()));
    hl(1) = -1;
    CHECK(std::isnan(tx::cross_entropy(dev(hz), dev(hl)).item()));
  }
  SUBCASE("large finite logits lose nothing to the shift") {
    hz(0, 0) = 1e30f;
    const float got = tx::cross_entropy(dev(hz), dev(hl)).item();
    std::vector<std::int64_t> labels{0, 1, 2, 3};
    const ld want = cross_entropy_reference(hz, labels);
    CHECK(std::abs(got - want) <= 1e-5L * (1 + std::abs(want)));
  }
}

namespace embedding_tags {
struct weight;
}
TEST_CASE("indexing on the device: embedding and index_select with their gradients against loops; bad indices throw") {
  constexpr tx::index_t vocab = 37, width = 24, count = 300;
  auto hw = test::random<float, 2>({vocab, width}, -2, 2);
  auto hv = test::random<float, 3>({3, count / 3, width}, -1, 1);
  tx::tensor<std::int32_t, 2> hid({3, count / 3});
  for (tx::index_t i = 0; i < count; ++i) hid.data()[i] = static_cast<std::int32_t>((i * 7 + i / 11) % (vocab - 1));  // row vocab - 1 unused
  auto w = dev(hw);
  auto v = dev(hv);
  auto id = tx::to_device(hid);
  auto W = tx::param<embedding_tags::weight>(w);
  auto loss = tx::sum(tx::embedding(id, W) * v);
  auto step = tx::value_and_grad(loss, W);
  static_assert(tx::all_run_on<decltype(step), tx::cuda>);
  const auto [dl, dgw] = tx::eval_all(std::get<0>(step), std::get<1>(step));
  const auto gw = tx::to_host(dgw);
  std::vector<ld> want(static_cast<std::size_t>(vocab * width), 0);
  ld want_loss = 0;
  for (tx::index_t i = 0; i < count; ++i)
    for (tx::index_t d = 0; d < width; ++d) {
      const tx::index_t r = hid.data()[i];
      want[static_cast<std::size_t>(r * width + d)] += hv.data()[i * width + d];
      want_loss += static_cast<ld>(hw(r, d)) * hv.data()[i * width + d];
    }
  CHECK(test::close(tx::to_host(dl).item(), want_loss, count * width, 1e-5L));
  for (tx::index_t i = 0; i < vocab * width; ++i) {
    INFO("dweight element " << i);
    CHECK(test::close(gw.data()[i], want[static_cast<std::size_t>(i)], 16, 1e-5L));
  }
  // The same sum twice gives the same bits (one thread per element, no atomics).
  const auto again = tx::to_host(std::get<0>(tx::eval_all(std::get<1>(tx::value_and_grad(loss, W)))));
  for (tx::index_t i = 0; i < vocab * width; ++i) CHECK(again.data()[i] == gw.data()[i]);
  tx::tensor<std::int64_t, 1> hbad({3}, {0, vocab, 1});
  auto bad = tx::to_device(hbad);
  CHECK_THROWS_WITH_AS(static_cast<void>(tx::to_host(tx::index_select(w, 0, bad))),
                       doctest::Contains("index_select index 37 at position (1) is out of range for axis 0 of extent 37"), tx::shape_error);
}

namespace {
/// The gradient of factor * cross_entropy(z, labels) with respect to z, in long double: (exp(z - logsumexp(z)) -
/// one_hot) * factor / rows, a label outside [0, classes) matching no column, a NaN making its row NaN, an
/// infinite maximum not subtracted (inf - inf would be NaN).
std::vector<ld> dlogits_reference(const tx::tensor<float, 2>& z, const tx::tensor<std::int64_t, 1>& labels, ld factor) {
  const tx::index_t rows = z.extent(0), classes = z.extent(1);
  std::vector<ld> out(static_cast<std::size_t>(rows * classes));
  for (tx::index_t r = 0; r < rows; ++r) {
    ld m = -std::numeric_limits<ld>::infinity();
    bool nan = false;
    for (tx::index_t j = 0; j < classes; ++j) {
      nan = nan || std::isnan(z(r, j));
      m = std::max<ld>(m, z(r, j));
    }
    const ld shift = std::isfinite(m) ? m : 0;
    ld s = 0;
    for (tx::index_t j = 0; j < classes; ++j) s += std::exp(static_cast<ld>(z(r, j)) - shift);
    const ld lse = nan ? std::numeric_limits<ld>::quiet_NaN() : std::log(s) + shift;
    for (tx::index_t j = 0; j < classes; ++j)
      out[static_cast<std::size_t>(r * classes + j)] =
          (std::exp(static_cast<ld>(z(r, j)) - lse) - (labels(r) == j ? 1 : 0)) * factor / static_cast<ld>(rows);
  }
  return out;
}
struct dlogits_tag {};
} // namespace

TEST_CASE("cross_entropy's gradient in one launch: many rows, strided logits, int32 labels, a computed g, extremes") {
  for (const tx::index_t rows : {1, 37, 70000}) {
    INFO("rows " << rows);
    const tx::index_t classes = rows == 1 ? 1000 : 13;
    auto hz = test::random<float, 2>({rows, classes}, -8, 8);
    tx::tensor<std::int64_t, 1> hl({rows});
    tx::tensor<std::int32_t, 1> hl32({rows});
    for (tx::index_t i = 0; i < rows; ++i) {
      hl(i) = i % 11 == 5 ? -1 : (i % 11 == 7 ? classes : (i * 7 + 3) % classes);  // some labels outside
      hl32(i) = static_cast<std::int32_t>(hl(i));
    }
    const auto z = dev(hz);
    const auto l = dev(hl);
    const auto l32 = dev(hl32);
    const auto compare = [&](const tx::tensor<float, 2>& got, ld factor, ld tol, const char* what) {
      const auto want = dlogits_reference(hz, hl, factor);
      int bad = 0;
      for (tx::index_t i = 0; i < got.size(); ++i)
        if (!(std::abs(got.data()[i] - want[static_cast<std::size_t>(i)]) <= tol * std::abs(factor) / static_cast<ld>(rows))) ++bad;
      INFO(what);
      CHECK(bad == 0);
    };
    auto P = tx::param<dlogits_tag>(z);
    {
      tx::kernel_log log;
      auto [gz] = tx::eval_all(tx::grad(tx::cross_entropy(P, l) * 0.75f, P));
      CHECK(log.count("row_cross_entropy_grad") == 1);
      CHECK(log.count("block_reduce") == 0);
      compare(tx::to_host(gz), 0.75L, 1e-6L, "int64 labels, g folded");
    }
    auto [g32] = tx::eval_all(tx::grad(tx::cross_entropy(P, l32), P));
    compare(tx::to_host(g32), 1, 1e-6L, "int32 labels");
    // g computed on the device (a rank-0 operand of the kernel): sum(w) = 2.
    const auto w = dev(tx::tensor<float, 1>({4}, {0.25f, 0.5f, 0.5f, 0.75f}));
    auto [gg] = tx::eval_all(tx::grad(tx::cross_entropy(P, l) * tx::sum(w), P));
    compare(tx::to_host(gg), 2, 1e-6L, "g computed on the device");
    // Strided logits: the gradient of the transposed copy read back through a transpose.
    const auto zt = dev(tx::tensor<float, 2>(tx::transpose(hz)));
    auto T = tx::param<dlogits_tag>(zt);
    auto [gt] = tx::eval_all(tx::grad(tx::cross_entropy(tx::transpose(T), l), T));
    compare(tx::to_host(tx::transpose(gt)), 1, 1e-6L, "transposed logits");
    // bfloat16 logits (computed in float): within bfloat16's rounding.
    const auto zb = tx::eval(tx::cast<tx::bfloat16>(z));
    auto Pb = tx::param<dlogits_tag>(zb);
    auto [gb] = tx::eval_all(tx::grad(tx::cross_entropy(Pb, l), Pb));
    compare(tx::to_host(tx::eval(tx::cast<float>(gb))), 1, 0.05L, "bfloat16");
  }
  // Extremes against the long double reference (NaN where it is NaN): a +inf logit, a -inf logit, an all -inf
  // row, a NaN, logits near 100 (float's z - logsumexp(z) keeps 100 * 2^-24 of them), labels outside.
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  tx::tensor<float, 2> hz({7, 4}, {1, inf, 2, -3,  1, -inf, 2, -3,  -inf, -inf, -inf, -inf,  1, nan, 2, 0,
                                   100, 100.5f, 99, 0,  0.5f, -0.5f, 2, 1,  0.5f, -0.5f, 2, 1});
  tx::tensor<std::int64_t, 1> hl({7}, {0, 0, 2, 3, 1, -1, 4});
  const auto want = dlogits_reference(hz, hl, 1);
  const auto dz = dev(hz);
  auto D = tx::param<dlogits_tag>(dz);
  auto [got_d] = tx::eval_all(tx::grad(tx::cross_entropy(D, dev(hl)), D));
  const auto got = tx::to_host(got_d);
  for (tx::index_t i = 0; i < got.size(); ++i) {
    const ld w = want[static_cast<std::size_t>(i)];
    INFO("element " << i << " got " << got.data()[i] << " want " << static_cast<double>(w));
    CHECK(std::isnan(got.data()[i]) == std::isnan(w));
    if (!std::isnan(w)) CHECK(std::abs(got.data()[i] - w) <= 2e-5L / 7);
  }
  CHECK(std::isnan(got(0, 1)));
  CHECK(got(1, 1) == 0.0f);  // exp(-inf) is 0, and not the label
}

namespace column_sums_tags {  // (namespace scope: nvcc's kernel stubs cannot name function-local types)
struct w1 {};
struct b1 {};
struct w2 {};
struct b2 {};
}  // namespace column_sums_tags

namespace {
/// A two-layer classifier's step: its bias gradients are sums over the batch of the saved delta and dlogits.
template <class X, class L, class W1, class B1, class W2, class B2>
auto two_layer_step(const X& x, const L& labels, const W1& w1, const B1& b1, const W2& w2, const B2& b2) {
  auto W1p = tx::param<column_sums_tags::w1>(w1);
  auto B1p = tx::param<column_sums_tags::b1>(b1);
  auto W2p = tx::param<column_sums_tags::w2>(w2);
  auto B2p = tx::param<column_sums_tags::b2>(b2);
  auto loss = tx::cross_entropy(tx::matmul(tx::elu(tx::matmul(x, W1p) + B1p), W2p) + B2p, labels);
  return tx::value_and_grad(loss, W1p, B1p, W2p, B2p);
}
using ld_matrix = std::vector<ld>;  // row-major
/// a [n, k] times b [k, m], or a^T b for a [k, n] when `transpose_a`, in long double.
ld_matrix ld_matmul(const ld_matrix& a, const ld_matrix& b, tx::index_t n, tx::index_t k, tx::index_t m, bool transpose_a) {
  ld_matrix c(static_cast<std::size_t>(n * m), 0);
  for (tx::index_t i = 0; i < n; ++i)
    for (tx::index_t p = 0; p < k; ++p) {
      const ld x = transpose_a ? a[static_cast<std::size_t>(p * n + i)] : a[static_cast<std::size_t>(i * k + p)];
      for (tx::index_t j = 0; j < m; ++j) c[static_cast<std::size_t>(i * m + j)] += x * b[static_cast<std::size_t>(p * m + j)];
    }
  return c;
}
template <class T, std::size_t R> ld_matrix widen(const tx::tensor<T, R>& t) {
  ld_matrix v(static_cast<std::size_t>(t.size()));
  for (tx::index_t i = 0; i < t.size(); ++i) v[static_cast<std::size_t>(i)] = test::wide(t.data()[i]);
  return v;
}
/// Sums over the rows of [rows, cols].
ld_matrix column_sums(const ld_matrix& a, tx::index_t rows, tx::index_t cols) {
  ld_matrix s(static_cast<std::size_t>(cols), 0);
  for (tx::index_t r = 0; r < rows; ++r)
    for (tx::index_t c = 0; c < cols; ++c) s[static_cast<std::size_t>(c)] += a[static_cast<std::size_t>(r * cols + c)];
  return s;
}
/// A device result against its long double reference: within 1e-4 of the largest magnitude (float GEMMs and sums).
template <std::size_t R> void check_reference(const tx::tensor<float, R, tx::cuda>& got_dev, const ld_matrix& want, const char* what) {
  const auto got = tx::to_host(got_dev);
  REQUIRE(static_cast<std::size_t>(got.size()) == want.size());
  ld scale = 0;
  for (const ld w : want) scale = std::max(scale, std::abs(w));
  int bad = 0;
  for (tx::index_t i = 0; i < got.size(); ++i)
    if (!(std::abs(test::wide(got.data()[i]) - want[static_cast<std::size_t>(i)]) <= 1e-4L * scale)) ++bad;
  INFO(what << ": " << bad << " of " << got.size() << " elements differ from the reference");
  CHECK(scale > 0);
  CHECK(bad == 0);
}
}  // namespace

TEST_CASE("bias gradients written by the launches of the delta and dlogits they sum, against long double") {
  struct sizes {
    tx::index_t rows, in, hidden, classes;
  };
  // 300 hidden columns: more columns than threads; 2048 hidden and 5000 rows: a group of one row per block, more
  // groups than blocks (each block sums several); 13 and 3 classes: fewer columns than a warp.
  for (const sizes s : {sizes{300, 17, 300, 13}, sizes{5000, 8, 2048, 3}}) {
    INFO("rows " << s.rows << ", hidden " << s.hidden);
    const auto x = test::random<float, 2>({s.rows, s.in}, -1, 1);
    tx::tensor<std::int64_t, 1> labels({s.rows});
    for (tx::index_t i = 0; i < s.rows; ++i) labels(i) = (i * 7 + 3) % s.classes;
    const auto w1 = test::random<float, 2>({s.in, s.hidden}, -0.5, 0.5), w2 = test::random<float, 2>({s.hidden, s.classes}, -0.2, 0.2);
    const auto b1 = test::random<float, 1>({s.hidden}, -1, 1), b2 = test::random<float, 1>({s.classes}, -1, 1);
    const auto dw1 = dev(w1), dw2 = dev(w2);
    const auto db1 = dev(b1), db2 = dev(b2);
    tx::kernel_log log;
    const auto got = tx::eval_all(two_layer_step(dev(x), dev(labels), dw1, db1, dw2, db2));
    CHECK(log.count("fused_elementwise_column_sums") == 1);       // the delta, with b1's gradient
    CHECK(log.count("row_cross_entropy_grad_column_sums") == 1);  // dlogits, with b2's gradient
    CHECK(log.count("block_reduce") == 0);
    // The reference: forward, softmax cross-entropy's mean, and back, in long double.
    const ld_matrix lx = widen(x), lw1 = widen(w1), lw2 = widen(w2), lb1 = widen(b1), lb2 = widen(b2);
    ld_matrix a1 = ld_matmul(lx, lw1, s.rows, s.in, s.hidden, false), h = a1;
    for (tx::index_t i = 0; i < s.rows * s.hidden; ++i) {
      ld& a = a1[static_cast<std::size_t>(i)];
      a += lb1[static_cast<std::size_t>(i % s.hidden)];
      h[static_cast<std::size_t>(i)] = a > 0 ? a : std::expm1(a);
    }
    ld_matrix dz = ld_matmul(h, lw2, s.rows, s.hidden, s.classes, false);
    ld loss = 0;
    for (tx::index_t r = 0; r < s.rows; ++r) {
      ld* row = &dz[static_cast<std::size_t>(r * s.classes)];
      ld m = -std::numeric_limits<ld>::infinity(), sum = 0;
      for (tx::index_t c = 0; c < s.classes; ++c) m = std::max(m, row[c] += lb2[static_cast<std::size_t>(c)]);
      for (tx::index_t c = 0; c < s.classes; ++c) sum += std::exp(row[c] - m);
      loss += std::log(sum) + m - row[labels(r)];
      for (tx::index_t c = 0; c < s.classes; ++c)
        row[c] = (std::exp(row[c] - m) / sum - (c == labels(r) ? 1 : 0)) / static_cast<ld>(s.rows);
    }
    ld_matrix w2t(static_cast<std::size_t>(s.classes * s.hidden));
    for (tx::index_t i = 0; i < s.hidden; ++i)
      for (tx::index_t c = 0; c < s.classes; ++c) w2t[static_cast<std::size_t>(c * s.hidden + i)] = lw2[static_cast<std::size_t>(i * s.classes + c)];
    ld_matrix delta = ld_matmul(dz, w2t, s.rows, s.classes, s.hidden, false);
    for (tx::index_t i = 0; i < s.rows * s.hidden; ++i) {
      const ld a = a1[static_cast<std::size_t>(i)];
      delta[static_cast<std::size_t>(i)] *= a > 0 ? 1 : std::exp(a);
    }
    CHECK(test::close(tx::to_host(std::get<0>(got)).item(), loss / static_cast<ld>(s.rows), 1, 1e-5L));
    check_reference(std::get<1>(got), ld_matmul(lx, delta, s.in, s.rows, s.hidden, true), "dw1");
    check_reference(std::get<2>(got), column_sums(delta, s.rows, s.hidden), "db1");
    check_reference(std::get<3>(got), ld_matmul(h, dz, s.hidden, s.rows, s.classes, true), "dw2");
    check_reference(std::get<4>(got), column_sums(dz, s.rows, s.classes), "db2");
  }
  SUBCASE("a delta with a broadcast operand: the kernel reads by multi-index") {
    constexpr tx::index_t rows = 77, in = 5, cols = 33;
    const auto x = test::random<float, 2>({rows, in}, -1, 1), w = test::random<float, 2>({in, cols}, -1, 1);
    const auto b = test::random<float, 1>({cols}, -1, 1), v = test::random<float, 1>({cols}, -2, 2);
    const auto dw = dev(w);
    const auto db = dev(b);
    auto W = tx::param<column_sums_tags::w1>(dw);
    auto B = tx::param<column_sums_tags::b1>(db);
    tx::kernel_log log;
    const auto got = tx::eval_all(tx::grad(tx::sum(tx::tanh(tx::matmul(dev(x), W) + B) * dev(v)), W, B));
    CHECK(log.count("fused_elementwise_column_sums") == 1);
    CHECK(log.count("block_reduce") == 0);
    const ld_matrix lx = widen(x);
    ld_matrix delta = ld_matmul(lx, widen(w), rows, in, cols, false);  // v * (1 - tanh^2), v broadcast over rows
    for (tx::index_t i = 0; i < rows * cols; ++i) {
      const ld t = std::tanh(delta[static_cast<std::size_t>(i)] + test::wide(b(i % cols)));
      delta[static_cast<std::size_t>(i)] = test::wide(v(i % cols)) * (1 - t * t);
    }
    check_reference(std::get<0>(got), ld_matmul(lx, delta, in, rows, cols, true), "dw");
    check_reference(std::get<1>(got), column_sums(delta, rows, cols), "db");
  }
}

namespace {

/// Deterministic 64-bit values (splitmix64).
std::uint64_t next_bits(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// n 16-bit floats T: a third raw bit patterns (every magnitude, subnormals, zeros of both signs, infinities, NaN),
/// a third in [-4, 4]; the rest, given `cancel`, cancel its elements (their negation with the low bits changed, so
/// sums and differences round near zero), else in [-4, 4] too.
template <class T>
tx::tensor<T, 1> inputs16(tx::index_t n, std::uint64_t seed, const tx::tensor<T, 1>* cancel = nullptr) {
  tx::tensor<T, 1> t(tx::shape_t<1>{n});
  std::uint64_t s = seed;
  for (tx::index_t i = 0; i < n; ++i) {
    const std::uint64_t r = next_bits(s);
    T v{};
    if (r % 3 == 0) {
      v.bits = static_cast<std::uint16_t>(r >> 32);
    } else if (r % 3 == 1 || cancel == nullptr) {
      v = T(static_cast<float>(static_cast<double>(r >> 11) * 0x1p-53 * 8 - 4));
    } else {
      v = cancel->data()[i];
      v.bits = static_cast<std::uint16_t>((v.bits ^ 0x8000u) ^ ((r >> 32) & 3u));
    }
    t.data()[i] = v;
  }
  return t;
}

/// x rounded to 16-bit float T (the tests' own rounding, tests/core/reference.hpp).
template <class T>
ld round16(float x) {
  return test::convert_ref<T>(static_cast<ld>(x));
}
/// The float a 16-bit reference value is (exactly).
inline float as_float(ld x) { return static_cast<float>(x); }

/// Counts the `count` elements from got (element `first` of the reference's indexing) that are not bitwise the
/// reference: the same value and sign, or both NaN.
template <class T, class Ref>
int mismatches16(const T* got, tx::index_t count, tx::index_t first, const Ref& ref, const std::string& what) {
  int bad = 0;
  for (tx::index_t i = 0; i < count; ++i) {
    const ld want = ref(first + i);
    const ld g = test::wide(got[i]);
    const bool same = std::isnan(want) ? std::isnan(g) : (g == want && std::signbit(g) == std::signbit(want));
    if (!same && bad++ == 0) MESSAGE(what, ": element ", first + i, " is ", g, ", want ", want);
  }
  return bad;
}

/// 16-bit elementwise on the device against the documented rule (each node computed in float, rounded once to
/// nearest even), bitwise: aligned tensors (16-byte loads, pairs, a tail of 3), unaligned operands into an aligned
/// destination, and unaligned operands and destination (element by element).
template <class T>
void check_elementwise16() {
  const tx::index_t n = 4099;  // 512 chunks of 8 and a tail of 3
  const auto ha = inputs16<T>(n, 1), hb = inputs16<T>(n, 2, &ha), hc = inputs16<T>(n, 3, &hb);
  const auto hx = test::random<float, 1>({n}, -70000, 70000);
  const auto a = dev(ha), b = dev(hb), c = dev(hc);
  const auto x = dev(hx);
  const auto f = [](T v) { return static_cast<float>(v); };
  // operand views from element 1: unaligned for every vector width
  const tx::view<const T, 1, tx::cuda> ua(a.data() + 1, {n - 1}), ub(b.data() + 1, {n - 1}), uc(c.data() + 1, {n - 1});
  const tx::view<const float, 1, tx::cuda> ux(x.data() + 1, {n - 1});

  const auto run = [&](const std::string& what, const auto& make, const auto& ref) {
    const tx::tensor<T, 1, tx::cuda> dense = make(a, b, c, x);
    CHECK(mismatches16(tx::to_host(dense).data(), n, 0, ref, what + " (aligned)") == 0);
    const tx::tensor<T, 1, tx::cuda> shifted = make(ua, ub, uc, ux);
    CHECK(mismatches16(tx::to_host(shifted).data(), n - 1, 1, ref, what + " (unaligned operands)") == 0);
    tx::tensor<T, 1, tx::cuda> buf(tx::shape_t<1>{n});
    tx::view<T, 1, tx::cuda> dst(buf.data() + 1, {n - 1});
    dst = make(ua, ub, uc, ux);
    CHECK(mismatches16(tx::to_host(buf).data() + 1, n - 1, 1, ref, what + " (unaligned operands and destination)") ==
          0);
  };
  const auto A = [&](tx::index_t i) { return f(ha(i)); };
  const auto B = [&](tx::index_t i) { return f(hb(i)); };
  const auto C = [&](tx::index_t i) { return f(hc(i)); };
  run(
      "a + b", [](const auto& p, const auto& q, const auto&, const auto&) { return p + q; },
      [&](tx::index_t i) { return round16<T>(A(i) + B(i)); });
  run(
      "a - b", [](const auto& p, const auto& q, const auto&, const auto&) { return p - q; },
      [&](tx::index_t i) { return round16<T>(A(i) - B(i)); });
  run(
      "a * b", [](const auto& p, const auto& q, const auto&, const auto&) { return p * q; },
      [&](tx::index_t i) { return round16<T>(A(i) * B(i)); });
  run(
      "-a", [](const auto& p, const auto&, const auto&, const auto&) { return -p; },
      [&](tx::index_t i) { return round16<T>(-A(i)); });
  run(
      "abs(a)", [](const auto& p, const auto&, const auto&, const auto&) { return tx::abs(p); },
      [&](tx::index_t i) { return round16<T>(std::fabs(A(i))); });
  run(
      "a * b - c (two roundings)", [](const auto& p, const auto& q, const auto& r, const auto&) { return p * q - r; },
      [&](tx::index_t i) { return round16<T>(as_float(round16<T>(A(i) * B(i))) - C(i)); });
  run(
      "(a + b) * c (two roundings)",
      [](const auto& p, const auto& q, const auto& r, const auto&) { return (p + q) * r; },
      [&](tx::index_t i) { return round16<T>(as_float(round16<T>(A(i) + B(i))) * C(i)); });
  run(
      "a / b (float, rounded in pairs)", [](const auto& p, const auto& q, const auto&, const auto&) { return p / q; },
      [&](tx::index_t i) { return round16<T>(A(i) / B(i)); });
  run(
      "cast of float (rounded in pairs)",
      [](const auto&, const auto&, const auto&, const auto& s) { return tx::cast<T>(s); },
      [&](tx::index_t i) { return round16<T>(hx(i)); });

  // One rounding of the exact result equals float's then 16-bit's for add, subtract and multiply (the reason the
  // device may use pair instructions for them): checked here on every input pair.
  int double_rounding = 0;
  for (tx::index_t i = 0; i < n; ++i) {
    const ld x0 = test::wide(ha(i)), y0 = test::wide(hb(i));
    const ld exact[3] = {x0 + y0, x0 - y0, x0 * y0};
    const float in_float[3] = {A(i) + B(i), A(i) - B(i), A(i) * B(i)};
    for (int k = 0; k < 3; ++k) {
      const ld once = test::convert_ref<T>(exact[k]), twice = round16<T>(in_float[k]);
      if (!(std::isnan(once) ? std::isnan(twice) : once == twice && std::signbit(once) == std::signbit(twice)))
        ++double_rounding;
    }
  }
  CHECK(double_rounding == 0);
}

} // namespace

TEST_CASE("16-bit elementwise: 16-byte loads and pair arithmetic are bitwise the per-element rule") {
  SUBCASE("half") { check_elementwise16<tx::half>(); }
  SUBCASE("bfloat16") { check_elementwise16<tx::bfloat16>(); }
}

TEST_CASE("broadcast elementwise: rows read by vector loads, and every fallback, against float references") {
  // One buffer holds x at an aligned start and at element 1 (unaligned rows); b likewise.
  const tx::index_t rows = 37;
  const auto hbuf = test::random<float, 1>({rows * 72 + 8}, -3, 3);
  const auto hbias = test::random<float, 1>({80}, -3, 3);
  const auto buf = dev(hbuf);
  const auto bias = dev(hbias);
  const auto xv = [&](tx::index_t first, tx::index_t len) {
    return tx::view<const float, 2, tx::cuda>(buf.data() + first, {rows, len});
  };
  const auto bv = [&](tx::index_t first, tx::index_t len) {
    return tx::view<const float, 1, tx::cuda>(bias.data() + first, {len});
  };
  const auto X = [&](tx::index_t first, tx::index_t len, tx::index_t i, tx::index_t j) {
    return hbuf(first + i * len + j);
  };

  SUBCASE("bias add and softmax shift: aligned rows of 4k floats, rows of 63, unaligned x or bias") {
    // (x offset, row length, bias offset): aligned rows of 4k floats (the rows kernel); a row length of 63, x or the
    // bias from element 1 (the 32-bit strided kernel).
    const tx::index_t cases[][3] = {{0, 64, 0}, {0, 72, 4}, {4, 8, 0}, {0, 63, 0}, {1, 64, 0}, {0, 64, 1}};
    for (const auto& cs : cases) {
      const tx::index_t xo = cs[0], len = cs[1], bo = cs[2];
      CAPTURE(xo);
      CAPTURE(len);
      CAPTURE(bo);
      const tx::tensor<float, 2, tx::cuda> sum = xv(xo, len) + bv(bo, len);
      const auto got = tx::to_host(sum);
      for (tx::index_t i = 0; i < rows; ++i)
        for (tx::index_t j = 0; j < len; ++j) REQUIRE(got(i, j) == X(xo, len, i, j) + hbias(bo + j));
      // the softmax shift: each row minus its maximum (a column broadcast along the rows)
      const tx::tensor<float, 2, tx::cuda> m = tx::max(xv(xo, len), 1, tx::keepdims);
      const auto shifted = tx::to_host(tx::tensor<float, 2, tx::cuda>(xv(xo, len) - m));
      for (tx::index_t i = 0; i < rows; ++i) {
        float mx = X(xo, len, i, 0);
        for (tx::index_t j = 1; j < len; ++j) mx = std::max(mx, X(xo, len, i, j));
        for (tx::index_t j = 0; j < len; ++j) REQUIRE(shifted(i, j) == X(xo, len, i, j) - mx);
      }
    }
  }
  SUBCASE("rank 3, a generator operand, and a destination with a row stride") {
    const auto hx = test::random<float, 3>({5, 7, 12}, -3, 3);
    const auto hy = test::random<float, 2>({7, 12}, -3, 3);
    const auto x3 = dev(hx);
    const auto y2 = dev(hy);
    const auto got =
        tx::to_host(tx::tensor<float, 3, tx::cuda>(x3 * y2 + tx::arange<float, tx::cuda>(0.0f, 12.0f, 1.0f)));
    for (tx::index_t i = 0; i < 5; ++i)
      for (tx::index_t j = 0; j < 7; ++j)
        for (tx::index_t k = 0; k < 12; ++k) REQUIRE(got(i, j, k) == hx(i, j, k) * hy(j, k) + static_cast<float>(k));
    tx::tensor<float, 2, tx::cuda> wide(tx::shape_t<2>{rows, 128});
    tx::slice(wide, 1, 64, 128) = tx::full<tx::cuda>(tx::shape_t<2>{rows, 64}, -7.0f);
    tx::slice(wide, 1, 0, 64) = xv(0, 64) + bv(0, 64);
    const auto w = tx::to_host(wide);
    for (tx::index_t i = 0; i < rows; ++i)
      for (tx::index_t j = 0; j < 128; ++j) REQUIRE(w(i, j) == (j < 64 ? X(0, 64, i, j) + hbias(j) : -7.0f));
  }
  SUBCASE("16-bit rows: 8 per vector, pairs; and rows of 61") {
    const auto hh = inputs16<tx::half>(rows * 64 + 8, 5);
    const auto hbh = inputs16<tx::half>(72, 6);
    const auto h = dev(hh);
    const auto bh = dev(hbh);
    const auto f = [](tx::half v) { return static_cast<float>(v); };
    for (const tx::index_t len : {64, 61}) {
      for (const tx::index_t xo : {0, 8, 1}) {  // aligned, aligned by 16 bytes, unaligned
        CAPTURE(len);
        CAPTURE(xo);
        const tx::view<const tx::half, 2, tx::cuda> x16(h.data() + xo, {rows, len});
        const tx::view<const tx::half, 1, tx::cuda> b16(bh.data(), {len});
        const tx::tensor<tx::half, 2, tx::cuda> s = x16 * b16 + b16;
        const auto got = tx::to_host(s);
        const auto ref = [&](tx::index_t k) {
          const tx::index_t j = k % len;
          return round16<tx::half>(as_float(round16<tx::half>(f(hh(xo + k)) * f(hbh(j)))) + f(hbh(j)));
        };
        CHECK(mismatches16(got.data(), rows * len, 0, ref, "x * b + b") == 0);
      }
    }
  }
}

namespace {
/// The tx::linalg_error that the next copy of `result` to the host throws (its evaluation threw nothing): its op and
/// batch index checked, its info (LAPACK's/cuSOLVER's) returned for the caller's check.
template <class T, std::size_t R>
int deferred_linalg_error(const tx::tensor<T, R, tx::cuda>& result, const char* op, tx::index_t batch) {
  try {
    (void)tx::to_host(result);
  } catch (const tx::linalg_error& e) {
    CHECK(e.op_name == op);
    CHECK(e.batch_index == batch);
    return e.library_info;
  }
  FAIL("no linalg_error from ", op);
  return 0;
}
}  // namespace

TEST_CASE("cholesky on cuda (cuSOLVER potrf) matches the host's, and a failing matrix throws at the next to_host") {
  constexpr tx::index_t batches = 5, n = 33;
  auto check = [&]<class T>(T tol) {
    std::mt19937_64 g(11);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> m({batches, n, n}), a({batches, n, n});
    cutest::fill(m, nd, g);
    for (tx::index_t q = 0; q < batches; ++q)  // m mᵀ + n I: positive definite
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          long double v = i == j ? n : 0;
          for (tx::index_t l = 0; l < n; ++l) v += static_cast<long double>(m(q, i, l)) * m(q, j, l);
          a(q, i, j) = static_cast<T>(v);
        }
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a);
    const tx::tensor<T, 3> got = tx::to_host(tx::linalg::cholesky(a_dev));
#if defined(TEXPR_TEST_HAS_LAPACK)
    const tx::tensor<T, 3> want = tx::linalg::cholesky(a);  // LAPACK's potrf
#endif
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          INFO("matrix " << q << " (" << i << ", " << j << ")");
          if (j > i) REQUIRE(got(q, i, j) == T(0));
#if defined(TEXPR_TEST_HAS_LAPACK)
          REQUIRE(std::abs(static_cast<double>(got(q, i, j)) - want(q, i, j)) <= tol * (1 + std::abs(static_cast<double>(want(q, i, j)))));
#endif
          long double llt = 0;  // (L Lᵀ)(i, j) = A(i, j)
          for (tx::index_t l = 0; l <= std::min(i, j); ++l) llt += static_cast<long double>(got(q, i, l)) * got(q, j, l);
          REQUIRE(std::abs(static_cast<double>(llt - a(q, i, j))) <= tol * n * (1 + std::abs(static_cast<double>(a(q, i, j)))));
        }
    // matrix 3 not positive definite: evaluation does not throw, the next copy to the host does
    tx::tensor<T, 3> bad = a.clone();
    bad(3, 4, 4) = T(-1);
    const tx::tensor<T, 3, tx::cuda> bad_dev = cutest::dev(bad);
    tx::tensor<T, 3, tx::cuda> l = tx::linalg::cholesky(bad_dev);
    const int info = deferred_linalg_error(l, "cholesky", 3);
    CHECK(info > 0);
    CHECK(info <= 5);
  };
  check.template operator()<float>(2e-4f);
  check.template operator()<double>(1e-11);
}

namespace {

/// sign and log|det| of matrix q of a (n x n) by Gaussian elimination with partial pivoting in long double.
template <class T> std::pair<int, long double> reference_slogdet(const tx::tensor<T, 3>& a, tx::index_t q) {
  const tx::index_t n = a.shape()[2];
  std::vector<long double> u(static_cast<std::size_t>(n * n));
  for (tx::index_t i = 0; i < n * n; ++i) u[static_cast<std::size_t>(i)] = a(q, i / n, i % n);
  int sign = 1;
  long double log_abs = 0;
  for (tx::index_t c = 0; c < n; ++c) {
    tx::index_t p = c;
    for (tx::index_t r = c + 1; r < n; ++r)
      if (std::fabs(u[static_cast<std::size_t>(r * n + c)]) > std::fabs(u[static_cast<std::size_t>(p * n + c)])) p = r;
    const long double pivot = u[static_cast<std::size_t>(p * n + c)];
    if (pivot == 0) return {0, -std::numeric_limits<long double>::infinity()};
    if (p != c) {
      for (tx::index_t j = 0; j < n; ++j) std::swap(u[static_cast<std::size_t>(p * n + j)], u[static_cast<std::size_t>(c * n + j)]);
      sign = -sign;
    }
    if (pivot < 0) sign = -sign;
    log_abs += std::log(std::fabs(pivot));
    for (tx::index_t r = c + 1; r < n; ++r) {
      const long double f = u[static_cast<std::size_t>(r * n + c)] / pivot;
      for (tx::index_t j = c; j < n; ++j) u[static_cast<std::size_t>(r * n + j)] -= f * u[static_cast<std::size_t>(c * n + j)];
    }
  }
  return {sign, log_abs};
}

} // namespace

TEST_CASE("solve, slogdet, eigh and eigvalsh on cuda (cuSOLVER getrf, getrs, syevd) match the host's") {
  constexpr tx::index_t batches = 5, n = 33, k = 4;
  auto check = [&]<class T>(double tol) {
    std::mt19937_64 g(12);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> m({batches, n, n}), a({batches, n, n}), s({batches, n, n}), b({batches, n, k});
    cutest::fill(m, nd, g);
    cutest::fill(b, nd, g);
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          a(q, i, j) = static_cast<T>(m(q, i, j) + (i == j ? T(n) : T(0)));  // well conditioned
          // symmetric in the lower triangle, noise above it (never read)
          s(q, i, j) = j > i ? static_cast<T>(nd(g)) : static_cast<T>((static_cast<double>(m(q, i, j)) + m(q, j, i)) / 2);
        }
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a), b_dev = cutest::dev(b), s_dev = cutest::dev(s);
    auto close = [&](double got, double want, double scale) { return std::abs(got - want) <= tol * (1 + std::abs(scale)); };

    // solve: A X = B (k columns, and one), against LAPACK's getrf + getrs on the host and by its residual
    for (const tx::index_t cols : {k, tx::index_t(1)}) {
      INFO("solve with " << cols << " right-hand sides");
      const auto b_cols = tx::tensor<T, 3>(tx::eval(tx::slice(b, 2, 0, cols)));
      const tx::tensor<T, 3> x = tx::to_host(tx::linalg::solve(a_dev, cutest::dev(b_cols)));
      REQUIRE(x.shape() == b_cols.shape());
#if defined(TEXPR_TEST_HAS_LAPACK)
      const tx::tensor<T, 3> want = tx::linalg::solve(a, b_cols);
#endif
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t i = 0; i < n; ++i)
          for (tx::index_t c = 0; c < cols; ++c) {
            INFO("matrix " << q << " (" << i << ", " << c << ")");
#if defined(TEXPR_TEST_HAS_LAPACK)
            REQUIRE(close(x(q, i, c), want(q, i, c), want(q, i, c)));
#endif
            long double ax = 0, mag = 0;
            for (tx::index_t j = 0; j < n; ++j) ax += static_cast<long double>(a(q, i, j)) * x(q, j, c), mag += std::fabs(static_cast<long double>(a(q, i, j)) * x(q, j, c));
            REQUIRE(std::abs(static_cast<double>(ax - b_cols(q, i, c))) <= tol * static_cast<double>(1 + mag));
          }
    }

    // slogdet of m itself (determinants of both signs; LU pivots rows), one matrix made singular
    tx::tensor<T, 3> d = m.clone();
    for (tx::index_t j = 0; j < n; ++j) d(2, 5, j) = T(0);
    const auto d_dev = cutest::dev(d);
    auto [sign_of, log_of] = tx::linalg::slogdet(d_dev);
    const tx::tensor<T, 1> sign = tx::to_host(sign_of), logabsdet = tx::to_host(log_of);
    bool negative_seen = false;
    for (tx::index_t q = 0; q < batches; ++q) {
      INFO("slogdet of matrix " << q);
      const std::pair<int, long double> want = reference_slogdet(d, q);
      negative_seen = negative_seen || want.first < 0;
      CHECK(static_cast<int>(sign(q)) == want.first);
      if (want.first == 0) CHECK((std::isinf(logabsdet(q)) && logabsdet(q) < 0));
      else CHECK(close(logabsdet(q), static_cast<double>(want.second), static_cast<double>(want.second)));
    }
    CHECK(negative_seen);
#if defined(TEXPR_TEST_HAS_LAPACK)
    {
      auto [host_sign, host_log] = tx::linalg::slogdet(d);  // LAPACK's getrf
      const tx::tensor<T, 1> hs = host_sign, hl = host_log;
      for (tx::index_t q = 0; q < batches; ++q) {
        CHECK(sign(q) == hs(q));
        if (hs(q) != T(0)) CHECK(close(logabsdet(q), hl(q), hl(q)));
      }
    }
#endif

    // eigh: S V = V diag(w), Vᵀ V = I, w ascending; eigvalsh's values are eigh's; both against LAPACK's syevd
    auto [w_of, v_of] = tx::linalg::eigh(s_dev);
    const tx::tensor<T, 2> w = tx::to_host(w_of), values = tx::to_host(tx::linalg::eigvalsh(s_dev));
    const tx::tensor<T, 3> v = tx::to_host(v_of);
    REQUIRE(w.shape() == tx::shape_t<2>{batches, n});
    REQUIRE(v.shape() == tx::shape_t<3>{batches, n, n});
    auto sym = [&](tx::index_t q, tx::index_t i, tx::index_t j) { return static_cast<long double>(i >= j ? s(q, i, j) : s(q, j, i)); };
#if defined(TEXPR_TEST_HAS_LAPACK)
    auto [hw_of, hv_of] = tx::linalg::eigh(s);
    const tx::tensor<T, 2> hw = hw_of;
    const tx::tensor<T, 3> hv = hv_of;
#endif
    for (tx::index_t q = 0; q < batches; ++q) {
      long double norm = 0;
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) norm = std::max(norm, std::fabs(sym(q, i, j)));
      for (tx::index_t r = 0; r < n; ++r) {
        INFO("eigenpair " << r << " of matrix " << q);
        if (r > 0) CHECK(w(q, r - 1) <= w(q, r));
        CHECK(close(values(q, r), w(q, r), static_cast<double>(norm)));
#if defined(TEXPR_TEST_HAS_LAPACK)
        CHECK(close(w(q, r), hw(q, r), static_cast<double>(norm)));
        long double dot = 0;  // the same unit vector up to its sign (the eigenvalues are distinct)
        for (tx::index_t i = 0; i < n; ++i) dot += static_cast<long double>(v(q, i, r)) * hv(q, i, r);
        CHECK(std::abs(static_cast<double>(std::fabs(dot) - 1)) <= tol * n);
#endif
        for (tx::index_t i = 0; i < n; ++i) {
          long double sv = 0, vv = 0;
          for (tx::index_t j = 0; j < n; ++j) sv += sym(q, i, j) * v(q, j, r), vv += static_cast<long double>(v(q, j, i)) * v(q, j, r);
          REQUIRE(std::abs(static_cast<double>(sv - static_cast<long double>(w(q, r)) * v(q, i, r))) <= tol * static_cast<double>(norm * n));
          REQUIRE(std::abs(static_cast<double>(vv - (i == r ? 1 : 0))) <= tol * n);
        }
      }
    }

    // empty batches and empty matrices
    const tx::tensor<T, 3, tx::cuda> none = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{0, 3, 3})), empty = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{2, 0, 0}));
    CHECK(tx::to_host(tx::linalg::solve(none, cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{0, 3, 2})))).size() == 0);
    CHECK(tx::to_host(tx::linalg::solve(empty, cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{2, 0, 2})))).size() == 0);
    CHECK(tx::to_host(tx::linalg::eigvalsh(empty)).shape() == tx::shape_t<2>{2, 0});
    CHECK(tx::to_host(tx::linalg::eigh(none).eigenvalues).shape() == tx::shape_t<2>{0, 3});
    const tx::tensor<T, 1> empty_sign = tx::to_host(tx::linalg::slogdet(empty).sign), empty_log = tx::to_host(tx::linalg::slogdet(empty).logabsdet);
    for (tx::index_t q = 0; q < 2; ++q) CHECK((empty_sign(q) == T(1) && empty_log(q) == T(0)));  // det of an empty matrix: 1

    // a singular A in solve: evaluation does not throw, the next copy to the host does
    tx::tensor<T, 3> bad = a.clone();
    for (tx::index_t j = 0; j < n; ++j) bad(3, 7, j) = T(0);
    tx::tensor<T, 3, tx::cuda> x_bad = tx::linalg::solve(cutest::dev(bad), b_dev);
    CHECK(deferred_linalg_error(x_bad, "solve", 3) > 0);
  };
  check.template operator()<float>(2e-4);
  check.template operator()<double>(1e-10);
}

TEST_CASE("solve_triangular on cuda (cuBLAS trsm) matches the host's, and a zero on the diagonal throws at the next to_host") {
  constexpr tx::index_t batches = 5, n = 33, k = 4;
  auto check = [&]<class T>(double tol) {
    std::mt19937_64 g(14);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> a({batches, n, n}), b({batches, n, k});
    cutest::fill(a, nd, g);
    cutest::fill(b, nd, g);
    for (tx::index_t q = 0; q < batches; ++q)  // a dominant diagonal: well conditioned either triangle
      for (tx::index_t i = 0; i < n; ++i) a(q, i, i) = static_cast<T>(n + nd(g));
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a);
    for (const bool upper : {false, true})
      for (const tx::index_t cols : {k, tx::index_t(1)}) {
        INFO((upper ? "upper" : "lower") << " with " << cols << " right-hand sides");
        const auto which = upper ? tx::linalg::triangle::upper : tx::linalg::triangle::lower;
        const auto b_cols = tx::tensor<T, 3>(tx::eval(tx::slice(b, 2, 0, cols)));
        const tx::tensor<T, 3> x = tx::to_host(tx::linalg::solve_triangular(a_dev, cutest::dev(b_cols), which));
        REQUIRE(x.shape() == b_cols.shape());
#if defined(TEXPR_TEST_HAS_LAPACK)
        const tx::tensor<T, 3> want = tx::linalg::solve_triangular(a, b_cols, which);  // LAPACK's trtrs
#endif
        for (tx::index_t q = 0; q < batches; ++q)
          for (tx::index_t i = 0; i < n; ++i)
            for (tx::index_t c = 0; c < cols; ++c) {
              INFO("matrix " << q << " (" << i << ", " << c << ")");
#if defined(TEXPR_TEST_HAS_LAPACK)
              REQUIRE(std::abs(static_cast<double>(x(q, i, c)) - want(q, i, c)) <= tol * (1 + std::abs(static_cast<double>(want(q, i, c)))));
#endif
              long double ax = 0, mag = 0;  // only the triangle is read: the other one is noise
              for (tx::index_t j = upper ? i : 0; j <= (upper ? n - 1 : i); ++j)
                ax += static_cast<long double>(a(q, i, j)) * x(q, j, c), mag += std::fabs(static_cast<long double>(a(q, i, j)) * x(q, j, c));
              REQUIRE(std::abs(static_cast<double>(ax - b_cols(q, i, c))) <= tol * static_cast<double>(1 + mag));
            }
      }
    // an empty batch and empty matrices
    const auto none = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{0, 3, 3}));
    CHECK(tx::to_host(tx::linalg::solve_triangular(none, cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{0, 3, 2})), tx::linalg::triangle::lower)).size() == 0);
    const auto empty = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{2, 0, 0}));
    CHECK(tx::to_host(tx::linalg::solve_triangular(empty, cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{2, 0, 3})), tx::linalg::triangle::upper)).size() == 0);
    // a zero on matrix 2's diagonal at row 6: evaluation does not throw, the next copy to the host does (trtrs's info)
    tx::tensor<T, 3> bad = a.clone();
    bad(2, 6, 6) = T(0);
    tx::tensor<T, 3, tx::cuda> x_bad = tx::linalg::solve_triangular(cutest::dev(bad), cutest::dev(b), tx::linalg::triangle::upper);
    CHECK(deferred_linalg_error(x_bad, "solve_triangular", 2) == 7);
  };
  check.template operator()<float>(2e-4);
  check.template operator()<double>(1e-10);
}

TEST_CASE("qr on cuda (cuSOLVER geqrf, orgqr) matches the host's, tall and wide") {
  constexpr tx::index_t batches = 4;
  auto check = [&]<class T>(double tol, tx::index_t m, tx::index_t n) {
    INFO(m << " x " << n);
    const tx::index_t k = std::min(m, n);
    std::mt19937_64 g(15);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> a({batches, m, n});
    cutest::fill(a, nd, g);
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a);
    auto [q_of, r_of] = tx::linalg::qr(a_dev);
    const tx::tensor<T, 3> q = tx::to_host(tx::tensor<T, 3, tx::cuda>(q_of)), r = tx::to_host(tx::tensor<T, 3, tx::cuda>(r_of));
    REQUIRE(q.shape() == tx::shape_t<3>{batches, m, k});
    REQUIRE(r.shape() == tx::shape_t<3>{batches, k, n});
#if defined(TEXPR_TEST_HAS_LAPACK)
    auto [hq_of, hr_of] = tx::linalg::qr(a);  // LAPACK's geqrf and orgqr
    const tx::tensor<T, 3> hq = hq_of, hr = hr_of;
#endif
    for (tx::index_t b = 0; b < batches; ++b) {
      for (tx::index_t i = 0; i < m; ++i)
        for (tx::index_t j = 0; j < n; ++j) {  // Q R = A
          long double qr = 0, mag = 0;
          for (tx::index_t l = 0; l < k; ++l) qr += static_cast<long double>(q(b, i, l)) * r(b, l, j), mag += std::fabs(static_cast<long double>(q(b, i, l)) * r(b, l, j));
          INFO("matrix " << b << " (" << i << ", " << j << ")");
          REQUIRE(std::abs(static_cast<double>(qr - a(b, i, j))) <= tol * k * static_cast<double>(1 + mag));
        }
      for (tx::index_t c = 0; c < k; ++c) {
        INFO("matrix " << b << ", column " << c);
        for (tx::index_t j = 0; j < c; ++j) REQUIRE(r(b, c, j) == T(0));  // upper triangular
        for (tx::index_t d = 0; d < k; ++d) {  // Qᵀ Q = I
          long double dot = 0;
          for (tx::index_t i = 0; i < m; ++i) dot += static_cast<long double>(q(b, i, c)) * q(b, i, d);
          REQUIRE(std::abs(static_cast<double>(dot) - (c == d ? 1 : 0)) <= tol * m);
        }
#if defined(TEXPR_TEST_HAS_LAPACK)
        // the host's Q column and R row, up to one sign for the pair (Householder's sign is the same convention in
        // both libraries, but a sign is not what this test is about)
        long double dot = 0;
        for (tx::index_t i = 0; i < m; ++i) dot += static_cast<long double>(q(b, i, c)) * hq(b, i, c);
        const double sign = dot < 0 ? -1 : 1;
        for (tx::index_t i = 0; i < m; ++i) CHECK(std::abs(sign * q(b, i, c) - hq(b, i, c)) <= tol * 10 * m);
        for (tx::index_t j = 0; j < n; ++j) CHECK(std::abs(sign * r(b, c, j) - hr(b, c, j)) <= tol * 10 * m * (1 + std::abs(static_cast<double>(hr(b, c, j)))));
#endif
      }
    }
    // an empty batch and empty matrices
    const auto none = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{0, m, n}));
    CHECK(tx::to_host(tx::tensor<T, 3, tx::cuda>(tx::linalg::qr(none).r)).shape() == tx::shape_t<3>{0, k, n});
    const auto empty = cutest::dev(tx::tensor<T, 3>(tx::shape_t<3>{2, 0, n}));
    CHECK(tx::to_host(tx::tensor<T, 3, tx::cuda>(tx::linalg::qr(empty).q)).shape() == tx::shape_t<3>{2, 0, 0});
  };
  for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{29, 17}, {17, 29}, {12, 12}}) {
    check.template operator()<float>(2e-5, shape.first, shape.second);
    check.template operator()<double>(1e-13, shape.first, shape.second);
  }
}

TEST_CASE("svd and svdvals on cuda (cuSOLVER gesvd) match the host's, tall, wide and square, reduced and full") {
  constexpr tx::index_t batches = 3;
  auto check = [&]<class T>(double tol, tx::index_t m, tx::index_t n, bool full) {
    INFO(m << " x " << n << (full ? ", full" : ", reduced"));
    const tx::index_t k = std::min(m, n), ucols = full ? m : k, vrows = full ? n : k;
    std::mt19937_64 g(16);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> a({batches, m, n});
    cutest::fill(a, nd, g);
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a);
    auto [u_of, s_of, vh_of] = tx::linalg::svd(a_dev, full);
    const tx::tensor<T, 3> u = tx::to_host(tx::tensor<T, 3, tx::cuda>(u_of)), vh = tx::to_host(tx::tensor<T, 3, tx::cuda>(vh_of));
    const tx::tensor<T, 2> s = tx::to_host(tx::tensor<T, 2, tx::cuda>(s_of)), values = tx::to_host(tx::linalg::svdvals(a_dev));
    REQUIRE(u.shape() == tx::shape_t<3>{batches, m, ucols});
    REQUIRE(vh.shape() == tx::shape_t<3>{batches, vrows, n});
#if defined(TEXPR_TEST_HAS_LAPACK)
    auto [hu_of, hs_of, hvh_of] = tx::linalg::svd(a, full);  // LAPACK's gesdd
    const tx::tensor<T, 3> hu = hu_of, hvh = hvh_of;
    const tx::tensor<T, 2> hs = hs_of;
#endif
    for (tx::index_t b = 0; b < batches; ++b) {
      for (tx::index_t r = 0; r < k; ++r) {
        INFO("matrix " << b << ", singular value " << r);
        if (r > 0) CHECK(s(b, r - 1) >= s(b, r));
        CHECK(std::abs(static_cast<double>(values(b, r)) - s(b, r)) <= tol * (1 + s(b, 0)));
#if defined(TEXPR_TEST_HAS_LAPACK)
        CHECK(std::abs(static_cast<double>(s(b, r)) - hs(b, r)) <= tol * m * (1 + hs(b, 0)));
        // the host's singular vectors up to one sign for the pair (random A: distinct singular values)
        long double dot = 0;
        for (tx::index_t i = 0; i < m; ++i) dot += static_cast<long double>(u(b, i, r)) * hu(b, i, r);
        const double sign = dot < 0 ? -1 : 1;
        for (tx::index_t i = 0; i < m; ++i) CHECK(std::abs(sign * u(b, i, r) - hu(b, i, r)) <= tol * 100 * m);
        for (tx::index_t j = 0; j < n; ++j) CHECK(std::abs(sign * vh(b, r, j) - hvh(b, r, j)) <= tol * 100 * m);
#endif
      }
      for (tx::index_t i = 0; i < m; ++i)
        for (tx::index_t j = 0; j < n; ++j) {  // U diag(s) Vᴴ = A
          long double usv = 0, mag = 0;
          for (tx::index_t l = 0; l < k; ++l) {
            const long double t = static_cast<long double>(u(b, i, l)) * s(b, l) * vh(b, l, j);
            usv += t, mag += std::fabs(t);
          }
          INFO("matrix " << b << " (" << i << ", " << j << ")");
          REQUIRE(std::abs(static_cast<double>(usv - a(b, i, j))) <= tol * k * static_cast<double>(1 + mag));
        }
      auto orthonormal = [&](auto at, tx::index_t count, tx::index_t length) {  // at(vector, entry)
        for (tx::index_t c = 0; c < count; ++c)
          for (tx::index_t d = 0; d < count; ++d) {
            long double dot = 0;
            for (tx::index_t i = 0; i < length; ++i) dot += static_cast<long double>(at(c, i)) * at(d, i);
            REQUIRE(std::abs(static_cast<double>(dot) - (c == d ? 1 : 0)) <= tol * 10 * length);
          }
      };
      orthonormal([&](tx::index_t c, tx::index_t i) { return u(b, i, c); }, ucols, m);  // U's columns
      orthonormal([&](tx::index_t r, tx::index_t j) { return vh(b, r, j); }, vrows, n);  // Vᴴ's rows
    }
  };
  for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{23, 11}, {11, 23}, {14, 14}})
    for (const bool full : {false, true}) {
      check.template operator()<float>(5e-5, shape.first, shape.second, full);
      check.template operator()<double>(1e-12, shape.first, shape.second, full);
    }
  // an empty batch; empty matrices: full U and Vᴴ are identities (as the host's and NumPy's)
  const auto none = cutest::dev(tx::tensor<float, 3>(tx::shape_t<3>{0, 4, 3}));
  CHECK(tx::to_host(tx::linalg::svdvals(none)).shape() == tx::shape_t<2>{0, 3});
  CHECK(tx::to_host(tx::tensor<float, 3, tx::cuda>(tx::linalg::svd(none).u)).shape() == tx::shape_t<3>{0, 4, 3});
  const auto empty = cutest::dev(tx::tensor<float, 3>(tx::shape_t<3>{2, 0, 3}));
  const tx::tensor<float, 3> vh = tx::to_host(tx::tensor<float, 3, tx::cuda>(tx::linalg::svd(empty, true).vh));
  REQUIRE(vh.shape() == tx::shape_t<3>{2, 3, 3});
  for (tx::index_t b = 0; b < 2; ++b)
    for (tx::index_t i = 0; i < 3; ++i)
      for (tx::index_t j = 0; j < 3; ++j) CHECK(vh(b, i, j) == (i == j ? 1.0f : 0.0f));
}

TEST_CASE("lstsq on cuda (cuSOLVER gesvd, cuBLAS GEMMs) matches the host's, tall, wide, square and rank deficient") {
  constexpr tx::index_t batches = 3, k = 4;
  // rank 0: A of normals (full rank); else A = P Q with P (m x rank) and Q (rank x n) small integers, so A is exact
  // in the dtype and its singular values past `rank` are exactly 0 (the computed ones fall far below the cutoff)
  auto check = [&]<class T>(double tol, tx::index_t m, tx::index_t n, tx::index_t rank) {
    INFO(m << " x " << n << (rank ? ", rank " + std::to_string(rank) : std::string(", full rank")));
    std::mt19937_64 g(17);
    std::normal_distribution<double> nd;
    std::uniform_int_distribution<int> small(-2, 2);
    tx::tensor<T, 3> a({batches, m, n}), b({batches, m, k});
    cutest::fill(b, nd, g);
    // the rows spanning A's row space (Q, or A itself when wide and full rank): X must lie in their span
    const tx::index_t span_rows = rank ? rank : m;
    std::vector<long double> span(static_cast<std::size_t>(batches * span_rows * n));
    if (rank == 0) {
      cutest::fill(a, nd, g);
      for (tx::index_t i = 0; i < a.size(); ++i) span[static_cast<std::size_t>(i)] = a.data()[i];
    } else {
      std::vector<int> p(static_cast<std::size_t>(m * rank));
      for (tx::index_t q = 0; q < batches; ++q) {
        for (auto& v : p) v = small(g);
        for (tx::index_t i = 0; i < rank * n; ++i) span[static_cast<std::size_t>(q * rank * n + i)] = small(g);
        for (tx::index_t i = 0; i < m; ++i)
          for (tx::index_t j = 0; j < n; ++j) {
            long double v = 0;
            for (tx::index_t l = 0; l < rank; ++l)
              v += p[static_cast<std::size_t>(i * rank + l)] * span[static_cast<std::size_t>((q * rank + l) * n + j)];
            a(q, i, j) = static_cast<T>(v);
          }
      }
    }
    const tx::tensor<T, 3> x = tx::to_host(tx::linalg::lstsq(cutest::dev(a), cutest::dev(b)));
    REQUIRE(x.shape() == tx::shape_t<3>{batches, n, k});
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t c = 0; c < k; ++c) {
        INFO("matrix " << q << ", column " << c);
        // a least-squares solution: the normal equations Aᵀ (A X - B) = 0, relative to the terms' magnitudes
        std::vector<long double> res(static_cast<std::size_t>(m)), res_mag(static_cast<std::size_t>(m));
        for (tx::index_t i = 0; i < m; ++i) {
          long double v = -static_cast<long double>(b(q, i, c)), mag = std::fabs(static_cast<long double>(b(q, i, c)));
          for (tx::index_t j = 0; j < n; ++j) {
            const long double t = static_cast<long double>(a(q, i, j)) * x(q, j, c);
            v += t, mag += std::fabs(t);
          }
          res[static_cast<std::size_t>(i)] = v, res_mag[static_cast<std::size_t>(i)] = mag;
        }
        for (tx::index_t j = 0; j < n; ++j) {
          long double v = 0, mag = 0;
          for (tx::index_t i = 0; i < m; ++i) {
            v += a(q, i, j) * res[static_cast<std::size_t>(i)];
            mag += std::fabs(static_cast<long double>(a(q, i, j))) * res_mag[static_cast<std::size_t>(i)];
          }
          REQUIRE(std::abs(static_cast<double>(v)) <= tol * m * static_cast<double>(1 + mag));
        }
        // the minimum norm one: X = S (S Sᵀ)⁻¹ S X for the spanning rows S (Gauss-Jordan in long double; S Sᵀ is
        // positive definite). A tall full-rank A has one solution: nothing more to check.
        if (rank == 0 && m >= n) continue;
        auto at = [&](tx::index_t i, tx::index_t j) { return span[static_cast<std::size_t>((q * span_rows + i) * n + j)]; };
        std::vector<long double> gram(static_cast<std::size_t>(span_rows * span_rows)), sx(static_cast<std::size_t>(span_rows));
        long double x_max = 0;
        for (tx::index_t j = 0; j < n; ++j) x_max = std::max(x_max, std::fabs(static_cast<long double>(x(q, j, c))));
        for (tx::index_t i = 0; i < span_rows; ++i) {
          for (tx::index_t l = 0; l < span_rows; ++l)
            for (tx::index_t j = 0; j < n; ++j) gram[static_cast<std::size_t>(i * span_rows + l)] += at(i, j) * at(l, j);
          for (tx::index_t j = 0; j < n; ++j) sx[static_cast<std::size_t>(i)] += at(i, j) * x(q, j, c);
        }
        const auto rows = static_cast<std::size_t>(span_rows);
        for (std::size_t pv = 0; pv < rows; ++pv)
          for (std::size_t i = 0; i < rows; ++i) {
            if (i == pv) continue;
            const long double f = gram[i * rows + pv] / gram[pv * rows + pv];
            for (std::size_t j = 0; j < rows; ++j) gram[i * rows + j] -= f * gram[pv * rows + j];
            sx[i] -= f * sx[pv];
          }
        for (tx::index_t j = 0; j < n; ++j) {
          long double projected = 0;
          for (std::size_t i = 0; i < rows; ++i) projected += at(static_cast<tx::index_t>(i), j) * sx[i] / gram[i * rows + i];
          REQUIRE(std::abs(static_cast<double>(projected - x(q, j, c))) <= tol * 100 * static_cast<double>(1 + x_max));
        }
      }
#if defined(TEXPR_TEST_HAS_LAPACK)
    const tx::tensor<T, 3> xh = tx::linalg::lstsq(a, b);  // LAPACK's gelsd
    for (tx::index_t q = 0; q < batches; ++q) {
      double x_max = 0;
      for (tx::index_t j = 0; j < n; ++j)
        for (tx::index_t c = 0; c < k; ++c) x_max = std::max(x_max, std::abs(static_cast<double>(xh(q, j, c))));
      for (tx::index_t j = 0; j < n; ++j)
        for (tx::index_t c = 0; c < k; ++c) {
          INFO("matrix " << q << " (" << j << ", " << c << ")");
          CHECK(std::abs(static_cast<double>(x(q, j, c)) - xh(q, j, c)) <= tol * 100 * (1 + x_max));
        }
    }
#endif
  };
  for (const auto& shape : {std::pair<tx::index_t, tx::index_t>{23, 11}, {11, 23}, {14, 14}})
    for (const tx::index_t rank : {0, 3}) {
      check.template operator()<float>(5e-5, shape.first, shape.second, rank);
      check.template operator()<double>(1e-12, shape.first, shape.second, rank);
    }
  // empty batches and matrices; no equations (m == 0): X = 0, written over whatever its memory held
  auto empty = [](tx::index_t q, tx::index_t m, tx::index_t n, tx::index_t c) {
    return tx::to_host(tx::linalg::lstsq(cutest::dev(tx::tensor<double, 3>(tx::shape_t<3>{q, m, n})),
                                         cutest::dev(tx::tensor<double, 3>(tx::shape_t<3>{q, m, c}))));
  };
  CHECK(empty(0, 4, 3, 2).shape() == tx::shape_t<3>{0, 3, 2});
  CHECK(empty(2, 4, 0, 2).shape() == tx::shape_t<3>{2, 0, 2});
  CHECK(empty(2, 4, 3, 0).shape() == tx::shape_t<3>{2, 3, 0});
  tx::tensor<double, 3> ones({2, 3, 2});
  for (tx::index_t i = 0; i < ones.size(); ++i) ones.data()[i] = 1;
  tx::tensor<double, 3, tx::cuda> x0 = cutest::dev(ones);
  x0 = tx::linalg::lstsq(cutest::dev(tx::tensor<double, 3>(tx::shape_t<3>{2, 0, 3})),
                         cutest::dev(tx::tensor<double, 3>(tx::shape_t<3>{2, 0, 2})));
  const tx::tensor<double, 3> zeros = tx::to_host(x0);
  for (tx::index_t i = 0; i < zeros.size(); ++i) CHECK(zeros.data()[i] == 0.0);
}

TEST_CASE("lu_factor and lu_solve on cuda (cuSOLVER getrf, getrs) match the host's") {
  constexpr tx::index_t batches = 4, n = 29, k = 3;
  auto check = [&]<class T>(double tol) {
    std::mt19937_64 g(13);
    std::normal_distribution<double> nd;
    tx::tensor<T, 3> a({batches, n, n}), b({batches, n, k});
    cutest::fill(a, nd, g);
    cutest::fill(b, nd, g);
    const tx::tensor<T, 3, tx::cuda> a_dev = cutest::dev(a), b_dev = cutest::dev(b);
    auto [lu_of, pivots_of] = tx::linalg::lu_factor(a_dev);
    const tx::tensor<T, 3, tx::cuda> lu_dev = lu_of;
    const tx::tensor<std::int32_t, 2, tx::cuda> pivots_dev = pivots_of;
    const tx::tensor<T, 3> lu = tx::to_host(lu_dev);
    const tx::tensor<std::int32_t, 2> pivots = tx::to_host(pivots_dev);
    for (tx::index_t q = 0; q < batches; ++q) {
      // P A = L U: apply the row swaps to A in long double, compare with L U
      std::vector<long double> pa(static_cast<std::size_t>(n * n));
      for (tx::index_t i = 0; i < n * n; ++i) pa[static_cast<std::size_t>(i)] = a(q, i / n, i % n);
      for (tx::index_t i = 0; i < n; ++i) {
        const tx::index_t p = pivots(q, i) - 1;
        REQUIRE(p >= i);
        REQUIRE(p < n);
        for (tx::index_t j = 0; j < n; ++j) std::swap(pa[static_cast<std::size_t>(i * n + j)], pa[static_cast<std::size_t>(p * n + j)]);
      }
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          long double s = 0, mag = 0;
          for (tx::index_t l = 0; l <= std::min(i, j); ++l) {
            const long double li = l == i ? 1 : static_cast<long double>(lu(q, i, l));
            s += li * lu(q, l, j), mag += std::fabs(li * lu(q, l, j));
          }
          INFO("matrix " << q << " (" << i << ", " << j << ")");
          REQUIRE(std::abs(static_cast<double>(s - pa[static_cast<std::size_t>(i * n + j)])) <= tol * static_cast<double>(1 + mag));
        }
    }
#if defined(TEXPR_TEST_HAS_LAPACK)
    {
      // LAPACK's getrf: the same partial pivoting, so the same LU (its pivots are not evaluated here: nvcc cannot
      // compile the host's int32 cast kernel through the host-device accessor)
      const tx::tensor<T, 3> hl = tx::linalg::lu_factor(a).lu;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t i = 0; i < n; ++i) {
          for (tx::index_t j = 0; j < n; ++j) CHECK(std::abs(static_cast<double>(lu(q, i, j)) - hl(q, i, j)) <= tol * 10 * (1 + std::abs(static_cast<double>(hl(q, i, j)))));
        }
    }
#endif
    const tx::tensor<T, 3> x = tx::to_host(tx::linalg::lu_solve(lu_dev, pivots_dev, b_dev));
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t c = 0; c < k; ++c) {
          long double ax = 0, mag = 0;
          for (tx::index_t j = 0; j < n; ++j) ax += static_cast<long double>(a(q, i, j)) * x(q, j, c), mag += std::fabs(static_cast<long double>(a(q, i, j)) * x(q, j, c));
          REQUIRE(std::abs(static_cast<double>(ax - b(q, i, c))) <= tol * n * static_cast<double>(1 + mag));
        }
    // a pivot outside 1..n: evaluation does not throw, the next copy to the host does
    tx::tensor<std::int32_t, 2> wrong = pivots.clone();
    wrong(2, 5) = static_cast<std::int32_t>(n + 1);
    tx::tensor<T, 3, tx::cuda> x_bad = tx::linalg::lu_solve(lu_dev, cutest::dev(wrong), b_dev);
    CHECK(deferred_linalg_error(x_bad, "lu_solve", 2) == 6);
  };
  check.template operator()<float>(2e-4);
  check.template operator()<double>(1e-10);
}

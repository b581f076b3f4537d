// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU benchmarks: texpr against raw CUB, raw cuBLAS and a device-to-device copy, measured in the same
// process with CUDA events (warm- ups, median of repetitions). Prints ratios (texpr time / reference time,
// lower is better, 1.00 = parity) and achieved bandwidth or throughput.
#include <texpr/sort.hpp>
#include <texpr/texpr.hpp>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace tx = texpr;

namespace {

constexpr int warmups = 3;
constexpr int reps = 15;

/// Median milliseconds of f() on texpr's stream (tx::cuda_stream(): every texpr call and every anchor here runs on
/// it; events on the legacy default stream would not wait for its work).
double time_ms(const std::function<void()>& f) {
  const cudaStream_t stream = tx::cuda_stream();
  cudaEvent_t start, stop;
  TEXPR_CUDA_CHECK(cudaEventCreate(&start));
  TEXPR_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    TEXPR_CUDA_CHECK(cudaEventRecord(start, stream));
    f();
    TEXPR_CUDA_CHECK(cudaEventRecord(stop, stream));
    TEXPR_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    TEXPR_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    t.push_back(ms);
  }
  TEXPR_CUDA_CHECK(cudaEventDestroy(start));
  TEXPR_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const std::string& name, double ms, const std::string& ref_name, double ref_ms, double bytes, double flops) {
  std::printf("%-34s %9.3f ms  %-22s %9.3f ms  ratio %5.2f", name.c_str(), ms, ref_name.c_str(), ref_ms, ms / ref_ms);
  if (bytes > 0) std::printf("  %7.1f GB/s", bytes / ms / 1e6);
  if (flops > 0) std::printf("  %7.1f TFLOP/s", flops / ms / 1e9);
  std::printf("\n");
}

template <class T> tx::tensor<T, 1, tx::cuda> filled(tx::index_t n, float v) {
  tx::tensor<float, 1, tx::cuda> z(tx::shape_t<1>{n});
  return tx::eval(tx::cast<T>(z + v));
}

/// rows x cols host values 0.5 sin(0.7 i + 1.3 j + seed) * scale, computed in double (torch_compare.py builds
/// the same numbers, so both programs print the same losses).
tx::tensor<float, 2, tx::cuda> pattern(tx::index_t rows, tx::index_t cols, double seed, double scale) {
  tx::tensor<float, 2> t(tx::shape_t<2>{rows, cols});
  for (tx::index_t i = 0; i < rows; ++i)
    for (tx::index_t j = 0; j < cols; ++j)
      t(i, j) = static_cast<float>(0.5 * std::sin(0.7 * static_cast<double>(i) + 1.3 * static_cast<double>(j) + seed) * scale);
  return tx::to_device(t);
}

tx::tensor<float, 1, tx::cuda> pattern(tx::index_t n, double seed, double scale) {
  tx::tensor<float, 2, tx::cuda> t = pattern(1, n, seed, scale);
  return tx::eval(tx::reshape(t, tx::shape_t<1>{n}));
}

template <class X, class W1, class B1, class W2, class B2, class W3, class B3>
auto logits(const X& x, const W1& w1, const B1& b1, const W2& w2, const B2& b2, const W3& w3, const B3& b3) {
  auto h1 = tx::elu(tx::matmul(x, w1) + b1);
  auto h2 = tx::elu(tx::matmul(h1, w2) + b2);
  return tx::matmul(h2, w3) + b3;
}

/// The host peer benchmark's MLP (bench/peers): 784-256-256-10 ELU, MSE loss; the forward pass at batch 64 and one
/// SGD step at batch 128 (the six gradients, then all six parameters updated in place by tx::optim::sgd: one
/// multi-tensor launch), each eager and captured into a CUDA graph (tx::capture_step, then one replay per step).
/// torch_compare.py runs the same cases in PyTorch (eager, CUDA graph, torch.compile). Every step after the first
/// takes its temporaries from texpr's device block cache (no driver allocation), as PyTorch's take theirs from its
/// caching allocator.
void bench_mlp() {
  const auto w1 = pattern(784, 256, 3, 1 / std::sqrt(784.0)), w2 = pattern(256, 256, 5, 1 / 16.0),
             w3 = pattern(256, 10, 7, 1 / 16.0);
  const auto b1 = pattern(256, 4, 0.1), b2 = pattern(256, 6, 0.1), b3 = pattern(10, 8, 0.1);
  const auto x64 = pattern(64, 784, 1, 1), y64 = pattern(64, 10, 2, 1);
  const auto x128 = pattern(128, 784, 1, 1), y128 = pattern(128, 10, 2, 1);
  tx::tensor<float, 0, tx::cuda> loss(tx::shape_t<0>{});
  const auto forward = tx::mean(tx::square(logits(x64, w1, b1, w2, b2, w3, b3) - y64));
  const double fwd_ms = time_ms([&] { loss = forward; });
  std::printf("%-34s %9.3f ms  loss %.6f\n", "MLP forward, batch 64", fwd_ms, static_cast<double>(loss.item()));
  {
    const auto captured = tx::capture_step(forward);  // warmed up by the eager runs above
    const double ms = time_ms([&] { captured.replay(); });
    std::printf("%-34s %9.3f ms  loss %.6f\n", "MLP forward captured, batch 64", ms,
                static_cast<double>(std::get<0>(captured.results()).item()));
  }
  // The SGD step on copies of the parameters, eager then captured: each variant runs warm-ups + repetitions steps
  // from the same start, so both print the loss of the same step.
  const auto sgd_case = [&](bool capture) {
    tx::tensor<float, 2, tx::cuda> p1 = w1.clone(), p2 = w2.clone(), p3 = w3.clone();
    tx::tensor<float, 1, tx::cuda> q1 = b1.clone(), q2 = b2.clone(), q3 = b3.clone();
    tx::optim::sgd opt(std::tie(p1, q1, p2, q2, p3, q3), {.lr = 0.1});
    auto P1 = tx::param<struct w1_tag>(p1);
    auto Q1 = tx::param<struct b1_tag>(q1);
    auto P2 = tx::param<struct w2_tag>(p2);
    auto Q2 = tx::param<struct b2_tag>(q2);
    auto P3 = tx::param<struct w3_tag>(p3);
    auto Q3 = tx::param<struct b3_tag>(q3);
    const auto graphs =
        tx::value_and_grad(tx::mean(tx::square(logits(x128, P1, Q1, P2, Q2, P3, Q3) - y128)), P1, Q1, P2, Q2, P3, Q3);
    double ms = 0;
    float last = 0;
    opt.step(tx::eval_all(graphs));  // the first step, eagerly: fills the cache (and is what capture needs)
    if (capture) {
      const auto step = tx::capture_step(graphs, [&](const auto& r) { opt.step(r); });
      ms = time_ms([&] { step.replay(); });  // warm-ups + repetitions replays
      last = std::get<0>(step.results()).item();
    } else {
      ms = time_ms([&] {
        const auto r = tx::eval_all(graphs);
        opt.step(r);
        loss = std::get<0>(r);
      });
      last = loss.item();
    }
    const float moved = tx::sum(tx::abs(p1 - w1)).item();
    std::printf("%-34s %9.3f ms  loss %.6f, sum |w1 - w1 at start| %.6f\n",
                capture ? "SGD step captured, batch 128" : "SGD step, batch 128", ms, static_cast<double>(last),
                static_cast<double>(moved));
  };
  sgd_case(false);
  sgd_case(true);
}

template <class T> void bench_matmul(const char* name, cudaDataType_t type, cublasComputeType_t compute, tx::index_t n) {
  tx::tensor<float, 2, tx::cuda> z(tx::shape_t<2>{n, n});
  const tx::tensor<T, 2, tx::cuda> a = tx::cast<T>(z + 0.01f), b = tx::cast<T>(z + 0.02f);
  tx::tensor<T, 2, tx::cuda> c(tx::shape_t<2>{n, n});
  cublasHandle_t h;
  TEXPR_CUDA_CHECK(cublasCreate(&h));
  TEXPR_CUDA_CHECK(cublasSetStream(h, tx::cuda_stream()));
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const S alpha(1), beta(0);
  const int ni = static_cast<int>(n);
  const double texpr_ms = time_ms([&] { c = tx::matmul(a, b); });
  const double ref_ms = time_ms([&] {
    TEXPR_CUDA_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, b.data(), type, ni, a.data(), type, ni,
                                  &beta, c.data(), type, ni, compute, CUBLAS_GEMM_DEFAULT));
  });
  TEXPR_CUDA_CHECK(cublasDestroy(h));
  row(std::string("matmul ") + name + " " + std::to_string(n) + "^3", texpr_ms, "cublasGemmEx", ref_ms, 0,
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
}

/// FP8 (E4M3) n^3 with per-tensor scales, float output: tx::scaled_matmul (B given column-major, as cuBLASLt's FP8
/// GEMMs read it, so no copy) against cublasLtMatmul called directly with the same layout and workspace.
void bench_scaled_matmul_fp8(tx::index_t n) {
  tx::tensor<float, 2, tx::cuda> z(tx::shape_t<2>{n, n});
  const tx::tensor<tx::float8_e4m3, 2, tx::cuda> a = tx::cast<tx::float8_e4m3>(z + 0.5f), bt = tx::cast<tx::float8_e4m3>(z + 0.25f);
  const tx::view<const tx::float8_e4m3, 2, tx::cuda> b(bt.data(), {n, n}, {1, n});  // B = bt^T, column-major
  tx::tensor<float, 2, tx::cuda> c(tx::shape_t<2>{n, n});
  const double texpr_ms = time_ms([&] { c = tx::scaled_matmul(a, b, 2.0f, 0.5f); });
  cublasLtHandle_t h;
  TEXPR_CUDA_CHECK(cublasLtCreate(&h));
  cublasLtMatmulDesc_t op;
  TEXPR_CUDA_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t t = CUBLAS_OP_T, nt = CUBLAS_OP_N;
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  TEXPR_CUDA_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nt, sizeof nt));
  const auto un = static_cast<std::uint64_t>(n);
  const auto ld = static_cast<std::int64_t>(n);
  cublasLtMatrixLayout_t la, lb, lc;
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, un, un, ld));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, un, un, ld));
  TEXPR_CUDA_CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, un, un, ld));
  tx::tensor<std::int8_t, 1, tx::cuda> workspace(tx::shape_t<1>{tx::index_t(32) << 20});
  const std::uint64_t ws = static_cast<std::uint64_t>(workspace.size());
  cublasLtMatmulPreference_t pref;
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  TEXPR_CUDA_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  TEXPR_CUDA_CHECK(cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &best, &found));
  const float alpha = 1.0f, beta = 0.0f;
  const double ref_ms = time_ms([&] {
    TEXPR_CUDA_CHECK(cublasLtMatmul(h, op, &alpha, bt.data(), la, a.data(), lb, &beta, c.data(), lc, c.data(), lc, &best.algo,
                                    workspace.data(), workspace.size(), nullptr));
  });
  (void)cublasLtMatmulPreferenceDestroy(pref);
  (void)cublasLtMatrixLayoutDestroy(lc);
  (void)cublasLtMatrixLayoutDestroy(lb);
  (void)cublasLtMatrixLayoutDestroy(la);
  (void)cublasLtMatmulDescDestroy(op);
  (void)cublasLtDestroy(h);
  row("scaled_matmul fp8 " + std::to_string(n) + "^3", texpr_ms, "cublasLtMatmul", ref_ms, 0,
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n));
}

} // namespace

int main() {
  if (!tx::cuda_device_available()) {
    std::printf("SKIPPED: no CUDA device (%s)\n", tx::cuda_unavailable_reason().c_str());
    return 0;
  }
  const auto info = tx::cuda_device_info();
  std::printf("texpr GPU benchmarks on %s (sm_%d%d, %d SMs); ratio = texpr / reference (1.00 = parity)\n\n",
              info.name.c_str(), info.major, info.minor, info.multiprocessors);

  const tx::index_t n = tx::index_t(1) << 26;  // 64 Mi floats = 256 MiB per operand
  const double fbytes = 4.0 * static_cast<double>(n);
  auto a = filled<float>(n, 1.0f), b = filled<float>(n, 2.0f), c = filled<float>(n, 3.0f);
  tx::tensor<float, 1, tx::cuda> y(tx::shape_t<1>{n});

  // Anchor: device-to-device copy (reads n, writes n)
  const double copy_ms = time_ms([&] {
    TEXPR_CUDA_CHECK(cudaMemcpyAsync(y.data(), a.data(), static_cast<std::size_t>(fbytes), cudaMemcpyDeviceToDevice,
                                     tx::cuda_stream()));
  });
  row("cudaMemcpy D2D (anchor)", copy_ms, "itself", copy_ms, 2 * fbytes, 0);

  // 6-op elementwise chain: 3 reads + 1 write per element, one fused kernel
  const double chain_ms = time_ms([&] { y = tx::sigmoid(a * b + c) * 0.5f - tx::abs(a); });
  row("6-op chain (fused)", chain_ms, "D2D copy, same bytes", copy_ms * 2, 4 * fbytes, 0);

  // sum over everything vs raw cub::DeviceReduce::Sum. Scratch alike on both sides: CUB's temporary storage is
  // allocated once before timing; texpr's comes from its device block cache (filled by the warm-ups: no driver
  // allocation in the timed runs).
  tx::tensor<float, 0, tx::cuda> s(tx::shape_t<0>{});
  std::size_t temp_bytes = 0;
  TEXPR_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, a.data(), s.data(), n, tx::cuda_stream()));
  tx::detail::device_scratch temp(temp_bytes, nullptr);
  const double cub_ms = time_ms(
      [&] { TEXPR_CUDA_CHECK(cub::DeviceReduce::Sum(temp.p, temp_bytes, a.data(), s.data(), n, tx::cuda_stream())); });
  const double sum_ms = time_ms([&] { s = tx::sum(a); });
  row("sum (64 Mi float)", sum_ms, "cub::DeviceReduce::Sum", cub_ms, fbytes, 0);
  const double fused_sum_ms = time_ms([&] { s = tx::sum(a * b); });
  row("sum(a * b) fused", fused_sum_ms, "cub Sum (1 operand)", cub_ms, 2 * fbytes, 0);

  // mean along each axis of an 8192 x 8192 float matrix, against the copy bandwidth
  const tx::index_t m = 8192;
  tx::tensor<float, 2, tx::cuda> x(tx::shape_t<2>{m, m});
  x = x + 1.0f;
  tx::tensor<float, 1, tx::cuda> r(tx::shape_t<1>{m});
  const double mbytes = 4.0 * static_cast<double>(m) * static_cast<double>(m);
  const double mean0_ms = time_ms([&] { r = tx::mean(x, 0); });
  row("mean axis 0 (8192^2 float)", mean0_ms, "D2D copy, same bytes", copy_ms * mbytes / (2 * fbytes), mbytes, 0);
  const double mean1_ms = time_ms([&] { r = tx::mean(x, 1); });
  row("mean axis 1 (8192^2 float)", mean1_ms, "D2D copy, same bytes", copy_ms * mbytes / (2 * fbytes), mbytes, 0);
  tx::tensor<float, 3, tx::cuda> x3(tx::shape_t<3>{64, 1024, 1024});
  tx::tensor<float, 2, tx::cuda> r2(tx::shape_t<2>{1024, 1024});
  const double mean3_ms = time_ms([&] { r2 = tx::mean(x3, 0); });
  row("mean axis 0 (64x1024x1024 float)", mean3_ms, "D2D copy, same bytes", copy_ms * mbytes / (2 * fbytes), mbytes, 0);

  // Stream-ordered pool: many small evaluations, each read back with item() (a synchronisation), with the pool
  // keeping freed memory (texpr's setting, release threshold = max) and with CUDA's default (threshold 0: freed
  // memory goes back to the driver at every synchronisation and is mapped again by the next allocation).
  {
    tx::tensor<float, 1, tx::cuda> small(tx::shape_t<1>{1 << 20});
    auto steps = [&] {
      for (int i = 0; i < 50; ++i) {
        tx::tensor<float, 1, tx::cuda> t = small * 2.0f + 1.0f;
        if (tx::sum(t).item() < 0) std::printf("impossible\n");
      }
    };
    cudaMemPool_t pool = nullptr;
    int dev = 0;
    TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
    TEXPR_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
    std::uint64_t keep = UINT64_MAX, release = 0;
    const double kept_ms = time_ms(steps);
    TEXPR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &release));
    const double released_ms = time_ms(steps);
    TEXPR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    row("50 x (4 MiB alloc + item()), pool kept", kept_ms, "pool released at sync", released_ms, 0, 0);
  }

  // Scans and sorts (issue 37) against CUB called directly: cumsum of 64 Mi floats vs cub::DeviceScan::InclusiveSum
  // (and the copy bandwidth); a row-wise cumsum; argsort of 4096 rows x 1024 vs cub::DeviceSegmentedRadixSort
  // sorting (key, position) pairs of the same size; topk(8) of 4096 x 32768.
  {
    std::size_t scan_bytes = 0;
    TEXPR_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, a.data(), y.data(), n, tx::cuda_stream()));
    tx::detail::device_scratch scan_temp(scan_bytes, nullptr);
    const double cub_scan_ms = time_ms([&] {
      TEXPR_CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp.p, scan_bytes, a.data(), y.data(), n, tx::cuda_stream()));
    });
    const double cumsum_ms = time_ms([&] { y = tx::cumsum(a, 0); });
    row("cumsum (64 Mi float, one line)", cumsum_ms, "cub InclusiveSum", cub_scan_ms, 2 * fbytes, 0);
    row("cumsum (64 Mi float) vs copy", cumsum_ms, "D2D copy, same bytes", copy_ms, 2 * fbytes, 0);
    tx::tensor<float, 2, tx::cuda> rows_out(tx::shape_t<2>{m, m});
    const double cumsum_rows_ms = time_ms([&] { rows_out = tx::cumsum(x, 1); });
    row("cumsum axis 1 (8192^2 float)", cumsum_rows_ms, "D2D copy, same bytes", copy_ms * mbytes / fbytes, 2 * mbytes, 0);

    const int lines = 4096, len = 1024, total = lines * len;
    tx::tensor<float, 2, tx::cuda> keys = pattern(lines, len, 0.3, 10.0);
    tx::tensor<std::int64_t, 2, tx::cuda> order(tx::shape_t<2>{lines, len});
    // CUB's side: 32-bit keys (the floats' bits, copied once before timing) with int positions.
    tx::detail::device_scratch k_in(sizeof(unsigned) * total, nullptr), k_out(sizeof(unsigned) * total, nullptr);
    tx::detail::device_scratch v_in(sizeof(int) * total, nullptr), v_out(sizeof(int) * total, nullptr);
    tx::detail::device_scratch offsets(sizeof(int) * (lines + 1), nullptr);
    {
      std::vector<int> off(lines + 1), pos(total);
      for (int i = 0; i <= lines; ++i) off[i] = i * len;
      for (int i = 0; i < total; ++i) pos[i] = i % len;
      TEXPR_CUDA_CHECK(cudaMemcpy(offsets.p, off.data(), sizeof(int) * off.size(), cudaMemcpyHostToDevice));
      TEXPR_CUDA_CHECK(cudaMemcpy(v_in.p, pos.data(), sizeof(int) * pos.size(), cudaMemcpyHostToDevice));
      TEXPR_CUDA_CHECK(cudaMemcpy(k_in.p, keys.data(), sizeof(float) * total, cudaMemcpyDeviceToDevice));
    }
    const auto* ko = static_cast<const int*>(offsets.p);
    std::size_t sort_bytes = 0;
    TEXPR_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const unsigned*>(k_in.p),
                                                              static_cast<unsigned*>(k_out.p), static_cast<const int*>(v_in.p),
                                                              static_cast<int*>(v_out.p), total, lines, ko, ko + 1, 0, 32,
                                                              tx::cuda_stream()));
    tx::detail::device_scratch sort_temp(sort_bytes, nullptr);
    const double cub_sort_ms = time_ms([&] {
      TEXPR_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(sort_temp.p, sort_bytes, static_cast<const unsigned*>(k_in.p),
                                                                static_cast<unsigned*>(k_out.p), static_cast<const int*>(v_in.p),
                                                                static_cast<int*>(v_out.p), total, lines, ko, ko + 1, 0, 32,
                                                                tx::cuda_stream()));
    });
    const double argsort_ms = time_ms([&] { order = tx::argsort(keys, 1); });
    row("argsort 4096 x 1024 float", argsort_ms, "cub SegmentedRadixSort", cub_sort_ms, 0, 0);
    tx::tensor<float, 2, tx::cuda> wide = pattern(4096, 32768, 0.9, 10.0);
    auto [tv, ti] = tx::topk(wide, 8, 1);
    auto [values, positions] = tx::eval_all(tv, ti);
    const double topk_ms = time_ms([&] { std::tie(values, positions) = tx::eval_all(tv, ti); });
    row("topk(8) of 4096 x 32768 float", topk_ms, "argsort of 4096 x 1024", argsort_ms, 0, 0);
  }

  std::printf("\n");
  bench_mlp();
  std::printf("\n");
  bench_matmul<float>("float", CUDA_R_32F, CUBLAS_COMPUTE_32F, 4096);
  bench_matmul<double>("double", CUDA_R_64F, CUBLAS_COMPUTE_64F, 4096);
  bench_matmul<tx::half>("half", CUDA_R_16F, CUBLAS_COMPUTE_32F, 8192);
  bench_matmul<tx::bfloat16>("bfloat16", CUDA_R_16BF, CUBLAS_COMPUTE_32F, 8192);
  if (info.major * 10 + info.minor >= 89) bench_scaled_matmul_fp8(8192);  // FP8 tensor cores: sm_89 and newer
  return 0;
}

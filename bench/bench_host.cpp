// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host benchmark suite (issue 5, cases 1-5): texpr side by side with Eigen Tensor, Eigen GEMM, OpenBLAS and
// plain loops in one process; prints a table of medians, ratios and the fraction of the machine limit
// (streaming bandwidth and peak FLOP/s, both measured in this run).
#define EIGEN_USE_THREADS
#include <Eigen/Dense>
#include <unsupported/Eigen/CXX11/Tensor>

#include <texpr/texpr.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>

#include "common.hpp"

#if defined(TEXPR_BENCH_HAS_OPENBLAS)
#include <cblas.h>
extern "C" void openblas_set_num_threads(int);
extern "C" char* openblas_get_corename(void);
#endif

namespace tx = texpr;
using tx::index_t;
using Eigen::Index;

namespace {

int max_threads() {
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? static_cast<int>(hc) : 1;
}

// Eigen Tensor devices: the default (single-threaded) one, or a thread pool of n threads.
Eigen::ThreadPoolDevice& eigen_device(int n) {
  static std::map<int, std::pair<std::unique_ptr<Eigen::ThreadPool>, std::unique_ptr<Eigen::ThreadPoolDevice>>> d;
  auto& e = d[n];
  if (!e.first) {
    e.first = std::make_unique<Eigen::ThreadPool>(n);
    e.second = std::make_unique<Eigen::ThreadPoolDevice>(e.first.get(), n);
  }
  return *e.second;
}

template <class T> void fill_random(T* p, index_t n, unsigned seed, double lo = -1, double hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (index_t i = 0; i < n; ++i) p[i] = static_cast<T>(u(g));
}

void set_threads(int n) {
  tx::set_num_threads(n);
  Eigen::setNbThreads(n);
#if defined(TEXPR_BENCH_HAS_OPENBLAS)
  openblas_set_num_threads(n);
#endif
}

benchmark::internal::Benchmark* reg(const std::string& name, std::function<void(benchmark::State&)> f) {
  return benchmark::RegisterBenchmark(name.c_str(), [f](benchmark::State& s) { f(s); })
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime()
      ->Repetitions(5)
      ->ReportAggregatesOnly(true)
      ->MinTime(0.05);
}

// ---- case 1: fused sum(a * b + c) over 2^24 elements ----------------------------------------------------
template <class T> struct sum_data {
  static constexpr index_t n = index_t(1) << 24;
  tx::tensor<T, 1> a{tx::shape_t<1>{n}}, b{tx::shape_t<1>{n}}, c{tx::shape_t<1>{n}};
  sum_data() {
    fill_random(a.data(), n, 1);
    fill_random(b.data(), n, 2);
    fill_random(c.data(), n, 3);
  }
  static sum_data& get() {
    static sum_data d;
    return d;
  }
};

template <class T> void register_sum(const std::string& tag) {
  const int mt = max_threads();
  for (int th : {1, mt}) {
    if (th == mt && mt == 1) break;
    const std::string t = "/" + std::to_string(th);
    reg(tag + "/texpr" + t, [th](benchmark::State& s) {
      auto& d = sum_data<T>::get();
      set_threads(th);
      for (auto _ : s) {
        T r = tx::sum(d.a * d.b + d.c).item();
        benchmark::DoNotOptimize(r);
      }
    });
    reg(tag + "/eigen" + t, [th](benchmark::State& s) {
      auto& d = sum_data<T>::get();
      Eigen::TensorMap<Eigen::Tensor<const T, 1>> A(d.a.data(), d.n), B(d.b.data(), d.n), C(d.c.data(), d.n);
      Eigen::Tensor<T, 0> r;
      for (auto _ : s) {
        if (th == 1) r = (A * B + C).sum();
        else r.device(eigen_device(th)) = (A * B + C).sum();
        benchmark::DoNotOptimize(r.data());
      }
    });
  }
  reg(tag + "/loop/1", [](benchmark::State& s) {
    auto& d = sum_data<T>::get();
    const T* a = d.a.data();
    const T* b = d.b.data();
    const T* c = d.c.data();
    for (auto _ : s) {
      T r = 0;
      for (index_t i = 0; i < d.n; ++i) r += a[i] * b[i] + c[i];
      benchmark::DoNotOptimize(r);
    }
  });
}

// ---- case 2: mean(x, axis) of a 4096 x 4096 float matrix ------------------------------------------------
constexpr index_t big = 4096;
struct matrix_data {
  tx::tensor<float, 2> x{tx::shape_t<2>{big, big}}, y{tx::shape_t<2>{big, big}}, out{tx::shape_t<2>{big, big}};
  tx::tensor<float, 1> mu{tx::shape_t<1>{big}}, inv{tx::shape_t<1>{big}}, m{tx::shape_t<1>{big}};
  tx::tensor<float, 2> beta{tx::shape_t<2>{big, 1}};
  matrix_data() {
    fill_random(x.data(), big * big, 4);
    fill_random(y.data(), big * big, 5);
    fill_random(mu.data(), big, 6);
    fill_random(inv.data(), big, 7, 0.5, 2);
    fill_random(beta.data(), big, 8);
  }
  static matrix_data& get() {
    static matrix_data d;
    return d;
  }
};
using row_major_map = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
using const_row_major_map = Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>>;

void register_mean(int axis) {
  const int mt = max_threads();
  const std::string tag = "mean_axis" + std::to_string(axis);
  for (int th : {1, mt}) {
    if (th == mt && mt == 1) break;
    const std::string t = "/" + std::to_string(th);
    reg(tag + "/texpr" + t, [th, axis](benchmark::State& s) {
      auto& d = matrix_data::get();
      set_threads(th);
      for (auto _ : s) {
        d.m = tx::mean(d.x, axis);
        benchmark::DoNotOptimize(d.m.data());
      }
    });
    reg(tag + "/eigen" + t, [th, axis](benchmark::State& s) {
      auto& d = matrix_data::get();
      const_row_major_map X(d.x.data(), big, big);
      Eigen::TensorMap<Eigen::Tensor<float, 1, Eigen::RowMajor>> M(d.m.data(), big);
      const Eigen::array<Index, 1> dims{axis};
      for (auto _ : s) {
        if (th == 1) M = X.mean(dims);
        else M.device(eigen_device(th)) = X.mean(dims);
        benchmark::DoNotOptimize(d.m.data());
      }
    });
  }
}

// ---- case 3: six elementwise ops with broadcasting over 4096 x 4096 -------------------------------------
// out = ((x - mu) * inv + beta) * y + maximum(x, 0); mu and inv broadcast along rows, beta along columns.
void register_chain() {
  const int mt = max_threads();
  for (int th : {1, mt}) {
    if (th == mt && mt == 1) break;
    const std::string t = "/" + std::to_string(th);
    reg("chain6/texpr" + t, [th](benchmark::State& s) {
      auto& d = matrix_data::get();
      set_threads(th);
      for (auto _ : s) {
        d.out = ((d.x - d.mu) * d.inv + d.beta) * d.y + tx::maximum(d.x, 0.0f);
        benchmark::DoNotOptimize(d.out.data());
      }
    });
    reg("chain6/eigen" + t, [th](benchmark::State& s) {
      auto& d = matrix_data::get();
      const_row_major_map X(d.x.data(), big, big), Y(d.y.data(), big, big), BETA(d.beta.data(), big, 1);
      const_row_major_map MU(d.mu.data(), 1, big), INV(d.inv.data(), 1, big);
      row_major_map OUT(d.out.data(), big, big);
      const Eigen::array<Index, 2> down{big, 1}, across{1, big};
      auto e = ((X - MU.broadcast(down)) * INV.broadcast(down) + BETA.broadcast(across)) * Y + X.cwiseMax(0.0f);
      for (auto _ : s) {
        if (th == 1) OUT = e;
        else OUT.device(eigen_device(th)) = e;
        benchmark::DoNotOptimize(d.out.data());
      }
    });
  }
}

// ---- case 4: square matmul ------------------------------------------------------------------------------
template <class T> struct gemm_data {
  index_t n;
  tx::tensor<T, 2> a, b, c;
  explicit gemm_data(index_t size)
      : n(size), a(tx::shape_t<2>{size, size}), b(tx::shape_t<2>{size, size}), c(tx::shape_t<2>{size, size}) {
    fill_random(a.data(), n * n, 9);
    fill_random(b.data(), n * n, 10);
  }
  static gemm_data& get(index_t n) {
    static std::map<index_t, std::unique_ptr<gemm_data>> all;
    auto& p = all[n];
    if (!p) p = std::make_unique<gemm_data>(n);
    return *p;
  }
};

template <class T> void register_gemm(const std::string& dt, index_t n) {
  const int mt = max_threads();
  const std::string tag = "matmul_" + dt + "_" + std::to_string(n);
  using mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  for (int th : {1, mt}) {
    if (th == mt && mt == 1) break;
    const std::string t = "/" + std::to_string(th);
    reg(tag + "/texpr" + t, [th, n](benchmark::State& s) {
      auto& d = gemm_data<T>::get(n);
      set_threads(th);
      for (auto _ : s) {
        d.c = tx::matmul(d.a, d.b);
        benchmark::DoNotOptimize(d.c.data());
      }
    });
    reg(tag + "/eigen" + t, [th, n](benchmark::State& s) {
      auto& d = gemm_data<T>::get(n);
      set_threads(th);
      Eigen::Map<const mat> A(d.a.data(), n, n), B(d.b.data(), n, n);
      Eigen::Map<mat> C(d.c.data(), n, n);
      for (auto _ : s) {
        C.noalias() = A * B;
        benchmark::DoNotOptimize(d.c.data());
      }
    });
#if defined(TEXPR_BENCH_HAS_OPENBLAS)
    reg(tag + "/openblas" + t, [th, n](benchmark::State& s) {
      auto& d = gemm_data<T>::get(n);
      set_threads(th);
      const int N = static_cast<int>(n);
      for (auto _ : s) {
        if constexpr (std::is_same_v<T, float>)
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, d.a.data(), N, d.b.data(), N, 0.0f,
                      d.c.data(), N);
        else
          cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0, d.a.data(), N, d.b.data(), N, 0.0,
                      d.c.data(), N);
        benchmark::DoNotOptimize(d.c.data());
      }
    });
#endif
  }
}

// ---- case 5: MLP forward pass, batch 64, 784 -> 256 -> 256 -> 10, ELU, bias broadcast, MSE loss ---------
constexpr index_t batch = 64, d_in = 784, d_h = 256, d_out = 10;
struct mlp_data {
  tx::tensor<float, 2> x{tx::shape_t<2>{batch, d_in}}, target{tx::shape_t<2>{batch, d_out}};
  tx::tensor<float, 2> w1{tx::shape_t<2>{d_in, d_h}}, w2{tx::shape_t<2>{d_h, d_h}}, w3{tx::shape_t<2>{d_h, d_out}};
  tx::tensor<float, 1> b1{tx::shape_t<1>{d_h}}, b2{tx::shape_t<1>{d_h}}, b3{tx::shape_t<1>{d_out}};
  tx::tensor<float, 2> h1{tx::shape_t<2>{batch, d_h}}, h2{tx::shape_t<2>{batch, d_h}}, y{tx::shape_t<2>{batch, d_out}};
  tx::tensor<float, 2> z1{tx::shape_t<2>{batch, d_h}}, z2{tx::shape_t<2>{batch, d_h}};
  mlp_data() {
    fill_random(x.data(), batch * d_in, 11);
    fill_random(target.data(), batch * d_out, 12);
    fill_random(w1.data(), d_in * d_h, 13, -0.05, 0.05);
    fill_random(w2.data(), d_h * d_h, 14, -0.1, 0.1);
    fill_random(w3.data(), d_h * d_out, 15, -0.1, 0.1);
    fill_random(b1.data(), d_h, 16);
    fill_random(b2.data(), d_h, 17);
    fill_random(b3.data(), d_out, 18);
  }
  static mlp_data& get() {
    static mlp_data d;
    return d;
  }
};

float texpr_forward(mlp_data& d) {
  d.h1 = tx::elu(tx::matmul(d.x, d.w1) + d.b1);
  d.h2 = tx::elu(tx::matmul(d.h1, d.w2) + d.b2);
  d.y = tx::matmul(d.h2, d.w3) + d.b3;
  return tx::mean((d.y - d.target) * (d.y - d.target)).item();
}

template <class Device> float eigen_forward(mlp_data& d, const Device& dev) {
  using cmap = Eigen::TensorMap<Eigen::Tensor<const float, 2, Eigen::RowMajor>>;
  using map = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
  const Eigen::array<Eigen::IndexPair<int>, 1> mm{Eigen::IndexPair<int>(1, 0)};
  cmap X(d.x.data(), batch, d_in), T(d.target.data(), batch, d_out);
  cmap W1(d.w1.data(), d_in, d_h), W2(d.w2.data(), d_h, d_h), W3(d.w3.data(), d_h, d_out);
  cmap B1(d.b1.data(), 1, d_h), B2(d.b2.data(), 1, d_h), B3(d.b3.data(), 1, d_out);
  map Z1(d.z1.data(), batch, d_h), Z2(d.z2.data(), batch, d_h), H1(d.h1.data(), batch, d_h),
      H2(d.h2.data(), batch, d_h), Y(d.y.data(), batch, d_out);
  const Eigen::array<Index, 2> rows{batch, 1};
  Z1.device(dev) = X.contract(W1, mm) + B1.broadcast(rows);
  H1.device(dev) = Z1.cwiseMax(0.0f) + (Z1.cwiseMin(0.0f).exp() - 1.0f);
  Z2.device(dev) = H1.contract(W2, mm) + B2.broadcast(rows);
  H2.device(dev) = Z2.cwiseMax(0.0f) + (Z2.cwiseMin(0.0f).exp() - 1.0f);
  Y.device(dev) = H2.contract(W3, mm) + B3.broadcast(rows);
  Eigen::Tensor<float, 0, Eigen::RowMajor> loss;
  loss.device(dev) = (Y - T).square().mean();
  return loss();
}

void register_mlp() {
  const int mt = max_threads();
  for (int th : {1, mt}) {
    if (th == mt && mt == 1) break;
    const std::string t = "/" + std::to_string(th);
    reg("mlp_forward/texpr" + t, [th](benchmark::State& s) {
      auto& d = mlp_data::get();
      set_threads(th);
      for (auto _ : s) benchmark::DoNotOptimize(texpr_forward(d));
    });
    reg("mlp_forward/eigen" + t, [th](benchmark::State& s) {
      auto& d = mlp_data::get();
      Eigen::DefaultDevice one;
      for (auto _ : s) {
        if (th == 1) benchmark::DoNotOptimize(eigen_forward(d, one));
        else benchmark::DoNotOptimize(eigen_forward(d, eigen_device(th)));
      }
    });
  }
}

// ---- the table ------------------------------------------------------------------------------------------
struct limits {
  bench::bandwidth bw1, bwn;
  double peak_f32 = 0, peak_f64 = 0;  // one core
};

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

void print_table(const bench::collector& c, const limits& L) {
  const int mt = max_threads();
  std::printf("\n## texpr host benchmarks\n\n");
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
  std::printf("Machine: %s, %d hardware threads; %s. Medians of 5 repetitions.\n", cpu_model().c_str(), mt, date);
  std::printf("Limits measured in this run: read %.1f GB/s and triad %.1f GB/s on 1 thread, read %.1f GB/s and triad "
              "%.1f GB/s on %d; peak FMA %.0f GFLOP/s f32 and %.0f GFLOP/s f64 per core.\n",
              L.bw1.read / 1e9, L.bw1.triad / 1e9, L.bwn.read / 1e9, L.bwn.triad / 1e9, mt, L.peak_f32 / 1e9,
              L.peak_f64 / 1e9);
#if defined(TEXPR_BENCH_HAS_OPENBLAS)
  std::printf("OpenBLAS kernel: %s (OPENBLAS_CORETYPE=%s).\n", openblas_get_corename(),
              std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
#endif
  std::printf("\nTimes in ms. Speed-up = best anchor time / texpr time (above 1: texpr is faster). "
              "Limit: read bandwidth (sum, mean), triad bandwidth (chain), peak FLOP/s x threads (matmul).\n\n");
  std::printf("| case | threads | texpr | Eigen | OpenBLAS | plain loop | speed-up vs best anchor | texpr rate | %% of limit |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  auto ms = [](double s) {
    char b[32];
    if (s <= 0) return std::string("-");
    std::snprintf(b, sizeof b, "%.3f", s * 1e3);
    return std::string(b);
  };
  auto row = [&](const std::string& label, const std::string& tag, int th, double work, bool flops, double limit) {
    const std::string t = "/" + std::to_string(th);
    const double tt = c.get(tag + "/texpr" + t), te = c.get(tag + "/eigen" + t), tb = c.get(tag + "/openblas" + t),
                 tl = c.get(tag + "/loop" + t);
    if (tt <= 0) return;
    double best = 0;
    for (double v : {te, tb, tl})
      if (v > 0 && (best == 0 || v < best)) best = v;
    const double rate = work / tt;
    char speed[32], rate_s[48], pct[32];
    std::snprintf(speed, sizeof speed, "%.2fx", best > 0 ? best / tt : 0.0);
    std::snprintf(rate_s, sizeof rate_s, flops ? "%.1f GFLOP/s" : "%.1f GB/s", rate / 1e9);
    std::snprintf(pct, sizeof pct, "%.0f%%", 100.0 * rate / limit);
    std::printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", label.c_str(), th, ms(tt).c_str(), ms(te).c_str(),
                ms(tb).c_str(), ms(tl).c_str(), speed, rate_s, pct);
  };
  const double n24 = static_cast<double>(index_t(1) << 24), nbig = static_cast<double>(big * big);
  for (int th : {1, mt}) row("sum(a*b+c) f32 2^24", "sum_f32", th, 3 * 4 * n24, false, (th == 1 ? L.bw1 : L.bwn).read);
  for (int th : {1, mt}) row("sum(a*b+c) f64 2^24", "sum_f64", th, 3 * 8 * n24, false, (th == 1 ? L.bw1 : L.bwn).read);
  for (int th : {1, mt}) row("mean(x, 0) f32 4096^2", "mean_axis0", th, 4 * nbig, false, (th == 1 ? L.bw1 : L.bwn).read);
  for (int th : {1, mt}) row("mean(x, 1) f32 4096^2", "mean_axis1", th, 4 * nbig, false, (th == 1 ? L.bw1 : L.bwn).read);
  for (int th : {1, mt}) row("6-op chain, broadcast, f32 4096^2", "chain6", th, 3 * 4 * nbig, false, (th == 1 ? L.bw1 : L.bwn).triad);
  for (const char* dt : {"f32", "f64"})
    for (index_t n : {256, 1024, 2048})
      for (int th : {1, mt}) {
        const double peak = (std::strcmp(dt, "f32") == 0 ? L.peak_f32 : L.peak_f64) * th;
        const double nn = static_cast<double>(n);
        row("matmul " + std::string(dt) + " " + std::to_string(n), "matmul_" + std::string(dt) + "_" + std::to_string(n),
            th, 2 * nn * nn * nn, true, peak);
      }
  const double mlp_flops = 2.0 * batch * (d_in * d_h + d_h * d_h + d_h * d_out);
  for (int th : {1, mt}) row("MLP forward (batch 64)", "mlp_forward", th, mlp_flops, true, L.peak_f32 * th);
  std::printf("\n");
}

// OpenBLAS 0.3.21 does not know some newer CPUs and falls back to its slowest (Prescott) kernels; the anchor
// should be OpenBLAS at its best, so rerun with the kernel a user would pick for this CPU.
void openblas_at_its_best(char** argv) {
#if defined(TEXPR_BENCH_HAS_OPENBLAS) && (defined(__x86_64__) || defined(__i386__))
  if (std::getenv("OPENBLAS_CORETYPE") || std::strcmp(openblas_get_corename(), "Prescott") != 0) return;
  const char* core = __builtin_cpu_supports("avx512f") ? "SkylakeX" : __builtin_cpu_supports("avx2") ? "Haswell" : nullptr;
  if (!core) return;
  std::fprintf(stderr, "OpenBLAS detected this CPU as Prescott; rerunning with OPENBLAS_CORETYPE=%s\n", core);
  setenv("OPENBLAS_CORETYPE", core, 1);
  execv("/proc/self/exe", argv);
#else
  (void)argv;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  openblas_at_its_best(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  register_sum<float>("sum_f32");
  register_sum<double>("sum_f64");
  register_mean(0);
  register_mean(1);
  register_chain();
  for (index_t n : {256, 1024, 2048}) register_gemm<float>("f32", n);
  for (index_t n : {256, 1024, 2048}) register_gemm<double>("f64", n);
  register_mlp();

  limits L;
  L.bw1 = bench::measure_bandwidth(1);
  L.bwn = bench::measure_bandwidth(max_threads());
  L.peak_f32 = bench::measure_peak_flops_one_core<float>();
  L.peak_f64 = bench::measure_peak_flops_one_core<double>();

  bench::collector c;
  benchmark::RunSpecifiedBenchmarks(&c);
  benchmark::Shutdown();
  print_table(c, L);
  return 0;
}

// Host GEMM: BLIS-style packing plus register-blocked micro-kernels for float and double, chosen at run time
// (AVX-512, AVX2+FMA, or portable 128-bit vectors), threaded over blocks of C; integers use an exact loop.
//
// Loop order: column panels of B (NC) > depth panels (KC; B packed once into ~1 MiB, shared by the threads) >
// row panels of A (MC; each task packs its own) > MR-tall slivers of A (kept in L1) > NR-wide slivers of B
// (streamed from L2) > micro-kernel.
// The micro-kernel keeps an MR x NR tile of C in registers across the whole depth panel. The x86 kernels use
// per-function `target` attributes, so a default -march=x86-64 build still gets AVX-512/AVX2 code and any
// other CPU or compiler gets the portable kernel. No BLAS is needed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>

#include "texpr/backend/host/parallel.hpp"
#include "texpr/core/config.hpp"
#include "texpr/op/elementwise.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TEXPR_GEMM_PORTABLE_ONLY)
#define TEXPR_GEMM_X86 1
#include <immintrin.h>
#endif

namespace texpr::detail::host_impl {

/// C (m x n) = A (m x k) * B (k x n), row-major and contiguous, with a plain blocked loop. Integers wrap around.
template <class T> void gemm_exact(index_t m, index_t n, index_t k, const T* a, const T* b, T* c) {
  std::fill(c, c + m * n, T(0));
  if (k == 0) return;
  constexpr index_t kb = 256, nb = 512, mb = 64;
  for (index_t j0 = 0; j0 < n; j0 += nb) {
    const index_t j1 = std::min(n, j0 + nb);
    for (index_t p0 = 0; p0 < k; p0 += kb) {
      const index_t p1 = std::min(k, p0 + kb);
      for (index_t i0 = 0; i0 < m; i0 += mb) {
        const index_t i1 = std::min(m, i0 + mb);
        for (index_t i = i0; i < i1; ++i) {
          T* ci = c + i * n;
          for (index_t p = p0; p < p1; ++p) {
            const T aip = a[i * k + p];
            const T* bp = b + p * n;
            if constexpr (std::is_integral_v<T>) {
              for (index_t j = j0; j < j1; ++j) ci[j] = op::add::apply(ci[j], op::multiply::apply(aip, bp[j]));
            } else {
              for (index_t j = j0; j < j1; ++j) ci[j] += aip * bp[j];
            }
          }
        }
      }
    }
  }
}

namespace gemm_detail {

#if defined(__GNUC__) || defined(__clang__)
#define TEXPR_GEMM_INLINE __attribute__((always_inline)) inline
#if defined(__CUDACC__)
#define TEXPR_GEMM_UNROLL  // nvcc's front end rejects "GCC unroll" (warning #1675); the host compiler unrolls anyway
#else
#define TEXPR_GEMM_UNROLL _Pragma("GCC unroll 32")
#endif
#else
#define TEXPR_GEMM_INLINE inline
#define TEXPR_GEMM_UNROLL
#endif

// Vector operations per instruction set: vec<T>, lanes<T>, zero, load (aligned), loadu, storeu, bcast, fma.
#if defined(__GNUC__) || defined(__clang__)
typedef float portable_f32x4 __attribute__((vector_size(16)));
typedef double portable_f64x2 __attribute__((vector_size(16)));
struct portable_isa {
  static constexpr int registers = 16;
  template <class T> using vec = std::conditional_t<std::is_same_v<T, float>, portable_f32x4, portable_f64x2>;
  template <class T> static constexpr int lanes = 16 / sizeof(T);
  template <class T> static TEXPR_GEMM_INLINE vec<T> zero() { return vec<T>{}; }
  template <class T> static TEXPR_GEMM_INLINE vec<T> load(const T* p) {
    vec<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  template <class T> static TEXPR_GEMM_INLINE vec<T> loadu(const T* p) { return load(p); }
  template <class T> static TEXPR_GEMM_INLINE vec<T> bcast(const T* p) { return vec<T>{} + *p; }
  static TEXPR_GEMM_INLINE void storeu(float* p, portable_f32x4 v) { std::memcpy(p, &v, sizeof v); }
  static TEXPR_GEMM_INLINE void storeu(double* p, portable_f64x2 v) { std::memcpy(p, &v, sizeof v); }
  static TEXPR_GEMM_INLINE portable_f32x4 fma(portable_f32x4 a, portable_f32x4 b, portable_f32x4 c) { return a * b + c; }
  static TEXPR_GEMM_INLINE portable_f64x2 fma(portable_f64x2 a, portable_f64x2 b, portable_f64x2 c) { return a * b + c; }
  static TEXPR_GEMM_INLINE portable_f32x4 add(portable_f32x4 a, portable_f32x4 b) { return a + b; }
  static TEXPR_GEMM_INLINE portable_f64x2 add(portable_f64x2 a, portable_f64x2 b) { return a + b; }
};
#else
struct portable_isa {
  static constexpr int registers = 16;
  template <class T> using vec = T;
  template <class T> static constexpr int lanes = 1;
  template <class T> static vec<T> zero() { return T(0); }
  template <class T> static vec<T> load(const T* p) { return *p; }
  template <class T> static vec<T> loadu(const T* p) { return *p; }
  template <class T> static void storeu(T* p, vec<T> v) { *p = v; }
  template <class T> static vec<T> bcast(const T* p) { return *p; }
  template <class T> static vec<T> fma(vec<T> a, vec<T> b, vec<T> c) { return a * b + c; }
  template <class T> static vec<T> add(vec<T> a, vec<T> b) { return a + b; }
};
#endif

#if defined(TEXPR_GEMM_X86)
#define TEXPR_AVX2_FN __attribute__((target("avx2,fma"), always_inline)) inline
#define TEXPR_AVX512_FN __attribute__((target("avx512f,avx2,fma"), always_inline)) inline

template <class T> struct avx2_vec;
template <> struct avx2_vec<float> { using type = __m256; };
template <> struct avx2_vec<double> { using type = __m256d; };
struct avx2_isa {
  static constexpr int registers = 16;
  template <class T> using vec = typename avx2_vec<T>::type;
  template <class T> static constexpr int lanes = 32 / sizeof(T);
  template <class T> static TEXPR_AVX2_FN vec<T> zero() {
    if constexpr (std::is_same_v<T, float>) return _mm256_setzero_ps();
    else return _mm256_setzero_pd();
  }
  static TEXPR_AVX2_FN __m256 load(const float* p) { return _mm256_load_ps(p); }
  static TEXPR_AVX2_FN __m256d load(const double* p) { return _mm256_load_pd(p); }
  static TEXPR_AVX2_FN __m256 loadu(const float* p) { return _mm256_loadu_ps(p); }
  static TEXPR_AVX2_FN __m256d loadu(const double* p) { return _mm256_loadu_pd(p); }
  static TEXPR_AVX2_FN void storeu(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static TEXPR_AVX2_FN void storeu(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
  static TEXPR_AVX2_FN __m256 bcast(const float* p) { return _mm256_broadcast_ss(p); }
  static TEXPR_AVX2_FN __m256d bcast(const double* p) { return _mm256_broadcast_sd(p); }
  static TEXPR_AVX2_FN __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static TEXPR_AVX2_FN __m256d fma(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
  static TEXPR_AVX2_FN __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static TEXPR_AVX2_FN __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
};

template <class T> struct avx512_vec;
template <> struct avx512_vec<float> { using type = __m512; };
template <> struct avx512_vec<double> { using type = __m512d; };
struct avx512_isa {
  static constexpr int registers = 32;
  template <class T> using vec = typename avx512_vec<T>::type;
  template <class T> static constexpr int lanes = 64 / sizeof(T);
  template <class T> static TEXPR_AVX512_FN vec<T> zero() {
    if constexpr (std::is_same_v<T, float>) return _mm512_setzero_ps();
    else return _mm512_setzero_pd();
  }
  static TEXPR_AVX512_FN __m512 load(const float* p) { return _mm512_load_ps(p); }
  static TEXPR_AVX512_FN __m512d load(const double* p) { return _mm512_load_pd(p); }
  static TEXPR_AVX512_FN __m512 loadu(const float* p) { return _mm512_loadu_ps(p); }
  static TEXPR_AVX512_FN __m512d loadu(const double* p) { return _mm512_loadu_pd(p); }
  static TEXPR_AVX512_FN void storeu(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static TEXPR_AVX512_FN void storeu(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
  static TEXPR_AVX512_FN __m512 bcast(const float* p) { return _mm512_set1_ps(*p); }
  static TEXPR_AVX512_FN __m512d bcast(const double* p) { return _mm512_set1_pd(*p); }
  static TEXPR_AVX512_FN __m512 fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static TEXPR_AVX512_FN __m512d fma(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
  static TEXPR_AVX512_FN __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
  static TEXPR_AVX512_FN __m512d add(__m512d a, __m512d b) { return _mm512_add_pd(a, b); }
};
#endif

// C tile (MR x NV*lanes, leading dimension ldc) = or += packed A sliver (kc x MR) times packed B sliver (kc x NR).
// Defined once per instruction set (a macro, because the target attribute cannot depend on a template argument).
#define TEXPR_GEMM_MICRO_KERNEL(NAME, ATTR, ISA)                                                                 \
  template <class T, int MR, int NV>                                                                            \
  ATTR void NAME(index_t kc, const T* a, const T* b, T* c, index_t ldc, bool accumulate) {                     \
    using Isa = ISA;                                                                                            \
    using V = typename Isa::template vec<T>;                                                                    \
    constexpr int W = Isa::template lanes<T>;                                                                   \
    V r[MR][NV];                                                                                                \
    TEXPR_GEMM_UNROLL for (int i = 0; i < MR; ++i) {                                                            \
      __builtin_prefetch(c + i * ldc);                                                                          \
      __builtin_prefetch(c + i * ldc + NV * Isa::template lanes<T> - 1);                                        \
    }                                                                                                           \
    TEXPR_GEMM_UNROLL for (int i = 0; i < MR; ++i) TEXPR_GEMM_UNROLL for (int j = 0; j < NV; ++j) r[i][j] =     \
        Isa::template zero<T>();                                                                                \
    for (index_t p = 0; p < kc; ++p) {                                                                          \
      V bv[NV];                                                                                                 \
      TEXPR_GEMM_UNROLL for (int j = 0; j < NV; ++j) bv[j] = Isa::load(b + j * W);                              \
      TEXPR_GEMM_UNROLL for (int i = 0; i < MR; ++i) {                                                          \
        const V av = Isa::bcast(a + i);                                                                         \
        TEXPR_GEMM_UNROLL for (int j = 0; j < NV; ++j) r[i][j] = Isa::fma(av, bv[j], r[i][j]);                  \
      }                                                                                                         \
      a += MR;                                                                                                  \
      b += NV * W;                                                                                              \
    }                                                                                                           \
    TEXPR_GEMM_UNROLL for (int i = 0; i < MR; ++i) TEXPR_GEMM_UNROLL for (int j = 0; j < NV; ++j) {             \
      T* cp = c + i * ldc + j * W;                                                                              \
      if (accumulate) r[i][j] = Isa::add(r[i][j], Isa::loadu(cp));                                              \
      Isa::storeu(cp, r[i][j]);                                                                                 \
    }                                                                                                           \
  }

TEXPR_GEMM_MICRO_KERNEL(portable_micro_kernel, inline, portable_isa)
#if defined(TEXPR_GEMM_X86)
TEXPR_GEMM_MICRO_KERNEL(avx2_micro_kernel, __attribute__((target("avx2,fma"))) inline, avx2_isa)
TEXPR_GEMM_MICRO_KERNEL(avx512_micro_kernel, __attribute__((target("avx512f,avx2,fma"))) inline, avx512_isa)
#endif
#undef TEXPR_GEMM_MICRO_KERNEL

// Blocking for one (instruction set, dtype): register tile MR x NR, cache blocks MC x KC (A) and KC x NC (B).
template <class Isa, class T> struct blocking {
  static constexpr int nv = 2;
  static constexpr int mr = Isa::registers == 32 ? 12 : 6;  // 2*mr accumulators + 2 B vectors + 1 A broadcast
  static constexpr index_t nr = nv * Isa::template lanes<T>;
  static constexpr index_t kc = 1024 / sizeof(T);                 // A sliver (MR x KC) stays in L1
  static constexpr index_t mc = mr * 16;
  static constexpr index_t nc = (index_t(1) << 20) / (kc * sizeof(T));  // packed B block (KC x NC): 1 MiB, in L2
};

// A 64-byte aligned scratch buffer reused by its thread (no allocation per call once warm).
template <class T, int Slot> T* scratch(std::size_t count) {
  struct buffer {
    std::unique_ptr<unsigned char[]> mem;
    std::size_t cap = 0;
  };
  static thread_local buffer buf;
  const std::size_t bytes = count * sizeof(T) + 64;
  if (buf.cap < bytes) {
    buf.mem.reset(new unsigned char[bytes]);
    buf.cap = bytes;
  }
  auto addr = reinterpret_cast<std::uintptr_t>(buf.mem.get());
  return reinterpret_cast<T*>((addr + 63) & ~std::uintptr_t(63));
}

// Packs A[0..mc, 0..kc] (row stride lda) as MR-row slivers, each stored depth-major; pads rows with zeros.
template <class T, int MR> void pack_a(index_t mc, index_t kc, const T* a, index_t lda, T* out) {
  for (index_t i0 = 0; i0 < mc; i0 += MR) {
    const index_t rows = std::min<index_t>(MR, mc - i0);
    if (rows == MR) {
      for (index_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i) out[p * MR + i] = a[(i0 + i) * lda + p];
    } else {
      for (index_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i) out[p * MR + i] = i < rows ? a[(i0 + i) * lda + p] : T(0);
    }
    out += kc * MR;
  }
}

// Packs slivers [s0, s1) of B[0..kc, 0..nc] (row stride ldb) as NR-column slivers; pads columns with zeros.
template <class T, index_t NR> void pack_b(index_t s0, index_t s1, index_t nc, index_t kc, const T* b, index_t ldb,
                                           T* out) {
  for (index_t s = s0; s < s1; ++s) {
    const index_t j0 = s * NR, cols = std::min<index_t>(NR, nc - j0);
    T* o = out + s * kc * NR;
    if (cols == NR) {
      for (index_t p = 0; p < kc; ++p) std::memcpy(o + p * NR, b + p * ldb + j0, sizeof(T) * NR);
    } else {
      for (index_t p = 0; p < kc; ++p)
        for (index_t j = 0; j < NR; ++j) o[p * NR + j] = j < cols ? b[p * ldb + j0 + j] : T(0);
    }
  }
}

// The blocked driver for one instruction set; Kernel is the (target-compiled) micro-kernel entry point.
template <class Isa, class T, class Kernel>
void gemm_blocked(index_t m, index_t n, index_t k, const T* a, const T* b, T* c, Kernel kernel) {
  using P = blocking<Isa, T>;
  constexpr int MR = P::mr;
  constexpr index_t NR = P::nr;
  const bool threaded = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) >= 1 << 21;
  for (index_t jc = 0; jc < n; jc += P::nc) {
    const index_t nc = std::min(P::nc, n - jc);
    const index_t slivers = (nc + NR - 1) / NR;
    for (index_t pc = 0; pc < k; pc += P::kc) {
      const index_t kc = std::min(P::kc, k - pc);
      const bool accumulate = pc > 0;
      T* bp = scratch<T, 0>(static_cast<std::size_t>(slivers * NR * kc));
      const T* bsrc = b + pc * n + jc;
      const index_t pack_tasks = threaded && num_threads() > 1 ? std::min<index_t>(slivers, 16) : 1;
      parallel_for(pack_tasks, [&](index_t t) {
        pack_b<T, NR>(slivers * t / pack_tasks, slivers * (t + 1) / pack_tasks, nc, kc, bsrc, n, bp);
      });
      // Tasks: row panels of A times column chunks of B, enough of them to keep every thread busy.
      const index_t mblocks = (m + P::mc - 1) / P::mc;
      const index_t mstep = ((m + mblocks - 1) / mblocks + MR - 1) / MR * MR;  // even row panels, MR-aligned
      const index_t threads = threaded ? static_cast<index_t>(num_threads()) : 1;
      const index_t want = threads > 1 ? 4 * threads : 1;
      const index_t jsplit = std::clamp<index_t>((want + mblocks - 1) / mblocks, 1, std::max<index_t>(1, slivers / 2));
      parallel_for(mblocks * jsplit, [&](index_t t) {
        const index_t ib = t / jsplit, js = t % jsplit;
        const index_t ic = ib * mstep, mc = std::min(mstep, m - ic);
        if (mc <= 0) return;
        const index_t s0 = slivers * js / jsplit, s1 = slivers * (js + 1) / jsplit;
        if (s0 == s1) return;
        T* ap = scratch<T, 1>(static_cast<std::size_t>(P::mc * kc));
        pack_a<T, MR>(mc, kc, a + ic * k + pc, k, ap);
        alignas(64) T tile[MR * NR];
        auto tile_at = [&](index_t s, index_t i0) {
          const index_t j0 = s * NR, cols = std::min<index_t>(NR, nc - j0);
          const index_t rows = std::min<index_t>(MR, mc - i0);
          const T* as = ap + i0 * kc;
          const T* bs = bp + s * kc * NR;
          T* cp = c + (ic + i0) * n + jc + j0;
          if (rows == MR && cols == NR) {
            kernel(kc, as, bs, cp, n, accumulate);
          } else {
            kernel(kc, as, bs, tile, NR, false);
            for (index_t i = 0; i < rows; ++i)
              for (index_t j = 0; j < cols; ++j)
                cp[i * n + j] = accumulate ? cp[i * n + j] + tile[i * NR + j] : tile[i * NR + j];
          }
        };
        // The A sliver stays in L1 while the B slivers stream from L2.
        for (index_t i0 = 0; i0 < mc; i0 += MR)
          for (index_t s = s0; s < s1; ++s) tile_at(s, i0);
      });
    }
  }
}

#if defined(TEXPR_GEMM_X86)
/// The widest instruction set this CPU runs: 2 = AVX-512F, 1 = AVX2 with FMA, 0 = portable.
inline int cpu_level() {
  static const int level = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
    return 0;
  }();
  return level;
}
#endif

#undef TEXPR_GEMM_INLINE
#undef TEXPR_GEMM_UNROLL
#if defined(TEXPR_GEMM_X86)
#undef TEXPR_AVX2_FN
#undef TEXPR_AVX512_FN
#endif

} // namespace gemm_detail

/// C (m x n) = A (m x k) * B (k x n), all row-major and contiguous. Integers wrap around.
template <class T> void gemm(index_t m, index_t n, index_t k, const T* a, const T* b, T* c) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill(c, c + m * n, T(0));
      return;
    }
    using namespace gemm_detail;
#if defined(TEXPR_GEMM_X86)
    const int level = cpu_level();
    if (level == 2) return gemm_blocked<avx512_isa, T>(m, n, k, a, b, c, &avx512_micro_kernel<T, blocking<avx512_isa, T>::mr, blocking<avx512_isa, T>::nv>);
    if (level == 1) return gemm_blocked<avx2_isa, T>(m, n, k, a, b, c, &avx2_micro_kernel<T, blocking<avx2_isa, T>::mr, blocking<avx2_isa, T>::nv>);
#endif
    gemm_blocked<portable_isa, T>(m, n, k, a, b, c, &portable_micro_kernel<T, blocking<portable_isa, T>::mr, blocking<portable_isa, T>::nv>);
  } else {
    gemm_exact(m, n, k, a, b, c);
  }
}

} // namespace texpr::detail::host_impl

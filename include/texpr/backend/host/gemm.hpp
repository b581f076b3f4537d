// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "texpr/backend/host/parallel.hpp"
#include "texpr/core/config.hpp"
#include "texpr/detail/environment.hpp"
#include "texpr/op/elementwise.hpp"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(TEXPR_GEMM_PORTABLE_ONLY)
#define TEXPR_GEMM_X86 1  // GCC vector extensions under target attributes: no <immintrin.h> (~1 s per TU to parse)
#endif

namespace texpr::detail::host_impl {

/// C (m x n, row-major, contiguous) = A (m x k) * B (k x n) with a plain blocked loop; A and B are read through
/// row and column strides (a transposed operand needs no copy). Integers wrap around.
template <class T>
void gemm_exact(index_t m, index_t n, index_t k, const T* a, index_t ars, index_t acs, const T* b, index_t brs,
                index_t bcs, T* c) {
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
            const T aip = a[i * ars + p * acs];
            const T* bp = b + p * brs;
            if constexpr (std::is_integral_v<T>) {
              for (index_t j = j0; j < j1; ++j) ci[j] = op::add::apply(ci[j], op::multiply::apply(aip, bp[j * bcs]));
            } else {
              for (index_t j = j0; j < j1; ++j) ci[j] += aip * bp[j * bcs];
            }
          }
        }
      }
    }
  }
}


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

// The x86 instruction sets as GCC/Clang vector types of Bytes bytes: the code below compiles to AVX2/AVX-512
// loads, broadcasts and FMAs inside functions whose target attribute enables them (`a * b + c` contracts to an
// FMA there; both compilers contract within an expression by default).
template <int Bytes, class Float> struct x86_vec_of;
template <int Bytes> struct x86_vec_of<Bytes, float> {
  typedef float type __attribute__((vector_size(Bytes)));
};
template <int Bytes> struct x86_vec_of<Bytes, double> {
  typedef double type __attribute__((vector_size(Bytes)));
};
#define TEXPR_GEMM_X86_ISA(NAME, BYTES, REGISTERS, FN)                                                       \
  struct NAME {                                                                                             \
    static constexpr int registers = REGISTERS;                                                             \
    template <class T> using vec = typename x86_vec_of<BYTES, T>::type;                                     \
    template <class T> static constexpr int lanes = BYTES / sizeof(T);                                      \
    template <class T> static FN vec<T> zero() { return vec<T>{}; }                                         \
    template <class T> static FN vec<T> load(const T* p) {                                                  \
      vec<T> v;                                                                                             \
      __builtin_memcpy(&v, p, sizeof v);                                                                    \
      return v;                                                                                             \
    }                                                                                                       \
    template <class T> static FN vec<T> loadu(const T* p) { return load(p); }                              \
    /* every lane set to x (not vec{} + x: that adds 0.0, one more instruction per broadcast, and -0 + 0) */ \
    template <class T, std::size_t... I> static FN vec<T> splat(T x, std::index_sequence<I...>) {            \
      return vec<T>{((void)I, x)...};                                                                       \
    }                                                                                                       \
    template <class T> static FN vec<T> bcast(const T* p) {                                                 \
      return splat(*p, std::make_index_sequence<lanes<T>>{});                                               \
    }                                                                                                       \
    template <class V, class T> static FN void storeu(T* p, V v) { __builtin_memcpy(p, &v, sizeof v); }     \
    template <class V> static FN V fma(V a, V b, V c) { return a * b + c; }                                 \
    template <class V> static FN V add(V a, V b) { return a + b; }                                          \
  };
TEXPR_GEMM_X86_ISA(avx2_isa, 32, 16, TEXPR_AVX2_FN)
TEXPR_GEMM_X86_ISA(avx512_isa, 64, 32, TEXPR_AVX512_FN)
#undef TEXPR_GEMM_X86_ISA
#endif

// C tile (MR x NV*lanes, leading dimension ldc) = or += packed A sliver (kc x MR) times a B sliver (kc x NR, row p at
// b + p * ldb: ldb = NR when packed, B's row stride when read in place).
// Defined once per instruction set (a macro, because the target attribute cannot depend on a template argument).
#define TEXPR_GEMM_MICRO_KERNEL(NAME, ATTR, ISA)                                                                 \
  template <class T, int MR, int NV, int AS = MR>                                                               \
  ATTR void NAME(index_t kc, const T* a, const T* b, index_t ldb, T* c, index_t ldc, bool accumulate) {        \
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
      a += AS;                                                                                                  \
      b += ldb;                                                                                                 \
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

// Skinny products (n <= 16: a classifier's 10 outputs): C rows [0, m) = A (row-major rows, unit stride) times
// B, with B transposed into bt (n x k, row j = column j of B). Each C element is a dot product of an A row and a
// bt row, vectorised along k, two rows of A at a time and up to 12 columns per pass (24 accumulators). Packing A
// as the tiled kernel does costs as much as the whole product when each A element is used only n times.
#define TEXPR_GEMM_DOT_KERNEL(NAME, ATTR, ISA)                                                                  \
  template <class T>                                                                                            \
  ATTR void NAME(index_t m, index_t n, index_t k, const T* a, index_t lda, const T* bt, T* c, index_t ldc) {    \
    using Isa = ISA;                                                                                            \
    using V = typename Isa::template vec<T>;                                                                    \
    constexpr int W = Isa::template lanes<T>;                                                                   \
    constexpr int NC = 12;                                                                                      \
    const index_t kv = k / W * W;                                                                               \
    for (index_t i = 0; i < m; i += 2) {                                                                        \
      const bool two = i + 1 < m;                                                                               \
      const T* a0 = a + i * lda;                                                                                \
      const T* a1 = two ? a0 + lda : a0;                                                                        \
      for (index_t j0 = 0; j0 < n; j0 += NC) {                                                                  \
        const int cols = static_cast<int>(n - j0 < NC ? n - j0 : NC);                                           \
        V r0[NC], r1[NC];                                                                                       \
        TEXPR_GEMM_UNROLL for (int j = 0; j < NC; ++j) r0[j] = r1[j] = Isa::template zero<T>();                 \
        for (index_t p = 0; p < kv; p += W) {                                                                   \
          const V x0 = Isa::loadu(a0 + p), x1 = Isa::loadu(a1 + p);                                            \
          TEXPR_GEMM_UNROLL for (int j = 0; j < NC; ++j) {                                                      \
            if (j < cols) {                                                                                     \
              const V y = Isa::loadu(bt + (j0 + j) * k + p);                                                    \
              r0[j] = Isa::fma(x0, y, r0[j]);                                                                   \
              r1[j] = Isa::fma(x1, y, r1[j]);                                                                   \
            }                                                                                                   \
          }                                                                                                     \
        }                                                                                                       \
        for (int j = 0; j < cols; ++j) {                                                                        \
          T s0 = 0, s1 = 0;                                                                                     \
          for (int l = 0; l < W; ++l) {                                                                         \
            s0 += r0[j][l];                                                                                     \
            s1 += r1[j][l];                                                                                     \
          }                                                                                                     \
          const T* y = bt + (j0 + j) * k;                                                                       \
          for (index_t p = kv; p < k; ++p) {                                                                    \
            s0 += a0[p] * y[p];                                                                                 \
            s1 += a1[p] * y[p];                                                                                 \
          }                                                                                                     \
          c[i * ldc + j0 + j] = s0;                                                                             \
          if (two) c[(i + 1) * ldc + j0 + j] = s1;                                                              \
        }                                                                                                       \
      }                                                                                                         \
    }                                                                                                           \
  }

#if defined(TEXPR_GEMM_X86)
TEXPR_GEMM_DOT_KERNEL(avx512_dot_kernel, __attribute__((target("avx512f,avx2,fma"))) inline, avx512_isa)
TEXPR_GEMM_DOT_KERNEL(avx2_dot_kernel, __attribute__((target("avx2,fma"))) inline, avx2_isa)
#endif
#undef TEXPR_GEMM_DOT_KERNEL

// Blocking for one (instruction set, dtype): register tile MR x NR, cache blocks MC x KC (A) and KC x NC (B).
// NV = 1 is the narrow variant for n of one vector or less (n = 10 outputs: a 2-vector tile would waste 22 of 32
// columns, and ran at 20 GFLOP/s).
template <class Isa, class T, int NV = 2> struct blocking {
  static constexpr int nv = NV;
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

// Packs A[0..mc, 0..kc] (element (i, p) at a[i * rs + p * cs]) as MR-row slivers, each stored depth-major; pads
// rows with zeros. Row-major (cs == 1) and column-major (rs == 1, a transposed operand) are both read directly.
template <class T, int MR> void pack_a(index_t mc, index_t kc, const T* a, index_t rs, index_t cs, T* out) {
  for (index_t i0 = 0; i0 < mc; i0 += MR) {
    const index_t rows = std::min<index_t>(MR, mc - i0);
    if (rows == MR) {
      for (index_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i) out[p * MR + i] = a[(i0 + i) * rs + p * cs];
    } else {
      for (index_t p = 0; p < kc; ++p)
        for (int i = 0; i < MR; ++i) out[p * MR + i] = i < rows ? a[(i0 + i) * rs + p * cs] : T(0);
    }
    out += kc * MR;
  }
}

// Packs slivers [s0, s1) of B[0..kc, 0..nc] (element (p, j) at b[p * rs + j * cs]) as NR-column slivers; pads
// columns with zeros.
template <class T, index_t NR> void pack_b(index_t s0, index_t s1, index_t nc, index_t kc, const T* b, index_t rs,
                                           index_t cs, T* out) {
  for (index_t s = s0; s < s1; ++s) {
    const index_t j0 = s * NR, cols = std::min<index_t>(NR, nc - j0);
    T* o = out + s * kc * NR;
    if (cols == NR && cs == 1) {
      for (index_t p = 0; p < kc; ++p) std::memcpy(o + p * NR, b + p * rs + j0, sizeof(T) * NR);
    } else {
      for (index_t p = 0; p < kc; ++p)
        for (index_t j = 0; j < NR; ++j) o[p * NR + j] = j < cols ? b[p * rs + (j0 + j) * cs] : T(0);
    }
  }
}

// What the driver needs from one (instruction set, dtype): its blocking and the entry points compiled for it.
// The driver itself is one function per dtype (not one per instruction set), which keeps the code every TU
// that uses matmul compiles small; the hot loop is inside the micro-kernel, called once per MR x NR tile.
template <class T> struct kernel_set {
  using kernel_fn = void (*)(index_t kc, const T* a, const T* b, index_t ldb, T* c, index_t ldc, bool accumulate);
  using pack_a_fn = void (*)(index_t mc, index_t kc, const T* a, index_t rs, index_t cs, T* out);
  using pack_b_fn = void (*)(index_t s0, index_t s1, index_t nc, index_t kc, const T* b, index_t rs, index_t cs, T* out);
  index_t mr, nr, kc, mc, nc;
  kernel_fn kernel;
  kernel_fn edge;  ///< 4 rows of a packed MR-row sliver (A step MR): the last rows of m without a full tile's waste
  pack_a_fn pack_a;
  pack_b_fn pack_b;
};
inline constexpr index_t max_tile = 12 * 32;  // the largest MR x NR register tile (AVX-512 float)

template <class Isa, class T, int NV, class Kernel> constexpr kernel_set<T> make_kernel_set(Kernel kernel, Kernel edge) {
  using P = blocking<Isa, T, NV>;
  static_assert(P::mr * P::nr <= max_tile);
  return {P::mr, P::nr, P::kc, P::mc, P::nc, kernel, edge, &pack_a<T, P::mr>, &pack_b<T, P::nr>};
}

/// Work applied to finished blocks of C: fn(arg, r0, r1, c0, c1) runs once for every block [r0, r1) x [c0, c1) of
/// C after its last depth panel, while the block is still in cache (a fused epilogue such as elu(x w + b)).
struct block_callback {
  void (*fn)(void* arg, index_t r0, index_t r1, index_t c0, index_t c1) = nullptr;
  void* arg = nullptr;
};

/// Multiply-adds below which a GEMM runs on one thread: 64 x 256 x 128 (2^21) is about 20 us on one core, and a
/// parallel region costs 2-5 us with the pool's polling workers (measured: 64 x 256 x 10 loses on 2 threads).
inline constexpr double gemm_thread_threshold = double(1 << 21);

// Computes rows [r0, r1) (MR-aligned r0) of C for B slivers [s0, s1) from packed A (ap: the slivers of rows from
// r0 on) and packed B, then runs the epilogue on the block when this is the last depth panel. With bdirect, full
// slivers of B are read in place (row p of the panel at bdirect + p * ldb) and only a narrower last sliver is packed.
template <class T>
void gemm_block(const kernel_set<T>& ks, index_t r0, index_t r1, index_t s0, index_t s1, index_t kc, index_t nc,
                const T* ap, const T* bp, const T* bdirect, index_t ldb, T* c, index_t ldc, index_t jc, bool accumulate,
                const block_callback* epi) {
  const index_t MR = ks.mr, NR = ks.nr;
  alignas(64) T tile[max_tile];
  // The A sliver stays in L1 while the B slivers stream from L2.
  for (index_t i0 = r0; i0 < r1; i0 += MR) {
    const index_t rows = std::min<index_t>(MR, r1 - i0);
    const T* as = ap + (i0 - r0) * kc;
    for (index_t s = s0; s < s1; ++s) {
      const index_t j0 = s * NR, cols = std::min<index_t>(NR, nc - j0);
      const bool direct = bdirect && cols == NR;
      const T* bs = direct ? bdirect + j0 : bp + s * kc * NR;
      const index_t bstep = direct ? ldb : NR;
      T* cp = c + i0 * ldc + jc + j0;
      if (rows == MR && cols == NR) {
        ks.kernel(kc, as, bs, bstep, cp, ldc, accumulate);
      } else if (cols == NR && rows % 4 == 0) {  // 4 or 8 rows left (m = 64, 128 with MR = 12)
        for (index_t q = 0; q < rows; q += 4) ks.edge(kc, as + q, bs, bstep, cp + q * ldc, ldc, accumulate);
      } else {
        ks.kernel(kc, as, bs, bstep, tile, NR, false);
        for (index_t i = 0; i < rows; ++i)
          for (index_t j = 0; j < cols; ++j)
            cp[i * ldc + j] = accumulate ? cp[i * ldc + j] + tile[i * NR + j] : tile[i * NR + j];
      }
    }
    if (epi) epi->fn(epi->arg, i0, i0 + rows, jc + s0 * NR, jc + std::min(s1 * NR, nc));
  }
}

// The blocked driver: C = A * B through the kernel set's packing routines and micro-kernel (A and B strided as
// in pack_a / pack_b, C row-major contiguous), then the epilogue (if any) on each finished block.
//
// Depth panels are of even size (k = 784 runs as 4 x 196, not 3 x 256 + 16). When A's panel fits in 4 MiB, A and
// B are packed once per depth panel by all threads together and the tasks (row groups x column groups) only
// compute; a larger A is packed by each task for its own rows (row panels of MC).
template <class T>
void gemm_blocked(index_t m, index_t n, index_t k, const T* a, index_t ars, index_t acs, const T* b, index_t brs,
                  index_t bcs, T* c, const kernel_set<T>& ks, const block_callback* epi) {
  const index_t MR = ks.mr, NR = ks.nr;
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const index_t threads = work >= gemm_thread_threshold ? static_cast<index_t>(num_threads()) : 1;
  const index_t kpanels = (k + ks.kc - 1) / ks.kc, kstep = (k + kpanels - 1) / kpanels;
  const index_t a_slivers = (m + MR - 1) / MR;
  const bool share_a = static_cast<std::size_t>(a_slivers * MR * kstep) * sizeof(T) <= (std::size_t(4) << 20);
  // Few rows reuse each element of B only m / MR times, too few to repay packing it: a row-major B is read in place.
  const bool direct_b = share_a && bcs == 1 && m <= 256;
  for (index_t jc = 0; jc < n; jc += ks.nc) {
    const index_t nc = std::min(ks.nc, n - jc);
    const index_t slivers = (nc + NR - 1) / NR;
    for (index_t pc = 0; pc < k; pc += kstep) {
      const index_t kc = std::min(kstep, k - pc);
      const bool accumulate = pc > 0;
      const block_callback* last = pc + kc >= k ? epi : nullptr;
      T* bp = scratch<T, 0>(static_cast<std::size_t>(slivers * NR * kc));
      const T* bsrc = b + pc * brs + jc * bcs;
      const T* asrc = a + pc * acs;
      if (direct_b && threads > 1) {
        // Few rows, B read in place: each task takes a band of rows (multiples of 4: m = 64 is 32 + 32) and packs
        // its own rows of A, so no thread reads what another packed, and a band of rows of C (an MLP layer's
        // output) is the band of A the same task reads in the next layer. Interleaved on 2 Zen 4 cores: the
        // 2-thread SGD step 1.11 -> 1.05 ms; profiles of the shared packing had pack_a at 10-21% of the time.
        if (nc % NR) ks.pack_b(slivers - 1, slivers, nc, kc, bsrc, brs, bcs, bp);  // the narrow last sliver
        const index_t bands = std::min<index_t>(threads, (m + 3) / 4);
        parallel_for(bands, [&](index_t t) {
          const index_t r0 = m * t / bands / 4 * 4, r1 = t + 1 == bands ? m : m * (t + 1) / bands / 4 * 4;
          if (r0 >= r1) return;
          T* ap = scratch<T, 1>(static_cast<std::size_t>((r1 - r0 + MR - 1) / MR * MR * kc));
          ks.pack_a(r1 - r0, kc, asrc + r0 * ars, ars, acs, ap);
          gemm_block(ks, r0, r1, index_t(0), slivers, kc, nc, ap, bp, bsrc, brs, c, n, jc, accumulate, last);
        });
        continue;
      }
      if (share_a) {
        T* ap = scratch<T, 1>(static_cast<std::size_t>(a_slivers * MR * kc));
        // One parallel pass packs B's slivers (only a narrow last one when B is read in place) then A's (units of
        // 4 slivers), then one computes.
        const index_t bfirst = direct_b ? (nc % NR ? slivers - 1 : slivers) : 0;
        const index_t bu = (slivers - bfirst + 3) / 4, units = bu + (a_slivers + 3) / 4;
        parallel_for(threads > 1 ? units : 1, [&](index_t t) {
          const index_t u0 = threads > 1 ? t : 0, u1 = threads > 1 ? t + 1 : units;
          for (index_t u = u0; u < u1; ++u) {
            if (u < bu) {
              ks.pack_b(bfirst + 4 * u, std::min(slivers, bfirst + 4 * u + 4), nc, kc, bsrc, brs, bcs, bp);
            } else {
              const index_t i0 = 4 * (u - bu) * MR, i1 = std::min(m, i0 + 4 * MR);
              ks.pack_a(i1 - i0, kc, asrc + i0 * ars, ars, acs, ap + i0 * kc);
            }
          }
        });
        // Column groups first (each thread's share of packed B stays in its own L2), then row groups up to about
        // 4 tasks per thread for balance.
        const index_t cgroups = std::min(slivers, threads);
        const index_t rgroups = std::min(a_slivers, (4 * threads + cgroups - 1) / cgroups);
        parallel_for(cgroups * rgroups, [&](index_t t) {
          const index_t rg = t / cgroups, cg = t % cgroups;
          const index_t r0 = a_slivers * rg / rgroups * MR, r1 = std::min(m, a_slivers * (rg + 1) / rgroups * MR);
          const index_t s0 = slivers * cg / cgroups, s1 = slivers * (cg + 1) / cgroups;
          if (r0 < r1 && s0 < s1)
            gemm_block(ks, r0, r1, s0, s1, kc, nc, ap + r0 * kc, bp, direct_b ? bsrc : nullptr, brs, c, n, jc, accumulate, last);
        });
        continue;
      }
      const index_t pack_tasks = threads > 1 ? std::min<index_t>(slivers, 16) : 1;
      parallel_for(pack_tasks, [&](index_t t) {
        ks.pack_b(slivers * t / pack_tasks, slivers * (t + 1) / pack_tasks, nc, kc, bsrc, brs, bcs, bp);
      });
      // Tasks: row panels of A times column chunks of B, about 8 per thread: with 4, 2048^2 f32 ran as 11 tasks
      // on 2 threads and gained 1.1-1.3x over one thread; with 8 (22 tasks), 1.5x (bench/README.md).
      const index_t mblocks = (m + ks.mc - 1) / ks.mc;
      const index_t mstep = ((m + mblocks - 1) / mblocks + MR - 1) / MR * MR;  // even row panels, MR-aligned
      const index_t want = threads > 1 ? 8 * threads : 1;
      const index_t jsplit = std::clamp<index_t>((want + mblocks - 1) / mblocks, 1, std::max<index_t>(1, slivers / 2));
      parallel_for(mblocks * jsplit, [&](index_t t) {
        const index_t ib = t / jsplit, js = t % jsplit;
        const index_t ic = ib * mstep, mc = std::min(mstep, m - ic);
        if (mc <= 0) return;
        const index_t s0 = slivers * js / jsplit, s1 = slivers * (js + 1) / jsplit;
        if (s0 == s1) return;
        T* ap = scratch<T, 1>(static_cast<std::size_t>(mstep * kc));
        ks.pack_a(mc, kc, asrc + ic * ars, ars, acs, ap);
        gemm_block(ks, ic, ic + mc, s0, s1, kc, nc, ap, bp, static_cast<const T*>(nullptr), 0, c, n, jc, accumulate, last);
      });
    }
  }
}

// C = A * B through a dot-product kernel (above): B transposed once into scratch, rows of A split over threads in
// pairs, the epilogue (if any) on each task's rows.
template <class T, class Kernel>
void gemm_dot(index_t m, index_t n, index_t k, const T* a, index_t ars, const T* b, index_t brs, index_t bcs, T* c,
              Kernel kernel, const block_callback* epi) {
  T* bt = scratch<T, 0>(static_cast<std::size_t>(n * k));
  for (index_t j = 0; j < n; ++j)
    for (index_t p = 0; p < k; ++p) bt[j * k + p] = b[p * brs + j * bcs];
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const index_t pairs = (m + 1) / 2;
  const index_t tasks = work >= gemm_thread_threshold ? std::min<index_t>(pairs, 4 * num_threads()) : 1;
  parallel_for(tasks, [&](index_t t) {
    const index_t r0 = 2 * (pairs * t / tasks), r1 = std::min(m, 2 * (pairs * (t + 1) / tasks));
    if (r0 >= r1) return;
    kernel(r1 - r0, n, k, a + r0 * ars, ars, bt, c + r0 * n, n);
    if (epi) epi->fn(epi->arg, r0, r1, 0, n);
  });
}

#if defined(TEXPR_GEMM_X86)
/// The instruction set matmul uses: 2 = AVX-512F, 1 = AVX2 with FMA, 0 = portable; the widest this CPU runs,
/// lowered by TEXPR_GEMM_LEVEL=0|1 (so the narrower kernels can be tested and compared on a wide CPU).
inline int cpu_level() {
  static const int level = [] {
    __builtin_cpu_init();
    int widest = 0;
    if (__builtin_cpu_supports("avx512f")) widest = 2;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) widest = 1;
    const auto env = env_number("TEXPR_GEMM_LEVEL", 0, 2, env_above::ignore);
    return env && static_cast<int>(*env) < widest ? static_cast<int>(*env) : widest;
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


/// C (m x n, row-major, contiguous) = A (m x k) * B (k x n), A and B read through row and column strides.
/// Integers wrap around.
template <class T>
void gemm(index_t m, index_t n, index_t k, const T* a, index_t ars, index_t acs, const T* b, index_t brs, index_t bcs,
          T* c, const block_callback* epi = nullptr) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
      std::fill(c, c + m * n, T(0));
      if (epi) epi->fn(epi->arg, 0, m, 0, n);
      return;
    }
#define TEXPR_GEMM_KERNEL_SET(NAME, ISA, KERNEL, NV)                                             \
    static constexpr kernel_set<T> NAME = make_kernel_set<ISA, T, NV>(                          \
        &KERNEL<T, blocking<ISA, T, NV>::mr, NV>, &KERNEL<T, 4, NV, blocking<ISA, T, NV>::mr>);
#if defined(TEXPR_GEMM_X86)
    TEXPR_GEMM_KERNEL_SET(avx512, avx512_isa, avx512_micro_kernel, 2)
    TEXPR_GEMM_KERNEL_SET(avx512_narrow, avx512_isa, avx512_micro_kernel, 1)
    TEXPR_GEMM_KERNEL_SET(avx2, avx2_isa, avx2_micro_kernel, 2)
    TEXPR_GEMM_KERNEL_SET(avx2_narrow, avx2_isa, avx2_micro_kernel, 1)
#endif
    TEXPR_GEMM_KERNEL_SET(portable, portable_isa, portable_micro_kernel, 2)
#undef TEXPR_GEMM_KERNEL_SET
    const kernel_set<T>* ks = &portable;
#if defined(TEXPR_GEMM_X86)
    const int level = cpu_level();
    if (level >= 1 && n <= 12 && acs == 1 && k >= 32) {  // skinny product (one pass of columns), A rows in place
      if (level == 2) gemm_dot<T>(m, n, k, a, ars, b, brs, bcs, c, &avx512_dot_kernel<T>, epi);
      else gemm_dot<T>(m, n, k, a, ars, b, brs, bcs, c, &avx2_dot_kernel<T>, epi);
      return;
    }
    if (level == 2) ks = n <= avx512_narrow.nr ? &avx512_narrow : &avx512;
    else if (level == 1) ks = n <= avx2_narrow.nr ? &avx2_narrow : &avx2;
#endif
    gemm_blocked<T>(m, n, k, a, ars, acs, b, brs, bcs, c, *ks, epi);
  } else {
    gemm_exact(m, n, k, a, ars, acs, b, brs, bcs, c);
    if (epi && m > 0 && n > 0) epi->fn(epi->arg, 0, m, 0, n);
  }
}

#if defined(TEXPR_COMPILED_KERNELS)
// Compiled mode (texpr/compiled_kernels.hpp): the float and double GEMMs, their micro-kernels for every ISA, are
// compiled once, in the one translation unit that defines TEXPR_COMPILED_KERNELS_HERE, instead of in every TU
// that multiplies.
#if defined(TEXPR_COMPILED_KERNELS_HERE)
#define TEXPR_GEMM_INSTANTIATION template
#else
#define TEXPR_GEMM_INSTANTIATION extern template
#endif
TEXPR_GEMM_INSTANTIATION void gemm<float>(index_t, index_t, index_t, const float*, index_t, index_t, const float*,
                                          index_t, index_t, float*, const block_callback*);
TEXPR_GEMM_INSTANTIATION void gemm<double>(index_t, index_t, index_t, const double*, index_t, index_t, const double*,
                                           index_t, index_t, double*, const block_callback*);
#undef TEXPR_GEMM_INSTANTIATION
#endif

} // namespace texpr::detail::host_impl

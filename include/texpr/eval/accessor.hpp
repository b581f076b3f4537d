// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The accessor protocol: how a backend reads a node's elements, broadcast to an output shape, without
// materialising it. Evaluation turns each node into an accessor (eval/read.hpp); backends consume any type that
// satisfies the `accessor` concept. The accessors of texpr's own nodes are defined here: strided (memory and
// index generators), constant and map (an elementwise op over any number of operand accessors).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/detail/tuple.hpp"
#include "texpr/op/scan.hpp"

#if defined(TEXPR_DEVICE_CODE)
#define TEXPR_UNROLL _Pragma("unroll")
#else
#define TEXPR_UNROLL
#endif

namespace texpr {

/// The accessor protocol. An accessor reads a node's values as if broadcast to an output shape of some rank R;
/// it is trivially copyable, so it is passed to device kernels by value. Members:
///   value_type       the element type it yields (a stored dtype: 16-bit floats stay 16-bit until computed on);
///   dense()          true when element i of the row-major output is linear(i): no broadcast, no stride;
///   linear(i)        the element at row-major output position i (only when dense());
///   at(idx)          the element at output multi-index idx[0..R);
///   seek(idx, axis)  positions the accessor on the line through idx along `axis` (idx[axis] is ignored);
///   along(j)         element j of that line (kernels keep the line's state in registers: one offset and one
///                    step per memory operand, set once by seek).
/// Optional fast paths, provided by texpr's accessors and used when present:
///   chunk_reader     (host) reads a line, after seek along the last axis, in unit-stride chunks:
///                    init(arena), bind(a, len), start(first, n), then c[i] == a.along(first + i);
///   aligned(bytes), load<N>(i, out)  (cuda) N consecutive dense elements from i (a multiple of N) as vector loads.
///   rows_aligned(bytes), load_at<N>(idx, out)  (cuda) N consecutive elements along the last axis from idx
///                    (idx[last] a multiple of N) as one vector load per memory operand, or one load of a value
///                    broadcast along that axis; rows_aligned(N * sizeof(value_type)) says whether that holds.
/// A map's kernel may offer Kernel::apply_n<Op, R, N>(out, in...) (N results at once, each bitwise Kernel::apply's);
/// vector loads then use it.
template <class A>
concept accessor = std::is_trivially_copyable_v<A> &&
                   requires(A& a, const A& ca, index_t i, const index_t* idx, std::size_t axis) {
                     typename A::value_type;
                     { ca.dense() } -> std::convertible_to<bool>;
                     { ca.linear(i) } -> std::same_as<typename A::value_type>;
                     { ca.at(idx) } -> std::same_as<typename A::value_type>;
                     a.seek(idx, axis);
                     { ca.along(i) } -> std::same_as<typename A::value_type>;
                   };

namespace detail {

/// Elements per host chunk (a multiple of the reductions' block of 256).
inline constexpr index_t chunk_elements = 1024;

/// Buffers for the chunk readers of one accessor tree, owned by the task that uses the tree.
struct chunk_arena {
  std::vector<std::unique_ptr<unsigned char[]>> blocks;
  template <class T> T* get() {
    blocks.emplace_back(new unsigned char[sizeof(T) * chunk_elements + 64]);
    auto addr = reinterpret_cast<std::uintptr_t>(blocks.back().get());
    return reinterpret_cast<T*>((addr + 63) & ~std::uintptr_t(63));
  }
};

/// Loads *p; in device code through the read-only data cache (ld.global.nc): accessors only read memory that no
/// kernel of the same evaluation writes.
template <class T> TEXPR_HOST_DEVICE inline T load_read_only(const T* p) {
#if defined(TEXPR_DEVICE_CODE)
  // One load of the element's width only where its alignment guarantees that width (complex64 is 8 bytes aligned
  // to 4, unlike cuComplex's float2): otherwise one 4-byte load per word.
  if constexpr (sizeof(T) == 8 && alignof(T) >= 8) {
    const unsigned long long v = __ldg(reinterpret_cast<const unsigned long long*>(p));
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  } else if constexpr (sizeof(T) == 4) {
    const unsigned int v = __ldg(reinterpret_cast<const unsigned int*>(p));
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  } else if constexpr (sizeof(T) == 2) {
    const unsigned short v = __ldg(reinterpret_cast<const unsigned short*>(p));
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  } else if constexpr (sizeof(T) == 1) {
    const unsigned char v = __ldg(reinterpret_cast<const unsigned char*>(p));
    T r;
    memcpy(&r, &v, sizeof r);
    return r;
  } else if constexpr (sizeof(T) % 4 == 0 && alignof(T) >= 4) {  // complex64, complex128
    unsigned int v[sizeof(T) / 4];
    for (std::size_t k = 0; k < sizeof(T) / 4; ++k) v[k] = __ldg(reinterpret_cast<const unsigned int*>(p) + k);
    T r;
    memcpy(&r, v, sizeof r);
    return r;
  } else {
    return *p;
  }
#else
  return *p;
#endif
}

/// N consecutive elements from p (aligned to N * sizeof(T)) in as few read-only vector loads as possible.
template <int N, class T> TEXPR_HOST_DEVICE inline void load_vector(const T* p, T (&out)[N]) {
#if defined(TEXPR_DEVICE_CODE)
  constexpr std::size_t bytes = sizeof(T) * N;
  if constexpr (bytes % 16 == 0) {
    uint4 v[bytes / 16];
    TEXPR_UNROLL for (std::size_t k = 0; k < bytes / 16; ++k) v[k] = __ldg(reinterpret_cast<const uint4*>(p) + k);
    memcpy(out, v, bytes);
  } else if constexpr (bytes == 8) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    memcpy(out, &v, bytes);
  } else {
    TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = load_read_only(p + k);
  }
#else
  for (int k = 0; k < N; ++k) out[k] = p[k];
#endif
}

/// Values read from memory at an offset.
template <class T> struct memory_source {
  using value_type = T;
  static constexpr bool is_memory = true;
  const T* p;
  TEXPR_HOST_DEVICE T operator()(index_t off) const { return load_read_only(p + off); }
};

} // namespace detail

/// Accessor of values indexed by an offset: memory (Source = memory_source) or an index generator (arange,
/// random). Offsets advance by per-dimension strides in the output's index space, 0 on broadcast dimensions.
template <class Source, std::size_t RO> struct strided_accessor {
  using value_type = typename Source::value_type;
  static constexpr std::size_t slots = RO > 0 ? RO : 1;
  Source src;
  index_t st[slots] = {};
  index_t line_off = 0, line_step = 0;
  bool is_dense = false;

  TEXPR_HOST_DEVICE bool dense() const { return is_dense; }
  TEXPR_HOST_DEVICE value_type linear(index_t i) const { return src(i); }
  TEXPR_HOST_DEVICE value_type at(const index_t* idx) const {
    index_t off = 0;
    TEXPR_UNROLL for (std::size_t d = 0; d != RO; ++d) off += idx[d] * st[d];
    return src(off);
  }
  TEXPR_HOST_DEVICE void seek(const index_t* idx, std::size_t axis) {
    index_t off = 0, step = 0;
    TEXPR_UNROLL for (std::size_t d = 0; d != RO; ++d) {
      if (d == axis) step = st[d];
      else off += idx[d] * st[d];
    }
    line_off = off;
    line_step = step;
  }
  TEXPR_HOST_DEVICE value_type along(index_t j) const { return src(line_off + j * line_step); }

  /// (cuda) True when dense loads from every memory operand are aligned to `bytes`.
  TEXPR_HOST_DEVICE bool aligned(std::size_t bytes) const {
    if constexpr (Source::is_memory) return reinterpret_cast<std::uintptr_t>(src.p) % bytes == 0;
    else return true;
  }
  /// (cuda) N dense elements from i.
  template <int N> TEXPR_HOST_DEVICE void load(index_t i, value_type (&out)[N]) const {
    if constexpr (Source::is_memory) {
      detail::load_vector<N>(src.p + i, out);
    } else {
      TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = src(i + k);
    }
  }
  /// (cuda) True when load_at<N> with N * sizeof(value_type) == bytes reads memory by one aligned vector load or one
  /// broadcast value: along the last axis the operand is broadcast, or contiguous with every row start (index
  /// multiples of N along it) aligned to `bytes`.
  TEXPR_HOST_DEVICE bool rows_aligned(std::size_t bytes) const {
    if constexpr (Source::is_memory && RO > 0) {
      if (st[RO - 1] == 0) return true;
      if (st[RO - 1] != 1 || reinterpret_cast<std::uintptr_t>(src.p) % bytes != 0) return false;
      const auto n = static_cast<index_t>(bytes / sizeof(value_type));
      TEXPR_UNROLL for (std::size_t d = 0; d + 1 < RO; ++d) if (st[d] % n != 0) return false;
    }
    return true;
  }
  /// (cuda) N elements along the last axis from idx (idx[RO - 1] a multiple of N; rows_aligned for memory).
  template <int N>
  TEXPR_HOST_DEVICE void load_at(const index_t* idx, value_type (&out)[N]) const {
    static_assert(RO > 0, "texpr: load_at reads along the last axis of a rank >= 1 output");
    index_t off = 0;
    TEXPR_UNROLL for (std::size_t d = 0; d != RO; ++d) off += idx[d] * st[d];
    if constexpr (Source::is_memory) {
      if (st[RO - 1] == 0) {
        const value_type v = src(off);
        TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = v;
      } else {
        detail::load_vector<N>(src.p + off, out);
      }
    } else {
      TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = src(off + k * st[RO - 1]);
    }
  }

  /// (host) Unit-stride chunks of a line: a pointer into memory when the line's step is 1, else a buffer filled
  /// once per line (step 0: a broadcast value) or gathered per chunk.
  struct chunk_reader {
    Source src;
    index_t off = 0, step = 1;
    const value_type* p = nullptr;
    value_type* buf = nullptr;
    void init(detail::chunk_arena& arena) { buf = arena.get<value_type>(); }
    void bind(const strided_accessor& a, index_t len) {
      src = a.src;
      off = a.line_off;
      step = a.line_step;
      if (step == 0) {
        const value_type v = src(off);
        for (index_t i = 0, e = len < detail::chunk_elements ? len : detail::chunk_elements; i < e; ++i) buf[i] = v;
        p = buf;
      }
    }
    void start(index_t first, index_t n) {
      if constexpr (Source::is_memory) {
        if (step == 1) {
          p = src.p + off + first;
          return;
        }
      }
      if (step != 0) {
        for (index_t i = 0; i < n; ++i) buf[i] = src(off + (first + i) * step);
        p = buf;
      }
    }
    value_type operator[](index_t i) const { return p[i]; }
  };
};

/// Builds a strided accessor over values of (own) shape `shape` with strides `strides`, broadcast to `out`;
/// throws shape_error if the shape does not broadcast to `out`.
template <class Source, std::size_t R, std::size_t RO>
strided_accessor<Source, RO> make_strided_accessor(Source src, const shape_t<R>& shape, const shape_t<R>& strides,
                                                   const shape_t<RO>& out) {
  static_assert(R <= RO, "texpr: an operand cannot have a higher rank than the expression result");
  check_broadcastable(shape, out, "operand");
  strided_accessor<Source, RO> a{src};
  const auto contiguous = contiguous_strides(out);
  bool dense = true;
  for (std::size_t d = 0; d != RO; ++d) {
    index_t s = 0;
    if (d + R + 1 > RO) {
      const std::size_t own = d + R - RO;
      s = shape[own] == 1 ? 0 : strides[own];  // extent-1 dimensions never advance (broadcast or trivial)
    }
    a.st[d] = s;
    if (out[d] != 1 && s != contiguous[d]) dense = false;
  }
  a.is_dense = dense;
  return a;
}

/// Accessor of a constant.
template <class T> struct constant_accessor {
  using value_type = T;
  T v;
  TEXPR_HOST_DEVICE bool dense() const { return true; }
  TEXPR_HOST_DEVICE T linear(index_t) const { return v; }
  TEXPR_HOST_DEVICE T at(const index_t*) const { return v; }
  TEXPR_HOST_DEVICE void seek(const index_t*, std::size_t) {}
  TEXPR_HOST_DEVICE T along(index_t) const { return v; }
  TEXPR_HOST_DEVICE bool aligned(std::size_t) const { return true; }
  template <int N> TEXPR_HOST_DEVICE void load(index_t, T (&out)[N]) const {
    TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = v;
  }
  /// (cuda) Always: a constant is broadcast along every axis.
  TEXPR_HOST_DEVICE bool rows_aligned(std::size_t) const { return true; }
  /// (cuda) The constant, N times.
  template <int N>
  TEXPR_HOST_DEVICE void load_at(const index_t*, T (&out)[N]) const {
    TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = v;
  }
  /// (host) The constant, per element.
  struct chunk_reader {
    T v{};
    void init(detail::chunk_arena&) {}
    void bind(const constant_accessor& a, index_t) { v = a.v; }
    void start(index_t, index_t) {}
    T operator[](index_t) const { return v; }
  };
};

namespace detail {

/// The chunk reader of accessor A: its own, or one reading through along() for accessors without one.
template <class A> struct generic_chunk_reader {
  A a{};
  index_t first = 0;
  void init(chunk_arena&) {}
  void bind(const A& src, index_t) { a = src; }
  void start(index_t f, index_t) { first = f; }
  typename A::value_type operator[](index_t i) const { return a.along(first + i); }
};
template <class A> auto chunk_reader_of() {
  if constexpr (requires { typename A::chunk_reader; }) return std::type_identity<typename A::chunk_reader>{};
  else return std::type_identity<generic_chunk_reader<A>>{};
}
/// See chunk_reader_of.
template <class A> using chunk_reader_t = typename decltype(chunk_reader_of<A>())::type;

/// True when A offers (cuda) vector loads.
template <class A> concept vector_loadable = requires(const A& a, index_t i, typename A::value_type (&out)[4]) {
  { a.aligned(std::size_t{16}) } -> std::convertible_to<bool>;
  a.template load<4>(i, out);
};

/// True when A offers (cuda) vector loads along the last axis at a multi-index.
template <class A>
concept row_loadable = requires(const A& a, const index_t* idx, typename A::value_type (&out)[4]) {
  { a.rows_aligned(std::size_t{16}) } -> std::convertible_to<bool>;
  a.template load_at<4>(idx, out);
};

/// True when Kernel computes N results of Op at once (Kernel::apply_n).
template <class Kernel, class Op, class R, int N, class... V>
concept applies_n = requires {
  Kernel::template apply_n<Op, R, N>(std::declval<R(&)[N]>(), std::declval<const V(&)[N]>()...);
};

} // namespace detail

/// Accessor of an elementwise node: Op over the operand accessors A..., computed by Kernel::apply<Op, R>, the
/// per-element function of the registry row's implementation (so a map without a row has no code to call).
template <class Kernel, class Op, class R, class... A> struct map_accessor {
  using value_type = R;
  detail::tuple<A...> args;

  TEXPR_HOST_DEVICE bool dense() const { return dense_impl(std::index_sequence_for<A...>{}); }
  TEXPR_HOST_DEVICE R linear(index_t i) const { return linear_impl(i, std::index_sequence_for<A...>{}); }
  TEXPR_HOST_DEVICE R at(const index_t* idx) const { return at_impl(idx, std::index_sequence_for<A...>{}); }
  TEXPR_HOST_DEVICE void seek(const index_t* idx, std::size_t axis) { seek_impl(idx, axis, std::index_sequence_for<A...>{}); }
  TEXPR_HOST_DEVICE R along(index_t j) const { return along_impl(j, std::index_sequence_for<A...>{}); }
  TEXPR_HOST_DEVICE bool aligned(std::size_t bytes) const { return aligned_impl(bytes, std::index_sequence_for<A...>{}); }
  template <int N> TEXPR_HOST_DEVICE void load(index_t i, R (&out)[N]) const { load_impl<N>(i, out, std::index_sequence_for<A...>{}); }
  /// (cuda) True when every operand's rows are (rows_aligned, each for its own element size).
  TEXPR_HOST_DEVICE bool rows_aligned(std::size_t bytes) const requires(detail::row_loadable<A> && ...) {
    return rows_aligned_impl(bytes, std::index_sequence_for<A...>{});
  }
  /// (cuda) N results along the last axis from idx: each operand's load_at, combined by the op.
  template <int N>
  TEXPR_HOST_DEVICE void load_at(const index_t* idx, R (&out)[N]) const requires(detail::row_loadable<A> && ...) {
    load_at_impl<N>(idx, out, std::index_sequence_for<A...>{});
  }

  /// (host) The operands' chunk readers, combined by the op.
  struct chunk_reader {
    using seq = std::index_sequence_for<A...>;
    detail::tuple<detail::chunk_reader_t<A>...> ch;
    void init(detail::chunk_arena& arena) { init_impl(arena, seq{}); }
    void bind(const map_accessor& m, index_t len) { bind_impl(m, len, seq{}); }
    void start(index_t first, index_t n) { start_impl(first, n, seq{}); }
    R operator[](index_t i) const { return at_impl(i, seq{}); }

   private:
    template <std::size_t... I> void init_impl(detail::chunk_arena& arena, std::index_sequence<I...>) {
      (detail::get<I>(ch).init(arena), ...);
    }
    template <std::size_t... I> void bind_impl(const map_accessor& m, index_t len, std::index_sequence<I...>) {
      (detail::get<I>(ch).bind(detail::get<I>(m.args), len), ...);
    }
    template <std::size_t... I> void start_impl(index_t first, index_t n, std::index_sequence<I...>) {
      (detail::get<I>(ch).start(first, n), ...);
    }
    template <std::size_t... I> R at_impl(index_t i, std::index_sequence<I...>) const {
      return Kernel::template apply<Op, R>(detail::get<I>(ch)[i]...);
    }
  };

 private:
  template <std::size_t... I> TEXPR_HOST_DEVICE bool dense_impl(std::index_sequence<I...>) const {
    return (detail::get<I>(args).dense() && ...);
  }
  template <std::size_t... I> TEXPR_HOST_DEVICE R linear_impl(index_t i, std::index_sequence<I...>) const {
    return Kernel::template apply<Op, R>(detail::get<I>(args).linear(i)...);
  }
  template <std::size_t... I> TEXPR_HOST_DEVICE R at_impl(const index_t* idx, std::index_sequence<I...>) const {
    return Kernel::template apply<Op, R>(detail::get<I>(args).at(idx)...);
  }
  template <std::size_t... I> TEXPR_HOST_DEVICE void seek_impl(const index_t* idx, std::size_t axis, std::index_sequence<I...>) {
    (detail::get<I>(args).seek(idx, axis), ...);
  }
  template <std::size_t... I> TEXPR_HOST_DEVICE R along_impl(index_t j, std::index_sequence<I...>) const {
    return Kernel::template apply<Op, R>(detail::get<I>(args).along(j)...);
  }
  template <class X> TEXPR_HOST_DEVICE static bool aligned_one(const X& x, std::size_t bytes) {
    if constexpr (detail::vector_loadable<X>) return x.aligned(bytes / sizeof(R) * sizeof(typename X::value_type));
    else return true;
  }
  template <std::size_t... I> TEXPR_HOST_DEVICE bool aligned_impl(std::size_t bytes, std::index_sequence<I...>) const {
    return (aligned_one(detail::get<I>(args), bytes) && ...);
  }
  template <int N, class X> TEXPR_HOST_DEVICE static void load_one(const X& x, index_t i, typename X::value_type (&out)[N]) {
    if constexpr (detail::vector_loadable<X>) {
      x.template load<N>(i, out);
    } else {
      TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = x.linear(i + k);
    }
  }
  template <int N, std::size_t... I> TEXPR_HOST_DEVICE void load_impl(index_t i, R (&out)[N], std::index_sequence<I...>) const {
    detail::tuple<typename A::value_type[N]...> in;
    (load_one<N>(detail::get<I>(args), i, detail::get<I>(in)), ...);
    combine<N>(out, in, std::index_sequence<I...>{});
  }
  template <std::size_t... I>
  TEXPR_HOST_DEVICE bool rows_aligned_impl(std::size_t bytes, std::index_sequence<I...>) const {
    return (detail::get<I>(args).rows_aligned(bytes / sizeof(R) * sizeof(typename A::value_type)) && ...);
  }
  template <int N, std::size_t... I>
  TEXPR_HOST_DEVICE void load_at_impl(const index_t* idx, R (&out)[N], std::index_sequence<I...>) const {
    detail::tuple<typename A::value_type[N]...> in;
    (detail::get<I>(args).template load_at<N>(idx, detail::get<I>(in)), ...);
    combine<N>(out, in, std::index_sequence<I...>{});
  }
  /// out[k] = Op(in[k]...), N at once where the kernel offers it.
  template <int N, std::size_t... I>
  TEXPR_HOST_DEVICE static void combine(R (&out)[N], const detail::tuple<typename A::value_type[N]...>& in,
                                        std::index_sequence<I...>) {
    if constexpr (detail::applies_n<Kernel, Op, R, N, typename A::value_type...>) {
      Kernel::template apply_n<Op, R, N>(out, detail::get<I>(in)...);
    } else {
      TEXPR_UNROLL for (int k = 0; k < N; ++k) out[k] = Kernel::template apply<Op, R>(detail::get<I>(in)[k]...);
    }
  }
};

/// Two accessors of one output shape read side by side: each element is a pair (what a linear recurrence folds:
/// its coefficient and its term). Its chunk reader pairs the two operands' own.
template <class VA, class VB, class A, class B> struct pair_accessor {
  using value_type = op::value_pair<VA, VB>;
  A a;  ///< The first operand's accessor.
  B b;  ///< The second's.
  /// Both dense.
  TEXPR_HOST_DEVICE bool dense() const { return a.dense() && b.dense(); }
  /// Element i of each (both dense).
  TEXPR_HOST_DEVICE value_type linear(index_t i) const { return {a.linear(i), b.linear(i)}; }
  /// The element of each at idx.
  TEXPR_HOST_DEVICE value_type at(const index_t* idx) const { return {a.at(idx), b.at(idx)}; }
  /// Positions both on the line through idx along axis.
  TEXPR_HOST_DEVICE void seek(const index_t* idx, std::size_t axis) {
    a.seek(idx, axis);
    b.seek(idx, axis);
  }
  /// Element j of each one's line.
  TEXPR_HOST_DEVICE value_type along(index_t j) const { return {a.along(j), b.along(j)}; }
  /// (host) The two operands' chunk readers.
  struct chunk_reader {
    detail::chunk_reader_t<A> ca;
    detail::chunk_reader_t<B> cb;
    void init(detail::chunk_arena& arena) {
      ca.init(arena);
      cb.init(arena);
    }
    void bind(const pair_accessor& p, index_t len) {
      ca.bind(p.a, len);
      cb.bind(p.b, len);
    }
    void start(index_t first, index_t n) {
      ca.start(first, n);
      cb.start(first, n);
    }
    value_type operator[](index_t i) const { return {ca[i], cb[i]}; }
  };
};

} // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every (op, dtype) row of a backend's registry table, run on that backend and compared with an independent
// reference (long double for floats, exact 128-bit wrap-around for integers). The list comes from the table:
// tx::host_rows / tx::cuda_rows. Used by the host suite (tests/core/test_registry.cpp) and the cuda suite
// (tests/cuda/test_registry_part.cu), so both backends are held to the same checks.
//
// To keep what the compilers instantiate small, the elementwise rows of one dtype are checked together: one
// expression selects, per element, one op of the dtype through a chain of tx::where, so a single fused kernel
// (and a single strided one) evaluates every elementwise row of that dtype, each on elements drawn from its own
// input domain, and every element is checked against its own op's reference. Reductions, matmul and layouts
// have their own kernels and are checked row by row.
#pragma once

#include "core/reference.hpp"
#include "core/conv_reference.hpp"
#include "core/complex_checks.hpp"

#include <texpr/sort.hpp>
#include <texpr/linalg.hpp>
#include <texpr/fft.hpp>
#include <texpr/conv.hpp>

#include <algorithm>
#include <array>
#include <random>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace regcheck {

using test::ld;

/// Reports one mismatch (at most 20 per check, then only counts): a plain function, so the checks below, which are
/// instantiated per (op, dtype), do not each expand doctest's message machinery.
inline bool fail(const std::string& what, int& failures) {
  if (failures++ < 20) FAIL_CHECK(what);
  return false;
}
inline std::string str(ld v) { return std::to_string(static_cast<double>(v)); }
/// True when `ok`; otherwise reports `what` (fail above). The message is built only for a mismatch: the checks run
/// per element, and building every message took about a third of the host registry test's time under the sanitizers.
#define REGCHECK_EXPECT(ok, what, failures) ((ok) || ::regcheck::fail((what), (failures)))

/// Moving test data to backend B and results back.
template <class B> struct on;
template <> struct on<tx::host> {
  template <class T, std::size_t R> static tx::tensor<T, R> up(const tx::tensor<T, R>& h) { return h.clone(); }
  template <class E> static auto down(E&& e) { return tx::eval(std::forward<E>(e)); }
};
#if defined(__CUDACC__)
template <> struct on<tx::cuda> {
  template <class T, std::size_t R> static tx::tensor<T, R, tx::cuda> up(const tx::tensor<T, R>& h) { return tx::to_device(h); }
  template <class E> static auto down(E&& e) { return tx::to_host(std::forward<E>(e)); }
};
#endif

// ---- which rows are which -----------------------------------------------------------------------------------

template <class Op> inline constexpr bool is_cast = tx::detail::cast_op<Op>;
template <class Op> inline constexpr bool is_where = std::is_same_v<Op, tx::op::where>;
template <class Op> inline constexpr bool is_copy = std::is_same_v<Op, tx::op::copy>;
template <class Op> inline constexpr bool is_predicate = tx::detail::predicate_op<Op>;
template <class Op> inline constexpr bool is_chained =
    tx::op::category_v<Op> == tx::op::kind::elementwise && !is_cast<Op> && !is_where<Op> && !is_copy<Op> &&
    !std::is_same_v<Op, tx::op::make_complex>;  // real operands, complex result: complex_checks.hpp

/// The ops of Rows registered for dtype T whose result is bool (Predicate) or T (!Predicate), in table order.
template <class Rows, class T, bool Predicate> struct chain_ops;
template <class... Row, class T, bool Predicate> struct chain_ops<tx::detail::type_list<Row...>, T, Predicate> {
  template <class R> using pick = std::conditional_t<
      tx::in_dtype_set_v<typename R::dtypes, T> && is_chained<typename R::template op_for<T>> &&
          is_predicate<typename R::template op_for<T>> == Predicate,
      tx::detail::type_list<typename R::template op_for<T>>, tx::detail::type_list<>>;
  using type = tx::detail::join_lists_t<pick<Row>...>;
};

// ---- elementwise chains ---------------------------------------------------------------------------------------

/// The reference domain of Op on T (16-bit floats use float's).
template <class Op, class T> test::domain domain_of() {
  return test::ref<Op>::template dom<std::conditional_t<tx::is_float16_v<T>, float, T>>();
}

template <class Op, class A, class Bn> auto apply_one(const A& a, const Bn& b) {
  if constexpr (test::ref<Op>::arity == 1) return tx::map<Op>(a);
  else if constexpr (test::ref<Op>::arity == 3) return tx::map<Op>(a, -tx::abs(b), tx::abs(b));  // clamp(a, -|b|, |b|)
  else return tx::map<Op>(a, b);
}

/// Op K of the list, for K in [First, First + Count): a balanced tree of where(sel < middle, ..., ...), so the
/// expression's depth (and the length of its type) grows with log2 of the number of ops, not linearly.
template <int First, int Count, class Sel, class A, class Bn, class... Ops> auto chain(const Sel& sel, const A& a, const Bn& b) {
  if constexpr (Count == 1) {
    using Op = std::tuple_element_t<First, std::tuple<Ops...>>;
    return apply_one<Op>(a, b);
  } else {
    constexpr int half = Count / 2;
    return tx::where(sel < First + half, chain<First, half, Sel, A, Bn, Ops...>(sel, a, b),
                     chain<First + half, Count - half, Sel, A, Bn, Ops...>(sel, a, b));
  }
}

template <class T, class... Ops> struct op_table {
  static constexpr int size = sizeof...(Ops);
  /// Draws (a, b) from op k's domain.
  static void draw(int k, T& a, T& b) {
    int i = 0;
    ((i++ == k ? draw_for<Ops>(a, b) : void()), ...);
  }
  /// Op k's reference value and name.
  static ld reference(int k, T a, T b) {
    ld r = 0;
    int i = 0;
    ((i++ == k ? void(r = ref_of<Ops>(a, b)) : void()), ...);
    return r;
  }
  static std::string name(int k) {
    std::string r;
    int i = 0;
    ((i++ == k ? void(r = std::string(Ops::name)) : void()), ...);
    return r;
  }

 private:
  template <class Op> static void draw_for(T& a, T& b) {
    const auto d = domain_of<Op, T>();
    a = test::uniform<T>(d.lo, d.hi);
    b = test::uniform<T>(d.lo, d.hi);
    if constexpr (std::is_same_v<Op, tx::op::divide> && !test::is_int<T>)
      if (std::fabs(test::wide(b)) < 0.05) b = T(1);  // keep quotients finite and well conditioned
  }
  template <class Op> static ld ref_of(T a, T b) {
    if constexpr (test::ref<Op>::arity == 1) return test::ref<Op>::f(a);
    else return test::ref<Op>::f(a, b);
  }
};

/// Checks every op of Ops... on dtype T through one chain: dense (linear path) and with a broadcast selector and
/// transposed operands (row path: broadcast and gathered chunks on the host, the strided kernel on cuda).
/// Returns the number of rows checked.
template <class B, class T, class... Ops> std::size_t check_chain(tx::detail::type_list<Ops...>) {
  if constexpr (sizeof...(Ops) == 0) {
    return 0;
  } else {
    using table = op_table<T, Ops...>;
    using R = std::conditional_t<(is_predicate<Ops> && ...), bool, T>;
    constexpr tx::index_t m = 37, n = 61;  // odd sizes: vector bodies and tails
    const std::string dtype(tx::dtype_name_v<T>);
    int failures = 0;
    // Both evaluations read rank-2 views, so they share one accessor type (one instantiation of the kernels).
    // Dense: sel, a, b contiguous; element (i, j) uses op (i * n + j) % size, so every op sees many elements.
    tx::tensor<std::int32_t, 2> sel({m, n});
    tx::tensor<T, 2> a({m, n}), b({m, n});
    for (tx::index_t i = 0; i < m * n; ++i) {
      sel.data()[i] = static_cast<std::int32_t>(i % table::size);
      table::draw(sel.data()[i], a.data()[i], b.data()[i]);
    }
    const auto ds = on<B>::up(sel);
    const auto da = on<B>::up(a);
    const auto db = on<B>::up(b);
    using SV = tx::view<const std::int32_t, 2, B>;
    using TV = tx::view<const T, 2, B>;
    const auto got = on<B>::down(chain<0, sizeof...(Ops), SV, TV, TV, Ops...>(ds.view(), da.view(), db.view()));
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(got)>::value_type, R>);
    for (tx::index_t i = 0; i < m * n; ++i) {
      const int k = sel.data()[i];
      const T x = a.data()[i], y = b.data()[i];
      REGCHECK_EXPECT(test::close(got.data()[i], table::reference(k, x, y)),
             "op " + table::name(k) + " dtype " + dtype + " (dense) inputs " + str(test::wide(x)) + ", " + str(test::wide(y)) +
                 ": got " + str(test::wide(got.data()[i])) + ", want " + str(table::reference(k, x, y)),
             failures);
    }
    // Row path: the selector varies by row only (a broadcast operand), a and b are transposed views.
    tx::tensor<std::int32_t, 2> rsel({m, 1});
    tx::tensor<T, 2> at({n, m}), bt({n, m});  // stored transposed: element (i, j) of the view is at(j, i)
    for (tx::index_t i = 0; i < m; ++i) {
      rsel(i, 0) = static_cast<std::int32_t>(i % table::size);
      for (tx::index_t j = 0; j < n; ++j) table::draw(rsel(i, 0), at(j, i), bt(j, i));
    }
    const auto drs = on<B>::up(rsel);
    const auto dat = on<B>::up(at);
    const auto dbt = on<B>::up(bt);
    const TV av(dat.data(), {m, n}, {1, m}), bv(dbt.data(), {m, n}, {1, m});
    const auto got2 = on<B>::down(chain<0, sizeof...(Ops), SV, TV, TV, Ops...>(drs.view(), av, bv));
    REQUIRE(got2.shape() == tx::shape_t<2>{m, n});
    for (tx::index_t i = 0; i < m; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        const int k = rsel(i, 0);
        const T x = at(j, i), y = bt(j, i);
        REGCHECK_EXPECT(test::close(got2(i, j), table::reference(k, x, y)),
               "op " + table::name(k) + " dtype " + dtype + " (rows) inputs " + str(test::wide(x)) + ", " + str(test::wide(y)),
               failures);
      }
    REQUIRE(failures == 0);
    return sizeof...(Ops);
  }
}

// ---- where, cast, copy --------------------------------------------------------------------------------------

template <class B, class T> void check_where() {
  auto c = test::random<bool, 2>({37, 45});
  auto a = test::random<T, 2>({37, 45});
  auto b = test::random<T, 1>({45});
  const auto dc = on<B>::up(c);
  const auto da = on<B>::up(a);
  const auto db = on<B>::up(b);
  const auto got = on<B>::down(tx::where(dc, da, db));
  for (tx::index_t i = 0; i < 37; ++i)
    for (tx::index_t j = 0; j < 45; ++j) REQUIRE(test::wide(got(i, j)) == test::wide(c(i, j) ? a(i, j) : b(j)));
}

template <class From> tx::tensor<From, 1> cast_source(tx::index_t n) {
  tx::tensor<From, 1> src({n});
  for (tx::index_t i = 0; i < n; ++i) src.data()[i] = test::uniform<From>(-300, 300);
  if constexpr (std::is_floating_point_v<From>) {
    src.data()[0] = std::numeric_limits<From>::quiet_NaN();
    src.data()[1] = std::numeric_limits<From>::infinity();
    src.data()[2] = static_cast<From>(-1e30);
    src.data()[3] = static_cast<From>(0.5);
    src.data()[4] = static_cast<From>(-0.0);
  }
  return src;
}

template <int K, class To, class Sel, class S, class... Rest> auto cast_chain(const Sel& sel, const S& s, const Rest&... rest) {
  if constexpr (sizeof...(Rest) == 0) return tx::cast<To>(s);
  else return tx::where(sel == K, tx::cast<To>(s), cast_chain<K + 1, To>(sel, rest...));
}

template <class To, class From> void check_cast_from(const tx::tensor<To, 1>& got, const tx::tensor<From, 1>& src) {
  for (tx::index_t i = 0; i < src.size(); ++i) {
    // integer narrowing wraps (int64 -> int32, any integer -> int8); the reference's saturation is for floats
    const ld want = [&] {
      if constexpr (std::is_same_v<To, std::int8_t> && tx::is_integer_v<From> && !std::is_same_v<From, std::int8_t>)
        return static_cast<ld>(test::wrap<std::int8_t>(static_cast<test::i128>(src(i))));
      else
        return test::convert_ref<To>(test::wide(src(i)));
    }();
    // 8-bit floats round once from any source (tolerance 0); 16-bit floats from double round twice, through float
    const ld tol = std::is_same_v<To, float> ? 1e-7L : (tx::is_float16_v<To> ? test::tolerance<To>() : 0);
    int failures = 0;
    REGCHECK_EXPECT(test::close(got(i), want, 1, tol),
           "cast<" + std::string(tx::dtype_name_v<To>) + "> from " + std::string(tx::dtype_name_v<From>) + " of " + str(test::wide(src(i))), failures);
    REQUIRE(failures == 0);
  }
}
template <class B, class To> void check_cast_each() {
  tx::detail::for_each_type(typename tx::detail::set_list<std::remove_cvref_t<decltype(tx::all_dtypes)>>::type{}, [&]<class From>() {
    const auto src = cast_source<From>(61);
    check_cast_from(on<B>::down(tx::cast<To>(on<B>::up(src))), src);
  });
}

template <class B, class To> void check_cast_chain();

/// cast<To> from every stored dtype, in one chain; checks the semantics (truncation, saturation, NaN to 0,
/// rounding to nearest even for the 16-bit floats).
template <class B, class To> void check_cast() {
  if constexpr (!tx::has_kernel<tx::op::where, To, B>) {
    check_cast_each<B, To>();  // no where to chain with (16-bit floats on the host): one evaluation per source
  } else {
    check_cast_chain<B, To>();
  }
  // The 8-bit types are sources of every cast too (storage types: no where to chain them with).
  tx::detail::for_each_type(typename tx::detail::set_list<std::remove_cvref_t<decltype(tx::eight_bit)>>::type{}, [&]<class From>() {
    const auto src = cast_source<From>(61);
    check_cast_from(on<B>::down(tx::cast<To>(on<B>::up(src))), src);
  });
}
template <class B, class To> void check_cast_chain() {
  constexpr tx::index_t n = 7 * 61;
  tx::tensor<std::int32_t, 1> sel({n});
  for (tx::index_t i = 0; i < n; ++i) sel(i) = static_cast<std::int32_t>((i / 61) % 7);
  auto f32 = cast_source<float>(n);
  auto f64 = cast_source<double>(n);
  auto f16 = cast_source<tx::half>(n);
  auto b16 = cast_source<tx::bfloat16>(n);
  auto i32 = cast_source<std::int32_t>(n);
  auto i64 = cast_source<std::int64_t>(n);
  auto bl = cast_source<bool>(n);
  const auto got = on<B>::down(cast_chain<0, To>(on<B>::up(sel), on<B>::up(f32), on<B>::up(f64), on<B>::up(f16),
                                                 on<B>::up(b16), on<B>::up(i32), on<B>::up(i64), on<B>::up(bl)));
  for (tx::index_t i = 0; i < n; ++i) {
    const int k = sel(i);
    const ld src = k == 0 ? test::wide(f32(i)) : k == 1 ? test::wide(f64(i)) : k == 2 ? test::wide(f16(i))
                 : k == 3 ? test::wide(b16(i)) : k == 4 ? test::wide(i32(i)) : k == 5 ? test::wide(i64(i)) : test::wide(bl(i));
    const ld want = test::convert_ref<To>(src);
    // int64 -> float rounds; double -> 16-bit float rounds twice (through float), so allow the dtype's tolerance
    const ld tol = std::is_same_v<To, float> ? 1e-7L : (tx::is_float16_v<To> ? test::tolerance<To>() : 0);
    int failures = 0;
    REGCHECK_EXPECT(test::close(got(i), want, 1, tol),
           "cast<" + std::string(tx::dtype_name_v<To>) + "> of source " + std::to_string(k) + " value " + str(src), failures);
    REQUIRE(failures == 0);
  }
}

/// copy: a strided (transposed) view assigned to a tensor and a strided destination.
template <class B, class T> void check_copy() {
  auto x = test::random<T, 2>({29, 53});
  auto dx = on<B>::up(x);
  const tx::view<const T, 2, B> xt(dx.data(), {53, 29}, {1, 53});
  tx::tensor<T, 2, B> y = xt;
  const auto got = on<B>::down(y);
  for (tx::index_t i = 0; i < 53; ++i)
    for (tx::index_t j = 0; j < 29; ++j) REQUIRE(test::wide(got(i, j)) == test::wide(x(j, i)));
}

// ---- generators ---------------------------------------------------------------------------------------------

/// arange: 0 .. n - 1, a negative step, and fused with broadcasting against another arange.
template <class B, class T> void check_arange() {
  int failures = 0;
  const std::string dtype(tx::dtype_name_v<T>);
  const auto a = on<B>::down(tx::arange<T, B>(37));
  REQUIRE(a.shape() == tx::shape_t<1>{37});
  for (tx::index_t i = 0; i < 37; ++i) REGCHECK_EXPECT(test::close(a(i), static_cast<ld>(i)), "arange " + dtype + " element " + std::to_string(i), failures);
  const auto b = on<B>::down(tx::arange<T, B>(T(5), T(-7), T(-3)));  // 5, 2, -1, -4
  REQUIRE(b.shape() == tx::shape_t<1>{4});
  for (tx::index_t i = 0; i < 4; ++i) REGCHECK_EXPECT(test::close(b(i), static_cast<ld>(5 - 3 * i)), "arange(5, -7, -3) " + dtype, failures);
  const auto c = on<B>::down(tx::reshape(tx::arange<T, B>(4), {4, 1}) + tx::arange<T, B>(3));
  REQUIRE(c.shape() == tx::shape_t<2>{4, 3});
  for (tx::index_t i = 0; i < 4; ++i)
    for (tx::index_t j = 0; j < 3; ++j) REGCHECK_EXPECT(test::close(c(i, j), static_cast<ld>(i + j)), "arange broadcast " + dtype, failures);
  REQUIRE(failures == 0);
}

// The random generators' references start from the Philox words of an element, with the counter and key laid out
// here as docs/semantics.md states them (counter (i low, i high, stream, 0), key (seed low, seed high); stream 0
// for uniform, 1 for normal); the rest is long double arithmetic.

/// Philox4x32-10's words for element i of a random generator.
inline tx::detail::philox_block random_words(std::uint64_t seed, std::uint32_t stream, tx::index_t i) {
  const auto n = static_cast<std::uint64_t>(i);
  return tx::detail::philox4x32_10({{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(n >> 32), stream, 0}},
                                   {{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}});
}
/// A fraction of `bits` bits in [0, 1) from the top of words (high, low).
inline ld random_fraction(std::uint32_t high, std::uint32_t low, int bits) {
  const std::uint64_t k = ((static_cast<std::uint64_t>(high) << 32) | low) >> (64 - bits);
  return std::ldexp(static_cast<ld>(k), -bits);
}
/// The spacing of T's values in [1, 2).
template <class T> ld epsilon_of() {
  if constexpr (std::is_same_v<T, tx::half>) return std::ldexp(1.0L, -10);
  else if constexpr (std::is_same_v<T, tx::bfloat16>) return std::ldexp(1.0L, -7);
  else return std::numeric_limits<T>::epsilon();
}
/// The largest value of T below x (x > 0 and a value of T).
template <class T> ld largest_below(ld x) {
  int e = 0;
  const ld m = std::frexp(x, &e);  // x = m 2^e, m in [0.5, 1): T's spacing below x is eps 2^(e - 1), halved at a power of 2
  return x - std::ldexp(epsilon_of<T>(), m == 0.5L ? e - 2 : e - 1);
}
/// A long double rounded to T (to float first for the 16-bit floats, as texpr narrows).
template <class T> T from_wide(ld v) {
  if constexpr (tx::is_float16_v<T>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}
template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

/// Sample mean and variance of a host tensor's elements.
template <class T, std::size_t R> std::pair<ld, ld> moments(const tx::tensor<T, R>& t) {
  ld s = 0, s2 = 0;
  for (tx::index_t i = 0; i < t.size(); ++i) s += test::wide(t.data()[i]);
  const ld mean = s / static_cast<ld>(t.size());
  for (tx::index_t i = 0; i < t.size(); ++i) s2 += (test::wide(t.data()[i]) - mean) * (test::wide(t.data()[i]) - mean);
  return {mean, s2 / static_cast<ld>(t.size() - 1)};
}

/// Checks a random generator's fused uses on backend B against its plain evaluation `alone` (seed 7, shape (8, 4)):
/// with a broadcast operand, broadcast itself (shape (8, 1)), sliced and transposed.
template <class B, class T, class Make> void check_random_fused(const Make& make, const std::string& what) {
  int failures = 0;
  const auto alone = on<B>::down(make(tx::shape_t<2>{8, 4}));
  const auto column = on<B>::down(make(tx::shape_t<2>{8, 1}));
  const auto x = test::random<T, 1>({4});
  const auto y = test::random<T, 2>({8, 4});
  const auto dx = on<B>::up(x);
  const auto dy = on<B>::up(y);
  const auto sum = on<B>::down(make(tx::shape_t<2>{8, 4}) + dx);
  const auto spread = on<B>::down(make(tx::shape_t<2>{8, 1}) + dy);       // the generator read with stride 0
  const auto rows = on<B>::down(tx::slice(make(tx::shape_t<2>{8, 4}), 0, 1, 8, 3));  // rows 1, 4, 7
  const auto flipped = on<B>::down(tx::transpose(make(tx::shape_t<2>{8, 4})));
  REQUIRE(rows.shape() == tx::shape_t<2>{3, 4});
  REQUIRE(flipped.shape() == tx::shape_t<2>{4, 8});
  for (tx::index_t i = 0; i < 8; ++i)
    for (tx::index_t j = 0; j < 4; ++j) {
      const ld a = test::wide(alone(i, j));
      REGCHECK_EXPECT(test::close(sum(i, j), a + test::wide(x(j))), what + " + broadcast operand", failures);
      REGCHECK_EXPECT(test::close(spread(i, j), test::wide(column(i, 0)) + test::wide(y(i, j))), what + " broadcast along axis 1", failures);
      REGCHECK_EXPECT(same_bits(flipped(j, i), alone(i, j)), what + " transposed", failures);
      if (i % 3 == 1) REGCHECK_EXPECT(same_bits(rows(i / 3, j), alone(i, j)), what + " sliced", failures);
    }
  REQUIRE(failures == 0);
}

/// uniform: element values against the reference from Philox's words (exact for float and double where the double
/// computation is exact), the range [lo, hi) with values that round up to hi clamped below it, moments and buckets
/// of 4096 draws, two seeds (differing in the low or the high half) giving different draws, the host giving the same
/// bits for the same seed, and fused uses.
template <class B, class T> void check_uniform() {
  const std::string dtype(tx::dtype_name_v<T>);
  constexpr bool wide_dtype = std::is_same_v<T, float> || std::is_same_v<T, double>;
  constexpr int bits = std::is_same_v<T, double> ? 53 : 24;
  const tx::shape_t<2> shape{64, 64};
  const tx::index_t n = 64 * 64;
  const std::uint64_t seed = 0x243f6a8885a308d3u;
  const ld eps = epsilon_of<T>();
  struct range {
    ld lo, hi;
    bool exact;  // float and double match the reference exactly
  };
  // [0, 1); a power-of-two width; a width of 4.75 (exact in double for float's 24 bits); a width of 8 ulp at 1, so
  // that about a 16th of the draws round up to hi and must be clamped to the value below it.
  const range ranges[] = {{0, 1, true}, {-2, 2, true}, {-1.5L, 3.25L, !std::is_same_v<T, double>}, {1, 1 + 8 * eps, false}};
  int failures = 0;
  for (int r = 0; r < 4; ++r) {
    const T lo = from_wide<T>(ranges[r].lo), hi = from_wide<T>(ranges[r].hi);
    const ld below_hi = largest_below<T>(ranges[r].hi);
    const std::string what = "uniform " + dtype + " [" + str(ranges[r].lo) + ", " + str(ranges[r].hi) + ")";
    const auto got = r == 0 ? on<B>::down(tx::random::uniform<T, B>(shape, seed))  // the default range
                            : on<B>::down(tx::random::uniform<T, B>(shape, seed, lo, hi));
    REQUIRE(got.shape() == shape);
    ld top = ranges[r].lo;
    for (tx::index_t i = 0; i < n; ++i) {
      const auto w = random_words(seed, 0, i);
      const ld u = bits == 24 ? random_fraction(w.w[0], 0, 24) : random_fraction(w.w[1], w.w[0], 53);  // word 0; words 1 over 0
      // The exact value (in long double) rounded once to T; one that rounds to hi is clamped below it.
      ld want = test::wide(from_wide<T>(ranges[r].lo + (ranges[r].hi - ranges[r].lo) * u));
      if (want >= ranges[r].hi) want = below_hi;
      const ld v = test::wide(got.data()[i]);
      top = std::max(top, v);
      REGCHECK_EXPECT(v >= ranges[r].lo && v < ranges[r].hi, what + ": element " + std::to_string(i) + " = " + str(v) + " out of range", failures);
      const ld ulp = eps * std::max(std::fabs(ranges[r].lo), std::fabs(ranges[r].hi));
      const bool ok = wide_dtype && ranges[r].exact ? v == want : std::fabs(v - want) <= ulp;
      REGCHECK_EXPECT(ok, what + ": element " + std::to_string(i) + " = " + str(v) + ", want " + str(want), failures);
    }
    if (r == 3) REGCHECK_EXPECT(top == below_hi, what + ": no value rounded up to hi was clamped below it", failures);
    // The host evaluates the same bits: 16-bit floats, which the host has only as storage, as float (the same
    // double rounded to float), rounded to T here and clamped below hi as the generator does. (Rounded here, not by
    // a host tx::cast: host elementwise kernels do not compile in nvcc's device pass.)
    using H = std::conditional_t<wide_dtype, T, float>;
    const auto host = tx::eval(tx::random::uniform<H, tx::host>(shape, seed, static_cast<H>(lo), static_cast<H>(hi)));
    for (tx::index_t i = 0; i < n; ++i) {
      T h = T(host.data()[i]);
      if (test::wide(h) >= ranges[r].hi) h = from_wide<T>(below_hi);
      REGCHECK_EXPECT(same_bits(got.data()[i], h),
             what + ": host and " + std::string(B::name) + " differ at element " + std::to_string(i), failures);
    }
  }
  // Statistics of [-2, 2): mean 0, variance 16 / 12, 16 buckets of 256 expected draws each (bounds about 5 sigma).
  const auto a = on<B>::down(tx::random::uniform<T, B>(shape, seed, T(-2), T(2)));
  const auto [mean, var] = moments(a);
  REGCHECK_EXPECT(std::fabs(mean) < 0.1L, "uniform " + dtype + " mean " + str(mean), failures);
  REGCHECK_EXPECT(std::fabs(var / (16.0L / 12) - 1) < 0.1L, "uniform " + dtype + " variance " + str(var), failures);
  int buckets[16] = {};
  std::vector<ld> values;
  for (tx::index_t i = 0; i < n; ++i) {
    const ld v = test::wide(a.data()[i]);
    ++buckets[std::clamp(static_cast<int>(std::floor((v + 2) * 4)), 0, 15)];
    values.push_back(v);
  }
  for (int k = 0; k < 16; ++k)
    REGCHECK_EXPECT(buckets[k] > 192 && buckets[k] < 320,
           "uniform " + dtype + " bucket " + std::to_string(k) + " holds " + std::to_string(buckets[k]), failures);
  std::sort(values.begin(), values.end());
  const auto distinct = std::unique(values.begin(), values.end()) - values.begin();
  REGCHECK_EXPECT(distinct >= 256, "uniform " + dtype + ": only " + std::to_string(distinct) + " distinct values", failures);
  for (const std::uint64_t other : {seed + 1, seed ^ (std::uint64_t(1) << 40)}) {
    const auto b = on<B>::down(tx::random::uniform<T, B>(shape, other, T(-2), T(2)));
    tx::index_t equal = 0;
    for (tx::index_t i = 0; i < n; ++i) equal += same_bits(a.data()[i], b.data()[i]);
    REGCHECK_EXPECT(equal < n / 8,
           "uniform " + dtype + ": seeds " + std::to_string(seed) + " and " + std::to_string(other) + " agree in " +
               std::to_string(equal) + " elements",
           failures);
  }
  REQUIRE(failures == 0);
  check_random_fused<B, T>([](const tx::shape_t<2>& s) { return tx::random::uniform<T, B>(s, 7); }, "uniform " + dtype);
}

/// normal: element values against a long double Box-Muller reference from Philox's words (within the dtype's
/// tolerance: the generator computes in double with libm or CUDA's log and cos), the range (at most 8.6 stddev
/// from the mean: u1 >= 2^-53), moments and the share within one stddev of 4096 draws, two seeds giving
/// different draws, the host giving the same values (float and 16-bit floats: equal but for at most 2 elements
/// 1 ulp apart; double: within 8 ulp of stddev * z), and fused uses.
template <class B, class T> void check_normal() {
  const std::string dtype(tx::dtype_name_v<T>);
  const tx::shape_t<2> shape{64, 64};
  const tx::index_t n = 64 * 64;
  const std::uint64_t seed = 0x13198a2e03707344u;
  const ld eps = epsilon_of<T>();
  const ld two_pi = 6.283185307179586476925286766559L;
  const std::pair<ld, ld> params[] = {{0, 1}, {0.5L, 2}};
  int failures = 0;
  for (const auto& [mu_, sigma_] : params) {
    const ld mu = mu_, sigma = sigma_;  // named: clang 14 does not capture structured bindings in lambdas
    const std::string what = "normal " + dtype + " (" + str(mu) + ", " + str(sigma) + ")";
    const auto got = mu == 0 ? on<B>::down(tx::random::normal<T, B>(shape, seed))
                             : on<B>::down(tx::random::normal<T, B>(shape, seed, from_wide<T>(mu), from_wide<T>(sigma)));
    REQUIRE(got.shape() == shape);
    tx::index_t within_one = 0, positive = 0;
    for (tx::index_t i = 0; i < n; ++i) {
      const auto w = random_words(seed, 1, i);
      const ld u1 = random_fraction(w.w[1], w.w[0], 53) + std::ldexp(1.0L, -53), u2 = random_fraction(w.w[3], w.w[2], 53);
      const ld want = mu + sigma * std::sqrt(-2 * std::log(u1)) * std::cos(two_pi * u2);
      const ld v = test::wide(got.data()[i]);
      REGCHECK_EXPECT(test::close(got.data()[i], want, std::fabs(mu) + sigma),
             what + ": element " + std::to_string(i) + " = " + str(v) + ", want " + str(want), failures);
      REGCHECK_EXPECT(std::isfinite(v) && std::fabs(v - mu) <= 8.58L * sigma + eps * (std::fabs(mu) + 9 * sigma),
             what + ": element " + std::to_string(i) + " = " + str(v) + " out of range", failures);
      within_one += std::fabs(v - mu) < sigma;
      positive += v > mu;
    }
    // Bounds about 5 standard errors of each statistic over 4096 draws.
    const auto [mean, var] = moments(got);
    REGCHECK_EXPECT(std::fabs(mean - mu) < 0.08L * sigma, what + " mean " + str(mean), failures);
    REGCHECK_EXPECT(std::fabs(var / (sigma * sigma) - 1) < 0.12L, what + " variance " + str(var), failures);
    REGCHECK_EXPECT(std::fabs(static_cast<ld>(within_one) / n - 0.682689L) < 0.04L,
           what + ": " + std::to_string(within_one) + " within one stddev", failures);
    REGCHECK_EXPECT(std::fabs(static_cast<ld>(positive) / n - 0.5L) < 0.04L, what + ": " + std::to_string(positive) + " above the mean", failures);
    // The host: the same double, but libm's log and cos instead of CUDA's (bit-equal on the host itself); 16-bit
    // floats as float, rounded to T here.
    using H = std::conditional_t<tx::is_float16_v<T>, float, T>;
    const auto host = tx::eval(tx::random::normal<H, tx::host>(shape, seed, from_wide<H>(mu), from_wide<H>(sigma)));
    tx::index_t differ = 0;
    for (tx::index_t i = 0; i < n; ++i) {
      const T hv = T(host.data()[i]);
      const ld g = test::wide(got.data()[i]), h = test::wide(hv);
      differ += !same_bits(got.data()[i], hv);
      const ld tol = std::is_same_v<B, tx::host> ? 0
                   : std::is_same_v<T, double> ? 8 * eps * (std::fabs(h - mu) + std::fabs(h))
                                               : eps * std::max<ld>(std::fabs(h), 1);
      REGCHECK_EXPECT(std::fabs(g - h) <= tol,
             what + ": host and " + std::string(B::name) + " differ at element " + std::to_string(i) + ": " + str(g) +
                 " vs " + str(h),
             failures);
    }
    if constexpr (!std::is_same_v<T, double>)
      REGCHECK_EXPECT(differ <= 2, what + ": host and " + std::string(B::name) + " differ in " + std::to_string(differ) + " elements",
             failures);
    const auto other = on<B>::down(tx::random::normal<T, B>(shape, seed + 1, from_wide<T>(mu), from_wide<T>(sigma)));
    tx::index_t equal = 0;
    for (tx::index_t i = 0; i < n; ++i) equal += same_bits(got.data()[i], other.data()[i]);
    REGCHECK_EXPECT(equal < n / 8,
           what + ": seeds " + std::to_string(seed) + " and " + std::to_string(seed + 1) + " agree in " +
               std::to_string(equal) + " elements",
           failures);
  }
  REQUIRE(failures == 0);
  check_random_fused<B, T>([](const tx::shape_t<2>& s) { return tx::random::normal<T, B>(s, 7, T(1), T(3)); }, "normal " + dtype);
}

/// pick (cross_entropy's label logits): z[i, l[i]] exactly, over contiguous and transposed logits, int64 and int32
/// labels at the first and last class, NaN for labels outside [0, classes), alone and fused into an expression.
template <class B, class T> void check_pick() {
  int failures = 0;
  const std::string dtype(tx::dtype_name_v<T>);
  auto z = test::random<T, 2>({6, 7}, -4, 4);
  tx::tensor<std::int64_t, 1> l64({6}, {0, 6, 3, -1, 7, 6});
  tx::tensor<std::int32_t, 1> l32({6}, {6, 0, 2, 5, -7, 1});
  auto dz = on<B>::up(z);
  auto dzt = on<B>::up(tx::tensor<T, 2>(tx::transpose(z)));  // (7, 6)
  auto d64 = on<B>::up(l64);
  auto d32 = on<B>::up(l32);
  const tx::view<const T, 2, B> zv = std::as_const(dz).view();
  const auto t = std::as_const(dzt).view();  // z transposed back as a view of strides (1, 6)
  const tx::view<const T, 2, B> ztv(tx::detail::unchecked_t{}, t.data(), tx::shape_t<2>{6, 7}, tx::shape_t<2>{1, 6}, t.stream());
  const auto check = [&](const auto& got, const auto& labels, ld scale, ld offset, const std::string& what) {
    REQUIRE(got.shape() == tx::shape_t<1>{6});
    for (tx::index_t i = 0; i < 6; ++i) {
      const auto k = static_cast<tx::index_t>(labels(i));
      if (k < 0 || k >= 7) REGCHECK_EXPECT(std::isnan(static_cast<double>(test::wide(got(i)))), what + " " + dtype + ": label out of range not NaN", failures);
      else REGCHECK_EXPECT(test::close(got(i), scale * test::wide(z(i, k)) + offset), what + " " + dtype + " row " + std::to_string(i), failures);
    }
  };
  check(on<B>::down(tx::detail::pick(zv, std::as_const(d64).view())), l64, 1, 0, "pick int64");
  check(on<B>::down(tx::detail::pick(zv, std::as_const(d32).view())), l32, 1, 0, "pick int32");
  check(on<B>::down(tx::detail::pick(ztv, std::as_const(d64).view())), l64, 1, 0, "pick of a transposed view");
  check(on<B>::down(tx::detail::pick(zv, std::as_const(d32).view()) * 2 + 1), l32, 2, 1, "pick fused");
  REQUIRE(failures == 0);
}

/// dropout_mask: element i is 1 / (1 - p) (rounded to T) exactly where the reference 53-bit fraction of
/// uniform's Philox words is >= p, else 0; p = 0 keeps everything; the kept fraction of 2048 elements is within
/// 0.05 of 1 - p (over 5 standard deviations); fused uses as for uniform.
template <class B, class T> void check_dropout_mask() {
  int failures = 0;
  const std::string dtype(tx::dtype_name_v<T>);
  const auto make = [](const tx::shape_t<2>& s, double p, std::uint64_t seed) {
    using S = tx::op::dropout_mask::source<T>;
    const S src{tx::detail::philox_seed(seed), p, tx::detail::narrow<T>(1.0 / (1.0 - p)), tx::detail::narrow<T>(0.0)};
    return tx::generator_expr<tx::op::dropout_mask, T, 2, B>(src, s);
  };
  const tx::shape_t<2> shape{64, 32};
  for (const double p : {0.0, 0.25, 0.9}) {
    const std::uint64_t seed = 0x5eedULL + static_cast<std::uint64_t>(p * 100);
    const auto got = on<B>::down(make(shape, p, seed));
    const T kept = from_wide<T>(1.0L / (1.0L - static_cast<ld>(p)));
    tx::index_t count = 0;
    for (tx::index_t i = 0; i < got.size(); ++i) {
      const auto w = random_words(seed, 0, i);
      const bool keep = random_fraction(w.w[1], w.w[0], 53) >= static_cast<ld>(p);
      count += keep;
      REGCHECK_EXPECT(same_bits(got.data()[i], keep ? kept : from_wide<T>(0)),
             "dropout_mask " + dtype + " p " + str(p) + " element " + std::to_string(i), failures);
    }
    const ld fraction = static_cast<ld>(count) / static_cast<ld>(got.size());
    REGCHECK_EXPECT(std::fabs(fraction - (1 - static_cast<ld>(p))) < 0.05L, "dropout_mask " + dtype + " p " + str(p) + " keeps " + str(fraction), failures);
  }
  REQUIRE(failures == 0);
  check_random_fused<B, T>([&](const tx::shape_t<2>& s) { return make(s, 0.5, 7); }, "dropout_mask " + dtype);
}

/// indexed_read and indexed_sum (the indexing composites' passes) over contiguous memory, one index per position
/// and one per element, int64 and int32, alone and fused, against loops: reads exact, sums within tolerance.
template <class B, class Op, class T> void check_indexed_pass() {
  int failures = 0;
  const std::string what = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>);
  const double r = test::is_int<T> ? 100 : 4;
  // x as (outer 3, extent 4, inner 5); a result of 6 positions.
  auto x = test::random<T, 3>({3, 4, 5}, -r, r);
  tx::tensor<std::int64_t, 1> rows({6}, {3, 0, 3, 1, 2, 0});
  tx::tensor<std::int32_t, 3> each({3, 6, 5});
  for (tx::index_t i = 0; i < each.size(); ++i) each.data()[i] = static_cast<std::int32_t>((i * 7 + i / 5) % 4);
  auto dx = on<B>::up(x);
  auto dr = on<B>::up(rows);
  auto de = on<B>::up(each);
  const auto xv = std::as_const(dx).view();
  if constexpr (std::is_same_v<Op, tx::op::indexed_read>) {
    const tx::shape_t<3> s{3, 6, 5};
    const auto a = on<B>::down(tx::detail::indexed_read_of(xv, std::as_const(dr).view(), false, 6, 4, 5, s));
    const auto b = on<B>::down(tx::detail::indexed_read_of(xv, std::as_const(de).view(), true, 6, 4, 5, s) * 2);
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t p = 0; p < 6; ++p)
        for (tx::index_t k = 0; k < 5; ++k) {
          REGCHECK_EXPECT(test::wide(a(o, p, k)) == test::wide(x(o, rows(p), k)), what + " per position", failures);
          REGCHECK_EXPECT(test::wide(b(o, p, k)) == 2 * test::wide(x(o, each(o, p, k), k)), what + " per element, fused", failures);
        }
  } else {
    // g = x as (outer 3, positions 4, inner 5) summed into an extent of 6 (an index of 5 hits nothing).
    tx::tensor<std::int64_t, 1> to({4}, {2, 0, 2, 5});
    tx::tensor<std::int32_t, 3> to_each({3, 4, 5});
    for (tx::index_t i = 0; i < to_each.size(); ++i) to_each.data()[i] = static_cast<std::int32_t>((i * 5 + i / 3) % 6);
    auto dt = on<B>::up(to);
    auto dte = on<B>::up(to_each);
    const tx::shape_t<3> s{3, 6, 5};
    const auto a = on<B>::down(tx::detail::indexed_sum_of(xv, std::as_const(dt).view(), false, 4, 6, 5, s));
    const auto b = on<B>::down(tx::detail::indexed_sum_of(xv, std::as_const(dte).view(), true, 4, 6, 5, s) * 2);
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t j = 0; j < 6; ++j)
        for (tx::index_t k = 0; k < 5; ++k) {
          ld wa = 0, wb = 0;
          for (tx::index_t p = 0; p < 4; ++p) {
            if (to(p) == j) wa += test::wide(x(o, p, k));
            if (to_each(o, p, k) == j) wb += 2 * test::wide(x(o, p, k));
          }
          REGCHECK_EXPECT(test::close(a(o, j, k), wa, 4), what + " per position: got " + str(test::wide(a(o, j, k))) + " want " + str(wa), failures);
          REGCHECK_EXPECT(test::close(b(o, j, k), wb, 8), what + " per element, fused", failures);
        }
  }
  REQUIRE(failures == 0);
}

/// The generator rows: each op's own check.
template <class B, class Op, class T> void check_generator() {
  if constexpr (std::is_same_v<Op, tx::op::pick>) check_pick<B, T>();
  else if constexpr (std::is_same_v<Op, tx::op::indexed_read> || std::is_same_v<Op, tx::op::indexed_sum>) check_indexed_pass<B, Op, T>();
  else if constexpr (std::is_same_v<Op, tx::op::arange>) check_arange<B, T>();
  else if constexpr (std::is_same_v<Op, tx::op::uniform>) check_uniform<B, T>();
  else if constexpr (std::is_same_v<Op, tx::op::dropout_mask>) check_dropout_mask<B, T>();
  else if constexpr (std::is_same_v<Op, tx::op::normal>) check_normal<B, T>();
  else static_assert(tx::detail::always_false_v<Op>, "a generator op without a registry check");
}

// ---- layouts ------------------------------------------------------------------------------------------------

/// Every layout op on a rank-3 input, compared with index arithmetic: element for element, no arithmetic.
template <class B, class Op, class T> void check_layout() {
  constexpr tx::index_t d0 = 3, d1 = 5, d2 = 7;
  auto x = test::random<T, 3>({d0, d1, d2});
  auto dx = on<B>::up(x);
  const tx::view<const T, 3, B> v = std::as_const(dx).view();
  auto same = [](auto got, auto want) { REQUIRE(test::wide(got) == test::wide(want)); };
  if constexpr (std::is_same_v<Op, tx::op::transpose>) {
    const auto g = on<B>::down(tx::transpose(v));
    REQUIRE(g.shape() == tx::shape_t<3>{d0, d2, d1});
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t j = 0; j < d2; ++j)
        for (tx::index_t k = 0; k < d1; ++k) same(g(i, j, k), x(i, k, j));
  } else if constexpr (std::is_same_v<Op, tx::op::permute>) {
    const auto g = on<B>::down(tx::permute(v, {2, 0, 1}));
    REQUIRE(g.shape() == tx::shape_t<3>{d2, d0, d1});
    for (tx::index_t i = 0; i < d2; ++i)
      for (tx::index_t j = 0; j < d0; ++j)
        for (tx::index_t k = 0; k < d1; ++k) same(g(i, j, k), x(j, k, i));
  } else if constexpr (std::is_same_v<Op, tx::op::reshape>) {
    const auto g = on<B>::down(tx::reshape(v, {d0 * d1, -1}));
    REQUIRE(g.shape() == tx::shape_t<2>{d0 * d1, d2});
    for (tx::index_t i = 0; i < g.size(); ++i) same(g.data()[i], x.data()[i]);
    // A transposed operand is not contiguous: reshape copies it first.
    const auto t = on<B>::down(tx::reshape(tx::transpose(v), {-1}));
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t j = 0; j < d2; ++j)
        for (tx::index_t k = 0; k < d1; ++k) same(t((i * d2 + j) * d1 + k), x(i, k, j));
  } else if constexpr (std::is_same_v<Op, tx::op::slice>) {
    const auto g = on<B>::down(tx::slice(v, 1, 1, 5, 2));
    REQUIRE(g.shape() == tx::shape_t<3>{d0, 2, d2});
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t j = 0; j < 2; ++j)
        for (tx::index_t k = 0; k < d2; ++k) same(g(i, j, k), x(i, 1 + 2 * j, k));
    const auto r = on<B>::down(tx::slice(v, -1, -1, -100, -3));  // reversed, negative step
    REQUIRE(r.shape() == tx::shape_t<3>{d0, d1, 3});
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t j = 0; j < d1; ++j)
        for (tx::index_t k = 0; k < 3; ++k) same(r(i, j, k), x(i, j, d2 - 1 - 3 * k));
  } else if constexpr (std::is_same_v<Op, tx::op::unsqueeze>) {
    const auto g = on<B>::down(tx::unsqueeze(v, -2));
    REQUIRE(g.shape() == tx::shape_t<4>{d0, d1, 1, d2});
    for (tx::index_t i = 0; i < g.size(); ++i) same(g.data()[i], x.data()[i]);
  } else if constexpr (std::is_same_v<Op, tx::op::squeeze>) {
    const auto g = on<B>::down(tx::squeeze(tx::slice(v, 1, 2, 3), 1));
    REQUIRE(g.shape() == tx::shape_t<2>{d0, d2});
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t k = 0; k < d2; ++k) same(g(i, k), x(i, 2, k));
  } else if constexpr (std::is_same_v<Op, tx::op::diagonal>) {
    const auto g = on<B>::down(tx::diagonal(tx::slice(v, 1, 0, d0), 0, 1));  // axes 0 and 1, both of extent d0
    REQUIRE(g.shape() == tx::shape_t<2>{d2, d0});
    for (tx::index_t k = 0; k < d2; ++k)
      for (tx::index_t i = 0; i < d0; ++i) same(g(k, i), x(i, i, k));
    const auto h = on<B>::down(tx::diagonal(tx::slice(v, 2, 1, 1 + d1), 2, -2));  // (d0, d1, d1): axes 2 and 1
    REQUIRE(h.shape() == tx::shape_t<2>{d0, d1});
    for (tx::index_t i = 0; i < d0; ++i)
      for (tx::index_t j = 0; j < d1; ++j) same(h(i, j), x(i, j, 1 + j));
  } else if constexpr (std::is_same_v<Op, tx::op::broadcast_to>) {
    const auto g = on<B>::down(tx::broadcast_to(tx::slice(v, 1, 0, 1), {2, d0, 4, d2}));
    REQUIRE(g.shape() == tx::shape_t<4>{2, d0, 4, d2});
    for (tx::index_t q = 0; q < 2; ++q)
      for (tx::index_t i = 0; i < d0; ++i)
        for (tx::index_t j = 0; j < 4; ++j)
          for (tx::index_t k = 0; k < d2; ++k) same(g(q, i, j, k), x(i, 0, k));
  } else {
    static_assert(tx::detail::always_false_v<Op>, "a layout op without a registry check");
  }
}

// ---- concat ---------------------------------------------------------------------------------------------------

/// concat along each axis (given negative) of rank-3 operands: memory, an empty operand and a view, element for
/// element against index arithmetic; then strided operands into a slice of a larger tensor.
template <class B, class T> void check_concat() {
  const double r = test::is_int<T> ? 100 : 2;
  auto a = test::random<T, 3>({2, 3, 4}, -r, r);
  auto da = on<B>::up(a);
  for (int axis = 0; axis < 3; ++axis) {
    // b: a's shape with extent 1 on `axis`; c: extent 0; d: extent 2, read through a double transpose (a view).
    tx::shape_t<3> sb = a.shape(), sc = a.shape(), sd = a.shape();
    sb[axis] = 1;
    sc[axis] = 0;
    sd[axis] = 2;
    auto b = test::random<T, 3>(sb, -r, r);
    auto d = test::random<T, 3>(sd, -r, r);
    auto db = on<B>::up(b);
    auto dc = on<B>::up(tx::tensor<T, 3>(sc));
    auto dd = on<B>::up(d);
    const auto got = on<B>::down(tx::concat(axis - 3, da, db, dc, tx::transpose(tx::transpose(dd))));
    tx::shape_t<3> want_shape = a.shape();
    want_shape[axis] = a.shape()[axis] + 1 + 0 + 2;
    REQUIRE(got.shape() == want_shape);
    int failures = 0;
    for (tx::index_t i = 0; i < got.shape()[0]; ++i)
      for (tx::index_t j = 0; j < got.shape()[1]; ++j)
        for (tx::index_t k = 0; k < got.shape()[2]; ++k) {
          std::array<tx::index_t, 3> idx{i, j, k};
          tx::index_t& at = idx[static_cast<std::size_t>(axis)];
          const tx::index_t na = a.shape()[axis];
          T want;
          if (at < na) {
            want = a(idx[0], idx[1], idx[2]);
          } else if (at < na + 1) {
            at -= na;
            want = b(idx[0], idx[1], idx[2]);
          } else {
            at -= na + 1;
            want = d(idx[0], idx[1], idx[2]);
          }
          REGCHECK_EXPECT(test::wide(got(i, j, k)) == test::wide(want), "concat " + std::string(tx::dtype_name_v<T>) + " axis " + std::to_string(axis), failures);
        }
    REQUIRE(failures == 0);
  }
  // Strided operands and a strided destination: concat(transpose(x), y) along axis 1 into columns 1..8 of o.
  auto x = test::random<T, 2>({3, 2}, -r, r);
  auto y = test::random<T, 2>({2, 5}, -r, r);
  auto z = test::random<T, 2>({2, 9}, -r, r);
  auto dx = on<B>::up(x);
  auto dy = on<B>::up(y);
  auto out = on<B>::up(z);
  tx::slice(out, 1, 1, 9) = tx::concat(1, tx::transpose(dx), dy);
  const auto o = on<B>::down(out);
  int failures = 0;
  for (tx::index_t i = 0; i < 2; ++i) {
    REGCHECK_EXPECT(test::wide(o(i, 0)) == test::wide(z(i, 0)), "concat into a slice: column 0 untouched", failures);
    for (tx::index_t j = 0; j < 3; ++j) REGCHECK_EXPECT(test::wide(o(i, 1 + j)) == test::wide(x(j, i)), "concat of a transpose", failures);
    for (tx::index_t j = 0; j < 5; ++j) REGCHECK_EXPECT(test::wide(o(i, 4 + j)) == test::wide(y(i, j)), "concat second operand", failures);
  }
  REQUIRE(failures == 0);
}

// ---- indexing -------------------------------------------------------------------------------------------------

/// index_select, gather and embedding of an expression (x * 2, evaluated once) and of a transposed view, int64 and
/// int32 indices with repeats and both ends, exactly against index loops; index_add and scatter_add (their
/// gradients) against long double sums.
template <class B, class Op, class T> void check_indexing() {
  int failures = 0;
  const std::string what = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>);
  const double r = test::is_int<T> ? 100 : 4;
  auto x = test::random<T, 3>({3, 4, 5}, -r, r);
  auto dx = on<B>::up(x);
  const auto same = [&](auto got, ld want, const std::string& where) {
    REGCHECK_EXPECT(test::wide(got) == want, what + " " + where + ": got " + str(test::wide(got)) + " want " + str(want), failures);
  };
  if constexpr (std::is_same_v<Op, tx::op::index_select>) {
    tx::tensor<std::int64_t, 1> i64({6}, {3, 0, 3, 1, 2, 0});
    tx::tensor<std::int32_t, 1> i32({3}, {4, 4, 0});
    auto d64 = on<B>::up(i64);
    auto d32 = on<B>::up(i32);
    const auto a = on<B>::down(tx::index_select(dx * 2, 1, d64));
    REQUIRE(a.shape() == tx::shape_t<3>{3, 6, 5});
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t p = 0; p < 6; ++p)
        for (tx::index_t k = 0; k < 5; ++k) same(a(o, p, k), 2 * test::wide(x(o, i64(p), k)), "axis 1");
    const auto b = on<B>::down(tx::index_select(tx::transpose(dx), -2, d32));  // (3, 5, 4) read through strides
    REQUIRE(b.shape() == tx::shape_t<3>{3, 3, 4});
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t p = 0; p < 3; ++p)
        for (tx::index_t k = 0; k < 4; ++k) same(b(o, p, k), test::wide(x(o, k, i32(p))), "of a transpose");
  } else if constexpr (std::is_same_v<Op, tx::op::gather>) {
    tx::tensor<std::int32_t, 3> i32({3, 7, 5});
    for (tx::index_t i = 0; i < i32.size(); ++i) i32.data()[i] = static_cast<std::int32_t>((i * 3 + i / 7) % 4);
    tx::tensor<std::int64_t, 3> i64({2, 4, 5});
    for (tx::index_t i = 0; i < i64.size(); ++i) i64.data()[i] = (i * 5 + 1) % 3;
    auto d32 = on<B>::up(i32);
    auto d64 = on<B>::up(i64);
    const auto a = on<B>::down(tx::gather(dx * 2, 1, d32));
    REQUIRE(a.shape() == tx::shape_t<3>{3, 7, 5});
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t p = 0; p < 7; ++p)
        for (tx::index_t k = 0; k < 5; ++k) same(a(o, p, k), 2 * test::wide(x(o, i32(o, p, k), k)), "axis 1");
    const auto b = on<B>::down(tx::gather(dx, -3, d64));
    REQUIRE(b.shape() == tx::shape_t<3>{2, 4, 5});
    for (tx::index_t p = 0; p < 2; ++p)
      for (tx::index_t j = 0; j < 4; ++j)
        for (tx::index_t k = 0; k < 5; ++k) same(b(p, j, k), test::wide(x(i64(p, j, k), j, k)), "axis 0");
  } else if constexpr (std::is_same_v<Op, tx::op::embedding>) {
    auto w = test::random<T, 2>({6, 5}, -r, r);
    auto dw = on<B>::up(w);
    tx::tensor<std::int64_t, 2> i64({2, 3}, {5, 0, 2, 2, 1, 5});
    tx::tensor<std::int32_t, 1> i32({4}, {0, 3, 3, 5});
    auto d64 = on<B>::up(i64);
    auto d32 = on<B>::up(i32);
    const auto a = on<B>::down(tx::embedding(d64, dw * 2));
    REQUIRE(a.shape() == tx::shape_t<3>{2, 3, 5});
    for (tx::index_t i = 0; i < 2; ++i)
      for (tx::index_t j = 0; j < 3; ++j)
        for (tx::index_t d = 0; d < 5; ++d) same(a(i, j, d), 2 * test::wide(w(i64(i, j), d)), "rank-2 indices");
    const auto b = on<B>::down(tx::embedding(d32, tx::transpose(tx::transpose(dw))));
    REQUIRE(b.shape() == tx::shape_t<2>{4, 5});
    for (tx::index_t i = 0; i < 4; ++i)
      for (tx::index_t d = 0; d < 5; ++d) same(b(i, d), test::wide(w(i32(i), d)), "rank-1 indices");
  } else {
    // g = x * 2 (positions along axis 1: 4) summed into an extent of 6.
    constexpr bool per_element = std::is_same_v<Op, tx::op::scatter_add>;
    tx::tensor<std::int64_t, 1> rows({4}, {2, 0, 2, 5});
    tx::tensor<std::int32_t, 3> each({3, 4, 5});
    for (tx::index_t i = 0; i < each.size(); ++i) each.data()[i] = static_cast<std::int32_t>((i * 5 + i / 3) % 6);
    auto dr = on<B>::up(rows);
    auto de = on<B>::up(each);
    const auto got = [&] {
      if constexpr (per_element) return on<B>::down(tx::detail::scatter_add(1, 6, dx * 2, de));
      else return on<B>::down(tx::detail::index_add(1, 6, dx * 2, dr));
    }();
    REQUIRE(got.shape() == tx::shape_t<3>{3, 6, 5});
    for (tx::index_t o = 0; o < 3; ++o)
      for (tx::index_t j = 0; j < 6; ++j)
        for (tx::index_t k = 0; k < 5; ++k) {
          ld want = 0;
          for (tx::index_t p = 0; p < 4; ++p)
            if ((per_element ? tx::index_t{each(o, p, k)} : rows(p)) == j) want += 2 * test::wide(x(o, p, k));
          REGCHECK_EXPECT(test::close(got(o, j, k), want, 8), what + ": got " + str(test::wide(got(o, j, k))) + " want " + str(want), failures);
        }
  }
  REQUIRE(failures == 0);
}

// ---- composites -----------------------------------------------------------------------------------------------

/// softmax / log_softmax along each axis of a rank-3 operand read through an expression (x * 2, evaluated once),
/// and cross_entropy against int64 labels, all against long double loops; the expansion's own rows are on B.
template <class B, class Op, class T> void check_composite() {
  int failures = 0;
  const std::string what = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>);
  if constexpr (std::is_same_v<Op, tx::op::cross_entropy>) {
    auto z = test::random<T, 2>({9, 7}, -4, 4);
    tx::tensor<std::int64_t, 1> l({9});
    for (tx::index_t i = 0; i < 9; ++i) l(i) = (i * 5 + 2) % 7;
    auto dz = on<B>::up(z);
    auto dl = on<B>::up(l);
    auto keep_as_is = [](const auto& e) { return e; };  // the expansion's graph without materialising
    static_assert(tx::runs_on<decltype(tx::composite_expr<Op, 0, tx::view<const T, 2, B>, tx::view<const std::int64_t, 1, B>>(
                                           1, {}, std::as_const(dz).view(), std::as_const(dl).view())
                                           .expand(keep_as_is, std::as_const(dz).view(), std::as_const(dl).view())),
                                B>,
                  "the expansion runs where the row says");
    const auto got = on<B>::down(tx::reshape(tx::cross_entropy(dz * 2, dl), {1}));
    ld want = 0;
    for (tx::index_t i = 0; i < 9; ++i) {
      ld m = -INFINITY, s = 0;
      for (tx::index_t j = 0; j < 7; ++j) m = std::max(m, 2 * test::wide(z(i, j)));
      for (tx::index_t j = 0; j < 7; ++j) s += std::exp(2 * test::wide(z(i, j)) - m);
      want += m + std::log(s) - 2 * test::wide(z(i, l(i)));
    }
    want /= 9;
    REGCHECK_EXPECT(test::close(got(0), want, 8), what + ": got " + str(test::wide(got(0))) + " want " + str(want), failures);
  } else if constexpr (std::is_same_v<Op, tx::op::cross_entropy_grad>) {
    // (softmax(z) - one_hot(l)) * scale [* g] / batch, with g folded into the scale and with g in memory; rows 3
    // and 6 have labels outside [0, classes) (their rows are the softmax), against long double loops.
    auto z = test::random<T, 2>({9, 37}, -4, 4);
    tx::tensor<std::int64_t, 1> l({9});
    for (tx::index_t i = 0; i < 9; ++i) l(i) = i == 3 ? -1 : (i == 6 ? 37 : (i * 5 + 2) % 37);
    const tx::tensor<T, 0> g(tx::full(tx::shape_t<0>{}, static_cast<T>(-1.5)));
    auto dz = on<B>::up(z);
    auto dl = on<B>::up(l);
    auto dg = on<B>::up(g);
    using ZV = tx::view<const T, 2, B>;
    using LV = tx::view<const std::int64_t, 1, B>;
    const ZV zv = std::as_const(dz).view();
    const LV lv = std::as_const(dl).view();
    const auto folded = on<B>::down(tx::composite_expr<Op, 2, ZV, LV>(1, 0.5, zv.shape(), zv, lv));
    const auto read_g = on<B>::down(tx::composite_expr<Op, 2, ZV, LV, tx::view<const T, 0, B>>(
        1, 1.0, zv.shape(), zv, lv, std::as_const(dg).view()));
    for (tx::index_t i = 0; i < 9; ++i) {
      ld m = -INFINITY, s = 0;
      for (tx::index_t j = 0; j < 37; ++j) m = std::max(m, test::wide(z(i, j)));
      for (tx::index_t j = 0; j < 37; ++j) s += std::exp(test::wide(z(i, j)) - m);
      for (tx::index_t j = 0; j < 37; ++j) {
        const ld d = std::exp(test::wide(z(i, j)) - m) / s - (j == l(i) ? 1 : 0);
        const std::string at = what + " (" + std::to_string(i) + ", " + std::to_string(j) + ")";
        REGCHECK_EXPECT(test::close(folded(i, j), d * 0.5L / 9, 0.5L / 9, 8 * test::tolerance<T>()),
               at + " scale 0.5: got " + str(test::wide(folded(i, j))) + " want " + str(d * 0.5L / 9), failures);
        REGCHECK_EXPECT(test::close(read_g(i, j), d * -1.5L / 9, 1.5L / 9, 8 * test::tolerance<T>()),
               at + " g -1.5: got " + str(test::wide(read_g(i, j))) + " want " + str(d * -1.5L / 9), failures);
      }
    }
  } else if constexpr (std::is_same_v<Op, tx::op::layer_norm>) {
    // Rows of x * 2 (evaluated once) normalised over the last axis: long double mean, biased variance, eps 1e-3.
    auto x = test::random<T, 3>({3, 4, 5}, -6, 6);
    auto w = test::random<T, 1>({5}, -2, 2);
    auto b = test::random<T, 1>({5}, -2, 2);
    auto dx = on<B>::up(x);
    auto dw = on<B>::up(w);
    auto db = on<B>::up(b);
    const auto got = on<B>::down(tx::layer_norm(dx * 2, dw, db, 1e-3));
    for (tx::index_t r = 0; r < 12; ++r) {
      ld m = 0, v = 0;
      for (tx::index_t k = 0; k < 5; ++k) m += 2 * test::wide(x.data()[r * 5 + k]);
      m /= 5;
      for (tx::index_t k = 0; k < 5; ++k) v += (2 * test::wide(x.data()[r * 5 + k]) - m) * (2 * test::wide(x.data()[r * 5 + k]) - m);
      v /= 5;
      for (tx::index_t k = 0; k < 5; ++k) {
        const ld want = (2 * test::wide(x.data()[r * 5 + k]) - m) / std::sqrt(v + 1e-3L) * test::wide(w(k)) + test::wide(b(k));
        REGCHECK_EXPECT(test::close(got.data()[r * 5 + k], want, 4, 16 * test::tolerance<T>()),
               what + " element " + std::to_string(r * 5 + k) + ": got " + str(test::wide(got.data()[r * 5 + k])) + " want " + str(want), failures);
      }
    }
  } else {
    auto x = test::random<T, 3>({3, 4, 5}, -6, 6);
    auto dx = on<B>::up(x);
    for (int axis = -1; axis < 3; ++axis) {
      const auto a = static_cast<std::size_t>(axis < 0 ? axis + 3 : axis);
      const auto got = [&] {
        if constexpr (std::is_same_v<Op, tx::op::softmax>) return on<B>::down(tx::softmax(dx * 2, axis));
        else return on<B>::down(tx::log_softmax(dx * 2, axis));
      }();
      for (tx::index_t o = 0; o < x.size(); ++o) {
        const auto idx = test::unravel(o, x.shape());
        ld m = -INFINITY, s = 0;
        auto at = idx;
        for (tx::index_t k = 0; k < x.shape()[a]; ++k) {
          at[a] = k;
          m = std::max(m, 2 * test::wide(x(at[0], at[1], at[2])));
        }
        for (tx::index_t k = 0; k < x.shape()[a]; ++k) {
          at[a] = k;
          s += std::exp(2 * test::wide(x(at[0], at[1], at[2])) - m);
        }
        const ld lw = 2 * test::wide(x(idx[0], idx[1], idx[2])) - m - std::log(s);
        // softmax: relative, or within two subnormal steps of T (exp(x - max) rounded to T, then divided by a sum
        // of at least 1 and rounded again: each rounding of a subnormal is off by up to half a step).
        const bool ok = std::is_same_v<Op, tx::op::softmax>
                            ? test::close(got.data()[o], std::exp(lw), 0, 8 * test::tolerance<T>()) ||
                                  std::fabs(test::wide(got.data()[o]) - std::exp(lw)) <= 2 * test::subnormal_step<T>()
                            : test::close(got.data()[o], lw, 12);
        REGCHECK_EXPECT(ok, what + " axis " + std::to_string(axis) + " element " + std::to_string(o) + ": got " + str(test::wide(got.data()[o])) +
                       " want " + str(std::is_same_v<Op, tx::op::softmax> ? std::exp(lw) : lw), failures);
      }
    }
  }
  REQUIRE(failures == 0);
}

// ---- reductions ---------------------------------------------------------------------------------------------

template <class Op> inline constexpr bool is_mean = std::is_same_v<Op, tx::op::mean>;
template <class Op> inline constexpr bool is_arg = std::is_same_v<Op, tx::op::argmax> || std::is_same_v<Op, tx::op::argmin>;
template <class Op> inline constexpr bool is_moment = std::is_same_v<Op, tx::op::var> || std::is_same_v<Op, tx::op::stddev>;
template <class Op> inline constexpr bool is_sum = std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::sum_to>;

/// The reference reduction of v and the magnitude the rounding error is relative to: the op's own `reference`
/// (exact results), else test::ref<Op>::reduce (reference.hpp: sums and products need 128-bit integers and a
/// rounding scale). A reduction with neither does not compile here.
template <class Op, class T> ld reduce_ref(const std::vector<ld>& v, ld& scale) {
  scale = 1;
  if constexpr (requires { Op::reference(v); }) return Op::reference(v);
  else return test::ref<Op>::template reduce<T>(v, scale);
}

/// The elements of x (row-major, rank 3) on the line through output index o along axis.
template <class T> std::vector<ld> line_of(const tx::tensor<T, 3>& x, std::size_t axis, tx::index_t o) {
  tx::shape_t<2> out{};
  for (std::size_t d = 0, k = 0; d < 3; ++d)
    if (d != axis) out[k++] = x.shape()[d];
  const auto oi = test::unravel(o, out);
  std::vector<ld> v;
  for (tx::index_t l = 0; l < x.shape()[axis]; ++l) {
    std::array<tx::index_t, 3> idx{};
    for (std::size_t d = 0, k = 0; d < 3; ++d) idx[d] = d == axis ? l : oi[k++];
    v.push_back(test::wide(x(idx[0], idx[1], idx[2])));
  }
  return v;
}

/// Op over everything, along each axis and along axis 1 kept, of x (rank 3) given on B as the view `e` (contiguous
/// or strided: the same node type either way, so one instantiation per (op, dtype)).
template <class B, class Op, class T> void check_reduction_of(const tx::tensor<T, 3>& x, const tx::view<const T, 3, B>& e, const std::string& what) {
  int failures = 0;
  const std::string where = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>) + " " + what + " " + tx::to_string(x.shape());
  std::vector<ld> all;
  for (tx::index_t i = 0; i < x.size(); ++i) all.push_back(test::wide(x.data()[i]));
  ld scale = 1;
  const ld want = reduce_ref<Op, T>(all, scale);
  const auto got = tx::reduce<Op>(e).item();  // T, or int64 for argmax and argmin
  REGCHECK_EXPECT(test::close(got, want, scale), where + ": all elements: got " + str(test::wide(got)) + " want " + str(want), failures);
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const auto out = on<B>::down(tx::reduce<Op>(e, static_cast<tx::index_t>(axis)));
    for (tx::index_t o = 0; o < out.size(); ++o) {
      ld s = 1;
      const ld w = reduce_ref<Op, T>(line_of(x, axis, o), s);
      REGCHECK_EXPECT(test::close(out.data()[o], w, s),
             where + ": axis " + std::to_string(axis) + " output " + std::to_string(o) + " got " + str(test::wide(out.data()[o])) + " want " + str(w),
             failures);
    }
  }
  const auto kept = on<B>::down(tx::reduce_expr<Op, tx::view<const T, 3, B>, 3>(e, Op{}, 2u));
  REQUIRE(kept.shape() == tx::shape_t<3>{x.shape()[0], 1, x.shape()[2]});
  for (tx::index_t o = 0; o < kept.size(); ++o) {
    ld s = 1;
    const ld w = reduce_ref<Op, T>(line_of(x, 1, o), s);
    REGCHECK_EXPECT(test::close(kept.data()[o], w, s), where + ": axis 1 kept, output " + std::to_string(o), failures);
  }
  REQUIRE(failures == 0);
}

/// Shapes of the reduction checks: small on the host (its deep paths have their own tests), and on cuda long
/// rows and long columns that split the axis into chunks and a second pass.
template <class B> std::vector<tx::shape_t<3>> reduction_shapes() {
  if constexpr (std::is_same_v<B, tx::host>) return {{4, 33, 70}};
  else return {{4, 33, 70}, {2, 3, 9000}, {2, 1500, 5}};
}

template <class B, class Op, class T> void check_reduction() {
  constexpr bool prod = std::is_same_v<Op, tx::op::prod>;
  const double lo = prod ? 0.99 : (test::is_int<T> ? -1e6 : -2), hi = prod ? 1.01 : (test::is_int<T> ? 1e6 : 2);
  for (const auto& s : reduction_shapes<B>()) {
    // integer products read factors that are never 0 (+-1, +-3, a few +-2), so they wrap and are not 0 = 0
    auto x = [&] {
      if constexpr (prod && test::is_int<T>) return test::product_factors<T, 3>(s);
      else if constexpr (std::is_same_v<T, bool>) {  // any, all: a few true (or false) per line, so lines differ
        const auto u = test::random<float, 3>(s, 0, 1);
        tx::tensor<bool, 3> b(s);
        const bool rare = std::is_same_v<Op, tx::op::any>;
        for (tx::index_t i = 0; i < b.size(); ++i) b.data()[i] = (u.data()[i] < 0.03f) == rare;
        return b;
      } else return test::random<T, 3>(s, lo, hi);
    }();
    auto dx = on<B>::up(x);
    check_reduction_of<B, Op>(x, std::as_const(dx).view(), "dense");
    // The same values through a strided view (last two axes stored transposed).
    tx::tensor<T, 3> xt({s[0], s[2], s[1]});
    for (tx::index_t i = 0; i < s[0]; ++i)
      for (tx::index_t j = 0; j < s[1]; ++j)
        for (tx::index_t k = 0; k < s[2]; ++k) xt(i, k, j) = x(i, j, k);
    auto dxt = on<B>::up(xt);
    const tx::view<const T, 3, B> strided(dxt.data(), s, {s[1] * s[2], 1, s[1]});
    check_reduction_of<B, Op>(x, strided, "strided view");
  }
}

// ---- scans ----------------------------------------------------------------------------------------------------

template <class Op> inline constexpr bool is_scan = tx::detail::scan_op_tag<Op>;

/// The running reference of scan Op over the line v (widened, in scan order): want[i] is the op over v[0..i],
/// computed from the op's definition in long double or exact 128-bit integers (not from the reduction's combine),
/// and scale[i] the magnitude its rounding error is relative to: for sums and products the bound of a running
/// fold in the accumulator's precision (i + 1 steps of its epsilon), which a tree of partial scans also meets.
/// `reverse`: v runs from the end of the axis, so a tie goes to the later step (the lower position).
template <class Op, class T> void scan_ref(const std::vector<ld>& v, bool reverse, std::vector<ld>& want, std::vector<ld>& scale) {
  using R = typename Op::reduction;
  using Acc = typename R::template accumulator<T>;
  want.assign(v.size(), 0);
  scale.assign(v.size(), 1);
  const auto steps = [](std::size_t i) {
    if constexpr (test::is_int<T>) return ld(1);
    else return std::max<ld>(1, static_cast<ld>(i + 1) * static_cast<ld>(std::numeric_limits<decltype(tx::detail::widen(T{}))>::epsilon()) / test::tolerance<T>());
  };
  (void)steps;
  if constexpr (std::is_same_v<Op, tx::op::cumsum>) {
    test::i128 si = 0;
    ld sf = 0, mag = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (test::is_int<T>) {
        si += static_cast<test::i128>(v[i]);
        want[i] = static_cast<ld>(test::wrap<T>(si));
      } else {
        sf += v[i];
        mag += std::fabs(v[i]);
        want[i] = sf;
        scale[i] = mag * steps(i);
      }
    }
  } else if constexpr (std::is_same_v<Op, tx::op::cumprod>) {
    test::u128 pi = 1;
    ld pf = 1;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if constexpr (test::is_int<T>) {
        pi *= static_cast<test::u128>(static_cast<test::i128>(v[i]));
        want[i] = static_cast<ld>(test::wrap<T>(static_cast<test::i128>(pi)));
      } else {
        pf *= v[i];
        want[i] = pf;
        scale[i] = std::fabs(pf) * steps(i);
      }
    }
  } else if constexpr (std::is_same_v<Op, tx::op::cummax> || std::is_same_v<Op, tx::op::cummin> ||
                       std::is_same_v<Op, tx::op::cumargmax> || std::is_same_v<Op, tx::op::cumargmin>) {
    constexpr bool up = std::is_same_v<Op, tx::op::cummax> || std::is_same_v<Op, tx::op::cumargmax>;
    constexpr bool arg = std::is_same_v<Op, tx::op::cumargmax> || std::is_same_v<Op, tx::op::cumargmin>;
    ld best = v.empty() ? 0 : v[0];
    std::size_t at = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const bool tie = reverse && v[i] == best;
      const bool nan_tie = reverse && std::isnan(best) && std::isnan(v[i]);
      if (nan_tie || (!std::isnan(best) && (std::isnan(v[i]) || tie || (up ? v[i] > best : v[i] < best)))) {  // NaN wins; ties: the lower position
        best = v[i];
        at = i;
      }
      want[i] = arg ? static_cast<ld>(at) : best;
    }
  } else if constexpr (std::is_same_v<Op, tx::op::logcumsumexp>) {
    ld m = -std::numeric_limits<ld>::infinity(), sum = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] > m) {
        sum = sum * std::exp(m - v[i]) + 1;
        m = v[i];
      } else {
        sum += std::exp(v[i] - m);
      }
      want[i] = m + std::log(sum);
    }
  } else {
    static_assert(tx::detail::always_false_v<Op>, "a scan without a reference");
  }
  (void)sizeof(Acc);
}

/// Op along each axis of x (rank 3), forwards and reversed, given on B as the view `e` (contiguous or strided: one
/// node type either way), every element against scan_ref of its line.
template <class B, class Op, class T> void check_scan_of(const tx::tensor<T, 3>& x, const tx::view<const T, 3, B>& e, const std::string& what) {
  int failures = 0;
  const std::string where = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>) + " " + what + " " + tx::to_string(x.shape());
  const auto s = x.shape();
  std::vector<ld> line, want, scale;
  for (std::size_t axis = 0; axis < 3; ++axis) {
    for (bool reverse : {false, true}) {
      const auto out = on<B>::down(tx::scan_expr<Op, tx::view<const T, 3, B>>(e, axis, reverse));
      REQUIRE(out.shape() == s);
      tx::shape_t<2> others{};
      for (std::size_t d = 0, k = 0; d < 3; ++d)
        if (d != axis) others[k++] = s[d];
      for (tx::index_t o = 0; o < others[0] * others[1]; ++o) {
        const auto oi = test::unravel(o, others);
        const auto at = [&](tx::index_t l) {
          std::array<tx::index_t, 3> idx{};
          for (std::size_t d = 0, k = 0; d < 3; ++d) idx[d] = d == axis ? l : oi[k++];
          return idx;
        };
        const tx::index_t len = s[axis];
        line.clear();
        for (tx::index_t q = 0; q < len; ++q) {
          const auto idx = at(reverse ? len - 1 - q : q);
          line.push_back(test::wide(x(idx[0], idx[1], idx[2])));
        }
        scan_ref<Op, T>(line, reverse, want, scale);
        for (tx::index_t q = 0; q < len; ++q) {
          const tx::index_t l = reverse ? len - 1 - q : q;
          const auto idx = at(l);
          // arg scans report positions along the axis, not steps of the scan
          ld w = want[static_cast<std::size_t>(q)];
          if constexpr (std::is_same_v<typename Op::reduction, tx::op::argmax> || std::is_same_v<typename Op::reduction, tx::op::argmin>)
            if (reverse) w = static_cast<ld>(len - 1) - w;
          const auto got = out(idx[0], idx[1], idx[2]);
          REGCHECK_EXPECT(test::close(got, w, scale[static_cast<std::size_t>(q)]),
                 where + ": axis " + std::to_string(axis) + (reverse ? " reversed" : "") + " at (" + std::to_string(idx[0]) + ", " +
                     std::to_string(idx[1]) + ", " + std::to_string(idx[2]) + ") got " + str(test::wide(got)) + " want " + str(w),
                 failures);
        }
      }
    }
  }
  REQUIRE(failures == 0);
}

/// linear_recurrence along each axis of rank-3 a and b, forwards and reversed, dense and (b) strided, against the
/// recurrence in long double; the rounding scale is the same recurrence over |a| and |b| times the steps taken.
template <class B, class T> void check_recurrence() {
  int failures = 0;
  for (const auto& s : std::vector<tx::shape_t<3>>{{3, 17, 40}, {2, 3, std::is_same_v<B, tx::host> ? 600 : 5000}}) {
    const auto a = test::random<T, 3>(s, -0.97, 0.97);
    const auto b = test::random<T, 3>(s, -2, 2);
    auto da = on<B>::up(a);
    tx::tensor<T, 3> bt({s[0], s[2], s[1]});
    for (tx::index_t i = 0; i < s[0]; ++i)
      for (tx::index_t j = 0; j < s[1]; ++j)
        for (tx::index_t k = 0; k < s[2]; ++k) bt(i, k, j) = b(i, j, k);
    auto dbt = on<B>::up(bt);
    const tx::view<const T, 3, B> db(dbt.data(), s, {s[1] * s[2], 1, s[1]});
    const std::string where = std::string("linear_recurrence ") + std::string(tx::dtype_name_v<T>) + " " + tx::to_string(s);
    for (std::size_t axis = 0; axis < 3; ++axis)
      for (bool reverse : {false, true}) {
        const auto out = on<B>::down(tx::recurrence_expr<tx::view<const T, 3, B>, tx::view<const T, 3, B>>(std::as_const(da).view(), db, axis, reverse));
        tx::shape_t<2> others{};
        for (std::size_t d = 0, m = 0; d < 3; ++d)
          if (d != axis) others[m++] = s[d];
        for (tx::index_t o = 0; o < others[0] * others[1]; ++o) {
          const auto oi = test::unravel(o, others);
          ld h = 0, mag = 0;
          const tx::index_t len = s[axis];
          for (tx::index_t q = 0; q < len; ++q) {
            std::array<tx::index_t, 3> idx{};
            for (std::size_t d = 0, m = 0; d < 3; ++d) idx[d] = d == axis ? (reverse ? len - 1 - q : q) : oi[m++];
            const ld av = test::wide(a(idx[0], idx[1], idx[2])), bv = test::wide(b(idx[0], idx[1], idx[2]));
            h = av * h + bv;
            mag = std::fabs(av) * mag + std::fabs(bv);
            const ld steps = static_cast<ld>(q + 1) * static_cast<ld>(std::numeric_limits<decltype(tx::detail::widen(T{}))>::epsilon()) / test::tolerance<T>();
            const auto got = out(idx[0], idx[1], idx[2]);
            REGCHECK_EXPECT(test::close(got, h, mag * std::max<ld>(1, steps)),
                   where + ": axis " + std::to_string(axis) + (reverse ? " reversed" : "") + " step " + std::to_string(q) + " got " +
                       str(test::wide(got)) + " want " + str(h),
                   failures);
          }
        }
      }
  }
  REQUIRE(failures == 0);
}

/// Shapes of the scan checks: small on the host (its long-line path has its own test), and on cuda long rows and
/// long columns that take several tiles per line.
template <class B> std::vector<tx::shape_t<3>> scan_shapes() {
  if constexpr (std::is_same_v<B, tx::host>) return {{3, 17, 40}};
  else return {{3, 17, 40}, {2, 3, 5000}, {2, 1500, 5}};
}

template <class B, class Op, class T> void check_scan() {
  constexpr bool prod = std::is_same_v<Op, tx::op::cumprod>;
  [[maybe_unused]] constexpr bool arg = std::is_same_v<typename Op::reduction, tx::op::argmax> || std::is_same_v<typename Op::reduction, tx::op::argmin>;
  for (const auto& s : scan_shapes<B>()) {
    auto x = [&] {
      if constexpr (prod && test::is_int<T>) return test::product_factors<T, 3>(s);
      else if constexpr (arg || std::is_same_v<Op, tx::op::cummax> || std::is_same_v<Op, tx::op::cummin>) {
        // few distinct values, so that ties are many and the first position must win
        auto t = test::random<T, 3>(s, -8, 8);
        for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(std::round(static_cast<double>(test::wide(t.data()[i]))));
        return t;
      } else return test::random<T, 3>(s, prod ? 0.999 : (test::is_int<T> ? -1e6 : -2), prod ? 1.001 : (test::is_int<T> ? 1e6 : 2));
    }();
    auto dx = on<B>::up(x);
    check_scan_of<B, Op>(x, std::as_const(dx).view(), "dense");
    tx::tensor<T, 3> xt({s[0], s[2], s[1]});
    for (tx::index_t i = 0; i < s[0]; ++i)
      for (tx::index_t j = 0; j < s[1]; ++j)
        for (tx::index_t k = 0; k < s[2]; ++k) xt(i, k, j) = x(i, j, k);
    auto dxt = on<B>::up(xt);
    const tx::view<const T, 3, B> strided(dxt.data(), s, {s[1] * s[2], 1, s[1]});
    check_scan_of<B, Op>(x, strided, "strided view");
  }
}


// ---- ordering (texpr/sort.hpp) -------------------------------------------------------------------------------

template <class Op> inline constexpr bool is_ordering =
    std::is_base_of_v<tx::op::ordering_op, Op> || std::is_same_v<Op, tx::op::topk_values> || std::is_same_v<Op, tx::op::scatter>;

/// The order of a line by the definition (not by texpr's keys): stable, NaN after every number (before, when
/// descending), -0 equal to +0; returns the positions in order.
inline std::vector<tx::index_t> reference_order(const std::vector<ld>& v, bool descending) {
  std::vector<tx::index_t> pos(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) pos[i] = static_cast<tx::index_t>(i);
  std::stable_sort(pos.begin(), pos.end(), [&](tx::index_t a, tx::index_t b) {
    const ld x = v[static_cast<std::size_t>(a)], y = v[static_cast<std::size_t>(b)];
    if (std::isnan(x) || std::isnan(y)) return descending ? (std::isnan(x) && !std::isnan(y)) : (!std::isnan(x) && std::isnan(y));
    return descending ? x > y : x < y;
  });
  return pos;
}

/// Values for the ordering checks: few distinct values (many ties), both signs, and for floats -0, +0, +-inf and
/// NaN among them.
template <class T, std::size_t R> tx::tensor<T, R> ordering_input(const tx::shape_t<R>& s) {
  auto t = test::random<T, R>(s, -6, 6);
  for (tx::index_t i = 0; i < t.size(); ++i) {
    const double v = std::round(static_cast<double>(test::wide(t.data()[i])));
    if constexpr (test::is_int<T>) {
      t.data()[i] = i % 97 == 5 ? std::numeric_limits<T>::max() : i % 89 == 7 ? std::numeric_limits<T>::min() : static_cast<T>(v);
    } else {
      double w = v;
      if (i % 23 == 3) w = std::numeric_limits<double>::quiet_NaN();
      else if (i % 29 == 4) w = -0.0;
      else if (i % 31 == 6) w = std::numeric_limits<double>::infinity();
      else if (i % 37 == 8) w = -std::numeric_limits<double>::infinity();
      t.data()[i] = static_cast<T>(static_cast<float>(w));
    }
  }
  return t;
}

/// Shapes of the ordering checks: lines longer than the insertion limit and, on cuda, long rows, long columns and
/// one long line (its own CUB call).
template <class B> std::vector<tx::shape_t<3>> ordering_shapes() {
  if constexpr (std::is_same_v<B, tx::host>) return {{3, 17, 40}, {2, 3, 5}};
  else return {{3, 17, 40}, {2, 3, 5000}, {2, 1500, 5}, {1, 1, 70000}};
}

/// Two host elements are the same value (NaN as NaN, the sign of zero kept).
template <class T> bool same_value(T a, T b) {
  const ld x = test::wide(a), y = test::wide(b);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  return x == y && std::signbit(x) == std::signbit(y);
}

template <class B, class Op, class T> void check_ordering_of(const tx::tensor<T, 3>& x, const tx::view<const T, 3, B>& e, const std::string& what) {
  int failures = 0;
  const std::string where = std::string(Op::name) + " " + std::string(tx::dtype_name_v<T>) + " " + what + " " + tx::to_string(x.shape());
  const auto s = x.shape();
  for (std::size_t axis = 0; axis < 3; ++axis) {
    const tx::index_t len = s[axis];
    for (bool descending : {false, true}) {
      for (const tx::index_t k : {tx::index_t{5}, len > 40 ? tx::index_t{40} : len}) {
        if (!std::is_same_v<Op, tx::op::topk> && !std::is_same_v<Op, tx::op::topk_values> && k != len) continue;
        if (k > len) continue;
        const auto ax = static_cast<tx::index_t>(axis);
        tx::tensor<T, 3> got_values;
        tx::tensor<std::int64_t, 3> got_positions;
        if constexpr (std::is_same_v<Op, tx::op::sort>) got_values = on<B>::down(tx::sort(e, ax, descending));
        else if constexpr (std::is_same_v<Op, tx::op::argsort>) got_positions = on<B>::down(tx::argsort(e, ax, descending));
        else if constexpr (std::is_same_v<Op, tx::op::topk>) got_positions = on<B>::down(tx::detail::topk_positions(e, k, ax, descending, {}));
        else {
          auto [v, i] = tx::topk(e, k, ax, descending);
          auto [dv, di] = tx::eval_all(v, i);
          got_values = on<B>::down(dv);
          got_positions = on<B>::down(di);
        }
        tx::shape_t<2> others{};
        for (std::size_t d = 0, m = 0; d < 3; ++d)
          if (d != axis) others[m++] = s[d];
        for (tx::index_t o = 0; o < others[0] * others[1]; ++o) {
          const auto oi = test::unravel(o, others);
          const auto at = [&](tx::index_t l) {
            std::array<tx::index_t, 3> idx{};
            for (std::size_t d = 0, m = 0; d < 3; ++d) idx[d] = d == axis ? l : oi[m++];
            return idx;
          };
          std::vector<ld> line;
          for (tx::index_t q = 0; q < len; ++q) {
            const auto idx = at(q);
            line.push_back(test::wide(x(idx[0], idx[1], idx[2])));
          }
          const auto order = reference_order(line, descending);
          const tx::index_t kept = std::is_same_v<Op, tx::op::sort> || std::is_same_v<Op, tx::op::argsort> ? len : k;
          for (tx::index_t j = 0; j < kept; ++j) {
            const auto idx = at(j);
            const tx::index_t want = order[static_cast<std::size_t>(j)];
            const auto src = at(want);
            const std::string here = where + ": axis " + std::to_string(axis) + (descending ? " descending" : "") + " k " +
                                     std::to_string(kept) + " line " + std::to_string(o) + " place " + std::to_string(j);
            if constexpr (!std::is_same_v<Op, tx::op::sort>)
              REGCHECK_EXPECT(got_positions(idx[0], idx[1], idx[2]) == want,
                     here + ": position " + std::to_string(got_positions(idx[0], idx[1], idx[2])) + " want " + std::to_string(want), failures);
            if constexpr (std::is_same_v<Op, tx::op::sort> || std::is_same_v<Op, tx::op::topk_values>)
              REGCHECK_EXPECT(same_value(got_values(idx[0], idx[1], idx[2]), x(src[0], src[1], src[2])),
                     here + ": value " + str(test::wide(got_values(idx[0], idx[1], idx[2]))) + " want " + str(test::wide(x(src[0], src[1], src[2]))),
                     failures);
          }
        }
      }
    }
  }
  REQUIRE(failures == 0);
}

/// scatter: g written through a permutation of each line (every position once) and through k < extent positions.
template <class B, class T> void check_scatter() {
  int failures = 0;
  const std::string where = std::string("scatter ") + std::string(tx::dtype_name_v<T>);
  const tx::shape_t<3> s{3, 6, 5};
  auto g = test::random<T, 3>(s, -50, 50);
  tx::tensor<std::int64_t, 3> perm(s);
  for (tx::index_t o = 0; o < s[0]; ++o)
    for (tx::index_t k = 0; k < s[2]; ++k)
      for (tx::index_t j = 0; j < s[1]; ++j) perm(o, j, k) = (j * 5 + o + k) % s[1];  // 5 is coprime to 6: a permutation
  auto dg = on<B>::up(g);
  auto dp = on<B>::up(perm);
  for (const tx::index_t extent : {tx::index_t{6}, tx::index_t{9}}) {
    const auto out = on<B>::down(tx::detail::scatter_distinct(1, extent, dg, dp));
    REQUIRE(out.shape() == tx::shape_t<3>{3, extent, 5});
    for (tx::index_t o = 0; o < s[0]; ++o)
      for (tx::index_t k = 0; k < s[2]; ++k)
        for (tx::index_t j = 0; j < extent; ++j) {
          ld want = 0;
          for (tx::index_t p = 0; p < s[1]; ++p)
            if (perm(o, p, k) == j) want = test::wide(g(o, p, k));
          REGCHECK_EXPECT(test::wide(out(o, j, k)) == want,
                 where + " extent " + std::to_string(extent) + " at (" + std::to_string(o) + ", " + std::to_string(j) + ", " + std::to_string(k) +
                     "): got " + str(test::wide(out(o, j, k))) + " want " + str(want),
                 failures);
        }
  }
  REQUIRE(failures == 0);
}

template <class B, class Op, class T> void check_ordering() {
  if constexpr (std::is_same_v<Op, tx::op::scatter>) {
    check_scatter<B, T>();
  } else {
    for (const auto& s : ordering_shapes<B>()) {
      const auto x = ordering_input<T>(s);
      auto dx = on<B>::up(x);
      check_ordering_of<B, Op>(x, std::as_const(dx).view(), "dense");
      if (tx::shape_size(s) > 100000) continue;
      tx::tensor<T, 3> xt({s[0], s[2], s[1]});
      for (tx::index_t i = 0; i < s[0]; ++i)
        for (tx::index_t j = 0; j < s[1]; ++j)
          for (tx::index_t k = 0; k < s[2]; ++k) xt(i, k, j) = x(i, j, k);
      auto dxt = on<B>::up(xt);
      const tx::view<const T, 3, B> strided(dxt.data(), s, {s[1] * s[2], 1, s[1]});
      check_ordering_of<B, Op>(x, strided, "strided view");
    }
  }
}

// ---- matmul -------------------------------------------------------------------------------------------------

/// C = A B on B against a long double loop, for operands given as host tensors of any rank and read on the
/// device as `ea`, `eb` (tensors, or transposed views).
template <class B, class T, std::size_t RA, std::size_t RB, class EA, class EB>
void check_product(const tx::tensor<T, RA>& a, const tx::tensor<T, RB>& b, const EA& ea, const EB& eb, const char* what) {
  const auto c = on<B>::down(tx::matmul(ea, eb));
  int failures = 0;
  // NumPy's rules, as plain loops over a broadcast batch.
  const tx::index_t m = RA == 1 ? 1 : a.shape()[RA - 2], k = a.shape()[RA - 1], n = RB == 1 ? 1 : b.shape()[RB - 1];
  constexpr std::size_t BR = (RA > RB ? RA : RB) > 2 ? (RA > RB ? RA : RB) - 2 : 0;
  std::array<tx::index_t, BR + 1> batch{};
  for (std::size_t i = 0; i != BR; ++i) {
    const std::size_t from_end = BR - i;
    const tx::index_t ea_ = RA >= 2 && RA - 2 >= from_end ? a.shape()[RA - 2 - from_end] : 1;
    const tx::index_t eb_ = RB >= 2 && RB - 2 >= from_end ? b.shape()[RB - 2 - from_end] : 1;
    batch[i] = std::max(ea_, eb_);
  }
  tx::index_t batches = 1;
  for (std::size_t i = 0; i != BR; ++i) batches *= batch[i];
  REQUIRE(c.size() == batches * m * n);
  auto index_of = [&](tx::index_t q, std::size_t rank, const auto& shape, tx::index_t mat) {  // batch offset
    tx::index_t off = 0, stride = mat;
    for (std::size_t i = BR; i-- > 0;) {
      const tx::index_t bi = q % batch[i];
      q /= batch[i];
      const std::size_t from_end = BR - i;
      if (rank >= 2 && rank - 2 >= from_end) {
        const tx::index_t e = shape[rank - 2 - from_end];
        off += (e == 1 ? 0 : bi) * stride;
        stride *= e;
      }
    }
    return off;
  };
  for (tx::index_t q = 0; q < batches; ++q) {
    const tx::index_t oa = index_of(q, RA, a.shape(), m * k), ob = index_of(q, RB, b.shape(), k * n);
    for (tx::index_t i = 0; i < m; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        ld s = 0, mag = 0;
        for (tx::index_t p = 0; p < k; ++p) {
          const ld x = test::wide(a.data()[oa + i * k + p]), y = test::wide(b.data()[ob + p * n + j]);
          s += x * y;
          mag += std::fabs(x * y);
        }
        if constexpr (test::is_int<T>) s = static_cast<ld>(test::wrap<T>(static_cast<test::i128>(s)));
        const T got = c.data()[(q * m + i) * n + j];
        REGCHECK_EXPECT(test::close(got, s, mag),
               std::string(what) + " " + std::string(tx::dtype_name_v<T>) + ": batch " + std::to_string(q) + " C(" + std::to_string(i) +
                   ", " + std::to_string(j) + ") = " + str(test::wide(got)) + " want " + str(s),
               failures);
      }
  }
  REQUIRE(failures == 0);
}

template <class B, class T> void check_matmul() {
  const double r = test::is_int<T> ? 50 : 2;
  auto a = test::random<T, 2>({33, 17}, -r, r);
  auto b = test::random<T, 2>({17, 45}, -r, r);
  auto a3 = test::random<T, 3>({3, 33, 17}, -r, r);
  auto a4 = test::random<T, 4>({2, 1, 33, 17}, -r, r);
  auto b3 = test::random<T, 3>({3, 17, 45}, -r, r);
  auto v = test::random<T, 1>({17}, -r, r);
  auto da = on<B>::up(a);
  auto db = on<B>::up(b);
  auto da3 = on<B>::up(a3);
  auto da4 = on<B>::up(a4);
  auto db3 = on<B>::up(b3);
  auto dv = on<B>::up(v);
  check_product<B>(a, b, da, db, "matrix x matrix");
  check_product<B>(a3, b, da3, db, "batch x shared matrix");
  check_product<B>(a4, b3, da4, db3, "batch dimensions broadcast (2, 1) with (3)");
  check_product<B>(v, b, dv, db, "vector x matrix");
  check_product<B>(a, v, da, dv, "matrix x vector");
  check_product<B>(v, v, dv, dv, "dot");
  // A transposed operand is read in place (no copy): B given as the transpose of its transpose's storage.
  tx::tensor<T, 2> bt({45, 17});
  for (tx::index_t i = 0; i < 17; ++i)
    for (tx::index_t j = 0; j < 45; ++j) bt(j, i) = b(i, j);
  auto dbt = on<B>::up(bt);
  check_product<B>(a, b, da, tx::transpose(dbt), "matrix x transposed matrix");
}

// ---- scaled_matmul -------------------------------------------------------------------------------------------

/// scaled_matmul on 8-bit operands against exact long double sums of the decoded values: int8 gives the exact
/// int32 sum; an 8-bit float product is scaled and checked within 2^-10 of its sum of magnitudes (FP8 tensor cores
/// accumulate with fewer bits than float). Extents are multiples of 16, as cuBLASLt's 8-bit GEMMs need; B is given
/// row-major (the GPU copies it), as a transposed view (read in place) and batched.
template <class B, class T> void check_scaled_matmul() {
  constexpr bool integer = std::is_same_v<T, std::int8_t>;
  using R = tx::op::scaled_matmul::result_t<T>;
  const double r = integer ? 127 : 6;
  auto a = test::random<T, 3>({2, 48, 64}, -r, r);
  auto b = test::random<T, 2>({64, 32}, -r, r);
  tx::tensor<T, 2> bt({32, 64});
  for (tx::index_t i = 0; i < 64; ++i)
    for (tx::index_t j = 0; j < 32; ++j) bt(j, i) = b(i, j);
  auto da = on<B>::up(a);
  auto db = on<B>::up(b);
  auto dbt = on<B>::up(bt);
  const float sa = integer ? 1.0f : 0.5f, sb = integer ? 1.0f : 3.0f;
  auto product = [&](const auto& eb) {
    if constexpr (integer) return on<B>::down(tx::scaled_matmul(da, eb));
    else return on<B>::down(tx::scaled_matmul(da, eb, sa, sb));
  };
  int failures = 0;
  for (int variant = 0; variant < 2; ++variant) {
    const tx::view<const T, 2, B> bt_view(dbt.data(), {64, 32}, {1, 64});  // B as the transpose of bt's storage
    const tx::tensor<R, 3> c = variant == 0 ? product(db) : product(bt_view);
    REQUIRE(c.shape() == tx::shape_t<3>{2, 48, 32});
    for (tx::index_t q = 0; q < 2; ++q)
      for (tx::index_t i = 0; i < 48; ++i)
        for (tx::index_t j = 0; j < 32; ++j) {
          ld s = 0, mag = 0;
          for (tx::index_t l = 0; l < 64; ++l) {
            const ld x = test::wide(a(q, i, l)) * test::wide(b(l, j));
            s += x;
            mag += std::fabs(x);
          }
          const ld scale = static_cast<ld>(sa * sb);
          const ld want = integer ? static_cast<ld>(test::wrap<std::int32_t>(static_cast<test::i128>(s))) : scale * s;
          REGCHECK_EXPECT(test::close(c(q, i, j), want, scale * mag, integer ? 0 : 1.0L / 1024),
                 "scaled_matmul " + std::string(tx::dtype_name_v<T>) + (variant ? " (B transposed view)" : "") + ": C(" +
                     std::to_string(q) + ", " + std::to_string(i) + ", " + std::to_string(j) + ") = " + str(test::wide(c(q, i, j))) +
                     " want " + str(want),
                 failures);
        }
  }
  REQUIRE(failures == 0);
}

// ---- linear algebra (texpr/linalg.hpp) ---------------------------------------------------------------------

template <class Op> inline constexpr bool is_linalg = std::is_base_of_v<tx::op::linalg_op, Op>;

/// cholesky, solve_triangular, solve, slogdet, eigh, eigvalsh: a batch of 3 matrices of order 6 (A given as a
/// strided view, B as an expression) checked by the defining identity in long double (L Lᵀ = A with L lower and a
/// positive diagonal; A X = B; S V = V diag(w) with Vᵀ V = I; eigvalsh: trace and Frobenius norm; svd of a tall and
/// a wide (strided) matrix, reduced and full: U diag(s) Vᴴ = A, orthonormal factors; svdvals: sums of s² and s⁴; qr of
/// both: Q R = A, Qᵀ Q = I, R upper; lstsq: the normal equations (tall), A X = B in A's row space (wide); lu_factor:
/// P L U = A; lu_solve: A X = B), relative to the
/// sizes of the terms: 1e-5 (float), 1e-12 (double). Both triangles are tried where the
/// op reads one, with noise in the other.
template <class B, class Op, class T> void check_linalg() {
  constexpr tx::index_t n = 6, k = 2, batches = 3;
  const ld tol = std::is_same_v<T, float> ? 1e-5L : 1e-12L;
  std::mt19937_64 g(7);
  std::normal_distribution<double> nd;
  tx::tensor<T, 3> m({batches, n, n}), rhs({batches, n, k}), noise({batches, n, n});
  for (auto* t : {&m, &noise}) for (tx::index_t i = 0; i < t->size(); ++i) t->data()[i] = static_cast<T>(nd(g));
  for (tx::index_t i = 0; i < rhs.size(); ++i) rhs.data()[i] = static_cast<T>(nd(g));
  auto at = [](const tx::tensor<T, 3>& t, tx::index_t q, tx::index_t i, tx::index_t j) { return static_cast<ld>(t(q, i, j)); };
  // A: m mᵀ + n I (positive definite) for cholesky; m + 4 I off the triangle noise for the solves.
  tx::tensor<T, 3> a({batches, n, n});
  for (tx::index_t q = 0; q < batches; ++q)
    for (tx::index_t i = 0; i < n; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        ld v = 0;
        if constexpr (std::is_same_v<Op, tx::op::cholesky>) {
          for (tx::index_t l = 0; l < n; ++l) v += at(m, q, i, l) * at(m, q, j, l);
          if (j > i) v = at(noise, q, i, j);  // never read
        } else {
          v = at(m, q, i, j);
        }
        // (slogdet: m itself, so that LU pivots rows and determinants of both signs occur)
        a(q, i, j) = static_cast<T>(v + (i == j && !std::is_same_v<Op, tx::op::slogdet> ? ld(n) : 0));
      }
  const auto a_dev = on<B>::up(tx::tensor<T, 3>(tx::eval(tx::transpose(a))));
  const auto a_view = tx::transpose(a_dev);  // a strided view: materialised before the library call
  const auto rhs_dev = on<B>::up(rhs);
  auto worst = [&](auto&& residual) {
    ld w = 0;
    for (tx::index_t q = 0; q < batches; ++q) w = std::max(w, residual(q));
    return w;
  };
  if constexpr (std::is_same_v<Op, tx::op::slogdet>) {
    // against Gaussian elimination with partial pivoting in long double; one matrix made singular (sign 0, -inf)
    tx::tensor<T, 3> as = a.clone();
    for (tx::index_t j = 0; j < n; ++j) as(1, 2, j) = T(0);
    for (tx::index_t j = 0; j < n; ++j) std::swap(as(0, 0, j), as(0, 3, j));  // matrix 0's determinant negated
    const auto as_dev = on<B>::up(as);
    auto [sign_of, log_of] = tx::linalg::slogdet(as_dev);
    const tx::tensor<T, 1> got_sign = on<B>::down(sign_of), got_log = on<B>::down(log_of);
    REQUIRE(got_sign.shape() == tx::shape_t<1>{batches});
    bool negative_seen = false;  // the data reach a negative determinant
    for (tx::index_t q = 0; q < batches; ++q) {
      std::vector<ld> u(static_cast<std::size_t>(n * n));
      for (tx::index_t i = 0; i < n * n; ++i) u[static_cast<std::size_t>(i)] = at(as, q, i / n, i % n);
      ld sign = 1, log_abs = 0;
      for (tx::index_t c = 0; c < n && sign != 0; ++c) {
        tx::index_t p = c;
        for (tx::index_t r = c + 1; r < n; ++r) if (std::fabs(u[r * n + c]) > std::fabs(u[p * n + c])) p = r;
        if (u[p * n + c] == 0) { sign = 0; break; }
        if (p != c) { for (tx::index_t j = 0; j < n; ++j) std::swap(u[p * n + j], u[c * n + j]); sign = -sign; }
        if (u[c * n + c] < 0) sign = -sign;
        log_abs += std::log(std::fabs(u[c * n + c]));
        for (tx::index_t r = c + 1; r < n; ++r) {
          const ld f = u[r * n + c] / u[c * n + c];
          for (tx::index_t j = c; j < n; ++j) u[r * n + j] -= f * u[c * n + j];
        }
      }
      INFO("slogdet " << tx::dtype_name_v<T> << " matrix " << q);
      negative_seen = negative_seen || sign < 0;
      CHECK(static_cast<ld>(got_sign(q)) == sign);
      if (sign == 0) CHECK((std::isinf(got_log(q)) && got_log(q) < 0));
      else CHECK(std::fabs(static_cast<ld>(got_log(q)) - log_abs) <= tol * 10 * (1 + std::fabs(log_abs)));
    }
    CHECK(negative_seen);
  } else if constexpr (std::is_same_v<Op, tx::op::eigh> || std::is_same_v<Op, tx::op::eigvalsh>) {
    // S = (m + mᵀ) / 2 in the lower triangle, noise above (never read), given as a strided view
    tx::tensor<T, 3> s({batches, n, n});
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) s(q, i, j) = j > i ? noise(q, i, j) : static_cast<T>((at(m, q, i, j) + at(m, q, j, i)) / 2);
    const auto st_dev = on<B>::up(tx::tensor<T, 3>(tx::eval(tx::transpose(s))));
    auto sym = [&](tx::index_t q, tx::index_t i, tx::index_t j) { return i >= j ? at(s, q, i, j) : at(s, q, j, i); };
    ld norm = 0;  // max |S_ij|, the scale of every residual
    for (tx::index_t q = 0; q < batches; ++q)
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) norm = std::max(norm, std::fabs(sym(q, i, j)));
    if constexpr (std::is_same_v<Op, tx::op::eigh>) {
      // S V = V diag(w), Vᵀ V = I, w ascending
      auto [w_of, v_of] = tx::linalg::eigh(tx::transpose(st_dev));
      const tx::tensor<T, 2> w = on<B>::down(w_of);
      const tx::tensor<T, 3> v = on<B>::down(v_of);
      ld e = 0;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t r = 0; r < n; ++r) {
          if (r > 0 && !(w(q, r - 1) <= w(q, r))) e = 1;
          for (tx::index_t i = 0; i < n; ++i) {
            ld sv = 0, vv = 0;
            for (tx::index_t j = 0; j < n; ++j) sv += sym(q, i, j) * at(v, q, j, r), vv += at(v, q, j, i) * at(v, q, j, r);
            e = std::max(e, std::fabs(sv - static_cast<ld>(w(q, r)) * at(v, q, i, r)) / (norm * n));
            e = std::max(e, std::fabs(vv - (i == r ? 1 : 0)) / n);
          }
        }
      CHECK_MESSAGE(e <= tol, "eigh " << tx::dtype_name_v<T> << ": S V - V diag(w), Vᵀ V - I, order: relative " << static_cast<double>(e));
    } else {
      // the invariants sum(w) = trace(S) and sum(w²) = |S|_F², and w ascending
      const tx::tensor<T, 2> w = on<B>::down(tx::linalg::eigvalsh(tx::transpose(st_dev)));
      ld e = 0;
      for (tx::index_t q = 0; q < batches; ++q) {
        ld trace = 0, frobenius = 0, sum = 0, squares = 0;
        for (tx::index_t i = 0; i < n; ++i) {
          trace += sym(q, i, i);
          for (tx::index_t j = 0; j < n; ++j) frobenius += sym(q, i, j) * sym(q, i, j);
          sum += w(q, i), squares += static_cast<ld>(w(q, i)) * w(q, i);
          if (i > 0 && !(w(q, i - 1) <= w(q, i))) e = 1;
        }
        e = std::max({e, std::fabs(sum - trace) / (norm * n), std::fabs(squares - frobenius) / (norm * norm * n * n)});
      }
      CHECK_MESSAGE(e <= tol, "eigvalsh " << tx::dtype_name_v<T> << ": trace, Frobenius norm, order: relative " << static_cast<double>(e));
    }
  } else if constexpr (std::is_same_v<Op, tx::op::svd> || std::is_same_v<Op, tx::op::svdvals>) {
    // A tall (6 x 4: m's first 4 columns) and wide (its transpose, a strided view); svd reduced and full:
    // U diag(s) Vᴴ = A, Uᵀ U = I, Vᴴ Vᴴᵀ = I, s descending and >= 0; svdvals: sum s² = |A|_F²
    const auto tall_dev = on<B>::up(tx::tensor<T, 3>(tx::eval(tx::slice(m, 2, 0, 4))));
    for (const bool wide : {false, true}) {
      const tx::index_t rows_of = wide ? 4 : n, cols_of = wide ? n : 4, kk = 4;
      auto elem = [&](tx::index_t q, tx::index_t i, tx::index_t j) { return wide ? at(m, q, j, i) : at(m, q, i, j); };
      ld norm = 0;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t i = 0; i < rows_of; ++i)
          for (tx::index_t j = 0; j < cols_of; ++j) norm = std::max(norm, std::fabs(elem(q, i, j)));
      auto values_ok = [&](const tx::tensor<T, 2>& sv, tx::index_t q) {
        ld e = 0;
        for (tx::index_t r = 0; r < kk; ++r)
          if (sv(q, r) < 0 || (r > 0 && sv(q, r - 1) < sv(q, r))) e = 1;
        return e;
      };
      if constexpr (std::is_same_v<Op, tx::op::svd>) {
        for (const bool full : {false, true}) {
          tx::tensor<T, 3> u, vh;
          tx::tensor<T, 2> sv;
          auto factor = [&](const auto& operand) {
            auto [u_of, s_of, vh_of] = tx::linalg::svd(operand, full);
            u = on<B>::down(u_of), vh = on<B>::down(vh_of), sv = on<B>::down(s_of);
          };
          if (wide) factor(tx::transpose(tall_dev));
          else factor(tall_dev);
          const tx::index_t ucols = full ? rows_of : kk, vrows = full ? cols_of : kk;
          REQUIRE(u.shape() == tx::shape_t<3>{batches, rows_of, ucols});
          REQUIRE(vh.shape() == tx::shape_t<3>{batches, vrows, cols_of});
          ld e = 0;
          for (tx::index_t q = 0; q < batches; ++q) {
            e = std::max(e, values_ok(sv, q));
            for (tx::index_t i = 0; i < rows_of; ++i)
              for (tx::index_t j = 0; j < cols_of; ++j) {
                ld r = 0;
                for (tx::index_t c = 0; c < kk; ++c) r += at(u, q, i, c) * static_cast<ld>(sv(q, c)) * at(vh, q, c, j);
                e = std::max(e, std::fabs(r - elem(q, i, j)) / (norm * n));
              }
            for (tx::index_t i = 0; i < ucols; ++i)
              for (tx::index_t j = 0; j < ucols; ++j) {
                ld r = 0;
                for (tx::index_t c = 0; c < rows_of; ++c) r += at(u, q, c, i) * at(u, q, c, j);
                e = std::max(e, std::fabs(r - (i == j ? 1 : 0)) / n);
              }
            for (tx::index_t i = 0; i < vrows; ++i)
              for (tx::index_t j = 0; j < vrows; ++j) {
                ld r = 0;
                for (tx::index_t c = 0; c < cols_of; ++c) r += at(vh, q, i, c) * at(vh, q, j, c);
                e = std::max(e, std::fabs(r - (i == j ? 1 : 0)) / n);
              }
          }
          CHECK_MESSAGE(e <= tol, "svd " << tx::dtype_name_v<T> << std::string(wide ? " wide" : " tall") << std::string(full ? " full" : " reduced")
                                         << ": U S Vh - A, UᵀU - I, Vh Vhᵀ - I, order: relative " << static_cast<double>(e));
        }
      } else {
        const tx::tensor<T, 2> sv = wide ? on<B>::down(tx::linalg::svdvals(tx::transpose(tall_dev))) : on<B>::down(tx::linalg::svdvals(tall_dev));
        REQUIRE(sv.shape() == tx::shape_t<2>{batches, kk});
        // sum s² = |A|_F² and sum s⁴ = |G|_F², G the 4 x 4 Gram matrix of A's short side (a matrix with A's entries
        // in another order, which LAPACK would see with wrong extents, has the first but not the second)
        ld e = 0;
        for (tx::index_t q = 0; q < batches; ++q) {
          ld frobenius = 0, gram = 0, squares = 0, fourth = 0;
          for (tx::index_t i = 0; i < rows_of; ++i)
            for (tx::index_t j = 0; j < cols_of; ++j) frobenius += elem(q, i, j) * elem(q, i, j);
          for (tx::index_t i = 0; i < kk; ++i)
            for (tx::index_t j = 0; j < kk; ++j) {
              ld g_ij = 0;
              for (tx::index_t c = 0; c < n; ++c) g_ij += wide ? elem(q, i, c) * elem(q, j, c) : elem(q, c, i) * elem(q, c, j);
              gram += g_ij * g_ij;
            }
          for (tx::index_t r = 0; r < kk; ++r) squares += static_cast<ld>(sv(q, r)) * sv(q, r), fourth += std::pow(static_cast<ld>(sv(q, r)), 4);
          e = std::max({e, values_ok(sv, q), std::fabs(squares - frobenius) / (norm * norm * n * n),
                        std::fabs(fourth - gram) / std::pow(norm * n, 4)});
        }
        CHECK_MESSAGE(e <= tol, "svdvals " << tx::dtype_name_v<T> << std::string(wide ? " wide" : " tall")
                                           << ": sums of s² and s⁴, order: relative " << static_cast<double>(e));
      }
    }
  } else if constexpr (std::is_same_v<Op, tx::op::qr>) {
    // a tall (6 x 4: m's first 4 columns) and a wide matrix (its transpose, a strided view): Q R = A, Qᵀ Q = I,
    // R zero below its diagonal
    const tx::tensor<T, 3> tall = tx::eval(tx::slice(m, 2, 0, 4));
    const auto tall_dev = on<B>::up(tall);
    for (const bool wide : {false, true}) {
      const tx::index_t rows_of = wide ? 4 : n, cols_of = wide ? n : 4, kk = 4;
      auto elem = [&](tx::index_t q, tx::index_t i, tx::index_t j) { return wide ? at(tall, q, j, i) : at(tall, q, i, j); };
      tx::tensor<T, 3> qm, rm;
      auto factor = [&](const auto& operand) {
        auto [q_of, r_of] = tx::linalg::qr(operand);
        qm = on<B>::down(q_of), rm = on<B>::down(r_of);
      };
      if (wide) factor(tx::transpose(tall_dev));
      else factor(tall_dev);
      REQUIRE(qm.shape() == tx::shape_t<3>{batches, rows_of, kk});
      REQUIRE(rm.shape() == tx::shape_t<3>{batches, kk, cols_of});
      ld e = 0, norm = 0;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t i = 0; i < rows_of; ++i)
          for (tx::index_t j = 0; j < cols_of; ++j) norm = std::max(norm, std::fabs(elem(q, i, j)));
      for (tx::index_t q = 0; q < batches; ++q) {
        for (tx::index_t i = 0; i < rows_of; ++i)
          for (tx::index_t j = 0; j < cols_of; ++j) {
            ld r = 0;
            for (tx::index_t c = 0; c < kk; ++c) r += at(qm, q, i, c) * at(rm, q, c, j);
            e = std::max(e, std::fabs(r - elem(q, i, j)) / (norm * n));
          }
        for (tx::index_t i = 0; i < kk; ++i)
          for (tx::index_t j = 0; j < kk; ++j) {
            ld r = 0;
            for (tx::index_t c = 0; c < rows_of; ++c) r += at(qm, q, c, i) * at(qm, q, c, j);
            e = std::max(e, std::fabs(r - (i == j ? 1 : 0)) / n);
          }
        for (tx::index_t i = 0; i < kk; ++i)
          for (tx::index_t j = 0; j < i; ++j)
            if (rm(q, i, j) != T(0)) e = 1;
      }
      CHECK_MESSAGE(e <= tol, "qr " << tx::dtype_name_v<T> << std::string(wide ? " wide" : " tall")
                                    << ": Q R - A, QᵀQ - I, R upper: relative " << static_cast<double>(e));
    }
  } else if constexpr (std::is_same_v<Op, tx::op::lstsq>) {
    // a tall A (6 x 4: m's first 4 columns): the normal equations Aᵀ (A X - B) = 0; a wide one (its transpose, a
    // strided view) with B of 4 rows: A X = B exactly, and X = Aᵀ w (the minimum norm: X in A's row space), checked
    // as X = Aᵀ (A Aᵀ)⁻¹ A X; B an expression
    const tx::tensor<T, 3> tall = tx::eval(tx::slice(m, 2, 0, 4));
    const auto tall_dev = on<B>::up(tall);
    const tx::tensor<T, 3> rhs4 = tx::eval(tx::slice(rhs, 1, 0, 4));
    const auto rhs4_dev = on<B>::up(rhs4);
    for (const bool wide : {false, true}) {
      const tx::index_t rows_of = wide ? 4 : n, cols_of = wide ? n : 4;
      auto elem = [&](tx::index_t q, tx::index_t i, tx::index_t j) { return wide ? at(tall, q, j, i) : at(tall, q, i, j); };
      auto rhs_of = [&](tx::index_t q, tx::index_t i, tx::index_t c) { return 2 * (wide ? at(rhs4, q, i, c) : at(rhs, q, i, c)); };
      const tx::tensor<T, 3> x = wide ? on<B>::down(tx::linalg::lstsq(tx::transpose(tall_dev), rhs4_dev * T(2)))
                                      : on<B>::down(tx::linalg::lstsq(tall_dev, rhs_dev * T(2)));
      REQUIRE(x.shape() == tx::shape_t<3>{batches, cols_of, k});
      ld e = 0;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t c = 0; c < k; ++c) {
          std::vector<ld> r(static_cast<std::size_t>(rows_of));  // A X - B
          ld mag = 0;
          for (tx::index_t i = 0; i < rows_of; ++i) {
            ld v = -rhs_of(q, i, c);
            for (tx::index_t j = 0; j < cols_of; ++j) v += elem(q, i, j) * at(x, q, j, c), mag += std::fabs(elem(q, i, j) * at(x, q, j, c));
            r[static_cast<std::size_t>(i)] = v;
            mag += std::fabs(rhs_of(q, i, c));
          }
          if (wide) {
            for (tx::index_t i = 0; i < rows_of; ++i) e = std::max(e, std::fabs(r[static_cast<std::size_t>(i)]) / (mag + 1));
          } else {
            for (tx::index_t j = 0; j < cols_of; ++j) {
              ld v = 0;
              for (tx::index_t i = 0; i < rows_of; ++i) v += elem(q, i, j) * r[static_cast<std::size_t>(i)];
              e = std::max(e, std::fabs(v) / (mag * n + 1));
            }
          }
        }
      if (wide) {  // minimum norm: X orthogonal to A's null space, i.e. X = Aᵀ (A Aᵀ)⁻¹ (A X) (Gauss-Jordan in long double)
        for (tx::index_t q = 0; q < batches; ++q)
          for (tx::index_t c = 0; c < k; ++c) {
            std::vector<ld> gram(16), ax(4);
            for (tx::index_t i = 0; i < 4; ++i) {
              for (tx::index_t j = 0; j < 4; ++j)
                for (tx::index_t l = 0; l < cols_of; ++l) gram[static_cast<std::size_t>(i * 4 + j)] += elem(q, i, l) * elem(q, j, l);
              for (tx::index_t l = 0; l < cols_of; ++l) ax[static_cast<std::size_t>(i)] += elem(q, i, l) * at(x, q, l, c);
            }
            for (std::size_t p = 0; p < 4; ++p)  // A Aᵀ is positive definite: no pivoting needed
              for (std::size_t i = 0; i < 4; ++i) {
                if (i == p) continue;
                const ld f = gram[i * 4 + p] / gram[p * 4 + p];
                for (std::size_t j = 0; j < 4; ++j) gram[i * 4 + j] -= f * gram[p * 4 + j];
                ax[i] -= f * ax[p];
              }
            for (tx::index_t l = 0; l < cols_of; ++l) {
              ld v = 0;
              for (std::size_t i = 0; i < 4; ++i) v += elem(q, static_cast<tx::index_t>(i), l) * ax[i] / gram[i * 4 + i];
              e = std::max(e, std::fabs(v - at(x, q, l, c)) / (std::fabs(at(x, q, l, c)) + 1));
            }
          }
      }
      CHECK_MESSAGE(e <= tol * 10, "lstsq " << tx::dtype_name_v<T> << std::string(wide ? " wide: A X - B, X in A's row space" : " tall: Aᵀ (A X - B)")
                                           << ": relative " << static_cast<double>(e));
    }
  } else if constexpr (std::is_same_v<Op, tx::op::lu_factor> || std::is_same_v<Op, tx::op::lu_solve>) {
    // lu_factor of m (a strided view, rows swapped by the pivoting): P L U = A in long double, L's multipliers at
    // most 1 in size (partial pivoting), pivots in 1..n; lu_solve with them: A X = B
    const auto m_dev = on<B>::up(tx::tensor<T, 3>(tx::eval(tx::transpose(m))));
    auto [lu_of, pivots_of] = tx::linalg::lu_factor(tx::transpose(m_dev));
    const tx::tensor<T, 3> lu = on<B>::down(lu_of);
    const tx::tensor<std::int32_t, 2> pivots = on<B>::down(pivots_of);
    ld e = 0;
    for (tx::index_t q = 0; q < batches; ++q) {
      std::vector<ld> pa(static_cast<std::size_t>(n * n));  // P A: A's rows swapped as the pivots say
      for (tx::index_t i = 0; i < n * n; ++i) pa[static_cast<std::size_t>(i)] = at(m, q, i / n, i % n);
      for (tx::index_t i = 0; i < n; ++i) {
        const tx::index_t p = pivots(q, i) - 1;
        if (p < i || p >= n) { e = 1; continue; }
        for (tx::index_t j = 0; j < n; ++j) std::swap(pa[static_cast<std::size_t>(i * n + j)], pa[static_cast<std::size_t>(p * n + j)]);
      }
      for (tx::index_t i = 0; i < n; ++i)
        for (tx::index_t j = 0; j < n; ++j) {
          if (j < i && std::fabs(at(lu, q, i, j)) > 1) e = 1;
          ld v = 0, mag = 0;
          for (tx::index_t c = 0; c <= std::min(i, j); ++c) {
            const ld l = c == i ? 1 : at(lu, q, i, c);
            v += l * at(lu, q, c, j), mag += std::fabs(l * at(lu, q, c, j));
          }
          e = std::max(e, std::fabs(v - pa[static_cast<std::size_t>(i * n + j)]) / (mag + 1));
        }
    }
    if constexpr (std::is_same_v<Op, tx::op::lu_factor>) {
      CHECK_MESSAGE(e <= tol, "lu_factor " << tx::dtype_name_v<T> << ": P L U - A, |L| <= 1, pivots: relative " << static_cast<double>(e));
    } else {
      const tx::tensor<T, 3> x = on<B>::down(tx::linalg::lu_solve(lu_of, pivots_of, rhs_dev * T(2)));
      ld r = 0;
      for (tx::index_t q = 0; q < batches; ++q)
        for (tx::index_t i = 0; i < n; ++i)
          for (tx::index_t c = 0; c < k; ++c) {
            ld s = 0, mag = 0;
            for (tx::index_t j = 0; j < n; ++j) s += at(m, q, i, j) * at(x, q, j, c), mag += std::fabs(at(m, q, i, j) * at(x, q, j, c));
            r = std::max(r, std::fabs(s - 2 * at(rhs, q, i, c)) / (mag + 1));
          }
      CHECK_MESSAGE(r <= tol * 10, "lu_solve " << tx::dtype_name_v<T> << ": A X - B relative " << static_cast<double>(r));
    }
  } else if constexpr (std::is_same_v<Op, tx::op::cholesky>) {
    const tx::tensor<T, 3> l = on<B>::down(tx::linalg::cholesky(a_view));
    const ld r = worst([&](tx::index_t q) {
      ld e = 0;
      for (tx::index_t i = 0; i < n; ++i) {
        if (!(at(l, q, i, i) > 0)) e = 1;
        for (tx::index_t j = 0; j < n; ++j) {
          if (j > i && at(l, q, i, j) != 0) e = 1;
          if (j > i) continue;
          ld s = 0, mag = 0;
          for (tx::index_t c = 0; c < n; ++c) s += at(l, q, i, c) * at(l, q, j, c), mag += std::fabs(at(l, q, i, c) * at(l, q, j, c));
          e = std::max(e, std::fabs(s - at(a, q, i, j)) / (mag + 1));
        }
      }
      return e;
    });
    CHECK_MESSAGE(r <= tol, "cholesky " << tx::dtype_name_v<T> << ": L Lᵀ - A relative " << static_cast<double>(r));
  } else {
    const bool triangular = std::is_same_v<Op, tx::op::solve_triangular>;
    for (const bool upper : {false, true}) {
      if (!triangular && upper) break;
      const tx::tensor<T, 3> x = [&] {
        if constexpr (std::is_same_v<Op, tx::op::solve>) return on<B>::down(tx::linalg::solve(a_view, rhs_dev * T(2)));
        else return on<B>::down(tx::linalg::solve_triangular(a_view, rhs_dev * T(2), upper ? tx::linalg::triangle::upper : tx::linalg::triangle::lower));
      }();
      const ld r = worst([&](tx::index_t q) {
        ld e = 0;
        for (tx::index_t i = 0; i < n; ++i)
          for (tx::index_t c = 0; c < k; ++c) {
            ld s = 0, mag = 0;
            for (tx::index_t j = 0; j < n; ++j) {
              if (triangular && (upper ? j < i : j > i)) continue;  // the triangle not read
              s += at(a, q, i, j) * at(x, q, j, c);
              mag += std::fabs(at(a, q, i, j) * at(x, q, j, c));
            }
            e = std::max(e, std::fabs(s - 2 * at(rhs, q, i, c)) / (mag + 1));
          }
        return e;
      });
      CHECK_MESSAGE(r <= tol, Op::name << (upper ? " upper " : " ") << tx::dtype_name_v<T> << ": A X - B relative " << static_cast<double>(r));
    }
  }
}

// ---- convolution and pooling (texpr/conv.hpp) -------------------------------------------------------------

template <class Op> inline constexpr bool is_window = std::is_base_of_v<tx::op::window_op, Op>;

/// Each window op on one case that exercises every option at once (groups 2, unequal strides, asymmetric padding,
/// dilation; the pools with padding not counted), against the direct loops of core/conv_reference.hpp in long
/// double, relative to the largest value: 1e-5 (float), 1e-12 (double). The gradient ops are built as tx::grad
/// builds them, over the forward node's window.
template <class B, class Op, class T> void check_window() {
  namespace cr = conv_reference;
  const ld tol = std::is_same_v<T, float> ? 1e-5L : 1e-12L;
  std::mt19937_64 g(11);
  std::normal_distribution<double> nd;
  auto filled = [&](const tx::shape_t<4>& s) {
    tx::tensor<T, 4> t(s);
    for (tx::index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(nd(g));
    return t;
  };
  const auto x = filled({2, 4, 9, 8}), w = filled({6, 2, 3, 2});
  const auto xd = on<B>::up(x), wd = on<B>::up(w);
  const auto rx = conv_reference::from(x), rw = conv_reference::from(w);
  const tx::conv2d_options o{.stride = {2, 1}, .padding = {1, 0, 2, 1}, .dilation = {1, 2}, .groups = 2};
  const cr::window k{3, 2, 2, 1, 1, 0, 2, 1, 1, 2, 2, true};
  const bool avg = std::is_same_v<Op, tx::op::avg_pool2d> || std::is_same_v<Op, tx::op::avg_pool2d_grad>;
  const tx::pool2d_options po{.kernel = {3, 2}, .stride = {2, 1}, .padding = {1, 0, 1, 1}, .dilation = {1, avg ? 1 : 2}, .count_include_pad = false};
  const cr::window pk{3, 2, 2, 1, 1, 0, 1, 1, 1, avg ? 1 : 2, 1, false};
  const auto conv = tx::conv2d(xd, wd, o);
  const auto gy = filled(conv.shape());
  const auto pool = [&] {
    if constexpr (std::is_same_v<Op, tx::op::avg_pool2d> || std::is_same_v<Op, tx::op::avg_pool2d_grad>) return tx::avg_pool2d(xd, po);
    else return tx::max_pool2d(xd, po);
  }();
  const auto gp = filled(pool.shape());
  const auto rgy = cr::from(gy), rgp = cr::from(gp);
  cr::image want, rdx, rdw;
  const tx::tensor<T, 4> got = [&] {
    namespace d = tx::detail;
    if constexpr (std::is_same_v<Op, tx::op::conv2d>) {
      want = cr::conv2d(rx, rw, k);
      return on<B>::down(conv);
    } else if constexpr (std::is_same_v<Op, tx::op::conv2d_input_grad>) {
      cr::conv2d_grads(rx, rw, rgy, k, want, rdw);
      return on<B>::down(d::make_window<Op>(conv.window(), x.shape(), on<B>::up(gy), wd));
    } else if constexpr (std::is_same_v<Op, tx::op::conv_transpose2d>) {
      // the transpose of the convolution from x's shape: gy's shape to x's, with w read as (C_in, C_out / groups, ..)
      const tx::conv_transpose2d_options t{.stride = {2, 1}, .padding = {1, 0, 2, 1}, .output_padding = {1, 0}, .dilation = {1, 2}, .groups = 2};
      const auto node = tx::conv_transpose2d(on<B>::up(gy), wd, t);
      const tx::shape_t<4> s = node.shape();
      cr::conv2d_grads(cr::image(s[0], s[1], s[2], s[3]), rw, rgy, k, want, rdw);
      return on<B>::down(node);
    } else if constexpr (std::is_same_v<Op, tx::op::conv2d_weight_grad>) {
      cr::conv2d_grads(rx, rw, rgy, k, rdx, want);
      return on<B>::down(d::make_window<Op>(conv.window(), w.shape(), xd, on<B>::up(gy)));
    } else if constexpr (std::is_same_v<Op, tx::op::max_pool2d>) {
      want = cr::max_pool2d(rx, pk);
      return on<B>::down(pool);
    } else if constexpr (std::is_same_v<Op, tx::op::max_pool2d_grad>) {
      cr::max_pool2d(rx, pk, &rgp, &want);
      return on<B>::down(d::make_window<Op>(pool.window(), x.shape(), xd, on<B>::up(gp)));
    } else if constexpr (std::is_same_v<Op, tx::op::avg_pool2d>) {
      want = cr::avg_pool2d(rx, pk);
      return on<B>::down(pool);
    } else if constexpr (std::is_same_v<Op, tx::op::adaptive_avg_pool2d>) {
      want = cr::adaptive_avg_pool2d(rx, 4, 3);  // 9 -> 4 rows: overlapping cells; 8 -> 3 columns
      return on<B>::down(tx::adaptive_avg_pool2d(xd, {4, 3}));
    } else if constexpr (std::is_same_v<Op, tx::op::adaptive_avg_pool2d_grad>) {
      const auto grid = filled({2, 4, 4, 3});
      const auto rgrid = cr::from(grid);
      cr::adaptive_avg_pool2d(rx, 4, 3, &rgrid, &want);
      return on<B>::down(d::make_window<Op>(d::window2d{}, x.shape(), on<B>::up(grid)));
    } else {
      static_assert(std::is_same_v<Op, tx::op::avg_pool2d_grad>, "a window op without a check");
      cr::avg_pool2d(rx, pk, &rgp, &want);
      return on<B>::down(d::make_window<Op>(pool.window(), x.shape(), on<B>::up(gp)));
    }
  }();
  const ld r = cr::relative_error(got, want);
  CHECK_MESSAGE(r <= tol, Op::name << " " << tx::dtype_name_v<T> << ": relative error " << static_cast<double>(r));
}

/// batch_norm (training: values and the one update of the running statistics) and batch_norm_stats (both parts,
/// training and eval) against loops in long double on x (3, 4, 5, 2) around a mean of 2: relative 1e-5 (float),
/// 1e-12 (double).
template <class B, class Op, class T> void check_batch_norm() {
  const ld tol = std::is_same_v<T, float> ? 1e-5L : 1e-12L;
  std::mt19937_64 g(12);
  std::normal_distribution<double> nd;
  tx::tensor<T, 4> x({3, 4, 5, 2});
  for (tx::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<T>(2 + nd(g));
  tx::tensor<T, 1> w({4}), b({4}), rm({4}), rv({4});
  for (tx::index_t c = 0; c < 4; ++c) {
    w.data()[c] = static_cast<T>(nd(g));
    b.data()[c] = static_cast<T>(nd(g));
    rm.data()[c] = static_cast<T>(nd(g));
    rv.data()[c] = static_cast<T>(0.5 + 0.25 * c);
  }
  const tx::index_t per = 3 * 5 * 2;
  std::vector<ld> mean(4, 0), var(4, 0);
  for (tx::index_t c = 0; c < 4; ++c) {
    for (tx::index_t n = 0; n < 3; ++n)
      for (tx::index_t s = 0; s < 10; ++s) mean[c] += x.data()[(n * 4 + c) * 10 + s];
    mean[c] /= per;
    for (tx::index_t n = 0; n < 3; ++n)
      for (tx::index_t s = 0; s < 10; ++s) var[c] += (x.data()[(n * 4 + c) * 10 + s] - mean[c]) * (x.data()[(n * 4 + c) * 10 + s] - mean[c]);
    var[c] /= per;
  }
  ld err = 0, scale = 0;
  auto compare = [&](ld got, ld want) {
    err = std::max(err, std::fabs(got - want));
    scale = std::max(scale, std::fabs(want));
  };
  auto xd = on<B>::up(x);
  if constexpr (std::is_same_v<Op, tx::op::batch_norm>) {
    std::vector<ld> m0(rm.data(), rm.data() + 4), v0(rv.data(), rv.data() + 4);
    const auto y = on<B>::down(tx::batch_norm(xd, on<B>::up(w), on<B>::up(b), rm, rv, {.training = true, .momentum = 0.25, .eps = 1e-3}));
    for (tx::index_t i = 0; i < x.size(); ++i) {
      const tx::index_t c = i / 10 % 4;
      compare(y.data()[i], (x.data()[i] - mean[c]) / std::sqrt(var[c] + 1e-3L) * w.data()[c] + b.data()[c]);
    }
    for (tx::index_t c = 0; c < 4; ++c) {
      compare(rm.data()[c], 0.75L * m0[c] + 0.25L * mean[c]);
      compare(rv.data()[c], 0.75L * v0[c] + 0.25L * var[c] * per / (per - 1));
    }
  } else {
    static_assert(std::is_same_v<Op, tx::op::batch_norm_stats>, "a batch norm op without a check");
    for (const bool training : {true, false}) {
      const auto node = tx::batch_norm(xd, on<B>::up(w), on<B>::up(b), rm, rv, {.training = training, .eps = 1e-3});
      const auto m = on<B>::down(tx::detail::batch_norm_statistic(node, xd, 0));
      const auto r = on<B>::down(tx::detail::batch_norm_statistic(node, xd, 1));
      for (tx::index_t c = 0; c < 4; ++c) {
        compare(m.data()[c], training ? mean[c] : ld(rm.data()[c]));
        compare(r.data()[c], 1 / std::sqrt((training ? var[c] : ld(rv.data()[c])) + 1e-3L));
      }
    }
  }
  const ld r = err / scale;
  CHECK_MESSAGE(r <= tol, Op::name << " " << tx::dtype_name_v<T> << ": relative error " << static_cast<double>(r));
}

// ---- discrete Fourier transforms (texpr/fft.hpp) -----------------------------------------------------------

template <class Op> inline constexpr bool is_fft = std::is_base_of_v<tx::op::fft_op, Op>;

/// fft, ifft, rfft, irfft (T the operand's dtype): a 3 x 7 operand transformed along its last axis (rows) and along
/// axis 0 (strided lines), at n = 7 (odd) and n = 9 (padded; irfft: 4 of the 5 values, then 5), against the
/// defining sums in long double, relative L2: 1e-5 (complex64, float), 1e-12 (complex128, double).
template <class B, class Op, class T> void check_fft() {
  using real = typename tx::detail::real_of<T>::type;
  using lc = std::complex<ld>;
  constexpr bool c2r = std::is_same_v<Op, tx::op::irfft>, r2c = std::is_same_v<Op, tx::op::rfft>;
  const ld tol = std::is_same_v<real, float> ? 1e-5L : 1e-12L, pi = std::acos(ld(-1));
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> ud(-1, 1);
  tx::tensor<T, 2> x({3, c2r ? 5 : 7});
  for (tx::index_t i = 0; i < x.size(); ++i) {
    if constexpr (tx::is_complex_v<T>) x.data()[i] = T(static_cast<real>(ud(g)), static_cast<real>(ud(g)));
    else x.data()[i] = static_cast<T>(ud(g));
  }
  const auto x_dev = on<B>::up(x);
  auto value = [&](tx::index_t line, tx::index_t i, std::size_t axis) -> lc {  // x's element i of a line, 0 past the end
    const tx::index_t m = x.shape()[axis];
    if (i >= m) return 0;
    const T v = axis == 1 ? x(line, i) : x(i, line);
    if constexpr (tx::is_complex_v<T>) return {v.real(), v.imag()};
    else return {static_cast<ld>(v), 0};
  };
  ld err = 0, mag = 0;
  for (const std::size_t axis : {std::size_t(1), std::size_t(0)}) {
    for (const tx::index_t n : {tx::index_t(c2r ? 8 : 7), tx::index_t(9)}) {
      const tx::index_t lines = x.shape()[1 - axis], out_n = r2c ? n / 2 + 1 : n;
      const auto a = static_cast<tx::index_t>(axis);
      auto got = [&] {
        if constexpr (std::is_same_v<Op, tx::op::fft>) return on<B>::down(tx::fft::fft(x_dev, n, a));
        else if constexpr (std::is_same_v<Op, tx::op::ifft>) return on<B>::down(tx::fft::ifft(x_dev, n, a));
        else if constexpr (r2c) return on<B>::down(tx::fft::rfft(x_dev, n, a));
        else return on<B>::down(tx::fft::irfft(x_dev, n, a));
      }();
      for (tx::index_t l = 0; l < lines; ++l)
        for (tx::index_t k = 0; k < out_n; ++k) {
          lc want = 0;
          for (tx::index_t j = 0; j < n; ++j) {
            if constexpr (c2r) {  // the Hermitian spectrum from n / 2 + 1 values (0's and Nyquist's imaginary parts dropped)
              const tx::index_t f = j <= n / 2 ? j : n - j;
              lc v = f <= n / 2 ? value(l, f, axis) : lc(0);
              if (f == 0 || 2 * f == n) v = v.real();
              if (j > n / 2) v = std::conj(v);
              want += v * std::polar(ld(1), 2 * pi * ld(j * k % n) / ld(n)) / ld(n);
            } else {
              const ld sign = std::is_same_v<Op, tx::op::ifft> ? 1 : -1;
              want += value(l, j, axis) * std::polar(ld(1), sign * 2 * pi * ld(j * k % n) / ld(n)) /
                      (std::is_same_v<Op, tx::op::ifft> ? ld(n) : ld(1));
            }
          }
          const auto v = axis == 1 ? got(l, k) : got(k, l);
          lc have;
          if constexpr (c2r) have = {static_cast<ld>(v), 0};
          else have = {static_cast<ld>(v.real()), static_cast<ld>(v.imag())};
          err += std::norm(have - want);
          mag += std::norm(want);
        }
    }
  }
  const ld r = std::sqrt(err / mag);
  CHECK_MESSAGE(r <= tol, Op::name << " " << tx::dtype_name_v<T> << ": relative L2 error " << static_cast<double>(r));
}

// ---- the whole table ----------------------------------------------------------------------------------------

/// Runs the check of every row of Rows for which Select<index> holds (the cuda suite splits the table in parts);
/// returns the number of (op, dtype) entries checked.
template <class B, class Rows, class Select> std::size_t check_rows(Select select) {
  std::size_t checked = 0;
  // Elementwise ops, chained per dtype (the chain check counts its ops).
  if (select(0)) {
    tx::detail::for_each_type(typename tx::detail::set_list<std::remove_cvref_t<decltype(tx::all_dtypes)>>::type{}, [&]<class T>() {
      checked += check_chain<B, T>(typename chain_ops<Rows, T, false>::type{});
      checked += check_chain<B, T>(typename chain_ops<Rows, T, true>::type{});
    });
  }
  tx::detail::for_each_indexed(Rows{}, [&]<class Row, std::size_t I>() {
    if (!select(I + 1)) return;
    tx::detail::for_each_type(typename tx::detail::set_list<typename Row::dtypes>::type{}, [&]<class T>() {
      using Op = typename Row::template op_for<T>;
      if constexpr (is_fft<Op>) {
        if constexpr (tx::has_kernel_for<Op, T, B>) {
          check_fft<B, Op, T>();
          ++checked;
        }
      } else if constexpr (complex_check::complex_row<Op, T> && !complex_check::moves_data<Op>) {
        // the complex dtypes are not in the chains (their reference is std::complex<long double>)
        if constexpr (tx::has_kernel_for<Op, T, B>) {
          complex_check::check_row<B, on<B>, Op, T>();
          ++checked;
        }
      } else if constexpr (is_chained<Op>) {
        // counted by its dtype's chain
      } else if constexpr (!tx::has_kernel_for<Op, T, B>) {
        // needs a newer GPU than one this unit is built for: evaluating it would not compile
      } else if constexpr (is_where<Op>) {
        check_where<B, T>();
        ++checked;
      } else if constexpr (is_cast<Op>) {
        check_cast<B, T>();
        ++checked;
      } else if constexpr (is_copy<Op>) {
        check_copy<B, T>();
        ++checked;
      } else if constexpr (tx::op::category_v<Op> == tx::op::kind::generator) {
        check_generator<B, Op, T>();
        ++checked;
      } else if constexpr (tx::op::category_v<Op> == tx::op::kind::layout) {
        check_layout<B, Op, T>();
        ++checked;
      } else if constexpr (tx::detail::reduction_op_tag<Op>) {
        check_reduction<B, Op, T>();
        ++checked;
      } else if constexpr (std::is_same_v<Op, tx::op::linear_recurrence>) {
        check_recurrence<B, T>();
        ++checked;
      } else if constexpr (is_scan<Op>) {
        check_scan<B, Op, T>();
        ++checked;
      } else if constexpr (is_ordering<Op>) {
        check_ordering<B, Op, T>();
        ++checked;
      } else if constexpr (is_linalg<Op>) {
        check_linalg<B, Op, T>();
        ++checked;
      } else if constexpr (is_window<Op>) {
        check_window<B, Op, T>();
        ++checked;
      } else if constexpr (std::is_same_v<Op, tx::op::batch_norm> || std::is_same_v<Op, tx::op::batch_norm_stats>) {
        check_batch_norm<B, Op, T>();
        ++checked;
      } else if constexpr (std::is_base_of_v<tx::op::indexing_op, Op> || std::is_base_of_v<tx::op::scatter_op, Op>) {
        check_indexing<B, Op, T>();
        ++checked;
      } else if constexpr (std::is_base_of_v<tx::op::composite_op, Op>) {
        check_composite<B, Op, T>();
        ++checked;
      } else if constexpr (std::is_same_v<Op, tx::op::concat>) {
        check_concat<B, T>();
        ++checked;
      } else if constexpr (std::is_same_v<Op, tx::op::matmul>) {
        check_matmul<B, T>();
        ++checked;
      } else if constexpr (std::is_same_v<Op, tx::op::scaled_matmul>) {
        check_scaled_matmul<B, T>();
        ++checked;
      } else {
        static_assert(tx::detail::always_false_v<Op>, "a registry row without a check");
      }
    });
  });
  return checked;
}

} // namespace regcheck

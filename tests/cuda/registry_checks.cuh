// The per-line checks of the cuda registry test: every (op, dtype) runs on the device and is compared with
// the host backend's result, or with the long double reference where the host has no kernel for that
// (op, dtype) (half, bfloat16). Line i of the table belongs to part i % registry_parts; each part is its own
// nvcc translation unit (test_registry_part.cu, compiled once per part by CMake), so that the parts compile in
// parallel: one unit with every line took over 12 CPU minutes, too long for the GPU script's build step.
#pragma once

#include "cuda/support.cuh"

#include <string>

namespace cutest {

using test::ld;

// Tolerances: those of the host suite (test::tolerance): float 4e-6 and double 1e-13 relative, half 2e-3
// and bfloat16 1.6e-2 relative to max(|reference|, scale) (about two units in the last place), integers
// and bool exact.

/// Compares a device result with the host backend's (when it has a kernel) or the long double reference.
template <class T> void require_close(T got, T host, ld want, bool use_host, ld scale, const char* what, tx::index_t i) {
  if (use_host) REQUIRE_MESSAGE(test::close(got, test::wide(host), scale), what, " element ", i, " vs host backend");
  else REQUIRE_MESSAGE(test::close(got, want, scale), what, " element ", i, " vs long double reference");
}

template <class Op, class T> void check_elementwise() {
  using R = test::ref<Op>;
  constexpr bool host_has = tx::has_kernel<Op, T, tx::host>;
  // the shared reference's domains are written for the host dtypes; 16-bit floats use float's
  const auto d = R::template dom<std::conditional_t<tx::is_float16_v<T>, float, T>>();
  if constexpr (R::arity == 1) {
    // dense and odd-sized: the vectorised body plus its tail
    auto a = test::random<T, 1>({1027}, d.lo, d.hi);
    const auto got = tx::to_host(tx::map<Op>(dev(a)));
    REQUIRE(got.shape() == a.shape());
    tx::tensor<typename decltype(got)::value_type, 1> host;
    if constexpr (host_has) host = tx::eval(tx::map<Op>(a));
    for (tx::index_t i = 0; i < a.size(); ++i)
      require_close(got.data()[i], host_has ? host.data()[i] : got.data()[i], R::f(a.data()[i]), host_has, 1, "dense", i);
    // a transposed view: the strided kernel
    auto b = test::random<T, 2>({6, 11}, d.lo, d.hi);
    auto db = dev(b);
    const tx::view<const T, 2, tx::cuda> bt(db.data(), {11, 6}, {1, 11});
    const auto got_t = tx::to_host(tx::map<Op>(bt));
    for (tx::index_t i = 0; i < 11; ++i)
      for (tx::index_t j = 0; j < 6; ++j) {
        const T x = b(j, i);
        REQUIRE_MESSAGE(test::close(got_t(i, j), R::f(x)), "transposed input ", test::wide(x));
      }
  } else {
    auto a = test::random<T, 1>({1027}, d.lo, d.hi);
    auto b = test::random<T, 1>({1027}, d.lo, d.hi);
    if constexpr (std::is_same_v<Op, tx::op::divide> && !test::is_int<T>)
      for (tx::index_t i = 0; i < b.size(); ++i)
        if (std::fabs(test::wide(b.data()[i])) < 0.05) b.data()[i] = T(1);
    const auto got = tx::to_host(tx::map<Op>(dev(a), dev(b)));
    tx::tensor<typename decltype(got)::value_type, 1> host;
    if constexpr (host_has) host = tx::eval(tx::map<Op>(a, b));
    for (tx::index_t i = 0; i < a.size(); ++i)
      require_close(got.data()[i], host_has ? host.data()[i] : got.data()[i], R::f(a.data()[i], b.data()[i]), host_has,
                    1, "dense", i);
    // rank-3 broadcasting: the strided kernel
    auto x = test::random<T, 3>({4, 1, 5}, d.lo, d.hi);
    auto y = test::random<T, 2>({3, 5}, d.lo, d.hi);
    if constexpr (std::is_same_v<Op, tx::op::divide> && !test::is_int<T>)
      for (tx::index_t i = 0; i < y.size(); ++i)
        if (std::fabs(test::wide(y.data()[i])) < 0.05) y.data()[i] = T(1);
    const auto got3 = tx::to_host(tx::map<Op>(dev(x), dev(y)));
    const tx::shape_t<3> out{4, 3, 5};
    REQUIRE(got3.shape() == out);
    for (tx::index_t i = 0; i < got3.size(); ++i) {
      const auto idx = test::unravel(i, out);
      const T u = test::at_broadcast(x, idx), v = test::at_broadcast(y, idx);
      REQUIRE_MESSAGE(test::close(got3.data()[i], R::f(u, v)), "broadcast inputs ", test::wide(u), ", ", test::wide(v));
    }
  }
}

template <class T> void check_where() {
  auto c = test::random<bool, 2>({3, 4});
  auto a = test::random<T, 2>({3, 4});
  auto b = test::random<T, 1>({4});
  const auto got = tx::to_host(tx::where(dev(c), dev(a), dev(b)));
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < 4; ++j) REQUIRE(test::wide(got(i, j)) == test::wide(c(i, j) ? a(i, j) : b(j)));
  auto c1 = test::random<bool, 1>({1001});
  auto a1 = test::random<T, 1>({1001});
  auto b1 = test::random<T, 1>({1001});
  const auto got1 = tx::to_host(tx::where(dev(c1), dev(a1), dev(b1)));
  for (tx::index_t i = 0; i < 1001; ++i) REQUIRE(test::wide(got1(i)) == test::wide(c1(i) ? a1(i) : b1(i)));
}

template <class To, class From> void check_cast_from() {
  tx::tensor<From, 1> src({67});
  for (tx::index_t i = 0; i < 63; ++i) src.data()[i] = test::uniform<From>(-300, 300);
  if constexpr (std::is_floating_point_v<From>) {
    src.data()[63] = std::numeric_limits<From>::quiet_NaN();
    src.data()[64] = std::numeric_limits<From>::infinity();
    src.data()[65] = static_cast<From>(-1e30);
    src.data()[66] = static_cast<From>(0.5);
  }
  const auto got = tx::to_host(tx::cast<To>(dev(src)));
  for (tx::index_t i = 0; i < src.size(); ++i) {
    const ld want = test::convert_ref<To>(test::wide(src.data()[i]));
    // int64 -> float rounds; double -> 16-bit float rounds twice (through float), so allow the dtype's tolerance
    const ld tol = std::is_same_v<To, float> ? 1e-7L : (tx::is_float16_v<To> ? test::tolerance<To>() : 0);
    REQUIRE_MESSAGE(test::close(got.data()[i], want, 1, tol), "cast of ", test::wide(src.data()[i]));
  }
}

template <class To> void check_cast() {
  check_cast_from<To, float>();
  check_cast_from<To, double>();
  check_cast_from<To, std::int32_t>();
  check_cast_from<To, std::int64_t>();
  check_cast_from<To, bool>();
  check_cast_from<To, tx::half>();
}

/// Reductions over everything and along every axis of a device tensor, against the host backend or the
/// long double reference.
template <class Op, class T, std::size_t R> void check_reduction_on(const tx::tensor<T, R>& x, const char* what) {
  constexpr bool host_has = tx::has_kernel<Op, T, tx::host>;
  INFO(what, " shape ", tx::to_string(x.shape()));
  auto dx = dev(x);
  ld scale = 0;
  const ld want = cutest::reduce_ref<Op, T>(cutest::widened(x), scale);
  const T got = cutest::reduce<Op>(dx).item();
  if constexpr (host_has) {
    const T host = cutest::reduce<Op>(x).item();
    REQUIRE_MESSAGE(test::close(got, test::wide(host), scale), "all elements: device ", test::wide(got), " host ",
                    test::wide(host));
  }
  REQUIRE_MESSAGE(test::close(got, want, scale), "all elements: device ", test::wide(got), " reference ", want);
  for (std::size_t axis = 0; axis < R; ++axis) {
    const auto d_out = tx::to_host(cutest::reduce<Op>(dx, static_cast<tx::index_t>(axis)));
    // (host axis reductions of rank 1 are left out: g++ 12 -O3 reports a false -Warray-bounds in the host
    // executor there; the long double reference still checks them)
    constexpr bool host_axis = host_has && R > 1;
    tx::tensor<T, R - 1> h_out;
    if constexpr (host_axis) h_out = tx::eval(cutest::reduce<Op>(x, static_cast<tx::index_t>(axis)));
    for (tx::index_t o = 0; o < d_out.size(); ++o) {
      ld s = 0;
      const ld w = cutest::reduce_ref<Op, T>(cutest::line(x, axis, o), s);
      if constexpr (host_axis)
        REQUIRE_MESSAGE(test::close(d_out.data()[o], test::wide(h_out.data()[o]), s), "axis ", axis, " output ", o,
                        " vs host backend");
      REQUIRE_MESSAGE(test::close(d_out.data()[o], w, s), "axis ", axis, " output ", o, " vs reference ", w);
    }
  }
}

template <class Op, class T> void check_reduction() {
  constexpr bool prod = std::is_same_v<Op, tx::op::prod>;
  const double lo = prod ? (test::is_int<T> ? -3 : 0.99) : (test::is_int<T> ? -1e6 : -2);
  const double hi = prod ? (test::is_int<T> ? 3 : 1.01) : (test::is_int<T> ? 1e6 : 2);
  // integer products read factors that are never 0 (+-1, +-3, a few +-2), so they wrap and are not 0 = 0
  constexpr bool factors = prod && test::is_int<T>;
  const auto input = [&]<std::size_t R>(const tx::shape_t<R>& s) {
    return factors ? test::product_factors<T, R>(s) : test::random<T, R>(s, lo, hi);
  };
  // rank 1: one long row, reduced in chunks; CUB for the whole
  check_reduction_on<Op>(input(tx::shape_t<1>{9001}), "rank 1");
  // rank 2: long rows (block per row, split in chunks) / a long strided axis (column tiles, split in chunks)
  check_reduction_on<Op>(input(tx::shape_t<2>{3, 9000}), "rank 2 long rows");
  check_reduction_on<Op>(input(tx::shape_t<2>{1500, 5}), "rank 2 long columns");
  // rank 3: short rows (a warp per row) and column tiles with outer and inner extents
  check_reduction_on<Op>(input(tx::shape_t<3>{4, 33, 70}), "rank 3");
  // a transposed (non-dense) view of device memory: the strided readers
  auto x = input(tx::shape_t<2>{40, 70});
  auto dx = dev(x);
  const tx::view<const T, 2, tx::cuda> xt(dx.data(), {70, 40}, {1, 70});
  const auto ref = cutest::transposed(x);
  ld scale = 0;
  const ld want = cutest::reduce_ref<Op, T>(cutest::widened(ref), scale);
  REQUIRE(test::close(T(cutest::reduce<Op>(xt).item()), want, scale));
  for (std::size_t axis = 0; axis < 2; ++axis) {
    const auto got = tx::to_host(cutest::reduce<Op>(xt, static_cast<tx::index_t>(axis)));
    for (tx::index_t o = 0; o < got.size(); ++o) {
      ld s = 0;
      const ld w = cutest::reduce_ref<Op, T>(cutest::line(ref, axis, o), s);
      REQUIRE_MESSAGE(test::close(got.data()[o], w, s), "transposed view, axis ", axis, " output ", o);
    }
  }
}

template <class T, std::size_t RA, std::size_t RB>
void check_matmul_shapes(const tx::shape_t<RA>& as, const tx::shape_t<RB>& bs, double lo, double hi) {
  auto a = test::random<T, RA>(as, lo, hi);
  auto b = test::random<T, RB>(bs, lo, hi);
  const auto c = tx::to_host(tx::matmul(dev(a), dev(b)));
  constexpr std::size_t RC = RA > RB ? RA : RB;
  const tx::index_t batch = RC == 3 ? c.shape()[0] : 1;
  const tx::index_t m = as[RA - 2], k = as[RA - 1], n = bs[RB - 1];
  REQUIRE(c.shape()[RC - 2] == m);
  REQUIRE(c.shape()[RC - 1] == n);
  for (tx::index_t q = 0; q < batch; ++q)
    for (tx::index_t i = 0; i < m; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        ld s = 0, mag = 0;
        for (tx::index_t p = 0; p < k; ++p) {
          const ld x = test::wide(a.data()[(RA == 3 ? q * m * k : 0) + i * k + p]);
          const ld y = test::wide(b.data()[(RB == 3 ? q * k * n : 0) + p * n + j]);
          s += x * y;
          mag += std::fabs(x * y);
        }
        const T got = c.data()[(q * m + i) * n + j];
        REQUIRE_MESSAGE(test::close(got, s, mag), "batch ", q, " C(", i, ", ", j, ") = ", test::wide(got), " want ", s);
      }
}

template <class T> void check_matmul() {
  check_matmul_shapes<T>(tx::shape_t<2>{33, 17}, tx::shape_t<2>{17, 45}, -4, 4);
  check_matmul_shapes<T>(tx::shape_t<3>{3, 33, 17}, tx::shape_t<2>{17, 45}, -4, 4);   // B shared by every batch
  check_matmul_shapes<T>(tx::shape_t<2>{33, 17}, tx::shape_t<3>{3, 17, 45}, -4, 4);   // A shared by every batch
  check_matmul_shapes<T>(tx::shape_t<3>{2, 64, 200}, tx::shape_t<3>{2, 200, 96}, -2, 2);
}

/// Runs the check of one registry line.
template <class Op, class T> void check_line() {
  if constexpr (is_reduction_v<Op>) check_reduction<Op, T>();
  else if constexpr (std::is_same_v<Op, tx::op::matmul>) check_matmul<T>();
  else if constexpr (std::is_same_v<Op, tx::op::where>) check_where<T>();
  else if constexpr (requires { typename Op::target; }) check_cast<typename Op::target>();
  else check_elementwise<Op, T>();
}

/// Number of parts the registry test is split into (tests/cuda/CMakeLists.txt builds one unit per part).
inline constexpr std::size_t registry_parts = TEXPR_CUDA_REGISTRY_PARTS;

/// Calls f.template operator()<Entry, I>() for each entry of the cuda registry with its line index I.
template <class F, class... E, std::size_t... I>
void for_each_line(tx::detail::type_list<E...>, std::index_sequence<I...>, F&& f) {
  (f.template operator()<E, I>(), ...);
}
template <class F> void for_each_line(F&& f) {
  for_each_line(tx::cuda_registry{}, std::make_index_sequence<tx::cuda_registry::size>{}, std::forward<F>(f));
}

/// Checks the registry lines of part Part (line i is in part i % registry_parts); returns how many.
template <std::size_t Part> std::size_t check_registry_part() {
  std::size_t tested = 0;
  for_each_line([&]<class Entry, std::size_t I>() {
    using Op = typename Entry::op_type;
    using T = typename Entry::value_type;
    static_assert(std::is_same_v<typename Entry::backend, tx::cuda>);
    if constexpr (I % registry_parts == Part) {
      INFO("registry line ", I, ": op ", std::string(Op::name), " dtype ", std::string(tx::dtype_name_v<T>));
      check_line<Op, T>();
      ++tested;
    }
  });
  return tested;
}

/// Reduction and matmul lines of the cuda table, counted by kind (independently of the parts).
constexpr std::size_t reduction_and_matmul_lines() {
  std::size_t n = 0;
  tx::detail::for_each_type(tx::cuda_registry{}, [&]<class Entry>() {
    using Op = typename Entry::op_type;
    if constexpr (is_reduction_v<Op> || std::is_same_v<Op, tx::op::matmul>) ++n;
  });
  return n;
}
// Guards against lines silently leaving the table (the parts only check that they ran what it holds).
static_assert(reduction_and_matmul_lines() == 32, "5 reductions x 6 dtypes, less integer mean (2), plus 4 matmul dtypes");
static_assert(tx::cuda_registry::size - reduction_and_matmul_lines() > 120, "elementwise, where and cast lines");

/// Lines in part Part: ceil or floor of size / parts, counted independently of the loop above.
template <std::size_t Part> constexpr std::size_t registry_part_size() {
  return tx::cuda_registry::size / registry_parts + (Part < tx::cuda_registry::size % registry_parts ? 1 : 0);
}

} // namespace cutest

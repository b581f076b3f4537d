// Every line of the host registry gets a numeric test against the long double reference; the list of
// lines comes from the registry itself, so no kernel is registered untested.
#include "reference.hpp"

#include <string>

namespace {

using test::ld;

template <class Op> constexpr bool is_reduction_v =
    std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean> || std::is_same_v<Op, tx::op::max> ||
    std::is_same_v<Op, tx::op::min> || std::is_same_v<Op, tx::op::prod>;

template <class Op, class T> struct reduce_ref {
  static ld run(const std::vector<ld>& v) {
    if constexpr (std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean>) {
      if constexpr (test::is_int<T>) {
        test::i128 s = 0;
        for (ld x : v) s += static_cast<test::i128>(x);
        return static_cast<ld>(test::wrap<T>(s));
      } else {
        ld s = 0;
        for (ld x : v) s += x;
        if constexpr (std::is_same_v<Op, tx::op::mean>) return s / static_cast<ld>(v.size());
        return s;
      }
    } else if constexpr (std::is_same_v<Op, tx::op::prod>) {
      if constexpr (test::is_int<T>) {
        test::i128 p = 1;
        for (ld x : v) p = static_cast<test::i128>(test::wrap<T>(p * static_cast<test::i128>(x)));
        return static_cast<ld>(p);
      } else {
        ld p = 1;
        for (ld x : v) p *= x;
        return p;
      }
    } else {
      ld m = v.at(0);
      for (ld x : v) m = std::is_same_v<Op, tx::op::max> ? std::max(m, x) : std::min(m, x);
      return m;
    }
  }
};

// Elementwise lines: rank-3 broadcasting operands, results checked element by element.
template <class Op, class T> void check_elementwise() {
  using R = test::ref<Op>;
  const auto d = R::template dom<T>();
  const tx::shape_t<3> out{4, 3, 5};
  if constexpr (R::arity == 1) {
    auto a = test::random<T, 3>(out, d.lo, d.hi);
    auto got = tx::eval(tx::map<Op>(a));
    REQUIRE(got.shape() == out);
    for (tx::index_t i = 0; i < got.size(); ++i)
      REQUIRE_MESSAGE(test::close(got.data()[i], R::f(a.data()[i])), "input ", test::wide(a.data()[i]));
  } else {
    auto a = test::random<T, 3>({4, 1, 5}, d.lo, d.hi);
    auto b = test::random<T, 2>({3, 5}, d.lo, d.hi);
    if constexpr (std::is_same_v<Op, tx::op::divide> && !test::is_int<T>)
      for (tx::index_t i = 0; i < b.size(); ++i)
        if (std::fabs(test::wide(b.data()[i])) < 0.05) b.data()[i] = T(1);
    auto got = tx::eval(tx::map<Op>(a, b));
    REQUIRE(got.shape() == out);
    for (tx::index_t i = 0; i < got.size(); ++i) {
      const auto idx = test::unravel(i, out);
      const T x = test::at_broadcast(a, idx), y = test::at_broadcast(b, idx);
      REQUIRE_MESSAGE(test::close(got.data()[i], R::f(x, y)), "inputs ", test::wide(x), ", ", test::wide(y));
    }
  }
}

template <class T> void check_where() {
  auto c = test::random<bool, 2>({3, 4});
  auto a = test::random<T, 2>({3, 4});
  auto b = test::random<T, 1>({4});
  auto got = tx::eval(tx::where(c, a, b));
  for (tx::index_t i = 0; i < 3; ++i)
    for (tx::index_t j = 0; j < 4; ++j) REQUIRE(got(i, j) == (c(i, j) ? a(i, j) : b(j)));
}

template <class To, class From> void check_cast_from() {
  tx::tensor<From, 1> src({64});
  for (tx::index_t i = 0; i < 60; ++i) src.data()[i] = test::uniform<From>(-300, 300);
  if constexpr (std::is_floating_point_v<From>) {
    src.data()[60] = std::numeric_limits<From>::quiet_NaN();
    src.data()[61] = std::numeric_limits<From>::infinity();
    src.data()[62] = static_cast<From>(-1e30);
    src.data()[63] = static_cast<From>(0.5);
  }
  auto got = tx::eval(tx::cast<To>(src));
  for (tx::index_t i = 0; i < src.size(); ++i) {
    const ld want = test::convert_ref<To>(test::wide(src.data()[i]));
    const ld tol = std::is_same_v<To, float> ? 1e-7L : 0;  // int64 -> float rounds
    REQUIRE_MESSAGE(test::close(got.data()[i], want, 1, tol), "cast of ", test::wide(src.data()[i]));
  }
}

template <class To> void check_cast() {
  check_cast_from<To, float>();
  check_cast_from<To, double>();
  check_cast_from<To, std::int32_t>();
  check_cast_from<To, std::int64_t>();
  check_cast_from<To, bool>();
}

template <class Op, class T> void check_reduction() {
  const double lo = std::is_same_v<Op, tx::op::prod> ? (test::is_int<T> ? -3 : 0.5) : (test::is_int<T> ? -1e6 : -2);
  const double hi = std::is_same_v<Op, tx::op::prod> ? (test::is_int<T> ? 3 : 1.5) : (test::is_int<T> ? 1e6 : 2);
  const tx::shape_t<3> s{3, 4, 5};
  // Integer products: factors that are never 0 (a 0 in [-3, 3] would make the products 0 = 0).
  auto x = std::is_same_v<Op, tx::op::prod> && test::is_int<T> ? test::product_factors<T, 3>(s) : test::random<T, 3>(s, lo, hi);
  std::vector<ld> all;
  for (tx::index_t i = 0; i < x.size(); ++i) all.push_back(test::wide(x.data()[i]));
  const T total = tx::reduce<Op>(x).item();
  REQUIRE(test::close(total, reduce_ref<Op, T>::run(all), 1));
  for (tx::index_t axis = 0; axis < 3; ++axis) {
    auto got = tx::eval(tx::reduce<Op>(x, axis));
    for (tx::index_t o = 0; o < got.size(); ++o) {
      const auto oi = test::unravel(o, got.shape());
      std::vector<ld> line;
      for (tx::index_t l = 0; l < s[static_cast<std::size_t>(axis)]; ++l) {
        std::array<tx::index_t, 3> idx{};
        for (std::size_t d = 0, k = 0; d < 3; ++d) idx[d] = d == static_cast<std::size_t>(axis) ? l : oi[k++];
        line.push_back(test::wide(x(idx[0], idx[1], idx[2])));
      }
      REQUIRE_MESSAGE(test::close(got.data()[o], reduce_ref<Op, T>::run(line), 1), "axis ", axis, " output ", o);
    }
  }
}

template <class T> void check_matmul() {
  auto a = test::random<T, 3>({2, 5, 7}, -50, 50);
  auto b = test::random<T, 2>({7, 3}, -50, 50);
  auto c = tx::eval(tx::matmul(a, b));
  REQUIRE(c.shape() == tx::shape_t<3>{2, 5, 3});
  for (tx::index_t q = 0; q < 2; ++q)
    for (tx::index_t i = 0; i < 5; ++i)
      for (tx::index_t j = 0; j < 3; ++j) {
        ld s = 0, mag = 0;
        for (tx::index_t p = 0; p < 7; ++p) {
          s += test::wide(a(q, i, p)) * test::wide(b(p, j));
          mag += std::fabs(test::wide(a(q, i, p)) * test::wide(b(p, j)));
        }
        REQUIRE(test::close(c(q, i, j), s, mag));
      }
}

template <class Op, class T> void check_line() {
  if constexpr (is_reduction_v<Op>) check_reduction<Op, T>();
  else if constexpr (std::is_same_v<Op, tx::op::matmul>) check_matmul<T>();
  else if constexpr (std::is_same_v<Op, tx::op::where>) check_where<T>();
  else if constexpr (requires { typename Op::target; }) check_cast<typename Op::target>();
  else check_elementwise<Op, T>();
}

} // namespace

TEST_CASE("every host registry line has a passing numeric test") {
  std::size_t tested = 0;
  tx::detail::for_each_type(tx::host_registry{}, [&]<class Entry>() {
    using Op = typename Entry::op_type;
    using T = typename Entry::value_type;
    INFO("op ", std::string(Op::name), " dtype ", std::string(tx::dtype_name_v<T>));
    check_line<Op, T>();
    ++tested;
  });
  CHECK(tested == tx::host_registry::size);
  CHECK(tested > 100);
}

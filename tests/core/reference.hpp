// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Independent reference semantics for every built-in op, in long double (floats) or 128-bit integers
// wrapped back to the dtype (integers). Written from the documented semantics, not from texpr's functors.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "support.hpp"

namespace test {

template <class Op> struct ref;  // no definition: an op without a reference does not compile in the tests

struct domain {
  double lo, hi;
};

template <class T> constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Default input range per dtype: integers use their full range where wrap-around is the point.
template <class T> domain full_int_range() {
  if constexpr (is_int<T>)
    return {static_cast<double>(std::numeric_limits<T>::min()), static_cast<double>(std::numeric_limits<T>::max())};
  else
    return {-3, 3};  // only reached for floating dtypes (16-bit ones included) through the ternaries below
}

#define TEST_WRAPPING_BINARY(OP, EXPR_INT, EXPR_FLOAT)                                      \
  template <> struct ref<tx::op::OP> {                                                     \
    static constexpr int arity = 2;                                                        \
    template <class T> static domain dom() { return is_int<T> ? full_int_range<T>() : domain{-3, 3}; } \
    template <class T> static ld f(T a, T b) {                                             \
      if constexpr (is_int<T>) {                                                           \
        const i128 x = a, y = b;                                                       \
        return static_cast<ld>(wrap<T>(EXPR_INT));                                         \
      } else {                                                                             \
        const ld x = wide(a), y = wide(b);                                                 \
        return EXPR_FLOAT;                                                                 \
      }                                                                                    \
    }                                                                                      \
  };
TEST_WRAPPING_BINARY(add, x + y, x + y)
TEST_WRAPPING_BINARY(subtract, x - y, x - y)
TEST_WRAPPING_BINARY(multiply, x * y, x * y)
#undef TEST_WRAPPING_BINARY

template <> struct ref<tx::op::divide> {
  static constexpr int arity = 2;
  template <class T> static domain dom() { return is_int<T> ? domain{-20, 20} : domain{-3, 3}; }
  template <class T> static ld f(T a, T b) {
    if constexpr (is_int<T>) {
      if (b == 0) return 0;  // documented: x / 0 == 0
      const i128 q = static_cast<i128>(a) / static_cast<i128>(b);
      return static_cast<ld>(wrap<T>(q));  // min / -1 wraps to min
    } else {
      return wide(a) / wide(b);
    }
  }
};
template <> struct ref<tx::op::maximum> {
  static constexpr int arity = 2;
  template <class T> static domain dom() { return {-3, 3}; }
  template <class T> static ld f(T a, T b) {
    const ld x = wide(a), y = wide(b);
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<ld>::quiet_NaN();
    return std::fmax(x, y);
  }
};
template <> struct ref<tx::op::minimum> {
  static constexpr int arity = 2;
  template <class T> static domain dom() { return {-3, 3}; }
  template <class T> static ld f(T a, T b) {
    const ld x = wide(a), y = wide(b);
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<ld>::quiet_NaN();
    return std::fmin(x, y);
  }
};
template <> struct ref<tx::op::pow> {
  static constexpr int arity = 2;
  template <class T> static domain dom() { return {0.25, 3}; }
  template <class T> static ld f(T a, T b) { return std::pow(wide(a), wide(b)); }
};
template <> struct ref<tx::op::elu> {
  static constexpr int arity = 2;  // (x, alpha)
  template <class T> static domain dom() { return {-4, 2}; }
  template <class T> static ld f(T x, T alpha) { return wide(x) > 0 ? wide(x) : wide(alpha) * std::expm1(wide(x)); }
};

// A unary op whose definition carries its reference (op/definition.hpp: `domain` and `reference`, long double
// from the mathematical definition) is compared with that.
template <class Op>
  requires tx::op::unary_reference_definition<Op>
struct ref<Op> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return {Op::domain.lo, Op::domain.hi}; }
  template <class T> static ld f(T a) { return Op::reference(wide(a)); }
};

template <> struct ref<tx::op::negate> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return is_int<T> ? full_int_range<T>() : domain{-3, 3}; }
  template <class T> static ld f(T a) {
    if constexpr (is_int<T>) return static_cast<ld>(wrap<T>(-static_cast<i128>(a)));
    else return -wide(a);
  }
};
template <> struct ref<tx::op::abs> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return is_int<T> ? full_int_range<T>() : domain{-3, 3}; }
  template <class T> static ld f(T a) {
    if constexpr (is_int<T>) return static_cast<ld>(wrap<T>(a < 0 ? -static_cast<i128>(a) : static_cast<i128>(a)));
    else return std::fabs(wide(a));
  }
};
template <> struct ref<tx::op::square> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return is_int<T> ? full_int_range<T>() : domain{-3, 3}; }
  template <class T> static ld f(T a) {
    if constexpr (is_int<T>) return static_cast<ld>(wrap<T>(static_cast<i128>(a) * static_cast<i128>(a)));
    else return wide(a) * wide(a);
  }
};
template <> struct ref<tx::op::sign> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return is_int<T> ? full_int_range<T>() : domain{-3, 3}; }
  template <class T> static ld f(T a) {
    const ld x = wide(a);
    return x > 0 ? 1 : x < 0 ? -1 : 0;
  }
};
/// clamp(a, -|b|, |b|): the chain passes the bounds as -abs(b) and abs(b) (integers drawn small, so abs cannot wrap).
template <> struct ref<tx::op::clamp> {
  static constexpr int arity = 3;
  template <class T> static domain dom() { return is_int<T> ? domain{-20, 20} : domain{-3, 3}; }
  template <class T> static ld f(T a, T b) {
    const ld x = wide(a), h = std::fabs(wide(b)), l = -h;
    const ld y = x < l ? l : x;
    return y > h ? h : y;
  }
};
template <> struct ref<tx::op::relu> {
  static constexpr int arity = 1;
  template <class T> static domain dom() { return {-3, 3}; }
  template <class T> static ld f(T a) {
    const ld x = wide(a);
    if (std::isnan(x)) return x;
    return x > 0 ? x : 0;
  }
};

#define TEST_PREDICATE(OP, EXPR)                                                            \
  template <> struct ref<tx::op::OP> {                                                     \
    static constexpr int arity = 2;                                                        \
    static constexpr bool predicate = true;                                                \
    template <class T> static domain dom() { return {-2, 2}; }                             \
    template <class T> static ld f(T a, T b) {                                             \
      const ld x = wide(a), y = wide(b);                                                   \
      return (EXPR) ? 1 : 0;                                                               \
    }                                                                                      \
  };
TEST_PREDICATE(equal, x == y)
TEST_PREDICATE(not_equal, x != y)
TEST_PREDICATE(less, x < y)
TEST_PREDICATE(less_equal, x <= y)
TEST_PREDICATE(greater, x > y)
TEST_PREDICATE(greater_equal, x >= y)
TEST_PREDICATE(logical_and, x != 0 && y != 0)
TEST_PREDICATE(logical_or, x != 0 || y != 0)
#undef TEST_PREDICATE

template <> struct ref<tx::op::logical_not> {
  static constexpr int arity = 1;
  static constexpr bool predicate = true;
  template <class T> static domain dom() { return {0, 1}; }
  template <class T> static ld f(T a) { return wide(a) == 0 ? 1 : 0; }
};

/// Documented conversion semantics: float to integer truncates, saturates, NaN -> 0; x -> bool is x != 0;
/// 16-bit floats round to nearest even; 8-bit floats too, and saturate.
template <class To> ld convert_ref(ld x) {
  if constexpr (std::is_same_v<To, bool>) return x != 0 ? 1 : 0;
  else if constexpr (is_int<To>) {
    if (std::isnan(x)) return 0;
    const ld lo = static_cast<ld>(std::numeric_limits<To>::min()), hi = static_cast<ld>(std::numeric_limits<To>::max());
    if (x <= lo) return lo;
    if (x >= hi) return hi;
    return std::trunc(x);
  } else if constexpr (std::is_same_v<To, tx::half> || std::is_same_v<To, tx::bfloat16>) {
    constexpr int mant = std::is_same_v<To, tx::half> ? 10 : 7;
    constexpr int emin = std::is_same_v<To, tx::half> ? -14 : -126;
    const ld maxv = std::is_same_v<To, tx::half> ? 65504.0L : std::ldexp(255.0L, 120);  // bfloat16's: (2 - 2^-7) 2^127
    if (std::isnan(x) || std::isinf(x) || x == 0) return x;
    const ld ax = std::fabs(x);
    int e = std::ilogb(ax);
    if (e < emin) e = emin;
    const ld ulp = std::ldexp(1.0L, e - mant);
    const ld r = std::nearbyint(ax / ulp) * ulp;  // default rounding mode: ties to even
    const ld limit = maxv + std::ldexp(1.0L, std::ilogb(maxv) - mant - 1);  // halfway to the next power
    if (ax >= limit) return std::copysign(std::numeric_limits<ld>::infinity(), x);
    return std::copysign(r > maxv ? maxv : r, x);
  } else if constexpr (tx::is_float8_v<To>) {
    // OCP FP8 as CUDA's constructors convert: nearest, ties to even, saturating to the largest finite value
    // (infinities included); NaN stays NaN.
    constexpr bool e4m3 = std::is_same_v<To, tx::float8_e4m3>;
    constexpr int mant = e4m3 ? 3 : 2;
    constexpr int emin = e4m3 ? -6 : -14;
    const ld maxv = e4m3 ? 448.0L : 57344.0L;
    if (std::isnan(x) || x == 0) return x;
    const ld ax = std::fabs(x);
    if (ax >= maxv) return std::copysign(maxv, x);
    const int e = std::max(std::ilogb(ax), emin);
    const ld ulp = std::ldexp(1.0L, e - mant);
    const ld r = std::nearbyint(ax / ulp) * ulp;  // default rounding mode: ties to even
    return std::copysign(r > maxv ? maxv : r, x);
  } else {
    return static_cast<ld>(static_cast<To>(x));
  }
}

// ---- reductions: reduce<T>(v, scale) is the result over the values v (already widened) and sets scale, the
// magnitude the rounding error is relative to (sum of |x| for sums, n ulp of the result for products).

template <class T> ld sum_of(const std::vector<ld>& v, ld& scale, bool mean) {
  if constexpr (is_int<T>) {
    i128 s = 0;
    for (ld x : v) s += static_cast<i128>(x);
    return static_cast<ld>(wrap<T>(s));
  } else {
    ld s = 0, mag = 0;
    for (ld x : v) {
      s += x;
      mag += std::fabs(x);
    }
    scale = mean ? mag / static_cast<ld>(v.size()) : mag;
    return mean ? s / static_cast<ld>(v.size()) : s;
  }
}
template <> struct ref<tx::op::sum> {
  template <class T> static ld reduce(const std::vector<ld>& v, ld& scale) { return sum_of<T>(v, scale, false); }
};
template <> struct ref<tx::op::sum_to> : ref<tx::op::sum> {};
template <> struct ref<tx::op::mean> {
  template <class T> static ld reduce(const std::vector<ld>& v, ld& scale) { return sum_of<T>(v, scale, true); }
};
template <> struct ref<tx::op::prod> {
  template <class T> static ld reduce(const std::vector<ld>& v, ld& scale) {
    if constexpr (is_int<T>) {
      u128 p = 1;
      for (ld x : v) p *= static_cast<u128>(static_cast<i128>(x));
      return static_cast<ld>(wrap<T>(static_cast<i128>(p)));
    } else {
      ld p = 1;
      for (ld x : v) p *= x;
      const ld eps = std::numeric_limits<tx::op::reduction_op::accumulator<T>>::epsilon();
      scale = std::fabs(p) * (1 + static_cast<ld>(v.size()) * eps / tolerance<T>());
      return p;
    }
  }
};
template <bool Max> struct ref_extreme {
  template <class T> static ld reduce(const std::vector<ld>& v, ld&) {
    ld m = v.at(0);
    for (ld x : v) {
      if (std::isnan(x)) return x;
      m = Max ? std::max(m, x) : std::min(m, x);
    }
    return m;
  }
};
template <> struct ref<tx::op::max> : ref_extreme<true> {};
template <> struct ref<tx::op::min> : ref_extreme<false> {};
template <bool Max> struct ref_arg {
  // The first index of the largest (smallest) value; the first NaN if there is one.
  template <class T> static ld reduce(const std::vector<ld>& v, ld&) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[i])) return static_cast<ld>(i);
      if (Max ? v[i] > v[best] : v[i] < v[best]) best = i;
    }
    return static_cast<ld>(best);
  }
};
template <> struct ref<tx::op::argmax> : ref_arg<true> {};
template <> struct ref<tx::op::argmin> : ref_arg<false> {};
template <bool Sqrt> struct ref_moment {
  // Two-pass variance in long double (population: ddof 0, the default op).
  template <class T> static ld reduce(const std::vector<ld>& v, ld&) {
    ld m = 0;
    for (ld x : v) m += x;
    m /= static_cast<ld>(v.size());
    ld q = 0;
    for (ld x : v) q += (x - m) * (x - m);
    const ld var = q / static_cast<ld>(v.size());
    return Sqrt ? std::sqrt(var) : var;
  }
};
template <> struct ref<tx::op::var> : ref_moment<false> {};
template <> struct ref<tx::op::stddev> : ref_moment<true> {};
template <> struct ref<tx::op::logsumexp> {
  template <class T> static ld reduce(const std::vector<ld>& v, ld&) {
    ld m = v.at(0);
    for (ld x : v) m = std::max(m, x);
    ld s = 0;
    for (ld x : v) s += std::exp(x - m);
    return m + std::log(s);  // relative to |result| (or 1: close() takes the larger)
  }
};

} // namespace test

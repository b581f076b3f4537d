// Helpers for the CUDA tests: device copies of the host test tensors and reduction references. The long
// double op references are shared with the host suite (tests/core/reference.hpp).
#pragma once

#include "core/reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace cutest {

using test::ld;

/// The device copy of a host tensor (on the default stream).
template <class T, std::size_t R> tx::tensor<T, R, tx::cuda> dev(const tx::tensor<T, R>& h) { return tx::to_device(h); }

template <class Op> constexpr bool is_reduction_v =
    std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean> || std::is_same_v<Op, tx::op::max> ||
    std::is_same_v<Op, tx::op::min> || std::is_same_v<Op, tx::op::prod>;

/// Reduction by op tag (whole input).
template <class Op, class E> auto reduce(E&& e) {
  return tx::reduce_expr<Op, tx::detail::captured_t<E>>(tx::detail::capture(std::forward<E>(e)));
}
/// Reduction by op tag along one axis.
template <class Op, class E> auto reduce(E&& e, tx::index_t axis) {
  return tx::reduce_axis_expr<Op, tx::detail::captured_t<E>>(tx::detail::capture(std::forward<E>(e)), axis);
}

/// Long double (floats) or wrapped 128-bit (integers) reference of Op over `v`, with the magnitude the
/// rounding error is relative to in `scale` (sum of |x| for sums, n*eps*|result| for products).
template <class Op, class T> ld reduce_ref(const std::vector<ld>& v, ld& scale) {
  scale = 0;
  if constexpr (std::is_same_v<Op, tx::op::sum> || std::is_same_v<Op, tx::op::mean>) {
    if constexpr (test::is_int<T>) {
      test::i128 s = 0;
      for (ld x : v) s += static_cast<test::i128>(x);
      return static_cast<ld>(test::wrap<T>(s));
    } else {
      ld s = 0;
      for (ld x : v) {
        s += x;
        scale += std::fabs(x);
      }
      if constexpr (std::is_same_v<Op, tx::op::mean>) {
        scale /= static_cast<ld>(v.size());
        return s / static_cast<ld>(v.size());  // 0/0 = NaN for an empty input, as documented
      }
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
      // each float multiply rounds once: n * eps relative, expressed in units of the dtype's tolerance
      const ld eps = std::numeric_limits<tx::op::accumulator_t<T>>::epsilon();
      scale = std::fabs(p) * (1 + static_cast<ld>(v.size()) * eps / test::tolerance<T>());
      return p;
    }
  } else {
    ld m = v.at(0);
    for (ld x : v) m = std::is_same_v<Op, tx::op::max> ? std::max(m, x) : std::min(m, x);
    return m;
  }
}

/// Host copy of every element of a host tensor, widened.
template <class T, std::size_t R> std::vector<ld> widened(const tx::tensor<T, R>& t) {
  std::vector<ld> v(static_cast<std::size_t>(t.size()));
  for (tx::index_t i = 0; i < t.size(); ++i) v[static_cast<std::size_t>(i)] = test::wide(t.data()[i]);
  return v;
}

/// The elements of x (row-major shape s) on the line through output index o along axis.
template <class T, std::size_t R>
std::vector<ld> line(const tx::tensor<T, R>& x, std::size_t axis, tx::index_t o) {
  tx::shape_t<R - 1> out{};
  for (std::size_t d = 0, k = 0; d < R; ++d)
    if (d != axis) out[k++] = x.shape()[d];
  const auto oi = test::unravel(o, out);
  const auto st = x.strides();
  std::vector<ld> v;
  for (tx::index_t l = 0; l < x.shape()[axis]; ++l) {
    tx::index_t off = 0;
    for (std::size_t d = 0, k = 0; d < R; ++d) off += (d == axis ? l : oi[k++]) * st[d];
    v.push_back(test::wide(x.data()[off]));
  }
  return v;
}

/// A host tensor transposed (last two axes swapped), materialised row-major.
template <class T> tx::tensor<T, 2> transposed(const tx::tensor<T, 2>& x) {
  tx::tensor<T, 2> t({x.shape()[1], x.shape()[0]});
  for (tx::index_t i = 0; i < x.shape()[0]; ++i)
    for (tx::index_t j = 0; j < x.shape()[1]; ++j) t(j, i) = x(i, j);
  return t;
}

} // namespace cutest

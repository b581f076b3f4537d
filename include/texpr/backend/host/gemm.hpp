// Host GEMM: cache-blocked, with an inner loop over contiguous columns of B and C that vectorises.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "texpr/core/config.hpp"
#include "texpr/op/elementwise.hpp"

namespace texpr::detail::host_impl {

/// C (m x n) = A (m x k) * B (k x n), all row-major and contiguous. Integers wrap around.
template <class T> void gemm(index_t m, index_t n, index_t k, const T* a, const T* b, T* c) {
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

} // namespace texpr::detail::host_impl

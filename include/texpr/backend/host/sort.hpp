// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host's ordering kernels (texpr/sort.hpp includes this): radix_sort (sort, argsort), top_k_select (topk) and
// scatter_rows (scatter). Each line's keys (detail::order_key of the operand, read fused) are sorted with their
// payload (the value's bits for sort, the position for argsort and topk) by an LSD radix sort of 8-bit digits:
// stable by construction, linear in the line's length, and a digit that is the same for every key costs no pass.
// Lines go to the pool; a long line alone has each pass's histogram and scatter split across the pool.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "texpr/backend/host/loops.hpp"
#include "texpr/backend/host/parallel.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/core/context.hpp"
#include "texpr/eval/evaluate.hpp"
#include "texpr/eval/read.hpp"
#include "texpr/expr/sort.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr::detail::host_impl {

/// Lines shorter than this are ordered by insertion (stable), not by radix passes.
inline constexpr index_t insertion_limit = 24;
/// A line at least this long, with fewer lines than threads, has its radix passes split across the pool.
inline constexpr index_t parallel_line = 1 << 17;
/// topk keeps a sorted buffer of its k best for k up to this; a larger k sorts the line.
inline constexpr index_t select_limit = 32;

/// The histograms of every 8-bit digit of keys[b, e): count[d][v] is how many have digit d equal to v.
template <class K> void digit_histograms(const K* keys, index_t b, index_t e, index_t (*count)[256]) {
  constexpr int digits = sizeof(K);
  for (index_t i = b; i < e; ++i) {
    const K k = keys[i];
    for (int d = 0; d < digits; ++d) ++count[d][(k >> (8 * d)) & 0xff];
  }
}

/// Stable insertion sort of n (key, payload) pairs by key.
template <class K, class P> void insertion_sort_pairs(K* k, P* p, index_t n) {
  for (index_t i = 1; i < n; ++i) {
    const K key = k[i];
    const P pay = p[i];
    index_t j = i;
    for (; j > 0 && k[j - 1] > key; --j) {
      k[j] = k[j - 1];
      p[j] = p[j - 1];
    }
    k[j] = key;
    p[j] = pay;
  }
}

/// Sorts n (key, payload) pairs (k, p) by key, stably, using (k2, p2) as scratch of the same size; returns where the
/// result is (one of the two).
template <class K, class P> std::pair<K*, P*> radix_sort_pairs(K* k, P* p, K* k2, P* p2, index_t n) {
  if (n <= insertion_limit) {
    insertion_sort_pairs(k, p, n);
    return {k, p};
  }
  constexpr int digits = sizeof(K);
  index_t count[digits][256] = {};
  digit_histograms(k, 0, n, count);
  for (int d = 0; d < digits; ++d) {
    const int shift = 8 * d;
    if (count[d][(k[0] >> shift) & 0xff] == n) continue;  // every key has this digit: the pass would move nothing
    index_t offset[256];
    index_t run = 0;
    for (int v = 0; v < 256; ++v) {
      offset[v] = run;
      run += count[d][v];
    }
    for (index_t i = 0; i < n; ++i) {
      const index_t o = offset[(k[i] >> shift) & 0xff]++;
      k2[o] = k[i];
      p2[o] = p[i];
    }
    std::swap(k, k2);
    std::swap(p, p2);
  }
  return {k, p};
}

/// The same for one long line, each pass's histogram and scatter split into `parts` ranges run on the pool (the
/// ranges' offsets are taken in order, so the sort stays stable).
template <class K, class P> std::pair<K*, P*> parallel_radix_sort_pairs(K* k, P* p, K* k2, P* p2, index_t n, index_t parts) {
  constexpr int digits = sizeof(K);
  std::vector<std::array<std::array<index_t, 256>, digits>> counts(static_cast<std::size_t>(parts));
  const auto range = [&](index_t t) { return std::pair<index_t, index_t>{n * t / parts, n * (t + 1) / parts}; };
  parallel_for(parts, [&](index_t t) {
    auto& c = counts[static_cast<std::size_t>(t)];
    for (auto& row : c) row.fill(0);
    index_t local[digits][256] = {};
    const auto [b, e] = range(t);
    digit_histograms(k, b, e, local);
    for (int d = 0; d < digits; ++d) std::copy(local[d], local[d] + 256, c[static_cast<std::size_t>(d)].begin());
  });
  std::array<std::array<index_t, 256>, digits> total{};
  for (const auto& c : counts)
    for (int d = 0; d < digits; ++d)
      for (int v = 0; v < 256; ++v) total[static_cast<std::size_t>(d)][static_cast<std::size_t>(v)] += c[static_cast<std::size_t>(d)][static_cast<std::size_t>(v)];
  std::vector<std::array<index_t, 256>> offsets(static_cast<std::size_t>(parts));
  for (int d = 0; d < digits; ++d) {
    const int shift = 8 * d;
    const auto& all = total[static_cast<std::size_t>(d)];
    if (all[(k[0] >> shift) & 0xff] == n) continue;  // (the totals are the same whatever the order)
    // This digit's counts per range, in the current order.
    parallel_for(parts, [&](index_t t) {
      auto& c = offsets[static_cast<std::size_t>(t)];
      c.fill(0);
      const auto [b, e] = range(t);
      for (index_t i = b; i < e; ++i) ++c[(k[i] >> shift) & 0xff];
    });
    index_t run = 0;
    for (int v = 0; v < 256; ++v)
      for (index_t t = 0; t < parts; ++t) {
        index_t& c = offsets[static_cast<std::size_t>(t)][static_cast<std::size_t>(v)];
        const index_t here = c;
        c = run;
        run += here;
      }
    parallel_for(parts, [&](index_t t) {
      auto& o = offsets[static_cast<std::size_t>(t)];
      const auto [b, e] = range(t);
      for (index_t i = b; i < e; ++i) {
        const index_t at = o[(k[i] >> shift) & 0xff]++;
        k2[at] = k[i];
        p2[at] = p[i];
      }
    });
    std::swap(k, k2);
    std::swap(p, p2);
  }
  return {k, p};
}

/// The k best (smallest key; ties: lower position) of n keys in order, into (keys, positions) ascending: a sorted
/// buffer of at most k, each later key compared once with its last.
template <class K, class P> void select_smallest(const K* k, index_t n, index_t want, K* bk, P* bp) {
  index_t m = 0;
  for (index_t j = 0; j < n; ++j) {
    const K key = k[j];
    if (m == want && !(key < bk[m - 1])) continue;
    index_t i = m < want ? m++ : m - 1;
    for (; i > 0 && bk[i - 1] > key; --i) {  // strictly greater: an equal key stays ahead (its position is lower)
      bk[i] = bk[i - 1];
      bp[i] = bp[i - 1];
    }
    bk[i] = key;
    bp[i] = static_cast<P>(j);
  }
}

/// How an ordering kernel sees its operand: lines of `len` elements along `axis`, `lines` of them (outer x inner),
/// each read from the accessor, written to the result with `k` along the axis.
struct line_layout {
  index_t outer = 1, len = 1, inner = 1, k = 0;
  index_t lines() const { return outer * inner; }
};
template <std::size_t R> line_layout line_layout_of(const shape_t<R>& s, std::size_t axis, index_t k) {
  line_layout l;
  l.len = s[axis];
  l.k = k;
  for (std::size_t d = 0; d < axis; ++d) l.outer *= s[d];
  for (std::size_t d = axis + 1; d < R; ++d) l.inner *= s[d];
  return l;
}

/// Reads elements [b, e) of line `line` of acc (shape s, along axis) as keys and payloads: f(j, value) for each.
template <class Acc, std::size_t R, class F>
void read_line(line_reader<Acc>& lines, const shape_t<R>& s, std::size_t axis, const line_layout& l, index_t line, index_t b,
               index_t e, F&& f) {
  index_t idx[R] = {};
  const index_t o = line / l.inner, in = line % l.inner;
  index_t rest = o;
  for (std::size_t d = axis; d-- > 0;) {
    idx[d] = rest % s[d];
    rest /= s[d];
  }
  rest = in;
  for (std::size_t d = R; d-- > axis + 1;) {
    idx[d] = rest % s[d];
    rest /= s[d];
  }
  if (axis + 1 == R) {
    lines.acc.seek(idx, R - 1);
    lines.reader->bind(lines.acc, l.len);
    for (index_t j0 = b; j0 < e; j0 += chunk_elements) {
      const index_t n = e - j0 < chunk_elements ? e - j0 : chunk_elements;
      lines.reader->start(j0, n);
      const chunk_reader_t<Acc> ch = *lines.reader;
      for (index_t j = 0; j < n; ++j) f(j0 + j, ch[j]);
    }
  } else {
    lines.acc.seek(idx, axis);
    for (index_t j = b; j < e; ++j) f(j, lines.acc.along(j));
  }
}

/// One task's buffers for ordering lines: keys and payloads, twice (radix passes ping-pong).
template <class K, class P> struct sort_buffers {
  std::vector<K> k0, k1;
  std::vector<P> p0, p1;
  void reserve(index_t n) {
    const auto u = static_cast<std::size_t>(n);
    if (k0.size() < u) {
      k0.resize(u);
      k1.resize(u);
      p0.resize(u);
      p1.resize(u);
    }
  }
};

/// dest = Op (sort, argsort or topk) of the lines of acc (operand shape s) along axis, k kept per line; dest
/// contiguous, of T (the operand's dtype for sort, int64 for positions). P: the payload type.
template <class Op, class V, class P, class T, class Acc, std::size_t R>
void run_ordering(const Acc& acc, const shape_t<R>& s, std::size_t axis, index_t k, bool descending, T* out) {
  using K = order_key_t<V>;
  const line_layout l = line_layout_of(s, axis, k);
  if (l.lines() == 0 || l.len == 0 || k == 0) return;
  // The payload of element j with value v, and what it writes.
  const auto payload = [](index_t j, V v) {
    if constexpr (Op::positions) return static_cast<P>(j);
    else return std::bit_cast<P>(v);
  };
  const auto write = [&](index_t line, const P* p) {
    T* o = out + (line / l.inner) * (k * l.inner) + line % l.inner;
    for (index_t j = 0; j < k; ++j) {
      if constexpr (Op::positions) o[j * l.inner] = static_cast<T>(p[j]);
      else o[j * l.inner] = std::bit_cast<T>(p[j]);
    }
  };
  const bool select = std::is_same_v<Op, op::topk> && k <= select_limit && k < l.len;
  const index_t threads = task_count(l.lines() * l.len, 1 << 15);
  if (l.lines() >= threads || l.len < parallel_line || select) {
    for_ranges(l.lines(), l.len >= (1 << 15) ? 1 : (1 << 15) / l.len, [&](index_t l0, index_t l1) {
      line_reader<Acc> lines(acc);
      sort_buffers<K, P> buf;
      buf.reserve(l.len);
      K best_k[select_limit];
      P best_p[select_limit];
      for (index_t line = l0; line < l1; ++line) {
        K* kk = buf.k0.data();
        P* pp = buf.p0.data();
        read_line(lines, s, axis, l, line, 0, l.len, [&](index_t j, auto v) {
          kk[j] = order_key(static_cast<V>(v), descending);
          pp[j] = payload(j, static_cast<V>(v));
        });
        if (select) {
          select_smallest(kk, l.len, k, best_k, best_p);
          write(line, best_p);
        } else {
          write(line, radix_sort_pairs(kk, pp, buf.k1.data(), buf.p1.data(), l.len).second);
        }
      }
    });
    return;
  }
  // Few long lines: each read, sorted and written with the pool's help.
  sort_buffers<K, P> buf;
  buf.reserve(l.len);
  for (index_t line = 0; line < l.lines(); ++line) {
    K* kk = buf.k0.data();
    P* pp = buf.p0.data();
    parallel_for(threads, [&](index_t t) {
      line_reader<Acc> lines(acc);
      read_line(lines, s, axis, l, line, l.len * t / threads, l.len * (t + 1) / threads, [&](index_t j, auto v) {
        kk[j] = order_key(static_cast<V>(v), descending);
        pp[j] = payload(j, static_cast<V>(v));
      });
    });
    write(line, parallel_radix_sort_pairs(kk, pp, buf.k1.data(), buf.p1.data(), l.len, threads).second);
  }
}

/// Reads operand n.child() fused and orders it into dest (contiguous).
template <class N, class T> void order_into(const N& n, T* out, context<host>& ctx) {
  using V = typename N::kernel_dtype;
  using Op = typename N::op_type;
  const auto s = n.child().shape();
  if (shape_size(s) == 0 || n.k() == 0) return;
  const auto acc = detail::read(n.child(), s, ctx);
  if constexpr (Op::positions) {
    if (s[n.axis()] <= static_cast<index_t>(UINT32_MAX))
      run_ordering<Op, V, std::uint32_t, T>(acc, s, n.axis(), n.k(), n.descending(), out);
    else
      run_ordering<Op, V, std::uint64_t, T>(acc, s, n.axis(), n.k(), n.descending(), out);
  } else {
    run_ordering<Op, V, order_key_t<V>, T>(acc, s, n.axis(), n.k(), n.descending(), out);
  }
}

} // namespace texpr::detail::host_impl

namespace texpr::host_kernels {

template <class N, class T, std::size_t R> void radix_sort::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  detail::host_impl::order_into(n, dest.data(), ctx);
}

template <class N, class T, std::size_t R> void top_k_select::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  detail::host_impl::order_into(n, dest.data(), ctx);
}

template <class N, class T, std::size_t R> void scatter_rows::run(const N& n, const view<T, R, host>& dest, context<host>& ctx) {
  const auto g = detail::materialize(detail::get<0>(n.operands()), ctx);
  const auto idx = detail::materialize(detail::get<1>(n.operands()), ctx);
  const auto s = n.shape();
  const std::size_t axis = n.axis();
  T* out = dest.data();
  std::fill(out, out + shape_size(s), T(0));
  const auto gs = g.shape();
  const index_t positions = gs[axis];
  index_t outer = 1, inner = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= gs[d];
  for (std::size_t d = axis + 1; d < R; ++d) inner *= gs[d];
  const index_t extent = s[axis];
  // Each (outer, inner) line writes its own positions: lines go to the pool.
  detail::host_impl::for_ranges(outer * inner, positions >= (1 << 15) ? 1 : (1 << 15) / (positions > 0 ? positions : 1), [&](index_t l0, index_t l1) {
    index_t at[R] = {};
    for (index_t line = l0; line < l1; ++line) {
      const index_t o = line / inner, in = line % inner;
      index_t rest = o;
      for (std::size_t d = axis; d-- > 0;) {
        at[d] = rest % gs[d];
        rest /= gs[d];
      }
      rest = in;
      for (std::size_t d = R; d-- > axis + 1;) {
        at[d] = rest % gs[d];
        rest /= gs[d];
      }
      T* line_out = out + o * extent * inner + in;
      index_t goff = 0, ioff = 0;
      for (std::size_t d = 0; d < R; ++d) {
        goff += at[d] * g.strides()[d];
        ioff += at[d] * idx.strides()[d];
      }
      const index_t gstep = g.strides()[axis], istep = idx.strides()[axis];
      for (index_t p = 0; p < positions; ++p) {
        const auto j = static_cast<index_t>(idx.data()[ioff + p * istep]);
        if (j >= 0 && j < extent) line_out[j * inner] = g.data()[goff + p * gstep];
      }
    }
  });
}

} // namespace texpr::host_kernels

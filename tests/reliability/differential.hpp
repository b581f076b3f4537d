// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Randomized differential tests, included once per dtype: random expression graphs evaluated by texpr and by a reference
// interpreter (long double with a running error bound for floats, exact 128-bit wrap-around for integers).
//
// Graph *shapes* are a few compile-time templates written once against a builder interface; a texpr
// builder turns them into lazy expressions and a reference builder into values. Everything else is chosen
// at run time from a fixed seed: the op of every node (a per-element selector picks among all registered
// elementwise ops through a chain of tx::where, so one compiled type covers every op), shapes and which
// operand broadcasts along which dimension (zero-size dimensions included), leaf layouts (contiguous,
// transposed, reversed, stride 0), values, the root (elementwise into a tensor or a strided view, or a
// sum/mean/max/min/prod over everything or a runtime axis), and the destination.
//
// Float comparisons use a rigorous running error bound: each reference value carries |texpr - exact| <= e,
// propagated through every op (libm functions get a few ulp), and reductions use the documented bound
// (16 + ceil(log2(n/256))) * eps * sum|x|. Values whose bound is undefined (division by a number that may be
// 0, log near 0, near overflow) are skipped and counted; comparisons and casts of computed values never
// occur in the templates (only of leaves), so no branch can flip.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "common.hpp"

namespace {

using rel::ld;
using test::i128;
using test::u128;
using shape3 = std::array<tx::index_t, 3>;

// ---- Reference values ------------------------------------------------------------------------------------

struct cell {
  ld v = 0;
  ld e = 0;           // bound on |texpr's value - v| (floats); 0 for integers
  bool known = true;  // false: the bound is undefined; the element is not compared
};

// A reference tensor: always rank 3 (leading 1s for lower ranks), row-major.
struct rtensor {
  shape3 shape{1, 1, 1};
  std::vector<cell> c;
  tx::index_t size() const { return shape[0] * shape[1] * shape[2]; }
  const cell& at(const shape3& idx) const {  // broadcast read
    tx::index_t off = 0;
    for (int d = 0; d < 3; ++d) off = off * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
    return c[static_cast<std::size_t>(off)];
  }
};

shape3 broadcast(const shape3& a, const shape3& b) {
  shape3 o{};
  for (int d = 0; d < 3; ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1) throw std::logic_error("reference: shapes do not broadcast");
    o[d] = a[d] == 1 ? b[d] : a[d];
  }
  return o;
}

template <class F> rtensor zip(const std::vector<const rtensor*>& in, F&& f) {
  rtensor out;
  out.shape = in[0]->shape;
  for (auto* t : in) out.shape = broadcast(out.shape, t->shape);
  out.c.resize(static_cast<std::size_t>(out.size()));
  shape3 idx{};
  for (idx[0] = 0; idx[0] < out.shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < out.shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < out.shape[2]; ++idx[2])
        out.c[static_cast<std::size_t>((idx[0] * out.shape[1] + idx[1]) * out.shape[2] + idx[2])] = f(idx);
  return out;
}

// Per-dtype reference arithmetic.
template <class T> struct arith {
  static constexpr bool integer = std::is_integral_v<T>;
  static ld u() { return integer ? 0 : std::numeric_limits<T>::epsilon() / 2; }
  static ld eps() { return integer ? 0 : std::numeric_limits<T>::epsilon(); }
  static ld tiny() { return integer ? 0 : 4 * static_cast<ld>(std::numeric_limits<T>::denorm_min()); }
  static cell unknown() { return {0, 0, false}; }
  static i128 iv(const cell& c) { return static_cast<i128>(c.v); }
  static cell wrapped(i128 x) { return {static_cast<ld>(test::wrap<T>(x)), 0, true}; }
  static cell wrapped_u(u128 x) { return wrapped(static_cast<i128>(x)); }
  // The value texpr computes with `ulps` roundings of relative size u on top of a propagated error prop.
  static cell rounded(ld v, ld prop, ld ulps = 1) {
    if (std::isnan(v)) return {v, 0, true};
    const ld limit = static_cast<ld>(std::numeric_limits<T>::max()) / 4;
    if (!(std::fabs(v) + prop < limit)) return unknown();  // near overflow (or an infinite bound)
    return {v, prop * (1 + ulps * u()) + ulps * u() * std::fabs(v) + tiny(), true};
  }

  // Binary ops, in the selector's order: add, subtract, multiply, divide, maximum, minimum.
  static constexpr int binary_ops = 6;
  static cell binary(int op, const cell& a, const cell& b) {
    if (!a.known || !b.known) return unknown();
    if constexpr (integer) {
      const i128 x = iv(a), y = iv(b);
      switch (op) {
        case 0: return wrapped(x + y);
        case 1: return wrapped(x - y);
        case 2: return wrapped(x * y);
        case 3: return y == 0 ? wrapped(0) : wrapped(x / y);
        case 4: return wrapped(x > y ? x : y);
        default: return wrapped(x < y ? x : y);
      }
    } else {
      if (std::isnan(a.v) || std::isnan(b.v)) return {std::numeric_limits<ld>::quiet_NaN(), 0, true};
      const ld x = a.v, y = b.v;
      switch (op) {
        case 0: return rounded(x + y, a.e + b.e);
        case 1: return rounded(x - y, a.e + b.e);
        case 2: return rounded(x * y, std::fabs(x) * b.e + std::fabs(y) * a.e + a.e * b.e);
        case 3:
          if (!(std::fabs(y) > b.e) || y == 0) return unknown();
          return rounded(x / y, (a.e * std::fabs(y) + std::fabs(x) * b.e) / (std::fabs(y) * (std::fabs(y) - b.e)));
        case 4: return {std::max(x, y), std::max(a.e, b.e), true};
        default: return {std::min(x, y), std::max(a.e, b.e), true};
      }
    }
  }

  // Unary ops: negate, abs, relu, then (floats) exp, log, sqrt, tanh, sigmoid, elu.
  static constexpr int unary_ops = integer ? 3 : 9;
  static cell unary(int op, const cell& a) {
    if (!a.known) return unknown();
    if constexpr (integer) {
      const i128 x = iv(a);
      switch (op) {
        case 0: return wrapped(-x);
        case 1: return wrapped(x < 0 ? -x : x);
        default: return wrapped(x > 0 ? x : 0);
      }
    } else {
      const ld x = a.v, e = a.e;
      if (std::isnan(x)) return {x, 0, true};
      const ld nan = std::numeric_limits<ld>::quiet_NaN();
      switch (op) {
        case 0: return {-x, e, true};
        case 1: return {std::fabs(x), e, true};
        case 2: return {x > 0 ? x : 0, e, true};
        case 3: {
          if (x + e > 80) return unknown();
          const ld v = std::exp(x);
          return rounded(v, v * std::expm1(e), 4);
        }
        case 4:
          if (x + e < 0) return {nan, 0, true};
          if (!(x - e > 0)) return unknown();
          return rounded(std::log(x), -std::log1p(-e / x), 4);
        case 5:
          if (x + e < 0) return {nan, 0, true};
          if (e == 0 && x == 0) return {0, 0, true};
          if (!(x - e > 0)) return unknown();
          return rounded(std::sqrt(x), std::sqrt(x) - std::sqrt(x - e), 1);
        case 6: return rounded(std::tanh(x), e, 4);
        case 7: return rounded(1 / (1 + std::exp(-x)), e / 4, 8);
        default: return rounded(x > 0 ? x : std::expm1(x), e, 4);
      }
    }
  }
};

// ---- Leaves: random data behind views with random layouts -------------------------------------------------

template <class S> struct leaf_data {
  std::vector<S> storage;
  std::optional<tx::view<const S, 3>> view;  // (assigning a view copies elements, so it is emplaced)
  rtensor ref;
};

// Logical shape `shape`; values from gen(); layout: 0 contiguous, 1 transposed storage, 2 reversed last axis,
// 3 stride 0 along the first dimension of extent > 1 (all its slices equal).
template <class S, class Gen> void make_leaf(leaf_data<S>& L, const shape3& shape, int layout, Gen&& gen) {
  const tx::index_t n = shape[0] * shape[1] * shape[2];
  L.ref.shape = shape;
  L.ref.c.assign(static_cast<std::size_t>(n), cell{});
  L.storage.assign(static_cast<std::size_t>(n > 0 ? n : 1), S{});
  shape3 st{shape[1] * shape[2], shape[2], 1};
  S* base = L.storage.data();
  int zero_dim = -1;
  if (layout == 1) {
    st = {1, shape[0], shape[0] * shape[1]};
  } else if (layout == 2 && shape[2] > 1) {
    st = {shape[1] * shape[2], shape[2], -1};
    base += shape[2] - 1;
  } else if (layout == 3) {
    for (int d = 0; d < 3; ++d)
      if (shape[d] > 1) {
        zero_dim = d;
        st[d] = 0;
        break;
      }
  }
  // Fill storage through the logical indices so that every layout holds the same kind of data.
  shape3 idx{};
  for (idx[0] = 0; idx[0] < shape[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < shape[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < shape[2]; ++idx[2]) {
        const tx::index_t off = idx[0] * st[0] + idx[1] * st[1] + idx[2] * st[2];
        S& slot = base[off];
        if (zero_dim < 0 || idx[zero_dim] == 0) slot = gen();
        L.ref.c[static_cast<std::size_t>((idx[0] * shape[1] + idx[1]) * shape[2] + idx[2])] = {static_cast<ld>(slot), 0, true};
      }
  L.view.emplace(n > 0 ? base : nullptr, tx::shape_t<3>{shape[0], shape[1], shape[2]}, st);
}

// ---- The two builders ---------------------------------------------------------------------------------------

// What a graph template may use: leaf(i) (rank 3, group i / 3), row(g) (rank 1, broadcast over group g),
// sel(k) (an int32 selector, rank 3), bin(x, y, k) / un(x, k) (op chosen per element by selector k),
// pick(i, j, x, y) = where(leaf i < leaf j, x, y), cast_in(g) (cast to T of a leaf of another dtype),
// sub_max0(x) = x - max(x, 0), times_sum(x) = x * sum(x), red0(x, k) = reduction along axis 0 by runtime op
// k (a tensor), mm(x, y) = matmul.
template <class T> using source_t = std::conditional_t<std::is_same_v<T, double>, float, double>;

// One random graph's shared data (the dtype's own leaves are in typed_data<T>).
struct graph_data {
  std::mt19937_64 rng;
  std::array<shape3, 3> group_shape{};  // leaf groups: broadcast result shape of leaves 3g .. 3g+2
  std::array<leaf_data<std::int32_t>, 4> sel;
  bool expect_throw = false;  // the reference met max/min over an empty axis: texpr must throw shape_error
  std::vector<std::shared_ptr<void>> keep;  // tensors the texpr graph reads through views
};

template <class T> struct tx_builder {
  graph_data* g;
  const tx::view<const T, 3>& leaf(int i) const;
  const tx::view<const T, 1>& row(int grp) const;
  const tx::view<const std::int32_t, 3>& sel(int k) const;
  auto cast_in(int grp) const;

  template <class X, class Y> auto bin(const X& x, const Y& y, int k) const {
    const auto& s = sel(k);
    return tx::where(s == 0, x + y,
                     tx::where(s == 1, x - y,
                               tx::where(s == 2, x * y,
                                         tx::where(s == 3, x / y, tx::where(s == 4, tx::maximum(x, y), tx::minimum(x, y))))));
  }
  template <class X> auto un(const X& x, int k) const {
    const auto& s = sel(k);
    if constexpr (std::is_integral_v<T>) {
      return tx::where(s == 0, -x, tx::where(s == 1, tx::abs(x), tx::relu(x)));
    } else {
      return tx::where(
          s == 0, -x,
          tx::where(s == 1, tx::abs(x),
                    tx::where(s == 2, tx::relu(x),
                              tx::where(s == 3, tx::exp(x),
                                        tx::where(s == 4, tx::log(x),
                                                  tx::where(s == 5, tx::sqrt(x),
                                                            tx::where(s == 6, tx::tanh(x),
                                                                      tx::where(s == 7, tx::sigmoid(x), tx::elu(x)))))))));
    }
  }
  template <class X, class Y> auto pick(int i, int j, const X& x, const Y& y) const { return tx::where(leaf(i) < leaf(j), x, y); }
  template <class X> auto sub_max0(const X& x) const { return x - tx::max(x, 0); }
  template <class X> auto times_sum(const X& x) const { return x * tx::sum(x); }
  template <class X> tx::view<const T, 2> red0(const X& x, int k) const;
  template <class X, class Y> auto mm(const X& x, const Y& y) const { return tx::matmul(x, y); }
};

template <class T> struct ref_builder {
  graph_data* g;
  using A = arith<T>;
  const rtensor& leaf(int i) const;
  rtensor row(int grp) const;
  const rtensor& sel(int k) const;
  rtensor cast_in(int grp) const;

  rtensor bin(const rtensor& x, const rtensor& y, int k) const {
    const rtensor& s = sel(k);
    return zip({&x, &y, &s}, [&](const shape3& i) {
      return A::binary(std::min<int>(static_cast<int>(s.at(i).v), A::binary_ops - 1), x.at(i), y.at(i));
    });
  }
  rtensor un(const rtensor& x, int k) const {
    const rtensor& s = sel(k);
    return zip({&x, &s}, [&](const shape3& i) {
      return A::unary(std::min<int>(static_cast<int>(s.at(i).v), A::unary_ops - 1), x.at(i));
    });
  }
  rtensor pick(int i, int j, const rtensor& x, const rtensor& y) const {
    const rtensor &a = leaf(i), &b = leaf(j);
    return zip({&a, &b, &x, &y}, [&](const shape3& p) { return a.at(p).v < b.at(p).v ? x.at(p) : y.at(p); });
  }
  rtensor sub_max0(const rtensor& x) const {
    rtensor m = reduce(x, 2 /*max*/, 0);
    return zip({&x, &m}, [&](const shape3& i) { return A::binary(1, x.at(i), m.at(i)); });
  }
  rtensor times_sum(const rtensor& x) const {
    rtensor s = reduce(x, 0 /*sum*/, -1);
    return zip({&x, &s}, [&](const shape3& i) { return A::binary(2, x.at(i), s.at(i)); });
  }
  rtensor red0(const rtensor& x, int k) const { return reduce(x, A::integer && k == 1 ? 0 : k, 0); }
  rtensor mm(const rtensor& x, const rtensor& y) const;

  // Reduction k (0 sum, 1 mean, 2 max, 3 min, 4 prod) over everything (axis -1) or one axis of the rank-3
  // value; the result keeps rank 3 with the reduced axis moved to the front as a 1.
  static rtensor reduce(const rtensor& x, int k, int axis);
};

graph_data*& current_graph();

template <class T> cell reduce_cells(const std::vector<cell>& in, int k) {
  using A = arith<T>;
  const auto n = static_cast<tx::index_t>(in.size());
  if (n == 0 && (k == 2 || k == 3)) {
    current_graph()->expect_throw = true;
    return A::unknown();
  }
  for (const cell& c : in)
    if (!c.known) return A::unknown();
  for (const cell& c : in)
    if (std::isnan(c.v)) return {std::numeric_limits<ld>::quiet_NaN(), 0, true};
  if constexpr (A::integer) {
    u128 acc = k == 4 ? 1 : 0;
    i128 best = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const i128 x = A::iv(in[i]);
      if (k == 0) acc += static_cast<u128>(x);
      if (k == 4) acc *= static_cast<u128>(x);
      if (i == 0 || (k == 2 ? x > best : x < best)) best = x;
    }
    return k == 2 || k == 3 ? A::wrapped(best) : A::wrapped_u(acc);
  } else {
    if (k == 2 || k == 3) {
      cell r = in.at(0);
      for (const cell& c : in) {
        if (k == 2 ? c.v > r.v : c.v < r.v) r.v = c.v;
        r.e = std::max(r.e, c.e);
      }
      return r;
    }
    if (k == 4) {
      ld p = 1, rel = 1, low = 1, high = 1;
      for (const cell& c : in) {
        if (c.v == 0 && c.e == 0) return {0, 0, true};
        if (!(std::fabs(c.v) > c.e)) return A::unknown();
        p *= c.v;
        rel *= 1 + c.e / std::fabs(c.v);
        (std::fabs(c.v) < 1 ? low : high) *= std::fabs(c.v) + c.e;
      }
      if (low < static_cast<ld>(std::numeric_limits<T>::min()) * 1e6L ||
          high > static_cast<ld>(std::numeric_limits<T>::max()) / 1e6L)
        return A::unknown();  // partial products may underflow or overflow in T
      const ld rounding = std::pow(1 + A::u(), static_cast<ld>(n)) - 1;
      return {p, std::fabs(p) * ((rel - 1) + rel * rounding) + A::tiny(), true};
    }
    ld s = 0, prop = 0, mag = 0;
    for (const cell& c : in) {
      s += c.v;
      prop += c.e;
      mag += std::fabs(c.v) + c.e;
    }
    const ld e = prop + rel::sum_bound<T>(n, mag) + A::tiny();
    if (k == 0) return A::rounded(s, e, 0);
    if (n == 0) return {std::numeric_limits<ld>::quiet_NaN(), 0, true};
    const ld m = s / static_cast<ld>(n);
    return A::rounded(m, e / static_cast<ld>(n), 2);
  }
}

template <class T> rtensor ref_builder<T>::reduce(const rtensor& x, int k, int axis) {
  rtensor out;
  if (axis < 0) {
    out.shape = {1, 1, 1};
    out.c = {reduce_cells<T>(x.c, k)};
    return out;
  }
  shape3 os{1, 1, 1};
  for (int d = 0, o = 1; d < 3; ++d)
    if (d != axis) os[o++] = x.shape[d];
  out.shape = os;
  out.c.resize(static_cast<std::size_t>(out.size()));
  for (tx::index_t p = 0; p < os[1]; ++p)
    for (tx::index_t q = 0; q < os[2]; ++q) {
      std::vector<cell> line;
      for (tx::index_t l = 0; l < x.shape[axis]; ++l) {
        shape3 idx{};
        for (int d = 0, o = 1; d < 3; ++d) idx[d] = d == axis ? l : (o++ == 1 ? p : q);
        line.push_back(x.at(idx));
      }
      out.c[static_cast<std::size_t>(p * os[2] + q)] = reduce_cells<T>(line, k);
    }
  return out;
}

template <class T> rtensor ref_builder<T>::mm(const rtensor& x, const rtensor& y) const {
  using Ar = arith<T>;
  rtensor out;
  const tx::index_t b = x.shape[0], m = x.shape[1], kk = x.shape[2], n = y.shape[2];
  out.shape = {b, m, n};
  out.c.resize(static_cast<std::size_t>(out.size()));
  const ld gamma = (kk + 1) * Ar::u() / (1 - (kk + 1) * Ar::u());
  for (tx::index_t p = 0; p < b; ++p)
    for (tx::index_t i = 0; i < m; ++i)
      for (tx::index_t j = 0; j < n; ++j) {
        cell r;
        u128 acc = 0;
        ld s = 0, prop = 0, mag = 0;
        for (tx::index_t l = 0; l < kk; ++l) {
          const cell &a = x.at({p, i, l}), &c = y.at({p, l, j});
          if (!a.known || !c.known || std::isnan(a.v) || std::isnan(c.v)) r.known = false;
          if constexpr (Ar::integer) {
            acc += static_cast<u128>(Ar::iv(a)) * static_cast<u128>(Ar::iv(c));
          } else {
            s += a.v * c.v;
            prop += std::fabs(a.v) * c.e + std::fabs(c.v) * a.e + a.e * c.e;
            mag += (std::fabs(a.v) + a.e) * (std::fabs(c.v) + c.e);
          }
        }
        if (!r.known) {
          out.c[static_cast<std::size_t>((p * m + i) * n + j)] = Ar::unknown();
          continue;
        }
        if constexpr (Ar::integer) r = Ar::wrapped_u(acc);
        else r = Ar::rounded(s, prop + gamma * mag + Ar::tiny() * static_cast<ld>(kk + 1), 0);
        out.c[static_cast<std::size_t>((p * m + i) * n + j)] = r;
      }
  return out;
}

// ---- One random graph's data --------------------------------------------------------------------------------


template <class T> struct typed_data {
  std::array<leaf_data<T>, 9> leaves;
  std::array<leaf_data<T>, 3> rows;  // rank 1, stored as rank 3 (1, 1, n) for the reference
  std::array<std::optional<tx::view<const T, 1>>, 3> row_views;
  std::array<leaf_data<source_t<T>>, 3> sources;
};

template <class T> typed_data<T>*& current() {
  static typed_data<T>* p = nullptr;
  return p;
}
graph_data*& current_graph() {
  static graph_data* p = nullptr;
  return p;
}

template <class T> const tx::view<const T, 3>& tx_builder<T>::leaf(int i) const { return *current<T>()->leaves.at(static_cast<std::size_t>(i)).view; }
template <class T> const tx::view<const T, 1>& tx_builder<T>::row(int grp) const { return *current<T>()->row_views.at(static_cast<std::size_t>(grp)); }
template <class T> const tx::view<const std::int32_t, 3>& tx_builder<T>::sel(int k) const { return *g->sel.at(static_cast<std::size_t>(k)).view; }
template <class T> auto tx_builder<T>::cast_in(int grp) const { return tx::cast<T>(*current<T>()->sources.at(static_cast<std::size_t>(grp)).view); }
// The builders take operands by const reference (texpr then references named tensors), so a reduced
// tensor is kept alive in the graph's data and read through a view.
template <class T> template <class X> tx::view<const T, 2> tx_builder<T>::red0(const X& x, int k) const {
  auto t = std::make_shared<tx::tensor<T, 2>>();
  switch (k) {
    case 0: *t = tx::sum(x, 0); break;
    case 1:
      if constexpr (std::is_floating_point_v<T>) *t = tx::mean(x, 0);
      else *t = tx::sum(x, 0);
      break;
    case 2: *t = tx::max(x, 0); break;
    case 3: *t = tx::min(x, 0); break;
    default: *t = tx::prod(x, 0); break;
  }
  g->keep.push_back(t);
  return std::as_const(*t).view();
}
template <class T> const rtensor& ref_builder<T>::leaf(int i) const { return current<T>()->leaves.at(static_cast<std::size_t>(i)).ref; }
template <class T> rtensor ref_builder<T>::row(int grp) const { return current<T>()->rows.at(static_cast<std::size_t>(grp)).ref; }
template <class T> const rtensor& ref_builder<T>::sel(int k) const { return g->sel.at(static_cast<std::size_t>(k)).ref; }
template <class T> rtensor ref_builder<T>::cast_in(int grp) const {
  rtensor r = current<T>()->sources.at(static_cast<std::size_t>(grp)).ref;
  for (cell& c : r.c) c = {test::convert_ref<T>(c.v), 0, true};
  return r;
}

// ---- Random choices -------------------------------------------------------------------------------------------

template <class T> T random_value(std::mt19937_64& g, bool wide_ints) {
  if constexpr (std::is_integral_v<T>) {
    if (wide_ints) return static_cast<T>(std::uniform_int_distribution<long long>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(g));
    return static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(g));
  } else {
    const int kind = std::uniform_int_distribution<int>(0, 19)(g);
    if (kind == 0) return T(std::uniform_int_distribution<int>(-2, 2)(g));  // exact small integers, zeros
    return static_cast<T>(std::uniform_real_distribution<double>(-2, 2)(g));
  }
}

template <class S> S random_source(std::mt19937_64& g, bool specials) {
  // Sources of casts: ordinary values; for integer targets also NaN, infinities and huge values (saturation).
  const int kind = specials ? std::uniform_int_distribution<int>(0, 9)(g) : 3;
  if (kind == 0) return std::numeric_limits<S>::quiet_NaN();
  if (kind == 1) return std::uniform_int_distribution<int>(0, 1)(g) ? std::numeric_limits<S>::infinity() : -std::numeric_limits<S>::infinity();
  if (kind == 2) return static_cast<S>(std::uniform_real_distribution<double>(-1e19, 1e19)(g));
  return static_cast<S>(std::uniform_real_distribution<double>(-3, 3)(g));
}

shape3 random_group_shape(std::mt19937_64& g) {
  shape3 s{};
  for (auto& e : s) e = std::uniform_int_distribution<int>(0, 30)(g) == 0 ? 0 : std::uniform_int_distribution<int>(1, 5)(g);
  return s;
}

// A leaf shape that broadcasts to `out`: each dimension is out's extent or 1.
shape3 leaf_shape(std::mt19937_64& g, const shape3& out) {
  shape3 s = out;
  for (auto& e : s)
    if (std::uniform_int_distribution<int>(0, 3)(g) == 0) e = 1;
  return s;
}

template <class T> void fill_graph(graph_data& gd, typed_data<T>& td, bool matmul_groups) {
  auto& g = gd.rng;
  const bool wide = std::uniform_int_distribution<int>(0, 1)(g) == 1;
  gd.group_shape[0] = random_group_shape(g);
  gd.group_shape[1] = random_group_shape(g);
  gd.group_shape[2] = random_group_shape(g);
  if (matmul_groups) {  // group 0: (b, m, k); group 1: (b, k, n); group 2: (b, m, n)
    const shape3 a = gd.group_shape[0];
    const tx::index_t n = gd.group_shape[1][2];
    gd.group_shape[1] = {a[0], a[2], n};
    gd.group_shape[2] = {a[0], a[1], n};
  } else {  // one output shape for every leaf
    gd.group_shape[1] = gd.group_shape[2] = gd.group_shape[0];
  }
  auto layout = [&] { return std::uniform_int_distribution<int>(0, 3)(g); };
  for (int i = 0; i < 9; ++i) {
    const shape3& out = gd.group_shape[static_cast<std::size_t>(i / 3)];
    // Matmul operands need their full shape from at least one leaf; leaf 3g keeps it.
    const shape3 s = i % 3 == 0 ? out : leaf_shape(g, out);
    make_leaf(td.leaves[static_cast<std::size_t>(i)], s, layout(), [&] { return random_value<T>(g, wide); });
  }
  for (int grp = 0; grp < 3; ++grp) {
    const tx::index_t n = std::uniform_int_distribution<int>(0, 2)(g) == 0 ? 1 : gd.group_shape[static_cast<std::size_t>(grp)][2];
    auto& r = td.rows[static_cast<std::size_t>(grp)];
    make_leaf(r, {1, 1, n}, 0, [&] { return random_value<T>(g, wide); });
    td.row_views[static_cast<std::size_t>(grp)].emplace(n > 0 ? r.storage.data() : nullptr, tx::shape_t<1>{n});
    make_leaf(td.sources[static_cast<std::size_t>(grp)], leaf_shape(g, gd.group_shape[static_cast<std::size_t>(grp)]),
              layout(), [&] { return random_source<source_t<T>>(g, std::is_integral_v<T>); });
  }
  for (std::size_t k = 0; k < gd.sel.size(); ++k)
    make_leaf(gd.sel[k], leaf_shape(g, gd.group_shape[k % 3]), layout(),
              [&] { return std::uniform_int_distribution<std::int32_t>(0, 9)(g); });
}

// ---- Running and comparing --------------------------------------------------------------------------------

struct stats {
  long graphs = 0, compared = 0, skipped = 0, errors_thrown = 0;
};

template <class T, std::size_t R> void compare(const tx::tensor<T, R>& got, const rtensor& want, stats& st, const std::string& what) {
  REQUIRE_MESSAGE(got.size() == want.size(), what);
  for (tx::index_t i = 0; i < got.size(); ++i) {
    const cell& w = want.c[static_cast<std::size_t>(i)];
    if (!w.known) {
      ++st.skipped;
      continue;
    }
    ++st.compared;
    const ld g = static_cast<ld>(got.data()[i]);
    bool ok;
    if (std::isnan(w.v)) ok = std::isnan(g);
    else if constexpr (std::is_integral_v<T>) ok = g == w.v;
    else ok = std::fabs(g - w.v) <= w.e;
    if (!ok) {
      FAIL_CHECK(what, ": element ", i, " got ", static_cast<double>(g), " want ", static_cast<double>(w.v), " +- ",
                 static_cast<double>(w.e));
      return;
    }
  }
}

// Reduces an evaluated root by op k over everything (axis < 0) or one axis; the result padded to rank 3.
// (Compiled once per dtype: the reductions read a leaf. Fused reductions of expressions are covered by the
// g_reduce_* templates.)
template <class T> tx::tensor<T, 3> reduce_root(const tx::tensor<T, 3>& x, int k, int axis) {
  auto run = [&](auto red) {
    if (axis < 0) {
      tx::tensor<T, 0> r = red(x);
      return tx::tensor<T, 3>(tx::shape_t<3>{1, 1, 1}, {r()});
    }
    tx::tensor<T, 2> r = red(x, axis);
    tx::tensor<T, 3> out({1, r.shape()[0], r.shape()[1]});
    for (tx::index_t i = 0; i < r.size(); ++i) out.data()[i] = r.data()[i];
    return out;
  };
  switch (k) {
    case 0: return run([](const auto&... a) { return tx::eval(tx::sum(a...)); });
    case 1:
      if constexpr (std::is_floating_point_v<T>) return run([](const auto&... a) { return tx::eval(tx::mean(a...)); });
      else return run([](const auto&... a) { return tx::eval(tx::sum(a...)); });
    case 2: return run([](const auto&... a) { return tx::eval(tx::max(a...)); });
    case 3: return run([](const auto&... a) { return tx::eval(tx::min(a...)); });
    default: return run([](const auto&... a) { return tx::eval(tx::prod(a...)); });
  }
}

// Evaluates the root (a rank-3 texpr expression) into a tensor or into a strided view, and compares it, or a
// runtime-chosen reduction of it, with the reference.
template <class T, class E> void finish(graph_data& gd, const E& root, const rtensor& want, stats& st, const std::string& what) {
  static_assert(E::rank == 3);
  auto& g = gd.rng;
  const int mode = std::uniform_int_distribution<int>(0, 3)(g);
  const int op = std::uniform_int_distribution<int>(0, std::is_floating_point_v<T> ? 4 : 3)(g);
  const int k = std::is_floating_point_v<T> ? op : (op == 1 ? 4 : op);  // integers: no mean
  const int axis = std::uniform_int_distribution<int>(0, 2)(g);
  const std::string tag = what + " mode " + std::to_string(mode) + " op " + std::to_string(k) + " axis " + std::to_string(axis);
  tx::tensor<T, 3> out;
  if (mode % 2 == 0) {
    out = root;
  } else {  // into a strided destination (transposed storage) through a view, then copied out
    const auto s = root.shape();
    std::vector<T> mem(static_cast<std::size_t>(std::max<tx::index_t>(1, tx::shape_size(s))), T(7));
    tx::view<T, 3> dst(mem.data(), s, {1, s[0], s[0] * s[1]});
    dst = root;
    out = dst;
  }
  REQUIRE(out.shape() == tx::shape_t<3>{want.shape[0], want.shape[1], want.shape[2]});
  if (mode < 2) {
    compare(out, want, st, tag);
    return;
  }
  const int red_axis = mode == 2 ? -1 : axis;
  tx::index_t out_size = 1;
  for (int d = 0; d < 3; ++d)
    if (d != red_axis) out_size *= want.shape[static_cast<std::size_t>(d)];
  const bool empty_max = (k == 2 || k == 3) && (red_axis < 0 ? want.size() == 0 : want.shape[static_cast<std::size_t>(axis)] == 0 && out_size != 0);
  if (empty_max) {
    CHECK_THROWS_AS(reduce_root(out, k, red_axis), tx::shape_error);
    ++st.errors_thrown;
    return;
  }
  compare(reduce_root(out, k, red_axis), ref_builder<T>::reduce(want, k, red_axis), st, tag);
}

// The graph templates. Each is a generic callable over a builder; the same code builds both sides.
struct g_deep {  // depth-3 elementwise tree mixing binary, unary, casts and a rank-1 broadcast
  static constexpr bool matmul = false;
  template <class B> auto operator()(const B& b) const {
    return b.bin(b.un(b.bin(b.leaf(0), b.leaf(1), 0), 1), b.bin(b.leaf(2), b.bin(b.cast_in(0), b.row(0), 2), 3), 0);
  }
};
struct g_select {  // comparisons of leaves choosing between subtrees
  static constexpr bool matmul = false;
  template <class B> auto operator()(const B& b) const {
    return b.pick(0, 1, b.un(b.bin(b.leaf(1), b.leaf(2), 1), 2), b.pick(2, 0, b.leaf(0), b.un(b.row(0), 3)));
  }
};
struct g_reduce_inside {  // reductions materialised inside an elementwise expression
  static constexpr bool matmul = false;
  template <class B> auto operator()(const B& b) const {
    return b.bin(b.sub_max0(b.bin(b.leaf(0), b.leaf(1), 0)), b.times_sum(b.un(b.leaf(2), 1)), 2);
  }
};
struct g_reduce_leaf {  // a runtime-chosen reduction along axis 0 of a fused expression, broadcast back
  static constexpr bool matmul = false;
  template <class B> auto operator()(const B& b) const {
    const int k = std::uniform_int_distribution<int>(0, 4)(current_graph()->rng);
    return b.bin(b.leaf(0), b.red0(b.bin(b.leaf(1), b.leaf(2), 0), k), 1);
  }
};
struct g_matmul {  // batched matmul of fused operands, then an elementwise epilogue
  static constexpr bool matmul = true;
  template <class B> auto operator()(const B& b) const {
    return b.bin(b.mm(b.bin(b.leaf(0), b.leaf(1), 0), b.un(b.leaf(3), 1)), b.leaf(6), 2);
  }
};

template <class T, class G> void run_graphs(int count, std::uint64_t seed, stats& st) {
  for (int i = 0; i < count; ++i) {
    graph_data gd;
    gd.rng.seed(seed * 1000003u + static_cast<std::uint64_t>(i));
    typed_data<T> td;
    current<T>() = &td;
    current_graph() = &gd;
    fill_graph<T>(gd, td, G::matmul);
    const std::string what = std::string(tx::dtype_name_v<T>) + " graph " + std::to_string(i) + " seed " + std::to_string(seed);
    INFO(what);
    ++st.graphs;
    // Both sides draw the same runtime choices: reset the generator between them.
    const auto saved = gd.rng;
    rtensor want = G{}(ref_builder<T>{&gd});
    gd.rng = saved;
    if (gd.expect_throw) {  // max/min over an empty axis inside the graph
      CHECK_THROWS_AS((tx::tensor<T, 3>(G{}(tx_builder<T>{&gd}))), tx::shape_error);
      ++st.errors_thrown;
      continue;
    }
    auto root = G{}(tx_builder<T>{&gd});
    finish<T>(gd, root, want, st, what);
  }
}

int graphs_per_case() { return rel::heavy(150, 25); }

template <class T> void run_all(std::uint64_t seed) {
  stats st;
  const int n = graphs_per_case();
  run_graphs<T, g_deep>(n, seed + 1, st);
  run_graphs<T, g_select>(n, seed + 2, st);
  run_graphs<T, g_reduce_inside>(n, seed + 3, st);
  run_graphs<T, g_reduce_leaf>(n, seed + 4, st);
  run_graphs<T, g_matmul>(n, seed + 5, st);
  MESSAGE(tx::dtype_name_v<T>, ": ", st.graphs, " graphs, ", st.compared, " elements compared, ", st.skipped,
          " skipped (undefined error bound), ", st.errors_thrown, " empty max/min errors checked");
  CHECK(st.skipped * 10 <= st.compared);  // the skips stay rare, so the comparison keeps its teeth
}

} // namespace

/// One test case per dtype and translation unit (four TUs compile in parallel).
#define TEXPR_DIFFERENTIAL_TEST(T, SEED)                                                        \
  TEST_CASE("random expression graphs agree with the reference interpreter: " #T) { run_all<T>(SEED); }

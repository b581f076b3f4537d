// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::einsum<"bij,bjk->bik">(a, b): Einstein summation over one or two operands, lowered when it is compiled to
// the ops it is made of (diagonal, a sum over several axes, permute, reshape, and one matmul or one elementwise
// product), so that it fuses, places and differentiates as they do and tx::placement shows the lowered graph. The
// subscripts are a template argument: the result's rank depends on them, and a malformed string is a compile
// error. Extents that disagree are a tx::shape_error naming the label and both shapes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "texpr/core/shape.hpp"
#include "texpr/core/source_location.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/layout.hpp"
#include "texpr/expr/matmul.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/expr/reduction.hpp"

namespace texpr {

/// The subscripts of tx::einsum, given as a string literal template argument (`tx::einsum<"ij,jk->ik">(a, b)`).
template <std::size_t N> struct einsum_subscripts {
  char text[N] = {};  ///< The characters, NUL-terminated.
  /// From a string literal.
  constexpr einsum_subscripts(const char (&s)[N]) {  // NOLINT: implicit, so that a literal converts
    for (std::size_t i = 0; i != N; ++i) text[i] = s[i];
  }
};

namespace detail::einsum_impl {

inline constexpr int max_rank = 16;       // axes of a term
inline constexpr int ellipsis_base = 52;  // labels 0..51 are 'A'..'Z', 'a'..'z' (NumPy's implicit order), then '...'

/// What can be wrong with subscripts (each has its own static_assert message in check()).
enum class fault { none, character, operands, arrow, ellipsis, rank, unknown_output, repeated_output, missing_ellipsis, too_many };

/// Labels of a term, one per axis.
struct labels {
  int v[max_rank] = {};
  int n = 0;
  constexpr bool has(int l) const {
    for (int i = 0; i != n; ++i)
      if (v[i] == l) return true;
    return false;
  }
  constexpr int find(int l) const {
    for (int i = 0; i != n; ++i)
      if (v[i] == l) return i;
    return -1;
  }
  constexpr void push(int l) { v[n++] = l; }
};

/// The parsed subscripts for operands of the given ranks: each input term's labels, and the output's.
struct parsed {
  fault err = fault::none;
  int operands = 0;
  labels in[2];
  labels out;
};

constexpr int letter(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
/// The character of label l ('.' for an ellipsis axis).
constexpr char character(int l) { return l < 26 ? static_cast<char>('A' + l) : l < 52 ? static_cast<char>('a' + l - 26) : '.'; }

/// Parses text[b, e) as a term: its letters and where its ellipsis is (-1: none); false when malformed.
template <std::size_t N>
constexpr bool scan_term(const char (&text)[N], std::size_t b, std::size_t e, labels& letters, int& ellipsis_at, fault& err) {
  ellipsis_at = -1;
  for (std::size_t i = b; i < e;) {
    if (text[i] == '.') {
      if (ellipsis_at >= 0 || i + 2 >= e || text[i + 1] != '.' || text[i + 2] != '.') {
        err = fault::ellipsis;
        return false;
      }
      ellipsis_at = letters.n;
      i += 3;
      continue;
    }
    const int l = letter(text[i]);
    if (l < 0) {
      err = fault::character;
      return false;
    }
    if (letters.n == max_rank) {
      err = fault::too_many;
      return false;
    }
    letters.push(l);
    ++i;
  }
  return true;
}

/// Parses subscripts for `given` operands of ranks r0, r1.
template <std::size_t N> constexpr parsed parse(const char (&text)[N], int given, int r0, int r1) {
  parsed p;
  std::size_t len = 0;
  while (len < N && text[len] != '\0') ++len;
  // the arrow
  std::size_t arrow = len;
  for (std::size_t i = 0; i < len; ++i) {
    if (text[i] == '-') {
      if (arrow != len || i + 1 >= len || text[i + 1] != '>') {
        p.err = fault::arrow;
        return p;
      }
      arrow = i;
    } else if (text[i] == '>' && (i == 0 || text[i - 1] != '-')) {
      p.err = fault::arrow;
      return p;
    }
  }
  // the input terms
  std::size_t begin = 0;
  labels letters[2];
  int ellipsis_at[2] = {-1, -1};
  const int ranks[2] = {r0, r1};
  for (std::size_t i = 0; i <= arrow; ++i) {
    if (i == arrow || text[i] == ',') {
      if (p.operands == 2) {
        p.err = fault::operands;
        return p;
      }
      if (!scan_term(text, begin, i, letters[p.operands], ellipsis_at[p.operands], p.err)) return p;
      ++p.operands;
      begin = i + 1;
    }
  }
  if (p.operands != given) {
    p.err = fault::operands;
    return p;
  }
  // ellipsis lengths, right-aligned across the operands
  int width[2] = {0, 0};
  int widest = 0;
  for (int k = 0; k != p.operands; ++k) {
    const int explicit_axes = letters[k].n;
    if (ellipsis_at[k] < 0 ? explicit_axes != ranks[k] : explicit_axes > ranks[k]) {
      p.err = fault::rank;
      return p;
    }
    width[k] = ellipsis_at[k] < 0 ? 0 : ranks[k] - explicit_axes;
    if (width[k] > widest) widest = width[k];
  }
  for (int k = 0; k != p.operands; ++k) {
    for (int i = 0; i != letters[k].n + width[k]; ++i) {
      const int at = ellipsis_at[k];
      if (at >= 0 && i >= at && i < at + width[k]) p.in[k].push(ellipsis_base + widest - width[k] + (i - at));
      else p.in[k].push(letters[k].v[at >= 0 && i >= at + width[k] ? i - width[k] : i]);
    }
  }
  // the output
  const auto occurrences = [&](int l) {
    int c = 0;
    for (int k = 0; k != p.operands; ++k)
      for (int i = 0; i != p.in[k].n; ++i) c += p.in[k].v[i] == l ? 1 : 0;
    return c;
  };
  if (arrow == len) {  // implicit: the ellipsis axes, then the labels used once, in NumPy's order
    for (int e = 0; e != widest; ++e) p.out.push(ellipsis_base + e);
    for (int l = 0; l != ellipsis_base; ++l)
      if (occurrences(l) == 1) p.out.push(l);
  } else {
    labels out_letters;
    int out_ellipsis = -1;
    if (!scan_term(text, arrow + 2, len, out_letters, out_ellipsis, p.err)) return p;
    if (out_ellipsis < 0 && widest > 0) {
      p.err = fault::missing_ellipsis;
      return p;
    }
    for (int i = 0; i != out_letters.n; ++i) {
      if (out_ellipsis == i)
        for (int e = 0; e != widest; ++e) p.out.push(ellipsis_base + e);
      const int l = out_letters.v[i];
      if (occurrences(l) == 0) {
        p.err = fault::unknown_output;
        return p;
      }
      if (p.out.has(l)) {
        p.err = fault::repeated_output;
        return p;
      }
      p.out.push(l);
    }
    if (out_ellipsis == out_letters.n)
      for (int e = 0; e != widest; ++e) p.out.push(ellipsis_base + e);
  }
  if (p.out.n > max_rank) p.err = fault::too_many;
  return p;
}

/// One diagonal step of a term: the first label that repeats, at axes a1 < a2 (found: false when none does).
struct repeat {
  bool found = false;
  int a1 = 0, a2 = 0;
};
constexpr repeat first_repeat(const labels& t) {
  for (int i = 0; i != t.n; ++i)
    for (int j = i + 1; j != t.n; ++j)
      if (t.v[i] == t.v[j]) return {true, i, j};
  return {};
}
/// The term after tx::diagonal of axes r.a1, r.a2: both removed, the label appended.
constexpr labels after_diagonal(const labels& t, repeat r) {
  labels o;
  for (int i = 0; i != t.n; ++i)
    if (i != r.a1 && i != r.a2) o.push(t.v[i]);
  o.push(t.v[r.a1]);
  return o;
}
/// The term with every repeated label taken to its diagonal.
constexpr labels without_repeats(labels t) {
  for (repeat r = first_repeat(t); r.found; r = first_repeat(t)) t = after_diagonal(t, r);
  return t;
}
/// The axes of term t whose labels neither the output nor the other term has (summed before anything else).
constexpr std::uint32_t private_axes(const labels& t, const labels& other, const labels& out) {
  std::uint32_t m = 0;
  for (int i = 0; i != t.n; ++i)
    if (!out.has(t.v[i]) && !other.has(t.v[i])) m |= std::uint32_t(1) << i;
  return m;
}
constexpr labels without_axes(const labels& t, std::uint32_t mask) {
  labels o;
  for (int i = 0; i != t.n; ++i)
    if (!((mask >> i) & 1u)) o.push(t.v[i]);
  return o;
}
/// The labels of `from` that `pick` keeps, in the order of `order`.
template <class Pick> constexpr labels select(const labels& order, Pick pick) {
  labels o;
  for (int i = 0; i != order.n; ++i)
    if (pick(order.v[i])) o.push(order.v[i]);
  return o;
}
constexpr labels concat(const labels& a, const labels& b) {
  labels o = a;
  for (int i = 0; i != b.n; ++i) o.push(b.v[i]);
  return o;
}
constexpr labels concat(const labels& a, const labels& b, const labels& c) { return concat(concat(a, b), c); }
constexpr bool identity_order(const labels& from, const labels& to) {
  if (from.n != to.n) return false;
  for (int i = 0; i != from.n; ++i)
    if (from.v[i] != to.v[i]) return false;
  return true;
}

/// How two reduced terms a and b meet: batch labels (both, and the output), contracted (both, not the output),
/// the labels of one only (in the output's order).
struct contraction {
  labels batch, left, right, summed;
};
constexpr contraction classify(const labels& a, const labels& b, const labels& out) {
  contraction c;
  c.batch = select(out, [&](int l) { return a.has(l) && b.has(l); });
  c.left = select(out, [&](int l) { return a.has(l) && !b.has(l); });
  c.right = select(out, [&](int l) { return b.has(l) && !a.has(l); });
  c.summed = select(a, [&](int l) { return b.has(l) && !out.has(l); });
  return c;
}

// ---- building the graph ------------------------------------------------------------------------------------------

/// x with its axes reordered from labels `from` to labels `to` (a permutation of them); x itself when in order.
template <labels From, labels To, class X> auto reorder(X x) {
  static_assert(From.n == To.n);
  if constexpr (identity_order(From, To)) {
    return x;
  } else {
    constexpr std::size_t R = static_cast<std::size_t>(To.n);
    typename op::permute::template params<R, R> p;
    for (std::size_t d = 0; d != R; ++d) p.perm[d] = static_cast<std::size_t>(From.find(To.v[d]));
    return layout_expr<op::permute, X, R>(std::move(x), p);
  }
}

/// x (labels T) with every repeated label taken to its diagonal.
template <labels T, class X> auto take_diagonals(X x) {
  constexpr repeat r = first_repeat(T);
  if constexpr (!r.found) {
    return x;
  } else {
    constexpr std::size_t R = static_cast<std::size_t>(T.n);
    typename op::diagonal::template params<R, R - 1> p;
    p.axis1 = static_cast<std::size_t>(r.a1);
    p.axis2 = static_cast<std::size_t>(r.a2);
    return take_diagonals<after_diagonal(T, r)>(layout_expr<op::diagonal, X, R - 1>(std::move(x), p));
  }
}

/// x summed over the axes in Mask (one reduction pass), x itself for none.
template <std::uint32_t Mask, class X> auto sum_axes(X x) {
  if constexpr (Mask == 0) {
    return x;
  } else {
    constexpr std::size_t R = X::rank - static_cast<std::size_t>(std::popcount(Mask));
    return reduce_expr<op::sum, X, R>(std::move(x), op::sum{}, Mask);
  }
}

/// x (labels T, a subsequence of Full) with an axis of extent 1 inserted for each label of Full it lacks.
template <labels T, labels Full, class X> auto expand_to(X x) {
  if constexpr (T.n == Full.n) {
    return x;
  } else {
    constexpr int at = [] {
      for (int i = 0; i != Full.n; ++i)
        if (i >= T.n || T.v[i] != Full.v[i]) return i;
      return Full.n;
    }();
    constexpr labels next = [] {
      labels o;
      for (int i = 0; i != T.n + 1; ++i) o.push(i < at ? T.v[i] : i == at ? Full.v[at] : T.v[i - 1]);
      return o;
    }();
    typename op::unsqueeze::template params<X::rank, X::rank + 1> p;
    p.axis = static_cast<std::size_t>(at);
    return expand_to<next, Full>(layout_expr<op::unsqueeze, X, X::rank + 1>(std::move(x), p));
  }
}

/// The product of the extents of x's axes [first, first + count), as a shape entry.
template <std::size_t R> index_t extent_product(const shape_t<R>& s, int first, int count) {
  index_t n = 1;
  for (int i = first; i != first + count; ++i) n *= s[static_cast<std::size_t>(i)];
  return n;
}

/// Throws unless every label has one extent across the operands (an ellipsis axis of extent 1 broadcasts).
template <class... S>
void check_extents(const char* text, const labels* terms, const texpr::source_location& loc, const S&... shapes) {
  index_t extent[ellipsis_base + max_rank];
  int from[ellipsis_base + max_rank];
  for (int l = 0; l != ellipsis_base + max_rank; ++l) from[l] = -1;
  std::string descriptions[] = {to_string(shapes)...};
  int k = 0;
  const auto one = [&](const auto& s) {
    for (int i = 0; i != terms[k].n; ++i) {
      const int l = terms[k].v[i];
      const index_t e = s[static_cast<std::size_t>(i)];
      if (from[l] < 0 || (l >= ellipsis_base && extent[l] == 1)) {
        if (from[l] < 0 || e != 1) {
          from[l] = k;
          extent[l] = e;
        }
      } else if (extent[l] != e && !(l >= ellipsis_base && e == 1)) {
        std::string label = l >= ellipsis_base ? std::string("an axis of '...'") : std::string("label '") + character(l) + "'";
        throw shape_error(at(loc) + "texpr: einsum \"" + text + "\": " + label + " has extent " + std::to_string(extent[l]) +
                          " in operand " + std::to_string(from[l]) + " (shape " + descriptions[from[l]] + ") and " +
                          std::to_string(e) + " in operand " + std::to_string(k) + " (shape " + descriptions[k] + ")");
      }
    }
    ++k;
  };
  (one(shapes), ...);
}

/// The rank the output term reads as (its letters; without "->", the letters written once), whatever is wrong
/// elsewhere: the rank of the stand-in result after a diagnostic.
template <std::size_t N> constexpr std::size_t written_output_rank(const char (&text)[N]) {
  std::size_t arrow = N, count = 0;
  for (std::size_t i = 0; i + 1 < N; ++i)
    if (text[i] == '-' && text[i + 1] == '>') arrow = i;
  if (arrow != N) {
    for (std::size_t i = arrow + 2; i < N; ++i) count += letter(text[i]) >= 0 ? 1 : 0;
    return count;
  }
  for (int l = 0; l != ellipsis_base; ++l) {
    int seen = 0;
    for (std::size_t i = 0; i < N; ++i) seen += letter(text[i]) == l ? 1 : 0;
    count += seen == 1 ? 1 : 0;
  }
  return count;
}

/// The compile-time checks, one message per mistake.
template <parsed P> constexpr bool check() {
  static_assert(P.err != fault::character, "texpr: einsum: a subscript is not a letter, ',', '->' or '...'");
  static_assert(P.err != fault::operands, "texpr: einsum: the subscripts name another number of operands than given (1 or 2)");
  static_assert(P.err != fault::arrow, "texpr: einsum: '->' appears once at most, '-' and '>' only there");
  static_assert(P.err != fault::ellipsis, "texpr: einsum: '.' only as one '...' per term");
  static_assert(P.err != fault::rank, "texpr: einsum: a term has another number of labels than its operand has axes");
  static_assert(P.err != fault::unknown_output, "texpr: einsum: an output label appears in no input term");
  static_assert(P.err != fault::repeated_output, "texpr: einsum: an output label appears twice");
  static_assert(P.err != fault::missing_ellipsis,
                "texpr: einsum: the inputs have '...' axes, so the output names them too ('...' in the output term)");
  static_assert(P.err != fault::too_many, "texpr: einsum: a term has more than 16 axes");
  return P.err == fault::none;
}

/// One operand: diagonals, the sum over labels the output lacks, then the output's order.
template <parsed P, class A> auto one(A a) {
  constexpr labels t = without_repeats(P.in[0]);
  constexpr std::uint32_t m = private_axes(t, labels{}, P.out);
  return reorder<without_axes(t, m), P.out>(sum_axes<m>(take_diagonals<P.in[0]>(std::move(a))));
}

/// x (batch..., Rows labels..., Cols labels...) as (batch..., product of the rows, product of the cols).
template <std::size_t NB, int Rows, int Cols, class X> auto as_matrices(X x) {
  if constexpr (Rows == 1 && Cols == 1) {
    return x;
  } else {
    const auto s = x.shape();
    shape_t<NB + 2> m{};
    for (std::size_t d = 0; d != NB; ++d) m[d] = s[d];
    m[NB] = extent_product(s, static_cast<int>(NB), Rows);
    m[NB + 1] = extent_product(s, static_cast<int>(NB) + Rows, Cols);
    return texpr::reshape(std::move(x), m);
  }
}

/// (batch..., M, K) x (batch..., K, N), M, K and N the products of the left, summed and right extents, then the
/// output's labels and order. a has labels La, b labels Lb.
template <labels Batch, labels Left, labels Summed, labels Right, labels Out, labels La, labels Lb, class A, class B>
auto contract(A ra, B rb) {
  constexpr labels ao = concat(Batch, Left, Summed), bo = concat(Batch, Summed, Right);
  constexpr std::size_t nb = static_cast<std::size_t>(Batch.n);
  auto pa = reorder<La, ao>(std::move(ra));
  auto pb = reorder<Lb, bo>(std::move(rb));
  const auto as = pa.shape();
  const auto bs = pb.shape();
  auto product = matmul(as_matrices<nb, Left.n, Summed.n>(std::move(pa)), as_matrices<nb, Summed.n, Right.n>(std::move(pb)));
  constexpr labels full = concat(Batch, Left, Right);
  if constexpr (Left.n == 1 && Right.n == 1) {
    return reorder<full, Out>(std::move(product));
  } else {
    const auto ps = product.shape();
    shape_t<static_cast<std::size_t>(full.n)> s{};
    for (std::size_t d = 0; d != nb; ++d) s[d] = ps[d];
    for (int i = 0; i != Left.n; ++i) s[nb + static_cast<std::size_t>(i)] = as[nb + static_cast<std::size_t>(i)];
    for (int i = 0; i != Right.n; ++i)
      s[nb + static_cast<std::size_t>(Left.n + i)] = bs[nb + static_cast<std::size_t>(Summed.n + i)];
    return reorder<full, Out>(texpr::reshape(std::move(product), s));
  }
}

/// Two operands: each reduced alone first, then one matmul (or, with nothing contracted or nothing but batch
/// labels kept, one elementwise product, summed over the contracted labels in the same pass).
template <parsed P, class A, class B> auto two(A a, B b) {
  constexpr labels ta = without_repeats(P.in[0]), tb = without_repeats(P.in[1]);
  constexpr std::uint32_t ma = private_axes(ta, tb, P.out), mb = private_axes(tb, ta, P.out);
  constexpr labels la = without_axes(ta, ma), lb = without_axes(tb, mb);
  constexpr contraction c = classify(la, lb, P.out);
  auto ra = sum_axes<ma>(take_diagonals<P.in[0]>(std::move(a)));
  auto rb = sum_axes<mb>(take_diagonals<P.in[1]>(std::move(b)));
  if constexpr (c.left.n == 0 && c.right.n == 0) {
    // a dot product per batch element: (batch..., summed...) times the same, the summed axes reduced
    constexpr labels order = concat(c.batch, c.summed);
    constexpr std::uint32_t summed = c.summed.n == 0 ? 0u : ((std::uint32_t(1) << order.n) - 1) & ~((std::uint32_t(1) << c.batch.n) - 1);
    return sum_axes<summed>(reorder<la, order>(std::move(ra)) * reorder<lb, order>(std::move(rb)));
  } else if constexpr (c.summed.n == 0) {
    // an outer product per batch element: (batch..., left..., 1...) times (batch..., 1..., right...)
    constexpr labels full = concat(c.batch, c.left, c.right);
    constexpr labels ao = concat(c.batch, c.left), bo = concat(c.batch, c.right);
    return reorder<full, P.out>(expand_to<ao, full>(reorder<la, ao>(std::move(ra)))) *
           reorder<full, P.out>(expand_to<bo, full>(reorder<lb, bo>(std::move(rb))));  // (each a view: the product is written in order)
  } else if constexpr (identity_order(concat(c.batch, c.right, c.left), P.out) && !identity_order(concat(c.batch, c.left, c.right), P.out)) {
    // the output is (batch..., right..., left...): (a b)^T = b^T a^T, computed as that product, with no permute
    return contract<c.batch, c.right, c.summed, c.left, P.out, lb, la>(std::move(rb), std::move(ra));
  } else {
    return contract<c.batch, c.left, c.summed, c.right, P.out, la, lb>(std::move(ra), std::move(rb));
  }
}

} // namespace detail::einsum_impl

namespace detail::einsum_impl {
template <einsum_subscripts S, class... C> auto build(const texpr::source_location& loc, C... c) {
  constexpr int r0 = static_cast<int>(std::tuple_element_t<0, std::tuple<C...>>::rank);
  constexpr int r1 = static_cast<int>(std::tuple_element_t<sizeof...(C) - 1, std::tuple<C...>>::rank);
  constexpr parsed p = parse(S.text, static_cast<int>(sizeof...(C)), r0, r1);
  if constexpr (!check<p>()) {
    // (the static_assert above reported the mistake; a zero of the operands' dtype and backend stands in for the
    // result, so that the user's next line does not add errors of its own)
    using First = std::tuple_element_t<0, std::tuple<C...>>;
    constexpr std::size_t R = written_output_rank(S.text);
    return constant_expr<typename First::value_type, R, typename First::backend>(typename First::value_type{}, shape_t<R>{});
  } else {
    check_extents(S.text, p.in, loc, c.shape()...);
    if constexpr (sizeof...(C) == 1) return one<p>(std::move(c)...);
    else return two<p>(std::move(c)...);
  }
}
} // namespace detail::einsum_impl

/// Einstein summation (numpy.einsum, torch.einsum) over one operand: `tx::einsum<"ii">(m)` (a trace),
/// `tx::einsum<"ij->ji">(m)`. Implicit output (no "->"): the '...' axes, then the labels used once, uppercase before
/// lowercase, as NumPy. Lowered when compiled to diagonal, sum and permute (what tx::placement shows and tx::grad
/// differentiates). Malformed subscripts are a compile error; extents that disagree a tx::shape_error.
template <einsum_subscripts S, operand A> auto einsum(A&& a, texpr::source_location loc = texpr::source_location::current()) {
  return detail::einsum_impl::build<S>(loc, detail::capture(std::forward<A>(a)));
}
/// Einstein summation over two operands: `tx::einsum<"bij,bjk->bik">(a, b)`, `tx::einsum<"...ij,...jk">(a, b)`
/// ('...' axes broadcast). Each operand's diagonals and private labels first, then one matmul (batch, left, summed
/// and right labels grouped by permute and reshape), or one elementwise product where nothing is contracted or
/// nothing but batch labels is kept (then summed in the same pass).
template <einsum_subscripts S, operand A, operand B>
auto einsum(A&& a, B&& b, texpr::source_location loc = texpr::source_location::current()) {
  using CA = detail::captured_t<A>;
  using CB = detail::captured_t<B>;
  detail::check_same_dtype<typename CA::value_type, typename CB::value_type>();
  detail::check_same_backend<typename CA::backend, typename CB::backend>();
  return detail::einsum_impl::build<S>(loc, detail::capture(std::forward<A>(a)), detail::capture(std::forward<B>(b)));
}

} // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Printing tensors, views and host expressions as NumPy's repr does: `std::cout << t`, tx::repr(t).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

/// NumPy's print options that tx::repr honours (defaults are NumPy's): summarise arrays of more than `threshold`
/// elements to `edge_items` leading and trailing entries per axis; wrap lines at `line_width` characters.
struct print_options {
  index_t threshold = 1000;     ///< More elements than this are summarised with "...".
  index_t edge_items = 3;       ///< Entries kept at each end of a summarised axis.
  std::size_t line_width = 75;  ///< Maximum characters per line.
};

namespace detail {

/// Host data as printing reads it: first element, extents and strides (elements), all of runtime rank.
template <class T> struct print_source {
  const T* data = nullptr;
  std::vector<index_t> shape, strides;
  index_t size() const {
    index_t n = 1;
    for (index_t e : shape) n *= e;
    return n;
  }
  T at(const std::vector<index_t>& index) const {
    index_t offset = 0;
    for (std::size_t d = 0; d != index.size(); ++d) offset += index[d] * strides[d];
    return data[offset];
  }
};

/// Digits of x's shortest round-trip decimal: value = digits[0].digits[1..] * 10^exponent (x finite, |x| taken).
struct print_digits {
  std::string digits;
  int exponent = 0;
};

inline print_digits print_parse_scientific(std::string_view s) {  // "d.ddde+XX" or "de-XX", no sign
  print_digits out;
  const std::size_t e = s.find('e');
  for (char c : s.substr(0, e))
    if (c != '.') out.digits += c;
  std::from_chars(s.data() + e + (s[e + 1] == '+' ? 2 : 1), s.data() + s.size(), out.exponent);
  return out;
}

inline std::string print_chars(double v, std::chars_format format, int precision) {
  char buffer[512];  // fixed with 8 digits of 1.8e308 needs 318
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, v, format, precision);
  return std::string(buffer, r.ptr);
}

/// Shortest digits that read back as the same T. float and double: std::to_chars; half and bfloat16: the fewest
/// significant digits whose decimal rounds back to the same bits (NumPy's Dragon4 gives the same digits).
template <class T> print_digits print_shortest(T x) {
  char buffer[64];
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, std::signbit(x) ? -x : x, std::chars_format::scientific);
    return print_parse_scientific(std::string_view(buffer, static_cast<std::size_t>(r.ptr - buffer)));
  } else {
    const float f = std::fabs(static_cast<float>(x));
    for (int precision = 0;; ++precision) {
      const std::string s = print_chars(f, std::chars_format::scientific, precision);
      float back = 0;
      std::from_chars(s.data(), s.data() + s.size(), back);
      if (T(back).bits == T(f).bits || precision >= 9) return print_parse_scientific(s);
    }
  }
}

/// NumPy's FloatingFormat with its defaults (floatmode 'maxprec', precision 8, no suppress_small, sign '-', or '+'
/// for a complex number's imaginary parts: `plus`): positional unless the nonzero magnitudes reach 1e8, go below 1e-4
/// or span more than a factor 1000; one padding for the whole array so that the decimal points line up.
template <class T> class print_float_format {
 public:
  explicit print_float_format(const std::vector<T>& data, bool plus = false) : plus_(plus) {
    std::vector<double> finite;
    bool negative_inf = false, non_finite = false;
    double max_abs = 0, min_abs = 0;
    for (T x : data) {
      const double v = value(x);
      if (!std::isfinite(v)) {
        non_finite = true;
        negative_inf = negative_inf || v < 0;
        continue;
      }
      finite.push_back(v);
      if (v == 0) continue;
      const double a = std::fabs(v);
      if (max_abs == 0 || a > max_abs) max_abs = a;
      if (min_abs == 0 || a < min_abs) min_abs = a;
    }
    if (max_abs != 0) {
      // NumPy divides in the array's dtype: the ratio is rounded to T (float for the 16-bit types' float route).
      double ratio = max_abs / min_abs;
      if constexpr (!std::is_same_v<T, double>) ratio = value(static_cast<T>(static_cast<float>(ratio)));
      exp_format_ = max_abs >= 1e8 || min_abs < 1e-4 || ratio > 1000.;
    }
    if (exp_format_) {
      for (double v : finite) {
        const std::string s = first_pass_scientific(v);
        const std::size_t e = s.find('e'), dot = s.find('.');
        precision_ = std::max(precision_, static_cast<int>(e - dot - 1));
        exp_digits_ = std::max(exp_digits_, static_cast<int>(s.size() - e - 2));
        pad_left_ = std::max(pad_left_, static_cast<int>(dot));
      }
      pad_right_ = exp_digits_ + 2 + precision_;
    } else {
      for (double v : finite) {
        const std::string s = positional(v);
        const std::size_t dot = s.find('.');
        pad_left_ = std::max(pad_left_, static_cast<int>(dot));
        pad_right_ = std::max(pad_right_, static_cast<int>(s.size() - dot - 1));
      }
    }
    if (non_finite) {  // NumPy counts the sign of inf (always, with sign '+'), not that of nan
      const int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (negative_inf || plus_ ? 1 : 0) - offset});
    }
  }

  std::string operator()(T x) const {
    const double v = value(x);
    std::string s;
    if (std::isnan(v)) {
      s = plus_ ? "+nan" : "nan";
    } else if (std::isinf(v)) {
      s = v < 0 ? "-inf" : plus_ ? "+inf" : "inf";
    } else if (exp_format_) {
      s = print_chars(std::fabs(v), std::chars_format::scientific, precision_);
      std::size_t e = s.find('e');
      if (s.find('.') == std::string::npos) s.insert(e++, ".");  // NumPy keeps the point: "1.e+20"
      std::string exponent = s.substr(e + 2);
      if (exponent.size() < static_cast<std::size_t>(exp_digits_))
        exponent.insert(0, static_cast<std::size_t>(exp_digits_) - exponent.size(), '0');
      s = sign(v) + s.substr(0, e + 2) + exponent;
      return pad(s, s.find('.'), 0);
    } else {
      s = positional(v);
      const std::size_t dot = s.find('.');
      return pad(s, dot, pad_right_ - static_cast<int>(s.size() - dot - 1));
    }
    const std::size_t width = static_cast<std::size_t>(pad_left_ + pad_right_ + 1);
    return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
  }

 private:
  static double value(T x) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return static_cast<float>(x);
    else return static_cast<double>(x);
  }
  static T same_type(double v) {
    if constexpr (std::is_same_v<T, double>) return v;
    else return static_cast<T>(static_cast<float>(v));
  }
  std::string pad(const std::string& s, std::size_t dot, int right) const {
    const int left = pad_left_ - static_cast<int>(dot);
    return std::string(static_cast<std::size_t>(std::max(left, 0)), ' ') + s +
           std::string(static_cast<std::size_t>(std::max(right, 0)), ' ');
  }
  std::string sign(double v) const { return std::signbit(v) ? "-" : plus_ ? "+" : ""; }
  // Dragon4 positional, unique digits, at most 8 after the point, trailing zeros trimmed but the point kept.
  std::string positional(double v) const {
    const print_digits d = print_shortest(same_type(v));
    const int n = static_cast<int>(d.digits.size());
    std::string out = sign(v);
    if (n - 1 - d.exponent > 8) {  // more digits than the precision: round the exact value to 8 places
      std::string s = print_chars(std::fabs(v), std::chars_format::fixed, 8);
      while (s.back() == '0') s.pop_back();
      return out + s;
    }
    if (d.exponent >= 0) {
      for (int i = 0; i <= d.exponent; ++i) out += i < n ? d.digits[static_cast<std::size_t>(i)] : '0';
      out += '.';
      if (n > d.exponent + 1) out += d.digits.substr(static_cast<std::size_t>(d.exponent) + 1);
    } else {
      out += "0." + std::string(static_cast<std::size_t>(-d.exponent - 1), '0') + d.digits;
    }
    return out;
  }
  // Dragon4 scientific, unique digits, at most 8 after the point: what fixes the common precision.
  std::string first_pass_scientific(double v) const {
    const print_digits d = print_shortest(same_type(v));
    std::string s;
    if (d.digits.size() > 9) {
      s = print_chars(std::fabs(v), std::chars_format::scientific, 8);
      std::size_t e = s.find('e');
      while (s[e - 1] == '0') s.erase(--e, 1);
    } else {
      s = d.digits.substr(0, 1) + "." + d.digits.substr(1) + "e" + (d.exponent < 0 ? "-" : "+") +
          (std::abs(d.exponent) < 10 ? "0" : "") + std::to_string(std::abs(d.exponent));
    }
    if (s.find('.') == std::string::npos) s.insert(s.find('e'), ".");
    return sign(v) + s;
  }

  bool plus_ = false;
  bool exp_format_ = false;
  int pad_left_ = 0, pad_right_ = 0, precision_ = 0, exp_digits_ = 0;
};

/// NumPy's IntegerFormat: right-aligned to the widest of the data; BoolFormat: " True" / "False" (no pad at rank 0).
template <class T> class print_plain_format {
 public:
  print_plain_format(const std::vector<T>& data, bool rank0) {
    if constexpr (std::is_same_v<T, bool>) {
      true_ = rank0 ? "True" : " True";
    } else {
      for (T x : data) width_ = std::max(width_, std::to_string(x).size());
    }
  }
  std::string operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) {
      return x ? true_ : "False";
    } else {
      const std::string s = std::to_string(x);
      return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
    }
  }

 private:
  std::size_t width_ = 0;
  std::string true_;
};

/// NumPy's ComplexFloatingFormat: a FloatingFormat of the real parts and one of the imaginary parts (sign '+'), each
/// over all the printed values; `j` goes after the imaginary part, before its padding.
template <class T> class print_complex_format {
 public:
  explicit print_complex_format(const std::vector<T>& data) : real_(part(data, false)), imag_(part(data, true), true) {}
  std::string operator()(T z) const {
    std::string i = imag_(z.imag());
    i.insert(i.find_last_not_of(' ') + 1, "j");
    return real_(z.real()) + i;
  }

 private:
  using R = real_of_t<T>;
  static std::vector<R> part(const std::vector<T>& data, bool imaginary) {
    std::vector<R> out;
    out.reserve(data.size());
    for (const T& z : data) out.push_back(imaginary ? z.imag() : z.real());
    return out;
  }
  print_float_format<R> real_, imag_;
};

template <class T>
using print_format = std::conditional_t<std::is_integral_v<T>, print_plain_format<T>,
                                        std::conditional_t<is_complex_v<T>, print_complex_format<T>, print_float_format<T>>>;

/// NumPy's _extendLine (non-legacy): wrap before `word` when it would pass `width`, unless wrapping cannot help.
inline void print_extend_line(std::string& s, std::string& line, const std::string& word, std::size_t width,
                              const std::string& next_prefix) {
  if (line.size() + word.size() > width && line.size() > next_prefix.size()) {
    s += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    line = next_prefix;
  }
  line += word;
}

/// NumPy's _extendLine_pretty: a multi-line word (a nested block) keeps its own line breaks.
inline void print_extend_line_pretty(std::string& s, std::string& line, const std::string& word, std::size_t width,
                                     const std::string& next_prefix) {
  std::vector<std::string> words;
  for (std::size_t start = 0;;) {
    const std::size_t end = word.find('\n', start);
    words.push_back(word.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  if (words.size() == 1) return print_extend_line(s, line, word, width, next_prefix);
  std::size_t max_length = 0;
  for (const std::string& w : words) max_length = std::max(max_length, w.size());
  std::string indent;
  if (line.size() + max_length > width && line.size() > next_prefix.size()) {
    s += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    line = next_prefix + words[0];
    indent = next_prefix;
  } else {
    indent = std::string(line.size(), ' ');
    line += words[0];
  }
  for (std::size_t i = 1; i != words.size(); ++i) {
    s += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    line = indent + words[i];
  }
  line += std::string(max_length - words.back().size(), ' ');
}

/// NumPy's _formatArray (non-legacy): nested brackets, ", " between elements, rows wrapped at the width, a blank
/// line per extra axis between blocks, "..." in place of the middle of a summarised axis.
template <class T, class Format> class print_formatter {
 public:
  print_formatter(const print_source<T>& a, const Format& format, bool summary, index_t edge_items)
      : a_(a), format_(format), summary_(summary), edge_(edge_items) {}

  std::string run(const std::string& prefix, std::size_t width) {
    std::vector<index_t> index;
    return recurse(index, prefix, width);
  }

 private:
  std::string recurse(std::vector<index_t>& index, const std::string& hanging, std::size_t width) {
    const std::size_t axis = index.size();
    const std::size_t axes_left = a_.shape.size() - axis;
    if (axes_left == 0) return format_(a_.at(index));
    const std::string next_hanging = hanging + " ";
    const std::size_t next_width = width - 1;
    const index_t length = a_.shape[axis];
    const bool show_summary = summary_ && 2 * edge_ < length;
    const index_t leading = show_summary ? edge_ : 0, trailing = show_summary ? edge_ : length;
    const auto element = [&](index_t i) {
      index.push_back(i);
      std::string word = recurse(index, next_hanging, next_width);
      index.pop_back();
      return word;
    };
    std::string s;
    if (axes_left == 1) {
      const std::size_t elem_width = width - 1;  // max(len(","), len("]"))
      std::string line = hanging;
      for (index_t i = 0; i != leading; ++i) {
        print_extend_line_pretty(s, line, element(i), elem_width, hanging);
        line += ", ";
      }
      if (show_summary) {
        print_extend_line(s, line, "...", elem_width, hanging);
        line += ", ";
      }
      for (index_t i = trailing; i > 1; --i) {
        print_extend_line_pretty(s, line, element(length - i), elem_width, hanging);
        line += ", ";
      }
      print_extend_line_pretty(s, line, element(length - 1), elem_width, hanging);
      s += line;
    } else {
      const std::string line_sep = "," + std::string(axes_left - 1, '\n');
      for (index_t i = 0; i != leading; ++i) s += hanging + element(i) + line_sep;
      if (show_summary) s += hanging + "..." + line_sep;
      for (index_t i = trailing; i > 1; --i) s += hanging + element(length - i) + line_sep;
      s += hanging + element(length - 1);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }

  const print_source<T>& a_;
  const Format& format_;
  bool summary_;
  index_t edge_;
};

/// The elements NumPy's formatter sizes itself on: all of them, or a summarised array's leading and trailing corners.
template <class T> std::vector<T> print_corners(const print_source<T>& a, bool summary, index_t edge) {
  std::vector<std::vector<index_t>> kept(a.shape.size());
  for (std::size_t d = 0; d != a.shape.size(); ++d)
    for (index_t i = 0; i != a.shape[d]; ++i)
      if (!summary || a.shape[d] <= 2 * edge || i < edge || i >= a.shape[d] - edge) kept[d].push_back(i);
  std::vector<T> out;
  std::vector<std::size_t> odometer(a.shape.size(), 0);
  std::vector<index_t> index(a.shape.size());
  for (;;) {
    for (std::size_t d = 0; d != index.size(); ++d) index[d] = kept[d][odometer[d]];
    out.push_back(a.at(index));
    std::size_t d = index.size();
    while (d > 0 && ++odometer[d - 1] == kept[d - 1].size()) odometer[--d] = 0;
    if (d == 0) return out;
  }
}

/// NumPy's array_repr: `array(` + the nested lists + `, dtype=...)` unless the dtype is implied by the values
/// (float64, complex128, bool, int64 as on Linux and macOS) or the array is empty; the dtype moves to its own line when it
/// would pass the width.
template <class T> std::string print_repr(const print_source<T>& a, const print_options& options) {
  using element = T;
  const index_t size = a.size();
  const bool implied = (std::is_same_v<element, double> || std::is_same_v<element, bool> ||
                        std::is_same_v<element, std::int64_t> || std::is_same_v<element, std::complex<double>>) && size > 0;
  const std::string prefix = "array(", suffix = implied ? ")" : ",";
  std::string list;
  if (size == 0 && a.shape.size() == 1) {
    list = "[]";
  } else if (size == 0) {
    list = "[], shape=(";
    for (std::size_t d = 0; d != a.shape.size(); ++d) list += (d ? ", " : "") + std::to_string(a.shape[d]);
    list += a.shape.size() == 1 ? ",)" : ")";
  } else {
    const bool summary = size > options.threshold;
    const std::vector<element> corners = print_corners(a, summary, options.edge_items);
    const print_format<element> format = [&] {
      if constexpr (std::is_integral_v<element>) return print_format<element>(corners, a.shape.empty());
      else return print_format<element>(corners);
    }();
    print_formatter<T, print_format<element>> formatter(a, format, summary, options.edge_items);
    list = formatter.run(std::string(1 + prefix.size(), ' '), options.line_width - suffix.size());
  }
  std::string out = prefix + list + suffix;
  if (implied) return out;
  const std::string dtype = "dtype=" + std::string(dtype_name_v<element>) + ")";
  const std::size_t newline = out.rfind('\n');
  const std::size_t last_line = out.size() - (newline == std::string::npos ? 0 : newline + 1);
  if (last_line + dtype.size() + 1 > options.line_width) return out + "\n" + std::string(prefix.size(), ' ') + dtype;
  return out + " " + dtype;
}

template <class T, std::size_t R>
print_source<T> print_source_of(const T* data, const shape_t<R>& shape, const shape_t<R>* strides) {
  print_source<T> s{data, std::vector<index_t>(shape.begin(), shape.end()), std::vector<index_t>(R, 0)};
  if (s.size() > 0) {
    const shape_t<R> st = strides ? *strides : contiguous_strides(shape);
    s.strides.assign(st.begin(), st.end());
  }
  return s;
}

} // namespace detail

/// NumPy's repr of a host tensor, view or expression (evaluated on the host first), e.g.
/// `array([[1., 2.],\n       [3., 4.]], dtype=float32)`, with NumPy's default print options unless given.
/// Floats use the shortest round-trip digits, as NumPy's Dragon4 does; half and bfloat16 (`dtype=bfloat16`, as
/// ml_dtypes names it) are formatted through float with their own shortest digits. Differences from NumPy: int64
/// is taken as the implied integer dtype (Linux and macOS; NumPy on Windows before 2.0 shows `dtype=int64`), and
/// ties when cutting a float64 to 8 digits round half to even on the exact value, where Dragon4 may differ.
template <operand E> std::string repr(const E& x, const print_options& options = {}) {
  using N = detail::captured_t<const E&>;
  using T = std::remove_const_t<typename N::value_type>;
  constexpr bool on_host = std::is_same_v<typename N::backend, host> || std::is_same_v<typename N::backend, any_backend>;
  static_assert(on_host,
                "texpr: printing reads host memory; this tensor or expression is on cuda: print tx::to_host(t) "
                "(an explicit copy; texpr never copies implicitly)");
  if constexpr (on_host) {
    if constexpr (is_tensor_v<E>) {
      return detail::print_repr(detail::print_source_of<T, N::rank>(x.data(), x.shape(), nullptr), options);
    } else if constexpr (is_view_v<E>) {
      const shape_t<N::rank> strides = x.strides();
      return detail::print_repr(detail::print_source_of<T, N::rank>(x.data(), x.shape(), &strides), options);
    } else {
      const tensor<T, N::rank, host> t = x;
      return detail::print_repr(detail::print_source_of<T, N::rank>(t.data(), t.shape(), nullptr), options);
    }
  } else {
    return {};
  }
}

/// Writes tx::repr(x): a host tensor, view or expression as NumPy prints it (`print(repr(a))`).
template <operand E> std::ostream& operator<<(std::ostream& os, const E& x) { return os << repr(x); }

} // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// .npy files (NumPy's format, versions 1.0-3.0): tx::load_npy into host tensors; tx::save_npy from host tensors,
// views and expressions. Optional: texpr.hpp does not include it.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
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

/// Thrown by load_npy and save_npy; the message starts with the file's path and says what was expected and found.
struct io_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// NumPy's dtype string (descr) for element type T as texpr writes it (little-endian); empty where NumPy has none.
template <class T> inline constexpr std::string_view npy_descr_v = "";
/// \cond TEXPR_SPECIALISATIONS
template <> inline constexpr std::string_view npy_descr_v<bool> = "|b1";
template <> inline constexpr std::string_view npy_descr_v<std::int32_t> = "<i4";
template <> inline constexpr std::string_view npy_descr_v<std::int64_t> = "<i8";
template <> inline constexpr std::string_view npy_descr_v<half> = "<f2";
template <> inline constexpr std::string_view npy_descr_v<float> = "<f4";
template <> inline constexpr std::string_view npy_descr_v<double> = "<f8";
template <> inline constexpr std::string_view npy_descr_v<std::complex<float>> = "<c8";
template <> inline constexpr std::string_view npy_descr_v<std::complex<double>> = "<c16";
/// \endcond

/// True for the element types a .npy file can hold: bool, int32, int64, float16, float32, float64, complex64,
/// complex128 (not bfloat16).
template <class T> inline constexpr bool has_npy_dtype_v = !npy_descr_v<T>.empty();

namespace detail {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "texpr: .npy I/O needs a little- or big-endian host");
static_assert(sizeof(bool) == 1 && sizeof(half) == 2, "texpr: .npy I/O needs 1-byte bool and 2-byte half");

inline constexpr std::size_t npy_align = 64;          // NumPy aligns the data to 64 bytes (ARRAY_ALIGN)
inline constexpr std::size_t npy_growth_digits = 21;  // NumPy's GROWTH_AXIS_MAX_DIGITS
inline constexpr unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/// What a .npy header dict says.
struct npy_header {
  std::string descr;           ///< 'descr': the dtype string, e.g. "<f4".
  bool fortran_order = false;  ///< 'fortran_order': data stored column-major.
  std::vector<index_t> shape;  ///< 'shape': the extents.
};

[[noreturn]] inline void npy_fail(const std::filesystem::path& file, const std::string& what) {
  throw io_error(file.string() + ": " + what);
}

/// A shape as Python prints a tuple: "()", "(3,)", "(3, 4)" (the form the header holds and messages show).
inline std::string npy_shape_string(std::span<const index_t> shape) {
  std::string out = "(";
  for (std::size_t i = 0; i != shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

/// Parses the header dict, a Python literal such as `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
/// Own parser (no eval): keys in any order, each exactly once; strings in either quote; shape a tuple of
/// non-negative integers (a trailing `L`, as Python 2 wrote, is accepted).
class npy_header_parser {
 public:
  npy_header_parser(std::string_view text, const std::filesystem::path& file) : text_(text), file_(file) {}

  npy_header parse() {
    npy_header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    expect('{', "'{' opening the header dict");
    for (;;) {
      skip_space();
      if (accept('}')) break;
      const std::string key = string_literal("a quoted key or '}'");
      skip_space();
      expect(':', "':' after '" + key + "'");
      skip_space();
      if (key == "descr") {
        once(seen_descr, key);
        if (peek() == '[') fail("has a structured dtype (a list of fields); load_npy reads plain dtypes only");
        h.descr = string_literal("a quoted dtype string after 'descr'");
      } else if (key == "fortran_order") {
        once(seen_order, key);
        h.fortran_order = bool_literal();
      } else if (key == "shape") {
        once(seen_shape, key);
        h.shape = shape_tuple();
      } else {
        fail("has the unknown key '" + key + "' (a .npy header holds 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (accept(',')) continue;
      if (accept('}')) break;
      expected("',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (pos_ != text_.size()) expected("nothing after the closing '}'");
    if (!seen_descr) fail("has no 'descr' key");
    if (!seen_order) fail("has no 'fortran_order' key");
    if (!seen_shape) fail("has no 'shape' key");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    npy_fail(file_, "corrupt .npy header: it " + what + ": " + quoted());
  }
  [[noreturn]] void expected(const std::string& what) const {
    npy_fail(file_, "corrupt .npy header: expected " + what + " at byte " + std::to_string(pos_) + " of " + quoted());
  }
  // The header as found (trailing padding dropped, long ones cut), so the user sees what was wrong.
  std::string quoted() const {
    std::string_view t = text_.substr(0, text_.find_last_not_of(" \t\r\n") + 1);
    std::string out(t.substr(0, 160));
    if (t.size() > 160) out += "...";
    return "\"" + out + "\"";
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool accept(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string& what) {
    if (!accept(c)) expected(what);
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void once(bool& seen, const std::string& key) {
    if (seen) fail("has the key '" + key + "' twice");
    seen = true;
  }
  std::string string_literal(const std::string& what) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') expected(what);
    const std::size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') expected("a string without escape sequences");
      ++pos_;
    }
    if (pos_ >= text_.size()) expected("the closing quote of the string opened at byte " + std::to_string(start - 1));
    return std::string(text_.substr(start, pos_++ - start));
  }
  bool bool_literal() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    expected("True or False after 'fortran_order'");
  }
  index_t integer() {
    if (peek() < '0' || peek() > '9') expected("a non-negative integer extent in 'shape'");
    index_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      const index_t digit = peek() - '0';
      if (v > (std::numeric_limits<index_t>::max() - digit) / 10) fail("has an extent in 'shape' too large for texpr");
      v = v * 10 + digit;
      ++pos_;
    }
    accept('L');
    return v;
  }
  std::vector<index_t> shape_tuple() {
    std::vector<index_t> shape;
    expect('(', "a tuple such as (2, 3) after 'shape'");
    bool trailing_comma = false;
    for (;;) {
      skip_space();
      if (accept(')')) break;
      if (!shape.empty() && !trailing_comma) expected("',' or ')' in 'shape'");
      shape.push_back(integer());
      skip_space();
      trailing_comma = accept(',');
    }
    // Python reads (3) as the integer 3, which NumPy rejects as a shape; a 1-d shape is written (3,).
    if (shape.size() == 1 && !trailing_comma) fail("has 'shape': (" + std::to_string(shape[0]) + "), not a tuple");
    return shape;
  }

  std::string_view text_;
  std::filesystem::path file_;
  std::size_t pos_ = 0;
};

/// The bytes that precede the data: magic, version, header length, the dict as np.save writes it (keys sorted,
/// spare room for the growth axis, spaces, '\n') so that the data starts at a multiple of 64 bytes. Version 1.0
/// (2-byte length) when the header fits, else 2.0 (4-byte length), as np.save chooses.
inline std::string npy_preamble(std::string_view descr, bool fortran_order, std::span<const index_t> shape) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': " + (fortran_order ? "True" : "False") +
                     ", 'shape': " + npy_shape_string(shape) + ", }";
  // np.save leaves room for the growth axis to reach 21 digits, so that appending tools can rewrite the header in
  // place; doing the same makes texpr's files byte-identical to NumPy's.
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[fortran_order ? shape.size() - 1 : 0]).size();
    if (digits < npy_growth_digits) dict.append(npy_growth_digits - digits, ' ');
  }
  for (const std::size_t length_bytes : {std::size_t{2}, std::size_t{4}}) {
    const std::size_t unpadded = sizeof npy_magic + 2 + length_bytes + dict.size() + 1;
    const std::size_t pad = npy_align - unpadded % npy_align;  // 1..64: NumPy never pads by 0
    const std::size_t header_length = dict.size() + pad + 1;
    if (length_bytes == 2 && header_length > 0xFFFF) continue;
    std::string out(reinterpret_cast<const char*>(npy_magic), sizeof npy_magic);
    out += static_cast<char>(length_bytes == 2 ? 1 : 2);
    out += '\0';
    for (std::size_t b = 0; b != length_bytes; ++b) out += static_cast<char>((header_length >> (8 * b)) & 0xFF);
    out += dict;
    out.append(pad, ' ');
    out += '\n';
    return out;
  }
  throw std::length_error("texpr: .npy header over 4 GiB");  // unreachable for any rank a tensor can have
}

/// A header read from a file, and where its data starts.
struct npy_file_header {
  npy_header header;              ///< The parsed dict.
  std::uint64_t data_offset = 0;  ///< Bytes before the data.
};

/// Reads and parses the preamble; throws io_error for a wrong magic, an unknown version, a truncated or corrupt header.
inline npy_file_header npy_read_preamble(std::istream& in, const std::filesystem::path& file, std::uint64_t file_size) {
  unsigned char pre[12] = {};
  const std::size_t have = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, 12));
  in.read(reinterpret_cast<char*>(pre), static_cast<std::streamsize>(have));
  if (static_cast<std::size_t>(in.gcount()) != have) npy_fail(file, "read error in the .npy preamble");
  const std::size_t magic_bytes = std::min(have, sizeof npy_magic);
  if (have == 0) npy_fail(file, "truncated: the file is empty (0 bytes)");
  if (std::memcmp(pre, npy_magic, magic_bytes) != 0) {
    if (have >= 4 && std::memcmp(pre, "PK\x03\x04", 4) == 0)
      npy_fail(file, "not a .npy file but a zip archive (an .npz?): read it with tx::load_npz (texpr/interop/npz.hpp)");
    npy_fail(file, "not a .npy file: it does not start with \\x93NUMPY");
  }
  if (have < 10)
    npy_fail(file, "truncated: " + std::to_string(have) + " bytes, shorter than the 10-byte .npy preamble");
  const unsigned major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    npy_fail(file, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                       " (texpr reads 1.0, 2.0 and 3.0)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (have < 8 + length_bytes)
    npy_fail(file, "truncated: " + std::to_string(have) + " bytes, shorter than the " +
                       std::to_string(8 + length_bytes) + "-byte preamble of format " + std::to_string(major) + ".0");
  std::uint64_t header_length = 0;
  for (std::size_t b = 0; b != length_bytes; ++b) header_length |= std::uint64_t{pre[8 + b]} << (8 * b);
  const std::uint64_t data_offset = 8 + length_bytes + header_length;
  if (data_offset > file_size)
    npy_fail(file, "truncated: the header needs " + std::to_string(data_offset) + " bytes, the file has " +
                       std::to_string(file_size));
  std::string text(static_cast<std::size_t>(header_length), '\0');
  in.clear();
  in.seekg(static_cast<std::streamoff>(8 + length_bytes));
  in.read(text.data(), static_cast<std::streamsize>(header_length));
  if (static_cast<std::uint64_t>(in.gcount()) != header_length) npy_fail(file, "read error in the .npy header");
  return {npy_header_parser(text, file).parse(), data_offset};
}

/// Calls f(offset) for each element of a strided layout in row-major order (offsets in elements).
template <std::size_t R, class F>
void npy_for_each_offset(const shape_t<R>& shape, const shape_t<R>& strides, F&& f) {
  const index_t n = shape_size(shape);
  std::array<index_t, R> idx{};
  index_t offset = 0;
  for (index_t i = 0; i != n; ++i) {
    f(offset);
    for (std::size_t d = R; d-- > 0;) {  // odometer: last axis fastest
      offset += strides[d];
      if (++idx[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// The unit whose bytes a byte-order swap reverses: a complex number's parts are swapped one by one.
template <class T> inline constexpr std::size_t npy_swap_unit_v = sizeof(real_of_t<T>);

inline void npy_reverse_bytes(unsigned char* p, std::size_t count, std::size_t item) {
  if (item > 1)
    for (std::size_t i = 0; i != count; ++i) std::reverse(p + i * item, p + (i + 1) * item);
}

/// Writes `path + ".tmp"`, then renames it over `path`: a failed or interrupted save never leaves a truncated
/// file under the real name. The temporary is removed when the save does not complete.
class npy_output {
 public:
  explicit npy_output(const std::filesystem::path& file) : file_(file), tmp_(file) {
    tmp_ += ".tmp";
    out_.open(tmp_, std::ios::binary | std::ios::trunc);
    if (!out_) npy_fail(file_, "cannot open " + tmp_.string() + " for writing");
  }
  npy_output(const npy_output&) = delete;
  npy_output& operator=(const npy_output&) = delete;
  ~npy_output() {
    if (committed_) return;
    out_.close();
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  void write(const void* p, std::size_t bytes) {
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(bytes));
    if (!out_) npy_fail(file_, "write to " + tmp_.string() + " failed (disk full?); the file was not written");
  }
  void commit() {
    out_.close();
    if (out_.fail()) npy_fail(file_, "closing " + tmp_.string() + " failed (disk full?); the file was not written");
    std::error_code ec;
    std::filesystem::rename(tmp_, file_, ec);
    if (ec) npy_fail(file_, "cannot rename " + tmp_.string() + " to it: " + ec.message());
    committed_ = true;
  }

 private:
  std::filesystem::path file_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// Streams elements in C order, little-endian, to sink(const void*, bytes): `strides` (in elements, any sign) or,
/// when null, row-major contiguous. Strides are only computed for non-empty data: an empty shape's row-major strides
/// may overflow (0 x 10^12 x 10^12).
template <class T, std::size_t R, class Sink>
void npy_emit(const T* data, const shape_t<R>& shape, const shape_t<R>* strides, Sink&& sink) {
  const index_t n = shape_size(shape);
  if (n == 0) return;
  const shape_t<R> row_major = contiguous_strides(shape);
  bool contiguous = true;
  if (strides)
    for (std::size_t d = 0; d != R; ++d) contiguous = contiguous && (shape[d] == 1 || (*strides)[d] == row_major[d]);
  if (contiguous && (sizeof(T) == 1 || std::endian::native == std::endian::little)) {
    sink(static_cast<const void*>(data), sizeof(T) * static_cast<std::size_t>(n));
    return;
  }
  std::vector<unsigned char> buffer;
  constexpr std::size_t chunk = std::size_t{1} << 16;
  buffer.reserve(chunk);
  const auto flush = [&] {
    constexpr std::size_t unit = npy_swap_unit_v<T>;
    npy_reverse_bytes(buffer.data(), buffer.size() / unit, std::endian::native == std::endian::big ? unit : 1);
    sink(static_cast<const void*>(buffer.data()), buffer.size());
    buffer.clear();
  };
  npy_for_each_offset(shape, strides ? *strides : row_major, [&](index_t offset) {
    unsigned char bytes[sizeof(T)];
    if constexpr (std::is_same_v<T, bool>)
      bytes[0] = data[offset] ? 1 : 0;
    else
      std::memcpy(bytes, data + offset, sizeof(T));
    buffer.insert(buffer.end(), bytes, bytes + sizeof(T));
    if (buffer.size() + sizeof(T) > chunk) flush();
  });
  flush();
}

/// Writes a .npy file: the preamble, then npy_emit's bytes, through npy_output (a temporary renamed over `file`).
template <class T, std::size_t R>
void npy_write(const std::filesystem::path& file, const T* data, const shape_t<R>& shape, const shape_t<R>* strides) {
  const std::string preamble = npy_preamble(npy_descr_v<T>, false, std::span<const index_t>(shape.data(), R));
  npy_output out(file);
  out.write(preamble.data(), preamble.size());
  npy_emit(data, shape, strides, [&](const void* p, std::size_t bytes) { out.write(p, bytes); });
  out.commit();
}

template <class T>
constexpr void npy_check_dtype() {
  static_assert(!std::is_same_v<T, bfloat16>,
                "texpr: bfloat16 has no NumPy dtype, so it cannot be stored in a .npy file; save tx::cast<float>(x) "
                "instead (float32 holds every bfloat16 value exactly)");
  static_assert(std::is_same_v<T, bfloat16> || has_npy_dtype_v<T>,
                "texpr: .npy files hold bool, int32, int64, float16 (tx::half), float32, float64, complex64 and "
                "complex128 elements");
}

/// Reads one .npy image of `file_size` bytes from `in` (positions relative to its start) into a new host tensor;
/// `path` names it in messages (a file, or an archive's entry). load_npy's checks, for load_npy and npz_archive.
template <class T, std::size_t Rank>
tensor<T, Rank, host> npy_load_stream(std::istream& in, const std::filesystem::path& path, std::uint64_t file_size) {
  const detail::npy_file_header found = detail::npy_read_preamble(in, path, file_size);
  const detail::npy_header& h = found.header;

  // The dtype: T's descr with either byte order ('|' too for one-byte types, as NumPy writes them).
  constexpr std::string_view want = npy_descr_v<T>;
  const char order = h.descr.empty() ? '\0' : h.descr[0];
  const bool order_ok = order == '<' || order == '>' || (sizeof(T) == 1 && order == '|');
  if (!order_ok || std::string_view(h.descr).substr(1) != want.substr(1))
    detail::npy_fail(
        path, "expected dtype " + std::string(dtype_name_v<T>) + " (" + std::string(want) + "), file has " + h.descr);
  const bool swap = sizeof(T) > 1 && ((order == '>') != (std::endian::native == std::endian::big));

  if (h.shape.size() != Rank)
    detail::npy_fail(path,
                     "expected rank " + std::to_string(Rank) + ", file has shape " + detail::npy_shape_string(h.shape));
  shape_t<Rank> shape{};
  for (std::size_t d = 0; d != Rank; ++d) shape[d] = h.shape[d];
  // As NumPy: the nonzero extents' product bounds the shape, so (0, 2^62, 2^62) is as unloadable as (2^62, 2^62).
  const std::string problem = detail::shape_problem(shape, sizeof(T));
  if (!problem.empty())
    detail::npy_fail(path, "shape " + detail::npy_shape_string(h.shape) + " is too large to load (" + problem + ")");
  const auto count = static_cast<std::uint64_t>(shape_size(shape));
  const std::uint64_t bytes = count * sizeof(T);
  const std::uint64_t available = file_size - found.data_offset;
  const std::string what = "shape " + detail::npy_shape_string(h.shape) + " of " + h.descr + " needs " +
                           std::to_string(bytes) + " data bytes after the " + std::to_string(found.data_offset) +
                           "-byte header";
  if (available < bytes) detail::npy_fail(path, "truncated: " + what + ", the file has " + std::to_string(available));
  if (available > bytes)
    detail::npy_fail(path, what + ", the file has " + std::to_string(available) + " (a .npy file holds one array)");

  tensor<T, Rank, host> t;
  t.allocate_uninitialized(shape, nullptr);
  if (bytes == 0) return t;
  auto* dest = reinterpret_cast<unsigned char*>(t.data());
  // Fortran data of rank >= 2 goes through a buffer and is reordered; 0-d and 1-d data are the same in both orders.
  std::vector<unsigned char> fortran;
  if (h.fortran_order && Rank >= 2) fortran.resize(static_cast<std::size_t>(bytes));
  unsigned char* target = fortran.empty() ? dest : fortran.data();
  in.seekg(static_cast<std::streamoff>(found.data_offset));
  in.read(reinterpret_cast<char*>(target), static_cast<std::streamsize>(bytes));
  if (static_cast<std::uint64_t>(in.gcount()) != bytes) detail::npy_fail(path, "read error in the data (" + what + ")");
  if (!fortran.empty()) {
    shape_t<Rank> column_major{};  // element strides of the file's layout: first axis fastest
    index_t stride = 1;
    for (std::size_t d = 0; d != Rank; ++d) {
      column_major[d] = stride;
      stride *= shape[d];
    }
    std::size_t i = 0;
    detail::npy_for_each_offset(shape, column_major, [&](index_t offset) {
      std::memcpy(dest + sizeof(T) * i++, fortran.data() + sizeof(T) * static_cast<std::size_t>(offset), sizeof(T));
    });
  }
  if (swap) detail::npy_reverse_bytes(dest, static_cast<std::size_t>(count) * (sizeof(T) / detail::npy_swap_unit_v<T>), detail::npy_swap_unit_v<T>);
  if constexpr (std::is_same_v<T, bool>)  // any nonzero byte is True, as NumPy reads it; a bool must hold 0 or 1
    for (std::size_t i = 0; i != count; ++i) dest[i] = dest[i] != 0;
  return t;
}

} // namespace detail

/// Reads a .npy file into a new host tensor. The file's dtype must be T's (no conversions: a `<f8` file does not
/// load as float) and its rank Rank; C and Fortran order are both read (Fortran data is transposed into texpr's row
/// order). Big-endian files (`>f4`, ...) are byte-swapped on load. Formats 1.0, 2.0 and 3.0. Throws io_error naming
/// the file and what was expected and found: a missing file, a wrong dtype or rank, a truncated file, a corrupt header.
template <class T, std::size_t Rank>
tensor<T, Rank, host> load_npy(const std::filesystem::path& path) {
  detail::npy_check_dtype<T>();
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) detail::npy_fail(path, "cannot open for reading: no such file");
  if (fs::is_directory(status)) detail::npy_fail(path, "cannot open for reading: it is a directory");
  const std::uint64_t file_size = fs::file_size(path, ec);
  if (ec) detail::npy_fail(path, "cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) detail::npy_fail(path, "cannot open for reading (permissions?)");
  return detail::npy_load_stream<T, Rank>(in, path, file_size);
}


namespace detail {

/// The memory an archive entry reads for host operand x (npz_entry, safetensors_entry): a host tensor lvalue in
/// place, a view with its strides, anything else evaluated (or moved) into a tensor that `keep` then owns. Calls
/// set(data, shape, strides), strides empty for row-major data.
template <class T, std::size_t R, class E, class Set>
void host_operand_memory(E&& x, std::shared_ptr<const void>& keep, Set&& set) {
  if constexpr (is_tensor_v<E> && std::is_lvalue_reference_v<E>) {
    set(static_cast<const T*>(x.data()), x.shape(), std::optional<shape_t<R>>{});
  } else if constexpr (is_view_v<E>) {
    set(static_cast<const T*>(x.data()), x.shape(), std::optional<shape_t<R>>(x.strides()));
  } else {
    auto owned = std::make_shared<tensor<T, R, host>>(std::forward<E>(x));
    keep = owned;
    set(static_cast<const T*>(owned->data()), owned->shape(), std::optional<shape_t<R>>{});
  }
}

} // namespace detail

/// Writes a host tensor, view (any strides; written in C order) or host expression (evaluated first) to a .npy file
/// NumPy reads: little-endian, format 1.0 (2.0 if the header needs it), data 64-byte aligned, byte-identical to
/// np.save. Writes `path + ".tmp"`, then renames it. bfloat16 is a compile error (NumPy has no such dtype).
/// Throws io_error naming the file when it cannot be written.
template <operand E>
void save_npy(const std::filesystem::path& path, E&& x) {
  using N = detail::captured_t<E>;
  using T = typename N::value_type;
  detail::npy_check_dtype<T>();
  static_assert(std::is_same_v<typename N::backend, host>,
                "texpr: save_npy writes host data; copy a cuda tensor with tx::to_host first (an expression needs "
                "at least one host tensor operand)");
  if constexpr (std::is_same_v<typename N::backend, host> && has_npy_dtype_v<T>) {
    if constexpr (is_tensor_v<E>) {
      detail::npy_write<T, N::rank>(path, x.data(), x.shape(), nullptr);
    } else if constexpr (is_view_v<E>) {
      detail::npy_write<T, N::rank>(path, x.data(), x.shape(), &x.strides());
    } else {
      const tensor<T, N::rank, host> t = std::forward<E>(x);
      detail::npy_write<T, N::rank>(path, t.data(), t.shape(), nullptr);
    }
  }
}

} // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// safetensors files (an 8-byte little-endian header length, a JSON header giving each tensor's dtype, shape and byte
// range, then the raw little-endian data): tx::save_safetensors writes named host tensors, views and expressions;
// tx::load_safetensors maps a file into memory and reads its entries as host tensors (get, a copy) or as views of
// the mapping (mapped, no copy). Optional: texpr.hpp does not include it. It needs nlohmann/json.hpp (Debian:
// nlohmann-json3-dev; CMake: link texpr::safetensors, defined when CMake finds nlohmann_json).
#pragma once

#if !__has_include(<nlohmann/json.hpp>)
#error \
    "texpr/interop/safetensors.hpp needs nlohmann/json.hpp: install Debian's nlohmann-json3-dev and link texpr::safetensors"
#endif

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#if __has_include(<sys/mman.h>) && __has_include(<fcntl.h>) && __has_include(<unistd.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define TEXPR_SAFETENSORS_MMAP 1
#else
#define TEXPR_SAFETENSORS_MMAP 0
#endif

#include "texpr/core/backend.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/float8.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/interop/npy.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

namespace texpr {

/// The safetensors dtype code of element type T ("F32", "BF16", "F8_E4M3", ...); empty where texpr has none.
template <class T>
inline constexpr std::string_view safetensors_dtype_v = "";
/// \cond TEXPR_SPECIALISATIONS
template <>
inline constexpr std::string_view safetensors_dtype_v<double> = "F64";
template <>
inline constexpr std::string_view safetensors_dtype_v<float> = "F32";
template <>
inline constexpr std::string_view safetensors_dtype_v<half> = "F16";
template <>
inline constexpr std::string_view safetensors_dtype_v<bfloat16> = "BF16";
template <>
inline constexpr std::string_view safetensors_dtype_v<float8_e4m3> = "F8_E4M3";
template <>
inline constexpr std::string_view safetensors_dtype_v<float8_e5m2> = "F8_E5M2";
template <>
inline constexpr std::string_view safetensors_dtype_v<std::int64_t> = "I64";
template <>
inline constexpr std::string_view safetensors_dtype_v<std::int32_t> = "I32";
template <>
inline constexpr std::string_view safetensors_dtype_v<std::int8_t> = "I8";
template <>
inline constexpr std::string_view safetensors_dtype_v<bool> = "BOOL";
/// \endcond

/// True for the element types texpr reads and writes in safetensors files (every texpr dtype).
template <class T>
inline constexpr bool has_safetensors_dtype_v = !safetensors_dtype_v<T>.empty();

namespace detail {

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2 && sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1 &&
                  sizeof(bool) == 1,
              "texpr: safetensors I/O stores half and bfloat16 in 2 bytes, float8 and bool in 1");

/// The format's limit on the JSON header (the reference implementation's MAX_HEADER_SIZE): a larger one is
/// rejected before anything is read, so a hostile length cannot make texpr allocate it.
inline constexpr std::uint64_t safetensors_max_header = 100'000'000;
/// Deeper nesting than this in the header (only an ignored field can nest at all) is rejected.
inline constexpr std::size_t safetensors_max_depth = 64;

/// Bits per element of every dtype code the format defines (sub-byte codes too, so that a file holding them is
/// still checked and its other entries read); 0 for a code it does not define.
inline std::size_t safetensors_dtype_bits(std::string_view code) {
  static constexpr std::pair<std::string_view, std::size_t> table[] = {
      {"BOOL", 8},        {"U8", 8},          {"I8", 8},      {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8},
      {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
      {"I32", 32},        {"U32", 32},        {"F32", 32},    {"F64", 64},    {"I64", 64},    {"U64", 64},
      {"C64", 64},        {"F4", 4},          {"F6_E2M3", 6}, {"F6_E3M2", 6}};
  for (const auto& [name, bits] : table)
    if (name == code) return bits;
  return 0;
}

/// texpr's name of a safetensors dtype code, for messages ("F16" -> "float16"); the code itself where texpr has none.
inline std::string safetensors_texpr_name(std::string_view code) {
  std::string out(code);
  const auto name_of = [&]<class T>(T*) {
    if (safetensors_dtype_v<T> == code) out = std::string(dtype_name_v<T>);
  };
  name_of(static_cast<double*>(nullptr));
  name_of(static_cast<float*>(nullptr));
  name_of(static_cast<half*>(nullptr));
  name_of(static_cast<bfloat16*>(nullptr));
  name_of(static_cast<float8_e4m3*>(nullptr));
  name_of(static_cast<float8_e5m2*>(nullptr));
  name_of(static_cast<std::int64_t*>(nullptr));
  name_of(static_cast<std::int32_t*>(nullptr));
  name_of(static_cast<std::int8_t*>(nullptr));
  name_of(static_cast<bool*>(nullptr));
  return out;
}

/// A shape as the header writes it: "[3, 4]", "[]".
inline std::string safetensors_shape_string(std::span<const index_t> shape) {
  std::string out = "[";
  for (std::size_t d = 0; d != shape.size(); ++d) out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + "]";
}

/// A name as messages quote it: JSON-escaped (so a control byte or a quote cannot garble the message).
inline std::string safetensors_quote(const std::string& name) {
  try {
    return nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const nlohmann::json::exception&) {
    return "\"" + name + "\"";
  }
}

/// A read-only image of a whole file: memory-mapped where the platform has mmap (nothing is read until touched, so
/// a multi-gigabyte file costs no memory up front), else read into memory.
class safetensors_mapping {
 public:
  explicit safetensors_mapping(const std::filesystem::path& file) {
#if TEXPR_SAFETENSORS_MMAP
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) npy_fail(file, "cannot open for reading: " + std::string(std::strerror(errno)));
    struct ::stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      npy_fail(file, "is not a regular file");
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ != 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        npy_fail(file, "cannot map its " + std::to_string(size_) + " bytes: " + std::strerror(err));
      }
      data_ = static_cast<const unsigned char*>(p);
    }
    ::close(fd);  // the mapping keeps the file's pages
#else
    std::ifstream in(file, std::ios::binary);
    if (!in) npy_fail(file, "cannot open for reading");
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(file, ec);
    if (ec) npy_fail(file, "cannot read its size: " + ec.message());
    copy_.resize(static_cast<std::size_t>(bytes));
    in.read(reinterpret_cast<char*>(copy_.data()), static_cast<std::streamsize>(copy_.size()));
    if (static_cast<std::uint64_t>(in.gcount()) != bytes) npy_fail(file, "read error");
    data_ = copy_.data();
    size_ = copy_.size();
#endif
  }
  safetensors_mapping(const safetensors_mapping&) = delete;
  safetensors_mapping& operator=(const safetensors_mapping&) = delete;
  ~safetensors_mapping() {
#if TEXPR_SAFETENSORS_MMAP
    if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
#endif
  }
  /// The file's first byte (nullptr for an empty file).
  const unsigned char* data() const noexcept { return data_; }
  /// The file's size in bytes.
  std::size_t size() const noexcept { return size_; }

 private:
  const unsigned char* data_ = nullptr;
  std::size_t size_ = 0;
#if !TEXPR_SAFETENSORS_MMAP
  std::vector<unsigned char> copy_;
#endif
};

}  // namespace detail

/// One tensor of a safetensors file, as its header describes it.
struct safetensors_info {
  std::string name;               ///< The key in the header.
  std::string dtype;              ///< The dtype code ("F32", "BF16", ...), possibly one texpr has no type for ("U16").
  std::vector<index_t> shape;     ///< Extents, outermost first (empty: a scalar).
  std::uint64_t begin = 0;        ///< First byte, counted from the start of the data section (data_offsets[0]).
  std::uint64_t end = 0;          ///< One past the last byte (data_offsets[1]).
  std::uint64_t file_offset = 0;  ///< Where the first byte is in the file (8 + header length + begin).
};

namespace detail {

/// What a checked header holds.
struct safetensors_header {
  std::vector<safetensors_info> entries;        // in data order
  std::map<std::string, std::string> metadata;  // __metadata__
  std::uint64_t data_start = 0;                 // 8 + header length
};

/// SAX handler of the JSON header: builds the entries and the metadata directly (no document tree) and stops at
/// the first thing the format does not allow, keeping a message that names the entry.
class safetensors_sax : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::string error;  ///< Set when the handler stopped the parse.
  std::vector<safetensors_info> entries;
  std::map<std::string, std::string> metadata;

  bool null() override { return scalar("null"); }
  bool boolean(bool) override { return scalar("a boolean"); }
  bool number_integer(number_integer_t v) override {
    if (v >= 0) return number_unsigned(static_cast<number_unsigned_t>(v));
    return scalar("the negative number " + std::to_string(v));
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (skip_ || depth_ != 3) return scalar("the number " + std::to_string(v));
    if (field_ == field::shape) {
      if (v > static_cast<number_unsigned_t>(std::numeric_limits<index_t>::max()))
        return fail(where() + ": extent " + std::to_string(v) + " in \"shape\" is past int64");
      current_.shape.push_back(static_cast<index_t>(v));
    } else {
      offsets_.push_back(v);
    }
    return true;
  }
  bool number_float(number_float_t, const string_t& text) override { return scalar("the number " + text); }
  bool string(string_t& s) override {
    if (!skip_ && depth_ == 2 && in_metadata_) {
      metadata[key_] = s;
      return true;
    }
    if (!skip_ && depth_ == 2 && field_ == field::dtype) {
      current_.dtype = s;
      have_dtype_ = true;
      field_ = field::none;
      return true;
    }
    return scalar("a string");
  }
  bool binary(binary_t&) override { return scalar("binary data"); }
  bool start_object(std::size_t) override {
    const std::size_t at = depth_++;
    if (depth_ > safetensors_max_depth) return too_deep();
    if (skip_) return true;
    if (at == 0 || (at == 1 && in_metadata_)) {
      keys_.emplace_back();
      return true;
    }
    if (at == 1) {
      keys_.emplace_back();
      current_ = {};
      current_.name = name_;
      have_dtype_ = have_shape_ = have_offsets_ = false;
      offsets_.clear();
      return true;
    }
    return value("an object", at);
  }
  bool key(string_t& k) override {
    if (skip_) return true;
    if (!keys_.back().insert(k).second) {
      if (depth_ == 1) return fail("the entry " + safetensors_quote(k) + " appears twice in the header");
      if (in_metadata_) return fail("\"__metadata__\": the key " + safetensors_quote(k) + " appears twice");
      return fail(where() + ": the key " + safetensors_quote(k) + " appears twice");
    }
    if (depth_ == 1) {
      name_ = k;
      in_metadata_ = k == "__metadata__";
      return true;
    }
    if (in_metadata_) {
      key_ = k;
      return true;
    }
    field_ = k == "dtype"          ? field::dtype
             : k == "shape"        ? field::shape
             : k == "data_offsets" ? field::offsets
                                   : field::ignored;
    if (field_ == field::ignored) {  // an unknown field is skipped, as the reference implementation does
      skip_ = true;
      skip_depth_ = depth_;
    }
    return true;
  }
  bool end_object() override {
    if (skip_) return end_skipped();
    keys_.pop_back();
    if (depth_ == 2 && !in_metadata_) {
      if (!have_dtype_) return fail(where() + ": no \"dtype\"");
      if (!have_shape_) return fail(where() + ": no \"shape\"");
      if (!have_offsets_) return fail(where() + ": no \"data_offsets\"");
      entries.push_back(std::move(current_));
    }
    if (depth_ == 2) in_metadata_ = false;
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    const std::size_t at = depth_++;
    if (depth_ > safetensors_max_depth) return too_deep();
    if (skip_) return true;
    if (at == 2 && !in_metadata_ && (field_ == field::shape || field_ == field::offsets)) return true;
    return value("an array", at);
  }
  bool end_array() override {
    if (skip_) return end_skipped();
    --depth_;
    if (field_ == field::shape) {
      have_shape_ = true;
    } else if (field_ == field::offsets) {
      if (offsets_.size() != 2)
        return fail(where() + ": \"data_offsets\" holds " + std::to_string(offsets_.size()) +
                    " numbers, not 2 ([begin, end])");
      current_.begin = offsets_[0];
      current_.end = offsets_[1];
      have_offsets_ = true;
    }
    field_ = field::none;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::json::exception& e) override {
    std::string what = e.what();
    if (const auto at = what.find("] "); what.starts_with("[json.exception") && at != std::string::npos)
      what = what.substr(at + 2);
    if (error.empty()) error = "the header is not valid JSON (at byte " + std::to_string(position) + "): " + what;
    return false;
  }

 private:
  enum class field { none, dtype, shape, offsets, ignored };

  std::string where() const { return "entry " + safetensors_quote(current_.name); }
  bool fail(std::string what) {
    if (error.empty()) error = std::move(what);
    return false;
  }
  bool too_deep() { return fail("the header nests deeper than " + std::to_string(safetensors_max_depth) + " levels"); }
  bool end_skipped() {
    if (--depth_ == skip_depth_) {
      skip_ = false;
      field_ = field::none;
    }
    return true;
  }
  bool scalar(const std::string& found) {
    if (skip_) {
      if (depth_ == skip_depth_) {  // the ignored field was this scalar
        skip_ = false;
        field_ = field::none;
      }
      return true;
    }
    return value(found, depth_);
  }
  // A value the format does not allow where it is (`at`: the number of containers around it): say what was found
  // and where.
  bool value(const std::string& found, std::size_t at) {
    if (at == 0) return fail("the header is " + found + ", not a JSON object");
    if (at == 1)
      return fail(in_metadata_ ? "\"__metadata__\" is " + found + ", not an object of strings"
                               : "entry " + safetensors_quote(name_) + " is " + found +
                                     ", not an object {\"dtype\", \"shape\", \"data_offsets\"}");
    if (in_metadata_)
      return fail("\"__metadata__\" value " + safetensors_quote(key_) + " is " + found +
                  ", not a string (the format's metadata maps strings to strings)");
    const std::string name = field_ == field::dtype   ? "\"dtype\""
                             : field_ == field::shape ? "\"shape\""
                                                      : "\"data_offsets\"";
    if (at == 2)
      return fail(where() + ": " + name + " is " + found +
                  (field_ == field::dtype   ? ", not a string"
                   : field_ == field::shape ? ", not an array of extents"
                                            : ", not [begin, end]"));
    return fail(where() + ": " + name + " holds " + found + ", not only non-negative integers");
  }

  std::size_t depth_ = 0, skip_depth_ = 0;
  bool skip_ = false, in_metadata_ = false;
  bool have_dtype_ = false, have_shape_ = false, have_offsets_ = false;
  field field_ = field::none;
  std::string name_, key_;
  safetensors_info current_;
  std::vector<std::uint64_t> offsets_;
  std::vector<std::set<std::string>> keys_;
};

/// Checks a whole safetensors image (`bytes`, `size` bytes; `file` names it in messages): the header length, the
/// header's JSON and fields, each entry's dtype, shape and byte count, and that the entries tile the data section
/// exactly (no overlap, no gap, nothing after the last), as the format's reference implementation requires. Throws
/// io_error naming the file and, where one is at fault, the entry.
inline safetensors_header safetensors_parse(const std::filesystem::path& file, const unsigned char* bytes,
                                            std::size_t size) {
  if (size < 8)
    npy_fail(file, "is " + std::to_string(size) + " bytes long, shorter than the 8-byte header length a " +
                       "safetensors file starts with");
  std::uint64_t n = 0;
  for (int b = 0; b != 8; ++b) n |= std::uint64_t{bytes[b]} << (8 * b);
  if (n > safetensors_max_header)
    npy_fail(file, "its header length is " + std::to_string(n) + " bytes, over the format's limit of " +
                       std::to_string(safetensors_max_header) + " (a corrupt or hostile file)");
  if (n > size - 8)
    npy_fail(file, "its header length is " + std::to_string(n) + " bytes, but only " + std::to_string(size - 8) +
                       " bytes follow it (a truncated file?)");
  if (n < 2 || bytes[8] != '{') npy_fail(file, "its header does not start with '{' (not a safetensors file?)");
  safetensors_sax sax;
  const char* json = reinterpret_cast<const char*>(bytes + 8);
  if (!nlohmann::json::sax_parse(json, json + n, &sax) || !sax.error.empty())
    npy_fail(file, sax.error.empty() ? std::string("the header could not be parsed") : sax.error);

  safetensors_header out;
  out.data_start = 8 + n;
  out.metadata = std::move(sax.metadata);
  const std::uint64_t data_size = size - out.data_start;
  for (safetensors_info& e : sax.entries) {
    const std::string where = "entry " + safetensors_quote(e.name);
    const std::size_t bits = safetensors_dtype_bits(e.dtype);
    if (bits == 0)
      npy_fail(file, where + ": unknown dtype " + safetensors_quote(e.dtype) +
                         " (the format's codes are BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F8_E4M3, F8_E5M2, "
                         "F8_E8M0, F8_E4M3FNUZ, F8_E5M2FNUZ, F16, BF16, F32, F64, C64, F4, F6_E2M3, F6_E3M2)");
    std::uint64_t count = 1;
    bool overflow = false;
    for (const index_t extent : e.shape)
      overflow = overflow || __builtin_mul_overflow(count, static_cast<std::uint64_t>(extent), &count);
    std::uint64_t total_bits = 0;
    overflow = overflow || __builtin_mul_overflow(count, std::uint64_t{bits}, &total_bits) ||
               count > static_cast<std::uint64_t>(std::numeric_limits<index_t>::max());
    if (overflow)
      npy_fail(file, where + ": shape " + safetensors_shape_string(e.shape) + " holds more elements than fit in " +
                         "64 bits");
    if (total_bits % 8 != 0)
      npy_fail(file, where + ": shape " + safetensors_shape_string(e.shape) + " of " + e.dtype + " is " +
                         std::to_string(total_bits) + " bits, not a whole number of bytes");
    if (e.begin > e.end)
      npy_fail(file,
               where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "] run backwards");
    if (e.end > data_size)
      npy_fail(file, where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                         "] run past the end of the data section (" + std::to_string(data_size) + " bytes)");
    if (e.end - e.begin != total_bits / 8)
      npy_fail(file, where + ": shape " + safetensors_shape_string(e.shape) + " of " + e.dtype + " is " +
                         std::to_string(total_bits / 8) + " bytes, but data_offsets [" + std::to_string(e.begin) +
                         ", " + std::to_string(e.end) + "] span " + std::to_string(e.end - e.begin));
    e.file_offset = out.data_start + e.begin;
  }
  std::stable_sort(sax.entries.begin(), sax.entries.end(), [](const safetensors_info& a, const safetensors_info& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t covered = 0;
  const safetensors_info* previous = nullptr;
  for (const safetensors_info& e : sax.entries) {
    if (e.begin < covered)
      npy_fail(file, "entry " + safetensors_quote(e.name) + " (bytes [" + std::to_string(e.begin) + ", " +
                         std::to_string(e.end) + ")) overlaps entry " + safetensors_quote(previous->name) +
                         " (bytes [" + std::to_string(previous->begin) + ", " + std::to_string(previous->end) + "))");
    if (e.begin > covered)
      npy_fail(file, "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) + ") of the data " +
                         "section belong to no entry (before entry " + safetensors_quote(e.name) + ")");
    covered = e.end;
    previous = &e;
  }
  if (covered != data_size)
    npy_fail(file, "the data section is " + std::to_string(data_size) + " bytes but its entries cover " +
                       std::to_string(covered) + " (trailing bytes after the last entry)");
  out.entries = std::move(sax.entries);
  return out;
}

/// One entry of a save: its header fields and a function streaming its bytes to a sink.
struct safetensors_payload {
  std::string_view dtype;
  std::size_t item = 0;  // bytes per element
  std::vector<index_t> shape;
  std::uint64_t bytes = 0;
  std::function<void(const std::function<void(const void*, std::size_t)>&)> emit;
};

}  // namespace detail

/// One named tensor of a tx::save_safetensors call: a host tensor (read in place; it must outlive the call), a host
/// view (any strides) or a host expression (evaluated when the entry is made), of any texpr dtype.
class safetensors_entry {
 public:
  /// Names x; a cuda operand is a compile error (copy it with tx::to_host first).
  template <operand E>
  safetensors_entry(std::string name, E&& x) : name_(std::move(name)) {  // NOLINT: implicit, for {{"w", w}, ...}
    using N = detail::captured_t<E>;
    using T = std::remove_const_t<typename N::value_type>;
    static_assert(has_safetensors_dtype_v<T>, "texpr: this element type has no safetensors dtype");
    static_assert(std::is_same_v<typename N::backend, host>,
                  "texpr: save_safetensors writes host data; copy a cuda tensor with tx::to_host first");
    if constexpr (std::is_same_v<typename N::backend, host> && has_safetensors_dtype_v<T>) {
      constexpr std::size_t R = N::rank;
      detail::host_operand_memory<T, R>(
          std::forward<E>(x), keep_, [this](const T* data, const shape_t<R>& shape, std::optional<shape_t<R>> strides) {
            set<T, R>(data, shape, strides);
          });
    }
  }
  /// The key the tensor is stored under.
  const std::string& name() const noexcept { return name_; }
  /// Its dtype, shape and bytes (internal: save_safetensors's).
  const detail::safetensors_payload& payload() const noexcept { return payload_; }

 private:
  template <class T, std::size_t R>
  void set(const T* data, const shape_t<R>& shape, std::optional<shape_t<R>> strides) {
    payload_.dtype = safetensors_dtype_v<T>;
    payload_.item = sizeof(T);
    payload_.shape.assign(shape.begin(), shape.end());
    payload_.bytes = static_cast<std::uint64_t>(shape_size(shape)) * sizeof(T);
    payload_.emit = [data, shape, strides](const std::function<void(const void*, std::size_t)>& sink) {
      detail::npy_emit(data, shape, strides ? &*strides : nullptr, sink);
    };
  }

  std::string name_;
  detail::safetensors_payload payload_;
  std::shared_ptr<const void> keep_;
};

namespace detail {

inline void safetensors_write(const std::filesystem::path& file, const safetensors_entry* entries, std::size_t count,
                              const std::map<std::string, std::string>& metadata) {
  const auto quote = [&](const std::string& s, const std::string& what) {
    try {
      return nlohmann::json(s).dump();
    } catch (const nlohmann::json::exception&) {
      npy_fail(file, what + " " + safetensors_quote(s) + " is not valid UTF-8 (the header is JSON)");
    }
  };
  std::vector<const safetensors_entry*> order;
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i != count; ++i) {
    const std::string& name = entries[i].name();
    if (name.empty()) npy_fail(file, "an entry has an empty name");
    if (name == "__metadata__") npy_fail(file, "the name \"__metadata__\" is the format's metadata key");
    if (!seen.insert(name).second) npy_fail(file, "the name " + safetensors_quote(name) + " is given twice");
    order.push_back(&entries[i]);
  }
  // Widest elements first, then by name (the order the reference writer uses): with the header padded to 8 bytes,
  // every entry then starts at a multiple of its element size, so tx::load_safetensors can map it as a view.
  std::stable_sort(order.begin(), order.end(), [](const safetensors_entry* a, const safetensors_entry* b) {
    return a->payload().item != b->payload().item ? a->payload().item > b->payload().item : a->name() < b->name();
  });
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [k, v] : metadata) {
      header += (first ? "" : ",") + quote(k, "the metadata key") + ":" + quote(v, "the metadata value of " + k);
      first = false;
    }
    header += "}";
  }
  std::uint64_t offset = 0;
  for (const safetensors_entry* e : order) {
    const safetensors_payload& p = e->payload();
    header += (header.size() > 1 ? "," : "") + quote(e->name(), "the name") + ":{\"dtype\":\"" + std::string(p.dtype) +
              "\",\"shape\":[";
    for (std::size_t d = 0; d != p.shape.size(); ++d) header += (d ? "," : "") + std::to_string(p.shape[d]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + p.bytes) + "]}";
    offset += p.bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  if (header.size() > safetensors_max_header)
    npy_fail(file, "its header would be " + std::to_string(header.size()) + " bytes, over the format's limit of " +
                       std::to_string(safetensors_max_header));
  npy_output out(file);
  unsigned char length[8];
  for (int b = 0; b != 8; ++b) length[b] = static_cast<unsigned char>((std::uint64_t{header.size()} >> (8 * b)) & 0xFF);
  out.write(length, 8);
  out.write(header.data(), header.size());
  for (const safetensors_entry* e : order) {
    std::uint64_t written = 0;
    e->payload().emit([&](const void* p, std::size_t bytes) {
      out.write(p, bytes);
      written += bytes;
    });
    if (written != e->payload().bytes)
      npy_fail(file, "entry " + safetensors_quote(e->name()) + " emitted " + std::to_string(written) + " bytes, not " +
                         std::to_string(e->payload().bytes));
  }
  out.commit();
}

}  // namespace detail

/// Writes named host tensors, views and expressions of any texpr dtype and rank to one safetensors file, with
/// optional `__metadata__` (strings to strings): `tx::save_safetensors("model.safetensors", {{"w1", w1}, {"b1",
/// b1}}, {{"format", "pt"}})`. Entries are laid out widest dtype first, then by name, each at a multiple of its
/// element size. Written to `path + ".tmp"`, then renamed. Throws io_error naming the file for an empty, repeated,
/// reserved (`__metadata__`) or non-UTF-8 name, or when the file cannot be written.
inline void save_safetensors(const std::filesystem::path& path, std::initializer_list<safetensors_entry> entries,
                             const std::map<std::string, std::string>& metadata = {}) {
  detail::safetensors_write(path, entries.begin(), entries.size(), metadata);
}
/// save_safetensors over a list built at run time.
inline void save_safetensors(const std::filesystem::path& path, const std::vector<safetensors_entry>& entries,
                             const std::map<std::string, std::string>& metadata = {}) {
  detail::safetensors_write(path, entries.data(), entries.size(), metadata);
}

/// A safetensors file opened by tx::load_safetensors: the file mapped into memory (read-only) and its header
/// checked. get() copies an entry into a new host tensor; mapped() returns a view of the mapping itself, which stays
/// valid as long as this object or a copy of it lives. Copies share the mapping.
class safetensors_file {
 public:
  /// The file's path.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// The names of the tensors, in data order (`__metadata__` is not one).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const safetensors_info& e : header_->entries) out.push_back(e.name);
    return out;
  }
  /// The entries as the header describes them, in data order.
  const std::vector<safetensors_info>& entries() const noexcept { return header_->entries; }
  /// The `__metadata__` strings (empty when the file has none).
  const std::map<std::string, std::string>& metadata() const noexcept { return header_->metadata; }
  /// True when the file holds a tensor named `name`.
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// Entry `name`'s description; throws io_error (listing the names) when there is none.
  const safetensors_info& info(std::string_view name) const { return require(name); }

  /// Copies entry `name` into a new host tensor; its dtype must be T's and its rank Rank. Throws io_error naming the
  /// file and the entry for a missing name (listing the names), a wrong dtype or rank, or a BOOL byte other than
  /// 0 or 1.
  template <class T, std::size_t Rank>
  tensor<T, Rank, host> get(std::string_view name) const {
    const safetensors_info& e = checked<T, Rank>(name, "get");
    shape_t<Rank> shape{};
    std::copy(e.shape.begin(), e.shape.end(), shape.begin());
    tensor<T, Rank, host> out(shape);
    const unsigned char* src = map_->data() + e.file_offset;
    if (e.end != e.begin) std::memcpy(static_cast<void*>(out.data()), src, static_cast<std::size_t>(e.end - e.begin));
    if constexpr (sizeof(T) > 1 && std::endian::native == std::endian::big)
      detail::npy_reverse_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<std::size_t>(out.size()),
                                sizeof(T));
    return out;
  }

  /// A read-only view of entry `name` inside the mapped file (no copy; pages are read when touched); its dtype must
  /// be T's and its rank Rank, and it must start at a multiple of alignof(T) (save_safetensors and the reference
  /// writer align every entry). Throws io_error as get() does, and for a misaligned entry (read it with get()).
  template <class T, std::size_t Rank>
  view<const T, Rank, host> mapped(std::string_view name) const {
    static_assert(sizeof(T) == 1 || std::endian::native == std::endian::little,
                  "texpr: a safetensors file holds little-endian data; on this big-endian host read it with get()");
    const safetensors_info& e = checked<T, Rank>(name, "mapped");
    const unsigned char* src = map_->data() + e.file_offset;
    if (e.end != e.begin && reinterpret_cast<std::uintptr_t>(src) % alignof(T) != 0)
      detail::npy_fail(path_, "entry " + detail::safetensors_quote(e.name) + " starts at byte " +
                                  std::to_string(e.file_offset) + " of the file, not a multiple of " +
                                  std::to_string(alignof(T)) + " (the alignment of " + std::string(dtype_name_v<T>) +
                                  "), so no view can point at it; copy it with get()");
    shape_t<Rank> shape{};
    std::copy(e.shape.begin(), e.shape.end(), shape.begin());
    return view<const T, Rank, host>(e.end != e.begin ? reinterpret_cast<const T*>(src) : nullptr, shape);
  }

 private:
  friend safetensors_file load_safetensors(const std::filesystem::path& path);

  const safetensors_info* find(std::string_view name) const {
    for (const safetensors_info& e : header_->entries)
      if (e.name == name) return &e;
    return nullptr;
  }
  const safetensors_info& require(std::string_view name) const {
    if (const safetensors_info* e = find(name)) return *e;
    std::string list;
    for (const safetensors_info& e : header_->entries) list += (list.empty() ? "" : ", ") + e.name;
    detail::npy_fail(path_, "no entry " + detail::safetensors_quote(std::string(name)) +
                                " (the file has: " + (list.empty() ? std::string("no entries") : list) + ")");
  }
  template <class T, std::size_t Rank>
  const safetensors_info& checked(std::string_view name, const char* how) const {
    static_assert(has_safetensors_dtype_v<T>, "texpr: this element type has no safetensors dtype");
    const safetensors_info& e = require(name);
    const std::string where = "entry " + detail::safetensors_quote(e.name);
    if (e.dtype != safetensors_dtype_v<T>)
      detail::npy_fail(path_, where + " holds " + e.dtype + " (" + detail::safetensors_texpr_name(e.dtype) + "), but " +
                                  how + " asked for " + std::string(safetensors_dtype_v<T>) + " (" +
                                  std::string(dtype_name_v<T>) + ")");
    if (e.shape.size() != Rank)
      detail::npy_fail(path_, where + " has rank " + std::to_string(e.shape.size()) + " (shape " +
                                  detail::safetensors_shape_string(e.shape) + "), but " + how + " asked for rank " +
                                  std::to_string(Rank));
    if constexpr (std::is_same_v<T, bool>) {
      const unsigned char* src = map_->data() + e.file_offset;
      for (std::uint64_t i = 0; i != e.end - e.begin; ++i)
        if (src[i] > 1)
          detail::npy_fail(path_, where + ": BOOL element " + std::to_string(i) + " is the byte " +
                                      std::to_string(src[i]) + ", not 0 or 1");
    }
    return e;
  }

  std::filesystem::path path_;
  std::shared_ptr<const detail::safetensors_mapping> map_;
  std::shared_ptr<const detail::safetensors_header> header_;
};

/// Opens a safetensors file: maps it read-only and checks its header (the length within the format's 100 MB limit
/// and the file, valid UTF-8 JSON, no duplicate names, each entry's dtype, shape and data_offsets consistent, the
/// entries tiling the data section exactly). Entries are read by safetensors_file::get or viewed by
/// safetensors_file::mapped.
/// Throws io_error naming the file and, where one is at fault, the entry.
inline safetensors_file load_safetensors(const std::filesystem::path& path) {
  safetensors_file f;
  f.path_ = path;
  auto map = std::make_shared<const detail::safetensors_mapping>(path);
  f.header_ =
      std::make_shared<const detail::safetensors_header>(detail::safetensors_parse(path, map->data(), map->size()));
  f.map_ = std::move(map);
  return f;
}

}  // namespace texpr

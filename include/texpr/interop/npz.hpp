// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// .npz archives (NumPy's np.savez: a zip of .npy entries, stored uncompressed): tx::save_npz writes named host
// tensors, views and expressions into one file; tx::load_npz reads one into a tx::npz_archive. Optional: texpr.hpp
// does not include it. Archives of np.savez_compressed (deflate) are read when TEXPR_WITH_ZLIB is defined and zlib
// is linked (CMake: link texpr::zlib, defined when CMake finds zlib).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <istream>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <streambuf>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/expr/node.hpp"
#include "texpr/interop/npy.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"

#if defined(TEXPR_WITH_ZLIB)
#include <zlib.h>
#endif

namespace texpr {

namespace detail {

/// CRC-32 (ISO-HDLC, the zip and zlib polynomial 0xEDB88320, reflected): crc_32_update(0, bytes) is the zip CRC.
inline constexpr std::array<std::uint32_t, 256> crc_32_table = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i != 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k != 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}();

inline std::uint32_t crc_32_update(std::uint32_t crc, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  crc = ~crc;
  for (std::size_t i = 0; i != bytes; ++i) crc = crc_32_table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

inline constexpr std::uint32_t zip_local_signature = 0x04034b50, zip_central_signature = 0x02014b50,
                                zip_end_signature = 0x06054b50, zip64_end_signature = 0x06064b50,
                                zip64_locator_signature = 0x07064b50;
inline constexpr std::uint64_t zip_32_max = 0xFFFFFFFFu;  // a 32-bit field at this value defers to zip64
inline constexpr std::uint16_t zip_utf8_flag = 0x800;      // general-purpose bit 11: the name is UTF-8

/// Little-endian field writer.
inline void zip_put(std::string& out, std::uint64_t v, int bytes) {
  for (int b = 0; b != bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}
/// Little-endian field reader over a byte range already bounds-checked.
inline std::uint64_t zip_get(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int b = 0; b != bytes; ++b) v |= std::uint64_t{p[b]} << (8 * b);
  return v;
}

/// One entry of a save: the .npy preamble and a function streaming the data bytes to a sink.
struct npz_payload {
  std::string preamble;
  std::uint64_t data_bytes = 0;
  std::function<void(const std::function<void(const void*, std::size_t)>&)> emit;
};

/// Reads a byte range already in memory as an istream (npy_load_stream seeks within it).
class npz_memory_buffer : public std::streambuf {
 public:
  npz_memory_buffer(char* begin, std::size_t size) { setg(begin, begin, begin + size); }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    char* base = dir == std::ios_base::beg ? eback() : dir == std::ios_base::cur ? gptr() : egptr();
    if (off < eback() - base || off > egptr() - base) return pos_type(off_type(-1));
    setg(eback(), base + off, egptr());
    return pos_type(gptr() - eback());
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

/// Deflate's best ratio is 1032:1 (a 258-byte match in about two bits); a claimed size beyond it is a lie, and
/// rejecting it before allocating keeps a hostile directory from asking for terabytes.
inline constexpr std::uint64_t deflate_max_ratio = 1032;

/// True when this build can inflate np.savez_compressed entries (TEXPR_WITH_ZLIB).
inline constexpr bool npz_has_deflate =
#if defined(TEXPR_WITH_ZLIB)
    true;
#else
    false;
#endif

#if defined(TEXPR_WITH_ZLIB)
/// Inflates a raw deflate stream (zip method 8: no zlib header) into exactly `out.size()` bytes; anything else (a
/// corrupt stream, fewer or more bytes than the directory says) throws io_error naming the entry.
inline void npz_inflate(const std::filesystem::path& label, const std::string& in, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) npy_fail(label, "zlib's inflateInit2 failed (out of memory?)");
  struct end_guard {
    z_stream* z;
    ~end_guard() { inflateEnd(z); }
  } guard{&z};
  constexpr std::size_t chunk = std::size_t{1} << 30;  // avail_in and avail_out are 32-bit
  std::size_t in_at = 0, out_at = 0;
  unsigned char spare = 0;  // given once the claimed bytes are written: a write there means the stream is longer
  bool past_end = false;
  for (;;) {
    if (z.avail_in == 0 && in_at != in.size()) {
      const std::size_t n = std::min(chunk, in.size() - in_at);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + in_at));
      z.avail_in = static_cast<uInt>(n);
      in_at += n;
    }
    if (z.avail_out == 0) {
      if (past_end)
        npy_fail(label, "corrupt deflate data: it inflates to more than the " + std::to_string(out.size()) +
                            " bytes the directory states");
      if (out_at != out.size()) {
        const std::size_t n = std::min(chunk, out.size() - out_at);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + out_at);
        z.avail_out = static_cast<uInt>(n);
        out_at += n;
      } else {
        z.next_out = &spare;
        z.avail_out = 1;
        past_end = true;
      }
    }
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_at == in.size())
      npy_fail(label, "truncated deflate data: the stream ends before its last block");
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      npy_fail(label, std::string("corrupt deflate data (zlib: ") + (z.msg ? z.msg : "error " + std::to_string(rc)) +
                          ")");
  }
  if (past_end && z.avail_out == 0)
    npy_fail(label, "corrupt deflate data: it inflates to more than the " + std::to_string(out.size()) +
                        " bytes the directory states");
  if (z.total_out != out.size())
    npy_fail(label, "corrupt deflate data: it inflates to " + std::to_string(z.total_out) + " bytes, the directory " +
                        "says " + std::to_string(out.size()));
  if (z.avail_in != 0 || in_at != in.size())
    npy_fail(label, "corrupt deflate data: the stream ends " + std::to_string(in.size() - in_at + z.avail_in) +
                        " bytes before the entry does");
}
#endif

} // namespace detail

/// One named array of a tx::save_npz call, stored as `name + ".npy"`: a host tensor (read in place; it must
/// outlive the call), a host view (any strides) or a host expression (evaluated when the entry is made).
class npz_entry {
 public:
  /// Names x; bfloat16 and cuda operands are compile errors (as for save_npy).
  template <operand E>
  npz_entry(std::string name, E&& x) : name_(std::move(name)) {  // NOLINT: implicit, for {{"w", w}, ...}
    using N = detail::captured_t<E>;
    using T = std::remove_const_t<typename N::value_type>;
    detail::npy_check_dtype<T>();
    static_assert(std::is_same_v<typename N::backend, host>,
                  "texpr: save_npz writes host data; copy a cuda tensor with tx::to_host first");
    if constexpr (std::is_same_v<typename N::backend, host> && has_npy_dtype_v<T>) {
      constexpr std::size_t R = N::rank;
      detail::host_operand_memory<T, R>(
          std::forward<E>(x), keep_, [this](const T* data, const shape_t<R>& shape, std::optional<shape_t<R>> strides) {
            set<T, R>(data, shape, strides);
          });
    }
  }
  /// The key: the entry is stored as `name() + ".npy"`, as np.savez names it.
  const std::string& name() const noexcept { return name_; }
  /// The .npy image's parts (internal: save_npz's).
  const detail::npz_payload& payload() const noexcept { return payload_; }

 private:
  template <class T, std::size_t R>
  void set(const T* data, const shape_t<R>& shape, std::optional<shape_t<R>> strides) {
    payload_.preamble = detail::npy_preamble(npy_descr_v<T>, false, std::span<const index_t>(shape.data(), R));
    payload_.data_bytes = static_cast<std::uint64_t>(shape_size(shape)) * sizeof(T);
    payload_.emit = [data, shape, strides](const std::function<void(const void*, std::size_t)>& sink) {
      detail::npy_emit(data, shape, strides ? &*strides : nullptr, sink);
    };
  }

  std::string name_;
  detail::npz_payload payload_;
  std::shared_ptr<const void> keep_;
};

namespace detail {

inline void npz_check_name(const std::filesystem::path& file, const std::string& name) {
  if (name.empty()) npy_fail(file, "an entry has an empty name (np.load could not look it up)");
  if (name.find('\0') != std::string::npos)
    npy_fail(file, "the entry name '" + name.substr(0, name.find('\0')) + "\\0...' holds a NUL byte");
  if (name.size() + 4 > 0xFFFF) npy_fail(file, "the entry name '" + name.substr(0, 40) + "...' is over 65531 bytes");
}

/// Writes the archive; force_zip64 writes zip64 records for every entry (np.savez's local headers have them; the
/// tests use it to check texpr's zip64 records against NumPy without writing 4 GiB).
inline void npz_write(const std::filesystem::path& file, const npz_entry* entries, std::size_t count,
                      bool force_zip64) {
  for (std::size_t i = 0; i != count; ++i) {
    npz_check_name(file, entries[i].name());
    for (std::size_t j = 0; j != i; ++j)
      if (entries[j].name() == entries[i].name()) npy_fail(file, "two entries named '" + entries[i].name() + "'");
  }
  struct written {
    std::string name;
    std::uint32_t crc;
    std::uint64_t size, offset;
    bool utf8;
  };
  std::vector<written> directory;
  npy_output out(file);
  std::uint64_t position = 0;
  const auto put = [&](const void* p, std::size_t bytes) {
    out.write(p, bytes);
    position += bytes;
  };
  for (std::size_t i = 0; i != count; ++i) {
    const npz_payload& payload = entries[i].payload();
    // The CRC first (one pass over the data), so that the local header is written once, before the data.
    std::uint32_t crc = crc_32_update(0, payload.preamble.data(), payload.preamble.size());
    payload.emit([&](const void* p, std::size_t bytes) { crc = crc_32_update(crc, p, bytes); });
    const std::uint64_t size = payload.preamble.size() + payload.data_bytes;
    const std::string name = entries[i].name() + ".npy";
    const bool utf8 = std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    const bool zip64 = force_zip64 || size >= zip_32_max || position >= zip_32_max;
    std::string header;
    zip_put(header, zip_local_signature, 4);
    zip_put(header, zip64 ? 45 : 20, 2);  // version needed: 4.5 for zip64, 2.0 otherwise
    zip_put(header, utf8 ? zip_utf8_flag : 0, 2);
    zip_put(header, 0, 2);       // method: stored
    zip_put(header, 0, 2);       // time 00:00:00
    zip_put(header, 0x21, 2);    // date 1980-01-01 (a fixed stamp: the same tensors give the same bytes)
    zip_put(header, crc, 4);
    zip_put(header, zip64 ? zip_32_max : size, 4);
    zip_put(header, zip64 ? zip_32_max : size, 4);
    zip_put(header, name.size(), 2);
    zip_put(header, zip64 ? 20 : 0, 2);
    header += name;
    if (zip64) {
      zip_put(header, 0x0001, 2);
      zip_put(header, 16, 2);
      zip_put(header, size, 8);
      zip_put(header, size, 8);
    }
    directory.push_back({name, crc, size, position, utf8});
    put(header.data(), header.size());
    put(payload.preamble.data(), payload.preamble.size());
    payload.emit(put);
  }
  const std::uint64_t directory_offset = position;
  for (const written& w : directory) {
    const bool big_size = force_zip64 || w.size >= zip_32_max, big_offset = force_zip64 || w.offset >= zip_32_max;
    std::string extra;
    if (big_size || big_offset) {
      zip_put(extra, 0x0001, 2);
      zip_put(extra, (big_size ? 16 : 0) + (big_offset ? 8 : 0), 2);
      if (big_size) {
        zip_put(extra, w.size, 8);
        zip_put(extra, w.size, 8);
      }
      if (big_offset) zip_put(extra, w.offset, 8);
    }
    std::string header;
    zip_put(header, zip_central_signature, 4);
    zip_put(header, (3 << 8) | (extra.empty() ? 20 : 45), 2);  // made by: Unix, zip 2.0 / 4.5
    zip_put(header, extra.empty() ? 20 : 45, 2);
    zip_put(header, w.utf8 ? zip_utf8_flag : 0, 2);
    zip_put(header, 0, 2);
    zip_put(header, 0, 2);
    zip_put(header, 0x21, 2);
    zip_put(header, w.crc, 4);
    zip_put(header, big_size ? zip_32_max : w.size, 4);
    zip_put(header, big_size ? zip_32_max : w.size, 4);
    zip_put(header, w.name.size(), 2);
    zip_put(header, extra.size(), 2);
    zip_put(header, 0, 2);  // comment length
    zip_put(header, 0, 2);  // disk
    zip_put(header, 0, 2);  // internal attributes
    zip_put(header, std::uint64_t{0100644} << 16, 4);  // a regular file, rw-r--r--
    zip_put(header, big_offset ? zip_32_max : w.offset, 4);
    header += w.name;
    header += extra;
    put(header.data(), header.size());
  }
  const std::uint64_t directory_size = position - directory_offset;
  const bool zip64_end = force_zip64 || directory.size() >= 0xFFFF || directory_size >= zip_32_max ||
                         directory_offset >= zip_32_max;
  std::string end;
  if (zip64_end) {
    const std::uint64_t record = position;
    zip_put(end, zip64_end_signature, 4);
    zip_put(end, 44, 8);  // the record's size after this field
    zip_put(end, (3 << 8) | 45, 2);
    zip_put(end, 45, 2);
    zip_put(end, 0, 4);
    zip_put(end, 0, 4);
    zip_put(end, directory.size(), 8);
    zip_put(end, directory.size(), 8);
    zip_put(end, directory_size, 8);
    zip_put(end, directory_offset, 8);
    zip_put(end, zip64_locator_signature, 4);
    zip_put(end, 0, 4);
    zip_put(end, record, 8);
    zip_put(end, 1, 4);
  }
  zip_put(end, zip_end_signature, 4);
  zip_put(end, 0, 2);
  zip_put(end, 0, 2);
  zip_put(end, zip64_end ? 0xFFFF : directory.size(), 2);
  zip_put(end, zip64_end ? 0xFFFF : directory.size(), 2);
  zip_put(end, zip64_end ? zip_32_max : directory_size, 4);
  zip_put(end, zip64_end ? zip_32_max : directory_offset, 4);
  zip_put(end, 0, 2);
  put(end.data(), end.size());
  out.commit();
}

} // namespace detail

/// Writes named host tensors, views and expressions of any texpr dtype NumPy has (not bfloat16) and any ranks to
/// one .npz archive, as np.savez does: a zip of uncompressed `name.npy` entries (byte-identical .npy images), with
/// zip64 records where a size or offset needs them. `tx::save_npz("ckpt.npz", {{"w1", w1}, {"b1", b1}})`.
/// Written to `path + ".tmp"`, then renamed. Throws io_error naming the file for an empty, NUL-holding or repeated
/// name, or when the file cannot be written.
inline void save_npz(const std::filesystem::path& path, std::initializer_list<npz_entry> entries) {
  detail::npz_write(path, entries.begin(), entries.size(), false);
}
/// save_npz over a list built at run time.
inline void save_npz(const std::filesystem::path& path, const std::vector<npz_entry>& entries) {
  detail::npz_write(path, entries.data(), entries.size(), false);
}

/// A .npz archive opened by tx::load_npz: its entries' names and places, checked; each entry is read, its CRC-32
/// checked and its .npy image parsed (as load_npy does) when get() asks for it.
class npz_archive {
 public:
  /// One entry, stored or deflated.
  struct entry {
    std::string name;                ///< The entry's file name in the zip (`w1.npy`).
    std::uint64_t data_offset = 0;   ///< Where its bytes start in the file.
    std::uint64_t size = 0;          ///< Its .npy image's size in bytes.
    std::uint64_t stored_size = 0;   ///< Its size in the file (== size unless deflated).
    std::uint32_t crc = 0;           ///< Its CRC-32 (of the .npy image), as the central directory states it.
    bool deflated = false;           ///< Compressed with deflate (zip method 8, np.savez_compressed).
  };

  /// The archive's path.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// The keys, in archive order: entry names without their `.npy` (as np.load's NpzFile.files lists them).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const entry& e : entries_) out.push_back(key_of(e.name));
    return out;
  }
  /// The entries as stored.
  const std::vector<entry>& entries() const noexcept { return entries_; }
  /// True when `name` (a key, or an entry's full name) is in the archive.
  bool contains(std::string_view name) const { return find(name) != nullptr; }

  /// Reads entry `name` (`"w1"` or `"w1.npy"`) into a new host tensor; its dtype must be T's and its rank Rank.
  /// Throws io_error naming the file and the entry: a missing name (the message lists the keys), a CRC mismatch,
  /// a wrong dtype or rank, a corrupt .npy image.
  template <class T, std::size_t Rank> tensor<T, Rank, host> get(std::string_view name) const {
    detail::npy_check_dtype<T>();
    const entry* e = find(name);
    if (!e) {
      std::string keys;
      for (const std::string& k : names()) keys += (keys.empty() ? "" : ", ") + k;
      detail::npy_fail(path_, "no entry '" + std::string(name) + "' (the archive has: " + keys + ")");
    }
    const std::filesystem::path label(path_.string() + ", entry '" + e->name + "'");
    for (const std::uint64_t n : {e->size, e->stored_size})
      if (n > static_cast<std::uint64_t>(std::numeric_limits<std::streamsize>::max()) ||
          n > std::numeric_limits<std::size_t>::max())
        detail::npy_fail(label, "its " + std::to_string(n) + " bytes do not fit in memory here");
    std::string bytes(static_cast<std::size_t>(e->stored_size), '\0');
    std::ifstream in(path_, std::ios::binary);
    if (!in) detail::npy_fail(path_, "cannot open for reading (was it removed after load_npz?)");
    in.seekg(static_cast<std::streamoff>(e->data_offset));
    in.read(bytes.data(), static_cast<std::streamsize>(e->stored_size));
    if (static_cast<std::uint64_t>(in.gcount()) != e->stored_size)
      detail::npy_fail(label, "read error (the file changed after load_npz?)");
#if defined(TEXPR_WITH_ZLIB)
    if (e->deflated) {
      std::string image(static_cast<std::size_t>(e->size), '\0');
      detail::npz_inflate(label, bytes, image);
      bytes = std::move(image);
    }
#endif
    const std::uint32_t crc = detail::crc_32_update(0, bytes.data(), bytes.size());
    if (crc != e->crc)
      detail::npy_fail(label, "CRC-32 mismatch: the directory says " + hex(e->crc) + ", the data give " + hex(crc) +
                                  " (the archive is corrupt)");
    detail::npz_memory_buffer buffer(bytes.data(), bytes.size());
    std::istream stream(&buffer);
    return detail::npy_load_stream<T, Rank>(stream, label, e->size);
  }

 private:
  friend npz_archive load_npz(const std::filesystem::path& path);

  static std::string key_of(const std::string& name) {
    return name.size() > 4 && name.ends_with(".npy") ? name.substr(0, name.size() - 4) : name;
  }
  static std::string hex(std::uint32_t v) {
    const char* digits = "0123456789abcdef";
    std::string out = "0x";
    for (int s = 28; s >= 0; s -= 4) out += digits[(v >> s) & 0xF];
    return out;
  }
  const entry* find(std::string_view name) const {
    for (const entry& e : entries_)
      if (e.name == name) return &e;
    for (const entry& e : entries_)
      if (key_of(e.name) == name && e.name != name) return &e;
    return nullptr;
  }

  std::filesystem::path path_;
  std::vector<entry> entries_;
};

/// Opens a .npz archive (np.savez's, or save_npz's) and checks its structure: the end-of-central-directory record
/// (zip64 too), every directory entry against its local header, sizes and offsets inside the file, no duplicate
/// names. Deflated entries (np.savez_compressed) are read with TEXPR_WITH_ZLIB (and rejected without it); other
/// methods, encrypted entries and multi-disk archives are rejected. Throws
/// io_error naming the file and what is wrong; the data are read by npz_archive::get.
inline npz_archive load_npz(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  using detail::npy_fail;
  using detail::zip_get;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) npy_fail(path, "cannot open for reading: no such file");
  if (fs::is_directory(status)) npy_fail(path, "cannot open for reading: it is a directory");
  const std::uint64_t file_size = fs::file_size(path, ec);
  if (ec) npy_fail(path, "cannot read its size: " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) npy_fail(path, "cannot open for reading (permissions?)");
  const auto read_at = [&](std::uint64_t offset, std::uint64_t bytes, const std::string& what) {
    if (offset > file_size || bytes > file_size - offset)
      npy_fail(path, "truncated or corrupt: " + what + " (" + std::to_string(bytes) + " bytes at offset " +
                         std::to_string(offset) + ") lies past the end of the " + std::to_string(file_size) +
                         "-byte file");
    std::string out(static_cast<std::size_t>(bytes), '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(out.data(), static_cast<std::streamsize>(bytes));
    if (static_cast<std::uint64_t>(in.gcount()) != bytes) npy_fail(path, "read error in " + what);
    return out;
  };
  const auto u = [](const std::string& s, std::size_t at) { return reinterpret_cast<const unsigned char*>(s.data()) + at; };

  // The end-of-central-directory record: the last 22 bytes, or earlier when a comment (up to 64 KiB) follows it.
  if (file_size == 0) npy_fail(path, "truncated: the file is empty (0 bytes)");
  const std::uint64_t tail_size = std::min<std::uint64_t>(file_size, 22 + 0xFFFF);
  const std::string tail = read_at(file_size - tail_size, tail_size, "the end of the file");
  std::uint64_t end_at = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = tail.size() >= 22 ? tail.size() - 22 + 1 : 0; i-- > 0;) {
    if (zip_get(u(tail, i), 4) == detail::zip_end_signature && i + 22 + zip_get(u(tail, i + 20), 2) == tail.size()) {
      end_at = file_size - tail_size + i;
      break;
    }
  }
  if (end_at == std::numeric_limits<std::uint64_t>::max()) {
    const std::string head = read_at(0, std::min<std::uint64_t>(file_size, 6), "the start of the file");
    if (head == "\x93NUMPY") npy_fail(path, "not a .npz archive but a .npy file: read it with tx::load_npy");
    if (head.size() >= 4 && zip_get(u(head, 0), 4) == detail::zip_local_signature)
      npy_fail(path, "truncated or corrupt zip: it starts like one, but has no end-of-central-directory record");
    npy_fail(path, "not a .npz archive: no zip end-of-central-directory record (is it a zip file?)");
  }
  const std::string end = read_at(end_at, 22, "the end-of-central-directory record");
  if (zip_get(u(end, 4), 2) != 0 || zip_get(u(end, 6), 2) != 0)
    npy_fail(path, "a multi-disk (split) zip archive; texpr reads single-file archives");
  std::uint64_t count = zip_get(u(end, 10), 2), directory_size = zip_get(u(end, 12), 4),
                directory_offset = zip_get(u(end, 16), 4), directory_limit = end_at;
  if (end_at >= 20) {
    const std::string locator = read_at(end_at - 20, 20, "the zip64 end-of-central-directory locator");
    if (zip_get(u(locator, 0), 4) == detail::zip64_locator_signature) {
      const std::uint64_t record_at = zip_get(u(locator, 8), 8);
      if (record_at > end_at - 20 || end_at - 20 - record_at < 56)
        npy_fail(path, "corrupt zip64 locator: its record offset " + std::to_string(record_at) + " is not before it");
      const std::string record = read_at(record_at, 56, "the zip64 end-of-central-directory record");
      if (zip_get(u(record, 0), 4) != detail::zip64_end_signature)
        npy_fail(path, "corrupt zip64 end-of-central-directory record at offset " + std::to_string(record_at));
      if (zip_get(u(record, 16), 4) != 0 || zip_get(u(record, 20), 4) != 0)
        npy_fail(path, "a multi-disk (split) zip archive; texpr reads single-file archives");
      count = zip_get(u(record, 32), 8);
      directory_size = zip_get(u(record, 40), 8);
      directory_offset = zip_get(u(record, 48), 8);
      directory_limit = record_at;
    }
  }
  if (directory_offset > directory_limit || directory_size != directory_limit - directory_offset)
    npy_fail(path, "corrupt zip: the central directory (" + std::to_string(directory_size) + " bytes at offset " +
                       std::to_string(directory_offset) + ") does not end where the end record starts (offset " +
                       std::to_string(directory_limit) + ")");
  if (count > directory_size / 46)
    npy_fail(path, "corrupt zip: " + std::to_string(count) + " entries cannot fit a " +
                       std::to_string(directory_size) + "-byte central directory");
  const std::string directory = read_at(directory_offset, directory_size, "the central directory");

  npz_archive archive;
  archive.path_ = path;
  std::size_t at = 0;
  for (std::uint64_t i = 0; i != count; ++i) {
    const std::string where = "central directory entry " + std::to_string(i);
    if (directory.size() - at < 46) npy_fail(path, "corrupt zip: " + where + " is cut short");
    const unsigned char* h = u(directory, at);
    if (zip_get(h, 4) != detail::zip_central_signature)
      npy_fail(path, "corrupt zip: " + where + " has no central-directory signature");
    const std::uint64_t flags = zip_get(h + 8, 2), method = zip_get(h + 10, 2);
    const std::uint64_t name_length = zip_get(h + 28, 2), extra_length = zip_get(h + 30, 2),
                        comment_length = zip_get(h + 32, 2);
    if (directory.size() - at - 46 < name_length + extra_length + comment_length)
      npy_fail(path, "corrupt zip: " + where + "'s name and fields run past the central directory");
    npz_archive::entry e;
    e.name = directory.substr(at + 46, name_length);
    e.crc = static_cast<std::uint32_t>(zip_get(h + 16, 4));
    std::uint64_t compressed = zip_get(h + 20, 4), size = zip_get(h + 24, 4), offset = zip_get(h + 42, 4);
    // The zip64 extra field holds, in this order, only the values whose 32-bit field is 0xFFFFFFFF.
    for (std::size_t x = at + 46 + name_length, x_end = x + extra_length; x + 4 <= x_end;) {
      const std::uint64_t id = zip_get(u(directory, x), 2), length = zip_get(u(directory, x + 2), 2);
      if (length > x_end - x - 4) npy_fail(path, "corrupt zip: entry '" + e.name + "' has a cut-short extra field");
      if (id == 0x0001) {
        std::size_t p = x + 4;
        for (std::uint64_t* field : {&size, &compressed, &offset}) {
          if (*field != detail::zip_32_max) continue;
          if (p + 8 > x + 4 + length) npy_fail(path, "corrupt zip: entry '" + e.name + "' has a short zip64 field");
          *field = zip_get(u(directory, p), 8);
          p += 8;
        }
      }
      x += 4 + length;
    }
    at += 46 + name_length + extra_length + comment_length;
    const std::string entry_label = "entry '" + e.name + "'";
    if (flags & 1) npy_fail(path, entry_label + " is encrypted; texpr reads plain .npz archives");
    if (method == 8 && !detail::npz_has_deflate)
      npy_fail(path, entry_label + " is compressed (zip method 8, deflate, as np.savez_compressed writes) and this "
                                   "build has no zlib: define TEXPR_WITH_ZLIB and link zlib (CMake: texpr::zlib; "
                                   "Debian: zlib1g-dev), or save it with np.savez");
    if (method != 0 && method != 8)
      npy_fail(path, entry_label + " is compressed with zip method " + std::to_string(method) +
                         "; texpr reads stored entries and deflate (np.savez, np.savez_compressed)");
    if (method == 8 && size > compressed * detail::deflate_max_ratio + 64)
      npy_fail(path, "corrupt zip: " + entry_label + " claims " + std::to_string(size) + " bytes from " +
                         std::to_string(compressed) + " deflated ones, past deflate's best ratio");
    if (method == 0 && compressed != size)
      npy_fail(path, "corrupt zip: " + entry_label + " is stored, but its sizes differ (" + std::to_string(compressed) +
                         " compressed, " + std::to_string(size) + " uncompressed)");
    for (const npz_archive::entry& seen : archive.entries_)
      if (seen.name == e.name) npy_fail(path, "two entries named '" + e.name + "'");
    // The local header: its signature, its name (as the directory's), and where the data start.
    const std::string local = read_at(offset, 30, "the local header of " + entry_label);
    if (zip_get(u(local, 0), 4) != detail::zip_local_signature)
      npy_fail(path, "corrupt zip: " + entry_label + " has no local header at offset " + std::to_string(offset));
    if (zip_get(u(local, 8), 2) != method)
      npy_fail(path, "corrupt zip: " + entry_label + "'s local header and directory disagree on the method");
    const std::uint64_t local_name = zip_get(u(local, 26), 2), local_extra = zip_get(u(local, 28), 2);
    if (read_at(offset + 30, local_name, "the local name of " + entry_label) != e.name)
      npy_fail(path, "corrupt zip: " + entry_label + "'s local header names another file");
    e.data_offset = offset + 30 + local_name + local_extra;
    e.size = size;
    e.stored_size = compressed;
    e.deflated = method == 8;
    if (e.data_offset > directory_offset || compressed > directory_offset - e.data_offset)
      npy_fail(path, "truncated or corrupt: " + entry_label + "'s " + std::to_string(compressed) + " bytes at offset " +
                         std::to_string(e.data_offset) + " run past the central directory at offset " +
                         std::to_string(directory_offset));
    archive.entries_.push_back(std::move(e));
  }
  if (at != directory.size())
    npy_fail(path, "corrupt zip: " + std::to_string(directory.size() - at) + " bytes left in the central directory " +
                       "after its " + std::to_string(count) + " entries");
  return archive;
}

} // namespace texpr

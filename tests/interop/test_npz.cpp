// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// .npz archives: round trips of every dtype and rank (tensors, views, expressions, odd names), NumPy's own archives
// and NumPy reading texpr's (when python3 imports numpy), zip64 records, and every error on crafted archives.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <texpr/interop/npz.hpp>
#include <texpr/texpr.hpp>

#include "file_helpers.hpp"

namespace tx = texpr;
namespace fs = std::filesystem;

namespace {

using texpr_test::bytes_of;
using texpr_test::contains;
using texpr_test::fixture;
using texpr_test::write_bytes;

fs::path scratch(const std::string& name) { return texpr_test::scratch_in("npz_scratch", name); }

// numpy_npz.py's values(): element k of n (row-major).
template <class T> T formula(tx::index_t k, tx::index_t n) {
  const tx::index_t centred = k - n / 2;
  if constexpr (std::is_same_v<T, bool>)
    return k % 3 == 1;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return static_cast<std::int32_t>(centred * 40000003);
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return centred * 300000000000000007;
  else if constexpr (std::is_same_v<T, tx::half>)
    return T(static_cast<float>(centred) * 0.375f);
  else
    return static_cast<T>(static_cast<double>(centred) * 0.375);
}

template <class T, std::size_t R> tx::tensor<T, R> filled(const tx::shape_t<R>& shape) {
  tx::tensor<T, R> t(shape);
  for (tx::index_t k = 0; k != t.size(); ++k) t.data()[k] = formula<T>(k, t.size());
  return t;
}

template <class T, std::size_t R> void check_values(const tx::tensor<T, R>& t, const tx::shape_t<R>& shape) {
  REQUIRE(t.shape() == shape);
  for (tx::index_t k = 0; k != t.size(); ++k) {
    const T want = formula<T>(k, t.size());
    CAPTURE(k);
    CHECK(std::memcmp(&t.data()[k], &want, sizeof(T)) == 0);
  }
}

const std::string odd_name = "layer 1/w\xC3\xBC.x";  // a space, a slash, UTF-8 and a dot, as numpy_npz.py's

// numpy_npz.py's ARRAYS, in its order; w1 as a view of its transpose's transpose, i4 as an expression.
void save_arrays(const fs::path& path, bool zip64) {
  const auto w1 = filled<float, 2>({3, 4});
  tx::tensor<float, 2> stored_t({4, 3});  // w1 stored transposed, read back through strides
  for (tx::index_t i = 0; i != 3; ++i)
    for (tx::index_t j = 0; j != 4; ++j) stored_t.data()[j * 3 + i] = w1.data()[i * 4 + j];
  const tx::view<const float, 2> w1_view(stored_t.data(), {3, 4}, {1, 3});
  const auto i4_half = filled<std::int32_t, 4>({2, 1, 3, 2});
  const std::vector<tx::npz_entry> entries = {
      {"w1", w1_view},
      {"b1", filled<double, 1>({4})},
      {"step", filled<std::int64_t, 0>({})},
      {"mask", filled<bool, 2>({2, 3})},
      {"h", filled<tx::half, 1>({5})},
      {"empty", filled<std::int32_t, 2>({0, 3})},
      {"i4", i4_half + 0},
      {odd_name, filled<float, 1>({2})},
  };
  tx::detail::npz_write(path, entries.data(), entries.size(), zip64);
}

void check_arrays(const tx::npz_archive& a) {
  CHECK(a.names() == std::vector<std::string>{"w1", "b1", "step", "mask", "h", "empty", "i4", odd_name});
  check_values(a.get<float, 2>("w1"), {3, 4});
  check_values(a.get<float, 2>("w1.npy"), {3, 4});
  check_values(a.get<double, 1>("b1"), {4});
  check_values(a.get<std::int64_t, 0>("step"), {});
  check_values(a.get<bool, 2>("mask"), {2, 3});
  check_values(a.get<tx::half, 1>("h"), {5});
  check_values(a.get<std::int32_t, 2>("empty"), {0, 3});
  check_values(a.get<std::int32_t, 4>("i4"), {2, 1, 3, 2});
  check_values(a.get<float, 1>(odd_name), {2});
}

// An independent zip writer for crafted archives: bitwise CRC-32, stored entries, fields overridable.
std::uint32_t bitwise_crc(std::string_view s) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k != 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

struct raw_entry {
  raw_entry(std::string n, std::string d, std::uint32_t x = 0) : name(std::move(n)), data(std::move(d)), crc_xor(x) {}
  std::string name, data;
  std::uint16_t method = 0, flags = 0;
  std::uint32_t crc_xor = 0;   // flips bits of the stated CRC
  std::string central_extra;  // extra field of the directory entry
  bool size_ffff = false;     // 0xFFFFFFFF in the directory's size fields (zip64 deferral)
  std::string image;          // method 8: the uncompressed bytes (the CRC's and the stated size's); data deflate it
  std::uint64_t claimed = 0;  // method 8: a stated uncompressed size other than image's, when not 0
};

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int b = 0; b != bytes; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

std::string zip_of(const std::vector<raw_entry>& entries, std::string comment = "") {
  std::string out, directory;
  for (const raw_entry& e : entries) {
    const bool deflated = e.method == 8 && !e.image.empty();
    const std::uint32_t crc = bitwise_crc(deflated ? e.image : e.data) ^ e.crc_xor;
    const std::uint64_t offset = out.size();
    const std::uint64_t size = e.size_ffff ? 0xFFFFFFFFu : e.data.size();
    const std::uint64_t full = e.size_ffff ? 0xFFFFFFFFu : e.claimed ? e.claimed : deflated ? e.image.size() : size;
    put(out, 0x04034b50, 4);
    put(out, 20, 2);
    put(out, e.flags, 2);
    put(out, e.method, 2);
    put(out, 0, 4);
    put(out, crc, 4);
    put(out, e.data.size(), 4);
    put(out, full == 0xFFFFFFFFu ? e.data.size() : full, 4);
    put(out, e.name.size(), 2);
    put(out, 0, 2);
    out += e.name + e.data;
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);
    put(directory, 20, 2);
    put(directory, e.flags, 2);
    put(directory, e.method, 2);
    put(directory, 0, 4);
    put(directory, crc, 4);
    put(directory, size, 4);
    put(directory, full, 4);
    put(directory, e.name.size(), 2);
    put(directory, e.central_extra.size(), 2);
    put(directory, 0, 6);  // comment length, disk, internal attributes
    put(directory, 0, 4);  // external attributes
    put(directory, offset, 4);
    directory += e.name + e.central_extra;
  }
  const std::uint64_t directory_offset = out.size();
  out += directory;
  put(out, 0x06054b50, 4);
  put(out, 0, 4);
  put(out, entries.size(), 2);
  put(out, entries.size(), 2);
  put(out, directory.size(), 4);
  put(out, directory_offset, 4);
  put(out, comment.size(), 2);
  return out + comment;
}

std::string npy_bytes_of(const tx::tensor<float, 1>& t) {
  const fs::path p = scratch("entry.npy");
  tx::save_npy(p, t);
  return bytes_of(p);
}

} // namespace

TEST_CASE("npz: every dtype and rank round trip (views, expressions, odd names); zip64 records") {
  for (const bool zip64 : {false, true}) {
    CAPTURE(zip64);
    const fs::path p = scratch(zip64 ? "all_zip64.npz" : "all.npz");
    save_arrays(p, zip64);
    const tx::npz_archive a = tx::load_npz(p);
    check_arrays(a);
    CHECK(a.contains("w1"));
    CHECK(a.contains("i4.npy"));
    CHECK(!a.contains("w2"));
    CHECK(a.path() == p);
    // Each entry is byte for byte what save_npy writes (np.savez stores np.save's bytes).
    tx::save_npy(scratch("b1.npy"), filled<double, 1>({4}));
    const std::string file = bytes_of(p), npy = bytes_of(scratch("b1.npy"));
    const tx::npz_archive::entry& b1 = a.entries()[1];
    CHECK(b1.name == "b1.npy");
    CHECK(file.substr(static_cast<std::size_t>(b1.data_offset), static_cast<std::size_t>(b1.size)) == npy);
    CHECK(b1.crc == bitwise_crc(npy));
  }
  // The initializer-list form; a key that itself ends in .npy is stored as "x.npy.npy" (as np.savez does).
  const auto a = filled<float, 2>({2, 3});
  tx::save_npz(scratch("pair.npz"), {{"a", a}, {"x.npy", tx::transpose(a)}, {"s", tx::sum(a)}});
  const tx::npz_archive archive = tx::load_npz(scratch("pair.npz"));
  CHECK(archive.entries()[1].name == "x.npy.npy");
  check_values(archive.get<float, 2>("a"), {2, 3});
  const auto at = archive.get<float, 2>("x.npy");
  CHECK(at.shape() == tx::shape_t<2>{3, 2});
  CHECK(at.data()[1] == a.data()[3]);
  CHECK(archive.get<float, 0>("s").data()[0] == doctest::Approx(-1.125));  // sum of (k - 3) * 0.375
  tx::save_npz(scratch("none.npz"), std::vector<tx::npz_entry>{});
  CHECK(tx::load_npz(scratch("none.npz")).names().empty());
}

TEST_CASE("npz: NumPy reads texpr's archives and texpr reads NumPy's") {
  const char* configured = std::getenv("TEXPR_PYTHON");
  const std::string python = configured && *configured ? configured : "python3";
  if (!(configured && *configured) && std::system((python + " -c \"import numpy\" > /dev/null 2>&1").c_str()) != 0) {
    MESSAGE("NumPy not importable: skipped NumPy round trips (crafted archives still tested)");
    return;
  }
  const fs::path dir = fs::current_path() / "npz_numpy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string script = "\"" + python + "\" \"" + fixture("numpy_npz.py").string() + "\" ";
  REQUIRE(std::system((script + "write \"" + dir.string() + "\"").c_str()) == 0);
  check_arrays(tx::load_npz(dir / "np.npz"));  // np.savez forces zip64 extra fields into its local headers
  const tx::npz_archive positional = tx::load_npz(dir / "np_positional.npz");
  CHECK(positional.names() == std::vector<std::string>{"arr_0", "arr_1"});
  check_values(positional.get<float, 2>("arr_0"), {2, 2});
  check_values(positional.get<std::int64_t, 1>("arr_1"), {3});
  if constexpr (tx::detail::npz_has_deflate)
    check_arrays(tx::load_npz(dir / "np_compressed.npz"));
  else
    CHECK_THROWS_WITH_AS(tx::load_npz(dir / "np_compressed.npz"), contains("entry 'w1.npy' is compressed"), tx::io_error);
  save_arrays(dir / "tx.npz", false);
  save_arrays(dir / "tx_zip64.npz", true);
  CHECK(std::system((script + "check \"" + dir.string() + "\"").c_str()) == 0);
}

TEST_CASE("npz: errors name the file and the entry") {
  const fs::path p = scratch("errors.npz");
  tx::save_npz(p, {{"w1", filled<float, 2>({3, 4})}, {"b1", filled<double, 1>({4})}});
  const tx::npz_archive a = tx::load_npz(p);
  CHECK_THROWS_WITH_AS((a.get<float, 2>("w2")), contains(p.string() + ": no entry 'w2' (the archive has: w1, b1)"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS((a.get<float, 1>("b1")),
                       contains(p.string() + ", entry 'b1.npy': expected dtype float32 (<f4), file has <f8"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS((a.get<float, 3>("w1")),
                       contains(p.string() + ", entry 'w1.npy': expected rank 3, file has shape (3, 4)"), tx::io_error);

  // Saving: repeated, empty and NUL-holding names; the file is not written.
  const auto w = filled<float, 1>({2});
  CHECK_THROWS_WITH_AS((tx::save_npz(scratch("dup.npz"), {{"w", w}, {"w", w}})), contains("dup.npz: two entries named 'w'"),
                       tx::io_error);
  CHECK(!fs::exists(scratch("dup.npz")));
  CHECK_THROWS_WITH_AS((tx::save_npz(scratch("e.npz"), {{"", w}})), contains("an entry has an empty name"), tx::io_error);
  CHECK_THROWS_WITH_AS((tx::save_npz(scratch("e.npz"), {{std::string("a\0b", 3), w}})), contains("holds a NUL byte"),
                       tx::io_error);

  // Opening: no file, a directory, an empty file, a .npy file, not a zip.
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("missing.npz")), contains("missing.npz: cannot open for reading: no such file"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS(tx::load_npz(fs::current_path()), contains("it is a directory"), tx::io_error);
  write_bytes(scratch("empty.npz"), "");
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("empty.npz")), contains("truncated: the file is empty"), tx::io_error);
  tx::save_npy(scratch("plain.npy"), w);
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("plain.npy")), contains("not a .npz archive but a .npy file"), tx::io_error);
  write_bytes(scratch("text.npz"), "hello, this is not a zip file at all");
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("text.npz")), contains("not a .npz archive: no zip end-of-central-directory"),
                       tx::io_error);

  // Every truncation of a valid archive is an io_error (from load_npz or, at the latest, from get), never a crash.
  const std::string whole = bytes_of(p);
  const auto read_all = [] {
    const tx::npz_archive cut = tx::load_npz(scratch("cut.npz"));
    (void)cut.get<float, 2>("w1");
    (void)cut.get<double, 1>("b1");
  };
  for (std::size_t n = 0; n < whole.size(); ++n) {
    CAPTURE(n);
    write_bytes(scratch("cut.npz"), whole.substr(0, n));
    CHECK_THROWS_AS(read_all(), tx::io_error);
  }
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("cut.npz")), contains("starts like one, but has no end-of-central-directory"),
                       tx::io_error);
  // Every single-byte corruption either still reads the same values (a field nothing checks: time, version, ...)
  // or is an io_error; never another exception or a crash (the sanitizer build runs this too).
  for (std::size_t n = 0; n < whole.size(); ++n) {
    CAPTURE(n);
    std::string bad = whole;
    bad[n] = static_cast<char>(bad[n] ^ 0x5A);
    write_bytes(scratch("cut.npz"), bad);
    try {
      const tx::npz_archive flipped = tx::load_npz(scratch("cut.npz"));
      check_values(flipped.get<float, 2>("w1"), {3, 4});
      check_values(flipped.get<double, 1>("b1"), {4});
    } catch (const tx::io_error&) {
    }
  }
}

TEST_CASE("npz: crafted archives: CRC, compression, duplicates, sizes, headers") {
  const std::string npy = npy_bytes_of(filled<float, 1>({3}));
  const auto load_error = [](const std::vector<raw_entry>& entries, const std::string& comment = "") {
    write_bytes(scratch("crafted.npz"), zip_of(entries, comment));
    const tx::npz_archive a = tx::load_npz(scratch("crafted.npz"));
    return a;
  };
  // The reference writer's archive loads (with a trailing comment too), so each mutation below is the only fault.
  check_values(load_error({{"x.npy", npy}}).get<float, 1>("x"), {3});
  check_values(load_error({{"x.npy", npy}}, "a zip comment").get<float, 1>("x"), {3});

  raw_entry bad_crc{"x.npy", npy};
  bad_crc.crc_xor = 1;
  const tx::npz_archive crc = load_error({bad_crc});
  CHECK_THROWS_WITH_AS((crc.get<float, 1>("x")), contains("entry 'x.npy': CRC-32 mismatch"), tx::io_error);
  std::string flipped = npy;
  flipped.back() = static_cast<char>(flipped.back() ^ 0x40);
  const tx::npz_archive flipped_data = load_error({{"x.npy", npy}, {"y.npy", flipped, bitwise_crc(flipped) ^ bitwise_crc(npy)}});
  CHECK_THROWS_WITH_AS((flipped_data.get<float, 1>("y")),
                       contains("CRC-32 mismatch"), tx::io_error);

  raw_entry deflated{"x.npy", npy};  // method 8 over bytes that are not deflate data
  deflated.method = 8;
  if constexpr (tx::detail::npz_has_deflate)
    CHECK_THROWS_WITH_AS((load_error({deflated}).get<float, 1>("x")), contains("entry 'x.npy': corrupt deflate data"),
                         tx::io_error);
  else
    CHECK_THROWS_WITH_AS(load_error({deflated}), contains("entry 'x.npy' is compressed (zip method 8"), tx::io_error);
  raw_entry bzip2{"x.npy", npy};
  bzip2.method = 12;
  CHECK_THROWS_WITH_AS(load_error({bzip2}), contains("entry 'x.npy' is compressed with zip method 12"), tx::io_error);
  raw_entry encrypted{"x.npy", npy};
  encrypted.flags = 1;
  CHECK_THROWS_WITH_AS(load_error({encrypted}), contains("entry 'x.npy' is encrypted"), tx::io_error);
  CHECK_THROWS_WITH_AS((load_error({{"x.npy", npy}, {"x.npy", npy}})), contains("two entries named 'x.npy'"), tx::io_error);

  // Sizes: 0xFFFFFFFF without a zip64 field, and zip64 sizes near 2^64 (offset + size would wrap).
  raw_entry deferred{"x.npy", npy};
  deferred.size_ffff = true;
  CHECK_THROWS_WITH_AS(load_error({deferred}), contains("run past the central directory"), tx::io_error);
  raw_entry huge = deferred;
  put(huge.central_extra, 0x0001, 2);
  put(huge.central_extra, 16, 2);
  put(huge.central_extra, ~std::uint64_t{0} - 10, 8);
  put(huge.central_extra, ~std::uint64_t{0} - 10, 8);
  CHECK_THROWS_WITH_AS(load_error({huge}), contains("run past the central directory"), tx::io_error);
  raw_entry short_zip64 = deferred;
  put(short_zip64.central_extra, 0x0001, 2);
  put(short_zip64.central_extra, 8, 2);
  put(short_zip64.central_extra, npy.size(), 8);
  CHECK_THROWS_WITH_AS(load_error({short_zip64}), contains("has a short zip64 field"), tx::io_error);
  raw_entry cut_extra{"x.npy", npy};
  put(cut_extra.central_extra, 0x0001, 2);
  put(cut_extra.central_extra, 99, 2);
  CHECK_THROWS_WITH_AS(load_error({cut_extra}), contains("has a cut-short extra field"), tx::io_error);

  // Headers: a local header naming another file; a directory offset off by one; a wrong entry count.
  std::string renamed = zip_of({{"x.npy", npy}});
  renamed[30] = 'y';  // the local header's name
  write_bytes(scratch("crafted.npz"), renamed);
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("crafted.npz")), contains("local header names another file"), tx::io_error);
  std::string shifted = zip_of({{"x.npy", npy}});
  shifted[shifted.size() - 6] = static_cast<char>(shifted[shifted.size() - 6] + 1);  // directory offset + 1
  write_bytes(scratch("crafted.npz"), shifted);
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("crafted.npz")), contains("does not end where the end record starts"),
                       tx::io_error);
  std::string recount = zip_of({{"x.npy", npy}});
  recount[recount.size() - 12] = 2;  // total entries: 2, in a one-entry directory
  write_bytes(scratch("crafted.npz"), recount);
  CHECK_THROWS_WITH_AS(tx::load_npz(scratch("crafted.npz")), contains("corrupt zip"), tx::io_error);
  // A .npy image that is itself bad reports the entry: bytes after its data.
  const tx::npz_archive junk = load_error({{"x.npy", npy + "junk"}});
  CHECK_THROWS_WITH_AS((junk.get<float, 1>("x")),
                       contains("entry 'x.npy': shape (3,) of <f4 needs 12 data bytes"), tx::io_error);
}

TEST_CASE("npz: docs/install.md example") {
  const fs::path cwd = fs::current_path();
  fs::current_path(scratch(""));
  const tx::tensor<float, 2> w1({2, 3}, {1, 2, 3, 4, 5, 6});
  const tx::tensor<float, 1> b1({3}, {0.5f, -0.5f, 0});
  const tx::tensor<std::int64_t, 0> step({}, {100});
  tx::save_npz("ckpt.npz", {{"w1", w1}, {"b1", b1}, {"step", step}});   // np.load("ckpt.npz")["w1"] is w1
  tx::npz_archive a = tx::load_npz("ckpt.npz");                        // also reads np.savez's files
  auto w = a.get<float, 2>("w1");                                       // dtype and rank must match
  std::vector<std::string> seen;
  for (const std::string& name : a.names()) { seen.push_back(name); }  // "w1", "b1", "step": np.load's .files
  fs::current_path(cwd);
  CHECK(seen == std::vector<std::string>{"w1", "b1", "step"});
  CHECK(w.shape() == w1.shape());
  CHECK(std::memcmp(w.data(), w1.data(), 6 * sizeof(float)) == 0);
}

#if defined(TEXPR_WITH_ZLIB)
namespace {

// Raw deflate (no zlib header), as zip method 8 stores it; level 9 and a 15-bit window, as Python's zipfile.
std::string deflate_of(std::string_view image) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(image.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(image.data()));
  z.avail_in = static_cast<uInt>(image.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

raw_entry deflated_entry(const std::string& name, const std::string& image) {
  raw_entry e{name, deflate_of(image)};
  e.method = 8;
  e.image = image;
  return e;
}

} // namespace

TEST_CASE("npz: np.savez_compressed archives are inflated through zlib, and bad deflate data is an io_error") {
  // The committed fixture (np.savez_compressed of every dtype, written by fixtures/numpy_npz.py fixture): the same
  // values as the stored archives, so it is read without NumPy too.
  const tx::npz_archive fixed = tx::load_npz(fixture("compressed.npz"));
  check_arrays(fixed);
  for (const tx::npz_archive::entry& e : fixed.entries()) {
    CAPTURE(e.name);
    CHECK(e.deflated);
    CHECK(e.stored_size < e.size);
  }

  const auto archive = [](const std::vector<raw_entry>& entries) {
    write_bytes(scratch("deflated.npz"), zip_of(entries));
    return tx::load_npz(scratch("deflated.npz"));
  };
  // A large, compressible entry next to a stored one: values exact, sizes as stated.
  const auto big = filled<float, 1>({20000});
  tx::save_npy(scratch("big.npy"), big);
  const std::string image = bytes_of(scratch("big.npy")), small = npy_bytes_of(filled<float, 1>({3}));
  const tx::npz_archive a = archive({deflated_entry("big.npy", image), {"s.npy", small}});
  CHECK(a.entries()[0].deflated);
  CHECK(!a.entries()[1].deflated);
  CHECK(a.entries()[0].size == image.size());
  check_values(a.get<float, 1>("big"), {20000});
  check_values(a.get<float, 1>("s"), {3});

  // The stated size wrong either way, the stream cut or padded, the CRC of the image wrong, a claimed ratio past
  // deflate's best: each names the file and the entry.
  raw_entry longer = deflated_entry("x.npy", image);
  longer.claimed = image.size() + 1;
  CHECK_THROWS_WITH_AS((archive({longer}).get<float, 1>("x")),
                       contains("entry 'x.npy': corrupt deflate data: it inflates to " + std::to_string(image.size()) +
                                " bytes, the directory says " + std::to_string(image.size() + 1)),
                       tx::io_error);
  raw_entry shorter = deflated_entry("x.npy", image);
  shorter.claimed = image.size() - 1;
  CHECK_THROWS_WITH_AS((archive({shorter}).get<float, 1>("x")), contains("inflates to more than the"), tx::io_error);
  raw_entry cut = deflated_entry("x.npy", image);
  cut.data.resize(cut.data.size() - 5);
  CHECK_THROWS_WITH_AS((archive({cut}).get<float, 1>("x")), contains("entry 'x.npy': truncated deflate data"),
                       tx::io_error);
  raw_entry padded = deflated_entry("x.npy", image);
  padded.data += "junk";
  CHECK_THROWS_WITH_AS((archive({padded}).get<float, 1>("x")), contains("the stream ends 4 bytes before the entry"),
                       tx::io_error);
  raw_entry bad_crc = deflated_entry("x.npy", image);
  bad_crc.crc_xor = 0x100;
  CHECK_THROWS_WITH_AS((archive({bad_crc}).get<float, 1>("x")), contains("entry 'x.npy': CRC-32 mismatch"),
                       tx::io_error);
  raw_entry bomb = deflated_entry("x.npy", small);
  bomb.claimed = 0xFFFFFFF0u;  // 4 GiB from a few dozen bytes: rejected before anything is allocated
  CHECK_THROWS_WITH_AS(archive({bomb}), contains("entry 'x.npy' claims 4294967280 bytes from"), tx::io_error);

  // Every truncation and every single-byte corruption of the fixture: the same values or an io_error, never another
  // exception, a crash or a sanitizer report.
  const std::string whole = bytes_of(fixture("compressed.npz"));
  const auto read_all = [] {
    const tx::npz_archive b = tx::load_npz(scratch("deflated.npz"));
    check_arrays(b);
  };
  for (std::size_t n = 0; n < whole.size(); ++n) {
    CAPTURE(n);
    write_bytes(scratch("deflated.npz"), whole.substr(0, n));
    CHECK_THROWS_AS(read_all(), tx::io_error);
  }
  for (std::size_t n = 0; n < whole.size(); ++n) {
    CAPTURE(n);
    std::string bad = whole;
    bad[n] = static_cast<char>(bad[n] ^ 0x5A);
    write_bytes(scratch("deflated.npz"), bad);
    try {
      read_all();
    } catch (const tx::io_error&) {
    }
  }
}
#endif

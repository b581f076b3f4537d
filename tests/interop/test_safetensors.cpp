// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// safetensors files: round trips of every dtype and rank (tensors, views, expressions, metadata), the Python
// safetensors package's own file (committed fixture always; regenerated, and reading texpr's file, when the package
// imports), a 3 GiB file mapped without reading it, and a clear error for every malformed header.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <texpr/interop/npz.hpp>
#include <texpr/interop/safetensors.hpp>
#include <texpr/texpr.hpp>

#include "file_helpers.hpp"

namespace tx = texpr;
namespace fs = std::filesystem;

namespace {

using texpr_test::bytes_of;
using texpr_test::contains;
using texpr_test::fixture;
using texpr_test::write_bytes;

fs::path scratch(const std::string& name) { return texpr_test::scratch_in("safetensors_scratch", name); }

// safetensors_package.py's bytes_of(): the little-endian bytes of element k of n (row-major), per dtype.
template <class T>
void element_bytes(tx::index_t k, tx::index_t n, unsigned char* out) {
  const tx::index_t centred = k - n / 2;
  T v{};
  if constexpr (std::is_same_v<T, bool>) {
    v = k % 3 == 1;
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    v = static_cast<std::int8_t>((k * 37) % 256 - 128);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    v = static_cast<std::int32_t>(centred * 40000003);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    v = centred * 300000000000000007;
  } else if constexpr (tx::is_float8_v<T>) {
    auto b = static_cast<unsigned>((k * 29 + 3) % 256);
    const bool nan = std::is_same_v<T, tx::float8_e4m3> ? (b & 0x7F) == 0x7F : (b & 0x7F) > 0x7C;
    if (nan) b ^= 0x04;
    *out = static_cast<unsigned char>(b);
    return;
  } else if constexpr (std::is_same_v<T, tx::bfloat16> || std::is_same_v<T, tx::half>) {
    v = T(static_cast<float>(centred) * 0.375f);  // exact in both
  } else {
    v = static_cast<T>(static_cast<double>(centred) * 0.375);
  }
  std::memcpy(out, &v, sizeof(T));  // the test hosts are little-endian, as the format is
}

template <class T, std::size_t R>
tx::tensor<T, R> filled(const tx::shape_t<R>& shape) {
  tx::tensor<T, R> t(shape);
  for (tx::index_t k = 0; k != t.size(); ++k)
    element_bytes<T>(k, t.size(), reinterpret_cast<unsigned char*>(t.data() + k));
  return t;
}

template <class T, std::size_t R>
void check_filled(const tx::tensor<T, R>& t, const tx::shape_t<R>& shape) {
  REQUIRE(t.shape() == shape);
  for (tx::index_t k = 0; k != t.size(); ++k) {
    unsigned char want[sizeof(T)];
    element_bytes<T>(k, t.size(), want);
    CAPTURE(k);
    CHECK(std::memcmp(t.data() + k, want, sizeof(T)) == 0);
  }
}

// The ARRAYS of safetensors_package.py, as save_safetensors entries (call with a function taking each tensor).
void for_each_array(const std::function<void(const std::string&, std::string_view,
                                             const std::function<void(const tx::safetensors_file&)>&)>& visit,
                    std::vector<tx::safetensors_entry>* entries) {
  const auto one = [&]<class T, std::size_t R>(const std::string& name, tx::shape_t<R> shape) {
    if (entries) entries->emplace_back(name, filled<T, R>(shape));
    visit(name, tx::safetensors_dtype_v<T>, [name, shape](const tx::safetensors_file& f) {
      check_filled(f.get<T, R>(name), shape);
      const tx::view<const T, R, tx::host> v = f.mapped<T, R>(name);
      CHECK(v.shape() == shape);
      if (v.size() != 0) CHECK(std::memcmp(v.data(), f.get<T, R>(name).data(), sizeof(T) * std::size_t(v.size())) == 0);
    });
  };
  one.template operator()<float, 2>("w", {3, 4});
  one.template operator()<double, 1>("b", {4});
  one.template operator()<tx::half, 1>("h", {5});
  one.template operator()<tx::bfloat16, 2>("bf", {2, 3});
  one.template operator()<tx::float8_e4m3, 2>("e4", {16, 16});
  one.template operator()<tx::float8_e5m2, 2>("e5", {16, 16});
  one.template operator()<std::int64_t, 0>("step", {});
  one.template operator()<std::int32_t, 4>("i4", {2, 1, 3, 2});
  one.template operator()<std::int8_t, 2>("q", {4, 64});
  one.template operator()<bool, 2>("mask", {2, 3});
  one.template operator()<float, 2>("empty", {0, 3});
  one.template operator()<float, 1>("layer 1/w\xc3\xbc.x", {2});
}

const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"texpr", "fixture \xc3\xbc"}};

void save_arrays(const fs::path& p) {
  std::vector<tx::safetensors_entry> entries;
  for_each_array([](auto&&...) {}, &entries);
  tx::save_safetensors(p, entries, metadata);
}

// Checks a file holding the ARRAYS: names, dtypes, shapes, values (get and mapped), metadata, alignment.
void check_arrays(const fs::path& p) {
  const tx::safetensors_file f = tx::load_safetensors(p);
  CHECK(f.metadata() == metadata);
  std::size_t count = 0;
  for_each_array(
      [&](const std::string& name, std::string_view dtype,
          const std::function<void(const tx::safetensors_file&)>& check) {
        CAPTURE(name);
        REQUIRE(f.contains(name));
        CHECK(f.info(name).dtype == dtype);
        check(f);
        ++count;
      },
      nullptr);
  CHECK(f.entries().size() == count);
}

// A file image: the 8-byte length, the header, the data.
std::string image(std::string_view header, std::string_view data = {}, std::uint64_t length = ~std::uint64_t{0}) {
  if (length == ~std::uint64_t{0}) length = header.size();
  std::string out;
  for (int b = 0; b != 8; ++b) out += static_cast<char>((length >> (8 * b)) & 0xFF);
  return out.append(header).append(data);
}

std::string entry(const std::string& name, const std::string& dtype, const std::string& shape, std::uint64_t begin,
                  std::uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
         std::to_string(begin) + "," + std::to_string(end) + "]}";
}

}  // namespace

TEST_CASE("safetensors: every dtype and rank round trip, with metadata, aligned for mapping") {
  const fs::path p = scratch("arrays.safetensors");
  save_arrays(p);
  check_arrays(p);
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));

  const std::string bytes = bytes_of(p);
  std::uint64_t n = 0;
  for (int b = 0; b != 8; ++b) n |= std::uint64_t{static_cast<unsigned char>(bytes[std::size_t(b)])} << (8 * b);
  CHECK(n % 8 == 0);  // the data section starts 8-byte aligned
  const tx::safetensors_file f = tx::load_safetensors(p);
  std::size_t previous_item = 8;
  for (const tx::safetensors_info& e : f.entries()) {
    CAPTURE(e.name);
    const std::size_t item = tx::detail::safetensors_dtype_bits(e.dtype) / 8;
    CHECK(e.file_offset % item == 0);
    CHECK(item <= previous_item);  // widest first
    previous_item = item;
  }

  // Views (any strides) and expressions are entries too; a scalar and an empty file work.
  const tx::tensor<double, 2> m = filled<double, 2>({3, 5});
  const fs::path q = scratch("views.safetensors");
  const tx::view<const double, 2> column(m.data() + 2, {3, 1}, {5, 1});  // column 2, strided
  tx::save_safetensors(q, {{"t", tx::transpose(m)}, {"col", column}, {"sum", m + m}});
  const tx::safetensors_file g = tx::load_safetensors(q);
  CHECK(g.metadata().empty());
  const auto t = g.get<double, 2>("t");
  const auto s = g.get<double, 2>("sum");
  REQUIRE(t.shape() == tx::shape_t<2>{5, 3});
  for (tx::index_t i = 0; i != 3; ++i)
    for (tx::index_t j = 0; j != 5; ++j) {
      CHECK(t(j, i) == m(i, j));
      CHECK(s(i, j) == 2 * m(i, j));
    }
  const auto col = g.get<double, 2>("col");
  REQUIRE(col.shape() == tx::shape_t<2>{3, 1});
  for (tx::index_t i = 0; i != 3; ++i) CHECK(col(i, 0) == m(i, 2));
  tx::save_safetensors(scratch("none.safetensors"), std::vector<tx::safetensors_entry>{});
  CHECK(tx::load_safetensors(scratch("none.safetensors")).entries().empty());
}

TEST_CASE("safetensors: the Python package's file, bit for bit (committed fixture)") {
  const tx::safetensors_file f = tx::load_safetensors(fixture("package.safetensors"));
  check_arrays(fixture("package.safetensors"));
  // Independently of the formula: each entry's bytes and values against what the package's script stored with NumPy.
  const tx::npz_archive expected = tx::load_npz(fixture("package_expected.npz"));
  for (const tx::safetensors_info& e : f.entries()) {
    CAPTURE(e.name);
    const auto raw = expected.get<std::int32_t, 1>(e.name + ".bytes");
    REQUIRE(static_cast<std::uint64_t>(raw.size()) == e.end - e.begin);
    const std::string file = bytes_of(fixture("package.safetensors"));
    for (tx::index_t i = 0; i != raw.size(); ++i)
      CHECK(static_cast<unsigned char>(file[std::size_t(e.file_offset) + std::size_t(i)]) == raw.data()[i]);
  }
  // Values decoded by texpr against the script's own decoding (bfloat16 and FP8 to float32).
  const auto decoded = [&]<class T, std::size_t R>(const std::string& name) {
    const auto got = f.get<T, R>(name);
    const auto want = expected.get<float, R>(name);
    REQUIRE(got.shape() == want.shape());
    for (tx::index_t i = 0; i != got.size(); ++i) CHECK(static_cast<float>(got.data()[i]) == want.data()[i]);
  };
  decoded.template operator()<tx::bfloat16, 2>("bf");
  decoded.template operator()<tx::float8_e4m3, 2>("e4");
  decoded.template operator()<tx::float8_e5m2, 2>("e5");
  const auto w = f.get<float, 2>("w");
  const auto w_want = expected.get<float, 2>("w");
  for (tx::index_t i = 0; i != w.size(); ++i) CHECK(w.data()[i] == w_want.data()[i]);
  const auto q = f.get<std::int8_t, 2>("q");
  const auto q_want = expected.get<std::int32_t, 2>("q");
  for (tx::index_t i = 0; i != q.size(); ++i) CHECK(q.data()[i] == q_want.data()[i]);
}

TEST_CASE("safetensors: the Python package writes and reads (when it imports)") {
  const char* configured = std::getenv("TEXPR_SAFETENSORS_PYTHON");
  if (!(configured && *configured)) {
    MESSAGE("the Python safetensors package was not found at configure time: the committed fixture stands in");
    return;
  }
  const fs::path dir = fs::current_path() / "safetensors_package";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string script =
      "\"" + std::string(configured) + "\" \"" + fixture("safetensors_package.py").string() + "\" ";
  REQUIRE(std::system((script + "write \"" + dir.string() + "\"").c_str()) == 0);
  check_arrays(dir / "package.safetensors");
  save_arrays(dir / "tx.safetensors");
  CHECK(std::system((script + "check \"" + dir.string() + "\"").c_str()) == 0);
}

namespace {

// Resident memory of this process in bytes (Linux), or 0 where /proc is missing.
std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * 4096;
}

}  // namespace

TEST_CASE("safetensors: a 3 GiB file is mapped, not read: views reach past 2^31 bytes") {
  constexpr std::uint64_t big = std::uint64_t{3} << 30;
  const fs::path p = scratch("big.safetensors");
  std::string header = "{" + entry("big", "I8", "[" + std::to_string(big) + "]", 0, big) + "," +
                       entry("tail", "F32", "[2]", big, big + 8) + "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    const std::string head = image(header);
    out.write(head.data(), static_cast<std::streamsize>(head.size()));
    REQUIRE(out);
  }
  const std::uint64_t data = 8 + header.size();
  std::error_code ec;
  fs::resize_file(p, data + big + 8, ec);  // sparse: the filesystem stores only the bytes written below
  if (ec) {
    MESSAGE("cannot make a 3 GiB sparse file here (" << ec.message() << "): skipped");
    return;
  }
  {
    std::fstream io(p, std::ios::binary | std::ios::in | std::ios::out);
    const auto poke = [&](std::uint64_t at, const void* bytes, std::size_t n) {
      io.seekp(static_cast<std::streamoff>(data + at));
      io.write(static_cast<const char*>(bytes), static_cast<std::streamsize>(n));
    };
    const std::int8_t a = 5, b = -3, c = 9;
    const float tail[2] = {1.5f, -2.25f};
    poke(0, &a, 1);
    poke((std::uint64_t{1} << 31) + 7, &b, 1);
    poke(big - 1, &c, 1);
    poke(big, tail, sizeof tail);
    REQUIRE(io);
  }
  const std::uint64_t before = resident_bytes();
  {
    const tx::safetensors_file f = tx::load_safetensors(p);
    const tx::view<const std::int8_t, 1, tx::host> v = f.mapped<std::int8_t, 1>("big");
    REQUIRE(v.size() == static_cast<tx::index_t>(big));
    CHECK(v(0) == 5);
    CHECK(v((tx::index_t{1} << 31) + 7) == -3);
    CHECK(v(static_cast<tx::index_t>(big) - 1) == 9);
    CHECK(v(12345) == 0);
    const auto t = f.get<float, 1>("tail");
    CHECK(t(0) == 1.5f);
    CHECK(t(1) == -2.25f);
    if (before != 0) CHECK(resident_bytes() - before < (std::uint64_t{64} << 20));  // nothing near 3 GiB was read
  }
  fs::remove(p);
}

TEST_CASE("safetensors: malformed and hostile files get an error naming the file and the entry") {
  const auto rejects = [](const std::string& name, const std::string& bytes, const std::string& what) {
    const fs::path p = scratch(name + ".safetensors");
    write_bytes(p, bytes);
    CAPTURE(name);
    try {
      (void)tx::load_safetensors(p);
      FAIL("no error");
    } catch (const tx::io_error& e) {
      const std::string message = e.what();
      CHECK(message.starts_with(p.string() + ": "));
      CHECK_MESSAGE(message.find(what) != std::string::npos, message);
    }
  };
  const std::string f32x2 = entry("a", "F32", "[2]", 0, 8);
  const std::string eight(8, '\x01');
  rejects("short", std::string("\x10\x00\x00", 3), "is 3 bytes long, shorter than the 8-byte header length");
  rejects("past_end", image("{}", "", 1000), "its header length is 1000 bytes, but only 2 bytes follow it");
  rejects("huge_header", image("{}", "", 100'000'001), "over the format's limit of 100000000");
  rejects("not_object", image("[1]"), "its header does not start with '{'");
  rejects("bad_json", image("{\"a\":"), "the header is not valid JSON");
  rejects("not_utf8", image("{\"\xff\xfe\":{}}"), "ill-formed UTF-8 byte");
  rejects("duplicate", image("{" + f32x2 + "," + f32x2 + "}", eight), "the entry \"a\" appears twice in the header");
  rejects("duplicate_field", image("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}"),
          "entry \"a\": the key \"dtype\" appears twice");
  rejects("unknown_dtype", image("{" + entry("a", "Q7", "[2]", 0, 8) + "}", eight),
          "entry \"a\": unknown dtype \"Q7\"");
  rejects("negative_extent", image("{" + entry("a", "F32", "[-2]", 0, 8) + "}", eight),
          "entry \"a\": \"shape\" holds the negative number -2");
  rejects("float_extent", image("{" + entry("a", "F32", "[2.5]", 0, 8) + "}", eight),
          "entry \"a\": \"shape\" holds the number 2.5");
  rejects("shape_not_array", image("{" + entry("a", "F32", "2", 0, 8) + "}", eight),
          "entry \"a\": \"shape\" is the number 2, not an array of extents");
  rejects("three_offsets", image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4,8]}}", eight),
          "entry \"a\": \"data_offsets\" holds 3 numbers, not 2");
  rejects("no_dtype", image("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", eight), "entry \"a\": no \"dtype\"");
  rejects("no_offsets", image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", eight), "entry \"a\": no \"data_offsets\"");
  rejects("entry_not_object", image("{\"a\":[1,2]}"), "entry \"a\" is an array, not an object");
  rejects("backwards", image("{" + entry("a", "F32", "[2]", 8, 0) + "}", eight),
          "entry \"a\": data_offsets [8, 0] run backwards");
  rejects("past_data", image("{" + entry("a", "F32", "[100]", 0, 400) + "}", eight),
          "entry \"a\": data_offsets [0, 400] run past the end of the data section (8 bytes)");
  rejects("count_mismatch", image("{" + entry("a", "F32", "[3]", 0, 8) + "}", eight),
          "entry \"a\": shape [3] of F32 is 12 bytes, but data_offsets [0, 8] span 8");
  rejects("overflow", image("{" + entry("a", "F32", "[4294967296,4294967296,16]", 0, 8) + "}", eight),
          "entry \"a\": shape [4294967296, 4294967296, 16] holds more elements than fit in 64 bits");
  rejects(
      "overlap",
      image("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", std::string(12, '\0')),
      "entry \"b\" (bytes [4, 12)) overlaps entry \"a\" (bytes [0, 8))");
  rejects(
      "gap",
      image("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 8, 12) + "}", std::string(12, '\0')),
      "bytes [4, 8) of the data section belong to no entry (before entry \"b\")");
  rejects("trailing", image("{" + entry("a", "F32", "[1]", 0, 4) + "}", eight),
          "the data section is 8 bytes but its entries cover 4");
  rejects("metadata_number", image("{\"__metadata__\":{\"k\":1}}"),
          "\"__metadata__\" value \"k\" is the number 1, not a string");
  rejects("metadata_array", image("{\"__metadata__\":[\"k\"]}"),
          "\"__metadata__\" is an array, not an object of strings");
  std::string deep = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":";
  deep += std::string(100, '[') + std::string(100, ']') + "}}";
  rejects("deep", image(deep, eight), "the header nests deeper than 64 levels");
  rejects("empty_file", "", "is 0 bytes long");

  // Unknown fields are ignored (as the reference does); sub-byte and unsigned dtypes are checked but not read.
  const fs::path ok = scratch("extra_fields.safetensors");
  write_bytes(ok, image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":{\"y\":[1,{\"z\":null}]}"
                        ",\"w\":true}," +
                            entry("u", "U16", "[2]", 8, 12) + "," + entry("f4", "F4", "[3,2]", 12, 15) + "}",
                        eight + "\x01\x02\x03\x04" + "\x05\x06\x07"));
  const tx::safetensors_file f = tx::load_safetensors(ok);
  CHECK(f.names() == std::vector<std::string>{"a", "u", "f4"});
  CHECK(f.get<float, 1>("a").size() == 2);
  CHECK_THROWS_WITH_AS((f.get<std::int32_t, 1>("u")),
                       contains(ok.string() + ": entry \"u\" holds U16 (U16), but get asked for I32 (int32)"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS((f.get<float, 2>("a")),
                       contains(ok.string() + ": entry \"a\" has rank 1 (shape [2]), but get asked for rank 2"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS((f.get<float, 1>("b")), contains(ok.string() + ": no entry \"b\" (the file has: a, u, f4)"),
                       tx::io_error);

  // A BOOL byte that is not 0 or 1 would be undefined behaviour as a C++ bool.
  const fs::path bad_bool = scratch("bad_bool.safetensors");
  write_bytes(bad_bool, image("{" + entry("m", "BOOL", "[3]", 0, 3) + "}", std::string("\x01\x00\x02", 3)));
  CHECK_THROWS_WITH_AS((tx::load_safetensors(bad_bool).get<bool, 1>("m")),
                       contains("entry \"m\": BOOL element 2 is the byte 2, not 0 or 1"), tx::io_error);

  // A misaligned entry (a writer that did not align) is copied by get and refused by mapped.
  const fs::path odd = scratch("misaligned.safetensors");
  std::string odd_header = "{" + entry("c", "I8", "[1]", 0, 1) + "," + entry("x", "F32", "[1]", 1, 5) + "}";
  odd_header.append((8 - odd_header.size() % 8) % 8, ' ');
  const float value = -7.5f;
  std::string odd_data = "\x03";
  odd_data.append(reinterpret_cast<const char*>(&value), 4);
  write_bytes(odd, image(odd_header, odd_data));
  const tx::safetensors_file o = tx::load_safetensors(odd);
  CHECK(o.get<float, 1>("x")(0) == -7.5f);
  CHECK_THROWS_WITH_AS((o.mapped<float, 1>("x")),
                       contains("entry \"x\" starts at byte " + std::to_string(8 + odd_header.size() + 1) +
                                " of the file, not a multiple of 4"),
                       tx::io_error);
}

TEST_CASE("safetensors: a failing save names the problem and leaves the old file intact") {
  const fs::path p = scratch("keep.safetensors");
  const tx::tensor<float, 1> a = filled<float, 1>({3});
  tx::save_safetensors(p, {{"a", a}});
  const std::string before = bytes_of(p);
  CHECK_THROWS_WITH_AS(tx::save_safetensors(p, {{"a", a}, {"a", a}}),
                       contains(p.string() + ": the name \"a\" is given twice"), tx::io_error);
  CHECK_THROWS_WITH_AS(tx::save_safetensors(p, {{"", a}}), contains("an entry has an empty name"), tx::io_error);
  CHECK_THROWS_WITH_AS(tx::save_safetensors(p, {{"__metadata__", a}}), contains("is the format's metadata key"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS(tx::save_safetensors(p, {{"bad\xff", a}}), contains("is not valid UTF-8"), tx::io_error);
  CHECK_THROWS_WITH_AS(tx::save_safetensors(p, {{"a", a}}, {{"k", "v\xfe"}}), contains("is not valid UTF-8"),
                       tx::io_error);
  CHECK(bytes_of(p) == before);
  CHECK_FALSE(fs::exists(p.string() + ".tmp"));
  const fs::path nowhere = scratch("no/such/dir/x.safetensors");
  CHECK_THROWS_WITH_AS(tx::save_safetensors(nowhere, {{"a", a}}), contains(nowhere.string() + ": cannot open"),
                       tx::io_error);
  CHECK_THROWS_WITH_AS(tx::load_safetensors(nowhere), contains(nowhere.string() + ": cannot open for reading"),
                       tx::io_error);
  check_filled(tx::load_safetensors(p).get<float, 1>("a"), {3});
}

TEST_CASE("safetensors: docs/install.md example") {
  const fs::path dir = scratch("docs");
  fs::create_directories(dir);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  const tx::tensor<float, 2> w1 = filled<float, 2>({3, 4});
  const tx::tensor<float, 1> b1 = filled<float, 1>({4});
  std::vector<std::string> seen;
  // docs/install.md, "Interop: safetensors files", quotes these lines.
  // clang-format off
  tx::save_safetensors("model.safetensors", {{"w1", w1}, {"b1", b1}}, {{"format", "pt"}});  // __metadata__ too
  tx::safetensors_file f = tx::load_safetensors("model.safetensors");  // maps the file; checks the header
  tx::tensor<float, 2> w = f.get<float, 2>("w1");                      // a copy; dtype and rank must match
  tx::view<const float, 1, tx::host> b = f.mapped<float, 1>("b1");    // no copy: a view of the mapped file
  for (const std::string& name : f.names()) { seen.push_back(name); }  // in data order
  // clang-format on
  fs::current_path(cwd);
  check_filled(w, {3, 4});
  for (tx::index_t i = 0; i != 4; ++i) CHECK(b(i) == b1(i));
  CHECK(seen == std::vector<std::string>{"b1", "w1"});  // same width: by name
  CHECK(f.metadata() == std::map<std::string, std::string>{{"format", "pt"}});
}

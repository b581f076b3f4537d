// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// .npy files: round trips of every dtype and rank, strided views and expressions, NumPy's own files (the committed
// fixtures always; fresh ones and NumPy reading texpr's files when python3 imports numpy), and every error.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include <texpr/interop/npy.hpp>
#include <texpr/texpr.hpp>

namespace tx = texpr;
namespace fs = std::filesystem;

namespace {

static_assert(!tx::has_npy_dtype_v<tx::bfloat16>, "bfloat16 has no NumPy dtype");
static_assert(tx::npy_descr_v<tx::half> == "<f2" && tx::npy_descr_v<bool> == "|b1");
static_assert(std::is_base_of_v<std::runtime_error, tx::io_error>);

// The committed fixtures: CTest points TEXPR_FIXTURES at them; run by hand, the source tree's copy is used.
fs::path fixture(const std::string& name) {
  const char* dir = std::getenv("TEXPR_FIXTURES");
  return (dir && *dir ? fs::path(dir) : fs::path(__FILE__).parent_path() / "fixtures") / name;
}

// Files the tests write go under the working directory (the build directory under CTest).
fs::path scratch(const std::string& name) {
  static const fs::path dir = [] {
    const fs::path d = fs::current_path() / "npy_scratch";
    fs::create_directories(d);
    return d;
  }();
  return dir / name;
}

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// doctest's matcher takes its own string type.
doctest::Contains contains(const std::string& text) { return doctest::Contains(doctest::String(text.c_str())); }

void write_bytes(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

// A .npy file with the given header dict, padded as NumPy pads it (or to `align` bytes, as old writers did).
std::string raw_npy(std::string dict, std::string_view data = "", int major = 1, std::size_t align = 64) {
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  while ((8 + length_bytes + dict.size() + 1) % align != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  for (std::size_t b = 0; b != length_bytes; ++b) out += static_cast<char>((dict.size() >> (8 * b)) & 0xFF);
  return out + dict + std::string(data);
}

std::string float_bytes(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char*>(&v), sizeof v);
  return out;
}

// "3x4", "7", "0x3", "scalar": how numpy_round_trip.py names its files.
template <std::size_t R>
std::string dims(const tx::shape_t<R>& shape) {
  std::string out;
  for (std::size_t d = 0; d != R; ++d) out += (d ? "x" : "") + std::to_string(shape[d]);
  return R == 0 ? "scalar" : out;
}

// Element k of n (row-major), the formula numpy_round_trip.py's values() computes: signs on both sides, every
// element distinct, exact in every dtype.
template <class T>
T formula(tx::index_t k, tx::index_t n) {
  const tx::index_t centred = k - n / 2;
  if constexpr (std::is_same_v<T, bool>)
    return k % 3 == 1;
  else if constexpr (std::is_same_v<T, std::int32_t>)
    return static_cast<std::int32_t>(centred * 40000003);
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return centred * 300000000000000007;
  else if constexpr (tx::is_float16_v<T>)
    return T(static_cast<float>(centred) * 0.375f);
  else
    return static_cast<T>(static_cast<double>(centred) * 0.375);
}

// The formula with the dtype's extremes at both ends: round trips must keep every bit of the range.
template <class T>
T sample(tx::index_t k, tx::index_t n) {
  if constexpr (!std::is_same_v<T, bool>) {
    if (n >= 3 && (k == 0 || k == n - 1)) {
      if constexpr (tx::is_float16_v<T>)
        return T(k == 0 ? -65504.0f : 65504.0f);  // half's lowest and max
      else
        return k == 0 ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    }
  }
  return formula<T>(k, n);
}

template <class T, std::size_t R, class F>
tx::tensor<T, R> filled(const tx::shape_t<R>& shape, F f) {
  tx::tensor<T, R> t(shape);
  for (tx::index_t k = 0; k != t.size(); ++k) t.data()[k] = f(k, t.size());
  return t;
}

template <class T>
double as_double(T v) {
  if constexpr (tx::is_float16_v<T>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

template <class T>
std::string bits(const T& v) {
  if constexpr (std::is_same_v<T, bool>)
    return v ? "1" : "0";
  else
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
}

// Same shape and the same bits in every element (NaN payloads and -0 included); reports the first difference.
template <class T, std::size_t R, class F>
void check_elements(const tx::tensor<T, R>& got, const tx::shape_t<R>& shape, F want) {
  REQUIRE(tx::to_string(got.shape()) == tx::to_string(shape));
  tx::index_t mismatches = 0, first = -1;
  for (tx::index_t k = 0; k != got.size(); ++k)
    if (bits(got.data()[k]) != bits(static_cast<T>(want(k)))) {
      if (first < 0) first = k;
      ++mismatches;
    }
  INFO("first mismatch at row-major element " << first << ": got " << (first >= 0 ? as_double(got.data()[first]) : 0.0)
                                              << ", expected "
                                              << (first >= 0 ? as_double(static_cast<T>(want(first))) : 0.0));
  CHECK(mismatches == 0);
}

template <class T, std::size_t R>
void check_same(const tx::tensor<T, R>& got, const tx::tensor<T, R>& want) {
  check_elements(got, want.shape(), [&](tx::index_t k) { return want.data()[k]; });
}

// Calls f with one shape of each rank 0-4 and the empty shapes.
template <class F>
void for_each_shape(F f) {
  f(tx::shape_t<0>{});
  f(tx::shape_t<1>{7});
  f(tx::shape_t<1>{0});
  f(tx::shape_t<2>{3, 4});
  f(tx::shape_t<2>{0, 3});
  f(tx::shape_t<2>{3, 0});
  f(tx::shape_t<3>{2, 3, 4});
  f(tx::shape_t<4>{2, 1, 3, 2});
  f(tx::shape_t<4>{2, 0, 3, 1});
}

} // namespace

TEST_CASE_TEMPLATE("npy: every dtype round trips through a file, ranks 0-4 and empty shapes", T, bool, std::int32_t,
                   std::int64_t, tx::half, float, double) {
  for_each_shape([](auto shape) {
    constexpr std::size_t R = std::tuple_size_v<decltype(shape)>;
    CAPTURE(tx::to_string(shape));
    const auto x = filled<T>(shape, sample<T>);
    if (x.size() >= 2) {  // the data must exercise the dtype: distinct values, both signs where it has them
      double lo = as_double(x.data()[0]), hi = lo;
      for (tx::index_t k = 0; k != x.size(); ++k) {
        lo = std::min(lo, as_double(x.data()[k]));
        hi = std::max(hi, as_double(x.data()[k]));
      }
      CHECK(lo != hi);
      if constexpr (!std::is_same_v<T, bool>) CHECK(lo < 0);
    }
    const fs::path p = scratch("rt_" + std::string(tx::dtype_name_v<T>) + "_" + dims(shape) + ".npy");
    tx::save_npy(p, x);
    CHECK_FALSE(fs::exists(fs::path(p) += ".tmp"));
    // The data start at a multiple of 64 bytes, after a 1.0 header ending in '\n'.
    const std::string file = bytes_of(p);
    const std::size_t data_bytes = sizeof(T) * static_cast<std::size_t>(x.size());
    REQUIRE(file.size() >= 64 + data_bytes);
    const std::size_t data_offset = file.size() - data_bytes;
    CHECK(data_offset % 64 == 0);
    CHECK(file.compare(0, 8, std::string("\x93NUMPY\x01\x00", 8)) == 0);
    CHECK(file[data_offset - 1] == '\n');
    check_same(tx::load_npy<T, R>(p), x);
  });
}

TEST_CASE_TEMPLATE("npy: special floating values keep their bits", T, tx::half, float, double) {
  using L = std::numeric_limits<float>;
  const float specials[] = {L::quiet_NaN(), -L::quiet_NaN(), L::infinity(), -L::infinity(), -0.0f, 0.0f, 1e-40f, -1.0f};
  tx::tensor<T, 1> x({8});
  for (tx::index_t k = 0; k != 8; ++k) x(k) = T(specials[k]);
  if constexpr (std::is_same_v<T, double>) x(6) = std::numeric_limits<double>::denorm_min();
  const fs::path p = scratch("specials_" + std::string(tx::dtype_name_v<T>) + ".npy");
  tx::save_npy(p, x);
  check_same(tx::load_npy<T, 1>(p), x);
}

TEST_CASE("npy: the committed NumPy fixtures load (C and Fortran order, formats 1.0-3.0, big-endian)") {
  SUBCASE("float32 (2, 3), C order") {
    const auto t = tx::load_npy<float, 2>(fixture("float32_2x3.npy"));
    const float want[] = {-1.5f, 0.0f, 1.5f, 2.25f, -3.0f, 1024.5f};
    check_elements(t, {2, 3}, [&](tx::index_t k) { return want[k]; });
    CHECK(t(1, 2) == 1024.5f);
  }
  SUBCASE("float64 (3, 2), Fortran order: element (i, j) lands at row-major (i, j)") {
    const auto t = tx::load_npy<double, 2>(fixture("float64_3x2_fortran.npy"));
    REQUIRE(tx::to_string(t.shape()) == "(3, 2)");
    const double want[3][2] = {{-10.0, -9.75}, {0.0, 0.25}, {10.0, 10.25}};
    for (int i = 0; i != 3; ++i)
      for (int j = 0; j != 2; ++j) CHECK(t(i, j) == want[i][j]);
  }
  SUBCASE("int64 (4,)") {
    const auto t = tx::load_npy<std::int64_t, 1>(fixture("int64_4.npy"));
    const std::int64_t want[] = {std::numeric_limits<std::int64_t>::min(), -5, std::int64_t{1} << 40,
                                 std::numeric_limits<std::int64_t>::max()};
    check_elements(t, {4}, [&](tx::index_t k) { return want[k]; });
  }
  SUBCASE("bool (2, 2)") {
    const auto t = tx::load_npy<bool, 2>(fixture("bool_2x2.npy"));
    check_elements(t, {2, 2}, [](tx::index_t k) { return k == 0 || k == 3; });
  }
  SUBCASE("float16 (3,)") {
    const auto t = tx::load_npy<tx::half, 1>(fixture("float16_3.npy"));
    REQUIRE(t.size() == 3);
    CHECK(static_cast<float>(t(0)) == 1.0f);
    CHECK(static_cast<float>(t(1)) == -2.5f);
    CHECK(static_cast<float>(t(2)) == 65504.0f);
  }
  SUBCASE("format 2.0 (4-byte header length)") {
    const auto t = tx::load_npy<float, 2>(fixture("float32_2x2_v2.npy"));
    const float want[] = {0.5f, -0.5f, 8.0f, -8.0f};
    check_elements(t, {2, 2}, [&](tx::index_t k) { return want[k]; });
  }
  SUBCASE("format 3.0, rank 0") {
    const auto t = tx::load_npy<double, 0>(fixture("float64_scalar_v3.npy"));
    CHECK(t() == -2.5);
  }
  SUBCASE("big-endian >i4 is byte-swapped on load") {
    const auto t = tx::load_npy<std::int32_t, 2>(fixture("int32_2x3_big_endian.npy"));
    const std::int32_t want[] = {
        1, -2, 65539, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max(), 0};
    check_elements(t, {2, 3}, [&](tx::index_t k) { return want[k]; });
  }
  SUBCASE("int32 (0, 3)") {
    const auto t = tx::load_npy<std::int32_t, 2>(fixture("int32_0x3.npy"));
    CHECK(tx::to_string(t.shape()) == "(0, 3)");
    CHECK(t.empty());
    const auto wide = tx::load_npy<float, 9>(fixture("float32_empty_long_header.npy"));
    CHECK(tx::to_string(wide.shape()) == "(0, 1000000, 1000000, 1000000, 1, 1, 1, 1, 1)");
    // No elements, but NumPy rejects the shape too: its nonzero extents' product overflows int64.
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 4>(fixture("float32_empty_wide_4d.npy"))),
                         contains("(0, 1000000000000, 1000000000000, 1000000000000) is too large to load"), tx::io_error);
  }
}

TEST_CASE("npy: texpr writes the bytes np.save writes") {
  // The fixtures are np.save's output (make_fixtures.py follows numpy.lib.format), so a texpr file of the same
  // values must equal them byte for byte: header text, growth-axis room, padding and data.
  const auto same_as = [](const std::string& name, auto&& x) {
    CAPTURE(name);
    const fs::path p = scratch("bytes_" + name);
    tx::save_npy(p, x);
    CHECK(bytes_of(p) == bytes_of(fixture(name)));
  };
  same_as("float32_2x3.npy", tx::tensor<float, 2>({2, 3}, {-1.5f, 0.0f, 1.5f, 2.25f, -3.0f, 1024.5f}));
  same_as("int64_4.npy",
          tx::tensor<std::int64_t, 1>({4}, {std::numeric_limits<std::int64_t>::min(), -5, std::int64_t{1} << 40,
                                            std::numeric_limits<std::int64_t>::max()}));
  same_as("bool_2x2.npy", tx::tensor<bool, 2>({2, 2}, {true, false, false, true}));
  same_as("float16_3.npy", tx::tensor<tx::half, 1>({3}, {tx::half(1.0f), tx::half(-2.5f), tx::half(65504.0f)}));
  same_as("int32_0x3.npy", tx::tensor<std::int32_t, 2>({0, 3}));
  // Here np.save's room for the growth axis (21 digits) moves the data from byte 128 to 192.
  same_as("float32_empty_long_header.npy", tx::tensor<float, 9>({0, 1000000, 1000000, 1000000, 1, 1, 1, 1, 1}));
}

TEST_CASE("npy: views of any strides are written in C order") {
  const auto a = filled<float>(tx::shape_t<2>{3, 4}, formula<float>);  // a(i, j) = (4i + j - 6) * 0.375
  const auto round_trip = [](const char* name, auto v) {
    const fs::path p = scratch(std::string("view_") + name + ".npy");
    tx::save_npy(p, v);
    return tx::load_npy<typename decltype(v)::value_type, decltype(v)::rank>(p);
  };
  SUBCASE("transposed") {
    const auto t = round_trip("transposed", tx::view<const float, 2>(a.data(), {4, 3}, {1, 4}));
    REQUIRE(tx::to_string(t.shape()) == "(4, 3)");
    for (int i = 0; i != 4; ++i)
      for (int j = 0; j != 3; ++j) CHECK(t(i, j) == a(j, i));
  }
  SUBCASE("reversed (negative strides)") {
    const auto t = round_trip("reversed", tx::view<const float, 2>(a.data() + 11, {3, 4}, {-4, -1}));
    for (int i = 0; i != 3; ++i)
      for (int j = 0; j != 4; ++j) CHECK(t(i, j) == a(2 - i, 3 - j));
  }
  SUBCASE("every other column") {
    const auto t = round_trip("odd_columns", tx::view<const float, 2>(a.data() + 1, {3, 2}, {4, 2}));
    for (int i = 0; i != 3; ++i)
      for (int j = 0; j != 2; ++j) CHECK(t(i, j) == a(i, 1 + 2 * j));
  }
  SUBCASE("broadcast (stride 0)") {
    const auto t = round_trip("broadcast", tx::view<const float, 3>(a.data(), {2, 3, 4}, {0, 4, 1}));
    for (int b = 0; b != 2; ++b)
      for (int i = 0; i != 3; ++i)
        for (int j = 0; j != 4; ++j) CHECK(t(b, i, j) == a(i, j));
  }
  SUBCASE("a mutable view of a whole tensor, and 8- and 1-byte elements strided") {
    auto w = filled<std::int64_t>(tx::shape_t<2>{3, 4}, sample<std::int64_t>);
    check_same(round_trip("mutable", w.view()), w);
    const auto t = round_trip("int64_transposed", tx::view<const std::int64_t, 2>(w.data(), {4, 3}, {1, 4}));
    for (int i = 0; i != 4; ++i)
      for (int j = 0; j != 3; ++j) CHECK(t(i, j) == w(j, i));
    const auto m = filled<bool>(tx::shape_t<2>{3, 4}, formula<bool>);
    const auto u = round_trip("bool_transposed", tx::view<const bool, 2>(m.data(), {4, 3}, {1, 4}));
    for (int i = 0; i != 4; ++i)
      for (int j = 0; j != 3; ++j) CHECK(u(i, j) == m(j, i));
  }
}

TEST_CASE("npy: expressions are evaluated, then written") {
  const auto x = filled<double>(tx::shape_t<3>{2, 3, 4}, formula<double>);
  const fs::path p = scratch("expression.npy");
  tx::save_npy(p, x * 2.0 + 1.0);
  check_elements(tx::load_npy<double, 3>(p), {2, 3, 4}, [&](tx::index_t k) { return x.data()[k] * 2.0 + 1.0; });

  const auto a = filled<float>(tx::shape_t<2>{3, 4}, formula<float>);
  tx::save_npy(p, a > 0.0f);  // overwrites: the rename replaces the old file
  check_elements(tx::load_npy<bool, 2>(p), {3, 4}, [&](tx::index_t k) { return a.data()[k] > 0.0f; });

  tx::save_npy(p, tx::transpose(a));  // a layout over a tensor
  const auto t = tx::load_npy<float, 2>(p);
  REQUIRE(tx::to_string(t.shape()) == "(4, 3)");
  CHECK(t(3, 1) == a(1, 3));

  tx::save_npy(p, tx::sum(x));  // rank 0
  double total = 0;
  for (tx::index_t k = 0; k != x.size(); ++k) total += x.data()[k];
  CHECK(tx::load_npy<double, 0>(p)() == total);
}

TEST_CASE("npy: the docs/install.md example") {
  // docs/install.md, "Interop: .npy files", quotes these lines.
  tx::tensor<float, 2> a({2, 3}, {1, 2, 3, 4, 5, 6});
  tx::save_npy("a.npy", a);                         // np.load("a.npy") is the same (2, 3) float32 array
  tx::save_npy("at.npy", tx::transpose(a) * 2.0f);  // expressions are evaluated first, views written in C order
  auto b = tx::load_npy<float, 2>("a.npy");         // the file's dtype and rank must be these
  auto c = tx::load_npy<float, 2>("at.npy");
  CHECK(b(1, 2) == 6.0f);
  CHECK(c(2, 1) == 12.0f);
  fs::remove("a.npy");
  fs::remove("at.npy");
}

TEST_CASE("npy: headers are parsed, not pattern-matched") {
  const std::string data = float_bytes({1.0f, -2.0f});
  const auto load = [&](const std::string& dict, int major = 1, std::size_t align = 64) {
    const fs::path p = scratch("header.npy");
    write_bytes(p, raw_npy(dict, data, major, align));
    return tx::load_npy<float, 1>(p);
  };
  const auto check = [](const tx::tensor<float, 1>& t) {
    REQUIRE(t.size() == 2);
    CHECK(t(0) == 1.0f);
    CHECK(t(1) == -2.0f);
  };
  check(load("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"));
  check(load("{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}"));          // any order, no trailing comma
  check(load("{\"descr\": \"<f4\", \"fortran_order\": True, \"shape\": (2L,)}"));  // double quotes; Python 2's 2L
  check(load("{ 'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 2 , ) , }"));
  check(load("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 1, 16));  // 16-byte alignment (old NumPy)
  check(load("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 3));

  // Version 2.0 is written when the header outgrows 1.0's 2-byte length (only absurd ranks do).
  const std::vector<tx::index_t> shape(30000, 1);
  const std::string pre = tx::detail::npy_preamble("<f4", false, shape);
  CHECK(pre.size() % 64 == 0);
  CHECK(pre.compare(0, 8, std::string("\x93NUMPY\x02\x00", 8)) == 0);
  CHECK(tx::detail::npy_header_parser(std::string_view(pre).substr(12), "x.npy").parse().shape == shape);
  CHECK(tx::detail::npy_preamble("<f4", false, std::vector<tx::index_t>{2}).compare(6, 2, std::string("\x01\x00", 2)) ==
        0);
}

TEST_CASE("npy: errors name the file and say what was expected and what was found") {
  const fs::path f8 = scratch("err_float64_3x4.npy");
  tx::save_npy(f8, filled<double>(tx::shape_t<2>{3, 4}, formula<double>));
  const std::string name = f8.string();

  SUBCASE("dtype") {
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 2>(f8)), contains(name + ": expected dtype float32 (<f4), file has <f8"),
                         tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<std::int64_t, 2>(f8)), contains("expected dtype int64 (<i8), file has <f8"),
                         tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<std::int32_t, 2>(fixture("bool_2x2.npy"))),
                         contains("expected dtype int32 (<i4), file has |b1"), tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<bool, 1>(fixture("float16_3.npy"))),
                         contains("expected dtype bool (|b1), file has <f2"), tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<std::int64_t, 2>(fixture("int32_2x3_big_endian.npy"))),
                         contains("expected dtype int64 (<i8), file has >i4"), tx::io_error);
  }
  SUBCASE("rank") {
    const fs::path p = scratch("err_rank3.npy");
    tx::save_npy(p, tx::tensor<float, 3>({3, 4, 5}));
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 2>(p)),
                         contains(p.string() + ": expected rank 2, file has shape (3, 4, 5)"), tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 1>(fixture("float64_scalar_v3.npy"))),
                         contains("expected rank 1, file has shape ()"), tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<std::int64_t, 0>(fixture("int64_4.npy"))),
                         contains("expected rank 0, file has shape (4,)"), tx::io_error);
  }
  SUBCASE("missing file or a directory") {
    const fs::path p = scratch("no_such_file.npy");
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)), contains(p.string() + ": cannot open for reading: no such file"),
                         tx::io_error);
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(scratch(""))), contains("it is a directory"), tx::io_error);
  }
  SUBCASE("truncated") {
    const std::string whole = bytes_of(f8);
    REQUIRE(whole.size() == 128 + 96);
    const fs::path p = scratch("err_truncated.npy");
    const auto cut = [&](std::size_t n) { write_bytes(p, std::string_view(whole).substr(0, n)); };
    cut(whole.size() - 3);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)),
                         contains(p.string() + ": truncated: shape (3, 4) of <f8 needs 96 data bytes after the "
                                               "128-byte header, the file has 93"),
                         tx::io_error);
    cut(128);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)), contains("truncated: shape (3, 4)"), tx::io_error);
    cut(100);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)),
                         contains("truncated: the header needs 128 bytes, the file has 100"), tx::io_error);
    cut(9);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)), contains("truncated: 9 bytes, shorter than the 10-byte"),
                         tx::io_error);
    cut(0);
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)), contains("truncated: the file is empty"), tx::io_error);
    write_bytes(p, whole + "junk");
    CHECK_THROWS_WITH_AS((tx::load_npy<double, 2>(p)), contains("the file has 100 (a .npy file holds one array)"),
                         tx::io_error);
  }
  SUBCASE("not a .npy file, or an unknown version") {
    const fs::path p = scratch("err_magic.npy");
    write_bytes(p, "PK\x03\x04 this is a zip archive (an .npz?)");
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)),
                         contains(p.string() + ": not a .npy file but a zip archive (an .npz?): read it with tx::load_npz"),
                         tx::io_error);
    write_bytes(p, "GIF89a, not an array");
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)), contains(p.string() + ": not a .npy file: it does not start"),
                         tx::io_error);
    write_bytes(p, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", float_bytes({1, 2}), 4));
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)), contains("unsupported .npy format version 4.0"), tx::io_error);
  }
  SUBCASE("corrupt headers") {
    const fs::path p = scratch("err_header.npy");
    const std::pair<const char*, const char*> cases[] = {
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", "expected True or False after 'fortran_order'"},
        {"{'descr': '<f4', 'shape': (2,), }", "it has no 'fortran_order' key"},
        {"{'fortran_order': False, 'shape': (2,), }", "it has no 'descr' key"},
        {"{'descr': '<f4', 'fortran_order': False}", "it has no 'shape' key"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", "it has the unknown key 'extra'"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", "it has the key 'descr' twice"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2), }", "it has 'shape': (2), not a tuple"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }",
         "expected a non-negative integer extent in 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1 2), }", "expected ',' or ')' in 'shape'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", "expected a tuple such as (2, 3) after 'shape'"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }", "expected ',' or '}' after the value of 'descr'"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), ", "expected a quoted key or '}'"},
        {"{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", "expected ',' or '}' after the value of 'descr'"},
        {"{'descr': <f4, 'fortran_order': False, 'shape': (2,), }", "expected a quoted dtype string after 'descr'"},
        {"['descr', '<f4']", "expected '{' opening the header dict"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } {}", "expected nothing after the closing '}'"},
        {"{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (2,), }", "it has a structured dtype"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", "too large for texpr"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }", "is too large to load"},
    };
    // NumPy rejects (0, 2^62, 2^62) although it has no elements: its strides overflow. So does load_npy.
    {
      write_bytes(p, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4611686018427387904), }", {}));
      CHECK_THROWS_WITH_AS((tx::load_npy<float, 3>(p)), contains("is too large to load"), tx::io_error);
      write_bytes(p, raw_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4294967296, 0, 4294967296), }", {}));
      CHECK_THROWS_WITH_AS((tx::load_npy<float, 3>(p)), contains("is too large to load"), tx::io_error);
      write_bytes(p, raw_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 1048576, 1048576), }", {}));
      CHECK(tx::load_npy<float, 3>(p).shape() == tx::shape_t<3>{0, 1048576, 1048576});
    }
    for (const auto& [dict_text, message] : cases) {
      const std::string dict = dict_text;  // clang 14 cannot capture a structured binding (CAPTURE does)
      CAPTURE(dict);
      write_bytes(p, raw_npy(dict, float_bytes({1, 2})));
      CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)), contains(message), tx::io_error);
      CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)), contains(p.string() + ": "), tx::io_error);
    }
    write_bytes(p, raw_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", float_bytes({1, 2})));
    CHECK_THROWS_WITH_AS((tx::load_npy<float, 1>(p)),
                         contains(p.string() + ": corrupt .npy header: expected True or False after "
                                               "'fortran_order' at byte 34 of \"{'descr': '<f4', 'fortran_order': "
                                               "Maybe, 'shape': (2,), }\""),
                         tx::io_error);
  }
  SUBCASE("saving where the file cannot be written leaves nothing behind") {
    const fs::path p = scratch("no_such_dir") / "x.npy";
    CHECK_THROWS_WITH_AS(tx::save_npy(p, tx::tensor<float, 1>({2})),
                         contains(p.string() + ": cannot open " + p.string() + ".tmp for writing"), tx::io_error);
    CHECK_FALSE(fs::exists(p));
    // The rename fails (a directory holds the name): the temporary is removed, the directory is untouched.
    const fs::path d = scratch("a_directory.npy");
    fs::create_directories(d / "inside");
    CHECK_THROWS_WITH_AS(tx::save_npy(d, tx::tensor<float, 1>({2})), contains(d.string() + ": cannot rename"),
                         tx::io_error);
    CHECK_FALSE(fs::exists(fs::path(d) += ".tmp"));
    CHECK(fs::is_directory(d / "inside"));
  }
}

TEST_CASE("npy: NumPy reads texpr's files and texpr reads NumPy's") {
  // CTest passes TEXPR_PYTHON, the interpreter CMake found NumPy with: then the round trips must run. Run by
  // hand without it, python3 is probed and the case skips when it cannot import NumPy.
  const char* configured = std::getenv("TEXPR_PYTHON");
  const std::string python = configured && *configured ? configured : "python3";
  if (!(configured && *configured) && std::system((python + " -c \"import numpy\" > /dev/null 2>&1").c_str()) != 0) {
    MESSAGE("NumPy not importable: skipped NumPy round trips (fixtures still tested)");
    return;
  }
  const fs::path dir = fs::current_path() / "npy_numpy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string script = "\"" + python + "\" \"" + fixture("numpy_round_trip.py").string() + "\" ";
  REQUIRE(std::system((script + "write \"" + dir.string() + "\"").c_str()) == 0);

  const auto name = [](const char* prefix, std::string_view dtype, const auto& shape, const char* order) {
    return std::string(prefix) + "_" + std::string(dtype) + "_" + dims(shape) + "_" + order + ".npy";
  };
  int loaded = 0;
  const auto each_dtype = [&](auto f) {
    f(bool{});
    f(std::int32_t{});
    f(std::int64_t{});
    f(tx::half{});
    f(float{});
    f(double{});
  };
  // numpy_round_trip.py's SHAPES; it also writes Fortran-order copies of those of rank >= 2.
  const auto each_shape = [](auto f) {
    f(tx::shape_t<0>{});
    f(tx::shape_t<1>{7});
    f(tx::shape_t<2>{3, 4});
    f(tx::shape_t<3>{2, 3, 4});
    f(tx::shape_t<4>{2, 1, 3, 2});
    f(tx::shape_t<2>{0, 3});
  };
  each_dtype([&](auto zero) {
    using T = decltype(zero);
    each_shape([&](auto shape) {
      constexpr std::size_t R = std::tuple_size_v<decltype(shape)>;
      const auto want = [&](tx::index_t k) { return formula<T>(k, tx::shape_size(shape)); };
      for (const char* order : {"c", "f"}) {
        if (R < 2 && order[0] == 'f') continue;
        const std::string file = name("np", tx::dtype_name_v<T>, shape, order);
        CAPTURE(file);
        check_elements(tx::load_npy<T, R>(dir / file), shape, want);
        ++loaded;
      }
      tx::save_npy(dir / name("tx", tx::dtype_name_v<T>, shape, "c"), filled<T>(shape, formula<T>));
    });
  });
  check_elements(tx::load_npy<std::int32_t, 2>(dir / "np_int32_3x4_big.npy"), {3, 4},
                 [](tx::index_t k) { return formula<std::int32_t>(k, 12); });
  check_elements(tx::load_npy<double, 2>(dir / "np_float64_3x4_big_f.npy"), {3, 4},
                 [](tx::index_t k) { return formula<double>(k, 12); });
  check_elements(tx::load_npy<float, 3>(dir / "np_float32_2x3x4_v2.npy"), {2, 3, 4},
                 [](tx::index_t k) { return formula<float>(k, 24); });
  CHECK(loaded == 6 * (6 + 4));

  const auto a = filled<float>(tx::shape_t<2>{3, 4}, formula<float>);
  tx::save_npy(dir / "tx_float32_transposed.npy", tx::view<const float, 2>(a.data(), {4, 3}, {1, 4}));
  tx::save_npy(dir / "tx_float64_expression.npy", filled<double>(tx::shape_t<3>{2, 3, 4}, formula<double>) * 2.0 + 1.0);
  tx::save_npy(dir / "tx_bool_expression.npy", a > 0.0f);
  CHECK(std::system((script + "check \"" + dir.string() + "\"").c_str()) == 0);
}

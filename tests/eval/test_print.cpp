// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Printing: tx::repr and operator<< against NumPy's repr of the same arrays (the committed fixtures/numpy_repr.txt
// always; NumPy itself when python3 imports it), views and expressions, and what NumPy cannot print (bfloat16).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <texpr/interop/npy.hpp>
#include <texpr/texpr.hpp>

namespace tx = texpr;
namespace fs = std::filesystem;

namespace {

fs::path fixture(const std::string& name) {
  const char* dir = std::getenv("TEXPR_PRINT_FIXTURES");
  return (dir && *dir ? fs::path(dir) : fs::path(__FILE__).parent_path() / "fixtures") / name;
}

// The cases, by name: texpr's repr of each; each array is also saved to `dump` (when given) for NumPy to print.
class cases {
 public:
  explicit cases(const fs::path* dump) : dump_(dump) { build(); }
  const std::map<std::string, std::string>& reprs() const { return reprs_; }

 private:
  template <class T, std::size_t R> void add(const std::string& name, const tx::tensor<T, R>& t) {
    reprs_[name] = tx::repr(t);
    if (dump_) tx::save_npy(*dump_ / (name + ".npy"), t);
  }
  template <class T, std::size_t R, class F> static tx::tensor<T, R> filled(const tx::shape_t<R>& shape, F f) {
    tx::tensor<T, R> t(shape);
    for (tx::index_t k = 0; k != t.size(); ++k) t.data()[k] = f(k);
    return t;
  }
  // A deterministic spread of magnitudes and signs (an LCG; NumPy only reads the saved values).
  static double noise(tx::index_t k, double scale) {
    std::uint64_t x = static_cast<std::uint64_t>(k) * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    const double unit = static_cast<double>(x >> 11) / 9007199254740992.0;  // [0, 1)
    return (unit - 0.5) * scale;
  }

  void build() {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const double dnan = std::numeric_limits<double>::quiet_NaN(), dinf = std::numeric_limits<double>::infinity();
    add("f32_2x2", tx::tensor<float, 2>({2, 2}, {1, 2, 3, 4}));
    add("f64_third", tx::tensor<double, 1>({2}, {1.0 / 3, 2}));
    add("f64_point_three", tx::tensor<double, 1>({2}, {0.1 + 0.2, 1}));
    add("f32_negative_nonfinite", tx::tensor<float, 1>({4}, {1.5f, -10.25f, nan, -inf}));
    add("f64_only_nonfinite", tx::tensor<double, 1>({3}, {dnan, dinf, -dinf}));
    add("f32_nan_inf_exp", tx::tensor<float, 1>({4}, {1e-7f, nan, inf, 3}));
    add("f32_exp_real_digits", tx::tensor<float, 1>({2}, {0.3f, 1.2345678e-5f}));
    add("f32_exp_no_fraction", tx::tensor<float, 1>({2}, {1e20f, 1}));
    add("f64_exp_three_digits", tx::tensor<double, 1>({3}, {1e-300, -1e300, 2.5}));
    add("f64_large", tx::tensor<double, 1>({2}, {123456789.123, 1.5}));
    add("f32_signed_zero", tx::tensor<float, 1>({3}, {-0.0f, 0.0f, 1}));
    add("f64_zeros", tx::tensor<double, 2>({2, 2}, {0, 0, 0, 0}));
    add("f32_scalar", tx::tensor<float, 0>({}, {1.5f}));
    add("f64_scalar", tx::tensor<double, 0>({}, {-2.25}));
    add("f32_scalar_nan", tx::tensor<float, 0>({}, {nan}));
    add("i64_scalar", tx::tensor<std::int64_t, 0>({}, {3}));
    add("i32_scalar", tx::tensor<std::int32_t, 0>({}, {-7}));
    add("bool_scalar", tx::tensor<bool, 0>({}, {true}));
    add("bool_2x3", tx::tensor<bool, 2>({2, 3}, {true, false, false, true, true, false}));
    add("i32_3x4", filled<std::int32_t>(tx::shape_t<2>{3, 4}, [](tx::index_t k) { return static_cast<int>(k) - 5; }));
    add("i64_wrapped", filled<std::int64_t>(tx::shape_t<1>{30}, [](tx::index_t k) { return (k - 15) * 300000000007; }));
    add("i32_summarised_3d",
        filled<std::int32_t>(tx::shape_t<3>{10, 10, 20}, [](tx::index_t k) { return static_cast<int>(k * 7 - 900); }));
    add("f32_summarised_40x50", filled<float>(tx::shape_t<2>{40, 50}, [](tx::index_t k) { return float(k); }));
    add("f64_summarised_1d", filled<double>(tx::shape_t<1>{1001}, [](tx::index_t k) { return k * 0.5; }));
    add("f64_random_100", filled<double>(tx::shape_t<1>{100}, [](tx::index_t k) { return noise(k, 20); }));
    add("f32_random_3d", filled<float>(tx::shape_t<3>{2, 3, 4}, [](tx::index_t k) { return float(noise(k, 8)); }));
    add("f32_random_wide_exp",
        filled<float>(tx::shape_t<2>{4, 6}, [](tx::index_t k) { return float(noise(k, 1) * std::pow(10.0, k % 7)); }));
    add("f64_random_4d", filled<double>(tx::shape_t<4>{2, 2, 2, 3}, [](tx::index_t k) { return noise(k, 1e3); }));
    add("f32_dtype_wraps", filled<float>(tx::shape_t<1>{6}, [](tx::index_t k) { return 1.2345678f + float(k); }));
    add("f16_values", tx::tensor<tx::half, 1>({4}, {tx::half(0.1f), tx::half(0.2f), tx::half(1000.f), tx::half(-3.5f)}));
    add("f16_random", filled<tx::half>(tx::shape_t<2>{3, 3}, [](tx::index_t k) { return tx::half(float(noise(k, 4))); }));
    add("f32_empty_0x3", tx::tensor<float, 2>(tx::shape_t<2>{0, 3}));
    add("f64_empty_0", tx::tensor<double, 1>(tx::shape_t<1>{0}));
    add("i32_empty_2x0", tx::tensor<std::int32_t, 2>(tx::shape_t<2>{2, 0}));
    add("bool_empty_0x2x1", tx::tensor<bool, 3>(tx::shape_t<3>{0, 2, 1}));
    add("i64_empty_0", tx::tensor<std::int64_t, 1>(tx::shape_t<1>{0}));
    using c64 = std::complex<float>;
    using c128 = std::complex<double>;
    add("c128_values", tx::tensor<c128, 1>({4}, {c128(1, 2), c128(-3.5, 0), c128(0, -1), c128(0.25, -0.0)}));
    add("c64_2x2", tx::tensor<c64, 2>({2, 2}, {c64(1, -1), c64(0.1f, 2), c64(-10, 0.5f), c64(3, 4)}));
    add("c64_nonfinite", tx::tensor<c64, 1>({3}, {c64(nan, 1), c64(1.5f, -inf), c64(-inf, inf)}));
    add("c128_exp_parts", tx::tensor<c128, 1>({3}, {c128(1e-7, 5), c128(-2e10, 1e-3), c128(3, -4)}));
    add("c128_scalar", tx::tensor<c128, 0>({}, {c128(-1.5, 2.25)}));
    add("c64_scalar", tx::tensor<c64, 0>({}, {c64(0, -1)}));
    add("c64_empty_0", tx::tensor<c64, 1>(tx::shape_t<1>{0}));
    add("c64_random_3x3",
        filled<c64>(tx::shape_t<2>{3, 3}, [](tx::index_t k) { return c64(float(noise(k, 8)), float(noise(k + 100, 0.5))); }));
    add("c128_random_wraps", filled<c128>(tx::shape_t<1>{12}, [](tx::index_t k) { return c128(noise(k, 40), noise(k + 7, 1e3)); }));
  }

  const fs::path* dump_;
  std::map<std::string, std::string> reprs_;
};

// "=== name" blocks, as numpy_repr.py prints them; "#" lines (NumPy's version) are comments.
std::map<std::string, std::string> parse(std::istream& in) {
  std::map<std::string, std::string> out;
  std::string line, name;
  while (std::getline(in, line)) {
    if (line.rfind("=== ", 0) == 0) {
      name = line.substr(4);
      out[name];
    } else if (!name.empty()) {
      std::string& text = out[name];
      text += (text.empty() ? "" : "\n") + line;
    }
  }
  return out;
}

void compare(const std::map<std::string, std::string>& numpy) {
  const cases ours(nullptr);
  CHECK(numpy.size() == ours.reprs().size());
  for (const auto& entry : ours.reprs()) {
    const std::string& name = entry.first;
    CAPTURE(name);
    const auto found = numpy.find(name);
    REQUIRE(found != numpy.end());
    CHECK(entry.second == found->second);
  }
}

} // namespace

TEST_CASE("print: texpr prints as NumPy did (committed fixtures/numpy_repr.txt)") {
  std::ifstream in(fixture("numpy_repr.txt"));
  REQUIRE(in);
  compare(parse(in));
}

TEST_CASE("print: texpr prints as this machine's NumPy does") {
  const char* configured = std::getenv("TEXPR_PYTHON");
  const std::string python = configured && *configured ? configured : "python3";
  if (!(configured && *configured) && std::system((python + " -c \"import numpy\" > /dev/null 2>&1").c_str()) != 0) {
    MESSAGE("NumPy not importable: compared with the committed fixtures only");
    return;
  }
  const fs::path dir = fs::current_path() / "print_numpy";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const cases dumped(&dir);
  const fs::path out = fs::current_path() / "print_numpy.txt";
  REQUIRE(std::system(("\"" + python + "\" \"" + fixture("numpy_repr.py").string() + "\" \"" + dir.string() + "\" > \"" +
                       out.string() + "\"")
                          .c_str()) == 0);
  std::ifstream in(out);
  compare(parse(in));
}

TEST_CASE("print: operator<< writes repr; views and expressions print their values") {
  const tx::tensor<float, 2> a({2, 3}, {1, 2, 3, 4, 5, 6});
  std::ostringstream os;
  os << a;
  CHECK(os.str() == "array([[1., 2., 3.],\n       [4., 5., 6.]], dtype=float32)");
  CHECK(tx::repr(a) == os.str());

  // A strided view (the transpose, by strides) and the same as an expression print the transposed values.
  const std::string transposed = "array([[1., 4.],\n       [2., 5.],\n       [3., 6.]], dtype=float32)";
  CHECK(tx::repr(tx::view<const float, 2>(a.data(), {3, 2}, {1, 3})) == transposed);
  CHECK(tx::repr(tx::transpose(a)) == transposed);
  std::ostringstream expression;
  expression << a * 2.0f - 1.0f;
  CHECK(expression.str() == "array([[ 1.,  3.,  5.],\n       [ 7.,  9., 11.]], dtype=float32)");
  std::ostringstream compared;
  compared << (a > 2.5f);
  CHECK(compared.str() == "array([[False, False,  True],\n       [ True,  True,  True]])");
  CHECK(tx::repr(tx::sum(a)) == "array(21., dtype=float32)");
  CHECK(tx::repr(tx::full({2}, 1.5f)) == "array([1.5, 1.5], dtype=float32)");  // constants only: evaluated on the host
}

TEST_CASE("print: bfloat16 with its own shortest digits; print_options") {
  const tx::tensor<tx::bfloat16, 1> b({3}, {tx::bfloat16(1.5f), tx::bfloat16(0.1f), tx::bfloat16(-30.f)});
  CHECK(tx::repr(b) == "array([  1.5,   0.1, -30. ], dtype=bfloat16)");

  tx::tensor<std::int32_t, 1> r({10});
  for (tx::index_t k = 0; k != 10; ++k) r.data()[k] = static_cast<std::int32_t>(k);
  CHECK(tx::repr(r, {.threshold = 5, .edge_items = 2}) == "array([0, 1, ..., 8, 9], dtype=int32)");
  CHECK(tx::repr(r, {.line_width = 20}) == "array([0, 1, 2, 3,\n       4, 5, 6, 7,\n       8, 9],\n      dtype=int32)");
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::load_npz built without TEXPR_WITH_ZLIB (this program does not link zlib; texpr_npz_tests does): an
// np.savez_compressed archive is a clear io_error that says how to read it, never garbage.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <texpr/interop/npz.hpp>

namespace fs = std::filesystem;

#if defined(TEXPR_WITH_ZLIB)
#error "this test checks a build without zlib"
#endif

TEST_CASE("npz without zlib: a compressed archive names the entry and how to read it") {
  const char* dir = std::getenv("TEXPR_FIXTURES");
  const fs::path path = (dir && *dir ? fs::path(dir) : fs::path(__FILE__).parent_path() / "fixtures") / "compressed.npz";
  static_assert(!texpr::detail::npz_has_deflate);
  try {
    (void)texpr::load_npz(path);
    FAIL("load_npz accepted a deflated archive without zlib");
  } catch (const texpr::io_error& e) {
    const std::string what = e.what();
    CHECK(what.find(path.string()) != std::string::npos);
    CHECK(what.find("entry 'w1.npy' is compressed (zip method 8, deflate, as np.savez_compressed writes)") !=
          std::string::npos);
    CHECK(what.find("define TEXPR_WITH_ZLIB and link zlib (CMake: texpr::zlib") != std::string::npos);
  }
}

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// texpr::source_location: the caller's file and line, for errors raised while building a node. texpr::source_location
// is not usable with clang++ 14 and libstdc++ (it needs __builtin_source_location), so texpr spells its own with the
// __builtin_FILE / __builtin_LINE that g++, clang++ and nvcc evaluate at the call site in default arguments.
#pragma once

namespace texpr {

/// A position in the source: where a texpr function was called.
struct source_location {
  const char* file = "";  ///< Source file name, as the compiler spells it.
  int line = 0;           ///< Line number.
  /// The caller's location when used as a default argument.
  static constexpr source_location current(const char* file = __builtin_FILE(), int line = __builtin_LINE()) noexcept {
    return {file, line};
  }
  /// The file name (texpr::source_location's spelling).
  constexpr const char* file_name() const noexcept { return file; }
};

} // namespace texpr

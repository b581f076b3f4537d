// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Layout op tags: an operand's elements seen with other extents and strides, without copying. Each op has a
// `params<RI, RO>` type (what the node stores) whose map() turns the operand's (shape, strides) into the
// result's and adds to `offset` the position of the result's first element (in elements); map() returns false
// when strides cannot express the result (reshape of a non-contiguous operand), and evaluation then copies the
// operand to contiguous memory first.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "texpr/core/config.hpp"
#include "texpr/core/dtype_set.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/op/kind.hpp"

namespace texpr::op {

/// Base of layout op tags.
struct layout_op {
  static constexpr kind category = kind::layout;  ///< A view of the operand's memory.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Moves elements of any dtype.
};

/// Swaps the last two axes.
struct transpose : layout_op {
  static constexpr std::string_view name = "transpose";  ///< Shown by tx::placement.
  /// No parameters.
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RI == RO && RI >= 2, "texpr: transpose swaps the last two axes of an operand of rank 2 or more");
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      os = s;
      ost = st;
      std::swap(os[RI - 2], os[RI - 1]);
      std::swap(ost[RI - 2], ost[RI - 1]);
      return true;
    }
  };
};

/// Reorders the axes: result axis d is operand axis perm[d].
struct permute : layout_op {
  static constexpr std::string_view name = "permute";  ///< Shown by tx::placement.
  /// The permutation.
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RI == RO, "texpr: permute keeps the rank");
    std::array<std::size_t, RI> perm{};
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      for (std::size_t d = 0; d != RI; ++d) {
        os[d] = s[perm[d]];
        ost[d] = st[perm[d]];
      }
      return true;
    }
  };
};

/// The same elements in row-major order with another shape (the rank may change; one extent may be -1).
struct reshape : layout_op {
  static constexpr std::string_view name = "reshape";  ///< Shown by tx::placement.
  /// The target shape, -1 already resolved.
  template <std::size_t RI, std::size_t RO> struct params {
    shape_t<RO> target{};
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      os = target;
      // Only a row-major contiguous operand (extents of 1 may have any stride) is reshaped in place.
      index_t expect = 1;
      for (std::size_t d = RI; d-- > 0;) {
        if (s[d] != 1 && st[d] != expect) return false;
        expect *= s[d];
      }
      ost = contiguous_strides(target);
      return true;
    }
  };
};

/// Elements begin, begin + step, ... (before end) along one axis.
struct slice : layout_op {
  static constexpr std::string_view name = "slice";  ///< Shown by tx::placement.
  /// The axis, first index, count and step (resolved and clamped when the node is built).
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RI == RO && RI >= 1, "texpr: slice keeps the rank");
    std::size_t axis = 0;
    index_t first = 0, count = 0, step = 1;
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      os = s;
      ost = st;
      os[axis] = count;
      ost[axis] = st[axis] * step;
      if (count > 0) offset += first * st[axis];
      return true;
    }
  };
};

/// Inserts an axis of extent 1.
struct unsqueeze : layout_op {
  static constexpr std::string_view name = "unsqueeze";  ///< Shown by tx::placement.
  /// Where the new axis goes (0 <= axis <= operand rank).
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RO == RI + 1, "texpr: unsqueeze adds one axis");
    std::size_t axis = 0;
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      for (std::size_t d = 0, i = 0; d != RO; ++d) {
        if (d == axis) {
          os[d] = 1;
          ost[d] = 0;
        } else {
          os[d] = s[i];
          ost[d] = st[i];
          ++i;
        }
      }
      return true;
    }
  };
};

/// Removes an axis of extent 1.
struct squeeze : layout_op {
  static constexpr std::string_view name = "squeeze";  ///< Shown by tx::placement.
  /// The axis removed (its extent is 1).
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RI == RO + 1, "texpr: squeeze removes one axis");
    std::size_t axis = 0;
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      for (std::size_t d = 0, o = 0; d != RI; ++d)
        if (d != axis) {
          os[o] = s[d];
          ost[o] = st[d];
          ++o;
        }
      return true;
    }
  };
};

/// The diagonal of two axes (numpy.diagonal with offset 0): both axes removed and the diagonal appended as the last
/// axis, its stride the sum of theirs. The two extents are equal (checked when the node is built).
struct diagonal : layout_op {
  static constexpr std::string_view name = "diagonal";  ///< Shown by tx::placement.
  /// The two axes (distinct, normalised).
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RI == RO + 1 && RI >= 2, "texpr: diagonal removes two axes and appends one");
    std::size_t axis1 = 0, axis2 = 1;
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      for (std::size_t d = 0, o = 0; d != RI; ++d)
        if (d != axis1 && d != axis2) {
          os[o] = s[d];
          ost[o] = st[d];
          ++o;
        }
      os[RO - 1] = s[axis1];
      ost[RO - 1] = st[axis1] + st[axis2];
      return true;
    }
  };
};

/// The operand repeated along new leading axes and along its axes of extent 1 (NumPy's broadcast_to): a stride
/// of 0, so it costs no memory. It cannot be written through.
struct broadcast_to : layout_op {
  static constexpr std::string_view name = "broadcast_to";  ///< Shown by tx::placement.
  /// The target shape.
  template <std::size_t RI, std::size_t RO> struct params {
    static_assert(RO >= RI, "texpr: broadcast_to cannot lower the rank");
    shape_t<RO> target{};
    bool map(const shape_t<RI>& s, const shape_t<RI>& st, shape_t<RO>& os, shape_t<RO>& ost, [[maybe_unused]] index_t& offset) const {
      os = target;
      for (std::size_t d = 0; d != RO; ++d) {
        ost[d] = 0;
        if (d + RI >= RO) {
          const std::size_t i = d + RI - RO;
          ost[d] = s[i] == 1 ? 0 : st[i];
        }
      }
      return true;
    }
  };
};

/// Joins operands along an axis (tx::concat). Not a view: the operands live in separate memory, so it is
/// computed, each operand evaluated into its slice of the result.
struct concat {
  static constexpr std::string_view name = "concat";  ///< Shown by tx::placement.
  static constexpr kind category = kind::computed;    ///< Evaluated into memory.
  static constexpr auto dtypes = all_dtypes + complex_dtypes;  ///< Moves elements of any dtype.
};

} // namespace texpr::op

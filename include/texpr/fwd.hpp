// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Light forward header: declares texpr's main types without pulling in the kernels.
#pragma once

#include <cstddef>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/stream.hpp"

namespace texpr {

/// Owning, row-major tensor of rank Rank whose memory lives on Backend.
template <class T, std::size_t Rank, class Backend = host> class tensor;
/// Non-owning (possibly strided) view over memory on Backend; T may be const.
template <class T, std::size_t Rank, class Backend = host> class view;
/// CRTP base of every expression node.
template <class Derived> struct expr_base;

} // namespace texpr

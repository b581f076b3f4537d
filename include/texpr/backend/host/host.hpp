// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host backend: its registry and every implementation the registry names.
#pragma once

#include "texpr/backend/host/elementwise.hpp"
#include "texpr/backend/host/layout.hpp"
#include "texpr/backend/host/matmul.hpp"
#include "texpr/backend/host/parallel.hpp"
#include "texpr/backend/host/reduce.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/backend/host/scan.hpp"

// texpr umbrella header: everything a user needs. Include this from user code only.
#pragma once

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/dtype.hpp"
#include "texpr/core/shape.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/registry/kernel.hpp"
#include "texpr/backend/host/registry.hpp"
#include "texpr/backend/cuda/registry.hpp"
#include "texpr/tensor/tensor.hpp"
#include "texpr/tensor/view.hpp"
#include "texpr/expr/elementwise.hpp"
#include "texpr/expr/reduction.hpp"
#include "texpr/expr/matmul.hpp"
#include "texpr/placement/runs_on.hpp"
#include "texpr/placement/report.hpp"
#include "texpr/eval/assign.hpp"
#include "texpr/autograd/param.hpp"
#include "texpr/autograd/rules.hpp"
#include "texpr/autograd/grad.hpp"
#if defined(__CUDACC__)
#include "texpr/backend/cuda/cuda.hpp"
#endif

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A graph captured into a CUDA graph must read device memory only: a host leaf would need a pageable host to
// device copy inside the graph. The message says to copy into a device staging tensor first.
// expected-error: tx::capture_step needs every leaf in device memory
// expected-error: staging
// expected-errors: 1
#include <texpr/texpr.hpp>
namespace tx = texpr;
#ifdef TEXPR_KO
using B = tx::host;
#else
using B = tx::cuda;
#endif
tx::tensor<float, 2, B>& batch();
static_assert(tx::capturable<tx::tensor<float, 2, tx::cuda>&>);
static_assert(!tx::capturable<tx::tensor<float, 2, tx::host>&>);
// The indexing ops check their indices on the host (a copy and a wait on cuda): not capturable, though they run on cuda.
using device_indices = tx::tensor<std::int64_t, 1, tx::cuda>&;
using device_table = tx::tensor<float, 2, tx::cuda>&;
static_assert(tx::runs_on<decltype(tx::embedding(std::declval<device_indices>(), std::declval<device_table>())), tx::cuda>);
static_assert(!tx::capturable<decltype(tx::embedding(std::declval<device_indices>(), std::declval<device_table>()))>);
static_assert(tx::capturable<decltype(tx::exp(std::declval<device_table>()))>);
void f() { (void)tx::require_capturable(tx::exp(batch()) * 2.0f); }

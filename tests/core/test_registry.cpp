// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every row of the host registry table is run and checked against an independent reference (registry_checks.hpp);
// the list of rows comes from the table itself, so no kernel is registered untested. And the host and cuda tables
// differ only where they say they do.
#include "core/registry_checks.hpp"

#include <map>
#include <set>
#include <string>

namespace {

// Rows keyed by op name (cast rows by "cast"), each with the set of dtype names it registers.
template <class Rows> std::map<std::string, std::set<std::string>> table_of() {
  std::map<std::string, std::set<std::string>> t;
  tx::detail::for_each_type(Rows{}, [&]<class Row>() {
    tx::detail::for_each_type(typename tx::detail::set_list<typename Row::dtypes>::type{}, [&]<class T>() {
      t[std::string(Row::template op_for<T>::name)].insert(std::string(tx::dtype_name_v<T>));
    });
  });
  return t;
}

} // namespace

TEST_CASE("every host registry row has a passing numeric test") {
  const std::size_t checked = regcheck::check_rows<tx::host, tx::host_rows>([](std::size_t) { return true; });
  CHECK(checked == tx::host_registry::size);
  CHECK(checked > 150);
}

TEST_CASE("host and cuda tables differ only where the cuda table says they do") {
  // The stated differences: the host-only families below; cuda adds the 16-bit floats to every op that computes in float (but
  // make_complex), has no integer
  // matmul and no float8_e5m2 scaled_matmul. Anything else (a row on one side only, a dtype missing) is a mistake in one of the tables.
  const auto host = table_of<tx::host_rows>();
  const auto cuda = table_of<tx::cuda_rows>();
  std::set<std::string> ops;
  for (const auto& [op, d] : host) ops.insert(op);
  for (const auto& [op, d] : cuda) ops.insert(op);
  // The linear algebra family (texpr/linalg.hpp) has cuda rows (cuSOLVER's, cuBLAS's trsm and GEMMs) for every op, without 16-bit floats: cuSOLVER has
  // no 16-bit factorisation, so those are the compile error naming op, dtype and cuda (tests/compile_fail/cuda/cholesky_half.cu).
  // Likewise convolution, pooling and batch norm (texpr/conv.hpp; cuDNN rows not built yet; tests/compile_fail/conv2d_on_cuda.cpp),
  // and the transforms (texpr/fft.hpp; cuFFT rows not built yet; tests/compile_fail/fft_on_cuda.cpp).
  const std::set<std::string> cusolver_rows = {"cholesky", "solve_triangular", "solve", "slogdet", "eigh", "eigvalsh", "lu_factor", "lu_solve", "qr", "svd", "svdvals",
                                               "lstsq"};
  const std::set<std::string> host_only = {"conv2d", "conv2d_input_grad", "conv2d_weight_grad", "conv_transpose2d", "max_pool2d",
                                           "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad",
                                           "adaptive_avg_pool2d", "adaptive_avg_pool2d_grad", "batch_norm", "batch_norm_stats",
                                           "fft", "ifft", "rfft", "irfft"};
  for (const auto& op : ops) {
    INFO("op ", op);
    REQUIRE(host.count(op) == 1);
    if (host_only.count(op)) {
      CHECK(cuda.count(op) == 0);
      continue;
    }
    REQUIRE(cuda.count(op) == 1);
    std::set<std::string> expect = host.at(op);
    // make_complex of 16-bit floats would need a 16-bit complex dtype, which texpr does not have
    if (expect.count("float32") && !expect.count("float16") && op != "make_complex") expect.insert({"float16", "bfloat16"});
    if (op == "matmul") expect.erase("int32"), expect.erase("int64");
    if (op == "scaled_matmul") expect.erase("float8_e5m2");  // cuBLASLt has no E5M2 x E5M2 GEMM
    if (cusolver_rows.count(op)) expect.erase("float16"), expect.erase("bfloat16");  // cuSOLVER: no 16-bit factorisation
    CHECK(cuda.at(op) == expect);
  }
  CHECK(ops.size() > 40);
}

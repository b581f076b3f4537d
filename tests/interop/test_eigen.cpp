// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Eigen interop: texpr views of Eigen matrices (column- and row-major), blocks and strided maps, and Eigen maps of
// texpr tensors and strided views; values agree element for element and writes go through to the same memory.
#include <texpr/interop/eigen.hpp>
#include <texpr/texpr.hpp>

#include <doctest/doctest.h>

#include <cmath>

namespace tx = texpr;

TEST_CASE("from_eigen: column-major and row-major matrices, blocks, strided maps; expressions over them") {
  Eigen::MatrixXd a = Eigen::MatrixXd::Random(5, 7);  // column-major
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> r = Eigen::MatrixXd::Random(7, 3);
  CHECK(a.maxCoeff() > 0);
  CHECK(a.minCoeff() < 0);  // the data vary in sign
  auto va = tx::from_eigen(a);
  auto vr = tx::from_eigen(r);
  static_assert(std::is_same_v<decltype(va), tx::view<double, 2, tx::host>>);
  CHECK(va.shape() == tx::shape_t<2>{5, 7});
  CHECK(va.strides() == tx::shape_t<2>{1, 5});
  CHECK(vr.strides() == tx::shape_t<2>{3, 1});
  for (Eigen::Index i = 0; i < 5; ++i)
    for (Eigen::Index j = 0; j < 7; ++j) CHECK(va(i, j) == a(i, j));
  // A texpr matmul of the two views against Eigen's product (tolerance: k = 7 terms of magnitude <= 1).
  tx::tensor<double, 2> c = tx::matmul(va, vr);
  const Eigen::MatrixXd want = a * r;
  for (Eigen::Index i = 0; i < 5; ++i)
    for (Eigen::Index j = 0; j < 3; ++j) CHECK(std::abs(c(i, j) - want(i, j)) <= 1e-14);
  // A block keeps the parent's outer stride; writing through the view changes the matrix.
  auto blk = a.block(1, 2, 3, 4);
  auto vb = tx::from_eigen(blk);
  CHECK(vb.shape() == tx::shape_t<2>{3, 4});
  CHECK(vb(2, 3) == a(3, 5));
  const double before = a(3, 5), outside = a(0, 0);
  vb = vb * 2.0;
  CHECK(a(3, 5) == 2 * before);  // written through the block's view into the matrix
  CHECK(a(0, 0) == outside);     // outside the block: untouched
  // A const matrix gives a view of const elements.
  const Eigen::MatrixXf cf = Eigen::MatrixXf::Constant(2, 2, 1.5f);
  auto vc = tx::from_eigen(cf);
  static_assert(std::is_same_v<decltype(vc), tx::view<const float, 2, tx::host>>);
  CHECK(tx::sum(vc).item() == 6.0f);
  // A map with an inner stride (every other element of a buffer).
  double buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = i - 6;
  Eigen::Map<Eigen::MatrixXd, 0, Eigen::Stride<Eigen::Dynamic, 2>> strided(buf, 2, 3, Eigen::Stride<Eigen::Dynamic, 2>(4, 2));
  auto vs = tx::from_eigen(strided);
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 3; ++j) CHECK(vs(i, j) == strided(i, j));
}

TEST_CASE("to_eigen: tensors and strided views map without copying") {
  tx::tensor<float, 2> t({2, 3}, {1, -2, 3, -4, 5, -6});
  auto m = tx::to_eigen(t);
  CHECK(m.rows() == 2);
  CHECK(m.cols() == 3);
  CHECK(m(1, 2) == -6.0f);
  m(0, 1) = 20.0f;  // writes into the tensor
  CHECK(t(0, 1) == 20.0f);
  // The transpose, as a strided view, maps as Eigen's transpose.
  const tx::view<const float, 2> tt(t.data(), {3, 2}, {1, 3});
  auto mt = tx::to_eigen(tt);
  CHECK(mt.isApprox(tx::to_eigen(std::as_const(t)).transpose()));
  // Eigen arithmetic on the map against texpr on the tensor.
  const Eigen::MatrixXf prod = tx::to_eigen(std::as_const(t)) * mt;
  tx::tensor<float, 2> want = tx::matmul(t, tt);
  for (Eigen::Index i = 0; i < 2; ++i)
    for (Eigen::Index j = 0; j < 2; ++j) CHECK(prod(i, j) == doctest::Approx(want(i, j)).epsilon(1e-6));
}

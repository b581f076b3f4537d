// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dtype sets: the vocabulary ops declare their dtypes in (floating, signed_integral, numeric, all, ...), and the
// small algebra the registry tables use to adjust an op's declared set per backend (`declared + half_floats`).
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>

#include "texpr/core/dtype.hpp"
#include "texpr/detail/type_list.hpp"

namespace texpr {

/// A set of dtypes (element types), written once and combined with + and -.
template <class... T> struct dtype_set {
  using list = detail::type_list<T...>;  ///< The dtypes, in the support matrix's column order.
};

/// float and double.
inline constexpr dtype_set<float, double> floating{};
/// The 16-bit floats, stored in 16 bits and computed in float.
inline constexpr dtype_set<half, bfloat16> half_floats{};
/// The 8-bit floats (OCP FP8), stored in 8 bits and computed in float.
inline constexpr dtype_set<float8_e4m3, float8_e5m2> float8{};
/// The 8-bit types (the 8-bit floats and int8): storage and conversion (cast, copy) and scaled_matmul, not
/// elementwise arithmetic.
inline constexpr dtype_set<float8_e4m3, float8_e5m2, std::int8_t> eight_bit{};
/// int32 and int64 (texpr's integers are signed; bool is not one of them).
inline constexpr dtype_set<std::int32_t, std::int64_t> signed_integral{};
/// floating and signed_integral: what arithmetic is defined on.
inline constexpr dtype_set<float, double, std::int32_t, std::int64_t> numeric{};
/// bool alone.
inline constexpr dtype_set<bool> boolean{};
/// numeric and bool (what comparisons for equality and `where` take).
inline constexpr dtype_set<float, double, std::int32_t, std::int64_t, bool> numeric_and_bool{};
/// The complex dtypes, std::complex<float> (complex64) and std::complex<double> (complex128): added per op where
/// the op is defined on them (`numeric + complex_dtypes`), never implied by another set.
inline constexpr dtype_set<std::complex<float>, std::complex<double>> complex_dtypes{};
/// Every dtype texpr computes with (the 8-bit types are added per row: `declared + eight_bit`).
inline constexpr dtype_set<float, double, half, bfloat16, std::int32_t, std::int64_t, bool> all_dtypes{};

namespace detail {

/// The canonical order of dtypes (the support matrix's columns); sets are kept sorted in it.
using dtype_order = type_list<float, double, half, bfloat16, float8_e4m3, float8_e5m2, std::int8_t, std::int32_t, std::int64_t, bool,
                              std::complex<float>, std::complex<double>>;

template <class S> struct set_list;
template <class... T> struct set_list<dtype_set<T...>> { using type = type_list<T...>; };

template <class List> struct to_set;
template <class... T> struct to_set<type_list<T...>> { using type = dtype_set<T...>; };

// The dtypes of dtype_order for which In<T> holds, as a sorted dtype_set.
template <template <class> class In, class Order = dtype_order> struct ordered_set;
template <template <class> class In, class... T> struct ordered_set<In, type_list<T...>> {
  using type = typename to_set<join_lists_t<std::conditional_t<In<T>::value, type_list<T>, type_list<>>...>>::type;
};

template <class A, class B> struct set_union_of {
  template <class T> using in = std::bool_constant<contains_v<typename set_list<A>::type, T> || contains_v<typename set_list<B>::type, T>>;
  using type = typename ordered_set<in>::type;
};
template <class A, class B> struct set_difference_of {
  template <class T> using in = std::bool_constant<contains_v<typename set_list<A>::type, T> && !contains_v<typename set_list<B>::type, T>>;
  using type = typename ordered_set<in>::type;
};

} // namespace detail

/// Set union.
template <class... A, class... B> constexpr auto operator+(dtype_set<A...>, dtype_set<B...>) {
  return typename detail::set_union_of<dtype_set<A...>, dtype_set<B...>>::type{};
}
/// Set difference.
template <class... A, class... B> constexpr auto operator-(dtype_set<A...>, dtype_set<B...>) {
  return typename detail::set_difference_of<dtype_set<A...>, dtype_set<B...>>::type{};
}

/// True when T is in the dtype set S (a dtype_set type).
template <class S, class T> inline constexpr bool in_dtype_set_v = detail::contains_v<typename detail::set_list<S>::type, T>;

/// Placeholder for an op's declared dtype set in a registry row: `declared`, `declared + half_floats`,
/// `declared - signed_integral`. A row's dtypes are resolved against the op (resolve_dtypes_t).
struct declared_dtypes {};
/// The op's own dtype set, as a registry row writes it.
inline constexpr declared_dtypes declared{};

namespace detail {
template <class L, class R, bool Plus> struct dtype_binary {};
} // namespace detail

/// `declared + set`: the op's dtypes and more (a backend adding dtypes, e.g. cuda's 16-bit floats).
template <class... B> constexpr auto operator+(declared_dtypes, dtype_set<B...>) {
  return detail::dtype_binary<declared_dtypes, dtype_set<B...>, true>{};
}
/// `declared - set`: the op's dtypes less some (a backend without a kernel for them).
template <class... B> constexpr auto operator-(declared_dtypes, dtype_set<B...>) {
  return detail::dtype_binary<declared_dtypes, dtype_set<B...>, false>{};
}
/// Chains further additions and removals: `declared + half_floats - signed_integral`.
template <class L, class R, bool P, class... B> constexpr auto operator+(detail::dtype_binary<L, R, P>, dtype_set<B...>) {
  return detail::dtype_binary<detail::dtype_binary<L, R, P>, dtype_set<B...>, true>{};
}
/// See the overload above.
template <class L, class R, bool P, class... B> constexpr auto operator-(detail::dtype_binary<L, R, P>, dtype_set<B...>) {
  return detail::dtype_binary<detail::dtype_binary<L, R, P>, dtype_set<B...>, false>{};
}

namespace detail {
template <class Expr, class Declared> struct resolve { using type = Expr; };  // a plain dtype_set
template <class Declared> struct resolve<declared_dtypes, Declared> { using type = Declared; };
template <class L, class R, bool Plus, class Declared> struct resolve<dtype_binary<L, R, Plus>, Declared> {
  using left = typename resolve<L, Declared>::type;
  using type = std::conditional_t<Plus, typename set_union_of<left, R>::type, typename set_difference_of<left, R>::type>;
};
} // namespace detail

/// The dtype set a registry row's column denotes for an op that declares `Declared`.
template <class Expr, class Declared> using resolve_dtypes_t = typename detail::resolve<Expr, Declared>::type;

/// The dtype set op tag Op declares (its static member `dtypes`).
template <class Op> using declared_dtypes_t = std::remove_cvref_t<decltype(Op::dtypes)>;

} // namespace texpr

// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A minimal tuple that is an aggregate: trivially copyable when its members are, so accessors holding one can be
// passed to CUDA kernels by value, and usable in device code without --expt-relaxed-constexpr.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "texpr/core/config.hpp"

namespace texpr::detail {

template <std::size_t I, class T> struct tuple_slot {
  T value;
};

template <class Seq, class... T> struct tuple_impl;
template <std::size_t... I, class... T> struct tuple_impl<std::index_sequence<I...>, T...> : tuple_slot<I, T>... {
  static constexpr std::size_t size = sizeof...(T);  ///< Number of members.
};

/// An aggregate tuple: `tuple<A, B>{{a}, {b}}`, or make_tuple(a, b).
template <class... T> using tuple = tuple_impl<std::index_sequence_for<T...>, T...>;

/// Member I.
template <std::size_t I, class T> TEXPR_HOST_DEVICE constexpr const T& get(const tuple_slot<I, T>& s) { return s.value; }
/// Member I.
template <std::size_t I, class T> TEXPR_HOST_DEVICE constexpr T& get(tuple_slot<I, T>& s) { return s.value; }

/// The type of member I of tuple type Tup.
template <std::size_t I, class Tup> using tuple_element_t = std::remove_cvref_t<decltype(get<I>(std::declval<const Tup&>()))>;

/// A tuple of copies of the arguments.
template <class... T> constexpr tuple<T...> make_tuple(T... v) { return tuple<T...>{{std::move(v)}...}; }

/// f(members...).
template <class F, std::size_t... I, class... T>
TEXPR_HOST_DEVICE constexpr decltype(auto) apply(F&& f, const tuple_impl<std::index_sequence<I...>, T...>& t) {
  return std::forward<F>(f)(get<I>(t)...);
}
/// f(members...), members mutable.
template <class F, std::size_t... I, class... T>
TEXPR_HOST_DEVICE constexpr decltype(auto) apply(F&& f, tuple_impl<std::index_sequence<I...>, T...>& t) {
  return std::forward<F>(f)(get<I>(t)...);
}

} // namespace texpr::detail

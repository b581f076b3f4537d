// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Type lists and the few algorithms over them that the registries, placement and autograd use (Mp11 style).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace texpr::detail {

/// A list of types.
template <class... Ts> struct type_list {
  static constexpr std::size_t size = sizeof...(Ts);  ///< Number of types.
};

/// False for any arguments; delays a static_assert to instantiation.
template <class... Ts> inline constexpr bool always_false_v = false;

/// True when T is one of the list's types.
template <class List, class T> struct contains;
template <class... Ts, class T> struct contains<type_list<Ts...>, T> : std::bool_constant<(std::is_same_v<Ts, T> || ...)> {};
template <class List, class T> inline constexpr bool contains_v = contains<List, T>::value;

/// The concatenation of lists.
template <class... Lists> struct join_lists { using type = type_list<>; };
template <class... A> struct join_lists<type_list<A...>> { using type = type_list<A...>; };
template <class... A, class... B, class... Rest> struct join_lists<type_list<A...>, type_list<B...>, Rest...> {
  using type = typename join_lists<type_list<A..., B...>, Rest...>::type;
};
template <class... Lists> using join_lists_t = typename join_lists<Lists...>::type;

/// The list without types for which Pred<T>::value is false.
template <template <class> class Pred, class List> struct filter;
template <template <class> class Pred, class... Ts> struct filter<Pred, type_list<Ts...>> {
  using type = join_lists_t<std::conditional_t<Pred<Ts>::value, type_list<Ts>, type_list<>>...>;
};
template <template <class> class Pred, class List> using filter_t = typename filter<Pred, List>::type;

/// The list with F<T> for each T.
template <template <class> class F, class List> struct transform;
template <template <class> class F, class... Ts> struct transform<F, type_list<Ts...>> { using type = type_list<F<Ts>...>; };
template <template <class> class F, class List> using transform_t = typename transform<F, List>::type;

/// The list with each type once, first occurrences kept in order.
template <class List, class Acc = type_list<>> struct unique { using type = Acc; };
template <class H, class... T, class... Acc> struct unique<type_list<H, T...>, type_list<Acc...>> {
  using type = typename unique<type_list<T...>, std::conditional_t<(std::is_same_v<H, Acc> || ...), type_list<Acc...>,
                                                                   type_list<Acc..., H>>>::type;
};
template <class List> using unique_t = typename unique<List>::type;

/// The list without `void`s (the X-macro tables end their lists with one).
template <class T> struct is_not_void : std::bool_constant<!std::is_void_v<T>> {};
template <class List> using strip_void_t = filter_t<is_not_void, List>;

/// Calls f.template operator()<T>() for each type of the list, in order.
template <class F, class... Ts> constexpr void for_each_type(type_list<Ts...>, F&& f) {
  (f.template operator()<Ts>(), ...);
}

/// Calls f.template operator()<T, I>() for each type T of the list with its index I, in order.
template <class F, class... Ts, std::size_t... I>
constexpr void for_each_indexed(type_list<Ts...>, std::index_sequence<I...>, F&& f) {
  (f.template operator()<Ts, I>(), ...);
}
template <class F, class... Ts> constexpr void for_each_indexed(type_list<Ts...> l, F&& f) {
  for_each_indexed(l, std::index_sequence_for<Ts...>{}, std::forward<F>(f));
}

} // namespace texpr::detail

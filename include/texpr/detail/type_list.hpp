// A minimal type list used by the registries and the placement traversal.
#pragma once

#include <cstddef>
#include <type_traits>

namespace texpr::detail {

template <class... Ts> struct type_list { static constexpr std::size_t size = sizeof...(Ts); };

// Drops the `void` that terminates the lists the registry macros build.
template <class List, class Acc = type_list<>> struct strip_void;
template <class... Acc> struct strip_void<type_list<>, type_list<Acc...>> { using type = type_list<Acc...>; };
template <class H, class... T, class... Acc> struct strip_void<type_list<H, T...>, type_list<Acc...>> {
  using type = typename strip_void<type_list<T...>,
                                   std::conditional_t<std::is_void_v<H>, type_list<Acc...>, type_list<Acc..., H>>>::type;
};
template <class List> using strip_void_t = typename strip_void<List>::type;

template <class F, class... Ts>
constexpr void for_each_type(type_list<Ts...>, F&& f) {
  (f.template operator()<Ts>(), ...);
}

template <class... Ts> inline constexpr bool always_false_v = false;

} // namespace texpr::detail

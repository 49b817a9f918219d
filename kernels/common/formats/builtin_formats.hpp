#pragma once
// The one list of built-in row formats. Everything that differs by format is read from a
// format's traits through this list: the properties (row_decode.hpp), the encoders
// (row_encode.hpp), the registry of names and checkpoint dtypes (lib/format), and the one
// dispatch that instantiates the device kernels for each (kernels/cuda/lookup_cuda.cu).

#include <cstddef>
#include <type_traits>

#include "kernels/common/formats/bf16.hpp"
#include "kernels/common/formats/f16.hpp"
#include "kernels/common/formats/f32.hpp"
#include "kernels/common/formats/fp8.hpp"
#include "kernels/common/formats/fp8_e8m0.hpp"
#include "kernels/common/formats/nvfp4.hpp"

namespace pleshard::kernels {

template <typename... Formats>
struct FormatList {};

using BuiltinFormats = FormatList<F32Format, Bf16Format, F16Format, Fp8Format, Nvfp4Format, Fp8E8m0Format>;

// Each built-in's id (its traits' `id`: a RowFormat enumerator, or RowFormat{n} for a format
// no code names) is its own and below the registered formats' ids.
template <typename... Formats>
constexpr bool ids_distinct(FormatList<Formats...>) {
  const int ids[] = {static_cast<int>(Formats::id)...};
  for (std::size_t i = 0; i < sizeof...(Formats); ++i) {
    if (ids[i] >= k_first_registered_format) return false;
    for (std::size_t j = 0; j < i; ++j)
      if (ids[i] == ids[j]) return false;
  }
  return true;
}
static_assert(ids_distinct(BuiltinFormats{}), "two built-in row formats share an id, or one is a registered format's");

template <typename Fn, typename... Formats>
PLESHARD_HD constexpr bool visit_format_in(FormatList<Formats...>, RowFormat format, Fn& fn) {
  return ((format == Formats::id && (fn(Formats{}), true)) || ...);
}

// Calls fn(Traits{}) with the traits of built-in `format` (Traits::id is then a constant of
// the format, for templates); false, fn not called, where `format` is a registered one.
template <typename Fn>
PLESHARD_HD constexpr bool visit_format(RowFormat format, Fn&& fn) {
  return visit_format_in(BuiltinFormats{}, format, fn);
}

// A property of `format`: of_traits(Traits{}) for a built-in format, of_hooks(its hooks) for
// a registered one (on the host; device code never sees one, GPU tiers refuse them).
template <typename T, typename OfTraits, typename OfHooks>
PLESHARD_HD constexpr T format_property(RowFormat format, OfTraits of_traits, OfHooks of_hooks) {
  T value{};
  if (visit_format(format, [&](auto f) { value = of_traits(f); })) return value;
#ifndef __CUDA_ARCH__
  value = of_hooks(registered_format_hooks(format));
#else
  (void)of_hooks;
#endif
  return value;
}

// Calls fn(Traits{}) for every built-in format, in the list's order.
template <typename Fn, typename... Formats>
constexpr void for_each_format_in(FormatList<Formats...>, Fn& fn) {
  (fn(Formats{}), ...);
}
template <typename Fn>
constexpr void for_each_builtin_format(Fn&& fn) {
  for_each_format_in(BuiltinFormats{}, fn);
}

template <RowFormat F, typename List>
struct TraitsIn;
template <RowFormat F, typename First, typename... Rest>
struct TraitsIn<F, FormatList<First, Rest...>>
    : std::conditional_t<First::id == F, std::type_identity<First>, TraitsIn<F, FormatList<Rest...>>> {};

// The traits of built-in format F.
template <RowFormat F>
using FormatTraits = typename TraitsIn<F, BuiltinFormats>::type;

}  // namespace pleshard::kernels

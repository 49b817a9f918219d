#pragma once
// Arguments and results taken or given as any Python object but shown in signatures — help(),
// and the stub pleshard.pyi that tests/python/test_stub.py compares with them — as the types
// they are: an argument is read and refused inside the ranks' agreement, never by pybind11 on
// one rank (a TypeError there would leave the others waiting), so its C++ type is an object;
// what it takes is the type shown. (Engine's keywords are shown by the option table:
// engine_keywords.hpp.)

#include <pybind11/pybind11.h>

namespace pleshard::python {

template <typename Shown>
class Typed : public pybind11::object {
 public:
  using object::object;
  Typed() = default;
  Typed(const pybind11::object& value) : object(value) {}  // NOLINT(google-explicit-constructor): a result as shown
  static bool check_(pybind11::handle value) { return value.ptr() != nullptr; }
};

namespace shown {
using pybind11::detail::const_name;
// clang-format off
struct Path { static constexpr auto name = const_name("str | bytes | os.PathLike"); };
struct OptionalInt { static constexpr auto name = const_name("int | None"); };
struct OptionalFlag { static constexpr auto name = const_name("bool | None"); };
struct IntArray { static constexpr auto name = const_name("numpy.typing.ArrayLike"); };
struct Contexts { static constexpr auto name = const_name("numpy.typing.ArrayLike | list[numpy.typing.ArrayLike | None] | None"); };
struct EmbeddingsList { static constexpr auto name = const_name("list[pleshard.Embeddings]"); };
struct Mapping { static constexpr auto name = const_name("dict[str, typing.Any]"); };
struct Any { static constexpr auto name = const_name("typing.Any"); };
struct OptionalDevice { static constexpr auto name = const_name("tuple[int, int] | None"); };
struct OptionalVersion { static constexpr auto name = const_name("tuple[int, int] | None"); };
struct OptionalDtype { static constexpr auto name = const_name("numpy.typing.DTypeLike | None"); };
struct Array { static constexpr auto name = const_name("numpy.ndarray"); };
struct Pair { static constexpr auto name = const_name("tuple[int, int]"); };
struct EmbeddingsInstance { static constexpr auto name = const_name("pleshard.Embeddings"); };
struct OptionalTexts { static constexpr auto name = const_name("list[str] | None"); };
// clang-format on
}  // namespace shown

}  // namespace pleshard::python

namespace pybind11::detail {
template <typename Shown>
struct handle_type_name<pleshard::python::Typed<Shown>> {
  static constexpr auto name = Shown::name;
};
}  // namespace pybind11::detail

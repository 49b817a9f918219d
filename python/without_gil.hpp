#pragma once
// Engine work without the GIL that ends cleanly when the interpreter exits under it.
//
// Python (3.8 to 3.13) ends a thread that takes the GIL back while the interpreter finalizes
// (a daemon thread whose step finishes after the main thread returned) with pthread_exit,
// which unwinds the thread's stack by a forced unwind. pybind11's gil_scoped_release takes
// the GIL back in its destructor, which is noexcept: the unwind reaching it calls
// std::terminate, and a script whose work all succeeded aborts. Here the GIL is taken back
// by an ordinary call, past which the unwind passes (pybind11 lets it through) up to the
// thread's start: the thread ends as a daemon thread running Python code does. Nothing
// unwound on the way may touch Python objects (the thread holds no GIL then).

#include <exception>
#include <optional>
#include <type_traits>

#include <pybind11/pybind11.h>

namespace pleshard::python {

template <typename Work>
auto without_gil(Work&& work) -> std::invoke_result_t<Work> {
  using Result = std::invoke_result_t<Work>;
  if constexpr (std::is_void_v<Result>) {
    (void)without_gil([&] {
      work();
      return true;
    });
  } else {
    PyThreadState* const state = PyEval_SaveThread();
    std::exception_ptr failure;
    std::optional<Result> result;
    try {
      result.emplace(work());
    } catch (...) {
      failure = std::current_exception();
    }
    PyEval_RestoreThread(state);  // outside the try: the interpreter's exit may unwind from here
    if (failure) std::rethrow_exception(failure);
    return std::move(*result);
  }
}

}  // namespace pleshard::python

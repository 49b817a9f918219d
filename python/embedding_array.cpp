#include "embedding_array.hpp"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include <pybind11/numpy.h>

#include "core/error.hpp"
#include "dlpack.hpp"
#include "format/row_format.hpp"
#include "python_values.hpp"
#include "shown_types.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace pleshard::python {

EmbeddingArray::EmbeddingArray(std::shared_ptr<PythonEngine> engine, StepOutput step, int table)
    : engine_(std::move(engine)), step_(std::move(step)), table_(table) {
  std::tie(memory_, gpu_) = engine_->output_memory();
}

void EmbeddingArray::check() const {
  if (!engine_->holds(step_)) throw SystemError(engine_->overwritten(step_));
}

namespace {

DLDataType dl_dtype(OutDtype dtype) {
  switch (dtype) {
    case OutDtype::f32:
      return {kDLFloat, 32, 1};
    case OutDtype::f16:
      return {kDLFloat, 16, 1};
    case OutDtype::bf16:
      break;
  }
  return {kDLBfloat, 16, 1};
}

// What a DLPack capsule of an array holds: the array itself (kept alive, and its engine
// with it, until the consumer lets go) and the shape the tensor points at.
struct Export {
  py::object owner;
  std::int64_t shape[2];
  DLManagedTensor tensor;
};

void release_export(DLManagedTensor* tensor) {
  // Consumers may let go on any thread, or after the interpreter has gone (then it leaks).
  if (Py_IsInitialized() == 0) return;
  py::gil_scoped_acquire gil;
  delete static_cast<Export*>(tensor->manager_ctx);
}

// A capsule that no consumer took (one that did renamed it) still owns its tensor.
void destroy_capsule(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, k_dltensor) == 0) return;
  auto* tensor = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, k_dltensor));
  tensor->deleter(tensor);
}

// An Embeddings as the Python object that holds it: the NumPy views and DLPack capsules made
// from it keep it, and so its slot's memory, alive.
using EmbeddingsObject = Typed<shown::EmbeddingsInstance>;

DLDevice device_of(const EmbeddingArray& a) { return a.on_gpu() ? DLDevice{kDLCUDA, a.gpu()} : DLDevice{kDLCPU, 0}; }

// `max_version` is answered with the unversioned capsule every consumer reads (DLPack 0.8).
Typed<shown::Any> to_dlpack(const EmbeddingsObject& self, const Typed<shown::OptionalInt>& stream,
                            const Typed<shown::OptionalVersion>& /*max_version*/,
                            const Typed<shown::OptionalDevice>& dl_device, const Typed<shown::OptionalFlag>& copy) {
  const auto& a = self.cast<const EmbeddingArray&>();
  a.check();
  if (!copy.is_none() && argument_as<bool>(copy, "__dlpack__ copy", "True, False or None"))
    throw InputError("__dlpack__(copy=True): pleshard hands its outputs over without a copy; copy after importing");
  const DLDevice device = device_of(a);
  if (!dl_device.is_none()) {
    const auto asked =
        argument_as<std::pair<int, int>>(dl_device, "__dlpack__ dl_device", "a (device type, device id) pair or None");
    if (asked.first != device.device_type || asked.second != device.device_id)
      throw InputError("__dlpack__(dl_device=(" + std::to_string(asked.first) + ", " + std::to_string(asked.second) +
                       ")): the array is on device (" + std::to_string(device.device_type) + ", " +
                       std::to_string(device.device_id) + ")");
  }
  const std::intptr_t consumer =
      stream.is_none() ? 1 : argument_as<std::intptr_t>(stream, "__dlpack__ stream", "an int or None");
  if (a.on_gpu()) {
    // DLPack: None is the legacy default stream, -1 asks for no ordering, 0 is ambiguous.
    if (consumer == 0)
      throw InputError(
          "__dlpack__(stream=0) is ambiguous for CUDA: pass 1 (the legacy default stream), 2 (the "
          "per-thread one) or a stream's handle");
    if (consumer != -1) a.engine().share(a.step(), a.table(), reinterpret_cast<void*>(consumer));
  } else if (!stream.is_none() && consumer != -1) {
    throw InputError("__dlpack__(stream=...): the array is in host memory, which takes no stream");
  }
  const EmbeddingView& v = a.view();
  auto* e = new Export{self, {v.rows, v.width}, {}};
  DLTensor& t = e->tensor.dl_tensor;
  t.data = const_cast<void*>(v.data);
  t.device = device;
  t.ndim = 2;
  t.dtype = dl_dtype(v.dtype);
  t.shape = e->shape;
  t.strides = nullptr;
  t.byte_offset = 0;
  e->tensor.manager_ctx = e;
  e->tensor.deleter = release_export;
  PyObject* capsule = PyCapsule_New(&e->tensor, k_dltensor, destroy_capsule);
  if (capsule == nullptr) {
    delete e;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::capsule>(capsule);
}

Typed<shown::Mapping> cuda_array_interface(const EmbeddingArray& a) {
  if (!a.on_gpu()) throw py::attribute_error("the array is in host memory: no __cuda_array_interface__");
  const EmbeddingView& v = a.view();
  if (v.dtype == OutDtype::bf16)
    throw py::attribute_error("bfloat16 has no __cuda_array_interface__ type; use __dlpack__ (torch.from_dlpack)");
  a.check();
  // Version 3: the consumer orders its reads after the engine's stream.
  return py::dict("shape"_a = py::make_tuple(v.rows, v.width), "typestr"_a = v.dtype == OutDtype::f32 ? "<f4" : "<f2",
                  "data"_a = py::make_tuple(reinterpret_cast<std::uintptr_t>(v.data), false), "version"_a = 3,
                  "strides"_a = py::none(), "stream"_a = reinterpret_cast<std::uintptr_t>(a.step().stream));
}

// A read-only NumPy view of host rows, keeping the array alive; `raw`: the values' bits as
// unsigned words (bfloat16 has no NumPy dtype).
py::array host_view(const py::object& self, bool raw) {
  const auto& a = self.cast<const EmbeddingArray&>();
  a.check();
  if (a.on_gpu())
    throw InputError("the array is in GPU memory: read it through DLPack (torch.from_dlpack, cupy.from_dlpack)");
  const EmbeddingView& v = a.view();
  if (!raw && v.dtype == OutDtype::bf16)
    throw InputError(
        "bfloat16 has no NumPy dtype: use out_dtype='float32', torch.from_dlpack, or bits() for the "
        "raw 16-bit words");
  const std::size_t item = kernels::out_bytes(v.dtype);
  const py::dtype dtype =
      raw ? py::dtype(item == 2 ? "uint16" : "uint32") : py::dtype(v.dtype == OutDtype::f32 ? "float32" : "float16");
  py::array out(dtype, {v.rows, v.width}, {static_cast<std::int64_t>(v.width * item), static_cast<std::int64_t>(item)},
                v.data, self);
  out.attr("setflags")("write"_a = false);
  return out;
}

}  // namespace

void bind_embedding_array(py::module_& m) {
  py::class_<EmbeddingArray>(m, "Embeddings", R"(One table's embeddings of one step: [rows, width] in the engine's
memory (no copy). Valid until output_slots later forward() calls have run; any use after
that raises RuntimeError. Exported by __dlpack__ (torch.from_dlpack, cupy.from_dlpack,
numpy.from_dlpack), __cuda_array_interface__ on a GPU, and as a NumPy view on the host.)")
      .def("__dlpack__", &to_dlpack, "stream"_a = py::none(), "max_version"_a = py::none(), "dl_device"_a = py::none(),
           "copy"_a = py::none())
      .def("__dlpack_device__",
           [](const EmbeddingArray& a) -> Typed<shown::Pair> {
             const DLDevice d = device_of(a);
             return py::make_tuple(d.device_type, d.device_id);
           })
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def(
          "__array__",
          [](const EmbeddingsObject& self, const Typed<shown::OptionalDtype>& dtype,
             const Typed<shown::OptionalFlag>& /*copy*/) {
            py::array view = host_view(self, false);
            return dtype.is_none() ? view : py::array(view.attr("astype")(dtype));
          },
          "dtype"_a = py::none(), "copy"_a = py::none())
      .def(
          "numpy", [](const EmbeddingsObject& self) { return host_view(self, false); },
          "A read-only NumPy view (host tier; float32 and float16)")
      .def(
          "bits", [](const EmbeddingsObject& self) { return host_view(self, true); },
          "The values' bits as a read-only NumPy view of unsigned words (host tier; any dtype)")
      .def_property_readonly("shape",
                             [](const EmbeddingArray& a) -> Typed<shown::Pair> {
                               a.check();
                               return py::make_tuple(a.view().rows, a.view().width);
                             })
      .def("__len__",
           [](const EmbeddingArray& a) {
             a.check();
             return a.view().rows;
           })
      .def_property_readonly("dtype", [](const EmbeddingArray& a) { return std::string(to_string(a.view().dtype)); })
      .def_property_readonly(
          "first", [](const EmbeddingArray& a) { return a.view().first; },
          "The step's token index of row 0 (non-zero for TP ranks under sequence parallelism)")
      .def_property_readonly("table", &EmbeddingArray::table)
      .def_property_readonly("step", [](const EmbeddingArray& a) { return a.step().step; })
      .def_property_readonly("slot", [](const EmbeddingArray& a) { return a.step().slot; })
      .def_property_readonly(
          "device",
          [](const EmbeddingArray& a) { return a.on_gpu() ? "cuda:" + std::to_string(a.gpu()) : std::string("cpu"); })
      .def_property_readonly("data_ptr",
                             [](const EmbeddingArray& a) {
                               a.check();
                               return reinterpret_cast<std::uintptr_t>(a.view().data);
                             })
      .def_property_readonly("nbytes",
                             [](const EmbeddingArray& a) {
                               a.check();
                               return a.view().bytes();
                             })
      .def_property_readonly("valid", &EmbeddingArray::valid,
                             "Whether the slot still holds this step's rows (no output_slots later steps ran)")
      .def("__repr__", [](const EmbeddingArray& a) {
        const EmbeddingView& v = a.view();
        return "pleshard.Embeddings(table=" + std::to_string(a.table()) + ", step=" + std::to_string(a.step().step) +
               ", shape=(" + std::to_string(v.rows) + ", " + std::to_string(v.width) +
               "), dtype=" + to_string(v.dtype) +
               ", device=" + (a.on_gpu() ? "cuda:" + std::to_string(a.gpu()) : "cpu") +
               (a.engine().closed() ? ", engine closed"
                : a.valid()         ? ""
                                    : ", overwritten") +
               ")";
      });
}

}  // namespace pleshard::python

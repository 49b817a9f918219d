#include "token_arrays.hpp"

#include <cstring>
#include <stdexcept>

#include "core/error.hpp"
#include "dlpack.hpp"
#include "exec/stream_order.hpp"
#include "python_names.hpp"
#include "python_values.hpp"

namespace py = pybind11;

namespace pleshard::python {

namespace {

// A dense row-major layout: strides (in elements) that a copy can read as one block.
bool dense(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
  std::int64_t expected = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 1 && strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) text += (d > 0 ? ", " : "") + std::to_string(shape[d]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

void check_layout(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides,
                  const std::string& name, int ndim) {
  if (static_cast<int>(shape.size()) != ndim)
    throw InputError(name + ": expected " + std::to_string(ndim) + " dimension" + (ndim > 1 ? "s" : "") +
                     ", got shape " + shape_text(shape));
  if (!dense(shape, strides))
    throw InputError(name + ": expected a contiguous array (row-major, no gaps), got strides " + shape_text(strides) +
                     " in elements for shape " + shape_text(shape));
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t count = 1;
  for (const std::int64_t n : shape) count *= n;
  return count;
}

// Widens the dense elements of `bytes` (4 or 8) each at `data` (host memory).
IntArray widen(const void* data, int bytes, std::vector<std::int64_t> shape) {
  const std::int64_t count = element_count(shape);
  IntArray out{std::vector<std::int64_t>(static_cast<std::size_t>(count)), std::move(shape)};
  if (bytes == 8) {
    if (count > 0) std::memcpy(out.values.data(), data, static_cast<std::size_t>(count) * 8);
  } else {
    const auto* narrow = static_cast<const std::int32_t*>(data);
    for (std::int64_t i = 0; i < count; ++i) out.values[static_cast<std::size_t>(i)] = narrow[i];
  }
  return out;
}

std::string dlpack_dtype(const DLDataType& t) {
  const char* kind = t.code == kDLInt      ? "int"
                     : t.code == kDLUInt   ? "uint"
                     : t.code == kDLFloat  ? "float"
                     : t.code == kDLBfloat ? "bfloat"
                                           : nullptr;
  const std::string lanes = t.lanes != 1 ? " x" + std::to_string(t.lanes) : "";
  if (kind == nullptr)
    return "of DLPack type code " + std::to_string(t.code) + " (" + std::to_string(t.bits) + " bits)";
  return kind + std::to_string(t.bits) + lanes;
}

// Reads a capsule's tensor and releases it (the consumer owns a "dltensor" capsule).
IntArray from_capsule(const py::capsule& capsule, const std::string& name, int ndim) {
  const char* label = PyCapsule_GetName(capsule.ptr());
  if (label == nullptr || std::strcmp(label, k_dltensor) != 0)
    throw InputError(name +
                     (label == nullptr
                          ? std::string(": a capsule without a name; expected a DLPack \"") + k_dltensor + "\" capsule"
                          : ": a DLPack capsule already consumed (named \"" + std::string(label) + "\")"));
  auto* managed = capsule.get_pointer<DLManagedTensor>();
  PyCapsule_SetName(capsule.ptr(), k_used_dltensor);
  struct Release {
    DLManagedTensor* t;
    ~Release() {
      if (t->deleter != nullptr) t->deleter(t);
    }
  } release{managed};
  const DLTensor& t = managed->dl_tensor;
  if (!(t.dtype.code == kDLInt && (t.dtype.bits == 32 || t.dtype.bits == 64) && t.dtype.lanes == 1))
    throw InputError(name + ": dtype " + dlpack_dtype(t.dtype) + "; expected int32 or int64");
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  std::vector<std::int64_t> strides(static_cast<std::size_t>(t.ndim));
  std::int64_t compact = 1;  // null strides: compact row-major
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[static_cast<std::size_t>(d)] = t.strides != nullptr ? t.strides[d] : compact;
    compact *= t.shape[d];
  }
  const int bytes = t.dtype.bits / 8;
  const auto* data = static_cast<const std::uint8_t*>(t.data) + t.byte_offset;
  check_layout(shape, strides, name, ndim);
  switch (t.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLCUDAManaged:
      return widen(data, bytes, shape);
    case kDLCUDA: {
      std::vector<std::uint8_t> host(static_cast<std::size_t>(element_count(shape) * bytes));
      if (!host.empty()) copy_gpu_to_host(host.data(), data, host.size());
      return widen(host.data(), bytes, shape);
    }
    default:
      throw InputError(name + ": DLPack device type " + std::to_string(t.device.device_type) +
                       "; expected host or CUDA memory");
  }
}

// A buffer's element type in NumPy's words ("int16", "float64"), from its struct format.
std::string buffer_dtype(const std::string& format, py::ssize_t itemsize) {
  const std::string bits = std::to_string(8 * itemsize);
  if (format.size() == 1 && std::strchr("bhilqn", format[0]) != nullptr) return "int" + bits;
  if (format.size() == 1 && std::strchr("BHILQN", format[0]) != nullptr) return "uint" + bits;
  if (format.size() == 1 && std::strchr("efd", format[0]) != nullptr) return "float" + bits;
  return "of buffer format '" + format + "'";
}

IntArray from_buffer(const py::handle& object, const std::string& name, int ndim) {
  const py::buffer_info info = py::reinterpret_borrow<py::buffer>(object).request();
  std::string format = info.format;
  // Native or little-endian byte order (this machine's); big-endian is refused below.
  if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.erase(0, 1);
  const std::string dtype = buffer_dtype(format, info.itemsize);
  if (dtype != "int32" && dtype != "int64") throw InputError(name + ": dtype " + dtype + "; expected int32 or int64");
  std::vector<std::int64_t> strides;
  for (const py::ssize_t s : info.strides) {
    if (s % info.itemsize != 0)
      throw InputError(name + ": strides of " + std::to_string(s) + " bytes are not whole items");
    strides.push_back(s / info.itemsize);
  }
  const std::vector<std::int64_t> shape(info.shape.begin(), info.shape.end());
  check_layout(shape, strides, name, ndim);
  return widen(info.ptr, static_cast<int>(info.itemsize), shape);
}

IntArray from_list(const py::sequence& list, const std::string& name, int ndim) {
  IntArray out;
  const auto read = [&](const py::handle& item, const std::string& where) {
    // Python's ints and what stands for one (NumPy's integer scalars: __index__), not bools.
    if (PyBool_Check(item.ptr()) || PyFloat_Check(item.ptr()) || PyIndex_Check(item.ptr()) == 0)
      throw InputError(where + ": " + type_name(item) + "; expected an int");
    const py::object index = py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0) throw InputError(where + ": does not fit in 64 bits");
    out.values.push_back(value);
  };
  out.shape.push_back(static_cast<std::int64_t>(py::len(list)));
  if (ndim == 1) {
    for (std::size_t i = 0; i < py::len(list); ++i) read(list[i], name + "[" + std::to_string(i) + "]");
    return out;
  }
  std::int64_t width = -1;
  for (std::size_t i = 0; i < py::len(list); ++i) {
    if (!py::isinstance<py::sequence>(list[i]) || py::isinstance<py::str>(list[i]))
      throw InputError(name + "[" + std::to_string(i) + "]: expected a list of ints");
    const py::sequence row = list[i];
    const auto n = static_cast<std::int64_t>(py::len(row));
    if (width >= 0 && n != width)
      throw InputError(name + "[" + std::to_string(i) + "]: " + std::to_string(n) + " entries, the rows before " +
                       std::to_string(width));
    width = n;
    for (std::size_t j = 0; j < row.size(); ++j)
      read(row[j], name + "[" + std::to_string(i) + "][" + std::to_string(j) + "]");
  }
  out.shape.push_back(std::max<std::int64_t>(width, 0));
  return out;
}

IntArray read_any(const py::handle& object, const std::string& name, int ndim);

}  // namespace

IntArray read_int_array(const py::handle& object, const std::string& name, int ndim) {
  // What the array's own methods raise (a tensor that needs its gradient, a CuPy array on
  // another device) is bad input, named.
  try {
    return read_any(object, name, ndim);
  } catch (const py::error_already_set& e) {
    throw InputError(name + ": " + error_line(e));
  }
}

namespace {

IntArray read_any(const py::handle& object, const std::string& name, int ndim) {
  if (PyCapsule_CheckExact(object.ptr())) return from_capsule(py::reinterpret_borrow<py::capsule>(object), name, ndim);
  if (PyObject_CheckBuffer(object.ptr()) && !py::isinstance<py::str>(object) && !py::isinstance<py::bytes>(object))
    return from_buffer(object, name, ndim);
  if (py::hasattr(object, "__dlpack__")) {
    bool on_gpu = false;
    if (py::hasattr(object, "__dlpack_device__")) {
      const auto device = argument_as<std::pair<int, int>>(
          object.attr("__dlpack_device__")(), name + ": __dlpack_device__()", "a (device type, device id) pair");
      on_gpu = device.first == kDLCUDA;
    }
    // A GPU array is read after its producer's work: the producer orders it before the
    // legacy default stream (1), on which the copy then runs.
    const py::object capsule = on_gpu ? object.attr("__dlpack__")(py::arg("stream") = 1) : object.attr("__dlpack__")();
    return from_capsule(argument_as<py::capsule>(capsule, name + ": __dlpack__()", "a DLPack capsule"), name, ndim);
  }
  if (py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object))
    return from_list(object.cast<py::sequence>(), name, ndim);
  throw InputError(name + ": " + type_name(object) +
                   "; expected an integer array (NumPy, PyTorch, CuPy, a DLPack capsule, a buffer) or a list of ints");
}

}  // namespace

}  // namespace pleshard::python

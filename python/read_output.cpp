#include "read_output.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "format/embedding_reader.hpp"
#include "python_values.hpp"
#include "shown_types.hpp"
#include "without_gil.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace pleshard::python {

namespace {

// What read_output returns: the rows and where they sit among the file's requests.
struct OutputRows {
  Typed<shown::Any> rows;  // numpy.ndarray or torch.Tensor, [count, width]
  std::string dtype;
  int table = 0;
  std::int64_t first = 0;
  py::array query_start_loc;  // int64
  Typed<shown::OptionalTexts> request_ids;
};

// Tokens [first, stop) that `rows` (None or a slice of step 1) names among `tokens`.
std::pair<std::int64_t, std::int64_t> token_range(const std::optional<py::slice>& rows, std::int64_t tokens) {
  if (!rows) return {0, tokens};
  py::ssize_t start = 0;
  py::ssize_t stop = 0;
  py::ssize_t step = 0;
  py::ssize_t count = 0;
  if (!rows->compute(static_cast<py::ssize_t>(tokens), &start, &stop, &step, &count)) throw py::error_already_set();
  if (step != 1) throw InputError("rows: a slice of step " + std::to_string(step) + "; read_output takes step 1");
  return {start, start + count};
}

OutputRows read_output(const Typed<shown::Path>& path, int table, const std::optional<py::slice>& rows, bool torch) {
  // HDF5 is not thread-safe: its calls here run with the GIL held, so that two threads' calls
  // never meet in it; only the rows' reads past HDF5 run without it. (An Engine being made
  // opens its checkpoint through HDF5 with the GIL released: docs/python.md.)
  const EmbeddingReader reader(path_of(path, "path"));
  const EmbeddingLayerShape& shape = reader.layer(table);
  const auto [first, stop] = token_range(rows, shape.tokens);
  // bfloat16 has no NumPy dtype: its 16-bit words as uint16 (as pleshard's HDF5 files hold them).
  const char* numpy_dtype = shape.dtype == OutDtype::f32   ? "float32"
                            : shape.dtype == OutDtype::f16 ? "float16"
                                                           : "uint16";
  py::array values(py::dtype(numpy_dtype), {stop - first, shape.width});
  const std::span<std::uint8_t> bytes{static_cast<std::uint8_t*>(values.mutable_data()),
                                      static_cast<std::size_t>(values.nbytes())};
  if (reader.read_past_hdf5(table))
    without_gil([&] { reader.read_rows(table, first, bytes); });
  else
    reader.read_rows(table, first, bytes);
  OutputRows out;
  out.rows = values;
  if (torch) {
    const py::module_ t = py::module_::import("torch");
    // Shares the array's memory; bfloat16's words reinterpreted, not converted.
    out.rows = shape.dtype == OutDtype::bf16
                   ? t.attr("from_numpy")(values.attr("view")("int16")).attr("view")(t.attr("bfloat16"))
                   : t.attr("from_numpy")(values);
  }
  out.dtype = to_string(shape.dtype);
  out.table = table;
  out.first = first;
  const std::vector<std::int64_t>& boundaries = reader.query_start_loc();
  out.query_start_loc = py::array_t<std::int64_t>(static_cast<py::ssize_t>(boundaries.size()), boundaries.data());
  out.request_ids = reader.request_ids() ? py::cast(*reader.request_ids()) : py::none();
  return out;
}

}  // namespace

void bind_read_output(py::module_& m) {
  py::class_<OutputRows>(m, "OutputRows", R"(One table's rows of an embedding output, as read_output read them.)")
      .def_readonly("rows", &OutputRows::rows,
                    "[count, width]: a NumPy array (float32, float16; bfloat16 as its uint16 words) or, with "
                    "torch=True, a torch.Tensor (bfloat16 as torch.bfloat16)")
      .def_readonly("dtype", &OutputRows::dtype, "The output's dtype: float32, bfloat16 or float16")
      .def_readonly("table", &OutputRows::table, "d of the dataset /ple_{d} read")
      .def_readonly("first", &OutputRows::first, "The file's token index of rows[0]")
      .def_readonly("query_start_loc", &OutputRows::query_start_loc,
                    "The file's request boundaries (int64, requests + 1): request r is tokens "
                    "[query_start_loc[r], query_start_loc[r + 1])")
      .def_readonly("request_ids", &OutputRows::request_ids,
                    "The requests' ids (pleshard run's outputs), or None (pleshard embed's)")
      .def("__repr__", [](const OutputRows& o) {
        return "pleshard.OutputRows(table=" + std::to_string(o.table) + ", first=" + std::to_string(o.first) +
               ", rows=" + std::string(py::str(o.rows.attr("shape"))) + ", dtype=" + o.dtype +
               ", requests=" + std::to_string(o.query_start_loc.size() - 1) + ")";
      });
  m.def("read_output", &read_output, "path"_a, "table"_a = 0, "rows"_a = py::none(), py::kw_only(), "torch"_a = false,
        R"(Table `table`'s embeddings of a pleshard run or embed output (docs/output.md): tokens `rows`
(a slice of step 1; None: all) as stored, read straight from the file at its offset by threads
of pread with the GIL released. Returns an OutputRows: .rows as a NumPy array (bfloat16 as its
uint16 words: (w.astype(numpy.uint32) << 16).view(numpy.float32) widens them), or with
torch=True a torch.Tensor sharing that memory (bfloat16 kept as torch.bfloat16), and the
file's .query_start_loc and .request_ids.)");
}

}  // namespace pleshard::python

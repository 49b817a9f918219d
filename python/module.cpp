// The Python module `pleshard`: the engine for PyTorch and NumPy users (docs/python.md).
// Thin: keyword arguments in, the library's engine and checks, arrays out.

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "core/collective.hpp"
#include "core/error.hpp"
#include "core/rank_threads.hpp"
#include "core/version.hpp"
#include "core/watched_wait.hpp"
#include "embedding_array.hpp"
#include "engine.hpp"
#include "engine_keywords.hpp"
#include "job/engine_option_table.hpp"
#include "python_names.hpp"
#include "python_values.hpp"
#include "read_output.hpp"
#include "runtime.hpp"
#include "shown_types.hpp"
#include "token_arrays.hpp"
#include "without_gil.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace pleshard::python {

namespace {

// An mpi4py communicator's MPI_Comm (through its Fortran handle, which needs no mpi4py
// headers); None: the world. Refused here, before any agreement: without a communicator
// there are no ranks to agree with.
MPI_Comm communicator(const py::object& comm) {
  if (comm.is_none()) return MPI_COMM_WORLD;
  py::object comm_type;
  try {
    comm_type = py::module_::import("mpi4py.MPI").attr("Comm");
  } catch (const py::error_already_set&) {
    throw InputError("comm: " + type_name(comm) + "; expected an mpi4py communicator or None");
  }
  if (!py::isinstance(comm, comm_type))
    throw InputError("comm: " + type_name(comm) + "; expected an mpi4py communicator (MPI.Comm) or None");
  const MPI_Comm handle = MPI_Comm_f2c(comm.attr("py2f")().cast<MPI_Fint>());
  if (handle == MPI_COMM_NULL) throw InputError("comm: MPI.COMM_NULL; expected a communicator of ranks");
  return handle;
}

// Every keyword but comm is read by the engine option table (engine_keywords.hpp).
std::shared_ptr<PythonEngine> make_engine(const py::kwargs& keywords) {
  ensure_runtime();
  const MPI_Comm mpi = communicator(keywords.contains("comm") ? py::object(keywords["comm"]) : py::none());
  EngineArguments args;
  args.comm = mpi;
  std::int64_t threads = 0;
  std::exception_ptr failure;
  // Every keyword is read inside the ranks' agreement: one rank's wrong value or type is an
  // error on every rank, not a hang in the others.
  try {
    read_engine_keywords(keywords, args, threads);
  } catch (const py::error_already_set& e) {
    failure = std::make_exception_ptr(InputError(error_line(e)));
  } catch (const std::exception&) {
    failure = std::current_exception();
  }
  // Agreeing, then loading the tables, takes a while: other threads run meanwhile.
  return without_gil([&] {
    const EngineMaking making;
    // The ranks' waits for each other while they make the engine are watched as its steps
    // are (a rank's own limit, or the default where its keyword was refused).
    const StallLimitScope watched(args.job.collective_timeout_s);
    const WaitContext part("making an Engine");
    // A keyword one rank got wrong is an error on every rank, not a hang in the others' opening.
    rethrow_agreed(mpi, failure);
    // The process's threads from here on, as `pleshard --threads` sets a command's.
    const std::optional<std::size_t> asked =
        threads > 0 ? std::optional<std::size_t>(static_cast<std::size_t>(threads)) : std::nullopt;
    use_rank_threads(agree_rank_threads(mpi, asked, "threads="));
    return std::make_shared<PythonEngine>(args);
  });
}

// None: every request fresh; a list with an entry per request (None: fresh); or a 2-D array.
std::vector<std::optional<std::vector<std::int64_t>>> read_contexts(const py::handle& contexts) {
  std::vector<std::optional<std::vector<std::int64_t>>> out;
  if (contexts.is_none()) return out;
  if (py::isinstance<py::list>(contexts) || py::isinstance<py::tuple>(contexts)) {
    const auto list = contexts.cast<py::sequence>();
    for (std::size_t r = 0; r < list.size(); ++r) {
      const py::object entry = list[r];
      if (entry.is_none())
        out.emplace_back();
      else
        out.emplace_back(read_int_array(entry, "contexts[" + std::to_string(r) + "]", 1).values);
    }
    return out;
  }
  const IntArray rows = read_int_array(contexts, "contexts", 2);
  const auto width = static_cast<std::size_t>(rows.shape[1]);
  for (std::int64_t r = 0; r < rows.shape[0]; ++r) {
    const auto begin = rows.values.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * width);
    out.emplace_back(std::vector<std::int64_t>(begin, begin + static_cast<std::ptrdiff_t>(width)));
  }
  return out;
}

// The batch of forward()'s or start()'s arguments, read while the GIL is held; a bad
// argument is raised only when the batch is made, after the ranks agree on it.
std::function<TokenBatch()> batch_of(const std::shared_ptr<PythonEngine>& self, const Typed<shown::IntArray>& tokens,
                                     const Typed<shown::IntArray>& query_start_loc,
                                     const Typed<shown::Contexts>& contexts, const char* what) {
  std::exception_ptr failure;
  IntArray t;
  IntArray q;
  std::vector<std::optional<std::vector<std::int64_t>>> c;
  try {
    t = read_int_array(tokens, "tokens", 1);
    q = read_int_array(query_start_loc, "query_start_loc", 1);
    c = read_contexts(contexts);
  } catch (const py::error_already_set& e) {
    failure = std::make_exception_ptr(SystemError(e.what()));
  } catch (const std::exception&) {
    failure = std::current_exception();
  }
  return [self, failure, what, t = std::move(t), q = std::move(q), c = std::move(c)] {
    if (failure) std::rethrow_exception(failure);
    return make_step_batch(self->config(), t.values, q.values, c, what);
  };
}

py::list arrays_of(const std::shared_ptr<PythonEngine>& self, const StepOutput& out) {
  py::list arrays;
  for (int d = 0; d < static_cast<int>(out.layers.size()); ++d) arrays.append(EmbeddingArray(self, out, d));
  return arrays;
}

Typed<shown::EmbeddingsList> forward(const std::shared_ptr<PythonEngine>& self, const Typed<shown::IntArray>& tokens,
                                     const Typed<shown::IntArray>& query_start_loc,
                                     const Typed<shown::Contexts>& contexts) {
  const std::function<TokenBatch()> batch = batch_of(self, tokens, query_start_loc, contexts, "forward");
  const StepOutput out = without_gil([&] { return self->forward(batch); });
  return arrays_of(self, out);
}

void start(const std::shared_ptr<PythonEngine>& self, const Typed<shown::IntArray>& tokens,
           const Typed<shown::IntArray>& query_start_loc, const Typed<shown::Contexts>& contexts) {
  const std::function<TokenBatch()> batch = batch_of(self, tokens, query_start_loc, contexts, "start");
  without_gil([&] { self->start(batch); });
}

EmbeddingArray wait_table(const std::shared_ptr<PythonEngine>& self, int table) {
  const StepOutput out = without_gil([&] { return self->wait_table(table); });
  return EmbeddingArray(self, out, table);
}

Typed<shown::EmbeddingsList> finish(const std::shared_ptr<PythonEngine>& self) {
  const StepOutput out = without_gil([&] { return self->finish(); });
  return arrays_of(self, out);
}

}  // namespace

}  // namespace pleshard::python

PYBIND11_MODULE(pleshard, m) {
  using namespace pleshard;
  using namespace pleshard::python;
  m.doc() = "pleshard: hashed n-gram per-layer embeddings (PLE, Engram) served by pleshard's engine";
  m.attr("__version__") = version_string();
  // The library's messages name the Engine's keywords, not pleshard's options.
  use_option_spelling(python_keyword_spelling());

  // pleshard's one-line messages: bad input as ValueError, everything else as RuntimeError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const AgreedError& e) {
      PyErr_SetString(e.input() ? PyExc_ValueError : PyExc_RuntimeError, e.what());
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  bind_embedding_array(m);
  bind_read_output(m);

  py::class_<PythonEngine, std::shared_ptr<PythonEngine>> engine(m, "Engine", R"(pleshard's engine on this process's
ranks: the keywords are `pleshard run`'s options, with its defaults and refusals.
Collective over `comm` (an mpi4py communicator; None: MPI_COMM_WORLD): every rank makes it,
steps it and reports it together.)");
  {
    // The keywords' signature is written from the engine option table (engine_keywords.hpp):
    // pybind11's own would show **kwargs alone.
    py::options written;
    written.disable_function_signatures();
    engine.def(py::init(&make_engine), engine_init_doc().c_str());
  }
  engine
      .def("forward", &forward, "tokens"_a, "query_start_loc"_a, "contexts"_a = py::none(),
           R"(One step of this rank's batch (vLLM's layout): returns one Embeddings per table, in table order.)")
      .def(
          "start", &start, "tokens"_a, "query_start_loc"_a, "contexts"_a = py::none(),
          R"(forward() begun: the step runs on the engine's thread and this returns at once; then wait_table(i) for each table a layer reads, and finish(). Between start() and finish() only wait_table() is taken.)")
      .def(
          "wait_table", &wait_table, "table"_a,
          R"(Table i of the started step, once its work is enqueued: tables on a faster tier come before a slower tier's are fetched (a group of one rank). A consumer stream given to __dlpack__ waits for that table's work alone.)")
      .def("finish", &finish, R"(The started step's Embeddings, one per table, as forward() returns them.)")
      .def(
          "report",
          [](PythonEngine& e) -> Typed<shown::Mapping> {
            // Waits for the last step, then reduces over the ranks.
            const std::string json = without_gil([&] { return e.report_json(); });
            return py::module_::import("json").attr("loads")(json);
          },
          "The run report as a dict (docs/report.md; collective)")
      .def(
          "wait", [](PythonEngine& e) { without_gil([&] { e.wait(); }); },
          "Returns when the last step is done (a host wait)")
      .def(
          "close", [](PythonEngine& e) { without_gil([&] { e.close(); }); },
          "Frees the tables, buffers and communicators (collective). Its Embeddings raise afterwards; views "
          "already taken from them (NumPy, DLPack) keep their memory and stay readable")
      .def("__enter__", [](const std::shared_ptr<PythonEngine>& self) { return self; })
      .def("__exit__",
           [](PythonEngine& e, const py::args&) {
             without_gil([&] { e.close(); });  // waits for a step in flight, collective
           })
      .def_property_readonly("closed", &PythonEngine::closed)
      .def_property_readonly("num_tables", [](const PythonEngine& e) { return e.engine().num_layers(); })
      .def_property_readonly("embed_dim", [](const PythonEngine& e) { return e.config().ple_embed_dim; })
      .def_property_readonly("ngram_size", [](const PythonEngine& e) { return e.config().ngram_size; })
      .def_property_readonly("output_slots", [](const PythonEngine& e) { return e.engine().output_slots(); })
      .def_property_readonly("steps", &PythonEngine::steps)
      .def_property_readonly("storage", [](const PythonEngine& e) { return e.engine().placement().storage(); })
      .def_property_readonly("placement", [](const PythonEngine& e) { return e.engine().placement().describe(); })
      .def_property_readonly("exchange", [](const PythonEngine& e) { return std::string(e.engine().exchange()); })
      .def_property_readonly("out_dtype",
                             [](const PythonEngine& e) { return std::string(to_string(e.engine().dtype())); })
      .def_property_readonly("device", [](const PythonEngine& e) {
        const int gpu = e.engine().gpu();
        return gpu >= 0 ? "cuda:" + std::to_string(gpu) : std::string("cpu");
      });
}

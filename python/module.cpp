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
#include "keyword_names.hpp"
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

std::string optional_path(const py::object& path, const char* name) {
  return path.is_none() ? std::string() : path_of(path, name);
}
std::string optional_text(const py::object& value, const char* name) {
  return value.is_none() ? std::string() : argument_as<std::string>(value, name, "a str or None");
}

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

// A count of ids a layer for the owner exchange's thresholds, from 0 to 2^40.
std::int64_t owner_ids(const py::object& value, const char* name) {
  const auto ids = argument_as<std::int64_t>(value, name, "an int");
  if (ids < 0 || ids > (std::int64_t{1} << 40))
    throw InputError(std::string(name) + " " + std::to_string(ids) + ": must be from 0 to 2^40 ids a layer");
  return ids;
}

// Each keyword as any object, read below (shown_types.hpp).
using OptionalPath = Typed<shown::OptionalPath>;
using OptionalText = Typed<shown::OptionalText>;
using Text = Typed<shown::Text>;
using Int = Typed<shown::Int>;
using Number = Typed<shown::Number>;
std::shared_ptr<PythonEngine> make_engine(
    const OptionalPath& checkpoint, const OptionalPath& config, const OptionalText& storage,
    const OptionalText& placement, const Number& gpu_memory_limit, const Int& tp, const Typed<shown::OptionalInt>& etp,
    const Text& exchange, const Typed<shown::Flag>& cuda_graph, const Text& out_dtype, const Typed<shown::Comm>& comm,
    const Int& output_slots, const Int& step_tokens, const OptionalPath& token_map, const OptionalText& layer_prefix,
    const Number& collective_timeout, const Int& cache_rows, const Number& cache_gb, const OptionalPath& cache_profile,
    const Number& cache_static, const Text& disk_reads, const Text& host_reads, const Int& owner_gpu_plan_from,
    const Int& owner_fixed_below, const Typed<shown::OptionalInt>& threads, const py::kwargs& unknown) {
  ensure_runtime();
  const MPI_Comm mpi = communicator(comm);
  EngineArguments args;
  args.comm = mpi;
  std::optional<std::size_t> asked_threads;
  std::exception_ptr failure;
  // Every keyword is read inside the ranks' agreement: one rank's wrong value or type is an
  // error on every rank, not a hang in the others.
  try {
    // Taken here rather than refused by Python on one rank, where the others would wait in
    // their agreement.
    if (!unknown.empty()) {
      std::string names;
      for (const auto& item : unknown) names += (names.empty() ? "" : ", ") + py::str(item.first).cast<std::string>();
      throw InputError("Engine: unknown keyword " + names + " (the keywords are pleshard run's options, named with _)");
    }
    if (checkpoint.is_none()) throw InputError("checkpoint: required (a path, or \"synthetic\" with config)");
    args.inputs.checkpoint = path_of(checkpoint, "checkpoint");
    args.inputs.config = optional_path(config, "config");
    args.inputs.token_map = optional_path(token_map, "token_map");
    args.inputs.tp = argument_as<int>(tp, "tp", "an int");
    if (!etp.is_none()) {
      args.inputs.etp = argument_as<int>(etp, "etp", "an int or None");
      if (args.inputs.etp < 1) throw InputError("etp " + std::to_string(args.inputs.etp) + ": must be >= 1");
    }
    args.inputs.storage = optional_text(storage, "storage");
    args.inputs.placement = optional_text(placement, "placement");
    const auto gpu_limit = argument_as<double>(gpu_memory_limit, "gpu_memory_limit", "a number of GB");
    if (!(gpu_limit == 0 || (gpu_limit >= 0.001 && gpu_limit <= 1e6)))
      throw InputError("gpu_memory_limit " + std::to_string(gpu_limit) +
                       ": must be a number of GB from 0.001 to 1e6 (0: all that is free)");
    args.inputs.gpu_memory_limit_gb = gpu_limit;
    args.inputs.exchange = argument_as<std::string>(exchange, "exchange", "a str");
    args.inputs.out_dtype = argument_as<std::string>(out_dtype, "out_dtype", "a str");
    args.inputs.layer_prefix = optional_text(layer_prefix, "layer_prefix");
    args.job.cuda_graph = argument_as<bool>(cuda_graph, "cuda_graph", "True or False");
    args.job.schedule.step_tokens = argument_as<std::int64_t>(step_tokens, "step_tokens", "an int");
    const auto timeout = argument_as<double>(collective_timeout, "collective_timeout", "a number of seconds");
    if (!(timeout >= k_min_collective_timeout_s && timeout <= k_max_collective_timeout_s))
      throw InputError("collective_timeout " + std::to_string(timeout) + ": must be from 1 to 1e7 seconds");
    args.job.collective_timeout_s = timeout;
    // As run's --cache-* and --disk-reads check them, named as the keywords.
    const auto rows = argument_as<std::int64_t>(cache_rows, "cache_rows", "an int");
    const auto gb = argument_as<double>(cache_gb, "cache_gb", "a number of GB");
    const auto share = argument_as<double>(cache_static, "cache_static", "a share from 0 to 1");
    const auto reads = argument_as<std::string>(disk_reads, "disk_reads", "a str");
    if (rows < 0) throw InputError("cache_rows " + std::to_string(rows) + ": must be >= 0");
    if (!std::isfinite(gb) || gb < 0 || gb > 1e9)
      throw InputError("cache_gb " + std::to_string(gb) + ": must be a finite number of GB >= 0");
    if (rows > 0 && gb > 0) throw InputError("cache_rows and cache_gb: give one of them");
    if (!(share >= 0 && share <= 1))
      throw InputError("cache_static " + std::to_string(share) + ": must be a share from 0 to 1");
    if (reads != "cached" && reads != "direct")
      throw InputError("disk_reads '" + quoted_value(reads) + "': must be cached or direct");
    args.job.cache.rows = rows;
    args.job.cache.gb = gb;
    args.job.cache.profile = optional_path(cache_profile, "cache_profile");
    args.job.cache.static_share = share;
    args.job.disk_reads = reads == "direct" ? PageCache::bypass : PageCache::use;
    // As run's --host-reads checks it.
    args.job.host_reads = parse_host_reads(argument_as<std::string>(host_reads, "host_reads", "a str"));
    args.output_slots = argument_as<int>(output_slots, "output_slots", "an int");
    // As run's --owner-gpu-plan-from and --owner-fixed-below check them.
    args.job.owner_gpu_plan_from = owner_ids(owner_gpu_plan_from, "owner_gpu_plan_from");
    args.job.owner_fixed_below = owner_ids(owner_fixed_below, "owner_fixed_below");
    if (!threads.is_none()) {
      const auto count = argument_as<std::int64_t>(threads, "threads", "an int or None");
      if (count < 1 || count > static_cast<std::int64_t>(k_max_rank_threads))
        throw InputError("threads " + std::to_string(count) + ": must be from 1 to " +
                         std::to_string(k_max_rank_threads));
      asked_threads = static_cast<std::size_t>(count);
    }
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
    use_rank_threads(agree_rank_threads(mpi, asked_threads, "threads="));
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

Typed<shown::EmbeddingsList> forward(const std::shared_ptr<PythonEngine>& self, const Typed<shown::IntArray>& tokens,
                                     const Typed<shown::IntArray>& query_start_loc,
                                     const Typed<shown::Contexts>& contexts) {
  // Read while the GIL is held; a bad argument is raised only after the ranks agree on it.
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
  const StepOutput out = without_gil([&] {
    return self->forward([&] {
      if (failure) std::rethrow_exception(failure);
      return make_step_batch(self->config(), t.values, q.values, c);
    });
  });
  py::list arrays;
  for (int d = 0; d < static_cast<int>(out.layers.size()); ++d) arrays.append(EmbeddingArray(self, out, d));
  return arrays;
}

}  // namespace

}  // namespace pleshard::python

PYBIND11_MODULE(pleshard, m) {
  using namespace pleshard;
  using namespace pleshard::python;
  m.doc() = "pleshard: hashed n-gram per-layer embeddings (PLE, Engram) served by pleshard's engine";
  m.attr("__version__") = version_string();
  // The library's messages name the Engine's keywords, not pleshard's options.
  use_option_spelling(keyword_spelling());

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

  py::class_<PythonEngine, std::shared_ptr<PythonEngine>>(m, "Engine", R"(pleshard's engine on this process's
ranks: the keywords are `pleshard run`'s options, with its defaults and refusals.
Collective over `comm` (an mpi4py communicator; None: MPI_COMM_WORLD): every rank makes it,
steps it and reports it together.)")
      .def(py::init(&make_engine), py::kw_only(), "checkpoint"_a = py::none(), "config"_a = py::none(),
           "storage"_a = py::none(), "placement"_a = py::none(), "gpu_memory_limit"_a = 0.0, "tp"_a = 1,
           "etp"_a = py::none(), "exchange"_a = "auto", "cuda_graph"_a = false, "out_dtype"_a = "bfloat16",
           "comm"_a = py::none(), "output_slots"_a = 2, "step_tokens"_a = 8192, "token_map"_a = py::none(),
           "layer_prefix"_a = py::none(), "collective_timeout"_a = 600.0, "cache_rows"_a = 0, "cache_gb"_a = 0.0,
           "cache_profile"_a = py::none(), "cache_static"_a = 0.5, "disk_reads"_a = "cached", "host_reads"_a = "auto",
           "owner_gpu_plan_from"_a = k_owner_gpu_plan_from, "owner_fixed_below"_a = 0, "threads"_a = py::none(),
           R"(Makes the engine on every rank of comm (collective). Keywords (docs/python.md):
  checkpoint: a checkpoint directory or file (.safetensors, .h5), or "synthetic" with config; required
  config: the model's config.json (None: beside the checkpoint)
  storage: every table on one tier: "host", "device", "pinned" or "disk" (None: placement)
  placement: "auto", a tier, or one per table ("0=device,1=pinned"); None with storage None: "auto"
  gpu_memory_limit: GB of each rank's GPU the automatic placement may use (0: all that is free)
  tp: tensor-parallel ranks of each DP rank
  etp: ranks of an ETP group, which own one row range each of every table (None: tp)
  exchange: how the group combines rows: "auto", "gather-reduce", "reduce-scatter", "owner", "hierarchical"
  cuda_graph: steps replayed as CUDA graphs, one per step size (device and pinned tiers)
  out_dtype: the embeddings' values: "bfloat16", "float32" or "float16"
  comm: the mpi4py communicator the engine is collective over (None: MPI_COMM_WORLD)
  output_slots: how many steps' outputs stay valid, 1 to 64
  step_tokens: the most tokens of one rank's step
  token_map: an Engram model's token map, .npy (None: the checkpoint's, else beside the config)
  layer_prefix: the safetensors tensors' prefix, {L} the 0-based decoder layer (None: the default)
  collective_timeout: seconds without progress of a GPU or peer after which the job ends on every rank
  cache_rows: slots per rank of a row cache in front of the pinned or disk tier (0: none)
  cache_gb: the row cache's size in GB per rank, instead of cache_rows
  cache_profile: a pleshard profile output whose hottest rows fill the cache's static part
  cache_static: the share of the cache's slots kept for the profile's hottest rows, 0 to 1
  disk_reads: the disk tier's reads: "cached" (through the page cache) or "direct" (past it)
  host_reads: how the GPU gets pinned rows: "auto", "gather", "uva" or "both"
  owner_gpu_plan_from: ids a layer from which the owner exchange plans its messages on the GPU
  owner_fixed_below: ids a layer below which the owner exchange sends fixed-size messages
  threads: the rank's host threads, for the process (None: from the launcher's binding, as run's))")
      .def("forward", &forward, "tokens"_a, "query_start_loc"_a, "contexts"_a = py::none(),
           R"(One step of this rank's batch (vLLM's layout): returns one Embeddings per table, in table order.)")
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
      .def_property_readonly("steps", [](const PythonEngine& e) { return e.engine().stats().steps; })
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

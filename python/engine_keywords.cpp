#include "engine_keywords.hpp"

#include "core/error.hpp"
#include "job/engine_option_docs.hpp"
#include "python_values.hpp"

namespace py = pybind11;

namespace pleshard::python {

namespace {

// The keyword's value as the entry's type, or InputError naming the keyword and the type it got.
OptionValue keyword_value(const EngineOptionEntry& e, const py::handle& value) {
  const std::string name = python_keyword(e);
  const std::string or_none = e.optional ? " or None" : "";
  switch (e.kind) {
    case OptionKind::path:
      return path_of(value, name.c_str());
    case OptionKind::text:
    case OptionKind::choice:
      return argument_as<std::string>(value, name, ("a str" + or_none).c_str());
    case OptionKind::integer:
      return argument_as<std::int64_t>(value, name, ("an int" + or_none).c_str());
    case OptionKind::number:
      return argument_as<double>(value, name, *e.python_expects != '\0' ? e.python_expects : "a number");
    case OptionKind::flag:
      return argument_as<bool>(value, name, "True or False");
  }
  throw SystemError(name + ": no kind");
}

}  // namespace

void read_engine_keywords(const py::kwargs& keywords, EngineArguments& args, std::int64_t& threads) {
  // Taken here rather than refused by Python on one rank, where the others would wait in
  // their agreement.
  std::string unknown;
  for (const auto& item : keywords) {
    const std::string name = py::str(item.first);
    bool known = name == "comm";
    for (const EngineOptionEntry& e : engine_option_table())
      known = known || (takes(e, EngineCommand::python) && python_keyword(e) == name);
    if (!known) unknown += (unknown.empty() ? "" : ", ") + name;
  }
  if (!unknown.empty())
    throw InputError("Engine: unknown keyword " + unknown + " (the keywords are pleshard run's options, named with _)");
  const EngineTarget target{&args.inputs, &args.job, &args.output_slots, &threads};
  for (const EngineOptionEntry& e : engine_option_table()) {
    if (!takes(e, EngineCommand::python)) continue;
    const std::string name = python_keyword(e);
    const bool given = keywords.contains(name) && !keywords[name.c_str()].is_none();
    if (!given && e.required) throw InputError(name + ": required");
    if (given) set_option(e, keyword_value(e, keywords[name.c_str()]), target);
  }
}

const std::string& engine_init_doc() {
  static const std::string doc = [] {
    std::string signature = "__init__(self: pleshard.Engine, *";
    std::string lines;
    for (const EngineOptionEntry& e : engine_option_table()) {
      if (!takes(e, EngineCommand::python)) continue;
      const std::string name = python_keyword(e);
      signature += ", " + name + ": " + python_type(e) + " = " + python_default(e);
      lines += "  " + name + ": " + help_text(e, EngineCommand::python) + (e.required ? "; required" : "") + "\n";
    }
    signature += ", comm: mpi4py.MPI.Comm | None = None, **kwargs) -> None";
    lines += "  comm: the mpi4py communicator the engine is collective over (None: MPI_COMM_WORLD)";
    return signature + "\n\nMakes the engine on every rank of comm (collective). Keywords (docs/python.md):\n" + lines;
  }();
  return doc;
}

}  // namespace pleshard::python

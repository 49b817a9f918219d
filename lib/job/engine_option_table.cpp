#include "job/engine_option_table.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "core/error.hpp"
#include "core/rank_threads.hpp"
#include "engine/exchange.hpp"
#include "engine/exchange_strategy.hpp"
#include "format/row_format.hpp"
#include "io/file_reads.hpp"
#include "model/model_family.hpp"
#include "store/host_reads.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

namespace {

using Cmd = EngineCommand;

// Each choice's name as the library writes it: the names are its own, never typed here.
template <typename E, std::size_t N>
std::vector<std::string> names_of(const E (&values)[N]) {
  std::vector<std::string> names;
  for (const E value : values) names.emplace_back(to_string(value));
  return names;
}
constexpr OutDtype k_dtypes[] = {OutDtype::f32, OutDtype::bf16, OutDtype::f16};
constexpr PageCache k_page_caches[] = {PageCache::use, PageCache::bypass};
constexpr HostReads k_host_reads[] = {HostReads::automatic, HostReads::gather, HostReads::uva, HostReads::both};

std::int64_t whole(const OptionValue& v) { return std::get<std::int64_t>(v); }
double number(const OptionValue& v) { return std::get<double>(v); }
const std::string& text(const OptionValue& v) { return std::get<std::string>(v); }

// clang-format off
const std::vector<EngineOptionEntry>& entries() {
  static const std::vector<EngineOptionEntry> table = [] {
    const unsigned run_python = Cmd::run | Cmd::python;
    const unsigned engine = run_python | Cmd::bench_step;  // the engine's own settings
    std::vector<EngineOptionEntry> list;
    EngineOptionEntry e{};

    e = {Option::checkpoint, "checkpoint", OptionKind::path, run_python,
         "Checkpoint directory, .safetensors or .h5; or synthetic: the tables of --config as ckpt make writes "
         "them (seed 1), made where the tier keeps them"};
    e.required = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->checkpoint = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->checkpoint; };
    list.push_back(e);

    e = {Option::config, "config", OptionKind::path, run_python | Cmd::embed | Cmd::profile,
         "Model config.json (default: beside the checkpoint)"};
    e.help_more = [] { return config_families(); };
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->config = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->config; };
    list.push_back(e);

    // The registered tiers' own names and help (store/tier_descriptor.hpp).
    static const std::string storage_help = "Every table on one tier: " + storage_tier_help();
    e = {Option::storage, "storage", OptionKind::choice, run_python, storage_help.c_str()};
    e.optional = true;
    e.excludes = Option::placement;
    e.choices = storage_tier_names;  // every registered tier
    e.parse = [](std::string_view name) { (void)parse_storage_tier(name); };
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->storage = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->storage; };
    list.push_back(e);

    e = {Option::placement, "placement", OptionKind::text, run_python,
         "Each table's tier: auto (the default: device, then pinned, then disk, as they fit; the GPU memory left "
         "becomes a row cache), one tier, or D=TIER,... per table (0=device,1=pinned)"};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->placement = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->placement; };
    list.push_back(e);

    e = {Option::gpu_memory_limit, "gpu-memory-limit", OptionKind::number, run_python,
         "GB of each rank's GPU that --placement auto may use for tables and the cache (0: all that is free)",
         0.001, 1e6, "a number of GB from 0.001 to 1e6, or 0 (all that is free)", true};
    e.python_expects = "a number of GB";
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->gpu_memory_limit_gb = number(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->gpu_memory_limit_gb; };
    list.push_back(e);

    e = {Option::tp, "tp", OptionKind::integer, engine, "Tensor-parallel size", 1, 1 << 24,
         "a whole number of ranks >= 1"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->tp = static_cast<int>(whole(v)); };
    e.get = [](const EngineTarget& t) -> OptionValue { return std::int64_t{t.inputs->tp}; };
    list.push_back(e);

    e = {Option::etp, "etp", OptionKind::integer, engine, "Embedding-parallel group size (default: --tp)", 1,
         1 << 24, "a whole number of ranks >= 1"};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->etp = static_cast<int>(whole(v)); };
    e.get = [](const EngineTarget& t) -> OptionValue { return std::int64_t{t.inputs->etp}; };
    list.push_back(e);

    // The registered strategies' own names and help (engine/exchange_strategy.hpp).
    static const std::string exchange_help = "How rows reach the ranks that need them: " + exchange_strategy_help();
    e = {Option::exchange, "exchange", OptionKind::choice, run_python, exchange_help.c_str()};
    e.choices = [] { return exchange_strategy_names(); };
    e.parse = [](std::string_view name) { (void)parse_exchange_strategy(name); };
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->exchange = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->exchange; };
    list.push_back(e);

    e = {Option::cuda_graph, "cuda-graph", OptionKind::flag, run_python,
         "Replay steps from CUDA graphs, one per power-of-two step size (device and pinned tiers; NCCL)"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->cuda_graph = std::get<bool>(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->cuda_graph; };
    list.push_back(e);

    e = {Option::out_dtype, "out-dtype", OptionKind::choice, engine | Cmd::embed,
         "Embedding values: float32, bfloat16 or float16 (bfloat16, what a decoder takes, wherever it is taken)"};
    e.choices = [] { return names_of(k_dtypes); };
    e.parse = [](std::string_view name) { (void)parse_out_dtype(name); };
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->out_dtype = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->out_dtype; };
    list.push_back(e);

    e = {Option::output_slots, "output-slots", OptionKind::integer, static_cast<unsigned>(Cmd::python),
         "How many steps' outputs stay valid: step s leaves its embeddings in slot s mod K", 1, k_max_output_slots,
         "from 1 to 64"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { *t.output_slots = static_cast<int>(whole(v)); };
    e.get = [](const EngineTarget& t) -> OptionValue { return std::int64_t{*t.output_slots}; };
    list.push_back(e);

    e = {Option::step_tokens, "step-tokens", OptionKind::integer, run_python, "Token budget of one step (the most "
         "tokens of one DP rank's step)", 1, static_cast<double>(k_max_step_tokens),
         "a whole number of tokens from 1 to 16777216"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->schedule.step_tokens = whole(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->schedule.step_tokens; };
    list.push_back(e);

    e = {Option::token_map, "token-map", OptionKind::path, engine | Cmd::embed | Cmd::profile,
         "Token map of a family that hashes compressed ids (Engram): .npy of vocab_size ints (default: "
         "engram_token_map.npy beside the config, else in the checkpoint's directory)"};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->token_map = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->token_map; };
    list.push_back(e);

    e = {Option::layer_prefix, "layer-prefix", OptionKind::text, run_python | Cmd::embed,
         "safetensors tensor prefix; {L} is the 0-based decoder layer (default: "
         "model.language_model.layers.{L}.ple.ple_embedding)"};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.inputs->layer_prefix = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.inputs->layer_prefix; };
    list.push_back(e);

    e = {Option::collective_timeout, "collective-timeout", OptionKind::number, engine,
         "Seconds any wait for other ranks (start-up, the load, each step, the output, the end) or for the GPU may "
         "make no progress before a stopped or stalled peer ends the job on every rank",
         k_min_collective_timeout_s, k_max_collective_timeout_s, "from 1 to 1e7 seconds"};
    e.python_expects = "a number of seconds";
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->collective_timeout_s = number(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->collective_timeout_s; };
    list.push_back(e);

    e = {Option::cache_rows, "cache-rows", OptionKind::integer, engine,
         "Row cache in GPU memory in front of the pinned or disk tier: slots per rank, shared by the layers in "
         "proportion to their rows (rows kept as stored); at most the rows the tier holds (0: none)",
         0, 9e18, "a whole number of rows >= 0"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->cache.rows = whole(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->cache.rows; };
    list.push_back(e);

    e = {Option::cache_gb, "cache-gb", OptionKind::number, engine,
         "The row cache's size in GB per rank instead of rows", 0, 1e9, "a finite number of GB >= 0"};
    e.python_expects = "a number of GB";
    e.excludes = Option::cache_rows;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->cache.gb = number(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->cache.gb; };
    list.push_back(e);

    e = {Option::cache_profile, "cache-profile", OptionKind::path, engine,
         "Row frequencies (pleshard profile) whose hottest rows fill the cache's static part at start"};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->cache.profile = text(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->cache.profile.string(); };
    list.push_back(e);

    e = {Option::cache_static, "cache-static", OptionKind::number, engine,
         "Share of the cache's slots for the profile's hottest rows (the rest admit rows as they come)", 0, 1,
         "a share from 0 to 1"};
    e.python_expects = "a share from 0 to 1";
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->cache.static_share = number(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->cache.static_share; };
    list.push_back(e);

    e = {Option::disk_reads, "disk-reads", OptionKind::choice, engine,
         "The disk tier's reads: cached (through the page cache, which keeps what they read) or direct (O_DIRECT, "
         "past it: host memory left to others)"};
    e.choices = [] { return names_of(k_page_caches); };
    e.parse = [](std::string_view name) { (void)parse_page_cache(name); };
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->disk_reads = parse_page_cache(text(v)); };
    e.get = [](const EngineTarget& t) -> OptionValue { return std::string(to_string(t.job->disk_reads)); };
    list.push_back(e);

    static const std::string host_reads_help =
        "How the GPU gets pinned rows: uva (each row read by the GPU over PCIe), gather (a step's distinct rows "
        "gathered by the host's threads and copied up at once), both (the host gathers a share of them while the "
        "GPU reads the rest, the share balanced step by step) or auto (both from " +
        std::to_string(k_host_gather_min_ids) + " lookups a table, UVA below and under CUDA graphs)";
    e = {Option::host_reads, "host-reads", OptionKind::choice, engine, host_reads_help.c_str()};
    e.choices = [] { return names_of(k_host_reads); };
    e.parse = [](std::string_view name) { (void)parse_host_reads(name); };
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->host_reads = parse_host_reads(text(v)); };
    e.get = [](const EngineTarget& t) -> OptionValue { return std::string(to_string(t.job->host_reads)); };
    list.push_back(e);

    e = {Option::owner_gpu_plan_from, "owner-gpu-plan-from", OptionKind::integer, engine,
         "Ids a layer from which the owner exchange hashes and plans a step on the GPU (only each owner's count "
         "waits for the stream); smaller steps on the host (0: every step on the GPU)",
         0, static_cast<double>(std::int64_t{1} << 40), "a whole number of ids a layer from 0 to 2^40"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->owner_gpu_plan_from = whole(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->owner_gpu_plan_from; };
    list.push_back(e);

    e = {Option::owner_fixed_below, "owner-fixed-below", OptionKind::integer, engine,
         "Lookups a layer per rank of a step's slot (the group's largest DP batch x heads) below which the owner "
         "exchange sends the step in fixed-size messages (every owner as many entries as a rank could ask of it, "
         "so no count waits for the host; what CUDA graphs capture); 0: never",
         0, static_cast<double>(std::int64_t{1} << 40), "a whole number of ids a layer from 0 to 2^40"};
    e.set = [](const EngineTarget& t, const OptionValue& v) { t.job->owner_fixed_below = whole(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return t.job->owner_fixed_below; };
    list.push_back(e);

    static const std::string threads_must_be =
        "a whole number of threads from 1 to " + std::to_string(k_max_rank_threads);
    e = {Option::threads, "threads", OptionKind::integer, Cmd::every_command | Cmd::python,
         "Threads of each rank's host work: the host tier's hashing and decoding, host gathers, making and reading "
         "rows (default: the launcher's binding: SLURM_CPUS_PER_TASK, else OMP_NUM_THREADS, else the cores of the "
         "rank's CPU affinity mask, shared with ranks bound alike)",
         1, static_cast<double>(k_max_rank_threads), threads_must_be.c_str()};
    e.optional = true;
    e.set = [](const EngineTarget& t, const OptionValue& v) { *t.threads = whole(v); };
    e.get = [](const EngineTarget& t) -> OptionValue { return *t.threads; };
    list.push_back(e);
    return list;
  }();
  return table;
}
// clang-format on

// The shortest text that reads back as the value: 600, 0.5, 1e-300.
std::string number_text(double v) {
  char text[32];
  const auto [end, error] = std::to_chars(text, text + sizeof text, v);
  return error == std::errc() ? std::string(text, end) : "?";
}

}  // namespace

std::span<const EngineOptionEntry> engine_option_table() { return entries(); }

const EngineOptionEntry& engine_option(Option option) {
  for (const EngineOptionEntry& e : entries())
    if (e.option == option) return e;
  throw SystemError("no engine option " + option_name(option) + " in the table");
}

bool takes(const EngineOptionEntry& entry, EngineCommand command) {
  return (entry.commands & static_cast<unsigned>(command)) != 0;
}

std::string help_text(const EngineOptionEntry& entry, EngineCommand command) {
  std::string help = entry.help;
  if (entry.help_more != nullptr) help += entry.help_more();
  if (command != EngineCommand::python) return help;
  for (const EngineOptionEntry& e : entries()) {
    const std::string name = cli_name(e);
    for (std::size_t at = help.find(name); at != std::string::npos; at = help.find(name, at + 1))
      help.replace(at, name.size(), python_keyword(e));
  }
  return help;
}

std::vector<std::string> choices_of(Option option) { return engine_option(option).choices(); }

const char* value_name(OptionKind kind) {
  switch (kind) {
    case OptionKind::path:
      return "PATH";
    case OptionKind::integer:
      return "INT";
    case OptionKind::number:
      return "FLOAT";
    default:
      return "TEXT";
  }
}

std::string cli_name(const EngineOptionEntry& entry) { return std::string("--") + entry.name; }

std::string python_keyword(const EngineOptionEntry& entry) {
  std::string keyword = entry.name;
  for (char& c : keyword)
    if (c == '-') c = '_';
  return keyword;
}

std::optional<OptionValue> default_value(const EngineOptionEntry& entry) {
  if (entry.optional || entry.required) return std::nullopt;
  EngineInputs inputs;
  BatchJobOptions job;
  int output_slots = k_default_output_slots;
  std::int64_t threads = 0;
  return entry.get(EngineTarget{&inputs, &job, &output_slots, &threads});
}

std::string value_text(const OptionValue& value) {
  if (const auto* flag = std::get_if<bool>(&value)) return *flag ? "true" : "false";
  if (const auto* whole_number = std::get_if<std::int64_t>(&value)) return std::to_string(*whole_number);
  if (const auto* real = std::get_if<double>(&value)) return number_text(*real);
  return std::get<std::string>(value);
}

std::string refusal(const EngineOptionEntry& entry, const OptionValue& value, std::string_view given) {
  const std::string shown = given.empty() ? value_text(value) : std::string(given);
  switch (entry.kind) {
    case OptionKind::path:
      return text(value).empty() ? "empty path (an unset variable?); name the file" : "";
    case OptionKind::integer:
    case OptionKind::number: {
      const double v = entry.kind == OptionKind::integer ? static_cast<double>(whole(value)) : number(value);
      if (std::isfinite(v) && ((v >= entry.min && v <= entry.max) || (entry.or_zero && v == 0))) return "";
      return quoted_value(shown) + " is out of range: must be " + entry.must_be;
    }
    case OptionKind::choice:
    case OptionKind::text:
    case OptionKind::flag:
      break;
  }
  return "";
}

std::variant<OptionValue, std::string> value_of_text(const EngineOptionEntry& entry, std::string_view text) {
  const std::string copy(text);
  switch (entry.kind) {
    case OptionKind::integer:
    case OptionKind::number: {
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(copy.c_str(), &end);
      if (end == copy.c_str() || *end != '\0') return quoted_value(copy) + " is not a number: must be " + entry.must_be;
      if (entry.kind == OptionKind::number) return OptionValue{v};
      // A whole number, in range: as wide as it is written (2^63 - 1 is no double).
      if (!std::isfinite(v) || v != std::floor(v) || v < -9.2e18 || v > 9.2e18)
        return quoted_value(copy) + " is out of range: must be " + entry.must_be;
      const long long exact = std::strtoll(copy.c_str(), &end, 10);
      return OptionValue{*end == '\0' ? std::int64_t{exact} : static_cast<std::int64_t>(v)};
    }
    case OptionKind::flag:
      return OptionValue{copy != "false"};
    default:
      return OptionValue{copy};
  }
}

void set_option(const EngineOptionEntry& entry, const OptionValue& value, const EngineTarget& target) {
  if (const std::string why = refusal(entry, value); !why.empty())
    throw InputError(option_name(entry.option) + ": " + why);
  if (entry.kind == OptionKind::choice) {
    const std::vector<std::string> names = entry.choices();
    if (std::find(names.begin(), names.end(), text(value)) == names.end()) entry.parse(text(value));  // throws
  }
  entry.set(target, value);
}

const OptionSpelling& python_keyword_spelling() {
  static const std::vector<std::string> keywords = [] {
    std::vector<std::string> k;
    for (const EngineOptionEntry& e : entries())
      if (takes(e, EngineCommand::python)) k.push_back(python_keyword(e));
    return k;
  }();
  static const std::vector<EnumName<Option>> names = [] {
    std::vector<EnumName<Option>> n;
    std::size_t i = 0;
    for (const EngineOptionEntry& e : entries())
      if (takes(e, EngineCommand::python)) n.push_back({e.option, keywords[i++].c_str()});
    return n;
  }();
  static const OptionSpelling spelling{names, "=", true};
  return spelling;
}

}  // namespace pleshard

// pleshard ckpt make | convert | inspect | verify

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ckpt/named_checkpoint.hpp"
#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/synthetic.hpp"
#include "cli.hpp"
#include "core/collective.hpp"
#include "core/progress.hpp"
#include "io/output_target.hpp"
#include "model/model_family.hpp"
#include "model/table_spec.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

namespace {

struct CkptOptions {
  std::string config;
  std::string checkpoint;
  std::string out;
  std::string format;
  std::string kind = "safetensors";
  std::string layer_prefix = k_default_layer_prefix;
  std::string token_map;
  std::uint64_t seed = k_default_synthetic_seed;
  int files = 1;
  bool cpu = false;
  bool quiet = false;
};

std::uint64_t total_bytes(const std::vector<TableSource>& tables) {
  std::uint64_t total = 0;
  for (const auto& t : tables) total += static_cast<std::uint64_t>(t.info.layout.rows) * t.info.layout.bytes_per_row();
  return total;
}

// The row tensors a safetensors checkpoint of `config` spreads over its files: each table's
// rows in pieces of shard_rows (an Engram table is one piece).
std::int64_t shard_count(const ModelConfig& config) {
  std::int64_t shards = 0;
  for (const TableSpec& spec : derive_table_specs(config))
    if (spec.shard_rows > 0) shards += (spec.padded_rows + spec.shard_rows - 1) / spec.shard_rows;
  return shards;
}

// --files: one file at least per shard (more would be written empty), one for HDF5.
void check_files(const CkptOptions& o, const ModelConfig& config, CheckpointKind kind) {
  const std::string files = "--files " + std::to_string(o.files);
  if (kind == CheckpointKind::hdf5) {
    if (o.files > 1) throw InputError(files + ": an HDF5 checkpoint is one file (--files spreads safetensors)");
    return;
  }
  const std::int64_t shards = std::max<std::int64_t>(1, shard_count(config));
  if (o.files > shards)
    throw InputError(files + ": the checkpoint has " + std::to_string(shards) +
                     " shards to spread over its files; at most " + std::to_string(shards));
}

// Single-process tools: rank 0 works, the others wait and share its outcome.
template <typename Body>
int on_rank_zero(Body&& body) {
  collective_try(MPI_COMM_WORLD, [&] {
    if (world_rank() == 0) body();
  });
  return 0;
}

// `inputs`: the files the tables are read from, which the output may not replace.
void write_tables(const CkptOptions& o, const ModelConfig& config, const std::vector<TableSource>& tables,
                  std::vector<std::filesystem::path> inputs, const char* label) {
  WriteOptions options;
  options.kind = parse_checkpoint_kind(o.kind);
  if (options.kind == CheckpointKind::synthetic) throw InputError("--kind synthetic: expected safetensors or hdf5");
  check_files(o, config, options.kind);
  for (const auto& file : model_files(config)) inputs.push_back(file);
  const OutputKind kind = options.kind == CheckpointKind::hdf5 ? OutputKind::file : OutputKind::directory;
  const OutputGuard guard({o.out, kind, "--out"}, inputs, std::string("pleshard ") + label);
  options.files = o.files;
  options.layer_prefix = o.layer_prefix;
  ProgressMeter meter(label, total_bytes(tables), !o.quiet);
  // The map the tables are hashed through goes with them, inside the checkpoint.
  write_checkpoint(o.out, config, tables, options, [&](std::uint64_t done) { meter.update(done); });
  std::printf("%s: wrote %s checkpoint %s: %zu tables, %.3f GB in %.2f s (%.3f GB/s)\n", label, to_string(options.kind),
              o.out.c_str(), tables.size(), total_bytes(tables) * 1e-9, meter.seconds(),
              total_bytes(tables) * 1e-9 / meter.seconds());
}

void inspect(const CkptOptions& o, bool verify) {
  const ModelConfig config = load_named_checkpoint_config(o.checkpoint, o.config, o.token_map);
  const auto specs = derive_table_specs(config);
  // Tables that cannot be hashed (an Engram checkpoint without its token map) cannot be
  // served: verify refuses them before reading a row; inspect says so.
  const std::string& unhashable = specs.front().unhashable;
  if (verify && !unhashable.empty()) throw InputError(unhashable);
  CheckpointOptions options;
  options.layer_prefix = o.layer_prefix;
  const auto checkpoint = open_named_checkpoint(o.checkpoint, config, options);
  std::printf("checkpoint %s (%s), config %s\n", checkpoint->path().c_str(), to_string(checkpoint->kind()),
              config.source.c_str());
  if (const std::string map = describe_token_map(config); !map.empty()) std::printf("token map %s\n", map.c_str());
  if (!unhashable.empty()) std::printf("not servable: %s\n", unhashable.c_str());
  std::printf("%4s %6s %8s %8s %12s %12s %12s  %s\n", "d", "layer", "format", "head_dim", "rows", "bytes", "global",
              "hash buffers");
  std::uint64_t bytes = 0;
  for (const auto& t : checkpoint->tables()) {
    const auto& spec = specs[static_cast<std::size_t>(t.ple_index)];
    std::string buffers;
    const auto note = [&](const char* name, const std::vector<std::int64_t>& loaded,
                          const std::vector<std::int64_t>& derived) {
      buffers += std::string(buffers.empty() ? "" : ", ") + name +
                 (loaded.empty()      ? " absent"
                  : loaded == derived ? " agree"
                                      : " DIFFER");
    };
    note("multipliers", t.multipliers, spec.multipliers);
    note("sizes", t.head_sizes, spec.head_sizes);
    note("offsets", t.head_offsets, spec.head_offsets);
    const std::uint64_t table_bytes = static_cast<std::uint64_t>(t.layout.rows) * t.layout.bytes_per_row();
    bytes += table_bytes;
    std::printf("%4d %6d %8s %8d %12" PRId64 " %12" PRIu64 " %12.6g  %s\n", t.ple_index, t.decoder_layer,
                to_string(t.layout.format), t.layout.head_dim, t.layout.rows, table_bytes,
                static_cast<double>(t.global_scale), buffers.c_str());
  }
  std::printf("total %.3f GB in %zu tables\n", bytes * 1e-9, checkpoint->tables().size());
  // Rows other stacks decode differently (NaN codes, E8M0 scale bytes 0 or 255): pleshard
  // follows its float32 rules on them, and says where they are. inspect looks at a sample,
  // verify at every row.
  constexpr std::int64_t k_inspect_sample_rows = 65536;
  std::vector<RowAnomalies> anomalies;
  double seconds = 0;
  if (verify) {
    ProgressMeter meter("verify", bytes, !o.quiet);
    anomalies =
        checkpoint->verify_data([&](double fraction) { meter.update(static_cast<std::uint64_t>(fraction * bytes)); });
    seconds = meter.seconds();
  } else {
    anomalies = checkpoint->sample_anomalies(k_inspect_sample_rows);
  }
  for (std::size_t d = 0; d < anomalies.size(); ++d)
    if (anomalies[d].any())
      std::printf("table %zu: %s among %" PRId64
                  " rows %s; pleshard decodes them by its float32 rules, other stacks "
                  "may not\n",
                  d, anomalies[d].summary().c_str(), anomalies[d].rows, verify ? "read" : "sampled");
  if (verify)
    std::printf("verify: OK, %.3f GB read in %.2f s (%.3f GB/s)\n", bytes * 1e-9, seconds, bytes * 1e-9 / seconds);
}

}  // namespace

void add_ckpt_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<CkptOptions>();
  CLI::App* ckpt = app.add_subcommand("ckpt", "Make, convert, inspect and verify PLE checkpoints");
  ckpt->require_subcommand(1);
  auto add_common = [&](CLI::App* cmd) {
    cmd->add_option("--layer-prefix", o->layer_prefix, "safetensors tensor prefix; {L} is the 0-based decoder layer")
        ->capture_default_str();
    cmd->add_flag("--quiet", o->quiet, "No progress lines");
  };

  CLI::App* make = ckpt->add_subcommand("make", "Write a synthetic checkpoint from a config");
  make->add_option("--config", o->config, "Model config.json" + config_families())->required()->check(path_given());
  make->add_option("--out", o->out, "Output: a directory (safetensors) or a .h5 file")->required()->check(path_given());
  make->add_option("--format", o->format,
                   "Row format: " + row_format_names() +
                       " (one the config's ple_embedding_dtype allows; default: bf16 for unquantized "
                       "configs, else the dtype's own)");
  make->add_option("--kind", o->kind, "safetensors or hdf5")->capture_default_str();
  make->add_option("--files", o->files, "safetensors files to spread the shards over (at most one a shard)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  make->add_option("--seed", o->seed, "Seed of the synthetic values")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  make->add_flag("--cpu", o->cpu, "Make rows on the host's cores even where a GPU is present (the same bytes)");
  add_token_map_option(*make, o->token_map);
  add_common(make);
  make->callback([&action, o] {
    action = [o] {
      return on_rank_zero([&] {
        const ModelConfig config = load_model_config(o->config, o->token_map);
        const RowFormat format = o->format.empty() ? default_format(config) : parse_row_format(o->format);
        write_tables(*o, config,
                     synthetic_tables(config, format, o->seed, o->cpu ? RowMaker::host : RowMaker::gpu_if_present), {},
                     "ckpt make");
      });
    };
  });

  CLI::App* convert =
      ckpt->add_subcommand("convert", "Convert between safetensors and HDF5 (bytes copied, never re-encoded)");
  convert->add_option("--checkpoint", o->checkpoint, "Source checkpoint")->required()->check(path_given());
  convert->add_option("--config", o->config, "Model config.json (default: beside the checkpoint)")->check(path_given());
  convert->add_option("--out", o->out, "Output: a directory (safetensors) or a .h5 file")
      ->required()
      ->check(path_given());
  convert->add_option("--kind", o->kind, "Output kind: safetensors or hdf5")->required();
  convert->add_option("--files", o->files, "safetensors files to spread the shards over (at most one a shard)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  add_token_map_option(*convert, o->token_map);
  add_common(convert);
  convert->callback([&action, o] {
    action = [o] {
      return on_rank_zero([&] {
        const ModelConfig config = load_checkpoint_config(o->checkpoint, o->config, o->token_map);
        CheckpointOptions options;
        options.layer_prefix = o->layer_prefix;
        const auto source = open_ple_checkpoint(o->checkpoint, config, options);
        std::vector<std::filesystem::path> inputs{o->checkpoint};
        for (const std::string& file : source->files()) inputs.emplace_back(file);
        write_tables(*o, config, checkpoint_tables(*source), inputs, "ckpt convert");
      });
    };
  });

  CLI::App* inspect_cmd =
      ckpt->add_subcommand("inspect", "Print layers, formats, shapes, bytes and hash-buffer agreement");
  CLI::App* verify_cmd = ckpt->add_subcommand("verify", "Validate everything and read every row (exit 0 valid, 1 not)");
  for (CLI::App* cmd : {inspect_cmd, verify_cmd}) {
    cmd->add_option("--checkpoint", o->checkpoint,
                    "Checkpoint directory or file, or synthetic (the tables ckpt make would write for --config)")
        ->required()
        ->check(path_given());
    cmd->add_option("--config", o->config, "Model config.json (default: beside the checkpoint)")->check(path_given());
    add_token_map_option(*cmd, o->token_map);
    add_common(cmd);
  }
  inspect_cmd->callback([&action, o] { action = [o] { return on_rank_zero([&] { inspect(*o, false); }); }; });
  verify_cmd->callback([&action, o] { action = [o] { return on_rank_zero([&] { inspect(*o, true); }); }; });
}

}  // namespace pleshard::app

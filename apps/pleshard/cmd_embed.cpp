// pleshard embed --config CONFIG --checkpoint PATH --batch BATCH.json --out OUT.h5

#include <filesystem>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "cli.hpp"
#include "core/collective.hpp"
#include "core/sha256.hpp"
#include "engine/embed.hpp"
#include "engine_option_cli.hpp"
#include "hash/batch_json.hpp"
#include "io/output_target.hpp"
#include "job/output_description.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

namespace {

struct EmbedOptions {
  EngineInputs engine;  // --config, --out-dtype, --layer-prefix, --token-map: the engine's table
  BatchJobOptions job;
  std::string checkpoint;
  std::string batch;
  std::string out;
  std::string storage = "host";
};

}  // namespace

void add_embed_command(CLI::App& app, Action& action) {
  auto o = std::make_shared<EmbedOptions>();
  CLI::App* cmd = app.add_subcommand("embed", "Embeddings of a batch for every PLE layer, to HDF5");
  cmd->add_option("--checkpoint", o->checkpoint, "Checkpoint directory, .safetensors or .h5")
      ->required()
      ->check(path_given());
  cmd->add_option("--batch", o->batch, "BATCH.json")->required()->check(path_given());
  cmd->add_option("--out", o->out, "Output HDF5 file: /ple_{d} [tokens, ple_embed_dim], /query_start_loc")
      ->required()
      ->check(path_given());
  cmd->add_option("--storage", o->storage, "Storage tier: " + storage_tier_help())
      ->check(CLI::IsMember(storage_tier_names()))
      ->capture_default_str();
  add_engine_options(*cmd, EngineCommand::embed, EngineTarget{&o->engine, &o->job});
  cmd->callback([&action, o] {
    action = [o] {
      collective_try(MPI_COMM_WORLD, [&] {
        if (world_rank() != 0) return;
        const EngineInputs& in = o->engine;
        const ModelConfig config = load_checkpoint_config(o->checkpoint, in.config, in.token_map);
        CheckpointOptions options;
        if (!in.layer_prefix.empty()) options.layer_prefix = in.layer_prefix;
        const auto checkpoint = open_ple_checkpoint(o->checkpoint, config, options);
        const TokenBatch batch = load_batch_json(o->batch, config);
        const OutDtype dtype = parse_out_dtype(in.out_dtype);
        const StorageTier tier = parse_storage_tier(o->storage);
        std::vector<std::filesystem::path> inputs = model_files(config);
        inputs.emplace_back(o->batch);
        for (const std::string& file : checkpoint->files()) inputs.emplace_back(file);
        const OutputGuard guard({o->out, OutputKind::file, "--out"}, inputs, "pleshard embed");
        const OutputSource source{"pleshard embed", checkpoint->content_identity(), o->batch, sha256_of_file(o->batch),
                                  0};
        write_embeddings_h5(o->out, batch.query_start_loc, embed_batch(config, *checkpoint, batch, dtype, tier),
                            config.ple_embed_dim, dtype, describe_output(config, dtype, source));
      });
      return 0;
    };
  });
}

}  // namespace pleshard::app

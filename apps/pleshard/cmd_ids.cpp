// pleshard ids --config CONFIG --ple-index D --batch BATCH.json

#include <cstdio>
#include <string>

#include "cli.hpp"
#include "core/collective.hpp"
#include "hash/batch_json.hpp"
#include "hash/ngram_ids.hpp"
#include "model/model_config.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

namespace {

struct IdsOptions {
  std::string config;
  int ple_index = 0;
  std::string batch;
  std::string token_map;
};

// {"ids": [[...], ...]} with one row of H ids per token, written as it is formatted.
void print_ids(const std::vector<std::int64_t>& ids, int heads) {
  std::string out = "{\"ids\": [";
  for (std::size_t row = 0; row * heads < ids.size(); ++row) {
    out += row == 0 ? "[" : ", [";
    for (int h = 0; h < heads; ++h) {
      if (h != 0) out += ", ";
      out += std::to_string(ids[row * heads + static_cast<std::size_t>(h)]);
    }
    out += "]";
  }
  out += "]}\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

}  // namespace

void add_ids_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<IdsOptions>();
  CLI::App* cmd = app.add_subcommand("ids", "Print the n-gram row ids of every token of a batch");
  cmd->add_option("--config", options->config, "Model config.json")->required()->check(path_given());
  cmd->add_option("--ple-index", options->ple_index, "PLE index d (0-based)")->required();
  cmd->add_option("--batch", options->batch,
                  "BATCH.json: {\"requests\": [{\"context\": [N-1 ints], \"tokens\": [ints]}]}")
      ->required()
      ->check(path_given());
  add_token_map_option(*cmd, options->token_map);
  cmd->callback([&action, options] {
    action = [options] {
      const auto ids = collective_try(MPI_COMM_WORLD, [&] {
        const ModelConfig config = load_model_config(options->config, options->token_map);
        const TableSpec spec = derive_table_spec(config, options->ple_index);
        // The hash is defined for any 64-bit token id.
        const TokenBatch batch = load_batch_json(options->batch, config, TokenIds::any_non_negative);
        return std::make_pair(compute_ngram_ids(spec, batch), spec.total_heads());
      });
      if (world_rank() == 0) print_ids(ids.first, ids.second);
      return 0;
    };
  });
}

int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

}  // namespace pleshard::app

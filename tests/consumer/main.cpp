// Hashes one token with the installed library and checks the id lands in head 0's range.
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <pleshard/pleshard.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const auto config = pleshard::parse_model_config(
        nlohmann::json{{"vocab_size", 1000}, {"eos_token_id", 1}, {"num_hidden_layers", 1},
                       {"ple_embed_dim", 16 * 4}, {"ple_layer_ids", {1}}},
        "consumer");
    const auto spec = pleshard::derive_layer_spec(config, 0);
    pleshard::TokenBatch batch(config.ngram_size);
    const std::vector<std::int64_t> tokens{42};
    batch.add_request(tokens, pleshard::fresh_context(config.ngram_size, config.eos_token_id));
    const auto ids = pleshard::compute_ngram_ids(spec, batch);
    const bool ok = ids.size() == 16 && ids[0] >= 0 && ids[0] < spec.head_sizes[0];
    std::printf("consumer: %zu ids, first %lld: %s\n", ids.size(), static_cast<long long>(ids[0]),
                ok ? "ok" : "WRONG");
    status = ok ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}

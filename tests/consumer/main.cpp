// A decoder shard of the installed library's user: hashes one token, then runs one engine
// step on a synthetic model and uses the step's embeddings where the engine left them — in
// GPU memory, read on the shard's own stream after the step's event, where there is a GPU;
// in host memory otherwise — checked against the host tier's bytes.
#include <mpi.h>
#include <Kokkos_Core.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <pleshard/pleshard.hpp>
#if CONSUMER_WITH_CUDA
#include "shard.hpp"
#endif

namespace {

std::uint64_t checksum(const std::uint16_t* values, std::int64_t count) {
  std::uint64_t sum = 0;
  for (std::int64_t i = 0; i < count; ++i) sum += static_cast<std::uint64_t>(i + 1) * values[i];
  return sum;
}

// The shard's checksum of layer 0 of a step, read where the step left it.
std::uint64_t shard_checksum(const pleshard::StepOutput& out) {
  const pleshard::EmbeddingView& view = out.layers.front();
  const std::int64_t count = view.rows * view.width;
#if CONSUMER_WITH_CUDA
  if (out.on_device) {
    cudaStream_t stream = nullptr;
    std::uint64_t* sum = nullptr;
    std::uint64_t host = 0;
    cudaStreamCreate(&stream);
    cudaMalloc(reinterpret_cast<void**>(&sum), sizeof *sum);
    cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(out.ready), 0);
    checksum_on_device(static_cast<const std::uint16_t*>(view.data), count, sum, stream);
    cudaMemcpyAsync(&host, sum, sizeof host, cudaMemcpyDeviceToHost, stream);
    const bool ok = cudaStreamSynchronize(stream) == cudaSuccess;
    cudaFree(sum);
    cudaStreamDestroy(stream);
    return ok ? host : 0;
  }
#endif
  return checksum(static_cast<const std::uint16_t*>(view.data), count);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const auto config = pleshard::parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                                                    {"eos_token_id", 1},
                                                                    {"num_hidden_layers", 1},
                                                                    {"ple_embed_dim", 16 * 4},
                                                                    {"ngram_vocab_size_base", 5000},
                                                                    {"ple_layer_ids", {1}}},
                                                     "consumer");
    const auto spec = pleshard::derive_table_spec(config, 0);
    pleshard::TokenBatch batch(config.ngram_size);
    const std::vector<std::int64_t> tokens{42, 7, 999, 3, 42, 7};
    batch.add_request(tokens, pleshard::fresh_context(config.ngram_size));
    const auto ids = pleshard::compute_ngram_ids(spec, batch);
    const bool hashed = ids.size() == 16 * tokens.size() && ids[0] >= 0 && ids[0] < spec.head_sizes[0];

    const auto checkpoint = pleshard::synthetic_checkpoint(config, pleshard::RowFormat::bf16, 7);
    const auto reference = pleshard::embed_batch(config, *checkpoint, batch, pleshard::OutDtype::bf16);
    const std::uint64_t expected = checksum(reinterpret_cast<const std::uint16_t*>(reference.front().data.data()),
                                            static_cast<std::int64_t>(reference.front().data.size() / 2));
    const pleshard::Communicators comms(MPI_COMM_SELF, pleshard::make_topology(1, 0, 1, 1));
    pleshard::EngineOptions options;
    options.tier = pleshard::gpu_available() ? pleshard::StorageTier::device : pleshard::StorageTier::host;
    options.max_tokens = 64;
    pleshard::PleEngine engine(comms, config, *checkpoint, options);
    const pleshard::StepOutput out = engine.forward(batch);
    const std::uint64_t got = shard_checksum(out);
    engine.wait();
    const bool ok = hashed && got == expected;
    std::printf("consumer: %zu ids; step embeddings read in %s memory, checksum %llu: %s\n", ids.size(),
                out.on_device ? "GPU" : "host", static_cast<unsigned long long>(got), ok ? "ok" : "WRONG");
    status = ok ? 0 : 1;
  }
  MPI_Finalize();
  return status;
}

#include "bench/exchange_bench.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "bench/bench_progress.hpp"
#include "bench/timing.hpp"
#include "core/error.hpp"
#include "core/mpi_check.hpp"
#include "dist/communicator_factory.hpp"
#include "dist/gpu_binding.hpp"
#include "dist/topology.hpp"
#include "exec/space_event.hpp"
#include "exec/step_space.hpp"
#include "kernels/gpu_device.hpp"
#include "store/row_range.hpp"
#include "store/row_store_factory.hpp"

namespace pleshard {

double ExchangeBenchResult::busbw() const { return algbw() * bus_factor(collective, ranks); }

namespace {

double reduce_max(MPI_Comm comm, double v) {
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, comm));
  return v;
}

std::int64_t reduce_sum(MPI_Comm comm, std::int64_t v) {
  PLESHARD_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT64_T, MPI_SUM, comm));
  return v;
}

// Host memory for MPI; otherwise this rank's GPU, bound as the engine binds it.
std::unique_ptr<StepSpace> bench_space(MPI_Comm comm, CollectiveBackend backend) {
  if (backend == CollectiveBackend::mpi) return make_host_space();
  if (!backend_built(backend)) throw InputError(std::string("this build has no ") + to_string(backend) + " backend");
  if (!kernels::built_with_cuda())
    throw InputError(std::string("the ") + to_string(backend) + " backend needs a CUDA build");
  if (!gpu_available()) throw InputError(std::string("the ") + to_string(backend) + " backend needs a GPU");
  const GpuBinding gpus = bind_local_gpu(comm);
  if (!gpus.own_gpu && backend == CollectiveBackend::nccl)
    throw InputError("the nccl backend needs a GPU per rank; " + gpus.why + " (try mpi-staged)");
  return make_tier_space(StorageTier::device);
}

// Seconds of the collectives `f` enqueues, between two marks on the space's stream (events
// on a GPU, as nccl-tests times them), waited for.
template <typename F>
double stream_seconds(StepSpace& space, F&& f) {
  SpaceEvent begin(space);
  SpaceEvent end(space);
  begin.record();
  f();
  end.record();
  space.synchronize();
  return end.seconds_since(begin);
}

}  // namespace

std::vector<ExchangeBenchResult> run_exchange_bench(MPI_Comm comm, CollectiveBackend backend,
                                                    const ExchangeBenchOptions& o) {
  const std::unique_ptr<StepSpace> space = bench_space(comm, backend);
  const std::unique_ptr<Communicator> owned = make_communicator(backend, comm, *space);
  Communicator& c = *owned;
  const auto agree = [comm](double seconds) { return reduce_max(comm, seconds); };
  const int n = c.size();
  const int me = c.rank();
  const auto ranks = static_cast<std::size_t>(n);
  std::vector<ExchangeBenchResult> results;
  // The median, max over ranks, and the wrong elements over all ranks of one collective.
  const auto wants = [&](ExchangeStrategy s) {
    return std::find(o.strategies.begin(), o.strategies.end(), s) != o.strategies.end();
  };
  const char* strategy = "";
  const auto measure = [&](const char* name, std::int64_t tokens, double bytes, auto&& once, auto&& count_wrong) {
    ExchangeBenchResult r{strategy, name, to_string(backend), tokens, bytes};
    PLESHARD_MPI_CHECK(MPI_Barrier(comm));
    r.seconds = reduce_max(comm, median_seconds_collective(once, agree, o.min_repeats, o.min_seconds));
    r.wrong = reduce_sum(comm, count_wrong());
    r.ranks = n;
    results.push_back(r);
  };
  SpaceBuffer send(*space);
  SpaceBuffer recv(*space);
  SpaceBuffer data(*space);
  BenchProgress progress(std::string("exchange (") + to_string(backend) + ")", static_cast<int>(o.step_tokens.size()),
                         me == 0);
  for (const std::int64_t tokens : o.step_tokens) {
    progress.next(std::to_string(tokens) + " tokens");
    // Ids: each rank's block encodes (rank, index) so every received id names its sender.
    const auto count = static_cast<std::size_t>(tokens * o.heads);
    std::vector<std::int64_t> ids(count);
    for (std::size_t i = 0; i < count; ++i)
      ids[i] = (static_cast<std::int64_t>(me) << 40) + static_cast<std::int64_t>(i);
    send.assign(std::span<const std::int64_t>(ids));
    recv.reserve(std::max<std::size_t>(1, count * ranks * 8));
    strategy = to_string(ExchangeStrategy::gather_reduce);
    if (wants(ExchangeStrategy::gather_reduce))
      measure(
          "all_gather", tokens, static_cast<double>(count * ranks * 8),
          [&] {
            return stream_seconds(*space, [&] {
              c.all_gather({send.data(), count * 8}, {recv.data(), count * ranks * 8});
            });
          },
          [&] {
            const auto got = recv.to_host<std::int64_t>(count * ranks);
            std::int64_t wrong = 0;
            for (std::size_t src = 0; src < ranks; ++src)
              for (std::size_t i = 0; i < count; ++i)
                wrong += got[src * count + i] != (static_cast<std::int64_t>(src) << 40) + static_cast<std::int64_t>(i);
            return wrong;
          });

    // Embeddings: element i is owned by rank i % n, which contributes (i / n) + 1; others 0.
    const auto values = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(o.ple_embed_dim);
    const std::size_t padded = (values + ranks - 1) / ranks * ranks;
    const std::size_t per_rank = padded / ranks;
    std::vector<std::uint16_t> partial(padded);
    for (std::size_t i = 0; i < padded; ++i)
      partial[i] = static_cast<int>(i % ranks) == me ? static_cast<std::uint16_t>(i / ranks + 1) : 0;
    send.assign(std::span<const std::uint16_t>(partial));
    data.reserve(padded * 2);
    if (wants(ExchangeStrategy::gather_reduce))
      measure(
          "all_reduce", tokens, static_cast<double>(padded * 2),
          [&] {
            space->copy(data.data(), send.data(), padded * 2);
            return stream_seconds(*space, [&] { c.all_reduce(data.data(), padded, Element::u16, ReduceOp::owned); });
          },
          [&] {
            const auto got = data.to_host<std::uint16_t>(padded);
            std::int64_t wrong = 0;
            for (std::size_t i = 0; i < padded; ++i) wrong += got[i] != static_cast<std::uint16_t>(i / ranks + 1);
            return wrong;
          });
    recv.reserve(std::max<std::size_t>(1, per_rank * 2));
    strategy = to_string(ExchangeStrategy::reduce_scatter);
    if (wants(ExchangeStrategy::reduce_scatter))
      measure(
          "reduce_scatter", tokens, static_cast<double>(padded * 2),
          [&] {
            return stream_seconds(
                *space, [&] { c.reduce_scatter(send.data(), recv.data(), per_rank, Element::u16, ReduceOp::owned); });
          },
          [&] {
            const auto got = recv.to_host<std::uint16_t>(per_rank);
            std::int64_t wrong = 0;
            for (std::size_t i = 0; i < per_rank; ++i)
              wrong += got[i] != static_cast<std::uint16_t>((static_cast<std::size_t>(me) * per_rank + i) / ranks + 1);
            return wrong;
          });

    // Owner: each rank asks every owner for an even share of its tokens x heads ids, then
    // gets that many stored rows back; byte b of entry i from rank src is (src, i, b) mixed.
    strategy = to_string(ExchangeStrategy::owner);
    if (wants(ExchangeStrategy::owner))
      for (const auto& [name, width] : {std::pair<const char*, int>{"all_to_all ids", o.id_bytes},
                                        std::pair<const char*, int>{"all_to_all rows", o.row_bytes}}) {
        const auto entry = static_cast<std::size_t>(width);
        std::vector<std::int64_t> counts(ranks), offsets(ranks);
        for (std::size_t r = 0; r < ranks; ++r) {
          const RowRange share = balanced_range(static_cast<std::int64_t>(count), n, static_cast<int>(r));
          counts[r] = share.size() * width;
          offsets[r] = share.begin * width;
        }
        // What I receive from each peer: its share for me, which has my share's size.
        const RowRange mine = balanced_range(static_cast<std::int64_t>(count), n, me);
        std::vector<std::int64_t> recv_counts(ranks, mine.size() * width), recv_offsets(ranks);
        for (std::size_t r = 0; r < ranks; ++r) recv_offsets[r] = static_cast<std::int64_t>(r) * mine.size() * width;
        const auto byte_of = [](std::size_t src, std::size_t i, std::size_t b) {
          return static_cast<std::uint8_t>(src * 131 + i * 7 + b);
        };
        std::vector<std::uint8_t> bytes(count * entry);
        for (std::size_t i = 0; i < count; ++i)
          for (std::size_t b = 0; b < entry; ++b) bytes[i * entry + b] = byte_of(static_cast<std::size_t>(me), i, b);
        send.assign(std::span<const std::uint8_t>(bytes));
        const std::size_t received = ranks * static_cast<std::size_t>(mine.size()) * entry;
        recv.reserve(std::max<std::size_t>(1, received));
        double sent = 0;
        for (std::size_t r = 0; r < ranks; ++r) sent += static_cast<double>(counts[r]);
        measure(
            name, tokens, sent,
            [&] {
              return stream_seconds(*space, [&] {
                c.all_to_all_v(send.data(), counts, offsets, recv.data(), recv_counts, recv_offsets, 1);
              });
            },
            [&] {
              const auto got = recv.to_host<std::uint8_t>(received);
              std::int64_t wrong = 0;
              for (std::size_t src = 0; src < ranks; ++src)
                for (std::int64_t k = 0; k < mine.size(); ++k)
                  for (std::size_t b = 0; b < entry; ++b)
                    wrong +=
                        got[static_cast<std::size_t>(recv_offsets[src]) + static_cast<std::size_t>(k) * entry + b] !=
                        byte_of(src, static_cast<std::size_t>(mine.begin + k), b);
              return wrong;
            });
      }
  }
  return results;
}

}  // namespace pleshard

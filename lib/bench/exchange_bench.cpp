#include "bench/exchange_bench.hpp"

#include "bench/timing.hpp"
#include "core/mpi_check.hpp"
#include "dist/communicator.hpp"

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

}  // namespace

std::vector<ExchangeBenchResult> run_exchange_bench(MPI_Comm comm, const ExchangeBenchOptions& o) {
  MpiCommunicator c(comm);
  const auto agree = [comm](double seconds) { return reduce_max(comm, seconds); };
  const int n = c.size();
  const int me = c.rank();
  std::vector<ExchangeBenchResult> results;
  for (const std::int64_t tokens : o.step_tokens) {
    // Ids: each rank's block encodes (rank, index) so every received id names its sender.
    {
      const auto count = static_cast<std::size_t>(tokens * o.heads);
      std::vector<std::int64_t> send(count), recv(count * static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < count; ++i) send[i] = (static_cast<std::int64_t>(me) << 40) + static_cast<std::int64_t>(i);
      const std::span<const std::uint8_t> s(reinterpret_cast<const std::uint8_t*>(send.data()), count * 8);
      const std::span<std::uint8_t> r(reinterpret_cast<std::uint8_t*>(recv.data()), recv.size() * 8);
      ExchangeBenchResult res{"all_gather", tokens, static_cast<double>(r.size())};
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      res.seconds = median_seconds_collective([&] { return host_seconds([&] { c.all_gather(s, r); }); }, agree,
                                              o.min_repeats, o.min_seconds);
      for (int src = 0; src < n; ++src)
        for (std::size_t i = 0; i < count; ++i)
          res.wrong += recv[static_cast<std::size_t>(src) * count + i] != (static_cast<std::int64_t>(src) << 40) + static_cast<std::int64_t>(i);
      res.seconds = reduce_max(comm, res.seconds);
      res.wrong = reduce_sum(comm, res.wrong);
      res.ranks = n;
      results.push_back(res);
    }
    // Embeddings: element i is owned by rank i % n, which contributes (i / n) + 1; others 0.
    const auto values = static_cast<std::size_t>(tokens) * static_cast<std::size_t>(o.ple_embed_dim);
    const auto padded = (values + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    std::vector<std::uint16_t> partial(padded), data(padded);
    for (std::size_t i = 0; i < padded; ++i)
      partial[i] = static_cast<int>(i % static_cast<std::size_t>(n)) == me ? static_cast<std::uint16_t>(i / static_cast<std::size_t>(n) + 1) : 0;
    {
      ExchangeBenchResult res{"all_reduce", tokens, static_cast<double>(padded * 2)};
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      res.seconds = median_seconds_collective(
          [&] {
            data = partial;
            return host_seconds([&] { c.all_reduce(data.data(), padded, Element::u16, ReduceOp::owned); });
          },
          agree, o.min_repeats, o.min_seconds);
      for (std::size_t i = 0; i < padded; ++i) res.wrong += data[i] != static_cast<std::uint16_t>(i / static_cast<std::size_t>(n) + 1);
      res.seconds = reduce_max(comm, res.seconds);
      res.wrong = reduce_sum(comm, res.wrong);
      res.ranks = n;
      results.push_back(res);
    }
    {
      const std::size_t per_rank = padded / static_cast<std::size_t>(n);
      std::vector<std::uint16_t> mine(per_rank);
      ExchangeBenchResult res{"reduce_scatter", tokens, static_cast<double>(padded * 2)};
      PLESHARD_MPI_CHECK(MPI_Barrier(comm));
      res.seconds = median_seconds_collective(
          [&] {
            return host_seconds(
                [&] { c.reduce_scatter(partial.data(), mine.data(), per_rank, Element::u16, ReduceOp::owned); });
          },
          agree, o.min_repeats, o.min_seconds);
      for (std::size_t i = 0; i < per_rank; ++i) {
        const std::size_t global = static_cast<std::size_t>(me) * per_rank + i;
        res.wrong += mine[i] != static_cast<std::uint16_t>(global / static_cast<std::size_t>(n) + 1);
      }
      res.seconds = reduce_max(comm, res.seconds);
      res.wrong = reduce_sum(comm, res.wrong);
      res.ranks = n;
      results.push_back(res);
    }
  }
  return results;
}

}  // namespace pleshard

// The collectives of every backend on 1..4 ranks: MPI on host memory; on a GPU, MPI through
// host staging and NCCL (where each rank has a GPU of its own; ranks bound to GPUs as the
// engine binds them). Data encode (rank, index) so every received element names its sender
// and position.

#include <gtest/gtest.h>
#include <mpi.h>

#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/mpi_check.hpp"
#include "dist/communicator_factory.hpp"
#include "dist/topology.hpp"
#include "exec/step_space.hpp"
#include "store/row_store_factory.hpp"
#if PLESHARD_HAVE_CUDA
#include "dist/gpu_binding.hpp"
#endif

namespace {

using namespace pleshard;

std::int64_t code(int rank, std::int64_t index) { return (static_cast<std::int64_t>(rank) << 32) + index; }

// A backend and the space its buffers live in: MPI on host memory; on a GPU, MPI through
// host staging and NCCL (one GPU per rank) on device memory.
class Backend {
 public:
  explicit Backend(CollectiveBackend backend) {
    space_ = backend == CollectiveBackend::mpi ? make_host_space() : make_tier_space(StorageTier::device);
    PLESHARD_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    comm = make_communicator(backend, comm_, *space_);
  }
  ~Backend() {
    comm.reset();
    MPI_Comm_free(&comm_);
  }
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // A buffer of the space holding `host`.
  template <typename T>
  SpaceBuffer put(const std::vector<T>& host) {
    SpaceBuffer b(*space_);
    b.assign(std::span<const T>(host));
    return b;
  }

  std::unique_ptr<Communicator> comm;

 private:
  std::unique_ptr<StepSpace> space_;
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class Collectives : public ::testing::TestWithParam<CollectiveBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == CollectiveBackend::mpi) {
      backend = std::make_unique<Backend>(GetParam());
      return;
    }
    if (!gpu_available()) GTEST_SKIP() << "no CUDA device";
    if (!backend_built(GetParam())) GTEST_SKIP() << "built without " << to_string(GetParam());
#if PLESHARD_HAVE_CUDA
    int world = 1;
    int rank = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, 1));
    const GpuBinding gpus = bind_local_gpu(comms.world());
    if (GetParam() == CollectiveBackend::nccl && !gpus.own_gpu) GTEST_SKIP() << gpus.why;
#endif
    backend = std::make_unique<Backend>(GetParam());
  }
  std::unique_ptr<Backend> backend;
};

TEST_P(Collectives, AllGatherPlacesEachRanksBlockInRankOrder) {
  Communicator& c = *backend->comm;
  std::vector<std::int64_t> send(5);
  for (std::int64_t i = 0; i < 5; ++i) send[i] = code(c.rank(), i);
  SpaceBuffer s = backend->put(send);
  SpaceBuffer r = backend->put(std::vector<std::int64_t>(5 * static_cast<std::size_t>(c.size())));
  c.all_gather({s.data(), send.size() * 8}, {r.data(), send.size() * 8 * static_cast<std::size_t>(c.size())});
  const auto recv = r.to_host<std::int64_t>(5 * static_cast<std::size_t>(c.size()));
  for (int k = 0; k < c.size(); ++k)
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(recv[static_cast<std::size_t>(k * 5 + i)], code(k, i));
  EXPECT_EQ(c.counters().at("all_gather").calls, 1);
}

TEST_P(Collectives, AllReduceSumMaxAndOwnedBits) {
  Communicator& c = *backend->comm;
  SpaceBuffer sum = backend->put(std::vector<std::int64_t>{c.rank() + 1});
  c.all_reduce(sum.data(), 1, Element::i64, ReduceOp::sum);
  EXPECT_EQ(sum.to_host<std::int64_t>(1)[0], static_cast<std::int64_t>(c.size()) * (c.size() + 1) / 2);
  SpaceBuffer max = backend->put(std::vector<std::int64_t>{c.rank()});
  c.all_reduce(max.data(), 1, Element::i64, ReduceOp::max);
  EXPECT_EQ(max.to_host<std::int64_t>(1)[0], c.size() - 1);
  // Element i is owned by rank i % size; -0.0 (0x8000) must survive, as a float sum would not.
  for (const std::size_t n : {std::size_t{12}, std::size_t{13}}) {  // whole words, and not
    std::vector<std::uint16_t> owned(n);
    for (std::size_t i = 0; i < owned.size(); ++i)
      owned[i] =
          static_cast<int>(i) % c.size() == c.rank() ? static_cast<std::uint16_t>(i == 0 ? 0x8000 : 0x100 + i) : 0;
    SpaceBuffer b = backend->put(owned);
    c.all_reduce(b.data(), n, Element::u16, ReduceOp::owned);
    const auto got = b.to_host<std::uint16_t>(n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(got[i], i == 0 ? 0x8000 : 0x100 + i);
  }
}

TEST_P(Collectives, ReduceScatterGivesEachRankItsBlock) {
  Communicator& c = *backend->comm;
  const std::size_t per_rank = 3;
  std::vector<std::uint32_t> send(per_rank * static_cast<std::size_t>(c.size()));
  for (std::size_t i = 0; i < send.size(); ++i)
    send[i] = static_cast<std::uint32_t>(c.rank() + 1) * 1000u + static_cast<std::uint32_t>(i);
  SpaceBuffer s = backend->put(send);
  SpaceBuffer r = backend->put(std::vector<std::uint32_t>(per_rank));
  c.reduce_scatter(s.data(), r.data(), per_rank, Element::u32, ReduceOp::sum);
  const auto recv = r.to_host<std::uint32_t>(per_rank);
  const std::uint32_t rank_sum = static_cast<std::uint32_t>(c.size() * (c.size() + 1) / 2) * 1000u;
  for (std::size_t i = 0; i < per_rank; ++i)
    EXPECT_EQ(recv[i],
              rank_sum + static_cast<std::uint32_t>(c.size()) * static_cast<std::uint32_t>(c.rank() * per_rank + i));
}

// Counts in bytes (unit 1) and in 8-byte entries (unit 8, as the owner exchange counts rows).
TEST_P(Collectives, AllToAllVDeliversUnevenBlocks) {
  Communicator& c = *backend->comm;
  const int n = c.size();
  for (const std::int64_t unit : {1, 8}) {
    SCOPED_TRACE("unit " + std::to_string(unit));
    const std::int64_t per_element = 8 / unit;  // counts of one 8-byte element
    // Rank s sends (s + d + 1) elements to rank d, each coded (s, d * 100 + k).
    std::vector<std::int64_t> send_counts(n), send_offsets(n), recv_counts(n), recv_offsets(n);
    std::vector<std::int64_t> send;
    for (int d = 0; d < n; ++d) {
      send_offsets[d] = static_cast<std::int64_t>(send.size()) * per_element;
      for (int k = 0; k < c.rank() + d + 1; ++k) send.push_back(code(c.rank(), d * 100 + k));
      send_counts[d] = (c.rank() + d + 1) * per_element;
    }
    std::int64_t total = 0;  // elements
    for (int s = 0; s < n; ++s) {
      recv_offsets[s] = total * per_element;
      recv_counts[s] = (s + c.rank() + 1) * per_element;
      total += s + c.rank() + 1;
    }
    SpaceBuffer s = backend->put(send);
    SpaceBuffer r = backend->put(std::vector<std::int64_t>(static_cast<std::size_t>(total)));
    c.all_to_all_v(s.data(), send_counts, send_offsets, r.data(), recv_counts, recv_offsets,
                   static_cast<std::size_t>(unit));
    const auto recv = r.to_host<std::int64_t>(static_cast<std::size_t>(total));
    for (int src = 0; src < n; ++src)
      for (int k = 0; k < src + c.rank() + 1; ++k)
        EXPECT_EQ(recv[static_cast<std::size_t>(recv_offsets[src] / per_element + k)], code(src, c.rank() * 100 + k));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, Collectives,
                         ::testing::Values(CollectiveBackend::mpi, CollectiveBackend::mpi_staged,
                                           CollectiveBackend::nccl),
                         [](const auto& param_info) {
                           std::string name = to_string(param_info.param);
                           std::erase(name, '-');  // test names are identifiers
                           return name;
                         });

TEST(MpiCounts, SizesOutsideIntAreRefusedNamingWhat) {
  EXPECT_EQ(mpi_count(std::size_t{0}, "bytes"), 0);
  EXPECT_EQ(mpi_count(static_cast<std::size_t>(std::numeric_limits<int>::max()), "bytes"),
            std::numeric_limits<int>::max());
  EXPECT_THROW((void)mpi_count(std::size_t{1} << 31, "bytes"), SystemError);
  EXPECT_THROW((void)mpi_count(std::int64_t{1} << 32, "bytes"), SystemError);
  EXPECT_THROW((void)mpi_count(std::int64_t{-1}, "bytes"), SystemError);
  try {
    (void)mpi_count(std::uint64_t{5'000'000'000}, "all_gather: bytes per rank");
    FAIL() << "no error";
  } catch (const SystemError& e) {
    EXPECT_NE(std::string(e.what()).find("all_gather: bytes per rank: 5000000000"), std::string::npos) << e.what();
  }
}

TEST(MpiCounts, ChunksTileTheBufferInOrder) {
  const auto pieces = [](std::size_t total, std::size_t max_chunk) {
    std::vector<std::pair<std::size_t, int>> out;
    for_each_mpi_chunk(total, max_chunk, [&](std::size_t first, int count) { out.emplace_back(first, count); });
    return out;
  };
  using Pieces = std::vector<std::pair<std::size_t, int>>;
  EXPECT_EQ(pieces(23, 5), (Pieces{{0, 5}, {5, 5}, {10, 5}, {15, 5}, {20, 3}}));
  EXPECT_EQ(pieces(10, 5), (Pieces{{0, 5}, {5, 5}}));
  EXPECT_EQ(pieces(4, 5), (Pieces{{0, 4}}));
  EXPECT_TRUE(pieces(0, 5).empty());
  // Buffers past 2^32 elements: every piece fits an int, and they add up.
  const std::size_t total = (std::size_t{1} << 33) + 7;
  std::size_t next = 0;
  for_each_mpi_chunk(total, k_mpi_max_chunk, [&](std::size_t first, int count) {
    EXPECT_EQ(first, next);
    EXPECT_GT(count, 0);
    EXPECT_LE(static_cast<std::size_t>(count), k_mpi_max_chunk);
    next += static_cast<std::size_t>(count);
  });
  EXPECT_EQ(next, total);
  EXPECT_THROW(pieces(1, 0), SystemError);
  EXPECT_THROW(pieces(1, k_mpi_max_chunk + 1), SystemError);
}

// An MPI backend that splits every reduction into calls of at most 5 elements against one
// that makes a single call: the same results, and one counted collective per reduction.
class SplitReductions : public ::testing::Test {
 protected:
  SplitReductions() {
    PLESHARD_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
    split = std::make_unique<MpiCommunicator>(comm_, 5);
    whole = std::make_unique<MpiCommunicator>(comm_);
  }
  ~SplitReductions() override {
    split.reset();
    whole.reset();
    MPI_Comm_free(&comm_);
  }
  std::unique_ptr<MpiCommunicator> split;
  std::unique_ptr<MpiCommunicator> whole;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

TEST_F(SplitReductions, AllReduceSumsAndOwnedBitsOverSeveralCalls) {
  const int size = split->size();
  const int rank = split->rank();
  std::vector<std::int64_t> codes(23);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = code(rank, static_cast<std::int64_t>(i));
  std::vector<std::int64_t> by_whole = codes;
  split->all_reduce(std::span<std::int64_t>(codes), ReduceOp::sum);
  whole->all_reduce(std::span<std::int64_t>(by_whole), ReduceOp::sum);
  const std::int64_t ranks_sum = static_cast<std::int64_t>(size) * (size - 1) / 2;
  for (std::size_t i = 0; i < codes.size(); ++i)
    EXPECT_EQ(codes[i], (ranks_sum << 32) + size * static_cast<std::int64_t>(i)) << "element " << i;
  EXPECT_EQ(codes, by_whole);
  // Element i is owned by rank i % size, which writes its own rank and the index.
  std::vector<std::uint16_t> owned(37);
  for (std::size_t i = 0; i < owned.size(); ++i)
    owned[i] = static_cast<int>(i) % size == rank ? static_cast<std::uint16_t>((rank << 8) + 1 + i) : 0;
  split->all_reduce(std::span<std::uint16_t>(owned), ReduceOp::owned);
  for (std::size_t i = 0; i < owned.size(); ++i)
    EXPECT_EQ(owned[i], ((static_cast<int>(i) % size) << 8) + 1 + static_cast<int>(i)) << "element " << i;
  EXPECT_EQ(split->counters().at("all_reduce").calls, 2);
}

TEST_F(SplitReductions, ReduceScatterGivesEachRankItsBlockOverSeveralCalls) {
  const int size = split->size();
  const int rank = split->rank();
  for (const std::size_t per_rank : {std::size_t{5}, std::size_t{12}, std::size_t{23}}) {
    std::vector<std::int64_t> send(per_rank * static_cast<std::size_t>(size));
    for (std::size_t i = 0; i < send.size(); ++i) send[i] = code(rank, static_cast<std::int64_t>(i));
    std::vector<std::int64_t> got(per_rank, -1);
    std::vector<std::int64_t> by_whole(per_rank, -1);
    split->reduce_scatter(send.data(), got.data(), per_rank, Element::i64, ReduceOp::sum);
    whole->reduce_scatter(send.data(), by_whole.data(), per_rank, Element::i64, ReduceOp::sum);
    const std::int64_t ranks_sum = static_cast<std::int64_t>(size) * (size - 1) / 2;
    for (std::size_t i = 0; i < per_rank; ++i) {
      const auto index = static_cast<std::int64_t>(static_cast<std::size_t>(rank) * per_rank + i);
      EXPECT_EQ(got[i], (ranks_sum << 32) + size * index) << per_rank << " per rank, element " << i;
    }
    EXPECT_EQ(got, by_whole);
  }
  EXPECT_EQ(split->counters().at("reduce_scatter").calls, 3);
}

TEST_F(SplitReductions, AllToAllOffsetsOutsideIntAreRefusedBeforeAnyCall) {
  const auto n = static_cast<std::size_t>(whole->size());
  std::vector<std::int64_t> counts(n, 0), offsets(n, 0);
  std::vector<std::int64_t> far = offsets;
  far.back() = std::int64_t{1} << 31;  // every rank refuses the same entry, so none waits
  std::uint8_t byte = 0;
  EXPECT_THROW(whole->all_to_all_v(&byte, counts, far, &byte, counts, offsets, 1), SystemError);
  EXPECT_NO_THROW(whole->all_to_all_v(&byte, counts, offsets, &byte, counts, offsets, 1));
}

TEST(Communicators, GroupsFollowTheLayout) {
  int world = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int tp = 1; tp <= world; ++tp) {
    if (world % tp != 0) continue;
    for (int etp = tp; etp <= world; etp += tp) {
      if ((world / tp) % (etp / tp) != 0) continue;
      const Topology t = make_topology(world, rank, tp, etp);
      const Communicators comms(MPI_COMM_WORLD, t);
      MpiCommunicator etp_comm(comms.etp()), tp_comm(comms.tp()), dp_comm(comms.dp()), slot_comm(comms.etp_dp());
      EXPECT_EQ(etp_comm.size(), etp);
      EXPECT_EQ(etp_comm.rank(), t.etp_rank());
      EXPECT_EQ(tp_comm.size(), tp);
      EXPECT_EQ(tp_comm.rank(), t.tp_rank());
      EXPECT_EQ(dp_comm.size(), t.dp());
      EXPECT_EQ(slot_comm.size(), t.edp());
      EXPECT_EQ(slot_comm.rank(), t.etp_dp_rank());
      // Members of my ETP group are exactly the ranks with my group index.
      std::int64_t group = t.etp_group();
      etp_comm.all_reduce(std::span<std::int64_t>(&group, 1), ReduceOp::sum);
      EXPECT_EQ(group, static_cast<std::int64_t>(t.etp_group()) * etp);
    }
  }
}

}  // namespace

// The MPI backend's collectives on 1..4 ranks. Data encode (rank, index) so every
// received element names its sender and position.

#include <gtest/gtest.h>
#include <mpi.h>

#include <numeric>

#include "dist/communicator.hpp"
#include "dist/topology.hpp"

namespace {

using namespace pleshard;

std::int64_t code(int rank, std::int64_t index) { return (static_cast<std::int64_t>(rank) << 32) + index; }

TEST(MpiCommunicator, AllGatherPlacesEachRanksBlockInRankOrder) {
  MpiCommunicator c(MPI_COMM_WORLD);
  std::vector<std::int64_t> send(5);
  for (std::int64_t i = 0; i < 5; ++i) send[i] = code(c.rank(), i);
  std::vector<std::int64_t> recv(5 * static_cast<std::size_t>(c.size()));
  c.all_gather({reinterpret_cast<const std::uint8_t*>(send.data()), send.size() * 8},
               {reinterpret_cast<std::uint8_t*>(recv.data()), recv.size() * 8});
  for (int r = 0; r < c.size(); ++r)
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(recv[static_cast<std::size_t>(r * 5 + i)], code(r, i));
  EXPECT_EQ(c.counters().at("all_gather").calls, 1);
}

TEST(MpiCommunicator, AllReduceSumMaxAndOwnedBits) {
  MpiCommunicator c(MPI_COMM_WORLD);
  std::int64_t sum = c.rank() + 1;
  c.all_reduce(std::span<std::int64_t>(&sum, 1), ReduceOp::sum);
  EXPECT_EQ(sum, static_cast<std::int64_t>(c.size()) * (c.size() + 1) / 2);
  std::int64_t max = c.rank();
  c.all_reduce(std::span<std::int64_t>(&max, 1), ReduceOp::max);
  EXPECT_EQ(max, c.size() - 1);
  // Element i is owned by rank i % size; -0.0 (0x8000) must survive, as a float sum would not.
  std::vector<std::uint16_t> owned(12);
  for (std::size_t i = 0; i < owned.size(); ++i)
    owned[i] = static_cast<int>(i) % c.size() == c.rank() ? static_cast<std::uint16_t>(i == 0 ? 0x8000 : 0x100 + i) : 0;
  c.all_reduce(std::span<std::uint16_t>(owned), ReduceOp::bitwise_or);
  for (std::size_t i = 0; i < owned.size(); ++i) EXPECT_EQ(owned[i], i == 0 ? 0x8000 : 0x100 + i);
}

TEST(MpiCommunicator, ReduceScatterGivesEachRankItsBlock) {
  MpiCommunicator c(MPI_COMM_WORLD);
  const std::size_t per_rank = 3;
  std::vector<std::uint32_t> send(per_rank * static_cast<std::size_t>(c.size()));
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<std::uint32_t>(c.rank() + 1) * 1000u + static_cast<std::uint32_t>(i);
  std::vector<std::uint32_t> recv(per_rank);
  c.reduce_scatter(send.data(), recv.data(), per_rank, Element::u32, ReduceOp::sum);
  const std::uint32_t rank_sum = static_cast<std::uint32_t>(c.size() * (c.size() + 1) / 2) * 1000u;
  for (std::size_t i = 0; i < per_rank; ++i)
    EXPECT_EQ(recv[i], rank_sum + static_cast<std::uint32_t>(c.size()) * static_cast<std::uint32_t>(c.rank() * per_rank + i));
}

TEST(MpiCommunicator, AllToAllVDeliversUnevenBlocks) {
  MpiCommunicator c(MPI_COMM_WORLD);
  const int n = c.size();
  // Rank s sends (s + d + 1) elements to rank d, each coded (s, d * 100 + k).
  std::vector<std::int64_t> send_counts(n), send_offsets(n), recv_counts(n), recv_offsets(n);
  std::vector<std::int64_t> send;
  for (int d = 0; d < n; ++d) {
    send_offsets[d] = static_cast<std::int64_t>(send.size()) * 8;
    for (int k = 0; k < c.rank() + d + 1; ++k) send.push_back(code(c.rank(), d * 100 + k));
    send_counts[d] = (c.rank() + d + 1) * 8;
  }
  std::int64_t total = 0;
  for (int s = 0; s < n; ++s) {
    recv_offsets[s] = total;
    recv_counts[s] = (s + c.rank() + 1) * 8;
    total += recv_counts[s];
  }
  std::vector<std::int64_t> recv(static_cast<std::size_t>(total / 8));
  c.all_to_all_v(reinterpret_cast<const std::uint8_t*>(send.data()), send_counts, send_offsets,
                 reinterpret_cast<std::uint8_t*>(recv.data()), recv_counts, recv_offsets);
  for (int s = 0; s < n; ++s)
    for (int k = 0; k < s + c.rank() + 1; ++k)
      EXPECT_EQ(recv[static_cast<std::size_t>(recv_offsets[s] / 8 + k)], code(s, c.rank() * 100 + k));
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

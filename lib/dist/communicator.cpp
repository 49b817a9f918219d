#include "dist/communicator.hpp"

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/watched_wait.hpp"

namespace pleshard {

std::size_t element_bytes(Element e) {
  switch (e) {
    case Element::u8:
      return 1;
    case Element::u16:
      return 2;
    case Element::u32:
      return 4;
    case Element::i64:
      return 8;
    case Element::f32:
      return 4;
  }
  return 0;
}

void Communicator::count(const std::string& name, double bytes) {
  CollectiveCounter& c = counters_[name];
  c.calls += 1;
  c.bytes += bytes;
}

double bus_factor(const std::string& collective, int ranks) {
  const double n = ranks;
  if (collective == "all_reduce") return 2 * (n - 1) / n;
  return (n - 1) / n;  // all_gather, reduce_scatter, all_to_all
}

namespace {

MPI_Datatype datatype(Element e) {
  switch (e) {
    case Element::u8:
      return mpi_type<std::uint8_t>();
    case Element::u16:
      return mpi_type<std::uint16_t>();
    case Element::u32:
      return mpi_type<std::uint32_t>();
    case Element::i64:
      return mpi_type<std::int64_t>();
    case Element::f32:
      return mpi_type<float>();
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op op_of(ReduceOp op, Element e) {
  if (op == ReduceOp::bitwise_or || op == ReduceOp::owned) {
    if (e == Element::f32) throw SystemError("bitwise reductions need an unsigned element type");
    return MPI_BOR;
  }
  return op == ReduceOp::max ? MPI_MAX : MPI_SUM;
}

// An entry of an all-to-all's byte counts or offsets as MPI's int; the message, naming the
// peer, is built only when it does not fit.
int peer_count(std::int64_t value, std::size_t peer, const char* what) {
  if (value >= 0 && std::in_range<int>(value)) return static_cast<int>(value);
  return mpi_count(value, std::string("all_to_all_v: ") + what + " of rank " + std::to_string(peer));
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm, std::size_t max_chunk) : comm_(comm), max_chunk_(max_chunk) {
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
}

void MpiCommunicator::all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) {
  if (recv.size() != send.size() * static_cast<std::size_t>(size_))
    throw SystemError("all_gather: receive buffer is not size() blocks");
  const int bytes = mpi_count(send.size(), "all_gather: bytes per rank");
  timed("all_gather", static_cast<double>(recv.size()), [&] {
    MPI_Request request = MPI_REQUEST_NULL;
    PLESHARD_MPI_CHECK(MPI_Iallgather(send.data(), bytes, MPI_BYTE, recv.data(), bytes, MPI_BYTE, comm_, &request));
    wait_watched(request, "all_gather");
  });
}

void MpiCommunicator::all_reduce(void* data, std::size_t count, Element element, ReduceOp op) {
  const std::size_t size = element_bytes(element);
  const MPI_Datatype type = datatype(element);
  const MPI_Op mpi_op = op_of(op, element);
  auto* bytes = static_cast<std::uint8_t*>(data);
  timed("all_reduce", static_cast<double>(count * size), [&] {
    for_each_mpi_chunk(count, max_chunk_, [&](std::size_t first, int n) {
      MPI_Request request = MPI_REQUEST_NULL;
      PLESHARD_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, bytes + first * size, n, type, mpi_op, comm_, &request));
      wait_watched(request, "all_reduce");
    });
  });
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) {
  const std::size_t size = element_bytes(element);
  const MPI_Datatype type = datatype(element);
  const MPI_Op mpi_op = op_of(op, element);
  timed("reduce_scatter", static_cast<double>(count * size * static_cast<std::size_t>(size_)), [&] {
    if (count <= max_chunk_) {
      MPI_Request request = MPI_REQUEST_NULL;
      PLESHARD_MPI_CHECK(MPI_Ireduce_scatter_block(send, recv, mpi_count(count, "reduce_scatter: elements per rank"),
                                                   type, mpi_op, comm_, &request));
      wait_watched(request, "reduce_scatter");
      return;
    }
    // Past one call's count a piece of every block lies apart from the next block's, so
    // each rank's block is reduced to it piece by piece.
    const auto* blocks = static_cast<const std::uint8_t*>(send);
    auto* mine = static_cast<std::uint8_t*>(recv);
    for_each_mpi_chunk(count, max_chunk_, [&](std::size_t first, int n) {
      for (int root = 0; root < size_; ++root) {
        MPI_Request request = MPI_REQUEST_NULL;
        PLESHARD_MPI_CHECK(MPI_Ireduce(blocks + (static_cast<std::size_t>(root) * count + first) * size,
                                       root == rank_ ? mine + first * size : nullptr, n, type, mpi_op, root, comm_,
                                       &request));
        wait_watched(request, "reduce_scatter");
      }
    });
  });
}

void MpiCommunicator::all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                                   std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                                   std::span<const std::int64_t> recv_counts,
                                   std::span<const std::int64_t> recv_offsets, std::size_t unit) {
  std::vector<int> sc(send_counts.size()), so(send_counts.size()), rc(recv_counts.size()), ro(recv_counts.size());
  double bytes = 0;
  for (std::size_t r = 0; r < sc.size(); ++r) {
    sc[r] = peer_count(send_counts[r], r, "entries sent");
    so[r] = peer_count(send_offsets[r], r, "send offset");
    rc[r] = peer_count(recv_counts[r], r, "entries received");
    ro[r] = peer_count(recv_offsets[r], r, "receive offset");
    bytes += static_cast<double>(send_counts[r]) * static_cast<double>(unit);
  }
  MPI_Datatype entry = MPI_BYTE;
  if (unit != 1) {
    PLESHARD_MPI_CHECK(MPI_Type_contiguous(mpi_count(unit, "all_to_all_v: bytes per entry"), MPI_BYTE, &entry));
    PLESHARD_MPI_CHECK(MPI_Type_commit(&entry));
  }
  try {
    timed("all_to_all", bytes, [&] {
      MPI_Request request = MPI_REQUEST_NULL;
      PLESHARD_MPI_CHECK(
          MPI_Ialltoallv(send, sc.data(), so.data(), entry, recv, rc.data(), ro.data(), entry, comm_, &request));
      wait_watched(request, "all_to_all");
    });
  } catch (...) {
    if (unit != 1) MPI_Type_free(&entry);
    throw;
  }
  if (unit != 1) PLESHARD_MPI_CHECK(MPI_Type_free(&entry));
}

}  // namespace pleshard

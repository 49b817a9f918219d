#include "dist/communicator.hpp"

#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/mpi_check.hpp"

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

int as_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw SystemError("collective of " + std::to_string(n) + " elements exceeds MPI's int counts");
  return static_cast<int>(n);
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : comm_(comm) {
  PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  PLESHARD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
}

void MpiCommunicator::all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) {
  if (recv.size() != send.size() * static_cast<std::size_t>(size_))
    throw SystemError("all_gather: receive buffer is not size() blocks");
  timed("all_gather", static_cast<double>(recv.size()), [&] {
    PLESHARD_MPI_CHECK(MPI_Allgather(send.data(), as_count(send.size()), MPI_BYTE, recv.data(), as_count(send.size()),
                                     MPI_BYTE, comm_));
  });
}

void MpiCommunicator::all_reduce(void* data, std::size_t count, Element element, ReduceOp op) {
  timed("all_reduce", static_cast<double>(count * element_bytes(element)), [&] {
    PLESHARD_MPI_CHECK(
        MPI_Allreduce(MPI_IN_PLACE, data, as_count(count), datatype(element), op_of(op, element), comm_));
  });
}

void MpiCommunicator::reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) {
  timed("reduce_scatter", static_cast<double>(count * element_bytes(element) * static_cast<std::size_t>(size_)), [&] {
    PLESHARD_MPI_CHECK(
        MPI_Reduce_scatter_block(send, recv, as_count(count), datatype(element), op_of(op, element), comm_));
  });
}

void MpiCommunicator::all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                                   std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                                   std::span<const std::int64_t> recv_counts,
                                   std::span<const std::int64_t> recv_offsets) {
  std::vector<int> sc(send_counts.size()), so(send_counts.size()), rc(recv_counts.size()), ro(recv_counts.size());
  double bytes = 0;
  for (std::size_t r = 0; r < sc.size(); ++r) {
    sc[r] = as_count(static_cast<std::size_t>(send_counts[r]));
    so[r] = as_count(static_cast<std::size_t>(send_offsets[r]));
    rc[r] = as_count(static_cast<std::size_t>(recv_counts[r]));
    ro[r] = as_count(static_cast<std::size_t>(recv_offsets[r]));
    bytes += static_cast<double>(send_counts[r]);
  }
  timed("all_to_all", bytes, [&] {
    PLESHARD_MPI_CHECK(
        MPI_Alltoallv(send, sc.data(), so.data(), MPI_BYTE, recv, rc.data(), ro.data(), MPI_BYTE, comm_));
  });
}

}  // namespace pleshard

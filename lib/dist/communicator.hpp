#pragma once
// The collectives the exchange needs, behind one interface so that backends (MPI here,
// NCCL on GPUs) are interchangeable. A call is ordered on the step space's stream like any
// other work there: its result is in place for the space's next work (MPI on host memory
// completes inside the call; NCCL only enqueues). Each call records its bytes, and the time
// of the collective itself, for reports in nccl-tests' terms (algbw, busbw).

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "core/mpi_check.hpp"
#include "dist/mpi_type.hpp"

namespace pleshard {

enum class Element { u8, u16, u32, i64, f32 };
// owned: every element is non-zero on at most one rank, and the result is that rank's bits
// (the exchange's partial rows). MPI reduces it with bitwise OR; NCCL, which has no
// bitwise operations, with an integer sum over bytes, which is the same on such data.
enum class ReduceOp { sum, max, bitwise_or, owned };

template <typename T>
constexpr Element element_of() {
  if constexpr (std::is_same_v<T, std::uint8_t>)
    return Element::u8;
  else if constexpr (std::is_same_v<T, std::uint16_t>)
    return Element::u16;
  else if constexpr (std::is_same_v<T, std::uint32_t>)
    return Element::u32;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return Element::i64;
  else if constexpr (std::is_same_v<T, float>)
    return Element::f32;
  else
    static_assert(sizeof(T) == 0, "no collective element type for this type");
}

[[nodiscard]] std::size_t element_bytes(Element e);

// Bytes and time of one kind of collective, summed over calls.
struct CollectiveCounter {
  std::int64_t calls = 0;
  double bytes = 0;  // nccl-tests "size" of each call, summed
  double seconds = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual int rank() const = 0;

  // recv holds size() blocks of send.size() bytes, in rank order.
  virtual void all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) = 0;
  virtual void all_reduce(void* data, std::size_t count, Element element, ReduceOp op) = 0;
  // send holds size() blocks of `count` elements; block r is reduced into rank r's recv.
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) = 0;
  // Counts and displacements per rank in entries of `unit` bytes (rows of a table: MPI takes
  // them as int, so counting rows rather than bytes keeps a step's exchange inside int).
  virtual void all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                            std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                            std::span<const std::int64_t> recv_counts, std::span<const std::int64_t> recv_offsets,
                            std::size_t unit) = 0;

  // Adds the times of the calls the space's stream has passed to the counters (backends
  // that time with events on the stream read them here; the rest count as they call).
  virtual void settle() {}
  // Throws SystemError when the backend has failed asynchronously (a peer's error, a
  // network fault), aborting itself first; a waiting loop calls it while it waits.
  virtual void check() {}
  // Gives up on every call in flight so that waits on them end (a stalled peer).
  virtual void abort() noexcept {}

  [[nodiscard]] const std::map<std::string, CollectiveCounter>& counters() const { return counters_; }
  // The calls (counter name, bytes) enqueued while the stream was being captured into a
  // CUDA graph since the last take, which a replay repeats; a replay adds them with count().
  [[nodiscard]] std::vector<std::pair<std::string, double>> take_captured() { return std::exchange(captured_, {}); }
  void count(const std::string& name, double bytes);

  template <typename T>
  void all_reduce(std::span<T> data, ReduceOp op) {
    all_reduce(data.data(), data.size(), element_of<T>(), op);
  }

 protected:
  // Runs f() and adds its time and `bytes` to the counter `name`.
  template <typename F>
  void timed(const char* name, double bytes, F&& f) {
    const double t0 = MPI_Wtime();
    f();
    CollectiveCounter& c = counters_[name];
    c.calls += 1;
    c.bytes += bytes;
    c.seconds += MPI_Wtime() - t0;
  }

  std::map<std::string, CollectiveCounter> counters_;
  std::vector<std::pair<std::string, double>> captured_;
};

// MPI backend over a communicator it does not own. Reductions of more than `max_chunk`
// elements (k_mpi_max_chunk; tests pass less to exercise the split) run as several calls,
// since MPI counts are int; gathers and all-to-alls past int counts are refused.
class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm, std::size_t max_chunk = k_mpi_max_chunk);
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int rank() const override { return rank_; }
  void all_gather(std::span<const std::uint8_t> send, std::span<std::uint8_t> recv) override;
  void all_reduce(void* data, std::size_t count, Element element, ReduceOp op) override;
  void reduce_scatter(const void* send, void* recv, std::size_t count, Element element, ReduceOp op) override;
  void all_to_all_v(const std::uint8_t* send, std::span<const std::int64_t> send_counts,
                    std::span<const std::int64_t> send_offsets, std::uint8_t* recv,
                    std::span<const std::int64_t> recv_counts, std::span<const std::int64_t> recv_offsets,
                    std::size_t unit) override;
  using Communicator::all_reduce;

 private:
  MPI_Comm comm_;
  std::size_t max_chunk_;
  int size_ = 1;
  int rank_ = 0;
};

// busbw factor of nccl-tests for a collective of `ranks` ranks.
[[nodiscard]] double bus_factor(const std::string& collective, int ranks);

}  // namespace pleshard

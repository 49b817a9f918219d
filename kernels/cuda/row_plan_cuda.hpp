#pragma once
// A layer's row plan (kernels/common/row_plan.hpp) made on the GPU: ids keyed by 32-bit
// offsets from the first owner's first row, sorted by CUB's radix sort, their runs counted
// by a scan; the distinct ids, every lookup's key and where each owner's ids start written
// in device memory. Every stage is a kernel or a CUB call on the stream with scratch sized
// up front, so a plan can be captured in a CUDA graph; only the owners' starts are small
// enough to be worth copying to the host, where a strategy needs its counts there.

#include <cstdint>
#include <span>
#include <vector>

#include <cuda_runtime_api.h>

namespace pleshard::kernels {

// Rows the owners' bounds may span, exclusive: rows are keyed by 32-bit offsets, one key
// kept for "outside the bounds".
inline constexpr std::int64_t k_max_distinct_rows = 0xFFFFFFFFll;

class DeviceRowPlan {
 public:
  DeviceRowPlan() = default;
  ~DeviceRowPlan();
  DeviceRowPlan(const DeviceRowPlan&) = delete;
  DeviceRowPlan& operator=(const DeviceRowPlan&) = delete;

  // Plans of up to `max_ids` lookups against the owners' `bounds` (E + 1 ascending, spanning
  // fewer than k_max_distinct_rows rows): the memory allocated and the bounds copied to the
  // device here, never in plan(), which a graph may capture; nothing done where both are
  // as reserved before. At most 2^31 - 1 ids (CUB's
  // sizes are int).
  void reserve(std::span<const std::int64_t> bounds, std::int64_t max_ids);
  // The device memory reserve() allocates for `max_ids` lookups and `owners` owners.
  [[nodiscard]] static std::size_t bytes_for(std::size_t owners, std::int64_t max_ids);
  // The plan of ids[0, n) (device memory, n at most the reserved count), on the stream.
  void plan(const std::int64_t* ids, std::int64_t n, cudaStream_t stream);

  // The last plan's `count` distinct ids (its owners' starts' last, known on the host) as
  // owner-local indexes of `width` bytes (kernels/common/row_pack.hpp) into `out` (device
  // memory), in their order — owner by owner — on the stream: what the owner exchange sends.
  void write_local_ids(int width, std::int64_t count, std::uint8_t* out, cudaStream_t stream) const;
  // The same in fixed-size messages (kernels/common/row_plan.hpp: slot_of), the count read on
  // the device: `slots` entries per owner into `out` (device memory), each the owner-local
  // index plus one, 0 where empty; and per lookup of the last plan its entry there (-1
  // outside the bounds) into `out` (device memory). Every owner's distinct ids fit in
  // `slots`. Nothing waits for the host: a graph may capture them.
  void write_local_ids_in_slots(int width, std::int64_t slots, std::uint8_t* out, cudaStream_t stream) const;
  void keys_in_slots(std::int64_t slots, std::int64_t* out, cudaStream_t stream) const;

  // Device memory, valid once the stream has run plan() and until the next plan():
  [[nodiscard]] const std::uint32_t* distinct() const { return distinct_; }  // offsets from first(), ascending
  [[nodiscard]] const std::int64_t* keys() const { return keys_; }           // -1 outside the bounds
  [[nodiscard]] const std::int64_t* owners() const { return owners_; }       // E + 1 starts; owners()[E] is the count
  [[nodiscard]] std::int64_t first() const { return first_; }
  [[nodiscard]] int owner_count() const { return owner_count_; }

 private:
  void release() noexcept;

  std::int64_t capacity_ = 0;
  std::int64_t lookups_count_ = 0;  // the last plan's n
  std::vector<std::int64_t> bounds_on_host_;
  std::int64_t first_ = 0;
  std::int64_t span_ = 0;
  int owner_count_ = 0;
  std::size_t temp_bytes_ = 0;
  void* memory_ = nullptr;            // one allocation, carved below
  std::uint32_t* offsets_ = nullptr;  // per lookup: its offset from first_, span_ outside; then head flags
  std::uint32_t* sorted_offsets_ = nullptr;
  std::uint32_t* lookups_ = nullptr;
  std::uint32_t* sorted_lookups_ = nullptr;
  std::uint32_t* runs_ = nullptr;  // inclusive count of distinct offsets up to each sorted lookup
  std::uint32_t* distinct_ = nullptr;
  std::int64_t* keys_ = nullptr;
  std::int64_t* bounds_ = nullptr;
  std::int64_t* owners_ = nullptr;
  void* temp_ = nullptr;  // CUB's
};

}  // namespace pleshard::kernels

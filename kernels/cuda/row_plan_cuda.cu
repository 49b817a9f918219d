#include "kernels/cuda/row_plan_cuda.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <string>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "core/error.hpp"
#include "kernels/common/row_pack.hpp"
#include "kernels/common/row_plan.hpp"
#include "kernels/cuda/cuda_check.hpp"

namespace pleshard::kernels {

namespace {

constexpr int k_threads = 256;

int blocks_for(std::int64_t n) {
  return static_cast<int>(std::min<std::int64_t>((n + k_threads - 1) / k_threads, 1 << 16));
}

// Lookups outside the bounds get the offset `span`, which sorts last.
__global__ void make_offsets(const std::int64_t* __restrict__ ids, std::int64_t n, std::int64_t first,
                             std::int64_t span, std::uint32_t* __restrict__ offsets,
                             std::uint32_t* __restrict__ lookups) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t offset = ids[i] - first;
    offsets[i] = static_cast<std::uint32_t>(offset >= 0 && offset < span ? offset : span);
    lookups[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void mark_heads(const std::uint32_t* __restrict__ sorted, std::int64_t n,
                           std::uint32_t* __restrict__ heads) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    heads[i] = (i == 0 || sorted[i] != sorted[i - 1]) ? 1u : 0u;
}

// runs[i] counts the distinct offsets of sorted[0..i]; sorted lookup i's key is runs[i] - 1.
__global__ void scatter_runs(const std::uint32_t* __restrict__ sorted, const std::uint32_t* __restrict__ lookups,
                             const std::uint32_t* __restrict__ runs, std::int64_t n, std::uint32_t none,
                             std::int64_t* __restrict__ keys, std::uint32_t* __restrict__ distinct) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t offset = sorted[i];
    const std::uint32_t run = runs[i] - 1;
    keys[lookups[i]] = offset == none ? -1 : static_cast<std::int64_t>(run);
    if (offset != none && (i == 0 || sorted[i - 1] != offset)) distinct[run] = offset;
  }
}

// owners[o] for o in [0, E]: where owner o's distinct ids start; owners[E] the count.
__global__ void owner_starts(const std::uint32_t* __restrict__ sorted, const std::uint32_t* __restrict__ runs,
                             std::int64_t n, std::uint32_t none, const std::uint32_t* __restrict__ distinct,
                             const std::int64_t* __restrict__ bounds, int owner_count,
                             std::int64_t* __restrict__ owners) {
  const std::int64_t count = n == 0 ? 0 : static_cast<std::int64_t>(runs[n - 1]) - (sorted[n - 1] == none ? 1 : 0);
  for (int o = static_cast<int>(threadIdx.x); o <= owner_count; o += static_cast<int>(blockDim.x))
    owners[o] =
        o == owner_count ? count : lower_bound_of(distinct, count, static_cast<std::uint32_t>(bounds[o] - bounds[0]));
}

// Distinct id j belongs to the last owner whose ids start at or before j.
__global__ void narrow_local_ids(const std::uint32_t* __restrict__ distinct, std::int64_t count,
                                 const std::int64_t* __restrict__ owners, const std::int64_t* __restrict__ bounds,
                                 int owner_count, int width, std::uint8_t* __restrict__ out) {
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < count;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t o = upper_bound_of(owners, owner_count, j) - 1;
    narrow_local_id(out, width, j, static_cast<std::uint64_t>(bounds[0] + distinct[j] - bounds[o]));
  }
}

// Distinct id j, if the plan has that many (its count is the owners' starts' last), at its
// entry of the fixed-size messages: the owner-local index plus one.
__global__ void slot_local_ids(const std::uint32_t* __restrict__ distinct, std::int64_t most,
                               const std::int64_t* __restrict__ owners, const std::int64_t* __restrict__ bounds,
                               int owner_count, int width, std::int64_t slots, std::uint8_t* __restrict__ out) {
  const std::int64_t count = owners[owner_count];
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < most && j < count;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t slot = slot_of(owners, owner_count, j, slots);
    narrow_local_id(out, width, slot, static_cast<std::uint64_t>(bounds[0] + distinct[j] - bounds[slot / slots] + 1));
  }
}

__global__ void slot_keys(const std::int64_t* __restrict__ keys, std::int64_t n,
                          const std::int64_t* __restrict__ owners, int owner_count, std::int64_t slots,
                          std::int64_t* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    out[i] = keys[i] < 0 ? -1 : slot_of(owners, owner_count, keys[i], slots);
}

std::size_t round_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

// What a plan of up to `n` lookups against `owners` owners allocates, in one block: six
// arrays of 32-bit entries per lookup, the keys, the bounds and the owners' starts, and
// CUB's scratch for the sort and the scan.
struct PlanSizes {
  std::size_t temp = 0;
  std::size_t total = 0;
};
PlanSizes plan_sizes(std::size_t n, std::size_t owners) {
  std::size_t sort_bytes = 0;
  std::size_t scan_bytes = 0;
  PLESHARD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
      nullptr, sort_bytes, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), static_cast<int>(n)));
  PLESHARD_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<const std::uint32_t*>(nullptr),
                                                    static_cast<std::uint32_t*>(nullptr), static_cast<int>(n)));
  PlanSizes sizes;
  sizes.temp = std::max(sort_bytes, scan_bytes);
  const std::size_t owners_bytes = (owners + 1) * sizeof(std::int64_t);
  sizes.total = 6 * round_up(n * 4) + round_up(n * 8) + 2 * round_up(owners_bytes) + round_up(sizes.temp);
  return sizes;
}

}  // namespace

std::size_t DeviceRowPlan::bytes_for(std::size_t owners, std::int64_t max_ids) {
  return plan_sizes(static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids)), owners).total;
}

DeviceRowPlan::~DeviceRowPlan() { release(); }

void DeviceRowPlan::release() noexcept {
  if (memory_ != nullptr) cudaFree(memory_);
  memory_ = nullptr;
  capacity_ = 0;
  owner_count_ = 0;
  bounds_on_host_.clear();
}

void DeviceRowPlan::reserve(std::span<const std::int64_t> bounds, std::int64_t max_ids) {
  if (bounds.size() < 2 || !std::is_sorted(bounds.begin(), bounds.end()))
    throw SystemError("DeviceRowPlan: owners' bounds must be at least two, ascending");
  const std::int64_t span = bounds.back() - bounds.front();
  if (span >= k_max_distinct_rows)
    throw SystemError("DeviceRowPlan: owners span " + std::to_string(span) + " rows, at most " +
                      std::to_string(k_max_distinct_rows - 1));
  if (max_ids > std::numeric_limits<int>::max())
    throw SystemError("DeviceRowPlan: " + std::to_string(max_ids) + " ids exceed CUB's int sizes");
  const int owner_count = static_cast<int>(bounds.size()) - 1;
  if (max_ids <= capacity_ && std::equal(bounds.begin(), bounds.end(), bounds_on_host_.begin(), bounds_on_host_.end()))
    return;
  if (max_ids > capacity_ || owner_count != owner_count_) {
    release();
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(1, max_ids));
    const PlanSizes sizes = plan_sizes(n, static_cast<std::size_t>(owner_count));
    temp_bytes_ = sizes.temp;
    const std::size_t owners_bytes = bounds.size() * sizeof(std::int64_t);
    PLESHARD_CUDA_CHECK(cudaMalloc(&memory_, sizes.total));
    auto* p = static_cast<std::uint8_t*>(memory_);
    auto take = [&p](std::size_t bytes) {
      std::uint8_t* at = p;
      p += round_up(bytes);
      return at;
    };
    offsets_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    sorted_offsets_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    lookups_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    sorted_lookups_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    runs_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    distinct_ = reinterpret_cast<std::uint32_t*>(take(n * 4));
    keys_ = reinterpret_cast<std::int64_t*>(take(n * 8));
    bounds_ = reinterpret_cast<std::int64_t*>(take(owners_bytes));
    owners_ = reinterpret_cast<std::int64_t*>(take(owners_bytes));
    temp_ = take(temp_bytes_);
    capacity_ = max_ids;
    owner_count_ = owner_count;
  }
  PLESHARD_CUDA_CHECK(cudaMemcpy(bounds_, bounds.data(), bounds.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice));
  bounds_on_host_.assign(bounds.begin(), bounds.end());
  first_ = bounds.front();
  span_ = span;
}

void DeviceRowPlan::plan(const std::int64_t* ids, std::int64_t n, cudaStream_t stream) {
  if (memory_ == nullptr) throw SystemError("DeviceRowPlan: plan before reserve");
  if (n > capacity_)
    throw SystemError("DeviceRowPlan: " + std::to_string(n) + " ids, reserved for " + std::to_string(capacity_));
  const auto none = static_cast<std::uint32_t>(span_);
  lookups_count_ = n;
  if (n > 0) {
    const int blocks = blocks_for(n);
    const int count = static_cast<int>(n);
    make_offsets<<<blocks, k_threads, 0, stream>>>(ids, n, first_, span_, offsets_, lookups_);
    PLESHARD_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = temp_bytes_;
    PLESHARD_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_, temp_bytes, offsets_, sorted_offsets_, lookups_,
                                                        sorted_lookups_, count, 0,
                                                        std::max(static_cast<int>(std::bit_width(none)), 1), stream));
    mark_heads<<<blocks, k_threads, 0, stream>>>(sorted_offsets_, n, offsets_);  // offsets_ reused for head flags
    PLESHARD_CUDA_CHECK_LAUNCH();
    temp_bytes = temp_bytes_;
    PLESHARD_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp_, temp_bytes, offsets_, runs_, count, stream));
    scatter_runs<<<blocks, k_threads, 0, stream>>>(sorted_offsets_, sorted_lookups_, runs_, n, none, keys_, distinct_);
    PLESHARD_CUDA_CHECK_LAUNCH();
  }
  owner_starts<<<1, k_threads, 0, stream>>>(sorted_offsets_, runs_, n, none, distinct_, bounds_, owner_count_, owners_);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void DeviceRowPlan::write_local_ids(int width, std::int64_t count, std::uint8_t* out, cudaStream_t stream) const {
  if (count == 0) return;
  narrow_local_ids<<<blocks_for(count), k_threads, 0, stream>>>(distinct_, count, owners_, bounds_, owner_count_, width,
                                                                out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void DeviceRowPlan::write_local_ids_in_slots(int width, std::int64_t slots, std::uint8_t* out,
                                             cudaStream_t stream) const {
  const std::size_t bytes =
      static_cast<std::size_t>(owner_count_) * static_cast<std::size_t>(slots) * static_cast<std::size_t>(width);
  if (bytes != 0) PLESHARD_CUDA_CHECK(cudaMemsetAsync(out, 0, bytes, stream));
  if (lookups_count_ == 0) return;
  slot_local_ids<<<blocks_for(lookups_count_), k_threads, 0, stream>>>(distinct_, lookups_count_, owners_, bounds_,
                                                                       owner_count_, width, slots, out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

void DeviceRowPlan::keys_in_slots(std::int64_t slots, std::int64_t* out, cudaStream_t stream) const {
  if (lookups_count_ == 0) return;
  slot_keys<<<blocks_for(lookups_count_), k_threads, 0, stream>>>(keys_, lookups_count_, owners_, owner_count_, slots,
                                                                  out);
  PLESHARD_CUDA_CHECK_LAUNCH();
}

}  // namespace pleshard::kernels

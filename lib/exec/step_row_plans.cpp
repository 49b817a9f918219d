#include "exec/step_row_plans.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#if PLESHARD_HAVE_CUDA
#include "exec/cuda_step_space.hpp"
#include "kernels/cuda/row_plan_cuda.hpp"
#endif

namespace pleshard {

struct StepRowPlans::DevicePlans {
#if PLESHARD_HAVE_CUDA
  std::vector<std::unique_ptr<kernels::DeviceRowPlan>> layers;
#endif
};

bool StepRowPlans::would_plan_on_gpu(const StepSpace& space, const std::vector<std::vector<std::int64_t>>& bounds,
                                     std::int64_t max_ids) {
#if PLESHARD_HAVE_CUDA
  // The GPU keys rows by 32-bit offsets: tables wider than that are planned on the host.
  const bool keyable = std::all_of(bounds.begin(), bounds.end(), [](const std::vector<std::int64_t>& b) {
    return b.back() - b.front() < kernels::k_max_distinct_rows;
  });
  return space.on_device() && keyable && max_ids > 0;
#else
  (void)space, (void)bounds, (void)max_ids;
  return false;
#endif
}

std::uint64_t StepRowPlans::space_bytes(const StepSpace& space, const std::vector<std::vector<std::int64_t>>& bounds,
                                        std::int64_t max_ids) {
  std::uint64_t bytes = 0;
#if PLESHARD_HAVE_CUDA
  if (would_plan_on_gpu(space, bounds, max_ids))
    for (const auto& b : bounds) bytes += kernels::DeviceRowPlan::bytes_for(b.size() - 1, max_ids);
#else
  (void)space, (void)bounds, (void)max_ids;
#endif
  return bytes;
}

StepRowPlans::StepRowPlans(StepSpace& space, const std::vector<std::vector<std::int64_t>>& bounds, std::int64_t max_ids)
    : space_(space),
      bounds_(bounds),
      host_(bounds.size()),
      counts_(bounds.size()),
      lookups_(bounds.size()),
      max_ids_(max_ids) {
  for (const auto& b : bounds_)
    if (b.size() < 2 || b.size() != bounds_.front().size())
      throw SystemError("StepRowPlans: every layer needs the same owners, at least one");
#if PLESHARD_HAVE_CUDA
  if (would_plan_on_gpu(space, bounds_, max_ids)) {
    device_ = std::make_unique<DevicePlans>();
    for (const auto& b : bounds_) {
      device_->layers.push_back(std::make_unique<kernels::DeviceRowPlan>());
      device_->layers.back()->reserve(b, max_ids);
    }
    const std::size_t starts = bounds_.empty() ? 1 : bounds_.size() * bounds_.front().size();
    starts_ = std::make_unique<HostBuffer>(space, starts * sizeof(std::int64_t));
  }
#endif
}

StepRowPlans::~StepRowPlans() = default;

bool StepRowPlans::plans_on_gpu() const { return device_ != nullptr; }

void StepRowPlans::plan_in_space(int layer, const std::int64_t* ids, std::int64_t n, bool counts) {
  (void)counts;               // the GPU's plans only
  if (!space_.on_device()) {  // the host space's memory is the host's
    plan_on_host(layer, {ids, static_cast<std::size_t>(n)});
    return;
  }
  if (!plans_on_gpu()) throw SystemError("StepRowPlans: these tables are planned on the host");
#if PLESHARD_HAVE_CUDA
  const auto d = static_cast<std::size_t>(layer);
  on_host_ = false;
  kernels::DeviceRowPlan& plan = *device_->layers.at(d);
  plan.plan(ids, n, stream_of(space_));
  lookups_[d] = n;
  const std::size_t owners = bounds_[d].size();
  if (counts)
    space_.copy_to_host_async(starts_->as<std::int64_t>() + d * owners, plan.owners(), owners * sizeof(std::int64_t));
#endif
}

void StepRowPlans::plan_on_host(int layer, std::span<const std::int64_t> ids) {
  on_host_ = true;
  const auto d = static_cast<std::size_t>(layer);
  kernels::plan_rows(ids, bounds_.at(d), host_.at(d));
}

const std::vector<std::vector<std::int64_t>>& StepRowPlans::owner_counts() {
  if (!on_host_) space_.synchronize();  // the owners' starts have been copied down
  for (std::size_t d = 0; d < bounds_.size(); ++d) {
    const std::size_t owners = bounds_[d].size() - 1;
    const std::int64_t* starts = on_host_ ? host_[d].owners.data() : starts_->as<std::int64_t>() + d * (owners + 1);
    counts_[d].resize(owners);
    for (std::size_t o = 0; o < owners; ++o) counts_[d][o] = starts[o + 1] - starts[o];
  }
  return counts_;
}

const std::int64_t* StepRowPlans::keys(int layer) const {
  const auto d = static_cast<std::size_t>(layer);
#if PLESHARD_HAVE_CUDA
  if (!on_host_) return device_->layers.at(d)->keys();
#endif
  return host_.at(d).keys.data();
}

void StepRowPlans::write_local_ids(int layer, int width, std::uint8_t* out) {
  const auto d = static_cast<std::size_t>(layer);
#if PLESHARD_HAVE_CUDA
  if (!on_host_) {
    const std::vector<std::int64_t>& counts = counts_.at(d);
    device_->layers.at(d)->write_local_ids(width, std::accumulate(counts.begin(), counts.end(), std::int64_t{0}), out,
                                           stream_of(space_));
    return;
  }
#endif
  kernels::write_local_ids(host_.at(d), bounds_.at(d), width, out);
}

void StepRowPlans::write_local_ids_in_slots(int layer, int width, std::int64_t slots, std::uint8_t* out) {
  const auto d = static_cast<std::size_t>(layer);
#if PLESHARD_HAVE_CUDA
  if (!on_host_) {
    device_->layers.at(d)->write_local_ids_in_slots(width, slots, out, stream_of(space_));
    return;
  }
#endif
  kernels::write_local_ids_in_slots(host_.at(d), bounds_.at(d), width, slots, out);
}

void StepRowPlans::keys_in_slots(int layer, std::int64_t slots, std::int64_t* keys) {
  const auto d = static_cast<std::size_t>(layer);
#if PLESHARD_HAVE_CUDA
  if (!on_host_) {
    device_->layers.at(d)->keys_in_slots(slots, keys, stream_of(space_));
    return;
  }
#endif
  kernels::keys_in_slots(host_.at(d), slots, keys);
}

void StepRowPlans::distinct_on_host(std::vector<std::vector<std::int64_t>>& out) {
  out.resize(bounds_.size());
  if (on_host_) {
    for (std::size_t d = 0; d < bounds_.size(); ++d) out[d] = host_[d].distinct;
    return;
  }
#if PLESHARD_HAVE_CUDA
  // A layer has at most as many distinct ids as lookups, known here: that many offsets come
  // down beside the owners' starts (copied in plan_in_space), all behind one wait.
  if (!offsets_)
    offsets_ = std::make_unique<HostBuffer>(
        space_, std::max<std::size_t>(1, bounds_.size() * static_cast<std::size_t>(max_ids_) * sizeof(std::uint32_t)));
  std::uint32_t* offsets = offsets_->as<std::uint32_t>();
  const auto stride = static_cast<std::size_t>(max_ids_);
  for (std::size_t d = 0; d < bounds_.size(); ++d)
    space_.copy_to_host_async(offsets + d * stride, device_->layers[d]->distinct(),
                              static_cast<std::size_t>(lookups_[d]) * sizeof(std::uint32_t));
  space_.synchronize();
  const std::size_t owners = bounds_.front().size();
  for (std::size_t d = 0; d < bounds_.size(); ++d) {
    const std::int64_t count = starts_->as<std::int64_t>()[d * owners + owners - 1];
    if (count < 0 || count > lookups_[d])
      throw SystemError("StepRowPlans: layer " + std::to_string(d) + "'s plan has " + std::to_string(count) +
                        " distinct ids of " + std::to_string(lookups_[d]) + " lookups");
    const std::int64_t first = device_->layers[d]->first();
    out[d].resize(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < out[d].size(); ++i) out[d][i] = first + offsets[d * stride + i];
  }
#endif
}

}  // namespace pleshard

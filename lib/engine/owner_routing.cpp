#include "engine/owner_routing.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"

namespace pleshard {

OwnerRouting::OwnerRouting(const ExchangeContext& context, const OwnerService& service, std::int64_t max_ids,
                           bool plans_in_space, std::int64_t slots_per_owner)
    : ctx_(context), slots_per_owner_(slots_per_owner) {
  const bool on_gpu = plans_in_space && ctx_.space.on_device();
  layers_.resize(detail::layers_of(ctx_));
  std::vector<std::vector<std::int64_t>> bounds;
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Layer& l = layers_[d];
    l.id_bytes = service.id_bytes(d);
    // My distinct ids, or every owner's entries of a step in fixed-size messages.
    owners_ = service.bounds(d).size() - 1;  // the ETP ranks, whichever group the service is over
    const std::int64_t entries = std::max(max_ids, slots_per_owner * static_cast<std::int64_t>(owners_));
    l.ids_in_space = ctx_.workspace.add<std::uint8_t>(
        on_gpu ? static_cast<std::size_t>(entries) * static_cast<std::size_t>(l.id_bytes) : 0);
    bounds.push_back(service.bounds(d));
  }
  // No lookups a layer for the GPU's plans: every plan is made on the host.
  plans_ = std::make_unique<StepRowPlans>(ctx_.space, bounds, on_gpu ? max_ids : 0);
  const PlanShape& shape = ctx_.plan.shape();
  host_ids_ = std::make_unique<HostBuffer>(
      ctx_.space, std::max<std::size_t>(1, layers_.size() * static_cast<std::size_t>(shape.max_slot_tokens) *
                                               static_cast<std::size_t>(shape.heads)) *
                      sizeof(std::int64_t));
}

void OwnerRouting::plan(std::int64_t tokens, StepMarks& marks, bool fixed) {
  StepPlan& plan = ctx_.plan;
  const int heads = plan.shape().heads;
  counts_ = nullptr;
  slice_ = detail::my_slice(ctx_.topology, tokens);
  const std::int64_t n = lookups();
  in_space_ = plans_->plans_on_gpu() && (fixed || n >= ctx_.owner_gpu_plan_from);
  if (in_space_) {
    plan.hash(plan.my_block_in_space(), 1);
  } else {
    plan.hash_mine_on_host(host_ids_->as<std::int64_t>());
  }
  marks.mark(StepPhase::hash);
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const auto layer = static_cast<int>(d);
    if (in_space_) {
      plans_->plan_in_space(layer, plan.ids(layer) + slice_.begin * heads, n, !fixed);
    } else {
      // hash_mine_on_host's layout: [layer][slot tokens x heads]
      const std::int64_t first = (static_cast<std::int64_t>(d) * plan.slot_tokens() + slice_.begin) * heads;
      plans_->plan_on_host(layer, {host_ids_->as<std::int64_t>() + first, static_cast<std::size_t>(n)});
    }
  }
}

const std::uint8_t* OwnerRouting::local_ids_in_slots(int layer, std::int64_t slots) {
  if (slots > slots_per_owner_)
    throw SystemError("OwnerRouting: fixed-size messages of " + std::to_string(slots) + " entries, sized for " +
                      std::to_string(slots_per_owner_));
  Layer& l = layers_[static_cast<std::size_t>(layer)];
  const std::size_t bytes = owners_ * static_cast<std::size_t>(slots) * static_cast<std::size_t>(l.id_bytes);
  std::uint8_t* out = nullptr;
  if (in_space_) {
    out = ctx_.workspace.at<std::uint8_t>(l.ids_in_space);
  } else {
    l.on_host.resize(bytes);
    out = l.on_host.data();
  }
  plans_->write_local_ids_in_slots(layer, l.id_bytes, slots, out);
  return out;
}

void OwnerRouting::keys_in_slots(int layer, std::int64_t slots, std::int64_t* keys) {
  // The host space's memory is the host's; a GPU's steps in fixed-size messages are planned
  // there (OwnerExchange sends no others so).
  if (!in_space_ && ctx_.space.on_device())
    throw SystemError("OwnerRouting: keys in slots of a GPU's step planned on the host");
  plans_->keys_in_slots(layer, slots, keys);
}

const std::vector<std::vector<std::int64_t>>& OwnerRouting::owner_counts() {
  if (counts_ == nullptr) counts_ = &plans_->owner_counts();
  return *counts_;
}

const std::uint8_t* OwnerRouting::local_ids(int layer) {
  if (counts_ == nullptr) throw SystemError("OwnerRouting: the local ids asked for before the owners' counts");
  Layer& l = layers_[static_cast<std::size_t>(layer)];
  if (in_space_) {
    auto* out = ctx_.workspace.at<std::uint8_t>(l.ids_in_space);
    plans_->write_local_ids(layer, l.id_bytes, out);
    return out;
  }
  const std::vector<std::int64_t>& counts = (*counts_)[static_cast<std::size_t>(layer)];
  l.on_host.resize(static_cast<std::size_t>(detail::total(counts)) * static_cast<std::size_t>(l.id_bytes));
  plans_->write_local_ids(layer, l.id_bytes, l.on_host.data());
  return l.on_host.data();
}

}  // namespace pleshard

#include "engine/owner_exchange.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

OwnerExchange::OwnerExchange(const ExchangeContext& context, OwnerGroup group, const char* name)
    : ctx_(context),
      name_(name),
      max_ids_(detail::max_ids_of_mine(context)),
      node_ranks_(static_cast<std::size_t>(std::max(1, context.node_ranks))),
      service_(context, group, context.topology.etp_rank(), max_ids_, max_ids_, context.space.on_device()) {
  // The engine has checked the layout, agreed on every rank.
  if (group.size != ctx_.topology.etp || group.rank != ctx_.topology.etp_rank())
    throw SystemError("owner exchange: its group is not my ETP group");
  const auto ids = static_cast<std::size_t>(max_ids_);
  const bool plans_on_gpu = ctx_.space.on_device();  // some steps
  layers_.resize(detail::layers_of(ctx_));
  std::vector<std::vector<std::int64_t>> bounds;
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Layer& l = layers_[d];
    l.ids_out =
        ctx_.workspace.add<std::uint8_t>(plans_on_gpu ? ids * static_cast<std::size_t>(service_.id_bytes(d)) : 0);
    l.keys = ctx_.workspace.add<std::int64_t>(ids);
    l.out.add(ctx_.workspace, static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * detail::token_bytes(ctx_),
              ctx_.output_slots);
    bounds.push_back(service_.bounds(d));
  }
  row_plans_ = std::make_unique<StepRowPlans>(ctx_.space, bounds, max_ids_);
  const PlanShape& shape = ctx_.plan.shape();
  host_ids_ = std::make_unique<HostBuffer>(
      ctx_.space, std::max<std::size_t>(1, layers_.size() * static_cast<std::size_t>(shape.max_slot_tokens) *
                                               static_cast<std::size_t>(shape.heads)) *
                      sizeof(std::int64_t));
}

bool OwnerExchange::plans_in_space(std::int64_t ids_per_layer) const {
  return row_plans_->plans_on_gpu() && ids_per_layer >= ctx_.owner_gpu_plan_from;
}

void OwnerExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_.size();
  const int heads = plan.shape().heads;
  ExchangeTraffic step{1, tokens};

  // 1. My tokens' ids of every layer (my sequence slice under SP) and their row plans:
  // distinct ids, grouped by owner, and each id's key among them. Hashed and planned in the
  // space for large steps; on the host from the batch it packed for small ones, where the
  // host's work is less than a wait for the stream.
  const RowRange slice = detail::my_slice(ctx_.topology, tokens);
  const std::int64_t n = slice.size() * heads;
  const bool in_space = plans_in_space(n);
  if (in_space) {
    plan.hash(plan.my_block_in_space(), 1);
  } else {
    plan.hash_mine_on_host(host_ids_->as<std::int64_t>());
  }
  marks.mark(StepPhase::hash);
  step.ids = n * static_cast<std::int64_t>(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    if (in_space) {
      row_plans_->plan_in_space(static_cast<int>(d), plan.ids(static_cast<int>(d)) + slice.begin * heads, n);
    } else {
      row_plans_->plan_on_host(static_cast<int>(d), detail::my_host_ids(plan, *host_ids_, d, slice));
    }
  }

  // 2. What the host needs to size the messages: how many distinct ids each owner is asked
  // for, per layer, then how many each peer asks of me.
  service_.exchange_counts(row_plans_->owner_counts(), step);

  // 3. The distinct ids to their owners as owner-local indexes, from where they were planned
  // (over the data communicator from the space, over MPI from the host), widened into my
  // store's queries.
  std::vector<RowQuery> queries(layers);
  std::vector<std::uint8_t> sent_ids;
  for (std::size_t d = 0; d < layers; ++d) {
    const int width = service_.id_bytes(d);
    if (in_space) {
      auto* mine = ctx_.workspace.at<std::uint8_t>(layers_[d].ids_out);
      row_plans_->write_local_ids(static_cast<int>(d), width, mine);
      queries[d] = service_.receive_ids_in_space(d, mine);
    } else {
      // One id sent for each row that comes back.
      sent_ids.resize(static_cast<std::size_t>(service_.returned_count(d)) * static_cast<std::size_t>(width));
      row_plans_->write_local_ids(static_cast<int>(d), width, sent_ids.data());
      queries[d] = service_.receive_ids_on_host(d, sent_ids.data());
    }
    service_.count_traffic(d, node_ranks_, step);
  }
  marks.mark(StepPhase::gather);

  // 4. The rows asked of me, as stored, packed and sent back.
  const std::span<const kernels::DecodeTask> fetched = service_.serve(queries, marks);
  marks.mark(StepPhase::combine);

  // 5. My embeddings: the rows come back owner by owner, the order of my distinct ids, so
  // the plan's keys index them as they are (copied into the space from a plan on the host).
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const std::int64_t* keys = row_plans_->keys(static_cast<int>(d));
    if (!in_space && ctx_.space.on_device()) {
      auto* in_space_keys = ctx_.workspace.at<std::int64_t>(l.keys);
      ctx_.space.copy_from_host(in_space_keys, keys, static_cast<std::size_t>(n) * sizeof(std::int64_t));
      keys = in_space_keys;
    }
    auto* out = l.out.at(ctx_.workspace, out_slot);
    tasks[d] = {kernels::packed_rows_view(fetched[d].rows, service_.returned(d), service_.returned_count(d)), keys, n,
                out};
    views[d] = {out, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  decode_step(ctx_.space, tasks, ctx_.dtype);
  marks.mark(StepPhase::decode);
  traffic_ += step;
}

}  // namespace pleshard

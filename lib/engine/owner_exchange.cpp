#include "engine/owner_exchange.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "engine/exchange_strategy.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

OwnerExchange::OwnerExchange(const ExchangeContext& context, OwnerGroup group, const char* name)
    : ctx_(context),
      name_(name),
      max_ids_(detail::max_ids_of_mine(context)),
      // Steps of fewer entries than the threshold go so, and no step has more than max_ids_.
      max_slots_(std::clamp<std::int64_t>(context.owner_fixed_below - 1, 0, max_ids_)),
      // A group of one rank per node (the nodes' group: peer reads) has every peer on
      // another node.
      node_ranks_(group.size == context.topology.etp ? static_cast<std::size_t>(std::max(1, context.node_ranks)) : 1),
      service_(context, group, {group.size, group.rank}, max_ids_, std::max(max_ids_, group.size * max_slots_),
               context.space.on_device(), max_slots_),
      routing_(context, service_, max_ids_, true, max_slots_),
      begun_(name) {
  // The engine has checked the layout, agreed on every rank: my store holds my part of the
  // group's balanced ranges.
  for (int d = 0; d < ctx_.store.layers(); ++d) {
    const RowRange mine = balanced_range(ctx_.store.layout(d).rows, group.size, group.rank);
    if (ctx_.store.range(d) != mine)
      throw SystemError("owner exchange: table " + std::to_string(d) + "'s rows here are not my part of the group's");
  }
  layers_.resize(detail::layers_of(ctx_));
  for (Layer& l : layers_) {
    l.keys = ctx_.workspace.add<std::int64_t>(static_cast<std::size_t>(max_ids_));
    l.out.add(ctx_.workspace, static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * detail::token_bytes(ctx_),
              ctx_.output_slots);
  }
}

std::int64_t OwnerExchange::slots_of(std::int64_t slot_tokens) const {
  const int tp = ctx_.topology.sequence_parallel() ? ctx_.topology.tp : 1;
  return sequence_slice(slot_tokens, tp, 0).size() * ctx_.plan.shape().heads;
}

bool OwnerExchange::fixed(std::int64_t slots) const {
  return slots < ctx_.owner_fixed_below && (!ctx_.space.on_device() || routing_.plans_on_gpu());
}

bool OwnerExchange::capturable() const { return fixed(max_ids_); }

void OwnerExchange::submit(std::int64_t tokens, StepMarks& marks) {
  const std::size_t layers = layers_.size();
  Begun b;
  b.step = {1, tokens};
  b.slots = slots_of(ctx_.plan.slot_tokens());
  b.fixed = fixed(b.slots);  // agreed: every rank has the same slot

  // 1. My tokens' ids of every layer and their row plans: distinct ids, grouped by owner,
  // and each lookup's key among them. A step captured in a CUDA graph (never under sequence
  // parallelism) plans its whole slot: the graph serves every step of that slot size.
  const std::int64_t planned = ctx_.space.capturing() ? ctx_.plan.slot_tokens() : tokens;
  routing_.plan(planned, marks, b.fixed);
  b.slice = detail::my_slice(ctx_.topology, tokens);  // the embeddings handed out
  b.lookups = routing_.lookups();
  b.planned_in_space = routing_.in_space();
  // Every owner's distinct ids fit its entries: at most my lookups, at most a slot's.
  if (b.fixed && b.lookups > b.slots)
    throw SystemError("owner exchange: " + std::to_string(b.lookups) + " lookups a layer for fixed-size messages of " +
                      std::to_string(b.slots) + " entries");
  b.step.ids = b.slice.size() * ctx_.plan.shape().heads * static_cast<std::int64_t>(layers);

  // 2. What the host needs to size the messages: how many distinct ids each owner is asked
  // for, per layer, then how many each peer asks of me; or, in fixed-size messages, `slots`
  // between every two ranks.
  if (b.fixed) {
    service_.fixed_counts(b.slots, b.step);
  } else {
    service_.exchange_counts(routing_.owner_counts(), node_ranks_, b.step);
  }

  // 3. The distinct ids to their owners as owner-local indexes, from where they were planned
  // (over the data communicator from the space, over MPI from the host), widened into my
  // store's queries, whose fetch starts.
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    const std::uint8_t* sent =
        b.fixed ? routing_.local_ids_in_slots(static_cast<int>(d), b.slots) : routing_.local_ids(static_cast<int>(d));
    queries[d] = b.planned_in_space ? service_.receive_ids_in_space(d, sent) : service_.receive_ids_on_host(d, sent);
    service_.count_traffic(d, node_ranks_, b.step);
  }
  marks.mark(StepPhase::gather);
  service_.submit(queries);
  begun_.push(b);  // once submitted: a failed submit begins nothing
}

void OwnerExchange::complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                             const std::function<void()>& fetched) {
  const Begun b = begun_.pop();
  const std::size_t layers = layers_.size();

  // 4. The rows asked of me, as stored, packed and sent back.
  const std::span<const kernels::DecodeTask> served = service_.serve(marks);
  marks.mark(StepPhase::combine);

  // 5. My embeddings: the rows come back owner by owner, the order of my distinct ids, so
  // the plan's keys index them as they are (copied into the space from a plan on the host);
  // in fixed-size messages, each owner's in its block of `slots`. Where the next step begins
  // before this decode, its plan rewrites the routing's keys: they are kept here first.
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const std::int64_t* keys = routing_.keys(static_cast<int>(d));
    auto* kept = ctx_.workspace.at<std::int64_t>(l.keys);
    const auto key_bytes = static_cast<std::size_t>(b.lookups) * sizeof(std::int64_t);
    if (b.fixed) {
      routing_.keys_in_slots(static_cast<int>(d), b.slots, kept);
      keys = kept;
    } else if (!b.planned_in_space && ctx_.space.on_device()) {
      ctx_.space.copy_from_host(kept, keys, key_bytes);
      keys = kept;
    } else if (fetched) {
      ctx_.space.copy(kept, keys, key_bytes);
      keys = kept;
    }
    auto* out = l.out.at(ctx_.workspace, out_slot);
    tasks[d] = {kernels::packed_rows_view(served[d].rows, service_.returned(d), service_.returned_count(d)), keys,
                b.lookups, out};
    views[d] = {out, b.slice.begin, b.slice.size(), ctx_.width, ctx_.dtype};
  }
  if (fetched) fetched();
  detail::decode_tasks(ctx_, tasks, marks);
  traffic_ += b.step;
}

StrategyDescriptor owner_strategy() {
  StrategyDescriptor d;
  d.name = "owner";
  d.help = "distinct ids to their owners, stored rows back";
  d.groups = [](const Topology& t) {
    std::vector<ExchangeGroup> groups = slot_groups(t);
    groups.push_back(ExchangeGroup::etp_host);  // message sizes
    return groups;
  };
  // Where an ETP group of several ranks exchanges and no CUDA graph is asked for: its sizes
  // are known only on the host.
  d.chosen_by_auto = [](const ExchangeFacts& f) { return f.topology.etp > 1 && !f.cuda_graphs; };
  d.auto_order = 0;
  d.auto_help = "where an ETP group of several ranks exchanges and no CUDA graph is asked for";
  d.make = [](const ExchangeContext& c) -> std::unique_ptr<Exchange> {
    // In a group of one rank, the identity without owner planning on the host. Under
    // sequence parallelism the ETP group is the TP group.
    if (c.topology.etp == 1) return make_slot_exchange(c, "owner");
    return std::make_unique<OwnerExchange>(
        c, OwnerGroup::of(c.comms.etp != nullptr ? c.comms.etp : c.comms.tp, c.comms.etp_host));
  };
  return d;
}

}  // namespace pleshard

#include "engine/hierarchical_exchange.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "core/option_names.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/owner_exchange.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"

namespace pleshard {

namespace {

// The rows of a row-major [rows][columns] table, each summed.
std::vector<std::int64_t> row_sums(const std::vector<std::int64_t>& table, std::size_t rows, std::size_t columns) {
  std::vector<std::int64_t> out(rows, 0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < columns; ++c) out[r] += table[r * columns + c];
  return out;
}

}  // namespace

HierarchicalExchange::HierarchicalExchange(const ExchangeContext& context)
    : ctx_(context),
      node_(OwnerGroup::of(context.comms.etp_node, context.comms.etp_node_host)),
      max_ids_(detail::max_ids_of_mine(context)),
      // A gateway receives its node's ids, merged, for its owners.
      service_(context, OwnerGroup::of(context.comms.etp_cross, context.comms.etp_cross_host),
               {context.topology.etp, context.topology.etp_rank()}, max_ids_, node_.size * max_ids_, false),
      routing_(context, service_, max_ids_, false),
      begun_("hierarchical") {
  const OwnerGroup& cross = service_.group();
  if (node_.size < 2 || node_.size * cross.size != ctx_.topology.etp ||
      ctx_.topology.etp_rank() != cross.rank * node_.size + node_.rank)
    throw SystemError("hierarchical exchange: the ETP group is not node-major blocks of one size, several ranks each");
  const PlanShape& shape = ctx_.plan.shape();
  const auto per_node = static_cast<std::size_t>(node_.size);
  const std::size_t gateway = per_node * static_cast<std::size_t>(max_ids_);
  layers_.resize(detail::layers_of(ctx_));
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Layer& l = layers_[d];
    const std::size_t pitch = service_.pitch(d);
    l.expanded = ctx_.workspace.add<std::int64_t>(ctx_.space.on_device() ? gateway : 0);
    l.expanded_rows = ctx_.workspace.add<std::uint8_t>(gateway * pitch);
    l.received_rows = ctx_.workspace.add<std::uint8_t>(static_cast<std::size_t>(max_ids_) * pitch);
    l.keys_region = ctx_.workspace.add<std::int64_t>(static_cast<std::size_t>(max_ids_));
    l.out.add(ctx_.workspace, static_cast<std::size_t>(shape.max_slot_tokens) * detail::token_bytes(ctx_),
              ctx_.output_slots);
  }
  const auto words = [&](std::size_t n) {
    return std::make_unique<HostBuffer>(ctx_.space,
                                        std::max<std::size_t>(1, layers_.size() * n) * sizeof(std::int64_t));
  };
  for (auto& buffer : host_expand_) buffer = words(gateway);
}

void HierarchicalExchange::submit(std::int64_t tokens, StepMarks& marks) {
  const std::size_t layers = layers_.size();
  Begun b;
  b.step = {1, tokens};
  b.upload = next_upload_;
  next_upload_ ^= 1;

  // 1. My tokens' ids of every layer, hashed and planned on the host, where the gateways
  // merge them.
  routing_.plan(tokens, marks);
  b.slice = routing_.slice();
  b.lookups = routing_.lookups();
  b.step.ids = b.lookups * static_cast<std::int64_t>(layers);

  // 2. Level 1: my ids to my node's gateways, merged there per owner.
  route_to_gateways(b.step);

  // 3. Level 2: each gateway's merged ids to their owners, one per node, whose fetch starts.
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    queries[d] = service_.receive_ids_on_host(d, layers_[d].sent_ids.data());
    service_.count_traffic(d, 1, b.step);  // level 2 crosses nodes
  }
  marks.mark(StepPhase::gather);
  service_.submit(queries);
  begun_.push(b);  // once submitted: a failed submit begins nothing
}

void HierarchicalExchange::complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                                    const std::function<void()>& fetched) {
  Begun b = begun_.pop();
  const std::size_t layers = layers_.size();
  const auto per_node = static_cast<std::size_t>(node_.size);          // P
  const auto nodes = static_cast<std::size_t>(service_.group().size);  // N

  // 4. The rows asked of me, as stored, packed and sent back to the gateways; there each
  // source's rows are picked out of the merged ones and sent on.
  const std::span<const kernels::DecodeTask> served = service_.serve(marks);
  return_to_sources(served, b.upload, b.step);
  marks.mark(StepPhase::combine);

  // 5. My embeddings from the rows that came back, ordered by gateway then node: each id
  // keyed to its distinct row's place there, in the space before the next step may begin
  // (its routing and merges rewrite everything here but the rows and those keys).
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    // Distinct ids come by owner (node m, local g); gateway g's rows start at the sum of
    // the earlier gateways' and hold node after node.
    std::vector<std::int64_t> place(static_cast<std::size_t>(detail::total(routing_.owner_counts()[d])));
    std::vector<std::int64_t> next = detail::starts_of(l.gateway_totals);  // per gateway: its next node's rows
    std::int64_t distinct = 0;
    for (std::size_t m = 0; m < nodes; ++m)
      for (std::size_t g = 0; g < per_node; ++g) {
        for (std::int64_t k = 0; k < l.to_gateway[g * nodes + m]; ++k)
          place[static_cast<std::size_t>(distinct++)] = next[g] + k;
        next[g] += l.to_gateway[g * nodes + m];
      }
    const std::int64_t* mine = routing_.keys(static_cast<int>(d));  // on the host
    l.keys.resize(static_cast<std::size_t>(b.lookups));
    for (std::size_t i = 0; i < l.keys.size(); ++i)
      l.keys[i] = mine[i] < 0 ? -1 : place[static_cast<std::size_t>(mine[i])];
    auto* keys = ctx_.workspace.at<std::int64_t>(l.keys_region);
    ctx_.space.copy_from_host(keys, l.keys.data(), l.keys.size() * sizeof(std::int64_t));
    const auto* rows = ctx_.workspace.at<std::uint8_t>(l.received_rows);
    auto* out = l.out.at(ctx_.workspace, out_slot);
    tasks[d] = {kernels::packed_rows_view(served[d].rows, rows, static_cast<std::int64_t>(place.size())), keys,
                b.lookups, out};
    views[d] = {out, b.slice.begin, b.slice.size(), ctx_.width, ctx_.dtype};
  }
  if (fetched) fetched();
  detail::decode_tasks(ctx_, tasks, marks);
  traffic_ += b.step;
}

void HierarchicalExchange::route_to_gateways(ExchangeTraffic& step) {
  const std::size_t layers = layers_.size();
  const auto per_node = static_cast<std::size_t>(node_.size);
  const auto nodes = static_cast<std::size_t>(service_.group().size);
  const auto local = static_cast<std::size_t>(node_.rank);
  const auto sent = [&](std::int64_t entries, std::size_t bytes) {
    step.bytes_sent += static_cast<double>(entries) * static_cast<double>(bytes);
  };
  // My ids for the owners of local index g on every node go to my node's rank g.
  const std::vector<std::vector<std::int64_t>>& to_owner_etp = routing_.owner_counts();  // on the host
  std::vector<std::int64_t> sizes(per_node * layers * nodes), received(sizes.size());
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    l.to_gateway.resize(per_node * nodes);
    for (std::size_t g = 0; g < per_node; ++g)
      for (std::size_t m = 0; m < nodes; ++m)
        l.to_gateway[g * nodes + m] = sizes[(g * layers + d) * nodes + m] = to_owner_etp[d][m * per_node + g];
    l.gateway_totals = row_sums(l.to_gateway, per_node, nodes);
  }
  const std::vector<std::int64_t> each(per_node, static_cast<std::int64_t>(layers * nodes));
  detail::owner_all_to_all(ctx_.space, node_.host, false, reinterpret_cast<const std::uint8_t*>(sizes.data()), each,
                           reinterpret_cast<std::uint8_t*>(received.data()), each, sizeof(std::int64_t));
  sent(static_cast<std::int64_t>((per_node - 1) * layers * nodes), sizeof(std::int64_t));
  std::vector<std::vector<std::int64_t>> to_owner(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const auto width = static_cast<std::size_t>(service_.id_bytes(d));
    l.from_sources.resize(per_node * nodes);
    for (std::size_t s = 0; s < per_node; ++s)
      for (std::size_t m = 0; m < nodes; ++m) l.from_sources[s * nodes + m] = received[(s * layers + d) * nodes + m];
    // My ids by gateway, then node: they were planned owner by owner, ETP rank o = m P + g.
    const std::vector<std::int64_t> first = detail::starts_of(to_owner_etp[d]);
    const std::uint8_t* mine = routing_.local_ids(static_cast<int>(d));
    std::vector<std::uint8_t> by_gateway;
    by_gateway.reserve(static_cast<std::size_t>(first.back()) * width);
    for (std::size_t g = 0; g < per_node; ++g)
      for (std::size_t m = 0; m < nodes; ++m) {
        const std::size_t o = m * per_node + g;
        by_gateway.insert(by_gateway.end(), mine + static_cast<std::size_t>(first[o]) * width,
                          mine + static_cast<std::size_t>(first[o + 1]) * width);
      }
    l.source_totals = row_sums(l.from_sources, per_node, nodes);
    l.gathered.resize(static_cast<std::size_t>(detail::total(l.source_totals)) * width);
    detail::owner_all_to_all(ctx_.space, node_.host, false, by_gateway.data(), l.gateway_totals, l.gathered.data(),
                             l.source_totals, width);
    for (std::size_t g = 0; g < per_node; ++g)
      if (g != local) sent(l.gateway_totals[g], width);  // a hop within the node, not yet to an owner
    // Merged per node m: every source's ids for owner (m, me), deduplicated.
    l.merged.resize(nodes);
    std::vector<std::vector<std::int64_t>> per_owner_ids(nodes);
    std::size_t at = 0;
    for (std::size_t s = 0; s < per_node; ++s)
      for (std::size_t m = 0; m < nodes; ++m)
        for (std::int64_t k = 0; k < l.from_sources[s * nodes + m]; ++k)
          per_owner_ids[m].push_back(
              kernels::widen_local_id(l.gathered.data(), service_.id_bytes(d), static_cast<std::int64_t>(at++), 0));
    const std::int64_t whole[2] = {0, std::numeric_limits<std::int64_t>::max()};
    to_owner[d].assign(nodes, 0);
    l.sent_ids.clear();
    for (std::size_t m = 0; m < nodes; ++m) {
      plan_owner_requests(per_owner_ids[m], whole, service_.id_bytes(d), l.merged[m]);
      to_owner[d][m] = l.merged[m].rows.count();
      l.sent_ids.insert(l.sent_ids.end(), l.merged[m].local_ids.begin(), l.merged[m].local_ids.end());
    }
  }
  service_.exchange_counts(std::move(to_owner), 1, step);  // level 2 crosses nodes
}

void HierarchicalExchange::return_to_sources(std::span<const kernels::DecodeTask> fetched, int upload,
                                             ExchangeTraffic& step) {
  const std::size_t layers = layers_.size();
  const auto per_node = static_cast<std::size_t>(node_.size);
  const auto nodes = static_cast<std::size_t>(service_.group().size);
  const auto local = static_cast<std::size_t>(node_.rank);
  std::vector<kernels::PackTask> packs(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const std::vector<std::int64_t>& to_owner = service_.to_owner(d);
    // Source s's entry k for node m is merged row keys[k] of node m, whose rows start
    // at the sum of the earlier nodes' merged counts.
    const std::vector<std::int64_t> node_first = detail::starts_of(to_owner);
    std::vector<std::int64_t> cursor(nodes, 0);
    std::int64_t* expand = host_expand_[upload]->as<std::int64_t>() + d * per_node * static_cast<std::size_t>(max_ids_);
    std::size_t count = 0;
    for (std::size_t s = 0; s < per_node; ++s)
      for (std::size_t m = 0; m < nodes; ++m)
        for (std::int64_t k = 0; k < l.from_sources[s * nodes + m]; ++k)
          expand[count++] = node_first[m] + l.merged[m].rows.keys[static_cast<std::size_t>(cursor[m]++)];
    const std::int64_t* keys = expand;
    if (ctx_.space.on_device()) {
      auto* device_keys = ctx_.workspace.at<std::int64_t>(l.expanded);
      ctx_.space.copy_from_host(device_keys, expand, count * sizeof(std::int64_t));
      keys = device_keys;
    }
    packs[d] = {kernels::packed_rows_view(fetched[d].rows, service_.returned(d), node_first[nodes]), keys,
                static_cast<std::int64_t>(count), ctx_.workspace.at<std::uint8_t>(l.expanded_rows)};
  }
  pack_rows_step(ctx_.space, packs);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const std::size_t pitch = service_.pitch(d);
    detail::owner_all_to_all(ctx_.space, node_.data, true, ctx_.workspace.at<std::uint8_t>(l.expanded_rows),
                             l.source_totals, ctx_.workspace.at<std::uint8_t>(l.received_rows), l.gateway_totals,
                             pitch);
    for (std::size_t s = 0; s < per_node; ++s)
      if (s != local) {
        step.rows_sent += l.source_totals[s];
        step.bytes_sent += static_cast<double>(l.source_totals[s]) * static_cast<double>(pitch);
      }
  }
}

StrategyDescriptor hierarchical_strategy() {
  StrategyDescriptor d;
  d.name = "hierarchical";
  d.help = "owner in two levels: within the node, then across nodes; nodes from MPI or PLESHARD_RANKS_PER_NODE";
  d.groups = [](const Topology& t) {
    std::vector<ExchangeGroup> groups = owner_strategy().groups(t);
    groups.insert(groups.end(), {ExchangeGroup::etp_node, ExchangeGroup::etp_node_host, ExchangeGroup::etp_cross,
                                 ExchangeGroup::etp_cross_host});
    return groups;
  };
  d.check = [](const Topology& t, bool cuda_graphs) {
    if (cuda_graphs && t.etp > 1)
      throw InputError(option_is(Option::exchange, "hierarchical") +
                       " merges each node's ids on the host every step, so its steps cannot be captured in CUDA "
                       "graphs (use owner, gather-reduce or reduce-scatter with " +
                       option_name(Option::cuda_graph) + ")");
  };
  d.needs_node_layout = true;
  d.make = [](const ExchangeContext& c) -> std::unique_ptr<Exchange> {
    if (c.topology.etp == 1) return make_slot_exchange(c, "hierarchical");
    // One rank per node: the owners across nodes are the whole ETP group, one level.
    if (c.comms.etp_node_host == nullptr)
      return std::make_unique<OwnerExchange>(c, OwnerGroup::of(c.comms.etp_cross, c.comms.etp_cross_host),
                                             "hierarchical");
    return std::make_unique<HierarchicalExchange>(c);
  };
  return d;
}

}  // namespace pleshard

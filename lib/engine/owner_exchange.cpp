#include "engine/owner_exchange.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"
#include "store/row_range.hpp"

namespace pleshard {

namespace {

// Offsets of consecutive blocks of counts[r] entries.
std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> offsets(counts.size());
  std::int64_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    offsets[r] = at;
    at += counts[r];
  }
  return offsets;
}

std::int64_t sum(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

// The rows of a row-major [rows][columns] table, each summed.
std::vector<std::int64_t> row_sums(const std::vector<std::int64_t>& table, std::size_t rows, std::size_t columns) {
  std::vector<std::int64_t> out(rows, 0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < columns; ++c) out[r] += table[r * columns + c];
  return out;
}

}  // namespace

OwnerExchange::OwnerExchange(const ExchangeContext& context, bool hierarchical)
    : ctx_(context),
      hierarchical_(hierarchical),
      me_(ctx_.topology.etp_rank()),
      node_ranks_(static_cast<std::size_t>(std::max(1, ctx_.node_ranks))) {
  const int ranks = ctx_.topology.etp;
  const auto level = [](Communicator* data, Communicator* host) {
    return Level{data, host, host != nullptr ? host->size() : 1, host != nullptr ? host->rank() : 0};
  };
  if (hierarchical_) {
    node_ = level(ctx_.comms.etp_node, ctx_.comms.etp_node_host);
    cross_ = level(ctx_.comms.etp_cross, ctx_.comms.etp_cross_host);
  } else {
    Communicator* group = ctx_.comms.etp != nullptr           ? ctx_.comms.etp
                          : ctx_.topology.sequence_parallel() ? ctx_.comms.tp
                                                              : nullptr;
    cross_ = level(group, ctx_.comms.etp_host);
  }
  // The engine has checked the layout, agreed on every rank (check_node_layout).
  if (node_.size * cross_.size != ranks || me_ != cross_.rank * node_.size + node_.rank)
    throw SystemError("owner exchange: the ETP group is not node-major blocks of one size");

  const PlanShape& shape = ctx_.plan.shape();
  const int tp = ctx_.topology.sequence_parallel() ? ctx_.topology.tp : 1;
  max_ids_ = sequence_slice(shape.max_slot_tokens, tp, 0).size() * shape.heads;  // the largest slice
  const auto layers = static_cast<std::size_t>(shape.layers);
  const auto per_node = static_cast<std::size_t>(node_.size);
  const std::size_t out_bytes = static_cast<std::size_t>(shape.max_slot_tokens) * static_cast<std::size_t>(ctx_.width) *
                                kernels::out_bytes(ctx_.dtype);
  layers_.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const TableLayout& layout = ctx_.store.layout(static_cast<int>(d));
    std::int64_t widest = 0;
    for (int r = 0; r < ranks; ++r) {
      const RowRange range = balanced_range(layout.rows, ranks, r);
      l.bounds.push_back(range.begin);
      widest = std::max(widest, range.size());
    }
    l.bounds.push_back(layout.rows);
    l.id_bytes = kernels::local_id_bytes(widest);
    l.pitch = kernels::packed_row_bytes(layout.format, layout.head_dim);
    // Each rank's ids reach me at most once (merged or not), and at most every row I own.
    const std::int64_t served = ranks * std::min(max_ids_, ctx_.store.range(static_cast<int>(d)).size());
    max_served_ = std::max(max_served_, served);
    const auto ids = static_cast<std::size_t>(max_ids_);
    const std::size_t gateway = per_node * ids;  // my node's ids, merged, for my owners
    const std::size_t two_levels = per_node > 1 ? gateway : 0;
    const bool plans_on_gpu = per_node == 1 && ctx_.space.on_device();  // some steps, in the flat form
    l.query = ctx_.workspace.add<std::int64_t>(static_cast<std::size_t>(served));
    l.ids_out = ctx_.workspace.add<std::uint8_t>(plans_on_gpu ? ids * static_cast<std::size_t>(l.id_bytes) : 0);
    l.ids_in = ctx_.workspace.add<std::uint8_t>(plans_on_gpu ? static_cast<std::size_t>(served) * l.id_bytes : 0);
    l.served_rows = ctx_.workspace.add<std::uint8_t>(static_cast<std::size_t>(served) * l.pitch);
    l.gateway_rows = ctx_.workspace.add<std::uint8_t>(gateway * l.pitch);
    l.expanded = ctx_.workspace.add<std::int64_t>(ctx_.space.on_device() ? two_levels : 0);
    l.expanded_rows = ctx_.workspace.add<std::uint8_t>(two_levels * l.pitch);
    l.received_rows = ctx_.workspace.add<std::uint8_t>(per_node > 1 ? ids * l.pitch : 0);
    l.keys_region = ctx_.workspace.add<std::int64_t>(ids);
    l.out.add(ctx_.workspace, out_bytes, ctx_.output_slots);
  }
  if (per_node == 1) {
    std::vector<std::vector<std::int64_t>> bounds;
    for (const Layer& l : layers_) bounds.push_back(l.bounds);
    row_plans_ = std::make_unique<StepRowPlans>(ctx_.space, bounds, max_ids_);
  }
  const auto words = [&](std::size_t n) {
    return std::make_unique<HostBuffer>(ctx_.space, std::max<std::size_t>(1, layers * n) * sizeof(std::int64_t));
  };
  host_ids_ = words(static_cast<std::size_t>(shape.max_slot_tokens * shape.heads));  // my whole block's
  for (int b = 0; b < 2; ++b) {
    host_query_[b] = words(static_cast<std::size_t>(max_served_));
    host_expand_[b] = words(per_node > 1 ? per_node * static_cast<std::size_t>(max_ids_) : 0);
  }
}

void OwnerExchange::all_to_all(Communicator* comm, bool in_space, const std::uint8_t* send,
                               const std::vector<std::int64_t>& send_counts, std::uint8_t* recv,
                               const std::vector<std::int64_t>& recv_counts, std::size_t bytes) {
  if (comm == nullptr) {  // a group of one rank: my own block
    const auto size = static_cast<std::size_t>(send_counts.front()) * bytes;
    if (in_space) {
      ctx_.space.copy(recv, send, size);
    } else {
      std::copy_n(send, size, recv);
    }
    return;
  }
  comm->all_to_all_v(send, send_counts, offsets_of(send_counts), recv, recv_counts, offsets_of(recv_counts), bytes);
}

void OwnerExchange::count_cross_traffic(const Layer& l, std::size_t peer, bool between_nodes,
                                        ExchangeTraffic& step) const {
  const double bytes = static_cast<double>(l.to_owner[peer]) * static_cast<double>(l.id_bytes) +
                       static_cast<double>(l.from_gateways[peer]) * static_cast<double>(l.pitch);
  step.ids_sent += l.to_owner[peer];
  step.rows_sent += l.from_gateways[peer];
  step.bytes_sent += bytes;
  if (between_nodes) step.bytes_between_nodes += bytes;
}

std::int64_t OwnerExchange::asked_of_me(const Layer& l) const {
  const std::int64_t total = sum(l.from_gateways);
  if (total > max_served_)
    throw SystemError("owner exchange: peers ask for " + std::to_string(total) + " rows, more than the " +
                      std::to_string(max_served_) + " sized for");
  return total;
}

RowRange OwnerExchange::my_slice(std::int64_t tokens) const {
  const Topology& t = ctx_.topology;
  return t.sequence_parallel() ? sequence_slice(tokens, t.tp, t.tp_rank()) : RowRange{0, tokens};
}

std::span<const std::int64_t> OwnerExchange::my_host_ids(std::size_t layer, RowRange slice) const {
  const std::int64_t heads = ctx_.plan.shape().heads;
  return {host_ids_->as<std::int64_t>() +
              (static_cast<std::int64_t>(layer) * ctx_.plan.slot_tokens() + slice.begin) * heads,
          static_cast<std::size_t>(slice.size() * heads)};
}

RowQuery OwnerExchange::receive_ids_on_host(Layer& l, std::size_t layer, int upload) {
  const auto width = static_cast<std::size_t>(l.id_bytes);
  const std::int64_t total = asked_of_me(l);
  l.served_ids.resize(static_cast<std::size_t>(total) * width);
  all_to_all(cross_.host, false, l.sent_ids.data(), l.to_owner, l.served_ids.data(), l.from_gateways, width);
  std::int64_t* host_query = host_query_[upload]->as<std::int64_t>() + layer * static_cast<std::size_t>(max_served_);
  const std::int64_t first = l.bounds[static_cast<std::size_t>(me_)];
  for (std::int64_t i = 0; i < total; ++i)
    host_query[i] = kernels::widen_local_id(l.served_ids.data(), l.id_bytes, i, first);
  auto* query = ctx_.workspace.at<std::int64_t>(l.query);
  ctx_.space.copy_from_host(query, host_query, static_cast<std::size_t>(total) * sizeof(std::int64_t));
  return {query, total};
}

std::span<const kernels::DecodeTask> OwnerExchange::serve(std::span<const RowQuery> queries, StepMarks& marks) {
  const std::span<const kernels::DecodeTask> fetched = detail::fetch_rows(ctx_, queries, marks);
  std::vector<kernels::PackTask> packs(layers_.size());
  for (std::size_t d = 0; d < layers_.size(); ++d)
    packs[d] = {fetched[d].rows, fetched[d].keys, fetched[d].count,
                ctx_.workspace.at<std::uint8_t>(layers_[d].served_rows)};
  pack_rows_step(ctx_.space, packs);
  for (Layer& l : layers_)
    all_to_all(cross_.data, true, ctx_.workspace.at<std::uint8_t>(l.served_rows), l.from_gateways,
               ctx_.workspace.at<std::uint8_t>(l.gateway_rows), l.to_owner, l.pitch);
  return fetched;
}

void OwnerExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  if (row_plans_) {
    run_flat(tokens, out_slot, marks, views);
  } else {
    run_two_levels(tokens, out_slot, marks, views);
  }
}

bool OwnerExchange::plans_in_space(std::int64_t ids_per_layer) const {
  return row_plans_->plans_on_gpu() && ids_per_layer >= ctx_.owner_gpu_plan_from;
}

void OwnerExchange::run_flat(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_.size();
  const int heads = plan.shape().heads;
  const auto owners = static_cast<std::size_t>(cross_.size);
  const auto me = static_cast<std::size_t>(cross_.rank);
  ExchangeTraffic step{1, tokens};
  const int upload = next_upload_;
  next_upload_ ^= 1;
  const auto sent = [&](std::int64_t entries, std::size_t bytes) {
    step.bytes_sent += static_cast<double>(entries) * static_cast<double>(bytes);
  };

  // 1. My tokens' ids of every layer (my sequence slice under SP) and their row plans:
  // distinct ids, grouped by owner, and each id's key among them. Hashed and planned in the
  // space for large steps; on the host from the batch it packed for small ones, where the
  // host's work is less than a wait for the stream.
  const RowRange slice = my_slice(tokens);
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
      row_plans_->plan_on_host(static_cast<int>(d), my_host_ids(d, slice));
    }
  }

  // 2. What the host needs to size the messages: how many distinct ids each owner is asked
  // for, per layer, then how many each peer asks of me (one all-to-all over MPI on the host).
  const std::vector<std::vector<std::int64_t>>& counts = row_plans_->owner_counts();
  std::vector<std::int64_t> sizes(owners * layers), received(sizes.size());
  for (std::size_t d = 0; d < layers; ++d)
    for (std::size_t m = 0; m < owners; ++m) sizes[m * layers + d] = counts[d][m];
  const std::vector<std::int64_t> each(owners, static_cast<std::int64_t>(layers));
  all_to_all(cross_.host, false, reinterpret_cast<const std::uint8_t*>(sizes.data()), each,
             reinterpret_cast<std::uint8_t*>(received.data()), each, sizeof(std::int64_t));
  sent(static_cast<std::int64_t>((owners - 1) * layers), sizeof(std::int64_t));

  // 3. The distinct ids to their owners as owner-local indexes, from where they were planned
  // (over the data communicator from the space, over MPI from the host), widened into my
  // store's queries.
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const auto width = static_cast<std::size_t>(l.id_bytes);
    l.to_owner = counts[d];
    l.from_gateways.resize(owners);
    for (std::size_t m = 0; m < owners; ++m) l.from_gateways[m] = received[m * layers + d];
    if (in_space) {
      const std::int64_t total = asked_of_me(l);
      auto* mine = ctx_.workspace.at<std::uint8_t>(l.ids_out);
      auto* asked = ctx_.workspace.at<std::uint8_t>(l.ids_in);
      auto* widened = ctx_.workspace.at<std::int64_t>(l.query);
      row_plans_->write_local_ids(static_cast<int>(d), l.id_bytes, mine);
      all_to_all(cross_.data, true, mine, l.to_owner, asked, l.from_gateways, width);
      widen_local_ids_step(ctx_.space, asked, l.id_bytes, total, l.bounds[me], widened);
      queries[d] = {widened, total};
    } else {
      l.sent_ids.resize(static_cast<std::size_t>(sum(l.to_owner)) * width);
      row_plans_->write_local_ids(static_cast<int>(d), l.id_bytes, l.sent_ids.data());
      queries[d] = receive_ids_on_host(l, d, upload);
    }
    for (std::size_t m = 0; m < owners; ++m)
      if (m != me) count_cross_traffic(l, m, m / node_ranks_ != me / node_ranks_, step);
  }
  marks.mark(StepPhase::gather);

  // 4. The rows asked of me, as stored, packed and sent back.
  const std::span<const kernels::DecodeTask> fetched = serve(queries, marks);
  marks.mark(StepPhase::combine);

  // 5. My embeddings: the rows come back owner by owner, the order of my distinct ids, so
  // the plan's keys index them as they are (copied into the space from a plan on the host).
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const std::int64_t* keys = row_plans_->keys(static_cast<int>(d));
    if (!in_space && ctx_.space.on_device()) {
      auto* in_space_keys = ctx_.workspace.at<std::int64_t>(l.keys_region);
      ctx_.space.copy_from_host(in_space_keys, keys, static_cast<std::size_t>(n) * sizeof(std::int64_t));
      keys = in_space_keys;
    }
    auto* out = l.out.at(ctx_.workspace, out_slot);
    tasks[d] = {
        kernels::packed_rows_view(fetched[d].rows, ctx_.workspace.at<std::uint8_t>(l.gateway_rows), sum(l.to_owner)),
        keys, n, out};
    views[d] = {out, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  decode_step(ctx_.space, tasks, ctx_.dtype);
  marks.mark(StepPhase::decode);
  traffic_ += step;
}

void OwnerExchange::run_two_levels(std::int64_t tokens, int out_slot, StepMarks& marks,
                                   std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_.size();
  const int heads = plan.shape().heads;
  const auto per_node = static_cast<std::size_t>(node_.size);  // P
  const auto nodes = static_cast<std::size_t>(cross_.size);    // N
  const auto local = static_cast<std::size_t>(node_.rank);
  const auto my_node = static_cast<std::size_t>(cross_.rank);
  ExchangeTraffic step{1, tokens};
  const int upload = next_upload_;
  next_upload_ ^= 1;
  const auto sent = [&](std::int64_t entries, std::size_t bytes) {
    step.bytes_sent += static_cast<double>(entries) * static_cast<double>(bytes);
  };

  // 1. My tokens' ids of every layer, hashed on the host where they are planned.
  const RowRange slice = my_slice(tokens);
  const std::int64_t n = slice.size() * heads;
  plan.hash_mine_on_host(host_ids_->as<std::int64_t>());
  marks.mark(StepPhase::hash);
  step.ids = n * static_cast<std::int64_t>(layers);

  // 2. Level 1 (several ranks per node): my ids for the owners of local index g on every
  // node go to my node's rank g, which merges its node's requests per owner.
  std::vector<std::int64_t> sizes(per_node * layers * nodes), received(sizes.size());
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    plan_owner_requests(my_host_ids(d, slice), l.bounds, l.id_bytes, l.requests);
    l.to_gateway.resize(per_node * nodes);
    for (std::size_t g = 0; g < per_node; ++g)
      for (std::size_t m = 0; m < nodes; ++m)
        l.to_gateway[g * nodes + m] = sizes[(g * layers + d) * nodes + m] = l.requests.rows.of_owner(m * per_node + g);
    l.gateway_totals = row_sums(l.to_gateway, per_node, nodes);
  }
  const std::vector<std::int64_t> each(per_node, static_cast<std::int64_t>(layers * nodes));
  all_to_all(node_.host, false, reinterpret_cast<const std::uint8_t*>(sizes.data()), each,
             reinterpret_cast<std::uint8_t*>(received.data()), each, sizeof(std::int64_t));
  sent(static_cast<std::int64_t>((per_node - 1) * layers * nodes), sizeof(std::int64_t));
  std::vector<std::int64_t> sizes2(nodes * layers), received2(sizes2.size());
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const auto width = static_cast<std::size_t>(l.id_bytes);
    l.from_sources.resize(per_node * nodes);
    for (std::size_t s = 0; s < per_node; ++s)
      for (std::size_t m = 0; m < nodes; ++m) l.from_sources[s * nodes + m] = received[(s * layers + d) * nodes + m];
    // My ids by gateway, then node.
    const std::vector<std::int64_t>& first = l.requests.rows.owners;
    std::vector<std::uint8_t> by_gateway;
    by_gateway.reserve(l.requests.local_ids.size());
    for (std::size_t g = 0; g < per_node; ++g)
      for (std::size_t m = 0; m < nodes; ++m) {
        const std::size_t o = m * per_node + g;
        by_gateway.insert(by_gateway.end(), l.requests.local_ids.begin() + first[o] * static_cast<std::int64_t>(width),
                          l.requests.local_ids.begin() + first[o + 1] * static_cast<std::int64_t>(width));
      }
    l.source_totals = row_sums(l.from_sources, per_node, nodes);
    l.gathered.resize(static_cast<std::size_t>(sum(l.source_totals)) * width);
    all_to_all(node_.host, false, by_gateway.data(), l.gateway_totals, l.gathered.data(), l.source_totals, width);
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
              kernels::widen_local_id(l.gathered.data(), l.id_bytes, static_cast<std::int64_t>(at++), 0));
    const std::int64_t whole[2] = {0, std::numeric_limits<std::int64_t>::max()};
    l.to_owner.assign(nodes, 0);
    l.sent_ids.clear();
    for (std::size_t m = 0; m < nodes; ++m) {
      plan_owner_requests(per_owner_ids[m], whole, l.id_bytes, l.merged[m]);
      l.to_owner[m] = l.merged[m].rows.count();
      l.sent_ids.insert(l.sent_ids.end(), l.merged[m].local_ids.begin(), l.merged[m].local_ids.end());
    }
    for (std::size_t m = 0; m < nodes; ++m) sizes2[m * layers + d] = l.to_owner[m];
  }

  // 3. Level 2: each gateway's merged ids to their owners, one per node.
  const std::vector<std::int64_t> each2(nodes, static_cast<std::int64_t>(layers));
  all_to_all(cross_.host, false, reinterpret_cast<const std::uint8_t*>(sizes2.data()), each2,
             reinterpret_cast<std::uint8_t*>(received2.data()), each2, sizeof(std::int64_t));
  sent(static_cast<std::int64_t>((nodes - 1) * layers), sizeof(std::int64_t));
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    l.from_gateways.resize(nodes);
    for (std::size_t m = 0; m < nodes; ++m) l.from_gateways[m] = received2[m * layers + d];
    queries[d] = receive_ids_on_host(l, d, upload);
    for (std::size_t m = 0; m < nodes; ++m)
      if (m != my_node) count_cross_traffic(l, m, true, step);  // level 2 crosses nodes
  }
  marks.mark(StepPhase::gather);

  // 4. The rows asked of me, as stored, packed and sent back to the gateways; there each
  // source's rows are picked out of the merged ones and sent on.
  const std::span<const kernels::DecodeTask> fetched = serve(queries, marks);
  std::vector<kernels::PackTask> packs(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    // Source s's entry k for node m is merged row keys[k] of node m, whose rows start
    // at the sum of the earlier nodes' merged counts.
    std::vector<std::int64_t> node_first(nodes + 1, 0), cursor(nodes, 0);
    for (std::size_t m = 0; m < nodes; ++m) node_first[m + 1] = node_first[m] + l.to_owner[m];
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
    packs[d] = {
        kernels::packed_rows_view(fetched[d].rows, ctx_.workspace.at<std::uint8_t>(l.gateway_rows), node_first[nodes]),
        keys, static_cast<std::int64_t>(count), ctx_.workspace.at<std::uint8_t>(l.expanded_rows)};
  }
  pack_rows_step(ctx_.space, packs);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    all_to_all(node_.data, true, ctx_.workspace.at<std::uint8_t>(l.expanded_rows), l.source_totals,
               ctx_.workspace.at<std::uint8_t>(l.received_rows), l.gateway_totals, l.pitch);
    for (std::size_t s = 0; s < per_node; ++s)
      if (s != local) {
        step.rows_sent += l.source_totals[s];
        sent(l.source_totals[s], l.pitch);
      }
  }
  marks.mark(StepPhase::combine);

  // 5. My embeddings from the rows that came back, ordered by gateway then node: each id
  // keyed to its distinct row's place there.
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    // Distinct ids come by owner (node m, local g); gateway g's rows start at the sum of
    // the earlier gateways' and hold node after node.
    std::vector<std::int64_t> place(static_cast<std::size_t>(l.requests.rows.count()));
    std::vector<std::int64_t> next(per_node, 0);  // per gateway: where its next node's rows start
    for (std::size_t g = 1; g < per_node; ++g) next[g] = next[g - 1] + l.gateway_totals[g - 1];
    std::int64_t distinct = 0;
    for (std::size_t m = 0; m < nodes; ++m)
      for (std::size_t g = 0; g < per_node; ++g) {
        for (std::int64_t k = 0; k < l.to_gateway[g * nodes + m]; ++k)
          place[static_cast<std::size_t>(distinct++)] = next[g] + k;
        next[g] += l.to_gateway[g * nodes + m];
      }
    l.keys.resize(l.requests.rows.keys.size());
    for (std::size_t i = 0; i < l.keys.size(); ++i)
      l.keys[i] = l.requests.rows.keys[i] < 0 ? -1 : place[static_cast<std::size_t>(l.requests.rows.keys[i])];
    auto* keys = ctx_.workspace.at<std::int64_t>(l.keys_region);
    ctx_.space.copy_from_host(keys, l.keys.data(), l.keys.size() * sizeof(std::int64_t));
    const auto* rows = ctx_.workspace.at<std::uint8_t>(l.received_rows);
    auto* out = l.out.at(ctx_.workspace, out_slot);
    tasks[d] = {kernels::packed_rows_view(fetched[d].rows, rows, l.requests.rows.count()), keys, n, out};
    views[d] = {out, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  decode_step(ctx_.space, tasks, ctx_.dtype);
  marks.mark(StepPhase::decode);
  traffic_ += step;
}

}  // namespace pleshard

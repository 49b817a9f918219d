#include "engine/owner_service.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "engine/detail/exchange_steps.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"
#include "store/row_range.hpp"

namespace pleshard {

OwnerGroup OwnerGroup::of(Communicator* data, Communicator* host) {
  return {data, host, host != nullptr ? host->size() : 1, host != nullptr ? host->rank() : 0};
}

namespace detail {

void owner_all_to_all(StepSpace& space, Communicator* comm, bool in_space, const std::uint8_t* send,
                      const std::vector<std::int64_t>& send_counts, std::uint8_t* recv,
                      const std::vector<std::int64_t>& recv_counts, std::size_t bytes) {
  if (comm == nullptr) {  // a group of one rank: my own block
    const auto size = static_cast<std::size_t>(send_counts.front()) * bytes;
    if (in_space) {
      space.copy(recv, send, size);
    } else {
      std::copy_n(send, size, recv);
    }
    return;
  }
  // Consecutive blocks: each rank's offset is the sum of the counts before it.
  comm->all_to_all_v(send, send_counts, starts_of(send_counts), recv, recv_counts, starts_of(recv_counts), bytes);
}

std::int64_t max_ids_of_mine(const ExchangeContext& context) {
  const PlanShape& shape = context.plan.shape();
  const int tp = context.topology.sequence_parallel() ? context.topology.tp : 1;
  return sequence_slice(shape.max_slot_tokens, tp, 0).size() * shape.heads;  // the largest slice
}

}  // namespace detail

OwnerService::OwnerService(const ExchangeContext& context, OwnerGroup group, OwnerRanges ranges, std::int64_t max_ids,
                           std::int64_t returned, bool ids_in_space, std::int64_t slots_per_owner)
    : ctx_(context), group_(group), ranges_(ranges), slots_per_owner_(slots_per_owner) {
  if (group_.size > 1 && group_.data == nullptr)
    throw SystemError("owner exchange: a group of " + std::to_string(group_.size) +
                      " ranks without a data communicator");
  const int ranks = ranges_.owners;
  layers_.resize(detail::layers_of(ctx_));
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Layer& l = layers_[d];
    const TableLayout& layout = ctx_.store.layout(static_cast<int>(d));
    std::int64_t widest = 0;
    for (int r = 0; r < ranks; ++r) {
      const RowRange range = balanced_range(layout.rows, ranks, r);
      l.bounds.push_back(range.begin);
      widest = std::max(widest, range.size());
    }
    l.bounds.push_back(layout.rows);
    // Fixed-size messages send indexes plus one: up to the widest range itself.
    l.id_bytes = kernels::local_id_bytes(slots_per_owner > 0 ? widest + 1 : widest);
    l.pitch = kernels::packed_row_bytes(layout.format, layout.head_dim);
    // Each rank's ids reach me at most once (merged or not), and at most every row I own;
    // fixed-size messages, their every entry.
    const std::int64_t served =
        ranks * std::max(std::min(max_ids, ctx_.store.range(static_cast<int>(d)).size()), slots_per_owner);
    max_served_ = std::max(max_served_, served);
    l.served = served;
    const auto n = static_cast<std::size_t>(served);
    l.query = ctx_.workspace.add<std::int64_t>(n);
    l.ids_in = ctx_.workspace.add<std::uint8_t>(ids_in_space ? n * static_cast<std::size_t>(l.id_bytes) : 0);
    l.served_rows = ctx_.workspace.add<std::uint8_t>(n * l.pitch);
    l.returned_rows = ctx_.workspace.add<std::uint8_t>(static_cast<std::size_t>(returned) * l.pitch);
  }
  // Under peer reads between nodes, the rows I serve from my node's copy outside my part.
  peer_rows_ = PeerRowTally::of(ctx_);
  for (auto& buffer : host_query_)
    buffer = std::make_unique<HostBuffer>(
        ctx_.space,
        std::max<std::size_t>(1, layers_.size() * static_cast<std::size_t>(max_served_)) * sizeof(std::int64_t));
}

void OwnerService::exchange_counts(std::vector<std::vector<std::int64_t>> to_owner, std::size_t ranks_per_node,
                                   ExchangeTraffic& step) {
  const std::size_t layers = layers_.size();
  const auto owners = static_cast<std::size_t>(group_.size);
  std::vector<std::int64_t> sizes(owners * layers), received(sizes.size());
  for (std::size_t d = 0; d < layers; ++d)
    for (std::size_t m = 0; m < owners; ++m) sizes[m * layers + d] = to_owner[d][m];
  const std::vector<std::int64_t> each(owners, static_cast<std::int64_t>(layers));
  detail::owner_all_to_all(ctx_.space, group_.host, false, reinterpret_cast<const std::uint8_t*>(sizes.data()), each,
                           reinterpret_cast<std::uint8_t*>(received.data()), each, sizeof(std::int64_t));
  const auto me = static_cast<std::size_t>(group_.rank);
  for (std::size_t peer = 0; peer < owners; ++peer) {
    if (peer == me) continue;
    const auto bytes = static_cast<double>(layers * sizeof(std::int64_t));
    step.bytes_sent += bytes;
    if (peer / ranks_per_node != me / ranks_per_node) step.bytes_between_nodes += bytes;
  }
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    l.to_owner = std::move(to_owner[d]);
    l.from_askers.resize(owners);
    for (std::size_t m = 0; m < owners; ++m) l.from_askers[m] = received[m * layers + d];
  }
  fixed_ = false;
  next_upload_ ^= 1;
}

void OwnerService::fixed_counts(std::int64_t slots, ExchangeTraffic& step) {
  (void)step;  // no counts are sent
  if (slots > slots_per_owner_)
    throw SystemError("owner exchange: fixed-size messages of " + std::to_string(slots) + " entries, sized for " +
                      std::to_string(slots_per_owner_));
  for (Layer& l : layers_) {
    l.to_owner.assign(static_cast<std::size_t>(group_.size), slots);
    l.from_askers = l.to_owner;
  }
  fixed_ = true;
  next_upload_ ^= 1;
}

std::int64_t OwnerService::asked_of_me(const Layer& l) const {
  const std::int64_t total = detail::total(l.from_askers);
  if (total > l.served)
    throw SystemError("owner exchange: peers ask for " + std::to_string(total) + " rows of a layer, more than the " +
                      std::to_string(l.served) + " its buffers were sized for");
  return total;
}

RowQuery OwnerService::receive_ids_on_host(std::size_t layer, const std::uint8_t* sent) {
  Layer& l = layers_[layer];
  const auto width = static_cast<std::size_t>(l.id_bytes);
  const std::int64_t total = asked_of_me(l);
  l.received_ids.resize(static_cast<std::size_t>(total) * width);
  detail::owner_all_to_all(ctx_.space, group_.host, false, sent, l.to_owner, l.received_ids.data(), l.from_askers,
                           width);
  std::int64_t* host_query =
      host_query_[next_upload_]->as<std::int64_t>() + layer * static_cast<std::size_t>(max_served_);
  const std::int64_t first = my_first_row(l) - (fixed_ ? 1 : 0);  // an empty entry: the row before mine
  l.from_peers = 0;
  for (std::int64_t i = 0; i < total; ++i) {
    host_query[i] = kernels::widen_local_id(l.received_ids.data(), l.id_bytes, i, first);
    if (peer_rows_ != nullptr && peer_rows_->counts(static_cast<int>(layer), host_query[i])) ++l.from_peers;
  }
  auto* query = ctx_.workspace.at<std::int64_t>(l.query);
  ctx_.space.copy_from_host(query, host_query, static_cast<std::size_t>(total) * sizeof(std::int64_t));
  return {query, total};
}

RowQuery OwnerService::receive_ids_in_space(std::size_t layer, const std::uint8_t* sent) {
  Layer& l = layers_[layer];
  const std::int64_t total = asked_of_me(l);
  auto* asked = ctx_.workspace.at<std::uint8_t>(l.ids_in);
  auto* query = ctx_.workspace.at<std::int64_t>(l.query);
  l.from_peers = 0;  // counted in the space's tally instead
  detail::owner_all_to_all(ctx_.space, group_.data, true, sent, l.to_owner, asked, l.from_askers,
                           static_cast<std::size_t>(l.id_bytes));
  widen_local_ids_step(ctx_.space, asked, l.id_bytes, total, my_first_row(l) - (fixed_ ? 1 : 0), query,
                       peer_rows_ != nullptr ? peer_rows_->tally(0, total) : kernels::IdTally{},
                       static_cast<int>(layer));
  return {query, total};
}

void OwnerService::count_traffic(std::size_t layer, std::size_t ranks_per_node, ExchangeTraffic& step) const {
  const Layer& l = layers_[layer];
  const auto me = static_cast<std::size_t>(group_.rank);
  for (std::size_t peer = 0; peer < l.to_owner.size(); ++peer) {
    if (peer == me) continue;
    const double bytes = static_cast<double>(l.to_owner[peer]) * static_cast<double>(l.id_bytes) +
                         static_cast<double>(l.from_askers[peer]) * static_cast<double>(l.pitch);
    step.ids_sent += l.to_owner[peer];
    step.rows_sent += l.from_askers[peer];
    step.bytes_sent += bytes;
    if (peer / ranks_per_node != me / ranks_per_node) step.bytes_between_nodes += bytes;
  }
  if (peer_rows_ != nullptr) step += peer_rows_->rows(static_cast<int>(layer), l.from_peers);
}

ExchangeTraffic OwnerService::counted_in_space() const {
  return peer_rows_ != nullptr ? peer_rows_->counted() : ExchangeTraffic{};
}

void OwnerService::submit(std::span<const RowQuery> queries) {
  ctx_.store.submit(queries);
  most_asked_ = 0;
  for (const RowQuery& q : queries) most_asked_ = std::max(most_asked_, q.count);
}

std::span<const kernels::DecodeTask> OwnerService::serve(StepMarks& marks) {
  const std::span<const kernels::DecodeTask> fetched = detail::wait_for_rows(ctx_, most_asked_, marks);
  std::vector<kernels::PackTask> packs(layers_.size());
  for (std::size_t d = 0; d < layers_.size(); ++d)
    packs[d] = {fetched[d].rows, fetched[d].keys, fetched[d].count,
                ctx_.workspace.at<std::uint8_t>(layers_[d].served_rows)};
  pack_rows_step(ctx_.space, packs);
  for (Layer& l : layers_)
    detail::owner_all_to_all(ctx_.space, group_.data, true, ctx_.workspace.at<std::uint8_t>(l.served_rows),
                             l.from_askers, ctx_.workspace.at<std::uint8_t>(l.returned_rows), l.to_owner, l.pitch);
  return fetched;
}

const std::uint8_t* OwnerService::returned(std::size_t layer) const {
  return ctx_.workspace.at<std::uint8_t>(layers_[layer].returned_rows);
}

std::int64_t OwnerService::returned_count(std::size_t layer) const { return detail::total(layers_[layer].to_owner); }

}  // namespace pleshard

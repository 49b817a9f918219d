#include "engine/owner_exchange.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/common/row_pack.hpp"
#include "store/row_range.hpp"

namespace pleshard {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Byte offsets of consecutive blocks of counts[r] entries of `bytes` each, and the sizes.
void blocks_of(const std::vector<std::int64_t>& counts, std::size_t bytes, std::vector<std::int64_t>& sizes,
               std::vector<std::int64_t>& offsets) {
  sizes.resize(counts.size());
  offsets.resize(counts.size());
  std::int64_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    sizes[r] = counts[r] * static_cast<std::int64_t>(bytes);
    offsets[r] = at;
    at += sizes[r];
  }
}

}  // namespace

OwnerExchange::OwnerExchange(const ExchangeContext& context)
    : ctx_(context),
      group_(ctx_.comms.etp != nullptr           ? ctx_.comms.etp
             : ctx_.topology.sequence_parallel() ? ctx_.comms.tp
                                                 : nullptr),
      ranks_(ctx_.topology.etp),
      me_(ctx_.topology.etp_rank()) {
  if (group_ != nullptr && (group_->size() != ranks_ || ctx_.comms.etp_host == nullptr))
    throw SystemError("owner exchange: the ETP group's communicators do not match the layout");
  const PlanShape& shape = ctx_.plan.shape();
  const int tp = ctx_.topology.sequence_parallel() ? ctx_.topology.tp : 1;
  max_ids_ = ceil_div(shape.max_slot_tokens, tp) * shape.heads;
  const auto layers = static_cast<std::size_t>(shape.layers);
  const std::size_t out_bytes = static_cast<std::size_t>(shape.max_slot_tokens) * static_cast<std::size_t>(ctx_.width) *
                                kernels::out_bytes(ctx_.dtype);
  layers_.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    const TableLayout& layout = ctx_.store.layout(static_cast<int>(d));
    std::int64_t widest = 0;
    for (int r = 0; r < ranks_; ++r) {
      const RowRange range = balanced_range(layout.rows, ranks_, r);
      l.bounds.push_back(range.begin);
      widest = std::max(widest, range.size());
    }
    l.bounds.push_back(layout.rows);
    l.id_bytes = kernels::local_id_bytes(widest);
    l.pitch = kernels::packed_row_bytes(layout.format, layout.head_dim);
    // Each peer asks me for at most its ids, and at most every row I own, once.
    const std::int64_t served = ranks_ * std::min(max_ids_, ctx_.store.range(static_cast<int>(d)).size());
    max_served_ = std::max(max_served_, served);
    const auto ids = static_cast<std::size_t>(max_ids_);
    const auto n = static_cast<std::size_t>(served);
    l.query = ctx_.workspace.add<std::int64_t>(ctx_.space.on_device() ? n : 0);
    l.send_rows = ctx_.workspace.add<std::uint8_t>(n * l.pitch);
    l.received_rows = ctx_.workspace.add<std::uint8_t>(ids * l.pitch);
    l.keys = ctx_.workspace.add<std::int64_t>(ids);
    l.out = ctx_.workspace.add<std::uint8_t>(out_bytes);
  }
  host_ids_ =
      std::make_unique<HostBuffer>(ctx_.space, layers * static_cast<std::size_t>(max_ids_) * sizeof(std::int64_t));
  host_query_ =
      std::make_unique<HostBuffer>(ctx_.space, layers * static_cast<std::size_t>(max_served_) * sizeof(std::int64_t));
  sizes_sent_.resize(static_cast<std::size_t>(ranks_) * layers);
  sizes_received_.resize(sizes_sent_.size());
}

void OwnerExchange::all_to_all(const std::uint8_t* send, const std::vector<std::int64_t>& send_counts,
                               std::uint8_t* recv, const std::vector<std::int64_t>& recv_counts, std::size_t bytes) {
  if (group_ == nullptr) {
    ctx_.space.copy(recv, send, static_cast<std::size_t>(send_counts.front()) * bytes);
    return;
  }
  std::vector<std::int64_t> send_sizes, send_offsets, recv_sizes, recv_offsets;
  blocks_of(send_counts, bytes, send_sizes, send_offsets);
  blocks_of(recv_counts, bytes, recv_sizes, recv_offsets);
  group_->all_to_all_v(send, send_sizes, send_offsets, recv, recv_sizes, recv_offsets);
}

void OwnerExchange::run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_.size();
  const int heads = plan.shape().heads;
  const Topology& t = ctx_.topology;
  const auto ranks = static_cast<std::size_t>(ranks_);
  ExchangeTraffic step{1, tokens};

  // 1. My tokens' ids of every layer, to the host, planned there.
  plan.hash(plan.my_block(), 1);
  marks.mark(StepPhase::hash);
  const RowRange slice = t.sequence_parallel() ? sequence_slice(tokens, t.tp, t.tp_rank()) : RowRange{0, tokens};
  const std::int64_t n = slice.size() * heads;
  auto* host_ids = host_ids_->as<std::int64_t>();
  for (std::size_t d = 0; d < layers; ++d)
    ctx_.space.copy_to_host_async(host_ids + d * static_cast<std::size_t>(max_ids_),
                                  plan.ids(static_cast<int>(d)) + slice.begin * heads,
                                  static_cast<std::size_t>(n) * sizeof(std::int64_t));
  ctx_.space.synchronize();
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    plan_owner_requests({host_ids + d * static_cast<std::size_t>(max_ids_), static_cast<std::size_t>(n)}, l.bounds,
                        l.id_bytes, l.requests);
    for (std::size_t r = 0; r < ranks; ++r) sizes_sent_[r * layers + d] = l.requests.per_owner[r];
  }

  // 2. How many ids each peer asks of me, then every layer's ids to their owners.
  if (ctx_.comms.etp_host != nullptr) {
    const std::vector<std::int64_t> each(ranks, static_cast<std::int64_t>(layers));
    std::vector<std::int64_t> sizes, offsets;
    blocks_of(each, sizeof(std::int64_t), sizes, offsets);
    ctx_.comms.etp_host->all_to_all_v(reinterpret_cast<const std::uint8_t*>(sizes_sent_.data()), sizes, offsets,
                                      reinterpret_cast<std::uint8_t*>(sizes_received_.data()), sizes, offsets);
    step.bytes_sent += static_cast<double>((ranks - 1) * layers * sizeof(std::int64_t));
  } else {
    sizes_received_ = sizes_sent_;
  }
  std::vector<RowQuery> queries(layers);
  std::vector<std::int64_t> asked(ranks);   // of owner r, by me (one layer)
  std::vector<std::int64_t> served(ranks);  // to rank r, by me (one layer)
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    for (std::size_t r = 0; r < ranks; ++r) served[r] = sizes_received_[r * layers + d];
    std::int64_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) total += served[r];
    if (total > max_served_)
      throw SystemError("owner exchange: peers ask for " + std::to_string(total) + " rows, more than the " +
                        std::to_string(max_served_) + " sized for");
    // The ids are planned on the host: they go over MPI from there, and are widened there.
    const auto width = static_cast<std::size_t>(l.id_bytes);
    l.received_ids.resize(static_cast<std::size_t>(total) * width);
    if (ctx_.comms.etp_host != nullptr) {
      std::vector<std::int64_t> send_sizes, send_offsets, recv_sizes, recv_offsets;
      blocks_of(l.requests.per_owner, width, send_sizes, send_offsets);
      blocks_of(served, width, recv_sizes, recv_offsets);
      ctx_.comms.etp_host->all_to_all_v(l.requests.local_ids.data(), send_sizes, send_offsets, l.received_ids.data(),
                                        recv_sizes, recv_offsets);
    } else {
      l.received_ids = l.requests.local_ids;
    }
    std::int64_t* host_query = host_query_->as<std::int64_t>() + d * static_cast<std::size_t>(max_served_);
    const std::int64_t first = l.bounds[static_cast<std::size_t>(me_)];
    for (std::int64_t i = 0; i < total; ++i)
      host_query[i] = kernels::widen_local_id(l.received_ids.data(), l.id_bytes, i, first);
    std::int64_t* query = host_query;
    if (ctx_.space.on_device()) {
      query = ctx_.workspace.at<std::int64_t>(l.query);
      ctx_.space.copy_from_host(query, host_query, static_cast<std::size_t>(total) * sizeof(std::int64_t));
    }
    queries[d] = {query, total};
    for (std::size_t r = 0; r < ranks; ++r) {
      if (static_cast<int>(r) == me_) continue;
      step.ids_sent += l.requests.per_owner[r];
      step.rows_sent += served[r];
      step.bytes_sent += static_cast<double>(l.requests.per_owner[r] * l.id_bytes) +
                         static_cast<double>(served[r]) * static_cast<double>(l.pitch);
    }
  }
  step.ids = n * static_cast<std::int64_t>(layers);
  marks.mark(StepPhase::gather);

  // 3. The rows peers asked for, as stored, packed and sent back.
  ctx_.store.submit(queries);
  const std::span<const kernels::DecodeTask> fetched = ctx_.store.wait();
  marks.mark(StepPhase::fetch);
  std::vector<kernels::PackTask> packs(layers);
  for (std::size_t d = 0; d < layers; ++d)
    packs[d] = {fetched[d].rows, fetched[d].keys, fetched[d].count,
                ctx_.workspace.at<std::uint8_t>(layers_[d].send_rows)};
  pack_rows_step(ctx_.space, packs);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    for (std::size_t r = 0; r < ranks; ++r) served[r] = sizes_received_[r * layers + d];
    all_to_all(ctx_.workspace.at<std::uint8_t>(l.send_rows), served, ctx_.workspace.at<std::uint8_t>(l.received_rows),
               l.requests.per_owner, l.pitch);
  }
  marks.mark(StepPhase::combine);

  // 4. My embeddings from the rows that came back: each id keyed to its distinct row.
  std::vector<kernels::DecodeTask> tasks(layers);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d) {
    Layer& l = layers_[d];
    auto* keys = ctx_.workspace.at<std::int64_t>(l.keys);
    ctx_.space.copy_from_host(keys, l.requests.keys.data(), l.requests.keys.size() * sizeof(std::int64_t));
    const kernels::TableView rows = kernels::packed_rows_view(
        fetched[d].rows, ctx_.workspace.at<std::uint8_t>(l.received_rows), l.requests.distinct);
    auto* out = ctx_.workspace.at<std::uint8_t>(l.out);
    tasks[d] = {rows, keys, n, out};
    views[d] = {out, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  decode_step(ctx_.space, tasks, ctx_.dtype);
  marks.mark(StepPhase::decode);
  traffic_ += step;
}

}  // namespace pleshard

#include "engine/exchange.hpp"

#include <algorithm>

#include <mpi.h>

namespace pleshard {

namespace {

std::size_t token_bytes_of(const TableTier& table, int heads, OutDtype dtype) {
  return static_cast<std::size_t>(heads) * static_cast<std::size_t>(table.layout().head_dim) *
         kernels::out_bytes(dtype);
}

std::vector<SpaceBuffer> layer_buffers(StepSpace& space, int layers) {
  std::vector<SpaceBuffer> buffers;
  for (int d = 0; d < layers; ++d) buffers.emplace_back(space);
  return buffers;
}

}  // namespace

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = (tokens + tp - 1) / tp;
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

GatherReduceExchange::GatherReduceExchange(StepSpace& space, const ExchangeComms& comms, const Topology& topology,
                                           int layers)
    : space_(space),
      comms_(comms),
      topology_(topology),
      slot_ids_(space),
      gathered_ids_(space),
      partial_(layer_buffers(space, layers)),
      token_bytes_(static_cast<std::size_t>(layers)),
      received_(layer_buffers(space, layers)) {}

void GatherReduceExchange::begin_step(std::int64_t tokens) {
  tokens_ = tokens;
  slot_ = tokens;
  comms_.control.all_reduce(&slot_, 1, Element::i64, ReduceOp::max);
}

void GatherReduceExchange::start(int layer, const std::int64_t* ids, int heads, TableTier& table, OutDtype dtype,
                                 PhaseTimes& times) {
  const std::size_t token_bytes = token_bytes_of(table, heads, dtype);
  const auto slots = static_cast<std::size_t>(comms_.etp_dp.size());
  const std::size_t slot_id_bytes = static_cast<std::size_t>(slot_ * heads) * sizeof(std::int64_t);

  // 1. Slots of the group's largest token count; my ids padded with row 0.
  double t0 = MPI_Wtime();
  slot_ids_.reserve(std::max<std::size_t>(1, slot_id_bytes));
  gathered_ids_.reserve(std::max<std::size_t>(1, slot_id_bytes * slots));
  space_.fill_zero(slot_ids_.data(), slot_id_bytes);
  space_.copy(slot_ids_.data(), ids, static_cast<std::size_t>(tokens_ * heads) * sizeof(std::int64_t));
  comms_.etp_dp.all_gather({slot_ids_.data(), slot_id_bytes}, {gathered_ids_.data(), slot_id_bytes * slots});
  times.exchange += MPI_Wtime() - t0;

  // 2. Look up the ids I own (zeros elsewhere); a tier may run it in the background.
  t0 = MPI_Wtime();
  const std::int64_t padded_tokens = topology_.sequence_parallel()
                                         ? (slot_ + topology_.tp - 1) / topology_.tp * topology_.tp
                                         : slot_ * static_cast<std::int64_t>(slots);
  token_bytes_[static_cast<std::size_t>(layer)] = token_bytes;
  SpaceBuffer& partial = partial_[static_cast<std::size_t>(layer)];
  const std::size_t partial_bytes = static_cast<std::size_t>(padded_tokens) * token_bytes;
  partial.reserve(std::max<std::size_t>(1, partial_bytes));
  space_.fill_zero(partial.data(), partial_bytes);
  table.start(gathered_ids_.as<std::int64_t>(), slot_ * static_cast<std::int64_t>(slots) * heads, dtype,
              partial.data());
  times.lookup += MPI_Wtime() - t0;
}

void GatherReduceExchange::finish(int layer, TableTier& table, OutDtype dtype, PhaseTimes& times) {
  double t0 = MPI_Wtime();
  table.finish();
  times.lookup += MPI_Wtime() - t0;

  // 3. Combine over the ETP group (or reduce-scatter my sequence slice).
  t0 = MPI_Wtime();
  SpaceBuffer& partial = partial_[static_cast<std::size_t>(layer)];
  const std::size_t token_bytes = token_bytes_[static_cast<std::size_t>(layer)];
  const std::size_t value_bytes = kernels::out_bytes(dtype);
  const Element element = value_bytes == 2 ? Element::u16 : Element::u32;
  if (comms_.etp.size() == 1) {
    // I own every row: nothing to combine.
  } else if (topology_.sequence_parallel()) {
    const std::int64_t per_rank = (slot_ + topology_.tp - 1) / topology_.tp;
    SpaceBuffer& received = received_[static_cast<std::size_t>(layer)];
    received.reserve(std::max<std::size_t>(1, static_cast<std::size_t>(per_rank) * token_bytes));
    comms_.tp.reduce_scatter(partial.data(), received.data(),
                             static_cast<std::size_t>(per_rank) * token_bytes / value_bytes, element,
                             ReduceOp::owned);
  } else {
    const std::size_t padded = static_cast<std::size_t>(slot_) * static_cast<std::size_t>(comms_.etp_dp.size());
    comms_.etp.all_reduce(partial.data(), padded * token_bytes / value_bytes, element, ReduceOp::owned);
  }
  times.exchange += MPI_Wtime() - t0;
}

void GatherReduceExchange::collect(int layer, std::int64_t tokens, ExchangeResult& out) {
  const SpaceBuffer& partial = partial_[static_cast<std::size_t>(layer)];
  const std::size_t token_bytes = token_bytes_[static_cast<std::size_t>(layer)];
  const std::uint8_t* mine = partial.data();
  out.first = 0;
  out.count = tokens;
  if (comms_.etp.size() > 1 && topology_.sequence_parallel()) {
    const RowRange slice = sequence_slice(tokens, topology_.tp, topology_.tp_rank());
    out.first = slice.begin;
    out.count = slice.size();
    mine = received_[static_cast<std::size_t>(layer)].data();
  } else if (comms_.etp.size() > 1) {
    mine += static_cast<std::size_t>(comms_.etp_dp.rank()) * static_cast<std::size_t>(slot_) * token_bytes;
  }
  out.embeddings.resize(static_cast<std::size_t>(out.count) * token_bytes);
  space_.copy_to_host(out.embeddings.data(), mine, out.embeddings.size());
}

LocalExchange::LocalExchange(StepSpace& space, const Topology& topology, int layers)
    : space_(space),
      topology_(topology),
      rows_(layer_buffers(space, layers)),
      token_bytes_(static_cast<std::size_t>(layers)) {}

RowRange LocalExchange::mine(std::int64_t tokens) const {
  return topology_.sequence_parallel() ? sequence_slice(tokens, topology_.tp, topology_.tp_rank())
                                       : RowRange{0, tokens};
}

void LocalExchange::start(int layer, const std::int64_t* ids, int heads, TableTier& table, OutDtype dtype,
                          PhaseTimes& times) {
  const double t0 = MPI_Wtime();
  const RowRange tokens = mine(tokens_);
  const std::size_t token_bytes = token_bytes_of(table, heads, dtype);
  token_bytes_[static_cast<std::size_t>(layer)] = token_bytes;
  SpaceBuffer& rows = rows_[static_cast<std::size_t>(layer)];
  rows.reserve(std::max<std::size_t>(1, static_cast<std::size_t>(tokens.size()) * token_bytes));
  table.start(ids + tokens.begin * heads, tokens.size() * heads, dtype, rows.data());
  times.lookup += MPI_Wtime() - t0;
}

void LocalExchange::finish(int /*layer*/, TableTier& table, OutDtype /*dtype*/, PhaseTimes& times) {
  const double t0 = MPI_Wtime();
  table.finish();
  times.lookup += MPI_Wtime() - t0;
}

void LocalExchange::collect(int layer, std::int64_t tokens, ExchangeResult& out) {
  const RowRange kept = mine(tokens);
  out.first = kept.begin;
  out.count = kept.size();
  out.embeddings.resize(static_cast<std::size_t>(kept.size()) * token_bytes_[static_cast<std::size_t>(layer)]);
  space_.copy_to_host(out.embeddings.data(), rows_[static_cast<std::size_t>(layer)].data(), out.embeddings.size());
}

}  // namespace pleshard

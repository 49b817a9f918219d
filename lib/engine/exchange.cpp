#include "engine/exchange.hpp"

#include <algorithm>
#include <cstring>

#include <mpi.h>

namespace pleshard {

namespace {

template <typename T>
std::span<const std::uint8_t> byte_span(const std::vector<T>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

template <typename T>
std::span<std::uint8_t> byte_span(std::vector<T>& v) {
  return {reinterpret_cast<std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

}  // namespace

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = (tokens + tp - 1) / tp;
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

GatherReduceExchange::GatherReduceExchange(Communicator& etp, Communicator& etp_dp, Communicator& tp,
                                           const Topology& topology)
    : etp_(etp), etp_dp_(etp_dp), tp_(tp), topology_(topology) {}

void GatherReduceExchange::forward(std::span<const std::int64_t> ids, int heads, const HostTable& table,
                                   OutDtype dtype, ExchangeResult& out, PhaseTimes& times) {
  const std::int64_t tokens = static_cast<std::int64_t>(ids.size()) / heads;
  const std::size_t value_bytes = kernels::out_bytes(dtype);
  const std::size_t token_bytes =
      static_cast<std::size_t>(heads) * static_cast<std::size_t>(table.layout().head_dim) * value_bytes;
  const Element element = value_bytes == 2 ? Element::u16 : Element::u32;

  // 1. Slots of the group's largest token count; my ids padded with row 0.
  double t0 = MPI_Wtime();
  std::int64_t slot = tokens;
  etp_dp_.all_reduce(&slot, 1, Element::i64, ReduceOp::max);
  const int slots = etp_dp_.size();
  slot_ids_.assign(static_cast<std::size_t>(slot * heads), 0);
  std::copy(ids.begin(), ids.end(), slot_ids_.begin());
  gathered_ids_.resize(slot_ids_.size() * static_cast<std::size_t>(slots));
  etp_dp_.all_gather(byte_span(slot_ids_), byte_span(gathered_ids_));
  times.exchange += MPI_Wtime() - t0;

  // 2. Look up the ids I own; zeros elsewhere.
  t0 = MPI_Wtime();
  const std::int64_t padded_tokens = topology_.sequence_parallel()
                                         ? (slot + topology_.tp - 1) / topology_.tp * topology_.tp
                                         : slot * slots;
  partial_.assign(static_cast<std::size_t>(padded_tokens) * token_bytes, 0);
  table.lookup(gathered_ids_, dtype, partial_.data());
  times.lookup += MPI_Wtime() - t0;

  // 3. Combine over the ETP group and keep my part.
  t0 = MPI_Wtime();
  const std::size_t values_per_token = token_bytes / value_bytes;
  if (etp_.size() == 1) {  // I own every row: nothing to combine
    partial_.resize(static_cast<std::size_t>(tokens) * token_bytes);
    out.first = 0;
    out.count = tokens;
    out.embeddings.swap(partial_);
  } else if (topology_.sequence_parallel()) {
    const std::int64_t per_rank = padded_tokens / topology_.tp;
    const RowRange mine = sequence_slice(tokens, topology_.tp, topology_.tp_rank());
    std::vector<std::uint8_t> received(static_cast<std::size_t>(per_rank) * token_bytes);
    tp_.reduce_scatter(partial_.data(), received.data(), static_cast<std::size_t>(per_rank) * values_per_token,
                       element, ReduceOp::bitwise_or);
    out.first = mine.begin;
    out.count = mine.size();
    received.resize(static_cast<std::size_t>(out.count) * token_bytes);
    out.embeddings = std::move(received);
  } else {
    etp_.all_reduce(partial_.data(), partial_.size() / value_bytes, element, ReduceOp::bitwise_or);
    const auto begin = partial_.begin() + static_cast<std::ptrdiff_t>(
                                              static_cast<std::size_t>(etp_dp_.rank() * slot) * token_bytes);
    out.first = 0;
    out.count = tokens;
    out.embeddings.assign(begin, begin + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(tokens) * token_bytes));
  }
  times.exchange += MPI_Wtime() - t0;
}

}  // namespace pleshard

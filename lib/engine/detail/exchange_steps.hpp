#pragma once
// What the exchange strategies' steps share: sizes from the context, the fetch and fused
// decode of every layer, the element the combine moves and the bytes a collective sends.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dist/communicator.hpp"
#include "engine/exchange.hpp"

namespace pleshard::detail {

[[nodiscard]] std::size_t layers_of(const ExchangeContext& c);
// Bytes of one token's embeddings of every head of one layer in the output dtype.
[[nodiscard]] std::size_t token_bytes(const ExchangeContext& c);
[[nodiscard]] std::int64_t ceil_div(std::int64_t a, std::int64_t b);
[[nodiscard]] std::int64_t total(const std::vector<std::int64_t>& counts);
// Where each count's entries start when they are packed in order, then their total
// (counts.size() + 1 entries).
[[nodiscard]] std::vector<std::int64_t> starts_of(const std::vector<std::int64_t>& counts);
// My tokens of a step of `tokens`: my sequence slice under sequence parallelism (all of them
// where TP is one rank), else all.
[[nodiscard]] RowRange my_slice(const Topology& topology, std::int64_t tokens);
// The rows of the store's last submit (RowStore::wait), of queries of at most `most` ids a
// layer, the fetch phase marked where it enqueued work (StepMarks::mark): tasks valid until
// the store's next submit.
[[nodiscard]] std::span<const kernels::DecodeTask> wait_for_rows(const ExchangeContext& c, std::int64_t most,
                                                                 StepMarks& marks);
// Whether a GPU's decode of a step of `ids` lookups a layer hashes its own keys from the
// plan (where the store reads the tables in place, so the keys need not be written first):
// one launch a step instead of the hash's, the block's copy and the decode's.
[[nodiscard]] bool decode_hashes(const ExchangeContext& c, std::int64_t ids);
// Decodes the rows a fetch handed out (RowStore::wait), layer d's into out + d * layer_bytes
// (entries in query order, head_dim values each), and marks the decode phase. `hash`: the
// step's hashing left to the decode (the queries are the plan's ids, not written yet, and
// the store reads them in place), its block in `pinned` where it is still there.
void decode_rows(const ExchangeContext& c, std::span<const kernels::DecodeTask> fetched, std::uint8_t* out,
                 std::size_t layer_bytes, StepMarks& marks, const kernels::StepHash* hash = nullptr,
                 const kernels::PinnedBlock& pinned = {});
// Decodes rows keyed and placed as `tasks` say (each its own `out`), and marks the decode
// phase; both decodes hold the step back first by the test fault's decode delay
// (FaultPlan::decode_delay_us), widening the window in which a step begun ahead runs
// before this decode.
void decode_tasks(const ExchangeContext& c, std::span<const kernels::DecodeTask> tasks, StepMarks& marks);
// The element a combine of owned bits moves for the output dtype.
[[nodiscard]] Element owned_element(OutDtype dtype);
// Bytes a rank sends to the others in collectives of `ranks` ranks over `bytes` (nccl-tests'
// bus bytes): all-gather of `bytes` received, reduce-scatter of `bytes` sent, all-reduce.
[[nodiscard]] double gather_bytes(int ranks, std::size_t bytes);
[[nodiscard]] double all_reduce_bytes(int ranks, std::size_t bytes);

}  // namespace pleshard::detail

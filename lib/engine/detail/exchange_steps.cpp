#include "engine/detail/exchange_steps.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "core/fault_plan.hpp"
#include "exec/step_kernels.hpp"

namespace pleshard::detail {

std::size_t layers_of(const ExchangeContext& c) { return static_cast<std::size_t>(c.plan.shape().layers); }

std::size_t token_bytes(const ExchangeContext& c) {
  return static_cast<std::size_t>(c.width) * kernels::out_bytes(c.dtype);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

RowRange my_slice(const Topology& topology, std::int64_t tokens) {
  return topology.sequence_parallel() ? sequence_slice(tokens, topology.tp, topology.tp_rank()) : RowRange{0, tokens};
}

std::int64_t total(const std::vector<std::int64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

std::vector<std::int64_t> starts_of(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> starts(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), starts.begin() + 1);
  return starts;
}

bool decode_hashes(const ExchangeContext& c, std::int64_t ids) {
  return c.space.on_device() && c.store.reads_in_place(ids);
}

std::span<const kernels::DecodeTask> wait_for_rows(const ExchangeContext& c, std::int64_t most, StepMarks& marks) {
  const std::span<const kernels::DecodeTask> fetched = c.store.wait();
  marks.mark(StepPhase::fetch, !c.store.reads_in_place(most));
  return fetched;
}

namespace {

// The test fault's decode delay, on the space's stream (FaultPlan::decode_delay_us).
void hold_decode(const ExchangeContext& c) {
  if (const std::uint64_t delay = fault_plan().decode_delay_us; delay != 0) c.space.inject_delay(1e-6 * delay);
}

}  // namespace

void decode_rows(const ExchangeContext& c, std::span<const kernels::DecodeTask> fetched, std::uint8_t* out,
                 std::size_t layer_bytes, StepMarks& marks, const kernels::StepHash* hash,
                 const kernels::PinnedBlock& pinned) {
  std::vector<kernels::DecodeTask> tasks(fetched.begin(), fetched.end());
  for (std::size_t d = 0; d < tasks.size(); ++d) tasks[d].out = out + d * layer_bytes;
  if (hash == nullptr) {
    decode_tasks(c, tasks, marks);
    return;
  }
  hold_decode(c);
  hash_and_decode_step(c.space, *hash, tasks, c.dtype, pinned);
  marks.mark(StepPhase::decode);
}

void decode_tasks(const ExchangeContext& c, std::span<const kernels::DecodeTask> tasks, StepMarks& marks) {
  hold_decode(c);
  decode_step(c.space, tasks, c.dtype);
  marks.mark(StepPhase::decode);
}

Element owned_element(OutDtype dtype) { return kernels::out_bytes(dtype) == 2 ? Element::u16 : Element::u32; }

double gather_bytes(int ranks, std::size_t bytes) {
  return ranks > 1 ? static_cast<double>(bytes) * (ranks - 1) / ranks : 0.0;
}
double all_reduce_bytes(int ranks, std::size_t bytes) { return 2 * gather_bytes(ranks, bytes); }

}  // namespace pleshard::detail

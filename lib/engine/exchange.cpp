#include "engine/exchange.hpp"

#include <algorithm>
#include <string>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "engine/owner_exchange.hpp"
#include "exec/step_kernels.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<ExchangeStrategy, 5> k_strategies{{{ExchangeStrategy::automatic, "auto"},
                                                       {ExchangeStrategy::gather_reduce, "gather-reduce"},
                                                       {ExchangeStrategy::reduce_scatter, "reduce-scatter"},
                                                       {ExchangeStrategy::owner, "owner"},
                                                       {ExchangeStrategy::hierarchical, "hierarchical"}}};

std::size_t layers_of(const ExchangeContext& c) { return static_cast<std::size_t>(c.plan.shape().layers); }

std::size_t token_bytes(const ExchangeContext& c) {
  return static_cast<std::size_t>(c.width) * kernels::out_bytes(c.dtype);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Fetches the rows of every layer's query and decodes them, layer d's into
// out + d * layer_bytes (entries in query order, head_dim values each).
void fetch_and_decode(const ExchangeContext& c, std::span<const RowQuery> queries, std::uint8_t* out,
                      std::size_t layer_bytes, StepMarks& marks) {
  c.store.submit(queries);
  const std::span<const kernels::DecodeTask> fetched = c.store.wait();
  marks.mark(StepPhase::fetch);
  std::vector<kernels::DecodeTask> tasks(fetched.begin(), fetched.end());
  for (std::size_t d = 0; d < tasks.size(); ++d) tasks[d].out = out + d * layer_bytes;
  decode_step(c.space, tasks, c.dtype);
  marks.mark(StepPhase::decode);
}

Element owned_element(OutDtype dtype) { return kernels::out_bytes(dtype) == 2 ? Element::u16 : Element::u32; }

// Bytes a rank sends to the others in collectives of `ranks` ranks over `bytes` (nccl-tests'
// bus bytes): all-gather of `bytes` received, reduce-scatter of `bytes` sent, all-reduce.
double gather_bytes(int ranks, std::size_t bytes) {
  return ranks > 1 ? static_cast<double>(bytes) * (ranks - 1) / ranks : 0.0;
}
double all_reduce_bytes(int ranks, std::size_t bytes) { return 2 * gather_bytes(ranks, bytes); }

}  // namespace

void RegionRing::add(Workspace& workspace, std::size_t bytes, int count) {
  for (int k = 0; k < count; ++k) copies.push_back(workspace.add<std::uint8_t>(bytes));
}

const char* to_string(ExchangeStrategy strategy) { return name_of(k_strategies, strategy); }

ExchangeStrategy parse_exchange_strategy(std::string_view name) {
  return parse_value(k_strategies, name, "exchange strategy");
}

ExchangeTraffic& ExchangeTraffic::operator+=(const ExchangeTraffic& o) {
  steps += o.steps;
  tokens += o.tokens;
  bytes_sent += o.bytes_sent;
  ids += o.ids;
  ids_sent += o.ids_sent;
  rows_sent += o.rows_sent;
  bytes_between_nodes += o.bytes_between_nodes;
  return *this;
}

ExchangeTraffic ExchangeTraffic::operator-(const ExchangeTraffic& o) const {
  return {steps - o.steps,
          tokens - o.tokens,
          bytes_sent - o.bytes_sent,
          ids - o.ids,
          ids_sent - o.ids_sent,
          rows_sent - o.rows_sent,
          bytes_between_nodes - o.bytes_between_nodes};
}

RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank) {
  const std::int64_t per_rank = ceil_div(tokens, tp);
  const std::int64_t first = std::min(tokens, per_rank * tp_rank);
  return {first, std::min(tokens, first + per_rank)};
}

ExchangeStrategy choose_exchange(ExchangeStrategy requested, const Topology& topology, bool local, bool cuda_graphs) {
  if (local) {
    if (requested != ExchangeStrategy::automatic)
      throw InputError(std::string("--exchange ") + to_string(requested) +
                       ": the disk tier exchanges nothing (every rank reads the rows of its own tokens)");
    return ExchangeStrategy::automatic;
  }
  // One rank per ETP group exchanges nothing whatever the strategy (identity_exchange): only
  // groups of several ranks size the owner strategies' messages on the host.
  if ((requested == ExchangeStrategy::owner || requested == ExchangeStrategy::hierarchical) && cuda_graphs &&
      topology.etp > 1)
    throw InputError(std::string("--exchange ") + to_string(requested) +
                     " sizes its messages on the host every step, so its steps cannot be captured in CUDA graphs "
                     "(use gather-reduce or reduce-scatter with --cuda-graph)");
  if (requested != ExchangeStrategy::automatic) return requested;
  return topology.etp > 1 && !cuda_graphs ? ExchangeStrategy::owner : ExchangeStrategy::gather_reduce;
}

std::unique_ptr<Exchange> make_exchange(ExchangeStrategy strategy, bool local, const ExchangeContext& context) {
  if (local) return std::make_unique<LocalExchange>(context);
  // A group of one rank: every strategy is the identity (hash, fetch, decode, no combine),
  // which the gather-reduce flow is without its collectives; no owner planning on the host.
  if (context.topology.etp == 1 && (strategy == ExchangeStrategy::owner || strategy == ExchangeStrategy::hierarchical))
    return std::make_unique<GatherReduceExchange>(context, false, to_string(strategy));
  switch (strategy) {
    case ExchangeStrategy::owner:
      return std::make_unique<OwnerExchange>(context, false);
    case ExchangeStrategy::hierarchical:
      return std::make_unique<OwnerExchange>(context, true);
    case ExchangeStrategy::reduce_scatter:
      return std::make_unique<GatherReduceExchange>(context, true);
    case ExchangeStrategy::automatic:
    case ExchangeStrategy::gather_reduce:
      break;
  }
  return std::make_unique<GatherReduceExchange>(context, false);
}

GatherReduceExchange::GatherReduceExchange(const ExchangeContext& context, bool reduce_scatter, const char* name)
    : ctx_(context),
      reduce_scatter_(reduce_scatter),
      name_(name != nullptr  ? name
            : reduce_scatter ? "reduce-scatter"
                             : "gather-reduce") {
  const std::int64_t max_tokens = ctx_.plan.shape().max_slot_tokens;
  const std::size_t layers = layers_of(ctx_);
  const auto slots = static_cast<std::size_t>(ctx_.plan.shape().slots);
  const int tp = ctx_.topology.tp;
  const auto share = static_cast<std::size_t>(ceil_div(max_tokens, tp));
  const std::size_t padded = sequence_parallel() ? share * static_cast<std::size_t>(tp) : max_tokens;
  // Reduce-scattered slots of several TP ranks: the engine pads slots to a multiple of TP
  // (slot_multiple), so every share is whole.
  if (scatters() && !sequence_parallel() && tp > 1 && max_tokens % tp != 0)
    throw SystemError("reduce-scatter exchange: slots of " + std::to_string(max_tokens) + " tokens for TP " +
                      std::to_string(tp));
  const bool gathers = scatters() && !sequence_parallel() && tp > 1;
  const int out_slots = ctx_.output_slots;
  partial_.add(ctx_.workspace, layers * slots * padded * token_bytes(ctx_), scatters() ? 1 : out_slots);
  received_.add(ctx_.workspace, scatters() ? layers * share * token_bytes(ctx_) : 0, gathers ? 1 : out_slots);
  gathered_.add(ctx_.workspace, gathers ? layers * static_cast<std::size_t>(max_tokens) * token_bytes(ctx_) : 0,
                out_slots);
}

std::int64_t GatherReduceExchange::max_query_ids() const {
  const PlanShape& s = ctx_.plan.shape();
  return static_cast<std::int64_t>(s.slots) * s.max_slot_tokens * s.heads;
}

void GatherReduceExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::int64_t slot_tokens = plan.slot_tokens();
  const int slots = plan.shape().slots;
  const std::size_t layers = layers_of(ctx_);
  const std::size_t row_bytes = token_bytes(ctx_);
  ExchangeTraffic step{1, tokens};
  step.ids = tokens * plan.shape().heads * static_cast<std::int64_t>(layers);

  // 1. The ETP group's batches, one slot per DP rank, then every layer's ids.
  const std::int64_t* blocks = plan.my_block();
  if (ctx_.comms.etp_dp != nullptr) {
    const std::size_t bytes = plan.block_bytes();
    ctx_.comms.etp_dp->all_gather(
        {reinterpret_cast<const std::uint8_t*>(plan.my_block()), bytes},
        {reinterpret_cast<std::uint8_t*>(plan.group_blocks()), bytes * static_cast<std::size_t>(slots)});
    blocks = plan.group_blocks();
    step.bytes_sent += gather_bytes(slots, bytes * static_cast<std::size_t>(slots));
  }
  marks.mark(StepPhase::gather);
  plan.hash(blocks, slots);
  marks.mark(StepPhase::hash);

  // 2. The rows I own of every id; zeros for the rest.
  const int tp = ctx_.topology.tp;
  const std::int64_t padded = sequence_parallel() ? ceil_div(slot_tokens, tp) * tp : slot_tokens * slots;
  const std::size_t layer_bytes = static_cast<std::size_t>(padded) * row_bytes;
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d) queries[d] = {plan.ids(static_cast<int>(d)), plan.ids_per_layer()};
  auto* partial = partial_.at(ctx_.workspace, out_slot);
  fetch_and_decode(ctx_, queries, partial, layer_bytes, marks);

  // 3. Combine over the ETP group: every layer in one all-reduce, or each layer
  // reduce-scattered into the ranks' shares (then gathered over TP where my DP rank's TP
  // ranks each need the whole slot).
  const Element element = owned_element(ctx_.dtype);
  const std::size_t element_size = element_bytes(element);
  auto* received = received_.at(ctx_.workspace, out_slot);
  auto* gathered = gathered_.at(ctx_.workspace, out_slot);
  const std::size_t share_bytes = static_cast<std::size_t>(ceil_div(slot_tokens, tp)) * row_bytes;
  const bool gathers = scatters() && !sequence_parallel() && tp > 1;
  if (scatters()) {
    Communicator& group = sequence_parallel() ? *ctx_.comms.tp : *ctx_.comms.etp;
    for (std::size_t d = 0; d < layers; ++d) {
      group.reduce_scatter(partial + d * layer_bytes, received + d * share_bytes, share_bytes / element_size, element,
                           ReduceOp::owned);
      step.bytes_sent += gather_bytes(group.size(), share_bytes * static_cast<std::size_t>(group.size()));
      if (gathers) {
        ctx_.comms.tp->all_gather(
            {received + d * share_bytes, share_bytes},
            {gathered + d * share_bytes * static_cast<std::size_t>(tp), share_bytes * static_cast<std::size_t>(tp)});
        step.bytes_sent += gather_bytes(tp, share_bytes * static_cast<std::size_t>(tp));
      }
    }
  } else if (ctx_.comms.etp != nullptr) {
    ctx_.comms.etp->all_reduce(partial, layers * layer_bytes / element_size, element, ReduceOp::owned);
    step.bytes_sent += all_reduce_bytes(ctx_.comms.etp->size(), layers * layer_bytes);
  }
  marks.mark(StepPhase::combine);

  views.resize(layers);
  const RowRange slice =
      sequence_parallel() ? sequence_slice(tokens, tp, ctx_.topology.tp_rank()) : RowRange{0, tokens};
  const std::size_t slot_offset =
      static_cast<std::size_t>(ctx_.topology.etp_dp_rank()) * static_cast<std::size_t>(slot_tokens) * row_bytes;
  for (std::size_t d = 0; d < layers; ++d) {
    const std::uint8_t* data = gathers      ? gathered + d * share_bytes * static_cast<std::size_t>(tp)
                               : scatters() ? received + d * share_bytes
                                            : partial + d * layer_bytes + (slots > 1 ? slot_offset : 0);
    views[d] = {data, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  }
  traffic_ += step;
}

LocalExchange::LocalExchange(const ExchangeContext& context) : ctx_(context) {
  out_.add(ctx_.workspace,
           layers_of(ctx_) * static_cast<std::size_t>(ctx_.plan.shape().max_slot_tokens) * token_bytes(ctx_),
           ctx_.output_slots);
}

std::int64_t LocalExchange::max_query_ids() const {
  return ctx_.plan.shape().max_slot_tokens * ctx_.plan.shape().heads;
}

void LocalExchange::run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) {
  StepPlan& plan = ctx_.plan;
  const std::size_t layers = layers_of(ctx_);
  const int heads = plan.shape().heads;
  plan.hash(plan.my_block(), 1);
  marks.mark(StepPhase::hash);
  const Topology& t = ctx_.topology;
  const RowRange slice = t.sequence_parallel() ? sequence_slice(tokens, t.tp, t.tp_rank()) : RowRange{0, tokens};
  std::vector<RowQuery> queries(layers);
  for (std::size_t d = 0; d < layers; ++d)
    queries[d] = {plan.ids(static_cast<int>(d)) + slice.begin * heads, slice.size() * heads};
  const std::size_t layer_bytes = static_cast<std::size_t>(plan.slot_tokens()) * token_bytes(ctx_);
  auto* out = out_.at(ctx_.workspace, out_slot);
  fetch_and_decode(ctx_, queries, out, layer_bytes, marks);
  views.resize(layers);
  for (std::size_t d = 0; d < layers; ++d)
    views[d] = {out + d * layer_bytes, slice.begin, slice.size(), ctx_.width, ctx_.dtype};
  traffic_ += {1, tokens, 0, slice.size() * heads * static_cast<std::int64_t>(layers), 0, 0};
}

}  // namespace pleshard

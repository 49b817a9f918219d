#include "engine/step_graphs.hpp"

#include <string>

#include "engine/step_marks.hpp"

namespace pleshard {

// One captured step: its views (fixed addresses; rows set per replay) and what each replay
// moves.
struct StepGraphs::Graph {
  std::unique_ptr<StepSpace::Recording> graph;
  std::vector<EmbeddingView> views;
  std::vector<std::pair<Communicator*, std::vector<std::pair<std::string, double>>>> collectives;
  ExchangeTraffic traffic;
};

StepGraphs::StepGraphs(StepSpace& space, StepPlan& plan, Exchange& exchange, const ExchangeGroups& groups,
                       std::int64_t ids_per_token)
    : space_(space), plan_(plan), exchange_(exchange), groups_(groups), ids_per_token_(ids_per_token) {}

StepGraphs::~StepGraphs() = default;

std::vector<EmbeddingView> StepGraphs::launch(std::int64_t bucket, int out_slot, std::int64_t tokens) {
  Graph& g = graph_for(bucket, out_slot, tokens);
  if (g.graph->pulls()) {
    g.graph->launch(plan_.packed(), plan_.packed_layout());
  } else {
    g.graph->launch();
  }
  for (auto& [comm, calls] : g.collectives)
    for (const auto& [name, bytes] : calls) comm->count(name, bytes);
  ExchangeTraffic replay = g.traffic;
  replay.tokens = tokens;
  replay.ids = tokens * ids_per_token_;
  exchange_.add_traffic(replay);
  ++replays_;
  std::vector<EmbeddingView> views = g.views;
  for (auto& view : views) view.rows = tokens;
  return views;
}

StepGraphs::Graph& StepGraphs::graph_for(std::int64_t bucket, int out_slot, std::int64_t tokens) {
  if (const auto any = graphs_.find({bucket, out_slot, nullptr}); any != graphs_.end()) return *any->second;
  if (const auto mine = graphs_.find({bucket, out_slot, plan_.packed()}); mine != graphs_.end()) return *mine->second;
  auto g = std::make_unique<Graph>();
  const void* reads = nullptr;
  // Buffers are pre-sized, so the capture records the step at the addresses every replay
  // uses; it runs nothing (the replay that follows does). Every rank of the ETP group
  // reaches the same bucket at the same step, so their collectives are captured together.
  // A launch being captured never carries the batch in its parameters: every replay would
  // decode the captured step's.
  StepMarks unmarked(space_);
  unmarked.begin(false);
  const ExchangeTraffic before = exchange_.host_counted();
  g->graph = space_.record([&] { exchange_.run(tokens, out_slot, unmarked, g->views); });
  if (plan_.handed_out_in_pinned() && !g->graph->pulls()) reads = plan_.packed();
  g->traffic = exchange_.host_counted() - before;  // counted by each replay, not by the capture
  exchange_.restore_traffic(before);
  for (Communicator* c : groups_.on_space()) g->collectives.emplace_back(c, c->take_captured());
  auto& slot = graphs_[{bucket, out_slot, reads}];
  slot = std::move(g);
  return *slot;
}

}  // namespace pleshard

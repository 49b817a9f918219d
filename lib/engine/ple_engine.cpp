#include "engine/ple_engine.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/watched_wait.hpp"
#include "engine/engine_session.hpp"
#include "engine/step_runner.hpp"

namespace pleshard {

PleEngine::PleEngine(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                     const EngineOptions& options)
    : session_(std::make_unique<EngineSession>(comms, config, checkpoint, options)),
      runner_(std::make_unique<StepRunner>(*session_)) {
  runner_->use_cuda_graphs(options.cuda_graphs);
  // From here on the job steps: every host wait for peers is watched as the GPU's are (a
  // command sets the limit for its whole life; Python, which has no command, for the engine's).
  stall_limit_ = std::make_unique<StallLimitScope>(options.collective_timeout_s);
}

PleEngine::~PleEngine() = default;

namespace {

// SystemError where a started step has not been finished: the engine's thread is stepping.
void require_finished(const StepRunner& runner, const char* what) {
  if (runner.started()) throw SystemError(std::string(what) + ": a step is started; finish() it first");
}

}  // namespace

StepOutput PleEngine::forward(const TokenBatch& batch, std::span<const std::int64_t> group_tokens,
                              const NextStep& next) {
  require_finished(*runner_, "forward");
  return runner_->forward(batch, group_tokens, next);
}
void PleEngine::start(const TokenBatch& batch, std::span<const std::int64_t> group_tokens) {
  runner_->start(batch, group_tokens);
}
EmbeddingView PleEngine::wait_table(int table, void* stream) { return runner_->wait_table(table, stream); }
StepOutput PleEngine::finish() { return runner_->finish(); }
void PleEngine::wait() {
  require_finished(*runner_, "wait");
  runner_->wait();
}
void PleEngine::wait_until(const SpaceEvent& mark) {
  require_finished(*runner_, "wait_until");
  runner_->wait_until(mark);
}
void PleEngine::wait_for(void* event) {
  require_finished(*runner_, "wait_for");
  runner_->wait_for(event);
}
void PleEngine::share_with(const StepOutput& out, void* stream) {
  require_finished(*runner_, "share_with");
  runner_->share_with(out, stream);
}
void PleEngine::use_cuda_graphs(bool on) {
  require_finished(*runner_, "use_cuda_graphs");
  runner_->use_cuda_graphs(on);
}

const EngineStats& PleEngine::stats() const { return runner_->stats(); }
const Topology& PleEngine::topology() const { return session_->topology(); }
OutDtype PleEngine::dtype() const { return session_->options().dtype; }
const Placement& PleEngine::placement() const { return session_->placement(); }
const PlacementReport& PleEngine::placement_report() const { return session_->placement_report(); }
const char* PleEngine::exchange() const { return runner_->exchange().name(); }
ExchangeTraffic PleEngine::traffic() const { return runner_->exchange().traffic(); }
const char* PleEngine::backend() const { return session_->backend(); }
const std::string& PleEngine::backend_note() const { return session_->backend_note(); }
const RankThreads& PleEngine::threads() const { return session_->threads(); }
int PleEngine::num_layers() const { return static_cast<int>(session_->specs().size()); }
StepSpace& PleEngine::space() const { return *session_->space(); }
int PleEngine::output_slots() const { return session_->options().output_slots; }
std::shared_ptr<const void> PleEngine::output_memory() const { return runner_->output_memory(); }
int PleEngine::gpu() const { return session_->gpu(); }

std::vector<std::pair<std::string, const Communicator*>> PleEngine::communicators() const {
  return session_->groups().named();
}

std::size_t PleEngine::token_bytes() const {
  const auto& spec = session_->specs().front();
  return static_cast<std::size_t>(spec.total_heads()) * static_cast<std::size_t>(spec.head_dim) *
         kernels::out_bytes(session_->options().dtype);
}

RowStore::HostReadCounts PleEngine::host_reads() const { return session_->store().host_reads(); }

std::vector<CacheReport> PleEngine::cache() const {
  const std::vector<CachedStore*>& caches = session_->caches();
  std::vector<CacheReport> out;
  if (std::all_of(caches.begin(), caches.end(), [](const CachedStore* c) { return c == nullptr; })) return out;
  for (std::size_t d = 0; d < caches.size(); ++d) {
    const CachedStore* cache = caches[d];
    if (cache == nullptr) {
      out.emplace_back();  // a table on a tier without a cache
      continue;
    }
    const int layer = static_cast<int>(d);
    const CacheCounts counts = cache->counts(layer);
    out.push_back({cache->static_rows(layer), cache->dynamic_rows(layer), counts.hits, counts.misses, counts.repeats});
  }
  return out;
}

}  // namespace pleshard

#include "engine/step_marks.hpp"

#include "core/enum_names.hpp"
#include "core/error.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<StepPhase, k_step_phases> k_phases{{{StepPhase::load, "load"},
                                                        {StepPhase::gather, "gather"},
                                                        {StepPhase::hash, "hash"},
                                                        {StepPhase::fetch, "fetch"},
                                                        {StepPhase::decode, "decode"},
                                                        {StepPhase::combine, "combine"}}};

}  // namespace

const char* to_string(StepPhase phase) { return name_of(k_phases, phase); }

StepMarks::StepMarks(const StepSpace& space) : begin_(space), end_(space) {
  for (auto& e : phases_) e = std::make_unique<SpaceEvent>(space);
}

void StepMarks::begin(bool phases) {
  phased_ = phases;
  marked_ = 0;
  begin_.record();
}

void StepMarks::restart() {
  marked_ = 0;
  begin_.record();
}

void StepMarks::mark(StepPhase phase, bool ran) {
  if (!phased_ || !ran) return;
  const auto p = static_cast<std::size_t>(phase);
  if (marked_ == order_.size()) throw SystemError("StepMarks: more marks than phases in one step");
  phases_[p]->record();
  order_[marked_++] = phase;
}

void StepMarks::end() {
  end_.record();
  pending_ = true;
}

std::optional<double> StepMarks::settle(PhaseTimes& times) {
  if (!pending_) return std::nullopt;
  pending_ = false;
  const double seconds = end_.seconds_since(begin_);
  times.steps += seconds;
  if (!phased_) {
    times.graph += seconds;
    return seconds;
  }
  // Each phase runs from the previous mark (the step's start for the first), in the order
  // the exchange marked them.
  const SpaceEvent* previous = &begin_;
  for (std::size_t k = 0; k < marked_; ++k) {
    const auto p = static_cast<std::size_t>(order_[k]);
    times.phase[p] += phases_[p]->seconds_since(*previous);
    previous = phases_[p].get();
  }
  return seconds;
}

}  // namespace pleshard

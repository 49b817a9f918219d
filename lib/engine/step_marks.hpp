#pragma once
// Where a step's time goes: a mark in the step space's stream after each phase (events on a
// GPU, the clock on the host), read once the step is done. Marks are left out of CUDA graph
// captures, whose replays are timed whole.

#include <array>
#include <memory>
#include <optional>

#include "exec/space_event.hpp"

namespace pleshard {

enum class StepPhase { load, gather, hash, fetch, decode, combine };
inline constexpr int k_step_phases = 6;

// Seconds per phase summed over steps, as the space's stream saw them.
struct PhaseTimes {
  std::array<double, k_step_phases> phase{};
  double steps = 0;  // whole steps, from the first mark to the last
  double graph = 0;  // CUDA graph replays (included in steps)

  [[nodiscard]] double operator[](StepPhase p) const { return phase[static_cast<std::size_t>(p)]; }
};

[[nodiscard]] const char* to_string(StepPhase phase);

class StepMarks {
 public:
  explicit StepMarks(const StepSpace& space);

  // At the start of a step; `phases`: whether the phases are marked (not while capturing).
  void begin(bool phases);
  // At the start of the forward() of a step begun inside the step before (NextStep): the
  // step is timed from here, as every other step is from its forward(); the phases marked at
  // its begin are dropped, their time being in the step before's (its decode phase).
  void restart();
  // After each phase, at most once per phase, in the order the phases ran. A phase that
  // enqueued nothing (`ran` false: no collective for a group of one rank, ids hashed by the
  // decode, rows read in place) is left unmarked, an event fewer on the stream of a short
  // step; the host's time between the marks goes to the next phase marked.
  void mark(StepPhase phase, bool ran = true);
  // At the end of a step.
  void end();
  [[nodiscard]] const SpaceEvent& done() const { return end_; }
  // Once done() is: the step's seconds, its phases added to `times` (the whole step only
  // for an unmarked one, counted as a graph replay); nothing for a step settled before or
  // not ended (a step begun ahead, inside the one before: its marks were that step's).
  std::optional<double> settle(PhaseTimes& times);

 private:
  SpaceEvent begin_;
  SpaceEvent end_;
  std::array<std::unique_ptr<SpaceEvent>, k_step_phases> phases_;
  std::array<StepPhase, k_step_phases> order_{};  // the phases marked this step, in order
  std::size_t marked_ = 0;
  bool phased_ = false;
  bool pending_ = false;  // ended, not settled
};

}  // namespace pleshard

#pragma once
// A mark in a step space's stream (a CUDA event on a GPU; the wall clock on the host, whose
// work is done when it returns): whether the work before it is done, and the time between
// two marks. The engine's step readiness, its phase timings and the collectives' timings
// are all such marks.

#include "exec/step_space.hpp"

namespace pleshard {

class SpaceEvent {
 public:
  explicit SpaceEvent(const StepSpace& space);
  ~SpaceEvent();
  SpaceEvent(const SpaceEvent&) = delete;
  SpaceEvent& operator=(const SpaceEvent&) = delete;

  // Marks the space's stream at this point (again: moves the mark).
  void record();
  // Whether the work enqueued before the mark is done (a mark never recorded is done).
  [[nodiscard]] bool done() const;
  // Seconds from `earlier`'s mark to this one; both recorded and done.
  [[nodiscard]] double seconds_since(const SpaceEvent& earlier) const;
  // The cudaEvent_t on a GPU (for another stream to wait on), null on the host.
  [[nodiscard]] void* native() const { return event_; }

 private:
  void* stream_;
  void* event_ = nullptr;
  double host_seconds_ = 0;  // the host's mark
};

}  // namespace pleshard

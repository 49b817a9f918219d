#pragma once
// What an exchange keeps of the steps it has begun and not finished (Exchange::begins_ahead):
// at most two, finished in the order they were begun, each with what its second half needs
// of it once the next step's begin() has repacked the step plan.

#include <array>
#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace pleshard {

template <typename Step>
class BegunSteps {
 public:
  // `exchange`: the exchange's name, for the messages.
  explicit BegunSteps(const char* exchange) : exchange_(exchange) {}

  // SystemError where two steps are begun and not finished.
  void push(const Step& step) {
    if (begun_ - finished_ == steps_.size())
      throw SystemError(std::string(exchange_) + " exchange: a third step begun before the first finished");
    steps_[begun_++ % steps_.size()] = step;
  }
  // The oldest step begun; SystemError where none is.
  [[nodiscard]] Step pop() {
    if (finished_ == begun_)
      throw SystemError(std::string(exchange_) + " exchange: a step finished that was not begun");
    return steps_[finished_++ % steps_.size()];
  }
  // Forgets the steps begun (Exchange::abandon).
  void clear() { finished_ = begun_; }

 private:
  const char* exchange_;
  std::array<Step, 2> steps_{};
  std::uint64_t begun_ = 0;
  std::uint64_t finished_ = 0;
};

}  // namespace pleshard

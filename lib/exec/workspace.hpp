#pragma once
// One allocation of a step space carved into regions, sized once for the largest step, so
// that every step (and every CUDA graph captured from one) sees the same addresses and no
// step allocates.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exec/step_space.hpp"

namespace pleshard {

class Workspace {
 public:
  using Region = std::size_t;

  explicit Workspace(StepSpace& space) : space_(space) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace();

  // A region of `count` elements of T (256-byte aligned); only before allocate().
  template <typename T>
  [[nodiscard]] Region add(std::size_t count) {
    return add_bytes(count * sizeof(T));
  }
  // Allocates every region at once.
  void allocate();
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  template <typename T>
  [[nodiscard]] T* at(Region region) const {
    return reinterpret_cast<T*>(base_ + offsets_.at(region));
  }

 private:
  Region add_bytes(std::size_t bytes);

  StepSpace& space_;
  std::vector<std::size_t> offsets_;
  std::size_t bytes_ = 0;
  std::uint8_t* base_ = nullptr;
};

}  // namespace pleshard

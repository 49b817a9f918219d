#include "exec/workspace.hpp"

#include "core/error.hpp"

namespace pleshard {

Workspace::~Workspace() {
  if (base_ != nullptr) space_.deallocate(base_);
}

Workspace::Region Workspace::add_bytes(std::size_t bytes) {
  if (base_ != nullptr) throw SystemError("Workspace: regions are added before allocate()");
  offsets_.push_back(bytes_);
  bytes_ += (bytes + 255) / 256 * 256;
  return offsets_.size() - 1;
}

void Workspace::allocate() {
  if (base_ != nullptr) throw SystemError("Workspace: allocated twice");
  base_ = static_cast<std::uint8_t*>(space_.allocate(bytes_));
}

}  // namespace pleshard

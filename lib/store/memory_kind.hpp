#pragma once
// The kinds of memory a tier keeps its tables in, each measured and checked on its own
// (store/tier_memory.hpp), and a tier's demand as bytes of each kind.

#include <cstdint>

namespace pleshard {

enum class MemoryKind {
  gpu,   // the rank's GPU, shared by the ranks on it
  host,  // the node's host memory, shared by its ranks
};
inline constexpr MemoryKind k_memory_kinds[] = {MemoryKind::gpu, MemoryKind::host};

// "GPU memory", "host memory".
[[nodiscard]] const char* to_string(MemoryKind kind);
// Whose memory it is, for a message: "the GPU", "host memory".
[[nodiscard]] const char* holder_of(MemoryKind kind);

// Bytes of one kind of memory.
struct MemoryUse {
  MemoryKind kind = MemoryKind::host;
  std::uint64_t bytes = 0;
  friend bool operator==(const MemoryUse&, const MemoryUse&) = default;
};

}  // namespace pleshard

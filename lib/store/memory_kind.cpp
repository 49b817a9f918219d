#include "store/memory_kind.hpp"

#include "core/enum_names.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<MemoryKind, 2> k_kinds{{{MemoryKind::gpu, "GPU memory"}, {MemoryKind::host, "host memory"}}};
constexpr EnumNames<MemoryKind, 2> k_holders{{{MemoryKind::gpu, "the GPU"}, {MemoryKind::host, "host memory"}}};

}  // namespace

const char* to_string(MemoryKind kind) { return name_of(k_kinds, kind); }

const char* holder_of(MemoryKind kind) { return name_of(k_holders, kind); }

}  // namespace pleshard

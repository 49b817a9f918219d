#pragma once
// One table as a storage tier holds it (DESIGN.md §6): look ids up into an output buffer.
// Ids and output live in the tier's step space (host memory for the host tier, GPU memory
// otherwise); rows outside range() give zeros.

#include <cstdint>

#include "format/row_format.hpp"
#include "store/storage_tier.hpp"

namespace pleshard {

struct RowRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
};

class TableTier {
 public:
  virtual ~TableTier() = default;

  [[nodiscard]] virtual StorageTier tier() const = 0;
  [[nodiscard]] virtual const TableLayout& layout() const = 0;
  [[nodiscard]] virtual RowRange range() const = 0;

  // out: num_ids * head_dim values of `dtype`, row i for ids[i]. Ordered on the space's
  // stream: the result is there for whatever the space runs next.
  virtual void lookup(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) = 0;

  // A lookup that may run on after start() returns, beside other work of the space; the
  // ids buffer may be overwritten as soon as start() returns, and `out` is ready for the
  // space's next work after finish(). One lookup in flight per table. Tiers without a
  // background path look up inside start().
  virtual void start(const std::int64_t* ids, std::int64_t num_ids, OutDtype dtype, void* out) {
    lookup(ids, num_ids, dtype, out);
  }
  virtual void finish() {}
};

}  // namespace pleshard

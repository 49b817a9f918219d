#pragma once
// A layer's row plan (kernels/common/row_plan.hpp) made on the host: for the stores and
// strategies whose lookups are on the host (the disk tier, the owner exchange's planning).

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace pleshard::kernels {

struct HostRowPlan {
  std::vector<std::int64_t> distinct;  // ascending, inside the bounds
  std::vector<std::int64_t> keys;      // per lookup: its position in `distinct`, -1 outside the bounds
  std::vector<std::int64_t> owners;    // E + 1: where each owner's distinct ids start, then their count

  [[nodiscard]] std::int64_t count() const { return static_cast<std::int64_t>(distinct.size()); }
  [[nodiscard]] std::int64_t of_owner(std::size_t o) const { return owners[o + 1] - owners[o]; }

  // scratch: (id, lookup) pairs, sorted
  std::vector<std::pair<std::int64_t, std::uint32_t>> order, scratch;
};

// Plans `ids` against the owners' `bounds` (at least two, ascending) into `out`, whose
// buffers are reused from plan to plan. At most 2^32 ids.
void plan_rows(std::span<const std::int64_t> ids, std::span<const std::int64_t> bounds, HostRowPlan& out);

// The plan's distinct ids, owner by owner, as owner-local indexes of `width` bytes
// (kernels/common/row_pack.hpp) into `out`: what the owner exchange sends.
void write_local_ids(const HostRowPlan& plan, std::span<const std::int64_t> bounds, int width, std::uint8_t* out);

// The same in fixed-size messages (kernels/common/row_plan.hpp: slot_of): `slots` entries
// of `width` bytes per owner into `out`, each the owner-local index plus one, 0 where empty;
// every owner's distinct ids fit in `slots`.
void write_local_ids_in_slots(const HostRowPlan& plan, std::span<const std::int64_t> bounds, int width,
                              std::int64_t slots, std::uint8_t* out);
// Per lookup, its distinct id's entry in those messages (-1 outside the bounds): where its
// row comes back.
void keys_in_slots(const HostRowPlan& plan, std::int64_t slots, std::int64_t* out);

}  // namespace pleshard::kernels

#pragma once
// The placement an engine's tables get: as EngineOptions give it, or planned
// (store/auto_placement.hpp) from what every rank has, measured collectively, with the GPU
// memory the tables leave as the row cache's size; said on rank 0 before anything loads.

#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "engine/engine_options.hpp"
#include "model/table_spec.hpp"
#include "profile/row_profile.hpp"
#include "store/auto_placement.hpp"

namespace pleshard {

struct PlacementInputs {
  std::span<const TableLayout> layouts;
  std::span<const RowRange> shards;  // each table's rows on this rank, sharded over ETP
  std::span<const TableSpec> specs;  // each table's lookups per token (heads) and the decoder layer that reads it
  const RowProfile& profile;         // its tables' lookups, where given, say which table is hottest
  bool gpu = false;                  // the engine's space is a GPU
  bool files = true;                 // the checkpoint is in files (not synthetic)
  std::uint64_t workspace = 0;       // an estimate of the step's GPU memory, per rank
  int host_sharers = 1;              // ranks of my node that would share one copy in host memory
};

struct PlacementChoice {
  Placement placement;
  PlacementReport report;
};

// What each table asks of each tier on this rank (its rows in `shards`), how hot it is (the
// profile's lookups where given, else its heads) and when it is read: the automatic plan's input.
[[nodiscard]] std::vector<TableDemand> table_demands(const PlacementInputs& in);

// The placement EngineOptions give (not an automatic one): `placement`, or every table on `tier`.
[[nodiscard]] Placement asked_placement(const EngineOptions& options, int tables);

// Collective over `world` where the placement is automatic.
[[nodiscard]] PlacementChoice choose_placement(MPI_Comm world, const EngineOptions& options, const PlacementInputs& in);

// The automatic placement's choice, a line per table, to stderr: logged by rank 0 once the
// options are known to agree with it (an error about them comes alone).
void log_placement(const PlacementReport& report);

// A generous estimate of one rank's step memory on the GPU (the workspace, its output slots
// and a store's staging), for the automatic placement's budget before those exist.
[[nodiscard]] std::uint64_t step_memory_estimate(const EngineOptions& options, int layers, int heads,
                                                 std::int64_t width, int slots);

}  // namespace pleshard

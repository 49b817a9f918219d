#pragma once
// A step's row sets (PleCheckpoint::read_row_sets: the disk tier) read as plain file reads,
// for the formats whose rows lie at offsets known when the checkpoint opens: safetensors
// tensors, and HDF5 datasets located past the library (ckpt/hdf5_rows.hpp). The format says
// where a run of rows lies (AddRowReads); the reads are shaped here, the same for both: rows
// close together in the file read as one span into a buffer and copied out, the rest each
// straight into place, every read of a round in flight together (io/file_reads.hpp).

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "io/file_reads.hpp"

namespace pleshard {

// Appends the file reads of the runs of table `ple_index`'s rows: codes into `rows`, block
// scales into `scales` (an empty span: none), run k at its `at`.
using AddRowReads = std::function<void(int ple_index, std::span<const RowRun> runs, std::span<std::uint8_t> rows,
                                       std::span<std::uint8_t> scales, std::vector<FileRead>& reads)>;

// Reads every set of `sets` of `checkpoint` (PleCheckpoint::read_row_sets: its rows checked
// against the tables, its outputs large enough) through `add_reads`, through the page cache or
// past it (`cache`).
void read_row_sets_as_file_reads(const PleCheckpoint& checkpoint, std::span<const PleCheckpoint::RowSet> sets,
                                 PageCache cache, const AddRowReads& add_reads);

}  // namespace pleshard

#pragma once
// The pinned tier's rows: host memory page-locked for the GPU's UVA reads band by band as a
// load fills it, so that locking tens of GB of pages overlaps reading them rather than
// preceding it (cudaHostAlloc locks, zeroes and maps every page before the first byte is
// read). The memory is the process's own mapping, or a node's segment shared by the ranks
// that hold the same rows (one copy per node: each rank locks the segment's pages for its own
// GPU context). The rows may start at an offset into their first page, so that they lie at a
// file's alignment and a load reads them past the page cache. Built only with CUDA.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/host_memory.hpp"
#include "core/node_segment.hpp"

namespace pleshard {

class PinnedRows {
 public:
  // `bytes` of rows starting `skew` bytes (mod the page size) into their first page.
  // `what` names them in errors ("pinned tier: table 0").
  PinnedRows(std::size_t bytes, std::size_t skew, std::string what);
  // `bytes` of rows in `segment` from byte `skew`; the segment spans whole pages
  // (mapping_bytes) so that every page the GPU maps lies within it.
  PinnedRows(std::shared_ptr<const NodeSegment> segment, std::size_t bytes, std::size_t skew, std::string what);
  // The whole pages that hold `bytes` of rows starting `skew` bytes (mod the page size) into
  // the first: the mapping either constructor reads the rows from.
  [[nodiscard]] static std::size_t mapping_bytes(std::size_t bytes, std::size_t skew);
  ~PinnedRows();
  PinnedRows(const PinnedRows&) = delete;
  PinnedRows& operator=(const PinnedRows&) = delete;

  // The rows; the GPU may read the bytes locked so far at the same addresses.
  [[nodiscard]] std::uint8_t* data() const { return data_; }

  // Locks the rows' pages up to byte `end` (at least the last end locked): those wholly
  // before it, and all of them once `end` is the rows' size. InputError naming the rows
  // when the memory cannot be locked (ulimit -l, host memory).
  void lock_through(std::size_t end);

  // The rows' bytes, for the measure of the pages behind them.
  [[nodiscard]] std::size_t size() const { return bytes_; }

 private:
  std::string what_;
  HostBytes own_;                               // the mapping where it is this process's own, or
  std::shared_ptr<const NodeSegment> segment_;  // its owner where shared
  std::uint8_t* base_ = nullptr;                // the mapping: whole pages around the rows
  std::size_t mapped_ = 0;
  std::uint8_t* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t locked_ = 0;             // bytes of the mapping locked, from base_
  std::vector<std::uint8_t*> pieces_;  // each cudaHostRegister's start, for unregistering
};

}  // namespace pleshard

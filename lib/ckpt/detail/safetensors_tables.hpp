#pragma once
// Where a safetensors checkpoint keeps a table, as the reader finds it: the tensors of its
// codes and block scales, split into row shards (vLLM's PLE layout) or whole (DeepSeek's
// Engram layout). One file per family layout locates them; the reader reads rows from them
// alike.

#include <map>
#include <string>
#include <vector>

#include "ckpt/ple_checkpoint.hpp"
#include "ckpt/safetensors.hpp"
#include "model/table_spec.hpp"

namespace pleshard::detail {

struct TensorRef {
  const SafetensorsFile* file = nullptr;
  const StTensor* tensor = nullptr;
  [[nodiscard]] std::string where() const { return file->path() + ": tensor \"" + tensor->name + "\""; }
};

using TensorsByName = std::map<std::string, TensorRef>;

struct TableShards {
  std::int64_t shard_rows = 0;
  std::vector<TensorRef> weights;  // by shard index
  std::vector<TensorRef> scales;   // block scales by shard index (block-scaled formats)
};

struct LocatedTable {
  PleTableInfo info;
  TableShards shards;
};

// The dtype of a block-scaled format's scale tensors: its scale code's.
[[nodiscard]] StDtype block_scale_dtype(RowFormat format);

// The safetensors dtype a format's codes are stored as (packed NVFP4: U8).
[[nodiscard]] StDtype weight_dtype(RowFormat format);

// InputError naming the tensor unless its shape is `shape`.
void expect_shape(const TensorRef& ref, const std::vector<std::int64_t>& shape);

// The stem of DeepSeek's released Engram tensors of decoder layer `layer` (0-based):
// `<stem>.weight` holds the codes, `<stem>.scale` the E8M0 block scales.
[[nodiscard]] std::string engram_tensor_stem(int layer);

// The Engram table of `spec` among `tensors`: the one tensor whose name ends in
// `layers.{L}.engram.embed.weight` and its `.scale`, under any prefix, in any file; every
// other tensor is someone else's. InputError naming the file and tensor when a tensor is
// missing, of the wrong dtype or shape, or there are two for one layer.
[[nodiscard]] LocatedTable locate_engram_table(const std::string& checkpoint, const ModelConfig& config,
                                               const TableSpec& spec, const TensorsByName& tensors);

}  // namespace pleshard::detail

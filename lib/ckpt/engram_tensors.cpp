// DeepSeek's released Engram tensors: one weight and one scale tensor per table, whole,
// found by the end of their names among the rest of the model's tensors.

#include <optional>

#include "ckpt/detail/safetensors_tables.hpp"
#include "core/error.hpp"
#include "kernels/common/row_decode.hpp"

namespace pleshard::detail {

std::string engram_tensor_stem(int layer) { return "model.layers." + std::to_string(layer) + ".engram.embed"; }

LocatedTable locate_engram_table(const std::string& checkpoint, const ModelConfig& config, const TableSpec& spec,
                                 const TensorsByName& tensors) {
  // The name's end, from a component boundary: `layers.1.` must not match `layers.11.` or
  // `xlayers.1.`.
  const std::string tail = "layers." + std::to_string(spec.decoder_layer) + ".engram.embed.";
  std::optional<TensorRef> weight;
  std::optional<TensorRef> scale;
  for (const auto& [name, ref] : tensors) {
    const auto at = name.rfind(tail);
    if (at == std::string::npos || (at != 0 && name[at - 1] != '.')) continue;
    const std::string leaf = name.substr(at + tail.size());
    std::optional<TensorRef>* slot = leaf == "weight" ? &weight : leaf == "scale" ? &scale : nullptr;
    if (slot == nullptr) continue;
    if (*slot)
      throw InputError(ref.where() + ": a second Engram " + leaf + " tensor for decoder layer " +
                       std::to_string(spec.decoder_layer) + " (the first: " + (*slot)->where() + ")");
    *slot = ref;
  }

  const std::string layer = checkpoint + ": Engram table " + std::to_string(spec.ple_index) + " (decoder layer " +
                            std::to_string(spec.decoder_layer) + ")";
  if (!weight) throw InputError(layer + ": no tensor ending in " + tail + "weight");

  LocatedTable located;
  PleTableInfo& info = located.info;
  info.ple_index = spec.ple_index;
  info.decoder_layer = spec.decoder_layer;
  info.layout.head_dim = spec.head_dim;
  info.layout.rows = spec.padded_rows;
  switch (weight->tensor->dtype) {
    case StDtype::F8_E4M3:
      info.layout.format = RowFormat::fp8_e8m0;
      break;
    case StDtype::BF16:
      info.layout.format = RowFormat::bf16;
      break;
    case StDtype::F16:
      info.layout.format = RowFormat::f16;
      break;
    case StDtype::F32:
      info.layout.format = RowFormat::f32;
      break;
    default:
      throw InputError(weight->where() + ": dtype " + to_string(weight->tensor->dtype) +
                       ", expected F8_E4M3 codes (with E8M0 scales) or BF16 rows");
  }
  if (!format_matches_config(info.layout.format, config.quantization))
    throw InputError(weight->where() + ": dtype " + to_string(weight->tensor->dtype) + " does not match the config's " +
                     to_string(config.quantization) + " tables");
  expect_shape(*weight, {spec.padded_rows, spec.head_dim});

  const bool block_scaled = info.layout.format == RowFormat::fp8_e8m0;
  if (block_scaled && !scale) throw InputError(weight->where() + ": FP8 codes without their " + tail + "scale tensor");
  if (!block_scaled && scale)
    throw InputError(scale->where() + ": block scales beside " + to_string(info.layout.format) +
                     " rows, which have none");
  if (block_scaled) {
    if (scale->tensor->dtype != StDtype::F8_E8M0)
      throw InputError(scale->where() + ": dtype " + to_string(scale->tensor->dtype) +
                       ", expected F8_E8M0 block scales (packed bytes are never cast)");
    if (!kernels::whole_blocks(info.layout.format, spec.head_dim))
      throw InputError(layer + ": engram_head_dim " + std::to_string(spec.head_dim) +
                       " is not a multiple of the scale blocks of " +
                       std::to_string(kernels::block_scaling(info.layout.format).block) + " values");
    expect_shape(*scale, {spec.padded_rows,
                          static_cast<std::int64_t>(kernels::scale_row_bytes(info.layout.format, spec.head_dim))});
  }

  located.shards.shard_rows = spec.padded_rows;
  located.shards.weights = {*weight};
  if (block_scaled) located.shards.scales = {*scale};
  return located;
}

}  // namespace pleshard::detail

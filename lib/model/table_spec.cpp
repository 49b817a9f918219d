#include "model/table_spec.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"
#include "model/model_family.hpp"

namespace pleshard {

std::vector<std::int64_t> head_offsets_of(const std::vector<std::int64_t>& sizes, const std::string& what) {
  std::vector<std::int64_t> offsets;
  std::int64_t offset = 0;
  for (const std::int64_t size : sizes) {
    offsets.push_back(offset);
    if (offset > std::numeric_limits<std::int64_t>::max() - size)
      throw InputError(what + " makes a table larger than 2^63 rows");
    offset += size;
  }
  return offsets;
}

std::vector<TableSpec> derive_table_specs(const ModelConfig& config) { return family_of(config).tables(config); }

TableSpec derive_table_spec(const ModelConfig& config, int ple_index) {
  if (ple_index < 0 || ple_index >= config.num_ple_layers())
    throw InputError(config.source + ": PLE index " + std::to_string(ple_index) + " is out of range; the config has " +
                     std::to_string(config.num_ple_layers()) + " PLE layers (0.." +
                     std::to_string(config.num_ple_layers() - 1) + ")");
  return derive_table_specs(config).at(static_cast<std::size_t>(ple_index));
}

kernels::NgramHashParams make_hash_params(const TableSpec& spec) {
  if (!spec.unhashable.empty()) throw InputError(spec.unhashable);
  kernels::NgramHashParams params;
  params.ngram_size = spec.ngram_size;
  params.heads_per_ngram = spec.heads_per_ngram;
  params.fill = spec.fill;
  params.token_map = spec.token_map != nullptr ? spec.token_map->ids().data() : nullptr;
  for (std::size_t i = 0; i < spec.multipliers.size(); ++i) params.multipliers[i] = spec.multipliers[i];
  for (std::size_t h = 0; h < spec.head_sizes.size(); ++h) {
    params.head_sizes[h] = spec.head_sizes[h];
    params.head_offsets[h] = spec.head_offsets[h];
    params.head_reciprocals[h] = kernels::modulus_reciprocal(static_cast<std::uint64_t>(spec.head_sizes[h]));
  }
  return params;
}

}  // namespace pleshard

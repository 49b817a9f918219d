// The description an embedding output carries (docs/output.md): each /ple_{d}'s decoder_layer
// is the config's own id of the table's layer, in the family's numbering (Qwen4Exp's
// ple_layer_ids count from 1, Engram's engram_layer_ids from 0), and decoder_layer_base says
// which, so that decoder_layer - decoder_layer_base is the 0-based layer for either family.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "ckpt/checkpoint_fixtures.hpp"
#include "job/output_description.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

std::int64_t number(const std::vector<OutputAttribute>& attributes, const std::string& name) {
  for (const OutputAttribute& a : attributes)
    if (a.name == name) return std::get<std::int64_t>(a.value);
  ADD_FAILURE() << "no attribute " << name;
  return -1;
}

TEST(OutputDescription, DecoderLayerIsTheConfigsIdWithItsBase) {
  // small_config's ple_layer_ids are [1, 3] (1-based: layers.0 and layers.2 of vLLM's
  // names); engram_config's engram_layer_ids are [1, 3] (0-based: layers.1 and layers.3).
  const struct {
    ModelConfig config;
    std::int64_t base;
  } families[] = {{small_config(), 1}, {engram_config(), 0}};
  for (const auto& [config, base] : families) {
    const OutputDescription d = describe_output(config, OutDtype::bf16, {});
    ASSERT_EQ(d.layers.size(), 2u);
    EXPECT_EQ(number(d.layers[0], "decoder_layer"), 1) << to_string(config.family);
    EXPECT_EQ(number(d.layers[1], "decoder_layer"), 3) << to_string(config.family);
    for (const auto& layer : d.layers) EXPECT_EQ(number(layer, "decoder_layer_base"), base) << to_string(config.family);
  }
}

}  // namespace

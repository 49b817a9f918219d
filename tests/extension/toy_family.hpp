#pragma once
// A model family defined outside the library, as a user of it would add one: "toy_ple",
// Qwen4Exp under another layers key (`toy_layer_ids`), so that it gives the embeddings
// Qwen4Exp gives for the same config, bit for bit. Linking toy_family.cpp in registers it
// (docs/architecture.md, "Adding a model family").

#include "model/model_family.hpp"
#include "model/qwen4exp.hpp"

namespace toy_family {

class ToyFamily final : public pleshard::Qwen4ExpFamily {
 public:
  [[nodiscard]] const char* name() const override { return "toy_ple"; }
  [[nodiscard]] const char* title() const override { return "Toy PLE"; }
  [[nodiscard]] const char* layers_key() const override { return "toy_layer_ids"; }
};

// The id the registry gave the family.
[[nodiscard]] pleshard::ModelFamily family();

}  // namespace toy_family

#pragma once
// A model family: the one place that knows a family's config keys and derives its tables
// from them (hashing, rows, checkpoint layout, row codec). Callers ask the family of a
// config (family_of) rather than compare its name. The built-in families are listed once
// (model_families.cpp); a family built outside the library registers itself
// (register_model_family), and a config is read by the family whose layers key it has.

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/detail/config_reader.hpp"
#include "model/model_config.hpp"
#include "model/table_spec.hpp"

namespace pleshard {

class Family {
 public:
  virtual ~Family() = default;

  // The family's name (a report's and an output's `family`) and how a message names it.
  [[nodiscard]] virtual const char* name() const = 0;
  [[nodiscard]] virtual const char* title() const = 0;
  // The key whose presence selects the family.
  [[nodiscard]] virtual const char* layers_key() const = 0;
  // The id that key gives a model's first decoder layer: 1 where its ids count from 1, 0
  // where they count from 0 (the config's own numbering, kept wherever a layer id is shown).
  [[nodiscard]] virtual int first_layer_id() const = 0;
  // Reads and checks the family's keys into `config`: its shape (N, K, head_dim, tables)
  // and its own keys. `config.vocab_size` is read before.
  virtual void read(const detail::ConfigReader& reader, ModelConfig& config) const = 0;
  // The family's keys, canonical, into `json` (beside vocab_size).
  virtual void write(const ModelConfig& config, nlohmann::json& json) const = 0;
  // Every table's spec, in table order.
  [[nodiscard]] virtual std::vector<TableSpec> tables(const ModelConfig& config) const = 0;
  // Whether hashing goes through a token map (model/token_map.hpp).
  [[nodiscard]] virtual bool hashes_through_token_map() const = 0;
  // Whether a batch may give a request fewer than N-1 context tokens (it began that many
  // tokens before the chunk); otherwise a context is N-1 tokens or none (a fresh request).
  [[nodiscard]] virtual bool short_contexts() const = 0;
};

// Registers a family: InputError where its name or layers key is taken. At static
// initialization, or before the first config is read.
ModelFamily register_model_family(std::unique_ptr<const Family> family);
// Every registered family, the built-ins first.
[[nodiscard]] std::vector<ModelFamily> registered_families();
// Every registered family's layers key and title, "ple_layer_ids (Qwen4Exp)", the
// built-ins first: what names a config's family (in messages and --help).
[[nodiscard]] std::vector<std::string> family_keys();
// What a config's help says of its family: "; of the family whose layers key it has: ..."
[[nodiscard]] std::string config_families();
// SystemError for an id not registered.
[[nodiscard]] const Family& family_of(ModelFamily kind);
[[nodiscard]] inline const Family& family_of(const ModelConfig& config) { return family_of(config.family); }

}  // namespace pleshard

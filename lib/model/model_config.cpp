#include "model/model_config.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/option_names.hpp"
#include "io/file_checks.hpp"
#include "model/model_family.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<TableQuantization, 4> k_quantizations{{{TableQuantization::none, "none"},
                                                           {TableQuantization::fp8, "float8_e4m3fn"},
                                                           {TableQuantization::nvfp4, "nvfp4"},
                                                           {TableQuantization::fp8_e8m0, "fp8_e8m0"}}};

using nlohmann::json;

}  // namespace

const char* to_string(TableQuantization q) { return name_of(k_quantizations, q); }
TableQuantization parse_table_quantization(std::string_view name) {
  return parse_value(k_quantizations, name, "quantization");
}
const char* to_string(ModelFamily family) { return family_of(family).name(); }

ModelConfig parse_model_config(const json& document, const std::string& source) {
  const detail::ConfigReader r(document, source);
  ModelConfig c;
  c.source = source;

  // The family is the one whose layers key the config has.
  const Family* family = nullptr;
  const std::vector<ModelFamily> kinds = registered_families();
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const Family& f = family_of(kinds[i]);
    if (r.find(f.layers_key()) == nullptr) continue;
    if (family != nullptr)
      throw InputError(source + ": has both " + family->layers_key() + " and " + f.layers_key() +
                       "; a config describes one model family");
    family = &f;
    c.family = kinds[i];
  }
  if (family == nullptr) throw InputError(source + ": required key " + or_list(family_keys()) + " is missing");

  c.vocab_size = r.required_integer("vocab_size");
  if (c.vocab_size <= 0) r.fail("vocab_size", json(c.vocab_size), "must be positive");
  if (const auto layers = r.optional_integer("num_hidden_layers"))
    c.num_hidden_layers = r.bounded_int("num_hidden_layers", *layers, 1, 1 << 20);
  family->read(r, c);
  return c;
}

void use_token_map(ModelConfig& config, const std::filesystem::path& path) {
  if (!family_of(config).hashes_through_token_map())
    throw InputError(path.string() + ": " + option_name(Option::token_map) + ": the " +
                     std::string(to_string(config.family)) +
                     " family hashes tokens as they are; it takes no token map");
  config.token_map =
      std::make_shared<const TokenMap>(TokenMap::load(path, config.vocab_size, config.engram.compressed_vocab));
}

void find_token_map(ModelConfig& config, const std::filesystem::path& dir) {
  if (config.token_map != nullptr || !family_of(config).hashes_through_token_map()) return;
  const std::filesystem::path beside = dir / k_token_map_file;
  if (std::filesystem::exists(beside)) use_token_map(config, beside);
}

std::vector<std::filesystem::path> model_files(const ModelConfig& config) {
  std::vector<std::filesystem::path> files;
  if (!config.file.empty()) files.push_back(config.file);
  if (config.token_map != nullptr && !config.token_map->file().empty()) files.push_back(config.token_map->file());
  return files;
}

std::string token_map_sha256(const ModelConfig& config) {
  return config.token_map != nullptr ? config.token_map->sha256() : std::string();
}

std::string describe_token_map(const ModelConfig& config) {
  if (!family_of(config).hashes_through_token_map()) return {};
  if (config.token_map == nullptr) return "none (tokens hash as themselves)";
  return config.token_map->source() + " (sha256 " + config.token_map->sha256() + ")";
}

ModelConfig read_model_config(const std::filesystem::path& path) {
  require_regular_file(path, "config");
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open config file");
  json document;
  try {
    document = json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": not valid JSON: " + e.what());
  }
  ModelConfig config = parse_model_config(document, path.string());
  config.file = path;
  return config;
}

ModelConfig load_model_config(const std::filesystem::path& path, const std::filesystem::path& token_map) {
  ModelConfig config = read_model_config(path);
  if (!token_map.empty()) use_token_map(config, token_map);
  find_token_map(config, path.parent_path());
  return config;
}

json to_json(const ModelConfig& c) {
  json j = {{"vocab_size", c.vocab_size}};
  if (c.num_hidden_layers > 0) j["num_hidden_layers"] = c.num_hidden_layers;
  family_of(c).write(c, j);
  return j;
}

}  // namespace pleshard

#include "core/option_names.hpp"

#include <atomic>

#include "core/error.hpp"

namespace pleshard {

namespace {

constexpr EnumName<Option> k_command_line[] = {
    {Option::checkpoint, "--checkpoint"},
    {Option::config, "--config"},
    {Option::token_map, "--token-map"},
    {Option::tp, "--tp"},
    {Option::etp, "--etp"},
    {Option::storage, "--storage"},
    {Option::placement, "--placement"},
    {Option::gpu_memory_limit, "--gpu-memory-limit"},
    {Option::exchange, "--exchange"},
    {Option::out_dtype, "--out-dtype"},
    {Option::cuda_graph, "--cuda-graph"},
    {Option::step_tokens, "--step-tokens"},
    {Option::decode_tokens, "--decode-tokens"},
    {Option::part_tokens, "--part-tokens"},
    {Option::collective_timeout, "--collective-timeout"},
    {Option::cache_rows, "--cache-rows"},
    {Option::cache_gb, "--cache-gb"},
    {Option::cache_profile, "--cache-profile"},
    {Option::host_reads, "--host-reads"},
    {Option::owner_fixed_below, "--owner-fixed-below"},
    {Option::owner_gpu_plan_from, "--owner-gpu-plan-from"},
    {Option::no_shared_tables, "--no-shared-tables"},
    {Option::threads, "--threads"},
    {Option::cache_static, "--cache-static"},
    {Option::disk_reads, "--disk-reads"},
    {Option::layer_prefix, "--layer-prefix"},
};

const OptionSpelling k_command_line_spelling{k_command_line, " ", false};

std::atomic<const OptionSpelling*> g_spelling{&k_command_line_spelling};

const char* find_name(const OptionSpelling& spelling, Option option) {
  for (const EnumName<Option>& entry : spelling.names)
    if (entry.value == option) return entry.name;
  return nullptr;
}

}  // namespace

const OptionSpelling& command_line_spelling() { return k_command_line_spelling; }

void use_option_spelling(const OptionSpelling& spelling) { g_spelling.store(&spelling); }

bool option_offered(Option option) { return find_name(*g_spelling.load(), option) != nullptr; }

std::string option_name(Option option) {
  const char* name = find_name(*g_spelling.load(), option);
  if (name == nullptr) name = find_name(k_command_line_spelling, option);
  return name != nullptr ? name : "?";  // an option of another front end alone, never checked here
}

std::string option_with(Option option, std::string_view text) {
  const OptionSpelling& spelling = option_offered(option) ? *g_spelling.load() : k_command_line_spelling;
  return option_name(option) + std::string(spelling.assign) + std::string(text);
}

std::string option_is(Option option, std::string_view value) {
  const bool quote = option_offered(option) && g_spelling.load()->quote_text;
  return option_with(option, quote ? "\"" + quoted_value(value) + "\"" : quoted_value(value));
}

std::string option_quoted(Option option, std::string_view value) {
  return option_with(option, "\"" + quoted_value(value) + "\"");
}

}  // namespace pleshard

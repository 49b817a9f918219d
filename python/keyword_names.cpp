#include "keyword_names.hpp"

namespace pleshard::python {

namespace {

// Only the options the Engine takes: a hint to set another (--no-shared-tables) is left
// out of its messages.
constexpr EnumName<Option> k_keywords[] = {
    {Option::checkpoint, "checkpoint"},
    {Option::config, "config"},
    {Option::token_map, "token_map"},
    {Option::tp, "tp"},
    {Option::etp, "etp"},
    {Option::storage, "storage"},
    {Option::placement, "placement"},
    {Option::gpu_memory_limit, "gpu_memory_limit"},
    {Option::exchange, "exchange"},
    {Option::out_dtype, "out_dtype"},
    {Option::cuda_graph, "cuda_graph"},
    {Option::step_tokens, "step_tokens"},
    {Option::collective_timeout, "collective_timeout"},
    {Option::cache_rows, "cache_rows"},
    {Option::cache_gb, "cache_gb"},
    {Option::cache_profile, "cache_profile"},
    {Option::host_reads, "host_reads"},
    {Option::owner_fixed_below, "owner_fixed_below"},
    {Option::owner_gpu_plan_from, "owner_gpu_plan_from"},
    {Option::threads, "threads"},
};

const OptionSpelling k_keyword_spelling{k_keywords, "=", true};

}  // namespace

const OptionSpelling& keyword_spelling() { return k_keyword_spelling; }

}  // namespace pleshard::python

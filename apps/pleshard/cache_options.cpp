// Options shared by several commands: the row cache, the disk tier's reads, the owner
// exchange's sizes, the stall limit (run, bench step), the token map (every command that hashes).

#include <string>

#include "cli.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

void add_cache_options(CLI::App& cmd, CacheOptions& cache) {
  auto* rows = cmd.add_option("--cache-rows", cache.rows,
                              "Row cache in GPU memory in front of the pinned or disk tier: slots per rank, shared "
                              "by the layers in proportion to their rows (rows kept as stored); at most the rows the "
                              "tier holds")
                   ->check(finite_in(0, 9e18, "a whole number of rows >= 0"));
  auto* gb = cmd.add_option("--cache-gb", cache.gb, "The row cache's size in GB per rank instead of rows")
                 ->check(finite_in(0, 1e9, "a finite number of GB >= 0"));
  rows->excludes(gb);
  cmd.add_option("--cache-profile", cache.profile,
                 "Row frequencies (pleshard profile) whose hottest rows fill the cache's static part at start")
      ->check(path_given());
  cmd.add_option("--cache-static", cache.static_share,
                 "Share of the cache's slots for the profile's hottest rows (the rest admit rows as they come)")
      ->check(finite_in(0, 1, "a share from 0 to 1"))
      ->capture_default_str();
}

void add_token_map_option(CLI::App& cmd, std::string& path) {
  cmd.add_option("--token-map", path,
                 "Token map of a family that hashes compressed ids (Engram): .npy of vocab_size ints (default: "
                 "engram_token_map.npy beside the config, else in the checkpoint's directory)")
      ->check(path_given());
}

void add_disk_reads_option(CLI::App& cmd, PageCache& reads) {
  cmd.add_option_function<std::string>(
         "--disk-reads", [&reads](const std::string& v) { reads = v == "direct" ? PageCache::bypass : PageCache::use; },
         "The disk tier's reads: cached (through the page cache, which keeps what they read) or direct "
         "(O_DIRECT, past it: host memory left to others)")
      ->check(CLI::IsMember({"cached", "direct"}))
      ->option_text("cached|direct")
      ->default_str("cached");
}

void add_host_reads_option(CLI::App& cmd, HostReads& reads) {
  cmd.add_option_function<std::string>(
         "--host-reads", [&reads](const std::string& v) { reads = parse_host_reads(v); },
         "How the GPU gets pinned rows: uva (each row read by the GPU over PCIe), gather (a step's distinct "
         "rows gathered by the host's threads and copied up at once), both (the host gathers a share of them "
         "while the GPU reads the rest, the share balanced step by step) or auto (both from " +
             std::to_string(k_host_gather_min_ids) + " lookups a table, UVA below and under CUDA graphs)")
      ->check(CLI::IsMember({"auto", "gather", "uva", "both"}))
      ->option_text("auto|gather|uva|both")
      ->default_str("auto");
}

void add_owner_gpu_plan_option(CLI::App& cmd, std::int64_t& ids) {
  cmd.add_option("--owner-gpu-plan-from", ids,
                 "Ids a layer from which the owner exchange hashes and plans a step on the GPU (only each "
                 "owner's count waits for the stream); smaller steps on the host (0: every step on the GPU)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
}

void add_owner_fixed_option(CLI::App& cmd, std::int64_t& ids) {
  cmd.add_option("--owner-fixed-below", ids,
                 "Lookups a layer per rank of a step's slot (the group's largest DP batch x heads) below which the "
                 "owner exchange sends the step in fixed-size messages (every owner as many entries as a rank could "
                 "ask of it, so no count waits for the host; what CUDA graphs capture); 0: never")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{1} << 40))
      ->capture_default_str();
}

void add_collective_timeout_option(CLI::App& cmd, double& seconds) {
  cmd.add_option("--collective-timeout", seconds,
                 "Seconds any wait for other ranks (start-up, the load, each step, the output, the end) or for the GPU "
                 "may make no progress before a stopped or stalled peer ends the job on every rank")
      ->check(finite_in(k_min_collective_timeout_s, k_max_collective_timeout_s, "from 1 to 1e7 seconds"))
      ->capture_default_str();
}

}  // namespace pleshard::app

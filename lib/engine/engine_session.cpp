#include "engine/engine_session.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "ckpt/same_model.hpp"
#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/huge_pages.hpp"
#include "core/log.hpp"
#include "core/mpi_check.hpp"
#include "core/numa_home.hpp"
#include "core/option_names.hpp"
#include "core/same_on_every_rank.hpp"
#include "core/watched_collectives.hpp"
#include "dist/communicator_factory.hpp"
#include "dist/gpu_binding.hpp"
#include "engine/exchange_strategy.hpp"
#include "engine/table_placement.hpp"
#include "kernels/gpu_device.hpp"
#include "profile/row_profile.hpp"
#include "store/row_store_factory.hpp"
#include "store/tier_memory.hpp"

namespace pleshard {

namespace {

// This rank's GPU (chosen collectively, `gpus` telling whether every rank has one to itself)
// where `on_gpu`, else the host.
std::unique_ptr<StepSpace> make_space(const Communicators& comms, bool on_gpu, GpuBinding& gpus) {
  if (on_gpu) {
    gpus = bind_local_gpu(comms.world());
    return make_cuda_space();
  }
  return make_host_space();
}

// The ranks of my node (a machine; PLESHARD_RANKS_PER_NODE's blocks where set) that hold
// the same row ranges as I do — my ETP rank's — where tables in host memory (the host and
// pinned tiers) are shared.
class HostShare {
 public:
  // `peers`: my ETP group's ranks (on my node), who read each other's rows in place and so
  // hold one copy of whole tables between them, whatever `wanted` says.
  HostShare(const Communicators& comms, bool wanted, bool peers) {
    if (peers) {
      comm_ = watched_dup(comms.etp_node(), "the ranks reading each other's rows");
      PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &ranks_));
      PLESHARD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
      return;
    }
    if (!wanted) return;
    const Topology& t = comms.topology();
    int per_node = 0;
    try {
      per_node = ranks_per_node_override();
    } catch (const InputError&) {  // refused where the hierarchical exchange uses it
    }
    const int color = t.etp_rank() + t.etp * (per_node > 0 ? t.rank / per_node : 0);
    comm_ = watched_split(comms.node(), color, t.rank, "the ranks sharing tables in host memory");
    PLESHARD_MPI_CHECK(MPI_Comm_size(comm_, &ranks_));
    PLESHARD_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  }
  ~HostShare() { drop(); }
  // No sharing after all (a placement that keeps no rows in host memory).
  void drop() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    ranks_ = 1;
    rank_ = 0;
  }
  HostShare(const HostShare&) = delete;
  HostShare& operator=(const HostShare&) = delete;

  [[nodiscard]] MPI_Comm comm() const { return ranks_ > 1 ? comm_ : MPI_COMM_NULL; }
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] bool reader() const { return rank_ == 0; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int ranks_ = 1;
  int rank_ = 0;
};

int size_of(MPI_Comm comm) {
  int n = 1;
  MPI_Comm_size(comm, &n);
  return n;
}

int rank_in(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}

// The hierarchical exchange and peer reads need each ETP group as node-major blocks of one
// size: agreed over the world, before any table is loaded.
void check_node_layout(const Communicators& comms, ExchangeStrategy strategy) {
  collective_try(comms.world(), [&] {
    (void)ranks_per_node_override();  // a malformed override is refused here, with its value
    const int per_node = size_of(comms.etp_node());
    const int nodes = size_of(comms.etp_cross());
    const Topology& t = comms.topology();
    if (per_node * nodes != t.etp || t.etp_rank() != rank_in(comms.etp_cross()) * per_node + rank_in(comms.etp_node()))
      throw InputError(option_is(Option::exchange, to_string(strategy)) + ": ETP group " +
                       std::to_string(t.etp_group()) + " is not node-major blocks of one size (" +
                       std::to_string(per_node) + " of its ranks on world rank " + std::to_string(t.rank) +
                       "'s node; nodes are MPI's shared-memory domains, or PLESHARD_RANKS_PER_NODE consecutive ranks)");
  });
}

// Collective over comms.world(): whether every ETP group of several ranks lies on one node
// and reads the same memory where the options put the tables — one GPU between its ranks with
// every table on the device tier, or every table on the host tier — so that its ranks can
// read one copy of the rows in place. `asked`: the tiers the options name (an automatic
// placement chooses tiers after the strategy, so never asks this).
bool groups_read_one_copy(const Communicators& comms, const Placement& asked) {
  const bool device = asked.uniform() && asked.uses(StorageTier::device);
  const bool host = asked.uniform() && asked.uses(StorageTier::host);
  int reads = (device || host) && size_of(comms.etp_node()) == comms.topology().etp ? 1 : 0;
  if (device) {
    const std::array<std::uint64_t, 2> mine = reads == 1 ? kernels::gpu_uuid() : std::array<std::uint64_t, 2>{};
    std::vector<std::array<std::uint64_t, 2>> group(static_cast<std::size_t>(size_of(comms.etp_node())));
    watched_allgather(mine.data(), group.data(), 2, MPI_UINT64_T, comms.etp_node(), "the GPUs of my ETP group's ranks");
    if (std::any_of(group.begin(), group.end(), [&](const auto& gpu) { return gpu != mine; })) reads = 0;
  }
  watched_allreduce(&reads, 1, MPI_INT, MPI_MIN, comms.world(), "whether the ETP groups read one copy");
  return reads == 1;
}

// Options no placement or table can make right: one line each.
void check_engine_options(const EngineOptions& options, int tables) {
  if (options.max_tokens < 1) throw InputError("the engine needs room for at least one token per step");
  if (options.output_slots < 1 || options.output_slots > k_max_output_slots)
    throw InputError("output_slots " + std::to_string(options.output_slots) + ": must be from 1 to " +
                     std::to_string(k_max_output_slots));
  if (!(options.collective_timeout_s >= k_min_collective_timeout_s &&
        options.collective_timeout_s <= k_max_collective_timeout_s))
    throw InputError(option_is(Option::collective_timeout, options.collective_timeout_s) + ": must be from " +
                     std::to_string(static_cast<int>(k_min_collective_timeout_s)) + " to " +
                     std::to_string(static_cast<int>(k_max_collective_timeout_s)) + " seconds");
  if (!options.cache.profile.empty() && !options.cache.enabled() && !options.auto_placement)
    throw InputError(option_is(Option::cache_profile, options.cache.profile.string()) + ": needs a cache (" +
                     option_name(Option::cache_rows) + " or " + option_name(Option::cache_gb) + ")");
  if (!options.placement.empty() && static_cast<int>(options.placement.size()) != tables)
    throw SystemError("the engine's placement names " + std::to_string(options.placement.size()) + " tables of " +
                      std::to_string(tables));
}

// The options that shape what ranks send each other — the step's buffers, the exchange, how
// its messages are sized and where they are planned, the tables' tiers and copies, the row
// cache, the output — the same on every rank (core/same_on_every_rank.hpp).
void require_same_options(MPI_Comm world, const EngineOptions& options) {
  Digest placement;
  for (const StorageTier tier : options.placement) placement.add(static_cast<std::uint64_t>(tier));
  const CacheOptions& cache = options.cache;
  require_same_on_every_rank(
      world,
      {{setting_name("max_tokens", Option::step_tokens), options.max_tokens},
       {setting_name("exchange", Option::exchange), options.exchange.id()},
       {setting_name("cuda_graphs", Option::cuda_graph), options.cuda_graphs ? 1 : 0},
       {setting_name("owner_fixed_below", Option::owner_fixed_below), options.owner_fixed_below},
       {setting_name("owner_gpu_plan_from", Option::owner_gpu_plan_from), options.owner_gpu_plan_from},
       {setting_name("dtype", Option::out_dtype), static_cast<std::int64_t>(options.dtype)},
       {"output_slots", options.output_slots},
       {setting_name("tier", Option::storage), static_cast<std::int64_t>(options.tier)},
       {setting_name("placement", Option::placement), static_cast<std::int64_t>(placement.value()), false},
       {setting_name("auto_placement", Option::placement), options.auto_placement ? 1 : 0},
       {setting_name("share_tables", Option::no_shared_tables), options.share_tables ? 1 : 0},
       {setting_name("cache.rows", Option::cache_rows), cache.rows},
       {setting_name("cache.gb", Option::cache_gb), std::bit_cast<std::int64_t>(cache.gb), false},
       {setting_name("cache.static_share", Option::cache_static), std::bit_cast<std::int64_t>(cache.static_share),
        false},
       {setting_name("cache.profile", Option::cache_profile), cache.profile.empty() ? 0 : 1}},
      "the engine's options");
}

}  // namespace

EngineSession::EngineSession(const Communicators& comms, const ModelConfig& config, const PleCheckpoint& checkpoint,
                             const EngineOptions& options)
    : topology_(comms.topology()), options_(options), world_(comms.world()) {
  const int tables = static_cast<int>(checkpoint.tables().size());
  require_same_options(world_, options);  // first: the checks below then fail on every rank alike
  require_same_model(world_, config, checkpoint);
  check_engine_options(options, tables);
  if (!options.auto_placement) {  // before the space: a GPU is not looked for in vain
    const Placement asked = asked_placement(options, tables);
    for (int d = 0; d < tables; ++d) require_tier_decodes(asked.tier(d), checkpoint.table(d).layout.format);
  }
  // The host's threads, a host gather's too: the rank's, as the launcher bound it.
  threads_ = rank_threads();
  GpuBinding gpus;
  // The step's space: the GPU where a table's tier decodes there (an automatic placement
  // uses the GPU wherever there is one), else the host.
  const bool on_gpu = options.auto_placement ? gpu_available() : asked_placement(options, tables).uses_gpu();
  space_ = make_space(comms, on_gpu, gpus);
  space_->set_stall_timeout(options.collective_timeout_s);
  if (space_->on_device()) gpu_ = kernels::current_gpu();
  const std::vector<RowRange> shards = read_table_specs(config, checkpoint);
  // The profile's tables agree with the checkpoint's, on every rank, before anything is placed or loaded.
  const RowProfile profile = collective_try(comms.world(), [&] {
    return options.cache.profile.empty() ? RowProfile{} : read_row_profile_for(options.cache.profile, checkpoint);
  });
  // The strategy, where `auto` may take one that decides what each rank holds (peer reads):
  // before the tables are placed, from the tiers asked for.
  ExchangeStrategy wanted = options.exchange;
  if (wanted == ExchangeStrategy::automatic && !options.auto_placement) {
    const Placement asked = asked_placement(options, tables);
    if (!asked.capabilities().whole_tables) {
      const ExchangeFacts facts{topology_, options.cuda_graphs, groups_read_one_copy(comms, asked)};
      wanted = choose_exchange(ExchangeStrategy::automatic, facts, false);
    }
  }
  // Ranks that read each other's rows in place: my ETP group's on my node, holding the
  // node's balanced part of every table between them (the whole table on one node).
  const StrategyDescriptor* asked = wanted != ExchangeStrategy::automatic ? &descriptor_of(wanted) : nullptr;
  const bool peers = asked != nullptr && asked->reads_peers;
  if (asked != nullptr && asked->needs_node_layout) check_node_layout(comms, wanted);
  const int peer_nodes = size_of(comms.etp_cross());
  const int peer_node = rank_in(comms.etp_cross());
  // The ranks that would keep one copy per node of rows in host memory (host and pinned
  // tiers): the node holds one copy per group, which the automatic placement counts (under
  // peer reads each rank holds its shard's worth of the group's copy).
  HostShare share(comms, options.share_tables, peers);
  place_tables(checkpoint, shards, profile, peers ? 1 : share.ranks());
  // Whole tables where every rank holds them (the disk tier alone), my node's part where the
  // ranks read each other's rows in place (peer reads: whole tables on one node, which then
  // exchanges nothing), else my ETP rank's rows.
  const TierCapabilities can = placement_.capabilities();
  std::vector<RowRange> ranges = shards;
  local_ = can.whole_tables || (peers && peer_nodes == 1);
  for (std::size_t d = 0; d < ranges.size(); ++d) {
    if (can.whole_tables) {
      ranges[d] = {0, layouts_[d].rows};
    } else if (peers) {
      ranges[d] = balanced_range(layouts_[d].rows, peer_nodes, peer_node);
    }
  }
  strategy_ = choose_exchange(wanted, {topology_, options.cuda_graphs}, can.whole_tables);
  if (topology_.rank == 0 && options.log_start) {
    // The threads once a process (a benchmark makes many engines on the same ones).
    static bool said = false;
    if (!std::exchange(said, true))
      log_info(std::to_string(topology_.world) + (topology_.world == 1 ? " rank" : " ranks") + ", rank 0 on " +
               std::to_string(threads_.count) + (threads_.count == 1 ? " thread" : " threads") + " (" + threads_.how +
               ")");
    log_placement(placement_report_);
  }
  node_ranks_ = size_of(comms.etp_node());
  open_communicators(comms, gpus);
  // One copy per node of the rows in host memory (host and pinned tiers), shared by the ranks
  // that hold the same ranges (counted, and read, by the first of them).
  if (!can.in_host_memory && !peers) share.drop();
  load_tables(checkpoint, ranges, profile, {share.comm(), share.reader(), share.ranks(), peers});
}

std::vector<RowRange> EngineSession::read_table_specs(const ModelConfig& config, const PleCheckpoint& checkpoint) {
  heads_ = config.total_heads();
  context_width_ = config.ngram_size - 1;
  token_map_entries_ = config.token_map != nullptr ? config.token_map->vocab_size() : 0;
  width_ = config.ple_embed_dim;
  std::vector<RowRange> shards;
  for (const auto& derived : derive_table_specs(config)) {
    const PleTableInfo& info = checkpoint.table(derived.ple_index);
    layouts_.push_back(info.layout);
    specs_.push_back(hashing_spec(derived, info, checkpoint.path()));
    params_.push_back(make_hash_params(specs_.back()));
    shards.push_back(balanced_range(info.layout.rows, topology_.etp, topology_.etp_rank()));
  }
  if (specs_.size() > static_cast<std::size_t>(kernels::k_max_step_layers))
    throw InputError(config.source + ": " + std::to_string(specs_.size()) + " PLE layers; a step decodes at most " +
                     std::to_string(kernels::k_max_step_layers));
  return shards;
}

void EngineSession::place_tables(const PleCheckpoint& checkpoint, const std::vector<RowRange>& shards,
                                 const RowProfile& profile, int share_ranks) {
  const std::uint64_t step_memory =
      step_memory_estimate(options_, static_cast<int>(checkpoint.tables().size()), heads_, width_, topology_.edp());
  PlacementChoice placed = collective_try(world_, [&] {
    return choose_placement(
        world_, options_,
        {layouts_, shards, specs_, profile, space_->on_device(),
         checkpoint.kind() != CheckpointKind::synthetic && !options_.cuda_graphs, step_memory, share_ranks});
  });
  placement_ = std::move(placed.placement);
  placement_report_ = std::move(placed.report);
  check_placement(placement_);
  // A tier that decodes wherever the step runs (disk) agrees with either space.
  if (space_->on_device() != placement_.uses_gpu() && !placement_.decodes_on(DecodesOn::step_space))
    throw SystemError("the engine's space and its placement " + placement_.describe() + " disagree");
  const TierCapabilities can = placement_.capabilities();
  if (!can.loads_collectively && checkpoint.reads_collectively())
    throw SystemError(checkpoint.path() + ": the placement " + placement_.describe() +
                      " needs a checkpoint opened for independent reads");
  if (options_.cache.enabled() && !can.cacheable) {
    std::vector<std::string> cacheable;
    for (const StorageTier tier : storage_tiers())
      if (capabilities_of(tier).cacheable) cacheable.emplace_back(to_string(tier));
    throw InputError("a row cache stands in front of the " + or_list(cacheable) + " tier, not the " +
                     placement_.describe() + " tier");
  }
}

void EngineSession::load_tables(const PleCheckpoint& checkpoint, const std::vector<RowRange>& ranges,
                                const RowProfile& profile, const SharedRows& share) {
  load_.shared_ranks = share.ranks;
  load_.bytes = 0;
  for (const StorageTier tier : storage_tiers()) {
    if (!placement_.uses(tier)) continue;
    const std::vector<RowRange> on = ranges_on(placement_, tier, ranges);
    // Rows a group holds once are counted by its first rank (a peer group's on every tier).
    const bool counted = (!capabilities_of(tier).in_host_memory && !share.peers) || share.reader;
    std::vector<MemoryUse> need = tier_memory_use(tier, layouts_, on);
    if (!counted)
      for (MemoryUse& use : need) use.bytes = 0;
    require_table_memory(world_, tier, need);
    load_.bytes += counted ? load_bytes(tier, layouts_, on) : 0;
  }
  load_.huge_page_offer = read_huge_page_offer().describe();  // before the tables take any
  const double load_start = MPI_Wtime();
  const double cache_bytes_asked =
      options_.cache.gb > 0 ? options_.cache.gb * 1e9 : static_cast<double>(placement_report_.cache_bytes);
  const StoreOptions reads{options_.disk_reads, share.comm, options_.host_reads, threads_.count,
                           share.peers ? share.comm : MPI_COMM_NULL};
  stores_ = make_table_stores({placement_, checkpoint, ranges, *space_, reads, options_.cache.rows, cache_bytes_asked,
                               &profile, options_.cache.static_share});
  load_.seconds = MPI_Wtime() - load_start;
  load_.peak_resident = peak_resident_bytes();
  measure_host_pages();
}

void EngineSession::measure_host_pages() {
  std::vector<StorageTier> tiers;
  for (int d = 0; d < placement_.tables(); ++d) tiers.push_back(placement_.tier(d));
  load_.host_pages = measure_host_tables(world_, store(), tiers);
  load_.numa_placement = describe_numa_placement();
  // Said once per process, not once per engine (bench step makes many).
  static std::set<std::string> said;
  if (topology_.rank == 0)
    for (const std::string& line : huge_page_warnings(load_.host_pages))
      if (said.insert(line).second) log_warning(line);
}

EngineSession::~EngineSession() = default;

std::uint64_t EngineSession::cache_bytes(std::int64_t max_ids) const {
  return stores_.cached() ? pleshard::cache_bytes(stores_, max_ids) : 0;
}

void EngineSession::open_communicators(const Communicators& comms, const GpuBinding& gpus) {
  // GPU buffers go over NCCL when every rank has a GPU of its own, else through host
  // copies over MPI. A tier of whole tables exchanges nothing (every rank reads whole
  // rows), nor does a group on one node that reads its rows in place. Groups of one rank need
  // no communicator.
  const bool device_data = space_->on_device() && !local_;
  const bool nccl = backend_built(CollectiveBackend::nccl);
  const CollectiveBackend backend = !device_data           ? CollectiveBackend::mpi
                                    : gpus.own_gpu && nccl ? CollectiveBackend::nccl
                                                           : CollectiveBackend::mpi_staged;
  backend_ = local_ ? "none" : to_string(backend);
  if (local_) return;
  // The engine's own agreement on a step's slot size, on the host.
  if (size_of(comms.etp_dp()) > 1) control_ = std::make_unique<MpiCommunicator>(comms.etp_dp());
  const std::vector<ExchangeGroup> groups = groups_for(strategy_, topology_);
  groups_ = ExchangeGroups(comms, groups, backend, *space_);
  if (backend != CollectiveBackend::mpi_staged || groups_.on_space().empty()) return;
  // Ranks sharing a GPU each have a context of their own, whose kernels take turns on it
  // unless an MPS daemon runs them at once: 7x shorter owner steps of 64 tokens on one
  // H200 shared by 4 ranks (docs/performance-log.md).
  backend_note_ = gpus.own_gpu
                      ? std::string("this build has no NCCL; collectives go over MPI through host copies")
                      : gpus.why +
                            "; collectives go over MPI through host copies, and the ranks' kernels take "
                            "turns on a GPU unless an MPS daemon runs them at once (nvidia-cuda-mps-control -d)";
  // Said once per process, not once per engine (bench step makes many).
  static bool said = false;
  if (topology_.rank == 0 && !std::exchange(said, true)) log_warning(backend_note_);
}

}  // namespace pleshard

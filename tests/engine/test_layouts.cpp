// The batch job on every (TP, ETP) layout the world size allows and every storage tier this
// machine has, alone and with the tables split over two tiers (host and disk always; device
// and pinned with a GPU, over NCCL where each
// rank has a GPU of its own and over host-staged MPI where ranks share GPUs) gives embeddings bit-identical to a
// single process hashing and looking up whole requests on the host, for every row format;
// with uneven requests, fewer requests than DP ranks, chunked prefill and decode tails,
// several output parts. Runs on 1, 2, 3, 4, 6 and 8 ranks.

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <map>
#include <string>

#include "ckpt/checkpoint_fixtures.hpp"
#include "ckpt/synthetic.hpp"
#include "core/collective.hpp"
#include "core/error.hpp"
#include "engine/embed.hpp"
#include "engine/ple_engine.hpp"
#include "format/embedding_reader.hpp"
#include "job/batch_job.hpp"
#if PLESHARD_HAVE_CUDA
#include "kernels/cuda/device.hpp"
#endif

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;
namespace fs = std::filesystem;

struct Layout {
  int tp;
  int etp;
};

std::vector<Layout> layouts(int world) {
  std::vector<Layout> out;
  for (int tp = 1; tp <= world; ++tp) {
    if (world % tp != 0) continue;
    for (int etp = tp; etp <= world; etp += tp)
      if ((world / tp) % (etp / tp) == 0) out.push_back({tp, etp});
  }
  return out;
}

// Uneven requests, the first holding the family's special token: Qwen4Exp's EOS, Engram's
// dead token.
std::vector<Request> uneven_requests(const ModelConfig& config, int count) {
  SyntheticRequestsSpec spec;
  spec.count = count;
  spec.min_tokens = 1;
  spec.max_tokens = 45;
  spec.vocab_size = config.vocab_size;
  spec.seed = 99;
  auto requests = make_synthetic_requests(spec);
  const bool engram = config.family == ModelFamily::deepseek_engram;
  requests.front().tokens.insert(requests.front().tokens.begin() + 1,
                                 engram ? config.engram.image_token_id : config.eos_token_id);
  return requests;
}

// The tiers to check: the GPU ones only where a GPU is present.
std::vector<StorageTier> tiers() {
  std::vector<StorageTier> out{StorageTier::host, StorageTier::disk};
  if (gpu_available()) {
    out.push_back(StorageTier::device);
    out.push_back(StorageTier::pinned);
  }
  return out;
}

// A placement over tiers of one step: every table on `tier`, or (mixed) the tables taking
// turns between it and a second tier — host beside disk, device beside pinned, pinned beside
// disk — each table's rows then sharded over ETP as its first tier's are.
struct Placed {
  StorageTier tier;
  bool mixed = false;
};

std::vector<Placed> placements() {
  std::vector<Placed> out;
  for (const StorageTier tier : tiers()) out.push_back({tier});
  for (const StorageTier tier : tiers())
    if (tier != StorageTier::disk) out.push_back({tier, true});
  return out;
}

std::vector<StorageTier> mixed_tiers(StorageTier tier, int tables) {
  const StorageTier second = tier == StorageTier::device ? StorageTier::pinned : StorageTier::disk;
  std::vector<StorageTier> out;
  for (int d = 0; d < tables; ++d) out.push_back(d % 2 == 0 ? tier : second);
  return out;
}

// The collectives the engine should pick: NCCL where every rank has a GPU of its own (the
// test's ranks share one node), else MPI through host copies; MPI on the host; none on disk
// and where the ranks of one node read each other's rows in place.
std::string expected_backend(StorageTier tier, ExchangeStrategy strategy, bool across_nodes, int world) {
  if (tier == StorageTier::disk || (strategy == ExchangeStrategy::peer_read && !across_nodes)) return "none";
  if (tier == StorageTier::host) return "mpi";
#if PLESHARD_HAVE_NCCL
  if (kernels::cuda_device_count() >= world) return "nccl";
#else
  (void)world;
#endif
  return "mpi-staged";
}

// Every strategy, and the engine's own choice, where the tier exchanges rows.
std::vector<ExchangeStrategy> strategies(StorageTier tier) {
  if (tier == StorageTier::disk) return {ExchangeStrategy::automatic};
  return {ExchangeStrategy::automatic, ExchangeStrategy::gather_reduce, ExchangeStrategy::reduce_scatter,
          ExchangeStrategy::owner,     ExchangeStrategy::hierarchical,  ExchangeStrategy::peer_read};
}

// The owner exchange's steps as it sizes them (counts exchanged on the host) and in
// fixed-size messages (every step, as under CUDA graphs), asked for or the engine's choice
// (owner for groups of several ranks that do not read one copy: mixed placements); one way
// for the other strategies.
std::vector<std::int64_t> fixed_below_cases(ExchangeStrategy strategy) {
  if (strategy == ExchangeStrategy::owner || strategy == ExchangeStrategy::automatic) return {0, std::int64_t{1} << 40};
  return {0};
}

// The ranks of a node on this one machine, for the hierarchical exchange and, where `split`,
// for peer reads (else one node): blocks of 2 world ranks where the ETP group splits into
// them (both levels in use from ETP 4 up; ETP 2 is one node), else one rank per node (the
// flat form over the ranks across nodes); 0 for one node. Set (PLESHARD_RANKS_PER_NODE)
// until Communicators are made.
int ranks_per_node(ExchangeStrategy strategy, int etp, bool split) {
  const bool nodes = strategy == ExchangeStrategy::hierarchical || (strategy == ExchangeStrategy::peer_read && split);
  return nodes ? (etp % 2 == 0 ? 2 : 1) : 0;
}
void set_nodes(int per_node) {
  if (per_node > 0) {
    setenv("PLESHARD_RANKS_PER_NODE", std::to_string(per_node).c_str(), 1);
  } else {
    unsetenv("PLESHARD_RANKS_PER_NODE");
  }
}

// The engine's own choice, written out: peer reads where an ETP group of several ranks (all
// on this one machine) reads the same memory — every table on the host tier, or on the
// device tier with the ranks on one GPU — else owner for such groups, else gather-reduce.
ExchangeStrategy expected_choice(StorageTier tier, bool mixed, ExchangeStrategy strategy, const Layout& layout) {
  if (strategy != ExchangeStrategy::automatic || tier == StorageTier::disk) return strategy;
  if (layout.etp == 1) return ExchangeStrategy::gather_reduce;
#if PLESHARD_HAVE_CUDA
  const bool one_gpu = kernels::cuda_device_count() == 1;
#else
  const bool one_gpu = false;
#endif
  const bool one_copy = !mixed && (tier == StorageTier::host || (tier == StorageTier::device && one_gpu));
  return one_copy ? ExchangeStrategy::peer_read : ExchangeStrategy::owner;
}

std::string expected_exchange(StorageTier tier, ExchangeStrategy chosen) {
  return tier == StorageTier::disk ? "local" : to_string(chosen);
}

struct FormatCase {
  ModelConfig config;
  RowFormat format;
};

TEST(Layouts, EveryLayoutMatchesASingleProcess) {
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_layouts");
  // Qwen4Exp in every format; Engram's E8M0-scaled FP8 hashed through a token map.
  const FormatCase formats[] = {
      {small_config(nullptr, 5), RowFormat::bf16},  {small_config(nullptr, 5), RowFormat::f32},
      {small_config(nullptr, 5), RowFormat::f16},   {small_config("float8_e4m3fn", 5), RowFormat::fp8},
      {small_config("nvfp4", 5), RowFormat::nvfp4}, {engram_config(700), RowFormat::fp8_e8m0}};
  // The rows read from peers on one node, by format, requests and layout: alike on every
  // tier that reads one copy in place, whichever kernel counted them (the hash's, the host's,
  // or a GPU decode that hashes its own keys).
  std::map<std::string, std::int64_t> peer_rows;
  for (const auto& fc : formats) {
    const ModelConfig& config = fc.config;
    // bf16 also from HDF5, read collectively (MPI-IO) when HDF5 is parallel.
    const bool hdf5 = fc.format == RowFormat::bf16;
    const fs::path ckpt_path = dir / (std::string("ckpt_") + to_string(fc.format) + (hdf5 ? ".h5" : ""));
    SCOPED_TRACE(to_string(config.family));
    if (rank == 0)
      write_checkpoint(ckpt_path, config, synthetic_tables(config, fc.format, 4),
                       {hdf5 ? CheckpointKind::hdf5 : CheckpointKind::safetensors});
    MPI_Barrier(MPI_COMM_WORLD);
    // The single-process reference, from a checkpoint opened by rank 0 alone and closed
    // before the shared open (HDF5 would otherwise share one open file between them).
    const OutDtype dtype = fc.format == RowFormat::f16 ? OutDtype::f16 : OutDtype::bf16;
    const int counts[] = {3, 11};  // fewer requests than DP ranks on larger worlds: idle ranks
    std::vector<std::vector<LayerEmbeddings>> expected(2);
    if (rank == 0) {
      const auto serial = open_ple_checkpoint(ckpt_path, config);
      for (std::size_t c = 0; c < 2; ++c) {
        TokenBatch whole(config.ngram_size);
        for (const auto& r : uneven_requests(config, counts[c]))
          whole.add_request(r.tokens, fresh_context(config.ngram_size));
        expected[c] = embed_batch(config, *serial, whole, dtype);
      }
    }
    for (const Placed& placed : placements()) {
      const StorageTier tier = placed.tier;
      CheckpointOptions ckpt_options;
      ckpt_options.comm = MPI_COMM_WORLD;
      ckpt_options.collective_io = tier == StorageTier::host && !placed.mixed;
      // Collective HDF5 reads in bands of 4 KiB: several per rank, and as many on every rank
      // although the ranks' ranges differ.
      ckpt_options.read_band_bytes = 4096;
      const auto checkpoint = open_ple_checkpoint(ckpt_path, config, ckpt_options);
      for (std::size_t c = 0; c < 2; ++c) {
        const int count = counts[c];
        const auto requests = uneven_requests(config, count);
        std::vector<std::int64_t> qsl{0};
        for (const auto& r : requests) qsl.push_back(qsl.back() + static_cast<std::int64_t>(r.tokens.size()));
        const auto all_layouts = layouts(world);
        for (std::size_t l = 0; l < all_layouts.size(); ++l)
          for (const ExchangeStrategy strategy : strategies(tier))
            for (const std::int64_t fixed_below : fixed_below_cases(strategy)) {
              // Mixed placements with the engine's own choice, the gather-reduce transport and
              // rows read in place.
              if (placed.mixed && strategy != ExchangeStrategy::automatic &&
                  strategy != ExchangeStrategy::gather_reduce && strategy != ExchangeStrategy::peer_read)
                continue;
              const Layout& layout = all_layouts[l];
              SCOPED_TRACE(std::string(to_string(fc.format)) + " " + to_string(tier) + (placed.mixed ? " mixed" : "") +
                           " tp " + std::to_string(layout.tp) + " etp " + std::to_string(layout.etp) + " requests " +
                           std::to_string(count) + " exchange " + to_string(strategy) +
                           (fixed_below > 0 ? " (fixed-size messages)" : ""));
              // Peer reads within one node for the first requests, across nodes for the others.
              const int per_node = ranks_per_node(strategy, layout.etp, c == 1);
              const bool across_nodes = per_node > 0 && per_node < layout.etp;
              set_nodes(per_node);
              const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, layout.tp, layout.etp));
              unsetenv("PLESHARD_RANKS_PER_NODE");
              BatchJobOptions options;
              options.exchange = strategy;
              options.schedule = {16, 2};
              options.dtype = dtype;
              options.storage = tier;
              if (placed.mixed) options.placement = mixed_tiers(tier, config.num_ple_layers());
              options.part_tokens = 60;
              // The owner exchange's steps planned on the GPU (there is one) for the first
              // requests, on the host by the default rule (steps this small) for the others.
              if (c == 0) options.owner_gpu_plan_from = 0;
              options.owner_fixed_below = fixed_below;
              options.out = dir / "out.h5";
              const BatchJobReport report = run_batch_job(comms, config, *checkpoint, requests, options);
              EXPECT_EQ(report.tokens, total_tokens(requests));
              const ExchangeStrategy chosen = expected_choice(tier, placed.mixed, strategy, layout);
              EXPECT_EQ(report.backend, expected_backend(tier, chosen, across_nodes, world));
              EXPECT_EQ(report.exchange, expected_exchange(tier, chosen));
              EXPECT_EQ(report.traffic.tokens, total_tokens(requests) * layout.tp);
              if (chosen == ExchangeStrategy::peer_read) {
                // One copy of the rows per node, read in place there: nothing sent on one
                // node, rows between nodes otherwise (rank 0's group always has requests).
                EXPECT_EQ(report.shared_ranks, static_cast<double>(per_node > 0 ? per_node : layout.etp));
                if (!across_nodes) {
                  EXPECT_EQ(report.traffic.bytes_sent, 0.0);
                  // Of the lookups (every rank's, summed), those outside the rank's own part:
                  // with several parts, some but not all, at their stored bytes.
                  const auto looked_up = static_cast<std::int64_t>(report.traffic.ids);
                  if (layout.etp > 1) {
                    EXPECT_GT(report.traffic.rows_from_peers, 0);
                  }
                  EXPECT_LT(report.traffic.rows_from_peers, looked_up);
                  EXPECT_EQ(report.traffic.bytes_from_peers,
                            static_cast<double>(report.traffic.rows_from_peers) *
                                static_cast<double>(checkpoint->table(0).layout.bytes_per_row()));
                  if (!placed.mixed && tier != StorageTier::disk) {
                    const std::string key =
                        std::string(to_string(fc.format)) + " " + std::to_string(c) + " " + std::to_string(l);
                    const auto [first, inserted] = peer_rows.emplace(key, report.traffic.rows_from_peers);
                    EXPECT_EQ(report.traffic.rows_from_peers, first->second) << "rows from peers differ by tier";
                  }
                } else {
                  // Only between nodes, the counts' messages too (rank 0's group always has requests).
                  EXPECT_EQ(report.traffic.bytes_between_nodes, report.traffic.bytes_sent);
                  if (rank == 0) {
                    EXPECT_GT(report.traffic.bytes_between_nodes, 0.0);
                  }
                  // The rows a node's ranks serve from each other's parts of its copy: some
                  // where a node holds several parts, none where one rank holds it all.
                  if (per_node > 1 && tier != StorageTier::disk) {
                    EXPECT_GT(report.traffic.rows_from_peers, 0);
                  } else if (per_node == 1) {
                    EXPECT_EQ(report.traffic.rows_from_peers, 0);
                  }
                  EXPECT_LE(report.traffic.rows_from_peers, static_cast<std::int64_t>(report.traffic.ids));
                  EXPECT_EQ(report.traffic.bytes_from_peers,
                            static_cast<double>(report.traffic.rows_from_peers) *
                                static_cast<double>(checkpoint->table(0).layout.bytes_per_row()));
                }
              } else {
                EXPECT_EQ(report.traffic.rows_from_peers, 0);
              }
              if (placed.mixed) {
                EXPECT_FALSE(report.placement.uniform());
                EXPECT_EQ(report.placement.tiers, options.placement);
              }
              if (rank == 0 && tier != StorageTier::disk && strategy == ExchangeStrategy::hierarchical &&
                  across_nodes) {
                // Rank 0's ETP group always has requests (others may have none): ids and rows
                // crossed the simulated nodes, through both levels where a node has several of
                // the group's ranks, else over the ranks across nodes alone (the flat form).
                EXPECT_GT(report.traffic.bytes_between_nodes, 0.0);
                bool node_level = false;
                bool cross_level = false;
                for (const auto& collective : report.collectives) {
                  node_level = node_level || collective.name.rfind("etp_node host", 0) == 0;
                  cross_level = cross_level || collective.name.rfind("etp_cross host", 0) == 0;
                }
                EXPECT_TRUE(cross_level);
                EXPECT_EQ(node_level, layout.etp % 2 == 0);
              }
              if (rank == 0) {
                const EmbeddingFile got = read_embeddings_h5(options.out, config.num_ple_layers(), dtype);
                EXPECT_EQ(got.query_start_loc, qsl);
                // EXPECT, not ASSERT: every rank must reach the same collectives.
                EXPECT_EQ(got.request_ids.size(), requests.size());
                if (!got.request_ids.empty()) {
                  EXPECT_EQ(got.request_ids.back(), requests.back().id);
                }
                for (std::size_t d = 0; d < got.layers.size() && d < expected[c].size(); ++d)
                  EXPECT_TRUE(got.layers[d] == expected[c][d].data) << "layer " << d << " differs";
                EXPECT_FALSE(fs::exists(dir / "out.h5.partial"));
                EXPECT_FALSE(fs::exists(dir / "out.h5.progress"));
                fs::remove(options.out);
              }
              MPI_Barrier(MPI_COMM_WORLD);
            }
      }
    }
  }
}

TEST(Layouts, SequenceParallelRanksHoldTheirSlice) {
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SharedScratchDir dir("pleshard_sp");
  const ModelConfig config = small_config(nullptr, 3);
  if (rank == 0) write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::bf16, 8), {});
  MPI_Barrier(MPI_COMM_WORLD);
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Topology topology = make_topology(world, rank, world, world);  // E = TP: sequence parallel
  const Communicators comms(MPI_COMM_WORLD, topology);
  set_nodes(ranks_per_node(ExchangeStrategy::hierarchical, world, true));
  const Communicators node_comms(MPI_COMM_WORLD, topology);
  set_nodes(0);
  const auto requests = uneven_requests(config, 4);
  TokenBatch batch(config.ngram_size);
  for (const auto& r : requests) batch.add_request(r.tokens, fresh_context(config.ngram_size));
  const auto expected = embed_batch(config, *checkpoint, batch, OutDtype::f32);
  const RowRange slice = sequence_slice(batch.num_tokens(), world, rank);
  for (const StorageTier tier : tiers())
    for (const ExchangeStrategy strategy : strategies(tier))
      for (const std::int64_t fixed_below : fixed_below_cases(strategy))
        for (const bool split : {false, true}) {
          // Peer reads within one node, and across the nodes the hierarchical exchange uses.
          if (split && strategy != ExchangeStrategy::peer_read) continue;
          const bool nodes = strategy == ExchangeStrategy::hierarchical || split;
          SCOPED_TRACE(std::string(to_string(tier)) + " exchange " + to_string(strategy) +
                       (fixed_below > 0 ? " (fixed-size messages)" : "") + (nodes ? " over nodes" : ""));
          EngineOptions options;
          options.dtype = OutDtype::f32;
          options.tier = tier;
          options.exchange = strategy;
          options.owner_fixed_below = fixed_below;
          options.max_tokens = batch.num_tokens();
          PleEngine engine(nodes ? node_comms : comms, config, *checkpoint, options);
          const StepOutput out = engine.forward(batch);
          engine.wait();
          for (int d = 0; d < config.num_ple_layers(); ++d) {
            const EmbeddingView& view = out.layers[static_cast<std::size_t>(d)];
            EXPECT_EQ(view.first, slice.begin) << to_string(tier);
            EXPECT_EQ(view.rows, slice.size()) << to_string(tier);
            const std::vector<std::uint8_t> got = to_host(engine.space(), view);
            const auto begin =
                expected[static_cast<std::size_t>(d)].data.begin() +
                static_cast<std::ptrdiff_t>(static_cast<std::size_t>(slice.begin) * engine.token_bytes());
            EXPECT_TRUE(std::equal(got.begin(), got.end(), begin)) << to_string(tier) << " layer " << d;
          }
        }
}

// Options that shape what ranks send each other differ between ranks: one error on every
// rank, naming the option, not a hang.
TEST(Layouts, OptionsThatShapeTheMessagesAgreeOnEveryRank) {
  int rank = 0;
  int world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world < 2) GTEST_SKIP() << "one rank agrees with itself";
  const SharedScratchDir dir("pleshard_agree");
  const ModelConfig config = small_config(nullptr, 3);
  if (rank == 0) write_checkpoint(dir / "ckpt", config, synthetic_tables(config, RowFormat::bf16, 8), {});
  MPI_Barrier(MPI_COMM_WORLD);
  const auto checkpoint = open_ple_checkpoint(dir / "ckpt", config);
  const Communicators comms(MPI_COMM_WORLD, make_topology(world, rank, 1, world));
  struct Case {
    const char* name;
    void (*differ)(EngineOptions&);
  };
  const Case cases[] = {
      {"owner_fixed_below", [](EngineOptions& o) { o.owner_fixed_below = 1000; }},
      {"max_tokens", [](EngineOptions& o) { o.max_tokens = 17; }},
      {"exchange", [](EngineOptions& o) { o.exchange = ExchangeStrategy::gather_reduce; }},
      {"placement",
       [](EngineOptions& o) {
         o.placement = {StorageTier::host, StorageTier::disk};
       }},
      {"share_tables", [](EngineOptions& o) { o.share_tables = false; }},
      {"cache.rows", [](EngineOptions& o) { o.cache.rows = 100; }},
      {"cache.static_share", [](EngineOptions& o) { o.cache.static_share = 0.25; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EngineOptions options;
    options.tier = StorageTier::host;
    options.exchange = ExchangeStrategy::owner;
    options.max_tokens = 64;
    if (rank == world - 1) c.differ(options);
    try {
      PleEngine engine(comms, config, *checkpoint, options);
      ADD_FAILURE() << "accepted";
    } catch (const AgreedError& e) {
      EXPECT_TRUE(e.input());
      EXPECT_NE(std::string(e.what()).find(c.name), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("differs between ranks"), std::string::npos) << e.what();
    }
  }
  // The same options on every rank make an engine.
  EngineOptions same;
  same.tier = StorageTier::host;
  same.max_tokens = 64;
  EXPECT_NO_THROW(PleEngine(comms, config, *checkpoint, same));
}

TEST(Layouts, InvalidLayoutsAreRejected) {
  EXPECT_THROW((void)make_topology(4, 0, 3, 3), InputError);  // TP does not divide the world
  EXPECT_THROW((void)make_topology(4, 0, 2, 3), InputError);  // ETP not a multiple of TP
  EXPECT_THROW((void)make_topology(6, 0, 1, 4), InputError);  // Edp does not divide DP
  EXPECT_THROW((void)make_topology(4, 0, 0, 1), InputError);
  EXPECT_NO_THROW((void)make_topology(8, 5, 2, 4));
  const Topology t = make_topology(8, 5, 2, 4);
  EXPECT_EQ(t.dp_rank(), 2);
  EXPECT_EQ(t.tp_rank(), 1);
  EXPECT_EQ(t.etp_group(), 1);
  EXPECT_EQ(t.etp_rank(), 1);
}

// The report's layout line says what an ETP group is made of: the TP ranks of Edp DP ranks.
TEST(Layouts, DescribeSpellsOutTheGroups) {
  EXPECT_EQ(make_topology(8, 0, 2, 4).describe(), "ranks 8 (DP 4 x TP 2), ETP group 4 (2 DP ranks x TP 2)");
  EXPECT_EQ(make_topology(8, 0, 2, 4).describe_etp(), "4 (2 DP ranks x TP 2)");
  EXPECT_EQ(make_topology(3, 0, 1, 0).describe(), "ranks 3 (DP 3 x TP 1), ETP group 1 (1 DP rank x TP 1)");
}

}  // namespace

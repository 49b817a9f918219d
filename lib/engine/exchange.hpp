#pragma once
// The exchange of a step: from my DP rank's batch, loaded in the step plan, to my
// embeddings of every PLE layer. A strategy behind one interface, each a different plan
// over the same data (which tokens a rank hashes, which rows it fetches, what it sends);
// vLLM's gather-reduce flow is the first and the reference. Every call only enqueues work
// on the step space's stream (collectives included, on device backends).

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "dist/communicator.hpp"
#include "dist/topology.hpp"
#include "engine/step_marks.hpp"
#include "engine/step_plan.hpp"
#include "exec/workspace.hpp"
#include "store/row_store.hpp"

namespace pleshard {

class TableReadiness;

// One layer's embeddings of one step, where the engine left them: `rows` rows of `width`
// values of `dtype`, row-major, for tokens [first, first + rows) of my DP rank's step.
struct EmbeddingView {
  const void* data = nullptr;
  std::int64_t first = 0;
  std::int64_t rows = 0;
  std::int64_t width = 0;
  OutDtype dtype = OutDtype::bf16;
  [[nodiscard]] std::size_t bytes() const {
    return static_cast<std::size_t>(rows) * static_cast<std::size_t>(width) * kernels::out_bytes(dtype);
  }
};

// The communicators of an exchange on step-space memory; null for a group of one rank,
// which needs none.
struct ExchangeComms {
  Communicator* etp = nullptr;       // my ETP group
  Communicator* etp_dp = nullptr;    // my ETP group's ranks with my TP rank (one per slot)
  Communicator* tp = nullptr;        // my DP rank's TP ranks
  Communicator* etp_host = nullptr;  // my ETP group over MPI on host memory (message sizes)
  // The hierarchical exchange's levels (Communicators::etp_node, etp_cross), on step-space
  // memory and over MPI on host memory.
  Communicator* etp_node = nullptr;
  Communicator* etp_node_host = nullptr;
  Communicator* etp_cross = nullptr;
  Communicator* etp_cross_host = nullptr;
};

// A strategy `--exchange` names: one registered (engine/exchange_strategy.hpp: the
// built-in ones, and any registered beside them), or automatic, which picks one per layout
// and tier (choose_exchange).
class ExchangeStrategy {
 public:
  static const ExchangeStrategy automatic;
  static const ExchangeStrategy gather_reduce;
  static const ExchangeStrategy reduce_scatter;
  static const ExchangeStrategy owner;
  static const ExchangeStrategy hierarchical;
  static const ExchangeStrategy peer_read;

  constexpr ExchangeStrategy() = default;  // automatic
  // The registry's index + 1 (0: automatic).
  [[nodiscard]] constexpr int id() const { return id_; }
  [[nodiscard]] static constexpr ExchangeStrategy of_id(int id) { return ExchangeStrategy(id); }
  constexpr bool operator==(const ExchangeStrategy&) const = default;

 private:
  explicit constexpr ExchangeStrategy(int id) : id_(id) {}
  int id_ = 0;
};
// The built-in strategies, in the order they are registered (exchange_strategies.cpp).
inline constexpr ExchangeStrategy ExchangeStrategy::automatic{0};
inline constexpr ExchangeStrategy ExchangeStrategy::gather_reduce{1};
inline constexpr ExchangeStrategy ExchangeStrategy::reduce_scatter{2};
inline constexpr ExchangeStrategy ExchangeStrategy::owner{3};
inline constexpr ExchangeStrategy ExchangeStrategy::hierarchical{4};
inline constexpr ExchangeStrategy ExchangeStrategy::peer_read{5};

[[nodiscard]] const char* to_string(ExchangeStrategy strategy);
// InputError naming the accepted values for anything else.
[[nodiscard]] ExchangeStrategy parse_exchange_strategy(std::string_view name);

// What this rank's exchange moved, summed over steps. Bytes sent count what leaves the rank
// for other ranks under each collective's usual algorithm (nccl-tests' bus bytes: a ring
// all-reduce sends 2(n-1)/n of its buffer, an all-gather or reduce-scatter (n-1)/n, an
// all-to-all what goes to the others).
struct ExchangeTraffic {
  std::int64_t steps = 0;
  std::int64_t tokens = 0;  // my DP rank's tokens
  double bytes_sent = 0;    // to other ranks
  std::int64_t ids = 0;     // lookups of my tokens, every layer (before deduplication)
  // Ids that reach their owners on other ranks (after deduplication), and stored rows sent to
  // other ranks; a step in fixed-size messages counts every entry, empty ones included.
  std::int64_t ids_sent = 0;
  std::int64_t rows_sent = 0;
  double bytes_between_nodes = 0;  // of bytes_sent, to ranks on other nodes (owner strategies)
  // Lookups of my tokens whose rows lie in another rank's part of the copy a group reads in
  // place (peer-read: outside my balanced part), and their stored bytes.
  std::int64_t rows_from_peers = 0;
  double bytes_from_peers = 0;
  ExchangeTraffic& operator+=(const ExchangeTraffic& o);
  [[nodiscard]] ExchangeTraffic operator-(const ExchangeTraffic& o) const;
  [[nodiscard]] ExchangeTraffic operator+(const ExchangeTraffic& o) const { return ExchangeTraffic(*this) += o; }
};

// What every strategy works with.
struct ExchangeContext {
  StepSpace& space;
  Workspace& workspace;
  StepPlan& plan;
  RowStore& store;
  Topology topology;
  ExchangeComms comms;
  OutDtype dtype;
  std::int64_t width;                    // ple_embed_dim: values per token and layer
  int node_ranks = 1;                    // my ETP group's ranks on my node (Communicators::etp_node)
  int output_slots = 1;                  // EngineOptions::output_slots
  std::int64_t owner_gpu_plan_from = 0;  // EngineOptions::owner_gpu_plan_from
  // The owner exchange sends steps of fewer lookups a layer than this per rank (the largest
  // sequence slice of the step's slot) in fixed-size messages: every rank the same number of
  // entries, so that no count waits for the host (EngineOptions::owner_fixed_below; under
  // CUDA graphs every step).
  std::int64_t owner_fixed_below = 0;
  // Where a started step signals its tables as they are decoded (engine/table_readiness.hpp);
  // null, or inactive: the step signals nothing itself.
  TableReadiness* readiness = nullptr;
  // Per layer, whether its rows are my ETP group's one copy, read in place (peer reads: every
  // tier but the disk tier, whose ranks hold whole tables of their own); empty: none.
  std::vector<bool> group_copy;
};

// A region of a step's workspace held `count` times over: a step writes copy
// `out_slot % count`, so the embeddings a step leaves there stay while the next count - 1
// steps write theirs (EngineOptions::output_slots). Buffers only a step itself reads are
// held once.
struct RegionRing {
  std::vector<Workspace::Region> copies;
  void add(Workspace& workspace, std::size_t bytes, int count);
  [[nodiscard]] std::uint8_t* at(const Workspace& workspace, int out_slot) const {
    return workspace.at<std::uint8_t>(copies[static_cast<std::size_t>(out_slot) % copies.size()]);
  }
};

class Exchange {
 public:
  virtual ~Exchange() = default;
  [[nodiscard]] virtual const char* name() const = 0;
  // Enqueues one step: my DP rank's `tokens` tokens are loaded in the plan as a slot of
  // plan.slot_tokens() (the group's largest count). Fills views[d] for every layer d, in
  // the output copies of `out_slot`; they stay valid until a run writes that slot again.
  virtual void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) = 0;
  // The most ids per layer a step asks the store for (RowStore::reserve).
  [[nodiscard]] virtual std::int64_t max_query_ids() const = 0;
  // Whether a step only enqueues work (no host wait inside), so it can be captured in a CUDA graph.
  [[nodiscard]] virtual bool capturable() const { return true; }

  // Whether a step also runs in two halves, so that the next step's fetch starts before this
  // one's rows are decoded (where the store fetches_ahead()): begin() enqueues the step up to
  // its fetch's submit, finish() the rest of the oldest step begun. run() is begin() then
  // finish().
  [[nodiscard]] virtual bool begins_ahead() const { return false; }
  // The first half of a step of `tokens` tokens loaded in the plan, marked in `marks`. At
  // most two steps begun and not finished. SystemError unless begins_ahead().
  virtual void begin(std::int64_t tokens, StepMarks& marks);
  // The second half of the oldest step begun (its `marks` again): waits for its rows, calls
  // `fetched` where given and begins_beside_decode() allows it for the step (the next step
  // may be begun there, its fetch then running beside this step's decode), then decodes and
  // combines as run() does.
  virtual void finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                      const std::function<void()>& fetched);
  // Whether finish() may call `fetched` for steps of slot `slot_tokens` on this rank: the
  // store fetches ahead at their size, and their decode reads nothing the next begin()
  // rewrites. A group's ranks must begin the next step at the same point, or their
  // collectives run in different orders: the caller passes `fetched` only at the slot sizes
  // where every rank's exchange says so (StepRunner), and at those an exchange with a
  // collective in its begin() calls it for every step, on every rank alike (the local
  // exchange, with none, decides step by step).
  [[nodiscard]] virtual bool begins_beside_decode(std::int64_t slot_tokens) const {
    (void)slot_tokens;
    return false;
  }
  // Forgets the steps begun and not finished, after a failure in one: the next begin() or
  // run() starts afresh.
  virtual void abandon() {}

  // What the steps moved so far: counted on the host, and on the device (read back here, so
  // between steps rather than in a timed loop).
  [[nodiscard]] ExchangeTraffic traffic() const { return traffic_ + device_counted(); }
  // The part counted on the host: a step the engine replayed from a CUDA graph moves what
  // its captured run did (StepGraphs); what the device counts, each replay counts itself.
  [[nodiscard]] const ExchangeTraffic& host_counted() const { return traffic_; }
  void add_traffic(const ExchangeTraffic& step) { traffic_ += step; }
  void restore_traffic(const ExchangeTraffic& traffic) { traffic_ = traffic; }

 protected:
  // What the steps counted in the space's memory (rows read from peers: LocalExchange's
  // hash, OwnerExchange's widened ids), each replay of a graph counting itself.
  [[nodiscard]] virtual ExchangeTraffic device_counted() const { return {}; }
  ExchangeTraffic traffic_;
};

// An exchange whose steps are the same two halves whether begun ahead or not: submit() up to
// the fetch's submit, complete() the rest of the oldest step submitted, calling `fetched`
// (where given) once the next step may begin. run() is both at once; begin() and finish()
// are them, where begins_ahead().
class HalvedExchange : public Exchange {
 public:
  void run(std::int64_t tokens, int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views) final;
  void begin(std::int64_t tokens, StepMarks& marks) final;
  void finish(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
              const std::function<void()>& fetched) final;

 protected:
  virtual void submit(std::int64_t tokens, StepMarks& marks) = 0;
  virtual void complete(int out_slot, StepMarks& marks, std::vector<EmbeddingView>& views,
                        const std::function<void()>& fetched) = 0;
};

// Tokens [first, first + count) that TP rank `tp_rank` keeps of `tokens` under sequence
// parallelism: slices of ceil(tokens / tp) tokens.
[[nodiscard]] RowRange sequence_slice(std::int64_t tokens, int tp, int tp_rank);

// What `auto` weighs: the layout, whether the steps are captured in CUDA graphs, and whether
// the ranks of every ETP group can read one copy of the rows in place (each group on one
// node, reading the same memory: one GPU between them with every table on the device tier,
// or every table on the host tier; the engine knows it before it places the tables).
struct ExchangeFacts {
  Topology topology;
  bool cuda_graphs = false;
  bool groups_read_one_copy = false;
};

// The strategy for `requested` (automatic: the first registered whose rule for `auto`
// takes the facts: peer-read where the groups read one copy, owner where an ETP group of
// several ranks exchanges and the steps need not be captured in CUDA graphs, else
// gather-reduce), or InputError where the layout or tier does not allow the one requested
// (its descriptor's check). Groups of one rank take any strategy, under graphs too: each is
// the identity there. `local` (whole tables on every rank: the disk tier) exchanges nothing.
[[nodiscard]] ExchangeStrategy choose_exchange(ExchangeStrategy requested, const ExchangeFacts& facts, bool local);

// The strategy's exchange over `context` (its descriptor's factory; a group of one rank: the
// identity, named as asked); automatic and `local` (whole tables): the identity.
[[nodiscard]] std::unique_ptr<Exchange> make_exchange(ExchangeStrategy strategy, bool local,
                                                      const ExchangeContext& context);

}  // namespace pleshard

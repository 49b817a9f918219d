#pragma once
// The owners' half of the owner exchanges (engine/owner_exchange.hpp, the flat form;
// engine/hierarchical_exchange.hpp, two levels): over one group of ranks — the ETP group, or
// the ranks of one local index across nodes — each rank says how many distinct ids it asks
// of each owner, sends them as owner-local indexes, and receives the owners' rows of them
// back, packed as stored (codes, then block scales; kernels/common/row_pack.hpp), owner by
// owner in the order it sent the ids. This object holds, per layer, the owners' ranges, the
// counts each way, the ids asked of me and my store's rows of them, and the rows that come
// back; who asks (a rank for itself, or a gateway for its node) is the exchange's.

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/peer_row_tally.hpp"

namespace pleshard {

// One group of an owner exchange: a communicator on the space's memory (the rows, and ids
// planned there) and an MPI one on the host (message sizes, ids planned there), both null
// for a group of one rank.
// How the owners split a table: `owners` balanced row ranges (balanced_range), of which I own
// range `me` (my ETP rank's over the ETP group; my node's over the nodes under peer reads).
struct OwnerRanges {
  int owners = 1;
  int me = 0;
};

struct OwnerGroup {
  Communicator* data = nullptr;
  Communicator* host = nullptr;
  int size = 1;
  int rank = 0;
  [[nodiscard]] static OwnerGroup of(Communicator* data, Communicator* host);
};

namespace detail {

// `counts[r]` entries of `bytes` each to and from rank r of `comm`, packed in rank order, in
// the space's memory (`in_space`) or the host's; a copy where the group is one rank (null).
void owner_all_to_all(StepSpace& space, Communicator* comm, bool in_space, const std::uint8_t* send,
                      const std::vector<std::int64_t>& send_counts, std::uint8_t* recv,
                      const std::vector<std::int64_t>& recv_counts, std::size_t bytes);

// The most ids of one layer a rank's tokens give: the largest sequence slice's under
// sequence parallelism.
[[nodiscard]] std::int64_t max_ids_of_mine(const ExchangeContext& context);

}  // namespace detail

class OwnerService {
 public:
  // Owners are the ranks of `group`; the rows are split as `ranges` says. A rank's
  // tokens give at most `max_ids` ids a layer, and every rank's reach me at most once (merged
  // at a gateway or not); I receive at most `returned` rows a layer. `ids_in_space`: ids may
  // also arrive over the data communicator (planned on a GPU). `slots_per_owner`: steps may
  // come in fixed-size messages (fixed_counts) of up to that many entries a rank (0: none).
  OwnerService(const ExchangeContext& context, OwnerGroup group, OwnerRanges ranges, std::int64_t max_ids,
               std::int64_t returned, bool ids_in_space, std::int64_t slots_per_owner = 0);

  [[nodiscard]] const OwnerGroup& group() const { return group_; }
  // The layer's owners + 1 row boundaries of the owners' ranges (balanced_range).
  [[nodiscard]] const std::vector<std::int64_t>& bounds(std::size_t layer) const { return layers_[layer].bounds; }
  // Bytes of one of the layer's owner-local indexes (the narrowest that holds one of the
  // widest range), and of one of its packed rows.
  [[nodiscard]] int id_bytes(std::size_t layer) const { return layers_[layer].id_bytes; }
  [[nodiscard]] std::size_t pitch(std::size_t layer) const { return layers_[layer].pitch; }
  // The most ids a step asks my store for, per layer (RowStore::reserve).
  [[nodiscard]] std::int64_t max_served() const { return max_served_; }

  // The step's counts: to_owner[layer][o] distinct ids I ask owner o (of the group) for;
  // then how many each asks of me, over MPI on the host (counted in `step`, between nodes
  // where the group's ranks are nodes of `ranks_per_node`, as count_traffic counts). Once a
  // step, before its ids are received: it also takes the step's turn of the host buffers.
  void exchange_counts(std::vector<std::vector<std::int64_t>> to_owner, std::size_t ranks_per_node,
                       ExchangeTraffic& step);
  // Or, instead, a step in fixed-size messages (kernels/common/row_plan.hpp: slot_of): `slots`
  // entries each way between every two ranks of the group, whatever is asked, nothing sent
  // for the counts; its empty entries come back as zero rows. Every rank of the group calls
  // it with the same `slots` (at most slots_per_owner), which count as ids and rows sent.
  void fixed_counts(std::int64_t slots, ExchangeTraffic& step);
  [[nodiscard]] const std::vector<std::int64_t>& to_owner(std::size_t layer) const { return layers_[layer].to_owner; }
  // The ids I ask of the owners, to_owner(layer)'s counts of id_bytes(layer) each, owner by
  // owner, sent from the host over MPI, or from the space over the data communicator; the
  // ids asked of me, widened into my store's query in the space.
  [[nodiscard]] RowQuery receive_ids_on_host(std::size_t layer, const std::uint8_t* sent);
  [[nodiscard]] RowQuery receive_ids_in_space(std::size_t layer, const std::uint8_t* sent);
  // What the layer's ids and rows to and from the others of the group send, in `step`; to a
  // peer whose rank is in another block of `ranks_per_node` also as between nodes. Under peer
  // reads between nodes (ExchangeContext::group_copy), also the ids received on the host
  // whose rows my node's copy holds outside my part (rows from peers).
  void count_traffic(std::size_t layer, std::size_t ranks_per_node, ExchangeTraffic& step) const;
  // The rows from peers of ids received in the space, counted as they were widened.
  [[nodiscard]] ExchangeTraffic counted_in_space() const;
  // My store's rows of every layer's query (the receive_ids_* results): submit() starts their
  // fetch, serve() waits for them, packs them as stored and sends them back; the rows I asked
  // for arrive in returned(layer). serve() returns the store's tasks, for packing again at a
  // gateway (valid until the store's next submit). Once serve() returns, the step needs
  // nothing of the counts or ids here, so the next step's may be exchanged.
  void submit(std::span<const RowQuery> queries);
  std::span<const kernels::DecodeTask> serve(StepMarks& marks);
  // The rows that came back to me: one packed row of pitch(layer) bytes for each id I asked
  // for, so returned_count(layer) is also how many ids I send (sum(to_owner(layer))).
  [[nodiscard]] const std::uint8_t* returned(std::size_t layer) const;
  [[nodiscard]] std::int64_t returned_count(std::size_t layer) const;

 private:
  struct Layer {
    std::vector<std::int64_t> bounds;  // owners + 1 row boundaries of the owners' ranges
    int id_bytes = 8;
    std::size_t pitch = 0;
    std::vector<std::int64_t> to_owner, from_askers;  // [group rank] ids
    std::vector<std::uint8_t> received_ids;           // asked of me over MPI on the host
    Workspace::Region ids_in;                         // asked of me over the data communicator
    std::int64_t served = 0;                          // the most ids asked of me: what the buffers below hold
    std::int64_t from_peers = 0;                      // of the ids received on the host, rows from peers
    Workspace::Region query, served_rows, returned_rows;
  };
  // The ids asked of me, checked against what the layer's buffers hold.
  [[nodiscard]] std::int64_t asked_of_me(const Layer& l) const;
  [[nodiscard]] std::int64_t my_first_row(const Layer& l) const {
    return l.bounds[static_cast<std::size_t>(ranges_.me)];
  }

  ExchangeContext ctx_;
  OwnerGroup group_;
  OwnerRanges ranges_;
  std::int64_t max_served_ = 0;
  std::int64_t slots_per_owner_ = 0;
  bool fixed_ = false;           // the step's messages are fixed-size: ids sent plus one, 0 where empty
  std::int64_t most_asked_ = 0;  // the last submit's largest query
  std::vector<Layer> layers_;
  std::unique_ptr<PeerRowTally> peer_rows_;  // under peer reads between nodes
  // The ids asked of me, widened on the host and copied into the space by a step nothing
  // waits for before the next one starts: two, alternating (at most two steps in flight).
  std::unique_ptr<HostBuffer> host_query_[2];
  int next_upload_ = 0;
};

}  // namespace pleshard

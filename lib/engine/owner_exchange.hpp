#pragma once
// The owner exchange: each row moves once, as stored. Every rank hashes only its own tokens
// (its sequence slice under sequence parallelism), sends each owner the distinct ids it
// needs of that owner's rows (owner-local indexes, 2, 4 or 8 bytes), the owners fetch those
// rows from their store as stored bytes (codes and scales, never decoded) and send them
// back packed, and the requester decodes them into its embeddings with the shared decode
// core. Per step: my ids copied to the host and planned there (deduplicated, grouped by
// owner: engine/owner_requests.hpp) — the step's one host wait — then over MPI on the host,
// where they are, the message sizes and per layer an all-to-all of ids (a few bytes per
// distinct id); per layer one all-to-all of rows over the group's communicator (NCCL, MPI
// through host copies, or MPI on the host). The sizes are known only on the host, so such
// steps are not captured in CUDA graphs.

#include <memory>
#include <vector>

#include "engine/exchange.hpp"
#include "engine/owner_requests.hpp"

namespace pleshard {

class OwnerExchange final : public Exchange {
 public:
  explicit OwnerExchange(const ExchangeContext& context);
  [[nodiscard]] const char* name() const override { return "owner"; }
  void run(std::int64_t tokens, StepMarks& marks, std::vector<EmbeddingView>& views) override;
  [[nodiscard]] std::int64_t max_query_ids() const override { return max_served_; }
  [[nodiscard]] bool capturable() const override { return false; }

 private:
  struct Layer {
    std::vector<std::int64_t> bounds;  // E + 1 row boundaries of the owners' ranges
    int id_bytes = 8;                  // of an owner-local index
    std::size_t pitch = 0;             // bytes of a packed row
    OwnerRequests requests;
    std::vector<std::uint8_t> received_ids;  // owner-local indexes peers asked of me, by peer
    Workspace::Region query, send_rows, received_rows, keys, out;
  };

  // My ETP group's ids (or rows) all-to-all: `counts[r]` entries of `bytes` each to and from
  // rank r, packed in rank order; a copy where the group is one rank.
  void all_to_all(const std::uint8_t* send, const std::vector<std::int64_t>& send_counts, std::uint8_t* recv,
                  const std::vector<std::int64_t>& recv_counts, std::size_t bytes);

  ExchangeContext ctx_;
  Communicator* group_;  // my ETP group on the space's memory; null for one rank
  int ranks_ = 1;
  int me_ = 0;
  std::int64_t max_ids_ = 0;     // per layer, of my tokens
  std::int64_t max_served_ = 0;  // per layer, that peers can ask of me
  std::vector<Layer> layers_;
  std::unique_ptr<HostBuffer> host_ids_;                   // [layers][max_ids]: my ids, from the space
  std::unique_ptr<HostBuffer> host_query_;                 // [layers][max_served]: the ids peers asked of me
  std::vector<std::int64_t> sizes_sent_, sizes_received_;  // [rank][layer] distinct ids
};

}  // namespace pleshard

// The hashing job on 1..4 ranks: the id digest equals one computed here on one process
// from whole requests, for several step budgets and decode tails.

#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/hash_job.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/ple_layer_spec.hpp"

namespace {

using namespace pleshard;

ModelConfig job_config() {
  return parse_model_config(nlohmann::json{{"vocab_size", 5000},
                                           {"eos_token_id", 3},
                                           {"num_hidden_layers", 6},
                                           {"ngram_size", 4},
                                           {"heads_per_ngram", 3},
                                           {"ple_embed_dim", 9 * 16},
                                           {"ngram_vocab_size_base", 1000},
                                           {"ple_layer_ids", {2, 4, 6}}},
                            "job config");
}

std::uint64_t whole_request_digest(const ModelConfig& config, const std::vector<Request>& requests) {
  std::uint64_t digest = 0;
  const int heads = config.total_heads();
  for (const auto& spec : derive_layer_specs(config)) {
    for (std::size_t r = 0; r < requests.size(); ++r) {
      TokenBatch batch(config.ngram_size);
      batch.add_request(requests[r].tokens, fresh_context(config.ngram_size, config.eos_token_id));
      const auto ids = compute_ngram_ids(spec, batch);
      for (std::size_t i = 0; i < ids.size(); ++i)
        digest += id_digest_term(static_cast<std::int64_t>(r), static_cast<std::int64_t>(i) / heads,
                                 spec.ple_index * heads + static_cast<std::int64_t>(i) % heads,
                                 ids[i]);
    }
  }
  return digest;
}

TEST(HashJob, DigestIsIndependentOfRanksAndSchedule) {
  const ModelConfig config = job_config();
  SyntheticRequestsSpec spec;
  spec.count = 23;  // not a multiple of any rank count used
  spec.min_tokens = 1;
  spec.max_tokens = 300;
  spec.vocab_size = config.vocab_size;
  auto requests = make_synthetic_requests(spec);
  requests[5].tokens.assign(40, config.eos_token_id);  // EOS runs
  requests[9].tokens[0] = config.eos_token_id;
  const std::uint64_t expected = whole_request_digest(config, requests);

  for (const StepSchedule schedule : {StepSchedule{1 << 20, 0}, StepSchedule{64, 0},
                                      StepSchedule{37, 5}, StepSchedule{1, 0}}) {
    const HashJobReport report = run_hash_job(MPI_COMM_WORLD, config, requests, schedule);
    EXPECT_EQ(report.id_digest, expected) << "step " << schedule.step_tokens;
    EXPECT_EQ(report.tokens, total_tokens(requests));
    EXPECT_EQ(report.ids, report.tokens * 9 * 3);
  }
}

TEST(HashJob, MoreRanksThanRequestsLeavesSomeIdle) {
  const ModelConfig config = job_config();
  std::vector<Request> one{{"only", {1, 2, 3, 4, 5}}};
  const HashJobReport report = run_hash_job(MPI_COMM_WORLD, config, one, StepSchedule{2, 1});
  EXPECT_EQ(report.id_digest, whole_request_digest(config, one));
  EXPECT_EQ(report.max_steps, 3);  // prefill 2 + 2 tokens, then the 1-token decode tail
}

TEST(AssignRequests, BalancesTokens) {
  std::vector<Request> requests;
  for (int i = 0; i < 10; ++i) requests.push_back({"", std::vector<std::int64_t>(100 * (i + 1))});
  const auto owner = assign_requests_by_tokens(requests, 3);
  std::vector<std::int64_t> load(3, 0);
  for (std::size_t r = 0; r < requests.size(); ++r) load[owner[r]] += requests[r].tokens.size();
  EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()),
            1000);
}

}  // namespace

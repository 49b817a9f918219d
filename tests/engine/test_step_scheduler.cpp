// The step scheduler: budgets, decode tails, and ids equal to processing requests whole.

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/error.hpp"
#include "hash/ngram_ids.hpp"
#include "hash/random_batches.hpp"
#include "job/step_scheduler.hpp"
#include "model/table_spec.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

std::vector<Request> as_requests(const std::vector<reference::Request>& in) {
  std::vector<Request> out;
  for (std::size_t i = 0; i < in.size(); ++i) out.push_back({std::to_string(i), in[i].tokens});
  return out;
}

TEST(StepScheduler, ScheduledIdsEqualWholeRequestIds) {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 40; ++trial) {
    const ModelConfig config = random_config(rng);
    const auto spec = derive_table_spec(config, 0);
    auto fresh = random_requests(rng, config, 8, 120);
    for (auto& r : fresh) r.context = fresh_context(config.ngram_size);
    const auto requests = as_requests(fresh);

    // Whole: every request in one batch, fresh context.
    const auto whole = compute_ngram_ids(spec, to_batch(config, fresh));
    std::vector<std::int64_t> first_row{0};
    for (const auto& r : requests) first_row.push_back(first_row.back() + static_cast<std::int64_t>(r.tokens.size()));

    const StepSchedule schedule{1 + static_cast<std::int64_t>(rng() % 64), static_cast<std::int64_t>(rng() % 20)};
    StepScheduler scheduler(requests, config.ngram_size, schedule);
    TokenBatch batch;
    std::vector<StepSlice> slices;
    std::vector<std::int64_t> scheduled(whole.size(), -1);
    const auto heads = static_cast<std::size_t>(config.total_heads());
    while (scheduler.next_step(batch, slices)) {
      ASSERT_LE(batch.num_tokens(), schedule.step_tokens + static_cast<std::int64_t>(slices.size()));
      std::map<std::int64_t, int> seen;
      for (const auto& s : slices) ASSERT_EQ(++seen[s.request], 1) << "request twice in a step";
      const auto ids = compute_ngram_ids(spec, batch);
      std::size_t row = 0;
      for (const auto& s : slices) {
        const std::size_t remaining = requests[s.request].tokens.size() - s.position;
        if (remaining <= static_cast<std::size_t>(schedule.decode_tokens)) {
          ASSERT_EQ(s.length, 1);
        }
        for (std::int64_t i = 0; i < s.length; ++i, ++row) {
          const auto dst = static_cast<std::size_t>(first_row[s.request] + s.position + i) * heads;
          std::copy_n(ids.begin() + static_cast<std::ptrdiff_t>(row * heads), heads,
                      scheduled.begin() + static_cast<std::ptrdiff_t>(dst));
        }
      }
    }
    EXPECT_EQ(scheduler.tokens_done(), static_cast<std::int64_t>(whole.size() / heads));
    ASSERT_EQ(scheduled, whole) << "trial " << trial;
  }
}

TEST(AssignRequests, BalancesTokens) {
  std::vector<Request> requests;
  for (int i = 0; i < 10; ++i) requests.push_back({"", std::vector<std::int64_t>(100 * (i + 1))});
  const auto owner = assign_requests_by_tokens(requests, 3);
  std::vector<std::int64_t> load(3, 0);
  for (std::size_t r = 0; r < requests.size(); ++r) load[owner[r]] += requests[r].tokens.size();
  EXPECT_LE(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()), 1000);
  EXPECT_EQ(assign_requests_by_tokens(requests, 3), owner) << "deterministic";
}

TEST(StepScheduler, RejectsBadBudgets) {
  EXPECT_THROW(StepScheduler({}, 3, StepSchedule{0, 0}), InputError);
  EXPECT_THROW(StepScheduler({}, 3, StepSchedule{8, -1}), InputError);
}

}  // namespace

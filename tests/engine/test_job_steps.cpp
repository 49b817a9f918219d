// The batch job's steps one after the other across parts (job/job_steps): every rank of every
// ETP group walks its group's steps, part after part from the first one not done; together the
// ranks' batches hold every token of those parts exactly once, each at the output row its
// slice names and in request order; each step's group token counts are the group's batches'
// sizes; and the progress the steps carry adds up to those parts' tokens and requests where
// one ETP group holds every DP rank (no other group's steps to miss), and to no more elsewhere.

#include <gtest/gtest.h>

#include <random>

#include "hash/random_batches.hpp"
#include "job/batch_job.hpp"
#include "job/job_steps.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

TEST(JobSteps, EveryTokenOfTheRemainingPartsOnceInOrder) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 30; ++trial) {
    const ModelConfig config = random_config(rng);
    std::vector<Request> requests;
    const int count = 1 + static_cast<int>(rng() % 24);
    for (int r = 0; r < count; ++r) {
      Request request{std::to_string(r), {}};
      const int length = 1 + static_cast<int>(rng() % 90);
      for (int t = 0; t < length; ++t) request.tokens.push_back(random_token(rng, config));
      requests.push_back(std::move(request));
    }
    std::vector<std::int64_t> qsl{0};
    for (const Request& r : requests) qsl.push_back(qsl.back() + static_cast<std::int64_t>(r.tokens.size()));
    const auto parts = split_parts(requests, 1 + static_cast<std::int64_t>(rng() % 200));
    const StepSchedule schedule{1 + static_cast<std::int64_t>(rng() % 40), static_cast<std::int64_t>(rng() % 4)};
    const int edp = 1 + static_cast<int>(rng() % 3);
    const int dp = edp * (1 + static_cast<int>(rng() % 3));
    const std::size_t first_part = rng() % parts.size();
    SCOPED_TRACE("trial " + std::to_string(trial) + ": dp " + std::to_string(dp) + ", edp " + std::to_string(edp) +
                 ", parts " + std::to_string(parts.size()) + " from " + std::to_string(first_part));
    const std::int64_t first_row = qsl[parts[first_part].first];
    const std::int64_t rows = qsl.back() - first_row;
    std::vector<int> seen(static_cast<std::size_t>(rows), 0);
    for (int group = 0; group < dp / edp; ++group) {
      std::vector<std::vector<JobStep>> walks(static_cast<std::size_t>(edp));
      for (int e = 0; e < edp; ++e) {
        JobSteps steps(requests, parts, first_part, qsl, dp, group * edp + e, group, edp, config, schedule);
        while (auto step = steps.next()) walks[static_cast<std::size_t>(e)].push_back(std::move(*step));
      }
      const std::size_t length = walks[0].size();
      std::int64_t tokens_done = 0;
      std::int64_t requests_done = 0;
      for (int e = 0; e < edp; ++e) {
        const auto& walk = walks[static_cast<std::size_t>(e)];
        ASSERT_EQ(walk.size(), length) << "the group steps together";
        for (std::size_t k = 0; k < walk.size(); ++k) {
          const JobStep& step = walk[k];
          EXPECT_GE(step.part, first_part);
          if (k > 0) {
            EXPECT_GE(step.part, walk[k - 1].part);
          }
          EXPECT_EQ(step.part, walks[0][k].part);
          EXPECT_EQ(step.group_tokens, walks[0][k].group_tokens);
          EXPECT_EQ(step.group_tokens[static_cast<std::size_t>(e)], step.batch.num_tokens());
          EXPECT_EQ(step.tokens_done, walks[0][k].tokens_done);
          ASSERT_EQ(step.slices.size(), step.slice_rows.size());
          std::int64_t at = 0;  // the slice's first token in the batch
          for (std::size_t s = 0; s < step.slices.size(); ++s) {
            const StepSlice& slice = step.slices[s];
            for (std::int64_t t = 0; t < slice.length; ++t) {
              const std::int64_t row = step.slice_rows[s] + t;
              ASSERT_GE(row, first_row);
              ASSERT_LT(row, qsl.back());
              ++seen[static_cast<std::size_t>(row - first_row)];
              // The row's request holds this token there.
              const auto r = static_cast<std::size_t>(std::upper_bound(qsl.begin(), qsl.end(), row) - qsl.begin() - 1);
              EXPECT_EQ(step.batch.tokens[static_cast<std::size_t>(at + t)],
                        requests[r].tokens[static_cast<std::size_t>(row - qsl[r])]);
            }
            at += slice.length;
          }
          EXPECT_EQ(at, step.batch.num_tokens());
        }
      }
      for (const JobStep& step : walks[0]) {
        tokens_done += step.tokens_done;
        requests_done += step.requests_done;
      }
      const auto requests_left = static_cast<std::int64_t>(requests.size() - parts[first_part].first);
      if (edp == dp) {
        EXPECT_EQ(tokens_done, rows);
        EXPECT_EQ(requests_done, requests_left);
      } else {
        EXPECT_LE(tokens_done, rows);
        EXPECT_LE(requests_done, requests_left);
      }
    }
    for (std::size_t row = 0; row < seen.size(); ++row)
      ASSERT_EQ(seen[row], 1) << "output row " << first_row + static_cast<std::int64_t>(row);
  }
}

}  // namespace

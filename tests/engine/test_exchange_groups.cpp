// The groups each exchange strategy declares, under every kind of layout.

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/exchange_groups.hpp"

namespace {

using namespace pleshard;
using G = ExchangeGroup;

Topology layout(int ranks, int tp, int etp) { return make_topology(ranks, 0, tp, etp); }

bool has(const std::vector<G>& groups, G g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); }

TEST(ExchangeGroups, GatherReduceGathersSlotsAndCombinesOverTheEtpGroup) {
  const auto groups = groups_for(ExchangeStrategy::gather_reduce, layout(8, 1, 4));
  EXPECT_EQ(groups, (std::vector<G>{G::etp_dp, G::etp}));
}

TEST(ExchangeGroups, ReduceScatterAlsoGathersTpShares) {
  const auto groups = groups_for(ExchangeStrategy::reduce_scatter, layout(8, 2, 4));
  EXPECT_EQ(groups, (std::vector<G>{G::etp_dp, G::etp, G::tp}));
}

TEST(ExchangeGroups, SequenceParallelCombinesOverTp) {
  for (const auto s : {ExchangeStrategy::gather_reduce, ExchangeStrategy::reduce_scatter}) {
    const auto groups = groups_for(s, layout(4, 2, 2));
    EXPECT_TRUE(has(groups, G::tp));
    EXPECT_FALSE(has(groups, G::etp));
  }
}

TEST(ExchangeGroups, OwnerStrategiesPlanOnTheHost) {
  const auto owner = groups_for(ExchangeStrategy::owner, layout(8, 1, 4));
  EXPECT_TRUE(has(owner, G::etp_host));
  EXPECT_FALSE(has(owner, G::etp_node));
  const auto hierarchical = groups_for(ExchangeStrategy::hierarchical, layout(8, 1, 4));
  for (const G g : {G::etp_dp, G::etp, G::etp_host, G::etp_node, G::etp_node_host, G::etp_cross, G::etp_cross_host})
    EXPECT_TRUE(has(hierarchical, g));
}

TEST(ExchangeGroups, NoneOpenByDefault) {
  const ExchangeGroups none;
  EXPECT_TRUE(none.on_space().empty());
  EXPECT_TRUE(none.named().empty());
  const ExchangeComms view = none.view();
  EXPECT_EQ(view.etp, nullptr);
  EXPECT_EQ(view.etp_cross_host, nullptr);
}

}  // namespace

// Which exchange a job gets: the automatic choice, the tiers and layouts that refuse one, and
// groups of one rank, where every strategy is the identity and is captured in CUDA graphs.
// Of the owner strategies, the flat one is captured over groups of several ranks too (in
// fixed-size messages); the two-level one merges on the host.

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "engine/exchange.hpp"

namespace {

using namespace pleshard;

TEST(ExchangeChoice, AutomaticIsOwnerForGroupsOfSeveralRanksWithoutGraphs) {
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), false}, false),
            ExchangeStrategy::owner);
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), true}, false),
            ExchangeStrategy::gather_reduce);
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 1), false}, false),
            ExchangeStrategy::gather_reduce);
}

TEST(ExchangeChoice, AutomaticIsPeerReadWhereTheGroupsReadOneCopy) {
  for (const bool graphs : {false, true}) {
    EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), graphs, true}, false),
              ExchangeStrategy::peer_read);
    EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 2, 2), graphs, true}, false),
              ExchangeStrategy::peer_read);
  }
  // A group of one rank reads its own rows: nothing to read in place.
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 1), false, true}, false),
            ExchangeStrategy::gather_reduce);
  // The disk tier: whole tables, nothing exchanged.
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(4, 0, 1, 4), false, true}, true),
            ExchangeStrategy::automatic);
}

TEST(ExchangeChoice, OwnerUnderGraphsTheTwoLevelFormOnlyWhereTheGroupIsOneRank) {
  for (const ExchangeStrategy s : {ExchangeStrategy::owner, ExchangeStrategy::hierarchical}) {
    SCOPED_TRACE(to_string(s));
    EXPECT_EQ(choose_exchange(s, {make_topology(4, 0, 1, 1), true}, false), s);
    EXPECT_EQ(choose_exchange(s, {make_topology(4, 0, 1, 2), false}, false), s);
  }
  EXPECT_EQ(choose_exchange(ExchangeStrategy::owner, {make_topology(4, 0, 1, 2), true}, false),
            ExchangeStrategy::owner);
  try {
    (void)choose_exchange(ExchangeStrategy::hierarchical, {make_topology(4, 0, 1, 2), true}, false);
    ADD_FAILURE() << "hierarchical accepted under graphs with ETP groups of 2";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be captured in CUDA graphs"), std::string::npos) << e.what();
  }
}

TEST(ExchangeChoice, TheDiskTierExchangesNothing) {
  EXPECT_EQ(choose_exchange(ExchangeStrategy::automatic, {make_topology(2, 0, 1, 2), false}, true),
            ExchangeStrategy::automatic);
  EXPECT_THROW((void)choose_exchange(ExchangeStrategy::owner, {make_topology(2, 0, 1, 2), false}, true), InputError);
}

}  // namespace

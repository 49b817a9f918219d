// Messages quote a user's value whole up to k_quoted_value_bytes, else its start (never cut
// inside a UTF-8 letter) and its length.

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace {

using namespace pleshard;

TEST(QuotedValue, WholeUpToTheLimitElseItsStartAndLength) {
  const std::string limit(k_quoted_value_bytes, 'a');
  EXPECT_EQ(quoted_value(limit), limit);
  EXPECT_EQ(quoted_value(""), "");
  const std::string longer(70000, 'a');
  EXPECT_EQ(quoted_value(longer), std::string(k_quoted_value_bytes / 2, 'a') + "... (70000 bytes)");
  // "è" is two bytes: one that would end half way through it is left out whole.
  std::string letters;
  while (letters.size() < 1000) letters += "\xc3\xa8";
  const std::string odd = "x" + letters;  // every letter starts at an even offset + 1
  const std::string quoted = quoted_value(odd);
  const std::string start = quoted.substr(0, quoted.find("..."));
  EXPECT_EQ(start, odd.substr(0, start.size()));
  EXPECT_EQ(start.size() % 2, 1u) << "a letter cut in two";
  EXPECT_EQ(quoted.substr(start.size()), "... (" + std::to_string(odd.size()) + " bytes)");
}

}  // namespace

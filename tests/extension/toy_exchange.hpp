#pragma once
// An exchange strategy defined outside the library, as a user of it would add one:
// "toy-gather", the group's slots gathered and looked up and the partial rows all-reduced
// (the library's parts, put together here), each step counted. Linking toy_exchange.cpp in
// registers it (docs/architecture.md, "Adding an exchange strategy").

#include "engine/exchange_strategy.hpp"

namespace toy_exchange {

inline constexpr const char* k_name = "toy-gather";

// The id the registry gave the strategy.
[[nodiscard]] pleshard::ExchangeStrategy strategy();
// Steps run through it in this process so far.
[[nodiscard]] int steps();
void reset_steps();

}  // namespace toy_exchange

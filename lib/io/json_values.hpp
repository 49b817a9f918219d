#pragma once
// Strict readers of JSON values shared by the request and batch file formats.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pleshard {

// Reads a list of 64-bit token ids into `out` (cleared first). Throws InputError
// "<where>: ..." on anything but a list of integers that fit int64.
void read_token_list(const nlohmann::json& value, const std::string& where, std::vector<std::int64_t>& out);

}  // namespace pleshard

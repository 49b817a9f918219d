// The engine option table (job/engine_option_table.hpp): its names agree with the ones the
// library's messages use, its defaults are the engine's own, and each entry sets and refuses
// what it says, with one message for every front end.

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "core/error.hpp"
#include "engine/engine_options.hpp"
#include "job/engine_option_table.hpp"

namespace {

using namespace pleshard;

// The command line's names of core/option_names are the table's: messages name options as
// --help does.
TEST(EngineOptionTable, NamesAreTheCommandLinesAndPythonsSpelling) {
  std::set<std::string> seen;
  for (const EngineOptionEntry& e : engine_option_table()) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name << " twice";
    if (e.commands != static_cast<unsigned>(EngineCommand::python) || e.option == Option::threads) {
      EXPECT_EQ(option_name(e.option), cli_name(e)) << "core/option_names spells " << e.name << " otherwise";
    }
    if (takes(e, EngineCommand::python)) {
      use_option_spelling(python_keyword_spelling());
      EXPECT_EQ(option_name(e.option), python_keyword(e));
      use_option_spelling(command_line_spelling());
    }
  }
}

// The defaults shown (--help, the docs, Python's signature) are the engine's initializers.
TEST(EngineOptionTable, DefaultsAreTheEnginesOwn) {
  const EngineOptions engine;
  const auto shown = [](Option o) { return value_text(*default_value(engine_option(o))); };
  EXPECT_EQ(shown(Option::collective_timeout), "600");
  EXPECT_EQ(std::stod(shown(Option::collective_timeout)), engine.collective_timeout_s);
  EXPECT_EQ(std::stoll(shown(Option::owner_gpu_plan_from)), engine.owner_gpu_plan_from);
  EXPECT_EQ(std::stoll(shown(Option::owner_fixed_below)), engine.owner_fixed_below);
  EXPECT_EQ(std::stod(shown(Option::cache_static)), engine.cache.static_share);
  EXPECT_EQ(shown(Option::host_reads), to_string(engine.host_reads));
  EXPECT_EQ(shown(Option::disk_reads), to_string(engine.disk_reads));
  EXPECT_EQ(shown(Option::out_dtype), to_string(engine.dtype));
  EXPECT_EQ(shown(Option::output_slots), std::to_string(k_default_output_slots));
  EXPECT_FALSE(default_value(engine_option(Option::etp)));  // optional: the library picks
}

TEST(EngineOptionTable, SetsWhatItNames) {
  EngineInputs inputs;
  BatchJobOptions job;
  int slots = 0;
  std::int64_t threads = 0;
  const EngineTarget target{&inputs, &job, &slots, &threads};
  set_option(engine_option(Option::step_tokens), std::int64_t{64}, target);
  set_option(engine_option(Option::disk_reads), std::string("direct"), target);
  set_option(engine_option(Option::cache_gb), 1.5, target);
  set_option(engine_option(Option::exchange), std::string("owner"), target);
  set_option(engine_option(Option::output_slots), std::int64_t{3}, target);
  set_option(engine_option(Option::cuda_graph), true, target);
  EXPECT_EQ(job.schedule.step_tokens, 64);
  EXPECT_EQ(job.disk_reads, PageCache::bypass);
  EXPECT_EQ(job.cache.gb, 1.5);
  EXPECT_EQ(inputs.exchange, "owner");
  EXPECT_EQ(slots, 3);
  EXPECT_TRUE(job.cuda_graph);
}

std::string refused(Option option, const OptionValue& value) {
  EngineInputs inputs;
  BatchJobOptions job;
  int slots = 0;
  std::int64_t threads = 0;
  try {
    set_option(engine_option(option), value, EngineTarget{&inputs, &job, &slots, &threads});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One message per refusal, the option named as the front end names it: the command line's
// CLI11 check writes "--name: " before the same refusal.
TEST(EngineOptionTable, RefusesOutOfRangeAndUnknownNames) {
  EXPECT_EQ(refused(Option::step_tokens, std::int64_t{0}),
            "--step-tokens: 0 is out of range: must be a whole number of tokens from 1 to 16777216");
  EXPECT_EQ(refused(Option::collective_timeout, 0.5),
            "--collective-timeout: 0.5 is out of range: must be from 1 to "
            "1e7 seconds");
  EXPECT_EQ(refused(Option::cache_static, std::nan("")),
            "--cache-static: nan is out of range: must be a share from 0 to 1");
  EXPECT_EQ(refused(Option::gpu_memory_limit, 0.0), "");  // 0: all that is free
  EXPECT_NE(refused(Option::gpu_memory_limit, 0.0001), "");
  EXPECT_EQ(refused(Option::disk_reads, std::string("sometimes")),
            "--disk-reads \"sometimes\": expected cached or direct");
  EXPECT_EQ(refused(Option::checkpoint, std::string()), "--checkpoint: empty path (an unset variable?); name the file");
  use_option_spelling(python_keyword_spelling());
  EXPECT_EQ(refused(Option::cache_rows, std::int64_t{-1}),
            "cache_rows: -1 is out of range: must be a whole number of rows >= 0");
  EXPECT_EQ(refused(Option::host_reads, std::string("always")),
            "host_reads=\"always\": expected auto, gather, uva or both");
  use_option_spelling(command_line_spelling());
}

// The command line's text: whole numbers as wide as written, no fraction, no word.
TEST(EngineOptionTable, ReadsTheCommandLinesText) {
  const EngineOptionEntry& rows = engine_option(Option::cache_rows);
  EXPECT_EQ(std::get<std::int64_t>(std::get<OptionValue>(value_of_text(rows, "9000000000000000001"))),
            9000000000000000001);
  EXPECT_EQ(std::get<std::string>(value_of_text(rows, "1.5")),
            "1.5 is out of range: must be a whole number of rows >= 0");
  EXPECT_EQ(std::get<std::string>(value_of_text(rows, "many")),
            "many is not a number: must be a whole number of rows >= 0");
}

}  // namespace

// A directory output appears whole or not at all: written aside, put in place at once over a
// missing, empty or earlier output's directory (nothing of the earlier one left beside it),
// refused before anything is written where the directory holds other files, and a writer
// that fails leaves the earlier output as it was.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "../ckpt/checkpoint_fixtures.hpp"
#include "core/error.hpp"
#include "io/partial_directory.hpp"

namespace {

using namespace pleshard;
using pleshard::testing_support::ScratchDir;
namespace fs = std::filesystem;

bool checkpoint_file(const std::string& name) { return name.rfind("part", 0) == 0 || name == "index"; }

void write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// What `dir`'s parent holds beside it (no .partial, no moved-aside copy).
std::set<std::string> siblings(const fs::path& dir) { return names_in(dir.parent_path()); }

TEST(PartialDirectory, AppearsOnlyWhenCommitted) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  {
    PartialDirectory d(out, checkpoint_file);
    write(d.partial() / "part1", "new");
    EXPECT_FALSE(fs::exists(out)) << "visible before commit";
    d.commit();
  }
  EXPECT_EQ(names_in(out), std::set<std::string>{"part1"});
  EXPECT_EQ(siblings(out), std::set<std::string>{"ckpt"});
}

TEST(PartialDirectory, TakesTheEmptyDirectorysPlace) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  fs::create_directory(out);
  PartialDirectory d(out, checkpoint_file);
  write(d.partial() / "part1", "new");
  d.commit();
  EXPECT_EQ(names_in(out), std::set<std::string>{"part1"});
}

TEST(PartialDirectory, ReplacesAnEarlierOutputWhole) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  fs::create_directory(out);
  for (const char* name : {"part1", "part2", "part3", "index"}) write(out / name, "old");
  PartialDirectory d(out, checkpoint_file);
  write(d.partial() / "part1", "new");
  EXPECT_EQ(read(out / "index"), "old") << "the earlier output changed before commit";
  d.commit();
  EXPECT_EQ(names_in(out), std::set<std::string>{"part1"}) << "the earlier output's index or parts left beside";
  EXPECT_EQ(read(out / "part1"), "new");
  EXPECT_EQ(siblings(out), std::set<std::string>{"ckpt"});
}

TEST(PartialDirectory, AFailedWriteLeavesTheEarlierOutput) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  fs::create_directory(out);
  write(out / "part1", "old");
  {
    PartialDirectory d(out, checkpoint_file);
    write(d.partial() / "part1", "half");
  }  // destroyed uncommitted, as when a write throws
  EXPECT_EQ(read(out / "part1"), "old");
  EXPECT_EQ(siblings(out), std::set<std::string>{"ckpt"});
}

TEST(PartialDirectory, RefusesADirectoryWithOtherFiles) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  fs::create_directory(out);
  write(out / "part1", "old");
  write(out / "tokenizer.json", "the user's");
  try {
    PartialDirectory d(out, checkpoint_file);
    FAIL() << "a directory holding another file was taken";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holds tokenizer.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(names_in(out), (std::set<std::string>{"part1", "tokenizer.json"}));
  EXPECT_EQ(siblings(out), std::set<std::string>{"ckpt"}) << "something was written beside it";
  // A subdirectory is no file of an earlier output either.
  fs::remove(out / "tokenizer.json");
  fs::create_directory(out / "part9");
  EXPECT_THROW(PartialDirectory(out, checkpoint_file), InputError);
}

TEST(PartialDirectory, AKilledWritersLeftoverIsRemoved) {
  const ScratchDir scratch;
  const fs::path out = scratch / "ckpt";
  fs::create_directory(out.string() + ".partial");
  write(out.string() + ".partial/part7", "killed");
  PartialDirectory d(out, checkpoint_file);
  write(d.partial() / "part1", "new");
  d.commit();
  EXPECT_EQ(names_in(out), std::set<std::string>{"part1"});
}

}  // namespace

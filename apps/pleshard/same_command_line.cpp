#include "same_command_line.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <vector>

#include <mpi.h>

#include "cli.hpp"
#include "core/collective.hpp"
#include "core/digest.hpp"
#include "core/same_on_every_rank.hpp"
#include "core/version.hpp"
#include "core/watched_collectives.hpp"
#include "help_format.hpp"
#include "option_checks.hpp"

namespace pleshard::app {

bool same_build_on_every_rank() {
  const BuildVersion build = build_version();
  const std::uint64_t mine = Digest().add(version_string()).add(build.commit).value();
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<std::uint64_t> builds(static_cast<std::size_t>(ranks));
  watched_allgather(&mine, builds.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD, "every rank's pleshard build");
  if (std::all_of(builds.begin(), builds.end(), [&](std::uint64_t b) { return b == builds.front(); })) return true;
  if (world_rank() == 0)
    std::fprintf(stderr,
                 "pleshard: error: the ranks run different pleshard builds (pleshard --version): every rank "
                 "must run the same\n");
  return false;
}

int agree_on(Answer mine, const char* what, const std::function<void(const Speaker&)>& speak) {
  int ranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  std::vector<int> answers(static_cast<std::size_t>(ranks));
  const int my_answer = static_cast<int>(mine);
  watched_allgather(&my_answer, answers.data(), 1, MPI_INT, MPI_COMM_WORLD, what);
  const auto gravest = std::max_element(answers.begin(), answers.end());  // the first, the lowest rank
  const bool every_rank = std::all_of(answers.begin(), answers.end(), [&](int a) { return a == *gravest; });
  if (*gravest == static_cast<int>(Answer::go_on)) return -1;
  if (*gravest == static_cast<int>(Answer::answered) && !every_rank) {
    if (world_rank() == 0)
      std::fprintf(stderr,
                   "pleshard: error: the command line: --help or --version on some ranks only: every rank "
                   "must be given the same\n");
    return 2;
  }
  speak({static_cast<int>(std::distance(answers.begin(), gravest)) == world_rank(), every_rank});
  return *gravest == static_cast<int>(Answer::answered) ? 0 : 2;
}

void print_error_line(const std::string& line, const Speaker& speaker) {
  const std::string plain = "pleshard: error: ";
  if (!speaker.for_every_rank && line.starts_with(plain))
    std::fprintf(stderr, "pleshard: rank %d: error: %s\n", world_rank(), line.substr(plain.size()).c_str());
  else
    std::fprintf(stderr, "%s\n", line.c_str());
}

namespace {

// An option's value as the command takes it: what was given, else its default; a path by
// whether it was given.
std::string effective_value(const CLI::Option& option) {
  if (value_name(&option) == "PATH") return option.count() > 0 ? "given" : "not given";
  if (option.count() == 0) return option.get_default_str();  // as given, where it is given as its default
  std::string value;
  for (const std::string& r : option.results()) value += (value.empty() ? "" : "\x1f") + r;
  return value;
}

}  // namespace

void require_same_command_line(const CLI::App& cli) {
  require_same_on_every_rank(
      MPI_COMM_WORLD, {{"the command", static_cast<std::int64_t>(Digest().add(command_given(cli)).value()), false}},
      "the command line");
  // The same command on every rank: the same options, in the same order.
  std::vector<RankSetting> options;
  for (const CLI::Option* option : command_parsed(cli).get_options()) {
    const std::string name = option->get_name();
    if (name == "--threads") continue;
    options.push_back({name, static_cast<std::int64_t>(Digest().add(effective_value(*option)).value()), false});
  }
  require_same_on_every_rank(MPI_COMM_WORLD, options, "the command line");
}

}  // namespace pleshard::app

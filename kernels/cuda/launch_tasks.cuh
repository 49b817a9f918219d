#pragma once
// The tasks of one launch of a step's kernels, held by value in the launch's parameters: a
// row of blocks each (blockIdx.y), so that a step's layers run side by side and a block
// finds its task without a search. The fused decode, the owner exchange's row packing and
// the row cache's stages launch their tasks so.

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "core/error.hpp"
#include "kernels/common/row_decode.hpp"

namespace pleshard::kernels {

template <typename Task>
struct LaunchTasks {
  int count = 0;
  Task tasks[k_max_step_layers];
  int index[k_max_step_layers] = {};  // each task's place among those the launch was given
};

// `tasks` as one launch's: those with rows (count > 0), or every one where `keep_empty`;
// `most` is the longest count. More than k_max_step_layers (the parameters' room) are
// refused with a SystemError naming `who`.
template <typename Task>
LaunchTasks<Task> launch_tasks(std::span<const Task> tasks, const char* who, std::int64_t& most,
                               bool keep_empty = false) {
  if (tasks.size() > static_cast<std::size_t>(k_max_step_layers))
    throw SystemError(std::string(who) + ": " + std::to_string(tasks.size()) + " tasks, at most " +
                      std::to_string(k_max_step_layers) + " per launch");
  LaunchTasks<Task> launch;
  most = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].count == 0 && !keep_empty) continue;
    launch.index[launch.count] = static_cast<int>(t);
    launch.tasks[launch.count++] = tasks[t];
    most = std::max(most, tasks[t].count);
  }
  return launch;
}

// `blocks` blocks for each of the launch's tasks.
template <typename Task>
dim3 launch_grid(int blocks, const LaunchTasks<Task>& launch) {
  return {static_cast<unsigned>(blocks), static_cast<unsigned>(launch.count)};
}

}  // namespace pleshard::kernels

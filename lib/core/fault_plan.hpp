#pragma once
// Faults a test makes a job suffer, to check that every rank ends it cleanly with one
// message and nothing that looks complete. The plan is set once, before the job: by the
// application from PLESHARD_FAULT_* (the shell tests under tests/apps) or by a unit test;
// the job's paths ask the plan (a few integers), never the environment.

#include <cstdint>
#include <optional>

namespace pleshard {

// Points of a job outside its steps where a rank can be made to stop: its start (the
// options parsed, before the inputs are read), each host-tier table's load (its node segment
// made, before its rows are read), the output's opening, and its end (the command done,
// before MPI_Finalize).
enum class FaultPoint { start, load, output, end };

struct FaultPlan {
  // At this step the GPU stream of rank `stall_rank` stalls, as a hung peer's would
  // (PLESHARD_FAULT_STALL_STEP, PLESHARD_FAULT_STALL_RANK).
  std::optional<std::uint64_t> stall_step;
  int stall_rank = 0;
  // Rank 0 is killed (SIGKILL) once this many output parts are recorded
  // (PLESHARD_FAULT_KILL_AFTER_PARTS).
  std::optional<std::uint64_t> kill_after_parts;
  // A process's embedding writes past this many bytes fail as on a full disk
  // (PLESHARD_FAULT_WRITE_LIMIT).
  std::optional<std::uint64_t> write_limit;
  // The maker of the node's shared copy of a table is killed (SIGKILL) once its group has
  // mapped the segment, before it fills it: a rank killed during a shared load
  // (PLESHARD_FAULT_KILL_IN_SHARED_LOAD=1).
  bool kill_in_shared_load = false;
  // This process's disk-tier reads of its submit of this index (0: the first — a step's
  // fetch, or a row cache's fill) fail as an I/O error would, on the thread that reads them
  // (PLESHARD_FAULT_DISK_READ_FAILURE, on the rank PLESHARD_FAULT_DISK_READ_FAILURE_RANK
  // names, 0 by default).
  std::optional<std::uint64_t> disk_read_failure;
  // Tables' host memory asks for no 2 MiB pages, reserved or transparent (and refuses
  // transparent ones where they are always on), as on a machine that offers none
  // (PLESHARD_FAULT_SMALL_PAGES=1).
  bool small_pages = false;
  // This process stops itself (SIGSTOP, as a frozen node or a stopped job step would) on
  // reaching this point (PLESHARD_FAULT_STOP_AT=start|load|output|end, on the rank
  // PLESHARD_FAULT_STOP_RANK names, 0 by default).
  std::optional<FaultPoint> stop_at;
  // The ranks that read a group's rows in GPU memory cannot map them, as where the
  // processes have no CUDA IPC between them (PLESHARD_FAULT_PEER_MAP=1).
  bool peer_map_failure = false;
  // Every step's decode starts this many microseconds late (a GPU kernel that sleeps
  // before it; the host sleeps), so that the next step's fetch, begun ahead, runs while
  // this one's rows wait to be decoded (PLESHARD_FAULT_DECODE_DELAY_US).
  std::uint64_t decode_delay_us = 0;
  // This process's pinned-tier host gather of this index (0: the first wait() whose rows the
  // host gathers) fails, after its plans and the GPU's share are enqueued
  // (PLESHARD_FAULT_HOST_GATHER_FAILURE).
  std::optional<std::uint64_t> host_gather_failure;
  // The engine takes this process's exchange to answer that the next step may not begin
  // beside the decode of steps whose slots hold 4k + 2 or 4k + 3 tokens, as a rank whose
  // store reads such steps' rows in place would where its peers' stores do not; the
  // engine's agreement then keeps the group's ranks in step (PLESHARD_FAULT_AHEAD_REFUSED=1,
  // on the rank PLESHARD_FAULT_AHEAD_REFUSED_RANK names, 0 by default).
  bool ahead_refused = false;
};

// The plan in force; none by default.
[[nodiscard]] const FaultPlan& fault_plan();
void set_fault_plan(const FaultPlan& plan);

// The plan the environment asks for, on the process of world rank `rank`; throws InputError
// naming a variable whose value is not a whole number, or not a point's name.
[[nodiscard]] FaultPlan fault_plan_from_environment(int rank);

// Where the job reaches `point`: stops this process if the plan says so.
void reach_fault_point(FaultPoint point);

}  // namespace pleshard

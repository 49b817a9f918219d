#pragma once
// What the ranks of a job serve — the config's values, the token map its family hashes
// through, the checkpoint's content — the same model on every rank, compared before any
// rank loads a row: ranks that load other tables or another width into one group's shared
// copy or exchange would write a blend of both models.

#include <mpi.h>

#include "ckpt/ple_checkpoint.hpp"
#include "model/model_config.hpp"

namespace pleshard {

// Collective over `comm`: returns where every rank has the same config (its values), token
// map (its ids) and checkpoint (PleCheckpoint::content_identity, whatever its path: a node
// may keep its copy elsewhere); otherwise AgreedError (bad input) on every rank naming the
// first that differs. A checkpoint file that fails a rank's read fails every rank.
void require_same_model(MPI_Comm comm, const ModelConfig& config, const PleCheckpoint& checkpoint);

}  // namespace pleshard

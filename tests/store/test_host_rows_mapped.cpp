// The host tier's rows from a safetensors checkpoint, as each rank holds them once its store
// is made: in memory of their own (a rank's own copy, or the node's shared one), never the
// checkpoint file's mapping, and every page of them mapped in each rank's page tables
// already, so that no step waits on a page fault. A job's first steps once took 10,700 page
// faults on each rank that only mapped the node's copy (docs/performance-log.md, "The first
// steps of a job from safetensors"). Checked against each rank's own reading of /proc/self/smaps;
// runs on 1 to 3 ranks (the shared copy needs 2).

#include <gtest/gtest.h>
#include <mpi.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "ckpt/checkpoint_fixtures.hpp"  // tests/ckpt
#include "ckpt/safetensors.hpp"
#include "ckpt/synthetic.hpp"
#include "core/smaps_reading.hpp"  // tests/core
#include "model/model_config.hpp"
#include "store/host_store.hpp"

namespace {

using namespace pleshard;
using namespace pleshard::testing_support;

// One bf16 table of 16 heads of 16 values and about 524K rows (17 MB: several 2 MiB pages).
ModelConfig config() {
  return parse_model_config(nlohmann::json{{"vocab_size", 1000},
                                           {"eos_token_id", 2},
                                           {"num_hidden_layers", 2},
                                           {"ngram_size", 3},
                                           {"heads_per_ngram", 8},
                                           {"ple_embed_dim", 256},
                                           {"ngram_vocab_size_base", 32768},
                                           {"split_ngram_parts", 1},
                                           {"ple_layer_ids", {1}}},
                            "mapped rows config");
}

class HostRowsMapped : public ::testing::Test {
 protected:
  void SetUp() override {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) write_checkpoint(dir_ / "st", config_, synthetic_tables(config_, RowFormat::bf16, 3), {});
    MPI_Barrier(MPI_COMM_WORLD);
    checkpoint_ = open_ple_checkpoint(dir_ / "st", config_);
  }

  // The rows of the whole table as a store shared over `share` holds them, each rank's view.
  void expect_mapped(MPI_Comm share) const {
    const RowRange all{0, checkpoint_->table(0).layout.rows};
    const HostStore store(*checkpoint_, std::vector<RowRange>{all}, share);
    const std::span<const std::uint8_t> rows = store.host_rows(0);
    const SmapsMapping mapping = smaps_mapping_of(rows.data());
    EXPECT_EQ(mapping.file.rfind(dir_.path().string(), 0), std::string::npos)
        << "the rows are read through the checkpoint's mapping " << mapping.file;
    EXPECT_GE(mapping.resident_bytes, rows.size())
        << "pages of the rows not mapped before the first step (" << mapping.file << ")";
  }

  ModelConfig config_ = config();
  SharedScratchDir dir_{"pleshard_host_rows_mapped"};
  std::unique_ptr<PleCheckpoint> checkpoint_;
};

TEST_F(HostRowsMapped, TheFileMappingOfTheCheckpointIsToldApart) {
  // What the checks below tell the rows from: the file's own mapping names the file.
  const SafetensorsFile file(dir_ / "st" / "model.safetensors");
  const SmapsMapping mapping = smaps_mapping_of(file.data(file.tensors().front()).data());
  EXPECT_EQ(mapping.file.rfind((dir_ / "st").string(), 0), 0u) << mapping.file;
}

TEST_F(HostRowsMapped, ARanksOwnCopy) { expect_mapped(MPI_COMM_NULL); }

TEST_F(HostRowsMapped, TheNodesSharedCopyOnEveryRank) { expect_mapped(MPI_COMM_WORLD); }

}  // namespace

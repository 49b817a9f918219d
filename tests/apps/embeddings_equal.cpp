// embeddings_equal A.h5 B.h5 LAYERS DTYPE: exit 0 when two `pleshard run` outputs hold the
// same request ids, boundaries and embedding bytes (files written by different rank counts
// differ in HDF5 metadata, so they are compared by content, not with cmp).

#include <cstdio>
#include <exception>
#include <string>

#include <mpi.h>

#include "format/embedding_reader.hpp"
#include "format/row_format.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: embeddings_equal A.h5 B.h5 LAYERS DTYPE\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    const int layers = std::stoi(argv[3]);
    const auto dtype = pleshard::parse_out_dtype(argv[4]);
    const auto a = pleshard::read_embeddings_h5(argv[1], layers, dtype);
    const auto b = pleshard::read_embeddings_h5(argv[2], layers, dtype);
    if (a.query_start_loc != b.query_start_loc || a.request_ids != b.request_ids) {
      std::printf("differ: requests\n");
      rc = 1;
    }
    for (int d = 0; d < layers && rc == 0; ++d)
      if (a.layers[static_cast<std::size_t>(d)] != b.layers[static_cast<std::size_t>(d)]) {
        std::printf("differ: layer %d\n", d);
        rc = 1;
      }
    if (a.query_start_loc.size() < 2) {
      std::printf("differ: no requests\n");
      rc = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embeddings_equal: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}

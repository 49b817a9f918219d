#include "core/rank_reduction.hpp"

#include "core/mpi_check.hpp"
#include "core/watched_collectives.hpp"

namespace pleshard {

namespace {

template <typename T>
void reduce(const std::vector<T*>& values, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (values.empty()) return;  // on every rank alike: they registered the same values
  std::vector<T> buffer;
  buffer.reserve(values.size());
  for (const T* v : values) buffer.push_back(*v);
  watched_allreduce(buffer.data(), mpi_count(buffer.size(), "report values"), type, op, comm,
                    "the report's values of every rank");
  for (std::size_t i = 0; i < values.size(); ++i) *values[i] = buffer[i];
}

}  // namespace

RankReduction& RankReduction::max(double& value) {
  max_doubles_.push_back(&value);
  return *this;
}

RankReduction& RankReduction::max(std::int64_t& value) {
  max_counts_.push_back(&value);
  return *this;
}

RankReduction& RankReduction::sum(double& value) {
  sum_doubles_.push_back(&value);
  return *this;
}

RankReduction& RankReduction::sum(std::int64_t& value) {
  sum_counts_.push_back(&value);
  return *this;
}

void RankReduction::run(MPI_Comm comm) {
  reduce(max_doubles_, MPI_DOUBLE, MPI_MAX, comm);
  reduce(max_counts_, MPI_INT64_T, MPI_MAX, comm);
  reduce(sum_doubles_, MPI_DOUBLE, MPI_SUM, comm);
  reduce(sum_counts_, MPI_INT64_T, MPI_SUM, comm);
}

}  // namespace pleshard

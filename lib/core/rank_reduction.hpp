#pragma once
// Values of a report reduced over ranks by name rather than by index into an array: each
// value is registered as the maximum or the sum over ranks, then run() replaces every one in
// place with one all-reduce per kind (maxima, sums; doubles and whole numbers apart, so that
// counts stay exact).

#include <cstdint>
#include <vector>

#include <mpi.h>

namespace pleshard {

class RankReduction {
 public:
  RankReduction& max(double& value);
  RankReduction& max(std::int64_t& value);
  RankReduction& sum(double& value);
  RankReduction& sum(std::int64_t& value);
  // Collective over `comm`: every rank registered the same values in the same order.
  void run(MPI_Comm comm);

 private:
  std::vector<double*> max_doubles_;
  std::vector<std::int64_t*> max_counts_;
  std::vector<double*> sum_doubles_;
  std::vector<std::int64_t*> sum_counts_;
};

}  // namespace pleshard

#include "hash/ngram_ids.hpp"

#include "kernels/host/ngram_ids_host.hpp"

namespace pleshard {

std::vector<std::int64_t> compute_ngram_ids(const TableSpec& spec, const TokenBatch& batch) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(batch.num_tokens()) *
                                static_cast<std::size_t>(spec.total_heads()));
  kernels::compute_ngram_ids_host(make_hash_params(spec), batch.view(), ids.data());
  return ids;
}

}  // namespace pleshard

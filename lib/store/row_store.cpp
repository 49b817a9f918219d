#include "store/row_store.hpp"

#include <string>

#include "core/error.hpp"

namespace pleshard {

void RowStore::check_queries(std::span<const RowQuery> queries) const {
  if (queries.size() != layouts_.size())
    throw SystemError("row store: " + std::to_string(queries.size()) + " queries for " +
                      std::to_string(layouts_.size()) + " layers");
}

}  // namespace pleshard

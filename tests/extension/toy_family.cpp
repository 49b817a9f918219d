#include "extension/toy_family.hpp"

#include <memory>

namespace toy_family {

namespace {

// Registered when the program starts, or by the first family() of another file's
// initializer, whichever comes first.
const pleshard::ModelFamily k_at_start = family();

}  // namespace

pleshard::ModelFamily family() {
  static const pleshard::ModelFamily id = pleshard::register_model_family(std::make_unique<ToyFamily>());
  return id;
}

}  // namespace toy_family

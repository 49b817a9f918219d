#include <deque>
#include <mutex>

#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "model/deepseek_engram.hpp"
#include "model/model_family.hpp"
#include "model/qwen4exp.hpp"

namespace pleshard {

namespace {

// The registry: the built-in families first, in the ids ModelFamily gives them.
class FamilyRegistry {
 public:
  static FamilyRegistry& instance() {
    static FamilyRegistry registry;
    return registry;
  }

  ModelFamily add(std::unique_ptr<const Family> family) {
    const std::lock_guard lock(lock_);
    if (family == nullptr || std::string(family->name()).empty())
      throw InputError("model family: a family needs a name");
    for (const auto& f : families_)
      if (std::string(f->name()) == family->name() || std::string(f->layers_key()) == family->layers_key())
        throw InputError(std::string("model family \"") + family->name() + "\": its name or its key " +
                         family->layers_key() + " is registered already");
    families_.push_back(std::move(family));
    return ModelFamily::of_id(static_cast<int>(families_.size()) - 1);
  }

  const Family& at(ModelFamily kind) {
    const std::lock_guard lock(lock_);
    if (kind.id() < 0 || static_cast<std::size_t>(kind.id()) >= families_.size())
      throw SystemError("model family " + std::to_string(kind.id()) + " is not registered");
    return *families_[static_cast<std::size_t>(kind.id())];
  }

  std::size_t size() {
    const std::lock_guard lock(lock_);
    return families_.size();
  }

 private:
  FamilyRegistry() {
    families_.push_back(std::make_unique<Qwen4ExpFamily>());
    families_.push_back(std::make_unique<DeepseekEngramFamily>());
  }

  std::mutex lock_;
  std::deque<std::unique_ptr<const Family>> families_;
};

}  // namespace

ModelFamily register_model_family(std::unique_ptr<const Family> family) {
  return FamilyRegistry::instance().add(std::move(family));
}

std::vector<ModelFamily> registered_families() {
  std::vector<ModelFamily> out;
  const auto n = static_cast<int>(FamilyRegistry::instance().size());
  for (int id = 0; id < n; ++id) out.push_back(ModelFamily::of_id(id));
  return out;
}

std::vector<std::string> family_keys() {
  std::vector<std::string> keys;
  for (const ModelFamily kind : registered_families()) {
    const Family& f = family_of(kind);
    keys.push_back(std::string(f.layers_key()) + " (" + f.title() + ")");
  }
  return keys;
}

std::string config_families() { return "; of the family whose layers key it has: " + or_list(family_keys()); }

const Family& family_of(ModelFamily kind) { return FamilyRegistry::instance().at(kind); }

}  // namespace pleshard

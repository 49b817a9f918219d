#include "store/disk_store.hpp"

#include <algorithm>
#include <cstring>

#include "core/band_pipeline.hpp"
#include "core/error.hpp"
#include "core/fault_plan.hpp"

namespace pleshard {

DiskStore::DiskStore(const PleCheckpoint& checkpoint, std::span<const RowRange> ranges, StepSpace& space,
                     PageCache reads)
    : checkpoint_(checkpoint), space_(space), reads_(reads) {
  if (checkpoint.reads_collectively())
    throw SystemError(checkpoint.path() + ": the disk tier needs a checkpoint opened for independent reads");
  if (ranges.size() != checkpoint.tables().size())
    throw SystemError("DiskStore: " + std::to_string(ranges.size()) + " row ranges for " +
                      std::to_string(checkpoint.tables().size()) + " tables");
  for (const PleTableInfo& info : checkpoint.tables()) {
    const RowRange range = ranges[layouts_.size()];
    if (range.begin < 0 || range.end > info.layout.rows || range.begin > range.end)
      throw SystemError("DiskStore: row range [" + std::to_string(range.begin) + ", " + std::to_string(range.end) +
                        ") outside table " + std::to_string(info.ple_index) + "'s " + std::to_string(info.layout.rows) +
                        " rows");
    layouts_.push_back(info.layout);
    ranges_.push_back(range);
    layers_.emplace_back(space);
    // The range's block scales, in bands of rows: each band's reads in flight together.
    const std::size_t scale_bytes = info.layout.scale_bytes();
    HostBytes& scales = layers_.back().table_scales;
    scales = HostBytes(static_cast<std::size_t>(range.size()) * scale_bytes,  // every band read below
                       "disk tier: table " + std::to_string(info.ple_index) + "'s block scales");
    const auto band = static_cast<std::int64_t>(items_per_band(scale_bytes == 0 ? 1 : scale_bytes));
    for (std::int64_t begin = range.begin; scale_bytes != 0 && begin < range.end; begin += band) {
      const std::int64_t end = std::min(range.end, begin + band);
      checkpoint.read_rows(info.ple_index, begin, end, {},
                           scales.span().subspan(static_cast<std::size_t>(begin - range.begin) * scale_bytes,
                                                 static_cast<std::size_t>(end - begin) * scale_bytes));
    }
  }
  for (auto& tasks : tasks_) tasks.resize(layers_.size());
  failing_submit_ = fault_plan().disk_read_failure;
  make_plans(0);
}

void DiskStore::reserve(std::int64_t max_ids) {
  if (max_ids <= planned_ids_) return;
  make_plans(max_ids);
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const StagedBytes bytes = staged_bytes(d, max_ids, plans_[0]->plans_on_gpu());
    for (Staged& staged : layers_[d].staged) {
      if (bytes.keys != 0) staged.keys.reserve(bytes.keys);
      staged.rows.reserve(bytes.rows);
      staged.scales.reserve(bytes.scales);
    }
  }
}

std::vector<std::vector<std::int64_t>> DiskStore::plan_bounds() const {
  std::vector<std::vector<std::int64_t>> bounds;
  for (const RowRange& range : ranges_) bounds.push_back({range.begin, range.end});
  return bounds;
}

DiskStore::StagedBytes DiskStore::staged_bytes(std::size_t layer, std::int64_t max_ids, bool gpu_plans) const {
  // At least a byte each, as SpaceBuffer::assign takes for nothing.
  const auto ids = static_cast<std::size_t>(max_ids);
  const auto rows = std::min(ids, static_cast<std::size_t>(ranges_[layer].size()));
  const bool keys_staged = space_.on_device() && !gpu_plans;  // stage_keys
  return {keys_staged ? std::max<std::size_t>(1, ids * sizeof(std::int64_t)) : 0,
          std::max<std::size_t>(1, rows * layouts_[layer].row_bytes()),
          std::max<std::size_t>(1, rows * layouts_[layer].scale_bytes())};
}

std::uint64_t DiskStore::step_buffer_bytes(std::int64_t max_ids) const {
  const std::vector<std::vector<std::int64_t>> bounds = plan_bounds();
  const bool gpu_plans = StepRowPlans::would_plan_on_gpu(space_, bounds, max_ids);
  std::uint64_t bytes = StepRowPlans::space_bytes(space_, bounds, max_ids);
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const StagedBytes b = staged_bytes(d, max_ids, gpu_plans);
    bytes += b.keys + b.rows + b.scales;
  }
  return 2 * bytes;  // two turns
}

std::uint64_t DiskStore::step_bytes_held() const {
  std::uint64_t bytes = 2 * StepRowPlans::space_bytes(space_, plan_bounds(), planned_ids_);
  for (const Staging& s : layers_)
    for (const Staged& staged : s.staged)
      bytes += staged.keys.capacity() + staged.rows.capacity() + staged.scales.capacity();
  return bytes;
}

void DiskStore::make_plans(std::int64_t max_ids) {
  const std::vector<std::vector<std::int64_t>> bounds = plan_bounds();
  std::unique_ptr<StepRowPlans> made[2];
  for (auto& plans : made) plans = std::make_unique<StepRowPlans>(space_, bounds, max_ids);
  for (int turn = 0; turn < 2; ++turn) plans_[turn] = std::move(made[turn]);
  planned_ids_ = max_ids;
}

std::vector<RowRange> DiskStore::whole_tables(const PleCheckpoint& checkpoint) {
  std::vector<RowRange> ranges;
  for (const PleTableInfo& info : checkpoint.tables()) ranges.push_back({0, info.layout.rows});
  return ranges;
}

void DiskStore::submit(std::span<const RowQuery> queries) {
  check_queries(queries);
  // A submit never waited for: its reads end before their buffers change.
  try {
    reader_.finish();
  } catch (...) {  // its step was abandoned, and its failure with it
  }
  checkpoint_.check_unchanged();
  turn_ = 1 - turn_;
  // Every layer's distinct rows, then all their reads in flight together.
  plan(queries);
  sets_.clear();
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Staging& s = layers_[d];
    s.host_rows.resize(distinct_[d].size() * checkpoint_.table(static_cast<int>(d)).layout.row_bytes());
    // Codes only: the scales are in memory.
    sets_.push_back({static_cast<int>(d), distinct_[d], s.host_rows, {}, queries[d].bulk});
  }
  const bool fails = failing_submit_ == submits_++;
  const auto read = [this, fails] {
    if (fails)
      throw InputError(checkpoint_.path() + ": reading a step's rows: Input/output error (a test's fault: " +
                       "PLESHARD_FAULT_DISK_READ_FAILURE)");
    try {
      checkpoint_.read_row_sets(sets_, reads_);
    } catch (const InputError&) {
      checkpoint_.check_unchanged();  // a file changed since the check above: say so
      throw;
    }
  };
  if (checkpoint_.reads_row_sets_on_any_thread()) {  // HDF5 through its library stays here (see the header)
    reader_.start(read);
  } else {
    read();
  }
  try {
    for (std::size_t d = 0; d < layers_.size(); ++d) stage_keys(static_cast<int>(d), queries[d]);
  } catch (...) {
    try {
      reader_.finish();
    } catch (...) {  // the staging's failure is the one to report
    }
    throw;
  }
}

std::span<const kernels::DecodeTask> DiskStore::wait() {
  reader_.finish();
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    Staging& s = layers_[d];
    // From pageable memory: host_rows has been read when this returns.
    Staged& staged = s.staged[turn_];
    staged.rows.assign(std::span<const std::uint8_t>(s.host_rows));
    tasks_[turn_][d].rows.rows = staged.rows.data();
  }
  return tasks_[turn_];
}

void DiskStore::plan(std::span<const RowQuery> queries) {
  StepRowPlans& plans = *plans_[turn_];
  planned_on_gpu_ = plans.plans_on_gpu() && std::all_of(queries.begin(), queries.end(),
                                                        [this](const RowQuery& q) { return q.count <= planned_ids_; });
  for (std::size_t d = 0; d < layers_.size(); ++d) {
    const auto layer = static_cast<int>(d);
    const auto n = static_cast<std::size_t>(queries[d].count);
    if (planned_on_gpu_ || !space_.on_device()) {  // the host space's ids are on the host
      plans.plan_in_space(layer, queries[d].ids, queries[d].count);
    } else {
      std::vector<std::int64_t>& host_ids = layers_[d].host_ids;
      host_ids.resize(n);
      space_.copy_to_host(host_ids.data(), queries[d].ids, n * sizeof(std::int64_t));
      plans.plan_on_host(layer, host_ids);
    }
  }
  plans.distinct_on_host(distinct_);
}

void DiskStore::stage_keys(int layer, const RowQuery& query) {
  Staging& s = layers_[static_cast<std::size_t>(layer)];
  const PleTableInfo& info = checkpoint_.table(layer);
  const std::size_t scale_bytes = info.layout.scale_bytes();
  const std::vector<std::int64_t>& distinct = distinct_[static_cast<std::size_t>(layer)];
  s.host_scales.resize(distinct.size() * scale_bytes);
  for (std::size_t r = 0; scale_bytes != 0 && r < distinct.size(); ++r)
    std::memcpy(
        s.host_scales.data() + r * scale_bytes,
        s.table_scales.data() +
            static_cast<std::size_t>(distinct[r] - ranges_[static_cast<std::size_t>(layer)].begin) * scale_bytes,
        scale_bytes);
  // Copies from pageable memory: the host vectors have been read when these return. The keys
  // are where the decode reads them already unless the plan was made on the host of a GPU.
  Staged& staged = s.staged[turn_];
  const StepRowPlans& plans = *plans_[turn_];
  const std::int64_t* keys = plans.keys(layer);
  if (plans.on_host() && space_.on_device()) {
    staged.keys.assign(std::span(keys, static_cast<std::size_t>(query.count)));
    keys = staged.keys.as<std::int64_t>();
  }
  staged.scales.assign(std::span<const std::uint8_t>(s.host_scales));
  const kernels::TableView packed{info.layout.format,
                                  info.layout.head_dim,
                                  0,
                                  static_cast<std::int64_t>(distinct.size()),
                                  nullptr,  // the rows, once wait() has staged them
                                  scale_bytes == 0 ? nullptr : staged.scales.data(),
                                  info.global_scale};
  tasks_[turn_][static_cast<std::size_t>(layer)] = {packed, keys, query.count, nullptr};
}

}  // namespace pleshard

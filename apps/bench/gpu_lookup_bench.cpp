#include <algorithm>
#include <memory>
#include <string>

#include "bench/gpu_benches.hpp"
#include "bench/gpu_timing.hpp"
#include "core/parallel.hpp"
#include "exec/cuda_step_space.hpp"
#include "exec/step_kernels.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/lookup_cuda.hpp"
#include "store/gpu_store.hpp"
#include "store/gpu_table.hpp"

namespace pleshard {

namespace {

// How the pinned tier reads: through UVA, or gathered by the host on every core.
PinnedReads pinned_reads(const LookupBenchOptions& o, HostReads host) {
  PinnedReads reads;
  reads.host = host;
  reads.uva_blocks_per_sm = o.uva_blocks_per_sm >= 0 ? o.uva_blocks_per_sm : kernels::k_uva_gather_blocks_per_sm;
  reads.host_threads = host_cores();
  return reads;
}

// Device-tier lookups of the step's ids run beside the pinned lookup in the overlap case.
constexpr int k_device_lookups_beside = 8;

// The pinned tier's fetch started on its side stream (submit) while the device tier looks
// the step's ids up k_device_lookups_beside times on the space's stream, then joined and
// decoded (wait), as a step overlaps them; each side is also timed alone, which gives the
// share of the device work hidden behind the pinned fetch. The device table has
// o.beside_rows rows (0: as many as the pinned one) and is looked up at the ids modulo
// that, so that a large table beside a small one shows what the two sizes cost together.
// Both outputs are checked.
LookupBenchResult bench_pinned_beside_device(const TableSource& source, const std::vector<std::int64_t>& ids,
                                             const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o,
                                             RowFormat format, double row_bytes, double out_row_bytes) {
  const std::unique_ptr<StepSpace> space = make_cuda_space();
  const RowRange whole{0, o.rows};
  const std::int64_t beside_rows = o.device_rows_beside();
  const TableSource beside_source = bench_table(bench_config(format, beside_rows, o.head_dim), format, beside_rows);
  std::vector<std::int64_t> beside_ids(ids);
  for (auto& id : beside_ids) id %= beside_rows;
  const std::vector<std::uint8_t> beside_expected =
      beside_rows == o.rows ? expected : expected_output(beside_source, beside_ids, o.out_dtype);
  GpuStore pinned({&source, 1}, {&whole, 1}, StorageTier::pinned, *space, MPI_COMM_NULL,
                  pinned_reads(o, HostReads::uva));
  GpuTable device(beside_source, {0, beside_rows}, StorageTier::device);
  const auto n = static_cast<std::int64_t>(ids.size());
  SpaceBuffer d_ids(*space);
  SpaceBuffer d_beside_ids(*space);
  SpaceBuffer pinned_out(*space);
  SpaceBuffer device_out(*space);
  d_ids.assign(std::span<const std::int64_t>(ids));
  d_beside_ids.assign(std::span<const std::int64_t>(beside_ids));
  pinned_out.reserve(std::max<std::size_t>(1, expected.size()));
  device_out.reserve(std::max<std::size_t>(1, expected.size()));
  pinned.reserve(n);
  const auto* d = d_ids.as<std::int64_t>();
  const auto* d_beside = d_beside_ids.as<std::int64_t>();
  const cudaStream_t stream = stream_of(*space);
  const auto device_work = [&] {
    for (int i = 0; i < k_device_lookups_beside; ++i)
      device.lookup(d_beside, n, o.out_dtype, device_out.data(), stream);
  };
  const RowQuery query{d, n};
  const auto pinned_finish = [&] {
    kernels::DecodeTask task = pinned.wait().front();
    task.out = pinned_out.data();
    decode_step(*space, {&task, 1}, o.out_dtype);
  };
  const double pinned_alone = gpu_median_seconds(
      [&] {
        pinned.submit({&query, 1});
        pinned_finish();
      },
      o.min_repeats, o.min_seconds, nullptr, stream);
  const double device_alone = gpu_median_seconds(device_work, o.min_repeats, o.min_seconds, nullptr, stream);
  LookupBenchResult r{"pinned|device", format, (1 + k_device_lookups_beside) * n};
  r.seconds = gpu_median_seconds(
      [&] {
        pinned.submit({&query, 1});
        device_work();
        pinned_finish();
      },
      o.min_repeats, o.min_seconds, nullptr, stream);
  r.hidden = device_alone > 0 ? (pinned_alone + device_alone - r.seconds) / device_alone : 0;
  r.bytes = static_cast<double>(r.ids) * (row_bytes + out_row_bytes);
  r.wrong = count_wrong_rows(pinned_out.to_host<std::uint8_t>(expected.size()), expected,
                             static_cast<std::size_t>(out_row_bytes)) +
            count_wrong_rows(device_out.to_host<std::uint8_t>(beside_expected.size()), beside_expected,
                             static_cast<std::size_t>(out_row_bytes));
  return r;
}

// The GPU tier's lookup and a plain byte gather of the same rows, checked against the
// reference row by row.
void bench_gpu_table(StorageTier tier, const TableSource& source, const std::vector<std::int64_t>& ids,
                     const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o, RowFormat format,
                     double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results,
                     HostReads host = HostReads::uva) {
  const GpuTable table(source, {0, o.rows}, tier, pinned_reads(o, host));
  kernels::DeviceBuffer<std::int64_t> d_ids(ids.size());
  kernels::DeviceBuffer<std::uint8_t> d_out(expected.size());
  d_ids.copy_from_host(std::span<const std::int64_t>(ids));
  PLESHARD_CUDA_CHECK(cudaMemset(d_out.data(), 0xCD, d_out.bytes()));
  const auto n = static_cast<std::int64_t>(ids.size());
  const bool gathered = host == HostReads::gather;
  LookupBenchResult r{std::string(to_string(tier)) + (gathered ? "-gather" : ""), format, n};
  r.ceiling = std::string(to_string(tier)) + "-plain";
  r.seconds = gpu_median_seconds([&] { table.lookup(d_ids.data(), n, o.out_dtype, d_out.data(), nullptr); },
                                 o.min_repeats, o.min_seconds);
  r.bytes = static_cast<double>(n) * (row_bytes + out_row_bytes);
  std::vector<std::uint8_t> got(expected.size());
  d_out.copy_to_host(std::span<std::uint8_t>(got));
  PLESHARD_CUDA_CHECK(cudaDeviceSynchronize());
  r.wrong = count_wrong_rows(got, expected, static_cast<std::size_t>(out_row_bytes));
  results.push_back(r);
  if (gathered) return;

  // Baseline: the stored row bytes, gathered one warp per row without decoding.
  const kernels::TableView view = table.view();
  const std::size_t stored = view.row_stride();  // codes and, interleaved, NVFP4 block scales
  kernels::DeviceBuffer<std::uint8_t> d_raw(ids.size() * stored);
  LookupBenchResult plain{std::string(to_string(tier)) + "-plain", format, n};
  plain.seconds = gpu_median_seconds(
      [&] { kernels::gather_rows_plain_cuda(view.rows, stored, d_ids.data(), n, d_raw.data(), nullptr); },
      o.min_repeats, o.min_seconds);
  plain.bytes = 2.0 * static_cast<double>(n) * static_cast<double>(stored);
  results.push_back(plain);
}

}  // namespace

void bench_gpu_tier(StorageTier tier, const TableSource& source, const std::vector<std::int64_t>& ids,
                    const std::vector<std::uint8_t>& expected, const LookupBenchOptions& o, RowFormat format,
                    double row_bytes, double out_row_bytes, std::vector<LookupBenchResult>& results) {
  bench_gpu_table(tier, source, ids, expected, o, format, row_bytes, out_row_bytes, results);
  if (tier != StorageTier::pinned) return;
  // The same lookups with the rows gathered by the host and copied up at once.
  bench_gpu_table(tier, source, ids, expected, o, format, row_bytes, out_row_bytes, results, HostReads::gather);
  // After the tables above are freed: the case holds a pinned and a device copy of its own.
  results.push_back(bench_pinned_beside_device(source, ids, expected, o, format, row_bytes, out_row_bytes));
}

}  // namespace pleshard

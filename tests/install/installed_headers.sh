#!/usr/bin/env bash
# The installed package holds the public API and nothing else: its headers are the ones a
# consumer needs (the umbrella, the engine with its options, views and errors, the checkpoint
# and config readers, the version), every one of them complete (each header it includes is
# installed beside it), and none of the internals (detail/, kernel launchers, the stores'
# and the batch job's own machinery).
#   installed_headers.sh BUILD_DIR
set -euo pipefail
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
cd "$prefix/include/pleshard"
python3 - <<'PY'
import os, re, sys
installed = sorted(os.path.relpath(os.path.join(d, f)) for d, _, fs in os.walk(".") for f in fs)
public = ["pleshard.hpp", "engine/ple_engine.hpp", "engine/embed.hpp", "job/run_job.hpp", "job/run_report.hpp",
          "job/batch_job.hpp", "ckpt/ple_checkpoint.hpp", "ckpt/synthetic.hpp", "model/model_config.hpp",
          "core/error.hpp", "core/version.hpp", "dist/topology.hpp", "hash/token_batch.hpp", "format/row_format.hpp",
          "store/storage_tier.hpp"]
internal = re.compile(r"(^|/)detail/|^kernels/(cuda|host)/|\.cuh$|\.cu$|\.cpp$|"
                      r"^store/(host_store|host_table|gpu_store|gpu_table|pinned_rows|disk_store|tier_memory)\.hpp$|"
                      r"^engine/(owner_exchange|owner_requests|owner_routing|owner_service|hierarchical_exchange|slot_lookup|slot_exchange|"
                      r"gather_reduce_exchange|reduce_scatter_exchange|local_exchange)\.hpp$|^job/(job_output|output_description)\.hpp$|"
                      r"^ckpt/(hdf5_rows|hdf5_stored_chunks|hdf5_ple|safetensors|safetensors_ple)\.hpp$|"
                      r"^exec/(cuda_graph|cuda_step_space|step_kernels)\.hpp$|"
                      r"^dist/(nccl_communicator|staged_communicator|gpu_binding)\.hpp$|"
                      r"^io/(durable_file|mapped_file|output_target|npy_array|json_values)\.hpp$|^profile/")
failed = []
failed += [f"public header missing: {h}" for h in public if h not in installed]
failed += [f"internal header installed: {h}" for h in installed if internal.search(h)]
for h in installed:
    for line in open(h):
        m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
        if m and not (os.path.exists(m.group(1)) or os.path.exists(os.path.join(os.path.dirname(h), m.group(1)))):
            failed.append(f"{h} includes \"{m.group(1)}\", which is not installed")
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print(f"installed headers: {len(installed)} public, no internal ones:")
print("  " + " ".join(installed))
PY

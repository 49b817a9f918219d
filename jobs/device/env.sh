# Sourced by the device jobs: the repository root as working directory, $out (results, from
# $OUT), $build and $app, and the environment every run there needs (root under Open MPI;
# NVLink multicast off in NCCL on shared hosts).
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
out=${OUT:-out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
build=${BUILD:-build-h200}
app=$build/bin/pleshard

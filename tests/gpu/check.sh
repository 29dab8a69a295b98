#!/usr/bin/env bash
# The GPU check (docs/cuda.md), for a machine with an NVIDIA GPU; under 5
# minutes on an H200. Builds with CUDA, runs the CUDA engine's parity test
# against the CPU engine (both reference fixtures and the paper's 130M
# configuration with random weights; f32, tf32, bf16; hooks, row selection)
# with the CPU tests it stands on, then prints the benchmark table.
#   BUILD_DIR (default build-gpu)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-gpu}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPNSCOPE_CUDA=ON | grep "gpnscope:"
cmake --build "$build" -j "$(nproc)" --target gpnscope gpnscope_cuda test_cuda_engine test_kernel_math test_parity \
  bench_cuda_engine -- --no-print-directory >/dev/null
[[ -f "$build/gpnscope_cuda.so" ]] || { echo "check.sh: the CUDA engine was not built (no nvcc found?)"; exit 1; }
echo "=== CPU tests the kernels stand on ==="
(cd "$build" && ctest --output-on-failure -R 'test_(kernel_math|parity)$')
echo "=== parity: CUDA engine against the CPU engine ==="
# run directly: under ctest a skip (exit 77) would pass quietly, and here it must run
set +e
(cd "$build" && GPNSCOPE_FIXTURES="$root/tests/fixtures" timeout 240 ./tests/test_cuda_engine)
rc=$?
set -e
[[ $rc == 77 ]] && { echo "check.sh: the CUDA test skipped on a machine meant to have a GPU"; exit 1; }
[[ $rc == 0 ]] || { echo "check.sh: CUDA parity failed (exit $rc)"; exit 1; }
echo "=== benchmark ==="
"$build/bench/bench_cuda_engine"

#!/usr/bin/env bash
# Run every benchmark (each prints its own table of ratios against a ceiling
# measured in the same run) and collect the output in one file. Benchmarks
# are not tests: run them on a quiet machine. docs/performance.md quotes a run.
#   BUILD_DIR  the build folder (default build)     OUT  output file (default bench-results.txt)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${OUT:-$root/bench-results.txt}"
cd "$root"
{
  echo "# gpnscope benchmarks, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -m)"
  for b in engine cuda_engine store_ceiling tokenize analyze train; do
    [[ -x "$build/bench/bench_$b" ]] || { echo "(bench_$b not built)"; continue; }
    echo; echo "## bench_$b"
    "$build/bench/bench_$b" 2>&1
  done
  echo; echo "## bench_record_vs_eval"
  BUILD_DIR="$build" "$root/bench/record_vs_eval.sh" 2>&1
  echo; echo "## bench_python_vs_eval"
  BUILD_DIR="$build" "$root/bench/python_vs_eval.sh" 2>&1
} | tee "$out"

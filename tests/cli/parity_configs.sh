#!/usr/bin/env bash
# The engine against an independent float64 numpy implementation of
# docs/gpn-model.md on configurations the companion fixtures do not cover:
# several layers, the decoder bias, odd sizes, GPN with a bias. The same
# parity program checks the companion fixtures (test_parity).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir parity_configs
ref="$GPNSCOPE_SOURCE/tests/reference/gpn_reference.py"
#            name        arch  V   d  e  f  H dk dv N bias B T  seed
configs=("m2bias      gpn_m  61  24 10 30 4  6  5 2 1    2 30 11"
         "m3          gpn_m  50  17 9  21 2  5  7 3 0    3 16 12"
         "m1h1        gpn_m  40  12 8  16 1  4  4 1 1    2 20 13"
         "gpnbias     gpn    70  20 12 28 0  0  0 1 1    2 25 14")
args=()
for c in "${configs[@]}"; do
  read -r name arch V d e f H dk dv N bias B T seed <<<"$c"
  "$py" "$ref" make "$dir/$name" "$arch" "$V" "$d" "$e" "$f" "$H" "$dk" "$dv" "$N" "$bias" "$B" "$T" "$seed"
  args+=("$dir/$name.weights.safetensors" "$dir/$name.expect.safetensors")
done
exec "$GPNSCOPE_BUILD/tests/test_parity" "${args[@]}"

#!/usr/bin/env bash
# bench/record_vs_eval: recording end to end (every position's state at f16,
# the per-head rows, the token rows, into a fresh store) against `eval` on the
# same windows of the shipped model, in the same run: the ratio is what
# recording costs beyond the forward pass (goal <= 1.2; docs/performance.md).
# Best of REPS runs each (default 3). Not a test: numbers depend on the machine.
#   BUILD_DIR (default build), WINDOWS (16), SEQ_LEN (1024), REPS (3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${BUILD_DIR:-$root/build}/gpnscope"
model="$root/models/gpnm-small/model.safetensors"
tok="$root/third_party/llama2-tokenizer.json"
corpus="$root/data/corpus/heldout.jsonl"
for f in "$bin" "$model" "$tok" "$corpus"; do
  [[ -e "$f" ]] || { echo "bench_record_vs_eval: $f is missing (run ./scripts/setup.sh)"; exit 0; }
done
W="${WINDOWS:-16}" L="${SEQ_LEN:-1024}" reps="${REPS:-3}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
sel=(--model "$model" --tokenizer "$tok" --corpus "$corpus" --seq-len "$L" --windows "$W" --batch 16)
best() { # CMD...: the least wall time of $reps runs, in seconds
  local b=""
  for _ in $(seq "$reps"); do
    rm -f "$tmp"/s.db*
    local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N)
    b=$(python3 -c "import sys; t=float(sys.argv[2])-float(sys.argv[1]); b=sys.argv[3]; print(t if not b or t < float(b) else b)" "$t0" "$t1" "$b")
  done
  echo "$b"
}
te=$(best "$bin" eval "${sel[@]}")
tr=$(best "$bin" record "${sel[@]}" --db "$tmp/s.db" --dtype f16 --positions all --quiet)
python3 - "$te" "$tr" "$W" "$L" <<'PY'
import sys
te, tr, W, L = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
n = W * L
print(f"shipped GPN+M, {W} windows x {L} tokens ({n} tokens), best of runs")
print(f"  eval    {te:7.2f} s  {n / te:9.0f} tok/s")
print(f"  record  {tr:7.2f} s  {n / tr:9.0f} tok/s  (f16 states at every position, head rows)")
print(f"  record / eval = {tr / te:.2f}  (goal <= 1.2)")
PY

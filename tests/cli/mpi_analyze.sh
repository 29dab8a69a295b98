#!/usr/bin/env bash
# Sharded analysis (docs/scale.md): `mpirun -n K gpnscope analyze --shards`
# with K = 1, 2 and 3 (and more ranks than shards) over the shards of a
# 3-rank recording gives the geometry that `gpnscope analyze` stores for the
# merged store, every scalar and eigenvalue to 1e-9 relative (the same sums
# in another order: ~1e-12 here), with all states and with a --max-states
# prefix that cuts inside a shard. Skipped when the build has no MPI.
set -euo pipefail
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
bin="$GPNSCOPE_BIN"
if [[ "${GPNSCOPE_WITH_MPI:-OFF}" != ON ]]; then echo "skip: this build has no MPI (install libopenmpi-dev, reconfigure)"; exit 77; fi
mpirun="${GPNSCOPE_MPIEXEC:-mpirun}"
command -v "$mpirun" >/dev/null || { echo "skip: no $mpirun"; exit 77; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
mpi() { local k="$1"; shift; "$mpirun" -q --oversubscribe --allow-run-as-root -n "$k" "$@"; }
dir="$GPNSCOPE_BUILD/test-scratch/mpi_analyze"; rm -rf "$dir"; mkdir -p "$dir/corpus"
model="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }

"$py" "$(dirname "${BASH_SOURCE[0]}")/random_shards.py" "$dir/corpus" $((101 * 24)) 11
args=(--model "$model" --corpus "$dir/corpus" --seq-len 24 --batch 5 --quiet)
mpi 3 "$bin" record "${args[@]}" --db "$dir/study.db" >/dev/null
shards=("$dir/study.rank-"{0,1,2}"-of-3.db")
"$bin" merge --quiet "$dir/study.db" "${shards[@]}" >/dev/null && ok "recorded with 3 ranks and merged" || bad "record/merge"

# compare SHARDED.json with the merged store's stored geometry (settings: max_states, skip)
compare() {
  "$py" - "$1" "$dir/study.db" "$2" <<'PY'
import json, sqlite3, sys
got = json.load(open(sys.argv[1]))["geometry"]
db = sqlite3.connect(sys.argv[2])
aid = db.execute("select id from analyses where name = 'geometry' and json_extract(settings, '$.max_states') = ?",
                 (int(sys.argv[3]),)).fetchone()[0]
want = dict(db.execute("select key, value from analysis_scalars where analysis_id = ?", (aid,)))
eig = [y for (y,) in db.execute("select y from analysis_series where analysis_id = ? and series = 'eigenvalues'"
                               " order by idx", (aid,))]
worst, n = 0.0, 0
for k, v in want.items():
    if k not in got: continue
    worst = max(worst, abs(got[k] - v) / max(abs(v), 1e-300)); n += 1
top = max(eig)
for a, b in zip(got["eigenvalues"], eig):  # small eigenvalues relative to the largest
    worst = max(worst, abs(a - b) / top); n += 1
assert len(got["eigenvalues"]) == len(eig) and n > 20, (n, len(eig))
print("%d values, worst relative difference %.1e" % (n, worst))
sys.exit(0 if worst < 1e-9 else 1)
PY
}
for max in 0 500; do
  "$bin" analyze "$dir/study.db" --only geometry --max-states "$max" >/dev/null || bad "analyze the merged store"
  for k in 1 2 3 5; do
    if mpi "$k" "$bin" analyze --shards "${shards[@]}" --max-states "$max" >"$dir/k$k.json" 2>"$dir/k$k.err"; then
      r="$(compare "$dir/k$k.json" "$max")" && ok "--max-states $max, -n $k: equals the merged store's geometry: $r" \
        || bad "--max-states $max, -n $k: differs: $r"
    else bad "--max-states $max, -n $k: $(cat "$dir/k$k.err")"; fi
  done
done

# refusals, each in one line
msg="$("$bin" analyze --shards "$dir/study.db" 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope analyze: "*"not a shard"* ]] && ok "a merged store is not a shard: $msg" || bad "not a shard: $msg"
msg="$("$bin" analyze --shards "${shards[@]}" --only horizon 2>&1 >/dev/null || true)"
[[ "$msg" == *"only geometry is reduced over shards"* ]] && ok "other analyses name the way: merge" || bad "--only: $msg"

echo "mpi_analyze: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

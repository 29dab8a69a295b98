#!/usr/bin/env bash
# bench/mpi_scale: recording throughput against the number of MPI ranks, and
# the sharded geometry (mpirun -n K gpnscope analyze --shards) against the
# merged store's (gpnscope analyze), at the paper's 130M GPN+M configuration
# with random weights (bench_random_model) on a short random corpus. The
# ceiling: K ranks cannot beat min(K, cores) x one rank's tokens/s, and each
# rank loads the model and owns its BLAS threads (OPENBLAS_NUM_THREADS=1
# here, so ranks do not oversubscribe cores). Also the peak RSS of one
# analysing rank at two corpus sizes: the states are streamed, so it is set
# by d (a d x d covariance), not by the number of states; and retention's.
# The probe likewise (merged against sharded, and its RSS at 1x and 4x), cut
# to PROBE_LAGS (2: lags 1 and 2) and one split, since each lag is a d x d
# ridge solve and a decode against the whole vocabulary. The load average is
# printed first and last: a shared machine's numbers are only read with it.
# Not a test: numbers depend on the machine (docs/scale.md).
#   BUILD_DIR (build), RANKS ("1 2"), WINDOWS (8), SEQ_LEN (256), QUICK=1 (a small model),
#   PROBE_LAGS (2; 0 leaves the probe out)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"; bin="$build/gpnscope"
command -v mpirun >/dev/null || { echo "bench_mpi_scale: no mpirun (install openmpi-bin)"; exit 0; }
[[ -x "$build/bench/bench_random_model" ]] || { echo "bench_mpi_scale: build bench_random_model first"; exit 0; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OPENBLAS_NUM_THREADS=1
W="${WINDOWS:-8}" L="${SEQ_LEN:-256}" ranks="${RANKS:-1 2}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$build/bench/bench_random_model" "$tmp/model.safetensors" ${QUICK:+--quick}
mkdir -p "$tmp/corpus" "$tmp/big"
python3 "$root/tests/cli/random_shards.py" "$tmp/corpus" $((W * L)) 1
python3 "$root/tests/cli/random_shards.py" "$tmp/big" $((4 * W * L)) 2
sel=(--model "$tmp/model.safetensors" --seq-len "$L" --batch "$W" --positions all --dtype f16 --quiet)
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); python3 -c "print('%.3f' % (float('$t1') - float('$t0')))"; }
echo "cores: $(nproc); $W windows x $L tokens = $((W * L)) tokens, f16 states at every position"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
one=""
for k in $ranks; do
  rm -f "$tmp"/s*.db*
  t=$(secs mpirun -q --oversubscribe -n "$k" "$bin" record "${sel[@]}" --corpus "$tmp/corpus" --db "$tmp/s$k.db")
  [[ -z "$one" ]] && one=$(python3 -c "print($W * $L / $t)")
  python3 -c "
k, t, n, one, cores = $k, $t, $W * $L, $one, $(nproc)
print(f'record -n {k}: {t:6.2f} s  {n / t:8.1f} tok/s  ceiling {min(k, cores) * one:8.1f} tok/s ({n / t / (min(k, cores) * one):.0%})')"
done
k=$(echo "$ranks" | awk '{print $NF}')
shards=("$tmp/s$k.rank-"*"-of-$k.db")
"$bin" merge --quiet "$tmp/m.db" "${shards[@]}" >/dev/null
tm=$(secs "$bin" analyze "$tmp/m.db" --only geometry --max-states 0)
ts=$(secs mpirun -q --oversubscribe -n "$k" "$bin" analyze --shards "${shards[@]}" --only geometry --max-states 0)
echo "geometry of $((W * L)) states: merged store $tm s, $k ranks over $k shards $ts s"
P="${PROBE_LAGS:-2}"
probe=(--only probe --max-states 0 --probe-splits 1 --probe-max-lag "$P")
if [[ $P -gt 0 ]]; then
  tm=$(secs "$bin" analyze "$tmp/m.db" "${probe[@]}")
  ts=$(secs mpirun -q --oversubscribe -n "$k" "$bin" analyze --shards "${shards[@]}" "${probe[@]}")
  echo "probe (lags up to $P, one split) of $((W * L)) states: merged store $tm s, $k ranks over $k shards $ts s"
fi
# peak RSS of one rank at 1x and 4x the states: run without mpirun (one rank), so GNU time
# measures gpnscope itself, not the launcher
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
# (one-rank recordings of both corpora: a shard of the K-rank one may be empty when K exceeds the batches)
mpirun -q -n 1 "$bin" record "${sel[@]}" --corpus "$tmp/corpus" --db "$tmp/small1.db" >/dev/null
r1=$(rss "$bin" analyze --shards "$tmp/small1.rank-0-of-1.db" --only geometry,default,horizon --max-states 0)
mpirun -q -n 1 "$bin" record "${sel[@]}" --corpus "$tmp/big" --db "$tmp/big1.db" >/dev/null
r4=$(rss "$bin" analyze --shards "$tmp/big1.rank-0-of-1.db" --only geometry,default,horizon --max-states 0)
echo "peak RSS of an analysing rank (geometry, default, horizons): $r1 KB for $((W * L)) states, $r4 KB for $((4 * W * L)) states"
# retention holds its shard's decays (rows x H x 2 floats) and (boot+1) x max_lag x (2H+2) double sums
r1=$(rss "$bin" analyze --shards "$tmp/small1.rank-0-of-1.db" --only retention)
r4=$(rss "$bin" analyze --shards "$tmp/big1.rank-0-of-1.db" --only retention)
echo "peak RSS of a rank's retention: $r1 KB for $((W * L)) rows, $r4 KB for $((4 * W * L)) rows"
if [[ $P -gt 0 ]]; then # the model (its embedding) and about 3 d x d + 2 d x e doubles, whatever the states
  r1=$(rss "$bin" analyze --shards "$tmp/small1.rank-0-of-1.db" "${probe[@]}")
  r4=$(rss "$bin" analyze --shards "$tmp/big1.rank-0-of-1.db" "${probe[@]}")
  echo "peak RSS of a rank's probe: $r1 KB for $((W * L)) states, $r4 KB for $((4 * W * L)) states"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

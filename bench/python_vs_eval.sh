#!/usr/bin/env bash
# bench/python_vs_eval: `run_with_cache` of the Python package (the state
# state.pred of every token captured into numpy, and the mean NLL) against
# `gpnscope eval` on the same windows of the shipped GPN+M, each a whole
# process (start, load, run), best of REPS interleaved runs each, wall and CPU
# time: what the Python path costs beyond the forward pass (goal <= 1.1,
# issue 36; docs/performance.md). The two mean NLLs must agree (the same windows).
# Not a test: numbers depend on the machine.
#   BUILD_DIR (default build), WINDOWS (64), SEQ_LEN (1024), REPS (2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bin="$build/gpnscope" lib="$build/libgpnscope.so" model="$root/models/gpnm15-small"
for f in "$bin" "$lib"; do [[ -e "$f" ]] || { echo "bench_python_vs_eval: $f is missing (build first)"; exit 0; }; done
W="${WINDOWS:-64}" L="${SEQ_LEN:-1024}" reps="${REPS:-2}" py=/usr/bin/python3
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
# one document of W x L random ids: window w is ids [w L, (w + 1) L)
PYTHONPATH="$root/tests/cli/lib" "$py" -c "
import random, sys
from testdata import write_shards
r = random.Random(36)
write_shards(sys.argv[1], [r.randrange(3, 32000) for _ in range(int(sys.argv[2]))], 32000)" "$tmp" $((W * L))
cat > "$tmp/run.py" <<'PY'
import sys
import numpy as np
import gpnscope
W, L = int(sys.argv[3]), int(sys.argv[4])
toks = np.fromfile(sys.argv[2] + "/data_0000.bin", dtype="<u4")[:W * L].reshape(W, L)
m = gpnscope.load(sys.argv[1])
loss, cache = m.run_with_cache(toks, names_filter="state.pred", return_type="loss")
assert cache["state.pred"].shape == (W, L, m.cfg["d_state"])
print(repr(loss))
PY
# the two interleaved, REPS times each (so a change of the machine's load hits both), wall and CPU time
PYTHONPATH="$root/tests/cli/lib" "$py" - "$reps" "$W" "$L" "$tmp" -- \
  "$bin" eval --model "$model" --corpus "$tmp" --seq-len "$L" --windows "$W" --batch "$W" --json -- \
  env GPNSCOPE_LIB="$lib" PYTHONPATH="$root/python" "$py" "$tmp/run.py" "$model" "$tmp" "$W" "$L" <<'PY'
import json, resource, subprocess, sys, time
reps, W, L, tmp = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rest = sys.argv[6:]
cut = rest.index("--")
cmds = {"eval": rest[:cut], "run_with_cache": rest[cut + 1:]}
best, out = {k: [1e30, 1e30] for k in cmds}, {}
for _ in range(reps):
    for k, cmd in cmds.items():
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
        out[k] = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        t, r1 = time.time() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        best[k] = [min(best[k][0], t), min(best[k][1], cpu)]
ev, pl = json.loads(out["eval"])["mean_nll"], float(out["run_with_cache"])
n = W * L
print(f"shipped GPN+M, {W} windows x {L} tokens ({n} tokens), batch {W}, whole processes, best of {reps} each")
for k, what in (("eval", f"mean NLL {ev!r}"), ("run_with_cache", f"mean NLL {pl!r}  (state.pred of every token)")):
    print(f"  {k:15s} wall {best[k][0]:7.2f} s  {n / best[k][0]:6.0f} tok/s   CPU {best[k][1]:7.2f} s   {what}")
print(f"  run_with_cache / eval = {best['run_with_cache'][0] / best['eval'][0]:.2f} wall, "
      f"{best['run_with_cache'][1] / best['eval'][1]:.2f} CPU time  (goal <= 1.1)")
assert abs(ev - pl) <= 1e-9 * abs(ev), "the mean NLLs differ: not the same windows"
PY

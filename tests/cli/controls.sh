#!/usr/bin/env bash
# gpnscope controls (record/controls.h, issue 39.3): a run's untrained and
# shuffled controls are runs of the same store with its settings; the
# untrained model is the family's initialisation (ones, zeros and the
# initialiser's ranges, not the trained weights); the shuffled windows hold
# the same tokens as the run's, token 0 in place, in another order; the
# default run stays the controlled one; analyze reports each rule beside the
# controls' own stored numbers; a second call keeps what is recorded; a
# control of a control is refused in one line.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
need_sqlite3
record_scratch controls "$((40 * 32))" 5
db="$dir/s.db"
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 32 --windows 40 --batch 8 --db "$db" --quiet >/dev/null
"$bin" controls "$db" --quiet > out.txt 2> err.txt || bad "controls: $(cat err.txt)"
grep -q "recorded run 2: the untrained control of run 1" out.txt &&
  grep -q "recorded run 3: the shuffled control of run 1" out.txt &&
  ok "controls records runs 2 (untrained) and 3 (shuffled) of run 1" || bad "controls said: $(cat out.txt)"

q() { sqlite3 "$db" "$1"; }
settings() { q "select json_extract(settings, '\$.seq_len') || ',' || json_extract(settings, '\$.windows') || ',' ||
                       r.batch || ',' || r.states || ',' || json_extract(settings, '\$.positions') from runs r where r.id = $1"; }
[[ "$(settings 2)" == "$(settings 1)" && "$(settings 3)" == "$(settings 1)" && "$(settings 1)" == "32,40,8,pred,all" ]] &&
  ok "each control has the run's window length, windows, batch, recorded sites and positions ($(settings 1))" ||
  bad "settings: $(settings 1) / $(settings 2) / $(settings 3)"
[[ "$(q "select json_extract(settings, '\$.control.kind') || ':' || json_extract(settings, '\$.control.of') from runs
         where id > 1 order by id" | tr '\n' ' ')" == "untrained:1 shuffled:1 " ]] &&
  ok "their settings name the kind and the run" || bad "control settings"
sha() { q "select m.sha256 from runs r join models m on m.id = r.model_id where r.id = $1"; }
untrained="$(q "select m.path from runs r join models m on m.id = r.model_id where r.id = 2")"
[[ "$(sha 3)" == "$(sha 1)" && "$(sha 2)" != "$(sha 1)" && "$untrained" == "$db.controls/run-1-untrained-seed1/model.safetensors" ]] &&
  ok "the shuffled control runs the trained model, the untrained one its own file beside the store" ||
  bad "models: $(sha 1) $(sha 2) $(sha 3) $untrained"

# the untrained model is the trainer's initialisation (engine/tape/train_init.h), not the fixture's weights
"$py" - "$untrained" "$model" <<'PY' && ok "the untrained model is the initialisation: norms 1, gates and biases 0, A_log = log U(0, 16), softplus(dt_bias) in [1e-4, 0.1], embedding sd 0.02" || bad "the untrained model is not the initialisation"
import sys
import numpy as np
from testdata import read_safetensors
hdr, f = read_safetensors(sys.argv[1])
_, trained = read_safetensors(sys.argv[2])
norms = [k for k in hdr if k.endswith("norm_w")]
zeros = [k for k in hdr if k.endswith("_b") or k in ("fg_gate_k", "L0_pg_gate_k", "L0_ffn_w2_k")]
assert norms and all(np.all(f(k) == 1) for k in norms), "norms"
assert zeros and all(np.all(f(k) == 0) for k in zeros), "zeros"
a = np.exp(f("write_A_log").astype(np.float64))
assert np.all((a > 0) & (a <= 16)), a
dt = np.log1p(np.exp(f("write_dt_bias").astype(np.float64)))
assert np.all((dt >= 0.99e-4) & (dt <= 0.1001)), dt
sd = f("embedding").std()
assert 0.017 < sd < 0.023, sd
assert not np.allclose(f("embedding"), trained("embedding")), "trained weights"
PY

# the shuffled windows: the run's tokens, token 0 in place, in another order
"$py" - "$db" <<'PY' && ok "each shuffled window is a permutation of the run's window with its first token kept" || bad "shuffled windows"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
win = lambda r: {w: [t for _, t in sorted(rows)] for w, rows in
                 __import__("itertools").groupby(db.execute("select window, position, token_id from tokens where run_id = ? order by window, position", (r,)), key=lambda x: x[0]) for rows in [[(p, t) for _, p, t in rows]]}
a, b = win(1), win(3)
assert a.keys() == b.keys() and len(a) == 40
moved = 0
for w in a:
    assert sorted(a[w]) == sorted(b[w]) and a[w][0] == b[w][0], w
    moved += sum(x != y for x, y in zip(a[w], b[w]))
assert moved > 0.8 * 40 * 31, moved
PY

# the default run of analyze is the controlled one; its verdicts carry the controls' stored numbers
"$bin" analyze "$db" --json --quiet > an.json 2> err.txt || bad "analyze: $(cat err.txt)"
sqlite3 -json "$db" "select a.run_id, a.name, s.key, s.value from analysis_scalars s join analyses a on a.id = s.analysis_id
  where a.run_id in (2, 3) and s.key in ('norm_ratio', 'c1', 'content_horizon_002', 'pool_lr', 'pool_lr_from_start')" > ctl.json
"$py" - an.json ctl.json <<'PY' && ok "analyze picks run 1 and reports each control's stored numbers and verdict" || bad "analyze's controls"
import json, math, sys
an, rows = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert an["run"] == 1, an["run"]
want = {}
for r in rows:
    want[(r["run_id"], r["key"])] = r["value"]
f = an["findings"]
for name, keys in (("default_direction", ["norm_ratio"]), ("content_horizon", ["c1", "content_horizon_002"]),
                   ("memory_pools", ["pool_lr", "pool_lr_from_start"])):
    c = f[name]["controls"]
    assert c["untrained"]["run"] == 2 and c["shuffled"]["run"] == 3, c
    assert c["untrained"]["decides"] is True and c["shuffled"]["decides"] is False
    for kind, run in (("untrained", 2), ("shuffled", 3)):
        assert c[kind]["verdict"] in ("present", "absent", "inconclusive", "not demonstrated"), c[kind]
        for k in keys:
            assert math.isclose(c[kind][k], want[(run, k)], rel_tol=1e-12), (name, kind, k, c[kind][k], want[(run, k)])
    assert "Its controls" in f[name]["text"], f[name]
PY

"$bin" controls "$db" > again.txt 2>&1 || bad "controls again: $(cat again.txt)"
grep -q "run 2 is already the untrained control of run 1" again.txt &&
  [[ "$(q "select count(*) from runs")" == 3 ]] && ok "a second call keeps the recorded controls" || bad "again: $(cat again.txt)"
"$bin" controls "$db" --run 3 > /dev/null 2> err.txt && bad "a control of a control was accepted" ||
  { [[ $(wc -l < err.txt) == 1 ]] && grep -q "run 3 is the shuffled control of run 1: name the run it controls (--run 1)" err.txt &&
    ok "a control of a control: $(cat err.txt)" || bad "control of a control: $(cat err.txt)"; }
"$bin" controls "$db" --seed 5 > /dev/null 2> err.txt && bad "another seed over a recorded control was accepted" ||
  { [[ $(wc -l < err.txt) == 1 ]] && grep -q "run 2 is already run 1's untrained control, recorded with seed 1" err.txt &&
    ok "another seed: $(cat err.txt)" || bad "another seed: $(cat err.txt)"; }
"$bin" controls "$db" --only sideways > /dev/null 2> err.txt && bad "--only sideways accepted" ||
  { [[ $(wc -l < err.txt) == 1 ]] && ok "--only sideways: $(cat err.txt)" || bad "--only: $(cat err.txt)"; }
finish

#!/usr/bin/env bash
# Did training move the decays? (analyses/state/decay_init.h, issue 18.5) On a tiny
# GPN+M trained here, whose initial A_log / dt_bias the trainer keeps in the
# checkpoint's metadata: analyze's time constants, their largest change and
# the Spearman of initial and trained equal a numpy recomputation from the
# checkpoint; the finding says whether they moved; a checkpoint whose "initial"
# values are its trained ones barely moved (1.00x, Spearman +1); one without
# initial values is compared with the initialisation's distribution only.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir decay_init shards; cd "$dir"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
random_shards shards $((200 * 32)) 8
cat > c.json <<JSON
{"model": {"arch": "gpn_m", "vocab_size": 97, "d_state": 16, "d_emb": 8, "d_ffn": 24, "n_heads": 6, "d_key": 4, "d_val": 4},
 "data": {"train": "shards", "seq_len": 32, "batch_size": 4},
 "training": {"steps": 40, "seed": 3, "threads": 1},
 "optimizer": {"learning_rate": 0.05, "warmup_steps": 2},
 "output": {"dir": "run", "checkpoint_every": 0}}
JSON
"$bin" train --config c.json --quiet >/dev/null 2>err.txt || { bad "train: $(cat err.txt)"; }
model="$dir/run/model.safetensors"

check() { # MODEL DB LABEL: record, analyze retention, compare with numpy
  "$bin" record --model "$1" --corpus shards --seq-len 32 --windows 40 --db "$2" --quiet >/dev/null
  "$bin" analyze "$2" --only retention > "$2.txt" 2>&1 || { bad "$3: analyze: $(cat "$2.txt")"; return; }
  sqlite3 -json "$2" "select s.key, s.value from analysis_scalars s join analyses a on a.id = s.analysis_id where a.name = 'retention'
    union all select x.series || ':' || x.idx, x.y from analysis_series x join analyses a on a.id = x.analysis_id
    where a.name = 'retention' and x.series like 'tau_param%'" > "$2.json"
  "$py" - "$1" "$2.json" "$3" <<'PY'
import json, struct, sys
import numpy as np
path, res, label = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]
got = {r["key"]: r["value"] for r in res}
from testdata import read_safetensors
hdr, f32 = read_safetensors(path); meta = hdr.get("__metadata__", {})
tensor = lambda name: f32(name).reshape(-1).astype(np.float64)
sp = lambda x: np.log1p(np.exp(x))
tau = 1 / (np.exp(tensor("write_A_log")) * sp(tensor("write_dt_bias")))
H = len(tau)
assert np.allclose([got["tau_param:%d" % h] for h in range(H)], tau, rtol=1e-9), "tau"
# P(1 / (A dt) <= t), A ~ U(0, 16), ln dt ~ U(ln 1e-3, ln 1e-1), by a fine grid in ln dt
dt = np.exp(np.linspace(np.log(1e-3), np.log(1e-1), 200001))
pct = [100 * np.mean(np.clip(1 - 1 / (t * dt) / 16, 0, 1)) for t in tau]
assert np.allclose([got["tau_param_init_percentile:%d" % h] for h in range(H)], pct, atol=0.05), "percentiles"
if "init_write_A_log" not in meta:
    assert got["decays_init_known"] == 0 and "decays_moved" not in got, got
    print(label, ": no initial values, percentiles", np.round(pct, 1)); sys.exit(0)
a0 = np.array([float(x) for x in meta["init_write_A_log"].split(",")]); d0 = np.array([float(x) for x in meta["init_write_dt_bias"].split(",")])
tau0 = 1 / (np.exp(a0) * sp(d0))
dl = np.abs(np.log(tau) - np.log(tau0))
rank = lambda v: np.argsort(np.argsort(v))
rho = np.corrcoef(rank(tau0), rank(tau))[0, 1]
assert got["decays_init_known"] == 1
assert abs(got["decays_max_abs_dlog_tau"] - dl.max()) < 1e-9 and abs(got["decays_median_abs_dlog_tau"] - np.median(dl)) < 1e-9, "dlog"
assert abs(got["decays_init_spearman"] - rho) < 1e-9, (got["decays_init_spearman"], rho)
moved = dl.max() >= np.log(2) and rho < 0.9
assert got["decays_moved"] == moved, (got["decays_moved"], moved)
print(label, ": max change %.3fx, Spearman %+.3f, moved %d" % (np.exp(dl.max()), rho, moved))
PY
}
check "$model" trained.db "trained" && ok "a trained model: the numbers equal numpy's" || bad "trained model"
# the finding's sentence is wrapped under its brief line: read it joined
tr '\n' ' ' <trained.db.txt | tr -s ' ' | grep -q "Against their initialisation (kept in the checkpoint), training" &&
  ok "the finding says what training did to the decays" || bad "finding: $(grep -o 'pools:.*' trained.db.txt | head -c 400)"

# the same weights with "initial" values equal to the trained ones: nothing moved
"$py" - "$model" still.safetensors <<'PY'
import json, struct, sys
import numpy as np
from testdata import read_safetensors, with_metadata
hdr, f32 = read_safetensors(sys.argv[1])
tensor = lambda name: f32(name).reshape(-1)
for key, name in (("init_write_A_log", "write_A_log"), ("init_write_dt_bias", "write_dt_bias")):
    hdr["__metadata__"][key] = ",".join("%.9g" % v for v in tensor(name))
with_metadata(sys.argv[1], sys.argv[2], hdr)
PY
check "$dir/still.safetensors" still.db "unmoved" && [[ "$(sqlite3 still.db "select cast(value as integer) from analysis_scalars where key = 'decays_moved'")" == 0 ]] &&
  ok "initial = trained: barely moved" || bad "unmoved model"
tr '\n' ' ' <still.db.txt | tr -s ' ' | grep -q "training barely moved the decays: the largest change of a head's time constant is 1.00x" &&
  ok "its finding says so" || bad "unmoved finding: $(grep -o 'Against.*' still.db.txt | head -c 300)"

# "initial" values in the reverse order, each head's A 4x larger: moved, and the order changed
"$py" - "$model" moved.safetensors <<'PY'
import json, struct, sys
import numpy as np
from testdata import read_safetensors, with_metadata
hdr, f32 = read_safetensors(sys.argv[1])
tensor = lambda name: f32(name).reshape(-1)
a, d = tensor("write_A_log"), tensor("write_dt_bias")
order = np.argsort(1 / (np.exp(a.astype(float)) * np.log1p(np.exp(d.astype(float)))))
a0, d0 = np.empty_like(a), np.empty_like(d)
a0[order], d0[order] = a[order[::-1]] + np.log(4), d[order[::-1]]  # slowest becomes fastest, 4x
hdr["__metadata__"]["init_write_A_log"] = ",".join("%.9g" % v for v in a0)
hdr["__metadata__"]["init_write_dt_bias"] = ",".join("%.9g" % v for v in d0)
with_metadata(sys.argv[1], sys.argv[2], hdr)
PY
check "$dir/moved.safetensors" moved.db "moved" && [[ "$(sqlite3 moved.db "select cast(value as integer) from analysis_scalars where key = 'decays_moved'")" == 1 ]] &&
  tr '\n' ' ' <moved.db.txt | tr -s ' ' | grep -q "training moved the decays" && ok "reversed and 4x: moved, and the finding says so" || bad "moved model"

# a checkpoint without initial values (the reference fixture): the distribution only
check "$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors" fixture.db "no init" && ok "no initial values: percentiles only" || bad "fixture model"
# GDN: every layer's heads decay; the trainer keeps them all (init_A_log / init_dt_bias, layer after layer) and
# retention on layer 1's decay site is compared with layer 1's slice, not layer 0's
cat > g.json <<JSON
{"model": {"arch": "gdn", "vocab_size": 97, "d_state": 16, "d_ffn": 24, "n_heads": 3, "d_key": 4, "d_val": 4,
           "n_layers": 2, "conv_size": 4},
 "data": {"train": "shards", "seq_len": 32, "batch_size": 4},
 "training": {"steps": 40, "seed": 5, "threads": 1},
 "optimizer": {"learning_rate": 0.05, "warmup_steps": 2},
 "output": {"dir": "grun", "checkpoint_every": 0}}
JSON
"$bin" train --config g.json --quiet >/dev/null 2>err.txt || bad "train gdn: $(cat err.txt)"
"$bin" record --model grun/model.safetensors --corpus shards --seq-len 32 --windows 40 --db gdn.db --quiet \
  --sites blocks.0.attn.alpha,blocks.1.attn.alpha >/dev/null
for layer in 0 1; do
  "$bin" analyze gdn.db --only retention --decay-site "blocks.$layer.attn.alpha" > "gdn$layer.txt" 2>&1 ||
    { bad "gdn layer $layer: analyze: $(cat "gdn$layer.txt")"; continue; }
  sqlite3 -json gdn.db "select s.key, s.value from analysis_scalars s where s.analysis_id = (select max(id) from analyses
    where name = 'retention') union all select x.series || ':' || x.idx, x.y from analysis_series x
    where x.analysis_id = (select max(id) from analyses where name = 'retention') and x.series like 'tau_param%'" > "gdn$layer.json"
  "$py" - grun/model.safetensors "gdn$layer.json" "$layer" <<'PY' && ok "GDN layer $layer: decays against that layer's initial values" || bad "GDN layer $layer"
import json, struct, sys
import numpy as np
path, got, L = sys.argv[1], {r["key"]: r["value"] for r in json.load(open(sys.argv[2]))}, int(sys.argv[3])
from testdata import read_safetensors
hdr, f32 = read_safetensors(path); meta = hdr["__metadata__"]
tensor = lambda name: f32(name).reshape(-1).astype(np.float64)
sp = lambda x: np.log1p(np.exp(x))
tau = 1 / (np.exp(tensor("model.layers.%d.attn.A_log" % L)) * sp(tensor("model.layers.%d.attn.dt_bias" % L)))
H = len(tau)
a0 = np.array([float(x) for x in meta["init_A_log"].split(",")]); d0 = np.array([float(x) for x in meta["init_dt_bias"].split(",")])
assert len(a0) == 2 * H, len(a0)
tau0 = 1 / (np.exp(a0[L * H:(L + 1) * H]) * sp(d0[L * H:(L + 1) * H]))
assert got["decays_init_known"] == 1, got
assert np.allclose([got["tau_param:%d" % h] for h in range(H)], tau, rtol=1e-9), "tau"
assert np.allclose([got["tau_param_init:%d" % h] for h in range(H)], tau0, rtol=1e-9), "tau_init"
dl = np.abs(np.log(tau) - np.log(tau0))
assert abs(got["decays_max_abs_dlog_tau"] - dl.max()) < 1e-9, "dlog"
print("layer", L, ": max change %.3fx" % np.exp(dl.max()))
PY
done

finish

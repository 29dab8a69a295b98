#!/usr/bin/env bash
# gpnscope ablate: a control that changes nothing leaves every NLL exactly as
# recorded; zeroing a head whose query weights are zero (its read is already
# zero) changes nothing, zeroing a live head raises perplexity; subtracting
# s_bar where the state is decoded gives the NLL computed by hand from the
# recorded states; carry scope agrees with decode scope at the first position
# and not after.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
gpnm1_scratch ablate shards
q() { sqlite3 "$1" "$2"; }

# corpus: 24 windows of 32 random tokens; a copy of the model whose head 1
# has zero query weights and bias (q_1 = l2n(relu(0)) = 0, so its read is 0)
"$py" - "$dir" "$model" <<'PY'
import json, struct, sys
import numpy as np
d, model = sys.argv[1], sys.argv[2]
from testdata import write_shards
write_shards(d + "/shards", np.random.default_rng(7).integers(3, 97, size=24 * 32), 97)
raw = bytearray(open(model, "rb").read()); n = struct.unpack("<Q", raw[:8])[0]; hdr = json.loads(raw[8:8 + n])
def view(name):
    b, e = hdr[name]["data_offsets"]
    return np.frombuffer(raw, dtype="<f4", count=(e - b) // 4, offset=8 + n + b).reshape(hdr[name]["shape"])
dk = hdr["write_W_k_k"]["shape"][1] // hdr["write_A_log"]["shape"][0]
wq = view("L0_read_W_q_k").copy(); bq = view("L0_read_W_q_b").copy()
wq[:, dk:2 * dk] = 0; bq[dk:2 * dk] = 0
for name, a in (("L0_read_W_q_k", wq), ("L0_read_W_q_b", bq)):
    b, e = hdr[name]["data_offsets"]; raw[8 + n + b:8 + n + e] = a.astype("<f4").tobytes()
open(d + "/deadhead.safetensors", "wb").write(bytes(raw))
PY
common=(--corpus "$dir/shards" --seq-len 32 --batch 4 --states pred --quiet)
"$bin" record --model "$model" --db "$dir/a.db" "${common[@]}" >/dev/null
"$bin" analyze "$dir/a.db" >/dev/null
"$bin" record --model "$dir/deadhead.safetensors" --db "$dir/dead.db" "${common[@]}" >/dev/null

"$bin" ablate "$dir/a.db" --what none >/dev/null
n0="$(q "$dir/a.db" "select count(*), sum(nll_change != 0) from ablation_effects where intervention = 'none'")"
[[ "$n0" == "768|0" ]] && ok "none: all 768 NLLs identical to the recording" || bad "none: $n0"

# fewer windows than the recording's batches hold: still run in its batch
# layout (8 windows, 2 batches of 4, for 6 reported), so still exact
j="$("$bin" ablate "$dir/a.db" --what none --windows 6 --json)"
a6="$("$py" -c "import json,sys; print(json.loads(sys.argv[1])['analysis_id'])" "$j")"
n6="$(q "$dir/a.db" "select count(*), sum(nll_change != 0) from ablation_effects where analysis_id = $a6")"
[[ "$n6" == "192|0" ]] && ok "none --windows 6: all 192 NLLs identical (recording's batch layout)" || bad "none --windows 6: $n6"
# no BOS/EOS in this vocabulary: the intervals' units are the windows
"$py" -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d['units'] == 'windows' and d['n_units'] == 6 and d['delta_nll_ci_low'] == 0 == d['delta_nll_ci_high'] else 1)" "$j" \
  && ok "none: units are windows (no document boundaries known), interval [0, 0]" || bad "none --json: $j"

"$bin" ablate "$dir/dead.db" --what heads:1 >/dev/null
d1="$(q "$dir/dead.db" "select count(*), sum(nll_change != 0) from ablation_effects")"
[[ "$d1" == "768|0" ]] && ok "zeroing a head whose read is already zero changes nothing" || bad "dead head: $d1"

# (random weights: a live head changes predictions, in either direction; that
# a trained model needs its heads is tests/cli/ablate_shipped.sh)
"$bin" ablate "$dir/a.db" --what heads:0 >/dev/null
h0="$(q "$dir/a.db" "select sum(abs(nll_change) > 1e-4) from ablation_effects where intervention = 'heads:0' and position > 1")"
[[ "$h0" -gt 600 ]] && ok "zeroing live head 0 changes the NLL of $h0 of 720 tokens after position 1" || bad "head 0 changed only $h0"

# the two head ablations: stored apart, named, and different
jb="$("$bin" ablate "$dir/a.db" --what heads:0 --json)"; ja="$("$bin" ablate "$dir/a.db" --what heads:0 --heads-at after-norm --json)"
"$py" -c "import json,sys; b,a=json.loads(sys.argv[1]),json.loads(sys.argv[2]); sys.exit(0 if b['heads_at']=='before-norm' and a['heads_at']=='after-norm' and abs(a['delta_nll']-b['delta_nll'])>1e-6 and a['analysis_id']!=b['analysis_id'] else 1)" "$jb" "$ja" \
  && ok "heads:0 before-norm and after-norm: two analyses, different effects" || bad "heads-at: $jb / $ja"
na="$(q "$dir/a.db" "select count(*) from analyses where name = 'ablation' and json_extract(settings, '$.what') = 'heads:0'")"
[[ "$na" == 2 ]] && ok "heads:0: one analysis per heads_at" || bad "heads:0 analyses: $na"

"$bin" ablate "$dir/a.db" --what mean-direction:subtract --scope decode >/dev/null
"$bin" ablate "$dir/a.db" --what mean-direction:subtract --scope carry >/dev/null
if "$py" - "$dir/a.db" "$model" <<'PY'
import json, sqlite3, struct, sys
import numpy as np
db, model = sys.argv[1], sys.argv[2]
from testdata import read_safetensors
_, f32 = read_safetensors(model)
get = lambda name: f32(name).astype(np.float64)
E, w, P = get("embedding"), get("decode_norm_w"), get("decode_proj_k")
c = sqlite3.connect(db)
an = c.execute("select id from analyses where name = 'geometry' order by id desc").fetchone()[0]
sbar = np.frombuffer(c.execute("select vector from analysis_vectors where analysis_id = ? and key = 'mean'", (an,)).fetchone()[0], "<f4")
rows = c.execute("""select s.window, s.position, s.vector, t.token_id, e.nll_ablated, e.scope
                    from states s join tokens t using (run_id, window, position)
                    join ablation_effects e on e.run_id = s.run_id and e.window = s.window and e.position = s.position
                    where e.intervention = 'mean-direction:subtract'""").fetchall()
err, first, later = 0.0, [], []
by = {}
for win, pos, vec, tok, nll_abl, scope in rows:
    by.setdefault((win, pos), {})[scope] = nll_abl
    if scope != "decode": continue
    s = np.frombuffer(vec, "<f4").astype(np.float64) - sbar
    z = (s / np.sqrt(np.mean(s * s) + 1e-6) * w) @ P
    logits = z @ E.T
    m = logits.max(); nll = m + np.log(np.exp(logits - m).sum()) - logits[tok]
    err = max(err, abs(nll - nll_abl) / max(1.0, abs(nll)))
# the matched controls of the decode-scope run: each stored draw has the norm
# of s_bar and the effect the run reports for it, recomputed here by hand
dec = c.execute("select analysis_id from ablation_effects where intervention = 'mean-direction:subtract' and scope = 'decode' limit 1").fetchone()[0]
sc = dict(c.execute("select key, value from analysis_scalars where analysis_id = ?", (dec,)).fetchall())
toks = c.execute("""select s.vector, t.token_id, t.nll from states s join tokens t using (run_id, window, position)
                    where s.kind = 'pred' order by s.window, s.position""").fetchall()
X = np.array([np.frombuffer(v, "<f4") for v, _, _ in toks], dtype=np.float64)
Y = np.array([t for _, t, _ in toks]); base = np.array([b for _, _, b in toks])
def mean_nll(shift):
    s = X - shift
    z = (s / np.sqrt(np.mean(s * s, axis=1, keepdims=True) + 1e-6) * w) @ P
    lg = z @ E.T; m = lg.max(axis=1)
    return np.mean(m + np.log(np.exp(lg - m[:, None]).sum(axis=1)) - lg[np.arange(len(Y)), Y])
cerr, nerr, kinds = 0.0, 0.0, 0
for kind in ("isotropic", "states"):
    ys = [y for (y,) in c.execute("select y from analysis_series where analysis_id = ? and series = ? order by x", (dec, "control_%s_delta_nll" % kind))]
    kinds += len(ys) == 3
    for r, y in enumerate(ys):
        v = np.frombuffer(c.execute("select vector from analysis_vectors where analysis_id = ? and key = ?", (dec, "control_%s_%d" % (kind, r))).fetchone()[0], "<f4").astype(np.float64)
        nerr = max(nerr, abs(np.linalg.norm(v) / np.linalg.norm(sbar) - 1))
        cerr = max(cerr, abs(mean_nll(v) - base.mean() - y))
    xs = sc["delta_nll"] - sc["control_%s_delta_nll_mean" % kind]
    cerr = max(cerr, abs(xs - sc["control_%s_excess_delta_nll" % kind]))
print("controls: %d kinds of 3 draws, norm rel err %.1e, effect err %.1e" % (kinds, nerr, cerr))
if not (kinds == 2 and nerr < 1e-5 and cerr < 1e-4): sys.exit(1)
same0 = all(abs(v["decode"] - v["carry"]) < 1e-6 for (wn, p), v in by.items() if p == 0)
differ = sum(abs(v["decode"] - v["carry"]) > 1e-4 for (wn, p), v in by.items() if p > 1)
print("decode scope vs hand computation: max rel err %.2e over %d tokens; carry == decode at position 0: %s; differ later at %d tokens" % (err, len(rows) // 2, same0, differ))
sys.exit(0 if err < 1e-4 and same0 and differ > 0 else 1)
PY
then ok "mean-direction:subtract matches the hand computation"; else bad "mean-direction:subtract vs hand computation"; fi

"$bin" ablate "$dir/a.db" --what each-head >"$dir/each.txt" && [[ $(grep -c "^heads:" "$dir/each.txt") -eq 3 ]] \
  && ok "each-head: one row per head" || bad "each-head: $(cat "$dir/each.txt")"
jp="$("$bin" ablate "$dir/a.db" --what pool:slow --controls 2 --json)" && ok "pool:slow" || bad "pool:slow"
# its control: random sets of as many heads, never the pool itself
"$py" - "$dir/a.db" "$jp" <<'PY' && ok "pool:slow controls: 2 random head sets of the pool's size, not the pool" || bad "pool:slow controls: $jp"
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); j = json.loads(sys.argv[2])
an = c.execute("select id from analyses where name = 'retention' order by id desc").fetchone()[0]
pool = sorted(int(x) for x, y in c.execute("select x, y from analysis_series where analysis_id = ? and series = 'pool'", (an,)) if y == 1)
import numpy as np
sets = [sorted(np.frombuffer(v, "<f4").astype(int).tolist()) for (v,) in
        c.execute("select vector from analysis_vectors where analysis_id = ? and key like 'control_heads_%' order by key", (j["analysis_id"],))]
h = j["controls"]["heads"]
sys.exit(0 if len(sets) == 2 and all(len(s) == len(pool) and s != pool for s in sets) and h["draws"] == 2 else 1)
PY
# re-running the same intervention replaces it
cnt="$(q "$dir/a.db" "select count(*) from analyses where name = 'ablation' and json_extract(settings, '$.what') = 'heads:0'")"
[[ "$cnt" == 2 ]] && ok "same intervention replaced, not duplicated" || bad "heads:0 analyses: $cnt"
# errors: one line, non-zero
if "$bin" ablate "$dir/a.db" --what heads:0 --heads-at middle 2>"$dir/err.txt"; then bad "--heads-at middle accepted"
else [[ $(wc -l <"$dir/err.txt") -eq 1 ]] && ok "--heads-at middle: $(cat "$dir/err.txt")" || bad "--heads-at: $(cat "$dir/err.txt")"; fi
for bad_what in "heads:9" "bogus" "heads:" "mean-direction:flip"; do
  if "$bin" ablate "$dir/a.db" --what "$bad_what" 2>"$dir/err.txt"; then bad "--what $bad_what accepted"
  else [[ $(wc -l <"$dir/err.txt") -eq 1 ]] && ok "--what $bad_what: $(cat "$dir/err.txt")" || bad "--what $bad_what: $(cat "$dir/err.txt")"; fi
done
finish

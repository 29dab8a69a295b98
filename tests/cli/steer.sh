#!/usr/bin/env bash
# gpnscope steer (docs/causal.md): c = 0 changes nothing, bit for bit (NLL and
# every top-1, in both scopes and in a layered family); in decode scope the
# steered NLL equals the NLL computed by hand (numpy, float64) from the
# recorded unsteered states plus c u (u from a .npy, and s_bar read from the
# store's geometry analysis); as c grows the decode's RMSNorm leaves
# only u, so every top-1 is the argmax of decode(u) (the closed form of the
# limit); --from-position counts only the later tokens; bad input is one line.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir steer shards
model="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
tpp="$GPNSCOPE_FIXTURES/reference/tpp2.weights.safetensors"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

# 8 windows of 32 random tokens (ids below 89, both fixtures' vocabularies); a direction for each model
"$py" - "$dir" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
from testdata import write_shards
write_shards(d + "/shards", rng.integers(3, 89, size=8 * 32), 97)
np.save(d + "/u40.npy", rng.standard_normal(40).astype(np.float32))
np.save(d + "/u32.npy", rng.standard_normal(32).astype(np.float32))
PY
common=(--corpus "$dir/shards" --seq-len 32 --windows 8 --batch 4)

zero() { # NAME MODEL U SCOPE
  if "$bin" steer "$2" "${common[@]}" --direction "$3" --scope "$4" --c 0,1.5 --json >"$dir/$1.json" 2>"$dir/$1.err" &&
     "$py" -c "
import json, sys
o = json.load(open(sys.argv[1])); p0, p1 = o['points']
assert p0['c'] == 0 and p0['nll'] == o['baseline_nll'] and p0['delta_nll'] == 0 and p0['top1_changed'] == 0, p0
assert p1['delta_nll'] != 0 and p1['top1_changed'] > 0, p1
" "$dir/$1.json"; then ok "$1: c = 0 gives the unsteered NLL and top-1 bit for bit (c = 1.5 does not)"
  else bad "$1: $(cat "$dir/$1.err") $(head -c 300 "$dir/$1.json")"; fi
}
zero "GPN+M carry" "$model" "$dir/u40.npy" carry
zero "GPN+M decode" "$model" "$dir/u40.npy" decode
zero "Transformer++ carry" "$tpp" "$dir/u32.npy" carry

# decode scope by hand: the recorded states (batch 4, the same windows) plus c u, through the decode
"$bin" record --model "$model" --db "$dir/r.db" --corpus "$dir/shards" --seq-len 32 --batch 4 --states pred --quiet >/dev/null
"$bin" steer "$model" "${common[@]}" --direction "$dir/u40.npy" --scope decode --c 2,-3,1e5 --from-position 0 --json >"$dir/dec.json"
"$bin" steer "$model" "${common[@]}" --direction "$dir/u40.npy" --scope decode --c 2 --from-position 20 --json >"$dir/late.json"
"$bin" analyze "$dir/r.db" >/dev/null 2>&1
"$bin" steer "$model" "${common[@]}" --direction s_bar --from "$dir/r.db" --scope decode --c 3 --json >"$dir/sbar.json"
[[ "$(sqlite3 "$dir/r.db" "select count(*) from causal_experiments where kind = 'steer'")" == 1 ]] &&
  ok "with --from and no --store the curve goes into the study's store" || bad "steer --from did not store into r.db"
if "$py" - "$dir/r.db" "$model" "$dir/u40.npy" "$dir/dec.json" "$dir/late.json" "$dir/sbar.json" >"$dir/hand.txt" 2>&1 <<'PY'
import json, sqlite3, struct, sys
import numpy as np
db, model, upath, jd, jl, js = sys.argv[1:7]
from testdata import read_safetensors
_, f32 = read_safetensors(model)
get = lambda name: f32(name).astype(np.float64)
E, w, P = get("embedding"), get("decode_norm_w"), get("decode_proj_k")
u = np.load(upath).astype(np.float64); u /= np.linalg.norm(u)
rows = sqlite3.connect(db).execute("""select s.position, s.vector, t.token_id from states s join tokens t using (run_id, window, position)
                                      where s.kind = 'pred' order by s.window, s.position""").fetchall()
pos = np.array([p for p, _, _ in rows]); X = np.array([np.frombuffer(v, "<f4") for _, v, _ in rows], dtype=np.float64)
Y = np.array([t for _, _, t in rows])
def logits(c):
    s = X + c * u
    return ((s / np.sqrt(np.mean(s * s, axis=1, keepdims=True) + 1e-6) * w) @ P) @ E.T
def nll(lg):
    m = lg.max(axis=1); return m + np.log(np.exp(lg - m[:, None]).sum(axis=1)) - lg[np.arange(len(Y)), Y]
d, l = json.load(open(jd)), json.load(open(jl))
err = 0.0
for p in d["points"][:2]:
    want = nll(logits(p["c"])).mean(); err = max(err, abs(p["nll"] - want) / abs(want))
want_late = nll(logits(2.0))[pos >= 20].mean(); err = max(err, abs(l["points"][0]["nll"] - want_late) / want_late)
assert l["tokens"] == 8 * 12, l["tokens"]
# s_bar from the store's geometry analysis: the same computation along the stored mean
con = sqlite3.connect(db)
sbar = np.frombuffer(con.execute("select v.vector from analysis_vectors v join analyses a on a.id = v.analysis_id"
                                 " where a.name = 'geometry' and v.key = 'mean' order by a.id desc").fetchone()[0], "<f4").astype(np.float64)
u_keep = u; u = sbar / np.linalg.norm(sbar)
want_sbar = nll(logits(3.0)).mean(); err = max(err, abs(json.load(open(js))["points"][0]["nll"] - want_sbar) / want_sbar)
u = u_keep
# the limit: rms(s + c u) -> |c| rms(u), so the logits go to decode(sign(c) u) and every top-1 to its argmax
lim = int(np.argmax(((u / np.sqrt(np.mean(u * u) + 1e-6) * w) @ P) @ E.T))
big = d["points"][2]
print("decode scope vs numpy: max rel err %.2e over %d tokens; c = 1e5: top-1 %s, argmax decode(u) %d" % (err, len(Y), big["top_tokens"], lim))
assert err < 1e-5, err
assert big["top_tokens"][0]["id"] == lim and big["top_tokens"][0]["share"] == 1, (big["top_tokens"], lim)
PY
then ok "$(cat "$dir/hand.txt")"; else bad "by hand: $(tail -3 "$dir/hand.txt")"; fi

# stored and drawn
if "$bin" steer "$model" "${common[@]}" --direction "$dir/u40.npy" --c -2,0,2 --store "$dir/s.db" --plot "$dir/fig" >"$dir/st.txt" 2>&1; then
  n="$(sqlite3 "$dir/s.db" "SELECT count(*), sum(c = 0 AND delta_nll = 0) FROM steer_results")"
  [[ "$n" == "3|1" && -s "$dir/fig/steer_curve.gp" ]] && ok "stored: 3 rows of steer_results, c = 0's change 0; the curve's script" || bad "store: $n"
else bad "store: $(tail -2 "$dir/st.txt")"; fi

# one-line errors
err() { # EXPECTED ARGS...
  local want="$1"; shift
  # (the plan line, printed before the sweep, is not the error)
  set +e; "$bin" steer "$@" 2>&1 >/dev/null | grep -v '^steer: ' >"$dir/e.err"; local rc=${PIPESTATUS[0]}; set -e
  [[ $rc -ne 0 && $(wc -l <"$dir/e.err") -eq 1 && "$(cat "$dir/e.err")" == *"$want"* ]] && ok "error: $(cat "$dir/e.err")" || bad "expected '$want', exit $rc: $(cat "$dir/e.err")"
}
err "no decode-only copy" "$tpp" "${common[@]}" --direction "$dir/u32.npy" --scope decode --c 1
err "where the state has 40" "$model" "${common[@]}" --direction "$dir/u32.npy" --c 1
err "finite numbers separated by commas" "$model" "${common[@]}" --direction "$dir/u40.npy" --c 1,x
err "give the store" "$model" "${common[@]}" --direction s_bar --c 1
err "no geometry analysis" "$model" "${common[@]}" --direction s_bar --from "$dir/s.db" --c 1
err "--from-position 40: 0 to 31" "$model" "${common[@]}" --direction "$dir/u40.npy" --c 1 --from-position 40
# the budget (issue 35.3): the plan on stderr first; beyond --max-steps refused before any work, naming the plan
# and the option
"$bin" steer "$model" "${common[@]}" --direction "$dir/u40.npy" --c -2,0,2 --max-steps 1024 >/dev/null 2>"$dir/plan.err" &&
  [[ "$(head -1 "$dir/plan.err")" == "steer: 3 coefficients + the unsteered run: 4 passes of 8 windows x 32 tokens = 1024 token steps" ]] &&
  ok "the plan printed first: $(head -1 "$dir/plan.err")" || bad "plan: $(cat "$dir/plan.err")"
err "4 passes of 8 windows x 32 tokens = 1024 token steps, more than --max-steps 1023: raise --max-steps" \
  "$model" "${common[@]}" --direction "$dir/u40.npy" --c -2,0,2 --max-steps 1023
if command -v script >/dev/null; then
  script -qec "'$bin' steer '$model' --corpus '$dir/shards' --seq-len 32 --windows 8 --direction '$dir/u40.npy' --c 1" /dev/null |
    tr '\r' '\n' >"$dir/tty.txt"
  grep -aq '^steer \[#*\] 2/2 runs' "$dir/tty.txt" && ok "progress on a terminal: $(grep -a '^steer \[' "$dir/tty.txt" | tail -1 | sed 's/\x1b\[K//')" ||
    bad "steer's progress on a terminal: $(head -c 300 "$dir/tty.txt")"
fi
finish

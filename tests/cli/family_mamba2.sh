#!/usr/bin/env bash
# The Mamba-2 family (engine/arch/mamba2/) end to end, from checkpoint
# folders in Hugging Face's layout (model.safetensors and config.json) that
# the float64 numpy reference writes (tests/reference/mamba2_reference.py).
# Token by token = the reference's whole windows and staggered batch rows =
# one at a time, every site < 1e-5 (test_family_incremental); gpnscope info
# lists its sites (and docs/hooks.md every one); record goes through the
# runner; analyze runs geometry and the horizons on the last residual, and
# retention with its pools on a layer's per-head decays; compare reads two
# Mamba-2 stores; patch's whole state (every layer's SSM state and
# convolution inputs) from the differing token on gives the clean logits bit
# for bit; the logit lens of the last residual is the next token's logits;
# configs that contradict the shapes, or options the engine does not compute,
# are refused in one line.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir family_mamba2_cli shards
ref="$GPNSCOPE_SOURCE/tests/reference/mamba2_reference.py"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

#          prefix      V  D  L H P  N G K tied B  T seed
"$py" "$ref" make "$dir/a" 61 24 2 4 8 16 2 4 0  3 70 5
"$py" "$ref" make "$dir/b" 53 20 3 3 8 8  1 3 1  2 40 6
"$py" "$ref" make "$dir/m" 97 24 2 4 8 16 2 4 0  2 8  7
"$py" "$ref" make "$dir/n" 97 24 2 4 8 16 2 4 0  2 8  8
if GPNSCOPE_THREADS=2 "$GPNSCOPE_BUILD/tests/test_family_incremental" "$dir/a" "$dir/a.expect.safetensors" \
     "$dir/b" "$dir/b.expect.safetensors" >"$dir/incremental.txt" 2>&1; then
  ok "token by token = the reference's whole windows, staggered batch rows = one at a time: every site < 1e-5 ($(grep -c 'worst' "$dir/incremental.txt") checks)"
else bad "incremental / batch invariance: $(grep FAIL "$dir/incremental.txt" | head -3)"; fi

model="$dir/m"
info="$("$bin" info "$model")"
for s in hook_embed 'blocks.{i}.hook_resid_pre' 'blocks.{i}.mixer.conv_state' 'blocks.{i}.mixer.dt' \
         'blocks.{i}.mixer.decay' 'blocks.{i}.mixer.ssm_state' 'blocks.{i}.mixer.y' 'blocks.{i}.hook_resid_post' \
         ln_final.hook_normalized logits nll; do
  [[ "$info" == *"$s "* ]] && ok "info lists $s" || bad "info lacks $s"
done
[[ "$info" == *"Mamba-2"* && "$info" == *"per-head vector[512]"* && "$info" == *"n_groups 2 ($dir/m/config.json)"* ]] &&
  ok "info: the Mamba-2 family, the state per head is 4 x 8 x 16 = 512 floats, n_groups from config.json" || bad "info: $info"
"$bin" info "$model" --json | "$py" -c '
import json, sys
doc = open(sys.argv[1]).read()
sites = json.load(sys.stdin)["sites"]
missing = [s["name"] for s in sites if "| `%s` |" % s["name"] not in doc.split("## Mamba-2")[1]]
assert len(sites) == 15 and not missing, missing
' "$GPNSCOPE_SOURCE/docs/hooks.md" && ok "docs/hooks.md, Mamba-2: all 15 sites" || bad "docs/hooks.md lacks Mamba-2 sites"

random_shards "$dir/shards" $((40 * 64)) 4
rec() { "$bin" record --model "$1" --corpus "$dir/shards" --seq-len 64 --batch 7 --db "$2" --quiet "${@:3}" >/dev/null; }
rec "$model" "$dir/s.db" --sites 'blocks.1.hook_resid_post,blocks.*.mixer.decay' && rec "$dir/n" "$dir/t.db" &&
  ok "recorded two models through the runner" || bad "record"
[[ "$(sqlite3 "$dir/s.db" "select count(*) || ' ' || count(nll) from tokens")" == "2560 2520" &&
   "$(sqlite3 "$dir/t.db" "select arch || ' ' || states from runs join models m on m.id = model_id")" == "mamba2 blocks.1.hook_resid_post" &&
   "$(sqlite3 "$dir/s.db" "select group_concat(site || ':' || role || ':' || width, ' ') from (select * from run_sites where site like '%decay' order by site)")" == \
   "blocks.0.mixer.decay:decay:4 blocks.1.mixer.decay:decay:4" ]] &&
  ok "2560 token rows, no NLL at each window's first token; the last resid_post by default; per-layer decays with role decay" ||
  bad "store rows: $(sqlite3 "$dir/s.db" "select site || ':' || role from run_sites")"

"$bin" analyze "$dir/s.db" --only geometry,horizon --site blocks.1.hook_resid_post >"$dir/analyze.txt" &&
  ok "analyze geometry,horizon on blocks.1.hook_resid_post" || bad "analyze: $(cat "$dir/analyze.txt")"
"$bin" analyze "$dir/s.db" --only retention --decay-site blocks.1.mixer.decay --json >"$dir/ret.json" 2>"$dir/ret.err" &&
  "$py" - "$dir/ret.json" "$dir/s.db" <<'PY' && ok "retention and its pools on layer 1's four heads: the slowest mean decay has the longest 1/e time" || bad "retention: $(cat "$dir/ret.err")"
import json, math, sqlite3, struct, sys
r = json.load(open(sys.argv[1]))["retention"]
rows = sqlite3.connect(sys.argv[2]).execute("select vector from states where kind = 'blocks.1.mixer.decay'").fetchall()
a = [struct.unpack("<4f", b) for (b,) in rows]
assert len(a) == 2560 and all(0 < v < 1 for x in a for v in x)
mean_log = [sum(math.log(x[h]) for x in a) / len(a) for h in range(4)]
e = r["e_fold_time"]
assert len(e) == 4 and len(r["pool"]) == 4 and sum(r["pool_n"]) == 4, r
assert max(range(4), key=lambda h: e[h]) == max(range(4), key=lambda h: mean_log[h]), (e, mean_log)
PY

"$bin" compare "$dir/s.db" "$dir/t.db" --boot 0 --quiet --json >"$dir/cmp.json" 2>"$dir/cmp.err" &&
  "$py" -c '
import json, sys; j = json.load(open(sys.argv[1]))
assert [r["site"] for r in j["rows"]] == ["blocks.1.hook_resid_post"] * 2 and j["windows"]["same"], j' "$dir/cmp.json" &&
  ok "compare: two Mamba-2 stores on the same windows" || bad "compare: $(cat "$dir/cmp.err")"

"$py" - "$dir/p.jsonl" <<'PY'
import json, random, sys
r = random.Random(5)
with open(sys.argv[1], "w") as f:
    for _ in range(6):
        w = [r.randrange(3, 97) for _ in range(4)]
        a, b = r.sample(range(3, 97), 2)
        f.write(json.dumps({"clean": w + [a] + w, "corrupted": w + [b] + w, "answer": a, "foil": b}) + "\n")
PY
"$bin" patch "$model" "$dir/p.jsonl" --components "state,site:blocks.0.mixer.ssm_state" --batch 4 --json >"$dir/patch.json" 2>"$dir/patch.err" &&
  "$py" - "$dir/patch.json" <<'PY' && ok "patch: the whole state from the differing token on gives the clean logit difference bit for bit; one layer's SSM state alone does not" || bad "patch: $(cat "$dir/patch.err")"
import json, sys
o = json.load(open(sys.argv[1])); T = o["tokens"]; c = {x["component"]: x for x in o["components"]}
clean, corr = o["ld_clean"], o["ld_corrupted"]
ld = lambda comp, pos: c[comp]["logit_diff"][pos]
assert all(ld("state", p) == clean for p in range(4, T + 1)), [ld("state", p) == clean for p in range(T + 1)]
assert all(ld("state", p) == corr for p in range(4))
assert max(abs(a - b) for a, b in zip(ld("site:blocks.0.mixer.ssm_state", 5), clean)) > 1e-4
PY

# the reference's first sequence, through the lens of the last residual: its top token and logit are the reference's
"$py" - "$dir/m.expect.safetensors" >"$dir/ids" <<'PY'
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n])["tokens"]
b, e = h["data_offsets"]; print(",".join(str(int(x)) for x in np.frombuffer(raw[8 + n + b:8 + n + e], "<i4").reshape(h["shape"])[0]))
PY
"$bin" lens "$model" --tokens "$(cat "$dir/ids")" --sites blocks.1.hook_resid_post --top 1 --json >"$dir/lens.json" 2>"$dir/lens.err" &&
  "$py" - "$dir/lens.json" "$dir/m.expect.safetensors" <<'PY' && ok "lens: the last residual decodes to the reference's next-token logits (top 1 and its logit < 1e-5)" || bad "lens: $(cat "$dir/lens.err")"
import json, struct, sys
import numpy as np
got = json.load(open(sys.argv[1]))["sites"]["blocks.1.hook_resid_post"]
raw = open(sys.argv[2], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n])["logits"]
b, e = h["data_offsets"]; want = np.frombuffer(raw[8 + n + b:8 + n + e], "<f4").reshape(h["shape"])[0]
assert [x[0] for x in got["ids"]] == [int(np.argmax(w)) for w in want], (got["ids"], want.argmax(-1))
assert all(abs(g[0] - w.max()) < 1e-5 * abs(w.max()) + 1e-6 for g, w in zip(got["logits"], want)), got["logits"]
PY

# bad requests and checkpoints: one line each, naming what is wrong
one_line() { # LABEL EXPECTED-RC PATTERN COMMAND...
  local label="$1" want="$2" pat="$3"; shift 3
  set +e; "$@" >/dev/null 2>"$dir/err"; local rc=$?; set -e
  if [[ $rc -eq $want && $(wc -l <"$dir/err") -eq 1 ]] && grep -q -- "$pat" "$dir/err"; then ok "$label: $(cat "$dir/err")"
  else bad "$label: exit $rc, $(cat "$dir/err")"; fi
}
one_line "no CUDA backend" 1 "no CUDA engine" "$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --db "$dir/bad.db" --quiet --device cuda
for case in "num_heads 5 config.json says num_heads=5 but the tensor shapes give 4" \
            "use_bias true use_bias=true is not supported" \
            "tie_word_embeddings true says tie_word_embeddings=true but the file has its own lm_head.weight" \
            "n_groups 3 leaves no whole d_state"; do
  read -r key val pat <<<"$case"
  mkdir -p "$dir/bad_$key" && cp "$model/model.safetensors" "$dir/bad_$key/"
  "$py" - "$model/config.json" "$dir/bad_$key/config.json" "$key" "$val" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1])); cfg[sys.argv[3]] = json.loads(sys.argv[4]); json.dump(cfg, open(sys.argv[2], "w"))
PY
  one_line "config.json $key=$val" 1 "$pat" "$bin" info "$dir/bad_$key"
done
# a hand-edited config.json goes through the strict reader, ranges checked before any cast
# (issue 35.4, 35.10); Python's Infinity (time_step_limit's default) is still read
"$py" - "$model" "$dir" <<'PY'
import json, os, shutil, sys
m, d = sys.argv[1], sys.argv[2]
cfg = json.load(open(m + "/config.json"))
def text(**kw):
    c = dict(cfg); c.update(kw); return json.dumps(c)
cases = {"trailing": text() + " {}", "nulkey": '{"n_groups\\u0000x": 1, ' + text()[1:],
         "groups": text(n_groups=1).replace('"n_groups": 1', '"n_groups": 1e300'),
         "eps": text(layer_norm_epsilon=1e300), "inf": text(time_step_limit=[0.0, float("inf")], model_type="Infinity")}
for name, t in cases.items():
    os.makedirs(d + "/cfg_" + name, exist_ok=True)
    shutil.copy(m + "/model.safetensors", d + "/cfg_" + name)
    open(d + "/cfg_" + name + "/config.json", "w").write(t)
PY
one_line "config.json with text after the object" 1 "config.json: text after the JSON value, at byte" "$bin" info "$dir/cfg_trailing"
one_line "config.json with a NUL in a key" 1 'the key "n_groups\\u0000x" holds a NUL' "$bin" info "$dir/cfg_nulkey"
one_line "config.json n_groups 1e300" 1 "config n_groups = 1e+300 is not an integer from 1 to 1048576" "$bin" info "$dir/cfg_groups"
one_line "config.json layer_norm_epsilon 1e300" 1 "config layer_norm_epsilon = 1e+300 is out of range" "$bin" info "$dir/cfg_eps"
"$bin" info "$dir/cfg_inf" >/dev/null 2>"$dir/err" && ok "config.json with Python's Infinity in time_step_limit reads" ||
  bad "time_step_limit [0.0, Infinity]: $(cat "$dir/err")"
finish

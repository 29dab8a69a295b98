#!/usr/bin/env bash
# The Gated DeltaNet family (engine/arch/gdn/) end to end. Its forward pass
# equals a float64 numpy reference written from fla's equations
# (tests/reference/gdn_reference.py: 3 layers, 3 heads, expand_v 2 and 1,
# T = 70, so the conv window and the state see many steps), every site
# < 1e-4, with batch invariance, BF16 within rounding and state edits
# (tests/unit/test_family_gdn.c); gpnscope info lists its sites; record (its
# default sites) goes through the runner; eval's perplexity is exp(mean NLL)
# over the T - 1 predicted tokens of each window; analyze runs geometry and the
# horizons on its state site with numpy's numbers; every layer's per-head
# decays and write strengths go into the store and retention reads one layer's
# heads; bad requests are one line.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir family_gdn_cli shards
ref="$GPNSCOPE_SOURCE/tests/reference/gdn_reference.py"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
. "$GPNSCOPE_SOURCE/tests/cli/lib/numpy_horizons.sh"

#          prefix     V  D  L H dk ev ffn K B  T seed
"$py" "$ref" make "$dir/g1" 61 24 3 3 8 2 40 4 3 70 5
"$py" "$ref" make "$dir/g2" 53 20 3 3 6 1 32 4 2 70 6
# 40 sequences of 4 heads of 32 x 64: the delta rule is split over the worker threads (engine/cpu/parallel.h)
"$py" "$ref" make "$dir/g3" 50 32 1 4 32 2 32 4 40 12 8
"$py" "$ref" make "$dir/m" 97 24 3 3 8 2 40 4 2 8 7
if GPNSCOPE_THREADS=2 "$GPNSCOPE_BUILD/tests/test_family_gdn" "$dir/g1.weights.safetensors" "$dir/g1.expect.safetensors" \
     "$dir/g2.weights.safetensors" "$dir/g2.expect.safetensors" \
     "$dir/g3.weights.safetensors" "$dir/g3.expect.safetensors" >"$dir/parity.txt"; then
  ok "forward pass equals the float64 reference: $(grep -c 'rel err' "$dir/parity.txt") site tensors < 1e-4, batch invariance, bf16, state edits"
else bad "parity: $(grep FAIL "$dir/parity.txt" | head -3)"; fi
if GPNSCOPE_THREADS=2 "$GPNSCOPE_BUILD/tests/test_family_incremental" "$dir/g1.weights.safetensors" "$dir/g1.expect.safetensors" \
     "$dir/g2.weights.safetensors" "$dir/g2.expect.safetensors" \
     "$dir/g3.weights.safetensors" "$dir/g3.expect.safetensors" >"$dir/incremental.txt" 2>&1; then
  ok "token by token = the reference's whole windows, and staggered batch rows = one at a time: every site < 1e-5 ($(grep -c 'worst' "$dir/incremental.txt") checks)"
else bad "incremental / batch invariance: $(grep FAIL "$dir/incremental.txt" | head -3)"; fi

model="$dir/m.weights.safetensors"
info="$("$bin" info "$model")"
for s in hook_embed 'blocks.{i}.hook_resid_pre' 'blocks.{i}.attn.alpha' 'blocks.{i}.attn.beta' 'blocks.{i}.attn.state' \
         'blocks.{i}.attn.q' 'blocks.{i}.attn.o' 'blocks.{i}.hook_resid_post' ln_final.hook_normalized logits nll; do
  [[ "$info" == *"$s "* ]] && ok "info lists $s" || bad "info lacks $s"
done
[[ "$info" == *"Gated DeltaNet"* && "$info" == *"per-head vector[384]"* && "$info" != *"mem.alpha"* ]] &&
  ok "info: the GDN family, S per head is 3 x 8 x 16 = 384 floats, no GPN memory sites" || bad "info: $info"

"$bin" info "$model" --json | "$py" -c '
import json, sys
doc = open(sys.argv[1]).read()
sites = json.load(sys.stdin)["sites"]
missing = [s["name"] for s in sites if "| `%s` |" % s["name"] not in doc.split("## Gated DeltaNet")[1]]
assert len(sites) == 17 and not missing, missing
' "$GPNSCOPE_SOURCE/docs/hooks.md" && ok "docs/hooks.md, Gated DeltaNet: all 16 sites" || bad "docs/hooks.md lacks GDN sites"

random_shards "$dir/shards" $((40 * 64)) 4
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --batch 7 --db "$dir/s.db" --quiet >/dev/null &&
  ok "recorded through the runner (default sites)" || bad "record"
[[ "$(sqlite3 "$dir/s.db" "select count(*) || ' ' || count(nll) from tokens")" == "2560 2520" &&
   "$(sqlite3 "$dir/s.db" "select count(*) from tokens where position = 0 and nll is null")" == 40 &&
   "$(sqlite3 "$dir/s.db" "select arch || ' ' || states from runs join models m on m.id = model_id")" == "gdn blocks.2.hook_resid_post" ]] &&
  ok "2560 token rows, no NLL at each window's first token, the last layer's resid_post recorded by default" ||
  bad "store rows: $(sqlite3 "$dir/s.db" "select arch || ' ' || states from runs join models m on m.id = model_id")"

"$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 64 --json >"$dir/eval.json"
"$py" - "$dir/eval.json" "$dir/s.db" <<'PY' && ok "eval: perplexity = exp(mean NLL) over 40 x 63 tokens, the recorded NLLs'" || bad "eval"
import json, math, sqlite3, sys
e = json.load(open(sys.argv[1]))
nll = [r[0] for r in sqlite3.connect(sys.argv[2]).execute("select nll from tokens where nll is not null")]
assert e["tokens"] == 40 * 63 == len(nll), (e["tokens"], len(nll))
mean = sum(nll) / len(nll)
assert abs(e["mean_nll"] - mean) < 1e-6 * mean and abs(e["perplexity"] - math.exp(mean)) < 1e-5 * math.exp(mean), (e, mean)
PY

site=blocks.2.hook_resid_post
"$bin" analyze "$dir/s.db" --only geometry,horizon --site $site >"$dir/analyze.txt" && ok "analyze geometry,horizon on $site" ||
  bad "analyze: $(cat "$dir/analyze.txt")"
numpy_horizons "$dir/s.db" "$site" "$dir" 40 64

# per-layer per-head sites into the store (schema 2, run_sites): every layer's decays, and retention on one layer's heads
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --batch 7 --db "$dir/h.db" --quiet \
  --sites "$site,blocks.*.attn.alpha,blocks.*.attn.beta" >/dev/null && ok "recorded every layer's alpha and beta" || bad "record alpha, beta"
[[ "$(sqlite3 "$dir/h.db" "select group_concat(site || ':' || role || ':' || width, ' ') from (select * from run_sites where site like '%attn.alpha' order by site)")" == \
   "blocks.0.attn.alpha:decay:3 blocks.1.attn.alpha:decay:3 blocks.2.attn.alpha:decay:3" ]] &&
  ok "run_sites: three layers of per-head decays, role decay" || bad "run_sites: $(sqlite3 "$dir/h.db" "select * from run_sites")"
"$py" - "$dir/h.db" <<'PY' && ok "stored alpha and beta: 2560 rows per layer of 3 heads in (0, 1)" || bad "stored alpha / beta rows"
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
for l in range(3):
    for what in ("alpha", "beta"):
        rows = db.execute("select vector from states where kind = ?", ("blocks.%d.attn.%s" % (l, what),)).fetchall()
        assert len(rows) == 2560, (l, what, len(rows))
        vals = [v for (b,) in rows for v in struct.unpack("<3f", b)]
        assert all(0 < v < 1 for v in vals) and max(vals) - min(vals) > 1e-3, (l, what, min(vals), max(vals))
PY
"$bin" analyze "$dir/h.db" --only retention --decay-site blocks.2.attn.alpha >"$dir/ret.txt" &&
  grep -q "head 2 1/e time" "$dir/ret.txt" && ok "analyze retention on layer 2's three heads" || bad "retention: $(head -5 "$dir/ret.txt")"

# bad requests: one line each, naming what is wrong
one_line() { # LABEL EXPECTED-RC PATTERN COMMAND...
  local label="$1" want="$2" pat="$3"; shift 3
  set +e; "$@" >/dev/null 2>"$dir/err"; local rc=$?; set -e
  if [[ $rc -eq $want && $(wc -l <"$dir/err") -eq 1 ]] && grep -q -- "$pat" "$dir/err"; then ok "$label: $(cat "$dir/err")"
  else bad "$label: exit $rc, $(cat "$dir/err")"; fi
}
rec=("$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --db "$dir/bad.db" --quiet)
one_line "no GPN memory sites" 2 "unknown hook name 'mem.alpha'" "${rec[@]}" --sites mem.alpha
one_line "a layer the model lacks" 2 "the model has 3 layer(s)" "${rec[@]}" --sites blocks.3.attn.state
one_line "a per-layer site without its layer" 2 "is per layer" "${rec[@]}" --sites attn.alpha
one_line "no CUDA backend" 1 "no CUDA engine" "${rec[@]}" --device cuda

# checkpoints: metadata may confirm the shapes, never contradict them; shapes that do not fit are refused
"$py" - "$model" "$dir" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head, body = json.loads(raw[8:8 + n]), raw[8 + n:]
def write(name, h):
    b = json.dumps(h).encode()
    open(sys.argv[2] + "/" + name, "wb").write(struct.pack("<Q", len(b)) + b + body)
h = json.loads(json.dumps(head)); cfg = json.loads(h["__metadata__"]["config"]); cfg["n_heads"] = 4
h["__metadata__"]["config"] = json.dumps(cfg); write("heads.safetensors", h)
h = json.loads(json.dumps(head)); cfg = json.loads(h["__metadata__"]["config"]); cfg["expand_v"] = 1.0
h["__metadata__"]["config"] = json.dumps(cfg); write("expand.safetensors", h)
h = json.loads(json.dumps(head)); h["model.layers.1.attn.v_conv1d.weight"]["shape"] = [48, 4]
write("conv.safetensors", h)
h = json.loads(json.dumps(head)); del h["lm_head.weight"]; write("nohead.safetensors", h)
# the config read strictly, its eps range checked before the cast to float (issue 35.4, 35.10)
h = json.loads(json.dumps(head)); cfg = json.loads(h["__metadata__"]["config"]); cfg["norm_eps"] = 1e300
h["__metadata__"]["config"] = json.dumps(cfg); write("eps.safetensors", h)
h = json.loads(json.dumps(head)); h["__metadata__"]["config"] += " {}"; write("trailing.safetensors", h)
PY
one_line "config contradicting the shapes (heads)" 1 "n_heads=4 but the tensor shapes give 3" "$bin" info "$dir/heads.safetensors"
one_line "config contradicting the shapes (expand_v)" 1 "expand_v=1" "$bin" info "$dir/expand.safetensors"
one_line "a 2-D conv weight" 1 "v_conv1d.weight' has shape \[48, 4\], expected \[48, 1, 4\]" "$bin" info "$dir/conv.safetensors"
one_line "norm_eps 1e300" 1 "__metadata__.config norm_eps = 1e+300 is out of range" "$bin" info "$dir/eps.safetensors"
one_line "a config with text after its object" 1 "__metadata__.config: text after the JSON value" "$bin" info "$dir/trailing.safetensors"
one_line "no lm_head" 1 "missing tensor 'lm_head.weight'" "$bin" info "$dir/nohead.safetensors"
finish

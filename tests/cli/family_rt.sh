#!/usr/bin/env bash
# The Recurrent Transformer family end to end. Its forward pass equals a
# float64 numpy reference written from the equations
# (tests/reference/rt_reference.py runs the source's whole-sequence loop; the
# engine decodes one position at a time): every site < 1e-4 on configurations
# the rt2 fixture lacks (three layers of four heads at T = 70, beyond the
# pattern's 64 keys; SwiGLU with clip_qkv and alibi_bias_max 4; ReLU without
# q/k norms, eps 1e-3), with batch invariance and BF16. The rt2 fixture's
# OLMo .pt goes through convert --config and matches its expected outputs.
# gpnscope info lists its sites, each in docs/hooks.md, and says where each
# number came from; eval's perplexity is exp(mean nll); record stores the last
# block's resid_post and the reference's NLLs; every analysis runs on it, the
# default direction decoding through ln_f and the head as numpy does;
# recurrence-depth equals numpy's lags from the reference's patterns; what the
# family does not run is a one-line error.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
need_sqlite3
scratch_dir family_rt shards random
ref="$GPNSCOPE_SOURCE/tests/reference/rt_reference.py"
fx="$GPNSCOPE_FIXTURES/reference"
doc="$GPNSCOPE_SOURCE/docs/hooks.md"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
. "$GPNSCOPE_SOURCE/tests/cli/lib/reference_parity.sh"

#            name V  D  L H F  B T  seed options
configs=("c3 97 32 3 4 64 3 70 31"
         "sw 61 24 2 3 48 2 33 32 activation_type=swiglu clip_qkv=0.8 alibi_bias_max=4"
         "re 50 16 2 2 40 2 20 33 activation_type=relu attention_layer_norm=false layer_norm_eps=0.001")
reference_parity rt "${configs[@]}"

# ---- the fixture's OLMo state dict through convert --config ----
"$py" - "$fx/rt2.weights.safetensors" "$dir/rt2.config.json" "$dir/rope.config.json" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["GPNSCOPE_SOURCE"] + "/tests/reference")
from rt_reference import read_st
cfg = json.loads(read_st(sys.argv[1])[1]["config"])
json.dump(cfg, open(sys.argv[2], "w"))
cfg["rope"] = True
json.dump(cfg, open(sys.argv[3], "w"))
PY
# the fixture (a transcription of the source's loop made elsewhere) against our reference of the equations
"$py" - "$fx" "$GPNSCOPE_SOURCE/tests/reference" >"$dir/fixture.txt" 2>&1 <<'PY' && ok "rt2 fixture == rt_reference.py on its weights: largest rel err $(cat "$dir/fixture.txt")" || bad "rt2 fixture vs rt_reference.py: $(tail -2 "$dir/fixture.txt")"
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[2])
import rt_reference
P, meta = rt_reference.read_st(sys.argv[1] + "/rt2.weights.safetensors")
X, _ = rt_reference.read_st(sys.argv[1] + "/rt2.expect.safetensors")
cfg = dict({"clip_qkv": None}, **json.loads(meta["config"]))
runs = [rt_reference.forward({k: v.astype(np.float64) for k, v in P.items()}, cfg, x) for x in X["tokens"]]
worst = max(np.linalg.norm(np.stack([r[k] for r in runs]).reshape(X[k].shape) - X[k]) / np.linalg.norm(X[k]) for k in X if k != "tokens")
assert worst < 1e-6, worst
print("%.1e over %d tensors" % (worst, len(X) - 1))
PY
"$bin" convert "$fx/rt2.checkpoint.pt" "$dir/rt2pt.safetensors" --config "$dir/rt2.config.json" >/dev/null &&
  ok "convert rt2.checkpoint.pt --config (the run's OLMo model: section)" || bad "convert rt2.checkpoint.pt"
if "$GPNSCOPE_BUILD/tests/test_family_rt" "$dir/rt2pt.safetensors" "$fx/rt2.expect.safetensors" >"$dir/rt2.txt" 2>&1; then
  ok "the converted .pt equals the rt2 fixture: $(grep -c 'rel err' "$dir/rt2.txt") tensors < 1e-4"
else bad "rt2 from .pt: $(grep FAIL "$dir/rt2.txt" | head -3)"; fi

model="$dir/c3.weights.safetensors"
info_sites "$model" recurrent-transformer <<'PY'
assert w["logits"] == 97 and w["blocks.{i}.attn.hook_pattern"] == 4 * 64 and w["blocks.{i}.attn.hook_diag_share"] == 4, w
assert w["blocks.{i}.attn.hook_k_rec"] == 32 and w["blocks.{i}.hook_resid_post"] == 32, w
src = o["config_sources"]
assert src["n_heads"]["source"] == "__metadata__.config n_heads", src
assert src["mlp_hidden_size"]["source"] == "transformer.blocks.0.ff_proj.weight [64, 32]", src
assert src["clip_qkv"]["value"] == "none" and src["clip_qkv"]["source"].startswith("OLMo's default"), src  # null: unset
PY
[[ "$text" == *"Recurrent Transformer"* && "$text" == *"activation_type gelu (__metadata__.config activation_type)"* ]] &&
  ok "the text table: the family, and where activation_type came from" || bad "info: $text"
sw="$("$bin" info "$dir/sw.weights.safetensors")"
[[ "$sw" == *"clip_qkv 0.8 (__metadata__.config clip_qkv)"* && "$sw" == *"alibi_bias_max 4 (__metadata__.config alibi_bias_max)"* ]] &&
  ok "info: clip_qkv and alibi_bias_max from the config when set" || bad "info sw: $sw"

# ---- eval and record over the reference's three windows of 70 tokens ----
"$py" "$ref" shards "$dir/c3.expect.safetensors" "$dir/shards" 97 >"$dir/want.txt"
reference_windows recurrent-transformer "$dir/c3.expect.safetensors" 2

pat="blocks.0.attn.hook_pattern,blocks.1.attn.hook_pattern,blocks.2.attn.hook_pattern"

# ---- recurrence depth: the lags of the recorded patterns, against numpy's from the reference's ----
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 70 --batch 2 --db "$dir/pat.db" --sites "$pat" --quiet >/dev/null &&
  ok "record --sites the three layers' patterns" || bad "record of the patterns"
if "$bin" recurrence-depth "$dir/pat.db" --json >"$dir/depth.json" 2>"$dir/depth.err"; then
  "$py" - "$dir/c3.expect.safetensors" "$dir/depth.json" <<'PY' && ok "recurrence-depth: every head's lags, diagonal share and kept mass equal numpy's from the reference's patterns" || bad "recurrence-depth differs from numpy"
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["GPNSCOPE_SOURCE"] + "/tests/reference")
from rt_reference import read_st
X = read_st(sys.argv[1])[0]
get = lambda name: X[name].astype(np.float64)  # noqa: E731
o = json.load(open(sys.argv[2]))
assert len(o["heads"]) == 12, len(o["heads"])
lag = np.arange(63, -1, -1.0)  # column j of a head's 64 holds the key at lag 63 - j
for h in o["heads"]:
    P = get("pattern_%d" % h["layer"])[:, :, h["head"] * 64:(h["head"] + 1) * 64].reshape(-1, 64)
    W = np.nan_to_num(P)
    mass = W.sum(1)
    rec = W[:, :63].sum(1)
    want = {"mean_lag": np.mean(W @ lag / mass), "diag_share": W[:, 63].mean(), "kept_mass": mass.mean(),
            "recurrent_lag": np.mean((W[:, :63] @ lag[:63])[rec > 0] / rec[rec > 0]),
            "deep_share": np.mean(mass < 1 - 1e-4), "rows": len(W)}
    for k, v in want.items():
        assert abs(h[k] - v) <= 1e-4 * max(1, abs(v)), (h["layer"], h["head"], k, h[k], v)
    assert np.allclose(h["lag_weight"], W.mean(0)[::-1], atol=1e-6)
# positions 64..69 of each window reach past the 64 kept keys
d = [h["deep_share"] for h in o["heads"]]
assert max(d) > 0 and all(0 <= x < 0.1 for x in d), d  # the steepest ALiBi head (slope 1/4) keeps its mass
PY
else bad "recurrence-depth: $(cat "$dir/depth.err")"; fi
"$bin" recurrence-depth "$dir/pat.db" | grep -qE "^ +2 +all " && ok "recurrence-depth prints a table with each layer's mean over heads" ||
  bad "recurrence-depth's table"
[[ "$(sqlite3 "$dir/pat.db" "select count(*) from analysis_scalars s join analyses a on a.id = s.analysis_id where a.name = 'recurrence_depth'")" == 72 ]] &&
  ok "recurrence-depth wrote 6 scalars per head (12 heads) to the store" || bad "recurrence_depth rows in the store"

# ---- every analysis on its state site, over random shards ----
random_shards "$dir/random" $((40 * 48)) 4
"$bin" record --model "$model" --corpus "$dir/random" --seq-len 48 --batch 7 --db "$dir/s.db" --quiet >/dev/null &&
  ok "record over random shards through the runner" || bad "record over random shards"
if "$bin" analyze "$dir/s.db" --json >"$dir/analyze.json" 2>"$dir/analyze.err"; then
  ok "analyze with every part that applies exits 0"
  sqlite3 -json "$dir/s.db" "select a.name || ':' || v.key as k, hex(v.vector) as v from analysis_vectors v
                           join analyses a on a.id = v.analysis_id" >"$dir/vectors.json"
  "$py" - "$model" "$dir/vectors.json" "$dir/analyze.json" <<'PY' && ok "geometry, default direction, horizons and probe ran; the decoded mean equals numpy's ff_out(ln_f(mean))" || bad "analyze: $(head -c 300 "$dir/analyze.json")"
import json, os, sys
import numpy as np
sys.path.insert(0, os.environ["GPNSCOPE_SOURCE"] + "/tests/reference")
from rt_reference import read_st
o = json.load(open(sys.argv[3]))
assert o["geometry"]["n_states"] == 40 * 48, o["geometry"]
for part in ("default", "horizon", "probe"):
    assert any(k.startswith(part) for k in o), (part, list(o))
vec = {r["k"]: np.frombuffer(bytes.fromhex(r["v"]), "<f4").astype(float) for r in json.load(open(sys.argv[2]))}
W = read_st(sys.argv[1])[0]
t = lambda name: W[name].astype(float)  # noqa: E731
s = vec["geometry:mean"]
ln = (s - s.mean()) / np.sqrt(s.var() + 1e-5) * t("transformer.ln_f.weight")
want, got = t("transformer.ff_out.weight") @ ln, vec["default_direction:logits_bar"]
assert np.allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max()), (got[:4], want[:4])
PY
else bad "analyze: $(cat "$dir/analyze.err")"; fi

fails_in_one_line "recurrence-depth without a recorded pattern" "recorded no attention pattern" "$bin" recurrence-depth "$dir/ref.db"
fails_in_one_line "no CUDA backend" "no CUDA engine" \
  "$bin" record --model "$model" --corpus "$dir/random" --seq-len 48 --db "$dir/bad.db" --device cuda --quiet
"$bin" convert "$fx/rt2.checkpoint.pt" "$dir/noconfig.safetensors" >/dev/null 2>&1
fails_in_one_line "a .pt converted without --config" "must carry its OLMo model config" "$bin" info "$dir/noconfig.safetensors"
"$bin" convert "$fx/rt2.checkpoint.pt" "$dir/rope.safetensors" --config "$dir/rope.config.json" >/dev/null 2>&1 || true
fails_in_one_line "rope: true with the recurrent block" "RoPE with the recurrent block is not supported" "$bin" info "$dir/rope.safetensors"
finish

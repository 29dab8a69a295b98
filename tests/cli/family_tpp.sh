#!/usr/bin/env bash
# The Transformer++ family end to end. Its forward pass equals a float64 numpy
# reference written from the source's equations (tests/reference/tpp_reference.py,
# whole sequences with a causal mask, against the engine's KV-cache decoding):
# every site < 1e-4 on configurations the tpp2 fixture lacks (three layers,
# four heads, T = 70; three heads of odd half size; one head of 10; six heads
# of 2), with batch invariance and BF16. gpnscope info lists its sites, each in
# docs/hooks.md; eval's perplexity is exp(mean nll) over T - 1 tokens per
# window; record (default sites) stores the last block's resid_post and the
# NLLs the reference computed; analyze runs geometry and the horizons on that
# site; what the family lacks is a one-line error.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir family_tpp shards random
ref="$GPNSCOPE_SOURCE/tests/reference/tpp_reference.py"
doc="$GPNSCOPE_SOURCE/docs/hooks.md"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
. "$GPNSCOPE_SOURCE/tests/cli/lib/reference_parity.sh"

#            name  V  D  L H  F  B T  seed
configs=("c3h4   97 32 3 4  48 3 70 21"
         "h3     61 18 2 3  40 2 33 22"
         "h1     50 10 1 1  20 2 20 23"
         "h6     40 12 2 6  24 2 17 24")
reference_parity tpp "${configs[@]}"
if "$GPNSCOPE_BUILD/tests/test_family_incremental" "${args[@]}" >"$dir/incremental.txt" 2>&1; then
  ok "KV-cache decoding = the reference's whole windows, and staggered batch rows = one at a time: every site < 1e-5 ($(grep -c 'worst' "$dir/incremental.txt") checks)"
else bad "incremental / batch invariance: $(grep FAIL "$dir/incremental.txt" | head -3)"; fi

model="$dir/c3h4.weights.safetensors"
info_sites "$model" transformer++ <<'PY'
names = list(w)
assert w["logits"] == 97 and w["nll"] == 1 and w["blocks.{i}.attn.hook_q"] == 32 and w["blocks.{i}.hook_resid_post"] == 32, w
assert not any(n.startswith("mem.") or ".mem." in n for n in names), names
for n in ("hook_embed", "blocks.{i}.hook_resid_pre", "blocks.{i}.attn.hook_k", "blocks.{i}.attn.hook_v",
          "blocks.{i}.hook_attn_out", "blocks.{i}.hook_resid_mid", "blocks.{i}.hook_mlp_out", "ln_final.hook_normalized"):
    assert n in names, n
PY
[[ "$text" == *"Transformer++"* && "$text" == *"blocks.{i}.hook_resid_post"* && "$text" == *"heads=4"* ]] &&
  ok "the text table: the family, its heads, its sites" || bad "info: $text"

# the reference's three windows of 70 tokens as a corpus
"$py" - "$dir/c3h4.expect.safetensors" "$dir/shards" >"$dir/want.txt" <<'PY'
import sys
import numpy as np
from testdata import read_safetensors, write_shards
_, get = read_safetensors(sys.argv[1])
write_shards(sys.argv[2], get("tokens", "<i4").reshape(-1), 97)
print(repr(float(np.exp(np.mean(get("nll").astype(np.float64))))))
PY
reference_windows transformer++ "$dir/c3h4.expect.safetensors" 2

random_shards "$dir/random" $((40 * 64)) 4
"$bin" record --model "$model" --corpus "$dir/random" --seq-len 64 --batch 7 --db "$dir/s.db" --quiet >/dev/null &&
  ok "record over random shards through the runner" || bad "record over random shards"
[[ "$(sqlite3 "$dir/s.db" "select count(*) from tokens")" == 2560 && "$(sqlite3 "$dir/s.db" "select count(*) from states")" == 2560 &&
   "$(sqlite3 "$dir/s.db" "select count(*) from tokens where nll is null")" == 40 ]] &&
  ok "2560 token rows and states, 40 first tokens without an NLL" || bad "store rows"
"$bin" analyze "$dir/s.db" --only geometry,horizon --site blocks.2.hook_resid_post --json >"$dir/analyze.json" &&
  "$py" -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["geometry"]["n_states"] == 2560, o["geometry"]' "$dir/analyze.json" &&
  ok "analyze geometry,horizon on blocks.2.hook_resid_post" || bad "analyze: $(head -c 300 "$dir/analyze.json")"

fails_in_one_line "no mem.alpha" "unknown hook name 'mem.alpha'" \
  "$bin" record --model "$model" --corpus "$dir/random" --seq-len 64 --db "$dir/bad.db" --sites mem.alpha --quiet
fails_in_one_line "no CUDA backend" "no CUDA engine" \
  "$bin" record --model "$model" --corpus "$dir/random" --seq-len 64 --db "$dir/bad2.db" --device cuda --quiet
fails_in_one_line "a bare per-layer name in a 3-layer model" "is per layer" \
  "$bin" record --model "$model" --corpus "$dir/random" --seq-len 64 --db "$dir/bad3.db" --sites hook_resid_post --quiet
# the same tensors without the config: the heads cannot be guessed
"$py" - "$model" "$dir/noconfig.safetensors" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
hdr = json.loads(raw[8:8 + n])
del hdr["__metadata__"]
h = json.dumps(hdr).encode()
open(sys.argv[2], "wb").write(struct.pack("<Q", len(h)) + h + raw[8 + n:])
PY
fails_in_one_line "no config: no heads" "number of attention heads" "$bin" info "$dir/noconfig.safetensors"
finish

#!/usr/bin/env bash
# Every analysis on every family (engine/arch/): a run of the Elman, the
# Transformer++ and the Gated DeltaNet test models goes through `analyze` with
# every part (geometry, the default direction with the family's own decode, the
# horizons, the probe through its token embedding, retention where it has
# decays), exits 0, and the default direction's decoded mean equals a numpy
# decode of the analysis's mean state through the family's output path (GPN's
# decode is checked by the analyses' own tests); ablate intervenes on the
# family's state site (none exact, the mean direction in carry scope).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir families_analyze shards; cd "$dir"
ref="$GPNSCOPE_SOURCE/tests/reference"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
random_shards shards $((40 * 48)) 9
"$py" "$ref/elman_reference.py" make elman 97 16 1 4 3
"$py" "$ref/tpp_reference.py" make tpp 97 24 2 3 40 1 4 4
"$py" "$ref/gdn_reference.py" make gdn 97 24 2 3 8 2 40 4 1 4 5
for fam in elman tpp gdn; do
  "$bin" record --model "$fam.weights.safetensors" --corpus shards --seq-len 48 --db "$fam.db" --quiet >/dev/null
  if "$bin" analyze "$fam.db" --json > "$fam.json" 2> "$fam.err"; then ok "$fam: analyze with every part exits 0"
  else bad "$fam: analyze: $(cat "$fam.err")"; continue; fi
  sqlite3 -json "$fam.db" "select a.name || ':' || v.key as k, hex(v.vector) as v from analysis_vectors v
                           join analyses a on a.id = v.analysis_id" > "$fam.vectors.json"
  "$py" - "$fam" <<'PY' && ok "$fam: the decoded mean state equals numpy's" || bad "$fam: decode of the mean"
import json, struct, sys
import numpy as np
fam = sys.argv[1]
vec = {r["k"]: np.frombuffer(bytes.fromhex(r["v"]), "<f4").astype(float) for r in json.load(open(fam + ".vectors.json"))}
raw = open(fam + ".weights.safetensors", "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; hdr = json.loads(raw[8:8 + n])
def t(name):
    x = hdr[name]; b, e = x["data_offsets"]
    return np.frombuffer(raw[8 + n + b:8 + n + e], "<f4").astype(float).reshape(x["shape"])
got, s = vec["default_direction:logits_bar"], vec["geometry:mean"]  # the decoded mean, and the mean it decodes
rms = lambda x, w, eps: x / np.sqrt(np.mean(x * x) + eps) * w
if fam == "elman": want = t("embedding") @ s
elif fam == "tpp": want = t("embedding.weight") @ rms(s, t("norm.weight"), 1e-6)
else: want = t("lm_head.weight") @ rms(s, t("model.norm.weight"), 1e-6)
assert got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max()), (got[:5], want[:5])
PY
  # interventions on the family's state site: none is exact, the mean direction runs in carry scope,
  # decode scope (GPN's decode-only copy of its state) is refused in one line
  "$bin" ablate "$fam.db" --what none --controls 0 --json > "$fam.none.json" 2> "$fam.err" &&
    "$py" -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["delta_nll"] == 0 and o["ppl_base"] == o["ppl_ablated"], o' "$fam.none.json" &&
    ok "$fam: ablate --what none changes nothing" || bad "$fam: ablate none: $(cat "$fam.err")"
  "$bin" ablate "$fam.db" --what mean-direction:subtract --scope carry --controls 0 > /dev/null 2> "$fam.err" &&
    ok "$fam: the mean direction subtracted from the carried state" || bad "$fam: mean-direction carry: $(cat "$fam.err")"
  set +e; "$bin" ablate "$fam.db" --what mean-direction:subtract --controls 0 > /dev/null 2> "$fam.err"; rc=$?; set -e
  [[ $rc -ne 0 && $(wc -l < "$fam.err") -eq 1 ]] && grep -q "no decode-only copy" "$fam.err" &&
    ok "$fam: decode scope refused: $(cat "$fam.err")" || bad "$fam: decode scope: exit $rc $(cat "$fam.err")"
done
finish

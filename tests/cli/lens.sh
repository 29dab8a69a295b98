#!/usr/bin/env bash
# gpnscope lens (docs/causal.md): the top-5 tokens and their logits of each
# site's decode at each position equal numpy's decode (float64, from the
# equations) of the float64 reference's own site values (tests/reference/,
# the fixtures' .expect files): Transformer++ residuals through the final
# RMSNorm and the tied head, GPN+M states through the decode norm, projection
# and tied embedding, where state.pred's lens is the model's own prediction;
# stored rows; one-line errors.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir lens
fx="$GPNSCOPE_FIXTURES/reference"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

# lens FIXTURE SITES REF-KEYS: run the lens on the reference's first window, compare with numpy
lens() {
  local name="$1" sites="$2" keys="$3"
  local ids; ids="$("$py" - "$fx/$name.expect.safetensors" <<'PY'
import json, struct, sys
import numpy as np
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n])["tokens"]
dt = {"I32": "<i4", "I64": "<i8", "F32": "<f4", "F64": "<f8"}[h["dtype"]]
b, e = h["data_offsets"]; t = np.frombuffer(raw[8 + n + b:8 + n + e], dt).reshape(h["shape"])[0]
print(",".join(str(int(x)) for x in t))
PY
)"
  if "$bin" lens "$fx/$name.weights.safetensors" --tokens "$ids" --sites "$sites" --top 5 --json >"$dir/$name.json" 2>"$dir/$name.err" &&
     "$py" - "$fx/$name" "$dir/$name.json" "$sites" "$keys" >"$dir/$name.txt" 2>&1 <<'PY'
import json, struct, sys
import numpy as np
base, out, sites, keys = sys.argv[1], sys.argv[2], sys.argv[3].split(","), sys.argv[4].split(",")
def load(path):
    raw = open(path, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; hdr = json.loads(raw[8:8 + n])
    def get(k):
        h = hdr[k]; b, e = h["data_offsets"]
        dt = {"F32": "<f4", "F64": "<f8", "I32": "<i4", "I64": "<i8", "BF16": None}[h["dtype"]]
        return np.frombuffer(raw[8 + n + b:8 + n + e], dt).reshape(h["shape"]).astype(np.float64)
    return hdr, get
wh, W = load(base + ".weights.safetensors"); _, X = load(base + ".expect.safetensors")
if "norm.weight" in wh:   # Transformer++: rms(x, norm.weight, 1e-6) @ E^T
    E, g = W("embedding.weight"), W("norm.weight")
    dec = lambda x: (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * g) @ E.T
else:                     # GPN: (rms(s, w, 1e-6) @ P + bias) @ E^T
    E, w, P = W("embedding"), W("decode_norm_w"), W("decode_proj_k")
    bias = W("decode_bias") if "decode_bias" in wh else 0
    dec = lambda x: ((x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w) @ P + bias) @ E.T
o = json.load(open(out))
worst, n = 0.0, 0
for site, key in zip(sites, keys):
    lg = dec(X(key)[0])                          # T x V, from the reference's own site values
    got_ids, got_lg = np.array(o["sites"][site]["ids"]), np.array(o["sites"][site]["logits"])
    want = np.argsort(-lg, axis=1, kind="stable")[:, :5]
    assert (got_ids == want).all(), (site, got_ids[:3], want[:3])
    wl = np.take_along_axis(lg, want, axis=1)
    worst = max(worst, float(np.max(np.abs(got_lg - wl) / np.maximum(1.0, np.abs(wl))))); n += got_ids.size
print("%d top-5 entries over %d sites: ids equal, logits max rel err %.1e" % (n, len(sites), worst))
assert worst < 1e-4, worst
PY
  then ok "$name: $(cat "$dir/$name.txt")"; else bad "$name: $(cat "$dir/$name.err") $(tail -3 "$dir/$name.txt")"; fi
}
lens tpp2 "blocks.0.hook_resid_post,blocks.1.hook_resid_post" "resid_post_0,resid_post_1"
lens gpnm1 "state.pred,state.ground" "s_pred,s_ground"
"$py" - "$dir/gpnm1.json" "$fx/gpnm1.expect.safetensors" >"$dir/own.txt" 2>&1 <<'PY' && ok "GPN+M: state.pred's lens is the model's own top-5 (the reference's logits)" || bad "own logits: $(tail -2 "$dir/own.txt")"
import json, struct, sys
import numpy as np
o = json.load(open(sys.argv[1])); raw = open(sys.argv[2], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])["logits"]; b, e = h["data_offsets"]
lg = np.frombuffer(raw[8 + n + b:8 + n + e], {"F32": "<f4", "F64": "<f8"}[h["dtype"]]).reshape(h["shape"])[0]
assert (np.array(o["sites"]["state.pred"]["ids"]) == np.argsort(-lg, axis=1, kind="stable")[:, :5]).all()
PY

# stored: sites x positions x top rows
if "$bin" lens "$fx/gpnm1.weights.safetensors" --tokens 5,6,7,8 --top 3 --store "$dir/s.db" >"$dir/st.txt" 2>&1; then
  got="$(sqlite3 "$dir/s.db" "SELECT count(*), count(DISTINCT site), max(position), max(rank) FROM lens_tokens")"
  sites="$("$bin" info "$fx/gpnm1.weights.safetensors" --json | "$py" -c "import json,sys; print(sum(1 for s in json.load(sys.stdin)['sites'] if s['kind']=='vector' and s['width']==40 and 'gate' not in s['name'] and s['name']!='state.decode'))")"
  [[ "$got" == "$((sites * 4 * 3))|$sites|3|2" ]] && ok "stored: $got (rows, sites, last position, last rank)" || bad "store: $got, $sites sites"
else bad "store: $(tail -2 "$dir/st.txt")"; fi

# the text says what a row is, a tie is said instead of ranked (GPN's zero state at position 0; issue 37)
"$bin" lens "$fx/gpnm1.weights.safetensors" --tokens 5,6,7,8 --top 3 --sites state.pred >"$dir/txt.txt" 2>&1
grep -q "^row t: the step that read token t" "$dir/txt.txt" && ok "the text says what row t is" || bad "no row legend: $(head -2 "$dir/txt.txt")"
grep -q "^    0 .*(every top-3 logit is 0.00: a tie, no prediction; the zero state)" "$dir/txt.txt" &&
  ok "position 0's zero state: a tie, said as such" || bad "position 0: $(grep '^    0' "$dir/txt.txt")"
# the heatmap: sites by positions, the top-1 token in each cell
if "$bin" lens "$fx/gpnm1.weights.safetensors" --tokens 5,6,7,8 --top 3 --store "$dir/p.db" --plot "$dir/fig" >"$dir/pl.txt" 2>&1; then
  rows="$(grep -vc '^#' "$dir/fig/lens_heatmap-top1.dat")"
  want="$(sqlite3 "$dir/p.db" "SELECT count(*) FROM lens_tokens WHERE rank = 0")"
  top="$(sqlite3 "$dir/p.db" "SELECT token_id FROM lens_tokens WHERE rank = 0 AND site = 'state.ground' AND position = 2")"
  [[ "$rows" == "$want" ]] && grep -q "with labels" "$dir/fig/lens_heatmap.gp" &&
    awk -v t="$top" '$2 != "" && $4 == t {f=1} END {exit !f}' "$dir/fig/lens_heatmap-top1.dat" &&
    ok "lens --plot: one cell per site and position ($rows), the top-1 token written in it" || bad "heatmap: $rows rows of $want"
  if command -v gnuplot >/dev/null; then [[ -s "$dir/fig/lens_heatmap.png" ]] && ok "lens heatmap rendered" || bad "no lens_heatmap.png: $(cat "$dir/pl.txt")"; fi
else bad "lens --plot: $(tail -2 "$dir/pl.txt")"; fi
err() { local want="$1"; shift
  set +e; "$bin" lens "$@" >/dev/null 2>"$dir/e.err"; local rc=$?; set -e
  [[ $rc -ne 0 && $(wc -l <"$dir/e.err") -eq 1 && "$(cat "$dir/e.err")" == *"$want"* ]] && ok "error: $(cat "$dir/e.err")" || bad "expected '$want', exit $rc: $(cat "$dir/e.err")"
}
err "mem.alpha is 3 wide" "$fx/gpnm1.weights.safetensors" --tokens 1,2 --sites mem.alpha
err "token ids from 0 to 96" "$fx/gpnm1.weights.safetensors" --tokens 1,200
err "give --text or --tokens, one of them" "$fx/gpnm1.weights.safetensors"
err "--plot draws from the stored lens: give --store too" "$fx/gpnm1.weights.safetensors" --tokens 1,2 --plot "$dir/x"
finish

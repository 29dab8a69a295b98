#!/usr/bin/env bash
# gpnscope info says where each size came from (text and --json
# "config_sources") and lists the Transformer++'s attention pattern site with
# its bound; record --sites blocks.0.attn.hook_pattern stores the pattern, and
# the stored rows are the softmax of the recorded queries on the recorded keys
# (the most recent 64, NaN before position 0), recomputed here in numpy.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
need_sqlite3
fx="$GPNSCOPE_FIXTURES/reference"
scratch_dir tpp_pattern shards
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

info="$("$bin" info "$fx/tpp2.weights.safetensors")"
grep -qF "  n_heads 2 (__metadata__.config n_heads)" <<<"$info" && grep -qF "  hidden_dim 32 (embedding.weight [89, 32])" <<<"$info" &&
  ok "info: the sizes' sources" || bad "info lacks the sources: $info"
grep -qE "^  blocks\.\{i\}\.attn\.hook_pattern +per-head vector\[128\] .*64 most recent keys" <<<"$info" &&
  ok "info: the pattern site, H x 64 wide, says its bound" || bad "info lacks the pattern site"
for f in tpp2:n_heads:"__metadata__.config n_heads" gdn2:n_heads:"model.layers.0.attn.A_log [2]" \
         gpnm1:d_key:"write_W_k_k [40, 24] / n_heads" gpn:d_state:"decode_norm_w [36]"; do
  IFS=: read -r name key want <<<"$f"
  got="$("$bin" info --json "$fx/$name.weights.safetensors" | "$py" -c "import json,sys; print(json.load(sys.stdin)['config_sources']['$key']['source'])")"
  [[ "$got" == "$want" ]] && ok "info --json: $name's $key from $want" || bad "info --json: $name's $key from '$got', not '$want'"
done

# two windows of 70 tokens of tpp2's 89-token vocabulary: longer than the window of 64 keys
random_shards "$dir/shards" 140 5 89
"$bin" record --model "$fx/tpp2.weights.safetensors" --corpus "$dir/shards" --seq-len 70 --batch 2 --db "$dir/p.db" \
  --sites blocks.0.attn.hook_pattern,blocks.0.attn.hook_q,blocks.0.attn.hook_k --quiet >/dev/null &&
  ok "record --sites blocks.0.attn.hook_pattern" || bad "record of the pattern site"
sqlite3 -json "$dir/p.db" "select kind, window, position, hex(vector) as v from states" >"$dir/states.json"
"$py" - "$dir/states.json" <<'PY' && ok "the stored pattern is softmax(q k / sqrt(Dh)) on the last 64 keys, NaN before 0" || bad "the stored pattern is wrong"
import json, sys
import numpy as np
H, Dh, P, T = 2, 16, 64, 70
rows = {}
for r in json.load(open(sys.argv[1])):
    rows[(r["kind"], r["window"], r["position"])] = np.frombuffer(bytes.fromhex(r["v"]), "<f4").astype(np.float64)
windows = sorted({w for (_, w, _) in rows})
assert len(windows) == 2 and len(rows) == 3 * 2 * T, (windows, len(rows))
worst = 0
for w in windows:
    q = np.stack([rows[("blocks.0.attn.hook_q", w, t)] for t in range(T)]).reshape(T, H, Dh)
    k = np.stack([rows[("blocks.0.attn.hook_k", w, t)] for t in range(T)]).reshape(T, H, Dh)
    for t in range(T):
        pat = rows[("blocks.0.attn.hook_pattern", w, t)].reshape(H, P)
        for h in range(H):
            s = k[: t + 1, h] @ q[t, h] / np.sqrt(Dh)
            p = np.exp(s - s.max()); p /= p.sum()
            for col in range(P):
                key = t - (P - 1) + col
                if key < 0:
                    assert np.isnan(pat[h, col]), (w, t, h, col)
                else:
                    worst = max(worst, abs(pat[h, col] - p[key]))
assert worst < 1e-5, worst
print("pattern max abs error", worst)
PY
finish

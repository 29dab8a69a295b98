#!/usr/bin/env bash
# gpnscope record --sites (docs/hooks.md): the default sites and --states give
# the rows they always gave; a per-layer site is captured through probes/ and
# holds what the step computed (the layer's update s_pred = pred_gate * s +
# mlp_out + mem_out, checked from the recorded rows); only the per-head sites
# asked for are filled; bad site lists are one-line usage errors.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
record_scratch record_sites "$((12 * 24))" 3
args=(--model "$model" --corpus "$dir/shards" --seq-len 24 --batch 5 --quiet)
digest() { # DB: every recorded row, as text
  sqlite3 "$1" "select window, position, token_id, nll, entropy, top1 from tokens order by 1, 2;
                select window, position, head, alpha, beta, mem_norm from head_steps order by 1, 2, 3;
                select window, position, kind, hex(vector) from states order by 1, 2, 3;" | md5sum
}

"$bin" record "${args[@]}" --db "$dir/states.db" --states pred,ground >/dev/null
"$bin" record "${args[@]}" --db "$dir/sites.db" --sites state.pred,state.ground,mem.alpha,mem.beta,mem.norm >/dev/null
[[ "$(digest "$dir/states.db")" == "$(digest "$dir/sites.db")" ]] &&
  ok "--sites state.pred,state.ground,mem.* records what --states pred,ground does" || bad "--sites differs from --states"
"$bin" record "${args[@]}" --db "$dir/default.db" >/dev/null
[[ "$(sqlite3 "$dir/default.db" "select states from runs")" == pred &&
   "$(sqlite3 "$dir/default.db" "select count(*) from head_steps where alpha is null or beta is null or mem_norm is null")" == 0 &&
   "$(sqlite3 "$dir/default.db" "select count(distinct kind) from states")" == 1 ]] &&
  ok "the default: state.pred and every per-head column" || bad "the default sites changed"

"$bin" record "${args[@]}" --db "$dir/layer.db" \
  --sites state.pred,state.ground,blocks.*.pred_gate,blocks.0.hook_mlp_out,L0.mem_read,mem.beta >/dev/null
kinds="$(sqlite3 "$dir/layer.db" "select states from runs")"
[[ "$kinds" == "pred,ground,blocks.0.pred_gate,blocks.0.hook_mlp_out,blocks.0.hook_mem_out" ]] &&
  ok "per-layer sites are stored by name (aliases resolved): $kinds" || bad "runs.states: $kinds"
[[ "$(sqlite3 "$dir/layer.db" "select count(*) from head_steps where alpha is null and mem_norm is null and beta is not null")" == \
   "$(sqlite3 "$dir/layer.db" "select count(*) from head_steps")" ]] &&
  ok "only mem.beta is filled" || bad "head_steps columns not asked for are filled"
sqlite3 -json "$dir/layer.db" "select window, position, kind, hex(vector) as v from states" > "$dir/layer.json"
"$py" - "$dir/layer.json" <<'PY' && ok "captured per-layer rows satisfy s_pred = pred_gate * s + mlp_out + mem_out" || bad "captured rows are not the step's"
import json, struct, sys
rows = json.load(open(sys.argv[1]))
v = {}
for r in rows:
    b = bytes.fromhex(r["v"])
    v[(r["window"], r["position"], r["kind"])] = struct.unpack("<%df" % (len(b) // 4), b)
worst, n = 0.0, 0
for (w, t, k), pred in v.items():
    if k != "pred" or t == 0:
        continue
    s = v[(w, t - 1, "ground")]
    g, f, m = (v[(w, t, "blocks.0." + x)] for x in ("pred_gate", "hook_mlp_out", "hook_mem_out"))
    for i in range(len(pred)):
        # float32 rounding of three terms: relative to their magnitudes, not to a sum that may cancel
        worst = max(worst, abs(g[i] * s[i] + f[i] + m[i] - pred[i]) / (1e-12 + abs(g[i] * s[i]) + abs(f[i]) + abs(m[i])))
    n += 1
assert n >= 12 * 23 and worst < 1e-6, (n, worst)
PY

expect_usage() { # WHAT ARGS...: exit 2 with one line naming the problem
  local what="$1"; shift
  set +e; "$bin" record "${args[@]}" --db "$dir/bad.db" "$@" >/dev/null 2>"$dir/err"; local rc=$?; set -e
  [[ $rc -eq 2 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q "$what" "$dir/err" && ok "$* -> exit 2: $(cat "$dir/err")" ||
    bad "$*: exit $rc, $(cat "$dir/err")"
}
expect_usage "unknown hook name 'state.bogus'" --sites state.pred,state.bogus
expect_usage "give one" --sites state.pred --states pred
expect_usage "the model has 1 layer" --sites blocks.1.hook_mlp_out
expect_usage "named twice" --sites state.pred,s_pred
"$bin" record --model "$GPNSCOPE_FIXTURES/reference/gpn.weights.safetensors" --corpus "$dir/shards" --seq-len 24 \
  --quiet --db "$dir/gpn.db" --sites mem.alpha >/dev/null 2>"$dir/err" && bad "GPN recorded mem.alpha" ||
  { grep -q "no memory" "$dir/err" && ok "GPN has no mem.alpha: $(cat "$dir/err")" || bad "GPN mem.alpha: $(cat "$dir/err")"; }
finish

#!/usr/bin/env bash
# The seam (docs/architecture.md, "Adding a family"): the toy Elman family,
# one folder (engine/arch/elman/) and one row of the family table, runs
# through everything a GPN runs through. Its forward pass equals a float64
# numpy reference written from its definition (tests/reference/elman_reference.py,
# < 1e-4, batch invariance, BF16 weights within rounding); gpnscope info
# lists its sites; record goes through the runner; analyze runs geometry and
# the horizons on its state site, with numbers equal to a numpy recomputation
# from the recorded rows; asking it for what it lacks is a one-line error.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir family_elman shards
ref="$GPNSCOPE_SOURCE/tests/reference/elman_reference.py"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
. "$GPNSCOPE_SOURCE/tests/cli/lib/numpy_horizons.sh"

"$py" "$ref" make "$dir/e1" 53 24 3 40 7
"$py" "$ref" make "$dir/e2" 97 16 1 4 9
if "$GPNSCOPE_BUILD/tests/test_parity" "$dir/e1.weights.safetensors" "$dir/e1.expect.safetensors" >"$dir/parity.txt"; then
  ok "forward pass equals the float64 reference: $(grep -c 'rel err' "$dir/parity.txt") tensors < 1e-4"
else bad "parity: $(grep FAIL "$dir/parity.txt" | head -3)"; fi

model="$dir/e2.weights.safetensors"
info="$("$bin" info "$model")"
for s in state.pred state.next logits nll; do
  [[ "$info" == *"$s"* ]] && ok "info lists $s" || bad "info lacks $s"
done
[[ "$info" == *"Elman"* && "$info" != *"mem.alpha"* ]] && ok "info: the Elman family, no memory sites" || bad "info: $info"

random_shards "$dir/shards" $((40 * 64)) 4
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --batch 7 --db "$dir/s.db" --sites state.pred,state.next --quiet >/dev/null &&
  ok "recorded through the runner" || bad "record"
[[ "$(sqlite3 "$dir/s.db" "select count(*) from tokens")" == 2560 && "$(sqlite3 "$dir/s.db" "select count(*) from head_steps")" == 0 &&
   "$(sqlite3 "$dir/s.db" "select arch || ' ' || states from runs join models m on m.id = model_id")" == "elman pred,state.next" ]] &&
  ok "2560 token rows, no head rows, states pred and state.next" || bad "store rows"
"$bin" analyze "$dir/s.db" --only geometry,horizon >"$dir/analyze.txt" && ok "analyze geometry,horizon" || bad "analyze: $(cat "$dir/analyze.txt")"

numpy_horizons "$dir/s.db" "pred" "$dir"

"$bin" analyze "$dir/s.db" --only geometry --site state.next --json >"$dir/next.json" &&
  "$py" -c 'import json,sys; o=json.load(open(sys.argv[1])); assert o["geometry"]["n_states"] == 2560, o["geometry"]' "$dir/next.json" &&
  ok "analyze --site state.next reads the other recorded site" || bad "analyze --site state.next: $(head -c 300 "$dir/next.json")"
set +e
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --db "$dir/bad.db" --sites mem.alpha --quiet >/dev/null 2>"$dir/err"; rc=$?
set -e
[[ $rc -eq 2 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q "unknown hook name 'mem.alpha'" "$dir/err" &&
  ok "the Elman family has no mem.alpha: $(cat "$dir/err")" || bad "mem.alpha on Elman: exit $rc, $(cat "$dir/err")"
set +e
"$bin" record --model "$model" --corpus "$dir/shards" --seq-len 64 --db "$dir/bad.db" --device cuda --quiet >/dev/null 2>"$dir/err"; rc=$?
set -e
[[ $rc -ne 0 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q "no CUDA engine" "$dir/err" &&
  ok "no CUDA backend: one line: $(cat "$dir/err")" || bad "cuda on Elman: exit $rc, $(cat "$dir/err")"
finish

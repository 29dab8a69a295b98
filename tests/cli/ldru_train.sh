#!/usr/bin/env bash
# `gpnscope train` on a task config (docs/ldru.md): a short MLP-LDRU run on
# parity writes model.safetensors (family ldru, the task in its metadata,
# `gpnscope info` describes it), loss.csv and eval.json (accuracy per
# length, in distribution 1..max_length and out of distribution beyond);
# the same config gives the same bytes; a longer run lowers the loss; the
# model records through the runner (prefix and every tree level) and
# analyze reads its state; every site info lists is in docs/hooks.md; a bad
# task, an unknown key and an option that does not apply are one-line errors.
set -euo pipefail
bin="$GPNSCOPE_BIN"
dir="$GPNSCOPE_BUILD/test-scratch/ldru_train"; rm -rf "$dir"; mkdir -p "$dir"
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
cfg() { # STEPS OUT [TASK] [EXTRA_TOP_LEVEL]
  cat >"$dir/$2.json" <<JSON
{"task": "${3:-parity}", "model": {"d_model": 16, "d_ffn": 32},
 "training": {"steps": $1, "batch": 16, "max_length": 12, "seed": 3, "threads": 1, "log_every": 5},
 "optimizer": {"lr": 3e-3, "warmup": 5}, "eval": {"count": 8, "ood_max": 60, "ood_lengths": 3},
 "output": {"dir": "$2"}${4:-}}
JSON
}
cfg 30 a; cfg 30 b; cfg 150 long
"$bin" train --config "$dir/a.json" >"$dir/a.out" 2>"$dir/a.err" && ok "trained 30 steps" || bad "train: $(tail -2 "$dir/a.err")"
"$bin" train --config "$dir/b.json" --quiet >/dev/null 2>&1 && ok "trained again" || bad "second run"
cmp -s "$dir/a/model.safetensors" "$dir/b/model.safetensors" && ok "the same config gives the same model, byte for byte" ||
  bad "two runs of one config differ"
grep -q "in distribution" "$dir/a.out" && grep -q "out of distribution" "$dir/a.out" && ok "prints the accuracy buckets" ||
  bad "output: $(cat "$dir/a.out")"
info="$("$bin" info "$dir/a/model.safetensors")"
[[ "$info" == *"architecture ldru"* && "$info" == *"task parity"* && "$info" == *"tree.level.{i}"* && "$info" == *"prefix"* ]] &&
  ok "info: family ldru, task parity, sites tree.level.{i} and prefix" || bad "info: $info"
[[ $(wc -l <"$dir/a/loss.csv") -eq 7 ]] && head -1 "$dir/a/loss.csv" | grep -q "^step,length,loss,accuracy" &&
  ok "loss.csv: a header and 6 rows" || bad "loss.csv: $(cat "$dir/a/loss.csv")"
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
"$py" - "$dir/a/eval.json" <<'PY' && ok "eval.json: lengths 1..12 and 3 beyond, 8 strings each, accuracies in [0, 1]" || bad "eval.json"
import json, sys
e = json.load(open(sys.argv[1]))
L = [r["length"] for r in e["lengths"]]
assert L[:12] == list(range(1, 13)) and len(L) == 15 and all(12 < x <= 60 for x in L[12:]), L
assert all(r["n"] == 8 and 0 <= r["accuracy"] <= 1 for r in e["lengths"])
assert 0 <= e["in_distribution"] <= 1 and 0 <= e["out_of_distribution"] <= 1 and e["task"] == "parity"
PY
"$bin" train --config "$dir/long.json" --quiet >/dev/null 2>&1
first=$(sed -n 2p "$dir/long/loss.csv" | cut -d, -f3); last=$(tail -1 "$dir/long/loss.csv" | cut -d, -f3)
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a) }' && ok "150 steps lower the loss: $first -> $last" ||
  bad "the loss did not fall: $first -> $last"
mkdir -p "$dir/shards"
"$py" "$(dirname "${BASH_SOURCE[0]}")/symbol_shards.py" "$dir/shards" 640 5 2 parity
"$bin" record --model "$dir/long/model.safetensors" --corpus "$dir/shards" --seq-len 32 --batch 4 --db "$dir/s.db" \
  --sites 'prefix,tree.level.*' --quiet >/dev/null 2>"$dir/rec.err" &&
  [[ "$(sqlite3 "$dir/s.db" "select count(distinct kind) || ' ' || count(*) from states")" == "12 7680" ]] &&
  ok "recorded prefix and tree.level.0..10 through the runner: 640 rows each" || bad "record: $(cat "$dir/rec.err")"
"$bin" analyze "$dir/s.db" --only geometry --json >"$dir/geo.json" &&
  "$py" -c 'import json,sys; g=json.load(open(sys.argv[1]))["geometry"]; assert g["n_states"] == 640, g' "$dir/geo.json" &&
  ok "analyze geometry on the prefix states" || bad "analyze: $(head -c 300 "$dir/geo.json")"
# a classifier has no token to default to: the first finding is named for what it measures
"$bin" analyze "$dir/s.db" --only geometry,default >"$dir/an.txt" 2>&1 &&
  grep -q "1. persistent mean direction (the default-token test; an MLP-LDRU sequence classifier has no token" "$dir/an.txt" &&
  ! grep -q "default-token direction:" "$dir/an.txt" &&
  ok "the findings name the mean direction, not a default token" || bad "findings: $(grep -m2 '1\.' "$dir/an.txt")"
for s in $("$bin" info "$dir/a/model.safetensors" --json | "$py" -c 'import json,sys; print(" ".join(s["name"] for s in json.load(sys.stdin)["sites"]))'); do
  grep -qF "| \`$s\` |" "$GPNSCOPE_SOURCE/docs/hooks.md" && ok "docs/hooks.md has $s" || bad "docs/hooks.md lacks $s"
done
set +e
cfg 5 t1 no_such_task
"$bin" train --config "$dir/t1.json" >/dev/null 2>"$dir/err"; rc=$?
[[ $rc -ne 0 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q "unknown task 'no_such_task'" "$dir/err" &&
  ok "unknown task: $(cat "$dir/err")" || bad "unknown task: exit $rc, $(cat "$dir/err")"
cfg 5 t2 parity ', "extra": 1'
"$bin" train --config "$dir/t2.json" >/dev/null 2>"$dir/err"; rc=$?
[[ $rc -ne 0 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q 'unknown key "extra"' "$dir/err" &&
  ok "unknown key: $(cat "$dir/err")" || bad "unknown key: exit $rc, $(cat "$dir/err")"
"$bin" train --config "$dir/a.json" --bptt 4 >/dev/null 2>"$dir/err"; rc=$?
[[ $rc -eq 2 && $(wc -l <"$dir/err") -eq 1 ]] && ok "--bptt on a task config: $(cat "$dir/err")" || bad "--bptt: exit $rc, $(cat "$dir/err")"
set -e
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

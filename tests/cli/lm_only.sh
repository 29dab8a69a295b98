#!/usr/bin/env bash
# A family that is not a language model (the family row's not_lm: MLP-LDRU,
# a sequence classifier whose logits are its classes) is refused in one line
# naming the command by every command that reads logits as a vocabulary,
# decodes through a tokenizer or computes NLL over a corpus: eval, lens,
# steer, patch, ablate, record --tokenizer (and attribute, attention,
# recurrence-depth, which need GPN, memory heads or attention); the commands
# that do apply to it still work: info, record of its sites over a corpus of
# its symbols, analyze (geometry on prefix, and the default analyses, where
# the mean direction is kept and its decode noted as not applying), automaton.
set -uo pipefail
bin="$GPNSCOPE_BIN"
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
dir="$GPNSCOPE_BUILD/test-scratch/lm_only"; rm -rf "$dir"; mkdir -p "$dir"
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
refused() { # CMD PATTERN ARGS...: exit non-zero, exactly one line on stderr, "gpnscope CMD: " and PATTERN in it
  local cmd="$1" pattern="$2"; shift 2
  local err; err="$("$bin" "$cmd" "$@" 2>&1 >/dev/null)"; local rc=$?
  if [[ $rc -ne 0 && $(printf '%s\n' "$err" | wc -l) -eq 1 && "$err" == "gpnscope $cmd: "*"$pattern"* ]]; then
    ok "$cmd refused: $err"
  else bad "$cmd: exit $rc, want a one-line refusal with '$pattern': $err"; fi
}

# a tiny MLP-LDRU on parity (as tests/cli/ldru_train.sh trains one)
cat >"$dir/p.json" <<'JSON'
{"task": "parity", "model": {"d_model": 8, "d_ffn": 16},
 "training": {"steps": 5, "batch": 4, "max_length": 8, "seed": 3, "threads": 1, "log_every": 5},
 "optimizer": {"lr": 3e-3, "warmup": 1}, "eval": {"count": 2, "ood_max": 20, "ood_lengths": 1},
 "output": {"dir": "p"}}
JSON
"$bin" train --config "$dir/p.json" --quiet >/dev/null 2>"$dir/train.err" || { echo "FAIL: train: $(cat "$dir/train.err")"; exit 1; }
m="$dir/p/model.safetensors"
mkdir -p "$dir/shards"
"$py" "$(dirname "${BASH_SOURCE[0]}")/symbol_shards.py" "$dir/shards" 128 5 2 parity
printf '{"clean": [0, 1, 1], "corrupted": [1, 1, 1], "answer": 0}\n' >"$dir/pairs.jsonl"

# what works on it
"$bin" info "$m" >"$dir/info.out" 2>&1 && grep -q "architecture ldru" "$dir/info.out" && ok "info" || bad "info: $(cat "$dir/info.out")"
"$bin" record --model "$m" --corpus "$dir/shards" --seq-len 16 --batch 4 --db "$dir/s.db" --sites prefix --quiet \
  >/dev/null 2>"$dir/rec.err" && ok "record prefix over a corpus of its symbols" || bad "record: $(cat "$dir/rec.err")"
"$bin" analyze "$dir/s.db" --only geometry --site prefix --json >"$dir/geo.json" 2>"$dir/geo.err" &&
  "$py" -c 'import json,sys; g=json.load(open(sys.argv[1]))["geometry"]; assert g["n_states"] == 128 and g["d"] == 8, g' "$dir/geo.json" &&
  ok "analyze geometry on prefix" || bad "analyze geometry: $(cat "$dir/geo.err")"
"$bin" analyze "$dir/s.db" >"$dir/an.out" 2>"$dir/an.err" &&
  grep -q "not a language model: its mean direction without default tokens" "$dir/an.out" &&
  ok "analyze (default analyses): runs, the decode noted as not applying" || bad "analyze: $(cat "$dir/an.err")"
"$bin" automaton "$m" --task parity --strings 10 --max-length 16 --json >"$dir/auto.json" 2>"$dir/auto.err" &&
  ok "automaton" || bad "automaton: $(cat "$dir/auto.err")"

# what needs a language model
lm="not a language model: "
refused eval "${lm}eval needs a language model" --model "$m" --corpus "$dir/shards" --seq-len 16
refused lens "${lm}lens needs a language model" "$m" --tokens 0,1,1
refused steer "${lm}steer needs a language model" "$m" --corpus "$dir/shards" --seq-len 16 --direction "$dir/s.db:1" --c 1
refused patch "${lm}patch needs a language model" "$m" "$dir/pairs.jsonl"
refused ablate "${lm}ablate needs a language model" "$dir/s.db" --what none
tok="$GPNSCOPE_SOURCE/third_party/llama2-tokenizer.json"
if [[ -f "$tok" ]]; then
  refused record "${lm}record --tokenizer needs a language model" --model "$m" --corpus "$dir/shards" --tokenizer "$tok" \
    --seq-len 16 --db "$dir/t.db" --quiet
else echo "skip: no $tok for record --tokenizer"; fi
refused attribute "this model is ldru" "$dir/s.db"
refused attention "has no delta-rule memory heads" "$dir/s.db"
refused recurrence-depth "recorded no attention pattern" "$dir/s.db"
[[ ! -e "$dir/t.db" ]] && ok "the refused record made no store" || bad "record --tokenizer left $dir/t.db"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# A new user's first hour, the parts own_text.sh does not walk (issue 38):
#   - info and the demo say what the shipped models were trained on (38.1);
#   - a model folder is taken wherever a model is: eval, record, lens, patch,
#     steer, attention/attribute/ablate --model, analyze --model, import
#     --model, demo --model, and convert writes FOLDER/model.safetensors (38.2);
#   - one tokenizer default: shard too runs with no --tokenizer (38.2);
#   - --windows all in record, eval and ablate, and the errors name it (38.3).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
shipped_scratch first_hour
need_sqlite3
cd "$dir"
ln -s "$src/models" models
unset GPNSCOPE_TOKENIZER
m=models/gpnm15-small
"$py" - <<'PY'
paras = ["The river ran low that summer, and the children of the village walked along its bed collecting stones "
         "that had never before seen the sun. Some were smooth and grey, some streaked with red.",
         "Their grandmother said the river had been lower once, in the year the mill burned down. She remembered "
         "the smoke over the fields, the men running with buckets, and the silence afterwards."]
open("my.txt", "w").write("\n\n".join(paras * 3) + "\n")
PY
# run WHAT CMD...: CMD succeeds (its output in out.txt, its messages in err.txt)
run() {
  local what="$1"; shift
  "$@" >out.txt 2>err.txt && ok "$what" || bad "$what: $(tail -1 err.txt)"
}
# one_line CODE PATTERN CMD...: exits CODE with one line on stderr holding PATTERN
one_line() {
  local code="$1" pat="$2"; shift 2
  local rc=0
  "$@" >/dev/null 2>err.txt || rc=$?
  [[ $rc == "$code" && "$(wc -l <err.txt)" == 1 ]] && grep -q -- "$pat" err.txt && ok "${*:2:3}: $(cut -c1-110 err.txt)" ||
    bad "${*:2:3}: exit $rc (want $code, '$pat'): $(cat err.txt)"
}

# ---- 38.1: what the shipped models know ----
"$bin" info "$m" | grep -q "^trained on .*Python documentation.*fortunes" && ok "info names the shipped model's training text" ||
  bad "info: no 'trained on' line"
"$bin" info models/tpp-small --json | "$py" -c 'import json,sys; assert "Python documentation" in json.load(sys.stdin)["trained_on"]' &&
  ok "info --json: trained_on for a baseline" || bad "info --json has no trained_on"
cp "$m/model.safetensors" mine.safetensors # the same bytes outside models/: not known to be the shipped one
"$bin" info mine.safetensors | grep -q "^trained on" && bad "info claims a training text for a file it does not know" ||
  ok "info says nothing of the training text of another file"
"$bin" demo --help | grep -q "Python documentation" && ok "demo --help says the held-out text's kind" || bad "demo --help"

# ---- 38.2: a model folder wherever a model is taken ----
run "record --model FOLDER --windows all" "$bin" record --model "$m" --corpus my.txt --db my.db --seq-len 64 --windows all --quiet
n=$(sqlite3 my.db "select count(*) from windows where run_id = 1")
grep -q "recorded run 1 into my.db: $n windows" out.txt && [[ $n -ge 4 ]] && ok "--windows all recorded every window ($n)" ||
  bad "record --windows all: $(cat out.txt), $n windows stored"
run "eval --model FOLDER --windows all" "$bin" eval --model "$m" --corpus my.txt --seq-len 64 --windows all
grep -q "^windows *$n of $n" out.txt && ok "eval --windows all read all $n windows" || bad "eval: $(grep windows out.txt)"
run "analyze --model FOLDER" "$bin" analyze my.db --only geometry,default --model "$m"
run "lens FOLDER" "$bin" lens "$m" --text "The river ran low"
echo '{"clean": "The river ran low", "corrupted": "The river ran high", "answer": ".", "foil": ","}' >pairs.jsonl
run "patch FOLDER" "$bin" patch "$m" pairs.jsonl
run "steer FOLDER" "$bin" steer "$m" --corpus my.txt --from my.db --direction s_bar --c 0,1 --seq-len 64 --windows 2
run "attention --model FOLDER" "$bin" attention my.db --model "$m" --windows 1
run "attribute --model FOLDER" "$bin" attribute my.db --model "$m" --windows 1
run "ablate --model FOLDER --windows all" "$bin" ablate my.db --what none --model "$m" --windows all
"$py" - <<'PY'
import struct
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4, 256), }"
hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
open("states.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + bytes(4 * 4 * 256))
PY
run "import --model FOLDER" "$bin" import --db imp.db --states states.npy --model "$m"
[[ "$(sqlite3 imp.db 'select sha256 from models')" == "$(sha256sum "$m/model.safetensors" | cut -d' ' -f1)" ]] &&
  ok "import recorded the folder's model.safetensors" || bad "import: $(sqlite3 imp.db 'select path, sha256 from models')"
mkdir -p converted
run "convert CHECKPOINT FOLDER" "$bin" convert "$GPNSCOPE_FIXTURES/reference/gdn2.checkpoint.pt" converted
[[ -s converted/model.safetensors ]] && "$bin" info converted >/dev/null 2>&1 && ok "the folder's model.safetensors loads as the folder" ||
  bad "convert into a folder: $(ls converted) $("$bin" info converted 2>&1 | tail -1)"
mkdir -p empty-model
# the demo checks every model before it records: the folder is taken, the empty one named
one_line 1 "model empty-model not found" "$bin" demo --model "$m" --model empty-model --corpus my.txt --out demo-out

# ---- 38.2: one tokenizer default ----
run "shard with no --tokenizer" "$bin" shard --corpus my.txt --out shards
grep -q "^wrote [0-9]* tokens" out.txt && [[ -s shards/meta.json ]] && ok "shard took the bundled tokenizer" || bad "shard: $(cat out.txt)"

# ---- 38.3: the errors say --windows all ----
one_line 2 "expected a non-negative integer or 'all'" "$bin" record --model "$m" --corpus my.txt --db x.db --windows most
one_line 2 "or all" "$bin" eval --model "$m" --corpus my.txt --windows most
one_line 1 "ask for $n or fewer (--windows all takes every one)" "$bin" eval --model "$m" --corpus my.txt --seq-len 64 --windows 99
finish

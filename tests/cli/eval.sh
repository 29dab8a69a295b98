#!/usr/bin/env bash
# gpnscope eval as a user runs it. Shards written here with numpy exactly as
# the companion's download_n_tokenize.py writes them (uint32 tofile, index as
# a JSON list, meta.json) from the tokens of gpnm1.expect.safetensors:
# perplexity = exp(mean(expected nll)) to 1e-4. Text and JSONL corpora of the
# same documents give the same numbers; selection options; errors.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
gpnm1_scratch cli_eval shards
check() { if [[ "$2" == "$3" ]]; then ok "$1"; else bad "$1: got [$2] want [$3]"; fi; }

want="$("$py" - "$GPNSCOPE_FIXTURES/reference/gpnm1.expect.safetensors" "$dir/shards" <<'PY'
import sys
import numpy as np
from testdata import read_safetensors, write_shards
_, get = read_safetensors(sys.argv[1])
tokens, nll = get("tokens", "<i4"), get("nll")
write_shards(sys.argv[2], tokens.reshape(-1), 97, docs=[30, 42], indent=2)
print(repr(float(np.exp(np.mean(nll.astype(np.float64))))))
PY
)"
json="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --batch 2 --json 2>"$dir/stderr")"
got="$(printf '%s' "$json" | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["perplexity"], d["tokens"], d["windows"])')"
read -r ppl toks wins <<< "$got"
"$py" -c "import sys; sys.exit(0 if abs($ppl/$want-1) < 1e-4 else 1)" && ok "perplexity $ppl == exp(mean nll) $want" || bad "perplexity $ppl vs $want"
check "72 tokens in 3 windows" "$toks $wins" "72 3"
check "no progress bar when stderr is not a terminal" "$(cat "$dir/stderr")" ""
table="$("$bin" eval --model "$model" --corpus "$dir/shards/data_0000.bin" --seq-len 24)"
[[ "$table" == *"perplexity  "* && "$table" == *"tokens      72"* && "$table" == *"mean NLL"* && "$table" == *"tokens/s"* ]] \
  && ok "table output (one shard file as corpus)" || bad "table: $table"
out="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --skip 1 --windows 1 --json)"
check "--skip 1 --windows 1" "$(printf '%s' "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')" 24

# text and JSONL corpora of the same documents agree (a word-level tokenizer
# without byte fallback, small enough for the fixture's 97-token vocabulary)
"$py" - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
words = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "and", "a"]
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3}
for w in words: vocab["\u2581" + w] = len(vocab)
for ch in sorted(set("".join(words))): vocab.setdefault(ch, len(vocab))
merges = []
def add(piece):  # merges that build "▁word" one character at a time
    for i in range(2, len(piece) + 1):
        left, right = piece[:i - 1], piece[i - 1]
        vocab.setdefault(piece[:i], len(vocab)); merges.append(left + " " + right)
for w in words: add("\u2581" + w)
tok = {"added_tokens": [{"id": i, "content": s, "special": True} for i, s in enumerate(["<unk>", "<s>", "</s>"])],
       "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                      {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
       "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False, "vocab": vocab, "merges": merges}}
assert len(vocab) <= 97, len(vocab)
json.dump(tok, open(d + "/tok.json", "w"))
docs = ["the cat sat on the mat and the dog ran far", "a dog sat on a cat", "the mat ran far and far",
        "a cat and a dog and the mat sat", "on the far mat the cat ran"]
open(d + "/docs.txt", "w").write("\n\n".join(docs))
with open(d + "/docs.jsonl", "w") as f:
    for x in docs: f.write(json.dumps({"text": x, "id": 1}) + "\n")
    f.write("not json\n")
PY
T=(--tokenizer "$dir/tok.json")
a="$("$bin" eval --model "$model" "${T[@]}" --corpus "$dir/docs.txt" --separator '\n\n' --seq-len 8 --json | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["tokens"], d["perplexity"])')"
b="$("$bin" eval --model "$model" "${T[@]}" --corpus "$dir/docs.jsonl" --skip-bad --seq-len 8 --json | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["tokens"], d["perplexity"], d["skipped_bad_lines"])')"
check "text (--separator) and JSONL (--skip-bad) agree" "$b" "$a 1"
# a pipe as the corpus (process substitution, e.g. <(zcat corpus.jsonl.gz)):
# read to its end like a file; its name says nothing, so --format says JSONL
p="$("$bin" eval --model "$model" "${T[@]}" --corpus <(cat "$dir/docs.jsonl") --format jsonl --skip-bad --seq-len 8 --json | "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["tokens"], d["perplexity"], d["skipped_bad_lines"])')"
check "a pipe as the JSONL corpus reads like the file" "$p" "$b"
c="$("$bin" eval --model "$model" "${T[@]}" --corpus "$dir/docs.jsonl" --skip-bad --seq-len 8 --sample 3 --seed 7 --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["windows"])')"
check "--sample 3" "$c" 3

# errors: one line, exit 1 (2 for usage)
set +e
err="$("$bin" eval --model "$model" "${T[@]}" --corpus "$dir/docs.jsonl" --seq-len 8 2>&1 >/dev/null)"; rc=$?
check "bad JSONL line exits 1" "$rc" 1
[[ "$err" == "gpnscope eval: "*"docs.jsonl:6: not valid JSON"* ]] && ok "error names file:line" || bad "error: $err"
check "one line" "$(printf '%s\n' "$err" | wc -l)" 1
err="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --windows 4 2>&1 >/dev/null)"; rc=$?
check "too many windows exits 1" "$rc" 1
[[ "$err" == *"has only 3"* ]] && ok "says how many there are" || bad "error: $err"
head -c 30 "$dir/shards/data_0000.bin" > "$dir/trunc.bin"
err="$("$bin" eval --model "$model" --corpus "$dir/trunc.bin" --seq-len 2 2>&1 >/dev/null)"; rc=$?
[[ $rc -eq 1 && "$err" == *"not a multiple of 4"* ]] && ok "truncated shard" || bad "truncated shard: $rc $err"
"$bin" eval --corpus "$dir/shards" >/dev/null 2>&1; check "missing --model exits 2" "$?" 2
"$bin" eval --model "$model" --corpus "$dir/shards" --batch x >/dev/null 2>&1; check "bad --batch exits 2" "$?" 2
# devices: a bad name or a CPU precision is a usage error; CUDA runs and agrees
# with the CPU where a GPU is usable, and otherwise fails in one line saying why
err="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --device gpu 2>&1 >/dev/null)"; rc=$?
[[ $rc -eq 2 && "$err" == *"--device gpu: expected cpu, cuda or cuda:N"* ]] && ok "bad --device" || bad "bad --device: $rc $err"
err="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --precision bf16 2>&1 >/dev/null)"; rc=$?
[[ $rc -eq 2 && "$err" == *"needs --device cuda"* ]] && ok "bf16 needs cuda" || bad "--precision on cpu: $rc $err"
out="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 24 --batch 2 --device cuda --json 2>"$dir/cuda.err")"; rc=$?
if [[ $rc -eq 0 ]]; then
  gppl="$(printf '%s' "$out" | "$py" -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])')"
  "$py" -c "import sys; sys.exit(0 if abs($gppl/$ppl-1) < 1e-3 else 1)" && ok "cuda perplexity $gppl == cpu $ppl" || bad "cuda $gppl vs cpu $ppl"
else
  err="$(cat "$dir/cuda.err")"
  [[ $rc -eq 1 && "$err" == "gpnscope eval: --device cuda: "*"CUDA"* && $(wc -l < "$dir/cuda.err") -eq 1 ]] &&
    ok "no usable CUDA: one line ($err)" || bad "--device cuda without a GPU: $rc $err"
fi
help="$("$bin" eval --help)"
set -e
for o in --model --corpus --format --tokenizer --seq-len --skip --windows --sample --seed --batch --field --skip-bad --separator --no-bos --device --precision --json; do
  [[ "$help" == *"$o"* ]] || bad "--help lacks $o"
done
ok "--help explains every option"
finish

#!/usr/bin/env bash
# Options and messages (issue #17.11): out-of-range option values are
# refused in one line naming the option; an unknown option is named in one
# line (not the whole help); each message says what is wrong and what to do,
# with paths quoted so that a printed command can be pasted:
#   - ablate --windows, --batch, --run out of range;
#   - record --help says what --windows 0 means;
#   - every command's unknown option;
#   - resuming with another tokenizer names the tokenizer;
#   - token ids outside the model's vocabulary are named as such (not "window
#     0 is incomplete");
#   - a full disk during ablate does not say to resume (ablate cannot);
#   - a ground-only run's hint names --kind ground;
#   - plot's "analyze first" hint works when pasted, for a path with spaces.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
gpnm1_scratch cli_messages shards; cd "$dir"
# expect CODE PATTERN CMD...: exit CODE, exactly one line on stderr matching PATTERN
expect() {
  local code="$1" pattern="$2"; shift 2
  "$@" > out.txt 2> err.txt; local rc=$?
  if [[ $rc -eq $code && $(wc -l < err.txt) -eq 1 ]] && grep -q -- "$pattern" err.txt; then ok "${*:2}: $(cat err.txt)"
  else bad "${*:2}: exit $rc (want $code and '$pattern'): $(head -c 300 err.txt)"; fi
}

random_shards shards $((12 * 24)) 3
args=(--model "$model" --corpus shards --seq-len 24 --batch 4 --quiet)
"$bin" record "${args[@]}" --db a.db --states pred > /dev/null || bad "record"
cp a.db plain.db # without analyses (ablate adds some to a.db)

# ---- ablate's numbers ----
for v in -1 0 13 100000; do expect 2 "ablate: --windows" "$bin" ablate a.db --what none --windows $v; done
for v in 0 -3 100000; do expect 2 "ablate: --batch" "$bin" ablate a.db --what none --batch $v; done
for v in -1 0; do expect 2 "ablate: --run" "$bin" ablate a.db --what none --run $v; done
"$bin" ablate a.db --what none --windows 12 --batch 4 > /dev/null 2> err.txt && ok "ablate --windows 12 (all of them) --batch 4 works" ||
  bad "ablate in range: $(cat err.txt)"

# ---- record --windows 0 ----
"$bin" record --help | grep -- "--windows" | grep -q "0: all" && ok "record --help says --windows 0 means all" ||
  bad "record --help on --windows: $("$bin" record --help | grep -- --windows)"

# ---- unknown options: one line naming the option ----
for c in demo info record tokenize shard eval train sql ablate import analyze plot export-notebook export; do
  expect 2 "unknown option '--no-such-option'" "$bin" $c --no-such-option
done
expect 2 "--out needs a value" "$bin" export a.db --format csv --out
# ---- a near miss: did you mean ----
expect 2 "unknown command 'analyse': did you mean 'analyze'?" "$bin" analyse a.db
expect 2 "unknown option '--seqlen': did you mean --seq-len?" "$bin" record --seqlen 128
expect 2 "unknown option '--windws=3': did you mean --windows?" "$bin" eval --windws=3

# ---- resuming with another tokenizer ----
"$py" - <<'PY'
import json
words = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "and", "a"]
def tokenizer(merge_cat):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3}
    merges = []
    for ch in sorted(set("".join(words))): vocab.setdefault(ch, len(vocab))
    for w in words:
        if w == "cat" and not merge_cat: continue
        p = "\u2581" + w
        for i in range(2, len(p) + 1):
            vocab.setdefault(p[:i], len(vocab)); merges.append(p[:i - 1] + " " + p[i - 1])
    for i in range(len(vocab), 97): vocab["x%d" % i] = i  # the model's 97 pieces
    return {"added_tokens": [{"id": i, "content": s, "special": True} for i, s in enumerate(["<unk>", "<s>", "</s>"])],
            "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                           {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
            "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False, "vocab": vocab,
                      "merges": merges}}
json.dump(tokenizer(True), open("tok1.json", "w"))
json.dump(tokenizer(False), open("tok2.json", "w"))
open("docs.txt", "w").write(" ".join(["the cat sat on the mat and the dog ran far"] * 40))
PY
"$bin" record --model "$model" --tokenizer tok1.json --corpus docs.txt --seq-len 16 --db t.db --quiet > /dev/null || bad "record with tok1"
sqlite3 t.db "update runs set status = 'interrupted'"
expect 1 "recorded with tokenizer sha256" "$bin" record --model "$model" --tokenizer tok2.json --corpus docs.txt --seq-len 16 --db t.db --quiet --resume
grep -q "different corpus" err.txt && bad "another tokenizer is still called a different corpus" || ok "it is not called a different corpus"

# ---- token ids outside the vocabulary ----
cp a.db ids.db
sqlite3 ids.db "update tokens set token_id = 4294967295 where window = 0 and position = 5"
expect 1 "token id 4294967295, outside the model's vocabulary" "$bin" ablate ids.db --what none
sqlite3 ids.db "update tokens set token_id = 97 where window = 0 and position = 5"
expect 1 "token id 97, outside the model's vocabulary" "$bin" ablate ids.db --what none

# ---- a full disk during ablate (a small tmpfs, when one can be mounted) ----
mkdir -p mnt
if unshare -rm true 2>/dev/null; then
  size=$(( $(stat -c %s a.db) / 1024 + 96 ))
  unshare -rm bash -c '
    mount -t tmpfs -o size='"$size"'k tmpfs mnt || exit 99
    cp a.db mnt/a.db
    for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
      "$1" ablate mnt/a.db --what each-head > /dev/null 2> full.err || exit 1
    done
    exit 0' _ "$bin"
  rc=$?
  if [[ $rc -eq 99 ]]; then echo "note: no tmpfs here; skipped the full disk"
  elif [[ $rc -eq 1 ]] && grep -q "disk is full" full.err; then
    ! grep -qi "resume" full.err && [[ $(wc -l < full.err) -eq 1 ]] && ok "a full disk during ablate: $(cat full.err)" ||
      bad "a full disk during ablate: $(cat full.err)"
  else echo "note: the disk did not fill (exit $rc: $(cat full.err 2>/dev/null))"; fi
else
  echo "note: unshare -rm is not allowed here; skipped the full disk"
fi

# ---- a ground-only run ----
"$bin" record "${args[@]}" --db g.db --states ground > /dev/null || bad "record ground"
expect 1 "with --kind ground" "$bin" analyze g.db
"$bin" analyze g.db --kind ground > /dev/null 2> err.txt && ok "analyze --kind ground, as the hint says, works" || bad "analyze --kind ground: $(cat err.txt)"

# ---- plot's hint, pasted as printed ----
cp plain.db "my run's store.db"
# pasted: the `gpnscope ...` command err.txt names, to run as printed
pasted() { sed -n 's/.*`gpnscope \([^`]*\)`.*/\1/p' err.txt; }
expect 1 "there is no run 7" "$bin" export "my run's store.db" --run 7 --out e --format csv
cmd="$(pasted)"
eval "\"\$bin\" $cmd" > out.txt 2> err2.txt && grep -q "^id" out.txt && ok "the 'no run 7' hint, pasted (gpnscope $cmd), lists the runs" ||
  bad "pasting '$cmd': $(cat err2.txt)"
expect 1 "has no analyses to plot" "$bin" plot "my run's store.db" --run 1 --out figs --no-render
cmd="$(pasted)"
[[ "$cmd" == *"'my run'\''s store.db'"* ]] && ok "plot --run's hint quotes the path: gpnscope $cmd" || bad "plot --run hint: $cmd"
expect 1 "no analysed runs" "$bin" plot "my run's store.db" --out figs --no-render
cmd="$(sed -n 's/.*`gpnscope \(.*\)`.*/\1/p' err.txt)"
eval "\"\$bin\" $cmd" > /dev/null 2> err.txt && "$bin" plot "my run's store.db" --out figs --no-render > /dev/null 2>> err.txt &&
  ok "the hint, pasted (gpnscope $cmd), works and plot then succeeds" || bad "pasting '$cmd': $(cat err.txt)"

# ---- analyze says when --max-states leaves states out (issue 38.6) ----
"$bin" analyze plain.db --max-states 100 > out.txt 2> err.txt && grep -q "read the first 100 of the run's 288 states (--max-states 100; --max-states 0 reads all)" out.txt &&
  ok "analyze --max-states 100 says it read 100 of 288 states" || bad "no truncation note: $(grep -A2 notes out.txt) $(cat err.txt)"
"$bin" analyze plain.db > out.txt 2>&1 && ! grep -q "read the first" out.txt && ok "no note when every state is read" || bad "a note without truncation"

# ---- a file that is not a model (issue 38.6): named by its bytes, with what to run ----
fx="$GPNSCOPE_FIXTURES/reference"
cp "$fx/gdn2.checkpoint.pt" "my checkpoint.pt"
"$py" -c "import pickle; pickle.dump({'params': {'w': [1.0, 2.0]}}, open('checkpoint.pkl', 'wb'), protocol=4)"
printf 'Some prose, not a model at all.\n' > prose.txt
for c in " zip archive (a PyTorch checkpoint.pt?): convert it first with \`gpnscope convert 'my checkpoint.pt' model.safetensors\`|my checkpoint.pt" \
         " Python pickle (the companion's JAX checkpoint.pkl?): convert it first with \`gpnscope convert checkpoint.pkl model.safetensors\`|checkpoint.pkl" \
         " JSON file (a tokenizer.json or config.json?), not a model|$GPNSCOPE_SOURCE/models/gpnm15-small/config.json" \
         " text file, not a model|prose.txt" "n SQLite database (a gpnscope store?), not a model|a.db"; do
  IFS='|' read -r want f <<<"$c"
  expect 1 "is not a safetensors file: it is a$want" "$bin" info "$f"
  expect 1 "is not a safetensors file: it is a$want" "$bin" record --model "$f" --corpus shards --seq-len 24 --db x.db --quiet
done
# the command the message names, pasted as printed, converts the checkpoint
"$bin" info "my checkpoint.pt" 2> err.txt; cmd="$(pasted)"
eval "\"\$bin\" $cmd" > /dev/null 2> err2.txt && "$bin" info model.safetensors > /dev/null &&
  ok "the convert hint, pasted (gpnscope $cmd), makes a model info reads" || bad "pasting '$cmd': $(cat err2.txt)"

finish

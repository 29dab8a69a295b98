#!/usr/bin/env bash
# Write docs/reliability.md: what gpnscope was fed and put through, and what
# happened. Runs every libFuzzer target (scripts/fuzz.sh), the fault and
# hostile-input tests of the suite (from an existing build), and the command
# line under valgrind (scripts/valgrind-e2e.sh), then writes the tables.
#
#   scripts/reliability.sh [--runs N] [--seconds S]   (passed to scripts/fuzz.sh; default --seconds 60)
#   BUILD_DIR   the ordinary build whose tests and gpnscope are used (default build;
#               scripts/setup.sh makes it)
#   OUT         the file to write (default docs/reliability.md)
#   JOBS        as for scripts/fuzz.sh
# Exits 1 when anything failed (the document is written either way).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
out="${OUT:-$root/docs/reliability.md}"
fuzz_args=("$@")
(( ${#fuzz_args[@]} )) || fuzz_args=(--seconds 60)
[[ -x "$build/gpnscope" ]] || { echo "reliability.sh: $build/gpnscope not built: run scripts/setup.sh" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
began=$SECONDS

echo "== fuzzing: scripts/fuzz.sh ${fuzz_args[*]}"
FUZZ_SUMMARY="$tmp/fuzz.tsv" "$root/scripts/fuzz.sh" "${fuzz_args[@]}" || failed=1

# run_test NAME: one ctest test of the ordinary build, verbose; its output in $tmp/NAME.log
run_test() {
  local rc=0
  (cd "$build" && ctest -R "^$1\$" -V >"$tmp/$1.log" 2>&1) || rc=$?
  grep -q "Test #.*$1" "$tmp/$1.log" || { echo "reliability.sh: no test $1 in $build" >&2; return 2; }
  if grep -q "Test.*$1 .*\*\*\*Skipped\|Not Run" "$tmp/$1.log"; then echo skipped; return 0; fi
  (( rc == 0 )) && echo pass || echo FAIL
}
# grab NAME REGEX: the first match of REGEX in the test's output (ctest's "N: " prefix removed)
grab() { sed 's/^[0-9]*: //' "$tmp/$1.log" | grep -m1 -oE "$2" || true; }
checks() { grab "$1" '[0-9]+ passed, [0-9]+ failed'; }

echo "== fault and hostile-input tests ($build)"
rows=()
row() { rows+=("| $1 | $2 | $3 | $4 |"); [[ "$4" != FAIL ]] || failed=1; }

r="$(run_test cli_record_resume)"
row "recording killed (SIGKILL) at random points, then resumed" \
    "\`tests/cli/record_resume.sh\`: a 900-window recording killed whenever a random number of windows had been committed; \`PRAGMA integrity_check\` after every kill; \`--resume\` to the end; every row compared with an uninterrupted recording" \
    "$(grab cli_record_resume 'killed [0-9]+ times, resumed [0-9]+ times'); $(checks cli_record_resume)" "$r"
sigint="$(grab cli_record_resume 'gpnscope record: interrupted after [0-9]+ of [0-9]+ windows[^)]*resume')"
row "SIGINT during a recording" "the same test: SIGINT once the first window is committed" \
    "$([[ -n "$sigint" ]] && echo "exit 130, status interrupted, resumed; one line: \`$sigint\`" || echo "the run ended before the signal (nothing to check)")" "$r"
row "recording stopped by SIGTERM at random points, then resumed" \
    "the same test: SIGTERM whenever a random number of windows had been committed, resumed each time" \
    "stopped $(grab cli_record_resume 'SIGTERM [0-9]+ times' | tr -dc 0-9) times, each exit 130 with one line on stderr, \`integrity_check\` ok, run marked interrupted; every row equal to the uninterrupted recording's" "$r"
r="$(run_test cli_record_disk_full)"
row "disk full: file-size limit" \
    "\`tests/cli/record_disk_full.sh\`: \`ulimit -f 512\` (SIGXFSZ ignored, so writes fail with EFBIG) under a 4 MB recording; then \`--resume\` without the limit" \
    "$(grab cli_record_disk_full 'file-size limit: run marked failed [0-9]+ of 300 windows' | sed 's/file-size limit: //'); one line: \`$(grab cli_record_disk_full 'limit.db: committing a batch: [^)]*\)')\`" "$r"
tmpfs="$(grab cli_record_disk_full 'full tmpfs: run marked failed [0-9]+ of 300 windows' | sed 's/full tmpfs: //')"
if [[ -n "$tmpfs" ]]; then
  row "disk full: a full file system" "the same test: a 600 KB tmpfs in a private mount namespace (\`unshare -rm\`): ENOSPC" \
      "$tmpfs; one line: \`$(grab cli_record_disk_full 'tmpfs.db: committing a batch: [^)]*\)')\`" "$r"
else
  row "disk full: a full file system" "the same test, when a tmpfs can be mounted (\`unshare -rm\`)" "not available on this machine" "skipped"
fi
row "both disk-full cases, afterwards" "the same test" "\`integrity_check\` ok, run marked failed, resumed to complete with every row equal to an uninterrupted recording; $(checks cli_record_disk_full)" "$r"
r="$(run_test test_store)"
row "disk full inside the store" "\`tests/unit/test_store.c\`: SQLite's \`max_page_count\` reached in the middle of a batch (SQLITE_FULL)" "committed windows intact, failed batch gone, \`integrity_check\` ok; $(checks test_store) (whole store test)" "$r"
r="$(run_test test_store_wal)"
row "a reader while a writer records" "\`tests/unit/test_store_wal.c\`: a reader process queries throughout a writer's 40 batches (WAL)" "no error, never half a batch; $(checks test_store_wal)" "$r"
r="$(run_test cli_readonly)"
row "a foreign -wal beside a store (copied without its -wal, an old -wal of another copy put back)" \
    "\`tests/cli/readonly.sh\`: \`sql\`, \`plot\`, \`export\` (csv, npy) and \`export-notebook\` on a fresh pair each; the bytes of the store and of the -wal compared, \`integrity_check\` of the file alone; the same with an ordinary leftover -wal" \
    "the store's bytes unchanged and \`integrity_check\` ok after every reader (a read-only connection; a read-write one folds the foreign pages in and leaves a malformed file); $(checks cli_readonly)" "$r"
r="$(run_test cli_store_foreign_wal)"
row "another store's -wal beside a store, for writers and readers (issue 35.1); an empty database or a 0-byte file (35.5)" \
    "\`tests/cli/store_foreign_wal.sh\`: \`analyze\`, \`record\` (and \`--resume\`), \`sql\` (and \`--write\`), \`plot\`, \`export\`, \`migrate\`, \`attention\` with another store's -wal, and \`analyze\`, \`sql\` with a sibling copy's sound -wal; the store's own -wal of a writer that died; \`analyze\`, \`plot\`, \`export\`, \`export-notebook\`, \`compare\`, \`sql\`, \`attention\`, \`migrate\` on an empty database and a 0-byte file" \
    "each refused in one line (\`$(grab cli_store_foreign_wal 'y.db-wal does not belong to y.db \(through it[^)]*\)[^;]*')\`), both files' bytes unchanged, \`integrity_check\` ok; the own -wal read and written; the empty files unchanged; $(checks cli_store_foreign_wal)" "$r"
row "a store in a read-only folder" "the same test: a read-only bind mount (\`unshare -rm\`); a store without a -wal, one whose -wal holds changes, and one with its -wal and -shm" \
    "read without a -wal (immutable) and with both (the -shm read-only); with a -wal alone, one line: \`$(grab cli_readonly 'gpnscope sql: rof/pending.db has a -wal[^`]*`[^`]*`' | sed 's/`//g')\`" "$r"
row "a store of an older schema (0) opened by a reader" "the same test: a path with a space and a quote" \
    "refused, the file unchanged; the command it names, pasted as printed, migrates it" "$r"
r="$(run_test cli_sql)"
row "\`sql\` without \`--write\` told to write" "\`tests/cli/sql.sh\`: \`PRAGMA query_only=0; DELETE FROM runs\`, \`PRAGMA journal_mode=DELETE\`, \`PRAGMA user_version=7\`, \`VACUUM\`, \`PRAGMA wal_checkpoint(TRUNCATE)\`; \`fts3_tokenizer\` with one and two arguments, an fts3 table, \`VACUUM INTO\`, \`ATTACH\`, an ESC in a text value (issue 35.11)" \
    "each refused or a no-op (the connection is read-only in SQLite, statements that would write refused before they run, an authorizer, SQLite's defensive settings); no file made; the ESC shown as \\\\x1b; the file's bytes unchanged; $(checks cli_sql)" "$r"
r="$(run_test cli_outputs)"
row "an output over an input" "\`tests/cli/outputs.sh\`: \`export-notebook STORE --out STORE\` (and a hard link, a symbolic link); \`export\` and \`plot\` into a folder where the store is named like an output; \`compare --out DIR\` with the store at DIR/compare.json, compare.ipynb, compare.json.tmp or behind a link there (issue 35.7); an existing file that is not a notebook" \
    "each exit 1 with one line (\`$(grab cli_outputs 'gpnscope export-notebook: hard.db is the input[^;]*')\`...), the store unchanged; a non-notebook is replaced only with \`--force\`" "$r"
row "\`plot\` killed (SIGKILL) while gnuplot renders" "the same test: a gnuplot that writes half an image and waits" \
    "gnuplot, in its own process group, is killed with plot (parent-death signal); the next plot removes the dead one's temporary files, export those of dead writers (a live writer's kept); $(checks cli_outputs)" "$r"
r="$(run_test cli_record_lock)"
row "two recorders on one run" "\`tests/cli/record_lock.sh\`: \`record --resume\` while the run is recorded (the first paused with SIGSTOP after its first window); then a killed recorder's lock" \
    "refused in one line: \`$(grab cli_record_lock 'gpnscope record: a.db: run 2 is in use by another process \(gpnscope record, pid [0-9]+' )...\`; the first completes the run; a dead recorder's lock is taken over" "$r"
row "a recording whose device cannot start" "the same test: \`--device cuda:99\`" \
    "exit 1 with one line, no run left \`running\`; \`analyze\` takes the newest complete run, an unfinished one only with \`--run\` (with a note), and refuses one being recorded; $(checks cli_record_lock)" "$r"
r="$(run_test cli_messages)"
row "options out of range, unknown options, misleading hints" "\`tests/cli/messages.sh\`: \`ablate --windows -1/0/13/100000\`, \`--batch 0/100000\`, \`--run -1\`; an unknown option to every command; resuming with another tokenizer; token ids outside the vocabulary; a full tmpfs during \`ablate\`; a ground-only run; a hint with a path to quote" \
    "each one line naming the option or the cause and what to do; pasted hints work; $(checks cli_messages)" "$r"
r="$(run_test cli_notebook)"
row "store text with markup, '\$' token pieces and crafted results in the study notebook" "\`tests/cli/notebook.sh\` (c1): a model path and an analysis name with a backtick, \`<img onerror=...>\`, \`<script>\`, a newline and \`#\`; pieces \`\$\$\`, \`\$x\$\`; geometry settings \`[1, 2]\`; a NULL and an infinite scalar; a text point in a series; 3000 heads; executed, then \`jupyter nbconvert --to html\`" \
    "the markup shown as text in the HTML, no heading or math from the store; the bars drawn; each crafted result one line (\`numpy: not shown: the settings of analysis 1 (geometry) are not a JSON object: '[1, 2]'\`), no cell raised" "$r"
r="$(run_test test_export)"
row "values a .npy cannot hold, and kinds that sanitize alike" "\`tests/unit/test_export.c\`: a window id of 3000000000 and 2^32, a \`next_token_id\` of 2^31, a text \`tokens.nll\`, a blob entropy, a text \`alpha\`; state kinds \`a/b\` and \`a_b\`, vector keys \`k/1\` and \`k_1\`" \
    "each refused in one line naming the cell (\`run 1, window 0, position 1: tokens.next_token_id is 2147483648, outside the 32-bit range of token ids\`...), never wrapped or read as 0.0; \`ablate\` refuses the text NLL; the text \`alpha\` is NaN with a warning; \`states_a_b.npy\` and \`states_a_b_2.npy\`; $(checks test_export)" "$r"
r="$(run_test test_plot)"
row "results of the wrong size in plot" "\`tests/unit/test_plot.c\`: a \`logits_bar\` of 20 values for a vocabulary of 30, a \`corr_sample\` of 50 values for 8 coordinates" \
    "said in the panel, the caption and the notes (\`corr_sample holds 50 values, not 8 x 8 = 64 for the 8 coordinates of corr_sample_dims\`...); the stored top list drawn, not the short row's largest; $(checks test_plot)" "$r"
r="$(run_test test_checkpoint_hostile)"
row "hostile checkpoints" "\`tests/unit/test_checkpoint_hostile.c\`: $(sed 's/^[0-9]*: //' "$tmp/test_checkpoint_hostile.log" | grep -c ' -> ') crafted files (truncated, lying lengths, overlapping or out-of-range tensors, bad dtypes and shapes, metadata twice, huge sizes from empty tensors, ...)" \
    "each a one-line error naming the file; $(checks test_checkpoint_hostile)" "$r"
r="$(run_test test_tokenizer)"
row "hostile tokenizer files" "\`tests/unit/test_tokenizer.c\`: broken and mutated tokenizer.json and tokenizer.model files" "one-line errors; $(checks test_tokenizer)" "$r"
r="$(run_test test_corpus)"
row "hostile corpora" "\`tests/unit/test_corpus.c\`: bad JSONL lines, shards of odd sizes, lying index and meta files, $(grab test_corpus 'mutated index/meta/JSONL: [0-9]+ opened, [0-9]+ refused')" "one-line errors; $(checks test_corpus)" "$r"
r="$(run_test test_store_npy)"
row "hostile .npy files (reader)" "\`tests/unit/test_store_npy.c\`" "$(checks test_store_npy)" "$r"
r="$(run_test cli_import_hostile)"
row "hostile .npy files (gpnscope import)" "\`tests/cli/import_hostile.sh\`: truncated, trailing bytes, Fortran order, big-endian, object arrays, lying shapes, mismatched companions, ..." \
    "$(sed 's/^[0-9]*: //' "$tmp/cli_import_hostile.log" | grep -c '^ok: ') refusals, each exit 1 with one line and the store unchanged" "$r"
r="$(run_test test_pickle)"
row "hostile pickles (reader)" "\`tests/unit/test_pickle.c\`: lengths of 2^62 and frames of 2^60 in 14-byte files, memo index 2^32-1, memo-shared dict and bytes bombs, self-referencing and cyclic containers, 100000-deep nesting, object/structured/forged numpy dtypes, os.system, builtins.eval, every truncation and bit flip of a valid pickle" \
    "each a one-line error within milliseconds, nothing runs; $(checks test_pickle)" "$r"
r="$(run_test test_torch_zip)"
row "hostile PyTorch checkpoints" "\`tests/unit/test_torch_zip.c\`: path traversal names, two top folders, sizes that lie, a deflate bomb, a storage shorter than its tensor, a tensor past its storage (also by wrapping around 2^64), no data.pkl, os.system in data.pkl" \
    "each a one-line error; the three .pt fixtures equal their safetensors bit for bit; $(checks test_torch_zip)" "$r"
r="$(run_test cli_convert)"
row "hostile pickles and archives (gpnscope convert)" "\`tests/cli/convert.sh\`: pickles that reference os.system, eval and other globals; a traversal zip and a 100 MB deflate bomb; an output that is the input (also through a symlink), or exists without --force" "refused, nothing runs, input and existing output unchanged; $(checks cli_convert)" "$r"

r="$(run_test cli_convert_hostile)"
row "hostile checkpoints and configs, round three (issue 35.2, 35.4, 35.8, 35.10, 35.13)" "\`tests/cli/convert_hostile.sh\`: a .pt of 8 deflated storages of 64 MiB each under tensors of one element; a safetensors header of 400000 names; \`--config\` with text after the object, \`\"n_heads\\u0000x\"\`, \`1e999\`; \`n_heads\` 1e300, 2^63, 1e20, 2^31; \`layer_norm_eps\` 1e300; token ids 2^31 and 1e300 in prompt pairs; a NaN tensor; a tensor named \`__metadata__\`; a \`__metadata__\` of objects; the legacy torch.save format" \
    "each refused in one line naming the key, offset or tensor; the amplification archive from its zip directory (\`$(grab cli_convert_hostile 'peak RSS [0-9]+ MB')\`), the 400000 names answered in seconds; \`--allow-nonfinite\` converts the NaN tensor; $(checks cli_convert_hostile)" "$r"
r="$(run_test cli_attention)"
row "work without a bound: \`patch\`, \`attention\`, \`steer\` (issue 35.3)" "\`tests/cli/patch.sh\`, \`attention.sh\`, \`steer.sh\`: a 1000-token pair; a plan one multiply-add or token step over \`--max-work\` / \`--max-steps\`; each command under script(1) for its progress line" \
    "each refused before any work in one line naming the plan and the option (\`$(grab cli_attention 'the weights plan [^:]*')\`...); the plan printed on stderr first; progress drawn on a terminal; $(checks cli_attention) (attention)" "$r"
r="$(run_test test_json_strict)"
row "strict JSON in every user file (issue 35.4, 35.10)" "\`tests/unit/test_json_strict.c\`: text after the value, a NUL key and string (escaped and raw), 1e999 and -1e999 deep in arrays, the integer and real readers on 1e300, 2^63, 1e20, 2^31" \
    "refused in one line naming the offset, the key or the path, nothing cast out of range (the ASan/UBSan build passes it); $(checks test_json_strict)" "$r"
echo "== the command line under valgrind"
BUILD_DIR="$build" VALGRIND_SUMMARY="$tmp/valgrind.tsv" "$root/scripts/valgrind-e2e.sh" || failed=1

# ---- the document ----
describe() { # the first sentence of a fuzz target's header comment
  sed -n '1,/\*\//p' "$root/tests/fuzz/fuzz_$1.c" | sed 's/^\/\* Fuzz target: //; s/^ \* //; s/\*\/$//' | tr '\n' ' ' |
    sed 's/  */ /g; s/\. .*/./'
}
{
  echo "# Reliability"
  echo
  echo "gpnscope reads files from anywhere (checkpoints, tokenizers, corpora, pickles,"
  echo "stores) and runs for hours; it must never crash, corrupt a store or run"
  echo "foreign code, whatever it is given. This page is what was tried and what"
  echo "happened. It is written by \`scripts/reliability.sh ${fuzz_args[*]}\` (this run took"
  echo "$(( (SECONDS - began + 59) / 60 )) minutes); rerun it to check."
  echo
  echo "Run of $(date -u +%Y-%m-%d) on \`$(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)\`, $(nproc) cores, $(clang --version | head -1 | sed 's/ (.*//')."
  echo
  echo "## Fuzzing"
  echo
  echo "Each target (\`tests/fuzz/fuzz_*.c\`) feeds libFuzzer's inputs to the real"
  echo "library API, built with clang, AddressSanitizer and UndefinedBehaviorSanitizer"
  echo "(leaks, out-of-bounds accesses, integer overflow, out-of-range float casts,"
  echo "a single allocation above 2 GB, an input taking over 25 s: each is a crash),"
  echo "and checks invariants that must hold for any input (round trips, ids inside"
  echo "the vocabulary, ...). Seeds come from \`fuzz_make_seeds\` (valid files made"
  echo "by the library's writers); \`tests/fuzz/dict/\` holds token dictionaries."
  echo "\`scripts/fuzz.sh\` runs them for as long as asked; CI runs 20000 inputs each."
  echo
  echo "| target | input | inputs run | seconds | result | regression inputs |"
  echo "|---|---|---:|---:|---|---:|"
  total=0
  while IFS=$'\t' read -r t n s res; do
    reg=0
    [[ -d "$root/tests/fuzz/regressions/$t" ]] && reg="$(ls "$root/tests/fuzz/regressions/$t" | wc -l)"
    echo "| $t | $(describe "$t") | $n | $s | $res | $reg |"
    total=$((total + n))
  done <"$tmp/fuzz.tsv"
  echo
  echo "$total inputs in all. The ordinary and the ASan+UBSan suites replay every"
  echo "seed and every regression input (ctest \`fuzz_<target>\`)."
  echo
  echo "## Bugs found and fixed"
  echo
  sed -n '/^| input/,$p' "$root/tests/fuzz/regressions/README.md"
  echo
  echo "## Faults and hostile inputs"
  echo
  echo "| input or fault | what was tried | how much, what happened | result |"
  echo "|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## The command line under valgrind"
  echo
  echo "\`scripts/valgrind-e2e.sh\`: the ordinary build under memcheck (\`--leak-check=full\`;"
  echo "any invalid access, use of uninitialised memory, bad free, or definite,"
  echo "indirect or possible leak fails the step; the engine's worker threads are"
  echo "joined at exit) on the reference fixture: a 6-window recording and what"
  echo "follows it."
  echo
  echo "| step | seconds | result |"
  echo "|---|---:|---|"
  while IFS=$'\t' read -r step s res; do echo "| $step | $s | $res |"; done <"$tmp/valgrind.tsv"
  echo
  echo "## Not covered, or only partly"
  echo
  echo "- The pickle reader refuses, rather than reads, what checkpoints do not use:"
  echo "  INST/OBJ, the extension registry, out-of-band buffers, integers beyond"
  echo "  64 bits as shapes, and Python 2 strings with non-ASCII bytes."
  echo "- A PyTorch checkpoint's storages are read into memory as far as its tensors"
  echo "  reach (at most 4 times the archive + 1 MiB; docs/engine.md): converting needs"
  echo "  about the checkpoint's size in RAM, plus copies of strided or cast tensors."
  echo "- A -wal beside a store that no process holds is judged before any connection"
  echo "  may fold it in (store/wal_check.c): read through it, the store must be SQLite's"
  echo "  \`quick_check\` clean and keep every model and run of the main file. That costs"
  echo "  one read of the store (53 ms for the demo's 8.6 MB store) only when such a -wal"
  echo "  exists; a -wal that rewrites only pages a sibling copy shares cannot be told apart."
  echo "- Foreign SQLite files given as a store are left to SQLite's own checks"
  echo "  (\`store_open\` refuses what is not a gpnscope store); they are not fuzzed."
  echo "- Out-of-range float-to-integer casts are caught by clang's UBSan (the fuzz"
  echo "  build); gcc's \`-fsanitize=undefined\`, used by the ASan suite, leaves that"
  echo "  check out, so there those regression inputs run without it (test_corpus"
  echo "  checks their one-line errors)."
  echo "- A tokenizer with very many user-defined pieces loads fast, but encoding"
  echo "  still compares each text position with every such piece (LLaMA-2 has"
  echo "  none): a hostile tokenizer.model can make encoding slow, not wrong."
  echo "- A path naming a FIFO instead of a file makes a reader wait for a writer."
} >"$out"
echo "wrote $out"
exit $failed

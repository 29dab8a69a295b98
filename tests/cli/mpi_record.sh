#!/usr/bin/env bash
# MPI recording (docs/scale.md): `mpirun -n K gpnscope record` with K = 1, 2
# and 3 writes K shards that pass PRAGMA integrity_check, and gpnscope merge
# folds them into a store whose every table's rows equal a one-process
# recording's (timestamps aside); merging again, or a few shards at a time,
# gives the same; shards of different runs are refused. A rank stopped
# (SIGTERM) or killed (SIGKILL) mid-run fails the job with one line, and
# --resume completes every shard. Skipped when the build has no MPI.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.bash"
gpnm1_scratch mpi_record small big

random_shards "$dir/small" $((121 * 24)) 5
random_shards "$dir/big" $((450 * 24)) 7
# 121 windows in 18 batches of 7 (the last of 2): no K but 1 and 2 divides the batches evenly, and no
# K divides the windows: a split by windows would put shorter batches in the shards, whose rounding differs
args=(--model "$model" --corpus "$dir/small" --seq-len 24 --batch 7 --states pred,ground --positions sample:7 --dtype f16 --quiet)
"$bin" record "${args[@]}" --db "$dir/one.db" >/dev/null && ok "one-process recording" || bad "one-process recording"

# same_rows A B: every table of A equals B's, row for row (timestamps aside)
same_rows() {
  local a="$1" b="$2" t cols diff x y n bad_tables=""
  for t in $(sqlite3 "$b" "select name from sqlite_schema where type = 'table' and name not like 'sqlite_%' order by name"); do
    cols="$(sqlite3 "$b" "select group_concat(name, ', ') from pragma_table_info('$t')
                          where name not in ('added_at', 'started_at', 'updated_at', 'finished_at', 'done_at', 'created_at')")"
    diff="$(sqlite3 "$a" "attach '$b' as b;
      select count(*) from (select $cols from main.$t except select $cols from b.$t);
      select count(*) from (select $cols from b.$t except select $cols from main.$t);
      select (select count(*) from main.$t) - (select count(*) from b.$t);" | tr '\n' ' ')"
    read -r x y n <<<"$diff"
    [[ "$x" == 0 && "$y" == 0 && "$n" == 0 ]] || bad_tables+=" $t($x/$y/$n)"
  done
  [[ -z "$bad_tables" ]] || { echo "differing tables:$bad_tables"; return 1; }
}
integrity() { local f r=0; for f in "$@"; do [[ "$(sqlite3 "$f" "pragma integrity_check")" == ok ]] || { echo "$f: not ok"; r=1; }; done; return $r; }

for k in 1 2 3; do
  db="$dir/k$k.db"
  if mpi "$k" "$bin" record "${args[@]}" --db "$db" >"$dir/k$k.out" 2>"$dir/k$k.err"; then
    ok "mpirun -n $k record: $(cat "$dir/k$k.out")"
  else bad "mpirun -n $k record failed: $(cat "$dir/k$k.err")"; continue; fi
  shards=(); for r in $(seq 0 $((k - 1))); do shards+=("$dir/k$k.rank-$r-of-$k.db"); done
  integrity "${shards[@]}" && ok "-n $k: integrity_check ok on all $k shards" || bad "-n $k: a shard fails integrity_check"
  total=0; for s in "${shards[@]}"; do total=$((total + $(sqlite3 "$s" "select count(*) from windows"))); done
  [[ $total == 121 ]] \
    && ok "-n $k: the shards hold the 121 windows between them" || bad "-n $k: the shards do not add up to 121 windows"
  "$bin" merge --quiet "$db" "${shards[@]}" >/dev/null && ok "-n $k: merged" || bad "-n $k: merge failed"
  same_rows "$db" "$dir/one.db" && ok "-n $k: every table equals the one-process recording's (state ids too)" \
    || bad "-n $k: merged rows differ from the one-process recording"
  out="$("$bin" merge "$db" "${shards[@]}" 2>/dev/null)"
  [[ "$out" == "merged 0 shards ($k already in it)"* ]] && same_rows "$db" "$dir/one.db" \
    && ok "-n $k: merging again skips every shard" || bad "-n $k: merging again: $out"
done

# bit for bit holds when the ranks and the one process run the same thread counts (docs/scale.md):
# both set explicitly, at a batch where the engine splits its GEMMs over its pool (>= 48)
targs=("${args[@]}"); for i in "${!targs[@]}"; do [[ "${targs[$i]}" == --batch ]] && targs[$((i + 1))]=48; done
GPNSCOPE_THREADS=2 OPENBLAS_NUM_THREADS=1 "$bin" record "${targs[@]}" --db "$dir/th-one.db" >/dev/null &&
  GPNSCOPE_THREADS=2 OPENBLAS_NUM_THREADS=1 mpi 2 "$bin" record "${targs[@]}" --db "$dir/th.db" >/dev/null 2>"$dir/th.err" &&
  "$bin" merge --quiet "$dir/th.db" "$dir/th.rank-"{0,1}"-of-2.db" >/dev/null && same_rows "$dir/th.db" "$dir/th-one.db" &&
  ok "the same thread counts set for the ranks and the one process (batch 48): every table equal" ||
  bad "explicit thread counts: $(cat "$dir/th.err")"

# a text corpus through a tokenizer: the tokenizer and its vocabulary are merged once
"$py" - "$dir" <<'PY'
import json, sys
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, "\u2581": 3}
for ch in "abcdefghijklmnopqrstuvwxyz": vocab[ch] = len(vocab)
for i in range(len(vocab), 97): vocab["x%d" % i] = i  # the model's 97 pieces
json.dump({"added_tokens": [{"id": i, "content": t, "special": True} for i, t in enumerate(["<unk>", "<s>", "</s>"])],
           "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                          {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
           "model": {"type": "BPE", "unk_token": "<unk>", "fuse_unk": True, "byte_fallback": False, "vocab": vocab,
                     "merges": []}}, open(sys.argv[1] + "/tok.json", "w"))
open(sys.argv[1] + "/text.txt", "w").write(" ".join(["the cat sat on the mat and the dog ran far"] * 12))
PY
targs=(--model "$model" --tokenizer "$dir/tok.json" --corpus "$dir/text.txt" --seq-len 16 --batch 3 --quiet)
"$bin" record "${targs[@]}" --db "$dir/tone.db" >/dev/null
mpi 2 "$bin" record "${targs[@]}" --db "$dir/text.db" >/dev/null 2>"$dir/text.err" || bad "text corpus: $(cat "$dir/text.err")"
"$bin" merge --quiet "$dir/text.db" "$dir/text.rank-"{0,1}"-of-2.db" >/dev/null
[[ "$(sqlite3 "$dir/text.db" "select count(*) from vocabulary")" == 97 ]] && same_rows "$dir/text.db" "$dir/tone.db" \
  && ok "a text corpus with a tokenizer, 2 ranks: every table equals the one-process recording's" \
  || bad "text corpus: merged rows differ"

# a few shards at a time: the run is 'interrupted' until the last one, then equal
"$bin" merge --quiet "$dir/part.db" "$dir/k3.rank-0-of-3.db" >/dev/null
st="$(sqlite3 "$dir/part.db" "select status from runs")"
"$bin" merge --quiet "$dir/part.db" "$dir/k3.rank-1-of-3.db" "$dir/k3.rank-2-of-3.db" >/dev/null
[[ "$st" == interrupted ]] && same_rows "$dir/part.db" "$dir/one.db" && ok "merged one shard, then two: equal" \
  || bad "merging in two steps (status after the first: $st)"

# refusals: shards of different runs, a shard twice, a store that is no shard, an unfinished shard
mpi 2 "$bin" record "${args[@]}" --seed 2 --db "$dir/other.db" >/dev/null 2>&1
msg="$("$bin" merge "$dir/x.db" "$dir/k2.rank-0-of-2.db" "$dir/other.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope merge: "*"are shards of different runs (their settings differ)"* && ! -e "$dir/x.db" ]] \
  && ok "shards of different runs refused: $msg" || bad "different runs: $msg"
msg="$("$bin" merge "$dir/x.db" "$dir/k3.rank-0-of-3.db" "$dir/k2.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"jobs of different sizes"* ]] && ok "shards of jobs of different sizes refused" || bad "sizes: $msg"
msg="$("$bin" merge "$dir/x.db" "$dir/k2.rank-1-of-2.db" "$dir/k2.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"are both rank 1 of 2" ]] && ok "a rank twice refused" || bad "rank twice: $msg"
msg="$("$bin" merge "$dir/x.db" "$dir/one.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"not a shard"* ]] && ok "a one-process store refused as a shard" || bad "not a shard: $msg"
# the target a link to a shard (issue 35.6): refused by device and inode, the shard unchanged
ln -sf "$dir/k2.rank-0-of-2.db" "$dir/link.db"; before="$(sha256sum < "$dir/k2.rank-0-of-2.db")"
msg="$("$bin" merge "$dir/link.db" "$dir/k2.rank-0-of-2.db" "$dir/k2.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"is the input"*"k2.rank-0-of-2.db (the same file)"* && "$(sha256sum < "$dir/k2.rank-0-of-2.db")" == "$before" ]] &&
  ok "a target that is a symbolic link to a shard refused: $msg" || bad "merge into a link to a shard: $msg"
ln -f "$dir/k2.rank-1-of-2.db" "$dir/hard.db"
msg="$("$bin" merge "$dir/hard.db" "$dir/k2.rank-0-of-2.db" "$dir/k2.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"is the input"*"(the same file)"* ]] && ok "a target that is a hard link to a shard refused: $msg" || bad "merge into a hard link: $msg"
rm -f "$dir/hard.db" "$dir/link.db"
# a shard holding windows of another rank (copied in by hand): refused before anything is written
cp "$dir/k2.rank-1-of-2.db" "$dir/bad.rank-1-of-2.db"
sqlite3 "$dir/bad.rank-1-of-2.db" "insert into windows select run_id, 0, corpus_offset, n_tokens, done_at from windows where window = (select min(window) from windows)"
msg="$("$bin" merge "$dir/y.db" "$dir/k2.rank-0-of-2.db" "$dir/bad.rank-1-of-2.db" 2>&1 >/dev/null || true)"
[[ "$msg" == *"rank 1 of 2 holds 1 rows of windows outside its own"* && ! -e "$dir/y.db" ]] &&
  ok "shards that collide refused before writing: $msg" || bad "colliding shards: $msg; $(ls "$dir"/y.db 2>&1)"

# a rank stopped or killed mid-run: the job fails with one line; --resume completes it
bargs=(--model "$model" --corpus "$dir/big" --seq-len 24 --batch 3 --states pred,ground --positions sample:7 --dtype f16 --quiet)
"$bin" record "${bargs[@]}" --db "$dir/bigone.db" >/dev/null
for sig in TERM KILL; do
  db="$dir/kill$sig.db"; lock="$dir/kill$sig.rank-1-of-3.db.run-1.lock"
  mpi 3 "$bin" record "${bargs[@]}" --db "$db" >/dev/null 2>"$dir/kill.err" &
  job=$!
  # the rank's pid is in its run's lock file; stop it once it has committed some windows
  for i in $(seq 1 2000); do
    [[ -s "$lock" && "$(sqlite3 "$dir/kill$sig.rank-1-of-3.db" "select windows_done from runs" 2>/dev/null || echo 0)" -ge 6 ]] && break
    kill -0 "$job" 2>/dev/null || break; sleep 0.005
  done
  pid="$(sed -n 's/.*, pid \([0-9]*\) on host.*/\1/p' "$lock" 2>/dev/null || true)"
  [[ -n "$pid" ]] && kill "-$sig" "$pid"
  rc=0; wait "$job" || rc=$?
  # libevent inside mpirun may add "[warn] Epoll MOD(1) on fd N failed ..." when a rank dies under load:
  # the MPI runtime's own noise, not gpnscope's message, so it is left out of the count
  grep -v '^\[warn\] Epoll' "$dir/kill.err" > "$dir/kill.err.ours" || true
  mv "$dir/kill.err.ours" "$dir/kill.err"
  lines="$(grep -c . "$dir/kill.err" || true)"
  # the line names rank 1 (killed, it says nothing itself: rank 0 names the ranks not finished), never rank 0 (issue 35.13)
  [[ $rc -ne 0 && "$lines" == 1 && "$(cat "$dir/kill.err")" == "gpnscope record: rank"*" 1"*"of 3"*"--resume" &&
     "$(cat "$dir/kill.err")" != *"rank 0 of"* ]] \
    && ok "SIG$sig to rank 1: the job fails (exit $rc) with one line: $(cat "$dir/kill.err")" \
    || bad "SIG$sig to rank 1: exit $rc, $lines lines: $(cat "$dir/kill.err")"
  integrity "$dir/kill$sig.rank-"{0,1,2}"-of-3.db" && ok "SIG$sig: integrity_check ok on every shard" || bad "SIG$sig: integrity"
  mpi 3 "$bin" record "${bargs[@]}" --db "$db" --resume >/dev/null 2>"$dir/resume.err" \
    && ok "SIG$sig: --resume completed every shard" || bad "SIG$sig: --resume: $(cat "$dir/resume.err")"
  "$bin" merge --quiet "$db" "$dir/kill$sig.rank-"{0,1,2}"-of-3.db" >/dev/null
  same_rows "$db" "$dir/bigone.db" && ok "SIG$sig: merged rows equal the one-process recording's" || bad "SIG$sig: rows differ"
done

echo "mpi_record: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

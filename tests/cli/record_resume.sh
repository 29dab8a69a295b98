#!/usr/bin/env bash
# gpnscope record: a recording killed (SIGKILL) at random moments leaves a
# file that passes PRAGMA integrity_check, and --resume completes it so that
# every row equals an uninterrupted recording's; readers can query while it
# records; SIGINT stops cleanly, and so does SIGTERM at random moments (one
# line on stderr each time); resuming with another model is refused.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
# 900 windows of 24 tokens: random ids of the fixture's 97-token vocabulary
record_scratch record_resume "$((900 * 24))" 5
args=(--model "$model" --corpus "$dir/shards" --seq-len 24 --batch 3 --states pred,ground --positions sample:7 --dtype f16 --quiet)

"$bin" record "${args[@]}" --db "$dir/full.db" >/dev/null && ok "uninterrupted recording" || bad "uninterrupted recording"

# record_into DB ERR: start a recording into DB (with --resume once a run
# exists: a stop during start-up may come before it), stderr to ERR, its pid in
# $pid, and return once a random number (3 to 60) of further windows is
# committed, or the recorder ended. The moment is chosen by progress, not by a
# timer (a quiet machine records the whole corpus in well under a second).
windows_done() { sqlite3 "$1" "select windows_done from runs where id = 1" 2>/dev/null || echo 0; }
record_into() {
  local db="$1" err="$2" extra=() before target now
  [[ "$(sqlite3 "$db" "select count(*) from runs" 2>/dev/null || echo 0)" == 0 ]] || extra=(--resume)
  before="$(windows_done "$db")"; target=$(( ${before:-0} + 3 * (RANDOM % 20 + 1) ))
  "$bin" record "${args[@]}" --db "$db" "${extra[@]}" >/dev/null 2>"$err" &
  pid=$!
  for i in $(seq 1 1000); do
    now="$(windows_done "$db")"
    [[ "${now:-0}" -ge $target ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.005
  done
}

# kill (SIGKILL) at random moments, check integrity, resume, until complete
kills=0; resumes=0; readers_ok=1
for attempt in $(seq 1 40); do
  record_into "$dir/part.db" "$dir/rec.err"
  # a reader in another process while the writer runs (once the store
  # exists: a file caught in the instant of its creation is rightly "not a
  # gpnscope store" yet)
  if [[ "$(sqlite3 "$dir/part.db" "select count(*) from runs" 2>/dev/null || echo 0)" != 0 ]]; then
    "$bin" sql "$dir/part.db" "select count(*) from tokens" >/dev/null 2>"$dir/reader.err" || { readers_ok=0; echo "reader: $(cat "$dir/reader.err")"; }
  fi
  if kill -9 "$pid" 2>/dev/null; then kills=$((kills+1)); fi
  wait "$pid" 2>/dev/null || true
  [[ $attempt -gt 1 ]] && resumes=$((resumes+1))
  if [[ -e "$dir/part.db" ]]; then
    ic="$(sqlite3 "$dir/part.db" "pragma integrity_check" 2>&1 || true)"
    [[ "$ic" == "ok" ]] || { bad "integrity_check after kill $kills: $ic"; break; }
  fi
  status="$(sqlite3 "$dir/part.db" "select status from runs where id = 1" 2>/dev/null || true)"
  [[ "$status" == "complete" ]] && break
done
[[ $kills -ge 2 ]] && ok "killed $kills times, resumed $resumes times; integrity_check ok after each" || bad "only $kills kills landed"
[[ $readers_ok -eq 1 ]] && ok "readers queried while recording" || bad "a reader failed while recording"
if [[ "$(sqlite3 "$dir/part.db" "select status from runs where id = 1")" != "complete" ]]; then
  "$bin" record "${args[@]}" --db "$dir/part.db" --resume >/dev/null
fi
[[ "$(sqlite3 "$dir/part.db" "select status from runs where id = 1")" == "complete" ]] && ok "run completed" || bad "run not complete"

# every row equal
for t in tokens head_steps states unigram_counts vocabulary; do
  diff="$(sqlite3 "$dir/part.db" "attach '$dir/full.db' as f;
    select count(*) from (select * from main.$t except select * from f.$t);
    select count(*) from (select * from f.$t except select * from main.$t);
    select count(*) from main.$t;" | tr '\n' ' ')"
  read -r a b n <<<"$diff"
  [[ "$a" == 0 && "$b" == 0 ]] && ok "$t: $n rows equal" || bad "$t differs: $a/$b rows of $n"
done

# SIGINT stops after the current batch, resumable
rm -f "$dir/int.db"*
"$bin" record "${args[@]}" --db "$dir/int.db" >/dev/null 2>"$dir/int.err" & pid=$!
# the handler is installed before the first window is written: wait for one
# (a non-interactive shell starts background jobs with SIGINT ignored, so a
# signal sent earlier would be lost, not delivered)
for i in $(seq 1 200); do
  [[ "$(sqlite3 "$dir/int.db" "select windows_done > 0 from runs" 2>/dev/null || true)" == 1 ]] && break
  sleep 0.02
done
kill -INT "$pid" 2>/dev/null || true
set +e; wait "$pid"; rc=$?; set -e
if [[ $rc -eq 130 ]]; then
  grep -q "resume" "$dir/int.err" && [[ $(wc -l <"$dir/int.err") -eq 1 ]] && ok "SIGINT: one-line message: $(cat "$dir/int.err")" || bad "SIGINT message: $(cat "$dir/int.err")"
  [[ "$(sqlite3 "$dir/int.db" "select status from runs")" == "interrupted" ]] && ok "status interrupted" || bad "status after SIGINT"
  "$bin" record "${args[@]}" --db "$dir/int.db" --resume >/dev/null && ok "resume after SIGINT" || bad "resume after SIGINT"
elif [[ $rc -eq 0 ]]; then
  ok "SIGINT arrived after the run finished (nothing to check)"
else
  bad "SIGINT exit status $rc: $(cat "$dir/int.err")"
fi

# SIGTERM (what `kill` and schedulers send) at random points, as the SIGKILLs
# above: each stop is exit 130 with one line on stderr, a file that passes
# integrity_check with the run marked interrupted, and --resume continues;
# the finished run equals the uninterrupted one
rm -f "$dir/term.db"*
terms=0; term_ok=1
for attempt in $(seq 1 12); do
  # a committed window means the handler is installed (it comes first)
  record_into "$dir/term.db" "$dir/term.err"
  kill -TERM "$pid" 2>/dev/null || true
  set +e; wait "$pid"; rc=$?; set -e
  if [[ $rc -eq 130 ]]; then
    terms=$((terms+1))
    if [[ $(wc -l <"$dir/term.err") -ne 1 ]] || ! grep -q "^gpnscope record: interrupted after .* resumable with --resume" "$dir/term.err"; then
      term_ok=0; echo "SIGTERM $terms: stderr: $(cat "$dir/term.err")"
    fi
  elif [[ $rc -ne 0 ]]; then
    term_ok=0; echo "SIGTERM attempt $attempt: exit $rc: $(cat "$dir/term.err")"
  fi
  ic="$(sqlite3 "$dir/term.db" "pragma integrity_check" 2>&1 || true)"
  [[ "$ic" == ok ]] || { term_ok=0; echo "integrity_check after SIGTERM $terms: $ic"; }
  status="$(sqlite3 "$dir/term.db" "select status from runs where id = 1" 2>/dev/null || true)"
  [[ $rc -ne 130 || "$status" == interrupted ]] || { term_ok=0; echo "status after SIGTERM $terms: $status"; }
  [[ "$status" == complete ]] && break
done
[[ "$(sqlite3 "$dir/term.db" "select status from runs where id = 1")" == complete ]] ||
  "$bin" record "${args[@]}" --db "$dir/term.db" --resume >/dev/null
[[ $terms -ge 2 && $term_ok -eq 1 ]] && ok "SIGTERM $terms times: each exit 130 with one line, integrity_check ok, status interrupted" ||
  bad "SIGTERM: $terms stops, all well: $term_ok"
rows_differ=0
for t in tokens head_steps states; do
  n="$(sqlite3 "$dir/term.db" "attach '$dir/full.db' as f;
    select (select count(*) from (select * from main.$t except select * from f.$t)) +
           (select count(*) from (select * from f.$t except select * from main.$t))")"
  [[ "$n" == 0 ]] || rows_differ=1
done
[[ $rows_differ -eq 0 && "$(sqlite3 "$dir/term.db" "select status from runs where id = 1")" == complete ]] &&
  ok "after the SIGTERMs the run completed with every row equal" || bad "after the SIGTERMs: rows differ or not complete"

# another model: same shapes, one weight changed -> refused by hash
cp "$model" "$dir/other.safetensors"
"$py" -c "
import sys; p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[-1] ^= 1; open(p, 'wb').write(b)" "$dir/other.safetensors"
sqlite3 "$dir/part.db" "update runs set status = 'interrupted' where id = 1"
if "$bin" record --model "$dir/other.safetensors" --corpus "$dir/shards" --seq-len 24 --batch 3 --states pred,ground \
     --positions sample:7 --dtype f16 --quiet --db "$dir/part.db" --resume 2>"$dir/other.err"; then
  bad "resume with another model accepted"
else
  grep -qi "model\|sha" "$dir/other.err" && ok "other model refused: $(cat "$dir/other.err")" || bad "message: $(cat "$dir/other.err")"
fi
# changed settings -> refused
if "$bin" record "${args[@]/sample:7/sample:8}" --db "$dir/part.db" --resume 2>"$dir/set.err"; then
  bad "resume with other settings accepted"
else
  ok "other settings refused: $(cat "$dir/set.err")"
fi
finish

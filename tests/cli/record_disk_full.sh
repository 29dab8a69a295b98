#!/usr/bin/env bash
# gpnscope record into a store that runs out of space: the recording stops
# with a one-line error (exit 1), the file passes PRAGMA integrity_check,
# the run is marked failed, and --resume (once there is room) completes it
# so that every row equals an uninterrupted recording's.
# Two ways to run out of space, both real write failures of the whole
# command (the store-level case, SQLite's max_page_count, is in
# tests/unit/test_store.c):
#   - a file-size limit (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG),
#     always available;
#   - a full file system: a 600 KB tmpfs mounted in a private mount
#     namespace (unshare -rm), when this machine allows it (ENOSPC, SQLite's
#     "database or disk is full").
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
# 300 windows of 24 tokens: random ids of the fixture's 97-token vocabulary
record_scratch record_disk_full "$((300 * 24))" 5
args=(--model "$model" --corpus "$dir/shards" --seq-len 24 --batch 3 --states pred,ground --quiet)
"$bin" record "${args[@]}" --db "$dir/full.db" >/dev/null && ok "uninterrupted recording" || bad "uninterrupted recording"

# check_full WHAT DB RC ERRFILE PATTERN: the state a failed recording must leave
check_full() {
  local what="$1" db="$2" rc="$3" err="$4" pattern="$5"
  [[ $rc -eq 1 ]] && ok "$what: exit 1" || bad "$what: exit $rc"
  if [[ $(wc -l <"$err") -eq 1 ]] && grep -q "^gpnscope record: .*$pattern" "$err"; then
    ok "$what: one-line error: $(cat "$err")"
  else
    bad "$what: error output: $(cat "$err")"
  fi
  local ic; ic="$(sqlite3 "$db" "pragma integrity_check" 2>&1 || true)"
  [[ "$ic" == ok ]] && ok "$what: integrity_check ok" || bad "$what: integrity_check: $ic"
  local st; st="$(sqlite3 "$db" "select status || ' ' || windows_done from runs where id = 1" 2>&1 || true)"
  [[ "$st" =~ ^failed\ [0-9]+$ && "${st#failed }" -lt 300 ]] && ok "$what: run marked $st of 300 windows" || bad "$what: run status '$st'"
}

# check_resumed WHAT DB: --resume with room to spare completes it, rows as uninterrupted
check_resumed() {
  local what="$1" db="$2"
  "$bin" record "${args[@]}" --db "$db" --resume >/dev/null 2>"$dir/resume.err" || { bad "$what: resume: $(cat "$dir/resume.err")"; return; }
  [[ "$(sqlite3 "$db" "select status from runs where id = 1")" == complete ]] && ok "$what: resumed to complete" || bad "$what: not complete"
  local t a b n c
  for t in tokens head_steps states windows; do
    c='*'; [[ $t == windows ]] && c='run_id, window, corpus_offset, n_tokens' # not the time each was done
    read -r a b n <<<"$(sqlite3 "$db" "attach '$dir/full.db' as f;
      select count(*) from (select $c from main.$t except select $c from f.$t);
      select count(*) from (select $c from f.$t except select $c from main.$t);
      select count(*) from main.$t;" | tr '\n' ' ')"
    [[ "$a" == 0 && "$b" == 0 && "$n" -gt 0 ]] && ok "$what: $t: $n rows equal" || bad "$what: $t differs: $a/$b rows of $n"
  done
}

# 1. a file-size limit of 512 KB (the complete store is about 4 MB)
set +e
( trap '' XFSZ; ulimit -f 512; exec "$bin" record "${args[@]}" --db "$dir/limit.db" ) >/dev/null 2>"$dir/limit.err"
rc=$?
set -e
check_full "file-size limit" "$dir/limit.db" $rc "$dir/limit.err" "limit.db: .*I/O error"
check_resumed "file-size limit" "$dir/limit.db"

# 1b. the same limit with SIGXFSZ as the shell leaves it (its default kills a process without a word):
# gpnscope ignores it, so the write fails and says so (issue 35.13)
set +e
( trap - XFSZ; ulimit -f 512; exec "$bin" record "${args[@]}" --db "$dir/limit2.db" ) >/dev/null 2>"$dir/limit2.err"
rc=$?
set -e
check_full "file-size limit, SIGXFSZ at its default" "$dir/limit2.db" $rc "$dir/limit2.err" "limit2.db: .*I/O error"

# 2. a full file system, when a tmpfs can be mounted here
mkdir -p "$dir/mnt"
if unshare -rm true 2>/dev/null && unshare -rm mount -t tmpfs -o size=600k tmpfs "$dir/mnt" 2>/dev/null; then
  # everything that needs the mount happens inside the namespace; the store
  # (with its -wal) is then copied out, as one would copy it off a full disk
  set +e
  unshare -rm bash -c '
    mount -t tmpfs -o size=600k tmpfs "$1/mnt" || exit 99
    shift
    "$@" --db "'"$dir"'/mnt/tmpfs.db" >/dev/null 2>"'"$dir"'/tmpfs.err"
    rc=$?
    df -k "'"$dir"'/mnt" | tail -1 >"'"$dir"'/tmpfs.df"
    for f in "'"$dir"'"/mnt/tmpfs.db "'"$dir"'"/mnt/tmpfs.db-wal; do [[ -e "$f" ]] && cp "$f" "'"$dir"'/"; done
    exit $rc' _ "$dir" "$bin" record "${args[@]}"
  rc=$?
  set -e
  if [[ $rc -eq 99 ]]; then
    echo "SKIPPED part: the tmpfs could not be mounted inside the namespace"
  else
    echo "tmpfs when it failed: $(cat "$dir/tmpfs.df")"
    check_full "full tmpfs" "$dir/tmpfs.db" $rc "$dir/tmpfs.err" "disk is full"
    check_resumed "full tmpfs" "$dir/tmpfs.db"
  fi
else
  echo "SKIPPED part: no private mount namespace here (unshare -rm), so no tmpfs to fill; the file-size limit case ran"
fi
finish

#!/usr/bin/env bash
# One process per run (issue #17.4, #17.5):
#   - a second `record --resume` while the run is being recorded is refused
#     in one line naming the holder, and the first recorder completes the
#     run untouched (the recorder is paused with SIGSTOP once it has
#     committed a window, so it is alive and mid-run whatever the machine's
#     speed: no timing);
#   - a lock left by a killed recorder (dead pid) is taken over by --resume;
#   - a recording whose device cannot start exits 1 and leaves no run
#     'running' behind;
#   - analyze picks the newest complete run, analyses an unfinished one only
#     when named, and refuses one that is being recorded.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
gpnm1_scratch record_lock shards; cd "$dir"
q() { sqlite3 "$1" "$2" 2>/dev/null; }

random_shards shards $((300 * 24)) 5
args=(--model "$model" --corpus shards --seq-len 24 --batch 3 --states pred --quiet)
"$bin" record "${args[@]}" --windows 30 --db a.db > /dev/null || bad "a first, complete run"

# start_paused DB [ARGS...]: a recorder of DB in the background ($pid),
# stopped (SIGSTOP) once run $2 has a committed window or the recorder ended
start_paused() {
  local db="$1" id="$2"; shift 2
  "$bin" record "${args[@]}" --db "$db" "$@" > /dev/null 2> rec.err &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    [[ "$(q "$db" "select windows_done > 0 from runs where id = $id")" == 1 ]] && break
    sleep 0.01
  done
  kill -STOP "$pid" 2>/dev/null
}

# 1. a second recorder while the first records: refused, the first finishes
start_paused a.db 2
if kill -0 "$pid" 2>/dev/null && [[ "$(q a.db "select status from runs where id = 2")" == running ]]; then
  "$bin" record "${args[@]}" --db a.db --resume > /dev/null 2> second.err; rc=$?
  if [[ $rc -eq 1 && $(wc -l < second.err) -eq 1 ]] && grep -q "run 2 is in use by another process (gpnscope record, pid $pid on host " second.err; then
    ok "a second --resume is refused: $(cat second.err)"
  else bad "second recorder: exit $rc: $(cat second.err)"; fi
  # through a hard link, and with the sidecar removed: the lock is the store file's (issue 35.9)
  ln a.db hard.db
  "$bin" record "${args[@]}" --db hard.db --resume > /dev/null 2> hard.err; rc=$?
  [[ $rc -eq 1 && $(wc -l < hard.err) -eq 1 ]] && grep -q "hard.db has 2 hard links" hard.err &&
    ok "a second --resume through a hard link is refused: $(cat hard.err)" || bad "hard-linked recorder: exit $rc: $(cat hard.err)"
  rm hard.db
  mv a.db.run-2.lock moved.lock
  "$bin" record "${args[@]}" --db a.db --resume > /dev/null 2> gone.err; rc=$?
  [[ $rc -eq 1 && $(wc -l < gone.err) -eq 1 ]] && grep -q "run 2 is in use by another process (holder unknown)" gone.err &&
    ok "with the lock file removed, a second --resume is still refused: $(cat gone.err)" || bad "lock file removed: exit $rc: $(cat gone.err)"
  mv moved.lock a.db.run-2.lock
  # analyze refuses the run being recorded (writing its results would wait
  # for the paused recorder's batch: the default run is checked in part 4)
  "$bin" analyze a.db --run 2 > /dev/null 2> an.err; rc=$?
  [[ $rc -eq 1 && $(wc -l < an.err) -eq 1 ]] && grep -q "run 2 is in use by another process (gpnscope record" an.err &&
    ok "analyze --run of a run being recorded: $(cat an.err)" || bad "analyze during recording: exit $rc: $(cat an.err)"
  kill -CONT "$pid"; wait "$pid"; rc=$?
  [[ $rc -eq 0 && "$(q a.db "select status, windows_done from runs where id = 2")" == "complete|300" ]] &&
    ok "the first recorder completed its run" || bad "first recorder: exit $rc, run 2: $(q a.db "select status, windows_done, message from runs where id = 2") $(cat rec.err)"
  [[ ! -e a.db.run-2.lock ]] && ok "the lock file is gone once the run is done" || bad "a.db.run-2.lock left behind"
else
  bad "the recorder ended before it could be paused: $(cat rec.err)"; kill -CONT "$pid" 2>/dev/null; wait "$pid"
fi

# 2. a killed recorder: its lock file stays (with its dead pid), --resume takes it over
start_paused b.db 1
kill -9 "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
if [[ -e b.db.run-1.lock ]] && grep -q "pid $pid " b.db.run-1.lock; then
  ok "a killed recorder leaves its lock file: $(cat b.db.run-1.lock)"
else bad "no lock file with the dead pid $pid: $(ls b.db* 2>&1)"; fi
# its -wal is left holding its commits (nothing has folded it in since: the -wal check must not refuse a
# store's own hot -wal, issue 35.1)
wal_left="$(stat -c %s b.db-wal 2>/dev/null || echo 0)"
[[ "$wal_left" -gt 0 ]] && ok "the killed recorder left its -wal ($wal_left bytes)" || bad "no -wal left by the killed recorder"
"$bin" record "${args[@]}" --db b.db --resume > /dev/null 2> take.err && [[ "$(q b.db "select status from runs where id = 1")" == complete ]] &&
  ok "--resume reads the store through that -wal, takes over the dead recorder's lock and completes the run" || bad "stale lock: $(cat take.err)"

# 3. a device that cannot start: exit 1, no run left 'running'
runs_before="$(q a.db "select count(*) from runs")"
"$bin" record "${args[@]}" --db a.db --device cuda:99 > /dev/null 2> dev.err; rc=$?
[[ $rc -eq 1 && $(wc -l < dev.err) -eq 1 ]] && ok "a device that cannot start: exit 1: $(cat dev.err)" || bad "bad device: exit $rc: $(cat dev.err)"
[[ "$(q a.db "select count(*) from runs where status = 'running'")" == 0 ]] &&
  ok "no run is left 'running' ($(q a.db "select count(*) from runs") runs, $runs_before before)" ||
  bad "a run is left running: $(q a.db "select id, status, windows_done from runs")"
"$bin" record "${args[@]}" --db fresh.db --device cuda:99 > /dev/null 2>&1
[[ "$(q fresh.db "select count(*) from runs where status <> 'failed'" || echo 0)" == 0 ]] &&
  ok "a new store: no live run either" || bad "fresh.db: $(q fresh.db "select id, status from runs")"

# 4. analyze and unfinished runs: an interrupted run 3 (SIGKILL mid-run), over
# a corpus long enough (20000 windows) that the recorder is still recording
# when the poll sees its first window
mkdir -p long && random_shards long $((20000 * 24)) 6
start_paused a.db 3 --corpus long
kill -9 "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
"$bin" analyze a.db --json > an.json 2> an.err
"$py" -c "import json,sys; sys.exit(json.load(open('an.json'))['run'] != 2)" &&
  ok "analyze skips the unfinished run 3 and takes the complete run 2" || bad "analyze default: $(cat an.err)"
"$bin" analyze a.db --run 3 --only geometry > /dev/null 2> an.err; rc=$?
[[ $rc -eq 0 ]] && grep -q "^note: run 3 is not complete" an.err && ok "analyze --run 3 analyses the unfinished run, and says so: $(cat an.err)" ||
  bad "analyze --run 3: exit $rc: $(cat an.err)"
[[ ! -e a.db.run-3.lock || "$(cat a.db.run-3.lock)" != *analyze* ]] && ok "analyze released its lock" || bad "analyze left its lock"
finish

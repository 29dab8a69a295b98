#!/usr/bin/env bash
# The commands that only read a store (sql without --write, plot, export,
# export-notebook) never change a byte of it (issue #17.1):
#   - a store with a foreign -wal beside it (the store copied without its
#     -wal, then an old -wal of another copy put back): a read-write
#     connection folds the foreign pages in when it closes and leaves a
#     malformed file; a read-only one leaves the file as it was;
#   - a store with an ordinary leftover -wal (a live store copied with it):
#     read as it stands, the file untouched;
#   - a read-only folder: a store without a -wal is read (immutable); one
#     whose -wal holds changes is refused in one line naming the command
#     that recovers it;
#   - a store of an older schema is refused in one line whose command, pasted
#     into a shell as printed (the path quoted), migrates it.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
gpnm1_scratch cli_readonly shards; cd "$dir"
sum() { sha256sum < "$1" | cut -c1-16; }
# the file alone, as it is on disk (immutable: no -wal read, nothing written)
integrity() { sqlite3 "file:$1?immutable=1" "pragma integrity_check" 2>&1 | head -1; }

random_shards shards $((40 * 48)) 3
"$bin" record --model "$model" --corpus shards --seq-len 48 --db x.db --states pred --quiet > /dev/null || bad "record"
"$bin" analyze x.db > /dev/null || bad "analyze"
cp x.db base.db

# a foreign -wal: x.db changes a few pages (its -wal copied while they are
# not yet checkpointed); the copy y.db diverges (other rows deleted, vacuumed)
"$py" - <<'EOF' || bad "making the foreign -wal"
import shutil, sqlite3
shutil.copy('base.db', 'y0.db')
c = sqlite3.connect('x.db'); c.execute('pragma wal_autocheckpoint = 0')
c.execute("update runs set message = 'changed'"); c.execute('delete from states where window % 3 = 0'); c.commit()
shutil.copy('x.db-wal', 'foreign.wal'); c.close()
d = sqlite3.connect('y0.db'); d.execute('delete from tokens where window < 5'); d.commit(); d.execute('vacuum'); d.close()
EOF
[[ "$(integrity y0.db)" == ok ]] || bad "the copy is sound before the test: $(integrity y0.db)"
want="$(sum y0.db)"; want_wal="$(sum foreign.wal)"

# each read-only command on a fresh pair: the store's bytes and its -wal's are
# unchanged, the file passes integrity_check, and the command exits 0 or 1
# with its error on one line (the pages it reads may be the foreign ones)
readers=("sql y.db 'select count(*) from tokens'"
         "sql y.db 'select count(*) from states' --csv"
         "plot y.db --out figs --no-render"
         "export y.db --out csv --format csv"
         "export y.db --out npy --format npy"
         "export-notebook y.db --out nb.ipynb")
for r in "${readers[@]}"; do
  rm -f y.db y.db-wal y.db-shm; cp y0.db y.db; cp foreign.wal y.db-wal
  eval "\"\$bin\" $r" > out.txt 2> err.txt; rc=$?
  what="gpnscope $r (foreign -wal)"
  if [[ "$(sum y.db)" != "$want" ]]; then bad "$what changed the store (exit $rc)"
  elif [[ "$(sum y.db-wal)" != "$want_wal" ]]; then bad "$what changed the -wal"
  elif [[ "$(integrity y.db)" != ok ]]; then bad "$what: integrity_check: $(integrity y.db)"
  elif [[ $rc -gt 1 || ( $rc -eq 1 && $(wc -l < err.txt) -ne 1 ) ]]; then bad "$what: exit $rc: $(cat err.txt)"
  else ok "$what: the store's bytes unchanged, integrity_check ok (exit $rc)"; fi
done
# and the sqlite3 shell, read-write, on the same pair: the damage the readers avoid
rm -f y.db y.db-wal y.db-shm; cp y0.db y.db; cp foreign.wal y.db-wal
sqlite3 y.db "select count(*) from tokens" > /dev/null 2>&1
[[ "$(integrity y.db)" != ok ]] && ok "(a read-write connection on the same pair leaves a malformed file: the case is real)" ||
  echo "note: a read-write connection did not damage this pair"

# an ordinary leftover -wal: a live store copied with its -wal; readers see
# the changes in it and leave both files as they are
rm -rf live; mkdir live
"$py" - <<'EOF' || bad "making a live copy"
import shutil, sqlite3
shutil.copy('base.db', 'live/src.db')
c = sqlite3.connect('live/src.db'); c.execute('pragma wal_autocheckpoint = 0')
c.execute("update runs set message = 'in the wal'"); c.commit()
shutil.copy('live/src.db', 'live/l.db'); shutil.copy('live/src.db-wal', 'live/l.db-wal'); c.close()
EOF
lsum="$(sum live/l.db)"
for r in "sql live/l.db 'select message from runs' --csv" "export live/l.db --out live/csv --format csv" \
         "plot live/l.db --out live/figs --no-render" "export-notebook live/l.db --out live/nb.ipynb"; do
  eval "\"\$bin\" $r" > out.txt 2> err.txt; rc=$?
  [[ $rc -eq 0 && "$(sum live/l.db)" == "$lsum" ]] && ok "gpnscope $r (a live -wal): exit 0, the file unchanged" ||
    bad "gpnscope $r (a live -wal): exit $rc, file $( [[ "$(sum live/l.db)" == "$lsum" ]] && echo unchanged || echo CHANGED): $(cat err.txt)"
done
[[ "$("$bin" sql live/l.db "select message from runs" --csv | tail -1)" == "in the wal" ]] &&
  ok "a reader sees what the -wal holds" || bad "the -wal's change is not seen"

# a read-only folder (a read-only bind mount in a private namespace, as root
# ignores permissions): without a -wal the store is read; with a -wal that
# holds changes it is refused in one line naming the recovery
mkdir -p rof
cp base.db rof/clean.db
cp live/l.db rof/pending.db; cp live/l.db-wal rof/pending.db-wal
# the same with the -shm a reader made beside it: SQLite reads it read-only
mkdir -p shm; cp live/l.db shm/s.db; cp live/l.db-wal shm/s.db-wal
"$bin" sql shm/s.db "select 1" > /dev/null 2>&1; cp shm/s.db shm/s.db-wal shm/s.db-shm rof/
if unshare -rm true 2>/dev/null; then
  unshare -rm bash -c '
    mount --bind rof rof && mount -o remount,bind,ro rof || exit 99
    "$1" sql rof/clean.db "select count(*) from runs" --csv > ro_clean.out 2> ro_clean.err; echo $? > ro_clean.rc
    "$1" export rof/clean.db --out ro_csv --format csv > /dev/null 2> ro_export.err; echo $? > ro_export.rc
    "$1" sql rof/pending.db "select 1" > /dev/null 2> ro_pending.err; echo $? > ro_pending.rc
    "$1" sql rof/s.db "select message from runs" --csv > ro_shm.out 2> ro_shm.err; echo $? > ro_shm.rc' _ "$bin"
  if [[ $? -eq 99 ]]; then echo "note: no read-only bind mount here; skipped the read-only folder"
  else
    [[ "$(cat ro_clean.rc)" == 0 && "$(tail -1 ro_clean.out)" == 1 ]] && ok "a read-only folder: a store without a -wal is read" ||
      bad "read-only folder, clean store: exit $(cat ro_clean.rc): $(cat ro_clean.err)"
    [[ "$(cat ro_export.rc)" == 0 ]] && ok "a read-only folder: export reads it" || bad "read-only folder, export: $(cat ro_export.err)"
    if [[ "$(cat ro_pending.rc)" == 1 && $(wc -l < ro_pending.err) -eq 1 ]] && grep -q "cannot be read: .*gpnscope sql --write" ro_pending.err; then
      ok "a read-only folder, a -wal with changes: $(cat ro_pending.err)"
    else bad "read-only folder, pending -wal: exit $(cat ro_pending.rc): $(cat ro_pending.err)"; fi
    [[ "$(cat ro_shm.rc)" == 0 && "$(tail -1 ro_shm.out)" == "in the wal" ]] &&
      ok "a read-only folder with the -wal and its -shm: read, changes in the -wal included" ||
      bad "read-only folder with -shm: exit $(cat ro_shm.rc): $(cat ro_shm.err) $(cat ro_shm.out)"
    [[ ! -e rof/clean.db-shm && "$(sum rof/pending.db)" == "$lsum" ]] && ok "a read-only folder: nothing written" || bad "files appeared or changed in the read-only folder"
  fi
else
  echo "note: unshare -rm is not allowed here; skipped the read-only folder"
fi

# an older schema (0): readers do not migrate; the command they name, pasted
# as printed, migrates it, even for a path a shell would split
old="old store's copy.db"
sqlite3 "$old" "pragma application_id = 1196445267; pragma journal_mode = wal" > /dev/null
osum="$(sum "$old")"
"$bin" sql "$old" "select 1" > /dev/null 2> err.txt; rc=$?
cmd="$(sed -n 's/.*`gpnscope \(.*\)`.*/\1/p' err.txt)"
if [[ $rc -eq 1 && $(wc -l < err.txt) -eq 1 && -n "$cmd" && "$(sum "$old")" == "$osum" ]]; then
  ok "schema 0: refused by a reader, file unchanged: $(cat err.txt)"
else bad "schema 0: exit $rc: $(cat err.txt)"; fi
eval "\"\$bin\" $cmd" > /dev/null 2> err.txt && "$bin" sql "$old" "select count(*) from runs" > /dev/null 2>> err.txt &&
  ok "schema 0: the suggested command, pasted as printed, migrates it" || bad "schema 0: '$cmd' failed: $(cat err.txt)"

finish

#!/usr/bin/env bash
# A store with another store's -wal beside it (issue 35.1): SQLite would fold
# the stranger's pages into the file (writers left the demo store malformed,
# readers showed the other store's models). Every command, writer or reader,
# refuses in one line naming the -wal, and leaves the store's and the -wal's
# bytes as they were; the store passes integrity_check afterwards. A store's
# own -wal (a writer killed before its checkpoint) is still read and written.
# An empty database or a 0-byte file given to a command that only reads or
# adds results is refused, its bytes unchanged (issue 35.5).
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_sqlite3
gpnm1_scratch store_foreign_wal shards; cd "$dir"
sum() { sha256sum < "$1" | cut -c1-16; }
integrity() { sqlite3 "file:$1?immutable=1" "pragma integrity_check" 2>&1 | head -1; }

random_shards shards $((24 * 32)) 4
gdn="$GPNSCOPE_FIXTURES/reference/gdn2.weights.safetensors"
"$bin" record --model "$model" --corpus shards --seq-len 32 --db a.db --quiet >/dev/null || bad "record a.db"
"$bin" record --model "$gdn" --corpus shards --seq-len 32 --db b.db --quiet >/dev/null || bad "record b.db"
# b's -wal, with its models page in it, taken before a checkpoint (the writer killed)
"$py" - <<'EOF' || bad "making b's -wal"
import os, shutil, sqlite3
shutil.copy('b.db', 'b2.db')
c = sqlite3.connect('b2.db'); c.execute('pragma journal_mode = wal'); c.execute('pragma wal_autocheckpoint = 0')
c.execute("update models set path = path || ''"); c.execute("update runs set message = 'b'"); c.commit()
shutil.copy('b2.db-wal', 'foreign.wal')
# a.db's own -wal the same way: a writer that died before folding it in
shutil.copy('a.db', 'own.db')
d = sqlite3.connect('own.db'); d.execute('pragma wal_autocheckpoint = 0')
d.execute("update runs set message = 'own'"); d.commit()
shutil.copy('own.db', 'own0.db'); shutil.copy('own.db-wal', 'own.wal')
# a copy of a.db that went its own way: its -wal reads as a sound store, but not as this one
shutil.copy('a.db', 'c.db')
e = sqlite3.connect('c.db'); e.execute('pragma wal_autocheckpoint = 0')
e.execute("update models set sha256 = replace(sha256, substr(sha256, 1, 1), 'x')"); e.commit()
shutil.copy('c.db-wal', 'sibling.wal')
os._exit(0)
EOF
[[ -s foreign.wal && -s own.wal ]] || bad "no -wal files made"
want="$(sum a.db)"; want_wal="$(sum foreign.wal)"

cmds=("analyze y.db"
      "record --model $model --corpus shards --seq-len 32 --db y.db --quiet"
      "record --model $model --corpus shards --seq-len 32 --db y.db --resume --quiet"
      "sql y.db 'select path from models'"
      "sql y.db --write 'select 1'"
      "plot y.db --out figs --no-render"
      "export y.db --out csv --format csv"
      "migrate y.db"
      "attention y.db --windows 1")
for c in "${cmds[@]}"; do
  rm -f y.db y.db-wal y.db-shm; cp a.db y.db; cp foreign.wal y.db-wal
  eval "\"\$bin\" $c" >out.txt 2>err.txt; rc=$?
  what="gpnscope ${c%% --quiet} (a foreign -wal)"
  if [[ $rc -eq 0 || $(wc -l <err.txt) -ne 1 ]] || ! grep -q "y.db-wal does not belong to y.db.*move y.db-wal away" err.txt; then
    bad "$what: exit $rc: $(head -c 300 err.txt)"
  elif grep -qi "damaged\|COPY" err.txt; then bad "$what: the message suggests a recovery that folds the -wal in: $(cat err.txt)"
  elif [[ "$(sum y.db)" != "$want" || "$(sum y.db-wal)" != "$want_wal" ]]; then bad "$what: a file changed"
  elif [[ "$(integrity y.db)" != ok ]]; then bad "$what: integrity_check: $(integrity y.db)"
  else ok "$what: refused, both files unchanged: $(cat err.txt)"; fi
done
# a sibling copy's -wal: sound on its own, but its model is not this store's
for c in "analyze y.db" "sql y.db 'select sha256 from models'"; do
  rm -f y.db y.db-wal y.db-shm; cp a.db y.db; cp sibling.wal y.db-wal; ws="$(sum sibling.wal)"
  eval "\"\$bin\" $c" >out.txt 2>err.txt; rc=$?
  [[ $rc -ne 0 && $(wc -l <err.txt) -eq 1 && "$(sum y.db)" == "$want" && "$(sum y.db-wal)" == "$ws" ]] &&
    grep -q "models and runs are not the file's" err.txt && ok "gpnscope $c (a sibling copy's -wal): $(cat err.txt)" ||
    bad "gpnscope $c (a sibling copy's -wal): exit $rc: $(cat err.txt)"
done
# the -wal moved away, the store is whole and whose it was
rm -f y.db-wal y.db-shm
[[ "$("$bin" sql y.db "select count(*) from models where path like '%gpnm1%'" --csv | tail -1)" == 1 ]] &&
  ok "with the -wal moved away the store reads as itself" || bad "after moving the -wal away"

# the store's own -wal (a writer killed before its checkpoint): read, written, nothing lost
rm -f o.db*; cp own0.db o.db; cp own.wal o.db-wal
[[ "$("$bin" sql o.db "select message from runs" --csv | tail -1)" == own ]] && ok "its own -wal: a reader sees the change in it" ||
  bad "own -wal, sql: $(cat err.txt)"
"$bin" analyze o.db >out.txt 2>err.txt && [[ "$(sqlite3 o.db "select message from runs")" == own && "$(integrity o.db)" == ok ]] &&
  ok "its own -wal: analyze writes, the change kept, integrity_check ok" || bad "own -wal, analyze: $(cat err.txt)"

# an empty database and a 0-byte file: refused by every command that does not create a store, bytes unchanged
"$py" -c "import sqlite3; c = sqlite3.connect('empty.db'); c.execute('pragma user_version = 0'); c.execute('vacuum'); c.close()"
: >zero.db
for f in empty.db zero.db; do
  s="$(sum $f)"
  for c in "analyze $f" "plot $f --out figs2 --no-render" "export $f --out csv2 --format csv" "export-notebook $f --out nb.ipynb" \
           "compare $f:1 $f:2 --out cmp" "sql $f 'select 1'" "attention $f" "migrate $f"; do
    eval "\"\$bin\" $c" >out.txt 2>err.txt; rc=$?
    if [[ $rc -ne 0 && $(wc -l <err.txt) -eq 1 && "$(sum $f)" == "$s" ]] && grep -q "not a gpnscope store\|does not exist" err.txt; then
      ok "gpnscope $c: refused, bytes unchanged: $(cat err.txt)"
    else bad "gpnscope $c: exit $rc, file $( [[ "$(sum $f)" == "$s" ]] && echo unchanged || echo CHANGED): $(head -c 300 err.txt)"; fi
  done
done
"$bin" record --model "$model" --corpus shards --seq-len 32 --db zero.db --quiet >/dev/null 2>err.txt &&
  [[ "$(sqlite3 zero.db "select count(*) from runs")" == 1 ]] && ok "record makes a store of a 0-byte file" || bad "record into a 0-byte file: $(cat err.txt)"
finish

#!/usr/bin/env bash
# Only store/ talks SQL (docs/architecture.md, "Who may talk SQL"): every other
# module asks the store's named readers. The exceptions are the SQL interface
# itself (cli/cmd_sql.c) and the bench that measures raw SQLite
# (bench/store_ceiling.c). A call of sqlite3_* or store_db() anywhere else in
# the C sources fails this test with its file and line.
set -uo pipefail
src="$GPNSCOPE_SOURCE"
cd "$src" || { echo "FAIL: no source tree at $src"; exit 1; }
hits=$(grep -rnE '\bsqlite3_[a-z0-9_]+ *\(|\bstore_db *\(|#include <sqlite3(ext)?\.h>' --include='*.c' --include='*.h' --include='*.cu' \
           base parallel engine probes record analyses plots notebooks-export view api cli bench 2>/dev/null |
       grep -vE '^(cli/cmd_sql\.c|bench/store_ceiling\.c):')
if [ -n "$hits" ]; then
    echo "FAIL: SQL outside store/ (add a named reader to store/ instead):"
    echo "$hits"
    exit 1
fi
n=$(grep -rlE '\bsqlite3_[a-z0-9_]+ *\(' --include='*.c' store | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: found no SQL in store/ either: the pattern is broken"; exit 1; }
echo "ok: SQL only in store/ ($n files), cli/cmd_sql.c and bench/store_ceiling.c"

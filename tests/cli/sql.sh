#!/usr/bin/env bash
# gpnscope sql: table, CSV and JSON output (BLOBs summarised), several
# statements, read-only by default (a read-only connection: no query can
# write without --write), and one-line errors for files that are missing or
# not stores (which it never creates).
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir cli_sql; cd "$dir"
fail=0; pass=0
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
check() { if [[ "$2" == "$3" ]]; then echo "ok: $1"; pass=$((pass+1)); else bad "$1: got"$'\n'"$2"$'\n'"want"$'\n'"$3"; fi; }

"$py" -c "
import numpy as np
s = np.arange(2 * 3 * 4, dtype='<f4').reshape(2, 3, 4)
np.save('s.npy', s)
np.save('t.npy', np.array([[5, 6, 7], [8, 9, 10]], dtype='<i4'))
"
"$bin" import --db s.db --states s.npy --tokens t.npy > /dev/null || bad "import"

check "table" "$("$bin" sql s.db "SELECT window, position, vector, vec_norm(vector) AS norm, 'a,b' AS txt, NULL AS n FROM states WHERE position < 2 ORDER BY window, position LIMIT 3")" \
"window  position  vector       norm  txt  n
------  --------  --------  -------  ---  ----
     0         0  <f32[4]>  3.74166  a,b  NULL
     0         1  <f32[4]>   11.225  a,b  NULL
     1         0  <f32[4]>  27.0924  a,b  NULL"
check "csv" "$("$bin" sql s.db "SELECT position, vec_to_json(vector) AS v, 'say \"hi\"' AS q, NULL AS n, x'0102' AS b FROM states WHERE window = 1 AND position = 2" --csv)" \
'position,v,q,n,b
2,"[20,21,22,23]","say ""hi""",,<blob 2 bytes>'
check "json" "$("$bin" sql s.db "SELECT window, vec_norm(vector) AS norm, vec_to_json(vector) AS v, NULL AS n FROM states WHERE position = 0 ORDER BY window" --json | "$py" -c "
import json, sys
rows = json.load(sys.stdin)
print(len(rows), rows[0]['window'], round(rows[1]['norm'], 4), json.loads(rows[1]['v']), rows[0]['n'])")" \
"2 0 27.0924 [12, 13, 14, 15] None"
check "json of no rows" "$("$bin" sql s.db "SELECT * FROM states WHERE window = 99" --json)" "[]"
check "exact numbers in csv" "$("$bin" sql s.db "SELECT 0.1, 1.0/3, 1e300, 2" --csv | tail -1)" "0.1,0.33333333333333331,1e+300,2"
check "several statements" "$("$bin" sql s.db "SELECT 1 AS a; SELECT 2 AS b, 3 AS c" --csv)" \
"a
1

b,c
2,3"
check "a view" "$("$bin" sql s.db "SELECT count(*) AS n FROM token_states" --csv | tail -1)" "6"
check "unicode width" "$("$bin" sql s.db "SELECT 'é' AS x UNION ALL SELECT 'abc'")" \
"x
---
é
abc"
check "newlines stay in their cell" "$("$bin" sql s.db "SELECT 'a' || char(10) || 'b' AS x")" \
"x
----
a\\nb"

# refusals: one line on stderr, exit 1, nothing created
expect_error() {
    local what="$1" pattern="$2"; shift 2
    "$bin" sql "$@" > out.txt 2> err.txt
    local rc=$?
    if [[ $rc -ne 1 || $(wc -l < err.txt) -ne 1 ]] || ! grep -q "^gpnscope sql: .*$pattern" err.txt; then
        bad "$what: exit $rc, stderr: $(cat err.txt)"
    else echo "ok: $what: $(cat err.txt)"; pass=$((pass+1)); fi
}
expect_error "missing file" "missing.db does not exist" missing.db "SELECT 1"
[[ -e missing.db ]] && bad "a missing file was created"
echo "just text" > notes.txt
expect_error "not a database" "not a gpnscope store (not an SQLite database at all)" notes.txt "SELECT 1"
"$py" -c "import sqlite3; c = sqlite3.connect('other.db'); c.execute('CREATE TABLE t(x)'); c.commit()"
expect_error "another database" "an SQLite database but not a gpnscope store" other.db "SELECT 1"
expect_error "syntax" 'near "SELEC": syntax error' s.db "SELEC 1"
expect_error "no such table" "no such table: nosuchtable" s.db "SELECT * FROM nosuchtable"
expect_error "a vector error" "vec_length: a BLOB of 2 bytes is not a float32 vector" s.db "SELECT vec_length(x'0102')"
expect_error "read-only by default" "add --write to run it): DELETE FROM tokens" s.db "DELETE FROM tokens"
check "nothing was deleted" "$("$bin" sql s.db "SELECT count(*) FROM tokens" --csv | tail -1)" "6"
"$bin" sql s.db "CREATE VIEW big_norms AS SELECT * FROM states WHERE vec_norm(vector) > 30" --write || bad "--write"
check "--write worked" "$("$bin" sql s.db "SELECT count(*) FROM big_norms" --csv | tail -1)" "2"
"$bin" sql s.db "SELECT 1" --csv --json > /dev/null 2>&1; [[ $? -eq 2 ]] || bad "--csv with --json is a usage error"
"$bin" sql s.db > /dev/null 2>&1; [[ $? -eq 2 ]] || bad "a missing query is a usage error"
"$bin" sql --help | grep -q -- "--write" || bad "--help"

# without --write the connection is read-only in SQLite itself, not by a
# PRAGMA the query could undo (issue #17.2); no query changes a byte
sum0="$(sha256sum < s.db)"
expect_error "query_only undone by the query" "add --write to run it" s.db "PRAGMA query_only=0; DELETE FROM runs"
check "the runs are still there" "$("$bin" sql s.db "SELECT count(*) FROM runs" --csv | tail -1)" "1"
"$bin" sql s.db "PRAGMA journal_mode=DELETE" > /dev/null 2>&1
check "journal_mode is still wal" "$(sqlite3 s.db "PRAGMA journal_mode")" "wal"
expect_error "PRAGMA user_version" "add --write to run it" s.db "PRAGMA user_version=7"
expect_error "a VACUUM" "add --write to run it" s.db "VACUUM"
# a sandbox for user SQL (issue 35.11): no library address from fts3_tokenizer, no crash through its
# two-argument form, no file made by VACUUM INTO or ATTACH, even beside an empty -wal
expect_error "fts3_tokenizer's address" "not authorized to use function: fts3_tokenizer" s.db "SELECT hex(fts3_tokenizer('simple'))"
expect_error "fts3_tokenizer replaced" "fts3_tokenizer" s.db "SELECT fts3_tokenizer('simple', x'0000000000000000')"
expect_error "fts3_tokenizer replaced, with --write" "fts3_tokenizer" s.db --write "SELECT fts3_tokenizer('simple', x'0000000000000000')"
expect_error "an fts3 table" "add --write to run it" s.db "CREATE VIRTUAL TABLE temp.f USING fts3(tokenize=simple)"
expect_error "VACUUM INTO" "add --write to run it): VACUUM INTO" s.db "VACUUM INTO 'copy.db'"
expect_error "ATTACH" "ATTACH and DETACH need --write" s.db "ATTACH 'att.db' AS a"
check "no file made by VACUUM INTO or ATTACH" "$(ls copy.db att.db 2>/dev/null)" ""
# a store's text cannot drive the terminal: the table shows control characters escaped; a CSV file keeps the bytes
check "an escape in a table" "$("$bin" sql s.db "SELECT char(27) || '[31mred' || char(7) AS t" | tail -1)" '\x1b[31mred\x07'
check "an escape in CSV to a file" "$("$bin" sql s.db "SELECT char(27) || 'x' AS t" --csv | tail -1 | od -An -c | tr -s ' ')" ' 033 x \n'
"$bin" sql s.db "PRAGMA wal_checkpoint(TRUNCATE)" > /dev/null 2>&1
check "nothing the queries did changed the file" "$(sha256sum < s.db)" "$sum0"
# a query from a file or stdin, and one that starts with an SQL comment (issue 38.8)
printf -- '-- how many runs\nSELECT count(*) AS n FROM runs;\n' > q.sql
check "--file" "$("$bin" sql s.db --file q.sql --csv | tail -1)" "1"
check "--file - (stdin)" "$(echo "SELECT 7 AS seven" | "$bin" sql s.db --file - --csv | tail -1)" "7"
check "a query that starts with a -- comment" "$("$bin" sql s.db "-- how many runs
SELECT count(*) AS n FROM runs" --csv | tail -1)" "1"
check "a -- before the commented query" "$("$bin" sql s.db --csv -- "-- how many runs
SELECT count(*) AS n FROM runs" | tail -1)" "1"
"$bin" sql s.db "SELECT 1" --file q.sql > /dev/null 2> err.txt
check "--file and a QUERY: exit 2, one line" "$?|$(cat err.txt)" "2|gpnscope sql: give the query in --file or as QUERY, not both"
expect_error "a missing --file" "cannot open the query file nope.sql" s.db --file nope.sql
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]] || exit 1

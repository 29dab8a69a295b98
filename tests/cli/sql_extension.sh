#!/usr/bin/env bash
# The loadable extension build/gpnscope_vec.so: loaded by Python's sqlite3
# (enable_load_extension) and by the sqlite3 shell (.load), it gives the same
# answers and the same errors as the functions built into gpnscope.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
ext="$GPNSCOPE_BUILD/gpnscope_vec"
scratch_dir cli_sql_extension; cd "$dir"
[[ -f "$ext.so" ]] || { echo "FAIL: $ext.so was not built"; exit 1; }
need_python numpy
"$py" -c "import numpy as np; np.save('s.npy', (np.arange(60, dtype='<f4').reshape(3, 5, 4) - 20) / 7)"
"$bin" import --db s.db --states s.npy > /dev/null || { echo "FAIL: import"; exit 1; }
"$bin" import --db s.db --states s.npy --dtype f16 > /dev/null || { echo "FAIL: import f16"; exit 1; }
fail=0
ran=0

# ---- Python ----
if "$py" -c "import sqlite3; sqlite3.connect(':memory:').enable_load_extension(True)" 2>/dev/null; then
    ran=1
    "$py" - "$ext" "$bin" <<'PY' || fail=1
import json, sqlite3, subprocess, sys
ext, gpnscope = sys.argv[1], sys.argv[2]
con = sqlite3.connect('s.db')
con.enable_load_extension(True)
con.load_extension(ext)
con.enable_load_extension(False)
queries = [
    "SELECT vec_length(vector) AS x FROM states WHERE run_id = 1 ORDER BY id LIMIT 1",
    "SELECT vec_to_json(vec_f32(vector, dtype)) AS x FROM states ORDER BY id",
    "SELECT vec_norm(vec_f32(vector, dtype)) AS x FROM states ORDER BY id",
    "SELECT vec_to_json(vec_avg(vec_f32(vector, dtype))) AS x FROM states GROUP BY run_id ORDER BY run_id",
    "SELECT vec_to_json(vec_avg(vec_f32(vector, dtype)) OVER (PARTITION BY run_id, window ORDER BY position)) AS x FROM states ORDER BY id",
    "SELECT vec_cosine(a.vector, b.vector) AS x FROM states a JOIN states b ON b.id = a.id + 1 WHERE a.run_id = 1 AND b.run_id = 1 ORDER BY a.id",
    "SELECT vec_distance_cosine(a.vector, b.vector) AS x FROM states a JOIN states b ON b.id = a.id + 2 WHERE a.run_id = 1 AND b.run_id = 1 ORDER BY a.id",
    "SELECT vec_distance_l2(a.vector, b.vector) AS x FROM states a JOIN states b ON b.id = a.id + 3 WHERE a.run_id = 1 AND b.run_id = 1 ORDER BY a.id",
    "SELECT vec_dot(vector, '[1, 2, 3, 4]') AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_project(vector, '[0, 0, 0, 2]') AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_at(vector, 3) AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_to_json(vec_slice(vector, 1, 3)) AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_to_json(vec_add(vector, vec_scale(vector, -0.5))) AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_to_json(vec_sub(vector, '[1, 1, 1, 1]')) AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT vec_to_json(vec_normalize(vector)) AS x FROM states WHERE run_id = 1 ORDER BY id",
    "SELECT hex(vec_f32('[1.5, -2]')) AS x",
    "SELECT vec_cosine('[0, 0]', '[1, 1]') AS x",
]
errors = [
    ("SELECT vec_length(x'010203')", "vec_length: a BLOB of 3 bytes is not a float32 vector"),
    ("SELECT vec_dot('[1, 2]', '[1]')", "vec_dot: the vectors have different lengths (2 and 1)"),
    ("SELECT vec_at('[1]', 4)", "vec_at: index 4 is out of range for a vector of 1 elements"),
    ("SELECT vec_f32(x'003c00', 'f16')", "not a float16 vector"),
]
bad = 0
for q in queries:
    mine = [r[0] for r in con.execute(q)]
    out = subprocess.run([gpnscope, 'sql', 's.db', q, '--json'], capture_output=True, text=True, check=True).stdout
    theirs = [r['x'] for r in json.loads(out)]
    if mine != theirs:
        bad += 1
        print(f'FAIL: extension and gpnscope differ on {q}:\n  {mine[:3]}\n  {theirs[:3]}')
    elif not mine:
        bad += 1
        print(f'FAIL: no rows from {q}')
for q, want in errors:
    try:
        con.execute(q).fetchall()
        bad += 1
        print(f'FAIL: no error from {q}')
    except sqlite3.OperationalError as e:
        if want not in str(e):
            bad += 1
            print(f'FAIL: {q}: {e}')
r = subprocess.run([gpnscope, 'sql', 's.db', errors[0][0]], capture_output=True, text=True)
if errors[0][1] not in r.stderr:
    bad += 1
    print('FAIL: gpnscope gives another error:', r.stderr)
print(f'python: {len(queries)} queries and {len(errors)} errors compared')
sys.exit(1 if bad else 0)
PY
else
    echo "SKIPPED (visibly): $py's sqlite3 cannot load extensions"
fi

# ---- the sqlite3 shell ----
if command -v sqlite3 > /dev/null; then
    ran=1
    got=$(sqlite3 -csv s.db ".load $ext" "SELECT vec_length(vector), round(vec_norm(vec_f32(vector, dtype)), 4) FROM states WHERE run_id = 2 ORDER BY id LIMIT 2" 2>&1)
    want=$("$bin" sql s.db "SELECT vec_length(vector), round(vec_norm(vec_f32(vector, dtype)), 4) FROM states WHERE run_id = 2 ORDER BY id LIMIT 2" --csv | tail -n +2)
    if [[ "$got" == "$want" && -n "$got" ]]; then echo "ok: sqlite3 shell .load: $got"
    else echo "FAIL: sqlite3 shell: got '$got', want '$want'"; fail=1; fi
    err=$(sqlite3 s.db ".load $ext" "SELECT vec_length(x'01')" 2>&1)
    [[ "$err" == *"vec_length: a BLOB of 1 bytes is not a float32 vector"* ]] && echo "ok: sqlite3 shell error: $err" || { echo "FAIL: sqlite3 shell error: $err"; fail=1; }
    # without the extension the views still work (they use no vector functions)
    n=$(sqlite3 s.db "SELECT count(*) FROM token_states; SELECT count(*) FROM run_summary" 2>&1 | tr '\n' ' ')
    [[ "$n" == "0 2 " ]] && echo "ok: views need no extension" || { echo "FAIL: views without the extension: $n"; fail=1; }
else
    echo "SKIPPED (visibly): no sqlite3 shell installed (apt-get install sqlite3)"
fi
[[ $ran -eq 0 ]] && { echo "SKIPPED: neither Python's sqlite3 nor the sqlite3 shell can load extensions here"; exit 77; }
exit $fail

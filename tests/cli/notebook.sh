#!/usr/bin/env bash
# gpnscope export-notebook end to end: record and analyze real runs (a GPN+M
# with float32 states; a second run with float16 states, not analysed; a GPN),
# write their notebooks, validate them with nbformat, execute them with
# `jupyter nbconvert --execute`, and check that the outputs carry the stored
# numbers (tests/notebooks/check_notebook.py); a.db also holds a patch, a
# steer and a lens experiment (section 8b). Skips visibly (77) when the
# Debian notebook packages are not installed.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$GPNSCOPE_SOURCE"
scratch_dir cli_notebook shards nb home; cd "$dir"
missing=$("$py" - <<'PY'
import importlib.util as u
need = {'numpy': 'python3-numpy', 'pandas': 'python3-pandas', 'matplotlib': 'python3-matplotlib',
        'nbformat': 'python3-nbformat', 'nbconvert': 'jupyter-nbconvert', 'ipykernel': 'python3-ipykernel'}
print(' '.join(pkg for mod, pkg in need.items() if u.find_spec(mod) is None))
PY
)
[[ -n "$missing" ]] && { echo "SKIPPED: $py lacks the notebook tools (apt-get install $missing)"; exit 77; }
fail=0
die() { echo "FAIL: $*"; exit 1; }

"$py" -c "
import numpy as np; from testdata import write_shards
write_shards('shards', np.random.default_rng(5).integers(3, 89, size=32*64), 97)"
ref="$src/tests/fixtures/reference"
"$bin" record --model "$ref/gpnm1.weights.safetensors" --corpus shards --seq-len 64 --db a.db --states pred --quiet > /dev/null || die "record a.db"
"$bin" analyze a.db > /dev/null || die "analyze a.db"
"$bin" record --model "$ref/gpnm1.weights.safetensors" --corpus shards --seq-len 64 --windows 6 --db a.db --states pred,ground --dtype f16 --quiet > /dev/null || die "record run 2"
# section 8b: a patching sweep, a steering curve and a lens in a.db (experiments: no run of their own)
"$py" -c "
import json
with open('pairs.jsonl', 'w') as f:
    for i in range(4):
        w = [5 + i, 17, 29 + i, 41]
        f.write(json.dumps({'clean': w + [60 + i] + w, 'corrupted': w + [70 + i] + w, 'answer': 60 + i, 'foil': 70 + i}) + '\\n')"
"$bin" patch "$ref/gpnm1.weights.safetensors" pairs.jsonl --store a.db > /dev/null || die "patch into a.db"
"$bin" steer "$ref/gpnm1.weights.safetensors" --corpus shards --seq-len 32 --windows 2 --direction s_bar --from a.db \
    --run 1 --c -4,0,4 --store a.db > /dev/null || die "steer into a.db"
"$bin" lens "$ref/gpnm1.weights.safetensors" --tokens 5,17,29,41,60 --store a.db > /dev/null || die "lens into a.db"
"$bin" record --model "$ref/gpn.weights.safetensors" --corpus shards --seq-len 64 --db b.db --states pred --quiet > /dev/null || die "record b.db"
"$bin" analyze b.db > /dev/null || die "analyze b.db"

"$bin" export-notebook a.db --out nb/a1.ipynb --run 1 > out.txt || die "export-notebook a1"
grep -q "loads the vector extension .*gpnscope_vec" out.txt || { echo "FAIL: the extension was not found: $(cat out.txt)"; fail=1; }
GPNSCOPE_VEC= "$bin" export-notebook a.db --out nb/a2.ipynb --run 2 > out.txt || die "export-notebook a2"
grep -q "note: GPNSCOPE_VEC is empty" out.txt || { echo "FAIL: no note without the extension: $(cat out.txt)"; fail=1; }
"$bin" export-notebook b.db --out nb/b1.ipynb > /dev/null || die "export-notebook b1"

# c1: a crafted copy of a.db (issue 17, item 8): markup in the model path and an analysis name, '$' in
# token pieces (LLaMA-2 has '$$'), settings that are a JSON array, NULL and infinite scalars, a text
# series and thousands of heads; each must give a line saying what is wrong, never an exception
cp a.db c.db
"$py" - <<'PY' || die "crafting c.db"
import sqlite3
con = sqlite3.connect('c.db')
con.execute("UPDATE models SET path = ? WHERE id = (SELECT model_id FROM runs WHERE id = 1)",
            ("m`x <img src=x onerror=alert(1)>\n# Owned <script>alert(2)</script> $$ & co.safetensors",))
con.execute("INSERT INTO analyses (run_id, name, settings, settings_hash) VALUES (1, ?, '{}', ?)",
            ("evil`<script>alert(3)</script>\n# H", 'f' * 64))
con.execute("INSERT INTO tokenizers (path, sha256, kind, vocab_size) VALUES ('dollars', ?, 'test', 97)", ('e' * 64,))
tid = con.execute("SELECT id FROM tokenizers WHERE path = 'dollars'").fetchone()[0]
con.executemany("INSERT INTO vocabulary VALUES (?, ?, ?, ?)",
                [(tid, t, p, p.encode()) for t in range(97) for p in (('$$', '$x$', '$', '\\$')[t % 4],)])
con.execute("UPDATE runs SET tokenizer_id = ? WHERE id = 1", (tid,))
aid = lambda name: con.execute("SELECT max(id) FROM analyses WHERE run_id = 1 AND name = ?", (name,)).fetchone()[0]
con.execute("UPDATE analyses SET settings = '[1, 2]' WHERE id = ?", (aid('geometry'),))
con.execute("UPDATE analysis_scalars SET value = NULL WHERE analysis_id = ? AND key = 'stable_rank'", (aid('geometry'),))
con.execute("UPDATE analysis_scalars SET value = 9e999 WHERE analysis_id = ? AND key = 'norm_std'", (aid('geometry'),))
con.execute("UPDATE analysis_series SET y = 'abc' WHERE analysis_id = ? AND series = 'emergence' AND idx = 3",
            (aid('default_direction'),))
r = aid('retention')
con.execute("DELETE FROM analysis_series WHERE analysis_id = ? AND series IN ('e_fold_time', 'pool')", (r,))
con.executemany("INSERT INTO analysis_series (analysis_id, series, idx, x, y) VALUES (?, ?, ?, ?, ?)",
                [(r, s, i, i, 3.0 + i if s == 'e_fold_time' else i % 3) for s in ('e_fold_time', 'pool') for i in range(3000)])
con.commit()
PY
"$bin" export-notebook c.db --out nb/c1.ipynb --run 1 > /dev/null || die "export-notebook c1"

# errors: one line, exit 1 (2 for usage)
expect_one_line 1 "missing.db does not exist" "$bin" export-notebook missing.db --out nb/x.ipynb
expect_one_line 1 "run 99" "$bin" export-notebook a.db --out nb/x.ipynb --run 99
expect_one_line 2 "--out is required" "$bin" export-notebook a.db
expect_one_line 2 "positive integer" "$bin" export-notebook a.db --out nb/x.ipynb --run 0
echo "not sqlite" > bogus.db
expect_one_line 1 "bogus.db" "$bin" export-notebook bogus.db --out nb/x.ipynb
[[ -e nb/x.ipynb ]] && { echo "FAIL: a failed export left nb/x.ipynb"; fail=1; }

# the notebooks read the store through the gpnscope package: this build's library, or, in a
# sanitized build (python3 cannot load one), the ordinary build the package was set up with
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
[[ "${GPNSCOPE_SANITIZED:-0}" == 1 ]] || export GPNSCOPE_LIB="$GPNSCOPE_BUILD/libgpnscope.so"
"$py" -c "import gpnscope._lib as l; l.lib()" > pkg.log 2>&1 \
    || { echo "SKIPPED: the gpnscope package cannot load a library: $(tail -1 pkg.log)"; exit 77; }

# execute all four (each in its own kernel), in a private Jupyter/matplotlib home
export HOME="$dir/home" JUPYTER_RUNTIME_DIR="$dir/home/rt" JUPYTER_DATA_DIR="$dir/home/data" \
       IPYTHONDIR="$dir/home/ipython" MPLCONFIGDIR="$dir/home/mpl" PYDEVD_DISABLE_FILE_VALIDATION=1 MPLBACKEND=
start=$SECONDS
"$py" -Xfrozen_modules=off -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
    --output-dir "$dir/out" nb/a1.ipynb nb/a2.ipynb nb/b1.ipynb nb/c1.ipynb > nbconvert.log 2>&1 \
    || { tail -40 nbconvert.log; die "nbconvert --execute failed"; }
echo "ok: four notebooks executed in $((SECONDS - start)) s"
# the crafted store's markup stays text in HTML
"$py" -Xfrozen_modules=off -m nbconvert --to html --output-dir "$dir/html" out/c1.ipynb > nbconvert-html.log 2>&1 \
    || { tail -20 nbconvert-html.log; die "nbconvert --to html failed"; }
for bad in '<img src=x' '<script>alert' '<h1 id="Owned' '<h1>Owned' '<h1 id="H' ; do
    grep -qF -- "$bad" html/c1.html && { echo "FAIL: c1.html holds '$bad' from the store"; fail=1; }
done
grep -qF 'onerror=alert(1)&gt;' html/c1.html && echo "ok: the model path is shown as text in c1.html" \
    || { echo "FAIL: the model path is not shown as text in c1.html"; fail=1; }
# every table is marked for MathJax to skip, so the '$$' pieces and path above are not typeset (issue 35.13)
n_tables="$(grep -c '<table border="1" class="dataframe' html/c1.html || true)"
n_plain="$(grep -c '<table border="1" class="dataframe tex2jax_ignore' html/c1.html || true)"
[[ "$n_tables" -gt 0 && "$n_tables" == "$n_plain" ]] && echo "ok: all $n_tables tables in c1.html are kept from MathJax" \
    || { echo "FAIL: $n_plain of $n_tables tables in c1.html are kept from MathJax"; fail=1; }
"$py" "$src/tests/notebooks/check_notebook.py" nb out || fail=1
exit $fail

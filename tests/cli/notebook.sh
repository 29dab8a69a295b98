#!/usr/bin/env bash
# gpnscope export-notebook end to end: record and analyze real runs (a GPN+M
# with float32 states; a second run with float16 states, not analysed; a GPN),
# write their notebooks, validate them with nbformat, execute them with
# `jupyter nbconvert --execute`, and check that the outputs carry the stored
# numbers (tests/notebooks/check_notebook.py). Skips visibly (77) when the
# Debian notebook packages are not installed.
set -uo pipefail
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
bin="$GPNSCOPE_BIN"
src="$GPNSCOPE_SOURCE"
dir="$GPNSCOPE_BUILD/test-scratch/cli_notebook"; rm -rf "$dir"; mkdir -p "$dir/shards" "$dir/nb" "$dir/home"; cd "$dir"
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
import json, numpy as np
ids = np.random.default_rng(5).integers(3, 89, size=32*64).astype(np.uint32); ids.tofile('shards/data_0000.bin')
json.dump([int(ids.size)], open('shards/data_0000.index.json', 'w'))
json.dump({'tokenizer': 'fixture', 'vocab_size': 97, 'total_tokens': int(ids.size), 'total_docs': 1, 'num_shards': 1},
          open('shards/meta.json', 'w'))"
ref="$src/tests/fixtures/reference"
"$bin" record --model "$ref/gpnm1.weights.safetensors" --corpus shards --seq-len 64 --db a.db --states pred --quiet > /dev/null || die "record a.db"
"$bin" analyze a.db > /dev/null || die "analyze a.db"
"$bin" record --model "$ref/gpnm1.weights.safetensors" --corpus shards --seq-len 64 --windows 6 --db a.db --states pred,ground --dtype f16 --quiet > /dev/null || die "record run 2"
"$bin" record --model "$ref/gpn.weights.safetensors" --corpus shards --seq-len 64 --db b.db --states pred --quiet > /dev/null || die "record b.db"
"$bin" analyze b.db > /dev/null || die "analyze b.db"

"$bin" export-notebook a.db --out nb/a1.ipynb --run 1 > out.txt || die "export-notebook a1"
grep -q "loads the vector extension .*gpnscope_vec" out.txt || { echo "FAIL: the extension was not found: $(cat out.txt)"; fail=1; }
GPNSCOPE_VEC= "$bin" export-notebook a.db --out nb/a2.ipynb --run 2 > out.txt || die "export-notebook a2"
grep -q "note: GPNSCOPE_VEC is empty" out.txt || { echo "FAIL: no note without the extension: $(cat out.txt)"; fail=1; }
"$bin" export-notebook b.db --out nb/b1.ipynb > /dev/null || die "export-notebook b1"

# errors: one line, exit 1 (2 for usage)
expect() { # code, text, command...
    local code=$1 text=$2; shift 2
    "$@" > /dev/null 2> err.txt; local rc=$?
    if [[ $rc -ne $code ]] || ! grep -q -- "$text" err.txt || [[ $(wc -l < err.txt) -ne 1 ]]; then
        echo "FAIL: '$*' gave $rc: $(cat err.txt) (wanted $code and '$text')"; fail=1
    else echo "ok: $* -> $rc: $(cat err.txt)"; fi
}
expect 1 "missing.db does not exist" "$bin" export-notebook missing.db --out nb/x.ipynb
expect 1 "run 99" "$bin" export-notebook a.db --out nb/x.ipynb --run 99
expect 2 "--out is required" "$bin" export-notebook a.db
expect 2 "positive integer" "$bin" export-notebook a.db --out nb/x.ipynb --run 0
echo "not sqlite" > bogus.db
expect 1 "bogus.db" "$bin" export-notebook bogus.db --out nb/x.ipynb
[[ -e nb/x.ipynb ]] && { echo "FAIL: a failed export left nb/x.ipynb"; fail=1; }

# execute all three (each in its own kernel), in a private Jupyter/matplotlib home
export HOME="$dir/home" JUPYTER_RUNTIME_DIR="$dir/home/rt" JUPYTER_DATA_DIR="$dir/home/data" \
       IPYTHONDIR="$dir/home/ipython" MPLCONFIGDIR="$dir/home/mpl" PYDEVD_DISABLE_FILE_VALIDATION=1 MPLBACKEND=
start=$SECONDS
"$py" -Xfrozen_modules=off -m nbconvert --to notebook --execute --ExecutePreprocessor.timeout=300 \
    --output-dir "$dir/out" nb/a1.ipynb nb/a2.ipynb nb/b1.ipynb > nbconvert.log 2>&1 \
    || { tail -40 nbconvert.log; die "nbconvert --execute failed"; }
echo "ok: three notebooks executed in $((SECONDS - start)) s"
"$py" "$src/tests/notebooks/check_notebook.py" nb out || fail=1
exit $fail

#!/usr/bin/env bash
# gpnscope export end to end: a recorded and analysed GPN+M run (float32
# pred and ground states) and a float16 run, with a vocabulary of awkward
# pieces (commas, quotes, newlines), exported as CSV and as .npy; numpy.load,
# pandas and the csv module read back exactly what the store holds
# (tests/notebooks/check_export.py). Also the command's one-line errors.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$GPNSCOPE_SOURCE"
scratch_dir cli_export shards; cd "$dir"
"$py" -c "import numpy" 2>/dev/null || { echo "SKIPPED: $py has no numpy (apt-get install python3-numpy)"; exit 77; }
fail=0
die() { echo "FAIL: $*"; exit 1; }

"$py" -c "
import numpy as np; from testdata import write_shards
write_shards('shards', np.random.default_rng(5).integers(3, 89, size=24*48), 97)"
model="$src/tests/fixtures/reference/gpnm1.weights.safetensors"
"$bin" record --model "$model" --corpus shards --seq-len 48 --db x.db --states pred,ground --quiet > /dev/null || die "record run 1"
"$bin" analyze x.db > /dev/null || die "analyze"
"$bin" record --model "$model" --corpus shards --seq-len 48 --windows 5 --db x.db --states pred,ground --dtype f16 --quiet > /dev/null || die "record run 2"
"$bin" record --model "$src/tests/fixtures/reference/gpn.weights.safetensors" --corpus shards --seq-len 48 --windows 2 --db x.db --states none --quiet > /dev/null || die "record run 3 (a GPN, no states)"
# a vocabulary with pieces that need quoting, for both runs
"$py" - <<'PY'
import sqlite3
con = sqlite3.connect('x.db')
con.execute("INSERT INTO tokenizers (sha256, kind, vocab_size) VALUES (?, 'test', 97)", ('e' * 64,))
tid = con.execute('SELECT max(id) FROM tokenizers').fetchone()[0]
awkward = [',', '"', 'a "quoted" word', 'line\nbreak', 'cr\r\nlf', ' the', 'x,y', '', 'é', '\\xFF', 'NA', 'null']
for t in range(97):
    p = awkward[t % len(awkward)] if t % 3 == 0 else f'w{t}'
    con.execute('INSERT INTO vocabulary (tokenizer_id, token_id, piece, bytes) VALUES (?, ?, ?, ?)',
                (tid, t, p, p.encode()))
con.execute('UPDATE runs SET tokenizer_id = ?', (tid,))
con.commit()
PY

for run in 1 2; do
    "$bin" export x.db --run $run --out csv$run --format csv > out.txt || { cat out.txt; die "export csv run $run"; }
    "$bin" export x.db --run $run --out npy$run --format npy > out.txt || { cat out.txt; die "export npy run $run"; }
    "$py" "$src/tests/notebooks/check_export.py" x.db $run csv$run npy$run || fail=1
done
grep -q "^  states_pred.npy  *(240, [0-9]*) <f4" out.txt || { echo "FAIL: the file list: $(cat out.txt)"; fail=1; }

# --what: only the parts named
"$bin" export x.db --run 1 --out part --format npy --what heads,analyses > /dev/null || die "export --what"
[[ -f part/alpha.npy && -f part/analysis_scalars.csv && ! -e part/states_pred.npy && ! -e part/tokens_token_id.npy ]] \
    || { echo "FAIL: --what heads,analyses wrote $(ls part | tr '\n' ' ')"; fail=1; }
# a run without states: a note by default
"$bin" export x.db --run 3 --out gpn --format csv > /dev/null 2> note.txt
if grep -q "note: run 3 has no states" note.txt && grep -q "note: run 3 has no head steps" note.txt; then
    echo "ok: $(tr '\n' ' ' < note.txt)"
else echo "FAIL: no notes for a GPN run without states: $(cat note.txt)"; fail=1; fi

expect_one_line 2 "unknown format 'xlsx'" "$bin" export x.db --out e --format xlsx
expect_one_line 2 "--format csv|npy is required" "$bin" export x.db --out e
expect_one_line 2 "--out DIR is required" "$bin" export x.db --format csv
expect_one_line 2 "unknown part 'bogus'" "$bin" export x.db --out e --format csv --what tokens,bogus
expect_one_line 1 "missing.db does not exist" "$bin" export missing.db --out e --format csv
expect_one_line 1 "there is no run 42" "$bin" export x.db --run 42 --out e --format csv
expect_one_line 1 "run 2 has no analyses" "$bin" export x.db --run 2 --out e --format csv --what analyses
touch afile
expect_one_line 1 "afile exists and is not a folder" "$bin" export x.db --out afile --format npy
"$bin" export --help | grep -q "usage: gpnscope export FILE" || { echo "FAIL: --help"; fail=1; }
exit $fail

#!/usr/bin/env bash
# gpnscope plot end to end: record a small GPN+M run, give its tokenizer a
# hostile vocabulary (quotes, backslashes, newlines, @^_{}, %, emoji, bytes
# that are not UTF-8, a would-be gnuplot command), analyze, plot in png, svg
# and pdf. Every script re-renders with `gnuplot NAME.gp` from the folder
# without a word on stderr, every PNG has the requested size, the data files
# carry the store's numbers (checked against SQL), the report holds the
# figures and the table; then the errors, --help and the no-gnuplot path.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy sqlite3
command -v gnuplot > /dev/null || { echo "SKIPPED: gnuplot is not installed (apt-get install gnuplot-nox)"; exit 77; }
model="$GPNSCOPE_SOURCE/tests/fixtures/reference/gpnm1.weights.safetensors"
[[ -f "$model" ]] || { echo "SKIPPED: no fixture model $model"; exit 77; }
scratch_dir cli_plot shards; cd "$dir"
fail=0
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
ok() { echo "ok: $1"; }

"$py" -c "
import numpy as np; from testdata import write_shards
write_shards('shards', np.random.default_rng(5).integers(3, 97, size=64*96), 97)"
"$bin" record --model "$model" --corpus shards --seq-len 96 --db a.db --states pred --quiet > /dev/null || bad "record"

# a hostile vocabulary for the run, before analyze (so the stored top-10 labels carry it too)
"$py" - <<'EOF' || bad "hostile vocabulary"
import sqlite3
con = sqlite3.connect('a.db')
con.execute("INSERT INTO tokenizers(path, sha256, kind, vocab_size) VALUES ('hostile', ?, 'test', 97)", ('e' * 64,))
tid = con.execute("SELECT id FROM tokenizers WHERE path = 'hostile'").fetchone()[0]
con.execute("UPDATE runs SET tokenizer_id = ?", (tid,))
pieces = ['"quote"', "it's", 'back\\slash', 'new\nline', '@^_{}', 'emoji \U0001F600', '100% %s %d', 'tab\there',
          '\x1b[31mred', "'; system('touch PWNED'); '", '` | * _ <b>x</b>', '\u00e9t\u00e9', 'rtl \u202e over', '',
          '}{@@__^^', '\\n literal', '$HOME `id`', 'x' * 120]
for t in range(97):
    p = pieces[t % len(pieces)]
    if t % len(pieces) == 2 and t > 50:
        con.execute("INSERT INTO vocabulary VALUES (?, ?, ?, ?)", (tid, t, 'bad \\xff byte', b'bad \xff byte'))
    else:
        con.execute("INSERT INTO vocabulary VALUES (?, ?, ?, ?)", (tid, t, p, p.encode()))
con.commit()
EOF
"$bin" analyze a.db > /dev/null || bad "analyze"

# ---- plot: three formats ----
out=$("$bin" plot a.db --out figs --format png,svg,pdf 2> err.txt); rc=$?
[[ $rc == 0 ]] && ok "plot exits 0" || { bad "plot exit $rc: $(cat err.txt)"; }
[[ ! -s err.txt ]] && ok "plot printed nothing on stderr" || bad "stderr: $(cat err.txt)"
echo "$out" | grep -q "rendered 4 figures of run 1 into figs" && ok "says what it rendered" || bad "output: $out"
[[ ! -e figs/PWNED && ! -e PWNED ]] && ok "a token piece ran no command" || bad "PWNED exists"
[[ -z "$(ls -A figs | grep '^\.')" ]] && ok "no temporary files left" || bad "temporary files: $(ls -A figs)"

names="state_geometry horizons default_direction probe_horizon"
for n in $names; do
  for f in gp png svg pdf; do [[ -s figs/$n.$f ]] || bad "figs/$n.$f missing"; done
done

# every script re-renders from its folder, silently, at the requested size
"$py" - "$names" <<'EOF' || bad "re-render"
import os, struct, subprocess, sys
os.chdir('figs')
bad = 0
for n in sys.argv[1].split():
    for fmt in ('png', 'svg', 'pdf'):
        out = f'/tmp/gpnscope-plot-test-{os.getpid()}-{n}.{fmt}'
        args = ['gnuplot', f'{n}.gp'] if fmt == 'png' else ['gnuplot', '-e', f"fmt='{fmt}'", f'{n}.gp']
        if fmt == 'png':
            os.rename(f'{n}.png', f'{n}.png.orig')
        else:
            args = ['gnuplot', '-e', f"fmt='{fmt}'; out='{out}'", f'{n}.gp']
        r = subprocess.run(args, capture_output=True, text=True)
        path = f'{n}.png' if fmt == 'png' else out
        if r.returncode != 0 or r.stderr:
            print(f'FAIL {n}.gp ({fmt}): rc {r.returncode}: {r.stderr.strip()}'); bad += 1; continue
        data = open(path, 'rb').read()
        if fmt == 'png':
            w, h = struct.unpack('>II', data[16:24])
            if data[:8] != b'\x89PNG\r\n\x1a\n' or (w, h) != (1200, 800) or len(data) < 10000:
                print(f'FAIL {n}.png: {w}x{h}, {len(data)} bytes'); bad += 1
            orig = open(f'{n}.png.orig', 'rb').read()
            if orig[16:24] != data[16:24]:
                print(f'FAIL {n}.png from the command and from the script differ in size'); bad += 1
        elif fmt == 'svg':
            if b'width="1200" height="800"' not in data[:600]:
                print(f'FAIL {n}.svg size'); bad += 1
        elif not data.startswith(b'%PDF-') or len(data) < 2000:
            print(f'FAIL {n}.pdf'); bad += 1
        if fmt != 'png':
            os.unlink(out)
    print(f'ok: {n}.gp renders png, svg and pdf from the folder without a warning')
sys.exit(1 if bad else 0)
EOF

# the data files carry the store's numbers
"$py" - <<'EOF' || bad "data vs store"
import sqlite3, struct, math
con = sqlite3.connect('a.db')
def aid(name):
    return con.execute("SELECT max(id) FROM analyses WHERE run_id = 1 AND name = ?", (name,)).fetchone()[0]
def series(name, s):
    return con.execute("SELECT x, y FROM analysis_series WHERE analysis_id = ? AND series = ? ORDER BY idx",
                       (aid(name), s)).fetchall()
def rows(path):
    return [[float(v) for v in l.split()] for l in open(path) if l.strip() and not l.startswith('#')]
def close(a, b):
    return (a is None and math.isnan(b)) or (a is not None and (a == b or abs(a - b) <= 1e-12 * max(1, abs(a))))
bad = 0
def check(what, cond):
    global bad
    if not cond: print('FAIL', what); bad += 1
checks = [('geometry', 'dim_std_sorted', 'figs/state_geometry-std.dat', 1),
          ('geometry', 'cumulative_explained', 'figs/state_geometry-pca.dat', 1),
          ('horizons', 'raw', 'figs/horizons-lag.dat', 1),
          ('horizons', 'centered', 'figs/horizons-lag.dat', 2),
          ('horizons', 'centered_pairs', 'figs/horizons-lag.dat', 4),
          ('retention', 'R_head1', 'figs/horizons-retention.dat', 2),
          ('retention', 'e_fold_time', 'figs/horizons-heads.dat', 1),
          ('default_direction', 'emergence', 'figs/default_direction-emergence.dat', 1),
          ('probe', 'accuracy', 'figs/probe_horizon.dat', 1),
          ('probe', 'baseline', 'figs/probe_horizon.dat', 2)]
for name, s, path, col in checks:
    st, dat = series(name, s), rows(path)
    check(f'{path} has {len(st)} rows of {s}', len(st) == len(dat) and len(st) > 0)
    check(f'{path}: {s} value by value',
          all(close(x, r[0]) and close(y, r[col]) for (x, y), r in zip(st, dat)))
# the heatmap: the stored float32 matrix
blob = con.execute("SELECT vector FROM analysis_vectors WHERE analysis_id = ? AND key = 'corr_sample'",
                   (aid('geometry'),)).fetchone()[0]
m = struct.unpack(f'<{len(blob)//4}f', blob)
dat = rows('figs/state_geometry-corr.dat')
k = len(dat)
check('heatmap is k x k', k * k == len(m) and all(len(r) == k for r in dat))
check('heatmap values', all(struct.unpack('<f', struct.pack('<f', dat[i][j]))[0] == m[i * k + j]
                            for i in range(k) for j in range(k)))
# the top 20 tokens: the largest of logits_bar
blob = con.execute("SELECT vector FROM analysis_vectors WHERE analysis_id = ? AND key = 'logits_bar'",
                   (aid('default_direction'),)).fetchone()[0]
lg = struct.unpack(f'<{len(blob)//4}f', blob)
top = sorted(range(len(lg)), key=lambda i: (-lg[i], i))[:20]
dat = rows('figs/default_direction-tokens.dat')
check('top-20 token ids', [int(r[1]) for r in dat] == top)
check('top-20 logits', all(struct.unpack('<f', struct.pack('<f', r[2]))[0] == lg[t] for r, t in zip(dat, top)))
# scalars marked on the figures
sc = dict(con.execute("SELECT key, value FROM analysis_scalars WHERE analysis_id = ?", (aid('geometry'),)))
marks = rows('figs/state_geometry-pca_marks.dat')
check('90/99% crossings', marks[0][1] == sc['components_90'] and marks[1][1] == sc['components_99'])
print('ok: data files carry the store\'s numbers' if not bad else '')
import sys; sys.exit(1 if bad else 0)
EOF

# hostile text: quoted single-quoted strings, no raw newline, no enhanced markup
grep -q "set termoption noenhanced" figs/default_direction.gp && ok "noenhanced" || bad "noenhanced missing"
grep -q "'\"it''s\"'" figs/default_direction.gp && ok "quote doubled in a label" || bad "it's label"
if grep -q '100%' figs/default_direction.gp; then  # when that token is among the top 20
  grep -q '100%%␣%%s␣%%d' figs/default_direction.gp && ! grep -q '100%␣%s' figs/default_direction.gp && ok "% doubled in tic labels, spaces shown as ␣" || bad "percent label"
fi
grep -q "new↵line" figs/default_direction.gp && ok "newline shown as ↵" || bad "newline label"
grep -q "| quantity | ours | paper |" figs/report.md && ok "summary table" || bad "no summary table"
grep -q "1131 and 2099 of 2496" figs/report.md && ok "paper column" || bad "no paper numbers"
grep -q '!\[horizons\](horizons.png)' figs/report.md && ok "report embeds the figures" || bad "report figures"
[[ -s figs/view.html ]] && grep -q '\[view.html\](view.html)' figs/report.md && grep -q '<a href="view.html">view.html</a>' figs/report.html &&
  ok "the run's interactive page beside the report, linked from it" || bad "no view.html linked from the report"
grep -q '<img src="state_geometry.png"' figs/report.html && ok "report.html" || bad "report.html"
grep -q '<b>x</b>' figs/report.md figs/report.html && bad "token markup reached the report" || ok "token markup escaped"

# ---- another size; default format ----
"$bin" plot a.db --out small --size 900x600 > /dev/null 2> err.txt || bad "--size: $(cat err.txt)"
"$py" -c "
import struct, sys
w, h = struct.unpack('>II', open('small/horizons.png', 'rb').read()[16:24])
sys.exit(0 if (w, h) == (900, 600) else 1)" && ok "--size 900x600" || bad "--size image"
[[ ! -e small/horizons.svg ]] && ok "png only by default" || bad "svg without asking"

# ---- without gnuplot: scripts and data, no images, and it says so ----
out=$(PATH=/nonexistent "$bin" plot a.db --out nognu 2>&1); rc=$?
[[ $rc == 0 && "$out" == *"gnuplot not found"*"did not render"* ]] && ok "no gnuplot: says so" || bad "no gnuplot: $rc $out"
[[ -s nognu/horizons.gp && -s nognu/horizons-lag.dat && ! -e nognu/horizons.png ]] && ok "no gnuplot: scripts only" || bad "no gnuplot files"
grep -q "Not rendered" nognu/report.md && ok "no gnuplot: the report says so" || bad "no gnuplot report"

# ---- errors ----
"$bin" plot --help | grep -q -- "--format" && ok "--help" || bad "--help"
"$bin" plot a.db > /dev/null 2>&1; [[ $? == 2 ]] && ok "no --out: usage, exit 2" || bad "no --out"
"$bin" plot a.db --out x --format gif > /dev/null 2> err.txt; [[ $? == 2 ]] && grep -q "gif" err.txt && ok "bad format: exit 2" || bad "bad format"
"$bin" plot a.db --out x --size 12 > /dev/null 2>&1; [[ $? == 2 ]] && ok "bad size: exit 2" || bad "bad size"
"$bin" plot missing.db --out x > /dev/null 2> err.txt; rc=$?
[[ $rc == 1 && $(wc -l < err.txt) == 1 ]] && grep -q "^gpnscope plot: " err.txt && ok "missing store: one line, exit 1" || bad "missing store: $rc $(cat err.txt)"
"$bin" plot a.db --out x --run 7 > /dev/null 2> err.txt; rc=$?
[[ $rc == 1 && $(wc -l < err.txt) == 1 ]] && ok "missing run: one line, exit 1" || bad "missing run: $rc $(cat err.txt)"
"$bin" record --model "$model" --corpus shards --seq-len 32 --windows 2 --db a.db --states pred --quiet > /dev/null
"$bin" plot a.db --out x --run 2 > /dev/null 2> err.txt; rc=$?
[[ $rc == 1 ]] && grep -q "no analyses" err.txt && ok "a run without analyses: says to analyze" || bad "unanalysed run: $rc $(cat err.txt)"
"$bin" plot a.db --out dflt > /dev/null 2>&1 && grep -q "run 1" dflt/report.md && ok "default: the newest run with analyses" || bad "default run"
printf 'x' > notadir
"$bin" plot a.db --out notadir > /dev/null 2> err.txt; [[ $? == 1 ]] && ok "--out is a file: exit 1" || bad "--out file"
printf '#!/bin/sh\necho "warning: something odd" >&2\n' > warngp; chmod +x warngp
"$bin" plot a.db --out warned --gnuplot ./warngp > warned.txt 2> err.txt; rc=$?
[[ $rc == 1 ]] && grep -q "did not render" err.txt && grep -q "something odd" err.txt && ok "a gnuplot warning fails the plot" || bad "warning: $rc $(cat err.txt)"
grep -q "NOT RENDERED" warned.txt && grep -q "Not rendered:" warned/report.md && ok "... and the output and report say which" || bad "warned report"

echo "$fail failed"
[[ $fail == 0 ]]

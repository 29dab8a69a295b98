#!/usr/bin/env bash
# gpnscope compare (docs/comparison.md). Planted stores whose differences are
# known: one run's states carry a planted mean direction and its heads two
# decay pools (0.5-0.6 and 0.985-0.995), the other's states none and its heads
# one pool: the table's verdicts say so, and its point values equal numpy's
# from the stored rows. Runs on other token windows are refused in one line
# that names them and where they differ, and compared with
# --allow-different-windows; the JSON has its documented shape; every family
# (GPN+M, Elman, Transformer++, GDN) recorded from random-weight models on the
# same windows compares without a refusal, and a layered model gives one row per
# layer (GDN with each layer's decays beside it); --out writes the figures,
# report.md / report.html and a notebook; bad operands are one line.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir compare shards
cd "$dir"
ref="$GPNSCOPE_SOURCE/tests/reference"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

"$py" - <<'PY'
import numpy as np
rng = np.random.default_rng(3)
N, T, d, H = 24, 64, 16, 6
tok = rng.integers(0, 50, (N, T)).astype('<i4')
np.save('tokens.npy', tok)
np.save('tokens_other.npy', np.where(np.arange(T) == 5, (tok + 1) % 50, tok).astype('<i4'))  # position 5 differs
def states(mean):
    # AR(1) content (a ~20-token memory) around a fixed mean direction of length `mean`
    x = np.zeros((N, T, d)); e = rng.standard_normal((N, T, d))
    for t in range(1, T):
        x[:, t] = 0.95 * x[:, t - 1] + e[:, t]
    x[:, :, 0] += mean
    return x.astype('<f4')
np.save('planted.npy', states(30.0))
np.save('plain.npy', states(0.0))
two = np.array([0.5, 0.55, 0.6, 0.985, 0.99, 0.995])   # fast and slow pools
one = np.array([0.90, 0.91, 0.92, 0.93, 0.94, 0.95])  # one pool
jitter = lambda a: np.clip(a * (1 + 0.002 * rng.standard_normal((N, T, H))), 1e-6, 0.9999)
np.save('alpha_two.npy', jitter(np.ones((N, T, H)) * two).astype('<f4'))
np.save('alpha_one.npy', jitter(np.ones((N, T, H)) * one).astype('<f4'))
PY
"$bin" import --db planted.db --states planted.npy --tokens tokens.npy --alpha alpha_two.npy >/dev/null
"$bin" import --db plain.db --states plain.npy --tokens tokens.npy --alpha alpha_one.npy >/dev/null
"$bin" import --db other.db --states plain.npy --tokens tokens_other.npy >/dev/null

if "$bin" compare planted.db plain.db --json --quiet >planted.json 2>err; then ok "compare of the planted stores exits 0"
else bad "compare: $(cat err)"; fi
"$py" - <<'PY' && ok "verdicts: a planted direction present / absent, two pools present / one pool not demonstrated; JSON shape" || bad "planted verdicts or JSON shape"
import json
j = json.load(open('planted.json'))
a, b = j['rows']
assert j['windows']['same'] is True and 'same windows' in j['windows']['note'], j['windows']
assert j['boot'] == 200 and j['seed'] == 1, j
for r in (a, b):
    assert set(r) >= {'label', 'store', 'run', 'site', 'layer', 'arch', 'states', 'windows', 'd', 'default_direction',
                      'content_horizon', 'memory_pools'}, sorted(r)
    assert r['site'] == 'state.pred' and r['layer'] is None and r['states'] == 24 * 64 and r['windows'] == 24, r
    for key in ('raw_first', 'raw_far', 'centered_first', 'centered_256', 'h_002'):
        n = r['content_horizon'][key]
        assert set(n) >= {'value', 'lo', 'hi'} and n['lo'] <= n['hi'], (key, n)
    assert set(r['default_direction']['norm_ratio']) == {'value', 'lo', 'hi'}
    assert 'curves' not in r  # the table only; --out's compare.json has the curves
assert a['default_direction']['verdict'] == 'present', a['default_direction']
assert b['default_direction']['verdict'] == 'absent' and 'straddles' not in b['default_direction']['reason'], b['default_direction']
assert a['default_direction']['norm_ratio']['lo'] > 0.5 > b['default_direction']['norm_ratio']['hi'], (a, b)
pa, pb = a['memory_pools'], b['memory_pools']
assert pa['decay_site'] == 'mem.alpha' and pa['heads'] == 6, pa
assert pa['verdict'] == 'present' and pa['from_start']['fast_heads'] == 3 and pa['all_starts']['slow_heads'] == 3, pa
assert pb['verdict'] == 'not demonstrated', pb
assert set(pa['from_start']['null_p']) == {'normal', 'uniform', 'laplace', 't3', 'init'}, pa
assert 0 <= pa['from_start']['power_paper'] <= 1 and 0 <= pa['from_start']['power_fitted'] <= 1, pa
PY
"$py" - <<'PY' && ok "point values equal numpy's from the planted states (norm ratio, lag cosines at k = 1)" || bad "point values differ from numpy's"
import json
import numpy as np
j = json.load(open('planted.json'))
for r, f in zip(j['rows'], ('planted.npy', 'plain.npy')):
    S = np.load(f).astype(float)
    flat = S.reshape(-1, S.shape[2])
    ratio = np.linalg.norm(flat.mean(0)) / np.linalg.norm(flat, axis=1).mean()
    got = r['default_direction']['norm_ratio']['value']
    assert abs(ratio - got) < 1e-6 * ratio, (f, ratio, got)
    def lag1(X):  # pairs with a zero state (position 0 of the plain run) have no direction: left out
        a, b = X[:, :-1].reshape(-1, X.shape[2]), X[:, 1:].reshape(-1, X.shape[2])
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        keep = (na > 0) & (nb > 0)
        return np.mean((a[keep] * b[keep]).sum(1) / na[keep] / nb[keep])
    h = r['content_horizon']
    assert abs(lag1(S) - h['raw_first']['value']) < 1e-6, (f, lag1(S), h['raw_first'])
    C = S - S.mean(axis=1, keepdims=True)
    assert abs(lag1(C) - h['centered_first']['value']) < 1e-6, (f, lag1(C), h['centered_first'])
    assert h['raw_first']['lag'] == 1 and h['centered_first']['lag'] == 1
PY
"$bin" compare planted.db plain.db --json --quiet --boot 2000 >boot.json
"$py" - <<'PY' && ok "bootstrap intervals as wide as numpy's over resampled windows (within 20%)" || bad "bootstrap widths differ from numpy's"
import json
import numpy as np
rng = np.random.default_rng(5)
for r, f in zip(json.load(open('boot.json'))['rows'], ('planted.npy', 'plain.npy')):
    S = np.load(f).astype(float)
    W = S.shape[0]
    def stats(X):
        flat = X.reshape(-1, X.shape[2])
        C = X - X.mean(axis=1, keepdims=True)
        a, b = C[:, :-1].reshape(-1, X.shape[2]), C[:, 1:].reshape(-1, X.shape[2])
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        k = (na > 0) & (nb > 0)
        return np.linalg.norm(flat.mean(0)) / np.linalg.norm(flat, axis=1).mean(), np.mean((a[k] * b[k]).sum(1) / na[k] / nb[k])
    B = np.array([stats(S[rng.integers(0, W, W)]) for _ in range(4000)])
    for col, n in ((0, r['default_direction']['norm_ratio']), (1, r['content_horizon']['centered_first'])):
        lo, hi = np.percentile(B[:, col], [2.5, 97.5])
        assert abs((n['hi'] - n['lo']) / (hi - lo) - 1) < 0.2, (f, col, n, lo, hi)
        assert abs(n['lo'] - lo) < 0.25 * (hi - lo) and abs(n['hi'] - hi) < 0.25 * (hi - lo), (f, col, n, lo, hi)
PY
"$bin" compare planted.db plain.db --json --quiet --boot 0 >noboot.json
"$py" -c '
import json; j = json.load(open("noboot.json"))
assert all(r["default_direction"]["norm_ratio"]["lo"] is None for r in j["rows"]), j' &&
  ok "--boot 0: numbers without intervals (null lo / hi)" || bad "--boot 0"

# a run of 2 windows, under the 16 the findings' intervals need (issue 38.3): its row says so in the
# table, compare.json (few_windows) and the report, in analyze's words; the 24-window row does not
"$py" -c '
import numpy as np
for f in ("planted", "tokens"): np.save(f + "_two.npy", np.load(f + ".npy")[:2])
np.save("alpha_two2.npy", np.load("alpha_two.npy")[:2])'
"$bin" import --db two.db --states planted_two.npy --tokens tokens_two.npy --alpha alpha_two2.npy >/dev/null
few="2 windows (16 needed)"
if "$bin" compare planted.db two.db --allow-different-windows --quiet --boot 50 --out fewout >few.txt 2>err &&
   "$bin" compare planted.db two.db --allow-different-windows --quiet --boot 50 --json >few.json 2>>err; then
  [[ "$(grep -c "^  few windows: $few\$" few.txt)" == 1 ]] &&
    [[ "$(grep -A1 '^two.db:1:state.pred ' few.txt | tail -1)" == "  few windows: $few" ]] &&
    ok "table: the 2-window row alone says '$few'" || bad "table's few-windows line: $(grep -B1 -A1 'few windows' few.txt)"
  "$py" - "$few" <<'PY' && ok "compare.json: few_windows {windows 2, needed 16} on the 2-window row, null on the 24-window one; the report says it" || bad "few_windows in compare.json or the report"
import json, sys
few = sys.argv[1]
for path in ('few.json', 'fewout/compare.json'):
    a, b = json.load(open(path))['rows']
    assert a['windows'] == 24 and a['few_windows'] is None, a.get('few_windows')
    assert b['windows'] == 2 and b['few_windows'] == {'windows': 2, 'needed': 16, 'note': few}, b.get('few_windows')
md, html = open('fewout/report.md').read(), open('fewout/report.html').read()
rows = [l for l in md.splitlines() if l.startswith('| R')]
assert len(rows) == 2 and few not in rows[0] and ('**%s**' % few) in rows[1], rows
assert html.count('<b>%s</b>' % few) == 1, html
PY
else bad "compare with a 2-window run: $(cat err)"; fi

# incomparable runs: refused in one line that names both and where they differ, then the override
set +e; "$bin" compare planted.db other.db --quiet >/dev/null 2>err; rc=$?; set -e
[[ $rc -eq 1 && $(wc -l <err) -eq 1 ]] && grep -q "planted.db:1 and other.db:1 were recorded on different token windows" err &&
  grep -q "window 0 position 5 holds token" err && grep -q -- "--allow-different-windows" err &&
  ok "different windows refused: $(cat err)" || bad "refusal: exit $rc $(cat err)"
"$bin" compare planted.db other.db --quiet --allow-different-windows --json >allowed.json 2>err &&
  "$py" -c '
import json; j = json.load(open("allowed.json"))
assert j["windows"]["same"] is False and "different token windows" in j["windows"]["note"] and len(j["rows"]) == 2, j["windows"]' &&
  ok "--allow-different-windows compares them and says they differ" || bad "override: $(cat err)"

# every family from random-weight models on the same windows; layered models one row per layer
random_shards shards $((24 * 48)) 9
"$py" "$ref/gpn_reference.py" make gpnm gpn_m 97 24 10 30 6 6 5 1 0 1 4 3
"$py" "$ref/elman_reference.py" make elman 97 16 1 4 3
"$py" "$ref/tpp_reference.py" make tpp 97 24 2 3 40 1 4 4
"$py" "$ref/gdn_reference.py" make gdn 97 24 2 3 8 2 40 4 1 4 5
rec() { "$bin" record --model "$1.weights.safetensors" --corpus shards --seq-len 48 --db "$1.db" --quiet "${@:2}" >/dev/null; }
rec gpnm && rec elman && rec tpp --sites 'blocks.*.hook_resid_post' &&
  rec gdn --sites 'blocks.*.hook_resid_post,blocks.*.attn.alpha' && ok "recorded GPN+M, Elman, Transformer++, GDN" ||
  bad "record the families"
if "$bin" compare gpnm.db elman.db 'tpp.db::blocks.*.hook_resid_post' --sites 'blocks.*.hook_resid_post' gdn.db --json \
     --quiet --boot 50 >families.json 2>err; then ok "compare of four families exits 0"; else bad "families: $(cat err)"; fi
"$py" - <<'PY' && ok "one row per layer (tpp 2, gdn 2 with their own decays), GPN+M's pools from mem.alpha" || bad "family rows"
import json
j = json.load(open('families.json'))
rows = [(r['store'], r['site'], r['layer'], r['memory_pools']['decay_site']) for r in j['rows']]
assert rows == [('gpnm.db', 'state.pred', None, 'mem.alpha'), ('elman.db', 'state.pred', None, None),
                ('tpp.db', 'blocks.0.hook_resid_post', 0, None), ('tpp.db', 'blocks.1.hook_resid_post', 1, None),
                ('gdn.db', 'blocks.0.hook_resid_post', 0, 'blocks.0.attn.alpha'),
                ('gdn.db', 'blocks.1.hook_resid_post', 1, 'blocks.1.attn.alpha')], rows
assert j['windows']['same'] is True, j['windows']
g, e, t = j['rows'][0], j['rows'][1], j['rows'][2]
assert g['memory_pools']['heads'] == 6 and g['memory_pools']['verdict'] in ('present', 'inconclusive', 'not demonstrated'), g['memory_pools']
assert e['memory_pools']['verdict'] == 'not measured' and 'no decay site' in e['memory_pools']['note'], e['memory_pools']
assert j['rows'][4]['memory_pools']['heads'] == 3 and j['rows'][4]['memory_pools']['verdict'] != 'not measured', j['rows'][4]
assert all(r['default_direction']['verdict'] in ('present', 'absent', 'inconclusive') for r in j['rows'])
PY

# the text table names every family in full (the store's models.arch; a row's arch once cut
# "recurrent-transformer" to "recurrent-trans"): the four above, a Recurrent Transformer on the same
# windows, and an MLP-LDRU on windows of its own symbols (--allow-different-windows)
"$py" "$ref/rt_reference.py" make rt 97 24 2 3 40 1 2 1
cat >ldru.json <<'JSON'
{"task": "parity", "model": {"d_model": 8, "d_ffn": 16}, "training": {"steps": 3, "batch": 4, "max_length": 8},
 "eval": {"count": 2, "ood_max": 20, "ood_lengths": 1}, "output": {"dir": "ldru"}}
JSON
mkdir -p bits && "$py" - <<'PY'
from testdata import write_shards
write_shards("bits", [(i * 7 // 3) % 2 for i in range(24 * 48)], 2, tokenizer="bits")
PY
"$bin" train --config ldru.json --quiet >/dev/null && cp ldru/model.safetensors ldru.weights.safetensors
rec rt && "$bin" record --model ldru.weights.safetensors --corpus bits --seq-len 48 --db ldru.db --sites prefix --quiet >/dev/null &&
  ok "recorded a Recurrent Transformer and an MLP-LDRU" || bad "record rt, ldru"
if "$bin" compare gpnm.db elman.db tpp.db gdn.db rt.db ldru.db --allow-different-windows --boot 0 --quiet >names.txt 2>err; then
  all=1
  for db in gpnm elman tpp gdn rt ldru; do
    arch="$(sqlite3 "$db.db" "select arch from models")"
    grep -F "$db.db:1:" names.txt | grep -qF "  ($arch, " || { all=0; bad "$db: no '($arch, ' in: $(grep -F "$db.db:1:" names.txt)"; }
  done
  [[ $all -eq 1 ]] && grep -qF "(recurrent-transformer, " names.txt && grep -qF "(transformer++, " names.txt &&
    ok "the text table names every family in full: $(grep -o '  ([^,]*,' names.txt | tr -d ' (,' | tr '\n' ' ')" || bad "family names"
else bad "compare of six families: $(cat err)"; fi

# --out: compare.json with curves, the figures, the report and the notebook
# a model named like math: report.md escapes its '$' so a viewer with MathJax shows it as text (issue 35.13)
cp gpnm.db dollar.db && sqlite3 dollar.db "update models set path = replace(path, 'gpnm.weights', 'g\$\$x\$\$')"
if "$bin" compare dollar.db --out dout --quiet --boot 0 --no-render >/dev/null 2>err; then
  grep -qF 'g\$\$x\$\$' dout/report.md && ! grep -qF 'g$$x$$' dout/report.md && ok 'report.md: the model g$$x$$ written g\$\$x\$\$' ||
    bad "report.md: '$' not escaped: $(grep -F 'x$' dout/report.md | head -2)"
else bad "compare of dollar.db: $(cat err)"; fi
if "$bin" compare gpnm.db 'gdn.db::blocks.*.hook_resid_post' --out out --quiet --boot 20 >out.txt 2>err; then
  ok "compare --out exits 0"; else bad "--out: $(cat err)"; fi
"$py" - <<'PY' && ok "--out: compare.json with curves, four figure scripts with data, report.md/html with every row, a notebook" || bad "--out files"
import json, os
j = json.load(open('out/compare.json'))
assert len(j['rows']) == 3 and all('curves' in r for r in j['rows'])
c = j['rows'][0]['curves']
assert len(c['lags']) == len(c['raw']) == len(c['centered_pairs']) and len(c['explained']) == j['rows'][0]['d'], sorted(c)
assert len(c['retention']['R']) == 6 and len(c['retention']['R'][0]) == len(c['retention']['lags']), c['retention'].keys()
for f in ('explained', 'horizons', 'default', 'retention'):
    assert os.path.getsize('out/compare_%s.gp' % f) > 0, f
assert os.path.exists('out/compare_retention-R3.dat') and os.path.exists('out/compare_horizons-R1.dat')
md, html = open('out/report.md').read(), open('out/report.html').read()
for r in j['rows']:
    assert r['label'] in md and r['label'] in html, r['label']
assert '| R3 |' in md and '<td>R3</td>' in html
h = j['rows'][0]['content_horizon']['h_002']  # each cell shows its own number
assert ('h_0.02 %s%.3g' % ('>= ' if j['rows'][0]['content_horizon']['h_002_censored'] else '', h['value'])) in md, md
nb = json.load(open('out/compare.ipynb'))
assert nb['nbformat'] == 4 and any('compare.json' in c['source'] for c in nb['cells'])
PY
"$py" - <<'PY' && ok "figures: series named by model and layer, one colour per run, keys under the plots, x axes ending with the data, retention's dash only for the estimator" || bad "figure scripts"
import json, re
j = json.load(open('out/compare.json'))
assert [r['model'] for r in j['rows']] == ['gpnm.weights', 'gdn.weights', 'gdn.weights'], [r['model'] for r in j['rows']]
gp = {f: open('out/compare_%s.gp' % f).read() for f in ('explained', 'horizons', 'default', 'retention')}
for f, t in gp.items():
    assert 'set key at screen' in t and not re.search(r'set key (top|bottom) ', t), f  # the key is outside the data
h = gp['horizons']
assert "title 'R1 gpnm.weights state.pred'" in h and "title 'R2 gdn.weights L0'" in h and "title 'R3 gdn.weights L1'" in h, h
lines = re.findall(r"'compare_horizons-R(\d)\.dat' using 1:2 with lines lw 2 dt (\d+) lc rgb (\w+)", h)
style = {int(r): (int(dt), c) for r, dt, c in lines}
assert style[2][1] == style[3][1] != style[1][1] and style[2][0] != style[3][0], style  # a run's colour, a layer's dash
last = max(max(r['curves']['lags']) for r in j['rows'])
assert re.search(r'set xrange \[1:%g\]' % last, h), (last, re.findall(r'set xrange.*', h))
ret = gp['retention']
H = len(j['rows'][0]['curves']['retention']['R'])
for col, dt in re.findall(r"'compare_retention-R1\.dat' using 1:(\d+) with lines lw 2 dt (\d)", ret):
    assert (int(col) <= 1 + H) == (dt == '1'), (col, dt)  # solid: all starts, dashed: from the start, whatever the row
assert "title 'all starts'" in ret and "title 'from the start'" in ret
PY
if command -v gnuplot >/dev/null; then
  [[ -s out/compare_default.png && -s out/compare_retention.png ]] && grep -q "compare_horizons.png" out/report.md &&
    ok "rendered with gnuplot, images in the report" || bad "rendering: $(cat out.txt)"
fi

# bad operands: one line each
one_line() { # LABEL PATTERN COMMAND...
  local label="$1" pat="$2"; shift 2
  set +e; "$@" >/dev/null 2>err; local rc=$?; set -e
  if [[ $rc -ne 0 && $(wc -l <err) -eq 1 ]] && grep -q -- "$pat" err; then ok "$label: $(cat err)"
  else bad "$label: exit $rc, $(cat err)"; fi
}
one_line "a store that is not there" "gpnscope compare: nothere.db" "$bin" compare nothere.db --quiet
one_line "a site no run recorded" "no recorded vector site matching 'blocks.9.*' (it has: " "$bin" compare 'tpp.db::blocks.9.*' --quiet
one_line "a run that is not there" "gpnscope compare: " "$bin" compare planted.db:7 --quiet
one_line "no operand" "no run given" "$bin" compare
one_line "--boot 1" "--boot wants" "$bin" compare planted.db --boot 1
finish

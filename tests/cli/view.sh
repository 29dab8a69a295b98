#!/usr/bin/env bash
# gpnscope view (docs/view.md): one self-contained page of a store. On a
# recorded, analysed GPN+M fixture run with attention matrices and a patching
# sweep in the same store, the page holds no network reference, and, driven in
# Debian's headless chromium (skipped with the reason where it is absent):
# one element per token of the shown windows, the values shown on hover equal
# the store's (NLL, entropy, the state's norm, a per-head site's value of the
# chosen head), the click shows the exact effective attention a_tj of the
# chosen head's stored matrix and the token's logit attribution by part, the
# verdicts and the patching panel are drawn, and the page logs nothing to the
# console. The page's data: the centered PC1 projection equals numpy's from
# the stored states and geometry vectors, and the lens's top-1 at the state
# site equals the recorded top-1 of every token. A screenshot is kept in the
# test's folder. Bad requests are one line.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
need_sqlite3
gpnm1_scratch view shards; cd "$dir"
q() { sqlite3 "$1" "$2"; }

random_shards shards $((6 * 40)) 3
"$bin" record --model "$model" --corpus shards --seq-len 40 --db s.db --quiet >/dev/null || bad "record"
"$bin" analyze s.db >/dev/null 2>&1 || bad "analyze"
"$bin" attention s.db --windows 2 >/dev/null || bad "attention"
"$bin" attribute s.db --windows 2 >/dev/null || bad "attribute"
"$py" -c "
import json
for i in range(3):
    print(json.dumps({'clean': [5, 6, 7, 8 + i], 'corrupted': [5, 9, 7, 8 + i], 'answer': 11, 'foil': 12}))" >pairs.jsonl
"$bin" patch "$model" pairs.jsonl --components state,head:0 --store s.db >/dev/null 2>&1 || bad "patch into the store"

# steering along the stored centered PC1 (--direction pc1) equals steering along that vector given as a file,
# and differs from top_sv (the uncentered top singular vector); its sweep is drawn as a curve on the page
"$py" - s.db <<'PY' || bad "writing the stored pc1 as a file"
import sqlite3, sys
import numpy as np
v, = sqlite3.connect(sys.argv[1]).execute("select vector from analysis_vectors v join analyses a on a.id = v.analysis_id"
                                          " where a.name = 'geometry' and v.key = 'pc1'").fetchone()
np.save('pc1.npy', np.frombuffer(v, '<f4'))
PY
steer=(steer "$model" --corpus shards --seq-len 40 --windows 2 --c -2,0,2 --json)
"$bin" "${steer[@]}" --direction pc1 --from s.db --store s.db >pc1.json 2>err.txt &&
  "$bin" "${steer[@]}" --direction pc1.npy >file.json 2>>err.txt && "$bin" "${steer[@]}" --direction top_sv --from s.db >sv.json 2>>err.txt &&
  "$py" -c "
import json
a, b, c = (json.load(open(f))['points'] for f in ('pc1.json', 'file.json', 'sv.json'))
assert [p['nll'] for p in a] == [p['nll'] for p in b], (a, b)
assert [p['nll'] for p in a] != [p['nll'] for p in c], (a, c)" && ok "steer --direction pc1 is the stored centered PC1, top_sv another" ||
  bad "steer along pc1: $(cat err.txt)"

# plot draws the store's newest lens among the run's figures, and the report shows it (issue 37 item 3)
"$bin" lens "$model" --tokens 5,6,7,8 --store s.db >/dev/null 2>&1 || bad "lens into the store"
"$bin" plot s.db --out figs --no-render >/dev/null 2>err.txt && [[ -s figs/lens_heatmap.gp && -s figs/lens_heatmap-top1.dat ]] &&
  grep -q "lens_heatmap" figs/report.md && ok "plot draws the newest lens as a heatmap, in the report" || bad "plot's lens: $(cat err.txt)"

"$bin" view s.db --out v --windows 2 >out.txt 2>err.txt && [[ -s v/view.html ]] &&
  ok "view: $(cat out.txt)" || bad "view: $(cat err.txt)"
grep -Eq '(src|href)="(https?:)?//' v/view.html && bad "the page references the network" || ok "no network reference in the page"
"$py" - v/view.html <<'PY' && ok "the data is inline JSON, no '</' inside it" || bad "the data element"
import json, re, sys
page = open(sys.argv[1]).read()
data = re.search(r'<script id="gpnscope-data" type="application/json">(.*?)</script>', page, re.S).group(1)
assert '</' not in data and json.loads(data)['runs'][0]['id'] == 1
PY
"$py" - v/view.html s.db <<'PY' && ok "the page's PC1 projections and lens top-1 equal the store's" || bad "the page's data against the store"
import json, re, sqlite3, sys
import numpy as np
page, db = open(sys.argv[1]).read(), sqlite3.connect(sys.argv[2])
run = json.loads(re.search(r'<script id="gpnscope-data" type="application/json">(.*?)</script>', page, re.S).group(1))['runs'][0]
vec = lambda k: np.frombuffer(db.execute("select vector from analysis_vectors v join analyses a on a.id = v.analysis_id"
                                        " where a.run_id = 1 and a.name = 'geometry' and v.key = ?", (k,)).fetchone()[0], '<f4').astype(float)
mean, pc1 = vec('mean'), vec('pc1')
pc1 /= np.linalg.norm(pc1)
lens, k = run['lens'], run['lens']['k']
assert lens['sites'] == ['state.pred'] and lens['shift'] == 0, lens['sites']
checked = 0
for w, win in enumerate(run['windows']):
    T = len(win['tokens'])
    for t in win['tokens']:
        s, = db.execute("select vector from states where run_id = 1 and window = ? and position = ? and kind = 'pred'",
                        (win['window'], t['pos'])).fetchone()
        want = (np.frombuffer(s, '<f4') - mean) @ pc1
        assert abs(t['pc1'] - want) <= 1e-5 * max(1, abs(want)), (t['pos'], t['pc1'], want)
        top1, = db.execute("select top1 from tokens where run_id = 1 and window = ? and position = ?", (win['window'], t['pos'])).fetchone()
        got = lens['windows'][w]['ids'][t['pos'] * k]
        if got >= 0: assert got == top1, (win['window'], t['pos'], got, top1); checked += 1
assert checked >= len(run['windows']) * (T - 1), checked
print(f"{checked} lens rows")
PY

# bad requests: one line each
for c in "v2|no runs with token rows|empty" "--out v|give a STORE|" "s.db|give --out DIR|" "s.db --out v --windows 0|--windows|" \
         "s.db --out v --run 9|no run 9|" "missing.db --out v|missing.db does not exist|"; do
  IFS='|' read -r args want mk <<<"$c"
  [[ "$mk" == empty ]] && { rm -f e.db; "$py" -c "import sqlite3; sqlite3.connect('e.db').close()"; cp s.db e.db; sqlite3 e.db "delete from tokens"; args="e.db --out v2"; }
  "$bin" view $args >/dev/null 2>err.txt; rc=$?
  [[ $rc -ne 0 && $(wc -l <err.txt) -eq 1 ]] && grep -q -- "$want" err.txt && ok "view $args: $(cat err.txt)" || bad "view $args: exit $rc: $(cat err.txt)"
done

chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "SKIPPED part: no chromium (scripts/setup.sh installs it from scripts/debian-packages.txt): the page was not driven"
  finish; exit $?
fi
w="$(q s.db "select min(window) from tokens where run_id = 1")"; t=17
browse() { # HASH OUT: the DOM after the page ran, its console in OUT.log
  local start=$SECONDS
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --dump-dom "file://$dir/v/view.html#$1" >"$2.html" 2>"$2.log"
  echo "$2: $((SECONDS - start)) s"
}
browse "select=1,$w,$t&colour=site:mem.alpha&head=2&attn=0:1" dom
grep -q 'data-ready="1"' dom.html && ok "the page ran to the end in chromium, drawn in $(grep -o 'data-ms="[0-9]*"' dom.html | tr -dc 0-9) ms" || bad "the page did not finish: $(grep -i console dom.log | head -3)"
grep -q 'CONSOLE' dom.log && bad "the page logged to the console: $(grep CONSOLE dom.log | head -3)" || ok "nothing on the console"
"$py" - dom.html s.db "$w" "$t" <<'PY' && ok "the DOM: one element per token, hover values and a_tj equal the store's" || bad "DOM checks"
import html, math, re, sqlite3, struct, sys
dom, db, w, t = open(sys.argv[1]).read(), sqlite3.connect(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ids = re.findall(r'id="tok-1-(\d+)-(\d+)"', dom)
want = db.execute("select count(*) from tokens where run_id = 1 and window = ?", (w,)).fetchone()[0]
assert len(ids) == want and all(int(a) == w for a, _ in ids), (len(ids), want)
cell = lambda k: float(html.unescape(re.search(r'data-key="%s">([^<]*)<' % re.escape(k), dom).group(1)))
nll, ent = db.execute("select nll, entropy from tokens where run_id = 1 and window = ? and position = ?", (w, t)).fetchone()
assert math.isclose(cell('NLL of this token'), nll, rel_tol=1e-5), (cell('NLL of this token'), nll)
assert math.isclose(cell('entropy of its prediction'), ent, rel_tol=1e-5)
blob, = db.execute("select vector from states where run_id = 1 and window = ? and position = ? and kind = 'pred'", (w, t)).fetchone()
v = struct.unpack('<%df' % (len(blob) // 4), blob)
assert math.isclose(cell('||pred||'), math.sqrt(sum(x * x for x in v)), rel_tol=1e-5)
n, wts = db.execute("select n, weights from attention_matrices where window = ? and layer = 0 and head = 1 and kind = 'exact'",
                    (w,)).fetchone()
a = struct.unpack('<%df' % (n * n), wts)[t * n + t]
key = 'a(%d, %d) exact, layer 0 head 1' % (t, t)
assert math.isclose(cell(key), a, rel_tol=1e-4, abs_tol=1e-9), (cell(key), a)
alpha, = db.execute("select alpha from head_steps where run_id = 1 and window = ? and position = ? and head = 2", (w, t)).fetchone()
assert math.isclose(cell('mem.alpha (per head), head 2'), alpha, rel_tol=1e-5), (cell('mem.alpha (per head), head 2'), alpha)
parts = {(p + (' L%d' % l if l >= 0 else '') + (' h%d' % h if h >= 0 else '')): v for p, l, h, v in db.execute(
    "select part, layer, head, logit from logit_attribution where window = ? and position = ?", (w, t))}
shown = dict(re.findall(r'data-part="([^"]+)">([^<]*)<', dom))
assert len(shown) == min(12, len(parts)) and all(math.isclose(float(v), parts[k], rel_tol=1e-3, abs_tol=1e-6) for k, v in shown.items()), (shown, parts)
assert '<table id="attention-table">' in dom and 'class="badge' in dom and '<table class="heat">' in dom
assert re.search(r'class="lens-top" data-site="state.pred">[^<]+<', dom), "no lens row"
steer = db.execute("select count(*) from steer_results where experiment_id = (select max(id) from causal_experiments where kind = 'steer')").fetchone()[0]
curve = re.search(r'<svg id="steer-curve"[^>]*>.*?<polyline points="([^"]+)"', dom, re.S)
assert steer == 3 and curve and len(curve.group(1).split()) == steer, (steer, curve and curve.group(1))
print(f"{len(ids)} tokens, NLL {nll:.6g}, a_tt {a:.6g}, alpha {alpha:.6g}, {len(shown)} attribution parts")
PY
# coloured by a per-head site: the legend names it and the head, the reddest token is the one whose value is largest
browse "colour=site:mem.alpha&head=2" dom2
"$py" - dom2.html s.db "$w" <<'PY' && ok "coloured by mem.alpha of head 2: the legend and the largest value's token" || bad "colouring by a site"
import re, sqlite3, sys
dom, db, w = open(sys.argv[1]).read(), sqlite3.connect(sys.argv[2]), int(sys.argv[3])
assert re.search(r'class="legend">colour: mem.alpha \(per head\), head 2, ', dom), re.findall(r'class="legend">[^<]*', dom)
pos, = db.execute("select position from head_steps where run_id = 1 and window = ? and head = 2 order by alpha desc limit 1", (w,)).fetchone()
red = re.findall(r'id="tok-1-%d-(\d+)"[^>]*style="background: rgb\(255, 85, 55\)' % w, dom)
assert red == [str(pos)], (red, pos)
PY
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 --virtual-time-budget=5000 \
  --screenshot="$dir/view.png" "file://$dir/v/view.html#select=1,$w,$t" >/dev/null 2>&1
[[ -s view.png ]] && ok "screenshot: $dir/view.png" || bad "no screenshot"
finish

#!/usr/bin/env bash
# gpnscope view (docs/view.md): one self-contained page of a store. On a
# recorded, analysed GPN+M fixture run with attention matrices and a patching
# sweep in the same store, the page holds no network reference, and, driven in
# Debian's headless chromium (skipped with the reason where it is absent):
# one element per token of the shown windows, the values shown on hover equal
# the store's (NLL, entropy, the state's norm), the click shows the exact
# effective attention a_tj of the stored matrix, the verdicts and the patching
# panel are drawn, and the page logs nothing to the console. A screenshot is
# kept in the test's folder. Bad requests are one line.
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
"$py" -c "
import json
for i in range(3):
    print(json.dumps({'clean': [5, 6, 7, 8 + i], 'corrupted': [5, 9, 7, 8 + i], 'answer': 11, 'foil': 12}))" >pairs.jsonl
"$bin" patch "$model" pairs.jsonl --components state,head:0 --store s.db >/dev/null 2>&1 || bad "patch into the store"

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
browse "select=1,$w,$t" dom
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
n, wts = db.execute("select n, weights from attention_matrices where window = ? and head = 0 and kind = 'exact' and layer ="
                    " (select min(layer) from attention_matrices)", (w,)).fetchone()
a = struct.unpack('<%df' % (n * n), wts)[t * n + t]
assert math.isclose(cell('a(%d, %d) exact, head 0' % (t, t)), a, rel_tol=1e-4, abs_tol=1e-9), (cell('a(%d, %d) exact, head 0' % (t, t)), a)
assert '<table id="attention-table">' in dom and 'class="badge' in dom and '<table class="heat">' in dom
print(f"{len(ids)} tokens, NLL {nll:.6g}, a_tt {a:.6g}")
PY
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1400,1000 --virtual-time-budget=5000 \
  --screenshot="$dir/view.png" "file://$dir/v/view.html#select=1,$w,$t" >/dev/null 2>&1
[[ -s view.png ]] && ok "screenshot: $dir/view.png" || bad "no screenshot"
finish

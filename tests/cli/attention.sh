#!/usr/bin/env bash
# gpnscope attention (docs/causal.md): on a recorded GPN+M run (the fixture)
# and a Gated DeltaNet run (the 2-layer fixture) every head's exact weights
# reproduce the engine's read (read_error_max < 1e-5, from the store), the
# store holds one attention_queries row per (window, layer, head, query),
# min(k, t + 1) top keys per query whose |weights| add up to the stored mass,
# the full matrices only up to --full-upto, and rows equal to the matrices';
# the heuristic is measurably off; the per-head means leave out query 0 and
# queries whose weights are all zero, and say how many; re-running replaces; a model without
# delta-rule heads and bad options are one-line errors; the figure renders.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
scratch_dir attention; cd "$dir"
fx="$GPNSCOPE_FIXTURES/reference"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
q() { sqlite3 "$1" "$2"; }

mkdir -p shards s2
random_shards shards $((6 * 40)) 3
"$bin" record --model "$fx/gpnm1.weights.safetensors" --corpus shards --seq-len 40 --batch 4 --db m.db --quiet >/dev/null
"$bin" record --model "$fx/gdn2.weights.safetensors" --corpus shards --seq-len 40 --batch 4 --db g.db --quiet >/dev/null

"$bin" attention m.db --windows 3 --top-k 5 > out.txt && ok "GPN+M: $(sed -n 1p out.txt)" || bad "attention GPN+M: $(cat out.txt)"
"$bin" attention g.db --windows 2 --length 32 --top-k 4 --full-upto 16 > gout.txt && ok "GDN: $(sed -n 1p gout.txt)" ||
  bad "attention GDN: $(cat gout.txt)"

# the exactness check as stored, per head (GPN+M: 3 heads, 1 layer; GDN: 2 heads x 2 layers)
for db in m g; do
  worst="$(q $db.db "select max(value) from analysis_values where analysis = 'attention' and key like '%.read_error_max'")"
  n="$(q $db.db "select count(*) from analysis_values where analysis = 'attention' and key like '%.read_error_max'")"
  want=$([[ $db == m ]] && echo 3 || echo 4)
  "$py" -c "import sys; sys.exit(0 if float('$worst') < 1e-5 else 1)" && [[ $n == "$want" ]] &&
    ok "$db: sum_j a_tj v_j is the engine's read on all $n heads (worst relative error $worst)" || bad "$db: read error $worst over $n heads"
  heur="$(q $db.db "select min(value) from analysis_values where analysis = 'attention' and key like '%.heuristic_read_error'")"
  "$py" -c "import sys; sys.exit(0 if float('$heur') > 1e-3 else 1)" &&
    ok "$db: the heuristic that drops key removal misses the read (smallest mean error over heads $heur)" || bad "$db: heuristic $heur"
done

# the per-head means from the stored queries, without query 0 and all-zero rows; the count left out is stored
for db in m g; do
  "$py" - $db.db <<'PY' && ok "$db: per-head means over the kept queries; query 0 and all-zero weights counted out" ||
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
an = db.execute("select max(analysis_id) from attention_queries").fetchone()[0]
val = dict(db.execute("select key, value from analysis_values where analysis_id = ?", (an,)))
for l, h in db.execute("select distinct layer, head from attention_queries where analysis_id = ?", (an,)):
    rows = db.execute("select query, l1, heuristic_l1, heuristic_error from attention_queries where analysis_id = ? and "
                      "layer = ? and head = ?", (an, l, h)).fetchall()
    kept = [r for r in rows if r[0] > 0 and r[1] != 0]
    p = "L%d.h%d." % (l, h)
    assert val[p + "queries_excluded"] == len(rows) - len(kept) >= 2 and val[p + "queries"] == len(kept), (p, val)
    for i, key in ((2, "heuristic_l1"), (3, "heuristic_read_error")):
        want = sum(r[i] for r in kept) / len(kept)
        assert abs(val[p + key] - want) <= 1e-6 * max(1, abs(want)), (p, key, val[p + key], want)
PY
    bad "$db: per-head means or excluded count"
done
grep -q "excluded" out.txt && ok "the table prints the excluded queries" || bad "no excluded column: $(sed -n 2p out.txt)"
[[ "$(q m.db "select count(*) from attention_queries")" == $((3 * 40 * 3)) ]] &&
  ok "one attention_queries row per window, head and query (3 x 40 x 3)" || bad "attention_queries rows"
[[ "$(q m.db "select count(*) from attention_queries x where (select count(*) from attention_topk k where k.analysis_id = x.analysis_id
      and k.window = x.window and k.layer = x.layer and k.head = x.head and k.query = x.query) <> min(5, x.query + 1)")" == 0 ]] &&
  ok "min(k, t + 1) top keys per query" || bad "top-k counts"
[[ "$(q m.db "select count(*) from attention_queries x where abs((select sum(abs(weight)) from attention_topk k where k.analysis_id = x.analysis_id
      and k.window = x.window and k.layer = x.layer and k.head = x.head and k.query = x.query) / x.l1 - x.topk_mass) > 1e-9 and x.l1 > 0")" == 0 ]] &&
  ok "the top keys' |weights| over l1 are the stored mass" || bad "mass"
[[ "$(q m.db "select count(*) from attention_topk where key > query or key < 0")" == 0 ]] && ok "no key after its query" || bad "causal keys"
[[ "$(q m.db "select count(*), min(n) from attention_matrices")" == "$((3 * 3 * 2))|40" ]] &&
  ok "full 40 x 40 matrices, exact and heuristic, per window and head (length 40 <= --full-upto 128)" || bad "matrices m"
[[ "$(q g.db "select count(*) from attention_matrices")" == 0 && "$(q g.db "select cast(value as int) from analysis_values where key = 'full_matrices'")" == 0 ]] &&
  ok "GDN: no matrices at length 32 > --full-upto 16" || bad "matrices g"
# the top weight of a query is its row's entry in the stored matrix
"$py" - m.db <<'PY' && ok "top-k weights equal the stored matrices' entries" || bad "top-k vs matrices"
import sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
for w, l, h, n, blob in db.execute("select window, layer, head, n, weights from attention_matrices where kind = 'exact'"):
    m = struct.unpack("<%df" % (n * n), blob)
    for t, j, a in db.execute("select query, key, weight from attention_topk where window = ? and layer = ? and head = ?", (w, l, h)):
        assert abs(m[t * n + j] - a) <= 1e-6 * max(1.0, abs(a)), (w, h, t, j, m[t * n + j], a)
        assert all(m[t * n + k] == 0 for k in range(t + 1, n)), "weight above the diagonal"
PY
[[ "$(q m.db "select count(*) from attention_top_text")" == "$(q m.db "select count(*) from attention_topk")" ]] &&
  ok "view attention_top_text: one row per top key" || bad "view"

before="$(q m.db "select count(*) from attention_queries")"
"$bin" attention m.db --windows 3 --top-k 5 >/dev/null && [[ "$(q m.db "select count(*) from attention_queries")" == "$before" &&
  "$(q m.db "select count(*) from analyses where name = 'attention'")" == 1 ]] && ok "the same settings again replace the results" || bad "rerun"
"$bin" attention m.db --windows 1 --heads 0,2 --length 12 --json > j.json &&
  "$py" -c "import json; d = json.load(open('j.json')); assert [h['head'] for h in d['heads']] == [0, 2] and d['length'] == 12" &&
  ok "--heads and --length select, --json" || bad "heads/json: $(cat j.json)"

# errors: one line each
# the GPN fixture (no memory) has 89 tokens: shards of ids below that
"$py" - s2 <<'PY'
import sys
from testdata import write_shards
write_shards(sys.argv[1], [3 + (7 * i) % 80 for i in range(32)], 89)
PY
"$bin" record --model "$fx/gpn.weights.safetensors" --corpus s2 --seq-len 16 --db p.db --quiet >/dev/null
for case in "p.db|no delta-rule memory|1" "m.db --heads 7|--heads 7|1" "m.db --top-k 0|top-k|2" "m.db --length 99|--length 99|1" \
            "m.db --layers 1|--layers 1|1" "m.db --bogus|--bogus|2"; do
  IFS='|' read -r args want code <<<"$case"
  set +e; "$bin" attention $args >/dev/null 2>err.txt; rc=$?; set -e
  [[ $rc == "$code" && $(wc -l <err.txt) == 1 ]] && grep -q -- "$want" err.txt && ok "attention $args: $(cat err.txt)" ||
    bad "attention $args: exit $rc: $(cat err.txt)"
done
"$bin" attention --help | grep -q "O(T^2 d_k)" && ok "--help states the cost" || bad "help"
# the budget (issue 35.3): the plan on stderr before the work; beyond --max-work refused before any, the store unchanged
n_an="$(q m.db "select count(*) from analyses")"
set +e; "$bin" attention m.db --windows 3 --max-work 345599 >/dev/null 2>err.txt; rc=$?; set -e
[[ $rc == 1 && $(wc -l <err.txt) == 1 && "$(cat err.txt)" == *"3 windows x 3 (layer, head) pairs x T^2 (1.5 d_k + d_v) with T 40, d_k 8, d_v 12 = 345600 multiply-adds, more than --max-work 345599: raise --max-work"* &&
   "$(q m.db "select count(*) from analyses")" == "$n_an" ]] && ok "a plan over --max-work: $(cat err.txt)" || bad "--max-work: exit $rc: $(cat err.txt)"
"$bin" attention m.db --windows 1 --heads 0 --length 8 --max-work 1536 >/dev/null 2>err.txt &&
  [[ "$(head -1 err.txt)" == "attention: 1 window x 1 (layer, head) pair x T^2 (1.5 d_k + d_v) with T 8, d_k 8, d_v 12 = 1536 multiply-adds" ]] &&
  ok "the plan printed first: $(head -1 err.txt)" || bad "plan: $(cat err.txt)"
if command -v script >/dev/null; then
  script -qec "'$bin' attention m.db --windows 2" /dev/null | tr '\r' '\n' >tty.txt
  grep -aq '^attention \[#*\] 2/2 windows' tty.txt && ok "progress on a terminal: $(grep -a '^attention \[' tty.txt | tail -1 | sed 's/\x1b\[K//')" ||
    bad "attention's progress on a terminal: $(head -c 300 tty.txt)"
fi

if command -v gnuplot >/dev/null; then
  "$bin" plot m.db --out figs >/dev/null 2>err.txt && [[ -s figs/effective_attention.png ]] &&
    grep -q "matrix with image" figs/effective_attention.gp && ok "plot draws the per-head heatmaps" || bad "plot: $(cat err.txt)"
else
  "$bin" plot m.db --out figs --no-render >/dev/null 2>&1 || true
  [[ -s figs/effective_attention.gp ]] && ok "plot writes the heatmap script (no gnuplot here)" || bad "plot script"
fi

finish

#!/usr/bin/env bash
# Sharded analysis (docs/scale.md): `mpirun -n K gpnscope analyze --shards`
# with K = 1, 2 and 3 (and more ranks than shards) over the shards of a
# 3-rank recording gives the geometry, the default direction (batch cosines,
# emergence), the horizons and retention (curves, 1/e times, pools and the
# bootstrap over windows) and the probe (split by document and by window) that
# `gpnscope analyze` stores for the merged
# store: every scalar, eigenvalue, emergence step and lag cosine to 1e-9
# relative (the same sums in another order: ~1e-14 here), pair
# counts exactly, with all states and with a --max-states prefix that cuts
# inside a shard. Skipped when the build has no MPI.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.bash"
gpnm1_scratch mpi_analyze corpus

random_shards "$dir/corpus" $((101 * 24)) 11
args=(--model "$model" --corpus "$dir/corpus" --seq-len 24 --batch 5 --quiet)
mpi 3 "$bin" record "${args[@]}" --db "$dir/study.db" >/dev/null
shards=("$dir/study.rank-"{0,1,2}"-of-3.db")
"$bin" merge --quiet "$dir/study.db" "${shards[@]}" >/dev/null && ok "recorded with 3 ranks and merged" || bad "record/merge"

# compare SHARDED.json with the merged store's stored geometry and horizons (settings: max_states)
compare() { # SHARDED.json MAX_STATES [STORE]
  "$py" - "$1" "${3:-$dir/study.db}" "$2" <<'PY'
import json, math, sqlite3, sys
got = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
def analysis(name):
    return db.execute("select id from analyses where name = ? and json_extract(settings, '$.max_states') = ?",
                      (name, int(sys.argv[3]))).fetchone()[0]
def series(aid, name):
    return {x: y for (x, y) in db.execute("select x, y from analysis_series where analysis_id = ? and series = ?",
                                          (aid, name))}
worst, n, exact = 0.0, 0, True
def rel(a, b, scale=None):
    global worst, n
    worst = max(worst, abs(a - b) / (scale or max(abs(b), 1e-300))); n += 1
for part, key in (("geometry", "geometry"), ("horizons", "horizons"), ("default_direction", "default")):
    aid, g = analysis(part), got[key]
    stored = dict(db.execute("select key, value from analysis_scalars where analysis_id = ?", (aid,)))
    for k, v in stored.items():
        if k in g: rel(g[k], v)
    # every scalar the sharded run gives must be one the merged store has (none left unchecked)
    exact &= all(k in stored for k, v in g.items() if isinstance(v, (int, float)))
if True:  # retention: every scalar and series it gives (1/e times, curves, bootstrap of the split)
    aid, g = analysis("retention"), got["retention"]
    stored = dict(db.execute("select key, value from analysis_scalars where analysis_id = ?", (aid,)))
    boot = 0
    for k, v in g.items():
        if k == "lags": continue
        if not isinstance(v, list):
            exact &= k in stored
            if k in stored: rel(v, stored[k]); boot += k.startswith("separation_boot")
            continue
        want = [y for (y,) in db.execute("select y from analysis_series where analysis_id = ? and series = ?"
                                         " order by idx", (aid, k))]
        exact &= len(want) == len(v) and len(want) > 0
        for a, b in zip(v, want):
            if a is None or b is None: exact &= (a is None) == (b is None); continue
            rel(a, b)
    exact &= boot == 6  # the bootstrap's interval under both estimators was compared
if True:
    aid, g = analysis("default_direction"), got["default"]
    for name in ("emergence", "batch_cosines"):
        want = [y for (y,) in db.execute("select y from analysis_series where analysis_id = ? and series = ?"
                                         " order by idx", (aid, name))]
        exact &= len(want) == len(g[name]) and len(want) > 0
        for a, b in zip(g[name], want): rel(a, b)
if True:
    aid, g = analysis("geometry"), got["geometry"]
    eig = [y for (y,) in db.execute("select y from analysis_series where analysis_id = ? and series = 'eigenvalues'"
                                   " order by idx", (aid,))]
    exact &= len(g["eigenvalues"]) == len(eig)
    for a, b in zip(g["eigenvalues"], eig): rel(a, b, max(eig))  # small eigenvalues relative to the largest
    aid, h = analysis("horizons"), got["horizons"]
    for name in ("raw", "centered"):
        want = series(aid, name)
        for lag, y in zip(h["lags"], h[name]):
            if y is None or want.get(lag) is None: exact &= (y is None) == (want.get(lag) is None); continue
            rel(y, want[lag])
    for name in ("raw_pairs", "centered_pairs"):
        want = series(aid, name)
        exact &= [want[l] for l in h["lags"]] == h[name]
print("%d values, worst relative difference %.1e, pair counts %s" % (n, worst, "equal" if exact else "DIFFER"))
sys.exit(0 if worst < 1e-9 and exact and n > 40 else 1)
PY
}
for max in 0 500; do
  "$bin" analyze "$dir/study.db" --only geometry,default,horizon,retention --max-states "$max" >/dev/null || bad "analyze the merged store"
  for k in 1 2 3 5; do
    if mpi "$k" "$bin" analyze --shards "${shards[@]}" --only geometry,default,horizon,retention --max-states "$max" \
      >"$dir/k$k.json" 2>"$dir/k$k.err"; then
      r="$(compare "$dir/k$k.json" "$max")" && ok "--max-states $max, -n $k: equals the merged store's geometry, default direction, horizons, retention: $r" \
        || bad "--max-states $max, -n $k: differs: $r"
    else bad "--max-states $max, -n $k: $(cat "$dir/k$k.err")"; fi
  done
done

# more ranks than batches: rank 0's shard is empty; the analysis reads rank 1's alone
mpi 2 "$bin" record "${args[@]}" --windows 4 --batch 16 --db "$dir/tiny.db" >/dev/null
"$bin" merge --quiet "$dir/tiny.db" "$dir/tiny.rank-"{0,1}"-of-2.db" >/dev/null
"$bin" analyze "$dir/tiny.db" --only geometry,default,horizon,retention --max-states 0 >/dev/null
if mpi 2 "$bin" analyze --shards "$dir/tiny.rank-"{0,1}"-of-2.db" --only geometry,default,horizon,retention \
    --max-states 0 >"$dir/tiny.json" 2>"$dir/tiny.err"; then
  r="$(compare "$dir/tiny.json" 0 "$dir/tiny.db")" && ok "an empty shard (more ranks than batches): equal: $r" || bad "empty shard: $r"
else bad "empty shard: $(cat "$dir/tiny.err")"; fi

# the probe: per-lag ridge sums (Gram, X^T Y) and held-out tallies reduced over the ranks, the
# split by document (documents run across shards: the corpus has <s> ... </s> documents of up to
# 80 tokens, windows 24) or by window (the one-document corpus above). Its numbers are counts
# (accuracy, baseline, n_test, pass, horizons) and standard errors from them, so any difference in
# the split or the selection of held-out positions shows; the fit itself differs from the merged
# store's by summation order only (~1e-13 relative in W), too little to move a decode.
compare_probe() { # SHARDED.json MAX_STATES STORE
  "$py" - "$1" "$3" "$2" <<'PY'
import json, sqlite3, sys
got = json.load(open(sys.argv[1]))["probe"]
db = sqlite3.connect(sys.argv[2])
aid = db.execute("select id from analyses where name = 'probe' and json_extract(settings, '$.max_states') = ?",
                 (int(sys.argv[3]),)).fetchone()[0]
stored = dict(db.execute("select key, value from analysis_scalars where analysis_id = ?", (aid,)))
worst, n, exact = 0.0, 0, True
def rel(a, b):
    global worst, n
    worst = max(worst, abs(a - b) / max(abs(b), 1e-300)); n += 1
for k, v in got.items():  # every scalar it gives is one the merged store has
    if isinstance(v, (int, float)): exact &= k in stored; rel(v, stored.get(k, float("nan")))
exact &= len([k for k in stored if k in got]) == len(stored)
series = lambda name: [(x, y) for (x, y) in db.execute("select x, y from analysis_series where analysis_id = ?"
                       " and series = ? order by idx", (aid, name))]
for name in ("accuracy", "baseline", "pass", "n_test", "se", "se_block", "se_binomial", "sd_over_splits"):
    want = series(name)
    exact &= [x for x, _ in want] == got["lags"] and len(want) > 0
    for (_, b), a in zip(want, got[name]):
        if a is None or b is None: exact &= (a is None) == (b is None); continue
        rel(a, b)
exact &= [(x, y) for x, y in series("horizon_by_split")] == list(zip(got["horizon_by_split_seed"], got["horizon_by_split"]))
print("%d values, worst relative difference %.1e, split %s, %s" % (n, worst, "by document" if got["split_by_document"]
      else "by window", "lags and split horizons equal" if exact else "DIFFER"))
sys.exit(0 if worst < 1e-9 and exact and n > 40 else 1)
PY
}
"$py" - "$dir/tok.json" <<'PY'
import json, sys  # the fixture's 97 ids with <unk> <s> </s> as pieces 0 1 2: the probe finds the documents by them
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{"x%d" % i: i for i in range(3, 97)}}
json.dump({"added_tokens": [{"id": i, "content": s, "special": True} for i, s in enumerate(["<unk>", "<s>", "</s>"])],
           "model": {"type": "BPE", "unk_token": "<unk>", "vocab": vocab, "merges": []}}, open(sys.argv[1], "w"))
PY
mkdir -p "$dir/docs"
# 501 windows: ~2300 held-out states at lag 1, more than the 2048 the probe scores, so the
# selection of held-out positions across shards is checked too
random_shards "$dir/docs" $((501 * 24)) 12 97 40
mpi 3 "$bin" record "${args[@]/$dir\/corpus/$dir/docs}" --tokenizer "$dir/tok.json" --db "$dir/docs.db" >/dev/null
dshards=("$dir/docs.rank-"{0,1,2}"-of-3.db")
"$bin" merge --quiet "$dir/docs.db" "${dshards[@]}" >/dev/null
probe=(--only probe --probe-splits 2) # two splits: their combination is checked, at 2/5 of the default's passes
for max in 0 700; do # 700: the job's first 29 windows and 4 states of the 30th, inside rank 0's shard
  "$bin" analyze "$dir/docs.db" "${probe[@]}" --max-states "$max" >/dev/null || bad "analyze --only probe, the merged store"
  ks="1 2 3"; [[ $max -gt 0 ]] && ks="2 3"
  for k in $ks; do
    if mpi "$k" "$bin" analyze --shards "${dshards[@]}" "${probe[@]}" --max-states "$max" >"$dir/p$k.json" 2>"$dir/p$k.err"; then
      r="$(compare_probe "$dir/p$k.json" "$max" "$dir/docs.db")" && ok "probe, --max-states $max, -n $k: equals the merged store's: $r" \
        || bad "probe, --max-states $max, -n $k: differs: $r"
    else bad "probe, --max-states $max, -n $k: $(cat "$dir/p$k.err")"; fi
  done
done
"$bin" analyze "$dir/study.db" "${probe[@]}" --max-states 0 >/dev/null || bad "analyze --only probe, one document"
if mpi 2 "$bin" analyze --shards "${shards[@]}" "${probe[@]}" --max-states 0 >"$dir/pw.json" 2>"$dir/pw.err"; then
  r="$(compare_probe "$dir/pw.json" 0 "$dir/study.db")" && ok "probe split by window (one document), -n 2: equal: $r" || bad "probe by window: $r"
else bad "probe by window: $(cat "$dir/pw.err")"; fi

# refusals, each in one line
msg="$("$bin" analyze --shards "$dir/study.db" 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope analyze: "*"not a shard"* ]] && ok "a merged store is not a shard: $msg" || bad "not a shard: $msg"
msg="$("$bin" analyze --shards "${shards[@]}" --only ablation 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope analyze: --only: unknown analysis 'ablation' (choose from geometry, default, horizon, retention, probe)" ]] \
  && ok "--only names the analyses it reduces: $msg" || bad "--only: $msg"

echo "mpi_analyze: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# Sharded analysis (docs/scale.md): `mpirun -n K gpnscope analyze --shards ... --json`
# with K = 1, 2, 3 and 5 (more ranks than shards) over the shards of a
# 3-rank recording prints the document `gpnscope analyze MERGED.db --json`
# prints (same --only and settings): the same key paths and types, and every
# number (geometry and its spectrum, the default direction's batch cosines,
# emergence, default tokens and top-SV interval (each window's second moment
# summed over the ranks), the horizons' curves, pair counts and bootstrap
# intervals over windows (each rank's per-window sums, ordered by window),
# retention's curves, 1/e times, pools and bootstrap, the probe split by
# document and by window) within 1e-9 relative (the same sums in another
# order: ~1e-14 here), with all states and with a --max-states prefix that
# cuts inside a shard. Progress as on a store: a line per part (the shards'
# reading first) from rank 0 alone. Skipped when the build has no MPI.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
source "$(dirname "${BASH_SOURCE[0]}")/mpi_common.bash"
gpnm1_scratch mpi_analyze corpus

random_shards "$dir/corpus" $((101 * 24)) 11
args=(--model "$model" --corpus "$dir/corpus" --seq-len 24 --batch 5 --quiet)
mpi 3 "$bin" record "${args[@]}" --db "$dir/study.db" >/dev/null
shards=("$dir/study.rank-"{0,1,2}"-of-3.db")
"$bin" merge --quiet "$dir/study.db" "${shards[@]}" >/dev/null && ok "recorded with 3 ranks and merged" || bad "record/merge"

# SHARDED.json against STORE.json (`analyze --json` of the merged store, same --only and settings): one
# document, so the same key paths (every dict key and list index), the same types and every number within
# 1e-9 relative (eigenvalues and the mean vector relative to their largest entry; counts exactly as a
# consequence); strings equal. "findings" is the store's alone (its verdicts are read back from the store).
compare() { # SHARDED.json STORE.json [REQUIRED KEY PATH...]
  "$py" - "$@" <<'PY'
import json, sys
got, want = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
want.pop("findings", None)
paths = {}
def walk(x, path, out, scale=None):
    out[path] = type(x).__name__ if not isinstance(x, (int, float)) or isinstance(x, bool) else "number"
    if isinstance(x, dict):
        for k, v in x.items(): walk(v, path + "." + k, out)
    elif isinstance(x, list):
        big = max([abs(v) for v in x if isinstance(v, (int, float)) and not isinstance(v, bool)] or [0])
        for i, v in enumerate(x): walk(v, "%s[%d]" % (path, i), out, big if path.split(".")[-1] in ("eigenvalues", "mean") else None)
    else: paths[path] = (x, scale)
g, w = {}, {}
walk(want, "", w); want_values = dict(paths); paths.clear(); walk(got, "", g); got_values = paths
worst, n, bad = 0.0, 0, [k for k in sorted(set(g) | set(w)) if g.get(k) != w.get(k)]
for k, (b, scale) in want_values.items():
    if k in bad or k not in got_values: continue
    a = got_values[k][0]
    if isinstance(b, (int, float)) and not isinstance(b, bool):
        worst = max(worst, abs(a - b) / max(scale or 0, abs(a), abs(b), 1e-300)); n += 1
    elif a != b: bad.append(k)
bad += [k for k in sys.argv[3:] if k not in w]
print("%d values, worst relative difference %.1e, %s" % (n, worst, "same keys" if not bad else "DIFFER at " + ", ".join(bad[:40])))
sys.exit(0 if worst < 1e-9 and not bad and n > 40 else 1)
PY
}
# key paths each comparison must hold (so that a part missing from both documents fails)
need=(.geometry.eigenvalues[0] .default_direction.batch_cosines[0] .default_direction.emergence[0]
      .horizons.raw_pairs[0] .horizons.c1_lo .horizons.content_horizon_002_hi .retention.pool_lr_bootstrap[0]
      .retention.from_start.pool_lr_bootstrap[0]
      .retention.R[0][0])
for max in 0 500; do
  "$bin" analyze "$dir/study.db" --only geometry,default,horizon,retention --max-states "$max" --json >"$dir/m$max.json" \
    || bad "analyze the merged store"
  for k in 1 2 3 5; do
    if mpi "$k" "$bin" analyze --shards "${shards[@]}" --only geometry,default,horizon,retention --max-states "$max" \
      --json >"$dir/k$k.json" 2>"$dir/k$k.err"; then
      r="$(compare "$dir/k$k.json" "$dir/m$max.json" "${need[@]}" .default_direction.top_sv_cos_lo)" && ok "--max-states $max, -n $k: the merged store's document (geometry, default direction, horizons, retention): $r" \
        || bad "--max-states $max, -n $k: differs: $r"
    else bad "--max-states $max, -n $k: $(cat "$dir/k$k.err")"; fi
  done
done

# a model trained on 16 positions (config.json beside it) recorded on 24-position windows: analyze
# reads positions 0-15 of every window by default, the store and its shards alike (issue 39.7): states
# 101 x 16, retention's decays as far, the same document; --positions all reads 101 x 24 again
mkdir -p "$dir/t16" && cp "$model" "$dir/t16/model.safetensors" && echo '{"data": {"seq_len": 16}}' >"$dir/t16/config.json"
mpi 3 "$bin" record "${args[@]/$model/$dir/t16/model.safetensors}" --db "$dir/t16.db" >/dev/null
t16=("$dir/t16.rank-"{0,1,2}"-of-3.db")
"$bin" merge --quiet "$dir/t16.db" "${t16[@]}" >/dev/null || bad "record/merge the 16-position model's run"
only=(--only geometry,default,horizon,retention --max-states 0 --json)
"$bin" analyze "$dir/t16.db" "${only[@]}" >"$dir/m16.json" && "$bin" analyze "$dir/t16.db" "${only[@]}" --positions all >"$dir/m16all.json" \
  || bad "analyze the 16-position model's store"
r="$("$py" - "$dir/m16.json" "$dir/m16all.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
got = (a["positions"]["below"], a["positions"]["trained_seq_len"], a["geometry"]["n_states"], b["positions"]["below"], b["geometry"]["n_states"])
print("below %s, trained %s, %s states; --positions all: below %s, %s states; %s" % (got + (a["positions"]["note"],)))
sys.exit(0 if got == (16, 16, 101 * 16, None, 101 * 24) else 1)
PY
)" && ok "a model trained on 16 positions: $r" || bad "positions below the training length: $r"
for k in 1 2; do
  for p in training all; do
    if mpi "$k" "$bin" analyze --shards "${t16[@]}" "${only[@]}" --positions "$p" >"$dir/s16.json" 2>"$dir/s16.err"; then
      want="$dir/m16.json"; [[ $p == all ]] && want="$dir/m16all.json"
      r="$(compare "$dir/s16.json" "$want" "${need[@]}" .positions.note)" && ok "--positions $p, -n $k: the shards give the store's document: $r" \
        || bad "--positions $p, -n $k: differs: $r"
    else bad "--positions $p, -n $k: $(cat "$dir/s16.err")"; fi
  done
done

# more ranks than batches: rank 0's shard is empty; the analysis reads rank 1's alone
mpi 2 "$bin" record "${args[@]}" --windows 4 --batch 16 --db "$dir/tiny.db" >/dev/null
"$bin" merge --quiet "$dir/tiny.db" "$dir/tiny.rank-"{0,1}"-of-2.db" >/dev/null
"$bin" analyze "$dir/tiny.db" --only geometry,default,horizon,retention --max-states 0 --json >"$dir/mtiny.json"
if mpi 2 "$bin" analyze --shards "$dir/tiny.rank-"{0,1}"-of-2.db" --only geometry,default,horizon,retention \
    --max-states 0 --json >"$dir/tiny.json" 2>"$dir/tiny.err"; then
  r="$(compare "$dir/tiny.json" "$dir/mtiny.json" "${need[@]}")" && ok "an empty shard (more ranks than batches): equal: $r" || bad "empty shard: $r"
else bad "empty shard: $(cat "$dir/tiny.err")"; fi

# the probe: per-lag ridge sums (Gram, X^T Y) and held-out tallies reduced over the ranks, the
# split by document (documents run across shards: the corpus has <s> ... </s> documents of up to
# 80 tokens, windows 24) or by window (the one-document corpus above). Its numbers are counts
# (accuracy, baseline, n_test, pass, horizons) and standard errors from them, so any difference in
# the split or the selection of held-out positions shows; the fit itself differs from the merged
# store's by summation order only (~1e-13 relative in W), too little to move a decode.
pneed=(.probe.accuracy[0] .probe.se_block[0] .probe.n_test[0] .probe.horizon_by_split[1] .probe.sd_over_splits[0])
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
  "$bin" analyze "$dir/docs.db" "${probe[@]}" --max-states "$max" --json >"$dir/mp$max.json" || bad "analyze --only probe, the merged store"
  ks="1 2 3"; [[ $max -gt 0 ]] && ks="2 3"
  for k in $ks; do
    if mpi "$k" "$bin" analyze --shards "${dshards[@]}" "${probe[@]}" --max-states "$max" --json >"$dir/p$k.json" 2>"$dir/p$k.err"; then
      r="$(compare "$dir/p$k.json" "$dir/mp$max.json" "${pneed[@]}" .probe.split)" && ok "probe, --max-states $max, -n $k: equals the merged store's: $r" \
        || bad "probe, --max-states $max, -n $k: differs: $r"
    else bad "probe, --max-states $max, -n $k: $(cat "$dir/p$k.err")"; fi
  done
done
# the default direction's batches by document (issue 39.2): rank 0 reads every shard's tokens, so a document
# that runs across two shards is one document, as in the merged store
"$bin" analyze "$dir/docs.db" --only geometry,default --max-states 0 --json >"$dir/md.json" || bad "analyze --only default, documents"
for k in 2 3; do
  if mpi "$k" "$bin" analyze --shards "${dshards[@]}" --only geometry,default --max-states 0 --json >"$dir/d$k.json" 2>"$dir/d$k.err"; then
    r="$(compare "$dir/d$k.json" "$dir/md.json" .default_direction.batch_cos_doc_mean .default_direction.documents)" &&
      ok "batches by document, -n $k: the merged store's: $r ($(grep -o '"batch_grouping_note":"[^"]*"' "$dir/md.json"))" \
      || bad "batches by document, -n $k: differs: $r"
  else bad "batches by document, -n $k: $(cat "$dir/d$k.err")"; fi
done
"$bin" analyze "$dir/study.db" "${probe[@]}" --max-states 0 --json >"$dir/mpw.json" || bad "analyze --only probe, one document"
if mpi 2 "$bin" analyze --shards "${shards[@]}" "${probe[@]}" --max-states 0 --json >"$dir/pw.json" 2>"$dir/pw.err"; then
  r="$(compare "$dir/pw.json" "$dir/mpw.json" "${pneed[@]}")" && ok "probe split by window (one document), -n 2: equal: $r" || bad "probe by window: $r"
else bad "probe by window: $(cat "$dir/pw.err")"; fi

# progress as analyze STORE draws it (cli/progress.c): a plain line per part from rank 0 alone, the
# reading of the shards first; the last line with each part's time; on a terminal redrawn in place; --quiet: none
parts="analyze: 5 parts in .* (shards .* s, geometry .* s, default .* s, horizon .* s, retention .* s)"
grep -q "^$parts$" "$dir/k3.err" && [[ $(wc -l <"$dir/k3.err") == 1 ]] &&
  ok "--shards, -n 3, not a terminal: one last line: $(cat "$dir/k3.err")" || bad "--shards' last line: $(cat "$dir/k3.err")"
GPNSCOPE_PROGRESS_SECONDS=0 mpi 3 "$bin" analyze --shards "${shards[@]}" --only geometry,default,horizon,retention \
  >/dev/null 2>"$dir/prog.err" || true
lines="$(grep -c -E '^analyze: (shards|geometry|default|horizon|retention) \([1-5]/5\) \.\.\. [0-9.]+ s$' "$dir/prog.err")"
[[ "$lines" == 5 && $(wc -l <"$dir/prog.err") == 6 ]] && grep -q "^analyze: shards (1/5) " "$dir/prog.err" && grep -q "^$parts$" "$dir/prog.err" &&
  ok "--shards, GPNSCOPE_PROGRESS_SECONDS=0: a line per part, rank 0's only: $(head -2 "$dir/prog.err" | tr '\n' ';')" ||
  bad "--shards' lines per part ($lines): $(cat "$dir/prog.err")"
if command -v script >/dev/null; then
  script -qec "'$bin' analyze --shards ${shards[*]} --only geometry,horizon" /dev/null | tr '\r' '\n' >"$dir/tty.txt"
  grep -aq "^analyze: geometry (2/3) \.\.\. " "$dir/tty.txt" && grep -aq "^analyze: 3 parts in .* (shards .*, geometry .*, horizon .*)" "$dir/tty.txt" &&
    ok "--shards on a terminal: the part running, redrawn" || bad "--shards on a terminal: $(head -c 300 "$dir/tty.txt")"
fi
mpi 2 "$bin" analyze --shards "${shards[@]}" --only geometry --quiet >/dev/null 2>"$dir/quiet.err" && [[ ! -s "$dir/quiet.err" ]] &&
  ok "--shards --quiet: nothing on stderr" || bad "--shards --quiet: $(cat "$dir/quiet.err")"

# refusals, each in one line
msg="$("$bin" analyze --shards "$dir/study.db" 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope analyze: "*"not a shard"* ]] && ok "a merged store is not a shard: $msg" || bad "not a shard: $msg"
msg="$("$bin" analyze --shards "${shards[@]}" --only ablation 2>&1 >/dev/null || true)"
[[ "$msg" == "gpnscope analyze: unknown analysis 'ablation' (choose from geometry, default, horizon, retention, probe)" ]] \
  && ok "--only as analyze STORE takes it: $msg" || bad "--only: $msg"

echo "mpi_analyze: $pass passed, $fail failed"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# The demo's multi-model path (issue 20) without the shipped baselines: the
# shipped GPN+M and two random-weight baselines the test makes (a 2-layer GDN
# and a 2-layer Transformer++ with the tokenizer's vocabulary), given by
# --model, over 4 windows of 64 tokens. Checked against the store: one run per
# model on the same windows (the same token ids at every position), the
# baselines' per-layer state sites recorded at f16 (and GDN's decays) and
# analyzed; compare's table printed with one row per run and per layer and
# its report written; the main model's controls recorded and read by
# compare; the main model's verdicts whole; a bad --model is one line before
# anything is recorded.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
src="$GPNSCOPE_SOURCE"
model="$src/models/gpnm15-small/model.safetensors"
tok="$src/third_party/llama2-tokenizer.json"
corpus="$src/data/corpus/heldout.jsonl"
need_files "scripts/setup.sh and scripts/demo.sh make it" "$model" "$tok" "$corpus"
dir="$GPNSCOPE_BUILD/test-scratch/demo_compare"; rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
. "$src/tests/cli/lib/verdicts.sh"

# random weights, vocabulary 32000 (the tokenizer's): GDN 2 layers x 3 heads, Transformer++ 2 layers
"$py" "$src/tests/reference/gdn_reference.py" make gdn 32000 16 2 3 4 1 32 4 1 2 5
"$py" "$src/tests/reference/tpp_reference.py" make tpp 32000 16 2 2 32 1 2 4

# the window they were "trained" on, as gpnscope train writes it beside a checkpoint: shorter than the demo's
printf '{"data": {"seq_len": 32}}\n' > config.json
"$bin" demo --out out --windows 4 --seq-len 64 --batch 4 --model "$model" --model gdn.weights.safetensors \
  --model tpp.weights.safetensors >stdout 2>stderr && ok "demo with three models ran" \
  || { bad "demo failed: $(tail -3 stderr)"; finish; exit 1; }
db=out/study.db
q() { sqlite3 "$db" "$1"; }

# one run per model, in the order given, every one complete, on the same windows
[[ "$(q "select group_concat(m.arch, ',') from (select * from runs order by id) r join models m on m.id = r.model_id
         where json_extract(r.settings, '\$.control') is null")" == "gpn+m,gdn,transformer++" &&
   "$(q "select count(*) from runs where status = 'complete' and n_windows = 4 and seq_len = 64")" == 5 ]] &&
  ok "three complete runs (gpn+m, gdn, transformer++) and two controls, each 4 windows x 64" || bad "runs: $(q "select id, status, n_windows, seq_len from runs")"
[[ "$(q "select group_concat(id || ':' || json_extract(settings, '\$.control.kind') || ':' || json_extract(settings, '\$.control.of'), ' ')
         from (select * from runs where json_extract(settings, '\$.control') is not null order by id)")" == "4:untrained:1 5:shuffled:1" ]] &&
  ok "runs 4 and 5: the main model's untrained and shuffled controls" || bad "controls: $(q "select id, settings from runs where id > 3")"
same="$(q "select count(*) from tokens a join tokens b on b.window = a.window and b.position = a.position and b.token_id = a.token_id
           where a.run_id = 1 and b.run_id in (2, 3)")"
[[ "$(q "select count(*) from tokens where run_id = 1")" == 256 && "$same" == 512 ]] &&
  ok "runs 2 and 3 hold run 1's token id at each of its 256 positions" || bad "windows differ: $same of 512 positions agree"

# the baselines: their state site of every layer at f16 (and GDN's decays: H floats a token, kept f32 by
# record), nothing else of theirs but the NLL
sites() { q "select group_concat(site || '/' || ifnull(dtype, '-') || '/' || ifnull(role, '-'), ' ') from
             (select * from run_sites where run_id = $1 order by site)"; }
[[ "$(sites 2)" == "blocks.0.attn.alpha/f32/decay blocks.0.hook_resid_post/f16/state blocks.1.attn.alpha/f32/decay blocks.1.hook_resid_post/f16/state nll/-/-" ]] &&
  ok "GDN run: every layer's resid_post at f16 and attn.alpha (per-head rows stay f32)" || bad "GDN sites: $(sites 2)"
[[ "$(sites 3)" == "blocks.0.hook_resid_post/f16/state blocks.1.hook_resid_post/f16/state nll/-/-" ]] &&
  ok "Transformer++ run: every layer's resid_post at f16" || bad "Transformer++ sites: $(sites 3)"
[[ "$(q "select count(*) from states where run_id = 2 and kind = 'blocks.1.hook_resid_post'")" == 256 ]] &&
  ok "256 states of the GDN's last layer" || bad "GDN states"
for r in 1 2 3; do
  [[ "$(q "select count(distinct name) from analyses where run_id = $r and name in ('geometry', 'default_direction', 'horizons', 'findings')")" == 4 ]] &&
    ok "run $r analyzed (geometry, default direction, horizons, findings)" || bad "run $r not analyzed: $(q "select name from analyses where run_id = $r")"
done
[[ "$(q "select count(*) from analyses where run_id = 2 and name = 'retention' and settings like '%blocks.1.attn.alpha%'")" -ge 1 ]] &&
  ok "GDN retention measured on its last layer's decays" || bad "GDN retention: $(q "select settings from analyses where run_id = 2 and name = 'retention'")"
grep -q "demo: analyze gdn.weights.safetensors done" stderr && ok "each baseline's stage timed on stderr" || bad "stage lines: $(grep demo: stderr)"

# windows longer than a model's training window are named, with the like-for-like command
[[ "$(grep -c "^  note: .* was trained on windows of 32 tokens; these are 64$" stdout)" == 2 ]] &&
  grep -q "^  note: gdn.weights.safetensors was trained on windows of 32" stdout && ! grep -q "note: .*gpnm15-small" stdout &&
  grep -q "gpnscope demo --seq-len 32 --windows 8 compares the same tokens in windows of the training length" stdout &&
  ok "the models trained on shorter windows named, and the command at the training length" ||
  bad "training-window notes: $(grep -A1 "note:" stdout)"
# compare's table: one row per run, one per layer of the layered ones, in order
rows="$(grep -o '^out/study.db:[0-9]*:[^ ]*' stdout | tr '\n' ' ' || true)"  # none: a FAIL line, not an exit
[[ "$rows" == "out/study.db:1:state.pred out/study.db:2:blocks.0.hook_resid_post out/study.db:2:blocks.1.hook_resid_post out/study.db:3:blocks.0.hook_resid_post out/study.db:3:blocks.1.hook_resid_post " ]] &&
  ok "compare table: GPN+M's state, then each layer of GDN and Transformer++" || bad "compare rows: $rows"
grep -q "^windows: 3 runs on the same windows" stdout && ok "compare found the runs on the same windows" || bad "no same-windows line"
[[ "$(grep -c "^  [123]\. \(default-token direction\|content horizon\|memory pools\) " stdout)" -ge 15 ]] &&
  grep -q "^  3\. memory pools .*(blocks.1.attn.alpha)" stdout &&
  ok "each row with its three structures; GDN's pools from its own layer's decays" || bad "compare table lines"
for r in 1 2 3; do
  grep -q "^  run $r  .*: held-out perplexity [0-9.]* over [0-9]* tokens$" stdout && ok "perplexity of run $r printed" || bad "perplexity of run $r"
done
"$py" - <<'PY' && ok "out/compare: compare.json with the 5 rows, report.md naming each, the notebook" || bad "out/compare files"
import json
j = json.load(open('out/compare/compare.json'))
labels = [r['label'] for r in j['rows']]
assert len(labels) == 5 and j['windows']['same'] is True, (labels, j['windows'])
md = open('out/compare/report.md').read()
assert all(l in md for l in labels), labels
assert json.load(open('out/compare/compare.ipynb'))['nbformat'] == 4
PY

# compare reads each model's positions below its training length (issue 39.7): the baselines' config.json
# says 32, so their rows read positions 0-31 (states and decays); GPN+M's 512 covers the 64 recorded.
# The norm ratio against numpy over the stored f16 states of the positions read, both ways.
grep -q "^  positions: positions 0-31 of 64: the model was trained on 32 (--positions all reads every one)$" stdout &&
  grep -q "^  positions: all 64 positions (trained on 512)$" stdout &&
  ok "compare names the positions each row read" || bad "positions lines: $(grep '^  positions:' stdout | sort -u)"
"$bin" compare "$db:1" "$db:2" "$db:3" --sites 'blocks.*.hook_resid_post' --positions all --json --quiet >all.json &&
  ok "compare --positions all ran" || bad "compare --positions all failed"
"$py" - "$db" out/compare/compare.json all.json <<'PY' && ok "positions read: states, decays, norm ratio and perplexity by position agree with the store" || bad "positions read disagree with the store"
import json, sqlite3, sys
import numpy as np
c = sqlite3.connect(sys.argv[1])
def ratio(run, site, below):
    kind = c.execute("select stored_as from run_sites where run_id = ? and site = ?", (run, site)).fetchone()[0]
    X = np.array([np.frombuffer(v, "<f2" if d == "f16" else "<f4") for v, d in c.execute(
        "select vector, dtype from states where run_id = ? and kind = ? and position < ? order by window, position",
        (run, kind, below))], dtype=np.float64)
    return len(X), np.linalg.norm(X.mean(0)) / np.linalg.norm(X, axis=1).mean()
for path, all_pos in ((sys.argv[2], False), (sys.argv[3], True)):
    rows = json.load(open(path))["rows"]
    assert len(rows) == 5, [r["label"] for r in rows]
    for r in rows:
        below = 64 if all_pos or r["run"] == 1 else 32
        assert r["positions"]["below"] == (None if below == 64 else 32), r["positions"]
        n, want = ratio(r["run"], r["site"], below)
        got = r["default_direction"]["norm_ratio"]["value"]
        assert r["states"] == n == 4 * below, (r["label"], r["states"], n)
        assert abs(got - want) <= 1e-6 * abs(want), (r["label"], got, want)
        pp = r["perplexity_by_position"]
        nll = c.execute("select avg(nll) from tokens where run_id = ? and nll is not null", (r["run"],)).fetchone()[0]
        assert pp["from"] == [0] and pp["to"] == [64] and abs(pp["perplexity"][0] - np.exp(nll)) < 1e-6 * np.exp(nll), pp
        if r["run"] > 1:
            lo = c.execute("select avg(nll) from tokens where run_id = ? and position < 32", (r["run"],)).fetchone()[0]
            hi = c.execute("select avg(nll) from tokens where run_id = ? and position >= 32", (r["run"],)).fetchone()[0]
            assert abs(pp["below_training"] - np.exp(lo)) < 1e-6 * np.exp(lo) and abs(pp["from_training"] - np.exp(hi)) < 1e-6 * np.exp(hi), pp
# the main row's controls are the controls' own numbers, as analyze stored them (the same settings)
main = json.load(open(sys.argv[2]))["rows"][0]
stored = lambda run, name, key: c.execute("select value from analysis_values where run_id = ? and analysis = ? and key = ? "
    "and analysis_id = (select max(id) from analyses where run_id = ? and name = ?)", (run, name, key, run, name)).fetchone()[0]
for kind, run in (("untrained", 4), ("shuffled", 5)):
    d, h = main["default_direction"]["controls"][kind], main["content_horizon"]["controls"][kind]
    assert d["run"] == run and h["run"] == run, (d, h)
    for got, want in ((d["norm_ratio"], stored(run, "default_direction", "norm_ratio")), (h["c1"], stored(run, "horizons", "c1")),
                      (h["content_horizon_002"], stored(run, "horizons", "content_horizon_002"))):
        assert abs(got - want) <= 1e-9 * abs(want), (kind, got, want)
assert all("controls" not in r["default_direction"] for r in json.load(open(sys.argv[2]))["rows"][1:])
# the GDN's pools read its decays below 32 too: no retention lag reaches 32
gdn = [r for r in json.load(open(sys.argv[2]))["rows"] if r["run"] == 2 and "curves" in r and "retention" in r["curves"]]
assert gdn and all(max(r["curves"]["retention"]["lags"]) < 32 for r in gdn), [max(r["curves"]["retention"]["lags"]) for r in gdn]
print("ok")
PY
grep -q "^How to read it: a row is one state site of one run" out/compare/report.md &&
  grep -q "\[view.html\](../view.html)" out/compare/report.md && grep -q 'href="../view.html"' out/compare/report.html &&
  [[ -s out/view.html ]] && ok "the comparison's report says how to read it and links the study's interactive page" ||
  bad "report.md: no 'How to read it' or no link to ../view.html"
grep -q "^## Perplexity by position" out/compare/report.md && grep -q "(below 32: [0-9.]*; from 32 on: [0-9.]*)" out/compare/report.md &&
  ok "report.md: each run's perplexity by position, below and from its training length" || bad "report.md has no perplexity by position"

# the main model's output as with one model: verdicts (whole sentences), figures, notebook
for s in "default-token direction" "content horizon" "fast and slow pools"; do
  grep -q "$s: *\(present\|absent\|inconclusive\|not demonstrated\|not measured\)" stdout && ok "main verdict printed: $s" || bad "no verdict for $s"
done
[[ "$(grep -c '^  [123]\. [a-z -]*: ' stdout)" -ge 3 && "$(grep '^  [123]\. [a-z -]*: ' stdout | grep -vc '[.)]$')" == 0 ]] &&
  ok "every verdict sentence is whole" || bad "a verdict sentence is cut"
grep -q "held-out perplexity .* over 256 tokens (mean NLL" stdout && ok "main perplexity line" || bad "main perplexity line"
ls out/figures/*.gp >/dev/null 2>&1 && [[ -s out/study.ipynb ]] && ok "main figures and notebook" || bad "main figures or notebook"
grep -q "not shipped yet" stdout && bad "explicit --model list reported a missing baseline" || ok "an explicit --model list names no missing baseline"

# a bad baseline stops the demo in one line, before anything is recorded
set +e; "$bin" demo --out bad --windows 2 --seq-len 32 --model "$model" --model nothere.safetensors >/dev/null 2>err; rc=$?; set -e
[[ $rc -eq 1 && $(wc -l <err) -eq 1 && ! -e bad/study.db ]] && grep -q "^gpnscope demo: model nothere.safetensors not found" err &&
  ok "missing baseline file: $(cat err)" || bad "missing baseline: exit $rc, $(cat err)"
finish

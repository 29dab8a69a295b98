#!/usr/bin/env bash
# The analysis registry (analyses/registry.c) as analyze shows it: every name
# --only accepts (read from its error message) is listed by --help, runs by
# itself and appears in --json under the name the store keeps it by; --site
# reaches retention (a per-head site reads as --decay-site) as well as the
# state analyses (a vector site); a site the run lacks is a one-line error.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy sqlite3
model="$GPNSCOPE_SOURCE/tests/fixtures/reference/gpnm1.weights.safetensors"
[[ -f "$model" ]] || { echo "SKIPPED: no fixture model $model"; exit 77; }
scratch_dir cli_analysis_registry shards; cd "$dir"
fail=0; pass=0
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
ok() { echo "ok: $1"; pass=$((pass+1)); }

"$py" -c "
import numpy as np; from testdata import write_shards
write_shards('shards', np.random.default_rng(7).integers(3, 97, size=24*64), 97)"
"$bin" record --model "$model" --corpus shards --seq-len 64 --db a.db --quiet > /dev/null || bad "record"

# the names --only takes, as its error lists them
"$bin" analyze a.db --only bogus > /dev/null 2> err.txt
names=$(sed -n "s/.*(choose from \(.*\))$/\1/p" err.txt | tr -d ' ' | tr ',' ' ')
[[ $(wc -l < err.txt) -eq 1 && -n "$names" ]] && ok "--only bogus: one line naming the choices ($names)" || bad "--only bogus: $(cat err.txt)"
"$bin" analyze --help > help.txt
for n in $names; do
  grep -qE "^ {24}$n(\||\s)" help.txt && ok "--help lists '$n'" || bad "--help does not list '$n'"
  "$bin" analyze a.db --only "$n" --probe-splits 1 --json > "only-$n.json" 2> "only-$n.err" || { bad "--only $n: $(cat "only-$n.err")"; continue; }
  "$py" - "only-$n.json" a.db <<'PY' && ok "--only $n: its JSON member is the stored analysis it wrote" || bad "--only $n: $(head -c 300 "only-$n.json")"
import json, sqlite3, sys
j = json.load(open(sys.argv[1]))
members = {k for k in j if k not in ("run", "notes", "findings")}
newest = sqlite3.connect(sys.argv[2]).execute(
    "SELECT name FROM analyses WHERE id = (SELECT max(id) FROM analyses WHERE name != 'findings')").fetchone()[0]
sys.exit(0 if newest in members and len(members) >= 1 else 1)
PY
done

# --site reaches retention: a per-head site is its decay site (mem.beta here, so
# that the answer differs from the run's own decay site, mem.alpha)
"$bin" analyze a.db --only retention --site mem.beta --json > site.json 2> site.err &&
"$bin" analyze a.db --only retention --decay-site mem.beta --json > decay.json 2> decay.err &&
"$bin" analyze a.db --only retention --json > alpha.json 2> alpha.err &&
cmp -s site.json decay.json && grep -q '"retention"' site.json && ! cmp -s site.json alpha.json &&
  ok "--only retention --site mem.beta = --decay-site mem.beta (not the run's mem.alpha)" ||
  bad "--site mem.beta: $(cat site.err decay.err alpha.err) $(head -c 200 site.json)"
# and the state analyses: a vector site is their site
"$bin" analyze a.db --only geometry --site state.pred --json > pred.json 2> pred.err &&
"$bin" analyze a.db --only geometry --json > dflt.json && cmp -s pred.json dflt.json &&
  ok "--only geometry --site state.pred = the default state site" || bad "--site state.pred: $(cat pred.err)"
"$bin" analyze a.db --only geometry --site state.ground > /dev/null 2> ground.err; rc=$?
[[ $rc -eq 1 && $(wc -l < ground.err) -eq 1 ]] && grep -q "no 'ground' states" ground.err &&
  ok "--site of a site the run lacks: one line ($(cut -c1-80 ground.err)...)" || bad "--site state.ground: rc $rc $(cat ground.err)"

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

#!/usr/bin/env bash
# record --sites SITE[heads=LIST] (docs/hooks.md, probes/head_select.h): the
# stored rows of blocks.{i}.attn.hook_pattern[heads=...] (and of GDN's
# per-head state and decays) are exactly, bit for bit, the selected heads'
# slices of the full site's rows recorded in the same run, in ascending head
# order; run_sites names each with its canonical selector and its width;
# commas inside the brackets do not split --sites; bad selectors are one
# line each.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
need_sqlite3
fx="$GPNSCOPE_FIXTURES/reference"
scratch_dir pattern_heads
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

# three windows of 70 tokens (more than the pattern's 64 keys) of ids 3..88 (tpp2 has 89, gdn2 97)
mkdir -p "$dir/shards"
random_shards "$dir/shards" 210 19 89
tpp=(--model "$fx/tpp2.weights.safetensors" --corpus "$dir/shards" --seq-len 70 --batch 2 --quiet)

# same_rows DB FULL SELECTED HEADS PER_HEAD: every stored row of SELECTED equals FULL's slices of HEADS
same_rows() {
  sqlite3 -json "$1" "select kind, window, position, hex(vector) as v from states where kind in ('$2', '$3')" >"$dir/rows.json"
  "$py" - "$dir/rows.json" "$2" "$3" "$4" "$5" <<'PY'
import json, sys
import numpy as np
rows, full, sel, heads, per = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], [int(h) for h in sys.argv[4].split(",")], int(sys.argv[5])
got = {}
for r in rows:
    got[(r["kind"], r["window"], r["position"])] = np.frombuffer(bytes.fromhex(r["v"]), "<u4")  # bits, NaN included
keys = [(w, p) for (k, w, p) in got if k == full]
assert keys and len(got) == 2 * len(keys), (len(keys), len(got))
for w, p in keys:
    want = np.concatenate([got[(full, w, p)][h * per:(h + 1) * per] for h in heads])
    assert np.array_equal(got[(sel, w, p)], want), (w, p)
print(len(keys))
PY
}

"$bin" record "${tpp[@]}" --db "$dir/t.db" \
  --sites 'blocks.0.attn.hook_pattern,blocks.0.attn.hook_pattern[heads=1],blocks.1.attn.hook_pattern,blocks.*.attn.hook_pattern[heads=1,0]' \
  >/dev/null 2>"$dir/err" && ok "record with head selectors (commas inside the brackets)" || bad "record: $(cat "$dir/err")"
n="$(same_rows "$dir/t.db" blocks.0.attn.hook_pattern 'blocks.0.attn.hook_pattern[heads=1]' 1 64)" &&
  ok "blocks.0.attn.hook_pattern[heads=1]: $n rows, each head 1's 64 columns of the full pattern, bit for bit" ||
  bad "heads=1 rows differ from the full pattern's"
n="$(same_rows "$dir/t.db" blocks.1.attn.hook_pattern 'blocks.1.attn.hook_pattern[heads=0,1]' 0,1 64)" &&
  ok "blocks.*.attn.hook_pattern[heads=1,0] in layer 1: $n rows, heads ascending, equal to the full rows" ||
  bad "heads=1,0 rows differ"
sites="$(sqlite3 "$dir/t.db" "select site || ' ' || width || ' ' || stored_as from run_sites where site like '%heads=%' order by site")"
want="blocks.0.attn.hook_pattern[heads=0,1] 128 blocks.0.attn.hook_pattern[heads=0,1]
blocks.0.attn.hook_pattern[heads=1] 64 blocks.0.attn.hook_pattern[heads=1]
blocks.1.attn.hook_pattern[heads=0,1] 128 blocks.1.attn.hook_pattern[heads=0,1]"
[[ "$sites" == "$want" ]] && ok "run_sites: the canonical names and the selected widths" || bad "run_sites: $sites"
# the selected pattern still satisfies what the full one does: NaN before position 0, the current key last
"$py" - "$dir/t.db" <<'PY' && ok "selected rows: NaN exactly before position 0" || bad "selected rows' NaNs"
import sqlite3, sys
import numpy as np
db = sqlite3.connect(sys.argv[1])
for pos, blob in db.execute("select position, vector from states where kind = 'blocks.0.attn.hook_pattern[heads=1]'"):
    v = np.frombuffer(blob, "<f4")
    assert v.size == 64 and np.isnan(v[: max(0, 63 - pos)]).all() and not np.isnan(v[max(0, 63 - pos):]).any(), pos
PY

# GDN: a layer's per-head state (d_k x d_v per head) and decays (one per head)
"$bin" record --model "$fx/gdn2.weights.safetensors" --corpus "$dir/shards" --seq-len 70 --batch 3 --quiet --db "$dir/g.db" \
  --sites 'blocks.1.attn.state,blocks.1.attn.state[heads=1],blocks.0.attn.alpha,blocks.0.attn.alpha[heads=0]' \
  >/dev/null 2>"$dir/err" && ok "GDN record with head selectors" || bad "GDN record: $(cat "$dir/err")"
per="$(sqlite3 "$dir/g.db" "select width / 2 from run_sites where site = 'blocks.1.attn.state'")"
n="$(same_rows "$dir/g.db" blocks.1.attn.state 'blocks.1.attn.state[heads=1]' 1 "$per")" &&
  ok "blocks.1.attn.state[heads=1]: $n rows of $per floats, head 1's S" || bad "GDN state rows differ"
n="$(same_rows "$dir/g.db" blocks.0.attn.alpha 'blocks.0.attn.alpha[heads=0]' 0 1)" &&
  ok "blocks.0.attn.alpha[heads=0]: $n rows, head 0's decay" || bad "GDN alpha rows differ"

one_line() { # WHAT NEEDLE SITES: record fails with exit 2 and one line naming NEEDLE
  set +e; "$bin" record "${tpp[@]}" --db "$dir/bad.db" --sites "$3" >/dev/null 2>"$dir/err"; local rc=$?; set -e
  [[ $rc -eq 2 && $(wc -l <"$dir/err") -eq 1 ]] && grep -qF -- "$2" "$dir/err" &&
    ok "$1: $(cat "$dir/err")" || bad "$1: exit $rc, $(cat "$dir/err")"
}
one_line "head out of range" "head 2 is out of range: the model has 2 heads (0-1)" 'blocks.0.attn.hook_pattern[heads=0,2]'
one_line "head named twice" "head 1 is named twice" 'blocks.0.attn.hook_pattern[heads=0-1,1]'
one_line "a backwards range" "the range 1-0 runs backwards" 'blocks.0.attn.hook_pattern[heads=1-0]'
one_line "not a number" "'x' is not a head number" 'blocks.0.attn.hook_pattern[heads=x]'
one_line "an empty list" "no heads selected" 'blocks.0.attn.hook_pattern[heads=]'
one_line "a trailing comma" "ends with a comma" 'blocks.0.attn.hook_pattern[heads=0,]'
one_line "another selector" "the one selector is [heads=LIST]" 'blocks.0.attn.hook_pattern[layers=0]'
one_line "an unclosed bracket" "a '[' without its ']'" 'blocks.0.attn.hook_pattern[heads=0'
one_line "a selector not at the end" "one [heads=LIST] at the end" 'blocks.0.attn.hook_pattern[heads=0].x'
one_line "a vector site" "needs a per-head site stored per token (blocks.0.hook_resid_post is a vector)" \
  'blocks.0.hook_resid_post[heads=0]'
one_line "an unknown site with a selector" "unknown hook name 'blocks.0.attn.nope'" 'blocks.0.attn.nope[heads=0]'
[[ ! -e "$dir/bad.db" ]] && ok "no store is made by a refused --sites" || bad "a refused --sites left $dir/bad.db"
finish

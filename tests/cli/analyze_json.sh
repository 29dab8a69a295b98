#!/usr/bin/env bash
# analyze --json is the whole answer (issue 38.5): on a small recording of the
# shipped model (its checkpoint keeps the decays' initial values), every
# scalar the store holds is in the JSON under its key, every number of the
# printed tables and verdict lines is a JSON number, and the decays against
# their initialisation are there as numbers (tests/cli/lib/json_walk.py).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
shipped_scratch analyze_json
cd "$dir"
unset GPNSCOPE_TOKENIZER
"$py" -c 'open("my.txt", "w").write(("The river ran low that summer, and the children walked along its bed collecting "
           "stones that had never seen the sun. Their grandmother said it had been lower once.\n\n") * 14)'
"$bin" record --model "$src/models/gpnm15-small" --corpus my.txt --db a.db --seq-len 128 --quiet >/dev/null
"$bin" analyze a.db >a.txt 2>a.err && ok "analyze: text" || bad "analyze: $(cat a.err)"
"$bin" analyze a.db --json >a.json 2>a.err && ok "analyze --json" || bad "analyze --json: $(cat a.err)"
tr -s " \n" " " <a.txt | grep -q "Spearman of initial and trained time constants" && ok "the text has the decays against their initialisation" ||
  bad "no decays sentence in the text (the walk would pass vacuously)"
"$py" "$src/tests/cli/lib/json_walk.py" a.txt a.json a.db >walk.txt && ok "every printed number has a JSON path: $(tail -1 walk.txt)" ||
  bad "$(cat walk.txt)"
# a 1-window recording (no interval at all, never "[nan, nan]"), then the 4-window one: each verdict says it rests on fewer windows than its interval needs (issue 38.3)
"$bin" record --model "$src/models/gpnm15-small" --corpus my.txt --db one.db --seq-len 128 --windows 1 --quiet >/dev/null
"$bin" analyze one.db --only geometry,default,horizon,retention >one.txt 2>&1 || bad "analyze one.db: $(tail -1 one.txt)"
m=$(grep -c -E "^  [123]\. .*no interval: 1 windows \(16 needed\)" one.txt || true)
[[ $m == 3 ]] && ! grep -q nan one.txt && ok "1 window: every verdict says no interval, none prints nan" ||
  bad "1 window: $m of 3 marked: $(grep -E '^  [123]\. |nan' one.txt)"
n=$(grep -c -E "^  [123]\. .*(; 4 windows \(16 needed\)\)|no interval: 4 windows \(16 needed\))" a.txt || true)
[[ $n == 3 ]] && ok "all 3 verdict lines say 4 windows and the 16 the rule needs" || bad "$n of 3 verdicts marked: $(grep -E '^  [123]\. ' a.txt)"
finish

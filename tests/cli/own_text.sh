#!/usr/bin/env bash
# A new user's first hour (issue 38): a few paragraphs of their own prose and
# the README's "Your own text with the shipped model" block, parsed from
# README.md and run verbatim (gpnscope = the binary under test) in a fresh
# folder beside the shipped models: no --tokenizer, no GPNSCOPE_TOKENIZER, a
# model folder for --model. Every command must succeed and leave its output.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
shipped_scratch own_text
cd "$dir"
ln -s "$src/models" models
unset GPNSCOPE_TOKENIZER
"$py" - <<'PY'
paras = ["The river ran low that summer, and the children of the village walked along its bed collecting stones "
         "that had never before seen the sun. Some were smooth and grey, some streaked with red.",
         "Their grandmother said the river had been lower once, in the year the mill burned down. She remembered "
         "the smoke over the fields, the men running with buckets, and the silence afterwards.",
         "In the evenings the family sat outside and talked about the harvest, the price of flour, and the letters "
         "that came from the city, where the eldest son worked in an office with tall windows.",
         "When autumn came the rain returned, the river rose again, and the stones went back under the water. The "
         "children kept the best ones on a shelf in the kitchen for many years."]
open("my.txt", "w").write("\n\n".join(paras * 2) + "\n")
PY
# the block after the README's marker comment, each line a command (no continuation lines in it)
mapfile -t cmds < <(awk '/tests\/cli\/own_text.sh runs this block/ {on=1; next}
                         on && /^```sh$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' "$src/README.md")
[[ ${#cmds[@]} -ge 5 ]] && ok "the README's own-text recipe has ${#cmds[@]} commands" || bad "no recipe block in README.md (${#cmds[@]} lines)"
i=0
for c in "${cmds[@]}"; do
  i=$((i+1))
  [[ "$c" == gpnscope\ * ]] || { bad "recipe line $i does not start with gpnscope: $c"; continue; }
  eval "\"\$bin\" ${c#gpnscope }" >"out.$i" 2>"err.$i" && ok "recipe $i: ${c:0:60}" ||
    bad "recipe $i failed: $c: $(tail -1 "err.$i")"
done
[[ -s my.db && -s my.ipynb && -n "$(ls my-figures/*.png 2>/dev/null)" && -s my-figures/view.html ]] && ok "store, notebook, figures and page written" ||
  bad "outputs missing: $(ls)"
grep -q "perplexity" out.1 && ok "eval printed a perplexity" || bad "eval: $(cat out.1)"
[[ "$(sqlite3 my.db "select count(*) from analyses where name in ('geometry', 'default_direction', 'findings')")" -ge 3 ]] &&
  ok "analyze stored its results" || bad "analyses: $(sqlite3 my.db 'select name from analyses')"
sql_out="out.$(grep -n '^gpnscope sql' <(printf '%s\n' "${cmds[@]}") | head -1 | cut -d: -f1)"
[[ "$(wc -l <"$sql_out")" -ge 3 ]] && ok "the recipe's query returned rows" || bad "sql: $(cat "$sql_out")"
# the errors a new user meets first: one line each, saying what to do
one_line_says() { # WHAT PATTERN COMMAND...
  local what="$1" pat="$2"; shift 2
  if "$@" >/dev/null 2>err.x; then bad "$what: accepted"; return; fi
  [[ "$(wc -l <err.x)" == 1 ]] && grep -q -- "$pat" err.x && ok "$what: $(cut -c1-110 err.x)" || bad "$what: $(cat err.x)"
}
one_line_says "text shorter than a window" "use --seq-len [0-9]* or less" \
  "$bin" record --model models/gpnm15-small --corpus my.txt --db short.db --seq-len 100000
one_line_says "more windows than the text has" "ask for [0-9]* or fewer (--windows all takes every one), or shorter windows (--seq-len [0-9]* gives 50)" \
  "$bin" record --model models/gpnm15-small --corpus my.txt --db many.db --seq-len 128 --windows 50
mkdir -p empty-model
one_line_says "a folder without a model" "is a folder without a model.safetensors: name the model file, or convert" \
  "$bin" info empty-model
GPNSCOPE_TOKENIZER=/nonexistent/tokenizer.json one_line_says "a tokenizer that is not there" "/nonexistent/tokenizer.json" \
  "$bin" record --model models/gpnm15-small --corpus my.txt --db tok.db --seq-len 128
finish

#!/usr/bin/env bash
# gpnscope info lists a model's sites (docs/hooks.md): every site of the
# shipped GPN+M and of the GPN fixture is in docs/hooks.md's table with its
# alias; memory sites appear only where there is memory; the widths follow the
# config; the text table names the same sites.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
doc="$src/docs/hooks.md"
check() { # MODEL WANT_MEMORY
  local json text
  json="$("$bin" info "$1" --json)"
  text="$("$bin" info "$1")"
  local rows
  rows="$("$py" -c '
import json, sys
o = json.load(sys.stdin)
for s in o["sites"]:
    print(s["name"], s.get("alias", "-"), s["kind"].replace(" ", "_"), s["width"])
' <<<"$json")"
  local n=0 mem=0
  while read -r name alias kind width; do
    n=$((n+1))
    [[ "$name" == mem.* || "$name" == *.mem.* || "$name" == *hook_mem_out ]] && mem=$((mem+1))
    grep -qF "| \`$name\` |" "$doc" && ok "$name is in docs/hooks.md" || bad "docs/hooks.md lacks $name"
    [[ "$alias" == - ]] || { grep -qF "| \`$name\` | \`$alias\` |" "$doc" && ok "$name's alias $alias is documented" || bad "docs/hooks.md: $name without alias $alias"; }
    [[ "$text" == *"$name"* ]] && ok "the text table lists $name" || bad "info's table lacks $name"
  done <<<"$rows"
  (( n >= 8 )) && ok "$n sites for $(basename "$1")" || bad "only $n sites for $1"
  if [[ $2 == 1 ]]; then (( mem > 0 )) && ok "memory sites listed" || bad "no memory sites for GPN+M"
  else (( mem == 0 )) && ok "no memory sites for GPN" || bad "GPN lists $mem memory sites"; fi
  "$py" -c '
import json, sys
o = json.load(sys.stdin)
w = {s["name"]: s["width"] for s in o["sites"]}
assert w["state.pred"] == o["d_state"] and w["logits"] == o["vocab_size"] and w["nll"] == 1, w
if o["n_heads"]:
    assert w["mem.alpha"] == o["n_heads"] and w["blocks.{i}.mem.heads"] == o["n_heads"] * o["d_val"], w
' <<<"$json" && ok "widths follow the config" || bad "widths of $1"
}
check "$src/models/gpnm-small/model.safetensors" 1
check "$GPNSCOPE_FIXTURES/reference/gpn.weights.safetensors" 0
finish

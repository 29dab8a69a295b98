#!/usr/bin/env bash
# gpnscope tasks: the list names every task with its DFA size; examples are
# the same for a seed and differ across seeds; --json parses and its labels
# are the rule's (recomputed here in the shell's awk for parity and
# cycle_navigation, from the definitions); bad names, lengths and options
# are refused in one line with exit 2.
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
expect() { # CODE PATTERN CMD...: exit CODE, one line on stderr matching PATTERN
  local code="$1" pattern="$2"; shift 2
  local err; err="$("$@" 2>&1 >/dev/null)"; local rc=$?
  if [[ $rc -eq $code && $(printf '%s\n' "$err" | wc -l) -eq 1 && "$err" == *"$pattern"* ]]; then ok "${*:2}: $err"
  else bad "${*:2}: exit $rc (want $code, '$pattern'): $err"; fi
}
list="$("$bin" tasks --list)"
[[ $(wc -l <<<"$list") -eq 15 ]] && ok "15 tasks listed" || bad "list: $list"
grep -qE '^modular_arithmetic +01234\+-\* +5 labels +51 states' <<<"$list" && ok "modular_arithmetic: 51 states" || bad "modular_arithmetic row"
grep -qE '^tomita3 +01 +2 labels +5 states' <<<"$list" && ok "tomita3: 5 states" || bad "tomita3 row"
a="$("$bin" tasks parity --length 30 --count 50 --seed 4)"; b="$("$bin" tasks parity --length 30 --count 50 --seed 4)"
c="$("$bin" tasks parity --length 30 --count 50 --seed 5)"
[[ "$a" == "$b" ]] && ok "same seed, same examples" || bad "seed 4 twice differs"
[[ "$a" != "$c" ]] && ok "seeds 4 and 5 differ" || bad "seeds 4 and 5 give the same examples"
wrong=$(awk -F'\t' '{ n = gsub(/1/, "1", $1); if (n % 2 != $2) w++ } END { print w + 0 }' <<<"$a")
[[ $wrong -eq 0 && $(wc -l <<<"$a") -eq 50 ]] && ok "parity labels are the number of 1s mod 2" || bad "parity: $wrong wrong"
cyc="$("$bin" tasks cycle_navigation --length 25 --count 40 --seed 1)"
wrong=$(awk -F'\t' '{ p = 0; for (i = 1; i <= length($1); i++) p += substr($1, i, 1) - 1; if ((p % 5 + 5) % 5 != $2) w++ } END { print w + 0 }' <<<"$cyc")
[[ $wrong -eq 0 ]] && ok "cycle_navigation labels are the end position" || bad "cycle_navigation: $wrong wrong"
if [[ -x "$py" ]]; then
  "$bin" tasks d3 --length 20 --count 30 --json | "$py" -c '
import json, sys
d = json.load(sys.stdin)
def d3(s):
    depth = 0
    for ch in s:
        depth += 1 if ch == "a" else -1
        if depth < 0 or depth > 3: return 0
    return int(depth == 0)
ex = d["examples"]
assert d["task"] == "d3" and d["length"] == 20 and len(ex) == 30
assert all(len(e["input"]) == 20 and d3(e["input"]) == e["label"] for e in ex)
assert 0 < sum(e["label"] for e in ex) < 30' && ok "d3 --json parses, labels are D_3 membership, both labels occur" || bad "d3 --json"
  "$bin" tasks --json | "$py" -c 'import json,sys; assert len(json.load(sys.stdin)) == 15' && ok "list --json parses" || bad "list --json"
fi
"$bin" tasks --help | grep -q -- '--seed S' && ok "--help explains --seed" || bad "--help"
expect 2 "unknown task 'tomita9'" "$bin" tasks tomita9
expect 2 "length 0 is outside 1..1000" "$bin" tasks parity --length 0
expect 2 "length 1001 is outside" "$bin" tasks d2 --length 1001
expect 2 "is even" "$bin" tasks modular_arithmetic --length 10
expect 2 "--count wants" "$bin" tasks parity --count 0
expect 2 "unknown option '--bogus'" "$bin" tasks parity --bogus
expect 2 "need a task NAME" "$bin" tasks --length 5
expect 2 "one task name at most" "$bin" tasks parity tomita3
finish

#!/usr/bin/env bash
# The progress lines of record and analyze (cli/progress.c). On a terminal:
# record's bar, done of the total tokens and the time left; analyze's line
# naming the analysis running. Not on a terminal (a log file): plain lines,
# no carriage return or escape code, the last naming the total (record) or
# every analysis with its time (analyze); stdout and --json untouched;
# --quiet: nothing. The terminal comes from script(1) (util-linux); the
# 10 s cadence of the plain lines is not asserted (no timed assertions).
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
command -v script >/dev/null || { echo "SKIPPED: no script(1) to give the command a terminal"; exit 77; }
record_scratch progress $((40 * 24)) 3
cd "$dir"
args="--model $model --corpus shards --seq-len 24 --windows 40 --batch 1"
script -qec "GPNSCOPE_THREADS=1 '$bin' record $args --db t.db" /dev/null | tr '\r' '\n' >tty.txt
# the last line drawn before the end: a bar, tokens done of 960, the time left
bar="$(grep -a '^record \[' tty.txt | tail -1)"
[[ -n "$bar" && "$bar" == *"/960 tok"* ]] && grep -aq "ETA " tty.txt &&
  ok "on a terminal: $(echo "$bar" | sed 's/\x1b\[K//')" || bad "progress on a terminal: $(head -c 300 tty.txt)"

# plain text when stderr is a file: a tiny recording still prints its last line, with the total
plain() { # FILE: every line plain text, no carriage return, no ESC
  [[ -s "$1" ]] && ! grep -q $'\r' "$1" && ! grep -q $'\x1b' "$1"
}
"$bin" record $args --db p.db >out.txt 2>err.txt; rc=$?
last="$(tail -1 err.txt)"
[[ $rc -eq 0 ]] && plain err.txt && [[ "$last" == "record: 40/40 windows, 960 tokens, "*" tok/s, done in "* ]] &&
  ok "not a terminal: plain lines, the last: $last" || bad "record's stderr without a terminal (exit $rc): $(head -c 300 err.txt | cat -A)"
grep -q "^recorded run 1 into p.db: 40 windows x 24 tokens$" out.txt && [[ $(wc -l <out.txt) -eq 1 ]] &&
  ok "stdout: the outcome line only" || bad "record's stdout: $(cat out.txt)"
# GPNSCOPE_PROGRESS_SECONDS=0: a line at every batch, so the lines between show their form (done of the
# total windows, the tokens, the rate, the time left) without waiting 10 s
GPNSCOPE_PROGRESS_SECONDS=0 "$bin" record $args --db e.db >/dev/null 2>err.txt
n=$(grep -c -E '^record: [0-9]+/40 windows, [0-9,]+ tokens, [0-9,]+ tok/s(, about [0-9]+ (s|min) left)?$' err.txt)
[[ $n -ge 39 ]] && plain err.txt && grep -q "^record: 40/40 windows, 960 tokens, .*, done in " err.txt &&
  ok "GPNSCOPE_PROGRESS_SECONDS=0: a plain line per batch ($n), e.g. $(sed -n 2p err.txt)" || bad "a line per batch: $n of 40: $(head -3 err.txt)"
"$bin" record $args --db q.db --quiet >/dev/null 2>err.txt && [[ ! -s err.txt ]] &&
  ok "record --quiet: nothing on stderr" || bad "record --quiet: $(head -c 200 err.txt)"

# analyze: the analysis running on a terminal, a plain last line elsewhere, JSON untouched
only="--only geometry,default,horizon"
script -qec "GPNSCOPE_THREADS=1 '$bin' analyze p.db $only" /dev/null | tr '\r' '\n' >atty.txt
grep -aq "^analyze: geometry (1/3) \.\.\. [0-9.]* s" atty.txt && grep -aq "^analyze: horizon (3/3) \.\.\. " atty.txt &&
  grep -aq "^analyze: 3 parts in .* (geometry .* s, default .* s, horizon .* s)" atty.txt &&
  ok "analyze on a terminal: $(grep -a '^analyze: 3 parts' atty.txt | sed 's/\x1b\[K//')" || bad "analyze on a terminal: $(head -c 400 atty.txt)"
"$bin" analyze p.db $only --json >a.json 2>aerr.txt; rc=$?
last="$(tail -1 aerr.txt)"
[[ $rc -eq 0 ]] && plain aerr.txt && [[ "$last" == "analyze: 3 parts in "*" (geometry "*", default "*", horizon "*")" ]] &&
  ok "analyze not on a terminal: plain lines, the last: $last" || bad "analyze's stderr (exit $rc): $(head -c 300 aerr.txt | cat -A)"
GPNSCOPE_PROGRESS_SECONDS=0 "$bin" analyze p.db $only >/dev/null 2>aerr.txt
grep -q "^analyze: geometry (1/3) \.\.\. " aerr.txt && grep -q "^analyze: default (2/3) \.\.\. " aerr.txt && plain aerr.txt &&
  ok "GPNSCOPE_PROGRESS_SECONDS=0: a plain line per analysis: $(head -1 aerr.txt)" || bad "analyze's line per part: $(cat aerr.txt)"
"$py" -c 'import json, sys; j = json.load(open("a.json")); assert "geometry" in j and "horizons" in j, sorted(j)' &&
  ok "analyze --json: stdout is the JSON alone" || bad "analyze --json's stdout: $(head -c 300 a.json)"
"$bin" analyze p.db $only --quiet >/dev/null 2>aerr.txt && [[ ! -s aerr.txt ]] &&
  ok "analyze --quiet: nothing on stderr" || bad "analyze --quiet: $(head -c 200 aerr.txt)"
finish

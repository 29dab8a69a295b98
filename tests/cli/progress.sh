#!/usr/bin/env bash
# The progress line of record on a terminal (cli/progress.c): a bar, done of
# the total tokens and the time left; nothing on stderr when it is not a
# terminal. The terminal comes from script(1) (util-linux).
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
"$bin" record $args --db p.db >out.txt 2>err.txt && [[ ! -s err.txt ]] &&
  ok "not a terminal: nothing on stderr" || bad "stderr without a terminal: $(head -c 200 err.txt)"
finish

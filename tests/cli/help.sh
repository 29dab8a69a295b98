#!/usr/bin/env bash
# gpnscope --help: every command of the table, and every environment variable
# the program reads (each getenv("GPNSCOPE_...") in the sources), is explained;
# exit 0 on stdout for --help, exit 2 on stderr without a command.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
help="$("$bin" --help)"
vars="$(grep -rhoE 'getenv\("[A-Z_]+"\)' "$src"/{base,engine,probes,store,analyses,plots,notebooks-export,cli} --include='*.c' |
        sed -E 's/getenv\("([A-Z_]+)"\)/\1/' | grep -v '^PATH$' | sort -u)"
[[ -n "$vars" ]] && ok "found the variables the sources read: $(echo $vars)" || bad "no getenv found in $src"
for v in $vars OPENBLAS_NUM_THREADS; do
  [[ "$help" == *"$v"* ]] && ok "--help explains $v" || bad "--help lacks $v"
done
for c in demo info convert record tokenize shard eval train sql migrate ablate patch steer lens import analyze plot export-notebook export merge compare recurrence-depth tasks automaton; do
  [[ "$help" == *"  $c "* ]] && ok "--help lists $c" || bad "--help lacks the command $c"
done
set +e
"$bin" >/dev/null 2>"$GPNSCOPE_BUILD/help.err"; rc=$?
set -e
[[ $rc -eq 2 && -s "$GPNSCOPE_BUILD/help.err" ]] && ok "no command: usage on stderr, exit 2" || bad "no command: exit $rc"
finish

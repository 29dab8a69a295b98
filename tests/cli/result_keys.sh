#!/usr/bin/env bash
# Result keys are declared once (docs/architecture.md, "Adding an analysis"):
# every key that `gpnscope analyze --keys` lists (the analyses' key tables)
# may appear as a string literal in one non-test C source only, its *_keys.h;
# writers and readers use the GS_KEY_* constants. A literal of the same
# spelling that names something else is not counted: JSON members and command
# options (cJSON_*, jobj/jnum/jstr/jarray, CLI_*, getopt, a command row's .progress_unit), comments, and the few uses
# listed in `other_uses` below. The Python notebook and package still spell
# keys (docs/architecture.md says why), so only C sources are checked.
set -uo pipefail
src="$GPNSCOPE_SOURCE"
cd "$src" || { echo "FAIL: no source tree at $src"; exit 1; }
keys=$("$GPNSCOPE_BIN" analyze --keys | cut -f2 | sort -u)
[ -n "$keys" ] || { echo "FAIL: gpnscope analyze --keys listed no keys"; exit 1; }
# FILE:KEY pairs whose literal is another name of the same spelling
other_uses='plots/fig_probe.c:probe_horizon
plots/report.c:documents
plots/report.c:windows
analyses/report.c:pass
plots/fig_logit_attribution.c:mean
analyses/causal/logit_attribution.c:mean
analyses/causal/ablation.c:n_windows
plots/fig_compare.c:raw
plots/fig_compare.c:centered
plots/fig_compare.c:emergence
api/store.c:n_windows
analyses/causal/direction.c:pc1
cli/cmd_automaton.c:d'
# analyses/shards.c and analyses/state/probe_shards.c are being removed: not checked
files=$(find base parallel engine probes record analyses plots notebooks-export view api cli store bench tools \
             -name '*.c' -o -name '*.h' -o -name '*.cu' 2>/dev/null |
        grep -vE '^(analyses/shards\.c|analyses/state/probe_shards\.c)$' | sort)
fail=0
for k in $keys; do
    hits=$(grep -lF "\"$k\"" $files 2>/dev/null | while read -r f; do
        grep -F "\"$k\"" "$f" |
            grep -vE 'cJSON_[A-Za-z]+\(|required_argument|\bj(obj|num|str|array)\(|\bCLI_[A-Z]+\(|\bNUM\(|progress_[a-z]+\(|\.progress_unit *=|^ *(/?\*|//)|/\* .*"'"$k"'".* \*/' |
            grep -q . || continue
        grep -qxF "$f:$k" <<<"$other_uses" || echo "$f"
    done)
    n=$(grep -c . <<<"$hits")
    if [ "$n" -eq 0 ]; then
        echo "FAIL: key '$k' is listed but its literal is in no source: the pattern is broken"
        fail=1
    elif [ "$n" -gt 1 ]; then
        echo "FAIL: result key '$k' is spelled in $n files (use its GS_KEY_* constant):" $hits
        fail=1
    fi
done
[ "$fail" -eq 0 ] || exit 1
echo "ok: $(wc -w <<<"$keys") result keys, each spelled in one source file"

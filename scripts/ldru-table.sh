#!/usr/bin/env bash
# Train MLP-LDRU on every regular-language task (or the ones named) with the
# recipe of configs/ldru-parity.json (or --config's), the task swapped in, and write the
# accuracy table: in distribution (lengths 1..40) and out of distribution
# (24 lengths spread over 41..500, 32 fresh strings each), per task, with
# the training time (docs/ldru.md). Seeds are fixed: a rerun gives the same
# numbers on the same machine and thread count. A task whose DIR/TASK/eval.json
# exists is not trained again (rerun after an interruption to finish the table;
# delete DIR/TASK to retrain it).
#
# usage: scripts/ldru-table.sh [--out DIR] [--config TEMPLATE] [--steps N] [TASK...]
#   DIR defaults to runs/ldru-table; the table goes to DIR/table.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${GPNSCOPE_BIN:-${BUILD_DIR:-$here/build}/gpnscope}"
out="$here/runs/ldru-table"; steps=""; template="$here/configs/ldru-parity.json"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --steps) steps="--steps $2"; shift 2 ;;
    --config) template="$2"; shift 2 ;;
    -h|--help) sed -n 2,12p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ldru-table.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ -x "$bin" ]] || { echo "ldru-table.sh: no gpnscope at $bin (build it, or set GPNSCOPE_BIN)" >&2; exit 1; }
tasks=("$@")
[[ ${#tasks[@]} -gt 0 ]] || mapfile -t tasks < <("$bin" tasks --list | awk '$1 != "" {print $1}')
mkdir -p "$out"
field() { grep -o "\"$2\":[^,}]*" "$1" | head -1 | sed 's/.*:[[:space:]]*//'; }
pct() { [[ "$1" == null ]] && echo "-" || awk -v x="$1" 'BEGIN { printf "%.1f", 100 * x }'; }
table="$out/table.md"
{
  echo "| task | in distribution (1..40) | out of distribution (41..500) | 41..100 | 101..200 | 201..500 | train s |"
  echo "|---|---|---|---|---|---|---|"
} >"$table"
for t in "${tasks[@]}"; do
  cfg="$out/$t.json"
  sed -e "s/\"task\": \"[a-z0-9_]*\"/\"task\": \"$t\"/" -e "s#\"dir\": \"[^\"]*\"#\"dir\": \"$t\"#" \
    "$template" >"$cfg"
  e="$out/$t/eval.json"
  if [[ -s "$e" ]]; then
    echo "ldru-table.sh: $t already trained ($e)" >&2
  else
    echo "ldru-table.sh: $t" >&2
    # shellcheck disable=SC2086
    "$bin" train --config "$cfg" $steps
  fi
  echo "| $t | $(pct "$(field "$e" in_distribution)") | $(pct "$(field "$e" out_of_distribution)") |" \
       "$(pct "$(field "$e" ood_41_100)") | $(pct "$(field "$e" ood_101_200)") | $(pct "$(field "$e" ood_201_max)") |" \
       "$(awk -v x="$(field "$e" train_seconds)" 'BEGIN { printf "%.0f", x }') |" >>"$table"
done
echo "ldru-table.sh: accuracy in percent, $table:" >&2
cat "$table"

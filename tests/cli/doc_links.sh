#!/usr/bin/env bash
# Every path in the tree that README.md, docs/*.md and the text of the generated
# report and notebooks (plots/*.c, notebooks-export/*.c, study.py) cite exists, so a doc
# cannot point at a file that moved or never was (docs/gpn-model.md once) or at
# one outside the project; tests/cli/doc_links.py says what counts as a path,
# and tests/cli/doc_links.allow lists the few cited on purpose outside the tree.
set -uo pipefail
cd "$GPNSCOPE_SOURCE" || { echo "FAIL: no source tree at $GPNSCOPE_SOURCE"; exit 1; }
out="$(python3 tests/cli/doc_links.py .)"; rc=$?
echo "$out"
# the checker itself must see paths, or it checks nothing
n="$(echo "$out" | sed -n 's/^\([0-9]*\) paths checked.*/\1/p')"
[[ $rc -eq 0 && "${n:-0}" -gt 500 ]] && { echo "ok: $n cited paths exist"; exit 0; }
echo "FAIL: missing cited paths (or the checker found too few: ${n:-0})"; exit 1

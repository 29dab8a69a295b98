#!/usr/bin/env bash
# Only engine/arch/ knows the architecture ids (docs/architecture.md, "Adding
# a family"): everything else asks the family table (engine/arch/family.h:
# gs_family_of, gs_family_is, gs_family_has_memory, the training entry's key
# table). A GS_ARCH_* or GS_ARCH_* in any other non-test C, CUDA or .inc
# source fails this test with its file and line. Tests may name the ids.
set -uo pipefail
src="$GPNSCOPE_SOURCE"
cd "$src" || { echo "FAIL: no source tree at $src"; exit 1; }
pattern='\b(GPN|GS)_ARCH_[A-Z0-9_]+'
# build trees (anything with a CMakeCache.txt) hold no sources of ours
skip=(--exclude-dir=.git --exclude-dir=tests --exclude-dir=third_party)
for cache in */CMakeCache.txt; do [ -e "$cache" ] && skip+=(--exclude-dir="$(dirname "$cache")"); done
hits=$(grep -rnE "$pattern" --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.inc' \
           "${skip[@]}" . 2>/dev/null | sed 's|^\./||' | grep -v '^engine/arch/')
if [ -n "$hits" ]; then
    echo "FAIL: architecture ids outside engine/arch/ (ask the family row instead: engine/arch/family.h):"
    echo "$hits"
    exit 1
fi
n=$(grep -rlE "$pattern" --include='*.c' --include='*.h' engine/arch | wc -l)
[ "$n" -gt 0 ] || { echo "FAIL: found no architecture ids in engine/arch/ either: the pattern is broken"; exit 1; }
echo "ok: architecture ids only in engine/arch/ ($n files) and the tests"

#!/usr/bin/env bash
# The numbers docs/ quotes about the shipped models (issue 39.9) against a
# fresh demo: the default demo (16 x 1024) and the demo at the training
# length (32 x 512), then scripts/doc_numbers.py --check over docs/*.md.
# A planted drift (one quoted number changed, one verdict word changed, one
# generated table row edited) must be caught and named, so the check can fail.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
[[ "${GPNSCOPE_SANITIZED:-0}" == 1 ]] && { echo "SKIPPED: two full demos are the plain build's job (minutes under ASan)"; exit 77; }
src="$GPNSCOPE_SOURCE"
need_python
need_files "scripts/setup.sh and scripts/demo.sh make them" \
  "$src/third_party/llama2-tokenizer.json" "$src/data/corpus/heldout.jsonl" \
  "$src/models/gpnm15-small/model.safetensors" "$src/models/tpp-small/model.safetensors" \
  "$src/models/gdn-small/model.safetensors" "$src/models/rt-small/model.safetensors"
dir="$GPNSCOPE_BUILD/test-scratch/doc_numbers"; rm -rf "$dir"; mkdir -p "$dir"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
tool="$src/scripts/doc_numbers.py"

"$bin" demo --out "$dir/d1024" >"$dir/d1024.log" 2>&1 && ok "demo (16 x 1024) ran" \
  || { bad "demo failed: $(tail -3 "$dir/d1024.log")"; finish; exit 1; }
"$bin" demo --out "$dir/d512" --seq-len 512 --windows 32 >"$dir/d512.log" 2>&1 && ok "demo (32 x 512) ran" \
  || { bad "demo at 512 failed: $(tail -3 "$dir/d512.log")"; finish; exit 1; }
demos=(--demo "$dir/d1024" --demo "s512=$dir/d512")

if out="$("$py" "$tool" --check "${demos[@]}" 2>&1)"; then
  ok "every marked number in docs/ matches the demo ($(echo "$out" | tail -1))"
else
  bad "docs drifted from the demo (rerun with --write, docs/analyses.md 'Numbers in these docs'): $(echo "$out" | head -8)"
fi
n="$(grep -o '<!--[=~]' "$src"/docs/*.md | wc -l)"
[[ "$n" -ge 100 ]] && ok "$n numbers and verdicts are marked" || bad "only $n markers in docs/ (expected >= 100)"

# plants: each must make --check exit 1 and name the drifted value
cp "$src/docs/analyses.md" "$dir/planted.md"
sed -i -E '0,/[0-9]\.[0-9]+<!--=gpnm15-small\.default_direction\.batch_cos_mean-->/s//0.123<!--=gpnm15-small.default_direction.batch_cos_mean-->/' "$dir/planted.md"
if "$py" "$tool" --check "${demos[@]}" "$dir/planted.md" >"$dir/planted.out" 2>&1; then
  bad "a planted 0.123 for the batch cosine passed the check"
else
  grep -q "batch_cos_mean" "$dir/planted.out" && ok "a planted number is caught and named" \
    || bad "planted number: exit 1 but not named: $(head -3 "$dir/planted.out")"
fi
cp "$src/docs/analyses.md" "$dir/word.md"
sed -i -E '0,/\*\*(present|absent|inconclusive|not shown|marginal)\*\*<!--~gpnm15-small\.findings\.content_horizon-->/s//**marginal**<!--~gpnm15-small.findings.content_horizon-->/' "$dir/word.md"
want="$(grep -o '\*\*[a-z ]*\*\*<!--~gpnm15-small.findings.content_horizon-->' "$src/docs/analyses.md" | head -1)"
if [[ "$want" == "**marginal**"* ]]; then
  ok "verdict plant skipped: the content horizon is marginal"
elif "$py" "$tool" --check "${demos[@]}" "$dir/word.md" >"$dir/word.out" 2>&1; then
  bad "a planted verdict word passed the check"
else
  grep -q "findings.content_horizon" "$dir/word.out" && ok "a planted verdict word is caught and named" \
    || bad "planted word: not named: $(head -3 "$dir/word.out")"
fi
cp "$src/docs/comparison.md" "$dir/table.md"
# change the first digit after the first generated table's first row's first '|'-cell number
"$py" - "$dir/table.md" <<'EOF'
import re, sys
p = sys.argv[1]; s = open(p).read()
i = s.index("<!--gen:compare-table")
m = re.compile(r"\| (\d)\.(\d+)").search(s, i)
assert m, "no number in the generated table"
d = str((int(m.group(1)) + 1) % 10)
s = s[:m.start(1)] + d + s[m.end(1):]
open(p, "w").write(s)
EOF
if "$py" "$tool" --check "${demos[@]}" "$dir/table.md" >"$dir/table.out" 2>&1; then
  bad "an edited generated table passed the check"
else
  grep -qi "table\|gen" "$dir/table.out" && ok "an edited generated table is caught" \
    || bad "edited table: not named: $(head -3 "$dir/table.out")"
fi
finish

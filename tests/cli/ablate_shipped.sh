#!/usr/bin/env bash
# A trained model depends on its memory: on English text, zeroing every memory
# head of the shipped GPN+M raises perplexity, with a 95% bootstrap interval
# above zero (the random-weight fixtures cannot show this; tests/cli/ablate.sh
# covers the mechanics).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$GPNSCOPE_SOURCE"
model="$src/models/gpnm-small/model.safetensors"
tok="$src/third_party/llama2-tokenizer.json"
need_files "scripts/setup.sh fetches the tokenizer" "$model" "$tok"
scratch_dir ablate_shipped text
# English written here (not from any package): plain sentences with repeats
for i in $(seq 1 6); do
  {
    echo "The committee met on Tuesday to discuss the budget for the new library. Several members argued that the"
    echo "library should open earlier in the morning, while others wanted longer hours in the evening. After a long"
    echo "debate, the committee agreed to keep the current hours and to review the decision next spring. The budget"
    echo "for books was raised by ten percent, and the budget for the building was left as it was. Number $i."
  } >"$dir/text/doc$i.txt"
done
"$bin" record --model "$model" --tokenizer "$tok" --corpus "$dir/text" --db "$dir/s.db" --seq-len 96 --batch 4 \
  --states none --quiet >/dev/null
H="$("$bin" info "$model" --json | "$py" -c 'import json,sys; print(json.load(sys.stdin)["n_heads"])')"
heads="$(seq -s, 0 $((H - 1)))"
j="$("$bin" ablate "$dir/s.db" --what "heads:$heads" --json)"
echo "$j"
"$py" -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d['delta_ppl'] > 0 and d['delta_ppl_ci_low'] > 0 else 1)" "$j" \
  && { echo "ok: zeroing all $H heads raises perplexity, CI above zero"; echo "1 passed, 0 failed"; } \
  || { echo "FAIL: zeroing all heads: $j"; echo "0 passed, 1 failed"; exit 1; }

#!/usr/bin/env bash
# gpnscope eval takes the window path where the engine has one and gives the
# perplexity the token-by-token step gives (GPNSCOPE_EVAL_STEP=1), over the
# same tokens, and says which path ran:
# - the shipped GDN (whole windows, chunked delta rule:
#   engine/arch/gdn/gdn_window.c), to 1e-4 relative: windows of the model's
#   512 tokens (8 chunks of 64) at batch 3 (a partial last batch), and of 100
#   (a partial last chunk);
# - the shipped Transformer++ (the prefill: engine/arch/tpp/tpp_window.c), to
#   1e-6 relative: windows of 512 at batch 3, and of 100 (a partial last
#   query block of 64) at batch 2.
# The tokens: the held-out text corpus through the LLaMA-2 tokenizer (both
# made by scripts/setup.sh, so CI runs this too; the token shards are made
# only by the training script).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$GPNSCOPE_SOURCE"
corpus="$src/data/corpus/heldout.jsonl" tok="$src/third_party/llama2-tokenizer.json"
need_files "scripts/setup.sh makes the corpus and the tokenizer" "$src/models/gdn-small/model.safetensors" \
  "$src/models/tpp-small/model.safetensors" "$corpus" "$tok"
scratch_dir eval_window
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

for run in "gdn-small 1e-4 --seq-len 512 --windows 4 --batch 3" "gdn-small 1e-4 --seq-len 100 --windows 5 --batch 2" \
  "tpp-small 1e-6 --seq-len 512 --windows 4 --batch 3" "tpp-small 1e-6 --seq-len 100 --windows 5 --batch 2"; do
  read -r name tol args <<<"$run"
  model="$src/models/$name/model.safetensors"
  # shellcheck disable=SC2086
  "$bin" eval --model "$model" --tokenizer "$tok" --corpus "$corpus" $args --json >"$dir/window.json"
  # shellcheck disable=SC2086
  GPNSCOPE_EVAL_STEP=1 "$bin" eval --model "$model" --tokenizer "$tok" --corpus "$corpus" $args --json >"$dir/step.json"
  if verdict="$("$py" - "$dir/window.json" "$dir/step.json" "$tol" <<'PY'
import json, sys
w, s = (json.load(open(p)) for p in sys.argv[1:3])
tol = float(sys.argv[3])
rel = abs(w["perplexity"] / s["perplexity"] - 1)
print("%s vs %s: perplexity %.6f (window) vs %.6f (step), %.1e relative (< %g), %d tokens, %.0f vs %.0f tokens/s"
      % (w["path"], s["path"], w["perplexity"], s["perplexity"], rel, tol, w["tokens"], w["tokens_per_s"], s["tokens_per_s"]))
sys.exit(0 if rel < tol and w["tokens"] == s["tokens"] > 0 and w["perplexity"] > 1
         and (w["path"], s["path"]) == ("window", "step") else 1)
PY
)"; then ok "$name $args: $verdict"; else bad "$name $args: $verdict"; fi
done
finish

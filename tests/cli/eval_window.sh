#!/usr/bin/env bash
# gpnscope eval on the shipped GDN takes the window path (whole windows,
# chunked delta rule: engine/arch/gdn/gdn_window.c) and gives the perplexity
# the token-by-token step gives (GPNSCOPE_EVAL_STEP=1) to 1e-4 relative, over
# the same tokens: windows of the model's 512 tokens (8 chunks of 64) at
# batch 3 (a partial last batch), and of 100 (a partial last chunk).
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="$GPNSCOPE_SOURCE"
model="$src/models/gdn-small/model.safetensors"
shards="$src/data/shards/heldout"
need_files "scripts/setup.sh makes the shards" "$model" "$shards/meta.json"
scratch_dir eval_window
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

for args in "--seq-len 512 --windows 4 --batch 3" "--seq-len 100 --windows 5 --batch 2"; do
  # shellcheck disable=SC2086
  "$bin" eval --model "$model" --corpus "$shards" $args --json >"$dir/window.json"
  # shellcheck disable=SC2086
  GPNSCOPE_EVAL_STEP=1 "$bin" eval --model "$model" --corpus "$shards" $args --json >"$dir/step.json"
  if verdict="$("$py" - "$dir/window.json" "$dir/step.json" <<'PY'
import json, sys
w, s = (json.load(open(p)) for p in sys.argv[1:3])
rel = abs(w["perplexity"] / s["perplexity"] - 1)
print("%s vs %s: perplexity %.6f (window) vs %.6f (step), %.1e relative, %d tokens, %.0f vs %.0f tokens/s"
      % (w["path"], s["path"], w["perplexity"], s["perplexity"], rel, w["tokens"], w["tokens_per_s"], s["tokens_per_s"]))
sys.exit(0 if rel < 1e-4 and w["tokens"] == s["tokens"] > 0 and w["perplexity"] > 1
         and (w["path"], s["path"]) == ("window", "step") else 1)
PY
)"; then ok "$args: $verdict"; else bad "$args: $verdict"; fi
done
finish

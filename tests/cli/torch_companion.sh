#!/usr/bin/env bash
# Optional cross-check against the companion's own PyTorch Transformer++
# (src/torch/models/transformer of the GPN companion code): when python3 has
# torch (Debian's python3-torch; CI does not install it) and
# GPNSCOPE_COMPANION_SRC points at a checkout of the companion, random
# Transformer++ models (tests/reference/tpp_reference.py) go through the
# companion's module (tests/reference/tpp_torch_companion.py, which imports
# its files and stands a plain causal softmax in for torch 1.13's missing
# F.scaled_dot_product_attention) and through gpnscope: every resid_post,
# final norm, logits and NLL within 1e-4 (test_family_tpp) and, decoded token
# by token, within 1e-5 of the module's whole-window pass
# (test_family_incremental); gpnscope eval's perplexity is exp of the
# module's own training loss over the same windows. Otherwise it is skipped,
# saying why (exit 77).
#   GPNSCOPE_COMPANION_SRC=/path/to/grounded-prediction-network ctest -R torch_companion
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
src="${GPNSCOPE_COMPANION_SRC:-}"
[[ -n "$src" ]] || { echo "SKIPPED: GPNSCOPE_COMPANION_SRC is not set (a checkout of the GPN companion code)"; exit 77; }
need_python numpy
"$py" -c "import torch" 2>/dev/null || { echo "SKIPPED: $py has no torch (Debian: apt-get install python3-torch)"; exit 77; }
ref="$GPNSCOPE_SOURCE/tests/reference"
scratch_dir torch_companion
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

#            name  V  D  L H  F  B T  seed
configs=("c3h4   97 32 3 4  48 3 70 31"
         "h6     40 12 2 6  24 2 17 32")
for c in "${configs[@]}"; do
  read -r name V D L H F B T seed <<<"$c"
  "$py" "$ref/tpp_reference.py" make "$dir/$name" "$V" "$D" "$L" "$H" "$F" "$B" "$T" "$seed"
  set +e
  "$py" "$ref/tpp_torch_companion.py" "$src" "$dir/$name.weights.safetensors" "$dir/$name.expect.safetensors" \
    "$dir/$name.torch.safetensors" "$dir/$name.shards" >"$dir/$name.harness.txt" 2>&1
  rc=$?
  set -e
  if [[ $rc -eq 77 ]]; then cat "$dir/$name.harness.txt"; exit 77; fi
  [[ $rc -eq 0 ]] && ok "$name: $(tail -1 "$dir/$name.harness.txt")" || { bad "$name: the harness: $(tail -3 "$dir/$name.harness.txt")"; continue; }
  w="$dir/$name.weights.safetensors" x="$dir/$name.torch.safetensors"
  "$GPNSCOPE_BUILD/tests/test_family_tpp" "$w" "$x" >"$dir/$name.parity.txt" 2>&1 &&
    ok "$name: gpnscope = the companion's module: $(grep -c 'rel err' "$dir/$name.parity.txt") tensors < 1e-4, worst $(grep 'rel err' "$dir/$name.parity.txt" | awk '{print $NF}' | sort -g | tail -1)" ||
    bad "$name: parity with the companion: $(grep FAIL "$dir/$name.parity.txt" | head -3)"
  "$GPNSCOPE_BUILD/tests/test_family_incremental" "$w" "$x" >"$dir/$name.incremental.txt" 2>&1 &&
    ok "$name: $(grep 'incremental' "$dir/$name.incremental.txt" | sed 's/^ *//')" ||
    bad "$name: incremental vs the companion's whole windows: $(grep FAIL "$dir/$name.incremental.txt" | head -3)"
  # eval over the same windows (the harness wrote them as shards): exp(mean NLL) = exp(the module's loss)
  loss="$(grep -o 'loss=[^ ]*' "$dir/$name.harness.txt" | cut -d= -f2)"
  ppl="$("$bin" eval --model "$w" --corpus "$dir/$name.shards" --seq-len "$T" --batch 2 --json |
    "$py" -c 'import json,sys; print(json.load(sys.stdin)["perplexity"])')"
  "$py" -c "import math, sys; sys.exit(0 if abs(math.log($ppl) / $loss - 1) < 1e-4 else 1)" &&
    ok "$name: eval's log perplexity $("$py" -c "import math; print('%.6f' % math.log($ppl))") = the module's loss $loss" ||
    bad "$name: eval's log perplexity of $ppl vs the companion's loss $loss"
done
finish

#!/usr/bin/env bash
# Reproduce a shipped model (docs/model.md): set up, tokenize the English
# text from Debian packages into shards, train with configs/NAME.json
# (about an hour or two on 2 cores; resumable: run this again after an
# interruption), evaluate on the held-out shards, and write
# models/NAME-retrained/.
#   usage: train-shipped-model.sh [NAME]   (default NAME: gpnm-small)
#   NAME: any configs/NAME.json, e.g. gpnm15-small and the baselines trained
#         under the same budget, tpp-small and gdn-small (docs/model.md)
#   STEPS=N   stop after N optimizer steps (the schedule stays the config's)
#   OUT=DIR   the training directory (default data/train-NAME); a second
#             directory reproduces the run beside an existing one
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
bin="$build/gpnscope"
name="${1:-gpnm-small}"
config="$root/configs/$name.json"
[[ -s "$config" ]] || { echo "train-shipped-model.sh: no config $config (known: $(cd "$root/configs" && ls *.json | sed 's/.json$//' | tr '\n' ' '))" >&2; exit 2; }
tok="$root/third_party/llama2-tokenizer.json"
for part in train heldout; do
  [[ -s "$root/data/shards/$part/meta.json" ]] ||
    "$bin" shard --tokenizer "$tok" --corpus "$root/data/corpus/$part.jsonl" --out "$root/data/shards/$part"
done
out="${OUT:-$root/data/train-$name}"
extra=()
[[ -n "${STEPS:-}" ]] && extra+=(--run-steps "$STEPS")
if [[ -s "$out/optimizer.safetensors" ]]; then
  "$bin" train --config "$config" --out "$out" --resume "$out" "${extra[@]}"
else
  "$bin" train --config "$config" --out "$out" "${extra[@]}"
fi
dest="$root/models/$name-retrained"
mkdir -p "$dest"
cp "$out/model.bf16.safetensors" "$dest/model.safetensors"
cp "$out/loss.csv" "$out/config.json" "$dest/"
"$bin" eval --model "$dest/model.safetensors" --corpus "$root/data/shards/heldout" --seq-len 512 --batch 16

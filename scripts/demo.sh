#!/usr/bin/env bash
# Set up (packages, build) and run the main job: the demo on the shipped model.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
if "$build/gpnscope" demo --help >/dev/null 2>&1; then
  exec "$build/gpnscope" demo "$@"
fi
# Until the shipped model exists: describe and evaluate the reference fixture.
fx="$root/tests/fixtures/reference"
"$build/gpnscope" info "$fx/gpnm1.weights.safetensors"
"$build/gpnscope" eval --model "$fx/gpnm1.weights.safetensors" --corpus "$fx/gpnm1.expect.safetensors"

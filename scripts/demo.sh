#!/usr/bin/env bash
# Set up (Debian packages, tokenizer, held-out text, build) and run the main
# job: the demo on the shipped models (GPN+M, then each shipped baseline and the
# comparison), into ./gpnscope-demo (gpnscope demo --help).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
exec "$build/gpnscope" demo "$@"

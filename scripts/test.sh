#!/usr/bin/env bash
# Set up (packages, build) and run the whole test suite with ctest.
#   BUILD_DIR, SANITIZE as for scripts/setup.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"

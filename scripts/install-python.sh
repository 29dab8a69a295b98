#!/usr/bin/env bash
# Make `python3 -c "import gpnscope"` work from any folder with Debian's
# python3, without pip or a download (docs/python.md): the library of the
# build folder BUILD is recorded in python/gpnscope/_paths.py (git-ignored),
# and python/ goes on the path through gpnscope.pth in the user's
# site-packages (PYTHONUSERBASE moves it). Run by scripts/setup.sh.
#   usage: scripts/install-python.sh [BUILD]   (default: build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
py=/usr/bin/python3
[[ -f "$build/libgpnscope.so" ]] || { echo "install-python: $build/libgpnscope.so is not built (cmake --build $build)" >&2; exit 1; }
printf '# written by scripts/install-python.sh: the libgpnscope.so of this build\nLIB = %s\n' \
  "$("$py" -c 'import sys; print(repr(sys.argv[1]))' "$build/libgpnscope.so")" > "$root/python/gpnscope/_paths.py"
site_dir="$("$py" -m site --user-site)"
mkdir -p "$site_dir"
echo "$root/python" > "$site_dir/gpnscope.pth"
(cd / && env -u GPNSCOPE_LIB -u PYTHONPATH "$py" -c "import sys, gpnscope; gpnscope.load(sys.argv[1])" "$root/models/gpnm15-small")
echo "install-python: python3 -c 'import gpnscope' works from any folder ($site_dir/gpnscope.pth -> $root/python)"

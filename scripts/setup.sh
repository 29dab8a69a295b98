#!/usr/bin/env bash
# Set up gpnscope on a Debian machine: install the Debian packages that are
# missing (scripts/debian-packages.txt), then configure and build.
#   BUILD_DIR  build folder (default: build)
#   SANITIZE=1 build with AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

missing=()
while read -r pkg; do
  [[ -z "$pkg" || "$pkg" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done < "$root/scripts/debian-packages.txt"
# nodejs may come from another source and already bring npm
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
read -r -a missing <<< "${missing[*]}"
if (( ${#missing[@]} )); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo_cmd=(); [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The LLaMA-2 tokenizer, built from a pinned npm package (see docs/tokenizer.md).
if [[ -x "$root/scripts/fetch-tokenizer.sh" ]]; then
  "$root/scripts/fetch-tokenizer.sh"
fi

# The shipped model's English text (train / held-out), from the Debian
# packages installed above (tools/prepare_corpus.py; nothing is committed).
if [[ ! -s "$root/data/corpus/heldout.jsonl" ]]; then
  /usr/bin/python3 "$root/tools/prepare_corpus.py" "$root/data/corpus"
fi

cmake_args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
# the sanitized build is CPU-only: ASan and the CUDA driver need special settings to share a process
[[ "${SANITIZE:-0}" == 1 ]] && cmake_args+=(-DGPNSCOPE_SANITIZE=ON -DGPNSCOPE_CUDA=OFF -DCMAKE_C_COMPILER=gcc)
cmake "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" -- --no-print-directory
echo "setup: built $build/gpnscope"

# `import gpnscope` from any folder with Debian's python3 (docs/python.md); not for the sanitized build,
# whose library python3 cannot load (and which must not replace the ordinary build's in _paths.py)
if [[ "${SANITIZE:-0}" == 1 ]]; then
  echo "setup: the sanitized build is not installed for python3 (scripts/install-python.sh with an ordinary build)"
else
  "$root/scripts/install-python.sh" "$build"
fi

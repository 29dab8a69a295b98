#!/usr/bin/env bash
# scripts/install-python.sh (what scripts/setup.sh runs) makes `import
# gpnscope` work from any folder with Debian's python3: a .pth file in the
# user's site-packages (here a scratch PYTHONUSERBASE) and the build's
# library in python/gpnscope/_paths.py; the package then runs a model.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
# python3 cannot load a library built with the sanitizers (and installing it would point the package at it)
[[ "${GPNSCOPE_SANITIZED:-0}" == 1 ]] && { echo "SKIPPED: a sanitized build's library is not for python3"; exit 77; }
need_python numpy
scratch_dir python_install home
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
export PYTHONUSERBASE="$dir/home"
unset PYTHONPATH GPNSCOPE_LIB
cd "$dir"
"$py" -c "import gpnscope" 2>/dev/null && bad "gpnscope imports before the install" || ok "no gpnscope before the install"
"$GPNSCOPE_SOURCE/scripts/install-python.sh" "$GPNSCOPE_BUILD" >"$dir/out.txt" 2>&1 &&
  ok "install-python.sh: $(tail -1 "$dir/out.txt")" || bad "install-python.sh: $(cat "$dir/out.txt")"
[[ -f "$("$py" -m site --user-site)/gpnscope.pth" ]] && ok "gpnscope.pth in the user site" || bad "no .pth"
got=$(cd / && "$py" -c "import gpnscope; m = gpnscope.load('$GPNSCOPE_SOURCE/models/tpp-small'); print(m.family, m([5, 6, 7]).shape)") &&
  [[ "$got" == "transformer++ (1, 3, 32000)" ]] && ok "import gpnscope from /: $got" || bad "import from /: $got"
finish

# Sourced by the CLI tests (tests/cli/*.sh; not a test itself): the counts of
# checks passed and failed, one line for each check (ok WHAT, bad WHAT), and
# the test's last line (finish: "N passed, M failed", and the exit status 0
# only when none failed).
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
finish() { echo "$pass passed, $fail failed"; [[ $fail -eq 0 ]]; }

# fails_in_one_line WHAT NEEDLE CMD...: CMD fails (exit != 0) with one line on
# stderr naming NEEDLE
fails_in_one_line() {
  local what="$1" needle="$2"; shift 2
  set +e; "$@" >/dev/null 2>"$dir/err"; local rc=$?; set -e
  [[ $rc -ne 0 && $(wc -l <"$dir/err") -eq 1 ]] && grep -q "$needle" "$dir/err" &&
    ok "$what: one line: $(cat "$dir/err")" || bad "$what: exit $rc, $(cat "$dir/err")"
}

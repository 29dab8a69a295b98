# Sourced by the CLI tests (tests/cli/*.sh; not a test itself): the counts of
# checks passed and failed, one line for each check (ok WHAT, bad WHAT), and
# the test's last line (finish: "N passed, M failed", and the exit status 0
# only when none failed).
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
finish() { echo "$pass passed, $fail failed"; [[ $fail -eq 0 ]]; }

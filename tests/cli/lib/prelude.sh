# Sourced first by the CLI tests (tests/cli/*.sh; not a test itself): the
# opening every test used to write out. $py is the Python the tests may use
# ($GPNSCOPE_PYTHON, else /usr/bin/python3), $bin the gpnscope under test; a
# missing tool skips the test (exit 77, which ctest reports as skipped) with
# one line saying what is missing.
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
bin="$GPNSCOPE_BIN"
# the tests' Python snippets import testdata (tests/cli/lib/testdata.py)
export PYTHONPATH="$GPNSCOPE_SOURCE/tests/cli/lib${PYTHONPATH:+:$PYTHONPATH}"

# need_python MODULE...: skip unless $py imports every MODULE
need_python() {
  local m
  for m in "$@"; do "$py" -c "import $m" 2>/dev/null || { echo "SKIPPED: $py has no $m"; exit 77; }; done
}

# need_sqlite3: skip without the sqlite3 shell (the tests read stores with it)
need_sqlite3() { command -v sqlite3 >/dev/null || { echo "SKIPPED: no sqlite3"; exit 77; }; }

# scratch_dir NAME [SUBDIR...]: $dir = $GPNSCOPE_BUILD/test-scratch/NAME,
# emptied, holding the empty SUBDIRs (each run starts from nothing)
scratch_dir() {
  dir="$GPNSCOPE_BUILD/test-scratch/$1"
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  local s
  for s in "$@"; do mkdir -p "$dir/$s"; done
}

# need_files HOW FILE...: skip unless every FILE exists; HOW says what makes it
need_files() {
  local how="$1" f
  shift
  for f in "$@"; do [[ -f "$f" ]] || { echo "SKIPPED: $f is missing ($how)"; exit 77; }; done
}

# random_shards DIR TOKENS SEED [VOCAB [DOC_LEN]]: a corpus of random token
# ids in DIR (tests/cli/random_shards.py says what it writes)
random_shards() { "$py" "$GPNSCOPE_SOURCE/tests/cli/random_shards.py" "$@"; }

# gpnm1_scratch NAME [SUBDIR...]: the opening of the tests of the gpnm1
# fixture: $dir (scratch_dir NAME SUBDIR...), $model the fixture, and the
# verdicts (ok, bad, finish)
gpnm1_scratch() {
  scratch_dir "$@"
  model="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
  . "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
}

# shipped_scratch NAME: the opening of the tests of the shipped gpnm15-small
# with the bundled tokenizer: $src (the source tree), the verdicts (ok, bad,
# finish), a skip where the tokenizer or the model is missing, and $dir
# (scratch_dir NAME)
shipped_scratch() {
  src="$GPNSCOPE_SOURCE"
  . "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
  need_files "scripts/setup.sh fetches it" "$src/third_party/llama2-tokenizer.json"
  need_files "shipped in the tree" "$src/models/gpnm15-small/model.safetensors"
  scratch_dir "$1"
}

# record_scratch NAME TOKENS SEED: the opening of the record_* tests:
# gpnm1_scratch NAME shards and, in $dir/shards, TOKENS random ids (SEED) of
# the fixture's 97-token vocabulary
record_scratch() {
  gpnm1_scratch "$1" shards
  random_shards "$dir/shards" "$2" "$3"
}

# expect_one_line CODE TEXT CMD...: CMD exits CODE with one line on stderr
# holding TEXT (in ./err.txt); prints ok or FAIL, and a FAIL sets fail=1 (for
# the tests that count failures in $fail rather than through verdicts.sh)
expect_one_line() {
    local code=$1 text=$2; shift 2
    "$@" > /dev/null 2> err.txt; local rc=$?
    if [[ $rc -ne $code ]] || ! grep -q -- "$text" err.txt || [[ $(wc -l < err.txt) -ne 1 ]]; then
        echo "FAIL: '$*' gave $rc: $(cat err.txt) (wanted $code and '$text')"; fail=1
    else echo "ok: $* -> $rc: $(cat err.txt)"; fi
}

#!/usr/bin/env bash
# The command line end to end under valgrind's memcheck, on the small
# reference fixture: info, tokenize (when the LLaMA-2 tokenizer is there),
# record, analyze, sql with the vector functions, export, import of the
# exported states. Every step must succeed with no memory error (invalid
# read or write, use of uninitialised memory, bad free) and no definite,
# indirect or possible leak (the engine's worker threads are joined at exit);
# valgrind is ~50x slower, so the recording is 6 windows of 24
# tokens. The ASan+UBSan suite covers the same code compiled with
# sanitizers; this runs the ordinary build, as users run it.
#   BUILD_DIR         the build to check (default build)
#   VALGRIND_SUMMARY  also write "step<TAB>seconds<TAB>result" lines there
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bin="$build/gpnscope"
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
command -v valgrind >/dev/null || { echo "valgrind-e2e.sh: valgrind is missing: run scripts/setup.sh" >&2; exit 1; }
[[ -x "$bin" ]] || { echo "valgrind-e2e.sh: $bin not built: run scripts/setup.sh" >&2; exit 1; }
dir="$build/valgrind-e2e"; rm -rf "$dir"; mkdir -p "$dir/shards"
model="$root/tests/fixtures/reference/gpnm1.weights.safetensors"
tok="$root/third_party/llama2-tokenizer.json"
# one BLAS thread: fewer threads for valgrind to serialise, same code paths
export OPENBLAS_NUM_THREADS=1

# 12 windows of 24 tokens of the fixture's 97-token vocabulary
"$py" "$root/tests/cli/random_shards.py" "$dir/shards" $((12 * 24)) 7
# traces "recorded elsewhere" for import: states (2, 8, 5) <f4 and tokens (2, 8) <i4
"$py" - "$dir/shards" <<'PY'
import random, struct, sys
out = sys.argv[1]
random.seed(7)
def npy(path, descr, shape, fmt, values):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    open(path, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode() +
                           struct.pack("<%d%s" % (len(values), fmt), *values))
npy(out + "/../states.npy", "<f4", "(2, 8, 5)", "f", [random.uniform(-1, 1) for _ in range(80)])
npy(out + "/../tokens.npy", "<i4", "(2, 8)", "i", [random.randrange(3, 97) for _ in range(16)])
PY
printf 'The quick brown fox, caf\xc3\xa9 \xff.\n\n  two  spaces\n' >"$dir/text.txt"

[[ -n "${VALGRIND_SUMMARY:-}" ]] && : >"$VALGRIND_SUMMARY"
failed=0 steps=0
# step NAME COMMAND...: run one gpnscope command under memcheck
step() {
  local name="$1"; shift
  local log="$dir/$name.valgrind" start=$SECONDS rc result
  set +e
  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --log-file="$log" "$bin" "$@" <"${STEP_IN:-/dev/null}" >"$dir/$name.out" 2>"$dir/$name.err"
  rc=$?
  set -e
  steps=$((steps+1))
  if (( rc == 0 )); then result="ok"
  elif (( rc == 99 )); then result="memcheck errors: $(grep -m1 -E 'Invalid|uninitialised|definitely lost|indirectly lost|possibly lost|free' "$log" | sed 's/^==[0-9]*== //')"; failed=1
  else result="exit $rc: $(head -1 "$dir/$name.err")"; failed=1; fi
  printf '%-10s %4ss  %s\n' "$name" $((SECONDS - start)) "$result"
  [[ -n "${VALGRIND_SUMMARY:-}" ]] && printf '%s\t%s\t%s\n' "$name" $((SECONDS - start)) "$result" >>"$VALGRIND_SUMMARY"
  if (( rc != 0 )); then sed 's/^/    /' "$log" | head -40; fi
  return 0
}

step info info "$model"
if [[ -s "$tok" ]]; then
  STEP_IN="$dir/text.txt" step tokenize tokenize --tokenizer "$tok"
fi
step record record --model "$model" --corpus "$dir/shards" --seq-len 24 --batch 3 --windows 6 --states pred,ground \
  --positions sample:8 --dtype f16 --db "$dir/study.db" --quiet
step analyze analyze "$dir/study.db"
step sql sql "$dir/study.db" "SELECT kind, count(*), round(avg(vec_norm(vec_f32(vector, dtype))), 3),
  vec_length(vec_avg(vec_f32(vector, dtype))) FROM states GROUP BY kind"
step export export "$dir/study.db" --out "$dir/export" --format npy
step import import --db "$dir/imported.db" --states "$dir/states.npy" --tokens "$dir/tokens.npy"
# the commands did their work, not only ran clean
grep -q "recorded run 1" "$dir/record.out" || { echo "record printed no summary"; failed=1; }
grep -q "pred" "$dir/sql.out" || { echo "sql returned no state rows"; failed=1; }
[[ ! -s "$tok" ]] || [[ $(wc -l <"$dir/tokenize.out") -eq 3 ]] || { echo "tokenize did not print 3 lines"; failed=1; }
[[ -s "$dir/export/manifest.json" ]] || { echo "export wrote no manifest"; failed=1; }
echo "valgrind-e2e: $steps steps under memcheck, $( ((failed)) && echo FAILED || echo 'no errors, no leaks' )"
exit $failed

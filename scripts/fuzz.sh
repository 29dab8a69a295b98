#!/usr/bin/env bash
# Fuzz gpnscope's readers with libFuzzer (clang, AddressSanitizer +
# UndefinedBehaviorSanitizer): build the targets of tests/fuzz/ in their own
# folder, make the seed corpora, run each target, and print how many inputs
# each one ran and what happened (docs/reliability.md).
#
#   scripts/fuzz.sh [--runs N] [--seconds S] [TARGET...]
#     --runs N      stop each target after N inputs
#     --seconds S   stop each target after S seconds (default 60 when
#                   --runs is not given; with both, whichever comes first)
#     TARGET        safetensors, tokenizer_json, ... (default: every
#                   tests/fuzz/fuzz_*.c)
#   FUZZ_BUILD_DIR  build folder (default build-fuzz)
#   JOBS            parallel compile jobs (default: all cores)
#   FUZZ_SUMMARY    also write "target<TAB>inputs<TAB>seconds<TAB>result" lines there
#
# Inputs that reach new code are kept in FUZZ_BUILD_DIR/corpus/TARGET, so a
# later run continues where this one stopped. A crash stops that target,
# leaves the input in FUZZ_BUILD_DIR/crashes/TARGET/ and prints the commands
# to reproduce it and to keep it as a regression test; the script then exits
# 1. It installs nothing: scripts/setup.sh installs clang and libFuzzer
# (scripts/debian-packages.txt).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
runs="" seconds="" targets=()
while (( $# )); do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[[ -z "$runs" && -z "$seconds" ]] && seconds=60
if (( ${#targets[@]} == 0 )); then
  for src in "$root"/tests/fuzz/fuzz_*.c; do t="$(basename "$src" .c)"; targets+=("${t#fuzz_}"); done
fi
for t in "${targets[@]}"; do
  [[ -f "$root/tests/fuzz/fuzz_$t.c" ]] || { echo "fuzz.sh: no target '$t' (tests/fuzz/fuzz_$t.c)" >&2; exit 2; }
done

probe="$(mktemp)"
if ! command -v clang >/dev/null ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
     clang -fsanitize=fuzzer -x c - -o "$probe" 2>/dev/null; then
  rm -f "$probe"
  echo "fuzz.sh: clang with libFuzzer is needed: run scripts/setup.sh (installs clang and libclang-rt-14-dev)" >&2
  exit 1
fi
rm -f "$probe"

# One configuration: clang, libFuzzer + both sanitizers on every library,
# no CUDA (the readers are all on the CPU side).
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC=clang cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPNSCOPE_FUZZ=ON -DGPNSCOPE_CUDA=OFF >/dev/null
fi
cmake --build "$build" --target fuzz_all -j "${JOBS:-$(nproc)}" -- --no-print-directory >"$build/fuzz-build.log" 2>&1 ||
  { tail -30 "$build/fuzz-build.log"; echo "fuzz.sh: build failed (log: $build/fuzz-build.log)" >&2; exit 1; }

export GPNSCOPE_SOURCE="$root" GPNSCOPE_FIXTURES="$root/tests/fixtures"
# halt on the first report, with a stack, so every finding is a crash file
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
"$build/tests/fuzz_make_seeds" "$build/fuzz-seeds" >"$build/fuzz-seeds.log" 2>&1 ||
  { cat "$build/fuzz-seeds.log"; echo "fuzz.sh: making the seeds failed" >&2; exit 1; }
# the targets' scratch files, on a RAM disk when there is one, in a folder
# removed at the end (a target that crashes leaves its own behind)
scratch_parent=/tmp
[[ -d /dev/shm && -w /dev/shm ]] && scratch_parent=/dev/shm
TMPDIR="$(mktemp -d "$scratch_parent/gpnscope-fuzz-run.XXXXXX")"
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT

limits=()
[[ -n "$runs" ]] && limits+=("-runs=$runs")
[[ -n "$seconds" ]] && limits+=("-max_total_time=$seconds")
mkdir -p "$build/logs"
[[ -n "${FUZZ_SUMMARY:-}" ]] && : >"$FUZZ_SUMMARY"
failed=0
printf '%-18s %12s %8s  %s\n' target inputs seconds result
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t" crashes="$build/crashes/$t" log="$build/logs/$t.log"
  mkdir -p "$corpus" "$crashes"
  dirs=("$corpus" "$build/fuzz-seeds/$t")
  [[ -d "$root/tests/fuzz/regressions/$t" ]] && dirs+=("$root/tests/fuzz/regressions/$t")
  dict=()
  [[ -f "$root/tests/fuzz/dict/$t.dict" ]] && dict=("-dict=$root/tests/fuzz/dict/$t.dict")
  before="$(ls "$crashes" | wc -l)"
  start=$SECONDS
  set +e
  "$build/tests/fuzz_$t" "${limits[@]}" "${dict[@]}" -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$crashes/" "${dirs[@]}" >"$log" 2>&1
  rc=$?
  set -e
  took=$((SECONDS - start))
  inputs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  [[ -z "$inputs" ]] && inputs="$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')"
  if (( rc == 0 )); then
    result="ok"
  else
    failed=1
    artifact="$(ls -t "$crashes" | head -1)"
    what="$(grep -m1 -oE 'ERROR: [A-Za-z]+Sanitizer: [a-z-]+|runtime error: .*|fuzz invariant broken.*|ERROR: libFuzzer: [a-z-]+' "$log" || true)"
    result="FAILED (exit $rc): ${what:-see $log}"
    if (( $(ls "$crashes" | wc -l) > before )) && [[ -n "$artifact" ]]; then
      result+=$'\n'"    input:      $crashes/$artifact"
      result+=$'\n'"    reproduce:  $build/tests/fuzz_$t $crashes/$artifact"
      result+=$'\n'"    regression: mkdir -p tests/fuzz/regressions/$t && cp $crashes/$artifact tests/fuzz/regressions/$t/"
    fi
    result+=$'\n'"    log:        $log"
  fi
  printf '%-18s %12s %8s  %s\n' "$t" "${inputs:-?}" "$took" "$result"
  [[ -n "${FUZZ_SUMMARY:-}" ]] && printf '%s\t%s\t%s\t%s\n' "$t" "${inputs:-0}" "$took" "$(head -1 <<<"$result")" >>"$FUZZ_SUMMARY"
done
exit $failed

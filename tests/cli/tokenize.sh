#!/usr/bin/env bash
# gpnscope tokenize as a user runs it: the line format (ids separated by
# single spaces, one output line per input line, empty lines kept, a last
# line without newline), --pieces, --decode, --invalid-utf8, usage and
# error exits. Uses a small tokenizer.json written here; with the LLaMA-2
# tokenizer built by scripts/fetch-tokenizer.sh, also known LLaMA-2 ids.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
scratch_dir cli_tokenize
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
check() { if [[ "$2" == "$3" ]]; then ok "$1"; else bad "$1: got [$2] want [$3]"; fi; }

# <unk> <s> </s> <0x00>..<0xFF> ▁ o n e on one ▁one; merges o+n, on+e, ▁+one
{
  printf '{"added_tokens": [{"id": 0, "content": "<unk>", "special": true}, {"id": 1, "content": "<s>", "special": true}, {"id": 2, "content": "</s>", "special": true}],\n'
  printf '"normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\xe2\x96\x81"}, {"type": "Replace", "pattern": {"String": " "}, "content": "\xe2\x96\x81"}]},\n'
  printf '"model": {"type": "BPE", "unk_token": "<unk>", "byte_fallback": true, "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2'
  for b in $(seq 0 255); do printf ', "<0x%02X>": %d' "$b" $((b + 3)); done
  printf ', "\xe2\x96\x81": 259, "o": 260, "n": 261, "e": 262, "on": 263, "one": 264, "\xe2\x96\x81one": 265},\n'
  printf '"merges": ["o n", "on e", "\xe2\x96\x81 one"]}}\n'
} > "$dir/tok.json"
T=(--tokenizer "$dir/tok.json")

out="$(printf 'one one\n\none\n' | "$bin" tokenize "${T[@]}")"
check "lines -> ids, empty line kept" "$out" $'265 265\n\n265'
out="$(printf 'one\none' | "$bin" tokenize "${T[@]}" | od -An -c | tr -s ' ')"
check "last line without newline still ends with one" "$out" " 2 6 5 \n 2 6 5 \n"
out="$(printf 'one\r\n' | "$bin" tokenize "${T[@]}")"
check "only \\n is removed (\\r is a byte)" "$out" "265 16"
out="$(printf 'x one\n' | "$bin" tokenize "${T[@]}" --pieces)"
check "--pieces" "$out" "▁ <0x78> ▁one"
out="$(printf '\xff\n' | "$bin" tokenize "${T[@]}")"
check "invalid byte -> U+FFFD -> its bytes" "$out" "259 242 194 192"
out="$(printf '\xff\n' | "$bin" tokenize "${T[@]}" --invalid-utf8 bytes)"
check "--invalid-utf8 bytes" "$out" "259 258"
out="$(printf 'one x\xc3\xa9 one\n' | "$bin" tokenize "${T[@]}" | "$bin" tokenize "${T[@]}" --decode)"
check "--decode round trip" "$out" "one xé one"
out="$(printf '\0one\n' | "$bin" tokenize "${T[@]}")"
check "NUL inside a line" "$out" "259 3 264"

# usage errors exit 2, runtime errors exit 1 with one line on stderr
set +e
"$bin" tokenize --bogus </dev/null >/dev/null 2>&1; check "unknown option exits 2" "$?" 2
"$bin" tokenize "${T[@]}" --invalid-utf8 drop </dev/null >/dev/null 2>&1; check "bad --invalid-utf8 exits 2" "$?" 2
"$bin" tokenize "${T[@]}" --pieces --decode </dev/null >/dev/null 2>&1; check "--pieces with --decode exits 2" "$?" 2
err="$("$bin" tokenize --tokenizer "$dir/missing.json" </dev/null 2>&1 >/dev/null)"; rc=$?
check "missing tokenizer exits 1" "$rc" 1
check "one-line error" "$(printf '%s\n' "$err" | wc -l)" 1
[[ "$err" == "gpnscope tokenize: cannot open tokenizer"* ]] && ok "error names the problem" || bad "error: $err"
err="$(echo '5 99999' | "$bin" tokenize "${T[@]}" --decode 2>&1 >/dev/null)"; rc=$?
check "--decode of an unknown id exits 1" "$rc" 1
[[ "$err" == *"line 1"*"99999"* ]] && ok "decode error names line and id" || bad "decode error: $err"
help="$("$bin" tokenize --help)"; rc=$?
set -e
check "--help exits 0" "$rc" 0
for o in --tokenizer --pieces --decode --invalid-utf8; do
  [[ "$help" == *"$o"* ]] && ok "--help explains $o" || bad "--help lacks $o"
done

# the real LLaMA-2 tokenizer (ids from llama-tokenizer-js's documentation)
llama="$GPNSCOPE_SOURCE/third_party/llama2-tokenizer.json"
if [[ -f "$llama" ]]; then
  out="$(printf 'Hello world!\n' | "$bin" tokenize --tokenizer "$llama")"
  check "LLaMA-2: Hello world!" "$out" "15043 3186 29991"
  out="$(printf 'Hello world!\n' | GPNSCOPE_TOKENIZER="$llama" "$bin" tokenize)"
  check "GPNSCOPE_TOKENIZER is the default" "$out" "15043 3186 29991"
else
  echo "note: $llama absent (scripts/fetch-tokenizer.sh); LLaMA-2 checks not run"
fi
finish

# Sourced by the family tests that check the engine against a float64 numpy
# reference (tests/cli/family_rt.sh, family_tpp.sh; not a test itself; after
# prelude.sh and verdicts.sh): the reference's pairs and one verdict on them.

# reference_parity FAMILY CONFIG...: for each CONFIG ("NAME ARG..."), $ref
# (the family's tests/reference/*_reference.py) makes $dir/NAME.weights and
# $dir/NAME.expect from the ARGs; $args is then every pair, and
# test_family_FAMILY must find every site of every pair within 1e-4
reference_parity() {
  local family="$1" c name rest
  shift
  args=()
  for c in "$@"; do
    read -r name rest <<<"$c"
    # shellcheck disable=SC2086
    "$py" "$ref" make "$dir/$name" $rest
    args+=("$dir/$name.weights.safetensors" "$dir/$name.expect.safetensors")
  done
  if "$GPNSCOPE_BUILD/tests/test_family_$family" "${args[@]}" >"$dir/parity.txt" 2>&1; then
    ok "every site equals the float64 reference on $# configurations: $(grep -c 'rel err' "$dir/parity.txt") tensors < 1e-4"
  else bad "parity: $(grep FAIL "$dir/parity.txt" | head -3)"; fi
}

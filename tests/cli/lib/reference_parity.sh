# Sourced by the family tests that check the engine against a float64 numpy
# reference (tests/cli/family_rt.sh, family_tpp.sh; not a test itself; after
# prelude.sh and verdicts.sh): the reference's pairs and one verdict on them,
# and eval and record over the reference's own windows.

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

# reference_windows ARCH EXPECT LAST: eval and record of $model over the
# reference's three windows of 70 tokens ($dir/shards, made from EXPECT; the
# reference's perplexity in $dir/want.txt): eval's perplexity is exp(mean
# nll) over 3 x 69 tokens; record's default site is the last block's
# (LAST's) resid_post, and the recorded states and NLLs in $dir/ref.db equal
# EXPECT's resid_post_LAST and nll (position 0: no prediction, NULL)
reference_windows() {
  local arch="$1" expect="$2" last="$3" want got ppl toks wins
  want="$(cat "$dir/want.txt")"
  got="$("$bin" eval --model "$model" --corpus "$dir/shards" --seq-len 70 --batch 2 --json |
    "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["perplexity"], d["tokens"], d["windows"])')"
  read -r ppl toks wins <<<"$got"
  "$py" -c "import sys; sys.exit(0 if abs($ppl/$want-1) < 1e-4 else 1)" && [[ "$toks $wins" == "207 3" ]] &&
    ok "eval: perplexity $ppl == exp(mean reference nll) $want over 3 x 69 tokens" || bad "eval: $got, want $want 207 3"

  "$bin" record --model "$model" --corpus "$dir/shards" --seq-len 70 --batch 2 --db "$dir/ref.db" --quiet >/dev/null &&
    ok "record (default sites) over the reference's windows" || bad "record over the reference's windows"
  [[ "$(sqlite3 "$dir/ref.db" "select arch || ' ' || states from runs join models m on m.id = model_id")" == "$arch blocks.$last.hook_resid_post" ]] &&
    ok "the default site is the last block's resid_post" || bad "runs: $(sqlite3 "$dir/ref.db" "select arch, states from runs join models m on m.id = model_id")"
  sqlite3 -json "$dir/ref.db" "select window, position, hex(vector) as v from states where kind = 'blocks.$last.hook_resid_post'" >"$dir/states.json"
  sqlite3 -json "$dir/ref.db" "select window, position, nll, top1 from tokens" >"$dir/tokens.json"
  "$py" - "$expect" "$dir/states.json" "$dir/tokens.json" "$last" <<'PY' && ok "recorded states and NLLs equal the reference's (position 0: no prediction, NULL)" || bad "recorded rows differ from the reference"
import json, sys
import numpy as np
from testdata import read_safetensors
_, f32 = read_safetensors(sys.argv[1])
get = lambda name: f32(name).astype(np.float64)  # noqa: E731
R, nll = get("resid_post_" + sys.argv[4]), get("nll")
S = np.zeros_like(R)
rows = json.load(open(sys.argv[2]))
assert len(rows) == 210, len(rows)
for r in rows:
    S[r["window"], r["position"]] = np.frombuffer(bytes.fromhex(r["v"]), "<f4")
err = np.linalg.norm(S - R) / np.linalg.norm(R)
assert err < 1e-4, err
toks = json.load(open(sys.argv[3]))
assert len(toks) == 210
got = np.zeros_like(nll)
for r in toks:
    if r["position"] == 0:
        assert r["nll"] is None and r["top1"] is None, r
    else:
        got[r["window"], r["position"] - 1] = r["nll"]
err = np.linalg.norm(got - nll) / np.linalg.norm(nll)
assert err < 1e-4, err
print("states", err)
PY
}

# info_sites MODEL FAMILY: `gpnscope info MODEL` into $text and its --json
# into $dir/info.json, then one verdict: every site it lists stands in
# docs/hooks.md ($doc) with its width (testdata.documented_sites, for a model
# of 3 layers, 4 heads, width 32), and the family's own checks (Python on
# stdin, run with o, the info JSON, and w, each site's width) hold
info_sites() {
  local model="$1" family="$2"
  cat >"$dir/sites_checks.py"
  "$bin" info "$model" --json >"$dir/info.json"; text="$("$bin" info "$model")"
  "$py" - "$doc" "$dir/info.json" "$family" "$dir/sites_checks.py" >"$dir/sites.txt" 2>&1 <<'PY' &&
import sys
from testdata import documented_sites
o, w = documented_sites(sys.argv[1], sys.argv[2], sys.argv[3], 3, 4, 32)
exec(open(sys.argv[4]).read())
PY
    ok "info: $(wc -l <"$dir/sites.txt") sites, each in docs/hooks.md with its width" || bad "info's sites: $(tail -2 "$dir/sites.txt")"
}

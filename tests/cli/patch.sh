#!/usr/bin/env bash
# gpnscope patch (docs/causal.md): on the fixtures, a patch of the whole state
# at the last position gives the clean run's logit difference bit for bit
# (score 1), and so does the patch at every position; a patch before the
# prompts differ changes nothing (score 0, bit for bit); in GPN+M the state
# without the memory does not restore the clean run (the memory is carried,
# and the patch of mem.state is what carries it); in the layered families the
# last layer's residual at the last position gives the clean logits, an
# earlier layer's there does not; GDN's whole state (each layer's S and
# convolution inputs) from the differing token on gives the clean logits bit
# for bit, one layer's S alone does not; Transformer++'s state is refused; the store holds components x (T + 1) cells
# per pair and the heatmap script; bad JSONL lines are one-line errors with
# the line number.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir patch
fx="$GPNSCOPE_FIXTURES/reference"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

# pairs of token ids: four words, the word that differs, the four again
pairs() { "$py" - "$1" "$2" <<'PY'
import json, random, sys
V, out = int(sys.argv[1]), sys.argv[2]
r = random.Random(5)
with open(out, "w") as f:
    f.write("# fixture pairs\n\n")
    for _ in range(6):
        w = [r.randrange(3, V) for _ in range(4)]
        a, b = r.sample(range(3, V), 2)
        f.write(json.dumps({"clean": w + [a] + w, "corrupted": w + [b] + w, "answer": a, "foil": b}) + "\n")
PY
}
pairs 97 "$dir/p97.jsonl"; pairs 89 "$dir/p89.jsonl"

# check MODEL PAIRS COMPONENTS PYTHON-ASSERTS: run patch --json, then the asserts on o (the JSON)
check() {
  local name="$1" model="$2" p="$3" comps="$4" asserts="$5"
  if "$bin" patch "$model" "$p" --components "$comps" --batch 4 --json >"$dir/$name.json" 2>"$dir/$name.err" &&
     "$py" - "$dir/$name.json" "$asserts" >"$dir/$name.txt" 2>&1 <<'PY'
import json, math, sys
o = json.load(open(sys.argv[1]))
T = o["tokens"]; c = {x["component"]: x for x in o["components"]}
clean, corr = o["ld_clean"], o["ld_corrupted"]
ld = lambda comp, pos: c[comp]["logit_diff"][pos]          # pos T: every position
score = lambda comp, pos: c[comp]["mean_score"][pos]
exec(sys.argv[2])
PY
  then ok "$name"; else bad "$name: $(tail -3 "$dir/$name.err" "$dir/$name.txt")"; fi
}

check "GPN+M: the whole state at the last position and at every position gives the clean logit difference bit for bit" \
  "$fx/gpnm1.weights.safetensors" "$dir/p97.jsonl" "state,head:0,head:2,site:state.ground" '
assert ld("state", T - 1) == clean and ld("state", T) == clean, (ld("state", T - 1), clean)
assert score("state", T - 1) == 1 and score("state", T) == 1
assert all(ld("state", p) == corr for p in range(4)) and score("state", 0) == 0, "before the difference nothing changes"
assert ld("state", 4) == clean, "from the differing token on the clean state continues"
assert max(abs(a - b) for a, b in zip(ld("site:state.ground", T - 1), clean)) > 1e-3, "the memory is carried too"
assert all(ld("head:0", p) == corr for p in range(5)), "the memory after x_4 does not hold x_4 yet"
assert any(ld("head:2", T - 1)[i] != corr[i] for i in range(len(corr))), "a head patch changes something"
'
check "GPN: the whole state at the last position gives the clean logits" \
  "$fx/gpn.weights.safetensors" "$dir/p89.jsonl" "state" '
assert ld("state", T - 1) == clean and ld("state", T) == clean and all(ld("state", p) == corr for p in range(4))
'
check "Transformer++: the last layer's residual at the last position gives the clean logits, the first layer's does not" \
  "$fx/tpp2.weights.safetensors" "$dir/p89.jsonl" "site:blocks.1.hook_resid_post,site:blocks.0.hook_resid_post" '
assert ld("site:blocks.1.hook_resid_post", T - 1) == clean, "last layer, last position"
assert ld("site:blocks.1.hook_resid_post", T) == clean
assert any(abs(a - b) > 1e-4 for a, b in zip(ld("site:blocks.0.hook_resid_post", T - 1), clean)), "layer 0 alone"
assert ld("site:blocks.0.hook_resid_post", T) == clean, "every position of layer 0: the KV cache of layer 1 is clean too"
'
check "Gated DeltaNet: the last layer's residual at the last position gives the clean logits" \
  "$fx/gdn2.weights.safetensors" "$dir/p97.jsonl" "site:blocks.1.hook_resid_post,site:blocks.0.hook_resid_post" '
assert ld("site:blocks.1.hook_resid_post", T - 1) == clean and ld("site:blocks.1.hook_resid_post", T) == clean
assert all(ld("site:blocks.0.hook_resid_post", p) == corr for p in range(4))
'
check "Gated DeltaNet: the whole state (every layer's S and convolution inputs) from the differing token on gives the clean logits" \
  "$fx/gdn2.weights.safetensors" "$dir/p97.jsonl" "state,site:blocks.0.attn.state,site:blocks.1.attn.state" '
assert all(ld("state", p) == clean for p in range(4, T + 1)), [ld("state", p) == clean for p in range(T + 1)]
assert score("state", T - 1) == 1 and score("state", 4) == 1
assert all(ld("state", p) == corr for p in range(4)), "before the difference nothing changes"
for l in (0, 1):  # one layer'"'"'s S alone does not carry the clean run
    assert max(abs(a - b) for a, b in zip(ld(f"site:blocks.{l}.attn.state", 5), clean)) > 1e-4, l
'

# the default components, stored, with the heatmap script
if "$bin" patch "$fx/gpnm1.weights.safetensors" "$dir/p97.jsonl" --store "$dir/s.db" --plot "$dir/fig" >"$dir/default.txt" 2>&1; then
  n="$(sqlite3 "$dir/s.db" "SELECT count(*) FROM patch_results")"; comps="$(sqlite3 "$dir/s.db" "SELECT count(DISTINCT component) FROM patch_results")"
  one="$(sqlite3 "$dir/s.db" "SELECT mean_score FROM patch_summary WHERE component = 'state' AND position = 8")"
  [[ "$comps" == 5 && "$n" == $((5 * 10 * 6)) && "$one" == 1.0 && -s "$dir/fig/patch_heatmap.gp" ]] &&
    ok "default components (state, 3 heads, dir:s_bar) stored: $n rows, patch_summary's state at the last position $one, heatmap script" ||
    bad "store: $comps components, $n rows, '$one'; $(ls "$dir/fig" 2>&1)"
else bad "default run: $(tail -2 "$dir/default.txt")"; fi
# the heatmap's positions are labelled by the first pair's clean prompt (ids: no tokenizer was needed)
want="$("$py" -c "
import json, sys
p = next(json.loads(l) for l in open(sys.argv[1]) if l.strip() and not l.startswith('#'))
print(', '.join(f\"'{t} #{x}' {t}\" for t, x in enumerate(p['clean'])) + \", 'all' 9)\")" "$dir/p97.jsonl")"
grep -qF "set xtics ($want" "$dir/fig/patch_heatmap.gp" && ok "heatmap x axis: the clean prompt of pair 0 ($want)" ||
  bad "heatmap x axis: wanted ($want, got $(grep xtics "$dir/fig/patch_heatmap.gp")"

# bad input: one line, naming the file and line
m="$fx/gpnm1.weights.safetensors"
bad_line() { # LINE2 EXPECTED-TEXT
  printf '%s\n%s\n' '{"clean": [5, 6, 7], "corrupted": [5, 8, 7], "answer": 9, "foil": 10}' "$1" >"$dir/bad.jsonl"
  set +e; "$bin" patch "$m" "$dir/bad.jsonl" >/dev/null 2>"$dir/bad.err"; rc=$?; set -e
  local msg; msg="$(cat "$dir/bad.err")"
  [[ $rc -eq 1 && $(wc -l <"$dir/bad.err") -eq 1 && "$msg" == "gpnscope patch: $dir/bad.jsonl:2: "*"$2"* ]] &&
    ok "line 2 '$1': $msg" || bad "line 2 '$1': exit $rc, '$msg'"
}
bad_line '{"clean": [5, 6' "not valid JSON"
bad_line '{"clean": [5, 6, 7], "answer": 9, "foil": 10}' 'no "corrupted"'
bad_line '{"clean": [5, 6, 7], "corrupted": [5, 8], "answer": 9, "foil": 10}' "must be as long"
bad_line '{"clean": [5, 6, 7, 1], "corrupted": [5, 8, 7, 1], "answer": 9, "foil": 10}' "line 1's prompts have 3"
bad_line '{"clean": [5, 600, 7], "corrupted": [5, 8, 7], "answer": 9, "foil": 10}' "outside the model's vocabulary of 97"
bad_line '{"clean": [5, 6, 7], "corrupted": [5, 8, 7], "answer": 9, "foil": 9}' "the same token"
bad_line '{"clean": "some text", "corrupted": [5, 8, 7], "answer": 9, "foil": 10}' "no tokenizer was given"
bad_line '{"clean": [5, -6, 7], "corrupted": [5, 8, 7], "answer": 9, "foil": 10}' 'a token id: "clean"[1] = -6 is not an integer'
set +e; "$bin" patch "$m" "$dir/p97.jsonl" --components head:9 2>"$dir/h.err" >/dev/null; rc=$?; set -e
[[ $rc -eq 2 && "$(cat "$dir/h.err")" == *"head:9: a memory head 0..2"* ]] && ok "head:9 of three heads: $(cat "$dir/h.err")" || bad "head:9: $rc $(cat "$dir/h.err")"
set +e; "$bin" patch "$fx/tpp2.weights.safetensors" "$dir/p89.jsonl" --components state 2>"$dir/s.err" >/dev/null; rc=$?; set -e
[[ $rc -eq 2 && $(wc -l <"$dir/s.err") -eq 1 && "$(cat "$dir/s.err")" == *"carries its KV cache"* ]] && ok "state of a transformer: $(cat "$dir/s.err")" || bad "state of tpp: $rc $(cat "$dir/s.err")"
# the budget (issue 35.3): a 1000-token pair is refused before any work, naming the plan and the option;
# with the option raised it runs, after printing the plan
"$py" -c "
import json
w = [5 + i % 80 for i in range(1000)]
print(json.dumps({'clean': w, 'corrupted': w[:500] + [90] + w[501:], 'answer': 9, 'foil': 10}))" >"$dir/long.jsonl"
set +e; "$bin" patch "$m" "$dir/long.jsonl" >/dev/null 2>"$dir/long.err"; rc=$?; set -e
[[ $rc -eq 1 && $(wc -l <"$dir/long.err") -eq 1 && "$(cat "$dir/long.err")" == *"5 components x 1000 positions (+ 'all'): 5007 passes of 1001 steps over 1 pair = 5012007 token steps, more than --max-steps 2000000"* ]] &&
  ok "a 1000-token pair: $(cat "$dir/long.err")" || bad "1000-token pair: exit $rc: $(cat "$dir/long.err")"
"$bin" patch "$m" "$dir/p97.jsonl" --components state --max-steps 10000 --json >/dev/null 2>"$dir/plan.err" &&
  [[ "$(head -1 "$dir/plan.err")" == "patch: 1 component x 9 positions (+ 'all'): 12 passes of 10 steps over 6 pairs = 720 token steps" ]] &&
  ok "the plan printed before the sweep: $(head -1 "$dir/plan.err")" || bad "plan: $(cat "$dir/plan.err")"
set +e; "$bin" patch "$m" "$dir/p97.jsonl" --components state --max-steps 719 >/dev/null 2>"$dir/plan.err"; rc=$?; set -e
[[ $rc -eq 1 && "$(cat "$dir/plan.err")" == *"720 token steps, more than --max-steps 719"* ]] && ok "--max-steps 719 refuses 720" || bad "max-steps: $rc $(cat "$dir/plan.err")"
# with the option, progress on a terminal (drawn only there: script(1) gives it one)
if command -v script >/dev/null; then
  script -qec "'$bin' patch '$m' '$dir/p97.jsonl' --components state --max-steps 10000" /dev/null | tr '\r' '\n' >"$dir/tty.txt"
  grep -aq '^patch \[#*\] 12/12 runs' "$dir/tty.txt" && ok "progress on a terminal: $(grep -a '^patch \[' "$dir/tty.txt" | tail -1 | sed 's/\x1b\[K//')" ||
    bad "patch's progress on a terminal: $(head -c 300 "$dir/tty.txt")"
fi
# identical prompts: no NaN table, one line saying why
printf '%s\n' '{"clean": [5, 6, 7], "corrupted": [5, 6, 7], "answer": 9, "foil": 10}' >"$dir/same.jsonl"
set +e; "$bin" patch "$m" "$dir/same.jsonl" >"$dir/same.out" 2>"$dir/same.err"; rc=$?; set -e
[[ $rc -eq 1 && ! -s "$dir/same.out" && "$(tail -1 "$dir/same.err")" == *"give the same logit difference (LD_clean - LD_corrupted = 0), so no score can be normalised"* ]] &&
  ok "identical prompts: $(tail -1 "$dir/same.err")" || bad "identical prompts: exit $rc: $(cat "$dir/same.out" "$dir/same.err" | head -3)"
finish

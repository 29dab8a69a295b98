#!/usr/bin/env bash
# gpnscope automaton (docs/automaton.md): --help explains every option; the
# exact reference (one-hot of each node's monoid element) gives purity 1 and
# ARI 1 in every cell, with the silhouette finding every element of its
# sample; the random reference gives |ARI| < 0.05 in every cell of >= 500
# points; the same seed gives the same cells; --db stores the experiment and
# its cells (read back through gpnscope sql) and --plot draws from them; a
# random MLP-LDRU checkpoint written here with numpy (the tensor names of
# engine/arch/ldru/ldru_family.c) runs through the LDRU glue, its level 0
# separating parity's two symbols exactly; bad input is one line, exit 2
# (usage) or 1 (a model that cannot be measured).
set -uo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
need_python numpy
scratch_dir automaton
fail=0; pass=0
ok() { echo "ok: $1"; pass=$((pass+1)); }
bad() { echo "FAIL: $1"; fail=$((fail+1)); }
expect() { # CODE PATTERN CMD...: exit CODE, one line on stderr matching PATTERN
  local code="$1" pattern="$2"; shift 2
  local err; err="$("$@" 2>&1 >/dev/null)"; local rc=$?
  if [[ $rc -eq $code && $(printf '%s\n' "$err" | wc -l) -eq 1 && "$err" == *"$pattern"* ]]; then ok "${*:2}: $err"
  else bad "${*:2}: exit $rc (want $code, '$pattern'): $err"; fi
}
cells() { # JSON on stdin, a python expression over the list c of cells -> prints it
  "$py" -c "import json, sys; d = json.load(sys.stdin); c = d['cells']; print($1)"
}

help="$("$bin" automaton --help)"
for o in --reference --task --strings --max-length --train-length --seed --points --auto-points --db --plot --json; do
  [[ "$help" == *"$o"* ]] && ok "--help explains $o" || bad "--help lacks $o"
done

exact="$("$bin" automaton --reference exact --task tomita4 --strings 60 --max-length 90 --json)"
r=$(cells "all(x['kmeans_purity'] == 1 and x['kmeans_ari'] == 1 and x['auto_purity'] == 1 and x['auto_ari'] == 1 for x in c)" <<<"$exact")
[[ $r == True ]] && ok "exact reference: purity 1 and ARI 1 in every cell" || bad "exact reference: $exact"
r=$(cells "all(x['auto_k'] == x['auto_elements'] for x in c if x['auto_elements'] >= 2)" <<<"$exact")
[[ $r == True ]] && ok "exact reference: the silhouette finds every element" || bad "exact: clusters found differ from elements"
r=$(cells "d['monoid_size'], any(not x['in_distribution'] for x in c), all(x['max_span'] <= 40 for x in c if x['in_distribution'])" <<<"$exact")
[[ $r == "12 True True" ]] && ok "tomita4: monoid of 12, cells out of distribution, in ones <= 40" || bad "tomita4: $r"

random="$("$bin" automaton --reference random --task tomita4 --strings 60 --max-length 90 --json)"
r=$(cells "[round(x['kmeans_ari'], 4) for x in c if x['points'] >= 500 and x['elements'] >= 2 and abs(x['kmeans_ari']) >= 0.05], sum(x['points'] >= 500 for x in c)" <<<"$random")
[[ $r == "[] "[1-9]* ]] && ok "random reference: |ARI| < 0.05 in the large cells ($r)" || bad "random reference: $r"
again="$("$bin" automaton --reference random --task tomita4 --strings 60 --max-length 90 --json)"
[[ "$again" == "$random" ]] && ok "same seed, same cells" || bad "two runs with one seed differ"

out="$("$bin" automaton --reference exact --task parity --strings 20 --max-length 50 --db "$dir/a.db" --plot "$dir/fig")"
rc=$?
[[ $rc -eq 0 && "$out" == *"stored as automaton experiment 1"* ]] && ok "stored: ${out##*stored as }" || bad "store: exit $rc: $out"
n=$("$bin" sql "$dir/a.db" "SELECT count(*) FROM automaton_cells WHERE experiment_id = 1 AND kmeans_ari = 1" 2>&1 | tail -1 | tr -dc 0-9)
total=$("$bin" sql "$dir/a.db" "SELECT count(*) FROM automaton_cells" 2>&1 | tail -1 | tr -dc 0-9)
[[ -n "$n" && "$n" == "$total" && "$n" -gt 4 ]] && ok "automaton_cells: $n rows, all ARI 1" || bad "automaton_cells: $n of $total"
[[ -s "$dir/fig/automaton.gp" && -s "$dir/fig/automaton-in.dat" ]] && ok "--plot wrote automaton.gp and its data" || bad "--plot: $(ls "$dir/fig" 2>&1)"
if command -v gnuplot >/dev/null; then
  [[ -s "$dir/fig/automaton.png" ]] && ok "--plot drew automaton.png" || bad "no automaton.png"
fi

# a random MLP-LDRU checkpoint (d 8, ffn 16, 2 symbols, 2 classes)
"$py" - "$dir/ldru.safetensors" <<'PY'
import json, struct, sys
import numpy as np
d, f, S, C = 8, 16, 2, 2
shapes = {"ldru.embedding": (S, d), "ldru.op.mlp.w1": (4 * d, 2 * d), "ldru.op.mlp.b1": (4 * d,),
          "ldru.op.mlp.w2": (2 * d, 4 * d), "ldru.op.mlp.b2": (2 * d,), "ldru.op.v_left": (d, d), "ldru.op.b_left": (d,),
          "ldru.op.v_right": (d, d), "ldru.op.b_right": (d,), "ldru.op.w_out": (d, d), "ldru.op.b_out": (d,),
          "ldru.ffn.w1": (f, d), "ldru.ffn.b1": (f,), "ldru.ffn.w2": (d, f), "ldru.ffn.b2": (d,),
          "ldru.norm.weight": (d,), "ldru.norm.bias": (d,), "ldru.head.weight": (C, d), "ldru.head.bias": (C,)}
rng = np.random.default_rng(3)
header, blobs, at = {"__metadata__": {"arch": "ldru"}}, [], 0
for name, shape in shapes.items():
    x = (rng.standard_normal(shape) * 0.3).astype("<f4")
    if name == "ldru.norm.weight": x[:] = 1
    header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [at, at + x.nbytes]}
    blobs.append(x.tobytes()); at += x.nbytes
h = json.dumps(header).encode(); h += b" " * (-len(h) % 8)
with open(sys.argv[1], "wb") as out:
    out.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
PY
model="$dir/ldru.safetensors"
ldru="$("$bin" automaton "$model" --task parity --strings 30 --max-length 80 --json)"
r=$(cells "[(x['elements'], x['kmeans_purity'], x['kmeans_ari']) for x in c if x['grouping'] == 'level' and x['bucket'] == 0]" <<<"$ldru")
[[ $r == "[(2, 1, 1)]" ]] && ok "LDRU model: level 0 separates parity's two symbols exactly" || bad "LDRU level 0: $r"
r=$(cells "max(x['bucket'] for x in c if x['grouping'] == 'level')" <<<"$ldru")
[[ $r == 7 ]] && ok "LDRU model: levels 0..7 for strings up to 80" || bad "LDRU top level $r"

expect 2 "--task is required" "$bin" automaton --reference exact
expect 2 "unknown task 'nope'" "$bin" automaton --reference exact --task nope
expect 2 "--reference bogus: exact or random" "$bin" automaton --reference bogus --task parity
expect 2 "give either MODEL or --reference" "$bin" automaton "$model" --reference exact --task parity
expect 2 "give --db too" "$bin" automaton --reference exact --task parity --plot "$dir/x"
expect 2 "--strings wants" "$bin" automaton --reference exact --task parity --strings 0
expect 2 "--max-length wants" "$bin" automaton --reference exact --task parity --max-length 1001
expect 2 "unknown option '--bogus'" "$bin" automaton --reference exact --task parity --bogus
expect 1 "reads 2 symbols but task cycle_navigation has 3" "$bin" automaton "$model" --task cycle_navigation
expect 1 "reads MLP-LDRU's tree" "$bin" automaton "$GPNSCOPE_FIXTURES/reference/gpn.weights.safetensors" --task parity
expect 1 "$dir/missing.safetensors" "$bin" automaton "$dir/missing.safetensors" --task parity

echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]

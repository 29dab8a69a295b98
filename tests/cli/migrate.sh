#!/usr/bin/env bash
# Store schema version 2 (docs/schema.md, "Versions"): a version-1 store written
# by the code of its day (tests/fixtures/store-v1.db) is refused by readers with
# a one-line hint that names `gpnscope migrate`, and left byte for byte as it
# was; `gpnscope migrate` brings it to version 2 in one transaction, adding the
# run's sites and changing no recorded row; analyzing it again gives exactly
# the numbers its own code stored; a writer (analyze) migrates on open too.
set -euo pipefail
. "$GPNSCOPE_SOURCE/tests/cli/lib/prelude.sh"
scratch_dir migrate; cd "$dir"
fx="$GPNSCOPE_FIXTURES/store-v1.db"
model="$GPNSCOPE_FIXTURES/reference/gpnm1.weights.safetensors"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"
rows() { # DB: every recorded row and every stored result, as text
  sqlite3 "$1" "select * from runs order by id; select * from tokens order by 1, 2, 3;
    select * from head_steps order by 1, 2, 3, 4; select run_id, window, position, kind, dtype, hex(vector) from states order by 1, 2, 3, 4;
    select a.name, a.settings, s.key, s.value from analyses a join analysis_scalars s on s.analysis_id = a.id order by 1, 3;
    select a.name, x.series, x.idx, x.x, x.y, x.label from analyses a join analysis_series x on x.analysis_id = a.id order by 1, 2, 3;"
}
results() { # DB: the analyses' numbers (not their ids or times)
  sqlite3 "$1" "select a.name, a.settings, s.key, quote(s.value) from analyses a join analysis_scalars s on s.analysis_id = a.id order by 1, 3;
    select a.name, x.series, x.idx, quote(x.x), quote(x.y), x.label from analyses a join analysis_series x on x.analysis_id = a.id order by 1, 2, 3;
    select a.name, v.key, hex(v.vector) from analyses a join analysis_vectors v on v.analysis_id = a.id order by 1, 2;"
}

cp "$fx" v1.db
[[ "$(sqlite3 v1.db "pragma user_version")" == 1 ]] && ok "the fixture is a version-1 store" || bad "fixture version"
before="$(md5sum < v1.db)"
set +e; "$bin" sql v1.db "select count(*) from runs" >/dev/null 2>err.txt; rc=$?; set -e
[[ $rc -ne 0 && $(wc -l <err.txt) -eq 1 ]] && grep -q "gpnscope migrate" err.txt && [[ "$(md5sum < v1.db)" == "$before" ]] &&
  ok "a reader refuses it in one line naming the command, and leaves it as it was: $(cat err.txt)" || bad "reader on v1: exit $rc $(cat err.txt)"
rows v1.db > rows-v1.txt
results v1.db > results-v1.txt

cp v1.db m.db
"$bin" migrate m.db > out.txt && grep -q "schema version 3" out.txt && ok "migrate: $(cat out.txt)" || bad "migrate: $(cat out.txt)"
[[ "$(sqlite3 m.db "pragma user_version; pragma integrity_check")" == $'3\nok' ]] && ok "version 3, integrity ok" || bad "after migrate"
[[ "$(sqlite3 m.db "select count(*) from sqlite_schema where name in ('attention_queries', 'attention_topk', 'attention_matrices', 'logit_attribution', 'attention_top_text')")" == 5 ]] &&
  ok "version 3's causal tables and view are there" || bad "version 3 tables missing"
rows m.db > rows-m.txt
cmp -s rows-v1.txt rows-m.txt && ok "no recorded row or stored result changed" || bad "migration changed rows"
sites="$(sqlite3 m.db "select site || ' ' || shape || ' ' || width || ' ' || stored_in || ':' || stored_as || ' ' || ifnull(role, '-') from run_sites order by site")"
want=$'mem.alpha per-head scalar 3 head_steps:alpha decay\nmem.beta per-head scalar 3 head_steps:beta -\nmem.norm per-head scalar 3 head_steps:mem_norm -\nnll scalar 1 tokens:nll -\nstate.ground vector 40 states:ground -\nstate.pred vector 40 states:pred state'
[[ "$sites" == "$want" ]] && ok "the run's sites, inferred from its rows" || bad "run_sites:"$'\n'"$sites"
once="$(rows m.db; sqlite3 m.db "select * from run_sites order by 1, 2")"
"$bin" migrate m.db >/dev/null && [[ "$(rows m.db; sqlite3 m.db "select * from run_sites order by 1, 2")" == "$once" ]] &&
  ok "migrating again changes nothing" || bad "second migrate"

"$bin" analyze m.db --model "$model" >/dev/null 2>err.txt && ok "analyze the migrated store" || bad "analyze: $(cat err.txt)"
results m.db > results-m.txt
# every number version 1's code stored comes out again (later code may add new ones beside them): every
# name, key and index the same, every number to 1e-6 relative. Not to the bit: the fixture was stored on
# another machine, and OpenBLAS and LAPACK pick their kernels by CPU, so the last bits of a sum may differ
missing="$("$py" - results-v1.txt results-m.txt <<'PY'
import struct, sys
def fields(line):
    out = []
    for f in line.rstrip("\n").split("|"):
        try: out.append(("n", float(f)))
        except ValueError:
            if len(f) >= 8 and len(f) % 8 == 0 and all(c in "0123456789ABCDEF" for c in f):
                out.append(("v", struct.unpack("<%df" % (len(f) // 8), bytes.fromhex(f))))
            else: out.append(("s", f))
    return out
def close(a, b): return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b)) or a == b
def same(x, y):
    if len(x) != len(y): return False
    for (ka, a), (kb, b) in zip(x, y):
        if ka != kb: return False
        if ka == "s" and a != b: return False
        if ka == "n" and not close(a, b): return False
        if ka == "v" and (len(a) != len(b) or not all(close(p, q) for p, q in zip(a, b))): return False
    return True
old = [fields(l) for l in open(sys.argv[1])]
new = {}
for l in open(sys.argv[2]):
    f = fields(l)
    new.setdefault(tuple(v for k, v in f if k == "s"), []).append(f)
# retired by the pools' likelihood-ratio rule (issue 39.5, docs/analyses.md): the 2-means separation's
# null draws and bootstrap, which pool_lr_* replace; `separation` itself is still stored
retired = ("separation_boot_", "separation_null_")
for l, f in zip(open(sys.argv[1]), old):
    if len(f) > 2 and f[2][0] == "s" and f[2][1].startswith(retired): continue
    if not any(same(f, g) for g in new.get(tuple(v for k, v in f if k == "s"), [])): print(l.rstrip()[:200])
PY
)"
if [[ -z "$missing" && -s results-v1.txt ]]; then ok "every analysis number equals what version 1's code stored, to 1e-6 ($(wc -l <results-v1.txt) rows)"
else bad "analysis numbers differ after migrating: $(head -c 600 <<<"$missing")"; fi

cp v1.db w.db
"$bin" analyze w.db --model "$model" --only geometry >/dev/null 2>err.txt && [[ "$(sqlite3 w.db "pragma user_version")" == 3 ]] &&
  ok "a writer (analyze) migrates on open" || bad "analyze on v1: $(cat err.txt)"
set +e; "$bin" migrate missing.db >/dev/null 2>err.txt; rc=$?; set -e
[[ $rc -eq 1 && ! -e missing.db && $(wc -l <err.txt) -eq 1 ]] && ok "migrate of a missing file: one line, nothing created" || bad "migrate missing: $rc"
finish

# Sourced by the family tests (tests/cli/family_*.sh; not a test itself):
#   numpy_horizons DB KIND DIR [WINDOWS POSITIONS]
# checks that analyze's geometry norm mean and its raw / centered lag cosines
# at k = 1..3, as stored in DB, equal numpy's from the stored states of KIND
# (optionally: that there are WINDOWS windows of POSITIONS states each).
# Needs $py and the caller's ok / bad functions; writes states.json and results.json into DIR.
numpy_horizons() {
  local db="$1" kind="$2" out="$3" windows="${4:-0}" positions="${5:-0}"
  sqlite3 -json "$db" "select window, position, hex(vector) as v from states where kind = '$kind'" >"$out/states.json"
  sqlite3 -json "$db" "select s.key, s.value from analysis_scalars s join analyses a on a.id = s.analysis_id
    union all select series || ':' || x, y from analysis_series s join analyses a on a.id = s.analysis_id
    where a.name = 'horizons' and series in ('raw', 'centered') and x <= 3" >"$out/results.json"
  "$py" - "$out/states.json" "$out/results.json" "$windows" "$positions" <<'PY' &&
import json, sys
import numpy as np
rows = json.load(open(sys.argv[1]))
got = {r["key"]: r["value"] for r in json.load(open(sys.argv[2]))}
windows, positions = int(sys.argv[3]), int(sys.argv[4])
W = {}
for r in rows:
    W.setdefault(r["window"], {})[r["position"]] = np.frombuffer(bytes.fromhex(r["v"]), "<f4").astype(np.float64)
if windows:
    assert len(W) == windows and all(len(w) == positions for w in W.values()), len(W)
S = np.array([v for w in sorted(W) for _, v in sorted(W[w].items())])
norms = np.linalg.norm(S, axis=1)
assert abs(norms.mean() - got["norm_mean"]) < 1e-9 * max(1, norms.mean()), (norms.mean(), got["norm_mean"])
def lag_cos(k, centered):
    cs = []
    for w in W.values():
        X = np.array([w[t] for t in sorted(w)])
        if centered:
            X = X - X.mean(axis=0)
        a, b = X[:-k], X[k:]
        na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
        keep = (na > 0) & (nb > 0)
        cs.extend((a[keep] * b[keep]).sum(1) / (na[keep] * nb[keep]))
    return np.mean(cs)
for k in (1, 2, 3):
    for name, centered in (("raw", False), ("centered", True)):
        want, have = lag_cos(k, centered), got["%s:%d.0" % (name, k)]
        assert abs(want - have) < 1e-6, (name, k, want, have)
print("numpy agrees")
PY
    ok "norm mean and the raw / centered lag cosines at k = 1..3 equal numpy's ($kind)" ||
    bad "analyze's numbers differ from numpy's ($kind)"
}

#!/usr/bin/env bash
# gpnscope automaton's state geometry (docs/automaton.md, "State geometry"):
# on a tiny MLP-LDRU trained on parity, the four sets (prefix states and node
# vectors, in and out of distribution) are printed, in the JSON and stored in
# automaton_geometry with the sample they were measured on; numpy, from that
# stored sample alone, recomputes every stored number (norm mean, ||mean||,
# total variance, the cumulative explained variance, components for 90% and
# 99%, participation ratio, stable rank) to 1e-6; the samples are what they
# claim (every prefix state at t = 0 is a leaf, so at least one prefix state
# per string equals a node vector; the node sets split in and out as the
# level cells do, and there is a prefix state per leaf); a reference
# source has node sets only; --geometry-points 0 turns it off; a bad count is
# one line.
set -uo pipefail
py="${GPNSCOPE_PYTHON:-/usr/bin/python3}"
"$py" -c "import numpy" 2>/dev/null || { echo "SKIPPED: $py has no numpy"; exit 77; }
bin="$GPNSCOPE_BIN"
dir="$GPNSCOPE_BUILD/test-scratch/automaton_geometry"; rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
. "$GPNSCOPE_SOURCE/tests/cli/lib/verdicts.sh"

cat >p.json <<'JSON'
{"task": "parity", "model": {"d_model": 8, "d_ffn": 16},
 "training": {"steps": 20, "batch": 8, "max_length": 8, "seed": 3, "threads": 1, "log_every": 5},
 "optimizer": {"lr": 3e-3, "warmup": 2}, "eval": {"count": 2, "ood_max": 20, "ood_lengths": 1},
 "output": {"dir": "p"}}
JSON
"$bin" train --config p.json --quiet >/dev/null 2>err || { echo "FAIL: train: $(cat err)"; exit 1; }
args=(p/model.safetensors --task parity --strings 30 --max-length 40 --train-length 8 --points 200 --auto-points 50)
"$bin" automaton "${args[@]}" --geometry-points 5000 --db g.db --json >g.json 2>err &&
  ok "automaton with the geometry (every state kept: 5000 per set)" || bad "automaton: $(cat err)"
"$bin" automaton "${args[@]}" --geometry-points 150 --seed 4 >g.txt 2>err && grep -q "^state geometry" g.txt &&
  [[ $(grep -cE "^(prefix|node) +(in|out) " g.txt) -eq 4 ]] && ok "the text table: four rows" || bad "text: $(cat g.txt err)"
"$py" - <<'PY' && ok "numpy on the stored samples gives every stored and printed number" || bad "numpy check"
import json, sqlite3
import numpy as np
j = json.load(open("g.json"))
db = sqlite3.connect("g.db")
rows = db.execute("select states, in_distribution, n_seen, n_states, d, norm_mean, mean_norm, total_variance, components_90,"
                  " components_99, participation_ratio, stable_rank, cumulative_explained, vectors from automaton_geometry"
                  " where experiment_id = ? order by states = 'node', in_distribution desc", (j["experiment_id"],)).fetchall()
assert [(r[0], r[1]) for r in rows] == [("prefix", 1), ("prefix", 0), ("node", 1), ("node", 0)], [(r[0], r[1]) for r in rows]
assert [(g["states"], g["in_distribution"]) for g in j["geometry"]] == [(r[0], bool(r[1])) for r in rows], j["geometry"]
close = lambda a, b: abs(a - b) <= 1e-6 * max(1.0, abs(b))
X = {}
for r, g in zip(rows, j["geometry"]):
    states, ind, seen, n, d, nm, mn, tv, c90, c99, pr, sr, cum, blob = r
    x = np.frombuffer(blob, "<f4").reshape(n, d).astype(np.float64)
    assert n == seen == g["seen"] == g["n_states"] and d == 8 == g["d"], (states, ind, n, seen, g)  # cap 5000: every state
    X[states, ind] = x
    lam = np.clip(np.linalg.eigvalsh(np.cov(x.T, ddof=1))[::-1], 0, None)
    c = np.cumsum(lam) / lam.sum()
    want = {"norm_mean": np.linalg.norm(x, axis=1).mean(), "mean_norm": np.linalg.norm(x.mean(0)), "total": lam.sum(),
            "pr": lam.sum() ** 2 / (lam ** 2).sum(), "sr": lam.sum() / lam[0]}
    n90, n99 = int(np.argmax(c >= 0.9 - 1e-12)) + 1, int(np.argmax(c >= 0.99 - 1e-12)) + 1
    assert close(nm, want["norm_mean"]) and close(mn, want["mean_norm"]) and close(tv, want["total"]), (states, ind, nm, mn, tv, want)
    assert close(pr, want["pr"]) and close(sr, want["sr"]), (states, ind, pr, sr, want)
    assert (c90, c99) == (n90, n99) == (g["components_90"], g["components_99"]), (states, ind, c90, c99, n90, n99)
    assert all(close(a, b) for a, b in zip(json.loads(cum), c)) and all(close(a, b) for a, b in zip(g["cumulative_explained"], c))
    assert close(g["participation_ratio"], want["pr"]) and close(g["stable_rank"], want["sr"])
    print(states, "in" if ind else "out", n, "states: 90%%/99%% at %d/%d, participation %.3f" % (n90, n99, want["pr"]))
# the node sets are every node the analysis clustered; prefix states at t = 0 are leaves (node vectors)
assert X["node", 1].shape[0] + X["node", 0].shape[0] == j["nodes"], j["nodes"]
nodes = np.concatenate([X["node", 1], X["node", 0]])
dist = np.sqrt(((X["prefix", 1][:, None, :] - nodes[None, :, :]) ** 2).sum(-1)).min(1)
assert (dist < 1e-4).sum() >= j["strings"], ((dist < 1e-4).sum(), j["strings"])
# in and out as the cells split them (segments of at most 8 symbols in); a prefix state per symbol
lv = [c for c in j["cells"] if c["grouping"] == "level"]
for ind in (1, 0):
    assert X["node", ind].shape[0] == sum(c["nodes"] for c in lv if c["in_distribution"] == bool(ind)), ind
leaves = sum(c["nodes"] for c in lv if c["bucket"] == 0)
assert X["prefix", 1].shape[0] + X["prefix", 0].shape[0] == leaves and 0 < X["prefix", 0].shape[0] and X["node", 0].shape[0] > 0
PY
"$bin" automaton --reference exact --task parity --strings 20 --max-length 40 --train-length 8 --json >ref.json 2>err &&
  "$py" -c 'import json,sys; g=json.load(open("ref.json"))["geometry"]; assert [x["states"] for x in g] == ["node", "node"], g' &&
  ok "a reference source: the node sets only" || bad "reference: $(cat err)"
"$bin" automaton "${args[@]}" --geometry-points 0 --json >none.json 2>err &&
  "$py" -c 'import json; assert "geometry" not in json.load(open("none.json"))' && ok "--geometry-points 0: none" ||
  bad "--geometry-points 0: $(cat err)"
"$bin" automaton "${args[@]}" --geometry-points -1 >/dev/null 2>err; rc=$?
[[ $rc -eq 2 && $(wc -l <err) -eq 1 ]] && grep -q "geometry-points" err && ok "a bad count: $(cat err)" || bad "bad count: exit $rc $(cat err)"
finish

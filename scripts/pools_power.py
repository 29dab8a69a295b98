#!/usr/bin/python3
"""The retention-pools rule's false positives and power, candidate by candidate
(issue 39.5; docs/analyses.md, section 3, "Power").

usage: pools_power.py [--heads 8,15,32] [--draws N] [--sets S] [--seed K]
       pools_power.py --check-power H [--draws N] [--sets S] [--seed K]

A candidate is a statistic of the heads' log 1/e times, location- and
scale-free; its rule calls the pools present when every deciding null family
rejects one pool at p + 4 SE < 0.05 (the p of N draws of H values of that
family, +1 smoothed, SE = sqrt(p (1 - p) / N)), as analyses/state/pools.c
does. For each head count the table gives, per candidate, the share of fresh
one-pool sets of each family that the rule calls present (its false-positive
rate) and the share of two-pool sets it calls present (its power): the
paper's configuration (40% of the heads log-uniform at 1-3 tokens, the rest
at 5-322: its 6 + 9 of 15) and the demo model's own fitted pools, as
proportions of the heads with their 1/e-time ranges.

--check-power H prints the chosen rule's power on the paper's configuration
at H heads and its false-present rate under the uniform null (H heads
log-uniform at 1-322 tokens), each with its standard error, "P SE F SE", for
tests/unit/test_pools_oracle.c.
Written from docs/analyses.md, not from the C code: the C test compares the two
within Monte Carlo error.
"""
import argparse
import sys

import numpy as np

FAMILIES = ("normal", "uniform", "laplace", "t3", "init")
ALPHA, Z = 0.05, 4.0
# the demo model's pools (gpnscope demo, docs/analyses.md): the 2-means split of its all-starts 1/e times
# (12 heads at 0.64-14.2 tokens, 3 at 34-636) and the likelihood ratio's from the start (6 at 0.82-2.06, 9 at 5.25-636)
FITTED = {"2-means": (12 / 15, (0.6375, 34.03), (14.17, 636.5)), "LR": (6 / 15, (0.8226, 5.251), (2.061, 636.5))}
PAPER = (0.4, (1.0, 5.0), (3.0, 322.0))


def one_pool(rng, family, n, H):
    """n sets of H log 1/e times of one pool (only the shape matters)"""
    if family == "normal":
        return rng.standard_normal((n, H))
    if family == "uniform":
        return rng.random((n, H))
    if family == "laplace":
        return rng.laplace(size=(n, H))
    if family == "t3":
        return rng.standard_t(3, size=(n, H))
    # the initialisation's: tau = 1 / (A dt), A ~ U(0, 16), dt log-uniform in [0.001, 0.1]
    A = 16.0 * (1.0 - rng.random((n, H)))
    dt = np.exp(np.log(0.001) + rng.random((n, H)) * (np.log(0.1) - np.log(0.001)))
    return -np.log(A) - np.log(dt)


def two_pools(rng, n, H, share, lo, hi):
    """n sets of H log 1/e times, round(share H) (at least 1, at most H - 1) log-uniform in [lo[0], hi[0]]
    tokens, the rest in [lo[1], hi[1]]"""
    fast = min(H - 1, max(1, int(np.floor(share * H + 0.5))))
    parts = [np.log(lo[k]) + rng.random((n, m)) * (np.log(hi[k]) - np.log(lo[k])) for k, m in ((0, fast), (1, H - fast))]
    return np.concatenate(parts, axis=1)


def cut_sums(v):
    """per cut c = 1..H-1 of sorted rows v (the c lowest one pool): sizes, means and squared errors of both"""
    H = v.shape[1]
    x = v - v.mean(1, keepdims=True)
    s, s2 = np.cumsum(x, 1)[:, :-1], np.cumsum(x * x, 1)[:, :-1]
    tot, tot2 = x.sum(1, keepdims=True), (x * x).sum(1, keepdims=True)
    c = np.arange(1, H)[None, :]
    sse0 = np.maximum(s2 - s * s / c, 0)
    sse1 = np.maximum((tot2 - s2) - (tot - s) ** 2 / (H - c), 0)
    return c, sse0, sse1, s / c, (tot - s) / (H - c)


def min_pool(H):
    """the fewest heads a pool holds under the likelihood ratio: 3, or H / 2 below 6 heads (at least 1)"""
    return max(1, min(3, H // 2))


def stat_lr(v):
    """the chosen statistic: the log likelihood ratio of two normal pools (each its own mean and variance,
    at least min_pool heads, variance floored at 1e-3 of the overall) against one, at the best cut"""
    H = v.shape[1]
    c, sse0, sse1, _, _ = cut_sums(v)
    var = v.var(1, keepdims=True)
    v0, v1 = np.maximum(sse0 / c, 1e-3 * var), np.maximum(sse1 / (H - c), 1e-3 * var)
    lr = 0.5 * (H * np.log(var) - c * np.log(v0) - (H - c) * np.log(v1))
    m = min_pool(H)
    return np.where((c >= m) & (H - c >= m), lr, -np.inf).max(1)


def stat_separation(v, m=1):
    """the 2-means separation (gap of the pools' means / pooled within sd), the first rule's statistic"""
    H = v.shape[1]
    c, sse0, sse1, m0, m1 = cut_sums(v)
    sse = np.where((c >= m) & (H - c >= m), sse0 + sse1, np.inf)
    i = np.argmin(sse, 1)
    r = np.arange(v.shape[0])
    sw = np.maximum(np.sqrt(sse[r, i] / (H - 2)), 0.01)
    return (m1[r, i] - m0[r, i]) / sw


def stat_gap(v, m=3):
    """the largest gap between consecutive log 1/e times (at least m heads either side) over the mean of the
    other gaps"""
    H = v.shape[1]
    d = np.diff(v, axis=1)
    c = np.arange(1, H)[None, :]
    rest = ((v[:, -1:] - v[:, :1]) - d) / (H - 2)
    g = np.where((c >= m) & (H - c >= m), d / np.maximum(rest, 1e-12), -np.inf)
    return g.max(1)


def stat_gmm(v, equal, iters=60, floor=0.05):
    """log likelihood ratio of a 2-component Gaussian mixture (EM from the 2-means split; equal or own
    variances, sd floored at `floor` of the overall) against one Gaussian"""
    n, H = v.shape
    z = (v - v.mean(1, keepdims=True)) / v.std(1, keepdims=True)
    c, sse0, sse1, m0, m1 = cut_sums(z)
    i = np.argmin(sse0 + sse1, 1)
    r = np.arange(n)
    k = c[0, i][:, None]
    w, a, b = k / H, m0[r, i][:, None], m1[r, i][:, None]
    if equal:
        va = vb = np.maximum((sse0 + sse1)[r, i][:, None] / H, floor ** 2)
    else:
        va, vb = np.maximum(sse0[r, i][:, None] / k, floor ** 2), np.maximum(sse1[r, i][:, None] / (H - k), floor ** 2)
    for it in range(iters + 1):
        la = np.log(w) - 0.5 * np.log(va) - 0.5 * (z - a) ** 2 / va
        lb = np.log1p(-w) - 0.5 * np.log(vb) - 0.5 * (z - b) ** 2 / vb
        if it == iters:
            return np.logaddexp(la, lb).sum(1) + 0.5 * (z * z).sum(1)
        ra = np.exp(la - np.logaddexp(la, lb))
        rb = 1 - ra
        na, nb = ra.sum(1, keepdims=True).clip(1e-9), rb.sum(1, keepdims=True).clip(1e-9)
        w = (na / H).clip(1e-6, 1 - 1e-6)
        a, b = (ra * z).sum(1, keepdims=True) / na, (rb * z).sum(1, keepdims=True) / nb
        sa, sb = (ra * (z - a) ** 2).sum(1, keepdims=True), (rb * (z - b) ** 2).sum(1, keepdims=True)
        if equal:
            va = vb = np.maximum((sa + sb) / H, floor ** 2)
        else:
            va, vb = np.maximum(sa / na, floor ** 2), np.maximum(sb / nb, floor ** 2)


# name: (statistic, deciding families, what it is)
CANDIDATES = {
    "separation, 5 nulls": (stat_separation, FAMILIES, "the first rule: 2-means separation, every family decides"),
    "separation, 3 nulls": (stat_separation, ("normal", "uniform", "init"), "the same, t3 and Laplace reported only"),
    "separation, pools >= 3": (lambda v: stat_separation(v, 3), FAMILIES, "2-means cut with 3 heads a pool"),
    "largest gap": (stat_gap, FAMILIES, "largest gap (3 heads either side) / mean other gap"),
    "GMM LR, equal var": (lambda v: stat_gmm(v, True), FAMILIES, "EM mixture, one variance"),
    "GMM LR, own var": (lambda v: stat_gmm(v, False), FAMILIES, "EM mixture, a variance each"),
    "GMM LR, own var, 3 nulls": (lambda v: stat_gmm(v, False), ("normal", "uniform", "init"), "the same, t3 and "
                                 "Laplace reported only"),
    "pools LR (chosen)": (stat_lr, FAMILIES, "two normal pools of >= 3 heads against one"),
}
CHOSEN = "pools LR (chosen)"


class Rule:
    """a candidate calibrated at H heads: N sorted null scores per family"""

    def __init__(self, stat, deciding, H, draws, rng):
        self.stat, self.deciding, self.draws = stat, deciding, draws
        self.null = {f: np.sort(stat(np.sort(one_pool(rng, f, draws, H), 1))) for f in FAMILIES}

    def present(self, v):
        s = self.stat(np.sort(v, 1))
        yes = np.ones(len(s), dtype=bool)
        for f in self.deciding:
            p = (1.0 + self.draws - np.searchsorted(self.null[f], s, side="left")) / (1.0 + self.draws)
            yes &= p + Z * np.sqrt(p * (1 - p) / self.draws) < ALPHA
        return yes


def table(heads, draws, sets, seed):
    rng = np.random.default_rng(seed)
    alts = [("paper", PAPER)] + [(f"fitted ({k})", FITTED[k]) for k in FITTED]
    print(f"{draws} null draws a family, {sets} sets a row, seed {seed}; present when every deciding family's "
          f"p + 4 SE < 0.05\n")
    print("| heads | candidate | false present: " + " / ".join(FAMILIES) + " | power: " +
          " / ".join(a for a, _ in alts) + " |")
    print("|---|---|---|---|")
    for H in heads:
        for name, (stat, deciding, _) in CANDIDATES.items():
            rule = Rule(stat, deciding, H, draws, rng)
            fp = [rule.present(one_pool(rng, f, sets, H)).mean() for f in FAMILIES]
            pw = [rule.present(two_pools(rng, sets, H, *a)).mean() for _, a in alts]
            mark = lambda f, x: f"{x:.3f}" if f in deciding else f"({x:.3f})"
            print(f"| {H} | {name} | " + " / ".join(mark(f, x) for f, x in zip(FAMILIES, fp)) + " | " +
                  " / ".join(f"{x:.3f}" for x in pw) + " |", flush=True)
    print("\n(a false-present rate in brackets: that family does not decide the candidate's rule)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heads", default="8,15,32")
    ap.add_argument("--draws", type=int, default=20000)
    ap.add_argument("--sets", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--check-power", type=int, metavar="H")
    a = ap.parse_args()
    if a.check_power:
        rng = np.random.default_rng(a.seed)
        stat, deciding, _ = CANDIDATES[CHOSEN]
        rule = Rule(stat, deciding, a.check_power, a.draws, rng)
        p = rule.present(two_pools(rng, a.sets, a.check_power, *PAPER)).mean()
        f = rule.present(two_pools(rng, a.sets, a.check_power, 0.4, (1.0, 1.0), (322.0, 322.0))).mean()
        print(" ".join(f"{x:.6f} {np.sqrt(x * (1 - x) / a.sets):.6f}" for x in (p, f)))
        return 0
    table([int(h) for h in a.heads.split(",")], a.draws, a.sets, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Independent numpy oracle for the analyses (tests/unit/test_analyses_oracle.c).

usage: oracle.py DIR

DIR holds what the C test wrote: meta.txt ("n d"), states.f32 (n x d),
window.i64, pos.i32, lags.i32 (the lag grid), sample.i32 (the heatmap
coordinates). Writes, as little-endian float64 unless noted: mean, std (per
coordinate, ddof=1), eig (covariance eigenvalues, descending), corr (mean and
max |off-diagonal| Pearson correlation), sample_corr, norms (mean, std ddof=1),
ratios (stable rank, participation ratio), raw, centered (lag cosines) and
npairs.i64 (raw counts then centered counts).

The definitions are written from docs/analyses.md, not from the C code:
np.cov / np.corrcoef / np.linalg.eigvalsh, and the lag cosine as a plain loop
over pairs of positions in one window.
"""
import os
import sys

import numpy as np


def main(d):
    n, dim = (int(v) for v in open(os.path.join(d, "meta.txt")).read().split())
    X = np.fromfile(os.path.join(d, "states.f32"), dtype="<f4").reshape(n, dim).astype(np.float64)
    win = np.fromfile(os.path.join(d, "window.i64"), dtype="<i8")
    pos = np.fromfile(os.path.join(d, "pos.i32"), dtype="<i4")
    lags = np.fromfile(os.path.join(d, "lags.i32"), dtype="<i4")
    sample = np.fromfile(os.path.join(d, "sample.i32"), dtype="<i4")

    def out(name, arr, dtype="<f8"):
        np.asarray(arr, dtype=dtype).tofile(os.path.join(d, name))

    C = np.cov(X, rowvar=False)
    out("mean", X.mean(axis=0))
    out("std", X.std(axis=0, ddof=1))
    ev = np.linalg.eigvalsh(C)[::-1]
    out("eig", ev)
    R = np.corrcoef(X, rowvar=False)
    off = np.abs(R[~np.eye(dim, dtype=bool)])
    out("corr", [off.mean(), off.max()])
    out("sample_corr", R[np.ix_(sample, sample)])
    norms = np.linalg.norm(X, axis=1)
    out("norms", [norms.mean(), norms.std(ddof=1)])
    lam = np.clip(ev, 0, None)
    out("ratios", [lam.sum() / lam.max(), np.trace(C) ** 2 / np.sum(C * C)])

    raw = np.zeros(len(lags))
    cen = np.zeros(len(lags))
    nraw = np.zeros(len(lags), dtype=np.int64)
    ncen = np.zeros(len(lags), dtype=np.int64)
    for w in np.unique(win):
        idx = np.where(win == w)[0]
        S = X[idx]
        P = pos[idx]
        where = {int(p): i for i, p in enumerate(P)}
        for centered in (False, True):
            Y = S - S.mean(axis=0) if centered else S
            nr = np.linalg.norm(Y, axis=1)
            for li, k in enumerate(lags):
                for i, p in enumerate(P):
                    j = where.get(int(p) + int(k))
                    if j is None or nr[i] == 0 or nr[j] == 0:
                        continue
                    c = Y[i] @ Y[j] / (nr[i] * nr[j])
                    if centered:
                        cen[li] += c
                        ncen[li] += 1
                    else:
                        raw[li] += c
                        nraw[li] += 1
    # a lag without pairs has no value (docs/analyses.md): NaN, not 0
    raw = np.where(nraw > 0, raw / np.maximum(nraw, 1), np.nan)
    cen = np.where(ncen > 0, cen / np.maximum(ncen, 1), np.nan)
    out("raw", raw)
    out("centered", cen)
    out("npairs.i64", np.concatenate([nraw, ncen]), dtype="<i8")


if __name__ == "__main__":
    main(sys.argv[1])

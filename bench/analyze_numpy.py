#!/usr/bin/python3
"""numpy side of bench/analyze: np.cov + np.linalg.eigh (and eigvalsh) on the
same float32 matrix the C side analysed.

usage: analyze_numpy.py STATES.f32 N D [REPS [STORE RUN]]
prints one line: cov_s eigh_s eigvalsh_s top1 top2 top3 [store_s stop1]
(each time the fastest of REPS runs). With a store: the same states read
from the store's SQLite file (sqlite3 + np.frombuffer, float16 widened to
float32 as the C side does), then np.cov + eigh, timed end to end, and the
top eigenvalue of that.
(loading the file is not timed; np.cov widens to float64 itself, as the C side
widens each block)."""
import sys
import time

import numpy as np

path, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 1
X = np.fromfile(path, dtype="<f4").reshape(n, d)

t_cov = t_eigh = t_vals = float("inf")
for _ in range(reps):
    t = time.perf_counter()
    C = np.cov(X, rowvar=False)
    t_cov = min(t_cov, time.perf_counter() - t)

    t = time.perf_counter()
    w, _ = np.linalg.eigh(C)
    t_eigh = min(t_eigh, time.perf_counter() - t)

    t = time.perf_counter()
    w2 = np.linalg.eigvalsh(C)
    t_vals = min(t_vals, time.perf_counter() - t)

top = w[::-1][:3]
line = f"{t_cov:.6f} {t_eigh:.6f} {t_vals:.6f} {top[0]:.9f} {top[1]:.9f} {top[2]:.9f}"

if len(sys.argv) > 6:
    import sqlite3

    db, run = sys.argv[5], int(sys.argv[6])
    t_store = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        con = sqlite3.connect(db)
        rows = con.execute(
            "SELECT dtype, vector FROM states WHERE run_id = ? AND kind = 'pred' ORDER BY window, position", (run,)
        ).fetchall()
        con.close()
        dt = "<f2" if rows[0][0] == "f16" else "<f4"
        S = np.frombuffer(b"".join(r[1] for r in rows), dtype=dt).astype(np.float32).reshape(len(rows), -1)
        C = np.cov(S, rowvar=False)
        ws, _ = np.linalg.eigh(C)
        t_store = min(t_store, time.perf_counter() - t)
    line += f" {t_store:.6f} {ws[-1]:.9f}"
print(line)

#!/usr/bin/env python3
"""A float64 numpy reference of the toy Elman family (engine/arch/elman/),
written from its definition: s_t = tanh(W s_{t-1} + U E[x_t] + b) with W, U
stored [out, in], s_{-1} = 0, and the tied decode logits_t = E s_{t-1}, so the
state before x_t predicts x_t.

usage: elman_reference.py make OUT_PREFIX V d B T SEED
  writes OUT_PREFIX.weights.safetensors (random float32 weights) and
  OUT_PREFIX.expect.safetensors (tokens, s_pred = s_{t-1}, s_ground = s_t,
  logits, nll; laid out (B, T, ...) like tests/fixtures/reference).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_expect, write_st  # noqa: E402  (the same writers)


def run(P, tokens):
    E, W, U, b = P["embedding"], P["elman.W"], P["elman.U"], P["elman.b"]
    B, T = tokens.shape
    d = W.shape[0]
    out = {k: [] for k in ("s_pred", "s_ground", "logits", "nll")}
    s = np.zeros((B, d))
    for t in range(T):
        x = tokens[:, t]
        logits = s @ E.T
        m = logits.max(axis=1, keepdims=True)
        logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        s_next = np.tanh(s @ W.T + E[x] @ U.T + b)
        out["s_pred"].append(s)
        out["s_ground"].append(s_next)
        out["logits"].append(logits)
        out["nll"].append(-logp[np.arange(B), x])
        s = s_next
    return {k: np.stack(v, axis=1) for k, v in out.items()}


def make(prefix, V, d, B, T, seed):
    rng = np.random.default_rng(seed)
    P = {"embedding": rng.normal(0, 1.0, (V, d)), "elman.W": rng.normal(0, 1.2 / np.sqrt(d), (d, d)),
         "elman.U": rng.normal(0, 1.0 / np.sqrt(d), (d, d)), "elman.b": rng.normal(0, 0.1, d)}
    P = {k: v.astype(np.float32) for k, v in P.items()}
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    out = run({k: v.astype(np.float64) for k, v in P.items()}, tokens)
    write_st(prefix + ".weights.safetensors", P, {"arch": "elman", "d_state": str(d)})
    write_expect(prefix, tokens, out, "elman_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 8)
    make(a[0], *[int(x) for x in a[1:]])

#!/usr/bin/env python3
"""A float64 numpy reference of MLP-LDRU (engine/arch/ldru/, docs/ldru.md),
written from the equations, not from our C:

  op(h_i, h_j):  z = silu(W1 [h_i; h_j] + b1)            (2d -> 4d)
                 [g_i; g_j] = sigmoid(W2 z + b2)         (4d -> 2d)
                 f_i = V_i (g_i * h_i) + b_i,  f_j = V_j (g_j * h_j) + b_j
                 o = W_out (f_i + f_j) + b_out
                 node = LayerNorm(o + F2 silu(F1 o + c1) + c2) * ln_w + ln_b   (eps 1e-5)
  tree:          level 0 = the embeddings E[x_0..x_{T-1}]; level L+1 = op over the
                 pairs (2k, 2k+1) of level L, a zero vector for a missing right
                 partner; until one node, the root (T = 1: the embedding)
  classifier:    logits = W_c root + b_c

Weights are stored [out, in]. The prefix state at t is the root of the tree
over x_0..x_t, computed here by building that tree anew for every t (the C
engine finishes a stack instead; this is the independent route).

usage: ldru_reference.py make OUT_PREFIX S d f C B T SEED
  writes OUT_PREFIX.weights.safetensors (random float32 weights, V_i, V_j not
  the identity) and OUT_PREFIX.expect.safetensors: tokens (B, T), node_L
  (B, ceil(T / 2^L), d) for every level L, root_logits (B, C), prefix (B, T, d)
  and logits (B, T, C), the classifier on each prefix.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_expect, write_st  # noqa: E402  (the same writers)


def silu(x):
    return x / (1.0 + np.exp(-x))


def op(P, hi, hj):
    """The operator on rows of pairs: hi, hj (M, d) -> (M, d)."""
    d = hi.shape[1]
    z = silu(np.concatenate([hi, hj], axis=1) @ P["ldru.op.mlp.w1"].T + P["ldru.op.mlp.b1"])
    g = 1.0 / (1.0 + np.exp(-(z @ P["ldru.op.mlp.w2"].T + P["ldru.op.mlp.b2"])))
    fi = (g[:, :d] * hi) @ P["ldru.op.v_left"].T + P["ldru.op.b_left"]
    fj = (g[:, d:] * hj) @ P["ldru.op.v_right"].T + P["ldru.op.b_right"]
    o = (fi + fj) @ P["ldru.op.w_out"].T + P["ldru.op.b_out"]
    r = o + silu(o @ P["ldru.ffn.w1"].T + P["ldru.ffn.b1"]) @ P["ldru.ffn.w2"].T + P["ldru.ffn.b2"]
    mu = r.mean(axis=1, keepdims=True)
    var = ((r - mu) ** 2).mean(axis=1, keepdims=True)
    return (r - mu) / np.sqrt(var + 1e-5) * P["ldru.norm.weight"] + P["ldru.norm.bias"]


def tree(P, tokens):
    """Every level of the tree over (B, T) tokens: a list of (B, n_L, d)."""
    level = P["ldru.embedding"][tokens]
    levels = [level]
    while level.shape[1] > 1:
        B, n, d = level.shape
        if n % 2:
            level = np.concatenate([level, np.zeros((B, 1, d))], axis=1)
        left, right = level[:, 0::2].reshape(-1, d), level[:, 1::2].reshape(-1, d)
        level = op(P, left, right).reshape(B, -1, d)
        levels.append(level)
    return levels


def classify(P, h):
    return h @ P["ldru.head.weight"].T + P["ldru.head.bias"]


def make(prefix, S, d, f, C, B, T, seed):
    rng = np.random.default_rng(seed)
    shapes = {"ldru.embedding": (S, d), "ldru.op.mlp.w1": (4 * d, 2 * d), "ldru.op.mlp.b1": (4 * d,),
              "ldru.op.mlp.w2": (2 * d, 4 * d), "ldru.op.mlp.b2": (2 * d,), "ldru.op.v_left": (d, d),
              "ldru.op.b_left": (d,), "ldru.op.v_right": (d, d), "ldru.op.b_right": (d,), "ldru.op.w_out": (d, d),
              "ldru.op.b_out": (d,), "ldru.ffn.w1": (f, d), "ldru.ffn.b1": (f,), "ldru.ffn.w2": (d, f),
              "ldru.ffn.b2": (d,), "ldru.norm.weight": (d,), "ldru.norm.bias": (d,), "ldru.head.weight": (C, d),
              "ldru.head.bias": (C,)}
    P = {}
    for k, s in shapes.items():
        if len(s) == 2:
            P[k] = rng.normal(0, 1.0 / np.sqrt(s[1]), s)
        elif k == "ldru.norm.weight":
            P[k] = 1.0 + rng.normal(0, 0.2, s)
        else:
            P[k] = rng.normal(0, 0.3, s)
    P["ldru.embedding"] = rng.normal(0, 1.0, shapes["ldru.embedding"])
    P = {k: v.astype(np.float32) for k, v in P.items()}
    P64 = {k: v.astype(np.float64) for k, v in P.items()}
    tokens = rng.integers(0, S, (B, T)).astype(np.int32)
    levels = tree(P64, tokens)
    out = {"node_%d" % L: lv for L, lv in enumerate(levels)}
    out["root_logits"] = classify(P64, levels[-1][:, 0])
    roots = np.stack([tree(P64, tokens[:, :t + 1])[-1][:, 0] for t in range(T)], axis=1)
    out["prefix"] = roots
    out["logits"] = classify(P64, roots)
    meta = {"arch": "ldru", "n_symbols": str(S), "d_model": str(d), "ffn_dim": str(f), "n_classes": str(C)}
    write_st(prefix + ".weights.safetensors", P, meta)
    write_expect(prefix, tokens, out, "ldru_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 10)
    make(a[0], *[int(x) for x in a[1:]])

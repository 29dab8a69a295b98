#!/usr/bin/env python3
"""A float64 numpy reference of the Transformer++ family (engine/arch/tpp/),
written from the equations of docs/families.md (the companion's
src/torch/models/transformer, modules attention, rope, rmsnorm, swigluffn),
over whole sequences at once with a causal mask (the engine decodes one
position at a time with a KV cache: equal outputs show the two agree):

  h = E[x]; per block  h = h + attn(rms(h, attn.norm)); h = h + ffn(rms(h, ffn.norm))
  rms(x, w) = x / sqrt(mean(x^2) + 1e-6) * w
  attn: q, k, v = W_q x, W_k x, W_v x in H heads of Dh = D / H; RoPE on q and k:
        half = Dh / 2, freq_i = 10000^(-i / half), angle t * freq_i,
        x * [cos, cos] + [-x2, x1] * [sin, sin]; softmax(q k^T / sqrt(Dh)) over
        positions <= t; W_o of the concatenated heads
  ffn:  [gate, val] = w1 x (gate first); w2 (silu(gate) * val)
  final = rms(h, norm); logits = final E^T (tied); nll[t] = -log p(x_{t+1} | logits[t])

usage: tpp_reference.py make OUT_PREFIX V D N_LAYERS N_HEADS FFN B T SEED
  writes OUT_PREFIX.weights.safetensors (random float32 weights, norms away
  from one, the config as the companion's JSON in __metadata__.config) and
  OUT_PREFIX.expect.safetensors, laid out like tests/fixtures/reference's
  tpp2 (position t of the sequence): tokens (B, T; ids 3..V-1, as
  tests/cli/random_shards.py draws them), embed, and per layer i
  resid_pre_i, q_i, k_i (after RoPE), v_i, attn_out_i, resid_mid_i,
  mlp_out_i, resid_post_i (B, T, D); final_hidden (B, T, D); logits
  (B, T, V); nll (B, T - 1).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_sequence_pair  # noqa: E402  (the same writers)

EPS = 1e-6


def rms(x, w):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + EPS) * w


def rope(x):
    """x: (T, H, Dh); position t rotates by t * freq_i."""
    T, _, Dh = x.shape
    half = Dh // 2
    freq = 10000.0 ** (-np.arange(half) / half)
    ang = np.arange(T)[:, None] * freq[None, :]
    cos = np.concatenate([np.cos(ang), np.cos(ang)], axis=-1)[:, None, :]
    sin = np.concatenate([np.sin(ang), np.sin(ang)], axis=-1)[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    return x * cos + np.concatenate([-x2, x1], axis=-1) * sin


def silu(x):
    return x / (1.0 + np.exp(-x))


def forward(P, cfg, x):
    """One sequence x (T,): every site, position by position."""
    L, H, D, F = cfg["n_layers"], cfg["n_heads"], cfg["hidden_dim"], cfg["ffn_dim"]
    Dh, T = D // H, len(x)
    out = {}
    E = P["embedding.weight"]
    h = E[x]
    out["embed"] = h
    causal = np.tril(np.ones((T, T), dtype=bool))
    for i in range(L):
        p = lambda n: P["blocks.%d.%s.weight" % (i, n)]  # noqa: E731
        out["resid_pre_%d" % i] = h
        xn = rms(h, p("attn.norm"))
        q = rope((xn @ p("attn.W_q").T).reshape(T, H, Dh))
        k = rope((xn @ p("attn.W_k").T).reshape(T, H, Dh))
        v = (xn @ p("attn.W_v").T).reshape(T, H, Dh)
        s = np.einsum("thd,shd->hts", q, k) / np.sqrt(Dh)
        s = np.where(causal[None], s, -np.inf)
        a = np.exp(s - s.max(axis=-1, keepdims=True))
        a /= a.sum(axis=-1, keepdims=True)
        o = np.einsum("hts,shd->thd", a, v).reshape(T, D)
        attn_out = o @ p("attn.W_o").T
        out.update({"q_%d" % i: q.reshape(T, D), "k_%d" % i: k.reshape(T, D), "v_%d" % i: v.reshape(T, D),
                    "attn_out_%d" % i: attn_out})
        h = h + attn_out
        out["resid_mid_%d" % i] = h
        u = rms(h, p("ffn.norm")) @ p("ffn.w1").T
        mlp_out = (silu(u[:, :F]) * u[:, F:]) @ p("ffn.w2").T
        out["mlp_out_%d" % i] = mlp_out
        h = h + mlp_out
        out["resid_post_%d" % i] = h
    final = rms(h, P["norm.weight"])
    logits = final @ E.T
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    out.update({"final_hidden": final, "logits": logits, "nll": -logp[np.arange(T - 1), x[1:]]})
    return out


def make(prefix, V, D, L, H, F, B, T, seed):
    assert D % H == 0 and (D // H) % 2 == 0, "the source needs H | D and an even head size"
    rng = np.random.default_rng(seed)
    P = {"embedding.weight": rng.normal(0, 0.4, (V, D))}
    for i in range(L):
        b = "blocks.%d." % i
        for n in ("attn.W_q", "attn.W_k", "attn.W_v", "attn.W_o"):
            P[b + n + ".weight"] = rng.normal(0, 1.0 / np.sqrt(D), (D, D))
        P[b + "attn.norm.weight"] = rng.uniform(0.5, 1.5, D)
        P[b + "ffn.norm.weight"] = rng.uniform(0.5, 1.5, D)
        P[b + "ffn.w1.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (2 * F, D))
        P[b + "ffn.w2.weight"] = rng.normal(0, 1.0 / np.sqrt(F), (D, F))
    P["norm.weight"] = rng.uniform(0.5, 1.5, D)
    P = {k: v.astype(np.float32) for k, v in P.items()}
    cfg = {"vocab_size": V, "hidden_dim": D, "n_layers": L, "n_heads": H, "ffn_dim": F}
    tokens = rng.integers(3, V, (B, T)).astype(np.int32)
    write_sequence_pair(prefix, P, cfg, tokens, forward, {"arch": "transformer++", "config": json.dumps(cfg)},
                        "tpp_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 11)
    make(a[0], *[int(x) for x in a[1:]])

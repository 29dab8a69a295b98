#!/usr/bin/env python3
"""A float64 numpy reference of the Gated DeltaNet family (engine/arch/gdn/),
written from the equations (docs/families.md), not from our C: fla's layer
wiring (fla/layers/gated_deltanet.py) around its naive recurrence
(fla/ops/gated_delta_rule/naive.py, naive_recurrent_gated_delta_rule), in
that loop's order, with the companion's wrapper around it (an untied
lm_head). Weights [out, in] as PyTorch stores them.

Per block: h += attn(rms(h, attn_norm)); h += mlp(rms(h, mlp_norm)); then
rms(h, norm) and lm_head. attn, per token, x the normed input:
  q, k, v = silu(causal depthwise conv (kernel K, no bias) of q_proj x, ...)
  q = l2n(q) / sqrt(d_k); k = l2n(k); l2n(x) = x / sqrt(sum x^2 + 1e-6)
  beta = sigmoid(b_proj x); g = -exp(A_log) softplus(a_proj x + dt_bias)
  per head: S = exp(g) S; u = beta (v - S^T k); S = S + k u^T; o = S^T q
  attn = o_proj(rms(o_h, o_norm, eps) * silu(g_proj x))
mlp: down_proj(silu(gate_proj x) * up_proj x). Every rms has eps norm_eps.

usage: gdn_reference.py make OUT_PREFIX V D LAYERS HEADS HEAD_DIM EXPAND_V FFN CONV B T SEED
  writes OUT_PREFIX.weights.safetensors (random float32 weights, norms away
  from one, the companion's config as JSON in __metadata__.config) and
  OUT_PREFIX.expect.safetensors: tokens and, laid out (B, T, ...), embed and
  per layer i resid_pre_i, q_i, k_i, v_i (per head), beta_i, alpha_i,
  state_i (B, T, H, d_k, d_v after the write), o_i, attn_out_i, resid_mid_i,
  mlp_out_i, resid_post_i; final_hidden, logits (B, T, V: the distribution of
  token t + 1) and nll (B, T - 1), as tests/fixtures/reference's gdn2.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_expect, write_st  # noqa: E402  (the same writers)

EPS = 1e-6


def rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def silu(x):
    return x / (1 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0.0, x)


def l2n(x):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + 1e-6)


def run(P, cfg, tokens):
    B, T = tokens.shape
    L, H, dk = cfg["n_layers"], cfg["n_heads"], cfg["head_dim"]
    dv = int(dk * cfg["expand_v"])
    out = {}

    def put(name, t, x):
        out.setdefault(name, np.zeros((B, T) + x.shape[1:]))[:, t] = x

    S = np.zeros((L, B, H, dk, dv))
    convK = P["model.layers.0.attn.q_conv1d.weight"].shape[2]
    past = [{n: np.zeros((B, convK - 1, P["model.layers.%d.attn.%s_conv1d.weight" % (l, n)].shape[0]))
             for n in "qkv"} for l in range(L)]
    for t in range(T):
        h = P["model.embeddings.weight"][tokens[:, t]]
        put("embed", t, h)
        for l in range(L):
            p = lambda name: P["model.layers.%d.%s" % (l, name)]  # noqa: E731
            put("resid_pre_%d" % l, t, h)
            x = rms(h, p("attn_norm.weight"))
            qkv = {}
            for n in "qkv":
                u = x @ p("attn.%s_proj.weight" % n).T
                w = p("attn.%s_conv1d.weight" % n)[:, 0, :]          # [C, K]
                window = np.concatenate([past[l][n], u[:, None, :]], axis=1)  # oldest first, the current last
                past[l][n] = window[:, 1:]
                qkv[n] = silu(np.einsum("bjc,cj->bc", window, w))
            q = l2n(qkv["q"].reshape(B, H, dk)) / np.sqrt(dk)
            k = l2n(qkv["k"].reshape(B, H, dk))
            v = qkv["v"].reshape(B, H, dv)
            beta = 1 / (1 + np.exp(-(x @ p("attn.b_proj.weight").T)))
            g = -np.exp(p("attn.A_log")) * softplus(x @ p("attn.a_proj.weight").T + p("attn.dt_bias"))
            for name, val in (("q", q), ("k", k), ("v", v), ("beta", beta), ("alpha", np.exp(g))):
                put("%s_%d" % (name, l), t, val)
            # the naive recurrence, in its order
            Sl = S[l] * np.exp(g)[..., None, None]
            u = beta[..., None] * (v - np.einsum("bhkv,bhk->bhv", Sl, k))
            Sl = Sl + k[..., :, None] * u[..., None, :]
            S[l] = Sl
            o = np.einsum("bhk,bhkv->bhv", q, Sl)
            put("state_%d" % l, t, Sl)
            put("o_%d" % l, t, o)
            gate = (x @ p("attn.g_proj.weight").T).reshape(B, H, dv)
            y = (rms(o, p("attn.o_norm.weight")) * silu(gate)).reshape(B, H * dv)
            a = y @ p("attn.o_proj.weight").T
            put("attn_out_%d" % l, t, a)
            h = h + a
            put("resid_mid_%d" % l, t, h)
            x = rms(h, p("mlp_norm.weight"))
            m = (silu(x @ p("mlp.gate_proj.weight").T) * (x @ p("mlp.up_proj.weight").T)) @ p("mlp.down_proj.weight").T
            put("mlp_out_%d" % l, t, m)
            h = h + m
            put("resid_post_%d" % l, t, h)
        f = rms(h, P["model.norm.weight"])
        put("final_hidden", t, f)
        put("logits", t, f @ P["lm_head.weight"].T)
    z = out["logits"][:, :-1]
    mx = z.max(axis=-1, keepdims=True)
    logp = z - mx - np.log(np.exp(z - mx).sum(axis=-1, keepdims=True))
    nxt = tokens[:, 1:]
    out["nll"] = -np.take_along_axis(logp, nxt[..., None], axis=-1)[..., 0]
    return out


def make(prefix, V, D, L, H, dk, expand_v, F, K, B, T, seed):
    rng = np.random.default_rng(seed)
    dv = int(dk * expand_v)
    P = {"model.embeddings.weight": rng.normal(0, 1.0, (V, D))}
    for l in range(L):
        pre = "model.layers.%d." % l
        lin = lambda o, i: rng.normal(0, 1.0 / np.sqrt(i), (o, i))  # noqa: E731
        norm = lambda n: rng.uniform(0.5, 1.5, n)  # noqa: E731  (norms away from one)
        P.update({
            pre + "attn_norm.weight": norm(D), pre + "attn.q_proj.weight": lin(H * dk, D),
            pre + "attn.k_proj.weight": lin(H * dk, D), pre + "attn.v_proj.weight": lin(H * dv, D),
            pre + "attn.a_proj.weight": lin(H, D), pre + "attn.b_proj.weight": lin(H, D),
            # decays in (0.3, 0.99): the state remembers across many steps
            pre + "attn.A_log": np.log(rng.uniform(0.05, 0.5, H)), pre + "attn.dt_bias": rng.uniform(-2, 0.5, H),
            pre + "attn.q_conv1d.weight": rng.normal(0, 0.6, (H * dk, 1, K)),
            pre + "attn.k_conv1d.weight": rng.normal(0, 0.6, (H * dk, 1, K)),
            pre + "attn.v_conv1d.weight": rng.normal(0, 0.6, (H * dv, 1, K)),
            pre + "attn.g_proj.weight": lin(H * dv, D), pre + "attn.o_norm.weight": norm(dv),
            pre + "attn.o_proj.weight": lin(D, H * dv), pre + "mlp_norm.weight": norm(D),
            pre + "mlp.gate_proj.weight": lin(F, D), pre + "mlp.up_proj.weight": lin(F, D),
            pre + "mlp.down_proj.weight": lin(D, F),
        })
    P["model.norm.weight"] = rng.uniform(0.5, 1.5, D)
    P["lm_head.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (V, D))
    P = {k: v.astype(np.float32) for k, v in P.items()}
    cfg = {"vocab_size": V, "hidden_dim": D, "n_layers": L, "n_heads": H, "head_dim": dk, "expand_v": expand_v,
           "ffn_dim": F}
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    out = run({k: v.astype(np.float64) for k, v in P.items()}, cfg, tokens)
    write_st(prefix + ".weights.safetensors", P, {"arch": "gdn", "config": json.dumps(cfg)})
    write_expect(prefix, tokens, out, "gdn_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 14)
    make(a[0], int(a[1]), int(a[2]), int(a[3]), int(a[4]), int(a[5]), float(a[6]), int(a[7]), int(a[8]), int(a[9]),
         int(a[10]), int(a[11]))

#!/usr/bin/env python3
"""A float64 numpy reference of the Mamba-2 family (engine/arch/mamba2/),
written from the equations of the public mamba_ssm source, not from our C:
Mamba2.step() (mamba_ssm/modules/mamba2.py) around the recurrence of
selective_state_update_ref (mamba_ssm/ops/triton/selective_state_update.py),
the gated norm of rms_norm_ref (mamba_ssm/ops/triton/layernorm_gated.py,
norm_before_gate=False, group_size = d_inner / n_groups), in the Hugging Face
layout (transformers' Mamba2ForCausalLM: backbone.*, lm_head). The SSM's
outputs are checked here against its chunk-free quadratic (SSD) form, as
mamba_ssm/modules/ssd_minimal.py writes it, before anything is written.
Weights [out, in] as PyTorch stores them.

Per block: h += mixer(rms(h, norm)); then rms(h, norm_f) and lm_head (the
embedding when tied). mixer, per token, u the normed input:
  z | xBC | dt = in_proj u            (d_inner | d_inner + 2 G N | H)
  xBC = silu(conv1d(xBC) + bias)      causal depthwise, kernel K
  x | B | C = xBC                     (H heads of P | G groups of N | G of N)
  dt = clamp(softplus(dt + dt_bias), time_step_limit); A = -exp(A_log)
  a = exp(dt A)                       per head, in (0, 1)
  per head h of group g = h / (H / G):
    S_h = a_h S_h + dt_h x_h B_g^T    (P x N)
    y_h = S_h C_g + D_h x_h
  y = rms_g(y * silu(z)) * norm.weight   (per group of d_inner / G channels)
  mixer = out_proj y
Every rms has eps layer_norm_epsilon.

usage: mamba2_reference.py make OUT_PREFIX V D LAYERS HEADS HEAD_DIM STATE GROUPS CONV TIED B T SEED
  writes the folder OUT_PREFIX as a Hugging Face checkpoint is laid out:
  model.safetensors (random float32 weights, norms away from one; TIED 1:
  no lm_head) and config.json beside it; and OUT_PREFIX.expect.safetensors:
  tokens and, laid out (B, T, ...), embed and per layer i resid_pre_i,
  conv_state_i (the K - 1 kept xBC inputs, oldest first), x_i, B_i, C_i,
  dt_i, decay_i, ssm_state_i (B, T, H, P, N after the update), y_i,
  mixer_out_i, resid_post_i; final_hidden, logits (B, T, V: the distribution
  of token t + 1) and nll (B, T - 1).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_expect, write_st  # noqa: E402  (the same writers)

EPS = 1e-5


def rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def silu(x):
    return x / (1 + np.exp(-x))


def softplus(x):
    return np.logaddexp(0.0, x)


def ssd_quadratic(X, logA, Bh, Ch):
    """y_t = sum_{s <= t} (C_t . B_s) exp(sum_{r = s+1..t} logA_r) X_s per head
    (ssd_minimal's diagonal block over one chunk the whole window long).
    X (T, H, P) = dt x; logA (T, H) = dt A; Bh, Ch (T, H, N)."""
    cum = np.cumsum(logA, axis=0)
    T = X.shape[0]
    L = np.exp(cum[:, None, :] - cum[None, :, :])          # (t, s, H)
    L = L * np.tril(np.ones((T, T)))[:, :, None]
    G = np.einsum("thn,shn->tsh", Ch, Bh)
    return np.einsum("tsh,tsh,shp->thp", G, L, X)


def run(P, cfg, tokens):
    B, T = tokens.shape
    L, H, Pd, N, G = cfg["num_hidden_layers"], cfg["num_heads"], cfg["head_dim"], cfg["state_size"], cfg["n_groups"]
    di = H * Pd
    lo, hi = cfg["time_step_limit"]
    conv_w = P["backbone.layers.0.mixer.conv1d.weight"]
    K, Cd = conv_w.shape[2], conv_w.shape[0]
    out = {}

    def put(name, t, x):
        out.setdefault(name, np.zeros((B, T) + x.shape[1:]))[:, t] = x

    S = np.zeros((L, B, H, Pd, N))
    past = np.zeros((L, B, K - 1, Cd))
    group = np.arange(H) // (H // G)
    saved = [{"X": [], "logA": [], "B": [], "C": [], "D": []} for _ in range(L)]
    for t in range(T):
        h = P["backbone.embeddings.weight"][tokens[:, t]]
        put("embed", t, h)
        for l in range(L):
            p = lambda name: P["backbone.layers.%d.%s" % (l, name)]  # noqa: E731
            put("resid_pre_%d" % l, t, h)
            u = rms(h, p("norm.weight"))
            zxbcdt = u @ p("mixer.in_proj.weight").T
            z, xbc, dt = zxbcdt[:, :di], zxbcdt[:, di:di + Cd], zxbcdt[:, di + Cd:]
            window = np.concatenate([past[l], xbc[:, None, :]], axis=1)   # oldest first, the current last
            past[l] = window[:, 1:]
            put("conv_state_%d" % l, t, past[l].reshape(B, -1))
            xbc = silu(np.einsum("bjc,cj->bc", window, p("mixer.conv1d.weight")[:, 0, :]) + p("mixer.conv1d.bias"))
            x = xbc[:, :di].reshape(B, H, Pd)
            Bg = xbc[:, di:di + G * N].reshape(B, G, N)
            Cg = xbc[:, di + G * N:].reshape(B, G, N)
            dt = np.clip(softplus(dt + p("mixer.dt_bias")), lo, hi)
            A = -np.exp(p("mixer.A_log"))
            a = np.exp(dt * A)
            for name, val in (("x", x.reshape(B, -1)), ("B", Bg.reshape(B, -1)), ("C", Cg.reshape(B, -1)),
                              ("dt", dt), ("decay", a)):
                put("%s_%d" % (name, l), t, val)
            Bh, Ch = Bg[:, group], Cg[:, group]                          # (B, H, N)
            S[l] = a[..., None, None] * S[l] + (dt[..., None] * x)[..., None] * Bh[:, :, None, :]
            y = np.einsum("bhpn,bhn->bhp", S[l], Ch) + p("mixer.D")[None, :, None] * x
            put("ssm_state_%d" % l, t, S[l])
            put("y_%d" % l, t, y.reshape(B, -1))
            sv = saved[l]
            sv["X"].append(dt[..., None] * x), sv["logA"].append(dt * A), sv["B"].append(Bh), sv["C"].append(Ch)
            sv["D"].append(p("mixer.D")[None, :, None] * x)
            gated = (y.reshape(B, di) * silu(z)).reshape(B, G, di // G)
            normed = gated / np.sqrt(np.mean(gated * gated, axis=-1, keepdims=True) + EPS)
            m = (normed.reshape(B, di) * p("mixer.norm.weight")) @ p("mixer.out_proj.weight").T
            put("mixer_out_%d" % l, t, m)
            h = h + m
            put("resid_post_%d" % l, t, h)
        f = rms(h, P["backbone.norm_f.weight"])
        put("final_hidden", t, f)
        head = P.get("lm_head.weight", P["backbone.embeddings.weight"])
        put("logits", t, f @ head.T)
    # the recurrence against SSD's quadratic form, every layer and sequence
    for l in range(L):
        sv = {k: np.stack(v, axis=1) for k, v in saved[l].items()}         # (B, T, ...)
        for b in range(B):
            yq = ssd_quadratic(sv["X"][b], sv["logA"][b], sv["B"][b], sv["C"][b]) + sv["D"][b]
            yr = out["y_%d" % l][b].reshape(T, H, Pd)
            assert np.abs(yq - yr).max() <= 1e-9 * (1 + np.abs(yr).max()), ("SSD form", l, b)
    z = out["logits"][:, :-1]
    mx = z.max(axis=-1, keepdims=True)
    logp = z - mx - np.log(np.exp(z - mx).sum(axis=-1, keepdims=True))
    nxt = tokens[:, 1:]
    out["nll"] = -np.take_along_axis(logp, nxt[..., None], axis=-1)[..., 0]
    return out


def make(prefix, V, D, L, H, Pd, N, G, K, tied, B, T, seed):
    rng = np.random.default_rng(seed)
    di, Cd = H * Pd, H * Pd + 2 * G * N
    P = {"backbone.embeddings.weight": rng.normal(0, 1.0, (V, D))}
    lin = lambda o, i: rng.normal(0, 1.0 / np.sqrt(i), (o, i))  # noqa: E731
    norm = lambda n: rng.uniform(0.5, 1.5, n)  # noqa: E731  (norms away from one)
    for l in range(L):
        pre = "backbone.layers.%d." % l
        dt0 = rng.uniform(0.02, 0.4, H)
        P.update({
            pre + "norm.weight": norm(D), pre + "mixer.in_proj.weight": lin(2 * di + 2 * G * N + H, D),
            pre + "mixer.conv1d.weight": rng.normal(0, 0.6, (Cd, 1, K)), pre + "mixer.conv1d.bias": rng.normal(0, 0.2, Cd),
            # decays exp(-A dt) in about (0.2, 0.99): the state remembers across many steps
            pre + "mixer.dt_bias": dt0 + np.log(-np.expm1(-dt0)), pre + "mixer.A_log": np.log(rng.uniform(1, 4, H)),
            pre + "mixer.D": rng.uniform(0.5, 1.5, H), pre + "mixer.norm.weight": norm(di),
            pre + "mixer.out_proj.weight": lin(D, di),
        })
    P["backbone.norm_f.weight"] = norm(D)
    if not tied:
        P["lm_head.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (V, D))
    P = {k: v.astype(np.float32) for k, v in P.items()}
    cfg = {"model_type": "mamba2", "vocab_size": V, "hidden_size": D, "num_hidden_layers": L, "num_heads": H,
           "head_dim": Pd, "state_size": N, "n_groups": G, "conv_kernel": K, "expand": di / D,
           "layer_norm_epsilon": EPS, "tie_word_embeddings": bool(tied), "use_bias": False, "use_conv_bias": True,
           "rms_norm": True, "hidden_act": "silu", "time_step_limit": [0.0, float("inf")]}
    tokens = rng.integers(0, V, (B, T)).astype(np.int32)
    out = run({k: v.astype(np.float64) for k, v in P.items()}, cfg, tokens)
    os.makedirs(prefix, exist_ok=True)
    write_st(prefix + "/model.safetensors", P, {"format": "pt"})
    with open(prefix + "/config.json", "w") as fh:
        json.dump(cfg, fh, indent=2)  # Python writes inf as Infinity, as transformers' configs have it
    write_expect(prefix, tokens, out, "mamba2_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 15)
    make(a[0], *(int(v) for v in a[1:]))

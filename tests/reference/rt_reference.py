#!/usr/bin/env python3
"""A float64 numpy reference of the Recurrent Transformer family (engine/arch/rt/),
written from the equations of docs/families.md (the paper's layer as
geniucos/recurrent-transformer's OLMoRecurrentAutogradBlock computes it): per
layer, the queries and diagonal keys/values of the whole sequence first (the
source's PreAttentionBlock), then the loop over positions, each attending to
the layer's own earlier outputs:

  LN(x, w) = (x - mean) / sqrt(var + eps) * w            (biased var; eps 1e-5)
  xn = LN(x, attn_norm); q = q_norm(clip(xn Wq^T)); [k0, v0] = clip(xn Wkv^T); k0 = k_norm(k0)
  at t: keys [K_0 .. K_{t-1}, k0_t], values [V_0 .. V_{t-1}, v0_t]
        a_h = softmax_j(q_h k_j / sqrt(dh) - (t - j) / 2^(h * alibi_bias_max / H)),  h = 1..H
        y = x_t + attn_out(a V); out_t = y + ff_out(act(ff_proj LN(y, ff_norm)))
        [K_t, V_t] = clip(LN(out_t, attn_norm) Wkv^T); K_t = k_norm(K_t)
  final = LN(h, ln_f); logits = final ff_out^T (untied); nll[t] = -log p(x_{t+1} | logits[t])
  act: gelu (erf), relu, or swiglu (value first, gate second: silu(gate) * value)

usage: rt_reference.py make OUT_PREFIX V D N_LAYERS N_HEADS MLP B T SEED [KEY=VALUE ...]
       rt_reference.py shards EXPECT OUT_DIR V   (the expect file's tokens as one token
         shard, windows of T in order; prints exp(mean nll), the perplexity eval must give)
  KEY: activation_type (gelu), clip_qkv (none), attention_layer_norm (true),
  alibi_bias_max (8), layer_norm_eps (1e-5). Writes OUT_PREFIX.weights.safetensors
  (random float32 weights with norms away from one, named as OLMo's state dict,
  the OLMo model config as JSON in __metadata__.config) and
  OUT_PREFIX.expect.safetensors: tokens (B, T; ids 3..V-1), embed, per layer i
  resid_pre_i, q_i, k_i, v_i (the diagonal key/value), attn_out_i,
  resid_mid_i, mlp_out_i, resid_post_i, recurrent_k_i, recurrent_v_i
  (B, T, D), diag_share_i (B, T, H), pattern_i (B, T, H * 64: each head's
  weights on the 64 most recent keys, the diagonal last, NaN before 0);
  final_hidden (B, T, D); logits (B, T, V); nll (B, T - 1).
"""
import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpn_reference import make_args, write_sequence_pair  # noqa: E402  (the same writers)

P_KEYS = 64  # GS_PATTERN_KEYS
erf = np.frompyfunc(math.erf, 1, 1)


def read_st(path):
    """(tensors as numpy arrays, __metadata__) of a safetensors file (F32, I32)."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        dt = {"F32": "<f4", "I32": "<i4"}[t["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dt).reshape(t["shape"])
    return out, meta


def shards(expect, out, V):
    X, _ = read_st(expect)
    tokens = X["tokens"]
    np.array(tokens.reshape(-1), dtype=np.uint32).tofile(out + "/data_0000.bin")
    json.dump([int(tokens.size)], open(out + "/data_0000.index.json", "w"))
    json.dump({"tokenizer": "fixture", "vocab_size": V, "total_tokens": int(tokens.size), "total_docs": 1,
               "num_shards": 1}, open(out + "/meta.json", "w"))
    print(repr(float(np.exp(np.mean(X["nll"].astype(np.float64))))))


def layer_norm(x, w, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w


def act(u, kind):
    if kind == "gelu":
        return 0.5 * u * (1.0 + erf(u / math.sqrt(2.0)).astype(np.float64))
    if kind == "relu":
        return np.maximum(u, 0.0)
    x, gate = np.split(u, 2, axis=-1)
    return gate / (1.0 + np.exp(-gate)) * x


def forward(P, cfg, x):
    """One sequence x (T,): every site, position by position."""
    L, H, D = cfg["n_layers"], cfg["n_heads"], cfg["d_model"]
    eps, clip, qkn = cfg["layer_norm_eps"], cfg["clip_qkv"], cfg["attention_layer_norm"]
    dh, T = D // H, len(x)
    slope = 2.0 ** (-(np.arange(1, H + 1) * cfg["alibi_bias_max"] / H))
    cl = (lambda a: np.clip(a, -clip, clip)) if clip else (lambda a: a)  # noqa: E731
    out = {}
    h = P["transformer.wte.weight"][x]
    out["embed"] = h
    for i in range(L):
        p = lambda n: P["transformer.blocks.%d.%s.weight" % (i, n)]  # noqa: E731
        out["resid_pre_%d" % i] = h
        xn = layer_norm(h, p("attn_norm"), eps)
        q = cl(xn @ p("q_proj").T)
        kv = cl(xn @ p("kv_proj").T)
        k0, v0 = kv[:, :D], kv[:, D:]
        if qkn:
            q, k0 = layer_norm(q, p("q_norm"), eps), layer_norm(k0, p("k_norm"), eps)
        K, V = np.zeros((T, D)), np.zeros((T, D))
        sites = {n: np.zeros((T, D)) for n in ("attn_out", "resid_mid", "mlp_out", "resid_post")}
        diag = np.zeros((T, H))
        pattern = np.full((T, H, P_KEYS), np.nan)
        for t in range(T):
            keys = np.concatenate([K[:t], k0[t:t + 1]]).reshape(t + 1, H, dh)
            vals = np.concatenate([V[:t], v0[t:t + 1]]).reshape(t + 1, H, dh)
            s = np.einsum("hd,jhd->hj", q[t].reshape(H, dh), keys) / np.sqrt(dh)
            s = s - slope[:, None] * (t - np.arange(t + 1))[None, :]
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a /= a.sum(axis=1, keepdims=True)
            diag[t] = a[:, t]
            n = min(t + 1, P_KEYS)
            pattern[t, :, P_KEYS - n:] = a[:, t + 1 - n:]
            att = np.einsum("hj,jhd->hd", a, vals).reshape(D) @ p("attn_out").T
            y = h[t] + att
            mlp = act(layer_norm(y, p("ff_norm"), eps) @ p("ff_proj").T, cfg["activation_type"]) @ p("ff_out").T
            o = y + mlp
            kvr = cl(layer_norm(o, p("attn_norm"), eps) @ p("kv_proj").T)
            K[t], V[t] = kvr[:D], kvr[D:]
            if qkn:
                K[t] = layer_norm(K[t], p("k_norm"), eps)
            for name, v in (("attn_out", att), ("resid_mid", y), ("mlp_out", mlp), ("resid_post", o)):
                sites[name][t] = v
        h = sites["resid_post"]
        out.update({"%s_%d" % (k, i): v for k, v in sites.items()})
        out.update({"q_%d" % i: q, "k_%d" % i: k0, "v_%d" % i: v0, "recurrent_k_%d" % i: K, "recurrent_v_%d" % i: V,
                    "diag_share_%d" % i: diag, "pattern_%d" % i: pattern.reshape(T, H * P_KEYS)})
    final = layer_norm(h, P["transformer.ln_f.weight"], eps)
    logits = final @ P["transformer.ff_out.weight"].T
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    out.update({"final_hidden": final, "logits": logits, "nll": -logp[np.arange(T - 1), x[1:]]})
    return out


def make(prefix, V, D, L, H, F, B, T, seed, options):
    cfg = {"d_model": D, "n_heads": H, "n_layers": L, "mlp_hidden_size": F, "vocab_size": V, "alibi": True,
           "rope": False, "alibi_bias_max": 8.0, "activation_type": "gelu", "layer_norm_type": "default",
           "layer_norm_with_affine": True, "bias_for_layer_norm": False, "layer_norm_eps": 1e-5,
           "attention_layer_norm": True, "attention_layer_norm_with_affine": True, "include_bias": False,
           "weight_tying": False, "block_type": "recurrent", "clip_qkv": None}
    for kv in options:
        k, v = kv.split("=", 1)
        assert k in cfg, "unknown option " + k
        cfg[k] = json.loads(v) if k != "activation_type" else v
    assert D % H == 0
    rng = np.random.default_rng(seed)
    fo = F // 2 if cfg["activation_type"] == "swiglu" else F
    P = {"transformer.wte.weight": rng.normal(0, 1.0, (V, D))}
    for i in range(L):
        b = "transformer.blocks.%d." % i
        norms = ("attn_norm", "ff_norm") + (("q_norm", "k_norm") if cfg["attention_layer_norm"] else ())
        for n in norms:
            P[b + n + ".weight"] = rng.uniform(0.5, 1.5, D)
        P[b + "q_proj.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (D, D))
        P[b + "kv_proj.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (2 * D, D))
        P[b + "attn_out.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (D, D))
        P[b + "ff_proj.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (F, D))
        P[b + "ff_out.weight"] = rng.normal(0, 1.0 / np.sqrt(fo), (D, fo))
    P["transformer.ln_f.weight"] = rng.uniform(0.5, 1.5, D)
    P["transformer.ff_out.weight"] = rng.normal(0, 1.0 / np.sqrt(D), (V, D))
    P = {k: v.astype(np.float32) for k, v in P.items()}
    tokens = rng.integers(3, V, (B, T)).astype(np.int32)
    write_sequence_pair(prefix, P, cfg, tokens, forward, {"arch": "recurrent-transformer", "config": json.dumps(cfg)},
                        "rt_reference.py")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "shards":
        shards(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        sys.exit(0)
    if len(sys.argv) < 11 or sys.argv[1] != "make":
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    make(sys.argv[2], *[int(a) for a in sys.argv[3:11]], sys.argv[11:])

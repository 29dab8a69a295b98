#!/usr/bin/env python3
"""An independent float64 numpy implementation of the GPN / GPN+M step, written
from docs/gpn-model.md, to check configurations the companion fixtures do not
cover (several layers, the decoder bias, odd sizes).

usage: gpn_reference.py make OUT_PREFIX ARCH V d e f H dk dv N BIAS B T SEED
  writes OUT_PREFIX.weights.safetensors (random float32 weights, scaled so
  gates and decays are in a non-trivial range) and OUT_PREFIX.expect.safetensors
  (tokens and every output, laid out like tests/fixtures/reference).
"""
import json
import struct
import sys

import numpy as np


def rms(x, w):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w


def l2n(x):
    return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + 1e-12)


def sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def silu(x):
    return x * sig(x)


def softplus(x):
    return np.logaddexp(0.0, x)


def gate(x, w, K, b):
    return sig(rms(x, w) @ K + b)


def ffn(x, w, W1, W2):
    u = rms(x, w) @ W1
    f = W2.shape[0]
    return (silu(u[..., :f]) * u[..., f:]) @ W2


def run(P, cfg, tokens):
    B, T = tokens.shape
    d, H, dk, dv, N = cfg["d"], cfg["H"], cfg["dk"], cfg["dv"], cfg["N"]
    mem = cfg["arch"] == "gpn_m"
    s = np.zeros((B, d)); prev = np.zeros((B, d)); M = np.zeros((B, max(H, 1), max(dk, 1), max(dv, 1)))
    out = {k: [] for k in ("s_pred", "s_ground", "logits", "nll", "alpha", "beta", "mem_norm")}
    E = P["embedding"]
    for t in range(T):
        x = tokens[:, t]
        if mem:
            a = rms(prev, P["write_norm_w"]); b = rms(s, P["write_norm_w"])
            k = l2n(np.maximum(a @ P["write_W_k_k"] + P["write_W_k_b"], 0).reshape(B, H, dk))
            v = (b @ P["write_W_v_k"]).reshape(B, H, dv)
            beta = sig(b @ P["write_W_beta_k"])
            alpha = np.exp(-np.exp(P["write_A_log"]) * softplus(b @ P["write_W_a_k"] + P["write_dt_bias"]))
            pred = np.einsum("bhk,bhkv->bhv", k, M)
            M = alpha[:, :, None, None] * M + beta[:, :, None, None] * np.einsum("bhk,bhv->bhkv", k, v - pred)
            out["alpha"].append(alpha); out["beta"].append(beta)
            out["mem_norm"].append(np.sqrt(np.sum(M * M, axis=(2, 3))))
        c = s
        for i in range(N):
            p = ("L%d_" % i) if mem else ""
            nxt = gate(c, P[p + "pg_norm_w"], P[p + "pg_gate_k"], P[p + "pg_gate_b"]) * c + \
                ffn(c, P[p + "ffn_norm_w"], P[p + "ffn_w1_k"], P[p + "ffn_w2_k"])
            if mem:
                r = rms(c, P[p + "read_norm_w"])
                q = l2n(np.maximum(r @ P[p + "read_W_q_k"] + P[p + "read_W_q_b"], 0).reshape(B, H, dk))
                o = np.einsum("bhk,bhkv->bhv", q, M).reshape(B, H * dv)
                nxt = nxt + (silu(r @ P[p + "read_W_gate_k"]) * rms(o, P[p + "read_out_norm_w"])) @ P[p + "read_W_o_k"]
            c = nxt
        s_pred = c
        z = rms(s_pred, P["decode_norm_w"]) @ P["decode_proj_k"]
        if "decode_bias" in P:
            z = z + P["decode_bias"]
        logits = z @ E.T
        mx = logits.max(axis=1, keepdims=True)
        logz = (mx + np.log(np.sum(np.exp(logits - mx), axis=1, keepdims=True)))[:, 0]
        nll = logz - logits[np.arange(B), x]
        s_ground = gate(s_pred, P["fg_norm_w"], P["fg_gate_k"], P["fg_gate_b"]) * s_pred + \
            rms(E[x], P["fuse_norm_w"]) @ P["fuse_proj_k"]
        prev, s = s, s_ground
        for k_, v_ in (("s_pred", s_pred), ("s_ground", s_ground), ("logits", logits), ("nll", nll)):
            out[k_].append(v_)
    return {k: np.stack(v, axis=1) for k, v in out.items() if v}


def write_st(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name, a in tensors.items():
        dt = {"float32": "F32", "int32": "I32"}[a.dtype.name]
        data = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data); off += len(data)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h)
        for b in blobs:
            f.write(b)



def write_expect(prefix, tokens, outputs, script):
    """OUT_PREFIX.expect.safetensors as every reference here writes it: the
    tokens, then each float64 output at float32, naming the script."""
    ex = {"tokens": tokens}
    ex.update({k: v.astype(np.float32) for k, v in outputs.items()})
    write_st(prefix + ".expect.safetensors", ex, {"source": "tests/reference/%s (float64)" % script})


def write_sequence_pair(prefix, P, cfg, tokens, forward, meta, script):
    """The pair of a reference that runs one sequence at a time: P (float32)
    as OUT_PREFIX.weights.safetensors under meta, and forward(P at float64,
    cfg, one row of tokens) for every row, stacked, as the expect file."""
    P64 = {k: v.astype(np.float64) for k, v in P.items()}
    runs = [forward(P64, cfg, row) for row in tokens]
    write_st(prefix + ".weights.safetensors", P, meta)
    write_expect(prefix, tokens, {k: np.stack([r[k] for r in runs]) for k in runs[0]}, script)


def make_args(doc, n):
    """The words after `make` when the command line has n in all; else the
    usage (doc) on stderr and exit 2."""
    if len(sys.argv) != n or sys.argv[1] != "make":
        print(doc.strip(), file=sys.stderr)
        sys.exit(2)
    return sys.argv[2:]

def make(prefix, arch, V, d, e, f, H, dk, dv, N, bias, B, T, seed):
    rng = np.random.default_rng(seed)
    mem = arch == "gpn_m"
    shapes = {"embedding": (V, e), "decode_norm_w": (d,), "decode_proj_k": (d, e), "fuse_norm_w": (e,),
              "fuse_proj_k": (e, d), "fg_norm_w": (d,), "fg_gate_k": (d, d), "fg_gate_b": (d,)}
    if bias:
        shapes["decode_bias"] = (e,)
    layer = {"ffn_norm_w": (d,), "ffn_w1_k": (d, 2 * f), "ffn_w2_k": (f, d), "pg_norm_w": (d,), "pg_gate_k": (d, d),
             "pg_gate_b": (d,)}
    if mem:
        shapes.update({"write_norm_w": (d,), "write_W_k_k": (d, H * dk), "write_W_k_b": (H * dk,),
                       "write_W_v_k": (d, H * dv), "write_W_beta_k": (d, H), "write_A_log": (H,),
                       "write_dt_bias": (H,), "write_W_a_k": (d, H)})
        layer.update({"read_norm_w": (d,), "read_W_q_k": (d, H * dk), "read_W_q_b": (H * dk,),
                      "read_W_gate_k": (d, H * dv), "read_out_norm_w": (H * dv,), "read_W_o_k": (H * dv, d)})
        for i in range(N):
            shapes.update({"L%d_%s" % (i, k): v for k, v in layer.items()})
    else:
        shapes.update(layer)
    P = {}
    for name, shp in shapes.items():
        if name.endswith("norm_w"):
            a = 1.0 + 0.2 * rng.standard_normal(shp)
        elif name.endswith("A_log"):
            a = np.log(rng.uniform(0.5, 4.0, shp))
        elif name.endswith("dt_bias"):
            a = rng.uniform(-3.0, 0.0, shp)
        elif name.endswith(("W_k_b", "W_q_b")):
            # keys and queries are l2n(relu(.)): a head whose pre-activations are
            # all near zero turns rounding noise into a unit vector, so keep
            # them positive enough that float32 and float64 agree
            a = 0.8 + 0.2 * rng.standard_normal(shp)
        elif len(shp) == 1:
            a = 0.3 * rng.standard_normal(shp)
        else:
            # contributions to the state kept modest so that the recurrence is not
            # chaotic: a chaotic one amplifies float32 rounding past any tolerance
            scale = 0.5 if name.endswith(("ffn_w2_k", "read_W_o_k", "fuse_proj_k")) else 1.0
            a = scale * rng.standard_normal(shp) / np.sqrt(shp[0])
        P[name] = a.astype(np.float32)
    cfg = {"arch": arch, "d": d, "H": H, "dk": dk, "dv": dv, "N": N}
    tokens = rng.integers(0, V, size=(B, T)).astype(np.int32)
    out = run({k: v.astype(np.float64) for k, v in P.items()}, cfg, tokens)
    meta = {"arch": arch, "vocab_size": str(V), "d_state": str(d), "d_emb": str(e), "d_ffn": str(f)}
    if mem:
        meta.update({"n_heads": str(H), "d_key": str(dk), "d_val": str(dv), "n_layers": str(N)})
    write_st(prefix + ".weights.safetensors", P, meta)
    write_expect(prefix, tokens, out, "gpn_reference.py")


if __name__ == "__main__":
    a = make_args(__doc__, 16)
    make(a[0], a[1], *[int(x) for x in a[2:13]], int(a[13]))

#!/usr/bin/env python3
"""Run the GPN companion's own Transformer++ module (src/torch/models/transformer,
https://github.com/steve-z-wang/grounded-prediction-network) on a gpnscope
Transformer++ checkpoint and write what it computes as an expect file in the
layout of tests/fixtures/reference (tests/reference/tpp_reference.py's), so
test_family_tpp / test_family_incremental compare gpnscope with it.

usage: tpp_torch_companion.py COMPANION_SRC WEIGHTS TOKENS_EXPECT OUT_EXPECT [SHARDS]
  COMPANION_SRC  a checkout of the companion (the folder holding src/)
  WEIGHTS        a safetensors Transformer++ (its __metadata__.config: the
                 companion's config dict)
  TOKENS_EXPECT  a safetensors file with "tokens" (B, T) int32
  OUT_EXPECT     written: tokens, resid_post_{i}, final_hidden, logits, nll,
                 and "companion_loss" (1,): the module's own forward() loss
                 over the same tokens, whose mean gpnscope's NLLs must give
                 (printed last as loss=VALUE)
  SHARDS         also write the tokens there as a corpus of the companion's
                 shard format, one window per sequence (for gpnscope eval)

Nothing of the companion is copied here: its files are imported from
COMPANION_SRC. Two things are stood in, and only these:
- the packages' __init__ files are not run (src/torch/modules/__init__.py
  imports glr.py, which needs the CUDA-only accelerated_scan; the model
  package's imports its trainer): each package is an empty module whose
  submodules (rmsnorm, rope, swigluffn, attention, block, config, model) are
  the companion's own files, and src.torch.modules re-exports the names its
  __init__ would;
- torch 1.13 (Debian's python3-torch) has no F.scaled_dot_product_attention:
  where it is missing, a plain causal softmax(q k^T / sqrt(Dh)) v stands in
  for that one call (what the function computes with is_causal=True).
Exit 77 (ctest's skip) with the reason when torch or the source is missing.
"""
import importlib
import json
import math
import os
import struct
import sys
import types

import numpy as np


def skip(why):
    print("SKIPPED: " + why)
    sys.exit(77)


def read_st(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    hdr = json.loads(raw[8:8 + n])
    meta = hdr.pop("__metadata__", {})
    dt = {"F32": "<f4", "I32": "<i4", "I64": "<i8"}
    out = {}
    for name, t in hdr.items():
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dt[t["dtype"]]).reshape(t["shape"])
    return out, meta


def stand_in_sdpa():
    """torch < 2.0: a plain causal softmax attention as F.scaled_dot_product_attention."""
    import torch
    import torch.nn.functional as F
    if hasattr(F, "scaled_dot_product_attention"):
        return False

    def sdpa(q, k, v, is_causal=False):
        assert is_causal, "the stand-in computes causal attention only, as the companion calls it"
        T = q.shape[-2]
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        s = s.masked_fill(torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    F.scaled_dot_product_attention = sdpa
    return True


def load_companion(src):
    """The companion's (TransformerConfig, Transformer), imported file by file
    (see above), with the attention stand-in where torch needs it."""
    stand_in_sdpa()
    for pkg in ("src", "src.torch", "src.torch.modules", "src.torch.models", "src.torch.models.transformer"):
        m = types.ModuleType(pkg)
        m.__path__ = [os.path.join(src, *pkg.split("."))]
        sys.modules[pkg] = m
    mods = sys.modules["src.torch.modules"]
    for sub, names in (("rmsnorm", ["RMSNorm"]), ("rope", ["precompute_rope_cache", "apply_rope"]),
                       ("swigluffn", ["SwiGLUFFN"]), ("attention", ["Attention"])):
        mod = importlib.import_module("src.torch.modules." + sub)
        for n in names:
            setattr(mods, n, getattr(mod, n))
    config = importlib.import_module("src.torch.models.transformer.config")
    model = importlib.import_module("src.torch.models.transformer.model")
    return config.TransformerConfig, model.Transformer


def main():
    if len(sys.argv) not in (5, 6):
        print(__doc__)
        sys.exit(2)
    src, wpath, tpath, out = sys.argv[1:5]
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        skip("no torch in %s (Debian: apt-get install python3-torch)" % sys.executable)
    if not os.path.isfile(os.path.join(src, "src", "torch", "models", "transformer", "model.py")):
        skip("%s holds no src/torch/models/transformer/model.py (GPNSCOPE_COMPANION_SRC: a checkout of "
             "the companion code)" % src)
    Config, Transformer = load_companion(src)

    weights, meta = read_st(wpath)
    cfg = Config.from_dict(json.loads(meta["config"]))
    torch.manual_seed(0)
    model = Transformer(cfg).float().eval()
    state = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in weights.items()}
    model.load_state_dict(state, strict=True)  # every name the companion's module has, and no other
    tokens = read_st(tpath)[0]["tokens"].astype(np.int64)
    B, T = tokens.shape
    x = torch.from_numpy(tokens)
    res = {"tokens": tokens.astype(np.int32)}
    with torch.no_grad():
        h = model.embedding(x)
        for i, block in enumerate(model.blocks):
            h = block(h)
            res["resid_post_%d" % i] = h.numpy().copy()
        final = model.norm(h)
        res["final_hidden"] = final.numpy().copy()
        logits = final @ model.embedding.weight.T
        res["logits"] = logits.numpy().copy()
        logp = torch.log_softmax(logits[:, :-1].double(), dim=-1)
        res["nll"] = (-logp.gather(-1, x[:, 1:, None])[..., 0]).float().numpy()
        # the module's own training loss over all T - 1 predictions (ce_chunk_size 1: no tail dropped)
        loss, _ = model(x, ce_chunk_size=1)
        res["companion_loss"] = np.array([float(loss)], dtype=np.float32)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from gpn_reference import write_st  # the references' safetensors writer
    write_st(out, {k: np.ascontiguousarray(v) for k, v in res.items()}, {"source": "companion torch module"})
    if len(sys.argv) == 6:
        shards = sys.argv[5]
        os.makedirs(shards, exist_ok=True)
        np.array(tokens.reshape(-1), dtype=np.uint32).tofile(os.path.join(shards, "data_0000.bin"))
        json.dump([int(tokens.size)], open(os.path.join(shards, "data_0000.index.json"), "w"))
        json.dump({"tokenizer": "fixture", "vocab_size": cfg.vocab_size, "total_tokens": int(tokens.size),
                   "total_docs": 1, "num_shards": 1}, open(os.path.join(shards, "meta.json"), "w"))
    print("torch %s: the companion's Transformer (%d layers, %d heads) over B %d x T %d, loss=%r"
          % (torch.__version__, cfg.n_layers, cfg.n_heads, B, T, float(loss)))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Convert a companion-code checkpoint.pkl into gpnscope's safetensors.

The companion trainer pickles {"step", "data_position", "params", "opt_state"}
where params maps tensor names to numpy arrays and opt_state holds optax
objects. A pickle can run arbitrary code when loaded, so this reader never
uses pickle's default class lookup: it allows only the numpy functions that
rebuild arrays, dtypes and scalars, plus plain containers; classes from the
known ML libraries (optax, flax, jax, chex) become inert placeholders so the
optimizer state can be skipped; anything else (os.system, eval, subprocess,
...) is refused before it can run. Standard library + numpy only.

usage: convert_checkpoint.py checkpoint.pkl out.safetensors [--dtype keep|f32|bf16]
"""
import argparse
import importlib
import json
import os
import pickle
import struct
import sys
import warnings

import numpy as np

# numpy moved numpy.core to numpy._core in 2.0; pickles name whichever wrote them.
NUMPY_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.numeric", "_frombuffer"), ("numpy._core.numeric", "_frombuffer"),
}
PLAIN_ALLOWED = {("collections", "OrderedDict"), ("builtins", "dict"), ("builtins", "list"),
                 ("builtins", "tuple"), ("builtins", "set"), ("builtins", "frozenset"),
                 ("__builtin__", "set"), ("copy_reg", "_reconstructor"), ("copyreg", "_reconstructor"),
                 ("builtins", "object"),
                 # protocol 2 spells bytes as _codecs.encode(text, "latin1"): a pure transform
                 ("_codecs", "encode")}
# Optimizer state classes we do not have: rebuilt as inert placeholders.
OPAQUE_MODULE_PREFIXES = ("optax", "flax", "jax", "jaxlib", "chex", "ml_collections")


class Refused(Exception):
    pass


class Opaque:
    """Stands in for a class we do not have; records its name, runs nothing."""
    _name = "?"

    def __init__(self, *args, **kwargs):
        self._args = args

    def __setstate__(self, state):
        self._state = state

    def __repr__(self):
        return "<opaque %s>" % self._name


def _opaque_class(module, name):
    return type(name, (Opaque,), {"_name": module + "." + name})


def _numpy_attr(module, name):
    """Resolve numpy.core.X and numpy._core.X under either numpy 1.x or 2.x."""
    for m in (module.replace("numpy.core", "numpy._core"), module.replace("numpy._core", "numpy.core")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(importlib.import_module(m), name)
        except (ImportError, AttributeError):
            continue
    raise Refused("this numpy cannot rebuild %s.%s" % (module, name))


class RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in NUMPY_ALLOWED:
            return _numpy_attr(module, name)
        if (module, name) in PLAIN_ALLOWED:
            return super().find_class(module, name)
        if module.split(".")[0] in OPAQUE_MODULE_PREFIXES:
            return _opaque_class(module, name)
        raise Refused("the pickle references %s.%s; refusing to load it (only numpy arrays, plain "
                      "containers and optimizer state are allowed in a checkpoint)" % (module, name))


def find_params(obj, depth=0):
    """The mapping of tensor names to arrays: params, or params['params'] (flax)."""
    if depth > 4 or not isinstance(obj, dict):
        return None
    if "embedding" in obj and isinstance(obj["embedding"], np.ndarray):
        return obj
    for key in ("params", "model"):
        if key in obj:
            found = find_params(obj[key], depth + 1)
            if found is not None:
                return found
    return None


def flatten(params, prefix=""):
    out = {}
    for k, v in params.items():
        name = prefix + str(k)
        if isinstance(v, dict):
            out.update(flatten(v, name + "_"))
        elif isinstance(v, np.ndarray):
            out[name] = v
        else:
            raise Refused("parameter %s is a %s, not an array" % (name, type(v).__name__))
    return out


def infer_config(t):
    """The same inference as engine/model.c, so the metadata confirms the shapes."""
    V, e = t["embedding"].shape
    cfg = {"vocab_size": V, "d_emb": e, "d_state": t["decode_norm_w"].shape[0],
           "use_decoder_bias": "decode_bias" in t}
    if "write_A_log" in t:
        H = t["write_A_log"].shape[0]
        n = 0
        while "L%d_ffn_w2_k" % n in t:
            n += 1
        cfg.update(arch="gpn_m", n_heads=H, d_key=t["write_W_k_k"].shape[1] // H,
                   d_val=t["write_W_v_k"].shape[1] // H, n_layers=n, d_ffn=t["L0_ffn_w2_k"].shape[0])
    else:
        cfg.update(arch="gpn", d_ffn=t["ffn_w2_k"].shape[0])
    return cfg


def to_bf16_bytes(a):
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return rounded.tobytes()


def write_safetensors(path, tensors, metadata, dtype):
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) if not isinstance(v, bool) else str(v).lower() for k, v in metadata.items()}
    for name in sorted(tensors):
        a = tensors[name]
        if dtype == "bf16":
            data, dt = to_bf16_bytes(a), "BF16"
        elif dtype == "f32" or a.dtype == np.float64:
            data, dt = np.ascontiguousarray(a, dtype="<f4").tobytes(), "F32"
        elif a.dtype == np.float32:
            data, dt = np.ascontiguousarray(a, dtype="<f4").tobytes(), "F32"
        elif a.dtype == np.float16:
            data, dt = np.ascontiguousarray(a, dtype="<f2").tobytes(), "F16"
        elif a.dtype.name == "bfloat16" or a.dtype.itemsize == 2 and a.dtype.kind == "V":
            data, dt = np.ascontiguousarray(a).tobytes(), "BF16"
        else:
            raise Refused("parameter %s has dtype %s; a floating dtype is needed" % (name, a.dtype))
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(prog="gpnscope convert",
                                 description="Convert a companion-code checkpoint.pkl to safetensors.")
    ap.add_argument("checkpoint")
    ap.add_argument("out")
    ap.add_argument("--dtype", choices=("keep", "f32", "bf16"), default="keep",
                    help="dtype of the output tensors (default: as stored in the pickle)")
    a = ap.parse_args(argv[1:])
    src, dst, dtype = a.checkpoint, a.out, a.dtype
    try:
        with open(src, "rb") as f:
            ckpt = RestrictedUnpickler(f).load()
        params = find_params(ckpt)
        if params is None:
            raise Refused("no parameter dictionary with an 'embedding' array found (expected the companion's "
                          "{'params': {...}} checkpoint layout)")
        tensors = flatten(params)
        cfg = infer_config(tensors)
        meta = dict(cfg)
        if isinstance(ckpt, dict):
            for k in ("step", "data_position"):
                if isinstance(ckpt.get(k), (int, np.integer)):
                    meta["source_" + k] = int(ckpt[k])
        meta["source"] = os.path.basename(src)
        write_safetensors(dst, tensors, meta, dtype)
        skipped = "opt_state" in ckpt if isinstance(ckpt, dict) else False
        print("converted %s -> %s: %s, %d tensors%s" % (src, dst, cfg["arch"], len(tensors),
                                                       ", optimizer state skipped" if skipped else ""))
        return 0
    except Refused as e:
        print("gpnscope convert: %s: %s" % (src, e), file=sys.stderr)
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        print("gpnscope convert: %s: not a readable checkpoint pickle (%s: %s)" % (src, type(e).__name__, e), file=sys.stderr)
    except OSError as e:
        print("gpnscope convert: %s: %s" % (src, e.strerror or e), file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

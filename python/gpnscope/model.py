"""A model of the C engine in TransformerLens's idiom: sites by name,
run_with_cache and run_with_hooks (docs/python.md)."""
import ctypes
import json
import os
from collections import namedtuple

import numpy as np

from . import _lib
from ._lib import Error, check, encode, lib

Site = namedtuple("Site", "name layer width kind role")
Site.__doc__ = """A site of the model (docs/hooks.md): name with the layer spelled out
(layer -1 where it is not per layer), floats per token, kind and role."""

HookPoint = namedtuple("HookPoint", "name layer pos")
HookPoint.__doc__ = """What a hook is told: the site's name, its layer (-1: none) and the position."""

_F32 = ctypes.POINTER(ctypes.c_float)


def _ptr(a):
    return a.ctypes.data_as(_F32) if a is not None else None


def default_tokenizer():
    """$GPNSCOPE_TOKENIZER, else the source tree's third_party/llama2-tokenizer.json (what the CLI takes)."""
    env = os.environ.get("GPNSCOPE_TOKENIZER")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "..", "..", "third_party", "llama2-tokenizer.json")


class Cache(dict):
    """run_with_cache's arrays by site name; a lookup also takes an alias
    ("s_pred") or a name the model spells otherwise, as the model resolves it."""

    def __init__(self, model, items):
        super().__init__(items)
        self._model = model

    def __missing__(self, name):
        canonical = self._model.site(name).name
        if canonical == name or canonical not in self:
            raise KeyError(name)
        return self[canonical]


class Model:
    """gpnscope.load(path): a safetensors file or a model folder. Not for two
    threads at once (one batch runs at a time; api/gpnscope.h)."""

    def __init__(self, path, tokenizer=None):
        h = ctypes.c_void_p()
        check(lib().gs_api_model_open(encode(path), ctypes.byref(h)))
        self._h = h
        self.path = str(path)
        self.cfg = json.loads(lib().gs_api_model_config(h).decode())
        self.family = lib().gs_api_model_family(h).decode()
        self.sites = [self._site_at(i) for i in range(lib().gs_api_model_n_sites(h))]
        self._tokenizer_path = tokenizer
        self._tok = None

    def _site_at(self, i):
        s = _lib.Site()
        check(lib().gs_api_model_site(self._h, i, ctypes.byref(s)))
        return Site(s.name.decode(), s.layer, s.width, s.kind.decode(), s.role.decode())

    def __del__(self):
        if getattr(self, "_h", None):
            lib().gs_api_model_close(self._h)
            self._h = None
        if getattr(self, "_tok", None):
            lib().gs_api_tokenizer_close(self._tok)
            self._tok = None

    def __repr__(self):
        return f"<gpnscope.Model {self.cfg['title']} {self.path}>"

    @property
    def site_names(self):
        return [s.name for s in self.sites]

    def site(self, name):
        """The Site of a name or alias ("blocks.*.X": every layer, layer -1); gpnscope.Error when the model has none."""
        s = _lib.Site()
        check(lib().gs_api_model_find_site(self._h, encode(name), ctypes.byref(s)))
        return Site(s.name.decode(), s.layer, s.width, s.kind.decode(), s.role.decode())

    # ---------- tokens ----------
    def _tokenizer(self):
        if self._tok is None:
            path = self._tokenizer_path or default_tokenizer()
            h = ctypes.c_void_p()
            check(lib().gs_api_tokenizer_open(encode(path), ctypes.byref(h)))
            if lib().gs_api_tokenizer_vocab(h) > self.cfg["vocab_size"]:
                n = lib().gs_api_tokenizer_vocab(h)
                lib().gs_api_tokenizer_close(h)
                raise Error(f"the tokenizer {path} has {n} pieces but the model's vocabulary is "
                            f"{self.cfg['vocab_size']}: pass tokenizer= to gpnscope.load")
            self._tok = h
        return self._tok

    def to_tokens(self, text):
        """Token ids of a text as int32 [1, pos] (no BOS: gpnscope's tokenizer adds none),
        or of a list of texts of one length as [batch, pos]."""
        if isinstance(text, (list, tuple)):
            rows = [self.to_tokens(t)[0] for t in text]
            if len({len(r) for r in rows}) > 1:
                raise Error("to_tokens: the texts have %s tokens: a batch needs one length" %
                            sorted({len(r) for r in rows}))
            return np.stack(rows) if rows else np.zeros((0, 0), np.int32)
        raw = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        ids = ctypes.POINTER(ctypes.c_int32)()
        n = check(lib().gs_api_tokenize(self._tokenizer(), raw, len(raw), ctypes.byref(ids)))
        try:
            return np.ctypeslib.as_array(ids, shape=(n,)).copy()[None, :] if n else np.zeros((1, 0), np.int32)
        finally:
            lib().gs_api_free(ids)

    def to_string(self, ids):
        """The text of token ids: a string for one sequence, a list for [batch, pos]."""
        a = np.asarray(ids)
        if a.ndim == 2:
            return [self.to_string(r) for r in a]
        a = np.ascontiguousarray(a.reshape(-1), dtype=np.int32)
        out = ctypes.c_void_p()
        n = check(lib().gs_api_detokenize(self._tokenizer(), a.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
                                          a.size, ctypes.byref(out)))
        try:
            return ctypes.string_at(out, n).decode("utf-8", "replace")
        finally:
            lib().gs_api_free(out)

    # ---------- running ----------
    def _tokens(self, tokens):
        if isinstance(tokens, str) or (isinstance(tokens, (list, tuple)) and tokens and isinstance(tokens[0], str)):
            tokens = self.to_tokens(tokens)
        a = np.asarray(tokens)
        if a.ndim == 1:
            a = a[None, :]
        if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
            raise Error(f"tokens of shape {a.shape}: give [batch, pos] (or [pos]) token ids")
        if not np.issubdtype(a.dtype, np.integer):
            raise Error(f"tokens of dtype {a.dtype}: give integer token ids")
        return np.ascontiguousarray(a, dtype=np.int32)

    def _names(self, names_filter):
        """Sites to cache, resolved (and checked) before any work: None every site,
        a name, a list of names, or a predicate on names."""
        if names_filter is None:
            return self.site_names
        if callable(names_filter):
            return [n for n in self.site_names if names_filter(n)]
        names = [names_filter] if isinstance(names_filter, str) else list(names_filter)
        out = []
        for n in names:
            s = self.site(n)
            if s.layer < 0 and "{i}" in s.name:  # blocks.*.X: every layer
                out += [x.name for x in self.sites if x.name == s.name.replace("{i}", str(x.layer))]
            else:
                out.append(s.name)
        return list(dict.fromkeys(out))

    def _shape(self, s):
        """A site's per-token shape: heads on their own axis (docs/hooks.md)."""
        H = self.cfg["n_heads"]
        if s.kind == "scalar":
            return ()
        if s.kind == "per-head scalar":
            return (s.width,)
        if s.kind == "per-head vector" and H and s.width % H == 0:
            dk, dv = self.cfg["d_key"], self.cfg["d_val"]
            if dk and dv and s.width == H * dk * dv:
                return (H, dk, dv)
            return (H, s.width // H)
        return (s.width,)

    def _hook_requests(self, fwd_hooks, errors, keep):
        reqs = []
        for name, fn in fwd_hooks:
            names = [n for n in self.site_names if name(n)] if callable(name) else [name]
            for n in names:
                s = self.site(n)
                shapes = {}

                def call(ctx, site, layer, pos, data, b, width, fn=fn, s=s, shapes=shapes):
                    if errors:
                        return 1
                    try:
                        site = site.decode()
                        if site not in shapes:
                            shapes[site] = self._shape(s._replace(width=width))
                        value = np.ctypeslib.as_array(data, shape=(b, width)).reshape((b,) + shapes[site])
                        new = fn(value, HookPoint(site, layer, pos))
                        if new is not None and new is not value:
                            new = np.asarray(new, dtype=np.float32)
                            if new.shape != value.shape:
                                raise Error(f"the hook on {site} at position {pos} returned shape {new.shape}, "
                                            f"the value has {value.shape}")
                            value[...] = new
                        return 0
                    except BaseException as e:  # raised again after the C call returns
                        errors.append(e)
                        return 1
                cb = _lib.HOOK(call)
                keep.append(cb)
                reqs.append(_lib.Request(encode(s.name.replace("{i}", "*")), None, cb, None))
        return reqs

    def _run(self, tokens, names, fwd_hooks, return_type):
        if return_type not in ("logits", "loss", "nll", None):
            raise Error(f"return_type {return_type!r}: 'logits', 'loss', 'nll' or None")
        toks = self._tokens(tokens)
        B, T = toks.shape
        sites = [self.site(n) for n in names]
        errors, keep = [], []
        reqs = self._hook_requests(fwd_hooks, errors, keep)
        cache = {}
        for s in sites:
            cache[s.name] = np.empty((B, T) + self._shape(s), dtype=np.float32)
            reqs.append(_lib.Request(encode(s.name), _ptr(cache[s.name]), _lib.HOOK(), None))
        logit_w = next((s.width for s in self.sites if s.role == "logits"), self.cfg["vocab_size"])
        logits = np.empty((B, T, logit_w), np.float32) if return_type == "logits" else None
        nll = np.empty((B, T), np.float32) if return_type in ("loss", "nll") else None
        arr = (_lib.Request * max(1, len(reqs)))(*reqs)
        rc = lib().gs_api_run(self._h, toks.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), B, T, arr, len(reqs),
                              _ptr(logits), _ptr(nll))
        if errors:
            raise errors[0]
        check(rc)
        out = {"logits": logits, "nll": nll, None: None}.get(return_type) if return_type != "loss" else \
            float(np.nanmean(nll.astype(np.float64)))
        return out, cache

    def run_with_cache(self, tokens, names_filter=None, fwd_hooks=(), return_type="logits"):
        """(logits, cache): every site names_filter picks (None: all; a name, a list, or a
        predicate on names), as float32 arrays [batch, pos, ...] keyed by site name.
        logits[:, t] is the prediction of tokens[:, t] (NaN at t = 0 for a transformer).
        fwd_hooks run first: the cache holds what the step continued from."""
        out, cache = self._run(tokens, self._names(names_filter), fwd_hooks, return_type)
        return out, Cache(self, cache)

    def run_with_hooks(self, tokens, fwd_hooks=(), return_type="logits"):
        """The model's output with hooks: fwd_hooks [(name or predicate, fn)], fn(value, hook)
        called at every position with the batch's value there ([batch, ...], editable in
        place) and hook.name, .layer, .pos; it returns None or a replacement. Edits are
        carried through the recurrence."""
        return self._run(tokens, [], fwd_hooks, return_type)[0]

    def __call__(self, tokens, return_type="logits"):
        return self._run(tokens, [], (), return_type)[0]


def load(path, tokenizer=None):
    """A model from a safetensors file or a model folder (config.json + model.safetensors);
    tokenizer: for to_tokens / to_string (default $GPNSCOPE_TOKENIZER, else the source
    tree's third_party/llama2-tokenizer.json)."""
    return Model(path, tokenizer)

"""Hooks from Python: an identity hook changes nothing, a hook adding c * u to
the state gives `gpnscope steer`'s NLL, and edits carry through the recurrence."""
import json
import math

import numpy as np
import pytest

import gpnscope
from conftest import SITES, T, W, gpnscope as cli, model_path


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


def tokens_of(recorded, name):
    return gpnscope.Store(recorded[name]).tokens(frame=False)["token_id"]


@pytest.mark.parametrize("name", sorted(SITES))
def test_identity_hooks_change_nothing(name, recorded):
    m = gpnscope.load(model_path(name))
    toks = tokens_of(recorded, name)
    plain = m(toks)
    seen = []

    def same(value, hook):  # a replacement equal to the value, written back
        seen.append(hook.name)
        return value.copy()

    hooked = m.run_with_hooks(toks, fwd_hooks=[(lambda n: n != "logits", same), ("logits", lambda v, h: None)])
    assert np.array_equal(bits(plain), bits(hooked))
    assert len(seen) == T * (len(m.sites) - 1)  # every other site at every step


def mean_nll(nll):
    """steer's mean: over the finite NLLs, positions outer and windows inner, in double."""
    s, n = 0.0, 0
    for t in range(nll.shape[1]):
        for b in range(nll.shape[0]):
            if math.isfinite(nll[b, t]):
                s += float(nll[b, t])
                n += 1
    return s / n


@pytest.mark.parametrize("name", ["gpnm15-small", "gdn-small"])
def test_steering_hook_equals_steer(name, recorded, corpus, tmp_path):
    m = gpnscope.load(model_path(name))
    d, c = m.cfg["d_state"], 6.5
    u = np.random.default_rng(7).standard_normal(d).astype(np.float32)
    np.save(tmp_path / "u.npy", u)
    out = json.loads(cli("steer", model_path(name), "--corpus", corpus, "--direction", tmp_path / "u.npy", "--c", c,
                         "--seq-len", T, "--windows", W, "--batch", W, "--json"))
    n2 = 0.0
    for x in u.astype(np.float64):  # steer's norm, summed in its order
        n2 += x * x
    unit = (u.astype(np.float64) / math.sqrt(n2)).astype(np.float32)
    site = m.site(out["site"])
    assert site.role == "state" and (m.cfg["n_layers"] == 1 or site.layer == m.cfg["n_layers"] - 1)

    def add(value, hook):
        value += np.float32(c) * unit

    toks = tokens_of(recorded, name)
    assert mean_nll(m(toks, return_type="nll")) == out["baseline_nll"]
    assert mean_nll(m.run_with_hooks(toks, fwd_hooks=[(site.name, add)], return_type="nll")) == out["points"][0]["nll"]


def test_edit_is_carried(recorded):
    """Zeroing GDN's carried attn.state at one position changes every later position and no earlier one."""
    m = gpnscope.load(model_path("gdn-small"))
    toks = tokens_of(recorded, "gdn-small")
    _, clean = m.run_with_cache(toks, names_filter="blocks.3.hook_resid_post", return_type=None)

    def zero_at_10(value, hook):
        if hook.pos == 10:
            return np.zeros_like(value)

    _, edited = m.run_with_cache(toks, names_filter="blocks.3.hook_resid_post", return_type=None,
                                 fwd_hooks=[("blocks.*.attn.state", zero_at_10)])
    a, b = clean["blocks.3.hook_resid_post"], edited["blocks.3.hook_resid_post"]
    assert np.array_equal(a[:, :10], b[:, :10])
    assert all(not np.array_equal(a[:, t], b[:, t]) for t in range(10, T))


def test_hook_sees_positions_layers_and_shapes(recorded):
    m = gpnscope.load(model_path("tpp-small"))
    toks = tokens_of(recorded, "tpp-small")[:, :5]
    calls = []
    m.run_with_hooks(toks, fwd_hooks=[("blocks.*.attn.hook_q", lambda v, h: calls.append((h.name, h.layer, h.pos, v.shape)))],
                     return_type=None)
    assert calls[:5] == [(f"blocks.{i}.attn.hook_q", i, 0, (W, 4, 32)) for i in range(4)] + [("blocks.0.attn.hook_q", 0, 1, (W, 4, 32))]
    assert len(calls) == 4 * 5

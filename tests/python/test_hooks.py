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


def same(a, b):
    """Equal as cJSON prints a double: 15 significant digits where they read back within
    one DBL_EPSILON (cJSON's own test), so the JSON may lose the last bit."""
    a, b = np.atleast_1d(np.asarray(a, np.float64)), np.atleast_1d(np.asarray(b, np.float64))
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= np.finfo(np.float64).eps * np.maximum(abs(a), abs(b))))


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
    assert same(mean_nll(m(toks, return_type="nll")), out["baseline_nll"])
    steered = mean_nll(m.run_with_hooks(toks, fwd_hooks=[(site.name, add)], return_type="nll"))
    assert same(steered, out["points"][0]["nll"]) and not same(steered, out["baseline_nll"])


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


@pytest.mark.parametrize("name,site", [("gpnm15-small", "state.ground"), ("gdn-small", "blocks.2.hook_resid_post")])
def test_copying_hook_equals_patch(name, site, tmp_path):
    """A hook that puts the clean run's site at position p into the corrupted run gives
    `gpnscope patch --components site:NAME`'s logit difference for that cell, to the bit."""
    m = gpnscope.load(model_path(name))
    rng = np.random.default_rng(36)
    n, P = 2, 6
    clean = rng.integers(3, 32000, (n, P))
    corrupted = clean.copy()
    corrupted[:, 1] = rng.integers(3, 32000, n)
    answer, foil = rng.integers(3, 32000, n), rng.integers(3, 32000, n)
    with open(tmp_path / "pairs.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"clean": clean[i].tolist(), "corrupted": corrupted[i].tolist(),
                                "answer": int(answer[i]), "foil": int(foil[i])}) + "\n")
    out = json.loads(cli("patch", model_path(name), tmp_path / "pairs.jsonl", "--components", "site:" + site,
                         "--direction", "none", "--json"))
    # the prompt, then the answer as x_P (patch reads the prediction that follows the prompt at step P)
    with_answer = lambda p: np.concatenate([p, answer[:, None]], axis=1)
    rows = np.arange(n)

    def ld(logits):
        last = logits[:, P].astype(np.float64)
        return (last[rows, answer] - last[rows, foil]).tolist()

    clean_logits, cache = m.run_with_cache(with_answer(clean), names_filter=site)
    assert same(ld(clean_logits), out["ld_clean"]) and same(ld(m(with_answer(corrupted))), out["ld_corrupted"])
    cells = out["components"][0]["logit_diff"]
    for p in range(P):
        def put_clean(value, hook, p=p):
            if hook.pos == p:
                return cache[site][:, p]
        assert same(ld(m.run_with_hooks(with_answer(corrupted), fwd_hooks=[(site, put_clean)])), cells[p]), (name, p)
    assert not same(cells[1], out["ld_corrupted"])  # the patch at the changed token moved the difference

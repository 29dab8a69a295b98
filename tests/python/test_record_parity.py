"""run_with_cache equals what `gpnscope record --dtype f32` stored, bit for bit,
on the four shipped families; and the store reads back through gpnscope.Store."""
import numpy as np
import pytest

import gpnscope
from conftest import SITES, T, W, model_path


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)


@pytest.mark.parametrize("name", sorted(SITES))
def test_cache_equals_record(name, recorded):
    st = gpnscope.Store(recorded[name])
    toks = st.tokens(frame=False)
    assert toks["token_id"].shape == (W, T)
    m = gpnscope.load(model_path(name))
    logits, cache = m.run_with_cache(toks["token_id"], names_filter=SITES[name], return_type="nll")
    assert sorted(cache) == sorted(m.site(s).name for s in SITES[name])
    for site in SITES[name]:
        stored = st.states(site)
        assert stored.shape[:2] == (W, T), (site, stored.shape)
        got = cache[site].reshape(W, T, -1)
        assert np.array_equal(bits(got), bits(stored)), f"{name} {site}: {np.sum(bits(got) != bits(stored))} floats differ"
    # the NLL of every token as the tokens table has it (NULL: NaN)
    assert np.array_equal(bits(logits), bits(toks["nll"])), name


def test_names_filter_forms(recorded):
    m = gpnscope.load(model_path("tpp-small"))
    toks = gpnscope.Store(recorded["tpp-small"]).tokens(frame=False)["token_id"][:, :8]
    _, by_str = m.run_with_cache(toks, names_filter="blocks.1.hook_resid_post", return_type=None)
    _, by_pred = m.run_with_cache(toks, names_filter=lambda n: n.endswith("hook_resid_post"), return_type=None)
    _, by_star = m.run_with_cache(toks, names_filter=["blocks.*.hook_resid_post"], return_type=None)
    assert list(by_str) == ["blocks.1.hook_resid_post"]
    assert list(by_pred) == list(by_star) == [f"blocks.{i}.hook_resid_post" for i in range(4)]
    assert np.array_equal(by_str["blocks.1.hook_resid_post"], by_pred["blocks.1.hook_resid_post"])
    assert by_pred["blocks.0.hook_resid_post"].shape == (W, 8, 128)


def test_cache_shapes_and_aliases(recorded):
    m = gpnscope.load(model_path("gpnm15-small"))
    toks = gpnscope.Store(recorded["gpnm15-small"]).tokens(frame=False)["token_id"][:2, :5]
    logits, cache = m.run_with_cache(toks, names_filter=["s_pred", "mem.state", "mem.alpha", "nll"])
    H, dk, dv = m.cfg["n_heads"], m.cfg["d_key"], m.cfg["d_val"]
    assert logits.shape == (2, 5, m.cfg["vocab_size"])
    assert cache["state.pred"].shape == (2, 5, m.cfg["d_state"]) and cache["s_pred"] is cache["state.pred"]
    assert cache["mem.state"].shape == (2, 5, H, dk, dv) and cache["mem.alpha"].shape == (2, 5, H)
    assert cache["nll"].shape == (2, 5)
    assert np.array_equal(cache["nll"], m(toks, return_type="nll"))


def test_store_reads(recorded):
    st = gpnscope.Store(recorded["gdn-small"])
    run = st.run()
    assert run["status"] == "complete" and run["seq_len"] == T and st.run_ids() == [run["id"]]
    sites = {s["site"]: s for s in st.sites()}
    assert sites["blocks.2.attn.alpha"]["dtype"] == "f32" and sites["nll"]["stored_in"] == "tokens"
    rows, win, pos = st.states("blocks.3.hook_resid_post", index=True)
    assert rows.shape == (W * T, 64) and list(win[:2]) == [0, 0] and list(pos[:2]) == [0, 1]
    df = st.tokens()
    if not isinstance(df, dict):  # pandas is there
        assert list(df.columns)[:3] == ["window", "position", "token_id"] and len(df) == W * T


def test_results_have_analyze_json_keys(recorded, tmp_path):
    """Every number of `analyze --json` is in results() under the same analysis and key (the
    arrays are series and vectors of the store: series(), vector())."""
    import json
    import shutil
    from conftest import gpnscope as cli
    db = tmp_path / "s.db"
    shutil.copy(recorded["gpnm15-small"], db)
    j = json.loads(cli("analyze", db, "--only", "geometry,default", "--json"))
    r = gpnscope.Store(db).results()
    eps = np.finfo(np.float64).eps
    for name in ("geometry", "default_direction"):
        numbers = {k: v for k, v in j[name].items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        assert len(numbers) >= 10, (name, numbers)
        for k, v in numbers.items():
            assert abs(r[name][k] - v) <= eps * abs(v), (name, k, r[name][k], v)  # cJSON may drop the last bit
    assert len(gpnscope.Store(db).series("geometry", "cumulative_explained")["y"]) == 256
    assert gpnscope.Store(db).vector("geometry", "mean").shape == (256,)

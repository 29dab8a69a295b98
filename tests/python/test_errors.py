"""Errors from C arrive as gpnscope.Error with the C message; a bad site name
raises before any work; a bad file never crashes the process."""
import subprocess

import numpy as np
import pytest

import gpnscope
from conftest import BIN, model_path


def cli_error(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    assert p.returncode != 0
    return p.stderr.strip()


def test_bad_model_path(tmp_path):
    with pytest.raises(gpnscope.Error) as e:
        gpnscope.load(tmp_path / "none.safetensors")
    assert str(e.value) and str(e.value) in cli_error("info", tmp_path / "none.safetensors")
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\xff" * 64)
    with pytest.raises(gpnscope.Error) as e:
        gpnscope.load(junk)
    assert str(e.value) in cli_error("info", junk)


def test_bad_site_raises_before_any_work():
    m = gpnscope.load(model_path("gpnm15-small"))
    calls = []
    with pytest.raises(gpnscope.Error, match=r"hook name 'blocks.1.hook_mlp_out': the model has 1 layer\(s\)"):
        m.run_with_cache([5, 6, 7], names_filter=["state.pred", "blocks.1.hook_mlp_out"],
                         fwd_hooks=[("state.pred", lambda v, h: calls.append(h))])
    with pytest.raises(gpnscope.Error, match="unknown hook name 'nope'"):
        m.run_with_hooks([5, 6, 7], fwd_hooks=[("state.pred", lambda v, h: calls.append(h)), ("nope", print)])
    assert calls == []
    with pytest.raises(gpnscope.Error, match="the vocabulary is 0..31999"):
        m.run_with_hooks([5, 32000], fwd_hooks=[("state.pred", lambda v, h: calls.append(h))])
    assert calls == []


def test_hook_exception_propagates():
    m = gpnscope.load(model_path("tpp-small"))

    def boom(value, hook):
        if hook.pos == 2:
            raise ValueError("from the hook")

    with pytest.raises(ValueError, match="from the hook"):
        m.run_with_hooks([5, 6, 7, 8], fwd_hooks=[("blocks.0.hook_resid_post", boom)])
    with pytest.raises(gpnscope.Error, match="returned shape"):
        m.run_with_hooks([5, 6], fwd_hooks=[("blocks.0.hook_resid_post", lambda v, h: np.zeros(3))])
    assert m([5, 6, 7]).shape == (1, 3, 32000)  # the model runs on after a failed run


def test_bad_store(tmp_path, recorded):
    with pytest.raises(gpnscope.Error) as e:
        gpnscope.Store(tmp_path / "none.db")
    assert str(tmp_path / "none.db") in str(e.value)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)
    with pytest.raises(gpnscope.Error):
        gpnscope.Store(junk).run_ids()
    st = gpnscope.Store(recorded["tpp-small"])
    with pytest.raises(gpnscope.Error, match="has no rows of blocks.0.hook_mlp_out"):
        st.states("blocks.0.hook_mlp_out")
    with pytest.raises(gpnscope.Error, match="stores nll in tokens"):
        st.states("nll")


def test_tokens_as_gpnscope_tokenize():
    import os
    tok = os.path.join(os.environ["GPNSCOPE_SOURCE"], "third_party", "llama2-tokenizer.json")
    if not os.path.isfile(tok):
        pytest.skip("no tokenizer (scripts/fetch-tokenizer.sh)")
    m = gpnscope.load(model_path("gpnm15-small"), tokenizer=tok)
    text = "The cat sat on the mat, naïvely."
    p = subprocess.run([BIN, "tokenize", "--tokenizer", tok], input=text + "\n", capture_output=True, text=True)
    ids = m.to_tokens(text)
    assert ids.dtype == np.int32 and ids[0].tolist() == [int(x) for x in p.stdout.split()]
    assert m.to_string(ids[0]) == text and m.to_string(ids) == [text]
    assert m.run_with_cache(text, names_filter="state.pred")[1]["state.pred"].shape == (1, ids.shape[1], 256)
    with pytest.raises(gpnscope.Error, match="tokenizer"):
        gpnscope.load(model_path("gpnm15-small"), tokenizer=model_path("gpnm15-small") + "/config.json").to_tokens("x")

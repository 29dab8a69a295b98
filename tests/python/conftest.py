"""What the tests of python/gpnscope share (tests/CMakeLists.txt runs them
with pytest under ctest, as python_api): the shipped models, a corpus of
random token shards and a `gpnscope record --dtype f32` store of it per
model, written once per session."""
import os
import subprocess
import sys

import pytest

SOURCE = os.environ["GPNSCOPE_SOURCE"]
BIN = os.environ["GPNSCOPE_BIN"]
sys.path.insert(0, os.path.join(SOURCE, "tests", "cli", "lib"))
from testdata import write_shards  # noqa: E402  (the shard layout, once)

T, W = 40, 3  # tokens per window, windows (one batch: --batch W)

# the sites each model records: kept ones, per-layer captures, per-head vectors and scalars,
# carried states, the attention pattern
SITES = {
    "gpnm15-small": ["state.pred", "state.ground", "state.decode", "blocks.0.hook_mlp_out", "blocks.0.mem.heads",
                     "mem.k", "mem.state", "logits"],
    "tpp-small": ["hook_embed", "blocks.0.attn.hook_q", "blocks.1.attn.hook_pattern", "blocks.2.hook_resid_mid",
                  "blocks.3.hook_resid_post", "ln_final.hook_normalized", "logits"],
    "gdn-small": ["hook_embed", "blocks.0.attn.conv_state", "blocks.1.attn.state", "blocks.2.attn.alpha",
                  "blocks.3.hook_resid_post", "ln_final.hook_normalized"],
    "rt-small": ["blocks.0.attn.hook_k_rec", "blocks.1.attn.hook_pattern", "blocks.1.attn.hook_diag_share",
                 "blocks.3.hook_resid_post", "ln_final.hook_normalized"],
}


def model_path(name):
    return os.path.join(SOURCE, "models", name)


def gpnscope(*args):
    """Run the CLI; its stdout (a failure shows its stderr)."""
    p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == 0, f"gpnscope {' '.join(map(str, args))}: {p.stderr}"
    return p.stdout


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    import random
    d = tmp_path_factory.mktemp("shards")
    rng = random.Random(36)
    write_shards(str(d), [rng.randrange(3, 32000) for _ in range(T * W + 5)], 32000)
    return d


@pytest.fixture(scope="session")
def recorded(corpus, tmp_path_factory):
    """{model: the store `record --dtype f32` wrote of its SITES over the corpus}"""
    out = {}
    for name, sites in SITES.items():
        db = tmp_path_factory.mktemp("stores") / f"{name}.db"
        gpnscope("record", "--model", model_path(name), "--corpus", corpus, "--db", db, "--seq-len", T,
                 "--windows", W, "--batch", W, "--dtype", "f32", "--sites", ",".join(sites), "--quiet")
        out[name] = db
    return out

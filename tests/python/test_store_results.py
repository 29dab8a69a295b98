"""gpnscope.Store's per-analysis readers, which the exported notebook uses in
place of its own SQL: ids and names, scalars as stored (NULL and notes),
series with a text value named, absent ones on request, the vocabulary, and
a cache that reads a replaced analysis again."""
import shutil
import sqlite3

import numpy as np
import pytest

import gpnscope
from conftest import gpnscope as cli


@pytest.fixture
def analysed(recorded, tmp_path):
    db = tmp_path / "s.db"
    shutil.copy(recorded["gpnm15-small"], db)
    cli("analyze", db, "--only", "geometry")
    return db


def direct(db, sql, *params):
    with sqlite3.connect(db) as con:
        return con.execute(sql, params).fetchall()


def test_ids_scalars_and_notes(analysed):
    st = gpnscope.Store(analysed)
    (aid,), = direct(analysed, "SELECT max(id) FROM analyses WHERE name = 'geometry'")
    assert st.analysis_id("geometry") == aid and st.analysis_id("no_such_analysis") is None
    stored = dict(direct(analysed, "SELECT key, value FROM analysis_scalars WHERE analysis_id = ?", aid))
    assert st.scalars(aid) == stored and st.scalars("geometry") == stored and len(stored) >= 10
    notes = st.scalars(aid, notes=True)
    assert all(notes[k][0] == v for k, v in stored.items())
    assert st.scalars(10**6) == {}


def test_series_vector_and_missing(analysed):
    st = gpnscope.Store(analysed)
    aid = st.analysis_id("geometry")
    rows = direct(analysed, "SELECT x, y FROM analysis_series WHERE analysis_id = ? AND series = "
                  "'cumulative_explained' ORDER BY idx", aid)
    s = st.series(aid, "cumulative_explained")
    assert np.array_equal(s["x"], [r[0] for r in rows]) and np.array_equal(s["y"], [r[1] for r in rows])
    empty = st.series(aid, "no_such_series", missing_ok=True)
    assert len(empty["x"]) == 0 and empty["label"] == []
    with pytest.raises(gpnscope.Error, match="no series 'no_such_series'"):
        st.series(aid, "no_such_series")
    assert st.vector(aid, "no_such_vector", missing_ok=True) is None
    assert st.vector(aid, "mean").dtype == np.float32


def test_text_value_named_and_cache_refreshed(analysed):
    st = gpnscope.Store(analysed)
    aid = st.analysis_id("geometry")
    st.series(aid, "cumulative_explained")  # fills the cache
    with sqlite3.connect(analysed) as con:
        con.execute("UPDATE analysis_series SET y = 'abc' WHERE analysis_id = ? AND series = "
                    "'cumulative_explained' AND idx = 2", (aid,))
        # a new analysis row: the store's analyses changed, so the cached rows are read again
        con.execute("INSERT INTO analyses (run_id, name, settings, settings_hash) VALUES "
                    "((SELECT run_id FROM analyses WHERE id = ?), 'marker', '{}', ?)", (aid, "a" * 64))
    with pytest.raises(gpnscope.Error, match=r"1 y value\(s\) that are not numbers \(the first: 'abc' at point 2\)"):
        st.series(aid, "cumulative_explained")


def test_vocabulary(analysed):
    st = gpnscope.Store(analysed)
    assert st.vocabulary() == {}  # recorded from token shards: no tokenizer in the store
    with sqlite3.connect(analysed) as con:
        con.execute("INSERT INTO tokenizers (path, sha256, kind, vocab_size) VALUES ('t', ?, 'test', 3)", ("e" * 64,))
        tid = con.execute("SELECT id FROM tokenizers WHERE path = 't'").fetchone()[0]
        con.executemany("INSERT INTO vocabulary VALUES (?, ?, ?, ?)",
                        [(tid, t, p, p.encode()) for t, p in enumerate(("<unk>", "$$", " the"))])
        con.execute("UPDATE runs SET tokenizer_id = ?", (tid,))
    assert st.vocabulary() == {0: "<unk>", 1: "$$", 2: " the"}

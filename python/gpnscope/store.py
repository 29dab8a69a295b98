"""A store read-only, through the C library's readers (docs/python.md,
docs/schema.md): runs, sites, tokens, states and analysis results."""
import ctypes
import json
import math

import numpy as np

from . import _lib
from ._lib import Error, check, encode, lib

try:
    import pandas as _pd
except ImportError:
    _pd = None

_CHUNK = 4096  # state rows per read


class Store:
    """gpnscope.Store("study.db"): a store opened for reading."""

    def __init__(self, path):
        h = ctypes.c_void_p()
        check(lib().gs_api_store_open(encode(path), ctypes.byref(h)))
        self._h = h
        self.path = str(path)

    def close(self):
        if getattr(self, "_h", None):
            lib().gs_api_store_close(self._h)
            self._h = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<gpnscope.Store {self.path}>"

    # ---------- runs ----------
    def run_ids(self):
        """Every run id, oldest first."""
        ids = ctypes.POINTER(ctypes.c_int64)()
        n = check(lib().gs_api_store_runs(self._h, ctypes.byref(ids)))
        try:
            return [int(ids[i]) for i in range(n)]
        finally:
            lib().gs_api_free(ids)

    def run(self, run=None):
        """A run's row, settings and sites as one dict (the newest complete run by default)."""
        out = ctypes.c_void_p()
        check(lib().gs_api_store_run_json(self._h, self._run_id(run), ctypes.byref(out)))
        try:
            return json.loads(ctypes.string_at(out).decode("utf-8", "replace"))
        finally:
            lib().gs_api_free(out)

    def runs(self):
        """Every run's dict (run()), oldest first."""
        return [self.run(r) for r in self.run_ids()]

    def _run_id(self, run):
        if run is not None:
            return int(run)
        ids = self.run_ids()
        if not ids:
            raise Error(f"{self.path} has no runs")
        done = [r for r in ids if self.run(r)["status"] == "complete"]
        return (done or ids)[-1]

    def sites(self, run=None):
        """The sites a run recorded (run_sites rows: site, shape, layer, width, dtype, stored_in, stored_as, role)."""
        return self.run(run)["sites"]

    # ---------- tokens ----------
    def tokens(self, run=None, frame=None):
        """The run's token rows: a pandas DataFrame (window, position, token_id, next_token_id,
        top1, nll, entropy) when pandas is importable and frame is not False; else a dict of
        numpy arrays [window, position] and "window", the window ids (ids -1, floats NaN
        where missing)."""
        p = ctypes.POINTER(_lib.Tokens)()
        check(lib().gs_api_store_tokens(self._h, self._run_id(run), ctypes.byref(p)))
        try:
            t = p.contents
            W, P = t.n_windows, t.n_positions

            def grab(ptr):
                return np.ctypeslib.as_array(ptr, shape=(W, P)).copy() if W * P else np.zeros((W, P))
            d = {"window": np.ctypeslib.as_array(t.window_ids, shape=(W,)).copy() if W else np.zeros(0, np.int32)}
            for k in ("token_id", "next_token_id", "top1", "nll", "entropy"):
                d[k] = grab(getattr(t, k))
        finally:
            lib().gs_api_tokens_free(p)
        if frame is False or (frame is None and _pd is None):
            return d
        if _pd is None:
            raise Error("tokens(frame=True) needs pandas")
        cols = {"window": np.repeat(d["window"], P), "position": np.tile(np.arange(P, dtype=np.int32), W)}
        cols.update({k: d[k].reshape(-1) for k in ("token_id", "next_token_id", "top1", "nll", "entropy")})
        return _pd.DataFrame(cols)

    # ---------- states ----------
    def states(self, site, run=None, index=False):
        """A site's recorded rows as float32: [windows, positions, width] when the run stored
        every position of every window it has, else [rows, width]; index=True gives
        (rows [n, width], windows [n], positions [n]) in (window, position) order.
        Read in chunks straight into the array."""
        h, n, width = ctypes.c_void_p(), ctypes.c_int64(), ctypes.c_int()
        check(lib().gs_api_states_open(self._h, self._run_id(run), encode(site), ctypes.byref(h),
                                       ctypes.byref(n), ctypes.byref(width)))
        n, width = n.value, width.value
        rows = np.empty((n, width), np.float32)
        win, pos = np.empty(n, np.int32), np.empty(n, np.int32)
        try:
            got = 0
            while got < n:
                k = check(lib().gs_api_states_read(h, _at(rows, got * width, ctypes.c_float), _at(win, got, ctypes.c_int32),
                                                   _at(pos, got, ctypes.c_int32), min(_CHUNK, n - got)))
                if k == 0:
                    break
                got += k
        finally:
            lib().gs_api_states_close(h)
        if got != n:
            raise Error(f"{self.path}: {site}: {n} rows counted, {got} read (written meanwhile?)")
        if index:
            return rows, win, pos
        W = len(np.unique(win)) if n else 0
        if n and n % W == 0:
            P = n // W
            if np.array_equal(pos, np.tile(np.arange(P, dtype=np.int32), W)) and np.all(win.reshape(W, P) == win[::P, None]):
                return rows.reshape(W, P, width)
        return rows

    # ---------- analyses ----------
    def _rows(self, run, table):
        """A run's table (gs_api_rows_open) as a list of dicts."""
        h = ctypes.c_void_p()
        check(lib().gs_api_rows_open(self._h, self._run_id(run), encode(table), ctypes.byref(h)))
        out = []
        try:
            cols = None
            while check(lib().gs_api_rows_next(h)) == 1:
                if cols is None:
                    cols = [lib().gs_api_rows_name(h, c).decode() for c in range(lib().gs_api_rows_columns(h))]
                out.append({name: _value(h, c) for c, name in enumerate(cols)})
        finally:
            lib().gs_api_rows_close(h)
        return out

    def _grouped(self, run, table, key):
        """A run's result table grouped by key(row), read once while the run's analyses stay the
        same (an analysis written or replaced since reads it again)."""
        run = self._run_id(run)
        stamp = tuple(a["analysis_id"] for a in self.analyses(run))
        cache = self.__dict__.setdefault("_cache", {})
        hit = cache.get((run, table))
        if hit is None or hit[0] != stamp:
            groups = {}
            for r in self._rows(run, table):
                groups.setdefault(key(r), []).append(r)
            hit = cache[(run, table)] = (stamp, groups)
        return hit[1]

    def vocabulary(self, run=None):
        """{token id: piece} of the run's tokenizer ({} when the store has no vocabulary for it)."""
        return {r["token_id"]: r["piece"] for r in self._rows(run, "vocabulary")}

    def analyses(self, run=None):
        """The run's analyses (id, name, settings, created_at, code_version), oldest first."""
        return self._rows(run, "analyses")

    def _newest(self, run):
        return {a["name"]: a["analysis_id"] for a in self.analyses(run)}

    def analysis_id(self, name, run=None):
        """The id of the run's newest analysis `name`, or None when it was not run."""
        return self._newest(run).get(name)

    def _aid(self, analysis, run):
        """An analysis given by id (int) or by name (its newest)."""
        return int(analysis) if isinstance(analysis, (int, np.integer)) else self.analysis_id(analysis, run)

    def results(self, run=None):
        """{analysis: {key: value}}: the newest analysis of each name and its scalars, under
        the names and keys of `gpnscope analyze --json` (NaN where stored as NULL)."""
        newest = self._newest(run)
        out = {name: {} for name in newest}
        for r in self._rows(run, "analysis_scalars"):
            if newest.get(r["analysis"]) == r["analysis_id"]:
                v = r["value"]
                out[r["analysis"]][r["key"]] = math.nan if v is None else v
        return out

    def scalars(self, analysis, run=None, notes=False):
        """One analysis's scalars (by id, or by name: the newest) as stored: {key: value}, a NULL as
        None; notes=True gives {key: (value, note)}. {} when the analysis is not there."""
        rows = self._grouped(run, "analysis_scalars", lambda r: r["analysis_id"]).get(self._aid(analysis, run), [])
        return {r["key"]: (r["value"], r["note"]) if notes else r["value"] for r in rows}

    def series(self, analysis, name, run=None, missing_ok=False):
        """A stored series of an analysis (by id, or by name: the newest) as {"x", "y": float64
        arrays (NaN where NULL), "label": list}, in stored order. A text x or y raises Error naming
        the point; an absent series raises Error, or gives empty arrays with missing_ok=True."""
        aid = self._aid(analysis, run)
        pts = self._grouped(run, "analysis_series", lambda r: (r["analysis_id"], r["series"])).get((aid, name), [])
        if not pts and not missing_ok:
            raise Error(f"{self.path}: no series '{name}' of analysis '{analysis}'")
        pts = sorted(pts, key=lambda r: r["idx"])
        out = {"label": [r["label"] for r in pts]}
        for col in ("x", "y"):
            vals = [r[col] for r in pts]
            bad = [i for i, v in enumerate(vals) if v is not None and not isinstance(v, (int, float))]
            if bad:
                raise Error(f"series '{name}' of analysis {aid} has {len(bad)} {col} value(s) that are not numbers "
                            f"(the first: {vals[bad[0]]!r} at point {bad[0]})")
            out[col] = np.array([math.nan if v is None else float(v) for v in vals], dtype=np.float64)
        return {"x": out["x"], "y": out["y"], "label": out["label"]}

    def vector(self, analysis, key, run=None, missing_ok=False):
        """A stored vector of an analysis (by id, or by name: the newest) as float32; an absent one
        raises Error, or gives None with missing_ok=True."""
        aid = self._aid(analysis, run)
        for r in self._grouped(run, "analysis_vectors", lambda r: r["id"]).get(aid, []):
            if r["key"] == key:
                if not isinstance(r["vector"], bytes) or len(r["vector"]) % 4:
                    raise Error(f"vector '{key}' of analysis {aid} is {type(r['vector']).__name__} of "
                                f"{len(r['vector'] or '')} bytes or characters, not little-endian float32")
                return np.frombuffer(r["vector"], dtype="<f4").astype(np.float32)
        if missing_ok:
            return None
        raise Error(f"{self.path}: no vector '{key}' of analysis '{analysis}'")


def _at(a, offset, ctype):
    """A pointer `offset` elements into a's buffer."""
    return ctypes.cast(a.ctypes.data + offset * a.itemsize, ctypes.POINTER(ctype))


def _value(h, c):
    t = lib().gs_api_rows_type(h, c)
    if t == _lib.NULL:
        return None
    if t == _lib.INT:
        return int(lib().gs_api_rows_int(h, c))
    if t == _lib.FLOAT:
        return float(lib().gs_api_rows_double(h, c))
    n = ctypes.c_int()
    p = lib().gs_api_rows_bytes(h, c, ctypes.byref(n))
    raw = ctypes.string_at(p, n.value) if p else b""
    return raw if t == _lib.BLOB else raw.decode("utf-8", "replace")

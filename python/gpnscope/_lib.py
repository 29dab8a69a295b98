"""libgpnscope.so through ctypes: finding it, the C declarations of
api/gpnscope.h, and C errors as gpnscope.Error."""
import ctypes
import os

API_VERSION = 1


class Error(Exception):
    """A failure of the C library, with its one-line message."""


def _candidates():
    """Where the library may be, in order: $GPNSCOPE_LIB, the build this
    package was set up with (_paths.py, written by scripts/setup.sh), then the
    source tree's build folder."""
    env = os.environ.get("GPNSCOPE_LIB")
    if env:
        yield env
    try:
        from . import _paths
        yield _paths.LIB
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "..", "build", "libgpnscope.so")


def _find():
    tried = []
    for path in _candidates():
        if os.path.isfile(path):
            return os.path.abspath(path)
        tried.append(path)
    raise Error("libgpnscope.so is at none of " + ", ".join(tried) +
                ": build it (cmake --build build) or set GPNSCOPE_LIB to its path")


c_int, c_int64, c_double, c_char_p, c_void_p, c_size_t = (ctypes.c_int, ctypes.c_int64, ctypes.c_double,
                                                          ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t)
P = ctypes.POINTER


class Site(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("layer", c_int), ("width", c_int), ("kind", c_char_p), ("role", c_char_p)]


HOOK = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, c_int, c_int, P(ctypes.c_float), c_int, c_int)


class Request(ctypes.Structure):
    _fields_ = [("site", c_char_p), ("out", P(ctypes.c_float)), ("hook", HOOK), ("ctx", c_void_p)]


class Tokens(ctypes.Structure):
    _fields_ = [("n_windows", c_int64), ("n_positions", c_int64), ("window_ids", P(ctypes.c_int32)),
                ("token_id", P(ctypes.c_int32)), ("next_token_id", P(ctypes.c_int32)), ("top1", P(ctypes.c_int32)),
                ("nll", P(ctypes.c_float)), ("entropy", P(ctypes.c_float))]


# name: (result type, argument types); int results are 0 / -1 (or a count)
_DECLS = {
    "gs_api_last_error": (c_char_p, []),
    "gs_api_version": (c_int, []),
    "gs_api_free": (None, [c_void_p]),
    "gs_api_model_open": (c_int, [c_char_p, P(c_void_p)]),
    "gs_api_model_close": (None, [c_void_p]),
    "gs_api_model_family": (c_char_p, [c_void_p]),
    "gs_api_model_config": (c_char_p, [c_void_p]),
    "gs_api_model_vocab": (c_int, [c_void_p]),
    "gs_api_model_n_sites": (c_int, [c_void_p]),
    "gs_api_model_site": (c_int, [c_void_p, c_int, P(Site)]),
    "gs_api_model_find_site": (c_int, [c_void_p, c_char_p, P(Site)]),
    "gs_api_run": (c_int, [c_void_p, P(ctypes.c_int32), c_int, c_int, P(Request), c_int, P(ctypes.c_float),
                           P(ctypes.c_float)]),
    "gs_api_tokenizer_open": (c_int, [c_char_p, P(c_void_p)]),
    "gs_api_tokenizer_close": (None, [c_void_p]),
    "gs_api_tokenizer_vocab": (c_int, [c_void_p]),
    "gs_api_tokenize": (c_int64, [c_void_p, c_char_p, c_size_t, P(P(ctypes.c_int32))]),
    "gs_api_detokenize": (c_int64, [c_void_p, P(ctypes.c_int32), c_size_t, P(c_void_p)]),
    "gs_api_store_open": (c_int, [c_char_p, P(c_void_p)]),
    "gs_api_store_close": (None, [c_void_p]),
    "gs_api_store_runs": (c_int64, [c_void_p, P(P(c_int64))]),
    "gs_api_store_run_json": (c_int, [c_void_p, c_int64, P(c_void_p)]),
    "gs_api_store_tokens": (c_int, [c_void_p, c_int64, P(P(Tokens))]),
    "gs_api_tokens_free": (None, [P(Tokens)]),
    "gs_api_states_open": (c_int, [c_void_p, c_int64, c_char_p, P(c_void_p), P(c_int64), P(c_int)]),
    "gs_api_states_read": (c_int64, [c_void_p, P(ctypes.c_float), P(ctypes.c_int32), P(ctypes.c_int32), c_int64]),
    "gs_api_states_close": (None, [c_void_p]),
    "gs_api_rows_open": (c_int, [c_void_p, c_int64, c_char_p, P(c_void_p)]),
    "gs_api_rows_next": (c_int, [c_void_p]),
    "gs_api_rows_columns": (c_int, [c_void_p]),
    "gs_api_rows_name": (c_char_p, [c_void_p, c_int]),
    "gs_api_rows_type": (c_int, [c_void_p, c_int]),
    "gs_api_rows_int": (c_int64, [c_void_p, c_int]),
    "gs_api_rows_double": (c_double, [c_void_p, c_int]),
    "gs_api_rows_bytes": (c_void_p, [c_void_p, c_int, P(c_int)]),
    "gs_api_rows_close": (None, [c_void_p]),
}

NULL, INT, FLOAT, TEXT, BLOB = range(5)  # gs_api_rows_type

_lib = None


def lib():
    """The loaded library, its functions declared (loaded once, on first use)."""
    global _lib
    if _lib is None:
        path = _find()
        try:
            so = ctypes.CDLL(path)
        except OSError as e:
            raise Error(f"loading {path}: {e}") from None
        for name, (res, args) in _DECLS.items():
            f = getattr(so, name)
            f.restype, f.argtypes = res, args
        if so.gs_api_version() != API_VERSION:
            raise Error(f"{path} has API version {so.gs_api_version()}, this package wants {API_VERSION}: "
                        "rebuild the library or use its own python/ folder")
        _lib = so
    return _lib


def last_error():
    return lib().gs_api_last_error().decode("utf-8", "replace")


def check(rc):
    """rc of a C call: a negative one raises the C message as gpnscope.Error."""
    if rc < 0:
        raise Error(last_error())
    return rc


def encode(s):
    if isinstance(s, bytes):
        return s
    return os.fsencode(s) if isinstance(s, os.PathLike) else str(s).encode("utf-8")

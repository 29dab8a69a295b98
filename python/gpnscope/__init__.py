"""gpnscope from Python: the C engine, its hooks and the store through
libgpnscope.so (docs/python.md). Standard library ctypes and numpy only.

    import gpnscope
    m = gpnscope.load("models/gpnm15-small")
    logits, cache = m.run_with_cache(m.to_tokens("The cat sat"), names_filter="state.pred")
    st = gpnscope.Store("study.db")
"""
from ._lib import Error
from .model import Cache, HookPoint, Model, Site, load
from .store import Store

__all__ = ["Error", "Cache", "HookPoint", "Model", "Site", "Store", "load"]

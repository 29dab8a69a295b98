#!/usr/bin/env python3
"""Pickles written by CPython's own pickler (protocols 0-5) and, for each,
the value as CPython loads it, in the canonical text form of
tests/unit/test_pickle_cpython.c. Used by that test only.

usage: pickle_cpython.py OUT_DIR   (writes NAME.pkl and NAME.expect)
"""
import collections
import os
import pickle
import struct
import sys

import numpy as np

DTYPES = {"f4": "F32", "f8": "F64", "f2": "F16", "i1": "I8", "i2": "I16", "i4": "I32", "i8": "I64",
          "u1": "U8", "u2": "U16", "u4": "U32", "u8": "U64", "b1": "BOOL"}


def dump(v):
    if v is None:
        return "N"
    if v is True or v is False:
        return "T" if v else "F"
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        return "A" + DTYPES[a.dtype.str[1:]] + "".join(".%d" % s for s in a.shape) + ":" + data.hex()
    if isinstance(v, int):
        return str(v) if -2**63 <= v < 2**63 else "BIG"
    if isinstance(v, float):
        return "f" + struct.pack("<d", v).hex()
    if isinstance(v, str):
        return "s" + v.encode("utf-8", "surrogatepass").hex()
    if isinstance(v, (bytes, bytearray)):
        return "b" + bytes(v).hex()
    if isinstance(v, list):
        return "[" + "".join(dump(x) + "," for x in v) + "]"
    if isinstance(v, tuple):
        return "(" + "".join(dump(x) + "," for x in v) + ")"
    if isinstance(v, dict):
        return "{" + "".join(dump(k) + ":" + dump(x) + "," for k, x in v.items()) + "}"
    if isinstance(v, (set, frozenset)):
        return "set<" + "".join(p + "," for p in sorted(dump(x) for x in v)) + ">"
    raise TypeError(type(v))


shared = [1, 2]
values = {
    "ints": [0, 1, -1, 255, 256, 65535, 65536, -2**31, 2**31 - 1, 2**31, 2**63 - 1, -2**63, 2**64, -2**100],
    "floats": [0.0, -0.0, 1.5, 1e300, float("inf"), -float("inf"), 3.141592653589793, 1e-310],
    "strs": ["", "a", "\u00e9", "\u65e5\u672c", "\U0001F600", "x" * 300, "a\nb", "\\", "'\"", "\x00", "\\u00e9"],
    "bytes": [b"", b"\x00\xff", b"x" * 300, bytearray(b"ab")],
    "containers": [[], (), {}, set(), frozenset(), [1, [2, [3]]], (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4),
                   {1: "a", "b": (2,)}, {frozenset([1]): 2}, {1, "x"}],
    "shared": [shared, shared, (shared,), {"k": shared}],
    "ordered": collections.OrderedDict([("a", 1), ("b", 2)]),
    "singletons": [None, True, False],
}
arrays = {
    "f4_2x3": np.arange(6, dtype="<f4").reshape(2, 3), "i8_be": np.arange(6, dtype=">i8").reshape(3, 2),
    "f8_fortran": np.asfortranarray(np.arange(6, dtype="<f8").reshape(2, 3)), "f4_scalar": np.float32(1.5),
    "i8_scalar": np.int64(-7), "bool_scalar": np.bool_(True), "f2_empty": np.zeros((0, 3), "<f2"),
    "u2_0d": np.array(5, "<u2"), "b1": np.array([True, False, True]), "u8": np.arange(4, dtype="u8"),
    "f4_transposed": np.arange(12, dtype="<f4").reshape(3, 4).T,
}
out = sys.argv[1]
for proto in range(6):
    cases = {"values": values, **arrays,
             "checkpoint": {"step": 3, "params": {"L0": {"w": arrays["f4_2x3"]}, "b": arrays["f8_fortran"]}}}
    for name, v in cases.items():
        base = os.path.join(out, "p%d_%s" % (proto, name))
        with open(base + ".pkl", "wb") as f:
            pickle.dump(v, f, protocol=proto)
        with open(base + ".pkl", "rb") as f:
            loaded = pickle.load(f)
        with open(base + ".expect", "w") as f:
            f.write(dump(loaded) + "\n")

#!/usr/bin/env python3
"""Writes the golden pickles that kg's pickle writer is compared with.

Run from kg/testdata/pickle with any CPython 3 (numpy is not needed):

    python3 make_golden.py

The output is committed; the Go tests never run Python.

torch.save(d) pickles a dict d at protocol 2; OGB's split dicts hold int64
numpy arrays and lists of str. numpy is stood in for here by classes that
reduce exactly as numpy 1.x's ndarray and dtype do (ndarray.__reduce_ex__:
_reconstruct(ndarray, (0,), b'b') with the state (1, shape, dtype, False,
data); dtype('i8').__reduce__: dtype('i8', False, True) with the state
(3, '<', None, None, None, -1, -1, 0)), under numpy's module names, so that
CPython's own pickler lays out the memo, the batches and the integer
encodings of dicts larger than the torch-written fixtures: past 255 memo
entries, lists of more than 1000 items, shapes past 255 and 65535,
values of all eight bytes, empty arrays and a dict of one key.
"""
import pickle
import struct
import sys
import types

numpy = types.ModuleType("numpy")
core = types.ModuleType("numpy.core")
multiarray = types.ModuleType("numpy.core.multiarray")
sys.modules.update({"numpy": numpy, "numpy.core": core, "numpy.core.multiarray": multiarray})


def _reconstruct(cls, shape, typecode):
    raise NotImplementedError


_reconstruct.__module__ = "numpy.core.multiarray"
multiarray._reconstruct = _reconstruct


class dtype:
    def __reduce__(self):
        return (dtype, ("i8", False, True), (3, "<", None, None, None, -1, -1, 0))


dtype.__module__ = "numpy"
numpy.dtype = dtype
INT64 = dtype()  # numpy's dtype('int64') is one object
B = b"b"  # numpy hands the pickler one b'b'


class ndarray:
    def __init__(self, shape, values):
        self.shape = shape
        self.data = struct.pack("<%dq" % len(values), *values)

    def __reduce_ex__(self, protocol):
        # Fresh tuples each time, as numpy builds them.
        return (_reconstruct, (ndarray, tuple([0]), B), (1, tuple(self.shape), INT64, False, self.data))


ndarray.__module__ = "numpy"
numpy.ndarray = ndarray


def values(n):
    """n int64 values that need every byte, negative ones included."""
    return [(i * 2654435761) % (1 << 40) - (1 << 39) if i % 7 == 0 else i * 131 for i in range(n)]


names = ["type%03d" % i for i in range(300)]  # one object per name
many = {
    "head": ndarray([1500], values(1500)),
    "head_type": [names[(i * 7) % 300] for i in range(2100)],
    "empty": ndarray([0], []),
    "head_neg": ndarray([70000, 1], values(70000)),
    "one": [names[5]],
    "also_empty": ndarray([0, 3], []),
    "none": [],
}
one = {"relation": ndarray([3], [0, 255, 256])}
for name, d in (("many.pkl", many), ("one.pkl", one)):
    with open(name, "wb") as f:
        f.write(pickle.dumps(d, protocol=2))

"""The arrays a call makes and the ``out=`` arrays it is given, for the runner and the windows
batches' runs alike: results allocated (one array, or parts packed into one allocation), the
layouts of ``out=`` checked, and 16-byte elements viewed as pairs of 8-byte words."""

from __future__ import annotations

import math
import sys

import numpy as np

from ..core.errors import BindingError
from ..core.memory import element_strides
from ..core.tensor import MAX_DIMENSIONS, packed_strides

__all__ = [
    "PART_ALIGNMENT",
    "WORD",
    "check_unbound_outs",
    "check_words_rank",
    "elements",
    "empty",
    "pairs",
    "part_offsets",
    "parts",
    "result_view",
]

#: Parts packed into one allocation each start at a multiple of this many bytes.
PART_ALIGNMENT = 16


def empty(kind, shape, dtype):
    """A new array of memory ``kind`` ("numpy" or "cupy")."""
    if kind == "numpy":
        return np.empty(shape, dtype)
    return sys.modules["cupy"].ndarray(shape, dtype)


def part_offsets(shapes, itemsize):
    """``(offsets, total)``: results of ``shapes`` back to back in one allocation of ``total``
    bytes, each at its byte offset, a multiple of ``PART_ALIGNMENT``."""
    offsets, total = [], 0
    for s in shapes:
        offsets.append(total)
        total += -(-math.prod(s) * itemsize // PART_ALIGNMENT) * PART_ALIGNMENT
    return tuple(offsets), total


def parts(kind, buffer, shapes, offsets, dtype):
    """The results of ``shapes`` at ``offsets`` (``part_offsets``'): views of the one
    allocation ``buffer``."""
    if kind == "numpy":
        return [np.ndarray(s, dtype, buffer=buffer, offset=o) for s, o in zip(shapes, offsets)]
    cupy, memory = sys.modules["cupy"], buffer.data
    return [cupy.ndarray(s, dtype, memptr=memory + o) for s, o in zip(shapes, offsets)]


def check_unbound_outs(name, outs, kind):
    """What the binding rules would say of ``out=`` arrays that no tensor binds (empty
    results): a read-only one is refused, as NumPy refuses to assign into it."""
    if kind == "numpy":
        read_only = [k for k, o in enumerate(outs) if not o.flags.writeable]
        if read_only:
            raise BindingError([f"{name}.execute: outputs[{k}]: the buffer is read-only" for k in read_only])


def result_view(name, k, out_layout, shape, dtype, per_element=None):
    """The layout result ``k`` is compiled for: ``out``'s, checked against the result's shape
    and dtype, or packed for a fresh result. ``per_element``: how many of ``out``'s stride
    units make an element (by default its bytes: strides in bytes)."""
    if out_layout is None:
        return tuple(shape), packed_strides(shape)
    out_shape, out_strides, out_dtype = out_layout
    out_shape, per_element = tuple(out_shape), per_element or dtype.itemsize
    if out_dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out_dtype}; the result has dtype {dtype}")
    where = f"{name}.execute: outputs[{k}]"
    if out_shape != tuple(shape):
        raise BindingError([f"{where}: out has shape {out_shape}; the result has shape {tuple(shape)}"])
    elements = element_strides(out_shape, out_strides, per_element)
    if elements is None:
        raise BindingError([f"{where}: out has strides {out_strides}, not whole {dtype.itemsize}-byte elements"])
    return out_shape, elements


# ---- 16-byte elements as pairs of 8-byte words (directml_types=False) ---------------------------

#: The words 16-byte elements move as pairs of.
WORD = np.dtype(np.uint64)


def pairs(a, real):
    """``a``'s elements as pairs of ``real`` words: a view with a trailing axis of 2."""
    if isinstance(a, np.ndarray):
        return a[..., None].view(real)
    cupy = sys.modules["cupy"]
    return cupy.ndarray((*a.shape, 2), real, memptr=a.data, strides=(*a.strides, real.itemsize))


def elements(words, dtype):
    """The 16-byte elements of a view of word pairs (a trailing axis of 2)."""
    if isinstance(words, np.ndarray):
        return words.view(dtype)[..., 0]
    cupy = sys.modules["cupy"]
    return cupy.ndarray(words.shape[:-1], dtype, memptr=words.data, strides=words.strides[:-1])


def check_words_rank(operation, shape):
    ndim = len(getattr(operation, "input_shape", shape))  # the rank of the tensors the call describes
    if ndim >= MAX_DIMENSIONS:
        raise ValueError(
            f"{operation.NAME}: 16-byte elements move as pairs of 8-byte words (one more dimension), so "
            f"arrays of up to {MAX_DIMENSIONS - 1} dimensions; this one has {ndim}"
        )

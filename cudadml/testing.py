"""Helpers for tests and self-checks: aligned buffers, poisoned outputs and canaries.

Data movement is exact, so every check compares bytes. Output buffers are filled with a
poison byte before each run and carry canary bytes before and after the tensor, so an
unwritten element, or a byte written outside the output's elements, is caught.
"""

from __future__ import annotations

import numpy as np

from .backends import use_host_backend
from .core.memory import aligned_empty
from .run.bindings import BufferBinding

__all__ = ["CANARY", "INPUT_PADDING", "POISON", "TensorBuffer", "aligned_empty", "emulated", "random_array", "to_host"]

POISON = 0xA5  # fills output buffers before a run: no element value we generate is all 0xA5
#: Fills the bytes of input buffers that are not elements: a kernel that reads one and writes
#: it out leaves a byte that is neither an expected value nor poison.
INPUT_PADDING = 0x3C
CANARY = 64  # bytes kept poisoned before and after every bound tensor


def emulated():
    """Inside the block, NumPy arrays in the calling thread run through the CUDA kernels
    emulated on the host instead of the NumPy reference (``use_host_backend("emulate")``)."""
    return use_host_backend("emulate")


def random_array(shape, dtype, rng, xp=np):
    """Fresh random bits of ``dtype`` (never zeros; NaN payloads included for floats)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    data = rng.integers(0, 256, size=n, dtype=np.uint8)
    data[data == POISON] = 0x5A  # keep poison bytes unique to unwritten memory
    host = data.view(dtype).reshape(shape)
    return host if xp is np else xp.asarray(host)


def to_host(a):
    """A NumPy copy of a NumPy or CuPy array."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


class TensorBuffer:
    """A buffer holding one ``BufferTensorDesc``, with canaries on both sides.

    ``binding`` binds the tensor's range; ``elements()`` is a strided view of its elements;
    ``untouched_outside()`` says whether every byte that is not an element still holds poison.
    """

    def __init__(self, tensor, xp=np, offset_alignment=0):
        self.tensor, self.xp = tensor, xp
        size = tensor.total_tensor_size_in_bytes
        self.offset = offset = max(CANARY, offset_alignment or 0)
        self.raw = aligned_empty(offset + size + CANARY, xp)
        self.raw[...] = POISON
        self.binding = BufferBinding(self.raw, offset, size)

    def elements(self):
        t = self.tensor
        dtype = t.data_type.numpy_dtype
        size = t.data_type.element_size
        span = t.total_tensor_size_in_bytes // size
        typed = self.raw[self.offset : self.offset + span * size].view(dtype)
        strided = self.xp.lib.stride_tricks.as_strided
        return strided(typed, shape=t.sizes, strides=[s * size for s in t.effective_strides])

    def fill(self, values):
        """Make this an input buffer holding ``values``, its other bytes ``INPUT_PADDING``."""
        self.raw[...] = INPUT_PADDING
        self.elements()[...] = self.xp.asarray(values)
        return self

    def element_mask(self):
        """True for the bytes of the buffer that belong to the tensor's elements."""
        t = self.tensor
        mask = np.zeros(self.raw.size, bool)
        index = np.zeros(t.sizes, np.int64)
        for axis, stride in enumerate(t.effective_strides):
            shape = [1] * len(t.sizes)
            shape[axis] = t.sizes[axis]
            index = index + np.arange(t.sizes[axis]).reshape(shape) * stride
        starts = self.offset + index.ravel() * t.data_type.element_size
        for b in range(t.data_type.element_size):
            mask[starts + b] = True
        return mask

    def untouched_outside(self) -> bool:
        host = to_host(self.raw)
        return bool(np.all(host[~self.element_mask()] == POISON))

    def host_elements(self):
        return np.array(to_host(self.elements()))

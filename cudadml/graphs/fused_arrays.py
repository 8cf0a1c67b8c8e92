"""The memory kinds of ``cudadml.fuse``'s calls: how a program reaches NumPy arrays (host,
``HostArrays``) and CuPy arrays (device, ``DeviceArrays``), what ``Arrays`` asks of a kind
(PyTorch's tensors are ``interop.torch_fuse``'s), and the results' allocation."""

from __future__ import annotations

import functools
import operator
import sys

import numpy as np

from ..core.memory import ALIGNMENT, aligned_empty, cupy_address, numpy_address


class _HostBytes:
    """A range of host memory as NumPy sees it (``numpy.asarray`` of it); ``owner`` keeps it valid."""

    def __init__(self, address, nbytes, owner):
        self.__array_interface__ = {"data": (address, False), "shape": (nbytes,), "typestr": "|u1", "version": 3}
        self.owner = owner


def allocate(xp, parts, total):
    """The graph outputs of a call, new C-contiguous arrays of the module ``xp`` (NumPy or CuPy)
    placed as ``parts`` say in one allocation of ``total`` bytes (one array: its own), and
    their addresses. Their alignment only speeds the launch: its access widths follow the
    addresses."""
    if len(parts) == 1:
        ((shape, dtype, _),) = parts
        out = xp.ndarray(shape, dtype)
        return [out], [numpy_address(out) if xp is np else cupy_address(out)]
    buffer = xp.empty(total, np.uint8)
    if xp is np:
        base = numpy_address(buffer)
        outs = [np.ndarray(shape, dtype, buffer, offset) for shape, dtype, offset in parts]
    else:
        memory = buffer.data
        base, new = memory.ptr, xp.ndarray
        outs = [new(shape, dtype, memory + offset) for shape, dtype, offset in parts]
    return outs, [base + offset for _, _, offset in parts]


def address_bits(outs):
    """The OR of the outputs' addresses: the inputs' are aligned, so the access widths follow these."""
    return outs[0] if len(outs) == 1 else functools.reduce(operator.or_, outs)


def host_buffers(ins, compiled, owners):
    """The inputs' buffers of a host launch, as the graph's tensors take them (the emulated
    kernels check each load against them)."""
    return [np.asarray(_HostBytes(i, n, a)) for i, n, a in zip(ins, compiled.in_needs, owners)]


class Arrays:
    """NumPy (host, ``HostArrays``) or CuPy (device, ``DeviceArrays``) arrays: what
    ``Program`` asks of a memory kind. ``layouts`` and ``keys`` give the key of a call and the
    run key of its used inputs (per input its strides and address modulo 16, from which the
    layout of its tensor follows); ``call`` launches a run into new arrays; ``geometry``
    (shape, byte strides, element size, address, C-contiguity) and ``stage`` serve the calls
    that find no run.

    ``call`` binds no buffer: every binding rule holds by construction (the inputs' tensors
    start at the aligned addresses below their elements and lie in their arrays, the outputs
    are new), so ``execute``'s checks are left out."""

    def __init__(self, xp, device):
        self.xp, self.device = xp, device

    def stage(self, a):
        copy = self.xp.ndarray(a.shape, a.dtype, aligned_empty(a.nbytes, self.xp, ALIGNMENT).data)
        copy[...] = a
        return copy

    def staged(self, run, used):
        return [self.stage(a) if i in run.staged else a for i, a in enumerate(used)]

    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype)

    def zeros(self, shape, dtype):
        return self.xp.zeros(shape, dtype)


class HostArrays(Arrays):
    kind = "numpy"

    @staticmethod
    def layouts(arrays):
        """Per array its dtype, shape, strides and address modulo 16: what a call's program and run follow from."""
        return tuple([(a.dtype, a.shape, a.strides, numpy_address(a) % ALIGNMENT) for a in arrays])

    @staticmethod
    def keys(used):
        return tuple([(a.strides, numpy_address(a) % ALIGNMENT) for a in used])

    @staticmethod
    def geometry(a):
        return a.shape, a.strides, a.dtype.itemsize, numpy_address(a), a.flags.c_contiguous

    def call(self, run, used):
        if run.staged:  # (rare: strides or an address not whole words, or too many dimensions)
            used = self.staged(run, used)
        compiled = run.compiled
        values, outs = allocate(np, compiled.parts, compiled.total)
        ins = [numpy_address(a) + start for a, start in zip(used, run.starts)]
        bound = (ins, outs), (host_buffers(ins, compiled, used), values), address_bits(outs)
        compiled.op.execute_bound(("numpy", *bound), None)
        return values


class DeviceArrays(Arrays):
    kind = "cupy"

    @staticmethod
    def layouts(arrays):
        """``HostArrays.layouts``, and each array's device."""
        # (the memory pointer read once: its address, as cupy_address reads it, and its device)
        return tuple([(a.dtype, a.shape, a.strides, (m := a.data).ptr % ALIGNMENT, m.device_id) for a in arrays])

    @staticmethod
    def keys(used):
        return tuple([(a.strides, cupy_address(a) % ALIGNMENT) for a in used])

    @staticmethod
    def geometry(a):
        return a.shape, a.strides, a.dtype.itemsize, cupy_address(a), a.flags.c_contiguous

    def call(self, run, used):  # on the current CuPy stream
        if run.staged:  # (rare: strides or an address not whole words, or too many dimensions)
            used = self.staged(run, used)
        compiled = run.compiled
        values, outs = allocate(self.xp, compiled.parts, compiled.total)
        ins = [cupy_address(a) + start for a, start in zip(used, run.starts)]
        compiled.op.execute_bound(("cupy", (ins, outs), (used, values), address_bits(outs)), None)
        return values


HOST = HostArrays(np, None)
_DEVICES = {}  # per CuPy device, its DeviceArrays


def device_arrays(device):
    memory = _DEVICES.get(device)
    if memory is None:
        memory = _DEVICES[device] = DeviceArrays(sys.modules["cupy"], device)
    return memory

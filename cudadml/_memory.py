"""Where an array's memory is: its kind (host or CuPy device), byte address and extent."""

from __future__ import annotations

import sys

import numpy as np


def cupy_module():
    """CuPy if it is already imported (we never import it just to look at an argument)."""
    return sys.modules.get("cupy")


def is_cupy_array(a) -> bool:
    cp = cupy_module()
    return cp is not None and isinstance(a, cp.ndarray)


def address_of(a) -> int:
    """Byte address of element 0 of a NumPy or CuPy array."""
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    return a.data.ptr


def element_strides(shape, strides, per_element):
    """``strides`` in elements of ``per_element`` stride units, or None where one is not whole.
    An axis of one element, or any axis of an empty array, moves nowhere: its stride counts as 0
    (a record's field of one element has strides of the record's size)."""
    if 0 in shape:
        return (0,) * len(shape)
    if any(s % per_element for n, s in zip(shape, strides) if n != 1):
        return None
    return tuple(s // per_element if n != 1 else 0 for n, s in zip(shape, strides))


def byte_extent(a) -> tuple[int, int]:
    """``[low, high)`` bytes that the elements of ``a`` occupy, whatever its strides."""
    low = high = address_of(a)
    if a.size == 0:
        return low, low
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high + a.itemsize


def ranges_overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]

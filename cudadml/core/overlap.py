"""Exact overlap of strided tensors: the geometry behind DirectML's rules that an output must
not overlap itself, nor any other binding.

A tensor here is a set of elements: ``itemsize`` bytes at ``address + sum(c[i] * strides[i])``
for every index ``c`` of ``shape`` (byte strides, signed). Two elements overlap when any of
their bytes do. Cheap sufficient tests come first; where they cannot decide, NumPy's exact
solver of the bounded Diophantine problem (``numpy.shares_memory(..., max_work=None)``)
decides on array headers that point at the addresses but are never read.
"""

from __future__ import annotations

import numpy as np

__all__ = ["array_at", "overlaps_itself", "pairs_sharing_elements", "share_an_element"]

#: Where self-overlap tests place their tensor: any address whose neighbourhood is a valid
#: pointer range for NumPy; nothing is ever read there.
_BASE = 1 << 56


class _Interface:
    """An ``__array_interface__`` for NumPy to build an array header from."""

    def __init__(self, interface):
        self.__array_interface__ = interface


def array_at(address, shape, typestr, strides=None, *, writable=False, **more):
    """A NumPy array of ``shape`` elements of ``typestr`` at ``address``, with byte ``strides``
    (None: packed), through ``__array_interface__``: no copy, nothing read until it is used.
    ``more``: the interface's other entries (``descr``, for a structured dtype)."""
    interface = {"data": (address, not writable), "shape": tuple(shape), "typestr": typestr, "version": 3, **more}
    if strides is not None:
        interface["strides"] = tuple(strides)
    return np.asarray(_Interface(interface))


def _header(address, itemsize, shape, strides):
    """An array header of ``itemsize``-byte elements at ``address``, never read."""
    return array_at(address, shape, f"|V{itemsize}", strides)


def overlaps_itself(shape, strides, itemsize) -> bool:
    """Whether two different indices of the tensor reach a common byte.

    Decided exactly. Dimensions sorted by stride, each stride at least the bytes the inner
    ones reach proves the tensor overlap-free. Otherwise, two indices ``c != c'`` collide iff,
    at the first dimension ``k`` where they differ, ``(c[k] - c'[k]) * |stride[k]|`` plus the
    inner dimensions' terms vanish: an element set ``{d * s_k + inner(c) : 1 <= d < n_k}``
    meeting ``{inner(c')}``, which is a question for ``numpy.shares_memory``.
    """
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    reach = itemsize  # bytes from the first element's start to the last element's end so far
    for stride, n in dims:
        if stride < reach:
            break
        reach += (n - 1) * stride
    else:
        return False
    dims.reverse()  # outermost first: dims[k + 1:] are the inner ones of dims[k]
    for k, (stride, n) in enumerate(dims):
        inner_shape = [m for _, m in dims[k + 1 :]]
        inner_strides = [s for s, _ in dims[k + 1 :]]
        moved = _header(_BASE + stride, itemsize, [n - 1, *inner_shape], [stride, *inner_strides])
        fixed = _header(_BASE, itemsize, inner_shape, inner_strides)
        if np.shares_memory(moved, fixed, max_work=None):
            return True
    return False


def reach(start, shape, strides) -> tuple[int, int]:
    """``(first, last)``: the lowest and the highest offset (in the units of ``strides``) that
    the elements of ``shape`` (none empty) reach from ``start``."""
    low = high = start
    for n, s in zip(shape, strides):
        if s < 0:
            low += (n - 1) * s
        else:
            high += (n - 1) * s
    return low, high


def extent(address, itemsize, shape, strides) -> tuple[int, int]:
    """``[low, high)``: the bytes from the tensor's lowest element to the end of its highest."""
    low, high = reach(address, shape, strides)
    return low, high + itemsize


def share_an_element(a, b) -> bool:
    """Whether tensors ``a`` and ``b``, each ``(address, itemsize, shape, strides)``, have a
    byte in common. Exact: interleaved tensors that share no byte do not overlap."""
    low_a, high_a = extent(*a)
    low_b, high_b = extent(*b)
    if high_a <= low_b or high_b <= low_a:
        return False
    # Both moved by _BASE: NumPy refuses a NULL data pointer, and a shift changes no overlap.
    return bool(np.shares_memory(_header(_BASE + a[0], *a[1:]), _header(_BASE + b[0], *b[1:]), max_work=None))


def outputs_meet(lows, highs, first_output) -> bool:
    """Whether the extent ``[low, high)`` of any output (those from ``first_output`` on) meets
    another output's or an input's; inputs may meet each other. Vectorised: outputs sorted by
    address, and each output against the union of the inputs' extents (an input meets output
    ``k`` iff among the inputs starting before ``k`` ends, the furthest end passes its start)."""
    out_lows, out_highs = lows[first_output:], highs[first_output:]
    order = np.argsort(out_lows)
    if np.any(out_lows[order][1:] < np.maximum.accumulate(out_highs[order])[:-1]):
        return True
    if not first_output:
        return False
    order = np.argsort(lows[:first_output])
    in_lows, furthest = lows[:first_output][order], np.maximum.accumulate(highs[:first_output][order])
    before = np.searchsorted(in_lows, out_highs, side="left") - 1
    return bool(np.any((before >= 0) & (furthest[np.maximum(before, 0)] > out_lows)))


def pairs_sharing_elements(lows, highs, tensor, candidates) -> list[tuple[int, int]]:
    """Pairs ``(j, k)``, ``j < k``, of tensors that share a byte, among those where
    ``candidates(j, k)`` is true.

    ``lows``/``highs`` (int64 arrays) are the tensors' extents ``[low, high)`` and
    ``tensor(k)`` tensor ``k``'s ``(address, itemsize, shape, strides)``, asked for only when
    its extent meets another's. Extents are sorted by address: when each starts at or after
    the end of all before it, none meet (one vectorised pass, ``O(n log n)``); otherwise
    only pairs whose extents intersect are compared element by element.
    """
    order = np.argsort(lows, kind="stable")
    sorted_lows, sorted_highs = lows[order], highs[order]
    if not np.any(sorted_lows[1:] < np.maximum.accumulate(sorted_highs)[:-1]):
        return []
    order, sorted_lows, sorted_highs = order.tolist(), sorted_lows.tolist(), sorted_highs.tolist()
    found = []
    for position, (j, high) in enumerate(zip(order, sorted_highs)):
        q = position + 1
        while q < len(order) and sorted_lows[q] < high:
            k = order[q]
            pair = (j, k) if j < k else (k, j)
            if candidates(*pair) and share_an_element(tensor(pair[0]), tensor(pair[1])):
                found.append(pair)
            q += 1
    return sorted(found)

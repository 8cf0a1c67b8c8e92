"""Basic indexing (``x[key]`` with ints, slices of any step, ``...`` and ``None``) as NumPy
reads it, turned into one SLICE1 window per input axis."""

from __future__ import annotations

import operator
from builtins import slice as _pyslice

import numpy as np

from . import memory

__all__ = ["index_key", "parse_key", "window_params", "window_reach", "window_start"]


def window_start(offset, size, stride):
    """Where a SLICE1 window of ``offset``, ``size`` and ``stride`` starts copying: its first
    element, or for a negative stride its last, ``offset + size - 1`` (DirectML's CopyStart).

    Works on ints and, elementwise, on NumPy arrays of windows.

    >>> window_start(1, 4, 2), window_start(1, 4, -2)
    (1, 4)
    """
    return offset + (size - 1) * (stride < 0)


def window_reach(size, stride):
    """How many elements a window of ``size`` (at least 1) and ``stride`` (non-zero) takes at
    most: ``1 + (size - 1) // |stride|`` (DirectML's MaxCopiedElements).

    Works on ints and, elementwise, on NumPy arrays of windows.

    >>> window_reach(5, 2), window_reach(5, -3)
    (3, 2)
    """
    return 1 + (size - 1) // abs(stride)


def _optional_index(value):
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"slice indices must be integers or None or have an __index__ method, not {type(value).__name__}"
        ) from None


def index_key(key) -> tuple:
    """``key`` as exact values: ints, ``None``, ``...``, and ``(start, stop, step)`` for slices."""
    items = key if type(key) is tuple else (key,)
    tokens = []
    for k in items:
        if k is None or k is Ellipsis:
            tokens.append(k)
        elif type(k) is _pyslice:
            start, stop, step = k.start, k.stop, k.step
            if (
                (start is None or type(start) is int)
                and (stop is None or type(stop) is int)
                and (step is None or type(step) is int)
            ):  # already exact (the common case), without a call per field
                tokens.append((start, stop, step))
            else:
                tokens.append((_optional_index(start), _optional_index(stop), _optional_index(step)))
        elif isinstance(k, (bool, np.bool_)) or not hasattr(k, "__index__"):
            raise TypeError(f"only basic indices (int, slice, ..., None) are supported, not {type(k).__name__}")
        else:
            tokens.append(operator.index(k))
    return tuple(tokens)


@memory.cache(256)
def parse_key(tokens: tuple, shape: tuple) -> tuple:
    """``index_key``'s tokens read against ``shape``: ``(windows, result_shape, axis_map)``.

    ``windows[d] = (start, step, count)`` for input axis ``d`` (the step 1 where at most one
    element is taken: any other step is irrelevant); ``axis_map[d]`` is the result axis that
    ``d`` becomes, or ``None`` where an integer index drops it. Memoized (the forward and the
    gradient of one index parse it once).
    """
    ndim = len(shape)
    if sum(k is Ellipsis for k in tokens) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in tokens)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    full = (None, None, None)
    if any(k is Ellipsis for k in tokens):
        at = tokens.index(Ellipsis)
        tokens = tokens[:at] + (full,) * (ndim - used) + tokens[at + 1 :]
    else:
        tokens = tokens + (full,) * (ndim - used)
    windows, result_shape, axis_map = [], [], []
    d = 0
    for k in tokens:
        if k is None:
            result_shape.append(1)
            continue
        n = shape[d]
        if type(k) is tuple:
            start, step, count = _slice_window(*k, n)
            windows.append((start, step if count > 1 else 1, count))
            axis_map.append(len(result_shape))
            result_shape.append(count)
        else:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            windows.append((k % n, 1, 1))
            axis_map.append(None)
        d += 1
    return tuple(windows), tuple(result_shape), tuple(axis_map)


def _slice_window(start, stop, step, n):
    """``(start, step, count)`` of ``range(*slice(start, stop, step).indices(n))``, as CPython
    computes them (written out: tracers such as Dynamo do not all follow ``slice.indices``)."""
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("slice step cannot be zero")
    back = step < 0
    bounds = []
    for value, default in ((start, n - 1 if back else 0), (stop, -1 if back else n)):
        if value is None:
            value = default
        elif value < 0:
            value = max(value + n, -1 if back else 0)
        else:
            value = min(value, n - 1 if back else n)
        bounds.append(value)
    start, stop = bounds
    count = max(0, (start - stop - step - 1) // -step if back else (stop - start + step - 1) // step)
    return start, step, count


def window_params(windows) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """SLICE1's window offsets, sizes and strides that read ``(start, step, count)`` per axis
    (an axis that reads nothing: an empty window at 0, wherever the index started it)."""
    offsets, sizes, strides = [], [], []
    for start, step, count in windows:
        if count == 0:
            offsets.append(0)
            sizes.append(0)
        else:
            offsets.append(start if step > 0 else start + (count - 1) * step)
            sizes.append((count - 1) * abs(step) + 1)
        strides.append(step)
    return tuple(offsets), tuple(sizes), tuple(strides)

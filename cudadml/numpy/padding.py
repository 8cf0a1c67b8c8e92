"""NumPy's ``pad``. ``mode="constant"``: one pass of ``slice_grad``'s kernel with the constant
(0 too) as the fill it writes where the array does not land; the modes that move data (edge,
reflect, symmetric, wrap, empty): PADDING's copies (``cudadml.ops.padding``), one launch each; the
modes that compute (statistics, linear_ramp, reflect_type="odd", a function): NumPy's or
CuPy's own pad. Traced (``cudadml.fuse``), a pad of zeros is one ``slice_grad``."""

from __future__ import annotations

import importlib
import math
import sys
import typing

import numpy as np

from ..core.enums import PaddingMode
from ..core.memory import kept, nested_bytes
from ..core.plan import fill_pattern
from ..ops.padding import Pad
from ..run.arrays import slice_grad, strided_slice_grad
from .arrays import (
    AS_IS_SIZES,
    RAW,
    alone,
    as_array,
    as_words,
    copy_of,
    exact,
    fold,
    from_words,
    in_passes,
    new_array,
    on_host,
    past_one_buffer,
    rank_limit,
    run_operation,
    traced,
    words_of,
)
from .docs import documented

# ---- pad -----------------------------------------------------------------------------------------

#: numpy.pad's modes and the keywords each takes.
_PAD_KEYWORDS = {
    "empty": [],
    "edge": [],
    "wrap": [],
    "constant": ["constant_values"],
    "linear_ramp": ["end_values"],
    "maximum": ["stat_length"],
    "mean": ["stat_length"],
    "median": ["stat_length"],
    "minimum": ["stat_length"],
    "reflect": ["reflect_type"],
    "symmetric": ["reflect_type"],
}


#: numpy.pad's modes that move data, and PADDING's mode of each ("empty": any values, so zeros).
_DATA_MODES = {
    "constant": PaddingMode.CONSTANT,
    "empty": PaddingMode.CONSTANT,
    "edge": PaddingMode.EDGE,
    "reflect": PaddingMode.REFLECTION,
    "symmetric": PaddingMode.SYMMETRIC,
    "wrap": PaddingMode.WRAP,
}


def _as_pairs(x, ndim, as_index=False):
    """NumPy's ``numpy.lib._arraypad_impl._as_pairs``: ``x`` broadcast to ``ndim`` pairs."""
    if x is None:
        return ((None, None),) * ndim
    x = np.array(x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x < 0:
                raise ValueError("index can't contain negative values")
            return ((x[0], x[0]),) * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError("index can't contain negative values")
            return ((x[0], x[1]),) * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return np.broadcast_to(x, (ndim, 2)).tolist()


@documented()
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array, as ``numpy.pad``: one launch in the modes that move data.

    In ``"constant"`` mode the result is made by one pass of the SLICE_GRAD kernel (each element written once: the
    array's where it lands, the constant elsewhere), given the constant's bits as its fill (0
    too: the zeros ``cudadml.slice_grad`` writes), at any size. Constants that differ between
    axes or sides take that pass and then one fill per padded side, in NumPy's order (later
    axes win at the corners); so do dtypes of other than 1, 2, 4, 8 or 16 bytes (strings) with
    a non-zero constant. An empty array is filled without a kernel. Past 8 dimensions, where
    the padded axes and the runs between them are more than DirectML's 8, a pass per as many
    padded axes as fit. ``"edge"``, ``"reflect"``, ``"symmetric"`` and ``"wrap"`` (at any
    width, folding past the axis's size as NumPy does) are one launch of PADDING's copies;
    ``"empty"`` is zeros. The modes that compute (``"maximum"``, ``"mean"``, ``"median"``,
    ``"minimum"``, ``"linear_ramp"``, ``reflect_type="odd"``, a function) are NumPy's
    ``numpy.pad`` for NumPy arrays and CuPy's ``cupy.pad`` for CuPy arrays.

    Parameters
    ----------
    array : array_like
        The array to pad (NumPy or CuPy array, or what ``numpy.asarray`` takes).
    pad_width : int, sequence or dict
        Elements added before and after each axis: ``((before_1, after_1), ...)``, ``(before,
        after)`` or ``n`` for every axis, or ``{axis: n or (before, after)}``; non-negative
        integers.
    mode : str or callable, default "constant"
        One of NumPy's modes, or a padding function.
    constant_values : scalar or sequence, default 0
        The constant, or one per axis and side as ``pad_width``; converted to ``array``'s
        dtype as NumPy assigns it (a Python integer out of range raises ``OverflowError``).

    Returns
    -------
    array
        A new C-contiguous array of ``array``'s kind and dtype.

    Raises
    ------
    ValueError
        For an unknown mode, keywords the mode does not take, negative widths, widths or
        constants that do not broadcast to ``(array.ndim, 2)``.
    TypeError
        For widths that are not integers, a constant the dtype cannot hold (None in an
        integer array), object dtypes.

    {examples}
    >>> cnp.pad(np.array([[1, 2], [3, 4]]), 1)
    array([[0, 0, 0, 0],
           [0, 1, 2, 0],
           [0, 3, 4, 0],
           [0, 0, 0, 0]])
    >>> cnp.pad(np.array([1.5, 2.5], np.float32), (2, 1), constant_values=-1)
    array([-1. , -1. ,  1.5,  2.5, -1. ], dtype=float32)
    >>> cnp.pad(np.array([1, 2, 3]), (5, 5), mode="reflect")
    array([2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2])
    """
    name = "pad"
    x = as_array(array, name)
    if isinstance(pad_width, dict):
        pad_width = _widths_of_axes(pad_width, x.ndim)
    if exact(pad_width):
        pad_width = _pad_widths(pad_width, x.ndim)
    else:
        pad_width = _pad_widths.__wrapped__(on_host(pad_width), x.ndim)
    if _check_mode(mode, kwargs, x.shape, pad_width) is None:  # a mode that computes
        return _their_pad(x, pad_width, mode, kwargs)
    dtype = x.dtype
    words_of(dtype, name)  # object dtypes refused before anything moves
    values, sides = _constants(kwargs.get("constant_values", 0) if mode == "constant" else 0, x.ndim, dtype)
    if x.ndim == 0:
        return copy_of(x, name)
    if x.size == 0:
        result = new_array(x, tuple(b + n + a for n, (b, a) in zip(x.shape, pad_width)), dtype)
        return _fill_sides(result, x.shape, pad_width, values)
    passes, per_side = _pad_call(x.shape, dtype, pad_width, sides, _DATA_MODES[mode], name)
    result = x
    for groups, width, operation, shape in passes:  # (a pass pads its axes of the array the one before made)
        result = _padded(result, groups, width, operation, shape)
    if per_side:  # constants of their own per axis or side: NumPy's assignments, in its order
        _fill_sides(result, x.shape, pad_width, values)
    return result


def _widths_of_axes(pad_width, ndim):
    """``pad``'s widths given as ``{axis: n or (before, after)}``: a pair per axis (0 for the
    axes not given), as NumPy reads them."""
    pairs = [(0, 0)] * ndim
    for ax, width in pad_width.items():
        match width:
            case int(both):
                pairs[ax] = both, both
            case tuple((int(before), int(after))):
                pairs[ax] = before, after
            case _ as invalid:  # as NumPy: an AssertionError
                typing.assert_never(invalid)
    return pairs


def _check_mode(mode, kwargs, shape, pad_width):
    """NumPy's checks of ``pad``'s mode and its keywords, in its order: PADDING's mode for the
    modes that move data, None for those that compute (NumPy's or CuPy's pad makes them)."""
    if callable(mode):
        return None
    try:
        unsupported = set(kwargs) - set(_PAD_KEYWORDS[mode])
    except KeyError:
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode not in ("constant", "empty") and 0 in shape:
        for ax, pair in enumerate(pad_width):
            if shape[ax] == 0 and any(pair):
                raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
    if kwargs.get("reflect_type", "even") != "even":
        return None  # "odd": values computed from the edge
    return _DATA_MODES.get(mode)


def _their_pad(x, pad_width, mode, kwargs):
    """``pad`` in a mode that computes values: NumPy's own for a NumPy array, CuPy's for a CuPy
    array (as a new C-contiguous array, as every cudadml result)."""
    if not type(x).__module__.startswith("cupy"):
        return np.ascontiguousarray(np.pad(x, pad_width, mode, **kwargs))
    cupy = sys.modules["cupy"]
    their = cupy.pad
    if their is pad:  # ``cupy.pad`` made this function (CuPy's own tests of it): CuPy's, where CuPy defines it
        their = importlib.import_module("cupy._padding.pad").pad
    return cupy.ascontiguousarray(their(x, pad_width, mode, **kwargs))


@kept(nested_bytes)
def _pad_widths(pad_width, ndim):
    """NumPy's reading of ``pad``'s widths for an array of ``ndim`` dimensions: a pair of ints
    per axis. Normalised once per call's arguments: what it checks raises each time."""
    pad_width = np.asarray(pad_width)
    if pad_width.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return tuple((int(b), int(a)) for b, a in _as_pairs(pad_width, ndim, as_index=True))


def _constants(constant_values, ndim, dtype):
    """``pad``'s constants (per axis, a pair) as NumPy assigns them to the padded array, with its
    casts, warnings and errors, per call: ``(values, sides)``, each a 0-d array of ``dtype``,
    and their bytes (what a pad's plan is kept under: NaN payloads and -0.0 told apart)."""
    converted = {}  # a scalar's pairs are one object, repeated: converted once
    values, sides = [], []
    for pair in _as_pairs(on_host(constant_values), ndim):
        done = converted.get(id(pair))
        if done is None:
            cells = [np.zeros((), dtype), np.zeros((), dtype)]  # bytes a value leaves out (long double's padding) are 0
            cells[0][()], cells[1][()] = pair
            done = converted[id(pair)] = cells, (cells[0].tobytes(), cells[1].tobytes())
        values.append(done[0])
        sides.append(done[1])
    return values, tuple(sides)


@kept(nested_bytes)
def _pad_call(shape, dtype, pad_width, sides, mode, name):
    """How ``pad`` runs on a (not empty) array of ``shape`` and ``dtype`` padded by ``pad_width``
    in PADDING's ``mode``, with constants of bytes ``sides`` (per axis, a pair; CONSTANT's):
    ``(passes, per_side)``, a pass per
    ``in_passes`` of ``(groups, width, operation, shape)`` (``_padded``), and whether
    constants that differ between sides are assigned afterwards (``_fill_sides``)."""
    fills = set()  # in the modes that copy, the array's own elements fill the sides: no constant
    if mode == PaddingMode.CONSTANT:
        fills = {side for (b, a), pair in zip(pad_width, sides) for w, side in zip((b, a), pair) if w}
    fill = next(iter(fills)) if len(fills) == 1 else bytes(dtype.itemsize)
    if dtype.itemsize not in AS_IS_SIZES:  # several words an element (strings): a fill is one word
        fill = bytes(dtype.itemsize)  # so zeros, then NumPy's assignments
    width, limit, ndim = words_of(dtype, name), rank_limit(dtype, name), len(shape)
    words = () if width is None or width == dtype.itemsize else (dtype.itemsize // width,)
    pattern = fill_pattern(fill) if any(fill) else bytes(16)
    axes = [ax for ax, pair in enumerate(pad_width) if any(pair)]
    passes = []
    for padded in [set(axes)] if ndim <= limit else in_passes(axes, lambda axes: alone(ndim, axes), limit):
        widths = [pair if ax in padded else (0, 0) for ax, pair in enumerate(pad_width)]
        new_shape = tuple(b + n + a for n, (b, a) in zip(shape, widths))
        groups, folded_shape, before = None, new_shape, tuple(b for b, _ in widths)
        if ndim > limit:  # the runs of axes not padded as one axis each
            groups = alone(ndim, padded)
            folded_shape = tuple(math.prod(new_shape[a] for a in g) for g in groups)
            before = tuple(before[g[0]] for g in groups)
        operation = Pad((*folded_shape, *words), (*before, *(0,) * len(words)), pattern, mode=mode)
        passes.append((groups, width, operation, new_shape))
        shape = new_shape
    return tuple(passes), bool(fills - {fill})


def _padded(x, groups, width, operation, shape):
    """``x`` (not empty) padded in one launch: ``operation`` (a ``Pad``) on ``x``'s runs of
    axes ``groups`` as one axis each (None: its own axes) seen as ``width``-byte words, a result
    of ``shape``. A traced array (``cudadml.fuse``) pads with zeros by SLICE_GRAD, which a graph
    holds (past one DirectML buffer, the index's gradient)."""
    folded = x if groups is None else fold(x, groups)
    raw = as_words(folded, width)
    if traced(x) and not any(operation.fill) and operation.mode == PaddingMode.CONSTANT:
        offsets, result_shape = operation.before, operation.shape
        if past_one_buffer(result_shape, raw.dtype):
            key = tuple(slice(b, b + n) for b, n in zip(offsets, raw.shape))
            result = strided_slice_grad(raw, result_shape, key, **RAW)
        else:
            result = slice_grad(raw, result_shape, window_offsets=offsets, window_sizes=raw.shape, **RAW)
    else:
        (result,) = run_operation(Pad, raw, operation)
    result = from_words(result, x.dtype, width)
    return result if groups is None else result.reshape(shape)


def _fill_sides(padded, shape, pad_width, values):
    """NumPy's constant padding of ``padded``: per axis in order, the sides outside the array
    (and inside it along the later axes) set to the axis's constants."""
    inside = tuple(slice(b, b + n) for n, (b, _) in zip(shape, pad_width))
    for ax, ((b, a), cells) in enumerate(zip(pad_width, values)):
        roi = padded[(slice(None),) * (ax + 1) + inside[ax + 1 :]]
        head = (slice(None),) * ax
        roi[(*head, slice(None, b))] = cells[0][()]
        roi[(*head, slice(roi.shape[ax] - a, None))] = cells[1][()]
    return padded

"""NumPy's ``roll``: one batch of strided copies, a job per block (``2**k`` of ``k`` rolled
axes), their parameters passed by value. Traced (``cudadml.fuse``), a roll of one axis is one
``join`` of the two strided views."""

from __future__ import annotations

import dataclasses
import itertools
import sys
from typing import NamedTuple

import numpy as np

from ..core.calls import Description, data_type
from ..core.enums import FeatureLevel
from ..core.memory import kept, nested_bytes
from ..core.plan import CopyJob, CopyPlan
from ..core.tensor import BufferTensorDesc, beyond_directml_bounds
from ..ops import SliceOperatorDesc
from ..run.arrays import slice1_batch_grad
from .arrays import (
    RAW,
    WORD_SIZES,
    alone,
    as_array,
    as_words,
    copy_of,
    exact,
    fold,
    from_words,
    in_passes,
    join_words,
    new_array,
    normalize_axis_tuple,
    on_host,
    rank_limit,
    run_operation,
    traced,
    words_of,
)
from .docs import documented


@documented()
def roll(a, shift, axis=None):
    """Roll array elements along the given axes, as ``numpy.roll``: one launch.

    Elements that roll beyond the last position come back at the first. The ``2**k`` blocks of
    ``k`` rolled axes (along each, the array's tail, then its head) are placed by one launch
    of a batch of strided copies, a job per block, whose parameters travel by value (nothing
    is copied to the device per call). Nothing to roll is one copy (``cudadml.strided_slice``).
    Past 8 dimensions, where the rolled axes and the runs between them are more than
    DirectML's 8, a launch per pass of as many as fit.

    Parameters
    ----------
    a : array_like
        The array.
    shift : int or sequence of int
        How many places to roll: with a sequence of axes, one per axis (or one for all); the
        shifts of an axis given several times add up. A CuPy array is read on the host.
    axis : None, int or sequence of ints, optional
        The axes to roll. None (default): the array is flattened (a view where it is
        C-contiguous, else a copy, made by one more launch), rolled, and reshaped back.

    Returns
    -------
    array
        A new C-contiguous array of ``a``'s shape and dtype.

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of bounds.
    ValueError
        For ``shift`` and ``axis`` that do not broadcast, or are not scalars or 1-D sequences.
    TypeError
        For a non-integer axis, or a shift ``int`` cannot read.

    {examples}
    >>> cnp.roll(np.arange(5), 2)
    array([3, 4, 0, 1, 2])
    >>> cnp.roll(np.arange(6).reshape(2, 3), (1, -1), axis=(0, 1))
    array([[4, 5, 3],
           [1, 2, 0]])
    """
    name = "roll"
    a = as_array(a, name)
    words_of(a.dtype, name)  # object dtypes refused before anything moves
    if axis is None:
        shift = on_host(shift)
        flat = a.ravel() if a.flags.c_contiguous else copy_of(a, name).ravel()
        return roll(flat, shift, 0).reshape(a.shape)
    if exact(shift) and exact(axis):
        shifts = _roll_shifts(a.shape, shift, axis)
    else:
        shifts = _roll_shifts.__wrapped__(a.shape, on_host(shift), axis)
    if a.size == 0:
        return new_array(a, a.shape, a.dtype)
    if not any(shifts):
        return copy_of(a, name)
    limit = rank_limit(a.dtype, name)
    if a.ndim <= limit:
        return _rolled(a, shifts, name)
    shape, rolled = a.shape, [ax for ax, s in enumerate(shifts) if s]
    for axes in in_passes(rolled, lambda axes: alone(len(shape), axes), limit):  # runs not rolled, as one axis
        groups = alone(len(shape), axes)
        folded = tuple(shifts[g[0]] if g[0] in axes else 0 for g in groups)
        a = _rolled(fold(a, groups), folded, name).reshape(shape)
    return a


@kept(nested_bytes)
def _roll_shifts(shape, shift, axis):
    """NumPy's reading of ``roll``'s ``shift`` and ``axis`` (not None) for an array of
    ``shape``: per axis, the shift in ``[0, shape[axis])`` (0 for an empty axis). Normalised
    once per call's arguments: what it checks raises each time, as NumPy does."""
    axes = normalize_axis_tuple(axis, len(shape), allow_duplicate=True)
    broadcast = np.broadcast(shift, axes)
    if broadcast.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    shifts = [0] * len(shape)
    for sh, ax in broadcast:
        shifts[ax] += int(sh)
    return tuple(s % (n or 1) for s, n in zip(shifts, shape))


@dataclasses.dataclass(frozen=True, repr=False)
class _RolledSlice(SliceOperatorDesc):
    """SLICE of the whole input, its copy cut into the blocks of a roll by ``shifts`` (per
    dimension, in ``[0, size)``): along a dimension shifted by ``s``, the last ``s`` elements
    land first. The ``2**k`` blocks of ``k`` shifted dimensions are the jobs of one batch of
    strided copies, whose parameters travel by value: nothing is copied to the device per call."""

    shifts: tuple = dataclasses.field(default=(), kw_only=True)

    def _lower(self, input_strides, output_strides):
        (ins,), (outs,) = input_strides, output_strides
        # Per dimension, its blocks as (input start, output start, count).
        spans = [((n - s, 0, s), (0, s, n - s)) if s else ((0, 0, n),) for n, s in zip(self.sizes, self.shifts)]
        jobs = tuple(
            CopyJob(
                0,
                0,
                tuple(count for _, _, count in blocks),
                tuple(ins),
                tuple(outs),
                sum(start * stride for (start, _, _), stride in zip(blocks, ins)),
                sum(start * stride for (_, start, _), stride in zip(blocks, outs)),
            )
            for blocks in itertools.product(*spans)
        )
        return CopyPlan(self.input_tensor.data_type.element_size, jobs).simplified()


class _Roll(NamedTuple):
    """The operation of ``roll`` (as ``cudadml.core.calls``' operations are): the array rolled by
    ``shifts[axis]`` (in ``[0, shape[axis])``) along each axis, in one launch."""

    shifts: tuple
    feature_level: FeatureLevel = FeatureLevel.newest()
    directml_types: bool = False

    function = "roll"
    ARGUMENT = "a"
    NAME = "roll"

    def descriptor(self, dtype, shapes):
        (shape,) = shapes
        t, n = data_type(dtype, self.directml_types), len(shape)
        with beyond_directml_bounds():  # cudadml's own call, of any size (its kernels index in 64 bits)
            desc = _RolledSlice(
                BufferTensorDesc(t, shape),
                BufferTensorDesc(t, shape),
                (0,) * n,
                shape,
                (1,) * n,
                shifts=self.shifts,
                feature_level=self.feature_level,
            )
        return Description(desc, (shape,))

    def words(self):
        """The same roll of 16-byte elements seen as pairs of 8-byte words."""
        return self._replace(shifts=(*self.shifts, 0))


def _rolled(a, shifts, name):
    """``a`` (not empty) rolled by ``shifts[axis]`` (in ``[0, a.shape[axis])``, not all 0)
    along each axis: one launch of its blocks (``_Roll``). A traced array (``cudadml.fuse``),
    whose graph holds DirectML's nodes, is rolled by one ``join`` (several axes: one
    ``slice1_batch_grad``, which a graph refuses by name)."""
    if traced(a):
        return _rolled_by_windows(a, {ax: s for ax, s in enumerate(shifts) if s}, name)
    width = words_of(a.dtype, name)
    raw = as_words(a, width)
    operation = _Roll((*shifts, *(0,) * (raw.ndim - a.ndim)))
    return from_words(run_operation(_Roll, raw, operation)[0], a.dtype, width)


def _rolled_by_windows(a, rolled, name):
    """``a`` (not empty; a traced array) rolled by ``rolled[axis]`` (in ``[1, a.shape[axis])``)
    along each axis it names: one ``join``, or for several axes one ``slice1_batch_grad``."""
    if len(rolled) == 1:
        ((ax, s),) = rolled.items()
        width = words_of(a.dtype, name)
        raw = as_words(a, width)
        head = (slice(None),) * ax
        pieces = [raw[(*head, slice(a.shape[ax] - s, None))], raw[(*head, slice(None, a.shape[ax] - s))]]
        return from_words(join_words(pieces, ax), a.dtype, width)
    # Several axes: each of the 2**k blocks of the result is a strided view of a, placed as one
    # window of a gradient that nothing overlaps (so each element is moved, not added).
    words = _uint_view(a)
    extra = words.shape[a.ndim :]
    pieces, offsets, sizes = [], [], []
    for sides in itertools.product((0, 1), repeat=len(rolled)):
        key, offset, size, side = [], [], [], dict(zip(rolled, sides))
        for ax, n in enumerate(a.shape):
            s = rolled.get(ax, 0)
            if ax not in side:
                key.append(slice(None))
                offset.append(0)
                size.append(n)
            elif side[ax] == 0:  # the tail of a lands first
                key.append(slice(n - s, None))
                offset.append(0)
                size.append(s)
            else:
                key.append(slice(None, n - s))
                offset.append(s)
                size.append(n - s)
        pieces.append(words[tuple(key)])
        offsets.append((*offset, *(0,) * len(extra)))
        sizes.append((*size, *extra))
    result = slice1_batch_grad(pieces, words.shape, window_offsets=offsets, window_sizes=sizes, **RAW)
    return _cooked_words(result, a)


def _uint_view(x):
    """``x``'s elements as unsigned integers of up to 8 bytes: ``x`` itself, reinterpreted (one
    more axis of words where an element is wider), for the gradient kernels, which add."""
    width = next(w for w in WORD_SIZES if x.itemsize % w == 0)
    word = np.dtype(f"u{width}")
    if x.itemsize == width:
        return x.view(word)
    if isinstance(x, np.ndarray):
        return x[..., None].view(word)
    cupy = sys.modules["cupy"]
    k = x.itemsize // width
    return cupy.ndarray((*x.shape, k), word, memptr=x.data, strides=(*x.strides, width))


def _cooked_words(r, like):
    """The inverse of ``_uint_view`` for a C-contiguous result."""
    if r.ndim == like.ndim:
        return r.view(like.dtype)
    if isinstance(r, np.ndarray):
        return r.view(like.dtype)[..., 0]
    cupy = sys.modules["cupy"]
    return cupy.ndarray(like.shape, like.dtype, memptr=r.data)

"""NumPy's flips: ``flip``, ``fliplr``, ``flipud``, each one ``strided_slice`` with negative
steps (a copy, not a view)."""

from __future__ import annotations

import itertools

import numpy as np

from ..core.memory import kept, nested_bytes
from ..ops import StridedSlice
from ..run.arrays import strided_slice
from .arrays import (
    RAW,
    as_array,
    as_words,
    copy_of,
    exact,
    fold,
    folding,
    from_words,
    in_passes,
    new_array,
    normalize_axis_tuple,
    rank_limit,
    run_operation,
    words_of,
)
from .docs import documented

# ---- flips and roll ------------------------------------------------------------------------------


def _flipped(m, axes, name):
    """``m`` flipped along ``axes`` (as `flip` takes them; None: every axis), copied by one
    ``cudadml.strided_slice`` (a pass per ``in_passes`` where more runs of axes are flipped
    than the kernels take); a 0-d ``m`` as NumPy's ``m[()]`` (a NumPy scalar, a 0-d CuPy
    array)."""
    if not exact(axes):
        axes = normalize_axis_tuple(axes, m.ndim)
    key, width, operation = _flip_call(m.shape, m.dtype, axes, name)
    if operation is not None:
        return from_words(run_operation(StridedSlice, as_words(m, width), operation)[0], m.dtype, width)
    if m.ndim == 0:
        return copy_of(m, name)[()]
    if m.size == 0:
        return new_array(m, m.shape, m.dtype)
    limit = rank_limit(m.dtype, name)
    flipped = [ax for ax, n in enumerate(m.shape) if key[ax].step == -1 and n > 1]
    if not flipped:
        return copy_of(m, name)
    shape = m.shape
    for axes in in_passes(flipped, lambda axes: _flip_runs(shape, axes), limit):
        groups = _flip_runs(shape, axes)
        folded_key = tuple(slice(None, None, -1) if axes.intersection(g) else slice(None) for g in groups)
        m = _flip_copy(fold(m, groups), folded_key, name).reshape(shape)
    return m


def _flip_runs(shape, axes):
    """The runs of axes a flip of ``axes`` (of more than one element each) folds into: axes
    flipped alike; a size-1 axis goes with the run before it (at the start, the first run)."""
    keys = [ax in axes if n > 1 else None for ax, n in enumerate(shape)]
    first = next(k for k in keys if k is not None)
    return folding(list(itertools.accumulate(keys, lambda before, k: before if k is None else k, initial=first))[1:])


def _flip_copy(m, key, name):
    width = words_of(m.dtype, name)
    return from_words(strided_slice(as_words(m, width), key, **RAW), m.dtype, width)


@kept(nested_bytes)
def _flip_call(shape, dtype, axes, name):
    """A flip of ``axes`` (as `flip` takes them; None: every axis) of an array of ``shape`` and
    ``dtype``: ``(key, width, operation)``, its index (a slice per axis), the width of the words
    its elements move as (``words_of``) and the ``strided_slice`` operation of its one launch,
    or None where it is not one (0-d and empty arrays, passes). Normalised once per call's
    arguments: what it checks raises each time, as NumPy does."""
    ndim = len(shape)
    if axes is None:
        key = (slice(None, None, -1),) * ndim
    else:
        flipped = normalize_axis_tuple(axes, ndim)
        key = tuple(slice(None, None, -1) if ax in flipped else slice(None) for ax in range(ndim))
    if ndim == 0 or 0 in shape:
        return key, None, None
    width = words_of(dtype, name)
    if ndim > rank_limit(dtype, name):
        return key, width, None
    words = () if width is None or width == dtype.itemsize else (dtype.itemsize // width,)
    return key, width, StridedSlice.of((*shape, *words), key, None, False)


@documented()
def flip(m, axis=None):
    """Reverse the order of elements along the given axes, as ``numpy.flip``: one launch.

    Unlike NumPy's view, the result is a new C-contiguous array: a copy, made by one
    ``cudadml.strided_slice`` with negative steps (past 8 dimensions, where the flipped and
    unflipped runs of axes are more than DirectML's 8, one per pass of as many as fit).

    Parameters
    ----------
    m : array_like
        The array.
    axis : None, int or tuple of ints, optional
        The axes to flip (negative count from the end); every axis by default.

    Returns
    -------
    array
        The flipped copy (a 0-dimensional ``m`` gives what NumPy's ``m[()]`` gives).

    Raises
    ------
    numpy.exceptions.AxisError
        For an axis out of bounds.
    ValueError
        For an axis given twice ("repeated axis").

    {examples}
    >>> cnp.flip(np.arange(6).reshape(2, 3), axis=1)
    array([[2, 1, 0],
           [5, 4, 3]])
    """
    if not hasattr(m, "ndim"):
        m = np.asarray(m)
    return _flipped(as_array(m, "flip"), axis, "flip")


#: The docstring of ``fliplr`` and ``flipud``, filled in by ``documented``.
_FLIP_ALONG = """Reverse the order of elements along axis {axis}, as ``numpy.{name}``: one launch.

    The result is a copy (one ``cudadml.strided_slice``), not a view.

    Parameters
    ----------
    m : array_like
        An array of at least {dimensions}.

    Returns
    -------
    array
        ``{key}``, copied.

    Raises
    ------
    ValueError
        For {fewer} ("Input must be >= {ndim}-d.").

    {examples}
    {example}
    """


def _flip_axis(m, axis, name):
    """``m`` flipped along ``axis``: NumPy's check that it has that axis, then `_flipped`."""
    m = as_array(m, name)
    if m.ndim < axis + 1:
        raise ValueError(f"Input must be >= {axis + 1}-d.")
    return _flipped(m, axis, name)


@documented(
    _FLIP_ALONG,
    axis="1",
    dimensions="2 dimensions",
    key="m[:, ::-1]",
    fewer="fewer than 2 dimensions",
    ndim="2",
    example=""">>> cnp.fliplr(np.eye(2, dtype=int))
array([[0, 1],
       [1, 0]])""",
)
def fliplr(m):
    return _flip_axis(m, 1, "fliplr")


@documented(
    _FLIP_ALONG,
    axis="0",
    dimensions="1 dimension",
    key="m[::-1, ...]",
    fewer="a 0-dimensional array",
    ndim="1",
    example=""">>> cnp.flipud(np.array([1, 2, 3]))
array([3, 2, 1])""",
)
def flipud(m):
    return _flip_axis(m, 0, "flipud")

"""NumPy's splits: ``split``, ``array_split``, ``hsplit``, ``vsplit``, ``dsplit``, each one
``split`` (overlapping sections, which NumPy allows: one ``slice1_batch``); the parts are
copies, views of one allocation."""

from __future__ import annotations

import itertools

import numpy as np

from ..core.memory import kept, nested_bytes
from ..run.arrays import slice1_batch, strided_slice
from ..run.arrays import split as _split
from .arrays import (
    RAW,
    as_array,
    as_words,
    exact,
    fold,
    folding,
    from_words,
    new_array,
    normalize_axis_index,
    on_host,
    past_one_buffer,
    rank_limit,
    words_of,
)
from .docs import documented

# ---- split ---------------------------------------------------------------------------------------


@documented()
def split(ary, indices_or_sections, axis=0):
    """Split an array into sub-arrays, as ``numpy.split``: one launch; the parts are copies.

    Unlike NumPy's views, the parts are new C-contiguous arrays: views of one allocation, made
    by one ``cudadml.split`` (sections that overlap, as decreasing indices make, by one
    ``cudadml.slice1_batch``). Writing into a part leaves ``ary`` as it is.

    Parameters
    ----------
    ary : array_like
        The array to split.
    indices_or_sections : int or sequence of int
        A number of equal parts (which must divide ``ary.shape[axis]``), or the indices where
        parts start, as Python slicing reads them (negative from the end, past the end clipped).
    {split axis}

    {parts}

    Raises
    ------
    ValueError
        If the number of parts does not divide the axis ("array split does not result in an
        equal division").
    ZeroDivisionError
        For 0 parts, as NumPy.
    {split raises}

    {examples}
    >>> cnp.split(np.arange(6), [2, 3])
    [array([0, 1]), array([2]), array([3, 4, 5])]
    """
    try:
        len(indices_or_sections)
    except TypeError:
        sections = indices_or_sections
        n = ary.shape[axis]
        if n % sections:
            raise ValueError("array split does not result in an equal division") from None
    return _array_split(ary, indices_or_sections, axis, "split")


@documented()
def array_split(ary, indices_or_sections, axis=0):
    """Split an array into sub-arrays, possibly of unequal sizes, as ``numpy.array_split``: one launch.

    As `split`, except that a number of sections need not divide the axis: the first
    ``n % sections`` parts have one more element. The parts are copies (views of one new
    allocation), not views of ``ary``.

    Parameters
    ----------
    ary : array_like
        The array to split.
    indices_or_sections : int or sequence of int
        A number of parts (at least 1), or the indices where parts start.
    {split axis}

    {parts}

    Raises
    ------
    ValueError
        For fewer than 1 section ("number sections must be larger than 0.").
    {split raises}

    {examples}
    >>> cnp.array_split(np.arange(7), 3)
    [array([0, 1, 2]), array([3, 4]), array([5, 6])]
    """
    return _array_split(ary, indices_or_sections, axis, "array_split")


def _array_split(ary, indices_or_sections, axis, name):
    """NumPy's ``array_split`` (its checks in its order), the parts made in one launch."""
    try:
        total = ary.shape[axis]
    except AttributeError:
        total = len(ary)
    if type(indices_or_sections) is list:  # (as a tuple: NumPy reads both alike)
        indices_or_sections = tuple(indices_or_sections)
    by_value = exact(indices_or_sections)  # (memos keyed by value: see exact)
    if by_value:
        points = _split_points(total, indices_or_sections)
    else:
        points = _split_points.__wrapped__(total, on_host(indices_or_sections))
    x = as_array(ary, name)
    axis = normalize_axis_index(axis, x.ndim)
    windows = (_split_windows if by_value else _split_windows.__wrapped__)(points, x.shape[axis])
    return _parts(x, axis, windows, name)


@kept(nested_bytes)
def _split_points(total, indices_or_sections):
    """NumPy's division points of ``array_split`` (``total``: the length it reads first): the
    first part's start, each index or section boundary, ``total``. Normalised once per call's
    arguments: what it checks raises each time, as NumPy does."""
    try:
        len(indices_or_sections)
        return (0, *indices_or_sections, total)
    except TypeError:
        count = int(indices_or_sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(total, count)
        return tuple(np.array([0] + extras * [each + 1] + (count - extras) * [each], dtype=np.intp).cumsum().tolist())


@kept(nested_bytes)
def _split_windows(points, n):
    """The parts between ``points`` (``_split_points``, read as Python slicing reads them) of
    an axis of ``n`` elements, as ``(start, size)``."""
    windows = []
    for a, b in itertools.pairwise(points):
        start, stop, _ = slice(a, b).indices(n)
        windows.append((start, max(stop - start, 0)))
    return tuple(windows)


def _parts(x, axis, windows, name):
    """The parts ``x[..., start : start + size, ...]`` (along ``axis``) of ``windows``: one
    ``cudadml.split`` where they tile the axis in order, else one ``cudadml.slice1_batch``."""
    dtype = x.dtype
    if x.ndim > rank_limit(dtype, name):  # as (before axis, axis, after axis)
        groups = folding(["before"] * axis + [None] + ["after"] * (x.ndim - axis - 1))
        parts = _parts(fold(x, groups), 1 if axis else 0, windows, name)
        # Each part's own size, not -1: an empty part leaves -1 ambiguous.
        return [p.reshape((*x.shape[:axis], size, *x.shape[axis + 1 :])) for p, (_, size) in zip(parts, windows)]
    width = words_of(dtype, name)
    raw = as_words(x, width)
    if past_one_buffer(raw.shape, raw.dtype):  # past SPLIT's bound: the index copies each part
        head = (slice(None),) * axis
        return [
            from_words(strided_slice(raw, (*head, slice(start, start + size)), **RAW), dtype, width)
            for start, size in windows
        ]
    sizes = [size for _, size in windows]
    tiled, at = True, 0
    for start, size in windows:
        if size:
            tiled = tiled and start == at
            at += size
    if tiled and at == x.shape[axis]:
        return [from_words(p, dtype, width) for p in _split(raw, split_sizes=sizes, axis=axis, **RAW)]
    shapes = [(*x.shape[:axis], size, *x.shape[axis + 1 :]) for size in sizes]
    taken = [k for k, s in enumerate(shapes) if 0 not in s]
    parts = [new_array(x, s, dtype) for s in shapes]
    if taken:  # overlapping sections, which decreasing indices give: each its own window
        extra = (0,) * (raw.ndim - x.ndim)
        offsets = [(0,) * axis + (windows[k][0],) + (0,) * (x.ndim - axis - 1) + extra for k in taken]
        window_sizes = [shapes[k] + raw.shape[x.ndim :] for k in taken]
        for k, p in zip(taken, slice1_batch(raw, window_offsets=offsets, window_sizes=window_sizes, **RAW)):
            parts[k] = from_words(p, dtype, width)
    return parts


#: The docstring of ``hsplit``, ``vsplit`` and ``dsplit``, filled in by ``documented``.
_SPLIT_ALONG = """Split an array {how}, as ``numpy.{name}``: one launch.

    The parts are copies (views of one new allocation), not views of ``ary``.

    Parameters
    ----------
    ary : array_like
        An array of at least {dimensions}.
    indices_or_sections : int or sequence of int
        As in `split`.

    Returns
    -------
    list of arrays
        The parts.

    Raises
    ------
    ValueError
        For {fewer}, and as `split`.

    {examples}
    {example}
    """


def _check_ndim(ary, ndim, name):
    """NumPy's check that ``ary`` (an array, or what ``numpy.ndim`` takes) has ``ndim`` dimensions or more."""
    if np.ndim(ary) < ndim:
        raise ValueError(f"{name} only works on arrays of {ndim} or more dimensions")


@documented(
    _SPLIT_ALONG,
    how="horizontally (along axis 1, or 0 for 1-D)",
    dimensions="1 dimension",
    fewer="a 0-dimensional array",
    example=""">>> [p.shape for p in cnp.hsplit(np.zeros((2, 6)), 3)]
[(2, 2), (2, 2), (2, 2)]""",
)
def hsplit(ary, indices_or_sections):
    _check_ndim(ary, 1, "hsplit")
    return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


@documented(
    _SPLIT_ALONG,
    how="vertically (along axis 0)",
    dimensions="2 dimensions",
    fewer="fewer than 2 dimensions",
    example=""">>> cnp.vsplit(np.arange(4).reshape(2, 2), 2)
[array([[0, 1]]), array([[2, 3]])]""",
)
def vsplit(ary, indices_or_sections):
    _check_ndim(ary, 2, "vsplit")
    return split(ary, indices_or_sections, 0)


@documented(
    _SPLIT_ALONG,
    how="along the third axis",
    dimensions="3 dimensions",
    fewer="fewer than 3 dimensions",
    example=""">>> [p.shape for p in cnp.dsplit(np.zeros((1, 2, 4)), [1])]
[(1, 2, 1), (1, 2, 3)]""",
)
def dsplit(ary, indices_or_sections):
    _check_ndim(ary, 3, "dsplit")
    return split(ary, indices_or_sections, 2)

"""NumPy's joins: ``concatenate``, ``stack``, ``hstack``, ``vstack``, ``dstack``,
``column_stack``, each one ``join`` (``stack``: of views with a new axis, no copies)."""

from __future__ import annotations

import operator
import sys
from collections.abc import Mapping

import numpy as np

from .arrays import (
    as_arrays,
    as_words,
    copy_of,
    cupy_in,
    fold,
    folding,
    from_words,
    join_words,
    normalize_axis_index,
    rank_limit,
    words_of,
)
from .docs import documented

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")

# ---- dtypes --------------------------------------------------------------------------------------


def _result_type(dtypes):
    """NumPy's ``result_type`` of any number of dtypes (``numpy.result_type`` takes a bounded
    number of arguments)."""
    unique = list(dict.fromkeys(dtypes))
    while len(unique) > 32:
        unique = [np.result_type(*unique[k : k + 32]) for k in range(0, len(unique), 32)]
    return np.result_type(*unique)


def _completed_by_the_arrays(dtype):
    """Whether NumPy completes ``dtype=`` from each array (as ``astype`` does), then takes their
    ``result_type``: an unsized string (``"U"``: sized by the arrays) or a datetime or timedelta
    of no unit (``"M8"``: the arrays' units)."""
    if dtype.kind in "mM":
        return np.datetime_data(dtype)[0] == "generic"
    return dtype.itemsize == 0 and dtype.kind in "SUV"


def _check_casting(casting):
    if casting not in _CASTINGS:
        allowed = ", ".join(map(repr, _CASTINGS))
        raise ValueError(f"casting must be one of {allowed} (got {casting!r})")


def _converted(xs, dtype, casting):
    """``xs`` with those of another dtype than ``dtype`` converted by ``astype``, after
    ``numpy.can_cast`` under ``casting`` (``TypeError`` as NumPy words it)."""
    for x in xs:
        if x.dtype != dtype and not np.can_cast(x.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {x.dtype!r} to {dtype!r} according to the rule {casting!r}")
    return [x if x.dtype == dtype else x.astype(dtype) for x in xs]


# ---- concatenate and stack -----------------------------------------------------------------------


@documented()
def concatenate(arrays, /, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join a sequence of arrays along an existing axis, as ``numpy.concatenate``: one launch.

    Parameters
    ----------
    arrays : sequence of array_like
        The arrays: NumPy or CuPy arrays (of one kind), or what ``numpy.asarray`` takes; of one
        rank and equal shapes but along ``axis``.
    axis : int or None, default 0
        The axis to join along; may be negative. None: the arrays are flattened first (a view
        where an array is C-contiguous, else a copy, made by one more launch).
    out : array, optional
        Where to write the result: the result's shape, any dtype the inputs cast to under
        ``casting``, any strides. An ``out`` that overlaps an input receives the result as if
        the inputs had been read first (a temporary, then a copy).
    dtype : dtype, optional
        The result's dtype (not with ``out``); by default NumPy's ``result_type`` of the arrays.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, default "same_kind"
        What conversions of the inputs to the result's dtype are allowed.

    Returns
    -------
    array
        ``out``, or a new C-contiguous array of the inputs' kind: one ``cudadml.join`` of the
        inputs, those of another dtype converted first with ``astype``. More than 128 inputs
        of ``JOIN`` run as a launch per 128.

    Raises
    ------
    ValueError
        For no arrays, 0-dimensional arrays (with an axis), arrays of different ranks or of
        shapes that differ off ``axis``, ``out`` of another shape, an unknown ``casting``.
    numpy.exceptions.AxisError
        For an axis out of bounds (a ``ValueError`` and an ``IndexError``).
    TypeError
        For a cast ``casting`` forbids, both ``out`` and ``dtype``, a non-integer axis, ``arrays``
        that is not a sequence, an ``out`` that is not an array, a mix of NumPy and CuPy arrays,
        object dtypes.

    {examples}
    >>> cnp.concatenate([np.arange(4).reshape(2, 2), np.array([[7, 8]])])
    array([[0, 1],
           [2, 3],
           [7, 8]])
    >>> cnp.concatenate([np.int8([1, 2]), np.float16([0.5])])
    array([1. , 2. , 0.5], dtype=float16)
    >>> cnp.concatenate([np.arange(3), np.ones((2, 2))], axis=None)
    array([0., 1., 2., 1., 1., 1., 1.])
    """
    name = "concatenate"
    if out is not None and dtype is not None:
        raise TypeError("concatenate() only takes `out` or `dtype` as an argument, but both were provided.")
    if axis is not None:
        if isinstance(axis, (bool, np.bool_)):
            raise TypeError("an integer is required for the axis")
        axis = operator.index(axis)
        if not -(2**63) <= axis < 2**63:  # NumPy reads the axis as a C long, then a C int
            raise OverflowError("Python int too large to convert to C long")
        if not -(2**31) <= axis < 2**31:
            raise ValueError("integer won't fit into a C int")
    wanted = None if dtype is None else np.dtype(dtype)
    _check_casting(casting)
    # NumPy's test (PySequence_Check): a mapping is no sequence, though it has both methods.
    if not hasattr(arrays, "__len__") or not hasattr(arrays, "__getitem__") or isinstance(arrays, Mapping):
        raise TypeError("The first input argument needs to be a sequence")
    xs = as_arrays(list(arrays), name)
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [x.ravel() if x.flags.c_contiguous else copy_of(x, name).ravel() for x in xs]
        axis = 0
    elif xs[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    ndim = xs[0].ndim
    axis = normalize_axis_index(axis, ndim)
    first = xs[0].shape
    for k, x in enumerate(xs[1:], 1):
        if x.ndim != ndim:
            raise ValueError(
                "all the input arrays must have same number of dimensions, but the array at index 0 has "
                f"{ndim} dimension(s) and the array at index {k} has {x.ndim} dimension(s)"
            )
        for d in range(ndim):
            if d != axis and x.shape[d] != first[d]:
                raise ValueError(
                    "all the input array dimensions except for the concatenation axis must match exactly, but "
                    f"along dimension {d}, the array at index 0 has size {first[d]} and the array at index {k} "
                    f"has size {x.shape[d]}"
                )
    shape = (*first[:axis], sum(x.shape[axis] for x in xs), *first[axis + 1 :])
    cupy = cupy_in(xs)
    if out is not None:
        out = _out(out, cupy, shape)
        result_dtype = out.dtype
    elif wanted is not None and _completed_by_the_arrays(wanted):
        result_dtype = _result_type([np.empty(0, x.dtype).astype(wanted).dtype for x in xs])
    else:
        result_dtype = wanted if wanted is not None else _result_type([x.dtype for x in xs])
    xs = _converted(xs, result_dtype, casting)
    return _join(xs, axis, out, result_dtype, name)


def _out(out, cupy, shape):
    """``out`` checked as NumPy checks it: an array of the inputs' kind and of ``shape``."""
    if cupy is None:
        if not isinstance(out, np.ndarray):
            raise TypeError("'out' must be an array")
    elif not isinstance(out, cupy.ndarray):
        raise TypeError("'out' must be a CuPy array for CuPy arrays")
    if out.ndim != len(shape):
        raise ValueError("Output array has wrong dimensionality")
    if out.shape != shape:
        raise ValueError("Output array is the wrong shape")
    return out


def _join(xs, axis, out, dtype, name):
    """``xs`` (all of ``dtype``) joined along ``axis`` by one ``cudadml.join``: into ``out``, or new."""
    shape = xs[0].shape
    if len(shape) > rank_limit(dtype, name):  # as (before axis, axis, after axis)
        groups = folding(["before"] * axis + [None] + ["after"] * (len(shape) - axis - 1))
        result = _join([fold(x, groups) for x in xs], 1 if axis else 0, None, dtype, name)
        joined = sum(x.shape[axis] for x in xs)  # not -1: with an empty axis it would be ambiguous
        result = result.reshape((*shape[:axis], joined, *shape[axis + 1 :]))
        if out is None:
            return result
        out[...] = result
        return out
    width = words_of(dtype, name)
    raw = [as_words(x, width) for x in xs]
    if out is None:
        return from_words(join_words(raw, axis), dtype, width)
    target = out.view(np.ndarray) if isinstance(out, np.ndarray) and type(out) is not np.ndarray else out
    xp = np if isinstance(out, np.ndarray) else sys.modules["cupy"]
    if any(xp.may_share_memory(x, target) for x in xs):  # read every input before out is written
        target[...] = from_words(join_words(raw, axis), dtype, width)
    else:
        join_words(raw, axis, as_words(target, width))
    return out


@documented()
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    """Join arrays along a new axis, as ``numpy.stack``: one launch.

    The arrays are joined as views with a new axis of size 1 at ``axis`` (no copies), by one
    ``cudadml.join`` (`concatenate`).

    Parameters
    ----------
    arrays : sequence of array_like
        Arrays of one shape (NumPy or CuPy arrays, or what ``numpy.asarray`` takes).
    axis : int, default 0
        Where the new axis goes in the result; may be negative.
    out : array, optional
        Where to write the result (as in `concatenate`).
    dtype : dtype, optional
        The result's dtype (not with ``out``); inputs of another dtype are converted first with
        ``astype``.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, default "same_kind"
        What conversions of the inputs are allowed.

    Returns
    -------
    array
        ``out``, or a new C-contiguous array with one more dimension.

    Raises
    ------
    ValueError
        For no arrays, or arrays of different shapes; as `concatenate` otherwise.
    numpy.exceptions.AxisError
        For an axis out of bounds.
    TypeError
        For ``arrays`` that is not a sequence (a generator), and as `concatenate`.

    {examples}
    >>> cnp.stack([np.arange(3), np.arange(3, 6)], axis=1)
    array([[0, 3],
           [1, 4],
           [2, 5]])
    """
    xs = as_arrays(_stack_sequence(arrays), "stack")
    if not xs:
        raise ValueError("need at least one array to stack")
    if len({x.shape for x in xs}) != 1:
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, xs[0].ndim + 1)
    new = (slice(None),) * axis + (None,)
    return concatenate([x[new] for x in xs], axis=axis, out=out, dtype=dtype, casting=casting)


def _stack_sequence(arrays):
    if not hasattr(arrays, "__getitem__"):
        raise TypeError('arrays to stack must be passed as a "sequence" type such as list or tuple.')
    return tuple(arrays)


def _at_least(x, ndim):
    """``numpy.atleast_1d`` / ``2d`` / ``3d`` of one array: a view."""
    if x.ndim >= ndim:
        return x
    if x.ndim == 0:
        return x.reshape((1,) * ndim)
    if ndim == 2 or x.ndim == 2:
        return x[None, :] if x.ndim == 1 else x[:, :, None]
    return x[None, :, None]


#: The docstring of ``hstack`` and ``vstack``, filled in by ``documented``.
_STACK_ALONG = """Join arrays {how}, as ``numpy.{name}``: one launch.

    Parameters
    ----------
    tup : sequence of array_like
        The arrays; {arrays}.
    dtype : dtype, optional
        The result's dtype; inputs of another dtype are converted first with ``astype``.
    casting : {"no", "equiv", "safe", "same_kind", "unsafe"}, default "same_kind"
        What conversions of the inputs are allowed.

    Returns
    -------
    array
        A new C-contiguous array (one ``cudadml.join``).

    {stack raises}

    {examples}
    {example}
    """


@documented(
    _STACK_ALONG,
    how="horizontally (along axis 1, or 0 for 1-D arrays)",
    arrays="0-dimensional ones count as 1-D",
    example=""">>> cnp.hstack([np.array([[1], [2]]), np.array([[3, 4], [5, 6]])])
array([[1, 3, 4],
       [2, 5, 6]])""",
)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(x, 1) for x in as_arrays(_stack_sequence(tup), "hstack")]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype, casting=casting)


@documented(
    _STACK_ALONG,
    how="vertically (along axis 0, 1-D arrays as rows)",
    arrays="those of fewer than 2 dimensions become rows",
    example=""">>> cnp.vstack([np.arange(3), np.arange(3, 6)])
array([[0, 1, 2],
       [3, 4, 5]])""",
)
def vstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(x, 2) for x in as_arrays(_stack_sequence(tup), "vstack")]
    return concatenate(arrays, 0, dtype=dtype, casting=casting)


@documented()
def dstack(tup):
    """Join arrays along the third axis, as ``numpy.dstack``: one launch.

    Parameters
    ----------
    tup : sequence of array_like
        The arrays: 1-D ones of shape ``(N,)`` count as ``(1, N, 1)``, 2-D ones as ``(M, N, 1)``.

    Returns
    -------
    array
        A new C-contiguous array of at least 3 dimensions (one ``cudadml.join``; inputs of
        another dtype than the result's are converted first with ``astype``).

    {stack raises}

    {examples}
    >>> cnp.dstack([np.array([1, 2]), np.array([3, 4])])
    array([[[1, 3],
            [2, 4]]])
    """
    arrays = [_at_least(x, 3) for x in as_arrays(_stack_sequence(tup), "dstack")]
    return concatenate(arrays, 2)


@documented()
def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array, as ``numpy.column_stack``: one launch.

    Parameters
    ----------
    tup : sequence of array_like
        1-D arrays (columns; 0-D ones are a column of one) and 2-D arrays, of one length.

    Returns
    -------
    array
        A new C-contiguous 2-D array (one ``cudadml.join`` of the columns as views; inputs of
        another dtype than the result's are converted first with ``astype``).

    {stack raises}

    {examples}
    >>> cnp.column_stack([np.array([1, 2, 3]), np.array([4, 5, 6])])
    array([[1, 4],
           [2, 5],
           [3, 6]])
    """
    arrays = [
        x if x.ndim >= 2 else x.reshape(1, 1) if x.ndim == 0 else x[:, None]
        for x in as_arrays(_stack_sequence(tup), "column_stack")
    ]
    return concatenate(arrays, 1)

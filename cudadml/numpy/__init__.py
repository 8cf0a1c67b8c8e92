"""NumPy's data-movement functions as drop-ins: ``import cudadml.numpy as cnp``.

``concatenate``, ``stack``, ``hstack``, ``vstack``, ``dstack``, ``column_stack``; ``split``,
``array_split``, ``hsplit``, ``vsplit``, ``dsplit``; ``flip``, ``fliplr``, ``flipud``; ``roll``;
``pad`` with ``mode="constant"``. Each has NumPy's name, signature, result (values, shape and
dtype) and exceptions, and takes NumPy arrays (run on the host backend), CuPy arrays (run by the
kernels on the GPU) and what ``numpy.asarray`` takes (lists, scalars). Each result is a new
C-contiguous array of the inputs' kind, made by cudadml's kernels through the array functions
of ``cudadml.run.arrays``, in one launch where the inputs share a dtype:

============================  =================================================================
``concatenate``, ``*stack``   one ``join`` (``stack``: of views with a new axis, no copies)
split family                  one ``split`` (overlapping sections, which NumPy allows: one
                              ``slice1_batch``); the parts are copies, views of one allocation
``flip``, ``fliplr/ud``       one ``strided_slice`` with negative steps (a copy, not a view)
``roll``                      one batch of strided copies, a job per block (``2**k`` of ``k``
                              rolled axes), their parameters passed by value
``pad`` (constant)            one pass of ``slice_grad``'s kernel with the constant (0 too) as
                              the fill it writes where the array does not land
============================  =================================================================

In a fused function (``cudadml.fuse``), whose calls are a graph's nodes, a roll of one axis is
one ``join`` of the two strided views and a pad of zeros one ``slice_grad``.

Arrays of any size the memory holds: past what one DirectML buffer tensor spans (2^32 - 1
elements, sizes of 32 bits), which DirectML's JOIN and SPLIT refuse, a join or split copies
each array or part by one ``strided_slice`` (a launch each); a flip, roll or pad, whose kernels
index in 64 bits, takes any size as it is.

What a call works out on the host (its arguments normalised as NumPy reads them, the
operation of its launch) is kept per call's arguments (shapes, dtypes, exact ints, the
constants' bytes), bounded with cudadml's other caches (``core.memory``): a call in a loop looks it
up. Constants are converted per call, with NumPy's warnings.

Dtypes follow NumPy: the result dtype is NumPy's ``result_type`` of the inputs, or ``dtype=``
(or ``out``'s), checked with ``numpy.can_cast`` under ``casting=``; inputs of another dtype are
converted first with their own ``astype`` (a launch of NumPy's or CuPy's per such input). The
kernels move raw bits, so every fixed-size dtype moves: bool, float16, complex, datetimes,
byte-swapped and structured dtypes, strings (dtypes of other than 1, 2, 4, 8 or 16 bytes move as
views of words with one more axis). Object dtypes are refused (``TypeError``). DirectML's
operators take up to 8 dimensions (7 for elements of 16 bytes or moved as several words):
arrays of more have the runs of axes that a call treats alike folded into one axis each (a
reshape: a view where the strides allow, else NumPy's or CuPy's copy first), and a flip, roll
or pad that still needs more (every other axis of a 10-dimensional array, every axis of an 8-D
complex128 array) runs in passes, a launch each, each changing as many of its axes as fold
into DirectML's dimensions: so every rank NumPy takes runs.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import operator
import sys
import typing
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from ..core.calls import Description, data_type
from ..core.enums import FeatureLevel
from ..core.errors import fill_docstring
from ..core.memory import kept, nested_bytes
from ..core.plan import CopyJob, CopyPlan, fill_pattern
from ..core.tensor import MAX_DIMENSIONS, MAX_ELEMENTS, BufferTensorDesc, beyond_directml_bounds
from ..ops import SliceGradOperatorDesc, SliceOperatorDesc, StridedSlice
from ..run.arrays import join, run_call, slice1_batch, slice1_batch_grad, slice_grad, strided_slice, strided_slice_grad
from ..run.arrays import split as _split

try:
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

__all__ = [
    "array_split",
    "column_stack",
    "concatenate",
    "dsplit",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "pad",
    "roll",
    "split",
    "stack",
    "vsplit",
    "vstack",
]

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
#: Kinds the array functions move as they are, at these element sizes (16: as pairs of words).
_AS_IS_KINDS, _AS_IS_SIZES = frozenset("biufcmM"), frozenset((1, 2, 4, 8, 16))
_WORD_SIZES = (8, 4, 2, 1)
#: What every call of the array functions passes: any dtype's elements move as raw bits.
_RAW = {"directml_types": False}

# Docstring sections several functions share, filled in by ``_documented``.
_SHARED = {
    "{examples}": """Examples
--------
>>> import numpy as np, cudadml.numpy as cnp""",
    "{stack raises}": """Raises
------
ValueError, TypeError
    As `concatenate`; ``TypeError`` for ``tup`` that is not a sequence.""",
    "{split axis}": """axis : int, default 0
    The axis to split along.""",
    "{parts}": """Returns
-------
list of arrays
    The parts, in order.""",
    "{split raises}": """IndexError, numpy.exceptions.AxisError
    For an axis out of bounds, as NumPy.
TypeError
    For indices that are not integers.""",
}


def _documented(template=None, **fields):
    """A decorator: the function's docstring, or ``template`` (with ``{name}``, the function's
    name), with the sections of ``_SHARED`` and ``fields`` (``{field}``) filled in."""

    def document(fn):
        texts = {**_SHARED, "{name}": fn.__name__, **{f"{{{k}}}": v for k, v in fields.items()}}
        fn.__doc__ = fill_docstring(fn.__doc__ if template is None else template, texts)
        return fn

    return document


# ---- arrays and dtypes ---------------------------------------------------------------------------


def _cupy_in(values):
    """CuPy, where any of ``values`` is a CuPy array (then the call runs on the GPU), else None."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(v, cupy.ndarray) for v in values):
        return cupy
    return None


def _arrays(values, name):
    """``values`` as arrays of one kind: CuPy arrays where any is one (lists and scalars made
    CuPy arrays), else NumPy arrays (``numpy.asarray``)."""
    cupy = _cupy_in(values)
    if cupy is None:
        return [v if type(v) is np.ndarray else _plain(v, name) for v in values]
    arrays = []
    for v in values:
        if isinstance(v, np.ndarray):
            raise TypeError(f"{name}: the arrays mix NumPy and CuPy arrays; pass arrays of one kind")
        arrays.append(v if isinstance(v, cupy.ndarray) else cupy.asarray(v))
    return arrays


def _plain(value, name):
    """``numpy.asarray(value)``; a NumPy subclass but ``memmap`` (a masked array, a matrix) is
    refused, as the array functions refuse it: a plain result would drop its meaning. A traced
    array (``cudadml.fuse``) is taken as it is: its calls are recorded, not run."""
    if isinstance(value, np.ndarray) and not isinstance(value, np.memmap):
        raise TypeError(
            f"cudadml.numpy.{name}: a {type(value).__name__}, a NumPy subclass whose meaning (a mask, matrix "
            f"rules) a plain result would drop; use numpy.{name}, or pass numpy.asarray(...) of it"
        )
    if _traced(value):
        return value
    return np.asarray(value)


def _array(value, name):
    if type(value) is np.ndarray:
        return value
    cupy = sys.modules.get("cupy")
    if cupy is not None and type(value) is cupy.ndarray:
        return value
    return _arrays([value], name)[0]


def _traced(x):
    """Whether ``x`` is a traced array (``cudadml.fuse``): its calls are recorded as graph nodes."""
    return getattr(type(x), "__cudadml_traced__", False)


def _exact(value):
    """Whether an argument is None, an int, or a tuple of ints or of tuples of ints, each of
    exactly that type: one a memo may key on by value (a float, bool or NumPy integer equal
    to an int hashes alike, but NumPy may read it otherwise, or refuse it)."""
    if type(value) is not tuple:
        return value is None or type(value) is int
    for v in value:  # (plain loops: every call checks its arguments)
        if type(v) is tuple:
            for w in v:
                if type(w) is not int:
                    return False
        elif type(v) is not int:
            return False
    return True


def _run(kind, x, operation):
    """``operation`` (of ``kind``, made once for the shapes and arguments of a call) on ``x`` by
    the array functions' one route (``run_call``: their adapters, their binding rules); the
    list of results. A traced array (``cudadml.fuse``) records it, or refuses it by name."""
    return run_call(kind, [x], None, lambda inputs: operation, None, None)


def _host(value):
    """An argument that may be a CuPy array (a shift, widths) as NumPy takes it."""
    cupy = sys.modules.get("cupy")
    return cupy.asnumpy(value) if cupy is not None and isinstance(value, cupy.ndarray) else value


def _empty(like, shape, dtype):
    """A new array of ``like``'s kind (nothing is moved into it); for a traced array
    (``cudadml.fuse``), a traced value that nothing has been moved into."""
    if isinstance(like, np.ndarray):
        return np.empty(shape, dtype)
    if _traced(like):
        return like.__cudadml_empty__(shape, dtype)
    return sys.modules["cupy"].empty(shape, dtype)


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


def _words_of(dtype, name):
    """How the kernels move ``dtype``: None (as it is), or the width of the words its elements
    are moved as (one more, innermost, axis where an element is several)."""
    if dtype.kind in _AS_IS_KINDS and dtype.itemsize in _AS_IS_SIZES and dtype.names is None:
        return None
    if dtype.hasobject:
        raise TypeError(
            f"cudadml.numpy.{name}: dtype {dtype} holds Python objects, which the kernels cannot move; use numpy.{name}"
        )
    if dtype.itemsize == 0:
        raise TypeError(f"cudadml.numpy.{name}: dtype {dtype} has elements of no bytes; use numpy.{name}")
    return next(w for w in _WORD_SIZES if dtype.itemsize % w == 0)


def _raw(x, width):
    """``x`` as ``width``-byte words: a view (one more axis where an element is several words)."""
    if width is None:
        return x
    word = np.dtype(f"u{width}")
    if x.itemsize == width:
        return x.view(word)
    return x[..., None].view(word)  # NumPy only: CuPy has no such dtypes


def _cooked(r, dtype, width):
    """The inverse of ``_raw``, for a result of the kernels (C-contiguous)."""
    if width is None:
        return r
    return r.view(dtype) if dtype.itemsize == width else r.view(dtype)[..., 0]


def _uint_view(x):
    """``x``'s elements as unsigned integers of up to 8 bytes: ``x`` itself, reinterpreted (one
    more axis of words where an element is wider), for the gradient kernels, which add."""
    width = next(w for w in _WORD_SIZES if x.itemsize % w == 0)
    word = np.dtype(f"u{width}")
    if x.itemsize == width:
        return x.view(word)
    if isinstance(x, np.ndarray):
        return x[..., None].view(word)
    cupy = sys.modules["cupy"]
    k = x.itemsize // width
    return cupy.ndarray((*x.shape, k), word, memptr=x.data, strides=(*x.strides, width))


def _rank_limit(dtype, name):
    """The most dimensions the kernels take for ``dtype``: DirectML's 8, less the axis of words
    that elements of more than 8 bytes (or moved as several words) take."""
    width = _words_of(dtype, name)
    return MAX_DIMENSIONS - (dtype.itemsize > (width or 8))


def _folding(keys):
    """Runs of consecutive axes that fold into one: an axis joins the previous one where their
    keys are equal and not None (None: the axis stays alone)."""
    groups = []
    for ax, key in enumerate(keys):
        if groups and key is not None and keys[groups[-1][-1]] == key:
            groups[-1].append(ax)
        else:
            groups.append([ax])
    return groups


def _alone(ndim, axes):
    """The runs of axes a call that changes ``axes`` (pads or rolls them) folds into: each of
    ``axes`` alone, the runs of the others as one axis each."""
    return _folding([None if ax in axes else "still" for ax in range(ndim)])


def _in_passes(changed, runs, limit):
    """``changed`` (the axes a call flips, pads or rolls, in order) cut into passes of one launch
    each, each pass taking as many as it can while the runs of axes it folds into
    (``runs(axes)``, a set of axes) number at most ``limit``: so any rank runs, a pass per
    ``limit`` or so axes changed (each pass moves the whole array once)."""
    passes = [set()]
    for ax in changed:
        if passes[-1] and len(runs(passes[-1] | {ax})) > limit:
            passes.append(set())
        passes[-1].add(ax)
    return passes


def _folded(x, groups):
    """``x`` with each run of ``groups`` one axis: a reshape (a view where the strides allow,
    else NumPy's or CuPy's copy), for arrays of more dimensions than the kernels take."""
    return x.reshape(tuple(math.prod(x.shape[a] for a in g) for g in groups))


def _copy(x, name):
    """A new C-contiguous copy of ``x``, by one ``strided_slice``."""
    if x.size == 0:
        return _empty(x, x.shape, x.dtype)
    width = _words_of(x.dtype, name)
    flat = x.ndim == 0 or x.ndim > _rank_limit(x.dtype, name)  # copied as one axis
    r = strided_slice(_raw(x.reshape(-1) if flat else x, width), (), **_RAW)
    r = _cooked(r, x.dtype, width)
    return r.reshape(x.shape) if flat else r


# ---- past one DirectML buffer ----------------------------------------------------------------------
# DirectML's JOIN, SPLIT and SLICE_GRAD take tensors of at most MAX_ELEMENTS elements (sizes of 32
# bits); cudadml's index (``strided_slice``) and its gradient take any size, their kernels
# indexing in 64 bits. A call past that bound copies each array or part by the index instead: a
# launch per array rather than one, each moving billions of elements.


def _past_one_buffer(shape, dtype):
    """Whether an array of ``shape`` and ``dtype`` (the words the kernels move; 16-byte
    elements count as the two words they move as) spans more than a DirectML buffer tensor."""
    return math.prod(shape) * max(dtype.itemsize // 8, 1) > MAX_ELEMENTS


def _placed(pieces, starts, target):
    """``target`` with each of ``pieces`` copied in at ``starts[k]`` on, by one ``strided_slice``
    each (the pieces past one DirectML buffer, as ``_joined`` places them)."""
    for piece, start in zip(pieces, starts):
        if piece.size:
            where = tuple(slice(a, a + n) for a, n in zip(start, piece.shape))
            strided_slice(piece, (), out=target[where], **_RAW)
    return target


def _joined(raw, axis, out=None):
    """``cudadml.join`` of ``raw`` (arrays of one kernel word) along ``axis``, into ``out`` or new;
    past one DirectML buffer, each array placed into its part of the result (``_placed``)."""
    first = raw[0].shape
    shape = (*first[:axis], sum(x.shape[axis] for x in raw), *first[axis + 1 :])
    if not _past_one_buffer(shape, raw[0].dtype):
        return join(raw, axis=axis, out=out, **_RAW)
    starts, at = [], 0
    for x in raw:
        starts.append((0,) * axis + (at,) + (0,) * (x.ndim - axis - 1))
        at += x.shape[axis]
    return _placed(raw, starts, _empty(raw[0], shape, raw[0].dtype) if out is None else out)


# ---- concatenate and stack -----------------------------------------------------------------------


@_documented()
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
    xs = _arrays(list(arrays), name)
    if not xs:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        xs = [x.ravel() if x.flags.c_contiguous else _copy(x, name).ravel() for x in xs]
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
    cupy = _cupy_in(xs)
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
    if len(shape) > _rank_limit(dtype, name):  # as (before axis, axis, after axis)
        groups = _folding(["before"] * axis + [None] + ["after"] * (len(shape) - axis - 1))
        result = _join([_folded(x, groups) for x in xs], 1 if axis else 0, None, dtype, name)
        joined = sum(x.shape[axis] for x in xs)  # not -1: with an empty axis it would be ambiguous
        result = result.reshape((*shape[:axis], joined, *shape[axis + 1 :]))
        if out is None:
            return result
        out[...] = result
        return out
    width = _words_of(dtype, name)
    raw = [_raw(x, width) for x in xs]
    if out is None:
        return _cooked(_joined(raw, axis), dtype, width)
    target = out.view(np.ndarray) if isinstance(out, np.ndarray) and type(out) is not np.ndarray else out
    xp = np if isinstance(out, np.ndarray) else sys.modules["cupy"]
    if any(xp.may_share_memory(x, target) for x in xs):  # read every input before out is written
        target[...] = _cooked(_joined(raw, axis), dtype, width)
    else:
        _joined(raw, axis, _raw(target, width))
    return out


@_documented()
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
    xs = _arrays(_stack_sequence(arrays), "stack")
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


#: The docstring of ``hstack`` and ``vstack``, filled in by ``_documented``.
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


@_documented(
    _STACK_ALONG,
    how="horizontally (along axis 1, or 0 for 1-D arrays)",
    arrays="0-dimensional ones count as 1-D",
    example=""">>> cnp.hstack([np.array([[1], [2]]), np.array([[3, 4], [5, 6]])])
array([[1, 3, 4],
       [2, 5, 6]])""",
)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(x, 1) for x in _arrays(_stack_sequence(tup), "hstack")]
    axis = 0 if arrays and arrays[0].ndim == 1 else 1
    return concatenate(arrays, axis, dtype=dtype, casting=casting)


@_documented(
    _STACK_ALONG,
    how="vertically (along axis 0, 1-D arrays as rows)",
    arrays="those of fewer than 2 dimensions become rows",
    example=""">>> cnp.vstack([np.arange(3), np.arange(3, 6)])
array([[0, 1, 2],
       [3, 4, 5]])""",
)
def vstack(tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(x, 2) for x in _arrays(_stack_sequence(tup), "vstack")]
    return concatenate(arrays, 0, dtype=dtype, casting=casting)


@_documented()
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
    arrays = [_at_least(x, 3) for x in _arrays(_stack_sequence(tup), "dstack")]
    return concatenate(arrays, 2)


@_documented()
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
        for x in _arrays(_stack_sequence(tup), "column_stack")
    ]
    return concatenate(arrays, 1)


# ---- split ---------------------------------------------------------------------------------------


@_documented()
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


@_documented()
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
    exact = _exact(indices_or_sections)  # (memos keyed by value: see _exact)
    if exact:
        points = _split_points(total, indices_or_sections)
    else:
        points = _split_points.__wrapped__(total, _host(indices_or_sections))
    x = _array(ary, name)
    axis = normalize_axis_index(axis, x.ndim)
    windows = (_split_windows if exact else _split_windows.__wrapped__)(points, x.shape[axis])
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
    if x.ndim > _rank_limit(dtype, name):  # as (before axis, axis, after axis)
        groups = _folding(["before"] * axis + [None] + ["after"] * (x.ndim - axis - 1))
        parts = _parts(_folded(x, groups), 1 if axis else 0, windows, name)
        # Each part's own size, not -1: an empty part leaves -1 ambiguous.
        return [p.reshape((*x.shape[:axis], size, *x.shape[axis + 1 :])) for p, (_, size) in zip(parts, windows)]
    width = _words_of(dtype, name)
    raw = _raw(x, width)
    if _past_one_buffer(raw.shape, raw.dtype):  # past SPLIT's bound: the index copies each part
        head = (slice(None),) * axis
        return [
            _cooked(strided_slice(raw, (*head, slice(start, start + size)), **_RAW), dtype, width)
            for start, size in windows
        ]
    sizes = [size for _, size in windows]
    tiled, at = True, 0
    for start, size in windows:
        if size:
            tiled = tiled and start == at
            at += size
    if tiled and at == x.shape[axis]:
        return [_cooked(p, dtype, width) for p in _split(raw, split_sizes=sizes, axis=axis, **_RAW)]
    shapes = [(*x.shape[:axis], size, *x.shape[axis + 1 :]) for size in sizes]
    taken = [k for k, s in enumerate(shapes) if 0 not in s]
    parts = [_empty(x, s, dtype) for s in shapes]
    if taken:  # overlapping sections, which decreasing indices give: each its own window
        extra = (0,) * (raw.ndim - x.ndim)
        offsets = [(0,) * axis + (windows[k][0],) + (0,) * (x.ndim - axis - 1) + extra for k in taken]
        window_sizes = [shapes[k] + raw.shape[x.ndim :] for k in taken]
        for k, p in zip(taken, slice1_batch(raw, window_offsets=offsets, window_sizes=window_sizes, **_RAW)):
            parts[k] = _cooked(p, dtype, width)
    return parts


#: The docstring of ``hsplit``, ``vsplit`` and ``dsplit``, filled in by ``_documented``.
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


@_documented(
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


@_documented(
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


@_documented(
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


# ---- flips and roll ------------------------------------------------------------------------------


def _flipped(m, axes, name):
    """``m`` flipped along ``axes`` (as `flip` takes them; None: every axis), copied by one
    ``cudadml.strided_slice`` (a pass per ``_in_passes`` where more runs of axes are flipped
    than the kernels take); a 0-d ``m`` as NumPy's ``m[()]`` (a NumPy scalar, a 0-d CuPy
    array)."""
    if not _exact(axes):
        axes = normalize_axis_tuple(axes, m.ndim)
    key, width, operation = _flip_call(m.shape, m.dtype, axes, name)
    if operation is not None:
        return _cooked(_run(StridedSlice, _raw(m, width), operation)[0], m.dtype, width)
    if m.ndim == 0:
        return _copy(m, name)[()]
    if m.size == 0:
        return _empty(m, m.shape, m.dtype)
    limit = _rank_limit(m.dtype, name)
    flipped = [ax for ax, n in enumerate(m.shape) if key[ax].step == -1 and n > 1]
    if not flipped:
        return _copy(m, name)
    shape = m.shape
    for axes in _in_passes(flipped, lambda axes: _flip_runs(shape, axes), limit):
        groups = _flip_runs(shape, axes)
        folded_key = tuple(slice(None, None, -1) if axes.intersection(g) else slice(None) for g in groups)
        m = _flip_copy(_folded(m, groups), folded_key, name).reshape(shape)
    return m


def _flip_runs(shape, axes):
    """The runs of axes a flip of ``axes`` (of more than one element each) folds into: axes
    flipped alike; a size-1 axis goes with the run before it (at the start, the first run)."""
    keys = [ax in axes if n > 1 else None for ax, n in enumerate(shape)]
    first = next(k for k in keys if k is not None)
    return _folding(list(itertools.accumulate(keys, lambda before, k: before if k is None else k, initial=first))[1:])


def _flip_copy(m, key, name):
    width = _words_of(m.dtype, name)
    return _cooked(strided_slice(_raw(m, width), key, **_RAW), m.dtype, width)


@kept(nested_bytes)
def _flip_call(shape, dtype, axes, name):
    """A flip of ``axes`` (as `flip` takes them; None: every axis) of an array of ``shape`` and
    ``dtype``: ``(key, width, operation)``, its index (a slice per axis), the width of the words
    its elements move as (``_words_of``) and the ``strided_slice`` operation of its one launch,
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
    width = _words_of(dtype, name)
    if ndim > _rank_limit(dtype, name):
        return key, width, None
    words = () if width is None or width == dtype.itemsize else (dtype.itemsize // width,)
    return key, width, StridedSlice.of((*shape, *words), key, None, False)


@_documented()
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
    return _flipped(_array(m, "flip"), axis, "flip")


#: The docstring of ``fliplr`` and ``flipud``, filled in by ``_documented``.
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
    m = _array(m, name)
    if m.ndim < axis + 1:
        raise ValueError(f"Input must be >= {axis + 1}-d.")
    return _flipped(m, axis, name)


@_documented(
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


@_documented(
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


@_documented()
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
    a = _array(a, name)
    _words_of(a.dtype, name)  # object dtypes refused before anything moves
    if axis is None:
        shift = _host(shift)
        flat = a.ravel() if a.flags.c_contiguous else _copy(a, name).ravel()
        return roll(flat, shift, 0).reshape(a.shape)
    if _exact(shift) and _exact(axis):
        shifts = _roll_shifts(a.shape, shift, axis)
    else:
        shifts = _roll_shifts.__wrapped__(a.shape, _host(shift), axis)
    if a.size == 0:
        return _empty(a, a.shape, a.dtype)
    if not any(shifts):
        return _copy(a, name)
    limit = _rank_limit(a.dtype, name)
    if a.ndim <= limit:
        return _rolled(a, shifts, name)
    shape, rolled = a.shape, [ax for ax, s in enumerate(shifts) if s]
    for axes in _in_passes(rolled, lambda axes: _alone(len(shape), axes), limit):  # runs not rolled, as one axis
        groups = _alone(len(shape), axes)
        folded = tuple(shifts[g[0]] if g[0] in axes else 0 for g in groups)
        a = _rolled(_folded(a, groups), folded, name).reshape(shape)
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

    def describe(self, dtype, shapes):
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
    if _traced(a):
        return _rolled_by_windows(a, {ax: s for ax, s in enumerate(shifts) if s}, name)
    width = _words_of(a.dtype, name)
    raw = _raw(a, width)
    operation = _Roll((*shifts, *(0,) * (raw.ndim - a.ndim)))
    return _cooked(_run(_Roll, raw, operation)[0], a.dtype, width)


def _rolled_by_windows(a, rolled, name):
    """``a`` (not empty; a traced array) rolled by ``rolled[axis]`` (in ``[1, a.shape[axis])``)
    along each axis it names: one ``join``, or for several axes one ``slice1_batch_grad``."""
    if len(rolled) == 1:
        ((ax, s),) = rolled.items()
        width = _words_of(a.dtype, name)
        raw = _raw(a, width)
        head = (slice(None),) * ax
        pieces = [raw[(*head, slice(a.shape[ax] - s, None))], raw[(*head, slice(None, a.shape[ax] - s))]]
        return _cooked(_joined(pieces, ax), a.dtype, width)
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
    result = slice1_batch_grad(pieces, words.shape, window_offsets=offsets, window_sizes=sizes, **_RAW)
    return _cooked_words(result, a)


def _cooked_words(r, like):
    """The inverse of ``_uint_view`` for a C-contiguous result."""
    if r.ndim == like.ndim:
        return r.view(like.dtype)
    if isinstance(r, np.ndarray):
        return r.view(like.dtype)[..., 0]
    cupy = sys.modules["cupy"]
    return cupy.ndarray(like.shape, like.dtype, memptr=r.data)


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


@dataclasses.dataclass(frozen=True, repr=False)
class _FilledSliceGrad(SliceGradOperatorDesc):
    """SLICE_GRAD whose elements the window does not read receive ``fill`` (``plan.fill_pattern``
    of one element) instead of 0: ``pad``'s constant, written by the same one pass."""

    fill: bytes = dataclasses.field(default=bytes(16), kw_only=True)

    def _lower(self, input_strides, output_strides):
        return dataclasses.replace(super()._lower(input_strides, output_strides), fill=self.fill)


class _Pad(NamedTuple):
    """The operation of a constant ``pad`` (as ``cudadml.core.calls``' operations are): ``x`` placed
    at ``before`` in an array of ``shape`` filled with ``fill`` elsewhere."""

    shape: tuple
    before: tuple
    fill: bytes
    feature_level: FeatureLevel = FeatureLevel.newest()
    directml_types: bool = False

    function = "pad"
    ARGUMENT = "array"
    NAME = "pad"

    def describe(self, dtype, shapes):
        (x_shape,) = shapes
        t = data_type(dtype, self.directml_types)
        with beyond_directml_bounds():  # cudadml's own call, of any size (its kernel indexes in 64 bits)
            desc = _FilledSliceGrad(
                BufferTensorDesc(t, x_shape),
                BufferTensorDesc(t, self.shape),
                self.before,
                x_shape,
                (1,) * len(x_shape),
                fill=self.fill,
                feature_level=self.feature_level,
            )
        return Description(desc, (self.shape,))

    def words(self):
        """The same pad on 16-byte elements seen as pairs of 8-byte words (the pattern is the
        element itself: word ``x % 2`` of it at innermost coordinate ``x``)."""
        return self._replace(shape=(*self.shape, 2), before=(*self.before, 0))


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


@_documented()
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array with a constant, as ``numpy.pad(..., mode="constant")``: one launch.

    The result is made by one pass of the SLICE_GRAD kernel (each element written once: the
    array's where it lands, the constant elsewhere), given the constant's bits as its fill (0
    too: the zeros ``cudadml.slice_grad`` writes), at any size. Constants that differ between
    axes or sides take that pass and then one fill per padded side, in NumPy's order (later
    axes win at the corners); so do dtypes of other than 1, 2, 4, 8 or 16 bytes (strings) with
    a non-zero constant. An empty array is filled without a kernel. Past 8 dimensions, where
    the padded axes and the runs between them are more than DirectML's 8, a pass per as many
    padded axes as fit.

    Parameters
    ----------
    array : array_like
        The array to pad (NumPy or CuPy array, or what ``numpy.asarray`` takes).
    pad_width : int, sequence or dict
        Elements added before and after each axis: ``((before_1, after_1), ...)``, ``(before,
        after)`` or ``n`` for every axis, or ``{axis: n or (before, after)}``; non-negative
        integers.
    mode : str, default "constant"
        Only ``"constant"``; NumPy's other modes (and a function) raise ``NotImplementedError``.
    constant_values : scalar or sequence, default 0
        The constant, or one per axis and side as ``pad_width``; converted to ``array``'s
        dtype as NumPy assigns it (a Python integer out of range raises ``OverflowError``).

    Returns
    -------
    array
        A new C-contiguous array of ``array``'s kind and dtype.

    Raises
    ------
    NotImplementedError
        For a mode other than ``"constant"`` that NumPy has: use ``numpy.pad`` or ``cupy.pad``.
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
    """
    name = "pad"
    x = _array(array, name)
    if isinstance(pad_width, dict):
        pairs = [(0, 0)] * x.ndim
        for ax, width in pad_width.items():
            match width:
                case int(both):
                    pairs[ax] = both, both
                case tuple((int(before), int(after))):
                    pairs[ax] = before, after
                case _ as invalid:  # as NumPy: an AssertionError
                    typing.assert_never(invalid)
        pad_width = pairs
    if _exact(pad_width):
        pad_width = _pad_widths(pad_width, x.ndim)
    else:
        pad_width = _pad_widths.__wrapped__(_host(pad_width), x.ndim)
    if callable(mode):
        raise NotImplementedError(
            "cudadml.numpy.pad pads with a constant only (mode='constant'); for a padding function use "
            "numpy.pad (NumPy arrays) or cupy.pad (CuPy arrays)"
        )
    try:
        unsupported = set(kwargs) - set(_PAD_KEYWORDS[mode])
    except KeyError:
        raise ValueError(f"mode '{mode}' is not supported") from None
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode != "constant":
        if mode != "empty" and x.size == 0:
            for ax, pair in enumerate(pad_width):
                if x.shape[ax] == 0 and any(pair):
                    raise ValueError(f"can't extend empty axis {ax} using modes other than 'constant' or 'empty'")
        raise NotImplementedError(
            f"cudadml.numpy.pad pads with a constant only (mode='constant'), not mode={mode!r}; use "
            "numpy.pad (NumPy arrays) or cupy.pad (CuPy arrays)"
        )
    dtype = x.dtype
    _words_of(dtype, name)  # object dtypes refused before anything moves
    values, sides = _constants(kwargs.get("constant_values", 0), x.ndim, dtype)
    if x.ndim == 0:
        return _copy(x, name)
    if x.size == 0:
        result = _empty(x, tuple(b + n + a for n, (b, a) in zip(x.shape, pad_width)), dtype)
        return _fill_sides(result, x.shape, pad_width, values)
    passes, per_side = _pad_call(x.shape, dtype, pad_width, sides, name)
    result = x
    for groups, width, operation, shape in passes:  # (a pass pads its axes of the array the one before made)
        result = _padded(result, groups, width, operation, shape)
    if per_side:  # constants of their own per axis or side: NumPy's assignments, in its order
        _fill_sides(result, x.shape, pad_width, values)
    return result


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
    for pair in _as_pairs(_host(constant_values), ndim):
        done = converted.get(id(pair))
        if done is None:
            cells = [np.zeros((), dtype), np.zeros((), dtype)]  # bytes a value leaves out (long double's padding) are 0
            cells[0][()], cells[1][()] = pair
            done = converted[id(pair)] = cells, (cells[0].tobytes(), cells[1].tobytes())
        values.append(done[0])
        sides.append(done[1])
    return values, tuple(sides)


@kept(nested_bytes)
def _pad_call(shape, dtype, pad_width, sides, name):
    """How ``pad`` runs on a (not empty) array of ``shape`` and ``dtype`` padded by ``pad_width``
    with constants of bytes ``sides`` (per axis, a pair): ``(passes, per_side)``, a pass per
    ``_in_passes`` of ``(groups, width, operation, shape)`` (``_padded``), and whether
    constants that differ between sides are assigned afterwards (``_fill_sides``)."""
    fills = {side for (b, a), pair in zip(pad_width, sides) for w, side in zip((b, a), pair) if w}
    fill = next(iter(fills)) if len(fills) == 1 else bytes(dtype.itemsize)
    if dtype.itemsize not in _AS_IS_SIZES:  # several words an element (strings): a fill is one word
        fill = bytes(dtype.itemsize)  # so zeros, then NumPy's assignments
    width, limit, ndim = _words_of(dtype, name), _rank_limit(dtype, name), len(shape)
    words = () if width is None or width == dtype.itemsize else (dtype.itemsize // width,)
    pattern = fill_pattern(fill) if any(fill) else bytes(16)
    axes = [ax for ax, pair in enumerate(pad_width) if any(pair)]
    passes = []
    for padded in [set(axes)] if ndim <= limit else _in_passes(axes, lambda axes: _alone(ndim, axes), limit):
        widths = [pair if ax in padded else (0, 0) for ax, pair in enumerate(pad_width)]
        new_shape = tuple(b + n + a for n, (b, a) in zip(shape, widths))
        groups, folded_shape, before = None, new_shape, tuple(b for b, _ in widths)
        if ndim > limit:  # the runs of axes not padded as one axis each
            groups = _alone(ndim, padded)
            folded_shape = tuple(math.prod(new_shape[a] for a in g) for g in groups)
            before = tuple(before[g[0]] for g in groups)
        operation = _Pad((*folded_shape, *words), (*before, *(0,) * len(words)), pattern)
        passes.append((groups, width, operation, new_shape))
        shape = new_shape
    return tuple(passes), bool(fills - {fill})


def _padded(x, groups, width, operation, shape):
    """``x`` (not empty) padded in one launch: ``operation`` (a ``_Pad``) on ``x``'s runs of
    axes ``groups`` as one axis each (None: its own axes) seen as ``width``-byte words, a result
    of ``shape``. A traced array (``cudadml.fuse``) pads with zeros by SLICE_GRAD, which a graph
    holds (past one DirectML buffer, the index's gradient)."""
    folded = x if groups is None else _folded(x, groups)
    raw = _raw(folded, width)
    if _traced(x) and not any(operation.fill):
        offsets, result_shape = operation.before, operation.shape
        if _past_one_buffer(result_shape, raw.dtype):
            key = tuple(slice(b, b + n) for b, n in zip(offsets, raw.shape))
            result = strided_slice_grad(raw, result_shape, key, **_RAW)
        else:
            result = slice_grad(raw, result_shape, window_offsets=offsets, window_sizes=raw.shape, **_RAW)
    else:
        (result,) = _run(_Pad, raw, operation)
    result = _cooked(result, x.dtype, width)
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

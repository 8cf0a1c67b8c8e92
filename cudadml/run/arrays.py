"""The array functions: DirectML's operators on NumPy, CuPy, PyTorch and Dask arrays.

Each function is thin: it finds the adapter of the arrays it is given (``adapters``: NumPy and
CuPy need none; PyTorch and Dask plug in there), normalises its call into one operation
(``calls``: exact integers through ``operator.index``, so NumPy integers count by value;
floats, NaN, None and bools where an integer belongs raise ``TypeError``), and has the adapter
run it. For NumPy and CuPy that is ``runner.run``: the ``CompiledOperator`` cached under the
call, built on a miss from the call's DirectML descriptor (so every DirectML rule applies),
executed with ``CompiledOperator.execute``'s binding rules. ``out=`` arrays are bindings like
any other: the same checks, the same ``BindingError``; one whose strides are not whole elements
(a record's field), which no tensor binds, gets the result through a new array, then a copy of
that array's bytes into its elements (``run_call``). Every error names the call's arguments
(``window_offsets[1]``, ``x.shape[1]``, ``out``), DirectML's rule in parentheses
(``messages``); the arguments NumPy or PyTorch would read otherwise (a window, split sizes)
are taken by name, and a positional call is refused with the call meant.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, SupportsIndex, TypeVar

import numpy as np

from ..core import messages
from ..core.enums import FeatureLevel
from ..core.errors import BindingError, fill_docstring
from ..core.memory import element_strides
from ..core.tensor import MAX_DIMENSIONS
from ..ops import Join, Slice, Slice1, Slice1Batch, Slice1BatchGrad, SliceGrad, Split, StridedSlice, StridedSliceGrad
from .adapters import adapter_for
from .compiled import check_views
from .runner import PLAIN

__all__ = [
    "join",
    "slice",
    "slice1",
    "slice1_batch",
    "slice1_batch_grad",
    "slice_grad",
    "split",
    "strided_slice",
    "strided_slice_grad",
]

#: An array of any kind the functions take: each returns arrays of the kind it was given.
Array = TypeVar("Array")
Ints = Sequence[SupportsIndex]
Level = FeatureLevel | int | str | None

# The docstring sections every array function shares, filled in by ``_public``.
_SHARED = {
    "{by name}": """*positional
    Refused with a ``TypeError`` that says how NumPy or PyTorch would read the call and
    the call to write: the arguments below are taken by name.""",
    "{shared parameters}": """feature_level : FeatureLevel, int or str, optional
    The DirectML feature level to validate against (default: the newest).
stream : cupy.cuda.Stream or torch.cuda.Stream, optional
    For device arrays, the stream to run on: by default the current CuPy stream, or for
    CUDA tensors the current torch stream of their device. Not for Dask arrays, whose
    chunks run on their worker's current stream.
directml_types : bool, default True
    ``False`` moves the elements of any 1, 2, 4 or 8-byte dtype as raw bits (bool,
    complex64, a bfloat16 tensor); ``True`` takes only dtypes with a DirectML type.
chunks : str, int, tuple or dict, optional
    For Dask arrays only: the chunks of the result, in any form ``dask.array`` takes
    (``"auto"``, a block shape, sizes per axis); for `split`, one such value for every
    part or a list of one per part. By default the result's chunks follow the input's.""",
    "{raises}": """Raises
------
DescriptorError
    If the call breaks a DirectML rule; its message lists every broken rule, each in the
    call's words (``window_offsets[1]``, ``x.shape[1]``) with DirectML's in parentheses.
    Nothing runs.
BindingError
    If ``out`` has another shape or overlaps an input. Nothing runs.
TypeError
    For arguments given by position where they are taken by name; for an argument of a
    wrong type: a float, None or bool where an integer belongs, a dtype
    without a DirectML type, arrays of different memory kinds, ``out=`` with an input
    that requires grad; for Dask arrays, ``out=`` or ``stream=`` (a Dask array is
    immutable: its result is a new lazy array), or chunks that are neither NumPy nor CuPy
    arrays, or of both kinds.
ValueError
    For Dask arrays of unknown chunk sizes (``compute_chunk_sizes()`` finds them).""",
    "{examples}": """Examples
--------
>>> import numpy as np, cudadml as cd""",
}


def _public(fn=None, *, out=None):
    """An array function as users call it: its docstring's shared sections filled in, and
    ``{out}`` with its ``out`` parameter, of the result's shape and dtype that ``out`` names
    (``@_public(out=...)``)."""
    if fn is None:
        return lambda fn: _public(fn, out=out)
    texts = _SHARED if out is None else {**_SHARED, "{out}": _OUT.format(out)}
    fn.__doc__ = fill_docstring(fn.__doc__, texts)
    return fn


_OUT = """out : array, optional
    Where to write the result: {}, any strides."""


def _bindings_said(operation, error, inputs, given=None):
    """A ``BindingError`` of ``operation``'s run in the caller's words: ``out``, ``x``, ``xs[2]``."""
    shapes = [tuple(a.shape) for a in inputs]
    return messages.in_callers_words(operation, error, shapes, binding_inputs=given)


def run_call(kind, inputs, outs, normalise, stream, chunks, given=None):
    """What every array function does once its arguments are read: the arrays' adapter takes
    them, ``normalise(inputs)`` normalises the call into ``kind``'s operation (with the arrays
    as the adapter holds them), and the adapter runs it; a broken binding rule is said in the
    caller's words. Returns the results, a list."""
    adapter = adapter_for(inputs, outs)
    arrays = inputs
    inputs, outs = adapter.arrays(kind, inputs, outs)
    operation = normalise(inputs)
    try:
        try:
            return adapter.run(operation, inputs, outs, stream, chunks)
        except BindingError:
            # An array whose strides are not whole elements is refused by the runner before anything
            # runs (no tensor binds it); looked for here, so that a call that binds costs nothing.
            if adapter is not PLAIN or all(map(_whole_elements, inputs + (outs or []))):
                raise
        # (arrays as given: the adapter copies NumPy arrays whose strides are not whole elements)
        given_inputs = [a if type(a) is type(b) else b for a, b in zip(arrays, inputs)]
        return _through_stand_ins(operation, given_inputs, inputs, outs or None, stream)
    except BindingError as e:
        raise _bindings_said(operation, e, inputs, given) from None


# ---- out= whose strides are not whole elements ---------------------------------------------------
# A record's field (``o["v"]`` of ``[("k", "u1"), ("v", "<f4")]``) has strides of the record's
# size: no tensor binds it (tensor strides count elements). Such an ``out`` gets the result
# through a new array of its shape and dtype, then a copy of that array's bytes into its
# elements' bytes (a strided copy of 1-byte elements: any strides, any address), so no other
# byte of its buffer changes.


def _whole_elements(a):
    """Whether ``a``'s strides are whole elements (a stride of an axis of one element, or of an
    empty array, moves nowhere and may be anything)."""
    itemsize = a.itemsize
    for stride in a.strides:
        if stride % itemsize:  # (a stride of an axis of one element, or of an empty array, moves nowhere)
            return element_strides(a.shape, a.strides, itemsize) is not None
    return True


def _bytes_of(a):
    """``a``'s elements as their bytes: a view of ``uint8`` with one more axis, of ``a.itemsize``."""
    if isinstance(a, np.ndarray):
        return a[..., None].view(np.uint8)
    cupy = sys.modules["cupy"]
    return cupy.ndarray((*a.shape, a.itemsize), cupy.uint8, memptr=a.data, strides=(*a.strides, 1))


def _through_stand_ins(operation, given_inputs, inputs, outs, stream):
    """``operation`` run on ``inputs`` into ``outs`` (None: new results), some of whose strides
    are not whole elements. The outs' binding rules are checked first, on their bytes (writable,
    no byte shared with an input as given or another out), and the shape and dtype rules on the
    new arrays that stand in for them, so a call that breaks one runs nothing. An input stands
    in as a copy of its elements."""
    if outs is not None:
        check_views(operation.NAME, [_bytes_of(a) for a in given_inputs], [_bytes_of(o) for o in outs])
    inputs = [a if _whole_elements(a) else _copy_bytes(a, _new_like(a), stream) for a in inputs]
    if outs is None:
        return PLAIN.run(operation, inputs, None, stream)
    stand_ins = [o if _whole_elements(o) else _new_like(o) for o in outs]
    PLAIN.run(operation, inputs, stand_ins, stream)
    for out, stand_in in zip(outs, stand_ins):
        if out is not stand_in:
            _copy_bytes(stand_in, out, stream)
    return outs


def _new_like(a):
    """A new C-contiguous array of ``a``'s kind (and device), shape and dtype."""
    if isinstance(a, np.ndarray):
        return np.empty(a.shape, a.dtype)
    cupy = sys.modules["cupy"]
    with a.device:
        return cupy.empty(a.shape, a.dtype)


def _copy_bytes(source, target, stream):
    """``source``'s elements into ``target``'s, byte by byte: one strided copy, or one per index
    of the first axis where the axis of bytes makes more than DirectML's 8. Returns ``target``."""
    if target.ndim + 1 > MAX_DIMENSIONS:
        for k in range(target.shape[0]):
            _copy_bytes(source[k], target[k], stream)
        return target
    strided_slice(_bytes_of(source), (), out=_bytes_of(target), stream=stream, directml_types=False)
    return target


def as_list(arrays, what, name):
    """``arrays`` as a list: a list itself (an ``out=`` list is returned as given)."""
    if type(arrays) is list:
        return arrays
    if isinstance(arrays, (str, bytes)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: {what} must be a sequence of arrays, not {type(arrays).__name__}")
    return list(arrays)


@_public(out="shape ``sizes``, ``x``'s dtype")
def slice(
    x: Array,
    *positional: Any,
    offsets: Ints | None = None,
    sizes: Ints | None = None,
    strides: Ints | None = None,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """DirectML SLICE on an array: ``out[c] = x[offsets + strides * c]``.

    Parameters
    ----------
    x : array_like
        A NumPy or CuPy array, a PyTorch tensor, a Dask array of NumPy or CuPy chunks, or a
        CUDA array exposing ``__cuda_array_interface__`` or ``__dlpack__``; any strides.
    {by name}
    offsets : sequence of int
        Per dimension, the first element to take. Required.
    sizes : sequence of int
        Per dimension, how many elements to take: the result's shape (not `slice1`'s
        window, nor an end as in ONNX's or JAX's slices). Required.
    strides : sequence of int, optional
        Per dimension, the step between taken elements, unsigned (0 repeats one element);
        all 1 by default. For negative steps, `slice1` or `strided_slice`.
    {out}
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of ``x``'s kind (a tensor on ``x``'s device for a tensor, a
        lazy Dask array of chunks of ``x``'s chunk type for a Dask array).

    {raises}

    {examples}
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cd.slice(x, offsets=[0, 0, 1, 0], sizes=[1, 1, 2, 2], strides=[1, 1, 2, 3])
    array([[[[ 5.,  8.],
             [13., 16.]]]], dtype=float32)
    """

    def normalise(inputs):
        return Slice.of(inputs[0].shape, positional, offsets, sizes, strides, feature_level, directml_types)

    return run_call(Slice, [x], None if out is None else [out], normalise, stream, chunks)[0]


@_public(out="shape ``output_sizes``, ``x``'s dtype")
def slice1(
    x: Array,
    *positional: Any,
    window_offsets: Ints | None = None,
    window_sizes: Ints | None = None,
    window_strides: Ints | None = None,
    output_sizes: Ints | None = None,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """DirectML SLICE1 on an array: a window per dimension, read backwards where its stride is negative.

    Parameters
    ----------
    x : array_like
        The array to read, of any kind and strides (as in `slice`).
    {by name}
    window_offsets : sequence of int
        Per dimension, where the window starts. Required.
    window_sizes : sequence of int
        Per dimension, the window's length (not the result's, as `slice`'s sizes are):
        ``window_offsets[i] + window_sizes[i] <= x.shape[i]``; 0 takes nothing. Required.
    window_strides : sequence of int, optional
        Per dimension, the signed, non-zero step; a negative step reads the window from its
        end. All 1 by default.
    output_sizes : sequence of int, optional
        Per dimension, how many elements to take: at most (and by default)
        ``1 + (window_sizes[i] - 1) // abs(window_strides[i])``.
    {out}
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of ``x``'s kind.

    {raises}

    {examples}
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> window = dict(window_offsets=[0, 0, 0, 1], window_sizes=[1, 1, 4, 3], window_strides=[1, 1, -2, 2])
    >>> cd.slice1(x, **window)[0, 0]
    array([[14., 16.],
           [ 6.,  8.]], dtype=float32)
    """

    def normalise(inputs):
        window = (window_offsets, window_sizes, window_strides)
        return Slice1.of(inputs[0].shape, positional, *window, output_sizes, feature_level, directml_types)

    return run_call(Slice1, [x], None if out is None else [out], normalise, stream, chunks)[0]


@_public(out="shape ``input_shape``, ``dy``'s dtype")
def slice_grad(
    dy: Array,
    input_shape: Ints,
    *positional: Any,
    window_offsets: Ints | None = None,
    window_sizes: Ints | None = None,
    window_strides: Ints | None = None,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """DirectML SLICE_GRAD: the gradient of `slice1` with respect to its input, in one pass.

    Parameters
    ----------
    dy : array_like
        The gradient of the slice's output (of its shape), of any kind and strides.
    input_shape : sequence of int
        The shape of the slice's input: the shape of the result.
    {by name}
    window_offsets : sequence of int
        As given to `slice1`. Required.
    window_sizes : sequence of int
        As given to `slice1`: the window read, not the shape of ``dy``. Required.
    window_strides : sequence of int, optional
        As given to `slice1`: signed, non-zero, all 1 by default.
    {out}
    {shared parameters}

    Returns
    -------
    array
        ``dy``'s elements where the forward slice read, 0 elsewhere; ``out`` or a new array of
        ``dy``'s kind.

    {raises}

    {examples}
    >>> dy = np.array([[1, 3], [9, 11]], dtype=np.int32)
    >>> cd.slice_grad(dy, (4, 4), window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[2, 2])
    array([[ 1,  0,  3,  0],
           [ 0,  0,  0,  0],
           [ 9,  0, 11,  0],
           [ 0,  0,  0,  0]], dtype=int32)
    """

    def normalise(inputs):
        window = (window_offsets, window_sizes, window_strides)
        return SliceGrad.of(inputs[0].shape, input_shape, positional, *window, feature_level, directml_types)

    return run_call(SliceGrad, [dy], None if out is None else [out], normalise, stream, chunks)[0]


@_public
def split(
    x: Array,
    *positional: Any,
    split_sizes: Ints | SupportsIndex | None = None,
    parts: SupportsIndex | None = None,
    axis: SupportsIndex = 0,
    out: Sequence[Array] | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> list[Array]:
    """DirectML SPLIT: cut ``x`` along ``axis`` into parts, in one launch on the GPU.

    Parameters
    ----------
    x : array_like
        The array to cut, of any kind and strides.
    *positional
        Refused with a ``TypeError``: ``np.split(x, [5, 5])`` takes indices and
        ``torch.split(t, 3)`` a part size, so ``split_sizes`` and ``parts`` are taken by
        name (``cudadml.numpy.split`` has NumPy's meaning).
    split_sizes : sequence of int, optional
        The size of each part along ``axis``, summing to ``x.shape[axis]`` (a size of 0 gives
        an empty part): DirectML's sizes, not NumPy's split indices. An integer ``n`` is one
        part size, as in ``torch.split(t, n)``: parts of ``n``, the last one smaller where
        ``n`` does not divide ``x.shape[axis]``.
    parts : int, optional
        A number of equal parts, which must divide ``x.shape[axis]``. One of ``split_sizes``
        and ``parts`` is required.
    axis : int, default 0
        The axis to cut; may be negative.
    out : sequence of arrays, optional
        One per part, each of its part's shape and ``x``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    list of arrays
        The parts, in order: ``out``, or views of one new allocation of ``x``'s kind.

    {raises}

    {examples}
    >>> x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)
    >>> [p.shape for p in cd.split(x, split_sizes=[2, 1, 3], axis=2)]
    [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)]
    >>> [p.shape for p in cd.split(x, parts=2, axis=-1)]
    [(1, 1, 6, 1), (1, 1, 6, 1)]
    """
    name = Split.NAME
    outs = None if out is None else as_list(out, "out", name)

    def normalise(inputs):
        operation = Split.of(inputs[0].shape, positional, split_sizes, parts, axis, feature_level, directml_types)
        if outs is not None and len(outs) != len(operation.sizes):
            count = len(operation.sizes)
            given = f"{len(outs)} array{'s' * (len(outs) != 1)}"
            raise BindingError([f"{name}: out has {given}; the call makes {count} part{'s' * (count != 1)}"])
        return operation

    return run_call(Split, [x], outs, normalise, stream, chunks)


@_public
def join(
    xs: Sequence[Array],
    axis: SupportsIndex = 0,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """DirectML JOIN: concatenate arrays along ``axis`` (SPLIT's inverse), in one launch on the GPU.

    Parameters
    ----------
    xs : sequence of array_like
        The arrays to join, all of one kind, dtype and rank; equal shapes except along
        ``axis``. The first decides the kind of the result.
    axis : int, default 0
        The axis to join along; may be negative.
    out : array, optional
        Where to write the result, of the joined shape and the dtype of ``xs``, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of the kind of ``xs``.

    {raises}

    {examples}
    >>> cd.join([np.arange(2), np.arange(3)])
    array([0, 1, 0, 1, 2])
    """
    name = Join.NAME
    xs = as_list(xs, "xs", name)
    if not xs:
        raise ValueError(f"{name}: xs is empty; it needs at least one array to join")

    def normalise(xs):
        return Join.of(xs[0].shape, axis, feature_level, directml_types)

    return run_call(Join, xs, None if out is None else [out], normalise, stream, chunks)[0]


@_public(out="the shape of ``x[key]``, ``x``'s dtype")
def strided_slice(
    x: Array,
    key: Any,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """``x[key]`` copied, for basic indexing, as one SLICE1.

    An empty result is returned without running anything (DirectML tensors cannot be empty).

    Parameters
    ----------
    x : array_like
        The array to index, of any kind and strides.
    key : int, slice, Ellipsis, None or tuple of them
        A basic index, as in ``x[key]``: slices with any step (negative too), integers,
        ``...`` and ``None``.
    {out}
    {shared parameters}

    Returns
    -------
    array
        A copy of ``x[key]``: ``out``, or a new array of ``x``'s kind.

    {raises}
    IndexError
        For an index out of bounds, too many indices or two ellipses, as NumPy raises.

    {examples}
    >>> x = np.arange(12).reshape(3, 4)
    >>> cd.strided_slice(x, np.s_[::-2, 1])
    array([9, 1])
    """

    def normalise(inputs):
        return StridedSlice.of(inputs[0].shape, key, feature_level, directml_types)

    return run_call(StridedSlice, [x], None if out is None else [out], normalise, stream, chunks)[0]


@_public(out="shape ``input_shape``, ``dy``'s dtype")
def strided_slice_grad(
    dy: Array,
    input_shape: Ints,
    key: Any,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array:
    """The gradient of ``strided_slice(x, key)`` with respect to ``x``, in one pass.

    Parameters
    ----------
    dy : array_like
        The gradient of ``x[key]`` (of its shape), of any kind and strides.
    input_shape : sequence of int
        ``x.shape``: the shape of the result.
    key : int, slice, Ellipsis, None or tuple of them
        The basic index given to `strided_slice`.
    {out}
    {shared parameters}

    Returns
    -------
    array
        ``dy``'s elements where ``x[key]`` read, 0 elsewhere; ``out`` or a new array of
        ``dy``'s kind.

    {raises}
    IndexError
        For an index out of bounds, too many indices or two ellipses, as NumPy raises.

    {examples}
    >>> cd.strided_slice_grad(np.array([7, 8]), (5,), np.s_[::-3])
    array([0, 8, 0, 0, 7])
    """

    def normalise(inputs):
        return StridedSliceGrad.of(inputs[0].shape, input_shape, key, feature_level, directml_types)

    return run_call(StridedSliceGrad, [dy], None if out is None else [out], normalise, stream, chunks)[0]


@_public
def slice1_batch(
    x: Array,
    *positional: Any,
    window_offsets: Any = None,
    window_sizes: Any = None,
    window_strides: Any = None,
    per_sample: bool = False,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
    chunks: Any = None,
) -> Array | list[Array]:
    """Many SLICE1 windows in one launch: per-sample crops and flips, regions of interest.

    Window ``n`` is SLICE1 of ``x`` (or, with ``per_sample``, of ``x[n]``) with row ``n`` of
    each window array. Where the windows move around from call to call (random crops), the
    compiled launch stays: the windows travel as data, so a new set costs no compile.

    Parameters
    ----------
    x : array_like
        The array to read, of any kind and strides (as in `slice`).
    {by name}
    window_offsets : (N, d) array_like of int
        Per window and dimension, where the window starts; ``d`` is ``x.ndim``, or
        ``x.ndim - 1`` with ``per_sample``. NumPy, CuPy or PyTorch integers, or nested lists.
        Required.
    window_sizes : (d,) or (N, d) array_like of int
        The windows' lengths (as `slice1`'s, not the results' shape): one row for all, or
        one per window. Every window lies inside ``x`` (``offset + size <= x.shape``) and no
        dimension is empty. Required.
    window_strides : (d,) or (N, d) array_like of int, optional
        The signed, non-zero steps: one row for all, or one per window, so a per-window
        flip is a negative stride there. All 1 by default.
    per_sample : bool, default False
        ``True``: window ``n`` reads ``x[n]``, and there are ``x.shape[0]`` windows.
    out : array, optional
        For windows of one size only: where to write, shape ``(N, *window result)``.
    {shared parameters}

    Returns
    -------
    array or list of arrays
        Windows of one ``window_sizes`` row: one array of shape ``(N, *result)``, where
        ``result[i] = 1 + (window_sizes[i] - 1) // abs(window_strides[i])`` must be the same
        for every window. Per-window sizes: a list of ``N`` arrays, views of one
        allocation (as `split`'s parts are).

    {raises}

    Notes
    -----
    Every window is checked with SLICE1's rules before anything runs; the message names
    the windows that break one (the first three) and counts the rest.

    {examples}
    >>> x = np.arange(16).reshape(4, 4)
    >>> offsets, strides = [[0, 0], [1, 2], [2, 1]], [[1, 1], [1, -1], [-1, 1]]
    >>> cd.slice1_batch(x, window_offsets=offsets, window_sizes=[2, 2], window_strides=strides)
    array([[[ 0,  1],
            [ 4,  5]],
    <BLANKLINE>
           [[ 7,  6],
            [11, 10]],
    <BLANKLINE>
           [[13, 14],
            [ 9, 10]]])
    """
    shared = []

    def normalise(inputs):
        window = (window_offsets, window_sizes, window_strides)
        operation = Slice1Batch.of(inputs[0].shape, positional, *window, per_sample, feature_level, directml_types)
        shared.append(operation.shared)
        return operation

    results = run_call(Slice1Batch, [x], None if out is None else [out], normalise, stream, chunks)
    return results[0] if shared[0] else results


@_public
def slice1_batch_grad(
    dy: Array | Sequence[Array],
    input_shape: Ints,
    *positional: Any,
    window_offsets: Any = None,
    window_sizes: Any = None,
    window_strides: Any = None,
    per_sample: bool = False,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """The gradient of `slice1_batch`: each window's gradient placed where it read, summed where windows overlap.

    Parameters
    ----------
    dy : array, or sequence of arrays
        The gradient of `slice1_batch`'s result: the one array, or the list of per-window
        arrays for per-window sizes.
    input_shape : sequence of int
        The shape of ``x``, which the result has.
    {by name}
    window_offsets : (N, d) array_like of int
        As given to `slice1_batch`. Required.
    window_sizes : (d,) or (N, d) array_like of int
        As given to `slice1_batch`. Required.
    window_strides : (d,) or (N, d) array_like of int, optional
        As given to `slice1_batch`.
    per_sample : bool, default False
        As given to `slice1_batch`.
    out : array, optional
        Where to write: shape ``input_shape``, ``dy``'s dtype, any strides.
    feature_level : FeatureLevel, int or str, optional
        The DirectML feature level to validate against (default: the newest).
    stream : cupy.cuda.Stream or torch.cuda.Stream, optional
        For device arrays, the stream to run on (as in `slice1_batch`).
    directml_types : bool, default True
        ``False`` moves the elements of any 1, 2, 4 or 8-byte dtype as raw bits.

    Returns
    -------
    array
        ``out``, or a new array of ``dy``'s kind: zeros where no window read. With
        ``per_sample`` (windows never overlap) each element is moved as it is, in one pass;
        otherwise the windows that read an element add their gradients in window order, the
        same bits on every run (floats add in their own precision, halves in float32,
        rounded once; integers wrap).

    Raises
    ------
    DescriptorError
        If a window breaks a SLICE1 rule (the message names it, in the call's words). Nothing
        runs.
    BindingError
        If ``out`` has another shape or overlaps ``dy``. Nothing runs.
    ValueError
        If ``dy``'s shapes are not the windows' results, or ``dy`` is an empty list.
    TypeError
        For arguments given by position where they are taken by name, an argument of a wrong
        type, a dtype overlapping windows cannot add (bool), or Dask arrays (not supported).

    {examples}
    >>> dy = np.ones((2, 2, 2), np.float32)
    >>> cd.slice1_batch_grad(dy, (3, 3), window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2])
    array([[1., 1., 0.],
           [1., 2., 1.],
           [0., 1., 1.]], dtype=float32)
    """
    name, one = Slice1BatchGrad.NAME, hasattr(dy, "shape")
    inputs = [dy] if one else as_list(dy, "dy", name)
    if not inputs:  # as np.stack([]): no array to take a kind and dtype from
        raise ValueError(f"{name}: dy is an empty list; the gradient of no windows has no dtype (pass zeros)")

    def normalise(inputs):
        window = (window_offsets, window_sizes, window_strides)
        operation = Slice1BatchGrad.of(input_shape, positional, *window, per_sample, feature_level, directml_types)
        if operation.shared != one:
            raise TypeError(
                f"{name}: windows of one size take dy as one array; per-window sizes take a list of one per window"
            )
        return operation

    given = 1 if one else len(inputs)
    return run_call(Slice1BatchGrad, inputs, None if out is None else [out], normalise, stream, None, given)[0]

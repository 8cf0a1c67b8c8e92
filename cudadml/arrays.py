"""The array layer: drop-in functions on NumPy and CuPy arrays.

Each function builds the DirectML descriptor of the call (so every DirectML rule applies,
with the same messages), lowers it with the strides of the actual arrays (negative and zero
strides included), and runs the plan: NumPy arrays on the host reference backend, CuPy
arrays (or anything exposing ``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA
device) through the CUDA kernels. Everything a call derives from its arguments' shapes,
strides and parameters (validation, plan, kernel launches) is cached under those, so a
repeated call only allocates its result and launches.
"""

from __future__ import annotations

import operator
from builtins import slice as _pyslice  # `slice` is ours below
from collections import OrderedDict

import numpy as np

from . import _memory
from .backends import execute, kernels
from .enums import TensorDataType
from .errors import int_tuple
from .operators import (
    JoinOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
)
from .tensor import BufferTensorDesc, packed_strides

__all__ = ["join", "slice", "slice1", "slice_grad", "split", "strided_slice", "strided_slice_grad"]

_CACHE: OrderedDict = OrderedDict()
_CACHE_SIZE = 1024


class _Prepared:
    """A call's cached work: its plan (``None`` when there is nothing to move), the CUDA
    launches for CuPy calls, its result shapes, and which results the plan writes."""

    __slots__ = ("bound", "launches", "plan", "shapes")

    def __init__(self, kind, plan, shapes, bound):
        self.plan, self.shapes, self.bound = plan, shapes, bound
        self.launches = kernels.prepare(plan) if kind == "cupy" and plan is not None else None


def _prepared(kind, key, build) -> _Prepared:
    """The cached work for ``key``; on a miss ``build()`` validates and returns
    ``(plan, shapes, bound)``. Nothing is cached for a call that fails validation."""
    entry = _CACHE.get(key)
    if entry is None:
        entry = _Prepared(kind, *build())
        _CACHE[key] = entry
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return entry


def _execute(kind, entry, inputs, outputs, stream):
    execute(
        kind,
        entry.plan,
        entry.launches,
        [(a, _memory.address_of(a)) for a in inputs],
        [(a, _memory.address_of(a)) for a in outputs],
        stream,
    )


def _as_array(x):
    """``(kind, array)``: CuPy for device memory (zero-copy), NumPy for everything else."""
    if isinstance(x, np.ndarray):
        return "numpy", x
    if _memory.is_cupy_array(x):
        return "cupy", x
    if hasattr(x, "__cuda_array_interface__"):
        import cupy

        return "cupy", cupy.asarray(x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2:
        import cupy  # 2 is kDLCUDA

        return "cupy", cupy.from_dlpack(x)
    return "numpy", np.asarray(x)


def _input(x):
    """``(kind, array)`` for an input; strides that are not whole elements (NumPy only) get a copy."""
    kind, x = _as_array(x)
    if any(s % x.itemsize for s in x.strides):
        x = np.ascontiguousarray(x)
    return kind, x


def _data_type(dtype, directml_types: bool) -> TensorDataType:
    dtype = np.dtype(dtype)
    if directml_types:
        try:
            return TensorDataType.from_dtype(dtype)
        except ValueError as e:
            raise TypeError(f"{e}; pass directml_types=False to move its elements as raw bits") from None
    if dtype.itemsize not in (1, 2, 4, 8) or dtype.hasobject:
        raise TypeError(f"dtype {dtype} is not a plain 1, 2, 4 or 8 byte element")
    return TensorDataType.unsigned_of_width(dtype.itemsize)


def _element_strides(a) -> tuple[int, ...]:
    return tuple(s // a.itemsize for s in a.strides)


def _shape_of(a, name):
    if a.ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to slice")
    return a.shape


def _given_out(kind, out, name):
    """``out`` as an array of ``kind`` (``None`` stays ``None``)."""
    if out is None:
        return None
    out_kind, out = _as_array(out)
    if out_kind != kind:
        raise TypeError(f"{name}: out is in {out_kind} memory but the input is in {kind} memory")
    return out


def _out_strides(out):
    """Element strides of a given ``out`` for the cache key; ``None`` for a fresh (packed) result."""
    if out is None:
        return None
    if any(s % out.itemsize for s in out.strides):
        raise ValueError("out has a stride that is not a whole number of elements")
    return _element_strides(out)


def _result(kind, out, shape, dtype, name, inputs):
    """A fresh result, or ``out`` checked to be a writable, non-self-overlapping array of
    ``shape`` and ``dtype`` that shares no memory with ``inputs``."""
    if out is None:
        if kind == "numpy":
            return np.empty(shape, dtype)
        import cupy

        return cupy.empty(shape, dtype)
    if out.shape != tuple(shape):
        raise ValueError(f"{name}: out has shape {out.shape}; the result has shape {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out.dtype}; the result has dtype {dtype}")
    for axis, (n, s) in enumerate(zip(out.shape, out.strides)):
        if s == 0 and n > 1:
            raise ValueError(f"{name}: out has stride 0 on axis {axis} of size {n}, so it overlaps itself")
    if kind == "numpy" and not out.flags.writeable:
        raise ValueError(f"{name}: out is read-only")
    extent = _memory.byte_extent(out)
    for k, a in enumerate(inputs):
        if _memory.ranges_overlap(extent, _memory.byte_extent(a)):
            raise ValueError(f"{name}: out overlaps input {k} in memory")
    return out


def _tensor(data_type, shape):
    return BufferTensorDesc(data_type, shape)


def slice(x, offsets, sizes, strides=None, *, out=None, feature_level=None, stream=None, directml_types=True):
    """DirectML SLICE on an array: ``out[c] = x[offsets + strides * c]``.

    Parameters
    ----------
    x : array_like
        NumPy or CuPy array (or a CUDA array exposing ``__cuda_array_interface__``/``__dlpack__``),
        any strides.
    offsets, sizes : sequence of int
        Per dimension: the first element and how many to take.
    strides : sequence of int, optional
        Per dimension, unsigned (0 repeats one element); all 1 by default.
    out : array, optional
        Where to write the result: shape ``sizes``, ``x``'s dtype, any strides.
    feature_level : FeatureLevel or str, optional
        DirectML level to validate against (default: the newest).
    stream : cupy.cuda.Stream, optional
        For CuPy arrays: the stream to run on (default: the current one).
    directml_types : bool
        ``False`` moves any 1/2/4/8-byte dtype (bool, complex64, ...) as raw bits.

    Returns
    -------
    array
        ``out``, or a new array of ``x``'s kind.

    Raises
    ------
    DescriptorError
        If a DirectML rule is broken (an out-of-bounds read, say); nothing runs.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cd.slice(x, [0, 0, 1, 0], [1, 1, 2, 2], [1, 1, 2, 3])
    array([[[[ 5.,  8.],
             [13., 16.]]]], dtype=float32)
    """
    kind, x = _input(x)
    out = _given_out(kind, out, "Slice")
    shape = _shape_of(x, "Slice")
    offsets = int_tuple(offsets, "Offsets", "Slice")
    sizes = int_tuple(sizes, "Sizes", "Slice")
    strides = (1,) * len(shape) if strides is None else int_tuple(strides, "Strides", "Slice")
    key = (
        "Slice",
        kind,
        offsets,
        sizes,
        strides,
        shape,
        x.strides,
        x.dtype,
        _out_strides(out),
        feature_level,
        directml_types,
    )

    def build():
        data_type = _data_type(x.dtype, directml_types)
        desc = SliceOperatorDesc(
            _tensor(data_type, shape), _tensor(data_type, sizes), offsets, sizes, strides, feature_level=feature_level
        )
        return _plan_one(desc, x, out, sizes), (sizes,), (0,)

    return _run_one("Slice", kind, key, build, x, out, stream)


def _plan_one(desc, x, out, out_shape, in_strides=None, out_strides=None):
    """Lower a one-input, one-output descriptor with the strides of the arrays it will bind."""
    if out_strides is None:
        out_strides = packed_strides(out_shape) if out is None else _element_strides(out)
    return desc.to_plan([in_strides or _element_strides(x)], [out_strides])


def _run_one(name, kind, key, build, x, out, stream):
    entry = _prepared(kind, key, build)
    out = _result(kind, out, entry.shapes[0], x.dtype, name, [x])
    if entry.plan is not None:
        _execute(kind, entry, [x], [out], stream)
    return out


def _window_args(name, ndim, offsets, sizes, strides):
    """SLICE1's window arrays as int tuples (strides all 1 when omitted)."""
    return (
        int_tuple(offsets, "InputWindowOffsets", name),
        int_tuple(sizes, "InputWindowSizes", name),
        int_tuple((1,) * ndim if strides is None else strides, "InputWindowStrides", name),
    )


def slice1(
    x,
    window_offsets,
    window_sizes,
    window_strides=None,
    *,
    output_sizes=None,
    out=None,
    feature_level=None,
    stream=None,
    directml_types=True,
):
    """DirectML SLICE1 on an array: a window per dimension, read backwards where its stride is negative.

    Parameters
    ----------
    x : array_like
    window_offsets, window_sizes : sequence of int
        The window: ``window_offsets[i] + window_sizes[i] <= x.shape[i]``, no dimension empty.
    window_strides : sequence of int, optional
        Signed, non-zero; all 1 by default.
    output_sizes : sequence of int, optional
        At most ``1 + (window_sizes - 1) // |window_strides|`` (the default) per dimension.
    out, feature_level, stream, directml_types
        As in `slice`.

    Returns
    -------
    array

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cd.slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])[0, 0]
    array([[14., 16.],
           [ 6.,  8.]], dtype=float32)
    """
    kind, x = _input(x)
    out = _given_out(kind, out, "Slice1")
    shape = _shape_of(x, "Slice1")
    offsets, sizes, strides = _window_args("Slice1", len(shape), window_offsets, window_sizes, window_strides)
    if output_sizes is None:
        output_sizes = tuple(1 + (n - 1) // abs(st) if st and n > 0 else n for n, st in zip(sizes, strides))
    output_sizes = int_tuple(output_sizes, "output_sizes", "Slice1")
    key = (
        "Slice1",
        kind,
        offsets,
        sizes,
        strides,
        output_sizes,
        shape,
        x.strides,
        x.dtype,
        _out_strides(out),
        feature_level,
        directml_types,
    )

    def build():
        data_type = _data_type(x.dtype, directml_types)
        desc = Slice1OperatorDesc(
            _tensor(data_type, shape),
            _tensor(data_type, output_sizes),
            offsets,
            sizes,
            strides,
            feature_level=feature_level,
        )
        return _plan_one(desc, x, out, output_sizes), (output_sizes,), (0,)

    return _run_one("Slice1", kind, key, build, x, out, stream)


def slice_grad(
    dy,
    input_shape,
    window_offsets,
    window_sizes,
    window_strides=None,
    *,
    out=None,
    feature_level=None,
    stream=None,
    directml_types=True,
):
    """DirectML SLICE_GRAD: the gradient of `slice1` with respect to its input, in one pass.

    Parameters
    ----------
    dy : array_like
        Gradient of the slice's output (its shape).
    input_shape : sequence of int
        Shape of the slice's input: the shape of the result.
    window_offsets, window_sizes, window_strides
        As given to `slice1` (strides signed, non-zero; all 1 by default).
    out, feature_level, stream, directml_types
        As in `slice`.

    Returns
    -------
    array
        ``dy`` where the forward slice read, 0 elsewhere.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> dy = np.array([[1, 3], [9, 11]], dtype=np.int32)
    >>> cd.slice_grad(dy, (4, 4), [0, 0], [4, 4], [2, 2])
    array([[ 1,  0,  3,  0],
           [ 0,  0,  0,  0],
           [ 9,  0, 11,  0],
           [ 0,  0,  0,  0]], dtype=int32)
    """
    kind, dy = _input(dy)
    out = _given_out(kind, out, "SliceGrad")
    shape = _shape_of(dy, "SliceGrad")
    input_shape = int_tuple(input_shape, "input_shape", "SliceGrad")
    offsets, sizes, strides = _window_args("SliceGrad", len(shape), window_offsets, window_sizes, window_strides)
    key = (
        "SliceGrad",
        kind,
        offsets,
        sizes,
        strides,
        input_shape,
        shape,
        dy.strides,
        dy.dtype,
        _out_strides(out),
        feature_level,
        directml_types,
    )

    def build():
        data_type = _data_type(dy.dtype, directml_types)
        desc = SliceGradOperatorDesc(
            _tensor(data_type, shape),
            _tensor(data_type, input_shape),
            offsets,
            sizes,
            strides,
            feature_level=feature_level,
        )
        return _plan_one(desc, dy, out, input_shape), (input_shape,), (0,)

    return _run_one("SliceGrad", kind, key, build, dy, out, stream)


def _normalize_axis(axis, ndim, name):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, not {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _split_sizes(split_sizes, n, axis):
    if isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, bool):
        parts = int(split_sizes)
        if parts < 1 or n % parts:
            raise ValueError(f"Split: axis {axis} of size {n} does not divide into {parts} equal parts; pass the sizes")
        return (n // parts,) * parts
    sizes = int_tuple(split_sizes, "split_sizes", "Split")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Split: split_sizes {sizes} has a negative size")
    return sizes


def split(x, split_sizes, axis=0, *, out=None, feature_level=None, stream=None, directml_types=True):
    """DirectML SPLIT: cut ``x`` along ``axis`` into parts, in one launch on the GPU.

    Parameters
    ----------
    x : array_like
    split_sizes : int or sequence of int
        A number of equal parts (which must divide ``x.shape[axis]``), or the size of each
        part along ``axis`` (summing to ``x.shape[axis]``; a size of 0 gives an empty part).
        Sizes, not NumPy's split indices.
    axis : int
        May be negative.
    out : sequence of arrays, optional
        One per part, each of its part's shape and ``x``'s dtype, any strides.
    feature_level, stream, directml_types
        As in `slice`.

    Returns
    -------
    list of arrays

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)
    >>> [p.shape for p in cd.split(x, [2, 1, 3], axis=2)]
    [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)]
    """
    kind, x = _input(x)
    shape = _shape_of(x, "Split")
    axis = _normalize_axis(axis, len(shape), "Split")
    sizes = _split_sizes(split_sizes, shape[axis], axis)
    if out is not None:
        if len(out) != len(sizes):
            raise ValueError(f"Split: {len(out)} out arrays for {len(sizes)} parts")
        out = [_given_out(kind, o, f"Split out[{k}]") for k, o in enumerate(out)]
    key = (
        "Split",
        kind,
        sizes,
        axis,
        shape,
        x.strides,
        x.dtype,
        None if out is None else tuple(_out_strides(o) for o in out),
        feature_level,
        directml_types,
    )

    def build():
        shapes = tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in sizes)
        bound = tuple(k for k, s in enumerate(sizes) if s)  # DirectML tensors cannot be empty
        data_type = _data_type(x.dtype, directml_types)
        desc = SplitOperatorDesc(
            _tensor(data_type, shape), [_tensor(data_type, shapes[k]) for k in bound], axis, feature_level=feature_level
        )
        out_strides = [packed_strides(shapes[k]) if out is None else _element_strides(out[k]) for k in bound]
        return desc.to_plan([_element_strides(x)], out_strides), shapes, bound

    entry = _prepared(kind, key, build)
    if out is None:
        outs = [_result(kind, None, s, x.dtype, "Split", ()) for s in entry.shapes]
    else:
        outs = [_result(kind, o, s, x.dtype, f"Split out[{k}]", [x]) for k, (o, s) in enumerate(zip(out, entry.shapes))]
        _check_disjoint(outs, "Split")
    _execute(kind, entry, [x], [outs[k] for k in entry.bound], stream)
    return outs


def _check_disjoint(arrays, name):
    extents = [_memory.byte_extent(a) for a in arrays]
    for k, e in enumerate(extents):
        for j in range(k):
            if _memory.ranges_overlap(e, extents[j]):
                raise ValueError(f"{name}: out[{k}] overlaps out[{j}] in memory")


def join(xs, axis=0, *, out=None, feature_level=None, stream=None, directml_types=True):
    """DirectML JOIN: concatenate arrays along ``axis`` (SPLIT's inverse), in one launch on the GPU.

    Parameters
    ----------
    xs : sequence of array_like
        Same dtype and rank; equal shapes except along ``axis``.
    axis : int
    out : array, optional
    feature_level, stream, directml_types
        As in `slice`.

    Returns
    -------
    array

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.join([np.arange(2), np.arange(3)])
    array([0, 1, 0, 1, 2])
    """
    if not hasattr(xs, "__len__") or not len(xs):
        raise ValueError("Join: needs at least one array")
    arrays = [_input(a) for a in xs]
    kind = arrays[0][0]
    if any(k != kind for k, _ in arrays):
        raise TypeError("Join: arrays mix host (NumPy) and device (CuPy) memory")
    xs = [a for _, a in arrays]
    dtype = xs[0].dtype
    for k, a in enumerate(xs):
        if a.dtype != dtype:
            raise TypeError(f"Join: xs[{k}] has dtype {a.dtype}, xs[0] has {dtype}")
    out = _given_out(kind, out, "Join")
    layouts = tuple((_shape_of(a, "Join"), a.strides) for a in xs)
    key = ("Join", kind, axis, layouts, dtype, _out_strides(out), feature_level, directml_types)

    def build():
        shapes = [shape for shape, _ in layouts]
        ax = _normalize_axis(axis, len(shapes[0]), "Join")
        if any(len(s) != len(shapes[0]) for s in shapes):
            raise ValueError(f"Join: arrays of different ranks {[len(s) for s in shapes]}")
        total = sum(s[ax] for s in shapes)
        out_shape = (*shapes[0][:ax], total, *shapes[0][ax + 1 :])
        bound = tuple(k for k, s in enumerate(shapes) if s[ax])  # DirectML tensors cannot be empty
        data_type = _data_type(dtype, directml_types)
        desc = JoinOperatorDesc(
            [_tensor(data_type, shapes[k]) for k in bound],
            _tensor(data_type, out_shape),
            ax,
            feature_level=feature_level,
        )
        out_strides = packed_strides(out_shape) if out is None else _element_strides(out)
        return desc.to_plan([_element_strides(xs[k]) for k in bound], [out_strides]), (out_shape,), bound

    entry = _prepared(kind, key, build)
    out = _result(kind, out, entry.shapes[0], dtype, "Join", xs)
    _execute(kind, entry, [xs[k] for k in entry.bound], [out], stream)
    return out


# ---- basic indexing -----------------------------------------------------------------------------


def _key_token(key):
    """``key`` as a hashable cache key (slices are unhashable before Python 3.12); bools are
    tagged so they never share an entry with the integers they equal."""
    key = key if isinstance(key, tuple) else (key,)
    return tuple(
        (k.start, k.stop, k.step, "slice")
        if isinstance(k, _pyslice)
        else (k, "bool")
        if isinstance(k, (bool, np.bool_))
        else k
        for k in key
    )


def _parse_key(key, shape):
    """Basic indexing, as NumPy reads it, turned into one SLICE1 window per axis.

    Returns ``(windows, result_shape, axis_map)``: ``windows[d] = (start, step, count)`` for
    input axis ``d``; ``axis_map[d]`` is the result axis that ``d`` becomes, or ``None`` where
    an integer index drops it.
    """
    key = key if isinstance(key, tuple) else (key,)
    ndim = len(shape)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in key)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    if any(k is Ellipsis for k in key):
        at = next(i for i, k in enumerate(key) if k is Ellipsis)
        key = key[:at] + (_pyslice(None),) * (ndim - used) + key[at + 1 :]
    else:
        key = key + (_pyslice(None),) * (ndim - used)
    windows, result_shape, axis_map = [], [], []
    d = 0
    for k in key:
        if k is None:
            result_shape.append(1)
            continue
        n = shape[d]
        if isinstance(k, _pyslice):
            start, stop, step = k.indices(n)
            count = len(range(start, stop, step))
            windows.append((start, step, count))
            axis_map.append(len(result_shape))
            result_shape.append(count)
        elif isinstance(k, (bool, np.bool_)) or not hasattr(k, "__index__"):
            raise TypeError(f"only basic indices (int, slice, ..., None) are supported, not {type(k).__name__}")
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            windows.append((i % n, 1, 1))
            axis_map.append(None)
        d += 1
    return windows, tuple(result_shape), axis_map


def _window_params(windows):
    """SLICE1 window offsets, sizes and strides that read ``(start, step, count)`` per axis."""
    offsets, sizes, strides = [], [], []
    for start, step, count in windows:
        if count == 1:
            step = 1  # a lone element: any huge Python step is irrelevant
        span = (count - 1) * abs(step) + 1
        offsets.append(start if step > 0 else start + (count - 1) * step)
        sizes.append(span)
        strides.append(step)
    return tuple(offsets), tuple(sizes), tuple(strides)


def _mapped_strides(strides, axis_map):
    """Element strides of the indexed result for each input axis (0 where an index dropped it)."""
    return tuple(0 if r is None else strides[r] for r in axis_map)


def _indexing_key(name, key, shape):
    try:
        token = _key_token(key)
        hash(token)
    except TypeError:  # an unhashable (so non-basic) index: let the parser say what is wrong
        _parse_key(key, shape)
        raise
    return token


def strided_slice(x, key, *, out=None, feature_level=None, stream=None, directml_types=True):
    """``x[key]`` copied, for basic indexing: slices with any step (negative too), integers,
    ``...`` and ``None``. Runs as one SLICE1.

    An empty result is returned without running anything (DirectML tensors cannot be empty).

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(12).reshape(3, 4)
    >>> cd.strided_slice(x, np.s_[::-2, 1])
    array([9, 1])
    """
    kind, x = _input(x)
    out = _given_out(kind, out, "strided_slice")
    shape = _shape_of(x, "strided_slice")
    cache_key = (
        "strided_slice",
        kind,
        _indexing_key("strided_slice", key, shape),
        shape,
        x.strides,
        x.dtype,
        _out_strides(out),
        feature_level,
        directml_types,
    )

    def build():
        windows, result_shape, axis_map = _parse_key(key, shape)
        if 0 in result_shape:
            return None, (result_shape,), ()
        counts = tuple(c for _, _, c in windows)
        params = _window_params(windows)
        data_type = _data_type(x.dtype, directml_types)
        desc = Slice1OperatorDesc(
            _tensor(data_type, shape), _tensor(data_type, counts), *params, feature_level=feature_level
        )
        result_strides = packed_strides(result_shape) if out is None else _element_strides(out)
        return (
            _plan_one(desc, x, out, counts, out_strides=_mapped_strides(result_strides, axis_map)),
            (result_shape,),
            (0,),
        )

    return _run_one("strided_slice", kind, cache_key, build, x, out, stream)


def strided_slice_grad(dy, input_shape, key, *, out=None, feature_level=None, stream=None, directml_types=True):
    """The gradient of ``strided_slice(x, key)`` with respect to ``x`` (``x.shape == input_shape``):
    ``dy`` where ``x[key]`` read, 0 elsewhere, in one pass.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.strided_slice_grad(np.array([7, 8]), (5,), np.s_[::-3])
    array([0, 8, 0, 0, 7])
    """
    kind, dy = _input(dy)
    out = _given_out(kind, out, "strided_slice_grad")
    input_shape = int_tuple(input_shape, "input_shape", "strided_slice_grad")
    cache_key = (
        "strided_slice_grad",
        kind,
        _indexing_key("strided_slice_grad", key, input_shape),
        input_shape,
        dy.shape,
        dy.strides,
        dy.dtype,
        _out_strides(out),
        feature_level,
        directml_types,
    )

    def build():
        windows, result_shape, axis_map = _parse_key(key, input_shape)
        if dy.shape != result_shape:
            raise ValueError(f"strided_slice_grad: dy has shape {dy.shape}; x[key] has shape {result_shape}")
        if dy.size == 0:
            return None, (input_shape,), ()
        counts = tuple(c for _, _, c in windows)
        data_type = _data_type(dy.dtype, directml_types)
        desc = SliceGradOperatorDesc(
            _tensor(data_type, counts),
            _tensor(data_type, input_shape),
            *_window_params(windows),
            feature_level=feature_level,
        )
        return (
            _plan_one(desc, dy, out, input_shape, in_strides=_mapped_strides(_element_strides(dy), axis_map)),
            (input_shape,),
            (0,),
        )

    entry = _prepared(kind, cache_key, build)
    out = _result(kind, out, entry.shapes[0], dy.dtype, "strided_slice_grad", [dy])
    if entry.plan is None:
        out[...] = 0  # nothing was read: the whole gradient is zero
    else:
        _execute(kind, entry, [dy], [out], stream)
    return out

"""The array layer: drop-in functions on NumPy and CuPy arrays.

Each function builds the DirectML descriptor of the call (so every DirectML rule applies,
with the same messages), lowers it with the strides of the actual arrays (negative and zero
strides included), and runs the plan: NumPy arrays on the host reference backend, CuPy
arrays (or anything exposing ``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA
device) through the CUDA kernels. Validated plans are cached by everything they depend on,
so a repeated call skips validation.
"""

from __future__ import annotations

import operator
from builtins import slice as _pyslice  # `slice` is ours below
from collections import OrderedDict

import numpy as np

from . import _memory
from .compiled import run_plan
from .errors import int_tuple
from .operators import (
    JoinOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
)
from .tensor import BufferTensorDesc
from .types import FeatureLevel, TensorDataType

__all__ = ["join", "slice", "slice1", "slice_grad", "split", "strided_slice", "strided_slice_grad"]

_PLAN_CACHE: OrderedDict = OrderedDict()
_PLAN_CACHE_SIZE = 1024


def _cached_plan(key, build):
    """The plan for ``key``, built (and so validated) by ``build()`` on first use."""
    plan = _PLAN_CACHE.get(key)
    if plan is None:
        plan = build()
        _PLAN_CACHE[key] = plan
        if len(_PLAN_CACHE) > _PLAN_CACHE_SIZE:
            _PLAN_CACHE.popitem(last=False)
    return plan


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


def _same_kind(arrays, name):
    kinds = [_as_array(a) for a in arrays]
    if len({k for k, _ in kinds}) > 1:
        raise TypeError(f"{name}: arrays mix host (NumPy) and device (CuPy) memory")
    return kinds[0][0], [a for _, a in kinds]


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


def _contiguous_elements(kind, a):
    """``a`` itself, or a copy where a stride is not a whole number of elements (NumPy only)."""
    if any(s % a.itemsize for s in a.strides):
        return np.ascontiguousarray(a)
    return a


def _shape_of(a, name):
    if a.ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to slice")
    return a.shape


def _prepare_out(kind, out, shape, dtype, name, inputs):
    """A fresh output, or ``out`` checked to be a writable, non-self-overlapping array of
    ``shape`` and ``dtype`` that shares no memory with ``inputs``."""
    if out is None:
        if kind == "numpy":
            return np.empty(shape, dtype)
        import cupy

        return cupy.empty(shape, dtype)
    out_kind, out = _as_array(out)
    if out_kind != kind:
        raise TypeError(f"{name}: out is in {out_kind} memory but the input is in {kind} memory")
    if out.shape != tuple(shape):
        raise ValueError(f"{name}: out has shape {out.shape}; the result has shape {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out.dtype}; the result has dtype {dtype}")
    if any(s % out.itemsize for s in out.strides):
        raise ValueError(f"{name}: out has a stride that is not a whole number of elements")
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


def _level_key(feature_level):
    return FeatureLevel.coerce(feature_level)


def _launch(kind, plan, inputs, outputs, stream):
    run_plan(
        kind, plan,
        [(a, _memory.address_of(a)) for a in inputs],
        [(a, _memory.address_of(a)) for a in outputs],
        stream=stream,
    )


def _slice_like(name, build_desc, x, out_shape, params, out, feature_level, stream, directml_types):
    """Shared body of ``slice`` and ``slice1``: one input, one output, one descriptor."""
    kind, x = _as_array(x)
    x = _contiguous_elements(kind, x)
    shape = _shape_of(x, name)
    data_type = _data_type(x.dtype, directml_types)
    level = _level_key(feature_level)
    out_shape = int_tuple(out_shape, "output sizes", name)
    out = _prepare_out(kind, out, out_shape, x.dtype, name, [x])
    key = (name, params, shape, _element_strides(x), data_type, out_shape, _element_strides(out), level)
    plan = _cached_plan(key, lambda: build_desc(
        BufferTensorDesc(data_type, shape), BufferTensorDesc(data_type, out_shape), level,
    ).to_plan([_element_strides(x)], [_element_strides(out)]))
    _launch(kind, plan, [x], [out], stream)
    return out


def slice(x, offsets, sizes, strides=None, *, out=None, feature_level=None, stream=None, directml_types=True):  # noqa: A001
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
    ndim = np.ndim(x)
    strides = (1,) * ndim if strides is None else strides
    params = (int_tuple(offsets, "Offsets", "Slice"), int_tuple(sizes, "Sizes", "Slice"),
              int_tuple(strides, "Strides", "Slice"))
    return _slice_like(
        "Slice", lambda i, o, level: SliceOperatorDesc(i, o, *params, feature_level=level),
        x, params[1], params, out, feature_level, stream, directml_types,
    )


def slice1(x, window_offsets, window_sizes, window_strides=None, *, output_sizes=None, out=None,
           feature_level=None, stream=None, directml_types=True):
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
    ndim = np.ndim(x)
    offsets = int_tuple(window_offsets, "InputWindowOffsets", "Slice1")
    sizes = int_tuple(window_sizes, "InputWindowSizes", "Slice1")
    strides = int_tuple((1,) * ndim if window_strides is None else window_strides, "InputWindowStrides", "Slice1")
    if output_sizes is None:
        output_sizes = tuple(1 + (s - 1) // abs(st) if st and s > 0 else s for s, st in zip(sizes, strides))
    params = (offsets, sizes, strides)
    return _slice_like(
        "Slice1", lambda i, o, level: Slice1OperatorDesc(i, o, *params, feature_level=level),
        x, output_sizes, params, out, feature_level, stream, directml_types,
    )


def _slice_grad(name, dy, input_shape, dy_sizes, dy_strides, params, out, feature_level, stream,
                directml_types, kind):
    """Shared body of ``slice_grad`` and ``strided_slice_grad``. ``dy`` is read as a tensor of
    ``dy_sizes`` with element strides ``dy_strides`` (the two differ from ``dy.shape`` when
    indexing dropped or added axes)."""
    data_type = _data_type(dy.dtype, directml_types)
    level = _level_key(feature_level)
    input_shape = int_tuple(input_shape, "input_shape", name)
    out = _prepare_out(kind, out, input_shape, dy.dtype, name, [dy])
    key = (name, params, dy_sizes, dy_strides, data_type, input_shape, _element_strides(out), level)
    plan = _cached_plan(key, lambda: SliceGradOperatorDesc(
        BufferTensorDesc(data_type, dy_sizes), BufferTensorDesc(data_type, input_shape), *params,
        feature_level=level,
    ).to_plan([dy_strides], [_element_strides(out)]))
    _launch(kind, plan, [dy], [out], stream)
    return out


def slice_grad(dy, input_shape, window_offsets, window_sizes, window_strides=None, *, out=None,
               feature_level=None, stream=None, directml_types=True):
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
    kind, dy = _as_array(dy)
    dy = _contiguous_elements(kind, dy)
    shape = _shape_of(dy, "SliceGrad")
    offsets = int_tuple(window_offsets, "InputWindowOffsets", "SliceGrad")
    sizes = int_tuple(window_sizes, "InputWindowSizes", "SliceGrad")
    strides = int_tuple((1,) * len(shape) if window_strides is None else window_strides,
                        "InputWindowStrides", "SliceGrad")
    return _slice_grad("SliceGrad", dy, input_shape, shape, _element_strides(dy), (offsets, sizes, strides),
                       out, feature_level, stream, directml_types, kind)


def _normalize_axis(axis, ndim, name):
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{name}: axis must be an integer, not {type(axis).__name__}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


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
    kind, x = _as_array(x)
    x = _contiguous_elements(kind, x)
    shape = _shape_of(x, "Split")
    axis = _normalize_axis(axis, len(shape), "Split")
    n = shape[axis]
    if isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, bool):
        parts = int(split_sizes)
        if parts < 1 or n % parts:
            raise ValueError(f"Split: axis {axis} of size {n} does not divide into {parts} equal parts; pass the sizes")
        sizes = (n // parts,) * parts
    else:
        sizes = int_tuple(split_sizes, "split_sizes", "Split")
        if any(s < 0 for s in sizes):
            raise ValueError(f"Split: split_sizes {sizes} has a negative size")
    shapes = [shape[:axis] + (s,) + shape[axis + 1:] for s in sizes]
    if out is None:
        out = [None] * len(shapes)
    elif len(out) != len(shapes):
        raise ValueError(f"Split: {len(out)} out arrays for {len(shapes)} parts")
    outs = [_prepare_out(kind, o, s, x.dtype, f"Split out[{k}]", [x]) for k, (o, s) in enumerate(zip(out, shapes))]
    _check_disjoint(outs, "Split")
    filled = [k for k, s in enumerate(sizes) if s]  # DirectML tensors cannot be empty
    data_type = _data_type(x.dtype, directml_types)
    level = _level_key(feature_level)
    key = ("Split", axis, tuple(sizes), shape, _element_strides(x), data_type,
           tuple(_element_strides(outs[k]) for k in filled), level)
    plan = _cached_plan(key, lambda: SplitOperatorDesc(
        BufferTensorDesc(data_type, shape), [BufferTensorDesc(data_type, shapes[k]) for k in filled], axis,
        feature_level=level,
    ).to_plan([_element_strides(x)], [_element_strides(outs[k]) for k in filled]))
    _launch(kind, plan, [x], [outs[k] for k in filled], stream)
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
    kind, xs = _same_kind(xs, "Join")
    xs = [_contiguous_elements(kind, a) for a in xs]
    shapes = [_shape_of(a, "Join") for a in xs]
    for k, a in enumerate(xs[1:], 1):
        if a.dtype != xs[0].dtype:
            raise TypeError(f"Join: xs[{k}] has dtype {a.dtype}, xs[0] has {xs[0].dtype}")
    axis = _normalize_axis(axis, len(shapes[0]), "Join")
    if any(len(s) != len(shapes[0]) for s in shapes):
        raise ValueError(f"Join: arrays of different ranks {[len(s) for s in shapes]}")
    total = sum(s[axis] for s in shapes)
    out_shape = shapes[0][:axis] + (total,) + shapes[0][axis + 1:]
    filled = [k for k, s in enumerate(shapes) if s[axis]]
    data_type = _data_type(xs[0].dtype, directml_types)
    level = _level_key(feature_level)
    out = _prepare_out(kind, out, out_shape, xs[0].dtype, "Join", xs)
    key = ("Join", axis, tuple(shapes), tuple(_element_strides(a) for a in xs), data_type,
           _element_strides(out), level)
    plan = _cached_plan(key, lambda: JoinOperatorDesc(
        [BufferTensorDesc(data_type, shapes[k]) for k in filled], BufferTensorDesc(data_type, out_shape), axis,
        feature_level=level,
    ).to_plan([_element_strides(xs[k]) for k in filled], [_element_strides(out)]))
    _launch(kind, plan, [xs[k] for k in filled], [out], stream)
    return out


# ---- basic indexing -----------------------------------------------------------------------------


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
        key = key[:at] + (_pyslice(None),) * (ndim - used) + key[at + 1:]
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


def _mapped_strides(a, axis_map):
    """Element strides of ``a`` (the indexed result) for each input axis (0 where dropped)."""
    strides = _element_strides(a)
    return tuple(0 if r is None else strides[r] for r in axis_map)


def strided_slice(x, key, *, out=None, feature_level=None, stream=None, directml_types=True):
    """``x[key]`` copied, for basic indexing: slices with any step (negative too), integers,
    ``...`` and ``None``. Runs as one SLICE1.

    An empty result is returned without running anything (DirectML tensors cannot be empty).

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(12).reshape(3, 4)
    >>> cd.strided_slice(x, (slice(None, None, -2), 1))
    array([9, 1])
    """
    kind, x = _as_array(x)
    x = _contiguous_elements(kind, x)
    windows, result_shape, axis_map = _parse_key(key, _shape_of(x, "strided_slice"))
    out = _prepare_out(kind, out, result_shape, x.dtype, "strided_slice", [x])
    if out.size == 0:
        return out
    params = _window_params(windows)
    counts = tuple(c for _, _, c in windows)
    data_type = _data_type(x.dtype, directml_types)
    level = _level_key(feature_level)
    cache_key = ("strided_slice", params, x.shape, _element_strides(x), data_type, counts,
                 _mapped_strides(out, axis_map), level)
    plan = _cached_plan(cache_key, lambda: Slice1OperatorDesc(
        BufferTensorDesc(data_type, x.shape), BufferTensorDesc(data_type, counts), *params, feature_level=level,
    ).to_plan([_element_strides(x)], [_mapped_strides(out, axis_map)]))
    _launch(kind, plan, [x], [out], stream)
    return out


def strided_slice_grad(dy, input_shape, key, *, out=None, feature_level=None, stream=None, directml_types=True):
    """The gradient of ``strided_slice(x, key)`` with respect to ``x`` (``x.shape == input_shape``):
    ``dy`` where ``x[key]`` read, 0 elsewhere, in one pass.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.strided_slice_grad(np.array([7, 8]), (5,), slice(None, None, -3))
    array([8, 0, 0, 0, 7])
    """
    kind, dy = _as_array(dy)
    dy = _contiguous_elements(kind, dy)
    input_shape = int_tuple(input_shape, "input_shape", "strided_slice_grad")
    windows, result_shape, axis_map = _parse_key(key, input_shape)
    if dy.shape != result_shape:
        raise ValueError(f"strided_slice_grad: dy has shape {dy.shape}; x[key] has shape {result_shape}")
    counts = tuple(c for _, _, c in windows)
    if dy.size == 0:
        out = _prepare_out(kind, out, input_shape, dy.dtype, "strided_slice_grad", [dy])
        out[...] = 0
        return out
    return _slice_grad("strided_slice_grad", dy, input_shape, counts, _mapped_strides(dy, axis_map),
                       _window_params(windows), out, feature_level, stream, directml_types, kind)

"""Normalised calls: every array-function call as one immutable value.

An *operation* is what a call computes, whatever kind of arrays it is given: the operator, its
DirectML parameters after normalisation (exact ints, negative axes resolved, a basic index
parsed into windows, defaults filled in), the feature level and whether dtypes need a DirectML
type. Each is a ``NamedTuple`` made by its ``of`` from the public arguments and the input
shapes, which raises ``TypeError`` (a float, None or bool where an integer belongs),
``IndexError`` or ``ValueError`` as the array function documents. ``describe`` then applies
DirectML's rules for a dtype and input shapes: it builds the descriptor (``DescriptorError``
lists every broken rule) and gives the result shapes.

A ``Call`` is an operation with where and on what it runs: memory kind and device, dtype, and
every bound array's shape and strides. Its equality and hash are the cache key of the compiled
operator that ``runner`` makes from it alone. Adapters (``adapters``) take operations: the
PyTorch adapter runs one on views of its tensors, the Dask adapter validates it whole with
``describe`` and runs chunk-local operations derived from its parameters (``windows``).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from .enums import FeatureLevel, TensorDataType
from .errors import DescriptorError, as_int, int_tuple
from .indexing import index_key, parse_key, window_params
from .operators import (
    JoinOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
)
from .tensor import BufferTensorDesc

__all__ = [
    "Call",
    "Description",
    "Join",
    "Slice",
    "Slice1",
    "SliceGrad",
    "Split",
    "StridedSlice",
    "StridedSliceGrad",
    "common_dtype",
    "normalize_axis",
    "options",
]

_NEWEST = FeatureLevel.newest()
_DEFAULTS = (_NEWEST, True)
_new = tuple.__new__  # an operation from its fields, without the keyword-taking constructor (per call)


class Call(NamedTuple):
    """An operation bound to arrays: the cache key of its compiled operator."""

    function: str  # the operation's: operations of two kinds may hold equal fields
    operation: Any  # one of the operations below
    kind: str  # "numpy" (host backend) or "cupy" (kernels)
    device: int | None
    dtype: np.dtype
    layouts: tuple  # per input: (shape, byte strides)
    out_layouts: tuple | None  # per output given with out=: (shape, byte strides, dtype); None for new results


class Description(NamedTuple):
    """What an operation does for a dtype and input shapes.

    ``desc``: the validated descriptor, or None when nothing moves (an empty result: DirectML
    tensors cannot be empty); ``shapes``: the result shapes; ``bound_inputs`` and
    ``bound_outputs``: the arrays the descriptor's tensors are, in order (JOIN and SPLIT leave
    out empty ones); ``zeros``: a result nothing is moved into is all zeros (a gradient);
    ``input_axes`` / ``output_axes``: where a tensor's dimensions differ from its array's (an
    index drops or adds size-1 axes), per tensor dimension the array axis it is, or None."""

    desc: Any
    shapes: tuple
    bound_inputs: tuple = (0,)
    bound_outputs: tuple = (0,)
    zeros: bool = False
    input_axes: tuple | None = None
    output_axes: tuple | None = None


def options(feature_level, directml_types) -> tuple[FeatureLevel, bool]:
    """The options every operation carries, normalised."""
    if feature_level is None and directml_types is True:
        return _DEFAULTS
    level = _NEWEST if feature_level is None else FeatureLevel.coerce(feature_level)
    if directml_types is not True and directml_types is not False:
        if not isinstance(directml_types, np.bool_):
            raise TypeError(f"directml_types must be a bool, not {type(directml_types).__name__}")
        directml_types = bool(directml_types)
    return level, directml_types


def normalize_axis(axis, ndim, name) -> int:
    axis = as_int(axis, "axis", name)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def common_dtype(name, dtypes):
    """The one dtype of a call's arrays; ``TypeError`` naming the first that differs."""
    dtype = dtypes[0]
    if dtypes.count(dtype) != len(dtypes):
        k = next(k for k, d in enumerate(dtypes) if d != dtype)
        raise TypeError(f"{name}: xs[{k}] has dtype {dtypes[k]}, xs[0] has {dtype}")
    return dtype


def _ranked(name, shape):
    if len(shape) == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to slice")
    return shape


def data_type(dtype, directml_types: bool) -> TensorDataType:
    """The tensor data type that moves ``dtype``'s elements."""
    if directml_types:
        try:
            return TensorDataType.from_dtype(dtype)
        except ValueError as e:
            raise TypeError(f"{e}; pass directml_types=False to move its elements as raw bits") from None
    if dtype.itemsize not in (1, 2, 4, 8):
        raise TypeError(f"dtype {dtype} is not a plain 1, 2, 4, 8 or 16-byte element")
    return TensorDataType.unsigned_of_width(dtype.itemsize)


def _check_rank(name, ndim, **arrays):
    """The array-length rule for calls that return empty without a descriptor."""
    wrong = [f"{name}: len({field}) = {len(a)} must equal DimensionCount = {ndim}" for field, a in arrays.items()]
    wrong = [w for w, a in zip(wrong, arrays.values()) if len(a) != ndim]
    if wrong:
        raise DescriptorError(wrong)


def _tensor(data_type, shape):
    return BufferTensorDesc(data_type, shape)


# ---- the operations ------------------------------------------------------------------------------
# Each: ``function`` (the array function), ``ARGUMENT`` (the name of its array argument),
# ``NAME`` (the name its messages start with), ``of``
# (normalise), ``describe`` (DirectML's rules), ``words`` (the same operation on 16-byte
# elements seen as pairs of 8-byte words: one more, innermost, axis of 2).


class Slice(NamedTuple):
    """SLICE: ``out[c] = x[offsets + strides * c]``."""

    offsets: tuple
    sizes: tuple
    strides: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice"
    ARGUMENT = "x"
    NAME = "Slice"

    @classmethod
    def of(cls, shape, offsets, sizes, strides=None, feature_level=None, directml_types=True):
        name = cls.NAME
        ndim = len(_ranked(name, shape))
        offsets, sizes = int_tuple(offsets, "Offsets", name), int_tuple(sizes, "Sizes", name)
        strides = (1,) * ndim if strides is None else int_tuple(strides, "Strides", name)
        return _new(cls, (offsets, sizes, strides, *options(feature_level, directml_types)))

    @property
    def windows(self):
        """Per input axis ``(start, step, count)``; ``axis_map``: the result axis of each."""
        return tuple((o, s if n > 1 else 1, n) for o, s, n in zip(self.offsets, self.strides, self.sizes))

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    def describe(self, dtype, shapes):
        name, (shape,), sizes = self.NAME, shapes, self.sizes
        if 0 in sizes:
            _check_rank(name, len(shape), Offsets=self.offsets, Sizes=sizes, Strides=self.strides)
            return Description(None, (sizes,))
        t = data_type(dtype, self.directml_types)
        desc = SliceOperatorDesc(
            _tensor(t, shape), _tensor(t, sizes), self.offsets, sizes, self.strides, feature_level=self.feature_level
        )
        return Description(desc, (sizes,))

    def words(self):
        return self._replace(offsets=(*self.offsets, 0), sizes=(*self.sizes, 2), strides=(*self.strides, 1))


class Slice1(NamedTuple):
    """SLICE1: a window per axis, read backwards where its stride is negative."""

    offsets: tuple
    sizes: tuple
    strides: tuple
    output_sizes: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice1"
    ARGUMENT = "x"
    NAME = "Slice1"

    @classmethod
    def of(cls, shape, offsets, sizes, strides=None, output_sizes=None, feature_level=None, directml_types=True):
        name = cls.NAME
        offsets, sizes, strides = _window_args(name, len(_ranked(name, shape)), offsets, sizes, strides)
        if output_sizes is None:
            output_sizes = tuple(1 + (n - 1) // abs(st) if st and n > 0 else n for n, st in zip(sizes, strides))
        else:
            output_sizes = int_tuple(output_sizes, "output_sizes", name)
        return _new(cls, (offsets, sizes, strides, output_sizes, *options(feature_level, directml_types)))

    @property
    def windows(self):
        return tuple(
            (o if s > 0 else o + n - 1, s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, self.output_sizes)
        )

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    def describe(self, dtype, shapes):
        name, (shape,), out_sizes = self.NAME, shapes, self.output_sizes
        window = self.offsets, self.sizes, self.strides
        if 0 in out_sizes:
            _check_rank(name, len(shape), **_window_fields(*window))
            return Description(None, (out_sizes,))
        t = data_type(dtype, self.directml_types)
        desc = Slice1OperatorDesc(_tensor(t, shape), _tensor(t, out_sizes), *window, feature_level=self.feature_level)
        return Description(desc, (out_sizes,))

    def words(self):
        return self._replace(
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
            output_sizes=(*self.output_sizes, 2),
        )


def _window_fields(offsets, sizes, strides):
    """A window's arrays by their DirectML names (for the messages of empty calls)."""
    return {"InputWindowOffsets": offsets, "InputWindowSizes": sizes, "InputWindowStrides": strides}


def _window_args(name, ndim, offsets, sizes, strides):
    """SLICE1's window arrays as int tuples (strides all 1 when omitted)."""
    return (
        int_tuple(offsets, "InputWindowOffsets", name),
        int_tuple(sizes, "InputWindowSizes", name),
        int_tuple((1,) * ndim if strides is None else strides, "InputWindowStrides", name),
    )


class SliceGrad(NamedTuple):
    """SLICE_GRAD: ``dy`` placed where SLICE1 of the window read, zeros elsewhere."""

    input_shape: tuple
    offsets: tuple
    sizes: tuple
    strides: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice_grad"
    ARGUMENT = "dy"
    NAME = "SliceGrad"

    @classmethod
    def of(cls, dy_shape, input_shape, offsets, sizes, strides=None, feature_level=None, directml_types=True):
        name = cls.NAME
        window = _window_args(name, len(_ranked(name, dy_shape)), offsets, sizes, strides)
        input_shape = int_tuple(input_shape, "input_shape", name)
        return _new(cls, (input_shape, *window, *options(feature_level, directml_types)))

    def windows_for(self, dy_shape):
        """Per axis ``(start, step, count)``: element ``c`` of ``dy`` lands at ``start + step * c``."""
        return tuple(
            (o if s > 0 else o + n - 1, s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, dy_shape)
        )

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    def describe(self, dtype, shapes):
        name, (dy_shape,), shape = self.NAME, shapes, self.input_shape
        window = self.offsets, self.sizes, self.strides
        if 0 in shape or 0 in dy_shape:
            _check_rank(name, len(dy_shape), input_shape=shape, **_window_fields(*window))
            return Description(None, (shape,), zeros=0 not in shape)
        t = data_type(dtype, self.directml_types)
        desc = SliceGradOperatorDesc(_tensor(t, dy_shape), _tensor(t, shape), *window, feature_level=self.feature_level)
        return Description(desc, (shape,))

    def words(self):
        return self._replace(
            input_shape=(*self.input_shape, 2),
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
        )


class Split(NamedTuple):
    """SPLIT: ``x`` cut along ``axis`` into parts of ``sizes``."""

    axis: int
    sizes: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "split"
    ARGUMENT = "x"
    NAME = "Split"
    MANY_RESULTS = True  # a list of parts, in one allocation

    @classmethod
    def of(cls, shape, split_sizes, axis=0, feature_level=None, directml_types=True):
        name = cls.NAME
        axis = normalize_axis(axis, len(_ranked(name, shape)), name)
        n = shape[axis]
        if type(split_sizes) is int or (
            isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, (bool, np.bool_))
        ):
            parts = int(split_sizes)
            if parts < 1 or n % parts:
                raise ValueError(
                    f"{name}: axis {axis} of size {n} does not divide into {parts} equal parts; pass the sizes"
                )
            sizes = (n // parts,) * parts
        else:
            sizes = int_tuple(split_sizes, "split_sizes", name)
            if any(s < 0 for s in sizes):
                raise ValueError(f"{name}: split_sizes {sizes} has a negative size")
        return _new(cls, (axis, sizes, *options(feature_level, directml_types)))

    def results(self, shape):
        axis = self.axis
        return tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in self.sizes)

    def describe(self, dtype, shapes):
        (shape,) = shapes
        parts = self.results(shape)
        bound = tuple(k for k, s in enumerate(parts) if 0 not in s)  # DirectML tensors cannot be empty
        if not bound:
            return Description(None, parts, bound_outputs=())
        t = data_type(dtype, self.directml_types)
        outs = [_tensor(t, parts[k]) for k in bound]
        desc = SplitOperatorDesc(_tensor(t, shape), outs, self.axis, feature_level=self.feature_level)
        return Description(desc, parts, bound_outputs=bound)

    def words(self):
        return self


class Join(NamedTuple):
    """JOIN: arrays concatenated along ``axis``."""

    axis: int
    feature_level: FeatureLevel
    directml_types: bool

    function = "join"
    ARGUMENT = "xs"
    NAME = "Join"

    @classmethod
    def of(cls, shape, axis=0, feature_level=None, directml_types=True):
        """``shape``: the first array's (the others are checked by ``describe``)."""
        name = cls.NAME
        if len(shape) == 0:
            raise ValueError(f"{name}: a 0-dimensional array has nothing to join")
        return _new(cls, (normalize_axis(axis, len(shape), name), *options(feature_level, directml_types)))

    def describe(self, dtype, shapes):
        name, axis, ndim = self.NAME, self.axis, len(shapes[0])
        if any(len(s) != ndim for s in shapes):
            raise ValueError(f"{name}: arrays of different ranks {[len(s) for s in shapes]}")
        out_shape = (*shapes[0][:axis], sum(s[axis] for s in shapes), *shapes[0][axis + 1 :])
        bound = tuple(k for k, s in enumerate(shapes) if 0 not in s)
        if not bound:  # nothing to move; the shapes must still agree, as NumPy requires
            for k, s in enumerate(shapes):
                if any(s[d] != shapes[0][d] for d in range(ndim) if d != axis):
                    raise ValueError(f"{name}: xs[{k}] has shape {s}, xs[0] {shapes[0]}: only axis {axis} may differ")
            return Description(None, (out_shape,), bound_inputs=())
        t = data_type(dtype, self.directml_types)
        ins = [_tensor(t, shapes[k]) for k in bound]
        desc = JoinOperatorDesc(ins, _tensor(t, out_shape), axis, feature_level=self.feature_level)
        return Description(desc, (out_shape,), bound_inputs=bound)

    def words(self):
        return self


class StridedSlice(NamedTuple):
    """``x[key]`` for a basic index: ``windows`` per input axis as ``parse_key`` gives them."""

    windows: tuple
    result_shape: tuple
    axis_map: tuple  # per input axis, its result axis (None where an integer index drops it)
    feature_level: FeatureLevel
    directml_types: bool

    function = "strided_slice"
    ARGUMENT = "x"
    NAME = "strided_slice"

    @classmethod
    def of(cls, shape, key, feature_level=None, directml_types=True):
        if not shape:
            _ranked(cls.NAME, shape)
        if feature_level is None and directml_types is True:  # the common case, without a call
            return _strided_slice(index_key(key), shape, _NEWEST, True)
        return _strided_slice(index_key(key), shape, *options(feature_level, directml_types))

    def describe(self, dtype, shapes):
        (shape,), result_shape = shapes, self.result_shape
        if 0 in result_shape:
            return Description(None, (result_shape,))
        counts = tuple(c for _, _, c in self.windows)
        t = data_type(dtype, self.directml_types)
        desc = Slice1OperatorDesc(
            _tensor(t, shape), _tensor(t, counts), *window_params(self.windows), feature_level=self.feature_level
        )
        return Description(desc, (result_shape,), output_axes=self.axis_map)

    def words(self):
        return self._replace(
            windows=(*self.windows, (0, 1, 2)),
            result_shape=(*self.result_shape, 2),
            axis_map=(*self.axis_map, len(self.result_shape)),
        )


@functools.lru_cache(maxsize=1024)
def _strided_slice(tokens, shape, feature_level, directml_types):
    """``StridedSlice`` of a key's tokens on ``shape`` (a tuple of ints): memoized, so that a
    call in a loop parses its key and builds its operation once."""
    return StridedSlice(*parse_key(tokens, tuple(shape)), feature_level, directml_types)


class StridedSliceGrad(NamedTuple):
    """The gradient of ``x[key]``: ``dy`` placed where the index read, zeros elsewhere."""

    input_shape: tuple
    windows: tuple
    result_shape: tuple
    axis_map: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "strided_slice_grad"
    ARGUMENT = "dy"
    NAME = "strided_slice_grad"

    @classmethod
    def of(cls, dy_shape, input_shape, key, feature_level=None, directml_types=True):
        name = cls.NAME
        input_shape = int_tuple(input_shape, "input_shape", name)
        if not input_shape:
            raise ValueError(f"{name}: a 0-dimensional input has nothing to slice")
        windows, result_shape, axis_map = parse_key(index_key(key), input_shape)
        if tuple(dy_shape) != result_shape:
            raise ValueError(f"{name}: dy has shape {tuple(dy_shape)}; x[key] has shape {result_shape}")
        return _new(cls, (input_shape, windows, result_shape, axis_map, *options(feature_level, directml_types)))

    def describe(self, dtype, shapes):
        shape, result_shape = self.input_shape, self.result_shape
        if 0 in shape or 0 in result_shape:
            return Description(None, (shape,), zeros=0 not in shape)
        counts = tuple(c for _, _, c in self.windows)
        t = data_type(dtype, self.directml_types)
        desc = SliceGradOperatorDesc(
            _tensor(t, counts), _tensor(t, shape), *window_params(self.windows), feature_level=self.feature_level
        )
        return Description(desc, (shape,), input_axes=self.axis_map)

    def words(self):
        return self._replace(
            input_shape=(*self.input_shape, 2),
            windows=(*self.windows, (0, 1, 2)),
            result_shape=(*self.result_shape, 2),
            axis_map=(*self.axis_map, len(self.result_shape)),
        )

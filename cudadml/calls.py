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
    INT32_MAX,
    INT32_MIN,
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


# An empty result has no DirectML descriptor (tensors cannot be empty), yet DirectML's rules
# hold for it all the same: the call's descriptor is built on a stand-in whose empty sizes are
# 1 and whose bounds, in the dimensions where nothing moves, hold the window; its every other
# rule (ranks, types, feature level, strides, offsets) is the call's.


def _filled(sizes):
    """``sizes`` with each 0 made 1."""
    return tuple(n or 1 for n in sizes)


def _room(bounds, starts, sizes, empty):
    """``bounds`` grown, where ``empty[i]``, to hold ``sizes[i]`` elements from ``starts[i]``."""
    return tuple(max(b, min(max(s, 0), 2**31) + z, 1) if e else b for b, s, z, e in zip(bounds, starts, sizes, empty))


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
        t = data_type(dtype, self.directml_types)
        if 0 in sizes:
            _check_rank(name, len(shape), Offsets=self.offsets, Sizes=sizes, Strides=self.strides)
            filled = _filled(sizes)
            bounds = _room(shape, self.offsets, (1,) * len(shape), [n == 0 for n in sizes])
            SliceOperatorDesc(
                _tensor(t, bounds),
                _tensor(t, filled),
                self.offsets,
                filled,
                self.strides,
                feature_level=self.feature_level,
            )
            return Description(None, (sizes,))
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
        t = data_type(dtype, self.directml_types)
        if 0 in out_sizes:
            _check_rank(name, len(shape), **_window_fields(*window))
            empty = [n == 0 for n in out_sizes]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            bounds = _room(shape, self.offsets, sizes, empty)
            Slice1OperatorDesc(
                _tensor(t, bounds),
                _tensor(t, _filled(out_sizes)),
                self.offsets,
                sizes,
                self.strides,
                feature_level=self.feature_level,
            )
            return Description(None, (out_sizes,))
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
        t = data_type(dtype, self.directml_types)
        if 0 in shape or 0 in dy_shape:
            _check_rank(name, len(dy_shape), input_shape=shape, **_window_fields(*window))
            empty = [n == 0 or c == 0 for n, c in zip(shape, dy_shape)]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            SliceGradOperatorDesc(
                _tensor(t, _filled(dy_shape)),
                _tensor(t, _room(shape, self.offsets, sizes, empty)),
                self.offsets,
                sizes,
                self.strides,
                feature_level=self.feature_level,
            )
            return Description(None, (shape,), zeros=0 not in shape)
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
        total, axis = sum(self.sizes), self.axis
        if total != shape[axis]:  # the descriptor's rule, which an empty x or part would not reach
            whole = f"InputTensor.Sizes[{axis}] = {shape[axis]}"
            raise DescriptorError([f"{self.NAME}: OutputTensors' Sizes[{axis}] sum to {total}, not {whole}"])
        parts = self.results(shape)
        bound = tuple(k for k, s in enumerate(parts) if 0 not in s)  # DirectML tensors cannot be empty
        t = data_type(dtype, self.directml_types)
        if not bound:
            filled = [_filled(s) for s in parts]
            side = _filled(shape)  # no parts: x's own sizes (and DirectML refuses an OutputCount of 0)
            whole = (*side[: self.axis], sum(s[self.axis] for s in filled) or side[self.axis], *side[self.axis + 1 :])
            SplitOperatorDesc(
                _tensor(t, whole), [_tensor(t, s) for s in filled], self.axis, feature_level=self.feature_level
            )
            return Description(None, parts, bound_outputs=())
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
            filled = [_filled(s) for s in shapes]
            whole = (*filled[0][:axis], sum(s[axis] for s in filled), *filled[0][axis + 1 :])
            t = data_type(dtype, self.directml_types)
            JoinOperatorDesc([_tensor(t, s) for s in filled], _tensor(t, whole), axis, feature_level=self.feature_level)
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
        t = data_type(dtype, self.directml_types)
        if 0 in result_shape:
            windows = _filled_windows(self.windows)
            Slice1OperatorDesc(
                _tensor(t, _filled(shape)),
                _tensor(t, tuple(c for _, _, c in windows)),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return Description(None, (result_shape,))
        counts = tuple(c for _, _, c in self.windows)
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


def _filled_windows(windows):
    """An index's windows with each empty one made the first element: what is left to check
    of an empty result is the tensors' rules (ranks, types, feature level)."""
    return tuple((start, step, count) if count else (0, 1, 1) for start, step, count in windows)


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
        t = data_type(dtype, self.directml_types)
        if 0 in shape or 0 in result_shape:
            windows = _filled_windows(self.windows)
            SliceGradOperatorDesc(
                _tensor(t, tuple(c for _, _, c in windows)),
                _tensor(t, _filled(shape)),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return Description(None, (shape,), zeros=0 not in shape)
        counts = tuple(c for _, _, c in self.windows)
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


# ---- many windows --------------------------------------------------------------------------------
# The windows of ``slice1_batch`` change from call to call (random crops), so they are arrays,
# checked all at once, and never part of a cache key (``runner`` keys what it compiles by the
# sizes and layouts alone).

#: Windows whose broken rules a ``DescriptorError`` spells out; the rest are counted.
_WINDOWS_SHOWN = 3


def _window_array(value, field, name, d):
    """An argument of per-window integers as a NumPy array: int64, or of Python ints where one
    passes int64 (the rules then refuse it). ``TypeError`` for anything but integers."""
    if hasattr(value, "__cuda_array_interface__"):  # CuPy, CUDA tensors: read on the host, to check them
        import cupy

        value = cupy.asnumpy(cupy.asarray(value))
    try:
        a = np.asarray(value)
    except ValueError:  # rows of different lengths
        raise ValueError(f"{name}: {field} must be an array of rows of {d} integers") from None
    if a.size == 0:  # no windows: [] or an (0, d) array
        return a.astype(np.int64).reshape(0, d) if a.shape == (0,) else a.astype(np.int64)
    if a.dtype.kind == "O":
        flat = [as_int(v, f"{field}[...]", name) for v in a.ravel()]
        if all(-(2**63) <= v < 2**63 for v in flat):
            return np.array(flat, np.int64).reshape(a.shape)
        return np.array(flat, object).reshape(a.shape)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name}: {field} must hold integers, not {a.dtype}")
    if isinstance(value, (list, tuple)) and any(
        isinstance(v, (bool, np.bool_)) for v in np.asarray(value, dtype=object).ravel()
    ):  # NumPy reads True among ints as 1; a bool is no integer here, as everywhere else
        raise TypeError(f"{name}: {field} must hold integers, not bool")
    if a.dtype == np.uint64 and a.max() >= 2**63:
        return a.astype(object)
    return a.astype(np.int64, copy=False)


def _rows(a, field, name, n, d, shared_ok):
    """``a`` as ``(N, d)`` rows, or (``shared_ok``) one ``(d,)`` row shared by every window."""
    if (a.ndim == 2 and a.shape == (n, d)) or (shared_ok and a.shape == (d,)):
        return a
    expected = f"({d},) for all windows or ({n}, {d})" if shared_ok else f"({n}, {d})"
    raise ValueError(f"{name}: {field} has shape {a.shape}; it must be {expected}: {d} integers per window")


@functools.lru_cache(maxsize=256)
def _shared_rules(name, t, bounds, feature_level):
    """SLICE1's rules of the tensors (ranks, types, feature level), on a window of all of x."""
    try:
        whole = _tensor(t, bounds)
        Slice1OperatorDesc(whole, whole, (0,) * len(bounds), bounds, (1,) * len(bounds), feature_level=feature_level)
    except DescriptorError as e:
        raise DescriptorError([f"{name}: {m.removeprefix('Slice1: ')}" for m in e.violations]) from None


class Slice1Batch(NamedTuple):
    """Many SLICE1 windows of one array (``per_sample``: window ``n`` of ``x[n]``)."""

    offsets: np.ndarray  # (N, d)
    sizes: np.ndarray  # (d,): one size for all, or (N, d)
    strides: np.ndarray  # (d,) or (N, d), signed
    per_sample: bool
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice1_batch"
    ARGUMENT = "x"
    NAME = "slice1_batch"

    @classmethod
    def of(cls, shape, offsets, sizes, strides=None, per_sample=False, feature_level=None, directml_types=True):
        name = cls.NAME
        if per_sample is not True and per_sample is not False and not isinstance(per_sample, np.bool_):
            raise TypeError(f"{name}: per_sample must be a bool, not {type(per_sample).__name__}")
        per_sample = bool(per_sample)
        d = len(shape) - per_sample
        if d < 1:
            raise ValueError(
                f"{name}: x has {len(shape)} dimension(s); windows need at least one"
                + (" besides the sample axis (per_sample=True)" if per_sample else "")
            )
        offsets = _window_array(offsets, "window_offsets", name, d)
        if offsets.ndim != 2 or offsets.shape[1] != d:
            raise ValueError(f"{name}: window_offsets has shape {offsets.shape}; it must be (N, {d}): {d} per window")
        n = len(offsets)
        if per_sample and n != shape[0]:
            raise ValueError(f"{name}: {n} windows for {shape[0]} samples (per_sample=True takes one per sample)")
        sizes = _rows(_window_array(sizes, "window_sizes", name, d), "window_sizes", name, n, d, True)
        strides = np.ones(d, np.int64) if strides is None else _window_array(strides, "window_strides", name, d)
        strides = _rows(strides, "window_strides", name, n, d, True)
        return _new(cls, (offsets, sizes, strides, per_sample, *options(feature_level, directml_types)))

    @property
    def shared(self) -> bool:
        """Whether every window has one size (one result array), or each its own (a list)."""
        return self.sizes.ndim == 1

    @property
    def MANY_RESULTS(self) -> bool:
        """As the other operations' class attribute: whether the call gives a list."""
        return not self.shared

    def check(self, dtype, shape) -> np.ndarray:
        """Every window against SLICE1's rules on ``x`` of ``shape``; the elements each takes
        per dimension, ``(N, d)`` (``DescriptorError`` naming the windows that break a rule)."""
        return np.broadcast_to(self._check(dtype, shape), self.offsets.shape)

    def _check(self, dtype, shape) -> np.ndarray:
        """``check``'s counts, as one ``(d,)`` row where one row of sizes and one of strides
        (or steps of at most 1) give every window the same, else ``(N, d)``."""
        name, offsets, sizes, strides = self.NAME, self.offsets, self.sizes, self.strides
        n, d = offsets.shape
        if dtype.itemsize == 16 and self.directml_types is False:
            dtype = np.dtype(np.uint64)  # moved as pairs of words (``words``)
        t = data_type(dtype, self.directml_types)
        bounds = tuple(shape[1:] if self.per_sample else shape)
        if not n:  # no window: the rules of x, and of the shared sizes and strides, all the same
            _shared_rules(name, t, _filled(bounds), self.feature_level)
            sizes = sizes if sizes.ndim == 1 else np.ones(d, np.int64)
            strides = strides if strides.ndim == 1 else np.ones(d, np.int64)
            window = (0,) * d, tuple(map(int, sizes)), tuple(map(int, strides))
            room = _room(_filled(bounds), window[0], [max(z, 1) for z in window[1]], [True] * d)
            counts = tuple(max(1, (z - 1) // abs(s) + 1) if s else 1 for z, s in zip(window[1], window[2]))
            try:
                Slice1OperatorDesc(_tensor(t, room), _tensor(t, counts), *window, feature_level=self.feature_level)
            except DescriptorError as e:
                raise DescriptorError([f"{name}: {m.removeprefix('Slice1: ')}" for m in e.violations]) from None
            return np.zeros((0, d), np.int64)
        _shared_rules(name, t, bounds, self.feature_level)  # ranks, types, level: on all of x
        # Which windows break a rule of their own. The descriptor holds the rules and their
        # messages; it is asked about those windows only (a test keeps the two in step).
        huge = object in (offsets.dtype, sizes.dtype, strides.dtype)  # a value past int64
        ends = np.array(bounds, object if huge else np.int64)
        smallest, largest = (int(strides.min()), int(strides.max())) if not huge else (0, 0)
        if (  # reductions first: the common case, every window valid, in a few microseconds
            huge
            or int(offsets.min()) < 0
            or int(sizes.min()) < 1
            or smallest < INT32_MIN
            or largest > INT32_MAX
            or np.count_nonzero(strides) != strides.size
            or (offsets > ends - sizes).any()  # offsets + sizes > ends, which int64 could wrap
        ):
            row = (sizes < 1) | (strides == 0) | (strides < INT32_MIN) | (strides > INT32_MAX)
            bad = (offsets < 0) | (offsets > ends - np.maximum(sizes, 1)) | row
            self._refuse(t, bounds, np.flatnonzero(np.broadcast_to(bad, (n, d)).any(axis=1)))
        counts = sizes if smallest >= -1 and largest <= 1 else 1 + (sizes - 1) // np.abs(strides)
        if self.shared and counts.ndim == 2 and (counts != counts[0]).any():
            k = int(np.flatnonzero((counts != counts[0]).any(axis=1))[0])
            raise ValueError(
                f"{name}: window {k} takes {tuple(map(int, counts[k]))} elements and window 0 "
                f"{tuple(map(int, counts[0]))}: windows of one size must take as many each (per-window "
                "window_sizes give a list of arrays)"
            )
        return counts

    def _refuse(self, t, bounds, broken):
        """``DescriptorError`` with the descriptor's messages for the first broken windows."""
        name, n, d = self.NAME, *self.offsets.shape
        sizes, strides = np.broadcast_to(self.sizes, (n, d)), np.broadcast_to(self.strides, (n, d))
        messages = []
        for k in map(int, broken[:_WINDOWS_SHOWN]):
            window = tuple(tuple(map(int, a[k])) for a in (self.offsets, sizes, strides))
            counts = tuple(max(1, (z - 1) // abs(s) + 1) if s else 1 for z, s in zip(window[1], window[2]))
            try:
                Slice1OperatorDesc(_tensor(t, bounds), _tensor(t, counts), *window, feature_level=self.feature_level)
            except DescriptorError as e:
                messages.extend(f"{name}: window {k}: {m.removeprefix('Slice1: ')}" for m in e.violations)
        assert messages or not len(broken), "the descriptor accepts a window that the batch check refuses"
        # (A stride of -2^31, whose magnitude passes INT32_MAX, comes here and breaks nothing.)
        if len(broken) > _WINDOWS_SHOWN:
            messages.append(f"{name}: and {len(broken) - _WINDOWS_SHOWN} more windows break a rule")
        if messages:
            raise DescriptorError(messages)

    def shapes(self, dtype, shape):
        """The result shapes: ``(N, *counts)`` for windows of one size, else one per window."""
        return self.results(self._check(dtype, shape))

    def results(self, counts):
        """The result shapes of windows that take ``counts`` elements (``check``'s, or one row
        that every window takes)."""
        n, d = self.offsets.shape
        if self.shared:
            row = counts if counts.ndim == 1 else counts[0] if n else self._counts(d)
            return ((n, *map(int, row)),)
        return tuple(tuple(map(int, c)) for c in counts)  # per-window sizes: counts are (N, d)

    def words(self):
        """The same windows on 16-byte elements seen as pairs of 8-byte words."""

        def column(a, value):
            return np.append(a, value) if a.ndim == 1 else np.c_[a, np.full(len(a), value, a.dtype)]

        return self._replace(
            offsets=column(self.offsets, 0), sizes=column(self.sizes, 2), strides=column(self.strides, 1)
        )

    def _counts(self, d):
        """The elements a window of the shared sizes takes, for an empty batch (whose windows,
        with no strides of their own, step by 1)."""
        strides = self.strides if self.strides.ndim == 1 else np.ones(d, np.int64)
        return tuple(
            1 + (int(n) - 1) // abs(int(s)) if s and n > 0 else max(int(n), 0) for n, s in zip(self.sizes, strides)
        )


class Slice1BatchGrad(NamedTuple):
    """The gradient of ``Slice1Batch``: its windows' gradients placed in, and summed into, an
    array of ``input_shape`` (zeros where no window read)."""

    input_shape: tuple
    offsets: np.ndarray
    sizes: np.ndarray
    strides: np.ndarray
    per_sample: bool
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice1_batch_grad"
    ARGUMENT = "dy"
    NAME = "slice1_batch_grad"
    shared = Slice1Batch.shared
    check = Slice1Batch.check
    _check = Slice1Batch._check
    _refuse = Slice1Batch._refuse
    results = Slice1Batch.results
    _counts = Slice1Batch._counts

    @classmethod
    def of(cls, input_shape, offsets, sizes, strides=None, per_sample=False, feature_level=None, directml_types=True):
        input_shape = int_tuple(input_shape, "input_shape", cls.NAME)
        if any(n < 0 for n in input_shape):
            raise ValueError(f"{cls.NAME}: input_shape {input_shape} has a negative size")
        windows = Slice1Batch.of(input_shape, offsets, sizes, strides, per_sample, feature_level, directml_types)
        return _new(cls, (input_shape, *windows))

    def windows(self) -> Slice1Batch:
        """The forward operation."""
        return _new(Slice1Batch, self[1:])

    def check_gradients(self, counts, dy_shapes):
        """``ValueError`` unless ``dy_shapes`` (one array's for windows of one size, else one per
        window) are the shapes of the results of windows that take ``counts`` (``check``'s)."""
        name, forward = self.NAME, self.results(counts)
        if list(map(tuple, dy_shapes)) != list(forward):
            if self.shared:
                raise ValueError(f"{name}: dy has shape {tuple(dy_shapes[0])}; the windows' results have {forward[0]}")
            if len(dy_shapes) != len(forward):
                raise ValueError(f"{name}: {len(dy_shapes)} gradients for {len(forward)} windows")
            k = next(k for k, (a, b) in enumerate(zip(dy_shapes, forward)) if tuple(a) != b)
            raise ValueError(f"{name}: dy[{k}] has shape {tuple(dy_shapes[k])}; window {k} takes {forward[k]}")

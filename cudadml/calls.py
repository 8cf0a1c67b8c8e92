"""Normalised calls: every array-function call as one immutable value.

An *operation* is what a call computes, whatever kind of arrays it is given: the operator, its
DirectML parameters after normalisation (exact ints, negative axes resolved, a basic index
parsed into windows, defaults filled in), the feature level and whether dtypes need a DirectML
type. Each is a ``NamedTuple`` made by its ``of`` from the public arguments and the input
shapes, which raises ``TypeError`` (a float, None or bool where an integer belongs, arguments
by position where the function takes them by name), ``IndexError`` or ``ValueError`` as the
array function documents, each naming the argument as the call does. ``of`` takes the input
shape(s), then the function's other arguments in its signature's order (``positional``: what
it was given by position). ``describe`` then applies DirectML's rules for a dtype and input
shapes: it builds the descriptor (``DescriptorError`` lists every broken rule, said in the
call's words by ``messages``) and gives the result shapes.

A ``Call`` is an operation with where and on what it runs: memory kind and device, dtype, and
every bound array's shape and strides. Its equality and hash are the cache key of the compiled
operator that ``runner`` makes from it alone. Adapters (``adapters``) take operations: the
PyTorch adapter runs one on views of its tensors, the Dask adapter validates it whole with
``describe`` and runs chunk-local operations derived from its parameters (``windows``).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, NamedTuple

import numpy as np

from . import messages
from .enums import FeatureLevel, TensorDataType
from .errors import DescriptorError, as_int, int_tuple, shown_value
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
from .tensor import SPAN_RULE, UINT32_MAX, BufferTensorDesc

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


def options(feature_level, directml_types, name=None) -> tuple[FeatureLevel, bool]:
    """The options every operation carries, normalised (``name``: the call's, for messages)."""
    if feature_level is None and directml_types is True:
        return _DEFAULTS
    prefix = f"{name}: " if name else ""
    try:
        level = _NEWEST if feature_level is None else FeatureLevel.coerce(feature_level)
    except TypeError:
        kind = type(feature_level).__name__
        given = shown_value(feature_level)
        raise TypeError(f"{prefix}feature_level = {given} must be a FeatureLevel, int or str, not {kind}") from None
    except ValueError as e:
        raise ValueError(f"{prefix}feature_level: {e}") from None
    if directml_types is not True and directml_types is not False:
        if not isinstance(directml_types, np.bool_):
            given, kind = shown_value(directml_types), type(directml_types).__name__
            raise TypeError(f"{prefix}directml_types = {given} must be a bool, not {kind}")
        directml_types = bool(directml_types)
    return level, directml_types


def normalize_axis(axis, ndim, name) -> int:
    axis = as_int(axis, "axis", name, shown=True)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, name)
    return axis % ndim


def common_dtype(name, dtypes, argument="xs"):
    """The one dtype of a call's arrays (``argument``: their name); ``TypeError`` naming the
    first that differs."""
    dtype = dtypes[0]
    if dtypes.count(dtype) != len(dtypes):
        k = next(k for k, d in enumerate(dtypes) if d != dtype)
        raise TypeError(f"{name}: {argument}[{k}] has dtype {dtypes[k]}, {argument}[0] has {dtype}")
    return dtype


def _ranked(name, shape, argument="x", verb="slice"):
    if len(shape) == 0:
        raise ValueError(f"{name}: {argument} is a 0-dimensional array (shape ()), which has nothing to {verb}")
    return shape


def data_type(dtype, directml_types: bool, where: str | None = None) -> TensorDataType:
    """The tensor data type that moves ``dtype``'s elements (``where``: the array's dtype as
    the call names it, ``slice: x.dtype``, for messages)."""
    said = f"dtype {dtype}" if where is None else f"{where} = {dtype}"
    if directml_types:
        try:
            return TensorDataType.from_dtype(dtype)
        except ValueError as e:
            reason = str(e).removeprefix(f"dtype {dtype} ")
            raise TypeError(f"{said} {reason}; pass directml_types=False to move its elements as raw bits") from None
    if dtype.itemsize not in (1, 2, 4, 8):
        raise TypeError(f"{said} is not a plain 1, 2, 4, 8 or 16-byte element")
    return TensorDataType.unsigned_of_width(dtype.itemsize)


def _type_of(operation, dtype) -> TensorDataType:
    """``data_type`` of the array an operation's call names ``x``, ``dy`` or ``xs[0]``."""
    argument = "xs[0]" if operation.ARGUMENT == "xs" else operation.ARGUMENT
    return data_type(dtype, operation.directml_types, f"{operation.NAME}: {argument}.dtype")


def _check_rank(name, ndim, **arrays):
    """The array-length rule for calls that return empty without a descriptor."""
    wrong = [f"{name}: len({field}) = {len(a)} must equal DimensionCount = {ndim}" for field, a in arrays.items()]
    wrong = [w for w, a in zip(wrong, arrays.values()) if len(a) != ndim]
    if wrong:
        raise DescriptorError(wrong)


def _tensor(data_type, shape, role="InputTensor"):
    """The tensor ``role`` of a call's descriptor (``OutputTensor``, ``OutputTensors[2]``...):
    its rules broken are said of it (``OutputTensor.Sizes[0] = -1 ...``), in DirectML's words
    that ``messages`` translates."""
    try:
        return BufferTensorDesc(data_type, shape)
    except DescriptorError as e:
        said = [m.removeprefix("BufferTensorDesc: ") for m in e.violations]
        raise DescriptorError(
            [f"{role}{m.removeprefix('the tensor')}" if m.startswith("the tensor ") else f"{role}.{m}" for m in said]
        ) from None


def _in_callers_words(describe):
    """``describe`` raising its ``DescriptorError`` in the caller's words (``messages``): the
    argument the caller passed for each DirectML field, DirectML's name in parentheses."""

    @functools.wraps(describe)
    def described(self, dtype, shapes):
        try:
            return describe(self, dtype, shapes)
        except DescriptorError as e:
            raise messages.in_callers_words(self, e, shapes, dtype=dtype) from None

    return described


def _required(value, field, name, what="one integer per axis"):
    """``TypeError`` for an argument taken by name that the call left out (None)."""
    if value is None:
        raise TypeError(f"{name}: {field}= is required ({what})")
    return value


def _ints(values, field, name):
    """An argument of one integer per axis, as exact ints, in the caller's words."""
    return int_tuple(_required(values, field, name), field, name, shown=True)


# An empty result has no DirectML descriptor (tensors cannot be empty), yet DirectML's rules
# hold for it all the same: the call's descriptor is built on a stand-in whose empty sizes are
# 1 and whose bounds, in the dimensions where nothing moves, hold the window; its every other
# rule (ranks, types, feature level, strides, offsets) is the call's. The room made is not the
# caller's array: a rule only it breaks (a span past a buffer's, a size past UINT32, a window
# past it) is not the call's (``_stand_in``), and the array's own tensor is checked as it is.


def _filled(sizes):
    """``sizes`` with each 0 made 1."""
    return tuple(n or 1 for n in sizes)


def _room(bounds, starts, sizes, empty):
    """``bounds`` grown, where ``empty[i]``, to hold ``sizes[i]`` elements from ``starts[i]``
    (as far as a tensor's sizes go)."""
    return tuple(
        min(max(b, min(max(s, 0), 2**31) + z, 1), UINT32_MAX) if e else b
        for b, s, z, e in zip(bounds, starts, sizes, empty)
    )


@contextlib.contextmanager
def _stand_in(role, empty):
    """Build an empty result's descriptor on a stand-in whose tensor ``role`` is room made
    along the dimensions where ``empty[i]``: it is no buffer (the span rule is lifted), and a
    violation about its sizes there is the stand-in's, dropped (unless it is all there is)."""
    token = SPAN_RULE.set(False)
    try:
        yield
    except DescriptorError as e:
        marks = tuple(f"{role}.Sizes[{i}]" for i, made in enumerate(empty) if made)
        kept = [v for v in e.violations if not any(m in v for m in marks)]
        raise DescriptorError(kept or e.violations) from None
    finally:
        SPAN_RULE.reset(token)


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
    NAME = "slice"

    @classmethod
    def of(cls, shape, positional=(), offsets=None, sizes=None, strides=None, feature_level=None, directml_types=True):
        """As ``slice(x, *positional, offsets=, sizes=, strides=)`` takes them: by name."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        ndim = len(_ranked(name, shape))
        offsets, sizes = _ints(offsets, "offsets", name), _ints(sizes, "sizes", name)
        strides = (1,) * ndim if strides is None else _ints(strides, "strides", name)
        return _new(cls, (offsets, sizes, strides, *options(feature_level, directml_types, cls.NAME)))

    @property
    def windows(self):
        """Per input axis ``(start, step, count)``; ``axis_map``: the result axis of each."""
        return tuple((o, s if n > 1 else 1, n) for o, s, n in zip(self.offsets, self.strides, self.sizes))

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @_in_callers_words
    def describe(self, dtype, shapes):
        name, (shape,), sizes = self.NAME, shapes, self.sizes
        t = _type_of(self, dtype)
        if 0 in sizes:
            _check_rank(name, len(shape), Offsets=self.offsets, Sizes=sizes, Strides=self.strides)
            filled, empty = _filled(sizes), [n == 0 for n in sizes]
            _tensor(t, _filled(shape))  # x's own rules
            with _stand_in("InputTensor", empty):
                SliceOperatorDesc(
                    _tensor(t, _room(shape, self.offsets, (1,) * len(shape), empty)),
                    _tensor(t, filled, "OutputTensor"),
                    self.offsets,
                    filled,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (sizes,))
        desc = SliceOperatorDesc(
            _tensor(t, shape),
            _tensor(t, sizes, "OutputTensor"),
            self.offsets,
            sizes,
            self.strides,
            feature_level=self.feature_level,
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
    NAME = "slice1"

    @classmethod
    def of(
        cls,
        shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        output_sizes=None,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice1(x, *positional, window_offsets=, window_sizes=, window_strides=,
        output_sizes=)`` takes them: the window by name."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        offsets, sizes, strides = _window_args(name, len(_ranked(name, shape)), offsets, sizes, strides)
        if output_sizes is None:  # the reach; an empty or negative window reaches nothing
            output_sizes = tuple(1 + (n - 1) // abs(st) if st and n > 0 else max(n, 0) for n, st in zip(sizes, strides))
        else:
            output_sizes = _ints(output_sizes, "output_sizes", name)
        return _new(cls, (offsets, sizes, strides, output_sizes, *options(feature_level, directml_types, cls.NAME)))

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

    @_in_callers_words
    def describe(self, dtype, shapes):
        name, (shape,), out_sizes = self.NAME, shapes, self.output_sizes
        window = self.offsets, self.sizes, self.strides
        t = _type_of(self, dtype)
        if 0 in out_sizes:
            _check_rank(name, len(shape), **_window_fields(*window))
            empty = [n == 0 for n in out_sizes]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            _tensor(t, _filled(shape))  # x's own rules
            with _stand_in("InputTensor", empty):
                Slice1OperatorDesc(
                    _tensor(t, _room(shape, self.offsets, sizes, empty)),
                    _tensor(t, _filled(out_sizes), "OutputTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (out_sizes,))
        desc = Slice1OperatorDesc(
            _tensor(t, shape), _tensor(t, out_sizes, "OutputTensor"), *window, feature_level=self.feature_level
        )
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
    """SLICE1's window arrays as int tuples (strides all 1 when omitted), in the caller's words."""
    return (
        _ints(offsets, "window_offsets", name),
        _ints(sizes, "window_sizes", name),
        (1,) * ndim if strides is None else _ints(strides, "window_strides", name),
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
    NAME = "slice_grad"

    @classmethod
    def of(
        cls,
        dy_shape,
        input_shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice_grad(dy, input_shape, *positional, window_offsets=, window_sizes=,
        window_strides=)`` takes them: the window by name."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        window = _window_args(name, len(_ranked(name, dy_shape, "dy")), offsets, sizes, strides)
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        return _new(cls, (input_shape, *window, *options(feature_level, directml_types, cls.NAME)))

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

    @_in_callers_words
    def describe(self, dtype, shapes):
        name, (dy_shape,), shape = self.NAME, shapes, self.input_shape
        window = self.offsets, self.sizes, self.strides
        t = _type_of(self, dtype)
        if 0 in shape or 0 in dy_shape:
            _check_rank(name, len(dy_shape), OutputGradientTensor=shape, **_window_fields(*window))
            empty = [n == 0 or c == 0 for n, c in zip(shape, dy_shape)]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            _tensor(t, _filled(shape), "OutputGradientTensor")  # the result's own rules
            with _stand_in("OutputGradientTensor", empty):
                SliceGradOperatorDesc(
                    _tensor(t, _filled(dy_shape), "InputGradientTensor"),
                    _tensor(t, _room(shape, self.offsets, sizes, empty), "OutputGradientTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (shape,), zeros=0 not in shape)
        desc = SliceGradOperatorDesc(
            _tensor(t, dy_shape, "InputGradientTensor"),
            _tensor(t, shape, "OutputGradientTensor"),
            *window,
            feature_level=self.feature_level,
        )
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
    NAME = "split"
    MANY_RESULTS = True  # a list of parts, in one allocation

    @classmethod
    def of(
        cls,
        shape,
        positional=(),
        split_sizes=None,
        parts=None,
        axis=0,
        feature_level=None,
        directml_types=True,
    ):
        """As ``split(x, *positional, split_sizes=, parts=, axis=)`` takes them: the sizes of
        the parts, or their number, by name (``split_sizes=`` an integer is a number too)."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        if (split_sizes is None) == (parts is None):
            given = "both" if parts is not None else "neither"
            raise TypeError(
                f"{name}: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got {given}"
            )
        axis = normalize_axis(axis, len(_ranked(name, shape, verb="split")), name)
        n = shape[axis]
        count, field = (parts, "parts") if parts is not None else (split_sizes, "split_sizes")
        if parts is not None or (
            isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, (bool, np.bool_))
        ):
            if hasattr(count, "__iter__") and not isinstance(count, (str, bytes)):
                raise TypeError(
                    f"{name}: parts = {shown_value(count)} must be an integer (a number of equal parts), not "
                    f"{type(count).__name__}; the size of each part goes in split_sizes="
                )
            count = as_int(count, field, name, "an integer (a number of equal parts)", shown=True)
            if count < 1:
                raise ValueError(f"{name}: {field} = {count} must be at least 1")
            if n % count:
                raise ValueError(
                    f"{name}: {field} = {count}: x.shape[{axis}] = {n} does not divide into {count} equal parts; "
                    f"pass split_sizes= for parts of other sizes (cudadml.numpy.array_split(x, {count}) makes "
                    "parts that differ by at most 1, as NumPy's does)"
                )
            sizes = (n // count,) * count
        else:
            sizes = int_tuple(split_sizes, "split_sizes", name, shown=True)
            negative = [k for k, size in enumerate(sizes) if size < 0]
            if negative:
                k = negative[0]
                raise ValueError(f"{name}: split_sizes[{k}] = {sizes[k]} must not be negative")
        return _new(cls, (axis, sizes, *options(feature_level, directml_types, cls.NAME)))

    def results(self, shape):
        axis = self.axis
        return tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in self.sizes)

    @_in_callers_words
    def describe(self, dtype, shapes):
        (shape,) = shapes
        total, axis = sum(self.sizes), self.axis
        if total != shape[axis]:  # the descriptor's rule, which an empty x or part would not reach
            whole = f"InputTensor.Sizes[{axis}] = {shape[axis]}"
            raise DescriptorError([f"{self.NAME}: OutputTensors' Sizes[{axis}] sum to {total}, not {whole}"])
        parts = self.results(shape)
        bound = tuple(k for k, s in enumerate(parts) if 0 not in s)  # DirectML tensors cannot be empty
        t = _type_of(self, dtype)
        if not bound:
            filled = [_filled(s) for s in parts]
            side = _filled(shape)  # no parts: x's own sizes (and DirectML refuses an OutputCount of 0)
            whole = (*side[: self.axis], sum(s[self.axis] for s in filled) or side[self.axis], *side[self.axis + 1 :])
            SplitOperatorDesc(
                _tensor(t, whole),
                [_tensor(t, s, f"OutputTensors[{k}]") for k, s in enumerate(filled)],
                self.axis,
                feature_level=self.feature_level,
            )
            return Description(None, parts, bound_outputs=())
        whole = _tensor(t, shape)  # x's rules first: its parts' follow from them
        outs = [_tensor(t, parts[k], f"OutputTensors[{j}]") for j, k in enumerate(bound)]
        desc = SplitOperatorDesc(whole, outs, self.axis, feature_level=self.feature_level)
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
    NAME = "join"

    @classmethod
    def of(cls, shape, axis=0, feature_level=None, directml_types=True):
        """``shape``: the first array's (the others are checked by ``describe``)."""
        name = cls.NAME
        if len(shape) == 0:
            raise ValueError(f"{name}: xs[0] is a 0-dimensional array (shape ()), which has nothing to join")
        return _new(cls, (normalize_axis(axis, len(shape), name), *options(feature_level, directml_types, cls.NAME)))

    @_in_callers_words
    def describe(self, dtype, shapes):
        name, axis, ndim = self.NAME, self.axis, len(shapes[0])
        for k, s in enumerate(shapes):
            if len(s) != ndim:
                raise ValueError(f"{name}: xs[{k}].ndim = {len(s)} differs from xs[0].ndim = {ndim}")
        out_shape = (*shapes[0][:axis], sum(s[axis] for s in shapes), *shapes[0][axis + 1 :])
        bound = tuple(k for k, s in enumerate(shapes) if 0 not in s)
        if not bound:  # nothing to move; the shapes must still agree, as NumPy requires
            for k, s in enumerate(shapes):
                for d in range(ndim):
                    if d != axis and s[d] != shapes[0][d]:
                        raise ValueError(
                            f"{name}: xs[{k}].shape[{d}] = {s[d]} differs from xs[0].shape[{d}] = {shapes[0][d]} "
                            f"(only axis {axis} may differ)"
                        )
            filled = [_filled(s) for s in shapes]
            whole = (*filled[0][:axis], sum(s[axis] for s in filled), *filled[0][axis + 1 :])
            t = _type_of(self, dtype)
            JoinOperatorDesc(
                [_tensor(t, s, f"InputTensors[{k}]") for k, s in enumerate(filled)],
                _tensor(t, whole, "OutputTensor"),
                axis,
                feature_level=self.feature_level,
            )
            return Description(None, (out_shape,), bound_inputs=())
        t = _type_of(self, dtype)
        ins = [_tensor(t, shapes[k], f"InputTensors[{j}]") for j, k in enumerate(bound)]
        desc = JoinOperatorDesc(ins, _tensor(t, out_shape, "OutputTensor"), axis, feature_level=self.feature_level)
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
        # An index NumPy refuses is refused as NumPy words it, naming the key.
        if feature_level is None and directml_types is True:  # the common case, without a call
            try:
                return _strided_slice(index_key(key), shape, _NEWEST, True)
            except (IndexError, TypeError, ValueError) as e:
                raise _of_key(cls.NAME, key, e) from None
        level, directml_types = options(feature_level, directml_types, cls.NAME)
        try:
            return _strided_slice(index_key(key), shape, level, directml_types)
        except (IndexError, TypeError, ValueError) as e:
            raise _of_key(cls.NAME, key, e) from None

    @_in_callers_words
    def describe(self, dtype, shapes):
        (shape,), result_shape = shapes, self.result_shape
        t = _type_of(self, dtype)
        if 0 in result_shape:
            windows = _filled_windows(self.windows)
            Slice1OperatorDesc(
                _tensor(t, _filled(shape)),
                _tensor(t, tuple(c for _, _, c in windows), "OutputTensor"),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return Description(None, (result_shape,))
        counts = tuple(c for _, _, c in self.windows)
        desc = Slice1OperatorDesc(
            _tensor(t, shape),
            _tensor(t, counts, "OutputTensor"),
            *window_params(self.windows),
            feature_level=self.feature_level,
        )
        return Description(desc, (result_shape,), output_axes=self.axis_map)

    def words(self):
        return self._replace(
            windows=(*self.windows, (0, 1, 2)),
            result_shape=(*self.result_shape, 2),
            axis_map=(*self.axis_map, len(self.result_shape)),
        )


def _of_key(name, key, error):
    """``error``, raised reading ``key`` (as NumPy raises it), naming the call and the key."""
    return type(error)(f"{name}: key {shown_value(key)}: {error}")


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
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        if not input_shape:
            raise ValueError(f"{name}: input_shape = () is 0-dimensional, which has nothing to slice")
        negative = [i for i, n in enumerate(input_shape) if n < 0]
        if negative:  # as NumPy refuses a negative dimension: before the key is read against it
            i = negative[0]
            raise ValueError(f"{name}: input_shape[{i}] = {input_shape[i]} must not be negative")
        try:
            windows, result_shape, axis_map = parse_key(index_key(key), input_shape)
        except (IndexError, TypeError, ValueError) as e:
            raise _of_key(name, key, e) from None
        if tuple(dy_shape) != result_shape:
            raise ValueError(
                f"{name}: dy has shape {tuple(dy_shape)}; x[key] has shape {result_shape} (x of input_shape "
                f"{input_shape})"
            )
        return _new(
            cls, (input_shape, windows, result_shape, axis_map, *options(feature_level, directml_types, cls.NAME))
        )

    @_in_callers_words
    def describe(self, dtype, shapes):
        shape, result_shape = self.input_shape, self.result_shape
        t = _type_of(self, dtype)
        if 0 in shape or 0 in result_shape:
            windows = _filled_windows(self.windows)
            SliceGradOperatorDesc(
                _tensor(t, tuple(c for _, _, c in windows), "InputGradientTensor"),
                _tensor(t, _filled(shape), "OutputGradientTensor"),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return Description(None, (shape,), zeros=0 not in shape)
        counts = tuple(c for _, _, c in self.windows)
        desc = SliceGradOperatorDesc(
            _tensor(t, counts, "InputGradientTensor"),
            _tensor(t, shape, "OutputGradientTensor"),
            *window_params(self.windows),
            feature_level=self.feature_level,
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
        flat = [as_int(v, f"{field}{_at(at)}", name, shown=True) for at, v in np.ndenumerate(a)]
        if all(-(2**63) <= v < 2**63 for v in flat):
            return np.array(flat, np.int64).reshape(a.shape)
        return np.array(flat, object).reshape(a.shape)
    if a.dtype.kind not in "iu":
        at = next(iter(np.ndindex(a.shape)))
        raise TypeError(f"{name}: {field} must hold integers, not {a.dtype} ({field}{_at(at)} = {a[at]!r})")
    if isinstance(value, (list, tuple)):
        given = np.asarray(value, dtype=object)
        for at, v in np.ndenumerate(given):
            if isinstance(v, (bool, np.bool_)):  # NumPy reads True among ints as 1; a bool is no integer here
                raise TypeError(f"{name}: {field} must hold integers, not bool ({field}{_at(at)} = {v!r})")
    if a.dtype == np.uint64 and a.max() >= 2**63:
        return a.astype(object)
    return a.astype(np.int64, copy=False)


def _at(index):
    """``[1][0]``: where an element is, as the caller indexes nested lists (or arrays)."""
    return "".join(f"[{j}]" for j in index)


def _rows(a, field, name, n, d, shared_ok):
    """``a`` as ``(N, d)`` rows, or (``shared_ok``) one ``(d,)`` row shared by every window."""
    if (a.ndim == 2 and a.shape == (n, d)) or (shared_ok and a.shape == (d,)):
        return a
    expected = f"({d},) for all windows or ({n}, {d})" if shared_ok else f"({n}, {d})"
    raise ValueError(f"{name}: {field} has shape {a.shape}; it must be {expected}: {d} integers per window")


@functools.lru_cache(maxsize=256)
def _shared_rules(t, bounds, feature_level):
    """SLICE1's rules of the tensors (ranks, types, feature level), on a window of all of x;
    ``DescriptorError`` in DirectML's words (``Slice1Batch._said`` says them the caller's way)."""
    whole = _tensor(t, bounds)
    Slice1OperatorDesc(whole, whole, (0,) * len(bounds), bounds, (1,) * len(bounds), feature_level=feature_level)


def _windows_of(name, source, shape, positional, offsets, sizes, strides, per_sample):
    """Many windows' arguments, normalised: ``(offsets, sizes, strides, per_sample)`` of
    windows on an array of ``shape`` (the argument ``source``: ``x``, or the gradient's
    ``input_shape``)."""
    if positional:
        raise messages.positional(name, positional)
    _required(offsets, "window_offsets", name, "an (N, d) array of integers: a row per window")
    _required(sizes, "window_sizes", name, "one row of integers for every window, or one per window")
    if per_sample is not True and per_sample is not False and not isinstance(per_sample, np.bool_):
        raise TypeError(
            f"{name}: per_sample = {shown_value(per_sample)} must be a bool, not {type(per_sample).__name__}"
        )
    per_sample = bool(per_sample)
    d = len(shape) - per_sample
    if d < 1:
        raise ValueError(
            f"{name}: {source} has {len(shape)} dimension(s); windows need at least one"
            + (" besides the sample axis (per_sample=True)" if per_sample else "")
        )
    offsets = _window_array(offsets, "window_offsets", name, d)
    if offsets.ndim != 2 or offsets.shape[1] != d:
        raise ValueError(f"{name}: window_offsets has shape {offsets.shape}; it must be (N, {d}): {d} per window")
    n = len(offsets)
    if per_sample and n != shape[0]:
        raise ValueError(
            f"{name}: {n} windows for {source} of {shape[0]} samples (per_sample=True takes one per sample)"
        )
    sizes = _rows(_window_array(sizes, "window_sizes", name, d), "window_sizes", name, n, d, True)
    strides = np.ones(d, np.int64) if strides is None else _window_array(strides, "window_strides", name, d)
    strides = _rows(strides, "window_strides", name, n, d, True)
    return offsets, sizes, strides, per_sample


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
    def of(
        cls,
        shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        per_sample=False,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice1_batch(x, *positional, window_offsets=, window_sizes=, window_strides=,
        per_sample=)`` takes them: the windows by name."""
        windows = _windows_of(cls.NAME, "x", shape, positional, offsets, sizes, strides, per_sample)
        return _new(cls, (*windows, *options(feature_level, directml_types, cls.NAME)))

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
        said = dtype  # the messages name the caller's dtype
        if dtype.itemsize == 16 and self.directml_types is False:
            dtype = np.dtype(np.uint64)  # moved as pairs of words (``words``)
        t = _type_of(self, dtype)
        bounds = tuple(shape[1:] if self.per_sample else shape)
        if not n:  # no window: the rules of x, and of the shared sizes and strides, all the same
            sizes = sizes if sizes.ndim == 1 else np.ones(d, np.int64)
            strides = strides if strides.ndim == 1 else np.ones(d, np.int64)
            window = (0,) * d, tuple(map(int, sizes)), tuple(map(int, strides))
            # The window's rules on a stand-in x that holds it (sizes past what a tensor holds
            # are the window's to refuse, not the stand-in's).
            held = [min(max(z, 1), UINT32_MAX) for z in window[1]]
            room = _room(_filled(bounds), window[0], held, [True] * d)
            counts = tuple(max(1, (z - 1) // abs(s) + 1) if s else 1 for z, s in zip(held, window[2]))
            try:
                _shared_rules(t, _filled(bounds), self.feature_level)
            except DescriptorError as e:
                raise self._said(e, said) from None
            try:
                with _stand_in("InputTensor", [True] * d):
                    Slice1OperatorDesc(
                        _tensor(t, room), _tensor(t, counts, "OutputTensor"), *window, feature_level=self.feature_level
                    )
            except DescriptorError as e:
                raise self._said(e, said) from None
            return np.zeros((0, d), np.int64)
        try:
            _shared_rules(t, bounds, self.feature_level)  # ranks, types, level: on all of x
        except DescriptorError as e:
            raise self._said(e, said) from None
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
            self._refuse(said, t, bounds, np.flatnonzero(np.broadcast_to(bad, (n, d)).any(axis=1)))
        counts = sizes if smallest >= -1 and largest <= 1 else 1 + (sizes - 1) // np.abs(strides)
        if self.shared and counts.ndim == 2 and (counts != counts[0]).any():
            k = int(np.flatnonzero((counts != counts[0]).any(axis=1))[0])
            raise ValueError(
                f"{name}: window {k} takes {tuple(map(int, counts[k]))} elements and window 0 "
                f"{tuple(map(int, counts[0]))}: windows of one size must take as many each (per-window "
                "window_sizes give a list of arrays)"
            )
        return counts

    def _refuse(self, dtype, t, bounds, broken):
        """``DescriptorError`` with the descriptor's messages, in the caller's words, for the
        first broken windows."""
        name, n, d = self.NAME, *self.offsets.shape
        sizes, strides = np.broadcast_to(self.sizes, (n, d)), np.broadcast_to(self.strides, (n, d))
        lines = []
        for k in map(int, broken[:_WINDOWS_SHOWN]):
            window = tuple(tuple(map(int, a[k])) for a in (self.offsets, sizes, strides))
            counts = tuple(max(1, (z - 1) // abs(s) + 1) if s else 1 for z, s in zip(window[1], window[2]))
            try:
                Slice1OperatorDesc(
                    _tensor(t, bounds), _tensor(t, counts, "OutputTensor"), *window, feature_level=self.feature_level
                )
            except DescriptorError as e:
                lines.extend(self._said(e, dtype, k).violations)
        assert lines or not len(broken), "the descriptor accepts a window that the batch check refuses"
        # (A stride of -2^31, whose magnitude passes INT32_MAX, comes here and breaks nothing.)
        if len(broken) > _WINDOWS_SHOWN:
            lines.append(f"{name}: and {len(broken) - _WINDOWS_SHOWN} more windows break a rule")
        if lines:
            raise DescriptorError(lines)

    def _said(self, error, dtype, window=None):
        """``error`` in the caller's words: of window ``window`` (None: of every window)."""
        table = messages.fields(self, window=window)
        prefix = "" if window is None else f"window {window}: "
        return messages.reworded(error, self.function, table, prefix=prefix, dtype=dtype)

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
    _said = Slice1Batch._said
    results = Slice1Batch.results
    _counts = Slice1Batch._counts

    @classmethod
    def of(
        cls,
        input_shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        per_sample=False,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice1_batch_grad(dy, input_shape, *positional, window_offsets=, window_sizes=,
        window_strides=, per_sample=)`` takes them (``dy`` apart): the windows by name."""
        name = cls.NAME
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        negative = [i for i, n in enumerate(input_shape) if n < 0]
        if negative:
            i = negative[0]
            raise ValueError(f"{name}: input_shape[{i}] = {input_shape[i]} must not be negative")
        windows = _windows_of(name, "input_shape", input_shape, positional, offsets, sizes, strides, per_sample)
        return _new(cls, (input_shape, *windows, *options(feature_level, directml_types, cls.NAME)))

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

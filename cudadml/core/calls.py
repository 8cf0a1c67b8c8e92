"""Normalised calls: every array-function call as one immutable value.

An *operation* is what a call computes, whatever kind of arrays it is given: the operator, its
DirectML parameters after normalisation (exact ints, negative axes resolved, a basic index
parsed into windows, defaults filled in), the feature level and whether dtypes need a DirectML
type. Each is a ``NamedTuple`` made by its ``of`` from the public arguments and the input
shapes, which raises ``TypeError`` (a float, None or bool where an integer belongs, arguments
by position where the function takes them by name), ``IndexError`` or ``ValueError`` as the
array function documents, each naming the argument as the call does. ``of`` takes the input
shape(s), then the function's other arguments in its signature's order (``positional``: what
it was given by position). ``descriptor`` then applies DirectML's rules for a dtype and input
shapes: it builds the descriptor (``DescriptorError`` lists every broken rule, said in the
call's words by ``messages``) and gives the result shapes.

A ``Call`` is an operation with where and on what it runs: memory kind and device, dtype, and
every bound array's shape and strides. Its equality and hash are the cache key of the compiled
operator that ``runner`` makes from it alone. Adapters (``adapters``) take operations: the
PyTorch adapter runs one on views of its tensors, the Dask adapter validates it whole with
``descriptor`` and runs chunk-local operations derived from its parameters (``windows``).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, NamedTuple

import numpy as np

from . import messages
from .enums import FeatureLevel, TensorDataType
from .errors import DescriptorError, as_int, int_tuple, shown_value
from .tensor import SPAN_RULE, UINT32_MAX, BufferTensorDesc

__all__ = [
    "Call",
    "Description",
    "common_dtype",
    "data_type",
    "normalize_axis",
    "options",
]

NEWEST = FeatureLevel.newest()
_DEFAULTS = (NEWEST, True)
new_operation = tuple.__new__  # an operation from its fields, without the keyword-taking constructor (per call)


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
        level = NEWEST if feature_level is None else FeatureLevel.coerce(feature_level)
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
        promoting = _PROMOTING.get(name)
        hint = f"; {name} does not promote ({promoting} promotes as NumPy does)" if promoting else ""
        raise TypeError(f"{name}: {argument}[{k}] has dtype {dtypes[k]}, {argument}[0] has {dtype}{hint}")
    return dtype


#: The operators that take arrays of one dtype, and the function that promotes mixed ones instead.
_PROMOTING = {"join": "cudadml.numpy.concatenate"}


def ranked(name, shape, argument="x", verb="slice"):
    if len(shape) == 0:
        raise ValueError(f"{name}: {argument} is a 0-dimensional array (shape ()), which has nothing to {verb}")
    return shape


def rank_by_name(name, shape, positional, argument="x") -> int:
    """The rank of a call's array ``argument`` of ``shape``, the call's other arguments taken by
    name: ``TypeError`` for any given by position (``positional``, as ``messages.positional``
    words it), ``ValueError`` for a 0-dimensional array."""
    if positional:
        raise messages.positional(name, positional)
    return len(ranked(name, shape, argument))


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


def type_of(operation, dtype) -> TensorDataType:
    """``data_type`` of the array an operation's call names ``x``, ``dy`` or ``xs[0]``."""
    argument = "xs[0]" if operation.ARGUMENT == "xs" else operation.ARGUMENT
    return data_type(dtype, operation.directml_types, f"{operation.NAME}: {argument}.dtype")


def check_rank(name, ndim, **arrays):
    """The array-length rule for calls that return empty without a descriptor."""
    wrong = [f"{name}: len({field}) = {len(a)} must equal DimensionCount = {ndim}" for field, a in arrays.items()]
    wrong = [w for w, a in zip(wrong, arrays.values()) if len(a) != ndim]
    if wrong:
        raise DescriptorError(wrong)


def call_tensor(data_type, shape, role="InputTensor"):
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


def callers_words(descriptor):
    """An operation's ``descriptor`` method raising its ``DescriptorError`` in the caller's
    words (``messages``): the argument the caller passed for each DirectML field, DirectML's
    name in parentheses."""

    @functools.wraps(descriptor)
    def in_callers_words(self, dtype, shapes):
        try:
            return descriptor(self, dtype, shapes)
        except DescriptorError as e:
            raise messages.in_callers_words(self, e, shapes, dtype=dtype) from None

    return in_callers_words


def required(value, field, name, what="one integer per axis"):
    """``TypeError`` for an argument taken by name that the call left out (None)."""
    if value is None:
        raise TypeError(f"{name}: {field}= is required ({what})")
    return value


def int_args(values, field, name):
    """An argument of one integer per axis, as exact ints, in the caller's words."""
    return int_tuple(required(values, field, name), field, name, shown=True)


# An empty result has no DirectML descriptor (tensors cannot be empty), yet DirectML's rules
# hold for it all the same: the call's descriptor is built on a stand-in whose empty sizes are
# 1 and whose bounds, in the dimensions where nothing moves, hold the window; its every other
# rule (ranks, types, feature level, strides, offsets) is the call's. The room made is not the
# caller's array: a rule only it breaks (a span past a buffer's, a size past UINT32, a window
# past it) is not the call's (``stand_in``), and the array's own tensor is checked as it is.


def filled_sizes(sizes):
    """``sizes`` with each 0 made 1."""
    return tuple(n or 1 for n in sizes)


def room_for(bounds, starts, sizes, empty):
    """``bounds`` grown, where ``empty[i]``, to hold ``sizes[i]`` elements from ``starts[i]``
    (as far as a tensor's sizes go)."""
    return tuple(
        min(max(b, min(max(s, 0), 2**31) + z, 1), UINT32_MAX) if e else b
        for b, s, z, e in zip(bounds, starts, sizes, empty)
    )


@contextlib.contextmanager
def stand_in(role, empty):
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


def window_desc(desc, data_type, tensors, source, window, feature_level, empty=None):
    """The descriptor of a call of a window (SLICE's, SLICE1's, SLICE_GRAD's):
    ``desc(*tensors, *window, feature_level=)``, its tensors given as ``(role, sizes)`` in the
    descriptor's order, the window ``(offsets, sizes, strides)`` lying in ``tensors[source]``.

    ``empty``: per dimension, whether the call moves nothing there (None: it moves something
    everywhere). An empty call has no descriptor (DirectML tensors cannot be empty) and gets
    None, its rules checked all the same on a stand-in (``stand_in``): the window at least 1
    and ``tensors[source]`` made room for it along the empty dimensions, every other tensor's
    zero sizes made 1; the array ``tensors[source]`` stands for keeps its own rules."""
    if empty is None:
        return desc(
            *(call_tensor(data_type, sizes, role) for role, sizes in tensors), *window, feature_level=feature_level
        )
    offsets, sizes, strides = window
    sizes = tuple(z or 1 if e else z for z, e in zip(sizes, empty))
    role, bounds = tensors[source]
    call_tensor(data_type, filled_sizes(bounds), role)  # the array's own rules
    with stand_in(role, empty):
        desc(
            *(
                call_tensor(data_type, room_for(s, offsets, sizes, empty) if k == source else filled_sizes(s), r)
                for k, (r, s) in enumerate(tensors)
            ),
            offsets,
            sizes,
            strides,
            feature_level=feature_level,
        )
    return None


# The ``axis_map`` of the calls of a window (SLICE's, SLICE1's, SLICE_GRAD's), whose result has
# the axes of the array the window lies in: a property their classes share.
@property
def same_axes(self):
    """Per input axis, the result axis it becomes: the same one."""
    return tuple(range(len(self.offsets)))


def widened(operation, size, *also, last=False):
    """``operation``, a call of a window (``offsets``, ``sizes``, ``strides``), with one more
    axis of ``size`` elements taken whole: first (a batch, for ``vmap``) or ``last`` (the two
    words of a 16-byte element, for ``words``). ``also``: its other fields of one entry per
    axis, which take ``size`` there too."""

    def add(values, value):
        return (*values, value) if last else (value, *values)

    return operation._replace(
        offsets=add(operation.offsets, 0),
        sizes=add(operation.sizes, size),
        strides=add(operation.strides, 1),
        **{field: add(getattr(operation, field), size) for field in also},
    )


def window_fields(offsets, sizes, strides):
    """A window's arrays by their DirectML names (for the messages of empty calls)."""
    return {"InputWindowOffsets": offsets, "InputWindowSizes": sizes, "InputWindowStrides": strides}


def window_args(name, ndim, offsets, sizes, strides):
    """SLICE1's window arrays as int tuples (strides all 1 when omitted), in the caller's words."""
    return (
        int_args(offsets, "window_offsets", name),
        int_args(sizes, "window_sizes", name),
        (1,) * ndim if strides is None else int_args(strides, "window_strides", name),
    )


def filled_windows(windows):
    """An index's windows with each empty one made the first element: what is left to check
    of an empty result is the tensors' rules (ranks, types, feature level)."""
    return tuple((start, step, count) if count else (0, 1, 1) for start, step, count in windows)


# ---- many windows --------------------------------------------------------------------------------
# The windows of ``slice1_batch`` change from call to call (random crops), so they are arrays,
# checked all at once, and never part of a cache key (``runner`` keys what it compiles by the
# sizes and layouts alone).

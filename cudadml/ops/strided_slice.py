"""``cudadml.strided_slice`` (``x[key]`` for a basic index) and its gradient.

They build SLICE1's and SLICE_GRAD's descriptors from the index's windows; registered as
``OPERATOR`` and ``GRAD_OPERATOR``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from ..core import calls, memory, messages
from ..core.enums import FeatureLevel
from ..core.errors import int_tuple, shown_value
from ..core.indexing import index_key, parse_key, window_params
from ..core.operators import Chunking, Operator, Picture, register
from ..core.tensor import beyond_directml_bounds
from .slice1 import Slice1, Slice1OperatorDesc
from .slice_grad import SliceGrad, SliceGradOperatorDesc, gradient_messages


def _beyond_directml_bounds(descriptor):
    """An operation's ``descriptor`` method without DirectML's 32-bit bounds
    (``tensor.beyond_directml_bounds``): an index, as NumPy's, takes arrays of any size, and its
    kernels index in 64 bits. (Its operation is
    its own, so no call of SLICE1's or SLICE_GRAD's, which keep the bounds, shares its
    compiled operators.)"""

    @functools.wraps(descriptor)
    def unbounded(self, dtype, shapes):
        with beyond_directml_bounds():
            return descriptor(self, dtype, shapes)

    return unbounded


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
            calls.ranked(cls.NAME, shape)
        # An index NumPy refuses is refused as NumPy words it, naming the key.
        if feature_level is None and directml_types is True:  # the common case, without a call
            try:
                return _strided_slice(index_key(key), shape, calls.NEWEST, True)
            except (IndexError, TypeError, ValueError) as e:
                raise _of_key(cls.NAME, key, e) from None
        level, directml_types = calls.options(feature_level, directml_types, cls.NAME)
        try:
            return _strided_slice(index_key(key), shape, level, directml_types)
        except (IndexError, TypeError, ValueError) as e:
            raise _of_key(cls.NAME, key, e) from None

    @calls.callers_words
    @_beyond_directml_bounds
    def descriptor(self, dtype, shapes):
        (shape,), result_shape = shapes, self.result_shape
        t = calls.type_of(self, dtype)
        if 0 in result_shape:
            windows = calls.filled_windows(self.windows)
            Slice1OperatorDesc(
                calls.call_tensor(t, calls.filled_sizes(shape)),
                calls.call_tensor(t, tuple(c for _, _, c in windows), "OutputTensor"),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return calls.Description(None, (result_shape,))
        counts = tuple(c for _, _, c in self.windows)
        desc = Slice1OperatorDesc(
            calls.call_tensor(t, shape),
            calls.call_tensor(t, counts, "OutputTensor"),
            *window_params(self.windows),
            feature_level=self.feature_level,
        )
        return calls.Description(desc, (result_shape,), output_axes=self.axis_map)

    def words(self):
        return self._replace(
            windows=(*self.windows, (0, 1, 2)),
            result_shape=(*self.result_shape, 2),
            axis_map=(*self.axis_map, len(self.result_shape)),
        )


def _of_key(name, key, error):
    """``error``, raised reading ``key`` (as NumPy raises it), naming the call and the key."""
    return type(error)(f"{name}: key {shown_value(key)}: {error}")


@memory.cache(256)  # (an index of 64 dimensions holds 6 KB: core.memory.FIXED_BYTES)
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
        return calls.new_operation(
            cls, (input_shape, windows, result_shape, axis_map, *calls.options(feature_level, directml_types, cls.NAME))
        )

    def windows_for(self, dy_shape):
        """Per axis ``(start, step, count)``: the index's windows (``dy`` is its result)."""
        return self.windows

    @calls.callers_words
    @_beyond_directml_bounds
    def descriptor(self, dtype, shapes):
        shape, result_shape = self.input_shape, self.result_shape
        t = calls.type_of(self, dtype)
        if 0 in shape or 0 in result_shape:
            windows = calls.filled_windows(self.windows)
            SliceGradOperatorDesc(
                calls.call_tensor(t, tuple(c for _, _, c in windows), "InputGradientTensor"),
                calls.call_tensor(t, calls.filled_sizes(shape), "OutputGradientTensor"),
                *window_params(windows),
                feature_level=self.feature_level,
            )
            return calls.Description(None, (shape,), zeros=0 not in shape)
        counts = tuple(c for _, _, c in self.windows)
        desc = SliceGradOperatorDesc(
            calls.call_tensor(t, counts, "InputGradientTensor"),
            calls.call_tensor(t, shape, "OutputGradientTensor"),
            *window_params(self.windows),
            feature_level=self.feature_level,
        )
        return calls.Description(desc, (shape,), input_axes=self.axis_map)

    def words(self):
        return self._replace(
            input_shape=(*self.input_shape, 2),
            windows=(*self.windows, (0, 1, 2)),
            result_shape=(*self.result_shape, 2),
            axis_map=(*self.axis_map, len(self.result_shape)),
        )


# ---- Dask: chunking ----


def _chunk_window(operation, windows, rank):
    """``x[key]`` on one chunk: ``windows``, per input axis ``(start, step, count)`` in the
    chunk read, into a result of ``rank`` axes."""
    result_shape = [1] * rank
    for (_, _, n), r in zip(windows, operation.axis_map):
        if r is not None:
            result_shape[r] = n
    return operation._replace(windows=windows, result_shape=tuple(result_shape))


def _chunk_gradient(operation, extents, steps, counts, dy_shape):
    """The gradient on one piece: ``counts`` elements per axis, every ``steps``, fill the box
    of ``extents`` (from its end where the step is negative), from a ``dy`` box of ``dy_shape``."""
    windows = tuple((0 if st > 0 else e - 1, st if n > 1 else 1, n) for e, st, n in zip(extents, steps, counts))
    return operation._replace(input_shape=extents, windows=windows, result_shape=dy_shape)


# ---- PyTorch: gradient and vmap ----


def _via(op, through):
    """``op`` as the operation ``through`` (SLICE1's or SLICE_GRAD's call) of its windows, and
    the windows' counts: the shape, every axis of the index kept, its array is viewed as."""
    counts = tuple(n for _, _, n in op.windows)
    given = dict(zip(("offsets", "sizes", "strides"), window_params(op.windows)), output_sizes=counts)
    given.update(op._asdict())
    return through(*(given[f] for f in through._fields)), counts


def _gradient(op, shapes, grads):
    """``strided_slice_grad`` of the index, at the newest feature level."""
    index = op.windows, op.result_shape, op.axis_map
    return StridedSliceGrad(shapes[0], *index, *calls.options(None, op.directml_types)), grads


def _gradient_grad(op, shapes, grads):
    """``strided_slice`` of the index, at the newest feature level."""
    index = op.windows, op.result_shape, op.axis_map
    return StridedSlice(*index, *calls.options(None, op.directml_types)), grads


# ---- messages ----


def _messages(op, shapes, window, given):
    """SLICE1's names in the words of a call of ``cd.strided_slice`` (``messages.fields``)."""
    return {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        **messages.array("InputTensor", "x"),
        **messages.derived("OutputTensor"),
        **messages.BY_KEY,
        "DimensionCount": "x.ndim",
        **messages.bindings("x", "out"),
    }


def _grad_messages(op, shapes, window, given):
    """SLICE_GRAD's names in the words of a call of ``cd.strided_slice_grad`` (``messages.fields``)."""
    return {
        **gradient_messages(sizes="the count of key along axis {i}", ndim="len(input_shape)"),
        **messages.BY_KEY,
        "DimensionCount": "len(input_shape)",
    }


OPERATOR = register(
    Operator(
        "strided_slice",
        StridedSlice,
        via=lambda op: _via(op, Slice1),
        gradient=_gradient,
        chunked=Chunking("window", _chunk_window),  # each piece the index of one chunk of x
        picture=Picture("gather"),  # the cells of x the index reads
        messages=_messages,
    )
)
GRAD_OPERATOR = register(
    Operator(
        "strided_slice_grad",
        StridedSliceGrad,
        via=lambda op: _via(op, SliceGrad),
        gradient=_gradient_grad,
        chunked=Chunking("gradient", _chunk_gradient),
        picture=Picture("scatter"),  # the element of dy each cell of the result receives
        messages=_grad_messages,
    )
)

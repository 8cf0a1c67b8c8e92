"""SLICE1: DirectML's ``DML_SLICE1_OPERATOR_DESC`` and ``cudadml.slice1``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..core import calls, messages, operators
from ..core.enums import FeatureLevel
from ..core.indexing import window_reach, window_start
from ..core.tensor import BufferTensorDesc
from .slice_grad import SliceGrad


@dataclass(frozen=True, repr=False)
class Slice1OperatorDesc(operators.GatherDesc, operators.WindowDesc):
    """``DML_SLICE1_OPERATOR_DESC``: a window per dimension, read forwards or backwards.

    ``Output[c] = Input[CopyStart + InputWindowStrides * c]``, where CopyStart is the window
    offset, or its end ``offset + size - 1`` along dimensions with a negative stride. The
    output may take fewer elements than the window reaches.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read.
    output_tensor : BufferTensorDesc
        The tensor written: per dimension at most ``1 + (size - 1) // |stride|`` elements.
    input_window_offsets : sequence of int
        Per dimension, unsigned: where the window starts.
    input_window_sizes : sequence of int
        Per dimension, unsigned and at least 1: ``offset + size <= InputTensor.Sizes``.
    input_window_strides : sequence of int
        Per dimension, signed and never 0; a negative stride reads from the window's end.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4, 4]), cd.BufferTensorDesc(f32, [2, 2]),
    ...                       [0, 1], [4, 3], [-2, 2]).copy_start
    (3, 1)
    """

    NAME = "Slice1"
    SUPPORT = operators.window_support(FeatureLevel.LEVEL_2_1, FeatureLevel.LEVEL_3_0)
    _SOURCE = "input_tensor"
    _RESULT = "output_tensor"
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    input_window_offsets: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    input_window_sizes: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    input_window_strides: tuple[int, ...] = field(metadata=operators.INT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def pieces(self, port: int) -> list:
        """{pieces}

        SLICE1's is one piece: the output, element for element, from its window of the input
        (read backwards along a negative stride).

        {pieces parameters}

        {pieces returns}
        """
        return [(0, tuple((0, 1, count, start, step) for start, step, count in self.windows))]


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
    POSITIONAL_HINT = (  # messages.positional: the array, the arguments by name, why, what else
        "x",
        messages.WINDOW_ARGUMENTS,
        "SLICE1's window_sizes are the window read (the result takes 1 + (window_sizes[i] - 1) // "
        "|window_strides[i]| elements), where cd.slice's sizes are the result's shape and ONNX's and JAX's "
        "slices take ends",
        ", or cd.strided_slice(x, key) for x[key]",
    )

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
        offsets, sizes, strides = calls.window_args(
            name, calls.rank_by_name(name, shape, positional), offsets, sizes, strides
        )
        if output_sizes is None:  # the reach; an empty or negative window reaches nothing
            output_sizes = tuple(window_reach(n, st) if st and n > 0 else max(n, 0) for n, st in zip(sizes, strides))
        else:
            output_sizes = calls.int_args(output_sizes, "output_sizes", name)
        return calls.new_operation(
            cls, (offsets, sizes, strides, output_sizes, *calls.options(feature_level, directml_types, cls.NAME))
        )

    @property
    def windows(self):
        return tuple(
            (window_start(o, n, s), s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, self.output_sizes)
        )

    axis_map = calls.same_axes

    @calls.callers_words
    def descriptor(self, dtype, shapes):
        (shape,), out_sizes, window = shapes, self.output_sizes, (self.offsets, self.sizes, self.strides)
        t, empty = calls.type_of(self, dtype), None
        if 0 in out_sizes:  # nothing moves; the window's rules hold all the same
            calls.check_rank(self.NAME, len(shape), **calls.window_fields(*window))
            empty = [n == 0 for n in out_sizes]
        tensors = (("InputTensor", shape), ("OutputTensor", out_sizes))
        desc = calls.window_desc(Slice1OperatorDesc, t, tensors, 0, window, self.feature_level, empty)
        return calls.Description(desc, (out_sizes,))

    def words(self):
        return calls.widened(self, 2, "output_sizes", last=True)


# ---- Dask: chunking ----


def _chunk_window(operation, windows, rank):
    """SLICE1 on one chunk: ``windows``, per axis ``(start, step, count)`` in the chunk read,
    as a window from the first to the last element read (read from its end where the step is
    negative)."""
    offsets = tuple(s if st > 0 else s + st * (n - 1) for s, st, n in windows)
    sizes = tuple((n - 1) * abs(st) + 1 for _, st, n in windows)
    counts = tuple(n for *_, n in windows)
    return operation._replace(
        offsets=offsets, sizes=sizes, strides=tuple(st for _, st, _ in windows), output_sizes=counts
    )


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SLICE_GRAD of the window: the result's gradient placed where the window read."""

    window = {"offsets": op.offsets, "sizes": op.sizes, "strides": op.strides}
    return SliceGrad.of(grads[0].shape, shapes[0], **window, directml_types=op.directml_types), grads


def _batched(op, size):
    """The window in every element of a leading batch axis of ``size``, taken whole."""
    return calls.widened(op, size, "output_sizes")


# ---- messages ----


def _messages(op, shapes, window, given):
    """SLICE1's names in the words of a call of ``cd.slice1`` (``messages.fields``)."""
    reach = tuple(window_reach(n, st) if st and n > 0 else 0 for n, st in zip(op.sizes, op.strides))
    if op.output_sizes == reach:  # as defaulted: the window's reach, whose rules say it
        result = {".Sizes[{i}]": "1 + (window_sizes[{i}] - 1) // |window_strides[{i}]|", "": "the result"}
    else:
        result = {".Sizes[{i}]": "output_sizes[{i}]", ".DimensionCount": "len(output_sizes)", "": "the result"}
    return {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        "HINTS": (
            (r"^window_strides\[\d+\] = 0 ", "cd.slice's strides take 0 (one element, repeated)"),
            messages.NEGATIVE_OFFSET,
            messages.PAST_THE_END,
        ),
        **messages.array("InputTensor", "x"),
        **messages.derived("OutputTensor", **result),
        **messages.window(*messages.WINDOW_ARGUMENTS),
        "DimensionCount": "x.ndim",
        **messages.bindings("x", "out"),
    }


OPERATOR = operators.register(
    operators.Operator(
        "slice1",
        Slice1,
        Slice1OperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int[] offsets, int[] sizes, int[] strides, int[] output_sizes",
        chunked=operators.Chunking("window", _chunk_window),  # each piece a SLICE1 of one chunk of x
        picture=operators.Picture("gather"),  # the cells of x the window reads, backwards along a negative stride
        messages=_messages,
    )
)

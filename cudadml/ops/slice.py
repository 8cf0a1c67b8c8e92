"""SLICE: DirectML's ``DML_SLICE_OPERATOR_DESC`` and ``cudadml.slice``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..core import calls, messages, operators
from ..core.enums import FeatureLevel
from ..core.tensor import BufferTensorDesc
from .slice_grad import SliceGrad


@dataclass(frozen=True, repr=False)
class SliceOperatorDesc(operators.GatherDesc, operators.OperatorDesc):
    """``DML_SLICE_OPERATOR_DESC``: ``Output[c] = Input[Offsets + Strides * c]``.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read.
    output_tensor : BufferTensorDesc
        The tensor written, of sizes ``sizes``.
    offsets : sequence of int
        Per dimension, unsigned: the first element read.
    sizes : sequence of int
        Per dimension, unsigned: how many elements are read; equal to the output's sizes.
    strides : sequence of int
        Per dimension, unsigned: the step between elements read (0 repeats one element).
    {feature_level}

    Raises
    ------
    {raises}

    Examples
    --------
    >>> from cudadml import BufferTensorDesc, TensorDataType
    >>> f32 = TensorDataType.FLOAT32
    >>> desc = SliceOperatorDesc(BufferTensorDesc(f32, [1, 1, 4, 4]), BufferTensorDesc(f32, [1, 1, 3, 2]),
    ...                          offsets=[0, 0, 1, 2], sizes=[1, 1, 3, 2], strides=[1, 1, 1, 1])
    >>> desc.dimension_count
    4
    """

    NAME = "Slice"
    SUPPORT = operators.OperatorSupport(
        FeatureLevel.LEVEL_1_0,
        ((FeatureLevel.LEVEL_1_0, 4, 5), (FeatureLevel.LEVEL_3_0, 1, 8)),
        operators.SLICE_TYPES,
    )
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    offsets: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    sizes: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    strides: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def _validate(self, v):
        for i, (size, output_size) in self._dims("sizes", "output_tensor"):
            if size != output_size:
                v.add(f"Sizes[{i}] = {size} differs from OutputTensor.Sizes[{i}] = {output_size}")
        for i, (offset, size, stride, bound) in self._dims("offsets", "sizes", "strides", "input_tensor"):
            last = offset + stride * (size - 1)
            if size >= 1 and last >= bound:
                v.add(
                    f"Offsets[{i}] + Strides[{i}] * (Sizes[{i}] - 1) = {last} "
                    f"reads past InputTensor.Sizes[{i}] = {bound}"
                )

    @property
    def windows(self) -> tuple[tuple[int, int, int], ...]:
        """Per dimension ``(start, step, count)``: output element ``c`` reads input element
        ``start + step * c`` (what the plan lowers, and what pictures draw)."""
        return tuple(zip(self.offsets, self.strides, self.sizes))

    def pieces(self, port: int) -> list:
        """{pieces}

        SLICE's is one piece: the output, element for element, from its window of the input.

        {pieces parameters}

        {pieces returns}
        """
        return [(0, tuple((0, 1, count, start, step) for start, step, count in self.windows))]


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
    POSITIONAL_HINT = (  # messages.positional: the array, the arguments by name, why, what else
        "x",
        ("offsets", "sizes", "strides"),
        "SLICE's sizes are the result's shape, where cd.slice1's window_sizes are the window read and "
        "ONNX's and JAX's slices take ends",
        ", or cd.strided_slice(x, key) for x[key]",
    )

    @classmethod
    def of(cls, shape, positional=(), offsets=None, sizes=None, strides=None, feature_level=None, directml_types=True):
        """As ``slice(x, *positional, offsets=, sizes=, strides=)`` takes them: by name."""
        name = cls.NAME
        ndim = calls.rank_by_name(name, shape, positional)
        offsets, sizes = calls.int_args(offsets, "offsets", name), calls.int_args(sizes, "sizes", name)
        strides = (1,) * ndim if strides is None else calls.int_args(strides, "strides", name)
        return calls.new_operation(
            cls, (offsets, sizes, strides, *calls.options(feature_level, directml_types, cls.NAME))
        )

    @property
    def windows(self):
        """Per input axis ``(start, step, count)``; ``axis_map``: the result axis of each."""
        return tuple((o, s if n > 1 else 1, n) for o, s, n in zip(self.offsets, self.strides, self.sizes))

    axis_map = calls.same_axes

    @calls.callers_words
    def descriptor(self, dtype, shapes):
        (shape,), sizes = shapes, self.sizes
        t, empty = calls.type_of(self, dtype), None
        if 0 in sizes:  # nothing moves; the window's rules hold all the same
            calls.check_rank(self.NAME, len(shape), Offsets=self.offsets, Sizes=sizes, Strides=self.strides)
            empty = [n == 0 for n in sizes]
        tensors = (("InputTensor", shape), ("OutputTensor", sizes))
        window = self.offsets, sizes, self.strides
        desc = calls.window_desc(SliceOperatorDesc, t, tensors, 0, window, self.feature_level, empty)
        return calls.Description(desc, (sizes,))

    def words(self):
        return calls.widened(self, 2, last=True)


# ---- Dask: chunking ----


def _chunk_window(operation, windows, rank):
    """SLICE on one chunk: ``windows``, per axis ``(start, step, count)`` in the chunk read."""
    offsets, steps, counts = zip(*windows)
    return operation._replace(offsets=offsets, sizes=counts, strides=steps)


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SLICE_GRAD places the result's gradient where the slice read. An element read several
    times (a zero stride) receives the sum of its gradients, so those dimensions are summed
    first (by the gradient's own ``sum``); SLICE_GRAD places the rest."""

    (gy,) = grads
    repeated = [d for d, (n, s) in enumerate(zip(op.sizes, op.strides)) if s == 0 and n > 1]
    if repeated:
        gy = gy.sum(repeated, keepdim=True)
    steps = [s or 1 for s in op.strides]
    sizes = [(n - 1) * s + 1 for n, s in zip(gy.shape, steps)]
    window = {"offsets": op.offsets, "sizes": sizes, "strides": steps}
    return SliceGrad.of(gy.shape, shapes[0], **window, directml_types=op.directml_types), [gy]


def _batched(op, size):
    """The slice of every element of a leading batch axis of ``size``, taken whole."""
    return calls.widened(op, size)


# ---- messages ----


def _messages(op, shapes, window, given):
    """SLICE's names in the words of a call of ``cd.slice`` (``messages.fields``)."""
    return {
        "OPERATOR": "SLICE",
        "FIRST": "InputTensor",
        "HINTS": (
            (r"^strides\[\d+\] = -", "cd.slice1 (window_strides=) and cd.strided_slice take negative steps"),
            messages.NEGATIVE_OFFSET,
            messages.PAST_THE_END,
        ),
        **messages.array("InputTensor", "x"),
        **messages.derived("OutputTensor", **{"": "the result", ".Sizes[{i}]": "sizes[{i}]"}),
        "Offsets[{i}]": "offsets[{i}]",
        "Sizes[{i}]": "sizes[{i}]",
        "Strides[{i}]": "strides[{i}]",
        "len(Offsets)": "len(offsets)",
        "len(Sizes)": "len(sizes)",
        "len(Strides)": "len(strides)",
        "DimensionCount": "x.ndim",
        **messages.bindings("x", "out"),
    }


OPERATOR = operators.register(
    operators.Operator(
        "slice",
        Slice,
        SliceOperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int[] offsets, int[] sizes, int[] strides",
        chunked=operators.Chunking("window", _chunk_window),  # each piece a SLICE of one chunk of x
        picture=operators.Picture("gather"),  # the cells of x the window reads
        messages=_messages,
    )
)

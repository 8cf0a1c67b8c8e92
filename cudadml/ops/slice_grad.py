"""SLICE_GRAD: DirectML's ``DML_SLICE_GRAD_OPERATOR_DESC`` and ``cudadml.slice_grad``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..core import calls, messages, operators
from ..core import plan as _plan
from ..core.enums import FeatureLevel
from ..core.errors import int_tuple
from ..core.indexing import window_start
from ..core.tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class SliceGradOperatorDesc(operators.WindowDesc):
    """``DML_SLICE_GRAD_OPERATOR_DESC``: the backward pass of SLICE1.

    Every element of ``output_gradient_tensor`` (sizes of the forward input) that the forward
    slice read receives its gradient from ``input_gradient_tensor`` (sizes of the forward
    output); every other element becomes 0. Window arrays and rules as in SLICE1.

    Parameters
    ----------
    input_gradient_tensor : BufferTensorDesc
        The gradient of the forward output: the tensor read.
    output_gradient_tensor : BufferTensorDesc
        The gradient of the forward input: the tensor written, every element of it.
    input_window_offsets : sequence of int
        The forward SLICE1's window offsets.
    input_window_sizes : sequence of int
        The forward SLICE1's window sizes.
    input_window_strides : sequence of int
        The forward SLICE1's window strides (signed, never 0).
    feature_level : FeatureLevel, int or str, optional
        The level to validate against (default: the newest; SLICE_GRAD needs 3_0).

    Raises
    ------
    {raises}

    {examples}
    >>> cd.SliceGradOperatorDesc(cd.BufferTensorDesc(f32, [2, 2]), cd.BufferTensorDesc(f32, [4, 4]),
    ...                          [0, 0], [4, 4], [2, 2]).output_tensors[0].sizes
    (4, 4)
    """

    NAME = "SliceGrad"
    SUPPORT = operators.window_support(FeatureLevel.LEVEL_3_0, FeatureLevel.LEVEL_3_1)
    # The forward slice read from the tensor shaped like our output gradient.
    _SOURCE = "output_gradient_tensor"
    _RESULT = "input_gradient_tensor"
    input_gradient_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_gradient_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    input_window_offsets: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    input_window_sizes: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    input_window_strides: tuple[int, ...] = field(metadata=operators.INT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def pieces(self, port: int) -> list:
        """{pieces}

        SLICE_GRAD's: the lattice the forward window read, from the input gradient (walked
        forwards, the gradient backwards along a negative stride), and zero pieces for the
        elements off it.

        {pieces parameters}

        {pieces returns}
        """
        sizes = self.output_gradient_tensor.sizes
        lattice = []
        for start, step, count in self.windows:
            if step < 0:  # walk the window forwards, the gradient backwards
                lattice.append((start + step * (count - 1), -step if count > 1 else 1, count, count - 1, -1))
            else:
                lattice.append((start, step if count > 1 else 1, count, 0, 1))
        pieces = [(0, tuple(lattice))]
        for d, (lo, step, count, _, _) in enumerate(lattice):
            for gap in _gaps(lo, step, count, sizes[d]):
                dims = [(a, b, c, 0, 0) for a, b, c, _, _ in lattice[:d]]
                dims.append((*gap, 0, 0))
                dims += [(0, 1, n, 0, 0) for n in sizes[d + 1 :]]
                pieces.append((None, tuple(dims)))
        return pieces

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice_grad(
            self.input_gradient_tensor.data_type.element_size,
            self.output_gradient_tensor.sizes,
            output_strides[0],
            self.windows,
            input_strides[0],
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
    POSITIONAL_HINT = (  # messages.positional: the arrays, the arguments by name, why, what else
        "dy, input_shape",
        messages.WINDOW_ARGUMENTS,
        "they are SLICE1's window, as cd.slice1 takes them",
        "",
    )

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
        window = calls.window_args(name, calls.rank_by_name(name, dy_shape, positional, "dy"), offsets, sizes, strides)
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        return calls.new_operation(cls, (input_shape, *window, *calls.options(feature_level, directml_types, cls.NAME)))

    def windows_for(self, dy_shape):
        """Per axis ``(start, step, count)``: element ``c`` of ``dy`` lands at ``start + step * c``."""
        return tuple(
            (window_start(o, n, s), s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, dy_shape)
        )

    axis_map = calls.same_axes

    @calls.callers_words
    def descriptor(self, dtype, shapes):
        (dy_shape,), shape, window = shapes, self.input_shape, (self.offsets, self.sizes, self.strides)
        t, empty = calls.type_of(self, dtype), None
        if 0 in shape or 0 in dy_shape:  # nothing moves (a result of zeros, where it has elements)
            calls.check_rank(self.NAME, len(dy_shape), OutputGradientTensor=shape, **calls.window_fields(*window))
            empty = [n == 0 or c == 0 for n, c in zip(shape, dy_shape)]
        tensors = (("InputGradientTensor", dy_shape), ("OutputGradientTensor", shape))
        desc = calls.window_desc(SliceGradOperatorDesc, t, tensors, 1, window, self.feature_level, empty)
        return calls.Description(desc, (shape,), zeros=desc is None and 0 not in shape)

    def words(self):
        return calls.widened(self, 2, "input_shape", last=True)


# ---- Dask: chunking ----


def _chunk_gradient(operation, extents, steps, counts, dy_shape):
    """SLICE_GRAD on one piece: the window fills the box of ``extents``, every ``steps``."""
    return operation._replace(input_shape=extents, offsets=(0,) * len(extents), sizes=extents, strides=steps)


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SLICE1 of the window: the gradient read back where the forward slice read."""

    window = {"offsets": op.offsets, "sizes": op.sizes, "strides": op.strides}
    slice1 = operators.REGISTRY["slice1"].call  # by its record: slice1 imports this module (its gradient)
    return slice1.of(grads[0].shape, **window, output_sizes=shapes[0], directml_types=op.directml_types), grads


def _batched(op, size):
    """The window placed in every element of a leading batch axis of ``size``, taken whole."""
    return calls.widened(op, size, "input_shape")


# ---- pictures and messages ----


def _gaps(lo, step, count, size):
    """The elements of ``[0, size)`` off the lattice ``lo + step * k``, as lattices
    ``(lo, step, count)`` (``SliceGradOperatorDesc.pieces``' zeros)."""
    gaps = [(0, 1, lo)] if lo else []
    if count > 1:
        gaps += [(lo + r, step, count - 1) for r in range(1, step)]
    last = lo + step * (count - 1)
    if last + 1 < size:
        gaps.append((last + 1, 1, size - last - 1))
    return gaps


def gradient_messages(**dy) -> dict:
    """SLICE_GRAD's names that every call of it says alike (``messages.fields``): the gradient
    ``dy`` read (``dy``: its sizes and rank said otherwise, as ``messages.array`` takes them)
    and the result, of ``input_shape``."""
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **messages.array("InputGradientTensor", "dy", **dy),
        **messages.derived(
            "OutputGradientTensor",
            **{"": "input_shape", ".Sizes[{i}]": "input_shape[{i}]", ".DimensionCount": "len(input_shape)"},
        ),
        **messages.bindings("dy", "out"),
    }


def _messages(op, shapes, window, given):
    """SLICE_GRAD's names in the words of a call of ``cd.slice_grad`` (``messages.fields``)."""
    return {
        **gradient_messages(),
        **messages.window(*messages.WINDOW_ARGUMENTS),
        "len(OutputGradientTensor)": "len(input_shape)",
        "DimensionCount": "dy.ndim",
    }


OPERATOR = operators.register(
    operators.Operator(
        "slice_grad",
        SliceGrad,
        SliceGradOperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int[] input_shape, int[] offsets, int[] sizes, int[] strides",
        chunked=operators.Chunking("gradient", _chunk_gradient),  # one SLICE_GRAD per piece of dy
        picture=operators.Picture("scatter"),  # the element of dy each cell of the result receives
        messages=_messages,
    )
)

"""SLICE_GRAD: DirectML's ``DML_SLICE_GRAD_OPERATOR_DESC`` and ``cudadml.slice_grad``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .. import calls, messages, operators
from .. import plan as _plan
from ..enums import FeatureLevel
from ..errors import int_tuple
from ..indexing import window_start
from ..tensor import BufferTensorDesc, packed_strides


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

    Examples
    --------
    >>> import cudadml as cd
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> cd.SliceGradOperatorDesc(cd.BufferTensorDesc(f32, [2, 2]), cd.BufferTensorDesc(f32, [4, 4]),
    ...                          [0, 0], [4, 4], [2, 2]).output_tensors[0].sizes
    (4, 4)
    """

    NAME = "SliceGrad"
    SUPPORT = operators.OperatorSupport(
        FeatureLevel.LEVEL_3_0,
        ((FeatureLevel.LEVEL_3_0, 4, 5), (FeatureLevel.LEVEL_3_1, 1, 8)),
        ((FeatureLevel.LEVEL_3_0, operators.TYPES_2_1), (FeatureLevel.LEVEL_4_1, operators.TYPES_4_1)),
    )
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
        """The local pieces of output ``port`` in terms of the node's inputs, for graphs
        (``GraphDesc.compile`` composes them): a list of ``(source, dims)`` with per dimension
        ``(lo, step, count, src_lo, src_step)``, where output element ``lo + step * k`` takes
        element ``src_lo + src_step * k`` of input ``source`` (None: zero), for ``0 <= k <
        count``; the pieces tile the output exactly.

        SLICE_GRAD's: the lattice the forward window read, from the input gradient (walked
        forwards, the gradient backwards along a negative stride), and zero pieces for the
        elements off it.

        Parameters
        ----------
        port : int
            The output (0: SLICE_GRAD has one).

        Returns
        -------
        list of (int or None, tuple of (int, int, int, int, int))
            The pieces.
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
        if positional:
            raise messages.positional(name, positional)
        window = calls.window_args(name, len(calls.ranked(name, dy_shape, "dy")), offsets, sizes, strides)
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        return calls.new_operation(cls, (input_shape, *window, *calls.options(feature_level, directml_types, cls.NAME)))

    def windows_for(self, dy_shape):
        """Per axis ``(start, step, count)``: element ``c`` of ``dy`` lands at ``start + step * c``."""
        return tuple(
            (window_start(o, n, s), s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, dy_shape)
        )

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @calls.callers_words
    def describe(self, dtype, shapes):
        name, (dy_shape,), shape = self.NAME, shapes, self.input_shape
        window = self.offsets, self.sizes, self.strides
        t = calls.type_of(self, dtype)
        if 0 in shape or 0 in dy_shape:
            calls.check_rank(name, len(dy_shape), OutputGradientTensor=shape, **calls.window_fields(*window))
            empty = [n == 0 or c == 0 for n, c in zip(shape, dy_shape)]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            calls.call_tensor(t, calls.filled_sizes(shape), "OutputGradientTensor")  # the result's own rules
            with calls.stand_in("OutputGradientTensor", empty):
                SliceGradOperatorDesc(
                    calls.call_tensor(t, calls.filled_sizes(dy_shape), "InputGradientTensor"),
                    calls.call_tensor(t, calls.room_for(shape, self.offsets, sizes, empty), "OutputGradientTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return calls.Description(None, (shape,), zeros=0 not in shape)
        desc = SliceGradOperatorDesc(
            calls.call_tensor(t, dy_shape, "InputGradientTensor"),
            calls.call_tensor(t, shape, "OutputGradientTensor"),
            *window,
            feature_level=self.feature_level,
        )
        return calls.Description(desc, (shape,))

    def words(self):
        return self._replace(
            input_shape=(*self.input_shape, 2),
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
        )


# ---- Dask: chunking ----


def _chunk_gradient(operation, extents, steps, counts, dy_shape):
    """SLICE_GRAD on one piece: the window fills the box of ``extents``, every ``steps``."""
    return operation._replace(input_shape=extents, offsets=(0,) * len(extents), sizes=extents, strides=steps)


def _chunked(kit, operation, inputs, module, shapes, chunks):
    """Each output chunk gathers the window positions inside it from the ``dy`` chunks they
    come from (one SLICE_GRAD per piece)."""
    (dy,) = inputs
    return kit.gradient(operation, inputs, module, shapes, chunks, operation.windows_for(dy.shape), _chunk_gradient)


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SLICE1 of the window: the gradient read back where the forward slice read."""

    window = {"offsets": op.offsets, "sizes": op.sizes, "strides": op.strides}
    slice1 = operators.REGISTRY["slice1"].call
    return slice1.of(grads[0].shape, **window, output_sizes=shapes[0], directml_types=op.directml_types), grads


def _batched(op, size):
    """The window placed in every element of a leading batch axis of ``size``, taken whole."""
    window = {"offsets": (0, *op.offsets), "sizes": (size, *op.sizes), "strides": (1, *op.strides)}
    return op._replace(input_shape=(size, *op.input_shape), **window)


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


def _picture(kit, call=None, desc=None):
    """SLICE_GRAD drawn with the display's ``kit`` (``explain``): each cell of the result shows
    the element of dy it receives (zeros elsewhere); of a ``call`` of ``cd.slice_grad``, or of
    a descriptor ``desc``."""
    if desc is not None:
        grid = desc.output_gradient_tensor
        title = f"{type(desc).__name__}: {operators.desc_summary(desc)}"
        mults = packed_strides(desc.input_gradient_tensor.sizes)
        return kit.scatter(title, desc.windows, mults, grid.sizes, grid.effective_strides, "InputGradientTensor")
    operation, shape, (received,) = kit.operation(SliceGrad, call)
    title = f"cd.{call.name}: dy {shape} -> {received}"
    mults = kit.mults(shape, operation.axis_map)  # dy is indexed as the slice's result
    return kit.scatter(title, operation.windows_for(shape), mults, received, packed_strides(received), "dy")


def _messages(op, shapes, window, given):
    """SLICE_GRAD's names in the words of a call of ``cd.slice_grad`` (``messages.fields``)."""
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **messages.array("InputGradientTensor", "dy"),
        **messages.derived(
            "OutputGradientTensor",
            **{"": "input_shape", ".Sizes[{i}]": "input_shape[{i}]", ".DimensionCount": "len(input_shape)"},
        ),
        **messages.window(*messages.WINDOW_ARGUMENTS),
        "len(OutputGradientTensor)": "len(input_shape)",
        "DimensionCount": "dy.ndim",
        **messages.bindings("dy", "out"),
    }


OPERATOR = operators.register(
    operators.Operator(
        "slice_grad",
        SliceGrad,
        SliceGradOperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int[] input_shape, int[] offsets, int[] sizes, int[] strides",
        chunked=_chunked,
        picture=_picture,
        messages=_messages,
    )
)

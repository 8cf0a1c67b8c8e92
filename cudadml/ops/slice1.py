"""SLICE1: DirectML's ``DML_SLICE1_OPERATOR_DESC`` and ``cudadml.slice1``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .. import calls, messages, operators
from .. import plan as _plan
from ..enums import FeatureLevel
from ..indexing import window_reach, window_start
from ..tensor import BufferTensorDesc, packed_strides


@dataclass(frozen=True, repr=False)
class Slice1OperatorDesc(operators.WindowDesc):
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

    Examples
    --------
    >>> import cudadml as cd
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4, 4]), cd.BufferTensorDesc(f32, [2, 2]),
    ...                       [0, 1], [4, 3], [-2, 2]).copy_start
    (3, 1)
    """

    NAME = "Slice1"
    SUPPORT = operators.OperatorSupport(
        FeatureLevel.LEVEL_2_1,
        ((FeatureLevel.LEVEL_2_1, 4, 5), (FeatureLevel.LEVEL_3_0, 1, 8)),
        ((FeatureLevel.LEVEL_2_1, operators.TYPES_2_1), (FeatureLevel.LEVEL_4_1, operators.TYPES_4_1)),
    )
    _SOURCE = "input_tensor"
    _RESULT = "output_tensor"
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
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

        SLICE1's is one piece: the output, element for element, from its window of the input
        (read backwards along a negative stride).

        Parameters
        ----------
        port : int
            The output (0: SLICE1 has one).

        Returns
        -------
        list of (int or None, tuple of (int, int, int, int, int))
            The pieces.
        """
        return [(0, tuple((0, 1, count, start, step) for start, step, count in self.windows))]

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice(
            self.input_tensor.data_type.element_size, self.windows, input_strides[0], output_strides[0]
        )


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
        if positional:
            raise messages.positional(name, positional)
        offsets, sizes, strides = calls.window_args(name, len(calls.ranked(name, shape)), offsets, sizes, strides)
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

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @calls.callers_words
    def describe(self, dtype, shapes):
        name, (shape,), out_sizes = self.NAME, shapes, self.output_sizes
        window = self.offsets, self.sizes, self.strides
        t = calls.type_of(self, dtype)
        if 0 in out_sizes:
            calls.check_rank(name, len(shape), **calls.window_fields(*window))
            empty = [n == 0 for n in out_sizes]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            calls.call_tensor(t, calls.filled_sizes(shape))  # x's own rules
            with calls.stand_in("InputTensor", empty):
                Slice1OperatorDesc(
                    calls.call_tensor(t, calls.room_for(shape, self.offsets, sizes, empty)),
                    calls.call_tensor(t, calls.filled_sizes(out_sizes), "OutputTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return calls.Description(None, (out_sizes,))
        desc = Slice1OperatorDesc(
            calls.call_tensor(t, shape),
            calls.call_tensor(t, out_sizes, "OutputTensor"),
            *window,
            feature_level=self.feature_level,
        )
        return calls.Description(desc, (out_sizes,))

    def words(self):
        return self._replace(
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
            output_sizes=(*self.output_sizes, 2),
        )


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


def _chunked(kit, operation, inputs, module, shapes, chunks):
    """Each piece a SLICE1 of one chunk of ``x``."""
    return kit.window(operation, inputs, module, shapes, chunks, _chunk_window)


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SLICE_GRAD of the window: the result's gradient placed where the window read."""

    window = {"offsets": op.offsets, "sizes": op.sizes, "strides": op.strides}
    slice_grad = operators.REGISTRY["slice_grad"].call
    return slice_grad.of(grads[0].shape, shapes[0], **window, directml_types=op.directml_types), grads


def _batched(op, size):
    """The window in every element of a leading batch axis of ``size``, taken whole."""
    window = {"offsets": (0, *op.offsets), "sizes": (size, *op.sizes), "strides": (1, *op.strides)}
    return op._replace(output_sizes=(size, *op.output_sizes), **window)


# ---- pictures and messages ----


def _picture(kit, call=None, desc=None):
    """SLICE1 drawn with the display's ``kit`` (``explain``): the cells of x that its window
    reads (backwards along a negative stride), each numbered with the output elements that read
    it; of a ``call`` of ``cd.slice1``, or of a descriptor ``desc``."""
    if desc is not None:
        x = desc.input_tensor
        title = f"{type(desc).__name__}: {operators.desc_summary(desc)}"
        mults = packed_strides(desc.output_tensor.sizes)
        return kit.gather(title, desc.windows, mults, x.sizes, x.effective_strides, "InputTensor")
    operation, shape, (result,) = kit.operation(Slice1, call)
    title = f"cd.{call.name}: x {shape} -> {result}"
    mults = kit.mults(result, operation.axis_map)
    return kit.gather(title, operation.windows, mults, shape, packed_strides(shape), "x")


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
        chunked=_chunked,
        picture=_picture,
        messages=_messages,
    )
)

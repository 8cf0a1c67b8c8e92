"""SPLIT: DirectML's ``DML_SPLIT_OPERATOR_DESC`` and ``cudadml.split``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..core import calls, messages, operators
from ..core import plan as _plan
from ..core.enums import FeatureLevel
from ..core.errors import DescriptorError, as_int, int_tuple, shown_value
from ..core.tensor import BufferTensorDesc
from .join import Join


@dataclass(frozen=True, repr=False)
class SplitOperatorDesc(operators.PartsDesc):
    """``DML_SPLIT_OPERATOR_DESC``: split the input along ``axis`` into ``len(output_tensors)`` parts.

    The parts' sizes along ``axis`` sum to the input's, and their other sizes equal the
    input's (one output is a copy).

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor split.
    output_tensors : sequence of BufferTensorDesc
        The parts, in order along ``axis``.
    axis : int
        The dimension split, from 0.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> cd.SplitOperatorDesc(cd.BufferTensorDesc(f32, [6, 2]),
    ...                      [cd.BufferTensorDesc(f32, [2, 2]), cd.BufferTensorDesc(f32, [4, 2])], 0).output_count
    2
    """

    NAME = "Split"
    _WHOLE = "input_tensor"
    _PARTS = "output_tensors"
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensors: tuple[BufferTensorDesc, ...] = field(metadata=operators.OUTPUTS)
    axis: int = field(metadata=operators.AXIS)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def output_count(self) -> int:
        return len(self.output_tensors)

    def pieces(self, port: int) -> list:
        """{pieces}

        SPLIT's is one piece: output ``port``, element for element, from its part of the input.

        Parameters
        ----------
        port : int
            The output, the part's index.

        {pieces returns}
        """
        start = sum(t.sizes[self.axis] for t in self.output_tensors[:port])
        sizes = self.output_tensors[port].sizes
        return [(0, tuple((0, 1, n, start if d == self.axis else 0, 1) for d, n in enumerate(sizes)))]

    def _lower(self, input_strides, output_strides):
        return _plan.plan_split(
            self.input_tensor.data_type.element_size,
            self.input_tensor.sizes,
            [t.sizes for t in self.output_tensors],
            self.axis,
            input_strides[0],
            output_strides,
        )


# How a call by position would read, said (``Split.POSITIONAL_HINT``).


def _positional(given) -> TypeError:
    """The ``TypeError`` for ``split(x, *given)`` (``Split.POSITIONAL_HINT``): an integer by
    position is a number of parts to NumPy and a part size to PyTorch, and sizes are indices to
    NumPy; it says which to pass by name."""
    shown = ", ".join(shown_value(v) for v in given)
    first = given[0]
    axis = f", axis={shown_value(given[1])}" if len(given) > 1 else ""
    if isinstance(first, (int, np.integer)) and not isinstance(first, (bool, np.bool_)):
        return TypeError(
            f"cd.split(x, {shown}): an integer by position reads as a number of parts to np.split but as a part "
            f"size to torch.split; pass parts={int(first)}{axis} ({int(first)} equal parts), or "
            f"split_sizes={int(first)}{axis} (parts of {int(first)}, the last one smaller, as torch.split makes)"
        )
    return TypeError(
        f"cd.split(x, {shown}): DirectML's split_sizes are part sizes, where np.split takes indices and "
        f"torch.split sizes or a part size; pass split_sizes={messages.written(first)}{axis} "
        f"({_parts_said(first)}), or use cudadml.numpy.split for NumPy's meaning"
    )


def _parts_said(sizes) -> str:
    """``parts of 5 and 5``: what sizes given as ``split_sizes`` make."""
    try:
        sizes = [operator.index(s) for s in sizes]
    except TypeError:
        return "parts of those sizes"
    if not sizes:
        return "no parts"
    if len(sizes) == 1:
        return f"one part of {sizes[0]}"
    return f"parts of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]}"


def _parts_of(size, n, axis, name) -> tuple:
    """The sizes of ``torch.split(t, size)``'s parts of an axis of ``n``: parts of ``size``,
    the last one smaller where ``size`` does not divide ``n``; one empty part of an empty axis."""
    if size < 0:
        raise ValueError(f"{name}: split_sizes = {size}, a part size, must not be negative")
    if n == 0:
        return (0,)
    if size == 0:
        raise ValueError(
            f"{name}: split_sizes = 0, a part size, can only be 0 where x.shape[{axis}] is 0, not {n} (as in "
            "torch.split); pass parts= for a number of equal parts"
        )
    return (size,) * (n // size) + ((n % size,) if n % size else ())


class Split(NamedTuple):
    """SPLIT: ``x`` cut along ``axis`` into parts of ``sizes``."""

    axis: int
    sizes: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "split"
    ARGUMENT = "x"
    NAME = "split"
    POSITIONAL_HINT = staticmethod(_positional)  # messages.positional: split words its own
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
        the parts, or their number, by name (``split_sizes=`` an integer is one part size, as
        ``torch.split``'s is)."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        if (split_sizes is None) == (parts is None):
            given = "both" if parts is not None else "neither"
            raise TypeError(
                f"{name}: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got {given}"
            )
        axis = calls.normalize_axis(axis, len(calls.ranked(name, shape, verb="split")), name)
        n = shape[axis]
        if parts is not None:
            if hasattr(parts, "__iter__") and not isinstance(parts, (str, bytes)):
                raise TypeError(
                    f"{name}: parts = {shown_value(parts)} must be an integer (a number of equal parts), not "
                    f"{type(parts).__name__}; the size of each part goes in split_sizes="
                )
            count = as_int(parts, "parts", name, "an integer (a number of equal parts)", shown=True)
            if count < 1:
                raise ValueError(f"{name}: parts = {count} must be at least 1")
            if n % count:
                raise ValueError(
                    f"{name}: parts = {count}: x.shape[{axis}] = {n} does not divide into {count} equal parts; "
                    f"pass split_sizes= for parts of other sizes (cudadml.numpy.array_split(x, {count}) makes "
                    "parts that differ by at most 1, as NumPy's does)"
                )
            sizes = (n // count,) * count
        elif isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, (bool, np.bool_)):
            sizes = _parts_of(int(split_sizes), n, axis, name)
        else:
            sizes = int_tuple(split_sizes, "split_sizes", name, shown=True)
            negative = [k for k, size in enumerate(sizes) if size < 0]
            if negative:
                k = negative[0]
                raise ValueError(f"{name}: split_sizes[{k}] = {sizes[k]} must not be negative")
        return calls.new_operation(cls, (axis, sizes, *calls.options(feature_level, directml_types, cls.NAME)))

    def results(self, shape):
        axis = self.axis
        return tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in self.sizes)

    @calls.callers_words
    def descriptor(self, dtype, shapes):
        (shape,) = shapes
        total, axis = sum(self.sizes), self.axis
        if total != shape[axis]:  # the descriptor's rule, which an empty x or part would not reach
            whole = f"InputTensor.Sizes[{axis}] = {shape[axis]}"
            raise DescriptorError([f"{self.NAME}: OutputTensors' Sizes[{axis}] sum to {total}, not {whole}"])
        parts = self.results(shape)
        bound = tuple(k for k, s in enumerate(parts) if 0 not in s)  # DirectML tensors cannot be empty
        t = calls.type_of(self, dtype)
        if not bound:
            filled = [calls.filled_sizes(s) for s in parts]
            side = calls.filled_sizes(shape)  # no parts: x's own sizes (and DirectML refuses an OutputCount of 0)
            whole = (*side[: self.axis], sum(s[self.axis] for s in filled) or side[self.axis], *side[self.axis + 1 :])
            SplitOperatorDesc(
                calls.call_tensor(t, whole),
                [calls.call_tensor(t, s, f"OutputTensors[{k}]") for k, s in enumerate(filled)],
                self.axis,
                feature_level=self.feature_level,
            )
            return calls.Description(None, parts, bound_outputs=())
        whole = calls.call_tensor(t, shape)  # x's rules first: its parts' follow from them
        outs = [calls.call_tensor(t, parts[k], f"OutputTensors[{j}]") for j, k in enumerate(bound)]
        desc = SplitOperatorDesc(whole, outs, self.axis, feature_level=self.feature_level)
        return calls.Description(desc, parts, bound_outputs=bound)

    def words(self):
        return self


# ---- Dask: chunking ----


def _chunk_part(operation, counts):
    """A piece of a part: a one-part SPLIT of a box of ``counts`` elements per axis."""
    return operation._replace(sizes=(counts[operation.axis],))


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """JOIN of the parts' gradients along the axis."""

    return Join.of(grads[0].shape, op.axis, directml_types=op.directml_types), grads


def _batched(op, size):
    """The same axis, one further in."""
    return op._replace(axis=op.axis + 1)


# ---- messages ----


def _messages(op, shapes, window, given):
    """SPLIT's names in the words of a call of ``cd.split`` (``messages.fields``)."""
    parts = op.results(shapes[0]) if shapes else ()
    bound = [k for k, s in enumerate(parts) if 0 not in s] or list(range(len(parts)))
    axis = op.axis

    def part_size(i, k):  # a part's size along the axis is its split size; the others are x's
        return f"split_sizes[{bound[k] if k < len(bound) else k}]" if i == axis else None

    return {
        "OPERATOR": "SPLIT",
        "FIRST": "InputTensor",
        **messages.array("InputTensor", "x"),
        **messages.derived("OutputTensors[{k}]", **{".Sizes[{i}]": part_size}),
        "OutputTensors": "split_sizes",
        "OutputCount": "len(split_sizes)",
        "Axis": "axis",
        "DimensionCount": "x.ndim",
        "inputs[{i}]": "x",
        "outputs[{i}]": lambda i, k: f"out[{bound[i] if i < len(bound) else i}]",
    }


OPERATOR = operators.register(
    operators.Operator(
        "split",
        Split,
        SplitOperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int axis, int[] sizes",
        chunked=operators.Chunking("split", _chunk_part),
        picture=operators.Picture("split"),  # the part each cell of x goes to
        messages=_messages,
    )
)

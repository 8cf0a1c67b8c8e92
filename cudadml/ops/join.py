"""JOIN: DirectML's ``DML_JOIN_OPERATOR_DESC`` and ``cudadml.join``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from ..core import calls, messages, operators
from ..core import plan as _plan
from ..core.enums import FeatureLevel
from ..core.tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class JoinOperatorDesc(operators.PartsDesc):
    """``DML_JOIN_OPERATOR_DESC``: concatenate ``input_tensors`` along ``axis`` (SPLIT's inverse).

    Parameters
    ----------
    input_tensors : sequence of BufferTensorDesc
        The parts, in order along ``axis``.
    output_tensor : BufferTensorDesc
        The tensor written: the parts' sizes along ``axis`` sum to its size there.
    axis : int
        The dimension joined along, from 0.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> cd.JoinOperatorDesc([cd.BufferTensorDesc(f32, [1, 3]), cd.BufferTensorDesc(f32, [1, 2])],
    ...                     cd.BufferTensorDesc(f32, [1, 5]), 1).input_count
    2
    """

    NAME = "Join"
    _WHOLE = "output_tensor"
    _PARTS = "input_tensors"
    input_tensors: tuple[BufferTensorDesc, ...] = field(metadata=operators.INPUTS)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    axis: int = field(metadata=operators.AXIS)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def input_count(self) -> int:
        return len(self.input_tensors)

    def pieces(self, port: int) -> list:
        """{pieces}

        JOIN's: a piece per input, each its part of the output, element for element.

        {pieces parameters}

        {pieces returns}
        """
        pieces, start = [], 0
        for k, t in enumerate(self.input_tensors):
            pieces.append((k, tuple((start if d == self.axis else 0, 1, n, 0, 1) for d, n in enumerate(t.sizes))))
            start += t.sizes[self.axis]
        return pieces

    def _lower(self, input_strides, output_strides):
        return _plan.plan_join(
            self.output_tensor.data_type.element_size,
            self.output_tensor.sizes,
            [t.sizes for t in self.input_tensors],
            self.axis,
            input_strides,
            output_strides[0],
        )


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
        """``shape``: the first array's (the others are checked by ``descriptor``)."""
        name = cls.NAME
        if len(shape) == 0:
            raise ValueError(f"{name}: xs[0] is a 0-dimensional array (shape ()), which has nothing to join")
        return calls.new_operation(
            cls, (calls.normalize_axis(axis, len(shape), name), *calls.options(feature_level, directml_types, cls.NAME))
        )

    @calls.callers_words
    def descriptor(self, dtype, shapes):
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
            filled = [calls.filled_sizes(s) for s in shapes]
            whole = (*filled[0][:axis], sum(s[axis] for s in filled), *filled[0][axis + 1 :])
            t = calls.type_of(self, dtype)
            JoinOperatorDesc(
                [calls.call_tensor(t, s, f"InputTensors[{k}]") for k, s in enumerate(filled)],
                calls.call_tensor(t, whole, "OutputTensor"),
                axis,
                feature_level=self.feature_level,
            )
            return calls.Description(None, (out_shape,), bound_inputs=())
        t = calls.type_of(self, dtype)
        ins = [calls.call_tensor(t, shapes[k], f"InputTensors[{j}]") for j, k in enumerate(bound)]
        desc = JoinOperatorDesc(
            ins, calls.call_tensor(t, out_shape, "OutputTensor"), axis, feature_level=self.feature_level
        )
        return calls.Description(desc, (out_shape,), bound_inputs=bound)

    def words(self):
        return self


# ---- Dask: chunking ----


def _chunk_part(operation, counts):
    """A piece of the result: a one-array JOIN (the call as it is) of a box of ``counts``."""
    return operation


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """SPLIT of the result's gradient into the inputs' sizes along the axis."""

    sizes = [s[op.axis] for s in shapes]
    split = operators.REGISTRY["split"].call  # by its record: split imports this module (its gradient)
    return split.of(grads[0].shape, split_sizes=sizes, axis=op.axis, directml_types=op.directml_types), grads


def _batched(op, size):
    """The same axis, one further in."""
    return op._replace(axis=op.axis + 1)


# ---- messages ----


def _messages(op, shapes, window, given):
    """JOIN's names in the words of a call of ``cd.join`` (``messages.fields``)."""
    bound = [k for k, s in enumerate(shapes) if 0 not in s] or list(range(len(shapes)))

    def xs(k):
        return f"xs[{bound[k] if k < len(bound) else k}]"

    axis = op.axis
    return {
        "OPERATOR": "JOIN",
        "FIRST": "InputTensors[0]",
        "InputTensors[{i}]": lambda i, k: xs(i),
        "InputTensors[{k}].Sizes[{i}]": lambda i, k: f"{xs(k)}.shape[{i}]",
        "InputTensors[{k}].DimensionCount": lambda i, k: f"{xs(k)}.ndim",
        "InputTensors[{k}].DataType": lambda i, k: f"{xs(k)}.dtype",
        **messages.derived(
            "OutputTensor",
            **{"": "the result", ".Sizes[{i}]": lambda i, k: None if i == axis else f"{xs(0)}.shape[{i}]"},
        ),
        "InputCount": "len(xs)",
        "Axis": "axis",
        "DimensionCount": f"{xs(0)}.ndim",
        "inputs[{i}]": lambda i, k: xs(i),
        "outputs[{i}]": "out",
    }


OPERATOR = operators.register(
    operators.Operator(
        "join",
        Join,
        JoinOperatorDesc,
        gradient=_gradient,
        batched=_batched,
        torch_schema="int axis",
        chunked=operators.Chunking("join", _chunk_part),
        picture=operators.Picture("join"),  # the part each cell of the result comes from
        messages=_messages,
    )
)

"""JOIN: DirectML's ``DML_JOIN_OPERATOR_DESC`` and ``cudadml.join``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .. import plan as _plan
from ..calls import (
    Description,
    call_tensor,
    callers_words,
    filled_sizes,
    new_operation,
    normalize_axis,
    options,
    type_of,
)
from ..enums import FeatureLevel
from ..operators import AXIS, INPUTS, OUTPUT, Operator, PartsDesc, register
from ..tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class JoinOperatorDesc(PartsDesc):
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

    Examples
    --------
    >>> import cudadml as cd
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> cd.JoinOperatorDesc([cd.BufferTensorDesc(f32, [1, 3]), cd.BufferTensorDesc(f32, [1, 2])],
    ...                     cd.BufferTensorDesc(f32, [1, 5]), 1).input_count
    2
    """

    NAME = "Join"
    _WHOLE = "output_tensor"
    _PARTS = "input_tensors"
    input_tensors: tuple[BufferTensorDesc, ...] = field(metadata=INPUTS)
    output_tensor: BufferTensorDesc = field(metadata=OUTPUT)
    axis: int = field(metadata=AXIS)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def input_count(self) -> int:
        return len(self.input_tensors)

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
        """``shape``: the first array's (the others are checked by ``describe``)."""
        name = cls.NAME
        if len(shape) == 0:
            raise ValueError(f"{name}: xs[0] is a 0-dimensional array (shape ()), which has nothing to join")
        return new_operation(
            cls, (normalize_axis(axis, len(shape), name), *options(feature_level, directml_types, cls.NAME))
        )

    @callers_words
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
            filled = [filled_sizes(s) for s in shapes]
            whole = (*filled[0][:axis], sum(s[axis] for s in filled), *filled[0][axis + 1 :])
            t = type_of(self, dtype)
            JoinOperatorDesc(
                [call_tensor(t, s, f"InputTensors[{k}]") for k, s in enumerate(filled)],
                call_tensor(t, whole, "OutputTensor"),
                axis,
                feature_level=self.feature_level,
            )
            return Description(None, (out_shape,), bound_inputs=())
        t = type_of(self, dtype)
        ins = [call_tensor(t, shapes[k], f"InputTensors[{j}]") for j, k in enumerate(bound)]
        desc = JoinOperatorDesc(ins, call_tensor(t, out_shape, "OutputTensor"), axis, feature_level=self.feature_level)
        return Description(desc, (out_shape,), bound_inputs=bound)

    def words(self):
        return self


OPERATOR = register(
    Operator(
        "join",
        Join,
        JoinOperatorDesc,
        gradient=None,
        batched=None,
        torch_schema=None,
        chunked=None,
        picture=None,
        messages=None,
    )
)

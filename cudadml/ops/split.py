"""SPLIT: DirectML's ``DML_SPLIT_OPERATOR_DESC`` and ``cudadml.split``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .. import messages
from .. import plan as _plan
from ..calls import (
    Description,
    call_tensor,
    callers_words,
    filled_sizes,
    new_operation,
    normalize_axis,
    options,
    ranked,
    type_of,
)
from ..enums import FeatureLevel
from ..errors import DescriptorError, as_int, int_tuple, shown_value
from ..operators import AXIS, INPUT, OUTPUTS, Operator, PartsDesc, register
from ..tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class SplitOperatorDesc(PartsDesc):
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

    Examples
    --------
    >>> import cudadml as cd
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> cd.SplitOperatorDesc(cd.BufferTensorDesc(f32, [6, 2]),
    ...                      [cd.BufferTensorDesc(f32, [2, 2]), cd.BufferTensorDesc(f32, [4, 2])], 0).output_count
    2
    """

    NAME = "Split"
    _WHOLE = "input_tensor"
    _PARTS = "output_tensors"
    input_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_tensors: tuple[BufferTensorDesc, ...] = field(metadata=OUTPUTS)
    axis: int = field(metadata=AXIS)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def output_count(self) -> int:
        return len(self.output_tensors)

    def _lower(self, input_strides, output_strides):
        return _plan.plan_split(
            self.input_tensor.data_type.element_size,
            self.input_tensor.sizes,
            [t.sizes for t in self.output_tensors],
            self.axis,
            input_strides[0],
            output_strides,
        )


class Split(NamedTuple):
    """SPLIT: ``x`` cut along ``axis`` into parts of ``sizes``."""

    axis: int
    sizes: tuple
    feature_level: FeatureLevel
    directml_types: bool

    function = "split"
    ARGUMENT = "x"
    NAME = "split"
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
        the parts, or their number, by name (``split_sizes=`` an integer is a number too)."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        if (split_sizes is None) == (parts is None):
            given = "both" if parts is not None else "neither"
            raise TypeError(
                f"{name}: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got {given}"
            )
        axis = normalize_axis(axis, len(ranked(name, shape, verb="split")), name)
        n = shape[axis]
        count, field = (parts, "parts") if parts is not None else (split_sizes, "split_sizes")
        if parts is not None or (
            isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, (bool, np.bool_))
        ):
            if hasattr(count, "__iter__") and not isinstance(count, (str, bytes)):
                raise TypeError(
                    f"{name}: parts = {shown_value(count)} must be an integer (a number of equal parts), not "
                    f"{type(count).__name__}; the size of each part goes in split_sizes="
                )
            count = as_int(count, field, name, "an integer (a number of equal parts)", shown=True)
            if count < 1:
                raise ValueError(f"{name}: {field} = {count} must be at least 1")
            if n % count:
                raise ValueError(
                    f"{name}: {field} = {count}: x.shape[{axis}] = {n} does not divide into {count} equal parts; "
                    f"pass split_sizes= for parts of other sizes (cudadml.numpy.array_split(x, {count}) makes "
                    "parts that differ by at most 1, as NumPy's does)"
                )
            sizes = (n // count,) * count
        else:
            sizes = int_tuple(split_sizes, "split_sizes", name, shown=True)
            negative = [k for k, size in enumerate(sizes) if size < 0]
            if negative:
                k = negative[0]
                raise ValueError(f"{name}: split_sizes[{k}] = {sizes[k]} must not be negative")
        return new_operation(cls, (axis, sizes, *options(feature_level, directml_types, cls.NAME)))

    def results(self, shape):
        axis = self.axis
        return tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in self.sizes)

    @callers_words
    def describe(self, dtype, shapes):
        (shape,) = shapes
        total, axis = sum(self.sizes), self.axis
        if total != shape[axis]:  # the descriptor's rule, which an empty x or part would not reach
            whole = f"InputTensor.Sizes[{axis}] = {shape[axis]}"
            raise DescriptorError([f"{self.NAME}: OutputTensors' Sizes[{axis}] sum to {total}, not {whole}"])
        parts = self.results(shape)
        bound = tuple(k for k, s in enumerate(parts) if 0 not in s)  # DirectML tensors cannot be empty
        t = type_of(self, dtype)
        if not bound:
            filled = [filled_sizes(s) for s in parts]
            side = filled_sizes(shape)  # no parts: x's own sizes (and DirectML refuses an OutputCount of 0)
            whole = (*side[: self.axis], sum(s[self.axis] for s in filled) or side[self.axis], *side[self.axis + 1 :])
            SplitOperatorDesc(
                call_tensor(t, whole),
                [call_tensor(t, s, f"OutputTensors[{k}]") for k, s in enumerate(filled)],
                self.axis,
                feature_level=self.feature_level,
            )
            return Description(None, parts, bound_outputs=())
        whole = call_tensor(t, shape)  # x's rules first: its parts' follow from them
        outs = [call_tensor(t, parts[k], f"OutputTensors[{j}]") for j, k in enumerate(bound)]
        desc = SplitOperatorDesc(whole, outs, self.axis, feature_level=self.feature_level)
        return Description(desc, parts, bound_outputs=bound)

    def words(self):
        return self


OPERATOR = register(
    Operator(
        "split",
        Split,
        SplitOperatorDesc,
        gradient=None,
        batched=None,
        torch_schema=None,
        chunked=None,
        picture=None,
        messages=None,
    )
)

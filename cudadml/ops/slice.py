"""SLICE: DirectML's ``DML_SLICE_OPERATOR_DESC`` and ``cudadml.slice``.

The operator whole: its descriptor (rules and lowering) and its normalised call, registered
as ``OPERATOR`` with its rules for the adapters and pictures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .. import messages
from .. import plan as _plan
from ..calls import (
    Description,
    call_tensor,
    callers_words,
    check_rank,
    filled_sizes,
    int_args,
    new_operation,
    options,
    ranked,
    room_for,
    stand_in,
    type_of,
)
from ..enums import FeatureLevel
from ..operators import INPUT, OUTPUT, SLICE_TYPES, UINT32_ARRAY, Operator, OperatorDesc, OperatorSupport, register
from ..tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class SliceOperatorDesc(OperatorDesc):
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
    SUPPORT = OperatorSupport(
        FeatureLevel.LEVEL_1_0,
        ((FeatureLevel.LEVEL_1_0, 4, 5), (FeatureLevel.LEVEL_3_0, 1, 8)),
        SLICE_TYPES,
    )
    input_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_tensor: BufferTensorDesc = field(metadata=OUTPUT)
    offsets: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    sizes: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    strides: tuple[int, ...] = field(metadata=UINT32_ARRAY)
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

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice(
            self.input_tensor.data_type.element_size, self.windows, input_strides[0], output_strides[0]
        )


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

    @classmethod
    def of(cls, shape, positional=(), offsets=None, sizes=None, strides=None, feature_level=None, directml_types=True):
        """As ``slice(x, *positional, offsets=, sizes=, strides=)`` takes them: by name."""
        name = cls.NAME
        if positional:
            raise messages.positional(name, positional)
        ndim = len(ranked(name, shape))
        offsets, sizes = int_args(offsets, "offsets", name), int_args(sizes, "sizes", name)
        strides = (1,) * ndim if strides is None else int_args(strides, "strides", name)
        return new_operation(cls, (offsets, sizes, strides, *options(feature_level, directml_types, cls.NAME)))

    @property
    def windows(self):
        """Per input axis ``(start, step, count)``; ``axis_map``: the result axis of each."""
        return tuple((o, s if n > 1 else 1, n) for o, s, n in zip(self.offsets, self.strides, self.sizes))

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @callers_words
    def describe(self, dtype, shapes):
        name, (shape,), sizes = self.NAME, shapes, self.sizes
        t = type_of(self, dtype)
        if 0 in sizes:
            check_rank(name, len(shape), Offsets=self.offsets, Sizes=sizes, Strides=self.strides)
            filled, empty = filled_sizes(sizes), [n == 0 for n in sizes]
            call_tensor(t, filled_sizes(shape))  # x's own rules
            with stand_in("InputTensor", empty):
                SliceOperatorDesc(
                    call_tensor(t, room_for(shape, self.offsets, (1,) * len(shape), empty)),
                    call_tensor(t, filled, "OutputTensor"),
                    self.offsets,
                    filled,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (sizes,))
        desc = SliceOperatorDesc(
            call_tensor(t, shape),
            call_tensor(t, sizes, "OutputTensor"),
            self.offsets,
            sizes,
            self.strides,
            feature_level=self.feature_level,
        )
        return Description(desc, (sizes,))

    def words(self):
        return self._replace(offsets=(*self.offsets, 0), sizes=(*self.sizes, 2), strides=(*self.strides, 1))


OPERATOR = register(
    Operator(
        "slice",
        Slice,
        SliceOperatorDesc,
        gradient=None,
        batched=None,
        torch_schema=None,
        chunked=None,
        picture=None,
        messages=None,
    )
)

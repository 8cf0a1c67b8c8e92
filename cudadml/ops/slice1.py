"""SLICE1: DirectML's ``DML_SLICE1_OPERATOR_DESC`` and ``cudadml.slice1``.

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
    window_args,
    window_fields,
)
from ..enums import FeatureLevel
from ..operators import (
    INPUT,
    INT32_ARRAY,
    OUTPUT,
    TYPES_2_1,
    TYPES_4_1,
    UINT32_ARRAY,
    Operator,
    OperatorSupport,
    WindowDesc,
    register,
)
from ..tensor import BufferTensorDesc


@dataclass(frozen=True, repr=False)
class Slice1OperatorDesc(WindowDesc):
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
    SUPPORT = OperatorSupport(
        FeatureLevel.LEVEL_2_1,
        ((FeatureLevel.LEVEL_2_1, 4, 5), (FeatureLevel.LEVEL_3_0, 1, 8)),
        ((FeatureLevel.LEVEL_2_1, TYPES_2_1), (FeatureLevel.LEVEL_4_1, TYPES_4_1)),
    )
    _SOURCE = "input_tensor"
    _RESULT = "output_tensor"
    input_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_tensor: BufferTensorDesc = field(metadata=OUTPUT)
    input_window_offsets: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    input_window_sizes: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    input_window_strides: tuple[int, ...] = field(metadata=INT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

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
        offsets, sizes, strides = window_args(name, len(ranked(name, shape)), offsets, sizes, strides)
        if output_sizes is None:  # the reach; an empty or negative window reaches nothing
            output_sizes = tuple(1 + (n - 1) // abs(st) if st and n > 0 else max(n, 0) for n, st in zip(sizes, strides))
        else:
            output_sizes = int_args(output_sizes, "output_sizes", name)
        return new_operation(
            cls, (offsets, sizes, strides, output_sizes, *options(feature_level, directml_types, cls.NAME))
        )

    @property
    def windows(self):
        return tuple(
            (o if s > 0 else o + n - 1, s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, self.output_sizes)
        )

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @callers_words
    def describe(self, dtype, shapes):
        name, (shape,), out_sizes = self.NAME, shapes, self.output_sizes
        window = self.offsets, self.sizes, self.strides
        t = type_of(self, dtype)
        if 0 in out_sizes:
            check_rank(name, len(shape), **window_fields(*window))
            empty = [n == 0 for n in out_sizes]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            call_tensor(t, filled_sizes(shape))  # x's own rules
            with stand_in("InputTensor", empty):
                Slice1OperatorDesc(
                    call_tensor(t, room_for(shape, self.offsets, sizes, empty)),
                    call_tensor(t, filled_sizes(out_sizes), "OutputTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (out_sizes,))
        desc = Slice1OperatorDesc(
            call_tensor(t, shape), call_tensor(t, out_sizes, "OutputTensor"), *window, feature_level=self.feature_level
        )
        return Description(desc, (out_sizes,))

    def words(self):
        return self._replace(
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
            output_sizes=(*self.output_sizes, 2),
        )


OPERATOR = register(
    Operator(
        "slice1",
        Slice1,
        Slice1OperatorDesc,
        gradient=None,
        batched=None,
        torch_schema=None,
        chunked=None,
        picture=None,
        messages=None,
    )
)

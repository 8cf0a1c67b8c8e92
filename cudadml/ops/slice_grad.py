"""SLICE_GRAD: DirectML's ``DML_SLICE_GRAD_OPERATOR_DESC`` and ``cudadml.slice_grad``.

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
from ..errors import int_tuple
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
class SliceGradOperatorDesc(WindowDesc):
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
    SUPPORT = OperatorSupport(
        FeatureLevel.LEVEL_3_0,
        ((FeatureLevel.LEVEL_3_0, 4, 5), (FeatureLevel.LEVEL_3_1, 1, 8)),
        ((FeatureLevel.LEVEL_3_0, TYPES_2_1), (FeatureLevel.LEVEL_4_1, TYPES_4_1)),
    )
    # The forward slice read from the tensor shaped like our output gradient.
    _SOURCE = "output_gradient_tensor"
    _RESULT = "input_gradient_tensor"
    input_gradient_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_gradient_tensor: BufferTensorDesc = field(metadata=OUTPUT)
    input_window_offsets: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    input_window_sizes: tuple[int, ...] = field(metadata=UINT32_ARRAY)
    input_window_strides: tuple[int, ...] = field(metadata=INT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

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
        window = window_args(name, len(ranked(name, dy_shape, "dy")), offsets, sizes, strides)
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        return new_operation(cls, (input_shape, *window, *options(feature_level, directml_types, cls.NAME)))

    def windows_for(self, dy_shape):
        """Per axis ``(start, step, count)``: element ``c`` of ``dy`` lands at ``start + step * c``."""
        return tuple(
            (o if s > 0 else o + n - 1, s if c > 1 else 1, c)
            for o, n, s, c in zip(self.offsets, self.sizes, self.strides, dy_shape)
        )

    @property
    def axis_map(self):
        """Per input axis, the result axis it becomes: the same one."""
        return tuple(range(len(self.offsets)))

    @callers_words
    def describe(self, dtype, shapes):
        name, (dy_shape,), shape = self.NAME, shapes, self.input_shape
        window = self.offsets, self.sizes, self.strides
        t = type_of(self, dtype)
        if 0 in shape or 0 in dy_shape:
            check_rank(name, len(dy_shape), OutputGradientTensor=shape, **window_fields(*window))
            empty = [n == 0 or c == 0 for n, c in zip(shape, dy_shape)]
            sizes = tuple(z or 1 if e else z for z, e in zip(self.sizes, empty))
            call_tensor(t, filled_sizes(shape), "OutputGradientTensor")  # the result's own rules
            with stand_in("OutputGradientTensor", empty):
                SliceGradOperatorDesc(
                    call_tensor(t, filled_sizes(dy_shape), "InputGradientTensor"),
                    call_tensor(t, room_for(shape, self.offsets, sizes, empty), "OutputGradientTensor"),
                    self.offsets,
                    sizes,
                    self.strides,
                    feature_level=self.feature_level,
                )
            return Description(None, (shape,), zeros=0 not in shape)
        desc = SliceGradOperatorDesc(
            call_tensor(t, dy_shape, "InputGradientTensor"),
            call_tensor(t, shape, "OutputGradientTensor"),
            *window,
            feature_level=self.feature_level,
        )
        return Description(desc, (shape,))

    def words(self):
        return self._replace(
            input_shape=(*self.input_shape, 2),
            offsets=(*self.offsets, 0),
            sizes=(*self.sizes, 2),
            strides=(*self.strides, 1),
        )


OPERATOR = register(
    Operator(
        "slice_grad",
        SliceGrad,
        SliceGradOperatorDesc,
        gradient=None,
        batched=None,
        torch_schema=None,
        chunked=None,
        picture=None,
        messages=None,
    )
)

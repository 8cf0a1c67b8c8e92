"""DirectML operator descriptors: SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN.

Each descriptor validates itself at construction against one feature level and raises a
single ``DescriptorError`` listing every broken rule. ``compile()`` lowers it to a plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import plan as _plan
from .enums import FeatureLevel, TensorDataType, TensorFlags
from .errors import Violations, int_tuple
from .tensor import UINT32_MAX, BufferTensorDesc

__all__ = [
    "SUPPORT",
    "JoinOperatorDesc",
    "OperatorSupport",
    "Slice1OperatorDesc",
    "SliceGradOperatorDesc",
    "SliceOperatorDesc",
    "SplitOperatorDesc",
]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_L = FeatureLevel
_T = TensorDataType
_TYPES_1_0 = frozenset({_T.FLOAT32, _T.FLOAT16, _T.INT32, _T.INT16, _T.UINT32, _T.UINT16})
_TYPES_2_1 = _TYPES_1_0 | {_T.INT8, _T.UINT8}
_TYPES_4_1 = _TYPES_2_1 | {_T.FLOAT64, _T.INT64, _T.UINT64}


@dataclass(frozen=True)
class OperatorSupport:
    """What an operator supports, as steps over feature levels (each entry holds from its level on)."""

    introduced: FeatureLevel
    dimension_counts: tuple[tuple[FeatureLevel, int, int], ...]
    data_types: tuple[tuple[FeatureLevel, frozenset], ...]

    def dimension_range(self, level: FeatureLevel) -> tuple[int, int]:
        return [(lo, hi) for since, lo, hi in self.dimension_counts if since <= level][-1]

    def types(self, level: FeatureLevel) -> frozenset:
        return [types for since, types in self.data_types if since <= level][-1]


_SLICE_TYPES = ((_L.LEVEL_1_0, _TYPES_1_0), (_L.LEVEL_2_1, _TYPES_2_1), (_L.LEVEL_4_1, _TYPES_4_1))
_SPLIT_SUPPORT = OperatorSupport(_L.LEVEL_1_0, ((_L.LEVEL_1_0, 4, 4), (_L.LEVEL_3_0, 1, 8)), _SLICE_TYPES)
#: Per operator: the level it appeared at, and its dimension counts and data types per level.
SUPPORT = {
    "Slice": OperatorSupport(_L.LEVEL_1_0, ((_L.LEVEL_1_0, 4, 5), (_L.LEVEL_3_0, 1, 8)), _SLICE_TYPES),
    "Slice1": OperatorSupport(
        _L.LEVEL_2_1,
        ((_L.LEVEL_2_1, 4, 5), (_L.LEVEL_3_0, 1, 8)),
        ((_L.LEVEL_2_1, _TYPES_2_1), (_L.LEVEL_4_1, _TYPES_4_1)),
    ),
    "SliceGrad": OperatorSupport(
        _L.LEVEL_3_0,
        ((_L.LEVEL_3_0, 4, 5), (_L.LEVEL_3_1, 1, 8)),
        ((_L.LEVEL_3_0, _TYPES_2_1), (_L.LEVEL_4_1, _TYPES_4_1)),
    ),
    "Split": _SPLIT_SUPPORT,
    "Join": _SPLIT_SUPPORT,
}


def _type_names(types) -> str:
    return ", ".join(t.name for t in sorted(types, key=lambda t: t.name))


class _OperatorDesc:
    """Shared validation and compilation; subclasses set ``NAME`` and implement ``_validate``."""

    NAME = ""

    # Subclasses provide ``input_tensors`` and ``output_tensors`` (fields or properties).

    def _check(self, inputs, outputs, arrays=()):
        """Check the rules every operator shares, then the operator's own (``_validate``).

        ``inputs``/``outputs``: ``(field name, tensor)`` pairs; ``arrays``: ``(field name, values)``
        pairs whose length must equal the dimension count.
        """
        object.__setattr__(self, "feature_level", FeatureLevel.coerce(self.feature_level))
        level = self.feature_level
        support = SUPPORT[self.NAME]
        v = Violations(self.NAME)
        for name, tensor in (*inputs, *outputs):
            if not isinstance(tensor, BufferTensorDesc):
                raise TypeError(f"{self.NAME}: {name} must be a BufferTensorDesc, not {type(tensor).__name__}")
        if level < support.introduced:
            v.add(f"the operator needs feature level {support.introduced} or newer; got {level}")
            v.raise_if_any()
        lo, hi = support.dimension_range(level)
        types = support.types(level)
        first_name, first = (*inputs, *outputs)[0]
        for name, tensor in (*inputs, *outputs):
            n = tensor.dimension_count
            if not lo <= n <= hi:
                allowed = f"{lo}" if lo == hi else f"{lo} to {hi}"
                v.add(f"{name}.DimensionCount = {n} is not supported at feature level {level} (supported: {allowed})")
            if tensor.data_type not in types:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} is not supported at feature level "
                    f"{level} (supported: {_type_names(types)})"
                )
            if tensor is not first and tensor.data_type != first.data_type:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} differs from "
                    f"{first_name}.DataType = {first.data_type.name}"
                )
            if tensor is not first and n != first.dimension_count:
                v.add(f"{name}.DimensionCount = {n} differs from {first_name}.DimensionCount = {first.dimension_count}")
        for name, tensor in outputs:
            if tensor.flags & TensorFlags.OWNED_BY_DML:
                v.add(f"{name}.Flags has OWNED_BY_DML, which only input tensors may have")
            for i, (size, stride) in enumerate(zip(tensor.sizes, tensor.effective_strides)):
                if stride == 0 and size > 1:
                    v.add(f"{name}.Strides[{i}] = 0 with Sizes[{i}] = {size} would make the output overlap itself")
        for name, values in arrays:
            if len(values) != first.dimension_count:
                v.add(f"len({name}) = {len(values)} must equal DimensionCount = {first.dimension_count}")
        v.raise_if_any()  # the per-dimension rules below index these arrays
        self._validate(v)
        v.raise_if_any()

    def _validate(self, v: Violations) -> None:
        raise NotImplementedError

    def to_plan(self, input_strides=None, output_strides=None):
        """Lower to a plan. Strides (signed, in elements) default to the tensors' own;
        the array layer passes the strides of the arrays it binds."""
        if input_strides is None:
            input_strides = [t.effective_strides for t in self.input_tensors]
        if output_strides is None:
            output_strides = [t.effective_strides for t in self.output_tensors]
        return self._lower(list(input_strides), list(output_strides))

    def _lower(self, input_strides, output_strides):
        raise NotImplementedError

    def compile(self, device=None):
        """Compile for execution: returns a ``CompiledOperator``.

        Parameters
        ----------
        device : int, optional
            CUDA device for CuPy bindings; the current device when omitted.
        """
        from .compiled import CompiledOperator

        return CompiledOperator(self, device=device)


def _check_unsigned(v: Violations, name: str, values) -> None:
    for i, value in enumerate(values):
        if not 0 <= value <= UINT32_MAX:
            v.add(f"{name}[{i}] = {value} must be an unsigned 32-bit value (0 to {UINT32_MAX})")


def _check_window(v, input_name, output_name, input_tensor, output_tensor, offsets, sizes, strides):
    """SLICE1's window rules, shared with SLICE_GRAD (which names its tensors differently)."""
    _check_unsigned(v, "InputWindowOffsets", offsets)
    _check_unsigned(v, "InputWindowSizes", sizes)
    for i, stride in enumerate(strides):
        if stride == 0:
            v.add(f"InputWindowStrides[{i}] = 0 must be non-zero")
        elif not INT32_MIN <= stride <= INT32_MAX:
            v.add(f"InputWindowStrides[{i}] = {stride} must be a signed 32-bit value")
    for i, (offset, size, stride) in enumerate(zip(offsets, sizes, strides)):
        if size < 1:
            v.add(f"InputWindowSizes[{i}] = {size} must be at least 1 (the window may not be empty)")
            continue
        if offset + size > input_tensor.sizes[i]:
            v.add(
                f"InputWindowOffsets[{i}] + InputWindowSizes[{i}] = {offset + size} exceeds "
                f"{input_name}.Sizes[{i}] = {input_tensor.sizes[i]}"
            )
        if stride != 0:
            most = 1 + (size - 1) // abs(stride)
            if output_tensor.sizes[i] > most:
                v.add(
                    f"{output_name}.Sizes[{i}] = {output_tensor.sizes[i]} exceeds MaxCopiedElements[{i}] = "
                    f"1 + (InputWindowSizes[{i}] - 1) / |InputWindowStrides[{i}]| = {most}"
                )


def _window_start(offsets, sizes, strides):
    """CopyStart: the window's start, or its end along dimensions with a negative stride."""
    return tuple(o + s - 1 if st < 0 else o for o, s, st in zip(offsets, sizes, strides))


@dataclass(frozen=True)
class SliceOperatorDesc(_OperatorDesc):
    """``DML_SLICE_OPERATOR_DESC``: ``Output[c] = Input[Offsets + Strides * c]``.

    Parameters
    ----------
    input_tensor, output_tensor : BufferTensorDesc
    offsets, sizes, strides : sequence of int
        One unsigned entry per dimension; ``sizes`` equals the output's sizes. A stride of 0
        repeats one element.
    feature_level : FeatureLevel, optional
        The level to validate against (default: the newest).

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
    input_tensor: BufferTensorDesc
    output_tensor: BufferTensorDesc
    offsets: tuple[int, ...]
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def __post_init__(self):
        for name in ("offsets", "sizes", "strides"):
            object.__setattr__(self, name, int_tuple(getattr(self, name), name.capitalize(), self.NAME))
        self._check(
            [("InputTensor", self.input_tensor)],
            [("OutputTensor", self.output_tensor)],
            [("Offsets", self.offsets), ("Sizes", self.sizes), ("Strides", self.strides)],
        )

    @property
    def dimension_count(self) -> int:
        return self.input_tensor.dimension_count

    @property
    def input_tensors(self):
        return (self.input_tensor,)

    @property
    def output_tensors(self):
        return (self.output_tensor,)

    def _validate(self, v):
        for name in ("Offsets", "Sizes", "Strides"):
            _check_unsigned(v, name, getattr(self, name.lower()))
        for i, (offset, size, stride) in enumerate(zip(self.offsets, self.sizes, self.strides)):
            if size != self.output_tensor.sizes[i]:
                v.add(f"Sizes[{i}] = {size} differs from OutputTensor.Sizes[{i}] = {self.output_tensor.sizes[i]}")
            elif offset + stride * (size - 1) >= self.input_tensor.sizes[i]:
                v.add(
                    f"Offsets[{i}] + Strides[{i}] * (Sizes[{i}] - 1) = {offset + stride * (size - 1)} "
                    f"reads past InputTensor.Sizes[{i}] = {self.input_tensor.sizes[i]}"
                )

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice(
            self.input_tensor.data_type.element_size,
            self.offsets,
            self.strides,
            self.sizes,
            input_strides[0],
            output_strides[0],
        )


@dataclass(frozen=True)
class Slice1OperatorDesc(_OperatorDesc):
    """``DML_SLICE1_OPERATOR_DESC``: a window per dimension, read forwards or (negative
    stride) backwards; the output may take fewer elements than the window reaches.

    ``Output[c] = Input[CopyStart + InputWindowStrides * c]``, where CopyStart is the window
    offset, or its end ``offset + size - 1`` along dimensions with a negative stride.

    Parameters
    ----------
    input_tensor, output_tensor : BufferTensorDesc
    input_window_offsets, input_window_sizes : sequence of int
        Unsigned; ``offset + size <= InputTensor.Sizes`` and no window dimension empty.
    input_window_strides : sequence of int
        Signed, never 0.
    feature_level : FeatureLevel, optional
    """

    NAME = "Slice1"
    input_tensor: BufferTensorDesc
    output_tensor: BufferTensorDesc
    input_window_offsets: tuple[int, ...]
    input_window_sizes: tuple[int, ...]
    input_window_strides: tuple[int, ...]
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    _FIELDS = (
        ("input_window_offsets", "InputWindowOffsets"),
        ("input_window_sizes", "InputWindowSizes"),
        ("input_window_strides", "InputWindowStrides"),
    )

    def __post_init__(self):
        for attr, name in self._FIELDS:
            object.__setattr__(self, attr, int_tuple(getattr(self, attr), name, self.NAME))
        self._check(
            [("InputTensor", self.input_tensor)],
            [("OutputTensor", self.output_tensor)],
            [(name, getattr(self, attr)) for attr, name in self._FIELDS],
        )

    @property
    def dimension_count(self) -> int:
        return len(self.input_window_offsets)

    @property
    def input_tensors(self):
        return (self.input_tensor,)

    @property
    def output_tensors(self):
        return (self.output_tensor,)

    @property
    def copy_start(self) -> tuple[int, ...]:
        """Where the copy starts in each dimension (the window's end for negative strides)."""
        return _window_start(self.input_window_offsets, self.input_window_sizes, self.input_window_strides)

    def _validate(self, v):
        _check_window(
            v,
            "InputTensor",
            "OutputTensor",
            self.input_tensor,
            self.output_tensor,
            self.input_window_offsets,
            self.input_window_sizes,
            self.input_window_strides,
        )

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice(
            self.input_tensor.data_type.element_size,
            self.copy_start,
            self.input_window_strides,
            self.output_tensor.sizes,
            input_strides[0],
            output_strides[0],
        )


@dataclass(frozen=True)
class SliceGradOperatorDesc(_OperatorDesc):
    """``DML_SLICE_GRAD_OPERATOR_DESC``: the backward pass of SLICE1.

    Every element of ``output_gradient_tensor`` (sizes of the forward input) that the forward
    slice read receives its gradient from ``input_gradient_tensor`` (sizes of the forward
    output); every other element becomes 0. Window arrays and rules as in SLICE1.
    """

    NAME = "SliceGrad"
    input_gradient_tensor: BufferTensorDesc
    output_gradient_tensor: BufferTensorDesc
    input_window_offsets: tuple[int, ...]
    input_window_sizes: tuple[int, ...]
    input_window_strides: tuple[int, ...]
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    _FIELDS = Slice1OperatorDesc._FIELDS

    def __post_init__(self):
        for attr, name in self._FIELDS:
            object.__setattr__(self, attr, int_tuple(getattr(self, attr), name, self.NAME))
        self._check(
            [("InputGradientTensor", self.input_gradient_tensor)],
            [("OutputGradientTensor", self.output_gradient_tensor)],
            [(name, getattr(self, attr)) for attr, name in self._FIELDS],
        )

    dimension_count = Slice1OperatorDesc.dimension_count
    copy_start = Slice1OperatorDesc.copy_start

    @property
    def input_tensors(self):
        return (self.input_gradient_tensor,)

    @property
    def output_tensors(self):
        return (self.output_gradient_tensor,)

    def _validate(self, v):
        # The forward slice read from the tensor shaped like our output gradient.
        _check_window(
            v,
            "OutputGradientTensor",
            "InputGradientTensor",
            self.output_gradient_tensor,
            self.input_gradient_tensor,
            self.input_window_offsets,
            self.input_window_sizes,
            self.input_window_strides,
        )

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice_grad(
            self.input_gradient_tensor.data_type.element_size,
            self.output_gradient_tensor.sizes,
            output_strides[0],
            self.copy_start,
            self.input_window_strides,
            self.input_gradient_tensor.sizes,
            input_strides[0],
        )


def _check_concat(v, whole_name, whole, part_name, parts, axis):
    """SPLIT's size rules (JOIN's with the roles swapped): the parts match the whole
    except along ``axis``, where they sum to it."""
    n = whole.dimension_count
    if not 0 <= axis < n:
        v.add(f"Axis = {axis} must be in [0, {n - 1}] (DimensionCount = {n})")
        return
    total = 0
    for k, part in enumerate(parts):
        if part.dimension_count != n:
            continue  # reported by the shared checks
        total += part.sizes[axis]
        for d in range(n):
            if d != axis and part.sizes[d] != whole.sizes[d]:
                v.add(
                    f"{part_name}[{k}].Sizes[{d}] = {part.sizes[d]} differs from {whole_name}.Sizes[{d}] = "
                    f"{whole.sizes[d]} (only Sizes[Axis = {axis}] may differ)"
                )
    if total != whole.sizes[axis] and all(p.dimension_count == n for p in parts):
        v.add(f"{part_name}' Sizes[{axis}] sum to {total}, not {whole_name}.Sizes[{axis}] = {whole.sizes[axis]}")


def _tensor_tuple(tensors, field_name, where):
    if isinstance(tensors, BufferTensorDesc) or not hasattr(tensors, "__iter__"):
        raise TypeError(f"{where}: {field_name} must be a sequence of BufferTensorDesc")
    return tuple(tensors)


def _check_axis(axis, where):
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise TypeError(f"{where}: Axis must be an integer, not {type(axis).__name__}")


@dataclass(frozen=True)
class SplitOperatorDesc(_OperatorDesc):
    """``DML_SPLIT_OPERATOR_DESC``: split the input along ``axis`` into ``len(output_tensors)``
    tensors whose sizes along ``axis`` sum to the input's (one output is a copy)."""

    NAME = "Split"
    input_tensor: BufferTensorDesc
    output_tensors: tuple[BufferTensorDesc, ...]
    axis: int
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "output_tensors", _tensor_tuple(self.output_tensors, "OutputTensors", self.NAME))
        _check_axis(self.axis, self.NAME)
        if not self.output_tensors:
            v = Violations(self.NAME)
            v.add("OutputCount = 0 must be greater than 0")
            v.raise_if_any()
        self._check(
            [("InputTensor", self.input_tensor)],
            [(f"OutputTensors[{k}]", t) for k, t in enumerate(self.output_tensors)],
        )

    @property
    def output_count(self) -> int:
        return len(self.output_tensors)

    @property
    def dimension_count(self) -> int:
        return self.input_tensor.dimension_count

    @property
    def input_tensors(self):
        return (self.input_tensor,)

    def _validate(self, v):
        _check_concat(v, "InputTensor", self.input_tensor, "OutputTensors", self.output_tensors, self.axis)

    def _lower(self, input_strides, output_strides):
        return _plan.plan_split(
            self.input_tensor.data_type.element_size,
            self.input_tensor.sizes,
            [t.sizes for t in self.output_tensors],
            self.axis,
            input_strides[0],
            output_strides,
        )


@dataclass(frozen=True)
class JoinOperatorDesc(_OperatorDesc):
    """``DML_JOIN_OPERATOR_DESC``: concatenate ``input_tensors`` along ``axis`` (SPLIT's inverse)."""

    NAME = "Join"
    input_tensors: tuple[BufferTensorDesc, ...]
    output_tensor: BufferTensorDesc
    axis: int
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "input_tensors", _tensor_tuple(self.input_tensors, "InputTensors", self.NAME))
        _check_axis(self.axis, self.NAME)
        if not self.input_tensors:
            v = Violations(self.NAME)
            v.add("InputCount = 0 must be greater than 0")
            v.raise_if_any()
        self._check(
            [(f"InputTensors[{k}]", t) for k, t in enumerate(self.input_tensors)],
            [("OutputTensor", self.output_tensor)],
        )

    @property
    def input_count(self) -> int:
        return len(self.input_tensors)

    @property
    def dimension_count(self) -> int:
        return self.output_tensor.dimension_count

    @property
    def output_tensors(self):
        return (self.output_tensor,)

    def _validate(self, v):
        _check_concat(v, "OutputTensor", self.output_tensor, "InputTensors", self.input_tensors, self.axis)

    def _lower(self, input_strides, output_strides):
        return _plan.plan_join(
            self.output_tensor.data_type.element_size,
            self.output_tensor.sizes,
            [t.sizes for t in self.input_tensors],
            self.axis,
            input_strides,
            output_strides[0],
        )

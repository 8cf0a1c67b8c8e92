"""Operator descriptors: DirectML's SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN, and cudadml's own
batch of windows (``WindowsBatchOperatorDesc``) and its gradient.

An operator is its fields, its rules and its lowering. Each field carries its role as its
dataclass metadata (``field(metadata=INPUT)``, ``field(metadata=UINT32_ARRAY)``, ...). From the
roles, the base class ``_OperatorDesc`` normalises the fields (``TypeError`` for a wrong type),
finds the input and output tensors, and checks the rules every operator shares: feature level,
dimension counts and data types, array lengths and ranges, axis range, output tensors. The
operator adds its own rules (``_validate``) and its lowering to a plan (``_lower``).
Construction raises one ``DescriptorError`` listing every broken rule; only a rule that needs a
value another rule found unusable (an array of the wrong length, a tensor of another dimension
count) is skipped.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field, fields
from functools import cache, cached_property, lru_cache
from types import MappingProxyType

import numpy as np

from . import plan as _plan
from .enums import FeatureLevel, TensorDataType, TensorFlags
from .errors import DescriptorError, Violations, as_int, int_tuple
from .hooks import provided
from .overlap import overlaps_itself
from .tensor import UINT32_MAX, BufferTensorDesc, tensor_text

__all__ = [
    "SUPPORT",
    "JoinOperatorDesc",
    "OperatorSupport",
    "Slice1OperatorDesc",
    "SliceGradOperatorDesc",
    "SliceOperatorDesc",
    "SplitOperatorDesc",
    "WindowsBatchGradOperatorDesc",
    "WindowsBatchOperatorDesc",
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


@dataclass(frozen=True)
class Role:
    """What a descriptor field holds, and so how the base class reads and checks it."""

    kind: str  # "tensor", "tensors" (a sequence of them), "array" (an integer per dimension) or "axis"
    output: bool = False  # tensors: written by the operator
    entry: str = ""  # arrays: what each entry must be, between low and high
    low: int = 0
    high: int = 0


def _metadata(*args, **kwargs):
    return MappingProxyType({"role": Role(*args, **kwargs)})


# A field's role, as its dataclass metadata: ``input_tensor: BufferTensorDesc = field(metadata=INPUT)``.
INPUT = _metadata("tensor")
OUTPUT = _metadata("tensor", output=True)
INPUTS = _metadata("tensors")
OUTPUTS = _metadata("tensors", output=True)
UINT32_ARRAY = _metadata("array", entry="an unsigned 32-bit value", low=0, high=UINT32_MAX)
INT32_ARRAY = _metadata("array", entry="a signed 32-bit value", low=INT32_MIN, high=INT32_MAX)
AXIS = _metadata("axis")


def directml_name(attr: str) -> str:
    """The DirectML name of a field: ``input_window_offsets`` is ``InputWindowOffsets``."""
    return "".join(word.capitalize() for word in attr.split("_"))


@cache
def _roles(cls) -> tuple[tuple[str, str, Role], ...]:
    """``(attribute, DirectML name, role)`` of every field of ``cls`` with a role, in order."""
    return tuple((f.name, directml_name(f.name), f.metadata["role"]) for f in fields(cls) if "role" in f.metadata)


def _tensor(value, name, where) -> BufferTensorDesc:
    if not isinstance(value, BufferTensorDesc):
        raise TypeError(f"{where}: {name} must be a BufferTensorDesc, not {type(value).__name__}")
    return value


def _normalised(role: Role, value, name: str, where: str):
    """A field's value as the descriptor keeps it; ``TypeError`` naming the field for a wrong type."""
    if role.kind == "tensor":
        return _tensor(value, name, where)
    if role.kind == "tensors":
        if isinstance(value, (BufferTensorDesc, str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{where}: {name} must be a sequence of BufferTensorDesc, not {type(value).__name__}")
        return tuple(_tensor(t, f"{name}[{k}]", where) for k, t in enumerate(value))
    if role.kind == "axis":
        return as_int(value, name, where)
    return int_tuple(value, name, where)


# The docstring entries every operator shares, filled in by ``_OperatorDesc.__init_subclass__``.
_SHARED_DOC = {
    "{feature_level}": """feature_level : FeatureLevel, int or str, optional
    The level to validate against (default: the newest).""",
    "{raises}": """DescriptorError
    Listing every broken rule.
TypeError
    For a field of the wrong type (a float offset, a tensor that is not a ``BufferTensorDesc``).""",
}


class _OperatorDesc:
    """What every operator shares: normalising its fields, the shared rules, its tensors and
    ``compile()``. An operator is a frozen dataclass deriving from it that sets ``NAME`` (its
    key in ``SUPPORT``), declares its fields with their roles and ``feature_level``, and
    implements ``_validate`` (its own rules) and ``_lower`` (its plan).
    """

    NAME = ""

    def __init_subclass__(cls, **kwargs):
        """Fill in the docstring sections every operator shares."""
        super().__init_subclass__(**kwargs)
        for placeholder, text in _SHARED_DOC.items():
            cls.__doc__ = (cls.__doc__ or "").replace(placeholder, text.replace("\n", "\n    "))

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "feature_level", FeatureLevel.coerce(self.feature_level))
        for attr, name, role in _roles(type(self)):
            set_(self, attr, _normalised(role, getattr(self, attr), name, self.NAME))
        v = Violations(self.NAME)
        self._check_shared(v)
        self._validate(v)
        v.raise_if_any()

    @cached_property
    def _tensors(self) -> tuple[tuple[str, BufferTensorDesc, bool], ...]:
        """``(DirectML name, tensor, is an output)`` of every tensor, in field order."""
        named = []
        for attr, name, role in _roles(type(self)):
            value = getattr(self, attr)
            if role.kind == "tensor":
                named.append((name, value, role.output))
            elif role.kind == "tensors":
                named.extend((f"{name}[{k}]", t, role.output) for k, t in enumerate(value))
        return tuple(named)

    # Not properties: SPLIT's ``output_tensors`` and JOIN's ``input_tensors`` are fields, and
    # an instance's own value of a field wins over a cached_property of the same name.
    @cached_property
    def input_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The input tensors, in binding order."""
        return tuple(t for _, t, output in self._tensors if not output)

    @cached_property
    def output_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The output tensors, in binding order."""
        return tuple(t for _, t, output in self._tensors if output)

    @property
    def dimension_count(self) -> int:
        """DimensionCount: that of the first tensor, which every other tensor and array must match."""
        return self._tensors[0][1].dimension_count

    def _check_shared(self, v: Violations) -> None:
        """The rules every operator shares, read from the roles of its fields."""
        level, support = self.feature_level, SUPPORT[self.NAME]
        introduced = level >= support.introduced
        if not introduced:
            v.add(f"the operator needs feature level {support.introduced} or newer; got {level}")
        else:  # the supported counts and types exist from the operator's level on
            lo, hi = support.dimension_range(level)
            types = support.types(level)
        tensors = self._tensors
        first_name, first = tensors[0][:2]
        n = first.dimension_count
        for k, (name, tensor, output) in enumerate(tensors):
            if introduced and not lo <= tensor.dimension_count <= hi:
                allowed = f"{lo}" if lo == hi else f"{lo} to {hi}"
                v.add(
                    f"{name}.DimensionCount = {tensor.dimension_count} is not supported at feature level "
                    f"{level} (supported: {allowed})"
                )
            if introduced and tensor.data_type not in types:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} is not supported at feature level "
                    f"{level} (supported: {_type_names(types)})"
                )
            if k and tensor.data_type != first.data_type:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} differs from "
                    f"{first_name}.DataType = {first.data_type.name}"
                )
            if k and tensor.dimension_count != n:
                v.add(
                    f"{name}.DimensionCount = {tensor.dimension_count} differs from {first_name}.DimensionCount = {n}"
                )
            if output:
                _check_output(v, name, tensor)
        for attr, name, role in _roles(type(self)):
            value = getattr(self, attr)
            if role.kind == "tensors" and not value:
                v.add(f"{name.replace('Tensors', 'Count')} = 0 must be greater than 0")
            elif role.kind == "array":
                if len(value) != n:
                    v.add(f"len({name}) = {len(value)} must equal DimensionCount = {n}")
                for i, entry in enumerate(value):
                    if not role.low <= entry <= role.high:
                        v.add(f"{name}[{i}] = {entry} must be {role.entry} ({role.low} to {role.high})")
            elif role.kind == "axis" and not 0 <= value < n:
                v.add(f"{name} = {value} must be in [0, {n - 1}] (DimensionCount = {n})")

    def _dims(self, *attrs) -> list[tuple[int, tuple[int, ...]]]:
        """``(i, values)`` for each dimension ``i``, with per named field an array's entry ``i``
        or a tensor's ``Sizes[i]``; empty when a field has not one per dimension (the shared
        rules report that), so the rule asking is skipped."""
        columns = [getattr(self, attr) for attr in attrs]
        columns = [c.sizes if isinstance(c, BufferTensorDesc) else c for c in columns]
        if any(len(c) != self.dimension_count for c in columns):
            return []
        return list(enumerate(zip(*columns)))

    def _validate(self, v: Violations) -> None:
        """The operator's own rules (none by default); each broken one is added to ``v``."""

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

    def __repr__(self) -> str:
        fields = [
            f"{attr}={getattr(self, attr)}" for attr, _, role in _roles(type(self)) if role.kind in ("array", "axis")
        ]
        if self.feature_level != FeatureLevel.newest():
            fields.append(f"feature_level={self.feature_level}")
        return f"{type(self).__name__}({', '.join([desc_summary(self), *fields])})"

    def _repr_html_(self) -> str:
        return provided("picture")(self)._repr_html_()

    def compile(self, device: int | None = None) -> CompiledOperator:  # noqa: F821 (the class is provided: hooks)
        """Compile for execution: returns a ``CompiledOperator``.

        Parameters
        ----------
        device : int, optional
            CUDA device for CuPy bindings; the current device when omitted.
        """
        return provided("compile")(self, device=device)


def _check_output(v: Violations, name: str, tensor: BufferTensorDesc) -> None:
    """The rules of a tensor the operator writes: not owned by DirectML, and no element of it
    at another one's address (an output must not overlap itself; inputs may)."""
    if tensor.flags & TensorFlags.OWNED_BY_DML:
        v.add(f"{name}.Flags has OWNED_BY_DML, which only input tensors may have")
    if tensor.strides is None:
        return  # packed
    zero = [i for i, (size, stride) in enumerate(zip(tensor.sizes, tensor.strides)) if stride == 0 and size > 1]
    for i in zero:
        v.add(f"{name}.Strides[{i}] = 0 with Sizes[{i}] = {tensor.sizes[i]} would make the output overlap itself")
    itemsize = tensor.data_type.element_size
    if not zero and overlaps_itself(tensor.sizes, [s * itemsize for s in tensor.strides], itemsize):
        v.add(
            f"{name}.Strides = {tensor.strides} with Sizes = {tensor.sizes} would make the output overlap itself "
            "(two indices reach one element)"
        )


class _WindowDesc(_OperatorDesc):
    """SLICE1's window (``input_window_offsets``, ``_sizes``, ``_strides``) and its rules, which
    SLICE_GRAD shares with its tensors in other roles: the window lies in ``_SOURCE`` (a tensor
    field), and ``_RESULT``'s sizes count the elements taken along each dimension."""

    _SOURCE = _RESULT = ""  # tensor fields, named by each operator

    @property
    def copy_start(self) -> tuple[int, ...]:
        """Where the copy starts in each dimension (the window's end for negative strides)."""
        return tuple(
            o + s - 1 if st < 0 else o
            for o, s, st in zip(self.input_window_offsets, self.input_window_sizes, self.input_window_strides)
        )

    @property
    def windows(self) -> tuple[tuple[int, int, int], ...]:
        """Per dimension ``(start, step, count)``: element ``c`` of ``_RESULT`` pairs with
        element ``start + step * c`` of ``_SOURCE`` (what the plan lowers, and what pictures draw)."""
        counts = getattr(self, self._RESULT).sizes
        return tuple(zip(self.copy_start, self.input_window_strides, counts))

    def _validate(self, v):
        source, result = directml_name(self._SOURCE), directml_name(self._RESULT)
        for i, stride in enumerate(self.input_window_strides):
            if stride == 0:
                v.add(f"InputWindowStrides[{i}] = 0 must be non-zero")
        for i, size in enumerate(self.input_window_sizes):
            if size < 1:
                v.add(f"InputWindowSizes[{i}] = {size} must be at least 1 (the window may not be empty)")
        for i, (offset, size, bound) in self._dims("input_window_offsets", "input_window_sizes", self._SOURCE):
            if size >= 1 and offset + size > bound:
                v.add(
                    f"InputWindowOffsets[{i}] + InputWindowSizes[{i}] = {offset + size} exceeds "
                    f"{source}.Sizes[{i}] = {bound}"
                )
        for i, (size, stride, count) in self._dims("input_window_sizes", "input_window_strides", self._RESULT):
            if size < 1 or stride == 0:
                continue  # reported above
            most = 1 + (size - 1) // abs(stride)
            if count > most:
                v.add(
                    f"{result}.Sizes[{i}] = {count} exceeds MaxCopiedElements[{i}] = "
                    f"1 + (InputWindowSizes[{i}] - 1) / |InputWindowStrides[{i}]| = {most}"
                )


class _PartsDesc(_OperatorDesc):
    """SPLIT's size rules, which JOIN shares with its tensors in the other roles: the tensors of
    ``_PARTS`` match the tensor ``_WHOLE`` except along ``axis``, where they sum to it."""

    _WHOLE = _PARTS = ""  # tensor fields, named by each operator

    def _validate(self, v):
        whole, parts, axis, n = getattr(self, self._WHOLE), getattr(self, self._PARTS), self.axis, self.dimension_count
        if not 0 <= axis < n or whole.dimension_count != n or not parts:
            return  # reported by the shared rules
        whole_name, parts_name = directml_name(self._WHOLE), directml_name(self._PARTS)
        comparable = [(k, part) for k, part in enumerate(parts) if part.dimension_count == n]
        for k, part in comparable:
            for d in range(n):
                if d != axis and part.sizes[d] != whole.sizes[d]:
                    v.add(
                        f"{parts_name}[{k}].Sizes[{d}] = {part.sizes[d]} differs from {whole_name}.Sizes[{d}] = "
                        f"{whole.sizes[d]} (only Sizes[Axis = {axis}] may differ)"
                    )
        total = sum(part.sizes[axis] for _, part in comparable)
        if len(comparable) == len(parts) and total != whole.sizes[axis]:
            v.add(f"{parts_name}' Sizes[{axis}] sum to {total}, not {whole_name}.Sizes[{axis}] = {whole.sizes[axis]}")


@dataclass(frozen=True, repr=False)
class SliceOperatorDesc(_OperatorDesc):
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


@dataclass(frozen=True, repr=False)
class Slice1OperatorDesc(_WindowDesc):
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


@dataclass(frozen=True, repr=False)
class SliceGradOperatorDesc(_WindowDesc):
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


@dataclass(frozen=True, repr=False)
class SplitOperatorDesc(_PartsDesc):
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


@dataclass(frozen=True, repr=False)
class JoinOperatorDesc(_PartsDesc):
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


# ---- cudadml's own: many windows of one tensor ------------------------------------------------
# DirectML has no operator for a batch of windows whose places change from call to call (random
# crops, regions of interest): these are cudadml's, in DirectML's manner. The windows are data,
# a table bound like any input tensor (its rows: ``plan.window_table``, ``plan.grad_window_table``),
# so a new set of windows costs a table, not a compile, and ``execute`` copies nothing.


class _WindowsBatchDesc(_OperatorDesc):
    """What a batch of windows and its gradient share. The windows are SLICE1's, inside the
    tensor ``_WHOLE`` (less its sample axis with ``per_sample``), so SLICE1's rules of that
    tensor hold: the feature level, its dimension count and its data type, checked by SLICE1's
    own descriptor on a window of all of it (as the array functions check them:
    ``calls.Slice1Batch``). Each window's own rules (inside the tensor, sizes at least 1,
    strides non-zero 32-bit values) are rules of the table's values, which are data: kept by
    whoever fills the table (the array functions check every window before they build it), as
    DirectML leaves a tensor's values to its caller."""

    _WHOLE = ""  # the tensor field the windows lie in
    _TABLE_TYPE = TensorDataType.UNKNOWN  # the data type of the table's words

    def __post_init__(self):
        if not isinstance(self.per_sample, (bool, np.bool_)):
            raise TypeError(f"{self.NAME}: per_sample must be a bool, not {type(self.per_sample).__name__}")
        object.__setattr__(self, "per_sample", bool(self.per_sample))
        super().__post_init__()

    @property
    def table_owned(self) -> bool:
        """Whether the table is given when compiling (``OWNED_BY_DML``, as DirectML binds such a
        tensor at initialisation): its windows are then folded into copies, and ``execute``
        binds the other tensors."""
        return bool(self.window_table_tensor.flags & TensorFlags.OWNED_BY_DML)

    def _check_shared(self, v):
        whole_name = _DIRECTML_NAMES[self._WHOLE]
        whole = getattr(self, self._WHOLE)
        bounds = whole.sizes[self.per_sample :]
        if not bounds:
            v.add(f"{whole_name}.DimensionCount = 1 leaves the windows no dimension besides the sample axis")
        else:
            said = f"{whole_name}.DimensionCount - 1 (less the sample axis)" if self.per_sample else None
            broken = _slice1_rules(self._window_type, bounds, self.feature_level)
            for message in dict.fromkeys(_said_of(m, whole_name, said) for m in broken):
                v.add(message)
        table = self.window_table_tensor
        if table.data_type != self._TABLE_TYPE:
            v.add(f"WindowTableTensor.DataType = {table.data_type.name} must be {self._TABLE_TYPE.name}")
        if table.dimension_count != 2:
            v.add(f"WindowTableTensor.DimensionCount = {table.dimension_count} must be 2 (a row per window)")
        for name, tensor, output in self._tensors:
            if output and (tensor.strides is not None or tensor.flags is not TensorFlags.NONE):
                _check_output(v, name, tensor)  # (a packed tensor without flags keeps its rules)
        for attr, name, role in _roles(type(self)):
            if role.kind == "tensors" and not getattr(self, attr):
                v.add(f"{name.replace('Tensors', 'Count')} = 0 must be greater than 0")

    def _table_rule(self, v, columns, what):
        """The table's sizes: a row per window of ``columns`` words (``what`` says why)."""
        table, n = self.window_table_tensor, self.window_count
        if table.dimension_count == 2 and table.sizes != (n, columns):
            v.add(
                f"WindowTableTensor.Sizes = {table.sizes} must be ({n}, {columns}): a row per window of {columns} "
                f"words ({what})"
            )

    @property
    def window_count(self) -> int:
        """The number of windows: the table's rows."""
        return self.window_table_tensor.sizes[0]

    def __repr__(self) -> str:
        text = super().__repr__()
        return text[:-1] + ", per_sample=True)" if self.per_sample else text

    def _repr_html_(self) -> str:  # the pictures draw DirectML's operators; a table's windows are data
        return f"<pre>{html.escape(repr(self))}</pre>"


_DIRECTML_NAMES = {name: directml_name(name) for name in ("input_tensor", "output_gradient_tensor")}


@lru_cache(maxsize=256)
def _slice1_rules(data_type, bounds, feature_level) -> tuple[str, ...]:
    """The rules that SLICE1's descriptor finds broken by a window of all of a tensor of
    ``data_type`` and sizes ``bounds`` (its dimension count and data type at the level)."""
    try:
        t = BufferTensorDesc(data_type, bounds)
        n = len(bounds)
        Slice1OperatorDesc(t, t, (0,) * n, bounds, (1,) * n, feature_level=feature_level)
    except DescriptorError as e:
        return tuple(e.violations)
    return ()


def _said_of(message, whole_name, dimension_count=None):
    """A message of the SLICE1 descriptor that checks a windows batch's tensor, said of that
    tensor (``dimension_count``: how its dimension count is said, for a sample of it)."""
    message = message.removeprefix(f"{Slice1OperatorDesc.NAME}: ")
    for role in ("InputTensor", "OutputTensor"):  # the one tensor in both roles
        if message.startswith(f"{role}."):
            message = f"{whole_name}.{message[len(role) + 1 :]}"
    if dimension_count is not None:
        message = message.replace(f"{whole_name}.DimensionCount", dimension_count, 1)
    return message


@dataclass(frozen=True, repr=False)
class WindowsBatchOperatorDesc(_WindowsBatchDesc):
    """cudadml's own operator, not DirectML's: many SLICE1 windows of one tensor in one launch.

    Window ``n`` copies the box ``OutputTensor.Sizes[1:]`` to ``OutputTensor[n]``: its element
    ``c`` reads input element ``table[n, 0] + sum c_i * table[n, 1 + i]``, counted in elements
    (signed strides) from the input's element 0, where ``table`` is ``WindowTableTensor``
    (``plan.window_table``'s rows: a window's first element, then its steps). The table is an
    input tensor bound at ``execute`` like any other, so the windows change from call to call
    while the compiled operator stays. With ``OWNED_BY_DML`` on the table, its values are given
    when compiling (``CompiledOperator(..., constants={1: table})``; DirectML binds such a
    tensor at initialisation): the windows are then folded into copies, and the outputs may be
    one per window (windows of their own sizes) or a tensor whose windows are not packed.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read; with ``per_sample``, its dimension 0 is the sample axis.
    window_table_tensor : BufferTensorDesc
        ``INT64``, of sizes ``(N, 1 + R)``: a row per window.
    output_tensors : sequence of BufferTensorDesc
        One tensor ``(N, *box)``, the box of ``R`` dimensions, each window's elements one run
        in order; or, with a table owned by DML, one tensor per window, its box (``R``
        dimensions each).
    per_sample : bool, default False
        Window ``n`` lies in sample ``n`` of the input (the table's offsets say where).
    {feature_level}

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> f32, i64 = cd.TensorDataType.FLOAT32, cd.TensorDataType.INT64
    >>> desc = WindowsBatchOperatorDesc(cd.BufferTensorDesc(f32, [4, 4]), cd.BufferTensorDesc(i64, [3, 3]),
    ...                                 [cd.BufferTensorDesc(f32, [3, 2, 2])])
    >>> desc.window_count
    3
    """

    NAME = "WindowsBatch"
    _WHOLE = "input_tensor"
    _TABLE_TYPE = TensorDataType.from_dtype(_plan.WINDOW_TABLE_DTYPE)
    input_tensor: BufferTensorDesc = field(metadata=INPUT)
    window_table_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_tensors: tuple[BufferTensorDesc, ...] = field(metadata=OUTPUTS)
    per_sample: bool = field(default=False, kw_only=True)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def _window_type(self) -> TensorDataType:
        return self.input_tensor.data_type

    @property
    def per_window(self) -> bool:
        """Whether the outputs are one per window, rather than one tensor that holds every
        window's: several, or with a table owned by DML, one whose box has one dimension fewer
        than the table's rows hold words."""
        outputs, table = self.output_tensors, self.window_table_tensor
        return len(outputs) > 1 or (
            self.table_owned
            and len(outputs) == 1
            and table.dimension_count == 2
            and outputs[0].dimension_count == table.sizes[1] - 1
        )

    def _validate(self, v):
        x, outputs, n = self.input_tensor, self.output_tensors, self.window_count
        for k, out in enumerate(outputs):
            if out.data_type != x.data_type:
                v.add(
                    f"OutputTensors[{k}].DataType = {out.data_type.name} differs from InputTensor.DataType = "
                    f"{x.data_type.name}"
                )
        if not outputs:
            return  # the shared rules say so
        what = "its first element, then a step per dimension"
        if self.per_window:
            if not self.table_owned:
                v.add(
                    f"OutputCount = {len(outputs)}: windows of their own sizes need a table given when "
                    "compiling (WindowTableTensor.Flags OWNED_BY_DML); else one tensor holds every window's"
                )
            if len(outputs) != n:
                v.add(f"OutputCount = {len(outputs)} differs from the table's {n} windows")
            ranks = {out.dimension_count for out in outputs}
            if len(ranks) > 1:
                v.add(f"OutputTensors' DimensionCounts {sorted(ranks)} differ: every window has as many dimensions")
            self._table_rule(v, 1 + outputs[0].dimension_count, what)
            return
        out = outputs[0]
        if out.dimension_count < 2:
            v.add(
                f"OutputTensors[0].DimensionCount = {out.dimension_count} must be at least 2: the windows, then "
                "their box"
            )
            return
        if out.sizes[0] != n:
            v.add(f"OutputTensors[0].Sizes[0] = {out.sizes[0]} differs from the table's {n} windows")
        self._table_rule(v, out.dimension_count, f"{what} of the box")
        strides = out.effective_strides
        if not self.table_owned and not _plan.is_packed(out.sizes[1:], strides[1:]):
            v.add(
                f"OutputTensors[0].Strides = {strides} leave a window's elements apart or out of order: the "
                "kernels write each window as one run (a table given when compiling, OWNED_BY_DML, lifts this)"
            )

    def to_plan(self, input_strides=None, output_strides=None, constants=None):
        """Lower to a plan: a ``WindowPlan`` reading the table as input 1, or with the table's
        values in ``constants`` (``{1: table}``, for a table owned by DML), a ``CopyPlan``.
        Strides as ``_OperatorDesc.to_plan``'s (the table's are not read)."""
        if input_strides is None:
            input_strides = [self.input_tensor.effective_strides]
        if output_strides is None:
            output_strides = [t.effective_strides for t in self.output_tensors]
        e = self.input_tensor.data_type.element_size
        table = (constants or {}).get(1)
        if self.table_owned != (table is not None):
            raise TypeError(
                f"{self.NAME}: the table's values are given when compiling (constants={{1: table}}) exactly when "
                "WindowTableTensor has OWNED_BY_DML"
            )
        if table is not None:
            if tuple(table.shape) != self.window_table_tensor.sizes:
                raise ValueError(
                    f"{self.NAME}: the table given has shape {tuple(table.shape)}; WindowTableTensor.Sizes = "
                    f"{self.window_table_tensor.sizes}"
                )
            if self.per_window:
                boxes = [t.sizes for t in self.output_tensors]
                return _plan.window_copies(e, table, boxes, output_strides)
            sizes, strides = self.output_tensors[0].sizes, output_strides[0]
            return _plan.window_copies(e, table, [sizes[1:]], [strides[1:]], strides[0])
        sizes, strides = self.output_tensors[0].sizes, tuple(output_strides[0])
        if not _plan.is_packed(sizes[1:], strides[1:]):
            raise ValueError(f"{self.NAME}: output strides {strides} leave a window's elements apart or out of order")
        in_strides, low, high = input_strides[0], 0, 0
        for size, stride in zip(self.input_tensor.sizes, in_strides):
            if stride < 0:
                low += (size - 1) * stride
            else:
                high += (size - 1) * stride
        return _plan.WindowPlan(e, sizes[1:], strides[1:], strides[0], self.window_count, low, high)


@dataclass(frozen=True, repr=False)
class WindowsBatchGradOperatorDesc(_WindowsBatchDesc):
    """cudadml's own operator, not DirectML's: the gradient of ``WindowsBatchOperatorDesc``.

    Every element of ``output_gradient_tensor`` receives the sum, in window order, of the
    gradients of the windows that read it (the first as it is, the others added), and 0 where
    none did; with ``per_sample``, its dimension 0 is the window index and only window ``n``
    reads sample ``n``. The table (``plan.grad_window_table``'s rows, as 8-byte words) says per
    window where its gradient's elements lie, counted from element 0 of the first input
    gradient, and which elements of the output gradient they go to. Binding order: the first
    input gradient, the table, then the other input gradients (the kernels read the table as
    input 1).

    How elements add follows the data types: floats add (``FLOAT16`` into a ``FLOAT32``
    output, which the caller rounds), integers wrap; with ``per_sample`` nothing adds, and
    elements of any type move.

    Parameters
    ----------
    input_gradient_tensors : sequence of BufferTensorDesc
        The windows' gradients: one tensor whose ``Sizes[0]`` is the number of windows, or one
        per window. Only their data type and bindings count: the table locates each element.
    window_table_tensor : BufferTensorDesc
        ``UINT64``, of sizes ``(N, W)``: a row of ``plan.grad_window_dtype(R)`` per window, ``W``
        8-byte words, ``R`` the output gradient's dimension count (less the sample axis).
    output_gradient_tensor : BufferTensorDesc
        The tensor the windows were read from: every element is written.
    per_sample : bool, default False
        Window ``n`` lies in sample ``n``: dimension 0 is the window index.
    {feature_level}

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> from cudadml.plan import grad_window_dtype
    >>> f32, u64 = cd.TensorDataType.FLOAT32, cd.TensorDataType.UINT64
    >>> words = grad_window_dtype(2).itemsize // 8
    >>> desc = WindowsBatchGradOperatorDesc([cd.BufferTensorDesc(f32, [3, 2, 2])], cd.BufferTensorDesc(u64, [3, words]),
    ...                                     cd.BufferTensorDesc(f32, [4, 4]))
    >>> desc.compile().plan.kind  # floats add
    24
    """

    NAME = "WindowsBatchGrad"
    _WHOLE = "output_gradient_tensor"
    _TABLE_TYPE = TensorDataType.UINT64
    input_gradient_tensors: tuple[BufferTensorDesc, ...] = field(metadata=INPUTS)
    window_table_tensor: BufferTensorDesc = field(metadata=INPUT)
    output_gradient_tensor: BufferTensorDesc = field(metadata=OUTPUT)
    per_sample: bool = field(default=False, kw_only=True)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @cached_property
    def input_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The input tensors, in binding order: the first gradient, the table, the others."""
        first, *others = self.input_gradient_tensors or (None,)
        return tuple(t for t in (first, self.window_table_tensor, *others) if t is not None)

    @property
    def _window_type(self) -> TensorDataType:
        grads = self.input_gradient_tensors
        return grads[0].data_type if grads else self.output_gradient_tensor.data_type

    @property
    def kind(self) -> int:
        """How elements add (``plan.WindowGradPlan.kind``)."""
        t = self._window_type
        if self.per_sample:
            return t.element_size
        return (20 if t in _FLOATS else 10) + t.element_size

    def _validate(self, v):
        grads, out, n = self.input_gradient_tensors, self.output_gradient_tensor, self.window_count
        t = self._window_type
        for k, g in enumerate(grads[1:], 1):
            if g.data_type != t:
                v.add(
                    f"InputGradientTensors[{k}].DataType = {g.data_type.name} differs from "
                    f"InputGradientTensors[0].DataType = {t.name}"
                )
        if grads and len(grads) != n and (len(grads) != 1 or grads[0].sizes[0] != n):
            v.add(
                f"InputGradientCount = {len(grads)}: one tensor whose Sizes[0] is the table's {n} windows, "
                "or one per window"
            )
        summed = TensorDataType.FLOAT32 if t == TensorDataType.FLOAT16 and not self.per_sample else t
        if out.data_type != summed:
            why = "the sum of FLOAT16 gradients, rounded by the caller" if summed != t else "the gradients' type"
            v.add(f"OutputGradientTensor.DataType = {out.data_type.name} must be {summed.name} ({why})")
        if self.per_sample and out.sizes[0] != n:
            v.add(
                f"OutputGradientTensor.Sizes[0] = {out.sizes[0]} differs from the table's {n} windows "
                "(per_sample: one window per sample)"
            )
        rank = out.dimension_count - self.per_sample
        if rank:
            words = _plan.grad_window_dtype(rank).itemsize // 8
            self._table_rule(v, words, f"plan.grad_window_dtype({rank})")

    def _lower(self, input_strides, output_strides):
        out = self.output_gradient_tensor
        return _plan.WindowGradPlan(self.kind, out.sizes, tuple(output_strides[0]), self.per_sample, self.window_count)


_FLOATS = frozenset({TensorDataType.FLOAT16, TensorDataType.FLOAT32, TensorDataType.FLOAT64})


def tensors_text(tensors, most=3) -> str:
    """``(2, 3), (2, 1)``: the sizes (and other fields) of at most ``most`` tensors."""
    shown = [tensor_text(t).split(" ", 1)[1] for t in tensors[:most]]
    if len(tensors) > most:
        shown.append(f"... ({len(tensors)} tensors)")
    return ", ".join(shown)


def desc_summary(desc) -> str:
    """``FLOAT32 (1, 1, 4, 4) -> (1, 1, 2, 2)``: the data type and the tensors, in to out."""
    ins, outs = desc.input_tensors, desc.output_tensors
    return f"{ins[0].data_type.name} {tensors_text(ins)} -> {tensors_text(outs)}"

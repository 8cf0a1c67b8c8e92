"""PADDING and PADDING1: DirectML's ``DML_PADDING_OPERATOR_DESC`` and
``DML_PADDING1_OPERATOR_DESC``, and ``cudadml.numpy.pad``'s operation.

Every mode is a copy from the input, piece by piece: along each dimension the padded axis is
runs of the input read forwards (the input itself, WRAP), backwards (REFLECTION's and
SYMMETRIC's folds) or standing still (EDGE), and a padded tensor is the product of its axes'
runs (``axis_pieces``). Those pieces are the operator's lowering (a batch of strided copies)
and its pieces in a graph. CONSTANT writes its value where the input does not reach: SLICE_GRAD's
pass with a fill.

``cudadml.numpy.pad`` runs ``Pad``: a constant pad by SLICE_GRAD that writes a fill, or PADDING
in a mode that moves data. Registered as ``OPERATOR`` with the rules it has beyond its call:
its messages, and why a graph does not hold it.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..core import messages, operators
from ..core import plan as _plan
from ..core.calls import Description, data_type
from ..core.enums import FeatureLevel, PaddingMode, TensorDataType
from ..core.errors import DescriptorError, as_int, shown_value
from ..core.tensor import BufferTensorDesc, beyond_directml_bounds
from .slice_grad import SliceGradOperatorDesc

_L, _T = FeatureLevel, TensorDataType

#: From which level each mode is DirectML's (SYMMETRIC: its pages; WRAP: DirectML 1.15).
MODE_LEVELS = {
    PaddingMode.CONSTANT: _L.LEVEL_1_0,
    PaddingMode.EDGE: _L.LEVEL_1_0,
    PaddingMode.REFLECTION: _L.LEVEL_1_0,
    PaddingMode.SYMMETRIC: _L.LEVEL_3_0,
    PaddingMode.WRAP: _L.LEVEL_6_4,
}
_FLOATS = frozenset({_T.FLOAT16, _T.FLOAT32, _T.FLOAT64})


def _period(mode: PaddingMode, n: int) -> int:
    """The period of the source index along an axis of ``n`` elements padded in ``mode``."""
    return {PaddingMode.REFLECTION: 2 * (n - 1), PaddingMode.SYMMETRIC: 2 * n}.get(mode, n)


def source_index(mode: PaddingMode, n: int, t: int) -> int:
    """The element of an axis of ``n`` elements that position ``t`` reads (``0 <= t < n``: the
    axis itself; negative or past the end: the padding of ``mode``, not CONSTANT)."""
    if mode == PaddingMode.EDGE or n == 1:
        return min(max(t, 0), n - 1)
    u = t % _period(mode, n)
    if u < n:
        return u
    return 2 * (n - 1) - u if mode == PaddingMode.REFLECTION else 2 * n - 1 - u


def _run(mode: PaddingMode, n: int, t: int) -> tuple[int, int]:
    """``(length, step)`` of the run of the source index that starts at position ``t``: the
    positions from ``t`` on whose sources step by ``step`` (1, -1 or 0)."""
    if n == 1 or (mode == PaddingMode.EDGE and not 0 <= t < n):
        return (-t if t < 0 else math.inf), 0
    if mode == PaddingMode.EDGE:
        return n - t, 1
    u = t % _period(mode, n)
    if u < n:  # forwards, to the axis's last element
        return n - u, 1
    return _period(mode, n) - u, -1  # backwards, to its first (REFLECTION: to its second)


def axis_pieces(mode: PaddingMode, n: int, start: int, end: int) -> list[tuple[int, int, int, int, int]]:
    """The padded axis (``start + n + end`` positions, ``n >= 1``) as pieces ``(lo, step,
    count, src_lo, src_step)``: position ``lo + step * k`` reads element ``src_lo + src_step * k``
    for ``0 <= k < count``. CONSTANT's are the axis itself only. An axis whose runs would
    outnumber its period is cut into one piece per phase of the period instead (a piece of
    positions a period apart reads one element), so no axis gives more pieces than it has
    elements, whatever its padding."""
    total = start + n + end
    if mode == PaddingMode.CONSTANT or (start == 0 and end == 0):
        return [(start, 1, n, 0, 1)]
    period = 1 if n == 1 else n if mode == PaddingMode.EDGE else _period(mode, n)
    if mode != PaddingMode.EDGE and n > 1 and total // max(n - 1, 1) + 2 > period:
        return [
            (p, period, (total - p + period - 1) // period, source_index(mode, n, p - start), 0)
            for p in range(min(period, total))
        ]
    pieces, p = [], 0
    while p < total:
        length, step = _run(mode, n, p - start)
        count = int(min(length, total - p))
        pieces.append((p, 1, count, source_index(mode, n, p - start), step))
        p += count
    return pieces


def fill_element(value: float, data_type: TensorDataType) -> bytes:
    """PADDING's ``PaddingValue`` as one element of ``data_type``: rounded to the float type (past
    its range, an infinity, as IEEE rounding gives it), or truncated towards zero for an integer
    type, as DirectML's page says (10.6 becomes 10)."""
    dtype = data_type.numpy_dtype
    if data_type in _FLOATS:
        with np.errstate(over="ignore"):
            return np.array(value, dtype).tobytes()
    return np.array(math.trunc(value), dtype).tobytes()


class PaddingRules(operators.OperatorDesc):
    """What PADDING and PADDING1 share: the rules, the pieces and the lowering, given the
    tensors, ``padding_mode``, ``start_padding``, ``end_padding`` and the element ``fill``."""

    #: Whether REFLECTION of a one-element axis repeats the element, as NumPy's pad does
    #: (``cudadml.numpy.pad``'s own descriptor); DirectML's pages give it no value: refused.
    REFLECTS_ONE_ELEMENT = False

    def _validate(self, v):
        mode, level = self.padding_mode, self.feature_level
        if level < MODE_LEVELS[mode]:
            v.add(f"PaddingMode = {mode.name} needs feature level {MODE_LEVELS[mode]} or newer; got {level}")
        for i, (n, start, end, out) in self._dims("input_tensor", "start_padding", "end_padding", "output_tensor"):
            if out != n + start + end:
                v.add(
                    f"OutputTensor.Sizes[{i}] = {out} must equal InputTensor.Sizes[{i}] + StartPadding[{i}] + "
                    f"EndPadding[{i}] = {n + start + end}"
                )
            elif mode == PaddingMode.REFLECTION and n == 1 and start + end and not self.REFLECTS_ONE_ELEMENT:
                v.add(
                    f"PaddingMode = REFLECTION pads InputTensor.Sizes[{i}] = 1 by {start + end}: a reflection "
                    "about the edge of one element has no element to read (DirectML's pages give it no value; "
                    "EDGE and SYMMETRIC repeat the element)"
                )
        if mode == PaddingMode.CONSTANT:
            _check_value(v, self.padding_value, self.output_tensor.data_type, "PaddingValue")

    def __repr__(self) -> str:
        value = f", padding_value={self.padding_value}" if self.padding_mode == PaddingMode.CONSTANT else ""
        return f"{super().__repr__()[:-1]}, padding_mode={self.padding_mode.name}{value})"

    def pieces(self, port: int) -> list:
        """{pieces}

        PADDING's: the product of its axes' pieces from the input (``axis_pieces``), and for
        CONSTANT with the value 0 the zero pieces around the input.

        {pieces parameters}

        {pieces returns}
        """
        axes = self._axes()
        pieces = [(0, dims) for dims in itertools.product(*axes)]
        if self.padding_mode == PaddingMode.CONSTANT:
            if any(self.fill):
                raise TypeError(
                    f"a graph node cannot be a {self.NAME} of CONSTANT {self.padding_value}: a graph's "
                    "copies write only its inputs' elements and zeros"
                )
            pieces += _zero_pieces(self.output_tensor.sizes, self.start_padding, self.input_tensor.sizes)
        return pieces

    def _axes(self):
        mode = self.padding_mode
        return [
            axis_pieces(mode, n, start, end)
            for n, start, end in zip(self.input_tensor.sizes, self.start_padding, self.end_padding)
        ]

    def _lower(self, input_strides, output_strides):
        size = self.input_tensor.data_type.element_size
        if self.padding_mode == PaddingMode.CONSTANT:
            windows = [(s, 1, n) for s, n in zip(self.start_padding, self.input_tensor.sizes)]
            grad = _plan.plan_slice_grad(size, self.output_tensor.sizes, output_strides[0], windows, input_strides[0])
            return dataclasses.replace(grad, fill=_plan.fill_pattern(self.fill))
        jobs = []
        for dims in itertools.product(*self._axes()):
            jobs.append(
                _plan.CopyJob(
                    0,
                    0,
                    tuple(count for _, _, count, _, _ in dims),
                    tuple(src_step * s for (*_, src_step), s in zip(dims, input_strides[0])),
                    tuple(step * s for (_, step, *_), s in zip(dims, output_strides[0])),
                    sum(src_lo * s for (_, _, _, src_lo, _), s in zip(dims, input_strides[0])),
                    sum(lo * s for (lo, *_), s in zip(dims, output_strides[0])),
                )
            )
        return _plan.CopyPlan(size, tuple(jobs)).simplified()


@dataclass(frozen=True, repr=False)
class PaddingOperatorDesc(PaddingRules):
    """``DML_PADDING_OPERATOR_DESC``: the input with cells added around it, filled in ``padding_mode``.

    ``OutputTensor.Sizes[i] = InputTensor.Sizes[i] + StartPadding[i] + EndPadding[i]``; the
    output element at ``StartPadding + c`` is the input element ``c``.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read.
    output_tensor : BufferTensorDesc
        The tensor written, every element of it.
    padding_mode : PaddingMode, int or str
        CONSTANT, EDGE, REFLECTION, SYMMETRIC (from feature level 3_0) or WRAP (from 6_4).
    padding_value : float
        What CONSTANT writes (ignored by the other modes); truncated towards zero for integer
        types, and within the type's range.
    start_padding : sequence of int
        Per dimension, unsigned: the cells added before the input.
    end_padding : sequence of int
        Per dimension, unsigned: the cells added after it.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> pad = cd.PaddingOperatorDesc(cd.BufferTensorDesc(f32, [1, 1, 4, 4]), cd.BufferTensorDesc(f32, [1, 1, 8, 10]),
    ...                              cd.PaddingMode.REFLECTION, 0.0, [0, 0, 1, 2], [0, 0, 3, 4])
    >>> pad.output_tensor.sizes
    (1, 1, 8, 10)
    """

    NAME = "Padding"
    SUPPORT = operators.OperatorSupport(
        _L.LEVEL_1_0,
        ((_L.LEVEL_1_0, 4, 5), (_L.LEVEL_3_1, 1, 8)),
        (
            (_L.LEVEL_1_0, frozenset({_T.FLOAT32, _T.FLOAT16})),
            (_L.LEVEL_2_1, operators.TYPES_2_1),
            (_L.LEVEL_5_0, operators.TYPES_4_1),
        ),
    )
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    padding_mode: PaddingMode
    padding_value: float
    start_padding: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    end_padding: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "padding_mode", PaddingMode.coerce(self.padding_mode))
        object.__setattr__(self, "padding_value", _float(self.padding_value, "PaddingValue", self.NAME))
        super().__post_init__()

    @property
    def fill(self) -> bytes:
        """The element CONSTANT writes, in the tensors' type."""
        return fill_element(self.padding_value, self.output_tensor.data_type)


@dataclass(frozen=True, repr=False)
class Padding1OperatorDesc(PaddingRules):
    """``DML_PADDING1_OPERATOR_DESC``: PADDING with a typed ``padding_value``.

    The value is ``DML_SCALAR_UNION`` of ``padding_value_data_type``, which must be the tensors'
    data type: any value of the type, such as an int64 beyond a float's integers.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read.
    output_tensor : BufferTensorDesc
        The tensor written, every element of it.
    padding_mode : PaddingMode, int or str
        CONSTANT, EDGE, REFLECTION, SYMMETRIC or WRAP (from feature level 6_4).
    padding_value_data_type : TensorDataType
        The type of ``padding_value``: the output's.
    padding_value : int or float
        What CONSTANT writes, a value of ``padding_value_data_type``.
    start_padding : sequence of int
        Per dimension, unsigned: the cells added before the input.
    end_padding : sequence of int
        Per dimension, unsigned: the cells added after it.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> i64 = cd.TensorDataType.INT64
    >>> pad = cd.Padding1OperatorDesc(cd.BufferTensorDesc(i64, [3]), cd.BufferTensorDesc(i64, [5]),
    ...                               "constant", i64, 2**62 + 1, [1], [1])
    >>> int.from_bytes(pad.fill, "little") == 2**62 + 1
    True
    """

    NAME = "Padding1"
    SUPPORT = operators.OperatorSupport(_L.LEVEL_5_0, ((_L.LEVEL_5_0, 1, 8),), ((_L.LEVEL_5_0, operators.TYPES_4_1),))
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    padding_mode: PaddingMode
    padding_value_data_type: TensorDataType
    padding_value: int | float
    start_padding: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    end_padding: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def __post_init__(self):
        object.__setattr__(self, "padding_mode", PaddingMode.coerce(self.padding_mode))
        object.__setattr__(self, "padding_value_data_type", TensorDataType(self.padding_value_data_type))
        if self.padding_value_data_type in _FLOATS:
            value = _float(self.padding_value, "PaddingValue", self.NAME)
        else:
            value = _integer(self.padding_value, "PaddingValue", self.NAME)
        object.__setattr__(self, "padding_value", value)
        super().__post_init__()

    @property
    def fill(self) -> bytes:
        """The element CONSTANT writes: ``padding_value`` as ``padding_value_data_type``."""
        return fill_element(self.padding_value, self.padding_value_data_type)

    def _validate(self, v):
        super()._validate(v)  # (CONSTANT's value is one of the type's: the typed value's checks)
        ours, theirs = self.padding_value_data_type, self.output_tensor.data_type
        if ours != theirs:
            v.add(f"PaddingValueDataType = {ours.name} differs from OutputTensor.DataType = {theirs.name}")


def _float(value, name, where) -> float:
    """``value`` as a float: ``TypeError`` for what is no real number (a string, None, a complex),
    ``DescriptorError`` for an integer past a float's range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{where}: {name} must be a real number, not {type(value).__name__}")
    try:
        return float(value)
    except OverflowError:
        raise DescriptorError([f"{where}: {name} = {shown_value(value)} is past a float's range"]) from None


def _integer(value, name, where) -> int:
    """``value`` as an int (an integral float too): ``TypeError`` for anything else."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    return as_int(value, name, where)


def _check_value(v, value, data_type: TensorDataType, name: str) -> None:
    """A constant that the tensors' type holds: finite for integers, and within the type's range
    once truncated (a C conversion out of range has no defined result)."""
    if data_type in _FLOATS:
        return
    info = np.iinfo(data_type.numpy_dtype)
    if not math.isfinite(value) or not info.min <= math.trunc(value) <= info.max:
        v.add(f"{name} = {value} is not a value of {data_type.name} once truncated ({info.min} to {info.max})")


def _zero_pieces(sizes, starts, counts):
    """The pieces of ``sizes`` off the box ``starts`` (+ ``counts``), source None (zeros)."""
    pieces = []
    for d, (size, start, count) in enumerate(zip(sizes, starts, counts)):
        inner = [(s, 1, c, 0, 0) for s, c in zip(starts[:d], counts[:d])]
        outer = [(0, 1, n, 0, 0) for n in sizes[d + 1 :]]
        for lo, n in ((0, start), (start + count, size - start - count)):
            if n:
                pieces.append((None, (*inner, (lo, 1, n, 0, 0), *outer)))
    return pieces


# ---- cudadml.numpy.pad's operation ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True, repr=False)
class FilledSliceGradOperatorDesc(SliceGradOperatorDesc):
    """SLICE_GRAD whose elements the window does not read receive ``fill`` (``plan.fill_pattern``
    of one element) instead of 0: ``pad``'s constant, written by the same one pass."""

    fill: bytes = dataclasses.field(default=bytes(16), kw_only=True)

    def _lower(self, input_strides, output_strides):
        return dataclasses.replace(super()._lower(input_strides, output_strides), fill=self.fill)


@dataclasses.dataclass(frozen=True, repr=False)
class NumpyPaddingOperatorDesc(PaddingOperatorDesc):
    """PADDING as NumPy's pad reads it: REFLECTION of a one-element axis repeats the element."""

    REFLECTS_ONE_ELEMENT = True


class Pad(NamedTuple):
    """The operation of a ``pad`` (as ``cudadml.core.calls``' operations are): ``x`` placed at
    ``before`` in an array of ``shape``, with ``fill`` elsewhere (``mode`` CONSTANT), or the
    elements ``mode`` reads there."""

    shape: tuple
    before: tuple
    fill: bytes
    feature_level: FeatureLevel = FeatureLevel.newest()
    directml_types: bool = False
    mode: PaddingMode = PaddingMode.CONSTANT

    function = "pad"
    ARGUMENT = "array"
    NAME = "pad"

    def descriptor(self, dtype, shapes):
        (x_shape,) = shapes
        t = data_type(dtype, self.directml_types)
        with beyond_directml_bounds():  # cudadml's own call, of any size (its kernel indexes in 64 bits)
            if self.mode != PaddingMode.CONSTANT:
                after = tuple(m - n - b for m, n, b in zip(self.shape, x_shape, self.before))
                tensors = BufferTensorDesc(t, x_shape), BufferTensorDesc(t, self.shape)
                desc = NumpyPaddingOperatorDesc(
                    *tensors, self.mode, 0.0, self.before, after, feature_level=self.feature_level
                )
                return Description(desc, (self.shape,))
            desc = FilledSliceGradOperatorDesc(
                BufferTensorDesc(t, x_shape),
                BufferTensorDesc(t, self.shape),
                self.before,
                x_shape,
                (1,) * len(x_shape),
                fill=self.fill,
                feature_level=self.feature_level,
            )
        return Description(desc, (self.shape,))

    def words(self):
        """The same pad on 16-byte elements seen as pairs of 8-byte words (the pattern is the
        element itself: word ``x % 2`` of it at innermost coordinate ``x``)."""
        return self._replace(shape=(*self.shape, 2), before=(*self.before, 0))


def _messages(op, shapes, window, given):
    """SLICE_GRAD's names in the words of a pad (``messages.fields``): the array read, placed
    whole at the widths before it in the padded result."""
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **messages.array("InputGradientTensor", "array"),
        **messages.derived("OutputGradientTensor", **{".Sizes[{i}]": "the padded shape[{i}]"}),
        "InputWindowOffsets[{i}]": "the width before axis {i}",
        "InputWindowSizes[{i}]": "array.shape[{i}]",
        "InputWindowStrides[{i}]": None,
        "DimensionCount": "array.ndim",
        **messages.bindings("array", "out"),
    }


OPERATOR = operators.register(
    operators.Operator(
        "pad",
        Pad,
        FilledSliceGradOperatorDesc,
        messages=_messages,
        not_a_node="pad with a constant other than 0 writes the constant, which no graph node does (SLICE_GRAD's "
        "gaps are zeros), and its other modes run apart from the graph; pad with 0 in the fused function, or call "
        "pad outside it",
    )
)

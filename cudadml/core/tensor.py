"""``DML_BUFFER_TENSOR_DESC`` and ``DMLCalcBufferTensorSize``."""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import SupportsIndex

import numpy as np

from . import hooks
from .enums import TensorDataType, TensorFlags
from .errors import DescriptorError, Violations, as_int, fill_docstring, int_tuple

__all__ = ["BufferTensorDesc", "calc_buffer_tensor_size"]

MAX_DIMENSIONS = 8
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
#: A buffer tensor spans at most this many elements.
MAX_ELEMENTS = 2**32 - 1
#: Whether a buffer tensor's span is held to ``MAX_ELEMENTS``. The Dask adapter validates a
#: whole call whose arrays are not one buffer but chunks (each chunk a buffer of its own,
#: checked by its own call), and lifts the rule meanwhile (``arrays._validating``).
SPAN_RULE = contextvars.ContextVar("cudadml_span_rule", default=True)
#: Whether DirectML's 32-bit bounds hold: the span above, a tensor's sizes and strides, and an
#: operator's offsets, sizes and strides (32-bit values). cudadml's own calls (``cd.strided_slice``
#: and its gradient, ``cudadml.numpy``'s pad) describe theirs without them
#: (``beyond_directml_bounds``): their kernels index in 64 bits. DirectML's descriptors and the
#: calls named after them keep every bound, and their messages end with ``BOUNDS_HINT``.
BOUNDS_RULE = contextvars.ContextVar("cudadml_bounds_rule", default=True)
BOUNDS_HINT = " (DirectML's limit; cudadml.numpy's functions and cd.strided_slice take larger arrays)"
#: Every buffer binding's device address is a multiple of this.
MIN_BINDING_ALIGNMENT = 16


@contextlib.contextmanager
def beyond_directml_bounds():
    """Descriptors built inside the block skip DirectML's 32-bit bounds (``BOUNDS_RULE``): for a
    call of cudadml's own, whose kernels index in 64 bits, on an array of any size."""
    token = BOUNDS_RULE.set(False)
    try:
        yield
    finally:
        BOUNDS_RULE.reset(token)


def coerce_data_type(data_type, where: str = "BufferTensorDesc") -> TensorDataType:
    """A ``TensorDataType`` from itself, its directml.h value (an int or a NumPy integer, read
    by value: ``numpy.int64(1)`` is FLOAT32), or a dtype (a ``numpy.dtype``, a scalar type such
    as ``numpy.float16``, or a dtype name such as ``"int8"``) that maps to one.

    ``TypeError`` for anything else (None, bools, floats, NumPy float scalars, arrays);
    ``ValueError`` for a value outside ``DML_TENSOR_DATA_TYPE`` or a dtype without a DirectML type.
    """
    if isinstance(data_type, TensorDataType):
        return data_type
    if isinstance(data_type, (np.dtype, type, str)):
        try:
            dtype = np.dtype(data_type)
        except TypeError:
            raise TypeError(f"{where}: DataType {data_type!r} is not a dtype") from None
        return TensorDataType.from_dtype(dtype)
    value = as_int(data_type, "DataType", where, "a TensorDataType, its value, or a dtype")
    try:
        return TensorDataType(value)
    except ValueError:
        raise ValueError(f"DataType {value} is not a DML_TENSOR_DATA_TYPE value") from None


def packed_strides(sizes) -> tuple[int, ...]:
    """Row-major element strides with no padding."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def last_element_index(sizes, strides) -> int:
    return sum((size - 1) * stride for size, stride in zip(sizes, strides))


def checked_layout(v: Violations, data_type, sizes, strides):
    """The arguments of ``DMLCalcBufferTensorSize`` as exact values, checked with the rules
    that ``BufferTensorDesc`` and ``calc_buffer_tensor_size`` share: each broken rule is added
    to ``v`` (whose ``where`` names the caller), a wrong type raises ``TypeError`` at once.

    Returns ``(data_type, sizes, strides, span)``: ``data_type`` is None when it is not a valid
    type, ``span`` (the index of the last element plus one) None when sizes or strides are not
    valid.
    """
    try:
        data_type = coerce_data_type(data_type, v.where)
    except ValueError as e:
        v.add(str(e))
        data_type = None
    if data_type is TensorDataType.UNKNOWN:
        v.add("DataType UNKNOWN (0) is not a valid tensor data type")
        data_type = None
    sizes = int_tuple(sizes, "Sizes", v.where)
    if strides is not None:
        strides = int_tuple(strides, "Strides", v.where)
    n = len(sizes)
    if not 1 <= n <= MAX_DIMENSIONS:
        v.add(f"DimensionCount = {n} must be between 1 and {MAX_DIMENSIONS}")
    # Every size and stride valid: the span is defined, whatever their count.
    span_defined = _in_uint32_range(v, sizes, "Sizes", 1, "must be at least 1 (a zero size is invalid)")
    if strides is not None:
        if len(strides) != n:
            v.add(f"len(Strides) = {len(strides)} must equal DimensionCount = {n}")
            span_defined = False
        if not _in_uint32_range(v, strides, "Strides", 0, "must be non-negative (strides are unsigned)"):
            span_defined = False
    span = None
    if span_defined:
        span = last_element_index(sizes, strides if strides is not None else packed_strides(sizes)) + 1
    return data_type, sizes, strides, span


def _in_uint32_range(v, values, field, low, too_low) -> bool:
    """Whether every value lies in ``[low, UINT32 max]``; a violation for each that does not."""
    in_range = True
    for i, value in enumerate(values):
        if value < low:
            v.add(f"{field}[{i}] = {value} {too_low}")
        elif value > UINT32_MAX and BOUNDS_RULE.get():
            v.add(f"{field}[{i}] = {value} exceeds UINT32 max {UINT32_MAX}{BOUNDS_HINT}")
        else:
            continue
        in_range = False
    return in_range


def _implied_size(span: int, data_type: TensorDataType) -> int:
    return (span * data_type.element_size + 3) & ~3


def _layout_documented(obj):
    """``obj`` (``calc_buffer_tensor_size``, ``BufferTensorDesc``) with its docstring's
    ``{data_type and sizes}`` filled in: the two parameters of a layout, which both take."""
    obj.__doc__ = fill_docstring(obj.__doc__, {"{data_type and sizes}": _LAYOUT})
    return obj


_LAYOUT = """data_type : TensorDataType, int or dtype
    The element type: a ``TensorDataType``, its directml.h value, or a dtype that has one.
sizes : sequence of int
    1 to 8 sizes, each at least 1."""


@_layout_documented
def calc_buffer_tensor_size(
    data_type: TensorDataType | int | str | np.dtype,
    sizes: Sequence[SupportsIndex],
    strides: Sequence[SupportsIndex] | None = None,
) -> int:
    """Minimum bytes a buffer tensor occupies, as ``DMLCalcBufferTensorSize`` computes it.

    The index of the last element plus one, times the element size, rounded up to a
    multiple of 4 bytes. Arithmetic is exact (Python integers), so sizes past 4 GiB are right.
    The arguments are checked as ``BufferTensorDesc`` checks them (one function does both).

    Parameters
    ----------
    {data_type and sizes}
    strides : sequence of int, optional
        Element strides; packed row-major when omitted.

    Returns
    -------
    int
        The size in bytes.

    Raises
    ------
    DescriptorError
        Listing every broken rule (a zero or negative size, say).
    TypeError
        For an argument of the wrong type (a float size, a None data type).

    Examples
    --------
    >>> calc_buffer_tensor_size(TensorDataType.FLOAT16, [1, 3])
    8
    >>> calc_buffer_tensor_size(TensorDataType.UINT8, [2, 3], [8, 1])
    12
    """
    v = Violations("calc_buffer_tensor_size")
    data_type, _, _, span = checked_layout(v, data_type, sizes, strides)
    v.raise_if_any()
    return _implied_size(span, data_type)


@_layout_documented
@dataclass(frozen=True, repr=False)
class BufferTensorDesc:
    """``DML_BUFFER_TENSOR_DESC``: a tensor stored in a buffer, validated at construction.

    Parameters
    ----------
    {data_type and sizes}
    strides : sequence of int, optional
        Element strides (not bytes), unsigned; 0 broadcasts, larger than packed pads.
        ``None`` means packed row-major.
    total_tensor_size_in_bytes : int, optional
        At least ``calc_buffer_tensor_size(...)``, which is the default.
    guaranteed_base_offset_alignment : int
        0, or a power of two at least the element size.
    flags : TensorFlags
        ``NONE``, or ``OWNED_BY_DML`` (inputs only).

    Raises
    ------
    DescriptorError
        Listing every broken rule.
    TypeError
        For a field of the wrong type (a float size, a None data type).

    Examples
    --------
    >>> t = BufferTensorDesc(TensorDataType.FLOAT32, [2, 3], strides=[4, 1])
    >>> t.total_tensor_size_in_bytes
    28
    """

    data_type: TensorDataType
    sizes: tuple[int, ...]
    strides: tuple[int, ...] | None = None
    total_tensor_size_in_bytes: int | None = None
    guaranteed_base_offset_alignment: int = 0
    flags: TensorFlags = TensorFlags.NONE

    def __post_init__(self):
        v = Violations("BufferTensorDesc")
        data_type, sizes, strides, span = checked_layout(v, self.data_type, self.sizes, self.strides)
        flags = as_int(self.flags, "Flags", v.where, "a TensorFlags value")
        total = self.total_tensor_size_in_bytes
        if total is not None:
            total = as_int(total, "TotalTensorSizeInBytes", v.where)
        alignment = as_int(self.guaranteed_base_offset_alignment, "GuaranteedBaseOffsetAlignment", v.where)
        set_ = object.__setattr__
        set_(self, "data_type", data_type)
        set_(self, "sizes", sizes)
        set_(self, "strides", strides)
        set_(self, "guaranteed_base_offset_alignment", alignment)

        if flags in (TensorFlags.NONE, TensorFlags.OWNED_BY_DML):
            set_(self, "flags", TensorFlags(flags))
        else:
            v.add(f"Flags = {flags} has bits other than NONE and OWNED_BY_DML")
        element_size = data_type.element_size if data_type is not None else None
        power_of_two = alignment > 0 and alignment & (alignment - 1) == 0
        if alignment > UINT32_MAX:
            v.add(f"GuaranteedBaseOffsetAlignment = {alignment} must be an unsigned 32-bit value")
        elif alignment != 0 and (not power_of_two or (element_size and alignment < element_size)):
            at_least = f" >= the element size {element_size}" if element_size else ""
            v.add(f"GuaranteedBaseOffsetAlignment = {alignment} must be 0 or a power of two{at_least}")
        if total is not None and not 0 <= total <= UINT64_MAX:
            v.add(f"TotalTensorSizeInBytes = {total} must be an unsigned 64-bit value")
        if span is not None and span > MAX_ELEMENTS and SPAN_RULE.get() and BOUNDS_RULE.get():
            v.add(f"the tensor spans {span} elements, more than the 2^32 - 1 a buffer tensor may span{BOUNDS_HINT}")
        if span is not None and data_type is not None:  # the size rule needs a valid layout and type
            minimum = _implied_size(span, data_type)
            if total is None:
                total = minimum
            elif 0 <= total < minimum:
                v.add(
                    f"TotalTensorSizeInBytes = {total} is less than the minimum implied size {minimum} "
                    "(DMLCalcBufferTensorSize)"
                )
        set_(self, "total_tensor_size_in_bytes", total)
        v.raise_if_any()

    def __repr__(self) -> str:
        extras = "".join(f", {field}={value}" for field, value in _tensor_fields(self))
        return f"BufferTensorDesc({self.data_type.name}, {tuple(self.sizes)}{extras})"

    def _repr_html_(self) -> str | None:
        picture = hooks.picture(self)
        return None if picture is None else picture._repr_html_()

    @property
    def dimension_count(self) -> int:
        return len(self.sizes)

    @property
    def effective_strides(self) -> tuple[int, ...]:
        """``strides``, or the packed strides when they are omitted."""
        return self.strides if self.strides is not None else packed_strides(self.sizes)

    @property
    def element_count(self) -> int:
        return math.prod(self.sizes)

    @classmethod
    def from_array(cls, a, **kwargs) -> BufferTensorDesc:
        """Describe a NumPy/CuPy array (or anything with ``shape``, ``strides``, ``dtype``).

        Strides come from the array, in elements; negative or fractional ones raise
        ``ValueError``. A 0-d array becomes sizes ``(1,)``. Extra keyword arguments
        (``guaranteed_base_offset_alignment``, ...) pass through.

        Examples
        --------
        >>> import numpy as np
        >>> BufferTensorDesc.from_array(np.zeros((4, 6), np.int16)[:, ::2]).strides
        (6, 2)
        """
        dtype = np.dtype(a.dtype)
        data_type = TensorDataType.from_dtype(dtype)
        shape = tuple(a.shape) or (1,)
        byte_strides = tuple(a.strides) or (dtype.itemsize,)
        strides = []
        for i, s in enumerate(byte_strides):
            if s < 0 or s % dtype.itemsize:
                raise DescriptorError(
                    [
                        f"BufferTensorDesc.from_array: stride {s} bytes of axis {i} is not a "
                        f"non-negative multiple of the element size {dtype.itemsize}"
                    ]
                )
            strides.append(s // dtype.itemsize)
        return cls(data_type, shape, tuple(strides), **kwargs)


def _tensor_fields(tensor):
    """``(field, value)`` of a tensor's fields that are not their defaults, after its type and sizes."""
    # (Computed, not a new tensor's: a tensor built beyond DirectML's bounds is described too.)
    minimum = _implied_size(last_element_index(tensor.sizes, tensor.effective_strides) + 1, tensor.data_type)
    fields = [
        ("strides", tensor.strides, None),
        ("total_tensor_size_in_bytes", tensor.total_tensor_size_in_bytes, minimum),
        ("guaranteed_base_offset_alignment", tensor.guaranteed_base_offset_alignment, 0),
        ("flags", tensor.flags.name, "NONE"),
    ]
    return [(field, value) for field, value, default in fields if value != default]


def tensor_text(tensor) -> str:
    """``FLOAT32 (2, 3)``, then its fields that are not their defaults: ``strides=(4, 1)``."""
    extras = "".join(f" {field}={value}" for field, value in _tensor_fields(tensor))
    return f"{tensor.data_type.name} {tuple(tensor.sizes)}{extras}"

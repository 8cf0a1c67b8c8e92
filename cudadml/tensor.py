"""``DML_BUFFER_TENSOR_DESC`` and ``DMLCalcBufferTensorSize``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .enums import TensorDataType, TensorFlags
from .errors import DescriptorError, Violations, int_tuple

__all__ = ["BufferTensorDesc", "calc_buffer_tensor_size"]

MAX_DIMENSIONS = 8
UINT32_MAX = 2**32 - 1
UINT64_MAX = 2**64 - 1
#: A buffer tensor spans at most this many elements.
MAX_ELEMENTS = 2**32 - 1
#: Every buffer binding's device address is a multiple of this.
MIN_BINDING_ALIGNMENT = 16


def coerce_data_type(data_type) -> TensorDataType:
    """A ``TensorDataType`` from itself, its directml.h value, or a NumPy dtype that maps to one."""
    if isinstance(data_type, TensorDataType):
        return data_type
    if isinstance(data_type, int) and not isinstance(data_type, bool):
        try:
            return TensorDataType(data_type)
        except ValueError:
            raise ValueError(f"DataType {data_type} is not a DML_TENSOR_DATA_TYPE value") from None
    try:
        dtype = np.dtype(data_type)
    except TypeError:
        raise TypeError(
            f"DataType must be a TensorDataType, its value, or a dtype, not {type(data_type).__name__}"
        ) from None
    return TensorDataType.from_dtype(dtype)


def packed_strides(sizes) -> tuple[int, ...]:
    """Row-major element strides with no padding."""
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def last_element_index(sizes, strides) -> int:
    return sum((size - 1) * stride for size, stride in zip(sizes, strides))


def calc_buffer_tensor_size(data_type, sizes, strides=None) -> int:
    """Minimum bytes a buffer tensor occupies, as ``DMLCalcBufferTensorSize`` computes it.

    The index of the last element plus one, times the element size, rounded up to a
    multiple of 4 bytes. Arithmetic is exact (Python integers), so sizes past 4 GiB are right.

    Parameters
    ----------
    data_type : TensorDataType, int or dtype
    sizes : sequence of int
    strides : sequence of int, optional
        Element strides; packed row-major when omitted.

    Returns
    -------
    int

    Examples
    --------
    >>> calc_buffer_tensor_size(TensorDataType.FLOAT16, [1, 3])
    8
    >>> calc_buffer_tensor_size(TensorDataType.UINT8, [2, 3], [8, 1])
    12
    """
    data_type = coerce_data_type(data_type)
    if data_type is TensorDataType.UNKNOWN:
        raise ValueError("calc_buffer_tensor_size: DataType UNKNOWN has no element size")
    sizes = int_tuple(sizes, "Sizes", "calc_buffer_tensor_size")
    if strides is None:
        elements = math.prod(sizes)
    else:
        strides = int_tuple(strides, "Strides", "calc_buffer_tensor_size")
        if len(strides) != len(sizes):
            raise ValueError(
                f"calc_buffer_tensor_size: len(Strides) = {len(strides)} differs from len(Sizes) = {len(sizes)}"
            )
        elements = last_element_index(sizes, strides) + 1
    return (elements * data_type.element_size + 3) & ~3


@dataclass(frozen=True)
class BufferTensorDesc:
    """``DML_BUFFER_TENSOR_DESC``: a tensor stored in a buffer, validated at construction.

    Parameters
    ----------
    data_type : TensorDataType, int or dtype
    sizes : sequence of int
        1 to 8 sizes, each at least 1.
    strides : sequence of int, optional
        Element strides (not bytes), unsigned; 0 broadcasts, larger than packed pads.
        ``None`` means packed row-major.
    total_tensor_size_in_bytes : int, optional
        At least ``calc_buffer_tensor_size(...)``, which is the default.
    guaranteed_base_offset_alignment : int
        0, or a power of two at least the element size.
    flags : TensorFlags

    Raises
    ------
    DescriptorError
        Listing every broken rule.

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
        where = "BufferTensorDesc"
        set_ = object.__setattr__
        try:
            set_(self, "data_type", coerce_data_type(self.data_type))
        except ValueError as e:
            raise DescriptorError([f"{where}: {e}"]) from None
        set_(self, "sizes", int_tuple(self.sizes, "Sizes", where))
        if self.strides is not None:
            set_(self, "strides", int_tuple(self.strides, "Strides", where))
        if not isinstance(self.flags, (int, np.integer)) or isinstance(self.flags, bool):
            raise TypeError(f"{where}: Flags must be TensorFlags, not {type(self.flags).__name__}")
        flags = int(self.flags)
        for name in ("total_tensor_size_in_bytes", "guaranteed_base_offset_alignment"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
                raise TypeError(f"{where}: {name} must be an integer, not {type(value).__name__}")
            if value is not None:
                set_(self, name, int(value))

        v = Violations(where)
        if self.data_type is TensorDataType.UNKNOWN:
            v.add("DataType UNKNOWN (0) is not a valid tensor data type")
        n = len(self.sizes)
        if not 1 <= n <= MAX_DIMENSIONS:
            v.add(f"DimensionCount = {n} must be between 1 and {MAX_DIMENSIONS}")
        for i, size in enumerate(self.sizes):
            if size < 1:
                v.add(f"Sizes[{i}] = {size} must be at least 1 (a zero size is invalid)")
            elif size > UINT32_MAX:
                v.add(f"Sizes[{i}] = {size} exceeds UINT32 max {UINT32_MAX}")
        if self.strides is not None:
            if len(self.strides) != n:
                v.add(f"len(Strides) = {len(self.strides)} must equal DimensionCount = {n}")
            for i, stride in enumerate(self.strides):
                if stride < 0:
                    v.add(f"Strides[{i}] = {stride} must be non-negative (strides are unsigned)")
                elif stride > UINT32_MAX:
                    v.add(f"Strides[{i}] = {stride} exceeds UINT32 max {UINT32_MAX}")
        if flags not in (TensorFlags.NONE, TensorFlags.OWNED_BY_DML):
            v.add(f"Flags = {flags} has bits other than NONE and OWNED_BY_DML")
        else:
            set_(self, "flags", TensorFlags(flags))
        alignment = self.guaranteed_base_offset_alignment
        if alignment > UINT32_MAX:
            v.add(f"GuaranteedBaseOffsetAlignment = {alignment} must be an unsigned 32-bit value")
        total = self.total_tensor_size_in_bytes
        if total is not None and not 0 <= total <= UINT64_MAX:
            v.add(f"TotalTensorSizeInBytes = {total} must be an unsigned 64-bit value")
        if v.messages:  # sizes, strides or type unusable: the size rules below cannot be evaluated
            v.raise_if_any()

        element_size = self.data_type.element_size
        span = last_element_index(self.sizes, self.effective_strides) + 1
        if span > MAX_ELEMENTS:
            v.add(f"the tensor spans {span} elements, more than the 2^32 - 1 a buffer tensor may span")
        minimum = calc_buffer_tensor_size(self.data_type, self.sizes, self.strides)
        if self.total_tensor_size_in_bytes is None:
            set_(self, "total_tensor_size_in_bytes", minimum)
        elif self.total_tensor_size_in_bytes < minimum:
            v.add(
                f"TotalTensorSizeInBytes = {self.total_tensor_size_in_bytes} is less than the "
                f"minimum implied size {minimum} (DMLCalcBufferTensorSize)"
            )
        if alignment <= UINT32_MAX and alignment != 0 and (alignment < element_size or alignment & (alignment - 1)):
            v.add(
                f"GuaranteedBaseOffsetAlignment = {alignment} must be 0 or a power of two "
                f">= the element size {element_size}"
            )
        v.raise_if_any()

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

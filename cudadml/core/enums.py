"""DirectML's enumerations: tensor data types, tensor flags, feature levels and padding modes.

Values follow directml.h, so a descriptor written against DirectML reads the same here.
"""

from __future__ import annotations

import enum

import numpy as np

from .errors import as_int, fill_docstring

__all__ = ["FeatureLevel", "PaddingMode", "TensorDataType", "TensorFlags"]


def _directml(invalid, value="The directml.h value."):
    """A decorator: the enumeration's docstring with ``{parameters}`` (its one parameter, whose
    description is ``value``) and ``{raises}`` (the ``ValueError`` for a value that is not
    ``invalid``) filled in, as DirectML's enumerations share them."""
    texts = {
        "{parameters}": f"Parameters\n----------\nvalue : int\n    {value}",
        "{raises}": f"Raises\n------\nValueError\n    For a value that is not {invalid}.",
    }

    def document(cls):
        cls.__doc__ = fill_docstring(cls.__doc__, texts)
        return cls

    return document


@_directml("a ``DML_TENSOR_DATA_TYPE``")
class TensorDataType(enum.IntEnum):
    """``DML_TENSOR_DATA_TYPE``. ``UNKNOWN`` exists for parity and is never valid.

    {parameters}

    {raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.TensorDataType(1), cd.TensorDataType.from_dtype(np.int8).element_size
    (<TensorDataType.FLOAT32: 1>, 1)
    """

    UNKNOWN = 0
    FLOAT32 = 1
    FLOAT16 = 2
    UINT32 = 3
    UINT16 = 4
    UINT8 = 5
    INT32 = 6
    INT16 = 7
    INT8 = 8
    FLOAT64 = 9
    UINT64 = 10
    INT64 = 11

    @property
    def element_size(self) -> int:
        """Bytes per element (1, 2, 4 or 8)."""
        return _NUMPY_DTYPES[self].itemsize

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype holding this type's elements."""
        return _NUMPY_DTYPES[self]

    @classmethod
    def from_dtype(cls, dtype) -> TensorDataType:
        """The DirectML type of a NumPy/CuPy dtype; ``ValueError`` if it has none."""
        dtype = np.dtype(dtype)
        for data_type, candidate in _NUMPY_DTYPES.items():
            if candidate == dtype:
                return data_type
        raise ValueError(
            f"dtype {dtype} has no DirectML tensor data type "
            f"(supported: {', '.join(str(d) for d in _NUMPY_DTYPES.values())})"
        )

    @classmethod
    def unsigned_of_width(cls, width: int) -> TensorDataType:
        """The unsigned type of ``width`` bytes: a stand-in for any type of that width."""
        return {1: cls.UINT8, 2: cls.UINT16, 4: cls.UINT32, 8: cls.UINT64}[width]


_NUMPY_DTYPES = {
    TensorDataType.FLOAT32: np.dtype(np.float32),
    TensorDataType.FLOAT16: np.dtype(np.float16),
    TensorDataType.UINT32: np.dtype(np.uint32),
    TensorDataType.UINT16: np.dtype(np.uint16),
    TensorDataType.UINT8: np.dtype(np.uint8),
    TensorDataType.INT32: np.dtype(np.int32),
    TensorDataType.INT16: np.dtype(np.int16),
    TensorDataType.INT8: np.dtype(np.int8),
    TensorDataType.FLOAT64: np.dtype(np.float64),
    TensorDataType.UINT64: np.dtype(np.uint64),
    TensorDataType.INT64: np.dtype(np.int64),
}


@_directml("an int")
class TensorFlags(enum.IntFlag):
    """``DML_TENSOR_FLAGS``.

    {parameters}

    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.TensorFlags(1)
    <TensorFlags.OWNED_BY_DML: 1>
    """

    NONE = 0
    OWNED_BY_DML = 1


@_directml(
    "a ``DML_FEATURE_LEVEL``",
    value='The directml.h value; ``FeatureLevel.coerce`` also takes strings such as ``"3_0"``.',
)
class FeatureLevel(enum.IntEnum):
    """``DML_FEATURE_LEVEL``: ordered, so ``level >= FeatureLevel.LEVEL_3_0`` reads naturally.

    {parameters}

    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.FeatureLevel(0x4100), cd.FeatureLevel.coerce("3_0") < cd.FeatureLevel.LEVEL_4_1
    (<FeatureLevel.LEVEL_4_1: 16640>, True)
    """

    LEVEL_1_0 = 0x1000
    LEVEL_2_0 = 0x2000
    LEVEL_2_1 = 0x2100
    LEVEL_3_0 = 0x3000
    LEVEL_3_1 = 0x3100
    LEVEL_4_0 = 0x4000
    LEVEL_4_1 = 0x4100
    LEVEL_5_0 = 0x5000
    LEVEL_5_1 = 0x5100
    LEVEL_5_2 = 0x5200
    LEVEL_6_0 = 0x6000
    LEVEL_6_1 = 0x6100
    LEVEL_6_2 = 0x6200
    LEVEL_6_3 = 0x6300
    LEVEL_6_4 = 0x6400

    def __str__(self) -> str:
        return self.name.removeprefix("LEVEL_")

    @classmethod
    def newest(cls) -> FeatureLevel:
        return max(cls)

    @classmethod
    def coerce(cls, level: FeatureLevel | int | str | None) -> FeatureLevel:
        """A ``FeatureLevel`` from itself, its directml.h value, or a string: ``"4_1"``,
        ``"4.1"``, ``"LEVEL_4_1"`` or ``"DML_FEATURE_LEVEL_4_1"`` (any case).

        ``None`` gives the newest level.
        """
        if level is None:
            return cls.newest()
        if isinstance(level, str):
            name = level.strip().upper().removeprefix("DML_FEATURE_").removeprefix("LEVEL_")
            key = "LEVEL_" + name.replace(".", "_")
            if key in cls.__members__:
                return cls[key]
        else:
            value = as_int(level, "feature_level", expected="a FeatureLevel, int or str")  # by value
            try:
                return cls(value)
            except ValueError:
                pass
        allowed = ", ".join(str(m) for m in cls)
        raise ValueError(f"unknown feature level {level!r} (known: {allowed})")


@_directml(
    "a ``DML_PADDING_MODE``",
    value='The directml.h value; ``PaddingMode.coerce`` also takes the names, such as ``"reflection"``.',
)
class PaddingMode(enum.IntEnum):
    """``DML_PADDING_MODE``: what PADDING writes in the cells it adds.

    CONSTANT writes ``PaddingValue``; EDGE repeats the edge element; REFLECTION mirrors the
    tensor about its edge element, which is not repeated; SYMMETRIC mirrors it with the edge
    repeated (feature level 3_0); WRAP continues it from the other side (feature level 6_4).
    Past the tensor's size REFLECTION and SYMMETRIC fold again, periodically.

    {parameters}

    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.PaddingMode(2), cd.PaddingMode.coerce("wrap")
    (<PaddingMode.REFLECTION: 2>, <PaddingMode.WRAP: 4>)
    """

    CONSTANT = 0
    EDGE = 1
    REFLECTION = 2
    SYMMETRIC = 3
    WRAP = 4

    @classmethod
    def coerce(cls, mode: PaddingMode | int | str) -> PaddingMode:
        """A ``PaddingMode`` from itself, its directml.h value or its name in any case
        (``"reflection"``, ``"DML_PADDING_MODE_EDGE"``)."""
        return _coerce(cls, mode, "DML_PADDING_MODE_", "padding_mode")


def _coerce(cls, value, prefix, field):
    """A member of the enumeration ``cls`` from itself, its value or its name (any case, with or
    without directml.h's ``prefix``); ``TypeError`` or ``ValueError`` naming ``field``."""
    if isinstance(value, str):
        key = value.strip().upper().removeprefix(prefix)
        if key in cls.__members__:
            return cls[key]
    else:
        number = as_int(value, field, expected=f"a {cls.__name__}, int or str")
        if number in cls._value2member_map_:
            return cls(number)
    names = ", ".join(m.name.lower() for m in cls)
    raise ValueError(f"unknown {field} {value!r} (known: {names})")

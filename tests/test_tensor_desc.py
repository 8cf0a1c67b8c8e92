"""``calc_buffer_tensor_size``, ``BufferTensorDesc`` and the enumerations, against hand-computed values."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudadml as cd
from cudadml import FeatureLevel as L
from cudadml import TensorDataType as T

# (data type, sizes, strides, bytes, valid as a BufferTensorDesc). Every byte count is worked
# out by hand: (index of the last element + 1) * element size, rounded up to 4 bytes.
SIZES = [
    (T.FLOAT32, [2, 3], None, 24, True),  # 6 * 4
    (T.FLOAT32, [2, 3], [3, 1], 24, True),  # packed strides given explicitly
    (T.FLOAT32, [2, 3], [4, 1], 28, True),  # (1*4 + 2*1 + 1) * 4: row padding
    (T.FLOAT32, [2, 3], [1, 2], 24, True),  # column-major: (1 + 4 + 1) * 4
    (T.FLOAT32, [5, 7], [0, 0], 4, True),  # full broadcast: one element
    (T.FLOAT32, [3, 4], [0, 1], 16, True),  # broadcast rows: (3 + 1) * 4
    (T.FLOAT32, [3, 4], [1, 0], 12, True),  # broadcast columns: (2 + 1) * 4
    (T.UINT32, [2, 2, 2], [0, 0, 0], 4, True),
    (T.FLOAT32, [1, 1, 4, 4], None, 64, True),
    (T.FLOAT16, [1, 3], None, 8, True),  # 6 bytes -> 8
    (T.FLOAT16, [7], None, 16, True),  # 14 bytes -> 16
    (T.FLOAT16, [2, 2], None, 8, True),  # exactly 8
    (T.UINT16, [1] * 8, None, 4, True),  # 2 bytes -> 4
    (T.UINT16, [3, 3], [5, 2], 32, True),  # (10 + 4 + 1) * 2 = 30 -> 32
    (T.UINT8, [1], None, 4, True),  # 1 byte -> 4
    (T.UINT8, [4], None, 4, True),
    (T.UINT8, [5], None, 8, True),  # 5 bytes -> 8
    (T.UINT8, [3, 3], None, 12, True),  # 9 bytes -> 12
    (T.UINT8, [2, 3], [8, 1], 12, True),  # (8 + 2 + 1) = 11 bytes -> 12
    (T.INT8, [3, 3], [5, 2], 16, True),  # 15 bytes -> 16
    (T.FLOAT64, [2, 3], None, 48, True),
    (T.INT64, [3], [3], 56, True),  # (6 + 1) * 8
    (T.UINT64, [2, 2], [0, 5], 48, True),  # (5 + 1) * 8
    # Past 4 GiB: exact integer arithmetic.
    (T.UINT8, [2**16, 2**16 + 1], None, 4_295_032_832, False),  # 2^32 + 2^16 elements: too many for a tensor
    (T.UINT8, [2**32 - 1], None, 4_294_967_296, True),  # 2^32 - 1 bytes rounded up to 2^32
    (T.FLOAT64, [2**31], None, 17_179_869_184, True),  # 2^31 * 8 = 2^34
    (T.FLOAT64, [3, 5], [2**30, 2**28], 25_769_803_784, True),  # (2^31 + 2^30 + 1) * 8
    (T.FLOAT32, [2, 2], [2**31, 1], 8_589_934_600, True),  # (2^31 + 1 + 1) * 4
]


def _size_id(row):
    data_type, sizes, strides, _, _ = row
    return f"{data_type.name}-{'x'.join(map(str, sizes))}" + (f"-s{'_'.join(map(str, strides))}" if strides else "")


@pytest.mark.parametrize(
    ("data_type", "sizes", "strides", "expected", "valid"), SIZES, ids=[_size_id(r) for r in SIZES]
)
def test_calc_buffer_tensor_size(data_type, sizes, strides, expected, valid):
    assert cd.calc_buffer_tensor_size(data_type, sizes, strides) == expected
    # the same type given as its directml.h value and as a NumPy dtype
    assert cd.calc_buffer_tensor_size(int(data_type), sizes, strides) == expected
    assert cd.calc_buffer_tensor_size(data_type.numpy_dtype, tuple(sizes), strides) == expected


@pytest.mark.parametrize(
    ("data_type", "sizes", "strides", "expected", "valid"),
    [r for r in SIZES if r[4]],
    ids=[_size_id(r) for r in SIZES if r[4]],
)
def test_default_total_size_is_the_minimum(data_type, sizes, strides, expected, valid):
    t = cd.BufferTensorDesc(data_type, sizes, strides)
    assert t.total_tensor_size_in_bytes == expected
    assert cd.BufferTensorDesc(data_type, sizes, strides, total_tensor_size_in_bytes=expected) == t
    bigger = cd.BufferTensorDesc(data_type, sizes, strides, total_tensor_size_in_bytes=expected + 4)
    assert bigger.total_tensor_size_in_bytes == expected + 4


@pytest.mark.parametrize(
    ("args", "error", "expected"),
    [
        ((T.UNKNOWN, [4]), ValueError, "DataType UNKNOWN (0) is not a valid tensor data type"),
        ((T.FLOAT32, [2, 3], [1]), ValueError, "len(Strides) = 1 must equal DimensionCount = 2"),
        ((T.FLOAT32, [2, 3.0]), TypeError, "Sizes[1] must be an integer, not float"),
    ],
)
def test_calc_buffer_tensor_size_rejects(args, error, expected):
    with pytest.raises(error, match=re.escape(f"calc_buffer_tensor_size: {expected}")):
        cd.calc_buffer_tensor_size(*args)


def _rules(e):
    """The broken rules of an error, without the prefix that names who checked them."""
    return [line.split(": ", 1)[1] for line in e.violations] if isinstance(e, cd.ValidationError) else [str(e)]


# Arguments that break the rules calc_buffer_tensor_size shares with BufferTensorDesc.
BAD_LAYOUTS = [
    pytest.param(T.FLOAT32, [-1], None, id="negative-size"),
    pytest.param(T.FLOAT32, [0, 3], None, id="zero-size"),
    pytest.param(T.UINT8, [2**32], None, id="size-above-uint32"),
    pytest.param(T.FLOAT32, [], None, id="no-dimensions"),
    pytest.param(T.FLOAT32, [1] * 9, None, id="9-dimensions"),
    pytest.param(T.FLOAT32, [2, 3], [-1, 1], id="negative-stride"),
    pytest.param(T.FLOAT32, [2, 3], [3, 1, 1], id="strides-too-long"),
    pytest.param(T.UNKNOWN, [0], None, id="unknown-type-and-zero-size"),
    pytest.param(12, [4], None, id="type-value-out-of-enum"),
    pytest.param(np.bool_, [4], None, id="dtype-without-directml-type"),
]


@pytest.mark.parametrize(("data_type", "sizes", "strides"), BAD_LAYOUTS)
def test_calc_buffer_tensor_size_checks_its_arguments_as_buffer_tensor_desc(data_type, sizes, strides):
    with pytest.raises(cd.DescriptorError) as calc:
        cd.calc_buffer_tensor_size(data_type, sizes, strides)
    with pytest.raises(cd.DescriptorError) as desc:
        cd.BufferTensorDesc(data_type, sizes, strides)
    assert _rules(calc.value) == _rules(desc.value)
    assert all(line.startswith("calc_buffer_tensor_size: ") for line in calc.value.violations)


# Wrong types where an integer (or a data type) belongs: TypeError naming the field, from both.
WRONG_TYPES = [
    pytest.param(
        None, [2], None, "DataType must be a TensorDataType, its value, or a dtype, not NoneType", id="none-type"
    ),
    pytest.param(
        1.0, [2], None, "DataType must be a TensorDataType, its value, or a dtype, not float", id="float-type"
    ),
    pytest.param(float("nan"), [2], None, "DataType must be", id="nan-type"),
    pytest.param(True, [2], None, "DataType must be a TensorDataType, its value, or a dtype, not bool", id="bool-type"),
    pytest.param(np.True_, [2], None, "DataType must be", id="numpy-bool-type"),
    pytest.param(np.float32(1), [2], None, "DataType must be", id="numpy-float-type"),
    pytest.param(np.array([1]), [2], None, "DataType must be", id="array-type"),
    pytest.param("flaot32", [2], None, "DataType 'flaot32' is not a dtype", id="misspelt-dtype-name"),
    pytest.param(T.FLOAT32, [2.0], None, "Sizes[0] must be an integer, not float", id="float-size"),
    pytest.param(T.FLOAT32, [np.float32(2)], None, "Sizes[0] must be an integer, not float32", id="numpy-float-size"),
    pytest.param(T.FLOAT32, [2, np.True_], None, "Sizes[1] must be an integer, not bool", id="numpy-bool-size"),
    pytest.param(T.FLOAT32, [2, None], None, "Sizes[1] must be an integer, not NoneType", id="none-size"),
    pytest.param(T.FLOAT32, "12", None, "Sizes must be a sequence of integers, not str", id="str-sizes"),
    # Unordered: sizes in a set's hash order ({4, 3} iterates as 3, 4) would be a silent transposition.
    pytest.param(T.FLOAT32, {4, 3}, None, "Sizes must be a sequence of integers, not set", id="set-sizes"),
    pytest.param(
        T.FLOAT32, [2], frozenset({1}), "Strides must be a sequence of integers, not frozenset", id="frozenset"
    ),
    pytest.param(T.FLOAT32, {4: 1, 3: 1}, None, "Sizes must be a sequence of integers, not dict", id="dict-sizes"),
    pytest.param(T.FLOAT32, {4: 1}.keys(), None, "Sizes must be a sequence of integers, not dict_keys", id="keys"),
    pytest.param(
        T.FLOAT32,
        np.array([4, 3], object),
        None,
        "Sizes must be a sequence of integers, not an array of dtype object",
        id="object-array-sizes",
    ),
    pytest.param(T.FLOAT32, [2], [float("nan")], "Strides[0] must be an integer, not float", id="nan-stride"),
]


@pytest.mark.parametrize(("data_type", "sizes", "strides", "expected"), WRONG_TYPES)
def test_wrong_types_are_type_errors_naming_the_field(data_type, sizes, strides, expected):
    for where, make in (
        ("calc_buffer_tensor_size", cd.calc_buffer_tensor_size),
        ("BufferTensorDesc", cd.BufferTensorDesc),
    ):
        with pytest.raises(TypeError, match=re.escape(f"{where}: {expected}")) as e:
            make(data_type, sizes, strides)
        assert not isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    ("field", "value", "name"),
    [
        ("total_tensor_size_in_bytes", 16.0, "TotalTensorSizeInBytes"),
        ("total_tensor_size_in_bytes", float("nan"), "TotalTensorSizeInBytes"),
        ("total_tensor_size_in_bytes", "16", "TotalTensorSizeInBytes"),
        ("guaranteed_base_offset_alignment", 4.0, "GuaranteedBaseOffsetAlignment"),
        ("guaranteed_base_offset_alignment", None, "GuaranteedBaseOffsetAlignment"),
        ("guaranteed_base_offset_alignment", np.True_, "GuaranteedBaseOffsetAlignment"),
        ("flags", 1.0, "Flags"),
        ("flags", None, "Flags"),
    ],
)
def test_wrong_scalar_types_are_type_errors_naming_the_field(field, value, name):
    with pytest.raises(TypeError, match=re.escape(f"BufferTensorDesc: {name} must be")):
        cd.BufferTensorDesc(T.FLOAT32, [4], **{field: value})


@pytest.mark.parametrize("integer", [np.int64, np.uint8, np.int16, int])
@pytest.mark.parametrize("data_type", list(T)[1:], ids=lambda t: t.name)
def test_data_type_given_as_an_integer_is_read_by_value(integer, data_type):
    """``numpy.int64(1)`` is FLOAT32 (its value), not INT64 (its dtype)."""
    t = cd.BufferTensorDesc(integer(data_type.value), [3])
    assert t.data_type is data_type
    assert cd.calc_buffer_tensor_size(integer(data_type.value), [3]) == cd.calc_buffer_tensor_size(data_type, [3])


def test_integer_scalar_fields_are_read_by_value():
    t = cd.BufferTensorDesc(
        T.FLOAT32,
        [np.uint32(2)],
        [np.int8(1)],
        total_tensor_size_in_bytes=np.int16(8),
        guaranteed_base_offset_alignment=np.uint64(8),
        flags=np.uint8(1),
    )
    assert (t.sizes, t.strides, t.total_tensor_size_in_bytes, t.guaranteed_base_offset_alignment) == ((2,), (1,), 8, 8)
    assert t.flags is cd.TensorFlags.OWNED_BY_DML
    assert all(type(x) is int for x in (*t.sizes, *t.strides, t.total_tensor_size_in_bytes))
    assert type(t.guaranteed_base_offset_alignment) is int


def test_desc_fields_are_normalised():
    t = cd.BufferTensorDesc(
        np.float16, [2, np.int64(3)], strides=np.array([4, 1]), total_tensor_size_in_bytes=np.uint64(16)
    )
    assert t.data_type is T.FLOAT16
    assert t.sizes == (2, 3) and all(type(s) is int for s in t.sizes)
    assert t.strides == (4, 1)
    assert t.total_tensor_size_in_bytes == 16 and type(t.total_tensor_size_in_bytes) is int
    assert t.flags is cd.TensorFlags.NONE
    assert t.dimension_count == 2 and t.element_count == 6
    assert cd.BufferTensorDesc(T.INT8, [2, 3, 4]).effective_strides == (12, 4, 1)


# ---------------------------------------------------------------------------------------------
# from_array: (array factory, sizes, strides, data type, total bytes)
FROM_ARRAY = [
    pytest.param(lambda: np.empty((2, 3), np.float32), (2, 3), (3, 1), T.FLOAT32, 24, id="packed"),
    pytest.param(lambda: np.empty((2, 3, 5), np.float16), (2, 3, 5), (15, 5, 1), T.FLOAT16, 60, id="packed-3d"),
    pytest.param(
        lambda: np.empty((4, 6), np.int16)[:, ::2],
        (4, 3),
        (6, 2),
        T.INT16,
        48,  # (18 + 4 + 1) * 2 = 46
        id="every-other-column",
    ),
    pytest.param(
        lambda: np.empty((5, 4), np.float64)[1:4, 1:3],
        (3, 2),
        (4, 1),
        T.FLOAT64,
        80,  # (8 + 1 + 1) * 8
        id="window",
    ),
    pytest.param(lambda: np.empty((3, 4), np.uint8).T, (4, 3), (1, 4), T.UINT8, 12, id="transposed"),  # 3 + 8 + 1
    pytest.param(
        lambda: np.broadcast_to(np.empty(3, np.float32), (4, 3)), (4, 3), (0, 1), T.FLOAT32, 12, id="broadcast"
    ),
    pytest.param(
        lambda: np.empty((6, 8), np.int64)[::3, 1::4],
        (2, 2),
        (24, 4),
        T.INT64,
        232,  # (24 + 4 + 1) * 8
        id="strided-both-axes",
    ),
    pytest.param(lambda: np.array(5.0, np.float32), (1,), (1,), T.FLOAT32, 4, id="0-d"),
    pytest.param(lambda: np.uint8(7)[()].reshape(()), (1,), (1,), T.UINT8, 4, id="0-d-uint8"),
]


@pytest.mark.parametrize(("make", "sizes", "strides", "data_type", "total"), FROM_ARRAY)
def test_from_array(make, sizes, strides, data_type, total):
    t = cd.BufferTensorDesc.from_array(make())
    assert (t.sizes, t.strides, t.data_type, t.total_tensor_size_in_bytes) == (sizes, strides, data_type, total)


def test_from_array_passes_keyword_arguments_through():
    t = cd.BufferTensorDesc.from_array(
        np.empty((2, 2), np.float32),
        guaranteed_base_offset_alignment=64,
        total_tensor_size_in_bytes=128,
        flags=cd.TensorFlags.OWNED_BY_DML,
    )
    assert (t.guaranteed_base_offset_alignment, t.total_tensor_size_in_bytes, t.flags) == (
        64,
        128,
        cd.TensorFlags.OWNED_BY_DML,
    )


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(lambda: np.empty(4, np.float32)[::-1], "stride -4 bytes of axis 0", id="reversed-1d"),
        pytest.param(lambda: np.empty((3, 4), np.int16)[:, ::-2], "stride -4 bytes of axis 1", id="reversed-columns"),
        pytest.param(lambda: np.empty((3, 4), np.float64)[::-1], "stride -32 bytes of axis 0", id="reversed-rows"),
        pytest.param(
            lambda: np.lib.stride_tricks.as_strided(np.zeros(8, np.uint16), shape=(3,), strides=(3,)),
            "stride 3 bytes of axis 0 is not a non-negative multiple of the element size 2",
            id="misaligned",
        ),
    ],
)
def test_from_array_rejects_negative_and_fractional_strides(make, message):
    with pytest.raises(cd.DescriptorError, match=re.escape(message)) as e:
        cd.BufferTensorDesc.from_array(make())
    assert isinstance(e.value, ValueError)
    assert e.value.violations[0].startswith("BufferTensorDesc.from_array: ")


def test_from_array_rejects_a_dtype_without_a_directml_type():
    with pytest.raises(ValueError, match="dtype bool has no DirectML tensor data type"):
        cd.BufferTensorDesc.from_array(np.zeros(4, bool))


# ---------------------------------------------------------------------------------------------
DATA_TYPES = [  # name, directml.h value, element size, NumPy dtype
    ("UNKNOWN", 0, None, None),
    ("FLOAT32", 1, 4, np.float32),
    ("FLOAT16", 2, 2, np.float16),
    ("UINT32", 3, 4, np.uint32),
    ("UINT16", 4, 2, np.uint16),
    ("UINT8", 5, 1, np.uint8),
    ("INT32", 6, 4, np.int32),
    ("INT16", 7, 2, np.int16),
    ("INT8", 8, 1, np.int8),
    ("FLOAT64", 9, 8, np.float64),
    ("UINT64", 10, 8, np.uint64),
    ("INT64", 11, 8, np.int64),
]


def test_data_type_numbering_is_directml_h():
    assert [(t.name, t.value) for t in T] == [(name, value) for name, value, _, _ in DATA_TYPES]


@pytest.mark.parametrize(("name", "value", "size", "dtype"), DATA_TYPES[1:], ids=[r[0] for r in DATA_TYPES[1:]])
def test_data_type_element_size_and_dtype_round_trip(name, value, size, dtype):
    data_type = T[name]
    assert data_type == value and T(value) is data_type
    assert data_type.element_size == size
    assert data_type.numpy_dtype == np.dtype(dtype)
    assert T.from_dtype(dtype) is data_type
    assert T.from_dtype(np.dtype(dtype).name) is data_type
    assert T.from_dtype(data_type.numpy_dtype) is data_type
    assert T.from_dtype(np.dtype(dtype).newbyteorder("=")) is data_type
    assert T.unsigned_of_width(size).element_size == size


@pytest.mark.parametrize(
    "dtype", [bool, np.complex64, np.complex128, np.float128 if hasattr(np, "float128") else "V3", "U1", object]
)
def test_from_dtype_rejects_dtypes_without_a_directml_type(dtype):
    with pytest.raises(ValueError, match="has no DirectML tensor data type"):
        T.from_dtype(dtype)


def test_tensor_flags_values():
    assert int(cd.TensorFlags.NONE) == 0
    assert int(cd.TensorFlags.OWNED_BY_DML) == 1


# ---------------------------------------------------------------------------------------------
LEVELS = ["1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4"]


def test_feature_levels_are_ordered_with_directml_h_values():
    assert [str(level) for level in L] == LEVELS
    assert [level.value for level in L] == [int(s.replace("_", ""), 16) << 8 for s in LEVELS]
    assert sorted(L) == list(L)
    assert L.LEVEL_1_0 < L.LEVEL_2_0 < L.LEVEL_2_1 < L.LEVEL_3_0 < L.LEVEL_3_1 < L.LEVEL_4_0 < L.LEVEL_4_1
    assert L.LEVEL_4_1 >= L.LEVEL_3_0 and not L.LEVEL_2_1 >= L.LEVEL_3_0
    assert L.newest() is L.LEVEL_6_4


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("4_1", L.LEVEL_4_1),
        ("4.1", L.LEVEL_4_1),
        ("DML_FEATURE_LEVEL_4_1", L.LEVEL_4_1),
        ("dml_feature_level_4_1", L.LEVEL_4_1),
        ("LEVEL_4_1", L.LEVEL_4_1),
        ("level_3_0", L.LEVEL_3_0),
        (" 4_1 ", L.LEVEL_4_1),
        (0x4100, L.LEVEL_4_1),
        (L.LEVEL_4_1, L.LEVEL_4_1),
        ("1_0", L.LEVEL_1_0),
        (0x1000, L.LEVEL_1_0),
        ("3.1", L.LEVEL_3_1),
        (None, L.LEVEL_6_4),
    ],
)
def test_feature_level_coerce(given, expected):
    assert L.coerce(given) is expected


class _Index:
    """An integer only through ``__index__``, as Python reads integers by value."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


@pytest.mark.parametrize("given", [np.int64(0x4100), np.uint16(0x4100), np.array(0x4100), _Index(0x4100)])
def test_feature_level_coerce_reads_integers_by_value(given):
    assert L.coerce(given) is L.LEVEL_4_1


KNOWN = "(known: " + ", ".join(LEVELS) + ")"


@pytest.mark.parametrize(
    "given", ["4_2", "7_0", "", "LEVEL_", "FEATURE_LEVEL_4_1", "LEVEL_LEVEL_4_1", "4", 0x4200, 0, 0x41, -1]
)
def test_feature_level_coerce_unknown_lists_known_levels(given):
    with pytest.raises(ValueError, match=re.escape(f"unknown feature level {given!r} {KNOWN}")):
        L.coerce(given)


@pytest.mark.parametrize(
    "given", [4.1, 16640.0, float("nan"), np.float64(16640), b"4_1", True, False, np.True_, [4, 1], (4, 1)]
)
def test_feature_level_coerce_wrong_type(given):
    expected = f"feature_level must be a FeatureLevel, int or str, not {type(given).__name__}"
    with pytest.raises(TypeError, match=re.escape(expected)):
        L.coerce(given)

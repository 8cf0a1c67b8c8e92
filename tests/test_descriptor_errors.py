"""Descriptor validation: every DirectML rule, as tables of invalid and valid descriptors.

Each invalid row builds one descriptor that breaks (at least) the rule it is named after and
gives the message that rule must produce; literal messages go through ``re.escape``.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest

import cudadml as cd
from cudadml import FeatureLevel as L
from cudadml import TensorDataType as T
from cudadml import TensorFlags

U32_MAX = 2**32 - 1
F32 = T.FLOAT32
SORTED_TYPES_1_0 = "FLOAT16, FLOAT32, INT16, INT32, UINT16, UINT32"


def esc(message: str) -> str:
    return re.escape(message)


def tensor(sizes, data_type=F32, **kw):
    return cd.BufferTensorDesc(data_type, sizes, **kw)


# ---------------------------------------------------------------------------------------------
# Builders: each makes a VALID descriptor (the DirectML pages' examples); a row overrides the
# fields that break one rule. Tensors are given as sizes; ``*_kw`` pass through to the tensor.


def slice_op(
    source=(1, 1, 4, 4),
    output=(1, 1, 2, 2),
    offsets=(0, 0, 1, 2),
    sizes=None,
    strides=(1, 1, 1, 1),
    dtype=F32,
    output_dtype=None,
    input_kw=None,
    output_kw=None,
    **kw,
):
    return cd.SliceOperatorDesc(
        tensor(source, dtype, **(input_kw or {})),
        tensor(output, output_dtype or dtype, **(output_kw or {})),
        offsets,
        output if sizes is None else sizes,
        strides,
        **kw,
    )


def slice1_op(
    source=(1, 1, 4, 4),
    output=(1, 1, 2, 2),
    offsets=(0, 0, 0, 1),
    sizes=(1, 1, 4, 3),
    strides=(1, 1, 2, 2),
    dtype=F32,
    output_dtype=None,
    output_kw=None,
    **kw,
):
    return cd.Slice1OperatorDesc(
        tensor(source, dtype),
        tensor(output, output_dtype or dtype, **(output_kw or {})),
        offsets,
        sizes,
        strides,
        **kw,
    )


def grad_op(
    input_gradient=(1, 1, 2, 2),
    output_gradient=(1, 1, 4, 4),
    offsets=(0, 0, 0, 1),
    sizes=(1, 1, 4, 3),
    strides=(1, 1, 2, 2),
    dtype=F32,
    output_dtype=None,
    output_kw=None,
    **kw,
):
    return cd.SliceGradOperatorDesc(
        tensor(input_gradient, dtype),
        tensor(output_gradient, output_dtype or dtype, **(output_kw or {})),
        offsets,
        sizes,
        strides,
        **kw,
    )


SPLIT_PARTS = ((1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2))


def split_op(source=(1, 1, 6, 2), outputs=SPLIT_PARTS, axis=2, dtype=F32, dtypes=None, output_kws=None, **kw):
    dtypes = dtypes or [dtype] * len(outputs)
    output_kws = output_kws or [{}] * len(outputs)
    parts = [tensor(s, d, **k) for s, d, k in zip(outputs, dtypes, output_kws)]
    return cd.SplitOperatorDesc(tensor(source, dtype), parts, axis, **kw)


def join_op(
    inputs=SPLIT_PARTS, output=(1, 1, 6, 2), axis=2, dtype=F32, dtypes=None, output_dtype=None, output_kw=None, **kw
):
    dtypes = dtypes or [dtype] * len(inputs)
    parts = [tensor(s, d) for s, d in zip(inputs, dtypes)]
    return cd.JoinOperatorDesc(parts, tensor(output, output_dtype or dtype, **(output_kw or {})), axis, **kw)


def case(build, expected, name):
    return pytest.param(build, expected, id=name)


def t(*args, **kw):
    """A zero-argument builder of ``tensor(*args, **kw)``, for the tables."""
    return partial(tensor, *args, **kw)


# ---------------------------------------------------------------------------------------------
INVALID = [
    # --- DML_BUFFER_TENSOR_DESC --------------------------------------------------------------
    case(
        t([2, 0, 3]),
        esc("BufferTensorDesc: Sizes[1] = 0 must be at least 1 (a zero size is invalid)"),
        "tensor-zero-size",
    ),
    case(t([]), esc("BufferTensorDesc: DimensionCount = 0 must be between 1 and 8"), "tensor-0-dims"),
    case(t([1] * 9), esc("BufferTensorDesc: DimensionCount = 9 must be between 1 and 8"), "tensor-9-dims"),
    case(
        t([2, 3], strides=[3]),
        esc("BufferTensorDesc: len(Strides) = 1 must equal DimensionCount = 2"),
        "tensor-strides-too-short",
    ),
    case(
        t([2, 3], strides=[3, 1, 1]),
        esc("BufferTensorDesc: len(Strides) = 3 must equal DimensionCount = 2"),
        "tensor-strides-too-long",
    ),
    case(
        t([2, 3], strides=[-3, 1]),
        esc("BufferTensorDesc: Strides[0] = -3 must be non-negative (strides are unsigned)"),
        "tensor-negative-stride",
    ),
    case(
        t([2**32], data_type=T.UINT8),
        esc("BufferTensorDesc: Sizes[0] = 4294967296 exceeds UINT32 max 4294967295"),
        "tensor-size-above-uint32",
    ),
    case(
        t([2, 1], strides=[2**32, 1], data_type=T.UINT8),
        esc("BufferTensorDesc: Strides[0] = 4294967296 exceeds UINT32 max 4294967295"),
        "tensor-stride-above-uint32",
    ),
    case(
        t([2, 3], total_tensor_size_in_bytes=20),
        esc(
            "BufferTensorDesc: TotalTensorSizeInBytes = 20 is less than the minimum implied size 24 "
            "(DMLCalcBufferTensorSize)"
        ),
        "tensor-total-below-packed-minimum",
    ),
    case(
        t([2, 3], strides=[4, 1], total_tensor_size_in_bytes=24),
        esc("TotalTensorSizeInBytes = 24 is less than the minimum implied size 28"),
        "tensor-total-below-strided-min",
    ),
    case(
        t([3], data_type=T.FLOAT16, total_tensor_size_in_bytes=6),  # 6 bytes of data, rounded up to 8
        esc("TotalTensorSizeInBytes = 6 is less than the minimum implied size 8"),
        "tensor-total-below-rounded-min",
    ),
    case(
        t([4], guaranteed_base_offset_alignment=12),
        esc("BufferTensorDesc: GuaranteedBaseOffsetAlignment = 12 must be 0 or a power of two >= the element size 4"),
        "tensor-alignment-not-power-of-two",
    ),
    case(
        t([4], data_type=T.FLOAT64, guaranteed_base_offset_alignment=4),
        esc("GuaranteedBaseOffsetAlignment = 4 must be 0 or a power of two >= the element size 8"),
        "tensor-alignment-below-element-size",
    ),
    case(
        t([4], guaranteed_base_offset_alignment=-4),
        esc("GuaranteedBaseOffsetAlignment = -4 must be 0 or a power of two"),
        "tensor-alignment-negative",
    ),
    # GuaranteedBaseOffsetAlignment is a UINT: 2^32 is a power of two but not representable.
    case(
        t([4], guaranteed_base_offset_alignment=2**32),
        "GuaranteedBaseOffsetAlignment = 4294967296",
        "tensor-alignment-above-uint32",
    ),
    # TotalTensorSizeInBytes is a UINT64.
    case(
        t([4], total_tensor_size_in_bytes=2**64),
        "TotalTensorSizeInBytes = 18446744073709551616",
        "tensor-total-above-uint64",
    ),
    case(
        t([4], data_type=T.UNKNOWN),
        esc("BufferTensorDesc: DataType UNKNOWN (0) is not a valid tensor data type"),
        "tensor-unknown-type",
    ),
    case(t([4], data_type=0), esc("DataType UNKNOWN (0) is not a valid tensor data type"), "tensor-unknown-type-int"),
    # A value outside DML_TENSOR_DATA_TYPE, or a dtype the DirectML layer rejects, is a bad
    # descriptor value: DescriptorError, like every other rule.
    case(t([4], data_type=12), "DataType 12", "tensor-type-value-out-of-enum"),
    case(t([4], data_type=np.bool_), "bool", "tensor-type-bool-dtype"),
    case(
        t([2**16, 2**16 + 1], data_type=T.UINT8),
        esc("BufferTensorDesc: the tensor spans 4295032832 elements, more than the 2^32 - 1 a buffer tensor may span"),
        "tensor-span-packed-above-2^32-1",
    ),
    case(t([2**16, 2**16], data_type=T.UINT8), esc("the tensor spans 4294967296 elements"), "tensor-span-exactly-2^32"),
    case(
        t([2, 2], strides=[U32_MAX, 1], data_type=T.UINT8),
        esc("the tensor spans 4294967297 elements"),
        "tensor-span-strided-above-2^32-1",
    ),
    case(
        t([4], flags=2),
        esc("BufferTensorDesc: Flags = 2 has bits other than NONE and OWNED_BY_DML"),
        "tensor-flags-unknown-bit",
    ),
    case(
        t([4], flags=3),
        esc("BufferTensorDesc: Flags = 3 has bits other than NONE and OWNED_BY_DML"),
        "tensor-flags-owned-plus-unknown-bit",
    ),
    case(t([4], flags=-1), "BufferTensorDesc: Flags = ", "tensor-flags-negative"),  # DML_TENSOR_FLAGS is unsigned
    # --- feature level: operator introduced later --------------------------------------------
    case(
        partial(slice1_op, feature_level="2_0"),
        esc("Slice1: the operator needs feature level 2_1 or newer; got 2_0"),
        "slice1-at-2_0",
    ),
    case(
        partial(slice1_op, feature_level="1_0"),
        esc("Slice1: the operator needs feature level 2_1 or newer; got 1_0"),
        "slice1-at-1_0",
    ),
    case(
        partial(grad_op, feature_level="2_1"),
        esc("SliceGrad: the operator needs feature level 3_0 or newer; got 2_1"),
        "slicegrad-at-2_1",
    ),
    # --- feature level: dimension counts -----------------------------------------------------
    case(
        partial(
            slice_op, source=(4, 4, 4), output=(2, 2, 2), offsets=(0, 0, 0), strides=(1, 1, 1), feature_level="2_1"
        ),
        esc("Slice: InputTensor.DimensionCount = 3 is not supported at feature level 2_1 (supported: 4 to 5)"),
        "slice-3-dims-at-2_1",
    ),
    case(
        partial(
            slice_op,
            source=(1,) * 5 + (4,),
            output=(1,) * 5 + (2,),
            offsets=(0,) * 6,
            strides=(1,) * 6,
            feature_level="1_0",
        ),
        esc("Slice: OutputTensor.DimensionCount = 6 is not supported at feature level 1_0 (supported: 4 to 5)"),
        "slice-6-dims-at-1_0",
    ),
    case(
        partial(
            slice1_op, source=(4, 4), output=(2, 2), offsets=(0, 1), sizes=(4, 3), strides=(2, 2), feature_level="2_1"
        ),
        esc("Slice1: InputTensor.DimensionCount = 2 is not supported at feature level 2_1 (supported: 4 to 5)"),
        "slice1-2-dims-at-2_1",
    ),
    case(
        partial(
            split_op, source=(1, 1, 1, 6, 2), outputs=((1, 1, 1, 2, 2), (1, 1, 1, 4, 2)), axis=3, feature_level="2_1"
        ),
        esc("Split: InputTensor.DimensionCount = 5 is not supported at feature level 2_1 (supported: 4)"),
        "split-5-dims-at-2_1",
    ),
    case(
        partial(split_op, source=(6, 2), outputs=((2, 2), (4, 2)), axis=0, feature_level="1_0"),
        esc("Split: OutputTensors[1].DimensionCount = 2 is not supported at feature level 1_0 (supported: 4)"),
        "split-2-dims-at-1_0",
    ),
    case(
        partial(
            join_op, inputs=((1, 1, 1, 2, 2), (1, 1, 1, 4, 2)), output=(1, 1, 1, 6, 2), axis=3, feature_level="2_1"
        ),
        esc("Join: OutputTensor.DimensionCount = 5 is not supported at feature level 2_1 (supported: 4)"),
        "join-5-dims-at-2_1",
    ),
    case(
        partial(
            grad_op,
            input_gradient=(1,) * 5 + (2,),
            output_gradient=(1,) * 5 + (4,),
            offsets=(0,) * 6,
            sizes=(1,) * 5 + (3,),
            strides=(1,) * 5 + (2,),
            feature_level="3_0",
        ),
        esc(
            "SliceGrad: InputGradientTensor.DimensionCount = 6 is not supported at feature level 3_0 "
            "(supported: 4 to 5)"
        ),
        "slicegrad-6-dims-at-3_0",
    ),
    case(
        partial(
            grad_op,
            input_gradient=(2,),
            output_gradient=(4,),
            offsets=(1,),
            sizes=(3,),
            strides=(2,),
            feature_level=L.LEVEL_3_0,
        ),
        esc("SliceGrad: OutputGradientTensor.DimensionCount = 1 is not supported at feature level 3_0"),
        "slicegrad-1-dim-at-3_0",
    ),
    # --- feature level: data types -----------------------------------------------------------
    case(
        partial(slice_op, dtype=T.INT8, feature_level="1_0"),
        esc(
            f"Slice: InputTensor.DataType = INT8 is not supported at feature level 1_0 (supported: {SORTED_TYPES_1_0})"
        ),
        "slice-int8-at-1_0",
    ),
    case(
        partial(slice_op, dtype=T.UINT8, feature_level="2_0"),
        esc("Slice: OutputTensor.DataType = UINT8 is not supported at feature level 2_0"),
        "slice-uint8-at-2_0",
    ),
    case(
        partial(slice_op, dtype=T.FLOAT64, feature_level="4_0"),
        esc("Slice: InputTensor.DataType = FLOAT64 is not supported at feature level 4_0"),
        "slice-float64-at-4_0",
    ),
    case(
        partial(slice1_op, dtype=T.INT64, feature_level="4_0"),
        esc("Slice1: InputTensor.DataType = INT64 is not supported at feature level 4_0"),
        "slice1-int64-at-4_0",
    ),
    case(
        partial(grad_op, dtype=T.UINT64, feature_level="3_1"),
        esc("SliceGrad: InputGradientTensor.DataType = UINT64 is not supported at feature level 3_1"),
        "slicegrad-uint64-at-3_1",
    ),
    case(
        partial(split_op, dtype=T.INT8, feature_level="1_0"),
        esc("Split: OutputTensors[2].DataType = INT8 is not supported at feature level 1_0"),
        "split-int8-at-1_0",
    ),
    case(
        partial(split_op, dtype=T.FLOAT64, feature_level="4_0"),
        esc("Split: InputTensor.DataType = FLOAT64 is not supported at feature level 4_0"),
        "split-float64-at-4_0",
    ),
    case(
        partial(join_op, dtype=T.UINT8, feature_level="1_0"),
        esc("Join: InputTensors[0].DataType = UINT8 is not supported at feature level 1_0"),
        "join-uint8-at-1_0",
    ),
    case(
        partial(join_op, dtype=T.INT64, feature_level="4_0"),
        esc("Join: OutputTensor.DataType = INT64 is not supported at feature level 4_0"),
        "join-int64-at-4_0",
    ),
    # --- input/output DataType and DimensionCount agree --------------------------------------
    case(
        partial(slice_op, output_dtype=T.FLOAT16),
        esc("Slice: OutputTensor.DataType = FLOAT16 differs from InputTensor.DataType = FLOAT32"),
        "slice-datatype-mismatch",
    ),
    case(
        partial(slice1_op, output_dtype=T.INT32),
        esc("Slice1: OutputTensor.DataType = INT32 differs from InputTensor.DataType = FLOAT32"),
        "slice1-datatype-mismatch",
    ),
    case(
        partial(grad_op, output_dtype=T.UINT32),
        esc("SliceGrad: OutputGradientTensor.DataType = UINT32 differs from InputGradientTensor.DataType = FLOAT32"),
        "slicegrad-datatype-mismatch",
    ),
    case(
        partial(split_op, dtypes=[F32, T.INT32, F32]),
        esc("Split: OutputTensors[1].DataType = INT32 differs from InputTensor.DataType = FLOAT32"),
        "split-datatype-mismatch",
    ),
    case(
        partial(join_op, output_dtype=T.UINT32),
        esc("Join: OutputTensor.DataType = UINT32 differs from InputTensors[0].DataType = FLOAT32"),
        "join-datatype-mismatch",
    ),
    case(
        partial(slice_op, output=(1, 1, 1, 2, 2)),
        esc("Slice: OutputTensor.DimensionCount = 5 differs from InputTensor.DimensionCount = 4"),
        "slice-dimcount-mismatch",
    ),
    case(
        partial(slice1_op, output=(1, 2, 2)),
        esc("Slice1: OutputTensor.DimensionCount = 3 differs from InputTensor.DimensionCount = 4"),
        "slice1-dimcount-mismatch",
    ),
    case(
        partial(grad_op, output_gradient=(1, 1, 1, 4, 4)),
        esc("SliceGrad: OutputGradientTensor.DimensionCount = 5 differs from InputGradientTensor.DimensionCount = 4"),
        "slicegrad-dimcount-mismatch",
    ),
    case(
        partial(split_op, outputs=((1, 1, 2, 2), (1, 4, 2))),
        esc("Split: OutputTensors[1].DimensionCount = 3 differs from InputTensor.DimensionCount = 4"),
        "split-dimcount-mismatch",
    ),
    case(
        partial(join_op, inputs=((1, 1, 2, 2), (1, 1, 1, 4, 2))),
        esc("Join: InputTensors[1].DimensionCount = 5 differs from InputTensors[0].DimensionCount = 4"),
        "join-dimcount-mismatch",
    ),
    # --- array lengths equal DimensionCount --------------------------------------------------
    case(
        partial(slice_op, offsets=(0, 1, 2)),
        esc("Slice: len(Offsets) = 3 must equal DimensionCount = 4"),
        "slice-offsets-length",
    ),
    case(
        partial(slice_op, sizes=(1, 1, 2, 2, 1)),
        esc("Slice: len(Sizes) = 5 must equal DimensionCount = 4"),
        "slice-sizes-length",
    ),
    case(
        partial(slice_op, strides=(1, 1)),
        esc("Slice: len(Strides) = 2 must equal DimensionCount = 4"),
        "slice-strides-length",
    ),
    case(
        partial(slice1_op, offsets=(0, 0, 0)),
        esc("Slice1: len(InputWindowOffsets) = 3 must equal DimensionCount = 4"),
        "slice1-offsets-length",
    ),
    case(
        partial(slice1_op, strides=(1, 1, 2, 2, 1)),
        esc("Slice1: len(InputWindowStrides) = 5 must equal DimensionCount = 4"),
        "slice1-strides-length",
    ),
    case(
        partial(grad_op, sizes=(4, 3)),
        esc("SliceGrad: len(InputWindowSizes) = 2 must equal DimensionCount = 4"),
        "slicegrad-sizes-length",
    ),
    # --- SLICE -------------------------------------------------------------------------------
    case(
        partial(slice_op, sizes=(1, 1, 2, 3)),
        esc("Slice: Sizes[3] = 3 differs from OutputTensor.Sizes[3] = 2"),
        "slice-sizes-differ-from-output",
    ),
    case(
        partial(slice_op, offsets=(0, 0, 3, 2)),
        esc("Slice: Offsets[2] + Strides[2] * (Sizes[2] - 1) = 4 reads past InputTensor.Sizes[2] = 4"),
        "slice-read-past-end-offset",
    ),
    case(
        partial(slice_op, offsets=(0, 0, 0, 0), strides=(1, 1, 1, 4)),
        esc("Slice: Offsets[3] + Strides[3] * (Sizes[3] - 1) = 4 reads past InputTensor.Sizes[3] = 4"),
        "slice-read-past-end-stride",
    ),
    case(
        partial(slice_op, offsets=(1, 0, 0, 0)),
        esc("Slice: Offsets[0] + Strides[0] * (Sizes[0] - 1) = 1 reads past InputTensor.Sizes[0] = 1"),
        "slice-read-past-end-unit-dim",
    ),
    case(
        partial(slice_op, offsets=(0, 0, -1, 0)),
        esc("Slice: Offsets[2] = -1 must be an unsigned 32-bit value (0 to 4294967295)"),
        "slice-offset-negative",
    ),
    case(
        partial(slice_op, offsets=(0, 0, 2**32, 0)),
        esc("Slice: Offsets[2] = 4294967296 must be an unsigned 32-bit value (0 to 4294967295)"),
        "slice-offset-above-uint32",
    ),
    case(
        partial(slice_op, strides=(1, 1, 1, -1)),
        esc("Slice: Strides[3] = -1 must be an unsigned 32-bit value (0 to 4294967295)"),
        "slice-stride-negative",
    ),
    case(
        partial(slice_op, output_kw={"strides": (4, 4, 0, 1)}),
        esc("Slice: OutputTensor.Strides[2] = 0 with Sizes[2] = 2 would make the output overlap itself"),
        "slice-output-zero-stride",
    ),
    case(
        partial(slice_op, output_kw={"flags": TensorFlags.OWNED_BY_DML}),
        esc("Slice: OutputTensor.Flags has OWNED_BY_DML, which only input tensors may have"),
        "slice-output-owned",
    ),
    # --- SLICE1 ------------------------------------------------------------------------------
    case(
        partial(slice1_op, offsets=(0, 0, 1, 1)),
        "^" + esc("Slice1: InputWindowOffsets[2] + InputWindowSizes[2] = 5 exceeds InputTensor.Sizes[2] = 4") + "$",
        "slice1-window-past-input",
    ),
    case(
        partial(slice1_op, offsets=(0, 0, 0, 2**32)),
        esc("Slice1: InputWindowOffsets[3] = 4294967296 must be an unsigned 32-bit value"),
        "slice1-offset-above-uint32",
    ),
    case(
        partial(slice1_op, offsets=(0, 0, -1, 1)),
        esc("Slice1: InputWindowOffsets[2] = -1 must be an unsigned 32-bit value (0 to 4294967295)"),
        "slice1-offset-negative",
    ),
    case(
        partial(slice1_op, sizes=(1, 1, 4, -3)),
        esc("Slice1: InputWindowSizes[3] = -3 must be an unsigned 32-bit value"),
        "slice1-size-negative",
    ),
    case(
        partial(slice1_op, strides=(1, 1, 2, 0)),
        esc("Slice1: InputWindowStrides[3] = 0 must be non-zero"),
        "slice1-zero-stride",
    ),
    case(
        partial(slice1_op, sizes=(1, 1, 0, 3)),
        esc("Slice1: InputWindowSizes[2] = 0 must be at least 1 (the window may not be empty)"),
        "slice1-empty-window",
    ),
    case(
        partial(slice1_op, output=(1, 1, 3, 2)),
        esc(
            "Slice1: OutputTensor.Sizes[2] = 3 exceeds MaxCopiedElements[2] = "
            "1 + (InputWindowSizes[2] - 1) / |InputWindowStrides[2]| = 2"
        ),
        "slice1-output-above-max-copied",
    ),
    case(
        partial(slice1_op, output=(1, 1, 2, 3), strides=(1, 1, 2, -2)),
        esc(
            "Slice1: OutputTensor.Sizes[3] = 3 exceeds MaxCopiedElements[3] = "
            "1 + (InputWindowSizes[3] - 1) / |InputWindowStrides[3]| = 2"
        ),
        "slice1-output-above-max-copied-negative",
    ),
    case(
        partial(slice1_op, strides=(1, 1, 2, 2**31)),
        esc("Slice1: InputWindowStrides[3] = 2147483648 must be a signed 32-bit value"),
        "slice1-stride-above-int32",
    ),
    case(
        partial(slice1_op, strides=(1, 1, -(2**31) - 1, 2)),
        esc("Slice1: InputWindowStrides[2] = -2147483649 must be a signed 32-bit value"),
        "slice1-stride-below-int32",
    ),
    case(
        partial(slice1_op, output_kw={"flags": TensorFlags.OWNED_BY_DML}),
        esc("Slice1: OutputTensor.Flags has OWNED_BY_DML, which only input tensors may have"),
        "slice1-output-owned",
    ),
    case(
        partial(slice1_op, output_kw={"strides": (2, 2, 1, 0)}),
        esc("Slice1: OutputTensor.Strides[3] = 0 with Sizes[3] = 2 would make the output overlap itself"),
        "slice1-output-zero-stride",
    ),
    # --- SLICE_GRAD: the window rules, with the gradient tensors' names -----------------------
    case(
        partial(grad_op, strides=(1, 1, 0, 2)),
        esc("SliceGrad: InputWindowStrides[2] = 0 must be non-zero"),
        "slicegrad-zero-stride",
    ),
    case(
        partial(grad_op, offsets=(0, 0, 1, 1)),
        esc("SliceGrad: InputWindowOffsets[2] + InputWindowSizes[2] = 5 exceeds OutputGradientTensor.Sizes[2] = 4"),
        "slicegrad-window-past-output-gradient",
    ),
    case(
        partial(grad_op, sizes=(1, 1, 4, 0)),
        esc("SliceGrad: InputWindowSizes[3] = 0 must be at least 1 (the window may not be empty)"),
        "slicegrad-empty-window",
    ),
    case(
        partial(grad_op, input_gradient=(1, 1, 3, 2)),
        esc(
            "SliceGrad: InputGradientTensor.Sizes[2] = 3 exceeds MaxCopiedElements[2] = "
            "1 + (InputWindowSizes[2] - 1) / |InputWindowStrides[2]| = 2"
        ),
        "slicegrad-input-gradient-above-max",
    ),
    case(
        partial(grad_op, strides=(1, 1, 2, -(2**31) - 1)),
        esc("SliceGrad: InputWindowStrides[3] = -2147483649 must be a signed 32-bit value"),
        "slicegrad-stride-outside-int32",
    ),
    case(
        partial(grad_op, offsets=(0, 0, 0, -1)),
        esc("SliceGrad: InputWindowOffsets[3] = -1 must be an unsigned 32-bit value"),
        "slicegrad-offset-negative",
    ),
    case(
        partial(grad_op, output_kw={"flags": TensorFlags.OWNED_BY_DML}),
        esc("SliceGrad: OutputGradientTensor.Flags has OWNED_BY_DML, which only input tensors may have"),
        "slicegrad-output-owned",
    ),
    case(
        partial(grad_op, output_kw={"strides": (16, 16, 4, 0)}),
        esc("SliceGrad: OutputGradientTensor.Strides[3] = 0 with Sizes[3] = 4 would make the output overlap itself"),
        "slicegrad-output-zero-stride",
    ),
    # --- SPLIT -------------------------------------------------------------------------------
    case(partial(split_op, outputs=()), esc("Split: OutputCount = 0 must be greater than 0"), "split-no-outputs"),
    case(
        partial(split_op, axis=4), esc("Split: Axis = 4 must be in [0, 3] (DimensionCount = 4)"), "split-axis-too-large"
    ),
    case(
        partial(split_op, axis=-1),
        esc("Split: Axis = -1 must be in [0, 3] (DimensionCount = 4)"),
        "split-axis-negative",
    ),
    case(
        partial(split_op, outputs=((1, 1, 2, 2), (1, 1, 1, 3), (1, 1, 3, 2))),
        esc(
            "Split: OutputTensors[1].Sizes[3] = 3 differs from InputTensor.Sizes[3] = 2 "
            "(only Sizes[Axis = 2] may differ)"
        ),
        "split-part-differs-off-axis",
    ),
    case(
        partial(split_op, outputs=((1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 2, 2))),
        esc("Split: OutputTensors' Sizes[2] sum to 5, not InputTensor.Sizes[2] = 6"),
        "split-sizes-sum-short",
    ),
    case(
        partial(split_op, outputs=((1, 1, 4, 2), (1, 1, 3, 2))),
        esc("Split: OutputTensors' Sizes[2] sum to 7, not InputTensor.Sizes[2] = 6"),
        "split-sizes-sum-long",
    ),
    case(
        partial(split_op, outputs=((1, 1, 6, 1),), axis=3),
        esc("Split: OutputTensors' Sizes[3] sum to 1, not InputTensor.Sizes[3] = 2"),
        "split-single-output-short",
    ),
    case(
        partial(split_op, output_kws=[{}, {"flags": TensorFlags.OWNED_BY_DML}, {}]),
        esc("Split: OutputTensors[1].Flags has OWNED_BY_DML, which only input tensors may have"),
        "split-output-owned",
    ),
    case(
        partial(split_op, output_kws=[{"strides": (4, 4, 0, 1)}, {}, {}]),
        esc("Split: OutputTensors[0].Strides[2] = 0 with Sizes[2] = 2 would make the output overlap itself"),
        "split-output-zero-stride",
    ),
    # --- JOIN: SPLIT mirrored ----------------------------------------------------------------
    case(partial(join_op, inputs=()), esc("Join: InputCount = 0 must be greater than 0"), "join-no-inputs"),
    case(partial(join_op, axis=4), esc("Join: Axis = 4 must be in [0, 3] (DimensionCount = 4)"), "join-axis-too-large"),
    case(
        partial(join_op, inputs=((1, 1, 2, 2), (1, 1, 1, 3), (1, 1, 3, 2))),
        esc(
            "Join: InputTensors[1].Sizes[3] = 3 differs from OutputTensor.Sizes[3] = 2 "
            "(only Sizes[Axis = 2] may differ)"
        ),
        "join-part-differs-off-axis",
    ),
    case(
        partial(join_op, inputs=((1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 2, 2))),
        esc("Join: InputTensors' Sizes[2] sum to 5, not OutputTensor.Sizes[2] = 6"),
        "join-sizes-sum-short",
    ),
    case(
        partial(join_op, output_kw={"flags": TensorFlags.OWNED_BY_DML}),
        esc("Join: OutputTensor.Flags has OWNED_BY_DML, which only input tensors may have"),
        "join-output-owned",
    ),
    case(
        partial(join_op, output_kw={"strides": (12, 12, 2, 0)}),
        esc("Join: OutputTensor.Strides[3] = 0 with Sizes[3] = 2 would make the output overlap itself"),
        "join-output-zero-stride",
    ),
    # --- outputs must not overlap themselves through any strides, not only zero ones ---------
    case(
        partial(slice_op, output_kw={"strides": (4, 4, 1, 1)}),
        esc(
            "Slice: OutputTensor.Strides = (4, 4, 1, 1) with Sizes = (1, 1, 2, 2) would make the output "
            "overlap itself (two indices reach one element)"
        ),
        "slice-output-overlaps-itself",
    ),
    case(
        partial(slice1_op, output_kw={"strides": (4, 4, 1, 1)}),
        esc("Slice1: OutputTensor.Strides = (4, 4, 1, 1) with Sizes = (1, 1, 2, 2) would make the output"),
        "slice1-output-overlaps-itself",
    ),
    case(
        partial(grad_op, output_kw={"strides": (16, 16, 3, 1)}),  # [1, 0] and [0, 3] are both element 3
        esc("SliceGrad: OutputGradientTensor.Strides = (16, 16, 3, 1) with Sizes = (1, 1, 4, 4) would make"),
        "slicegrad-output-overlaps-itself",
    ),
    case(
        partial(split_op, output_kws=[{}, {}, {"strides": (6, 6, 1, 1)}]),
        esc("Split: OutputTensors[2].Strides = (6, 6, 1, 1) with Sizes = (1, 1, 3, 2) would make the output"),
        "split-output-overlaps-itself",
    ),
    case(
        partial(join_op, output_kw={"strides": (24, 24, 1, 3)}),  # [3, 0] and [0, 1] are both element 3
        esc("Join: OutputTensor.Strides = (24, 24, 1, 3) with Sizes = (1, 1, 6, 2) would make the output"),
        "join-output-overlaps-itself",
    ),
]


@pytest.mark.parametrize(("build", "expected"), INVALID)
def test_invalid_descriptor_raises(build, expected):
    with pytest.raises(cd.DescriptorError, match=expected) as e:
        build()
    assert isinstance(e.value, ValueError)
    assert isinstance(e.value, cd.ValidationError)
    assert str(e.value) == "\n".join(e.value.violations)


# ---------------------------------------------------------------------------------------------
MULTIPLE = [
    # zero stride in dim 3, window past the input in dim 2
    pytest.param(partial(slice1_op, offsets=(0, 0, 1, 1), strides=(1, 1, 2, 0)), "Slice1", 2, id="slice1"),
    # zero size, negative stride
    pytest.param(t([2, 0], strides=[-1, 1]), "BufferTensorDesc", 2, id="tensor"),
    # read past the end in two dimensions, one negative offset
    pytest.param(partial(slice_op, offsets=(0, -1, 3, 3)), "Slice", 3, id="slice"),
    # two off-axis mismatches and a wrong sum
    pytest.param(partial(split_op, outputs=((1, 1, 2, 3), (1, 2, 1, 2))), "Split", 3, id="split"),
    # type and dimension count unsupported at 1_0, for both tensors
    pytest.param(
        partial(
            slice_op, source=(4, 4), output=(2, 2), offsets=(1, 2), strides=(1, 1), dtype=T.INT8, feature_level="1_0"
        ),
        "Slice",
        4,
        id="slice-level",
    ),
]


@pytest.mark.parametrize(("build", "where", "count"), MULTIPLE)
def test_violations_are_collected_into_one_error(build, where, count):
    with pytest.raises(cd.DescriptorError) as e:
        build()
    violations = e.value.violations
    assert len(violations) >= 2
    assert len(violations) == count, violations
    assert all(line.startswith(f"{where}: ") for line in violations), violations
    assert str(e.value).splitlines() == list(violations)


# ---------------------------------------------------------------------------------------------
VALID = [
    pytest.param(partial(slice_op, offsets=(0, 0, 3, 1), strides=(1, 1, 0, 0)), id="slice-stride-0-repeats"),
    pytest.param(partial(slice_op, offsets=(0, 0, 2, 2)), id="slice-last-row-in-bounds"),
    pytest.param(partial(slice_op, input_kw={"flags": TensorFlags.OWNED_BY_DML}), id="slice-input-owned-by-dml"),
    pytest.param(
        partial(slice_op, output=(1, 1, 2, 1), offsets=(0, 0, 0, 3), strides=(1, 1, 3, U32_MAX)),
        id="slice-stride-uint32-max-on-size-1",
    ),
    pytest.param(partial(slice_op, output_kw={"strides": (0, 0, 2, 1)}), id="slice-output-zero-stride-on-size-1"),
    pytest.param(partial(slice_op, output_kw={"strides": (4, 4, 1, 2)}), id="slice-output-column-major"),
    pytest.param(partial(slice_op, output_kw={"strides": (8, 8, 1, 4)}), id="slice-output-interleaved-gaps"),
    pytest.param(partial(join_op, output_kw={"strides": (24, 24, 2, 13)}), id="join-output-interleaved-columns"),
    # inputs may overlap themselves: rows that share elements, or broadcast
    pytest.param(partial(slice_op, input_kw={"strides": (4, 4, 1, 1)}), id="slice-input-overlaps-itself"),
    pytest.param(partial(slice1_op, source=(1, 1, 4, 4)), id="slice1-input-packed"),
    pytest.param(
        lambda: cd.SplitOperatorDesc(tensor((1, 1, 6, 2), strides=(0, 0, 1, 1)), [tensor(p) for p in SPLIT_PARTS], 2),
        id="split-input-overlaps-itself",
    ),
    pytest.param(
        partial(slice_op, output_kw={"strides": (16, 16, 8, 2), "total_tensor_size_in_bytes": 4096}),
        id="slice-output-padded",
    ),
    pytest.param(
        partial(
            slice_op, source=(4, 4, 4), output=(2, 2, 2), offsets=(0, 1, 2), strides=(1, 1, 1), feature_level="3_0"
        ),
        id="slice-3-dims-at-3_0",
    ),
    pytest.param(
        partial(slice_op, source=(3,) * 8, output=(1,) * 8, offsets=(2,) * 8, strides=(1,) * 8, feature_level="3_0"),
        id="slice-8-dims-at-3_0",
    ),
    pytest.param(partial(slice_op, dtype=T.INT8, feature_level="2_1"), id="slice-int8-at-2_1"),
    pytest.param(partial(slice_op, dtype=T.FLOAT64, feature_level="4_1"), id="slice-float64-at-4_1"),
    pytest.param(partial(slice_op, dtype=T.UINT64), id="slice-uint64-default-level"),
    pytest.param(
        partial(
            slice_op,
            source=(1, 1, 1, 4, 4),
            output=(1, 1, 1, 2, 2),
            offsets=(0, 0, 0, 1, 2),
            strides=(1,) * 5,
            feature_level="1_0",
        ),
        id="slice-5-dims-at-1_0",
    ),
    pytest.param(partial(slice1_op, strides=(1, 1, -2, 2)), id="slice1-negative-stride-spec-example"),
    pytest.param(partial(slice1_op, strides=(-1, -1, -2, -2)), id="slice1-all-negative-strides"),
    pytest.param(partial(slice1_op, output=(1, 1, 1, 2)), id="slice1-output-below-max-copied"),
    pytest.param(partial(slice1_op, output=(1, 1, 1, 1), strides=(1, 1, 5, -7)), id="slice1-stride-beyond-window"),
    pytest.param(partial(slice1_op, output=(1, 1, 2, 1), strides=(1, 1, 2, -(2**31))), id="slice1-int32-min-stride"),
    pytest.param(partial(slice1_op, output=(1, 1, 2, 1), strides=(1, 1, 2, 2**31 - 1)), id="slice1-int32-max-stride"),
    pytest.param(partial(slice1_op, offsets=(0, 0, 0, 0), sizes=(1, 1, 4, 4)), id="slice1-window-whole-input"),
    pytest.param(partial(slice1_op, dtype=T.UINT8, feature_level="2_1"), id="slice1-uint8-at-2_1"),
    pytest.param(partial(slice1_op, dtype=T.INT64, feature_level="4_1"), id="slice1-int64-at-4_1"),
    pytest.param(partial(grad_op, strides=(1, 1, -2, 2)), id="slicegrad-negative-stride"),
    pytest.param(partial(grad_op, input_gradient=(1, 1, 1, 2)), id="slicegrad-below-max-copied"),
    pytest.param(partial(grad_op, dtype=T.INT8, feature_level="3_0"), id="slicegrad-int8-at-3_0"),
    pytest.param(
        partial(
            grad_op,
            input_gradient=(1,) * 5 + (2,),
            output_gradient=(1,) * 5 + (4,),
            offsets=(0,) * 6,
            sizes=(1,) * 5 + (3,),
            strides=(1,) * 5 + (2,),
            feature_level="3_1",
        ),
        id="slicegrad-6-dims-at-3_1",
    ),
    pytest.param(partial(grad_op, dtype=T.FLOAT64, feature_level="4_1"), id="slicegrad-float64-at-4_1"),
    pytest.param(partial(split_op, outputs=((1, 1, 6, 2),)), id="split-one-output"),
    pytest.param(partial(split_op, outputs=((1, 1, 6, 1), (1, 1, 6, 1)), axis=3), id="split-axis-3-spec-example"),
    pytest.param(partial(split_op, outputs=((1, 1, 6, 2),), axis=0), id="split-one-output-axis-0"),
    pytest.param(
        partial(split_op, source=(6, 2), outputs=((2, 2), (4, 2)), axis=0, feature_level="3_0"),
        id="split-2-dims-at-3_0",
    ),
    pytest.param(partial(split_op, dtype=T.UINT8, feature_level="2_1"), id="split-uint8-at-2_1"),
    pytest.param(partial(split_op, dtype=T.FLOAT64, feature_level="4_1"), id="split-float64-at-4_1"),
    pytest.param(partial(join_op), id="join"),
    pytest.param(partial(join_op, inputs=((1, 1, 6, 2),)), id="join-one-input"),
    pytest.param(partial(join_op, dtype=T.INT64, feature_level="4_1"), id="join-int64-at-4_1"),
    pytest.param(t([2**32 - 1], data_type=T.UINT8), id="tensor-span-exactly-2^32-1"),
    pytest.param(t([U32_MAX, 1], strides=[1, U32_MAX], data_type=T.UINT8), id="tensor-uint32-max-size-and-stride"),
    pytest.param(t([4], guaranteed_base_offset_alignment=4), id="tensor-alignment-equals-element-size"),
    pytest.param(t([4], data_type=T.UINT8, guaranteed_base_offset_alignment=1), id="tensor-alignment-1-for-uint8"),
    pytest.param(t([4], guaranteed_base_offset_alignment=2**31), id="tensor-alignment-2^31"),
    pytest.param(t([2, 3], total_tensor_size_in_bytes=24), id="tensor-total-equals-minimum"),
    pytest.param(t([2, 3], flags=TensorFlags.OWNED_BY_DML), id="tensor-owned-by-dml"),
]


@pytest.mark.parametrize("build", VALID)
def test_valid_edge_case_constructs(build):
    desc = build()
    if not isinstance(desc, cd.BufferTensorDesc):
        assert isinstance(desc.compile(), cd.CompiledOperator)


@pytest.mark.parametrize("level", ["3_0", "3.0", "DML_FEATURE_LEVEL_3_0", 0x3000, L.LEVEL_3_0])
@pytest.mark.parametrize(
    "build",
    [
        partial(slice_op, source=(4, 4, 4), output=(2, 2, 2), offsets=(0, 1, 2), strides=(1, 1, 1)),
        partial(slice1_op, source=(4, 4), output=(2, 2), offsets=(0, 1), sizes=(4, 3), strides=(2, -2)),
        partial(split_op, source=(6,), outputs=((2,), (4,)), axis=0),
    ],
    ids=["slice", "slice1", "split"],
)
def test_feature_level_spellings(build, level):
    desc = build(feature_level=level)
    assert desc.feature_level is L.LEVEL_3_0


@pytest.mark.parametrize("level", ["2_1", 0x2100, L.LEVEL_2_1])
def test_feature_level_spellings_reject_alike(level):
    with pytest.raises(cd.DescriptorError, match=esc("not supported at feature level 2_1 (supported: 4 to 5)")):
        slice_op(source=(4, 4, 4), output=(2, 2, 2), offsets=(0, 1, 2), strides=(1, 1, 1), feature_level=level)


# ---------------------------------------------------------------------------------------------
TYPE_ERRORS = [
    case(
        lambda: cd.SliceOperatorDesc(
            np.zeros((1, 1, 4, 4), np.float32), tensor((1, 1, 2, 2)), (0,) * 4, (1, 1, 2, 2), (1,) * 4
        ),
        esc("Slice: InputTensor must be a BufferTensorDesc, not ndarray"),
        "slice-array-as-tensor",
    ),
    case(
        lambda: cd.Slice1OperatorDesc(tensor((1, 1, 4, 4)), "OutputTensor", (0,) * 4, (1, 1, 2, 2), (1,) * 4),
        esc("Slice1: OutputTensor must be a BufferTensorDesc, not str"),
        "slice1-str-as-tensor",
    ),
    case(
        lambda: cd.SplitOperatorDesc(tensor((1, 1, 6, 2)), [tensor((1, 1, 2, 2)), (1, 1, 4, 2)], 2),
        esc("Split: OutputTensors[1] must be a BufferTensorDesc, not tuple"),
        "split-tuple-as-tensor",
    ),
    case(
        lambda: cd.JoinOperatorDesc(tensor((1, 1, 6, 2)), tensor((1, 1, 6, 2)), 2),
        esc("Join: InputTensors must be a sequence of BufferTensorDesc"),
        "join-single-tensor-as-inputs",
    ),
    case(
        partial(slice_op, offsets=(0, 0, 1.0, 2)),
        esc("Slice: Offsets[2] must be an integer, not float"),
        "slice-float-offset",
    ),
    case(
        partial(slice1_op, strides=(1, 1, 2.5, 2)),
        esc("Slice1: InputWindowStrides[2] must be an integer, not float"),
        "slice1-float-stride",
    ),
    case(
        partial(grad_op, sizes=(1, 1, True, 3)),
        esc("SliceGrad: InputWindowSizes[2] must be an integer, not bool"),
        "slicegrad-bool-size",
    ),
    case(
        partial(slice_op, offsets=5),
        esc("Slice: Offsets must be a sequence of integers, not int"),
        "slice-int-as-offsets",
    ),
    case(partial(split_op, axis=True), esc("Split: Axis must be an integer, not bool"), "split-bool-axis"),
    case(partial(join_op, axis=2.0), esc("Join: Axis must be an integer, not float"), "join-float-axis"),
    case(partial(split_op, axis=1.0), esc("Split: Axis must be an integer, not float"), "split-float-axis"),
    case(partial(split_op, axis=float("nan")), esc("Split: Axis must be an integer, not float"), "split-nan-axis"),
    case(partial(split_op, axis=np.float64(2)), esc("Split: Axis must be an integer, not float64"), "split-np-float"),
    case(partial(split_op, axis=None), esc("Split: Axis must be an integer, not NoneType"), "split-none-axis"),
    case(partial(join_op, axis="2"), esc("Join: Axis must be an integer, not str"), "join-str-axis"),
    case(partial(join_op, axis=np.True_), esc("Join: Axis must be an integer, not bool"), "join-numpy-bool-axis"),
    case(
        partial(slice_op, strides=(1, 1, np.True_, 1)),
        esc("Slice: Strides[2] must be an integer, not bool"),
        "slice-np-bool",
    ),
    case(
        partial(join_op, inputs=((1, 1, 6, 2),), feature_level=1.0),
        esc("feature_level must be a FeatureLevel, int or str, not float"),
        "join-float-feature-level",
    ),
    case(t([2.0, 3]), esc("BufferTensorDesc: Sizes[0] must be an integer, not float"), "tensor-float-size"),
    case(
        t([2, 3], strides=[3, "1"]),
        esc("BufferTensorDesc: Strides[1] must be an integer, not str"),
        "tensor-str-stride",
    ),
    case(
        partial(slice_op, feature_level=3.0),
        esc("feature_level must be a FeatureLevel, int or str, not float"),
        "float-feature-level",
    ),
]


@pytest.mark.parametrize(("build", "expected"), TYPE_ERRORS)
def test_wrong_types_raise_type_error(build, expected):
    with pytest.raises(TypeError, match=expected) as e:
        build()
    assert not isinstance(e.value, ValueError)


# ---------------------------------------------------------------------------------------------
# Complete lists: every rule that does not need a valid value of another field is checked,
# whatever else is broken. Each row gives the exact list of violations, in order.
COMPLETE = [
    pytest.param(
        t([0], guaranteed_base_offset_alignment=3),
        [
            "BufferTensorDesc: Sizes[0] = 0 must be at least 1 (a zero size is invalid)",
            "BufferTensorDesc: GuaranteedBaseOffsetAlignment = 3 must be 0 or a power of two >= the element size 4",
        ],
        id="tensor-zero-size-and-alignment",
    ),
    pytest.param(
        t([2], data_type=12, guaranteed_base_offset_alignment=3, total_tensor_size_in_bytes=2),
        [
            "BufferTensorDesc: DataType 12 is not a DML_TENSOR_DATA_TYPE value",
            # without an element size, only the power of two can be checked, and no minimum size
            "BufferTensorDesc: GuaranteedBaseOffsetAlignment = 3 must be 0 or a power of two",
        ],
        id="tensor-type-out-of-enum-and-alignment",
    ),
    pytest.param(
        t([0, 2], data_type=T.UNKNOWN, flags=2, total_tensor_size_in_bytes=-1),
        [
            "BufferTensorDesc: DataType UNKNOWN (0) is not a valid tensor data type",
            "BufferTensorDesc: Sizes[0] = 0 must be at least 1 (a zero size is invalid)",
            "BufferTensorDesc: Flags = 2 has bits other than NONE and OWNED_BY_DML",
            "BufferTensorDesc: TotalTensorSizeInBytes = -1 must be an unsigned 64-bit value",
        ],
        id="tensor-type-size-flags-total",
    ),
    pytest.param(
        t([2, 3], strides=[3], total_tensor_size_in_bytes=4, guaranteed_base_offset_alignment=2),
        [
            "BufferTensorDesc: len(Strides) = 1 must equal DimensionCount = 2",
            "BufferTensorDesc: GuaranteedBaseOffsetAlignment = 2 must be 0 or a power of two >= the element size 4",
        ],
        id="tensor-strides-length-and-alignment",
    ),
    # --- operators: a rule is skipped only when a field it needs is unusable ------------------
    pytest.param(
        partial(slice1_op, output_dtype=T.INT32, offsets=(0, 0, 1, 1), strides=(0, 1, 2, 2)),
        [
            "Slice1: OutputTensor.DataType = INT32 differs from InputTensor.DataType = FLOAT32",
            "Slice1: InputWindowStrides[0] = 0 must be non-zero",
            "Slice1: InputWindowOffsets[2] + InputWindowSizes[2] = 5 exceeds InputTensor.Sizes[2] = 4",
        ],
        id="slice1-datatype-mismatch-and-window",
    ),
    pytest.param(
        partial(
            grad_op, input_gradient=(1, 1, 3, 2), output_dtype=T.UINT32, offsets=(0, 0, 1, 1), strides=(0, 1, 2, 2)
        ),
        [
            "SliceGrad: OutputGradientTensor.DataType = UINT32 differs from InputGradientTensor.DataType = FLOAT32",
            "SliceGrad: InputWindowStrides[0] = 0 must be non-zero",
            "SliceGrad: InputWindowOffsets[2] + InputWindowSizes[2] = 5 exceeds OutputGradientTensor.Sizes[2] = 4",
            "SliceGrad: InputGradientTensor.Sizes[2] = 3 exceeds MaxCopiedElements[2] = "
            "1 + (InputWindowSizes[2] - 1) / |InputWindowStrides[2]| = 2",
        ],
        id="slicegrad-datatype-mismatch-and-window",
    ),
    pytest.param(
        partial(slice_op, output_dtype=T.FLOAT16, offsets=(0, 0, 3, 2)),
        [
            "Slice: OutputTensor.DataType = FLOAT16 differs from InputTensor.DataType = FLOAT32",
            "Slice: Offsets[2] + Strides[2] * (Sizes[2] - 1) = 4 reads past InputTensor.Sizes[2] = 4",
        ],
        id="slice-datatype-mismatch-and-read-past",
    ),
    pytest.param(
        partial(split_op, dtypes=[F32, T.INT32, F32], axis=5),
        [
            "Split: OutputTensors[1].DataType = INT32 differs from InputTensor.DataType = FLOAT32",
            "Split: Axis = 5 must be in [0, 3] (DimensionCount = 4)",
        ],
        id="split-datatype-mismatch-and-axis",
    ),
    pytest.param(
        partial(
            split_op, source=(1, 1, 6, 2, 1), outputs=((1, 1, 6, 2, 1),), dtype=T.INT8, axis=5, feature_level="1_0"
        ),
        [
            "Split: InputTensor.DimensionCount = 5 is not supported at feature level 1_0 (supported: 4)",
            f"Split: InputTensor.DataType = INT8 is not supported at feature level 1_0 (supported: {SORTED_TYPES_1_0})",
            "Split: OutputTensors[0].DimensionCount = 5 is not supported at feature level 1_0 (supported: 4)",
            f"Split: OutputTensors[0].DataType = INT8 is not supported at feature level 1_0 "
            f"(supported: {SORTED_TYPES_1_0})",
            "Split: Axis = 5 must be in [0, 4] (DimensionCount = 5)",
        ],
        id="split-unsupported-and-axis",
    ),
    pytest.param(
        partial(slice1_op, offsets=(0, 0, 0), strides=(1, 1, 2, 0)),
        [  # no window-in-input rule without one offset per dimension; the others still apply
            "Slice1: len(InputWindowOffsets) = 3 must equal DimensionCount = 4",
            "Slice1: InputWindowStrides[3] = 0 must be non-zero",
        ],
        id="slice1-offsets-length-and-zero-stride",
    ),
    pytest.param(
        partial(slice1_op, strides=(1, 1, 2, 2, 1), sizes=(1, 1, 4, 5)),
        [  # no output-size rule without one stride per dimension; the window rule still applies
            "Slice1: len(InputWindowStrides) = 5 must equal DimensionCount = 4",
            "Slice1: InputWindowOffsets[3] + InputWindowSizes[3] = 6 exceeds InputTensor.Sizes[3] = 4",
        ],
        id="slice1-strides-length-and-window",
    ),
    pytest.param(
        partial(slice_op, output=(1, 2, 2), sizes=(1, 1, 2, 2), offsets=(0, 0, 3, 2)),
        [  # Sizes cannot be compared with a 3-dimensional output; the read rule needs the input only
            "Slice: OutputTensor.DimensionCount = 3 differs from InputTensor.DimensionCount = 4",
            "Slice: Offsets[2] + Strides[2] * (Sizes[2] - 1) = 4 reads past InputTensor.Sizes[2] = 4",
        ],
        id="slice-dimcount-mismatch-and-read-past",
    ),
    pytest.param(
        partial(slice1_op, feature_level="2_0", offsets=(0, 0, 1, 1)),
        [
            "Slice1: the operator needs feature level 2_1 or newer; got 2_0",
            "Slice1: InputWindowOffsets[2] + InputWindowSizes[2] = 5 exceeds InputTensor.Sizes[2] = 4",
        ],
        id="slice1-level-and-window",
    ),
    pytest.param(
        partial(split_op, dtypes=[F32, T.INT32, F32], output_kws=[{}, {}, {"strides": (6, 6, 1, 1)}], axis=4),
        [
            "Split: OutputTensors[1].DataType = INT32 differs from InputTensor.DataType = FLOAT32",
            "Split: OutputTensors[2].Strides = (6, 6, 1, 1) with Sizes = (1, 1, 3, 2) would make the output "
            "overlap itself (two indices reach one element)",
            "Split: Axis = 4 must be in [0, 3] (DimensionCount = 4)",
        ],
        id="split-output-overlap-type-and-axis",
    ),
    pytest.param(
        partial(join_op, inputs=(), axis=7),
        ["Join: InputCount = 0 must be greater than 0", "Join: Axis = 7 must be in [0, 3] (DimensionCount = 4)"],
        id="join-no-inputs-and-axis",
    ),
    pytest.param(
        t([1] * 9, total_tensor_size_in_bytes=2),
        [
            "BufferTensorDesc: DimensionCount = 9 must be between 1 and 8",
            "BufferTensorDesc: TotalTensorSizeInBytes = 2 is less than the minimum implied size 4 "
            "(DMLCalcBufferTensorSize)",
        ],
        id="tensor-9-dims-and-total",
    ),
]


@pytest.mark.parametrize(("build", "expected"), COMPLETE)
def test_every_independent_rule_is_listed(build, expected):
    with pytest.raises(cd.DescriptorError) as e:
        build()
    assert list(e.value.violations) == expected


@pytest.mark.parametrize("integer", [np.int64, np.uint16, np.int32, int])
def test_numpy_integers_count_by_value(integer):
    """A NumPy integer is its value wherever an integer belongs: axis, arrays, feature level."""
    split = split_op(axis=integer(2), feature_level=integer(0x4100))
    assert split == split_op(axis=2, feature_level="4_1")
    assert type(split.axis) is int and split.feature_level is L.LEVEL_4_1
    join = join_op(axis=integer(3), inputs=((1, 1, 6, 1), (1, 1, 6, 1)))
    assert join.axis == 3 and type(join.axis) is int
    window = slice1_op(offsets=[integer(0), 0, 0, integer(1)], strides=np.array([1, 1, 2, 2], integer))
    assert window == slice1_op()
    assert all(type(x) is int for x in (*window.input_window_offsets, *window.input_window_strides))

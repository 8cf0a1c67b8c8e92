"""Every error an array function raises, as its caller reads it.

Per function, a table of calls that break each rule the function can reach, with the exception
and the whole message: the argument as the call names it (``window_offsets[1]``,
``x.shape[1]``, ``out``) and its value, DirectML's rule in parentheses (the descriptors keep
DirectML's words: ``test_descriptor_errors``), and where NumPy has a way around a rule, the
function that takes it. Calls that NumPy or PyTorch would read otherwise (the DirectML-named
functions take their window and split arguments by name) are refused with what the caller
meant. Then the properties every message keeps, and hostile values for every integer argument.
"""

import re

import numpy as np
import pytest

import cudadml as cd
from cudadml import messages


def case(name, call, error, message):
    return pytest.param(call, error, message, id=name)


SLICE = [
    case(
        "positional",
        lambda xp, x: cd.slice(x, [0, 0], [2, 3], [2, 2]),
        TypeError,
        (
            "cd.slice(x, [0, 0], [2, 3], [2, 2]): pass offsets=, sizes=, strides= by name: SLICE's "
            "sizes are the result's shape, where cd.slice1's window_sizes are the window read and "
            "ONNX's and JAX's slices take ends; write cd.slice(x, offsets=[0, 0], sizes=[2, 3], "
            "strides=[2, 2]), or cd.strided_slice(x, key) for x[key]"
        ),
    ),
    case(
        "positional_extra",
        lambda xp, x: cd.slice(x, [0, 0], [1, 1], [1, 1], [1, 1]),
        TypeError,
        (
            "cd.slice(x, [0, 0], [1, 1], [1, 1], [1, 1]): pass offsets=, sizes=, strides= by name "
            "(1 more positional argument than it takes): SLICE's sizes are the result's shape, "
            "where cd.slice1's window_sizes are the window read and ONNX's and JAX's slices take "
            "ends; write cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[1, 1]), or "
            "cd.strided_slice(x, key) for x[key]"
        ),
    ),
    case(
        "offsets_required",
        lambda xp, x: cd.slice(x, sizes=[1, 1]),
        TypeError,
        "slice: offsets= is required (one integer per axis)",
    ),
    case(
        "sizes_required",
        lambda xp, x: cd.slice(x, offsets=[0, 0]),
        TypeError,
        "slice: sizes= is required (one integer per axis)",
    ),
    case(
        "offsets_not_a_sequence",
        lambda xp, x: cd.slice(x, offsets=3, sizes=[1, 1]),
        TypeError,
        "slice: offsets = 3 must be a sequence of integers, not int",
    ),
    case(
        "offsets_nan",
        lambda xp, x: cd.slice(x, offsets=[0, float("nan")], sizes=[1, 1]),
        TypeError,
        "slice: offsets[1] = nan must be an integer, not float",
    ),
    case(
        "offsets_float",
        lambda xp, x: cd.slice(x, offsets=[0, 1.0], sizes=[1, 1]),
        TypeError,
        "slice: offsets[1] = 1.0 must be an integer, not float",
    ),
    case(
        "sizes_none",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[None, 1]),
        TypeError,
        "slice: sizes[0] = None must be an integer, not NoneType",
    ),
    case(
        "sizes_bool",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[True, 1]),
        TypeError,
        "slice: sizes[0] = True must be an integer, not bool",
    ),
    case(
        "strides_numpy_float",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[np.float64(1), 1]),
        TypeError,
        "slice: strides[0] = np.float64(1.0) must be an integer, not float64",
    ),
    case(
        "strides_str",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=["1", 1]),
        TypeError,
        "slice: strides[0] = '1' must be an integer, not str",
    ),
    case(
        "zero_dimensional",
        lambda xp, x: cd.slice(x[0, 0], offsets=[], sizes=[]),
        ValueError,
        "slice: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    case(
        "lengths",
        lambda xp, x: cd.slice(x, offsets=[0], sizes=[1], strides=[1]),
        cd.DescriptorError,
        (
            "slice: len(offsets) = 1 must equal x.ndim = 2 (DirectML: len(Offsets) must equal "
            "DimensionCount)\nslice: len(sizes) = 1 must equal x.ndim = 2 (DirectML: len(Sizes) "
            "must equal DimensionCount)\nslice: len(strides) = 1 must equal x.ndim = 2 (DirectML: "
            "len(Strides) must equal DimensionCount)"
        ),
    ),
    case(
        "offset_negative",
        lambda xp, x: cd.slice(x, offsets=[-1, 0], sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] = -1 must be an unsigned 32-bit value (0 to 4294967295); "
            "cd.strided_slice(x, key) takes indices from the end, as NumPy does (DirectML: "
            "Offsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    case(
        "offset_huge",
        lambda xp, x: cd.slice(x, offsets=[2**40, 0], sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] = 1099511627776 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: Offsets[0] must be an unsigned 32-bit value (0 to 4294967295))\nslice: "
            "offsets[0] + strides[0] * (sizes[0] - 1) = 1099511627776 reads past x.shape[0] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: Offsets[0] + "
            "Strides[0] * (Sizes[0] - 1) reads past InputTensor.Sizes[0])"
        ),
    ),
    case(
        "size_negative",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[-1, 1]),
        cd.DescriptorError,
        (
            "slice: sizes[0] = -1 must not be negative (DirectML: OutputTensor.Sizes[0] must be at "
            "least 1 (a zero size is invalid))"
        ),
    ),
    case(
        "size_huge",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice: sizes[0] = 4294967296 exceeds UINT32 max 4294967295 (DirectML: "
            "OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    case(
        "stride_negative",
        lambda xp, x: cd.slice(x, offsets=[3, 0], sizes=[2, 1], strides=[-1, 1]),
        cd.DescriptorError,
        (
            "slice: strides[0] = -1 must be an unsigned 32-bit value (0 to 4294967295); cd.slice1 "
            "(window_strides=) and cd.strided_slice take negative steps (DirectML: Strides[0] must "
            "be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    case(
        "stride_huge",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice: strides[0] = 4294967296 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: Strides[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    case(
        "reads_past",
        lambda xp, x: cd.slice(x, offsets=[3, 0], sizes=[2, 4], strides=[2, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] + strides[0] * (sizes[0] - 1) = 5 reads past x.shape[0] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: Offsets[0] + "
            "Strides[0] * (Sizes[0] - 1) reads past InputTensor.Sizes[0])"
        ),
    ),
    case(
        "rank_past_8",
        lambda xp, x: cd.slice(x.reshape((1,) * 7 + (4, 4)), offsets=[0] * 9, sizes=[1] * 9),
        cd.DescriptorError,
        ("slice: x.ndim = 9 must be between 1 and 8 (DirectML: InputTensor.DimensionCount must be between 1 and 8)"),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_1 (supported: 4 to 5))"
        ),
    ),
    case(
        "type_at_level",
        lambda xp, x: cd.slice(
            x.reshape(1, 1, 4, 4).astype(np.int8), offsets=[0] * 4, sizes=[1] * 4, feature_level="1_0"
        ),
        cd.DescriptorError,
        (
            "slice: x.dtype = int8 is not supported at feature level 1_0 (supported: float16, "
            "float32, int16, int32, uint16, uint32) (DirectML: InputTensor.DataType is not "
            "supported at feature level 1_0 (supported: FLOAT16, FLOAT32, INT16, INT32, UINT16, "
            "UINT32))"
        ),
    ),
    case(
        "raw_bits_at_level",
        lambda xp, x: cd.slice(
            x.reshape(1, 1, 4, 4).astype(bool),
            offsets=[0] * 4,
            sizes=[1] * 4,
            feature_level="1_0",
            directml_types=False,
        ),
        cd.DescriptorError,
        (
            "slice: x.dtype = bool (moved as uint8) is not supported at feature level 1_0 "
            "(supported: float16, float32, int16, int32, uint16, uint32) (DirectML: "
            "InputTensor.DataType is not supported at feature level 1_0 (supported: FLOAT16, "
            "FLOAT32, INT16, INT32, UINT16, UINT32))"
        ),
    ),
    case(
        "result_spans_too_much",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2**16, 2**16 + 1], strides=[0, 0]),
        cd.DescriptorError,
        (
            "slice: the result spans 4295032832 elements, more than the 2^32 - 1 a buffer tensor "
            "may span (DirectML: OutputTensor spans 4295032832 elements, more than the 2^32 - 1 a "
            "buffer tensor may span)"
        ),
    ),
    case(
        "no_directml_type",
        lambda xp, x: cd.slice(x.astype(bool), offsets=[0, 0], sizes=[1, 1]),
        TypeError,
        (
            "slice: x.dtype = bool has no DirectML tensor data type (supported: float32, float16, "
            "uint32, uint16, uint8, int32, int16, int8, float64, uint64, int64); pass "
            "directml_types=False to move its elements as raw bits"
        ),
    ),
    case(
        "feature_level_type",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level=2.5),
        TypeError,
        "slice: feature_level = 2.5 must be a FeatureLevel, int or str, not float",
    ),
    case(
        "feature_level_unknown",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level="9_9"),
        ValueError,
        (
            "slice: feature_level: unknown feature level '9_9' (known: 1_0, 2_0, 2_1, 3_0, 3_1, "
            "4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4)"
        ),
    ),
    case(
        "directml_types_type",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], directml_types=1),
        TypeError,
        "slice: directml_types = 1 must be a bool, not int",
    ),
    case(
        "out_shape",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.zeros((2, 3), np.float32)),
        cd.BindingError,
        "slice: out has shape (2, 3); the result has shape (2, 2)",
    ),
    case(
        "out_dtype",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.zeros((2, 2), np.float64)),
        TypeError,
        "slice: out has dtype float64; the result has dtype float32",
    ),
    case(
        "out_overlaps_x",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=x[:2, 2:]),
        cd.BindingError,
        "slice: out overlaps x in memory",
    ),
    case(
        "out_overlaps_itself",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.broadcast_to(xp.zeros(2, np.float32), (2, 2))),
        cd.BindingError,
        ("slice: out overlaps itself: shape (2, 2) with byte strides (0, 4) reaches one element from two indices"),
    ),
]
SLICE1 = [
    case(
        "positional",
        lambda xp, x: cd.slice1(x, [0, 0], [2, 3], [2, 2]),
        TypeError,
        (
            "cd.slice1(x, [0, 0], [2, 3], [2, 2]): pass window_offsets=, window_sizes=, "
            "window_strides= by name: SLICE1's window_sizes are the window read (the result takes 1 "
            "+ (window_sizes[i] - 1) // |window_strides[i]| elements), where cd.slice's sizes are "
            "the result's shape and ONNX's and JAX's slices take ends; write cd.slice1(x, "
            "window_offsets=[0, 0], window_sizes=[2, 3], window_strides=[2, 2]), or "
            "cd.strided_slice(x, key) for x[key]"
        ),
    ),
    case(
        "required",
        lambda xp, x: cd.slice1(x, window_sizes=[1, 1]),
        TypeError,
        "slice1: window_offsets= is required (one integer per axis)",
    ),
    case(
        "window_offsets_float",
        lambda xp, x: cd.slice1(x, window_offsets=[0.0, 0], window_sizes=[1, 1]),
        TypeError,
        "slice1: window_offsets[0] = 0.0 must be an integer, not float",
    ),
    case(
        "output_sizes_nan",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[float("nan"), 1]),
        TypeError,
        "slice1: output_sizes[0] = nan must be an integer, not float",
    ),
    case(
        "zero_dimensional",
        lambda xp, x: cd.slice1(x[0, 0], window_offsets=[], window_sizes=[]),
        ValueError,
        "slice1: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    case(
        "lengths",
        lambda xp, x: cd.slice1(x, window_offsets=[0], window_sizes=[1, 1], window_strides=[1]),
        cd.DescriptorError,
        (
            "slice1: len(window_offsets) = 1 must equal x.ndim = 2 (DirectML: "
            "len(InputWindowOffsets) must equal DimensionCount)\nslice1: len(window_strides) = 1 "
            "must equal x.ndim = 2 (DirectML: len(InputWindowStrides) must equal DimensionCount)"
        ),
    ),
    case(
        "output_sizes_length",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[1]),
        cd.DescriptorError,
        (
            "slice1: len(output_sizes) = 1 differs from x.ndim = 2 (DirectML: "
            "OutputTensor.DimensionCount differs from InputTensor.DimensionCount)"
        ),
    ),
    case(
        "offset_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[-2, 0], window_sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice1: window_offsets[0] = -2 must be an unsigned 32-bit value (0 to 4294967295); "
            "cd.strided_slice(x, key) takes indices from the end, as NumPy does (DirectML: "
            "InputWindowOffsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    case(
        "size_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[-1, 1]),
        cd.DescriptorError,
        (
            "slice1: window_sizes[0] = -1 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: InputWindowSizes[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    case(
        "size_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice1: 1 + (window_sizes[0] - 1) // |window_strides[0]| = 4294967296 exceeds UINT32 "
            "max 4294967295 (DirectML: OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    case(
        "stride_zero",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[0, 1]),
        cd.DescriptorError,
        (
            "slice1: window_strides[0] = 0 must be non-zero; cd.slice's strides take 0 (one "
            "element, repeated) (DirectML: InputWindowStrides[0] must be non-zero)"
        ),
    ),
    case(
        "stride_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[2**31, 1]),
        cd.DescriptorError,
        (
            "slice1: window_strides[0] = 2147483648 must be a signed 32-bit value (-2147483648 to "
            "2147483647) (DirectML: InputWindowStrides[0] must be a signed 32-bit value "
            "(-2147483648 to 2147483647))"
        ),
    ),
    case(
        "window_past_x",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 10], window_sizes=[4, 4]),
        cd.DescriptorError,
        (
            "slice1: window_offsets[1] + window_sizes[1] = 14 exceeds x.shape[1] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: "
            "InputWindowOffsets[1] + InputWindowSizes[1] exceeds InputTensor.Sizes[1])"
        ),
    ),
    case(
        "output_past_reach",
        lambda xp, x: cd.slice1(
            x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[2, 1], output_sizes=[3, 4]
        ),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = 3 exceeds 1 + (window_sizes[0] - 1) // |window_strides[0]| = "
            "2, the most the window reaches (DirectML: OutputTensor.Sizes[0] exceeds "
            "MaxCopiedElements[0] = 1 + (InputWindowSizes[0] - 1) / |InputWindowStrides[0]|)"
        ),
    ),
    case(
        "output_sizes_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], output_sizes=[-1, 4]),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = -1 must not be negative (DirectML: OutputTensor.Sizes[0] "
            "must be at least 1 (a zero size is invalid))"
        ),
    ),
    case(
        "output_sizes_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], output_sizes=[2**32, 4]),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = 4294967296 exceeds UINT32 max 4294967295 (DirectML: "
            "OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    case(
        "level_too_old",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], feature_level="2_0"),
        cd.DescriptorError,
        (
            "slice1: feature_level = 2_0 is older than 2_1, the first level with SLICE1 (DirectML: "
            "the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice1: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    case(
        "out_overlaps_x",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[-1, 1], out=x),
        cd.BindingError,
        "slice1: out overlaps x in memory",
    ),
]
SLICE_GRAD = [
    case(
        "positional",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), [0, 0], [4, 4], [2, 2]),
        TypeError,
        (
            "cd.slice_grad(dy, input_shape, [0, 0], [4, 4], [2, 2]): pass window_offsets=, "
            "window_sizes=, window_strides= by name: they are SLICE1's window, as cd.slice1 takes "
            "them; write cd.slice_grad(dy, input_shape, window_offsets=[0, 0], window_sizes=[4, 4], "
            "window_strides=[2, 2])"
        ),
    ),
    case(
        "required",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0]),
        TypeError,
        "slice_grad: window_sizes= is required (one integer per axis)",
    ),
    case(
        "input_shape_float",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4.0), window_offsets=[0, 0], window_sizes=[2, 2]),
        TypeError,
        "slice_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    case(
        "input_shape_not_a_sequence",
        lambda xp, x: cd.slice_grad(x[:2, :2], 4, window_offsets=[0, 0], window_sizes=[2, 2]),
        TypeError,
        "slice_grad: input_shape = 4 must be a sequence of integers, not int",
    ),
    case(
        "input_shape_negative",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, -4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: input_shape[1] = -4 must not be negative (DirectML: "
            "OutputGradientTensor.Sizes[1] must be at least 1 (a zero size is invalid))"
        ),
    ),
    case(
        "input_shape_huge",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 2**32), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: input_shape[1] = 4294967296 exceeds UINT32 max 4294967295 (DirectML: "
            "OutputGradientTensor.Sizes[1] exceeds UINT32 max 4294967295)"
        ),
    ),
    case(
        "input_shape_length",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4, 4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: len(input_shape) = 3 differs from dy.ndim = 2 (DirectML: "
            "OutputGradientTensor.DimensionCount differs from InputGradientTensor.DimensionCount)"
        ),
    ),
    case(
        "dy_zero_dimensional",
        lambda xp, x: cd.slice_grad(x[0, 0], (), window_offsets=[], window_sizes=[]),
        ValueError,
        "slice_grad: dy is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    case(
        "dy_past_reach",
        lambda xp, x: cd.slice_grad(x[:3, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: dy.shape[0] = 3 exceeds 1 + (window_sizes[0] - 1) // |window_strides[0]| = "
            "2, the most the window reaches (DirectML: InputGradientTensor.Sizes[0] exceeds "
            "MaxCopiedElements[0] = 1 + (InputWindowSizes[0] - 1) / |InputWindowStrides[0]|)"
        ),
    ),
    case(
        "window_past_input_shape",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[3, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: window_offsets[0] + window_sizes[0] = 5 exceeds input_shape[0] = 4 "
            "(DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "OutputGradientTensor.Sizes[0])"
        ),
    ),
    case(
        "stride_zero",
        lambda xp, x: cd.slice_grad(
            x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[1, 0]
        ),
        cd.DescriptorError,
        ("slice_grad: window_strides[1] = 0 must be non-zero (DirectML: InputWindowStrides[1] must be non-zero)"),
    ),
    case(
        "level_too_old",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice_grad: feature_level = 2_1 is older than 3_0, the first level with SLICE_GRAD "
            "(DirectML: the operator needs feature level 3_0 or newer; got 2_1)"
        ),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], feature_level="3_0"),
        cd.DescriptorError,
        (
            "slice_grad: dy.ndim = 2 is not supported at feature level 3_0 (supported: 4 to 5) "
            "(DirectML: InputGradientTensor.DimensionCount is not supported at feature level 3_0 "
            "(supported: 4 to 5))"
        ),
    ),
    case(
        "out_shape",
        lambda xp, x: cd.slice_grad(
            x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], out=xp.zeros((4, 5), np.float32)
        ),
        cd.BindingError,
        "slice_grad: out has shape (4, 5); the result has shape (4, 4)",
    ),
    case(
        "out_overlaps_dy",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], out=x),
        cd.BindingError,
        "slice_grad: out overlaps dy in memory",
    ),
]
SPLIT = [
    case(
        "positional_sizes",
        lambda xp, x: cd.split(xp.arange(10), [5, 5]),
        TypeError,
        (
            "cd.split(x, [5, 5]): DirectML's split_sizes are part sizes, where np.split takes "
            "indices and torch.split sizes or a part size; pass split_sizes=[5, 5] (parts of 5 and "
            "5), or use cudadml.numpy.split for NumPy's meaning"
        ),
    ),
    case(
        "positional_count",
        lambda xp, x: cd.split(xp.arange(10), 5),
        TypeError,
        (
            "cd.split(x, 5): an integer by position reads as a number of parts to np.split but as a "
            "part size to torch.split; pass parts=5 (5 equal parts), or split_sizes= for the size "
            "of each part"
        ),
    ),
    case(
        "positional_count_and_axis",
        lambda xp, x: cd.split(x, 2, 1),
        TypeError,
        (
            "cd.split(x, 2, 1): an integer by position reads as a number of parts to np.split but "
            "as a part size to torch.split; pass parts=2, axis=1 (2 equal parts), or split_sizes= "
            "for the size of each part"
        ),
    ),
    case(
        "neither",
        lambda xp, x: cd.split(x),
        TypeError,
        ("split: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got neither"),
    ),
    case(
        "both",
        lambda xp, x: cd.split(x, split_sizes=[2, 2], parts=2),
        TypeError,
        ("split: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got both"),
    ),
    case(
        "parts_a_list",
        lambda xp, x: cd.split(x, parts=[2, 2]),
        TypeError,
        (
            "split: parts = [2, 2] must be an integer (a number of equal parts), not list; the size "
            "of each part goes in split_sizes="
        ),
    ),
    case(
        "parts_nan",
        lambda xp, x: cd.split(x, parts=float("nan")),
        TypeError,
        "split: parts = nan must be an integer (a number of equal parts), not float",
    ),
    case(
        "parts_bool",
        lambda xp, x: cd.split(x, parts=True),
        TypeError,
        "split: parts = True must be an integer (a number of equal parts), not bool",
    ),
    case("parts_zero", lambda xp, x: cd.split(x, parts=0), ValueError, "split: parts = 0 must be at least 1"),
    case(
        "parts_do_not_divide",
        lambda xp, x: cd.split(x, parts=3),
        ValueError,
        (
            "split: parts = 3: x.shape[0] = 4 does not divide into 3 equal parts; pass split_sizes= "
            "for parts of other sizes (cudadml.numpy.array_split(x, 3) makes parts that differ by "
            "at most 1, as NumPy's does)"
        ),
    ),
    case(
        "count_as_split_sizes",
        lambda xp, x: cd.split(x, split_sizes=3, axis=1),
        ValueError,
        (
            "split: split_sizes = 3: x.shape[1] = 4 does not divide into 3 equal parts; pass "
            "split_sizes= for parts of other sizes (cudadml.numpy.array_split(x, 3) makes parts "
            "that differ by at most 1, as NumPy's does)"
        ),
    ),
    case(
        "split_sizes_float",
        lambda xp, x: cd.split(x, split_sizes=[2, 2.0]),
        TypeError,
        "split: split_sizes[1] = 2.0 must be an integer, not float",
    ),
    case(
        "split_sizes_not_a_sequence",
        lambda xp, x: cd.split(x, split_sizes="22"),
        TypeError,
        "split: split_sizes = '22' must be a sequence of integers, not str",
    ),
    case(
        "split_sizes_negative",
        lambda xp, x: cd.split(x, split_sizes=[6, -2]),
        ValueError,
        "split: split_sizes[1] = -2 must not be negative",
    ),
    case(
        "split_sizes_sum",
        lambda xp, x: cd.split(x, split_sizes=[2, 3], axis=-1),
        cd.DescriptorError,
        (
            "split: split_sizes sum to 5, not x.shape[1] = 4 (DirectML: OutputTensors' Sizes[1] "
            "must sum to InputTensor.Sizes[1])"
        ),
    ),
    case(
        "no_parts",
        lambda xp, x: cd.split(x[:0], split_sizes=[]),
        cd.DescriptorError,
        ("split: len(split_sizes) = 0 must be greater than 0 (DirectML: OutputCount must be greater than 0)"),
    ),
    case(
        "axis_float",
        lambda xp, x: cd.split(x, parts=2, axis=1.0),
        TypeError,
        "split: axis = 1.0 must be an integer, not float",
    ),
    case(
        "axis_out_of_range",
        lambda xp, x: cd.split(x, parts=2, axis=2),
        np.exceptions.AxisError,
        "split: axis 2 is out of bounds for array of dimension 2",
    ),
    case(
        "zero_dimensional",
        lambda xp, x: cd.split(x[0, 0], parts=1),
        ValueError,
        "split: x is a 0-dimensional array (shape ()), which has nothing to split",
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.split(x, parts=2, feature_level="2_0"),
        cd.DescriptorError,
        (
            "split: x.ndim = 2 is not supported at feature level 2_0 (supported: 4) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_0 (supported: 4))"
        ),
    ),
    case(
        "out_count",
        lambda xp, x: cd.split(x, parts=2, out=[xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out has 1 array; the call makes 2 parts",
    ),
    case(
        "out_shape",
        lambda xp, x: cd.split(x, split_sizes=[1, 3], out=[xp.zeros((1, 4), np.float32), xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out[1] has shape (2, 4); part 1 has shape (3, 4)",
    ),
    case(
        "out_overlaps_x",
        lambda xp, x: cd.split(x, parts=2, out=[x[2:], xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out[0] overlaps x in memory",
    ),
    case(
        "outs_overlap",
        lambda xp, x: cd.split(x.copy(), parts=2, out=[x[:2], x[:2]]),
        cd.BindingError,
        "split: out[1] overlaps out[0] in memory",
    ),
]
JOIN = [
    case("xs_empty", lambda xp, x: cd.join([]), ValueError, "join: xs is empty; it needs at least one array to join"),
    case("xs_not_a_sequence", lambda xp, x: cd.join(3), TypeError, "join: xs must be a sequence of arrays, not int"),
    case(
        "zero_dimensional",
        lambda xp, x: cd.join([x[0, 0]]),
        ValueError,
        "join: xs[0] is a 0-dimensional array (shape ()), which has nothing to join",
    ),
    case("ranks", lambda xp, x: cd.join([x, x[0]]), ValueError, "join: xs[1].ndim = 1 differs from xs[0].ndim = 2"),
    case(
        "shapes",
        lambda xp, x: cd.join([x, x[:, :3]]),
        cd.DescriptorError,
        (
            "join: xs[1].shape[1] = 3 differs from xs[0].shape[1] = 4 (only axis 0 may differ) "
            "(DirectML: InputTensors[1].Sizes[1] differs from OutputTensor.Sizes[1] (only "
            "Sizes[Axis = 0] may differ))"
        ),
    ),
    case(
        "shapes_when_empty",
        lambda xp, x: cd.join([x[:0], x[:0, :3]]),
        ValueError,
        "join: xs[1].shape[1] = 3 differs from xs[0].shape[1] = 4 (only axis 0 may differ)",
    ),
    case(
        "dtypes",
        lambda xp, x: cd.join([x, x.astype(np.float64)]),
        TypeError,
        "join: xs[1] has dtype float64, xs[0] has float32",
    ),
    case(
        "axis_out_of_range",
        lambda xp, x: cd.join([x, x], axis=-3),
        np.exceptions.AxisError,
        "join: axis -3 is out of bounds for array of dimension 2",
    ),
    case(
        "axis_none",
        lambda xp, x: cd.join([x, x], axis=None),
        TypeError,
        "join: axis = None must be an integer, not NoneType",
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.join([x[:0], x], feature_level="2_0"),
        cd.DescriptorError,
        (
            "join: xs[1].ndim = 2 is not supported at feature level 2_0 (supported: 4) (DirectML: "
            "InputTensors[0].DimensionCount is not supported at feature level 2_0 (supported: 4))"
        ),
    ),
    case(
        "out_overlaps_an_input",
        lambda xp, x: cd.join([x[:, :1], x[:, 1:2]], axis=1, out=x[:, 1:3]),
        cd.BindingError,
        "join: out overlaps xs[1] in memory",
    ),
    case(
        "out_shape",
        lambda xp, x: cd.join([x, x], out=xp.zeros((4, 4), np.float32)),
        cd.BindingError,
        "join: out has shape (4, 4); the result has shape (8, 4)",
    ),
]
STRIDED_SLICE = [
    case(
        "too_many_indices",
        lambda xp, x: cd.strided_slice(x, (0, 0, 0)),
        IndexError,
        ("strided_slice: key (0, 0, 0): too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ),
    case(
        "out_of_bounds",
        lambda xp, x: cd.strided_slice(x, np.s_[:, 7]),
        IndexError,
        ("strided_slice: key (slice(None, None, None), 7): index 7 is out of bounds for axis 1 with size 4"),
    ),
    case(
        "two_ellipses",
        lambda xp, x: cd.strided_slice(x, (..., ...)),
        IndexError,
        ("strided_slice: key (Ellipsis, Ellipsis): an index can only have a single ellipsis ('...')"),
    ),
    case(
        "zero_step",
        lambda xp, x: cd.strided_slice(x, np.s_[::0]),
        ValueError,
        "strided_slice: key slice(None, None, 0): slice step cannot be zero",
    ),
    case(
        "not_basic",
        lambda xp, x: cd.strided_slice(x, ([0, 1],)),
        TypeError,
        ("strided_slice: key ([0, 1],): only basic indices (int, slice, ..., None) are supported, not list"),
    ),
    case(
        "float_index",
        lambda xp, x: cd.strided_slice(x, 1.0),
        TypeError,
        ("strided_slice: key 1.0: only basic indices (int, slice, ..., None) are supported, not float"),
    ),
    case(
        "float_step",
        lambda xp, x: cd.strided_slice(x, np.s_[::2.0]),
        TypeError,
        (
            "strided_slice: key slice(None, None, 2.0): slice indices must be integers or None or "
            "have an __index__ method, not float"
        ),
    ),
    case(
        "zero_dimensional",
        lambda xp, x: cd.strided_slice(x[0, 0], ...),
        ValueError,
        "strided_slice: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    case(
        "rank_past_8",
        lambda xp, x: cd.strided_slice(x.reshape((1,) * 7 + (4, 4)), ...),
        cd.DescriptorError,
        (
            "strided_slice: x.ndim = 9 must be between 1 and 8 (DirectML: "
            "InputTensor.DimensionCount must be between 1 and 8)"
        ),
    ),
    case(
        "level_too_old",
        lambda xp, x: cd.strided_slice(x, ..., feature_level="2_0"),
        cd.DescriptorError,
        (
            "strided_slice: feature_level = 2_0 is older than 2_1, the first level with SLICE1 "
            "(DirectML: the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.strided_slice(x, ..., feature_level="2_1"),
        cd.DescriptorError,
        (
            "strided_slice: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    case(
        "out_overlaps_x",
        lambda xp, x: cd.strided_slice(x, np.s_[::-1], out=x),
        cd.BindingError,
        "strided_slice: out overlaps x in memory",
    ),
    case(
        "out_shape",
        lambda xp, x: cd.strided_slice(x, np.s_[::2], out=xp.zeros((4, 4), np.float32)),
        cd.BindingError,
        "strided_slice: out has shape (4, 4); the result has shape (2, 4)",
    ),
]
STRIDED_SLICE_GRAD = [
    case(
        "input_shape_float",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4.0), ...),
        TypeError,
        "strided_slice_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    case(
        "input_shape_negative",
        lambda xp, x: cd.strided_slice_grad(x, (4, -4), ...),
        ValueError,
        "strided_slice_grad: input_shape[1] = -4 must not be negative",
    ),
    case(
        "input_shape_empty",
        lambda xp, x: cd.strided_slice_grad(x, (), ...),
        ValueError,
        "strided_slice_grad: input_shape = () is 0-dimensional, which has nothing to slice",
    ),
    case(
        "key_out_of_bounds",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), np.s_[9]),
        IndexError,
        "strided_slice_grad: key 9: index 9 is out of bounds for axis 0 with size 4",
    ),
    case(
        "dy_shape",
        lambda xp, x: cd.strided_slice_grad(x, (9,), np.s_[::2]),
        ValueError,
        "strided_slice_grad: dy has shape (4, 4); x[key] has shape (5,) (x of input_shape (9,))",
    ),
    case(
        "level_too_old",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), ..., feature_level="2_1"),
        cd.DescriptorError,
        (
            "strided_slice_grad: feature_level = 2_1 is older than 3_0, the first level with "
            "SLICE_GRAD (DirectML: the operator needs feature level 3_0 or newer; got 2_1)"
        ),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), ..., feature_level="3_0"),
        cd.DescriptorError,
        (
            "strided_slice_grad: len(input_shape) = 2 is not supported at feature level 3_0 "
            "(supported: 4 to 5) (DirectML: InputGradientTensor.DimensionCount is not supported at "
            "feature level 3_0 (supported: 4 to 5))"
        ),
    ),
    case(
        "no_directml_type",
        lambda xp, x: cd.strided_slice_grad(x[0, :2].astype(bool), (4,), np.s_[::2]),
        TypeError,
        (
            "strided_slice_grad: dy.dtype = bool has no DirectML tensor data type (supported: "
            "float32, float16, uint32, uint16, uint8, int32, int16, int8, float64, uint64, int64); "
            "pass directml_types=False to move its elements as raw bits"
        ),
    ),
    case(
        "out_overlaps_dy",
        lambda xp, x: cd.strided_slice_grad(x[:2], (4, 4), np.s_[::2], out=x),
        cd.BindingError,
        "strided_slice_grad: out overlaps dy in memory",
    ),
]
SLICE1_BATCH = [
    case(
        "positional",
        lambda xp, x: cd.slice1_batch(x, [[0, 0], [1, 1]], [2, 2]),
        TypeError,
        (
            "cd.slice1_batch(x, [[0, 0], [1, 1]], [2, 2]): pass window_offsets=, window_sizes=, "
            "window_strides= by name: they are SLICE1's windows, as cd.slice1 takes them; write "
            "cd.slice1_batch(x, window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2])"
        ),
    ),
    case(
        "offsets_required",
        lambda xp, x: cd.slice1_batch(x, window_sizes=[2, 2]),
        TypeError,
        ("slice1_batch: window_offsets= is required (an (N, d) array of integers: a row per window)"),
    ),
    case(
        "sizes_required",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]]),
        TypeError,
        ("slice1_batch: window_sizes= is required (one row of integers for every window, or one per window)"),
    ),
    case(
        "offsets_shape",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[0, 0], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch: window_offsets has shape (2,); it must be (N, 2): 2 per window",
    ),
    case(
        "ragged_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [1]], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch: window_offsets must be an array of rows of 2 integers",
    ),
    case(
        "sizes_shape",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2, 2]),
        ValueError,
        ("slice1_batch: window_sizes has shape (3,); it must be (2,) for all windows or (1, 2): 2 integers per window"),
    ),
    case(
        "float_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0.5]], window_sizes=[2, 2]),
        TypeError,
        ("slice1_batch: window_offsets must hold integers, not float64 (window_offsets[0][0] = np.float64(0.0))"),
    ),
    case(
        "none_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, None]], window_sizes=[2, 2]),
        TypeError,
        "slice1_batch: window_offsets[0][1] = None must be an integer, not NoneType",
    ),
    case(
        "bool_sizes",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, True]),
        TypeError,
        "slice1_batch: window_sizes must hold integers, not bool (window_sizes[1] = True)",
    ),
    case(
        "per_sample_type",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0]] * 4, window_sizes=[1], per_sample=1),
        TypeError,
        "slice1_batch: per_sample = 1 must be a bool, not int",
    ),
    case(
        "per_sample_count",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0]] * 3, window_sizes=[1], per_sample=True),
        ValueError,
        "slice1_batch: 3 windows for x of 4 samples (per_sample=True takes one per sample)",
    ),
    case(
        "one_dimension_per_sample",
        lambda xp, x: cd.slice1_batch(x[0], window_offsets=[[]] * 4, window_sizes=[], per_sample=True),
        ValueError,
        ("slice1_batch: x has 1 dimension(s); windows need at least one besides the sample axis (per_sample=True)"),
    ),
    case(
        "window_past_x",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [3, 3]], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds x.shape[0] "
            "= 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch: window 1: window_offsets[1][1] + window_sizes[1] "
            "= 5 exceeds x.shape[1] = 4 (DirectML: InputWindowOffsets[1] + InputWindowSizes[1] "
            "exceeds InputTensor.Sizes[1])"
        ),
    ),
    case(
        "window_past_x_per_sample",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0], [3], [0], [0]], window_sizes=[2], per_sample=True),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds x.shape[1] "
            "= 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])"
        ),
    ),
    case(
        "own_size_zero",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [1, 1]], window_sizes=[[2, 2], [0, 1]]),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_sizes[1][0] = 0 must be at least 1 (the window may not "
            "be empty) (DirectML: InputWindowSizes[0] must be at least 1 (the window may not be "
            "empty))"
        ),
    ),
    case(
        "stride_zero",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2], window_strides=[[1, 1], [1, 0]]
        ),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_strides[1][1] = 0 must be non-zero (DirectML: "
            "InputWindowStrides[1] must be non-zero)"
        ),
    ),
    case(
        "many_broken",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[-1, 0], [9, 0], [0, 9], [5, 5], [6, 6]], window_sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice1_batch: window 0: window_offsets[0][0] = -1 must be an unsigned 32-bit value (0 "
            "to 4294967295) (DirectML: InputWindowOffsets[0] must be an unsigned 32-bit value (0 to "
            "4294967295))\nslice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 10 "
            "exceeds x.shape[0] = 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch: window 2: window_offsets[2][1] + window_sizes[1] "
            "= 10 exceeds x.shape[1] = 4 (DirectML: InputWindowOffsets[1] + InputWindowSizes[1] "
            "exceeds InputTensor.Sizes[1])\nslice1_batch: and 2 more windows break a rule"
        ),
    ),
    case(
        "counts_differ",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0], [0, 0]], window_sizes=[3, 2], window_strides=[[1, 1], [2, 1]]
        ),
        ValueError,
        (
            "slice1_batch: window 1 takes (2, 2) elements and window 0 (3, 2): windows of one size "
            "must take as many each (per-window window_sizes give a list of arrays)"
        ),
    ),
    case(
        "empty_batch_size_zero",
        lambda xp, x: cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[0, 2]),
        cd.DescriptorError,
        (
            "slice1_batch: window_sizes[0] = 0 must be at least 1 (the window may not be empty) "
            "(DirectML: InputWindowSizes[0] must be at least 1 (the window may not be empty))"
        ),
    ),
    case(
        "empty_batch_size_huge",
        lambda xp, x: cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[1, 2**40]),
        cd.DescriptorError,
        (
            "slice1_batch: window_sizes[1] = 1099511627776 must be an unsigned 32-bit value (0 to "
            "4294967295) (DirectML: InputWindowSizes[1] must be an unsigned 32-bit value (0 to "
            "4294967295))"
        ),
    ),
    case(
        "level_too_old",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], feature_level="2_0"),
        cd.DescriptorError,
        (
            "slice1_batch: feature_level = 2_0 is older than 2_1, the first level with SLICE1 "
            "(DirectML: the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    case(
        "rank_at_level",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice1_batch: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    case(
        "out_with_own_sizes",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0]], window_sizes=[[2, 2]], out=xp.zeros((1, 2, 2), np.float32)
        ),
        TypeError,
        ("slice1_batch: out= takes one array, for windows of one size; per-window sizes give new arrays"),
    ),
    case(
        "out_shape",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0]], window_sizes=[2, 2], out=xp.zeros((1, 2, 3), np.float32)
        ),
        cd.BindingError,
        "slice1_batch: out has shape (1, 2, 3); the result has shape (1, 2, 2)",
    ),
    case(
        "out_overlaps_x",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], out=x[None, 2:, 2:]),
        cd.BindingError,
        "slice1_batch: out overlaps x in memory",
    ),
]
SLICE1_BATCH_GRAD = [
    case(
        "positional",
        lambda xp, x: cd.slice1_batch_grad(xp.zeros((2, 2, 2), np.float32), (4, 4), [[0, 0], [1, 1]], [2, 2]),
        TypeError,
        (
            "cd.slice1_batch_grad(dy, input_shape, [[0, 0], [1, 1]], [2, 2]): pass window_offsets=, "
            "window_sizes=, window_strides= by name: they are SLICE1's windows, as cd.slice1_batch "
            "takes them; write cd.slice1_batch_grad(dy, input_shape, window_offsets=[[0, 0], [1, "
            "1]], window_sizes=[2, 2])"
        ),
    ),
    case(
        "dy_empty_list",
        lambda xp, x: cd.slice1_batch_grad([], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        ValueError,
        ("slice1_batch_grad: dy is an empty list; the gradient of no windows has no dtype (pass zeros)"),
    ),
    case(
        "dy_one_for_own_sizes",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[[2, 2]]),
        TypeError,
        ("slice1_batch_grad: windows of one size take dy as one array; per-window sizes take a list of one per window"),
    ),
    case(
        "dy_shape",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 3, 2), np.float32), (4, 4), window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2]
        ),
        ValueError,
        "slice1_batch_grad: dy has shape (2, 3, 2); the windows' results have (2, 2, 2)",
    ),
    case(
        "input_shape_negative",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, -4), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch_grad: input_shape[1] = -4 must not be negative",
    ),
    case(
        "input_shape_float",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, 4.0), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        TypeError,
        "slice1_batch_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    case(
        "window_past_input_shape",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 2, 2), np.float32), (4, 4), window_offsets=[[0, 0], [3, 3]], window_sizes=[2, 2]
        ),
        cd.DescriptorError,
        (
            "slice1_batch_grad: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds "
            "input_shape[0] = 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch_grad: window 1: window_offsets[1][1] + "
            "window_sizes[1] = 5 exceeds input_shape[1] = 4 (DirectML: InputWindowOffsets[1] + "
            "InputWindowSizes[1] exceeds InputTensor.Sizes[1])"
        ),
    ),
    case(
        "per_sample_count",
        lambda xp, x: cd.slice1_batch_grad(
            x[:2, :2], (4, 4), window_offsets=[[0], [1]], window_sizes=[2], per_sample=True
        ),
        ValueError,
        ("slice1_batch_grad: 2 windows for input_shape of 4 samples (per_sample=True takes one per sample)"),
    ),
    case(
        "bool_sums",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 2, 2), bool),
            (4, 4),
            window_offsets=[[0, 0], [1, 1]],
            window_sizes=[2, 2],
            directml_types=False,
        ),
        TypeError,
        (
            "slice1_batch_grad: overlapping windows' gradients are added, which needs a float, "
            "complex or integer dtype, not bool (per_sample=True moves any dtype)"
        ),
    ),
    case(
        "out_shape",
        lambda xp, x: cd.slice1_batch_grad(
            x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2], out=xp.zeros((4, 5), np.float32)
        ),
        cd.BindingError,
        "slice1_batch_grad: out has shape (4, 5); the result has shape (4, 4)",
    ),
    case(
        "out_overlaps_dy",
        lambda xp, x: cd.slice1_batch_grad(
            x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2], out=x
        ),
        cd.BindingError,
        "slice1_batch_grad: out overlaps dy in memory",
    ),
]


TABLES = {
    "slice": SLICE,
    "slice1": SLICE1,
    "slice_grad": SLICE_GRAD,
    "split": SPLIT,
    "join": JOIN,
    "strided_slice": STRIDED_SLICE,
    "strided_slice_grad": STRIDED_SLICE_GRAD,
    "slice1_batch": SLICE1_BATCH,
    "slice1_batch_grad": SLICE1_BATCH_GRAD,
}
ALL = [p for rows in TABLES.values() for p in rows]


def _x(xp):
    return xp.asarray(np.arange(16, dtype=np.float32).reshape(4, 4))


@pytest.mark.parametrize("call, error, message", ALL)
def test_every_rule_is_said_in_the_callers_words(xp, call, error, message):
    x = _x(xp)
    before = np.asarray(x.get() if hasattr(x, "get") else x).copy()
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call(xp, x)
    after = np.asarray(x.get() if hasattr(x, "get") else x)
    assert after.tobytes() == before.tobytes(), "a refused call wrote"


@pytest.mark.parametrize("function", sorted(TABLES))
def test_every_table_starts_each_line_with_its_function(function):
    for _, _, message in (p.values for p in TABLES[function]):
        for line in message.splitlines():
            assert line.startswith((f"{function}: ", f"cd.{function}(")), line


# DirectML's names, as the descriptors word their rules: none may reach a caller's words.
_DIRECTML = re.compile(
    r"\b(InputTensors?|OutputTensors?|InputGradientTensor|OutputGradientTensor|InputWindow\w+|Offsets|Sizes|"
    r"Strides|DimensionCount|DataType|MaxCopiedElements|OutputCount|Axis)\b|\b(inputs|outputs)\["
)


@pytest.mark.parametrize("call, error, message", ALL)
def test_directmls_names_are_only_in_parentheses(call, error, message):
    """Each line in the caller's words, DirectML's rule (without the values) after it."""
    for line in message.splitlines():
        caller, _, directml = line.partition(" (DirectML: ")
        assert not _DIRECTML.search(caller), line
        assert directml != caller, line


def test_the_descriptors_keep_directmls_words():
    """The array function's message is the descriptor's rule said again, not a second rule."""
    f32 = cd.TensorDataType.FLOAT32
    with pytest.raises(cd.DescriptorError) as direct:
        cd.Slice1OperatorDesc(
            cd.BufferTensorDesc(f32, [4, 4]), cd.BufferTensorDesc(f32, [4, 4]), [0, 10], [4, 4], [1, 1]
        )
    assert direct.value.violations == (
        "Slice1: InputWindowOffsets[1] + InputWindowSizes[1] = 14 exceeds InputTensor.Sizes[1] = 4",
    )
    with pytest.raises(cd.DescriptorError) as called:
        cd.slice1(np.zeros((4, 4), np.float32), window_offsets=[0, 10], window_sizes=[4, 4])
    assert called.value.violations[0].endswith(
        "(DirectML: InputWindowOffsets[1] + InputWindowSizes[1] exceeds InputTensor.Sizes[1])"
    )


# ---- the traps: what NumPy or PyTorch would read otherwise ----------------------------------------


def test_split_by_name_means_what_it_says():
    x = np.arange(10)
    assert [p.tolist() for p in cd.split(x, split_sizes=[5, 5])] == [x[:5].tolist(), x[5:].tolist()]
    assert [p.tolist() for p in cd.split(x, parts=5)] == [list(p) for p in np.split(x, 5)]
    assert [p.tolist() for p in cd.split(x, split_sizes=5)] == [list(p) for p in np.split(x, 5)]  # as before
    m = np.arange(12).reshape(2, 6)
    assert [p.shape for p in cd.split(m, split_sizes=[1, 2, 3], axis=1)] == [(2, 1), (2, 2), (2, 3)]
    assert [p.shape for p in cd.split(m, parts=3, axis=-1)] == [(2, 2)] * 3


@pytest.mark.parametrize(
    "call, meant",
    [
        (lambda x: cd.split(x, [5, 5]), "split_sizes=[5, 5] (parts of 5 and 5)"),
        (lambda x: cd.split(x, 2), "parts=2 (2 equal parts)"),
        (lambda x: cd.split(x, [1, 9], 0), "split_sizes=[1, 9], axis=0 (parts of 1 and 9)"),
        (lambda x: cd.slice(x, [0], [2], [2]), "cd.slice(x, offsets=[0], sizes=[2], strides=[2])"),
        (
            lambda x: cd.slice1(x, [0], [2], [2]),
            "cd.slice1(x, window_offsets=[0], window_sizes=[2], window_strides=[2])",
        ),
        (lambda x: cd.slice1_batch(x, [[0]], [2]), "cd.slice1_batch(x, window_offsets=[[0]], window_sizes=[2])"),
    ],
)
def test_a_positional_call_is_refused_with_the_call_meant(xp, call, meant):
    x = xp.arange(10)
    with pytest.raises(TypeError, match=re.escape(meant)):
        call(x)


def test_a_tensor_split_by_position_is_refused_as_torch_reads_it():
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0)
    with pytest.raises(TypeError, match=re.escape("as a part size to torch.split; pass parts=3")):
        cd.split(t, 3)
    assert [p.shape[0] for p in cd.split(t, parts=3)] == [4, 4, 4]
    assert [p.shape[0] for p in torch.split(t, 3)] == [3, 3, 3, 3]  # what the refused call would have meant


def test_slice1s_window_is_not_slices_result():
    """The trap named by the keywords: SLICE1 takes a window, SLICE the result's shape."""
    x = np.arange(36).reshape(6, 6)
    assert cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 3], window_strides=[2, 2]).shape == (1, 2)
    assert cd.slice(x, offsets=[0, 0], sizes=[2, 3], strides=[2, 2]).shape == (2, 3)


# ---- hostile values for every integer argument ------------------------------------------------------

#: Per integer argument: the function, how the argument is named in messages, and a call with ``v`` in it.
INTEGERS = [
    ("slice", "offsets[1]", lambda x, v: cd.slice(x, offsets=[0, v], sizes=[1, 1])),
    ("slice", "sizes[0]", lambda x, v: cd.slice(x, offsets=[0, 0], sizes=[v, 1])),
    ("slice", "strides[0]", lambda x, v: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[v, 1])),
    ("slice1", "window_offsets[0]", lambda x, v: cd.slice1(x, window_offsets=[v, 0], window_sizes=[1, 1])),
    ("slice1", "window_sizes[0]", lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[v, 1])),
    (
        "slice1",
        "window_strides[0]",
        lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], window_strides=[v, 1]),
    ),
    (
        "slice1",
        "output_sizes[0]",
        lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[v, 1]),
    ),
    (
        "slice_grad",
        "input_shape[1]",
        lambda x, v: cd.slice_grad(x[:2, :2], (4, v), window_offsets=[0, 0], window_sizes=[2, 2]),
    ),
    (
        "slice_grad",
        "window_offsets[1]",
        lambda x, v: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, v], window_sizes=[2, 2]),
    ),
    ("split", "split_sizes[0]", lambda x, v: cd.split(x, split_sizes=[v, 2])),
    ("split", "parts", lambda x, v: cd.split(x, parts=v)),
    ("split", "axis", lambda x, v: cd.split(x, parts=2, axis=v)),
    ("join", "axis", lambda x, v: cd.join([x, x], axis=v)),
    ("strided_slice_grad", "input_shape[1]", lambda x, v: cd.strided_slice_grad(x, (4, v), ...)),
    (
        "slice1_batch",
        "window_offsets[0][1]",
        lambda x, v: cd.slice1_batch(x, window_offsets=[[0, v]], window_sizes=[1, 1]),
    ),
    (
        "slice1_batch_grad",
        "input_shape[1]",
        lambda x, v: cd.slice1_batch_grad(x[None, :1, :1], (4, v), window_offsets=[[0, 0]], window_sizes=[1, 1]),
    ),
]
NOT_INTEGERS = [float("nan"), 2.0, None, True, np.float64(1.0), np.bool_(False), "1", 1 + 0j]


@pytest.mark.parametrize("function, argument, call", INTEGERS, ids=[f"{f}-{a}" for f, a, _ in INTEGERS])
@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_what_is_no_integer_is_refused_by_type_naming_the_argument(function, argument, call, value):
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(TypeError) as e:
        call(x, value)
    message = str(e.value)
    assert message.startswith(f"{function}: "), message
    assert argument.split("[")[0] in message, message


@pytest.mark.parametrize("function, argument, call", INTEGERS, ids=[f"{f}-{a}" for f, a, _ in INTEGERS])
@pytest.mark.parametrize("value", [2**70, -(2**70)], ids=["huge", "huge-negative"])
def test_huge_integers_are_refused_by_value_naming_the_argument(function, argument, call, value):
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError) as e:
        call(x, value)
    message = str(e.value)
    assert message.startswith(f"{function}: "), message
    assert argument.split("[")[0] in message, message


@pytest.mark.parametrize("function, argument, call", INTEGERS, ids=[f"{f}-{a}" for f, a, _ in INTEGERS])
def test_numpy_integers_count_by_value(function, argument, call):
    x = np.zeros((4, 4), np.float32)
    valid = {"strides[0]": 1, "window_strides[0]": 1, "output_sizes[0]": 1, "input_shape[1]": 4, "parts": 2}
    value = valid.get(argument, 0 if "offsets" in argument or argument == "axis" else 2)
    expected = call(x, value)
    got = call(x, np.int64(value))
    for a, b in zip(expected if isinstance(expected, list) else [expected], got if isinstance(got, list) else [got]):
        assert a.shape == b.shape and np.array_equal(a, b)


def test_an_empty_result_on_room_past_a_buffers_span_is_made():
    """An empty result's stand-in is room made for the window, not the caller's array: it
    spans what it spans (here past 2^32 - 1 elements) without refusing the call."""
    x = np.zeros((4, 4), np.float32)
    assert cd.slice1(x, window_offsets=[2**31, 0], window_sizes=[0, 4]).shape == (0, 4)
    assert cd.slice(x, offsets=[2**31, 0], sizes=[0, 4]).shape == (0, 4) == x[2**31 : 2**31, 0:4].shape
    assert not cd.slice_grad(x[:0], (4, 4), window_offsets=[2**31, 0], window_sizes=[0, 4]).any()


def test_messages_say_16_byte_elements_as_the_caller_has_them():
    x = np.zeros((1, 1, 1, 1, 2), np.complex128)
    with pytest.raises(cd.DescriptorError, match=re.escape("strided_slice: x.ndim + 1 = 6 is not supported")):
        cd.strided_slice(x, ..., directml_types=False, feature_level="2_1")
    with pytest.raises(cd.DescriptorError, match=re.escape("x.dtype = complex128 (as pairs of uint64 words)")):
        cd.split(x, parts=2, axis=-1, directml_types=False, feature_level="3_0")


def test_the_translation_table_knows_every_function():
    assert set(messages._TABLES) == set(TABLES)

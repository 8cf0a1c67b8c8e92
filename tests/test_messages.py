"""Every error an array function raises, as its caller reads it.

Per function, the error inputs of its table in ``cases`` (``OpInfo.error_inputs``): calls
that break each rule the function can reach, with the exception and the whole message: the
argument as the call names it (``window_offsets[1]``, ``x.shape[1]``, ``out``) and its value,
DirectML's rule in parentheses (the descriptors keep DirectML's words:
``test_descriptor_errors``), and where NumPy has a way around a rule, the function that takes
it. Calls that NumPy or PyTorch would read otherwise (the DirectML-named functions take their
window and split arguments by name) are refused with what the caller meant. Then the
properties every message keeps, and hostile values for every integer argument
(``OpInfo.integer_arguments``).
"""

import re

import numpy as np
import pytest
from cases import OPS, params

import cudadml as cd
from cudadml.core.operators import REGISTRY

ERRORS = [pytest.param(op, e, id=f"{op.name}-{e.name}") for op in OPS for e in op.error_inputs]


def _x(xp):
    return xp.asarray(np.arange(16, dtype=np.float32).reshape(4, 4))


@pytest.mark.parametrize("op, case", ERRORS)
def test_every_rule_is_said_in_the_callers_words(xp, op, case):
    x = _x(xp)
    before = np.asarray(x.get() if hasattr(x, "get") else x).copy()
    with pytest.raises(case.error, match=f"^{re.escape(case.message)}$"):
        case.call(xp, x)
    after = np.asarray(x.get() if hasattr(x, "get") else x)
    assert after.tobytes() == before.tobytes(), "a refused call wrote"


@pytest.mark.parametrize("op", params(OPS))
def test_every_table_starts_each_line_with_its_function(op):
    assert op.error_inputs
    for case in op.error_inputs:
        for line in case.message.splitlines():
            assert line.startswith((f"{op.name}: ", f"cd.{op.name}(")), line


# DirectML's names, as the descriptors word their rules: none may reach a caller's words.
_DIRECTML = re.compile(
    r"\b(InputTensors?|OutputTensors?|InputGradientTensor|OutputGradientTensor|InputWindow\w+|Offsets|Sizes|"
    r"Strides|DimensionCount|DataType|MaxCopiedElements|OutputCount|Axis)\b|\b(inputs|outputs)\["
)


@pytest.mark.parametrize("op, case", ERRORS)
def test_directmls_names_are_only_in_parentheses(op, case):
    """Each line in the caller's words, DirectML's rule (without the values) after it."""
    for line in case.message.splitlines():
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
    assert [p.tolist() for p in cd.split(x, split_sizes=4)] == [x[:4].tolist(), x[4:8].tolist(), x[8:].tolist()]
    m = np.arange(12).reshape(2, 6)
    assert [p.shape for p in cd.split(m, split_sizes=[1, 2, 3], axis=1)] == [(2, 1), (2, 2), (2, 3)]
    assert [p.shape for p in cd.split(m, parts=3, axis=-1)] == [(2, 2)] * 3


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

INTEGERS = [
    pytest.param(op, integer, id=f"{op.name}-{integer.argument}") for op in OPS for integer in op.integer_arguments
]
NOT_INTEGERS = [float("nan"), 2.0, None, True, np.float64(1.0), np.bool_(False), "1", 1 + 0j]


@pytest.mark.parametrize("op, integer", INTEGERS)
@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_what_is_no_integer_is_refused_by_type_naming_the_argument(op, integer, value):
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(TypeError) as e:
        integer.call(x, value)
    message = str(e.value)
    assert message.startswith(f"{op.name}: "), message
    assert integer.argument.split("[")[0] in message, message


@pytest.mark.parametrize("op, integer", INTEGERS)
@pytest.mark.parametrize("value", [2**70, -(2**70)], ids=["huge", "huge-negative"])
def test_huge_integers_are_refused_by_value_naming_the_argument(op, integer, value):
    x = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError) as e:
        integer.call(x, value)
    message = str(e.value)
    assert message.startswith(f"{op.name}: "), message
    assert integer.argument.split("[")[0] in message, message


@pytest.mark.parametrize("op, integer", INTEGERS)
def test_numpy_integers_count_by_value(op, integer):
    x = np.zeros((4, 4), np.float32)
    expected = integer.call(x, integer.valid)
    got = integer.call(x, np.int64(integer.valid))
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
    assert {name for name, op in REGISTRY.items() if op.messages is not None} == {op.name for op in OPS}

"""PADDING and PADDING1: DirectML's examples, every mode against NumPy's pad on fresh random data
with poisoned outputs, and the rules each descriptor checks."""

import numpy as np
import pytest

import cudadml as cd
from cudadml.core.enums import PaddingMode
from cudadml.errors import DescriptorError
from cudadml.ops.padding import Padding1OperatorDesc, PaddingOperatorDesc, axis_pieces
from cudadml.testing import TensorBuffer, random_array

T = cd.TensorDataType
L = cd.FeatureLevel
NUMPY_MODE = {"constant": "constant", "edge": "edge", "reflection": "reflect", "symmetric": "symmetric", "wrap": "wrap"}
DATA_MODES = ["edge", "reflection", "symmetric", "wrap"]

#: DirectML's page: a 1x1x4x4 input padded by {0, 0, 1, 2} before and {0, 0, 3, 4} after.
EXAMPLE_INPUT = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [1, 2, 3, 4], [5, 6, 7, 8]], np.float32).reshape(1, 1, 4, 4)
EXAMPLES = {
    "constant": [
        [9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
        [9, 9, 1, 2, 3, 4, 9, 9, 9, 9],
        [9, 9, 5, 6, 7, 8, 9, 9, 9, 9],
        [9, 9, 1, 2, 3, 4, 9, 9, 9, 9],
        [9, 9, 5, 6, 7, 8, 9, 9, 9, 9],
        [9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
        [9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
        [9, 9, 9, 9, 9, 9, 9, 9, 9, 9],
    ],
    "edge": [
        [1, 1, 1, 2, 3, 4, 4, 4, 4, 4],
        [1, 1, 1, 2, 3, 4, 4, 4, 4, 4],
        [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
        [1, 1, 1, 2, 3, 4, 4, 4, 4, 4],
        [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
        [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
        [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
        [5, 5, 5, 6, 7, 8, 8, 8, 8, 8],
    ],
    "reflection": [
        [7, 6, 5, 6, 7, 8, 7, 6, 5, 6],
        [3, 2, 1, 2, 3, 4, 3, 2, 1, 2],
        [7, 6, 5, 6, 7, 8, 7, 6, 5, 6],
        [3, 2, 1, 2, 3, 4, 3, 2, 1, 2],
        [7, 6, 5, 6, 7, 8, 7, 6, 5, 6],
        [3, 2, 1, 2, 3, 4, 3, 2, 1, 2],
        [7, 6, 5, 6, 7, 8, 7, 6, 5, 6],
        [3, 2, 1, 2, 3, 4, 3, 2, 1, 2],
    ],
    "symmetric": [
        [2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
        [2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
        [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
        [2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
        [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
        [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
        [2, 1, 1, 2, 3, 4, 4, 3, 2, 1],
        [6, 5, 5, 6, 7, 8, 8, 7, 6, 5],
    ],
}


def _run(desc, x, xp=np):
    """``desc`` compiled and executed on ``x`` in a poisoned output: the output's elements,
    after checking that no byte outside them changed."""
    inputs = TensorBuffer(desc.input_tensor, xp).fill(x)
    out = TensorBuffer(desc.output_tensor, xp)
    desc.compile().execute([inputs.binding], [out.binding])
    assert out.untouched_outside()
    return out.host_elements()


def _same(a, b) -> bool:
    """Exact: the same shape and the same bits (NaNs too)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _desc(mode, shape, start, end, dtype=np.float32, value=0.0, **kwargs):
    t = T.from_dtype(np.dtype(dtype))
    out = [n + s + e for n, s, e in zip(shape, start, end)]
    return PaddingOperatorDesc(
        cd.BufferTensorDesc(t, shape), cd.BufferTensorDesc(t, out), mode, value, start, end, **kwargs
    )


@pytest.mark.parametrize("mode", list(EXAMPLES))
def test_directmls_examples(mode, xp):
    """On every backend: the NumPy reference, the kernels emulated and on the GPU."""
    desc = _desc(mode, (1, 1, 4, 4), (0, 0, 1, 2), (0, 0, 3, 4), value=9.0)
    want = np.array(EXAMPLES[mode], np.float32).reshape(1, 1, 8, 10)
    assert np.array_equal(_run(desc, EXAMPLE_INPUT, xp), want)


@pytest.mark.parametrize("mode", ["constant", *DATA_MODES])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
@pytest.mark.parametrize(("start", "end"), [(0, 0), (1, 0), (0, 2), (7, 11), (29, 3)])
def test_every_mode_is_numpys_pad_at_any_width(rng, mode, n, start, end, xp):
    """Widths past the size fold periodically, as NumPy's pad gives them (any size of 2 or more;
    a size of 1 repeats its element, which REFLECTION refuses)."""
    if mode == "reflection" and n == 1 and start + end:
        pytest.skip("refused: test_reflection_of_one_element_is_refused")
    x = random_array((2, n, 3), np.int16, rng)
    desc = _desc(mode, (2, n, 3), (1, start, 0), (0, end, 2), np.int16, value=-7.9)
    kwargs = {"constant_values": -7} if mode == "constant" else {}
    want = np.pad(x, [(1, 0), (start, end), (0, 2)], mode=NUMPY_MODE[mode], **kwargs)
    assert np.array_equal(_run(desc, x, xp), want)


@pytest.mark.parametrize("mode", DATA_MODES)
@pytest.mark.parametrize("n", [2, 3, 64])
def test_an_axis_gives_no_more_pieces_than_elements(mode, n):
    """Runs cut short by a small period become one piece per phase of the period."""
    for width in (0, 1, n, 5 * n, 1000):
        pieces = axis_pieces(PaddingMode.coerce(mode), n, width, width)
        assert len(pieces) <= max(n, 3) * 2 + 1
        covered = sorted(lo + step * k for lo, step, count, _, _ in pieces for k in range(count))
        assert covered == list(range(n + 2 * width))


@pytest.mark.parametrize("mode", DATA_MODES)
def test_tensors_of_their_own_strides(rng, mode, xp):
    """A transposed input: the copies read by its strides."""
    x = random_array((5, 6), np.float32, rng)
    t_in = cd.BufferTensorDesc(T.FLOAT32, [5, 6], strides=[1, 5])
    t_out = cd.BufferTensorDesc(T.FLOAT32, [9, 8])
    desc = PaddingOperatorDesc(t_in, t_out, mode, 0.0, [3, 1], [1, 1])
    got = _run(desc, x, xp)
    assert _same(got, np.pad(x, [(3, 1), (1, 1)], mode=NUMPY_MODE[mode]))


def test_reflection_of_one_element_is_refused():
    with pytest.raises(DescriptorError, match=r"REFLECTION pads InputTensor.Sizes\[1\] = 1 by 2"):
        _desc("reflection", (2, 1), (0, 1), (0, 1))


@pytest.mark.parametrize(
    ("kwargs", "rule"),
    [
        ({"mode": "symmetric", "feature_level": "2_1"}, "SYMMETRIC needs feature level 3_0 or newer"),
        ({"mode": "wrap", "feature_level": "6_3"}, "WRAP needs feature level 6_4 or newer"),
        ({"mode": "edge", "feature_level": "3_0", "dims": 3}, r"InputTensor.DimensionCount = 3 is not supported"),
        ({"mode": "edge", "feature_level": "1_0", "dtype": np.int8}, "INT8 is not supported at feature level 1_0"),
        ({"mode": "edge", "feature_level": "4_1", "dtype": np.int64}, "INT64 is not supported at feature level 4_1"),
        ({"mode": "constant", "dtype": np.uint8, "value": 256.0}, r"PaddingValue = 256.0 is not a value of UINT8"),
        ({"mode": "constant", "dtype": np.int8, "value": float("nan")}, r"PaddingValue = nan is not a value of INT8"),
    ],
)
def test_directmls_rules_per_feature_level(kwargs, rule):
    dims = kwargs.pop("dims", 4)
    shape, start = (1, 2, 3, 4)[-dims:], (0, 1, 1, 0)[-dims:]
    with pytest.raises(DescriptorError, match=rule):
        _desc(
            kwargs.pop("mode"), shape, start, start, kwargs.pop("dtype", np.float32), kwargs.pop("value", 0.0), **kwargs
        )


def test_the_output_size_is_the_input_and_its_padding():
    t = cd.BufferTensorDesc(T.FLOAT32, [1, 1, 4, 4])
    with pytest.raises(DescriptorError, match=r"OutputTensor.Sizes\[3\] = 9 must equal .* = 10"):
        PaddingOperatorDesc(t, cd.BufferTensorDesc(T.FLOAT32, [1, 1, 8, 9]), "edge", 0.0, [0, 0, 1, 2], [0, 0, 3, 4])


@pytest.mark.parametrize(("value", "element"), [(10.6, 10), (-10.6, -10), (127.9, 127)])
def test_a_constant_is_truncated_for_integer_types(value, element):
    desc = _desc("constant", (1, 1, 1, 1), (0, 0, 0, 1), (0, 0, 0, 0), np.int8, value=value)
    assert np.frombuffer(desc.fill, np.int8)[0] == element


def test_padding1_takes_a_typed_value_of_the_outputs_type():
    i64 = T.INT64
    big = 2**62 + 1  # no float holds it
    desc = Padding1OperatorDesc(
        cd.BufferTensorDesc(i64, [3]), cd.BufferTensorDesc(i64, [5]), "constant", i64, big, [1], [1]
    )
    got = _run(desc, np.array([1, 2, 3], np.int64))
    assert got.tolist() == [big, 1, 2, 3, big]
    with pytest.raises(
        DescriptorError, match=r"PaddingValueDataType = INT32 differs from OutputTensor.DataType = INT64"
    ):
        Padding1OperatorDesc(cd.BufferTensorDesc(i64, [3]), cd.BufferTensorDesc(i64, [5]), "edge", T.INT32, 0, [1], [1])
    with pytest.raises(DescriptorError, match="needs feature level 5_0"):
        Padding1OperatorDesc(
            cd.BufferTensorDesc(i64, [3]), cd.BufferTensorDesc(i64, [5]), "edge", i64, 0, [1], [1], feature_level="4_1"
        )
    with pytest.raises(TypeError, match="PaddingValue must be an integer"):
        Padding1OperatorDesc(cd.BufferTensorDesc(i64, [3]), cd.BufferTensorDesc(i64, [5]), "edge", i64, 0.5, [1], [1])


@pytest.mark.parametrize("bad", [None, "9", 1j, True])
def test_padding_value_must_be_a_real_number(bad):
    with pytest.raises(TypeError, match="PaddingValue must be a real number"):
        _desc("constant", (1, 1, 2, 2), (0, 0, 1, 1), (0, 0, 1, 1), value=bad)


@pytest.mark.parametrize("bad", ["mirror", 5, -1, 2.0, None])
def test_an_unknown_mode_is_named(bad):
    with pytest.raises((ValueError, TypeError), match="padding_mode"):
        _desc(bad, (1, 1, 2, 2), (0, 0, 1, 1), (0, 0, 1, 1))


def test_a_graph_composes_padding_with_a_window(rng, xp):
    """PADDING then SLICE1 of part of it: copies straight from the input, no intermediate."""
    x = random_array((1, 1, 4, 4), np.float32, rng)
    f32 = T.FLOAT32
    pad = _desc("reflection", (1, 1, 4, 4), (0, 0, 1, 2), (0, 0, 3, 4))
    window = cd.Slice1OperatorDesc(
        cd.BufferTensorDesc(f32, [1, 1, 8, 10]),
        cd.BufferTensorDesc(f32, [1, 1, 4, 5]),
        [0, 0, 1, 1],
        [1, 1, 7, 9],
        [1, 1, 2, -2],
    )
    graph = cd.GraphDesc(
        1,
        1,
        [pad, window],
        [cd.GraphInputEdge(0, 0, 0)],
        [cd.GraphOutputEdge(1, 0, 0)],
        [cd.GraphIntermediateEdge(0, 0, 1, 0)],
    )
    got = graph.compile()(xp.asarray(x))
    got = got if xp is np else xp.asnumpy(got)
    padded = np.pad(x, [(0, 0), (0, 0), (1, 3), (2, 4)], mode="reflect")
    assert _same(got, padded[:, :, 1:8:2, 9:0:-2])


def test_the_new_descriptors_repr_as_text_until_they_draw():
    """Their operators declare no picture yet: the reprs are text (Jupyter shows the repr), and
    ``explain`` says so."""
    pad = _desc("wrap", (1, 1, 2, 2), (0, 0, 1, 1), (0, 0, 1, 1))
    assert pad._repr_html_() is None and pad.compile()._repr_html_() is None
    assert "padding_mode=WRAP" in repr(pad)
    with pytest.raises(TypeError, match="PaddingOperatorDesc has no picture yet"):
        cd.explain(pad)


def test_a_constant_past_a_float_is_refused_and_past_half_is_infinite():
    with pytest.raises(DescriptorError, match=r"PaddingValue = .* is past a float's range"):
        _desc("constant", (1, 1, 1, 2), (0, 0, 0, 1), (0, 0, 0, 1), value=10**400)
    desc = _desc("constant", (1, 1, 1, 2), (0, 0, 0, 1), (0, 0, 0, 1), np.float16, value=np.float64(1e10))
    with np.errstate(all="raise"):  # (no overflow raised: the rounding is the rule)
        assert np.frombuffer(desc.fill, np.float16)[0] == np.inf

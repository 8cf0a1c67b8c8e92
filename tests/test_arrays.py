"""The array functions against NumPy indexing, on arrays of any layout, with ``out=`` views.

Inputs are views with negative, zero and padded strides at odd byte offsets; ``out=`` is a
strided view into a poisoned buffer, whose other bytes must stay untouched.
"""

import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.errors import DescriptorError
from cudadml.testing import POISON, random_array, to_host

DTYPES = [np.int8, np.float16, np.float32, np.uint64, np.complex128]


def typed(x):
    """DirectML types where the dtype has one; 16-byte elements move as raw bits."""
    return {"directml_types": x.dtype.itemsize != 16}


HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def arrays(draw, rng, xp, max_rank=6):
    """A random-bit array of a random layout: a view (reversed axes, steps, a transposition,
    a broadcast axis) into a larger buffer, at an element offset that breaks 16-byte alignment."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    rank = draw(st.integers(1, max_rank))
    shape = tuple(draw(st.integers(1, {1: 50, 2: 12, 3: 7}.get(rank, 4))) for _ in range(rank))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in shape]
    base = random_array(tuple(n * abs(s) + 1 for n, s in zip(shape, steps)), dtype, rng, xp)
    view = base[tuple(slice(None, n * s, s) if s > 0 else slice(-1, -n * abs(s) - 1, s) for n, s in zip(shape, steps))]
    if rank > 1 and draw(st.booleans()):
        order = draw(st.permutations(range(rank)))
        view = view.transpose(order)
    if draw(st.booleans()):
        axis = draw(st.integers(0, view.ndim - 1))
        view = xp.broadcast_to(view.take([0], axis=axis), view.shape)
    return view


def out_view(shape, dtype, xp, rng):
    """A strided, possibly reversed view into a poisoned buffer, and the buffer."""
    if not shape:  # a 0-d result: one element in the middle of three
        buffer, index = xp.empty(3, dtype), (1, Ellipsis)
    else:
        steps = [int(s) for s in rng.choice([1, 2, -1], size=len(shape))]
        buffer = xp.empty(tuple(n * abs(s) + 2 for n, s in zip(shape, steps)), dtype)
        index = tuple(slice(1, 1 + n * s, s) if s > 0 else slice(n * abs(s), 0, s) for n, s in zip(shape, steps))
    buffer.view(np.uint8)[...] = POISON
    return buffer[index], buffer, index


def assert_written_exactly(buffer, index, expected):
    """``buffer[index]`` equals ``expected`` bit for bit and every other byte is still poison."""
    host = to_host(buffer)
    assert host[index].tobytes() == np.ascontiguousarray(expected).tobytes()
    mask = np.ones(host.shape, bool)
    mask[index] = False
    assert np.all(host[mask].view(np.uint8) == POISON)


@st.composite
def basic_keys(draw, shape):
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "slice", "slice", "int", "none"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
            continue
        if kind == "none":
            key.append(None)
        start = draw(st.none() | st.integers(-n - 2, n + 2))
        stop = draw(st.none() | st.integers(-n - 2, n + 2))
        step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2, -5]))
        key.append(slice(start, stop, step))
    if draw(st.booleans()) and len(key) > 1:
        cut = draw(st.integers(0, len(key) - 1))
        key = key[:cut] + [Ellipsis] + [k for k in key[cut:] if k is None]
    return tuple(key)


@given(data=st.data())
@HYPOTHESIS
def test_strided_slice_matches_indexing(xp, rng, data):
    x = data.draw(arrays(rng, xp))
    key = data.draw(basic_keys(x.shape))
    expected = np.asarray(to_host(x)[key])
    got = cd.strided_slice(x, key, **typed(x))
    assert type(got) is type(x) and got.shape == expected.shape and got.dtype == expected.dtype
    assert to_host(got).tobytes() == np.ascontiguousarray(expected).tobytes()
    if expected.size:
        out, buffer, index = out_view(expected.shape, x.dtype, xp, rng)
        assert cd.strided_slice(x, key, out=out, **typed(x)) is out
        assert_written_exactly(buffer, index, expected)


@given(data=st.data())
@HYPOTHESIS
def test_strided_slice_grad_matches_assignment(xp, rng, data):
    x = data.draw(arrays(rng, xp))
    key = data.draw(basic_keys(x.shape))
    dy_host = random_array(np.shape(to_host(x)[key]), x.dtype, rng)
    expected = np.zeros(x.shape, x.dtype)
    expected[key] = dy_host
    out, buffer, index = out_view(x.shape, x.dtype, xp, rng)
    assert cd.strided_slice_grad(xp.asarray(dy_host), x.shape, key, out=out, **typed(x)) is out
    assert_written_exactly(buffer, index, expected)


@given(data=st.data())
@HYPOTHESIS
def test_split_and_join_match_numpy(xp, rng, data):
    x = data.draw(arrays(rng, xp))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[axis]
    sizes = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=5).filter(lambda s: sum(s) <= n))
    sizes = [*sizes, n - sum(sizes)]
    host = to_host(x)
    expected = np.split(host, np.cumsum(sizes)[:-1], axis=axis)
    outs = [out_view(e.shape, x.dtype, xp, rng) for e in expected]
    got = cd.split(x, split_sizes=sizes, axis=axis, out=[o for o, _, _ in outs], **typed(x))
    assert all(g is o for g, (o, _, _) in zip(got, outs))
    for (_, buffer, index), e in zip(outs, expected):
        assert_written_exactly(buffer, index, e)
    joined = cd.join(got, axis=axis, **typed(x))
    assert to_host(joined).tobytes() == np.ascontiguousarray(host).tobytes()
    fresh = cd.split(x, split_sizes=sizes, axis=axis, **typed(x))
    assert [to_host(f).tobytes() for f in fresh] == [np.ascontiguousarray(e).tobytes() for e in expected]


@pytest.mark.parametrize("dtype", [np.bool_, np.complex64, np.dtype("V2"), np.complex128, np.dtype("V16")])
def test_any_plain_dtype_moves_as_bits_when_asked(xp, rng, dtype):
    if np.dtype(dtype).kind == "V" and xp is not np:
        pytest.skip("CuPy has no void dtypes")
    x = xp.asarray(
        random_array((5, 6), np.uint8, rng).view(dtype)
        if np.dtype(dtype).itemsize == 1
        else random_array((5, 6 * np.dtype(dtype).itemsize), np.uint8, rng).view(dtype)
    )
    with pytest.raises(TypeError, match="no DirectML tensor data type"):
        cd.strided_slice(x, (slice(None, None, -1),))
    got = cd.strided_slice(x, (slice(None, None, -1), slice(1, None, 2)), directml_types=False)
    assert to_host(got).tobytes() == np.ascontiguousarray(to_host(x)[::-1, 1::2]).tobytes()


def test_array_functions_on_spec_examples(xp):
    grid = xp.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    assert to_host(cd.slice(grid, offsets=[0, 0, 1, 2], sizes=[1, 1, 3, 2]))[0, 0].tolist() == [
        [7, 8],
        [11, 12],
        [15, 16],
    ]
    assert to_host(
        cd.slice1(grid, window_offsets=[0, 0, 0, 1], window_sizes=[1, 1, 4, 3], window_strides=[1, 1, -2, 2])
    )[0, 0].tolist() == [[14, 16], [6, 8]]
    dy = xp.asarray(np.array([[1, 3], [9, 11]], np.float32).reshape(1, 1, 2, 2))
    grad = to_host(
        cd.slice_grad(
            dy, (1, 1, 4, 4), window_offsets=[0, 0, 0, 0], window_sizes=[1, 1, 4, 4], window_strides=[1, 1, 2, 2]
        )
    )[0, 0]
    assert grad.tolist() == [[1, 0, 3, 0], [0, 0, 0, 0], [9, 0, 11, 0], [0, 0, 0, 0]]
    split = xp.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)
    parts = cd.split(split, split_sizes=[2, 1, 3], axis=2)
    assert [to_host(p)[0, 0].tolist() for p in parts] == [[[1, 2], [3, 4]], [[5, 6]], [[7, 8], [9, 10], [11, 12]]]
    assert [to_host(p)[0, 0, :, 0].tolist() for p in cd.split(split, parts=2, axis=3)] == [
        [1, 3, 5, 7, 9, 11],
        [2, 4, 6, 8, 10, 12],
    ]
    assert to_host(cd.join(parts, axis=2)).tolist() == to_host(split).tolist()


ERRORS = [
    (
        lambda xp: cd.slice(xp.ones((4, 4)), offsets=[0, 3], sizes=[1, 2], strides=[1, 1]),
        cd.DescriptorError,
        r"^slice: offsets\[1\] \+ strides\[1\] \* \(sizes\[1\] - 1\) = 4 reads past x.shape\[1\] = 4",
    ),
    (
        lambda xp: cd.slice1(xp.ones((4, 4)), window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[1, 0]),
        cd.DescriptorError,
        r"window_strides\[1\] = 0 must be non-zero",
    ),
    (
        lambda xp: cd.slice1(xp.ones((2, 2, 2)), window_offsets=[0] * 3, window_sizes=[2] * 3, feature_level="2_1"),
        cd.DescriptorError,
        r"x.ndim = 3 is not supported at feature level 2_1 \(supported: 4 to 5\)",
    ),
    (lambda xp: cd.split(xp.ones((5, 2)), parts=2), ValueError, "does not divide into 2 equal parts"),
    (
        lambda xp: cd.split(xp.ones((5, 2)), split_sizes=[2, 2]),
        cd.DescriptorError,
        r"split_sizes sum to 4, not x.shape\[0\] = 5",
    ),
    (lambda xp: cd.split(xp.ones((5, 2)), split_sizes=[2, 3], axis=2), np.exceptions.AxisError, "out of bounds"),
    (lambda xp: cd.join([xp.ones((2, 2)), xp.ones((2, 3))]), cd.DescriptorError, r"xs\[1\].shape\[1\] = 3"),
    (lambda xp: cd.join([xp.ones(2, np.float32), xp.ones(2)]), TypeError, "dtype float64, xs"),
    (lambda xp: cd.strided_slice(xp.ones((2, 3)), (0, 0, 0)), IndexError, "too many indices"),
    (lambda xp: cd.strided_slice(xp.ones((2, 3)), (5,)), IndexError, "out of bounds for axis 0 with size 2"),
    (lambda xp: cd.strided_slice(xp.ones((2, 3)), ([0, 1],)), TypeError, "only basic indices"),
    (lambda xp: cd.strided_slice(xp.ones(9), slice(None), out=xp.ones(8)), ValueError, r"out has shape \(8,\)"),
    (lambda xp: cd.strided_slice(xp.ones(9), slice(None), out=xp.ones(9, np.float32)), TypeError, "out has dtype"),
    (
        lambda xp: cd.strided_slice(xp.ones((3, 3)), slice(None), out=xp.broadcast_to(xp.ones(3), (3, 3))),
        ValueError,
        "overlaps itself",
    ),
    (
        lambda xp: cd.strided_slice_grad(xp.ones(3), (9,), slice(None, None, 2)),
        ValueError,
        r"x\[key\] has shape \(5,\)",
    ),
    (lambda xp: cd.slice1(xp.ones(()), window_offsets=[], window_sizes=[]), ValueError, "0-dimensional"),
]


@pytest.mark.parametrize("call, error, message", ERRORS)
def test_array_function_errors(xp, call, error, message):
    with pytest.raises(error, match=message):
        call(xp)


def test_out_overlapping_input_is_rejected_and_untouched(xp, rng):
    x = xp.asarray(random_array((8, 8), np.float32, rng))
    before = to_host(x).copy()
    with pytest.raises(cd.BindingError, match=r"^strided_slice: out overlaps x in memory$"):
        cd.strided_slice(x, (slice(None, None, -1),), out=x)
    assert to_host(x).tobytes() == before.tobytes()


def test_empty_selections_follow_numpy(xp, rng):
    x = xp.asarray(random_array((4, 5), np.int16, rng))
    assert cd.strided_slice(x, (slice(3, 1),)).shape == (0, 5)
    grad = cd.strided_slice_grad(xp.zeros((0, 5), np.int16), (4, 5), (slice(3, 1),))
    assert not to_host(grad).any()
    parts = cd.split(x, split_sizes=[0, 5, 0], axis=1)
    assert [p.shape for p in parts] == [(4, 0), (4, 5), (4, 0)]
    assert to_host(parts[1]).tobytes() == to_host(x).tobytes()


def test_16_byte_elements_take_every_function(xp, rng):
    """complex128 through the five operators as raw bits: the window functions, the gradients
    and split/join, exactly as NumPy's indexing, assignment, split and concatenate."""
    host = random_array((3, 4, 6), np.complex128, rng)
    x = xp.asarray(host)
    got = cd.slice(x, offsets=[1, 0, 1], sizes=[2, 2, 2], strides=[1, 3, 2], directml_types=False)
    assert to_host(got).tobytes() == np.ascontiguousarray(host[1:3, ::3, 1:5:2]).tobytes()
    got = cd.slice1(
        x, window_offsets=[0, 0, 2], window_sizes=[3, 4, 4], window_strides=[-1, 2, -1], directml_types=False
    )
    assert to_host(got).tobytes() == np.ascontiguousarray(host[::-1, ::2, 5:1:-1]).tobytes()
    window = random_array((3, 2, 4), np.complex128, rng)
    expected = np.zeros_like(host)
    expected[::-1, ::2, 5:1:-1] = window
    got = cd.slice_grad(
        xp.asarray(window),
        host.shape,
        window_offsets=[0, 0, 2],
        window_sizes=[3, 4, 4],
        window_strides=[-1, 2, -1],
        directml_types=False,
    )
    assert to_host(got).tobytes() == expected.tobytes()
    got = cd.strided_slice_grad(xp.asarray(window), host.shape, np.s_[::-1, ::2, 5:1:-1], directml_types=False)
    assert to_host(got).tobytes() == expected.tobytes()
    parts = cd.split(x, split_sizes=[1, 5], axis=-1, directml_types=False)
    assert [to_host(p).tobytes() for p in parts] == [
        np.ascontiguousarray(p).tobytes() for p in np.split(host, [1], axis=-1)
    ]
    assert to_host(cd.join(parts, axis=2, directml_types=False)).tobytes() == host.tobytes()


def test_16_byte_elements_refuse_what_they_cannot_take(xp):
    x = xp.zeros((1,) * 8, np.complex128)
    with pytest.raises(ValueError, match="up to 7 dimensions; this one has 8"):
        cd.strided_slice(x, np.s_[:], directml_types=False)
    with pytest.raises(TypeError, match="out has dtype complex64; the result has dtype complex128"):
        cd.strided_slice(xp.zeros(4, np.complex128), np.s_[::2], out=xp.zeros(2, np.complex64), directml_types=False)
    with pytest.raises(TypeError, match="pass directml_types=False"):
        cd.strided_slice(xp.zeros(4, np.complex128), np.s_[::2])


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shift", [0, 1, 3])
@pytest.mark.parametrize(
    "key",
    [
        (slice(None, None, -1), slice(1, 4), slice(2, 35)),  # rows of 33 elements, reversed outer axis
        (slice(None), slice(None), slice(1, None)),  # rows end at the input's last byte
        (slice(2, 3), slice(None, None, 2), slice(None)),  # whole rows, every other one
    ],
)
def test_packed_outputs_at_any_alignment_are_exact(xp, rng, dtype, shift, key):
    """Slices into a packed output (the flat-chunk kernel): rows of any length and byte
    alignment on both sides, chunks across row ends, an output starting at every element
    offset of a 16-byte chunk; only the output's bytes change."""
    if np.dtype(dtype).itemsize == 16 and xp is not np and shift:
        pytest.skip("the same bytes as shift 0 for 16-byte elements")
    host = random_array((7, 5, 37), dtype, rng)
    x = xp.asarray(host)
    expected = np.ascontiguousarray(host[key])
    buffer = xp.empty(expected.size + shift + 3, dtype)
    buffer.view(np.uint8)[...] = POISON
    out = buffer[shift : shift + expected.size].reshape(expected.shape)
    assert cd.strided_slice(x, key, out=out, **typed(x)) is out
    assert_written_exactly(buffer, slice(shift, shift + expected.size), expected.ravel())


SUBCLASSES = [
    pytest.param(lambda a: np.ma.masked_array(a, mask=a > 2), "MaskedArray", id="masked"),
    pytest.param(
        np.asmatrix, "matrix", id="matrix", marks=pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
    ),
]


@pytest.mark.parametrize("make, kind", SUBCLASSES)
def test_numpy_subclasses_are_refused_not_returned_as_plain_arrays(make, kind):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    message = re.escape(
        f"is a {kind}, a NumPy subclass whose meaning (a mask, matrix rules) the plain result would drop"
    )
    with pytest.raises(TypeError, match="strided_slice: x " + message):
        cd.strided_slice(make(a), np.s_[:1])
    with pytest.raises(TypeError, match=r"join: xs\[1\] " + message):
        cd.join([a, make(a)])
    with pytest.raises(TypeError, match="strided_slice: out " + message):
        cd.strided_slice(a, np.s_[:1], out=make(np.zeros((1, 3), np.float32)))


def test_a_memmap_is_plain_data(tmp_path):
    m = np.memmap(tmp_path / "x.bin", np.int16, "w+", shape=(4, 5))
    m[:] = np.arange(20).reshape(4, 5)
    assert np.array_equal(cd.strided_slice(m, np.s_[::-2, 1:]), np.asarray(m)[::-2, 1:])


@pytest.mark.parametrize("text", [b"abc", "abc"])
def test_bytes_and_str_are_refused_as_such(text):
    message = re.escape(f"is {type(text).__name__}, not an array (NumPy would make it one 0-dimensional element)")
    with pytest.raises(TypeError, match="slice: x " + message):
        cd.slice(text, offsets=[1], sizes=[2])
    with pytest.raises(TypeError, match="split: x " + message):
        cd.split(text, parts=3)


def test_slices_are_read_as_python_reads_them():
    """Basic indexing's slices, written out (tracers do not all follow ``slice.indices``),
    give what ``range(*slice(...).indices(n))`` gives, huge and negative bounds and steps too."""
    from cudadml.indexing import _slice_window

    bounds = [None, -(10**20), -12, -5, -3, -1, 0, 1, 2, 3, 5, 12, 10**20]
    steps = [None, -(10**20), -7, -2, -1, 1, 2, 3, 10**20]
    for n in range(7):
        for start, stop, step in itertools.product(bounds, bounds, steps):
            first, _, last = slice(start, stop, step).indices(n)
            taken = range(first, slice(start, stop, step).indices(n)[1], last)
            assert _slice_window(start, stop, step, n) == (first, last, len(taken)), (start, stop, step, n)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        cd.strided_slice(np.zeros(3), np.s_[::0])


def test_a_field_of_one_record_is_sliced_split_and_joined(xp):
    """An axis of one element moves nowhere, whatever its stride: a record's field of one
    element (strides of the record's 9 bytes) is a valid array."""
    if xp is not np:
        pytest.skip("CuPy has no records")
    rec = np.zeros(1, [("a", "<f8"), ("b", "u1")])
    rec["a"] = 2.5
    field = rec["a"]
    assert cd.strided_slice(field, np.s_[::-1]).tolist() == [2.5]
    assert cd.slice1(field, window_offsets=[0], window_sizes=[1], window_strides=[-1]).tolist() == [2.5]
    assert [p.tolist() for p in cd.split(field, split_sizes=[1, 0])] == [[2.5], []]
    assert cd.join([field, field]).tolist() == [2.5, 2.5]
    assert cd.slice_grad(field, (2,), window_offsets=[1], window_sizes=[1]).tolist() == [0, 2.5]
    assert cd.slice1_batch_grad(field[None], (2,), window_offsets=[[1]], window_sizes=[1]).tolist() == [0, 2.5]
    out = np.zeros(1, [("a", "<f8"), ("b", "u1")])
    assert cd.strided_slice(np.array([7.0]), np.s_[:], out=out["a"]) is not None
    assert out["a"].tolist() == [7.0]


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda x: cd.slice1(
                x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[0, 1], output_sizes=[0, 4]
            ),
            r"window_strides\[0\] = 0",
        ),
        (lambda x: cd.slice(x, offsets=[-5, 0], sizes=[0, 4]), r"offsets\[0\] = -5 must be an unsigned 32-bit value"),
        (
            lambda x: cd.slice(x[None], offsets=[0, 0, 0], sizes=[1, 0, 4], feature_level="2_1"),
            "x.ndim = 3 is not",
        ),
        (
            lambda x: cd.slice_grad(x[:0], (4, 4), window_offsets=[-1, 0], window_sizes=[0, 4]),
            r"window_offsets\[0\] = -1",
        ),
        (lambda x: cd.strided_slice(x.reshape((1,) * 7 + (4, 4))[..., :0], ...), "x.ndim = 9"),
        (lambda x: cd.split(x[:0], split_sizes=[0, 0], axis=0, feature_level="2_1"), "x.ndim = 2 is not"),
        (lambda x: cd.join([x[:0], x[:0]], feature_level="2_1"), r"xs\[0\].ndim = 2 is not"),
        (lambda x: cd.split(x[:0], split_sizes=[1], axis=0), r"split_sizes sum to 1, not x.shape\[0\] = 0"),
        (lambda x: cd.split(x[:0], split_sizes=[], axis=0), r"len\(split_sizes\) = 0 must be greater than 0"),
    ],
)
def test_directmls_rules_hold_for_empty_results(xp, call, message):
    x = xp.asarray(np.arange(16.0, dtype=np.float32).reshape(4, 4))
    with pytest.raises(DescriptorError, match=message):
        call(x)


def test_empty_results_that_keep_the_rules_are_made(xp):
    x = xp.asarray(np.arange(16.0, dtype=np.float32).reshape(4, 4))
    assert cd.slice(x, offsets=[4, 0], sizes=[0, 4]).shape == (0, 4)  # x[4:4], as NumPy
    assert cd.strided_slice(x, np.s_[4:4, 9:]).shape == (0, 0)
    assert cd.slice1(x, window_offsets=[0, 0], window_sizes=[0, 4]).shape == (0, 4)
    assert cd.slice_grad(x[:0], (4, 4), window_offsets=[4, 0], window_sizes=[0, 4]).shape == (4, 4)

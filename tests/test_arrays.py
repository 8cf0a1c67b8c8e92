"""The array functions against NumPy indexing, on arrays of any layout, with ``out=`` views.

Inputs are views with negative, zero and padded strides at odd byte offsets; ``out=`` is a
strided view into a poisoned buffer, whose other bytes must stay untouched. Every function's
samples, examples and gradient come from its table (``cases.OPS``), against its NumPy oracle;
strided_slice, its gradient, split and join also take hypothesis's random layouts and keys.
"""

import itertools
import re

import cases
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudadml as cd
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


# ---- every function's samples (cases.OPS) against its NumPy oracle --------------------------------

SAMPLE_DTYPES = [np.int8, np.float16, np.float32, np.uint64, np.complex128, np.bool_]
LAYOUTS = ["contiguous", "reversed", "padded", "transposed", "broadcast"]


def laid_out(a, layout):
    """``a`` with ``layout``'s strides, as a NumPy view (for "broadcast": its first entry along
    axis 0 repeated, so the oracle reads the values the function does)."""
    if layout == "broadcast" and a.ndim:
        return np.broadcast_to(a[:1], a.shape)
    return a


def moved(a, layout, xp):
    """``a`` (made by ``laid_out``) as an ``xp`` array of ``layout``: negative strides, padded
    strides at an odd element offset, a transposition or a zero stride; the same values."""
    rank = a.ndim
    if not rank:
        return xp.asarray(a)
    if layout == "reversed":
        flip = (slice(None, None, -1),) * rank
        return xp.asarray(np.ascontiguousarray(a[flip]))[flip]
    if layout == "padded":
        buffer = xp.empty((*a.shape[:-1], 2 * a.shape[-1] + 1), a.dtype)
        view = buffer[..., 1::2]
        view[...] = xp.asarray(a)
        return view
    if layout == "transposed":
        order = tuple(reversed(range(rank)))
        return xp.asarray(np.ascontiguousarray(a.transpose(order))).transpose(order)
    if layout == "broadcast":
        return xp.broadcast_to(xp.asarray(np.ascontiguousarray(a[:1])), a.shape)
    return xp.asarray(a)


def _same(got, want):
    return (
        got.shape == want.shape
        and got.dtype == want.dtype
        and (to_host(got).tobytes() == np.ascontiguousarray(want).tobytes())
    )


@pytest.mark.parametrize("dtype", SAMPLE_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_samples_match_numpy(xp, rng, op, dtype):
    """Every sample and a few random calls, on inputs of every layout, give the oracle's bytes:
    as new arrays of the inputs' kind, and written into strided ``out=`` views of poisoned
    buffers whose other bytes stay poison. A dtype without a DirectML type is refused unless
    ``directml_types=False``, which moves its elements as raw bits."""
    if not op.supports(dtype):
        pytest.skip(f"{op.name} adds elements, which {np.dtype(dtype)} cannot")
    make = op.maker(dtype, rng)
    typed = {"directml_types": not cases.moves_raw_bits(dtype)}
    samples = [*op.samples(make), *(op.random_sample(make, rng) for _ in range(3))]
    for k, sample in enumerate(samples):
        layout = LAYOUTS[k % len(LAYOUTS)]
        sample = sample.map(lambda a: laid_out(a, layout))  # noqa: B023
        given = sample.map(lambda a: moved(a, layout, xp))  # noqa: B023
        # The oracle reads the bytes the call is given (CuPy makes a 0-d bool of other bits 1).
        expected = cases.expected(op, given.map(to_host))
        got = cases.listed(given.call(op.function, **typed))
        assert len(got) == len(expected), sample
        for g, e in zip(got, expected):
            assert type(g) is type(given.arrays()[0]), sample
            assert _same(g, e), f"{sample} ({layout})"
        outs = [out_view(e.shape, e.dtype, xp, rng) for e in expected]
        out = op.out(sample, [o for o, _, _ in outs])
        if out is not None:
            written = cases.listed(given.call(op.function, out=out, **typed))
            assert all(w is o for w, (o, _, _) in zip(written, outs)), sample
            for (_, buffer, index), e in zip(outs, expected):
                assert_written_exactly(buffer, index, e)
    if not typed["directml_types"]:
        with pytest.raises(TypeError, match="has no DirectML tensor data type"):
            samples[0].map(xp.asarray).call(op.function)


@pytest.mark.parametrize("op", cases.params(op for op in cases.OPS if op.examples))
def test_examples_give_their_documented_results(xp, op):
    """DirectML's examples and the docstrings', and the oracle agrees with them."""
    for sample, results in op.examples:
        got = cases.listed(sample.map(xp.asarray).call(op.function))
        assert len(got) == len(results) == len(cases.expected(op, sample)), sample
        for g, want, oracle in zip(got, results, cases.expected(op, sample)):
            assert to_host(g).tolist() == want.tolist() == oracle.tolist(), sample


@pytest.mark.parametrize("op", cases.params(op for op in cases.OPS if op.gradient))
def test_the_gradient_function_is_the_adjoint(xp, rng, op):
    """For every sample, the gradient function's call (``OpInfo.gradient_sample``) on random
    result gradients ``dys`` gives the input gradients ``gs`` with sum(y * dy) = sum(x * g), in
    integers, exactly; and those the gradient function's oracle gives."""
    gradient = cases.BY_NAME[op.gradient]
    make = cases.Maker(np.float64, rng, "integers")
    for sample in [*op.samples(make), op.random_sample(make, rng), op.rank_sample(make, 4)]:
        ys = cases.listed(sample.map(xp.asarray).call(op.function))
        dys = [make(y.shape) for y in ys]
        call = op.gradient_sample(sample, dys)
        gs = cases.listed(call.map(xp.asarray).call(gradient.function))
        xs = sample.arrays()
        assert [g.shape for g in gs] == [x.shape for x in xs], sample
        forward = sum(int((to_host(y).astype(np.int64) * dy.astype(np.int64)).sum()) for y, dy in zip(ys, dys))
        backward = sum(int((x.astype(np.int64) * to_host(g).astype(np.int64)).sum()) for x, g in zip(xs, gs))
        assert forward == backward, sample
        assert all(_same(g, e) for g, e in zip(gs, cases.expected(gradient, call))), sample


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
    from cudadml.core.indexing import _slice_window

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


# ---- out= whose strides are not whole elements -----------------------------------------------------


def record_field(shape, dtype, xp, rng):
    """``(out, buffer, records)``: field "v" of packed records ``("k", u1), ("v", dtype)`` of
    ``shape`` (strides of 1 + itemsize bytes: not whole elements, at an odd address), of
    ``xp``'s kind, in ``buffer`` (bytes, every one random); ``records``: the buffer's records on
    the host, to set the expected field in."""
    records = np.dtype([("k", "u1"), ("v", dtype)])
    raw = rng.integers(0, 256, int(np.prod(shape)) * records.itemsize, dtype=np.uint8)
    host = raw.view(records).reshape(shape)
    if xp is np:
        return host["v"], raw, host.copy()
    buffer = xp.asarray(raw)
    if not raw.size:  # (CuPy's pointer to no memory takes no offset; an empty out's strides move nowhere)
        return xp.empty(shape, dtype), buffer, host.copy()
    out = xp.ndarray(shape, np.dtype(dtype), memptr=buffer.data + 1, strides=host["v"].strides)
    return out, buffer, host.copy()


@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_out_of_a_records_field_gets_the_result_and_no_other_byte_changes(xp, rng, op, dtype):
    """``out=`` of a record's field, whose strides are not whole elements, takes the result
    (through a new array, then a copy of its bytes): its elements are the oracle's, and every
    other byte of its records (the "k" field) is as it was."""
    if not op.supports(dtype):
        pytest.skip(f"{op.name} adds elements, which {np.dtype(dtype)} cannot")
    typed = {"directml_types": not cases.moves_raw_bits(dtype)}
    most = 7 if np.dtype(dtype).itemsize == 16 else 8  # (at 8, the copy of bytes takes one launch per row)
    for sample in [*op.samples(op.maker(dtype, rng)), op.rank_sample(op.maker(dtype, rng), most)]:
        expected = cases.expected(op, sample)
        fields = [record_field(e.shape, e.dtype, xp, rng) for e in expected]
        out = op.out(sample, [o for o, _, _ in fields])
        if out is None:
            continue
        written = cases.listed(sample.map(xp.asarray).call(op.function, out=out, **typed))
        assert all(w is o for w, (o, _, _) in zip(written, fields)), sample
        for (_, buffer, records), e in zip(fields, expected):
            records["v"] = e
            assert to_host(buffer).tobytes() == records.tobytes(), sample


def test_out_of_a_records_field_keeps_the_binding_rules(xp, rng):
    """The rules of ``out=`` hold for a record's field as for any out: a wrong shape, a read-only
    field, one that shares bytes with the input: refused before anything runs, every byte kept."""
    x = xp.asarray(random_array((3, 5), np.float32, rng))
    out, buffer, records = record_field((3, 4), np.float32, xp, rng)
    with pytest.raises(cd.BindingError, match=r"^strided_slice: out has shape \(3, 4\); the result has shape \(3, 5\)"):
        cd.strided_slice(x, (), out=out)
    with pytest.raises(cd.BindingError, match=r"^join: out has shape \(3, 4\); the result has shape \(6, 5\)"):
        cd.join([x, x], out=out)
    assert to_host(buffer).tobytes() == records.tobytes()
    if xp is np:  # (CuPy arrays are always writable)
        read_only = record_field((3, 5), np.float32, xp, rng)
        read_only[0].flags.writeable = False
        with pytest.raises(cd.BindingError, match=r"^strided_slice: out is read-only$"):
            cd.strided_slice(x, (), out=read_only[0])
        assert read_only[1].tobytes() == read_only[2].tobytes()
    # The input is the out's own buffer: the field "v" read backwards, written forwards.
    out, buffer, records = record_field((5,), np.float32, xp, rng)
    with pytest.raises(cd.BindingError, match=r"^strided_slice: out overlaps x in memory$"):
        cd.strided_slice(out, np.s_[::-1], out=out)
    assert to_host(buffer).tobytes() == records.tobytes()
    # Fields of the same records that share no byte: the one read backwards into the other.
    if xp is np:
        rec = np.frombuffer(rng.bytes(4 * 5), [("k", "<u2"), ("v", "<u2"), ("p", "u1")]).copy()
        want = rec.copy()
        want["v"] = rec["k"][::-1]
        assert cd.strided_slice(rec["k"], np.s_[::-1], out=rec["v"]) is not None
        assert rec.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.complex128], ids=lambda d: np.dtype(d).name)
def test_a_records_field_as_input_gives_its_elements(xp, rng, dtype):
    """An input whose strides are not whole elements (a record's field, at an odd address) binds
    no tensor: it is read through a copy of its elements, NumPy's and CuPy's alike, and its
    buffer is left as it was."""
    x, buffer, records = record_field((3, 5), dtype, xp, rng)
    want, typed = records["v"], {"directml_types": not cases.moves_raw_bits(dtype)}
    assert to_host(cd.strided_slice(x, np.s_[::-1, 1:], **typed)).tobytes() == want[::-1, 1:].tobytes()
    joined = cd.join([x, x], axis=1, **typed)
    assert to_host(joined).tobytes() == np.concatenate([want, want], axis=1).tobytes()
    parts = cd.split(x, axis=1, split_sizes=[2, 3], **typed)
    assert [to_host(p).tobytes() for p in parts] == [want[:, :2].tobytes(), want[:, 2:].tobytes()]
    out = xp.asarray(random_array((5, 3), dtype, rng))
    assert cd.strided_slice(x.T, (), out=out, **typed) is out
    assert to_host(out).tobytes() == want.T.copy().tobytes()
    assert to_host(buffer).tobytes() == records.tobytes()


# ---- integer lists ---------------------------------------------------------------------------------

INTEGER_LISTS = {
    "offsets": lambda x, v: cd.slice(x, offsets=v, sizes=[1, 1]),
    "sizes": lambda x, v: cd.slice(x, offsets=[0, 0], sizes=v),
    "window_sizes": lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=v),
    "window_strides": lambda x, v: cd.slice_grad(
        x, (4, 4), window_offsets=[0, 0], window_sizes=[4, 4], window_strides=v
    ),
    "split_sizes": lambda x, v: cd.split(x, split_sizes=v),
    "input_shape": lambda x, v: cd.strided_slice_grad(x, v, ...),
}


@pytest.mark.parametrize("field, call", INTEGER_LISTS.items(), ids=INTEGER_LISTS.keys())
@pytest.mark.parametrize(
    "value, kind",
    [({1, 3}, "set"), (frozenset({1, 3}), "frozenset"), ({1: 0, 3: 0}, "dict"), (np.array([1, 3], object), None)],
    ids=["set", "frozenset", "dict", "object array"],
)
def test_an_integer_list_that_is_no_sequence_is_refused_naming_the_argument(xp, field, call, value, kind):
    """A set or a mapping has no order (``{4, 3}`` iterates as 3, 4) and an object array holds
    anything: like a str, each is a ``TypeError`` naming the argument, not integers in its order."""
    kind = kind or "an array of dtype object"
    with pytest.raises(TypeError, match=rf": {field} = .* must be a sequence of integers, not {kind}$"):
        call(xp.zeros((4, 4), np.float32), value)

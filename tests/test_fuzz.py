"""A differential fuzzer. Hypothesis draws calls of the array functions and of
``cudadml.numpy`` (arrays of any rank from 0 to 9, to 11 for ``cudadml.numpy``, 8-D complex128
often, with empty axes; any dtype: byte-swapped, bool, records' fields, objects; any
layout: negative, zero and non-element strides, misaligned addresses; argument values of any
type and size; feature levels; ``out=`` right, read-only, of another dtype, aliasing the
input), descriptors with buffer bindings, and PyTorch calls (eager, autograd, ``out=``, vmap,
``torch.func``), and checks each against NumPy or torch: the same bytes, or a refusal of a
documented type (``ValueError``, ``TypeError``, ``IndexError``) before any byte of an input's
or output's buffer changed. Calls that DirectML's rules cannot refuse (a plain dtype moved as
raw bits, rank 1 to 8, a key in range) must succeed, and so must every ``cudadml.numpy`` call
that NumPy takes (but of objects), at any rank.

A failing case's report gives its replay twice: Hypothesis's ``@reproduce_failure`` line
(``print_blob``), and the lines that make its arrays and make the call, as a script to run in
tests/ (``note``), on the GPU machine (CuPy arrays) as on the host.

The default run gives each backend a few dozen calls; ``pytest -m fuzz`` runs thousands (CI
runs it, and so does the GPU machine)."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.testing import random_array, to_host

REFUSALS = (ValueError, TypeError, IndexError)
PLAIN = ["u1", "i2", "<f4", "<f8", "<c8", "<c16", "?"]
ODD = [">i4", ">f8", ">f2", "O", "record field"]
SMALL = st.integers(-6, 6)
INTS = st.one_of(  # mostly small ints, so that most calls run
    SMALL,
    SMALL,
    SMALL,
    st.sampled_from([2**31, -(2**31) - 1, 2**63, -(2**64), 10**30]),
    st.integers(-6, 6).map(np.int64),
    st.integers(0, 6).map(np.uint8),
)
BOUND = st.one_of(st.none(), SMALL, SMALL, INTS, st.sampled_from([True, 2.0, "1"]))


def _base(rng, shape, dtype):
    """A buffer-backed array of ``shape``: ``(array, buffer)``; the buffer holds every byte
    the array may touch, so a write outside the array's elements shows there."""
    if dtype == "record field":
        record = np.zeros(shape, [("a", "<f8"), ("b", "u1")])
        record["a"] = rng.standard_normal(shape)
        return record["a"], record.reshape(-1).view(np.uint8)
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        a = np.empty(shape, object)
        a.reshape(-1)[:] = list(range(a.size))
        return a, a
    count = int(np.prod(shape))
    raw = np.frombuffer(rng.bytes(count * dtype.itemsize + 16), np.uint8).copy()
    if dtype.kind == "b":
        raw[:] = raw % 2
    elif dtype.kind in "fc":
        raw[:] = raw & 0x3F  # no NaN payloads: equality below compares values
    shift = int(rng.integers(0, 2)) * (1 if dtype.itemsize > 1 else 0)  # misaligned at times
    a = np.ndarray(shape, dtype, buffer=raw, offset=shift)
    return a, raw


def make_array(shape, dtype, seed, steps, broadcast):
    """``(x, buffer)``: the array ``arrays`` draws, made from what it drew (a failing case's
    report shows this call, to replay it: ``from test_fuzz import make_array`` in tests/)."""
    x, buffer = _base(np.random.default_rng(seed), tuple(n * abs(s) for n, s in zip(shape, steps)), dtype)
    x = x[(*(slice(None, None, s) for s in steps), Ellipsis)]  # a view even at rank 0
    if broadcast and x.ndim and x.shape[0] and dtype != "O":  # a zero stride: one row broadcast
        x = np.broadcast_to(x[:1], x.shape)
    return x, buffer


@st.composite
def arrays(draw, plain_only=False, high=False):
    """``(x, buffer, plain, code)``: a view of a buffer with a drawn layout, of rank 0 to 9 (with
    ``high``: to 11, ranks 8 to 11 and complex128 drawn more often); ``plain``: a dtype and rank
    that every array function takes with ``directml_types=False``; ``code``: the line that makes
    ``x`` and ``buffer`` again (``make_array``)."""
    most = 11 if high else 9
    rank = draw(st.one_of(st.integers(0, most), st.integers(8, most)) if high else st.integers(0, most))
    # Empty axes in one array of five; no more than a few thousand elements at high ranks, whatever
    # their steps.
    sizes = st.integers(0 if draw(st.integers(0, 4)) == 0 else 1, 4 if rank <= 4 else 3 if rank <= 6 else 2)
    shape = tuple(draw(st.lists(sizes, min_size=rank, max_size=rank)))
    kinds = st.sampled_from(PLAIN if plain_only else PLAIN * 3 + ODD)
    dtype = draw(st.one_of(kinds, st.just("<c16")) if high else kinds)
    seed = draw(st.integers(0, 2**32 - 1))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in shape]
    broadcast = draw(st.booleans())
    x, buffer = make_array(shape, dtype, seed, steps, broadcast)
    # (16-byte elements move as pairs of words: one more dimension, so up to 7)
    plain = dtype in PLAIN and 1 <= rank <= (7 if np.dtype(dtype).itemsize == 16 else 8)
    return x, buffer, plain, f"x, buffer = make_array({shape!r}, {dtype!r}, {seed}, {steps!r}, {broadcast})"


def _bytes(buffer):
    return buffer.tobytes() if buffer.dtype != object else list(buffer.reshape(-1))


def _device(xp, a):
    return a if xp is np else xp.asarray(a.copy(order="C"))  # (ascontiguousarray makes 0-d arrays 1-d)


def _check(xp, call, oracle, x, buffer, must_run, out=None, out_buffer=None):
    """``call()`` gives ``oracle()``'s bytes, or raises a refusal with nothing changed."""
    try:
        want = oracle()
    except (*REFUSALS, OverflowError):
        want = None
    before = _bytes(buffer), out_buffer is not None and _bytes(out_buffer)
    around = None if out is None else _around(out, out_buffer)
    try:
        got = call()
    except REFUSALS as e:
        event(f"refused: {type(e).__name__}")
        assert not (must_run and want is not None), f"a valid call was refused: {type(e).__name__}: {e}"
        assert (_bytes(buffer), out_buffer is not None and _bytes(out_buffer)) == before, "a refused call wrote"
        return
    event("ran")
    assert want is not None, "NumPy refuses what cudadml took"
    got = [to_host(a) for a in (got if isinstance(got, list) else [got])]
    want = want if isinstance(want, list) else [want]
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):  # (concatenate makes byte-swapped arrays native; join keeps the bytes' order)
        assert g.dtype.newbyteorder("=") == w.dtype.newbyteorder("=") and np.array_equal(g, w), (g, w)
    if out is not None:
        assert got[0] is out or to_host(out).tobytes() == got[0].tobytes()
        assert _around(out, out_buffer) == around, "a byte of out's buffer outside its elements changed"


def _around(out, buffer):
    """The bytes of NumPy array ``buffer`` that no element of its view ``out`` covers."""
    raw = buffer.reshape(-1).view(np.uint8)
    covered = np.zeros(raw.size, bool)
    start = out.__array_interface__["data"][0] - buffer.__array_interface__["data"][0]
    at = start + sum(
        np.arange(n).reshape((-1,) + (1,) * (out.ndim - k - 1)) * s
        for k, (n, s) in enumerate(zip(out.shape, out.strides))
    )
    covered[(np.asarray(at)[..., None] + np.arange(out.itemsize)).reshape(-1)] = True
    return raw[~covered].tobytes()


def _key(draw, ndim, bound=BOUND, step=None):
    step = st.one_of(st.none(), INTS) if step is None else step
    parts = [slice(draw(bound), draw(bound), draw(step)) for _ in range(ndim)]
    if ndim and draw(st.booleans()):
        parts[draw(st.integers(0, ndim - 1))] = draw(INTS)
    if draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), Ellipsis)
    return tuple(parts)


def _in_range(key, x):
    """Whether NumPy's view of ``key`` exists and every slice bound is a plain small int."""
    for k in key:
        values = [k] if not isinstance(k, slice) else [k.start, k.stop, k.step]
        for v in values:
            if v is not None and v is not Ellipsis and (type(v) is not int or abs(v) > 2**31):
                return False
        if isinstance(k, slice) and k.step == 0:
            return False
    return True


@st.composite
def calls(draw):
    """``(code, run(xp), oracle, x, buffer, must_run)`` for one drawn call (``code``: the lines
    that make its array and call it, for the report of a failing case)."""
    x, buffer, plain, made = draw(arrays())
    name = draw(st.sampled_from(["strided_slice", "strided_slice_grad", "split", "join", "slice1", "slice1_batch"]))
    options = {"directml_types": draw(st.sampled_from([False, False, False, True]))}
    if draw(st.integers(0, 3)) == 0:  # an older feature level: fewer ranks and types
        options["feature_level"] = draw(st.sampled_from([str(level) for level in cd.FeatureLevel] + [None, "7_0"]))
    if name == "strided_slice":
        key = _key(draw, x.ndim)
        must = plain and options == {"directml_types": False} and _in_range(key, x)
        return (
            f"{made}\ncd.strided_slice(_device(xp, x), {key!r}, **{options!r})",
            lambda xp: cd.strided_slice(_device(xp, x), key, **options),
            lambda: x[key],
            x,
            buffer,
            must,
        )
    if name == "strided_slice_grad":
        key = _key(draw, x.ndim)
        try:
            dy = np.ascontiguousarray(x[key])
        except Exception:  # no such index: the call gets x itself, and must refuse it
            dy = None

        def oracle():
            if dy is None:
                raise IndexError
            z = np.zeros(x.shape, x.dtype)
            z[key] = dy
            return z

        def run(xp):
            return cd.strided_slice_grad(_device(xp, x if dy is None else dy), x.shape, key, **options)

        dy_code = "x" if dy is None else f"np.ascontiguousarray(x[{key!r}])"
        code = f"{made}\ndy = {dy_code}\ncd.strided_slice_grad(_device(xp, dy), x.shape, {key!r}, **{options!r})"
        return code, run, oracle, x, buffer, False
    axis = draw(st.one_of(INTS, st.none()))
    if name == "split":
        sizes = draw(st.lists(st.integers(0, 3), max_size=4))

        def oracle():
            if axis is None or not x.ndim or not sizes or sum(sizes) != x.shape[axis]:
                raise ValueError  # SPLIT has an axis and sizes that add up to it
            return [np.ascontiguousarray(p) for p in np.split(x, np.cumsum(sizes)[:-1], axis)]

        return (
            f"{made}\ncd.split(_device(xp, x), split_sizes={sizes!r}, axis={axis!r}, **{options!r})",
            lambda xp: cd.split(_device(xp, x), split_sizes=sizes, axis=axis, **options),
            oracle,
            x,
            buffer,
            False,
        )
    if name == "join":
        count = draw(st.integers(1, 3))
        xs = [x] * count

        def oracle():
            if axis is None or not x.ndim:
                raise ValueError  # JOIN has an axis (NumPy flattens for None)
            return np.concatenate(xs, axis)

        must = plain and options == {"directml_types": False} and type(axis) is int and -x.ndim <= axis < x.ndim
        return (
            f"{made}\ncd.join([_device(xp, x)] * {count}, axis={axis!r}, **{options!r})",
            lambda xp: cd.join([_device(xp, a) for a in xs], axis=axis, **options),
            oracle,
            x,
            buffer,
            must,
        )
    offsets = [draw(INTS) for _ in range(x.ndim)]
    sizes = [draw(INTS) for _ in range(x.ndim)]
    strides = [draw(INTS) for _ in range(x.ndim)]

    def window(a):
        key = []
        for o, z, s, n in zip(offsets, sizes, strides, a.shape):
            o, z, s = int(o), int(z), int(s)
            if o < 0 or z < 0 or s == 0 or abs(s) > 2**31 - 1:
                raise ValueError
            if z == 0:  # an empty window: an empty result, wherever it starts up to the room its stand-in
                if o > 2**31:  # descriptor is given (calls.room_for: 2^31 and its size)
                    raise ValueError
                key.append(slice(0, 0))
                continue
            if max(o, z) > 2**31 - 1 or o + z > n:
                raise ValueError
            key.append(slice(o, o + z, s) if s > 0 else slice(o + z - 1, o - 1 if o else None, s))
        return a[tuple(key)]

    def no_windows():  # the shared sizes (UINT32) and strides (INT32) are checked; no offset is
        if not x.ndim or any(
            not 1 <= int(z) <= 2**32 - 1 or int(s) == 0 or not -(2**31) <= int(s) <= 2**31 - 1
            for z, s in zip(sizes, strides)
        ):
            raise ValueError
        return np.empty((0, *(1 + (int(z) - 1) // abs(int(s)) for z, s in zip(sizes, strides))), x.dtype)

    if name == "slice1":
        return (
            f"{made}\ncd.slice1(_device(xp, x), window_offsets={offsets!r}, window_sizes={sizes!r}, "
            f"window_strides={strides!r}, **{options!r})",
            lambda xp: cd.slice1(
                _device(xp, x), window_offsets=offsets, window_sizes=sizes, window_strides=strides, **options
            ),
            lambda: window(x),
            x,
            buffer,
            False,
        )
    rows = draw(st.integers(0, 3))
    return (
        f"{made}\ncd.slice1_batch(_device(xp, x), window_offsets={[offsets] * rows!r}, window_sizes={sizes!r}, "
        f"window_strides={strides!r}, **{options!r})",
        lambda xp: cd.slice1_batch(
            _device(xp, x), window_offsets=[offsets] * rows, window_sizes=sizes, window_strides=strides, **options
        ),
        lambda: np.stack([window(x)] * rows) if rows else no_windows(),
        x,
        buffer,
        False,
    )


def _replay(xp, code):
    """Note ``code`` (the lines that make a drawn call's arrays and make the call, on ``xp``'s
    arrays) for the report of a failing case, as a script that replays it; Hypothesis's
    ``@reproduce_failure`` blob (``print_blob``) replays the whole test."""
    module = "xp = np" if xp is np else "import cupy as xp"
    names = "from test_fuzz import _device, _on, cd, make_array, make_out, np"
    note(f"# replay, in tests/:\n{names}\nimport cudadml.numpy as cnp\n{module}\n{code}")


def _fuzz(xp, data):
    code, run, oracle, x, buffer, must = data.draw(calls())
    if xp is not np and (x.dtype.hasobject or not x.dtype.isnative or x.dtype.names or x.ndim > 8):
        return  # CuPy holds none of these
    _replay(xp, code)
    _check(xp, lambda: run(xp), oracle, x, buffer, must)


@st.composite
def outs(draw):
    """A strided_slice into an ``out=`` that is right, read-only, of another dtype, a negative
    view inside a poisoned buffer, or the input itself."""
    x, buffer, plain, made = draw(arrays(plain_only=True))
    key = _key(draw, x.ndim, st.one_of(st.none(), SMALL), st.sampled_from([None, 1, 2, -1, -2]))
    return x, buffer, plain, key, draw(st.sampled_from(["view", "read-only", "dtype", "input", "field"])), made


def refuse():
    raise ValueError


def make_out(x, buffer, key, kind):
    """``(out, outer)``: the ``out=`` of ``kind`` for ``x[key]`` (of at least one dimension) and
    the buffer it lies in: a negative view with gaps in a poisoned buffer (read-only, or of
    another dtype), a record's field in poisoned records, or ``x`` itself."""
    want = x[key]
    outer = np.full((*want.shape[:-1], 2 * want.shape[-1] + 1), 0x5A, np.uint8).astype(want.dtype)
    out = outer[..., -2::-2] if want.shape[-1] else outer[..., :0]
    if kind == "read-only":
        out.flags.writeable = False
    elif kind == "dtype":
        outer = np.zeros(outer.shape, np.int8 if want.dtype.itemsize > 1 else np.int16)
        out = outer[..., -2::-2] if want.shape[-1] else outer[..., :0]
    elif kind == "input":
        out, outer = x, buffer
    elif kind == "field":  # a record's field: strides of 1 + itemsize bytes, not whole elements
        outer = np.zeros(want.shape, [("k", "u1"), ("v", want.dtype)])
        outer.reshape(-1).view(np.uint8)[...] = 0x5A
        out = outer["v"]
    return out, outer


def _fuzz_out(xp, data):
    x, buffer, plain, key, kind, made = data.draw(outs())
    if not _in_range(key, x):
        return
    try:
        want = x[key]
    except IndexError:
        return
    if want.ndim == 0:
        return
    if xp is not np:
        return
    out, outer = make_out(x, buffer, key, kind)
    _replay(
        xp,
        f"{made}\nout, outer = make_out(x, buffer, {key!r}, {kind!r})\n"
        f"cd.strided_slice(x, {key!r}, out=out, directml_types=False)",
    )
    _check(
        xp,
        lambda: cd.strided_slice(x, key, out=out, directml_types=False),
        # into the input itself: its own shape, and either the result or a refusal of the overlap
        lambda: want.copy() if kind in ("view", "field") or (kind == "input" and x.shape == want.shape) else refuse(),
        x,
        buffer,
        kind in ("view", "field") and plain,
        out=out,
        out_buffer=outer,
    )


# print_blob: a failing case's report ends with the @reproduce_failure line that replays it
# (the GPU machine keeps no example database; the notes give the call as a script too).
_SETTINGS = {"deadline": None, "print_blob": True, "suppress_health_check": [HealthCheck.function_scoped_fixture]}
SHORT = settings(max_examples=40, **_SETTINGS)
LONG = settings(max_examples=8000, **_SETTINGS)


@SHORT
@given(data=st.data())
def test_calls_match_numpy_or_are_refused_untouched(xp, data):
    _fuzz(xp, data)


@SHORT
@given(data=st.data())
def test_out_is_written_exactly_or_refused_untouched(xp, data):
    _fuzz_out(xp, data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_calls_match_numpy_or_are_refused_untouched(xp, data):
    _fuzz(xp, data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_outs_are_written_exactly_or_refused_untouched(xp, data):
    _fuzz_out(xp, data)


# ---- descriptors and execute with buffer bindings -------------------------------------------------

DESC_TYPES = [cd.TensorDataType.UINT8, cd.TensorDataType.FLOAT16, cd.TensorDataType.INT32, cd.TensorDataType.FLOAT64]


@st.composite
def slice1_descs(draw):
    """``(desc or the exception its fields raise, fields)``: SLICE1 with hostile fields."""
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    data_type = draw(st.sampled_from(DESC_TYPES))
    hostile = draw(st.integers(0, 4)) == 0  # one call in five gets hostile values
    offsets, sizes, strides, out = [], [], [], []
    for n in shape:
        offset = draw(st.integers(0, n - 1))
        size = draw(st.integers(1, n - offset))
        stride = draw(st.sampled_from([1, 2, -1, -3]))
        values = [offset, size, stride]
        if hostile:
            values = [draw(st.one_of(st.just(v), INTS)) for v in values]
        for field, v in zip((offsets, sizes, strides), values):
            field.append(v)
        out.append(draw(st.integers(1, 1 + (size - 1) // abs(stride))))
    if hostile and draw(st.booleans()):  # an array of another length
        offsets.append(0)
    fields = [offsets, sizes, strides]
    try:
        desc = cd.Slice1OperatorDesc(
            cd.BufferTensorDesc(data_type, shape), cd.BufferTensorDesc(data_type, out), *fields
        )
    except (cd.DescriptorError, TypeError) as e:  # the documented refusals of a descriptor
        return e, fields
    return desc, fields


@st.composite
def bindings(draw, desc):
    """A binding per tensor: right, or a BufferBinding of any offset and size, read-only, too
    short, misaligned, or not a buffer at all."""
    from cudadml.testing import TensorBuffer

    buffers = [TensorBuffer(t) for t in (*desc.input_tensors, *desc.output_tensors)]
    chosen = []
    for b in buffers:
        kind = draw(st.sampled_from(["right", "right", "right", "offset", "read-only", "object"]))
        if kind == "offset":
            chosen.append(cd.BufferBinding(b.raw, draw(INTS), draw(st.one_of(st.none(), INTS))))
        elif kind == "read-only":
            b.raw.flags.writeable = False
            chosen.append(b.binding)
        else:
            chosen.append(b.binding if kind == "right" else [1, 2])
    return buffers, chosen


def _run_desc(data):
    made, fields = data.draw(slice1_descs())
    if isinstance(made, Exception):
        return
    buffers, chosen = data.draw(bindings(made))
    rng = np.random.default_rng(0)
    source = buffers[0]
    if source.raw.flags.writeable:
        source.fill(random_array(made.input_tensor.sizes, made.input_tensor.data_type.numpy_dtype, rng))
    before = [b.raw.tobytes() for b in buffers]
    try:
        made.compile().execute(chosen[:1], chosen[1:])
    except (ValueError, TypeError) as e:  # BindingError is a ValueError
        event(f"refused: {type(e).__name__}")
        assert [b.raw.tobytes() for b in buffers] == before, "a refused execute wrote"
        return
    event("ran")
    for buffer, binding in zip(buffers, chosen):  # the tensors are where the bindings put them
        buffer.offset = binding.offset
    offsets, sizes, strides = fields
    x = source.host_elements()
    key = tuple(
        (o + s - 1 if st_ < 0 else o) + st_ * np.arange(n)
        for o, s, st_, n in zip(offsets, sizes, strides, made.output_tensor.sizes)
    )
    assert buffers[1].host_elements().tobytes() == np.ascontiguousarray(x[np.ix_(*key)]).tobytes()
    assert buffers[1].untouched_outside()


@SHORT
@given(data=st.data())
def test_descriptors_and_bindings_run_exactly_or_are_refused_untouched(xp, data):
    if xp is not np:
        pytest.skip("host buffers")
    _run_desc(data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_descriptors_and_bindings_run_exactly_or_are_refused_untouched(xp, data):
    if xp is not np:
        pytest.skip("host buffers")
    _run_desc(data)


# ---- PyTorch: eager, autograd, out=, vmap and torch.func against torch's own ops --------------------


@st.composite
def torch_calls(draw):
    """``(x, key, what)``: a float tensor (its values from NumPy), an index of it, and the
    PyTorch path the call takes."""
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(0, 4)) for _ in range(rank))
    dtype = draw(st.sampled_from([np.float32, np.float64, np.complex64]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape).astype(dtype)
    key = _key(draw, rank, st.one_of(st.none(), SMALL), st.sampled_from([None, 1, 2, -1, -2]))
    what = draw(st.sampled_from(["eager", "autograd", "out", "out leaf", "vmap", "grad", "jvp"]))
    return x, key, what


def _run_torch(data):
    torch = pytest.importorskip("torch")
    x, key, what = data.draw(torch_calls())
    try:
        want = x[key]
    except Exception:
        return
    if not _in_range(key, x) or want.ndim == 0:
        return
    t = torch.from_numpy(x.copy())
    if what == "eager":
        assert torch.equal(cd.strided_slice(t, key, directml_types=False), torch.from_numpy(want.copy()))
    elif what in ("autograd", "grad", "jvp"):
        w = torch.from_numpy(np.random.default_rng(1).standard_normal(want.shape).astype(x.dtype))
        placed = np.zeros_like(x)
        placed[key] = w.numpy()
        if what == "autograd":
            t.requires_grad_()
            (cd.strided_slice(t, key, directml_types=False) * w).real.sum().backward()
            got = t.grad.conj() if t.is_complex() else t.grad  # torch's gradient of a real loss
            assert torch.equal(got, torch.from_numpy(placed))
        elif what == "grad" and not t.is_complex():
            got = torch.func.grad(lambda a: (cd.strided_slice(a, key, directml_types=False) * w).sum())(t)
            assert torch.equal(got, torch.from_numpy(placed))
        elif what == "jvp":
            tangent = torch.from_numpy(placed)
            _, out = torch.func.jvp(lambda a: cd.strided_slice(a, key, directml_types=False), (t,), (tangent,))
            assert torch.equal(out, torch.from_numpy(placed[key].copy()))
    elif what == "out":
        out = torch.full(want.shape, 7, dtype=t.dtype)
        assert cd.strided_slice(t, key, out=out, directml_types=False) is out
        assert torch.equal(out, torch.from_numpy(want.copy()))
    elif what == "out leaf":
        out = torch.full(want.shape, 7, dtype=t.dtype, requires_grad=True)
        with pytest.raises(RuntimeError, match="out= cannot take part in autograd"):
            cd.strided_slice(t, key, out=out, directml_types=False)
        assert bool((out == 7).all())
    elif what == "vmap" and x.shape[0]:
        if any(k is Ellipsis for k in key):
            return
        per_sample = (slice(None), *key[1:]) if key else ()
        try:
            loop = (
                torch.stack([cd.strided_slice(s, per_sample[1:], directml_types=False) for s in t])
                if len(key) > 1
                else None
            )
        except REFUSALS:
            return
        if loop is not None:
            assert torch.equal(torch.vmap(lambda s: cd.strided_slice(s, per_sample[1:], directml_types=False))(t), loop)


@SHORT
@given(data=st.data())
def test_pytorch_calls_match_torchs_own(data):
    _run_torch(data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_pytorch_calls_match_torchs_own(data):
    _run_torch(data)


# ---- cudadml.numpy against NumPy's functions of the same names --------------------------------------

NUMPY_FUNCTIONS = ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "split", "array_split"]
NUMPY_FUNCTIONS += ["hsplit", "vsplit", "dsplit", "flip", "fliplr", "flipud", "roll", "pad"]


@st.composite
def numpy_calls(draw):
    """``(code, name, arguments, keywords, x, buffer)`` of a drawn ``cudadml.numpy`` call (of
    ranks 0 to 11: more than DirectML's 8 fold or run in passes; 8-D complex128 often)."""
    x, buffer, _, made = draw(arrays(high=True))
    name = draw(st.sampled_from(NUMPY_FUNCTIONS))
    axis = draw(st.one_of(SMALL, st.none(), INTS))
    keywords, code = {}, made
    if name in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"):
        other = draw(st.sampled_from(["same", "int8", "float64", ">i4"]))  # NumPy promotes the dtypes
        if other == "same" or x.dtype.hasobject or x.dtype.kind == "c":  # (complex to real would warn)
            y, code = x, f"{code}\ny = x"
        else:
            y, code = x.astype(other), f"{code}\ny = x.astype({other!r})"
        count = draw(st.integers(1, 2))
        arguments, shown = ([x, y] * count,), f"[x, y] * {count}"
        if name in ("concatenate", "stack"):
            keywords["axis"] = axis
    elif name in ("split", "array_split", "hsplit", "vsplit", "dsplit"):
        # (no huge counts: NumPy's array_split would make that many arrays)
        sections = draw(st.one_of(st.integers(-1, 4), st.lists(st.one_of(st.integers(-2, 6), INTS), max_size=4)))
        arguments = (x, sections, axis) if name in ("split", "array_split") else (x, sections)
        shown = f"x, {sections!r}" + (f", {axis!r}" if len(arguments) == 3 else "")
    elif name == "flip":
        arguments, shown = (x, axis), f"x, {axis!r}"
    elif name == "roll":
        shift = draw(st.one_of(INTS, st.lists(SMALL, min_size=1, max_size=2)))
        axes = axis if not isinstance(shift, list) else tuple(draw(SMALL) for _ in shift)
        arguments, shown = (x, shift, axes), f"x, {shift!r}, {axes!r}"
    elif name == "pad":
        width = draw(st.one_of(st.integers(0, 3), st.tuples(st.integers(0, 2), st.integers(0, 2))))
        # No more than 2^16 elements (an 11-D array of sides 2 padded by 3 would have 8^11): the
        # drawn width, else 1, else none.
        width = next((w for w in (width, 1) if math.prod(n + 2 * max(np.atleast_1d(w)) for n in x.shape) <= 2**16), 0)
        keywords["constant_values"] = draw(st.sampled_from([0, 1, 7]))
        arguments, shown = (x, width), f"x, {width!r}"
    else:
        arguments, shown = (x,), "x"
    code = f"{code}\ncnp.{name}(*_on(xp, ({shown},)), **{keywords!r})"
    return code, name, arguments, keywords, x, buffer


def _on(xp, value):
    """NumPy arrays in ``value`` (a call's arguments) as ``xp``'s, as ``_device`` makes them."""
    if isinstance(value, np.ndarray):
        return _device(xp, value)
    if isinstance(value, (list, tuple)):
        return type(value)(_on(xp, v) for v in value)
    return value


def _numpy_fuzz(xp, data):
    import cudadml.numpy as cnp

    code, name, arguments, keywords, x, buffer = data.draw(numpy_calls())
    given = [a for a in (arguments[0] if isinstance(arguments[0], list) else arguments) if isinstance(a, np.ndarray)]
    if xp is not np and any(a.dtype.hasobject or not a.dtype.isnative or a.dtype.names for a in given):
        return  # CuPy holds none of these
    if xp is not np and any(a.dtype != x.dtype for a in given):
        return  # (converted by CuPy's astype first, whose float32 subnormals the GPU may flush: not cudadml's)
    _replay(xp, code)
    if x.ndim > 8 or (x.ndim == 8 and x.dtype.itemsize == 16):  # (what the fuzzer must reach)
        event(f"{x.ndim}-D {x.dtype}: more dimensions than the kernels take")
    try:
        want = getattr(np, name)(*arguments, **keywords)
    except Exception as e:  # NumPy refuses: so must cudadml.numpy, with NumPy's type
        if xp is not np:
            return  # (the host run checks the refusals; on the GPU, what runs)
        # (objects are refused first, with a TypeError that points to NumPy's function)
        with pytest.raises((TypeError, type(e)) if x.dtype.hasobject else type(e)):
            getattr(cnp, name)(*arguments, **keywords)
        event("both refused")
        return
    before = _bytes(buffer)
    try:
        got = getattr(cnp, name)(*_on(xp, arguments), **keywords)
    except REFUSALS as e:
        event(f"refused: {type(e).__name__}")
        # What NumPy takes, cudadml.numpy takes, at any rank (folded, or in passes), but objects.
        assert x.dtype.hasobject, f"NumPy takes it, cudadml.numpy refused: {type(e).__name__}: {e}"
        assert _bytes(buffer) == before
        return
    event("ran")
    got, want = (got, want) if isinstance(want, list) else ([got], [want])
    assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want]
    for g, w in zip(got, want):  # a new C-contiguous array of NumPy's bytes
        assert g.flags.c_contiguous and to_host(g).tobytes() == np.ascontiguousarray(w).tobytes()


@SHORT
@given(data=st.data())
def test_numpy_functions_match_numpys(xp, data):
    _numpy_fuzz(xp, data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_numpy_functions_match_numpys(xp, data):
    _numpy_fuzz(xp, data)

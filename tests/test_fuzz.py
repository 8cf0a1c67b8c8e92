"""A differential fuzzer. Hypothesis draws calls of the array functions (arrays of any rank
from 0 to 9 with empty axes; any dtype: byte-swapped, bool, records' fields, objects; any
layout: negative, zero and non-element strides, misaligned addresses; argument values of any
type and size; feature levels; ``out=`` right, read-only, of another dtype, aliasing the
input), descriptors with buffer bindings, and PyTorch calls (eager, autograd, ``out=``, vmap,
``torch.func``), and checks each against NumPy or torch: the same bytes, or a refusal of a
documented type (``ValueError``, ``TypeError``, ``IndexError``) before any byte of an input's
or output's buffer changed. Calls that DirectML's rules cannot refuse (a plain dtype moved as
raw bits, rank 1 to 8, a key in range) must succeed.

The default run gives each backend a few dozen calls; ``pytest -m fuzz`` runs thousands (CI
runs it, and so does the GPU machine)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
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


@st.composite
def arrays(draw, plain_only=False):
    """``(x, buffer, plain)``: a view of a buffer with a drawn layout; ``plain``: a dtype and
    rank that every call takes with ``directml_types=False``."""
    rank = draw(st.integers(0, 9))
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    dtype = draw(st.sampled_from(PLAIN if plain_only else PLAIN * 3 + ODD))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2])) for _ in shape]
    big = tuple(n * abs(s) for n, s in zip(shape, steps))
    x, buffer = _base(rng, big, dtype)
    x = x[(*(slice(None, None, s) for s in steps), Ellipsis)]  # a view even at rank 0
    if draw(st.booleans()) and x.ndim and x.shape[0] and dtype != "O":  # a zero stride: one row broadcast
        x = np.broadcast_to(x[:1], x.shape)
    # (16-byte elements move as pairs of words: one more dimension, so up to 7)
    plain = dtype in PLAIN and 1 <= rank <= (7 if np.dtype(dtype).itemsize == 16 else 8)
    return x, buffer, plain


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
    """``(what, run(xp), oracle, x, buffer, must_run)`` for one drawn call (``what``: its
    arguments, for the report of a failing case)."""
    x, buffer, plain = draw(arrays())
    name = draw(st.sampled_from(["strided_slice", "strided_slice_grad", "split", "join", "slice1", "slice1_batch"]))
    options = {"directml_types": draw(st.sampled_from([False, False, False, True]))}
    if draw(st.integers(0, 3)) == 0:  # an older feature level: fewer ranks and types
        options["feature_level"] = draw(st.sampled_from([str(level) for level in cd.FeatureLevel] + [None, "7_0"]))
    if name == "strided_slice":
        key = _key(draw, x.ndim)
        must = plain and options == {"directml_types": False} and _in_range(key, x)
        return (
            f"{name}: key={key}, {options}",
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

        return f"{name}: key={key}, {options}", run, oracle, x, buffer, False
    axis = draw(st.one_of(INTS, st.none()))
    if name == "split":
        sizes = draw(st.lists(st.integers(0, 3), max_size=4))

        def oracle():
            if axis is None or not x.ndim or not sizes or sum(sizes) != x.shape[axis]:
                raise ValueError  # SPLIT has an axis and sizes that add up to it
            return [np.ascontiguousarray(p) for p in np.split(x, np.cumsum(sizes)[:-1], axis)]

        return (
            name,
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
            f"{name}: {count} arrays, {axis=}, {options}",
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
            if o < 0 or z < 0 or s == 0 or max(abs(o), abs(z), abs(s)) > 2**31 - 1 or (z and o + z > n):
                raise ValueError
            if z == 0:  # an empty window: an empty result, wherever it starts
                key.append(slice(0, 0))
                continue
            key.append(slice(o, o + z, s) if s > 0 else slice(o + z - 1, o - 1 if o else None, s))
        return a[tuple(key)]

    def no_windows():  # the shared sizes and strides are checked; no offset is
        if not x.ndim or any(
            int(z) < 1 or int(s) == 0 or max(abs(int(z)), abs(int(s))) > 2**31 - 1 for z, s in zip(sizes, strides)
        ):
            raise ValueError
        return np.empty((0, *(1 + (int(z) - 1) // abs(int(s)) for z, s in zip(sizes, strides))), x.dtype)

    if name == "slice1":
        return (
            f"{name}: window_offsets={offsets}, window_sizes={sizes}, window_strides={strides}, {options}",
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
        f"{name}: window_offsets={[offsets] * rows}, window_sizes={sizes}, window_strides={strides}, {options}",
        lambda xp: cd.slice1_batch(
            _device(xp, x), window_offsets=[offsets] * rows, window_sizes=sizes, window_strides=strides, **options
        ),
        lambda: np.stack([window(x)] * rows) if rows else no_windows(),
        x,
        buffer,
        False,
    )


def _fuzz(xp, data):
    _, run, oracle, x, buffer, must = data.draw(calls())
    if xp is not np and (x.dtype.hasobject or not x.dtype.isnative or x.dtype.names or x.ndim > 8):
        return  # CuPy holds none of these
    _check(xp, lambda: run(xp), oracle, x, buffer, must)


@st.composite
def outs(draw):
    """A strided_slice into an ``out=`` that is right, read-only, of another dtype, a negative
    view inside a poisoned buffer, or the input itself."""
    x, buffer, plain = draw(arrays(plain_only=True))
    key = _key(draw, x.ndim, st.one_of(st.none(), SMALL), st.sampled_from([None, 1, 2, -1, -2]))
    return x, buffer, plain, key, draw(st.sampled_from(["view", "read-only", "dtype", "input"]))


def refuse():
    raise ValueError


def _fuzz_out(xp, data):
    x, buffer, plain, key, kind = data.draw(outs())
    if not _in_range(key, x):
        return
    try:
        want = x[key]
    except IndexError:
        return
    if want.ndim == 0:
        return
    outer = np.full((*want.shape[:-1], 2 * want.shape[-1] + 1), 0x5A, np.uint8).astype(want.dtype)
    out = outer[..., -2::-2] if want.shape[-1] else outer[..., :0]
    if kind == "read-only":
        out.flags.writeable = False
    elif kind == "dtype":
        outer = np.zeros(outer.shape, np.int8 if want.dtype.itemsize > 1 else np.int16)
        out = outer[..., -2::-2] if want.shape[-1] else outer[..., :0]
    elif kind == "input":
        out, outer = x, buffer
    if xp is not np:
        return
    _check(
        xp,
        lambda: cd.strided_slice(x, key, out=out, directml_types=False),
        # into the input itself: its own shape, and either the result or a refusal of the overlap
        lambda: want.copy() if kind == "view" or (kind == "input" and x.shape == want.shape) else refuse(),
        x,
        buffer,
        kind == "view" and plain,
        out=out,
        out_buffer=outer,
    )


SHORT = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LONG = settings(max_examples=8000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


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
    """``(what, arguments, keywords, x, buffer, plain)`` of a drawn ``cudadml.numpy`` call."""
    x, buffer, plain = draw(arrays())
    name = draw(st.sampled_from(NUMPY_FUNCTIONS))
    axis = draw(st.one_of(SMALL, st.none(), INTS))
    keywords = {}
    if name in ("concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"):
        other = draw(st.sampled_from(["same", "int8", "float64", ">i4"]))  # NumPy promotes the dtypes
        if other == "same" or x.dtype.hasobject or x.dtype.kind == "c":  # (complex to real would warn)
            y = x
        else:
            y = x.astype(other)
        arguments = ([x, y] * draw(st.integers(1, 2)),)
        if name in ("concatenate", "stack"):
            keywords["axis"] = axis
    elif name in ("split", "array_split", "hsplit", "vsplit", "dsplit"):
        # (no huge counts: NumPy's array_split would make that many arrays)
        sections = draw(st.one_of(st.integers(-1, 4), st.lists(st.one_of(st.integers(-2, 6), INTS), max_size=4)))
        arguments = (x, sections, axis) if name in ("split", "array_split") else (x, sections)
    elif name == "flip":
        arguments = (x, axis)
    elif name == "roll":
        shift = draw(st.one_of(INTS, st.lists(SMALL, min_size=1, max_size=2)))
        axes = axis if not isinstance(shift, list) else tuple(draw(SMALL) for _ in shift)
        arguments = (x, shift, axes)
    elif name == "pad":
        width = draw(st.one_of(st.integers(0, 3), st.tuples(st.integers(0, 2), st.integers(0, 2))))
        keywords["constant_values"] = draw(st.sampled_from([0, 1, 7]))
        arguments = (x, width)
    else:
        arguments = (x,)
    return f"{name}{arguments[1:]} {keywords}", name, arguments, keywords, x, buffer, plain


def _numpy_fuzz(xp, data):
    import cudadml.numpy as cnp

    what, name, arguments, keywords, x, buffer, plain = data.draw(numpy_calls())
    if xp is not np:
        return  # (the GPU runs CuPy's own tests of these functions: tests/cupy_suite)
    try:
        want = getattr(np, name)(*arguments, **keywords)
    except Exception as e:  # NumPy refuses: so must cudadml.numpy, with NumPy's type
        # (objects are refused first, with a TypeError that points to NumPy's function)
        with pytest.raises((TypeError, type(e)) if x.dtype.hasobject else type(e)):
            getattr(cnp, name)(*arguments, **keywords)
        event("both refused")
        return
    before = _bytes(buffer)
    try:
        got = getattr(cnp, name)(*arguments, **keywords)
    except REFUSALS as e:
        event(f"refused: {type(e).__name__}")
        assert not (plain and x.ndim <= 8), f"{what}: NumPy takes it, cudadml.numpy refused: {e}"
        assert _bytes(buffer) == before
        return
    event("ran")
    got, want = (got, want) if isinstance(want, list) else ([got], [want])
    assert [(g.shape, g.dtype) for g in got] == [(w.shape, w.dtype) for w in want], what
    for g, w in zip(got, want):  # a new C-contiguous array of NumPy's bytes
        assert g.flags.c_contiguous and g.tobytes() == np.ascontiguousarray(w).tobytes(), what


@SHORT
@given(data=st.data())
def test_numpy_functions_match_numpys(xp, data):
    _numpy_fuzz(xp, data)


@pytest.mark.fuzz
@LONG
@given(data=st.data())
def test_many_numpy_functions_match_numpys(xp, data):
    _numpy_fuzz(xp, data)

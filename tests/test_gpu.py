"""What only the GPU path has: every kernel specialisation's shape of work, 64-bit indexing,
streams, CUDA graph capture, zero-copy interchange and device checks. Skipped without a GPU."""

import re
import threading
import types

import cases
import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import kernels
from cudadml.examples import EXAMPLES
from cudadml.testing import POISON, TensorBuffer, random_array, to_host

pytestmark = pytest.mark.gpu

WIDTHS = [np.uint8, np.float16, np.float32, np.int64]


@pytest.fixture
def cp():
    import cupy

    return cupy


def _zero_stride(a):
    """``a`` with its entries along axis 0 all its first: the values an axis of zero stride holds."""
    return np.broadcast_to(a[:1], a.shape) if a.ndim > 1 else a


def _on_device(cp, layout):
    """``a`` as a CuPy array: contiguous, or (``"zero stride"``) with a zero stride on axis 0."""

    def move(a):
        if layout == "zero stride" and a.ndim > 1:
            return cp.broadcast_to(cp.asarray(np.ascontiguousarray(a[:1])), a.shape)
        return cp.asarray(np.ascontiguousarray(a))

    return move


def _run_into_poison(op, sample, expected, cp):
    """``sample`` run with ``out=`` arrays of poison (of the ``expected`` results' shapes) where
    the function takes them: its results."""
    out = op.out(sample, [cases.poisoned(e.shape, e.dtype, cp) for e in expected])
    return cases.listed(sample.call(op.function, **({} if out is None else {"out": out})))


@pytest.mark.parametrize("dtype", WIDTHS)
@pytest.mark.parametrize("rank", range(1, 9))
@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_every_rank_and_width(cp, rng, op, rank, dtype):
    """Each function's call of ``rank`` dimensions (none of size 1, so coalescing keeps the
    rank; read backwards on every other one), on contiguous inputs and on inputs with a zero
    stride on axis 0, into poisoned outputs."""
    sample = op.rank_sample(op.maker(dtype, rng), rank)
    for layout in ("zero stride", "contiguous"):
        host = sample.map(_zero_stride) if layout == "zero stride" else sample
        expected = cases.expected(op, host)
        got = _run_into_poison(op, host.map(_on_device(cp, layout)), expected, cp)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and to_host(g).tobytes() == np.ascontiguousarray(e).tobytes(), layout


def _random_int8(cp):
    """``make(shape)``: random int8 bytes made on the device, a row at a time to bound the temporaries."""

    def make(shape):
        a = cp.empty(shape, np.int8)
        for row in a.reshape(-1, shape[-1]):
            row[...] = cp.random.randint(-128, 128, row.size, dtype=np.int32).astype(np.int8)
        return a

    return make


@pytest.mark.slow
@pytest.mark.parametrize("op", cases.params(op for op in cases.OPS if op.huge_sample))
def test_64_bit_indexing(cp, monkeypatch, op):
    """3 GiB int8 tensors: byte offsets pass 2^31, so the plan takes the 64-bit kernels; the
    results (into poisoned outputs) are the oracle's, compared on the device."""
    sample = op.huge_sample(_random_int8(cp))
    expected = cases.expected(op, sample)  # CuPy arrays: the oracle runs on the device
    names, prepare = [], kernels.prepare

    def spy(plan):
        launches = prepare(plan)
        names.extend(launch.name for launch in launches)
        return launches

    monkeypatch.setattr(kernels, "prepare", spy)
    got = _run_into_poison(op, sample, expected, cp)
    monkeypatch.undo()
    assert names and all("long long" in name for name in names), names
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and bool((g == e).all())


@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_streams(cp, rng, op):
    """Each function runs on the stream it is given, and on the current stream when none is."""
    sample = next(s for s in op.samples(op.maker(np.float32, rng)) if all(e.size for e in cases.expected(op, s)))
    expected = cases.expected(op, sample)
    given = sample.map(cp.asarray)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        outs = [cases.poisoned(e.shape, e.dtype, cp) for e in expected]
    out = op.out(sample, outs)
    got = cases.listed(given.call(op.function, stream=stream, **({} if out is None else {"out": out})))
    stream.synchronize()
    assert all(to_host(g).tobytes() == np.ascontiguousarray(e).tobytes() for g, e in zip(got, expected))
    with stream:  # the current stream is used when none is given
        got = cases.listed(given.call(op.function))
    stream.synchronize()
    assert all(to_host(g).tobytes() == np.ascontiguousarray(e).tobytes() for g, e in zip(got, expected))


def test_a_thread_that_made_no_cuda_call_can_launch(cp, rng):
    """A worker thread (Dask's, a thread pool's) may repeat a call, with arrays made elsewhere,
    before anything in it made the CUDA context current: the launch makes it current itself."""
    x = cp.asarray(random_array((64, 48), np.float32, rng))
    out = cp.empty((21, 45), np.float32)
    key = np.s_[3::3, 1:46]
    cd.strided_slice(x, key, out=out)  # compiled and cached here: the thread only launches
    out.fill(0)
    seen = []

    def work():
        try:
            seen.append(cp.cuda.driver.ctxGetCurrent())  # 0: no context current yet
            cd.strided_slice(x, key, out=out)
            cp.cuda.get_current_stream().synchronize()
        except Exception as e:  # reported to the main thread
            seen.append(e)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == [0]
    assert to_host(out).tobytes() == np.ascontiguousarray(to_host(x)[key]).tobytes()


def test_loaded_launches_take_the_compiled_launcher(cp, rng, monkeypatch):
    """Where the install built ``cudadml.backends._launch``, a loaded kernel launches from C, a few
    addresses or 128 (a join of 64), without the Python route (which asks CuPy's runtime for
    the device first)."""
    if kernels._native is None:
        pytest.skip("cudadml.backends._launch is not built here (test_backends says whether it should be)")
    x = cp.asarray(random_array((64, 48), np.float32, rng))
    parts = [cp.asarray(random_array((3, 48), np.float32, rng)) for _ in range(64)]
    key = np.s_[3::3, 1:46]
    out, joined = cp.full((21, 45), np.nan, np.float32), cp.full((192, 48), np.nan, np.float32)
    cd.strided_slice(x, key, out=out)  # compiled and loaded here
    cd.join(parts, out=joined)
    out.fill(0)
    joined.fill(0)

    class NoRuntime:
        def __getattr__(self, name):
            raise AssertionError(f"the Python route ran (_runtime.{name})")

    monkeypatch.setattr(kernels, "_runtime", NoRuntime())
    cd.strided_slice(x, key, out=out)
    cd.join(parts, out=joined)
    monkeypatch.undo()
    assert to_host(out).tobytes() == np.ascontiguousarray(to_host(x)[key]).tobytes()
    assert to_host(joined).tobytes() == np.concatenate([to_host(p) for p in parts]).tobytes()


@pytest.mark.parametrize(
    ("status", "raises"), [(1, "CUDA_ERROR_INVALID_VALUE"), ("NO_FUNCTION", None), ("NO_CONTEXT", None)]
)
def test_what_the_compiled_launcher_returns_decides_the_route(cp, rng, monkeypatch, status, raises):
    """A status of the driver's (1: the launch was refused) raises CuPy's ``CUDADriverError``
    and nothing is launched; no kernel for the device or no current context send the call
    through the Python route, which launches it. (Statuses faked: a real refusal is a CUDA API
    error, which compute-sanitizer would count.)"""
    if kernels._native is None:
        pytest.skip("cudadml.backends._launch is not built here")
    status = getattr(kernels._native, status) if isinstance(status, str) else status
    x = cp.asarray(random_array((8, 8), np.float32, rng))
    out = cp.asarray(random_array((4, 8), np.float32, rng))
    cd.strided_slice(x, np.s_[::2], out=out)  # compiled and loaded
    before = to_host(out).tobytes()
    calls = []

    def launch(*args):
        calls.append(args)
        return status

    monkeypatch.setattr(kernels, "_native", types.SimpleNamespace(launch=launch, fill=kernels._native.fill))
    if raises:
        with pytest.raises(cp.cuda.driver.CUDADriverError, match=raises):
            cd.strided_slice(x, np.s_[::2], out=out)
        assert to_host(out).tobytes() == before
    else:
        out.fill(0)
        cd.strided_slice(x, np.s_[::2], out=out)
        assert to_host(out).tobytes() == np.ascontiguousarray(to_host(x)[::2]).tobytes()
    assert len(calls) == 1


def test_execute_captures_in_a_cuda_graph_and_replays_with_new_data(cp, rng):
    """execute() allocates, copies and synchronises nothing: it can be captured and replayed."""
    t = cd.TensorDataType.FLOAT16
    desc = cd.SplitOperatorDesc(
        cd.BufferTensorDesc(t, (6, 40)), [cd.BufferTensorDesc(t, (6, 40 - 7)), cd.BufferTensorDesc(t, (6, 7))], 1
    )
    grad = cd.SliceGradOperatorDesc(
        cd.BufferTensorDesc(t, (3, 7)), cd.BufferTensorDesc(t, (6, 40)), [0, 3], [6, 35], [-2, 5]
    )
    compiled, compiled_grad = desc.compile(), grad.compile()
    x = cp.empty((6, 40), np.float16)
    a, b = cp.empty((6, 33), np.float16), cp.empty((6, 7), np.float16)
    dy, g = cp.empty(22, np.float16), cp.empty((6, 40), np.float16)  # 22: 21 elements rounded up to 4 bytes
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        compiled.execute([x], [a, b])
        compiled_grad.execute([dy], [g])
        graph = stream.end_capture()
    for _ in range(3):
        host = random_array((6, 40), np.float16, rng)
        host_dy = random_array((22,), np.float16, rng)
        x.set(host)
        dy.set(host_dy)
        graph.launch(stream)
        stream.synchronize()
        assert to_host(a).tobytes() == np.ascontiguousarray(host[:, :33]).tobytes()
        assert to_host(b).tobytes() == np.ascontiguousarray(host[:, 33:]).tobytes()
        expected = np.zeros((6, 40), np.float16)
        expected[5::-2, 3:38:5] = host_dy[:21].reshape(3, 7)
        assert to_host(g).tobytes() == expected.tobytes()


def test_cuda_array_interface_and_dlpack_without_copies(cp, rng):
    """Other libraries' CUDA arrays (here torch tensors behind each protocol alone) run as CuPy
    views; torch tensors themselves go through the torch adapter (test_torch.py)."""
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(random_array((16, 24), np.float32, rng)).cuda()
    torch.cuda.synchronize()

    class OnlyInterface:
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    class OnlyDLPack:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    y = cd.strided_slice(OnlyInterface(x), (slice(None, None, -3), slice(2, None)))
    assert isinstance(y, cp.ndarray)
    assert to_host(y).tobytes() == np.ascontiguousarray(x.cpu().numpy()[::-3, 2:]).tobytes()
    out = torch.empty((6, 22), dtype=torch.float32, device="cuda")
    cd.strided_slice(OnlyInterface(x), (slice(None, None, -3), slice(2, None)), out=OnlyInterface(out))
    cp.cuda.get_current_stream().synchronize()
    assert out.cpu().numpy().tobytes() == to_host(y).tobytes()  # written in place: no copy
    z = cd.split(OnlyDLPack(x), parts=2, axis=1)
    assert to_host(z[1]).tobytes() == np.ascontiguousarray(x.cpu().numpy()[:, 12:]).tobytes()


def test_binding_on_another_device_is_rejected(cp, rng):
    if cp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    desc = EXAMPLES[0].desc
    compiled = desc.compile(device=0)
    with cp.cuda.Device(1):
        x = TensorBuffer(desc.input_tensor, cp)
    out = TensorBuffer(desc.output_tensor, cp)
    with pytest.raises(cd.BindingError, match="is on device 1; the operator was compiled for device 0"):
        compiled.execute([x.binding], [out.binding])
    assert out.untouched_outside() and not (to_host(out.raw) != POISON).any()


def _bare_buffers(cp, rng, case):
    """A 4x4 -> 2x2 f32 slice bound to bare CuPy arrays, with one rule broken by ``case``."""
    x = cp.asarray(random_array((16,), np.float32, rng))
    out = cp.full(8, np.float32(POISON), np.float32)
    watched = [x, out]
    if case == "small output":
        out = out[:3]
    elif case == "non-contiguous input":
        x = cp.asarray(random_array((32,), np.float32, rng))[::2]
    elif case == "unaligned output":
        out = out[1:5]
    elif case == "output inside input":
        out = x[4:8]
    return x, out, watched


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("small output", "outputs[0]: the bound range of 12 bytes is smaller than TotalTensorSizeInBytes = 16"),
        ("non-contiguous input", "inputs[0]: the buffer must be a C-contiguous array"),
        ("unaligned output", "outputs[0]: the bound address is 4 bytes past a multiple of 16"),
        ("output inside input", "outputs[0] overlaps inputs[0] in memory"),
        ("valid", None),
    ],
)
def test_bare_cupy_buffers_are_checked_like_buffer_bindings(cp, rng, case, message):
    """``execute`` given bare CuPy arrays (its quickest route) keeps every buffer rule."""
    f32 = cd.TensorDataType.FLOAT32
    desc = cd.SliceOperatorDesc(
        cd.BufferTensorDesc(f32, [1, 1, 4, 4]),
        cd.BufferTensorDesc(f32, [1, 1, 2, 2]),
        [0, 0, 1, 2],
        [1, 1, 2, 2],
        [1, 1, 1, 1],
    )
    compiled = desc.compile()
    x, out, watched = _bare_buffers(cp, rng, case)
    before = [to_host(a).tobytes() for a in watched]
    if message is None:
        compiled.execute([x], [out])
        assert to_host(out[:4]).tobytes() == to_host(x).reshape(4, 4)[1:3, 2:4].tobytes()
        assert to_host(out[4:]).tobytes() == before[1][16:]
        return
    with pytest.raises(cd.BindingError, match=re.escape(message)):
        compiled.execute([x], [out])
    cp.cuda.Device().synchronize()
    assert [to_host(a).tobytes() for a in watched] == before


def test_kernels_write_only_output_elements_of_padded_views(cp, rng):
    """Rows at every alignment: output rows that start at each byte offset of a 16-byte chunk."""
    for dtype in WIDTHS:
        size = np.dtype(dtype).itemsize
        x = cp.asarray(random_array((9, 320), dtype, rng))
        for shift in range(0, 16 // size):
            buffer = cp.empty((9, 320), dtype)
            buffer.view(np.uint8)[...] = POISON
            out = buffer[:, shift : shift + 290]
            cd.strided_slice(x, (slice(None), slice(shift + 3, shift + 293)), out=out)
            host = to_host(buffer)
            assert (
                host[:, shift : shift + 290].tobytes()
                == np.ascontiguousarray(to_host(x)[:, shift + 3 : shift + 293]).tobytes()
            )
            mask = np.ones(host.shape, bool)
            mask[:, shift : shift + 290] = False
            assert np.all(host[mask].view(np.uint8) == POISON)


def test_kernel_names_say_their_specialisation(cp):
    t = cd.TensorDataType.FLOAT32
    desc = cd.SplitOperatorDesc(cd.BufferTensorDesc(t, (4, 64, 32)), [cd.BufferTensorDesc(t, (4, 32, 32))] * 2, 1)
    (launch,) = kernels.prepare(desc.to_plan())
    assert launch.name == "gather_flat<4, int, 2, 4>"

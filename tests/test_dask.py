"""Dask arrays in, lazy Dask arrays out: every array function against NumPy (``x[key]``,
``np.split``, ``np.concatenate``, the gradient by assignment), bit for bit, on Dask's
threaded scheduler and on a ``distributed.LocalCluster`` of worker processes; the graph
(laziness, each task's dependencies, aliased split/join chunks, zero chunks that read
nothing), validation at call time with the messages of a NumPy call, and refusals."""

import math
import re
import subprocess
import sys
import time

import cases
import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.core import get_dependencies  # noqa: E402

import cudadml as cd  # noqa: E402
from cudadml.testing import random_array  # noqa: E402

IRREGULAR = ((3, 5, 1, 7), (4, 4, 2))  # a (16, 10) array
ONES = ((1,) * 6, (1,) * 5)  # a (6, 5) array in size-1 chunks
DASK = [op for op in cases.OPS if op.dask]


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None, silence_logs=40
        ) as local,
        distributed.Client(local) as client,
    ):
        yield client


def _computing(request, scheduler):
    """``compute(*arrays)``: their values, on the threaded scheduler or the cluster."""
    if scheduler == "threads":
        return lambda *arrays: dask.compute(*arrays, scheduler="threads")
    client = request.getfixturevalue("cluster")
    return lambda *arrays: dask.compute(*arrays, scheduler=client)


@pytest.fixture(params=["threads", "cluster"])
def compute(request):
    return _computing(request, request.param)


def same(a, b):
    """Bit-for-bit equal, NaN payloads included."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == b.tobytes()


def copy_start(offsets, sizes, strides):
    return [o if s > 0 else o + n - 1 for o, n, s in zip(offsets, sizes, strides)]


# ---- every function's samples (cases.OPS) against NumPy, on both schedulers -----------------------


def _random_chunks(n, rng):
    cuts = np.unique(rng.integers(1, n, size=rng.integers(0, 4))) if n > 1 else []
    return tuple(np.diff(np.concatenate([[0], cuts, [n]])).tolist())


def chunked(shape, chunking, rng):
    """Chunks for an array of ``shape``: one chunk, chunks of 2, random cuts, or a size-0 chunk
    on the last axis between two others."""
    if chunking == "one":
        return tuple((n,) for n in shape)
    if chunking == "even":
        return tuple((2,) * (n // 2) + ((n % 2,) if n % 2 else ()) or (0,) for n in shape)
    if chunking == "empty-chunk" and shape and shape[-1] > 1:
        return (*((n,) for n in shape[:-1]), (1, 0, shape[-1] - 1))
    return tuple(_random_chunks(n, rng) for n in shape)


def _shapes_only(shape):
    return np.empty(shape, np.float32)


#: Each chunking with a dtype of its own (16-byte elements move as pairs of words), on the
#: threaded scheduler; the cluster's worker processes take the irregular chunks.
CHUNKINGS = [("irregular", np.float32), ("one", np.int16), ("even", np.uint8), ("empty-chunk", np.complex128)]
RUNS = [
    *(pytest.param("threads", chunking, dtype, id=f"threads-{chunking}") for chunking, dtype in CHUNKINGS),
    pytest.param("cluster", "irregular", np.float32, id="cluster-irregular"),
]


@pytest.mark.parametrize(("scheduler", "chunking", "dtype"), RUNS)
@pytest.mark.parametrize("op", cases.params(DASK))
def test_samples_match_numpy(request, rng, op, scheduler, chunking, dtype):
    compute = _computing(request, scheduler)
    make = op.maker(dtype, rng)
    typed = {"directml_types": not cases.moves_raw_bits(dtype)}
    lazy, expected = [], []
    for sample in [*op.samples(make), op.random_sample(make, rng)]:
        given = sample.map(lambda a: da.from_array(a, chunks=chunked(a.shape, chunking, rng)))
        results = cases.listed(given.call(op.function, **typed))
        assert all(isinstance(r, da.Array) for r in results), sample
        lazy += results
        expected += cases.expected(op, sample)
    for got, want in zip(compute(*lazy), expected):
        assert same(got, want)


@pytest.mark.parametrize("op", cases.params(DASK))
def test_random_calls_and_chunkings_match_numpy(rng, op):
    make = op.maker(np.uint16, rng)
    for _ in range(30):
        sample = op.random_sample(make, rng)
        given = sample.map(lambda a: da.from_array(a, chunks=chunked(a.shape, "irregular", rng)))
        got = dask.compute(*cases.listed(given.call(op.function)), scheduler="sync")
        assert all(same(g, e) for g, e in zip(got, cases.expected(op, sample))), (sample, given.args, sample.kwargs)


@pytest.mark.parametrize("op", cases.params(DASK))
def test_chunks_given_are_the_results(op, rng):
    """``chunks=`` chunks every result as ``dask.array`` would (for many windows: windows per
    chunk); the values stay NumPy's."""
    sample = next(iter(op.samples(op.maker(np.float32, rng))))
    results = cases.listed(sample.map(lambda a: da.from_array(a, chunks=3)).call(op.function, chunks=2))
    expected = cases.expected(op, sample)
    for result, e in zip(results, expected):
        wanted = da.zeros(e.shape, chunks=(2, *e.shape[1:]) if op.windows else 2).chunks
        assert result.chunks == wanted, sample
    assert all(same(g, e) for g, e in zip(dask.compute(*results, scheduler="sync"), expected))


def test_size_one_chunks_and_user_chunks(compute, rng):
    x = random_array((6, 5), np.uint8, rng)
    dx = da.from_array(x, chunks=ONES)
    key = np.s_[::-2, 4:0:-1]
    y = cd.strided_slice(dx, key, chunks=(2, 3))
    assert y.chunks == ((2, 1), (3, 1))
    g = cd.strided_slice_grad(y, x.shape, key, chunks=((6,), (2, 3)))
    assert g.chunks == ((6,), (2, 3))
    parts = cd.split(dx, split_sizes=[2, 4], axis=0, chunks=[(2, 5), -1])
    assert [p.chunks for p in parts] == [((2,), (5,)), ((4,), (5,))]
    j = cd.join(parts, 0, chunks=(4, 2))
    assert j.chunks == ((4, 2), (2, 2, 1))
    expected_g = np.zeros_like(x)
    expected_g[key] = x[key]
    for got, want in zip(compute(y, g, *parts, j), [x[key], expected_g, x[:2], x[2:], x]):
        assert same(got, want)


# ---- laziness and the graph ---------------------------------------------------------------------


def _never(block):
    raise AssertionError("an input chunk was computed")


def _untouchable(shape, chunks, dtype=np.float32):
    """A Dask array whose chunks raise if anything computes them."""
    return da.zeros(shape, dtype=dtype, chunks=chunks).map_blocks(_never, meta=np.empty((0,) * len(shape), dtype))


@pytest.mark.parametrize("op", cases.params(DASK))
def test_nothing_computes_until_compute(op):
    """Every sample on arrays whose chunks raise if computed: one task (or alias) per output
    chunk, and nothing computed until the result is."""
    computed = 0
    for sample in op.samples(_shapes_only):
        given = sample.map(lambda a: _untouchable(a.shape, 2, a.dtype))
        results = cases.listed(given.call(op.function))
        for result in results:
            layer = result.dask.layers[result.name]
            assert len(layer) == math.prod(map(len, result.chunks)), sample
        if all(a.size for a in [*sample.arrays(), *cases.expected(op, sample)]):
            with pytest.raises(AssertionError, match="an input chunk was computed"):
                dask.compute(*results, scheduler="sync")
            computed += 1
    assert computed


def _chunk_of(bounds, i):
    return int(np.searchsorted(bounds, i, side="right") - 1)


def _deps(array, key):
    graph = dict(array.__dask_graph__())
    return {k for k in get_dependencies(graph, key)}


def _numbered(inputs):
    """The elements of Dask arrays ``inputs`` numbered from 1, input after input, as NumPy
    arrays; and ``key(number)``: the key of the chunk holding element ``number``."""
    starts = np.cumsum([1, *(math.prod(x.shape) for x in inputs)])
    numbered = [np.arange(s, s + math.prod(x.shape)).reshape(x.shape) for s, x in zip(starts, inputs)]

    def key(number):
        k = int(np.searchsorted(starts, number, side="right")) - 1
        at = np.unravel_index(number - starts[k], inputs[k].shape)
        bounds = [np.cumsum((0, *c)) for c in inputs[k].chunks]
        return (inputs[k].name, *(_chunk_of(b, i) for b, i in zip(bounds, at)))

    return numbered, key


@pytest.mark.parametrize("op", cases.params(op for op in DASK if not op.windows))
def test_each_output_chunk_reads_only_the_input_chunks_it_needs(rng, op):
    """The oracle, run on the inputs' elements numbered from 1, says which element each result
    element reads (0: none): each result chunk's task depends on exactly their chunks."""
    for sample in op.samples(_shapes_only):
        inputs = [
            da.zeros(a.shape, dtype=np.float32, chunks=chunked(a.shape, "irregular", rng)) for a in sample.arrays()
        ]
        numbered, key = _numbered(inputs)
        results = cases.listed(sample.with_arrays(inputs).call(op.function))
        for y, source in zip(results, cases.expected(op, sample.with_arrays(numbered))):
            graph = dict(y.__dask_graph__())
            bounds = [np.cumsum((0, *c)) for c in y.chunks]
            for index in np.ndindex(*y.numblocks):
                block = source[tuple(slice(b[i], b[i + 1]) for b, i in zip(bounds, index))]
                needed = {key(n) for n in np.unique(block) if n}
                assert set(get_dependencies(graph, (y.name, *index))) == needed, (sample, index)


def test_gradient_chunks_the_window_misses_are_zeros_that_read_nothing():
    dy = da.zeros((3, 4), dtype=np.int32, chunks=((2, 1), (3, 1)))
    offsets, sizes, strides = [20, 5], [7, 8], [3, -2]
    g = cd.slice_grad(dy, (40, 30), window_offsets=offsets, window_sizes=sizes, window_strides=strides, chunks=(8, 6))
    positions = [s + st * np.arange(n) for s, st, n in zip(copy_start(offsets, sizes, strides), strides, dy.shape)]
    dy_bounds = [np.cumsum((0, *c)) for c in dy.chunks]
    untouched = 0
    for index in np.ndindex(*g.numblocks):
        needed = set()
        for k0, p0 in enumerate(positions[0]):
            for k1, p1 in enumerate(positions[1]):
                if p0 // 8 == index[0] and p1 // 6 == index[1]:
                    needed.add((dy.name, _chunk_of(dy_bounds[0], k0), _chunk_of(dy_bounds[1], k1)))
        assert _deps(g, (g.name, *index)) == needed
        untouched += not needed
    assert untouched == g.npartitions - 4
    expected = np.zeros((40, 30), np.int32)
    values = np.arange(12, dtype=np.int32).reshape(3, 4)
    expected[np.ix_(*positions)] = values
    assert same(
        cd.slice_grad(
            da.from_array(values, chunks=dy.chunks),
            (40, 30),
            window_offsets=offsets,
            window_sizes=sizes,
            window_strides=strides,
        ).compute(),
        expected,
    )


def test_aligned_split_and_join_alias_whole_chunks():
    x = da.zeros((16, 10), dtype=np.float32, chunks=IRREGULAR)
    parts = cd.split(x, split_sizes=[8, 1, 7], axis=0)  # part boundaries on chunk boundaries
    assert [p.chunks[0] for p in parts] == [(3, 5), (1,), (7,)]
    keys = [key for p in parts for key in p.dask.layers[p.name].values()]
    assert keys == [(x.name, i, j) for i in range(4) for j in range(3)]  # aliases, no task
    assert all(set(p.dask.layers) == {p.name, x.name} for p in parts)  # no rechunk layer
    joined = cd.join(parts, 0)
    assert joined.chunks == x.chunks
    assert all(type(v) is tuple and v[0] in {p.name for p in parts} for v in joined.dask.layers[joined.name].values())
    unaligned = cd.split(x, split_sizes=[4, 12], axis=0)
    assert unaligned[0].chunks[0] == (3, 1) and unaligned[1].chunks[0] == (4, 1, 7)
    assert unaligned[0].dask.layers[unaligned[0].name][(unaligned[0].name, 0, 0)] == (x.name, 0, 0)


def test_a_join_of_10_000_parts_finds_each_chunks_parts_by_bisection():
    x = da.from_array(np.arange(10_000.0), chunks=7)
    parts = cd.split(x, parts=10_000, axis=0)
    started = time.perf_counter()
    joined = cd.join(parts, 0)
    assert time.perf_counter() - started < 3  # 18 s when each chunk scanned every part
    assert joined.chunks == ((1,) * 10_000,)


# ---- validation at call time, with NumPy's messages ------------------------------------------------


class _Arrays:
    """The array constructors the error inputs call, making Dask arrays (as ``xp``)."""

    @staticmethod
    def zeros(shape, dtype=float):
        return da.zeros(shape, dtype=dtype)

    @staticmethod
    def ones(shape, dtype=float):
        return da.ones(shape, dtype=dtype)

    arange = staticmethod(da.arange)
    asarray = staticmethod(da.asarray)
    broadcast_to = staticmethod(da.broadcast_to)


INVALID = [pytest.param(op, e, id=f"{op.name}-{e.name}") for op in DASK for e in op.error_inputs if e.dask]


@pytest.mark.parametrize("op, case", INVALID)
def test_invalid_calls_raise_at_call_time_with_numpys_message(op, case):
    """Every error input of the table, on Dask arrays whose chunks raise if computed: the
    exception and message of the NumPy call, raised by the call."""
    x = _untouchable((4, 4), 2)
    with pytest.raises(case.error, match=f"^{re.escape(case.message)}$"):
        case.call(_Arrays, x)


def test_a_whole_array_past_one_buffer_is_validated_but_its_chunks_must_fit_one():
    big = da.zeros((2**20, 2**13), dtype=np.float32, chunks=(2**14, 2**13))  # 2^33 elements, lazily
    assert cd.strided_slice(big, np.s_[::-2]).shape == (2**19, 2**13)
    assert len(cd.split(big, parts=64)) == 64
    with pytest.raises(cd.DescriptorError, match="buffer tensor may span"):  # NumPy: one buffer (SLICE1's)
        x = np.broadcast_to(np.float32(0), (2**20, 2**13))
        cd.slice1(x, window_offsets=[0, 0], window_sizes=x.shape, window_strides=[-2, 1])
    with pytest.raises(cd.DescriptorError, match=r"a chunk of shape \(524288, 8192\) holds 4294967296 elements"):
        cd.strided_slice(big, np.s_[::-2], chunks=-1)


# ---- refusals and corner cases ---------------------------------------------------------------------


def test_refusals():
    x = da.zeros((4, 4), dtype=np.float32, chunks=2)
    with pytest.raises(TypeError, match="out= cannot be used with Dask arrays: a Dask array is immutable"):
        cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2], out=np.empty((2, 2), np.float32))
    with pytest.raises(TypeError, match="out= cannot be used with Dask arrays"):
        cd.slice1(
            np.zeros((4, 4), np.float32),
            window_offsets=[0, 0],
            window_sizes=[2, 2],
            out=da.zeros((2, 2), dtype=np.float32),
        )
    with pytest.raises(TypeError, match="stream= does not apply to Dask arrays"):
        cd.split(x, parts=2, stream=object())
    with pytest.raises(TypeError, match=r"join: xs\[1\] is a ndarray; a call with Dask arrays takes only Dask"):
        cd.join([x, np.zeros((4, 4), np.float32)])
    with pytest.raises(TypeError, match=r"join: xs\[0\] is a ndarray"):
        cd.join([np.zeros((4, 4), np.float32), x])
    with pytest.raises(TypeError, match="chunks= is for Dask arrays; this call has none"):
        cd.slice1(np.zeros((4, 4), np.float32), window_offsets=[0, 0], window_sizes=[2, 2], chunks=2)
    masked = da.from_array(np.ma.masked_array(np.zeros(4, np.float32)), chunks=2)
    with pytest.raises(TypeError, match="has chunks of type MaskedArray; Dask arrays of NumPy or CuPy chunks"):
        cd.strided_slice(masked, np.s_[::2])
    unknown = x[x > 0]
    with pytest.raises(ValueError, match=r"x has unknown chunk sizes \(NaN\); call x.compute_chunk_sizes\(\) first"):
        cd.strided_slice(unknown, np.s_[::2])
    with pytest.raises(ValueError, match="3 chunks= values for 2 parts"):
        cd.split(x, parts=2, chunks=[1, 1, 1])
    with pytest.raises(TypeError, match=r"^slice1_batch_grad: does not take Dask arrays \(slice1_batch does\)$"):
        cd.slice1_batch_grad(
            da.from_array(np.ones((1, 2, 2, 2))), (3, 3, 3), window_offsets=[[0, 0, 0]], window_sizes=(2, 2, 2)
        )


def test_each_operator_chunks_as_its_module_declares():
    """The Dask adapter holds no operator of its own: it builds the graph each one declares
    (``chunked``), with the operator's own operation on one piece."""
    from cudadml.core.operators import REGISTRY, Chunking
    from cudadml.interop import dask as adapter

    assert {name for name, op in REGISTRY.items() if op.chunked is None} == {op.name for op in cases.OPS if not op.dask}
    for op in REGISTRY.values():
        if op.chunked is not None:
            assert type(op.chunked) is Chunking and op.chunked.kind in adapter._BUILDERS, op.name
            assert getattr(op.chunked.piece, "__module__", op.call.__module__) == op.call.__module__, op.name


@pytest.mark.parametrize("added", [(0, 1, 0), (0, 0, 1), (1, 0)])
@pytest.mark.parametrize(
    ("key", "dy_shape"),
    [(np.s_[..., None], (16, 10, 1)), (np.s_[:, None, ::-3], (16, 1, 4)), (np.s_[None, 3, None, 1:], (1, 1, 9))],
)
def test_a_gradient_reads_an_added_axis_from_the_chunk_that_holds_it(key, dy_shape, added):
    """An axis the key adds (``None``) holds one element; size-0 chunks along it before that
    one are not where it is (they were read, and the gradient came out wrong)."""
    dy = np.arange(1, 1 + math.prod(dy_shape), dtype=np.float32).reshape(dy_shape)
    expected = np.zeros((16, 10), np.float32)
    expected[key] = dy
    for axis in [d for d, n in enumerate(dy_shape) if n == 1]:
        chunks = [(n,) for n in dy_shape]
        chunks[axis] = added
        g = cd.strided_slice_grad(da.from_array(dy, chunks=tuple(chunks)), (16, 10), key)
        assert same(g.compute(scheduler="sync"), expected), chunks


@pytest.mark.parametrize("samples", [(0, 3, 3), (3, 0, 3), (2, 4, 0), (0, 6, 0)])
def test_per_sample_windows_skip_an_empty_chunk_of_samples(rng, samples):
    """A size-0 chunk of ``x`` along its sample axis holds no window: no task, no chunk (it
    raised NumPy's "zero-size array to reduction operation minimum")."""
    x = random_array((6, 5, 4), np.float32, rng)
    offsets = np.c_[rng.integers(0, 4, 6), rng.integers(0, 3, 6)]
    windows = {"window_offsets": offsets, "window_sizes": [2, 2], "window_strides": [1, -2], "per_sample": True}
    y = cd.slice1_batch(da.from_array(x, chunks=(samples, 5, 4)), **windows)
    assert y.chunks == (tuple(c for c in samples if c), (2,), (1,))
    assert same(y.compute(scheduler="sync"), cd.slice1_batch(x, **windows))
    shared = {"window_offsets": np.c_[offsets, offsets[:, :1] % 3], "window_sizes": [2, 2, 2]}
    y = cd.slice1_batch(da.from_array(x, chunks=2), **shared, chunks=(samples,))  # windows per chunk
    assert same(y.compute(scheduler="sync"), cd.slice1_batch(x, **shared))


def test_the_core_package_imports_without_dask():
    code = "import sys, cudadml; assert 'dask' not in sys.modules and 'cudadml.interop.dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- CuPy chunks (on a GPU) ----------------------------------------------------------------------


def _on_gpu(op, rng, cupy):
    """Every sample of ``op`` on Dask arrays of CuPy chunks: the lazy results, and the oracle's."""
    lazy, expected = [], []
    for sample in op.samples(op.maker(np.int32, rng)):
        given = sample.map(
            lambda a: da.from_array(a, chunks=chunked(a.shape, "irregular", rng)).map_blocks(cupy.asarray)
        )
        results = cases.listed(given.call(op.function))
        assert all(isinstance(r._meta, cupy.ndarray) for r in results), sample
        lazy += results
        expected += cases.expected(op, sample)
    return lazy, expected


def _same_on_gpu(results, expected, cupy):
    assert all(isinstance(r, cupy.ndarray) for r, e in zip(results, expected) if e.size)
    for got, want in zip(results, expected):
        assert same(cupy.asnumpy(got), want)


@pytest.mark.gpu
@pytest.mark.parametrize("op", cases.params(DASK))
def test_cupy_chunks_run_through_the_kernels(rng, op):
    cupy = pytest.importorskip("cupy")
    lazy, expected = _on_gpu(op, rng, cupy)
    _same_on_gpu(dask.compute(*lazy, scheduler="threads"), expected, cupy)


@pytest.mark.gpu
def test_two_gpus_with_local_cuda_cluster(rng):
    cupy = pytest.importorskip("cupy")
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    lazy, expected = [], []
    for op in DASK:
        results, wanted = _on_gpu(op, rng, cupy)
        lazy += results
        expected += wanted
    with dask_cuda.LocalCUDACluster(n_workers=2) as local, distributed.Client(local) as client:
        results = dask.compute(*lazy, scheduler=client)
    _same_on_gpu(results, expected, cupy)

"""Dask arrays in, lazy Dask arrays out: every array function against NumPy (``x[key]``,
``np.split``, ``np.concatenate``, the gradient by assignment), bit for bit, on Dask's
threaded scheduler and on a ``distributed.LocalCluster`` of worker processes; the graph
(laziness, each task's dependencies, aliased split/join chunks, zero chunks that read
nothing), validation at call time with the messages of a NumPy call, and refusals."""

import math
import subprocess
import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from dask.core import get_dependencies  # noqa: E402

import cudadml as cd  # noqa: E402
from cudadml.testing import random_array  # noqa: E402

IRREGULAR = ((3, 5, 1, 7), (4, 4, 2))  # a (16, 10) array
ONES = ((1,) * 6, (1,) * 5)  # a (6, 5) array in size-1 chunks
EMPTY_CHUNK = ((3, 0, 13), (10,))  # a 0-size chunk


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


@pytest.fixture(params=["threads", "cluster"])
def compute(request):
    """``compute(*arrays)``: their values, on the threaded scheduler or the cluster."""
    if request.param == "threads":
        return lambda *arrays: dask.compute(*arrays, scheduler="threads")
    client = request.getfixturevalue("cluster")
    return lambda *arrays: dask.compute(*arrays, scheduler=client)


def same(a, b):
    """Bit-for-bit equal, NaN payloads included."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.ascontiguousarray(a).tobytes() == b.tobytes()


def window_index(windows):
    """The NumPy index reading ``start + step * k`` for ``k < count`` per axis."""
    return np.ix_(*(start + step * np.arange(count) for start, step, count in windows))


def copy_start(offsets, sizes, strides):
    return [o if s > 0 else o + n - 1 for o, n, s in zip(offsets, sizes, strides)]


# ---- every function against NumPy, on both schedulers ---------------------------------------------

KEYS = [
    np.s_[1:14:2, ::-3],  # windows crossing chunk boundaries, a negative step
    np.s_[::-1, 2],  # an integer drops an axis
    np.s_[None, 5, None, 1:9],  # new axes
    np.s_[15:2:-4, 9:0:-7],
    np.s_[..., None],
    np.s_[3, 4],  # a 0-dimensional result
    np.s_[4:4, :],  # an empty result
    np.s_[2:9],
]
SLICE1 = [  # offsets, sizes, strides, output_sizes
    ([1, 2], [14, 7], [-3, 2], None),
    ([0, 0], [16, 10], [1, -1], None),
    ([2, 1], [13, 9], [5, -4], [2, 2]),  # fewer than the reachable count
    ([7, 3], [1, 1], [-9, 9], None),
]
SLICE = [  # offsets, sizes, strides
    ([1, 0], [5, 10], [3, 1]),
    ([4, 2], [7, 3], [0, 2]),  # a zero stride repeats one element
    ([0, 0], [0, 4], [1, 1]),  # empty
]


@pytest.mark.parametrize("chunks", [IRREGULAR, ((16,), (10,)), ((2,) * 8, (5, 5))], ids=["irregular", "one", "even"])
def test_windows_and_gradients_match_numpy(compute, rng, chunks):
    x = random_array((16, 10), np.float32, rng)
    dx = da.from_array(x, chunks=chunks)
    lazy, expected = [], []
    for key in KEYS:
        y = cd.strided_slice(dx, key)
        dy = da.from_array(random_array(x[key].shape, np.float32, rng), chunks=y.chunks)
        g = np.zeros_like(x)
        g[key] = dy.compute()
        lazy += [y, cd.strided_slice_grad(dy, x.shape, key)]
        expected += [x[key], g]
    for offsets, sizes, strides, output_sizes in SLICE1:
        y = cd.slice1(dx, window_offsets=offsets, window_sizes=sizes, window_strides=strides, output_sizes=output_sizes)
        windows = list(zip(copy_start(offsets, sizes, strides), strides, y.shape))
        dy = random_array(y.shape, np.float32, rng)
        g = np.zeros_like(x)
        g[window_index(windows)] = dy
        lazy += [
            y,
            cd.slice_grad(
                da.from_array(dy, chunks=3), x.shape, window_offsets=offsets, window_sizes=sizes, window_strides=strides
            ),
        ]
        expected += [x[window_index(windows)], g]
    for offsets, sizes, strides in SLICE:
        lazy.append(cd.slice(dx, offsets=offsets, sizes=sizes, strides=strides))
        expected.append(x[window_index(zip(offsets, strides, sizes))])
    for got, want in zip(compute(*lazy), expected):
        assert same(got, want)


@pytest.mark.parametrize("chunks", [IRREGULAR, EMPTY_CHUNK], ids=["irregular", "empty-chunk"])
def test_split_and_join_match_numpy(compute, rng, chunks):
    x = random_array((16, 10), np.int16, rng)
    dx = da.from_array(x, chunks=chunks)
    cases = [([3, 6, 0, 7], 0), ([8, 1, 1, 6], 0), (2, 0), ([4, 4, 2], 1), ([1, 9], -1)]
    lazy, expected = [], []
    for sizes, axis in cases:
        parts = cd.split(dx, split_sizes=sizes, axis=axis)
        cuts = np.cumsum(sizes)[:-1] if isinstance(sizes, list) else sizes
        lazy += [*parts, cd.join(parts[::-1], axis)]
        numpy_parts = np.split(x, cuts, axis)
        expected += [*numpy_parts, np.concatenate(numpy_parts[::-1], axis)]
    a, b = random_array((16, 3), np.int16, rng), random_array((16, 5), np.int16, rng)
    lazy.append(cd.join([dx, da.from_array(a, chunks=((16,), (1, 2))), da.from_array(b, chunks=((5, 11), 5))], 1))
    expected.append(np.concatenate([x, a, b], 1))
    for got, want in zip(compute(*lazy), expected):
        assert same(got, want)


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


def test_sixteen_byte_elements_move_as_words(compute, rng):
    x = random_array((7, 4), np.complex128, rng)
    dx = da.from_array(x, chunks=((2, 5), (3, 1)))
    key = np.s_[::-3, 1:]
    y = cd.strided_slice(dx, key, directml_types=False)
    parts = cd.split(dx, split_sizes=[3, 4], directml_types=False)
    for got, want in zip(compute(y, *parts), [x[key], x[:3], x[3:]]):
        assert same(got, want)


# ---- laziness and the graph ---------------------------------------------------------------------


def _never(block):
    raise AssertionError("an input chunk was computed")


def _untouchable(shape, chunks, dtype=np.float32):
    """A Dask array whose chunks raise if anything computes them."""
    return da.zeros(shape, dtype=dtype, chunks=chunks).map_blocks(_never, meta=np.empty((0,) * len(shape), dtype))


def test_nothing_computes_until_compute():
    x = _untouchable((16, 10), IRREGULAR)
    results = [
        cd.slice(x, offsets=[1, 0], sizes=[5, 10], strides=[3, 1]),
        cd.slice1(x, window_offsets=[1, 2], window_sizes=[14, 7], window_strides=[-3, 2]),
        cd.slice_grad(
            _untouchable((5, 4), 2), (16, 10), window_offsets=[1, 2], window_sizes=[14, 7], window_strides=[-3, 2]
        ),
        cd.strided_slice(x, np.s_[::-2, 3]),
        cd.strided_slice_grad(_untouchable((8,), 3), (16, 10), np.s_[::-2, 3]),
        *cd.split(x, split_sizes=[4, 12], axis=0),
        cd.join([x, x], 1),
    ]
    for result in results:
        layer = result.dask.layers[result.name]
        assert len(layer) == math.prod(map(len, result.chunks))  # one task (or alias) per output chunk
    with pytest.raises(AssertionError, match="an input chunk was computed"):
        results[1].compute(scheduler="sync")


def _chunk_of(bounds, i):
    return int(np.searchsorted(bounds, i, side="right") - 1)


def _deps(array, key):
    graph = dict(array.__dask_graph__())
    return {k for k in get_dependencies(graph, key)}


@pytest.mark.parametrize("offsets, sizes, strides, output_sizes", SLICE1)
def test_each_output_chunk_reads_only_the_input_chunks_it_needs(offsets, sizes, strides, output_sizes):
    x = da.zeros((16, 10), dtype=np.float32, chunks=IRREGULAR)
    y = cd.slice1(x, window_offsets=offsets, window_sizes=sizes, window_strides=strides, output_sizes=output_sizes)
    bounds = [np.cumsum((0, *c)) for c in x.chunks]
    starts = copy_start(offsets, sizes, strides)
    out_bounds = [np.cumsum((0, *c)) for c in y.chunks]
    for index in np.ndindex(*y.numblocks):
        needed = set()
        for k in np.ndindex(*(out_bounds[d][i + 1] - out_bounds[d][i] for d, i in enumerate(index))):
            at = [starts[d] + strides[d] * (out_bounds[d][index[d]] + k[d]) for d in range(2)]
            needed.add((x.name, *(_chunk_of(bounds[d], at[d]) for d in range(2))))
        assert _deps(y, (y.name, *index)) == needed


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

INVALID = [
    (cd.slice1, ((4, 4), np.float32), ([0, 0], [4, 5]), {}),
    (cd.slice1, ((4, 4), np.float32), ([0, 0], [4, 4], [0, 1]), {}),
    (cd.slice1, ((4, 4), np.float32), ([0.0, 0], [4, 4]), {}),
    (cd.slice1, ((4, 4), np.float32), ([float("nan"), 0], [4, 4]), {}),
    (cd.slice1, ((4, 4), np.float32), ([None, 0], [4, 4]), {}),
    (cd.slice1, ((4, 4), np.float32), ([True, 0], [4, 4]), {}),
    (cd.slice1, ((4, 4), np.float32), ([2**70, 0], [4, 4]), {}),
    (cd.slice1, ((4, 4, 4), np.float32), ([0, 0, 0], [2, 2, 2]), {"feature_level": "2_1"}),
    (cd.slice, ((4, 4), np.float32), ([0, 0], [3, 3], [2, 1]), {}),
    (cd.slice, ((4, 4), bool), ([0, 0], [3, 3]), {}),
    (cd.slice, ((), np.float32), ([], []), {}),
    (cd.slice_grad, ((2, 2), np.float32), ((4, 4), [0, 0], [1, 4], [1, 1]), {}),
    (cd.strided_slice, ((4, 4), np.float32), (np.s_[5],), {}),
    (cd.strided_slice, ((4, 4), np.float32), (np.s_[1, 1, 1],), {}),
    (cd.strided_slice, ((4, 4), np.float32), (np.s_[..., ...],), {}),
    (cd.strided_slice, ((4, 4), np.float32), ([1, 2],), {}),
    (cd.strided_slice, ((4, 4), np.float32), (np.s_[1.5:],), {}),
    (cd.strided_slice_grad, ((3,), np.float32), ((4, 4), np.s_[::2]), {}),
    (cd.split, ((6, 4), np.float32), ([2, 3], 0), {}),
    (cd.split, ((6, 4), np.float32), (4, 0), {}),
    (cd.split, ((6, 4), np.float32), (2, 2), {}),
    (cd.split, ((6, 4), np.complex128), (2, 0), {}),
    (cd.split, ((6, 4), np.float32), (2, 0), {"feature_level": "1_0"}),
]


@pytest.mark.parametrize("fn, spec, args, kwargs", INVALID)
def test_invalid_calls_raise_at_call_time_with_numpys_message(fn, spec, args, kwargs):
    shape, dtype = spec
    with pytest.raises(Exception) as numpy_error:
        fn(np.zeros(shape, dtype), *args, **kwargs)
    x = _untouchable(shape, 2, dtype) if shape else da.zeros(shape, dtype=dtype)
    with pytest.raises(type(numpy_error.value)) as dask_error:
        fn(x, *args, **kwargs)
    assert str(dask_error.value) == str(numpy_error.value)


def test_join_errors_are_numpys():
    arrays = [np.zeros((2, 3), np.float32), np.zeros((2, 4), np.float32)]
    for xs, axis in [
        (arrays, 0),
        ([arrays[0], np.zeros((2, 3), np.int8)], 0),
        (arrays, 2),
        ([arrays[0][0], arrays[1]], 1),
    ]:
        with pytest.raises(Exception) as numpy_error:
            cd.join(xs, axis)
        with pytest.raises(type(numpy_error.value)) as dask_error:
            cd.join([da.from_array(a) for a in xs], axis)
        assert str(dask_error.value) == str(numpy_error.value)


def test_a_whole_array_past_one_buffer_is_validated_but_its_chunks_must_fit_one():
    big = da.zeros((2**20, 2**13), dtype=np.float32, chunks=(2**14, 2**13))  # 2^33 elements, lazily
    assert cd.strided_slice(big, np.s_[::-2]).shape == (2**19, 2**13)
    assert len(cd.split(big, parts=64)) == 64
    with pytest.raises(cd.DescriptorError, match="buffer tensor may span"):
        cd.strided_slice(np.broadcast_to(np.float32(0), (2**20, 2**13)), np.s_[::-2])  # NumPy: one buffer
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


def test_empty_results_are_numpys(compute):
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    dx = da.from_array(x, chunks=2)
    empty_dy = da.zeros((0, 4), dtype=np.int64, chunks=2)
    lazy = [
        cd.strided_slice(dx, np.s_[2:1]),
        *cd.split(dx, split_sizes=[0, 3, 0], axis=0),
        cd.join([dx[:0], dx[:0]], 0),
        cd.strided_slice_grad(empty_dy, (3, 4), np.s_[2:2]),
        cd.slice1(dx, window_offsets=[0, 0], window_sizes=[3, 4], output_sizes=[0, 4]),
    ]
    expected = [x[2:1], x[:0], x, x[3:], np.zeros((0, 4), np.int64), np.zeros_like(x), x[:0]]
    for got, want in zip(compute(*lazy), expected):
        assert same(got, want)


def test_the_core_package_imports_without_dask():
    code = "import sys, cudadml; assert 'dask' not in sys.modules and 'cudadml.interop.dask' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- CuPy chunks (on a GPU) ----------------------------------------------------------------------


@pytest.mark.gpu
def test_cupy_chunks_run_through_the_kernels(rng):
    cupy = pytest.importorskip("cupy")
    x = random_array((16, 10), np.float32, rng)
    dx = da.from_array(x, chunks=IRREGULAR).map_blocks(cupy.asarray)
    key = np.s_[1:14:2, ::-3]
    y = cd.strided_slice(dx, key)
    g = cd.strided_slice_grad(y, x.shape, key)
    parts = cd.split(dx, split_sizes=[4, 12], axis=0)
    joined = cd.join(parts[::-1], 0)
    assert isinstance(y._meta, cupy.ndarray) and isinstance(joined._meta, cupy.ndarray)
    expected_g = np.zeros_like(x)
    expected_g[key] = x[key]
    results = dask.compute(y, g, *parts, joined, scheduler="threads")
    assert all(isinstance(r, cupy.ndarray) for r in results)
    for got, want in zip(results, [x[key], expected_g, x[:4], x[4:], np.concatenate([x[4:], x[:4]])]):
        assert same(cupy.asnumpy(got), want)


@pytest.mark.gpu
def test_two_gpus_with_local_cuda_cluster(rng):
    cupy = pytest.importorskip("cupy")
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs two GPUs")
    x = random_array((64, 48), np.int32, rng)
    dx = da.from_array(x, chunks=((10, 22, 32), (16, 16, 16))).map_blocks(cupy.asarray)
    key = np.s_[60:3:-3, 5::2]
    with dask_cuda.LocalCUDACluster(n_workers=2) as local, distributed.Client(local) as client:
        y = cd.strided_slice(dx, key)
        g = cd.strided_slice_grad(y, x.shape, key)
        parts = cd.split(dx, parts=8, axis=0)
        joined = cd.join(parts, 1)
        results = dask.compute(y, g, *parts, joined, scheduler=client)
    expected_g = np.zeros_like(x)
    expected_g[key] = x[key]
    expected = [x[key], expected_g, *np.split(x, 8, 0), np.concatenate(np.split(x, 8, 0), 1)]
    for got, want in zip(results, expected):
        assert same(cupy.asnumpy(got), want)


def _random_chunks(n, rng):
    cuts = np.sort(rng.integers(0, n + 1, size=rng.integers(0, 4)))
    return tuple(np.diff(np.concatenate([[0], cuts, [n]])).tolist())


def _random_slice(n, rng):
    step = int(rng.choice([1, 2, 3, -1, -2, -5]))
    start, stop = (int(v) for v in rng.integers(-n - 1, n + 2, size=2))
    return slice(*rng.choice([(start, stop, step), (None, None, step), (start, None, step)]))


def test_random_keys_and_chunkings_match_numpy(rng):
    for _ in range(60):
        shape = tuple(int(n) for n in rng.integers(1, 9, size=rng.integers(1, 4)))
        x = random_array(shape, np.uint16, rng)
        dx = da.from_array(x, chunks=tuple(_random_chunks(n, rng) for n in shape))
        key = tuple(_random_slice(n, rng) if rng.random() < 0.8 else int(rng.integers(0, n)) for n in shape)
        y = cd.strided_slice(dx, key)
        g = cd.strided_slice_grad(y, shape, key)
        expected = np.zeros_like(x)
        expected[key] = x[key]
        parts = cd.split(dx, split_sizes=[2, shape[0] - 2] if shape[0] > 2 else 1, axis=0)
        got = dask.compute(y, g, cd.join(parts, 0), scheduler="sync")
        assert same(got[0], x[key]) and same(got[1], expected) and same(got[2], x), (shape, dx.chunks, key)


@pytest.mark.parametrize("per_sample", [False, True])
def test_many_windows_match_numpy(compute, rng, per_sample):
    x = random_array((6, 9, 11), np.float32, rng)
    dx = da.from_array(x, chunks=(2, 4, 5))
    n, d = (6, 2) if per_sample else (7, 3)
    bounds = x.shape[per_sample:]
    sizes = np.array([rng.integers(1, b + 1) for b in bounds])
    offsets = np.array([[rng.integers(0, b - s + 1) for b, s in zip(bounds, sizes)] for _ in range(n)])
    strides = rng.choice([1, -1], (n, d))
    for chunks in (None, 3):
        lazy = cd.slice1_batch(
            dx, window_offsets=offsets, window_sizes=sizes, window_strides=strides, per_sample=per_sample, chunks=chunks
        )
        assert isinstance(lazy, da.Array)
        (got,) = compute(lazy)
        assert same(
            got,
            cd.slice1_batch(
                x, window_offsets=offsets, window_sizes=sizes, window_strides=strides, per_sample=per_sample
            ),
        )
    own = np.array([[rng.integers(1, b + 1) for b in bounds] for _ in range(n)])
    offsets = np.array([[rng.integers(0, b - s + 1) for b, s in zip(bounds, row)] for row in own])
    parts = cd.slice1_batch(dx, window_offsets=offsets, window_sizes=own, window_strides=strides, per_sample=per_sample)
    assert isinstance(parts, list) and all(isinstance(p, da.Array) for p in parts)
    for got, want in zip(
        compute(*parts),
        cd.slice1_batch(x, window_offsets=offsets, window_sizes=own, window_strides=strides, per_sample=per_sample),
    ):
        assert same(got, want)
    with pytest.raises(cd.DescriptorError, match="window 0"):
        cd.slice1_batch(dx, window_offsets=np.full((n, d), 50), window_sizes=sizes, per_sample=per_sample)
    with pytest.raises(TypeError, match="does not take Dask arrays"):
        cd.slice1_batch_grad(
            da.from_array(np.ones((1, 2, 2, 2))), x.shape, window_offsets=[[0, 0, 0]], window_sizes=(2, 2, 2)
        )

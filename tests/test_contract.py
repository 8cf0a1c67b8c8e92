"""The binding contract, attacked: every call that breaks a rule is refused by name before
anything runs and writes nothing; every valid call runs, exactly.

Each test here names a way in which the contract could be (and once was) broken: NaN and
float sizes, object arrays, outputs that overlap themselves, interleaved views that share no
element, a cache that launders invalid calls, unaligned addresses, empty arrays, thousands of
bindings, several threads at once.
"""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest

import cudadml as cd
from cudadml.core.overlap import overlaps_itself, share_an_element
from cudadml.run import runner
from cudadml.testing import POISON, aligned_empty, random_array, to_host

F32 = cd.TensorDataType.FLOAT32


def _slice_op():
    return cd.SliceOperatorDesc(
        cd.BufferTensorDesc(F32, [1, 1, 4, 4]),
        cd.BufferTensorDesc(F32, [1, 1, 2, 2]),
        [0, 0, 1, 2],
        [1, 1, 2, 2],
        [1, 1, 1, 1],
    ).compile()


def _buffers(rng):
    x = aligned_empty(64)
    x[...] = random_array((64,), np.uint8, rng)
    y = aligned_empty(64)
    y[...] = POISON
    return x, y


# ---- types by value ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [float("nan"), 16.5, 16.0, None, "16", True])
def test_binding_sizes_and_offsets_must_be_integers(size, rng):
    _, y = _buffers(rng)
    with pytest.raises(TypeError, match=r"BufferBinding: (offset|size_in_bytes) must be an integer"):
        if size is None:
            cd.BufferBinding(y, size)  # a None offset
        else:
            cd.BufferBinding(y, 0, size)
    with pytest.raises(TypeError, match="BufferBinding: offset must be an integer"):
        cd.BufferBinding(y, float("nan"))
    assert np.all(y == POISON)


@pytest.mark.parametrize("integer", [np.int64, np.int32, np.uint16, int])
def test_numpy_integer_offsets_and_sizes_count_by_value(integer, rng):
    x, y = _buffers(rng)
    op = _slice_op()
    op.execute([cd.BufferBinding(x, integer(0), integer(64))], [cd.BufferBinding(y, integer(16), integer(16))])
    expected = x.view(np.float32).reshape(4, 4)[1:3, 2:4]
    assert np.array_equal(y[16:32].view(np.float32).reshape(2, 2), expected)
    assert np.all(y[:16] == POISON) and np.all(y[32:] == POISON)


@pytest.mark.parametrize("dtype", [object, [("a", np.int32), ("b", np.int32)]])
def test_object_structured_and_subarray_buffers_are_refused(dtype, rng):
    op = _slice_op()
    x, _ = _buffers(rng)
    y = np.zeros(16, dtype)
    before = y.copy()
    with pytest.raises(TypeError, match="not plain data"):
        op.execute([x], [y])
    assert y.tobytes() == before.tobytes() if y.dtype != object else all(v == 0 for v in y)
    with pytest.raises(TypeError, match="not plain data"):
        cd.strided_slice(np.zeros(4, np.float64), np.s_[:], out=np.zeros(4, object))
    with pytest.raises(TypeError, match="not plain data"):
        cd.strided_slice(np.zeros(4, object), np.s_[:])


def test_a_bare_array_where_a_list_of_bindings_belongs_is_a_type_error(rng):
    x, y = _buffers(rng)
    with pytest.raises(
        TypeError, match=re.escape("inputs must be a list of bindings, one per tensor; got one ndarray")
    ):
        _slice_op().execute(x, [y])
    with pytest.raises(TypeError, match=re.escape("got one BufferBinding (for one tensor, pass [output])")):
        _slice_op().execute([x], cd.BufferBinding(y))


# ---- the cache normalises before it looks up ---------------------------------------------------

LAUNDERED = [
    pytest.param(lambda x: cd.strided_slice(x, 1), lambda x: cd.strided_slice(x, 1.0), id="float-index"),
    pytest.param(
        lambda x: cd.strided_slice(x, np.s_[0:2]), lambda x: cd.strided_slice(x, slice(0.0, 2.0)), id="float-slice"
    ),
    pytest.param(lambda x: cd.join([x, x], axis=1), lambda x: cd.join([x, x], axis=1.0), id="float-axis"),
    pytest.param(
        lambda x: cd.strided_slice(x, 0, feature_level=0x3000),
        lambda x: cd.strided_slice(x, 0, feature_level=12288.0),
        id="float-feature-level",
    ),
    pytest.param(
        lambda x: cd.slice(x, offsets=[0, 0], sizes=[1, 2]),
        lambda x: cd.slice(x, offsets=[0.0, 0], sizes=[1, 2]),
        id="float-offsets",
    ),
    pytest.param(
        lambda x: cd.split(x, parts=2, axis=1), lambda x: cd.split(x, parts=2, axis=1.0), id="float-split-axis"
    ),
    pytest.param(
        lambda x: cd.strided_slice(x, 0, directml_types=True),
        lambda x: cd.strided_slice(x, 0, directml_types=1),
        id="int-as-flag",
    ),
]


@pytest.mark.parametrize(("valid", "invalid"), LAUNDERED)
def test_a_cached_valid_call_never_admits_its_invalid_twin(xp, valid, invalid):
    x = xp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    invalid_first = pytest.raises(TypeError)
    with invalid_first:
        invalid(x)
    valid(x)
    with pytest.raises(TypeError):
        invalid(x)


def test_numpy_integers_share_the_cache_entry_of_their_value(xp):
    x = xp.asarray(np.arange(12, dtype=np.int16).reshape(3, 4))
    a = cd.strided_slice(x, (np.int64(1), np.s_[np.int32(1) : None : np.int8(2)]))
    b = cd.strided_slice(x, (1, np.s_[1::2]))
    assert np.array_equal(to_host(a), to_host(b))


# ---- exact overlap -----------------------------------------------------------------------------


def _brute_overlaps_itself(shape, strides, itemsize):
    seen = set()
    for index in np.ndindex(*shape):
        start = sum(i * s for i, s in zip(index, strides))
        cells = set(range(start, start + itemsize))
        if cells & seen:
            return True
        seen |= cells
    return False


def test_self_overlap_is_decided_exactly():
    rng = np.random.default_rng(11)
    for _ in range(1500):
        rank = int(rng.integers(1, 4))
        itemsize = int(rng.choice([1, 2, 4, 8]))
        shape = tuple(int(n) for n in rng.integers(1, 5, rank))
        strides = tuple(int(s) for s in rng.integers(-12, 13, rank))
        assert overlaps_itself(shape, strides, itemsize) == _brute_overlaps_itself(shape, strides, itemsize), (
            shape,
            strides,
            itemsize,
        )


def test_shared_elements_are_decided_exactly():
    rng = np.random.default_rng(12)
    for _ in range(800):
        itemsize = int(rng.choice([1, 2, 4]))
        a = (int(rng.integers(0, 16)), itemsize, (int(rng.integers(1, 4)),), (int(rng.integers(-9, 10)),))
        b = (int(rng.integers(0, 16)), itemsize, (int(rng.integers(1, 4)),), (int(rng.integers(-9, 10)),))
        cells = [{t[0] + i * t[3][0] + j for i in range(t[2][0]) for j in range(itemsize)} for t in (a, b)]
        assert share_an_element(a, b) == bool(cells[0] & cells[1]), (a, b)


def test_output_that_overlaps_itself_through_strides_is_refused(xp):
    buf = xp.asarray(random_array((32,), np.float32, np.random.default_rng(1)))
    out = xp.lib.stride_tricks.as_strided(buf, (4, 4), (4, 4))  # rows shifted by one element
    before = to_host(buf).copy()
    with pytest.raises(cd.BindingError, match=re.escape("strided_slice: out overlaps itself")):
        cd.strided_slice(xp.ones((4, 4), np.float32), np.s_[:], out=out)
    assert to_host(buf).tobytes() == before.tobytes()


def test_interleaved_views_that_share_no_element_are_accepted(xp):
    base = np.arange(16.0).reshape(2, 8)
    x = xp.asarray(base)
    expected = base[:, 1::2][:, ::-1]
    result = cd.strided_slice(x[:, 1::2], np.s_[:, ::-1], out=x[:, ::2])
    assert np.array_equal(to_host(result), expected)
    assert np.array_equal(to_host(x)[:, 1::2], base[:, 1::2])

    y = xp.asarray(np.full((3, 8), -1.0))
    z = xp.asarray(np.arange(12.0).reshape(3, 4))
    cd.split(z, parts=2, axis=1, out=[y[:, 0::4], y[:, 2::4]])
    host = to_host(y)
    assert np.array_equal(host[:, 0::4], to_host(z)[:, :2])
    assert np.array_equal(host[:, 2::4], to_host(z)[:, 2:])
    assert np.all(host[:, 1::2] == -1)


def test_views_sharing_one_element_are_refused(xp):
    y = xp.asarray(np.full((4, 8), -1.0))
    x = xp.asarray(np.arange(8.0).reshape(2, 4))
    before = to_host(y).copy()
    with pytest.raises(cd.BindingError, match=re.escape("split: out[1] overlaps out[0] in memory")):
        cd.split(x, parts=2, axis=1, out=[y[:2, 0:4:2], y[1:3, 2:6:2]])  # y[1, 2] is in both
    assert to_host(y).tobytes() == before.tobytes()


def test_descriptor_outputs_interleaved_in_one_buffer(rng):
    """SPLIT's two outputs share a buffer, their elements alternating every 16 bytes."""
    x_desc = cd.BufferTensorDesc(F32, [4, 2])
    out_desc = cd.BufferTensorDesc(F32, [2, 2], strides=[16, 1])
    op = cd.SplitOperatorDesc(x_desc, [out_desc, out_desc], axis=0).compile()
    x = aligned_empty(32)
    x[...] = random_array((32,), np.uint8, rng)
    y = aligned_empty(out_desc.total_tensor_size_in_bytes + 16)
    y[...] = POISON
    op.execute([x], [cd.BufferBinding(y, 0, out_desc.total_tensor_size_in_bytes), cd.BufferBinding(y, 16)])
    values = x.view(np.float32).reshape(4, 2)
    out = y.view(np.float32)
    assert np.array_equal(out[[0, 1, 16, 17]].reshape(2, 2), values[:2])
    assert np.array_equal(out[[4, 5, 20, 21]].reshape(2, 2), values[2:])
    written = np.zeros(y.size, bool)
    for start in (0, 16):
        for element in (0, 1, 16, 17):
            written[start + 4 * element : start + 4 * element + 4] = True
    assert np.all(y[~written] == POISON)


def _many_binding_calls(n):
    """Calls of ``n`` bindings each: a compiled split's execute, split, split(out=), join."""
    x = np.random.default_rng(3).random((4, n), dtype=np.float32)
    parts = cd.split(x, parts=n, axis=1)
    desc = cd.SplitOperatorDesc(cd.BufferTensorDesc(F32, x.shape), [cd.BufferTensorDesc(F32, (4, 1))] * n, axis=1)
    op = desc.compile()
    outs = [aligned_empty(16).view(np.float32) for _ in range(n)]
    calls = {
        "execute": lambda: op.execute([x], outs),
        "split": lambda: cd.split(x, parts=n, axis=1),
        "split(out=)": lambda: cd.split(x, parts=n, axis=1, out=parts),
        "join": lambda: cd.join(parts, axis=1),
    }
    return x, parts, outs, calls


def test_many_bindings_are_checked_in_n_log_n():
    """10 000 bindings cost about 10x-20x what 1 000 do (checking every pair would cost 100x),
    timed against each other on the same machine: a bound in seconds alone would fail on a
    slow one."""
    few = _many_binding_calls(1_000)[3]
    x, parts, outs, calls = _many_binding_calls(10_000)
    for name, call in calls.items():
        few[name]()
        call()
        base = min(_timed(few[name]) for _ in range(5))
        seconds = min(_timed(call) for _ in range(3))
        assert seconds < 40 * base, f"{name}: 10 000 bindings took {seconds:.3f} s, 1 000 {base:.4f} s"
        assert seconds < 2, f"{name} with 10 000 bindings took {seconds:.3f} s"
    assert all(np.array_equal(o, x[:, k : k + 1].ravel()) for k, o in enumerate(outs))
    assert np.array_equal(cd.join(parts, axis=1), x)


def _timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_many_bindings_with_one_overlap_name_it(xp):
    x = xp.asarray(np.arange(4 * 1000, dtype=np.float32).reshape(4, 1000))
    outs = [xp.full((4, 1), -1, np.float32) for _ in range(1000)]
    outs[700] = outs[3]
    with pytest.raises(cd.BindingError, match=re.escape("split: out[700] overlaps out[3] in memory")):
        cd.split(x, parts=1000, axis=1, out=outs)
    assert all(np.all(to_host(o) == -1) for o in outs)
    base = xp.asarray(np.arange(4 * 20, dtype=np.float32).reshape(4, 20))
    before = to_host(base).copy()
    with pytest.raises(cd.BindingError, match=re.escape("join: out overlaps xs[5] in memory")):
        cd.join([base[:, k : k + 1] for k in range(10)], axis=1, out=base[:, 5:15])
    assert to_host(base).tobytes() == before.tobytes()


def test_split_and_join_of_many_parts(xp, rng):
    x = xp.asarray(random_array((6, 300), np.int16, rng))
    sizes = [int(s) for s in rng.integers(0, 4, 100)]
    sizes[-1] += 300 - sum(sizes)
    parts = cd.split(x, split_sizes=sizes, axis=1)
    host = to_host(x)
    for part, want in zip(parts, np.split(host, np.cumsum(sizes)[:-1], axis=1)):
        assert _same(part, want)
    assert _same(cd.join(parts, axis=1), host)
    outs = [xp.empty_like(p) for p in parts]
    cd.split(x, split_sizes=sizes, axis=1, out=outs)
    assert _same(cd.join(outs, axis=1), host)


# ---- any address -------------------------------------------------------------------------------


def _unaligned(xp, shape, dtype, rng, shift=1):
    """A C-contiguous array of ``dtype`` whose address is ``shift`` bytes past an aligned one."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = xp.asarray(random_array((n + 64,), np.uint8, rng))
    return raw[shift : shift + n].view(dtype).reshape(shape)


def _same(a, b):
    """Bit-exact equality (random floats include NaNs)."""
    a, b = np.ascontiguousarray(to_host(a)), np.ascontiguousarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("shift", [1, 2, 6])
def test_arrays_at_any_address(xp, rng, dtype, shift):
    x = _unaligned(xp, (6, 10), dtype, rng, shift)
    host = to_host(x)
    assert _same(cd.strided_slice(x, np.s_[1:, ::-3]), host[1:, ::-3])
    assert _same(cd.strided_slice(x, np.s_[:, 2:9]), host[:, 2:9])
    out = _unaligned(xp, (5, 7), dtype, rng, shift)
    cd.strided_slice(x, np.s_[1:, 2:9], out=out)
    assert _same(out, host[1:, 2:9])
    grad = np.zeros_like(host)
    grad[::2, 1::3] = host[::2, 1::3]
    dy = _unaligned(xp, host[::2, 1::3].shape, dtype, rng, shift)
    dy[...] = xp.asarray(host[::2, 1::3])
    assert _same(cd.strided_slice_grad(dy, host.shape, np.s_[::2, 1::3]), grad)
    parts = cd.split(x, split_sizes=[3, 0, 7], axis=1)
    for part, want in zip(parts, np.split(host, [3, 3], axis=1)):
        assert _same(part, want)
    assert _same(cd.join([x, x[:, :3]], axis=1), np.concatenate([host, host[:, :3]], axis=1))


# ---- empty arrays ------------------------------------------------------------------------------


def test_empty_arrays_as_numpy(xp):
    a = np.zeros((2, 0), np.float32)
    for got, want in zip(cd.split(xp.asarray(a), parts=2), np.split(a, 2)):
        assert got.shape == want.shape
    joined = cd.join([xp.zeros((2, 0)), xp.zeros((3, 0))])
    assert joined.shape == np.concatenate([np.zeros((2, 0)), np.zeros((3, 0))]).shape
    x = xp.asarray(np.arange(8.0).reshape(2, 4))
    first = cd.split(x, split_sizes=[0, 4], axis=1)
    again = cd.split(x, split_sizes=[0, 4], axis=1, out=first)
    assert [p.shape for p in again] == [(2, 0), (2, 4)]
    assert np.array_equal(to_host(again[1]), to_host(x))
    assert cd.join(p for p in [x, x]).shape == (4, 4)
    assert cd.slice(x, offsets=[0, 1], sizes=[2, 0]).shape == (2, 0)
    assert cd.slice1(xp.zeros((3, 0)), window_offsets=[0, 0], window_sizes=[2, 0]).shape == (2, 0)
    grad = cd.slice_grad(xp.zeros((0, 2)), (3, 4), window_offsets=[1, 0], window_sizes=[0, 4], window_strides=[1, 2])
    assert grad.shape == (3, 4) and not to_host(grad).any()
    with pytest.raises(ValueError, match="needs at least one array"):
        cd.join([])


def test_split_parts_are_views_of_one_allocation(xp, rng):
    x = xp.asarray(random_array((5, 12), np.int16, rng))
    parts = cd.split(x, split_sizes=[3, 4, 5], axis=1)
    owners = {id(p.base) if xp is np else p.data.mem for p in parts}
    assert len(owners) == 1
    for part, want in zip(parts, np.split(to_host(x), [3, 7], axis=1)):
        assert part.flags.c_contiguous and np.array_equal(to_host(part), want)


# ---- the cache is bounded in bytes, and safe across threads ------------------------------------


def test_the_cache_tells_operations_with_equal_parameters_apart():
    """SLICE_GRAD's (input_shape, offsets, sizes, strides) and SLICE1's (offsets, sizes,
    strides, output_sizes) can hold the same numbers: the calls must not share an entry."""
    dy = np.arange(4, dtype=np.int32).reshape(2, 2)
    assert cd.slice_grad(dy, (0, 0), window_offsets=(2, 2), window_sizes=(2, 2), window_strides=(1, 1)).shape == (
        0,
        0,
    )  # an empty gradient
    assert np.array_equal(
        cd.slice1(dy, window_offsets=(0, 0), window_sizes=(2, 2), window_strides=(2, 2), output_sizes=(1, 1)),
        dy[:1, :1],
    )


def test_array_cache_is_bounded_in_bytes(monkeypatch):
    monkeypatch.setattr(runner._CACHE, "limit", 200_000)
    runner._CACHE.clear()
    x = np.arange(4 * 64, dtype=np.int8).reshape(4, 64)
    for parts in range(1, 65):
        cd.split(x, split_sizes=parts if 64 % parts == 0 else [1] * 64, axis=1)
        cd.strided_slice(x, np.s_[:, parts:])
        assert runner._CACHE.nbytes <= 200_000
    assert 0 < len(runner._CACHE) < 128
    runner._CACHE.clear()


def test_array_cache_keeps_the_entries_in_use(monkeypatch):
    """Past its bound the cache drops entries that were not used lately, not the oldest:
    a call repeated between many others stays compiled."""
    x = np.arange(4 * 64, dtype=np.int8).reshape(4, 64)
    runner._CACHE.clear()
    hot = np.s_[:, 1:]
    cd.strided_slice(x, hot)
    (hot_key,) = runner._CACHE._entries
    monkeypatch.setattr(runner._CACHE, "limit", 6 * runner._CACHE.nbytes)
    for start in range(2, 60):
        cd.strided_slice(x, np.s_[:, start:])
        cd.strided_slice(x, hot)
        assert hot_key in runner._CACHE._entries, start
        assert runner._CACHE.nbytes <= runner._CACHE.limit
    assert 3 <= len(runner._CACHE) <= 6
    cold = next(iter(runner._CACHE._entries))
    for start in range(60, 64):
        cd.strided_slice(x, np.s_[:, start:])
    assert cold not in runner._CACHE._entries and hot_key in runner._CACHE._entries
    runner._CACHE.clear()


def test_cache_entry_estimate_covers_what_it_holds():
    import tracemalloc

    runner._CACHE.clear()
    x = np.zeros((2, 2000), np.float32)
    cd.split(x, parts=2000, axis=1)  # warm imports and the NumPy machinery
    runner._CACHE.clear()
    tracemalloc.start()
    try:
        cd.split(x, parts=2000, axis=1)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert runner._CACHE.nbytes >= held * 0.9, (runner._CACHE.nbytes, held)
    runner._CACHE.clear()


def test_threads_share_the_cache_and_get_exact_results():
    x = np.arange(24 * 30, dtype=np.int32).reshape(24, 30)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(40):
                a, b = sorted(int(v) for v in rng.integers(0, 30, 2))
                step = int(rng.choice([1, 2, -1, -3]))
                key = np.s_[::step, a:b]
                assert np.array_equal(cd.strided_slice(x, key), x[key])
                parts = cd.split(x, split_sizes=[a, b - a, 30 - b], axis=1)
                assert np.array_equal(cd.join(parts, axis=1), x)
        except Exception as e:  # reported below, in the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors

"""Arrays past one DirectML buffer tensor (2^32 - 1 elements, sizes of 32 bits).

``cudadml.numpy``'s functions and ``cd.strided_slice`` / ``cd.strided_slice_grad`` take any
size: the index and its gradient describe their calls beyond DirectML's 32-bit bounds (their
kernels index in 64 bits), and ``cudadml.numpy`` copies each array or part by the index where
JOIN, SPLIT or SLICE_GRAD would pass a buffer's bound. The DirectML-named functions and the
descriptors keep the bound and say so. Launches of more blocks than a grid takes run in runs.

On the host, the route is exercised without the memory: ``cudadml.numpy``'s bound and the
grid's are lowered, inputs are broadcasts (free) or lazily zeroed pages, and a plan is built
without running it; one test makes the 4 GiB of the reported flip. On the GPU (marked ``gpu``),
each function runs at 2^32 elements of uint8 and more, checked on the device against views of
its input, every result made inside poison (``canaries``) that must stay as it was.
"""

import math

import numpy as np
import pytest

import cudadml as cd
import cudadml.numpy as cnp
from cudadml.backends import kernels
from cudadml.numpy import arrays as numpy_arrays
from cudadml.numpy import flips, padding, rolls, splits
from cudadml.ops import StridedSlice, StridedSliceGrad
from cudadml.run import runner
from cudadml.testing import CANARY, POISON, emulated

BIG = (65537, 65537)  # 4295098369 elements: past 2^32 - 1
LONG = 2**32 + 17  # one dimension past UINT32
HINT = "DirectML's limit; cudadml.numpy's functions and cd.strided_slice take larger arrays"
BACKENDS = ["reference", pytest.param("emulate", marks=pytest.mark.emulate)]
#: What cudadml.numpy calls where one DirectML buffer holds the arrays; past it, none of them.
DIRECTML_ROUTES = (  # (each by the module of cudadml.numpy that calls it)
    (numpy_arrays, "join"),
    (splits, "_split"),
    (padding, "slice_grad"),
    (splits, "slice1_batch"),
    (rolls, "slice1_batch_grad"),
)


def _on(backend):
    return emulated() if backend == "emulate" else cd.use_host_backend("reference")


# ---- cudadml.numpy past one buffer (its bound lowered) ---------------------------------------------

_X = np.arange(5 * 7, dtype=np.int16).reshape(5, 7)
_C = (np.arange(12) + 1j * np.arange(12)[::-1]).reshape(3, 4)  # 16-byte elements
_S = np.array([["ab", "cde", "f"], ["gh", "i", "jklm"]])  # moved as words, one more axis

#: (name, a call of ``m``: cudadml.numpy's, or NumPy's): each past the lowered bound.
NUMPY_CALLS = [
    ("concatenate", lambda m: m.concatenate([_X, _X[:2]])),
    ("concatenate_axis1", lambda m: m.concatenate([_X, _X[:, 3:]], axis=1)),
    ("concatenate_none", lambda m: m.concatenate([_X, _X.T], axis=None)),
    ("stack", lambda m: m.stack([_X, _X[::-1]], axis=1)),
    ("hstack_complex", lambda m: m.hstack([_C, _C[:, :1]])),
    ("vstack_strings", lambda m: m.vstack([_S, _S[::-1]])),
    ("split", lambda m: m.split(_X, [1, 4], axis=1)),
    ("array_split_overlapping", lambda m: m.array_split(_X, [4, 2, 6], axis=1)),
    ("split_strings", lambda m: m.split(_S, 3, axis=1)),
    ("roll_one_axis", lambda m: m.roll(_X, 3, axis=1)),
    ("roll_two_axes", lambda m: m.roll(_X, (2, -3), axis=(0, 1))),
    ("roll_flat", lambda m: m.roll(_X, 11)),
    ("roll_complex", lambda m: m.roll(_C, (1, 1), axis=(0, 1))),
    ("pad_zeros", lambda m: m.pad(_X, ((1, 2), (3, 0)))),
    ("pad_constant", lambda m: m.pad(_X, 2, constant_values=-7)),
    ("pad_complex", lambda m: m.pad(_C, 1)),
    ("pad_strings", lambda m: m.pad(_S, 1)),
    ("flip", lambda m: m.flip(_X)),
]


def _refused(*args, **kwargs):
    raise AssertionError("a DirectML-named function ran past one buffer")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call", [call for _, call in NUMPY_CALLS], ids=[name for name, _ in NUMPY_CALLS])
def test_numpy_functions_past_one_buffer_run_by_the_index(monkeypatch, backend, call):
    """With the bound lowered to 10 elements, every call passes it: none reaches JOIN, SPLIT,
    SLICE_GRAD or the windows (which would refuse a real array past it), and each gives NumPy's
    result exactly."""
    monkeypatch.setattr(numpy_arrays, "MAX_ELEMENTS", 10)
    for module, name in DIRECTML_ROUTES:
        monkeypatch.setattr(module, name, _refused)
    with _on(backend):
        got = call(cnp)
    want = call(np)
    got, want = (got, want) if isinstance(want, list) else ([got], [want])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert type(g) is np.ndarray and g.flags.c_contiguous
        assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_concatenate_past_one_buffer_into_out(monkeypatch, backend):
    """``out=`` past the bound: each array copied into its part of ``out`` (a view with gaps
    between its rows, which stay as they were); an ``out`` that overlaps an input gets the
    result as if the inputs were read first."""
    monkeypatch.setattr(numpy_arrays, "MAX_ELEMENTS", 10)
    for module, name in DIRECTML_ROUTES:
        monkeypatch.setattr(module, name, _refused)
    buffer = np.full((7, 9), -1, np.int16)
    with _on(backend):
        out = cnp.concatenate([_X, _X[:2]], out=buffer[:, 1:8])
        assert out.base is buffer and np.array_equal(out, np.concatenate([_X, _X[:2]]))
        assert (buffer[:, 0] == -1).all() and (buffer[:, 8] == -1).all()
        x = np.arange(24, dtype=np.int16).reshape(4, 6)
        want = np.concatenate([x[:, :3], x[:, 3:]], axis=0)
        cnp.concatenate([x[:, :3], x[:, 3:]], axis=0, out=x.reshape(8, 3))
        assert np.array_equal(x.reshape(8, 3), want)


@pytest.mark.slow
def test_the_reported_flip_of_4_gib():
    """The issue's call: a flip whose result holds 65537 x 65537 uint8 (4 GiB, made here), of a
    broadcast input whose rows differ."""
    rows = (np.arange(BIG[0], dtype=np.uint64) * 2654435761 >> 13).astype(np.uint8)
    got = cnp.flip(np.broadcast_to(rows[:, None], BIG), axis=0)
    assert got.shape == BIG and got.dtype == np.uint8 and got.flags.c_contiguous
    for column in (0, 1, 4096, BIG[1] - 1):
        assert np.array_equal(got[:, column], rows[::-1])
    for row in (0, 12345, BIG[0] - 1):
        assert (got[row] == rows[BIG[0] - 1 - row]).all()
    del got


# ---- the index and its gradient past DirectML's 32-bit bounds ----------------------------------------


@pytest.fixture
def long_zeros():
    """``LONG`` uint8 zeros, lazily: the pages a call never touches are never made."""
    return np.zeros(LONG, np.uint8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "key",
    [np.s_[-3 :: -(2**26 + 7)], np.s_[5 :: 2**26 + 1], np.s_[2**32 - 5 :: 3], np.s_[:: 2**31 + 1], np.s_[:: -(2**32)]],
    ids=["backwards", "forwards", "past-2^32", "step-past-int32", "step-2^32"],
)
def test_an_index_of_a_dimension_past_uint32(long_zeros, backend, key):
    """A dimension of 2^32 + 17 elements, read at byte offsets past 2^32 with steps past 31 and
    32 bits: the kernels (emulated) run in 64 bits and read what NumPy's view holds."""
    x = long_zeros
    x[key] = np.arange(x[key].size) % 251 + 1  # only the pages read hold values
    with _on(backend):
        got = cd.strided_slice(x, key)
    assert np.array_equal(got, x[key]) and got.any()
    op = StridedSlice.of(x.shape, key)
    _, step, count = op.windows[0]
    plan = runner.entry_for(op, "numpy", None, x.dtype, ((x.shape, x.strides),), None)
    wide = abs(step) * (count - 1) >= 2**31  # else 32-bit offsets from a start past 2^32
    assert all(("long long" in launch.name) == wide for launch in kernels.prepare(plan.op.plan))


@pytest.mark.parametrize(
    "shape, key",
    [(BIG, np.s_[::-1]), (BIG, np.s_[1::2, ::-3]), ((LONG,), np.s_[::-1]), ((3, LONG), np.s_[:, 7:])],
    ids=["flip", "strided", "long-flip", "long-rows"],
)
def test_an_index_and_its_gradient_compile_past_one_buffer(shape, key):
    """Past 2^32 - 1 elements, and past UINT32 in one dimension: the index and its gradient
    compile (64-bit kernels, grids within bounds) where SLICE1 and SLICE_GRAD refuse; built, not
    run, so nothing is allocated."""
    x = np.broadcast_to(np.uint8(1), shape)
    forward = StridedSlice.of(shape, key)
    built = runner.entry_for(forward, "numpy", None, x.dtype, ((x.shape, x.strides),), None)
    (result_shape,) = built.shapes
    dy = np.broadcast_to(np.uint8(1), result_shape)
    backward = StridedSliceGrad.of(result_shape, shape, key)
    built_grad = runner.entry_for(backward, "numpy", None, dy.dtype, ((dy.shape, dy.strides),), None)
    for entry in (built, built_grad):
        wide = entry.op.plan.output_bytes >= 2**31  # (the broadcast inputs span nothing)
        launches = kernels.prepare(entry.op.plan)
        assert all(("long long" in launch.name) == wide and launch.grid <= kernels.MAX_GRID for launch in launches)
    assert built_grad.op.plan.output_bytes == math.prod(shape) > 2**32 - 1


# ---- the DirectML-named functions and the descriptors keep the bound ---------------------------------

_BIG_X = np.broadcast_to(np.uint8(1), BIG)
_LONG_X = np.broadcast_to(np.uint8(1), (LONG,))

DIRECTML_CALLS = [
    ("slice", lambda: cd.slice(_BIG_X, offsets=[0, 0], sizes=[2, 2]), "x spans 4295098369 elements"),
    ("slice1", lambda: cd.slice1(_LONG_X, window_offsets=[0], window_sizes=[3]), "x.shape[0] = 4294967313"),
    (
        "slice_grad",
        lambda: cd.slice_grad(_LONG_X[:2], (LONG,), window_offsets=[0], window_sizes=[2]),
        "input_shape[0] = 4294967313",
    ),
    ("split", lambda: cd.split(_BIG_X, parts=1), "x spans 4295098369 elements"),
    ("join", lambda: cd.join([_BIG_X[:30000], _BIG_X[30000:]]), "the result spans 4295098369 elements"),
    (
        "tensor_span",
        lambda: cd.BufferTensorDesc("uint8", BIG),
        "BufferTensorDesc: the tensor spans 4295098369 elements",
    ),
    ("tensor_size", lambda: cd.BufferTensorDesc("uint8", (LONG,)), "BufferTensorDesc: Sizes[0] = 4294967313"),
]


@pytest.mark.parametrize("call, said", [c[1:] for c in DIRECTML_CALLS], ids=[c[0] for c in DIRECTML_CALLS])
def test_directml_named_calls_keep_the_bound_and_say_what_takes_more(call, said):
    with pytest.raises(cd.DescriptorError) as caught:
        call()
    message = str(caught.value)
    assert said in message and f"({HINT})" in message
    assert message.count(HINT) == 1  # said once: DirectML's words in parentheses leave it out


def test_the_index_shares_no_compiled_operator_with_slice1():
    """The index past the bound runs; SLICE1's call of the same window on the same array still
    refuses it (their operations differ, so no compiled operator is shared)."""
    x = np.zeros(LONG, np.uint8)
    assert cd.strided_slice(x, np.s_[:: 2**30]).shape == (5,)
    with pytest.raises(cd.DescriptorError, match=r"x\.shape\[0\] = 4294967313 exceeds UINT32 max"):
        cd.slice1(x, window_offsets=[0], window_sizes=[LONG], window_strides=[2**30], directml_types=False)
    with pytest.raises(cd.DescriptorError, match="must be a signed 32-bit value"):  # SLICE1's stride bound
        cd.Slice1OperatorDesc(cd.BufferTensorDesc("uint8", [8]), cd.BufferTensorDesc("uint8", [1]), [0], [8], [2**31])


# ---- grids: a launch past MAX_GRID blocks is said, not left to the driver -----------------------


def test_a_launch_past_the_grid_bound_is_refused_by_name(monkeypatch):
    """2^31 - 1 blocks move terabytes, more than a device holds: a plan that would need more is
    refused when it is prepared, naming the kernel, rather than by the driver at the launch."""
    x = np.zeros(4096, np.uint8)
    plan = runner.entry_for(StridedSlice.of(x.shape, np.s_[::2]), "numpy", None, x.dtype, ((x.shape, x.strides),), None)
    monkeypatch.setattr(kernels, "MAX_GRID", 1)
    with pytest.raises(ValueError, match=r"gather_elements.*a grid of \d+ blocks, more than the 1 a launch takes"):
        kernels.prepare(plan.op.plan)


# ---- the GPU: the real sizes --------------------------------------------------------------------------


@pytest.fixture
def cp():
    import cupy

    yield cupy
    cupy.get_default_memory_pool().free_all_blocks()


@pytest.fixture
def canaries(cp, monkeypatch):
    """Every new device array the calls make (the runner's results, ``cudadml.numpy``'s) is made
    ``CANARY`` bytes into a buffer of poison; ``canaries()`` asserts that the poison around each
    is as it was, and returns how many were made."""
    made = []
    runner_empty, numpy_empty = runner.empty, numpy_arrays.new_array

    def inside_poison(shape, dtype):
        nbytes = math.prod(shape) * np.dtype(dtype).itemsize
        buffer = cp.full(nbytes + 2 * CANARY, POISON, cp.uint8)
        made.append((buffer, nbytes))
        return buffer[CANARY : CANARY + nbytes].view(dtype).reshape(shape)

    def empty_of_runner(kind, shape, dtype):
        return inside_poison(shape, dtype) if kind == "cupy" else runner_empty(kind, shape, dtype)

    def empty_of_numpy(like, shape, dtype):
        return inside_poison(shape, dtype) if isinstance(like, cp.ndarray) else numpy_empty(like, shape, dtype)

    monkeypatch.setattr(runner, "empty", empty_of_runner)
    for module in (numpy_arrays, flips, padding, rolls, splits):  # (each holds new_array by name)
        monkeypatch.setattr(module, "new_array", empty_of_numpy)

    def check():
        for buffer, nbytes in made:
            assert bool((buffer[:CANARY] == POISON).all()) and bool((buffer[CANARY + nbytes :] == POISON).all())
        return len(made)

    return check


def _pattern(cp, rows, cols, seed=0):
    """A ``rows`` x ``cols`` uint8 array in which every row and every column differs from its
    neighbours: a hash of both indices, made by one kernel on the device."""
    make = cp.ElementwiseKernel(
        "uint64 r, uint64 c, uint64 seed",
        "uint8 y",
        "y = (unsigned char)(((r + seed) * 2654435761ull >> 13) ^ (c * 40503ull >> 5) ^ (r * c))",
        "cudadml_test_pattern",
    )
    r = cp.arange(rows, dtype=cp.uint64)[:, None]
    c = cp.arange(cols, dtype=cp.uint64)[None, :]
    return make(r, c, cp.uint64(seed), cp.empty((rows, cols), cp.uint8))


def _same(cp, a, b):
    return a.shape == b.shape and bool(cp.array_equal(a, b))


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_flip_past_one_buffer(cp, canaries):
    """The reported flip (a broadcast input), and flips of a 4 GiB array along each axis."""
    got = cnp.flip(cp.broadcast_to(cp.full((1, 1), 7, cp.uint8), BIG), axis=0)
    assert got.shape == BIG and bool((got == 7).all())
    del got
    x = _pattern(cp, *BIG)
    for axis in (0, 1, None):
        assert _same(cp, cnp.flip(x, axis=axis), cp.flip(x, axis=axis))
    assert canaries() == 4


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_dimension_past_uint32(cp, canaries):
    """One dimension of 4295098369 elements: flipped, indexed with steps past 32 bits, rolled,
    split (each part a launch)."""
    flat = _pattern(cp, *BIG).ravel()
    assert flat.size > 2**32
    assert _same(cp, cnp.flip(flat), flat[::-1])
    for key in (np.s_[:: 2**31 + 1], np.s_[:: -(2**32 + 3)], np.s_[2**32 + 5 :: 7]):
        assert _same(cp, cd.strided_slice(flat, key), flat[key])
    rolled = cnp.roll(flat, 2**32 + 99)
    shift = (2**32 + 99) % flat.size
    assert _same(cp, rolled[:shift], flat[-shift:]) and _same(cp, rolled[shift:], flat[:-shift])
    del rolled
    parts = cnp.split(flat, [17, 2**32 + 1])
    assert [p.size for p in parts] == [17, 2**32 + 1 - 17, flat.size - 2**32 - 1]
    for part, (a, b) in zip(parts, [(0, 17), (17, 2**32 + 1), (2**32 + 1, flat.size)]):
        assert _same(cp, part, flat[a:b])
    canaries()


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_pad_past_one_buffer(cp, canaries):
    """A 65535 x 65535 array (inside one buffer) padded past one: zeros by the index's
    gradient, a constant by pad's own one pass."""
    x = _pattern(cp, 65535, 65535)
    for value in (0, 9):
        got = cnp.pad(x, ((1, 2), (3, 0)), constant_values=value)
        assert got.shape == (65538, 65538) and got.size > 2**32
        assert _same(cp, got[1:-2, 3:], x)
        for side in (got[:1], got[-2:], got[:, :3]):
            assert bool((side == value).all())
        del got
    assert canaries() == 2


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_concatenate_past_one_buffer(cp, canaries):
    """Along each axis, into a new array and into ``out=`` (a view with gaps between its rows,
    the gaps poison that must stay)."""
    a, b = _pattern(cp, 40000, 65536), _pattern(cp, 30000, 65536, seed=1)
    got = cnp.concatenate([a, b])
    assert got.shape == (70000, 65536) and _same(cp, got[:40000], a) and _same(cp, got[40000:], b)
    del got
    buffer = cp.full((70000, 65536 + 48), POISON, cp.uint8)
    out = cnp.concatenate([a, b], out=buffer[:, 16:-32])
    assert _same(cp, out[:40000], a) and _same(cp, out[40000:], b)
    assert bool((buffer[:, :16] == POISON).all()) and bool((buffer[:, -32:] == POISON).all())
    del buffer, out
    a, b = a.reshape(65536, 40000), b.reshape(65536, 30000)
    got = cnp.concatenate([a, b], axis=1)
    assert got.shape == (65536, 70000) and _same(cp, got[:, :40000], a) and _same(cp, got[:, 40000:], b)
    assert canaries() == 2


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_split_past_one_buffer(cp, canaries):
    """Parts along each axis, and overlapping sections (decreasing indices), each part a copy."""
    x = _pattern(cp, *BIG)
    for axis, indices in ((1, [1000, 40000]), (0, [65536]), (1, [40000, 1000, 50000])):
        parts = cnp.array_split(x, indices, axis=axis)
        bounds = [0, *indices, BIG[axis]]
        assert len(parts) == len(bounds) - 1
        for part, start, stop in zip(parts, bounds, bounds[1:]):
            view = x[start:stop] if axis == 0 else x[:, start:stop]
            assert part.shape == view.shape and (part.size == 0 or _same(cp, part, view))
        del parts
    canaries()


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_roll_past_one_buffer(cp, canaries):
    """One axis (two copies), two axes (four blocks), the flattened array (one dimension past
    UINT32)."""
    x = _pattern(cp, *BIG)
    got = cnp.roll(x, 12345, axis=1)
    assert _same(cp, got[:, :12345], x[:, -12345:]) and _same(cp, got[:, 12345:], x[:, :-12345])
    del got
    got = cnp.roll(x, (7, -20000), axis=(0, 1))
    for rows, from_rows in ((np.s_[:7], np.s_[-7:]), (np.s_[7:], np.s_[:-7])):
        assert _same(cp, got[rows, -20000:], x[from_rows, :20000])
        assert _same(cp, got[rows, :-20000], x[from_rows, 20000:])
    del got
    got = cnp.roll(x, -3)
    assert _same(cp, got.ravel()[:-3], x.ravel()[3:]) and _same(cp, got.ravel()[-3:], x.ravel()[:3])
    assert canaries() == 3


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_strided_slice_past_one_buffer(cp, canaries):
    """Into ``out=`` a view with poisoned gaps between its rows and poison around it, and into
    a new array, with negative and positive steps."""
    x = _pattern(cp, *BIG)
    buffer = cp.full((BIG[0] + 2) * (BIG[1] + 64), POISON, cp.uint8).reshape(BIG[0] + 2, BIG[1] + 64)
    out = buffer[1:-1, 32:-32]
    assert cd.strided_slice(x, np.s_[::-1, ::-1], out=out) is out
    assert _same(cp, out, x[::-1, ::-1])
    for edge in (buffer[:1], buffer[-1:], buffer[:, :32], buffer[:, -32:]):
        assert bool((edge == POISON).all())
    del buffer, out
    assert _same(cp, cd.strided_slice(x, np.s_[1:, ::2]), x[1:, ::2])
    assert _same(cp, cd.strided_slice(x, np.s_[:, 1::-1]), x[:, 1::-1])
    assert canaries() == 2


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_strided_slice_grad_past_one_buffer(cp, canaries):
    """The gradient of an index of a 65537 x 65537 array: into ``out=`` with poisoned gaps and
    into a new array; and of a 1-D index of a dimension past UINT32."""
    key = np.s_[1::2, ::-3]
    dy = _pattern(cp, 32768, 21846)
    buffer = cp.full((BIG[0], BIG[1] + 16), POISON, cp.uint8)
    out = buffer[:, 16:]
    assert cd.strided_slice_grad(dy, BIG, key, out=out) is out
    assert _same(cp, out[key], dy) and not bool(out[::2].any())
    assert not bool(out[1::2, -2::-3].any()) and not bool(out[1::2, -3::-3].any())
    assert bool((buffer[:, :16] == POISON).all())
    del buffer, out
    got = cd.strided_slice_grad(dy, BIG, key)
    assert _same(cp, got[key], dy) and not bool(got[::2].any())
    del got, dy
    n = BIG[0] * BIG[1]
    dy = _pattern(cp, 1, -(-n // 3)).ravel()
    got = cd.strided_slice_grad(dy, (n,), np.s_[::3])
    assert got.shape == (n,) and _same(cp, got[::3], dy)
    assert not bool(got[1::3].any()) and not bool(got[2::3].any())
    assert canaries() == 2

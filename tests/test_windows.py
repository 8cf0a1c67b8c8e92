"""Many windows in one call: ``slice1_batch`` and ``slice1_batch_grad`` against a loop of NumPy
slices, on the reference backend, the emulated kernels and (with a GPU) CuPy."""

import threading

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import kernels
from cudadml.core.errors import BindingError, DescriptorError
from cudadml.core.plan import WindowPlan
from cudadml.ops import Slice1Batch
from cudadml.run import windows as run_windows
from cudadml.testing import POISON, random_array, to_host


def window_key(offset, size, stride):
    """The NumPy index of one SLICE1 window."""
    return tuple(
        slice(o, o + n, s) if s > 0 else slice(o + n - 1, o - 1 if o else None, s)
        for o, n, s in zip(offset, size, stride)
    )


def rows(a, n):
    a = np.asarray(a)
    return [a] * n if a.ndim == 1 else list(a)


def forward_oracle(x, offsets, sizes, strides, per_sample):
    n = len(offsets)
    return [
        (x[k] if per_sample else x)[window_key(o, s, st)]
        for k, (o, s, st) in enumerate(zip(offsets, rows(sizes, n), rows(strides, n)))
    ]


def grad_oracle(dys, shape, offsets, sizes, strides, per_sample, dtype):
    """Window by window, in order: the first gradient an element receives as it is, later ones
    added (in float32 for halves, rounded once at the end)."""
    sum_type = np.float32 if dtype == np.float16 else dtype
    total, covered = np.zeros(shape, sum_type), np.zeros(shape, bool)
    n = len(offsets)
    for k, (o, s, st) in enumerate(zip(offsets, rows(sizes, n), rows(strides, n))):
        key = window_key(o, s, st)
        key = (k, *key) if per_sample else key
        value = np.asarray(dys[k]).astype(sum_type)
        with np.errstate(all="ignore"):
            total[key] = np.where(covered[key], total[key] + value, value)
        covered[key] = True
    return total.astype(dtype)


def random_windows(rng, bounds, n, shared, flips=True, steps=True):
    """Offsets, sizes, strides of ``n`` windows inside ``bounds``."""
    d = len(bounds)
    if shared:
        sizes = np.array([rng.integers(1, b + 1) for b in bounds])
        each = np.broadcast_to(sizes, (n, d))
    else:
        sizes = each = np.array([[rng.integers(1, b + 1) for b in bounds] for _ in range(n)]).reshape(n, d)
    offsets = np.array([[rng.integers(0, b - s + 1) for b, s in zip(bounds, row)] for row in each]).reshape(n, d)
    sign = rng.choice([1, -1], (n, d)) if flips else np.ones((n, d), int)
    if shared:  # one result shape: the same step magnitudes for every window
        magnitude = rng.integers(1, 3, d) if steps else np.ones(d, int)
        strides = sign * magnitude if flips and rng.integers(2) else magnitude
    else:
        strides = sign * (rng.integers(1, 4, (n, d)) if steps else 1)
    return offsets, sizes, strides


def poisoned(xp, shape, dtype):
    """An array of ``shape`` inside a poisoned buffer with a canary element on either side."""
    count = int(np.prod(shape))
    buffer = xp.empty(count + 2, dtype)
    buffer.view(np.uint8)[...] = POISON
    return buffer[1:-1].reshape(shape), buffer


def assert_canaries(buffer):
    host = to_host(buffer).view(np.uint8).reshape(len(buffer), -1)
    assert np.all(host[0] == POISON) and np.all(host[-1] == POISON)


DTYPES = [np.uint8, np.int16, np.float16, np.float32, np.int64, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("per_sample", [False, True])
def test_windows_of_one_size_equal_a_loop_of_slices(xp, rng, dtype, per_sample):
    for _ in range(6):
        ndim = int(rng.integers(1 + per_sample, 5))
        shape = tuple(int(v) for v in rng.integers(1, 9, ndim))
        x_host = random_array(shape, dtype, rng)
        x = xp.asarray(x_host)
        if rng.integers(2):  # a reversed, strided view
            x, x_host = x[..., ::-1], x_host[..., ::-1]
        n = shape[0] if per_sample else int(rng.integers(1, 7))
        offsets, sizes, strides = random_windows(rng, shape[per_sample:], n, shared=True)
        want = forward_oracle(x_host, offsets, sizes, strides, per_sample)
        out, buffer = poisoned(xp, (n, *want[0].shape), dtype)
        got = cd.slice1_batch(
            x, window_offsets=offsets, window_sizes=sizes, window_strides=strides, per_sample=per_sample, out=out
        )
        assert got is out
        assert to_host(got).tobytes() == np.stack(want).tobytes()
        assert_canaries(buffer)
        fresh = cd.slice1_batch(
            x, window_offsets=offsets, window_sizes=sizes, window_strides=strides, per_sample=per_sample
        )
        assert type(fresh) is type(x) and to_host(fresh).tobytes() == np.stack(want).tobytes()


@pytest.mark.parametrize("dtype", [np.uint8, np.float32, np.float64])
def test_windows_of_their_own_sizes_give_one_array_each(xp, rng, dtype):
    for per_sample in (False, True):
        shape = (5, 7, 9)
        x_host = random_array(shape, dtype, rng)
        n = 5 if per_sample else 4
        offsets, sizes, strides = random_windows(rng, shape[per_sample:], n, shared=False)
        got = cd.slice1_batch(
            xp.asarray(x_host),
            window_offsets=offsets,
            window_sizes=sizes,
            window_strides=strides,
            per_sample=per_sample,
        )
        want = forward_oracle(x_host, offsets, sizes, strides, per_sample)
        assert isinstance(got, list) and len(got) == n
        for g, w in zip(got, want):
            assert g.shape == w.shape and to_host(g).tobytes() == np.ascontiguousarray(w).tobytes()


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("width", [16, 21, 37])
def test_crops_with_per_sample_flips(xp, rng, dtype, width):
    """The pipeline case: random crops of a batch of images, each flipped or not; rows of any
    length, so 16-byte chunks straddle rows read forwards and backwards."""
    images = random_array((6, 3, 20, 48), dtype, rng)
    n = len(images)
    offsets = np.c_[np.zeros(n, int), rng.integers(0, 5, n), rng.integers(0, 49 - width, n)]
    strides = np.c_[np.ones(n, int), np.ones(n, int), rng.choice([1, -1], n)]
    got = cd.slice1_batch(
        xp.asarray(images), window_offsets=offsets, window_sizes=(3, 16, width), window_strides=strides, per_sample=True
    )
    want = [im[:, o[1] : o[1] + 16, o[2] : o[2] + width][..., :: s[2]] for im, o, s in zip(images, offsets, strides)]
    assert to_host(got).tobytes() == np.stack(want).tobytes()
    out, buffer = poisoned(xp, (n, 3, 16, width), dtype)  # an output at an odd element address
    cd.slice1_batch(
        xp.asarray(images),
        window_offsets=offsets,
        window_sizes=(3, 16, width),
        window_strides=strides,
        per_sample=True,
        out=out,
    )
    assert to_host(out).tobytes() == np.stack(want).tobytes()
    assert_canaries(buffer)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.int32])
def test_gradient_of_overlapping_windows_sums_them_in_window_order(xp, rng, dtype):
    for _ in range(4):
        shape = tuple(int(v) for v in rng.integers(2, 8, 3))
        n = int(rng.integers(1, 9))
        shared = bool(rng.integers(2))
        offsets, sizes, strides = random_windows(rng, shape, n, shared)
        results = [r.shape for r in forward_oracle(np.empty(shape), offsets, sizes, strides, False)]
        dys = [
            random_array(s, dtype, rng) if dtype == np.int32 else (rng.standard_normal(s) * 8).astype(dtype)
            for s in results
        ]
        if dtype == np.complex64:
            dys = [(d + 1j * rng.standard_normal(d.shape)).astype(dtype) for d in dys]
        dy = xp.asarray(np.stack(dys)) if shared else [xp.asarray(d) for d in dys]
        options = {"directml_types": dtype != np.complex64}
        out, buffer = poisoned(xp, shape, dtype)
        got = cd.slice1_batch_grad(
            dy, shape, window_offsets=offsets, window_sizes=sizes, window_strides=strides, out=out, **options
        )
        want = grad_oracle(dys, shape, offsets, sizes, strides, False, dtype)
        assert got is out and to_host(got).tobytes() == want.tobytes()
        assert_canaries(buffer)
        again = cd.slice1_batch_grad(
            dy, shape, window_offsets=offsets, window_sizes=sizes, window_strides=strides, **options
        )
        assert to_host(again).tobytes() == want.tobytes()  # the same bits on every run
        wide = xp.zeros((*shape[:-1], 2 * shape[-1]), dtype)  # a strided out: element by element
        cd.slice1_batch_grad(
            dy, shape, window_offsets=offsets, window_sizes=sizes, window_strides=strides, out=wide[..., ::2], **options
        )
        assert to_host(wide[..., ::2]).tobytes() == want.tobytes()
        assert not to_host(wide[..., 1::2]).any()


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float64, np.complex128])
def test_per_sample_gradient_moves_every_bit(xp, rng, dtype):
    """One window per sample: no sums, so NaN payloads and -0.0 survive, zeros elsewhere."""
    shape = (4, 3, 6, 7)
    n = shape[0]
    offsets, sizes, strides = random_windows(rng, shape[1:], n, shared=True)
    results = forward_oracle(np.empty(shape), offsets, sizes, strides, True)
    dy = random_array((n, *results[0].shape), dtype, rng)
    options = {"directml_types": dtype != np.complex128}
    got = cd.slice1_batch_grad(
        xp.asarray(dy),
        shape,
        window_offsets=offsets,
        window_sizes=sizes,
        window_strides=strides,
        per_sample=True,
        **options,
    )
    want = np.zeros(shape, dtype)
    for k, (o, st) in enumerate(zip(offsets, rows(strides, n))):
        want[(k, *window_key(o, sizes, st))] = dy[k]
    assert to_host(got).tobytes() == want.tobytes()


def test_gradient_through_windows_of_their_own_sizes_per_sample(xp, rng):
    shape = (3, 5, 6)
    offsets, sizes, strides = random_windows(rng, shape[1:], 3, shared=False)
    dys = [
        random_array(r.shape, np.float32, rng) for r in forward_oracle(np.empty(shape), offsets, sizes, strides, True)
    ]
    got = cd.slice1_batch_grad(
        [xp.asarray(d) for d in dys],
        shape,
        window_offsets=offsets,
        window_sizes=sizes,
        window_strides=strides,
        per_sample=True,
    )
    want = grad_oracle(dys, shape, offsets, sizes, strides, True, np.float32)
    assert to_host(got).tobytes() == want.tobytes()


def test_an_invalid_window_is_named_and_nothing_is_written(xp, rng):
    x = xp.asarray(random_array((4, 10, 10), np.float32, rng))
    offsets = np.zeros((6, 3), int)
    offsets[4] = (0, 5, 0)
    out, buffer = poisoned(xp, (6, 4, 8, 8), np.float32)
    with pytest.raises(cd.DescriptorError) as e:
        cd.slice1_batch(x, window_offsets=offsets, window_sizes=(4, 8, 8), out=out)
    assert e.value.violations == (
        "slice1_batch: window 4: window_offsets[4][1] + window_sizes[1] = 13 exceeds x.shape[1] = 10 "
        "(DirectML: InputWindowOffsets[1] + InputWindowSizes[1] exceeds InputTensor.Sizes[1])",
    )
    assert np.all(to_host(buffer).view(np.uint8) == POISON)
    bad = np.tile([0, 0, 9], (100, 1))
    with pytest.raises(cd.DescriptorError, match=r"window 0:(.|\n)*window 2:(.|\n)*and 97 more windows"):
        cd.slice1_batch(x, window_offsets=bad, window_sizes=(4, 8, 8))
    with pytest.raises(cd.DescriptorError, match=r"window 1: window_strides\[1\]\[2\] = 0 must be non-zero"):
        cd.slice1_batch(
            x, window_offsets=[[0, 0, 0], [0, 0, 0]], window_sizes=(4, 8, 8), window_strides=[[1, 1, 1], [1, 1, 0]]
        )
    with pytest.raises(cd.DescriptorError, match=r"window 0: window_offsets\[0\]\[0\] = -1 must be an unsigned"):
        cd.slice1_batch(x, window_offsets=[[-1, 0, 0]], window_sizes=(4, 8, 8))
    with pytest.raises(cd.DescriptorError, match=r"window 0: window_offsets\[0\]\[2\] = 1180591620717411303424"):
        cd.slice1_batch(x, window_offsets=[[0, 0, 2**70]], window_sizes=(4, 8, 8))


def test_a_window_whose_end_passes_int64_is_refused(xp):
    """offset + size past 2^63 - 1 wraps in int64 arithmetic; the check must not let that
    window through (it would read far outside ``x``)."""
    x = xp.asarray(np.arange(4, dtype=np.uint8))
    batch = Slice1Batch.of(x.shape, offsets=[[2**62]], sizes=[2**62], strides=[2**31 - 1])
    message = r"window 0: window_offsets\[0\]\[0\] \+ window_sizes\[0\] = 9223372036854775808 exceeds"
    with pytest.raises(cd.DescriptorError, match=message):
        batch.check(np.dtype(np.uint8), x.shape)
    with pytest.raises(cd.DescriptorError, match=message):
        cd.slice1_batch(x, window_offsets=[[2**62]], window_sizes=[2**62], window_strides=[2**31 - 1])
    with pytest.raises(cd.DescriptorError, match=r"window 1: window_offsets\[1\]\[0\] \+ window_sizes\[0\]"):
        cd.slice1_batch_grad(xp.zeros((2, 1), np.uint8), (4,), window_offsets=[[0], [2**63 - 1]], window_sizes=[1])
    per_window = Slice1Batch.of((4, 4), offsets=[[1, 0], [0, 0]], sizes=[[2**63 - 1, 1], [1, 1]])  # sizes of their own
    with pytest.raises(cd.DescriptorError, match=r"slice1_batch: window 0: "):
        per_window.check(np.dtype(np.uint8), (4, 4))


def test_the_batch_check_agrees_with_the_descriptor_window_by_window(rng):
    """The vectorised check only picks which windows the descriptor (the rules' one home) is
    asked about: it must refuse exactly the windows the descriptor refuses."""
    shape = (6, 5, 4)
    for _ in range(400):
        offsets = rng.integers(-2, 8, (1, 3))
        sizes = rng.integers(-1, 8, 3)
        strides = rng.integers(-3, 4, 3)
        try:
            cd.Slice1OperatorDesc(
                cd.BufferTensorDesc(cd.TensorDataType.FLOAT32, shape),
                cd.BufferTensorDesc(
                    cd.TensorDataType.FLOAT32,
                    [max(1, (n - 1) // abs(s) + 1) if s else 1 for n, s in zip(sizes, strides)],
                ),
                offsets[0],
                sizes,
                strides,
            )
            valid = True
        except cd.DescriptorError:
            valid = False
        batch = Slice1Batch.of(shape, offsets=np.r_[np.zeros((1, 3), int), offsets], sizes=sizes, strides=strides)
        try:
            batch.check(np.dtype(np.float32), shape)
            refused = False
        except cd.DescriptorError as e:
            refused = True
            assert all(v.startswith("slice1_batch: window 1: ") for v in e.violations) or not valid
        assert refused == (not valid), (offsets, sizes, strides)


@pytest.mark.parametrize(
    "argument, value, error, message",
    [
        ("window_offsets", [[0.0, 1.0]], TypeError, "window_offsets must hold integers, not float64"),
        ("window_offsets", [[np.nan, 1]], TypeError, "window_offsets must hold integers, not float64"),
        ("window_offsets", [[None, 1]], TypeError, r"window_offsets\[0\]\[0\] = None must be an integer, not NoneType"),
        ("window_offsets", [[True, False]], TypeError, "window_offsets must hold integers, not bool"),
        ("window_offsets", [[True, 0]], TypeError, "window_offsets must hold integers, not bool"),
        ("window_sizes", (np.bool_(True), 2), TypeError, "window_sizes must hold integers, not bool"),
        ("window_offsets", [[0, 1], [2]], ValueError, "window_offsets must be an array of rows of 2 integers"),
        ("window_offsets", [0, 1], ValueError, r"window_offsets has shape \(2,\); it must be \(N, 2\)"),
        ("window_sizes", [[2, 2, 2]], ValueError, r"window_sizes has shape \(1, 3\); it must be \(2,\) for all"),
        ("window_strides", [1.5, 1], TypeError, "window_strides must hold integers, not float64"),
        ("per_sample", 1, TypeError, "per_sample = 1 must be a bool, not int"),
    ],
)
def test_arguments_of_the_wrong_kind_are_refused(argument, value, error, message):
    arguments = {"window_offsets": [[0, 0]], "window_sizes": [2, 2], "window_strides": None, "per_sample": False}
    arguments[argument] = value
    with pytest.raises(error, match=message):
        cd.slice1_batch(np.zeros((4, 4)), **arguments)


def test_windows_of_one_size_must_take_as_many_elements():
    with pytest.raises(ValueError, match=r"window 1 takes \(1, 2\) elements and window 0 \(3, 2\)"):
        cd.slice1_batch(
            np.zeros((4, 4)), window_offsets=[[0, 0], [0, 0]], window_sizes=[3, 2], window_strides=[[1, 1], [-3, 1]]
        )


def test_empty_batches_are_as_numpy_gives_them(xp):
    x = xp.zeros((3, 4, 5), np.float32)
    assert cd.slice1_batch(x, window_offsets=np.zeros((0, 3), int), window_sizes=(2, 2, 2)).shape == (0, 2, 2, 2)
    assert cd.slice1_batch(x, window_offsets=[], window_sizes=(2, 4, 3), window_strides=(1, 2, -1)).shape == (
        0,
        2,
        2,
        3,
    )
    assert cd.slice1_batch(x, window_offsets=np.zeros((0, 3), int), window_sizes=np.zeros((0, 3), int)) == []
    assert cd.slice1_batch(
        x, window_offsets=np.zeros((0, 3), int), window_sizes=(2, 2, 2), window_strides=np.zeros((0, 3), int)
    ).shape == (0, 2, 2, 2)
    assert cd.slice1_batch(x[:0], window_offsets=[], window_sizes=(1, 1), per_sample=True).shape == (0, 1, 1)
    zeros = cd.slice1_batch_grad(
        xp.zeros((0, 2, 2, 2), np.float32), (3, 4, 5), window_offsets=np.zeros((0, 3), int), window_sizes=(2, 2, 2)
    )
    assert to_host(zeros).tobytes() == np.zeros((3, 4, 5), np.float32).tobytes()
    with pytest.raises(ValueError, match="dy is an empty list"):
        cd.slice1_batch_grad([], (3, 4, 5), window_offsets=np.zeros((0, 3), int), window_sizes=np.zeros((0, 3), int))


def test_one_window_and_ten_thousand(xp, rng):
    x_host = random_array((40, 50), np.int16, rng)
    x = xp.asarray(x_host)
    one = cd.slice1_batch(x, window_offsets=[[3, 4]], window_sizes=(5, 6), window_strides=(-1, 2))
    assert to_host(one).tobytes() == x_host[7:2:-1, 4:10:2][None].tobytes()
    offsets = np.c_[rng.integers(0, 38, 10_000), rng.integers(0, 47, 10_000)]
    strides = rng.choice([1, -1], (10_000, 2))
    got = cd.slice1_batch(x, window_offsets=offsets, window_sizes=(2, 3), window_strides=strides)
    assert to_host(got).tobytes() == np.stack(forward_oracle(x_host, offsets, (2, 3), strides, False)).tobytes()
    dy = rng.standard_normal((10_000, 2, 3)).astype(np.float32)  # sums of NaNs differ in payload by platform
    grad = cd.slice1_batch_grad(
        xp.asarray(dy), (40, 50), window_offsets=offsets, window_sizes=(2, 3), window_strides=strides
    )
    assert to_host(grad).tobytes() == grad_oracle(dy, (40, 50), offsets, (2, 3), strides, False, np.float32).tobytes()


def test_out_that_overlaps_the_input_is_refused(xp):
    x = xp.arange(64, dtype=np.float32).reshape(8, 8)
    before = to_host(x).copy()
    with pytest.raises(cd.BindingError, match="overlaps"):
        cd.slice1_batch(x, window_offsets=[[0, 0], [1, 1]], window_sizes=(1, 4), out=x[:2, None, :4])
    dy = xp.ones((2, 2, 2), np.float16)
    with pytest.raises(cd.BindingError, match="overlaps"):
        cd.slice1_batch_grad(
            dy, (2, 2), window_offsets=[[0, 0]] * 2, window_sizes=(2, 2), out=dy[0]
        )  # summed halves: checked too
    assert to_host(x).tobytes() == before.tobytes()
    with pytest.raises(TypeError, match="out has dtype float64"):
        cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=(2, 2), out=xp.empty((1, 2, 2)))
    with pytest.raises(cd.BindingError, match=r"out has shape \(1, 2, 3\)"):
        cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=(2, 2), out=xp.empty((1, 2, 3), np.float32))


def test_misaligned_arrays_take_narrower_words(rng):
    """A NumPy float32 view one byte into a buffer: the copies move it byte by byte."""
    raw = np.zeros(4 * 64 + 1, np.uint8)
    x = raw[1:].view(np.float32).reshape(8, 8)
    x[...] = rng.standard_normal((8, 8))
    for backend in ("reference", "emulate"):
        with cd.use_host_backend(backend):
            got = cd.slice1_batch(
                x, window_offsets=[[0, 1], [2, 3]], window_sizes=(3, 4), window_strides=[[1, -1], [-1, 1]]
            )
        assert got.tobytes() == np.stack([x[0:3, 4:0:-1], x[4:1:-1, 3:7]]).tobytes()


def test_misaligned_gradients_and_outs_are_exact(rng):
    """A float32 dy and out one byte into their buffers: read from an aligned copy, written
    through an aligned one; an out over dy is still refused."""
    raw_dy, raw_out = np.zeros(4 * 2 * 3 * 4 + 1, np.uint8), np.zeros(4 * 6 * 7 + 1, np.uint8)
    dy = raw_dy[1:].view(np.float32).reshape(2, 3, 4)
    dy[...] = rng.standard_normal(dy.shape)
    out = raw_out[1:].view(np.float32).reshape(6, 7)
    offsets, strides = [[0, 1], [2, 2]], [[1, -1], [-1, 1]]
    want = grad_oracle(list(dy), (6, 7), offsets, (3, 4), strides, False, np.float32)
    for backend in ("reference", "emulate"):
        with cd.use_host_backend(backend):
            got = cd.slice1_batch_grad(
                dy, (6, 7), window_offsets=offsets, window_sizes=(3, 4), window_strides=strides, out=out
            )
            assert got is out and out.tobytes() == want.tobytes()
            with pytest.raises(cd.BindingError, match="overlaps"):
                cd.slice1_batch_grad(
                    dy[:, :2, :2], (2, 2), window_offsets=[[0, 0]] * 2, window_sizes=(2, 2), out=dy[0, :2, :2]
                )


def test_per_call_plans_are_not_kept(rng):
    """Copy jobs that hold the windows (a strided out) and entries binding one array per window
    are built per call: the cache keeps compiled launches only."""
    x = random_array((16, 16), np.float32, rng)
    run_windows._windows_op.cache_clear()
    run_windows._window_grad_op.cache_clear()
    out = np.empty((4, 8, 8, 2), np.float32)[..., 0]  # rows not contiguous: copy jobs
    for _ in range(3):
        cd.slice1_batch(x, window_offsets=rng.integers(0, 9, (4, 2)), window_sizes=(8, 8), out=out)
        dys = [np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)]
        cd.slice1_batch_grad(dys, (16, 16), window_offsets=rng.integers(0, 9, (2, 2)), window_sizes=[[2, 3], [3, 2]])
    assert run_windows._windows_op.cache_info().currsize == run_windows._window_grad_op.cache_info().currsize == 0


def test_sixteen_byte_elements_move_as_word_pairs(xp, rng):
    x_host = random_array((5, 6), np.complex128, rng)
    got = cd.slice1_batch(
        xp.asarray(x_host),
        window_offsets=[[0, 1], [2, 0]],
        window_sizes=(3, 4),
        window_strides=(1, -2),
        directml_types=False,
    )
    want = np.stack([x_host[0:3, 4:0:-2], x_host[2:5, 3::-2]])
    assert to_host(got).tobytes() == want.tobytes()
    with pytest.raises(TypeError, match="directml_types=False"):
        cd.slice1_batch(xp.asarray(x_host), window_offsets=[[0, 1]], window_sizes=(3, 4))


def test_new_windows_reuse_the_compiled_launch(rng):
    x = random_array((16, 16), np.float32, rng)
    run_windows._windows_op.cache_clear()
    for _ in range(5):
        cd.slice1_batch(
            x,
            window_offsets=rng.integers(0, 9, (4, 2)),
            window_sizes=(8, 8),
            window_strides=rng.choice([1, -1], (4, 2)),
        )
    info = run_windows._windows_op.cache_info()
    assert (info.misses, info.hits) == (1, 4)


def test_windows_of_one_size_are_one_launch():
    plan = WindowPlan(1, (3, 224, 224), (50176, 224, 1), 150528, 256, 0, 256 * 3 * 256 * 256 - 1)
    (launch,) = kernels.prepare(plan)
    assert launch.name == "gather_windows<1, int, 3>"
    assert launch.grid == 256 * -(-(150528 // 16 + 1) // (kernels.BLOCK * kernels.items_per_thread()["gather_windows"]))


def test_threads_share_the_compiled_launches(rng):
    x = random_array((32, 32), np.float32, rng)
    windows = [(rng.integers(0, 17, (8, 2)), rng.choice([1, -1], (8, 2))) for _ in range(16)]
    results = [None] * len(windows)

    def work(k):
        results[k] = cd.slice1_batch(
            x, window_offsets=windows[k][0], window_sizes=(16, 16), window_strides=windows[k][1]
        )

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(windows))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (offsets, strides), got in zip(windows, results):
        assert got.tobytes() == np.stack(forward_oracle(x, offsets, (16, 16), strides, False)).tobytes()


# ---- PyTorch ------------------------------------------------------------------------------------


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    pytest.importorskip("torch")
    return request.param


def test_tensors_with_autograd(device, rng):
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 6, 7, dtype=torch.float64, device=device, requires_grad=True)
    offsets = torch.as_tensor(rng.integers(0, 3, (4, 2)), device=device)  # windows as tensors, too
    strides = rng.choice([1, -1], (4, 2))
    y = cd.slice1_batch(x, window_offsets=offsets, window_sizes=(3, 4), window_strides=strides, per_sample=True)
    assert type(y) is torch.Tensor and y.device == x.device and y.grad_fn.name() == "Slice1BatchBackward"
    want = forward_oracle(x.detach().cpu().numpy(), offsets.cpu().numpy(), (3, 4), strides, True)
    assert y.detach().cpu().numpy().tobytes() == np.stack(want).tobytes()
    assert torch.autograd.gradcheck(
        lambda t: cd.slice1_batch(
            t, window_offsets=offsets, window_sizes=(3, 4), window_strides=strides, per_sample=True
        ),
        (x,),
    )
    assert torch.autograd.gradgradcheck(
        lambda t: cd.slice1_batch(
            t, window_offsets=offsets, window_sizes=(3, 4), window_strides=strides, per_sample=True
        ),
        (x,),
    )
    # Overlapping windows of one tensor, each of its own size: the gradient sums them.
    z = torch.randn(6, 7, dtype=torch.float64, device=device, requires_grad=True)
    offsets, sizes = rng.integers(0, 3, (5, 2)), rng.integers(1, 4, (5, 2))
    strides = rng.choice([1, -1, 2], (5, 2))
    parts = cd.slice1_batch(z, window_offsets=offsets, window_sizes=sizes, window_strides=strides)
    assert isinstance(parts, list) and len(parts) == 5

    def windows(t):
        return tuple(cd.slice1_batch(t, window_offsets=offsets, window_sizes=sizes, window_strides=strides))

    assert torch.autograd.gradcheck(windows, (z,)) and torch.autograd.gradgradcheck(windows, (z,))


def test_the_gradient_of_tensors_equals_autograd_of_a_loop(device, rng):
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 20, 24, dtype=torch.float32, device=device, requires_grad=True)
    offsets = np.c_[np.zeros(16, int), rng.integers(0, 5, 16), rng.integers(0, 9, 16)]
    flips = rng.choice([1, -1], 16)
    strides = np.c_[np.ones(16, int), np.ones(16, int), flips]
    dy = torch.randn(16, 3, 16, 16, device=device)
    (ours,) = torch.autograd.grad(
        cd.slice1_batch(x, window_offsets=offsets, window_sizes=(3, 16, 16), window_strides=strides), x, dy
    )
    loop = [x[:, o[1] : o[1] + 16, o[2] : o[2] + 16] for o in offsets]
    loop = torch.stack([w.flip(-1) if f < 0 else w for w, f in zip(loop, flips)])
    (theirs,) = torch.autograd.grad(loop, x, dy)
    torch.testing.assert_close(ours, theirs)  # sums in another order: equal to rounding


def test_tensors_under_torch_compile_run_between_graphs():
    """No operator (windows are data): compiled code runs the call eagerly, a graph break;
    functorch transforms, which need one, are refused with a message."""
    torch = pytest.importorskip("torch")
    x = torch.randn(4, 4, requires_grad=True)

    def f(t):
        return cd.slice1_batch(t, window_offsets=[[0, 0], [1, 1]], window_sizes=(2, 2), window_strides=[1, -1]) * 2

    y = torch.compile(f, backend="eager")(x)
    assert torch.equal(y, f(x))
    y.sum().backward()
    assert torch.equal(x.grad, torch.tensor([[2.0, 2, 0, 0], [2, 4, 2, 0], [0, 2, 2, 0], [0, 0, 0, 0]]))
    with pytest.raises(TypeError, match="slice1_batch: has no torch operator"):
        torch.func.vmap(lambda t: cd.slice1_batch(t, window_offsets=[[0, 0]], window_sizes=(2, 2)))(
            torch.randn(3, 4, 4)
        )


def test_sums_in_lanes_equal_sums_by_element(xp, rng, monkeypatch):
    """Large gradients add four elements per work item (kernels.SUM_LANES_FROM); forced on
    for small ones here, the bits are the oracle's."""
    monkeypatch.setattr(kernels, "SUM_LANES_FROM", 0)
    run_windows._window_grad_op.cache_clear()
    try:
        for dtype in (np.float16, np.float32, np.float64, np.int8):
            shape = (5, 6, 13)
            offsets, sizes, strides = random_windows(rng, shape, 6, shared=True)
            results = forward_oracle(np.empty(shape), offsets, sizes, strides, False)
            dys = [(rng.standard_normal(r.shape) * 8).astype(dtype) for r in results]
            got = cd.slice1_batch_grad(
                xp.asarray(np.stack(dys)), shape, window_offsets=offsets, window_sizes=sizes, window_strides=strides
            )
            want = grad_oracle(dys, shape, offsets, sizes, strides, False, dtype)
            assert to_host(got).tobytes() == want.tobytes(), dtype
    finally:
        run_windows._window_grad_op.cache_clear()


@pytest.mark.parametrize("dtype", [">f4", ">i4", ">f2", ">c8", ">f8"])
def test_byte_swapped_gradients_are_summed_as_numbers(xp, dtype):
    """The kernels add native numbers: gradients of another byte order are added by value."""
    if xp is not np:
        pytest.skip("CuPy has no byte-swapped arrays")
    dy = np.full((2, 2), 255 if dtype == ">i4" else 1.5, dtype)
    got = cd.slice1_batch_grad(dy, (3,), window_offsets=[[0], [1]], window_sizes=[2], directml_types=False)
    assert got.dtype == np.dtype(dtype) and got.tolist() == (dy[0, 0] * np.array([1, 2, 1])).tolist()
    out = np.zeros(3, dtype)
    assert (
        cd.slice1_batch_grad(dy[:1], (3,), window_offsets=[[1]], window_sizes=[2], directml_types=False, out=out) is out
    )
    assert out.tolist() == (dy[0, 0] * np.array([0, 1, 1])).tolist()
    with pytest.raises(BindingError, match="overlaps"):  # out's rules hold against dy as given
        cd.slice1_batch_grad(
            dy, (4,), window_offsets=[[0], [1]], window_sizes=[2], directml_types=False, out=dy.reshape(4)
        )
    assert dy.tolist() == np.full((2, 2), dy[0, 0]).tolist()


def test_a_negative_strided_out_takes_the_windows(xp):
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    for out in (xp.zeros((2, 2, 4))[:, ::-1], xp.zeros((2, 2, 4))[:, :, ::-1], xp.zeros((2, 2, 4))[::-1]):
        assert cd.slice1_batch(x, window_offsets=[[0, 0], [1, 0]], window_sizes=[2, 4], out=out) is out
        assert to_host(out).tolist() == np.stack([to_host(x)[0:2], to_host(x)[1:3]]).tolist()


def test_half_gradients_two_bytes_past_a_four_byte_boundary(xp):
    """Halves are summed into floats: 2-byte reads at an address of 2 mod 4 are aligned."""
    dy = xp.ones(9, np.float16)[1:].reshape(2, 4)
    assert to_host(cd.slice1_batch_grad(dy, (6,), window_offsets=[[0], [2]], window_sizes=[4])).tolist() == [
        1,
        1,
        2,
        2,
        1,
        1,
    ]


def test_an_empty_batch_still_keeps_the_rules(xp):
    x = xp.ones((4, 4))
    with pytest.raises(DescriptorError, match=r"window_sizes\[0\] = -5 must be an unsigned 32-bit value"):
        cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[-5, 2])
    with pytest.raises(DescriptorError, match=r"window_strides\[1\] = 0 must be non-zero"):
        cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[2, 2], window_strides=[1, 0])
    with pytest.raises(DescriptorError, match=r"x\.ndim = 2 is not supported at feature level 2_1"):
        cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[2, 2], feature_level="2_1")
    assert cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[2, 2]).shape == (0, 2, 2)

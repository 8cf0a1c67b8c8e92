"""``cudadml.fuse``: functions of data-movement calls traced into one graph, against the same
functions run eagerly (NumPy on the reference backend and on the emulated kernels, CuPy on the
GPU), bit for bit; the trace cache; the refusals; PyTorch's forward and backward."""

import re
import sys

import numpy as np
import pytest

import cudadml as cd
import cudadml.numpy as cnp
from cudadml.testing import CANARY, POISON, aligned_empty, random_array, to_host

fuse_module = sys.modules["cudadml.fuse"]  # the module (cd.fuse is the function)


@pytest.fixture
def poisoned(monkeypatch):
    """Every result a fused call allocates is poisoned, between poisoned canaries: returns the
    check that every canary byte is still poison (results are compared with the eager bytes,
    which hold no poison byte, so an unwritten element shows)."""
    regions = []
    allocate = fuse_module._new_array

    def new_array(kind, device):
        _, zeros = allocate(kind, device)
        xp = np if kind == "numpy" else __import__("cupy")

        def poisoned_new(shape, dtype):
            dtype = np.dtype(dtype)
            nbytes = int(np.prod(shape)) * dtype.itemsize
            raw = aligned_empty(CANARY + nbytes + CANARY, xp)
            raw[...] = POISON
            regions.append((raw, nbytes))
            return raw[CANARY : CANARY + nbytes].view(dtype).reshape(shape)

        return poisoned_new, zeros

    monkeypatch.setattr(fuse_module, "_new_array", new_array)

    def canaries_intact():
        for raw, nbytes in regions:
            host = to_host(raw)
            assert (host[:CANARY] == POISON).all() and (host[CANARY + nbytes :] == POISON).all()
        regions.clear()
        return True

    return canaries_intact


def _same(fused, eager):
    """The same structure of arrays, each C-contiguous, of the eager result's shape, dtype and bytes."""
    if isinstance(eager, (list, tuple)):
        assert type(fused) is type(eager) and len(fused) == len(eager)
        for f, e in zip(fused, eager):
            _same(f, e)
        return
    assert type(fused) is type(eager)
    assert fused.shape == eager.shape and fused.dtype == eager.dtype and fused.flags.c_contiguous
    assert to_host(fused).tobytes() == np.ascontiguousarray(to_host(eager)).tobytes()


def _layouts(x, xp):
    """``x`` as it comes, and as views of it: offset (an address past 16-byte alignment),
    reversed on some axes, and strided."""
    big = xp.empty((*x.shape[:-1], x.shape[-1] + 3), x.dtype)
    big[..., 1 : 1 + x.shape[-1]] = x
    flipped = xp.empty_like(x)[..., ::-1] if x.ndim == 1 else xp.empty_like(x)[::-1, ..., ::-1]
    flipped[...] = x
    gapped = xp.empty((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)[..., ::2]
    gapped[...] = x
    return [x, big[..., 1 : 1 + x.shape[-1]], flipped, gapped]


# ---- the cases: functions of array calls --------------------------------------------------------------


def focus(x):
    """Space to depth: four strided slices joined on channels."""
    return cd.join([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], axis=1)


def focus_numpy(x):
    return cnp.concatenate([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], axis=1)


def qkv_heads(x, heads):
    """(B, T, 3C) split into queries, keys and values, each as (B, heads, T, C / heads)."""
    q, k, v = cd.split(x, parts=3, axis=-1)
    b, t, c = q.shape

    def split_heads(y):
        y = y.reshape(b, t, heads, c // heads)
        return cd.join([y[:, None, :, h] for h in range(heads)], axis=1)

    return split_heads(q), split_heads(k), split_heads(v)


def crops(x):
    """Crops of one image joined on the batch axis, two read backwards."""
    flipped = cd.slice1(x, window_offsets=[0, 0, 1, 2], window_sizes=[1, 3, 4, 4], window_strides=[1, 1, -1, 1])
    mirrored = cd.strided_slice(x, np.s_[..., 3:, ::-1])
    return cd.join([x[..., 0:4, 1:5], flipped, mirrored[..., :4, :4]], axis=0)


def rejoin_reversed(x):
    parts = cd.split(x, split_sizes=[1, 3, 2], axis=1)
    return cd.join(parts[::-1], axis=1)


def rejoin_numpy(x):
    return cnp.concatenate(cnp.array_split(x, 3, axis=-1)[::-1], axis=-1)


def pads(x):
    return cnp.pad(x, ((0, 0), (1, 2), (0, 0), (3, 1))), cnp.pad(x[:, :, 1:-1], 1)


def gradients(x):
    """SLICE_GRAD and the gradient of an index, fed by and feeding other calls; SLICE reading
    elements again (a zero stride)."""
    window = {"window_offsets": [0, 1, 2, 0], "window_sizes": [2, 3, 7, 8], "window_strides": [1, 1, -3, 1]}
    placed = cd.slice_grad(x[:, :3, :3], (2, 6, 9, 8), **window)
    key = np.s_[:, ::-2, 1, 1::3]
    indexed = cd.strided_slice_grad(cd.strided_slice(x, key), x.shape, key)
    repeated = cd.slice(x, offsets=[1, 0, 2, 1], sizes=[1, 3, 2, 4], strides=[1, 2, 0, 1])
    return placed[:, 1:], indexed, repeated


def mixed(x):
    """Flips, rolls of one axis, the stack family, splits at decreasing indices (overlapping
    sections), windows per sample; an input used several times and returned, an intermediate
    used several times and returned."""
    top = cnp.flipud(x[0])
    rolled = cnp.roll(top, 2, axis=-1)
    parts = cnp.split(x, [2, 1], axis=2)  # sections overlap: a window each
    windows = cd.slice1_batch(
        x[1], window_offsets=[[0, 0, 0], [1, 2, 3]], window_sizes=[2, 3, 4], window_strides=[1, -1, 2]
    )
    return (
        cnp.concatenate([x[0], x.reshape(8, -1)[::3]], axis=None),
        cnp.vstack([top, rolled, top]),
        cnp.hstack([x[1, 0], x[0, 1]]),
        parts,
        windows,
        top,
        x,
        [cnp.fliplr(top), [cnp.dstack([x[0, 0], x[1, 1]])]],
    )


CASES = {
    "focus": (focus, (2, 3, 6, 8), ()),
    "focus_numpy": (focus_numpy, (2, 3, 6, 8), ()),
    "qkv_heads": (qkv_heads, (2, 5, 24), (4,)),
    "crops": (crops, (1, 3, 8, 8), ()),
    "rejoin_reversed": (rejoin_reversed, (2, 6, 3, 7), ()),
    "rejoin_numpy": (rejoin_numpy, (2, 6, 3, 7), ()),
    "pads": (pads, (2, 3, 5, 4), ()),
    "gradients": (gradients, (2, 6, 5, 8), ()),
    "mixed": (mixed, (2, 4, 6, 8), ()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_is_eager(xp, rng, poisoned, case):
    fn, shape, extra = CASES[case]
    fused = cd.fuse(fn)
    for x in _layouts(random_array(shape, np.float32, rng, xp), xp):
        _same(fused(x, *extra), fn(x, *extra))
        assert poisoned()
    for program in fused._programs.values():  # one trace, a graph per layout, each one launch
        assert program.graphs
        for compiled in program.graphs.values():
            assert " in 1 launch" in repr(compiled.op)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.float16, np.int32, np.int64, np.complex128])
def test_every_element_size(xp, rng, poisoned, dtype):
    fused = cd.fuse(focus_numpy)
    for x in _layouts(random_array((1, 2, 4, 6), dtype, rng, xp), xp)[:2]:
        _same(fused(x), focus_numpy(x))
        assert poisoned()


def test_arrays_of_any_layout(xp, rng, poisoned):
    """Broadcast axes, 0-dimensional, empty and 8-dimensional arrays, offsets that no
    dimension's stride divides, misaligned addresses (a copy), 16-byte elements."""

    def fn(a, b):
        return a[::-1], cd.join([a, b], axis=1), a, b.reshape(-1)[::-3]

    x = random_array((4, 6), np.float32, rng, xp)
    cases = [(xp.broadcast_to(x[1:2], (4, 6)), x), (x, x[:, ::-1])]
    if xp is np:  # element 0 at an odd address: the array is copied first
        odd = np.zeros(4 * 24 + 1, np.uint8)[1:].view(np.float32).reshape(4, 6)
        odd[...] = x
        cases.append((odd, odd))
    for a, b in cases:
        _same(cd.fuse(fn)(a, b), fn(a, b))
    z = random_array((3, 5), np.complex128, rng, xp)
    words = cd.fuse(lambda z: (cnp.flip(z, 1), cnp.pad(z, 1), z, cnp.split(z, [1, 4], axis=1)))
    for view in _layouts(z, xp):
        _same(words(view), words.__wrapped__(view))
    eight = random_array((2,) * 7 + (5,), np.int16, rng, xp)
    folded = cd.fuse(lambda a: (cnp.flip(a, 3), a))
    for view in (eight[..., 1:3], eight[..., 1:4], eight[..., ::-2]):  # offsets of 2, 4 bytes; reversed
        _same(folded(view), folded.__wrapped__(view))
    scalar = xp.asarray(np.float32(2.5))
    _same(cd.fuse(lambda s: (s, s.reshape(1, 1)))(scalar), (scalar, scalar.reshape(1, 1)))
    empty = xp.zeros((0, 3), np.float32)
    _same(cd.fuse(lambda e, b: (e, cd.join([e, e]), b[1:]))(empty, x), (empty, empty[:0], x[1:]))
    assert poisoned()


def test_the_function_is_traced_once_per_layout_of_its_arguments(rng):
    traces = []

    @cd.fuse
    def flip(x, axis, *, parts):
        if isinstance(x, fuse_module.Traced):  # (the eager runs below call it too)
            traces.append(x.shape)
        return cnp.array_split(cnp.flip(x, axis), parts, axis=axis)

    x = random_array((4, 6), np.int16, rng)
    _same(flip(x, 0, parts=3), flip.__wrapped__(x, 0, parts=3))
    _same(flip(x + 1, 0, parts=3), flip.__wrapped__(x + 1, 0, parts=3))
    assert len(traces) == 1
    for view in _layouts(x, np)[1:]:  # other strides and alignment: compiled again, not traced
        _same(flip(view, 0, parts=3), flip.__wrapped__(view, 0, parts=3))
    assert len(traces) == 1
    (program,) = flip._programs.values()
    assert len(program.graphs) == 4
    flip(x, 1, parts=3)
    flip(x, 0, parts=2)
    flip(x[:3], 0, parts=3)
    flip(x.astype(np.float32), 0, parts=3)
    assert len(traces) == 5
    flip(x, np.int64(1), parts=3)  # another type is another key
    assert len(traces) == 6
    flip.cache_clear()
    flip(x, 0, parts=3)
    assert len(traces) == 7


def test_the_cache_is_bounded(rng, monkeypatch):
    monkeypatch.setattr(fuse_module, "PROGRAMS", 3)
    fused = cd.fuse(lambda x, k: x[k:])
    x = random_array((8,), np.uint8, rng)
    for k in range(6):
        assert np.array_equal(fused(x, k), x[k:])
    assert len(fused._programs) == 3


def test_arguments_results_and_copies(rng):
    """Lists of arrays in, nested lists and tuples out; an argument returned as it is, an array
    no traced call made (a constant) and empty results are new arrays."""
    constant = np.arange(3)

    @cd.fuse
    def f(xs, *, axis=0):
        a, b = xs
        joined = cd.join([a, b], axis=axis)
        return (
            joined,
            [a, (joined, constant)],
            a[:0],
            cd.slice_grad(a[:0], (2, 3), window_offsets=[0, 0], window_sizes=[0, 3]),
        )

    a, b = random_array((2, 3), np.float64, rng), random_array((2, 3), np.float64, rng)
    joined, (a_copy, (joined_again, constant_copy)), empty, zeros = f([a, b])
    assert joined is joined_again and np.array_equal(joined, np.concatenate([a, b]))
    assert a_copy is not a and not np.shares_memory(a_copy, a) and np.array_equal(a_copy, a)
    assert constant_copy is not constant and np.array_equal(constant_copy, constant)
    assert empty.shape == (0, 3) and zeros.shape == (2, 3) and not zeros.any()
    assert np.array_equal(f((a, b), axis=1)[0], np.concatenate([a, b], axis=1))


def test_a_fused_function_calls_another_in_its_graph(rng):
    inner = cd.fuse(lambda x: cnp.flip(x, 0))
    outer = cd.fuse(lambda x: cnp.concatenate([inner(x), x]))
    x = random_array((3, 2), np.int8, rng)
    assert np.array_equal(outer(x), np.concatenate([x[::-1], x]))
    assert not inner._programs  # traced as part of outer


def test_descriptor_errors_are_the_eager_calls(rng):
    fused = cd.fuse(lambda x: cd.slice1(x, window_offsets=[5], window_sizes=[4]))
    x = random_array((6,), np.float32, rng)
    with pytest.raises(cd.DescriptorError) as fused_error:
        fused(x)
    with pytest.raises(cd.DescriptorError) as eager_error:
        fused.__wrapped__(x)
    assert str(fused_error.value) == str(eager_error.value)


# ---- refusals -----------------------------------------------------------------------------------------


def _apart(what):
    return re.escape(f"cudadml.fuse: {what} on a traced array would run apart from the fused graph")


CONSTANT = np.ones(3, np.float32)
REFUSED = [
    (lambda x: x + 1, _apart("the operator +")),
    (lambda x: -x[0], _apart("the operator unary -")),
    (lambda x: np.asarray(x), _apart("numpy.asarray (__array__)")),
    (lambda x: x[0, 0] * float(x[0, 0]), _apart("float()")),
    (lambda x: x.sum(), _apart("x.sum")),
    (lambda x: np.sin(x), _apart("numpy.sin")),
    (lambda x: np.add.reduce(x), _apart("numpy.add.reduce")),
    (lambda x: np.concatenate([x, x]), _apart("numpy.concatenate (cudadml.numpy.concatenate is traced)")),
    (lambda x: cnp.pad(x, 1, constant_values=5), "cudadml.fuse: pad with a constant other than 0"),
    (lambda x: cnp.roll(x, 1, axis=(0, 1)), "cudadml.fuse: slice1_batch_grad adds"),
    (lambda x: cd.join([x, x], out=np.empty((8, 6), np.float32)), re.escape("cudadml.fuse: join(..., out=...)")),
    (lambda x: cnp.concatenate([x, x], out=np.empty((8, 6), np.float32)), "cudadml.fuse: out= with a traced array"),
    (lambda x: cd.strided_slice(x, 1, stream=1), re.escape("cudadml.fuse: strided_slice(..., stream=...)")),
    (lambda x: cd.join([x[0, :3], CONSTANT]), "cudadml.fuse: join: xs.1. is a numpy.ndarray, not a traced array"),
    (lambda x: cnp.concatenate([x, x.view(np.int32)]), _apart("x.astype")),
    (lambda x: x.T, _apart("x.T")),
    (lambda x: [x[0] == x[1]], _apart("the operator ==")),
    (lambda x: x.__setitem__(0, 1), _apart("item assignment (x[...] = ...)")),
    (lambda x: None, "cudadml.fuse: <lambda> returned a NoneType"),
    (lambda x: x.shape, "cudadml.fuse: <lambda> returned a int"),
]


@pytest.mark.parametrize(("fn", "message"), REFUSED)
def test_what_would_run_apart_is_refused_by_name(rng, fn, message):
    x = random_array((4, 6), np.float32, rng)
    with pytest.raises(TypeError, match=message):
        cd.fuse(fn)(x)


def test_arguments_are_refused_by_name(rng):
    fused = cd.fuse(lambda x, table: x)
    x = random_array((4,), np.float32, rng)
    with pytest.raises(TypeError, match=r"cudadml.fuse: table is a dict, which is not hashable"):
        fused(x, table={})
    with pytest.raises(TypeError, match=r"cudadml\.fuse: <lambda> was given no array to trace"):
        fused(1, 2)
    with pytest.raises(TypeError, match="a MaskedArray, a NumPy subclass"):
        fused(np.ma.masked_array(x), None)
    with pytest.raises(TypeError, match=r"cudadml\.fuse takes a function, not int"):
        cd.fuse(3)


def test_a_traced_array_that_escapes_has_no_values(rng):
    kept = []
    fused = cd.fuse(lambda x: kept.append(x) or x[::-1])
    x = random_array((4,), np.float32, rng)
    fused(x)
    with pytest.raises(TypeError, match="used after its fused function returned"):
        cd.join([kept[0], kept[0]])
    with pytest.raises(TypeError, match="used after its fused function returned"):
        np.asarray(kept[0])


# ---- PyTorch ------------------------------------------------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _integers(torch, shape, generator, device="cpu", dtype=None):
    """Small integers as floats: any order of adding them gives the same bits."""
    dtype = dtype or torch.float64
    return torch.randint(-8, 9, shape, generator=generator, dtype=torch.int64).to(dtype=dtype, device=device)


def _leaves(result):
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


def _check_torch(torch, fn, shape, *extra, device="cpu", seed=0):
    generator = torch.Generator().manual_seed(seed)
    fused = cd.fuse(fn)
    x = _integers(torch, shape, generator, device).requires_grad_()
    got, expected = _leaves(fused(x, *extra)), _leaves(fn(x, *extra))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.device == e.device and g.is_contiguous() and torch.equal(g, e)
        assert g.grad_fn is not None and type(g.grad_fn).__name__ == "FusedBackward"
    grads = [_integers(torch, e.shape, generator, device) for e in expected]
    (fused_grad,) = torch.autograd.grad(got, x, grads)
    (eager_grad,) = torch.autograd.grad(expected, x, grads)
    assert torch.equal(fused_grad, eager_grad)
    return fused


@pytest.mark.parametrize("case", ["focus", "qkv_heads", "crops", "rejoin_reversed", "gradients"])
def test_torch_forward_and_backward(torch, case):
    fn, shape, extra = CASES[case]
    _check_torch(torch, fn, shape, *extra)


def test_torch_gradients_of_shared_values_are_added(torch):
    """An input fed to several calls and returned, an intermediate used twice, parts of a split
    used twice or never: each gradient contribution is an output of the one backward graph."""

    def fn(x):
        a, b, _ = cd.split(x, split_sizes=[1, 2, 3], axis=0)  # the last part's gradient is zeros
        return cd.join([b, b, x[::2]], axis=0), cd.join([a, b], axis=0), x, cd.strided_slice(x, np.s_[1:, ::-1])

    fused = _check_torch(torch, fn, (6, 5))
    (program,) = fused._programs.values()
    backward = next(iter(program.backwards.values()))
    assert len(backward.targets) > 1 and set(backward.targets) == {0}
    (compiled,) = backward.graphs.values()
    assert " in 1 launch" in repr(compiled.op)


def test_torch_gradient_of_a_slice_that_reads_elements_again(torch):
    _check_torch(torch, lambda x: cd.slice(x, offsets=[1, 0], sizes=[3, 4], strides=[0, 1]), (3, 4))


def test_torch_gradcheck_and_second_derivatives(torch):
    fused = cd.fuse(lambda x: focus(x)[:, 1:])
    x = torch.randn(1, 2, 4, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fused, (x,))
    assert torch.autograd.gradgradcheck(fused, (x,))


def test_torch_without_grad_forward_mode_and_transforms(torch):
    fused = cd.fuse(focus)
    x = torch.randn(2, 2, 4, 6)
    y = fused(x)
    assert y.grad_fn is None and torch.equal(y, focus(x))
    with torch.no_grad():
        assert fused(x.requires_grad_()).grad_fn is None
    tangent = torch.randn(2, 2, 4, 6)
    import torch.autograd.forward_ad as fw

    with fw.dual_level():
        dual = fused(fw.make_dual(x.detach(), tangent))
        assert torch.equal(fw.unpack_dual(dual).tangent, focus(tangent))
    samples = torch.randn(3, 2, 2, 4, 6)
    batched = torch.func.vmap(fused)(samples)  # under a transform: the eager calls, which it sees
    assert torch.equal(batched, torch.stack([focus(s) for s in samples]))
    parameter = torch.nn.Parameter(torch.randn(1, 2, 4, 4))
    fused(parameter).sum().backward()
    assert torch.equal(parameter.grad, torch.ones_like(parameter))


def test_torch_dtypes_numpy_lacks(torch):
    fused = cd.fuse(lambda x: cd.join([x[1:], x[:1]], axis=0, directml_types=False))
    x = torch.randn(4, 3).to(torch.bfloat16)
    y = fused(x)
    assert y.dtype == torch.bfloat16 and torch.equal(y, torch.cat([x[1:], x[:1]]))


@pytest.mark.gpu
def test_torch_on_the_gpu(torch):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    for case in ("focus", "qkv_heads", "gradients"):
        fn, shape, extra = CASES[case]
        _check_torch(torch, fn, shape, *extra, device="cuda")

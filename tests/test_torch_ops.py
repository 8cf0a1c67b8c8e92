"""The PyTorch operators (``torch.ops.cudadml``): compiled without graph breaks, exported,
vmapped in one launch, captured in CUDA graphs, and checked by ``torch.library.opcheck``.

CPU everywhere; the CUDA cases run where torch and CuPy both see a GPU.
"""

import numpy as np
import pytest

import cudadml as cd
from cudadml.testing import random_array

torch = pytest.importorskip("torch")
from torch.autograd import gradcheck, gradgradcheck  # noqa: E402
from torch.library import opcheck  # noqa: E402

from cudadml.interop import torch as adapter  # noqa: E402  (registers the operators)

OPS = torch.ops.cudadml
LEVEL = int(cd.FeatureLevel.newest())
KEY = (slice(None, None, -2), None, 1, slice(5, 0, -2))


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch.device(request.param)


class Every(torch.nn.Module):
    """Every array function, on tensors."""

    def forward(self, x, dy):
        a = cd.slice(x, offsets=[1, 0, 2], sizes=[2, 3, 2], strides=[1, 0, 3])  # a zero stride: backward sums
        b = cd.slice1(x, window_offsets=[0, 1, 1], window_sizes=[3, 3, 6], window_strides=[2, -1, -3])
        c = cd.slice_grad(dy, (3, 4, 8), window_offsets=[0, 1, 1], window_sizes=[3, 3, 6], window_strides=[2, -1, -3])
        p, q, r = cd.split(x, split_sizes=[1, 0, 3], axis=1)
        j = cd.join([r, q, p], axis=-2)
        s = cd.strided_slice(x, KEY)
        g = cd.strided_slice_grad(s, (3, 4, 8), KEY)
        return a, b, c, p, r, j, s, g


def _integers(shape, device, grad=True):
    """float64 small integers: every sum exact, so any order of additions gives the same bits."""
    t = torch.randint(-50, 50, shape, dtype=torch.float64, device=device)
    return t.requires_grad_(grad)


def _loss(outputs, weights):
    return sum((o * w).sum() for o, w in zip(outputs, weights))


def _run(module, x, dy, weights):
    outputs = module(x, dy)
    _loss(outputs, weights).backward()
    grads = x.grad, dy.grad
    x.grad = dy.grad = None
    return [o.detach() for o in outputs], grads


def _same(a, b):
    return len(a) == len(b) and all(s.shape == t.shape and torch.equal(s, t) for s, t in zip(a, b))


def test_every_operator_traces_in_one_graph(device):
    x, dy = _integers((3, 4, 8), device), _integers((2, 3, 2), device)
    explanation = torch._dynamo.explain(Every())(x, dy)
    assert explanation.graph_break_count == 0, [b.reason for b in explanation.break_reasons]
    assert explanation.graph_count == 1


def test_compiled_fullgraph_gives_the_eager_bits_forward_and_backward(device):
    torch._dynamo.reset()
    x, dy = _integers((3, 4, 8), device), _integers((2, 3, 2), device)
    module = Every()
    weights = [torch.randint(-9, 9, o.shape, dtype=torch.float64, device=device) for o in module(x, dy)]
    eager = _run(module, x, dy, weights)
    compiled = _run(torch.compile(module, fullgraph=True), x, dy, weights)
    assert _same(eager[0], compiled[0]) and _same(eager[1], compiled[1])


def test_an_exported_program_runs(device):
    x, dy = _integers((3, 4, 8), device, False), _integers((2, 3, 2), device, False)
    program = torch.export.export(Every(), (x, dy))
    names = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert {"cudadml.slice.default", "cudadml.split.default", "cudadml.join.default"} <= names
    assert _same(program.module()(x, dy), Every()(x, dy))
    y = _integers((5, 4, 8), device, False)  # other shapes: the program was specialised on these
    with pytest.raises(Exception):  # noqa: B017 (export's guard error type varies by version)
        program.module()(y, dy)


VMAPPED = [
    ("slice", lambda t: cd.slice(t, offsets=[1, 0], sizes=[2, 3], strides=[2, 0])),
    ("slice1", lambda t: cd.slice1(t, window_offsets=[0, 1], window_sizes=[3, 3], window_strides=[2, -1])),
    (
        "slice_grad",
        lambda t: cd.slice_grad(t[:2, :3], (4, 5), window_offsets=[0, 1], window_sizes=[3, 3], window_strides=[2, -1]),
    ),
    ("split", lambda t: cd.split(t, split_sizes=[1, 3], axis=0)),
    ("strided_slice", lambda t: cd.strided_slice(t, np.s_[::-2, None, 3])),
    ("strided_slice_grad", lambda t: cd.strided_slice_grad(t[:2, 0], (4, 5), np.s_[::-2, 3])),
]


@pytest.mark.parametrize(("name", "fn"), VMAPPED, ids=[v[0] for v in VMAPPED])
@pytest.mark.parametrize("in_dim", [0, 2])
def test_vmap_is_one_launch_and_equals_a_loop(device, monkeypatch, name, fn, in_dim):
    batch = torch.from_numpy(random_array((6, 4, 5), np.float32, np.random.default_rng(7))).to(device)
    batch = batch.movedim(0, in_dim)  # 6 samples of (4, 5), batched on axis in_dim
    runs = []
    real = adapter._run
    monkeypatch.setattr(adapter, "_run", lambda *a, **k: runs.append(1) or real(*a, **k))
    got = torch.func.vmap(fn, in_dims=in_dim)(batch)
    assert len(runs) == 1
    loop = [fn(batch.select(in_dim, k)) for k in range(6)]
    if name == "split":
        assert all(_same_bits(g, torch.stack([parts[k] for parts in loop])) for k, g in enumerate(got))
    else:
        assert _same_bits(got, torch.stack(loop))


def _same_bits(a, b):
    """Equal shapes and bits (random bits hold NaNs, which ``torch.equal`` calls unequal)."""
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


# Calls valid per sample whose batched form is not: the batch axis takes a rank past DirectML's
# 8 dimensions, or past the 5 of SLICE at feature level 2_1. Each: a call, the sample shape.
PAST_THE_RANK_LIMIT = [
    ("strided_slice_8d", lambda t: cd.strided_slice(t, np.s_[..., ::-1, 1:]), (2, 1, 2, 1, 2, 1, 2, 3)),
    ("split_8d", lambda t: cd.split(t, split_sizes=[1, 2], axis=-1), (2, 1, 2, 1, 2, 1, 2, 3)),
    ("join_8d", lambda t: cd.join([t, t[..., :1]], axis=-1), (2, 1, 2, 1, 2, 1, 2, 3)),
    (
        "slice_5d_at_2_1",
        lambda t: cd.slice(
            t, offsets=[1, 0, 0, 1, 0], sizes=[1, 2, 2, 1, 3], strides=[1, 1, 0, 1, 1], feature_level="2_1"
        ),
        (2, 2, 3, 2, 3),
    ),
    (
        "slice_grad_8d",
        lambda t: cd.slice_grad(
            t,
            (2, 1, 2, 1, 2, 1, 3, 3),
            window_offsets=[0] * 8,
            window_sizes=[2, 1, 2, 1, 2, 1, 2, 3],
            window_strides=[1, 1, 1, 1, -1, 1, 1, 1],
        ),
        (2, 1, 2, 1, 2, 1, 2, 3),
    ),
]


@pytest.mark.parametrize(("name", "fn", "shape"), PAST_THE_RANK_LIMIT, ids=[c[0] for c in PAST_THE_RANK_LIMIT])
@pytest.mark.parametrize("size", [3, 0])
def test_vmap_of_calls_valid_per_sample_past_the_batched_rank_limit(device, name, fn, shape, size):
    listed = lambda r: list(r) if isinstance(r, (list, tuple)) else [r]  # noqa: E731
    batch = torch.from_numpy(random_array((size, *shape), np.float32, np.random.default_rng(3))).to(device)
    got = listed(torch.func.vmap(fn)(batch))
    if size:
        expected = [torch.stack(parts) for parts in zip(*[listed(fn(sample)) for sample in batch.unbind()])]
    else:  # no sample: empty results of a sample's shapes
        expected = [r.new_empty(0, *r.shape) for r in listed(fn(torch.zeros(shape, device=device)))]
    assert len(got) == len(expected) and all(_same_bits(g, e) for g, e in zip(got, expected))


def test_vmap_refuses_what_a_sample_would():
    """SLICE at feature level 2_1 takes 4 or 5 dimensions: 3-D samples are refused batched as alone."""
    call = lambda t: cd.slice(t, offsets=[0, 0, 0], sizes=[2, 2, 2], feature_level="2_1")  # noqa: E731
    for run in (call, torch.func.vmap(call)):
        with pytest.raises(cd.DescriptorError, match=r"x.ndim = 3 is not supported at feature level"):
            run(torch.zeros(2, 2, 2, 2)[0] if run is call else torch.zeros(2, 2, 2, 2))


def test_vmap_of_a_join_expands_unbatched_arrays(device):
    a, b = torch.randn(6, 2, 3, device=device), torch.randn(2, 1, device=device)
    got = torch.func.vmap(lambda s, t: cd.join([s, t, s], axis=1), in_dims=(0, None))(a, b)
    assert torch.equal(got, torch.stack([torch.cat([s, b, s], 1) for s in a]))


# ---- torch.func: every transform against torch's own indexing ----------------------------------

# name, a function of a (4, 5) tensor through cudadml, the same through torch's indexing ops
FUNCTIONS = [
    ("strided_slice", lambda t: cd.strided_slice(t, np.s_[::-1, 1:]), lambda t: t.flip(0)[:, 1:]),
    ("slice", lambda t: cd.slice(t, offsets=[1, 0], sizes=[2, 3], strides=[2, 0]), lambda t: t[1::2][:, [0, 0, 0]]),
    (
        "slice1",
        lambda t: cd.slice1(t, window_offsets=[0, 1], window_sizes=[3, 3], window_strides=[2, -1]),
        lambda t: t[0:3:2, 1:4].flip(1),
    ),
    (
        "split",
        lambda t: torch.cat([p.flatten() for p in cd.split(t, split_sizes=[1, 0, 4], axis=1)]),
        lambda t: torch.cat([t[:, :1].flatten(), t[:, 1:].flatten()]),
    ),
    ("join", lambda t: cd.join([t[:, 3:], t, t[:, :1]], axis=1), lambda t: torch.cat([t[:, 3:], t, t[:, :1]], 1)),
    (
        "strided_slice_grad",
        lambda t: cd.strided_slice_grad(t[:2, 0], (4, 5), np.s_[::-2, 3]),
        lambda t: t.new_zeros(4, 5).index_put((torch.tensor([3, 1]), torch.tensor(3)), t[:2, 0]),
    ),
]


def _squares(f, w):
    """A scalar of ``f`` that is not linear, so second derivatives are not all zero."""
    return lambda t: (f(t) ** 2 * w).sum()


# name, a transform of (f, a sample x, weights w of f's result, a tangent v of x, a batch xs)
TRANSFORMS = [
    ("grad", lambda f, x, w, v, xs: torch.func.grad(_squares(f, w))(x)),
    ("vjp", lambda f, x, w, v, xs: torch.func.vjp(f, x)[1](w)),
    ("jacrev", lambda f, x, w, v, xs: torch.func.jacrev(f)(x)),
    ("jvp", lambda f, x, w, v, xs: torch.func.jvp(f, (x,), (v,))),
    ("jacfwd", lambda f, x, w, v, xs: torch.func.jacfwd(f)(x)),
    ("hessian", lambda f, x, w, v, xs: torch.func.hessian(_squares(f, w))(x)),
    (
        "grad_of_grad",
        lambda f, x, w, v, xs: torch.func.grad(lambda t: torch.func.grad(_squares(f, w))(t).mul(v).sum())(x),
    ),
    ("vmap_of_grad", lambda f, x, w, v, xs: torch.func.vmap(torch.func.grad(_squares(f, w)))(xs)),
    ("grad_of_vmap", lambda f, x, w, v, xs: torch.func.grad(lambda b: torch.func.vmap(_squares(f, w))(b).sum())(xs)),
]


@pytest.mark.parametrize(("transform", "apply"), TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
@pytest.mark.parametrize(("name", "ours", "theirs"), FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
def test_torch_func_transforms_equal_torchs_own_indexing(device, transform, apply, name, ours, theirs):
    x, v = _integers((4, 5), device, False), _integers((4, 5), device, False)
    xs = _integers((3, 4, 5), device, False)
    w = torch.randint(-9, 9, theirs(x).shape, dtype=torch.float64, device=device)
    got, expected = apply(ours, x, w, v, xs), apply(theirs, x, w, v, xs)
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    assert _same(got, expected), f"{transform} of {name}: {got} != {expected}"


# ---- opcheck over dtypes, layouts and steps -------------------------------------------------------

DTYPES = [
    torch.bool,
    torch.int8,
    torch.uint8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
DIFFERENTIABLE = {torch.float32, torch.float64, torch.complex64, torch.complex128}


def _tensor(shape, dtype, device, rng, layout):
    """A tensor of random bits of ``shape``: contiguous, transposed or a stepped view."""
    if layout == "transposed":
        t = _tensor(shape[::-1], dtype, device, rng, "contiguous").permute(*reversed(range(len(shape))))
    elif layout == "stepped":
        t = _tensor((*shape[:-1], 2 * shape[-1]), dtype, device, rng, "contiguous")[..., ::2]
    else:
        bits = random_array(shape, np.uint8, rng) if dtype == torch.bool else None
        if bits is not None:
            t = torch.from_numpy(bits & 1).bool()
        else:
            raw = random_array((*shape, torch.empty((), dtype=dtype).element_size()), np.uint8, rng)
            t = torch.from_numpy(raw).view(dtype).reshape(shape)
            if dtype.is_floating_point or dtype.is_complex:  # finite values, so gradients compare
                t = torch.from_numpy(rng.integers(-100, 100, shape)).to(dtype)
        t = t.to(device)
    return t.detach().requires_grad_(dtype in DIFFERENTIABLE)


def _opcheck_cases(rng, device, dtype, layout):
    """``(operator, args, kwargs)`` of random shapes, windows with negative steps and parts."""
    flag = dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32)
    shape = tuple(int(n) for n in rng.integers(2, 6, 3))
    x = _tensor(shape, dtype, device, rng, layout)
    offsets = [int(rng.integers(0, n)) for n in shape]
    sizes = [int(rng.integers(1, n - o + 1)) for n, o in zip(shape, offsets)]
    steps = [int(rng.choice([1, 2, -1, -3])) for _ in shape]
    counts = [1 + (s - 1) // abs(st) for s, st in zip(sizes, steps)]
    axis = int(rng.integers(0, 3))
    cut = int(rng.integers(0, shape[axis] + 1))
    parts = [cut, shape[axis] - cut]
    others = [_tensor((*shape[:axis], n, *shape[axis + 1 :]), dtype, device, rng, layout) for n in parts]
    dy = _tensor(tuple(counts), dtype, device, rng, layout)
    slice_steps = [int(rng.integers(0, 3)) for _ in shape]  # 0 repeats an element
    slice_sizes = [
        int(rng.integers(1, 4)) if st == 0 else int(rng.integers(1, (n - o - 1) // st + 2))
        for n, o, st in zip(shape, offsets, slice_steps)
    ]
    options = (LEVEL, flag)
    return [
        (OPS.slice.default, (x, offsets, slice_sizes, slice_steps, *options)),
        (OPS.slice1.default, (x, offsets, sizes, steps, counts, *options)),
        (OPS.slice_grad.default, (dy, list(shape), offsets, sizes, steps, *options)),
        (OPS.split.default, (x, axis, parts, *options)),
        (OPS.join.default, (others, axis, *options)),
        (
            OPS.slice1.out,
            (x.detach(), offsets, sizes, steps, counts, *options),
            {"out": torch.empty(counts, dtype=dtype, device=device)},
        ),
        (
            OPS.slice.out,
            (x.detach(), offsets, slice_sizes, slice_steps, *options),
            {"out": torch.empty(slice_sizes, dtype=dtype, device=device)},
        ),
        (
            OPS.slice_grad.out,
            (dy.detach(), list(shape), offsets, sizes, steps, *options),
            {"out": torch.empty(shape, dtype=dtype, device=device)},
        ),
        (
            OPS.split.out,
            (x.detach(), axis, parts, *options),
            {"out": [torch.empty(o.shape, dtype=dtype, device=device) for o in others]},
        ),
        (
            OPS.join.out,
            ([o.detach() for o in others], axis, *options),
            {"out": torch.empty(shape, dtype=dtype, device=device)},
        ),
    ]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck(device, dtype, layout):
    rng = np.random.default_rng([DTYPES.index(dtype), len(layout)])
    for op, args, *kwargs in _opcheck_cases(rng, device, dtype, layout):
        opcheck(op, args, *kwargs)


@pytest.mark.parametrize("op", ["slice", "slice1", "slice_grad", "split", "join"])
def test_gradcheck_and_gradgradcheck_through_the_registered_backward(device, op):
    x = torch.rand(3, 4, 5, dtype=torch.float64, device=device, requires_grad=True)
    calls = {
        "slice": lambda t: OPS.slice(t, [1, 0, 2], [2, 3, 2], [1, 0, 1], LEVEL, True),
        "slice1": lambda t: OPS.slice1(t, [0, 1, 1], [3, 3, 4], [2, -1, -3], [2, 3, 2], LEVEL, True),
        "slice_grad": lambda t: OPS.slice_grad(
            t[:2, :3, :2], [3, 4, 5], [0, 1, 1], [3, 3, 4], [2, -1, -3], LEVEL, True
        ),
        "split": lambda t: OPS.split(t, 1, [1, 0, 3], LEVEL, True),
        "join": lambda t: OPS.join([t, t[:, :1]], 1, LEVEL, True),
    }
    assert gradcheck(calls[op], (x,))
    assert gradgradcheck(calls[op], (x,))


def test_the_fake_kernels_apply_the_rules_at_trace_time():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        x = torch.empty(4, 4)
        assert OPS.slice1(x, [0, 0], [4, 4], [2, -1], [2, 4], LEVEL, True).shape == (2, 4)
        with pytest.raises(cd.DescriptorError, match=r"window_offsets\[1\] \+ window_sizes\[1\] = 5"):
            OPS.slice1(x, [0, 1], [4, 4], [1, 1], [4, 4], LEVEL, True)
        with pytest.raises(TypeError, match="bfloat16 has no DirectML tensor data type"):
            OPS.slice1(x.bfloat16(), [0, 0], [4, 4], [1, 1], [4, 4], LEVEL, True)


def test_stream_cannot_be_traced():
    with pytest.raises(TypeError, match="stream= cannot be traced"):
        torch.func.vmap(lambda t: cd.slice1(t, window_offsets=[0], window_sizes=[2], stream=object()))(
            torch.zeros(3, 4)
        )


@pytest.mark.gpu
def test_a_compiled_module_replays_in_a_cuda_graph():
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    torch._dynamo.reset()
    module = torch.compile(Every(), fullgraph=True)
    x, dy = _integers((3, 4, 8), "cuda", False), _integers((2, 3, 2), "cuda", False)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm up: compile, load the kernels, fill the allocators' pools
            module(x, dy)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = module(x, dy)
    new_x, new_dy = _integers((3, 4, 8), "cuda", False), _integers((2, 3, 2), "cuda", False)
    x.copy_(new_x)
    dy.copy_(new_dy)
    graph.replay()
    torch.cuda.synchronize()
    assert _same(outputs, Every()(new_x, new_dy))

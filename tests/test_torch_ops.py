"""The PyTorch operators (``torch.ops.cudadml``) and the array functions on tensors, each
function's samples from its table (``cases.OPS``): compiled without graph breaks, exported,
vmapped in one launch, under every ``torch.func`` transform against torch's own indexing,
captured in CUDA graphs, and checked by ``torch.library.opcheck`` and ``gradcheck``.

CPU everywhere; the CUDA cases run where torch and CuPy both see a GPU.
"""

import cases
import numpy as np
import pytest

import cudadml as cd
from cudadml.testing import random_array

torch = pytest.importorskip("torch")
from torch.autograd import gradcheck, gradgradcheck  # noqa: E402
from torch.library import opcheck  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from cudadml.interop import torch as adapter  # noqa: E402  (registers the operators)

OPS = torch.ops.cudadml
LEVEL = int(cd.FeatureLevel.newest())
TRACED = [op for op in cases.OPS if op.traced]
OPERATORS = [op for op in cases.OPS if op.operator]


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch.device(request.param)


def _tensors(sample, device, grad=False):
    return [torch.from_numpy(np.ascontiguousarray(a)).to(device).requires_grad_(grad) for a in sample.arrays()]


def _every(seed=0):
    """The first sample of every function that PyTorch traces, as float64 small integers (every
    sum exact, so any order of additions gives the same bits)."""
    make = cases.Maker(np.float64, np.random.default_rng(seed), "integers")
    return [(op, next(iter(op.samples(make)))) for op in TRACED]


class Every(torch.nn.Module):
    """Every traced array function on its sample: the module's inputs are the samples' arrays, in order."""

    def __init__(self, samples):
        super().__init__()
        self.calls = [(len(sample.arrays()), sample.caller(op.function)) for op, sample in samples]

    def forward(self, *arrays):
        results, k = [], 0
        for n, call in self.calls:
            results.extend(cases.listed(call(*arrays[k : k + n])))
            k += n
        return tuple(results)


def _inputs(samples, device, grad=True):
    return [t for _, sample in samples for t in _tensors(sample, device, grad)]


def _loss(outputs, weights):
    return sum((o * w).sum() for o, w in zip(outputs, weights))


def _run(module, inputs, weights):
    outputs = module(*inputs)
    _loss(outputs, weights).backward()
    grads = [x.grad for x in inputs]
    for x in inputs:
        x.grad = None
    return [o.detach() for o in outputs], grads


def _same(a, b):
    return len(a) == len(b) and all(s.shape == t.shape and torch.equal(s, t) for s, t in zip(a, b))


def test_every_operator_traces_in_one_graph(device):
    samples = _every()
    explanation = torch._dynamo.explain(Every(samples))(*_inputs(samples, device))
    assert explanation.graph_break_count == 0, [b.reason for b in explanation.break_reasons]
    assert explanation.graph_count == 1


def test_compiled_fullgraph_gives_the_eager_bits_forward_and_backward(device):
    torch._dynamo.reset()
    samples = _every()
    inputs = _inputs(samples, device)
    module = Every(samples)
    weights = [torch.randint(-9, 9, o.shape, dtype=torch.float64, device=device) for o in module(*inputs)]
    eager = _run(module, inputs, weights)
    compiled = _run(torch.compile(module, fullgraph=True), inputs, weights)
    assert _same(eager[0], compiled[0]) and _same(eager[1], compiled[1])


def test_an_exported_program_runs(device):
    samples = _every()
    inputs = _inputs(samples, device, False)
    program = torch.export.export(Every(samples), tuple(inputs))
    names = {str(n.target) for n in program.graph.nodes if n.op == "call_function"}
    assert {f"cudadml.{op.operator}.default" for op in OPERATORS} <= names
    assert _same(program.module()(*inputs), Every(samples)(*inputs))
    other = inputs[0].new_zeros((inputs[0].shape[0] + 2, *inputs[0].shape[1:]))  # the program is specialised
    with pytest.raises(Exception):  # noqa: B017 (export's guard error type varies by version)
        program.module()(other, *inputs[1:])


@pytest.mark.parametrize("op", cases.params(TRACED))
@pytest.mark.parametrize("batch_axis", ["first", "last"])
def test_vmap_is_one_launch_and_equals_a_loop(device, monkeypatch, op, batch_axis):
    """Each sample, batched on its first axis or past its last, runs in one launch and gives what
    a loop over the batch gives."""
    rng = np.random.default_rng(7)
    make = cases.Maker(np.float32, rng)
    runs = []
    real = adapter._run
    monkeypatch.setattr(adapter, "_run", lambda *a, **k: runs.append(1) or real(*a, **k))
    for sample in op.samples(make):
        call = sample.caller(op.function)
        arrays = sample.arrays()
        in_dim = 0 if batch_axis == "first" else arrays[0].ndim
        batches = [torch.from_numpy(make((6, *a.shape))).to(device).movedim(0, in_dim) for a in arrays]
        runs.clear()
        got = cases.listed(torch.func.vmap(call, in_dims=in_dim)(*batches))
        assert len(runs) == 1, sample
        loop = [cases.listed(call(*(b.select(in_dim, k) for b in batches))) for k in range(6)]
        assert len(got) == len(loop[0]), sample
        for k, g in enumerate(got):
            assert _same_bits(g, torch.stack([results[k] for results in loop])), sample


def _same_bits(a, b):
    """Equal shapes and bits (random bits hold NaNs, which ``torch.equal`` calls unequal)."""
    return a.shape == b.shape and torch.equal(a.contiguous().view(torch.int32), b.contiguous().view(torch.int32))


# Calls valid per sample whose batched form is not: the batch axis takes a rank past DirectML's
# 8 dimensions, or past those a feature level allows (5 of SLICE at 2_1, 4 of SPLIT at 2_1).
LIMITS = [
    pytest.param(op, level, most, id=f"{op.name}-{most}d" + (f"-at-{level}" if level else ""))
    for op in TRACED
    for level, _, most in op.rank_limits()
]
# The functions that are operators: strided_slice's batched refusal is said in the words of
# slice1, the operator it runs through (strided_slice_grad's in slice_grad's).
LEVELS = [
    pytest.param(op, level, fewest, id=f"{op.name}-at-{level}")
    for op in OPERATORS
    for level, fewest, _ in op.rank_limits()
    if level
]


def _at(sample, level):
    return sample if level is None else sample.with_kwargs(feature_level=level)


@pytest.mark.parametrize(("op", "level", "rank"), LIMITS)
@pytest.mark.parametrize("size", [3, 0])
def test_vmap_of_calls_valid_per_sample_past_the_batched_rank_limit(device, op, level, rank, size):
    rng = np.random.default_rng(3)
    sample = _at(op.rank_sample(cases.Maker(np.float32, rng), rank), level)
    call = sample.caller(op.function)
    shapes = [a.shape for a in sample.arrays()]
    batches = [torch.from_numpy(random_array((size, *s), np.float32, rng)).to(device) for s in shapes]
    got = cases.listed(torch.func.vmap(call)(*batches))
    if size:
        per_sample = [cases.listed(call(*arrays)) for arrays in zip(*(b.unbind() for b in batches))]
        expected = [torch.stack(parts) for parts in zip(*per_sample)]
    else:  # no sample: empty results of a sample's shapes
        alone = cases.listed(call(*(torch.zeros(s, device=device) for s in shapes)))
        expected = [r.new_empty(0, *r.shape) for r in alone]
    assert len(got) == len(expected) and all(_same_bits(g, e) for g, e in zip(got, expected))


@pytest.mark.parametrize(("op", "level", "rank"), LEVELS)
def test_vmap_refuses_what_a_sample_would(op, level, rank):
    """A feature level that takes no fewer than ``rank`` dimensions refuses a sample of one
    fewer, batched as alone, with the same message."""
    sample = _at(op.rank_sample(cases.Maker(np.float32, np.random.default_rng(0)), rank - 1), level)
    call = sample.caller(op.function)
    alone = _tensors(sample, "cpu")
    with pytest.raises(cd.DescriptorError, match="is not supported at feature level") as refused:
        call(*alone)
    with pytest.raises(cd.DescriptorError) as batched:
        torch.func.vmap(call)(*(torch.stack([t, t]) for t in alone))
    assert str(batched.value) == str(refused.value)


def test_vmap_of_a_join_expands_unbatched_arrays(device):
    a, b = torch.randn(6, 2, 3, device=device), torch.randn(2, 1, device=device)
    got = torch.func.vmap(lambda s, t: cd.join([s, t, s], axis=1), in_dims=(0, None))(a, b)
    assert torch.equal(got, torch.stack([torch.cat([s, b, s], 1) for s in a]))


# ---- torch.func: every transform against torch's own indexing ----------------------------------


def _flat(op, sample):
    """The function of ``sample`` as a map of one vector (its arrays' elements, in order) to
    one vector (its results' elements, in order)."""
    call = sample.caller(op.function)
    shapes = [a.shape for a in sample.arrays()]
    sizes = [int(np.prod(s)) for s in shapes]

    def f(t):
        arrays = [part.reshape(s) for part, s in zip(t.split(sizes), shapes)]
        return torch.cat([r.reshape(-1) for r in cases.listed(call(*arrays))])

    return f


def _indexing(op, sample):
    """The same map through torch's indexing: the oracle, run on the elements' numbers (1 on),
    says which element each result element reads (0: none, a zero)."""
    numbered, k = [], 1
    for a in sample.arrays():
        numbered.append(np.arange(k, k + a.size, dtype=np.int64).reshape(a.shape))
        k += a.size
    index = np.concatenate([r.reshape(-1) for r in cases.expected(op, sample.with_arrays(numbered))])
    return lambda t: torch.cat([t.new_zeros(1), t])[torch.from_numpy(index).to(t.device)]


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
@pytest.mark.parametrize("op", cases.params(TRACED))
def test_torch_func_transforms_equal_torchs_own_indexing(device, op, transform, apply):
    make = cases.Maker(np.float64, np.random.default_rng(5), "integers")
    checked = 0
    for sample in op.samples(make):
        n, m = sum(a.size for a in sample.arrays()), sum(e.size for e in cases.expected(op, sample))
        if not (n and m):
            continue
        x, v, xs, w = (torch.from_numpy(make(shape)).to(device) for shape in [(n,), (n,), (3, n), (m,)])
        ours, theirs = _flat(op, sample), _indexing(op, sample)
        got, expected = apply(ours, x, w, v, xs), apply(theirs, x, w, v, xs)
        got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
        assert _same(got, expected), f"{transform} of {op.name} ({sample}): {got} != {expected}"
        checked += 1
    assert checked


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


class _Recorded(TorchDispatchMode):
    """Records the ``torch.ops.cudadml`` calls that run inside it: ``(overload, args, kwargs)``."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func.namespace == "cudadml":
            self.calls.append((func, args, kwargs))
        return func(*args, **kwargs)


def _operator_calls(op, sample, **kwargs):
    """The operator calls that ``sample``'s call of ``op.function`` makes."""
    with _Recorded() as recorded:
        sample.call(op.function, **kwargs)
    return recorded.calls


def _shapes_only(shape):
    return np.empty(shape, np.int8)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "stepped"])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_opcheck(device, dtype, layout):
    """Each operator's call of a random sample (random shapes, windows with negative steps,
    parts), and its ``out`` overload, through ``torch.library.opcheck``."""
    rng = np.random.default_rng([DTYPES.index(dtype), len(layout)])
    flag = dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32)
    for op in OPERATORS:
        shapes = op.random_sample(_shapes_only, rng)
        sample = shapes.map(lambda a: _tensor(a.shape, dtype, device, rng, layout))
        calls = _operator_calls(op, sample, directml_types=flag)
        detached = sample.map(torch.Tensor.detach)
        outs = [torch.empty(r.shape, dtype=dtype, device=device) for r in cases.expected(op, shapes)]
        calls += _operator_calls(op, detached, directml_types=flag, out=op.out(detached, outs))
        assert [str(c[0]) for c in calls] == [f"cudadml.{op.operator}.default", f"cudadml.{op.operator}.out"]
        for overload, args, kwargs in calls:
            opcheck(overload, args, kwargs)


@pytest.mark.parametrize("op", cases.params(OPERATORS))
def test_gradcheck_and_gradgradcheck_through_the_registered_backward(device, op):
    sample = next(s for s in op.samples(_shapes_only) if all(a.size for a in s.arrays()))
    inputs = [torch.rand(a.shape, dtype=torch.float64, device=device, requires_grad=True) for a in sample.arrays()]
    ((overload, args, kwargs),) = _operator_calls(op, sample.with_arrays(inputs))
    tensors = [
        isinstance(a, torch.Tensor) or (isinstance(a, list) and all(isinstance(t, torch.Tensor) for t in a))
        for a in args
    ]
    recorded = [t for a, is_tensors in zip(args, tensors) if is_tensors for t in (a if isinstance(a, list) else [a])]
    assert [t.shape for t in recorded] == [t.shape for t in inputs]  # the function's arrays, in order

    def call(*given):
        given = iter(given)
        placed = [
            (([next(given) for _ in a] if isinstance(a, list) else next(given)) if is_tensors else a)
            for a, is_tensors in zip(args, tensors)
        ]
        return overload(*placed, **kwargs)

    assert gradcheck(call, tuple(inputs))
    assert gradgradcheck(call, tuple(inputs))


@pytest.mark.parametrize("op", cases.params(TRACED))
def test_fake_tensors_take_the_oracles_shapes(op):
    """Under fake tensors (shapes, no data) each function's samples give the oracle's shapes."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    samples = list(op.samples(cases.Maker(np.float32, np.random.default_rng(0))))
    with FakeTensorMode():
        for sample in samples:
            fake = sample.map(lambda a: torch.empty(a.shape))
            got = cases.listed(fake.call(op.function))
            assert [tuple(g.shape) for g in got] == [e.shape for e in cases.expected(op, sample)], sample


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
    samples = _every()
    module = torch.compile(Every(samples), fullgraph=True)
    inputs = _inputs(samples, "cuda", False)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):  # warm up: compile, load the kernels, fill the allocators' pools
            module(*inputs)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outputs = module(*inputs)
    new = _inputs(_every(seed=1), "cuda", False)
    for x, value in zip(inputs, new):
        x.copy_(value)
    graph.replay()
    torch.cuda.synchronize()
    assert _same(outputs, Every(samples)(*new))

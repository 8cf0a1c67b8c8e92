"""PyTorch tensors through the array functions: tensors out on the input's device, zero-copy
in and out, on the current torch stream, and autograd (gradcheck, double backward) for each.

Skipped without torch; the CUDA cases run where torch and CuPy both see a GPU.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudadml as cd
from cudadml.testing import emulated, random_array

torch = pytest.importorskip("torch")
from torch.autograd import gradcheck, gradgradcheck  # noqa: E402

from cudadml.interop import torch as adapter  # noqa: E402


@pytest.fixture(
    params=["cpu", pytest.param("emulate", marks=pytest.mark.emulate), pytest.param("cuda", marks=pytest.mark.gpu)]
)
def device(request):
    """Where the tensors live: CPU (the reference backend, or the emulated kernels) or CUDA."""
    if request.param == "cuda":
        if not torch.cuda.is_available():
            pytest.skip("torch sees no CUDA device")
        yield torch.device("cuda")
    elif request.param == "emulate":
        with emulated():
            yield torch.device("cpu")
    else:
        yield torch.device("cpu")


# name, a call of the function on its input arrays (tensors or NumPy), the input shapes
CASES = [
    ("slice", lambda x: cd.slice(x, offsets=[1, 0, 2], sizes=[2, 3, 2], strides=[1, 0, 3]), [(3, 4, 8)]),
    (
        "slice1",
        lambda x: cd.slice1(x, window_offsets=[0, 1, 1], window_sizes=[3, 3, 6], window_strides=[2, -1, -3]),
        [(3, 4, 8)],
    ),
    (
        "slice_grad",
        lambda dy: cd.slice_grad(
            dy, (3, 4, 8), window_offsets=[0, 1, 1], window_sizes=[3, 3, 6], window_strides=[2, -1, -3]
        ),
        [(2, 3, 2)],
    ),
    ("split", lambda x: cd.split(x, split_sizes=[1, 0, 2], axis=1), [(2, 3, 4)]),
    ("join", lambda *xs: cd.join(list(xs), axis=-1), [(2, 3), (2, 1), (2, 4)]),
    ("strided_slice", lambda x: cd.strided_slice(x, np.s_[::-2, None, 1, 5:0:-2]), [(3, 4, 8)]),
    ("strided_slice_grad", lambda dy: cd.strided_slice_grad(dy, (3, 4, 8), np.s_[::-2, 1, 5:0:-2]), [(2, 3)]),
]
IDS = [c[0] for c in CASES]


def _inputs(shapes, dtype, device, rng, requires_grad=False):
    """Tensors of random bits, or with ``requires_grad`` of finite float64 values."""
    made = [rng.random(s) if requires_grad else random_array(s, dtype, rng) for s in shapes]
    return [torch.from_numpy(a).to(device).requires_grad_(requires_grad) for a in made]


def same_bits(a, b):
    """Equal shapes and bytes: random bits hold NaNs, which ``torch.equal`` calls unequal."""
    a, b = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    return a.shape == b.shape and np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_tensors_in_give_tensors_out_equal_to_numpy(device, rng, name, fn, shapes, dtype):
    tensors = _inputs(shapes, dtype, device, rng)
    got = fn(*tensors)
    expected = fn(*[t.cpu().numpy() for t in tensors])
    got, expected = (got, expected) if name == "split" else ([got], [expected])
    assert all(isinstance(g, torch.Tensor) and g.device == tensors[0].device and g.grad_fn is None for g in got)
    for g, e in zip(got, expected):
        assert g.dtype == tensors[0].dtype and g.cpu().numpy().tobytes() == np.ascontiguousarray(e).tobytes()


@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
def test_gradcheck_and_double_backward(device, rng, name, fn, shapes):
    tensors = _inputs(shapes, np.float64, device, rng, requires_grad=True)
    results = fn(*tensors)
    camel = "".join(w.capitalize() for w in name.split("_"))
    for r in results if isinstance(results, list) else [results]:
        assert type(r.grad_fn).__name__ == f"{camel}Backward"
    assert gradcheck(fn, tensors)
    assert gradgradcheck(fn, tensors)


def test_backward_runs_the_inverse_operator(device):
    x = torch.arange(20, dtype=torch.float64, device=device).reshape(4, 5).requires_grad_()
    y = cd.strided_slice(x, np.s_[::-2, 1::3])
    (dx,) = torch.autograd.grad(y, x, torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, device=device))
    expected = np.zeros((4, 5))
    expected[::-2, 1::3] = [[1, 2], [3, 4]]
    assert np.array_equal(dx.cpu().numpy(), expected)
    parts = cd.split(x, split_sizes=[1, 3])
    parts[1].sum().backward()  # part 0 unused: its gradient is zeros
    assert np.array_equal(x.grad.cpu().numpy(), np.r_[np.zeros((1, 5)), np.ones((3, 5))])


@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
def test_forward_mode_tangents_are_the_call_on_the_tangents(device, rng, name, fn, shapes):
    """The operations are linear: a dual input's tangent goes through the same call."""
    import torch.autograd.forward_ad as fwAD

    primals = _inputs(shapes, np.float64, device, rng, requires_grad=True)
    tangents = [t.detach() for t in _inputs(shapes, np.float64, device, rng)]
    with fwAD.dual_level():
        results = fn(*[fwAD.make_dual(p.detach(), t) for p, t in zip(primals, tangents)])
        got = [fwAD.unpack_dual(r).tangent for r in (results if name == "split" else [results])]
    expected = fn(*tangents)
    assert all(g is not None and torch.equal(g, e) for g, e in zip(got, expected if name == "split" else [expected]))


def test_a_repeated_element_receives_the_sum_of_its_gradients():
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    y = cd.slice(x, offsets=[1, 1], sizes=[4, 2], strides=[0, 1])  # row 1 read four times
    y.backward(torch.ones(4, 2, dtype=torch.float64))
    assert x.grad.tolist() == [[0, 0, 0], [0, 4, 4]]


def test_out_tensors_are_written_in_place(device, rng):
    x = _inputs([(6, 5)], np.float32, device, rng)[0]
    out = torch.full((3, 4), 7.0, device=device)
    assert cd.strided_slice(x, np.s_[::2, 1:], out=out) is out
    assert same_bits(out, x[::2, 1:])
    outs = [torch.empty(6, 2, device=device), torch.empty(6, 3, device=device)]
    assert cd.split(x, split_sizes=[2, 3], axis=1, out=outs) is outs
    assert same_bits(outs[1], x[:, 2:])


# An out= view whose reads conjugate or negate its memory: writes go through the bits, as
# torch's own out= and copy_ do. Each makes a view of a complex128 base, complex64 or float32.
MARKED = [
    ("conj", lambda b: b.conj()),
    ("neg", lambda b: torch._neg_view(b)),
    ("conj_and_neg", lambda b: torch._neg_view(b.conj())),
    ("neg_real", lambda b: b.conj().imag),  # a real view of a conjugate's imaginary parts
]


@pytest.mark.parametrize(("kind", "mark"), MARKED, ids=[m[0] for m in MARKED])
def test_out_conjugate_and_negative_views_are_written_through_their_bits(device, rng, kind, mark):
    ctype = torch.complex64
    dtype = torch.float32 if kind == "neg_real" else ctype
    x = torch.from_numpy(rng.integers(-9, 9, (4, 6, 2)).astype(np.float32)).to(device)
    x = torch.view_as_complex(x) if dtype.is_complex else x[..., 0].contiguous()
    poison = torch.full((5, 8), 3 + 7j, dtype=ctype, device=device)
    base, reference = poison.clone(), poison.clone()
    out = mark(base[1:, ::2])  # neighbours and skipped elements must keep their poison
    assert (out.is_conj(), out.is_neg()) == ("conj" in kind, "neg" in kind) and out.dtype == dtype
    assert cd.strided_slice(x, np.s_[::-1, 1:5], out=out, directml_types=False) is out
    mark(reference[1:, ::2]).copy_(x.flip(0)[:, 1:5])  # torch's write through the same bits
    assert torch.equal(out, x.flip(0)[:, 1:5]) and same_bits(base, reference)
    parts = [mark(poison.clone()[:4, :k]) for k in (2, 3)]
    assert cd.split(x[:, :5], split_sizes=[2, 3], axis=1, out=parts, directml_types=False) is parts
    assert torch.equal(parts[0], x[:, :2]) and torch.equal(parts[1], x[:, 2:5])


# out= where autograd would have to record the write, which torch's own out= refuses under grad
# mode: a leaf that requires grad, a view of one, a result of autograd, or an input that requires grad.
REFUSED_OUTS = [
    ("leaf", lambda a, b: a, r"out is a leaf tensor that requires grad"),
    ("view_of_leaf", lambda a, b: a[1:], r"out is a view of a leaf tensor that requires grad"),
    ("result", lambda a, b: b, r"out is a result of autograd \(it requires grad\)"),
]


@pytest.mark.parametrize(("name", "pick", "match"), REFUSED_OUTS, ids=[r[0] for r in REFUSED_OUTS])
@pytest.mark.parametrize("route", ["eager", "operator"])
def test_out_that_requires_grad_is_refused_before_anything_is_written(name, pick, match, route):
    a = torch.arange(3.0, requires_grad=True)
    out = pick(a, a * 2)
    before = out.detach().clone()
    x = torch.ones(out.shape)
    call = {
        "eager": lambda: cd.strided_slice(x, np.s_[::-1], out=out),
        "operator": lambda: torch.ops.cudadml.slice1.out(
            x, [0], [len(x)], [-1], [len(x)], int(cd.FeatureLevel.newest()), True, out=out
        ),
    }[route]
    with pytest.raises(RuntimeError, match=rf"out= cannot take part in autograd: {match}"):
        call()
    assert torch.equal(out.detach(), before)
    with torch.no_grad():  # as torch's out= and in-place ops, which initialise parameters so
        call()
    assert torch.equal(out.detach(), torch.ones(out.shape))


@pytest.mark.parametrize("route", ["eager", "operator"])
def test_an_out_write_moves_the_version_counter_so_a_stale_backward_refuses(device, route):
    a = torch.zeros(3, device=device, requires_grad=True)
    b = a * 1
    z = (b * b).sum()  # saves b for backward
    x = torch.ones(3, device=device)
    version = b._version
    with torch.no_grad():
        if route == "eager":
            cd.strided_slice(x, np.s_[:], out=b)
        else:
            torch.ops.cudadml.slice1.out(x, [0], [3], [1], [3], int(cd.FeatureLevel.newest()), True, out=b)
    assert b._version > version
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_out_into_an_inference_tensor_or_from_a_dual_tensor_is_refused():
    """As torch's own out= refuses them: nothing is written."""
    import torch.autograd.forward_ad as fwAD

    with torch.inference_mode():
        frozen = torch.zeros(3)
    with pytest.raises(RuntimeError, match=r"out is an inference tensor, which only code under torch.inference_mode"):
        cd.strided_slice(torch.arange(3.0), np.s_[::-1], out=frozen)
    out = torch.zeros(3)
    with fwAD.dual_level(), pytest.raises(RuntimeError, match=r"out= cannot take part in forward-mode AD"):
        cd.strided_slice(fwAD.make_dual(torch.arange(3.0), torch.ones(3)), np.s_[::-1], out=out)
    assert frozen.eq(0).all() and out.eq(0).all()
    with torch.inference_mode():
        cd.strided_slice(torch.arange(3.0), np.s_[::-1], out=frozen)
    assert frozen.tolist() == [2, 1, 0]


def test_views_and_results_share_memory_without_copies(device, rng):
    x = _inputs([(4, 6)], np.float32, device, rng)[0].t()  # a transposed view: not contiguous
    view = adapter.view(x, raw=False)
    address = view.data.ptr if device.type == "cuda" else view.__array_interface__["data"][0]
    assert address == x.data_ptr() and view.strides == tuple(s * 4 for s in x.stride())
    parts = cd.split(x, split_sizes=[1, 2, 3])  # views of one allocation, wrapped back as they are
    assert [p.data_ptr() - parts[0].data_ptr() for p in parts] == [0, 16, 32 + 16]


def test_no_grad_and_detached_inputs_build_no_graph(rng):
    x = _inputs([(4, 4)], np.float64, "cpu", rng, requires_grad=True)[0]
    with torch.no_grad():
        assert cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[2, 2]).grad_fn is None
    assert cd.slice1(x.detach(), window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[2, 2]).grad_fn is None


# Calls of an nn.Parameter, with their out= tensors: torch's own ops take a parameter as the
# plain tensor it holds (its __torch_function__ is disabled), which autograd tracks as far as it
# requires grad; the array functions take it so, eager and fused alike.
PARAMETER_CALLS = [
    ("strided_slice", lambda t, out: cd.strided_slice(t, np.s_[::-1, 1::2], out=out), [(4, 3)]),
    ("join", lambda t, out: cd.join([t, torch.ones(1, 6)], axis=0, out=out), [(5, 6)]),
    ("split", lambda t, out: cd.split(t, split_sizes=[1, 3], axis=0, out=out), [(1, 6), (3, 6)]),
]
MODES = {"grad": torch.enable_grad, "no_grad": torch.no_grad, "inference_mode": torch.inference_mode}


def _outcome(call, t, out):
    """What a call gives: its results' types, grad_fn classes, requires_grad and values, or its error."""
    try:
        got = call(t, out)
    except (TypeError, RuntimeError) as e:
        return type(e), str(e)
    return [(type(g), type(g.grad_fn), g.requires_grad, g.tolist()) for g in (got if isinstance(got, list) else [got])]


@pytest.fixture
def operator_calls(monkeypatch):
    """The functions of the calls that went through ``torch.ops.cudadml`` (the route of tensor
    subclasses, transforms and modes) rather than the eager route."""
    called, real = [], adapter._call_operator
    monkeypatch.setattr(adapter, "_call_operator", lambda op, *a: called.append(op.function) or real(op, *a))
    return called


@pytest.mark.parametrize(("name", "call", "shapes"), PARAMETER_CALLS, ids=[c[0] for c in PARAMETER_CALLS])
@pytest.mark.parametrize("requires_grad", [True, False], ids=["requires_grad", "frozen"])
@pytest.mark.parametrize("with_out", [False, True], ids=["", "out"])
@pytest.mark.parametrize("mode", list(MODES))
def test_a_parameter_is_the_plain_tensor_it_holds(operator_calls, name, call, shapes, requires_grad, with_out, mode):
    values = torch.arange(24.0).reshape(4, 6)
    plain, parameter = values.clone().requires_grad_(requires_grad), torch.nn.Parameter(values.clone(), requires_grad)

    def outs():
        made = [torch.zeros(s) for s in shapes] if with_out else None
        return made[0] if made and name != "split" else made

    with MODES[mode]():
        got, expected = _outcome(call, parameter, outs()), _outcome(call, plain, outs())
    assert got == expected
    assert operator_calls == []
    if requires_grad and mode == "grad" and not with_out:  # recorded: the same node, the same gradient
        assert expected[0][1].__name__ == f"{name.title().replace('_', '')}Backward"
        for t in (plain, parameter):
            results = call(t, None)
            sum(r.sum() * k for k, r in enumerate(results if isinstance(results, list) else [results], 1)).backward()
        assert torch.equal(parameter.grad, plain.grad)


@pytest.mark.parametrize("requires_grad", [True, False], ids=["requires_grad", "frozen"])
@pytest.mark.parametrize("mode", list(MODES))
def test_out_into_a_parameter_is_out_into_the_plain_tensor_it_holds(operator_calls, requires_grad, mode):
    """Refused where it requires grad under grad mode, as a plain leaf is; else written in
    place (under torch.no_grad(), as parameters are initialised), its version moved."""
    x = torch.arange(6.0).reshape(2, 3)

    def write(out):
        try:
            with MODES[mode]():
                cd.strided_slice(x, np.s_[::-1], out=out)
        except adapter.TorchOutError as e:
            return str(e)
        return out._version, out.tolist()

    plain, parameter = (
        torch.zeros(2, 3).requires_grad_(requires_grad),
        torch.nn.Parameter(torch.zeros(2, 3), requires_grad),
    )
    assert write(parameter) == write(plain)
    assert operator_calls == []


class _Marked(torch.Tensor):
    """A tensor subclass: torch dispatches its calls to its ``__torch_function__``."""


@pytest.mark.parametrize(
    ("make", "watched"),
    [
        (lambda v: v, False),
        (lambda v: v.requires_grad_(), False),
        (lambda v: torch.nn.Parameter(v), False),
        (lambda v: torch.nn.Parameter(v, requires_grad=False), False),
        (lambda v: v.as_subclass(_Marked), True),
        (lambda v: torch.nn.parameter.UninitializedParameter(), True),  # whose __torch_function__ refuses calls
    ],
    ids=["tensor", "requires_grad", "parameter", "frozen_parameter", "subclass", "uninitialized_parameter"],
)
def test_the_one_rule_of_which_calls_pytorch_watches(make, watched):
    t = make(torch.arange(6.0).reshape(2, 3))
    assert adapter.watched([torch.zeros(1), t]) is watched
    with torch.no_grad():
        assert adapter.watched([t]) is watched
    seen = []
    torch.func.vmap(lambda s: seen.append(adapter.watched([s, t])) or s)(torch.zeros(2))
    assert seen == [True]  # under a transform, every call is


def test_bfloat16_moves_as_raw_bits_when_asked():
    x = torch.randn(4, 6).to(torch.bfloat16).requires_grad_()
    with pytest.raises(TypeError, match=r"torch.bfloat16 has no DirectML tensor data type; pass directml_types=False"):
        cd.strided_slice(x, np.s_[::-1])
    y = cd.strided_slice(x, np.s_[::-1, 1::2], directml_types=False)
    assert y.dtype == torch.bfloat16 and torch.equal(y, x.detach().flip(0)[:, 1::2])
    y.sum().backward()
    assert x.grad.dtype == torch.bfloat16 and x.grad[:, 1::2].eq(1).all() and x.grad[:, ::2].eq(0).all()
    with pytest.raises(TypeError, match=r"dtypes \['torch.bfloat16', 'torch.int16'\] differ"):
        cd.strided_slice(x.detach(), np.s_[:], out=torch.empty(4, 6, dtype=torch.int16), directml_types=False)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda t: cd.strided_slice(t, np.s_[:], out=torch.empty(4, 4, dtype=torch.float64)), "out= cannot take part"),
        (lambda t: cd.join([t, np.zeros((4, 4))]), r"join: xs\[1\] is a ndarray; a call with torch tensors takes only"),
        (lambda t: cd.strided_slice(t.detach(), np.s_[:], out=np.zeros((4, 4))), "out is a ndarray"),
        (
            lambda t: cd.slice1(t, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[0, 1]),
            "window_strides.0. = 0 must be non-zero",
        ),
    ],
)
def test_wrong_calls_are_refused_before_anything_runs(call, match):
    x = torch.zeros(4, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises((TypeError, cd.DescriptorError), match=match):
        call(x)


@pytest.mark.gpu
def test_cuda_calls_run_on_the_current_torch_stream(rng):
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    x = torch.zeros(256, 256, device="cuda")
    new = torch.from_numpy(random_array((256, 256), np.float32, rng)).cuda()
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # keeps the stream busy: a call on another stream would run first
        x.copy_(new)
        y = cd.strided_slice(x, np.s_[::-1, 3:])
        parts = cd.split(x, parts=2, axis=1)
    stream.synchronize()
    assert same_bits(y, new.flip(0)[:, 3:]) and same_bits(parts[1], new[:, 128:])


@pytest.fixture
def cuda():
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch.device("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float64])
def test_cuda_tensors_run_by_address_without_views(cuda, rng, monkeypatch, name, fn, shapes, dtype):
    """Plain CUDA calls bind the tensors' addresses: no CuPy view, results from torch's
    allocator; views of odd layouts (transposed, offset, expanded) as inputs."""
    monkeypatch.setattr(adapter, "view", lambda *a: pytest.fail("a CuPy view was made"))
    tensors = []
    for t in _inputs([(*s[:-1], s[-1] + 2) for s in shapes], dtype, cuda, rng):
        t = t[..., 1:-1]  # an offset, non-contiguous view
        tensors.append(t.expand(1, *t.shape)[0] if t.ndim > 2 else t.t().contiguous().t())
    got = fn(*tensors)
    expected = fn(*[t.cpu().numpy() for t in tensors])
    got, expected = (got, expected) if name == "split" else ([got], [expected])
    for g, e in zip(got, expected):
        assert g.is_cuda and g.dtype == tensors[0].dtype and same_bits(g, torch.from_numpy(np.ascontiguousarray(e)))


@pytest.mark.gpu
def test_cuda_calls_that_need_views_or_break_rules(cuda, rng):
    """What the addressed route hands to the views' route: the same results and messages."""
    z = torch.from_numpy(random_array((4, 6), np.complex64, rng)).to(cuda)
    flipped = cd.strided_slice(z.conj(), np.s_[::-1], directml_types=False)
    assert same_bits(flipped, z.conj().resolve_conj().flip(0))
    w = torch.from_numpy(random_array((4, 6), np.complex128, rng)).to(cuda)
    assert same_bits(cd.split(w, parts=2, axis=1, directml_types=False)[1], w[:, 3:])
    b = torch.randn(4, 6, device=cuda).to(torch.bfloat16)
    assert torch.equal(cd.strided_slice(b, np.s_[::-1, 1::2], directml_types=False), b.flip(0)[:, 1::2])
    x = torch.from_numpy(random_array((4, 6), np.float32, rng)).to(cuda)
    with pytest.raises(TypeError, match=r"join: xs\[1\] has dtype float64, xs\[0\] has float32"):
        cd.join([x, x.double()])
    with pytest.raises(TypeError, match=r"out has dtype float64; the result has dtype float32"):
        cd.strided_slice(x, np.s_[:], out=torch.empty(4, 6, dtype=torch.float64, device=cuda))
    before = x.clone()
    with pytest.raises(cd.BindingError, match=r"out overlaps x in memory"):
        cd.strided_slice(x[:, :3], np.s_[:, ::-1], out=x[:, 1:4])
    assert torch.equal(x, before)
    empty = cd.strided_slice_grad(torch.empty(0, 6, device=cuda), (4, 6), np.s_[4:])
    assert empty.shape == (4, 6) and empty.eq(0).all()


@pytest.mark.gpu
def test_cuda_addressed_calls_of_many_tensors_and_from_another_current_device(cuda, rng, monkeypatch):
    parts = [torch.from_numpy(random_array((1, 3), np.int16, rng)).to(cuda) for _ in range(10_000)]
    joined = cd.join(parts)
    assert same_bits(joined, torch.cat(parts))
    back = cd.split(joined, parts=10_000)
    assert len(back) == 10_000 and all(same_bits(b, p) for b, p in zip(back[::997], parts[::997]))
    # A current device other than the tensors': the launch runs with theirs made current.
    entered = []
    device = torch.cuda.device

    def tracked(index):
        entered.append(index)
        return device(index)

    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: parts[0].get_device() + 1)
    monkeypatch.setattr(torch.cuda, "device", tracked)
    assert same_bits(cd.strided_slice(parts[0], np.s_[:, ::-1]), parts[0].flip(1))
    assert entered == [parts[0].get_device()]


def test_torch_is_imported_only_by_a_caller_who_has():
    code = (
        "import sys, numpy as np, cudadml as cd\n"
        "x = np.arange(24.0).reshape(4, 6)\n"
        "cd.join(cd.split(x, parts=2, axis=1), axis=1); cd.strided_slice(x, np.s_[::2])\n"
        "window = dict(window_offsets=[0, 0], window_sizes=[4, 6], window_strides=[2, 1])\n"
        "cd.slice_grad(x[:2], (4, 6), **window); cd.strided_slice_grad(x[::2], (4, 6), np.s_[::2])\n"
        "cd.slice(x, offsets=[0, 0], sizes=[2, 2]); cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2])\n"
        "assert 'torch' not in sys.modules and 'cudadml.interop.torch' not in sys.modules, 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize(
    "document, start, end, count",
    [
        ("README.md", "## PyTorch and Dask", "## Pictures", 1),
        ("docs/guide.md", "## PyTorch", "## Dask arrays", 2),  # tensors and autograd; compile, export, vmap
    ],
)
def test_the_documents_pytorch_examples_run(document, start, end, count):
    text = (Path(__file__).resolve().parents[1] / document).read_text()
    section = text[text.index(start) : text.index(end)]
    blocks = [block.split("```\n", 1)[0] for block in section.split("```python\n")[1:]]
    assert len(blocks) == count
    exec(compile("".join(blocks), f"{document} (PyTorch)", "exec"), {})


def test_vmap_of_an_index_that_reads_nothing_from_an_empty_reversed_axis():
    """An empty axis read backwards starts at -1: the window it becomes is the empty one at 0."""
    x = torch.zeros(2, 3, 0)
    key = (slice(None, None, -2), slice(None, None, -1))
    assert torch.vmap(lambda s: cd.strided_slice(s, key))(x).shape == (2, 2, 0)
    assert cd.strided_slice(x, (slice(None), *key)).shape == (2, 2, 0)

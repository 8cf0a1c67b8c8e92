"""A compiled graph called as a function: ``compiled(*arrays)`` against executing the graph
on aligned buffers (the old way) and against NumPy slicing, on both host backends with fresh
random data; any address and strides; the caller's kind back (NumPy, torch CPU tensors, CuPy
on the GPU); the messages of a wrong call; and ``execute``'s way forward."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudadml as cd
from cudadml.graphs.graph import WAY_FORWARD
from cudadml.testing import aligned_empty, random_array

F32, F16, U8, I64 = (cd.TensorDataType.FLOAT32, cd.TensorDataType.FLOAT16, cd.TensorDataType.UINT8,
                     cd.TensorDataType.INT64)  # fmt: skip
IN, OUT, MID = cd.GraphInputEdge, cd.GraphOutputEdge, cd.GraphIntermediateEdge


def t(*sizes, dtype=F32, **kw):
    return cd.BufferTensorDesc(dtype, sizes, **kw)


def focus(dtype=F32, shape=(2, 3, 8, 6)):
    """YOLOv5's Focus: four strided crops joined on the channels (one output)."""
    b, c, h, w = shape
    half = (b, c, h // 2, w // 2)
    crops = [t(*shape, dtype=dtype), t(*half, dtype=dtype)]
    nodes = [
        cd.SliceOperatorDesc(*crops, [0, 0, p, q], half, [1, 1, 2, 2]) for p, q in [(0, 0), (1, 0), (0, 1), (1, 1)]
    ]
    nodes.append(cd.JoinOperatorDesc([t(*half, dtype=dtype)] * 4, t(b, 4 * c, h // 2, w // 2, dtype=dtype), 1))
    ins = [IN(0, k, 0, name="images") for k in range(4)]
    graph = cd.GraphDesc(1, 1, nodes, ins, [OUT(4, 0, 0)], [MID(k, 0, 4, k) for k in range(4)])

    def oracle(x):
        return (np.concatenate([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1),)

    return graph, [(shape, dtype)], oracle


def split_pad_crop(dtype=U8):
    """Two inputs, three outputs: a split's parts (one padded with zeros by SLICE_GRAD), and a
    reversed crop of the other input; an odd byte count (3 x 5 bytes) and no edge names."""
    split = cd.SplitOperatorDesc(t(3, 5, dtype=dtype), [t(3, 2, dtype=dtype), t(3, 3, dtype=dtype)], axis=1)
    pad = cd.SliceGradOperatorDesc(t(3, 2, dtype=dtype), t(5, 4, dtype=dtype), [1, 1], [3, 2], [1, 1])
    crop = cd.Slice1OperatorDesc(t(7, dtype=dtype), t(3, dtype=dtype), [1], [5], [-2])
    graph = cd.GraphDesc(
        2, 3, [split, pad, crop], [IN(0, 0, 0), IN(1, 2, 0)], [OUT(1, 0, 0), OUT(0, 1, 1), OUT(2, 0, 2)],
        [MID(0, 0, 1, 0)],
    )  # fmt: skip

    def oracle(x, v):
        padded = np.zeros((5, 4), x.dtype)
        padded[1:4, 1:3] = x[:, :2]
        return padded, x[:, 2:], v[1:6][::-2]

    return graph, [((3, 5), dtype), ((7,), dtype)], oracle


def strided_layouts():
    """A graph input of a padded layout and an output whose tensor has gaps (row stride 5)."""
    source = t(3, 4, strides=[8, 2])
    flip = cd.Slice1OperatorDesc(source, t(3, 4, strides=[5, 1]), [0, 0], [3, 4], [-1, 1])
    graph = cd.GraphDesc(1, 1, [flip], [IN(0, 0, 0, name="x")], [OUT(0, 0, 0)])
    return graph, [((3, 4), F32)], lambda x: (x[::-1],)


GRAPHS = {
    "focus f32": lambda: focus(F32),
    "focus f16": lambda: focus(F16),
    "focus i64": lambda: focus(I64, (1, 2, 4, 4)),
    "split, pad and crop": split_pad_crop,
    "strided layouts": strided_layouts,
}


@pytest.fixture(params=["reference", "emulate"])
def backend(request):
    with cd.use_host_backend(request.param):
        yield request.param


def executed(compiled, graph, arrays):
    """The graph run the old way: each input copied into an aligned buffer of its tensor's
    layout, each output bound as a poisoned aligned buffer and read through its strides."""
    strided = np.lib.stride_tricks.as_strided

    def elements(buffer, tensor):
        dtype = tensor.data_type.numpy_dtype
        typed = buffer[: buffer.nbytes // dtype.itemsize * dtype.itemsize].view(dtype)
        return strided(typed, tensor.sizes, [s * dtype.itemsize for s in tensor.effective_strides])

    ins = []
    for a, tensor in zip(arrays, graph.input_tensors):
        ins.append(aligned_empty(tensor.total_tensor_size_in_bytes))
        elements(ins[-1], tensor)[...] = a
    outs = [aligned_empty(tensor.total_tensor_size_in_bytes) for tensor in graph.output_tensors]
    for buffer in outs:
        buffer[:] = 0xA5
    compiled.execute(ins, outs)
    return [elements(buffer, tensor).copy() for buffer, tensor in zip(outs, graph.output_tensors)]


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def as_tuple(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("name", GRAPHS)
def test_a_call_gives_what_execute_and_numpy_give(backend, rng, name):
    graph, inputs, oracle = GRAPHS[name]()
    compiled = graph.compile()
    arrays = [random_array(shape, data_type.numpy_dtype, rng) for shape, data_type in inputs]
    before = [a.copy() for a in arrays]
    results = as_tuple(compiled(*arrays))
    assert len(results) == graph.output_count
    old_way, expected = executed(compiled, graph, arrays), oracle(*arrays)
    for result, old, oracle_result in zip(results, old_way, expected):
        assert type(result) is np.ndarray and result.flags.c_contiguous
        assert same_bits(result, old) and same_bits(result, oracle_result)
        assert not any(np.shares_memory(result, a) for a in arrays)
    assert all(same_bits(a, b) for a, b in zip(arrays, before))  # the inputs are only read


def _misaligned(a):
    """A copy of ``a`` at an address 1 byte past a multiple of 16."""
    buffer = aligned_empty(a.nbytes + 1)[1:]
    view = buffer.view(a.dtype).reshape(a.shape) if a.dtype.itemsize == 1 else None
    if view is None:  # NumPy cannot view misaligned bytes as wider elements: build the array on them
        view = np.ndarray(a.shape, a.dtype, buffer=buffer.data)
    view[...] = a
    return view


LAYOUTS = {
    "misaligned": _misaligned,
    "every other element": lambda a: np.repeat(a, 2, axis=-1)[..., ::2],
    "reversed": lambda a: np.ascontiguousarray(a[::-1])[::-1],
    "Fortran order": np.asfortranarray,
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["focus f32", "split, pad and crop", "strided layouts"])
def test_any_address_and_strides_are_taken(backend, rng, name, layout):
    graph, inputs, oracle = GRAPHS[name]()
    compiled = graph.compile()
    packed = [random_array(shape, data_type.numpy_dtype, rng) for shape, data_type in inputs]
    arrays = [LAYOUTS[layout](a) for a in packed]
    assert all(same_bits(np.ascontiguousarray(a), p) for a, p in zip(arrays, packed))
    for result, expected in zip(as_tuple(compiled(*arrays)), oracle(*packed)):
        assert same_bits(result, expected)


def test_a_zero_stride_input_is_taken(backend):
    graph, _, oracle = strided_layouts()
    x = np.broadcast_to(np.arange(4, dtype=np.float32), (3, 4))
    assert same_bits(graph.compile()(x), *oracle(x))


def test_an_aligned_packed_input_is_bound_as_it_is(monkeypatch):
    from cudadml.graphs import graph as graph_module

    graph, _, _ = focus()
    compiled = graph.compile()
    x = aligned_empty(2 * 3 * 8 * 6 * 4).view(np.float32).reshape(2, 3, 8, 6)
    x[...] = 1
    staged = []
    real = graph_module._staged
    monkeypatch.setattr(graph_module, "_staged", lambda a, *rest: staged.append(real(a, *rest) is a) or real(a, *rest))
    compiled(x)
    compiled(x[..., ::-1])
    assert staged == [True, False]


def test_one_output_is_an_array_and_several_a_tuple_in_output_order(backend):
    one, _, _ = strided_layouts()
    assert isinstance(one.compile()(np.zeros((3, 4), np.float32)), np.ndarray)
    several, _, _ = split_pad_crop()
    x, v = np.arange(15, dtype=np.uint8).reshape(3, 5), np.arange(7, dtype=np.uint8)
    result = several.compile()(x, v)
    assert isinstance(result, tuple) and [r.shape for r in result] == [(5, 4), (3, 3), (3,)]


@pytest.mark.parametrize(
    ("build", "arrays", "error", "message"),
    [
        (
            focus,
            [np.zeros((2, 3, 8, 7), np.float32)],
            ValueError,
            "compiled graph: argument 0 is float32 of shape (2, 3, 8, 7); graph input 0 ('images') takes float32 "
            "of shape (2, 3, 8, 6)",
        ),
        (
            focus,
            [np.zeros((2, 3, 8, 6), np.float64)],
            TypeError,
            "compiled graph: argument 0 is float64 of shape (2, 3, 8, 6); graph input 0 ('images') takes float32 "
            "of shape (2, 3, 8, 6)",
        ),
        (
            split_pad_crop,
            [np.zeros((3, 5), np.uint8), np.zeros((7, 1), np.uint8)],
            ValueError,
            "compiled graph: argument 1 is uint8 of shape (7, 1); graph input 1 takes uint8 of shape (7,)",
        ),
        (
            split_pad_crop,
            [np.zeros((3, 5), np.int8), np.zeros(7, np.uint8)],
            TypeError,
            "compiled graph: argument 0 is int8 of shape (3, 5); graph input 0 takes uint8 of shape (3, 5)",
        ),
        (
            split_pad_crop,
            [np.zeros((3, 5), np.uint8)],
            TypeError,
            "compiled graph: takes 2 arrays (one per graph input: graph input 0, graph input 1), 1 given",
        ),
        (
            focus,
            [[1.0, 2.0]],
            TypeError,
            "compiled graph: argument 0 is float64 of shape (2,); graph input 0 ('images') takes float32",
        ),
    ],
)
def test_a_wrong_call_names_the_argument_the_graph_input_and_what_it_takes(build, arrays, error, message):
    compiled = build()[0].compile()
    with pytest.raises(error, match=re.escape(message)):
        compiled(*arrays)


def test_execute_keeps_the_binding_rules_and_says_the_way_forward():
    graph, _, _ = split_pad_crop()
    compiled = graph.compile()
    x, v = aligned_empty(32)[1:17], aligned_empty(16)[:7]  # misaligned; 7 of the 8 bytes needed
    outs = [aligned_empty(64) for _ in range(3)]
    with pytest.raises(cd.BindingError) as caught:
        compiled.execute([x, v], outs)
    lines = str(caught.value).splitlines()
    assert lines == [
        "Graph.execute: inputs[0]: the bound address is 1 bytes past a multiple of 16 (buffer tensors' minimum "
        f"alignment); {WAY_FORWARD}",
        "Graph.execute: inputs[1]: the bound range of 7 bytes is smaller than TotalTensorSizeInBytes = 8; "
        + WAY_FORWARD,
    ]
    assert WAY_FORWARD == (
        "call the compiled graph with arrays (compiled(x)), or allocate with cudadml.testing.aligned_empty"
    )
    # Other rules are not about buffers: their messages stay as they were.
    buffer = aligned_empty(64)
    with pytest.raises(cd.BindingError, match=r"outputs\[0\] overlaps inputs\[0\] in memory$"):
        compiled.execute([buffer, aligned_empty(16)], [buffer, aligned_empty(64), aligned_empty(64)])
    # The same arrays called: staged, and run.
    x, v[...] = x[:15].reshape(3, 5), np.arange(7)
    x[...] = np.arange(15).reshape(3, 5)
    results = compiled(x, v)
    assert same_bits(results[1], x[:, 2:]) and same_bits(results[2], np.array([5, 3, 1], np.uint8))


# ---------------------------------------------------------------------------------------------
# Other kinds of arrays.


def test_torch_cpu_tensors_give_torch_tensors(backend, rng):
    torch = pytest.importorskip("torch")
    graph, inputs, oracle = split_pad_crop()
    arrays = [random_array(shape, data_type.numpy_dtype, rng) for shape, data_type in inputs]
    tensors = [torch.from_numpy(np.ascontiguousarray(arrays[0].T)).T, torch.from_numpy(arrays[1])]  # one strided
    results = graph.compile()(*tensors)
    assert all(type(r) is torch.Tensor and r.device.type == "cpu" for r in results)
    for result, expected in zip(results, oracle(*arrays)):
        assert same_bits(result.numpy(), expected)
    graph, inputs, oracle = focus()
    x = torch.from_numpy(random_array((2, 3, 8, 6), np.float32, rng)).requires_grad_()
    assert same_bits(graph.compile()(x).numpy(), oracle(x.detach().numpy())[0])


def test_torch_tensors_and_numpy_arrays_do_not_mix():
    torch = pytest.importorskip("torch")
    graph, _, _ = split_pad_crop()
    with pytest.raises(TypeError, match="mix torch tensors with other arrays"):
        graph.compile()(torch.zeros((3, 5), dtype=torch.uint8), np.zeros(7, np.uint8))


@pytest.mark.gpu
@pytest.mark.parametrize("name", GRAPHS)
def test_cupy_arrays_give_cupy_arrays(rng, name):
    import cupy as cp

    graph, inputs, oracle = GRAPHS[name]()
    compiled = graph.compile()
    arrays = [random_array(shape, data_type.numpy_dtype, rng) for shape, data_type in inputs]
    results = as_tuple(compiled(*[cp.asarray(a) for a in arrays]))
    assert all(type(r) is cp.ndarray for r in results)
    for result, expected in zip(results, oracle(*arrays)):
        assert same_bits(cp.asnumpy(result), expected)
    # Misaligned and strided device arrays, and a stream.
    shifted = [cp.asarray(np.repeat(a, 2, axis=-1))[..., 1::2] for a in arrays]
    stream = cp.cuda.Stream(non_blocking=True)
    results = as_tuple(compiled(*shifted, stream=stream))
    stream.synchronize()
    for result, expected in zip(results, oracle(*arrays)):
        assert same_bits(cp.asnumpy(result), expected)


@pytest.mark.gpu
def test_cuda_torch_tensors_give_cuda_torch_tensors(rng):
    torch = pytest.importorskip("torch")
    graph, _, oracle = focus()
    x = random_array((2, 3, 8, 6), np.float32, rng)
    result = graph.compile()(torch.from_numpy(x).cuda())
    assert result.device.type == "cuda"
    assert same_bits(result.cpu().numpy(), oracle(x)[0])


def test_cupy_and_numpy_do_not_mix():
    cp = pytest.importorskip("cupy")
    from cudadml.backends import gpu_status

    if not gpu_status()[0]:
        pytest.skip("no usable GPU")
    graph, _, _ = split_pad_crop()
    with pytest.raises(TypeError, match=r"mix host \(NumPy\) and device \(CuPy\) memory"):
        graph.compile()(cp.zeros((3, 5), cp.uint8), np.zeros(7, np.uint8))

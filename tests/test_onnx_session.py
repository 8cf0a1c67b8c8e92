"""``cudadml.onnx.InferenceSession`` against ``onnxruntime.InferenceSession`` on the same models
and feeds, byte for byte: descriptions of inputs and outputs, ``run`` with every output or some
in another order, a symbolic batch at two sizes (compiled once per shape, a bounded cache),
BOOL tensors, torch CPU feeds, CuPy feeds on the GPU, and the messages of a wrong call."""

import re

import numpy as np
import pytest

import cudadml as cd
from cudadml import onnx as cd_onnx
from cudadml.testing import random_array

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the skip)


def _model(nodes, inputs, outputs, constants=()):
    model = helper.make_model(
        helper.make_graph(nodes, "session", inputs, outputs, list(constants)),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    model.ir_version = 10  # what every onnxruntime from 1.18 on reads
    return model


def _ints(name, *values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def focus(batch="N"):
    """Space-to-depth over a batch dimension ``batch`` (a name: symbolic)."""
    constants = [_ints(f"s{k}", p, q) for k, (p, q) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)])]
    constants += [_ints("end", 8, 8), _ints("axes", 2, 3), _ints("steps", 2, 2)]
    nodes = [helper.make_node("Slice", ["x", f"s{k}", "end", "axes", "steps"], [f"c{k}"]) for k in range(4)]
    nodes.append(helper.make_node("Concat", ["c0", "c1", "c2", "c3"], ["y"], axis=1))
    value = helper.make_tensor_value_info
    return _model(
        nodes, [value("x", TensorProto.FLOAT, [batch, 3, 8, 8])], [value("y", TensorProto.FLOAT, [batch, 12, 4, 4])],
        constants,
    )  # fmt: skip


def qkv(elem_type=TensorProto.FLOAT16):
    """Two inputs, three outputs: a split into q, k, v, and a crop of the second input padded."""
    value = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Split", ["qkv", "sizes"], ["q", "k", "v"], axis=2),
        helper.make_node("Pad", ["m", "pads"], ["padded"]),
    ]
    return _model(
        nodes,
        [value("qkv", elem_type, ["B", 4, 24]), value("m", TensorProto.BOOL, [3, 5])],
        [value("q", elem_type, ["B", 4, 8]), value("k", elem_type, ["B", 4, 8]), value("v", elem_type, ["B", 4, 8]),
         value("padded", TensorProto.BOOL, [4, 8])],
        [_ints("sizes", 8, 8, 8), _ints("pads", 1, 2, 0, 1)],
    )  # fmt: skip


def _feeds(session, rng, batch):
    feeds = {}
    for arg in session.get_inputs():
        shape = [batch if isinstance(d, str) else d for d in arg.shape]
        if arg.type == "tensor(bool)":
            feeds[arg.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            dtype = {"tensor(float)": np.float32, "tensor(float16)": np.float16}[arg.type]
            a = random_array(shape, dtype, rng).copy()
            if a.dtype.kind == "f":  # onnxruntime may quiet a signalling NaN; the operators move bits
                a[~np.isfinite(a)] = 1.5
            feeds[arg.name] = a
    return feeds


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _described(args):
    return [(a.name, a.shape, a.type) for a in args]


@pytest.fixture(params=["reference", "emulate"])
def backend(request):
    with cd.use_host_backend(request.param):
        yield request.param


@pytest.mark.parametrize("build", [focus, qkv], ids=["focus", "qkv"])
def test_runs_as_onnxruntime_runs_at_two_batch_sizes(backend, rng, build):
    model = build()
    ours = cd_onnx.InferenceSession(model.SerializeToString())
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    assert _described(ours.get_inputs()) == _described(theirs.get_inputs())
    assert _described(ours.get_outputs()) == _described(theirs.get_outputs())
    for batch in (1, 3, 1):
        feeds = _feeds(ours, rng, batch)
        expected = theirs.run(None, feeds)
        got = ours.run(None, feeds)
        assert len(got) == len(expected)
        assert all(type(g) is np.ndarray and same_bits(g, e) for g, e in zip(got, expected))
    assert len(ours._compiled) == 2  # once per batch size


def test_output_names_choose_and_order_the_results(rng):
    model = qkv()
    ours = cd_onnx.InferenceSession(model)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = _feeds(ours, rng, 2)
    names = ["padded", "q", "v"]
    got, expected = ours.run(names, feeds), theirs.run(names, feeds)
    assert [g.dtype for g in got] == [np.bool_, np.float16, np.float16]
    assert all(same_bits(g, e) for g, e in zip(got, expected))


def test_a_path_bytes_and_a_model_proto_are_taken_and_onnxruntime_arguments_ignored(tmp_path, rng):
    model = focus(2)  # static
    path = tmp_path / "focus.onnx"
    onnx.save(model, path)
    x = random_array((2, 3, 8, 8), np.float32, rng)
    results = [
        cd_onnx.InferenceSession(source, sess_options=ort.SessionOptions(), providers=["CUDAExecutionProvider"],
                                 provider_options=[{}]).run(None, {"x": x})[0]
        for source in (model, model.SerializeToString(), path, str(path))
    ]  # fmt: skip
    expected = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert all(same_bits(r, expected) for r in results)
    with pytest.raises(
        TypeError, match=re.escape("InferenceSession takes an onnx.ModelProto, its bytes or a path, not int")
    ):
        cd_onnx.InferenceSession(3)


def test_shapes_are_compiled_once_and_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(cd_onnx, "SESSION_SHAPES", 2)
    session = cd_onnx.InferenceSession(focus())
    compiled = []
    for batch in (1, 2, 1, 3, 2):
        x = np.zeros((batch, 3, 8, 8), np.float32)
        session.run(None, {"x": x})
        compiled.append(session._graph([x]))
    assert compiled[0] is compiled[2]  # batch 1 again: the same compiled graph
    assert list(session._compiled) == [((3, 3, 8, 8),), ((2, 3, 8, 8),)]  # batch 1 dropped for 3, then 2 again
    assert compiled[4] is not compiled[1]  # batch 2 had been dropped for 3: compiled again


def test_strided_and_misaligned_feeds_and_torch_tensors(rng):
    model = qkv(TensorProto.FLOAT)
    ours = cd_onnx.InferenceSession(model)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = _feeds(ours, rng, 2)
    expected = theirs.run(None, feeds)
    strided = {"qkv": np.repeat(feeds["qkv"], 2, axis=0)[::2], "m": np.asfortranarray(feeds["m"])}
    assert all(same_bits(g, e) for g, e in zip(ours.run(None, strided), expected))
    torch = pytest.importorskip("torch")
    got = ours.run(None, {name: torch.from_numpy(a) for name, a in feeds.items()})
    assert all(type(g) is torch.Tensor for g in got)
    assert got[3].dtype == torch.bool
    assert all(same_bits(g.numpy(), e) for g, e in zip(got, expected))


@pytest.mark.parametrize(
    ("feeds", "output_names", "error", "message"),
    [
        ({}, None, ValueError, "no feed for input 'x'"),
        (
            {"x": np.zeros((1, 3, 8, 8), np.float32), "z": np.zeros(1)},
            None,
            ValueError,
            "'z' is not an input of the model (inputs: 'x')",
        ),
        ({"x": np.zeros((1, 3, 8, 8), np.float32)}, ["y", "w"], KeyError, "'w' is not an output of the model"),
        (
            {"x": np.zeros((1, 3, 8, 8), np.float64)},
            None,
            TypeError,
            "input 'x' is fed float64; it takes tensor(float) (float32)",
        ),
        (
            {"x": np.zeros((3, 8, 8), np.float32)},
            None,
            ValueError,
            "input 'x' is fed shape (3, 8, 8); it takes rank 4, shape ['N', 3, 8, 8]",
        ),
        (
            {"x": np.zeros((2, 3, 8, 9), np.float32)},
            None,
            ValueError,
            "input 'x' is fed shape (2, 3, 8, 9); it takes rank 4, shape ['N', 3, 8, 8]",
        ),
    ],
)
def test_a_wrong_run_names_what_is_wrong(feeds, output_names, error, message):
    session = cd_onnx.InferenceSession(focus())
    with pytest.raises(error, match=re.escape(message)):
        session.run(output_names, feeds)


def test_a_model_load_refuses_is_refused_when_the_session_is_made():
    model = _model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(cd_onnx.UnsupportedModelError, match="op type 'Relu' is not supported"):
        cd_onnx.InferenceSession(model)


@pytest.mark.gpu
def test_cupy_feeds_give_cupy_results(rng):
    import cupy as cp

    model = focus()
    ours = cd_onnx.InferenceSession(model)
    theirs = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for batch in (1, 4):
        feeds = _feeds(ours, rng, batch)
        (got,) = ours.run(None, {k: cp.asarray(v) for k, v in feeds.items()})
        assert type(got) is cp.ndarray
        assert same_bits(cp.asnumpy(got), theirs.run(None, feeds)[0])

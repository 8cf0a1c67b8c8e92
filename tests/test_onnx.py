"""``cudadml.onnx.load`` against onnxruntime (CPU), byte for byte.

Three sources of models, each loaded, compiled and run on the host reference backend and
through the CUDA kernels emulated on the host (inputs of random data, outputs poisoned with
canaries around them), its outputs compared by bytes with onnxruntime's:

* ONNX's backend node tests for Slice, Split, Concat, Pad, Identity, Flatten and Reshape, with
  their constant inputs (starts, ends, pads, shapes ...) folded into initializers; compared with
  the outputs ONNX stores too. They come from ``onnx/backend/test/data/node`` where the onnx
  package ships it, else from the generators it ships in ``onnx.backend.test.case.node`` (the
  same cases; recent wheels leave the data out). ``NOT_APPLICABLE`` lists those
  that load refuses, with why, and each is checked to be refused with that reason;
* models built with ``onnx.helper``, one per form of each node, data type and graph shape;
* models that ``torch.onnx.export`` writes, with the TorchScript exporter and the new one.

Then every refusal, with its message (``tests/test_onnx_fuzz.py`` draws random models, valid
and invalid, against ``onnx.checker`` and onnxruntime). Floating inputs hold no NaN:
onnxruntime's Pad of float16 quiets a signalling NaN, where the operators move bits unchanged.
"""

import contextlib
import doctest
import pathlib
import re
import sys

import numpy as np
import pytest

import cudadml as cd
from cudadml.testing import TensorBuffer, emulated, random_array

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the skip)

from cudadml.onnx import ModelError, UnsupportedModelError  # noqa: E402

F32 = TensorProto.FLOAT


# -- running a graph, and onnxruntime -------------------------------------------------------


def _random(shape, dtype, rng):
    """Random values of ``dtype``: random bits, with no NaN, infinity or zero among floats."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    a = random_array(shape, dtype, rng).copy()
    if dtype.kind == "f":
        a[~np.isfinite(a) | (a == 0)] = 1.5
    return a


def _bits(a):
    """A NumPy array as DirectML holds it: BOOL as UINT8."""
    a = np.ascontiguousarray(a)
    return a.view(np.uint8) if a.dtype == bool else a


def _run(graph, inputs):
    """``graph`` run on the host reference backend and through the CUDA kernels emulated on the
    host, which must agree: each input in a buffer whose other bytes are padding, each output
    poisoned, with canaries around it that must stay untouched; the outputs."""
    assert [t.sizes for t in graph.input_tensors] == [np.shape(x) for x in inputs]
    results = []
    for backend in (contextlib.nullcontext, emulated):
        ins = [TensorBuffer(t).fill(_bits(x)) for t, x in zip(graph.input_tensors, inputs)]
        outs = [TensorBuffer(t) for t in graph.output_tensors]
        with backend():
            graph.compile().execute([b.binding for b in ins], [b.binding for b in outs])
        for k, b in enumerate(outs):
            assert b.untouched_outside(), f"{backend.__name__}: output {k}: a byte outside its elements was written"
        results.append([b.host_elements() for b in outs])
    reference, kernels = results
    _assert_same(kernels, reference, "the emulated kernels against the reference backend")
    return reference


def _onnxruntime(model, inputs):
    ort = pytest.importorskip("onnxruntime")
    if model.ir_version > 10:  # as _model: an older onnxruntime refuses a newer onnx's default
        model = type(model).FromString(model.SerializeToString())
        model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)})


def _assert_same(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for k, (a, b) in enumerate(zip(ours, theirs)):
        b = _bits(b)
        assert a.shape == b.shape, f"{what}: output {k} has shape {a.shape}, expected {b.shape}"
        assert a.dtype == b.dtype, f"{what}: output {k} is {a.dtype}, expected {b.dtype}"
        assert a.tobytes() == b.tobytes(), f"{what}: output {k} differs"


def _check(model, rng, inputs=None):
    """Load ``model``, run it on random inputs (or ``inputs``), compare with onnxruntime."""
    graph = cd.onnx.load(model)
    if inputs is None:
        inputs = [_random(_shape(vi), _dtype(vi), rng) for vi in _graph_inputs(model)]
    ours = _run(graph, inputs)
    _assert_same(ours, _onnxruntime(model, inputs), model.graph.name)
    return graph, inputs, ours


def _graph_inputs(model):
    constants = {i.name for i in model.graph.initializer}
    return [vi for vi in model.graph.input if vi.name not in constants]


def _shape(vi):
    return tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)


def _dtype(vi):
    return helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type)


# -- ONNX's backend node tests --------------------------------------------------------------

NODE_TESTS = re.compile(
    r"test_(slice|split|concat|constant_pad|edge_pad|reflect_pad|wrap_pad|identity|flatten|reshape)"
)

#: The node tests that load refuses: a pattern of their names, and the reason (a pattern of
#: the refusal's message).
NOT_APPLICABLE = {
    # ONNX pads with 1.2; SLICE_GRAD writes zeros (test_constant_pad_with_zero runs them with 0).
    r"test_constant_pad(_axes|_negative_axes)?": r"constant_value 1\.2 is not supported \(only 0",
    r"test_(edge|reflect|wrap)_pad": r"mode '(edge|reflect|wrap)' is not supported",
    # Empty tensors, which DirectML does not have: an empty slice, a split part of size 0, and
    # a reshape of an input of shape (0, 3, 4).
    r"test_slice_start_out_of_bounds": r"output 0 \('y'\) has shape \(20, 0, 5\); DirectML tensors have no empty",
    r"test_split_zero_size_splits.*": r"has shape \(0,\); DirectML tensors have no empty dimension",
    r"test_reshape_allowzero_reordered": r"input 0 \('data'\) has shape \(0, 3, 4\); DirectML tensors have no empty",
    # Not tensors.
    r"test_identity_sequence": r"graph input 'x' is a sequence, not a tensor",
    r"test_identity_opt": r"graph input 'opt_in' is an optional, not a tensor",
    r"test_split_to_sequence.*": r"op type 'SplitToSequence' is not supported",
}


def _refusal(name):
    return next((why for pattern, why in NOT_APPLICABLE.items() if re.fullmatch(pattern, name)), None)


def _node_test_cases():
    """``(name, model, inputs, outputs)`` of ONNX's node tests of the seven op types."""
    shipped = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
    if shipped.is_dir():
        return [_read_node_test(d) for d in sorted(shipped.iterdir()) if NODE_TESTS.match(d.name)]
    # Importing a generator module runs its cases, seeding NumPy's global generator as ONNX
    # does for its data; the generator's state is put back after.
    import importlib

    from onnx.backend.test.case import node

    state = np.random.get_state()  # noqa: NPY002 (the legacy generator is what ONNX seeds)
    try:
        for module in ("slice", "split", "concat", "pad", "identity", "flatten", "reshape"):
            importlib.import_module(f"onnx.backend.test.case.node.{module}")
    finally:
        np.random.set_state(state)  # noqa: NPY002
    cases = {c.name: c for c in node._NodeTestCases if NODE_TESTS.match(c.name)}
    return [(c.name, c.model, *map(list, c.data_sets[0])) for _, c in sorted(cases.items())]


def _read_node_test(directory):
    model = onnx.load(directory / "model.onnx")
    data = directory / "test_data_set_0"

    def read(kind):
        tensors = []
        for k in range(len(list(data.glob(f"{kind}_*.pb")))):
            proto = TensorProto()
            proto.ParseFromString((data / f"{kind}_{k}.pb").read_bytes())
            tensors.append(numpy_helper.to_array(proto))
        return tensors

    values = [*model.graph.input, *model.graph.output]
    if any(vi.type.WhichOneof("value") != "tensor_type" for vi in values):  # sequences and optionals
        return directory.name, model, [], []
    return directory.name, model, read("input"), read("output")


NODE_CASES = _node_test_cases()


def _folded(model, inputs):
    """A copy of a one-node model whose inputs other than the node's data (all of Concat's,
    the first of the others) are initializers holding ``inputs``' values; the data inputs."""
    folded = onnx.ModelProto()
    folded.CopyFrom(model)
    graph, node = folded.graph, folded.graph.node[0]
    data = set(node.input if node.op_type == "Concat" else node.input[:1])
    kept, values = [], []
    for vi, value in zip(list(graph.input), inputs):
        if vi.name in data:
            kept.append(vi)
            values.append(value)
        else:
            graph.initializer.append(numpy_helper.from_array(np.asarray(value), vi.name))
    del graph.input[:]
    graph.input.extend(kept)
    return folded, values


@pytest.mark.parametrize("case", NODE_CASES, ids=[c[0] for c in NODE_CASES])
def test_backend_node_test(case):
    name, model, inputs, outputs = case
    why = _refusal(name)
    if why:
        with pytest.raises(UnsupportedModelError, match=why):
            cd.onnx.load(_folded(model, inputs)[0] if inputs else model)
        return
    folded, data = _folded(model, inputs)
    ours = _run(cd.onnx.load(folded), data)
    _assert_same(ours, outputs, f"{name} (ONNX's expected outputs)")
    _assert_same(ours, _onnxruntime(folded, data), f"{name} (onnxruntime)")


def test_every_node_test_op_type_is_there():
    ops = {c[1].graph.node[0].op_type for c in NODE_CASES}
    assert {"Slice", "Split", "Concat", "Pad", "Identity", "Flatten", "Reshape"} <= ops
    assert sum(_refusal(c[0]) is None for c in NODE_CASES) >= 50


@pytest.mark.parametrize("case", [c for c in NODE_CASES if c[0].startswith("test_constant_pad")], ids=lambda c: c[0])
def test_constant_pad_with_zero(case):
    """ONNX's constant-pad tests with the constant 0, against onnxruntime."""
    name, model, inputs, _ = case
    inputs = [np.zeros_like(x) if k == 2 else x for k, x in enumerate(inputs)]
    folded, data = _folded(model, inputs)
    _assert_same(_run(cd.onnx.load(folded), data), _onnxruntime(folded, data), name)


# -- models built with onnx.helper -----------------------------------------------------------


def _ints(name, *values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _model(nodes, inputs, outputs, initializers=(), opset=18, name="model"):
    """A model of ``nodes``; ``inputs`` and ``outputs`` as ``(name, elem type, shape)``
    (``None`` shape: the one ONNX's shape inference gives, where it gives one)."""
    info = helper.make_tensor_value_info
    graph = helper.make_graph(nodes, name, [info(*i) for i in inputs], [info(*o) for o in outputs], list(initializers))
    # IR version 10 (onnx 1.16): what every onnxruntime from 1.18 on reads; a newer onnx writes
    # a newer one by default, which an older onnxruntime refuses.
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    return _declared(model)


def _declared(model):
    """``model`` with the graph outputs that declare no shape declaring the type that ONNX's
    shape inference gives them (a model's outputs must declare one)."""
    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    del bare.graph.output[:]  # (inference leaves a declared output's type as it is)
    try:
        inferred = {vi.name: vi.type for vi in onnx.shape_inference.infer_shapes(bare).graph.value_info}
    except onnx.shape_inference.InferenceError:  # (a model that load refuses)
        inferred = {}
    for vi in model.graph.output:
        if not vi.type.tensor_type.HasField("shape") and vi.name in inferred:
            vi.type.CopyFrom(inferred[vi.name])
    return model


def _node(op, inputs, outputs, name=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name or f"{op.lower()}0", **attrs)


def _one(op, shape, inputs=(), initializers=(), opset=18, dtype=F32, outputs=1, **attrs):
    """A model of one node ``op`` on ``x`` of ``shape`` (then ``inputs``, constants)."""
    names = [f"y{k}" for k in range(outputs)]
    node = _node(op, ["x", *inputs], names, **attrs)
    return _model([node], [("x", dtype, shape)], [(n, dtype, None) for n in names], initializers, opset, op)


#: ``id: model``: each form of each node, run against onnxruntime.
HELPER_MODELS = {
    # Slice: opset 1's attributes (clamped, negative, default axes), opset 10's inputs.
    "slice-attributes": lambda: _model(  # (ONNX's shape inference gives opset 1's Slice no shape)
        [_node("Slice", ["x"], ["y"], starts=[-4, 1], ends=[100, -1], axes=[2, 0])],
        [("x", F32, [5, 6, 7])],
        [("y", F32, [3, 6, 4])],
        opset=9,
    ),
    "slice-attributes-default-axes": lambda: _one("Slice", [5, 6], opset=9, starts=[1, -3], ends=[3, 1000]),
    "slice-inputs": lambda: _one(
        "Slice", [5, 6, 7], ["s", "e"], [_ints("s", 1, 2, -7), _ints("e", 4, -1, 7)], opset=10
    ),
    "slice-steps": lambda: _one(
        "Slice",
        [9, 8, 7],
        ["s", "e", "a", "st"],
        [_ints("s", 1, -100), _ints("e", 2**63 - 1, 6), _ints("a", -1, 0), _ints("st", 3, 2)],
    ),
    "slice-negative-steps": lambda: _one(
        "Slice",
        [9, 8, 7],
        ["s", "e", "a", "st"],
        [_ints("s", -1, 100, 5), _ints("e", -(2**63), 0, 1), _ints("a", 0, 1, 2), _ints("st", -2, -3, -1)],
    ),
    "slice-one-element-huge-step": lambda: _one(
        "Slice", [4, 5], ["s", "e", "a", "st"], [_ints("s", 3), _ints("e", -100), _ints("a", 1), _ints("st", -(2**40))]
    ),
    "slice-rank-8": lambda: _one(
        "Slice", [2, 3, 2, 3, 2, 3, 2, 3], ["s", "e", "a"], [_ints("s", 1, 1), _ints("e", 3, 2), _ints("a", 1, 7)]
    ),
    # Split: opset 2's attribute, equal parts, opset 13's input, opset 18's num_outputs.
    "split-attribute": lambda: _one("Split", [4, 10], opset=7, outputs=3, axis=1, split=[2, 5, 3]),
    "split-equal-negative-axis": lambda: _one("Split", [6, 4], opset=11, outputs=3, axis=-2),
    "split-input": lambda: _one("Split", [3, 7, 2], ["s"], [_ints("s", 4, 1, 2)], opset=13, outputs=3, axis=1),
    "split-one-output": lambda: _one("Split", [3, 7], ["s"], [_ints("s", 7)], opset=13, outputs=1, axis=1),
    "split-num-outputs-uneven": lambda: _one("Split", [2, 11], opset=18, outputs=4, axis=1, num_outputs=4),
    "split-num-outputs-even": lambda: _one("Split", [9, 2], opset=18, outputs=3, num_outputs=3),
    # Pad: zeros (SLICE_GRAD), negative pads (a crop first), both, opset 18's axes, opset 2's
    # attributes, an explicit constant of 0, a pad of nothing.
    "pad": lambda: _one("Pad", [3, 4, 5], ["p"], [_ints("p", 1, 0, 2, 0, 3, 1)]),
    "pad-crop": lambda: _one("Pad", [6, 7], ["p"], [_ints("p", -1, -2, 0, -3)]),
    "pad-crop-and-grow": lambda: _one("Pad", [6, 7], ["p"], [_ints("p", -2, 3, 1, -4)]),
    "pad-axes": lambda: _one(
        "Pad", [3, 4, 5], ["p", "", "a"], [_ints("p", 2, -1, 0, 3), _ints("a", -1, 0)], mode="constant"
    ),
    "pad-attributes": lambda: _one("Pad", [3, 4], opset=7, pads=[1, 0, 0, 2], value=0.0),
    "pad-zero-constant": lambda: _one(
        "Pad", [3, 4], ["p", "v"], [_ints("p", 0, 1, 1, 0), numpy_helper.from_array(np.float32(0), "v")], opset=11
    ),
    "pad-nothing": lambda: _one("Pad", [3, 4], ["p"], [_ints("p", 0, 0, 0, 0)]),
    # Concat, Identity, Flatten, Reshape.
    "concat-negative-axis": lambda: _model(
        [_node("Concat", ["a", "b", "c"], ["y"], axis=-2)],
        [("a", F32, [2, 1, 3]), ("b", F32, [2, 4, 3]), ("c", F32, [2, 2, 3])],
        [("y", F32, [2, 7, 3])],
    ),
    "concat-one-input-twice": lambda: _model(
        [_node("Concat", ["x", "x"], ["y"], axis=0)], [("x", F32, [2, 3])], [("y", F32, [4, 3])]
    ),
    "identity": lambda: _one("Identity", [2, 3, 4]),
    "flatten-then-slice": lambda: _model(
        [_node("Flatten", ["x"], ["f"], axis=-2), _node("Slice", ["f", "s", "e"], ["y"])],
        [("x", F32, [2, 3, 4, 5])],
        [("y", F32, None)],
        [_ints("s", 1, 0), _ints("e", 5, 5)],
    ),
    "reshape-zero-and-minus-one": lambda: _model(
        [
            _node("Slice", ["x", "s", "e"], ["c"]),
            _node("Reshape", ["c", "r"], ["r1"]),
            _node("Identity", ["r1"], ["y"]),
        ],
        [("x", F32, [4, 6, 8])],
        [("y", F32, [4, 3, 2, 4])],
        [_ints("s", 0, 0, 0), _ints("e", 4, 6, 4), _ints("r", 0, 3, -1, 4)],
    ),
    "reshape-allowzero": lambda: _model(
        [
            _node("Reshape", ["x", "r"], ["r1"], allowzero=1),
            _node("Split", ["r1"], ["y0", "y1"], axis=1, num_outputs=2),
        ],
        [("x", F32, [4, 6])],
        [("y0", F32, None), ("y1", F32, None)],
        [_ints("r", 3, 8)],
    ),
    # Graph shapes: a reshape on a graph input used by nodes of other shapes too, a reshape
    # straight to a graph output (both through an Identity), a node output that is a graph
    # output and feeds a node, outputs of one Split reordered, several inputs in order.
    "reshape-on-input-and-slice": lambda: _model(
        [
            _node("Reshape", ["x", "r"], ["r1"]),
            _node("Slice", ["r1", "s", "e"], ["y0"]),
            _node("Slice", ["x", "s", "e"], ["y1"], name="slice1"),
        ],
        [("x", F32, [4, 6])],
        [("y0", F32, None), ("y1", F32, None)],
        [_ints("r", 3, 8), _ints("s", 1, 1), _ints("e", 3, 5)],
    ),
    "reshape-input-to-output": lambda: _model(
        [_node("Reshape", ["x", "r"], ["y"])], [("x", F32, [4, 6])], [("y", F32, [2, 12])], [_ints("r", 2, -1)]
    ),
    "flatten-node-output-to-output": lambda: _model(
        [_node("Split", ["x"], ["a", "b"], axis=1, num_outputs=2), _node("Flatten", ["b"], ["y"], axis=0)],
        [("x", F32, [4, 6])],
        [("y", F32, [1, 12])],
    ),
    "output-also-feeds-a-node": lambda: _model(
        [_node("Split", ["x"], ["a", "b"], axis=0, num_outputs=2), _node("Concat", ["b", "a"], ["y"], axis=0)],
        [("x", F32, [4, 3])],
        [("a", F32, [2, 3]), ("y", F32, [4, 3])],
    ),
    "two-inputs-in-order": lambda: _model(
        [_node("Concat", ["b", "a"], ["y"], axis=1)],
        [("a", F32, [2, 3]), ("b", F32, [2, 5])],
        [("y", F32, [2, 8])],
    ),
    # Constants: Constant nodes (value, value_ints), and constant nodes folded into the shape.
    "constant-nodes": lambda: _model(
        [
            helper.make_node("Constant", [], ["s"], value=_ints("v", 1, 1)),
            helper.make_node("Constant", [], ["e"], value_ints=[3, 4]),
            helper.make_node("Constant", [], ["h"], value_ints=[2]),
            helper.make_node("Constant", [], ["w"], value_ints=[-1]),
            _node("Concat", ["h", "w"], ["shape"], axis=0),
            _node("Slice", ["x", "s", "e"], ["c"]),
            helper.make_node("Reshape", ["c", "shape"], ["y"], name="reshape1"),
        ],
        [("x", F32, [4, 5])],
        [("y", F32, [2, 3])],
    ),
    "initializer-listed-as-input-and-dead-node": lambda: _model(
        [_node("Slice", ["x", "s", "e"], ["y"]), _node("Identity", ["x"], ["unused"])],
        [("x", F32, [4, 5]), ("s", TensorProto.INT64, [1]), ("e", TensorProto.INT64, [1])],
        [("y", F32, [2, 5])],
        [_ints("s", 1), _ints("e", 3)],
    ),
}


@pytest.mark.parametrize("name", list(HELPER_MODELS))
def test_helper_model(name, rng):
    _check(HELPER_MODELS[name](), rng)


#: ONNX's data types that load takes, with their DirectML types (BOOL moves as bytes).
DATA_TYPES = {
    TensorProto.FLOAT: cd.TensorDataType.FLOAT32,
    TensorProto.FLOAT16: cd.TensorDataType.FLOAT16,
    TensorProto.DOUBLE: cd.TensorDataType.FLOAT64,
    TensorProto.INT8: cd.TensorDataType.INT8,
    TensorProto.INT16: cd.TensorDataType.INT16,
    TensorProto.INT32: cd.TensorDataType.INT32,
    TensorProto.INT64: cd.TensorDataType.INT64,
    TensorProto.UINT8: cd.TensorDataType.UINT8,
    TensorProto.UINT16: cd.TensorDataType.UINT16,
    TensorProto.UINT32: cd.TensorDataType.UINT32,
    TensorProto.UINT64: cd.TensorDataType.UINT64,
    TensorProto.BOOL: cd.TensorDataType.UINT8,
}


@pytest.mark.parametrize("elem_type", list(DATA_TYPES), ids=[TensorProto.DataType.Name(t) for t in DATA_TYPES])
def test_data_types(elem_type, rng):
    """Every node kind on every data type: a reversed slice, a split, a concat, a padded crop,
    an identity and a reshape."""
    model = _model(
        [
            _node("Slice", ["x", "s", "e", "a", "st"], ["r"]),
            _node("Split", ["x"], ["a0", "a1"], axis=1, num_outputs=2),
            _node("Concat", ["a1", "r", "a0"], ["j"], axis=1),
            _node("Pad", ["j", "p"], ["y0"]),
            _node("Identity", ["a0"], ["y1"]),
            _node("Reshape", ["a1", "shape"], ["y2"]),
        ],
        [("x", elem_type, [5, 6])],
        [("y0", elem_type, None), ("y1", elem_type, None), ("y2", elem_type, None)],
        [
            _ints("s", -1, 5),
            _ints("e", -100, -100),
            _ints("a", 0, 1),
            _ints("st", -1, -2),
            _ints("p", -1, 2, 1, 0),
            _ints("shape", 3, 5),
        ],
    )
    graph = cd.onnx.load(model)
    assert {t.data_type for t in (*graph.input_tensors, *graph.output_tensors)} == {DATA_TYPES[elem_type]}
    x = _random((5, 6), helper.tensor_dtype_to_np_dtype(elem_type), rng)
    ours = _run(graph, [x])
    joined = np.concatenate([x[:, 3:], x[::-1, 5::-2], x[:, :3]], axis=1)
    _assert_same(ours, [np.pad(joined[1:], [(0, 1), (2, 0)]), x[:, :3], x[:, 3:].reshape(3, 5)], "NumPy")
    if elem_type not in (TensorProto.INT16, TensorProto.UINT16):  # onnxruntime has no Pad kernel for them
        _assert_same(ours, _onnxruntime(model, [x]), "onnxruntime")


def test_lowering(rng):
    """What each node becomes: SLICE, SLICE1 for negative steps, SLICE_GRAD after a SLICE for a
    Pad that crops, SPLIT, JOIN; reshapes as edges, and Identity SLICEs where a reshape meets a
    graph input or output."""
    graph = cd.onnx.load(HELPER_MODELS["slice-negative-steps"]())
    (node,) = graph.nodes
    assert isinstance(node.operator, cd.Slice1OperatorDesc)
    assert node.operator.input_window_strides == (-2, -3, -1)
    graph = cd.onnx.load(HELPER_MODELS["slice-steps"]())
    assert isinstance(graph.nodes[0].operator, cd.SliceOperatorDesc)
    graph = cd.onnx.load(HELPER_MODELS["pad-crop-and-grow"]())
    assert [type(n.operator).__name__ for n in graph.nodes] == ["SliceOperatorDesc", "SliceGradOperatorDesc"]
    assert [n.name for n in graph.nodes] == ["pad0 (crop)", "pad0"]
    graph = cd.onnx.load(HELPER_MODELS["reshape-on-input-and-slice"]())
    assert [n.name for n in graph.nodes] == ["x (Identity)", "slice0", "slice1"]
    assert graph.input_tensors[0].sizes == (4, 6)
    graph = cd.onnx.load(HELPER_MODELS["reshape-input-to-output"]())
    assert [n.name for n in graph.nodes] == ["x (Identity)", "y (Identity)"]
    assert graph.input_tensors[0].sizes == (4, 6) and graph.output_tensors[0].sizes == (2, 12)
    graph = cd.onnx.load(HELPER_MODELS["initializer-listed-as-input-and-dead-node"]())
    assert graph.input_count == 1 and len(graph.nodes) == 1


def test_load_takes_a_path(tmp_path, rng):
    model = HELPER_MODELS["split-input"]()
    path = tmp_path / "split.onnx"
    onnx.save(model, path)
    for where in (path, str(path)):
        assert cd.onnx.load(where).output_tensors == cd.onnx.load(model).output_tensors


def test_the_examples_run():
    """The docstrings' examples, skipped where onnx is missing, run here."""
    import cudadml.onnx

    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    tests = [t for t in finder.find(cudadml.onnx) if t.examples]
    for test in tests:
        for example in test.examples:
            example.options[doctest.SKIP] = False
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert {t.name for t in tests} >= {"cudadml.onnx.load"}


# -- models exported by PyTorch ---------------------------------------------------------------


def _torch_modules(torch):
    class Focus(torch.nn.Module):
        def forward(self, x):
            return torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)

    class QKV(torch.nn.Module):
        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = x.split(1024, -1)
            return q.reshape(b, t, 16, 64), k.reshape(b, t, 16, 64), v.reshape(b, t, 16, 64)

    class Crops(torch.nn.Module):
        def forward(self, x):
            return torch.cat([x[:, :, 10:42, 5:37], x[:, :, 0:32, 0:32]], 0)

    class SplitRejoinReversed(torch.nn.Module):
        def forward(self, x):
            a, b, c = x.split([2, 3, 4], 1)
            return torch.cat([c, b, a], 1)

    return {
        "focus": (Focus(), (1, 3, 16, 16)),
        "qkv": (QKV(), (2, 5, 3072)),
        "crops": (Crops(), (2, 3, 48, 40)),
        "split-rejoin-reversed": (SplitRejoinReversed(), (2, 9, 5)),
    }


@pytest.mark.filterwarnings("ignore:You are using the legacy TorchScript-based ONNX export:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:The feature will be removed:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:`isinstance\\(treespec, LeafSpec\\)` is deprecated:FutureWarning")
@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
@pytest.mark.parametrize("name", ["focus", "qkv", "crops", "split-rejoin-reversed"])
def test_torch_export(name, dynamo, tmp_path, rng):
    torch = pytest.importorskip("torch")
    if dynamo:
        pytest.importorskip("onnxscript")
    module, shape = _torch_modules(torch)[name]
    x = _random(shape, np.float32, rng)
    path = tmp_path / f"{name}.onnx"
    torch.onnx.export(module.eval(), (torch.from_numpy(x),), path, dynamo=dynamo, verbose=False)
    model = onnx.load(path)
    graph, _, ours = _check(model, rng, [x])
    expected = module(torch.from_numpy(x))
    _assert_same(ours, [t.numpy() for t in (expected if isinstance(expected, tuple) else (expected,))], name)
    assert {n.op_type for n in model.graph.node} <= set(cd.onnx.SUPPORTED_OPS)
    assert graph.input_count == 1


# -- refusals ---------------------------------------------------------------------------------


#: ``id: (model, exception, message pattern, node name, op type)``.
REFUSALS = {
    "op-type": (
        lambda: _one("Transpose", [2, 3]),
        UnsupportedModelError,
        r"^Transpose node 'transpose0': op type 'Transpose' is not supported \(supported: Concat, Constant, "
        r"Flatten, Identity, Pad, Reshape, Slice, Split\)$",
        "transpose0",
        "Transpose",
    ),
    "unnamed-node": (
        lambda: _model([helper.make_node("Abs", ["x"], ["y"])], [("x", F32, [2])], [("y", F32, [2])]),
        UnsupportedModelError,
        r"^Abs node #0 \(unnamed\): op type 'Abs' is not supported",
        "#0",
        "Abs",
    ),
    "domain": (
        lambda: _model(
            [helper.make_node("Slice", ["x"], ["y"], name="s", domain="com.example")],
            [("x", F32, [2])],
            [("y", F32, [2])],
        ),
        UnsupportedModelError,
        r"^Slice node 's': domain 'com.example' is not supported",
        "s",
        "Slice",
    ),
    **{
        f"pad-mode-{mode}": (
            lambda mode=mode: _one("Pad", [3, 4], ["p"], [_ints("p", 1, 1, 1, 1)], mode=mode),
            UnsupportedModelError,
            rf"^Pad node 'pad0': mode '{mode}' is not supported \(only 'constant', with the constant 0\)$",
            "pad0",
            "Pad",
        )
        for mode in ("edge", "reflect", "wrap")
    },
    "pad-constant": (
        lambda: _one(
            "Pad", [3, 4], ["p", "v"], [_ints("p", 1, 1, 1, 1), numpy_helper.from_array(np.float32(1.5), "v")]
        ),
        UnsupportedModelError,
        r"^Pad node 'pad0': constant_value 1\.5 is not supported \(only 0: DirectML's SLICE_GRAD writes zeros",
        "pad0",
        "Pad",
    ),
    "pad-negative-zero": (
        lambda: _one(
            "Pad", [3, 4], ["p", "v"], [_ints("p", 1, 1, 1, 1), numpy_helper.from_array(np.float32(-0.0), "v")]
        ),
        UnsupportedModelError,
        r"constant_value -0\.0 is not supported",
        "pad0",
        "Pad",
    ),
    "pad-attribute-constant": (
        lambda: _one("Pad", [3, 4], opset=7, pads=[1, 0, 0, 2], value=2.0),
        UnsupportedModelError,
        r"constant_value 2\.0 is not supported",
        "pad0",
        "Pad",
    ),
    # Valid (onnxruntime gives a zero): a crop on one side that reaches into the other side's
    # padding leaves nothing of the input to move.
    "pad-crop-into-padding": (
        lambda: _one("Pad", [2, 3], ["p"], [_ints("p", 2, 0, -3, 0)]),
        UnsupportedModelError,
        r"^Pad node 'pad0': pads \[2, 0, -3, 0\] crop all of the input's shape \(2, 3\): its output \(1, 3\) holds "
        r"no input element$",
        "pad0",
        "Pad",
    ),
    "slice-starts-not-constant": (
        lambda: _model(
            [_node("Slice", ["x", "s", "e"], ["y"])],
            [("x", F32, [4]), ("s", TensorProto.INT64, [1])],
            [("y", F32, None)],
            [_ints("e", 3)],
        ),
        UnsupportedModelError,
        r"^Slice node 'slice0': starts \('s'\) is not a constant \(an initializer or a Constant node's output\)",
        "slice0",
        "Slice",
    ),
    "pad-pads-not-constant": (
        lambda: _model(
            [_node("Pad", ["x", "p"], ["y"])],
            [("x", F32, [4]), ("p", TensorProto.INT64, [2])],
            [("y", F32, None)],
        ),
        UnsupportedModelError,
        r"^Pad node 'pad0': pads \('p'\) is not a constant",
        "pad0",
        "Pad",
    ),
    "reshape-shape-not-constant": (
        lambda: _model(
            [_node("Reshape", ["x", "r"], ["y"])],
            [("x", F32, [4]), ("r", TensorProto.INT64, [2])],
            [("y", F32, None)],
        ),
        UnsupportedModelError,
        r"^Reshape node 'reshape0': shape \('r'\) is not a constant",
        "reshape0",
        "Reshape",
    ),
    "rank-0": (
        lambda: _one("Identity", []),
        UnsupportedModelError,
        r"^Identity node 'identity0': input 0 \('x'\) has rank 0; DirectML tensors have 1 to 8 dimensions$",
        "identity0",
        "Identity",
    ),
    "rank-9": (
        lambda: _one("Reshape", [8, 64], ["r"], [_ints("r", 2, 2, 2, 2, 2, 2, 2, 2, 2)]),
        UnsupportedModelError,
        r"^Reshape node 'reshape0': output 0 \('y0'\) has rank 9; DirectML tensors have 1 to 8 dimensions$",
        "reshape0",
        "Reshape",
    ),
    "empty-slice": (
        lambda: _one("Slice", [4, 5], ["s", "e"], [_ints("s", 3), _ints("e", 1)]),
        UnsupportedModelError,
        r"^Slice node 'slice0': output 0 \('y0'\) has shape \(0, 5\); DirectML tensors have no empty dimension$",
        "slice0",
        "Slice",
    ),
    "data-type": (
        lambda: _one("Identity", [2, 3], dtype=TensorProto.BFLOAT16),
        UnsupportedModelError,
        r"^Identity node 'identity0': input 0 \('x'\) is BFLOAT16, which DirectML has no type for",
        "identity0",
        "Identity",
    ),
    "constant-joined-with-data": (
        lambda: _model(
            [_node("Concat", ["x", "c"], ["y"], axis=0)],
            [("x", F32, [2, 3])],
            [("y", F32, None)],
            [numpy_helper.from_array(np.ones((1, 3), np.float32), "c")],
        ),
        UnsupportedModelError,
        r"^Concat node 'concat0': input 1 \('c'\) is a constant joined with data",
        "concat0",
        "Concat",
    ),
    "sparse-initializer": (
        lambda: _sparse_model(),
        UnsupportedModelError,
        r"^Slice node 'slice0': input 1 is a sparse initializer 's', which load does not read$",
        "slice0",
        "Slice",
    ),
    "constant-string": (
        lambda: _model(
            [
                helper.make_node("Constant", [], ["s"], name="c", value_string="a"),
                _node("Slice", ["x", "s", "s"], ["y"]),
            ],
            [("x", F32, [2])],
            [("y", F32, None)],
        ),
        UnsupportedModelError,
        r"^Constant node 'c': a Constant's value_string is not supported$",
        "c",
        "Constant",
    ),
    # The graph.
    "output-is-input": (
        lambda: _model([_node("Identity", ["x"], ["z"])], [("x", F32, [2])], [("z", F32, None), ("x", F32, None)]),
        UnsupportedModelError,
        r"^graph output 1 \('x'\) is graph input 'x' itself; a graph has no edge from an input to an output",
        None,
        None,
    ),
    "output-is-initializer": (
        lambda: _model(
            [_node("Identity", ["x"], ["z"])], [("x", F32, [2])], [("z", F32, None), ("w", F32, None)], [_ints("w", 1)]
        ),
        UnsupportedModelError,
        r"^graph output 1 \('w'\) is an initializer; a graph moves data from its inputs only$",
        None,
        None,
    ),
    "output-is-constant": (
        lambda: _model(
            [_node("Identity", ["x"], ["z"]), helper.make_node("Constant", [], ["w"], value_ints=[1])],
            [("x", F32, [2])],
            [("z", F32, None), ("w", TensorProto.INT64, None)],
        ),
        UnsupportedModelError,
        r"^graph output 1 \('w'\) is a constant; a graph moves data from its inputs only$",
        None,
        None,
    ),
    "dynamic-dimension": (
        lambda: _one("Identity", ["N", 3]),
        UnsupportedModelError,
        r"^graph input 'x' has a dynamic dimension 'N' \(dimension 0\); load needs static shapes$",
        None,
        None,
    ),
    "no-shape": (
        lambda: _one("Identity", None),
        UnsupportedModelError,
        r"^graph input 'x' has no shape; load needs static shapes$",
        None,
        None,
    ),
    "unused-input": (
        lambda: _model([_node("Identity", ["x"], ["y"])], [("x", F32, [2]), ("u", F32, [2])], [("y", F32, None)]),
        UnsupportedModelError,
        r"^graph input 1 \('u'\) reaches no graph output; a graph uses every input$",
        None,
        None,
    ),
    # Invalid models.
    "split-sizes": (
        lambda: _one("Split", [3, 7], ["s"], [_ints("s", 4, 4)], opset=13, outputs=2, axis=1),
        ModelError,
        r"^Split node 'split0': split = \[4, 4\] must be non-negative sizes that sum to the axis' size 7$",
        "split0",
        "Split",
    ),
    "split-uneven-before-18": (
        lambda: _one("Split", [3, 7], opset=13, outputs=2, axis=1),
        ModelError,
        r"^Split node 'split0': an axis of size 7 does not split into 2 equal parts$",
        "split0",
        "Split",
    ),
    "split-18-without-sizes": (
        lambda: _one("Split", [3, 8], opset=18, outputs=2, axis=1),
        ModelError,
        r"neither the input split nor the attribute num_outputs is given",
        "split0",
        "Split",
    ),
    "split-too-many-parts": (
        lambda: _one("Split", [5], opset=18, outputs=4, num_outputs=4),
        ModelError,
        r"^Split node 'split0': an axis of size 5 cannot be split into 4 parts of 2 and fewer$",
        "split0",
        "Split",
    ),
    "axis-out-of-range": (
        lambda: _model([_node("Concat", ["x", "x"], ["y"], axis=2)], [("x", F32, [2, 3])], [("y", F32, None)]),
        ModelError,
        r"^Concat node 'concat0': axis = 2 is out of range for rank 2$",
        "concat0",
        "Concat",
    ),
    "concat-shapes": (
        lambda: _model(
            [_node("Concat", ["a", "b"], ["y"], axis=0)], [("a", F32, [2, 3]), ("b", F32, [2, 4])], [("y", F32, None)]
        ),
        ModelError,
        r"^Concat node 'concat0': input 1 has shape \(2, 4\), input 0 \(2, 3\): only axis 0 may differ$",
        "concat0",
        "Concat",
    ),
    "slice-step-0": (
        lambda: _one(
            "Slice", [4], ["s", "e", "a", "st"], [_ints("s", 0), _ints("e", 4), _ints("a", 0), _ints("st", 0)]
        ),
        ModelError,
        r"^Slice node 'slice0': steps\[0\] = 0 must be non-zero$",
        "slice0",
        "Slice",
    ),
    "slice-repeated-axis": (
        lambda: _one("Slice", [4, 4], ["s", "e", "a"], [_ints("s", 0, 1), _ints("e", 4, 3), _ints("a", 1, -1)]),
        ModelError,
        r"^Slice node 'slice0': axes\[1\] = -1 repeats axis 1$",
        "slice0",
        "Slice",
    ),
    "slice-lengths": (
        lambda: _one("Slice", [4, 4], ["s", "e"], [_ints("s", 0, 1), _ints("e", 4)]),
        ModelError,
        r"^Slice node 'slice0': starts, ends, axes and steps have 2, 1, 2 and 2 entries",
        "slice0",
        "Slice",
    ),
    "reshape-count": (
        lambda: _one("Reshape", [4, 6], ["r"], [_ints("r", 5, 5)]),
        ModelError,
        r"^Reshape node 'reshape0': shape \[5, 5\] holds 25 elements, the input 24$",
        "reshape0",
        "Reshape",
    ),
    "reshape-two-minus-ones": (
        lambda: _one("Reshape", [4, 6], ["r"], [_ints("r", -1, -1)]),
        ModelError,
        r"^Reshape node 'reshape0': shape \[-1, -1\] has more than one -1$",
        "reshape0",
        "Reshape",
    ),
    "flatten-negative-axis-before-opset-11": (
        lambda: _one("Flatten", [2, 3], opset=9, axis=-1),
        ModelError,
        r"^Flatten node 'flatten0': axis = -1 is out of range for rank 2 \(opset 9: 0 to 2\)$",
        "flatten0",
        "Flatten",
    ),
    "pad-crops-too-much": (
        lambda: _one("Pad", [3, 4], ["p"], [_ints("p", -2, 0, -2, 0)]),
        ModelError,
        r"^Pad node 'pad0': pads \[-2, 0, -2, 0\] crop more than the input's shape \(3, 4\) holds \(to \(-1, 4\)\)$",
        "pad0",
        "Pad",
    ),
    "unknown-input": (
        lambda: _model([_node("Identity", ["nowhere"], ["y"])], [("x", F32, [2])], [("y", F32, None)]),
        ModelError,
        r"^Identity node 'identity0': input 0 \('nowhere'\) is not a graph input, an initializer or an earlier",
        "identity0",
        "Identity",
    ),
    "declared-output-shape": (
        lambda: _model([_node("Identity", ["x"], ["y"])], [("x", F32, [2, 3])], [("y", F32, [3, 2])]),
        ModelError,
        r"^graph output 0 \('y'\) is declared of shape \(3, 2\) but its node gives \(2, 3\)$",
        None,
        None,
    ),
    "no-opset": (
        lambda: _without_opset(),
        ModelError,
        r"^the model imports no version of the ONNX operator set",
        None,
        None,
    ),
    # Invalid models that onnxruntime and onnx.checker refuse. A Pad naming an axis twice (the
    # first time with pads of 0): a repeat is a repeat whatever the pads.
    "pad-repeated-axis": (
        lambda: _one("Pad", [3, 4], ["p", "", "a"], [_ints("p", 0, 1, 0, 2), _ints("a", 0, 0)]),
        ModelError,
        r"^Pad node 'pad0': axes\[1\] = 0 repeats axis 0$",
        "pad0",
        "Pad",
    ),
    # A value named twice: by a node and a graph input, initializer or other node.
    "output-redefines-input": (
        lambda: _model(
            [_node("Identity", ["x"], ["y"]), _node("Identity", ["y"], ["x"], name="identity1")],
            [("x", F32, [2])],
            [("y", F32, None)],
        ),
        ModelError,
        r"^Identity node 'identity1': output 0 \('x'\) redefines graph input 'x'; ONNX names each value once$",
        "identity1",
        "Identity",
    ),
    "output-redefines-input-it-reads": (
        lambda: _model([_node("Identity", ["x"], ["x"])], [("x", F32, [2])], [("x", F32, [2])]),
        ModelError,
        r"^Identity node 'identity0': output 0 \('x'\) redefines graph input 'x'",
        "identity0",
        "Identity",
    ),
    "output-redefines-initializer": (
        lambda: _model(
            [_node("Identity", ["x"], ["s"], name="id"), _node("Slice", ["x", "s", "e"], ["y"])],
            [("x", F32, [4])],
            [("y", F32, None)],
            [_ints("s", 1), _ints("e", 3)],
        ),
        ModelError,
        r"^Identity node 'id': output 0 \('s'\) redefines initializer 's'; ONNX names each value once$",
        "id",
        "Identity",
    ),
    "output-redefines-output": (
        lambda: _model(
            [_node("Identity", ["x"], ["y"]), helper.make_node("Identity", ["x"], ["y"])],
            [("x", F32, [2])],
            [("y", F32, None)],
        ),
        ModelError,
        r"^Identity node #1 \(unnamed\): output 0 \('y'\) redefines output 0 of Identity node 'identity0'",
        "#1",
        "Identity",
    ),
    "initializer-twice": (
        lambda: _one("Slice", [4], ["s", "e"], [_ints("s", 1), _ints("e", 3), _ints("s", 0)]),
        ModelError,
        r"^initializer 's' is defined twice$",
        None,
        None,
    ),
    "input-listed-twice": (
        lambda: _model(
            [_node("Concat", ["x", "x"], ["y"], axis=0)], [("x", F32, [2]), ("x", F32, [2])], [("y", F32, [4])]
        ),
        ModelError,
        r"^graph input 'x' is listed twice$",
        None,
        None,
    ),
    # Inputs of a type the schema does not allow: float starts (not truncated), a Pad constant of
    # another type than the data (one whose cast to it would be 0), inputs joined of two types.
    "slice-float-starts": (
        lambda: _one("Slice", [4, 5], ["s", "e"], [_floats("s", 1.5), _ints("e", 3)]),
        ModelError,
        r"^Slice node 'slice0': input 1 \('s'\) is tensor\(float\); Slice in opset 18 takes tensor\(int32\) or "
        r"tensor\(int64\) there$",
        "slice0",
        "Slice",
    ),
    "pad-constant-of-another-type": (
        lambda: _one("Pad", [3, 4], ["p", "v"], [_ints("p", 1, 1, 1, 1), _floats("v", 0.5)], dtype=TensorProto.INT32),
        ModelError,
        r"^Pad node 'pad0': input 2 \('v'\) is tensor\(float\), input 0 tensor\(int32\); Pad in opset 18 takes "
        r"one data type for both \(its type T\)$",
        "pad0",
        "Pad",
    ),
    "concat-data-types": (
        lambda: _model(
            [_node("Concat", ["a", "b"], ["y"], axis=0)],
            [("a", F32, [2]), ("b", TensorProto.DOUBLE, [2])],
            [("y", F32, [4])],
        ),
        ModelError,
        r"^Concat node 'concat0': input 1 \('b'\) is tensor\(double\), input 0 tensor\(float\); Concat in opset 18 "
        r"takes one data type for both \(its type T\)$",
        "concat0",
        "Concat",
    ),
    # Attributes that the schema lacks, or of another type; inputs and outputs it lacks.
    "unknown-attribute": (
        lambda: _one("Identity", [2], foo=1),
        ModelError,
        r"^Identity node 'identity0': Identity in opset 18 has no attribute 'foo' \(it has none\)$",
        "identity0",
        "Identity",
    ),
    "attribute-of-an-older-opset": (
        lambda: _one("Split", [4], opset=18, outputs=2, num_outputs=2, split=[1, 3]),
        ModelError,
        r"^Split node 'split0': Split in opset 18 has no attribute 'split' \(its attributes: axis, num_outputs\)$",
        "split0",
        "Split",
    ),
    "attribute-type": (
        lambda: _model([_node("Concat", ["x", "x"], ["y"], axis=0.0)], [("x", F32, [2])], [("y", F32, [4])]),
        ModelError,
        r"^Concat node 'concat0': attribute 'axis' is FLOAT; Concat in opset 18 takes INT$",
        "concat0",
        "Concat",
    ),
    "input-count": (
        lambda: _one("Slice", [4], ["s", "e", "", "", "s"], [_ints("s", 1), _ints("e", 3)]),
        ModelError,
        r"^Slice node 'slice0': it has 6 inputs; Slice in opset 18 takes 3 to 5$",
        "slice0",
        "Slice",
    ),
    "output-count": (
        lambda: _one("Identity", [2], outputs=2),
        ModelError,
        r"^Identity node 'identity0': it has 2 outputs; Identity in opset 18 takes 1 to 1$",
        "identity0",
        "Identity",
    ),
    # Index inputs are 1-D (onnxruntime refuses others when it runs).
    "slice-starts-2-d": (
        lambda: _one(
            "Slice", [4], ["s", "e"], [numpy_helper.from_array(np.array([[1]], np.int64), "s"), _ints("e", 3)]
        ),
        ModelError,
        r"^Slice node 'slice0': starts \('s'\) has shape \(1, 1\); it must be 1-D$",
        "slice0",
        "Slice",
    ),
    # A graph output declares its type and shape.
    "output-without-shape": (
        lambda: _undeclared(_one("Identity", [2])),
        ModelError,
        r"^graph output 0 \('y0'\) declares no shape; ONNX requires a model's outputs to declare their data type "
        r"and shape$",
        None,
        None,
    ),
    # A node that reaches no graph output is read as any other (onnxruntime runs it, and refuses
    # a crop past the input's size when it runs).
    "node-left-out": (
        lambda: _model(
            [_node("Identity", ["x"], ["y"]), _node("Pad", ["x", "p"], ["unused"])],
            [("x", F32, [1])],
            [("y", F32, None)],
            [_ints("p", 0, -2)],
        ),
        ModelError,
        r"^Pad node 'pad0': pads \[0, -2\] crop more than the input's shape \(1,\) holds \(to \(-1,\)\)$",
        "pad0",
        "Pad",
    ),
    # What only onnx.checker refuses, after load has read the model.
    "checker": (
        lambda: _without_ir_version(),
        ModelError,
        r"^onnx\.checker refuses the model: The model does not have an ir_version set properly\.$",
        None,
        None,
    ),
}


def _floats(name, *values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


def _without_ir_version():
    model = _one("Identity", [2])
    model.ir_version = 0
    return model


def _undeclared(model):
    model.graph.output[0].type.tensor_type.ClearField("shape")
    return model


def _sparse_model():
    model = _one("Slice", [4], ["s", "e"], [_ints("e", 3)])
    values = numpy_helper.from_array(np.array([1], np.int64), "s")
    indices = numpy_helper.from_array(np.array([0], np.int64), "s_indices")
    model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [1]))
    return model


def _without_opset():
    model = _one("Identity", [2])
    del model.opset_import[:]
    return model


@pytest.mark.parametrize("name", list(REFUSALS))
def test_refusal(name):
    make, error, message, node, op_type = REFUSALS[name]
    with pytest.raises(error, match=message) as caught:
        cd.onnx.load(make())
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, NotImplementedError) == (error is UnsupportedModelError)
    assert (caught.value.node, caught.value.op_type) == (node, op_type)


def test_refuses_what_is_not_a_model():
    with pytest.raises(TypeError, match=r"load takes an onnx\.ModelProto or a path, not bytes"):
        cd.onnx.load(b"model")


def test_without_onnx_load_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(
        ImportError, match=re.escape('cudadml.onnx needs the onnx package: pip install "cudadml[onnx]"')
    ):
        cd.onnx.load("model.onnx")

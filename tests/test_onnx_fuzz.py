"""Random ONNX models, valid and invalid, against ``onnx.checker`` and onnxruntime (CPU).

Hypothesis draws small models of the nodes that ``cd.onnx.load`` reads (Slice, Split, Concat,
Pad, Reshape, Flatten, Identity; their constants as initializers or Constant nodes) at opsets 7
to 25, in each opset's form, on one or two graph inputs of ranks 1 to 3 and of every data type
DirectML has. Most draws are valid; the rest carry the faults that models carry: axes out of
range or named twice, starts, ends, splits, pads and shapes that do not add up, index inputs of
a floating type, of two types or not 1-D, a Pad constant of another type, an attribute the node
lacks (an older opset's form among them), missing inputs, a value named twice, nodes out of
order, graph outputs that declare no shape or another one, no opset imported. Some hold what
``load`` does not take although ONNX does: another op type or domain, a Pad mode or constant
other than 0, empty tensors, rank 0, STRING.

Each model goes to ``onnx.checker.check_model(full_check=True)``, to onnxruntime (a session,
then a run on random data with no zero), and to ``load``, and:

* where either refuses it, ``load`` refuses it with ``ModelError``;
* where both take it, ``load`` takes it and its graph's outputs are onnxruntime's byte for byte
  (each output poisoned, canaries around it), or refuses it as beyond the operators
  (``UnsupportedModelError``);
* ``load`` raises nothing else, and compiling and running what it takes raises nothing.

A kernel that onnxruntime lacks (NOT_IMPLEMENTED: Pad of INT16, ...) says nothing of the model:
its outputs are not compared. A failure shows the model in ONNX's text syntax, the verdicts and
hypothesis' blob to replay it. The default run gives each backend 40 models; ``pytest -m fuzz``
runs 5000 (``--hypothesis-show-statistics`` tells how many of each verdict).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.testing import TensorBuffer

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the skip)
from test_onnx import _bits, _random  # noqa: E402

from cudadml.onnx import ModelError, UnsupportedModelError  # noqa: E402

T = TensorProto
#: The data types of graph inputs: DirectML's (and at times STRING, which it lacks).
DATA_TYPES = [T.FLOAT, T.FLOAT16, T.DOUBLE, T.INT8, T.INT16, T.INT32, T.INT64, T.UINT8, T.UINT16, T.UINT32]
DATA_TYPES += [T.UINT64, T.BOOL]
#: Opsets where a node's form or rules change (Slice 10, 13; Split 11, 13, 18; Pad 11, 18, 19;
#: Reshape 14; Flatten 9, 11), and the newest.
OPSETS = [7, 9, 10, 11, 13, 14, 17, 18, 19, 21, 23, 25]
OPS = ["Slice", "Split", "Concat", "Pad", "Reshape", "Flatten", "Identity"]
#: Valid op types that load does not take, one that ONNX lacks, and one of another domain.
OTHER_OPS = ["Abs", "Transpose", "NoSuchOp", "com.example.Slice"]


class _Model:
    """A model being drawn: its nodes, constants, graph inputs and what shapes are known."""

    def __init__(self, draw):
        self.draw = draw
        self.opset = self.draw(st.sampled_from(OPSETS))
        self.opset_imports = [] if self.chance(1) else [helper.make_opsetid("", self.opset)]
        self.nodes, self.initializers, self.inputs = [], [], []
        self.known: dict[str, tuple] = {}  # value name: (its elem type, its shape or None where not known)
        self.names = 0
        elem_type = self.draw(st.sampled_from(DATA_TYPES))
        for k in range(2 if self.chance(25) else 1):
            if self.chance(3):
                elem_type = T.STRING
            rank = 0 if self.chance(3) else self.draw(st.integers(1, 3))
            shape = [0 if self.chance(2) else self.draw(st.integers(1, 4)) for _ in range(rank)]
            self.inputs.append(helper.make_tensor_value_info(f"x{k}", elem_type, shape))
            self.known[f"x{k}"] = (elem_type, tuple(shape))

    def chance(self, percent: int) -> bool:
        """True ``percent`` times in 100 (shrinking to False: to the model without the fault)."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def name(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"

    def constant(self, values, dtype=np.int64) -> str:
        """A constant holding ``values``: an initializer (at times listed among the graph inputs
        too), or a Constant node's output (its value as a tensor or, where it fits, a list)."""
        name = self.name("k")
        if np.issubdtype(dtype, np.integer):  # (the largest end, 2**63 - 1, as int32's largest)
            values = np.clip(values, np.iinfo(dtype).min, np.iinfo(dtype).max)
        values = np.asarray(values, dtype)
        if values.ndim == 1 and len(values) == 1 and self.chance(3):
            values = values.reshape(())  # a scalar where a list is wanted
        tensor = numpy_helper.from_array(values, name)
        if not self.chance(20):
            self.initializers.append(tensor)
            if self.chance(5):
                self.inputs.append(helper.make_tensor_value_info(name, tensor.data_type, values.shape))
            return name
        lists = {np.dtype(np.int64): "value_ints", np.dtype(np.float32): "value_floats"}
        if values.ndim == 1 and values.size and values.dtype in lists and self.chance(50):
            attrs = {lists[values.dtype]: values.tolist()}
        else:
            attrs = {"value": tensor}
        self.nodes.append(helper.make_node("Constant", [], [name], **attrs))
        return name

    def index_dtype(self):
        """The type of an index input: int64, at times int32 (which only some take) or float."""
        return self.draw(st.sampled_from([np.int64] * 8 + [np.int32, np.float32]))

    def axis(self, rank: int) -> int:
        if self.chance(5):
            return self.draw(st.sampled_from([rank, -rank - 1]))
        return self.draw(st.integers(-rank, rank - 1)) if rank else 0

    def axes(self, rank: int) -> list[int]:
        """Distinct axes, some counted from the end; at times one repeated or out of range."""
        axes = list(self.draw(st.permutations(range(rank))))[: self.draw(st.integers(1, max(rank, 1)))]
        axes = [a - rank if self.chance(30) else a for a in axes]
        if self.chance(5) and axes:
            axes.insert(self.draw(st.integers(0, len(axes))), self.draw(st.sampled_from(axes)))
        if self.chance(3):
            axes.append(self.axis(rank) if rank else 1)
        return axes

    # -- the nodes: each takes its data input, its type and shape, and gives
    # (op type, inputs, attributes, number of outputs)

    def node_slice(self, x, elem_type, shape):
        rank = len(shape)
        axes = self.axes(rank)
        dims = [shape[a] if -rank <= a < rank else 3 for a in axes]
        starts = [self.draw(st.integers(-d - 2, d + 2)) for d in dims]
        ends = [2**63 - 1 if self.chance(10) else self.draw(st.integers(-d - 2, d + 2)) for d in dims]
        steps = [0 if self.chance(3) else self.draw(st.sampled_from([1, 1, 2, 3, -1, -2])) for _ in axes]
        if self.chance(3):
            ends = ends[1:]
        attrs_form = self.opset < 10
        if self.chance(4):
            attrs_form = not attrs_form
        if attrs_form:
            attrs = {"starts": starts, "ends": ends}
            if self.chance(70):
                attrs["axes"] = axes
            return "Slice", [x], attrs, 1
        dtype = self.index_dtype()
        inputs = [x, self.constant(starts, dtype), self.constant(ends, dtype)]
        if self.chance(3):
            inputs[1] = self.constant([starts], dtype)  # 2-D
        if axes != list(range(len(starts))) or self.chance(50):
            inputs.append(self.constant(axes, dtype if self.chance(95) else np.int32))
        if steps != [1] * len(steps) or self.chance(30):
            inputs += [""] * (4 - len(inputs)) + [self.constant(steps, dtype)]
        return "Slice", inputs, {}, 1

    def node_split(self, x, elem_type, shape):
        rank = len(shape)
        axis = self.axis(rank)
        dim = shape[axis] if -rank <= axis < rank else 3
        parts = self.draw(st.integers(1, 4))
        attrs, inputs = {"axis": axis} if axis or self.chance(50) else {}, [x]
        if self.chance(50):
            cuts = sorted(self.draw(st.lists(st.integers(0, dim), min_size=parts - 1, max_size=parts - 1)))
            sizes = [b - a for a, b in zip([0, *cuts], [*cuts, dim])]
            if self.chance(5):
                sizes[0] += self.draw(st.sampled_from([-2, -1, 1]))
            if (self.opset < 13) != self.chance(4):
                attrs["split"] = sizes
            else:
                inputs.append(self.constant(sizes, self.index_dtype()))
        elif self.opset >= 18 and self.chance(90):
            attrs["num_outputs"] = parts if self.chance(95) else parts + 1
        return "Split", inputs, attrs, parts

    def node_concat(self, x, elem_type, shape):
        values = [name for name, (_, s) in self.known.items() if s is not None and len(s) == len(shape)]
        inputs = [x, *self.draw(st.lists(st.sampled_from(values), max_size=2))]
        attrs = {} if self.chance(3) else {"axis": self.axis(len(shape))}
        return "Concat", inputs, attrs, 1

    def node_pad(self, x, elem_type, shape):
        rank = len(shape)
        attrs, inputs = {}, [x]
        if self.chance(8):
            attrs["mode"] = self.draw(st.sampled_from(["edge", "reflect", "wrap"]))
        axes = self.axes(rank) if self.opset >= 18 and self.chance(40) else None
        pads = [self.draw(st.integers(-2, 3)) for _ in range(2 * (rank if axes is None else len(axes)))]
        if self.chance(3):
            pads = pads[1:]
        data_dtype = helper.tensor_dtype_to_np_dtype(elem_type)
        value = self.draw(st.sampled_from([None, None, 0, 0, 1])) if self.chance(60) else None
        if self.opset < 11:
            attrs["pads"] = pads
            if value is not None:
                attrs["value"] = float(value)
            return "Pad", inputs, attrs, 1
        inputs.append(self.constant(pads, np.int64 if self.chance(92) else self.index_dtype()))
        if value is not None:
            dtype = data_dtype if self.chance(85) else self.draw(st.sampled_from([np.float32, np.int64, np.float64]))
            inputs.append(self.constant(str(value) if np.dtype(dtype).kind == "O" else value, dtype))
        if axes is not None:
            inputs += [""] * (3 - len(inputs)) + [self.constant(axes, self.index_dtype())]
        return "Pad", inputs, attrs, 1

    def node_reshape(self, x, elem_type, shape):
        count = math.prod(shape)
        factors = [p for p in range(2, count + 1) for _ in range(_multiplicity(count, p))]
        target = [1] * self.draw(st.integers(1, 4))
        for p in factors:
            target[self.draw(st.integers(0, len(target) - 1))] *= p
        if self.chance(30):
            target[self.draw(st.integers(0, len(target) - 1))] = -1
        if self.chance(20):
            i = self.draw(st.integers(0, len(target) - 1))
            target[i] = 0  # copies the input's dimension i, or (allowzero) an empty one
        if self.chance(4):
            target[0] = target[0] * 2 + 1
        attrs = {"allowzero": 1} if self.opset >= 14 and self.chance(10) else {}
        return "Reshape", [x, self.constant(target, np.int64 if self.chance(95) else np.int32)], attrs, 1

    def node_flatten(self, x, elem_type, shape):
        rank = len(shape)
        axis = self.draw(st.integers(-rank, rank)) if self.chance(95) else rank + 1
        return "Flatten", [x], {"axis": axis} if self.chance(70) else {}, 1

    def node_identity(self, x, elem_type, shape):
        return "Identity", [x], {}, 1

    def node_other(self, x, elem_type, shape):
        return self.draw(st.sampled_from(OTHER_OPS)), [x], {}, 1

    # -- a node, and the graph's outputs

    def add_node(self):
        """A node on a value drawn from those known, with what may go wrong with it."""
        x = self.draw(st.sampled_from([name for name, (_, shape) in self.known.items() if shape is not None]))
        op = "other" if self.chance(2) else self.draw(st.sampled_from(OPS))
        elem_type, shape = self.known[x]
        op_type, inputs, attrs, count = getattr(self, f"node_{op.lower()}")(x, elem_type, shape)
        outputs = [self.name("v") for _ in range(count)]
        if self.chance(4):  # an attribute the node lacks
            attrs[self.draw(st.sampled_from(["foo", "axis", "mode", "starts", "split"]))] = 1
        if self.chance(3):  # a value named twice
            outputs[0] = self.draw(st.sampled_from([vi.name for vi in self.inputs] + list(self.known)))
        if self.chance(3):  # an input missing
            inputs[self.draw(st.integers(0, len(inputs) - 1))] = self.draw(st.sampled_from(["", "nowhere"]))
        # (No output is left out, as ONNX allows: onnxruntime 1.32 crashes running such a Split.)
        domain, _, op_type = op_type.rpartition(".")
        if domain and self.chance(50):
            self.opset_imports.append(helper.make_opsetid(domain, 1))
        name = "" if self.chance(30) else f"n{len(self.nodes)}"
        node = helper.make_node(op_type, inputs, outputs, name=name, domain=domain or None)
        for key, value in attrs.items():  # (an empty list as INTS: make_node cannot tell its type)
            kind = onnx.AttributeProto.INTS if value == [] else None
            node.attribute.append(helper.make_attribute(key, value, attr_type=kind))
        self.nodes.append(node)
        inferred = _inferred(self.model([]))
        for name in outputs:
            self.known.setdefault(name, inferred.get(name, (elem_type, None)))

    def model(self, outputs):
        graph = helper.make_graph(self.nodes, "fuzz", self.inputs, outputs, self.initializers)
        return helper.make_model(graph, opset_imports=self.opset_imports, ir_version=10)

    def outputs(self):
        """Graph outputs: node outputs (the last node's first), each declaring the type and shape
        that ONNX's shape inference gives it, or at times none or another."""
        produced = [name for node in self.nodes for name in node.output if name]
        names = [self.nodes[-1].output[0], *self.draw(st.lists(st.sampled_from(produced or ["x0"]), max_size=2))]
        if self.chance(2):
            names.append(self.draw(st.sampled_from([vi.name for vi in self.inputs])))
        inferred = _inferred(self.model([]))
        declared = {}
        for name in dict.fromkeys(names):
            elem_type, shape = inferred.get(name, self.known.get(name, (T.FLOAT, None)))
            if shape is not None and self.chance(3):
                shape = [*shape[:-1], shape[-1] + 1] if shape else [1]
            if shape is not None and self.chance(3):
                shape = ["N", *shape[1:]] if shape else shape
            if self.chance(3):
                shape = None
            if self.chance(2):
                elem_type = T.INT8 if elem_type != T.INT8 else T.UINT8
            declared[name] = helper.make_tensor_value_info(name, elem_type, shape)
        # At times one output listed twice (alike: onnx.checker and onnxruntime read only the
        # first of two declarations, where load refuses one that its value does not match).
        return [declared[name] for name in (names if self.chance(2) else declared)]


def _multiplicity(n: int, p: int) -> int:
    """How many times the prime ``p`` divides ``n`` (0 for a composite ``p``)."""
    if any(p % q == 0 for q in range(2, math.isqrt(p) + 1)):
        return 0
    k = 0
    while n and n % p == 0:
        n, k = n // p, k + 1
    return k


def _inferred(model) -> dict:
    """What ONNX's shape inference says of each value: ``(elem type, shape)``, the shape None
    where it knows none."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model).graph.value_info
    except Exception:  # (an invalid model: its shapes are not known)
        return {}
    found = {}
    for vi in inferred:
        t = vi.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        shape = dims if t.HasField("shape") and all(d is not None and d >= 0 for d in dims) else None
        found[vi.name] = (t.elem_type, shape)
    return found


@st.composite
def models(draw):
    m = _Model(draw)
    for _ in range(m.draw(st.integers(1, 3))):
        m.add_node()
    if len(m.nodes) > 1 and m.chance(3):  # out of order
        i = m.draw(st.integers(0, len(m.nodes) - 2))
        m.nodes[i], m.nodes[i + 1] = m.nodes[i + 1], m.nodes[i]
    model = m.model(m.outputs())
    return model, m.draw(st.integers(0, 2**32 - 1))


# -- the verdicts ------------------------------------------------------------------------------


def _text(model) -> str:
    try:
        return onnx.printer.to_text(model)
    except Exception:  # (a model the printer cannot write)
        return helper.printable_graph(model.graph)


def _checker(model):
    """None, or why ``onnx.checker`` refuses ``model``."""
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        return f"{type(e).__name__}: {e}"
    return None


def _onnxruntime(model, inputs):
    """``(outputs, None)``, or ``(None, why)`` where onnxruntime refuses ``model`` or lacks a
    kernel for it (``why`` starting with NOT_IMPLEMENTED)."""
    options = ort.SessionOptions()
    options.log_severity_level = 4  # (its refusals come back as exceptions)
    # Without its graph optimizations, which may drop a node that reaches no output before it
    # refuses it, as it refuses the same node where it reaches one.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return session.run(None, {i.name: x for i, x in zip(session.get_inputs(), inputs)}), None
    except Exception as e:  # onnxruntime's own exception types
        kind = "NOT_IMPLEMENTED" if type(e).__name__ == "NotImplemented" else "refuses"
        return None, f"{kind}: {type(e).__name__}: {e}"


def _ours(xp, model, inputs):
    """``(outputs, None)`` of ``model`` loaded and run on ``xp``'s arrays, or ``(None, the
    ModelError)`` where load refuses it."""
    try:
        graph = cd.onnx.load(model)
    except ModelError as e:
        return None, e
    ins = [TensorBuffer(t, xp).fill(_bits(x)) for t, x in zip(graph.input_tensors, inputs)]
    outs = [TensorBuffer(t, xp) for t in graph.output_tensors]
    graph.compile().execute([b.binding for b in ins], [b.binding for b in outs])
    for k, b in enumerate(outs):
        assert b.untouched_outside(), f"output {k}: a byte outside its elements was written"
    return [b.host_elements() for b in outs], None


def _check_model(xp, model, seed):
    note(_text(model))
    rng = np.random.default_rng(seed)
    graph_inputs = [vi for vi in model.graph.input if vi.name not in {i.name for i in model.graph.initializer}]
    inputs = [_input(vi, rng) for vi in graph_inputs]
    checker = _checker(model)
    theirs, ort_error = _onnxruntime(model, inputs)
    ours, refusal = _ours(xp, model, inputs)
    note(f"onnx.checker: {checker or 'takes it'}\nonnxruntime: {ort_error or 'takes it'}\nload: {refusal!r}")
    lacks_kernel = ort_error is not None and ort_error.startswith("NOT_IMPLEMENTED")
    refused_by = [who for who, why in (("onnx.checker", checker), ("onnxruntime", ort_error)) if why]
    if lacks_kernel:
        refused_by.remove("onnxruntime")
        if not checker:
            event("onnxruntime lacks a kernel")  # (whether the model is valid is not known)
            return
    if refused_by:
        event(f"refused by {' and '.join(refused_by)}")
        assert refusal is not None, f"load takes a model that {' and '.join(refused_by)} refuses"
        event("load refuses it through onnx.checker" if str(refusal).startswith("onnx.checker") else "load refuses it")
        return
    if refusal is not None:
        event("valid, load refuses it as unsupported")
        assert isinstance(refusal, UnsupportedModelError), f"load calls a valid model invalid: {refusal}"
        return
    if theirs is None:
        return
    event("valid, outputs compared")
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours, theirs)):
        b = _bits(b)
        assert (a.shape, a.dtype) == (b.shape, b.dtype), (
            f"output {k}: {a.shape} {a.dtype}, onnxruntime's {b.shape} {b.dtype}"
        )
        assert a.tobytes() == b.tobytes(), f"output {k} differs from onnxruntime's"


def _input(vi, rng):
    t = vi.type.tensor_type
    shape = tuple(d.dim_value for d in t.shape.dim)
    if t.elem_type == T.STRING:
        return rng.integers(1, 100, shape).astype(str).astype(object)
    return _random(shape, helper.tensor_dtype_to_np_dtype(t.elem_type), rng)


# (Drawing a model runs ONNX's shape inference after each node: slow for hypothesis' taste.)
CHECKS = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
SHORT = settings(max_examples=40, deadline=None, print_blob=True, suppress_health_check=CHECKS)
LONG = settings(max_examples=5000, deadline=None, print_blob=True, suppress_health_check=CHECKS)


@SHORT
@given(drawn=models())
def test_random_models_match_onnxruntime_or_are_refused(xp, drawn):
    _check_model(xp, *drawn)


@pytest.mark.fuzz
@LONG
@given(drawn=models())
def test_many_random_models_match_onnxruntime_or_are_refused(xp, drawn):
    _check_model(xp, *drawn)

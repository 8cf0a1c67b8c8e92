"""ONNX import: a model whose nodes only move data, as a ``GraphDesc``.

``load`` reads an ONNX model (a ``onnx.ModelProto`` or a file) and builds the ``GraphDesc``
that does what it does. The nodes it takes, and what each becomes:

=================  ===============================================================================
``Slice``          SLICE of the window (opset 1's attributes or opset 10's inputs; negative and
                   out-of-range starts and ends clamped as ONNX defines them); SLICE1 where a step
                   is negative (a window read backwards)
``Split``          SPLIT (sizes from the attribute or the input, equal parts, or opset 18's
                   ``num_outputs`` with a smaller last part)
``Concat``         JOIN
``Pad``            SLICE_GRAD (mode ``constant`` with the constant 0 or absent); negative pads crop
                   first, through a SLICE; opset 18's ``axes``
``Identity``       SLICE of the whole tensor
``Flatten``,       nothing: the packed buffer is re-described on the edges that carry it (a
``Reshape``        reshape edge); ``0`` and ``-1`` in the shape and ``allowzero`` as ONNX defines
``Constant``       a constant, as initializers are
=================  ===============================================================================

A graph holds no constant tensors: the starts, ends, axes, steps, splits, pads and shapes come
from initializers and ``Constant`` nodes, and a node whose data inputs are all constants is
evaluated while loading (the exporters build shapes that way). Shapes must be static: the graph
inputs' types give them, and every other shape follows from the nodes.

``InferenceSession`` runs such a model as onnxruntime's session of that name does (the same
``get_inputs``, ``get_outputs`` and ``run``), on the graph ``load`` builds; symbolic dimensions
are made concrete by the feeds, one compiled graph per shape.

ONNX data types map to DirectML's: FLOAT, FLOAT16, DOUBLE, INT8 to INT64 and UINT8 to UINT64 to
their namesakes, and BOOL (one byte) to UINT8, since the operators move bits: bind a boolean
array as ``a.view(numpy.uint8)``.

Graph inputs and outputs keep the model's order (initializers listed among the inputs are
constants). A graph input's tensor is the shape the model declares; where a reshape meets a
graph input or a graph output, an Identity SLICE keeps that so, and compiling composes it away.
Nodes that reach no graph output are read as the others are (onnxruntime runs them), then left
out.

What ``load`` refuses, it refuses with ``ModelError`` (a ``ValueError``) naming the node (its name,
or its place when it has none) and its op type: an invalid model (sizes that do not add up, an
axis out of range or named twice, a value named twice, an attribute or an input data type that
the node's ONNX schema lacks, an index input that is not 1-D, a graph output that declares no
type and shape) and, once the nodes are read, whatever ``onnx.checker`` (with ``full_check``)
refuses; or, as ``UnsupportedModelError`` (also a ``NotImplementedError``), a valid one beyond
what the operators express: another op type or domain, a Pad of another mode or constant or one
that crops all of its input along an axis, starts or pads that are not constants, a tensor of
rank 0 or above 8 or with an empty dimension, a data type DirectML lacks, a constant joined with
data, a graph output that is a graph input or a constant.
"""

from __future__ import annotations

import math
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .core.enums import TensorDataType
from .core.errors import DescriptorError
from .core.memory import PerInstance
from .core.tensor import MAX_DIMENSIONS, BufferTensorDesc
from .graphs.graph import GraphDesc, GraphInputEdge, GraphIntermediateEdge, GraphNode, GraphOutputEdge
from .ops import JoinOperatorDesc, Slice1OperatorDesc, SliceGradOperatorDesc, SliceOperatorDesc, SplitOperatorDesc

__all__ = ["SUPPORTED_OPS", "InferenceSession", "ModelError", "NodeArg", "UnsupportedModelError", "load"]

#: The op types of the default domain that ``load`` takes.
SUPPORTED_OPS = ("Concat", "Constant", "Flatten", "Identity", "Pad", "Reshape", "Slice", "Split")

_T = TensorDataType
#: ONNX's ``TensorProto.DataType`` values and the DirectML types that hold them; BOOL is a byte.
_DATA_TYPES = {
    1: _T.FLOAT32,
    2: _T.UINT8,
    3: _T.INT8,
    4: _T.UINT16,
    5: _T.INT16,
    6: _T.INT32,
    7: _T.INT64,
    9: _T.UINT8,
    10: _T.FLOAT16,
    11: _T.FLOAT64,
    12: _T.UINT32,
    13: _T.UINT64,
}


#: What a value info's type is, other than a tensor, in messages.
_KINDS = {
    "sequence_type": "a sequence",
    "optional_type": "an optional",
    "map_type": "a map",
    "sparse_tensor_type": "a sparse tensor",
}


class ModelError(ValueError):
    """An ONNX model that ``load`` cannot turn into a graph.

    Parameters
    ----------
    message : str
        What is wrong, beginning with the node (``Pad node 'pad0': ...``) where one is at fault.
    node : str, optional
        The node's name (or ``#index`` for a node without one).
    op_type : str, optional
        The node's op type.

    Examples
    --------
    >>> from cudadml.onnx import ModelError
    >>> e = ModelError("Pad node 'p': mode 'edge' is not supported", node="p", op_type="Pad")
    >>> isinstance(e, ValueError), e.op_type
    (True, 'Pad')
    """

    def __init__(self, message: str, node: str | None = None, op_type: str | None = None):
        super().__init__(message)
        self.node = node
        self.op_type = op_type


class UnsupportedModelError(ModelError, NotImplementedError):
    """A valid ONNX model beyond what DirectML's data-movement operators express; its
    parameters and attributes are ``ModelError``'s (the message says what is beyond them).

    Examples
    --------
    >>> from cudadml.onnx import ModelError, UnsupportedModelError
    >>> issubclass(UnsupportedModelError, ModelError), issubclass(UnsupportedModelError, NotImplementedError)
    (True, True)
    """


def load(model) -> GraphDesc:
    """The ``GraphDesc`` of an ONNX model whose nodes only move data.

    Parameters
    ----------
    model : onnx.ModelProto, str or os.PathLike
        The model, or the path of a ``.onnx`` file.

    Returns
    -------
    GraphDesc
        One graph input per model input that is not an initializer and one graph output per
        model output, in the model's order; ``compile().execute(inputs, outputs)`` runs it.

    Raises
    ------
    ModelError
        For a model that is not valid ONNX, naming the node where one is at fault.
    UnsupportedModelError
        For a valid model beyond what the operators express (see the module's text), naming
        the node. Both are ``ValueError``.
    ImportError
        Where the ``onnx`` package is not installed.
    TypeError
        For a ``model`` that is neither a ``ModelProto`` nor a path.

    Examples
    --------
    Space-to-depth (YOLOv5's Focus): four strided crops joined along the channels. The
    examples need the ``onnx`` package (``tests/test_onnx.py`` runs them).

    >>> import numpy as np, onnx, cudadml as cd  # doctest: +SKIP
    >>> from onnx import TensorProto, helper, numpy_helper  # doctest: +SKIP
    >>> ints = lambda name, *values: numpy_helper.from_array(np.array(values, np.int64), name)  # doctest: +SKIP
    >>> constants = [ints("s0", 0, 0), ints("s1", 1, 0), ints("s2", 0, 1), ints("s3", 1, 1),
    ...              ints("end", 8, 8), ints("axes", 2, 3), ints("steps", 2, 2)]  # doctest: +SKIP
    >>> crop = lambda k: helper.make_node("Slice", ["x", f"s{k}", "end", "axes", "steps"], [f"c{k}"])  # doctest: +SKIP
    >>> nodes = [crop(k) for k in range(4)]  # doctest: +SKIP
    >>> nodes.append(helper.make_node("Concat", ["c0", "c1", "c2", "c3"], ["y"], axis=1))  # doctest: +SKIP
    >>> model = helper.make_model(helper.make_graph(
    ...     nodes, "focus", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12, 4, 4])], constants))  # doctest: +SKIP
    >>> graph = cd.onnx.load(model)  # doctest: +SKIP
    >>> graph.input_tensors, graph.output_tensors  # doctest: +SKIP
    ((BufferTensorDesc(FLOAT32, (1, 3, 8, 8)),), (BufferTensorDesc(FLOAT32, (1, 12, 4, 4)),))
    >>> x = np.arange(192, dtype=np.float32).reshape(1, 3, 8, 8)  # doctest: +SKIP
    >>> y = np.empty((1, 12, 4, 4), np.float32)  # doctest: +SKIP
    >>> graph.compile().execute([x], [y])  # doctest: +SKIP
    >>> bool((y[:, 3:6] == x[..., 1::2, ::2]).all())  # doctest: +SKIP
    True
    """
    onnx = _onnx()
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(os.fspath(model))
    elif not isinstance(model, onnx.ModelProto):
        raise TypeError(f"load takes an onnx.ModelProto or a path, not {type(model).__name__}")
    graph = _Importer(onnx, model).graph()
    # The importer's rules name the node at fault; ONNX's own checker then refuses the rest of
    # what is invalid (in nodes that reach no output too), as onnxruntime would.
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as e:
        raise ModelError(f"onnx.checker refuses the model: {str(e).strip()}") from e
    return graph


@dataclass(frozen=True)
class NodeArg:
    """A model input or output as ``InferenceSession`` describes it (onnxruntime's ``NodeArg``).

    Parameters
    ----------
    name : str
        The value's name in the model.
    shape : list of int, str or None
        Per dimension its size, or a symbolic dimension's name (``"N"``), or None where the
        model names neither.
    type : str
        As ONNX's schemas write it: ``"tensor(float)"``, ``"tensor(int64)"``, ...

    Examples
    --------
    >>> from cudadml.onnx import NodeArg
    >>> NodeArg("x", ["N", 3, 8, 8], "tensor(float)").shape
    ['N', 3, 8, 8]
    """

    name: str
    shape: list
    type: str


#: Concrete shapes of a model with symbolic dimensions that a session keeps compiled.
SESSION_SHAPES = 16


class InferenceSession:
    """An onnxruntime ``InferenceSession`` for the models ``load`` takes, run on cudadml's graphs.

    The model becomes a ``GraphDesc`` (``load``) compiled once; a model whose inputs have
    symbolic dimensions (a batch ``N``) is loaded and compiled once per concrete shape the
    feeds give, the last ``SESSION_SHAPES`` (16) kept. ``run`` calls the compiled graph with
    the feeds (``CompiledGraph.__call__``), so they may be NumPy or CuPy arrays or torch tensors,
    at any address and of any strides, and the results are of the feeds' kind.

    Parameters
    ----------
    path_or_bytes : str, os.PathLike, bytes or onnx.ModelProto
        The model: a ``.onnx`` file, its serialized bytes, or the model itself.
    sess_options : onnxruntime.SessionOptions, optional
        Taken and ignored.
    providers : list, optional
        Taken and ignored: cudadml runs NumPy feeds (and CPU tensors) on the host backend and
        device feeds on the GPU, whatever providers are named.
    provider_options : list, optional
        Taken and ignored.
    **kwargs
        The other arguments onnxruntime takes, taken and ignored.

    Raises
    ------
    ModelError, UnsupportedModelError
        As ``load`` raises them, for a model it cannot run (with symbolic dimensions: at the
        first ``run`` of each shape, for what depends on it).
    TypeError
        For a model that is none of the above.
    ImportError
        Where the ``onnx`` package is not installed.

    Examples
    --------
    The guide's ONNX section runs a model under onnxruntime and here side by side. These
    examples need the ``onnx`` package (``tests/test_onnx_session.py`` runs such sessions).

    >>> import numpy as np, cudadml as cd  # doctest: +SKIP
    >>> from onnx import TensorProto, helper  # doctest: +SKIP
    >>> value = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, ["N", 2])  # doctest: +SKIP
    >>> model = helper.make_model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "copy",
    ...                                             [value("x")], [value("y")]))  # doctest: +SKIP
    >>> session = cd.onnx.InferenceSession(model.SerializeToString(),
    ...                                    providers=["CUDAExecutionProvider"])  # doctest: +SKIP
    >>> session.run(None, {"x": np.ones((3, 2), np.float32)})[0].shape  # doctest: +SKIP
    (3, 2)
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        onnx = self._onnx = _onnx()
        model = path_or_bytes
        if isinstance(model, (bytes, bytearray, memoryview)):
            try:
                model = onnx.load_model_from_string(bytes(model))
            except Exception as e:  # protobuf's DecodeError, whose class varies by version
                raise ModelError(f"the bytes are not an ONNX model: {e}") from e
        elif isinstance(model, (str, os.PathLike)):
            model = onnx.load(os.fspath(model))
        elif not isinstance(model, onnx.ModelProto):
            raise TypeError(
                f"InferenceSession takes an onnx.ModelProto, its bytes or a path, not {type(model).__name__}"
            )
        self._model = model
        constants = {i.name for i in model.graph.initializer}
        self._inputs = [vi for vi in model.graph.input if vi.name not in constants]
        self._outputs = list(model.graph.output)
        # (An input that declares no shape is left to ``load``, which refuses it now.)
        self._symbolic = any(
            shape is not None and not all(isinstance(d, int) for d in shape) for shape in map(_shape, self._inputs)
        )
        self._compiled = OrderedDict()  # concrete input shapes -> compiled graph, least recent first
        if not self._symbolic:  # refused now, as onnxruntime refuses at construction
            self._compiled[None] = load(model).compile()
        else:  # a cache of graphs per shape, in ``cudadml.cache_info``
            _SESSIONS.add(self)

    def get_inputs(self) -> list[NodeArg]:
        """The model's inputs (initializers left out), in its order.

        Returns
        -------
        list of NodeArg
            Each input's name, shape (symbolic dimensions by name) and type.

        Raises
        ------
        ModelError
            Never for a session made: its model was read when the session was.

        Examples
        --------
        A model that copies its input (it needs the ``onnx`` package):

        >>> import numpy as np, cudadml as cd  # doctest: +SKIP
        >>> from onnx import TensorProto, helper  # doctest: +SKIP
        >>> x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 2]) for n in "xy")  # doctest: +SKIP
        >>> session = cd.onnx.InferenceSession(helper.make_model(helper.make_graph(
        ...     [helper.make_node("Identity", ["x"], ["y"])], "copy", [x], [y])))  # doctest: +SKIP
        >>> session.get_inputs()  # doctest: +SKIP
        [NodeArg(name='x', shape=['N', 2], type='tensor(float)')]
        """
        return [self._node_arg(vi) for vi in self._inputs]

    def get_outputs(self) -> list[NodeArg]:
        """The model's outputs, in its order.

        Returns
        -------
        list of NodeArg
            Each output's name, shape (symbolic dimensions by name) and type.

        Raises
        ------
        ModelError
            Never for a session made: its model was read when the session was.

        Examples
        --------
        A model that copies its input (it needs the ``onnx`` package):

        >>> import numpy as np, cudadml as cd  # doctest: +SKIP
        >>> from onnx import TensorProto, helper  # doctest: +SKIP
        >>> x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 2]) for n in "xy")  # doctest: +SKIP
        >>> session = cd.onnx.InferenceSession(helper.make_model(helper.make_graph(
        ...     [helper.make_node("Identity", ["x"], ["y"])], "copy", [x], [y])))  # doctest: +SKIP
        >>> [o.name for o in session.get_outputs()]  # doctest: +SKIP
        ['y']
        """
        return [self._node_arg(vi) for vi in self._outputs]

    def run(self, output_names, input_feed, run_options=None):
        """Run the model on ``input_feed`` and return the outputs named.

        Parameters
        ----------
        output_names : list of str or None
            The outputs wanted, in the order wanted; None for every output, in the model's order.
        input_feed : dict of str to array
            One array per model input (NumPy, CuPy or torch tensor), by name. A BOOL input
            takes a boolean array.
        run_options : optional
            Taken, as onnxruntime takes it, and ignored.

        Returns
        -------
        list of arrays
            In ``output_names`` order, of the feeds' kind.

        Raises
        ------
        ValueError
            For a missing or extra feed, or a feed of the wrong rank or of a size that differs
            from a fixed dimension, naming it.
        KeyError
            For an output name the model does not have, naming it.
        TypeError
            For a feed of the wrong dtype, naming it, the dtype given and the type the input takes.

        Examples
        --------
        A model that copies its input (it needs the ``onnx`` package):

        >>> import numpy as np, cudadml as cd  # doctest: +SKIP
        >>> from onnx import TensorProto, helper  # doctest: +SKIP
        >>> x, y = (helper.make_tensor_value_info(n, TensorProto.FLOAT, ["N", 2]) for n in "xy")  # doctest: +SKIP
        >>> session = cd.onnx.InferenceSession(helper.make_model(helper.make_graph(
        ...     [helper.make_node("Identity", ["x"], ["y"])], "copy", [x], [y])))  # doctest: +SKIP
        >>> (y,) = session.run(["y"], {"x": np.arange(8, dtype=np.float32).reshape(4, 2)})  # doctest: +SKIP
        >>> y[-1]  # doctest: +SKIP
        array([6., 7.], dtype=float32)
        >>> session.run(None, {"x": np.zeros((4, 2))})  # doctest: +SKIP
        Traceback (most recent call last):
            ...
        TypeError: InferenceSession.run: input 'x' is fed float64; it takes tensor(float) (float32)
        """
        names = [vi.name for vi in self._inputs]
        if not isinstance(input_feed, dict):
            raise TypeError(f"InferenceSession.run: input_feed must be a dict of name to array, not "
                            f"{type(input_feed).__name__}")  # fmt: skip
        missing = [n for n in names if n not in input_feed]
        extra = [n for n in input_feed if n not in names]
        if missing or extra:
            raise ValueError(
                "InferenceSession.run: "
                + "; ".join(
                    [f"no feed for input {n!r}" for n in missing]
                    + [f"{n!r} is not an input of the model (inputs: {', '.join(map(repr, names))})" for n in extra]
                )
            )
        outputs = [vi.name for vi in self._outputs]
        wanted = outputs if output_names is None else list(output_names)
        for n in wanted:
            if n not in outputs:
                raise KeyError(f"InferenceSession.run: {n!r} is not an output of the model (outputs: "
                               f"{', '.join(map(repr, outputs))})")  # fmt: skip
        feeds = [self._feed(vi, input_feed[vi.name]) for vi in self._inputs]
        results = self._graph(feeds)(*feeds)
        results = results if isinstance(results, tuple) else (results,)
        results = [
            _as_bool(r) if vi.type.tensor_type.elem_type == _BOOL else r for r, vi in zip(results, self._outputs)
        ]
        return [results[outputs.index(n)] for n in wanted]

    def _node_arg(self, vi) -> NodeArg:
        elem_type = vi.type.tensor_type.elem_type
        type_name = self._onnx.TensorProto.DataType.Name(elem_type).lower()
        return NodeArg(vi.name, _shape(vi), f"tensor({type_name})")

    def _feed(self, vi, a):
        """A feed checked against its input's type and rank, BOOL as the bytes DirectML moves."""
        elem_type = vi.type.tensor_type.elem_type
        expected = np.dtype(self._onnx.helper.tensor_dtype_to_np_dtype(elem_type))
        given = _numpy_dtype(a)
        if given != expected:
            raise TypeError(f"InferenceSession.run: input {vi.name!r} is fed {given}; it takes "
                            f"{self._node_arg(vi).type} ({expected})")  # fmt: skip
        shape = _shape(vi)
        fixed = [(k, d) for k, d in enumerate(shape) if isinstance(d, int)]
        if len(a.shape) != len(shape) or any(a.shape[k] != d for k, d in fixed):
            raise ValueError(f"InferenceSession.run: input {vi.name!r} is fed shape {tuple(a.shape)}; it takes "
                             f"{_shape_text(shape)}")  # fmt: skip
        return _as_bytes(a) if elem_type == _BOOL else a

    def _graph(self, feeds):
        """The compiled graph for the feeds' shapes: compiled once per shape, the last few kept."""
        if not self._symbolic:
            return self._compiled[None]
        key = tuple(tuple(a.shape) for a in feeds)
        compiled = self._compiled.get(key)
        if compiled is None:
            model = self._onnx.ModelProto()
            model.CopyFrom(self._model)
            by_name = {vi.name: vi for vi in model.graph.input}
            for vi, shape in zip(self._inputs, key):
                for dim, n in zip(by_name[vi.name].type.tensor_type.shape.dim, shape):
                    dim.dim_value = n  # (clears dim_param: the two are one field's choices)
            compiled = load(model).compile()
            if len(self._compiled) >= SESSION_SHAPES:
                self._compiled.popitem(last=False)
            self._compiled[key] = compiled
        self._compiled.move_to_end(key)
        return compiled


#: ONNX's BOOL, which DirectML moves as UINT8.
_BOOL = 9


#: The graphs per shape of every session of a model with symbolic shapes.
_SESSIONS = PerInstance(
    f"{__name__}.InferenceSession", SESSION_SHAPES, lambda s: len(s._compiled), lambda s: s._compiled.clear()
)


def _shape(vi):
    """A value info's shape as onnxruntime gives it: sizes, symbolic names, None for neither."""
    tensor_type = vi.type.tensor_type
    if not tensor_type.HasField("shape"):
        return None
    return [
        d.dim_value if d.HasField("dim_value") else (d.dim_param if d.dim_param else None)
        for d in tensor_type.shape.dim
    ]


def _shape_text(shape):
    return "a shape of no declared rank" if shape is None else f"rank {len(shape)}, shape {shape}"


def _numpy_dtype(a):
    """The NumPy dtype of an array's elements (torch tensors' too)."""
    try:
        return np.dtype(a.dtype)
    except TypeError:  # a torch dtype: NumPy's where torch has one (bfloat16 has none)
        try:
            return sys.modules["torch"].empty(0, dtype=a.dtype).numpy().dtype
        except (TypeError, RuntimeError):
            return np.dtype(np.void)


def _as_bytes(a):
    """A boolean array as the bytes it is."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return a.view(torch.uint8)
    return a.view(np.uint8)


def _as_bool(a):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        return a.view(torch.bool)
    return a.view(bool)


def _onnx():
    try:
        import onnx
    except ImportError as e:
        raise ImportError('cudadml.onnx needs the onnx package: pip install "cudadml[onnx]"') from e
    return onnx


@dataclass(frozen=True)
class _Tensor:
    """A value the graph moves (not a constant): its ONNX element type and shape, and where its
    buffer comes from: ``("input", k)`` or ``("node", node index, output index)``. A reshape
    keeps the source and changes the shape."""

    elem_type: int
    shape: tuple[int, ...]
    source: tuple
    name: str


def _label(proto, index: int) -> str:
    """A node as messages name it."""
    return f"{proto.op_type} node {proto.name!r}" if proto.name else f"{proto.op_type} node #{index} (unnamed)"


class _Builder:
    """The graph's nodes and edges, as the nodes are added."""

    def __init__(self, inputs: list[_Tensor]):
        self.inputs = inputs
        self.nodes: list[GraphNode] = []
        self.input_edges: list[GraphInputEdge] = []
        self.output_edges: list[GraphOutputEdge] = []
        self.intermediate_edges: list[GraphIntermediateEdge] = []
        self._input_copies: dict[int, _Tensor] = {}

    def add(self, desc, name: str, inputs: list[_Tensor]) -> int:
        """Add node ``desc`` fed by ``inputs`` (its ``input_tensors`` in order); its index."""
        # Resolve the feeds first: an Identity a feed needs comes before the node it feeds.
        feeds = [self._feed(t) for t in inputs]
        index = len(self.nodes)
        self.nodes.append(GraphNode(desc, name=name))
        for port, (t, feed) in enumerate(zip(inputs, feeds)):
            if feed[0] == "input":
                self.input_edges.append(GraphInputEdge(feed[1], index, port, name=t.name))
            else:
                self.intermediate_edges.append(GraphIntermediateEdge(feed[1], feed[2], index, port, name=t.name))
        return index

    def _feed(self, t: _Tensor) -> tuple:
        """Where ``t`` comes from as an edge sees it. A graph input carries the shape the model
        declares on every edge, so a reshape of one reads the Identity copy of it instead."""
        if t.source[0] == "input":
            k = t.source[1]
            if t.shape == self.inputs[k].shape:
                return t.source
            return self.input_copy(k).source
        return t.source

    def input_copy(self, k: int) -> _Tensor:
        """Graph input ``k`` through one Identity SLICE (made once)."""
        if k not in self._input_copies:
            t = self.inputs[k]
            index = self.add(_identity(t), f"{t.name} (Identity)", [t])
            self._input_copies[k] = replace(t, source=("node", index, 0))
        return self._input_copies[k]

    def output(self, t: _Tensor, k: int) -> None:
        """Make ``t`` graph output ``k``: a graph output's tensor is its producer's output, so a
        reshaped one (or one read straight from a graph input) goes through an Identity SLICE."""
        source = t.source
        if source[0] == "input" or t.shape != self.nodes[source[1]].operator.output_tensors[source[2]].sizes:
            source = ("node", self.add(_identity(t), f"{t.name} (Identity)", [t]), 0)
        self.output_edges.append(GraphOutputEdge(source[1], source[2], k, name=t.name))


def _desc(t: _Tensor, shape=None) -> BufferTensorDesc:
    return BufferTensorDesc(_DATA_TYPES[t.elem_type], t.shape if shape is None else shape)


def _identity(t: _Tensor) -> SliceOperatorDesc:
    n = len(t.shape)
    return SliceOperatorDesc(_desc(t), _desc(t), [0] * n, t.shape, [1] * n)


class _Node:
    """One ONNX node as the importer reads it: its label for messages, attributes and inputs."""

    def __init__(self, importer: _Importer, proto, index: int, builder: _Builder | None = None):
        self.importer = importer
        self.builder = builder  # where its DirectML nodes go
        self.proto = proto
        self.op = proto.op_type
        self.name = proto.name or f"#{index}"
        self.label = _label(proto, index)

    @cached_property
    def attrs(self) -> dict:  # (read once check_schema has checked their types)
        get = self.importer.onnx.helper.get_attribute_value
        return {a.name: get(a) for a in self.proto.attribute}

    def error(self, message: str, unsupported: bool = False) -> ModelError:
        kind = UnsupportedModelError if unsupported else ModelError
        return kind(f"{self.label}: {message}", node=self.name, op_type=self.op)

    def attr(self, name: str, default=None):
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def has_input(self, k: int) -> bool:
        return k < len(self.proto.input) and self.proto.input[k] != ""

    def value(self, k: int):
        """Input ``k``: a NumPy array (a constant) or a ``_Tensor``."""
        if not self.has_input(k):
            raise self.error(f"input {k} is missing")
        name = self.proto.input[k]
        if name not in self.importer.values:
            raise self.error(f"input {k} ({name!r}) is not a graph input, an initializer or an earlier node's output")
        return self.importer.values[name]

    def constant(self, k: int, what: str):
        """Input ``k``, which must be a constant (None where it is absent)."""
        if not self.has_input(k):
            return None
        value = self.value(k)
        if not isinstance(value, np.ndarray):
            raise self.error(
                f"{what} ({self.proto.input[k]!r}) is not a constant (an initializer or a Constant node's "
                "output); the graph's shapes must be known when it is built",
                unsupported=True,
            )
        return value

    def ints(self, k: int, what: str) -> list[int] | None:
        """Input ``k``, a constant list of integers (None where it is absent). ONNX's index inputs
        are 1-D (onnxruntime refuses others when it runs); their data types are the schema's."""
        value = self.constant(k, what)
        if value is None:
            return None
        if value.ndim != 1:
            raise self.error(f"{what} ({self.proto.input[k]!r}) has shape {value.shape}; it must be 1-D")
        return [int(v) for v in value]

    def axis(self, value: int, rank: int, what: str = "axis") -> int:
        """``value`` in ``[0, rank)``, a negative one counting from the end."""
        axis = value + rank if value < 0 else value
        if not 0 <= axis < rank:
            raise self.error(f"{what} = {value} is out of range for rank {rank}")
        return axis

    def axes(self, values, rank: int) -> list[int]:
        """``values`` as axes in ``[0, rank)``, each named once."""
        axes = []
        for i, value in enumerate(values):
            axis = self.axis(value, rank, f"axes[{i}]")
            if axis in axes:
                raise self.error(f"axes[{i}] = {value} repeats axis {axis}")
            axes.append(axis)
        return axes

    def check_schema(self, schema) -> None:
        """The node against its ONNX schema, which the handlers take for granted: its numbers of
        inputs and outputs, its attributes and their types, and its inputs' data types (those of
        one type parameter alike)."""
        where = f"{self.op} in opset {self.importer.opset}"
        for what, count, low, high in (
            ("inputs", len(self.proto.input), schema.min_input, schema.max_input),
            ("outputs", len(self.proto.output), schema.min_output, schema.max_output),
        ):
            if not low <= count <= high:
                raise self.error(f"it has {count} {what}; {where} takes {low} to {high}")
        type_name = self.importer.onnx.AttributeProto.AttributeType.Name
        for a in self.proto.attribute:
            expected = schema.attributes.get(a.name)
            if expected is None:
                known = ", ".join(sorted(schema.attributes))
                raise self.error(
                    f"{where} has no attribute {a.name!r} ({f'its attributes: {known}' if known else 'it has none'})"
                )
            if a.type != expected.type.value:
                raise self.error(f"attribute {a.name!r} is {type_name(a.type)}; {where} takes {expected.type.name}")
        allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
        bound = {}
        for k, name in enumerate(self.proto.input):
            if not name:
                continue
            formal = schema.inputs[min(k, len(schema.inputs) - 1)]  # a variadic last input repeats
            have = self.importer.type_str(self.value(k))
            if have not in allowed.get(formal.type_str, [formal.type_str]):
                shown = " or ".join(allowed.get(formal.type_str, [formal.type_str]))
                raise self.error(f"input {k} ({name!r}) is {have}; {where} takes {shown} there")
            j, first = bound.setdefault(formal.type_str, (k, have))
            if first != have:
                raise self.error(
                    f"input {k} ({name!r}) is {have}, input {j} {first}; {where} takes one data type for both "
                    f"(its type {formal.type_str})"
                )

    def tensor(self, t: _Tensor, what: str) -> _Tensor:
        """``t`` checked for a DirectML tensor: its data type, rank and sizes."""
        if t.elem_type not in _DATA_TYPES:
            raise self.error(
                f"{what} ({t.name!r}) is {self.importer.type_name(t.elem_type)}, which DirectML has no type for "
                "(supported: FLOAT, FLOAT16, DOUBLE, INT8 to INT64, UINT8 to UINT64, BOOL)",
                unsupported=True,
            )
        self.shape(t.shape, f"{what} ({t.name!r})")
        return t

    def shape(self, shape, what: str) -> None:
        if not 1 <= len(shape) <= MAX_DIMENSIONS:
            raise self.error(
                f"{what} has rank {len(shape)}; DirectML tensors have 1 to {MAX_DIMENSIONS} dimensions",
                unsupported=True,
            )
        if 0 in shape:
            raise self.error(
                f"{what} has shape {tuple(shape)}; DirectML tensors have no empty dimension", unsupported=True
            )

    def emit(self, make, inputs: list[_Tensor], output_shapes: list[tuple[int, ...]], name=None) -> list[_Tensor]:
        """Add the node ``make(input descs, output descs)`` fed by ``inputs``; its outputs."""
        for k, t in enumerate(inputs):
            self.tensor(t, f"input {k}")
        outputs = self.outputs
        for k, shape in enumerate(output_shapes):
            shown = f" ({outputs[k]!r})" if k < len(outputs) and outputs[k] else ""
            self.shape(shape, f"output {k}{shown}")
        first = inputs[0]
        try:
            desc = make([_desc(t) for t in inputs], [_desc(first, s) for s in output_shapes])
        except DescriptorError as e:
            raise self.error(f"its DirectML operator is invalid:\n{e}") from e
        index = self.builder.add(desc, name or self.proto.name or f"{self.op} {self.name}", inputs)
        return [
            _Tensor(first.elem_type, tuple(s), ("node", index, j), outputs[j] if j < len(outputs) else "")
            for j, s in enumerate(output_shapes)
        ]

    @property
    def outputs(self) -> list[str]:
        return list(self.proto.output)


class _Importer:
    """Reads a model's graph node by node into a ``_Builder``."""

    def __init__(self, onnx, model):
        self.onnx = onnx
        graph = model.graph
        versions = {o.domain: o.version for o in model.opset_import}
        self.opset = versions.get("", versions.get("ai.onnx"))
        if self.opset is None:
            raise ModelError("the model imports no version of the ONNX operator set (domain '')")
        self.graph_proto = graph
        self._check_names()
        to_array = onnx.numpy_helper.to_array
        self.values: dict[str, object] = {init.name: to_array(init) for init in graph.initializer}
        for sparse in graph.sparse_initializer:
            self.values[sparse.values.name] = _Unsupported(f"sparse initializer {sparse.values.name!r}")
        inputs = []
        for vi in graph.input:
            if vi.name in self.values:
                continue  # an initializer listed among the inputs is a constant
            elem_type, shape = self._declared(vi, "graph input")
            t = _Tensor(elem_type, shape, ("input", len(inputs)), vi.name)
            inputs.append(t)
            self.values[vi.name] = t
        self.inputs = inputs
        self.builder = _Builder(inputs)
        self.left_out = _Builder(inputs)  # the nodes that reach no graph output

    def type_name(self, elem_type: int) -> str:
        try:
            return self.onnx.TensorProto.DataType.Name(elem_type)
        except ValueError:
            return f"data type {elem_type}"

    def type_str(self, value) -> str:
        """A value's type as ONNX's schemas write it (``tensor(float)``)."""
        if isinstance(value, np.ndarray):
            elem_type = self.onnx.helper.np_dtype_to_tensor_dtype(value.dtype)
        else:
            elem_type = value.elem_type
        return f"tensor({self.type_name(elem_type).lower()})"

    def _check_names(self) -> None:
        """Each value is named once (ONNX's single static assignment), by a graph input, an
        initializer (which may be listed among the inputs too) or a node's output."""
        graph = self.graph_proto
        defined: dict[str, str] = {}
        for vi in graph.input:
            if vi.name in defined:
                raise ModelError(f"graph input {vi.name!r} is listed twice")
            defined[vi.name] = f"graph input {vi.name!r}"
        initializers = set()
        for name in [i.name for i in graph.initializer] + [s.values.name for s in graph.sparse_initializer]:
            if name in initializers:
                raise ModelError(f"initializer {name!r} is defined twice")
            initializers.add(name)
            defined.setdefault(name, f"initializer {name!r}")
        for index, proto in enumerate(graph.node):
            for j, name in enumerate(proto.output):
                if name in defined:
                    raise _Node(self, proto, index).error(
                        f"output {j} ({name!r}) redefines {defined[name]}; ONNX names each value once"
                    )
                if name:
                    defined[name] = f"output {j} of {_label(proto, index)}"

    def _declared(self, vi, what: str):
        """The element type and static shape a value info declares."""
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            kind = _KINDS.get(kind, kind or "a value of no type")
            raise UnsupportedModelError(f"{what} {vi.name!r} is {kind}, not a tensor")
        tensor_type = vi.type.tensor_type
        if not tensor_type.HasField("shape"):
            raise UnsupportedModelError(f"{what} {vi.name!r} has no shape; load needs static shapes")
        shape = []
        for i, dim in enumerate(tensor_type.shape.dim):
            if not dim.HasField("dim_value"):
                shown = f" {dim.dim_param!r}" if dim.dim_param else ""
                raise UnsupportedModelError(
                    f"{what} {vi.name!r} has a dynamic dimension{shown} (dimension {i}); load needs static shapes"
                )
            shape.append(dim.dim_value)
        return tensor_type.elem_type, tuple(shape)

    def _needed(self) -> list[bool]:
        """Per node, whether it reaches a graph output."""
        nodes = self.graph_proto.node
        wanted = {o.name for o in self.graph_proto.output}
        needed = [False] * len(nodes)
        for i in range(len(nodes) - 1, -1, -1):
            if any(name in wanted for name in nodes[i].output if name):
                needed[i] = True
                wanted.update(name for name in nodes[i].input if name)
        return needed

    def graph(self) -> GraphDesc:
        graph = self.graph_proto
        if not graph.output:
            raise ModelError("the model's graph has no outputs")
        for index, (proto, needed) in enumerate(zip(graph.node, self._needed())):
            self._node(proto, index, self.builder if needed else self.left_out)
        input_names = {t.name for t in self.inputs}
        for k, vi in enumerate(graph.output):
            value = self.values.get(vi.name)
            if vi.name in input_names:
                raise UnsupportedModelError(
                    f"graph output {k} ({vi.name!r}) is graph input {vi.name!r} itself; a graph has no "
                    "edge from an input to an output (add an Identity node)"
                )
            if isinstance(value, np.ndarray):
                source = "an initializer" if any(i.name == vi.name for i in graph.initializer) else "a constant"
                raise UnsupportedModelError(
                    f"graph output {k} ({vi.name!r}) is {source}; a graph moves data from its inputs only"
                )
            if not isinstance(value, _Tensor):
                raise ModelError(f"graph output {k} ({vi.name!r}) is not produced by any node")
            self._check_declared(vi, value, k)
            self.builder.output(value, k)
        fed = {e.graph_input_index for e in self.builder.input_edges}
        for t in self.inputs:
            if t.source[1] not in fed:
                raise UnsupportedModelError(
                    f"graph input {t.source[1]} ({t.name!r}) reaches no graph output; a graph uses every input"
                )
        b = self.builder
        return GraphDesc(
            len(self.inputs), len(graph.output), b.nodes, b.input_edges, b.output_edges, b.intermediate_edges
        )

    def _check_declared(self, vi, t: _Tensor, k: int) -> None:
        """A graph output declares its data type and shape (ONNX requires it of a model's outputs),
        and they must be what the nodes give (a dimension may be left symbolic)."""
        tensor_type = vi.type.tensor_type  # (empty where the type is no tensor's)
        if not tensor_type.elem_type or not tensor_type.HasField("shape"):
            missing = "shape" if tensor_type.elem_type else "data type"
            raise ModelError(
                f"graph output {k} ({vi.name!r}) declares no {missing}; ONNX requires a model's outputs to "
                "declare their data type and shape"
            )
        if tensor_type.elem_type != t.elem_type:
            raise ModelError(
                f"graph output {k} ({vi.name!r}) is declared {self.type_name(tensor_type.elem_type)} "
                f"but its node gives {self.type_name(t.elem_type)}"
            )
        declared = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
        if len(declared) != len(t.shape) or any(d is not None and d != s for d, s in zip(declared, t.shape)):
            raise ModelError(
                f"graph output {k} ({vi.name!r}) is declared of shape "
                f"{tuple('?' if d is None else d for d in declared)} but its node gives {t.shape}"
            )

    def _node(self, proto, index: int, builder: _Builder) -> None:
        node = _Node(self, proto, index, builder)
        if proto.domain not in ("", "ai.onnx"):
            raise node.error(f"domain {proto.domain!r} is not supported (only ONNX's own operators)", True)
        handler = _HANDLERS.get(proto.op_type)
        if handler is None:
            raise node.error(
                f"op type {proto.op_type!r} is not supported (supported: {', '.join(SUPPORTED_OPS)})", True
            )
        for k in range(len(proto.input)):
            if node.has_input(k) and isinstance(node.value(k), _Unsupported):
                raise node.error(f"input {k} is a {node.value(k).what}, which load does not read", True)
        try:
            schema = self.onnx.defs.get_schema(proto.op_type, self.opset, "")
        except self.onnx.defs.SchemaError:
            raise node.error(f"opset {self.opset} has no {proto.op_type}") from None
        node.check_schema(schema)
        results = handler(node, self.opset)
        for name, value in zip(proto.output, results):
            if name:
                self.values[name] = value


@dataclass(frozen=True)
class _Unsupported:
    """A value the importer cannot read (a sparse initializer), refused where a node uses it."""

    what: str


def _data(node: _Node, k: int = 0):
    """Data input ``k``: a constant array, or a tensor checked for DirectML."""
    value = node.value(k)
    return value if isinstance(value, np.ndarray) else node.tensor(value, f"input {k}")


# The handlers: each takes the node and the opset version and returns its outputs' values,
# constant arrays where its data inputs are constants, else the graph's tensors.


def _windows_taken(a: np.ndarray, windows) -> np.ndarray:
    return a[np.ix_(*[start + step * np.arange(count) for start, step, count in windows])]


def _window(node: _Node, data, windows, name=None):
    """Read ``windows`` (per dimension ``(start, step, count)``) of ``data``: SLICE, or SLICE1
    where a step is negative."""
    if isinstance(data, np.ndarray):
        return _windows_taken(data, windows)
    shape = tuple(count for _, _, count in windows)
    if all(step > 0 for _, step, _ in windows):

        def make(ins, outs):
            starts, steps, counts = zip(*windows)
            return SliceOperatorDesc(ins[0], outs[0], starts, counts, steps)

    else:
        # SLICE1's window spans the elements read; a negative stride reads it from its end.
        offsets = [start + step * (count - 1) if step < 0 else start for start, step, count in windows]
        sizes = [abs(step) * (count - 1) + 1 for _, step, count in windows]
        strides = [step for _, step, _ in windows]

        def make(ins, outs):
            return Slice1OperatorDesc(ins[0], outs[0], offsets, sizes, strides)

    return node.emit(make, [data], [shape], name)[0]


def _slice(node: _Node, opset: int):
    data = _data(node)
    if opset < 10:
        starts, ends = node.attr("starts"), node.attr("ends")
        if starts is None or ends is None:
            raise node.error("the attributes starts and ends are required")
        axes, steps = node.attr("axes") or None, None
    else:
        starts, ends = node.ints(1, "starts"), node.ints(2, "ends")
        if starts is None or ends is None:
            raise node.error("the inputs starts and ends are required")
        axes, steps = node.ints(3, "axes"), node.ints(4, "steps")
    shape = data.shape
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.error(
            f"starts, ends, axes and steps have {len(starts)}, {len(ends)}, {len(axes)} and {len(steps)} "
            "entries; they must have as many"
        )
    windows = [(0, 1, size) for size in shape]
    for i, (start, end, axis, step) in enumerate(zip(starts, ends, node.axes(axes, len(shape)), steps)):
        if step == 0:
            raise node.error(f"steps[{i}] = 0 must be non-zero")
        windows[axis] = _clamped_window(shape[axis], start, end, step)
    return [_window(node, data, windows)]


def _clamped_window(dim: int, start: int, end: int, step: int) -> tuple[int, int, int]:
    """ONNX Slice's ``(start, step, count)`` along a dimension of ``dim`` elements: negative
    starts and ends count from the end, then clamp to the dimension (to ``[0, dim - 1]`` and
    ``[-1, dim - 1]`` for a negative step)."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
        count = max(0, (end - start + step - 1) // step)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
        count = max(0, (start - end - step - 1) // -step)
    # One element read: its step does not matter, and 1 keeps the window small and forward.
    return (start, 1 if count == 1 else step, count)


def _split(node: _Node, opset: int):
    data = _data(node)
    shape = data.shape
    axis = node.axis(node.attr("axis", 0), len(shape))
    outputs = node.outputs
    if opset >= 13 or (opset < 2 and node.has_input(1)):
        split = node.ints(1, "split")
    else:
        split = node.attr("split") or None
    num_outputs = node.attr("num_outputs") if opset >= 18 else None
    dim = shape[axis]
    if split is not None:
        if num_outputs is not None:
            raise node.error("split and num_outputs are both given; ONNX takes one of them")
        sizes = list(split)
        if len(sizes) != len(outputs):
            raise node.error(f"split has {len(sizes)} entries for {len(outputs)} outputs")
        if any(s < 0 for s in sizes) or sum(sizes) != dim:
            raise node.error(f"split = {sizes} must be non-negative sizes that sum to the axis' size {dim}")
    else:
        parts = len(outputs)
        if opset >= 18 and num_outputs is None:
            raise node.error("neither the input split nor the attribute num_outputs is given (opset 18 needs one)")
        if num_outputs is not None and num_outputs != parts:
            raise node.error(f"num_outputs = {num_outputs} differs from its {parts} outputs")
        if dim % parts == 0:
            sizes = [dim // parts] * parts
        elif opset >= 18:
            chunk = -(-dim // parts)  # equal parts rounded up, the last one smaller
            sizes = [chunk] * (parts - 1) + [dim - chunk * (parts - 1)]
            if sizes[-1] < 0:
                raise node.error(f"an axis of size {dim} cannot be split into {parts} parts of {chunk} and fewer")
        else:
            raise node.error(f"an axis of size {dim} does not split into {parts} equal parts")
    if isinstance(data, np.ndarray):
        return np.split(data, np.cumsum(sizes)[:-1], axis=axis)
    output_shapes = [(*shape[:axis], size, *shape[axis + 1 :]) for size in sizes]
    return node.emit(lambda ins, outs: SplitOperatorDesc(ins[0], outs, axis), [data], output_shapes)


def _concat(node: _Node, opset: int):
    count = len(node.proto.input)
    if count == 0:
        raise node.error("it has no inputs")
    parts = [_data(node, k) for k in range(count)]
    shape = parts[0].shape
    axis = node.attr("axis", 1 if opset < 4 else None)
    if axis is None:
        raise node.error("the attribute axis is required")
    axis = node.axis(axis, len(shape))
    for k, part in enumerate(parts[1:], 1):
        if len(part.shape) != len(shape) or any(a != b for d, (a, b) in enumerate(zip(part.shape, shape)) if d != axis):
            raise node.error(f"input {k} has shape {part.shape}, input 0 {shape}: only axis {axis} may differ")
    constant = [isinstance(p, np.ndarray) for p in parts]
    if all(constant):
        return [np.concatenate(parts, axis=axis)]
    if any(constant):
        k = constant.index(True)
        raise node.error(
            f"input {k} ({node.proto.input[k]!r}) is a constant joined with data; a graph moves data from its "
            "inputs only",
            unsupported=True,
        )
    output = (*shape[:axis], sum(p.shape[axis] for p in parts), *shape[axis + 1 :])
    return node.emit(lambda ins, outs: JoinOperatorDesc(ins, outs[0], axis), parts, [output])


def _pad(node: _Node, opset: int):
    data = _data(node)
    shape, rank = data.shape, len(data.shape)
    pads, axes = _pads(node, opset, data)
    begins, ends = [0] * rank, [0] * rank
    for i, axis in enumerate(axes):
        begins[axis], ends[axis] = pads[i], pads[i + len(axes)]
    padded = tuple(size + b + e for size, b, e in zip(shape, begins, ends))
    if any(p < 0 for p in padded):
        raise node.error(f"pads {pads} crop more than the input's shape {shape} holds (to {padded})")
    cropped = [size - max(0, -b) - max(0, -e) for size, b, e in zip(shape, begins, ends)]
    if any(c <= 0 for c in cropped):  # (a crop on one side that reaches into the other side's padding)
        raise node.error(
            f"pads {pads} crop all of the input's shape {shape}: its output {padded} holds no input element",
            unsupported=True,
        )
    crop = [(max(0, -b), 1, c) for b, c in zip(begins, cropped)]
    grow = [max(0, b) for b in begins], [max(0, e) for e in ends]
    if isinstance(data, np.ndarray):
        return [np.pad(_windows_taken(data, crop), list(zip(*grow)))]
    crops, grows = any(b < 0 or e < 0 for b, e in zip(begins, ends)), any(grow[0] + grow[1])
    if crops or not grows:  # the crop, or padding nothing a copy
        label = node.proto.name or f"{node.op} {node.name}"
        data = _window(node, data, crop, f"{label} (crop)" if grows else None)
        if not grows:
            return [data]
        data = replace(data, name=f"{node.outputs[0]} (cropped)")
    ones = [1] * rank

    def make(ins, outs):
        return SliceGradOperatorDesc(ins[0], outs[0], grow[0], cropped, ones)

    return node.emit(make, [data], [padded])


def _pads(node: _Node, opset: int, data):
    """``(pads, axes)`` of a Pad node (its attributes before opset 11, then its inputs), once its
    mode and constant are found to be what SLICE_GRAD pads with: constant, 0."""
    mode = node.attr("mode", "constant")
    if mode != "constant":
        raise node.error(f"mode {mode!r} is not supported (only 'constant', with the constant 0)", True)
    axes = None
    if opset < 11:
        pads = node.attr("pads" if opset >= 2 else "paddings")
        value = np.asarray(node.attr("value", 0.0))
        if pads is None:
            raise node.error("the attribute pads is required")
    else:
        pads, value = node.ints(1, "pads"), node.constant(2, "constant_value")
        if pads is None:
            raise node.error("the input pads is required")
        if opset >= 18:
            axes = node.ints(3, "axes")
    rank = len(data.shape)
    axes = node.axes(axes, rank) if axes is not None else range(rank)
    if len(pads) != 2 * len(axes):
        raise node.error(f"pads has {len(pads)} entries; it needs 2 per axis padded ({2 * len(axes)})")
    if value is not None:
        _check_pad_constant(node, data, value)
    return pads, axes


def _check_pad_constant(node: _Node, data, value):
    """A Pad node's ``constant_value`` is one value, of zero bytes in the data's type."""
    if value.size != 1:
        raise node.error(f"constant_value has {value.size} elements; it must be one value")
    dtype = (
        data.dtype
        if isinstance(data, np.ndarray)
        else node.importer.onnx.helper.tensor_dtype_to_np_dtype(data.elem_type)
    )
    # SLICE_GRAD writes zero bytes where it does not copy, so only a constant of zero bytes
    # (not -0.0) is that.
    if any(np.asarray(value).astype(dtype).reshape(-1).tobytes()):
        raise node.error(
            f"constant_value {value.reshape(-1)[0]!s} is not supported (only 0: DirectML's SLICE_GRAD "
            "writes zeros where it does not copy)",
            unsupported=True,
        )


def _identity_node(node: _Node, opset: int):
    data = _data(node)
    if isinstance(data, np.ndarray):
        return [data]
    return [_window(node, data, [(0, 1, size) for size in data.shape])]


def _reshaped(node: _Node, data, shape):
    """``data`` re-described with ``shape``: for a tensor, the same buffer on the edges."""
    if isinstance(data, np.ndarray):
        return data.reshape(shape)
    node.shape(shape, f"output 0 ({node.outputs[0]!r})")
    return replace(data, shape=tuple(shape), name=node.outputs[0])


def _flatten(node: _Node, opset: int):
    data = _data(node)
    shape = data.shape
    axis, rank = node.attr("axis", 1), len(shape)
    low = -rank if opset >= 11 else 0  # (Flatten counts a negative axis from the end from opset 11 on)
    if not low <= axis <= rank:
        raise node.error(f"axis = {axis} is out of range for rank {rank} (opset {opset}: {low} to {rank})")
    axis += rank if axis < 0 else 0
    return [_reshaped(node, data, (math.prod(shape[:axis]), math.prod(shape[axis:])))]


def _reshape(node: _Node, opset: int):
    data = _data(node)
    if opset < 5:
        requested = node.attr("shape")
        if requested is None:
            raise node.error("the attribute shape is required")
    else:
        requested = node.ints(1, "shape")
        if requested is None:
            raise node.error("the input shape is required")
    allowzero = node.attr("allowzero", 0) if opset >= 14 else 0
    shape = list(requested)
    if shape.count(-1) > 1:
        raise node.error(f"shape {requested} has more than one -1")
    if allowzero and 0 in shape and -1 in shape:
        raise node.error(f"shape {requested} has both 0 and -1 with allowzero = 1")
    for i, size in enumerate(shape):
        if size == 0 and not allowzero:
            if i >= len(data.shape):
                raise node.error(
                    f"shape {requested} copies dimension {i}, which the input (rank {len(data.shape)}) lacks"
                )
            shape[i] = data.shape[i]
        elif size < -1:
            raise node.error(f"shape {requested} has the negative size {size}")
    total = math.prod(data.shape)
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or total % known:
            raise node.error(f"shape {requested} does not fit the input's {total} elements")
        shape[shape.index(-1)] = total // known
    if math.prod(shape) != total:
        raise node.error(f"shape {requested} holds {math.prod(shape)} elements, the input {total}")
    return [_reshaped(node, data, tuple(shape))]


def _constant(node: _Node, opset: int):
    attrs = node.proto.attribute
    if len(attrs) != 1:
        raise node.error("it must have exactly one attribute")
    name = attrs[0].name
    value = node.attrs[name]
    onnx = node.importer.onnx
    if name == "value":
        return [onnx.numpy_helper.to_array(value)]
    if name == "value_float":
        return [np.asarray(value, np.float32)]
    if name == "value_floats":
        return [np.asarray(value, np.float32).reshape(-1)]
    if name == "value_int":
        return [np.asarray(value, np.int64)]
    if name == "value_ints":
        return [np.asarray(value, np.int64).reshape(-1)]
    raise node.error(f"a Constant's {name} is not supported", unsupported=True)


_HANDLERS = {
    "Concat": _concat,
    "Constant": _constant,
    "Flatten": _flatten,
    "Identity": _identity_node,
    "Pad": _pad,
    "Reshape": _reshape,
    "Slice": _slice,
    "Split": _split,
}

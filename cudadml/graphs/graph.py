"""Graphs: ``GraphDesc`` mirrors ``DML_GRAPH_DESC``, and its ``compile()`` composes the nodes
into copies from graph inputs to graph outputs.

Every operator of the family is an affine map of element indices, dimension by dimension:
SLICE and SLICE1 read ``start + step * c``, SPLIT and JOIN shift one axis, SLICE_GRAD places
each gradient element on a lattice and zeros the rest. So a node's output is a set of
*pieces* that tile it exactly: a lattice of its elements (per dimension ``lo + step * k``,
``0 <= k < count``) that takes, element for element, a strided run of a graph input (or zeros).
Composing a node with the pieces of what feeds it intersects lattices dimension by dimension
(a linear congruence per dimension) and stays a set of pieces, so a chain of any length
becomes copies from the graph's inputs straight to its outputs: no intermediate tensor exists,
each output element is written once, and the whole graph runs as one launch per element size
(``CompiledBatch``'s kernels). A reshape edge (the same packed buffer re-described) splits and
merges dimensions through their common refinement.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import hooks
from ..core.errors import DescriptorError, Violations, as_int, fill_docstring
from ..core.memory import ALIGNMENT, address_of, aligned_empty
from ..core.operators import OperatorDesc
from ..core.plan import CopyJob, CopyPlan, best_walk, merge_phases
from ..core.tensor import BufferTensorDesc, packed_strides
from ..run.bindings import Bindings, Slot
from ..run.compiled import CompiledBatch

__all__ = [
    "GraphDesc",
    "GraphError",
    "GraphInputEdge",
    "GraphIntermediateEdge",
    "GraphNode",
    "GraphOutputEdge",
]

#: Pieces one node output may become before compiling refuses the graph (a reshape across
#: a strided lattice, or SLICE_GRAD with huge steps, multiplies them).
MOST_PIECES = 1 << 16
#: Dimensions a copy job may have (the kernels' rank).
MAX_RANK = 8


class GraphError(DescriptorError):
    """A ``GraphDesc`` breaks DirectML's graph rules, or cannot be composed.

    Parameters
    ----------
    violations : sequence of str
        Every broken rule, one line each, naming its node and edge.

    Examples
    --------
    >>> import cudadml as cd
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> flip = cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4]), cd.BufferTensorDesc(f32, [4]), [0], [4], [-1])
    >>> cd.GraphDesc(1, 1, [flip], [], [cd.GraphOutputEdge(0, 0, 0)])
    Traceback (most recent call last):
        ...
    cudadml.graphs.graph.GraphError: Graph: nodes[0] (Slice1) input 0 is fed by no edge
    Graph: graph input 0 feeds no node
    """


def _index(value, name, where):
    value = as_int(value, name, where, "a non-negative integer", shown=True)
    if value < 0:
        raise ValueError(f"{where}: {name} = {value} must be a non-negative integer")
    return value


@dataclass(frozen=True)
class GraphNode:
    """``DML_OPERATOR_GRAPH_NODE_DESC``: an operator descriptor and an optional name.

    Parameters
    ----------
    operator : operator descriptor
        A ``SliceOperatorDesc``, ``Slice1OperatorDesc``, ``SliceGradOperatorDesc``,
        ``SplitOperatorDesc`` or ``JoinOperatorDesc``.
    name : str, optional
        Shown in messages and pictures.

    Raises
    ------
    TypeError
        From ``GraphDesc``, when ``operator`` is not an operator descriptor.

    Examples
    --------
    >>> import cudadml as cd
    >>> u8 = cd.TensorDataType.UINT8
    >>> cd.GraphNode(cd.SliceOperatorDesc(cd.BufferTensorDesc(u8, [4]), cd.BufferTensorDesc(u8, [2]), [0], [2], [2]),
    ...              name="even").label(0)
    'nodes[0] (even)'
    """

    operator: Any
    name: str | None = None

    def label(self, index: int) -> str:
        """How messages name the node at ``index``."""
        return f"nodes[{index}] ({self.name or self.operator.NAME})"


class _Edge:
    """What the three edges share: indices taken by value and never negative, a name that is
    a str or None, and the last sections of their docstrings."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.__doc__ = fill_docstring(cls.__doc__, {"{name, raises and examples}": _EDGE_SHARED_DOC})

    def __post_init__(self):
        where = type(self).__name__
        for name in self.__dataclass_fields__:
            if name != "name":
                object.__setattr__(self, name, _index(getattr(self, name), name, where))
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"{where}: name must be a str or None, not {type(self.name).__name__}")


_EDGE_SHARED_DOC = """name : str, optional
    Shown in messages.

Raises
------
TypeError
    For an index that is not an integer (NumPy integers count by value), or a name that
    is not a str.
ValueError
    For a negative index.

Examples
--------
>>> import cudadml as cd"""


@dataclass(frozen=True)
class GraphInputEdge(_Edge):
    """``DML_INPUT_GRAPH_EDGE_DESC``: a graph input feeds a node's input.

    Parameters
    ----------
    graph_input_index : int
        The graph input, from 0.
    to_node_index : int
        The node fed, from 0.
    to_node_input_index : int
        Which of its inputs, from 0 (its descriptor's ``input_tensors`` order).
    {name, raises and examples}
    >>> cd.GraphInputEdge(0, 2, 1)
    GraphInputEdge(graph_input_index=0, to_node_index=2, to_node_input_index=1, name=None)
    """

    graph_input_index: int
    to_node_index: int
    to_node_input_index: int
    name: str | None = None


@dataclass(frozen=True)
class GraphOutputEdge(_Edge):
    """``DML_OUTPUT_GRAPH_EDGE_DESC``: a node's output is a graph output.

    Parameters
    ----------
    from_node_index : int
        The node, from 0.
    from_node_output_index : int
        Which of its outputs, from 0 (its descriptor's ``output_tensors`` order).
    graph_output_index : int
        The graph output it becomes, from 0.
    {name, raises and examples}
    >>> cd.GraphOutputEdge(1, 0, 0, name="y").name
    'y'
    """

    from_node_index: int
    from_node_output_index: int
    graph_output_index: int
    name: str | None = None


@dataclass(frozen=True)
class GraphIntermediateEdge(_Edge):
    """``DML_INTERMEDIATE_GRAPH_EDGE_DESC``: a node's output feeds another node's input.

    Parameters
    ----------
    from_node_index : int
        The producing node, from 0.
    from_node_output_index : int
        Which of its outputs, from 0.
    to_node_index : int
        The consuming node, from 0.
    to_node_input_index : int
        Which of its inputs, from 0.
    {name, raises and examples}
    >>> cd.GraphIntermediateEdge(0, 1, 1, 0).from_node_output_index
    1
    """

    from_node_index: int
    from_node_output_index: int
    to_node_index: int
    to_node_input_index: int
    name: str | None = None


def _edge_text(kind, k, edge):
    return f"{kind}[{k}]" + (f" ({edge.name})" if edge.name else "")


def _same_layout(a: BufferTensorDesc, b: BufferTensorDesc) -> bool:
    return a.data_type == b.data_type and a.sizes == b.sizes and a.effective_strides == b.effective_strides


def _packed(t: BufferTensorDesc) -> bool:
    return t.effective_strides == packed_strides(t.sizes)


@dataclass(frozen=True)
class GraphDesc:
    """``DML_GRAPH_DESC``: operators joined by edges, compiled into one operator.

    Nodes are ``SliceOperatorDesc``, ``Slice1OperatorDesc``, ``SliceGradOperatorDesc``,
    ``SplitOperatorDesc`` and ``JoinOperatorDesc`` (a node's inputs and outputs are its
    descriptor's ``input_tensors`` and ``output_tensors``, in order). The rules, checked at
    construction and reported together:

    * the graph has at least one node, input and output; every index is in range;
    * every node input is fed exactly once (by an input or an intermediate edge), every graph
      input feeds at least one node, every graph output is fed exactly once; a node output may
      feed nothing, several nodes and several graph outputs;
    * the edges make no cycle;
    * an input edge's tensor is the graph input's: all edges of one graph input carry the same
      data type, sizes and strides (the binding is checked against the largest
      ``total_tensor_size_in_bytes`` and ``guaranteed_base_offset_alignment`` among them);
    * an intermediate edge's two tensors (the producer's output, the consumer's input) have the
      same data type and either the same sizes and strides, or are both packed with the same
      element count: a reshape, the same buffer re-described.

    A graph output's tensor is its producer's output tensor.

    Parameters
    ----------
    input_count, output_count : int
        How many tensors the graph takes and gives.
    nodes : sequence of GraphNode or operator descriptor
        The operators; a bare descriptor is a node without a name.
    input_edges : sequence of GraphInputEdge
        Graph inputs to node inputs.
    output_edges : sequence of GraphOutputEdge
        Node outputs to graph outputs.
    intermediate_edges : sequence of GraphIntermediateEdge, optional
        Node outputs to node inputs.

    Raises
    ------
    GraphError
        Listing every broken rule, each naming its node and edge.
    TypeError
        For a field of the wrong type.

    Examples
    --------
    A split whose parts are joined in the other order: one copy per part, input to output.

    >>> import numpy as np, cudadml as cd
    >>> i8 = cd.TensorDataType.INT8
    >>> t = lambda *sizes: cd.BufferTensorDesc(i8, sizes)
    >>> split = cd.SplitOperatorDesc(t(6), [t(2), t(4)], axis=0)
    >>> join = cd.JoinOperatorDesc([t(4), t(2)], t(6), axis=0)
    >>> graph = cd.GraphDesc(1, 1, [split, join], [cd.GraphInputEdge(0, 0, 0)],
    ...                      [cd.GraphOutputEdge(1, 0, 0)],
    ...                      [cd.GraphIntermediateEdge(0, 1, 1, 0), cd.GraphIntermediateEdge(0, 0, 1, 1)])
    >>> compiled = graph.compile()
    >>> compiled
    <CompiledOperator graph of 2 nodes, 1 input and 1 output: 2 strided copies in 1 launch, 6 bytes out>
    >>> x, y = np.arange(16, dtype=np.int8), np.zeros(16, np.int8)
    >>> compiled.execute([x], [y])
    >>> y[:6]
    array([2, 3, 4, 5, 0, 1], dtype=int8)
    """

    input_count: int
    output_count: int
    nodes: tuple[GraphNode, ...]
    input_edges: tuple[GraphInputEdge, ...]
    output_edges: tuple[GraphOutputEdge, ...]
    intermediate_edges: tuple[GraphIntermediateEdge, ...] = field(default=())

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "input_count", _index(self.input_count, "input_count", "Graph"))
        set_(self, "output_count", _index(self.output_count, "output_count", "Graph"))
        nodes = []
        for k, node in enumerate(_sequence(self.nodes, "nodes")):
            if isinstance(node, OperatorDesc):
                node = GraphNode(node)
            if not isinstance(node, GraphNode) or not isinstance(node.operator, OperatorDesc):
                raise TypeError(
                    f"Graph: nodes[{k}] must be an operator descriptor or GraphNode, not {type(node).__name__}"
                )
            nodes.append(node)
        set_(self, "nodes", tuple(nodes))
        for attr, kind in (
            ("input_edges", GraphInputEdge),
            ("output_edges", GraphOutputEdge),
            ("intermediate_edges", GraphIntermediateEdge),
        ):
            edges = tuple(_sequence(getattr(self, attr), attr))
            for k, edge in enumerate(edges):
                if not isinstance(edge, kind):
                    raise TypeError(f"Graph: {attr}[{k}] must be a {kind.__name__}, not {type(edge).__name__}")
            set_(self, attr, edges)
        v = Violations("Graph", GraphError)
        self._validate(v)
        v.raise_if_any()

    def _validate(self, v: Violations) -> None:
        """The graph description's rules, each broken one added to ``v`` in this order: the
        counts, the input and intermediate edges, one edge into each node input, the graph
        inputs, the output edges and graph outputs, cycles."""
        if not self.nodes:
            v.add("NodeCount = 0 must be greater than 0")
        if self.input_count == 0:
            v.add("InputCount = 0 must be greater than 0")
        if self.output_count == 0:
            v.add("OutputCount = 0 must be greater than 0")
        fed: dict[tuple[int, int], list[str]] = {}  # (node, input) -> the edges that feed it
        graph_inputs = self._input_edge_rules(v, fed)
        successors = self._intermediate_edge_rules(v, fed)
        for n, node in enumerate(self.nodes):
            for port in range(len(node.operator.input_tensors)):
                feeders = fed.get((n, port), [])
                if not feeders:
                    v.add(f"{node.label(n)} input {port} is fed by no edge")
                elif len(feeders) > 1:
                    v.add(f"{node.label(n)} input {port} is fed by {len(feeders)} edges: {', '.join(feeders)}")
        self._graph_input_rules(v, graph_inputs)
        self._output_edge_rules(v)
        cycle = _cycle(len(self.nodes), successors)
        if cycle:
            v.add("the edges make a cycle: " + " -> ".join(self.nodes[n].label(n) for n in cycle))

    def _node_port(self, v, edge_text, index, port, outputs):
        """The tensor at ``port`` of node ``index``, or None (reported) when out of range."""
        nodes = self.nodes
        if index >= len(nodes):
            v.add(f"{edge_text}: node index {index} is out of range ({len(nodes)} nodes)")
            return None
        node = nodes[index]
        tensors = node.operator.output_tensors if outputs else node.operator.input_tensors
        if port >= len(tensors):
            role = "output" if outputs else "input"
            v.add(f"{edge_text}: {node.label(index)} has no {role} {port} ({len(tensors)} {role}s)")
            return None
        return tensors[port]

    def _input_edge_rules(self, v, fed):
        """The input edges' rules; adds the node inputs they feed to ``fed``. Returns, per graph
        input, the edges that carry it with the tensors they reach."""
        graph_inputs: dict[int, list[tuple[str, BufferTensorDesc]]] = {}
        for k, edge in enumerate(self.input_edges):
            text = _edge_text("input_edges", k, edge)
            tensor = self._node_port(v, text, edge.to_node_index, edge.to_node_input_index, False)
            if edge.graph_input_index >= self.input_count:
                v.add(
                    f"{text}: GraphInputIndex = {edge.graph_input_index} is out of range "
                    f"(InputCount = {self.input_count})"
                )
            elif tensor is not None:
                graph_inputs.setdefault(edge.graph_input_index, []).append((text, tensor))
            if tensor is not None:
                fed.setdefault((edge.to_node_index, edge.to_node_input_index), []).append(text)
        return graph_inputs

    def _intermediate_edge_rules(self, v, fed):
        """The intermediate edges' rules (a producer's output and its consumer's input agree);
        adds the node inputs they feed to ``fed``. Returns each node's successors."""
        successors: dict[int, set[int]] = {}
        for k, edge in enumerate(self.intermediate_edges):
            text = _edge_text("intermediate_edges", k, edge)
            source = self._node_port(v, text, edge.from_node_index, edge.from_node_output_index, True)
            target = self._node_port(v, text, edge.to_node_index, edge.to_node_input_index, False)
            if target is not None:
                fed.setdefault((edge.to_node_index, edge.to_node_input_index), []).append(text)
            if source is None or target is None:
                continue
            successors.setdefault(edge.from_node_index, set()).add(edge.to_node_index)
            if source.data_type != target.data_type:
                v.add(
                    f"{text}: the producer's output is {source.data_type.name}, the consumer's input "
                    f"{target.data_type.name}"
                )
            elif not _same_layout(source, target) and not (
                _packed(source) and _packed(target) and math.prod(source.sizes) == math.prod(target.sizes)
            ):
                v.add(
                    f"{text}: the producer's output (sizes {source.sizes}, strides {source.effective_strides}) and "
                    f"the consumer's input (sizes {target.sizes}, strides {target.effective_strides}) must have the "
                    "same sizes and strides, or both be packed with the same element count (a reshape)"
                )
        return successors

    def _graph_input_rules(self, v, graph_inputs):
        """Each graph input feeds a node, and the edges that carry it agree on its tensor."""
        for g in range(self.input_count):
            carried = graph_inputs.get(g)
            if not carried:
                if not any(e.graph_input_index == g for e in self.input_edges):
                    v.add(f"graph input {g} feeds no node")
                continue
            first_text, first = carried[0]
            for text, tensor in carried[1:]:
                if not _same_layout(first, tensor):
                    v.add(
                        f"{text} gives graph input {g} the tensor {_layout_text(tensor)}, and {first_text} "
                        f"{_layout_text(first)}: the edges of one graph input must agree"
                    )

    def _output_edge_rules(self, v):
        """The output edges' rules, and one edge for each graph output."""
        given: dict[int, list[str]] = {}
        for k, edge in enumerate(self.output_edges):
            text = _edge_text("output_edges", k, edge)
            self._node_port(v, text, edge.from_node_index, edge.from_node_output_index, True)
            if edge.graph_output_index >= self.output_count:
                v.add(
                    f"{text}: GraphOutputIndex = {edge.graph_output_index} is out of range "
                    f"(OutputCount = {self.output_count})"
                )
            else:
                given.setdefault(edge.graph_output_index, []).append(text)
        for o in range(self.output_count):
            feeders = given.get(o, [])
            if len(feeders) != 1:
                v.add(
                    f"graph output {o} is fed by {len(feeders)} edges" + (f": {', '.join(feeders)}" if feeders else "")
                )

    @property
    def input_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """Per graph input, the tensor its edges carry, with the largest size and alignment
        any of them needs."""
        found: dict[int, list[BufferTensorDesc]] = {}
        for edge in self.input_edges:
            op = self.nodes[edge.to_node_index].operator
            found.setdefault(edge.graph_input_index, []).append(op.input_tensors[edge.to_node_input_index])
        result = []
        for g in range(self.input_count):
            tensors = found[g]
            first = tensors[0]
            need = max(t.total_tensor_size_in_bytes for t in tensors)
            alignment = max(t.guaranteed_base_offset_alignment for t in tensors)
            if need != first.total_tensor_size_in_bytes or alignment != first.guaranteed_base_offset_alignment:
                first = BufferTensorDesc(
                    first.data_type, first.sizes, first.strides, need, alignment, flags=first.flags
                )
            result.append(first)
        return tuple(result)

    @property
    def output_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """Per graph output, its producer's output tensor."""
        by_index = {e.graph_output_index: e for e in self.output_edges}
        return tuple(
            self.nodes[e.from_node_index].operator.output_tensors[e.from_node_output_index]
            for e in (by_index[o] for o in range(self.output_count))
        )

    def __repr__(self) -> str:
        return (
            f"GraphDesc({self.input_count} inputs, {self.output_count} outputs, {len(self.nodes)} nodes: "
            f"{', '.join(n.name or n.operator.NAME for n in self.nodes[:6])}{', ...' if len(self.nodes) > 6 else ''})"
        )

    def _repr_html_(self) -> str | None:
        picture = hooks.picture(self)
        return None if picture is None else picture._repr_html_()

    def compile(self, device: int | None = None, *, load: bool = True) -> CompiledGraph:
        """Compose the graph into copies from its inputs to its outputs and compile them.

        Parameters
        ----------
        device : int, optional
            The CUDA device for CuPy bindings; the current one when omitted.
        load : bool, default True
            Whether to compile and load the kernels now where a GPU is present.

        Returns
        -------
        CompiledOperator
            Its ``execute(inputs, outputs)`` takes one binding per graph input and output, in
            index order, under the binding rules of one operator.
        """
        return CompiledGraph(self, device, load=load)


def _sequence(value, name):
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence | tuple | list):
        try:
            return list(value)
        except TypeError:
            raise TypeError(f"Graph: {name} must be a sequence, not {type(value).__name__}") from None
    return value


def _layout_text(t):
    return f"{t.data_type.name} sizes {t.sizes} strides {t.effective_strides}"


def _cycle(count, successors):
    """A list of node indices that closes a cycle, or None."""
    state = [0] * count  # 0 unseen, 1 on the path, 2 done
    for root in range(count):
        if state[root]:
            continue
        path, stack = [], [(root, iter(sorted(successors.get(root, ()))))]
        state[root] = 1
        path.append(root)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[node] = 2
            elif state[child] == 1:
                return [*path[path.index(child) :], child]
            elif state[child] == 0:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(successors.get(child, ())))))
    return None


# ---------------------------------------------------------------------------------------------
# Pieces and their composition.
#
# A local piece (one node, before composition), as its descriptor's ``pieces(port)`` gives it
# (each defined with its descriptor, in ``cudadml.ops``): ``(source, dims)`` with per dimension
# ``(lo, step, count, src_lo, src_step)``: output element ``lo + step * k`` takes element
# ``src_lo + src_step * k`` of node input ``source`` (None: zero), for ``0 <= k < count``.
# A resolved piece: ``(source, offset, dims)`` with per dimension ``(lo, step, count,
# src_stride, extras)``: tensor coordinate ``lo + step * k + sum(e_step * e_k)`` takes element
# ``offset + src_stride * k + sum(e_stride * e_k)`` (summed over every dimension) of graph input
# ``source`` (element strides of its bound layout), or zero, where ``extras`` holds further
# axes ``(e_step, e_count, e_stride)`` of the same dimension: a block of rows re-described as
# one flat dimension stays one piece. Steps of the output side are positive (1 for a single
# element).


def _solve(a, b, count_k, c, d, count_m):
    """The ``k`` in ``[0, count_k)`` with ``a + b * k = c + d * m`` for an ``m`` in
    ``[0, count_m)`` (``d > 0``): ``(k0, k_step, n, m0, m_step)``, ``k = k0 + k_step * j``
    and ``m = m0 + m_step * j`` for ``0 <= j < n``; None when there is none."""
    if b == 0 or count_k == 1:
        t = a  # every k reads the same element
        if (t - c) % d:
            return None
        m = (t - c) // d
        return (0, 1, count_k, m, 0) if 0 <= m < count_m else None
    g = math.gcd(b, d)
    if (c - a) % g:
        return None
    period = d // g
    k0 = ((c - a) // g) * pow(b // g, -1, period) % period if period > 1 else 0
    m_step = b // g
    m0 = (a + b * k0 - c) // d
    lo, hi = _range(period, k0, 0, count_k - 1)
    lo2, hi2 = _range(m_step, m0, 0, count_m - 1)
    lo, hi = max(lo, lo2), min(hi, hi2)
    if lo > hi:
        return None
    return (k0 + period * lo, period, hi - lo + 1, m0 + m_step * lo, m_step)


def _range(step, base, low, high):
    """The ``j`` with ``low <= base + step * j <= high`` (``step != 0``), as ``(first, last)``."""
    if step > 0:
        return -((base - low) // step), (high - base) // step
    return -((high - base) // -step), (base - low) // -step


def _compose(local_dims, feed, in_sizes, where):
    """A local piece's dims read through the resolved pieces ``feed`` of its input (of sizes
    ``in_sizes``). A dimension with extra axes is read through as it is where the node reads
    that dimension whole, in order; otherwise its piece is unrolled first."""
    out = []
    pending = list(feed)
    while pending:
        source, offset, dims = pending.pop()
        if any(f[4] and not _whole(d, n) for d, f, n in zip(local_dims, dims, in_sizes)):
            pending += _expanded([(source, offset, dims)], where)
            continue
        new_offset, new_dims = offset, []
        for (lo, step, count, src_lo, src_step), (f_lo, f_step, f_count, f_stride, f_extras) in zip(local_dims, dims):
            hit = _solve(src_lo, src_step, count, f_lo, f_step, f_count)
            if hit is None:
                break
            k0, k_step, n, m0, m_step = hit
            new_offset += f_stride * m0
            extras = tuple((step * e_step, e_count, e_stride) for e_step, e_count, e_stride in f_extras)
            if n == 1:
                new_dims.append((lo + step * k0, 1, 1, 0, extras))
            else:
                new_dims.append((lo + step * k0, step * k_step, n, f_stride * m_step, extras))
        else:
            out.append((source, new_offset if source is not None else 0, tuple(new_dims)))
    return out


def _whole(local_dim, size):
    """Whether a local dimension reads its input's ``size`` elements in order."""
    _, _, count, src_lo, src_step = local_dim
    return count == size and src_lo == 0 and (src_step == 1 or count == 1)


def _expanded(pieces, where):
    """The pieces with every extra axis unrolled into pieces of their own."""
    out = []
    for source, offset, dims in pieces:
        parts = [(offset, [])]
        for lo, step, count, stride, extras in dims:
            shifts = [(0, 0)]
            for e_step, e_count, e_stride in extras:
                shifts = [(x + e_step * k, o + e_stride * k) for x, o in shifts for k in range(e_count)]
            parts = [(off + o, [*head, (lo + x, step, count, stride, ())]) for off, head in parts for x, o in shifts]
            _check_count(len(out) + len(parts), where)
        out += [(source, off if source is not None else 0, tuple(d)) for off, d in parts]
    return out


def _refinement(a_sizes, b_sizes):
    """Sizes ``r`` that both shapes are made of, each dimension a run of consecutive ones:
    ``(r, a_groups, b_groups)`` with per dimension the indices of its run in ``r``, outer
    first; None when there is none (the reshape moves elements across dimensions' edges)."""
    r: list[int] = []
    groups = ([[] for _ in a_sizes], [[] for _ in b_sizes])
    i, j = len(a_sizes) - 1, len(b_sizes) - 1
    rest_a = a_sizes[i] if i >= 0 else 1
    rest_b = b_sizes[j] if j >= 0 else 1
    while True:
        while i >= 0 and rest_a == 1:
            i -= 1
            rest_a = a_sizes[i] if i >= 0 else 1
        while j >= 0 and rest_b == 1:
            j -= 1
            rest_b = b_sizes[j] if j >= 0 else 1
        if i < 0 or j < 0:
            break
        f = min(rest_a, rest_b)
        if max(rest_a, rest_b) % f:
            return None
        groups[0][i].insert(0, len(r))
        groups[1][j].insert(0, len(r))
        r.append(f)
        rest_a //= f
        rest_b //= f
    # Built from the innermost out: index r outer first, as the dimensions are.
    last = len(r) - 1
    return r[::-1], *([[last - i for i in group] for group in side] for side in groups)


def _reshaped(pieces, a_sizes, b_sizes, where):
    """Resolved pieces of a packed tensor of sizes ``a_sizes`` re-described as ``b_sizes``."""
    if tuple(a_sizes) == tuple(b_sizes):
        return pieces
    found = _refinement(a_sizes, b_sizes)
    if found is None:
        # No common refinement ((4, 6) as (6, 4)): through the flat index, run by run (of
        # dimensions without extra axes: _merge_run reads none).
        flat = [
            (source, offset, (_merge_run(list(dims), list(a_sizes)),))
            for source, offset, dims in _expanded(pieces, where)
        ]
        out = []
        for source, offset, ((lo, step, count, stride, _),) in _expanded(flat, where):
            for o, split in _split_dim(lo, step, count, stride, list(b_sizes)):
                out.append((source, offset + o if source is not None else 0, tuple(split)))
            _check_count(len(out), where)
        return out
    r, a_groups, b_groups = found
    out = []
    for source, offset, dims in _expanded(pieces, where):
        # Each a-dimension split into its run of refined ones (sizes r, outer first) ...
        parts = [(offset, [])]
        for (lo, step, count, stride, _), group in zip(dims, a_groups):
            sizes = [r[g] for g in group]
            parts = [
                (off + o, head + split)
                for off, head in parts
                for o, split in _split_dim(lo, step, count, stride, sizes)
            ]
            _check_count(len(parts) + len(out), where)
        # ... and each run of refined dimensions merged into its b-dimension.
        for off, refined in parts:
            merged = tuple(_merge_run([refined[g] for g in group], [r[g] for g in group]) for group in b_groups)
            out.append((source, off if source is not None else 0, merged))
    return out


def _check_count(n, where):
    if n > MOST_PIECES:
        raise GraphError([f"Graph: {where}: composing the graph needs more than {MOST_PIECES} copies"])


def _split_dim(lo, step, count, stride, sizes):
    """One dimension's lattice over refined ``sizes`` (outer first): ``[(offset, dims)]``."""
    if not sizes:  # a dimension of size 1 (its only element, 0)
        return [(0, [])]
    if len(sizes) == 1:
        return [(0, [(lo, step, count, stride, ())])]
    inner = math.prod(sizes[1:])
    out = []
    if count == 1 or step % inner == 0:
        # One inner coordinate; the outer one walks.
        outer_dim = (lo // inner, step // inner if count > 1 else 1, count, stride, ())
        for o, rest in _split_dim(lo % inner, 1, 1, 0, sizes[1:]):
            out.append((o, [outer_dim, *rest]))
        return out
    if inner % step == 0:
        # Whole rows of the inner block where they fit, the rest a row at a time.
        per_row = inner // step
        k = 0
        while k < count:
            x = lo + step * k
            row, at = divmod(x, inner)
            if at < step and count - k >= per_row:  # a run of whole rows
                rows = (count - k) // per_row
                inner_dims = _split_dim(at, step, per_row, stride, sizes[1:])
                out += [(stride * k + o, [(row, 1, rows, stride * per_row, ()), *rest]) for o, rest in inner_dims]
                k += rows * per_row
                continue
            n = min(count - k, (inner - at + step - 1) // step)
            inner_dims = _split_dim(at, step, n, stride, sizes[1:])
            out += [(stride * k + o, [(row, 1, 1, 0, ()), *rest]) for o, rest in inner_dims]
            k += n
        return out
    # Neither divides the other: the pattern repeats every lcm(step, inner) elements, so each
    # of its phases keeps one column and walks the rows.
    period = math.lcm(step, inner) // step  # elements per repeat
    rows_per = period * step // inner
    for k in range(min(period, count)):
        row, at = divmod(lo + step * k, inner)
        n = -(-(count - k) // period)
        outer = (row, rows_per if n > 1 else 1, n, stride * period if n > 1 else 0, ())
        out += [(stride * k + o, [outer, *rest]) for o, rest in _split_dim(at, 1, 1, 0, sizes[1:])]
    return out


def _merge_run(run, sizes):
    """Refined dimensions ``run`` (outer first, over ``sizes``, without extra axes) as one
    dimension: a lattice where they continue one another, with the rest as extra axes."""
    lo, main, extras = 0, None, []
    for i in range(len(run) - 1, -1, -1):
        r_lo, r_step, r_count, r_stride, _ = run[i]
        scale = math.prod(sizes[i + 1 :])
        lo += r_lo * scale
        if r_count == 1:
            continue
        axis = (r_step * scale, r_count, r_stride)
        if main is None:
            main = axis
        elif not extras and axis[0] == main[0] * main[1] and axis[2] == main[2] * main[1]:
            main = (main[0], main[1] * axis[1], main[2])
        else:
            extras.append(axis)
    if main is None:
        return (lo, 1, 1, 0, ())
    return (lo, main[0], main[1], main[2], tuple(extras))


class _Composer:
    """Resolves node outputs into pieces over graph inputs, each once, on demand (so nodes
    that feed no graph output cost nothing)."""

    def __init__(self, graph: GraphDesc, input_tensors):
        self.graph = graph
        self.fed_by = {}
        for e in graph.input_edges:
            self.fed_by[(e.to_node_index, e.to_node_input_index)] = ("input", e.graph_input_index)
        for e in graph.intermediate_edges:
            self.fed_by[(e.to_node_index, e.to_node_input_index)] = (
                "node",
                e.from_node_index,
                e.from_node_output_index,
            )
        self.input_strides = [t.effective_strides for t in input_tensors]
        self.resolved = {}

    def pieces(self, node, port):
        """The resolved pieces of output ``port`` of ``node``; what feeds it is resolved
        first, producers before consumers (no recursion, so chains of any length work)."""
        stack = [(node, port)]
        while stack:
            key = stack[-1]
            if key in self.resolved:
                stack.pop()
                continue
            missing = [
                feeder[1:]
                for feeder in (
                    self.fed_by[(key[0], k)] for k in range(len(self.graph.nodes[key[0]].operator.input_tensors))
                )
                if feeder[0] == "node" and feeder[1:] not in self.resolved
            ]
            if missing:
                stack += missing
                continue
            stack.pop()
            self.resolved[key] = self._resolve(*key)
        return self.resolved[(node, port)]

    def _resolve(self, node, port):
        op = self.graph.nodes[node].operator
        out = []
        pieces = getattr(op, "pieces", None)  # each descriptor's own: its module in cudadml.ops
        if pieces is None:
            raise TypeError(f"a graph node cannot be a {type(op).__name__}")
        for source, dims in pieces(port):
            if source is None:
                out.append((None, 0, tuple((lo, step, count, 0, ()) for lo, step, count, _, _ in dims)))
                continue
            where = self.graph.nodes[node].label(node)
            out += _compose(dims, self.feed(node, source), op.input_tensors[source].sizes, where)
        _check_count(len(out), self.graph.nodes[node].label(node))
        return out

    def feed(self, node, port):
        """Resolved pieces of what feeds input ``port`` of ``node``, in that input's coordinates."""
        feeder = self.fed_by[(node, port)]
        target = self.graph.nodes[node].operator.input_tensors[port]
        if feeder[0] == "input":
            strides = self.input_strides[feeder[1]]
            return [(feeder[1], 0, tuple((0, 1, n, s, ()) for n, s in zip(target.sizes, strides)))]
        _, source, source_port = feeder
        pieces = self.pieces(source, source_port)
        produced = self.graph.nodes[source].operator.output_tensors[source_port]
        return _reshaped(pieces, produced.sizes, target.sizes, self.graph.nodes[node].label(node))


def _jobs(pieces, output, out_strides, zero_input):
    """The copies of one graph output's pieces (unsimplified: ``_walked`` orders them)."""
    jobs = []
    for source, offset, dims in pieces:
        sizes, in_strides, steps, out_offset = [], [], [], 0
        for (lo, step, count, stride, extras), s in zip(dims, out_strides):
            out_offset += lo * s
            for e_step, e_count, e_stride in ((step, count, stride), *extras):
                sizes.append(e_count)
                in_strides.append(e_stride if source is not None else 0)
                steps.append(e_step * s)
        if 0 in sizes:
            continue
        input_ = zero_input if source is None else source
        jobs.append(CopyJob(input_, output, tuple(sizes), tuple(in_strides), tuple(steps), offset, out_offset))
    return jobs


def _within_rank(job):
    """``job`` as jobs of at most ``MAX_RANK`` dimensions once simplified (extra axes can pass
    it): split along the outermost dimension until they fit."""
    if len(job.simplified().sizes) <= MAX_RANK:
        return [job]
    out = []
    for k in range(job.sizes[0]):
        out += _within_rank(
            CopyJob(
                job.input,
                job.output,
                job.sizes[1:],
                job.in_strides[1:],
                job.out_strides[1:],
                job.in_offset + k * job.in_strides[0],
                job.out_offset + k * job.out_strides[0],
            )
        )
    return out


def _walked(jobs, element_size):
    """Phases folded into one job where they can be (each input row read once), each job
    walked in the order that coalesces best; within the kernels' rank."""
    merged = [best_walk(j, element_size) for j in merge_phases(jobs)]
    if all(len(j.sizes) <= MAX_RANK for j in merged):
        return merged
    return [best_walk(part, element_size) for j in jobs for part in _within_rank(j)]


#: Where ``CompiledGraph.execute`` refuses a buffer for its address, size or layout, the way
#: forward it ends with: the callable graph arranges all three itself.
WAY_FORWARD = "call the compiled graph with arrays (compiled(x)), or allocate with cudadml.testing.aligned_empty"
#: How the binding rules word those refusals (``bindings._resolve``).
_BUFFER_RULES = ("bytes past a multiple of", "TotalTensorSizeInBytes", "lies outside the buffer", "C-contiguous")


class _GraphBindings(Bindings):
    """A compiled graph's binding rules: DirectML's, with the way forward added to the
    refusals that an array caller meets only because buffers are DirectML's contract."""

    def refuse(self, problems):
        super().refuse([f"{p}; {WAY_FORWARD}" if any(r in p for r in _BUFFER_RULES) else p for p in problems])


class CompiledGraph(CompiledBatch):
    """A ``GraphDesc`` composed into copies from its inputs to its outputs: one launch per
    element size. Pieces that take zeros (SLICE_GRAD's) read a small zero buffer the operator
    owns, bound after the graph's inputs.

    ``execute(inputs, outputs)`` binds buffers under DirectML's rules; calling the compiled
    graph with arrays (``compiled(x)``) returns its outputs as new arrays (``__call__``).
    """

    _BINDINGS = _GraphBindings

    def __init__(self, graph: GraphDesc, device=None, *, load=True):
        self.desc = graph
        inputs, outputs = graph.input_tensors, graph.output_tensors
        self._tensors = (inputs, outputs)
        self._input_names = [_input_name(graph, g) for g in range(graph.input_count)]
        self._in = [_slot(f"inputs[{g}]", t) for g, t in enumerate(inputs)]
        self._out = [_slot(f"outputs[{o}]", t) for o, t in enumerate(outputs)]
        composer = _Composer(graph, inputs)
        zero_input = len(inputs)
        by_size = {}
        for edge in graph.output_edges:
            tensor = outputs[edge.graph_output_index]
            pieces = composer.pieces(edge.from_node_index, edge.from_node_output_index)
            by_size.setdefault(tensor.data_type.element_size, []).extend(
                _jobs(pieces, edge.graph_output_index, tensor.effective_strides, zero_input)
            )
        self.plans = tuple(CopyPlan(size, tuple(_walked(jobs, size))) for size, jobs in by_size.items() if jobs)
        self._zeros_needed = any(job.input == zero_input for plan in self.plans for job in plan.jobs)
        self._zeros = {}
        self._ready("Graph.execute", device, load)

    def __call__(self, *arrays: Any, stream: Any = None) -> Any:
        """Run the graph on arrays and return its outputs as new arrays of the same kind.

        Unlike ``execute``, any address and any strides are taken: where DirectML's binding
        rules need a 16-byte aligned buffer of ``TotalTensorSizeInBytes``, an input is copied
        into aligned staging first (an array that keeps the rules already is bound as it is),
        and the outputs are allocated here.

        Parameters
        ----------
        *arrays : numpy.ndarray, cupy.ndarray or torch.Tensor
            One per graph input, in index order, each of the input's shape and dtype; all of
            one kind (NumPy runs on the host backend, CuPy and CUDA tensors on the GPU, CPU
            tensors as NumPy views).
        stream : cupy.cuda.Stream, optional
            For device arrays; the current stream (for torch tensors, torch's) when omitted.

        Returns
        -------
        array or tuple of arrays
            The graph's output (C-contiguous, of the inputs' kind), or a tuple of them in
            output order when the graph has several.

        Raises
        ------
        TypeError
            For a wrong number of arrays, arrays of several kinds, or an array of the wrong
            dtype, naming the argument, the graph input and what it takes.
        ValueError
            For an array of the wrong shape, likewise.

        Examples
        --------
        >>> import numpy as np, cudadml as cd
        >>> f32 = cd.TensorDataType.FLOAT32
        >>> flip = cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4]), cd.BufferTensorDesc(f32, [4]), [0], [4], [-1])
        >>> compiled = cd.GraphDesc(1, 1, [flip], [cd.GraphInputEdge(0, 0, 0, name="x")],
        ...                         [cd.GraphOutputEdge(0, 0, 0)]).compile()
        >>> compiled(np.arange(8, dtype=np.float32)[::2])
        array([6., 4., 2., 0.], dtype=float32)
        >>> compiled(np.zeros(3, np.float32))
        Traceback (most recent call last):
            ...
        ValueError: compiled graph: argument 0 is float32 of shape (3,); graph input 0 ('x') takes float32 of shape (4,)
        """
        inputs, outputs = self._tensors
        if len(arrays) != len(inputs):
            raise TypeError(
                f"compiled graph: takes {_count(len(inputs), 'array')} (one per graph input: "
                f"{', '.join(self._input_names)}), {len(arrays)} given"
            )
        kind, views, place, wrap = hooks.caller_arrays(arrays, stream)  # (interop: every kind)
        xp = sys.modules["cupy"] if kind == "cupy" else np
        for k, (a, tensor) in enumerate(zip(views, inputs)):
            dtype, sizes = tensor.data_type.numpy_dtype, tuple(tensor.sizes)
            if a.dtype != dtype or tuple(a.shape) != sizes:
                error = TypeError if a.dtype != dtype else ValueError
                raise error(
                    f"compiled graph: argument {k} is {a.dtype} of shape {tuple(a.shape)}; {self._input_names[k]} "
                    f"takes {dtype} of shape {sizes}"
                )
        with place as stream:
            staged = [_staged(a, tensor, xp) for a, tensor in zip(views, inputs)]
            buffers = [_aligned(tensor, xp) for tensor in outputs]
            self.execute(staged, buffers, stream=stream)
            results = [_result(buffer, tensor, xp) for buffer, tensor in zip(buffers, outputs)]
        results = [wrap(r) for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def _run(self, bound, stream):
        if self._zeros_needed:
            kind, (ins, outs), (in_owners, out_owners), address_bits = bound
            zeros = self._zero_buffer(kind)
            bound = (kind, ([*ins, address_of(zeros)], outs), ([*in_owners, zeros], out_owners), address_bits)
        super()._run(bound, stream)

    def _zero_buffer(self, kind):
        """``ALIGNMENT`` zero bytes, aligned, in the memory of ``kind``."""
        if kind == "cupy":
            import cupy

            device = cupy.cuda.Device().id
            key = (kind, device)
            if key not in self._zeros:
                self._zeros[key] = cupy.zeros(2, cupy.uint64)
            return self._zeros[key]
        if kind not in self._zeros:
            zeros = self._zeros[kind] = aligned_empty(ALIGNMENT, np, ALIGNMENT)
            zeros[...] = 0
        return self._zeros[kind]

    def _load(self):
        super()._load()
        if self._zeros_needed:
            self._zero_buffer("cupy")  # allocated now, so execute allocates nothing

    def __repr__(self) -> str:
        graph = self.desc
        launches = [len(p.for_addresses(0)) for p in self._prepared_for(_cuda())]
        jobs = sum(len(p.jobs) for p in self.plans)
        return (
            f"<CompiledOperator graph of {_count(len(graph.nodes), 'node')}, {_count(graph.input_count, 'input')} "
            f"and {_count(graph.output_count, 'output')}: {_count(jobs, 'strided copy', 'strided copies')} in "
            f"{_count(sum(launches), 'launch')}, {sum(p.output_bytes for p in self.plans)} bytes out>"
        )

    def _repr_html_(self) -> str | None:
        picture = hooks.picture(self)
        return None if picture is None else picture._repr_html_()


def _input_name(graph, g):
    """Graph input ``g`` as messages name it: by the name of an edge that carries it, if any."""
    names = [e.name for e in graph.input_edges if e.graph_input_index == g and e.name]
    return f"graph input {g}" + (f" ({names[0]!r})" if names else "")


def _aligned(tensor, xp):
    """A fresh buffer that keeps DirectML's binding rules for ``tensor``."""
    alignment = max(256, tensor.guaranteed_base_offset_alignment)
    return aligned_empty(tensor.total_tensor_size_in_bytes, xp, alignment)


def _elements(buffer, tensor, xp):
    """The elements of ``tensor`` in ``buffer``, as an array of its shape and strides."""
    dtype = tensor.data_type.numpy_dtype
    typed = buffer[: buffer.nbytes // dtype.itemsize * dtype.itemsize].view(dtype)
    strides = [s * dtype.itemsize for s in tensor.effective_strides]
    return xp.lib.stride_tricks.as_strided(typed, shape=tensor.sizes, strides=strides)


def _staged(a, tensor, xp):
    """``a`` bound as graph input ``tensor``: itself where it keeps the binding rules, else a
    copy of its elements in an aligned buffer of the tensor's layout."""
    alignment = max(ALIGNMENT, tensor.guaranteed_base_offset_alignment)
    if (
        _packed(tensor)
        and a.flags.c_contiguous
        and a.nbytes >= tensor.total_tensor_size_in_bytes
        and address_of(a) % alignment == 0
    ):
        return a
    buffer = _aligned(tensor, xp)
    _elements(buffer, tensor, xp)[...] = a
    return buffer


def _result(buffer, tensor, xp):
    """A graph output written into ``buffer`` as a new C-contiguous array."""
    if _packed(tensor):
        dtype = tensor.data_type.numpy_dtype
        count = math.prod(tensor.sizes)
        return buffer[: count * dtype.itemsize].view(dtype).reshape(tensor.sizes)
    return xp.ascontiguousarray(_elements(buffer, tensor, xp))


def _cuda():
    from ..backends import CUDA

    return CUDA


def _count(n, one, many=None):
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _slot(name, tensor):
    return Slot(
        name,
        tensor.data_type.element_size,
        tensor.sizes,
        tensor.effective_strides,
        need=tensor.total_tensor_size_in_bytes,
        alignment=tensor.guaranteed_base_offset_alignment,
    )

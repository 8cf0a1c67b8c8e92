"""Random graphs of SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN against an oracle of this file's own.

Hypothesis draws valid graphs of 1 to 12 nodes over the five operators: ranks 1 to 5, small
sizes, element sizes 1, 2, 4 and 8 (a second data type at times, in a part of the graph of its
own), SLICE strides 0 to 3, SLICE1 and SLICE_GRAD window strides of either sign, SPLIT outputs
fanned out to several nodes and graph outputs or left unused, JOINs of node outputs and graph
inputs (one tensor joined with itself too), intermediates read by several nodes, reshape edges
between packed tensors (the same buffer re-described), graph inputs with padded, transposed and
broadcast (zero-stride) layouts, node outputs with padded and transposed layouts, edges whose
two tensors differ in ``TotalTensorSizeInBytes`` and base offset alignment, nodes that feed
nothing, and nodes, edges, graph inputs and graph outputs in shuffled orders. Some graphs hold
patterns the compiler folds (Focus: SLICEs at every phase of a stride, joined; a SPLIT joined
in another order, at times read on through two reshape edges; a crop padded back by
SLICE_GRAD), and one in four moves long rows (contiguous innermost dimensions of 16 bytes or
more, the row kernels' case).

The oracle runs the graph node by node in NumPy from the operators' definitions on DirectML's pages
(``Output[c] = Input[Offsets + Strides * c]``, a window's copy start, zeros elsewhere for
SLICE_GRAD, ``np.split``, ``np.concatenate``), on unsigned integers of the element size, so
every comparison is of bytes. Inputs hold random bytes (never zero, poison or padding), each in
a buffer of its own or all in one (at times at overlapping ranges); each output is bound in a
larger poisoned buffer at an offset, as a ``BufferBinding`` or a slice of that buffer, and
every byte that is not one of its elements, canaries included, must still be poison after the
call; no input byte may change. A failure reports the graph as Python, and the part of it that
the wrong output reads when that part fails alone.

The default run gives each backend (the NumPy reference, the emulated kernels, the GPU where
there is one) 40 graphs; ``pytest -m fuzz`` runs 3000. Graphs with known answers follow.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.graphs.graph import GraphDesc, GraphInputEdge, GraphIntermediateEdge, GraphNode, GraphOutputEdge
from cudadml.testing import CANARY, INPUT_PADDING, POISON, aligned_empty, to_host

T = cd.TensorDataType
TYPES = [T.UINT8, T.INT8, T.FLOAT16, T.INT16, T.UINT16, T.FLOAT32, T.INT32, T.UINT32, T.FLOAT64, T.INT64, T.UINT64]
UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
OPERATORS = ["slice", "slice1", "slice_grad", "split", "join"]
MAX_SIZE = 10  # per dimension, of any tensor drawn
MAX_ELEMENTS = 600  # per tensor: a SLICE_GRAD or JOIN that would pass it becomes a SLICE
ROWS_MAX_ELEMENTS = 4096  # (graphs of long rows)
ROWS_OPERATORS = ["slice", "slice1", "split", "join", "split", "join"]
#: Input bytes: never zero (SLICE_GRAD's zeros are then told apart from copies), poison (an
#: unwritten output byte) or input padding (a byte read from between an input's elements).
DATA_BYTES = np.array([b for b in range(1, 256) if b not in (POISON, INPUT_PADDING)], np.uint8)


def _unsigned(data_type):
    return UNSIGNED[data_type.element_size]


def _packed_strides(sizes):
    strides, step = [], 1
    for size in reversed(sizes):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def _strides(desc):
    return desc.strides if desc.strides is not None else _packed_strides(desc.sizes)


def _packed(desc):
    """Packed row-major: no strides, or the packed ones spelt out (either may be reshaped)."""
    return desc.strides is None or tuple(desc.strides) == _packed_strides(desc.sizes)


def _span(desc):
    """Elements from element 0 to the last one, inclusive."""
    return sum((n - 1) * s for n, s in zip(desc.sizes, _strides(desc))) + 1


# ---- the oracle: each operator from its definition -------------------------------------------------


def _taken(starts, steps, counts):
    """The index arrays of ``start + step * c`` per dimension, for ``np.ix_``."""
    return np.ix_(*[start + step * np.arange(count) for start, step, count in zip(starts, steps, counts)])


def _copy_start(offsets, sizes, strides):
    return [o + w - 1 if s < 0 else o for o, w, s in zip(offsets, sizes, strides)]


def oracle_slice(x, p):
    return x[_taken(p["offsets"], p["strides"], p["sizes"])]


def oracle_slice1(x, p, count):
    start = _copy_start(p["offsets"], p["sizes"], p["strides"])
    return x[_taken(start, p["strides"], count)]


def oracle_slice_grad(dy, p, sizes):
    dx = np.zeros(sizes, dy.dtype)
    dx[_taken(_copy_start(p["offsets"], p["sizes"], p["strides"]), p["strides"], dy.shape)] = dy
    return dx


def oracle_split(x, p):
    return [np.ascontiguousarray(part) for part in np.split(x, np.cumsum(p["parts"])[:-1], p["axis"])]


def oracle_join(xs, p):
    return np.concatenate(xs, p["axis"])


# ---- what a drawn graph is ------------------------------------------------------------------------


@dataclass
class Node:
    """One node, in the order it was drawn: its operator, what each input reads (``("input", g)``
    or ``("node", m, k)``, and the sizes it sees there: other sizes than the producer's make a
    reshape edge), its fields and its descriptor."""

    kind: str
    inputs: list  # [(ref, desc this node's input slot has)]
    params: dict
    desc: object = None


@dataclass
class Drawn:
    """A drawn graph in drawing order, with the permutations that give its indices in the
    ``GraphDesc``, and how each graph input and output is bound."""

    inputs: list  # graph input descs, in drawing order
    nodes: list  # Node
    outputs: list  # per graph output (drawing order): ("node", m, k)
    node_at: list  # drawing order -> GraphDesc node index
    input_at: list
    output_at: list
    edge_orders: tuple  # permutations of the input, intermediate and output edge lists
    bare: list  # per node (drawing order): passed as a bare descriptor, not a GraphNode
    names: bool  # whether nodes and edges are named
    input_bindings: list  # per graph input (GraphDesc order): (form, offset in 16s, slack bytes)
    output_bindings: list
    shared_inputs: str  # "": a buffer per graph input; "disjoint" or "overlapping" ranges of one buffer
    seed: int
    patterns: tuple = ()  # the patterns of several nodes drawn, and "rows" for a graph of rows
    _graph: object = field(default=None, repr=False)

    def graph_input_descs(self):
        """Per graph input (GraphDesc order), the tensor its edges carry: their layout, with the
        largest ``TotalTensorSizeInBytes`` and base offset alignment among them."""
        carried = {g: [] for g in range(len(self.inputs))}
        for node in self.nodes:
            for ref, desc in node.inputs:
                if ref[0] == "input":
                    carried[ref[1]].append(desc)
        descs = [None] * len(self.inputs)
        for g, desc in enumerate(self.inputs):
            descs[self.input_at[g]] = cd.BufferTensorDesc(
                desc.data_type,
                desc.sizes,
                desc.strides,
                max(d.total_tensor_size_in_bytes for d in carried[g]),
                max(d.guaranteed_base_offset_alignment for d in carried[g]),
            )
        return descs

    def graph_output_descs(self):
        descs = [None] * len(self.outputs)
        for o, (_, m, k) in enumerate(self.outputs):
            descs[self.output_at[o]] = self.nodes[m].desc.output_tensors[k]
        return descs

    def edges(self):
        """``(input edges, intermediate edges, output edges)`` as tuples of fields, shuffled."""
        ins, mids = [], []
        for n, node in enumerate(self.nodes):
            for j, (ref, _) in enumerate(node.inputs):
                if ref[0] == "input":
                    ins.append((self.input_at[ref[1]], self.node_at[n], j))
                else:
                    mids.append((self.node_at[ref[1]], ref[2], self.node_at[n], j))
        outs = [(self.node_at[m], k, self.output_at[o]) for o, (_, m, k) in enumerate(self.outputs)]
        return tuple([edges[i] for i in order] for edges, order in zip((ins, mids, outs), self.edge_orders))

    def graph(self):
        if self._graph is None:
            self._graph = _build(self)
        return self._graph

    def text(self):
        """Python that builds the graph (for the report of a failing case)."""
        return _source(self)


def _build(drawn):
    nodes = [None] * len(drawn.nodes)
    for n, node in enumerate(drawn.nodes):
        i = drawn.node_at[n]
        nodes[i] = node.desc if drawn.bare[n] else GraphNode(node.desc, name=f"node{i}" if drawn.names else None)
    ins, mids, outs = drawn.edges()
    named = drawn.names
    return GraphDesc(
        input_count=len(drawn.inputs),
        output_count=len(drawn.outputs),
        nodes=nodes,
        input_edges=[GraphInputEdge(*e, name=f"in{e[0]}" if named else None) for e in ins],
        output_edges=[GraphOutputEdge(*e, name=f"out{e[2]}" if named else None) for e in outs],
        intermediate_edges=[GraphIntermediateEdge(*e, name=f"mid{k}" if named else None) for k, e in enumerate(mids)],
    )


def _tensor_source(desc):
    text = f"cd.BufferTensorDesc(T.{desc.data_type.name}, {tuple(desc.sizes)}"
    if desc.strides is not None:
        text += f", strides={tuple(desc.strides)}"
    minimum = cd.BufferTensorDesc(desc.data_type, desc.sizes, desc.strides).total_tensor_size_in_bytes
    if desc.total_tensor_size_in_bytes != minimum:
        text += f", total_tensor_size_in_bytes={desc.total_tensor_size_in_bytes}"
    if desc.guaranteed_base_offset_alignment:
        text += f", guaranteed_base_offset_alignment={desc.guaranteed_base_offset_alignment}"
    return text + ")"


def _node_source(node):
    desc, p = node.desc, node.params
    ins = [_tensor_source(t) for t in desc.input_tensors]
    outs = [_tensor_source(t) for t in desc.output_tensors]
    if node.kind == "slice":
        return (
            f"cd.SliceOperatorDesc({ins[0]}, {outs[0]}, {list(p['offsets'])}, {list(p['sizes'])}, {list(p['strides'])})"
        )
    if node.kind in ("slice1", "slice_grad"):
        name = "Slice1OperatorDesc" if node.kind == "slice1" else "SliceGradOperatorDesc"
        return f"cd.{name}({ins[0]}, {outs[0]}, {list(p['offsets'])}, {list(p['sizes'])}, {list(p['strides'])})"
    if node.kind == "split":
        return f"cd.SplitOperatorDesc({ins[0]}, [{', '.join(outs)}], {p['axis']})"
    return f"cd.JoinOperatorDesc([{', '.join(ins)}], {outs[0]}, {p['axis']})"


def _source(drawn):
    by_index = sorted(range(len(drawn.nodes)), key=lambda n: drawn.node_at[n])
    lines = ["T = cd.TensorDataType", "nodes = ["]
    lines += [f"    {_node_source(drawn.nodes[n])}," for n in by_index]
    ins, mids, outs = drawn.edges()
    lines += [
        "]",
        f"graph = GraphDesc({len(drawn.inputs)}, {len(drawn.outputs)}, nodes,",
        f"    [GraphInputEdge(*e) for e in {ins}],",
        f"    [GraphOutputEdge(*e) for e in {outs}],",
        f"    [GraphIntermediateEdge(*e) for e in {mids}])",
        f"# bindings: inputs {drawn.input_bindings}"
        + (f" in one buffer ({drawn.shared_inputs})" if drawn.shared_inputs else "")
        + ", "
        f"outputs {drawn.output_bindings}; data seed {drawn.seed}",
    ]
    return "\n".join(lines)


def oracle(drawn, input_values):
    """The graph outputs (drawing order), from the graph inputs' values (drawing order): each
    node in drawing order (its inputs were drawn before it), in NumPy."""
    values = {("input", g): v for g, v in enumerate(input_values)}
    for n, node in enumerate(drawn.nodes):
        xs = []
        for ref, desc in node.inputs:
            x = values[ref]
            if x.shape != tuple(desc.sizes):  # a reshape edge: the packed buffer re-described
                x = x.reshape(desc.sizes)
            xs.append(x)
        p, outs = node.params, node.desc.output_tensors
        if node.kind == "slice":
            results = [oracle_slice(xs[0], p)]
        elif node.kind == "slice1":
            results = [oracle_slice1(xs[0], p, outs[0].sizes)]
        elif node.kind == "slice_grad":
            results = [oracle_slice_grad(xs[0], p, outs[0].sizes)]
        elif node.kind == "split":
            results = oracle_split(xs[0], p)
        else:
            results = [oracle_join(xs, p)]
        for k, (result, out) in enumerate(zip(results, outs)):
            assert result.shape == tuple(out.sizes), (node.kind, result.shape, out.sizes)  # the oracle's own check
            values[("node", n, k)] = result
    return [values[ref] for ref in drawn.outputs]


# ---- the strategy ---------------------------------------------------------------------------------


def _factorised(draw, count, rank):
    """Sizes of ``rank`` dimensions whose product is ``count``."""
    sizes = [1] * rank
    rest, p = count, 2
    while rest > 1:
        while rest % p == 0:
            sizes[draw(st.integers(0, rank - 1))] *= p
            rest //= p
        p += 1
    return tuple(sizes)


def _along(sizes, axis, n):
    """``sizes`` with ``n`` along ``axis``."""
    return (*sizes[:axis], n, *sizes[axis + 1 :])


def _composition(draw, total, parts):
    """``parts`` positive sizes summing to ``total``."""
    if parts == 1:
        return [total]
    cuts = sorted(draw(st.lists(st.integers(1, total - 1), min_size=parts - 1, max_size=parts - 1, unique=True)))
    bounds = [0, *cuts, total]
    return [b - a for a, b in itertools.pairwise(bounds)]


class _Builder:
    """Draws a graph node by node: each node reads values already drawn (graph inputs, made on
    demand, and node outputs), so drawing order is an order the oracle can run in."""

    def __init__(self, draw, main_type, reshapes, rows):
        self.draw, self.main_type, self.reshapes, self.rows = draw, main_type, reshapes, rows
        self.most = ROWS_MAX_ELEMENTS if rows else MAX_ELEMENTS
        self.patterns = ["rows"] if rows else []
        self.inputs = []  # graph input descs
        self.nodes = []
        self.values = []  # (ref, desc) of every node output

    # -- tensors

    def sizes(self, data_type):
        draw = self.draw
        rank = draw(st.integers(1, 5))
        sizes = [draw(st.integers(1, 4)) for _ in range(rank)]
        if self.rows:  # rows of at least 16 bytes
            sizes[-1] = draw(st.integers(-(-16 // data_type.element_size), 24))
        while math.prod(sizes) > self.most:
            sizes[sizes.index(max(sizes))] -= 1
        return tuple(sizes)

    def layout(self, data_type, sizes, output):
        """A tensor desc of ``sizes``: packed, or padded and perhaps transposed; graph inputs
        may broadcast (zero strides). Size-1 dimensions may take any stride, even on outputs."""
        draw = self.draw
        kinds = ["packed", "packed", "packed", "explicit", "padded", "transposed"]
        kind = draw(st.sampled_from(kinds if output else [*kinds, "broadcast"]))
        rank = len(sizes)
        strides = None
        if kind == "explicit":
            strides = _packed_strides(sizes)
        elif kind != "packed":
            order = list(reversed(range(rank)))  # innermost first
            if kind != "padded":
                order = order[:1] + draw(st.permutations(order[1:])) if self.rows else draw(st.permutations(order))
            strides, step = [0] * rank, 1
            for d in order:
                strides[d] = step
                step = step * sizes[d] + draw(st.integers(0, 2)) * draw(st.sampled_from([1, step]))
            for d in range(rank):
                if self.rows and d == rank - 1:
                    continue  # rows stay contiguous
                if sizes[d] == 1 and draw(st.integers(0, 3)) == 0:
                    strides[d] = draw(st.sampled_from([0, 7, 1000]))
                elif kind == "broadcast" and draw(st.booleans()):
                    strides[d] = 0
        desc = cd.BufferTensorDesc(data_type, sizes, strides)
        extra = draw(st.sampled_from([0, 0, 0, 4, 13, 40]))
        alignment = draw(st.sampled_from([0, 0, 0, data_type.element_size, 16, 64]))
        if extra or alignment:
            desc = cd.BufferTensorDesc(
                data_type,
                sizes,
                strides,
                total_tensor_size_in_bytes=desc.total_tensor_size_in_bytes + extra,
                guaranteed_base_offset_alignment=alignment,
            )
        return desc

    def redescribed(self, desc):
        """``desc``, or at times its layout with another ``TotalTensorSizeInBytes`` and base
        offset alignment (the edge rules look at data type, sizes and strides only)."""
        draw = self.draw
        if draw(st.integers(0, 4)):
            return desc
        minimum = cd.BufferTensorDesc(desc.data_type, desc.sizes, desc.strides).total_tensor_size_in_bytes
        return cd.BufferTensorDesc(
            desc.data_type,
            desc.sizes,
            desc.strides,
            total_tensor_size_in_bytes=minimum + draw(st.sampled_from([0, 8, 100])),
            guaranteed_base_offset_alignment=draw(st.sampled_from([0, desc.data_type.element_size, 32, 128])),
        )

    def new_input(self, data_type, sizes=None):
        desc = self.layout(data_type, sizes or self.sizes(data_type), output=False)
        self.inputs.append(desc)
        return ("input", len(self.inputs) - 1), desc

    # -- a node's inputs

    def source(self):
        """``(ref, desc)`` for a node's first input: a node output (at times re-described with
        other sizes), a graph input already drawn, or a new one (of the graph's main data type,
        or at times another)."""
        draw = self.draw
        outputs = self.values
        inputs = [(("input", g), d) for g, d in enumerate(self.inputs)]
        kinds = ["new"] + ["input"] * bool(inputs) + ["node"] * 3 * bool(outputs)
        kind = draw(st.sampled_from(kinds))
        if kind == "node":
            ref, desc = draw(st.sampled_from(outputs))
            if self.reshapes and _packed(desc) and draw(st.integers(0, 3)) == 0:  # a reshape edge
                sizes = _factorised(draw, desc.element_count, draw(st.integers(1, 5)))
                if self.rows and sizes[-1] * desc.data_type.element_size < 16:
                    return ref, desc  # keep the rows
                desc = cd.BufferTensorDesc(
                    desc.data_type, sizes, _packed_strides(sizes) if draw(st.booleans()) else None
                )
            else:
                desc = self.redescribed(desc)
            return ref, desc
        if kind == "input":
            ref, desc = draw(st.sampled_from(inputs))
            return ref, self.redescribed(desc)
        return self.new_input(self.main_type if draw(st.integers(0, 4)) else draw(st.sampled_from(TYPES)))

    def part(self, first, axis):
        """``(ref, desc)`` of a JOIN input beside ``first``: the sizes of ``first`` except
        along ``axis``. A node output or graph input of such sizes, a packed node output
        re-described to them, ``first`` itself, or a new graph input."""
        draw = self.draw
        sizes, data_type = first[1].sizes, first[1].data_type
        rest = math.prod(sizes) // sizes[axis]

        def fits(desc):
            return (
                desc.data_type == data_type
                and len(desc.sizes) == len(sizes)
                and all(a == b for d, (a, b) in enumerate(zip(desc.sizes, sizes)) if d != axis)
            )

        same = [v for v in self.values if fits(v[1])]
        same += [(("input", g), d) for g, d in enumerate(self.inputs) if fits(d)]
        reshaped = []
        for ref, desc in self.values:
            count = desc.element_count
            if desc.data_type == data_type and _packed(desc) and count % rest == 0:
                along = count // rest
                if along <= (24 if self.rows else MAX_SIZE):
                    new = _along(sizes, axis, along)
                    reshaped.append((ref, cd.BufferTensorDesc(data_type, new)))
        kinds = ["new", "first"] + ["same"] * 2 * bool(same) + ["reshaped"] * bool(reshaped and self.reshapes)
        kind = draw(st.sampled_from(kinds))
        if kind == "same":
            return draw(st.sampled_from(same))
        if kind == "reshaped":
            return draw(st.sampled_from(reshaped))
        if kind == "first":
            return first
        new = _along(sizes, axis, draw(st.integers(1, 24 if self.rows and axis == len(sizes) - 1 else 4)))
        return self.new_input(data_type, new)

    # -- nodes

    def long(self, d, rank, most):
        """The fewest elements a slice takes along dimension ``d``: in a graph of rows, most of
        a row."""
        return max(1, most - 2) if self.rows and d == rank - 1 else 1

    def axis(self, rank):
        """A SPLIT's or JOIN's axis: in a graph of rows, seldom the rows' own."""
        if self.rows and rank > 1 and self.draw(st.integers(0, 3)):
            return self.draw(st.integers(0, rank - 2))
        return self.draw(st.integers(0, rank - 1))

    def add_node(self):
        draw = self.draw
        kind = draw(st.sampled_from(ROWS_OPERATORS if self.rows else OPERATORS))
        first = self.source()
        x = first[1]
        data_type, sizes = x.data_type, x.sizes
        rank = len(sizes)
        out = []  # output sizes
        if kind == "slice_grad":
            offsets, windows, strides, whole = [], [], [], []
            for n in sizes:
                step = draw(st.sampled_from([1, -1, 2, -2, -3]))
                if 1 + (n - 1) * abs(step) + 4 > MAX_SIZE:
                    step = 1 if step > 0 else -1
                window = 1 + (n - 1) * abs(step) + draw(st.integers(0, abs(step) - 1 + (n == 1)))
                offset = draw(st.integers(0, 2))
                whole.append(min(MAX_SIZE, offset + window + draw(st.integers(0, 2))))
                offset = min(offset, whole[-1] - window)
                offsets.append(offset), windows.append(window), strides.append(step)
            if math.prod(whole) > self.most or any(n > MAX_SIZE for n in sizes):
                kind = "slice"  # keeps the tensors small
            else:
                params = {"offsets": offsets, "sizes": windows, "strides": strides}
                out = [tuple(whole)]
        if kind == "join":
            axis = self.axis(rank)
            count = draw(st.integers(1, 4))
            drawn_inputs = len(self.inputs)
            parts = [self.part(first, axis) for _ in range(count - 1)]
            parts.insert(draw(st.integers(0, len(parts))), first)
            total = sum(d.sizes[axis] for _, d in parts)
            whole = _along(sizes, axis, total)
            if math.prod(whole) > self.most:
                kind = "slice"
                del self.inputs[drawn_inputs:]  # the parts' new graph inputs: no edge will read them
            else:
                inputs, params, out = parts, {"axis": axis}, [whole]
        if kind == "slice":
            offsets, counts, strides = [], [], []
            for d, n in enumerate(sizes):
                step = 1 if self.rows and d == rank - 1 else draw(st.sampled_from([1, 1, 2, 3, 0]))
                if step == 0:  # one element, repeated
                    count = draw(st.integers(1, 3))
                    offset = draw(st.integers(0, n - 1))
                else:
                    most = 1 + (n - 1) // step
                    count = draw(st.integers(self.long(d, rank, most), most))
                    offset = draw(st.integers(0, n - 1 - step * (count - 1)))
                offsets.append(offset), counts.append(count), strides.append(step)
            while math.prod(counts) > self.most:
                d = counts.index(max(counts))
                counts[d] -= 1
            params, out = {"offsets": offsets, "sizes": counts, "strides": strides}, [tuple(counts)]
        elif kind == "slice1":
            offsets, windows, strides, counts = [], [], [], []
            for d, n in enumerate(sizes):
                step = 1 if self.rows and d == rank - 1 else draw(st.sampled_from([1, -1, 2, -2, 3, -3]))
                window = draw(st.integers(self.long(d, rank, n), n))
                offset = draw(st.integers(0, n - window))
                most = 1 + (window - 1) // abs(step)
                count = draw(st.integers(self.long(d, rank, most), most))
                offsets.append(offset), windows.append(window), strides.append(step), counts.append(count)
            params, out = {"offsets": offsets, "sizes": windows, "strides": strides}, [tuple(counts)]
        elif kind == "split":
            axis = self.axis(rank)
            parts = _composition(draw, sizes[axis], draw(st.integers(1, min(4, sizes[axis]))))
            params = {"axis": axis, "parts": parts}
            out = [_along(sizes, axis, n) for n in parts]
        if kind != "join":
            inputs = [first]
        self.emit(kind, inputs, params, [self.layout(data_type, s, output=True) for s in out])

    def emit(self, kind, inputs, params, outs):
        """Add a node of ``kind`` reading ``inputs`` (``(ref, desc)`` each) into tensors ``outs``;
        returns the ``(ref, desc)`` of its outputs."""
        ins = [d for _, d in inputs]
        if kind == "slice":
            desc = cd.SliceOperatorDesc(ins[0], outs[0], params["offsets"], params["sizes"], params["strides"])
        elif kind == "slice1":
            desc = cd.Slice1OperatorDesc(ins[0], outs[0], params["offsets"], params["sizes"], params["strides"])
        elif kind == "slice_grad":
            desc = cd.SliceGradOperatorDesc(ins[0], outs[0], params["offsets"], params["sizes"], params["strides"])
        elif kind == "split":
            desc = cd.SplitOperatorDesc(ins[0], outs, params["axis"])
        else:
            desc = cd.JoinOperatorDesc(ins, outs[0], params["axis"])
        n = len(self.nodes)
        self.nodes.append(Node(kind, list(inputs), params, desc))
        made = [(("node", n, k), t) for k, t in enumerate(outs)]
        self.values += made
        return made

    # -- patterns of several nodes, which the compiler folds or cancels

    def add_pattern(self, budget):
        """Focus (SLICEs of one tensor at every phase of a stride, joined), a SPLIT whose parts
        are joined in another order (with a budget of 4, at times read on through two reshape
        edges), or a crop (SLICE1) padded back by SLICE_GRAD with its window. At most
        ``budget`` nodes (3 or more)."""
        draw = self.draw
        refold = budget >= 4 and self.reshapes and not self.rows
        pattern = draw(st.sampled_from(["focus", "rejoin", "crop and pad", *["refold"] * refold]))
        self.patterns.append(pattern)
        first = self.source()
        x = first[1]
        sizes, rank, data_type = x.sizes, len(x.sizes), x.data_type
        if pattern == "focus":
            steps = [draw(st.sampled_from([1, 2, 2, 3])) if n > 1 else 1 for n in sizes]
            steps = [min(step, n) for step, n in zip(steps, sizes)]
            counts = [n // step for n, step in zip(sizes, steps)]
            phases = list(itertools.product(*[range(step) for step in steps]))
            phases = draw(st.permutations(phases))[: draw(st.integers(1, min(8, budget - 1, len(phases))))]
            outs = []
            for offsets in phases:
                params = {"offsets": list(offsets), "sizes": counts, "strides": steps}
                outs += self.emit("slice", [first], params, [self.layout(data_type, tuple(counts), output=True)])
            axis = draw(st.integers(0, rank - 1))
            whole = _along(tuple(counts), axis, counts[axis] * len(outs))
            if math.prod(whole) <= self.most:
                self.emit("join", outs, {"axis": axis}, [self.layout(data_type, whole, output=True)])
            return
        if pattern in ("rejoin", "refold"):
            # (refold: along a dimension of 3 or more that an outer one repeats, a part of 2 or more)
            inner = [d for d in range(1, rank) if sizes[d] >= 3 and math.prod(sizes[:d]) > 1]
            if pattern == "refold" and not inner:
                pattern = self.patterns[-1] = "rejoin"
            axis = draw(st.sampled_from(inner)) if pattern == "refold" else self.axis(rank)
            n = sizes[axis]
            count = draw(st.integers(2, min(4, n - 1)) if pattern == "refold" else st.integers(1, min(4, n)))
            parts = _composition(draw, n, count)
            outs = [self.layout(data_type, _along(sizes, axis, part), output=True) for part in parts]
            made = self.emit("split", [first], {"axis": axis, "parts": parts}, outs)
            out = cd.BufferTensorDesc(data_type, sizes) if pattern == "refold" else self.layout(data_type, sizes, True)
            (joined,) = self.emit("join", draw(st.permutations(made)), {"axis": axis}, [out])
            if pattern == "refold":
                self.refold(joined, axis)
            return
        offsets, windows, strides, counts = [], [], [], []
        for n in sizes:
            step = draw(st.sampled_from([1, -1, 2, -2]))
            window = draw(st.integers(1, n))
            offsets.append(draw(st.integers(0, n - window))), windows.append(window), strides.append(step)
            counts.append(1 + (window - 1) // abs(step))
        window = {"offsets": offsets, "sizes": windows, "strides": strides}
        (crop,) = self.emit("slice1", [first], window, [self.layout(data_type, tuple(counts), output=True)])
        self.emit("slice_grad", [crop], window, [self.layout(data_type, sizes, output=True)])

    def refold(self, value, axis):
        """Two SLICE1s reading the packed ``value``, joined along ``axis``, on through reshape
        edges: the first's rows hold whole rows of ``axis`` and more, so the join's parts (some
        of 2 or more elements) are pieces with extra axes, which it keeps (reading all, in
        order); the second's rows, where some count allows, neither divide nor are divided by
        the first's (no common refinement)."""
        draw, data_type, sizes = self.draw, value[1].data_type, value[1].sizes
        count, row = value[1].element_count, math.prod(sizes[axis:])
        outer = math.prod(sizes[:axis])
        row *= draw(st.sampled_from([f for f in range(2, outer + 1) if outer % f == 0]))
        crossing = [q for q in range(2, count) if count % q == 0 and q % row and row % q]
        second = draw(st.sampled_from(crossing)) if crossing else row
        for shape, steps in (((count // row, row), (1, 1)), ((count // second, second), (-1, 1))):
            window = {"offsets": [0, 0], "sizes": list(shape), "strides": list(steps)}
            edge = (value[0], cd.BufferTensorDesc(data_type, shape))
            (value,) = self.emit("slice1", [edge], window, [cd.BufferTensorDesc(data_type, shape)])

    def graph_outputs(self, dead_nodes):
        """Per graph output, the node output it reads: every node whose outputs no node reads
        gives at least one (or, with ``dead_nodes``, at times none); any output may give more."""
        draw = self.draw
        read = {ref for node in self.nodes for ref, _ in node.inputs}
        outputs = []
        for n, node in enumerate(self.nodes):
            refs = [("node", n, k) for k in range(len(node.desc.output_tensors))]
            sink = not any(ref in read for ref in refs)
            chosen = [ref for ref in refs if draw(st.integers(0, 4)) == 0]
            if sink and not chosen and not (dead_nodes and draw(st.integers(0, 9)) == 0):
                chosen = [draw(st.sampled_from(refs))]
            for ref in chosen:
                outputs += [ref] * draw(st.sampled_from([1, 1, 1, 2]))
        if not outputs:
            outputs = [draw(st.sampled_from([v[0] for v in self.values]))]
        return outputs


def _binding(draw, output):
    """How one graph input or output is bound: ``(form, offset in 16-byte steps, slack bytes)``.
    Forms: the buffer array itself, a ``BufferBinding`` of a range (or of the rest of the
    buffer), or a slice of a larger buffer (as bytes or as 32-bit words)."""
    forms = ["range", "range", "rest", "slice", "words"] + ([] if output else ["array"])
    return draw(st.sampled_from(forms)), draw(st.integers(0, 3)), draw(st.sampled_from([0, 0, 4, 16, 37]))


@st.composite
def graphs(draw, max_nodes=12, dead_nodes=True, reshapes=True):
    """A random valid graph (a ``Drawn``) of 1 to ``max_nodes`` nodes; ``dead_nodes``: some
    nodes may feed nothing; ``reshapes``: intermediate edges may re-describe packed tensors.
    One graph in four moves rows: innermost dimensions of 16 bytes or more, contiguous on
    both sides (the row kernels' cases), and no SLICE_GRAD."""
    builder = _Builder(draw, draw(st.sampled_from(TYPES)), reshapes, rows=draw(st.integers(0, 3)) == 0)
    wanted = draw(st.integers(1, max_nodes))
    while len(builder.nodes) < wanted:
        if wanted - len(builder.nodes) > 2 and draw(st.integers(0, 4)) == 0:
            builder.add_pattern(wanted - len(builder.nodes))
        else:
            builder.add_node()
    outputs = builder.graph_outputs(dead_nodes)
    nodes, inputs = builder.nodes, builder.inputs
    read = [(ref, n) for n, node in enumerate(nodes) for ref, _ in node.inputs]
    counts = (  # input, intermediate and output edges
        sum(ref[0] == "input" for ref, _ in read),
        sum(ref[0] == "node" for ref, _ in read),
        len(outputs),
    )
    return Drawn(
        inputs=inputs,
        nodes=nodes,
        outputs=outputs,
        node_at=draw(st.permutations(range(len(nodes)))),
        input_at=draw(st.permutations(range(len(inputs)))),
        output_at=draw(st.permutations(range(len(outputs)))),
        edge_orders=tuple(draw(st.permutations(range(c))) for c in counts),
        bare=[draw(st.booleans()) for _ in nodes],
        names=draw(st.booleans()),
        input_bindings=[_binding(draw, False) for _ in inputs],
        output_bindings=[_binding(draw, True) for _ in outputs],
        shared_inputs=draw(st.sampled_from(["", "", "", "", "disjoint", "overlapping"])) if len(inputs) > 1 else "",
        seed=draw(st.integers(0, 2**32 - 1)),
        patterns=tuple(builder.patterns),
    )


# ---- running a graph on bound buffers -------------------------------------------------------------


def _elements(raw, offset, desc):
    """A view of ``desc``'s elements at byte ``offset`` of the host byte array ``raw``, as
    unsigned integers of the element size."""
    size = desc.data_type.element_size
    typed = raw[offset : offset + _span(desc) * size].view(_unsigned(desc.data_type))
    return np.lib.stride_tricks.as_strided(typed, shape=desc.sizes, strides=[s * size for s in _strides(desc)])


def _alignment(desc):
    return max(16, desc.guaranteed_base_offset_alignment)


def _place(desc, how, lead):
    """``(offset, bound length, buffer length)`` of a tensor bound as ``how`` says, at least
    ``lead`` bytes into its buffer."""
    form, steps, slack = how
    align = _alignment(desc)
    offset = 0 if form == "array" else -(-lead // align) * align + steps * align
    length = desc.total_tensor_size_in_bytes + slack
    if form == "words":
        length = -(-length // 4) * 4
    return offset, length, offset + length + (0 if form == "array" else CANARY)


def _bind(xp, raw, offset, length, form):
    if form == "array":
        return raw
    if form == "rest":
        return cd.BufferBinding(raw, offset)
    if form == "range":
        return cd.BufferBinding(raw, offset, length)
    piece = raw[offset : offset + length]
    return piece.view(np.uint32) if form == "words" else piece


def _to_device(xp, host):
    if xp is np:
        return host
    device = aligned_empty(host.size, xp)
    device[...] = xp.asarray(host)
    return device


def execute(xp, graph, values=None, *, rng=None, input_bindings=None, output_bindings=None, shared_inputs=""):
    """Run ``graph`` on ``xp`` memory. Graph inputs hold ``values`` (per input, in GraphDesc
    order) or, with ``rng``, random bytes; ``shared_inputs`` binds them all in one buffer, at
    ``"disjoint"`` or ``"overlapping"`` ranges (inputs may share bytes; where they do, the
    value written last is what both hold). Checks that no input byte changed and that every
    byte of the output buffers that is not an output element still holds poison.

    Returns ``(inputs, outputs)``: the elements of each graph input and output (host arrays
    of unsigned integers of the element size), in GraphDesc order.
    """
    in_descs, out_descs = graph.input_tensors, graph.output_tensors
    input_bindings = input_bindings or [("range", 1, 0)] * len(in_descs)
    output_bindings = output_bindings or [("range", 1, 16)] * len(out_descs)
    if shared_inputs:  # each input a range of one buffer
        input_bindings = [("range", *how[1:]) if how[0] == "array" else how for how in input_bindings]

    # Inputs: padding bytes, the elements written through each tensor's layout (where strides
    # alias one element, the last value written is the element's value: read back below).
    places, lead = [], 0
    for desc, how in zip(in_descs, input_bindings):
        offset, length, end = _place(desc, how, lead)
        places.append((offset, length, end))
        if shared_inputs == "disjoint":
            lead = end
    raws = []
    if shared_inputs:
        shared = aligned_empty(max(end for _, _, end in places))
        shared[...] = INPUT_PADDING
    for k, (desc, (offset, _, end)) in enumerate(zip(in_descs, places)):
        raw = shared if shared_inputs else aligned_empty(end)
        if not shared_inputs:
            raw[...] = INPUT_PADDING
        view = _elements(raw, offset, desc)
        if values is None:
            data = rng.choice(DATA_BYTES, view.size * view.itemsize).view(view.dtype).reshape(view.shape)
        else:
            data = np.asarray(values[k]).view(view.dtype)
        view[...] = data
        raws.append(raw)
    inputs = [_elements(raw, offset, desc).copy() for raw, desc, (offset, _, _) in zip(raws, in_descs, places)]
    host_inputs = [shared] if shared_inputs else raws
    before = [raw.copy() for raw in host_inputs]
    device_inputs = [_to_device(xp, raw) for raw in host_inputs]
    in_bound = [
        _bind(xp, device_inputs[0 if shared_inputs else k], offset, length, how[0])
        for k, (how, (offset, length, _)) in enumerate(zip(input_bindings, places))
    ]

    # Outputs: poisoned buffers with canaries before and after the bound range.
    out_raws, out_places, out_bound = [], [], []
    for desc, how in zip(out_descs, output_bindings):
        offset, length, end = _place(desc, how, CANARY)
        raw = aligned_empty(end, xp)
        raw[...] = POISON
        out_raws.append(raw)
        out_places.append(offset)
        out_bound.append(_bind(xp, raw, offset, length, how[0]))

    graph.compile().execute(in_bound, out_bound)

    for k, (raw, was) in enumerate(zip(device_inputs, before)):
        assert np.array_equal(to_host(raw), was), f"the call wrote into graph input buffer {k}"
    outputs = []
    for o, (raw, offset, desc) in enumerate(zip(out_raws, out_places, out_descs)):
        host = np.array(to_host(raw))
        got = _elements(host, offset, desc).copy()
        outputs.append(got)
        poisoned = np.full_like(host, POISON)
        _elements(poisoned, offset, desc)[...] = got
        stray = np.flatnonzero(poisoned != host)
        assert not stray.size, (
            f"graph output {o}: {stray.size} bytes outside its elements changed, at byte offsets "
            f"{(stray - offset).tolist()[:12]} from element 0 (desc {desc})"
        )
    return inputs, outputs


def _pruned(drawn, o):
    """The part of ``drawn`` that graph output ``o`` (drawing order) reads: its producer and
    what feeds it, as the only graph output, in drawing order and bound plainly (the smaller
    case a failure reports)."""
    keep, todo = set(), [drawn.outputs[o][1]]
    while todo:
        n = todo.pop()
        if n not in keep:
            keep.add(n)
            todo += [ref[1] for ref, _ in drawn.nodes[n].inputs if ref[0] == "node"]
    kept = sorted(keep)
    node_map = {n: k for k, n in enumerate(kept)}
    used = sorted({ref[1] for n in kept for ref, _ in drawn.nodes[n].inputs if ref[0] == "input"})
    input_map = {g: k for k, g in enumerate(used)}

    def moved(ref):
        return ("input", input_map[ref[1]]) if ref[0] == "input" else ("node", node_map[ref[1]], ref[2])

    nodes = [Node(node.kind, [(moved(ref), d) for ref, d in node.inputs], node.params, node.desc) for node in
             (drawn.nodes[n] for n in kept)]  # fmt: skip
    counts = (
        sum(ref[0] == "input" for node in nodes for ref, _ in node.inputs),
        sum(ref[0] == "node" for node in nodes for ref, _ in node.inputs),
        1,
    )
    return Drawn(
        inputs=[drawn.inputs[g] for g in used],
        nodes=nodes,
        outputs=[moved(drawn.outputs[o])],
        node_at=list(range(len(nodes))),
        input_at=list(range(len(used))),
        output_at=[0],
        edge_orders=tuple(list(range(c)) for c in counts),
        bare=[True] * len(nodes),
        names=False,
        input_bindings=[("range", 0, 0)] * len(used),
        output_bindings=[("range", 0, 0)],
        shared_inputs="",
        seed=drawn.seed,
    )


def _compare(xp, drawn):
    """Run ``drawn`` and compare with the oracle: None, or what differs."""
    graph = drawn.graph()
    assert tuple(graph.input_tensors) == tuple(drawn.graph_input_descs())
    assert tuple(graph.output_tensors) == tuple(drawn.graph_output_descs())
    inputs, outputs = execute(
        xp,
        graph,
        rng=np.random.default_rng(drawn.seed),
        input_bindings=drawn.input_bindings,
        output_bindings=drawn.output_bindings,
        shared_inputs=drawn.shared_inputs,
    )
    in_drawing_order = [inputs[drawn.input_at[g]] for g in range(len(drawn.inputs))]
    want = oracle(drawn, in_drawing_order)
    for o, expected in enumerate(want):
        got = outputs[drawn.output_at[o]]
        expected = expected.view(got.dtype)
        if not np.array_equal(got, expected):
            wrong = np.argwhere(got != expected)
            return o, (
                f"graph output {drawn.output_at[o]} (node output {drawn.outputs[o][1:]} in drawing order): "
                f"{len(wrong)} of {got.size} elements differ, first at {tuple(int(i) for i in wrong[0])}: "
                f"got {got[tuple(wrong[0])]:#x}, want {expected[tuple(wrong[0])]:#x}"
            )
    return None


def _features(drawn):
    """What a drawn graph holds, for ``--hypothesis-show-statistics``."""
    nodes = len(drawn.nodes)
    inputs = len(drawn.inputs)
    found = {
        f"{nodes // 4 * 4 or 1}-{nodes // 4 * 4 + 3} nodes",
        f"{'1 graph input' if inputs == 1 else '2-3 graph inputs' if inputs < 4 else '4+ graph inputs'}",
    }
    found |= {node.kind for node in drawn.nodes} | {f"pattern: {p}" for p in drawn.patterns}
    produced = {("node", n, k): t for n, node in enumerate(drawn.nodes) for k, t in enumerate(node.desc.output_tensors)}
    reads = {}
    for node in drawn.nodes:
        for ref, desc in node.inputs:
            reads[ref] = reads.get(ref, 0) + 1
            if ref[0] == "node" and tuple(desc.sizes) != tuple(produced[ref].sizes):
                found.add("reshape edge")
            if ref[0] == "input" and desc.strides is not None and 0 in desc.strides:
                found.add("zero-stride graph input")
        if node.kind == "slice" and 0 in node.params["strides"]:
            found.add("SLICE stride 0")
        if node.kind in ("slice1", "slice_grad") and min(node.params["strides"]) < 0:
            found.add(f"{node.kind} negative stride")
    outputs = set(drawn.outputs)
    if any(reads.get(ref, 0) > 1 for ref in produced):
        found.add("node output read twice")
    if any(ref not in reads and ref not in outputs for ref in produced):
        found.add("node output unused")
    used = set(reads) | outputs
    if any(not any(ref in used for ref in produced if ref[1] == n) for n in range(nodes)):
        found.add("dead node")
    if len(set(drawn.outputs)) < len(drawn.outputs):
        found.add("one node output, two graph outputs")
    if any(produced[ref].strides not in (None, _packed_strides(produced[ref].sizes)) for ref in outputs):
        found.add("strided graph output")
    found |= {f"{size}-byte elements" for size in {t.data_type.element_size for t in produced.values()}}
    if len({t.data_type for t in produced.values()}) > 1:
        found.add("two data types")
    return found


def _check_graph(xp, drawn):
    note(drawn.text())
    for feature in sorted(_features(drawn)):
        event(feature)
    found = _compare(xp, drawn)
    if found is not None:
        o, what = found
        part = _pruned(drawn, o)
        try:
            again = _compare(xp, part)
        except Exception as e:  # (reported beside the failure it narrows)
            again = (0, f"{type(e).__name__}: {e}")
        if again is None:
            raise AssertionError(what)
        raise AssertionError(f"{what}\nThe nodes that output reads fail alone ({again[1]}):\n{part.text()}")


SHORT = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LONG = settings(
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@SHORT
@given(drawn=graphs())
def test_random_graphs_match_the_oracle(xp, drawn):
    _check_graph(xp, drawn)


@pytest.mark.fuzz
@LONG
@given(drawn=graphs())
def test_many_random_graphs_match_the_oracle(xp, drawn):
    _check_graph(xp, drawn)


# ---- graphs with known answers --------------------------------------------------------------------

U8, I32 = T.UINT8, T.INT32


def _t(data_type, sizes, strides=None):
    return cd.BufferTensorDesc(data_type, sizes, strides)


def test_focus_space_to_depth(xp):
    """YOLOv5's Focus: four stride-2 SLICEs of one input, JOINed along channels."""
    x = np.arange(1, 17, dtype=np.int32).reshape(1, 1, 4, 4)
    corners = [(0, 0), (1, 0), (0, 1), (1, 1)]
    slices = [
        cd.SliceOperatorDesc(_t(I32, (1, 1, 4, 4)), _t(I32, (1, 1, 2, 2)), [0, 0, r, c], [1, 1, 2, 2], [1, 1, 2, 2])
        for r, c in corners
    ]
    join = cd.JoinOperatorDesc([_t(I32, (1, 1, 2, 2))] * 4, _t(I32, (1, 4, 2, 2), (40, 8, 3, 1)), 1)  # padded
    graph = GraphDesc(
        1,
        1,
        [*slices, join],
        [GraphInputEdge(0, k, 0) for k in range(4)],
        [GraphOutputEdge(4, 0, 0)],
        [GraphIntermediateEdge(k, 0, 4, k) for k in range(4)],
    )
    _, (got,) = execute(xp, graph, [x])
    want = [[[1, 3], [9, 11]], [[5, 7], [13, 15]], [[2, 4], [10, 12]], [[6, 8], [14, 16]]]
    assert got.view(np.int32).tolist() == [want]


def test_split_then_join_reversed(xp):
    x = np.arange(1, 13, dtype=np.uint8).reshape(6, 2)
    split = cd.SplitOperatorDesc(_t(U8, (6, 2)), [_t(U8, (1, 2)), _t(U8, (2, 2)), _t(U8, (3, 2))], 0)
    join = cd.JoinOperatorDesc([_t(U8, (3, 2)), _t(U8, (2, 2)), _t(U8, (1, 2))], _t(U8, (6, 2)), 0)
    graph = GraphDesc(
        1,
        1,
        [GraphNode(join, name="join"), GraphNode(split, name="split")],  # not in running order
        [GraphInputEdge(0, 1, 0)],
        [GraphOutputEdge(0, 0, 0)],
        [GraphIntermediateEdge(1, 2, 0, 0), GraphIntermediateEdge(1, 1, 0, 1), GraphIntermediateEdge(1, 0, 0, 2)],
    )
    _, (got,) = execute(xp, graph, [x])
    assert got.tolist() == [[7, 8], [9, 10], [11, 12], [3, 4], [5, 6], [1, 2]]


def test_pad_of_a_crop(xp):
    """SLICE1 crops the centre (backwards along columns); SLICE_GRAD pads it back with zeros,
    into an output with a padded layout."""
    x = np.arange(1, 17, dtype=np.int32).reshape(4, 4)
    crop = cd.Slice1OperatorDesc(_t(I32, (4, 4)), _t(I32, (2, 2)), [1, 1], [2, 2], [1, -1])
    pad = cd.SliceGradOperatorDesc(_t(I32, (2, 2)), _t(I32, (4, 5), (7, 1)), [1, 2], [2, 2], [1, 1])
    graph = GraphDesc(
        1, 2, [crop, pad], [GraphInputEdge(0, 0, 0)], [GraphOutputEdge(1, 0, 0), GraphOutputEdge(0, 0, 1)],
        [GraphIntermediateEdge(0, 0, 1, 0)],
    )  # fmt: skip
    _, (padded, cropped) = execute(xp, graph, [x])
    assert cropped.view(np.int32).tolist() == [[7, 6], [11, 10]]
    assert padded.view(np.int32).tolist() == [[0, 0, 0, 0, 0], [0, 0, 7, 6, 0], [0, 0, 11, 10, 0], [0, 0, 0, 0, 0]]


def test_two_slice_grads_in_a_row(xp):
    """[a, b] spread to [a, 0, b, 0], then placed backwards from index 4 of 6: zeros come in
    from both gradients."""
    a, b = 0x11223344, 0x55667788
    first = cd.SliceGradOperatorDesc(_t(I32, (2,)), _t(I32, (4,)), [0], [4], [2])
    second = cd.SliceGradOperatorDesc(_t(I32, (4,)), _t(I32, (6,)), [1], [4], [-1])
    graph = GraphDesc(
        1, 2, [first, second], [GraphInputEdge(0, 0, 0)], [GraphOutputEdge(1, 0, 0), GraphOutputEdge(0, 0, 1)],
        [GraphIntermediateEdge(0, 0, 1, 0)],
    )  # fmt: skip
    _, (twice, once) = execute(xp, graph, [np.array([a, b], np.int32)])
    assert once.tolist() == [a, 0, b, 0]
    assert twice.tolist() == [0, 0, b, 0, a, 0]


def test_a_reshape_edge(xp):
    """A SLICE's packed (2, 6) output re-described as (3, 4) for a SLICE1 that reverses the
    rows, and as (12,) for one that takes every other element."""
    x = np.arange(1, 13, dtype=np.int16).reshape(2, 6)
    i16 = T.INT16
    copy = cd.SliceOperatorDesc(_t(i16, (2, 6)), _t(i16, (2, 6)), [0, 0], [2, 6], [1, 1])
    rows = cd.Slice1OperatorDesc(_t(i16, (3, 4)), _t(i16, (3, 4)), [0, 0], [3, 4], [-1, 1])
    flat = cd.Slice1OperatorDesc(_t(i16, (12,)), _t(i16, (6,)), [0], [12], [2])
    graph = GraphDesc(
        1, 2, [copy, rows, flat], [GraphInputEdge(0, 0, 0)], [GraphOutputEdge(1, 0, 0), GraphOutputEdge(2, 0, 1)],
        [GraphIntermediateEdge(0, 0, 1, 0), GraphIntermediateEdge(0, 0, 2, 0)],
    )  # fmt: skip
    _, (reversed_rows, every_other) = execute(xp, graph, [x])
    assert reversed_rows.tolist() == [[9, 10, 11, 12], [5, 6, 7, 8], [1, 2, 3, 4]]
    assert every_other.tolist() == [1, 3, 5, 7, 9, 11]


def test_many_inputs_and_outputs(xp):
    """A JOIN of 150 graph inputs split again into 150 graph outputs of other widths: more
    copies than one launch's parameters hold."""
    count, rng = 150, np.random.default_rng(7)
    widths = [int(w) for w in rng.integers(1, 4, count)]
    total = sum(widths)
    parts = _composition_of(total, count, rng)
    u16 = T.UINT16
    join = cd.JoinOperatorDesc([_t(u16, (2, w)) for w in widths], _t(u16, (2, total)), 1)
    split = cd.SplitOperatorDesc(_t(u16, (2, total)), [_t(u16, (2, w), (w + 1, 1)) for w in parts], 1)
    graph = GraphDesc(
        count,
        count + 1,
        [join, split],
        [GraphInputEdge(k, 0, k) for k in range(count)],
        [GraphOutputEdge(1, k, k) for k in range(count)] + [GraphOutputEdge(0, 0, count)],
        [GraphIntermediateEdge(0, 0, 1, 0)],
    )
    values = [np.arange(2 * w, dtype=np.uint16).reshape(2, w) + 100 * k for k, w in enumerate(widths)]
    _, outputs = execute(xp, graph, values)
    joined = np.concatenate(values, axis=1)
    assert outputs[-1].tolist() == joined.tolist()
    assert [o.tolist() for o in outputs[:-1]] == [p.tolist() for p in np.split(joined, np.cumsum(parts)[:-1], 1)]


def _composition_of(total, parts, rng):
    cuts = np.sort(rng.choice(np.arange(1, total), parts - 1, replace=False))
    return [int(b - a) for a, b in itertools.pairwise([0, *cuts, total])]


def test_a_join_flattened_by_a_reshape_edge(xp):
    """JOIN of (n, 3) and (n, 5) along axis 1, read flat: concatenating per-row features and
    flattening them, at 32769 rows (1 MiB of float32). Each part's rows stay one piece with an
    extra axis (one row per piece passed ``graph.MOST_PIECES``)."""
    n, f32 = 32769, T.FLOAT32
    join = cd.JoinOperatorDesc([_t(f32, (n, 3)), _t(f32, (n, 5))], _t(f32, (n, 8)), 1)
    flat = cd.Slice1OperatorDesc(_t(f32, (8 * n,)), _t(f32, (8 * n,)), [0], [8 * n], [1])
    graph = GraphDesc(
        2,
        1,
        [join, flat],
        [GraphInputEdge(0, 0, 0), GraphInputEdge(1, 0, 1)],
        [GraphOutputEdge(1, 0, 0)],
        [GraphIntermediateEdge(0, 0, 1, 0)],
    )
    a = np.arange(3 * n, dtype=np.uint32).reshape(n, 3)
    b = np.arange(5 * n, dtype=np.uint32).reshape(n, 5) + 2**30
    _, (got,) = execute(xp, graph, [a, b])
    assert got.tobytes() == np.concatenate([a, b], axis=1).tobytes()


def test_extra_axes_through_a_reshape_edge_of_no_common_refinement(xp):
    """A roll (two SLICE1s joined) read flat as (6, 1): a part's columns become one dimension
    with an extra axis; two of them joined (6, 2) and read as (4, 3), which no refinement of
    (6, 2) describes: the flat index carries the extra axis too."""
    first = cd.Slice1OperatorDesc(_t(U8, (2, 3)), _t(U8, (2, 1)), [0, 2], [2, 1], [1, 1])
    rest = cd.Slice1OperatorDesc(_t(U8, (2, 3)), _t(U8, (2, 2)), [0, 0], [2, 2], [1, 1])
    roll = cd.JoinOperatorDesc([_t(U8, (2, 1)), _t(U8, (2, 2))], _t(U8, (2, 3)), 1)
    twice = cd.JoinOperatorDesc([_t(U8, (6, 1)), _t(U8, (6, 1))], _t(U8, (6, 2)), 1)
    flip = cd.Slice1OperatorDesc(_t(U8, (4, 3)), _t(U8, (4, 3)), [0, 0], [4, 3], [-1, -1])
    graph = GraphDesc(
        1,
        1,
        [first, rest, roll, twice, flip],
        [GraphInputEdge(0, 0, 0), GraphInputEdge(0, 1, 0)],
        [GraphOutputEdge(4, 0, 0)],
        [GraphIntermediateEdge(*e) for e in [(0, 0, 2, 0), (1, 0, 2, 1), (2, 0, 3, 0), (2, 0, 3, 1), (3, 0, 4, 0)]],
    )
    x = np.arange(1, 7, dtype=np.uint8).reshape(2, 3)
    _, (got,) = execute(xp, graph, [x])
    rolled = np.roll(x, 1, axis=1).reshape(6, 1)
    assert got.tolist() == np.concatenate([rolled, rolled], axis=1).reshape(4, 3)[::-1, ::-1].tolist()

"""A compiled graph's picture: its nodes, edges and the copies they became."""

from __future__ import annotations

import html

from ..core.operators import desc_summary
from ..core.tensor import tensor_text
from .pictures import MAX_LISTED


class GraphPicture:
    """A compiled graph drawn: its inputs, nodes (in columns by depth) and outputs joined by
    its edges, and the copies the compiler made of them (``explain`` of a graph).

    ``repr()`` lists them as text; ``_repr_html_`` draws the graph as SVG (up to
    ``MAX_GRAPH_NODES`` nodes; a larger graph is listed) above the list of copies.

    Examples
    --------
    >>> import cudadml as cd
    >>> i8 = cd.TensorDataType.INT8
    >>> t = lambda *sizes: cd.BufferTensorDesc(i8, sizes)
    >>> nodes = [cd.SplitOperatorDesc(t(6), [t(2), t(4)], 0), cd.JoinOperatorDesc([t(4), t(2)], t(6), 0)]
    >>> graph = cd.GraphDesc(1, 1, nodes, [cd.GraphInputEdge(0, 0, 0)], [cd.GraphOutputEdge(1, 0, 0)],
    ...                      [cd.GraphIntermediateEdge(0, 1, 1, 0), cd.GraphIntermediateEdge(0, 0, 1, 1)])
    >>> cd.explain(graph)
    <CompiledOperator graph of 2 nodes, 1 input and 1 output: 2 strided copies in 1 launch, 6 bytes out>
    nodes:
      nodes[0] (Split): INT8 (6,) -> (2,), (4,)
      nodes[1] (Join): INT8 (4,), (2,) -> (6,)
    edges:
      inputs[0] -> nodes[0] input 0
      nodes[0] output 1 -> nodes[1] input 0
      nodes[0] output 0 -> nodes[1] input 1
      nodes[1] output 0 -> outputs[0]
    copies (element indices):
      inputs[0] -> outputs[0]: 1-byte elements, sizes (4,), from 2 by (1,), to 0 by (1,)
      inputs[0] -> outputs[0]: 1-byte elements, sizes (2,), from 0 by (1,), to 4 by (1,)
    """

    def __init__(self, compiled):
        self.compiled = compiled
        graph = compiled.desc
        self.edges = (
            [
                (("in", e.graph_input_index), ("node", e.to_node_index), f"input {e.to_node_input_index}")
                for e in graph.input_edges
            ]
            + [
                (
                    ("node", e.from_node_index),
                    ("node", e.to_node_index),
                    f"output {e.from_node_output_index} -> input {e.to_node_input_index}",
                )
                for e in graph.intermediate_edges
            ]
            + [
                (("node", e.from_node_index), ("out", e.graph_output_index), f"output {e.from_node_output_index}")
                for e in graph.output_edges
            ]
        )
        self.copies = []
        for plan in compiled.plans:
            for job in plan.jobs[: MAX_LISTED - len(self.copies)]:
                source = "zeros" if job.input >= graph.input_count else f"inputs[{job.input}]"
                self.copies.append(
                    f"{source} -> outputs[{job.output}]: {plan.element_size}-byte elements, sizes {job.sizes}, "
                    f"from {job.in_offset} by {job.in_strides}, to {job.out_offset} by {job.out_strides}"
                )
        self.copy_count = sum(len(plan.jobs) for plan in compiled.plans)

    def _node(self, n):
        node = self.compiled.desc.nodes[n]
        return f"{node.label(n)}: {desc_summary(node.operator)}"

    def _edge_text(self, edge):
        (a_kind, a), (b_kind, b), label = edge
        if a_kind == "in":
            return f"inputs[{a}] -> nodes[{b}] {label}"
        if b_kind == "out":
            return f"nodes[{a}] {label} -> outputs[{b}]"
        out, into = label.split(" -> ")
        return f"nodes[{a}] {out} -> nodes[{b}] {into}"

    def __repr__(self) -> str:
        nodes = len(self.compiled.desc.nodes)
        lines = [repr(self.compiled), "nodes:", *(f"  {self._node(n)}" for n in range(min(nodes, MAX_LISTED)))]
        lines += _more(nodes)
        lines += ["edges:", *(f"  {self._edge_text(e)}" for e in self.edges[:MAX_LISTED]), *_more(len(self.edges))]
        lines += ["copies (element indices):", *(f"  {c}" for c in self.copies), *_more(self.copy_count)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        copies = "".join(f"<li>{html.escape(c)}</li>" for c in self.copies)
        if self.copy_count > MAX_LISTED:
            copies += f"<li>... {self.copy_count - MAX_LISTED} more</li>"
        return (
            f"<p>{html.escape(repr(self.compiled))}</p>{self.svg}"
            f"<p>The copies it became (element indices):</p><ul>{copies}</ul>"
        )

    @property
    def svg(self) -> str:
        """The graph as SVG: inputs left, nodes in columns by depth, outputs right."""
        graph = self.compiled.desc
        if len(graph.nodes) > MAX_GRAPH_NODES:
            listed = "".join(f"<li>{html.escape(self._node(n))}</li>" for n in range(MAX_LISTED))
            return f"<p>{len(graph.nodes)} nodes (drawn up to {MAX_GRAPH_NODES}):</p><ol start='0'>{listed}</ol>"
        depth = {}
        for _ in graph.nodes:  # longest path from the inputs; the graph has no cycle
            for e in graph.intermediate_edges:
                depth[e.to_node_index] = max(depth.get(e.to_node_index, 1), depth.get(e.from_node_index, 1) + 1)
        columns = {}
        for k in range(graph.input_count):
            columns.setdefault(0, []).append(("in", k))
        for n in range(len(graph.nodes)):
            columns.setdefault(depth.get(n, 1), []).append(("node", n))
        last = max(columns) + 1
        for k in range(graph.output_count):
            columns.setdefault(last, []).append(("out", k))
        width, height, gap_x, gap_y = 170, 26, 60, 12
        place = {}
        for c, items in columns.items():
            for r, item in enumerate(items):
                place[item] = (10 + c * (width + gap_x), 10 + r * (height + gap_y))
        parts = []
        for a, b, label in self.edges:
            (x1, y1), (x2, y2) = place[a], place[b]
            parts.append(
                f'<line x1="{x1 + width}" y1="{y1 + height / 2}" x2="{x2}" y2="{y2 + height / 2}" '
                f'stroke="#888" marker-end="url(#arrow)"><title>{html.escape(label)}</title></line>'
            )
        for item, (x, y) in place.items():
            kind, k = item
            if kind == "node":
                node = graph.nodes[k]
                text, fill = f"{k}: {node.name or node.operator.NAME}", "#dbe9f6"
                tip = self._node(k)
            else:
                text, fill = f"{'inputs' if kind == 'in' else 'outputs'}[{k}]", "#eee"
                tensors = graph.input_tensors if kind == "in" else graph.output_tensors
                tip = tensor_text(tensors[k])
            parts.append(
                f'<g><title>{html.escape(tip)}</title><rect x="{x}" y="{y}" width="{width}" height="{height}" '
                f'rx="4" fill="{fill}" stroke="#555"/><text x="{x + 6}" y="{y + 17}" font-size="12" '
                f'font-family="monospace">{html.escape(text[:22])}</text></g>'
            )
        w = 20 + (last + 1) * (width + gap_x)
        h = 20 + max(len(items) for items in columns.values()) * (height + gap_y)
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}">'
            '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="8" refY="4" orient="auto">'
            '<path d="M0,0 L8,4 L0,8 z" fill="#888"/></marker></defs>' + "".join(parts) + "</svg>"
        )


#: Nodes a graph's picture draws; a larger graph is listed.
MAX_GRAPH_NODES = 120


def _more(count):
    """The line that says how many a list left out (none when it left none)."""
    return [f"  ... {count - MAX_LISTED} more"] if count > MAX_LISTED else []

"""Reprs and pictures: what a descriptor, a tensor or an array-function call does, drawn.

A picture is made by running the operator itself on index data, so it cannot disagree with
what runs: a descriptor's plan runs on the reference backend over buffers whose elements hold
their own element offsets (and 8-byte elements, so every offset fits); an array function runs
on arrays of indices. What each output element received then says which input element it
read. ``Explanation`` draws the result as inline SVG for Jupyter (``_repr_html_``) and as text
(``repr``): one grid per 2-D slice of the tensor drawn, padding between rows hatched (``#``),
the cells a window reads numbered in output order, SPLIT and JOIN parts coloured.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
from typing import Any

import numpy as np

from . import arrays
from .backends import reference
from .compiled import CompiledOperator
from .errors import int_tuple
from .hooks import provide
from .operators import _OperatorDesc, desc_summary, tensors_text
from .tensor import BufferTensorDesc, last_element_index, packed_strides, tensor_text

__all__ = ["Explanation", "explain"]

#: Most 2-D slices, rows and columns drawn; the rest is cut, and the picture says so.
MAX_SLICES, MAX_ROWS, MAX_COLUMNS = 8, 24, 24
#: Part colours (ColorBrewer Set3), repeating after ten parts.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd")
_READ = "#cfe3ff"
_INK = "#1f4e9c"  # outlines and arrows
_CELL = 26  # SVG cell size in pixels
_CHAR = 8  # an upper bound on the width of a character of the 13-pixel font
_UNSET = np.uint64(2**64 - 1)
_GATHERS = ("slice", "slice1", "strided_slice")
_SCATTERS = ("slice_grad", "strided_slice_grad")


@dataclasses.dataclass
class _Grid:
    """The tensor drawn: its sizes and element strides, and per element offset a mark (a label
    and, for SPLIT and JOIN, a part); ``steps`` maps an axis to the signed step it is read with."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    marks: dict[int, tuple[str, int | None]]
    steps: dict[int, int] = dataclasses.field(default_factory=dict)


class Explanation:
    """A picture of what an operator does, made by `explain`.

    ``repr()`` gives it as text, one grid per 2-D slice; in Jupyter ``_repr_html_`` draws it
    as inline SVG.

    Parameters
    ----------
    title : str
        The first line: the operator and its shapes.
    grid : _Grid
        The tensor drawn and its marks.
    legend : list of str
        Lines under the title that say what the marks mean.
    parts : list of str, optional
        For SPLIT and JOIN, the name of each part (its colour's key).
    outline : bool, default False
        Whether to outline the marked cells of each slice (the window of a slice).

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.explain(cd.split, (2, 3), [1, 2], axis=1)
    cd.split: x (2, 3) -> 2 parts along axis 1
    each cell shows the part it goes to
    part 0: (2, 1)
    part 1: (2, 2)
       0 1 2
    0  0 1 1
    1  0 1 1
    """

    def __init__(self, title: str, grid: _Grid, legend: list[str], parts: list[str] | None = None, outline=False):
        self.title, self.grid, self.legend, self.parts, self.outline = title, grid, legend, parts or [], outline

    def _slices(self):
        """``(caption, rows)`` per 2-D slice drawn; a row is a list of ``(label, part, kind)``
        cells, kind "mark", "empty" or "padding"; and the lines saying what was cut."""
        sizes, strides = self.grid.sizes, self.grid.strides
        lead = sizes[:-2]
        n_rows = sizes[-2] if len(sizes) > 1 else 1
        n_cols, col_stride = sizes[-1], strides[-1]
        row_stride = strides[-2] if len(sizes) > 1 else 0
        span = (n_cols - 1) * col_stride + 1
        pitched = col_stride > 0 and (n_rows == 1 or row_stride >= span)  # rows apart and in order
        width = (row_stride if n_rows > 1 else span) if pitched else n_cols
        cut = []
        total = int(np.prod(lead)) if lead else 1
        if total > MAX_SLICES:
            cut.append(f"{total - MAX_SLICES} more 2-D slices not drawn")
        if n_rows > MAX_ROWS:
            cut.append(f"rows {MAX_ROWS} to {n_rows - 1} not drawn")
        if width > MAX_COLUMNS:
            cut.append(f"columns {MAX_COLUMNS} to {width - 1} not drawn")
        slices = []
        for index in list(np.ndindex(*lead))[:MAX_SLICES]:
            base = sum(i * s for i, s in zip(index, strides))
            rows = []
            for r in range(min(n_rows, MAX_ROWS)):
                row = []
                for j in range(min(width, MAX_COLUMNS)):
                    if pitched and (j % col_stride or j // col_stride >= n_cols):
                        row.append(("#", None, "padding"))
                        continue
                    offset = base + r * row_stride + (j if pitched else j * col_stride)
                    label, part = self.grid.marks.get(offset, (".", None))
                    row.append((label, part, "empty" if label == "." else "mark"))
                rows.append(row)
            caption = f"[{', '.join(map(str, index))}, :, :]" if lead else ""
            slices.append((caption, rows))
        return slices, cut, pitched

    def _axes_line(self):
        """How the two drawn axes are read: "rows: axis 2, step -2 (upwards)"."""
        n = len(self.grid.sizes)
        words = []
        for name, axis, back in (("rows", n - 2, "upwards"), ("columns", n - 1, "right to left")):
            step = self.grid.steps.get(axis)
            if axis >= 0 and step is not None:
                words.append(f"{name}: axis {axis}, step {step}" + (f" ({back})" if step < 0 else ""))
        others = [f"axis {a}: step {s}" for a, s in sorted(self.grid.steps.items()) if a < n - 2]
        return "; ".join(words + others)

    def __repr__(self) -> str:
        slices, cut, _ = self._slices()
        lines = [self.title, *self.legend, *self.parts]
        axes = self._axes_line()
        if axes:
            lines.append(axes)
        for caption, rows in slices:
            if caption:
                lines.append(caption)
            ncols = len(rows[0])
            width = max(len(str(ncols - 1)), *(len(label) for row in rows for label, _, _ in row))
            margin = len(str(len(rows) - 1)) + 2
            lines.append(" " * margin + " ".join(f"{j:>{width}}" for j in range(ncols)).rstrip())
            for r, row in enumerate(rows):
                cells = " ".join(f"{label:>{width}}" for label, _, _ in row)
                lines.append(f"{r:<{margin}}{cells}".rstrip())
        return "\n".join(lines + cut)

    def _repr_html_(self) -> str:
        return self.svg

    @property
    def svg(self) -> str:
        """The picture as an SVG document (presentation attributes only, no style sheet)."""
        slices, cut, _ = self._slices()
        axes = self._axes_line()
        out, y, width = [], 18, 0
        for line in [self.title, *self.legend, *([axes] if axes else [])]:
            out.append(_text(4, y, line, "start", **({"font-weight": "bold"} if line is self.title else {})))
            width, y = max(width, _CHAR * len(line) + 8), y + 18
        key = 26 + _CHAR * max(map(len, self.parts), default=0)  # the width of one entry of the colour key
        for k, name in enumerate(self.parts):  # the colour key: six to a line
            x = 4 + (k % 6) * key
            out.append(f'<rect x="{x}" y="{y - 11}" width="14" height="14" fill="{_colour(k)}" stroke="#555555"/>')
            out.append(_text(x + 18, y, name, "start"))
            width = max(width, x + key)
            if k % 6 == 5 or k == len(self.parts) - 1:
                y += 20
        n = len(self.grid.sizes)
        row_step, column_step = self.grid.steps.get(n - 2), self.grid.steps.get(n - 1)
        for caption, rows in slices:
            if caption:
                out.append(_text(4, y + 14, caption, "start"))
                y += 20
            x0, y0 = 30, y + 14
            right, bottom = x0 + len(rows[0]) * _CELL, y0 + len(rows) * _CELL
            for j in range(len(rows[0])):
                out.append(_text(x0 + (j + 0.5) * _CELL, y + 10, j, fill="#888888", **{"font-size": 11}))
            for r, row in enumerate(rows):
                top = y0 + r * _CELL
                out.append(_text(x0 - 6, top + _CELL / 2 + 4, r, "end", fill="#888888", **{"font-size": 11}))
                for j, (label, part, kind) in enumerate(row):
                    left = x0 + j * _CELL
                    fill = {"padding": "url(#padding)", "empty": "#ffffff"}.get(kind, _colour(part))
                    out.append(
                        f'<rect x="{left}" y="{top}" width="{_CELL}" height="{_CELL}" fill="{fill}" stroke="#999999"/>'
                    )
                    if kind == "mark":
                        out.append(_text(left + _CELL / 2, top + _CELL / 2 + 4, label))
            box = _bounding_box(rows) if self.outline else None
            if box:
                (r0, r1), (c0, c1) = box
                out.append(
                    f'<rect x="{x0 + c0 * _CELL}" y="{y0 + r0 * _CELL}" width="{(c1 - c0 + 1) * _CELL}" '
                    f'height="{(r1 - r0 + 1) * _CELL}" fill="none" stroke="{_INK}" stroke-width="2"/>'
                )
            # Arrows in the direction each drawn axis is read: up or left where the step is negative.
            if row_step and len(rows) > 1:
                ends = (y0 + 4, bottom - 4) if row_step > 0 else (bottom - 4, y0 + 4)
                out.append(_arrow(right + 10, ends[0], right + 10, ends[1]))
            if column_step and len(rows[0]) > 1:
                ends = (x0 + 4, right - 4) if column_step > 0 else (right - 4, x0 + 4)
                out.append(_arrow(ends[0], bottom + 8, ends[1], bottom + 8))
            width, y = max(width, right + 24), bottom + 22
        for line in cut:
            out.append(_text(4, y + 4, line, "start", **{"font-style": "italic"}))
            width, y = max(width, _CHAR * len(line) + 8), y + 18
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="sans-serif" '
            'font-size="13"><defs><pattern id="padding" width="6" height="6" patternUnits="userSpaceOnUse">'
            '<rect width="6" height="6" fill="#eeeeee"/><path d="M0,6 L6,0" stroke="#aaaaaa"/></pattern>'
            f'<marker id="arrowhead" markerWidth="8" markerHeight="8" refX="6" refY="4" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{_INK}"/></marker></defs>'
            f'<rect width="100%" height="100%" fill="#ffffff"/>{"".join(out)}</svg>'
        )


def _text(x, y, text, anchor="middle", **attributes):
    extra = "".join(f' {k}="{v}"' for k, v in attributes.items())
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}"{extra}>{html.escape(str(text))}</text>'


def _arrow(x1, y1, x2, y2):
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{_INK}" stroke-width="1.5" '
        'marker-end="url(#arrowhead)"/>'
    )


def _colour(part):
    return _READ if part is None else PALETTE[part % len(PALETTE)]


def _bounding_box(rows):
    """``((first row, last row), (first column, last column))`` of the marked cells, or None."""
    marked = [(r, j) for r, row in enumerate(rows) for j, (_, _, kind) in enumerate(row) if kind == "mark"]
    if not marked:
        return None
    rs, cs = zip(*marked)
    return (min(rs), max(rs)), (min(cs), max(cs))


# ---- from what ran to marks ----------------------------------------------------------------------


def _offsets(sizes, strides):
    """The element offset of every element, as an array of shape ``sizes``."""
    offsets = np.zeros(sizes, np.int64)
    for axis, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[axis] = n
        offsets += (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return offsets


def _steps(sources, sizes, strides):
    """The signed step of each axis of the grid ``(sizes, strides)`` that the element offsets
    ``sources`` (one per element of the other side, in its shape) walk, where that can be told:
    from element 0 to the next element along each of the other side's axes."""
    offsets = _offsets(sizes, strides).ravel()
    if sources.size < 2 or len(np.unique(offsets)) != offsets.size:  # aliased elements: no unique walk
        return {}
    where = {int(o): np.unravel_index(k, sizes) for k, o in enumerate(offsets)}
    start = where[int(sources.flat[0])]
    steps = {}
    for axis, n in enumerate(sources.shape):
        if n > 1:
            step = where[int(sources[(0,) * axis + (1,) + (0,) * (sources.ndim - axis - 1)])]
            for d, (a, b) in enumerate(zip(start, step)):
                if a != b:
                    steps[d] = int(b - a)
    return steps


def _gather(title, sources, sizes, strides, source):
    """A copy's picture: ``sources`` holds, per output element, the element offset it read in
    the grid ``(sizes, strides)`` of ``source``; each element read is numbered with its readers."""
    readers = {}
    for k, o in enumerate(sources.ravel().tolist()):
        readers.setdefault(o, []).append(k)
    marks = {o: (",".join(map(str, ks[:3])) + ("…" if len(ks) > 3 else ""), None) for o, ks in readers.items()}
    grid = _Grid(tuple(sizes), tuple(strides), marks, _steps(sources, sizes, strides))
    total = int(np.prod(sizes))
    legend = f"{len(readers)} of {total} cells of {source} read; each is numbered with the output elements that read it"
    return Explanation(title, grid, [legend], outline=True)


def _scatter(title, received, dy_shape, sizes, strides, dy):
    """A gradient's picture: ``received`` holds, per element of the grid ``(sizes, strides)``,
    1 + the index of the element of ``dy`` (of shape ``dy_shape``) it receives, or 0."""
    offsets = _offsets(sizes, strides)
    got = received > 0
    index = received[got].astype(np.int64) - 1
    sources = np.empty(int(np.prod(dy_shape)), np.int64)
    sources[index] = offsets[got]  # each element of dy lands on one element
    marks = {int(o): (str(k), None) for o, k in zip(offsets[got].tolist(), index.tolist())}
    grid = _Grid(tuple(sizes), tuple(strides), marks, _steps(sources.reshape(dy_shape), sizes, strides))
    return Explanation(title, grid, [f"each cell shows the element of {dy} it receives; . receives 0"], outline=True)


def _parts(title, part_of, sizes, strides, parts, split):
    """SPLIT's or JOIN's picture: ``part_of`` maps an element offset of the grid to its part."""
    grid = _Grid(tuple(sizes), tuple(strides), {o: (str(k), k) for o, k in part_of.items()})
    legend = f"each cell shows the part it {'goes to' if split else 'comes from'}"
    return Explanation(title, grid, [legend], parts)


# ---- descriptors: their plans run on element offsets -------------------------------------------------


def _buffer(tensor, fill=None):
    """A buffer for ``tensor`` as 8-byte elements, each holding its own element offset (or
    ``fill``), and the offsets of the tensor's elements in it."""
    sizes, strides = tensor.sizes, tensor.effective_strides
    span = last_element_index(sizes, strides) + 1
    buffer = np.arange(span, dtype=np.uint64) if fill is None else np.full(span, fill, np.uint64)
    return buffer, _offsets(sizes, strides)


def _run_plan(desc, inputs, outputs):
    plan = dataclasses.replace(desc.to_plan(), element_size=8)
    address = [b.__array_interface__["data"][0] for b in inputs], [b.__array_interface__["data"][0] for b in outputs]
    reference.run(plan, *address)


def _of_desc(desc):
    """The `Explanation` of an operator descriptor."""
    name = type(desc).__name__
    ins, outs = desc.input_tensors, desc.output_tensors
    if desc.NAME in ("Slice", "Slice1"):
        (source, _), (target, at) = _buffer(ins[0]), _buffer(outs[0], _UNSET)
        _run_plan(desc, [source], [target])
        sources = target[at].astype(np.int64)
        return _gather(f"{name}: {desc_summary(desc)}", sources, ins[0].sizes, ins[0].effective_strides, "InputTensor")
    if desc.NAME == "SliceGrad":
        dy, dy_at = _buffer(ins[0], 0)
        dy[dy_at] = np.arange(1, dy_at.size + 1, dtype=np.uint64).reshape(dy_at.shape)
        target, at = _buffer(outs[0], _UNSET)
        _run_plan(desc, [dy], [target])
        grid = outs[0].sizes, outs[0].effective_strides
        return _scatter(f"{name}: {desc_summary(desc)}", target[at], ins[0].sizes, *grid, "InputGradientTensor")
    if desc.NAME == "Split":
        (source, _), targets = _buffer(ins[0]), [_buffer(t, _UNSET) for t in outs]
        _run_plan(desc, [source], [b for b, _ in targets])
        part_of = {o: k for k, (b, at) in enumerate(targets) for o in b[at].ravel().tolist()}
        title = f"{name}: {tensor_text(ins[0])} -> {len(outs)} parts along axis {desc.axis}"
        parts = [f"part {k}: {tensors_text([t])}" for k, t in enumerate(outs)]
        return _parts(title, part_of, ins[0].sizes, ins[0].effective_strides, parts, split=True)
    sources = []
    for k, t in enumerate(ins):
        b, at = _buffer(t, 0)
        b[at] = k
        sources.append(b)
    target, at = _buffer(outs[0], _UNSET)
    _run_plan(desc, sources, [target])
    part_of = dict(zip(at.ravel().tolist(), target[at].ravel().tolist()))
    title = f"{name}: {len(ins)} parts along axis {desc.axis} -> {tensor_text(outs[0])}"
    parts = [f"part {k}: {tensors_text([t])}" for k, t in enumerate(ins)]
    return _parts(title, part_of, outs[0].sizes, outs[0].effective_strides, parts, split=False)


def _of_tensor(tensor):
    """The `Explanation` of a tensor: its elements numbered in row-major order, padding hatched."""
    offsets = _offsets(tensor.sizes, tensor.effective_strides)
    marks = {o: (str(k), None) for k, o in enumerate(offsets.ravel().tolist())}
    grid = _Grid(tensor.sizes, tensor.effective_strides, marks)
    span = last_element_index(tensor.sizes, tensor.effective_strides) + 1
    legend = (
        f"{tensor.element_count} elements in a span of {span} ({tensor.total_tensor_size_in_bytes} bytes); "
        "each cell shows its element's row-major index"
    )
    return Explanation(f"BufferTensorDesc: {tensor_text(tensor)}", grid, [legend])


# ---- array functions: run on arrays of indices -----------------------------------------------------


def _shape(a, where):
    return tuple(a.shape) if hasattr(a, "shape") else int_tuple(a, "shape", where)


def _of_call(fn, args, kwargs):
    """The `Explanation` of ``fn(*args, **kwargs)``, arrays given as shapes (or arrays)."""
    name = fn.__name__
    signature = inspect.signature(fn)
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()
    arguments = {k: v for k, v in bound.arguments.items() if k not in ("out", "stream")}  # no part in a picture
    given = arguments.pop(next(iter(signature.parameters)))
    where = f"explain(cd.{name})"
    if name == "join":
        shapes = [_shape(a, where) for a in given]
        joined = fn([np.full(s, k, np.uint32) for k, s in enumerate(shapes)], **arguments)
        title = f"cd.join: {len(shapes)} parts along axis {arguments['axis']} -> {joined.shape}"
        parts = [f"part {k}: {s}" for k, s in enumerate(shapes)]
        part_of = dict(enumerate(joined.ravel().tolist()))
        return _parts(title, part_of, joined.shape, packed_strides(joined.shape), parts, split=False)
    shape = _shape(given, where)
    indices = np.arange(int(np.prod(shape)), dtype=np.uint32).reshape(shape)
    if name in _SCATTERS:
        received = fn(indices + 1, **arguments)
        title = f"cd.{name}: dy {shape} -> {received.shape}"
        return _scatter(title, received, shape, received.shape, packed_strides(received.shape), "dy")
    if name == "split":
        results = fn(indices, **arguments)
        title = f"cd.split: x {shape} -> {len(results)} parts along axis {arguments['axis']}"
        parts = [f"part {k}: {p.shape}" for k, p in enumerate(results)]
        part_of = {o: k for k, p in enumerate(results) for o in p.ravel().tolist()}
        return _parts(title, part_of, shape, packed_strides(shape), parts, split=True)
    result = fn(indices, **arguments)
    return _gather(
        f"cd.{name}: x {shape} -> {result.shape}", result.astype(np.int64), shape, packed_strides(shape), "x"
    )


def explain(what: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Draw what an operator does: the cells it reads, in what order, and where they go.

    The picture comes from running the operator itself on index data (on the host, whatever
    the arrays would be), so it shows exactly what runs. It is one grid per 2-D slice of the
    tensor drawn (the input of a slice, the result of a gradient, the whole of a SPLIT or JOIN),
    with the cells a window reads numbered in output order, the axes read backwards marked, the
    padding between rows of a descriptor's tensor hatched (``#``) and SPLIT or JOIN parts
    coloured. In Jupyter it is drawn as SVG; elsewhere its ``repr`` is text. Large tensors are
    drawn cut to their first slices, rows and columns.

    Parameters
    ----------
    what : descriptor, CompiledOperator, BufferTensorDesc or array function
        An operator descriptor (``SliceOperatorDesc``, ...), a compiled one, a tensor (drawn
        with its padding), or one of the array functions (``cd.slice``, ``cd.split``, ...).
    *args, **kwargs
        For an array function, its arguments, with each array given as its shape (or as the
        array, whose shape is all that is used); ``out`` and ``stream`` are ignored.

    Returns
    -------
    Explanation
        The picture: ``repr()`` for text, ``_repr_html_()`` or ``svg`` for SVG.

    Raises
    ------
    TypeError
        If ``what`` is none of the above, or a descriptor is given further arguments.
    DescriptorError
        If the call breaks a DirectML rule, as the array function would raise.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.explain(cd.strided_slice, (3, 4), np.s_[::-2, 1:])
    cd.strided_slice: x (3, 4) -> (2, 3)
    6 of 12 cells of x read; each is numbered with the output elements that read it
    rows: axis 0, step -2 (upwards); columns: axis 1, step 1
       0 1 2 3
    0  . 3 4 5
    1  . . . .
    2  . 0 1 2
    """
    if isinstance(what, CompiledOperator):
        what = what.desc
    if isinstance(what, (_OperatorDesc, BufferTensorDesc)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return _of_tensor(what) if isinstance(what, BufferTensorDesc) else _of_desc(what)
    name = getattr(what, "__name__", "")
    if name not in (*_GATHERS, *_SCATTERS, "split", "join") or getattr(arrays, name) is not what:
        raise TypeError(
            "explain: takes an operator descriptor, a CompiledOperator, a BufferTensorDesc or a cudadml array "
            f"function, not {what!r}"
        )
    return _of_call(what, args, kwargs)


provide("picture", explain)

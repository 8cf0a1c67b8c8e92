"""Reprs and pictures: what a descriptor, a tensor or an array-function call does, drawn.

A picture is drawn from the geometry that runs, not a second formula: a descriptor's windows
(``windows``: per dimension ``(start, step, count)``, what it lowers to its plan) and SPLIT's and
JOIN's parts along their axis; an array function's call normalised and validated as the
function does it (``calls``, ``runner.describe``), whose windows are the descriptor's. Which
picture an operator's call or descriptor is, the operator declares (``Operator.picture``, in
its module of ``cudadml.ops``); this module draws each kind with its generic pictures, and
knows no operator by name.

What is drawn follows the windows. The 2-D slices drawn are the first that a window reads (a
tensor, SPLIT and JOIN: the first slices). A slice of at most ``MAX_ROWS`` by ``MAX_COLUMNS``
cells is drawn whole, cell by cell; a larger one is drawn whole at a reduced scale (an
overview, each window outlined on it), and each window at cell scale where its cells are: whole
where it fits, else its corners (``CORNER`` cells of each side). Many windows
(``slice1_batch``) are sampled: ``MAX_OUTLINES`` outlined, the count said, and the first few
of them drawn at cell scale. Marks are made only for the cells drawn at cell scale, and those are
at most ``MAX_CELLS`` a picture, so a picture costs what it shows, whatever the tensor's size,
and its SVG is at most ``MAX_BYTES``.

``Explanation`` draws the result as inline SVG for Jupyter (``_repr_html_``) and as text
(``repr``, the cell-scale parts only): padding between rows hatched (``#``), the cells a window
reads numbered in output order, SPLIT and JOIN parts coloured; many windows each outlined and
numbered, each cell numbered with the windows that read it. Window outlines, and nothing else,
are drawn in ``OUTLINE``; the SVG's groups carry their geometry as ``data-`` attributes (for
tests that look at a rendered picture).
"""

from __future__ import annotations

import bisect
import dataclasses
import html
import inspect
import itertools
import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ..core.errors import int_tuple
from ..core.hooks import provide
from ..core.indexing import window_start
from ..core.operators import REGISTRY, OperatorDesc, desc_summary, tensors_text
from ..core.overlap import overlaps_itself
from ..core.tensor import BufferTensorDesc, last_element_index, packed_strides, tensor_text
from ..graphs.graph import CompiledGraph, GraphDesc
from ..ops import of_desc
from ..run import arrays
from ..run.compiled import CompiledOperator
from ..run.runner import describe

__all__ = ["Explanation", "explain"]

#: Most 2-D slices drawn, and most of them drawn with an overview (larger than a cell grid).
MAX_SLICES, MAX_LARGE_SLICES = 8, 3
#: A slice of at most MAX_ROWS rows and MAX_COLUMNS cells a row is drawn whole at cell scale; of
#: a larger slice, a window is drawn whole where it fits in that (with a cell around it), else
#: CORNER cells of each of its sides.
MAX_ROWS, MAX_COLUMNS, CORNER = 24, 24, 6
#: Most cells drawn at cell scale in one picture (what bounds its size and its cost), and most
#: windows of a slice drawn at cell scale.
MAX_CELLS, MAX_INSET_WINDOWS = 800, 2
#: Of many windows (``slice1_batch``): most outlines drawn, and most windows listed in the text.
MAX_OUTLINES, MAX_LISTED = 24, 8
#: Most parts named in the colour key (and drawn as bands on an overview).
MAX_KEYED = 24
#: The most bytes of a picture's SVG.
MAX_BYTES = 64 * 1024
#: Part colours (ColorBrewer Set3), repeating after ten parts.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd")
#: The colour of window outlines, and of nothing else in a picture.
OUTLINE = "#e6007e"
_READ = "#cfe3ff"
_INK = "#1f4e9c"  # window numbers and arrows
_GREY = "#888888"  # row and column numbers
_TENSOR = "#f2f2f2"  # an overview's cells
_CELL = 26  # SVG cell height, and least width, in pixels
_CHAR = 8  # an upper bound on the width of a character of the 13-pixel font
_OVERVIEW = 288  # an overview's longest side in pixels
_MAX_WIDTH = 1000  # pictures side by side wrap past this width
_MAX_SKIPPED = 32  # slices of many windows passed over (they show no window not drawn yet) before giving up


@dataclasses.dataclass
class _Grid:
    """The tensor drawn: its sizes and element strides, and per element offset of a cell drawn
    that is marked, its mark (a label and, for SPLIT and JOIN, a part); ``steps`` maps an axis to
    the signed step it is read with."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    marks: dict[int, tuple[str, int | None]]
    steps: dict[int, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class _Box:
    """The cells a window reads in one 2-D slice: its first and last row and column read
    (element coordinates, both read); ``key`` its number among many windows (None for the one
    window of a copy), ``flips`` whether it reads the rows and the columns backwards."""

    key: int | None
    rows: tuple[int, int]
    columns: tuple[int, int]
    flips: tuple[bool, bool] = (False, False)


@dataclasses.dataclass(frozen=True)
class _View:
    """Rows ``rows`` and cells ``cells`` (of a row's cells: elements and padding) of a 2-D
    slice drawn at cell scale: the whole slice, or the part of a window (``group``: which)
    at ``at`` (row and column) of its arrangement, top left ``(0, 0)``."""

    rows: range
    cells: range
    group: int = 0
    at: tuple[int, int] = (0, 0)


@dataclasses.dataclass(frozen=True)
class _Slice:
    """A 2-D slice drawn: its leading index, the windows outlined on it, its views at cell scale,
    and whether it is drawn whole at a reduced scale too (it is larger than one view)."""

    lead: tuple[int, ...]
    boxes: tuple[_Box, ...]
    views: tuple[_View, ...]
    overview: bool


@dataclasses.dataclass
class _Outlines:
    """The windows outlined in a picture of many windows: per 2-D slice drawn, ``(window,
    (first row, last row), (first column, last column), (rows flipped, columns flipped))`` of
    each window outlined there (the rows and columns it reads in that slice); how many windows
    that read a slice drawn were left out there (past ``MAX_OUTLINES``), and how many windows
    read no slice drawn."""

    boxes: list[list[tuple[int, tuple[int, int], tuple[int, int], tuple[bool, bool]]]]
    left_out: int
    unseen: int

    @property
    def drawn(self) -> int:
        """How many windows are outlined."""
        return len({box[0] for boxes in self.boxes for box in boxes})

    @property
    def cut(self) -> list[str]:
        """What the text says was left out."""
        return [f"{self.unseen} windows read no 2-D slice drawn"] if self.unseen else []


@dataclasses.dataclass(frozen=True)
class _Bands:
    """SPLIT's or JOIN's parts along ``axis``: part ``k`` covers ``extents[k]`` coordinates from
    ``starts[k]``."""

    axis: int
    starts: tuple[int, ...]
    extents: tuple[int, ...]


class Explanation:
    """A picture of what an operator does, made by `explain`.

    ``repr()`` gives it as text, the parts drawn at cell scale; in Jupyter ``_repr_html_`` draws
    it as inline SVG, at most ``MAX_BYTES``.

    Parameters
    ----------
    title : str
        The first line: the operator and its shapes.
    grid : _Grid
        The tensor drawn and its marks.
    legend : list of str
        Lines under the title that say what the marks mean.
    layout : _Layout
        How the tensor's 2-D slices are laid out in cells.
    slices : list of _Slice
        The 2-D slices drawn, each with the windows outlined on it and its views at cell scale.
    parts : list of str, optional
        For SPLIT and JOIN, the name of each part (its colour's key).
    bands : _Bands, optional
        For SPLIT and JOIN, the parts along their axis (drawn on an overview).
    outlines : _Outlines, optional
        For many windows (``slice1_batch``), the windows outlined, numbered and given arrows
        where they flip a drawn axis.

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.explain(cd.split, (2, 3), split_sizes=[1, 2], axis=1)
    cd.split: x (2, 3) -> 2 parts along axis 1
    each cell shows the part it goes to
    part 0: (2, 1)
    part 1: (2, 2)
       0 1 2
    0  0 1 1
    1  0 1 1
    """

    def __init__(
        self,
        title: str,
        grid: _Grid,
        legend: list[str],
        layout: _Layout,
        slices: list[_Slice],
        parts: list[str] | None = None,
        bands: _Bands | None = None,
        outlines: _Outlines | None = None,
    ):
        self.title, self.grid, self.legend, self.layout, self.slices = title, grid, legend, layout, slices
        self.parts, self.bands, self.outlines = parts or [], bands, outlines

    # ---- what is drawn, as text and as SVG ------------------------------------------------------

    def _cells(self, lead, view):
        """The rows of ``view`` of the slice at ``lead``: a row is a list of ``(label, part,
        kind)`` cells, kind "mark", "empty" or "padding"."""
        lay, marks = self.layout, self.grid.marks
        base = sum(i * s for i, s in zip(lead, self.grid.strides))
        rows = []
        for r in view.rows:
            row = []
            for j in view.cells:
                if lay.pitched and (j % lay.column_stride or j // lay.column_stride >= lay.columns):
                    row.append(("#", None, "padding"))
                    continue
                label, part = marks.get(
                    base + r * lay.row_stride + (j if lay.pitched else j * lay.column_stride), (".", None)
                )
                row.append((label, part, "empty" if label == "." else "mark"))
            rows.append(row)
        return rows

    def _key(self):
        """The colour key's entries: the first ``MAX_KEYED`` parts, and how many more there are."""
        return self.parts[:MAX_KEYED], max(0, len(self.parts) - MAX_KEYED)

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

    def _caption(self, lead):
        return f"[{', '.join(map(str, lead))}, :, :]" if len(self.grid.sizes) > 2 else ""

    @property
    def cut(self) -> list[str]:
        """The lines that say what was not drawn."""
        more = self.layout.slices - len(self.slices)
        lines = [f"{more} more 2-D slices not drawn"] if more > 0 else []
        hidden = self._not_at_cell_scale()
        if hidden:
            lines.append(f"{hidden} more {'window' if hidden == 1 else 'windows'} not drawn at cell scale")
        return lines + (self.outlines.cut if self.outlines else [])

    def _not_at_cell_scale(self) -> int:
        """How many windows outlined in a slice drawn have no cell in its views (a slice larger
        than one view shows at most ``MAX_INSET_WINDOWS`` windows at cell scale, and the text only
        that scale: without this line a third window would vanish from it unsaid)."""
        lay, outlined, shown = self.layout, set(), set()
        for s in self.slices:
            for box in s.boxes:
                outlined.add(box.key)
                c0, c1 = lay.cell(box.columns[0]), lay.cell(box.columns[1])
                if any(
                    v.rows.start <= box.rows[1]
                    and box.rows[0] < v.rows.stop
                    and v.cells.start <= c1
                    and c0 < v.cells.stop
                    for v in s.views
                ):
                    shown.add(box.key)
        return len(outlined - shown)

    def __repr__(self) -> str:
        keyed, more = self._key()
        lines = [self.title, *self.legend, *keyed, *([f"... and {more} more parts"] if more else [])]
        axes = self._axes_line()
        if axes:
            lines.append(axes)
        lay = self.layout
        for s in self.slices:
            caption = self._caption(s.lead)
            if caption:
                lines.append(caption)
            for view in s.views:
                rows = self._cells(s.lead, view)
                if not rows or not view.cells:
                    lines.append("(no cells)")
                    continue
                if s.overview:
                    lines.append(
                        f"rows {view.rows[0]} to {view.rows[-1]}, columns {view.cells[0]} to {view.cells[-1]} "
                        f"of {lay.rows} x {lay.width}"
                    )
                width = max(len(str(view.cells[-1])), *(len(label) for row in rows for label, _, _ in row))
                margin = len(str(view.rows[-1])) + 2
                lines.append(" " * margin + " ".join(f"{j:>{width}}" for j in view.cells).rstrip())
                for r, row in zip(view.rows, rows):
                    cells = " ".join(f"{label:>{width}}" for label, _, _ in row)
                    lines.append(f"{r:<{margin}}{cells}".rstrip())
        return "\n".join(lines + self.cut)

    def _repr_html_(self) -> str:
        return self.svg

    @property
    def svg(self) -> str:
        """The picture as an SVG document (presentation attributes only, no style sheet), at most
        ``MAX_BYTES``: the cell-scale views that would pass that are left out, and said so."""
        out, y, width = [], 18, 0
        axes = self._axes_line()
        for line in [self.title, *self.legend, *([axes] if axes else [])]:
            out.append(_text(4, y, line, "start", **({"font-weight": "bold"} if line is self.title else {})))
            width, y = max(width, _CHAR * len(line) + 8), y + 18
        keyed, more = self._key()
        key = 26 + _CHAR * max(map(len, keyed), default=0)  # the width of one entry of the colour key
        for k, name in enumerate(keyed):  # the colour key: six to a line
            x = 4 + (k % 6) * key
            out.append(f'<rect x="{x}" y="{y - 11}" width="14" height="14" fill="{_colour(k)}" stroke="#555555"/>')
            out.append(_text(x + 18, y, name, "start"))
            width = max(width, x + key)
            if k % 6 == 5 or k == len(keyed) - 1:
                y += 20
        if more:
            out.append(_text(4, y, f"... and {more} more parts", "start"))
            y += 20
        size, left_out = sum(map(len, out)), 0
        groups = [_groups(self, s) for s in self.slices]
        # Overviews beside the views where they all leave room for one, else above them; one size.
        room = min((_MAX_WIDTH - sum(w + 24 for w, _, _ in g) - 4 for g in groups), default=_MAX_WIDTH)
        for s, blocks in zip(self.slices, groups):
            caption = self._caption(s.lead)
            if caption:
                out.append(
                    _text(4, y + 14, caption + (f" ({self.layout.rows} x {self.layout.width})" * s.overview), "start")
                )
                y += 22
            if s.overview:
                blocks = [_overview(self, s, room), *blocks]
            x, shelf = 4, 0
            for w, h, draw in blocks:
                if x > 4 and x + w > _MAX_WIDTH:
                    x, y, shelf = 4, y + shelf + 16, 0
                piece = draw(x, y)
                if size + len(piece) > MAX_BYTES - 4096:  # room for the document's head and last lines
                    left_out += 1
                    continue
                out.append(piece)
                size += len(piece)
                x, shelf, width = x + w + 24, max(shelf, h), max(width, x + w)
            y += shelf + 12
        cut = self.cut + (
            [f"{left_out} parts of the picture not drawn (at most {MAX_BYTES} bytes)"] if left_out else []
        )
        for line in cut:
            out.append(_text(4, y + 4, line, "start", **{"font-style": "italic"}))
            width, y = max(width, _CHAR * len(line) + 8), y + 18
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 4}" height="{y}" font-family="sans-serif" '
            'font-size="13"><defs><pattern id="padding" width="6" height="6" patternUnits="userSpaceOnUse">'
            '<rect width="6" height="6" fill="#eeeeee"/><path d="M0,6 L6,0" stroke="#aaaaaa"/></pattern>'
            f'<marker id="arrowhead" markerWidth="8" markerHeight="8" refX="6" refY="4" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{_INK}"/></marker></defs>'
            '<rect width="100%" height="100%" fill="#ffffff"/>'
        )
        return "".join([head, *out, "</svg>"])  # one join: a second copy of a large picture costs what it weighs


# ---- SVG pieces ------------------------------------------------------------------------------------


def _text(x, y, text, anchor="middle", **attributes):
    extra = "".join(f' {k}="{v}"' for k, v in attributes.items())
    text = html.escape(str(text))
    if not text.isascii():  # as character references, "…" keeps the document ASCII: a byte a character, not two
        text = text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    anchor = "" if anchor is None else f' text-anchor="{anchor}"'
    return f'<text x="{x}" y="{y}"{anchor}{extra}>{text}</text>'


def _span(x, text, y=None):
    """A ``tspan`` of a ``text`` at ``x`` (and ``y``): a label among others of one row or column."""
    text = html.escape(str(text))
    if not text.isascii():
        text = text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    return f'<tspan x="{x}">{text}</tspan>' if y is None else f'<tspan x="{x}" y="{y}">{text}</tspan>'


def _arrow(x1, y1, x2, y2):
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{_INK}" stroke-width="1.5" '
        'marker-end="url(#arrowhead)"/>'
    )


def _colour(part):
    return _READ if part is None else PALETTE[part % len(PALETTE)]


#: Widths of the characters of labels in the 12-pixel font, at most (DejaVu Sans, the widest of
#: the usual sans-serif fonts: its digits are 0.64 em); a character not listed counts as a digit.
_WIDTHS = {",": 4.0, "\u2026": 12.0, ".": 4.0, "#": 10.0, "?": 6.5}


def _px(text, size=12):
    """An upper bound on the width of ``text`` in pixels in the ``size``-pixel font."""
    return sum(_WIDTHS.get(ch, 7.7) for ch in str(text)) * size / 12


def _shown(label):
    """A cell's label as the SVG draws it: whole where it is short, else its first number and "…"."""
    return label if _px(label) <= 52 else label.split(",")[0].rstrip("\u2026") + "\u2026"


def _tag(left, top, key):
    """A window's number, white on ink, in the top left corner of its outline."""
    return f'<rect x="{left}" y="{top}" width="{3 + 6 * len(str(key))}" height="10" fill="{_INK}"/>' + _text(
        left + 1.5, top + 8.5, key, "start", fill="#ffffff", **{"font-size": 9}
    )


def _sides(ends_top, ends_bottom, ends_left, ends_right, box):
    """The outline of ``box = (left, top, right, bottom)`` in pixels, on the sides where the
    window ends (``ends_*``) only: a window that goes on past a view is left open there."""
    left, top, right, bottom = box
    if ends_top and ends_bottom and ends_left and ends_right:
        return (
            f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" '
            f'stroke="{OUTLINE}" stroke-width="2"/>'
        )
    d = []
    if ends_top:
        d.append(f"M{left} {top}H{right}")
    if ends_bottom:
        d.append(f"M{left} {bottom}H{right}")
    if ends_left:
        d.append(f"M{left} {top}V{bottom}")
    if ends_right:
        d.append(f"M{right} {top}V{bottom}")
    if not d:
        return ""
    return f'<path d="{"".join(d)}" fill="none" stroke="{OUTLINE}" stroke-width="2" stroke-linecap="square"/>'


def _runs(rows, x0, y0, width):
    """``{fill: path}`` of the cells of ``rows`` (``_cells``) that are filled (marked or padding),
    a rectangle per run of cells of one fill in a row."""
    paths = {}
    for r, row in enumerate(rows):
        j = 0
        while j < len(row):
            _, part, kind = row[j]
            if kind == "empty":
                j += 1
                continue
            fill = "url(#padding)" if kind == "padding" else _colour(part)
            end = j + 1
            while end < len(row) and row[end][2] == kind and (kind == "padding" or row[end][1] == part):
                end += 1
            w = (end - j) * width
            paths.setdefault(fill, []).append(f"M{x0 + j * width} {y0 + r * _CELL}h{w}v{_CELL}h-{w}z")
            j = end
    return {fill: "".join(d) for fill, d in paths.items()}


def _cell_width(rows, view):
    """The width of the cells of a view (``rows``: its `Explanation._cells`): its longest label
    drawn, and its last column's number, fit."""
    widest = max((_px(_shown(label)) for row in rows for label, _, kind in row if kind == "mark"), default=0)
    return max(_CELL, math.ceil(widest + 6), math.ceil(_px(view.cells[-1] if view.cells else 0, 11) + 6))


def _view_block(picture, s, view, arrows, width=None):
    """``(width, height, draw)`` of a view: its cells, numbered, with the row and column numbers
    of the tensor, the outlines of the windows of ``s`` over it; ``arrows``: with the arrows of the
    drawn axes' steps beside it; ``width``: its cells' (else `_cell_width`). ``draw(x, y)`` gives
    it at ``(x, y)`` as SVG."""
    lay, rows = picture.layout, picture._cells(s.lead, view)
    width = width or _cell_width(rows, view)
    x0, y0 = max(30, math.ceil(_px(view.rows[-1] if view.rows else 0, 11)) + 14), 14
    right, bottom = x0 + len(view.cells) * width, y0 + len(view.rows) * _CELL
    n = len(picture.grid.sizes)
    row_step, column_step = (picture.grid.steps.get(n - 2), picture.grid.steps.get(n - 1)) if arrows else (None, None)

    def draw(x, y):
        out = [
            f'<g transform="translate({x},{y})" data-view="" data-lead="{",".join(map(str, s.lead))}" '
            f'data-rows="{view.rows.start} {view.rows.stop - 1}" data-cells="{view.cells.start} {view.cells.stop - 1}" '
            f'data-origin="{x + x0} {y + y0}" data-cell="{width} {_CELL}">',
            f'<text y="10" fill="{_GREY}" font-size="11" text-anchor="middle">',
            *(_span(x0 + k * width + width // 2, j) for k, j in enumerate(view.cells)),
            "</text>",
            f'<text fill="{_GREY}" font-size="11" text-anchor="end">',
            *(_span(x0 - 6, r, y0 + k * _CELL + _CELL // 2 + 4) for k, r in enumerate(view.rows)),
            "</text>",
            f'<rect x="{x0}" y="{y0}" width="{right - x0}" height="{bottom - y0}" fill="#ffffff"/>',
        ]
        out += [f'<path d="{d}" fill="{fill}"/>' for fill, d in _runs(rows, x0, y0, width).items()]
        lines = [f"M{x0 + k * width + 0.5} {y0}V{bottom}" for k in range(len(view.cells) + 1)]
        lines += [f"M{x0} {y0 + k * _CELL + 0.5}H{right}" for k in range(len(view.rows) + 1)]
        out.append(f'<path d="{"".join(lines)}" stroke="#999999" fill="none"/>')
        for k, row in enumerate(rows):  # a row's labels: one text, a span a cell (as few bytes as may be)
            spans = [
                _span(x0 + j * width + width // 2, _shown(label))
                for j, (label, _, kind) in enumerate(row)
                if kind == "mark"
            ]
            if spans:
                out.append(
                    f'<text y="{y0 + k * _CELL + 17}" font-size="12" text-anchor="middle">{"".join(spans)}</text>'
                )
        for box in s.boxes:
            (r0, r1), c0, c1 = box.rows, lay.cell(box.columns[0]), lay.cell(box.columns[1])
            top, low = max(r0, view.rows.start), min(r1, view.rows.stop - 1)
            first, last = max(c0, view.cells.start), min(c1, view.cells.stop - 1)
            if top > low or first > last:
                continue
            left, far = x0 + (first - view.cells.start) * width, x0 + (last + 1 - view.cells.start) * width
            upper, lower = y0 + (top - view.rows.start) * _CELL, y0 + (low + 1 - view.rows.start) * _CELL
            ends = (top == r0, low == r1, first == c0, last == c1)
            piece = _sides(*ends, (left, upper, far, lower))
            if piece:
                out.append(f'<g data-window="{"" if box.key is None else box.key}">{piece}</g>')
            if box.key is not None and ends[0] and ends[2]:
                out.append(_tag(left, upper, box.key))
            up, leftwards = box.flips
            # A window read backwards: an arrow up its right edge, or left along its bottom edge.
            if up and ends[3]:
                out.append(_arrow(far - 5, lower - 4, far - 5, upper + 12))
            if leftwards and ends[1]:
                out.append(_arrow(far - 4, lower - 5, left + 4, lower - 5))
        # Arrows in the direction each drawn axis is read: up or left where the step is negative.
        if row_step and len(view.rows) > 1:
            ends = (y0 + 4, bottom - 4) if row_step > 0 else (bottom - 4, y0 + 4)
            out.append(_arrow(right + 10, ends[0], right + 10, ends[1]))
        if column_step and len(view.cells) > 1:
            ends = (x0 + 4, right - 4) if column_step > 0 else (right - 4, x0 + 4)
            out.append(_arrow(ends[0], bottom + 8, ends[1], bottom + 8))
        out.append("</g>")
        return "".join(out)

    return right + (20 if row_step else 2), bottom + (14 if column_step else 2), draw


def _groups(picture, s):
    """``(width, height, draw)`` per group of views of ``s`` (the views of one window: one, or
    its corners as they lie, dots between them); for a slice drawn whole, its one view."""
    blocks, gap = [], 22
    for _, views in itertools.groupby(s.views, key=lambda v: v.group):
        views = list(views)  # the corners of a window: cells of one width, so that their columns line up
        width = max(_cell_width(picture._cells(s.lead, v), v) for v in views)
        placed = {v.at: _view_block(picture, s, v, not s.overview, width) for v in views}
        heights = [max(h for (i, _), (_, h, _) in placed.items() if i == row) for row in range(1 + max(placed)[0])]
        widths = [
            max(w for (_, j), (w, _, _) in placed.items() if j == col) for col in range(1 + max(j for _, j in placed))
        ]

        def draw(x, y, placed=placed, heights=heights, widths=widths):
            out = []
            for (i, j), (_, _, piece) in placed.items():
                out.append(piece(x + sum(widths[:j]) + gap * j, y + sum(heights[:i]) + gap * i))
            if len(widths) > 1:  # the columns between the corners, not drawn
                out.append(_text(x + widths[0] + gap // 2, y + 14 + 3 * _CELL, "\u22ef", fill=_GREY))
            if len(heights) > 1:
                out.append(_text(x + 30, y + heights[0] + gap - 4, "\u22ee", "start", fill=_GREY))
            return "".join(out)

        blocks.append((sum(widths) + gap * (len(widths) - 1), sum(heights) + gap * (len(heights) - 1), draw))
    return blocks


def _overview(picture, s, room):
    """``(width, height, draw)`` of the slice ``s`` whole at a reduced scale, at most ``room``
    pixels wide where that leaves its longest side ``_OVERVIEW / 2`` or more: its cells grey, its
    padding hatched, SPLIT's and JOIN's parts coloured, each window outlined (and numbered, of
    many) and the arrows of the drawn axes' steps."""
    lay, n = picture.layout, len(picture.grid.sizes)
    x0, y0 = max(30, math.ceil(_px(lay.rows - 1, 11)) + 14), 14
    side = _OVERVIEW if room - x0 - 20 < _OVERVIEW // 2 else min(_OVERVIEW, room - x0 - 20)
    scale = min(side / max(lay.rows, 1), side / max(lay.width, 1), 8.0)
    gw, gh = max(2, round(lay.width * scale)), max(12, round(lay.rows * scale))
    sx, sy = gw / max(lay.width, 1), gh / max(lay.rows, 1)
    row_step, column_step = picture.grid.steps.get(n - 2), picture.grid.steps.get(n - 1)

    def span(first, last, scale, origin):  # pixels of cells first to last (inclusive), at least 3 wide
        a, b = origin + round(first * scale), origin + round((last + 1) * scale)
        if b - a < 3:
            a, b = (a + b) // 2 - 1, (a + b) // 2 + 2
        return a, b

    def draw(x, y):
        out = [
            f'<g transform="translate({x},{y})" data-overview="" data-lead="{",".join(map(str, s.lead))}" '
            f'data-origin="{x + x0} {y + y0}" data-scale="{sx!r} {sy!r}" data-size="{lay.rows} {lay.width}">',
            _text(x0, 10, 0, fill=_GREY, **{"font-size": 11}),
            _text(x0 + gw, 10, lay.width - 1, "end", fill=_GREY, **{"font-size": 11}),
            _text(x0 - 6, y0 + 10, 0, "end", fill=_GREY, **{"font-size": 11}),
            _text(x0 - 6, y0 + gh, lay.rows - 1, "end", fill=_GREY, **{"font-size": 11}),
            f'<rect x="{x0}" y="{y0}" width="{gw}" height="{gh}" fill="{_TENSOR}" stroke="#999999"/>',
        ]
        if lay.pitched and lay.width > lay.span:  # the padding at the end of each row
            a = x0 + round(lay.span * sx)
            out.append(f'<rect x="{a}" y="{y0}" width="{x0 + gw - a}" height="{gh}" fill="url(#padding)"/>')
        bands = picture.bands
        if bands is not None:
            drawn = 0
            for k, (start, extent) in enumerate(zip(bands.starts, bands.extents)):
                if not extent or drawn == MAX_KEYED:
                    continue
                drawn += 1
                rows, cells = (0, lay.rows - 1), (0, lay.width - 1)
                if bands.axis == n - 1:
                    cells = (lay.cell(start), lay.cell(start + extent - 1))
                elif bands.axis == n - 2:
                    rows = (start, start + extent - 1)
                elif not start <= s.lead[bands.axis] < start + extent:
                    continue
                (a, b), (c, d) = span(*cells, sx, x0), span(*rows, sy, y0)
                out.append(f'<rect x="{a}" y="{c}" width="{b - a}" height="{d - c}" fill="{_colour(k)}"/>')
        for box in s.boxes:
            (a, b), (c, d) = span(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0), span(*box.rows, sy, y0)
            fill = f'fill="{_READ}"' if box.key is None else f'fill="{_colour(box.key)}" fill-opacity="0.5"'
            out.append(f'<rect x="{a}" y="{c}" width="{b - a}" height="{d - c}" {fill}/>')
        for box in s.boxes:
            (a, b), (c, d) = span(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0), span(*box.rows, sy, y0)
            key = "" if box.key is None else box.key
            out.append(f'<g data-window="{key}">{_sides(True, True, True, True, (a, c, b, d))}</g>')
        for box in s.boxes:
            if box.key is not None:
                (a, _), (c, _) = (
                    span(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0),
                    span(*box.rows, sy, y0),
                )
                out.append(_tag(a, c, box.key))
        if row_step and lay.rows > 1:
            ends = (y0 + 4, y0 + gh - 4) if row_step > 0 else (y0 + gh - 4, y0 + 4)
            out.append(_arrow(x0 + gw + 10, ends[0], x0 + gw + 10, ends[1]))
        if column_step and lay.width > 1:
            ends = (x0 + 4, x0 + gw - 4) if column_step > 0 else (x0 + gw - 4, x0 + 4)
            out.append(_arrow(ends[0], y0 + gh + 8, ends[1], y0 + gh + 8))
        out.append("</g>")
        return "".join(out)

    return x0 + gw + 20, y0 + gh + 14, draw


# ---- what is drawn: the slices, and their views at cell scale ------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Layout:
    """How a grid is laid out in cells: the sizes of its leading dimensions (``slices`` 2-D
    slices), the rows and columns of each slice and their element strides, whether rows are
    drawn at their pitch (padding hatched) and the width of a row in cells (elements and
    padding)."""

    lead: tuple[int, ...]
    rows: int
    row_stride: int
    columns: int
    column_stride: int
    pitched: bool
    width: int

    @property
    def slices(self) -> int:
        return math.prod(self.lead)

    @property
    def span(self) -> int:
        """The cells from a row's first element to its last."""
        return (self.columns - 1) * self.column_stride + 1 if self.pitched else self.columns

    def cell(self, column):
        """The cell of ``column`` in its row."""
        return column * self.column_stride if self.pitched else column

    def columns_in(self, cells: range) -> range:
        """The columns whose cells are in ``cells``."""
        if self.pitched:  # column c is cell c * column_stride
            step = self.column_stride
            return range(-(-cells.start // step), min(self.columns, -(-cells.stop // step)))
        return range(cells.start, min(cells.stop, self.columns))

    def first_leads(self) -> Iterator[tuple[int, ...]]:
        """The first ``MAX_SLICES`` leading index tuples, in row-major order: they take no index
        past ``MAX_SLICES - 1`` in any axis, so a product of short ranges finds them."""
        return itertools.islice(itertools.product(*(range(min(n, MAX_SLICES)) for n in self.lead)), MAX_SLICES)


def _layout(sizes, strides) -> _Layout:
    n_rows = sizes[-2] if len(sizes) > 1 else 1
    n_cols, col_stride = sizes[-1], strides[-1]
    row_stride = strides[-2] if len(sizes) > 1 else 0
    span = (n_cols - 1) * col_stride + 1
    pitched = col_stride > 0 and (n_rows == 1 or row_stride >= span)  # rows apart and in order
    width = (row_stride if n_rows > 1 else span) if pitched else n_cols
    return _Layout(tuple(sizes[:-2]), n_rows, row_stride, n_cols, col_stride, pitched, width)


def _spans(lo, hi, n, fit):
    """The coordinates drawn along an axis of ``n`` to show ``lo`` to ``hi``: all of them and one
    each side where that fits in ``fit``, else the first and the last ``CORNER`` (one outside)."""
    if hi - lo + 3 <= fit:
        return [(max(lo - 1, 0), min(hi + 1, n - 1))]
    return [(max(lo - 1, 0), lo + CORNER - 1), (hi - CORNER + 1, min(hi + 1, n - 1))]


def _insets(lay, boxes, budget):
    """The views of a slice larger than one view: each window's cells (the first
    ``MAX_INSET_WINDOWS`` of ``boxes`` that the views before do not show, within ``budget``
    cells), else its top left corner."""
    views, used = [], 0
    for box in boxes:
        group = len({v.group for v in views})
        if group == MAX_INSET_WINDOWS:
            break
        c0, c1 = lay.cell(box.columns[0]), lay.cell(box.columns[1])
        if any(
            v.rows.start <= box.rows[0] and box.rows[1] < v.rows.stop and v.cells.start <= c0 and c1 < v.cells.stop
            for v in views
        ):
            continue  # drawn whole already
        rows, cells = _spans(*box.rows, lay.rows, MAX_ROWS), _spans(c0, c1, lay.width, MAX_COLUMNS)
        new = [
            _View(range(a, b + 1), range(c, d + 1), group, (i, j))
            for i, (a, b) in enumerate(rows)
            for j, (c, d) in enumerate(cells)
        ]
        cost = sum(len(v.rows) * len(v.cells) for v in new)
        if views and used + cost > budget:
            break
        views, used = views + new, used + cost
    return views or [_View(range(min(lay.rows, MAX_ROWS)), range(min(lay.width, MAX_COLUMNS)))]


def _plan(lay, candidates: Iterable[tuple[tuple[int, ...], list[_Box]]]) -> list[_Slice]:
    """The slices drawn, of ``candidates`` (lazily: a leading index and the windows outlined in
    its slice, in the order to draw them): while there are at most ``MAX_SLICES``, at most
    ``MAX_LARGE_SLICES`` of them with an overview, and ``MAX_CELLS`` cells drawn at cell scale
    (the first slice whatever its cells). None read: the first slice, from its top left corner."""
    small = lay.rows <= MAX_ROWS and lay.width <= MAX_COLUMNS
    slices, cells = [], 0
    for lead, boxes in candidates:
        if len(slices) == (MAX_SLICES if small else MAX_LARGE_SLICES):
            break
        views = [_View(range(lay.rows), range(lay.width))] if small else _insets(lay, boxes, MAX_CELLS - cells)
        cost = sum(len(v.rows) * len(v.cells) for v in views)
        if slices and cells + cost > MAX_CELLS:
            break
        slices.append(_Slice(lead, tuple(boxes), tuple(views), not small))
        cells += cost
    if not slices and lay.slices:
        lead = next(lay.first_leads())
        views = [_View(range(lay.rows), range(lay.width))] if small else _insets(lay, [], MAX_CELLS)
        slices.append(_Slice(lead, (), tuple(views), not small))
    return slices


def _in_sets(lo, hi, mags, d, i):
    """Per window, whether it reads coordinate ``i`` of dimension ``d`` (``lo`` to ``hi``, ``mags`` apart)."""
    return (lo[:, d] <= i) & (i <= hi[:, d]) & ((i - lo[:, d]) % mags[:, d] == 0)


def _read_leads(lo, hi, mags) -> Iterator[tuple[int, ...]]:
    """The leading index tuples some window reads, in row-major order, lazily: window ``k`` reads
    along leading dimension ``d`` the coordinates ``lo[k, d]`` to ``hi[k, d]``, ``mags[k, d]``
    apart (``(N, D)`` arrays). Each is the least over the windows of the least tuple a window reads
    past the one before: the one before up to a dimension ``p`` (all read), a coordinate read past
    its own at ``p``, the first coordinates read after (the last such ``p`` gives the least)."""
    n, dims = lo.shape
    if not n:
        return
    if not dims:
        yield ()
        return
    current = lo[np.lexsort(lo.T[::-1])[0]]  # the least of the windows' first tuples
    while True:
        yield tuple(int(i) for i in current)
        best, found, prefix = lo.copy(), np.zeros(n, bool), np.ones(n, bool)
        for p in range(dims):
            after = current[p] + 1
            nxt = lo[:, p] + np.maximum(0, -((lo[:, p] - after) // mags[:, p])) * mags[:, p]
            ok = prefix & (nxt <= hi[:, p])
            best[ok, :p], best[ok, p], best[ok, p + 1 :] = current[:p], nxt[ok], lo[ok, p + 1 :]
            found |= ok
            prefix &= _in_sets(lo, hi, mags, p, current[p])
        if not found.any():
            return
        chosen = best[found]
        current = chosen[np.lexsort(chosen.T[::-1])[0]]


def _extent(window):
    """``(lo, hi, |step|)`` of the coordinates a window ``(start, step, count)`` reads along a
    dimension (a step of 0 reads one)."""
    start, step, count = window
    last = start + step * (count - 1)
    return min(start, last), max(start, last), abs(step) or 1


def _window_slices(lay, windows):
    """The slices drawn of a copy's one window: the first slices it reads, it outlined on each."""
    n = len(windows)
    if not n or any(count < 1 for _, _, count in windows):
        return _plan(lay, ((lead, []) for lead in lay.first_leads()))
    lo, hi, mags = (np.array([values], dtype=np.int64) for values in zip(*map(_extent, windows)))
    box = _Box(None, (int(lo[0, n - 2]), int(hi[0, n - 2])) if n > 1 else (0, 0), (int(lo[0, -1]), int(hi[0, -1])))
    d = max(n - 2, 0)
    return _plan(lay, ((lead, [box]) for lead in _read_leads(lo[:, :d], hi[:, :d], mags[:, :d])))


def _aliased(sizes, strides) -> bool:
    """Whether two coordinates of the grid share an element offset."""
    return overlaps_itself(sizes, strides, 1)


# ---- marks from the geometry that runs ----------------------------------------------------------
# A window ``(start, step, count)`` per dimension of the grid pairs element ``c`` of the other
# side with coordinate ``start + step * c`` of the grid, as the descriptors lower it; the other
# side's row-major index of ``c`` is ``sum(c_d * mults_d)``. Marks are made for the cells drawn
# at cell scale only (the views of the slices drawn): per cell from its coordinate where the
# grid's offsets are unique, and per offset drawn by a bounded search where several coordinates
# share one (an aliased input).

#: Steps the searches of one picture of an aliased grid may take in all (see `_Search`).
_SEARCH_STEPS = 100_000


def _label(ks):
    """A gather cell's label: the first three row-major indices that read it, "…" for more."""
    return str(ks[0]) if len(ks) == 1 else ",".join(map(str, ks[:3])) + ("…" if len(ks) > 3 else "")


def _combine(a, b):
    """The first four sums of ``a`` (sums for the dimensions before, in row-major order) and
    ``b`` (one dimension's terms, ascending) in row-major order: row-major order visits only
    the first four of each before the fourth sum, so four of each are all that is kept."""
    if len(a) == 1 and len(b) == 1:
        return (a[0] + b[0],)
    return tuple(itertools.islice((x + y for x in a for y in b), 4))


def _candidates(window, mult, i):
    """The terms ``c * mult`` (ascending, at most four) of the ``c`` with ``start + step * c == i``."""
    start, step, count = window
    if step == 0:
        return tuple(c * mult for c in range(min(count, 4))) if i == start else ()
    c, off = divmod(i - start, step)
    return (c * mult,) if off == 0 and 0 <= c < count else ()


def _cell_marks(strides, terms, mark, lay, slices):
    """The marks of the cells drawn of a grid whose offsets are unique: ``terms(d, i)`` gives
    a coordinate's terms along dimension ``d`` (ascending; none: the cell is unmarked), and
    ``mark`` turns a cell's first sums (`_combine`) into its ``(label, part)``."""
    n, marks = len(strides), {}
    for s in slices:
        sums, base = (0,), 0
        for d, i in enumerate(s.lead):
            sums, base = _combine(sums, terms(d, i)), base + i * strides[d]
        if not sums:
            continue
        for view in s.views:
            columns = [(c * lay.column_stride, terms(n - 1, c)) for c in lay.columns_in(view.cells)]
            columns = [(o, t) for o, t in columns if t]
            rows = [(r * lay.row_stride, terms(n - 2, r)) for r in view.rows] if n > 1 else [(0, (0,))]
            for row_offset, row_terms in rows:
                row_sums = _combine(sums, row_terms) if row_terms else ()
                if row_sums:
                    at = base + row_offset
                    for column_offset, column_terms in columns:
                        marks[at + column_offset] = mark(_combine(row_sums, column_terms))
    return marks


def _offset_marks(strides, mark, lay, slices):
    """The marks of the cells drawn of an aliased grid: ``mark(offset)`` once per offset drawn,
    its ``(label, part)`` or None."""
    marks, seen = {}, set()
    for s in slices:
        base = sum(i * s for i, s in zip(s.lead, strides))
        for view in s.views:
            for r in view.rows:
                for c in lay.columns_in(view.cells):
                    offset = base + r * lay.row_stride + c * lay.column_stride
                    if offset not in seen:
                        seen.add(offset)
                        found = mark(offset)
                        if found is not None:
                            marks[offset] = found
    return marks


class _OutOfSteps(Exception):
    pass


class _Search:
    """Solutions ``x`` of ``sum(e_d * x_d) == target`` with ``0 <= x_d < n_d``, lazily and in
    row-major order (or its reverse): which indices reach one element offset of an aliased
    layout, without visiting the others. A dimension is searched only over the ``x_d`` that
    leave the rest reachable (within the rest's range, and in the residue class the rest's
    gcd allows); one of ``e_d = 0`` (a stride of 0) is searched once for all its ``x_d``. Dead
    ends remain possible where the rest's range has gaps, so the searches of one picture share
    ``_SEARCH_STEPS`` steps; a search past them raises `_OutOfSteps`."""

    def __init__(self, steps=_SEARCH_STEPS):
        self.left = steps

    def solutions(self, terms, target, reverse=False):
        n = len(terms)
        if any(m < 1 for _, m in terms):
            return
        low, high, gcd = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)  # of the sum over dimensions d...
        for d in reversed(range(n)):
            e, m = terms[d]
            reach = e * (m - 1)
            low[d], high[d], gcd[d] = low[d + 1] + min(reach, 0), high[d + 1] + max(reach, 0), math.gcd(gcd[d + 1], e)

        def walk(d, t):
            self.left -= 1
            if self.left < 0:
                raise _OutOfSteps
            if not low[d] <= t <= high[d] or (gcd[d] and t % gcd[d]):
                return
            if d == n:
                yield ()
                return
            e, m = terms[d]
            if e == 0:  # every x_d leaves the same rest
                if next(walk(d + 1, t), None) is None:
                    return
                for x in range(m - 1, -1, -1) if reverse else range(m):
                    for rest in walk(d + 1, t):
                        yield (x, *rest)
                return
            if e > 0:
                first, last = -((high[d + 1] - t) // e), (t - low[d + 1]) // e
            else:
                first, last = -((t - low[d + 1]) // -e), (high[d + 1] - t) // -e
            first, last = max(first, 0), min(last, m - 1)
            # e * x = t (mod the rest's gcd): x = x0 (mod period); gcd[d] divides t (checked above).
            h = math.gcd(e, gcd[d + 1]) or 1
            period = gcd[d + 1] // h or 1
            x0 = (t // h) * pow(e // h, -1, period) % period
            if reverse:
                xs = range(last - (last - x0) % period, first - 1, -period)
            else:
                xs = range(first + (x0 - first) % period, last + 1, period)
            for x in xs:
                for rest in walk(d + 1, t - e * x):
                    yield (x, *rest)

        yield from walk(0, target)


def _window_marks(sizes, strides, windows, mults, lay, slices):
    """Per cell drawn of the grid ``(sizes, strides)``, the row-major indices (with ``mults``)
    of the elements ``c`` of the other side paired with it through ``windows``, as `_label`s."""
    if not _aliased(sizes, strides):
        terms = lambda d, i: _candidates(windows[d], mults[d], i)  # noqa: E731
        return _cell_marks(strides, terms, lambda ks: (_label(ks), None), lay, slices)
    terms = [(s * step, count) for s, (_, step, count) in zip(strides, windows)]
    base, search = sum(s * start for s, (start, _, _) in zip(strides, windows)), _Search()

    def mark(offset):  # every index reaching the offset, whatever its coordinate: as what ran merged them
        ks = []
        try:
            for c in itertools.islice(search.solutions(terms, offset - base), 4):
                ks.append(sum(x * m for x, m in zip(c, mults)))
        except _OutOfSteps:
            return (_label(ks[:3]) + "…" if ks else "?", None)
        return (_label(ks), None) if ks else None

    return _offset_marks(strides, mark, lay, slices)


def _steps(windows, aliased):
    """The signed step each axis of the grid is walked with (where it is walked: more than one
    element taken, a non-zero step); none where the grid is aliased (no unique walk)."""
    if aliased or math.prod(count for _, _, count in windows) < 2:
        return {}
    return {d: step for d, (_, step, count) in enumerate(windows) if count > 1 and step != 0}


def _distinct(terms):
    """How many values ``sum(e_d * x_d)`` takes for ``0 <= x_d < n_d``, or None where that is not
    quickly told. Sorted by ``|e_d|``, each term either extends an arithmetic progression the
    values so far form (a multiple of its step, at most its length apart) or lies past them all
    (multiplying their number); otherwise, where the values span at most ``2**20``, a bitset of
    them is shifted and or-ed (``log2(n_d)`` times a dimension)."""
    if any(m < 1 for _, m in terms):
        return 0
    dims = sorted((abs(e), m) for e, m in terms if e and m > 1)
    count, top, progression = 1, 0, (1, 1)  # the values are {step * k : k < length} while progression
    for e, m in dims:
        if progression and (progression[1] == 1 or (e % progression[0] == 0 and e // progression[0] <= progression[1])):
            step = e if progression[1] == 1 else progression[0]
            length = progression[1] + (e // step) * (m - 1)
            progression, count, top = (step, length), length, step * (length - 1)
        elif e > top:
            progression, count, top = None, count * m, top + e * (m - 1)
        else:
            break
    else:
        return count
    span = 1 + sum(e * (m - 1) for e, m in dims)
    if span > 2**20:
        return None
    values = np.zeros(span, bool)
    values[0] = True
    for e, m in dims:  # values + e * {0 .. m - 1}, as unions of runs of doubling length
        run, length, at, union = values, 1, 0, np.zeros(span, bool)
        while m:
            if m & 1:
                union[e * at :] |= run[: span - e * at]
                at += length
            if m > 1:
                run = run.copy()
                run[e * length :] |= run[: span - e * length]
                length *= 2
            m >>= 1
        values = union
    return int(values.sum())


def _mults(shape, axis_map):
    """Per dimension of the windows, its weight in the row-major index of ``shape`` (0 where an
    integer index dropped it)."""
    packed = packed_strides(shape)
    return tuple(0 if a is None else packed[a] for a in axis_map)


def _gather(title, windows, mults, sizes, strides, source):
    """A copy's picture: output element ``c`` (row-major index ``sum(c * mults)``) reads the
    grid ``(sizes, strides)`` of ``source`` at ``start + step * c`` per dimension; each cell read
    is numbered with its readers."""
    aliased, lay = _aliased(sizes, strides), _layout(sizes, strides)
    slices = _window_slices(lay, windows)
    marks = _window_marks(sizes, strides, windows, mults, lay, slices)
    grid = _Grid(tuple(sizes), tuple(strides), marks, _steps(windows, aliased))
    if aliased:
        read = _distinct([(s * step, count) for s, (_, step, count) in zip(strides, windows)])
    else:
        read = math.prod(count if step else min(count, 1) for _, step, count in windows)
    if read is None:
        read = f"at most {math.prod(count for _, _, count in windows)}"
    total = math.prod(sizes)
    legend = f"{read} of {total} cells of {source} read; each is numbered with the output elements that read it"
    return Explanation(title, grid, [legend], lay, slices)


def _scatter(title, windows, mults, sizes, strides, dy):
    """A gradient's picture: element ``c`` of ``dy`` (row-major index ``sum(c * mults)``) lands
    at ``start + step * c`` of the grid ``(sizes, strides)``; each cell shows what it receives."""
    lay = _layout(sizes, strides)
    slices = _window_slices(lay, windows)
    marks = _window_marks(sizes, strides, windows, mults, lay, slices)  # an output: unaliased, one element of dy a cell
    grid = _Grid(tuple(sizes), tuple(strides), marks, _steps(windows, _aliased(sizes, strides)))
    return Explanation(title, grid, [f"each cell shows the element of {dy} it receives; . receives 0"], lay, slices)


def _parts(title, sizes, strides, axis, parts, split):
    """SPLIT's picture (``split``) or JOIN's of the grid ``(sizes, strides)``, each cell showing
    the part it goes to (comes from): ``parts``, per part what its label says and its sizes,
    whose extent along ``axis`` it covers after the parts before it (an empty part covers none)."""
    extents = [part_sizes[axis] for _, part_sizes in parts]
    starts = list(itertools.accumulate(extents, initial=0))[:-1]
    lay = _layout(sizes, strides)
    slices = _plan(lay, ((lead, []) for lead in lay.first_leads()))

    def part_of(i):  # the last part starting at or before i: the non-empty one
        return bisect.bisect_right(starts, i) - 1

    if not _aliased(sizes, strides):
        terms = lambda d, i: (part_of(i),) if d == axis else (0,)  # noqa: E731
        marks = _cell_marks(strides, terms, lambda ks: (str(ks[0]), ks[0]), lay, slices)
    else:  # an aliased input: an element goes to each part of its coordinates, drawn in the last
        order = [axis, *(d for d in range(len(sizes)) if d != axis)]
        terms, search = [(strides[d], sizes[d]) for d in order], _Search()

        def mark(offset):
            try:
                k = part_of(next(search.solutions(terms, offset, reverse=True))[0])
            except _OutOfSteps:
                return ("?", None)
            return (str(k), k)

        marks = _offset_marks(strides, mark, lay, slices)
    legend = f"each cell shows the part it {'goes to' if split else 'comes from'}"
    bands = _Bands(axis, tuple(starts), tuple(extents))
    labels = [f"part {k}: {said}" for k, (said, _) in enumerate(parts)]
    return Explanation(title, _Grid(tuple(sizes), tuple(strides), marks), [legend], lay, slices, labels, bands)


# ---- many windows: slice1_batch and its gradient -----------------------------------------------
# Window ``n`` reads, along each dimension of the grid, the coordinates ``lo[n, d]`` to
# ``hi[n, d]`` that are ``|steps[n, d]|`` apart (both ends are read). The slices drawn are the
# first that a window reads; the first ``MAX_OUTLINES`` (slice, window) pairs in that order are
# outlined, and a slice larger than a view is drawn no further once they are. Which windows read
# a coordinate drawn is a bitset over the windows per dimension; a cell's windows are the AND of
# its coordinates' bitsets and its label their first set bits. So a picture costs its cells
# (at most ``MAX_CELLS``) times the windows / 64 word operations, however the windows overlap.


def _bits(mask):
    """The bool vector ``mask`` as a bitset: bit ``j % 64`` of word ``j // 64`` is ``mask[j]``."""
    packed = np.packbits(mask, bitorder="little")
    return np.pad(packed, (0, -len(packed) % 8)).view("<u8")


def _first_bits(bits, k):
    """Per row of the bitsets ``bits`` (which it clears), the indices of its first ``k`` set bits."""
    found = [[] for _ in range(len(bits))]
    for _ in range(k):
        nonzero = bits != 0
        rows = np.flatnonzero(nonzero.any(axis=1))
        if not len(rows):
            break
        words = nonzero[rows].argmax(axis=1)
        word = bits[rows, words]
        lowest = word & (~word + np.uint64(1))  # two's complement: the lowest set bit alone
        bits[rows, words] = word ^ lowest
        # A power of two is exact as a float, 2**b = 0.5 * 2**(b + 1): frexp gives b + 1.
        indices = words * 64 + np.frexp(lowest.astype(np.float64))[1] - 1
        for r, j in zip(rows.tolist(), indices.tolist()):
            found[r].append(j)
    return found


def _batch_marks(lay, strides, lo, hi, mags, slices, insides):
    """The marks of the cells drawn of a packed grid that ``(N, ndim)`` windows (``lo``, ``hi``,
    ``mags``, as above) read (``insides``: per slice drawn, the windows that read it): each
    numbered with the windows that read it (`_label`) and coloured as the first."""
    n, relevant = len(strides), np.zeros(len(lo), bool)
    for s, inside in zip(slices, insides):  # the windows that read a cell of a view
        for view in s.views:
            columns = lay.columns_in(view.cells)
            near = inside & (lo[:, -1] < columns.stop) & (hi[:, -1] >= columns.start)
            if n > 1:
                near &= (lo[:, -2] < view.rows.stop) & (hi[:, -2] >= view.rows.start)
            relevant |= near
    ids = np.flatnonzero(relevant)
    if not len(ids):
        return {}
    names = ids.tolist()  # each bit's window
    lo, hi, mags, cache = lo[ids], hi[ids], mags[ids], {}

    def reads(d, i):  # which windows read coordinate i of dimension d, as a bitset
        if (d, i) not in cache:
            cache[d, i] = _bits(_in_sets(lo, hi, mags, d, i))
        return cache[d, i]

    marks = {}
    for s, inside in zip(slices, insides):
        base, lead_bits = sum(i * m for i, m in zip(s.lead, strides)), _bits(inside[ids])
        for view in s.views:
            rows, columns = list(view.rows) if n > 1 else [0], list(lay.columns_in(view.cells))
            if not rows or not columns:
                continue
            row_bits = np.array([reads(n - 2, r) for r in rows]) & lead_bits if n > 1 else lead_bits[None]
            column_bits = np.array([reads(n - 1, c) for c in columns])
            cells = row_bits[:, None, :] & column_bits[None, :, :]
            found = _first_bits(cells.reshape(-1, cells.shape[-1]), 4)  # `_label`: three, and "…" for a fourth
            at = [base + r * lay.row_stride + c * lay.column_stride for r in rows for c in columns]
            for offset, ks in zip(at, found):
                if ks:
                    ks = [names[j] for j in ks]
                    marks[offset] = (_label(ks), ks[0])
    return marks


def _window_lines(operation, counts):
    """The first ``MAX_LISTED`` windows, a line each (with the axes they flip: a negative step
    and more than one element taken), and how many more there are."""
    n, d = operation.offsets.shape
    sizes, strides = (np.broadcast_to(a, (n, d)) for a in (operation.sizes, operation.strides))
    lines = []
    for k in range(min(n, MAX_LISTED)):
        offsets, size, stride, count = (tuple(map(int, a[k])) for a in (operation.offsets, sizes, strides, counts))
        flips = [a for a in range(d) if stride[a] < 0 and count[a] > 1]
        line = f"window {k}: offsets {offsets}, sizes {size}, strides {stride} -> {count}"
        if flips:
            line += f"; flips {'axes' if len(flips) > 1 else 'axis'} {', '.join(map(str, flips))}"
        lines.append(line)
    if n > MAX_LISTED:
        lines.append(f"... and {n - MAX_LISTED} more windows")
    return lines


def _batch(title, shape, operation, counts, legend):
    """The picture of ``operation``'s windows (a ``Slice1Batch`` or its gradient's, which take
    ``counts`` elements, `check`'s) on the grid ``shape``: x, or the gradient's result."""
    n, d = operation.offsets.shape
    steps, counts = np.broadcast_to(operation.strides, (n, d)), np.broadcast_to(counts, (n, d))
    span = np.abs(steps) * (counts - 1)  # from the first coordinate read to the last
    lo = window_start(operation.offsets, operation.sizes, steps) - span * (steps < 0)  # the first read
    hi = lo + span
    if operation.per_sample:  # window k reads sample k: x[k] is slice k of x's grid
        samples = np.arange(n, dtype=np.int64)[:, None]
        lo, hi, steps = np.hstack([samples, lo]), np.hstack([samples, hi]), np.hstack([np.ones_like(samples), steps])
        legend = [*legend, "per_sample: window k reads x[k]; its offsets, sizes and strides are along x[k]'s axes"]
    lo, hi, steps = (np.asarray(a, np.int64).reshape(n, len(shape)) for a in (lo, hi, steps))
    hi = np.where((counts > 0).all(axis=1)[:, None], hi, lo - 1)  # a window of no element reads nothing
    mags, ndim, strides = np.abs(steps), len(shape), packed_strides(shape)
    lay, dims = _layout(shape, strides), max(len(shape) - 2, 0)
    flips = [(steps[:, a] < 0) & (hi[:, a] > lo[:, a]) if a >= 0 else np.zeros(n, bool) for a in (ndim - 2, ndim - 1)]
    valid = (hi >= lo).all(axis=1)
    small = lay.rows <= MAX_ROWS and lay.width <= MAX_COLUMNS

    def reading(lead):  # the windows that read the slice at lead
        inside = valid.copy()
        for a, i in enumerate(lead):
            inside &= _in_sets(lo, hi, mags, a, i)
        return inside

    def box(k):
        rows = (int(lo[k, -2]), int(hi[k, -2])) if ndim > 1 else (0, 0)
        return _Box(int(k), rows, (int(lo[k, -1]), int(hi[k, -1])), (bool(flips[0][k]), bool(flips[1][k])))

    def candidates():
        # A slice is drawn where it shows a window not yet outlined (of one window per sample,
        # each sample's first slice); once MAX_OUTLINES are, only slices drawn whole follow.
        outlined, ids, done, skipped = 0, np.flatnonzero(valid), np.zeros(n, bool), 0
        for lead in _read_leads(lo[ids, :dims], hi[ids, :dims], mags[ids, :dims]) if 0 not in shape else ():
            if (outlined == MAX_OUTLINES and not small) or skipped == _MAX_SKIPPED:
                return
            inside = reading(lead)
            if not (inside & ~done).any():
                skipped += 1
                continue
            here = np.flatnonzero(inside)[: MAX_OUTLINES - outlined]
            outlined += len(here)
            done[here] = True
            yield lead, [box(k) for k in here]

    slices = _plan(lay, candidates())
    insides = [reading(s.lead) for s in slices]
    marks = _batch_marks(lay, strides, lo, hi, mags, slices, insides) if 0 not in shape else {}
    seen = np.logical_or.reduce(insides) if insides else np.zeros(n, bool)
    outlined = sum(len(s.boxes) for s in slices)
    outlines = _Outlines(
        [[(b.key, b.rows, b.columns, b.flips) for b in s.boxes] for s in slices],
        int(sum(inside.sum() for inside in insides)) - outlined,
        n - int(seen.sum()),
    )
    if outlines.drawn < n:
        legend = [legend[0], f"{n} windows; {outlines.drawn} drawn, outlined and numbered", *legend[1:]]
    grid = _Grid(tuple(shape), strides, marks)
    return Explanation(title, grid, [*legend, *_window_lines(operation, counts)], lay, slices, outlines=outlines)


# ---- tensors ---------------------------------------------------------------------------------------


def _of_tensor(tensor):
    """The `Explanation` of a tensor: its elements numbered in row-major order, padding hatched;
    an element that several coordinates reach shows the last of them."""
    sizes, strides = tensor.sizes, tensor.effective_strides
    mults, lay = packed_strides(sizes), _layout(sizes, strides)
    slices = _plan(lay, ((lead, []) for lead in lay.first_leads()))
    if not _aliased(sizes, strides):
        marks = _cell_marks(strides, lambda d, i: (i * mults[d],), lambda ks: (str(ks[0]), None), lay, slices)
    else:
        terms, search = list(zip(strides, sizes)), _Search()

        def mark(offset):
            try:
                last = next(search.solutions(terms, offset, reverse=True))
            except _OutOfSteps:
                return ("?", None)
            return (str(sum(i * m for i, m in zip(last, mults))), None)

        marks = _offset_marks(strides, mark, lay, slices)
    grid = _Grid(sizes, strides, marks)
    span = last_element_index(sizes, strides) + 1
    legend = (
        f"{tensor.element_count} elements in a span of {span} ({tensor.total_tensor_size_in_bytes} bytes); "
        "each cell shows its element's row-major index"
    )
    return Explanation(f"BufferTensorDesc: {tensor_text(tensor)}", grid, [legend], lay, slices)


# ---- the operators' pictures: of a call or a descriptor, as each operator declares ------------------


@dataclasses.dataclass(frozen=True)
class Call:
    """A call of an array function to draw: ``name``, its first argument ``given`` (the array,
    as an array or its shape, or a list of them), the others by the function's names in its
    order, defaults filled (``arguments``; ``out``, ``stream`` and ``chunks`` left out), and
    ``where`` (who asks, for the messages)."""

    name: str
    given: Any
    arguments: dict[str, Any]
    where: str


#: The dtype a call drawn is validated for, as the function validates it (so a picture raises
#: what the function would).
DTYPE = np.dtype(np.uint32)
_NOT_DRAWN = ("out", "stream", "chunks")  # arguments that play no part in a picture


def _shape(a, where) -> tuple[int, ...]:
    """The shape of ``a``: an array's, or ``a`` given as a shape."""
    return tuple(a.shape) if hasattr(a, "shape") else int_tuple(a, "shape", where)


def _of_one(cls, call):
    """``(operation, shape, results)``: ``call`` of one array normalised as its function does it
    (``cls.of``, the call class, takes the shape, then the other arguments in order), its
    array's shape and its result shapes."""
    shape = _shape(call.given, call.where)
    operation = cls.of(shape, *call.arguments.values())
    return operation, shape, describe(operation, DTYPE, [shape])


def _desc_title(desc):
    return f"{type(desc).__name__}: {desc_summary(desc)}"


def _gather_of_call(operator, call):
    """The cells of x a window reads, each numbered with the output elements that read it."""
    operation, shape, (result,) = _of_one(operator.call, call)
    title, mults = f"cd.{call.name}: x {shape} -> {result}", _mults(result, operation.axis_map)
    return _gather(title, operation.windows, mults, shape, packed_strides(shape), "x")


def _gather_of_desc(desc):
    """The cells of a gather descriptor's (``GatherDesc``) input that its window reads."""
    (x,), (y,) = desc.input_tensors, desc.output_tensors
    mults = packed_strides(y.sizes)
    return _gather(_desc_title(desc), desc.windows, mults, x.sizes, x.effective_strides, "InputTensor")


def _scatter_of_call(operator, call):
    """Each cell of the result showing the element of dy it receives (zeros elsewhere)."""
    operation, shape, (received,) = _of_one(operator.call, call)
    title = f"cd.{call.name}: dy {shape} -> {received}"
    mults = _mults(shape, operation.axis_map)  # dy is indexed as the forward call's result
    return _scatter(title, operation.windows_for(shape), mults, received, packed_strides(received), "dy")


def _scatter_of_desc(desc):
    """Each cell of a gradient descriptor's (SLICE_GRAD's) result showing the element of its
    InputGradientTensor it receives."""
    (dy,), (grid,) = desc.input_tensors, desc.output_tensors
    mults = packed_strides(dy.sizes)
    return _scatter(_desc_title(desc), desc.windows, mults, grid.sizes, grid.effective_strides, "InputGradientTensor")


def _split_of_call(operator, call):
    """Each cell of x showing the part it goes to, each part labelled with its shape."""
    operation, shape, results = _of_one(operator.call, call)
    title = f"cd.{call.name}: x {shape} -> {len(results)} parts along axis {call.arguments['axis']}"  # as given
    return _parts(title, shape, packed_strides(shape), operation.axis, [(s, s) for s in results], split=True)


def _split_of_desc(desc):
    (x,), outs, axis = desc.input_tensors, desc.output_tensors, desc.axis
    title = f"{type(desc).__name__}: {tensor_text(x)} -> {len(outs)} parts along axis {axis}"
    parts = [(tensors_text([t]), t.sizes) for t in outs]
    return _parts(title, x.sizes, x.effective_strides, axis, parts, split=True)


def _join_of_call(operator, call):
    """Each cell of the result showing the part it comes from, each part labelled with its shape."""
    shapes = [_shape(a, call.where) for a in call.given]
    if not shapes:
        raise ValueError(f"{call.name}: needs at least one array to join")
    operation = operator.call.of(shapes[0], *call.arguments.values())  # as `join` calls it; describe checks the rest
    (joined,) = describe(operation, DTYPE, shapes)
    title = f"cd.{call.name}: {len(shapes)} parts along axis {call.arguments['axis']} -> {joined}"  # as given
    return _parts(title, joined, packed_strides(joined), operation.axis, [(s, s) for s in shapes], split=False)


def _join_of_desc(desc):
    ins, (out,), axis = desc.input_tensors, desc.output_tensors, desc.axis
    title = f"{type(desc).__name__}: {len(ins)} parts along axis {axis} -> {tensor_text(out)}"
    parts = [(tensors_text([t]), t.sizes) for t in ins]
    return _parts(title, out.sizes, out.effective_strides, axis, parts, split=False)


def _batch_of_call(operator, call):
    """Many windows: the call validated by its operator (``Picture.drawn``), given the shapes of
    its first argument, one array (or shape) or a list of them."""
    given, where = call.given, call.where
    one = hasattr(given, "shape") or (
        isinstance(given, (tuple, list)) and bool(given) and all(isinstance(v, (int, np.integer)) for v in given)
    )
    what = operator.call.ARGUMENT
    shapes = [_shape(given, where)] if one else [_shape(a, where) for a in arrays.as_list(given, what, call.name)]
    return _batch(*operator.picture.drawn(shapes, one, call.arguments, DTYPE))


#: The picture of a call, and of a descriptor, of each kind (``Picture.kind``).
_OF_CALL = {
    "gather": _gather_of_call,
    "scatter": _scatter_of_call,
    "split": _split_of_call,
    "join": _join_of_call,
    "batch": _batch_of_call,
}
_OF_DESC = {"gather": _gather_of_desc, "scatter": _scatter_of_desc, "split": _split_of_desc, "join": _join_of_desc}


def _declared(operator):
    """``operator``'s picture declaration (``Operator.picture``)."""
    if operator.picture is None:
        raise TypeError(f"explain: {operator.name} has no picture")
    return operator.picture


def _of_desc(desc):
    """The `Explanation` of an operator descriptor, as its operator declares its picture."""
    operator = of_desc(desc)
    kind = _declared(operator).kind
    if kind == "batch":
        raise TypeError(
            f"explain: a {type(desc).__name__}'s windows are data (its table's values), not drawn; "
            f"explain(cd.{operator.name}, ...) draws a call's"
        )
    return _OF_DESC[kind](desc)


def _of_call(fn, args, kwargs):
    """The `Explanation` of ``fn(*args, **kwargs)``, arrays given as shapes (or arrays): the
    call normalised as the function normalises it, and validated for ``DTYPE`` arrays by the
    rules it runs under (so it raises what the function would)."""
    name = fn.__name__
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    (_, given), *rest = [(k, v) for k, v in bound.arguments.items() if k not in _NOT_DRAWN]
    operator = REGISTRY[name]
    return _OF_CALL[_declared(operator).kind](operator, Call(name, given, dict(rest), f"explain(cd.{name})"))


def explain(what: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Draw what an operator does: the cells it reads, in what order, and where they go.

    The picture comes from the geometry that runs: the descriptor's windows (what it lowers to
    its plan), or the call normalised and validated as the array function does it, so it shows
    exactly what runs. It draws the 2-D slices of the tensor (the input of a slice, the result of
    a gradient, the whole of a SPLIT or JOIN) that the windows read, with the cells a window
    reads numbered in output order and outlined, the axes read backwards marked, the padding
    between rows of a descriptor's tensor hatched (``#``) and SPLIT or JOIN parts coloured. A
    slice larger than ``MAX_ROWS`` by ``MAX_COLUMNS`` cells is drawn whole at a reduced scale with
    each window outlined on it, and each window at cell scale where its cells are: whole where it
    fits, else its corners (``CORNER`` cells of each side, with the tensor's row and column
    numbers). Many windows (``slice1_batch`` and its gradient) are sampled: each cell numbered
    with the windows that read it, the first ``MAX_OUTLINES`` windows outlined and numbered, with
    an arrow along a drawn axis they read backwards, the count said, and the first
    ``MAX_LISTED`` listed in the text. In Jupyter it is drawn as SVG (at most ``MAX_BYTES``);
    elsewhere its ``repr`` is the cell-scale part as text. Only what is drawn is computed, at
    most ``MAX_CELLS`` cells: a picture costs about the same whatever the tensor's size (or, for
    many windows, a word operation per 64 windows and cell drawn).

    Parameters
    ----------
    what : descriptor, CompiledOperator, BufferTensorDesc, GraphDesc or array function
        An operator descriptor (``SliceOperatorDesc``, ...), a compiled one, a tensor (drawn
        with its padding), a graph (its nodes, edges and the copies they became), or one of the
        array functions (``cd.slice``, ``cd.split``, ...).
    *args, **kwargs
        For an array function, its arguments, with each array given as its shape (or as the
        array, whose shape is all that is used); ``out`` and ``stream`` are ignored.
        ``slice1_batch_grad``'s ``dy`` is one shape (or array), or a list of them for windows
        of their own sizes.

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
    if isinstance(what, (GraphDesc, CompiledGraph)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return GraphPicture(what if isinstance(what, CompiledGraph) else what.compile(load=False))
    if isinstance(what, CompiledOperator):
        what = what.desc
    if isinstance(what, (OperatorDesc, BufferTensorDesc)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return _of_tensor(what) if isinstance(what, BufferTensorDesc) else _of_desc(what)
    name = getattr(what, "__name__", "")
    if name not in REGISTRY or getattr(arrays, name, None) is not what:
        raise TypeError(
            "explain: takes an operator descriptor, a CompiledOperator, a BufferTensorDesc or a cudadml array "
            f"function, not {what!r}"
        )
    return _of_call(what, args, kwargs)


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


provide("picture", explain)

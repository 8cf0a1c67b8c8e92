"""Reprs and pictures: what a descriptor, a tensor or an array-function call does, drawn.

A picture is drawn from the geometry that runs, not a second formula: a descriptor's windows
(``windows``: per dimension ``(start, step, count)``, what it lowers to its plan) and SPLIT's and
JOIN's parts along their axis; an array function's call normalised and validated as the
function does it (``calls``, ``runner.describe``), whose windows are the descriptor's. Marks are
made only for the cells drawn, so a picture costs what it shows, whatever the tensor's size.
``Explanation`` draws the result as inline SVG for Jupyter (``_repr_html_``) and as text
(``repr``): one grid per 2-D slice of the tensor drawn, padding between rows hatched (``#``),
the cells a window reads numbered in output order, SPLIT and JOIN parts coloured; many windows
(``slice1_batch``) each outlined and numbered, each cell numbered with the windows that read it.
"""

from __future__ import annotations

import bisect
import dataclasses
import html
import inspect
import itertools
import math
from typing import Any

import numpy as np

from . import arrays
from .calls import Join, Slice, Slice1, Slice1Batch, Slice1BatchGrad, SliceGrad, Split, StridedSlice, StridedSliceGrad
from .compiled import CompiledOperator
from .errors import int_tuple
from .hooks import provide
from .operators import _OperatorDesc, desc_summary, tensors_text
from .overlap import overlaps_itself
from .runner import describe
from .tensor import BufferTensorDesc, last_element_index, packed_strides, tensor_text

__all__ = ["Explanation", "explain"]

#: Most 2-D slices, rows and columns drawn; the rest is cut, and the picture says so.
MAX_SLICES, MAX_ROWS, MAX_COLUMNS = 8, 24, 24
#: Of many windows (``slice1_batch``): most outlines drawn, and most windows listed in the text.
MAX_OUTLINES, MAX_LISTED = 24, 8
#: Part colours (ColorBrewer Set3), repeating after ten parts.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd")
_READ = "#cfe3ff"
_INK = "#1f4e9c"  # outlines and arrows
_CELL = 26  # SVG cell size in pixels
_CHAR = 8  # an upper bound on the width of a character of the 13-pixel font
_SCATTERS = ("slice_grad", "strided_slice_grad")


@dataclasses.dataclass
class _Grid:
    """The tensor drawn: its sizes and element strides, and per element offset of a cell drawn
    that is marked, its mark (a label and, for SPLIT and JOIN, a part); ``steps`` maps an axis to
    the signed step it is read with."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    marks: dict[int, tuple[str, int | None]]
    steps: dict[int, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Outlines:
    """The windows outlined in a picture of many windows: per 2-D slice drawn (`_layout`'s
    ``leads``), ``(window, (first row, last row), (first column, last column), (rows flipped,
    columns flipped))`` of each window outlined there, clipped to the cells drawn; and how many
    outlines were left out (past ``MAX_OUTLINES``) and how many windows read no cell drawn."""

    boxes: list[list[tuple[int, tuple[int, int], tuple[int, int], tuple[bool, bool]]]]
    left_out: int
    unseen: int

    @property
    def cut(self) -> list[str]:
        """What the text says was left out (it outlines nothing, so only the windows unseen)."""
        return [f"{self.unseen} windows read no cell drawn"] if self.unseen else []


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
    outlines : _Outlines, optional
        For many windows (``slice1_batch``), the windows to outline, number and give arrows
        where they flip a drawn axis.

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

    def __init__(
        self,
        title: str,
        grid: _Grid,
        legend: list[str],
        parts: list[str] | None = None,
        outline=False,
        outlines: _Outlines | None = None,
    ):
        self.title, self.grid, self.legend, self.parts, self.outline = title, grid, legend, parts or [], outline
        self.outlines = outlines

    def _slices(self):
        """``(caption, rows)`` per 2-D slice drawn; a row is a list of ``(label, part, kind)``
        cells, kind "mark", "empty" or "padding"; and the lines saying what was cut."""
        sizes, strides = self.grid.sizes, self.grid.strides
        lay = _layout(sizes, strides)
        n_rows, n_cols, pitched, width = lay.rows, lay.columns, lay.pitched, lay.width
        cut = []
        if lay.slices > MAX_SLICES:
            cut.append(f"{lay.slices - MAX_SLICES} more 2-D slices not drawn")
        if n_rows > MAX_ROWS:
            cut.append(f"rows {MAX_ROWS} to {n_rows - 1} not drawn")
        if width > MAX_COLUMNS:
            cut.append(f"columns {MAX_COLUMNS} to {width - 1} not drawn")
        slices = []
        for index in lay.leads:
            base = sum(i * s for i, s in zip(index, strides))
            rows = []
            for r in lay.drawn_rows:
                row = []
                for j in range(min(width, MAX_COLUMNS)):
                    if pitched and (j % lay.column_stride or j // lay.column_stride >= n_cols):
                        row.append(("#", None, "padding"))
                        continue
                    offset = base + r * lay.row_stride + (j if pitched else j * lay.column_stride)
                    label, part = self.grid.marks.get(offset, (".", None))
                    row.append((label, part, "empty" if label == "." else "mark"))
                rows.append(row)
            caption = f"[{', '.join(map(str, index))}, :, :]" if len(sizes) > 2 else ""
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
        return "\n".join(lines + cut + (self.outlines.cut if self.outlines else []))

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
        for s, (caption, rows) in enumerate(slices):
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
                out.append(_box(x0, y0, *box))
            for k, (r0, r1), (c0, c1), (up, leftwards) in self.outlines.boxes[s] if self.outlines else ():
                # A window: its outline, its number in the top left corner, and an arrow along
                # each drawn axis it reads backwards (up the right edge, left along the bottom).
                left, top, far, low = x0 + c0 * _CELL, y0 + r0 * _CELL, x0 + (c1 + 1) * _CELL, y0 + (r1 + 1) * _CELL
                out.append(_box(x0, y0, (r0, r1), (c0, c1)))
                out.append(f'<rect x="{left}" y="{top}" width="{3 + 6 * len(str(k))}" height="10" fill="{_INK}"/>')
                out.append(_text(left + 1.5, top + 8.5, k, "start", fill="#ffffff", **{"font-size": 9}))
                if up:
                    out.append(_arrow(far - 5, low - 4, far - 5, top + 12))
                if leftwards:
                    out.append(_arrow(far - 4, low - 5, left + 4, low - 5))
            # Arrows in the direction each drawn axis is read: up or left where the step is negative.
            if row_step and len(rows) > 1:
                ends = (y0 + 4, bottom - 4) if row_step > 0 else (bottom - 4, y0 + 4)
                out.append(_arrow(right + 10, ends[0], right + 10, ends[1]))
            if column_step and len(rows[0]) > 1:
                ends = (x0 + 4, right - 4) if column_step > 0 else (right - 4, x0 + 4)
                out.append(_arrow(ends[0], bottom + 8, ends[1], bottom + 8))
            width, y = max(width, right + 24), bottom + 22
        if self.outlines:
            cut = cut + self.outlines.cut
            if self.outlines.left_out:
                cut.append(f"{self.outlines.left_out} more window outlines not drawn (at most {MAX_OUTLINES})")
        for line in cut:
            out.append(_text(4, y + 4, line, "start", **{"font-style": "italic"}))
            width, y = max(width, _CHAR * len(line) + 8), y + 18
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y}" font-family="sans-serif" '
            'font-size="13"><defs><pattern id="padding" width="6" height="6" patternUnits="userSpaceOnUse">'
            '<rect width="6" height="6" fill="#eeeeee"/><path d="M0,6 L6,0" stroke="#aaaaaa"/></pattern>'
            f'<marker id="arrowhead" markerWidth="8" markerHeight="8" refX="6" refY="4" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{_INK}"/></marker></defs>'
            '<rect width="100%" height="100%" fill="#ffffff"/>'
        )
        return "".join([head, *out, "</svg>"])  # one join: a second copy of a large picture costs megabytes


def _text(x, y, text, anchor="middle", **attributes):
    extra = "".join(f' {k}="{v}"' for k, v in attributes.items())
    text = html.escape(str(text))
    if not text.isascii():  # as character references, "…" keeps the document ASCII: a byte a character, not two
        text = text.encode("ascii", "xmlcharrefreplace").decode("ascii")
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}"{extra}>{text}</text>'


def _arrow(x1, y1, x2, y2):
    return (
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{_INK}" stroke-width="1.5" '
        'marker-end="url(#arrowhead)"/>'
    )


def _box(x0, y0, rows, columns):
    """The outline of the cells ``rows`` by ``columns`` (first and last, inclusive) of a grid
    drawn from ``(x0, y0)``."""
    (r0, r1), (c0, c1) = rows, columns
    return (
        f'<rect x="{x0 + c0 * _CELL}" y="{y0 + r0 * _CELL}" width="{(c1 - c0 + 1) * _CELL}" '
        f'height="{(r1 - r0 + 1) * _CELL}" fill="none" stroke="{_INK}" stroke-width="2"/>'
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


# ---- the cells drawn -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Layout:
    """How `Explanation._slices` lays a grid out: the leading index tuples drawn (the first
    ``MAX_SLICES`` in ``np.ndindex`` order) of ``slices`` in all, the rows and columns of each
    slice and their element strides, whether rows are drawn at their pitch (padding hatched) and
    the width of a row in cells (elements and padding)."""

    leads: tuple[tuple[int, ...], ...]
    slices: int
    rows: int
    row_stride: int
    columns: int
    column_stride: int
    pitched: bool
    width: int

    @property
    def drawn_rows(self) -> range:
        return range(min(self.rows, MAX_ROWS))

    @property
    def drawn_columns(self) -> range:
        """The element columns drawn: those whose cell lies within the first ``MAX_COLUMNS``."""
        if self.pitched:  # column c is cell c * column_stride
            return range(min(self.columns, -(-min(self.width, MAX_COLUMNS) // self.column_stride)))
        return range(min(self.columns, MAX_COLUMNS))


def _layout(sizes, strides) -> _Layout:
    lead = sizes[:-2]
    n_rows = sizes[-2] if len(sizes) > 1 else 1
    n_cols, col_stride = sizes[-1], strides[-1]
    row_stride = strides[-2] if len(sizes) > 1 else 0
    span = (n_cols - 1) * col_stride + 1
    pitched = col_stride > 0 and (n_rows == 1 or row_stride >= span)  # rows apart and in order
    width = (row_stride if n_rows > 1 else span) if pitched else n_cols
    # The first MAX_SLICES index tuples in row-major order take no index past MAX_SLICES - 1 in
    # any axis, so a product of short ranges finds them whatever the axes' sizes.
    firsts = itertools.product(*(range(min(n, MAX_SLICES)) for n in lead))
    leads = tuple(itertools.islice(firsts, MAX_SLICES))
    return _Layout(leads, math.prod(lead), n_rows, row_stride, n_cols, col_stride, pitched, width)


def _aliased(sizes, strides) -> bool:
    """Whether two coordinates of the grid share an element offset."""
    return overlaps_itself(sizes, strides, 1)


# ---- marks from the geometry that runs ----------------------------------------------------------
# A window ``(start, step, count)`` per dimension of the grid pairs element ``c`` of the other
# side with coordinate ``start + step * c`` of the grid, as the descriptors lower it; the other
# side's row-major index of ``c`` is ``sum(c_d * mults_d)``. Marks are made for the drawn cells
# only: per cell from its coordinate where the grid's offsets are unique, and per drawn offset by
# a bounded search where several coordinates share one (an aliased input).

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


def _cell_marks(sizes, strides, terms, mark):
    """The marks of the drawn cells of a grid whose offsets are unique: ``terms(d, i)`` gives
    a coordinate's terms along dimension ``d`` (ascending; none: the cell is unmarked), and
    ``mark`` turns a cell's first sums (`_combine`) into its ``(label, part)``."""
    n, lay = len(sizes), _layout(sizes, strides)
    columns = [(c * lay.column_stride, terms(n - 1, c)) for c in lay.drawn_columns]
    columns = [(o, t) for o, t in columns if t]
    rows = [(r * lay.row_stride, terms(n - 2, r)) for r in lay.drawn_rows] if n > 1 else [(0, (0,))]
    marks = {}
    for lead in lay.leads:
        sums, base = (0,), 0
        for d, i in enumerate(lead):
            sums, base = _combine(sums, terms(d, i)), base + i * strides[d]
        for row_offset, row_terms in rows:
            row_sums = _combine(sums, row_terms) if sums else ()
            if row_sums:
                at = base + row_offset
                for column_offset, column_terms in columns:
                    marks[at + column_offset] = mark(_combine(row_sums, column_terms))
    return marks


def _offset_marks(sizes, strides, mark):
    """The marks of the drawn cells of an aliased grid: ``mark(offset)`` once per offset drawn,
    its ``(label, part)`` or None."""
    lay, marks, seen = _layout(sizes, strides), {}, set()
    for lead in lay.leads:
        base = sum(i * s for i, s in zip(lead, strides))
        for r in lay.drawn_rows:
            for c in lay.drawn_columns:
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


def _window_marks(sizes, strides, windows, mults):
    """Per drawn cell of the grid ``(sizes, strides)``, the row-major indices (with ``mults``)
    of the elements ``c`` of the other side paired with it through ``windows``, as `_label`s."""
    if not _aliased(sizes, strides):
        terms = lambda d, i: _candidates(windows[d], mults[d], i)  # noqa: E731
        return _cell_marks(sizes, strides, terms, lambda ks: (_label(ks), None))
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

    return _offset_marks(sizes, strides, mark)


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
    aliased = _aliased(sizes, strides)
    grid = _Grid(tuple(sizes), tuple(strides), _window_marks(sizes, strides, windows, mults), _steps(windows, aliased))
    if aliased:
        read = _distinct([(s * step, count) for s, (_, step, count) in zip(strides, windows)])
    else:
        read = math.prod(count if step else min(count, 1) for _, step, count in windows)
    if read is None:
        read = f"at most {math.prod(count for _, _, count in windows)}"
    total = math.prod(sizes)
    legend = f"{read} of {total} cells of {source} read; each is numbered with the output elements that read it"
    return Explanation(title, grid, [legend], outline=True)


def _scatter(title, windows, mults, sizes, strides, dy):
    """A gradient's picture: element ``c`` of ``dy`` (row-major index ``sum(c * mults)``) lands
    at ``start + step * c`` of the grid ``(sizes, strides)``; each cell shows what it receives."""
    marks = _window_marks(sizes, strides, windows, mults)  # an output: unaliased, one element of dy a cell
    grid = _Grid(tuple(sizes), tuple(strides), marks, _steps(windows, _aliased(sizes, strides)))
    return Explanation(title, grid, [f"each cell shows the element of {dy} it receives; . receives 0"], outline=True)


def _parts(title, sizes, strides, axis, extents, parts, split):
    """SPLIT's or JOIN's picture of the grid ``(sizes, strides)``: part ``k`` covers ``extents[k]``
    coordinates along ``axis`` after the parts before it (an empty part covers none)."""
    starts = list(itertools.accumulate(extents, initial=0))[:-1]

    def part_of(i):  # the last part starting at or before i: the non-empty one
        return bisect.bisect_right(starts, i) - 1

    if not _aliased(sizes, strides):
        terms = lambda d, i: (part_of(i),) if d == axis else (0,)  # noqa: E731
        marks = _cell_marks(sizes, strides, terms, lambda ks: (str(ks[0]), ks[0]))
    else:  # an aliased input: an element goes to each part of its coordinates, drawn in the last
        order = [axis, *(d for d in range(len(sizes)) if d != axis)]
        terms, search = [(strides[d], sizes[d]) for d in order], _Search()

        def mark(offset):
            try:
                k = part_of(next(search.solutions(terms, offset, reverse=True))[0])
            except _OutOfSteps:
                return ("?", None)
            return (str(k), k)

        marks = _offset_marks(sizes, strides, mark)
    legend = f"each cell shows the part it {'goes to' if split else 'comes from'}"
    return Explanation(title, _Grid(tuple(sizes), tuple(strides), marks), [legend], parts)


# ---- many windows: slice1_batch and its gradient -----------------------------------------------
# Window ``n`` reads, along each dimension of the grid, the coordinates ``lo[n, d]`` to
# ``hi[n, d]`` that are ``|steps[n, d]|`` apart (both ends are read). Which windows read a drawn
# coordinate is a bitset over the windows per dimension; a drawn cell's windows are the AND of
# its coordinates' bitsets and its label their first set bits. So a picture costs its cells
# times the windows / 64 word operations, however the windows overlap, and the outlines and
# the windows listed are capped (``MAX_OUTLINES``, ``MAX_LISTED``).


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


def _drawn_reads(lo, hi, step, drawn):
    """The first and the last coordinate drawn (of ``drawn``) of ``lo`` to ``hi``, ``step`` apart."""
    lo, hi, step = int(lo), int(hi), int(step)
    return lo, min(hi, lo + (drawn - 1 - lo) // step * step)


def _window_marks_many(shape, lo, hi, steps):
    """The marks of the drawn cells of a packed grid ``shape`` that ``(N, ndim)`` windows
    (``lo``, ``hi``, ``steps``, as above) read: each numbered with the windows that read it
    (`_label`) and coloured as the first; and the `_Outlines` of the windows."""
    n, strides = len(shape), packed_strides(shape)
    lay, total = _layout(shape, strides), len(lo)
    rows, columns = lay.drawn_rows if n > 1 else range(1), lay.drawn_columns
    # The windows that may read a cell drawn: their first coordinate read is drawn along the
    # rows and columns, and a lead dimension's (each slice drawn checks its own leads).
    near = lo[:, -1] < len(columns)
    for d in range(n - 1):
        near &= lo[:, d] < (len(rows) if d == n - 2 else min(shape[d], MAX_SLICES))
    ids = np.flatnonzero(near)
    if not len(ids) or not len(lay.leads) or 0 in shape:
        return {}, _Outlines([[] for _ in lay.leads], 0, total)
    names = None  # each bit's window: the bit's own index, or ids' where far windows were dropped
    if len(ids) < total:
        lo, hi, steps, names = lo[ids], hi[ids], steps[ids], ids.tolist()
    del near
    magnitudes = np.abs(steps)

    def reads(d, i):  # which windows read coordinate i of dimension d
        return (lo[:, d] <= i) & (i <= hi[:, d]) & ((i - lo[:, d]) % magnitudes[:, d] == 0)

    everywhere = np.ones(len(ids), bool)
    row_bits = np.array([_bits(reads(n - 2, r) if n > 1 else everywhere) for r in rows])
    column_bits = np.array([_bits(reads(n - 1, c)) for c in columns])
    flipped = [(steps[:, d] < 0) & (hi[:, d] > lo[:, d]) if d >= 0 else ~everywhere for d in (n - 2, n - 1)]
    chunk = max(1, 2**15 // (len(columns) * column_bits.shape[1]))  # rows of cells a step: 256 KiB of bitsets
    marks, boxes, outlined, outlines, seen = {}, [], 0, 0, np.zeros(len(ids), bool)
    for lead in lay.leads:
        inside = everywhere.copy()
        for d, i in enumerate(lead):
            inside &= reads(d, i)
        seen |= inside
        outlines += int(inside.sum())
        base, lead_bits = sum(i * s for i, s in zip(lead, strides)), _bits(inside)
        for r0 in range(0, len(rows), chunk):
            cells = (row_bits[r0 : r0 + chunk] & lead_bits)[:, None, :] & column_bits[None, :, :]
            found = _first_bits(cells.reshape(-1, cells.shape[-1]), 4)  # `_label`: three, and "…" for a fourth
            at = [base + r * lay.row_stride + c * lay.column_stride for r in rows[r0 : r0 + chunk] for c in columns]
            for offset, ks in zip(at, found):
                if ks:
                    ks = ks if names is None else [names[j] for j in ks]
                    marks[offset] = (_label(ks), ks[0])
        # Every window inside reads a cell drawn here: its first coordinates read are drawn.
        here = np.flatnonzero(inside)[: MAX_OUTLINES - outlined].tolist()
        outlined += len(here)
        boxes.append(
            [
                (
                    int(ids[j]),
                    _drawn_reads(lo[j, n - 2], hi[j, n - 2], magnitudes[j, n - 2], len(rows)) if n > 1 else (0, 0),
                    _drawn_reads(lo[j, n - 1], hi[j, n - 1], magnitudes[j, n - 1], len(columns)),
                    (bool(flipped[0][j]), bool(flipped[1][j])),
                )
                for j in here
            ]
        )
    return marks, _Outlines(boxes, outlines - outlined, total - int(seen.sum()))


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
    lo = np.where(steps > 0, operation.offsets, operation.offsets + operation.sizes - 1 - span)
    hi = lo + span
    if operation.per_sample:  # window k reads sample k: x[k] is slice k of x's grid
        samples = np.arange(n, dtype=np.int64)[:, None]
        lo, hi, steps = np.hstack([samples, lo]), np.hstack([samples, hi]), np.hstack([np.ones_like(samples), steps])
        legend = [*legend, "per_sample: window k reads x[k]; its offsets, sizes and strides are along x[k]'s axes"]
    marks, outlines = _window_marks_many(shape, lo, hi, steps)
    grid = _Grid(tuple(shape), packed_strides(shape), marks)
    return Explanation(title, grid, [*legend, *_window_lines(operation, counts)], outlines=outlines)


def _of_batch(name, given, rest, where):
    """The `Explanation` of ``slice1_batch`` (``given``: ``x``) or ``slice1_batch_grad``
    (``given``: ``dy``: one array or shape, or a list of them), ``rest`` the other arguments as
    the operation's ``of`` takes them: validated as the function validates the call, for
    ``uint32`` arrays."""
    dtype = np.dtype(np.uint32)
    if name == Slice1Batch.function:
        shape = _shape(given, where)
        operation = Slice1Batch.of(shape, *rest)
        counts = operation.check(dtype, shape)
        results = operation.results(counts)
        result = results[0] if operation.shared else f"{len(results)} arrays, one per window"
        legend = f"{len(counts)} windows of x; each cell is numbered with the windows that read it"
        return _batch(f"cd.{name}: x {shape} -> {result}", shape, operation, counts, [legend])
    # As slice1_batch_grad takes dy: one array (windows of one size), or a list of one per window.
    one = hasattr(given, "shape") or (
        isinstance(given, (tuple, list)) and bool(given) and all(isinstance(v, (int, np.integer)) for v in given)
    )
    shapes = [_shape(given, where)] if one else [_shape(a, where) for a in arrays._as_list(given, "dy", name)]
    if not shapes:
        raise ValueError(f"{name}: dy is an empty list; the gradient of no windows has no dtype (pass zeros)")
    operation = Slice1BatchGrad.of(*rest)
    if operation.shared != one:
        raise TypeError(
            f"{name}: windows of one size take dy as one array; per-window sizes take a list of one per window"
        )
    counts = operation.check(dtype, operation.input_shape)
    operation.check_gradients(counts, shapes)
    dy = shapes[0] if one else f"{len(shapes)} arrays"
    legend = f"{len(counts)} windows; each cell shows the windows whose gradients it receives, summed; . receives 0"
    return _batch(f"cd.{name}: dy {dy} -> {operation.input_shape}", operation.input_shape, operation, counts, [legend])


# ---- descriptors: their windows, as they lower them ------------------------------------------------


def _of_desc(desc):
    """The `Explanation` of an operator descriptor."""
    name = type(desc).__name__
    ins, outs = desc.input_tensors, desc.output_tensors
    if desc.NAME in ("Slice", "Slice1"):
        (source,), title = ins, f"{name}: {desc_summary(desc)}"
        mults = packed_strides(outs[0].sizes)
        return _gather(title, desc.windows, mults, source.sizes, source.effective_strides, "InputTensor")
    if desc.NAME == "SliceGrad":
        (grid,), title = outs, f"{name}: {desc_summary(desc)}"
        mults = packed_strides(ins[0].sizes)
        return _scatter(title, desc.windows, mults, grid.sizes, grid.effective_strides, "InputGradientTensor")
    if desc.NAME == "Split":
        title = f"{name}: {tensor_text(ins[0])} -> {len(outs)} parts along axis {desc.axis}"
        parts = [f"part {k}: {tensors_text([t])}" for k, t in enumerate(outs)]
        extents = [t.sizes[desc.axis] for t in outs]
        return _parts(title, ins[0].sizes, ins[0].effective_strides, desc.axis, extents, parts, split=True)
    title = f"{name}: {len(ins)} parts along axis {desc.axis} -> {tensor_text(outs[0])}"
    parts = [f"part {k}: {tensors_text([t])}" for k, t in enumerate(ins)]
    extents = [t.sizes[desc.axis] for t in ins]
    return _parts(title, outs[0].sizes, outs[0].effective_strides, desc.axis, extents, parts, split=False)


def _of_tensor(tensor):
    """The `Explanation` of a tensor: its elements numbered in row-major order, padding hatched;
    an element that several coordinates reach shows the last of them."""
    sizes, strides = tensor.sizes, tensor.effective_strides
    mults = packed_strides(sizes)
    if not _aliased(sizes, strides):
        marks = _cell_marks(sizes, strides, lambda d, i: (i * mults[d],), lambda ks: (str(ks[0]), None))
    else:
        terms, search = list(zip(strides, sizes)), _Search()

        def mark(offset):
            try:
                last = next(search.solutions(terms, offset, reverse=True))
            except _OutOfSteps:
                return ("?", None)
            return (str(sum(i * m for i, m in zip(last, mults))), None)

        marks = _offset_marks(sizes, strides, mark)
    grid = _Grid(sizes, strides, marks)
    span = last_element_index(sizes, strides) + 1
    legend = (
        f"{tensor.element_count} elements in a span of {span} ({tensor.total_tensor_size_in_bytes} bytes); "
        "each cell shows its element's row-major index"
    )
    return Explanation(f"BufferTensorDesc: {tensor_text(tensor)}", grid, [legend])


# ---- array functions: their normalised calls --------------------------------------------------------

#: The operation of each array function; its ``of`` takes the input shape(s), then the
#: function's other arguments in order.
_OPERATIONS = {
    op.function: op
    for op in (Slice, Slice1, SliceGrad, Split, Join, StridedSlice, StridedSliceGrad, Slice1Batch, Slice1BatchGrad)
}
_NOT_DRAWN = ("out", "stream", "chunks")  # arguments that play no part in a picture


def _shape(a, where):
    return tuple(a.shape) if hasattr(a, "shape") else int_tuple(a, "shape", where)


def _of_call(fn, args, kwargs):
    """The `Explanation` of ``fn(*args, **kwargs)``, arrays given as shapes (or arrays): the
    call normalised as the function normalises it, and validated for ``uint32`` arrays by the
    rules it runs under (so it raises what the function would)."""
    name = fn.__name__
    operation_type = _OPERATIONS[name]
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    given, *rest = [v for k, v in bound.arguments.items() if k not in _NOT_DRAWN]
    axis = bound.arguments.get("axis")  # titles say it as given
    where = f"explain(cd.{name})"
    if operation_type in (Slice1Batch, Slice1BatchGrad):
        return _of_batch(name, given, rest, where)
    if name == "join":
        shapes = [_shape(a, where) for a in given]
        if not shapes:
            raise ValueError(f"{Join.NAME}: needs at least one array to join")
        operation = Join.of(shapes[0], *rest)  # as `join` calls it: the first shape; describe checks the rest
        (joined,) = describe(operation, np.dtype(np.uint32), shapes)
        title = f"cd.join: {len(shapes)} parts along axis {axis} -> {joined}"
        parts = [f"part {k}: {s}" for k, s in enumerate(shapes)]
        extents = [s[operation.axis] for s in shapes]
        return _parts(title, joined, packed_strides(joined), operation.axis, extents, parts, split=False)
    shape = _shape(given, where)
    operation = operation_type.of(shape, *rest)
    results = describe(operation, np.dtype(np.uint32), [shape])
    if name == "split":
        title = f"cd.split: x {shape} -> {len(results)} parts along axis {axis}"
        parts = [f"part {k}: {s}" for k, s in enumerate(results)]
        extents = [s[operation.axis] for s in results]
        return _parts(title, shape, packed_strides(shape), operation.axis, extents, parts, split=True)
    windows = operation.windows_for(shape) if name == "slice_grad" else operation.windows
    if name in _SCATTERS:  # the grid is the result; dy is indexed as the slice's result
        (received,) = results
        mults = _mults(shape, operation.axis_map)
        title = f"cd.{name}: dy {shape} -> {received}"
        return _scatter(title, windows, mults, received, packed_strides(received), "dy")
    (result,) = results
    mults = _mults(result, operation.axis_map)
    return _gather(f"cd.{name}: x {shape} -> {result}", windows, mults, shape, packed_strides(shape), "x")


def explain(what: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Draw what an operator does: the cells it reads, in what order, and where they go.

    The picture comes from the geometry that runs: the descriptor's windows (what it lowers to
    its plan), or the call normalised and validated as the array function does it, so it shows
    exactly what runs. It is one grid per 2-D slice of the tensor drawn (the input of a slice,
    the result of a gradient, the whole of a SPLIT or JOIN), with the cells a window reads
    numbered in output order, the axes read backwards marked, the padding between rows of a
    descriptor's tensor hatched (``#``) and SPLIT or JOIN parts coloured. Many windows
    (``slice1_batch`` and its gradient) are drawn on one grid, each cell numbered with the
    windows that read it, each window outlined and numbered (at most ``MAX_OUTLINES``), with an
    arrow along a drawn axis it reads backwards, and listed in the text (``MAX_LISTED``). In
    Jupyter it is drawn as SVG; elsewhere its ``repr`` is text. Large tensors are drawn cut to
    their first slices, rows and columns, and only what is drawn is computed: a picture costs
    the same whatever the tensor's size (or, for many windows, a word operation per 64 windows
    and cell drawn).

    Parameters
    ----------
    what : descriptor, CompiledOperator, BufferTensorDesc or array function
        An operator descriptor (``SliceOperatorDesc``, ...), a compiled one, a tensor (drawn
        with its padding), or one of the array functions (``cd.slice``, ``cd.split``, ...).
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
    if isinstance(what, CompiledOperator):
        what = what.desc
    if isinstance(what, (_OperatorDesc, BufferTensorDesc)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return _of_tensor(what) if isinstance(what, BufferTensorDesc) else _of_desc(what)
    name = getattr(what, "__name__", "")
    if name not in _OPERATIONS or getattr(arrays, name) is not what:
        raise TypeError(
            "explain: takes an operator descriptor, a CompiledOperator, a BufferTensorDesc or a cudadml array "
            f"function, not {what!r}"
        )
    return _of_call(what, args, kwargs)


provide("picture", explain)

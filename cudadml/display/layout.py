"""What is drawn of a grid: how it is laid out in cells (`Layout`), the 2-D slices drawn, and
their views at cell scale (whole, or the windows' cells and corners)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Iterator

import numpy as np

from ..core.overlap import overlaps_itself

#: Most 2-D slices drawn, and most of them drawn with an overview (larger than a cell grid).
MAX_SLICES, MAX_LARGE_SLICES = 8, 3
#: A slice of at most MAX_ROWS rows and MAX_COLUMNS cells a row is drawn whole at cell scale; of
#: a larger slice, a window is drawn whole where it fits in that (with a cell around it), else
#: CORNER cells of each of its sides.
MAX_ROWS, MAX_COLUMNS, CORNER = 24, 24, 6
#: Most cells drawn at cell scale in one picture (what bounds its size and its cost), and most
#: windows of a slice drawn at cell scale.
MAX_CELLS, MAX_INSET_WINDOWS = 800, 2


@dataclasses.dataclass(frozen=True)
class Box:
    """The cells a window reads in one 2-D slice: its first and last row and column read
    (element coordinates, both read); ``key`` its number among many windows (None for the one
    window of a copy), ``flips`` whether it reads the rows and the columns backwards."""

    key: int | None
    rows: tuple[int, int]
    columns: tuple[int, int]
    flips: tuple[bool, bool] = (False, False)


@dataclasses.dataclass(frozen=True)
class View:
    """Rows ``rows`` and cells ``cells`` (of a row's cells: elements and padding) of a 2-D
    slice drawn at cell scale: the whole slice, or the part of a window (``group``: which)
    at ``at`` (row and column) of its arrangement, top left ``(0, 0)``."""

    rows: range
    cells: range
    group: int = 0
    at: tuple[int, int] = (0, 0)


@dataclasses.dataclass(frozen=True)
class Slice:
    """A 2-D slice drawn: its leading index, the windows outlined on it, its views at cell scale,
    and whether it is drawn whole at a reduced scale too (it is larger than one view)."""

    lead: tuple[int, ...]
    boxes: tuple[Box, ...]
    views: tuple[View, ...]
    overview: bool


@dataclasses.dataclass(frozen=True)
class Layout:
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

    @classmethod
    def of(cls, sizes, strides) -> Layout:
        """The layout of the grid ``(sizes, strides)``."""
        n_rows = sizes[-2] if len(sizes) > 1 else 1
        n_cols, col_stride = sizes[-1], strides[-1]
        row_stride = strides[-2] if len(sizes) > 1 else 0
        span = (n_cols - 1) * col_stride + 1
        pitched = col_stride > 0 and (n_rows == 1 or row_stride >= span)  # rows apart and in order
        width = (row_stride if n_rows > 1 else span) if pitched else n_cols
        return cls(tuple(sizes[:-2]), n_rows, row_stride, n_cols, col_stride, pitched, width)


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
            View(range(a, b + 1), range(c, d + 1), group, (i, j))
            for i, (a, b) in enumerate(rows)
            for j, (c, d) in enumerate(cells)
        ]
        cost = sum(len(v.rows) * len(v.cells) for v in new)
        if views and used + cost > budget:
            break
        views, used = views + new, used + cost
    return views or [View(range(min(lay.rows, MAX_ROWS)), range(min(lay.width, MAX_COLUMNS)))]


def plan_slices(lay, candidates: Iterable[tuple[tuple[int, ...], list[Box]]]) -> list[Slice]:
    """The slices drawn, of ``candidates`` (lazily: a leading index and the windows outlined in
    its slice, in the order to draw them): while there are at most ``MAX_SLICES``, at most
    ``MAX_LARGE_SLICES`` of them with an overview, and ``MAX_CELLS`` cells drawn at cell scale
    (the first slice whatever its cells). None read: the first slice, from its top left corner."""
    small = lay.rows <= MAX_ROWS and lay.width <= MAX_COLUMNS
    slices, cells = [], 0
    for lead, boxes in candidates:
        if len(slices) == (MAX_SLICES if small else MAX_LARGE_SLICES):
            break
        views = [View(range(lay.rows), range(lay.width))] if small else _insets(lay, boxes, MAX_CELLS - cells)
        cost = sum(len(v.rows) * len(v.cells) for v in views)
        if slices and cells + cost > MAX_CELLS:
            break
        slices.append(Slice(lead, tuple(boxes), tuple(views), not small))
        cells += cost
    if not slices and lay.slices:
        lead = next(lay.first_leads())
        views = [View(range(lay.rows), range(lay.width))] if small else _insets(lay, [], MAX_CELLS)
        slices.append(Slice(lead, (), tuple(views), not small))
    return slices


def in_sets(lo, hi, mags, d, i):
    """Per window, whether it reads coordinate ``i`` of dimension ``d`` (``lo`` to ``hi``, ``mags`` apart)."""
    return (lo[:, d] <= i) & (i <= hi[:, d]) & ((i - lo[:, d]) % mags[:, d] == 0)


def read_leads(lo, hi, mags) -> Iterator[tuple[int, ...]]:
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
            prefix &= in_sets(lo, hi, mags, p, current[p])
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


def window_slices(lay, windows):
    """The slices drawn of a copy's one window: the first slices it reads, it outlined on each."""
    n = len(windows)
    if not n or any(count < 1 for _, _, count in windows):
        return plan_slices(lay, ((lead, []) for lead in lay.first_leads()))
    lo, hi, mags = (np.array([values], dtype=np.int64) for values in zip(*map(_extent, windows)))
    box = Box(None, (int(lo[0, n - 2]), int(hi[0, n - 2])) if n > 1 else (0, 0), (int(lo[0, -1]), int(hi[0, -1])))
    d = max(n - 2, 0)
    return plan_slices(lay, ((lead, [box]) for lead in read_leads(lo[:, :d], hi[:, :d], mags[:, :d])))


def is_aliased(sizes, strides) -> bool:
    """Whether two coordinates of the grid share an element offset."""
    return overlaps_itself(sizes, strides, 1)

"""The generic pictures: a copy's cells read (`gather_picture`), a gradient's cells written
(`scatter_picture`), SPLIT's and JOIN's parts (`parts_picture`), many windows (`batch_picture`)
and a tensor's elements (`tensor_picture`), each drawn from its geometry alone."""

from __future__ import annotations

import bisect
import itertools
import math

import numpy as np

from ..core.indexing import window_start
from ..core.tensor import last_element_index, packed_strides, tensor_text
from .explanation import Bands, Explanation, Grid, Outlines
from .layout import MAX_COLUMNS, MAX_ROWS, Box, Layout, in_sets, is_aliased, plan_slices, read_leads, window_slices
from .marks import OutOfSteps, Search, axis_steps, cell_marks, count_distinct, label, offset_marks, window_marks

#: Of many windows (``slice1_batch``): most outlines drawn, and most windows listed in the text.
MAX_OUTLINES, MAX_LISTED = 24, 8
_MAX_SKIPPED = 32  # slices of many windows passed over (they show no window not drawn yet) before giving up


def mults_of(shape, axis_map):
    """Per dimension of the windows, its weight in the row-major index of ``shape`` (0 where an
    integer index dropped it)."""
    packed = packed_strides(shape)
    return tuple(0 if a is None else packed[a] for a in axis_map)


def gather_picture(title, windows, mults, sizes, strides, source):
    """A copy's picture: output element ``c`` (row-major index ``sum(c * mults)``) reads the
    grid ``(sizes, strides)`` of ``source`` at ``start + step * c`` per dimension; each cell read
    is numbered with its readers."""
    aliased, lay = is_aliased(sizes, strides), Layout.of(sizes, strides)
    slices = window_slices(lay, windows)
    marks = window_marks(sizes, strides, windows, mults, lay, slices)
    grid = Grid(tuple(sizes), tuple(strides), marks, axis_steps(windows, aliased))
    if aliased:
        read = count_distinct([(s * step, count) for s, (_, step, count) in zip(strides, windows)])
    else:
        read = math.prod(count if step else min(count, 1) for _, step, count in windows)
    if read is None:
        read = f"at most {math.prod(count for _, _, count in windows)}"
    total = math.prod(sizes)
    legend = f"{read} of {total} cells of {source} read; each is numbered with the output elements that read it"
    return Explanation(title, grid, [legend], lay, slices)


def scatter_picture(title, windows, mults, sizes, strides, dy):
    """A gradient's picture: element ``c`` of ``dy`` (row-major index ``sum(c * mults)``) lands
    at ``start + step * c`` of the grid ``(sizes, strides)``; each cell shows what it receives."""
    lay = Layout.of(sizes, strides)
    slices = window_slices(lay, windows)
    marks = window_marks(sizes, strides, windows, mults, lay, slices)  # an output: unaliased, one element of dy a cell
    grid = Grid(tuple(sizes), tuple(strides), marks, axis_steps(windows, is_aliased(sizes, strides)))
    return Explanation(title, grid, [f"each cell shows the element of {dy} it receives; . receives 0"], lay, slices)


def parts_picture(title, sizes, strides, axis, parts, split):
    """SPLIT's picture (``split``) or JOIN's of the grid ``(sizes, strides)``, each cell showing
    the part it goes to (comes from): ``parts``, per part what its label says and its sizes,
    whose extent along ``axis`` it covers after the parts before it (an empty part covers none)."""
    extents = [part_sizes[axis] for _, part_sizes in parts]
    starts = list(itertools.accumulate(extents, initial=0))[:-1]
    lay = Layout.of(sizes, strides)
    slices = plan_slices(lay, ((lead, []) for lead in lay.first_leads()))

    def part_of(i):  # the last part starting at or before i: the non-empty one
        return bisect.bisect_right(starts, i) - 1

    if not is_aliased(sizes, strides):
        terms = lambda d, i: (part_of(i),) if d == axis else (0,)  # noqa: E731
        marks = cell_marks(strides, terms, lambda ks: (str(ks[0]), ks[0]), lay, slices)
    else:  # an aliased input: an element goes to each part of its coordinates, drawn in the last
        order = [axis, *(d for d in range(len(sizes)) if d != axis)]
        terms, search = [(strides[d], sizes[d]) for d in order], Search()

        def mark(offset):
            try:
                k = part_of(next(search.solutions(terms, offset, reverse=True))[0])
            except OutOfSteps:
                return ("?", None)
            return (str(k), k)

        marks = offset_marks(strides, mark, lay, slices)
    legend = f"each cell shows the part it {'goes to' if split else 'comes from'}"
    bands = Bands(axis, tuple(starts), tuple(extents))
    labels = [f"part {k}: {said}" for k, (said, _) in enumerate(parts)]
    return Explanation(title, Grid(tuple(sizes), tuple(strides), marks), [legend], lay, slices, labels, bands)


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
    numbered with the windows that read it (`label`) and coloured as the first."""
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
            cache[d, i] = _bits(in_sets(lo, hi, mags, d, i))
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
            found = _first_bits(cells.reshape(-1, cells.shape[-1]), 4)  # `label`: three, and "…" for a fourth
            at = [base + r * lay.row_stride + c * lay.column_stride for r in rows for c in columns]
            for offset, ks in zip(at, found):
                if ks:
                    ks = [names[j] for j in ks]
                    marks[offset] = (label(ks), ks[0])
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


def batch_picture(title, shape, operation, counts, legend):
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
    lay, dims = Layout.of(shape, strides), max(len(shape) - 2, 0)
    flips = [(steps[:, a] < 0) & (hi[:, a] > lo[:, a]) if a >= 0 else np.zeros(n, bool) for a in (ndim - 2, ndim - 1)]
    valid = (hi >= lo).all(axis=1)
    small = lay.rows <= MAX_ROWS and lay.width <= MAX_COLUMNS

    def reading(lead):  # the windows that read the slice at lead
        inside = valid.copy()
        for a, i in enumerate(lead):
            inside &= in_sets(lo, hi, mags, a, i)
        return inside

    def box(k):
        rows = (int(lo[k, -2]), int(hi[k, -2])) if ndim > 1 else (0, 0)
        return Box(int(k), rows, (int(lo[k, -1]), int(hi[k, -1])), (bool(flips[0][k]), bool(flips[1][k])))

    def candidates():
        # A slice is drawn where it shows a window not yet outlined (of one window per sample,
        # each sample's first slice); once MAX_OUTLINES are, only slices drawn whole follow.
        outlined, ids, done, skipped = 0, np.flatnonzero(valid), np.zeros(n, bool), 0
        for lead in read_leads(lo[ids, :dims], hi[ids, :dims], mags[ids, :dims]) if 0 not in shape else ():
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

    slices = plan_slices(lay, candidates())
    insides = [reading(s.lead) for s in slices]
    marks = _batch_marks(lay, strides, lo, hi, mags, slices, insides) if 0 not in shape else {}
    seen = np.logical_or.reduce(insides) if insides else np.zeros(n, bool)
    outlined = sum(len(s.boxes) for s in slices)
    outlines = Outlines(
        [[(b.key, b.rows, b.columns, b.flips) for b in s.boxes] for s in slices],
        int(sum(inside.sum() for inside in insides)) - outlined,
        n - int(seen.sum()),
    )
    if outlines.drawn < n:
        legend = [legend[0], f"{n} windows; {outlines.drawn} drawn, outlined and numbered", *legend[1:]]
    grid = Grid(tuple(shape), strides, marks)
    return Explanation(title, grid, [*legend, *_window_lines(operation, counts)], lay, slices, outlines=outlines)


# ---- tensors ---------------------------------------------------------------------------------------


def tensor_picture(tensor):
    """The `Explanation` of a tensor: its elements numbered in row-major order, padding hatched;
    an element that several coordinates reach shows the last of them."""
    sizes, strides = tensor.sizes, tensor.effective_strides
    mults, lay = packed_strides(sizes), Layout.of(sizes, strides)
    slices = plan_slices(lay, ((lead, []) for lead in lay.first_leads()))
    if not is_aliased(sizes, strides):
        marks = cell_marks(strides, lambda d, i: (i * mults[d],), lambda ks: (str(ks[0]), None), lay, slices)
    else:
        terms, search = list(zip(strides, sizes)), Search()

        def mark(offset):
            try:
                last = next(search.solutions(terms, offset, reverse=True))
            except OutOfSteps:
                return ("?", None)
            return (str(sum(i * m for i, m in zip(last, mults))), None)

        marks = offset_marks(strides, mark, lay, slices)
    grid = Grid(sizes, strides, marks)
    span = last_element_index(sizes, strides) + 1
    legend = (
        f"{tensor.element_count} elements in a span of {span} ({tensor.total_tensor_size_in_bytes} bytes); "
        "each cell shows its element's row-major index"
    )
    return Explanation(f"BufferTensorDesc: {tensor_text(tensor)}", grid, [legend], lay, slices)

"""The marks of the cells drawn, from the geometry that runs.

A window ``(start, step, count)`` per dimension of the grid pairs element ``c`` of the other
side with coordinate ``start + step * c`` of the grid, as the descriptors lower it; the other
side's row-major index of ``c`` is ``sum(c_d * mults_d)``. Marks are made for the cells drawn
at cell scale only (the views of the slices drawn): per cell from its coordinate where the
grid's offsets are unique, and per offset drawn by a bounded search where several coordinates
share one (an aliased input).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from .layout import is_aliased

#: Steps the searches of one picture of an aliased grid may take in all (see `Search`).
_SEARCH_STEPS = 100_000


def label(ks):
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


def cell_marks(strides, terms, mark, lay, slices):
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


def offset_marks(strides, mark, lay, slices):
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


class OutOfSteps(Exception):
    pass


class Search:
    """Solutions ``x`` of ``sum(e_d * x_d) == target`` with ``0 <= x_d < n_d``, lazily and in
    row-major order (or its reverse): which indices reach one element offset of an aliased
    layout, without visiting the others. A dimension is searched only over the ``x_d`` that
    leave the rest reachable (within the rest's range, and in the residue class the rest's
    gcd allows); one of ``e_d = 0`` (a stride of 0) is searched once for all its ``x_d``. Dead
    ends remain possible where the rest's range has gaps, so the searches of one picture share
    ``_SEARCH_STEPS`` steps; a search past them raises `OutOfSteps`."""

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
                raise OutOfSteps
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


def window_marks(sizes, strides, windows, mults, lay, slices):
    """Per cell drawn of the grid ``(sizes, strides)``, the row-major indices (with ``mults``)
    of the elements ``c`` of the other side paired with it through ``windows``, as `label`s."""
    if not is_aliased(sizes, strides):
        terms = lambda d, i: _candidates(windows[d], mults[d], i)  # noqa: E731
        return cell_marks(strides, terms, lambda ks: (label(ks), None), lay, slices)
    terms = [(s * step, count) for s, (_, step, count) in zip(strides, windows)]
    base, search = sum(s * start for s, (start, _, _) in zip(strides, windows)), Search()

    def mark(offset):  # every index reaching the offset, whatever its coordinate: as what ran merged them
        ks = []
        try:
            for c in itertools.islice(search.solutions(terms, offset - base), 4):
                ks.append(sum(x * m for x, m in zip(c, mults)))
        except OutOfSteps:
            return (label(ks[:3]) + "…" if ks else "?", None)
        return (label(ks), None) if ks else None

    return offset_marks(strides, mark, lay, slices)


def axis_steps(windows, aliased):
    """The signed step each axis of the grid is walked with (where it is walked: more than one
    element taken, a non-zero step); none where the grid is aliased (no unique walk)."""
    if aliased or math.prod(count for _, _, count in windows) < 2:
        return {}
    return {d: step for d, (_, step, count) in enumerate(windows) if count > 1 and step != 0}


def count_distinct(terms):
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

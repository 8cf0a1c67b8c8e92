"""The SVG of a picture: its views at cell scale (cells, labels, window outlines and arrows), its
overviews at a reduced scale, and the colours and sizes they are drawn in."""

from __future__ import annotations

import html
import itertools
import math

#: Most parts named in the colour key (and drawn as bands on an overview).
MAX_KEYED = 24
#: Part colours (ColorBrewer Set3), repeating after ten parts.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd")
#: The colour of window outlines, and of nothing else in a picture.
OUTLINE = "#e6007e"
READ = "#cfe3ff"  # the cells a copy's window reads
INK = "#1f4e9c"  # window numbers and arrows
_GREY = "#888888"  # row and column numbers
_TENSOR = "#f2f2f2"  # an overview's cells
CELL = 26  # SVG cell height, and least width, in pixels
CHAR = 8  # an upper bound on the width of a character of the 13-pixel font
_OVERVIEW = 288  # an overview's longest side in pixels
MAX_WIDTH = 1000  # pictures side by side wrap past this width


def svg_text(x, y, text, anchor="middle", **attributes):
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
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{INK}" stroke-width="1.5" '
        'marker-end="url(#arrowhead)"/>'
    )


def colour(part):
    return READ if part is None else PALETTE[part % len(PALETTE)]


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
    return f'<rect x="{left}" y="{top}" width="{3 + 6 * len(str(key))}" height="10" fill="{INK}"/>' + svg_text(
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
    """``{fill: path}`` of the cells of ``rows`` (``Explanation.cells``) that are filled (marked or padding),
    a rectangle per run of cells of one fill in a row."""
    paths = {}
    for r, row in enumerate(rows):
        j = 0
        while j < len(row):
            _, part, kind = row[j]
            if kind == "empty":
                j += 1
                continue
            fill = "url(#padding)" if kind == "padding" else colour(part)
            end = j + 1
            while end < len(row) and row[end][2] == kind and (kind == "padding" or row[end][1] == part):
                end += 1
            w = (end - j) * width
            paths.setdefault(fill, []).append(f"M{x0 + j * width} {y0 + r * CELL}h{w}v{CELL}h-{w}z")
            j = end
    return {fill: "".join(d) for fill, d in paths.items()}


def _cell_width(rows, view):
    """The width of the cells of a view (``rows``: its `Explanation.cells`): its longest label
    drawn, and its last column's number, fit."""
    widest = max((_px(_shown(label)) for row in rows for label, _, kind in row if kind == "mark"), default=0)
    return max(CELL, math.ceil(widest + 6), math.ceil(_px(view.cells[-1] if view.cells else 0, 11) + 6))


def _view_block(picture, s, view, arrows, width=None):
    """``(width, height, draw)`` of a view: its cells, numbered, with the row and column numbers
    of the tensor, the outlines of the windows of ``s`` over it; ``arrows``: with the arrows of the
    drawn axes' steps beside it; ``width``: its cells' (else `_cell_width`). ``draw(x, y)`` gives
    it at ``(x, y)`` as SVG."""
    rows = picture.cells(s.lead, view)
    width = width or _cell_width(rows, view)
    x0, y0 = max(30, math.ceil(_px(view.rows[-1] if view.rows else 0, 11)) + 14), 14
    right, bottom = x0 + len(view.cells) * width, y0 + len(view.rows) * CELL
    n = len(picture.grid.sizes)
    row_step, column_step = (picture.grid.steps.get(n - 2), picture.grid.steps.get(n - 1)) if arrows else (None, None)

    def draw(x, y):
        out = [
            f'<g transform="translate({x},{y})" data-view="" data-lead="{",".join(map(str, s.lead))}" '
            f'data-rows="{view.rows.start} {view.rows.stop - 1}" data-cells="{view.cells.start} {view.cells.stop - 1}" '
            f'data-origin="{x + x0} {y + y0}" data-cell="{width} {CELL}">',
            f'<text y="10" fill="{_GREY}" font-size="11" text-anchor="middle">',
            *(_span(x0 + k * width + width // 2, j) for k, j in enumerate(view.cells)),
            "</text>",
            f'<text fill="{_GREY}" font-size="11" text-anchor="end">',
            *(_span(x0 - 6, r, y0 + k * CELL + CELL // 2 + 4) for k, r in enumerate(view.rows)),
            "</text>",
        ]
        out += _view_cells(rows, view, (x0, y0, right, bottom), width)
        out += _view_windows(picture.layout, s, view, x0, y0, width)
        out += _step_arrows(row_step, column_step, (x0, y0, right, bottom), len(view.rows), len(view.cells))
        out.append("</g>")
        return "".join(out)

    return right + (20 if row_step else 2), bottom + (14 if column_step else 2), draw


def _view_cells(rows, view, box, width):
    """The SVG of a view's cells in ``box = (left, top, right, bottom)``: their fills, the grid
    and the labels."""
    x0, y0, right, bottom = box
    out = [f'<rect x="{x0}" y="{y0}" width="{right - x0}" height="{bottom - y0}" fill="#ffffff"/>']
    out += [f'<path d="{d}" fill="{fill}"/>' for fill, d in _runs(rows, x0, y0, width).items()]
    lines = [f"M{x0 + k * width + 0.5} {y0}V{bottom}" for k in range(len(view.cells) + 1)]
    lines += [f"M{x0} {y0 + k * CELL + 0.5}H{right}" for k in range(len(view.rows) + 1)]
    out.append(f'<path d="{"".join(lines)}" stroke="#999999" fill="none"/>')
    for k, row in enumerate(rows):  # a row's labels: one text, a span a cell (as few bytes as may be)
        spans = [
            _span(x0 + j * width + width // 2, _shown(label))
            for j, (label, _, kind) in enumerate(row)
            if kind == "mark"
        ]
        if spans:
            out.append(f'<text y="{y0 + k * CELL + 17}" font-size="12" text-anchor="middle">{"".join(spans)}</text>')
    return out


def _view_windows(lay, s, view, x0, y0, width):
    """The SVG of the windows of ``s`` over a view: outlined on the sides where they end there,
    numbered, and with an arrow where one is read backwards."""
    out = []
    for box in s.boxes:
        (r0, r1), c0, c1 = box.rows, lay.cell(box.columns[0]), lay.cell(box.columns[1])
        top, low = max(r0, view.rows.start), min(r1, view.rows.stop - 1)
        first, last = max(c0, view.cells.start), min(c1, view.cells.stop - 1)
        if top > low or first > last:
            continue
        left, far = x0 + (first - view.cells.start) * width, x0 + (last + 1 - view.cells.start) * width
        upper, lower = y0 + (top - view.rows.start) * CELL, y0 + (low + 1 - view.rows.start) * CELL
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
    return out


def _step_arrows(row_step, column_step, box, rows, columns):
    """Arrows in the direction each drawn axis is read, beside ``box = (left, top, right,
    bottom)`` of ``rows`` by ``columns`` cells: up or left where the step is negative."""
    left, top, right, bottom = box
    out = []
    if row_step and rows > 1:
        ends = (top + 4, bottom - 4) if row_step > 0 else (bottom - 4, top + 4)
        out.append(_arrow(right + 10, ends[0], right + 10, ends[1]))
    if column_step and columns > 1:
        ends = (left + 4, right - 4) if column_step > 0 else (right - 4, left + 4)
        out.append(_arrow(ends[0], bottom + 8, ends[1], bottom + 8))
    return out


def view_groups(picture, s):
    """``(width, height, draw)`` per group of views of ``s`` (the views of one window: one, or
    its corners as they lie, dots between them); for a slice drawn whole, its one view."""
    blocks, gap = [], 22
    for _, views in itertools.groupby(s.views, key=lambda v: v.group):
        views = list(views)  # the corners of a window: cells of one width, so that their columns line up
        width = max(_cell_width(picture.cells(s.lead, v), v) for v in views)
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
                out.append(svg_text(x + widths[0] + gap // 2, y + 14 + 3 * CELL, "\u22ef", fill=_GREY))
            if len(heights) > 1:
                out.append(svg_text(x + 30, y + heights[0] + gap - 4, "\u22ee", "start", fill=_GREY))
            return "".join(out)

        blocks.append((sum(widths) + gap * (len(widths) - 1), sum(heights) + gap * (len(heights) - 1), draw))
    return blocks


def overview_block(picture, s, room):
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

    def draw(x, y):
        out = [
            f'<g transform="translate({x},{y})" data-overview="" data-lead="{",".join(map(str, s.lead))}" '
            f'data-origin="{x + x0} {y + y0}" data-scale="{sx!r} {sy!r}" data-size="{lay.rows} {lay.width}">',
            svg_text(x0, 10, 0, fill=_GREY, **{"font-size": 11}),
            svg_text(x0 + gw, 10, lay.width - 1, "end", fill=_GREY, **{"font-size": 11}),
            svg_text(x0 - 6, y0 + 10, 0, "end", fill=_GREY, **{"font-size": 11}),
            svg_text(x0 - 6, y0 + gh, lay.rows - 1, "end", fill=_GREY, **{"font-size": 11}),
            f'<rect x="{x0}" y="{y0}" width="{gw}" height="{gh}" fill="{_TENSOR}" stroke="#999999"/>',
        ]
        if lay.pitched and lay.width > lay.span:  # the padding at the end of each row
            a = x0 + round(lay.span * sx)
            out.append(f'<rect x="{a}" y="{y0}" width="{x0 + gw - a}" height="{gh}" fill="url(#padding)"/>')
        if picture.bands is not None:
            out += _overview_bands(picture, s, (x0, y0, sx, sy))
        out += _overview_windows(lay, s, (x0, y0, sx, sy))
        out += _step_arrows(row_step, column_step, (x0, y0, x0 + gw, y0 + gh), lay.rows, lay.width)
        out.append("</g>")
        return "".join(out)

    return x0 + gw + 20, y0 + gh + 14, draw


def _pixels(first, last, scale, origin):
    """The pixels of cells ``first`` to ``last`` (inclusive) of an overview, at least 3 wide."""
    a, b = origin + round(first * scale), origin + round((last + 1) * scale)
    if b - a < 3:
        a, b = (a + b) // 2 - 1, (a + b) // 2 + 2
    return a, b


def _overview_bands(picture, s, at):
    """The SVG of SPLIT's or JOIN's parts over an overview at ``at = (x0, y0, sx, sy)`` (its
    origin and scale): a band of its colour each, the first ``MAX_KEYED`` of them."""
    lay, bands, n = picture.layout, picture.bands, len(picture.grid.sizes)
    x0, y0, sx, sy = at
    out, drawn = [], 0
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
        (a, b), (c, d) = _pixels(*cells, sx, x0), _pixels(*rows, sy, y0)
        out.append(f'<rect x="{a}" y="{c}" width="{b - a}" height="{d - c}" fill="{colour(k)}"/>')
    return out


def _overview_windows(lay, s, at):
    """The SVG of the windows of ``s`` over an overview at ``at = (x0, y0, sx, sy)``: their
    fills, then their outlines, then their numbers, each over the ones before."""
    x0, y0, sx, sy = at
    out = []
    for box in s.boxes:
        (a, b), (c, d) = _pixels(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0), _pixels(*box.rows, sy, y0)
        fill = f'fill="{READ}"' if box.key is None else f'fill="{colour(box.key)}" fill-opacity="0.5"'
        out.append(f'<rect x="{a}" y="{c}" width="{b - a}" height="{d - c}" {fill}/>')
    for box in s.boxes:
        (a, b), (c, d) = _pixels(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0), _pixels(*box.rows, sy, y0)
        key = "" if box.key is None else box.key
        out.append(f'<g data-window="{key}">{_sides(True, True, True, True, (a, c, b, d))}</g>')
    for box in s.boxes:
        if box.key is not None:
            (a, _), (c, _) = (
                _pixels(lay.cell(box.columns[0]), lay.cell(box.columns[1]), sx, x0),
                _pixels(*box.rows, sy, y0),
            )
            out.append(_tag(a, c, box.key))
    return out

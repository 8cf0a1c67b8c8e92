"""`Explanation`, a picture of what an operator does, and what it holds: the grid drawn with
its marks, the slices drawn, and for many windows or parts their outlines and bands; drawn as
text (``repr``) and as an SVG document."""

from __future__ import annotations

import dataclasses

from .layout import Layout, Slice
from .svg import CHAR, INK, MAX_KEYED, MAX_WIDTH, colour, overview_block, svg_text, view_groups

#: The most bytes of a picture's SVG.
MAX_BYTES = 64 * 1024


@dataclasses.dataclass
class Grid:
    """The tensor drawn: its sizes and element strides, and per element offset of a cell drawn
    that is marked, its mark (a label and, for SPLIT and JOIN, a part); ``steps`` maps an axis to
    the signed step it is read with."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    marks: dict[int, tuple[str, int | None]]
    steps: dict[int, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Outlines:
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
class Bands:
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
    grid : Grid
        The tensor drawn and its marks.
    legend : list of str
        Lines under the title that say what the marks mean.
    layout : Layout
        How the tensor's 2-D slices are laid out in cells.
    slices : list of Slice
        The 2-D slices drawn, each with the windows outlined on it and its views at cell scale.
    parts : list of str, optional
        For SPLIT and JOIN, the name of each part (its colour's key).
    bands : Bands, optional
        For SPLIT and JOIN, the parts along their axis (drawn on an overview).
    outlines : Outlines, optional
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
        grid: Grid,
        legend: list[str],
        layout: Layout,
        slices: list[Slice],
        parts: list[str] | None = None,
        bands: Bands | None = None,
        outlines: Outlines | None = None,
    ):
        self.title, self.grid, self.legend, self.layout, self.slices = title, grid, legend, layout, slices
        self.parts, self.bands, self.outlines = parts or [], bands, outlines

    # ---- what is drawn, as text and as SVG ------------------------------------------------------

    def cells(self, lead, view):
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
                rows = self.cells(s.lead, view)
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
        out = []
        y, width = self._svg_heading(out)
        y, width, left_out = self._svg_slices(out, y, width)
        cut = self.cut + (
            [f"{left_out} parts of the picture not drawn (at most {MAX_BYTES} bytes)"] if left_out else []
        )
        for line in cut:
            out.append(svg_text(4, y + 4, line, "start", **{"font-style": "italic"}))
            width, y = max(width, CHAR * len(line) + 8), y + 18
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 4}" height="{y}" font-family="sans-serif" '
            'font-size="13"><defs><pattern id="padding" width="6" height="6" patternUnits="userSpaceOnUse">'
            '<rect width="6" height="6" fill="#eeeeee"/><path d="M0,6 L6,0" stroke="#aaaaaa"/></pattern>'
            f'<marker id="arrowhead" markerWidth="8" markerHeight="8" refX="6" refY="4" orient="auto">'
            f'<path d="M0,0 L8,4 L0,8 z" fill="{INK}"/></marker></defs>'
            '<rect width="100%" height="100%" fill="#ffffff"/>'
        )
        return "".join([head, *out, "</svg>"])  # one join: a second copy of a large picture costs what it weighs

    def _svg_heading(self, out) -> tuple[int, int]:
        """Appends to ``out`` the SVG of the title, legend, axes and colour key; returns the
        ``y`` below them and the width they take."""
        y, width = 18, 0
        axes = self._axes_line()
        for line in [self.title, *self.legend, *([axes] if axes else [])]:
            out.append(svg_text(4, y, line, "start", **({"font-weight": "bold"} if line is self.title else {})))
            width, y = max(width, CHAR * len(line) + 8), y + 18
        keyed, more = self._key()
        key = 26 + CHAR * max(map(len, keyed), default=0)  # the width of one entry of the colour key
        for k, name in enumerate(keyed):  # the colour key: six to a line
            x = 4 + (k % 6) * key
            out.append(f'<rect x="{x}" y="{y - 11}" width="14" height="14" fill="{colour(k)}" stroke="#555555"/>')
            out.append(svg_text(x + 18, y, name, "start"))
            width = max(width, x + key)
            if k % 6 == 5 or k == len(keyed) - 1:
                y += 20
        if more:
            out.append(svg_text(4, y, f"... and {more} more parts", "start"))
            y += 20
        return y, width

    def _svg_slices(self, out, y, width) -> tuple[int, int, int]:
        """Appends to ``out`` the SVG of each slice drawn (its caption, overview and views, on
        shelves that wrap at ``MAX_WIDTH``) from ``y`` down, each piece while the document stays
        under ``MAX_BYTES``; returns the ``y`` below them, the width, and the pieces left out."""
        size, left_out = sum(map(len, out)), 0
        groups = [view_groups(self, s) for s in self.slices]
        # Overviews beside the views where they all leave room for one, else above them; one size.
        room = min((MAX_WIDTH - sum(w + 24 for w, _, _ in g) - 4 for g in groups), default=MAX_WIDTH)
        for s, blocks in zip(self.slices, groups):
            caption = self._caption(s.lead)
            if caption:
                out.append(
                    svg_text(
                        4, y + 14, caption + (f" ({self.layout.rows} x {self.layout.width})" * s.overview), "start"
                    )
                )
                y += 22
            if s.overview:
                blocks = [overview_block(self, s, room), *blocks]
            x, shelf = 4, 0
            for w, h, draw in blocks:
                if x > 4 and x + w > MAX_WIDTH:
                    x, y, shelf = 4, y + shelf + 16, 0
                piece = draw(x, y)
                if size + len(piece) > MAX_BYTES - 4096:  # room for the document's head and last lines
                    left_out += 1
                    continue
                out.append(piece)
                size += len(piece)
                x, shelf, width = x + w + 24, max(shelf, h), max(width, x + w)
            y += shelf + 12
        return y, width, left_out

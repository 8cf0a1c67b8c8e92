"""Pictures as a person sees them: rendered by a real browser (headless Chromium), each outline
found on its window's cells in the screenshot.

Each picture's ``_repr_html_`` is put in a page of its own and Chromium screenshots it at the
SVG's size (one device pixel a CSS pixel). The PNG is read with zlib and NumPy. The windows'
cells are worked out here from their offsets, sizes and strides (or from the worked examples'
own outputs), independently of the pictures; where the cells are drawn comes from each view's
and overview's ``data-`` attributes (its origin and the size of a cell). Then, in the
screenshot: each outline (drawn in ``cudadml.display.svg.OUTLINE``, a colour used for nothing else) lies
on the edges of its window's cells, on every side where the window ends in the view; no pixel
of that colour lies anywhere else; the cells a window reads are filled and those none reads are
white. The cases: a crop of an image, 10 000 crops of it, and the calls of the notebooks.

Skipped where Chromium is not installed (Debian: ``apt-get install chromium``). Chromium run as
root (a container, CI) exits at once without ``--no-sandbox``, which ``_screenshot`` passes: pass
it too when running Chromium on a picture by hand as root. With
``CUDADML_SCREENSHOTS=<directory>`` the screenshots are kept there to look at.
"""

import concurrent.futures
import os
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import numpy as np
import pytest

import cudadml as cd
from cudadml.display import explanation, svg
from cudadml.examples import EXAMPLES

CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")

SVG = "{http://www.w3.org/2000/svg}"
OUTLINE = tuple(int(svg.OUTLINE[k : k + 2], 16) for k in (1, 3, 5))
READ = tuple(int(svg.READ[k : k + 2], 16) for k in (1, 3, 5))
WHITE = (255, 255, 255)


# ---- the windows, worked out here ---------------------------------------------------------------------


def _strided(offsets, sizes, strides):
    """A window's coordinates read along each dimension, as SLICE1 reads them: from the window's
    first element (its last for a negative stride), ``|stride|`` apart."""
    return [
        np.arange(o + (n - 1 if s < 0 else 0), o - 1 if s < 0 else o + n, s) for o, n, s in zip(offsets, sizes, strides)
    ]


def _product(shape, flat):
    """The coordinates along each dimension of the elements at row-major indices ``flat`` (a
    window reads their product)."""
    return [np.unique(c) for c in np.unravel_index(np.asarray(flat, np.int64).ravel(), shape)]


def _batch(shape, offsets, sizes, strides, per_sample=False):
    sizes, strides = np.broadcast_to(sizes, np.shape(offsets)), np.broadcast_to(strides, np.shape(offsets))
    windows = [_strided(o, n, s) for o, n, s in zip(offsets, sizes, strides)]
    return [[np.array([k]), *w] for k, w in enumerate(windows)] if per_sample else windows


_RNG = np.random.default_rng(7)
_N = 10_000
_CROPS = {  # 10 000 crops of a 480 x 640 image, each 64 x 64, mirrored along some axes
    "window_offsets": _RNG.integers(0, 400, (_N, 2)),
    "window_sizes": [64, 64],
    "window_strides": _RNG.choice([1, -1], (_N, 2)),
}
_NOTEBOOK_04 = {  # notebook 04's batch: a random 56 x 56 crop of each of 32 images, mirrored or not
    "window_offsets": np.c_[np.zeros(32, int), _RNG.integers(0, 9, (32, 2))],
    "window_sizes": [3, 56, 56],
    "window_strides": np.c_[np.ones((32, 2), int), _RNG.choice([1, -1], 32)],
    "per_sample": True,
}
F32 = cd.TensorDataType.FLOAT32
_GRID = (1, 1, 4, 4)

#: name: (picture, the grid's shape, the windows read: per window, its coordinates per dimension)
CASES = {
    "crop": (
        lambda: cd.explain(cd.strided_slice, np.zeros((3, 480, 640), np.uint8), np.s_[:, 100:356, 456:200:-1]),
        (3, 480, 640),
        [[np.arange(3), np.arange(100, 356), np.arange(456, 200, -1)]],
    ),
    "10 000 crops": (
        lambda: cd.explain(cd.slice1_batch, (480, 640), **_CROPS),
        (480, 640),
        _batch((480, 640), _CROPS["window_offsets"], _CROPS["window_sizes"], _CROPS["window_strides"]),
    ),
    "04 per-sample crops": (
        lambda: cd.explain(cd.slice1_batch, (32, 3, 64, 64), **_NOTEBOOK_04),
        (32, 3, 64, 64),
        _batch((32, 3, 64, 64), *(_NOTEBOOK_04[k] for k in ("window_offsets", "window_sizes", "window_strides")), True),
    ),
    # notebooks/01_operators.ipynb
    "01 padded tensor": (lambda: cd.explain(cd.BufferTensorDesc(F32, [3, 4], strides=[6, 1])), (3, 4), []),
    "01 SLICE example": (lambda: cd.explain(EXAMPLES[0].desc), _GRID, [_product(_GRID, EXAMPLES[0].expected[0] - 1)]),
    "01 slice": (
        lambda: cd.explain(cd.slice, (4, 4), offsets=[1, 0], sizes=[2, 2], strides=[0, 3]),
        (4, 4),
        [[np.array([1]), np.array([0, 3])]],
    ),
    "01 SLICE1 example": (lambda: cd.explain(EXAMPLES[3].desc), _GRID, [_product(_GRID, EXAMPLES[3].expected[0] - 1)]),
    "01 strided_slice": (
        lambda: cd.explain(cd.strided_slice, (2, 3, 5), np.s_[:, ::-1, 4:0:-2]),
        (2, 3, 5),
        [[np.arange(2), np.arange(3), np.array([2, 4])]],
    ),
    "01 SLICE_GRAD example": (
        lambda: cd.explain(EXAMPLES[4].desc),
        _GRID,
        [_product(_GRID, np.flatnonzero(EXAMPLES[4].expected[0]))],
    ),
    "01 SPLIT example": (lambda: cd.explain(EXAMPLES[5].desc), (1, 1, 6, 2), []),
    "01 split": (lambda: cd.explain(cd.split, (2, 6), split_sizes=[1, 2, 3], axis=1), (2, 6), []),
    "01 join": (lambda: cd.explain(cd.join, [(2, 1), (2, 2), (2, 3)], axis=1), (2, 6), []),
    # notebooks/02_tasks.ipynb
    "02 strided_slice": (
        lambda: cd.explain(cd.strided_slice, (1, 1, 8, 8), np.s_[:, :, 2:6, 6:2:-1]),
        (1, 1, 8, 8),
        [[np.array([0]), np.array([0]), np.arange(2, 6), np.arange(3, 7)]],
    ),
    "02 split": (lambda: cd.explain(cd.split, (1, 2, 12), split_sizes=[4, 4, 4], axis=-1), (1, 2, 12), []),
    "02 strided_slice_grad": (
        lambda: cd.explain(cd.strided_slice_grad, (1, 1, 4, 4), (1, 1, 8, 8), np.s_[:, :, 2:6, 6:2:-1]),
        (1, 1, 8, 8),
        [[np.array([0]), np.array([0]), np.arange(2, 6), np.arange(3, 7)]],
    ),
}


# ---- Chromium, and its screenshots ------------------------------------------------------------------


def _screenshot(svg, directory, name):
    """The PNG of ``svg`` (a picture's HTML) in a page of its own, as headless Chromium draws it
    at the SVG's size, one device pixel a CSS pixel."""
    root = ET.fromstring(svg)
    width, height = int(root.get("width")), int(root.get("height"))
    page, png = directory / f"{name}.html", directory / f"{name}.png"
    page.write_text(f'<!doctype html><html><body style="margin:0">{svg}</body></html>')
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",  # as root (containers, CI) Chromium will not start without it
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--user-data-dir={profile}",
                f"--screenshot={png}",
                f"--window-size={width},{height}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    return _read_png(png.read_bytes()), (width, height)


def _read_png(data):
    """The RGB pixels (``(height, width, 3)`` uint8) of an 8-bit RGB or RGBA PNG, read with zlib
    and NumPy: each pixel is unfiltered from its left, upper and upper-left neighbours, so the
    pixels of an anti-diagonal are unfiltered together, one diagonal after another."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and not interlace, (depth, colour, interlace)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    channels = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(height, 1 + width * channels)
    filters, filtered = raw[:, 0].astype(np.int32), raw[:, 1:].reshape(height, width, channels).astype(np.int32)
    out = np.zeros((height + 1, width + 1, channels), np.int32)  # a row of zeros above, a column left
    for k in range(height + width - 1):
        y = np.arange(max(0, k - width + 1), min(height, k + 1))
        x = k - y
        a, b, c = out[y + 1, x], out[y, x + 1], out[y, x]  # left, up, upper left
        p = a + b - c
        pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
        paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        f = filters[y][:, None]
        predicted = np.select([f == 1, f == 2, f == 3, f == 4], [a, b, (a + b) // 2, paeth], 0)
        out[y + 1, x + 1] = (filtered[y, x] + predicted) & 255
    return out[1:, 1:, :3].astype(np.uint8)


def _is(pixels, colour, tolerance=12):
    return (np.abs(pixels.astype(np.int32) - colour) <= tolerance).all(axis=-1)


@pytest.fixture(scope="module")
def screenshots():
    """``{case: (picture, pixels, (width, height))}``: every case's screenshot, taken four at a time."""
    kept = os.environ.get("CUDADML_SCREENSHOTS")
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(kept or scratch)
        directory.mkdir(parents=True, exist_ok=True)
        pictures = {name: draw() for name, (draw, _, _) in CASES.items()}
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            shots = {
                name: pool.submit(_screenshot, picture._repr_html_(), directory, name.replace(" ", "_"))
                for name, picture in pictures.items()
            }
            yield {name: (pictures[name], *shot.result()) for name, shot in shots.items()}


# ---- where the windows are drawn, and what the screenshot shows there -----------------------------------


def _geometry(svg):
    """The views and overviews of a picture: per group, its kind, leading index, origin, cell
    size or scale, extents, and the windows it outlines (its ``data-window`` groups)."""
    found = []
    for g in ET.fromstring(svg).iter(f"{SVG}g"):
        if g.get("data-view") is None and g.get("data-overview") is None:
            continue
        item = {
            "kind": "view" if g.get("data-view") is not None else "overview",
            "lead": tuple(int(i) for i in g.get("data-lead").split(",") if i),
            "origin": tuple(map(int, g.get("data-origin").split())),
            "windows": [w.get("data-window") for w in g.iter(f"{SVG}g") if w.get("data-window") is not None],
        }
        if item["kind"] == "view":
            item["cell"] = tuple(map(int, g.get("data-cell").split()))
            item["rows"], item["cells"] = (tuple(map(int, g.get(k).split())) for k in ("data-rows", "data-cells"))
        else:
            item["scale"] = tuple(map(float, g.get("data-scale").split()))
            item["size"] = tuple(map(int, g.get("data-size").split()))
        found.append(item)
    return found


def _box(window, lead):
    """``((first row, last row), (first column, last column))`` a window reads in the slice at
    ``lead``, or None where it reads none of it."""
    *leads, rows, columns = window if len(window) > 1 else [np.array([0]), *window]
    if any(i not in coords for i, coords in zip(lead, leads)):
        return None
    return (int(rows.min()), int(rows.max())), (int(columns.min()), int(columns.max()))


def _keys(item):
    """The windows a view or overview outlines, by number (the one window of a copy: 0)."""
    return sorted({int(k) if k else 0 for k in item["windows"]})


def _meets(item, box, layout):
    """Whether a window's ``box`` (`_box`) has an edge in a view (its outline shows there), or
    shows on an overview."""
    if box is None:
        return False
    if item["kind"] == "overview":
        return True
    (r0, r1), (c0, c1) = box
    c0, c1 = layout.cell(c0), layout.cell(c1)
    (v0, v1), (w0, w1) = item["rows"], item["cells"]
    if not (r0 <= v1 and r1 >= v0 and c0 <= w1 and c1 >= w0):
        return False
    return any(v0 <= r <= v1 for r in (r0, r1)) or any(w0 <= c <= w1 for c in (c0, c1))


def _edge_pixels(pixels, horizontal, at, start, stop, ignore):
    """The pixels of the outer row (or column) of a 2-pixel stroke along ``at``, from ``start`` to
    ``stop``, less the pixels in ``ignore`` (a mask); and whether each is ``OUTLINE``."""
    along = np.arange(start + 3, stop - 3)  # the corners apart
    ys, xs = (np.full_like(along, at - 1), along) if horizontal else (along, np.full_like(along, at - 1))
    keep = ~ignore[ys, xs]
    return _is(pixels[ys[keep], xs[keep]], OUTLINE)


@pytest.mark.parametrize("case", CASES)
def test_each_outline_lies_on_its_windows_cells_in_the_screenshot(screenshots, case):
    picture, pixels, (width, height) = screenshots[case]
    windows = CASES[case][2]
    assert pixels.shape[:2] == (height, width)
    many = picture.outlines is not None
    outline = _is(pixels, OUTLINE)
    allowed = np.zeros(outline.shape, bool)  # where outline pixels may be: around the edges expected
    tags = np.zeros(outline.shape, bool)  # where window numbers cover outlines (drawn after them)
    checks = []
    geometry = _geometry(picture.svg)
    assert geometry or not picture.slices
    overviews = {item["lead"]: _keys(item) for item in geometry if item["kind"] == "overview"}
    for item in geometry:
        keys = _keys(item)
        boxes = {k: _box(windows[k], item["lead"]) for k in keys}
        assert all(_meets(item, box, picture.layout) for box in boxes.values()), f"{case}: an outline off its window"
        if not many:  # the one window of a copy: outlined wherever it shows
            assert keys == ([0] if windows and _meets(item, _box(windows[0], item["lead"]), picture.layout) else [])
        elif item["lead"] in overviews:  # the windows outlined on a slice's overview: on its views too
            sampled = overviews[item["lead"]]
            assert keys == [k for k in sampled if _meets(item, _box(windows[k], item["lead"]), picture.layout)]
        for k, ((r0, r1), (c0, c1)) in boxes.items():
            c0, c1 = picture.layout.cell(c0), picture.layout.cell(c1)
            ox, oy = item["origin"]
            if item["kind"] == "overview":
                sx, sy = item["scale"]

                def span(first, last, scale, origin):
                    a, b = origin + round(first * scale), origin + round((last + 1) * scale)
                    return ((a + b) // 2 - 1, (a + b) // 2 + 2) if b - a < 3 else (a, b)

                (left, right), (top, bottom) = span(c0, c1, sx, ox), span(r0, r1, sy, oy)
                sides = (True, True, True, True)
            else:
                cw, ch = item["cell"]
                (v0, v1), (w0, w1) = item["rows"], item["cells"]
                assert r0 <= v1 and r1 >= v0 and c0 <= w1 and c1 >= w0, f"window {k} outlined off its view"
                top, bottom = oy + (max(r0, v0) - v0) * ch, oy + (min(r1, v1) + 1 - v0) * ch
                left, right = ox + (max(c0, w0) - w0) * cw, ox + (min(c1, w1) + 1 - w0) * cw
                sides = (v0 <= r0, r1 <= v1, w0 <= c0, c1 <= w1)  # top, bottom, left, right: where it ends
            if many and sides[0] and sides[2]:
                tags[top : top + 11, left : left + 4 + 6 * len(str(k))] = True
            for closed, horizontal, at, start, stop in (
                (sides[0], True, top, left, right),
                (sides[1], True, bottom, left, right),
                (sides[2], False, left, top, bottom),
                (sides[3], False, right, top, bottom),
            ):
                if closed:
                    if horizontal:
                        allowed[at - 3 : at + 3, start - 3 : stop + 3] = True
                    else:
                        allowed[start - 3 : stop + 3, at - 3 : at + 3] = True
                    checks.append((item["kind"], k, horizontal, at, start, stop))
    # Each side where a window ends is drawn in OUTLINE (a tiny box's sides: somewhere near them).
    for kind, k, horizontal, at, start, stop in checks:
        if stop - start >= 12:
            found = _edge_pixels(pixels, horizontal, at, start, stop, tags)
            assert found.size == 0 or found.mean() >= 0.8, f"{case}: window {k}'s side at {at} in the {kind}"
        else:
            near = (
                outline[at - 3 : at + 3, start - 3 : stop + 3]
                if horizontal
                else outline[start - 3 : stop + 3, at - 3 : at + 3]
            )
            assert near.any(), f"{case}: window {k}'s short side at {at} in the {kind}"
    stray = outline & ~allowed
    assert not stray.any(), (
        f"{case}: {stray.sum()} outline pixels off every window's edges, e.g. at {np.argwhere(stray)[:3]}"
    )
    assert outline.any() == bool(checks)


@pytest.mark.parametrize("case", CASES)
def test_the_cells_a_window_reads_are_filled_in_the_screenshot(screenshots, case):
    picture, pixels, _ = screenshots[case]
    windows = CASES[case][2]
    if not windows:
        return
    many = picture.outlines is not None
    for item in _geometry(picture.svg):
        if item["kind"] != "view":
            continue
        ox, oy = item["origin"]
        cw, ch = item["cell"]
        (v0, v1), (w0, w1) = item["rows"], item["cells"]
        lay = picture.layout
        read = np.zeros((v1 + 1 - v0, w1 + 1 - w0), bool)  # the view's cells some window reads
        for window in windows:
            *leads, rows, columns = window if len(window) > 1 else [np.array([0]), *window]
            if all(i in coords for i, coords in zip(item["lead"], leads)):
                rows, cells = rows[(rows >= v0) & (rows <= v1)], lay.cell(columns)
                cells = cells[(cells >= w0) & (cells <= w1)]
                read[np.ix_(rows - v0, cells - w0)] = True
        tagged = set()  # the cells under a window's number
        for k in _keys(item):
            (r0, _), (c0, _) = _box(windows[k], item["lead"])
            tagged.add((r0, lay.cell(c0)))
        for r in range(v0, v1 + 1):
            for j in range(w0, w1 + 1):
                if (r, j) in tagged or (
                    lay.pitched and (j % lay.column_stride or j // lay.column_stride >= lay.columns)
                ):
                    continue  # a window's number, or padding
                # A corner of the cell, away from its label, outlines and arrows.
                pixel = tuple(pixels[oy + (r - v0) * ch + 4, ox + (j - w0) * cw + 4])
                where = f"{case}: cell ({r}, {j}) of slice {item['lead']}"
                if not read[r - v0, j - w0]:
                    assert pixel == WHITE, f"{where} is read by no window"
                else:
                    assert pixel != WHITE if many else _is(np.array(pixel), READ), f"{where} is read"


def test_large_pictures_draw_the_window_at_a_readable_scale(screenshots):
    """The crop and the 10 000 crops: an overview per slice drawn and cells at least a cell high."""
    for case in ("crop", "10 000 crops", "04 per-sample crops"):
        picture, _, (width, _) = screenshots[case]
        geometry = _geometry(picture.svg)
        assert sum(item["kind"] == "overview" for item in geometry) == len(picture.slices) >= 1
        assert all(item["cell"][1] == svg.CELL for item in geometry if item["kind"] == "view")
        assert width <= 1100 and len(picture.svg.encode()) <= explanation.MAX_BYTES

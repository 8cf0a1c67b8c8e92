"""Reprs and pictures: concise reprs, and `explain` pictures that agree with NumPy indexing,
with the descriptors' own pictures, and with what each kind of operator does."""

import itertools
import time
import tracemalloc
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.examples import EXAMPLES

F32 = cd.TensorDataType.FLOAT32


def _marks(explanation):
    """``{element offset: label}`` of an explanation's grid."""
    return {o: label for o, (label, _) in explanation.grid.marks.items()}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (cd.BufferTensorDesc(F32, [2, 3]), "BufferTensorDesc(FLOAT32, (2, 3))"),
        (
            cd.BufferTensorDesc(cd.TensorDataType.INT8, [2, 3], [4, 1], 12, 16, cd.TensorFlags.OWNED_BY_DML),
            "BufferTensorDesc(INT8, (2, 3), strides=(4, 1), total_tensor_size_in_bytes=12, "
            "guaranteed_base_offset_alignment=16, flags=OWNED_BY_DML)",
        ),
        (
            EXAMPLES[3].desc,
            "Slice1OperatorDesc(FLOAT32 (1, 1, 4, 4) -> (1, 1, 2, 2), input_window_offsets=(0, 0, 0, 1), "
            "input_window_sizes=(1, 1, 4, 3), input_window_strides=(1, 1, -2, 2))",
        ),
        (
            cd.SplitOperatorDesc(cd.BufferTensorDesc(F32, [8, 2]), [cd.BufferTensorDesc(F32, [1, 2])] * 8, 0),
            "SplitOperatorDesc(FLOAT32 (8, 2) -> (1, 2), (1, 2), (1, 2), ... (8 tensors), axis=0)",
        ),
        (
            cd.SliceOperatorDesc(
                cd.BufferTensorDesc(F32, [4, 4, 4, 4]),
                cd.BufferTensorDesc(F32, [1, 1, 1, 1]),
                [0] * 4,
                [1] * 4,
                [1] * 4,
                feature_level="2_1",
            ),
            "SliceOperatorDesc(FLOAT32 (4, 4, 4, 4) -> (1, 1, 1, 1), offsets=(0, 0, 0, 0), sizes=(1, 1, 1, 1), "
            "strides=(1, 1, 1, 1), feature_level=2_1)",
        ),
        (
            EXAMPLES[4].desc.compile(),
            "<CompiledOperator SliceGrad FLOAT32 (1, 1, 2, 2) -> (1, 1, 4, 4): a gradient gather, 64 bytes out>",
        ),
        (EXAMPLES[5].desc.compile(), None),
    ],
)
def test_reprs_are_concise(value, expected):
    text = repr(value)
    assert text == expected if expected else ("3 strided copies" in text and "plan" not in text)
    assert len(text) < 200 and "\n" not in text


@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple),
    data=st.data(),
)
@settings(max_examples=40, deadline=None)
def test_a_slice_picture_numbers_the_cells_numpy_reads(shape, data):
    key = tuple(
        slice(data.draw(st.none() | st.integers(-n, n)), None, data.draw(st.sampled_from([1, 2, -1, -3])))
        for n in shape
    )
    picture = cd.explain(cd.strided_slice, shape, key)
    read = np.arange(int(np.prod(shape))).reshape(shape)[key].ravel()
    expected = {}
    for k, cell in enumerate(read.tolist()):
        expected.setdefault(cell, []).append(str(k))
    assert _marks(picture) == {cell: ",".join(ks) for cell, ks in expected.items()}


def test_a_gradient_picture_shows_where_each_element_lands():
    picture = cd.explain(cd.strided_slice_grad, (2, 2), (4, 5), np.s_[::-2, 4:0:-3])
    grid = np.full((4, 5), -1)
    grid[::-2, 4:0:-3] = np.arange(4).reshape(2, 2)
    assert _marks(picture) == {int(o): str(v) for o, v in enumerate(grid.ravel()) if v >= 0}
    assert picture.grid.steps == {0: -2, 1: -3}
    assert "rows: axis 0, step -2 (upwards); columns: axis 1, step -3 (right to left)" in repr(picture)


@pytest.mark.parametrize(
    ("fn", "args", "parts"),
    [
        (cd.split, ((3, 5), [2, 0, 3], -1), [0, 0, 2, 2, 2]),
        (cd.join, ([(3, 1), (3, 0), (3, 4)], 1), [0, 2, 2, 2, 2]),
    ],
)
def test_split_and_join_pictures_colour_each_part(fn, args, parts):
    picture = cd.explain(fn, *args)
    assert {o: part for o, (_, part) in picture.grid.marks.items()} == {
        r * 5 + c: p for r in range(3) for c, p in enumerate(parts)
    }
    assert len(picture.parts) == 3
    svg = picture.svg
    assert all(colour in svg for colour in (cd.display.PALETTE[0], cd.display.PALETTE[2]))


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.name for e in EXAMPLES])
def test_a_descriptor_draws_what_its_array_function_draws(example):
    d = example.desc
    name = type(d).__name__
    if name == "SliceOperatorDesc":
        call = cd.explain(cd.slice, d.input_tensor.sizes, d.offsets, d.sizes, d.strides)
    elif name == "Slice1OperatorDesc":
        window = d.input_window_offsets, d.input_window_sizes, d.input_window_strides
        call = cd.explain(cd.slice1, d.input_tensor.sizes, *window, output_sizes=d.output_tensor.sizes)
    elif name == "SliceGradOperatorDesc":
        window = d.input_window_offsets, d.input_window_sizes, d.input_window_strides
        call = cd.explain(cd.slice_grad, d.input_gradient_tensor.sizes, d.output_gradient_tensor.sizes, *window)
    elif name == "SplitOperatorDesc":
        call = cd.explain(cd.split, d.input_tensor.sizes, [t.sizes[d.axis] for t in d.output_tensors], d.axis)
    else:
        call = cd.explain(cd.join, [t.sizes for t in d.input_tensors], d.axis)
    picture = cd.explain(d)
    assert picture.grid == call.grid
    assert d.compile()._repr_html_() == d._repr_html_() == picture.svg


def test_padding_is_drawn_hatched():
    tensor = cd.BufferTensorDesc(F32, [2, 3], strides=[5, 1])
    assert repr(cd.explain(tensor)).splitlines()[-2:] == ["0  0 1 2 # #", "1  3 4 5 # #"]
    assert 'fill="url(#padding)"' in tensor._repr_html_()
    padded = cd.Slice1OperatorDesc(
        cd.BufferTensorDesc(F32, [3, 2], strides=[4, 1]), cd.BufferTensorDesc(F32, [2, 1]), [0, 1], [3, 1], [-2, 1]
    )
    assert repr(cd.explain(padded)).splitlines()[-3:] == ["0  . 1 # #", "1  . . # #", "2  . 0 # #"]


def test_large_tensors_are_drawn_cut_and_say_so():
    picture = cd.explain(cd.strided_slice, (10, 30, 40), np.s_[:, ::2])
    lines = repr(picture).splitlines()
    assert lines[-3:] == ["2 more 2-D slices not drawn", "rows 24 to 29 not drawn", "columns 24 to 39 not drawn"]
    assert sum(line.startswith("[") for line in lines) == cd.display.MAX_SLICES


@pytest.mark.parametrize(
    "picture",
    [
        cd.explain(EXAMPLES[3].desc),
        cd.explain(cd.slice, (3, 3), [0, 0], [2, 2], [0, 1]),
        cd.explain(cd.split, (4,), 2),
        cd.explain(cd.strided_slice, (3, 4), np.s_[1, 2]),
        cd.explain(cd.BufferTensorDesc(F32, [2, 2, 2])),
        cd.explain(cd.slice1_batch, (2, 3, 4), [[0, 1], [1, 0]], [2, 3], [[1, -1], [-1, 1]], per_sample=True),
    ],
)
def test_the_svg_is_one_well_formed_document_with_a_cell_per_element(picture):
    root = ET.fromstring(picture.svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    rects = root.iter("{http://www.w3.org/2000/svg}rect")
    cells = [r for r in rects if r.get("width") == str(cd.display._CELL) and r.get("fill") != "none"]
    drawn = sum(len(rows) * len(rows[0]) for _, rows in picture._slices()[0])
    assert len(cells) == drawn
    assert picture._repr_html_() == picture.svg


def test_negative_steps_get_arrows_against_the_axis():
    up = cd.explain(cd.strided_slice, (4, 4), np.s_[::-1]).svg
    down = cd.explain(cd.strided_slice, (4, 4), np.s_[::1]).svg

    def arrows(svg):
        return [
            (float(a.get("y1")), float(a.get("y2")))
            for a in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}line")
            if a.get("x1") == a.get("x2")
        ]

    ((top, bottom),) = arrows(down)
    assert top < bottom and arrows(up) == [(bottom, top)]


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: cd.explain(print), TypeError, "takes an operator descriptor"),
        (lambda: cd.explain(EXAMPLES[0].desc, 1), TypeError, "takes no further arguments"),
        (lambda: cd.explain(cd.slice1, (4, 4), [0, 0], [5, 4]), cd.DescriptorError, "exceeds InputTensor.Sizes"),
    ],
)
def test_explain_refuses_what_it_cannot_draw(call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---- pictures cost what they draw ------------------------------------------------------------------

BIG_SLICE = cd.SliceOperatorDesc(
    cd.BufferTensorDesc(F32, [64, 3, 4096, 4096]),
    cd.BufferTensorDesc(F32, [64, 3, 2048, 2048]),
    [0, 0, 0, 0],
    [64, 3, 2048, 2048],
    [1, 1, 2, 2],
)


def _drawn(shape):
    """The element offsets a picture of a packed tensor of ``shape`` draws: the first slices,
    rows and columns, as NumPy slices them."""
    offsets = np.arange(int(np.prod(shape))).reshape(-1, *shape[-2:] if len(shape) > 1 else (1, shape[0]))
    drawn = offsets[: cd.display.MAX_SLICES, : cd.display.MAX_ROWS, : cd.display.MAX_COLUMNS]
    return set(drawn.ravel().tolist())


def _labels(readers):
    """``{offset: label}`` from ``{offset: [reader, ...]}`` (in row-major order), as pictures label."""
    return {o: ",".join(map(str, ks[:3])) + ("…" if len(ks) > 3 else "") for o, ks in readers.items()}


def _read_by(read):
    """``{offset: [row-major index of each element of read that holds it]}``."""
    readers = {}
    for k, o in enumerate(np.asarray(read).ravel().tolist()):
        readers.setdefault(o, []).append(k)
    return readers


@pytest.mark.parametrize(
    "draw",
    [
        pytest.param(lambda: cd.explain(BIG_SLICE).svg, id="descriptor"),
        pytest.param(lambda: BIG_SLICE.compile()._repr_html_(), id="compiled"),
        pytest.param(lambda: cd.explain(cd.strided_slice, (16384, 16384), np.s_[::-2, 1::3]).svg, id="strided_slice"),
    ],
)
def test_a_picture_of_a_large_tensor_costs_what_it_draws(draw):
    draw()  # compiled once (the cache) and warm
    assert _best_of_3(draw) < 0.05
    tracemalloc.start()
    try:
        draw()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB"


def _best_of_3(draw):
    """The shortest of three runs of ``draw``, in seconds (a slow or busy machine's noise only adds)."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        draw()
        times.append(time.perf_counter() - start)
    return min(times)


@pytest.mark.parametrize(
    ("shape", "key"),
    [
        ((40, 50), np.s_[::-2, 1::3]),
        ((40, 50), np.s_[3:, ::-1]),
        ((40, 50), np.s_[7, None, 30:0:-4]),
        ((12, 30, 40), np.s_[..., ::2]),
        ((3, 4, 30, 40), np.s_[:, ::-1, 5:, None, 1::3]),
        ((100,), np.s_[::-7]),
    ],
)
def test_marks_of_a_tensor_larger_than_the_picture_are_numpys_where_drawn(shape, key):
    drawn, index = _drawn(shape), np.arange(int(np.prod(shape))).reshape(shape)
    picture = cd.explain(cd.strided_slice, shape, key)
    expected = {o: label for o, label in _labels(_read_by(index[key])).items() if o in drawn}
    assert _marks(picture) == expected and expected
    received = np.full(shape, -1)
    received[key] = np.arange(index[key].size).reshape(index[key].shape)
    gradient = cd.explain(cd.strided_slice_grad, index[key].shape, shape, key)
    assert _marks(gradient) == {o: str(k) for o, k in enumerate(received.ravel().tolist()) if k >= 0 and o in drawn}
    assert gradient.grid.steps == picture.grid.steps


def test_a_zero_stride_window_of_a_million_labels_its_first_readers():
    def draw():
        return cd.explain(cd.slice, (4, 5), [1, 0], [10**6, 5], [0, 1])

    picture = draw()
    assert _marks(picture) == {5 + j: f"{j},{j + 5},{j + 10}…" for j in range(5)}
    assert picture.grid.steps == {1: 1}
    assert repr(picture).splitlines()[5] == "1  0,5,10… 1,6,11… 2,7,12… 3,8,13… 4,9,14…"
    assert _best_of_3(lambda: repr(draw())) < 0.05


@given(
    shape=st.lists(st.integers(1, 10), min_size=0, max_size=2).flatmap(
        lambda lead: st.integers(1, 30).map(lambda n: (*lead, n))
    ),
    data=st.data(),
)
@settings(max_examples=80, deadline=None)
def test_an_aliased_input_merges_the_readers_of_every_coordinate_of_an_element(shape, data):
    # Columns 1 or 0 apart (as cells: unpitched), others 0 to 3: the layout aliases most often.
    strides = [*(data.draw(st.integers(0, 3)) for _ in shape[:-1]), data.draw(st.integers(0, 1))]
    offsets = [data.draw(st.integers(0, n - 1)) for n in shape]
    sizes = [data.draw(st.integers(1, n - o)) for n, o in zip(shape, offsets)]
    steps = [data.draw(st.sampled_from([1, 2, -1, -3])) for _ in shape]
    counts = [1 + (n - 1) // abs(s) for n, s in zip(sizes, steps)]
    source = cd.BufferTensorDesc(F32, list(shape), strides)
    desc = cd.Slice1OperatorDesc(source, cd.BufferTensorDesc(F32, counts), offsets, sizes, steps)
    axes = [np.arange(n).reshape([-1 if a == d else 1 for a in range(len(shape))]) for d, n in enumerate(shape)]
    element = np.broadcast_to(sum(a * s for a, s in zip(axes, strides)), shape)  # each coordinate's offset
    starts = [o if s > 0 else o + n - 1 for o, n, s in zip(offsets, sizes, steps)]
    read = element[np.ix_(*[b + s * np.arange(c) for b, s, c in zip(starts, steps, counts)])]
    cells = element.reshape(-1, *shape[-2:]) if len(shape) > 1 else element.reshape(1, 1, -1)
    drawn = set(cells[: cd.display.MAX_SLICES, : cd.display.MAX_ROWS, : cd.display.MAX_COLUMNS].ravel().tolist())
    readers = _read_by(read)
    picture = cd.explain(desc)
    assert _marks(picture) == {o: label for o, label in _labels(readers).items() if o in drawn}
    assert picture.legend[0].startswith(f"{len(readers)} of {int(np.prod(shape))} cells")
    aliased = len(np.unique(element)) < element.size
    assert picture.grid.steps == ({} if aliased else {d: s for d, (s, c) in enumerate(zip(steps, counts)) if c > 1})
    last = {}  # a tensor's element shows the last coordinate that reaches it
    for k, o in enumerate(element.ravel().tolist()):
        last[o] = str(k)
    assert _marks(cd.explain(source)) == {o: k for o, k in last.items() if o in drawn}


def test_an_aliased_input_of_billions_of_coordinates_is_drawn_from_the_few_that_reach_it():
    broadcast = cd.BufferTensorDesc(F32, [10**6, 4096], [0, 1])  # one row, a million times
    desc = cd.SliceOperatorDesc(broadcast, cd.BufferTensorDesc(F32, [1000, 4096]), [0, 0], [1000, 4096], [7, 1])
    picture = cd.explain(desc)
    assert _marks(picture) == {j: f"{j},{j + 4096},{j + 8192}…" for j in range(cd.display.MAX_COLUMNS)}
    assert picture.legend[0].startswith("4096 of 4096000000 cells") and picture.grid.steps == {}
    windows = cd.BufferTensorDesc(F32, [4096, 4096], [1, 1])  # overlapping rows: offset i + j
    desc = cd.Slice1OperatorDesc(windows, cd.BufferTensorDesc(F32, [2048, 2048]), [0, 0], [4096, 4096], [-2, 2])
    marks = _marks(cd.explain(desc))
    # offset o = i + j: read by output (a, b) at (4095 - 2a, 2b) with 4095 - 2a + 2b = o, row-major index 2048a + b
    assert marks[1] == "4192256" and marks[3] == "4190208,4192257" and marks[7] == "4186112,4188161,4190210…"
    assert 0 not in marks and cd.explain(desc).legend[0].startswith("4095 of")


# ---- many windows: slice1_batch and its gradient ---------------------------------------------------

BATCH = ((4, 4), [[0, 0], [1, 2], [2, 1]], [2, 2], [[1, 1], [1, -1], [-1, 1]])  # slice1_batch's docstring


def _svg_parts(svg):
    """``(outlines, tags, arrows)`` of a picture: the unfilled rectangles as ``(x, y, width,
    height)``, the white window numbers, and the arrows as ``(x1, y1, x2, y2)``."""
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.fromstring(svg)
    outlines = [
        tuple(float(r.get(k)) for k in ("x", "y", "width", "height"))
        for r in root.iter(f"{ns}rect")
        if r.get("fill") == "none"
    ]
    tags = [t.text for t in root.iter(f"{ns}text") if t.get("fill") == "#ffffff"]
    arrows = [tuple(float(a.get(k)) for k in ("x1", "y1", "x2", "y2")) for a in root.iter(f"{ns}line")]
    return outlines, tags, arrows


def test_a_batch_picture_lists_outlines_and_numbers_each_window_and_arrows_its_flips():
    picture = cd.explain(cd.slice1_batch, *BATCH)
    assert repr(picture).splitlines() == [
        "cd.slice1_batch: x (4, 4) -> (3, 2, 2)",
        "3 windows of x; each cell is numbered with the windows that read it",
        "window 0: offsets (0, 0), sizes (2, 2), strides (1, 1) -> (2, 2)",
        "window 1: offsets (1, 2), sizes (2, 2), strides (1, -1) -> (2, 2); flips axis 1",
        "window 2: offsets (2, 1), sizes (2, 2), strides (-1, 1) -> (2, 2); flips axis 0",
        "     0   1   2   3",
        "0    0   0   .   .",
        "1    0   0   1   1",
        "2    .   2 1,2   1",
        "3    .   2   2   .",
    ]
    colours = {o: part for o, (_, part) in picture.grid.marks.items()}  # the first window reading a cell
    assert colours == {0: 0, 1: 0, 4: 0, 5: 0, 6: 1, 7: 1, 9: 2, 10: 1, 11: 1, 13: 2, 14: 2}
    outlines, tags, arrows = _svg_parts(picture.svg)
    (top,) = {y - r * cd.display._CELL for (_, y, _, _), r in zip(outlines, (0, 1, 2))}  # the grid's top
    cell, left = cd.display._CELL, 30
    assert outlines == [(left + c * cell, top + r * cell, 2 * cell, 2 * cell) for r, c in ((0, 0), (1, 2), (2, 1))]
    assert tags == ["0", "1", "2"]
    # Window 1 reads its columns right to left, along its bottom; window 2 its rows upwards, on its right.
    ((x1, y1, x2, y2), (u1, v1, u2, v2)) = arrows
    assert y1 == y2 and x1 > x2 and left + 2 * cell < x2 < x1 < left + 4 * cell and top + 2 * cell < y1 < top + 3 * cell
    assert u1 == u2 and v1 > v2 and left + 2 * cell < u1 < left + 3 * cell and top + 2 * cell < v2 < v1 < top + 4 * cell
    both = cd.explain(cd.slice1_batch, (4, 4), [[1, 1]], [3, 2], [-1, -1])
    assert (
        repr(both).splitlines()[2]
        == "window 0: offsets (1, 1), sizes (3, 2), strides (-1, -1) -> (3, 2); flips axes 0, 1"
    )
    assert len(_svg_parts(both.svg)[2]) == 2
    unflipped = cd.explain(cd.slice1_batch, BATCH[0], BATCH[1], BATCH[2])
    assert _svg_parts(unflipped.svg)[2] == [] and "flips" not in repr(unflipped)


@given(
    shape=st.lists(st.sampled_from([1, 2, 3, 5, 6, 26]), min_size=1, max_size=3).map(tuple),  # 26: cut
    n=st.integers(1, 70),  # past 64: windows in more than one word of a bitset
    per_sample=st.booleans(),
    own_sizes=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
@settings(max_examples=60, deadline=None)
def test_a_batch_picture_marks_and_outlines_what_each_window_reads(shape, n, per_sample, own_sizes, seed):
    rng = np.random.default_rng(seed)
    if per_sample:
        if len(shape) == 1:
            shape = (*shape, 3)
        shape = (n, *shape[1:])  # a window per sample
    bounds = np.array(shape[per_sample:])
    d = len(bounds)
    sizes = rng.integers(1, bounds + 1, (n, d)) if own_sizes else rng.integers(1, bounds + 1)
    offsets = rng.integers(0, bounds - sizes + 1, (n, d))
    magnitudes = rng.integers(1, 4, (n, d)) if own_sizes else rng.integers(1, 4, d)
    strides = magnitudes * rng.choice([1, -1], (n, d))  # signs of their own: as many elements each
    index = np.arange(int(np.prod(shape))).reshape(shape)
    results = cd.slice1_batch(index, offsets, sizes, strides, per_sample=per_sample)
    read = [np.asarray(r).ravel() for r in results]  # the element offsets each window reads
    readers = {}
    for k, offs in enumerate(read):
        for o in offs.tolist():
            readers.setdefault(o, []).append(k)
    drawn = _drawn(shape)
    picture = cd.explain(cd.slice1_batch, shape, offsets, sizes, strides, per_sample=per_sample)
    assert _marks(picture) == {o: label for o, label in _labels(readers).items() if o in drawn}
    first = {o: ks[0] for o, ks in readers.items() if o in drawn}  # each cell coloured as its first window
    assert {o: part for o, (_, part) in picture.grid.marks.items()} == first
    # Each window outlined in a slice drawn: around the cells drawn it reads there, in slice and then
    # window order, at most MAX_OUTLINES; its flips where it takes more than one element backwards.
    rows, cols = (shape[-2] if len(shape) > 1 else 1), shape[-1]
    leads = list(itertools.islice(np.ndindex(*shape[:-2]), cd.display.MAX_SLICES))
    counts = np.broadcast_to(1 + (sizes - 1) // magnitudes, (n, d))
    axes = [a - per_sample for a in (len(shape) - 2, len(shape) - 1)]  # the window's dims drawn, if any
    flips = [tuple(bool(a >= 0 and strides[k, a] < 0 and counts[k, a] > 1) for a in axes) for k in range(n)]
    expected, seen = [], set()
    for s, lead in enumerate(leads):
        for k, offs in enumerate(read):
            coords = np.unravel_index(offs, shape)
            here = np.ones(len(offs), bool)
            for axis, i in enumerate(lead):
                here &= coords[axis] == i
            r = coords[-2][here] if len(shape) > 1 else np.zeros(here.sum(), int)
            c = coords[-1][here]
            keep = (r < cd.display.MAX_ROWS) & (c < cd.display.MAX_COLUMNS)
            if keep.any():
                seen.add(k)
                box = (int(r[keep].min()), int(r[keep].max())), (int(c[keep].min()), int(c[keep].max()))
                expected.append((s, (k, *box, flips[k])))
    assert rows and cols
    outlined = expected[: cd.display.MAX_OUTLINES]
    assert picture.outlines.boxes == [[box for t, box in outlined if t == s] for s in range(len(leads))]
    assert picture.outlines.left_out == len(expected) - len(outlined)
    assert picture.outlines.unseen == n - len(seen)
    gradient = cd.explain(cd.slice1_batch_grad, results, shape, offsets, sizes, strides, per_sample=per_sample)
    assert gradient.grid == picture.grid and gradient.outlines == picture.outlines


def test_a_per_sample_batch_outlines_each_window_in_its_own_sample():
    offsets, strides = [[0, 0], [1, 2], [2, 1], *[[0, 0]] * 9], [[1, 1], [1, -1], [-1, 1], *[[1, 1]] * 9]
    picture = cd.explain(cd.slice1_batch, (12, 4, 5), offsets, [2, 3], strides, per_sample=True)
    boxes = picture.outlines.boxes
    assert [[k for k, *_ in slice_boxes] for slice_boxes in boxes] == [[s] for s in range(cd.display.MAX_SLICES)]
    assert boxes[1] == [(1, (1, 2), (2, 4), (False, True))] and boxes[2] == [(2, (2, 3), (1, 3), (True, False))]
    lines = repr(picture).splitlines()
    assert lines[:3] == [
        "cd.slice1_batch: x (12, 4, 5) -> (12, 2, 3)",
        "12 windows of x; each cell is numbered with the windows that read it",
        "per_sample: window k reads x[k]; its offsets, sizes and strides are along x[k]'s axes",
    ]
    assert lines[3 + cd.display.MAX_LISTED] == f"... and {12 - cd.display.MAX_LISTED} more windows"
    assert lines[-2:] == ["4 more 2-D slices not drawn", "4 windows read no cell drawn"]
    assert lines[lines.index("[1, :, :]") + 2 : lines.index("[1, :, :]") + 6] == [
        "0  . . . . .",
        "1  . . 1 1 1",
        "2  . . 1 1 1",
        "3  . . . . .",
    ]
    outlines, tags, arrows = _svg_parts(picture.svg)
    assert len(outlines) == cd.display.MAX_SLICES and tags == [str(s) for s in range(cd.display.MAX_SLICES)]
    assert len(arrows) == 2


def test_a_batch_gradient_is_drawn_on_its_result_from_dy_or_its_shapes():
    forward = cd.explain(cd.slice1_batch, *BATCH)
    shape, windows = BATCH[0], BATCH[1:]
    for dy in [(3, 2, 2), np.zeros((3, 2, 2), np.float32)]:
        picture = cd.explain(cd.slice1_batch_grad, dy, shape, *windows)
        assert picture.grid == forward.grid and picture.outlines == forward.outlines
        assert picture.title == "cd.slice1_batch_grad: dy (3, 2, 2) -> (4, 4)"
        assert picture.legend[0].startswith("3 windows; each cell shows the windows whose gradients it receives")
    own = cd.explain(cd.slice1_batch_grad, [(2, 2), [1, 3]], (4, 4), [[0, 0], [1, 1]], [[2, 2], [1, 3]])
    assert own.title == "cd.slice1_batch_grad: dy 2 arrays -> (4, 4)"
    assert _marks(own) == {0: "0", 1: "0", 4: "0", 5: "0,1", 6: "1", 7: "1"}


_X, _DY = np.zeros((4, 4), np.uint32), np.zeros((2, 2, 2), np.uint32)
_FOUR_BROKEN = [[1, 1], [1, 1], [0, 1], [1, 1], [4, 1]]  # sizes: with offsets -1, 9 and 1 + 4 > 4, windows 1 to 4


@pytest.mark.parametrize(
    ("fn", "args", "kwargs"),
    [
        (cd.slice1_batch, (_X, [[0, 0], [3, 3]], [2, 2]), {}),  # window 1 past the end
        (cd.slice1_batch, (_X, [[0, 0], [-1, 0], [0, 0], [9, 9], [1, 1]], _FOUR_BROKEN), {}),  # 3 shown, 1 counted
        (cd.slice1_batch, (_X, [[0, 0]], [2, 2], [[0, 1]]), {}),  # a zero stride
        (cd.slice1_batch, (_X, [[0, 0], [0, 0]], [2, 2], [[1, 1], [2, 1]]), {}),  # shared sizes, other counts
        (cd.slice1_batch, (_X, [[0], [1]], [2]), {"per_sample": True}),  # 2 windows for 4 samples
        (cd.slice1_batch, (_X, [0, 0], [2, 2]), {}),  # offsets not (N, d)
        (cd.slice1_batch, (_X, [[0, 0]], [2.5, 2]), {}),
        (cd.slice1_batch, (_X, [[0, 0]], [2, 2]), {"per_sample": 1}),
        (cd.slice1_batch_grad, (_DY, (4, 4), [[0, 0], [3, 3]], [2, 2]), {}),
        (cd.slice1_batch_grad, (np.zeros((2, 3, 2), np.uint32), (4, 4), [[0, 0], [1, 1]], [2, 2]), {}),
        (cd.slice1_batch_grad, ([_DY[0], _DY[1]], (4, 4), [[0, 0], [1, 1]], [2, 2]), {}),  # a list for one size
        (cd.slice1_batch_grad, (_DY, (4, 4), [[0, 0], [1, 1]], [[2, 2], [1, 2]]), {}),  # one array for own sizes
        (cd.slice1_batch_grad, ([], (4, 4), [[0, 0]], [2, 2]), {}),
        (cd.slice1_batch_grad, ([_DY[0], np.zeros((2, 3), np.uint32)], (4, 4), [[0, 0], [1, 1]], [[2, 2], [2, 2]]), {}),
    ],
)
def test_explaining_a_batch_raises_what_the_function_raises(fn, args, kwargs):
    with pytest.raises((TypeError, ValueError)) as raised:
        fn(*args, **kwargs)
    expected = raised.value
    first = args[0].shape if isinstance(args[0], np.ndarray) else [a.shape for a in args[0]]  # x or dy
    for arrays in (args, (first, *args[1:])):  # the arrays, or their shapes
        with pytest.raises(type(expected)) as explained:
            cd.explain(fn, *arrays, **kwargs)
        assert str(explained.value) == str(expected)


_N = 10_000
_RNG = np.random.default_rng(18)
_SIGNS = _RNG.choice([1, -1], (_N, 2))


@pytest.mark.parametrize(
    ("draw", "outlines", "unseen", "first"),
    [
        pytest.param(  # every window over the cells drawn, overlapping
            lambda: cd.explain(cd.slice1_batch, (32, 32), _RNG.integers(0, 16, (_N, 2)), [16, 16], _SIGNS),
            _N,
            0,
            0,
            id="overlapping",
        ),
        pytest.param(  # per-window sizes and strides, scattered over a large array
            lambda: cd.explain(
                cd.slice1_batch,
                (60_000, 60_000),
                np.r_[_RNG.integers(30, 50_000, (_N - 30, 2)), [[0, 0]] * 30],
                _RNG.integers(1, 64, (_N, 2)),
                _SIGNS * _RNG.integers(1, 4, (_N, 2)),
            ),
            30,
            _N - 30,
            _N - 30,
            id="scattered",
        ),
        pytest.param(
            lambda: cd.explain(
                cd.slice1_batch, (_N, 64, 64), _RNG.integers(0, 16, (_N, 2)), [32, 32], _SIGNS, per_sample=True
            ),
            cd.display.MAX_SLICES,
            _N - cd.display.MAX_SLICES,
            0,
            id="per_sample",
        ),
        pytest.param(
            lambda: cd.explain(cd.slice1_batch_grad, (_N, 16, 16), (32, 32), _RNG.integers(0, 16, (_N, 2)), [16, 16]),
            _N,
            0,
            0,
            id="gradient",
        ),
    ],
)
def test_a_picture_of_ten_thousand_windows_costs_what_it_draws(draw, outlines, unseen, first):
    picture = draw()
    assert picture.outlines.boxes[0][0][0] == first  # the first window outlined
    assert sum(map(len, picture.outlines.boxes)) == min(outlines, cd.display.MAX_OUTLINES)
    assert (picture.outlines.left_out, picture.outlines.unseen) == (max(0, outlines - cd.display.MAX_OUTLINES), unseen)
    text, svg = repr(picture), picture.svg
    assert sum(line.startswith("window ") for line in text.splitlines()) == cd.display.MAX_LISTED
    assert f"... and {_N - cd.display.MAX_LISTED} more windows" in text
    assert (f"{unseen} windows read no cell drawn" in text) == bool(unseen)
    assert (f"{outlines - cd.display.MAX_OUTLINES} more window outlines not drawn" in svg) == (outlines > 24)
    assert len(_svg_parts(svg)[0]) == min(outlines, cd.display.MAX_OUTLINES)
    assert _best_of_3(lambda: draw().svg) < 0.05
    tracemalloc.start()
    try:
        assert draw().svg
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20, f"{peak / 2**20:.1f} MiB"

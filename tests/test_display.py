"""Reprs and pictures: concise reprs, and `explain` pictures that agree with NumPy indexing,
with the descriptors' own pictures, and with what each kind of operator does."""

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

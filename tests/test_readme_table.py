"""The README's "Which function do I want" table: each row's cudadml call gives the same result
as the call it maps, on fresh random data, where the row does not say it differs; where it says
so, the difference is the one it names."""

import re
from pathlib import Path

import numpy as np
import pytest

import cudadml as cd
import cudadml.numpy as cnp

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(20261128)


def _x(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _same(got, want):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    assert np.array_equal(got, want)


def _torch():
    return pytest.importorskip("torch")


def test_the_table_lists_the_rows_checked_here():
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Which function do I want")[1].split("\n\n")[2]
    firsts = [re.match(r"\| (.*?) \|", row).group(1) for row in table.splitlines()[2:]]
    assert firsts == list(ROWS)


def _strided_slice():
    x = _x(5, 6, 7)
    for key in [(slice(1, -1), ..., slice(None, None, -2)), (2, slice(None, None, 3)), ..., (slice(4, 1, -1), 0)]:
        _same(cd.strided_slice(x, key), np.ascontiguousarray(x[key]))
    # The one difference: NumPy makes an array of rank 1 from a scalar, cudadml keeps x[key]'s rank 0.
    _same(cd.strided_slice(x, (1, 2, 3)), x[1, 2, 3][()])


def _strided_slice_grad():
    dy = _x(3, 2)
    key = (slice(1, 4), slice(None, None, -3))
    z = np.zeros((5, 6), np.float32)
    z[key] = dy
    _same(cd.strided_slice_grad(dy, (5, 6), key), z)


def _join_family():
    a, b = _x(3, 4), _x(3, 4)
    for name in ["concatenate", "stack", "hstack", "vstack", "dstack", "column_stack"]:
        _same(getattr(cnp, name)([a, b]), getattr(np, name)([a, b]))


def _torch_cat():
    torch = _torch()
    ts = [torch.randn(2, 3), torch.randn(4, 3)]
    _same(cd.join(ts, axis=0).numpy(), torch.cat(ts, 0).numpy())
    # The difference the row names: JOIN takes one dtype, where torch.cat promotes.
    mixed = [torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.float32)]
    with pytest.raises(TypeError):
        cd.join(mixed)
    _same(cnp.concatenate([t.numpy() for t in mixed]), np.concatenate([t.numpy() for t in mixed]))


def _split_family():
    x = _x(6, 4, 2)
    for name, arg in [("split", [1, 4]), ("array_split", 4), ("hsplit", 2), ("vsplit", 3), ("dsplit", 2)]:
        _same(getattr(cnp, name)(x, arg), getattr(np, name)(x, arg))


def _torch_split():
    torch = _torch()
    t = torch.randn(12, 3)
    for n in [3, 5, 12, 20]:
        _same([p.numpy() for p in cd.split(t, split_sizes=n)], [p.numpy() for p in torch.split(t, n)])
    _same([p.numpy() for p in cd.split(t, split_sizes=[2, 7, 3])], [p.numpy() for p in torch.split(t, [2, 7, 3])])


def _torch_chunk():
    torch = _torch()
    t = torch.randn(12, 3)
    _same([p.numpy() for p in cd.split(t, parts=4)], [p.numpy() for p in torch.chunk(t, 4)])
    # The difference the row names: an uneven count is refused, where torch.chunk makes [4, 4, 2].
    ten = torch.arange(10)
    assert [len(p) for p in torch.chunk(ten, 3)] == [4, 4, 2]
    with pytest.raises(ValueError, match="does not divide"):
        cd.split(ten, parts=3)
    assert [len(p) for p in cnp.array_split(ten.numpy(), 3)] == [4, 3, 3]


def _flips():
    x = _x(4, 5)
    for name in ["fliplr", "flipud"]:
        _same(getattr(cnp, name)(x), getattr(np, name)(x))
    _same(cnp.flip(x, axis=1), np.flip(x, axis=1))
    for shift, axis in [(3, None), (-2, 1), ((1, 2), (0, 1))]:
        _same(cnp.roll(x, shift, axis=axis), np.roll(x, shift, axis=axis))


def _pad():
    x = _x(3, 4)
    _same(cnp.pad(x, ((1, 2), (0, 3)), constant_values=1.5), np.pad(x, ((1, 2), (0, 3)), constant_values=1.5))


def _crops():
    x = _x(3, 2, 8, 8)
    offsets = [[0, 1, 2], [0, 3, 0], [1, 0, 4]]  # per image: (channel, row, column)
    got = cd.slice1_batch(x, window_offsets=offsets, window_sizes=[1, 4, 4], per_sample=True)
    _same(got, np.stack([x[n, c : c + 1, r : r + 4, k : k + 4] for n, (c, r, k) in enumerate(offsets)]))


def _crops_gradient():
    dy = _x(2, 3, 3)
    offsets = [[0, 1], [1, 0]]  # overlapping windows: their gradients summed, in window order
    want = np.zeros((4, 4), np.float32)
    for d, (r, k) in zip(dy, offsets):
        want[r : r + 3, k : k + 3] += d
    _same(cd.slice1_batch_grad(dy, (4, 4), window_offsets=offsets, window_sizes=[3, 3]), want)


def _onnx_slice():
    x = _x(4, 6)
    # ONNX Slice starts [0, 5], ends [3, -inf], steps [1, -2]: the window [0, 6) read backwards.
    _same(cd.slice1(x, window_offsets=[0, 0], window_sizes=[3, 6], window_strides=[1, -2]), x[0:3, 5::-2])


def _directml_slice():
    x = _x(5, 7)
    _same(cd.slice(x, offsets=[1, 2], sizes=[2, 3], strides=[2, 1]), x[1:5:2, 2:5])
    dy = _x(2, 3)
    z = np.zeros((5, 7), np.float32)
    z[1:5:2, 2:5] = dy
    _same(cd.slice_grad(dy, (5, 7), window_offsets=[1, 2], window_sizes=[3, 3], window_strides=[2, 1]), z)


def _descriptors():
    f32 = cd.TensorDataType.FLOAT32
    x = cd.testing.aligned_empty(96).view(np.float32).reshape(4, 6)  # DirectML's 16-byte bindings
    x[...] = _x(4, 6)
    y = cd.testing.aligned_empty(24).view(np.float32).reshape(2, 3)
    desc = cd.Slice1OperatorDesc(
        cd.BufferTensorDesc(f32, (4, 6)), cd.BufferTensorDesc(f32, (2, 3)), [1, 0], [2, 6], [1, 2]
    )
    desc.compile().execute([x], [y])
    _same(y, x[1:3, ::2])


ROWS = {
    "`np.ascontiguousarray(x[key])`, `x[key].contiguous()`": _strided_slice,
    "`z = zeros(shape); z[key] = dy`": _strided_slice_grad,
    "`np.concatenate`, `np.stack`, `hstack`, `vstack`, `dstack`, `column_stack`": _join_family,
    "`torch.cat(ts, dim)`": _torch_cat,
    "`np.split(x, indices)`, `np.array_split`, `hsplit`, `vsplit`, `dsplit`": _split_family,
    "`torch.split(t, sizes)`, `torch.split(t, n)`": _torch_split,
    "`torch.chunk(t, n)`": _torch_chunk,
    "`np.flip`, `fliplr`, `flipud`, `np.roll`": _flips,
    "`np.pad(x, w, constant_values=c)`": _pad,
    "a crop (and flip) per image, in a loop": _crops,
    "its gradient": _crops_gradient,
    "ONNX `Slice`, DirectML `SLICE1`": _onnx_slice,
    "DirectML `SLICE`, `SLICE_GRAD`": _directml_slice,
    "`DML_*_OPERATOR_DESC`, `IDMLDevice::CompileOperator`": _descriptors,
    # The last three rows are whole suites of their own: tests/test_graph.py (a graph against its
    # nodes run one by one), tests/test_fuse.py (fused against eager) and tests/test_onnx.py
    # (against onnxruntime).
    "`DML_GRAPH_DESC`, `IDMLDevice1::CompileGraph`": None,
    "`torch.compile` / `cupy.fuse` of a chain of slices, splits and cats": None,
    "an ONNX model of `Slice`, `Split`, `Concat`, `Pad`, `Reshape`": None,
}


@pytest.mark.parametrize("row", [r for r, check in ROWS.items() if check], ids=lambda r: re.sub(r"\W+", "_", r)[:40])
def test_a_row_gives_what_the_call_it_maps_gives(row):
    ROWS[row]()

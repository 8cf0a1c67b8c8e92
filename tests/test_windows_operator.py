"""The windows batch as an operator (cudadml's own, beside DirectML's): its descriptors, their
rules against the array functions', the table bound like any input (built by the plan layer,
placed by the backend), and the one route every call takes."""

import ast
import cProfile
import pathlib
import pstats

import numpy as np
import pytest
from test_windows import forward_oracle, grad_oracle

import cudadml as cd
from cudadml.backends import CUDA, EMULATE, REFERENCE
from cudadml.core import plan
from cudadml.core.errors import DescriptorError
from cudadml.core.operators import REGISTRY
from cudadml.ops import Slice1Batch, Slice1BatchGrad, WindowsBatchGradOperatorDesc, WindowsBatchOperatorDesc
from cudadml.run import runner
from cudadml.run import windows as run_windows
from cudadml.testing import random_array, to_host

F32, F16, I64, U64 = (cd.TensorDataType[n] for n in ("FLOAT32", "FLOAT16", "INT64", "UINT64"))
T = cd.BufferTensorDesc
OWNED = cd.TensorFlags.OWNED_BY_DML
PACKAGE = pathlib.Path(cd.__file__).parent


def batch_desc(shape=(6, 8), n=3, box=(2, 4), **options):
    return WindowsBatchOperatorDesc(T(F32, shape), T(I64, (n, 1 + len(box))), [T(F32, (n, *box))], **options)


def table_of(x, offsets, sizes, strides, out):
    """The plan layer's table for windows of ``x`` written to ``out`` (NumPy arrays)."""
    xs = tuple(s // x.itemsize for s in x.strides)
    os = tuple(s // out.itemsize for s in out.strides)
    starts, steps = plan.window_starts(np.asarray(offsets), np.asarray(sizes), np.asarray(strides), xs)
    return plan.window_table(starts, steps, out.shape[1:], os[1:])


# ---- the descriptors ----------------------------------------------------------------------------------


def test_a_compiled_batch_reads_its_windows_from_the_table_it_is_given(xp, rng):
    """Compiled once; each execute binds a new table (device memory on a GPU), and nothing else
    changes: the windows are data."""
    x = random_array((6, 8), np.float32, rng)
    compiled = batch_desc().compile()
    assert isinstance(compiled.plan, plan.WindowPlan) and "3 windows from a table" in repr(compiled)
    for _ in range(3):
        offsets = np.c_[rng.integers(0, 5, 3), rng.integers(0, 5, 3)]
        strides = rng.choice([1, -1], (3, 2))
        out = np.empty((3, 2, 4), np.float32)
        box, _, table = table_of(x, offsets, (2, 4), strides, out)
        assert box == (2, 4)
        out = xp.asarray(out)
        compiled.execute([xp.asarray(x), xp.asarray(table)], [out])
        assert to_host(out).tobytes() == np.stack(forward_oracle(x, offsets, (2, 4), strides, False)).tobytes()


def test_a_bound_batch_runs_again_on_new_table_values(rng):
    x, out = random_array((6, 8), np.float32, rng), np.empty((3, 2, 4), np.float32)
    offsets, strides = [[0, 0], [1, 2], [4, 4]], [[1, 1], [-1, 1], [1, -1]]
    table = table_of(x, offsets, (2, 4), strides, out)[2]
    for backend in ("reference", "emulate"):
        with cd.use_host_backend(backend):
            bound = batch_desc().compile().bind([x, table], [out])
            bound.execute()
            assert out.tobytes() == np.stack(forward_oracle(x, offsets, (2, 4), strides, False)).tobytes()
            table[:] = table_of(x, offsets[::-1], (2, 4), strides, out)[2]  # the table's values are data
            bound.execute()
            assert out.tobytes() == np.stack(forward_oracle(x, offsets[::-1], (2, 4), strides, False)).tobytes()
            table[:] = table_of(x, offsets, (2, 4), strides, out)[2]


def test_a_table_owned_by_dml_is_given_when_compiling_and_folded_into_copies(rng):
    """DirectML binds an OWNED_BY_DML tensor at initialisation: here, when compiling. The
    windows then run as copies, and may go to one output each, of its own size."""
    x = random_array((6, 8), np.float32, rng)
    offsets, strides = np.array([[0, 0], [1, 2]]), np.array([[1, 1], [-1, 2]])
    starts, steps = plan.window_starts(offsets, np.array([[3, 4], [2, 5]]), strides, (8, 1))
    table = np.c_[starts, steps]
    desc = WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (2, 3), flags=OWNED), [T(F32, (3, 4)), T(F32, (2, 3))])
    compiled = cd.CompiledOperator(desc, constants={1: table})
    assert isinstance(compiled.plan, plan.CopyPlan) and len(compiled.plan.jobs) == 2
    outs = [np.empty((3, 4), np.float32), np.empty((2, 3), np.float32)]
    compiled.execute([x], outs)  # the table is not bound again
    assert outs[0].tobytes() == x[0:3, 0:4].tobytes() and outs[1].tobytes() == x[2:0:-1, 2:7:2].tobytes()
    with pytest.raises(TypeError, match=r"constants=\{1: table\}\) exactly when WindowTableTensor has OWNED_BY_DML"):
        desc.compile()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: batch_desc(n=3).__class__(T(F32, (6, 8)), T(F32, (3, 3)), [T(F32, (3, 2, 4))]), "must be INT64"),
        (lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (3, 4)), [T(F32, (3, 2, 4))]), r"must be \(3, 3\)"),
        (lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (2, 3)), [T(F32, (3, 2, 4))]), "differs from the"),
        (lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (3, 3)), [T(F16, (3, 2, 4))]), "DataType = FLOAT16"),
        (
            lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (3, 3)), [T(F32, (3, 2, 4), (16, 1, 2))]),
            "leave a window's elements apart",
        ),
        (
            lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (2, 3)), [T(F32, (2, 4)), T(F32, (1, 4))]),
            "windows of their own sizes need a table given when compiling",
        ),
        (
            lambda: WindowsBatchOperatorDesc(T(F32, (6, 8)), T(I64, (3, 3)), []),
            "OutputCount = 0 must be greater than 0",
        ),
        (lambda: batch_desc(feature_level="1_0"), "the operator needs feature level 2_1 or newer"),
        (lambda: batch_desc(feature_level="2_1"), r"InputTensor\.DimensionCount = 2 is not supported"),
        (
            lambda: batch_desc(shape=(4, 6, 8), per_sample=True, feature_level="2_1"),
            r"InputTensor\.DimensionCount - 1 \(less the sample axis\) = 2 is not supported",
        ),
        (lambda: batch_desc(per_sample=1), "per_sample must be a bool, not int"),
    ],
)
def test_the_descriptor_keeps_its_rules(make, message):
    with pytest.raises((DescriptorError, TypeError), match=message):
        make()


def test_the_gradient_descriptor_adds_by_type_and_keeps_its_rules():
    words = plan.grad_window_dtype(2).itemsize // 8
    dy, table = T(F16, (3, 2, 2)), T(U64, (3, words))
    assert WindowsBatchGradOperatorDesc([dy], table, T(F32, (4, 4))).kind == 22  # halves: summed as floats
    samples = T(F16, (4, 2, 2))
    moved = WindowsBatchGradOperatorDesc([samples], T(U64, (4, words)), T(F16, (4, 4, 4)), per_sample=True)
    assert moved.kind == 2 and moved.input_tensors == (samples, T(U64, (4, words)))  # moved, not added
    several = WindowsBatchGradOperatorDesc([T(F32, (2, 2)), T(F32, (1, 2))], T(U64, (2, words)), T(F32, (4, 4)))
    assert [t.sizes for t in several.input_tensors] == [(2, 2), (2, words), (1, 2)]  # the table second
    with pytest.raises(DescriptorError, match="must be FLOAT32 \\(the sum of FLOAT16 gradients"):
        WindowsBatchGradOperatorDesc([dy], table, T(F16, (4, 4)))
    with pytest.raises(DescriptorError, match=r"Sizes\[0\] = 3 differs from the table's 4 windows"):
        WindowsBatchGradOperatorDesc([dy], T(U64, (4, words)), T(F16, (3, 4, 4)), per_sample=True)
    with pytest.raises(DescriptorError, match=rf"must be \(3, {words}\)"):
        WindowsBatchGradOperatorDesc([dy], T(U64, (3, 3)), T(F32, (4, 4)))


def test_a_compiled_gradient_reads_its_windows_from_the_table(xp, rng):
    offsets, strides = np.array([[0, 0], [1, 1], [2, 0]]), np.array([[1, 1], [1, -1], [-1, 1]])
    counts = np.array([2, 2])
    dy = rng.standard_normal((3, 2, 2)).astype(np.float32)
    table = plan.grad_window_table(offsets, counts, strides, counts, np.arange(3) * 4, (2, 1))
    words = table.shape[1]
    compiled = WindowsBatchGradOperatorDesc([T(F32, (3, 2, 2))], T(U64, (3, words)), T(F32, (4, 4))).compile()
    out = xp.zeros((4, 4), np.float32)
    compiled.execute([xp.asarray(dy), xp.asarray(table)], [out])
    assert to_host(out).tobytes() == grad_oracle(dy, (4, 4), offsets, counts, strides, False, np.float32).tobytes()


# ---- the same rules as the array functions ------------------------------------------------------------


@pytest.mark.parametrize("level", ["2_1", "3_0", "4_0", "4_1", None])
@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("per_sample", [False, True])
def test_the_descriptor_refuses_what_slice1_batch_refuses(level, dtype, per_sample):
    """SLICE1's rules of the tensor the windows lie in (its rank, type, the level): the
    descriptor refuses a call's tensors exactly when the array function refuses the call."""
    for ndim in range(1 + per_sample, 8):
        shape = (2,) * ndim
        d = ndim - per_sample
        offsets = np.zeros((2, d), int)
        try:
            cd.slice1_batch(
                np.zeros(shape, dtype),
                window_offsets=offsets,
                window_sizes=[1] * d,
                per_sample=per_sample,
                feature_level=level,
            )
            refused = False
        except DescriptorError:
            refused = True
        t = cd.TensorDataType.from_dtype(np.dtype(dtype))
        try:
            WindowsBatchOperatorDesc(
                T(t, shape), T(I64, (2, 2)), [T(t, (2, 1))], per_sample=per_sample, feature_level=level
            )
            described_refused = False
        except DescriptorError:
            described_refused = True
        assert described_refused == refused, (ndim, dtype, level, per_sample)


# ---- one route ------------------------------------------------------------------------------------------


def test_the_reference_backend_imports_nothing_of_the_cuda_backend():
    tree = ast.parse((PACKAGE / "backends" / "reference.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "kernels" not in imported and not any("kernels" in (m or "") for m in imported)


def test_the_backends_place_tables_and_the_runner_does_not():
    table = np.arange(6).reshape(2, 3)
    for backend in (REFERENCE, EMULATE):
        assert backend.stage(table, None, None) == (table, None, None)
    assert callable(CUDA.stage)
    for module in ("run/runner.py", "run/windows.py", "ops/windows.py"):
        source = (PACKAGE / module).read_text()
        assert "alloc_pinned_memory" not in source and "Event(" not in source and "Stream(" not in source
    assert "CUDA.stage(" in (PACKAGE / "run" / "windows.py").read_text()  # (the batches place tables by it)


def test_the_batches_run_by_their_own_runs_found_by_the_call_type(rng, monkeypatch):
    """A windows batch's call is no single descriptor of fixed layouts: ``runner.run`` finds its
    run by the call's type in the table of ``run/windows.py`` (``RUNS``), and names no batch;
    the operators register no run."""
    runs = {Slice1Batch: run_windows.run_slice1_batch, Slice1BatchGrad: run_windows.run_slice1_batch_grad}
    assert run_windows.RUNS == runs
    assert {kind: run for kind, run in runner._RUNS.items() if run is not None} == runs
    assert not any(hasattr(op, "run") for op in REGISTRY.values())
    source = (PACKAGE / "run" / "runner.py").read_text()
    assert not any(name in source for name in ("Slice1Batch", "run_slice1", "WindowsBatch", "ops.windows"))
    made = []

    def empty(kind, shape, dtype):  # the results' allocation, as the batches' runs reach it
        made.append(shape)
        return np.empty(shape, dtype)

    monkeypatch.setattr(run_windows, "empty", empty)
    x = random_array((6, 8), np.float32, rng)
    got = cd.slice1_batch(x, window_offsets=[[0, 0], [2, 3]], window_sizes=(2, 4))
    assert made == [(2, 2, 4)] and got.tobytes() == np.stack([x[0:2, 0:4], x[2:4, 3:7]]).tobytes()
    grad = cd.slice1_batch_grad(got, (6, 8), window_offsets=[[0, 0], [2, 3]], window_sizes=(2, 4))
    assert made == [(2, 2, 4), (6, 8)] and grad[0:2, 0:4].tobytes() == x[0:2, 0:4].tobytes()


def test_slice1_batch_compiles_once_and_binds_a_table_per_call(rng):
    x = random_array((3, 20, 20), np.float32, rng)
    run_windows._windows_op.cache_clear()
    for _ in range(3):
        offsets = np.c_[np.zeros(4, int), rng.integers(0, 9, (4, 2))]
        got = cd.slice1_batch(x, window_offsets=offsets, window_sizes=(3, 12, 12), window_strides=[1, 1, -1])
        assert got.tobytes() == np.stack(forward_oracle(x, offsets, (3, 12, 12), [1, 1, -1], False)).tobytes()
    info = run_windows._windows_op.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def _calls_per_call(fn):
    fn()
    profile = cProfile.Profile()
    profile.enable()
    fn()
    profile.disable()
    stats = pstats.Stats(profile).stats
    by_name = {f"{k[0].rsplit('/', 1)[-1]}:{k[2]}": v[1] for k, v in stats.items()}
    return by_name, sum(by_name.values())


def test_sixteen_byte_elements_take_one_pass_through_the_runner(rng):
    """An entry that knows the word view binds the 16-byte arrays themselves: a complex128
    slice makes the calls a float32 slice of the same shape makes (directml_types=False)."""
    x = random_array((16, 16), np.float32, rng)
    z = random_array((16, 16), np.complex128, rng)
    runner._CACHE.clear()
    assert cd.strided_slice(z, np.s_[1:-1, ::2], directml_types=False).tobytes() == z[1:-1, ::2].tobytes()
    (call,) = runner._ENTRIES
    assert call.dtype == np.complex128  # keyed by the call as made: no second entry of words
    float_calls, n_float = _calls_per_call(lambda: cd.strided_slice(x, np.s_[1:-1, ::2], directml_types=False))
    complex_calls, n_complex = _calls_per_call(lambda: cd.strided_slice(z, np.s_[1:-1, ::2], directml_types=False))
    assert complex_calls["runner.py:run"] == float_calls["runner.py:run"] == 1
    assert n_complex == n_float
    out = np.empty((14, 8), np.complex128)
    assert cd.strided_slice(z, np.s_[1:-1, ::2], out=out, directml_types=False) is out
    assert out.tobytes() == z[1:-1, ::2].tobytes()
    parts = cd.split(z, split_sizes=[5, 11], axis=1, directml_types=False)
    assert [p.tobytes() for p in parts] == [z[:, :5].tobytes(), z[:, 5:].tobytes()]


# ---- the work of each call ------------------------------------------------------------------------------


def test_windows_known_when_compiling_become_the_copies_that_simplify_them(rng):
    """``window_copies`` walks each window as ``CopyJob.simplified`` does (its walk, which the
    output alone decides, worked out once per box and layout): size-1 dimensions dropped, a
    dimension written backwards walked forwards on both sides, outermost output stride first,
    contiguous dimensions merged."""
    for _ in range(300):
        d, n = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        table = np.c_[rng.integers(0, 99, n), rng.integers(-30, 31, (n, d))]
        boxes = [tuple(map(int, rng.integers(1, 4, d))) for _ in range(n)]
        out_strides = [tuple(map(int, rng.integers(-20, 21, d))) for _ in range(n)]
        copies = plan.window_copies(4, table, boxes, out_strides)
        assert copies.jobs == tuple(
            plan.CopyJob(0, k, box, tuple(map(int, row[1:])), strides, int(row[0]), 0).simplified()
            for k, (row, box, strides) in enumerate(zip(table, boxes, out_strides))
        )
        one = plan.window_copies(4, table, boxes[:1], out_strides[:1], out_window=7)
        assert one.jobs == tuple(
            plan.CopyJob(0, 0, boxes[0], tuple(map(int, row[1:])), out_strides[0], int(row[0]), 7 * k).simplified()
            for k, row in enumerate(table)
        )


def _grad_rows_oracle(offsets, sizes, strides, counts, dy_offsets, dy_strides, pairs, keep):
    """``grad_window_table``'s rows, window by window and dimension by dimension."""
    n, d = offsets.shape
    kept = range(d) if keep is None else keep
    rows = []
    for k in range(n):
        dy_offset, dims = int(dy_offsets[k]), []
        for i in kept:
            size, stride, count, dy_stride = (
                int(np.broadcast_to(a, (n, d))[k, i]) for a in (sizes, strides, counts, dy_strides)
            )
            start = int(offsets[k, i])
            if stride < 0:  # read from offset + size - 1 backwards: walked forwards from its other end
                start += size - 1 + stride * (count - 1)
                dy_offset += dy_stride * (count - 1)
                dy_stride = -dy_stride
            dims.append((start, count, dy_stride, abs(stride)))
        if pairs:
            dims.append((0, 2, 1, 1))
        rows.append((dy_offset, dims))
    return rows


def test_a_gradient_table_holds_each_window_walked_forwards(rng):
    for _ in range(300):
        n, d = int(rng.integers(0, 5)), int(rng.integers(1, 5))
        shape = (d,) if rng.random() < 0.5 else (n, d)
        sizes = rng.integers(1, 9, shape)
        strides = rng.integers(1, 4, shape) * rng.choice([1, -1], shape)
        counts = 1 + (sizes - 1) // np.abs(strides)
        offsets, dy_offsets = rng.integers(0, 50, (n, d)), rng.integers(0, 999, n)
        dy_strides = rng.integers(-20, 21, (d,) if rng.random() < 0.5 else (n, d))
        pairs = bool(rng.random() < 0.3)
        keep = (
            sorted(rng.choice(d, int(rng.integers(1, d + 1)), replace=False).tolist()) if rng.random() < 0.3 else None
        )
        table = plan.grad_window_table(offsets, sizes, strides, counts, dy_offsets, dy_strides, pairs, keep)
        rank = (d if keep is None else len(keep)) + pairs
        got = table.view(plan.grad_window_dtype(rank)).reshape(n)
        want = _grad_rows_oracle(offsets, sizes, strides, counts, dy_offsets, dy_strides, pairs, keep)
        assert table.dtype == np.uint64 and table.shape == (n, plan.grad_window_dtype(rank).itemsize // 8)
        for row, (dy_offset, dims) in zip(got, want):
            assert int(row["dy_offset"]) == dy_offset
            for field, (start, count, dy_stride, step) in zip(row["dims"], dims):
                assert (int(field["start"]), int(field["count"]), int(field["dy_stride"])) == (start, count, dy_stride)
                divider = tuple(int(field[k]) for k in ("step", "magic64", "magic32", "shift"))
                (magic64, shift), (magic32, _) = plan.fast_division(step, 64), plan.fast_division(step, 32)
                assert divider == (step, magic64, magic32, shift)


def test_what_a_call_compiles_is_kept_by_its_sizes_and_layouts_never_by_its_windows(rng):
    """Windows folded into copies compile an operator per call, but its descriptor is kept by
    the sizes; gradients of windows of their own sizes keep their operator by the gradients'
    layouts (the table is bound per call), apart from those of one size; and operators whose
    window plans are equal share their launches."""
    x = random_array((3, 20, 20), np.float32, rng)
    run_windows._copied_desc.cache_clear()
    out = np.empty((4, 3, 6, 12), np.float32)[..., ::2]  # windows apart: copies, a compile per call
    for _ in range(3):
        offsets = np.c_[np.zeros(4, int), rng.integers(0, 15, (4, 2))]
        got = cd.slice1_batch(x, window_offsets=offsets, window_sizes=(3, 6, 6), out=out)
        assert got is out and out.tobytes() == np.stack(forward_oracle(x, offsets, (3, 6, 6), [1] * 3, False)).tobytes()
    assert (run_windows._copied_desc.cache_info().misses, run_windows._copied_desc.cache_info().hits) == (1, 2)

    run_windows._window_grad_parts_op.cache_clear()
    sizes = np.array([[3, 4, 5], [3, 6, 2], [3, 1, 7]])
    dys = [rng.standard_normal(tuple(s)).astype(np.float32) for s in sizes]
    for offsets in ([[0, 0, 0], [0, 3, 9], [0, 19, 1]], [[0, 9, 2], [0, 1, 1], [0, 0, 13]]):
        got = cd.slice1_batch_grad(dys, x.shape, window_offsets=offsets, window_sizes=sizes)
        want = grad_oracle(dys, x.shape, np.array(offsets), sizes, [1] * 3, False, np.float32)
        assert got.tobytes() == want.tobytes()
    cd.slice1_batch_grad(dys[::-1], x.shape, window_offsets=np.zeros((3, 3), int), window_sizes=sizes[::-1])
    info = run_windows._window_grad_parts_op.cache_info()
    assert (info.misses, info.hits) == (2, 1)

    grad = plan.WindowGradPlan(24, (3, 20, 20), (400, 20, 1), False, 3)
    assert CUDA.prepare(grad, [(0, 4800)]) is CUDA.prepare(
        plan.WindowGradPlan(24, (3, 20, 20), (400, 20, 1), False, 3), [(0, 4800)]
    )
    copies = plan.window_copies(4, np.array([[0, 1]]), [(4,)], [(1,)])
    assert CUDA.prepare(copies, [(0, 16)]) is not CUDA.prepare(copies, [(0, 16)])  # per call: not compared


# ---- many dimensions ------------------------------------------------------------------------------------


def test_windows_in_samples_of_eight_dimensions(xp, rng):
    """Tensors of DirectML's eight dimensions at most: a batch's sample axis past them is
    described with size-1 dimensions left out, or runs as one axis with the next."""
    x_host = rng.standard_normal((2,) * 9)
    x = xp.asarray(x_host)
    offsets, strides = np.zeros((2, 8), int), np.r_[[[1] * 8], [[-1] * 8]]
    got = cd.slice1_batch(x, window_offsets=offsets, window_sizes=[2] * 8, window_strides=strides, per_sample=True)
    assert to_host(got).tobytes() == np.stack(forward_oracle(x_host, offsets, [2] * 8, strides, True)).tobytes()
    dy = rng.standard_normal((2,) + (2,) * 8)
    offsets = np.r_[[[0] * 8], [[1] * 8]]
    for shape in ((2,) + (3,) * 8, (2,) + (3,) * 6 + (1, 3)):
        sizes = [2 if n > 1 else 1 for n in shape[1:]]
        want = grad_oracle(
            dy[(slice(None), *(slice(0, s) for s in sizes))],
            shape,
            offsets * (np.array(sizes) > 1),
            sizes,
            np.ones(8, int),
            True,
            np.float64,
        )
        got = cd.slice1_batch_grad(
            xp.asarray(dy[(slice(None), *(slice(0, s) for s in sizes))]),
            shape,
            window_offsets=offsets * (np.array(sizes) > 1),
            window_sizes=sizes,
            per_sample=True,
        )
        assert to_host(got).tobytes() == want.tobytes()


@pytest.mark.gpu
def test_execute_with_a_device_table_is_captured_in_a_cuda_graph(rng):
    """No copy in ``execute``: a launch reading a device table is captured, and replays with
    whatever windows the table then holds."""
    cupy = pytest.importorskip("cupy")
    x_host = random_array((6, 8), np.float32, rng)
    x, out = cupy.asarray(x_host), cupy.empty((3, 2, 4), np.float32)
    offsets, strides = [[0, 0], [1, 2], [4, 4]], [[1, 1], [-1, 1], [1, -1]]
    like = np.empty((3, 2, 4), np.float32)
    table = cupy.asarray(table_of(x_host, offsets, (2, 4), strides, like)[2])
    bound = batch_desc().compile().bind([x, table], [out])
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        bound.execute(stream=stream)
        graph = stream.end_capture()
    table[...] = cupy.asarray(table_of(x_host, offsets[::-1], (2, 4), strides, like)[2])
    cupy.cuda.Device().synchronize()
    graph.launch(stream)
    stream.synchronize()
    assert to_host(out).tobytes() == np.stack(forward_oracle(x_host, offsets[::-1], (2, 4), strides, False)).tobytes()

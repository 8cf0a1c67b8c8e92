"""Choosing the backend: by memory kind, and for host memory by a per-thread setting over the
``CUDADML_BACKEND`` default."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import CUDA, EMULATE, REFERENCE, backend_for, host_backend, kernels


def _F32(sizes):
    return cd.BufferTensorDesc(cd.TensorDataType.FLOAT32, sizes)


def test_host_backend_defaults_to_the_reference_and_nests_per_thread():
    assert host_backend() is REFERENCE
    with cd.use_host_backend("emulate"):
        assert host_backend() is EMULATE
        with cd.use_host_backend("reference"):
            assert host_backend() is REFERENCE
        assert backend_for("numpy") is EMULATE
        assert backend_for("cupy") is CUDA
    assert host_backend() is REFERENCE


def test_use_host_backend_leaves_other_threads_alone():
    seen = []
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait()
        seen.append(host_backend())
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with cd.use_host_backend("emulate"):
        inside.set()
        done.wait()
    thread.join()
    assert seen == [REFERENCE]


def test_unknown_backend_names_are_refused():
    with pytest.raises(ValueError, match="'reference', 'emulate'"), cd.use_host_backend("gpu"):
        pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [("emulate", "emulate"), ("reference", "reference"), ("gpu", "host backend 'gpu' is not one of")],
)
def test_environment_sets_the_default(value, expected):
    code = "import cudadml.backends as b; print(b.host_backend().name)"
    result = subprocess.run(
        [sys.executable, "-c", code], env={"CUDADML_BACKEND": value, "PATH": ""}, capture_output=True, text=True
    )
    assert expected in result.stdout + result.stderr


def test_reference_backend_runs_host_memory():
    x = np.arange(12).reshape(3, 4)
    with cd.use_host_backend("reference"):
        assert np.array_equal(cd.strided_slice(x, np.s_[::-1, 1::2]), x[::-1, 1::2])


@pytest.mark.parametrize("parts", [3, 64])
def test_launch_writes_each_address_field_as_the_struct_says(parts, monkeypatch):
    """The per-call parameter words (one by one for a few fields, one NumPy gather for many)
    equal the struct built field by field, for every binding's address."""
    from cudadml.backends import kernels

    f32 = cd.TensorDataType.FLOAT32
    desc = cd.SplitOperatorDesc(
        cd.BufferTensorDesc(f32, [4, 2 * parts]), [cd.BufferTensorDesc(f32, [4, 2]) for _ in range(parts)], 1
    )
    (launch,) = kernels.prepare(desc.to_plan())
    launched = []

    class FakeDriver:
        ctxGetCurrent = staticmethod(lambda: 1)  # a context is current

        @staticmethod
        def launchKernel(function, gx, gy, gz, bx, by, bz, shared, stream, argv, extra):
            import ctypes

            struct = ctypes.cast(ctypes.cast(argv, ctypes.POINTER(ctypes.c_void_p))[0], ctypes.POINTER(ctypes.c_char))
            launched.append(struct[: len(launch.struct_bytes([0], [0] * parts))])

    monkeypatch.setattr(kernels, "_driver", FakeDriver)
    monkeypatch.setattr(kernels, "_runtime", type("R", (), {"getDevice": staticmethod(lambda: 0)}))
    monkeypatch.setitem(launch._functions, 0, 1)
    rng = np.random.default_rng(7)
    for _ in range(2):  # the second call reuses this thread's words
        inputs = [int(rng.integers(1, 2**48)) * 16]
        outputs = [int(rng.integers(1, 2**48)) * 16 for _ in range(parts)]
        launch(inputs, outputs, 0)
        assert launched[-1] == bytes(launch.struct_bytes(inputs, outputs))


@pytest.mark.parametrize(
    ("output_strides", "family"),
    [(None, "gather_flat"), ([72, 72, 12, 1], "gather_rows")],
)
def test_packed_outputs_take_the_flat_kernel(output_strides, family):
    """The plan picks the kernel from the geometry: a packed output is walked in whole
    16-byte chunks; an output with gaps between rows is walked row by row."""
    f16 = cd.TensorDataType.FLOAT16
    desc = cd.SliceOperatorDesc(
        cd.BufferTensorDesc(f16, [1, 1, 8, 16]),
        cd.BufferTensorDesc(f16, [1, 1, 6, 9], output_strides),
        [0, 0, 1, 2],
        [1, 1, 6, 9],
        [1, 1, 1, 1],
    )
    (launch,) = kernels.prepare(desc.compile().plan)
    assert launch.name.startswith(family + "<2,")


@pytest.mark.parametrize(
    ("desc", "family", "items"),
    [
        (  # one job, rows of 16 bytes or more into a packed output
            cd.SliceOperatorDesc(_F32([64, 400]), _F32([60, 360]), [1, 2], [60, 360], [1, 1]),
            "gather_flat",
            "gather_flat",
        ),
        (  # one job, element by element
            cd.SliceOperatorDesc(_F32([64, 400]), _F32([60, 200]), [1, 0], [60, 200], [1, 2]),
            "gather_elements",
            "gather_elements",
        ),
        (  # a batch: three parts of the rows, one after another (not interleaved)
            cd.SplitOperatorDesc(_F32([90, 400]), [_F32([30, 400])] * 3, 0),
            "gather_flat",
            "copy_batch",
        ),
    ],
)
def test_grids_give_each_thread_the_items_its_kernel_takes(desc, family, items):
    """Grids and kernels take the items per thread from one table (kernels.ITEMS, passed to the
    kernels as -D options): a grid sized for fewer items than the kernel's would repeat the
    work, for more it would leave chunks unmoved."""
    (launch,) = kernels.prepare(desc.compile().plan)
    assert launch.name.startswith(family + "<4,")
    assert f"-DCUDADML_ITEMS_{items.upper()}={kernels.ITEMS[items]}" in kernels.DEFINES
    jobs = launch.params["jobs"][: int(launch.params["num_jobs"]["d"])]
    per_block = kernels.BLOCK * kernels.ITEMS[items]
    assert launch.grid == sum(-(-int(j["count"]) // per_block) for j in jobs)


def test_indices_stay_32_bit_only_while_a_whole_grid_of_them_fits():
    """A launch forms work indices up to a whole block past the count; they must not wrap."""
    last = 2**31 - kernels.BLOCK * max(kernels.ITEMS.values())  # the largest count whose grids fit in 31 bits
    one_element = [(1, 1)]
    assert kernels._index_type(1, last - 1, one_element) is np.int32
    assert kernels._index_type(1, last, one_element) is np.int64
    assert kernels._index_type(1, 2**31 - 1, one_element) is np.int64

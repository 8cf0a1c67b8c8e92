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
    [
        ("emulate", "emulate"),
        ("reference", "reference"),
        ("", "reference"),  # set but empty: unset
        ("gpu", "host backend 'gpu' is not one of"),
    ],
)
def test_environment_sets_the_default(value, expected):
    code = "import cudadml.backends as b; print(b.host_backend().name)"
    result = subprocess.run(
        [sys.executable, "-c", code], env={"CUDADML_BACKEND": value, "PATH": ""}, capture_output=True, text=True
    )
    if " " in expected:  # the message of a refused name
        assert expected in result.stderr
    else:
        assert result.stdout == f"{expected}\n", result.stderr


def test_reference_backend_runs_host_memory():
    x = np.arange(12).reshape(3, 4)
    with cd.use_host_backend("reference"):
        assert np.array_equal(cd.strided_slice(x, np.s_[::-1, 1::2]), x[::-1, 1::2])


def _split_launch(parts):
    f32 = cd.TensorDataType.FLOAT32
    desc = cd.SplitOperatorDesc(
        cd.BufferTensorDesc(f32, [4, 2 * parts]), [cd.BufferTensorDesc(f32, [4, 2]) for _ in range(parts)], 1
    )
    (launch,) = kernels.prepare(desc.to_plan())
    return launch


@pytest.mark.parametrize("parts", [3, 64])
def test_launch_writes_each_address_field_as_the_struct_says(parts, monkeypatch):
    """The Python route's per-call parameter words (one by one for a few fields, one NumPy
    gather for many) equal the struct built field by field, for every binding's address."""
    monkeypatch.setattr(kernels, "_native", None)  # the route without the compiled launcher
    launch = _split_launch(parts)
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


@pytest.mark.skipif(kernels._native is None, reason="the compiled launcher is not built (no C compiler)")
@pytest.mark.parametrize("parts", [3, 64])
def test_the_compiled_launcher_writes_the_words_the_python_route_writes(parts, monkeypatch):
    """``_launch.fill`` (what the compiled launch writes before ``cuLaunchKernel``) against the
    Python route, for random addresses and every address field of a launch: a few or many."""
    launch = _split_launch(parts)
    rng = np.random.default_rng(parts)
    for _ in range(3):
        inputs = [int(rng.integers(1, 2**48)) * 16]
        outputs = tuple(int(rng.integers(1, 2**48)) * 16 + 4 * int(rng.integers(0, 4)) for _ in range(parts))
        compiled = launch.struct_bytes(inputs, outputs)
        with monkeypatch.context() as m:
            m.setattr(kernels, "_native", None)
            assert compiled == launch.struct_bytes(inputs, list(outputs))
        assert compiled != bytearray(launch.struct_bytes([0], [0] * parts))


@pytest.mark.skipif(kernels._native is None, reason="the compiled launcher is not built (no C compiler)")
def test_the_compiled_launcher_refuses_what_it_cannot_write():
    """Bad slots and addresses raise before a word changes: an index past the bindings, a
    word past the struct, an address that is no 64-bit unsigned int, a set of addresses that is
    no list or tuple."""
    native = kernels._native

    def slots(*quadruples):
        return np.array(quadruples, np.int64).reshape(-1).tobytes()

    words = bytearray(range(32))
    for bad_slots, inputs, outputs, error in [
        (slots((0, 0, 1, 0)), [16], [32], IndexError),  # binding 1 of one input
        (slots((4, 1, 0, 0)), [16], [32], IndexError),  # word 4 of a 4-word struct
        (slots((0, 2, 0, 0)), [16], [32], IndexError),  # role 2: neither inputs nor outputs
        (slots((0, 0, 0, 0)), [-16], [32], OverflowError),
        (slots((0, 0, 0, 0)), [2**64], [32], OverflowError),
        (slots((0, 0, 0, 0)), [16.0], [32], TypeError),
        (slots((0, 0, 0, 0)), np.array([16]), [32], TypeError),
        (slots((0, 0, 0, 0))[:-8], [16], [32], TypeError),  # not whole quadruples
    ]:
        with pytest.raises(error):
            native.fill(words, bad_slots, inputs, outputs)
        assert words == bytearray(range(32))
    with pytest.raises(ValueError, match="8-byte words"):
        native.fill(bytearray(12), slots((0, 0, 0, 0)), [16], [32])
    native.fill(words, slots((1, 1, 0, -8), (3, 0, 0, 2**63 - 1)), [16], (40,))
    assert np.frombuffer(words, np.uint64)[[1, 3]].tolist() == [32, 16 + 2**63 - 1]


_HOSTILE = r"""
import struct
import sys

from cudadml.backends import _launch as L

def refused(call, error):
    try:
        call()
    except error:
        return
    sys.exit(f"not refused with {error.__name__}: {call}")

words = bytearray(range(16))
for binding in (-1, -(1 << 60), -(1 << 63), 2, 1 << 62):  # every index outside [0, 2) of [5, 6]
    refused(lambda: L.fill(words, struct.pack("4q", 0, 0, binding, 0), [5, 6], []), IndexError)
    refused(lambda: L.launch({}, 1, 128, 0, bytes(16), struct.pack("4q", 0, 1, binding, 0), [], [5, 6]), IndexError)
for word in (-1, 2, 1 << 62, -(1 << 63)):
    refused(lambda: L.fill(words, struct.pack("4q", word, 0, 0, 0), [5], []), IndexError)
for role in (-1, 2, 1 << 40):
    refused(lambda: L.fill(words, struct.pack("4q", 0, role, 0, 0), [5], [6]), IndexError)
assert words == bytearray(range(16))
for value in (0, -1, 2**32, 2**32 + 1, 2**64 + 1, 2**200):  # what the driver's unsigned int cannot hold
    refused(lambda: L.launch({}, value, 128, 0, bytes(8), b"", [], []), ValueError)
    refused(lambda: L.launch({}, 1, value, 0, bytes(8), b"", [], []), ValueError)
for value in (1.5, "1", None):
    refused(lambda: L.launch({}, value, 128, 0, bytes(8), b"", [], []), TypeError)
refused(lambda: L.launch({}, 1, 128, 0, bytes(8 * 4097), b"", [], []), ValueError)
refused(lambda: L.fill(bytearray(8 * 4097), b"", [], []), ValueError)
refused(lambda: L.launch({}, 1, 128, 0, bytes(8), b"", {}, []), TypeError)
print("refused every one")
"""


@pytest.mark.skipif(kernels._native is None, reason="the compiled launcher is not built (no C compiler)")
def test_the_compiled_launcher_refuses_hostile_arguments_before_it_reads_memory():
    """Indices outside the bindings (negative ones included), words outside the struct, roles
    that are neither, and grids or blocks that the driver's unsigned int cannot hold raise; run
    in a process of its own, since a read out of bounds would crash it."""
    result = subprocess.run([sys.executable, "-c", _HOSTILE], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, "refused every one\n"), result.stderr


def test_the_compiled_launcher_is_built_where_there_is_a_c_compiler():
    """``pip install -e .`` builds ``cudadml/backends/_launch.c`` where it finds the C compiler Python
    was built with and Python's headers (and goes on without it where either is missing: the
    next test)."""
    import pathlib
    import shutil
    import sysconfig

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}): the Python route is what this install has")
    if not (pathlib.Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("no Python.h: the Python route is what this install has")
    assert kernels._native is not None, (
        "a C compiler is here, but cudadml.backends._launch was not built: pip install -e ."
    )


def test_without_the_compiled_launcher_the_python_route_builds_the_same_structs():
    """What a machine without a C compiler gets: the package imports and launches through the
    Python route (here the struct it would launch)."""
    code = (
        "import sys; sys.modules['cudadml.backends._launch'] = None\n"
        "import cudadml as cd\n"
        "from cudadml.backends import kernels\n"
        "assert kernels._native is None\n"
        "f32, t = cd.TensorDataType.FLOAT32, cd.BufferTensorDesc\n"
        "desc = cd.SliceOperatorDesc(t(f32, [4, 4]), t(f32, [2, 2]), [1, 1], [2, 2], [1, 1])\n"
        "(launch,) = kernels.prepare(desc.to_plan())\n"
        "print(launch.struct_bytes([4096], [8192]).hex())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    desc = cd.SliceOperatorDesc(_F32([4, 4]), _F32([2, 2]), [1, 1], [2, 2], [1, 1])
    (launch,) = kernels.prepare(desc.to_plan())
    assert result.stdout.strip() == launch.struct_bytes([4096], [8192]).hex()


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
    """Grids and kernels take the items per thread from one table (kernels.items_per_thread(), passed to the
    kernels as -D options): a grid sized for fewer items than the kernel's would repeat the
    work, for more it would leave chunks unmoved."""
    (launch,) = kernels.prepare(desc.compile().plan)
    assert launch.name.startswith(family + "<4,")
    assert f"-DCUDADML_ITEMS_{items.upper()}={kernels.items_per_thread()[items]}" in kernels.defines()
    jobs = launch.params["jobs"][: int(launch.params["num_jobs"]["d"])]
    per_block = kernels.BLOCK * kernels.items_per_thread()[items]
    assert launch.grid == sum(-(-int(j["count"]) // per_block) for j in jobs)


@pytest.mark.parametrize(
    "per_sm, measured",
    [(25.4, 25), (36.4, 36), (14.4, 25), (28.0, 25), (32.0, 36), (60.0, 36)],
    ids=["H100", "H200", "A100", "28", "32", "60"],
)
def test_a_device_takes_the_launch_shape_measured_nearest_its_memory_bandwidth(monkeypatch, per_sm, measured):
    """The items per thread come from the table measured nearest the device's memory bandwidth
    per SM, and reach the kernels' -D options from there (the grids read the same table)."""
    monkeypatch.setattr(kernels, "_items", None)
    monkeypatch.setattr(kernels, "_bandwidth_per_sm", lambda: per_sm)
    table = kernels.ITEMS_BY_BANDWIDTH[measured]
    assert kernels.items_per_thread() is table
    assert kernels.defines() == kernels.defines(table)
    assert f"-DCUDADML_ITEMS_GATHER_ELEMENTS={table['gather_elements']}" in kernels.options()


def test_indices_stay_32_bit_only_while_a_whole_grid_of_them_fits():
    """A launch forms work indices up to a whole block past the count; they must not wrap."""
    most = max(n for table in kernels.ITEMS_BY_BANDWIDTH.values() for n in table.values())
    last = 2**31 - kernels.BLOCK * most  # the largest count whose grids fit in 31 bits, on any device
    one_element = [(1, 1)]
    assert kernels._index_type(1, last - 1, one_element) is np.int32
    assert kernels._index_type(1, last, one_element) is np.int64
    assert kernels._index_type(1, 2**31 - 1, one_element) is np.int64

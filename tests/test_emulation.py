"""The kernels without a GPU: every specialisation through NVRTC, and the host emulation.

NVRTC compiles every specialisation the plans can ask for, for sm_75, sm_80 and sm_90, with the
loader's options; it needs no GPU once the architecture is given. The emulation's own pieces
(backend selection, the intrinsics of kernels_cu/emulation.h, the struct layout and the launch
checks) are tested here; the operator and array suites run through it with ``xp`` = "emulate".
"""

import concurrent.futures
import os
import pathlib
import subprocess
import time
import types

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import emulate, kernels, reference
from cudadml.testing import emulated

ARCHS = ("sm_75", "sm_80", "sm_90")
SOURCES = tuple(kernels.all_kernel_names())


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as e:  # no CuPy, or no NVRTC library to load
        pytest.skip(f"NVRTC cannot be loaded: {type(e).__name__}: {e}")
    return nvrtc


def _compile(nvrtc, source_file, arch):
    """``(seconds, error or None)`` for one NVRTC program holding every name of ``source_file``."""
    names = kernels.all_kernel_names()[source_file]
    started = time.perf_counter()
    program = nvrtc.createProgram(kernels.kernel_source(source_file), source_file, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(program, name)
        try:
            nvrtc.compileProgram(program, [*kernels.OPTIONS, f"--gpu-architecture={arch}"])
        except nvrtc.NVRTCError as e:
            return time.perf_counter() - started, f"{e}\n{nvrtc.getProgramLog(program)}"
        for name in names:
            nvrtc.getLoweredName(program, name)  # raises unless the specialisation was instantiated
        return time.perf_counter() - started, None
    finally:
        nvrtc.destroyProgram(program)


@pytest.fixture(scope="module")
def nvrtc_builds():
    """Every (source file, architecture) program, compiled in parallel: NVRTC releases the GIL."""
    nvrtc = _nvrtc()
    jobs = [(f, a) for f in SOURCES for a in ARCHS]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        results = pool.map(lambda job: _compile(nvrtc, *job), jobs)
        return dict(zip(jobs, results))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source_file", SOURCES)
def test_every_specialisation_compiles_with_nvrtc(nvrtc_builds, source_file, arch):
    seconds, error = nvrtc_builds[source_file, arch]
    count = len(kernels.all_kernel_names()[source_file])
    assert error is None, f"NVRTC could not compile {source_file} ({count} kernels) for {arch}:\n{error}"
    print(f"{source_file}: {count} kernels for {arch} in {seconds:.1f} s")


def test_kernel_sources_are_those_beside_the_imported_package():
    """A source checkout runs its own kernels_cu/, also where another checkout is installed in
    editable mode (whose cudadml._kernels would be that checkout's kernels)."""
    beside = pathlib.Path(cd.__file__).resolve().parents[1] / "kernels_cu"
    if not beside.is_dir():
        pytest.skip("cudadml is installed, not imported from a source checkout")
    assert pathlib.Path(str(kernels.kernel_files())) == beside


def _forbid_reference(*args):
    raise AssertionError("the reference backend ran")


@pytest.mark.emulate
def test_emulated_numpy_runs_the_kernels_not_the_reference(monkeypatch):
    monkeypatch.setattr(reference, "run", _forbid_reference)
    x = np.arange(60, dtype=np.int16).reshape(3, 4, 5)
    with emulated():
        assert np.array_equal(cd.strided_slice(x, (slice(None, None, -1), 2)), x[::-1, 2])
        assert np.array_equal(cd.join(cd.split(x, [1, 3], axis=1), axis=1), x)
        grad = np.zeros_like(x)
        grad[1:, ::2] = x[1:, ::2]
        assert np.array_equal(
            cd.strided_slice_grad(np.ascontiguousarray(x[1:, ::2]), x.shape, (slice(1, None), slice(None, None, 2))),
            grad,
        )
    with pytest.raises(AssertionError, match="reference backend ran"):
        cd.strided_slice(x, (0,))


# ---- the header ---------------------------------------------------------------------------------

PROBES = r"""
extern "C" unsigned probe_umulhi(unsigned a, unsigned b) { return __umulhi(a, b); }
extern "C" unsigned probe_funnelshift_r(unsigned lo, unsigned hi, unsigned s) { return __funnelshift_r(lo, hi, s); }
extern "C" int probe_div_fast(int n, int d, unsigned m, unsigned s) { return div_fast(n, d, m, s); }
extern "C" unsigned long long probe_sizeof_uint4() { return sizeof(uint4) * 100 + alignof(uint4); }
"""


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    import ctypes

    directory = tmp_path_factory.mktemp("probes")
    source = directory / "probes.cpp"
    source.write_text(kernels.kernel_source("emulation.h") + kernels.kernel_source("common.cuh") + PROBES)
    subprocess.run(
        [emulate.compiler(), *emulate.CXX_FLAGS, "-o", str(directory / "probes.so"), str(source)],
        check=True,
        capture_output=True,
    )
    dll = ctypes.CDLL(str(directory / "probes.so"))
    for name, result in (
        ("probe_umulhi", ctypes.c_uint),
        ("probe_funnelshift_r", ctypes.c_uint),
        ("probe_div_fast", ctypes.c_int),
        ("probe_sizeof_uint4", ctypes.c_ulonglong),
    ):
        getattr(dll, name).restype = result
    dll.probe_div_fast.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
    dll.probe_umulhi.argtypes = [ctypes.c_uint] * 2
    dll.probe_funnelshift_r.argtypes = [ctypes.c_uint] * 3
    return dll


def _words(rng, n):
    edges = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
    return [*edges, *(int(v) for v in rng.integers(0, 2**32, n, dtype=np.uint64))]


@pytest.mark.emulate
def test_intrinsics_match_cuda_definitions(probes, rng):
    words = _words(rng, 40)
    for a in words:
        for b in words[:20]:
            assert probes.probe_umulhi(a, b) == (a * b) >> 32
    for lo in words[:20]:
        for hi in words[:20]:
            for s in (0, 1, 7, 8, 16, 24, 31, 32, 33, 63, 0xFFFFFFFF):
                assert probes.probe_funnelshift_r(lo, hi, s) == ((hi << 32 | lo) >> (s & 31)) & 0xFFFFFFFF
    assert probes.probe_sizeof_uint4() == 16 * 100 + 16


@pytest.mark.emulate
def test_div_fast_with_the_hosts_magic_numbers(probes, rng):
    """common.cuh's division, emulated, against Python's for the magic that kernels.py computes."""
    divisors = [1, 2, 3, 5, 7, 255, 256, 257, 641, 65537, 2**31 - 1, *rng.integers(1, 2**31, 60).tolist()]
    for d in divisors:
        m, s = kernels.fast_division(d)
        for n in [0, 1, d - 1, d, d + 1, 2 * d - 1, 2**31 - 1, *rng.integers(0, 2**31, 20).tolist()]:
            if 0 <= n < 2**31:
                assert probes.probe_div_fast(n, d, m, s) == n // d, (n, d)


# ---- the launcher -------------------------------------------------------------------------------


def _params_dtype(name):
    family, args = name[:-1].split("<")
    args = [a.strip() for a in args.split(",")]
    if family == "slice_grad":
        index, rank = args[2], int(args[3])
        return kernels.grad_params_dtype(np.int32 if index == "int" else np.int64, rank)
    index, rank, capacity = args[1], int(args[2]), int(args[3])
    return kernels.copy_batch_dtype(np.int32 if index == "int" else np.int64, rank, capacity)


@pytest.mark.emulate
def test_parameter_structs_have_numpys_layout_size_in_cpp(emulation_libraries):
    for names in kernels.all_kernel_names().values():
        for name in names:
            assert emulate.library_for(name).param_size[name] == _params_dtype(name).itemsize, name


def _plan_launch(x, out):
    desc = cd.SliceOperatorDesc(
        cd.BufferTensorDesc(cd.TensorDataType.INT32, x.shape),
        cd.BufferTensorDesc(cd.TensorDataType.INT32, out.shape),
        [0, 1],
        list(out.shape),
        [1, 2],
    )
    (launch,) = kernels.prepare(desc.to_plan())
    return launch


@pytest.mark.emulate
def test_launch_checks_struct_size_and_configuration():
    x, out = np.arange(40, dtype=np.int32).reshape(4, 10), np.zeros((4, 3), np.int32)
    launch = _plan_launch(x, out)
    emulate.run([launch], [(x, x.ctypes.data)], [(out, out.ctypes.data)])
    assert np.array_equal(out, x[:, 1:7:2])

    def shortened(inputs, outputs):
        return launch.struct_bytes(inputs, outputs)[:-4]

    fake = types.SimpleNamespace(name=launch.name, grid=launch.grid, struct_bytes=shortened)
    with pytest.raises(emulate.EmulationError, match="bytes in NumPy"):
        emulate.run([fake], [(x, x.ctypes.data)], [(out, out.ctypes.data)])
    fake = types.SimpleNamespace(name=launch.name, grid=0, struct_bytes=launch.struct_bytes)
    with pytest.raises(emulate.EmulationError, match="invalid launch configuration"):
        emulate.run([fake], [(x, x.ctypes.data)], [(out, out.ctypes.data)])


@pytest.mark.emulate
def test_loads_outside_the_inputs_or_misaligned_fault():
    """What a GPU reports as an illegal or misaligned address, the emulation raises."""
    x, out = np.arange(40, dtype=np.int32).reshape(4, 10), np.zeros((4, 3), np.int32)
    launch = _plan_launch(x, out)
    elsewhere = np.arange(40, dtype=np.int32)
    with pytest.raises(emulate.EmulationError, match="outside every input"):
        emulate.run([launch], [(x, elsewhere.ctypes.data)], [(out, out.ctypes.data)])
    with pytest.raises(emulate.EmulationError, match="misaligned"):
        emulate.run([launch], [(x, x.ctypes.data + 1)], [(out, out.ctypes.data)])

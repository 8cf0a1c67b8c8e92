"""The kernels without a GPU: every specialisation through NVRTC, and the host emulation.

NVRTC compiles every specialisation the plans can ask for, for sm_75, sm_80 and sm_90, with the
loader's options; it needs no GPU once the architecture is given. The emulation's own pieces
(backend selection, the intrinsics of kernels_cu/emulation.h, the struct layout and the launch
checks) are tested here; the operator and array suites run through it with ``xp`` = "emulate".
"""

import concurrent.futures
import dataclasses
import os
import pathlib
import re
import subprocess
import sys
import threading
import time
import types

import cases
import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import EMULATE, emulate, kernels, reference
from cudadml.core.memory import byte_extent
from cudadml.run import runner
from cudadml.testing import POISON, TensorBuffer, aligned_empty, emulated, random_array

ARCHS = ("sm_75", "sm_80", "sm_90")
SOURCES = tuple(kernels.all_kernel_names())
SHAPES = kernels.ITEMS_BY_BANDWIDTH  # items per thread by family, per memory system


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as e:  # no CuPy, or no NVRTC library to load
        pytest.skip(f"NVRTC cannot be loaded: {type(e).__name__}: {e}")
    return nvrtc


_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")


def _resources(log, lowered):
    """``{name: (stack frame bytes, spill store bytes, spill load bytes, registers)}`` from
    ptxas's ``-v`` report; ``lowered`` maps each mangled name to its specialisation."""
    found, name = {}, None
    for line in log.splitlines():
        if m := _PROPERTIES.search(line):
            name = lowered[m.group(1)]
        elif m := _FRAME.search(line):
            found[name] = tuple(map(int, m.groups()))
        elif m := _REGISTERS.search(line):
            found[name] = (*found[name], int(m.group(1)))
    return found


def _compile(nvrtc, source_file, arch, table=None):
    """``(seconds, error or None, resources)`` for one NVRTC program holding every name of
    ``source_file`` at the launch shape of ``table`` (items per thread by family; this
    process's by default); resources as ``_resources`` reads them from ptxas."""
    names = kernels.all_kernel_names()[source_file]
    started = time.perf_counter()
    program = nvrtc.createProgram(kernels.kernel_source(source_file), source_file, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(program, name)
        try:
            nvrtc.compileProgram(program, [*kernels.options(table), f"--gpu-architecture={arch}", "-Xptxas=-v"])
        except nvrtc.NVRTCError as e:
            return time.perf_counter() - started, f"{e}\n{nvrtc.getProgramLog(program)}", {}
        # getLoweredName raises unless the specialisation was instantiated
        lowered = {nvrtc.getLoweredName(program, name): name for name in names}
        log = nvrtc.getProgramLog(program)
        log = log.decode() if isinstance(log, bytes) else log
        return time.perf_counter() - started, None, _resources(log, lowered)
    finally:
        nvrtc.destroyProgram(program)


@pytest.fixture(scope="module")
def nvrtc_builds(say):
    """Every (source file, architecture, launch shape) program, compiled in parallel: NVRTC
    releases the GIL. Every architecture at this process's launch shape (``None``), and sm_90
    at each other memory system's (``kernels.ITEMS_BY_BANDWIDTH``)."""
    nvrtc = _nvrtc()
    jobs = [(f, a, None) for f in SOURCES for a in ARCHS]
    jobs += [(f, "sm_90", k) for f in SOURCES for k in SHAPES if SHAPES[k] != kernels.items_per_thread()]
    count = sum(map(len, kernels.all_kernel_names().values()))
    workers = os.cpu_count() or 1
    say(f"NVRTC {nvrtc.getVersion()}: compiling {count} kernels for {', '.join(ARCHS)} on {workers} threads ...")
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        builds = dict(zip(jobs, pool.map(lambda job: _compile(nvrtc, *job[:2], SHAPES.get(job[2])), jobs)))
    say(f"NVRTC: done in {time.perf_counter() - started:.0f} s")
    return builds


@pytest.mark.every_kernel
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source_file", SOURCES)
def test_every_specialisation_compiles_with_nvrtc(nvrtc_builds, source_file, arch):
    seconds, error, _ = nvrtc_builds[source_file, arch, None]
    count = len(kernels.all_kernel_names()[source_file])
    assert error is None, f"NVRTC could not compile {source_file} ({count} kernels) for {arch}:\n{error}"
    print(f"{source_file}: {count} kernels for {arch} in {seconds:.1f} s")


def blocks_per_sm(registers: int) -> int:
    """Blocks of ``kernels.BLOCK`` threads that one sm_90 SM holds at ``registers`` per thread:
    65,536 registers, given to warps in units of 256; at most 64 warps and 32 blocks."""
    per_warp = -(-registers * 32 // 256) * 256
    warps_per_block = kernels.BLOCK // 32
    return min(65536 // per_warp // warps_per_block, 64 // warps_per_block, 32)


#: The most registers per thread that any specialisation of a family may use on sm_90: the
#: counts of 2026-11-25 (NVRTC 13.5, work items per thread as kernels.ITEMS_BY_BANDWIDTH gives them) plus the
#: margin that keeps the same blocks per SM at the launch shape (128 threads), which the
#: comment gives. A change that needs more, a kernel's or a new NVRTC's, lowers the occupancy
#: of every kernel of the family that reaches it: measure it (bench.py --against) before
#: raising a number.
REGISTER_LIMITS = {
    ("gather_elements", "int"): 32,  # today 32: 16 blocks, every warp slot
    ("gather_elements", "long long"): 40,  # today 40: 12 blocks, 75%
    ("gather_rows", "int"): 32,  # today 32: 16 blocks, 100%
    ("gather_rows", "long long"): 56,  # today 56: 9 blocks, 56%
    ("gather_flat", "int"): 40,  # today 40: 12 blocks, 75%
    ("gather_flat", "long long"): 48,  # today 48: 10 blocks, 62%
    ("gather_lanes", "int"): 32,  # today 32: 16 blocks, every warp slot
    ("gather_lanes", "long long"): 48,  # today 44 (two lanes' 64-bit addresses): 10 blocks, 62%
    ("slice_grad", "int"): 32,  # today 30: 16 blocks, 100%
    ("slice_grad", "long long"): 40,  # today 38: 12 blocks, 75%
    ("gather_windows", "int"): 32,  # today 32: 16 blocks, 100%
    ("gather_windows", "long long"): 48,  # today 48: 10 blocks, 62%
    ("window_grad", "int"): 32,  # today 32: 16 blocks, 100%
    ("window_grad", "long long"): 56,  # today 56: 9 blocks, 56%
}


#: Where a memory system's launch shape gives a family more items per thread (more registers),
#: its own limits, by ``kernels.ITEMS_BY_BANDWIDTH``'s key.
REGISTER_LIMITS_BY_BANDWIDTH = {
    25: REGISTER_LIMITS,
    36: {
        **REGISTER_LIMITS,
        ("gather_elements", "int"): 40,  # 4 items: today 34: 12 blocks, 75%
        ("window_grad", "long long"): 64,  # 4 items per sample: today 64: 8 blocks, 50%
    },
}


def test_register_limits_keep_the_occupancy_their_comments_give():
    """Each limit is the top of its occupancy step: one register more loses a block per SM."""
    assert REGISTER_LIMITS_BY_BANDWIDTH.keys() == kernels.ITEMS_BY_BANDWIDTH.keys()
    for limits in REGISTER_LIMITS_BY_BANDWIDTH.values():
        for family, limit in limits.items():
            assert blocks_per_sm(limit + 1) < blocks_per_sm(limit) or blocks_per_sm(limit) == 16, family


@pytest.mark.every_kernel
@pytest.mark.parametrize("bandwidth", kernels.ITEMS_BY_BANDWIDTH, ids=lambda k: f"{k}GBps_per_SM")
@pytest.mark.parametrize("source_file", SOURCES)
def test_no_local_memory_and_registers_within_limits(nvrtc_builds, source_file, bandwidth):
    """ptxas's report for every specialisation the plans can ask for (sm_90): no stack frame, no
    spills (local memory costs a load and store per access: an array of lanes reinterpreted
    from a uint4 once cost copies up to 18 points of a device-to-device copy's rate), and no
    more registers than REGISTER_LIMITS pins for the family; at the launch shape of every
    memory system measured."""
    own = SHAPES[bandwidth] == kernels.items_per_thread()  # (built once, as this process's shape)
    _, error, resources = nvrtc_builds[source_file, "sm_90", None if own else bandwidth]
    assert error is None, error
    names = kernels.all_kernel_names()[source_file]
    assert sorted(resources) == sorted(names), "ptxas reported on other kernels than the plans can ask for"
    problems = []
    for name, (frame, spill_stores, spill_loads, registers) in sorted(resources.items()):
        if frame or spill_stores or spill_loads:
            problems.append(f"{name}: {frame} bytes stack frame, {spill_stores}/{spill_loads} bytes spilled/reloaded")
        _, family, _, index = kernels.group_key(name)
        limit = REGISTER_LIMITS_BY_BANDWIDTH[bandwidth][family, index]
        if registers > limit:
            problems.append(
                f"{name}: {registers} registers, over the {limit} pinned for {family}<..., {index}, ...> "
                f"({blocks_per_sm(registers)} blocks per SM instead of {blocks_per_sm(limit)})"
            )
    assert not problems, f"{len(problems)} kernels of {source_file}:\n" + "\n".join(problems[:40])
    most = max(r[3] for r in resources.values())
    print(f"{source_file}: {len(names)} kernels, no local memory, at most {most} registers")


STORE_PROBE = r"""
extern "C" __global__ void probe_1(unsigned char* p, unsigned char v) { STORE(p + threadIdx.x, v); }
extern "C" __global__ void probe_2(unsigned short* p, unsigned short v) { STORE(p + threadIdx.x, v); }
extern "C" __global__ void probe_4(unsigned* p, unsigned v) { STORE(p + threadIdx.x, v); }
extern "C" __global__ void probe_8(unsigned long long* p, unsigned long long v) { STORE(p + threadIdx.x, v); }
extern "C" __global__ void probe_16(uint4* p, uint4 v) { STORE(p + threadIdx.x, v); }
"""


def test_store_is_a_plain_store_under_nvrtc():
    """common.cuh's store costs nothing on a GPU: the same PTX as assigning through the pointer."""
    nvrtc = _nvrtc()

    def ptx(store):
        source = kernels.kernel_source("common.cuh") + f"#define STORE(p, v) {store}\n" + STORE_PROBE
        program = nvrtc.createProgram(source, "store_probe.cu", [], [])
        try:
            nvrtc.compileProgram(program, [*kernels.options(), "--gpu-architecture=sm_90"])
            return nvrtc.getPTX(program)
        finally:
            nvrtc.destroyProgram(program)

    checked = ptx("store(p, v)")
    assert checked == ptx("(*(p) = (v))")
    assert all(f"st.global.{op}" in str(checked) for op in ("u8", "u16", "u32", "u64", "v4.u32"))


def test_kernel_sources_lie_beside_their_loader():
    """The kernels the package compiles are those of its own folder, installed or not."""
    assert pathlib.Path(kernels.kernel_files()) == pathlib.Path(kernels.__file__).resolve().parent / "kernels_cu"
    assert (pathlib.Path(kernels.kernel_files()) / "common.cuh").is_file()


def _forbid_reference(*args):
    raise AssertionError("the reference backend ran")


@pytest.mark.emulate
@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_emulated_numpy_runs_the_kernels_not_the_reference(monkeypatch, rng, op):
    monkeypatch.setattr(reference, "run", _forbid_reference)
    samples = list(op.samples(op.maker(np.int16, rng)))
    with emulated():
        for sample in samples:
            got = cases.listed(sample.call(op.function))
            expected = cases.expected(op, sample)
            assert [(g.shape, g.tobytes()) for g in got] == [(e.shape, e.tobytes()) for e in expected], sample
    moving = next(s for s in samples if all(a.size for a in [*s.arrays(), *cases.expected(op, s)]))
    with pytest.raises(AssertionError, match="reference backend ran"):
        moving.call(op.function)


# ---- the header ---------------------------------------------------------------------------------

PROBES = r"""
extern "C" unsigned probe_umulhi(unsigned a, unsigned b) { return __umulhi(a, b); }
extern "C" unsigned probe_funnelshift_r(unsigned lo, unsigned hi, unsigned s) { return __funnelshift_r(lo, hi, s); }
extern "C" int probe_div_fast(int n, int d, unsigned m, unsigned s) { return Divider<int>{d, m, s}.div(n); }
extern "C" long long probe_div_fast64(long long n, long long d, unsigned long long m, unsigned s) {
    return Divider<long long>{d, m, s}.div(n);
}
extern "C" unsigned long long probe_umul64hi(unsigned long long a, unsigned long long b) { return __umul64hi(a, b); }
extern "C" unsigned long long probe_sizeof_uint4() { return sizeof(uint4) * 100 + alignof(uint4); }
// One store of width bytes (1, 2, 4, 8, or 16 as a uint4) of 0x11 bytes at address, with the
// num_ranges [low, high) pairs of ranges writable. Returns the fault kind; *stored the bytes written.
extern "C" int probe_store(int width, unsigned long long address, const unsigned long long* ranges, int num_ranges,
                           unsigned long long* stored) {
    cudadml_writes = ranges;
    cudadml_num_writes = num_ranges;
    cudadml_stored = 0;
    cudadml_fault = CudadmlFault{0, 0, 0, 0};
    switch (width) {
        case 1: store(reinterpret_cast<unsigned char*>(address), (unsigned char)0x11); break;
        case 2: store(reinterpret_cast<unsigned short*>(address), (unsigned short)0x1111); break;
        case 4: store(reinterpret_cast<unsigned*>(address), 0x11111111u); break;
        case 8: store(reinterpret_cast<unsigned long long*>(address), 0x1111111111111111ull); break;
        default: store(reinterpret_cast<uint4*>(address), make_uint4(0x11111111u, 0x11111111u, 0x11111111u,
                                                                      0x11111111u));
    }
    *stored = cudadml_stored;
    return cudadml_fault.kind;
}
"""


@pytest.fixture(scope="module")
def probes(tmp_path_factory):
    import ctypes

    directory = tmp_path_factory.mktemp("probes")
    source = directory / "probes.cpp"
    source.write_text(kernels.kernel_source("emulation.h") + kernels.kernel_source("common.cuh") + PROBES)
    subprocess.run(
        [emulate.compiler(), *emulate.cxx_flags(), "-o", str(directory / "probes.so"), str(source)],
        check=True,
        capture_output=True,
    )
    dll = ctypes.CDLL(str(directory / "probes.so"))
    for name, result in (
        ("probe_umulhi", ctypes.c_uint),
        ("probe_funnelshift_r", ctypes.c_uint),
        ("probe_div_fast", ctypes.c_int),
        ("probe_div_fast64", ctypes.c_longlong),
        ("probe_umul64hi", ctypes.c_ulonglong),
        ("probe_sizeof_uint4", ctypes.c_ulonglong),
    ):
        getattr(dll, name).restype = result
    dll.probe_div_fast.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
    dll.probe_div_fast64.argtypes = [ctypes.c_longlong, ctypes.c_longlong, ctypes.c_ulonglong, ctypes.c_uint]
    dll.probe_umulhi.argtypes = [ctypes.c_uint] * 2
    dll.probe_umul64hi.argtypes = [ctypes.c_ulonglong] * 2
    dll.probe_funnelshift_r.argtypes = [ctypes.c_uint] * 3
    dll.probe_store.restype = ctypes.c_int
    dll.probe_store.argtypes = [
        ctypes.c_int,
        ctypes.c_ulonglong,
        ctypes.POINTER(ctypes.c_ulonglong),
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_ulonglong),
    ]
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
    longs = [*(a << 32 | b for a, b in zip(words, reversed(words))), 2**64 - 1, 2**63]
    for a in longs:
        for b in longs[:20]:
            assert probes.probe_umul64hi(a, b) == (a * b) >> 64
    for lo in words[:20]:
        for hi in words[:20]:
            for s in (0, 1, 7, 8, 16, 24, 31, 32, 33, 63, 0xFFFFFFFF):
                assert probes.probe_funnelshift_r(lo, hi, s) == ((hi << 32 | lo) >> (s & 31)) & 0xFFFFFFFF
    assert probes.probe_sizeof_uint4() == 16 * 100 + 16


@pytest.mark.emulate
def test_div_fast_with_the_hosts_magic_numbers(probes, rng):
    """common.cuh's division, emulated, against Python's for the magic that kernels.py computes,
    for 32- and 64-bit indices over their whole range (n below 2**31 or 2**63)."""
    for bits, divide in ((32, probes.probe_div_fast), (64, probes.probe_div_fast64)):
        top = 2 ** (bits - 1)
        edges = [1, 2, 3, 5, 7, 255, 256, 257, 641, 65537, 2**31 - 1, 2**31, 2**32 + 1, top - 1]
        randoms = [int(v) for v in rng.integers(1, top, 60, dtype=np.int64 if bits == 64 else np.uint64)]
        small = [int(v) for v in rng.integers(1, 2**20, 20)]
        for d in [x for x in (*edges, *randoms, *small) if x < top]:
            m, s = kernels.fast_division(d, bits)
            assert 0 <= m < 2**bits
            picks = [int(v) for v in rng.integers(0, top, 20, dtype=np.int64 if bits == 64 else np.uint64)]
            for n in [0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, top - 1, top - d, *picks]:
                if 0 <= n < top:
                    assert divide(n, d, m, s) == n // d, (bits, n, d)


@pytest.mark.emulate
def test_store_checks_alignment_and_outputs_at_every_width(probes):
    """emulation.h's store: 3 = misaligned, 4 = not inside one writable range (two adjacent
    ranges are not one); a faulting store writes nothing."""
    import ctypes

    buffer = aligned_empty(64)
    base = buffer.ctypes.data
    writable = [(16, 30), (30, 48)]
    ranges = (ctypes.c_ulonglong * 4)(*(base + x for pair in writable for x in pair))
    for width in (1, 2, 4, 8, 16):
        for offset in range(64 - width + 1):
            buffer[...] = 0
            stored = ctypes.c_ulonglong()
            kind = probes.probe_store(width, base + offset, ranges, 2, ctypes.byref(stored))
            inside = any(low <= offset and offset + width <= high for low, high in writable)
            expected = 3 if offset % width else 0 if inside else 4
            assert kind == expected, (width, offset)
            written = np.zeros(64, np.uint8)
            if expected == 0:
                written[offset : offset + width] = 0x11
            assert np.array_equal(buffer, written), (width, offset)
            assert stored.value == (width if expected == 0 else 0)


# ---- the launcher -------------------------------------------------------------------------------


def _params_dtype(name):
    family, args = name[:-1].split("<")
    args = [a.strip() for a in args.split(",")]
    if family == "slice_grad":
        index, rank = args[2], int(args[3])
        return kernels.grad_params_dtype(np.int32 if index == "int" else np.int64, rank)
    if family == "gather_windows":
        return kernels.window_params_dtype(np.int32 if args[1] == "int" else np.int64, int(args[2]))
    if family == "window_grad":
        return kernels.window_grad_params_dtype(np.int32 if args[2] == "int" else np.int64, int(args[3]))
    index, rank, capacity = args[1], int(args[2]), int(args[3])
    return kernels.copy_batch_dtype(np.int32 if index == "int" else np.int64, rank, capacity)


@pytest.mark.every_kernel
@pytest.mark.emulate
def test_every_specialisation_builds_for_the_host_with_numpys_struct_size(say):
    count = sum(map(len, kernels.all_kernel_names().values()))
    say(f"emulation: building (or loading) {count} kernels with {emulate.compiler()} in {emulate.cache_dir()} ...")
    started = time.perf_counter()
    assert cd.precompile(backend="emulate", progress=False) == count
    say(f"emulation: {count} kernels ready in {time.perf_counter() - started:.1f} s")
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


def _bound(x, out, x_at=None, out_at=None):
    """``emulate.run``'s arguments after the launches: ``x`` read at ``x_at`` and ``out`` written at
    ``out_at`` (by default their own addresses), with their own bytes readable and writable."""
    x_at = x.ctypes.data if x_at is None else x_at
    out_at = out.ctypes.data if out_at is None else out_at
    return [x_at], [out_at], [byte_extent(x)], [byte_extent(out)]


@pytest.mark.emulate
def test_launch_checks_struct_size_and_configuration():
    x, out = np.arange(40, dtype=np.int32).reshape(4, 10), np.zeros((4, 3), np.int32)
    launch = _plan_launch(x, out)
    emulate.run([launch], *_bound(x, out))
    assert np.array_equal(out, x[:, 1:7:2])

    def shortened(inputs, outputs):
        return launch.struct_bytes(inputs, outputs)[:-4]

    fake = types.SimpleNamespace(name=launch.name, grid=launch.grid, struct_bytes=shortened)
    with pytest.raises(emulate.EmulationError, match="bytes in NumPy"):
        emulate.run([fake], *_bound(x, out))
    fake = types.SimpleNamespace(name=launch.name, grid=0, struct_bytes=launch.struct_bytes)
    with pytest.raises(emulate.EmulationError, match="invalid launch configuration"):
        emulate.run([fake], *_bound(x, out))


@pytest.mark.emulate
def test_loads_outside_the_inputs_or_misaligned_fault():
    """What a GPU reports as an illegal or misaligned address, the emulation raises."""
    x, out = np.arange(40, dtype=np.int32).reshape(4, 10), np.zeros((4, 3), np.int32)
    launch = _plan_launch(x, out)
    elsewhere = np.arange(40, dtype=np.int32)
    with pytest.raises(emulate.EmulationError, match="outside every input"):
        emulate.run([launch], *_bound(x, out, x_at=elsewhere.ctypes.data))
    with pytest.raises(emulate.EmulationError, match="misaligned"):
        emulate.run([launch], *_bound(x, out, x_at=x.ctypes.data + 1))


@pytest.mark.emulate
def test_stores_outside_the_outputs_or_misaligned_fault_and_write_nothing():
    x, out = np.arange(40, dtype=np.int32).reshape(4, 10), np.zeros((4, 3), np.int32)
    launch = _plan_launch(x, out)
    inputs, outputs, readable, writable = _bound(x, out)
    assert emulate.run([launch], inputs, outputs, readable, writable) == out.nbytes
    assert np.array_equal(out, x[:, 1:7:2])

    elsewhere = np.zeros(16, np.int32)
    with pytest.raises(emulate.EmulationError, match=rf"^{re.escape(launch.name)}: a store outside every output"):
        emulate.run([launch], *_bound(x, out, out_at=elsewhere.ctypes.data))
    assert not elsewhere.any()

    # The output's own bytes, but at an address two bytes on: writable, and misaligned for int32.
    room = np.zeros(out.nbytes + 4, np.uint8)
    at = room.ctypes.data + 2
    with pytest.raises(emulate.EmulationError, match=r"a misaligned store at address " + hex(at)):
        emulate.run([launch], inputs, [at], readable, [byte_extent(room)])
    assert not room.any()

    # One element short: the last store (element [3, 2], thread 11 of block 0) is refused alone.
    out[...] = -1
    low, high = writable[0]
    last = out[3, 2:].ctypes.data
    message = rf"outside every output at address {last:#x} in block 0, thread 11"
    with pytest.raises(emulate.EmulationError, match=message):
        emulate.run([launch], inputs, outputs, readable, [(low, high - 4)])
    assert np.array_equal(out.ravel()[:-1], x[:, 1:7:2].ravel()[:-1]) and out[3, 2] == -1


def _slice_to_buffer():
    """A SLICE whose output is a buffer tensor of 2 x 3 int32 (row stride 4), and its buffers."""
    desc = cd.SliceOperatorDesc(
        cd.BufferTensorDesc(cd.TensorDataType.INT32, [1, 1, 4, 10]),
        cd.BufferTensorDesc(cd.TensorDataType.INT32, [1, 1, 2, 3], strides=[8, 8, 4, 1]),
        [0, 0, 1, 2],
        [1, 1, 2, 3],
        [1, 1, 2, 2],
    )
    x = TensorBuffer(desc.input_tensors[0]).fill(np.arange(40, dtype=np.int32).reshape(1, 1, 4, 10))
    return desc, x, TensorBuffer(desc.output_tensors[0])


@pytest.mark.emulate
@pytest.mark.parametrize("shift", [1, -1, 4, -4])
def test_a_plan_that_writes_beside_its_output_is_reported(shift):
    """A plan shifted by ``shift`` elements stores into the bound buffer, but partly outside the
    output tensor's extent (into the canaries around it): stores outside the outputs, refused."""
    desc, x, y = _slice_to_buffer()
    op = desc.compile()
    (job,) = op.plan.jobs
    op.plan = dataclasses.replace(op.plan, jobs=(dataclasses.replace(job, out_offset=job.out_offset + shift),))
    message = r"gather_elements<4, .*: a store outside every output"
    with emulated(), pytest.raises(emulate.EmulationError, match=message):
        op.execute([x.binding], [y.binding])
    end = y.offset + y.tensor.total_tensor_size_in_bytes
    assert np.all(y.raw[: y.offset] == POISON) and np.all(y.raw[end:] == POISON)
    assert not np.all(y.raw[y.offset : end] == POISON)  # the stores inside it were made


@pytest.mark.emulate
def test_a_wrong_access_width_is_a_misaligned_store():
    """Launches for 4-byte words run on an output whose address is 2 bytes past a multiple of 4,
    as if the backend had chosen the width from the wrong addresses."""
    desc, x, y = _slice_to_buffer()
    op = desc.compile()
    addresses = ([x.raw.ctypes.data + x.offset], [y.raw.ctypes.data + y.offset + 2])
    owners = ([x.raw], [y.raw])
    with pytest.raises(emulate.EmulationError, match=r"gather_elements<4, .*: a misaligned store"):
        EMULATE.run(op._prepared_for(EMULATE), addresses, owners, None, address_bits=0)
    assert np.all(y.raw == POISON)
    # The width chosen from the true addresses runs the same call as 2-byte words, within bounds.
    EMULATE.run(op._prepared_for(EMULATE), addresses, owners, None, address_bits=2)
    got = y.raw[y.offset + 2 : y.offset + 30].view(np.int32)[[0, 1, 2, 4, 5, 6]]
    assert np.array_equal(got, np.arange(40, dtype=np.int32).reshape(4, 10)[1::2, 2:8:2].ravel())


@pytest.mark.emulate
def test_launches_must_store_every_output_byte_once():
    """Launches that store less than the plan's outputs (as a store that bypassed the checked
    store would look) are reported, naming the kernel and both byte counts."""
    desc, x, y = _slice_to_buffer()
    op = desc.compile()
    prepared = op._prepared_for(EMULATE)
    (job,) = op.plan.jobs
    fewer = dataclasses.replace(op.plan, jobs=(dataclasses.replace(job, sizes=(1, 3)),))
    prepared.by_width[4] = kernels.prepare(fewer)
    message = r"gather_elements<4, int, 2, 1>: the stores wrote 12 bytes; the outputs' elements are 24 bytes"
    with emulated(), pytest.raises(emulate.EmulationError, match=message):
        op.execute([x.binding], [y.binding])


def _misplaced(shape, dtype, shift, rng=None):
    """``(array, raw)``: a C-contiguous array ``shift`` bytes past a 64-byte boundary of ``raw``,
    which holds poison in the 64 bytes on each side (and, without ``rng``, in the array too)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = aligned_empty(n + 128 + shift, alignment=64)
    raw[...] = POISON
    if rng is not None:
        raw[64 + shift : 64 + shift + n] = random_array((n,), np.uint8, rng)
    return raw[64 + shift : 64 + shift + n].view(dtype).reshape(shape), raw


def _placed(values, shift):
    """``values`` in a fresh array ``shift`` bytes past a 64-byte boundary."""
    array, _ = _misplaced(values.shape, values.dtype, shift)
    array[...] = values
    return array


@pytest.fixture(params=["int", "long long"])
def index_type(request, monkeypatch):
    """The kernels' index type: 32-bit as the plans choose for small arrays, or 64-bit forced
    (what spans past 2^31 bytes get), so that both kinds of indexing run on small arrays."""
    if request.param == "long long":
        monkeypatch.setattr(kernels, "_index_type", lambda *args: np.int64)
    runner._CACHE.clear()
    yield request.param
    runner._CACHE.clear()


@pytest.mark.emulate
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int8])
@pytest.mark.parametrize("shift", [1, 2, 6])
@pytest.mark.parametrize("op", cases.params(cases.OPS))
def test_unaligned_arrays_in_and_out_with_checked_stores(monkeypatch, rng, op, dtype, shift, index_type):
    """Each function's samples (rows and elements, strided and dense windows, parts) on inputs
    and ``out=`` arrays at unaligned addresses run exactly, and every store was checked against
    exactly the output arrays' bytes and stored each of them once; with 32- and 64-bit indices
    (common.cuh's divisions of both widths)."""
    if op.windows and index_type == "long long":
        pytest.skip("windows.cu's kernels take their index type from each window's span")
    if op.adds and shift % np.dtype(dtype).itemsize:
        pytest.skip("windows' gradients are summed into an aligned array, then moved into a misaligned out")
    runs = []
    run = emulate.run

    def spy(launches, inputs, outputs, readable, writable):
        stored = run(launches, inputs, outputs, readable, writable)
        runs.append((list(writable), stored))
        assert all(f", {index_type}, " in launch.name for launch in launches), [launch.name for launch in launches]
        return stored

    monkeypatch.setattr(emulate, "run", spy)
    checked = 0
    for sample in op.samples(op.maker(dtype, rng)):
        expected = cases.expected(op, sample)
        placed = [_misplaced(e.shape, dtype, shift) for e in expected]
        out = op.out(sample, [array for array, _ in placed])
        if out is None or not all(a.size for a in [*sample.arrays(), *expected]):
            continue  # new arrays only, or nothing to move
        given = sample.map(lambda a: _placed(a, shift))
        before = [a.tobytes() for a in given.arrays()]
        runs.clear()
        with emulated():
            given.call(op.function, out=out)
        assert len(runs) == 1, sample
        writable, stored = runs[0]
        assert writable == [byte_extent(array) for array, _ in placed], sample
        assert stored == sum(array.nbytes for array, _ in placed), sample
        for (array, raw), want in zip(placed, expected):
            assert array.tobytes() == np.ascontiguousarray(want).tobytes(), sample
            assert np.all(raw[: 64 + shift] == POISON) and np.all(raw[64 + shift + array.nbytes :] == POISON), sample
        assert [a.tobytes() for a in given.arrays()] == before, sample
        checked += 1
    assert checked


# ---- the library cache --------------------------------------------------------------------------

#: Libraries of one kernel each (a fraction of a second to build), keyed by element width.
ONE_KERNEL = {e: ("slice_grad.cu", (f"slice_grad<{e}, 1, int, 1>",)) for e in (1, 2, 4, 8)}


def _check_library(library, names):
    for name in names:
        assert library.param_size[name] == _params_dtype(name).itemsize, name


def _cache_files(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def _entries(directory, keys):
    """The files that a cache holding the libraries of ``keys`` (of ``ONE_KERNEL``) has: nothing else."""
    paths = [emulate.cache_entry(*ONE_KERNEL[k], directory)[0] for k in keys]
    return sorted(name for p in paths for name in (p.name, p.with_suffix(".cpp").name))


@pytest.mark.emulate
def test_threads_building_into_a_fresh_cache_all_succeed(tmp_path):
    directory = tmp_path / "cache"
    keys = [1, 2, 4, 8] * 4
    barrier = threading.Barrier(len(keys))

    def build(key):
        barrier.wait()
        return emulate.load(*ONE_KERNEL[key], directory)

    with concurrent.futures.ThreadPoolExecutor(len(keys)) as pool:
        libraries = list(pool.map(build, keys))
    for key, library in zip(keys, libraries):
        _check_library(library, ONE_KERNEL[key][1])
    assert _cache_files(directory) == _entries(directory, {1, 2, 4, 8})


BUILDER = """
import os, sys, time
from cudadml.backends import emulate
source_file, name, directory, go = sys.argv[1:]
print("ready", flush=True)
while not os.path.exists(go):
    time.sleep(0.001)
library = emulate.load(source_file, (name,), directory)
print(library.param_size[name])
"""


@pytest.mark.emulate
def test_processes_building_into_one_fresh_cache_all_succeed(tmp_path):
    """Twelve processes build the same two libraries into one new cache at once."""
    directory, go = tmp_path / "cache", tmp_path / "go"
    root = str(pathlib.Path(cd.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    keys = [4, 8] * 6
    processes = []
    try:
        for key in keys:
            source_file, (name,) = ONE_KERNEL[key]
            processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", BUILDER, source_file, name, str(directory), str(go)],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for process in processes:
            assert process.stdout.readline() == "ready\n", process.communicate()[1]
        go.touch()  # all released together
        for key, process in zip(keys, processes):
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err
            assert int(out) == _params_dtype(ONE_KERNEL[key][1][0]).itemsize
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert _cache_files(directory) == _entries(directory, {4, 8})
    _check_library(emulate.load(*ONE_KERNEL[4], directory), ONE_KERNEL[4][1])
    assert _cache_files(directory) == _entries(directory, {4, 8})


@pytest.mark.emulate
@pytest.mark.parametrize("where", ["root", "directory", "read-only"])
def test_an_unusable_cache_directory_is_named(tmp_path, monkeypatch, where):
    """CUDADML_CACHE_DIR a file, its emulate/ directory a file, or a directory nobody may write."""
    root = tmp_path / "cache"
    if where == "root":
        root.write_text("not a directory")
    elif where == "directory":
        root.mkdir()
        (root / "emulate").write_text("not a directory")
    else:
        if os.geteuid() == 0:
            pytest.skip("root may write any directory")
        (root / "emulate").mkdir(parents=True)
        (root / "emulate").chmod(0o555)
    monkeypatch.setenv("CUDADML_CACHE_DIR", str(root))
    with pytest.raises(emulate.EmulationError, match=re.escape(f"cache directory {root / 'emulate'} is unusable")):
        emulate.load(*ONE_KERNEL[4])


@pytest.mark.emulate
def test_a_failed_build_leaves_nothing_in_the_cache(tmp_path):
    directory = tmp_path / "cache"
    with pytest.raises(emulate.EmulationError, match=r"could not compile the emulated strided_copy\.cu"):
        emulate.load("strided_copy.cu", ("no_such_kernel<4>",), directory)
    assert _cache_files(directory) == []


EMPTY_LIBRARY_CXX = """#!/bin/sh
# Compiles an empty translation unit into the -o file, whatever it was asked to compile
# (what a builder whose source was truncated under it makes).
out=
prev=
for a in "$@"; do
    if [ "$prev" = "-o" ]; then out=$a; fi
    prev=$a
done
printf '' | exec {cxx} -shared -fPIC -x c++ -o "$out" -
"""


@pytest.mark.emulate
def test_a_library_without_its_symbols_is_never_cached(tmp_path, monkeypatch):
    script = tmp_path / "empty-cxx"
    script.write_text(EMPTY_LIBRARY_CXX.format(cxx=emulate.compiler()))
    script.chmod(0o755)
    monkeypatch.setenv("CXX", str(script))
    directory = tmp_path / "cache"
    with pytest.raises(emulate.EmulationError, match=r"built a library .* that cannot be used: .*cudadml_launch_0"):
        emulate.load(*ONE_KERNEL[4], directory)
    assert _cache_files(directory) == []


@pytest.mark.emulate
@pytest.mark.parametrize("broken", ["garbage", "no symbols"])
def test_a_broken_cached_library_is_rebuilt(tmp_path, broken):
    """A cached library that does not load, or loads without its symbols (and so stays loaded
    under the cache's name), is replaced by a good one, which this process runs."""
    directory = tmp_path / "cache"
    directory.mkdir()
    path = emulate.cache_entry(*ONE_KERNEL[2], directory)[0]
    if broken == "garbage":
        path.write_bytes(b"\x7fELF truncated")
    else:
        subprocess.run(
            [emulate.compiler(), "-shared", "-fPIC", "-x", "c++", "-o", str(path), "-"],
            input="",
            check=True,
            capture_output=True,
            text=True,
        )
        import ctypes

        ctypes.CDLL(str(path))  # now the dynamic loader answers this path with the empty library
    library = emulate.load(*ONE_KERNEL[2], directory)
    _check_library(library, ONE_KERNEL[2][1])
    assert b"cudadml_launch_0" in path.read_bytes()
    assert _cache_files(directory) == _entries(directory, {2})

"""Host cost per call without a GPU: cudadml's own work in each per-call path, against a revision.

    python benchmarks/host_cost.py [--against REV] [--only SUBSTRING] [--rounds 21] [--round-ms 20]
                                   [--launcher {native,python}] [--rev-python-launcher]

Every per-call path of ``bench.py``'s per-call table (and the windows batches', and the small
calls of ``cudadml.numpy`` that ``numpy_bench.py`` times) runs on CuPy arrays whose memory is
host memory (CuPy's allocator handed host addresses), with the device stubbed below the
Python: the CUDA driver is a stub library that takes every launch and does nothing (loaded in
place of ``libcuda.so.1``; without a C compiler, or with ``--launcher python``, the launches
take ``Launch``'s Python route with the driver call stubbed), and CuPy's streams, events,
pinned memory and copies are stand-ins that do nothing. So what is timed is
what the host does before and around a launch: normalising the call, the cache of compiled
operators, the binding rules, tables, allocations of results (CuPy's ndarray over the stub
allocator), filling the parameter struct; not the driver's launch, which is the same for both.

``--against REV`` (default ``HEAD``) runs each case also with cudadml at git revision ``REV``
(or a directory of its tree), imported beside the working tree's as ``bench.py --against``
does, with the working tree's compiled launcher where REV's ``_launch.c`` is the same file
(``--rev-python-launcher``: REV launches from Python, as ``bench.py --against`` ran it before
it shared the launcher). Times are CPU time of the calling thread (other processes on the
machine do not count); rounds of both are taken in turn, and a case's time is the median of its
rounds (each ``--round-ms`` long), with the garbage collector scanning only what the calls
make (the cases' own arrays are frozen). "speed-up" is REV's time over the working tree's
(above 1: the working tree is faster). CPU only: on a machine where CuPy sees a GPU, use
``bench.py``.
"""

from __future__ import annotations

import argparse
import atexit
import ctypes
import functools
import gc
import importlib
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import cupy
import numpy as np

import cudadml as cd

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # bench.py, beside this file
from bench import load_revision

# ---- the device, stubbed ------------------------------------------------------------------------

_FAKE_DRIVER = r"""
/* Stands in for libcuda.so.1: a context on device 0, and launches that do nothing. */
int cuCtxGetCurrent(void **context) { *context = (void *)1; return 0; }
int cuCtxGetDevice(int *device) { *device = 0; return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra) { return 0; }
"""


def _load_fake_driver() -> bool:
    """Build and load the stub driver under libcuda.so.1's soname, where the compiled launcher
    finds it (``dlopen`` with ``RTLD_NOLOAD`` matches a loaded library by its soname). False
    without a C compiler."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="cudadml-host-cost-"))
    atexit.register(shutil.rmtree, folder, True)  # (a loaded library's file may go)
    (folder / "driver.c").write_text(_FAKE_DRIVER)
    library = folder / "libcuda.so.1"
    built = subprocess.run(
        ["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(library), str(folder / "driver.c")],
        capture_output=True,
    )
    if built.returncode:
        return False
    ctypes.CDLL(str(library), mode=ctypes.RTLD_GLOBAL)
    return True


class _Arena:
    """CuPy's allocator, handing out host memory: 512-byte aligned pieces of one host buffer.
    What is allocated before ``fix()`` (the cases' arrays) stays; after it, the pieces cycle
    through the rest (results live a call or two, far shorter than a cycle)."""

    def __init__(self, nbytes=1 << 28):
        self.host = np.empty(nbytes, np.uint8)  # untouched pages cost nothing
        self.memory = cupy.cuda.UnownedMemory(self.host.ctypes.data, nbytes, self.host, device_id=0)
        self.position, self.floor, self.end = -self.host.ctypes.data % 512, None, nbytes

    def fix(self):
        self.floor = self.position

    def __call__(self, size):
        size = max(-(-size // 512) * 512, 512)
        if self.position + size > self.end:
            if self.floor is None or self.floor + size > self.end:
                raise MemoryError("host_cost: the arena is full")
            self.position = self.floor
        pointer = cupy.cuda.MemoryPointer(self.memory, self.position)
        self.position += size
        return pointer


class _Stream:
    ptr = 0

    def __init__(self, null=False, non_blocking=False, ptds=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def wait_event(self, event):
        pass


class _Event:
    done = True

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        pass

    def record(self, stream=None):
        pass


class _Device:
    id = 0

    def __init__(self, device=None):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Pinned(bytearray):
    ptr = 0


_STREAM = _Stream()


class _Function:
    class kernel:
        ptr = 1


class _Driver:  # cupy_backends' driver and runtime, as kernels.py calls them
    CUDADriverError = RuntimeError

    @staticmethod
    def ctxGetCurrent():
        return 1

    @staticmethod
    def launchKernel(*args):
        return None


class _Runtime:
    @staticmethod
    def getDevice():
        return 0

    @staticmethod
    def setDevice(device):
        pass


def _kernels(package):
    return importlib.import_module(f"{package.__name__}.backends.kernels")


def stub_device(packages, launcher) -> str:
    """Stub the CUDA device under ``packages`` (cudadml's copies); returns the launch route."""
    try:
        cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        pass
    else:
        raise SystemExit("host_cost.py stubs the device, for machines without a GPU; here, run bench.py")
    native = launcher == "native" and any(_kernels(p)._native is not None for p in packages)
    if native and not _load_fake_driver():
        native = False
    cuda = cupy.cuda
    cuda.Device, cuda.Stream, cuda.Event = _Device, _Stream, _Event
    cuda.get_current_stream = lambda device=None: _STREAM
    cuda.alloc_pinned_memory = _Pinned
    cuda.runtime.memcpyAsync = lambda *args: None
    for package in packages:
        kernels = _kernels(package)
        kernels._driver, kernels._runtime, kernels._current_stream = _Driver, _Runtime, cuda.get_current_stream
        kernels.load = lambda name: _Function
        if not native:
            kernels._native = None
    return "compiled launcher, stub driver" if native else "Python launch route, stub driver call"


# ---- the cases ----------------------------------------------------------------------------------


def _array(shape, dtype):
    return cupy.ndarray(shape, dtype)


def _windows(rng, bounds, window, n, flips=True):
    offsets = np.array([[rng.integers(0, b - w + 1) for b, w in zip(bounds, window)] for _ in range(n)])
    strides = np.ones((n, len(window)), np.int64)
    if flips:
        strides[:, -1] = rng.choice([1, -1], n)
    return offsets, strides


def cases():
    """``(name, make)`` pairs: ``make(lib)`` gives the call of cudadml package ``lib``, with no
    arguments (arrays shared by both revisions): the rows of ``bench.py``'s per-call table on
    CuPy arrays, windows batches (``slice1_batch`` and its gradient) of each route, and
    ``numpy_bench.py``'s small calls of ``cudadml.numpy`` (64x64 arrays)."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    x = _array((64, 64), f32)
    key = (slice(1, -1), slice(None, None, 2))
    out = _array((62, 32), f32)
    s, w = _array((8, 96), f32), _array((16, 512), f32)
    xs = [_array((16, 64), f32) for _ in range(64)]
    z = _array((64, 64), np.complex128)
    batch_ins, batch_outs = [], []
    for _ in range(16):
        batch_ins += [x, x, _array((16, 64), f32), _array((8, 64), f32), _array((8, 64), f32)]
        batch_outs += [_array((62, 32), f32), _array((32, 64), f32)]
        batch_outs += [_array((16, 32), f32), _array((16, 32), f32), _array((16, 64), f32)]

    def batch(lib):
        t, b = lib.TensorDataType.FLOAT32, lib.BufferTensorDesc
        descs = []
        for _ in range(16):
            descs += [
                lib.SliceOperatorDesc(b(t, [64, 64]), b(t, [62, 32]), [1, 0], [62, 32], [1, 2]),
                lib.Slice1OperatorDesc(b(t, [64, 64]), b(t, [32, 64]), [0, 0], [64, 64], [-2, -1]),
                lib.SplitOperatorDesc(b(t, [16, 64]), [b(t, [16, 32]), b(t, [16, 32])], 1),
                lib.JoinOperatorDesc([b(t, [8, 64]), b(t, [8, 64])], b(t, [16, 64]), 0),
            ]
        return lib.compile_batch(descs)

    def compiled(lib):
        t = lib.TensorDataType.FLOAT32
        desc = lib.SliceOperatorDesc(
            lib.BufferTensorDesc(t, [64, 64]), lib.BufferTensorDesc(t, [62, 32]), [1, 0], [62, 32], [1, 2]
        )
        return desc.compile()

    # Windows: 16 of a 3x64x64 image, 3x24x24 each (flipped or not along the last axis); of their
    # own sizes; into a strided out=; per sample; and the gradients.
    image = _array((3, 64, 64), f32)
    offsets, strides = _windows(rng, (3, 64, 64), (3, 24, 24), 16)
    own = np.array([[3, rng.integers(8, 25), rng.integers(8, 25)] for _ in range(16)])
    strided_out = _array((16, 3, 24, 48), f32)[..., ::2]
    samples = _array((16, 3, 64, 64), f32)
    sample_offsets, sample_strides = _windows(rng, (3, 64, 64), (3, 48, 48), 16)
    dy = _array((16, 3, 24, 24), f32)
    dy_own = [_array(tuple(int(v) for v in row), f32) for row in own]
    dy_samples = _array((16, 3, 48, 48), f32)
    image_z = _array((3, 64, 64), np.complex128)
    # Windows of their own sizes, new ones each call (256 sets in turn: more than any cache keeps).
    varied = []
    for _ in range(256):
        sizes = np.array([[3, rng.integers(8, 25), rng.integers(8, 25)] for _ in range(16)])
        at = np.array([[0, rng.integers(0, 65 - h), rng.integers(0, 65 - w)] for _, h, w in sizes])
        varied.append((at, sizes, [_array(tuple(int(v) for v in row), f32) for row in sizes]))

    def cycling(call):
        state = iter(())

        def next_call():
            nonlocal state
            arguments = next(state, None)
            if arguments is None:
                state = iter(varied)
                arguments = next(state)
            return call(*arguments)

        return next_call

    windows = {"window_offsets": offsets, "window_strides": strides}
    per_sample = {"window_offsets": sample_offsets, "window_sizes": (3, 48, 48), "per_sample": True}
    per_sample["window_strides"] = sample_strides
    # cudadml.numpy's small calls, as numpy_bench.py times them against CuPy's.
    h, u8 = _array((64, 64), np.float16), _array((3, 64, 64), np.uint8)

    def cnp(name, *args, **kwargs):
        """``make`` of a call of ``cudadml.numpy``'s function ``name`` (looked up once)."""
        return lambda lib: functools.partial(
            getattr(importlib.import_module(f"{lib.__name__}.numpy"), name), *args, **kwargs
        )

    return [
        (
            "compile_batch of 64 operators, execute",
            lambda lib: (lambda c: lambda: c.execute(batch_ins, batch_outs))(batch(lib)),
        ),
        (
            "compile_batch of 64, bound once: BoundOperator.execute",
            lambda lib: batch(lib).bind(batch_ins, batch_outs).execute,
        ),
        (
            "64x64 [1:-1, ::2] compiled execute into preallocated",
            lambda lib: (lambda c: lambda: c.execute([x], [out]))(compiled(lib)),
        ),
        ("64x64 [1:-1, ::2] per call", lambda lib: lambda: lib.strided_slice(x, key)),
        ("same, out= preallocated, per call", lambda lib: lambda: lib.strided_slice(x, key, out=out)),
        (
            "small complex128 slice per call: 64x64 [1:-1, ::2]",
            lambda lib: lambda: lib.strided_slice(z, key, directml_types=False),
        ),
        ("(8 x 96) split into 3 per call", lambda lib: lambda: lib.split(s, parts=3, axis=1)),
        ("(16 x 512) split into 64 per call", lambda lib: lambda: lib.split(w, parts=64, axis=1)),
        ("join of 64 (16 x 64) per call", lambda lib: lambda: lib.join(xs, axis=0)),
        (
            "slice1_batch: 16 windows 3x24x24 of 3x64x64 f32, flips, per call",
            lambda lib: lambda: lib.slice1_batch(image, window_sizes=(3, 24, 24), **windows),
        ),
        (
            "slice1_batch: same windows, own sizes, per call",
            lambda lib: lambda: lib.slice1_batch(image, window_offsets=offsets, window_sizes=own),
        ),
        (
            "slice1_batch: own sizes, new windows each call",
            lambda lib: cycling(lambda at, sizes, _: lib.slice1_batch(image, window_offsets=at, window_sizes=sizes)),
        ),
        (
            "slice1_batch: same windows, strided out=, per call",
            lambda lib: lambda: lib.slice1_batch(image, window_sizes=(3, 24, 24), out=strided_out, **windows),
        ),
        (
            "slice1_batch: 16 per-sample crops 3x48x48 of 3x64x64, flips, per call",
            lambda lib: lambda: lib.slice1_batch(samples, **per_sample),
        ),
        (
            "slice1_batch: 16 windows complex128, per call",
            lambda lib: lambda: lib.slice1_batch(image_z, window_sizes=(3, 24, 24), directml_types=False, **windows),
        ),
        (
            "slice1_batch_grad: 16 windows (overlapping), per call",
            lambda lib: lambda: lib.slice1_batch_grad(dy, (3, 64, 64), window_sizes=(3, 24, 24), **windows),
        ),
        (
            "slice1_batch_grad: own sizes, per call",
            lambda lib: lambda: lib.slice1_batch_grad(dy_own, (3, 64, 64), window_offsets=offsets, window_sizes=own),
        ),
        (
            "slice1_batch_grad: own sizes, new windows each call",
            lambda lib: cycling(
                lambda at, sizes, grads: lib.slice1_batch_grad(
                    grads, (3, 64, 64), window_offsets=at, window_sizes=sizes
                )
            ),
        ),
        (
            "slice1_batch_grad: 16 per-sample crops, per call",
            lambda lib: lambda: lib.slice1_batch_grad(dy_samples, (16, 3, 64, 64), **per_sample),
        ),
        ("cnp.roll f32 64x64 axis 0", cnp("roll", x, 21, axis=0)),
        ("cnp.roll f32 64x64 axes (0, 1)", cnp("roll", x, (3, -5), axis=(0, 1))),
        ("cnp.pad u8 3x64x64 zeros", cnp("pad", u8, ((0, 0), (8, 8), (8, 8)))),
        ("cnp.pad f16 64x64 constant 3", cnp("pad", h, 16, constant_values=3)),
        ("cnp.flip f32 64x64 axis 1", cnp("flip", x, axis=1)),
        ("cnp.flipud u8 3x64x64", cnp("flipud", u8)),
        ("cnp.array_split f16 64x64 in 3", cnp("array_split", h, 3)),
    ]


# ---- timing -------------------------------------------------------------------------------------


def _calls_for(fn, round_s):
    """How many calls of ``fn`` take about ``round_s``."""
    n, t = 1, 0.0
    while t < round_s / 10:
        n *= 2
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        t = time.thread_time() - t0
    return max(1, int(n * round_s / t))


def host_times_us(fns, rounds, round_s):
    """Per call, the median over ``rounds`` rounds of each of ``fns`` (a dict), taken in turn."""
    calls = {name: _calls_for(fn, round_s) for name, fn in fns.items()}
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            gc.collect()
            n = calls[name]
            t0 = time.thread_time()
            for _ in range(n):
                fn()
            times[name].append((time.thread_time() - t0) / n * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="HEAD", metavar="REV", help="git revision or directory of its tree")
    parser.add_argument("--only", default="")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--round-ms", type=float, default=20.0)
    parser.add_argument("--launcher", choices=("native", "python"), default="native")
    parser.add_argument("--rev-python-launcher", action="store_true", help="REV launches from Python")
    args = parser.parse_args(argv)
    label, before = load_revision(args.against)
    arena = _Arena()
    cupy.cuda.set_allocator(arena)
    route = stub_device([cd, before], args.launcher)
    if args.rev_python_launcher:
        _kernels(before)._native = None
        route += f"; {label} through the Python route"
    participants = []
    for name, make in cases():
        if args.only not in name:
            continue
        fns = {"working tree": make(cd), label: make(before)}
        for who, fn in list(fns.items()):  # compiled and cached, before the arena fixes what stays
            try:
                for _ in range(3):
                    fn()
            except AttributeError:
                if who == "working tree":
                    raise
                del fns[who]  # REV lacks the function
        participants.append((name, fns))
    arena.fix()
    gc.collect()
    gc.freeze()  # the cases' objects: collections scan what the calls make, not the harness's
    where = pathlib.Path(cd.__file__).parent
    print(f"# host cost per call, CPU only ({route}); cudadml {cd.__version__} at {where} against {label}")
    print(f"# CPU time per call: median of {args.rounds} rounds of about {args.round_ms:g} ms, the two in turn\n")
    print(f"| case | working tree us | {label} us | speed-up |")
    print("|---|---:|---:|---:|")
    slowest = None
    for name, fns in participants:
        times = host_times_us(fns, args.rounds, args.round_ms / 1e3)
        ours, theirs = times["working tree"], times.get(label)
        cells = f"{theirs:.2f} | {theirs / ours:.3f}x" if theirs is not None else "- | -"
        print(f"| {name} | {ours:.2f} | {cells} |", flush=True)
        if theirs is not None and (slowest is None or theirs / ours < slowest[0]):
            slowest = (theirs / ours, name)
    if slowest is not None:
        print(f"\nslowest speed-up: {slowest[0]:.3f}x ({slowest[1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

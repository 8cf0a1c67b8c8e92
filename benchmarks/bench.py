"""Time cudadml against CuPy and PyTorch on the cases of ``CASES``, all in one run.

    python benchmarks/bench.py [--reps 20] [--only SUBSTRING] [--json PATH] [--against REV]

Device times are medians of CUDA-event-timed runs after warm-up, on fresh random data per
case: GPU time with a spin kernel queued first (the host work is hidden), and the whole call
on an idle GPU; per-call rows are host wall time over many calls. GB/s counts the minimum traffic
(each selected input byte read once, each output byte written once); %D2D is that rate over a
1 GiB device-to-device cudaMemcpyAsync measured in the same run. "vs best" is the best peer's
time over cudadml's (above 1: cudadml is faster). Peers materialise their results (CuPy
``.copy()``, PyTorch ``.clone()`` / ``.contiguous()``), as cudadml does.

``--against REV`` also runs every case with cudadml as it was at git revision ``REV`` (or from
a directory holding that revision's ``cudadml/`` and ``kernels_cu/``), imported as a second
package beside the working tree's, so its kernels run with the launches and parameter structs
they were written for, compiled as modules of their own (and the working tree's compiled
launcher, where REV's source of it is the same: an archive carries no build). Each case is
timed with both, one after the other, in the same process, after checking that both give the
same bytes; the tables gain REV's %D2D and the change in points (GPU time), and REV's host time
per call. ``host_cost.py`` times the per-call host work of both without a GPU.
"""

from __future__ import annotations

import argparse
import atexit
import functools
import importlib.util
import io
import json
import pathlib
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

import cupy as cp
import numpy as np

import cudadml as cd

try:
    import torch
except ImportError:
    torch = None

WINDOW = (slice(None), slice(None), slice(1, -1), slice(2, -2))


#: Queued before a timed call, so that its host work is done before the GPU reaches the call.
_SPIN = cp.RawKernel(
    r"""extern "C" __global__ void spin(long long cycles) {
        const long long start = clock64();
        while (clock64() - start < cycles) {}
    }""",
    "spin",
)
_SPIN_CYCLES = 20_000_000  # about 10 ms: more than any peer's host work per call


def device_time_us(fn, reps, gpu_only=True):
    """Median CUDA-event time of ``fn``: GPU work only (a spin kernel queued first hides the
    host work), or with ``gpu_only=False`` the whole call as one synchronous call feels it."""
    for _ in range(3):
        fn()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        if gpu_only:
            _SPIN((1,), (1,), (np.int64(_SPIN_CYCLES),))
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1000)
    return statistics.median(times)


def copy_time_us(reps):
    """A 1 GiB device-to-device cudaMemcpyAsync: the practical ceiling for data movement."""
    src, dst = random((2**30,), np.uint8), cp.empty(2**30, np.uint8)
    return device_time_us(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, 2**30, 3, 0), reps)


def host_times_us(fns, calls=2000, rounds=11):
    """Wall time per call of each of ``fns`` (a dict; host work and launch, synchronised at the
    end of each round): the median of ``rounds`` rounds of ``calls // rounds`` calls, the
    participants' rounds taken in turn, so a slow spell of the host (a pool trim, a collection,
    another process) lands on all of them and one slow round decides nothing."""
    for fn in fns.values():
        for _ in range(50):
            fn()
    per_round = calls // rounds
    times = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            for _ in range(per_round):
                fn()
            cp.cuda.Device().synchronize()
            times[name].append((time.perf_counter() - t0) / per_round * 1e6)
    return {name: statistics.median(t) for name, t in times.items()}


def same_traffic_copy(nbytes):
    """A device-to-device cudaMemcpyAsync that moves ``nbytes`` (read + write): what the GPU's
    copy engine path reaches at a case's own size, where launch and ramp weigh."""
    src, dst = random((nbytes // 2,), np.uint8), cp.empty(nbytes // 2, np.uint8)
    return lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes // 2, 3, 0)


def random(shape, dtype):
    """Fresh random bits of ``dtype`` on the GPU (never zeros)."""
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    words = cp.random.randint(0, 2**31 - 1, size=(n + 3) // 4, dtype=np.int32)
    return words.view(np.uint8)[:n].view(dtype).reshape(shape)


def as_torch(x):
    return torch.as_tensor(x, device="cuda") if torch is not None else None


def _torch_key(key):
    """PyTorch has no negative steps: (key without them, dims to flip)."""
    plain, flips = [], []
    for d, k in enumerate(key):
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            plain.append(slice(None, None, -k.step))
            flips.append(d)
        else:
            plain.append(k)
    return tuple(plain), flips


def slice_case(name, shape, dtype, key, **options):
    def make():
        x = random(shape, dtype)
        out_bytes = x[key].nbytes
        tx = as_torch(x)
        plain, flips = _torch_key(key)

        def torch_fn():
            y = tx[plain]
            return y.flip(flips).contiguous() if flips else y.clone()

        return {
            "bytes": 2 * out_bytes,
            "cudadml": lambda lib: lib.strided_slice(x, key, **options),
            "CuPy": lambda: x[key].copy(),
            "PyTorch": torch_fn if torch is not None else None,
        }

    return name, make


def grad_case(name, shape, dtype, key, torch_ok=True):
    def make():
        x_shape = shape
        dy = cp.ascontiguousarray(random(shape, dtype)[key])
        tdy = as_torch(dy)

        def cupy_fn():
            g = cp.zeros(x_shape, dtype)
            g[key] = dy
            return g

        def torch_fn():
            g = torch.zeros(x_shape, dtype=tdy.dtype, device="cuda")
            g[key] = tdy
            return g

        return {
            "bytes": dy.nbytes + int(np.prod(shape)) * np.dtype(dtype).itemsize,
            "cudadml": lambda lib: lib.strided_slice_grad(dy, x_shape, key),
            "CuPy": cupy_fn,
            "PyTorch": torch_fn if torch is not None and torch_ok else None,
        }

    return name, make


def split_case(name, shape, dtype, parts, axis):
    def make():
        x = random(shape, dtype)
        tx = as_torch(x)
        sizes = [shape[axis] // parts] * parts
        return {
            "bytes": 2 * x.nbytes,
            "cudadml": lambda lib: lib.split(x, parts=parts, axis=axis),
            "CuPy": lambda: [p.copy() for p in cp.split(x, parts, axis=axis)],
            "PyTorch": (lambda: [p.clone() for p in torch.split(tx, sizes, dim=axis)]) if torch is not None else None,
        }

    return name, make


def join_case(name, shape, dtype, parts, axis):
    def make():
        xs = [cp.ascontiguousarray(p) for p in cp.split(random(shape, dtype), parts, axis=axis)]
        txs = [as_torch(p) for p in xs]
        return {
            "bytes": 2 * sum(p.nbytes for p in xs),
            "cudadml": lambda lib: lib.join(xs, axis=axis),
            "CuPy": lambda: cp.concatenate(xs, axis=axis),
            "PyTorch": (lambda: torch.cat(txs, dim=axis)) if torch is not None else None,
        }

    return name, make


def _window_key(offset, size, stride):
    return tuple(
        slice(o, o + n, st) if st > 0 else slice(o + n - 1, o - 1 if o else None, st)
        for o, n, st in zip(offset, size, stride)
    )


def windows_case(name, shape, dtype, n, window, per_sample, flips=True):
    """``n`` windows at random offsets (and, with ``flips``, each flipped along its innermost
    axis or not, at random), against a loop of per-window slices and a stack, as torchvision's
    per-sample crops and flips run."""

    def make():
        rng = np.random.default_rng(0)
        x = random(shape, dtype)
        bounds = shape[1:] if per_sample else shape
        offsets = np.array([[rng.integers(0, b - w + 1) for b, w in zip(bounds, window)] for _ in range(n)])
        strides = np.ones((n, len(window)), np.int64)
        if flips:
            strides[:, -1] = rng.choice([1, -1], n)
        keys = [_window_key(o, window, st) for o, st in zip(offsets, strides)]
        plain = [_window_key(o, window, np.abs(st)) for o, st in zip(offsets, strides)]
        flipped = [bool(st[-1] < 0) for st in strides]
        tx = as_torch(x)

        def source(a, k):
            return a[k] if per_sample else a

        def torch_fn():
            parts = [source(tx, k)[key] for k, key in enumerate(plain)]
            return torch.stack([p.flip(-1) if f else p for p, f in zip(parts, flipped)])

        return {
            "bytes": 2 * n * int(np.prod(window)) * np.dtype(dtype).itemsize,
            "cudadml": lambda lib: lib.slice1_batch(
                x, window_offsets=offsets, window_sizes=window, window_strides=strides, per_sample=per_sample
            ),
            "CuPy": lambda: cp.stack([source(x, k)[key] for k, key in enumerate(keys)]),
            "PyTorch": torch_fn if torch is not None else None,
        }

    return name, make


def windows_grad_case(name, shape, dtype, n, window, per_sample):
    """The gradient of ``windows_case``'s windows, against PyTorch's autograd of the loop of
    slices (its backward alone: the graph is built once) and a CuPy loop adding each window."""

    def make():
        rng = np.random.default_rng(1)
        bounds = shape[1:] if per_sample else shape
        offsets = np.array([[rng.integers(0, b - w + 1) for b, w in zip(bounds, window)] for _ in range(n)])
        strides = np.ones((n, len(window)), np.int64)
        strides[:, -1] = rng.choice([1, -1], n)
        keys = [
            (k, *_window_key(o, window, st)) if per_sample else _window_key(o, window, st)
            for k, (o, st) in enumerate(zip(offsets, strides))
        ]
        dy = random((n, *window), dtype)
        dy[...] = cp.asarray(rng.standard_normal(dy.shape))  # finite values: sums of random bits overflow

        def cupy_fn():
            g = cp.zeros(shape, dtype)
            for k, key in enumerate(keys):
                g[key] += dy[k]
            return g

        torch_fn = None
        if torch is not None:
            tx = torch.zeros(shape, dtype=as_torch(dy).dtype, device="cuda", requires_grad=True)
            plain = [
                (k, *_window_key(o, window, np.abs(st))) if per_sample else _window_key(o, window, np.abs(st))
                for k, (o, st) in enumerate(zip(offsets, strides))
            ]
            parts = [tx[key] for key in plain]
            y = torch.stack([p.flip(-1) if st[-1] < 0 else p for p, st in zip(parts, strides)])
            tdy = as_torch(dy)

            def torch_fn():
                return torch.autograd.grad(y, tx, tdy, retain_graph=True)[0]

        return {
            "bytes": dy.nbytes + int(np.prod(shape)) * np.dtype(dtype).itemsize,
            "cudadml": lambda lib: lib.slice1_batch_grad(
                dy, shape, window_offsets=offsets, window_sizes=window, window_strides=strides, per_sample=per_sample
            ),
            "CuPy": cupy_fn,
            "PyTorch": torch_fn,
        }

    return name, make


def per_call_case(name, make_fns):
    return name, make_fns


F4 = (32, 64, 256, 256)
CASES = [
    slice_case("window f32", F4, np.float32, WINDOW),
    slice_case("window f16", F4, np.float16, WINDOW),
    slice_case("window int8", F4, np.int8, WINDOW),
    slice_case("window f64 (16x64x256x256)", (16, 64, 256, 256), np.float64, WINDOW),
    slice_case("window complex128 (16x32x256x256)", (16, 32, 256, 256), np.complex128, WINDOW, directml_types=False),
    slice_case("inner stride 2 [..., ::2] f32", F4, np.float32, (Ellipsis, slice(None, None, 2))),
    slice_case("reverse axis 1 [:, ::-1] f32", F4, np.float32, (slice(None), slice(None, None, -1))),
    slice_case("reverse innermost [..., ::-1] f32", F4, np.float32, (Ellipsis, slice(None, None, -1))),
    slice_case(
        "8-D window [1:, 1:, 1:, 1:, :, :, :, 0:30] f32",
        (4, 4, 8, 8, 8, 8, 16, 32),
        np.float32,
        (*(slice(1, None),) * 4, *(slice(None),) * 3, slice(0, 30)),
    ),
    slice_case("8-D window (4,4,8,8,8,8,16,32) f32", (4, 4, 8, 8, 8, 8, 16, 32), np.float32, (slice(1, -1),) * 8),
    slice_case("narrow rows [:, 3:7] of (2^22, 32) f32", (2**22, 32), np.float32, (slice(None), slice(3, 7))),
    grad_case("slice grad, window f32", F4, np.float32, WINDOW),
    grad_case("slice grad, stride 2 on axis 3", F4, np.float32, (Ellipsis, slice(None, None, 2))),
    grad_case(
        "slice grad, step -2 on axis 2",
        F4,
        np.float32,
        (slice(None), slice(None), slice(None, None, -2)),
        torch_ok=False,
    ),
    split_case("split axis 2 into 3", (32, 64, 258, 256), np.float32, 3, 2),
    split_case("split innermost axis into 2", F4, np.float32, 2, 3),
    split_case("split (2^21 x 512) innermost into 64", (2**21, 512), np.float32, 64, 1),
    split_case("split (2^21 x 64) axis 0 into 64", (2**21, 64), np.float32, 64, 0),
    join_case("join axis 2 of 3", (32, 64, 258, 256), np.float32, 3, 2),
    join_case("join 64 x (2^15, 64) axis 0", (2**21, 64), np.float32, 64, 0),
    join_case("join 64 x (2^21, 8) axis 1", (2**21, 512), np.float32, 64, 1),
    windows_case(
        "256 per-sample crops 3x224x224 of 3x256x256 u8, flips", (256, 3, 256, 256), np.uint8, 256, (3, 224, 224), True
    ),
    windows_case("256 per-sample crops, f16", (256, 3, 256, 256), np.float16, 256, (3, 224, 224), True),
    windows_case("256 per-sample crops, f32", (256, 3, 256, 256), np.float32, 256, (3, 224, 224), True),
    windows_case(
        "4096 ROIs 3x32x32 of one 3x1024x1024 f32", (3, 1024, 1024), np.float32, 4096, (3, 32, 32), False, False
    ),
    windows_grad_case("gradient of 256 per-sample crops f32", (256, 3, 256, 256), np.float32, 256, (3, 224, 224), True),
    windows_grad_case(
        "gradient of 4096 overlapping ROIs 3x32x32 of one 3x1024x1024 f32",
        (3, 1024, 1024),
        np.float32,
        4096,
        (3, 32, 32),
        False,
    ),
    windows_grad_case(
        "gradient of 64 overlapping crops 3x224x224 of 3x256x256 f32",
        (3, 256, 256),
        np.float32,
        64,
        (3, 224, 224),
        False,
    ),
]


def per_call_cases():
    """Small calls, where host work decides: wall time per call. The cudadml entries take the
    library (the working tree's or ``--against``'s)."""
    x = random((64, 64), np.float32)
    key = (slice(1, -1), slice(None, None, 2))
    out = cp.empty(x[key].shape, np.float32)
    copy = cp.ElementwiseKernel("T x", "T y", "y = x", "bench_copy")
    view = x[key]
    s = random((8, 96), np.float32)
    w = random((16, 512), np.float32)
    xs = [random((16, 64), np.float32) for _ in range(64)]
    z = random((64, 64), np.complex128)
    tx, ts, tw, tz = as_torch(x), as_torch(s), as_torch(w), as_torch(z)
    txs = [as_torch(a) for a in xs]
    # slice1_batch: 16 windows of a 3x64x64 image (one size 3x24x24; or sizes of their own,
    # 3 x 8..24 x 8..24), and their gradients, against loops of slices (and sums) in CuPy and
    # PyTorch.
    rng = np.random.default_rng(2)
    image = random((3, 64, 64), np.float32)
    timage = as_torch(image)
    offsets = np.c_[np.zeros(16, np.int64), rng.integers(0, 41, (16, 2))]
    own = np.c_[np.full(16, 3), rng.integers(8, 25, (16, 2))]
    keys = [_window_key(o, (3, 24, 24), (1, 1, 1)) for o in offsets]
    own_keys = [_window_key(o, n, (1, 1, 1)) for o, n in zip(offsets, own)]
    dy, dy_own = random((16, 3, 24, 24), np.float32), [random(tuple(map(int, n)), np.float32) for n in own]
    for g in (dy, *dy_own):
        g[...] = 1  # finite values: sums of random bits overflow
    tdy, tdy_own = as_torch(dy), [as_torch(g) for g in dy_own]

    def cupy_sum(grads, window_keys):
        g = cp.zeros((3, 64, 64), np.float32)
        for part, window in zip(grads, window_keys):
            g[window] += part
        return g

    def torch_sum(grads, window_keys):
        g = torch.zeros((3, 64, 64), dtype=torch.float32, device="cuda")
        for part, window in zip(grads, window_keys):
            g[window] += part
        return g

    windows = [
        (
            "small complex128 slice per call: 64x64 [1:-1, ::2] (directml_types=False)",
            {
                "cudadml": lambda lib: functools.partial(lib.strided_slice, z, key, directml_types=False),
                "CuPy": lambda: cp.ascontiguousarray(z[key]),
                "PyTorch": (lambda: tz[1:-1, ::2].contiguous()) if torch is not None else None,
            },
        ),
        (
            "slice1_batch of 16 windows 3x24x24 of 3x64x64 per call",
            {
                "cudadml": lambda lib: functools.partial(
                    lib.slice1_batch, image, window_offsets=offsets, window_sizes=(3, 24, 24)
                ),
                "CuPy": lambda: cp.stack([image[k] for k in keys]),
                "PyTorch": (lambda: torch.stack([timage[k] for k in keys])) if torch is not None else None,
            },
        ),
        (
            "slice1_batch of 16 windows of their own sizes per call",
            {
                "cudadml": lambda lib: functools.partial(
                    lib.slice1_batch, image, window_offsets=offsets, window_sizes=own
                ),
                "CuPy": lambda: [image[k].copy() for k in own_keys],
                "PyTorch": (lambda: [timage[k].clone() for k in own_keys]) if torch is not None else None,
            },
        ),
        (
            "slice1_batch_grad of 16 windows 3x24x24 per call",
            {
                "cudadml": lambda lib: functools.partial(
                    lib.slice1_batch_grad, dy, (3, 64, 64), window_offsets=offsets, window_sizes=(3, 24, 24)
                ),
                "CuPy": lambda: cupy_sum(dy, keys),
                "PyTorch": (lambda: torch_sum(tdy, keys)) if torch is not None else None,
            },
        ),
        (
            "slice1_batch_grad of 16 windows of their own sizes per call",
            {
                "cudadml": lambda lib: functools.partial(
                    lib.slice1_batch_grad, dy_own, (3, 64, 64), window_offsets=offsets, window_sizes=own
                ),
                "CuPy": lambda: cupy_sum(dy_own, own_keys),
                "PyTorch": (lambda: torch_sum(tdy_own, own_keys)) if torch is not None else None,
            },
        ),
    ]

    @functools.cache
    def compiled(lib):
        f32 = lib.TensorDataType.FLOAT32
        desc = lib.SliceOperatorDesc(
            lib.BufferTensorDesc(f32, [64, 64]), lib.BufferTensorDesc(f32, [62, 32]), [1, 0], [62, 32], [1, 2]
        )
        return desc.compile()

    tensors = [  # the same calls on CUDA tensors, against PyTorch's own
        (
            "64x64 [1:-1, ::2] of a tensor per call",
            {
                "cudadml": lambda lib: functools.partial(lib.strided_slice, tx, key),
                "CuPy": None,
                "PyTorch": lambda: tx[1:-1, ::2].contiguous(),
            },
        ),
        (
            "(8 x 96) tensor split into 3 per call",
            {
                "cudadml": lambda lib: functools.partial(lib.split, ts, parts=3, axis=1),
                "CuPy": None,
                "PyTorch": lambda: [p.clone() for p in torch.split(ts, 32, dim=1)],
            },
        ),
        (
            "(16 x 512) tensor split into 64 per call",
            {
                "cudadml": lambda lib: functools.partial(lib.split, tw, parts=64, axis=1),
                "CuPy": None,
                "PyTorch": lambda: [p.clone() for p in torch.split(tw, 8, dim=1)],
            },
        ),
        (
            "join of 64 (16 x 64) tensors per call",
            {
                "cudadml": lambda lib: functools.partial(lib.join, txs, axis=0),
                "CuPy": None,
                "PyTorch": lambda: torch.cat(txs, dim=0),
            },
        ),
    ]

    @functools.cache
    def batch(lib):
        """64 operators of four kinds on small f32 arrays, compiled together, and bindings."""
        f32, t = lib.TensorDataType.FLOAT32, lib.BufferTensorDesc
        descs, ins, outs = [], [], []
        for _ in range(16):
            descs += [
                lib.SliceOperatorDesc(t(f32, [64, 64]), t(f32, [62, 32]), [1, 0], [62, 32], [1, 2]),
                lib.Slice1OperatorDesc(t(f32, [64, 64]), t(f32, [32, 64]), [0, 0], [64, 64], [-2, -1]),
                lib.SplitOperatorDesc(t(f32, [16, 64]), [t(f32, [16, 32]), t(f32, [16, 32])], 1),
                lib.JoinOperatorDesc([t(f32, [8, 64]), t(f32, [8, 64])], t(f32, [16, 64]), 0),
            ]
            ins += [x, x, random((16, 64), np.float32), random((8, 64), np.float32), random((8, 64), np.float32)]
            outs += [cp.empty((62, 32), np.float32), cp.empty((32, 64), np.float32)]
            outs += [cp.empty((16, 32), np.float32), cp.empty((16, 32), np.float32), cp.empty((16, 64), np.float32)]
        return lib.compile_batch(descs), ins, outs

    def batch_execute(lib):
        compiled_batch, ins, outs = batch(lib)
        return functools.partial(compiled_batch.execute, ins, outs)

    def batch_bound(lib):
        compiled_batch, ins, outs = batch(lib)
        return compiled_batch.bind(ins, outs).execute

    return [
        (
            "compile_batch of 64 operators (slice, slice1, split, join), execute (no peer: vs one operator's below)",
            {"cudadml": batch_execute, "CuPy": None, "PyTorch": None},
        ),
        (
            "compile_batch of 64, bound once: bind(), then BoundOperator.execute (vs one operator's execute below)",
            {"cudadml": batch_bound, "CuPy": None, "PyTorch": None},
        ),
        (
            "64x64 [1:-1, ::2] compiled execute into preallocated (vs ElementwiseKernel copy)",
            {
                "cudadml": lambda lib: functools.partial(compiled(lib).execute, [x], [out]),
                "CuPy": lambda: copy(view, out),
                "PyTorch": None,
            },
        ),
        (
            "64x64 [1:-1, ::2] per call",
            {
                "cudadml": lambda lib: functools.partial(lib.strided_slice, x, key),
                "CuPy": lambda: x[key].copy(),
                "PyTorch": (lambda: tx[1:-1, ::2].contiguous()) if torch is not None else None,
            },
        ),
        (
            "same, out= preallocated, per call",
            {
                "cudadml": lambda lib: functools.partial(lib.strided_slice, x, key, out=out),
                "CuPy": None,
                "PyTorch": None,
            },
        ),
        (
            "(8 x 96) split into 3 per call",
            {
                "cudadml": lambda lib: functools.partial(lib.split, s, parts=3, axis=1),
                "CuPy": lambda: [p.copy() for p in cp.split(s, 3, axis=1)],
                "PyTorch": (lambda: [p.clone() for p in torch.split(ts, 32, dim=1)]) if torch is not None else None,
            },
        ),
        (
            "(16 x 512) split into 64 per call",
            {
                "cudadml": lambda lib: functools.partial(lib.split, w, parts=64, axis=1),
                "CuPy": lambda: [p.copy() for p in cp.split(w, 64, axis=1)],
                "PyTorch": (lambda: [p.clone() for p in torch.split(tw, 8, dim=1)]) if torch is not None else None,
            },
        ),
        (
            "join of 64 (16 x 64) per call",
            {
                "cudadml": lambda lib: functools.partial(lib.join, xs, axis=0),
                "CuPy": lambda: cp.concatenate(xs, axis=0),
                "PyTorch": (lambda: torch.cat(txs, dim=0)) if torch is not None else None,
            },
        ),
        *windows,
    ] + (tensors if torch is not None else [])


def load_revision(rev: str):
    """``(label, package)``: cudadml as it was at git revision ``rev`` (its ``cudadml/``, and
    ``kernels_cu/`` where the revision keeps its kernels at the root, from ``git archive``), or
    as held in the directory ``rev``, imported as a second package named after it; its kernels
    are found where that revision looks for them (``cudadml/backends/kernels_cu/``, or
    ``kernels_cu/`` beside the package in revisions before the layers were folders), and
    it launches through the working tree's compiled launcher where its ``_launch.c`` is the
    same file (``_share_launcher``)."""
    if pathlib.Path(rev).is_dir():
        root, label = pathlib.Path(rev).resolve(), pathlib.Path(rev).resolve().name
    else:
        repo = pathlib.Path(__file__).resolve().parents[1]
        found = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
            capture_output=True,
            text=True,
        )
        if found.returncode:
            raise SystemExit(f"--against {rev}: neither a directory nor a commit of {repo}")
        sha = found.stdout.strip()
        at_root = subprocess.run(
            ["git", "-C", str(repo), "ls-tree", "--name-only", sha, "kernels_cu"], capture_output=True, text=True
        ).stdout.strip()
        parts = ["cudadml", *([at_root] if at_root else [])]
        archive = subprocess.run(
            ["git", "-C", str(repo), "archive", sha, *parts], capture_output=True, check=True
        ).stdout
        root, label = pathlib.Path(tempfile.mkdtemp(prefix=f"cudadml-{sha[:12]}-")), sha[:7]
        atexit.register(shutil.rmtree, root, True)  # read until the process ends (kernel sources)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            # The "data" filter (no links out, no special files) where this Python has it (3.10.12+).
            tar.extractall(root, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    kernels = [root / "cudadml" / "backends" / "kernels_cu", root / "kernels_cu"]
    if not (root / "cudadml" / "__init__.py").is_file() or not any(k.is_dir() for k in kernels):
        raise SystemExit(f"--against {rev}: {root} holds no cudadml/ package with its kernels_cu/")
    name = "cudadml_at_" + "".join(c if c.isalnum() else "_" for c in label)
    spec = importlib.util.spec_from_file_location(
        name, root / "cudadml" / "__init__.py", submodule_search_locations=[str(root / "cudadml")]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    _share_launcher(root, package)
    return label, package


def launcher(package) -> str:
    """How cudadml ``package`` launches: through its compiled launcher, or from Python."""
    kernels = importlib.import_module(f"{package.__name__}.backends.kernels")
    return "compiled launcher" if getattr(kernels, "_native", None) is not None else "Python launch route"


def _share_launcher(root, package) -> None:
    """Give the revision ``package`` (extracted at ``root``) the working tree's compiled launcher
    where its ``_launch.c`` is the same file: ``git archive`` carries no build output, so REV
    would otherwise launch from Python while the working tree launches from C, and the per-call
    rows would compare launchers rather than the revisions' own work."""
    kernels = importlib.import_module("cudadml.backends.kernels")
    ours, theirs = kernels._native, importlib.import_module(f"{package.__name__}.backends.kernels")
    source = pathlib.Path(kernels.__file__).with_name("_launch.c")
    revision_source = root / "cudadml" / "backends" / "_launch.c"
    if (
        ours is None
        or getattr(theirs, "_native", ours) is not None
        or not revision_source.is_file()
        or revision_source.read_bytes() != source.read_bytes()
    ):
        return
    theirs._native = ours
    theirs._PYTHON_ROUTE = frozenset({ours.NO_FUNCTION, ours.NO_DRIVER, ours.NO_CONTEXT})


def _has_functions(package, ours) -> bool:
    """Whether cudadml ``package`` (an older revision) has what the case ``ours`` calls."""
    try:
        ours(package)
    except AttributeError:
        return False
    return True


def _same_bytes(a, b) -> bool:
    """Whether two results (an array, or a list of arrays) hold the same bits."""
    a, b = (list(r) if isinstance(r, (list, tuple)) else [r] for r in (a, b))
    return len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and bool((x.view(np.uint8) == y.view(np.uint8)).all())
        for x, y in zip((cp.ascontiguousarray(v) for v in a), (cp.ascontiguousarray(v) for v in b))
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default="")
    parser.add_argument("--json", metavar="PATH", help="also write every row as JSON (see _record)")
    parser.add_argument(
        "--against", metavar="REV", help="also time cudadml at git revision REV (or a directory of its tree)"
    )
    args = parser.parse_args(argv)
    label, before = load_revision(args.against) if args.against else (None, None)
    old = f"cudadml at {label}"  # its participant name in the JSON
    rows = []
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    print(
        f"# {props['name'].decode()}, CuPy {cp.__version__}, "
        f"PyTorch {torch.__version__ if torch else 'not installed'}, cudadml {cd.__version__}"
        + (f", against cudadml at {label}" if label else "")
        + f"; launches: {launcher(cd)}"
        + (f", {label}'s {launcher(before)}" if label else "")
    )
    d2d_us = copy_time_us(args.reps)
    d2d = 2 * 2**30 / d2d_us / 1e3
    print(f"# device-to-device cudaMemcpyAsync of 1 GiB: {d2d_us:.0f} us = {d2d:.0f} GB/s (read + write)\n")
    print("GPU time (a spin kernel queued first hides host work), and the whole call (events")
    print("around one call on an idle GPU: host work, launch and GPU time, as a user waits for it).")
    print("copy %D2D: a cudaMemcpyAsync of the case's own traffic, timed the same way.")
    if label:
        print(f"{label} %D2D: the same case with cudadml at {label}, timed right after; change: points of %D2D.")
    print()
    against = f" {label} %D2D | change |" if label else ""
    peers = " CuPy us | PyTorch us | vs best peer |"
    print(f"| case | cudadml us | GB/s | %D2D | copy %D2D |{against}{peers} whole call us | whole vs best |")
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if label else "") + "---:|---:|---:|---:|---:|")
    worst, losses = float("inf"), []
    for name, make in CASES:
        if args.only not in name:
            continue
        fns = make()
        ours = fns.pop("cudadml")
        runs = {"cudadml": functools.partial(ours, cd)}
        if before is not None and _has_functions(before, ours):
            runs[old] = functools.partial(ours, before)
            if not _same_bytes(runs["cudadml"](), runs[old]()):
                raise SystemExit(f"{name}: cudadml at {label} gives other bytes than the working tree")
        runs.update((k, f) for k, f in fns.items() if k != "bytes")
        runs["copy"] = same_traffic_copy(fns["bytes"])
        times = {k: device_time_us(f, args.reps) if f else None for k, f in runs.items()}
        whole = {k: device_time_us(f, args.reps, gpu_only=False) if f else None for k, f in runs.items()}
        share = {k: 100 * fns["bytes"] / t / 1e3 / d2d for k, t in times.items() if t is not None}
        rate = fns["bytes"] / times["cudadml"] / 1e3
        change = " - | - |" if label else ""
        if old in share:
            change = f" {share[old]:.1f} | {share['cudadml'] - share[old]:+.1f} |"
            if share["cudadml"] < share[old] - 1:
                losses.append(f"{name}: {share['cudadml']:.1f}% against {share[old]:.1f}%")
        share_cells = f"{share['cudadml']:.0f} | {share['copy']:.0f}"
        worst = min(worst, _row(name, times, f"{rate:.0f}", share_cells, whole, change))
        rows += _record(name, "large", times, whole, fns["bytes"], d2d)
        del fns, runs, ours
        cp.get_default_memory_pool().free_all_blocks()
    print("\nPer call: host wall time per call over many calls (host work decides).\n")
    against = f" {label} us | speed-up |" if label else ""
    print(f"| case | cudadml us | | | |{against}{peers}")
    print("|---|---:|---:|---:|---:|" + ("---:|---:|" if label else "") + "---:|---:|---:|")
    for name, fns in per_call_cases():
        if args.only not in name:
            continue
        ours = fns.pop("cudadml")
        fns = {"cudadml": ours(cd), **({old: ours(before)} if label and _has_functions(before, ours) else {}), **fns}
        times = {**dict.fromkeys(fns), **host_times_us({k: f for k, f in fns.items() if f})}
        change = (
            (f" {times[old]:.1f} | {times[old] / times['cudadml']:.2f}x |" if old in times else " - | - |")
            if label
            else ""
        )
        worst = min(worst, _row(name, times, "", " |", change=change))
        rows += _record(name, "per call", times)
    print(f"\nslowest ratio to the best peer: {worst:.2f}")
    if label:
        print(f"large cases more than 1 point of %D2D behind cudadml at {label}: {len(losses)}")
        for line in losses:
            print(f"  {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props["name"].decode(), "d2d_gbps": d2d, "rows": rows}, f, indent=1)
    return 1 if losses else 0


def _record(case, kind, times, whole=None, nbytes=None, d2d=None):
    """JSON rows, one per participant: ``gpu_us`` (GPU time, or host time per call for the
    per-call rows), ``whole_us`` (whole call, large cases), ``pct_d2d`` (GPU time's share of
    the copy bandwidth, large cases)."""
    return [
        {
            "case": case,
            "kind": kind,
            "participant": who,
            "gpu_us": t,
            "whole_us": whole[who] if whole else None,
            "pct_d2d": 100 * nbytes / t / 1e3 / d2d if nbytes else None,
        }
        for who, t in times.items()
        if t is not None
    ]


def _ratio(times):
    """The best peer's time over cudadml's (inf without peers); other revisions of cudadml
    are no peers."""
    peers = [t for k, t in times.items() if k in ("CuPy", "PyTorch") and t is not None]
    return min(peers) / times["cudadml"] if peers else float("inf")


def _row(name, times, rate, share, whole=None, change=""):
    """Print one row; returns the lowest ratio to the best peer in it."""
    ratio = _ratio(times)
    cells = [f"{t:.1f}" if t is not None else "-" for t in (times["CuPy"], times["PyTorch"])]
    shown = f"{ratio:.2f}x" if ratio != float("inf") else "-"
    extra = ""
    if whole is not None:
        extra = f" {whole['cudadml']:.1f} | {_ratio(whole):.2f}x |"
        ratio = min(ratio, _ratio(whole))
    print(f"| {name} | {times['cudadml']:.1f} | {rate} | {share} |{change} {cells[0]} | {cells[1]} | {shown} |{extra}")
    return ratio


if __name__ == "__main__":
    sys.exit(main())

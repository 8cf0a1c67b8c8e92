"""``python -m cudadml --bench``: a short side-by-side timing on the GPU.

Five everyday cases on a 64 MiB float32 array, each run by cudadml, by CuPy and, where it is
installed, by PyTorch, every peer materialising its result as cudadml does. Each peer's result
is first compared byte for byte with cudadml's. A time is the median, over ``REPS`` runs after
warm-up, of the CUDA-event time of one whole call on an idle GPU (host work included); GB/s
counts each byte read once and each byte written once. ``benchmarks/bench.py`` in a source
checkout is the full benchmark.
"""

from __future__ import annotations

import statistics

import numpy as np

import cudadml as cd

REPS = 20
SHAPE = (16, 32, 128, 256)  # 64 MiB of float32
WINDOW = np.s_[:, :, 1:-1, 2:-2]
PARTS = 4


def _cases(cp, torch):
    """``(name, bytes moved, {peer: call})``; PyTorch's calls are None without PyTorch."""
    x = cp.asarray(np.random.default_rng(0).standard_normal(SHAPE, dtype=np.float32))  # cupy.random needs cuRAND
    dy = cp.ascontiguousarray(x[WINDOW])
    parts = [cp.ascontiguousarray(p) for p in cp.split(x, PARTS, axis=1)]
    tx, tdy = (torch.as_tensor(x, device="cuda"), torch.as_tensor(dy, device="cuda")) if torch else (None, None)
    tparts = [torch.as_tensor(p, device="cuda") for p in parts] if torch else None

    return [
        (
            "strided_slice window",
            2 * dy.nbytes,
            {
                "cudadml": lambda: cd.strided_slice(x, WINDOW),
                "CuPy": lambda: x[WINDOW].copy(),
                "PyTorch": torch and (lambda: tx[WINDOW].clone()),
            },
        ),
        (
            "strided_slice [:, ::-1]",
            2 * x.nbytes,
            {
                "cudadml": lambda: cd.strided_slice(x, np.s_[:, ::-1]),
                "CuPy": lambda: x[:, ::-1].copy(),
                "PyTorch": torch and (lambda: tx.flip(1)),
            },
        ),
        (
            "strided_slice_grad window",
            dy.nbytes + x.nbytes,
            {
                "cudadml": lambda: cd.strided_slice_grad(dy, SHAPE, WINDOW),
                "CuPy": lambda: _scatter(cp.zeros(SHAPE, np.float32), dy),
                "PyTorch": torch and (lambda: _scatter(torch.zeros(SHAPE, dtype=torch.float32, device="cuda"), tdy)),
            },
        ),
        (
            f"split into {PARTS} (axis 1)",
            2 * x.nbytes,
            {
                "cudadml": lambda: cd.split(x, parts=PARTS, axis=1),
                "CuPy": lambda: [p.copy() for p in cp.split(x, PARTS, axis=1)],
                "PyTorch": torch and (lambda: [p.clone() for p in torch.chunk(tx, PARTS, dim=1)]),
            },
        ),
        (
            f"join of {PARTS} (axis 1)",
            2 * x.nbytes,
            {
                "cudadml": lambda: cd.join(parts, axis=1),
                "CuPy": lambda: cp.concatenate(parts, axis=1),
                "PyTorch": torch and (lambda: torch.cat(tparts, dim=1)),
            },
        ),
    ]


def _scatter(zeros, dy):
    """The peers' gradient of the window: zeros, with ``dy`` where the window read."""
    zeros[WINDOW] = dy
    return zeros


def _bytes(cp, result):
    """The bytes of a result (an array, a tensor or a list of them) as one CuPy uint8 array."""
    arrays = result if isinstance(result, list) else [result]
    return cp.concatenate([cp.ascontiguousarray(cp.asarray(a)).view(np.uint8).ravel() for a in arrays])


def _time_us(cp, call):
    for _ in range(3):
        call()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(REPS):
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1000)
    return statistics.median(times)


def main() -> int:
    """Print the table; 1 if a peer's result differs from cudadml's, else 0."""
    import cupy as cp

    try:
        import torch
    except ImportError:
        torch = None
    print(f"GPU: {cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)['name'].decode()}, CuPy {cp.__version__}")
    print(f"PyTorch {torch.__version__}" if torch else "PyTorch: not installed (its column is empty)")
    print(f"\nmedian µs of {REPS} calls (GB/s) on a {'x'.join(map(str, SHAPE))} float32 array")
    peers = ("cudadml", "CuPy", "PyTorch")
    print(f"{'case':<28}" + "".join(f"{p:>18}" for p in peers))
    differ = []
    for name, moved, calls in _cases(cp, torch):
        expected = _bytes(cp, calls["cudadml"]())
        cells = []
        for peer in peers:
            call = calls[peer]
            if not call:
                cells.append("-")
                continue
            if peer != "cudadml" and not cp.array_equal(_bytes(cp, call()), expected):
                differ.append(f"{name}: {peer}")
            us = _time_us(cp, call)
            cells.append(f"{us:.0f} ({moved / us / 1e3:.0f})")
        print(f"{name:<28}" + "".join(f"{c:>18}" for c in cells))
    for case in differ:
        print(f"DIFFERS from cudadml: {case}")
    return 1 if differ else 0

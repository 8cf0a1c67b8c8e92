"""``cudadml.numpy`` against CuPy's functions of the same names, in one run on the GPU.

Each case is timed small (host wall time per call: ``bench.host_times_us``, what a loop of
small calls feels) and large (the whole call as one synchronous call feels it, CUDA events
around it, and its GPU time alone behind a spin kernel; ``bench.device_time_us``). Where CuPy
returns views (the split family, flips), its time includes the copies a user makes of them
(``[p.copy() for p in ...]``, ``.copy()``), since cudadml's results are new arrays. Every case
first checks that both give the same bytes. "vs CuPy" is CuPy's time over cudadml's (above
1: cudadml is faster).

    python benchmarks/numpy_bench.py [--reps 20] [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import sys

import cupy as cp
import numpy as np
from bench import device_time_us, host_times_us, random

import cudadml.numpy as cnp


def _cases(size):
    """``(name, cudadml call, CuPy call)`` for arrays of side ``size`` (64: small, 4096: large)."""
    n = size
    a, b, c = (random((n, n), np.float32) for _ in range(3))
    h = random((n, n), np.float16)
    u8 = random((3, n, n), np.uint8)
    yield "concatenate 3 f32, axis 1", lambda: cnp.concatenate([a, b, c], axis=1), lambda: cp.concatenate([a, b, c], 1)
    yield "stack 3 f32", lambda: cnp.stack([a, b, c]), lambda: cp.stack([a, b, c])
    yield "vstack 3 f16", lambda: cnp.vstack([h, h, h]), lambda: cp.vstack([h, h, h])
    yield "roll f32 axis 0", lambda: cnp.roll(a, n // 3, axis=0), lambda: cp.roll(a, n // 3, axis=0)
    yield "roll f32 axes (0, 1)", lambda: cnp.roll(a, (3, -5), axis=(0, 1)), lambda: cp.roll(a, (3, -5), axis=(0, 1))
    yield "pad u8 zeros", lambda: cnp.pad(u8, ((0, 0), (8, 8), (8, 8))), lambda: cp.pad(u8, ((0, 0), (8, 8), (8, 8)))
    yield (
        "pad f16 constant 3",
        lambda: cnp.pad(h, 16, constant_values=3),
        lambda: cp.pad(h, 16, constant_values=3),
    )
    for mode in ("edge", "reflect", "symmetric", "wrap"):
        yield (
            f"pad f32 {mode} 8",
            lambda mode=mode: cnp.pad(a, 8, mode),
            lambda mode=mode: cp.pad(a, 8, mode),
        )
    yield (
        "pad u8 reflect (0, 0), (3, 3), (3, 3)",
        lambda: cnp.pad(u8, ((0, 0), (3, 3), (3, 3)), "reflect"),
        lambda: cp.pad(u8, ((0, 0), (3, 3), (3, 3)), "reflect"),
    )
    yield (
        "split f32 in 4, axis 1",
        lambda: cnp.split(a, 4, axis=1),
        lambda: [p.copy() for p in cp.split(a, 4, axis=1)],
    )
    yield (
        "array_split f16 in 3",
        lambda: cnp.array_split(h, 3),
        lambda: [p.copy() for p in cp.array_split(h, 3)],
    )
    yield "flip f32 axis 1", lambda: cnp.flip(a, axis=1), lambda: cp.flip(a, axis=1).copy()
    yield "flipud u8", lambda: cnp.flipud(u8), lambda: cp.flipud(u8).copy()


def _same(x, y) -> bool:
    xs, ys = (x, y) if isinstance(x, list) else ([x], [y])
    # bytes, not ==: random bits hold NaNs
    return len(xs) == len(ys) and all(
        p.shape == q.shape and p.dtype == q.dtype and cp.asnumpy(p).tobytes() == cp.asnumpy(q).tobytes()
        for p, q in zip(xs, ys)
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default="")
    args = parser.parse_args(argv)
    device = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()
    print(f"{device}, CuPy {cp.__version__}")
    print("\n| case | size | cudadml us | CuPy us | vs CuPy | GPU only: cudadml us | CuPy us |")
    print("|---|---|---:|---:|---:|---:|---:|")
    behind = 0
    for label, size in (("small", 64), ("large", 4096)):
        for name, ours, theirs in _cases(size):
            if args.only not in name:
                continue
            if not _same(ours(), theirs()):
                print(f"| {name} | {label} | DIFFERS | | | | |")
                return 1
            if label == "small":
                times = host_times_us({"ours": ours, "theirs": theirs})
            else:
                times = {
                    "ours": device_time_us(ours, args.reps, gpu_only=False),
                    "theirs": device_time_us(theirs, args.reps, gpu_only=False),
                }
            gpu = [device_time_us(fn, args.reps) for fn in (ours, theirs)] if label == "large" else ["", ""]
            ratio = times["theirs"] / times["ours"]
            behind += ratio < 1
            cells = [f"{t:.1f}" if t != "" else "" for t in gpu]
            print(
                f"| {name} | {label} | {times['ours']:.1f} | {times['theirs']:.1f} | {ratio:.2f}x | "
                f"{cells[0]} | {cells[1]} |"
            )
    print(f"\n{behind} row(s) behind CuPy")
    return 0


if __name__ == "__main__":
    sys.exit(main())

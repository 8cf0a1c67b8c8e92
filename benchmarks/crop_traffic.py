"""What limits the per-sample crops: bench.py's 256 crops 3x224x224 of 3x256x256 with other
window offsets, and the same bytes as one plain window, against the DRAM traffic they cause.

    python benchmarks/crop_traffic.py [--reps 30]

DRAM moves whole 64-byte units (the H100's L2 fetch unit), so a crop row of 224 bytes (uint8)
read from a 256-byte row of the image costs 256 bytes wherever it starts, and one of 448 bytes
(float16) costs 512 bytes unless it starts on a unit. "DRAM / payload" is the bytes the reads
and writes move (each row's units, counted from the offsets) over the bytes the bench counts;
"%D2D of DRAM bytes" is the rate of those bytes against a 1 GiB device-to-device copy. GPU
time as bench.py measures it (a spin kernel queued first), one run.
"""

import argparse
import functools

import cupy as cp
import numpy as np
from bench import copy_time_us, device_time_us, random, same_traffic_copy

import cudadml as cd

N, IMAGE, CROP = 256, (3, 256, 256), (3, 224, 224)
UNIT = 64


def dram_bytes(offsets, itemsize):
    """Bytes the crops move through DRAM: every 64-byte unit their rows touch, read, plus the
    packed output, written. Image rows start on a unit (the pitch is a multiple of 64)."""
    start = offsets[:, -1] * itemsize
    end = start + CROP[-1] * itemsize
    units = -(-end // UNIT) - start // UNIT
    rows = CROP[0] * CROP[1]
    return int(units.sum()) * UNIT * rows + N * int(np.prod(CROP)) * itemsize


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    d2d_rate = 2**31 / copy_time_us(args.reps)  # bytes per us, read + write
    rng = np.random.default_rng(0)
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}\n")
    print("| dtype | windows | us | %D2D | copy %D2D | DRAM / payload | %D2D of DRAM bytes |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for dtype in (np.uint8, np.float16, np.float32):
        e = np.dtype(dtype).itemsize
        x = random((N, *IMAGE), dtype)
        out = cp.empty((N, *CROP), dtype)
        payload = 2 * N * int(np.prod(CROP)) * e
        copy_share = payload / device_time_us(same_traffic_copy(payload), args.reps) / d2d_rate * 100
        offsets = np.stack([np.zeros(N, int), rng.integers(0, 33, N), rng.integers(0, 33, N)], 1)
        aligned = offsets.copy()
        aligned[:, -1] = aligned[:, -1] * e // 16 * 16 // e
        plain = np.ones((N, 3), int)
        flips = plain.copy()
        flips[:, -1] = rng.choice([1, -1], N)
        variants = {
            "random offsets and flips (bench.py)": (offsets, flips),
            "random offsets": (offsets, plain),
            "offsets on 16 bytes": (aligned, plain),
            "every crop at offset 0": (np.zeros_like(offsets), plain),
        }
        for name, (o, st) in variants.items():
            window = {"window_offsets": o, "window_sizes": CROP, "window_strides": st}
            crops = functools.partial(cd.slice1_batch, x, **window, per_sample=True, out=out)
            us = device_time_us(crops, args.reps)
            moved = dram_bytes(o, e)
            print(
                f"| {np.dtype(dtype).name} | {name} | {us:.1f} | {payload / us / d2d_rate * 100:.1f} | "
                f"{copy_share:.1f} | {moved / payload:.3f} | {moved / us / d2d_rate * 100:.1f} |"
            )
        # The same bytes as one window of the whole batch, one job: x[:, :, 16:240, 16:240].
        key = (slice(None), slice(None), slice(16, 240), slice(16, 240))
        us = device_time_us(functools.partial(cd.strided_slice, x, key), args.reps)
        moved = dram_bytes(np.full((N, 3), 16), e)
        print(
            f"| {np.dtype(dtype).name} | one window `[:, :, 16:240, 16:240]` (strided_slice) | {us:.1f} | "
            f"{payload / us / d2d_rate * 100:.1f} | {copy_share:.1f} | {moved / payload:.3f} | "
            f"{moved / us / d2d_rate * 100:.1f} |"
        )


if __name__ == "__main__":
    main()

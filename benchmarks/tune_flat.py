"""The flat walk (gather_flat) against the row walk (gather_rows) on the same tensors, one run.

    python benchmarks/tune_flat.py

The plan takes the flat walk wherever it applies; here each case also runs with the plan
forced to the row walk. GPU time (a spin kernel first), as %D2D of a 1 GiB copy.
"""

import functools

import cupy as cp
import numpy as np
from bench import copy_time_us, device_time_us, random

import cudadml as cd
from cudadml.backends import kernels
from cudadml.run import runner

INNER = (slice(None), slice(None), slice(1, -1), slice(2, -2))
CASES = [
    ("f32, 1008 B rows (the f32 window)", (32, 64, 256, 256), np.float32, INNER),
    ("f32, 1004 B rows", (32, 64, 256, 256), np.float32, (slice(None), slice(None), slice(1, -1), slice(2, -3))),
    ("f32, 120 B rows, (2^16, 6, 30)", (2**16, 8, 32), np.float32, (slice(None), slice(1, -1), slice(1, -1))),
    ("f32, 120 B rows, the 8-D window", (4, 4, 8, 8, 8, 8, 16, 32), np.float32, (slice(1, -1),) * 8),
    ("f16, 504 B rows", (32, 64, 256, 256), np.float16, INNER),
    ("int8, 252 B rows", (32, 64, 256, 256), np.int8, INNER),
    ("f64, 2016 B rows", (16, 64, 256, 256), np.float64, INNER),
    ("f32, 40 B rows", (2**20, 16), np.float32, (slice(None), slice(3, 13))),
    ("int8, 20 B rows", (2**22, 32), np.int8, (slice(None), slice(3, 23))),
]


def main():
    d2d = 2 * 2**30 / copy_time_us(20) / 1e3
    packed = kernels.is_packed
    print("| rows | flat | by row |\n|---|---:|---:|")
    for name, shape, dtype, key in CASES:
        x = random(shape, dtype)
        expected = x[key].copy()
        call = functools.partial(cd.strided_slice, x, key)
        shares = []
        for by_row in (False, True):
            runner._CACHE.clear()
            kernels.is_packed = (lambda sizes, strides: False) if by_row else packed
            try:
                assert cp.array_equal(call().view(np.uint8), expected.view(np.uint8))
                t = device_time_us(call, 20)
            finally:
                kernels.is_packed = packed
            shares.append(f"{100 * 2 * expected.nbytes / t / 1e3 / d2d:.0f}%")
        print(f"| {name} | {shares[0]} | {shares[1]} |", flush=True)
        del x, expected, call
        cp.get_default_memory_pool().free_all_blocks()
    runner._CACHE.clear()


if __name__ == "__main__":
    main()

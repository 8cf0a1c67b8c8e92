"""Compare variants of gather_rows' partial-chunk handling in one run (same data, same GPU).

    python benchmarks/tune_rows.py

Each variant replaces the partial-chunk branch of kernels_cu/strided_copy.cu; every variant is
checked for exactness before it is timed.
"""

import cupy as cp
import numpy as np
from bench import WINDOW, copy_time_us, device_time_us, random

import cudadml as cd
from cudadml.backends import kernels

SERIAL = """        } else {
            // A partial chunk at a row end: element by element (both ends are element-aligned).
            for (u64 a = lo; a < hi; a += E) {
                *reinterpret_cast<W*>(a) = __ldg(reinterpret_cast<const W*>(from + (a - lo)));
            }
        }"""

PACKED = """        } else {
            uint4 packed = make_uint4(0u, 0u, 0u, 0u);
            W* lanes = reinterpret_cast<W*>(&packed);
            const u64 first = lo & ~(u64)15;
#pragma unroll
            for (int i = 0; i < 16 / E; ++i) {
                const u64 at = first + (u64)(i * E);
                if (at >= lo && at < hi) lanes[i] = __ldg(reinterpret_cast<const W*>(from + (at - lo)));
            }
#pragma unroll
            for (int i = 0; i < 16 / E; ++i) {
                const u64 at = first + (u64)(i * E);
                if (at >= lo && at < hi) *reinterpret_cast<W*>(at) = lanes[i];
            }
        }"""

PIECES = """        } else {
            for (u64 a = lo; a < hi;) {
                const unsigned char* p = from + (a - lo);
                const u64 left = hi - a;
                if ((a & 7) == 0 && left >= 8) {
                    *reinterpret_cast<u64*>(a) = load_bytes<8>(p);
                    a += 8;
                } else if ((a & 3) == 0 && left >= 4) {
                    *reinterpret_cast<unsigned*>(a) = (unsigned)load_bytes<4>(p);
                    a += 4;
                } else if ((a & 1) == 0 && left >= 2) {
                    *reinterpret_cast<unsigned short*>(a) = (unsigned short)load_bytes<2>(p);
                    a += 2;
                } else {
                    *reinterpret_cast<unsigned char*>(a) = __ldg(p);
                    a += 1;
                }
            }
        }"""

LOAD_BYTES = """template <int N>
__device__ __forceinline__ u64 load_bytes(const unsigned char* p) {
    const unsigned mis = (unsigned)(reinterpret_cast<u64>(p) & (N - 1));
    u64 v = 0;
    if (mis == 0) {
        if (N == 8) return __ldg(reinterpret_cast<const u64*>(p));
        if (N == 4) return __ldg(reinterpret_cast<const unsigned*>(p));
        return __ldg(reinterpret_cast<const unsigned short*>(p));
    }
    if ((mis & 3) == 0) {
#pragma unroll
        for (int k = 0; k < N / 4; ++k) v |= (u64)__ldg(reinterpret_cast<const unsigned*>(p) + k) << (32 * k);
    } else if ((mis & 1) == 0) {
#pragma unroll
        for (int k = 0; k < N / 2; ++k) v |= (u64)__ldg(reinterpret_cast<const unsigned short*>(p) + k) << (16 * k);
    } else {
#pragma unroll
        for (int k = 0; k < N; ++k) v |= (u64)__ldg(p + k) << (8 * k);
    }
    return v;
}

// 16 bytes at p"""

ORIGINAL = kernels.kernel_source


def variant(branch, min_blocks=None):
    def source(name):
        text = ORIGINAL(name)
        if name != "strided_copy.cu":
            return text
        assert SERIAL in text
        text = text.replace(SERIAL, branch).replace("// 16 bytes at p", LOAD_BYTES, 1)
        if min_blocks:
            text = text.replace(
                "__global__ void __launch_bounds__(CUDADML_BLOCK)\\ngather_rows",
                f"__global__ void __launch_bounds__(CUDADML_BLOCK, {min_blocks})\\ngather_rows",
            )
        return text

    return source


VARIANTS = {
    "serial": variant(SERIAL),
    "packed": variant(PACKED),
    "pieces": variant(PIECES),
    "pieces, 6 blocks/SM": variant(PIECES, 6),
    "packed, 5 blocks/SM": variant(PACKED, 5),
}

CASES = [
    ("window int8", (32, 64, 256, 256), np.int8),
    ("window f16", (32, 64, 256, 256), np.float16),
    ("window f32", (32, 64, 256, 256), np.float32),
    ("window f64", (16, 64, 256, 256), np.float64),
    ("narrow rows", (2**22, 32), np.float32),
]


def main():
    d2d = 2 * 2**30 / copy_time_us(20) / 1e3
    data = {name: random(shape, dtype) for name, shape, dtype in CASES}
    print(f"| variant | {' | '.join(name for name, _, _ in CASES)} |  (% of D2D {d2d:.0f} GB/s)")
    for label, source in VARIANTS.items():
        kernels.kernel_source = source
        kernels._compiled.clear()
        kernels.prepare.cache_clear()
        cd.arrays._CACHE.clear()
        cells = []
        for name, _, _ in CASES:
            x = data[name]
            key = (slice(None), slice(3, 7)) if name == "narrow rows" else WINDOW
            got = cd.strided_slice(x, key)
            exact = got.view(np.uint8) == cp.ascontiguousarray(x[key]).view(np.uint8)
            assert bool(exact.all()), (label, name)
            us = device_time_us(lambda x=x, key=key: cd.strided_slice(x, key), 20)
            cells.append(f"{100 * 2 * got.nbytes / us / 1e3 / d2d:.0f}%")
        print(f"| {label} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()

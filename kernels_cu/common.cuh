// common.cuh: what every cudadml kernel shares.
//
// Provides: element words of 1/2/4/8 bytes, put_lane and get_lane (elements in the four
// words of a 16-byte value), store (every store to global memory goes through it), fast
// division by run-time sizes, and the launch shape (BLOCK threads, ITEMS work items each).
// Supplied by Python (cudadml/backends/kernels.py): CUDADML_BLOCK and CUDADML_ITEMS, as -D
// options. This header is inlined textually into the .cu files that include it, so cached
// modules see its edits.
// Cannot be compiled standalone.
#pragma once

typedef unsigned long long u64;

// Threads per block and work items per thread: every launch uses exactly CUDADML_BLOCK
// threads, and the host sizes grids with the same numbers, which it passes in.
#if !defined(CUDADML_BLOCK) || !defined(CUDADML_ITEMS)
#error "CUDADML_BLOCK and CUDADML_ITEMS come from cudadml/backends/kernels.py (-D options)"
#endif

// Kernels move bits, never values: an element is an unsigned word of its width.
template <int E> struct Word;
template <> struct Word<1> { typedef unsigned char type; };
template <> struct Word<2> { typedef unsigned short type; };
template <> struct Word<4> { typedef unsigned int type; };
template <> struct Word<8> { typedef unsigned long long type; };

// Element w into bytes [at, at + sizeof(W)) of the 16 bytes words[0..3] (little-endian), which
// hold 0 there before. `at` must be a compile-time constant after unrolling, and the words an
// array that is only ever indexed so: then they stay in registers. Reinterpreting a uint4 as
// an array of lanes instead puts it in local memory (a stack frame, and a load and store per
// lane), which cost copies up to 18 points of a device-to-device copy's rate.
template <typename W>
__device__ __forceinline__ void put_lane(unsigned (&words)[4], int at, W w) {
    if (sizeof(W) == 8) {
        words[at / 4] = (unsigned)(u64)w;
        words[at / 4 + 1] = (unsigned)((u64)w >> 32);
    } else {
        words[at / 4] |= (unsigned)w << (8 * (at % 4));
    }
}

// The element in bytes [at, at + sizeof(W)) of words[0..3], as put_lane placed it.
template <typename W>
__device__ __forceinline__ W get_lane(const unsigned (&words)[4], int at) {
    if (sizeof(W) == 8) return (W)(words[at / 4] | (u64)words[at / 4 + 1] << 32);
    return (W)(words[at / 4] >> (8 * (at % 4)));
}

// *p = v, for every store a kernel makes to global memory (element words and uint4 alike).
// On a GPU it is that plain store, inlined: the same instruction as writing *p directly.
// emulation.h defines CUDADML_EMULATED and its own store, which checks that p is aligned to
// sizeof(T) and that its bytes lie inside one of the launch's outputs.
#ifndef CUDADML_EMULATED
template <typename T>
__device__ __forceinline__ void store(T* p, T v) {
    *p = v;
}
#endif

// A run-time divisor d > 0 with the host's magic m and shift s (kernels.fast_division), in the
// unsigned type U of I's width (B = 32 or 64 bits): s = ceil(log2 d),
// m = floor(2^B (2^s - d) / d) + 1, so for 0 <= n < 2^(B-1)
// n / d = (mulhi(n, m) + n) >> s; mulhi(n, m) <= n < 2^(B-1) keeps the sum inside B bits.
// 64-bit indexing divides the same way: a plain 64-bit division is a call to a subroutine,
// whose saved registers would give the kernels a stack frame.
template <typename I> struct Magic;
template <> struct Magic<int> { typedef unsigned type; };
template <> struct Magic<long long> { typedef u64 type; };
template <typename I>
struct Divider {
    I d;
    typename Magic<I>::type magic;
    unsigned shift;
    __device__ __forceinline__ I div(I n) const;
    // n / d, with n % d in r.
    __device__ __forceinline__ I divmod(I n, I& r) const {
        const I q = div(n);
        r = n - q * d;
        return q;
    }
};
template <>
__device__ __forceinline__ int Divider<int>::div(int n) const {
    return (int)((__umulhi((unsigned)n, magic) + (unsigned)n) >> shift);
}
template <>
__device__ __forceinline__ long long Divider<long long>::div(long long n) const {
    return (long long)((__umul64hi((u64)n, magic) + (u64)n) >> shift);
}

// The coordinates of item idx in the row-major box sizes[0 .. N-1]: visit(dim, coordinate)
// for every dimension, innermost first. Every kernel finds its elements through it.
template <int N, typename I, typename Visit>
__device__ __forceinline__ void for_each_coordinate(const Divider<I>* sizes, I idx, Visit&& visit) {
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
        I c;
        idx = sizes[d].divmod(idx, c);
        visit(d, c);
    }
    if (N > 0) visit(0, idx);
}

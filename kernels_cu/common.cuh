// common.cuh: what every cudadml kernel shares.
//
// Provides: element words of 1/2/4/8 bytes, store (every store to global memory goes through
// it), fast division by run-time sizes, and the launch shape (BLOCK threads, ITEMS work items
// each).
// Supplied by Python (cudadml/backends/kernels.py): nothing; this header is inlined
// textually into the .cu files that include it, so cached modules see its edits.
// Cannot be compiled standalone.
#pragma once

typedef unsigned long long u64;

// Threads per block and work items per thread. Every launch uses exactly BLOCK threads;
// the host sizes grids with the same numbers.
#define CUDADML_BLOCK 256
#define CUDADML_ITEMS 4

// Kernels move bits, never values: an element is an unsigned word of its width.
template <int E> struct Word;
template <> struct Word<1> { typedef unsigned char type; };
template <> struct Word<2> { typedef unsigned short type; };
template <> struct Word<4> { typedef unsigned int type; };
template <> struct Word<8> { typedef unsigned long long type; };

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

// q = n / d for 0 <= n, d < 2^31, with the host's magic m and shift s:
// s = ceil(log2 d), m = floor(2^32 (2^s - d) / d) + 1, so q = (umulhi(n, m) + n) >> s.
// umulhi(n, m) <= n < 2^31 keeps the sum inside 32 bits. 64-bit indexing divides plainly.
__device__ __forceinline__ int div_fast(int n, int d, unsigned m, unsigned s) {
    return (int)((__umulhi((unsigned)n, m) + (unsigned)n) >> s);
}
__device__ __forceinline__ long long div_fast(long long n, long long d, unsigned, unsigned) {
    return n / d;
}

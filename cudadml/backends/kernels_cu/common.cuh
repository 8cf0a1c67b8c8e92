// common.cuh: what every cudadml kernel shares.
//
// Provides: element words of 1/2/4/8 bytes, put_lane and get_lane (elements in the four
// words of a 16-byte value), store (every store to global memory goes through it), fast
// division by run-time sizes, 16-byte loads at any address inside a byte range (load16,
// load_run) and merged from two (merge_at), a thread's 16-byte chunks of a packed output
// (store_chunks), and the launch shape (BLOCK threads per block).
// Supplied by Python (cudadml/backends/kernels.py), as -D options: CUDADML_BLOCK, and the work
// items per thread of each kernel family, CUDADML_ITEMS_<FAMILY> (used by that kernel alone).
// This header is inlined textually into the .cu files that include it, so cached modules see
// its edits.
// Cannot be compiled standalone.
#pragma once

typedef unsigned long long u64;

// Threads per block and work items per thread: every launch uses exactly CUDADML_BLOCK
// threads, and the host sizes grids with the same numbers, which it passes in.
#if !defined(CUDADML_BLOCK) || !defined(CUDADML_ITEMS_GATHER_FLAT)
#error "CUDADML_BLOCK and CUDADML_ITEMS_<FAMILY> come from cudadml/backends/kernels.py (-D options)"
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

// Bytes [s, s + 16) of the 32 bytes x:y (little-endian), for s = 4q + r/8 with r in {0, 8, 16, 24}.
__device__ __forceinline__ uint4 bytes_from(uint4 x, uint4 y, int q, unsigned r) {
    // Words q .. q+4 of x:y chosen by selects, not a branch: neighbouring rows differ in q,
    // and a branch would serialise a warp that spans them.
    const unsigned a0 = q < 2 ? (q == 0 ? x.x : x.y) : (q == 2 ? x.z : x.w);
    const unsigned a1 = q < 2 ? (q == 0 ? x.y : x.z) : (q == 2 ? x.w : y.x);
    const unsigned a2 = q < 2 ? (q == 0 ? x.z : x.w) : (q == 2 ? y.x : y.y);
    const unsigned a3 = q < 2 ? (q == 0 ? x.w : y.x) : (q == 2 ? y.y : y.z);
    const unsigned a4 = q < 2 ? (q == 0 ? y.x : y.y) : (q == 2 ? y.z : y.w);
    return make_uint4(__funnelshift_r(a0, a1, r), __funnelshift_r(a1, a2, r), __funnelshift_r(a2, a3, r),
                      __funnelshift_r(a3, a4, r));
}

// The 16 bytes from p on, through the aligned 16-byte word(s) that hold them (two loads and a
// shift where p is not aligned), when those words lie inside [lo, hi); else false.
__device__ __forceinline__ bool load_aligned(const unsigned char* p, const unsigned char* lo, const unsigned char* hi,
                                             uint4& v) {
    const int mis = (int)(reinterpret_cast<u64>(p) & 15);
    const unsigned char* w = p - mis;
    if (w < lo || w + (mis ? 32 : 16) > hi) return false;
    const uint4 x = __ldg(reinterpret_cast<const uint4*>(w));
    if (mis == 0) {
        v = x;
    } else {
        const uint4 y = __ldg(reinterpret_cast<const uint4*>(w + 16));
        v = bytes_from(x, y, mis >> 2, (unsigned)(mis & 3) * 8u);
    }
    return true;
}

// 16 bytes at p, which lie inside the row [lo, hi). Reads only bytes of the row.
__device__ __forceinline__ uint4 load16(const unsigned char* p, const unsigned char* lo, const unsigned char* hi) {
    uint4 v;
    if (load_aligned(p, lo, hi, v)) return v;
    // Near the row's ends: the widest loads p's alignment allows.
    const int mis = (int)(reinterpret_cast<u64>(p) & 15);
    unsigned* out = reinterpret_cast<unsigned*>(&v);
    if ((mis & 3) == 0) {
        const unsigned* q = reinterpret_cast<const unsigned*>(p);
#pragma unroll
        for (int k = 0; k < 4; ++k) out[k] = __ldg(q + k);
    } else if ((mis & 1) == 0) {
        const unsigned short* q = reinterpret_cast<const unsigned short*>(p);
#pragma unroll
        for (int k = 0; k < 4; ++k) out[k] = (unsigned)__ldg(q + 2 * k) | ((unsigned)__ldg(q + 2 * k + 1) << 16);
    } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            out[k] = (unsigned)__ldg(p + 4 * k) | ((unsigned)__ldg(p + 4 * k + 1) << 8) |
                     ((unsigned)__ldg(p + 4 * k + 2) << 16) | ((unsigned)__ldg(p + 4 * k + 3) << 24);
        }
    }
    return v;
}

// The 16 bytes from p on, read as the two aligned 16-byte words around them when both lie in
// [lo, hi); else only bytes [from, to) of them, element by element (the rest are 0).
template <int E>
__device__ __forceinline__ uint4 load_run(const unsigned char* p, const unsigned char* lo, const unsigned char* hi,
                                          int from, int to) {
    typedef typename Word<E>::type W;
    uint4 v;
    if (load_aligned(p, lo, hi, v)) return v;
    unsigned words[4] = {0, 0, 0, 0};
#pragma unroll
    for (int q = 0; q < 16; q += E) {
        if (q >= from && q < to) put_lane(words, q, __ldg(reinterpret_cast<const W*>(p + q)));
    }
    return make_uint4(words[0], words[1], words[2], words[3]);
}

// Bytes [0, n) of a and [n, 16) of b.
__device__ __forceinline__ uint4 merge_at(uint4 a, uint4 b, int n) {
    unsigned m[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int c = n - 4 * k;
        m[k] = c >= 4 ? 0xffffffffu : (c <= 0 ? 0u : 0xffffffffu >> (32 - 8 * c));
    }
    return make_uint4((a.x & m[0]) | (b.x & ~m[0]), (a.y & m[1]) | (b.y & ~m[1]), (a.z & m[2]) | (b.z & ~m[2]),
                      (a.w & m[3]) | (b.w & ~m[3]));
}

// The work items base + k * BLOCK (k < ITEMS) of a thread, below count, each a chunk of a packed
// output of `bytes` bytes that starts head bytes past the 16-byte-aligned first_chunk: chunk c
// is the c-th 16-byte-aligned block of addresses from first_chunk on, cut to the output (the
// host gives ceil(bytes / 16) + 1 chunks, enough for any alignment, so the last may be empty).
// For each chunk that is not empty, output bytes [lo, hi), chunk(lo, hi, value, full) either
// puts its 16 bytes in value and sets full, or stores them itself. The full chunks are stored
// after every item's loads, so ITEMS chunks are in flight at once. chunk is a lambda marked
// __attribute__((always_inline)), so that it is inlined as a __forceinline__ function is; count
// and bytes are read where they lie (the kernel's parameters).
template <int ITEMS, typename I, typename Chunk>
__device__ __forceinline__ void store_chunks(unsigned char* first_chunk, I head, I base, const I& count, const I& bytes,
                                             Chunk&& chunk) {
    uint4 value[ITEMS];
    bool full[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        full[k] = false;
        const I idx = base + (I)k * CUDADML_BLOCK;
        if (idx >= count) continue;
        const I start = idx * 16 - head;  // output byte offset of the chunk's first byte
        const I lo = start < 0 ? 0 : start;
        const I hi = start + 16 > bytes ? bytes : start + 16;
        if (lo >= hi) continue;
        chunk(lo, hi, value[k], full[k]);
    }
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        if (full[k]) store(reinterpret_cast<uint4*>(first_chunk + 16 * (base + (I)k * CUDADML_BLOCK)), value[k]);
    }
}

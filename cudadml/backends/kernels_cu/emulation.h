// emulation.h: the CUDA C that the kernels use, mapped onto the host, so the unmodified
// kernels_cu/ sources compile with the system C++ compiler and run thread by thread.
//
// Provides: threadIdx, blockIdx, blockDim, gridDim; __global__, __device__, __forceinline__,
// __launch_bounds__, __grid_constant__; uint4 and make_uint4; __ldg, __umulhi, __umul64hi,
// __funnelshift_r, __byte_perm, __uint_as_float, __float_as_uint and __double_as_longlong with
// CUDA's definitions;
// store (common.cuh's, checked: CUDADML_EMULATED tells common.cuh not to define its plain
// one); cudadml_launch, the launch loop; and a record of the first fault (an __ldg that is
// misaligned or outside the inputs, a store that is misaligned or outside the outputs), which
// a GPU would report as an illegal or misaligned address.
// Deliberately absent: __syncthreads, __shared__, warp intrinsics and atomics. Threads run
// one after another to completion, which is a valid schedule only for kernels without them,
// so a kernel that starts using one fails to build here rather than run unfaithfully.
// Supplied by Python (cudadml/backends/emulate.py): per kernel specialisation, an extern "C"
// wrapper that calls cudadml_launch with the parameter struct's bytes (the very bytes a GPU
// launch gets), the grid, BLOCK, the byte ranges of the inputs, which __ldg may read, and
// those of the outputs' elements, which store may write.
// Loaded by cudadml.backends.emulate: prepended to a kernel source (kernel_source(), includes
// inlined) and compiled with g++ -O0 -fno-strict-aliasing (the kernels type-pun through
// unsigned char, uint4 and element words) into a shared library loaded with ctypes.
#pragma once

#include <cstring>

#define CUDADML_EMULATED 1

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
};

// One translation unit per library, and the launcher holds a lock: plain globals suffice.
static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __grid_constant__

// CUDA's uint4 is 16-byte aligned; the kernels store it with one 16-byte store.
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

// The first fault of a launch: kind 1 = misaligned __ldg, 2 = __ldg outside every read range,
// 3 = misaligned store, 4 = store outside every write range.
struct CudadmlFault {
    int kind;
    unsigned block, thread;
    unsigned long long address;
};
static CudadmlFault cudadml_fault;
static const unsigned long long* cudadml_reads;  // [low, high) byte pairs the kernel may read
static int cudadml_num_reads;
static const unsigned long long* cudadml_writes;  // [low, high) byte pairs the kernel may write
static int cudadml_num_writes;
static unsigned long long cudadml_stored;  // bytes written by the launch's stores

// 0 when the T at a is aligned to sizeof(T) (which CUDA requires of every access) and lies
// inside one of the ranges; else the fault kind, which is also recorded if it is the first.
template <typename T>
inline int cudadml_check(unsigned long long a, const unsigned long long* ranges, int num_ranges, int misaligned) {
    int kind = a % sizeof(T) ? misaligned : misaligned + 1;
    for (int r = 0; kind == misaligned + 1 && r < num_ranges; ++r) {
        if (a >= ranges[2 * r] && a + sizeof(T) <= ranges[2 * r + 1]) kind = 0;
    }
    if (kind != 0 && cudadml_fault.kind == 0) cudadml_fault = CudadmlFault{kind, blockIdx.x, threadIdx.x, a};
    return kind;
}

// A faulting load returns zeros (a GPU would abort the launch); the launcher then raises.
template <typename T>
inline T __ldg(const T* p) {
    if (cudadml_check<T>(reinterpret_cast<unsigned long long>(p), cudadml_reads, cudadml_num_reads, 1) == 0) return *p;
    T zero;
    std::memset(&zero, 0, sizeof(T));
    return zero;
}

// A faulting store writes nothing (a GPU would abort the launch); the launcher then raises.
template <typename T>
inline void store(T* p, T v) {
    if (cudadml_check<T>(reinterpret_cast<unsigned long long>(p), cudadml_writes, cudadml_num_writes, 3) == 0) {
        *p = v;
        cudadml_stored += sizeof(T);
    }
}

// The high 32 bits of the 64-bit product.
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }

// The high 64 bits of the 128-bit product.
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}

// The low 32 bits of hi:lo shifted right by shift & 31.
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (shift & 31));
}

// Byte k of the result is byte (selector >> 4k) & 7 of lo:hi (selectors without the sign mode).
inline unsigned __byte_perm(unsigned lo, unsigned hi, unsigned selector) {
    const unsigned long long bytes = ((unsigned long long)hi << 32) | lo;
    unsigned result = 0;
    for (int k = 0; k < 4; ++k) result |= (unsigned)((bytes >> (8 * ((selector >> (4 * k)) & 7))) & 0xff) << (8 * k);
    return result;
}

inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline unsigned __float_as_uint(float f) {
    unsigned u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline long long __double_as_longlong(double f) {
    long long u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// The parameter type of a kernel, as the launcher receives it: void(P) -> P.
template <typename F>
struct CudadmlParam;
template <typename P>
struct CudadmlParam<void(P)> {
    typedef P type;
};

// Launch kernel(params) on grid x block threads: blockIdx.x over [0, grid), and within each
// block threadIdx.x over [0, block); reads and writes hold num_reads and num_writes [low, high)
// byte pairs. Returns 0; -1 when size is not sizeof(P) (the host and NumPy disagree on the
// struct's layout); -2 for a configuration a GPU refuses; or the kind of the first fault,
// described in *fault. *stored receives the bytes that the launch's stores wrote.
template <typename P, typename Kernel>
int cudadml_launch(Kernel kernel, const void* params, unsigned long long size, unsigned long long grid,
                   unsigned block, const unsigned long long* reads, int num_reads,
                   const unsigned long long* writes, int num_writes, CudadmlFault* fault,
                   unsigned long long* stored) {
    if (size != sizeof(P)) return -1;
    if (grid < 1 || grid > 0x7fffffffull || block < 1 || block > 1024) return -2;
    P p;
    std::memcpy(&p, params, sizeof(P));
    cudadml_reads = reads;
    cudadml_num_reads = num_reads;
    cudadml_writes = writes;
    cudadml_num_writes = num_writes;
    cudadml_stored = 0;
    cudadml_fault = CudadmlFault{0, 0, 0, 0};
    gridDim = dim3{(unsigned)grid, 1, 1};
    blockDim = dim3{block, 1, 1};
    blockIdx = threadIdx = uint3{0, 0, 0};
    for (unsigned long long b = 0; b < grid; ++b) {
        blockIdx.x = (unsigned)b;
        for (unsigned t = 0; t < block; ++t) {
            threadIdx.x = t;
            kernel(p);
        }
    }
    *fault = cudadml_fault;
    *stored = cudadml_stored;
    return cudadml_fault.kind;
}

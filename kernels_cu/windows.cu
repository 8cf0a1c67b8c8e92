// windows.cu: many windows of one array in one launch, and their gradient.
//
// Entry points (templates, instantiated by name from Python):
//   gather_windows<E, I, R>       window n of N copies the box `sizes` from the input, starting
//                                 at element table[n].offset with signed element strides
//                                 table[n].strides, to output element n * dst_window, rows
//                                 contiguous in the output; one 16-byte-aligned output chunk
//                                 of a row per work item, loaded as 16 bytes where the window
//                                 reads its row forwards or backwards (stride 1 or -1).
//   window_grad<K, I, R, S>       every element x of the input gradient (the box `sizes`)
//                                 receives the sum, in window order, of the output gradient's
//                                 elements whose window read x: no zero-fill pass, no atomics,
//                                 the same bits on every run. S = 1 (per sample): dimension 0
//                                 of the box is the window index and only that window is
//                                 asked; S = 0: every window is asked.
// E: element bytes (1, 2, 4, 8); I: int, or long long when a window's or the box's byte span
// passes 2^31; R: rank of the box (1..8); K: how gradients add (GradKind below).
// Supplied by Python (cudadml/backends/kernels.py): the parameter struct by value, built from a
// NumPy structured dtype with the same layout, and the window table (a device array with a
// row per window, built per call: windows change every call, the compiled launch does not,
// so they are data, not parameters); grids of N * blocks_per_window blocks (gather_windows), or
// ceil(count / (BLOCK * ITEMS)) blocks (window_grad).
// Loaded by cudadml.backends.kernels through cupy.RawModule(name_expressions=...).
// Cannot be compiled standalone: includes common.cuh, which the loader inlines.
#include "common.cuh"

template <typename I, int R>
struct WindowParams {
    u64 src, dst;            // input element 0; output element 0
    u64 table;               // N rows of R + 1 long longs: a window's first element, its strides
    long long dst_window;    // output elements from one window's first element to the next's
    I count;                 // work items per window: output row chunks
    I row;                   // elements per row (the box's innermost size)
    Divider<I> sizes[R];     // the box; innermost: chunks per row
    I dst_strides[R];        // in elements; the innermost is 1
    Divider<int> blocks;     // blocks per window
};

// The element order of the 16 bytes v reversed: element k becomes element 16 / E - 1 - k.
template <int E>
__device__ __forceinline__ uint4 reversed(uint4 v) {
    if (E == 8) return make_uint4(v.z, v.w, v.x, v.y);
    if (E == 4) return make_uint4(v.w, v.z, v.y, v.x);
    // Bytes (E == 1) or halves (E == 2) reversed within each word, words reversed.
    const unsigned order = E == 1 ? 0x0123u : 0x1032u;
    return make_uint4(__byte_perm(v.w, 0, order), __byte_perm(v.z, 0, order), __byte_perm(v.y, 0, order),
                      __byte_perm(v.x, 0, order));
}

template <int E, typename I, int R>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_windows(const __grid_constant__ WindowParams<I, R> p) {
    typedef typename Word<E>::type W;
    int local;
    const int n = p.blocks.divmod((int)blockIdx.x, local);
    // The window's row of the table: every thread of the block reads the same words (cached).
    const long long* row = reinterpret_cast<const long long*>(p.table) + (long long)n * (R + 1);
    const unsigned char* src = reinterpret_cast<const unsigned char*>(p.src) + __ldg(row) * E;
    unsigned char* dst = reinterpret_cast<unsigned char*>(p.dst) + n * p.dst_window * E;
    I strides[R];  // read once: every item of the thread uses them
#pragma unroll
    for (int dim = 0; dim < R; ++dim) strides[dim] = (I)__ldg(row + 1 + dim);
    const I inner = strides[R - 1];
    const I row_bytes = p.row * (I)E;
    const I base = (I)local * (CUDADML_BLOCK * CUDADML_ITEMS) + (I)threadIdx.x;
    uint4 value[CUDADML_ITEMS];
    uint4* target[CUDADML_ITEMS];
    // Full chunks: every load before any store, so ITEMS reads are in flight at once.
#pragma unroll
    for (int k = 0; k < CUDADML_ITEMS; ++k) {
        target[k] = nullptr;
        const I idx = base + (I)k * CUDADML_BLOCK;
        if (idx >= p.count) continue;
        I s = 0, d = 0, chunk = 0;
        for_each_coordinate<R>(p.sizes, idx, [&](int dim, I c) {
            if (dim == R - 1) {
                chunk = c;
                return;
            }
            s += c * strides[dim];
            d += c * p.dst_strides[dim];
        });
        unsigned char* dst_row = dst + d * (I)E;
        // Chunk c is the c-th 16-byte-aligned block of output addresses from the row's first
        // one, cut to the row; the host gives each row ceil(bytes / 16) + 1 chunks.
        const u64 row_start = reinterpret_cast<u64>(dst_row);
        const u64 row_end = row_start + (u64)row_bytes;
        u64 lo = (row_start & ~(u64)15) + 16 * (u64)chunk;
        u64 hi = lo + 16;
        if (lo < row_start) lo = row_start;
        if (hi > row_end) hi = row_end;
        if (lo >= hi) continue;
        const I first = (I)((lo - row_start) / E);  // the chunk's first element in the row
        if (hi - lo == 16 && (inner == 1 || inner == -1)) {
            // The row's elements lie in [low, low + row_bytes): loads stay inside them.
            const unsigned char* low = src + (inner == 1 ? s : s - (p.row - 1)) * (I)E;
            if (inner == 1) {
                value[k] = load16(src + (s + first) * (I)E, low, low + row_bytes);
            } else {  // elements first .. first + 16/E - 1 are read from s - first down
                const unsigned char* from = src + (s - first - (16 / E - 1)) * (I)E;
                value[k] = reversed<E>(load16(from, low, low + row_bytes));
            }
            target[k] = reinterpret_cast<uint4*>(lo);
        } else {
            // A partial chunk at a row end, or a window that steps through its rows: by element.
            for (u64 a = lo; a < hi; a += E) {
                const I c = first + (I)((a - lo) / E);
                // The load before the store's address, as an assignment orders them.
                const W v = __ldg(reinterpret_cast<const W*>(src + (s + c * inner) * (I)E));
                store(reinterpret_cast<W*>(a), v);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < CUDADML_ITEMS; ++k) {
        if (target[k] != nullptr) store(target[k], value[k]);
    }
}

// ---- the gradient ----------------------------------------------------------------------------

// How window_grad adds: K = E (1, 2, 4, 8) moves E-byte words (per sample: at most one window
// reads an element); K = 10 + E adds E-byte integers, wrapping; K = 20 + E adds IEEE floats of
// E bytes (2: half, summed as float and written as float; the caller rounds once).
template <int K> struct GradKind {
    typedef typename Word<K % 10>::type In;
    typedef In Sum;
    typedef In Out;
    static __device__ __forceinline__ Sum load(In v) { return v; }
    static __device__ __forceinline__ Sum add(Sum a, Sum b) { return (Sum)(a + b); }
};

// An IEEE half's bits as the float of the same value (exact; NaN payloads kept).
__device__ __forceinline__ float half_to_float(unsigned short h) {
    const unsigned sign = (unsigned)(h & 0x8000u) << 16;
    const unsigned exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in a float
        return __uint_as_float(__float_as_uint((float)mantissa * 5.9604644775390625e-8f) | sign);
    }
    if (exponent == 31) return __uint_as_float(sign | 0x7f800000u | (mantissa << 13));
    return __uint_as_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

template <> struct GradKind<22> {
    typedef unsigned short In;
    typedef float Sum;
    typedef float Out;
    static __device__ __forceinline__ float load(unsigned short v) { return half_to_float(v); }
    static __device__ __forceinline__ float add(float a, float b) { return a + b; }
};
template <> struct GradKind<24> {
    typedef float In, Sum, Out;
    static __device__ __forceinline__ float load(float v) { return v; }
    static __device__ __forceinline__ float add(float a, float b) { return a + b; }
};
template <> struct GradKind<28> {
    typedef double In, Sum, Out;
    static __device__ __forceinline__ double load(double v) { return v; }
    static __device__ __forceinline__ double add(double a, double b) { return a + b; }
};

// One window's reach along one dimension: coordinate x is read iff x = start + step * c with
// 0 <= c < count (step > 0: the host turned negative strides into negative dy_strides), and
// then receives the output gradient's element dy_offset + sum c * dy_stride. The step comes
// with its fast_division magic for both index widths (the table is built before the launch's
// index type is known to it).
struct GradDim {
    long long start, count, dy_stride, step;
    u64 magic64;
    unsigned magic32, shift;
};
template <int D>
struct GradWindow {
    long long dy_offset;
    GradDim dims[D];
};

// The step of dimension dim as a Divider of I.
template <typename I>
__device__ __forceinline__ Divider<I> step_of(const GradDim& dim);
template <>
__device__ __forceinline__ Divider<int> step_of<int>(const GradDim& dim) {
    return Divider<int>{(int)__ldg(&dim.step), __ldg(&dim.magic32), __ldg(&dim.shift)};
}
template <>
__device__ __forceinline__ Divider<long long> step_of<long long>(const GradDim& dim) {
    return Divider<long long>{__ldg(&dim.step), __ldg(&dim.magic64), __ldg(&dim.shift)};
}

template <typename I, int R>
struct WindowGradParams {
    u64 src, dst;          // output gradient element 0; input gradient element 0
    u64 table;             // N GradWindow rows of R - S dimensions
    I count;               // input gradient elements: work items
    Divider<I> sizes[R];   // the input gradient's box
    I dst_strides[R];      // in elements
    int windows;           // N
};

template <int K, typename I, int R, int S>
__global__ void __launch_bounds__(CUDADML_BLOCK)
window_grad(const __grid_constant__ WindowGradParams<I, R> p) {
    typedef GradKind<K> Kind;
    typedef typename Kind::In In;
    constexpr int D = R - S;  // dimensions of a window
    const In* src = reinterpret_cast<const In*>(p.src);
    typename Kind::Out* dst = reinterpret_cast<typename Kind::Out*>(p.dst);
    const GradWindow<D>* table = reinterpret_cast<const GradWindow<D>*>(p.table);
    const I base = (I)blockIdx.x * (CUDADML_BLOCK * CUDADML_ITEMS) + (I)threadIdx.x;
    // Items one after another: each walks the windows, and two at once would spill registers.
#pragma unroll 1
    for (int k = 0; k < CUDADML_ITEMS; ++k) {
        const I idx = base + (I)k * CUDADML_BLOCK;
        if (idx >= p.count) break;
        I x[R];  // indexed only by constants after unrolling: registers
        I o = 0;
        for_each_coordinate<R>(p.sizes, idx, [&](int d, I c) {
            x[d] = c;
            o += c * p.dst_strides[d];
        });
        typename Kind::Sum sum = 0;
        bool read = false;
        const int first = S ? (int)x[0] : 0, last = S ? first + 1 : p.windows;
#pragma unroll 1
        for (int n = first; n < last; ++n) {
            const GradWindow<D>& w = table[n];
            long long s = __ldg(&w.dy_offset);
            bool inside = true;
#pragma unroll
            for (int d = 0; d < D; ++d) {
                const GradDim& dim = w.dims[d];
                const I t = x[d + S] - (I)__ldg(&dim.start);
                I c = t, r = 0;
                if (t > 0 && __ldg(&dim.step) != 1) c = step_of<I>(dim).divmod(t, r);
                inside = inside && t >= 0 && r == 0 && c < (I)__ldg(&dim.count);
                s += (long long)c * __ldg(&dim.dy_stride);
            }
            if (inside) {
                const typename Kind::Sum v = Kind::load(__ldg(src + s));
                // The first term is taken as it is, so one window's gradient keeps its bits.
                sum = read ? Kind::add(sum, v) : v;
                read = true;
            }
        }
        store(dst + o, sum);
    }
}

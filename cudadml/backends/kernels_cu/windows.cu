// windows.cu: many windows of one array in one launch, and their gradient.
//
// Entry points (templates, instantiated by name from Python):
//   gather_windows<E, I, R>       window n of N copies the box `sizes` from the input, starting
//                                 at element table[n].offset with signed element strides
//                                 table[n].strides, to its packed output at element
//                                 n * dst_window; one 16-byte-aligned chunk of a window's output
//                                 per work item (as strided_copy.cu's gather_flat), loaded 16
//                                 bytes at a time where the window reads its rows forwards or
//                                 backwards (stride 1 or -1).
//   window_grad<K, V, I, R, S>    every element x of the input gradient (the box `sizes`)
//                                 receives the sum, in window order, of the output gradient's
//                                 elements whose window read x: no zero-fill pass, no atomics,
//                                 the same bits on every run. S = 1 (per sample): dimension 0
//                                 of the box is the window index and only that window is
//                                 asked; S = 0: every window is asked.
// E: element bytes (1, 2, 4, 8); I: int, or long long when a window's or the box's byte span
// passes 2^31; R: rank of the box (1..8); K: how gradients add (GradKind below); V: 1, or
// min(4, 16 / sizeof(output element)) where the input gradient's innermost stride is 1 (a work
// item's V elements then leave in one store; more lanes would cost more registers than the
// wider store saves).
// Supplied by Python (cudadml/backends/kernels.py): the parameter struct by value, built from a
// NumPy structured dtype with the same layout, and the window table (a device array with a
// row per window, built per call: windows change every call, the compiled launch does not,
// so they are data, not parameters); grids of N * blocks_per_window blocks (gather_windows), or
// ceil(count / (BLOCK * ITEMS)) blocks (window_grad).
// Loaded by cudadml.backends.kernels through cupy.RawModule(name_expressions=...).
// Cannot be compiled standalone: includes common.cuh, which the loader inlines.
// Its structs that the host fills mirror NumPy dtypes (kernels.parameter_structs): change both;
// tests/test_structs.py compares them field by field, with g++ and with NVRTC.
#include "common.cuh"

template <typename I, int R>
struct WindowParams {
    u64 src, dst;            // input element 0; output element 0
    u64 table;               // N rows of R + 1 long longs: a window's first element, its strides
    long long dst_window;    // output elements from one window's first element to the next's
    I count;                 // work items per window: 16-byte chunks of its output (packed)
    I bytes;                 // output bytes of a window
    I src_low, src_high;     // the input's elements lie in [src + src_low, src + src_high):
                             // aligned loads stay inside them
    Divider<I> sizes[R];     // the box; the innermost in bytes
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

// load_run for a row read backwards: lane q (byte q of the result) holds the element at p - q,
// from the aligned words around [p - 16 + E, p + E) when they lie in [lo, hi), else only lanes
// [from, to), element by element (the rest are 0).
template <int E>
__device__ __forceinline__ uint4 load_reversed(const unsigned char* p, const unsigned char* lo,
                                               const unsigned char* hi, int from, int to) {
    typedef typename Word<E>::type W;
    uint4 v;
    if (load_aligned(p - (16 - E), lo, hi, v)) return reversed<E>(v);
    unsigned words[4] = {0, 0, 0, 0};
#pragma unroll
    for (int q = 0; q < 16; q += E) {
        if (q >= from && q < to) put_lane(words, q, __ldg(reinterpret_cast<const W*>(p - q)));
    }
    return make_uint4(words[0], words[1], words[2], words[3]);
}

// The first element of output row r (over sizes[0 .. R-2]) as an element offset from the
// window's first, and that of row r + 1 in next (as strided_copy.cu's row_sources).
template <typename I, int R>
__device__ __forceinline__ I window_rows(const Divider<I>* sizes, const I* strides, I r, I& next) {
    I s = 0;
    next = 0;
    bool carry = true;
    for_each_coordinate<R - 1>(sizes, r, [&](int d, I c) {
        s += c * strides[d];
        I c_next = carry ? c + 1 : c;
        carry = carry && c_next == sizes[d].d;
        next += (carry ? 0 : c_next) * strides[d];
    });
    return s;
}

template <int E, typename I, int R>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_windows(const __grid_constant__ WindowParams<I, R> p) {
    typedef typename Word<E>::type W;
    int local;
    const int n = p.blocks.divmod((int)blockIdx.x, local);
    // The window's row of the table: every thread of the block reads the same words (cached).
    const long long* row = reinterpret_cast<const long long*>(p.table) + (long long)n * (R + 1);
    const unsigned char* src = reinterpret_cast<const unsigned char*>(p.src);
    const unsigned char* lo_bound = src + p.src_low;
    const unsigned char* hi_bound = src + p.src_high;
    src += __ldg(row) * E;
    I strides[R];  // read once: every item of the thread uses them
#pragma unroll
    for (int d = 0; d < R; ++d) strides[d] = (I)__ldg(row + 1 + d);
    const I inner = strides[R - 1];
    const Divider<I>& row_bytes = p.sizes[R - 1];
    // Rows of 16 bytes or more read forwards or backwards: each full chunk takes its bytes from
    // at most two rows, loaded 16 at a time. Others go element by element.
    const bool runs = row_bytes.d >= 16 && (inner == 1 || inner == -1);
    // The window's output is packed, its chunks as store_chunks cuts them (the host gives
    // ceil(bytes / 16) + 1 per window).
    const u64 dst = p.dst + (u64)(n * p.dst_window * E);
    const I head = (I)(dst & 15);
    unsigned char* first_chunk = reinterpret_cast<unsigned char*>(dst - (u64)head);
    constexpr int ITEMS = CUDADML_ITEMS_GATHER_WINDOWS;
    const I base = (I)local * (CUDADML_BLOCK * ITEMS) + (I)threadIdx.x;
    const auto chunk = [&](I lo, I hi, uint4& value, bool& full) __attribute__((always_inline)) {
        if (runs && hi - lo == 16) {
            // Bytes [0, m) from row r, the rest from row r + 1.
            I w;
            const I r = row_bytes.divmod(lo, w);
            const int m = row_bytes.d - w < 16 ? (int)(row_bytes.d - w) : 16;
            I next;
            const I s = window_rows<I, R>(p.sizes, strides, r, next);
            if (inner == 1) {
                value = load_run<E>(src + s * (I)E + w, lo_bound, hi_bound, 0, m);
                if (m < 16) {  // where byte 0 would be if row r + 1 began m bytes earlier
                    value = merge_at(value, load_run<E>(src + next * (I)E - m, lo_bound, hi_bound, m, 16), m);
                }
            } else {  // output byte w of row r is read at s - w / E elements
                value = load_reversed<E>(src + (s * (I)E - w), lo_bound, hi_bound, 0, m);
                if (m < 16) {
                    const unsigned char* q = src + (next * (I)E + m);
                    value = merge_at(value, load_reversed<E>(q, lo_bound, hi_bound, m, 16), m);
                }
            }
            full = true;
        } else {
            // A partial chunk at an end of the window's output, or short or stepped rows.
            for (I a = lo; a < hi; a += E) {
                I w, next;
                const I r = row_bytes.divmod(a, w);
                const I s = window_rows<I, R>(p.sizes, strides, r, next) + w / E * inner;
                // The load before the store's address, as an assignment orders them.
                const W v = __ldg(reinterpret_cast<const W*>(src + s * (I)E));
                store(reinterpret_cast<W*>(first_chunk + head + a), v);
            }
        }
    };
    store_chunks<ITEMS>(first_chunk, head, base, p.count, p.bytes, chunk);
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
    I count;               // work items
    I inner;               // input gradient elements along the innermost axis
    Divider<I> sizes[R];   // the box of work items (the innermost counts groups of V elements)
    I dst_strides[R];      // in elements
    int windows;           // N
};

// The bits of a sum, as put_lane places words.
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
__device__ __forceinline__ u64 bits_of(double v) { return (u64)__double_as_longlong(v); }
template <typename T>
__device__ __forceinline__ T bits_of(T v) { return v; }

template <int K, int V, typename I, int R, int S>
__global__ void __launch_bounds__(CUDADML_BLOCK)
window_grad(const __grid_constant__ WindowGradParams<I, R> p) {
    typedef GradKind<K> Kind;
    typedef typename Kind::In In;
    typedef typename Kind::Sum Sum;
    typedef typename Kind::Out Out;
    constexpr int D = R - S;  // dimensions of a window; the box's innermost is a window's innermost
    const In* src = reinterpret_cast<const In*>(p.src);
    Out* dst = reinterpret_cast<Out*>(p.dst);
    const GradWindow<D>* table = reinterpret_cast<const GradWindow<D>*>(p.table);
    constexpr int ITEMS = S ? CUDADML_ITEMS_WINDOW_GRAD_PER_SAMPLE : CUDADML_ITEMS_WINDOW_GRAD;
    const I base = (I)blockIdx.x * (CUDADML_BLOCK * ITEMS) + (I)threadIdx.x;
    // Items one after another: each walks the windows, and two at once would spill registers.
#pragma unroll 1
    for (int k = 0; k < ITEMS; ++k) {
        const I idx = base + (I)k * CUDADML_BLOCK;
        if (idx >= p.count) break;
        // A work item is V consecutive elements along the innermost axis (V > 1 only where
        // the input gradient's innermost stride is 1: they leave in one store).
        I x[R];  // indexed only by constants after unrolling: registers
        I o = 0;
        for_each_coordinate<R>(p.sizes, idx, [&](int d, I c) {
            x[d] = d == R - 1 ? c * V : c;
            o += x[d] * p.dst_strides[d];
        });
        Sum sum[V];
        unsigned read = 0;  // bit v: element v has a term
#pragma unroll
        for (int v = 0; v < V; ++v) sum[v] = 0;
        const int first = S ? (int)x[0] : 0, last = S ? first + 1 : p.windows;
#pragma unroll 1
        for (int n = first; n < last; ++n) {
            const GradWindow<D>& w = table[n];
            long long s = __ldg(&w.dy_offset);
            bool inside = true;
#pragma unroll
            for (int d = 0; d < D - 1; ++d) {  // the outer dimensions: one test for the item
                const GradDim& dim = w.dims[d];
                const I t = x[d + S] - (I)__ldg(&dim.start);
                I c = t, r = 0;
                if (t > 0 && __ldg(&dim.step) != 1) c = step_of<I>(dim).divmod(t, r);
                inside = inside && t >= 0 && r == 0 && c < (I)__ldg(&dim.count);
                s += (long long)c * __ldg(&dim.dy_stride);
            }
            if (!inside) continue;
            const GradDim& dim = w.dims[D - 1];  // the innermost: a test per element
            const I start = (I)__ldg(&dim.start), count = (I)__ldg(&dim.count);
            const long long step = __ldg(&dim.step), dy_stride = __ldg(&dim.dy_stride);
#pragma unroll
            for (int v = 0; v < V; ++v) {
                const I t = x[R - 1] + v - start;
                I c = t, r = 0;
                if (t > 0 && step != 1) c = step_of<I>(dim).divmod(t, r);
                if (t >= 0 && r == 0 && c < count) {
                    const Sum value = Kind::load(__ldg(src + s + (long long)c * dy_stride));
                    // The first term is taken as it is, so one window's gradient keeps its bits.
                    sum[v] = read >> v & 1 ? Kind::add(sum[v], value) : value;
                    read |= 1u << v;
                }
            }
        }
        Out* out = dst + o;
        unsigned words[4] = {0, 0, 0, 0};
#pragma unroll
        for (int v = 0; v < V; ++v) put_lane(words, v * (int)sizeof(Out), bits_of((Out)sum[v]));
        constexpr int BYTES = V * (int)sizeof(Out);  // 4, 8 or 16 where V > 1
        if (V > 1 && x[R - 1] + V <= p.inner && (reinterpret_cast<u64>(out) & (BYTES - 1)) == 0) {
            if (BYTES == 16) {
                store(reinterpret_cast<uint4*>(out), make_uint4(words[0], words[1], words[2], words[3]));
            } else if (BYTES == 8) {
                store(reinterpret_cast<u64*>(out), (u64)words[0] | (u64)words[1] << 32);
            } else {
                store(reinterpret_cast<unsigned*>(out), words[0]);
            }
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                if (x[R - 1] + v < p.inner) store(out + v, sum[v]);
            }
        }
    }
}

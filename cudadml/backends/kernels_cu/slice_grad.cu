// slice_grad.cu: SLICE_GRAD in one pass, formulated as a gather.
//
// Entry point (template, instantiated by name from Python):
//   slice_grad<E, V, I, R>  each work item owns V consecutive output-gradient elements along
//                           the innermost dimension and writes each exactly once: the input
//                           gradient where the forward slice read that element, else the
//                           fill (0 for SLICE_GRAD; a constant for cudadml.numpy.pad).
//                           No fill pass, no atomics.
// E: element bytes (1, 2, 4, 8); V: 1, or 16 / E when the output's innermost stride is 1
// (a full, aligned group then leaves in one 16-byte store); I: int or long long; R: rank 1..8.
// Supplied by Python (cudadml/backends/kernels.py): GradParams by value, built from a NumPy
// structured dtype with the same layout; steps are positive (the plan turned negative window
// strides into negative input strides); a grid of ceil(count / (BLOCK * ITEMS)) blocks.
// Loaded by cudadml.backends.kernels through cupy.RawModule(name_expressions=...).
// Cannot be compiled standalone: includes common.cuh, which the loader inlines.
// Its structs that the host fills mirror NumPy dtypes (kernels.parameter_structs): change both;
// tests/test_structs.py compares them field by field, with g++ and with NVRTC.
#include "common.cuh"

template <typename I, int R>
struct GradParams {
    u64 src, dst;          // input gradient's first window element; output gradient's element 0
    unsigned fill[4];      // what elements the slice did not read receive: 16 bytes of a pattern
                           // that repeats the element (all 0 for SLICE_GRAD), bytes (x * E) % 16
                           // for innermost coordinate x
    I count;               // work items
    I inner;               // output elements along the innermost dimension
    Divider<I> sizes[R];   // the work box (the innermost counts groups of V elements)
    I dst_strides[R];      // signed, in elements
    I starts[R];           // output coordinate x is read by the slice iff x = start + step * c,
    Divider<I> steps[R];   // 0 <= c < count, in every dimension
    I counts[R];
    I src_strides[R];      // signed, in elements, for c
};

// The fill of the element at innermost coordinate x: bytes [(x * E) % 16, + E) of the pattern.
// E divides 16 and a row starts on an element, so these are the element's bytes, or, in a plan
// narrowed to words (an unaligned binding), the word's bytes of it. Selected, not indexed, so
// the pattern is read from the parameters as it is (no stack frame).
template <typename W, int E, typename I>
__device__ __forceinline__ W fill_at(const unsigned (&f)[4], I x) {
    const int at = (int)(x & 15) * E & 15;
    const unsigned low = at < 8 ? (at < 4 ? f[0] : f[1]) : (at < 12 ? f[2] : f[3]);
    if (E == 8) return (W)(low | (u64)(at < 8 ? f[1] : f[3]) << 32);
    return (W)(low >> (8 * (at % 4)));
}

// The lanes of a group that were not read (bit v of `taken` clear for lane v) receive the fill,
// into words that hold 0 there. A V > 1 group starts at a multiple of 16 bytes: its lanes are
// the pattern as it is. With a fill of 0 the words are as they were.
template <typename W, int E, int V, typename I>
__device__ __forceinline__ void fill_lanes(unsigned (&words)[4], unsigned taken, const unsigned (&f)[4], I first) {
    if (V == 1) {
        if (!taken) put_lane(words, 0, fill_at<W, E>(f, first));
        return;
    }
#pragma unroll
    for (int w = 0; w < 4; ++w) {
        unsigned kept;  // the bytes of word w that lanes read
        if (E == 1) {
            // Bits 4w .. 4w + 3 to bytes 0 .. 3 (the shifted copies of m never meet: no carries).
            kept = ((taken >> (4 * w) & 15u) * 0x00204081u & 0x01010101u) * 255u;
        } else if (E == 2) {
            const unsigned m = taken >> (2 * w) & 3u;
            kept = (m & 1u ? 0x0000ffffu : 0u) | (m & 2u ? 0xffff0000u : 0u);
        } else {
            kept = taken >> (w * 4 / E) & 1u ? ~0u : 0u;
        }
        words[w] |= f[w] & ~kept;
    }
}

// Whether coordinate x of dimension d (an outer one) was read, and if so its window index c.
template <typename I, int R>
__device__ __forceinline__ bool window_index(const GradParams<I, R>& p, int d, I x, I& c) {
    const I t = x - p.starts[d];
    if (t < 0) return false;
    I r = 0;
    c = p.steps[d].d == 1 ? t : p.steps[d].divmod(t, r);
    return r == 0 && c < p.counts[d];
}

template <int E, int V, typename I, int R>
__global__ void __launch_bounds__(CUDADML_BLOCK)
slice_grad(const __grid_constant__ GradParams<I, R> p) {
    typedef typename Word<E>::type W;
    const W* src = reinterpret_cast<const W*>(p.src);
    W* dst = reinterpret_cast<W*>(p.dst);
    constexpr int ITEMS = CUDADML_ITEMS_SLICE_GRAD;
    const I base = (I)blockIdx.x * (CUDADML_BLOCK * ITEMS) + (I)threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const I idx = base + (I)k * CUDADML_BLOCK;
        if (idx >= p.count) break;
        // Outer dimensions: where this group writes and whether its row was read at all.
        I s = 0, o = 0, group = 0;
        bool read = true;
        for_each_coordinate<R>(p.sizes, idx, [&](int d, I x) {
            if (d == R - 1) {
                group = x;  // the innermost dimension is resolved per element below
                return;
            }
            I c = 0;
            read = read && window_index(p, d, x, c);
            s += c * p.src_strides[d];
            o += x * p.dst_strides[d];
        });
        const I first = group * V;
        // Innermost: element first + v was read iff v = next + step * j (j >= 0), with window
        // index c + j. One division per group; next and the step stay small (at most V).
        const Divider<I>& step = p.steps[R - 1];
        const I t = first - p.starts[R - 1];
        I c = 0;
        int next = V;  // past the group: no element of it was read
        if (t < 0) {
            if (-t < V) next = (int)-t;
        } else {
            I r;
            c = step.divmod(t, r);
            if (r == 0) {
                next = 0;
            } else {
                ++c;
                if (step.d - r < V) next = (int)(step.d - r);
            }
        }
        const int stride = step.d < V ? (int)step.d : V;
        const W* from = src + s + c * p.src_strides[R - 1];  // what window index c reads
        // The group's V elements (V * E <= 16 bytes) as the lanes of four words.
        unsigned words[4] = {0, 0, 0, 0};
        unsigned taken = 0;  // bit v: lane v was read
#pragma unroll
        for (int v = 0; v < V; ++v) {
            if (v == next) {
                if (read && c < p.counts[R - 1] && first + v < p.inner) {
                    put_lane(words, v * E, __ldg(from));
                    taken |= 1u << v;
                }
                ++c;
                from += p.src_strides[R - 1];
                next += stride;
            }
        }
        fill_lanes<W, E, V>(words, taken, p.fill, first);
        W* out = dst + o + first * p.dst_strides[R - 1];
        if (V > 1 && first + V <= p.inner && (reinterpret_cast<u64>(out) & 15) == 0) {
            // V > 1 only where the innermost output stride is 1: the group is 16 contiguous bytes.
            store(reinterpret_cast<uint4*>(out), make_uint4(words[0], words[1], words[2], words[3]));
        } else {
#pragma unroll
            for (int v = 0; v < V; ++v) {
                if (first + v < p.inner) store(out + v * p.dst_strides[R - 1], get_lane<W>(words, v * E));
            }
        }
    }
}

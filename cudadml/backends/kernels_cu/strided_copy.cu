// strided_copy.cu: batched strided copies, out[o + sum c_i*os_i] = in[i + sum c_i*is_i].
//
// Entry points (templates, instantiated by name from Python):
//   gather_elements<E, I, R, J>  one element per work item; any signed strides.
//   gather_rows<E, I, R, J>      rows contiguous on both sides: one 16-byte-aligned output
//                                chunk of a row per work item, stored with one 16-byte store.
//   gather_flat<E, I, R, J>      rows contiguous on both sides and each job's output packed:
//                                one 16-byte-aligned chunk of the whole output per work item,
//                                from at most two input rows, stored with one 16-byte store.
//   gather_lanes<E, I, R, J, V>  an innermost dimension of V elements, all V moved by one work
//                                item (R counts the other dimensions): for narrow elements,
//                                whose index arithmetic would otherwise cost more than their
//                                traffic (space-to-depth's phases in float16).
// E: element bytes (1, 2, 4, 8); I: index type (int, or long long when a job's byte span
// passes 2^31); R: rank of the work box (1..8); J: job capacity of the batch (SLICE: 1;
// SPLIT/JOIN: one job per output/input, all in one launch). Work items per thread: the
// family's CUDADML_ITEMS_<FAMILY> for one job, CUDADML_ITEMS_COPY_BATCH for a batch.
// Supplied by Python (cudadml/backends/kernels.py): CopyBatch by value, built from a NumPy
// structured dtype with the same layout; grids of block_start[num_jobs] blocks of BLOCK, or
// num_jobs * (most blocks of a job) when the batch is interleaved.
// Loaded by cudadml.backends.kernels through cupy.RawModule(name_expressions=...).
// Cannot be compiled standalone: includes common.cuh, which the loader inlines.
// Its structs that the host fills mirror NumPy dtypes (kernels.parameter_structs): change both;
// tests/test_structs.py compares them field by field, with g++ and with NVRTC.
#include "common.cuh"

template <typename I, int R>
struct CopyJob {
    u64 src, dst;          // byte addresses where the box's first element is read / written
    I count;               // work items: elements, row chunks (gather_rows) or output chunks
    I row;                 // gather_rows: elements per row; gather_lanes: the lanes' source stride
    I bytes;               // gather_flat: output bytes; gather_lanes: the lanes' destination stride
    I src_low, src_high;   // gather_flat: the bytes [src + src_low, src + src_high) hold every
                           // element the job reads; aligned loads stay inside them
    Divider<I> sizes[R];   // the work box; innermost: chunks per row (gather_rows), bytes
                           // per row (gather_flat)
    I src_strides[R];      // signed, in elements; gather_rows, gather_flat: the innermost is 0
    I dst_strides[R];      // gather_flat: unused (the output is packed)
};

template <typename I, int R, int J>
struct CopyBatch {
    CopyJob<I, R> jobs[J];
    int block_start[J + 1];  // job j has block_start[j + 1] - block_start[j] blocks
    Divider<int> num_jobs;
    // 0: job j owns blocks [block_start[j], block_start[j + 1]), one job after another.
    // 1: block b is block b / num_jobs of job b % num_jobs, so the jobs advance together
    // through rows they share (SPLIT's input, JOIN's output) and every fetched DRAM sector is
    // used while it is in cache; blocks past a job's end do nothing.
    int interleaved;
};

// The job of this block and the block's index within the job; false for a block with no work.
template <typename I, int R, int J>
__device__ __forceinline__ bool find_block(const CopyBatch<I, R, J>& batch, int& job, int& local) {
    const int block = (int)blockIdx.x;
    if (J == 1) {
        job = 0;
        local = block;
        return true;
    }
    if (batch.interleaved) {
        local = batch.num_jobs.divmod(block, job);
        return local < batch.block_start[job + 1] - batch.block_start[job];
    }
    // The last j with block_start[j] <= block.
    int lo = 0, hi = batch.num_jobs.d - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (batch.block_start[mid] <= block) lo = mid;
        else hi = mid - 1;
    }
    job = lo;
    local = block - batch.block_start[lo];
    return true;
}

// This thread's job, and its first work item in base: it takes items base + k * BLOCK for
// k < ITEMS (a warp touches consecutive items, so accesses coalesce); nullptr for a block
// with no work.
template <int ITEMS, typename I, int R, int J>
__device__ __forceinline__ const CopyJob<I, R>* first_item(const CopyBatch<I, R, J>& batch, I& base) {
    int j, local;
    if (!find_block(batch, j, local)) return nullptr;
    base = (I)local * (CUDADML_BLOCK * ITEMS) + (I)threadIdx.x;
    return &batch.jobs[j];
}

// Every gather kernel: this thread's job and its first work item (first_item), moved by the
// family's Copy::run<E, ITEMS>(job, base), ITEMS being the family's CUDADML_ITEMS_<FAMILY>
// (ONE) for one job and CUDADML_ITEMS_COPY_BATCH for a batch.
template <typename Copy, int E, int ONE, typename I, int R, int J>
__device__ __forceinline__ void gather(const CopyBatch<I, R, J>& batch) {
    constexpr int ITEMS = J == 1 ? ONE : CUDADML_ITEMS_COPY_BATCH;
    I base;
    const CopyJob<I, R>* work = first_item<ITEMS>(batch, base);
    if (work == nullptr) return;
    Copy::template run<E, ITEMS>(*work, base);
}

// Offsets of work item idx in the job's box; returns its innermost coordinate.
template <typename I, int R>
__device__ __forceinline__ I locate(const CopyJob<I, R>& job, I idx, I& src, I& dst) {
    src = 0;
    dst = 0;
    I inner = 0;
    for_each_coordinate<R>(job.sizes, idx, [&](int d, I c) {
        if (d == R - 1) inner = c;
        src += c * job.src_strides[d];
        dst += c * job.dst_strides[d];
    });
    return inner;
}

// The work of gather_elements (V = 1: an item is one element) and gather_lanes (an item is V
// elements, the job's row and bytes apart in the source and destination).
template <int V>
struct MoveItems {
    template <int E, int ITEMS, typename I, int R>
    static __device__ __forceinline__ void run(const CopyJob<I, R>& job, I base) {
        typedef typename Word<E>::type W;
        const W* src = reinterpret_cast<const W*>(job.src);
        W* dst = reinterpret_cast<W*>(job.dst);
        const I src_lane = V > 1 ? job.row : 0;
        const I dst_lane = V > 1 ? job.bytes : 0;
        W value[ITEMS][V];
        I target[ITEMS];
        // All loads before any store, so ITEMS * V reads are in flight at once.
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const I idx = base + (I)k * CUDADML_BLOCK;
            if (idx < job.count) {
                I s;
                locate(job, idx, s, target[k]);
#pragma unroll
                for (int v = 0; v < V; ++v) value[k][v] = __ldg(src + s + (I)v * src_lane);
            }
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if (base + (I)k * CUDADML_BLOCK < job.count) {
#pragma unroll
                for (int v = 0; v < V; ++v) store(dst + target[k] + (I)v * dst_lane, value[k][v]);
            }
        }
    }
};

template <int E, typename I, int R, int J>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_elements(const __grid_constant__ CopyBatch<I, R, J> batch) {
    gather<MoveItems<1>, E, CUDADML_ITEMS_GATHER_ELEMENTS>(batch);
}

// The work of gather_rows.
struct CopyRows {
    template <int E, int ITEMS, typename I, int R>
    static __device__ __forceinline__ void run(const CopyJob<I, R>& job, I base) {
        typedef typename Word<E>::type W;
        const I row_bytes = job.row * (I)E;
        uint4 value[ITEMS];
        uint4* target[ITEMS];
        // Full chunks: every load before any store, so ITEMS reads are in flight at once.
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            target[k] = nullptr;
            const I idx = base + (I)k * CUDADML_BLOCK;
            if (idx >= job.count) continue;
            I s, d;
            const I chunk = locate(job, idx, s, d);
            const unsigned char* src_row = reinterpret_cast<const unsigned char*>(job.src) + s * (I)E;
            unsigned char* dst_row = reinterpret_cast<unsigned char*>(job.dst) + d * (I)E;
            // Chunk c is the c-th 16-byte-aligned block of output addresses from the row's
            // first one, cut to the row; the host gives each row ceil(bytes/16) + 1 chunks,
            // enough for any alignment, so some chunks are empty.
            const u64 row_start = reinterpret_cast<u64>(dst_row);
            const u64 row_end = row_start + (u64)row_bytes;
            u64 lo = (row_start & ~(u64)15) + 16 * (u64)chunk;
            u64 hi = lo + 16;
            if (lo < row_start) lo = row_start;
            if (hi > row_end) hi = row_end;
            if (lo >= hi) continue;
            const unsigned char* from = src_row + (lo - row_start);
            if (hi - lo == 16) {
                value[k] = load16(from, src_row, src_row + row_bytes);
                target[k] = reinterpret_cast<uint4*>(lo);
            } else {
                // A partial chunk at a row end: element by element (both ends are element-aligned).
                for (u64 a = lo; a < hi; a += E) {
                    // The load before the store's address, as an assignment orders them: the same
                    // code as `*(W*)a = __ldg(...)` (function arguments would be unsequenced).
                    const W v = __ldg(reinterpret_cast<const W*>(from + (a - lo)));
                    store(reinterpret_cast<W*>(a), v);
                }
            }
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            if (target[k] != nullptr) store(target[k], value[k]);
        }
    }
};

template <int E, typename I, int R, int J>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_rows(const __grid_constant__ CopyBatch<I, R, J> batch) {
    gather<CopyRows, E, CUDADML_ITEMS_GATHER_ROWS>(batch);
}

// Element offset in the input of the first element of row r (rows over sizes[0 .. R-2]).
template <typename I, int R>
__device__ __forceinline__ I row_source(const CopyJob<I, R>& job, I r) {
    I s = 0;
    for_each_coordinate<R - 1>(job.sizes, r, [&](int d, I c) { s += c * job.src_strides[d]; });
    return s;
}

// row_source of rows r and r + 1 (when row r + 1 exists), from one set of divisions: r + 1's
// coordinates are r's plus one, carried outwards.
template <typename I, int R>
__device__ __forceinline__ I row_sources(const CopyJob<I, R>& job, I r, I& next) {
    I s = 0;
    next = 0;
    bool carry = true;
    for_each_coordinate<R - 1>(job.sizes, r, [&](int d, I c) {
        s += c * job.src_strides[d];
        I c_next = carry ? c + 1 : c;
        carry = carry && c_next == job.sizes[d].d;
        next += (carry ? 0 : c_next) * job.src_strides[d];
    });
    return s;
}

// The work of gather_flat: the job's output is packed, its chunks as store_chunks cuts them
// (the host gives each job ceil(bytes / 16) + 1).
struct CopyFlat {
    template <int E, int ITEMS, typename I, int R>
    static __device__ __forceinline__ void run(const CopyJob<I, R>& job, I base) {
        typedef typename Word<E>::type W;
        const unsigned char* src = reinterpret_cast<const unsigned char*>(job.src);
        const unsigned char* lo_bound = src + job.src_low;
        const unsigned char* hi_bound = src + job.src_high;
        const Divider<I>& row_bytes = job.sizes[R - 1];
        const I head = (I)(job.dst & 15);
        unsigned char* first_chunk = reinterpret_cast<unsigned char*>(job.dst - (u64)head);
        const auto chunk = [&](I lo, I hi, uint4& value, bool& full) __attribute__((always_inline)) {
            if (hi - lo == 16) {
                // Bytes [0, n) from row r, the rest from row r + 1 (rows are at least 16 bytes).
                I w;
                const I r = row_bytes.divmod(lo, w);
                const int n = row_bytes.d - w < 16 ? (int)(row_bytes.d - w) : 16;
                I next;
                const unsigned char* p = src + row_sources(job, r, next) * (I)E + w;
                value = load_run<E>(p, lo_bound, hi_bound, 0, n);
                if (n < 16) {
                    // Where the chunk's byte 0 would be if row r + 1 began n bytes earlier.
                    const unsigned char* q = src + next * (I)E - n;
                    value = merge_at(value, load_run<E>(q, lo_bound, hi_bound, n, 16), n);
                }
                full = true;
            } else {
                // A partial chunk at an end of the output: element by element.
                for (I a = lo; a < hi; a += E) {
                    I w;
                    const I r = row_bytes.divmod(a, w);
                    // The load before the store's address, as an assignment orders them.
                    const W v = __ldg(reinterpret_cast<const W*>(src + row_source(job, r) * (I)E + w));
                    store(reinterpret_cast<W*>(first_chunk + head + a), v);
                }
            }
        };
        store_chunks<ITEMS>(first_chunk, head, base, job.count, job.bytes, chunk);
    }
};

template <int E, typename I, int R, int J>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_flat(const __grid_constant__ CopyBatch<I, R, J> batch) {
    gather<CopyFlat, E, CUDADML_ITEMS_GATHER_FLAT>(batch);
}

template <int E, typename I, int R, int J, int V>
__global__ void __launch_bounds__(CUDADML_BLOCK)
gather_lanes(const __grid_constant__ CopyBatch<I, R, J> batch) {
    gather<MoveItems<V>, E, CUDADML_ITEMS_GATHER_LANES>(batch);
}

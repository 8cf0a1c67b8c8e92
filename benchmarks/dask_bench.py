"""Dask benchmark: a window and a 64-part split of a CuPy-chunked array, cudadml against Dask's own slicing.

Two cases on the same CuPy chunks (rows of ``--chunk-mib`` MiB), each run by cudadml and by
``dask.array`` on the same input:

* window: ``x[::-2, 64:-64]`` (a reversed, strided window crossing every chunk); cudadml's
  ``strided_slice`` against Dask's ``x[key]`` made contiguous per chunk
  (``map_blocks(cupy.ascontiguousarray)``: Dask's slicing alone makes strided views);
* split: 64 equal parts along axis 0, whose boundaries do not fall on chunk boundaries;
  cudadml's ``split`` against the parts sliced by Dask (``x[a:b]`` per part, the
  ``da.split``-equivalent), each made contiguous.

Each output chunk is reduced on its worker to its byte count (so nothing large travels to the
client), summed, and checked against the expected bytes. With ``--persist`` (the default when
the input takes at most 40% of the workers' GPU memory) the input is generated and kept in
GPU memory first, and the timings are of the operation alone; otherwise every run generates
the input chunks on the fly and the time of generating and reducing the input alone is
subtracted. Throughput counts the bytes read and written (twice the output's bytes). The
scheduler overhead per task is the time of a graph of as many no-op tasks, divided by their
number. With ``--check`` (small sizes), cudadml's results are compared with Dask's, exactly.

Uses ``dask_cuda.LocalCUDACluster`` with ``--workers`` GPUs when dask-cuda is installed,
else Dask's threaded scheduler on the current GPU. Prints a Markdown table.

Examples::

    python benchmarks/dask_bench.py                     # 160 GB over every GPU (dask-cuda)
    python benchmarks/dask_bench.py --small --workers 1 # what fits one GPU, persisted
    python benchmarks/dask_bench.py --size-gb 8 --workers 1 --check
"""

from __future__ import annotations

import argparse
import itertools
import time


def _arguments(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=160.0, help="input size in GB (default 160: past one GPU)")
    parser.add_argument("--small", action="store_true", help="4 GB, persisted: what fits one GPU")
    parser.add_argument("--workers", type=int, default=None, help="GPU workers (default: every GPU)")
    parser.add_argument("--chunk-mib", type=int, default=512, help="MiB per input chunk (default 512)")
    parser.add_argument("--columns", type=int, default=2**14, help="row length in float32 elements")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best is kept")
    parser.add_argument("--persist", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--check", action="store_true", help="compare cudadml's results with Dask's")
    args = parser.parse_args(argv)
    if args.small:
        args.size_gb = 4.0
        args.persist = True if args.persist is None else args.persist
    return args


# ---- tasks (module level: worker processes unpickle them) -----------------------------------------


def _rows(block_info=None):
    """An input chunk: float32 values from its position (cheap to make, not constant)."""
    import cupy

    info = block_info[None]
    (r0, r1), (c0, c1) = info["array-location"]
    rows = cupy.arange(r0, r1, dtype=cupy.float32)[:, None]
    return rows * 0.5 + cupy.arange(c0, c1, dtype=cupy.float32)[None, :]


def _nbytes(block):
    """The chunk's byte count, once the GPU has made it (kernels run asynchronously: without
    the wait the graph would finish before the GPU work it timed)."""
    import cupy
    import numpy as np

    cupy.cuda.get_current_stream().synchronize()
    return np.array([block.nbytes], dtype=np.int64).reshape((1,) * block.ndim)


def _contiguous(block):
    import cupy

    return cupy.ascontiguousarray(block)


def _noop(block):
    return block


def _sink(arrays):
    """The total bytes of ``arrays``' chunks, reduced chunk by chunk on the workers."""
    import dask.array as da
    import numpy as np

    sums = []
    for a in arrays:
        ones = tuple((1,) * len(c) for c in a.chunks)
        counts = a.map_blocks(_nbytes, chunks=ones, dtype=np.int64, meta=np.empty((0,) * a.ndim, np.int64))
        sums.append(counts.sum())
    return da.stack(sums).sum()


def _timed(make, compute, repeat):
    """Best wall time of building and computing the graph ``make()``, and its result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = compute(make())
        best = min(best, time.perf_counter() - started)
    return best, result


def _tasks(arrays, base):
    """Tasks in ``arrays``' graph that are not in ``base``'s (aliases included)."""
    keys = set()
    for a in arrays:
        keys |= set(dict(a.__dask_graph__()))
    return len(keys - set(dict(base.__dask_graph__())))


def main(argv=None):
    args = _arguments(argv)
    import cupy
    import dask.array as da
    import numpy as np

    import cudadml as cd

    gpus = cupy.cuda.runtime.getDeviceCount()
    workers = args.workers or gpus
    try:
        import dask_cuda
        from distributed import Client, wait
    except ImportError:
        dask_cuda = None
    if dask_cuda is not None:
        cluster = dask_cuda.LocalCUDACluster(CUDA_VISIBLE_DEVICES=list(range(workers)), n_workers=workers)
        client = Client(cluster)
        scheduler = "LocalCUDACluster"

        def compute(graph):
            return client.compute(graph).result()

        def persist(a):
            a = a.persist()
            wait(a)
            return a
    else:
        client, scheduler, workers = None, "threads (one GPU)", 1

        def compute(graph):
            return graph.compute(scheduler="threads")

        def persist(a):
            return a.persist(scheduler="threads")

    columns = args.columns
    rows_per_chunk = max(1, args.chunk_mib * 2**20 // (4 * columns))
    rows = int(args.size_gb * 1e9 // (4 * columns)) // rows_per_chunk * rows_per_chunk
    memory = workers * cupy.cuda.runtime.memGetInfo()[1]
    nbytes = rows * columns * 4
    keep = args.persist if args.persist is not None else nbytes <= 0.4 * memory
    chunks = da.core.normalize_chunks((rows_per_chunk, columns), (rows, columns))
    x = da.map_blocks(_rows, chunks=chunks, dtype=np.float32, meta=cupy.empty((0, 0), np.float32))
    if keep:
        x = persist(x)
        generation = 0.0
    else:
        generation, _ = _timed(lambda: _sink([x]), compute, args.repeat)

    key = (slice(None, None, -2), slice(64, -64))
    bounds = np.linspace(0, rows, 65).astype(int)
    sizes = list(np.diff(bounds))
    cases = {
        ("window", "cudadml"): lambda: [cd.strided_slice(x, key)],
        ("window", "dask.array"): lambda: [x[key].map_blocks(_contiguous)],
        ("split 64", "cudadml"): lambda: cd.split(x, split_sizes=sizes, axis=0),
        ("split 64", "dask.array"): lambda: [x[a:b].map_blocks(_contiguous) for a, b in itertools.pairwise(bounds)],
    }
    table = []
    for (case, who), make in cases.items():
        seconds, total = _timed(lambda make=make: _sink(make()), compute, args.repeat)
        moved = 2 * int(total)
        arrays = make()
        tasks = _tasks(arrays, x)
        noop_graph = da.zeros(max(tasks, 1), chunks=1).map_blocks(_noop)
        noop_seconds, _ = _timed(lambda g=noop_graph: g.sum(), compute, args.repeat)
        op = max(seconds - generation, 1e-9)
        table.append((case, who, workers, moved / 1e9, op, moved / op / 1e9, tasks, noop_seconds / max(tasks, 1) * 1e6))
        if args.check and who == "cudadml":
            reference = cases[(case, "dask.array")]()
            for mine, theirs in zip(arrays, reference):
                assert bool(compute((mine == theirs).all())), f"{case}: cudadml differs from dask.array"
    how = "persisted" if keep else f"generated on the fly ({generation:.2f} s, subtracted)"
    print(f"input: {rows} x {columns} float32 ({nbytes / 1e9:.1f} GB) in chunks of {rows_per_chunk} rows; ", end="")
    print(f"{scheduler}, {workers} worker(s); {how}")
    print()
    print("| case | participant | workers | GB moved | time s | GB/s | tasks | scheduler us/task |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for case, who, n, gb, seconds, rate, tasks, overhead in table:
        print(f"| {case} | {who} | {n} | {gb:.1f} | {seconds:.3f} | {rate:.1f} | {tasks} | {overhead:.0f} |")
    if client is not None:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()

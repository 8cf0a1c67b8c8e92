"""Graphs of SLICE, SPLIT and JOIN nodes compiled into one operator, against the same chain op by
op and against CuPy, PyTorch eager and torch.compile, all in one run.

    python benchmarks/graph_bench.py [--reps 20] [--only NAME] [--json PATH] [--quick] [--host]
                                     [--skip PARTICIPANT ...]

Each workload is one ``GraphDesc`` (built by the helpers below) and the same computation written
the way each participant's users write it:

* ``graph``: ``compiled.execute(inputs, outputs)`` into preallocated outputs;
* ``graph, allocating``: the same, allocating its outputs in the call;
* ``op by op``: cudadml's array functions (``strided_slice``, ``split``, ``join``) in sequence,
  every intermediate materialised;
* ``fuse``: ``cd.fuse`` of that op-by-op function, where cudadml has it;
* ``CuPy``: basic slicing, ``cupy.concatenate`` / ``cupy.split`` and ``.copy()`` where a result
  must be materialised (``NumPy`` on the host);
* ``PyTorch`` (eager) and ``torch.compile`` (inductor, default mode, compiled before timing;
  an error while compiling is recorded in its cell);
* ``copy``: a device-to-device ``cudaMemcpyAsync`` of the graph's minimum traffic (each output
  byte written once and the input element it takes read once: half of that traffic copied).

The compiled graph's outputs are first compared byte for byte with CuPy's chain (no cudadml code
in it), and every other participant's result with the graph's; a participant that differs (or
fails) is not timed, and the run exits 1 (an error of ``fuse`` or ``torch.compile`` is only
recorded). Times are medians of ``--reps``
runs after warm-up (``bench.device_time_us``): "GPU us" with a spin kernel queued first, so the
host work of the call is hidden and only the GPU's work is timed; "whole us" CUDA events around
one call on an idle GPU (host work, launches and GPU time, what a user waits for). "%D2D" is
the copy's time over the participant's (the rate of a plain copy of the same bytes, in the same
run); "vs graph" is the participant's time over the compiled graph's (above 1: the graph is
faster).

Without a GPU (or with ``--host``) the cudadml participants run on NumPy arrays through the
host backend (the NumPy reference by default), NumPy and PyTorch on the CPU stand in for the
peers, torch.compile is left out, and the times are host wall times: that is for checking the
script (``--quick``: tiny shapes, a few seconds), not for reading the numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import cudadml as cd
from cudadml.backends import gpu_status

try:
    import torch
except ImportError:
    torch = None

# ---- the graphs --------------------------------------------------------------------------------


def _t(dtype, shape):
    return cd.BufferTensorDesc(np.dtype(dtype), list(shape))


#: YOLOv5's Focus: x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]
#: as (row, column) phases of axes 2 and 3.
FOCUS_PHASES = ((0, 0), (1, 0), (0, 1), (1, 1))


def focus_graph(shape, dtype):
    """Space-to-depth: four SLICE nodes (every other row and column, one phase each) and a JOIN
    of the four along axis 1."""
    n, c, h, w = shape
    half = (n, c, h // 2, w // 2)
    nodes = [
        cd.SliceOperatorDesc(_t(dtype, shape), _t(dtype, half), [0, 0, dy, dx], list(half), [1, 1, 2, 2])
        for dy, dx in FOCUS_PHASES
    ]
    nodes.append(cd.JoinOperatorDesc([_t(dtype, half)] * 4, _t(dtype, (n, 4 * c, h // 2, w // 2)), 1))
    return cd.GraphDesc(
        1,
        1,
        nodes,
        [cd.GraphInputEdge(0, k, 0) for k in range(4)],
        [cd.GraphOutputEdge(4, 0, 0)],
        [cd.GraphIntermediateEdge(k, 0, 4, k) for k in range(4)],
    )


def qkv_graph(batch, tokens, heads, head_size, dtype):
    """A fused QKV projection's output (batch, tokens, 3 * heads * head_size) split into q, k
    and v along the last axis (one SPLIT), each re-described as (batch, tokens, heads,
    head_size) on its edge (a reshape) and split into its heads along axis 2 (a SPLIT each):
    3 * heads graph outputs of (batch, tokens, 1, head_size), q's heads first."""
    d = heads * head_size
    part, per_head = (batch, tokens, d), (batch, tokens, heads, head_size)
    head = (batch, tokens, 1, head_size)
    nodes = [cd.SplitOperatorDesc(_t(dtype, (batch, tokens, 3 * d)), [_t(dtype, part)] * 3, 2)]
    nodes += [cd.SplitOperatorDesc(_t(dtype, per_head), [_t(dtype, head)] * heads, 2) for _ in range(3)]
    return cd.GraphDesc(
        1,
        3 * heads,
        nodes,
        [cd.GraphInputEdge(0, 0, 0)],
        [cd.GraphOutputEdge(1 + p, h, p * heads + h) for p in range(3) for h in range(heads)],
        [cd.GraphIntermediateEdge(0, p, 1 + p, 0) for p in range(3)],
    )


def crops_graph(images_shape, crop, offsets, dtype):
    """One crop per image (``offsets[k]`` = (row, column) of image k's crop): a SLICE node per
    image and a JOIN of the crops along axis 0 into a batch."""
    n, c = images_shape[:2]
    one = (1, c, *crop)
    nodes = [
        cd.SliceOperatorDesc(_t(dtype, images_shape), _t(dtype, one), [k, 0, int(oy), int(ox)], list(one), [1, 1, 1, 1])
        for k, (oy, ox) in enumerate(offsets)
    ]
    nodes.append(cd.JoinOperatorDesc([_t(dtype, one)] * n, _t(dtype, (n, c, *crop)), 0))
    return cd.GraphDesc(
        1,
        1,
        nodes,
        [cd.GraphInputEdge(0, k, 0) for k in range(n)],
        [cd.GraphOutputEdge(n, 0, 0)],
        [cd.GraphIntermediateEdge(k, 0, n, k) for k in range(n)],
    )


def rejoin_graph(shape, parts, axis, dtype):
    """A SPLIT into ``parts`` equal parts along ``axis`` and a JOIN of them in reverse order."""
    part = tuple(n // parts if d == axis else n for d, n in enumerate(shape))
    nodes = [
        cd.SplitOperatorDesc(_t(dtype, shape), [_t(dtype, part)] * parts, axis),
        cd.JoinOperatorDesc([_t(dtype, part)] * parts, _t(dtype, shape), axis),
    ]
    return cd.GraphDesc(
        1,
        1,
        nodes,
        [cd.GraphInputEdge(0, 0, 0)],
        [cd.GraphOutputEdge(1, 0, 0)],
        [cd.GraphIntermediateEdge(0, parts - 1 - k, 1, k) for k in range(parts)],
    )


# ---- the workloads -----------------------------------------------------------------------------


@dataclass
class Workload:
    """A graph and the same computation per participant. Each function takes the inputs (or,
    for ``torch``, tensors of them) and returns a list of arrays, the graph's outputs in
    order; ``peer`` takes the array module first (CuPy, or NumPy on the host)."""

    name: str
    shapes: str
    input_shapes: list  # (shape, dtype) per graph input
    output_shapes: list  # (shape, dtype) per graph output
    graph: Callable[[], Any]
    ops: Callable[..., list]
    peer: Callable[..., list]
    torch: Callable[..., list]
    inputs: list = field(default_factory=list)


def _focus(shape, dtype):
    n, c, h, w = shape
    keys = [(Ellipsis, slice(dy, None, 2), slice(dx, None, 2)) for dy, dx in FOCUS_PHASES]

    def ops(x):
        return [cd.join([cd.strided_slice(x, key) for key in keys], axis=1)]

    def peer(xp, x):
        return [xp.concatenate([x[key] for key in keys], axis=1)]

    def torch_fn(x):  # as YOLOv5 writes it
        return [torch.cat([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)]

    return Workload(
        f"focus {np.dtype(dtype).name}",
        f"{_dims(shape)} -> {_dims((n, 4 * c, h // 2, w // 2))}: 4 SLICE + JOIN",
        [(shape, dtype)],
        [((n, 4 * c, h // 2, w // 2), dtype)],
        lambda: focus_graph(shape, dtype),
        ops,
        peer,
        torch_fn,
    )


def _qkv(batch, tokens, heads, head_size, dtype):
    d = heads * head_size
    per_head = (batch, tokens, heads, head_size)

    def ops(x):
        return [h for p in cd.split(x, parts=3, axis=2) for h in cd.split(p.reshape(per_head), parts=heads, axis=2)]

    def peer(xp, x):
        return [h.copy() for p in xp.split(x, 3, axis=2) for h in xp.split(p.reshape(per_head), heads, axis=2)]

    def torch_fn(x):
        return [
            h.clone(memory_format=torch.contiguous_format)
            for p in x.split(d, dim=-1)
            for h in p.view(per_head).split(1, dim=2)
        ]

    return Workload(
        f"qkv {np.dtype(dtype).name}",
        f"{_dims((batch, tokens, 3 * d))} -> {3 * heads} x {_dims((batch, tokens, 1, head_size))}: "
        f"SPLIT in 3, reshape edges, 3 SPLITs in {heads}",
        [((batch, tokens, 3 * d), dtype)],
        [((batch, tokens, 1, head_size), dtype)] * (3 * heads),
        lambda: qkv_graph(batch, tokens, heads, head_size, dtype),
        ops,
        peer,
        torch_fn,
    )


def _crops(images_shape, crop, dtype, seed=0):
    n, c, h, w = images_shape
    rng = np.random.default_rng(seed)
    offsets = [(int(rng.integers(0, h - crop[0] + 1)), int(rng.integers(0, w - crop[1] + 1))) for _ in range(n)]
    keys = [
        (slice(k, k + 1), slice(None), slice(oy, oy + crop[0]), slice(ox, ox + crop[1]))
        for k, (oy, ox) in enumerate(offsets)
    ]

    def ops(x):
        return [cd.join([cd.strided_slice(x, key) for key in keys], axis=0)]

    def peer(xp, x):
        return [xp.concatenate([x[key] for key in keys], axis=0)]

    def torch_fn(x):
        return [torch.cat([x[key] for key in keys], 0)]

    return Workload(
        f"crops {np.dtype(dtype).name}",
        f"{n} crops {_dims((c, *crop))} of {_dims(images_shape)} -> {_dims((n, c, *crop))}: {n} SLICE + JOIN",
        [(images_shape, dtype)],
        [((n, c, *crop), dtype)],
        lambda: crops_graph(images_shape, crop, offsets, dtype),
        ops,
        peer,
        torch_fn,
    )


def _rejoin(shape, parts, axis, dtype):
    size = shape[axis] // parts

    def ops(x):
        return [cd.join(cd.split(x, parts=parts, axis=axis)[::-1], axis=axis)]

    def peer(xp, x):
        return [xp.concatenate(xp.split(x, parts, axis=axis)[::-1], axis=axis)]

    def torch_fn(x):
        return [torch.cat(x.split(size, dim=axis)[::-1], axis)]

    return Workload(
        f"split-rejoin {np.dtype(dtype).name}",
        f"{_dims(shape)} split in {parts} along axis {axis}, joined reversed: SPLIT + JOIN",
        [(shape, dtype)],
        [(shape, dtype)],
        lambda: rejoin_graph(shape, parts, axis, dtype),
        ops,
        peer,
        torch_fn,
    )


def workloads(quick: bool) -> list[Workload]:
    """The workloads: full size for the GPU, or tiny (``quick``) for checking the script."""
    if quick:
        return [
            _focus((2, 3, 8, 8), np.float16),
            _focus((2, 3, 8, 8), np.float32),
            _qkv(2, 4, 16, 2, np.float16),
            _crops((4, 3, 12, 12), (8, 8), np.uint8),
            _rejoin((2, 6, 4, 4), 3, 1, np.float32),
        ]
    return [
        _focus((16, 3, 640, 640), np.float16),
        _focus((16, 3, 640, 640), np.float32),
        _qkv(8, 2048, 16, 64, np.float16),
        _crops((64, 3, 256, 256), (224, 224), np.uint8),
        _rejoin((64, 96, 224, 224), 3, 1, np.float32),
    ]


def _dims(shape):
    return "x".join(map(str, shape))


# ---- where it runs: the GPU, or the host -------------------------------------------------------


class Device:
    """The GPU: CuPy arrays, CUDA-event times (``bench.device_time_us``), peers on the GPU."""

    host = False

    def __init__(self):
        import cupy as cp
        from bench import device_time_us

        self.xp, self.peer_name, self._time = cp, "CuPy", device_time_us
        self.torch_ok = torch is not None and torch.cuda.is_available()

    def name(self):
        cp = self.xp
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        return f"{props['name'].decode()} ({props['totalGlobalMem'] / 2**30:.0f} GiB)"

    def versions(self):
        cp = self.xp
        found = {
            "cuda runtime": cp.cuda.runtime.runtimeGetVersion(),
            "cuda driver": cp.cuda.runtime.driverGetVersion(),
            "CuPy": cp.__version__,
        }
        if torch is not None:
            found["PyTorch CUDA"] = torch.version.cuda
        return found

    def random(self, shape, dtype, rng):
        """Fresh data on the GPU: floats of magnitude 1 to 2 and either sign (no zeros, no
        NaNs or subnormals, whose bits a compiled peer's conversions might change), any
        integers."""
        cp = self.xp
        if np.dtype(dtype).kind == "f":
            x = cp.random.random(shape, dtype=np.float32) + 1
            x *= cp.random.randint(0, 2, shape, dtype=np.int8) * 2 - 1
            return x.astype(dtype)
        info = np.iinfo(dtype)
        return cp.random.randint(info.min, int(info.max) + 1, shape, dtype=np.int64).astype(dtype)

    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype)

    def tensor(self, x):
        return torch.as_tensor(x, device="cuda")

    def as_array(self, x):
        return self.xp.asarray(x)  # tensors by __cuda_array_interface__, no copy

    def copy_fn(self, nbytes):
        """A cudaMemcpyAsync of ``nbytes`` device to device."""
        cp = self.xp
        src, dst = cp.ones(nbytes, np.uint8), cp.empty(nbytes, np.uint8)
        return lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, nbytes, 3, 0)

    def time(self, fn, reps):
        """``(GPU us, whole us)``."""
        return self._time(fn, reps), self._time(fn, reps, gpu_only=False)

    def release(self):
        self.xp.get_default_memory_pool().free_all_blocks()
        if self.torch_ok:
            torch.cuda.empty_cache()


class Host(Device):
    """No GPU: NumPy arrays through cudadml's host backend, NumPy and PyTorch on the CPU as
    the peers, host wall times."""

    host = True

    def __init__(self, why):
        self.xp, self.peer_name, self.why = np, "NumPy", why
        self.torch_ok = torch is not None

    def name(self):
        return f"host {platform.machine()} ({self.why})"

    def versions(self):
        from cudadml.backends import host_backend

        return {"cudadml host backend": host_backend().name}

    def random(self, shape, dtype, rng):
        if np.dtype(dtype).kind == "f":
            return ((rng.random(shape) + 1) * rng.choice([-1, 1], shape)).astype(dtype)
        info = np.iinfo(dtype)
        return rng.integers(info.min, int(info.max) + 1, shape, dtype=dtype)

    def tensor(self, x):
        return torch.from_numpy(x)

    def as_array(self, x):
        return x.numpy() if torch is not None and isinstance(x, torch.Tensor) else np.asarray(x)

    def copy_fn(self, nbytes):
        src, dst = np.ones(nbytes, np.uint8), np.empty(nbytes, np.uint8)
        return lambda: np.copyto(dst, src)

    def time(self, fn, reps):
        """``(None, whole us)``: host wall time per call, the median of ``reps`` after one."""
        fn()
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        return None, statistics.median(times)

    def release(self):
        pass


# ---- one workload ------------------------------------------------------------------------------


def _as_list(result):
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _difference(device, expected, got):
    """None where ``got`` holds ``expected``'s shapes, dtypes and bytes; else what differs."""
    got = [device.as_array(a) for a in _as_list(got)]
    if len(got) != len(expected):
        return f"{len(got)} outputs, the graph gives {len(expected)}"
    xp = device.xp
    for k, (e, g) in enumerate(zip(expected, got)):
        if g.shape != e.shape or g.dtype != e.dtype:
            return f"output {k}: {g.dtype} {tuple(g.shape)}, the graph gives {e.dtype} {tuple(e.shape)}"
        e8 = xp.ascontiguousarray(e).reshape(-1).view(np.uint8)
        g8 = xp.ascontiguousarray(g).reshape(-1).view(np.uint8)
        differ = int((e8 != g8).sum())
        if differ:
            return f"output {k}: {differ} of {e8.size} bytes differ"
    return None


def _error(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0][:200] if lines else ''}"


#: Participants whose errors are recorded in their cells without failing the run (a compiler
#: that cannot take the workload); other bytes than the graph's fail it all the same.
OPTIONAL = ("fuse", "torch.compile")


def run_workload(device, w: Workload, reps: int, rng, skip=()) -> dict:
    """Every participant of ``w``: compared with the graph, then timed. Returns the JSON
    record; ``record["failed"]`` lists what differs from the graph (or the graph's failure).
    The workload's arrays are freed before the next is made."""
    start = time.perf_counter()
    record = _measure(device, w, reps, rng, skip)
    record["seconds"] = time.perf_counter() - start
    device.release()
    return record


def _measure(device, w: Workload, reps: int, rng, skip) -> dict:
    xp = device.xp
    inputs = [device.random(s, dt, rng) for s, dt in w.input_shapes]
    outs = [device.empty(s, dt) for s, dt in w.output_shapes]
    moved = 2 * sum(math.prod(s) * np.dtype(dt).itemsize for s, dt in w.output_shapes)
    record = {"name": w.name, "shapes": w.shapes, "traffic_bytes": moved, "rows": [], "failed": []}
    calls: dict[str, Callable | None] = {}
    notes: dict[str, str] = {}

    try:
        graph = w.graph()
        start = time.perf_counter()
        compiled = graph.compile()
        record["compile_s"] = time.perf_counter() - start
        try:
            record["graph"] = repr(compiled)
        except Exception as e:  # the description only
            record["graph"] = f"{graph!r} (repr of the compiled graph: {_error(e)})"

        def graph_alloc():
            fresh = [xp.empty(s, dt) for s, dt in w.output_shapes]
            compiled.execute(inputs, fresh)
            return fresh

        def graph_call():
            compiled.execute(inputs, outs)
            return outs

        calls["graph"] = graph_call
        calls["graph, allocating"] = graph_alloc
    except Exception as e:
        record["graph"] = notes["graph"] = _error(e)
        record["failed"].append(f"graph: {notes['graph']}")
        calls["graph"] = calls["graph, allocating"] = None

    calls["op by op"] = lambda: w.ops(*inputs)
    fuse = getattr(cd, "fuse", None)
    if fuse is None:
        calls["fuse"], notes["fuse"] = None, "cudadml has no fuse"
    else:
        try:
            fused = fuse(w.ops)
            calls["fuse"] = lambda: fused(*inputs)
        except Exception as e:
            calls["fuse"], notes["fuse"] = None, _error(e)
    calls[device.peer_name] = lambda: w.peer(xp, *inputs)
    tensors = [device.tensor(x) for x in inputs] if device.torch_ok else None
    calls["PyTorch"] = (lambda: w.torch(*tensors)) if tensors else None
    if tensors is None:
        notes["PyTorch"] = "no PyTorch" + ("" if torch is None else " with CUDA")
    if device.host or tensors is None:
        calls["torch.compile"] = None
        notes["torch.compile"] = "GPU only" if device.host else notes["PyTorch"]
    else:
        compiled_torch = torch.compile(w.torch)
        calls["torch.compile"] = lambda: compiled_torch(*tensors)
    calls["copy"] = device.copy_fn(moved // 2)
    for who in skip:
        if calls.get(who) is not None and who != "graph":
            calls[who], notes[who] = None, "skipped (--skip)"

    # The reference: the graph's outputs, once they agree with the peer's chain (CuPy's, or
    # NumPy's on the host: no cudadml code in it); where the graph fails or differs, that chain's
    # result, so that the other participants are still checked.
    oracle = [xp.ascontiguousarray(a) for a in _as_list(w.peer(xp, *inputs))]
    expected, record["reference"] = oracle, device.peer_name
    if calls["graph"] is not None:
        try:
            differs = _difference(device, oracle, calls["graph"]())
        except Exception as e:
            differs = _error(e)
        if differs:
            notes["graph"] = f"DIFFERS from {device.peer_name}'s chain: {differs}"
            record["failed"].append(f"graph: {notes['graph']}")
            calls["graph"] = None
        else:
            expected, record["reference"] = outs, "graph"
    del oracle

    # Compare, then time, one participant after another (warm-up included: torch.compile
    # compiles on its first call).
    times = {}
    for who, fn in calls.items():
        if fn is None:
            continue
        if who != "copy":
            try:
                start = time.perf_counter()
                got = fn()
                if who in OPTIONAL:  # traced and compiled on the first call
                    notes[who] = f"first call {time.perf_counter() - start:.1f} s"
            except Exception as e:
                notes[who] = _error(e)
                if who not in OPTIONAL:
                    record["failed"].append(f"{who}: {notes[who]}")
                continue
            differs = _difference(device, expected, got)
            del got
            if differs:
                notes[who] = f"DIFFERS from {'the graph' if expected is outs else record['reference']}: {differs}"
                record["failed"].append(f"{who}: {differs}")
                continue
        try:
            times[who] = device.time(fn, reps)
        except Exception as e:
            notes[who] = _error(e)
            if who not in OPTIONAL:
                record["failed"].append(f"{who}: {notes[who]}")
    base = times.get("graph", (None, None))
    copy = times.get("copy", (None, None))
    for who in calls:
        gpu, whole = times.get(who, (None, None))
        record["rows"].append(
            {
                "participant": who,
                "gpu_us": gpu,
                "whole_us": whole,
                "pct_d2d": _share(copy[0], gpu),
                "whole_pct_d2d": _share(copy[1], whole),
                "vs_graph": _over(gpu, base[0]),
                "whole_vs_graph": _over(whole, base[1]),
                "note": notes.get(who),
            }
        )
    return record


def _share(copy, t):
    return 100 * copy / t if copy and t else None


def _over(t, base):
    return t / base if t and base else None


# ---- output ------------------------------------------------------------------------------------


def _cell(value, fmt):
    return format(value, fmt) if value is not None else "-"


def print_table(record, device):
    moved = record["traffic_bytes"]
    moved = f"{moved / 1e6:.1f} MB" if moved >= 1e5 else f"{moved} bytes"
    print(f"\n### {record['name']}: {record['shapes']}; {moved} moved (read + written)")
    compile_s = f" (compiled in {record['compile_s']:.2f} s)" if "compile_s" in record else ""
    print(f"{record['graph']}{compile_s}; the workload took {record['seconds']:.0f} s\n")
    gpu = "" if device.host else " GPU us | %D2D | vs graph |"
    whole = " host us |" if device.host else " whole us |"
    print(f"| participant |{gpu}{whole} %D2D | vs graph | note |")
    print("|---|" + ("---:|" * (3 if device.host else 6)) + "---|")
    for row in record["rows"]:
        cells = []
        if not device.host:
            cells += [
                _cell(row["gpu_us"], ".1f"),
                _cell(row["pct_d2d"], ".0f"),
                _cell(row["vs_graph"], ".2f") + ("x" if row["vs_graph"] else ""),
            ]
        cells += [
            _cell(row["whole_us"], ".1f"),
            _cell(row["whole_pct_d2d"], ".0f"),
            _cell(row["whole_vs_graph"], ".2f") + ("x" if row["whole_vs_graph"] else ""),
        ]
        print(f"| {row['participant']} | {' | '.join(cells)} | {row['note'] or ''} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--only", default="", metavar="NAME", help="only the workloads whose name holds NAME")
    parser.add_argument("--json", metavar="PATH", help="also write the run as JSON")
    parser.add_argument("--quick", action="store_true", help="tiny shapes: checks the script in seconds")
    parser.add_argument("--host", action="store_true", help="run on the host even where a GPU is present")
    parser.add_argument(
        "--skip", action="append", default=[], metavar="PARTICIPANT", help="leave a participant out (repeatable)"
    )
    args = parser.parse_args(argv)
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)  # each table as it is done, also through a pipe
    usable, why = gpu_status()
    device = Device() if usable and not args.host else Host(why if not usable else "--host")
    versions = {
        "Python": platform.python_version(),
        "NumPy": np.__version__,
        "cudadml": cd.__version__,
        "PyTorch": torch.__version__ if torch is not None else None,
        **device.versions(),
    }
    try:
        import triton

        versions["Triton"] = triton.__version__
    except ImportError:
        pass
    print(f"# {device.name()}")
    print("# " + ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None))
    print(f"# median of {args.reps} runs" + (", quick shapes" if args.quick else ""))
    if device.host:
        print("# host wall times: for checking the script, not for reading the numbers")
    else:
        print("# GPU us: a spin kernel queued first hides host work; whole us: events around one call")
        print("# on an idle GPU. %D2D: a cudaMemcpyAsync of the same traffic over the participant's")
        print("# time; vs graph: the participant's time over the compiled graph's (above 1: the graph")
        print("# is faster).")
    rng = np.random.default_rng(0)
    records, failed = [], []
    for w in workloads(args.quick):
        if args.only not in w.name:
            continue
        if not device.host:
            device.xp.random.seed(len(records))
        record = run_workload(device, w, args.reps, rng, args.skip)
        print_table(record, device)
        records.append(record)
        failed += [f"{w.name}: {f}" for f in record["failed"]]
    if not records:
        print(f"no workload's name holds {args.only!r}")
        return 2
    if failed:
        print("\nFAILED (other bytes than the graph's, or an error):")
        for line in failed:
            print(f"  {line}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "device": device.name(),
                    "host": device.host,
                    "versions": versions,
                    "reps": args.reps,
                    "quick": args.quick,
                    "workloads": records,
                },
                f,
                indent=1,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""The plan: what every descriptor lowers to, and the shape algebra done once at compile time.

Two forms:

* ``CopyPlan``: a batch of strided copies, ``out[o0 + sum c_i*os_i] = in[i0 + sum c_i*is_i]``
  over a box of sizes, with signed element strides. SLICE and SLICE1 give one job, SPLIT one
  per output, JOIN one per input.
* ``SliceGradPlan``: for each output-gradient element, the input-gradient element it receives
  if the forward slice read it, else 0 (or a fill: ``cudadml.numpy.pad``'s constant).
* ``WindowPlan`` and ``WindowGradPlan``: many windows of one array (``slice1_batch``) and their
  gradient. The plan fixes what every call shares (sizes, output layout, number of windows);
  where each window lies comes with each call as a table (input 1), since windows change
  from call to call (random crops) while the compiled plan stays. The tables' formats are
  this module's (``window_table``, ``grad_window_dtype`` and ``grad_window_table``), read by
  every backend; ``window_copies`` turns a window plan and a table known when compiling into
  a ``CopyPlan``.

Each is simplified before execution: size-1 dimensions dropped, dimensions that are contiguous
on both sides merged, and (copies) dimensions ordered and flipped so the output is walked
forwards, outermost stride first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import memory

__all__ = [
    "CopyJob",
    "CopyPlan",
    "SliceGradPlan",
    "WindowGradPlan",
    "WindowPlan",
    "best_walk",
    "fast_division",
    "fill_pattern",
    "grad_window_dtype",
    "grad_window_table",
    "merge_phases",
    "window_copies",
    "window_starts",
    "window_table",
]


@dataclass(frozen=True)
class CopyJob:
    """One strided copy from bound input ``input`` to bound output ``output``."""

    input: int
    output: int
    sizes: tuple[int, ...]
    in_strides: tuple[int, ...]
    out_strides: tuple[int, ...]
    in_offset: int
    out_offset: int

    @property
    def count(self) -> int:
        n = 1
        for s in self.sizes:
            n *= s
        return n

    def simplified(self) -> CopyJob:
        """Walked in the output's order: outermost output stride first (stable, so ties keep
        their order), each dimension forwards on the output side."""
        return self._walked(by_input=False)

    def input_major(self) -> CopyJob:
        """The same copy walked in the input's order (innermost input stride last): for copies
        whose output is scattered where the input is contiguous (space-to-depth), so each warp
        reads whole sectors and writes runs of them."""
        return self._walked(by_input=True)

    def _walked(self, by_input):
        in_offset, out_offset = self.in_offset, self.out_offset
        # Walk the side that orders forwards: flipping a dimension on both sides copies the same pairs.
        flipped = []
        for n, i, o in zip(self.sizes, self.in_strides, self.out_strides):
            if n == 1:
                continue
            if (i if by_input else o) < 0:
                in_offset += (n - 1) * i
                out_offset += (n - 1) * o
                i, o = -i, -o
            flipped.append((n, i, o))
        flipped.sort(key=(lambda d: (-d[1], -abs(d[2]))) if by_input else (lambda d: -d[2]))
        columns = ([d[k] for d in flipped] for k in range(3))
        sizes, (in_strides, out_strides) = merge_contiguous(*columns)
        return CopyJob(self.input, self.output, sizes, in_strides, out_strides, in_offset, out_offset)

    def sectors(self, element_size, items=128) -> int:
        """32-byte sectors that the first ``items`` work items read and write, walking the
        box in its order (last dimension innermost): how well consecutive threads coalesce."""
        k = np.arange(min(items, self.count))
        src, dst = np.full(k.shape, self.in_offset), np.full(k.shape, self.out_offset)
        for n, i, o in zip(reversed(self.sizes), reversed(self.in_strides), reversed(self.out_strides)):
            c = k % n
            k = k // n
            src, dst = src + c * i, dst + c * o
        return len(np.unique(src * element_size // 32)) + len(np.unique(dst * element_size // 32))


def best_walk(job: CopyJob, element_size: int) -> CopyJob:
    """``job`` in the output's order, or the input's where that touches fewer sectors."""
    by_output = job.simplified()
    by_input = job.input_major()
    if by_input.sectors(element_size) < by_output.sectors(element_size):
        return by_input
    return by_output


def merge_phases(jobs) -> list[CopyJob]:
    """Jobs of one box at offsets that step by a fixed pair (input, output) become one job
    with that step as a dimension: Focus's four phases of one input, written to four
    channel blocks, become one job that reads each input row once."""
    groups: dict[tuple, list[CopyJob]] = {}
    for job in jobs:
        groups.setdefault((job.input, job.output, job.sizes, job.in_strides, job.out_strides), []).append(job)
    merged = []
    for group in groups.values():
        while len(group) > 1 and len(group[0].sizes) < 8:
            folded = _fold_one_step(group)
            if folded is None:
                break
            group = folded
        merged += group
    return merged


def _fold_one_step(group):
    points = {(j.in_offset, j.out_offset) for j in group}
    first = min(points)
    for p in sorted(points):
        if p == first:
            continue
        step = (p[0] - first[0], p[1] - first[1])
        starts = [q for q in points if (q[0] - step[0], q[1] - step[1]) not in points]
        lengths = set()
        for q in starts:
            n = 1
            while (q[0] + n * step[0], q[1] + n * step[1]) in points:
                n += 1
            lengths.add(n)
        if len(lengths) == 1 and len(starts) * lengths.pop() == len(points) and len(starts) < len(points):
            n = len(points) // len(starts)
            j = group[0]
            return [
                CopyJob(
                    j.input,
                    j.output,
                    (*j.sizes, n),
                    (*j.in_strides, step[0]),
                    (*j.out_strides, step[1]),
                    q[0],
                    q[1],
                )
                for q in sorted(starts)
            ]
    return None


def merge_contiguous(sizes, *stride_lists):
    """Merge each dimension into the next-inner one where every stride list is contiguous
    across the pair. Returns ``(sizes, (strides, ...))``, at least one dimension long."""
    out_sizes: list[int] = []
    out_strides: list[list[int]] = [[] for _ in stride_lists]
    for d, size in enumerate(sizes):
        if size == 1:
            continue
        if out_sizes and all(st[-1] == lst[d] * size for st, lst in zip(out_strides, stride_lists)):
            out_sizes[-1] *= size
            for st, lst in zip(out_strides, stride_lists):
                st[-1] = lst[d]
            continue
        out_sizes.append(size)
        for st, lst in zip(out_strides, stride_lists):
            st.append(lst[d])
    if not out_sizes:
        return (1,), tuple((0,) for _ in stride_lists)
    return tuple(out_sizes), tuple(tuple(st) for st in out_strides)


@dataclass(frozen=True)
class CopyPlan:
    """A batch of strided copies of ``element_size``-byte elements."""

    element_size: int
    jobs: tuple[CopyJob, ...]

    @property
    def output_bytes(self) -> int:
        """Bytes of the output elements that the copies write (jobs never share an element)."""
        return self.element_size * sum(j.count for j in self.jobs)

    def simplified(self) -> CopyPlan:
        return CopyPlan(self.element_size, tuple(j.simplified() for j in self.jobs))

    def narrowed(self, width: int) -> CopyPlan:
        """The same copy in ``width``-byte words: each element becomes an innermost run of
        ``element_size // width`` words (for addresses that are not element-aligned)."""
        k = self.element_size // width
        jobs = tuple(
            CopyJob(
                j.input,
                j.output,
                (*j.sizes, k),
                (*(s * k for s in j.in_strides), 1),
                (*(s * k for s in j.out_strides), 1),
                j.in_offset * k,
                j.out_offset * k,
            )
            for j in self.jobs
        )
        return CopyPlan(width, jobs).simplified()


@dataclass(frozen=True)
class SliceGradPlan:
    """Output gradient element ``x`` (over ``sizes``) receives input gradient element
    ``in_offset + sum c_i * in_strides_i`` where, in every dimension, ``x = start + step * c``
    with ``0 <= c < counts``; every other element receives 0, or the element in ``fill``: 16
    bytes that repeat it (``fill_pattern``), whose bytes ``(x * element_size) % 16`` an element
    at innermost coordinate ``x`` takes, so a plan narrowed to words keeps it as it is."""

    element_size: int
    sizes: tuple[int, ...]
    out_strides: tuple[int, ...]
    starts: tuple[int, ...]
    steps: tuple[int, ...]
    counts: tuple[int, ...]
    in_strides: tuple[int, ...]
    in_offset: int = 0
    fill: bytes = bytes(16)

    @property
    def output_bytes(self) -> int:
        """Bytes of the output gradient's elements: every one is written, read or not."""
        n = self.element_size
        for s in self.sizes:
            n *= s
        return n

    def simplified(self) -> SliceGradPlan:
        in_offset = self.in_offset
        dims = []
        for d in zip(self.sizes, self.out_strides, self.starts, self.steps, self.counts, self.in_strides):
            size, out_stride, start, step, count, in_stride = d
            if size == 1:
                continue  # the window holds the only element: start 0, count 1
            if step < 0:  # walk the same window forwards, and the input gradient backwards
                start, step = start + step * (count - 1), -step
                in_offset += in_stride * (count - 1)
                in_stride = -in_stride
            if (
                dims
                and start == 0
                and step == 1
                and count == size  # inner dimension fully taken
                and dims[-1][3] == 1  # outer one taken in a contiguous run
                and dims[-1][1] == out_stride * size
                and dims[-1][5] == in_stride * count
            ):
                o_size, _, o_start, _, o_count, _ = dims[-1]
                dims[-1] = (o_size * size, out_stride, o_start * size, 1, o_count * size, in_stride)
                continue
            dims.append((size, out_stride, start, step, count, in_stride))
        if not dims:
            dims = [(1, 0, 0, 1, 1, 0)]
        return SliceGradPlan(self.element_size, *(tuple(col) for col in zip(*dims)), in_offset, self.fill)

    def narrowed(self, width: int) -> SliceGradPlan:
        """The same gradient in ``width``-byte words: each element becomes an innermost run of
        ``element_size // width`` words, all read or all zero (see ``CopyPlan.narrowed``)."""
        k = self.element_size // width
        return SliceGradPlan(
            width,
            (*self.sizes, k),
            (*(s * k for s in self.out_strides), 1),
            (*self.starts, 0),
            (*self.steps, 1),
            (*self.counts, k),
            (*(s * k for s in self.in_strides), 1),
            self.in_offset * k,
            self.fill,
        ).simplified()


@dataclass(frozen=True)
class WindowPlan:
    """``num_windows`` copies of the box ``sizes``: window ``n`` writes output element
    ``n * out_window + sum c_i * out_strides_i`` from input element ``offset_n + sum c_i *
    stride_n,i``, where input 1 (the table, ``window_table``) holds ``num_windows`` rows of
    ``1 + len(sizes)`` int64: ``offset_n`` and the signed strides ``stride_n,i``. The input's
    elements lie between element offsets ``in_low`` and ``in_high`` (inclusive) from its
    element 0. The kernels take windows whose output is packed (``packed``); the others run
    as copies (``window_copies``)."""

    element_size: int
    sizes: tuple[int, ...]
    out_strides: tuple[int, ...]
    out_window: int
    num_windows: int
    in_low: int
    in_high: int

    @property
    def packed(self) -> bool:
        """Whether each window's output is one run of elements, in order."""
        return is_packed(self.sizes, self.out_strides)

    @property
    def output_bytes(self) -> int:
        return self.element_size * self.num_windows * math.prod(self.sizes)


@dataclass(frozen=True)
class WindowGradPlan:
    """The gradient of windows: input-gradient element ``x`` (over ``sizes``, ``out_strides``)
    receives the sum, in window order, of the output-gradient elements of the windows that
    read ``x``, and 0 where none did. Input 1 (the table) holds per window its output
    gradient's first element and, per dimension, ``(start, count, dy_stride, step)`` with
    ``step > 0`` (``grad_window_dtype``, ``grad_window_table``). ``per_sample``: dimension 0
    of ``sizes`` is the window index, and only that window is asked. ``kind``: how elements
    add (the kernels' ``GradKind``): ``element_size`` moves words (at most one window per
    element), ``10 + size`` wraps integers, ``20 + size`` adds floats (half: into a float32
    output)."""

    kind: int
    sizes: tuple[int, ...]
    out_strides: tuple[int, ...]
    per_sample: bool
    num_windows: int

    @property
    def element_size(self) -> int:
        """Bytes of an output element (a float for a half's sum)."""
        return grad_element_size(self.kind)

    @property
    def output_bytes(self) -> int:
        return self.element_size * math.prod(self.sizes)


def fill_pattern(element: bytes) -> bytes:
    """``SliceGradPlan.fill`` for the bytes of one element of 1, 2, 4, 8 or 16 bytes."""
    if len(element) not in (1, 2, 4, 8, 16):
        raise ValueError(f"a fill is an element of 1, 2, 4, 8 or 16 bytes, not {len(element)}")
    return bytes(element) * (16 // len(element))


def grad_element_size(kind) -> int:
    """Bytes of the element a ``WindowGradPlan`` of ``kind`` writes (a float for a half's sum)."""
    return 4 if kind == 22 else kind % 10


def is_packed(sizes, strides) -> bool:
    """Whether elements over ``sizes`` at element ``strides`` are one run, in order."""
    expected = 1
    for n, stride in zip(reversed(sizes), reversed(strides)):
        if stride != expected:
            return False
        expected *= n
    return True


def plan_slice(element_size, windows, in_strides, out_strides) -> CopyPlan:
    """SLICE and SLICE1: ``out[c] = in[start + step * c]`` with ``(start, step, count)`` per
    dimension in ``windows``."""
    job = CopyJob(
        0,
        0,
        tuple(count for _, _, count in windows),
        tuple(step * s for (_, step, _), s in zip(windows, in_strides)),
        tuple(out_strides),
        sum(start * s for (start, _, _), s in zip(windows, in_strides)),
        0,
    )
    return CopyPlan(element_size, (job,)).simplified()


def plan_slice_grad(element_size, sizes, out_strides, windows, in_strides) -> SliceGradPlan:
    """SLICE_GRAD: output element ``start + step * c`` receives input element ``c``, with
    ``(start, step, count)`` per dimension in ``windows``; the others receive 0."""
    starts, steps, counts = zip(*windows)
    return SliceGradPlan(
        element_size, tuple(sizes), tuple(out_strides), starts, steps, counts, tuple(in_strides)
    ).simplified()


#: The element type of a ``WindowPlan``'s table (``window_table``).
WINDOW_TABLE_DTYPE = np.dtype(np.int64)


def window_starts(offsets, sizes, strides, in_strides, per_sample=False):
    """Where ``slice1_batch``'s windows start and how they step, in the input's elements.

    Window ``n`` lies at ``offsets[n]`` (``(N, d)``) with ``sizes`` and signed ``strides``
    (``(d,)`` for every window, or ``(N, d)``) on an input of element strides ``in_strides``
    (with ``per_sample``, of ``d + 1`` dimensions: window ``n`` in sample ``n``). Returns
    ``(starts, steps)``: each window's first element read (its end along dimensions read
    backwards), ``(N,)``, and its signed element steps, ``(N, d)``."""
    element_strides = np.array(in_strides[1:] if per_sample else in_strides, np.int64)
    starts = offsets @ element_strides
    if len(offsets) and int(strides.min()) < 0:  # a negative stride reads its window from the end
        starts += ((strides < 0) * (sizes - 1)) @ element_strides
    if per_sample:
        starts = starts + np.arange(len(offsets), dtype=np.int64) * in_strides[0]
    steps = strides * element_strides
    if steps.ndim == 1:  # one row of steps for every window
        steps = np.broadcast_to(steps, offsets.shape)
    return starts, steps


def window_table(starts, steps, counts, out_strides):
    """The box a ``WindowPlan`` walks for windows that start at ``starts`` (``(N,)``) and step
    by ``steps`` (signed element strides, ``(N, d)``) over ``counts`` elements, each written
    to an output of element strides ``out_strides``; and its table.

    Size-1 dimensions are dropped, and dimensions merged where every window and the output
    are contiguous across them (so the table is per call, the box the same for every call of
    the same sizes and layouts). Returns ``(sizes, out_strides, table)``: the box, its output
    strides and the table, a row of ``1 + len(sizes)`` ``WINDOW_TABLE_DTYPE`` per window: its
    first element, then its steps."""
    steps = np.asarray(steps, np.int64)
    dims: list[tuple[int, np.ndarray, int]] = []  # (count, steps of every window, output stride)
    for i, count in enumerate(counts):
        if count == 1:
            continue
        column = steps[:, i]
        if dims and dims[-1][2] == out_strides[i] * count and (dims[-1][1] == column * count).all():
            dims[-1] = (dims[-1][0] * count, column, out_strides[i])
            continue
        dims.append((count, column, out_strides[i]))
    if not dims:  # windows of one element
        dims.append((1, np.ones(len(steps), np.int64), 1))
    table = np.empty((len(steps), 1 + len(dims)), WINDOW_TABLE_DTYPE)
    table[:, 0] = starts
    for k, (_, column, _) in enumerate(dims):
        table[:, 1 + k] = column
    return tuple(d[0] for d in dims), tuple(d[2] for d in dims), table


def window_copies(element_size, table, boxes, out_strides, out_window=None) -> CopyPlan:
    """Windows whose table (``window_table``'s rows) is known when compiling, as copies:
    window ``n`` copies ``boxes[n]`` from the input at ``table[n]`` to output ``n``, of
    element strides ``out_strides[n]``; or, with ``out_window``, every window the one box
    ``boxes[0]`` to output 0, window ``n`` from element ``n * out_window`` on. Each job is
    ``CopyJob.simplified``'s, its walk (which follows the output alone) worked out once per
    box and output layout."""
    rows = table.tolist()
    if out_window is None:
        return CopyPlan(
            element_size,
            tuple(
                _window_job(n, _output_walk(tuple(box), tuple(strides)), row, 0)
                for n, (row, box, strides) in enumerate(zip(rows, boxes, out_strides))
            ),
        )
    walk = _output_walk(tuple(boxes[0]), tuple(out_strides[0]))
    return CopyPlan(element_size, tuple(_window_job(0, walk, row, n * out_window) for n, row in enumerate(rows)))


@memory.cache(1024)
def _output_walk(box, out_strides):
    """``CopyJob.simplified``'s walk of a box written at ``out_strides``, which the output
    alone decides: ``(dims, out_shift)``, ``dims`` the box's dimensions other than size 1 in
    walking order as ``(index, size, output stride, flipped)`` (a dimension written backwards
    is walked forwards on both sides: ``flipped``, its output stride made positive), and
    ``out_shift`` the output offset that the flips add."""
    dims, out_shift = [], 0
    for k, (n, o) in enumerate(zip(box, out_strides)):
        if n == 1:
            continue
        if o < 0:
            out_shift += (n - 1) * o
        dims.append((k, n, abs(o), o < 0))
    dims.sort(key=lambda d: -d[2])  # stable: ties keep their order
    return tuple(dims), out_shift


def _window_job(output, walk, row, out_offset) -> CopyJob:
    """``CopyJob.simplified`` of the copy of the window at table row ``row`` (its first input
    element, then its steps) walked as ``walk`` (``_output_walk``'s) into ``output``:
    dimensions merged where contiguous on both sides, as ``merge_contiguous`` merges them."""
    dims, out_shift = walk
    in_offset = row[0]
    sizes, ins, outs = [], [], []
    for k, n, o, flipped in dims:
        i = row[1 + k]
        if flipped:
            in_offset += (n - 1) * i
            i = -i
        if sizes and ins[-1] == i * n and outs[-1] == o * n:
            sizes[-1] *= n
            ins[-1], outs[-1] = i, o
        else:
            sizes.append(n)
            ins.append(i)
            outs.append(o)
    if not sizes:  # a window of one element
        return CopyJob(0, output, (1,), (0,), (0,), in_offset, out_offset + out_shift)
    return CopyJob(0, output, tuple(sizes), tuple(ins), tuple(outs), in_offset, out_offset + out_shift)


@memory.cache(16)  # per rank, 1 to 8: a new dtype per call costs more than the table's arithmetic
def grad_window_dtype(rank):
    """One row of a ``WindowGradPlan``'s table (windows.cu's ``GradWindow<rank>``): the
    window's output gradient's first element, and per dimension ``(start, count, dy_stride,
    step)`` with the step's ``fast_division`` magic for 64- and 32-bit indices and its shift."""
    dim = np.dtype(
        [
            ("start", np.int64),
            ("count", np.int64),
            ("dy_stride", np.int64),
            ("step", np.int64),
            ("magic64", np.uint64),
            ("magic32", np.uint32),
            ("shift", np.uint32),
        ],
        align=True,
    )
    return np.dtype([("dy_offset", np.int64), ("dims", dim, (rank,))], align=True)


def grad_window_table(offsets, sizes, strides, counts, dy_offsets, dy_strides, pairs=False, keep=None):
    """The table of a ``WindowGradPlan`` for ``slice1_batch``'s windows.

    Window ``n`` lies at ``offsets[n]`` (``(N, d)``) with ``sizes`` and signed ``strides``
    (``(d,)`` or ``(N, d)``) and takes ``counts`` (``(d,)`` or ``(N, d)``) elements; its
    gradient's element ``c`` lies at ``dy_offsets[n] + sum c * dy_strides[n]`` (elements;
    ``dy_strides`` ``(d,)`` or ``(N, d)``). ``pairs``: every element is a pair of reals, one
    more, innermost, dimension of 2. ``keep``: the dimensions of the output gradient that the
    plan keeps (it may drop dimensions of size 1, which every window takes whole), all by
    default. Returns ``N`` rows of ``grad_window_dtype(R)`` (``R`` dimensions: the kept ones,
    and the pair), as ``(N, W)`` unsigned 8-byte words, the table's tensor.

    Per window and dimension, the output gradient's element ``c`` was read from input
    coordinate ``start + step * c`` (``step`` signed, never 0), ``0 <= c < count``; a dimension
    read backwards (a negative step) is walked from its other end, so each row holds positive
    steps. What every window shares (``(d,)`` arrays) is written into each row as it is, with
    no ``(N, d)`` copy made: the table is built per call."""
    offsets, sizes, strides, counts, dy_strides = (
        np.asarray(a, np.int64) for a in (offsets, sizes, strides, counts, dy_strides)
    )
    if keep is not None:
        offsets, sizes, strides, counts, dy_strides = (
            a[..., keep] for a in (offsets, sizes, strides, counts, dy_strides)
        )
    n, rank = offsets.shape
    table = np.zeros(n, grad_window_dtype(rank + pairs))
    if not n:
        return table.view(np.uint64).reshape(0, table.dtype.itemsize // 8)
    dims = table["dims"]
    window = dims[:, :rank] if pairs else dims  # the windows' own dimensions (not the pair)
    step = np.abs(strides)
    window["count"], window["step"] = counts, step
    if int(strides.min()) < 0:
        back = strides < 0
        window["start"] = np.where(back, offsets + (sizes - 1) + strides * (counts - 1), offsets)
        window["dy_stride"] = np.where(back, -dy_strides, dy_strides)
        table["dy_offset"] = dy_offsets + np.where(back, dy_strides * (counts - 1), 0).sum(axis=-1)
    else:
        window["start"], window["dy_stride"], table["dy_offset"] = offsets, dy_strides, dy_offsets
    if pairs:  # the pair: two elements, one apart, read forwards (start 0)
        pair = dims[:, rank]
        pair["count"], pair["dy_stride"], pair["step"] = 2, 1, 1
    # The divisors' magic: 1 and shift 0 for a step of 1 (the common case, and the pair's);
    # the few other distinct steps each computed once.
    dims["magic64"], dims["magic32"] = 1, 1
    if int(step.max()) > 1:
        distinct = np.unique(step)
        at = np.searchsorted(distinct, step)
        magic = [(fast_division(v, 64), fast_division(v, 32)[0]) for v in distinct.tolist()]
        window["magic64"] = np.array([m[0][0] for m in magic], np.uint64)[at]
        window["magic32"] = np.array([m[1] for m in magic], np.uint32)[at]
        window["shift"] = np.array([m[0][1] for m in magic], np.uint32)[at]
    return table.view(np.uint64).reshape(n, table.dtype.itemsize // 8)


def fast_division(d: int, bits: int = 32) -> tuple[int, int]:
    """``(magic, shift)`` for ``Divider`` in common.cuh: ``n // d == (mulhi(n, m) + n) >> s``
    for ``0 <= n < 2**(bits - 1)``, where ``mulhi`` is the high half of the ``2 * bits``-bit
    product."""
    s = (d - 1).bit_length()
    return ((2**bits * ((1 << s) - d)) // d + 1) % 2**bits, s


def plan_split(element_size, input_sizes, output_sizes, axis, in_strides, out_strides_list) -> CopyPlan:
    """SPLIT: output ``k`` copies the input's block ``[start_k, start_k + size_k)`` along ``axis``."""
    jobs, start = [], 0
    for k, (sizes, out_strides) in enumerate(zip(output_sizes, out_strides_list)):
        jobs.append(CopyJob(0, k, tuple(sizes), tuple(in_strides), tuple(out_strides), in_strides[axis] * start, 0))
        start += sizes[axis]
    return CopyPlan(element_size, tuple(jobs)).simplified()


def plan_join(element_size, output_sizes, input_sizes, axis, in_strides_list, out_strides) -> CopyPlan:
    """JOIN: input ``k`` fills the output's block ``[start_k, start_k + size_k)`` along ``axis``."""
    jobs, start = [], 0
    for k, (sizes, in_strides) in enumerate(zip(input_sizes, in_strides_list)):
        jobs.append(CopyJob(k, 0, tuple(sizes), tuple(in_strides), tuple(out_strides), 0, out_strides[axis] * start))
        start += sizes[axis]
    return CopyPlan(element_size, tuple(jobs)).simplified()

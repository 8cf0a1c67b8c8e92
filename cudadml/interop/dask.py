"""Dask arrays in, lazy Dask arrays out: the adapter of ``dask.array.Array``.

The package registers this adapter (``adapters.register_adapter``), so this module, and
Dask, are imported only by a call that holds a Dask array, whose caller has imported Dask.
The call is validated whole, when it is made: its operation (``calls``) makes its descriptor for the
whole shapes (``runner.result_shapes``: the DirectML descriptor of the whole call, with every rule
and message of a NumPy call of those shapes), which gives the result shapes. (The one rule
lifted is a buffer's 2^32 - 1 element span: each chunk is a buffer of its own, checked here
when the graph is built and again by its own call.)

The graph is built from the plan. Every operator here reads, along each input axis, the
elements ``start + step * k`` for ``k`` in ``range(count)`` (SLICE, SLICE1 and basic
indexing: a window; SPLIT: a part, step 1; JOIN: the output's segment from one input), so an
output chunk's box maps to a box of ``k`` per axis, which the input's chunk boundaries cut
into pieces; their product over the axes is one operation per piece, of the call's kind, on
the one input chunk it reads, its window derived from the call's (``windows``), written into
a view of the output chunk, which its task allocates with the chunks' module (NumPy: the
host backend; CuPy: the kernels, on the worker's current device and stream). A task depends only on the input
chunks of its pieces. SLICE_GRAD and the gradient of basic indexing run the other way: an
output chunk collects the window positions inside it, cut where ``dy``'s chunks are; one
that holds none is zeros, with no dependency.

SPLIT and JOIN: an output chunk that is a whole input chunk *is* that chunk (its key
aliases the input's: no task, no copy; Dask arrays are immutable, so sharing is safe).
Elsewhere a piece is a one-part SPLIT (or one-array JOIN) of a view of the input chunk into
a view of the output chunk. By default the parts of a split are cut where the input's chunks are, and a join
has the inputs' chunks along its axis, so where part boundaries fall on chunk boundaries
nothing is copied.

This module names no operator: each declares which of the graphs above its call has, and its
operation on one piece (``Operator.chunked``, a ``Chunking``, in its module of ``cudadml.ops``);
the adapter builds the graph of that kind (``_BUILDERS``) from the declaration ``REGISTRY`` holds.
"""

from __future__ import annotations

import bisect
import importlib
import itertools
import math
from dataclasses import dataclass

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from ..core import calls
from ..core.errors import DescriptorError
from ..core.tensor import MAX_ELEMENTS, SPAN_RULE
from ..ops import REGISTRY
from ..run.bindings import check_element_dtype
from ..run.runner import PLAIN, result_shapes, run

# ---- tasks (module level, so that a distributed cluster's worker processes can unpickle them) ----


@dataclass(frozen=True)
class _Chunk:
    """What one output chunk's task does: allocate ``shape`` (zeros where ``zeros``) with the
    array module ``module``, then run each ``(operation, source, source box, box)``: the
    operation on ``sources[source][source box]`` into ``out[box]``. A dataclass, not a tuple,
    so that Dask does not look inside it for keys."""

    module: str
    shape: tuple
    dtype: np.dtype
    zeros: bool
    calls: tuple


def _fill(chunk, *sources):
    xp = np if chunk.module == "numpy" else importlib.import_module(chunk.module)
    out = (xp.zeros if chunk.zeros else xp.empty)(chunk.shape, chunk.dtype)
    for operation, source, source_box, box in chunk.calls:
        x = sources[source] if source_box is None else sources[source][source_box]
        into = out[(*box, Ellipsis)]  # a view, also of a 0-dimensional chunk
        run(operation, *PLAIN.arrays(type(operation), [x], [into]))
    return out


# ---- the call -------------------------------------------------------------------------------------


class DaskAdapter:
    """Calls holding a ``dask.array.Array`` (as any of their arrays or ``out``)."""

    def takes(self, inputs, outs):
        return any(isinstance(a, da.Array) for a in inputs) or any(isinstance(a, da.Array) for a in outs or ())

    def arrays(self, operation, inputs, outs):
        name, what = operation.function, operation.ARGUMENT
        if outs is not None:
            raise TypeError(
                f"{name}: out= cannot be used with Dask arrays: a Dask array is immutable and the result is a new "
                "lazy Dask array (dask.array.store(result, target) writes it into an existing array)"
            )
        modules = []
        for k, x in enumerate(inputs):
            where = f"{what}[{k}]" if what == "xs" else what
            if not isinstance(x, da.Array):
                raise TypeError(
                    f"{name}: {where} is a {type(x).__name__}; a call with Dask arrays takes only Dask arrays "
                    "(dask.array.from_array(a) makes one)"
                )
            modules.append(_module(name, x, where))
            if any(math.isnan(c) for c in itertools.chain.from_iterable(x.chunks)):
                raise ValueError(
                    f"{name}: {where} has unknown chunk sizes (NaN); call {where}.compute_chunk_sizes() first"
                )
            check_element_dtype(x.dtype, f"{operation.NAME}: {where}")
        if any(m != modules[0] for m in modules):
            raise TypeError(f"{name}: xs mix NumPy (host) and CuPy (device) chunks")
        if len(inputs) > 1:
            calls.common_dtype(operation.NAME, [x.dtype for x in inputs])
        return inputs, None

    def run(self, operation, inputs, outs, stream=None, chunks=None):
        if stream is not None:
            raise TypeError(
                f"{operation.function}: stream= does not apply to Dask arrays: each chunk runs on its worker's "
                "current stream"
            )
        chunked = REGISTRY[operation.function].chunked  # the operator's declaration (cudadml.ops)
        if chunked is None:
            raise _no_chunking(operation.function)
        span = SPAN_RULE.set(False)  # each chunk is a buffer of its own, checked below and by its own call
        try:
            shapes = _shapes(operation, inputs)
        finally:
            SPAN_RULE.reset(span)
        module = _module(operation.function, inputs[0], operation.ARGUMENT)
        result = _BUILDERS[chunked.kind](operation, inputs, module, shapes, chunks, chunked.piece)
        return result if isinstance(result, list) else [result]


ADAPTER = DaskAdapter()


def _no_chunking(name):
    """The refusal of an operator that declares no chunking, naming its forward operator
    where that one has one (``slice1_batch_grad``: slice1_batch does)."""
    forward = REGISTRY.get(name.removesuffix("_grad"))
    does = f" ({forward.name} does)" if forward is not None and forward.name != name and forward.chunked else ""
    return TypeError(f"{name}: does not take Dask arrays{does}")


def _shapes(operation, inputs):
    """The result shapes of the whole call: from its descriptor (``runner.result_shapes``), or those
    an operation with no descriptor of the whole call gives itself (``shapes``: a batch of
    windows)."""
    x = inputs[0]
    if hasattr(operation, "shapes"):
        return operation.shapes(x.dtype, x.shape)
    return result_shapes(operation, x.dtype, [a.shape for a in inputs])


def _module(name, x, where):
    """The array module of ``x``'s chunks, by its meta: ``"numpy"`` or ``"cupy"``."""
    meta = x._meta
    if type(meta) is np.ndarray:
        return "numpy"
    cupy = importlib.import_module("cupy") if type(meta).__module__.startswith("cupy") else None
    if cupy is not None and isinstance(meta, cupy.ndarray):
        return "cupy"
    raise TypeError(f"{name}: {where} has chunks of type {type(meta).__name__}; Dask arrays of NumPy or CuPy chunks")


# ---- one axis --------------------------------------------------------------------------------------


def _starts(sizes):
    """``(0, s0, s0 + s1, ..., total)``: where each chunk starts, and the end."""
    return tuple(itertools.accumulate(sizes, initial=0))


def _k_range(start, step, lo, hi, k0, k1):
    """The ``k`` in ``[k0, k1)`` whose index ``start + step * k`` lies in ``[lo, hi)`` (step != 0)."""
    if step > 0:
        ka, kb = -((start - lo) // step), -((start - hi) // step)
    else:
        ka, kb = (start - hi) // -step + 1, (start - lo) // -step + 1
    return max(k0, ka), min(k1, kb)


def _pieces(start, step, k0, k1, bounds):
    """``k`` in ``[k0, k1)`` read at ``start + step * k``, cut where the chunks ``bounds``
    (``_starts``) are: ``(chunk, index in the chunk of the first k, ka, kb)`` in ``k`` order."""
    if k0 >= k1:
        return []
    if step == 0:
        j = bisect.bisect_right(bounds, start) - 1
        return [(j, start - bounds[j], k0, k1)]
    first, last = start + step * k0, start + step * (k1 - 1)
    j0 = bisect.bisect_right(bounds, min(first, last)) - 1
    j1 = bisect.bisect_right(bounds, max(first, last)) - 1
    pieces = []
    for j in range(j0, j1 + 1):
        ka, kb = _k_range(start, step, bounds[j], bounds[j + 1], k0, k1)
        if ka < kb:
            pieces.append((j, start + step * ka - bounds[j], ka, kb))
    return sorted(pieces, key=lambda p: p[2])


def _follow(start, step, count, sizes):
    """Default output chunks along one axis: one per input chunk the window reads (for a zero
    step, chunks of the size of the one input chunk read)."""
    if count == 0:
        return (0,)
    bounds = _starts(sizes)
    if step == 0:
        j = bisect.bisect_right(bounds, start) - 1
        return da.core.normalize_chunks((sizes[j],), (count,))[0]
    return tuple(kb - ka for _, _, ka, kb in _pieces(start, step, 0, count, bounds))


def _chunks(requested, default, shape, dtype):
    if requested is None:
        return tuple(default)
    return da.core.normalize_chunks(requested, shape, dtype=dtype, previous_chunks=tuple(default))


def _check_chunk_spans(name, *chunkings):
    """Each chunk is a buffer of its own, and a buffer spans at most 2^32 - 1 elements."""
    for chunking in chunkings:
        largest = tuple(max(c, default=0) for c in chunking)
        if math.prod(largest) > MAX_ELEMENTS:
            raise DescriptorError(
                [
                    f"{name}: a chunk of shape {largest} holds {math.prod(largest)} elements, more than the "
                    "2^32 - 1 a buffer tensor may span; pass smaller chunks"
                ]
            )


def _array(name, dsk, chunks, module, dtype, dependencies):
    meta = da.utils.meta_from_array(dependencies[0]._meta, ndim=len(chunks), dtype=dtype)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=dependencies)
    return da.Array(graph, name, chunks, meta=meta)


def _blocks(chunks):
    """Every output chunk: its index, and per axis its ``[a, b)``."""
    bounds = [_starts(c) for c in chunks]
    for index in itertools.product(*(range(len(c)) for c in chunks)):
        yield index, [(b[i], b[i + 1]) for b, i in zip(bounds, index)]


def _empty_graph(name, x, module, dtype, chunks, zeros):
    """Chunks that read nothing: empty (a result with no element) or zeros."""
    dsk = {}
    for index, ranges in _blocks(chunks):
        shape = tuple(b - a for a, b in ranges)
        dsk[(name, *index)] = (_fill, _Chunk(module, shape, dtype, zeros, ()))
    return _array(name, dsk, chunks, module, dtype, [x])


# ---- windows: slice, slice1, strided_slice ("window") ------------------------------------------------


def _gather(name, sources, module, dtype, axis_map, chunks, plan, make_call, alias=False):
    """The tasks of a result with ``chunks``: ``plan(ranges)`` lists, for an output chunk of
    ``[a, b)`` per axis, each source it reads with the pieces per input axis ``d`` (result
    axis ``axis_map[d]``, or ``None`` where the result drops it): ``(chunk, local start, ka,
    kb)``, ``k`` being the result's index along that axis. ``make_call(source, pieces)``
    gives one piece's ``(operation, source box)``. With ``alias``, an output
    chunk that is one whole input chunk is that chunk's key."""
    rank, dsk = len(chunks), {}
    for index, ranges in _blocks(chunks):
        shape = tuple(b - a for a, b in ranges)
        reads = [] if 0 in shape else [(s, per) for s, per in plan(ranges) if all(per)]
        if alias and len(reads) == 1:
            s, per = reads[0]
            x = sources[s]
            if all(
                len(p) == 1 and p[0][1] == 0 and p[0][3] - p[0][2] == x.chunks[d][p[0][0]] for d, p in enumerate(per)
            ):
                dsk[(name, *index)] = (x.name, *(p[0][0] for p in per))
                continue
        keys, runs = {}, []
        for s, per in reads:
            for pieces in itertools.product(*per):
                box = [slice(None)] * rank
                for (_, _, ka, kb), r in zip(pieces, axis_map):
                    if r is not None:
                        box[r] = slice(ka - ranges[r][0], kb - ranges[r][0])
                at = keys.setdefault((sources[s].name, *(p[0] for p in pieces)), len(keys))
                operation, source_box = make_call(s, pieces)
                runs.append((operation, at, source_box, tuple(box)))
        dsk[(name, *index)] = (_fill, _Chunk(module, shape, dtype, False, tuple(runs)), *keys)
    return dsk


def _build_window(operation, inputs, module, shapes, chunks, local):
    """A window per input axis (slice, slice1, strided_slice): each piece the same operation
    on one chunk, ``local(operation, windows, rank)``: the operation on the piece's windows,
    ``(start, step, count)`` per input axis in the chunk it reads (``rank``: the result's)."""
    (x,), (shape,), dtype = inputs, shapes, inputs[0].dtype
    windows, axis_map = operation.windows, operation.axis_map
    name = operation.function
    token = f"{name}-{tokenize(x.name, operation, shape, chunks)}"
    if 0 in shape:
        return _empty_graph(token, x, module, dtype, _chunks(chunks, [(n,) for n in shape], shape, dtype), False)
    default = [(1,)] * len(shape)
    for d, r in enumerate(axis_map):
        if r is not None:
            default[r] = _follow(*windows[d], x.chunks[d])
    out_chunks = _chunks(chunks, default, shape, dtype)
    _check_chunk_spans(name, x.chunks, out_chunks)
    bounds = [_starts(c) for c in x.chunks]

    def plan(ranges):
        per_axis = []
        for d, r in enumerate(axis_map):
            start, step, _ = windows[d]
            a, b = (0, 1) if r is None else ranges[r]
            per_axis.append(_pieces(start, step, a, b, bounds[d]))
        return [(0, per_axis)]

    def make_call(_, pieces):
        windows_in_chunk = tuple(
            (first, windows[d][1] if kb - ka > 1 else 1, kb - ka) for d, (_, first, ka, kb) in enumerate(pieces)
        )
        return local(operation, windows_in_chunk, len(shape)), None

    dsk = _gather(token, inputs, module, dtype, axis_map, out_chunks, plan, make_call)
    return _array(token, dsk, out_chunks, module, dtype, inputs)


def _gradient_follow(start, step, count, dy_sizes, n):
    """Default chunks of a gradient's axis of size ``n``: the window cut where ``dy``'s chunks
    are (each output chunk holds the positions of one ``dy`` chunk), the untouched margins in
    chunks no wider than the widest of those or ``n`` over the number of ``dy`` chunks."""
    last = start + step * (count - 1)
    lo, hi = min(start, last), max(start, last) + 1
    cuts = {lo, hi}
    for k in _starts(dy_sizes)[1:-1]:
        if 0 < k < count:
            cuts.add(start + step * k if step > 0 else start + step * k + 1)
    cuts = sorted(cuts)
    inner = tuple(b - a for a, b in itertools.pairwise(cuts))
    width = max(*inner, -(-n // max(len(dy_sizes), 1)))
    before = da.core.normalize_chunks((width,), (lo,))[0] if lo else ()
    after = da.core.normalize_chunks((width,), (n - hi,))[0] if n > hi else ()
    return (*before, *inner, *after)


def _build_gradient(operation, inputs, module, shapes, chunks, local):
    """A window's gradient (slice_grad, strided_slice_grad), ``operation.windows_for(dy.shape)``
    per axis of the result: an output chunk gathers the window positions inside it, one
    operation per ``dy`` chunk they come from, each into the box from its first to its last
    position; a chunk that holds none is zeros and reads nothing. ``local(operation, extents,
    steps, counts, dy_shape)``: the operation on a piece, placing ``counts`` elements (per axis,
    every ``step``) of a ``dy`` box of ``dy_shape`` in a box of ``extents``."""
    (dy,), (shape,), dtype = inputs, shapes, inputs[0].dtype
    name, axis_map = operation.function, operation.axis_map
    token = f"{name}-{tokenize(dy.name, operation, shape, chunks)}"
    if 0 in shape or 0 in dy.shape:
        default = da.core.normalize_chunks("auto", shape, dtype=dtype)
        return _empty_graph(token, dy, module, dtype, _chunks(chunks, default, shape, dtype), 0 not in shape)
    windows = operation.windows_for(dy.shape)
    dy_axis = {r: d for d, r in enumerate(axis_map) if r is not None}  # dy's axis -> the window's
    # An axis of dy that no window has (``None`` in a key adds it) holds one element: read the
    # chunk that holds it (others along it are empty).
    added = [next(j for j, c in enumerate(dy.chunks[r]) if c) if r not in dy_axis else 0 for r in range(dy.ndim)]
    dy_sizes = [dy.chunks[r] if r is not None else (1,) for r in axis_map]
    default = [_gradient_follow(*w, sizes, n) for w, sizes, n in zip(windows, dy_sizes, shape)]
    out_chunks = _chunks(chunks, default, shape, dtype)
    _check_chunk_spans(name, dy.chunks, out_chunks)
    dy_bounds = [_starts(sizes) for sizes in dy_sizes]
    dsk = {}
    for index, ranges in _blocks(out_chunks):
        chunk_shape = tuple(b - a for a, b in ranges)
        per_axis = []  # per axis: (dy chunk, k0, k1, first position in the chunk, extent)
        for (start, step, count), (a, b), bounds in zip(windows, ranges, dy_bounds):
            ka, kb = _k_range(start, step, a, b, 0, count)
            pieces = []
            for j in range(bisect.bisect_right(bounds, ka) - 1, len(bounds) - 1) if ka < kb else ():
                k0, k1 = max(ka, bounds[j]), min(kb, bounds[j + 1])
                if k0 >= kb:
                    break
                if k0 < k1:
                    first = min(start + step * k0, start + step * (k1 - 1)) - a
                    pieces.append((j, k0 - bounds[j], k1 - bounds[j], first, (k1 - k0 - 1) * abs(step) + 1))
            per_axis.append(pieces)
        if not all(per_axis):
            dsk[(token, *index)] = (_fill, _Chunk(module, chunk_shape, dtype, True, ()))
            continue
        covered = all(sum(p[4] for p in pieces) == n for pieces, n in zip(per_axis, chunk_shape))
        keys, runs = {}, []
        for pieces in itertools.product(*per_axis):
            box = tuple(slice(first, first + extent) for _, _, _, first, extent in pieces)
            extents = tuple(extent for *_, extent in pieces)
            steps = tuple(w[1] for w in windows)
            dy_index = list(added)
            dy_box = [slice(None)] * dy.ndim
            dy_shape = [1] * dy.ndim
            for r, d in dy_axis.items():
                j, k0, k1 = pieces[d][:3]
                dy_index[r], dy_box[r], dy_shape[r] = j, slice(k0, k1), k1 - k0
            at = keys.setdefault((dy.name, *dy_index), len(keys))
            counts = tuple(k1 - k0 for _, k0, k1, _, _ in pieces)
            runs.append((local(operation, extents, steps, counts, tuple(dy_shape)), at, tuple(dy_box), box))
        dsk[(token, *index)] = (_fill, _Chunk(module, chunk_shape, dtype, not covered, tuple(runs)), *keys)
    return _array(token, dsk, out_chunks, module, dtype, inputs)


def _build_split(operation, inputs, module, shapes, chunks, piece):
    """Parts of one array along ``operation.axis`` (split): each part cut where ``x``'s chunks
    are (by default), whole chunks aliased; ``piece``: as ``_copy_call`` takes it."""
    (x,), dtype = inputs, inputs[0].dtype
    name, axis = operation.function, operation.axis
    if isinstance(chunks, list):
        if len(chunks) != len(shapes):
            raise ValueError(f"{name}: {len(chunks)} chunks= values for {len(shapes)} parts")
        requested = chunks
    else:
        requested = [chunks] * len(shapes)
    offsets = _starts([s[axis] for s in shapes])
    bounds = [_starts(c) for c in x.chunks]
    token = tokenize(x.name, operation, shapes, chunks)
    parts = []
    for p, shape in enumerate(shapes):
        default = list(x.chunks)
        default[axis] = _follow(offsets[p], 1, shape[axis], x.chunks[axis])
        out_chunks = _chunks(requested[p], default, shape, dtype)
        _check_chunk_spans(name, x.chunks, out_chunks)
        starts = [offsets[p] if d == axis else 0 for d in range(x.ndim)]

        def plan(ranges, starts=starts):
            return [(0, [_pieces(s, 1, a, b, bd) for s, (a, b), bd in zip(starts, ranges, bounds)])]

        part = f"{name}-{p}-{token}"
        dsk = _gather(part, inputs, module, dtype, range(x.ndim), out_chunks, plan, _copy_call(operation, piece), True)
        parts.append(_array(part, dsk, out_chunks, module, dtype, inputs))
    return parts


def _copy_call(operation, piece):
    """A piece of a split or join: ``piece(operation, counts)``, the operation copying a box of
    ``counts`` elements per axis (a one-part SPLIT, a one-array JOIN), on the piece's box."""

    def make_call(_, pieces):
        box = tuple(slice(first, first + kb - ka) for _, first, ka, kb in pieces)
        return piece(operation, tuple(kb - ka for _, _, ka, kb in pieces)), box

    return make_call


def _build_join(operation, inputs, module, shapes, chunks, piece):
    """Arrays joined along ``operation.axis`` (join): the inputs' chunks along the axis, and
    every input's chunk boundaries on the other axes (by default); whole chunks aliased;
    ``piece``: as ``_copy_call`` takes it."""
    (shape,), dtype = shapes, inputs[0].dtype
    name, axis = operation.function, operation.axis
    offsets = _starts([x.shape[axis] for x in inputs])
    default = []
    for d, n in enumerate(shape):
        if n == 0:
            default.append((0,))
        elif d == axis:
            default.append(tuple(c for x in inputs for c in x.chunks[axis] if c))
        else:
            cuts = sorted({b for x in inputs for b in _starts(x.chunks[d])})
            default.append(tuple(b - a for a, b in itertools.pairwise(cuts) if b > a))
    out_chunks = _chunks(chunks, default, shape, dtype)
    _check_chunk_spans(name, *(x.chunks for x in inputs), out_chunks)
    bounds = [[_starts(c) for c in x.chunks] for x in inputs]

    def plan(ranges):
        a, b = ranges[axis]
        reads = []
        for q in range(bisect.bisect_right(offsets, a) - 1, len(inputs)):  # the first input at a
            if offsets[q] >= b:
                break
            lo, hi = max(a, offsets[q]), min(b, offsets[q + 1])
            if lo < hi:
                starts = [-offsets[q] if d == axis else 0 for d in range(len(shape))]
                limits = [(lo, hi) if d == axis else r for d, r in enumerate(ranges)]
                reads.append((q, [_pieces(s, 1, k0, k1, bd) for s, (k0, k1), bd in zip(starts, limits, bounds[q])]))
        return reads

    token = f"{name}-{tokenize([x.name for x in inputs], operation, shape, chunks)}"
    dsk = _gather(token, inputs, module, dtype, range(len(shape)), out_chunks, plan, _copy_call(operation, piece), True)
    return _array(token, dsk, out_chunks, module, dtype, inputs)


# ---- many windows: slice1_batch ("windows") ---------------------------------------------------------


def _windows_block(region, offsets, sizes, strides, per_sample, feature_level, directml_types):
    """A task of ``_build_windows``: windows of one output chunk on the region of x they read."""
    from ..run.arrays import slice1_batch

    options = {"per_sample": per_sample, "feature_level": feature_level, "directml_types": directml_types}
    result = slice1_batch(region, window_offsets=offsets, window_sizes=sizes, window_strides=strides, **options)
    return result[0] if isinstance(result, list) else result  # per-window sizes: one window per task


def _build_windows(operation, inputs, module, shapes, chunks, piece=None):
    """Each output chunk holds a run of windows (with per-window sizes: each window is its own
    array) and is one task on the box of ``x`` its windows read (a Dask slice of ``x``, made one
    chunk), its windows moved to that box; with ``per_sample`` the runs follow ``x``'s chunks
    along its first axis (an empty chunk of ``x`` holds no window: no run, no chunk). ``chunks``:
    windows per chunk (an int, or sizes along the window axis). ``piece``: none (a task runs its
    windows whole)."""
    (x,) = inputs
    offsets, per_sample = operation.offsets, operation.per_sample
    n, d = offsets.shape
    sizes = np.broadcast_to(operation.sizes, (n, d))
    if operation.shared:
        default = x.chunks[0] if per_sample else da.core.normalize_chunks("auto", shapes[0], dtype=x.dtype)[0]
        runs = _starts(_chunks(chunks, [default], shapes[0][:1], x.dtype)[0] if n else ())
    else:
        runs = range(n + 1)
    options = (operation.feature_level, operation.directml_types)
    parts = []
    for a, b in itertools.pairwise(runs):
        if a == b:  # no window to read a box for (Dask's concatenate would drop its empty part)
            continue
        low, high = offsets[a:b].min(axis=0), (offsets[a:b] + sizes[a:b]).max(axis=0)
        box = tuple(slice(int(lo), int(hi)) for lo, hi in zip(low, high))
        region = x[(slice(a, b), *box) if per_sample else box]
        region = region.rechunk(region.shape)
        shape = (b - a, *shapes[0][1:]) if operation.shared else shapes[a]
        window = [w[a:b] if w.ndim == 2 else w for w in (operation.sizes, operation.strides)]
        block = region.map_blocks(
            _windows_block,
            offsets[a:b] - low,
            *window,
            per_sample,
            *options,
            chunks=tuple((c,) for c in shape),
            dtype=x.dtype,
            new_axis=[0] if len(shape) > region.ndim else None,  # the window axis
            drop_axis=[0] if len(shape) < region.ndim else [],  # a sample's own window
            meta=x._meta,
        )
        parts.append(block)
    if not operation.shared:
        return parts
    if not parts:
        return da.empty(shapes[0], dtype=x.dtype, meta=x._meta)
    return da.concatenate(parts, axis=0)


#: The graph of each kind of call (``Chunking.kind``), built from the operator's operation on
#: one piece.
_BUILDERS = {
    "window": _build_window,
    "gradient": _build_gradient,
    "split": _build_split,
    "join": _build_join,
    "windows": _build_windows,
}

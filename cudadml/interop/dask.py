"""Dask arrays in, lazy Dask arrays out: the array functions on arrays of NumPy or CuPy chunks.

The array functions hand a call here when it holds a ``dask.array.Array``, so this module,
and Dask, are imported only by a caller who has already imported Dask. The call is
validated whole, when it is made: the array function itself runs on stand-ins of the whole
shapes (zero-strided NumPy arrays) under ``arrays._validating``, so it builds the DirectML
descriptor of the whole call, with every rule and message of a NumPy call of those shapes,
and returns the result shapes, compiling and moving nothing. (The one rule lifted is a
buffer's 2^32 - 1 element span: each chunk is a buffer of its own, checked here when the
graph is built and again by its own call.)

The graph is built from the plan. Every operator here reads, along each input axis, the
elements ``start + step * k`` for ``k`` in ``range(count)`` (SLICE, SLICE1 and basic
indexing: a window; SPLIT: a part, step 1; JOIN: the output's segment from one input), so an
output chunk's box maps to a box of ``k`` per axis, which the input's chunk boundaries cut
into pieces; their product over the axes is one call of the same array function per piece,
on the one input chunk it reads, written with ``out=`` into a view of the output chunk,
which its task allocates with the chunks' module (NumPy: the host backend; CuPy: the
kernels, on the worker's current device and stream). A task depends only on the input
chunks of its pieces. SLICE_GRAD and the gradient of basic indexing run the other way: an
output chunk collects the window positions inside it, cut where ``dy``'s chunks are; one
that holds none is zeros, with no dependency.

SPLIT and JOIN: an output chunk that is a whole input chunk *is* that chunk (its key
aliases the input's: no task, no copy; Dask arrays are immutable, so sharing is safe).
Elsewhere a piece is a one-part SPLIT (or one-array JOIN) of a view of the input chunk into
``out=``. By default the parts of a split are cut where the input's chunks are, and a join
has the inputs' chunks along its axis, so where part boundaries fall on chunk boundaries
nothing is copied.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import inspect
import itertools
import math
from dataclasses import dataclass

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .. import arrays
from ..errors import DescriptorError, int_tuple
from ..tensor import MAX_ELEMENTS

# ---- tasks (module level, so that a distributed cluster's worker processes can unpickle them) ----


@dataclass(frozen=True)
class _Chunk:
    """What one output chunk's task does: allocate ``shape`` (zeros where ``zeros``) with the
    array module ``module``, then run each call ``(function, source, source box, args,
    kwargs, box)``: ``arrays.<function>(sources[source][source box], *args,
    out=out[box], **kwargs, **options)``. A dataclass, not a tuple, so that Dask does not
    look inside it for keys."""

    module: str
    shape: tuple
    dtype: np.dtype
    zeros: bool
    calls: tuple
    options: dict


def _fill(chunk, *sources):
    xp = np if chunk.module == "numpy" else importlib.import_module(chunk.module)
    out = (xp.zeros if chunk.zeros else xp.empty)(chunk.shape, chunk.dtype)
    for function, source, source_box, args, kwargs, box in chunk.calls:
        x = sources[source] if source_box is None else sources[source][source_box]
        into = out[(*box, Ellipsis)]  # a view, also of a 0-dimensional chunk
        fn = getattr(arrays, function)
        if function == "split":
            fn(x, 1, *args, out=[into], **kwargs, **chunk.options)
        elif function == "join":
            fn([x], *args, out=into, **kwargs, **chunk.options)
        else:
            fn(x, *args, out=into, **kwargs, **chunk.options)
    return out


# ---- the call -------------------------------------------------------------------------------------


@functools.cache
def _signature(fn):
    return inspect.signature(fn)


def call(fn, args, kwargs, chunks):
    """``fn(*args, **kwargs)`` for an array function ``fn`` given Dask arrays: lazy Dask arrays out."""
    name = fn.__name__
    arguments = _signature(fn).bind(*args, **kwargs)
    arguments.apply_defaults()
    arguments = dict(arguments.arguments)
    first = next(iter(arguments))  # x, dy or xs
    given = arguments[first]
    inputs = list(arrays._as_list(given, first, name)) if first == "xs" else [given]
    if arguments["out"] is not None:
        raise TypeError(
            f"{name}: out= cannot be used with Dask arrays: a Dask array is immutable and the result is a new "
            "lazy Dask array (dask.array.store(result, target) writes it into an existing array)"
        )
    if arguments["stream"] is not None:
        raise TypeError(
            f"{name}: stream= does not apply to Dask arrays: each chunk runs on its worker's current stream"
        )
    modules = []
    for k, x in enumerate(inputs):
        where = f"{first}[{k}]" if first == "xs" else first
        if not isinstance(x, da.Array):
            raise TypeError(
                f"{name}: {where} is a {type(x).__name__}; a call with Dask arrays takes only Dask arrays "
                "(dask.array.from_array(a) makes one)"
            )
        modules.append(_module(name, x, where))
        if any(math.isnan(c) for c in itertools.chain.from_iterable(x.chunks)):
            raise ValueError(f"{name}: {where} has unknown chunk sizes (NaN); call {where}.compute_chunk_sizes() first")
    if any(m != modules[0] for m in modules):
        raise TypeError(f"{name}: xs mix NumPy (host) and CuPy (device) chunks")
    stand_ins = [np.broadcast_to(np.empty((), x.dtype), x.shape) for x in inputs]
    with arrays._validating():
        entry = fn(**{**arguments, first: stand_ins if first == "xs" else stand_ins[0]})
    options = {"feature_level": arguments["feature_level"], "directml_types": arguments["directml_types"]}
    build = _BUILDERS[name]
    return build(name, inputs, modules[0], arguments, entry.shapes, chunks, options)


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
        dsk[(name, *index)] = (_fill, _Chunk(module, shape, dtype, zeros, (), {}))
    return _array(name, dsk, chunks, module, dtype, [x])


# ---- windows: slice, slice1, strided_slice ------------------------------------------------------------


def _window(arguments, name, shape):
    """``(windows, axis_map, key)``: ``(start, step, count)`` per input axis, the result axis
    of each (``None`` where an integer index drops it), and for basic indexing the key."""
    ndim = len(shape)
    if name in ("strided_slice", "strided_slice_grad"):
        windows, _, axis_map = arrays._parse_key(arrays._index_key(arguments["key"]), shape)
        return windows, axis_map
    if name == "slice":
        offsets = int_tuple(arguments["offsets"], "Offsets", name)
        counts = int_tuple(arguments["sizes"], "Sizes", name)
        steps = (1,) * ndim if arguments["strides"] is None else int_tuple(arguments["strides"], "Strides", name)
        return list(zip(offsets, steps, counts)), list(range(ndim))
    offsets, sizes, steps = arrays._window_args(
        name, ndim, arguments["window_offsets"], arguments["window_sizes"], arguments["window_strides"]
    )
    windows = [(o if s > 0 else o + n - 1, s) for o, n, s in zip(offsets, sizes, steps)]
    return windows, list(range(ndim))  # counts: added by the caller


def _local_key(axis_map, tokens, rank):
    """A basic index: ``tokens[d]`` for input axis ``d``, with ``None`` where the result has a
    new axis (``rank`` result axes, ``axis_map`` as ``_parse_key`` returns it)."""
    key, r = [], 0
    for d, token in enumerate(tokens):
        if axis_map[d] is not None:
            key += [None] * (axis_map[d] - r)
            r = axis_map[d] + 1
        key.append(token)
    return tuple(key + [None] * (rank - r))


def _gather(name, sources, module, dtype, axis_map, chunks, plan, make_call, options, alias=False):
    """The tasks of a result with ``chunks``: ``plan(ranges)`` lists, for an output chunk of
    ``[a, b)`` per axis, each source it reads with the pieces per input axis ``d`` (result
    axis ``axis_map[d]``, or ``None`` where the result drops it): ``(chunk, local start, ka,
    kb)``, ``k`` being the result's index along that axis. ``make_call(source, pieces)``
    gives one piece's ``(function, source box, args, kwargs)``. With ``alias``, an output
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
        keys, calls = {}, []
        for s, per in reads:
            for pieces in itertools.product(*per):
                box = [slice(None)] * rank
                for (_, _, ka, kb), r in zip(pieces, axis_map):
                    if r is not None:
                        box[r] = slice(ka - ranges[r][0], kb - ranges[r][0])
                at = keys.setdefault((sources[s].name, *(p[0] for p in pieces)), len(keys))
                function, source_box, args, kwargs = make_call(s, pieces)
                calls.append((function, at, source_box, args, kwargs, tuple(box)))
        dsk[(name, *index)] = (_fill, _Chunk(module, shape, dtype, False, tuple(calls), options), *keys)
    return dsk


def _single_step(windows):
    """A step of 1 where a window takes at most one element (any other step is irrelevant)."""
    return [(start, step if count > 1 else 1, count) for start, step, count in windows]


def _build_window(name, inputs, module, arguments, shapes, chunks, options):
    """slice, slice1, strided_slice: each piece one call of the same function on one chunk."""
    (x,), (shape,), dtype = inputs, shapes, inputs[0].dtype
    windows, axis_map = _window(arguments, name, x.shape)
    if name == "slice1":
        windows = [(start, step, n) for (start, step), n in zip(windows, shape)]
    windows = _single_step(windows)
    token = f"{name}-{tokenize(x.name, windows, axis_map, shape, chunks, options)}"
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
        local = [(first, windows[d][1], kb - ka) for d, (_, first, ka, kb) in enumerate(pieces)]
        if name == "slice":
            return name, None, ([s for s, _, _ in local], [n for *_, n in local], [st for _, st, _ in local]), {}
        if name == "slice1":
            offsets = [s if st > 0 else s + st * (n - 1) for s, st, n in local]
            sizes = [(n - 1) * abs(st) + 1 for _, st, n in local]
            return name, None, (offsets, sizes, [st for _, st, _ in local]), {"output_sizes": [n for *_, n in local]}
        tokens = []
        for (s, st, n), r in zip(local, axis_map):
            stop = s + st * (n - 1) + (1 if st > 0 else -1)
            tokens.append(s if r is None else slice(s, None if stop < 0 else stop, st))
        return name, None, (_local_key(axis_map, tokens, len(shape)),), {}

    dsk = _gather(token, inputs, module, dtype, axis_map, out_chunks, plan, make_call, options)
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


def _build_gradient(name, inputs, module, arguments, shapes, chunks, options):
    """slice_grad, strided_slice_grad: an output chunk gathers the window positions inside it,
    one call per ``dy`` chunk they come from, each into the box from its first to its last
    position; a chunk that holds none is zeros and reads nothing."""
    (dy,), (shape,), dtype = inputs, shapes, inputs[0].dtype
    windows, axis_map = _window(arguments, name, shape)
    if name == "slice_grad":
        windows = [(start, step, n) for (start, step), n in zip(windows, dy.shape)]
    windows = _single_step(windows)
    token = f"{name}-{tokenize(dy.name, windows, axis_map, shape, chunks, options)}"
    if 0 in shape or 0 in dy.shape:
        default = da.core.normalize_chunks("auto", shape, dtype=dtype)
        return _empty_graph(token, dy, module, dtype, _chunks(chunks, default, shape, dtype), 0 not in shape)
    dy_axis = {r: d for d, r in enumerate(axis_map) if r is not None}  # dy's axis -> the window's
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
            dsk[(token, *index)] = (_fill, _Chunk(module, chunk_shape, dtype, True, (), {}))
            continue
        covered = all(sum(p[4] for p in pieces) == n for pieces, n in zip(per_axis, chunk_shape))
        keys, calls = {}, []
        for pieces in itertools.product(*per_axis):
            box = tuple(slice(first, first + extent) for _, _, _, first, extent in pieces)
            extents = [extent for *_, extent in pieces]
            steps = [w[1] for w in windows]
            dy_index = [0] * dy.ndim
            dy_box = [slice(None)] * dy.ndim
            for r, d in dy_axis.items():
                j, k0, k1 = pieces[d][:3]
                dy_index[r], dy_box[r] = j, slice(k0, k1)
            at = keys.setdefault((dy.name, *dy_index), len(keys))
            if name == "slice_grad":
                args = (extents, [0] * len(extents), extents, steps)
            else:
                tokens = [
                    0 if r is None else slice(0, e, st) if st > 0 else slice(e - 1, None, st)
                    for e, st, r in zip(extents, steps, axis_map)
                ]
                args = (extents, _local_key(axis_map, tokens, dy.ndim))
            calls.append((name, at, tuple(dy_box), args, {}, box))
        dsk[(token, *index)] = (_fill, _Chunk(module, chunk_shape, dtype, not covered, tuple(calls), options), *keys)
    return _array(token, dsk, out_chunks, module, dtype, inputs)


def _build_split(name, inputs, module, arguments, shapes, chunks, options):
    """split: each part cut where ``x``'s chunks are (by default), whole chunks aliased."""
    (x,), dtype = inputs, inputs[0].dtype
    axis = arrays._normalize_axis(arguments["axis"], x.ndim, name)
    if isinstance(chunks, list):
        if len(chunks) != len(shapes):
            raise ValueError(f"{name}: {len(chunks)} chunks= values for {len(shapes)} parts")
        requested = chunks
    else:
        requested = [chunks] * len(shapes)
    offsets = _starts([s[axis] for s in shapes])
    bounds = [_starts(c) for c in x.chunks]
    token = tokenize(x.name, axis, shapes, chunks, options)
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
        dsk = _gather(
            part, inputs, module, dtype, range(x.ndim), out_chunks, plan, _copy_call(name, axis), options, True
        )
        parts.append(_array(part, dsk, out_chunks, module, dtype, inputs))
    return parts


def _copy_call(name, axis):
    def make_call(_, pieces):
        return name, tuple(slice(first, first + kb - ka) for _, first, ka, kb in pieces), (axis,), {}

    return make_call


def _build_join(name, inputs, module, arguments, shapes, chunks, options):
    """join: the inputs' chunks along the axis, and every input's chunk boundaries on the
    other axes (by default); whole chunks aliased."""
    (shape,), dtype = shapes, inputs[0].dtype
    axis = arrays._normalize_axis(arguments["axis"], inputs[0].ndim, name)
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

    token = f"{name}-{tokenize([x.name for x in inputs], axis, shape, chunks, options)}"
    dsk = _gather(
        token, inputs, module, dtype, range(len(shape)), out_chunks, plan, _copy_call(name, axis), options, True
    )
    return _array(token, dsk, out_chunks, module, dtype, inputs)


_BUILDERS = {
    "slice": _build_window,
    "slice1": _build_window,
    "strided_slice": _build_window,
    "slice_grad": _build_gradient,
    "strided_slice_grad": _build_gradient,
    "split": _build_split,
    "join": _build_join,
}

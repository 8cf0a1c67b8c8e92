"""How the array functions run a windows batch (``slice1_batch``) and its gradient on NumPy and
CuPy arrays: ``run_slice1_batch`` and ``run_slice1_batch_grad``, which ``runner.run`` calls for
their calls (``RUNS``).

They run as operators like the others (``WindowsBatchOperatorDesc`` and its gradient):
compiled for the sizes and layouts alone and kept (``_windows_op``, ``_window_grad_op``), while
the windows come with each call as a table (built by the plan layer, placed by the backend:
``stage``), bound as the operator's input 1. Windows copied per call (an out whose windows are
not packed, addresses that are not whole elements, windows of their own sizes, boxes of
MAX_DIMENSIONS) compile an operator whose table is given when compiling (owned by DML): it is
folded into copies, and the operator is not kept (its descriptor, of the sizes alone, is:
``_copied_desc``). What a call pays past the table is what the old per-call plans paid:
``benchmarks/host_cost.py`` times each route against a revision.
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np

from ..backends import CUDA
from ..core import calls, memory
from ..core import plan as _plan
from ..core.enums import TensorDataType, TensorFlags
from ..core.memory import address_of, element_strides
from ..core.tensor import MAX_DIMENSIONS, SPAN_RULE, BufferTensorDesc, packed_strides
from ..ops.windows import Slice1Batch, Slice1BatchGrad, WindowsBatchGradOperatorDesc, WindowsBatchOperatorDesc
from .compiled import CompiledOperator, check_views
from .results import (
    WORD,
    check_unbound_outs,
    check_words_rank,
    elements,
    empty,
    pairs,
    part_offsets,
    parts,
    result_view,
)

__all__ = ["RUNS", "run_slice1_batch", "run_slice1_batch_grad"]

_OWNED = TensorFlags.OWNED_BY_DML
_TABLE_TYPE = TensorDataType.from_dtype(_plan.WINDOW_TABLE_DTYPE)


_data_type = memory.cache(64)(calls.data_type)  # (the call checked the dtype: no message is made)


@memory.cache(1024)
def _tensor(data_type, sizes, flags=TensorFlags.NONE):
    """A windows batch's tensor: its batch holds any number of elements (cudadml's own operator
    indexes them in 64 bits; the bound of a DirectML buffer does not apply). Kept: windows of
    their own sizes describe a tensor per window, per call."""
    token = SPAN_RULE.set(False)
    try:
        return BufferTensorDesc(data_type, sizes, flags=flags)
    finally:
        SPAN_RULE.reset(token)


def _described(shape, strides, first=1):
    """``(sizes, element strides)`` of a descriptor's tensor for an array of ``shape`` and
    element ``strides`` whose elements it reads: the array's own; past MAX_DIMENSIONS, with
    size-1 dimensions dropped and dimensions merged where contiguous, the first ``first`` kept
    as they are (the same elements, fewer dimensions); None where that leaves too many."""
    if len(shape) <= MAX_DIMENSIONS:
        return tuple(shape), tuple(strides)
    sizes, (merged,) = _plan.merge_contiguous(shape[first:], strides[first:])
    if first + len(sizes) > MAX_DIMENSIONS:
        return None
    return (*shape[:first], *sizes), (*strides[:first], *merged)


def _view(a, itemsize):
    """``(shape, strides in elements)``; ``result_view`` refuses strides that are not whole
    before any of these reach a binding."""
    return a.shape, element_strides(a.shape, a.strides, itemsize)


def _misaligned(arrays, itemsize) -> bool:
    return any(address_of(a) % itemsize for a in arrays)


def _on(kind, stream):
    """The context to fill or copy into a result in: the call's stream for CuPy arrays."""
    return stream if kind == "cupy" and stream is not None else contextlib.nullcontext()


def _execute(op, inputs, table, outputs, kind, device, stream, new):
    """``op`` on ``inputs`` and the host ``table`` (its input 1), placed by the backend."""
    if kind == "numpy":  # host memory: the host backends read the table where it is
        op.execute_known_layouts([inputs[0], table, *inputs[1:]], outputs, stream, new)
        return
    table, stream, release = CUDA.stage(table, device, stream)
    try:
        op.execute_known_layouts([inputs[0], table, *inputs[1:]], outputs, stream, new)
    finally:  # the copy is queued: its memory stays until the stream passes this point
        release()


# ---- slice1_batch ---------------------------------------------------------------------------------


@memory.kept(memory.operator_bytes)  # (bounded in bytes with every other cache: see core.memory)
def _windows_op(dtype, directml_types, level, per_sample, x_view, out_view, box, box_strides, device):
    """The windows batch compiled for an input and an output of these layouts, whose windows
    walk ``box`` (``plan.window_table``'s): the table is bound per call."""
    t = _data_type(dtype, directml_types)
    n = out_view[0][0]
    x = _described(*x_view)
    desc = WindowsBatchOperatorDesc(
        _tensor(t, x[0]),
        _tensor(_TABLE_TYPE, (n, 1 + len(box))),
        [_tensor(t, (n, *box))],
        per_sample=per_sample,
        feature_level=level,
    )
    table_view = (n, 1 + len(box)), (1 + len(box), 1)
    views = ([(*x_view, x[1]), table_view], [(*out_view, (out_view[1][0], *box_strides))])
    return CompiledOperator(desc, device, views=views, load=False)


@memory.kept(functools.partial(memory.descriptor_bytes, shared=True))  # (of _tensor's tensors)
def _copied_desc(t, x_sizes, table_shape, out_sizes, per_sample, level):
    """The descriptor of a windows batch whose table is given when compiling: of the sizes
    alone (the table's values are not in it), so kept, as the tensors are."""
    return WindowsBatchOperatorDesc(
        _tensor(t, x_sizes),
        _tensor(_TABLE_TYPE, table_shape, _OWNED),
        [_tensor(t, s) for s in out_sizes],
        per_sample=per_sample,
        feature_level=level,
    )


def _windows_copied(operation, x, x_view, table, out_views, device, placed_at=None):
    """The windows batch of ``table`` (known now: folded into copies) into outputs each a
    tensor of ``out_views``' ``(shape, strides, tensor sizes, tensor strides)``."""
    t = _data_type(x.dtype, operation.directml_types)
    described = _described(*x_view)
    out_sizes = tuple(v[2] for v in out_views)
    desc = _copied_desc(t, described[0], table.shape, out_sizes, operation.per_sample, operation.feature_level)
    views = ([(*x_view, described[1])], [(v[0], v[1], v[3]) for v in out_views])
    return CompiledOperator(desc, device, views=views, placed_at=placed_at, load=False, constants={1: table})


def run_slice1_batch(operation, inputs, outs, stream):
    """``slice1_batch`` (the call ``operation``) on a NumPy or CuPy array: its results."""
    name, (x,) = operation.NAME, inputs
    dtype, e = x.dtype, x.itemsize
    shapes = operation.shapes(dtype, x.shape)
    if e == 16:  # as pairs of 8-byte words (directml_types=False)
        check_words_rank(operation, x.shape[operation.per_sample :])
        results = run_slice1_batch(operation.words(), [pairs(x, WORD)], outs and [pairs(outs[0], WORD)], stream)
        return outs if outs is not None else [elements(r, dtype) for r in results]
    kind = "numpy" if isinstance(x, np.ndarray) else "cupy"
    device = None if kind == "numpy" else x.data.device_id
    x_view = _view(x, e)
    if x.ndim > MAX_DIMENSIONS and _described(*x_view) is None:  # too many dimensions apart: a packed copy
        x = x.copy()
        x_view = _view(x, e)
    starts, steps = _plan.window_starts(
        operation.offsets, operation.sizes, operation.strides, x_view[1], operation.per_sample
    )
    if not operation.shared:
        if outs is not None:
            raise TypeError(f"{name}: out= takes one array, for windows of one size; per-window sizes give new arrays")
        return _window_parts(operation, x, x_view, starts, steps, shapes, stream, kind, device)
    new = outs is None
    out = empty(kind, shapes[0], dtype) if new else outs[0]
    if not new:
        result_view(name, 0, (out.shape, out.strides, out.dtype), shapes[0], dtype)
    n = len(starts)
    if n == 0:
        return [out]
    out_view = _view(out, e)
    box, box_strides, table = _plan.window_table(starts, steps, shapes[0][1:], out_view[1][1:])
    if len(box) < MAX_DIMENSIONS and _plan.is_packed(box, box_strides) and not _misaligned((x, out), e):
        key = (dtype, operation.directml_types, operation.feature_level, operation.per_sample)
        op = _windows_op(*key, x_view, out_view, box, box_strides, device)  # compiled once for these layouts
        _execute(op, [x], table, [out], kind, device, stream, new)
        return [out]
    if len(box) < MAX_DIMENSIONS:  # one output whose windows are not packed, or misaligned addresses
        bound = [out]
        out_views = [(*out_view, (n, *box), (out_view[1][0], *box_strides))]
    else:  # a box of MAX_DIMENSIONS: one output per window
        bound = list(out)
        out_views = [(*_view(o, e), box, box_strides) for o in bound]
    op = _windows_copied(operation, x, x_view, table, out_views, device)
    op.execute_known_layouts([x], bound, stream, new)
    return [out]


def _window_parts(operation, x, x_view, starts, steps, shapes, stream, kind, device):
    """Windows of sizes of their own: one result each, parts of one allocation (``split``'s),
    copied from a table given when compiling."""
    offsets, total = part_offsets(shapes, x.itemsize)
    buffer = empty(kind, (total // x.itemsize,), x.dtype)
    if shapes:
        table = np.empty((len(shapes), 1 + steps.shape[1]), _plan.WINDOW_TABLE_DTYPE)
        table[:, 0], table[:, 1:] = starts, steps
        out_views = [(s, strides, s, strides) for s, strides in zip(shapes, map(packed_strides, shapes))]
        op = _windows_copied(operation, x, x_view, table, out_views, device, placed_at=offsets)
        op.execute_known_layouts([x], [buffer] * len(shapes), stream, True)
    return parts(kind, buffer, shapes, offsets, x.dtype)


# ---- slice1_batch_grad ----------------------------------------------------------------------------


@memory.cache(64)
def _sum_kind(name, dtype, per_sample):
    """How ``window_grad`` combines gradients of ``dtype``: the data type they are read as (a
    complex number as a pair of its reals), and the real dtype that pairs are of, or None."""
    if per_sample:  # one window per element: moved, not added
        if dtype.itemsize <= 8:
            return TensorDataType.unsigned_of_width(dtype.itemsize), None
        return TensorDataType.UINT64, WORD
    if dtype.kind == "c":
        real = np.dtype(dtype.char.lower())
        return TensorDataType.from_dtype(real), real
    if (dtype.kind == "f" and dtype.itemsize in (2, 4, 8)) or dtype.kind in "iu":
        return TensorDataType.from_dtype(dtype.newbyteorder("=")), None
    raise TypeError(
        f"{name}: overlapping windows' gradients are added, which needs a float, complex or integer dtype, "
        f"not {dtype} (per_sample=True moves any dtype)"
    )


@memory.kept(memory.operator_bytes)
def _window_grad_op(t, out_type, level, per_sample, dy_views, target, keep, n, device):
    """The gradient of windows compiled for gradients and a result of these layouts
    (``target``: the result's shape and element strides; ``keep``: the dimensions of it that
    the operator's tensor keeps, or None: all): the table is bound per call."""
    dy_sizes = [(n, math.prod(shape[1:])) if len(shape) > MAX_DIMENSIONS else shape for shape, _ in dy_views]
    sizes, strides = target
    if keep is not None:
        sizes, strides = tuple(sizes[k] for k in keep), tuple(strides[k] for k in keep)
    rank = len(sizes) - per_sample
    words = _plan.grad_window_dtype(rank).itemsize // 8
    desc = WindowsBatchGradOperatorDesc(
        [_tensor(t, s) for s in dy_sizes],
        _tensor(TensorDataType.UINT64, (n, words)),
        _tensor(out_type, sizes),
        per_sample=per_sample,
        feature_level=level,
    )
    dy_views = [(*v, v[1]) for v in dy_views]
    views = ([dy_views[0], ((n, words), (words, 1)), *dy_views[1:]], [(*target, strides)])
    return CompiledOperator(desc, device, views=views, load=False)


@memory.kept(memory.operator_bytes)
def _window_grad_parts_op(*key):
    """``_window_grad_op`` for gradients of windows of their own sizes (one array each), counted
    apart (its own ``cache_info``); kept with the others, as long as calls use them."""
    return _window_grad_op.__wrapped__(*key)


def run_slice1_batch_grad(operation, inputs, outs, stream):
    """``slice1_batch_grad`` (the call ``operation``) on NumPy or CuPy gradients, one array or
    one per window: its result. An empty result, no windows and byte-swapped gradients take
    routes of their own; the others are added by ``_add_into``."""
    name, dy0, shape = operation.NAME, inputs[0], operation.input_shape
    dtype = dy0.dtype
    counts = operation.check(dtype, shape)
    operation.check_gradients(counts, [a.shape for a in inputs])
    kind = "numpy" if isinstance(dy0, np.ndarray) else "cupy"
    device = None if kind == "numpy" else dy0.data.device_id
    t, real = _sum_kind(name, dtype, operation.per_sample)
    new = outs is None
    out = empty(kind, shape, dtype) if new else outs[0]
    if not new:
        result_view(name, 0, (out.shape, out.strides, out.dtype), shape, dtype)
    if out.size == 0:
        return [out]
    if not len(operation.offsets):  # no window read anything: zeros (an operator has a window or more)
        check_unbound_outs(name, [out], kind)
        with _on(kind, stream):
            out.fill(0)
        return [out]
    if not operation.per_sample and not dtype.isnative:
        # The kernels add native numbers: byte-swapped gradients are added as native copies,
        # and the sum is swapped into the result.
        if not new:  # out's binding rules against the gradients as given (before copies)
            check_views(name, inputs, [out])
        native = [a.astype(dtype.newbyteorder("=")) for a in inputs]
        out[...] = run_slice1_batch_grad(operation, native, None, stream)[0]
        return [out]
    _add_into(operation, counts, inputs, out, new, t, real, kind, device, stream)
    return [out]


def _add_into(operation, counts, inputs, out, new, t, real, kind, device, stream):
    """The gradients ``inputs`` added into ``out`` (native numbers), through a result of
    their own where ``out`` cannot be the operator's: halves summed as floats (rounded once),
    a misaligned ``out``, or samples of MAX_DIMENSIONS dimensions that cannot merge."""
    name, dtype = operation.NAME, inputs[0].dtype
    # The kernel reads and writes whole elements: a gradient at an address that is not a
    # multiple of its element size is read from an aligned copy (dy is only read).
    if _misaligned(inputs, dtype.itemsize):
        if not new:  # out's binding rules against the gradients as given (before copies)
            check_views(name, inputs, [out])
        inputs = [a.copy() if address_of(a) % dtype.itemsize else a for a in inputs]
    if real is not None:  # complex numbers add as pairs of reals; 16-byte words move as pairs
        check_words_rank(operation, operation.input_shape)
        inputs, out_words = [pairs(a, real) for a in inputs], pairs(out, real)
    else:
        out_words = out
    summed = t == TensorDataType.FLOAT16 and not operation.per_sample  # halves are summed as floats, rounded once
    out_type = TensorDataType.FLOAT32 if summed else t
    staged = summed or address_of(out) % dtype.itemsize != 0
    if not staged and out_words.ndim > MAX_DIMENSIONS:
        staged = _unmerged(operation, out_words)
    if not staged:
        _add_gradients(operation, counts, inputs, out_words, new, t, out_type, real, kind, device, stream)
        return
    # Added into a result of their own, then into out (whose binding rules hold all the same).
    target = empty(kind, out_words.shape, np.float32 if summed else out_words.dtype)
    if not new:
        check_views(name, inputs, [out_words])
    _add_gradients(operation, counts, inputs, target, True, t, out_type, real, kind, device, stream)
    with _on(kind, stream):
        out_words[...] = target.astype(out_words.dtype)


def _kept_dimensions(shape, d):
    """For a result of more than MAX_DIMENSIONS dimensions (samples of MAX_DIMENSIONS; no pairs
    there: see check_words_rank) of ``shape`` (``d``: the windows' dimensions), those of the
    operator's tensor: size-1 dimensions, which every window takes whole, are left out (not the
    sample axis, nor the windows' last)."""
    return (0, *(k for k in range(1, len(shape)) if shape[k] != 1 or k == d))


def _unmerged(operation, target):
    """Whether ``target``'s samples (more than MAX_DIMENSIONS dimensions), too many even
    without those of size 1, cannot become one axis with the next (its first two axes are not
    packed)."""
    if len(_kept_dimensions(target.shape, operation.offsets.shape[1])) <= MAX_DIMENSIONS:
        return False
    strides = _view(target, target.itemsize)[1]
    return strides[0] != target.shape[1] * strides[1]


def _gradient_rows(operation, inputs, dy_views, e):
    """Each window's gradient as the table reads it: where it starts, in elements from
    ``inputs[0]``, and its strides along the windows' dimensions."""
    d = operation.offsets.shape[1]
    if operation.shared:  # one array: window k's gradient is its row k
        dy_strides = dy_views[0][1]
        return np.arange(len(operation.offsets), dtype=np.int64) * dy_strides[0], dy_strides[1 : 1 + d]
    base = address_of(inputs[0])
    dy_offsets = np.array([(address_of(a) - base) // e for a in inputs], np.int64)
    return dy_offsets, np.array([v[1][:d] for v in dy_views], np.int64).reshape(len(inputs), d)


def _add_gradients(operation, counts, inputs, target, new, t, out_type, real, kind, device, stream):
    """The gradients ``inputs`` (aligned, as ``t``) added into ``target`` (aligned, of
    ``out_type``) by an operator compiled for their layouts, bound to this call's table."""
    e, per_sample = inputs[0].itemsize, operation.per_sample
    # (``_view`` of each gradient, inline: one per window)
    dy_views = tuple((a.shape, element_strides(a.shape, a.strides, e)) for a in inputs)
    dy_offsets, dy_strides = _gradient_rows(operation, inputs, dy_views, e)
    offsets, target_view = operation.offsets, _view(target, target.itemsize)
    keep = window_keep = None
    if target.ndim > MAX_DIMENSIONS:
        keep = _kept_dimensions(target.shape, offsets.shape[1])
        window_keep = [k - 1 for k in keep[1:]]
    if keep is not None and len(keep) > MAX_DIMENSIONS:  # the samples become one axis with the next, windows of it
        (shape, strides), offsets = target_view, offsets.copy()
        target_view = (shape[0] * shape[1], *shape[2:]), strides[1:]
        offsets[:, 0] += np.arange(len(offsets), dtype=np.int64) * shape[1]
        per_sample, keep, window_keep = False, None, None  # disjoint windows: words added to 0 are moved
        t = out_type = TensorDataType.unsigned_of_width(target.itemsize)
    table = _plan.grad_window_table(
        offsets, operation.sizes, operation.strides, counts, dy_offsets, dy_strides, real is not None, window_keep
    )
    key = (t, out_type, operation.feature_level, per_sample, dy_views, target_view, keep, len(table), device)
    if operation.shared:
        op = _window_grad_op(*key)  # compiled once for these layouts
    else:  # gradients of windows of their own sizes: one array each, kept apart (sizes vary more)
        op = _window_grad_parts_op(*key)
        if not new:  # (the operator's input names count the table among them)
            check_views(operation.NAME, inputs, [target])
            new = True
    _execute(op, inputs, table, [target], kind, device, stream, new)


#: Per call type, its run: what ``runner.run`` calls for these calls in place of a compiled entry.
RUNS = {Slice1Batch: run_slice1_batch, Slice1BatchGrad: run_slice1_batch_grad}

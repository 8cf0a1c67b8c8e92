"""PyTorch's half of ``cudadml.fuse``: fused functions called with tensors, with autograd.

``cudadml.fuse`` (``graphs``) traces and compiles; here, provided to it through ``hooks``
(``hooks.fuse_torch``) and imported with torch at a fused call's first tensor: what a program's
tensors are kept under, the tensors as a memory kind (``_Tensors``: launched by their
addresses on torch's current stream, results from torch's allocator), and the autograd node of
a fused call (``FusedCall``), whose backward is another program, of the gradients
(``_backward``), run as one launch.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from ..core.memory import ALIGNMENT, aligned_part
from ..graphs.fuse import Program, Trace, source_key, source_of, tracing
from ..graphs.fused_arrays import Arrays, address_bits, host_buffers
from ..ops import Slice, Slice1, SliceGrad, Split
from .torch import NUMPY_DTYPES, differentiated, gradient_of, watched

__all__ = ["KIND", "avals", "call", "metas", "watched"]

#: The kind of arrays this half takes, as fuse names it.
KIND = "torch"
#: Gradient contributions that one ``slice`` reading an element several times may give (each
#: repeat is one more output of the backward graph, which torch adds).
MOST_REPEATS = 64


def metas(tensors):
    """What a fused function's programs for ``tensors`` are kept under: each one's dtype, shape
    and device."""
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise TypeError(f"cudadml.fuse: tensors on several devices ({', '.join(map(str, devices))})")
    return tuple([(t.dtype, tuple(t.shape), t.device) for t in tensors])


def avals(metas):
    """The dtypes and shapes of the traced arrays of tensors of ``metas``."""
    return [(_numpy_dtype(d), shape) for d, shape, _ in metas]


def _numpy_dtype(dtype):
    """The NumPy dtype a traced array of a tensor dtype has (its own, or integers of its width)."""
    found = NUMPY_DTYPES.get(dtype)
    return found if found is not None else np.dtype(f"u{dtype.itemsize}")


def call(program, tensors):
    """The outputs of ``program`` on ``tensors``: through its autograd node where they take
    part in autograd (or forward-mode AD), else run."""
    if not program.outputs:
        return []
    if differentiated(tensors):
        return list(FusedCall.apply(_Holder(program), *tensors))
    return _run(program, tensors)


class _Holder:
    """A program as one argument of an autograd Function (which would look into a tuple)."""

    __slots__ = ("program",)

    def __init__(self, program):
        self.program = program


def _run(program, tensors):
    """Run ``program`` on tensors, by their addresses, into tensors torch allocates."""
    # A conjugate or negative view is read as its values (a copy).
    tensors = [t.resolve_conj().resolve_neg() if t.is_conj() or t.is_neg() else t for t in tensors]
    key = (tuple([t.dtype for t in tensors]), tensors[0].device)
    memory = program.memories.get(key)
    if memory is None:
        memory = program.memories[key] = _Tensors(program, *key)
    return program.run(memory, tensors)


class _Tensors(Arrays):
    """PyTorch tensors of ``dtypes`` on ``device`` given to ``program`` (``Arrays``'
    interface): launched on the device's current torch stream, results from torch's allocator,
    each its own tensor (with its own version counter, as a result autograd may save)."""

    def __init__(self, program, dtypes, device):
        given = {}
        for dtype in dtypes:
            given.setdefault(_numpy_dtype(dtype), dtype)
        self.dtypes = {}
        for v in program.outputs:  # a result's dtype: an argument's of its bits, or torch's own
            found = given.get(v.dtype) or next((k for k, d in NUMPY_DTYPES.items() if d == v.dtype), None)
            if found is None:
                raise TypeError(f"cudadml.fuse: a result of dtype {v.dtype}, which torch has not")
            self.dtypes[v.dtype] = found
        if device.type not in ("cpu", "cuda"):
            raise TypeError(f"cudadml.fuse: tensors on {device} are not supported (CPU and CUDA tensors are)")
        self.torch_device, self.device = device, device.index  # (``device``: the graphs')
        self.kind = "numpy" if device.type == "cpu" else "cupy"

    @staticmethod
    def keys(used):
        return tuple([(t.stride(), t.data_ptr() % ALIGNMENT) for t in used])

    @staticmethod
    def geometry(t):
        size = t.element_size()
        return tuple(t.shape), tuple(s * size for s in t.stride()), size, t.data_ptr(), t.is_contiguous()

    def stage(self, t):
        nbytes = t.numel() * t.element_size()
        raw = torch.empty(nbytes + ALIGNMENT, dtype=torch.uint8, device=t.device)
        return aligned_part(raw, nbytes, ALIGNMENT).view(t.dtype).view(t.shape).copy_(t)

    def empty(self, shape, dtype):
        return torch.empty(shape, dtype=self.dtypes[dtype], device=self.torch_device)

    def zeros(self, shape, dtype):
        return torch.zeros(shape, dtype=self.dtypes[dtype], device=self.torch_device)

    def call(self, run, used):
        if run.staged:  # (rare: an address not whole elements, or too many dimensions)
            used = self.staged(run, used)
        compiled, device, dtypes = run.compiled, self.torch_device, self.dtypes
        values = [torch.empty(shape, dtype=dtypes[dtype], device=device) for shape, dtype, _ in compiled.parts]
        outs = [t.data_ptr() for t in values]
        ins = [t.data_ptr() + start for t, start in zip(used, run.starts)]
        if self.kind == "numpy":
            bound = (ins, outs), (host_buffers(ins, compiled, used), values), address_bits(outs)
            compiled.op.execute_bound(("numpy", *bound), None)
            return values
        C, index = torch._C, self.device
        bound = ("cupy", (ins, outs), (used, values), address_bits(outs))
        if C._cuda_getDevice() == index:
            compiled.op.execute_bound(bound, C._cuda_getCurrentRawStream(index))
        else:
            with torch.cuda.device(index):
                compiled.op.execute_bound(bound, C._cuda_getCurrentRawStream(index))
        return values


class FusedCall(torch.autograd.Function):
    """A fused call: forward, the program; backward, the program of its gradients (one launch),
    whose several contributions to one input torch adds."""

    @staticmethod
    def forward(ctx, holder, *tensors):
        ctx.holder = holder
        ctx.inputs = [(t.shape, t.dtype, t.device) for t in tensors]
        return tuple(_run(holder.program, list(tensors)))

    @staticmethod
    def backward(ctx, *grads):
        needs = tuple(ctx.needs_input_grad[1:])
        backward = _backward_of(ctx.holder.program, needs)
        sums = [None] * len(needs)
        if backward.graph_outputs or backward.outputs:
            parts = call(backward, list(grads))
            for k, leaf in zip(backward.targets, backward.leaves):
                sums[k] = parts[leaf] if sums[k] is None else sums[k] + parts[leaf]
        return (None, *sums)

    @staticmethod
    def jvp(ctx, _holder, *tangents):
        # The calls only move elements: the tangent of the results is the program on the tangents.
        tangents = [
            torch.zeros(shape, dtype=dtype, device=device) if t is None else t
            for t, (shape, dtype, device) in zip(tangents, ctx.inputs)
        ]
        return tuple(call(ctx.holder.program, tangents))


# ---- the gradient of a program ---------------------------------------------------------------------


def _backward_of(program, needs):
    """The program of ``program``'s gradients, kept per ``needs`` (whether each input wants one)."""
    backward = program.backwards.get(needs)
    if backward is None:
        backward = program.backwards[needs] = _backward(program, needs)
    return backward


def _backward(program, needs):
    """The program that takes the gradients of ``program``'s outputs to its inputs'.

    Each node's gradient is its operation's (SLICE and SLICE1: SLICE_GRAD; SLICE_GRAD: SLICE1;
    SPLIT and JOIN each other), the chain walked back from the results. A value that feeds
    several nodes (or is returned and fed on) receives several gradients: each stays its own
    value, carried back along its own chain, and arrives as one more output of the backward
    graph; ``targets`` says whose, and the caller adds them. A SPLIT's parts with one gradient
    each give one JOIN; other gradients of a part are placed by SLICE_GRAD, each an output.
    """
    trace = Trace()
    grads = [trace.value(("input", j), v.shape, v.dtype) for j, v in enumerate(program.outputs)]
    canonical = {}
    for k, v in enumerate(program.inputs):
        canonical[("input", k)] = v.shape
    for node in program.nodes:
        for port, v in enumerate(node.outputs):
            canonical[(id(node), port)] = v.shape
    contributions = {}

    def add(value, gradient):
        if source_of(value)[0] not in ("input", "node") or source_of(gradient)[0] in ("empty", "zeros"):
            return  # no elements, or zeros: nothing to add
        if source_of(value)[0] == "input" and not needs[source_of(value)[1]]:
            return
        key = source_key(value)
        if gradient.shape != canonical[key]:
            gradient = gradient.reshape(canonical[key])
        contributions.setdefault(key, []).append(gradient)

    for v, g in zip(program.outputs, grads):
        add(v, g)
    with tracing():
        for node in reversed(program.nodes):
            op, args = node.operation, node.args
            shapes = [a.shape for a in args]
            lists = [contributions.get(source_key(r)) if source_of(r)[0] == "node" else None for r in node.results]
            if not any(lists):
                continue
            if isinstance(op, Split):
                for r in _split_gradients(trace, op, node.results, shapes, lists):
                    add(args[0], r)
                continue
            for g in lists[0] or ():
                for k, r in _gradients(trace, op, shapes, g):
                    add(args[k], r)
    leaves, targets = [], []
    for k in range(len(program.inputs)):
        for g in contributions.get(("input", k), ()):
            leaves.append(g)
            targets.append(k)
    backward = Program(grads, leaves)
    backward.targets = targets
    return backward


def _split_gradients(trace, op, results, shapes, lists):
    """The gradients of a SPLIT's input from the lists of its parts' gradients (traced): a JOIN
    of the first of each where every part bound has one, and each other placed by SLICE_GRAD
    into zeros where its part lies."""
    bound = [lst for lst, r in zip(lists, results) if source_of(r)[0] == "node"]
    extra = [(k, g) for k, lst in enumerate(lists) for g in lst or ()]
    gradients = []
    if all(bound):
        first = [lst[0] if lst else trace.value(("empty",), r.shape, r.dtype) for lst, r in zip(lists, results)]
        gradient, gs = gradient_of(op, shapes, first)
        gradients += trace.record(gradient, gs)[:1]
        extra = [(k, g) for k, lst in enumerate(lists) for g in (lst or ())[1:]]
    for k, g in extra:
        start = sum(r.shape[op.axis] for r in results[:k])
        offsets = [start if d == op.axis else 0 for d in range(len(g.shape))]
        place = SliceGrad.of(g.shape, shapes[0], (), offsets, g.shape, None, None, op.directml_types)
        gradients += trace.record(place, [g])[:1]
    return gradients


def _gradients(trace, op, shapes, g):
    """``(k, gradient)`` of an operation's inputs from its result's gradient ``g`` (traced): one
    per input, or for a slice that read elements several times, one per repeat."""
    if isinstance(op, Slice):
        repeated = [d for d, (n, s) in enumerate(zip(op.sizes, op.strides)) if s == 0 and n > 1]
        if repeated:  # each repeat read the element again: its gradient is one more contribution
            count = math.prod(op.sizes[d] for d in repeated)
            if count > MOST_REPEATS:
                raise TypeError(
                    f"cudadml.fuse: the gradient of slice with zero strides that read elements {count} times is a "
                    f"sum of {count} parts (more than {MOST_REPEATS}, each an output of the backward graph); call "
                    "slice outside the fused function"
                )
            flag, steps = op.directml_types, [s or 1 for s in op.strides]
            parts = []
            for at in itertools.product(*(range(op.sizes[d]) for d in repeated)):
                where = dict(zip(repeated, at))
                offsets = [where.get(d, 0) for d in range(len(g.shape))]
                sizes = [1 if d in where else n for d, n in enumerate(g.shape)]
                (picked,) = trace.record(Slice1.of(g.shape, (), offsets, sizes, None, None, None, flag), [g])
                window = [(n - 1) * s + 1 for n, s in zip(picked.shape, steps)]
                place = SliceGrad.of(picked.shape, shapes[0], (), op.offsets, window, steps, None, flag)
                parts += [(0, r) for r in trace.record(place, [picked])]
            return parts
    gradient, gs = gradient_of(op, shapes, [g])
    return list(enumerate(trace.record(gradient, gs)))

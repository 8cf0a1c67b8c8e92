"""PyTorch tensors in, PyTorch tensors out, with autograd: the adapter of ``torch.Tensor``.

The package registers this adapter (``adapters.register_adapter``), so this module, and torch,
are imported only by a call that holds a tensor, whose caller has imported torch. A call's
operation (``calls``) runs through the runner: CUDA tensors by their addresses and layouts
(``runner.run_on_device``: the kernels, on the device of the tensors and their current torch
stream, into results from torch's allocator), CPU tensors as zero-copy NumPy views (the host
backend), wrapped back without a copy. (A CUDA call given a stream, or of 16-byte elements as
words, or of conjugate or negative views, runs on CuPy views of the tensors.) An ``out=`` is
written as torch's own ``out=`` writes: through its conjugate and negative bits, as an in-place
write that autograd sees (its version counter moves), and refused where torch refuses one.

The operations are PyTorch operators too, in the ``cudadml`` namespace: each registered
operator with a ``torch_schema`` (``torch.ops.cudadml.slice``, ``slice1``, ``slice_grad``,
``split``, ``join``, each with an ``out`` overload): a schema of tensors and integer lists (an
operation's fields), CPU and CUDA kernels (the runs above), a fake kernel for shapes
(``runner.result_shapes``: every DirectML rule at trace time), autograd and vmap rules (the
operator's ``gradient`` and ``batched``). ``strided_slice`` is ``slice1`` and a view that drops
and adds the index's size-1 axes; ``strided_slice_grad`` the view and ``slice_grad``. A call
goes through the operators whenever PyTorch is watching: compiling or exporting (Dynamo),
under a functorch transform (vmap, grad), a dispatch mode (fake tensors, tracing) or with a
tensor subclass (``watched``: an ``nn.Parameter`` is a plain tensor, as to torch's own ops).
Plain eager calls run the same kernels directly (the dispatcher's Python kernels would add
about 12 us to each), with the same backward as an autograd node. Under a
functorch transform a call is that autograd node (``_Function``), applied before the
dispatcher, as the transforms need: each transform's level runs its forward (through the
operators under vmap), backward or jvp.

Backward is another operation on the gradients (``gradient_of``: the operator's ``gradient``
rule, in its module of ``cudadml.ops``): SLICE and SLICE1 give
SLICE_GRAD, SLICE_GRAD gives SLICE1, SPLIT and JOIN give each other, ``strided_slice`` and
``strided_slice_grad`` each other. Because the backward runs through this adapter too, a
backward taken with ``create_graph=True`` is itself differentiable (double backward). Forward
mode (a jvp) is the same operation on the tangents: the operations are linear.
"""

from __future__ import annotations

import contextlib
import operator
import warnings

import numpy as np
import torch
from torch.autograd import forward_ad
from torch.autograd.graph import increment_version

from ..core.enums import FeatureLevel
from ..core.memory import kept, nested_bytes
from ..core.tensor import packed_strides
from ..ops import REGISTRY
from ..run.runner import ELEMENT_STRIDES, PLAIN, entry_for, result_shapes, run, run_on_device

#: Same-width integer types that carry the bits of tensor types NumPy lacks (bfloat16, float8).
_RAW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class TorchAdapter:
    """Calls holding a ``torch.Tensor`` (as their first array or first ``out``)."""

    def takes(self, inputs, outs):
        return isinstance(inputs[0], torch.Tensor) or (bool(outs) and isinstance(outs[0], torch.Tensor))

    def arrays(self, operation, inputs, outs):
        if _PLAIN.issuperset(map(type, inputs if outs is None else inputs + outs)):
            return inputs, outs
        for what, tensors in ((operation.ARGUMENT, inputs), ("out", outs or ())):
            for k, t in enumerate(tensors):
                if not isinstance(t, torch.Tensor):
                    where = f"{what}[{k}]" if len(tensors) > 1 or what == "xs" else what
                    raise TypeError(
                        f"{operation.function}: {where} is a {type(t).__name__}; "
                        "a call with torch tensors takes only tensors"
                    )
        return inputs, outs

    def run(self, operation, inputs, outs, stream=None, chunks=None):
        if chunks is not None:
            raise TypeError(f"{operation.function}: chunks= is for Dask arrays; this call has none")
        if outs is not None:
            _refuse_out(operation.function, inputs, outs)
        if watched(inputs if outs is None else inputs + outs):
            if type(operation) in _BATCHES:
                if torch.compiler.is_compiling():  # no operator: it runs eagerly, between graphs
                    return _between_graphs(self, operation, inputs, outs, stream)
                raise TypeError(
                    f"{operation.function}: has no torch operator (its windows are data, not a schema's integer "
                    "lists), so it cannot run under functorch transforms, dispatch modes or tensor subclasses"
                )
            if stream is not None:
                raise TypeError(
                    f"{operation.function}: stream= cannot be traced or transformed; leave it out (the call runs "
                    "on the current torch stream) or call outside torch.compile, export and functorch transforms"
                )
            if outs is None and torch._C._are_functorch_transforms_active():  # it needs _Function's rules
                return _listed(_FUNCTIONS[operation.function].apply(_Call(operation, None), *inputs))
            return _call_operator(operation, inputs, outs)
        return self.eager(operation, inputs, outs, stream)

    def eager(self, operation, inputs, outs, stream):
        if differentiated(inputs):  # never with outs: _refuse_out refused those
            return _listed(_FUNCTIONS[operation.function].apply(_Call(operation, stream), *inputs))
        return _run(operation, inputs, outs, stream)


def _listed(result):
    """An autograd Function's results as the adapter returns them: a list."""
    return list(result) if isinstance(result, tuple) else [result]


ADAPTER = TorchAdapter()
_between_graphs = torch.compiler.disable(TorchAdapter.eager)


def _run(operation, inputs, outs=None, stream=None):
    """``operation`` on the tensors ``inputs``: the results as tensors (``outs``, written in
    place, where given)."""
    results = None
    if stream is None and inputs[0].is_cuda and type(operation) not in _BATCHES:
        results = _run_addressed(operation, inputs, outs)
    if results is None:
        results = _run_views(operation, inputs, outs, stream)
    if outs is not None:  # as torch's in-place ops do: a tensor saved for backward, then written, refuses it
        increment_version(outs)
    return results


class TorchOutError(TypeError, RuntimeError):
    """An ``out=`` that torch's own ``out=`` refuses: a ``TypeError`` as the array functions
    document, a ``RuntimeError`` as torch raises."""


def _refuse_out(function, inputs, outs):
    """Refuses, before anything is written, the ``out=`` calls that torch's own ``out=`` refuses:
    a write into an inference tensor outside ``torch.inference_mode()``; under grad mode, one
    where an input requires grad (its result would need a graph) or an out does (a leaf, a view
    of one, a result of autograd: autograd holds it); one where an input carries a forward-mode
    tangent. ``torch.no_grad()`` allows the grad cases, as it allows torch's ``out=`` and
    in-place ops (how parameters are initialised)."""
    names = [f"out[{k}]" if len(outs) > 1 else "out" for k in range(len(outs))]
    for name, t in zip(names, outs):
        if t.is_inference() and not torch.is_inference_mode_enabled():
            raise TorchOutError(
                f"{function}: {name} is an inference tensor, which only code under torch.inference_mode() "
                "may write; pass a tensor made outside it, or call inside it"
            )
    if torch.is_grad_enabled():
        broken = ["an input requires grad"] if any(map(_REQUIRES_GRAD, inputs)) else []
        for name, t in zip(names, outs):
            if t.requires_grad:
                base = t._base
                what = (
                    "a leaf tensor that requires grad"
                    if t.is_leaf
                    else "a view of a leaf tensor that requires grad"
                    if base is not None and base.is_leaf
                    else "a result of autograd (it requires grad)"
                )
                broken.append(f"{name} is {what}")
        if broken:
            raise TorchOutError(
                f"{function}: out= cannot take part in autograd: {'; '.join(broken)}. "
                "Leave out= out, or write under torch.no_grad()"
            )
    if _tangents(inputs):
        raise TorchOutError(
            f"{function}: out= cannot take part in forward-mode AD: an input carries a tangent. "
            "Leave out= out, or pass the primals (forward_ad.unpack_dual(x).primal)"
        )


def _run_addressed(operation, inputs, outs):
    """``_run`` of CUDA tensors on the current stream, by their addresses and layouts: no CuPy
    view of any tensor, results allocated by torch. None for a call that needs views (16-byte
    elements as words; conjugate or negative views; tensors that differ in dtype or device,
    whose errors the views' route words)."""
    x = inputs[0]
    tdtype, index = x.dtype, x.get_device()
    dtype = NUMPY_DTYPES.get(tdtype) or _numpy_dtype(operation, tdtype)
    if dtype.itemsize == 16 and operation.directml_types is False:
        return None
    tensors = inputs if outs is None else inputs + outs
    if len(tensors) > 1 and (
        set(map(_DTYPE, tensors)) != {tdtype} or set(map(torch.Tensor.get_device, tensors)) != {index}
    ):
        return None
    if any(map(torch.Tensor.is_neg, tensors)) or (tdtype.is_complex and any(map(torch.Tensor.is_conj, tensors))):
        return None  # (a real tensor has a negative bit as the imaginary part of a conjugate)
    # Layouts keyed as torch gives them (sizes, element strides): every call reads each once.
    layouts = tuple(zip(map(_SHAPE, inputs), map(torch.Tensor.stride, inputs)))
    out_layouts = None if outs is None else tuple((o.shape, o.stride(), dtype) for o in outs)
    entry = entry_for(operation, ELEMENT_STRIDES, index, dtype, layouts, out_layouts)
    if outs is None:
        if entry.offsets is None:
            results = [x.new_empty(entry.shapes[0])]
            out_addresses = [results[0].data_ptr()]
        else:  # several: views of one allocation, as the entry places them
            buffer = x.new_empty(entry.total // dtype.itemsize)
            results = [buffer.as_strided(*part) for part in _parts(entry.shapes, entry.offsets, dtype.itemsize)]
            out_addresses = [buffer.data_ptr()] * len(results)
    else:
        results, out_addresses = outs, list(map(torch.Tensor.data_ptr, outs))
    if entry.zeros:  # the gradient of an empty selection: nothing was read
        results[0].zero_()
    addresses = list(map(torch.Tensor.data_ptr, inputs))
    stream = torch._C._cuda_getCurrentRawStream(index)
    if torch._C._cuda_getDevice() == index:
        run_on_device(entry, addresses, out_addresses, stream, outs is None, index)
    else:
        with torch.cuda.device(index):
            run_on_device(entry, addresses, out_addresses, stream, outs is None, index)
    return results


_DTYPE, _SHAPE = operator.attrgetter("dtype"), operator.attrgetter("shape")
_REQUIRES_GRAD = operator.attrgetter("requires_grad")
#: The types torch's own ops take as plain tensors, with no ``__torch_function__`` of their
#: own: a tensor, and a parameter (exactly: a subclass of either has its own).
_PLAIN = frozenset({torch.Tensor, torch.nn.Parameter})


@kept(nested_bytes)  # (bounded in bytes: a split's parts can be many)
def _parts(shapes, offsets, size):
    """``as_strided``'s arguments for each of several results of ``shapes``, packed, at byte
    ``offsets`` of one allocation of ``size``-byte elements."""
    return tuple((s, packed_strides(s), o // size) for s, o in zip(shapes, offsets))


def _run_views(operation, inputs, outs=None, stream=None):
    """``_run`` on views of the tensors: NumPy's of CPU tensors, CuPy's of CUDA tensors."""
    tensors = inputs + (outs or [])
    dtype = inputs[0].dtype
    raw = any(t.dtype not in _NUMPY for t in tensors)
    if raw:  # moved as integers of the same width, which must not hide a change of type
        for t in tensors:
            _numpy_dtype(operation, t.dtype)
        if any(t.dtype != dtype for t in tensors):
            raise TypeError(
                f"{operation.function}: the tensors' dtypes {sorted({str(t.dtype) for t in tensors})} differ"
            )
    with placed(inputs[0].device, stream) as stream:
        views = [view(t, raw) for t in inputs]
        memories = None if outs is None else [_memory(t) for t in outs]
        out_views = None if outs is None else [view(m, raw) for m in memories]
        views, out_views = PLAIN.arrays(type(operation), views, out_views)
        results = run(operation, views, out_views, stream)
        if outs is not None:
            for t, memory in zip(outs, memories):
                _read_through_bits(t, memory)
            return outs
        return [_tensor(r, dtype) for r in results]


@contextlib.contextmanager
def placed(device, stream):
    """Where a call on ``device`` runs. For CUDA: on that device, as CuPy's current stream,
    ``stream`` (a torch or CuPy stream, or any object with ``__cuda_stream__``), by default
    the current torch stream of the device, so the call is ordered with the torch work around
    it. Yields the ``stream=`` to pass on."""
    if device.type == "cpu":
        yield stream
        return
    if device.type != "cuda":
        raise TypeError(f"tensors on {device} are not supported (CPU and CUDA tensors are)")
    import cupy

    # torch's own work in the call (reading a conjugate input, an out's bits) follows it there
    on_torch = contextlib.nullcontext()
    if stream is None:
        stream = _current_stream(device.index)
    else:
        if not isinstance(stream, cupy.cuda.Stream):
            if hasattr(stream, "__cuda_stream__") and hasattr(cupy.cuda.Stream, "from_external"):
                stream = cupy.cuda.Stream.from_external(stream)
            else:  # CuPy 13, or a torch without the stream protocol
                stream = cupy.cuda.ExternalStream(stream.cuda_stream, device.index)
        on_torch = torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr, device=device))
    with cupy.cuda.Device(device.index), stream, on_torch:
        yield None


class _RawStream:
    """A CUDA stream handle as the stream protocol offers it (for ``Stream.from_external``)."""

    def __init__(self, handle):
        self.handle = handle

    def __cuda_stream__(self):
        return 0, self.handle


#: CuPy's view of each torch stream a call ran on, by (handle, device): asking torch for its
#: current stream object and wrapping it costs more than the rest of a small call.
_STREAMS: dict = {}


def _current_stream(index):
    handle = torch._C._cuda_getCurrentRawStream(index)
    stream = _STREAMS.get((handle, index))
    if stream is None:
        import cupy

        if len(_STREAMS) > 64:  # streams come and go: keep the recent ones
            _STREAMS.clear()
        if hasattr(cupy.cuda.Stream, "from_external"):
            with cupy.cuda.Device(index):
                stream = cupy.cuda.Stream.from_external(_RawStream(handle))
        else:  # CuPy 13
            stream = cupy.cuda.ExternalStream(handle, index)
        _STREAMS[(handle, index)] = stream
    return stream


def _memory(t):
    """``t``'s elements as a tensor without its conjugate and negative bits: the memory, which a
    write through NumPy or CuPy fills as it is (``_read_through_bits`` then applies the bits)."""
    if not (t.is_conj() or t.is_neg()):
        return t
    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        t.untyped_storage(), t.storage_offset(), t.shape, t.stride()
    )


def _read_through_bits(t, memory):
    """Makes ``memory`` (``_memory(t)``, just written with the results) read back as the results
    through ``t``'s conjugate and negative bits, as torch's own ``out=`` writes them: each bit is
    its own inverse, so it is applied to the memory in place. By torch, which has every dtype's
    kernels (NumPy 2.4's in-place ``negative`` skips elements of 16-byte-strided 4-byte views)."""
    if t.is_conj():
        memory.conj_physical_()
    if t.is_neg():
        memory.neg_()


def view(t, raw):
    """A zero-copy NumPy (CPU) or CuPy (CUDA) view of ``t``; ``raw``: of same-width integers. A
    conjugate or negative view of an input is read as its values (a copy)."""
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    if raw:
        t = t.view(_RAW[t.element_size()])
    if t.device.type != "cuda":
        return t.detach().numpy()
    import cupy  # a CuPy array made directly: through DLPack it costs several times more

    storage, address = t.untyped_storage(), t.data_ptr()
    memory = cupy.cuda.UnownedMemory(address, storage.nbytes() - (address - storage.data_ptr()), t, t.device.index)
    size = t.element_size()
    strides = tuple(s * size for s in t.stride())
    return cupy.ndarray(tuple(t.shape), _NUMPY[t.dtype], cupy.cuda.MemoryPointer(memory, 0), strides)


def _tensor(a, dtype):
    """The array ``a`` as a tensor of ``dtype``, without a copy."""
    t = torch.from_numpy(a) if isinstance(a, np.ndarray) else torch.from_dlpack(a)
    return t if t.dtype == dtype else t.view(dtype)


# ---- the registered operators --------------------------------------------------------------------


def watched(tensors):
    """Whether PyTorch is watching a call on ``tensors`` (its inputs and outs; see the module's
    docstring): then it goes through the registered operators, which tracing, transforms, modes
    and tensor subclasses see. The one rule for eager and fused calls (``cudadml.fuse``).

    An ``nn.Parameter`` is not watched: torch's own ops take it as the plain tensor it holds
    (its ``__torch_function__`` is disabled; their results are plain tensors), and autograd
    sees it as any tensor, through ``requires_grad`` and grad mode (``differentiated``)."""
    return (
        torch.compiler.is_compiling()
        or torch._C._are_functorch_transforms_active()
        or torch._C._len_torch_dispatch_stack() > 0
        or not _PLAIN.issuperset(map(type, tensors))
    )


# The memoized normalisers (``ops``, ``indexing``) are pure functions of their arguments, so
# Dynamo tracing through their caches, as it says it does, is exact: no warning for them.
warnings.filterwarnings(
    "ignore",
    message=r"Dynamo detected a call to a `functools\.lru_cache`-wrapped function at "
    r"'(calls|indexing|strided_slice|windows|torch)\.py",
    category=UserWarning,
)

try:
    _LIBRARY = torch.library.Library("cudadml", "DEF")
except RuntimeError:  # another copy of cudadml in this process (bench.py --against) defined them: they serve both
    _LIBRARY = None
#: A torch operator's schema after the array arguments: its operator's ``torch_schema`` (an
#: operation's fields, in order), then these (the feature level as its int).
_OPTIONS = "int feature_level, bool directml_types"
#: Operators with a descriptor of their own but no torch operator (``slice1_batch``, its
#: gradient): their windows are data (a table), not a schema's integer lists. They run on views,
#: through the runner's own route, and not under PyTorch's watch.
_BATCHES = frozenset(op.call for op in REGISTRY.values() if op.torch_schema is None and op.desc is not None)


def _fields(operation):
    """An operation's fields as an operator takes them."""
    return [list(f) if isinstance(f, tuple) else int(f) if isinstance(f, FeatureLevel) else f for f in operation]


def _operation(cls, fields):
    """The operation of an operator's arguments after its arrays."""
    *params, level, flag = fields
    params = [tuple(p) if isinstance(p, list) else p for p in params]
    return cls(*params, FeatureLevel.coerce(level), flag)


def _call_operator(operation, inputs, outs):
    """``operation`` through ``torch.ops.cudadml``: the list of results (``outs`` where given)."""
    cls, via = type(operation), REGISTRY[operation.function].via
    if via is not None:
        windowed, counts = via(operation)
        if cls.ARGUMENT == "dy":
            return _call_operator(windowed, [inputs[0].view(counts)], outs)
        if outs is not None:
            _call_operator(windowed, inputs, [outs[0].view(counts)])
            return outs
        return [_call_operator(windowed, inputs, None)[0].view(operation.result_shape)]
    operator, many = getattr(torch.ops.cudadml, operation.function), getattr(cls, "MANY_RESULTS", False)
    arrays = inputs if cls.ARGUMENT == "xs" else inputs[0]
    if outs is not None:
        operator.out(arrays, *_fields(operation), out=outs if many else outs[0])
        return outs
    result = operator(arrays, *_fields(operation))
    return list(result) if many else [result]


#: NumPy's dtype of a tensor dtype; others move as unsigned integers of their width.
_NUMPY = {
    torch.bool: np.bool_,
    torch.uint8: np.uint8,
    torch.int8: np.int8,
    torch.int16: np.int16,
    torch.int32: np.int32,
    torch.int64: np.int64,
    torch.uint16: np.uint16,
    torch.uint32: np.uint32,
    torch.uint64: np.uint64,
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.float64: np.float64,
    torch.complex64: np.complex64,
    torch.complex128: np.complex128,
}


#: The NumPy dtype object of each tensor dtype NumPy has.
NUMPY_DTYPES = {t: np.dtype(n) for t, n in _NUMPY.items()}


def _shapes(operation, tensors):
    """The result shapes of ``operation`` on ``tensors`` (sizes may be symbolic), after every
    DirectML rule."""
    return _result_shapes(operation, [tuple(t.shape) for t in tensors], tensors[0].dtype)


@kept(nested_bytes)  # (bounded in bytes: a join's shapes can be many)
def _result_shapes(operation, shapes, dtype):
    """``_shapes`` of concrete sizes, memoized: what a kernel allocates per call."""
    return _result_shapes(operation, list(shapes), dtype)


def _result_shapes(operation, shapes, dtype):
    return result_shapes(operation, _numpy_dtype(operation, dtype), shapes)


def _numpy_dtype(operation, dtype):
    """The NumPy dtype that moves a tensor dtype's elements: its own, or for a dtype NumPy lacks
    (bfloat16, float8) unsigned integers of its width, which only ``directml_types=False`` takes."""
    if dtype in _NUMPY:
        return np.dtype(_NUMPY[dtype])
    if operation.directml_types:
        argument = "xs[0]" if operation.ARGUMENT == "xs" else operation.ARGUMENT
        raise TypeError(
            f"{operation.function}: {argument}.dtype = {dtype} has no DirectML tensor data type; "
            "pass directml_types=False to move its elements as raw bits"
        )
    return np.dtype(f"u{dtype.itemsize}")


def _define(operator):
    """``torch.ops.cudadml.<name>`` and its ``out`` overload, of a registered operator with a
    ``torch_schema``: the array argument as its call names it (a list for ``xs``), one result
    or a list (``MANY_RESULTS``)."""
    name, cls, params = operator.name, operator.call, operator.torch_schema
    listed, many = cls.ARGUMENT == "xs", getattr(cls, "MANY_RESULTS", False)
    arrays = f"{'Tensor[]' if listed else 'Tensor'} {cls.ARGUMENT}"
    _LIBRARY.define(f"{name}({arrays}, {params}, {_OPTIONS}) -> {'Tensor[]' if many else 'Tensor'}")
    out = "Tensor(a!)[] out" if many else "Tensor(a!) out"  # returns nothing: functionalized, as custom ops must
    _LIBRARY.define(f"{name}.out({arrays}, {params}, {_OPTIONS}, *, {out}) -> ()")

    def kernel(arrays, *fields):
        tensors = list(arrays) if listed else [arrays]
        operation = _operation(cls, fields)
        # Results from torch's allocator (the stream-ordered one CUDA graphs capture), each its own.
        like = tensors[0]
        results = [
            like.new_empty(s) for s in _result_shapes(operation, tuple(tuple(t.shape) for t in tensors), like.dtype)
        ]
        _run(operation, tensors, results)
        return results if many else results[0]

    def out_kernel(arrays, *fields, out):
        tensors, outs = list(arrays) if listed else [arrays], list(out) if many else [out]
        _refuse_out(name, tensors, outs)  # for calls of the operator itself: the array functions refused already
        _run(_operation(cls, fields), tensors, outs)

    def fake(arrays, *fields):
        tensors = arrays if listed else [arrays]
        shapes = _shapes(_operation(cls, fields), tensors)
        results = [tensors[0].new_empty(s) for s in shapes]
        return results if many else results[0]

    def out_fake(arrays, *fields, out):
        _shapes(_operation(cls, fields), arrays if listed else [arrays])  # the rules, at trace time

    for key in ("CPU", "CUDA"):
        _LIBRARY.impl(name, kernel, key)
        _LIBRARY.impl(f"{name}.out", out_kernel, key)
    torch.library.register_fake(f"cudadml::{name}", fake, lib=_LIBRARY)
    torch.library.register_fake(f"cudadml::{name}.out", out_fake, lib=_LIBRARY)

    def setup_context(ctx, inputs, output):
        arrays, *fields = inputs
        tensors = arrays if listed else [arrays]
        ctx.operation, ctx.shapes = _operation(cls, fields), [tuple(t.shape) for t in tensors]

    def backward(ctx, *grads):
        grads = grads[0] if many else grads
        gradient, grads = gradient_of(ctx.operation, ctx.shapes, list(grads))
        results = ADAPTER.run(gradient, grads, None)
        return (results if listed else results[0], *[None] * (len(ctx.operation)))

    torch.library.register_autograd(f"cudadml::{name}", backward, setup_context=setup_context, lib=_LIBRARY)
    torch.library.register_vmap(f"cudadml::{name}", _batched(operator), lib=_LIBRARY)


def _batched(operator):
    """The vmap rule of an operator: the batch becomes a leading axis of the tensors, taken
    whole (a window of it all, or a part of every batch element: the operator's ``batched``):
    one launch. The rules hold per sample, as without vmap; where the batch axis alone breaks
    one (DirectML's rank limit at the feature level, a buffer's span), each sample is one call
    and the results are stacked."""
    cls = operator.call
    listed, many = cls.ARGUMENT == "xs", getattr(cls, "MANY_RESULTS", False)

    def rule(info, in_dims, arrays, *fields):
        operation, size = _operation(cls, fields), info.batch_size
        if listed:
            tensors = [
                t.movedim(d, 0) if d is not None else t.unsqueeze(0).expand(size, *t.shape)
                for t, d in zip(arrays, in_dims[0])
            ]
        elif in_dims[0] is None:
            return getattr(torch.ops.cudadml, operator.name)(arrays, *fields), None
        else:
            tensors = [arrays.movedim(in_dims[0], 0)]
        dtype = tensors[0].dtype
        # A sample's rules first: a call refused alone is refused batched, with its own message.
        shapes = _result_shapes(operation, [tuple(t.shape[1:]) for t in tensors], dtype)
        batched = operator.batched(operation, size)
        try:
            _result_shapes(batched, [tuple(t.shape) for t in tensors], dtype)
        except ValueError:  # DescriptorError, or a 16-byte element's word axis past the rank limit
            runs = [_call_operator(operation, [t[k] for t in tensors], None) for k in range(size)]
            results = [torch.stack(r) for r in zip(*runs)] if runs else [tensors[0].new_empty(0, *s) for s in shapes]
        else:
            results = _call_operator(batched, tensors, None)
        if many:
            return results, [0] * len(results)
        return results[0], 0

    return rule


if _LIBRARY is not None:
    for _operator in REGISTRY.values():
        if _operator.torch_schema is not None:
            _define(_operator)


# ---- autograd ------------------------------------------------------------------------------------


def differentiated(tensors):
    """Whether an eager call on ``tensors`` runs as its autograd Function: when grad mode
    records and an input requires grad, or when an input carries a forward-mode tangent."""
    return (torch.is_grad_enabled() and any(map(_REQUIRES_GRAD, tensors))) or _tangents(tensors)


def _tangents(tensors):
    """Whether one of ``tensors`` carries a forward-mode tangent. The dual level is read first:
    outside one (nearly every call) no tensor has a tangent, and unpacking costs."""
    return (
        forward_ad._current_level >= 0
        and torch._C._is_fwd_grad_enabled()
        and any(forward_ad.unpack_dual(t).tangent is not None for t in tensors)
    )


def _packed(operation, results):
    """An operation's list of results as an autograd Function returns them."""
    return tuple(results) if getattr(operation, "MANY_RESULTS", False) else results[0]


class _Function(torch.autograd.Function):
    """An array function's call as an autograd node; one subclass per array function, so that
    ``grad_fn`` names it (``Slice1Backward``). In the setup_context style, with a jvp and vmap
    through the operators, so functorch transforms take it (torch.library's autograd of the
    operators has no setup_context, which they refuse): calls under a transform apply it before
    the dispatcher, and each transform's level runs forward, backward or jvp below it."""

    generate_vmap_rule = True  # forward under vmap calls the operators, whose vmap rules batch

    @staticmethod
    def forward(call, *inputs):
        operation, inputs = call.operation, list(inputs)
        if watched(inputs):  # batched tensors, or a mode (fake tensors) below the transforms
            return _packed(operation, _call_operator(operation, inputs, None))
        return _packed(operation, _run(operation, inputs, None, call.stream))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.call, *tensors = inputs
        ctx.shapes = [tuple(t.shape) for t in tensors]

    @staticmethod
    def backward(ctx, *grads):
        gradient, grads = gradient_of(ctx.call.operation, ctx.shapes, list(grads))
        return None, *ADAPTER.run(gradient, grads, None)

    @staticmethod
    def jvp(ctx, _call, *tangents):
        # The operations only move elements, so they are linear: op(x)'s tangent is op(tangent).
        # An input without one (of a join) has zeros, of the dtype and device all inputs share.
        given = next(t for t in tangents if t is not None)
        tangents = [given.new_zeros(s) if t is None else t for t, s in zip(tangents, ctx.shapes)]
        operation = ctx.call.operation
        return _packed(operation, ADAPTER.run(operation, tangents, None, ctx.call.stream))


class _Call:
    """A Function's operation and stream, as one argument that functorch takes whole (it would
    flatten an operation, a NamedTuple, into its fields, which no gradient matches)."""

    __slots__ = ("operation", "stream")

    def __init__(self, operation, stream):
        self.operation, self.stream = operation, stream


def gradient_of(op, shapes, grads):
    """The operation that takes an operation's result gradients to its input gradients, and
    the gradients it takes: its operator's ``gradient`` rule. Gradients are validated at the
    newest feature level (SLICE_GRAD appeared after SLICE)."""
    return REGISTRY[op.function].gradient(op, shapes, grads)


_FUNCTIONS = {
    name: type("".join(w.capitalize() for w in name.split("_")), (_Function,), {"__module__": __name__})
    for name in REGISTRY
}

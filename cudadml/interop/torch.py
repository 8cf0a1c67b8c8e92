"""PyTorch tensors in, PyTorch tensors out, with autograd: the adapter of ``torch.Tensor``.

The package registers this adapter (``adapters.register_adapter``), so this module, and torch,
are imported only by a call that holds a tensor, whose caller has imported torch. A call's
operation (``calls``) runs through the runner: CUDA tensors by their addresses and layouts
(``runner.run_on_device``: the kernels, on the device of the tensors and their current torch
stream, into results from torch's allocator), CPU tensors as zero-copy NumPy views (the host
backend), wrapped back without a copy. (A CUDA call given a stream, or of 16-byte elements as
words, or of conjugate views, runs on CuPy views of the tensors.)

The operations are PyTorch operators too, in the ``cudadml`` namespace
(``torch.ops.cudadml.slice``, ``slice1``, ``slice_grad``, ``split``, ``join``, each with an
``out`` overload): a schema of tensors and integer lists (an operation's fields), CPU and CUDA
kernels (the runs above), a fake kernel for shapes (``runner.describe``: every DirectML rule
at trace time), autograd and vmap rules. ``strided_slice`` is ``slice1`` and a view that drops
and adds the index's size-1 axes; ``strided_slice_grad`` the view and ``slice_grad``. A call
goes through the operators whenever PyTorch is watching: compiling or exporting (Dynamo),
under a functorch transform (vmap, grad), a dispatch mode (fake tensors, tracing) or with a
tensor subclass. Plain eager calls run the same kernels directly (the dispatcher's Python
kernels would add about 12 us to each), with the same backward as an autograd node.

Backward is another operation on the gradients (``_gradient``): SLICE and SLICE1 give
SLICE_GRAD, SLICE_GRAD gives SLICE1, SPLIT and JOIN give each other, ``strided_slice`` and
``strided_slice_grad`` each other. Because the backward runs through this adapter too, a
backward taken with ``create_graph=True`` is itself differentiable (double backward).
"""

from __future__ import annotations

import contextlib
import functools
import operator
import warnings

import numpy as np
import torch

from .. import calls
from ..enums import FeatureLevel
from ..indexing import window_params
from ..runner import ELEMENT_STRIDES, PLAIN, describe, entry_for, run, run_on_device
from ..tensor import packed_strides

#: Same-width integer types that carry the bits of tensor types NumPy lacks (bfloat16, float8).
_RAW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


class TorchAdapter:
    """Calls holding a ``torch.Tensor`` (as their first array or first ``out``)."""

    def takes(self, inputs, outs):
        return isinstance(inputs[0], torch.Tensor) or (bool(outs) and isinstance(outs[0], torch.Tensor))

    def arrays(self, operation, inputs, outs):
        if set(map(type, inputs if outs is None else inputs + outs)) == _PLAIN_TENSOR:
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
        if outs is not None and torch.is_grad_enabled() and any(map(_REQUIRES_GRAD, inputs)):
            raise TypeError(
                f"{operation.function}: out= cannot take part in autograd and an input requires grad: "
                "leave out= out, or run under torch.no_grad()"
            )
        if _watched(inputs, outs):
            if isinstance(operation, _BATCHES):
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
            return _call_operator(operation, inputs, outs)
        return self.eager(operation, inputs, outs, stream)

    def eager(self, operation, inputs, outs, stream):
        if torch.is_grad_enabled() and any(map(_REQUIRES_GRAD, inputs)):
            result = _FUNCTIONS[operation.function].apply(operation, stream, *inputs)
            return list(result) if isinstance(result, tuple) else [result]
        return _run(operation, inputs, outs, stream)


ADAPTER = TorchAdapter()
_between_graphs = torch.compiler.disable(TorchAdapter.eager)


def _run(operation, inputs, outs=None, stream=None):
    """``operation`` on the tensors ``inputs`` (and ``outs``): the results as tensors."""
    if stream is None and inputs[0].is_cuda and type(operation) not in _BATCHES:
        results = _run_addressed(operation, inputs, outs)
        if results is not None:
            return results
    return _run_views(operation, inputs, outs, stream)


def _run_addressed(operation, inputs, outs):
    """``_run`` of CUDA tensors on the current stream, by their addresses and layouts: no CuPy
    view of any tensor, results allocated by torch. None for a call that needs views (16-byte
    elements as words; conjugate or negative views; tensors that differ in dtype or device,
    whose errors the views' route words)."""
    x = inputs[0]
    tdtype, index = x.dtype, x.get_device()
    dtype = _DTYPES.get(tdtype) or _numpy_dtype(operation, tdtype)
    if dtype.itemsize == 16 and operation.directml_types is False:
        return None
    tensors = inputs if outs is None else inputs + outs
    if len(tensors) > 1 and (
        set(map(_DTYPE, tensors)) != {tdtype} or set(map(torch.Tensor.get_device, tensors)) != {index}
    ):
        return None
    if tdtype.is_complex and any(t.is_conj() or t.is_neg() for t in tensors):
        return None
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
_PLAIN_TENSOR = {torch.Tensor}


@functools.lru_cache(maxsize=256)
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
    with _placed(inputs[0].device, stream) as stream:
        views = [_view(t, raw) for t in inputs]
        out_views = None if outs is None else [_view(t, raw) for t in outs]
        views, out_views = PLAIN.arrays(type(operation), views, out_views)
        results = run(operation, views, out_views, stream)
        if outs is not None:
            return outs
        return [_tensor(r, dtype) for r in results]


@contextlib.contextmanager
def _placed(device, stream):
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

    if stream is None:
        stream = _current_stream(device.index)
    elif not isinstance(stream, cupy.cuda.Stream):
        if hasattr(stream, "__cuda_stream__") and hasattr(cupy.cuda.Stream, "from_external"):
            stream = cupy.cuda.Stream.from_external(stream)
        else:  # CuPy 13, or a torch without the stream protocol
            stream = cupy.cuda.ExternalStream(stream.cuda_stream, device.index)
    with cupy.cuda.Device(device.index), stream:
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


def _view(t, raw):
    """A zero-copy NumPy (CPU) or CuPy (CUDA) view of ``t``; ``raw``: of same-width integers."""
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


def _watched(inputs, outs):
    """Whether PyTorch is watching the call (see the module's docstring): then it goes through
    the registered operators, which tracing, transforms and modes see."""
    return (
        torch.compiler.is_compiling()
        or torch._C._are_functorch_transforms_active()
        or torch._C._len_torch_dispatch_stack() > 0
        or set(map(type, inputs if outs is None else inputs + outs)) != _PLAIN_TENSOR
    )


# The memoized normalisers (``calls``, ``indexing``) are pure functions of their arguments, so
# Dynamo tracing through their caches, as it says it does, is exact: no warning for them.
warnings.filterwarnings(
    "ignore",
    message=r"Dynamo detected a call to a `functools\.lru_cache`-wrapped function at '(calls|indexing|torch)\.py",
    category=UserWarning,
)

try:
    _LIBRARY = torch.library.Library("cudadml", "DEF")
except RuntimeError:  # another copy of cudadml in this process (bench.py --against) defined them: they serve both
    _LIBRARY = None
#: Per operator: the operation it runs and its schema after the array arguments (an
#: operation's fields, in order, the feature level as its int).
_OPERATORS = {
    "slice": (calls.Slice, "int[] offsets, int[] sizes, int[] strides"),
    "slice1": (calls.Slice1, "int[] offsets, int[] sizes, int[] strides, int[] output_sizes"),
    "slice_grad": (calls.SliceGrad, "int[] input_shape, int[] offsets, int[] sizes, int[] strides"),
    "split": (calls.Split, "int axis, int[] sizes"),
    "join": (calls.Join, "int axis"),
}
_NAMES = {cls: name for name, (cls, _) in _OPERATORS.items()}
_OPTIONS = "int feature_level, bool directml_types"


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
    if isinstance(operation, (calls.StridedSlice, calls.StridedSliceGrad)):
        counts = tuple(n for _, _, n in operation.windows)  # the index's axes, all kept
        window = window_params(operation.windows)
        options = operation.feature_level, operation.directml_types
        if isinstance(operation, calls.StridedSlice):
            sliced = calls.Slice1(*window, counts, *options)
            if outs is not None:
                torch.ops.cudadml.slice1.out(inputs[0], *_fields(sliced), out=outs[0].view(counts))
                return outs
            return [torch.ops.cudadml.slice1(inputs[0], *_fields(sliced)).view(operation.result_shape)]
        placed = calls.SliceGrad(operation.input_shape, *window, *options)
        dy = inputs[0].view(counts)
        if outs is not None:
            torch.ops.cudadml.slice_grad.out(dy, *_fields(placed), out=outs[0])
            return outs
        return [torch.ops.cudadml.slice_grad(dy, *_fields(placed))]
    operator = getattr(torch.ops.cudadml, _NAMES[type(operation)])
    arrays = inputs if isinstance(operation, calls.Join) else inputs[0]
    if outs is not None:
        operator.out(arrays, *_fields(operation), out=outs if isinstance(operation, calls.Split) else outs[0])
        return outs
    result = operator(arrays, *_fields(operation))
    return list(result) if isinstance(operation, calls.Split) else [result]


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
_DTYPES = {t: np.dtype(n) for t, n in _NUMPY.items()}


def _shapes(operation, tensors):
    """The result shapes of ``operation`` on ``tensors`` (sizes may be symbolic), after every
    DirectML rule."""
    return _described(operation, [tuple(t.shape) for t in tensors], tensors[0].dtype)


@functools.lru_cache(maxsize=1024)
def _result_shapes(operation, shapes, dtype):
    """``_shapes`` of concrete sizes, memoized: what a kernel allocates per call."""
    return _described(operation, list(shapes), dtype)


def _described(operation, shapes, dtype):
    return describe(operation, _numpy_dtype(operation, dtype), shapes)


def _numpy_dtype(operation, dtype):
    """The NumPy dtype that moves a tensor dtype's elements: its own, or for a dtype NumPy lacks
    (bfloat16, float8) unsigned integers of its width, which only ``directml_types=False`` takes."""
    if dtype in _NUMPY:
        return np.dtype(_NUMPY[dtype])
    if operation.directml_types:
        raise TypeError(
            f"{operation.function}: dtype {dtype} has no DirectML tensor data type; "
            "pass directml_types=False to move its elements as raw bits"
        )
    return np.dtype(f"u{dtype.itemsize}")


def _define(name, cls, params):
    arrays = "Tensor[] xs" if cls is calls.Join else "Tensor dy" if cls is calls.SliceGrad else "Tensor x"
    many = cls is calls.Split
    _LIBRARY.define(f"{name}({arrays}, {params}, {_OPTIONS}) -> {'Tensor[]' if many else 'Tensor'}")
    out = "Tensor(a!)[] out" if many else "Tensor(a!) out"  # returns nothing: functionalized, as custom ops must
    _LIBRARY.define(f"{name}.out({arrays}, {params}, {_OPTIONS}, *, {out}) -> ()")

    def kernel(arrays, *fields):
        tensors = list(arrays) if cls is calls.Join else [arrays]
        operation = _operation(cls, fields)
        # Results from torch's allocator (the stream-ordered one CUDA graphs capture), each its own.
        like = tensors[0]
        results = [
            like.new_empty(s) for s in _result_shapes(operation, tuple(tuple(t.shape) for t in tensors), like.dtype)
        ]
        _run(operation, tensors, results)
        return results if many else results[0]

    def out_kernel(arrays, *fields, out):
        tensors = arrays if cls is calls.Join else [arrays]
        _run(_operation(cls, fields), list(tensors), list(out) if many else [out])

    def fake(arrays, *fields):
        tensors = arrays if cls is calls.Join else [arrays]
        shapes = _shapes(_operation(cls, fields), tensors)
        results = [tensors[0].new_empty(s) for s in shapes]
        return results if many else results[0]

    def out_fake(arrays, *fields, out):
        _shapes(_operation(cls, fields), arrays if cls is calls.Join else [arrays])  # the rules, at trace time

    for key in ("CPU", "CUDA"):
        _LIBRARY.impl(name, kernel, key)
        _LIBRARY.impl(f"{name}.out", out_kernel, key)
    torch.library.register_fake(f"cudadml::{name}", fake, lib=_LIBRARY)
    torch.library.register_fake(f"cudadml::{name}.out", out_fake, lib=_LIBRARY)

    def setup_context(ctx, inputs, output):
        arrays, *fields = inputs
        tensors = arrays if cls is calls.Join else [arrays]
        ctx.operation, ctx.shapes = _operation(cls, fields), [tuple(t.shape) for t in tensors]

    def backward(ctx, *grads):
        grads = grads[0] if many else grads
        gradient, grads = _gradient(ctx.operation, ctx.shapes, list(grads))
        results = ADAPTER.run(gradient, grads, None)
        return (results if cls is calls.Join else results[0], *[None] * (len(ctx.operation)))

    torch.library.register_autograd(f"cudadml::{name}", backward, setup_context=setup_context, lib=_LIBRARY)
    torch.library.register_vmap(f"cudadml::{name}", _batched(cls), lib=_LIBRARY)


def _batched(cls):
    """The vmap rule of an operator: the batch becomes a leading axis of the tensors, taken
    whole (a window of it all, or a part of every batch element): one launch."""

    def rule(info, in_dims, arrays, *fields):
        operation, size = _operation(cls, fields), info.batch_size
        if cls is calls.Join:
            tensors = [
                t.movedim(d, 0) if d is not None else t.unsqueeze(0).expand(size, *t.shape)
                for t, d in zip(arrays, in_dims[0])
            ]
        elif in_dims[0] is None:
            return getattr(torch.ops.cudadml, _NAMES[cls])(arrays, *fields), None
        else:
            tensors = [arrays.movedim(in_dims[0], 0)]
        if cls is calls.Slice:
            operation = operation._replace(
                offsets=(0, *operation.offsets), sizes=(size, *operation.sizes), strides=(1, *operation.strides)
            )
        elif cls in (calls.Slice1, calls.SliceGrad):
            window = {"offsets": (0, *operation.offsets), "sizes": (size, *operation.sizes)}
            operation = operation._replace(strides=(1, *operation.strides), **window)
            if cls is calls.Slice1:
                operation = operation._replace(output_sizes=(size, *operation.output_sizes))
            else:
                operation = operation._replace(input_shape=(size, *operation.input_shape))
        else:  # split, join: the same axis, one further in
            operation = operation._replace(axis=operation.axis + 1)
        results = _call_operator(operation, tensors, None)
        if cls is calls.Split:
            return results, [0] * len(results)
        return results[0], 0

    return rule


if _LIBRARY is not None:
    for _name, (_cls, _params) in _OPERATORS.items():
        _define(_name, _cls, _params)


# ---- autograd ------------------------------------------------------------------------------------


class _Function(torch.autograd.Function):
    """An operation as an autograd node; one subclass per array function, so that ``grad_fn``
    names it (``Slice1Backward``)."""

    @staticmethod
    def forward(ctx, operation, stream, *inputs):
        ctx.operation, ctx.shapes = operation, [tuple(t.shape) for t in inputs]
        result = _run(operation, list(inputs), None, stream)
        return tuple(result) if getattr(operation, "MANY_RESULTS", False) else result[0]

    @staticmethod
    def backward(ctx, *grads):
        gradient, grads = _gradient(ctx.operation, ctx.shapes, list(grads))
        return None, None, *ADAPTER.run(gradient, grads, None)


def _gradient(op, shapes, grads):
    """The operation that takes an operation's result gradients to its input gradients, and
    the gradients it takes. Gradients are validated at the newest feature level (SLICE_GRAD
    appeared after SLICE)."""
    flag = op.directml_types
    if isinstance(op, calls.Slice):
        # An element read several times (a zero stride) receives the sum of its gradients, so
        # those dimensions are summed first; SLICE_GRAD places the rest.
        (gy,) = grads
        repeated = [d for d, (n, s) in enumerate(zip(op.sizes, op.strides)) if s == 0 and n > 1]
        if repeated:
            gy = gy.sum(repeated, keepdim=True)
        steps = [s or 1 for s in op.strides]
        sizes = [(n - 1) * s + 1 for n, s in zip(gy.shape, steps)]
        return calls.SliceGrad.of(gy.shape, shapes[0], op.offsets, sizes, steps, directml_types=flag), [gy]
    if isinstance(op, calls.Slice1):
        window = op.offsets, op.sizes, op.strides
        return calls.SliceGrad.of(grads[0].shape, shapes[0], *window, directml_types=flag), grads
    if isinstance(op, calls.SliceGrad):
        window = op.offsets, op.sizes, op.strides
        return calls.Slice1.of(grads[0].shape, *window, shapes[0], directml_types=flag), grads
    if isinstance(op, calls.Split):
        return calls.Join.of(grads[0].shape, op.axis, directml_types=flag), grads
    if isinstance(op, calls.Join):
        sizes = [s[op.axis] for s in shapes]
        return calls.Split.of(grads[0].shape, sizes, op.axis, directml_types=flag), grads
    if isinstance(op, calls.Slice1Batch):
        level = calls.options(None, flag)[0]
        return calls.Slice1BatchGrad(shapes[0], *op._replace(feature_level=level)), grads
    if isinstance(op, calls.Slice1BatchGrad):
        return op.windows()._replace(feature_level=calls.options(None, flag)[0]), grads
    newest = calls.options(None, flag)
    index = op.windows, op.result_shape, op.axis_map
    if isinstance(op, calls.StridedSlice):
        return calls.StridedSliceGrad(shapes[0], *index, *newest), grads
    return calls.StridedSlice(*index, *newest), grads


_FUNCTIONS = {
    name: type("".join(w.capitalize() for w in name.split("_")), (_Function,), {"__module__": __name__})
    for name in (
        "slice",
        "slice1",
        "slice_grad",
        "split",
        "join",
        "strided_slice",
        "strided_slice_grad",
        "slice1_batch",
        "slice1_batch_grad",
    )
}
_BATCHES = (calls.Slice1Batch, calls.Slice1BatchGrad)

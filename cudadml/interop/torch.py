"""PyTorch tensors in, PyTorch tensors out, with autograd: the adapter of ``torch.Tensor``.

The package registers this adapter (``adapters.register_adapter``), so this module, and torch,
are imported only by a call that holds a tensor, whose caller has imported torch. A call's
operation (``calls``) runs on zero-copy views of the tensors (``runner``): NumPy views of CPU
tensors (the host backend), CuPy views of CUDA tensors (the kernels, on the device of the
tensors and their current torch stream). Its results are wrapped back without a copy.

When an input requires grad, the operation runs inside a ``torch.autograd.Function`` whose
backward is another operation on the gradient tensors (``_gradient``): SLICE and SLICE1 give
SLICE_GRAD, SLICE_GRAD gives SLICE1, SPLIT and JOIN give each other, ``strided_slice`` and
``strided_slice_grad`` each other. Because the backward runs through this adapter too, a
backward taken with ``create_graph=True`` is itself differentiable (double backward).
"""

from __future__ import annotations

import contextlib
import functools

import numpy as np
import torch

from .. import calls
from ..runner import PLAIN, run

#: Same-width integer types that carry the bits of tensor types NumPy lacks (bfloat16, float8).
_RAW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@functools.cache
def _has_numpy_dtype(dtype: torch.dtype) -> bool:
    try:
        torch.empty(0, dtype=dtype).numpy()
    except TypeError:
        return False
    return True


class TorchAdapter:
    """Calls holding a ``torch.Tensor`` (as their first array or first ``out``)."""

    def takes(self, inputs, outs):
        return isinstance(inputs[0], torch.Tensor) or (bool(outs) and isinstance(outs[0], torch.Tensor))

    def arrays(self, operation, inputs, outs):
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
        if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
            if outs is not None:
                raise TypeError(
                    f"{operation.function}: out= cannot take part in autograd and an input requires grad: "
                    "leave out= out, or run under torch.no_grad()"
                )
            result = _FUNCTIONS[operation.function].apply(operation, stream, *inputs)
            return list(result) if isinstance(result, tuple) else [result]
        return _run(operation, inputs, outs, stream)


ADAPTER = TorchAdapter()


def _run(operation, inputs, outs=None, stream=None):
    """``operation`` on views of the tensors ``inputs`` (and ``outs``): the results as tensors."""
    tensors = inputs + (outs or [])
    dtype = inputs[0].dtype
    raw = any(not _has_numpy_dtype(t.dtype) for t in tensors)
    if raw:  # moved as integers of the same width, which must not hide a change of type
        if operation.directml_types:
            raise TypeError(
                f"{operation.function}: dtype {dtype} has no DirectML tensor data type; "
                "pass directml_types=False to move its elements as raw bits"
            )
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
        stream = torch.cuda.current_stream(device)
    if not isinstance(stream, cupy.cuda.Stream):
        if hasattr(stream, "__cuda_stream__") and hasattr(cupy.cuda.Stream, "from_external"):
            stream = cupy.cuda.Stream.from_external(stream)
        else:  # CuPy 13, or a torch without the stream protocol
            stream = cupy.cuda.ExternalStream(stream.cuda_stream, device.index)
    with cupy.cuda.Device(device.index), stream:
        yield None


def _view(t, raw):
    """A zero-copy NumPy (CPU) or CuPy (CUDA) view of ``t``; ``raw``: of same-width integers."""
    t = t.detach().resolve_conj().resolve_neg()
    if raw:
        t = t.view(_RAW[t.element_size()])
    if t.device.type == "cuda":
        import cupy

        return cupy.from_dlpack(t)
    return t.numpy()


def _tensor(a, dtype):
    """The array ``a`` as a tensor of ``dtype``, without a copy."""
    t = torch.from_numpy(a) if isinstance(a, np.ndarray) else torch.from_dlpack(a)
    return t if t.dtype == dtype else t.view(dtype)


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
    newest = calls.options(None, flag)
    index = op.windows, op.result_shape, op.axis_map
    if isinstance(op, calls.StridedSlice):
        return calls.StridedSliceGrad(shapes[0], *index, *newest), grads
    return calls.StridedSlice(*index, *newest), grads


_FUNCTIONS = {
    name: type("".join(w.capitalize() for w in name.split("_")), (_Function,), {"__module__": __name__})
    for name in ("slice", "slice1", "slice_grad", "split", "join", "strided_slice", "strided_slice_grad")
}

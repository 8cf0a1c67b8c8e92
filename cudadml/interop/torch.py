"""PyTorch tensors in, PyTorch tensors out, with autograd.

The array functions hand a call here when it holds a ``torch.Tensor`` (``arrays._accepts_torch``),
so this module, and torch, are imported only by a caller who has already imported torch. The
array function itself runs the call, on zero-copy views of the tensors: NumPy views of CPU
tensors (the host backend), CuPy views of CUDA tensors (the kernels, on the device of the
tensors and their current torch stream). Its results are wrapped back without a copy.

When an input requires grad, the call runs inside a ``torch.autograd.Function`` whose backward
is another array function on the gradient tensors (``_BACKWARD``): SLICE and SLICE1 give
SLICE_GRAD, SLICE_GRAD gives SLICE1, SPLIT and JOIN give each other, ``strided_slice`` and
``strided_slice_grad`` each other. Because the backward goes through this adapter too, a
backward taken with ``create_graph=True`` is itself differentiable (double backward).
"""

from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np
import torch

from .. import arrays

#: Same-width integer types that carry the bits of tensor types NumPy lacks (bfloat16, float8).
_RAW = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@functools.cache
def _has_numpy_dtype(dtype: torch.dtype) -> bool:
    try:
        torch.empty(0, dtype=dtype).numpy()
    except TypeError:
        return False
    return True


@functools.cache
def _signature(fn):
    return inspect.signature(fn)


class _Call:
    """An array function's call, less its arrays: what a backward needs."""

    def __init__(self, fn, first, arguments):
        self.fn, self.first, self.arguments = fn, first, arguments


def call(fn, args, kwargs):
    """``fn(*args, **kwargs)`` for an array function ``fn`` given tensors: tensors out."""
    arguments = _signature(fn).bind(*args, **kwargs)
    arguments.apply_defaults()
    arguments = dict(arguments.arguments)
    first = next(iter(arguments))  # x, dy or xs
    given = arguments.pop(first)
    inputs = list(arrays._as_list(given, first, fn.__name__)) if first == "xs" else [given]
    outs = arguments["out"]
    if outs is not None:
        outs = list(arrays._as_list(outs, "out", fn.__name__)) if fn.__name__ == "split" else [outs]
    for what, tensors in ((first, inputs), ("out", outs or ())):
        for k, t in enumerate(tensors):
            if not isinstance(t, torch.Tensor):
                where = f"{what}[{k}]" if len(tensors) > 1 or what == "xs" else what
                raise TypeError(
                    f"{fn.__name__}: {where} is a {type(t).__name__}; a call with torch tensors takes only tensors"
                )
    pending = _Call(fn, first, arguments)
    if torch.is_grad_enabled() and any(t.requires_grad for t in inputs):
        if outs is not None:
            raise TypeError(
                f"{fn.__name__}: out= cannot take part in autograd and an input requires grad: "
                "leave out= out, or run under torch.no_grad()"
            )
        result = _FUNCTIONS[fn.__name__].apply(pending, *inputs)
        return list(result) if fn.__name__ == "split" else result
    return _run(pending, inputs, outs)


def _run(call, inputs, outs=None):
    """Run ``call`` on views of the tensors ``inputs`` (and ``outs``): the results as tensors."""
    fn, arguments = call.fn, dict(call.arguments)
    tensors = inputs + (outs or [])
    dtype = inputs[0].dtype if inputs else None
    raw = any(not _has_numpy_dtype(t.dtype) for t in tensors)
    if raw:  # moved as integers of the same width, which must not hide a change of type
        if arrays._flag(arguments["directml_types"]):
            raise TypeError(
                f"{fn.__name__}: dtype {dtype} has no DirectML tensor data type; "
                "pass directml_types=False to move its elements as raw bits"
            )
        if any(t.dtype != dtype for t in tensors):
            raise TypeError(f"{fn.__name__}: the tensors' dtypes {sorted({str(t.dtype) for t in tensors})} differ")
    with _placed(inputs[0].device if inputs else torch.device("cpu"), arguments["stream"]) as stream:
        views = [_view(t, raw) for t in inputs]
        arguments[call.first] = views if call.first == "xs" else views[0]
        if outs is not None:
            arguments["out"] = [_view(t, raw) for t in outs] if fn.__name__ == "split" else _view(outs[0], raw)
        arguments["stream"] = stream
        result = fn(**arguments)
        if outs is not None:
            return call.arguments["out"]
        if isinstance(result, list):
            return [_tensor(r, dtype) for r in result]
        return _tensor(result, dtype)


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
    """A call of an array function as an autograd node; one subclass per function, so that
    ``grad_fn`` names it (``Slice1Backward``)."""

    @staticmethod
    def forward(ctx, call, *inputs):
        ctx.call, ctx.shapes = call, [tuple(t.shape) for t in inputs]
        result = _run(call, list(inputs))
        return tuple(result) if isinstance(result, list) else result

    @staticmethod
    def backward(ctx, *grads):
        call = ctx.call
        grad = _BACKWARD[call.fn.__name__](call.arguments, ctx.shapes, grads, call.arguments["directml_types"])
        return None, *(grad if isinstance(grad, list) else [grad])


def _slice_backward(a, shapes, grads, directml_types):
    """SLICE's gradient. An element read several times (a zero stride) receives the sum of
    its gradients, so those dimensions are summed first; SLICE_GRAD places the rest."""
    (gy,) = grads
    strides = a["strides"] if a["strides"] is not None else (1,) * len(shapes[0])
    repeated = [d for d, (n, s) in enumerate(zip(a["sizes"], strides)) if s == 0 and n > 1]
    if repeated:
        gy = gy.sum(repeated, keepdim=True)
    steps = [s or 1 for s in strides]
    sizes = [(n - 1) * s + 1 for n, s in zip(gy.shape, steps)]
    return arrays.slice_grad(gy, shapes[0], a["offsets"], sizes, steps, directml_types=directml_types)


def _slice1_backward(a, shapes, grads, directml_types):
    window = a["window_offsets"], a["window_sizes"], a["window_strides"]
    return arrays.slice_grad(grads[0], shapes[0], *window, directml_types=directml_types)


def _slice_grad_backward(a, shapes, grads, directml_types):
    window = a["window_offsets"], a["window_sizes"], a["window_strides"]
    return arrays.slice1(grads[0], *window, output_sizes=shapes[0], directml_types=directml_types)


def _split_backward(a, shapes, grads, directml_types):
    return arrays.join(list(grads), a["axis"], directml_types=directml_types)


def _join_backward(a, shapes, grads, directml_types):
    axis = a["axis"]
    return arrays.split(grads[0], [s[axis] for s in shapes], axis, directml_types=directml_types)


def _strided_slice_backward(a, shapes, grads, directml_types):
    return arrays.strided_slice_grad(grads[0], shapes[0], a["key"], directml_types=directml_types)


def _strided_slice_grad_backward(a, shapes, grads, directml_types):
    return arrays.strided_slice(grads[0], a["key"], directml_types=directml_types)


_BACKWARD = {
    "slice": _slice_backward,
    "slice1": _slice1_backward,
    "slice_grad": _slice_grad_backward,
    "split": _split_backward,
    "join": _join_backward,
    "strided_slice": _strided_slice_backward,
    "strided_slice_grad": _strided_slice_grad_backward,
}
_FUNCTIONS = {
    name: type("".join(w.capitalize() for w in name.split("_")), (_Function,), {"__module__": __name__})
    for name in _BACKWARD
}

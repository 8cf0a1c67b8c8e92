"""Adapters that let other array libraries call the array layer, adding no rules of their own;
the caller's arrays as a compiled graph takes them (``caller_arrays``) and PyTorch's half of
``cudadml.fuse`` (``torch_fuse``), provided to the layers below through ``hooks``."""

from __future__ import annotations

import contextlib
import sys

from ..core import hooks
from ..run.runner import as_array


def caller_arrays(arrays, stream):
    """``(kind, arrays, place, wrap)``: the caller's arrays as NumPy or CuPy arrays of one
    ``kind``, a context to run in (yielding the ``stream=`` to pass on), and how a result goes
    back to the caller's kind."""
    torch = sys.modules.get("torch")
    if torch is not None and any(isinstance(a, torch.Tensor) for a in arrays):
        from . import torch as interop

        if not all(isinstance(a, torch.Tensor) for a in arrays) or len({a.device for a in arrays}) > 1:
            raise TypeError("compiled graph: the arrays mix torch tensors with other arrays or devices")
        views = [interop.view(a, False) for a in arrays]  # zero-copy: NumPy for CPU, CuPy for CUDA
        kind = "numpy" if arrays[0].device.type == "cpu" else "cupy"
        wrap = torch.from_numpy if kind == "numpy" else torch.from_dlpack
        return kind, views, interop.placed(arrays[0].device, stream), wrap
    taken = [as_array(a, "compiled graph", f"argument {k}") for k, a in enumerate(arrays)]
    kinds = {kind for kind, _ in taken}
    if len(kinds) > 1:
        raise TypeError("compiled graph: the arrays mix host (NumPy) and device (CuPy) memory")
    kind = kinds.pop()
    # Staging copies and the launch go on the stream the caller names.
    place = stream if kind == "cupy" and stream is not None else contextlib.nullcontext(stream)
    return kind, [a for _, a in taken], place, lambda r: r


def load_torch_fuse():
    """PyTorch's half of ``cudadml.fuse``, imported (with torch) at a fused call's first tensor."""
    from . import torch_fuse

    return torch_fuse


hooks.caller_arrays.provide(caller_arrays)
hooks.fuse_torch.provide(load_torch_fuse)

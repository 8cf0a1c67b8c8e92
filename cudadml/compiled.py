"""``CompiledOperator``: a validated descriptor lowered to a plan, and its ``execute``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _memory
from .backends import execute, gpu_status, kernels
from .errors import BindingError, Violations
from .tensor import MIN_BINDING_ALIGNMENT

__all__ = ["BufferBinding", "CompiledOperator"]


@dataclass(frozen=True)
class BufferBinding:
    """``DML_BUFFER_BINDING``: the range ``[offset, offset + size_in_bytes)`` of a buffer.

    ``buffer`` is a C-contiguous NumPy or CuPy array of any dtype (its bytes are the buffer);
    ``size_in_bytes`` defaults to the rest of the buffer after ``offset``.
    """

    buffer: object
    offset: int = 0
    size_in_bytes: int | None = None


@dataclass(frozen=True)
class _Bound:
    kind: str  # "numpy" or "cupy"
    owner: object
    address: int  # bytes: the bound range's start, where element 0 lives
    span: tuple[int, int]  # the bytes the tensor may touch, for the overlap rule


def _bind(binding, tensor, name, v: Violations, writable: bool) -> _Bound | None:
    if isinstance(binding, BufferBinding):
        buffer, offset, size = binding.buffer, binding.offset, binding.size_in_bytes
    else:
        buffer, offset, size = binding, 0, None
    if isinstance(buffer, np.ndarray):
        kind = "numpy"
    elif _memory.is_cupy_array(buffer):
        kind = "cupy"
    else:
        raise TypeError(
            f"{v.where}: {name} must be a NumPy/CuPy array or a BufferBinding of one, not {type(buffer).__name__}"
        )
    if not buffer.flags.c_contiguous:
        v.add(f"{name}: the buffer must be a C-contiguous array (its bytes are the buffer)")
        return None
    if writable and kind == "numpy" and not buffer.flags.writeable:
        v.add(f"{name}: the buffer is read-only")
    size = buffer.nbytes - offset if size is None else size
    if offset < 0 or size < 0 or offset + size > buffer.nbytes:
        v.add(f"{name}: the range [{offset}, {offset + size}) lies outside the buffer's {buffer.nbytes} bytes")
        return None
    if size < tensor.total_tensor_size_in_bytes:
        v.add(
            f"{name}: the bound range of {size} bytes is smaller than TotalTensorSizeInBytes = "
            f"{tensor.total_tensor_size_in_bytes}"
        )
    address = _memory.address_of(buffer) + offset
    for alignment, what in (
        (MIN_BINDING_ALIGNMENT, "buffer tensors' minimum alignment"),
        (tensor.guaranteed_base_offset_alignment, "GuaranteedBaseOffsetAlignment"),
    ):
        if alignment and address % alignment:
            v.add(f"{name}: the bound address is {address % alignment} bytes past a multiple of {alignment} ({what})")
    return _Bound(kind, buffer, address, (address, address + tensor.total_tensor_size_in_bytes))


class CompiledOperator:
    """An operator ready to execute: validated, lowered and (on a GPU) its kernels loaded.

    Made by ``desc.compile()``. ``execute`` checks every binding rule before running, and
    allocates, copies and synchronises nothing.
    """

    def __init__(self, desc, device=None):
        self.desc = desc
        self.plan = desc.to_plan()
        self.device = device
        self.launches = kernels.prepare(self.plan)
        if gpu_status()[0]:  # compile the kernels now, so execute() never waits for NVRTC
            import cupy

            with cupy.cuda.Device(device):
                self.device = cupy.cuda.Device().id
                for launch in self.launches:
                    launch.load()

    def __repr__(self):
        return f"<CompiledOperator {self.desc.NAME} plan={self.plan}>"

    def execute(self, inputs, outputs, *, stream=None) -> None:
        """Run the operator.

        Parameters
        ----------
        inputs, outputs : sequence of array or BufferBinding
            One binding per input/output tensor, in the descriptor's order. All NumPy (run on
            the host) or all CuPy (run on the GPU).
        stream : cupy.cuda.Stream, optional
            For CuPy bindings; the current stream when omitted.

        Raises
        ------
        BindingError
            Listing every broken binding rule; nothing runs and no output byte changes.
        """
        desc = self.desc
        v = Violations(f"{desc.NAME}.execute", BindingError)
        inputs, outputs = list(inputs), list(outputs)
        for role, given, tensors in (("inputs", inputs, desc.input_tensors), ("outputs", outputs, desc.output_tensors)):
            if len(given) != len(tensors):
                v.add(f"{len(given)} {role} bound; the operator has {len(tensors)}")
        v.raise_if_any()
        bound_in = [_bind(b, t, f"inputs[{k}]", v, False) for k, (b, t) in enumerate(zip(inputs, desc.input_tensors))]
        bound_out = [
            _bind(b, t, f"outputs[{k}]", v, True) for k, (b, t) in enumerate(zip(outputs, desc.output_tensors))
        ]
        v.raise_if_any()
        for k, out in enumerate(bound_out):
            for j, inp in enumerate(bound_in):
                if _memory.ranges_overlap(out.span, inp.span):
                    v.add(f"outputs[{k}] overlaps inputs[{j}] in memory")
            for j, other in enumerate(bound_out[:k]):
                if _memory.ranges_overlap(out.span, other.span):
                    v.add(f"outputs[{k}] overlaps outputs[{j}] in memory")
        kinds = {b.kind for b in (*bound_in, *bound_out)}
        if len(kinds) > 1:
            raise TypeError(f"{v.where}: bindings mix host (NumPy) and device (CuPy) buffers")
        if kinds == {"cupy"}:
            for role, bound in (("inputs", bound_in), ("outputs", bound_out)):
                for k, b in enumerate(bound):
                    if b.owner.device.id != self.device:
                        v.add(
                            f"{role}[{k}] is on device {b.owner.device.id}; the operator was compiled "
                            f"for device {self.device}"
                        )
        v.raise_if_any()
        (kind,) = kinds
        execute(
            kind,
            self.plan,
            self.launches,
            [(b.owner, b.address) for b in bound_in],
            [(b.owner, b.address) for b in bound_out],
            stream,
        )

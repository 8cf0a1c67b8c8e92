"""``CompiledOperator``: a validated descriptor lowered to a plan, and its ``execute``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .backends import CUDA, backend_for, gpu_status
from .bindings import Bindings, BufferBinding, Slot, check_layout
from .hooks import provide, provided
from .operators import desc_summary

__all__ = ["BufferBinding", "CompiledOperator"]


def _buffer_slots(role, tensors):
    return [
        Slot(
            f"{role}[{k}]",
            t.data_type.element_size,
            t.sizes,
            t.effective_strides,
            need=t.total_tensor_size_in_bytes,
            alignment=t.guaranteed_base_offset_alignment,
        )
        for k, t in enumerate(tensors)
    ]


class CompiledOperator:
    """An operator ready to execute: validated, lowered and (on a GPU) its kernels loaded.

    Made by ``desc.compile()``. ``execute`` checks every binding rule before running, and
    allocates, copies and synchronises nothing, so it can be captured in a CUDA graph.

    Parameters
    ----------
    desc : operator descriptor
        A validated ``SliceOperatorDesc``, ``Slice1OperatorDesc``, ... .
    device : int, optional
        The CUDA device for CuPy bindings; the current one when omitted.
    views : pair of sequences, optional
        For the array functions: the layout of each input and output array (below).
    placed_at : sequence of int, optional
        For the array functions: per output, a byte offset at which it is placed in a buffer.
    load : bool, default True
        Whether to compile and load the kernels now where a GPU is present.

    Raises
    ------
    BindingError
        If an output view would reach one element from two indices.

    Notes
    -----
    ``views`` (used by the array functions) compiles for arrays rather than buffers: per input
    and per output, the ``(shape, element strides)`` of the array that will be bound, signed
    strides included, and optionally a third item, the element strides of the descriptor's
    tensor when its dimensions differ from the array's (an indexed array drops or adds size-1
    axes). Such an operator takes those arrays themselves as bindings, at any address, or a
    ``BufferBinding`` that places the layout at a byte offset of a buffer; ``placed_at`` fixes
    such an offset per output at compile time, and the output is then bound as the buffer.

    Examples
    --------
    >>> from cudadml.examples import EXAMPLES
    >>> EXAMPLES[0].desc.compile()
    <CompiledOperator Slice FLOAT32 (1, 1, 4, 4) -> (1, 1, 3, 2): 1 strided copy, 24 bytes out>
    """

    def __init__(self, desc, device=None, *, views=None, placed_at=None, load=True):
        self.desc = desc
        self.device = device
        if views is None:
            self.plan = desc.to_plan()
            self._in = _buffer_slots("inputs", desc.input_tensors)
            self._out = _buffer_slots("outputs", desc.output_tensors)
        else:
            in_views, out_views = views
            self.plan = desc.to_plan([v[-1] for v in in_views], [v[-1] for v in out_views])
            size = desc.input_tensors[0].data_type.element_size
            self._in = [Slot(f"inputs[{k}]", size, *v[:2]) for k, v in enumerate(in_views)]
            placed_at = placed_at or (None,) * len(out_views)
            self._out = [
                Slot(f"outputs[{k}]", size, *v[:2], placed_at=p) for k, (v, p) in enumerate(zip(out_views, placed_at))
            ]
            check_layout(self._out, f"{desc.NAME}.execute")
        self._prepared = {}  # backend -> what its prepare(plan, out_extents) returned
        if load and gpu_status()[0]:  # compile the kernels now, so execute() never waits for NVRTC
            import cupy

            with cupy.cuda.Device(device):
                self.device = cupy.cuda.Device().id
                CUDA.load(self._prepared_for(CUDA))
        self._bindings = Bindings(f"{desc.NAME}.execute", self._in, self._out, self.device)

    def _prepared_for(self, backend):
        prepared = self._prepared.get(backend)
        if prepared is None:
            out_extents = [(slot.low, slot.high) for slot in self._out]
            prepared = self._prepared[backend] = backend.prepare(self.plan, out_extents)
        return prepared

    def __repr__(self) -> str:
        plan = self.plan
        if hasattr(plan, "jobs"):
            work = f"{len(plan.jobs)} strided cop{'y' if len(plan.jobs) == 1 else 'ies'}"
        else:
            work = "a gradient gather"
        return f"<CompiledOperator {self.desc.NAME} {desc_summary(self.desc)}: {work}, {plan.output_bytes} bytes out>"

    def _repr_html_(self) -> str:
        return provided("picture")(self)._repr_html_()

    def execute(self, inputs: Sequence[Any], outputs: Sequence[Any], *, stream: Any = None) -> None:
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
        TypeError
            For a binding that is not an array or ``BufferBinding`` of one, or a mix of host
            and device memory.
        """
        self._run(self._bindings.bind(inputs, outputs), stream)

    def _execute_known_layouts(self, inputs, outputs, stream, new_outputs=False):
        """``execute`` for the array functions, whose cache key already matched every view's
        shape and strides with the slots' (the one rule ``bind`` then skips); ``new_outputs``:
        the outputs were allocated for this call, so they overlap nothing."""
        self._run(self._bindings.bind(inputs, outputs, True, new_outputs), stream)

    def _run(self, bound, stream):
        kind, addresses, owners, address_bits = bound
        backend = CUDA if kind == "cupy" else backend_for(kind)
        prepared = self._prepared.get(backend) or self._prepared_for(backend)
        backend.run(prepared, addresses, owners, stream, address_bits)


provide("compile", CompiledOperator)

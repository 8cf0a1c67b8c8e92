"""``CompiledOperator``: a validated descriptor lowered to a plan, and its ``execute``; and
``compile_batch``: several descriptors as one ``CompiledOperator``."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from ..backends import CUDA, backend_for, gpu_status
from ..core import hooks
from ..core.memory import element_strides
from ..core.operators import OperatorDesc, desc_summary
from ..core.plan import CopyPlan, WindowGradPlan, WindowPlan
from .bindings import Bindings, BufferBinding, Slot, binding_list, check_layout

__all__ = ["BoundOperator", "BufferBinding", "CompiledOperator", "check_views", "compile_batch"]


def _buffer_slots(role, tensors, first=0, owner=""):
    """One slot per tensor, named by its place in ``execute``'s list (``first`` on), and in a
    batch by its place in the descriptor ``owner`` too."""
    return [
        Slot(
            f"{role}[{first + k}]" + (f" ({owner} {role}[{k}])" if owner else ""),
            t.data_type.element_size,
            t.sizes,
            t.effective_strides,
            need=t.total_tensor_size_in_bytes,
            alignment=t.guaranteed_base_offset_alignment,
        )
        for k, t in enumerate(tensors)
    ]


def _packed(slot) -> bool:
    """Whether a slot's elements are one run in row-major order (so none is reached twice)."""
    expected = slot.itemsize
    for n, stride in zip(reversed(slot.shape), reversed(slot.byte_strides)):
        if n != 1 and stride != expected:
            return False
        expected *= n
    return True


class CompiledOperator:
    """An operator ready to execute: validated, lowered and (on a GPU) its kernels loaded.

    Made by ``desc.compile()``, or for several descriptors by ``compile_batch``. ``execute``
    checks every binding rule before running, and allocates, copies and synchronises nothing,
    so it can be captured in a CUDA graph.

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
    constants : dict of int to array, optional
        The values of inputs given when compiling, by input index: a windows batch's table
        owned by DML (``WindowsBatchOperatorDesc``), which the plan folds in. ``execute`` binds
        the other inputs, in order.

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

    #: The binding rules' class (a compiled graph's words its refusals for array callers).
    _BINDINGS = Bindings

    def __init__(self, desc, device=None, *, views=None, placed_at=None, load=True, constants=None):
        self.desc = desc
        given = {"constants": constants} if constants else {}  # (only operators that take them)
        inputs, outputs = desc.input_tensors, desc.output_tensors
        if constants:  # given now: not bound at execute
            inputs = [t for k, t in enumerate(inputs) if k not in constants]
        if views is None:
            self.plan = desc.to_plan(**given)
            self._in = _buffer_slots("inputs", inputs)
            self._out = _buffer_slots("outputs", outputs)
        else:
            in_views, out_views = views
            self.plan = desc.to_plan([v[-1] for v in in_views], [v[-1] for v in out_views], **given)
            self._in = [
                Slot(f"inputs[{k}]", t.data_type.element_size, *v[:2]) for k, (t, v) in enumerate(zip(inputs, in_views))
            ]
            placed_at = placed_at or (None,) * len(out_views)
            self._out = [
                Slot(f"outputs[{k}]", t.data_type.element_size, *v[:2], placed_at=p)
                for k, (t, v, p) in enumerate(zip(outputs, out_views, placed_at))
            ]
            check_layout([slot for slot in self._out if not _packed(slot)], f"{desc.NAME}.execute")
        self._ready(f"{desc.NAME}.execute", device, load)

    def _ready(self, where, device, load):
        """Load the kernels where a GPU is present, so ``execute`` never waits for NVRTC, and
        fix the binding rules of the slots."""
        self.device = device
        self._prepared = {}  # backend -> what its prepare(plan, out_extents) returned
        if load and gpu_status()[0]:
            import cupy

            with cupy.cuda.Device(device):
                self.device = cupy.cuda.Device().id
                self._load()
        self._bindings = self._BINDINGS(where, self._in, self._out, self.device)

    def _load(self):
        CUDA.load(self._prepared_for(CUDA))

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
        elif isinstance(plan, WindowPlan):
            work = f"{_count(plan.num_windows, 'window', 'windows')} from a table"
        elif isinstance(plan, WindowGradPlan):
            work = f"the gradient of {_count(plan.num_windows, 'window', 'windows')} from a table"
        else:
            work = "a gradient gather"
        return f"<CompiledOperator {self.desc.NAME} {desc_summary(self.desc)}: {work}, {plan.output_bytes} bytes out>"

    def _repr_html_(self) -> str | None:
        if isinstance(self.plan, (WindowPlan, WindowGradPlan)):  # windows in a table: no picture of them
            return f"<p>{html.escape(repr(self))}</p>"
        picture = hooks.picture(self)
        return None if picture is None else picture._repr_html_()

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

    def bind(self, inputs: Sequence[Any], outputs: Sequence[Any]) -> BoundOperator:
        """Check one set of bindings once, for executing the operator on them many times
        (DirectML's binding table).

        Parameters
        ----------
        inputs, outputs : sequence of array or BufferBinding
            As for ``execute``.

        Returns
        -------
        BoundOperator
            Its ``execute(*, stream=None)`` runs the operator on these bindings, which it keeps
            alive.

        Raises
        ------
        BindingError, TypeError
            As ``execute`` would, for the same bindings.
        """
        return BoundOperator(self, inputs, outputs)

    def execute_known_layouts(self, inputs, outputs, stream, new_outputs=False):
        """``execute`` for the array functions, whose cache key already matched every view's
        shape and strides with the slots' (the one rule ``bind`` then skips); ``new_outputs``:
        the outputs were allocated for this call, so they overlap nothing."""
        self._run(self._bindings.bind(inputs, outputs, True, new_outputs), stream)

    def execute_addresses(self, inputs, outputs, stream_ptr, new_outputs, device):
        """``execute_known_layouts`` for device memory given by address (``runner.run_on_device``)."""
        self._run(self._bindings.bind_addresses(inputs, outputs, new_outputs, device), stream_ptr)

    def execute_bound(self, bound, stream):
        """Run on bindings that the caller made ready (``cudadml.fuse``, whose layouts and
        alignment hold for every call of a trace), with no rule checked again: ``bound`` is
        ``(kind, addresses, owners, address bits)`` as the bindings' ``bind`` makes it."""
        self._run(bound, stream)

    def _run(self, bound, stream):
        kind, addresses, owners, address_bits = bound
        backend = CUDA if kind == "cupy" else backend_for(kind)
        prepared = self._prepared.get(backend) or self._prepared_for(backend)
        backend.run(prepared, addresses, owners, stream, address_bits)


class BoundOperator:
    """A compiled operator with its bindings checked once, as a DirectML binding table.

    Made by ``CompiledOperator.bind``; ``execute`` runs the operator on them again and again.
    Device (CuPy) bindings are checked when bound, not at each ``execute``: what a buffer
    binding's rules look at in a CuPy array (address, size, contiguity, device) cannot change
    while it lives, and the bound operator keeps them alive (an array reshaped in place, which
    ``execute`` would refuse for a view slot, is still run as it was bound: the same bytes).
    Host (NumPy) bindings are checked again at each ``execute``, since a NumPy array can be
    made read-only after it was bound. ``execute`` then costs what one kernel launch per element
    size costs, however many bindings there are.

    Parameters
    ----------
    compiled : CompiledOperator
        The operator (or batch of operators).
    inputs, outputs : sequence of array or BufferBinding
        As for ``CompiledOperator.execute``; made by ``compiled.bind(inputs, outputs)``.

    Raises
    ------
    BindingError, TypeError
        As ``execute`` would, for the same bindings; nothing runs.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> from cudadml.testing import aligned_empty
    >>> f32 = cd.TensorDataType.FLOAT32
    >>> flip = cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4]), cd.BufferTensorDesc(f32, [4]), [0], [4], [-1])
    >>> x, y = aligned_empty(16).view(np.float32), aligned_empty(16).view(np.float32)
    >>> bound = flip.compile().bind([x], [y])
    >>> bound
    <BoundOperator of 1 input and 1 output: Slice1 FLOAT32 (4,) -> (4,)>
    >>> x[:] = [1, 2, 3, 4]
    >>> bound.execute()
    >>> y
    array([4., 3., 2., 1.], dtype=float32)
    """

    __slots__ = ("_bound", "_compiled", "_inputs", "_outputs")

    def __init__(self, compiled: CompiledOperator, inputs: Sequence[Any], outputs: Sequence[Any]):
        where = compiled._bindings.where
        # Taken once, checked and held as taken (their memory stays valid), out of the caller's reach.
        self._inputs = tuple(binding_list(inputs, "inputs", where))
        self._outputs = tuple(binding_list(outputs, "outputs", where))
        self._compiled = compiled
        self._bound = compiled._bindings.bind(list(self._inputs), list(self._outputs))
        if self._bound[0] == "cupy":
            kind, (ins, outs), _, address_bits = self._bound
            self._bound = (kind, (list(ins), list(outs)), (self._inputs, self._outputs), address_bits)

    @property
    def compiled(self) -> CompiledOperator:
        """The operator the bindings were checked for."""
        return self._compiled

    @property
    def inputs(self) -> tuple:
        """The input bindings, as bound."""
        return self._inputs

    @property
    def outputs(self) -> tuple:
        """The output bindings, as bound."""
        return self._outputs

    def execute(self, *, stream: Any = None) -> None:
        """Run the operator on the bound buffers.

        Parameters
        ----------
        stream : cupy.cuda.Stream, optional
            For CuPy bindings; the current stream when omitted.

        Raises
        ------
        BindingError
            For host bindings that no longer keep the rules (an output made read-only).
        """
        bound = self._bound
        if bound[0] != "cupy":
            bound = self._compiled._bindings.bind(list(self._inputs), list(self._outputs))
        self._compiled._run(bound, stream)

    def __repr__(self) -> str:
        desc = self.compiled.desc
        what = (
            f"a batch of {_count(len(desc), 'operator', 'operators')}"
            if isinstance(desc, tuple)
            else f"{desc.NAME} {desc_summary(desc)}"
        )
        return (
            f"<BoundOperator of {_count(len(self.inputs), 'input', 'inputs')} and "
            f"{_count(len(self.outputs), 'output', 'outputs')}: {what}>"
        )


def _count(n, one, many):
    return f"{n} {one if n == 1 else many}"


class CompiledBatch(CompiledOperator):
    """Descriptors compiled together (``compile_batch``): their bindings concatenated, checked
    as those of one operator, and their copies merged into one plan per element size, each
    run by one launch (as DirectML compiles a graph of independent nodes into one dispatch)."""

    def __init__(self, descs, plans, device=None, *, load=True):
        self.desc = tuple(descs)
        self._in, self._out, by_size = [], [], {}
        for i, (desc, plan) in enumerate(zip(self.desc, plans)):
            first_in, first_out = len(self._in), len(self._out)
            self._in += _buffer_slots("inputs", desc.input_tensors, first_in, f"descs[{i}] {desc.NAME}")
            self._out += _buffer_slots("outputs", desc.output_tensors, first_out, f"descs[{i}] {desc.NAME}")
            by_size.setdefault(plan.element_size, []).extend(
                replace(job, input=job.input + first_in, output=job.output + first_out) for job in plan.jobs
            )
        self.plans = tuple(CopyPlan(size, tuple(jobs)) for size, jobs in by_size.items())
        self._ready("compile_batch.execute", device, load)

    def _load(self):
        for prepared in self._prepared_for(CUDA):
            CUDA.load(prepared)

    def _prepared_for(self, backend):
        prepared = self._prepared.get(backend)
        if prepared is None:
            out_extents = [(slot.low, slot.high) for slot in self._out]
            prepared = self._prepared[backend] = tuple(backend.prepare(plan, out_extents) for plan in self.plans)
        return prepared

    def _run(self, bound, stream):
        kind, addresses, owners, address_bits = bound
        backend = CUDA if kind == "cupy" else backend_for(kind)
        for prepared in self._prepared.get(backend) or self._prepared_for(backend):
            backend.run(prepared, addresses, owners, stream, address_bits)

    def __repr__(self) -> str:
        # The CUDA backend's launches (prepared without a GPU too): groups only past a launch's capacity.
        launches = [len(p.for_addresses(0)) for p in self._prepared_for(CUDA)]
        parts = "; ".join(
            f"{plan.element_size}-byte elements: {_count(len(plan.jobs), 'copy', 'copies')}, "
            f"{_count(n, 'launch', 'launches')}"
            for plan, n in zip(self.plans, launches)
        )
        return (
            f"<CompiledOperator batch of {_count(len(self.desc), 'operator', 'operators')}: "
            f"{_count(sum(len(plan.jobs) for plan in self.plans), 'strided copy', 'strided copies')} in "
            f"{_count(sum(launches), 'launch', 'launches')} ({parts}), "
            f"{sum(plan.output_bytes for plan in self.plans)} bytes out>"
        )

    def _repr_html_(self) -> str:
        # The pictures draw one operator; a batch lists its operators and their bindings.
        rows, first_in, first_out = [], 0, 0
        for desc in self.desc:
            n_in, n_out = len(desc.input_tensors), len(desc.output_tensors)
            rows.append(
                f"<li>{html.escape(f'{desc.NAME} {desc_summary(desc)}')}: inputs "
                f"{list(range(first_in, first_in + n_in))}, outputs {list(range(first_out, first_out + n_out))}</li>"
            )
            first_in, first_out = first_in + n_in, first_out + n_out
        return f'<p>{html.escape(repr(self))}</p><ol start="0">{"".join(rows)}</ol>'


def compile_batch(descs: Iterable[Any], device: int | None = None) -> CompiledOperator:
    """Compile several operators into one ``CompiledOperator`` whose ``execute`` runs them all.

    The copies of all the operators that move elements of one size run in one kernel launch
    (as DirectML compiles a graph of independent nodes into one dispatch), so a batch costs
    about one call per element size rather than one per operator.

    Parameters
    ----------
    descs : iterable of SliceOperatorDesc, Slice1OperatorDesc, SplitOperatorDesc or JoinOperatorDesc
        The operators, each validated as it was constructed, in any mix.
    device : int, optional
        The CUDA device for CuPy bindings; the current one when omitted.

    Returns
    -------
    CompiledOperator
        Its ``execute(inputs, outputs)`` takes the bindings of every descriptor's inputs, in
        order (those of ``descs[0]``, then of ``descs[1]``, ...), and likewise its outputs.
        Every binding rule holds across the batch: no output overlaps any other binding, of
        its own operator or another's (inputs may be shared).

    Raises
    ------
    TypeError
        If ``descs`` is not an iterable, or any item of it is not an operator descriptor or
        is a ``SliceGradOperatorDesc`` (a batch takes strided copies), naming each position.
    ValueError
        If ``descs`` is empty.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> from cudadml.testing import aligned_empty
    >>> f32, u8 = cd.TensorDataType.FLOAT32, cd.TensorDataType.UINT8
    >>> flip = cd.Slice1OperatorDesc(cd.BufferTensorDesc(f32, [4]), cd.BufferTensorDesc(f32, [4]), [0], [4], [-1])
    >>> halves = cd.SplitOperatorDesc(cd.BufferTensorDesc(u8, [6]), [cd.BufferTensorDesc(u8, [3])] * 2, 0)
    >>> batch = cd.compile_batch([flip, halves])
    >>> batch
    <CompiledOperator batch of 2 operators: 3 strided copies in 2 launches (4-byte elements: 1 copy, 1 launch; \
1-byte elements: 2 copies, 1 launch), 22 bytes out>
    >>> x, y = aligned_empty(16).view(np.float32), aligned_empty(16).view(np.float32)
    >>> b, b0, b1 = aligned_empty(16), aligned_empty(16), aligned_empty(16)
    >>> x[:], b[:6] = [1, 2, 3, 4], [1, 2, 3, 4, 5, 6]
    >>> batch.execute([x, b], [y, b0, b1])
    >>> y, b0[:3], b1[:3]
    (array([4., 3., 2., 1.], dtype=float32), array([1, 2, 3], dtype=uint8), array([4, 5, 6], dtype=uint8))
    """
    if isinstance(descs, OperatorDesc) or not isinstance(descs, Iterable):
        raise TypeError(f"compile_batch: takes a list of operator descriptors, not one {type(descs).__name__}")
    descs = tuple(descs)
    if not descs:
        raise ValueError("compile_batch: the list of descriptors is empty; a batch needs at least one")
    problems, plans = [], []
    for i, desc in enumerate(descs):
        if not isinstance(desc, OperatorDesc):
            problems.append(f"descs[{i}] is a {type(desc).__name__}, not an operator descriptor")
            continue
        plans.append(desc.to_plan())
        if not isinstance(plans[-1], CopyPlan):
            problems.append(f"descs[{i}] is {desc.NAME}, not a strided copy (Slice, Slice1, Split or Join)")
    if problems:
        raise TypeError(f"compile_batch: {'; '.join(problems)}")
    return CompiledBatch(descs, plans, device)


def check_views(where, inputs, outputs, device=None) -> None:
    """The binding rules of NumPy or CuPy arrays bound as the views they are (their own shape
    and strides, any address), without an operator: for an array function that then runs on
    copies of them, whose ``out=`` keeps the rules against the arrays it was given.

    Raises
    ------
    BindingError
        Listing every broken rule (an output that overlaps another binding, or is read-only).
    """

    def slots(role, arrays):
        return [
            Slot(f"{role}[{k}]", a.itemsize, a.shape, element_strides(a.shape, a.strides, a.itemsize))
            for k, a in enumerate(arrays)
        ]

    Bindings(where, slots("inputs", inputs), slots("outputs", outputs), device).bind(list(inputs), list(outputs))


hooks.compile.provide(CompiledOperator)

"""The NumPy reference backend: runs plans on host memory with strided NumPy views.

Buffers are addressed by the byte address of their element 0; the caller keeps the memory
alive for the call, which is synchronous. Elements move as unsigned integers of their width, so
every bit pattern (NaN payloads included) is copied exactly.
"""

from __future__ import annotations

import numpy as np

from ..core.overlap import array_at
from ..core.plan import CopyPlan, SliceGradPlan, WindowGradPlan, WindowPlan, grad_window_dtype

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
#: What window_grad's kinds read and add (``WindowGradPlan.kind``): words, wrapping unsigned
#: integers, floats (halves added as float32).
_GRAD_TYPES = {k: (_UNSIGNED[k % 10],) * 2 for k in (1, 2, 4, 8, 11, 12, 14, 18)} | {
    22: (np.float16, np.float32),
    24: (np.float32, np.float32),
    28: (np.float64, np.float64),
}


def strided_view(address, element_size, shape, strides):
    """A NumPy view of ``shape`` elements at ``address`` with signed element ``strides``."""
    typestr = np.dtype(_UNSIGNED[element_size]).str
    return array_at(address, shape, typestr, [s * element_size for s in strides], writable=True)


def run(plan, inputs, outputs) -> None:
    """Run ``plan``; ``inputs``/``outputs`` are the bindings' addresses."""
    size = plan.element_size
    if isinstance(plan, CopyPlan):
        for job in plan.jobs:
            source = strided_view(inputs[job.input] + job.in_offset * size, size, job.sizes, job.in_strides)
            target = strided_view(outputs[job.output] + job.out_offset * size, size, job.sizes, job.out_strides)
            target[...] = source
    elif isinstance(plan, SliceGradPlan):
        target = strided_view(outputs[0], size, plan.sizes, plan.out_strides)
        # 0, but for cudadml.numpy.pad's fill: its pattern, by innermost coordinate.
        pattern = np.frombuffer(plan.fill, target.dtype)
        target[...] = pattern[np.arange(plan.sizes[-1]) % len(pattern)]
        window = tuple(
            slice(start, start + step * (count - 1) + 1, step)
            for start, step, count in zip(plan.starts, plan.steps, plan.counts)
        )
        target[window] = strided_view(inputs[0] + plan.in_offset * size, size, plan.counts, plan.in_strides)
    elif isinstance(plan, WindowPlan):
        rank = len(plan.sizes)
        table = strided_view(inputs[1], 8, (plan.num_windows, 1 + rank), (1 + rank, 1)).view(np.int64)
        for n, (offset, *strides) in enumerate(table.tolist()):
            source = strided_view(inputs[0] + offset * size, size, plan.sizes, strides)
            at = outputs[0] + n * plan.out_window * size
            strided_view(at, size, plan.sizes, plan.out_strides)[...] = source
    elif isinstance(plan, WindowGradPlan):
        _window_grad(plan, inputs, outputs)
    else:
        raise TypeError(f"unknown plan {type(plan).__name__}")


def _window_grad(plan, inputs, outputs) -> None:
    """Window by window, in order: the first gradient an element receives is taken as it is,
    later ones are added (as window_grad does, so the bits agree)."""
    read_type, sum_type = _GRAD_TYPES[plan.kind]
    size, in_size = plan.element_size, np.dtype(read_type).itemsize
    target = strided_view(outputs[0], size, plan.sizes, plan.out_strides).view(sum_type)
    target[...] = 0
    covered = np.zeros(plan.sizes, bool)
    rank = len(plan.sizes) - plan.per_sample
    dtype = grad_window_dtype(rank)
    table = array_at(inputs[1], (plan.num_windows,), f"|V{dtype.itemsize}", descr=dtype.descr)
    for n, row in enumerate(table):
        dims = row["dims"]
        dy = strided_view(inputs[0] + int(row["dy_offset"]) * in_size, in_size, dims["count"], dims["dy_stride"])
        window = tuple(slice(a, a + b * (c - 1) + 1, b) for a, b, c in zip(dims["start"], dims["step"], dims["count"]))
        window = (n, *window) if plan.per_sample else window
        value = dy.view(read_type).astype(sum_type)
        with np.errstate(all="ignore"):  # infinities and NaNs add as the kernel adds them
            target[window] = np.where(covered[window], target[window] + value, value)
        covered[window] = True

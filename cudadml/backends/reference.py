"""The NumPy reference backend: runs plans on host memory with strided NumPy views.

Buffers are addressed by the byte address of their element 0; the caller keeps the memory
alive for the call, which is synchronous. Elements move as unsigned integers of their width, so
every bit pattern (NaN payloads included) is copied exactly.
"""

from __future__ import annotations

import numpy as np

from ..plan import CopyPlan, SliceGradPlan

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class _Interface:
    def __init__(self, interface):
        self.__array_interface__ = interface


def strided_view(address, element_size, shape, strides):
    """A NumPy view of ``shape`` elements at ``address`` with signed element ``strides``."""
    interface = {
        "data": (address, False),
        "shape": tuple(shape),
        "strides": tuple(s * element_size for s in strides),
        "typestr": np.dtype(_UNSIGNED[element_size]).str,
        "version": 3,
    }
    return np.asarray(_Interface(interface))


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
        target[...] = 0
        window = tuple(
            slice(start, start + step * (count - 1) + 1, step)
            for start, step, count in zip(plan.starts, plan.steps, plan.counts)
        )
        target[window] = strided_view(inputs[0] + plan.in_offset * size, size, plan.counts, plan.in_strides)
    else:
        raise TypeError(f"unknown plan {type(plan).__name__}")

"""The operators, one module each: DirectML's SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN, the
basic index (``strided_slice``) and its gradient, and cudadml's own batch of windows and its
gradient.

A module holds everything about its operator: the descriptor (DirectML's rules, the lowering to
a plan), the normalised call (``of``, ``describe``, ``words``), and the rules the adapters and
pictures read (gradient, batching, chunking, picture, messages), registered as an
``operators.Operator`` in ``operators.REGISTRY``. Adding an operator is adding a module here
(and its kernel, and its table of cases in ``tests/cases.py``).
"""

from ..operators import REGISTRY
from .join import Join, JoinOperatorDesc
from .slice import Slice, SliceOperatorDesc
from .slice1 import Slice1, Slice1OperatorDesc
from .slice_grad import SliceGrad, SliceGradOperatorDesc
from .split import Split, SplitOperatorDesc
from .strided_slice import StridedSlice, StridedSliceGrad
from .windows import Slice1Batch, Slice1BatchGrad, WindowsBatchGradOperatorDesc, WindowsBatchOperatorDesc

__all__ = [
    "REGISTRY",
    "Join",
    "JoinOperatorDesc",
    "Slice",
    "Slice1",
    "Slice1Batch",
    "Slice1BatchGrad",
    "Slice1OperatorDesc",
    "SliceGrad",
    "SliceGradOperatorDesc",
    "SliceOperatorDesc",
    "Split",
    "SplitOperatorDesc",
    "StridedSlice",
    "StridedSliceGrad",
    "WindowsBatchGradOperatorDesc",
    "WindowsBatchOperatorDesc",
    "of_call",
    "of_desc",
]

_BY_CALL = {op.call: op for op in REGISTRY.values()}
_BY_DESC = {op.desc: op for op in REGISTRY.values() if op.desc is not None}


def of_call(operation):
    """The registered operator of an operation (a normalised call)."""
    return _BY_CALL[type(operation)]


def of_desc(desc):
    """The registered operator whose descriptor ``desc`` is (or derives from)."""
    for cls in type(desc).__mro__:
        if cls in _BY_DESC:
            return _BY_DESC[cls]
    raise TypeError(f"{type(desc).__name__} is no registered operator's descriptor")

"""The operators, one module each: DirectML's SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN, the
basic index (``strided_slice``) and its gradient, and cudadml's own batch of windows and its
gradient.

A module holds everything about its operator: the descriptor (DirectML's rules, the lowering to
a plan), the normalised call (``of``, ``descriptor``, ``words``), and the rules the adapters and
pictures read (gradient, batching, chunking, picture, messages), registered as an
``operators.Operator`` in ``operators.REGISTRY``. Every module here is imported
(``discover``), so adding an operator is adding a module here (and its kernel, and its table
of cases in ``tests/cases.py``). The registry's order: the modules whose classes this package
shows, in the order imported below, then the others by name.
"""

import importlib
import inspect
import pkgutil
import re

from ..core import operators
from ..core.errors import fill_docstring
from ..core.operators import REGISTRY
from .join import Join, JoinOperatorDesc
from .padding import Padding1OperatorDesc, PaddingOperatorDesc
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
    "Padding1OperatorDesc",
    "PaddingOperatorDesc",
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
    "discover",
    "of_desc",
]


def discover(path=__path__):
    """Import every module of the folders ``path`` (this package's) not imported yet, by name:
    each registers its operator in ``REGISTRY``."""
    for module in sorted(m.name for m in pkgutil.iter_modules(path)):
        importlib.import_module(f"{__name__}.{module}")


discover()
_BY_DESC = {op.desc: op for op in REGISTRY.values() if op.desc is not None}


# The docstring sections the operators' descriptors share beyond those ``operators`` fills in
# (``{feature_level}``, ``{raises}``): filled in below, in each registered descriptor's docstring
# and its methods', once every module here has registered its operator.
_SHARED_DOC = {
    "{examples}": """Examples
--------
>>> import cudadml as cd
>>> f32 = cd.TensorDataType.FLOAT32""",
    "{pieces}": """The local pieces of output ``port`` in terms of the node's inputs, for graphs
(``GraphDesc.compile`` composes them): a list of ``(source, dims)`` with per dimension
``(lo, step, count, src_lo, src_step)``, where output element ``lo + step * k`` takes
element ``src_lo + src_step * k`` of input ``source`` (None: zero), for ``0 <= k <
count``; the pieces tile the output exactly.""",
    # ``pieces``' parameter, where the operator has one output (``{operator}``: its DirectML name)
    "{pieces parameters}": """Parameters
----------
port : int
    The output (0: {operator} has one).""",
    "{pieces returns}": """Returns
-------
list of (int or None, tuple of (int, int, int, int, int))
    The pieces.""",
}


def _descriptors(cls=operators.OperatorDesc):
    """Every descriptor class of the operators' modules (registered as an operator's or not)."""
    for sub in cls.__subclasses__():
        if sub.__module__.startswith(f"{__name__}."):
            yield sub
        yield from _descriptors(sub)


def _fill_shared_sections():
    """``_SHARED_DOC``'s sections filled in every descriptor's docstring and its methods'."""
    names = {op.desc: op.name.upper() for op in _BY_DESC.values()}
    for desc in set(_descriptors()):
        # (DirectML's name: the registered operator's, or the class's words: SpaceToDepth1 -> SPACE_TO_DEPTH1)
        name = names.get(desc) or re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", desc.NAME).upper()
        texts = {**_SHARED_DOC, "{pieces parameters}": _SHARED_DOC["{pieces parameters}"].format(operator=name)}
        desc.__doc__ = fill_docstring(desc.__doc__, texts)
        for method in vars(desc).values():
            if inspect.isfunction(method) and method.__doc__:
                method.__doc__ = fill_docstring(method.__doc__, texts)


_fill_shared_sections()


def of_desc(desc):
    """The registered operator whose descriptor ``desc`` is (or derives from)."""
    for cls in type(desc).__mro__:
        if cls in _BY_DESC:
            return _BY_DESC[cls]
    raise TypeError(f"{type(desc).__name__} is no registered operator's descriptor")

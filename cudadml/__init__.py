"""cudadml: DirectML's SLICE, SLICE1, SLICE_GRAD, SPLIT and JOIN on NVIDIA GPUs.

Two layers share one set of rules:

* descriptors (``SliceOperatorDesc`` ... ``JoinOperatorDesc`` over ``BufferTensorDesc``),
  validated exactly as DirectML does, compiled and executed with buffer bindings;
* array functions (``slice``, ``slice1``, ``slice_grad``, ``split``, ``join``,
  ``strided_slice``, ``strided_slice_grad``) on NumPy and CuPy arrays, PyTorch tensors
  (with autograd) and Dask arrays (lazy graphs of chunks).

``explain`` draws what an operator or an array-function call does. ``precompile`` compiles the
kernels a workload will need ahead of its first call; compiles are logged at INFO level on
``logging.getLogger("cudadml")``.

The package is in layers, one folder each, from the bottom up; a module imports only from its
own layer or those below it, never in a circle (``tests/test_layers.py`` reads the layers from
the folders and checks it):

* ``core``: the rules every operator shares: tensors, enumerations, errors, plans, basic
  indexing, overlaps, messages in the caller's words, the descriptor base and the registry,
  the normalised calls, the bounded caches (``cache_info`` lists them, ``clear_caches`` empties
  them);
* ``ops``: one module per operator, found and registered by the package: its descriptor,
  normalised call and the rules the layers above read;
* ``backends``: where plans run: the CUDA kernels (their sources in ``kernels_cu/`` beside
  their loader), the NumPy reference and the host emulation;
* ``run``: bindings, ``CompiledOperator`` (the one route to a backend), the runner (every
  array call, cached; the windows batches by their own runs), the adapter interface and the
  array functions, ``precompile``;
* ``numpy``: NumPy's names, one module per family;
* ``graphs``: ``GraphDesc`` composed into copies, and ``fuse``;
* ``interop``: the PyTorch and Dask adapters, loaded when a call holds their arrays, and
  PyTorch's half of ``fuse``;
* ``display``: reprs' pictures and ``explain``;
* on top, the public face: this module, ``errors``, ``onnx`` (ONNX models as graphs),
  ``testing``, ``examples`` (DirectML's worked examples) and ``__main__`` (the self-check).
"""

from . import interop  # noqa: F401 (interop provides the arrays a compiled graph takes)
from .backends import use_host_backend
from .core.enums import FeatureLevel, PaddingMode, TensorDataType, TensorFlags
from .core.memory import cache_info, clear_caches
from .core.tensor import BufferTensorDesc, calc_buffer_tensor_size
from .display import explain
from .errors import BindingError, DescriptorError, ValidationError
from .graphs import graph
from .graphs.fuse import fuse
from .graphs.graph import *  # noqa: F403 (the graphs: graph.__all__)
from .ops import (
    JoinOperatorDesc,
    Padding1OperatorDesc,
    PaddingOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
    WindowsBatchGradOperatorDesc,
    WindowsBatchOperatorDesc,
)
from .run import arrays
from .run.adapters import register_adapter
from .run.arrays import *  # noqa: F403 (the array functions: arrays.__all__)
from .run.bindings import BufferBinding
from .run.compiled import BoundOperator, CompiledOperator, compile_batch
from .run.runner import CACHE_BYTES  # noqa: F401 (public, outside __all__: a constant has no docstring)
from .run.warmup import precompile

__version__ = "0.1.0"


def _torch_adapter():
    from .interop.torch import ADAPTER

    return ADAPTER


def _dask_adapter():
    from .interop.dask import ADAPTER

    return ADAPTER


# Dask first: a call holding any Dask array is Dask's; one whose first array is a tensor, torch's.
register_adapter("dask.array", _dask_adapter)
register_adapter("torch", _torch_adapter)

__all__ = [
    "BindingError",
    "BoundOperator",
    "BufferBinding",
    "BufferTensorDesc",
    "CompiledOperator",
    "DescriptorError",
    "FeatureLevel",
    "JoinOperatorDesc",
    "Padding1OperatorDesc",
    "PaddingMode",
    "PaddingOperatorDesc",
    "Slice1OperatorDesc",
    "SliceGradOperatorDesc",
    "SliceOperatorDesc",
    "SplitOperatorDesc",
    "TensorDataType",
    "TensorFlags",
    "ValidationError",
    "WindowsBatchGradOperatorDesc",
    "WindowsBatchOperatorDesc",
    "cache_info",
    "calc_buffer_tensor_size",
    "clear_caches",
    "compile_batch",
    "explain",
    "fuse",
    "precompile",
    "register_adapter",
    "use_host_backend",
]
__all__ += arrays.__all__ + graph.__all__
__all__.sort()  # the array functions and the graphs in their places

#: Submodules that are part of the public interface, loaded on first use (``cd.numpy``, ``cd.onnx``).
_PUBLIC_SUBMODULES = ("numpy", "testing", "onnx")


def __getattr__(name):
    if name in _PUBLIC_SUBMODULES:
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The public names only: the layers' modules are the package's inside."""
    return sorted([*__all__, "CACHE_BYTES", "__version__", *_PUBLIC_SUBMODULES])

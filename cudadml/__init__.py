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

The modules, in layers from the bottom up; a module imports only from its own layer or those
below it (earlier in this list), never in a circle (``tests/test_layers.py`` checks it):

* core: ``enums`` and ``errors`` (the vocabulary), ``tensor`` (``BufferTensorDesc`` and its
  rules), ``plan`` (the lowered form and its shape algebra, and the windows' tables that the
  backends read), ``overlap`` (whether a layout reaches an element twice), ``indexing`` (basic
  indexing as windows), ``messages`` (DirectML's words said in the caller's), ``operators``
  (what every operator shares: the descriptor base, support tables, the registry), ``calls``
  (what every normalised call shares), ``ops`` (one module per operator: ``slice``,
  ``slice1``, ``slice_grad``, ``split``, ``join``, ``strided_slice`` and its gradient,
  ``windows`` (cudadml's own batch of windows and its gradient); each holds its descriptor,
  normalised call and rules, and registers them), ``examples`` (DirectML's worked examples),
  ``hooks`` (what the layers above provide for those below to call: ``compile()``'s class,
  the pictures, the caller's arrays of a compiled graph);
* execution: ``bindings`` (the binding rules), ``backends`` (CUDA kernels, NumPy reference,
  host emulation; each places a windows' table where it reads it), ``compiled``
  (``CompiledOperator``: the one route to a backend; ``BoundOperator``, ``compile_batch``),
  ``graph`` (``GraphDesc``: a graph composed into copies), ``warmup`` (``precompile``),
  ``testing`` (buffers and oracles for tests);
* front: ``runner`` (operations on NumPy and CuPy arrays, each run by a compiled operator:
  their cache, the arrays converted, results), ``adapters`` (how other array libraries plug
  in), ``arrays`` (the public array functions), ``numpy`` (NumPy's names), ``onnx`` (ONNX
  models as graphs);
* top: ``display`` (reprs' pictures and ``explain``), ``fuse`` (functions of array calls traced
  into graphs), ``interop.torch`` and ``interop.dask`` (the adapters of PyTorch and Dask,
  registered here and loaded when a call holds their arrays), ``__main__`` and ``_bench`` (the
  self-check).
"""

from . import arrays, graph, interop  # noqa: F401 (interop provides the arrays a compiled graph takes)
from .adapters import register_adapter
from .arrays import *  # noqa: F403 (the array functions: arrays.__all__)
from .backends import use_host_backend
from .bindings import BufferBinding
from .compiled import BoundOperator, CompiledOperator, compile_batch
from .display import explain
from .enums import FeatureLevel, TensorDataType, TensorFlags
from .errors import BindingError, DescriptorError, ValidationError
from .fuse import fuse
from .graph import *  # noqa: F403 (the graphs: graph.__all__)
from .ops import (
    JoinOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
    WindowsBatchGradOperatorDesc,
    WindowsBatchOperatorDesc,
)
from .tensor import BufferTensorDesc, calc_buffer_tensor_size
from .warmup import precompile

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
    "Slice1OperatorDesc",
    "SliceGradOperatorDesc",
    "SliceOperatorDesc",
    "SplitOperatorDesc",
    "TensorDataType",
    "TensorFlags",
    "ValidationError",
    "WindowsBatchGradOperatorDesc",
    "WindowsBatchOperatorDesc",
    "calc_buffer_tensor_size",
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
    return sorted([*__all__, "__version__", *_PUBLIC_SUBMODULES])

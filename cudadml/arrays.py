"""The array layer: drop-in functions on NumPy, CuPy, PyTorch and Dask arrays.

Each function only normalises its arguments into a key of exact values (integers through
``operator.index``, so NumPy integers count by value; floats, NaN, None and bools where an
integer belongs raise ``TypeError`` before any cache lookup) and then takes the one route
every call takes: the ``CompiledOperator`` cached under that key, built on a miss from the
DirectML descriptor of the call (so every DirectML rule applies, with the same messages) and
lowered with the layouts of the actual arrays, executes with the binding rules of
``CompiledOperator.execute``. ``out=`` arrays are bindings like any other: the same checks,
the same ``BindingError``.

NumPy arrays run on the host backend, CuPy arrays (or CUDA arrays exposing
``__cuda_array_interface__`` or ``__dlpack__``, taken without a copy) through the kernels.
A call given a ``torch.Tensor`` goes through the PyTorch adapter (``interop.torch``), which
runs this same function on views of the tensors and adds autograd; a call given a
``dask.array.Array`` goes through the Dask adapter (``interop.dask``), which validates the
whole call here (``_validating``) and returns a lazy array whose chunks this same function
computes. Empty results are
returned as NumPy returns them, without a descriptor (DirectML tensors cannot be empty). The
cache is bounded in bytes (``CACHE_BYTES``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import operator
import sys
import threading
from builtins import slice as _pyslice  # `slice` is ours below
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, SupportsIndex, TypeVar

import numpy as np

from .bindings import check_element_dtype
from .compiled import CompiledOperator
from .enums import FeatureLevel, TensorDataType
from .errors import BindingError, DescriptorError, as_int, int_tuple
from .operators import (
    JoinOperatorDesc,
    Slice1OperatorDesc,
    SliceGradOperatorDesc,
    SliceOperatorDesc,
    SplitOperatorDesc,
)
from .tensor import MAX_DIMENSIONS, SPAN_RULE, BufferTensorDesc, packed_strides

__all__ = [
    "CACHE_BYTES",
    "join",
    "slice",
    "slice1",
    "slice_grad",
    "split",
    "strided_slice",
    "strided_slice_grad",
]

#: Bound on the estimated bytes of the compiled operators the array functions keep; the least
#: recently used are dropped past it. An entry costs about ``_ENTRY_BYTES`` plus
#: ``_BINDING_BYTES`` per bound array (a 10 000-part split about 15 MiB).
CACHE_BYTES = 64 * 2**20
_ENTRY_BYTES = 4096
_BINDING_BYTES = 1536
#: Parts of a split share one allocation, each starting at a multiple of this many bytes.
_PART_ALIGNMENT = 16
_NEWEST = FeatureLevel.newest()
_DTYPE, _SHAPE, _STRIDES = operator.attrgetter("dtype"), operator.attrgetter("shape"), operator.attrgetter("strides")


#: True while ``_validating``: calls validate and return their entry, and nothing else.
_VALIDATING = contextvars.ContextVar("cudadml_validating", default=False)


@contextlib.contextmanager
def _validating():
    """Inside the block (in the calling thread), an array function normalises and validates
    its call exactly as always (the same descriptor, rules and messages) but compiles,
    allocates, runs and caches nothing, and returns the call's ``_Entry`` (its result
    shapes). The buffer-span rule is lifted: the Dask adapter validates whole calls this way,
    on stand-in arrays of the whole shapes, and each of its chunks is a buffer of its own."""
    validating, span = _VALIDATING.set(True), SPAN_RULE.set(False)
    try:
        yield
    finally:
        SPAN_RULE.reset(span)
        _VALIDATING.reset(validating)


class _Entry:
    """A normalised call's compiled operator (None when nothing is moved), its result shapes,
    the results (split) or arrays (join) it binds, and for a split without ``out=`` the byte
    offset of each part in the one allocation (``total`` bytes); ``used``: hit since the cache
    last passed over it."""

    __slots__ = ("bound", "nbytes", "offsets", "op", "shapes", "total", "used", "zeros")

    def __init__(self, op, shapes, bound=(0,), *, zeros=False, offsets=None, total=0):
        self.op, self.shapes, self.bound, self.zeros = op, shapes, bound, zeros
        self.offsets, self.total, self.used = offsets, total, False
        self.nbytes = _ENTRY_BYTES + _BINDING_BYTES * len(shapes)


class _Cache:
    """Entries by key, bounded in estimated bytes, dropping the least recently used first as
    CLOCK approximates it: a hit only marks its entry (moving it to the back would hash the key,
    which holds every array's layout, a second time per call); past the bound, the oldest entry
    goes unless it is marked, in which case it loses its mark and moves to the back."""

    def __init__(self, limit):
        self.limit, self.nbytes = limit, 0
        self._entries = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._entries)

    def get(self, key, build):
        """The entry for ``key``; on a miss ``build(*key)`` makes it (and may raise: a call that
        breaks a rule leaves nothing behind)."""
        entry = self._entries.get(key)
        if entry is not None:
            entry.used = True
            return entry
        entry = build(*key)
        if _VALIDATING.get():
            return entry
        with self._lock:
            if key not in self._entries:
                self._entries[key] = entry
                self.nbytes += entry.nbytes
                self._trim(entry)
        return entry

    def _trim(self, newest):
        """Drop entries, oldest first and sparing marked ones once, until within the bound
        (``newest`` stays). Every pass unmarks or drops, so it ends."""
        entries = self._entries
        while self.nbytes > self.limit and len(entries) > 1:
            key, oldest = next(iter(entries.items()))
            if oldest.used or oldest is newest:
                oldest.used = False
                entries.move_to_end(key)
            else:
                del entries[key]
                self.nbytes -= oldest.nbytes

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.nbytes = 0


_CACHE = _Cache(CACHE_BYTES)

#: An array of any kind the functions take: each returns arrays of the kind it was given.
Array = TypeVar("Array")
Ints = Sequence[SupportsIndex]
Level = FeatureLevel | int | str | None

# The docstring sections every array function shares, filled in by ``_public``.
_SHARED = {
    "{shared parameters}": """feature_level : FeatureLevel, int or str, optional
    The DirectML feature level to validate against (default: the newest).
stream : cupy.cuda.Stream or torch.cuda.Stream, optional
    For device arrays, the stream to run on: by default the current CuPy stream, or for
    CUDA tensors the current torch stream of their device. Not for Dask arrays, whose
    chunks run on their worker's current stream.
directml_types : bool, default True
    ``False`` moves the elements of any 1, 2, 4 or 8-byte dtype as raw bits (bool,
    complex64, a bfloat16 tensor); ``True`` takes only dtypes with a DirectML type.
chunks : str, int, tuple or dict, optional
    For Dask arrays only: the chunks of the result, in any form ``dask.array`` takes
    (``"auto"``, a block shape, sizes per axis); for `split`, one such value for every
    part or a list of one per part. By default the result's chunks follow the input's.""",
    "{shared raises}": """DescriptorError
    If the call breaks a DirectML rule; its message lists every broken rule. Nothing runs.
BindingError
    If ``out`` has another shape or overlaps an input. Nothing runs.
TypeError
    For an argument of a wrong type: a float, None or bool where an integer belongs, a dtype
    without a DirectML type, arrays of different memory kinds, ``out=`` with an input
    that requires grad; for Dask arrays, ``out=`` or ``stream=`` (a Dask array is
    immutable: its result is a new lazy array), or chunks that are neither NumPy nor CuPy
    arrays, or of both kinds.
ValueError
    For Dask arrays of unknown chunk sizes (``compute_chunk_sizes()`` finds them).""",
}


def _public(fn):
    """An array function as users call it: its docstring's shared sections filled in, a
    ``chunks=`` keyword added, and a call holding a Dask array (as its array or any of its
    arrays, or as ``out``) handed to the Dask adapter (``interop.dask``: lazy Dask arrays out)
    or one holding a ``torch.Tensor`` to the PyTorch adapter (``interop.torch``: tensors out,
    with autograd). Neither library is imported here: a Dask array or tensor means its caller
    imported it."""
    for placeholder, text in _SHARED.items():
        fn.__doc__ = fn.__doc__.replace(placeholder, text.replace("\n", "\n    "))
    signature = inspect.signature(fn)
    first = next(iter(signature.parameters))
    many_in, many_out = first == "xs", fn.__name__ == "split"

    @functools.wraps(fn)
    def call(*args, chunks=None, **kwargs):
        given, out = args[0] if args else kwargs.get(first), kwargs.get("out")
        plain = _PLAIN_TYPES if len(_PLAIN_TYPES) == 2 else _plain_types()
        if type(given) in plain and (out is None or type(out) in plain) and chunks is None:
            return fn(*args, **kwargs)  # a NumPy or CuPy array itself: no adapter to look for
        dask = sys.modules.get("dask.array")
        if dask is not None and (_any_is(dask.Array, given, many_in) or _any_is(dask.Array, out, many_out)):
            from .interop import dask as adapter

            return adapter.call(fn, args, kwargs, chunks)
        if chunks is not None:
            raise TypeError(f"{fn.__name__}: chunks= is for Dask arrays; this call has none")
        torch = sys.modules.get("torch")
        if torch is not None:
            if _first_is(torch.Tensor, given, many_in) or _first_is(torch.Tensor, out, many_out):
                from .interop import torch as adapter

                return adapter.call(fn, args, kwargs)
        return fn(*args, **kwargs)

    chunks = inspect.Parameter("chunks", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Any")
    call.__signature__ = signature.replace(parameters=[*signature.parameters.values(), chunks])
    return call


#: NumPy's and, once CuPy is imported, CuPy's array type: arrays that no adapter takes.
_PLAIN_TYPES = frozenset({np.ndarray})


def _plain_types():
    global _PLAIN_TYPES
    ndarray = getattr(sys.modules.get("cupy"), "ndarray", None)
    if ndarray is not None:
        _PLAIN_TYPES = frozenset({np.ndarray, ndarray})
    return _PLAIN_TYPES


def _first_is(kind, a, many):
    """Whether ``a`` (or, with ``many``, the first item of a list or tuple ``a``) is a ``kind``."""
    if many and isinstance(a, (list, tuple)):
        a = a[0] if a else None
    return isinstance(a, kind)


def _any_is(kind, a, many):
    """Whether ``a`` (or, with ``many``, any item of a list or tuple ``a``) is a ``kind``."""
    if many and isinstance(a, (list, tuple)):
        return any(isinstance(item, kind) for item in a)
    return isinstance(a, kind)


# ---- normalisation ------------------------------------------------------------------------------


def _as_array(x, name):
    """``(kind, array)``: CuPy for device memory (zero-copy), NumPy for everything else.

    NumPy subclasses other than ``memmap`` are refused: a result is a plain array, so a
    masked array's mask or a matrix's semantics would be dropped without a word. So are
    ``str`` and ``bytes``, which NumPy would take as one 0-dimensional element."""
    if type(x) is np.ndarray:
        return "numpy", x
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return "cupy", x
    if isinstance(x, np.ndarray):
        if type(x) is not np.memmap:
            raise TypeError(
                f"{name} is a {type(x).__name__}, a NumPy subclass whose meaning (a mask, matrix rules) the "
                f"plain result would drop; pass np.asarray(...) of it to work on its data"
            )
        return "numpy", x
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} is {type(x).__name__}, not an array (NumPy would make it one 0-dimensional element)")
    if hasattr(x, "__cuda_array_interface__"):
        import cupy

        return "cupy", cupy.asarray(x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2:
        import cupy  # 2 is kDLCUDA

        return "cupy", cupy.from_dlpack(x)
    return "numpy", np.asarray(x)


def _input(x, name):
    """``(kind, array)`` for an input. NumPy arrays must hold plain data; strides that are not
    whole elements get a copy. (CuPy has neither object dtypes nor such strides.)"""
    kind, x = _as_array(x, f"{name}: the input")
    if kind == "numpy":
        check_element_dtype(x.dtype, f"{name}: the input")
        if any(s % x.itemsize for s in x.strides):
            x = np.ascontiguousarray(x)
    return kind, x


def _device(kind, x):
    return x.data.device_id if kind == "cupy" else None


def _out(kind, out, name):
    """``out`` as an array of ``kind``; ``TypeError`` for another memory kind or a non-plain dtype."""
    out_kind, out = _as_array(out, f"{name}: out")
    if out_kind != kind:
        raise TypeError(f"{name}: out is in {out_kind} memory but the input is in {kind} memory")
    if kind == "numpy":
        check_element_dtype(out.dtype, f"{name}: out")
    return out


def _layout(a):
    return a.shape, a.strides


def _out_layout(out):
    return None if out is None else (out.shape, out.strides, out.dtype)


def _level(feature_level):
    return _NEWEST if feature_level is None else FeatureLevel.coerce(feature_level)


def _flag(value):
    if value is True or value is False:
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    raise TypeError(f"directml_types must be a bool, not {type(value).__name__}")


def _shape_of(a, name):
    if a.ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to slice")
    return a.shape


def _normalize_axis(axis, ndim, name):
    axis = as_int(axis, "axis", name)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _run(entry, inputs, outputs, stream, new_outputs):
    if entry.op is not None:
        entry.op._execute_known_layouts(inputs, outputs, stream, new_outputs)


def _empty(kind, shape, dtype):
    if kind == "numpy":
        return np.empty(shape, dtype)
    return sys.modules["cupy"].ndarray(shape, dtype)


# ---- 16-byte elements ---------------------------------------------------------------------------
# DirectML has no 16-byte data type: with directml_types=False, an array of 16-byte elements
# (complex128, V16, ...) is handed to the operators as a view of pairs of 8-byte words, a
# trailing axis of 2 (one more dimension), and results are viewed back. No byte is copied.


def _moves_words(a, directml_types):
    return a.dtype.itemsize == 16 and directml_types is False


def _words(kind, a):
    """``a``'s 16-byte elements as pairs of 8-byte words: a view with a trailing axis of 2."""
    if kind == "numpy":
        return a[..., None].view(np.uint64)
    cupy = sys.modules["cupy"]
    return cupy.ndarray((*a.shape, 2), np.uint64, memptr=a.data, strides=(*a.strides, 8))


def _elements(kind, words, dtype):
    """The inverse of ``_words``: the 16-byte elements of a view of word pairs."""
    if kind == "numpy":
        return words.view(dtype)[..., 0]
    cupy = sys.modules["cupy"]
    return cupy.ndarray(words.shape[:-1], dtype, memptr=words.data, strides=words.strides[:-1])


def _word_options(feature_level, stream):
    return {"feature_level": feature_level, "stream": stream, "directml_types": False}


def _on_words(name, kind, xs, out, call, ndim=None):
    """``call(word views of xs, word views of out)`` for arrays of 16-byte elements, with its
    results viewed back as elements (``out`` itself where given). ``ndim``: the rank of the
    tensors the call describes (the first array's when omitted)."""
    dtype = xs[0].dtype
    ndim = xs[0].ndim if ndim is None else ndim
    if ndim >= MAX_DIMENSIONS:
        raise ValueError(
            f"{name}: 16-byte elements move as pairs of 8-byte words (one more dimension), so "
            f"arrays of up to {MAX_DIMENSIONS - 1} dimensions; this one has {ndim}"
        )
    words_out = None
    if out is not None:
        for o in out if isinstance(out, list) else [out]:
            if o.dtype != dtype:
                raise TypeError(f"{name}: out has dtype {o.dtype}; the result has dtype {dtype}")
        words_out = [_words(kind, o) for o in out] if isinstance(out, list) else _words(kind, out)
    result = call([_words(kind, x) for x in xs], words_out)
    if _VALIDATING.get():  # the entry of the words' call: its shapes less the words' axis
        return _Entry(None, tuple(s[:-1] for s in result.shapes))
    if out is not None:
        return out
    if isinstance(result, list):
        return [_elements(kind, r, dtype) for r in result]
    return _elements(kind, result, dtype)


# ---- building entries (from the key alone) ------------------------------------------------------


def _data_type(dtype, directml_types: bool) -> TensorDataType:
    if directml_types:
        try:
            return TensorDataType.from_dtype(dtype)
        except ValueError as e:
            raise TypeError(f"{e}; pass directml_types=False to move its elements as raw bits") from None
    if dtype.itemsize not in (1, 2, 4, 8):
        raise TypeError(f"dtype {dtype} is not a plain 1, 2, 4, 8 or 16-byte element")
    return TensorDataType.unsigned_of_width(dtype.itemsize)


def _tensor(data_type, shape):
    return BufferTensorDesc(data_type, shape)


def _element_view(layout, itemsize):
    """``(shape, element strides)`` of an input's ``(shape, byte strides)``."""
    shape, strides = layout
    if any(s % itemsize for s in strides):
        raise ValueError(f"an input has strides {strides}, not whole {itemsize}-byte elements")
    return shape, tuple(s // itemsize for s in strides)


def _result_view(name, k, out_layout, shape, dtype):
    """The layout result ``k`` is compiled for: ``out``'s, checked against the result's shape
    and dtype, or packed for a fresh result."""
    if out_layout is None:
        return tuple(shape), packed_strides(shape)
    out_shape, out_strides, out_dtype = out_layout
    if out_dtype != dtype:
        raise TypeError(f"{name}: out has dtype {out_dtype}; the result has dtype {dtype}")
    where = f"{name}.execute: outputs[{k}]"
    if out_shape != tuple(shape):
        raise BindingError([f"{where}: out has shape {out_shape}; the result has shape {tuple(shape)}"])
    if any(s % dtype.itemsize for s in out_strides):
        raise BindingError([f"{where}: out has strides {out_strides}, not whole {dtype.itemsize}-byte elements"])
    return out_shape, tuple(s // dtype.itemsize for s in out_strides)


def _check_empty_out(name, results, dtype):
    """``out=`` checks of results that nothing is bound for: ``(index, out layout, shape)``."""
    for k, layout, shape in results:
        if layout is not None:
            _result_view(name, k, layout, shape, dtype)


def _compiled(desc, device, in_views, out_views, placed_at=None):
    if _VALIDATING.get():
        return None
    return CompiledOperator(desc, device, views=(in_views, out_views), placed_at=placed_at, load=False)


def _one_to_one(name, desc, device, dtype, x_layout, out_layout, shape):
    """The entry of a one-input, one-output call."""
    in_view = _element_view(x_layout, dtype.itemsize)
    out_view = _result_view(name, 0, out_layout, shape, dtype)
    return _Entry(_compiled(desc, device, [in_view], [out_view]), (tuple(shape),))


def _check_rank(name, ndim, **arrays):
    """The array-length rule for calls that return empty without a descriptor."""
    wrong = [f"{name}: len({field}) = {len(a)} must equal DimensionCount = {ndim}" for field, a in arrays.items()]
    wrong = [w for w, a in zip(wrong, arrays.values()) if len(a) != ndim]
    if wrong:
        raise DescriptorError(wrong)


def _build_slice(name, kind, device, dtype, flag, level, offsets, sizes, strides, x_layout, out_layout):
    shape = x_layout[0]
    if 0 in sizes:
        _check_rank(name, len(shape), Offsets=offsets, Sizes=sizes, Strides=strides)
        _check_empty_out(name, [(0, out_layout, sizes)], dtype)
        return _Entry(None, (sizes,))
    data_type = _data_type(dtype, flag)
    desc = SliceOperatorDesc(
        _tensor(data_type, shape), _tensor(data_type, sizes), offsets, sizes, strides, feature_level=level
    )
    return _one_to_one(name, desc, device, dtype, x_layout, out_layout, sizes)


def _build_slice1(name, kind, device, dtype, flag, level, offsets, sizes, strides, out_sizes, x_layout, out_layout):
    shape = x_layout[0]
    if 0 in out_sizes:
        _check_rank(name, len(shape), InputWindowOffsets=offsets, InputWindowSizes=sizes, InputWindowStrides=strides)
        _check_empty_out(name, [(0, out_layout, out_sizes)], dtype)
        return _Entry(None, (out_sizes,))
    data_type = _data_type(dtype, flag)
    desc = Slice1OperatorDesc(
        _tensor(data_type, shape), _tensor(data_type, out_sizes), offsets, sizes, strides, feature_level=level
    )
    return _one_to_one(name, desc, device, dtype, x_layout, out_layout, out_sizes)


def _build_slice_grad(name, kind, device, dtype, flag, level, offsets, sizes, strides, shape, dy_layout, out_layout):
    dy_shape = dy_layout[0]
    if 0 in shape or 0 in dy_shape:
        fields = {"InputWindowOffsets": offsets, "InputWindowSizes": sizes, "InputWindowStrides": strides}
        _check_rank(name, len(dy_shape), input_shape=shape, **fields)
        _check_empty_out(name, [(0, out_layout, shape)], dtype)
        return _Entry(None, (shape,), zeros=0 not in shape)
    data_type = _data_type(dtype, flag)
    desc = SliceGradOperatorDesc(
        _tensor(data_type, dy_shape), _tensor(data_type, shape), offsets, sizes, strides, feature_level=level
    )
    return _one_to_one(name, desc, device, dtype, dy_layout, out_layout, shape)


def _build_split(name, kind, device, dtype, flag, level, sizes, axis, x_layout, out_layouts):
    shape = x_layout[0]
    shapes = tuple((*shape[:axis], s, *shape[axis + 1 :]) for s in sizes)
    bound = tuple(k for k, s in enumerate(shapes) if 0 not in s)  # DirectML tensors cannot be empty
    outs = out_layouts or (None,) * len(sizes)
    _check_empty_out(name, [(k, outs[k], shapes[k]) for k in range(len(sizes)) if k not in bound], dtype)
    offsets, total = [], 0
    for s in shapes:  # parts back to back in one allocation, each 16-byte aligned
        offsets.append(total)
        total += -(-int(np.prod(s)) * dtype.itemsize // _PART_ALIGNMENT) * _PART_ALIGNMENT
    if not bound:
        return _Entry(None, shapes, (), offsets=tuple(offsets), total=total)
    data_type = _data_type(dtype, flag)
    desc = SplitOperatorDesc(
        _tensor(data_type, shape), [_tensor(data_type, shapes[k]) for k in bound], axis, feature_level=level
    )
    out_views = [_result_view(name, k, outs[k], shapes[k], dtype) for k in bound]
    placed_at = None if out_layouts else [offsets[k] for k in bound]  # fresh parts: in one allocation
    op = _compiled(desc, device, [_element_view(x_layout, dtype.itemsize)], out_views, placed_at)
    return _Entry(op, shapes, bound, offsets=tuple(offsets), total=total)


def _build_join(name, kind, device, dtype, flag, level, axis, layouts, out_layout):
    shapes = [shape for shape, _ in layouts]
    ndim = len(shapes[0])
    if ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to join")
    axis = _normalize_axis(axis, ndim, name)
    if any(len(s) != ndim for s in shapes):
        raise ValueError(f"{name}: arrays of different ranks {[len(s) for s in shapes]}")
    out_shape = (*shapes[0][:axis], sum(s[axis] for s in shapes), *shapes[0][axis + 1 :])
    bound = tuple(k for k, s in enumerate(shapes) if 0 not in s)
    if not bound:  # nothing to move; the shapes must still agree, as NumPy requires
        for k, s in enumerate(shapes):
            if any(s[d] != shapes[0][d] for d in range(ndim) if d != axis):
                raise ValueError(f"{name}: xs[{k}] has shape {s}, xs[0] {shapes[0]}: only axis {axis} may differ")
        _check_empty_out(name, [(0, out_layout, out_shape)], dtype)
        return _Entry(None, (out_shape,), ())
    data_type = _data_type(dtype, flag)
    desc = JoinOperatorDesc(
        [_tensor(data_type, shapes[k]) for k in bound], _tensor(data_type, out_shape), axis, feature_level=level
    )
    in_views = [_element_view(layouts[k], dtype.itemsize) for k in bound]
    out_view = _result_view(name, 0, out_layout, out_shape, dtype)
    return _Entry(_compiled(desc, device, in_views, [out_view]), (out_shape,), bound)


def _finish(kind, entry, x, out, dtype, stream):
    """Run a one-result call: allocate the result unless ``out`` is given, then execute."""
    if _VALIDATING.get():
        return entry
    new = out is None
    if new:
        out = _empty(kind, entry.shapes[0], dtype)
    if entry.op is not None:
        entry.op._execute_known_layouts([x], [out], stream, new)
    elif entry.zeros:  # the gradient of an empty selection: nothing was read
        if kind == "cupy" and stream is not None:
            with stream:
                out.fill(0)
        else:
            out[...] = 0
    return out


@_public
def slice(
    x: Array,
    offsets: Ints,
    sizes: Ints,
    strides: Ints | None = None,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """DirectML SLICE on an array: ``out[c] = x[offsets + strides * c]``.

    Parameters
    ----------
    x : array_like
        A NumPy or CuPy array, a PyTorch tensor, a Dask array of NumPy or CuPy chunks, or a
        CUDA array exposing ``__cuda_array_interface__`` or ``__dlpack__``; any strides.
    offsets : sequence of int
        Per dimension, the first element to take.
    sizes : sequence of int
        Per dimension, how many elements to take: the result's shape.
    strides : sequence of int, optional
        Per dimension, the step between taken elements, unsigned (0 repeats one element);
        all 1 by default.
    out : array, optional
        Where to write the result: shape ``sizes``, ``x``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of ``x``'s kind (a tensor on ``x``'s device for a tensor, a
        lazy Dask array of chunks of ``x``'s chunk type for a Dask array).

    Raises
    ------
    {shared raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cd.slice(x, [0, 0, 1, 0], [1, 1, 2, 2], [1, 1, 2, 3])
    array([[[[ 5.,  8.],
             [13., 16.]]]], dtype=float32)
    """
    name = "Slice"
    kind, x = _input(x, name)
    shape = _shape_of(x, name)
    if out is not None:
        out = _out(kind, out, name)
    if _moves_words(x, directml_types):
        options = _word_options(feature_level, stream)
        offsets, sizes = int_tuple(offsets, "Offsets", name), int_tuple(sizes, "Sizes", name)
        strides = (1,) * len(shape) if strides is None else int_tuple(strides, "Strides", name)
        return _on_words(
            name,
            kind,
            [x],
            out,
            lambda w, o: slice(w[0], (*offsets, 0), (*sizes, 2), (*strides, 1), out=o, **options),
        )
    key = (
        name,
        kind,
        _device(kind, x),
        x.dtype,
        _flag(directml_types),
        _level(feature_level),
        int_tuple(offsets, "Offsets", name),
        int_tuple(sizes, "Sizes", name),
        (1,) * len(shape) if strides is None else int_tuple(strides, "Strides", name),
        _layout(x),
        _out_layout(out),
    )
    return _finish(kind, _CACHE.get(key, _build_slice), x, out, x.dtype, stream)


def _window_args(name, ndim, offsets, sizes, strides):
    """SLICE1's window arrays as int tuples (strides all 1 when omitted)."""
    return (
        int_tuple(offsets, "InputWindowOffsets", name),
        int_tuple(sizes, "InputWindowSizes", name),
        int_tuple((1,) * ndim if strides is None else strides, "InputWindowStrides", name),
    )


@_public
def slice1(
    x: Array,
    window_offsets: Ints,
    window_sizes: Ints,
    window_strides: Ints | None = None,
    *,
    output_sizes: Ints | None = None,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """DirectML SLICE1 on an array: a window per dimension, read backwards where its stride is negative.

    Parameters
    ----------
    x : array_like
        The array to read, of any kind and strides (as in `slice`).
    window_offsets : sequence of int
        Per dimension, where the window starts.
    window_sizes : sequence of int
        Per dimension, the window's length: ``window_offsets[i] + window_sizes[i] <= x.shape[i]``,
        and no dimension empty.
    window_strides : sequence of int, optional
        Per dimension, the signed, non-zero step; a negative step reads the window from its
        end. All 1 by default.
    output_sizes : sequence of int, optional
        Per dimension, how many elements to take: at most (and by default)
        ``1 + (window_sizes[i] - 1) // abs(window_strides[i])``.
    out : array, optional
        Where to write the result: shape ``output_sizes``, ``x``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of ``x``'s kind.

    Raises
    ------
    {shared raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> cd.slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])[0, 0]
    array([[14., 16.],
           [ 6.,  8.]], dtype=float32)
    """
    name = "Slice1"
    kind, x = _input(x, name)
    shape = _shape_of(x, name)
    if out is not None:
        out = _out(kind, out, name)
    offsets, sizes, strides = _window_args(name, len(shape), window_offsets, window_sizes, window_strides)
    if output_sizes is None:
        output_sizes = tuple(1 + (n - 1) // abs(st) if st and n > 0 else n for n, st in zip(sizes, strides))
    if _moves_words(x, directml_types):
        options = _word_options(feature_level, stream)
        output_sizes = int_tuple(output_sizes, "output_sizes", name)
        return _on_words(
            name,
            kind,
            [x],
            out,
            lambda w, o: slice1(
                w[0],
                (*offsets, 0),
                (*sizes, 2),
                (*strides, 1),
                output_sizes=(*output_sizes, 2),
                out=o,
                **options,
            ),
        )
    key = (
        name,
        kind,
        _device(kind, x),
        x.dtype,
        _flag(directml_types),
        _level(feature_level),
        offsets,
        sizes,
        strides,
        int_tuple(output_sizes, "output_sizes", name),
        _layout(x),
        _out_layout(out),
    )
    return _finish(kind, _CACHE.get(key, _build_slice1), x, out, x.dtype, stream)


@_public
def slice_grad(
    dy: Array,
    input_shape: Ints,
    window_offsets: Ints,
    window_sizes: Ints,
    window_strides: Ints | None = None,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """DirectML SLICE_GRAD: the gradient of `slice1` with respect to its input, in one pass.

    Parameters
    ----------
    dy : array_like
        The gradient of the slice's output (of its shape), of any kind and strides.
    input_shape : sequence of int
        The shape of the slice's input: the shape of the result.
    window_offsets : sequence of int
        As given to `slice1`.
    window_sizes : sequence of int
        As given to `slice1`.
    window_strides : sequence of int, optional
        As given to `slice1`: signed, non-zero, all 1 by default.
    out : array, optional
        Where to write the result: shape ``input_shape``, ``dy``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``dy``'s elements where the forward slice read, 0 elsewhere; ``out`` or a new array of
        ``dy``'s kind.

    Raises
    ------
    {shared raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> dy = np.array([[1, 3], [9, 11]], dtype=np.int32)
    >>> cd.slice_grad(dy, (4, 4), [0, 0], [4, 4], [2, 2])
    array([[ 1,  0,  3,  0],
           [ 0,  0,  0,  0],
           [ 9,  0, 11,  0],
           [ 0,  0,  0,  0]], dtype=int32)
    """
    name = "SliceGrad"
    kind, dy = _input(dy, name)
    shape = _shape_of(dy, name)
    if out is not None:
        out = _out(kind, out, name)
    if _moves_words(dy, directml_types):
        options = _word_options(feature_level, stream)
        offsets, sizes, strides = _window_args(name, len(shape), window_offsets, window_sizes, window_strides)
        input_shape = int_tuple(input_shape, "input_shape", name)
        return _on_words(
            name,
            kind,
            [dy],
            out,
            lambda w, o: slice_grad(
                w[0],
                (*input_shape, 2),
                (*offsets, 0),
                (*sizes, 2),
                (*strides, 1),
                out=o,
                **options,
            ),
        )
    key = (
        name,
        kind,
        _device(kind, dy),
        dy.dtype,
        _flag(directml_types),
        _level(feature_level),
        *_window_args(name, len(shape), window_offsets, window_sizes, window_strides),
        int_tuple(input_shape, "input_shape", name),
        _layout(dy),
        _out_layout(out),
    )
    return _finish(kind, _CACHE.get(key, _build_slice_grad), dy, out, dy.dtype, stream)


def _split_sizes(split_sizes, n, axis):
    if isinstance(split_sizes, (int, np.integer)) and not isinstance(split_sizes, (bool, np.bool_)):
        parts = int(split_sizes)
        if parts < 1 or n % parts:
            raise ValueError(f"Split: axis {axis} of size {n} does not divide into {parts} equal parts; pass the sizes")
        return (n // parts,) * parts
    sizes = int_tuple(split_sizes, "split_sizes", "Split")
    if any(s < 0 for s in sizes):
        raise ValueError(f"Split: split_sizes {sizes} has a negative size")
    return sizes


def _parts(kind, buffer, entry, dtype):
    """The parts of a split: views of the one allocation ``buffer``."""
    if kind == "numpy":
        return [np.ndarray(s, dtype, buffer=buffer, offset=o) for s, o in zip(entry.shapes, entry.offsets)]
    cupy, memory = sys.modules["cupy"], buffer.data
    return [cupy.ndarray(s, dtype, memptr=memory + o) for s, o in zip(entry.shapes, entry.offsets)]


@_public
def split(
    x: Array,
    split_sizes: SupportsIndex | Ints,
    axis: SupportsIndex = 0,
    *,
    out: Sequence[Array] | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> list[Array]:
    """DirectML SPLIT: cut ``x`` along ``axis`` into parts, in one launch on the GPU.

    Parameters
    ----------
    x : array_like
        The array to cut, of any kind and strides.
    split_sizes : int or sequence of int
        A number of equal parts (which must divide ``x.shape[axis]``), or the size of each
        part along ``axis`` (summing to ``x.shape[axis]``; a size of 0 gives an empty part).
        Sizes, not NumPy's split indices.
    axis : int, default 0
        The axis to cut; may be negative.
    out : sequence of arrays, optional
        One per part, each of its part's shape and ``x``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    list of arrays
        The parts, in order: ``out``, or views of one new allocation of ``x``'s kind.

    Raises
    ------
    {shared raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)
    >>> [p.shape for p in cd.split(x, [2, 1, 3], axis=2)]
    [(1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2)]
    """
    name = "Split"
    kind, x = _input(x, name)
    shape = _shape_of(x, name)
    axis = _normalize_axis(axis, len(shape), name)
    sizes = _split_sizes(split_sizes, shape[axis], axis)
    if out is not None:
        out = _as_list(out, "out", name)
        if len(out) != len(sizes):
            raise BindingError([f"{name}.execute: {len(out)} outputs bound (out); the call has {len(sizes)} parts"])
        out = [_out(kind, o, name) for o in out]
    if _moves_words(x, directml_types):
        options = _word_options(feature_level, stream)
        return _on_words(name, kind, [x], out, lambda w, o: split(w[0], sizes, axis, out=o, **options))
    key = (
        name,
        kind,
        _device(kind, x),
        x.dtype,
        _flag(directml_types),
        _level(feature_level),
        sizes,
        axis,
        _layout(x),
        None if out is None else tuple(_out_layout(o) for o in out),
    )
    entry = _CACHE.get(key, _build_split)
    if _VALIDATING.get():
        return entry
    if out is not None:
        _run(entry, [x], [out[k] for k in entry.bound], stream, False)
        return out
    buffer = _empty(kind, (entry.total // x.itemsize,), x.dtype)
    _run(entry, [x], [buffer] * len(entry.bound), stream, True)
    return _parts(kind, buffer, entry, x.dtype)  # built while the GPU copies


def _as_list(arrays, what, name):
    if isinstance(arrays, (list, tuple)):
        return arrays
    if isinstance(arrays, (str, bytes)) or not hasattr(arrays, "__iter__"):
        raise TypeError(f"{name}: {what} must be a sequence of arrays, not {type(arrays).__name__}")
    return list(arrays)


@_public
def join(
    xs: Sequence[Array],
    axis: SupportsIndex = 0,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """DirectML JOIN: concatenate arrays along ``axis`` (SPLIT's inverse), in one launch on the GPU.

    Parameters
    ----------
    xs : sequence of array_like
        The arrays to join, all of one kind, dtype and rank; equal shapes except along
        ``axis``. The first decides the kind of the result.
    axis : int, default 0
        The axis to join along; may be negative.
    out : array, optional
        Where to write the result, of the joined shape and the dtype of ``xs``, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``out``, or a new array of the kind of ``xs``.

    Raises
    ------
    {shared raises}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.join([np.arange(2), np.arange(3)])
    array([0, 1, 0, 1, 2])
    """
    name = "Join"
    xs = _as_list(xs, "xs", name)
    if not xs:
        raise ValueError(f"{name}: needs at least one array to join")
    cupy = sys.modules.get("cupy")
    if cupy is not None and list(map(type, xs)).count(cupy.ndarray) == len(xs):
        kind = "cupy"  # CuPy arrays as they are: the common case, without a call per array
    else:
        arrays = [_input(a, name) for a in xs]
        kind = arrays[0][0]
        if any(k != kind for k, _ in arrays):
            raise TypeError(f"{name}: arrays mix host (NumPy) and device (CuPy) memory")
        xs = [a for _, a in arrays]
    dtypes = list(map(_DTYPE, xs))
    dtype = dtypes[0]
    if dtypes.count(dtype) != len(dtypes):
        k = next(k for k, d in enumerate(dtypes) if d != dtype)
        raise TypeError(f"{name}: xs[{k}] has dtype {dtypes[k]}, xs[0] has {dtype}")
    if xs[0].ndim == 0:
        raise ValueError(f"{name}: a 0-dimensional array has nothing to join")
    if out is not None:
        out = _out(kind, out, name)
    if _moves_words(xs[0], directml_types):
        options = _word_options(feature_level, stream)
        axis = _normalize_axis(axis, xs[0].ndim, name)
        return _on_words(name, kind, xs, out, lambda w, o: join(w, axis, out=o, **options))
    key = (
        name,
        kind,
        _device(kind, xs[0]),
        dtype,
        _flag(directml_types),
        _level(feature_level),
        _normalize_axis(axis, xs[0].ndim, name),
        tuple(zip(map(_SHAPE, xs), map(_STRIDES, xs))),
        _out_layout(out),
    )
    entry = _CACHE.get(key, _build_join)
    if _VALIDATING.get():
        return entry
    new = out is None
    if new:
        out = _empty(kind, entry.shapes[0], dtype)
    _run(entry, [xs[k] for k in entry.bound], [out], stream, new)
    return out


# ---- basic indexing -----------------------------------------------------------------------------


def _optional_index(value):
    if value is None:
        return None
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"slice indices must be integers or None or have an __index__ method, not {type(value).__name__}"
        ) from None


def _index_key(key):
    """``key`` as exact values: ints, ``None``, ``...``, and ``(start, stop, step)`` for slices."""
    items = key if type(key) is tuple else (key,)
    tokens = []
    for k in items:
        if k is None or k is Ellipsis:
            tokens.append(k)
        elif type(k) is _pyslice:
            start, stop, step = k.start, k.stop, k.step
            if (
                (start is None or type(start) is int)
                and (stop is None or type(stop) is int)
                and (step is None or type(step) is int)
            ):  # already exact (the common case), without a call per field
                tokens.append((start, stop, step))
            else:
                tokens.append((_optional_index(start), _optional_index(stop), _optional_index(step)))
        elif isinstance(k, (bool, np.bool_)) or not hasattr(k, "__index__"):
            raise TypeError(f"only basic indices (int, slice, ..., None) are supported, not {type(k).__name__}")
        else:
            tokens.append(operator.index(k))
    return tuple(tokens)


def _parse_key(tokens, shape):
    """Basic indexing (``_index_key``'s tokens), as NumPy reads it, as one SLICE1 window per axis.

    Returns ``(windows, result_shape, axis_map)``: ``windows[d] = (start, step, count)`` for
    input axis ``d``; ``axis_map[d]`` is the result axis that ``d`` becomes, or ``None`` where
    an integer index drops it.
    """
    ndim = len(shape)
    if sum(k is Ellipsis for k in tokens) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(k is not None and k is not Ellipsis for k in tokens)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    full = (None, None, None)
    if any(k is Ellipsis for k in tokens):
        at = tokens.index(Ellipsis)
        tokens = tokens[:at] + (full,) * (ndim - used) + tokens[at + 1 :]
    else:
        tokens = tokens + (full,) * (ndim - used)
    windows, result_shape, axis_map = [], [], []
    d = 0
    for k in tokens:
        if k is None:
            result_shape.append(1)
            continue
        n = shape[d]
        if type(k) is tuple:
            start, stop, step = _pyslice(*k).indices(n)
            count = len(range(start, stop, step))
            windows.append((start, step, count))
            axis_map.append(len(result_shape))
            result_shape.append(count)
        else:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            windows.append((k % n, 1, 1))
            axis_map.append(None)
        d += 1
    return windows, tuple(result_shape), axis_map


def _window_params(windows):
    """SLICE1 window offsets, sizes and strides that read ``(start, step, count)`` per axis."""
    offsets, sizes, strides = [], [], []
    for start, step, count in windows:
        if count == 1:
            step = 1  # a lone element: any huge Python step is irrelevant
        span = (count - 1) * abs(step) + 1
        offsets.append(start if step > 0 else start + (count - 1) * step)
        sizes.append(span)
        strides.append(step)
    return tuple(offsets), tuple(sizes), tuple(strides)


def _mapped_strides(strides, axis_map):
    """Element strides of the indexed result for each input axis (0 where an index dropped it)."""
    return tuple(0 if r is None else strides[r] for r in axis_map)


def _build_strided_slice(name, kind, device, dtype, flag, level, index, x_layout, out_layout):
    shape = x_layout[0]
    windows, result_shape, axis_map = _parse_key(index, shape)
    if 0 in result_shape:
        _check_empty_out(name, [(0, out_layout, result_shape)], dtype)
        return _Entry(None, (result_shape,))
    counts = tuple(c for _, _, c in windows)
    data_type = _data_type(dtype, flag)
    desc = Slice1OperatorDesc(
        _tensor(data_type, shape), _tensor(data_type, counts), *_window_params(windows), feature_level=level
    )
    out_shape, out_strides = _result_view(name, 0, out_layout, result_shape, dtype)
    out_view = (out_shape, out_strides, _mapped_strides(out_strides, axis_map))  # the plan's: per input axis
    op = _compiled(desc, device, [_element_view(x_layout, dtype.itemsize)], [out_view])
    return _Entry(op, (result_shape,))


@_public
def strided_slice(
    x: Array,
    key: Any,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """``x[key]`` copied, for basic indexing, as one SLICE1.

    An empty result is returned without running anything (DirectML tensors cannot be empty).

    Parameters
    ----------
    x : array_like
        The array to index, of any kind and strides.
    key : int, slice, Ellipsis, None or tuple of them
        A basic index, as in ``x[key]``: slices with any step (negative too), integers,
        ``...`` and ``None``.
    out : array, optional
        Where to write the result: the shape of ``x[key]``, ``x``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    array
        A copy of ``x[key]``: ``out``, or a new array of ``x``'s kind.

    Raises
    ------
    {shared raises}
    IndexError
        For an index out of bounds, too many indices or two ellipses, as NumPy raises.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(12).reshape(3, 4)
    >>> cd.strided_slice(x, np.s_[::-2, 1])
    array([9, 1])
    """
    name = "strided_slice"
    kind, x = _input(x, name)
    _shape_of(x, name)
    if out is not None:
        out = _out(kind, out, name)
    if _moves_words(x, directml_types):
        options = _word_options(feature_level, stream)
        words_key = (*(key if type(key) is tuple else (key,)), _pyslice(None))  # the words' axis, whole
        return _on_words(
            name,
            kind,
            [x],
            out,
            lambda w, o: strided_slice(w[0], words_key, out=o, **options),
        )
    cache_key = (
        name,
        kind,
        _device(kind, x),
        x.dtype,
        _flag(directml_types),
        _level(feature_level),
        _index_key(key),
        _layout(x),
        _out_layout(out),
    )
    return _finish(kind, _CACHE.get(cache_key, _build_strided_slice), x, out, x.dtype, stream)


def _build_strided_slice_grad(name, kind, device, dtype, flag, level, index, shape, dy_layout, out_layout):
    if not shape:
        raise ValueError(f"{name}: a 0-dimensional input has nothing to slice")
    windows, result_shape, axis_map = _parse_key(index, shape)
    if dy_layout[0] != result_shape:
        raise ValueError(f"{name}: dy has shape {dy_layout[0]}; x[key] has shape {result_shape}")
    if 0 in shape or 0 in result_shape:
        _check_empty_out(name, [(0, out_layout, shape)], dtype)
        return _Entry(None, (shape,), zeros=0 not in shape)
    counts = tuple(c for _, _, c in windows)
    data_type = _data_type(dtype, flag)
    desc = SliceGradOperatorDesc(
        _tensor(data_type, counts), _tensor(data_type, shape), *_window_params(windows), feature_level=level
    )
    dy_shape, dy_strides = _element_view(dy_layout, dtype.itemsize)
    dy_view = (dy_shape, dy_strides, _mapped_strides(dy_strides, axis_map))
    op = _compiled(desc, device, [dy_view], [_result_view(name, 0, out_layout, shape, dtype)])
    return _Entry(op, (shape,))


@_public
def strided_slice_grad(
    dy: Array,
    input_shape: Ints,
    key: Any,
    *,
    out: Array | None = None,
    feature_level: Level = None,
    stream: Any = None,
    directml_types: bool = True,
) -> Array:
    """The gradient of ``strided_slice(x, key)`` with respect to ``x``, in one pass.

    Parameters
    ----------
    dy : array_like
        The gradient of ``x[key]`` (of its shape), of any kind and strides.
    input_shape : sequence of int
        ``x.shape``: the shape of the result.
    key : int, slice, Ellipsis, None or tuple of them
        The basic index given to `strided_slice`.
    out : array, optional
        Where to write the result: shape ``input_shape``, ``dy``'s dtype, any strides.
    {shared parameters}

    Returns
    -------
    array
        ``dy``'s elements where ``x[key]`` read, 0 elsewhere; ``out`` or a new array of
        ``dy``'s kind.

    Raises
    ------
    {shared raises}
    IndexError
        For an index out of bounds, too many indices or two ellipses, as NumPy raises.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.strided_slice_grad(np.array([7, 8]), (5,), np.s_[::-3])
    array([0, 8, 0, 0, 7])
    """
    name = "strided_slice_grad"
    kind, dy = _input(dy, name)
    if out is not None:
        out = _out(kind, out, name)
    if _moves_words(dy, directml_types):
        options = _word_options(feature_level, stream)
        words_key = (*(key if type(key) is tuple else (key,)), _pyslice(None))
        input_shape = (*int_tuple(input_shape, "input_shape", name), 2)
        return _on_words(
            name,
            kind,
            [dy],
            out,
            lambda w, o: strided_slice_grad(w[0], input_shape, words_key, out=o, **options),
            ndim=len(input_shape) - 1,
        )
    cache_key = (
        name,
        kind,
        _device(kind, dy),
        dy.dtype,
        _flag(directml_types),
        _level(feature_level),
        _index_key(key),
        int_tuple(input_shape, "input_shape", name),
        _layout(dy),
        _out_layout(out),
    )
    return _finish(kind, _CACHE.get(cache_key, _build_strided_slice_grad), dy, out, dy.dtype, stream)

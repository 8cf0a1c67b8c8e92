"""``fuse``: a function of cudadml's data-movement calls traced into one graph, run as one launch.

As ``cupy.fuse`` is to elementwise code, ``fuse`` is to data movement. The function is called
once per input layout with *traced arrays* (``Traced``: a shape and a dtype, no values) in place
of its arrays; each array call it makes on them (the array functions, the chains of the family
among ``cudadml.numpy``'s functions, basic indexing) records the descriptor its eager call would
build (``calls``: the same normalisation and DirectML rules, the same messages) as a node of a
``GraphDesc``. The graph is compiled (its nodes' index maps composed into copies from the
function's arrays to its results, no intermediate) and kept, and each call runs it once.

The pieces:

* ``Traced`` and ``Trace``: the traced arrays and the nodes their calls record; a traced call
  reaches the trace through the adapter interface (``adapters``), as PyTorch and Dask plug in;
* ``Program``: a finished trace, its graph compiled per layout of the arrays it is given
  (strides, signs and alignment: graph inputs are buffers that the tensors' descriptors lay out),
  and per layout a ``_Run``: everything a call needs worked out once, so that a call looks its
  run up, allocates the results and launches (``fused_arrays``: the same per memory
  kind);
* ``Fused``: what ``fuse`` returns: the cache of programs and the runs on NumPy and CuPy; the
  arrays of another library (PyTorch's tensors, with autograd) are its half of fuse's, which
  ``interop`` provides (``hooks``): ``interop.torch_fuse``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import decimal
import functools
import math
import operator
import struct
import sys
import threading
import types
from collections.abc import Callable

import numpy as np

from ..core import hooks, memory, messages
from ..core.calls import common_dtype
from ..core.enums import TensorDataType
from ..core.errors import DescriptorError
from ..core.memory import ALIGNMENT
from ..core.operators import REGISTRY
from ..core.overlap import reach
from ..core.tensor import MAX_DIMENSIONS, BufferTensorDesc
from ..ops import Join, Slice1, Slice1Batch, Slice1OperatorDesc
from ..run.adapters import register_adapter
from ..run.arrays import strided_slice
from ..run.runner import check_words_rank
from .fused_arrays import HOST, device_arrays
from .graph import GraphDesc, GraphInputEdge, GraphIntermediateEdge, GraphOutputEdge

__all__ = ["Fused", "Traced", "fuse"]

#: Traced programs a fused function keeps (per argument layout), the least recently used dropped first.
PROGRAMS = 64
#: Compiled graphs a program keeps, one per layout of its arrays (strides, alignment).
GRAPHS = 16

_WORD = np.dtype(np.uint64)


# ---- traced arrays -------------------------------------------------------------------------------

#: Traces in progress, in every thread: the trace adapter is asked about a call only meanwhile.
_tracing_count = 0
_tracing_lock = threading.Lock()


@contextlib.contextmanager
def tracing():
    global _tracing_count
    with _tracing_lock:
        _tracing_count += 1
    try:
        yield
    finally:
        with _tracing_lock:
            _tracing_count -= 1


def _refusal(what):
    return TypeError(
        f"cudadml.fuse: {what} on a traced array would run apart from the fused graph, which holds only "
        "cudadml's data-movement calls (the array functions; cudadml.numpy's joins, splits, flips and zero pads; "
        "basic indexing; reshape). Call it outside the fused function"
    )


def _refuse(what):
    def refuse(self, *args, **kwargs):
        raise _refusal(what)

    refuse.__name__ = what
    return refuse


class Traced:
    """An array inside a function that ``fuse`` traces: its shape and dtype, no values.

    Basic indexing (``x[1::2, ..., None]``), the array functions and ``cudadml.numpy``'s
    data-movement functions record nodes of the graph; ``reshape``, ``ravel`` and ``view`` (to a
    dtype of the same size) re-describe a value without a node. Anything that would read the
    values (arithmetic, NumPy's functions and ufuncs, ``float()``, ``numpy.asarray``) raises
    ``TypeError`` naming the call.
    """

    __slots__ = ("__weakref__", "_source", "_trace", "dtype", "shape")
    __cudadml_traced__ = True

    def __init__(self, trace, source, shape, dtype):
        self._trace, self._source, self.shape, self.dtype = trace, source, shape, dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self):
        """A traced array is a value: as a result it is a new C-contiguous array."""
        return types.SimpleNamespace(c_contiguous=True, f_contiguous=self.ndim <= 1, writeable=False)

    def __repr__(self) -> str:
        return f"Traced(shape={self.shape}, dtype={self.dtype})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        for k in range(len(self)):
            yield self[k]

    def __getitem__(self, key):
        if not self.shape and isinstance(key, tuple) and not key:
            return self
        shape = _new_axes(self.shape, key)
        if shape is not None:  # the same elements re-described: no node, so any number of dimensions
            return self.reshape(shape)
        try:
            return strided_slice(self, key, directml_types=False)
        except TypeError as e:
            raise TypeError(f"cudadml.fuse: x[key] is traced as strided_slice (basic indices only): {e}") from None

    def copy(self, order="C"):
        """The same elements, with no node: a fused function's results are new arrays anyway (and
        a node would hold at most 8 dimensions)."""
        return self.reshape(self.shape)

    def reshape(self, *shape, order="C"):
        """The same elements in another shape (C order): no node, the graph re-describes them."""
        if order != "C":
            raise _refusal(f"reshape(order={order!r})")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = tuple(int(n) for n in shape)
        size = self.size
        if shape.count(-1) == 1:
            known = math.prod(n for n in shape if n != -1)
            if known and size % known == 0:
                shape = tuple(size // known if n == -1 else n for n in shape)
        if any(n < 0 for n in shape) or math.prod(shape) != size:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        return self._trace.value(self._source, shape, self.dtype)

    def ravel(self, order="C"):
        return self.reshape(-1, order=order)

    flatten = ravel

    def view(self, dtype=None):
        """The elements as another dtype of the same size (their bits, as NumPy's ``view``)."""
        dtype = np.dtype(dtype) if dtype is not None else self.dtype
        if dtype.itemsize != self.dtype.itemsize:
            raise _refusal(f"view({dtype}) of {self.dtype} (another element size)")
        return Traced(self._trace, self._source, self.shape, dtype)

    def __cudadml_empty__(self, shape, dtype):
        """``numpy.empty`` for ``cudadml.numpy`` in a trace: a value nothing has been moved into."""
        return self._trace.value(("empty",) if 0 in shape else ("unset",), tuple(shape), np.dtype(dtype))

    def __array__(self, *args, **kwargs):
        if self._trace.closed:
            raise TypeError(
                "cudadml.fuse: a traced array was used after its fused function returned (it has no values)"
            )
        raise _refusal("numpy.asarray (__array__)")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _refusal(f"numpy.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}"))

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if func is np.ndim or func is np.shape:  # what a traced array knows
            return getattr(self, name)
        if func is np.size and kwargs.get("axis", args[1] if len(args) > 1 else None) is None:
            return self.size
        if name in ("may_share_memory", "shares_memory"):
            raise TypeError(
                f"cudadml.fuse: out= with a traced array (numpy.{name} was asked of it): a fused function's "
                "results are the new arrays it returns; return the result instead of writing into out"
            )
        from .. import numpy as drop_ins

        hint = f" (cudadml.numpy.{name} is traced)" if name in drop_ins.__all__ else ""
        raise _refusal(f"numpy.{name}{hint}")

    def __setitem__(self, key, value):
        raise _refusal("item assignment (x[...] = ...)")

    def __getattr__(self, name):
        if name.startswith("_"):  # protocols looked for (__cuda_array_interface__, _repr_html_): absent
            raise AttributeError(name)
        raise _refusal(f"x.{name}")

    __hash__ = object.__hash__


def _new_axes(shape, key):
    """The shape of ``x[key]`` for a ``key`` that only adds axes (``None``) and takes whole ones
    (``:``, ``...``); else None."""
    key = key if type(key) is tuple else (key,)
    whole = [type(k) is slice and k.start is None and k.stop is None and k.step is None for k in key]
    if not all(w or k is None or k is Ellipsis for w, k in zip(whole, key)):
        return None
    if sum(k is Ellipsis for k in key) > 1 or sum(whole) > len(shape):
        return None  # (strided_slice says why)
    dims, out = iter(shape), []
    for k in key:
        if k is Ellipsis:
            out += [next(dims) for _ in range(len(shape) - sum(whole))]
        else:
            out.append(1 if k is None else next(dims))
    return (*out, *dims)


# The operators and conversions a traced array refuses: per operator, its special methods.
for _what, _names in {
    "+": "add radd",
    "-": "sub rsub",
    "*": "mul rmul",
    "/": "truediv rtruediv",
    "//": "floordiv rfloordiv",
    "%": "mod rmod",
    "**": "pow rpow",
    "@": "matmul rmatmul",
    "&": "and rand",
    "|": "or ror",
    "^": "xor rxor",
    "<<": "lshift rlshift",
    ">>": "rshift rrshift",
    "+=": "iadd",
    "-=": "isub",
    "*=": "imul",
    "/=": "itruediv",
    "==": "eq",
    "!=": "ne",
    "<": "lt",
    "<=": "le",
    ">": "gt",
    ">=": "ge",
    "unary -": "neg",
    "unary +": "pos",
    "abs()": "abs",
    "~": "invert",
    "bool()": "bool",
    "float()": "float",
    "int()": "int",
    "complex()": "complex",
    "operator.index()": "index",
    "in": "contains",
}.items():
    for _name in _names.split():
        setattr(Traced, f"__{_name}__", _refuse(_what if _what.endswith(")") else f"the operator {_what}"))


# ---- the trace -----------------------------------------------------------------------------------


class _Node:
    """A recorded call: its operation, its descriptor (tensors of unsigned types of their width:
    bits move, and every edge of the graph agrees on the type), the values it was given
    (``args``; ``inputs``: those its descriptor binds) and its results (``outputs``: per
    descriptor output, the value it is)."""

    __slots__ = ("args", "desc", "inputs", "operation", "outputs", "results")

    def __init__(self, operation, desc, args, inputs):
        self.operation, self.desc, self.args, self.inputs = operation, desc, args, inputs
        self.results, self.outputs = [], []


class Trace:
    """The nodes that the traced calls of one trace record, in call order (a topological order)."""

    def __init__(self):
        self.nodes = []
        self.closed = False

    def value(self, source, shape, dtype):
        """A traced array of ``source``: ``("input", k)``, ``("node", node, port)``, ``("empty",)``
        (no elements), ``("zeros",)`` (a gradient nothing was placed into) or ``("unset",)``."""
        if 0 in shape and source[0] in ("input", "node", "unset", "zeros"):
            source = ("empty",)
        return Traced(self, source, tuple(shape), dtype)

    def record(self, operation, args):
        """The results of ``operation`` on the traced arrays ``args``, recording its node."""
        if type(operation) is Slice1Batch:
            return self._windows(operation, args)
        registered = REGISTRY.get(operation.function)
        if registered is None or registered.not_a_node is not None or type(operation) is not registered.call:
            raise _not_a_node(operation, registered)
        for a in args:
            if a._source[0] in ("unset", "zeros"):
                what = "an array made by numpy.empty" if a._source[0] == "unset" else "the zeros of an empty gradient"
                raise TypeError(
                    f"cudadml.fuse: {operation.function}: an argument is {what}, which a graph cannot take as input"
                )
        dtype = args[0].dtype
        shapes = [a.shape for a in args]
        if dtype.itemsize == 16 and operation.directml_types is False:  # as pairs of 8-byte words
            check_words_rank(operation, shapes[0])
            try:
                d = operation.words().descriptor(_WORD, [(*s, 2) for s in shapes])
            except DescriptorError as e:
                raise messages.of_words(e, dtype) from None
            result_shapes = [s[:-1] for s in d.shapes]
        else:
            d = operation.descriptor(dtype, shapes)
            result_shapes = d.shapes
        if d.desc is None:
            return [self.value(("zeros",) if d.zeros else ("empty",), s, dtype) for s in result_shapes]
        node = _Node(operation, _retyped(d.desc), list(args), [args[k] for k in d.bound_inputs])
        ports = {k: port for port, k in enumerate(d.bound_outputs)}
        for k, shape in enumerate(result_shapes):
            value = self.value(("node", node, ports[k]) if k in ports else ("empty",), shape, dtype)
            node.results.append(value)
            if k in ports:
                node.outputs.append(value)
        self.nodes.append(node)
        return list(node.results)

    def _windows(self, operation, args):
        """``slice1_batch``: a SLICE1 node per window (of ``x[n]`` per sample), and for windows
        of one size a JOIN of them along a new leading axis."""
        (x,) = args
        counts = operation.check(x.dtype, x.shape)  # every window's rules, in the call's words
        shapes = operation.results(counts)
        level, flag = operation.feature_level, operation.directml_types
        parts = []
        for k in range(len(operation.offsets)):
            source = x[k] if operation.per_sample else x
            sizes = operation.sizes if operation.sizes.ndim == 1 else operation.sizes[k]
            strides = operation.strides if operation.strides.ndim == 1 else operation.strides[k]
            window = (tuple(map(int, operation.offsets[k])), tuple(map(int, sizes)), tuple(map(int, strides)))
            parts += self.record(Slice1.of(source.shape, (), *window, None, level, flag), [source])
        if not operation.shared:
            return parts
        if not parts or 0 in shapes[0]:
            return [self.value(("empty",), shapes[0], x.dtype)]
        stacked = [p.reshape((1, *p.shape)) for p in parts]
        return self.record(Join.of(stacked[0].shape, 0, level, flag), stacked)


def _not_a_node(operation, registered):
    """The ``TypeError`` for a call no graph node holds: in its operator's words where it has them."""
    name = operation.function
    if registered is not None and registered.not_a_node is not None:
        return TypeError(f"cudadml.fuse: {registered.not_a_node}")
    return TypeError(
        f"cudadml.fuse: {name} is not a node a graph holds (SLICE, SLICE1, SLICE_GRAD, SPLIT, JOIN); call it "
        "outside the fused function"
    )


def _raw_type(tensor):
    return TensorDataType.unsigned_of_width(tensor.data_type.element_size)


def _replaced(desc, inputs=None, convert=None):
    """``desc`` with input tensor ``k`` replaced by ``inputs[k]``, or every tensor by
    ``convert(tensor)``: rebuilt, so every rule is checked again."""
    changes, port = {}, 0
    for f in dataclasses.fields(desc):
        role = f.metadata.get("role")
        if role is None or role.kind not in ("tensor", "tensors"):
            continue
        value = getattr(desc, f.name)
        tensors = [value] if role.kind == "tensor" else list(value)
        if convert is not None:
            tensors = [convert(t) for t in tensors]
        elif not role.output:
            tensors = [inputs.get(port + j, t) for j, t in enumerate(tensors)]
            port += len(tensors)
        changes[f.name] = tensors[0] if role.kind == "tensor" else tuple(tensors)
    return dataclasses.replace(desc, **changes)


def _retyped(desc):
    """``desc`` with every tensor an unsigned integer of its width."""
    if all(t.data_type is _raw_type(t) for t in (*desc.input_tensors, *desc.output_tensors)):
        return desc
    return _replaced(desc, convert=lambda t: BufferTensorDesc(_raw_type(t), t.sizes, t.strides))


class _TraceAdapter:
    """The adapter of calls holding traced arrays (``adapters``): they record nodes."""

    def takes(self, inputs, outs):
        if not _tracing_count:
            return False
        return any(type(a) is Traced for a in inputs) or (bool(outs) and any(type(o) is Traced for o in outs))

    def arrays(self, operation, inputs, outs):
        name = operation.function
        if outs is not None:
            raise TypeError(
                f"cudadml.fuse: {name}(..., out=...) in a fused function: its results are the new arrays it "
                "returns; return the result instead of writing into out"
            )
        traced = [a for a in inputs if type(a) is Traced]
        trace = traced[0]._trace
        for k, a in enumerate(inputs):
            where = (
                f"{operation.ARGUMENT}[{k}]" if len(inputs) > 1 or operation.ARGUMENT == "xs" else operation.ARGUMENT
            )
            if type(a) is not Traced:
                raise TypeError(
                    f"cudadml.fuse: {name}: {where} is a {type(a).__module__}.{type(a).__name__}, not a traced array: "
                    "in a fused function the array calls take its arguments and the results of its traced calls "
                    "(pass a constant array as an argument)"
                )
            if a._trace is not trace:
                raise TypeError(f"cudadml.fuse: {name}: {where} is a traced array of another fused function's trace")
        if trace.closed:
            raise TypeError(
                f"cudadml.fuse: {name}: a traced array was used after its fused function returned (it has no values)"
            )
        if len(inputs) > 1:
            common_dtype(operation.NAME, [a.dtype for a in inputs], operation.ARGUMENT)
        return inputs, None

    def run(self, operation, inputs, outs, stream, chunks):
        name = operation.function
        if stream is not None:
            raise TypeError(
                f"cudadml.fuse: {name}(..., stream=...) in a fused function: the fused call runs on the current "
                "stream as one launch; leave stream= out"
            )
        if chunks is not None:
            raise TypeError(f"cudadml.fuse: {name}: chunks= is for Dask arrays; a fused function takes none")
        return inputs[0]._trace.record(operation, inputs)


_ADAPTER = _TraceAdapter()
register_adapter(__name__, lambda: _ADAPTER)


# ---- arguments and results: structures of arrays ---------------------------------------------------

_ARRAY = ("array",)


#: The kind of each type of array seen (``_array_kind``), by type.
_KINDS = {np.ndarray: "numpy"}


def _array_kind(value):
    """The kind of an array a fused function takes ("numpy", "cupy", "torch"); None for other values."""
    t = type(value)
    kind = _KINDS.get(t)
    if kind is not None:
        return kind
    cupy, torch = sys.modules.get("cupy"), sys.modules.get("torch")
    if cupy is not None and t is cupy.ndarray:
        kind = "cupy"
    elif t is np.memmap or (torch is not None and isinstance(value, torch.Tensor)):
        kind = "numpy" if t is np.memmap else "torch"
    elif isinstance(value, np.ndarray):
        raise TypeError(
            f"cudadml.fuse: a {t.__name__}, a NumPy subclass whose meaning (a mask, matrix rules) the plain results "
            "would drop; pass numpy.asarray(...) of it"
        )
    else:
        dask = sys.modules.get("dask.array")
        if dask is not None and isinstance(value, dask.Array):
            raise TypeError("cudadml.fuse takes NumPy and CuPy arrays and torch tensors, not Dask arrays")
        return None
    _KINDS[t] = kind
    return kind


#: The structure of a call of one array (``_flatten``'s), made without a walk.
_ONE_ARRAY = ((tuple, (_ARRAY,)), ())


class _Unhashable(Exception):
    """An argument ``_flatten`` cannot key a trace by: its type and where it is (``where``, then
    the indices ``path`` into lists and tuples: the message is made only for a refusal)."""

    def __init__(self, where, type_):
        super().__init__()
        self.where, self.type, self.path = where, type_, []

    def refusal(self):
        where = self.where + "".join(f"[{k}]" for k in self.path)
        return TypeError(
            f"cudadml.fuse: {where} is a {self.type.__name__}, which is not hashable: a fused function's arguments "
            "that are not arrays are part of the key its traces are kept under (pass a tuple for a list of numbers)"
        )


def _flatten(value, arrays, where="args"):
    """The structure of ``value`` (lists and tuples of arrays and other values, ``where`` in
    the call), its arrays appended to ``arrays``: hashable, so the other values are part of it."""
    t = type(value)
    if t is list or t is tuple:
        items = []
        for k, v in enumerate(value):
            try:
                items.append(_flatten(v, arrays, where))
            except _Unhashable as e:
                e.path.insert(0, k)
                raise
        return t, tuple(items)
    if t is Traced or _array_kind(value) is not None:
        arrays.append(value)
        return _ARRAY
    try:
        hash(value)
    except TypeError:
        raise _Unhashable(where, t) from None
    return _Value(value)


class _Value:
    """A non-array argument in the key a trace is kept under: the same argument only where the
    function would see the same value (``_exact``), not merely an equal one."""

    __slots__ = ("key", "value")

    def __init__(self, value):
        self.value, self.key = value, _exact(value)

    def __eq__(self, other):
        return type(other) is _Value and self.key == other.key

    def __hash__(self):
        return hash(self.key)


def _exact(value):
    """What a function can read from the hashable ``value``, as a key: its type and, for numbers,
    their bits (``==`` takes 0.0 for -0.0, 1 for True or 1.0, and no NaN for another), in tuples,
    frozensets and slices too; any other value as its type and ``==`` have it."""
    t = type(value)
    if isinstance(value, np.generic):
        return t, value.dtype, value.tobytes()
    if isinstance(value, (float, complex)):
        return t, struct.pack("<dd", value.real, value.imag)
    if t is decimal.Decimal:  # sign, digits and exponent: Decimal("1.0") == Decimal("1")
        return t, value.as_tuple()
    if isinstance(value, tuple):  # namedtuples too
        return t, tuple(map(_exact, value))
    if isinstance(value, frozenset):
        return t, frozenset(map(_exact, value))
    if t is slice:
        return t, _exact(value.start), _exact(value.stop), _exact(value.step)
    return t, value


def _rebuild(structure, leaves):
    """``_flatten``'s inverse: ``structure`` with its arrays taken from the iterator ``leaves``."""
    if type(structure) is _Value:
        return structure.value
    if structure is _ARRAY or structure == _ARRAY:
        return next(leaves)
    kind, items = structure
    return kind(_rebuild(s, leaves) for s in items)


def _result_structure(value, leaves, name):
    """The structure of what a traced function returned: traced arrays and constant arrays, in
    lists and tuples (appended to ``leaves``)."""
    t = type(value)
    if t is list or t is tuple:
        return (t, tuple(_result_structure(v, leaves, name) for v in value))
    if t is Traced or _array_kind(value) is not None:
        leaves.append(value)
        return _ARRAY
    raise TypeError(
        f"cudadml.fuse: {name} returned a {t.__name__}; a fused function returns arrays, or lists and tuples of them"
    )


# ---- programs: a finished trace, compiled per layout ------------------------------------------------


def source_of(value):
    """Where the traced array ``value`` comes from (``Trace.value``'s ``source``)."""
    return value._source


def source_key(value):
    """The key of what ``value`` holds: an input's, or a node's output port."""
    source = value._source
    return ("input", source[1]) if source[0] == "input" else (id(source[1]), source[2])


class _InputBuffer:
    """How a graph input takes an array: the tensor that describes its elements in a buffer from
    a 16-byte-aligned address at or below them (``start`` bytes from its element 0), and where
    that is not the array's own order, the SLICE1 window that reads it (``entry``: negative
    strides read backwards, an offset past the aligned address)."""

    __slots__ = ("entry", "key", "out_sizes", "sizes", "start", "strides", "window")

    def __init__(self, shape, strides, itemsize, address):
        """``shape`` and byte ``strides`` of an array of ``itemsize``-byte elements at ``address``,
        all whole elements (``layout`` checks)."""
        elements = [s // itemsize if n > 1 else 0 for n, s in zip(shape, strides)]
        low = address + reach(0, shape, elements)[0] * itemsize
        offset = low % ALIGNMENT // itemsize
        sizes, strides = list(shape), [abs(s) for s in elements]
        offsets, steps = [0] * len(shape), [-1 if s < 0 else 1 for s in elements]
        window_sizes, out_sizes = list(shape), tuple(shape)
        if offset:  # the elements start past the aligned address: a dimension reaches back to it
            fits = [i for i in reversed(range(len(shape))) if strides[i] and offset % strides[i] == 0]
            if fits:
                i = fits[0]
                sizes[i] += offset // strides[i]
                offsets[i] = offset // strides[i]
            else:  # one more, leading, dimension whose second layer is the array
                sizes, strides = [2, *sizes], [offset, *strides]
                offsets, steps, window_sizes = [1, *offsets], [1, *steps], [1, *window_sizes]
                out_sizes = (1, *out_sizes)
        self.sizes, self.strides, self.out_sizes = tuple(sizes), tuple(strides), out_sizes
        self.window = (tuple(offsets), tuple(window_sizes), tuple(steps))
        self.entry = bool(offset) or -1 in steps
        self.start = low - low % ALIGNMENT - address
        self.key = (self.sizes, self.strides, self.window)


def _layout(shape, strides, size, words, address, contiguous):
    """``_InputBuffer`` of an array of ``shape`` and byte ``strides`` of ``size``-byte elements at
    ``address`` (``contiguous``: whether it is C-contiguous), its elements as ``words``-byte
    words (two per element for 16-byte ones); or None where a graph cannot describe it (strides
    or an address that are not whole words, too many dimensions unless C-contiguous): then a
    copy is bound."""
    if size != words:  # 16-byte elements as pairs of words
        shape, strides = (*shape, 2), (*strides, words)
    if not shape:
        shape, strides = (1,), (0,)
    if len(shape) > MAX_DIMENSIONS:  # more than a tensor holds: C-contiguous words are one dimension
        if not contiguous:
            return None
        shape, strides = (math.prod(shape),), (words,)
    if address % words or any(s % words for n, s in zip(shape, strides) if n > 1):
        return None
    layout = _InputBuffer(shape, strides, words, address)
    return layout if len(layout.sizes) <= MAX_DIMENSIONS else None


def _words(dtype):
    """The width of the words that move ``dtype``'s elements (8 for 16-byte elements, as pairs)."""
    size = dtype.itemsize
    if size not in (1, 2, 4, 8, 16):
        raise TypeError(f"cudadml.fuse: dtype {dtype} has {size}-byte elements; a graph moves 1, 2, 4, 8 or 16 bytes")
    return min(size, 8)


class _Compiled:
    """A program's graph compiled for one layout of its used inputs (``key``), and where a call
    places the graph outputs (``parts``: shape, dtype and byte offset of each): back to back in
    one allocation of ``total`` bytes, each 16-byte aligned and as long as its tensor needs."""

    __slots__ = ("in_needs", "key", "op", "parts", "total")

    def __init__(self, key, op, graph, values):
        self.key, self.op = key, op
        self.in_needs = [t.total_tensor_size_in_bytes for t in graph.input_tensors]
        self.parts, self.total = [], 0
        for v, t in zip(values, graph.output_tensors):
            self.parts.append((v.shape, v.dtype, self.total))
            self.total += -(-t.total_tensor_size_in_bytes // ALIGNMENT) * ALIGNMENT


class _Run:
    """A call on arrays whose used inputs have one run key (their strides and addresses modulo
    16, ``Arrays.keys``): the compiled graph, and per used input the bytes from its element 0 to
    the aligned address its tensor starts at (``starts``); ``staged`` lists the used inputs that
    no graph describes, copied first into aligned C-contiguous arrays (their start is 0)."""

    __slots__ = ("compiled", "staged", "starts")

    def __init__(self, compiled, starts, staged):
        self.compiled, self.starts, self.staged = compiled, starts, staged


def _run_bytes(run):
    """Estimated bytes of a ``_Run``: its compiled operator and its graph's nodes."""
    compiled = run.compiled
    nodes = compiled.op.desc.nodes
    held = memory.nested_bytes(compiled.parts) + memory.nested_bytes(run.starts)
    return memory.operator_bytes(compiled.op) + sum(memory.descriptor_bytes(n.operator) for n in nodes) + held


def _program_bytes(program):
    """Estimated bytes of a ``Program``: its trace's nodes (their descriptors, the arrays they
    take and give) and its arrays (its graphs are kept apart)."""
    trace = program.inputs[0]._trace if program.inputs else None
    nodes = trace.nodes if trace else ()
    arrays = len(program.inputs) + len(program.outputs) + sum(len(n.args) + len(n.results) for n in nodes)
    return sum(memory.descriptor_bytes(n.desc) for n in nodes) + memory.entry_bytes(0, arrays=arrays)


class Program:
    """A finished trace: its inputs (traced arrays, in the arguments' order), its results
    (``outputs``: each distinct traced array returned; ``leaves``: per returned array, an index
    into ``outputs`` or a constant array), the nodes the results need, and per run key of the
    arrays it is run on, its ``_Run`` (``graphs``)."""

    def __init__(self, inputs, leaves, structure=None):
        self.inputs, self.structure = inputs, structure
        self.outputs, self.leaves, index = [], [], {}
        for leaf in leaves:
            if type(leaf) is Traced:
                if leaf._source[0] == "unset":
                    raise TypeError("cudadml.fuse: the function returned an array made by numpy.empty (no values)")
                if id(leaf) not in index:
                    index[id(leaf)] = len(self.outputs)
                    self.outputs.append(leaf)
                self.leaves.append(index[id(leaf)])
            else:
                self.leaves.append(leaf)
        self.graph_outputs = [v for v in self.outputs if v._source[0] in ("input", "node")]
        # Results that are each a graph output, in order: a call's values are the graph's outputs.
        self.only_graph_outputs = len(self.graph_outputs) == len(self.outputs)
        self.assemble = _assembler(structure, self.leaves)
        live, stack = {}, [v._source[1] for v in self.graph_outputs if v._source[0] == "node"]
        while stack:
            node = stack.pop()
            if id(node) not in live:
                live[id(node)] = node
                stack += [a._source[1] for a in node.inputs if a._source[0] == "node"]
        trace = inputs[0]._trace if inputs else None
        self.nodes = [n for n in (trace.nodes if trace else ()) if id(n) in live]
        used = {v._source[1] for v in self.graph_outputs if v._source[0] == "input"}
        used |= {a._source[1] for n in self.nodes for a in n.inputs if a._source[0] == "input"}
        self.used = sorted(used)
        self.uses_all = self.used == list(range(len(inputs)))
        # A call's values are the graph's outputs on the arrays as given.
        self.direct = self.uses_all and self.only_graph_outputs and bool(self.graph_outputs)
        self.words = [_words(inputs[k].dtype) for k in self.used]
        self.graphs = memory.KeptDict(_run_bytes)  # (the graphs bounded in bytes)
        # A library's half of fuse keeps here its memory per the arrays' dtypes and device, and
        # its programs of the gradients per the inputs that want one (torch: ``interop.torch_fuse``).
        self.memories, self.backwards = {}, {}
        self._lock = threading.Lock()

    def run(self, memory, arrays):
        """The values of ``outputs`` for ``arrays`` (one per input, of the kind ``memory``
        reaches): the graph run into new arrays, and the results it has no output for."""
        return self.call(memory, self.find(memory, arrays), arrays)

    def find(self, memory, arrays):
        """The ``_Run`` for ``arrays`` (None where the program has no graph output)."""
        if not self.graph_outputs:
            return None
        used = arrays if self.uses_all else [arrays[k] for k in self.used]
        key = memory.keys(used)
        return self.graphs.get(key) or self._prepare(key, memory, used)

    def call(self, memory, run, arrays):
        """``run``'s values of ``outputs`` for ``arrays`` (``run``: what ``find`` gives for them)."""
        values = [] if run is None else memory.call(run, arrays if self.uses_all else [arrays[k] for k in self.used])
        if self.only_graph_outputs:
            return values
        graph_values = iter(values)
        return [
            memory.zeros(v.shape, v.dtype)
            if v._source[0] == "zeros"
            else memory.empty(v.shape, v.dtype)
            if v._source[0] == "empty"
            else next(graph_values)
            for v in self.outputs
        ]

    def _prepare(self, key, memory, used):
        """The ``_Run`` of arrays of run key ``key`` (``used``: the used inputs of one call),
        its graph compiled unless a run of the same layouts has it."""
        layouts, starts, staged = [], [], []
        for i, (a, words) in enumerate(zip(used, self.words)):
            shape, strides, size, address, contiguous = memory.geometry(a)
            layout = _layout(shape, strides, size, words, address, contiguous)
            if layout is None:  # a copy, aligned and C-contiguous, which a graph describes
                shape, strides, size, address, contiguous = memory.geometry(memory.stage(a))
                layout = _layout(shape, strides, size, words, address, contiguous)
                staged.append(i)
            layouts.append(layout)
            starts.append(layout.start)
        layout_key = tuple(layout.key for layout in layouts)
        compiled = next((r.compiled for r in self.graphs.values() if r.compiled.key == layout_key), None)
        if compiled is None:
            graph = self.graph(layouts)
            op = graph.compile(memory.device, load=memory.kind == "cupy")  # host arrays: no NVRTC
            compiled = _Compiled(layout_key, op, graph, self.graph_outputs)
        run = _Run(compiled, starts, tuple(staged))
        with self._lock:
            self.graphs[key] = run
            while len(self.graphs) > GRAPHS:
                self.graphs.popitem(last=False)
        return run

    def graph(self, layouts) -> GraphDesc:
        """The ``GraphDesc`` of the program for arrays of ``layouts`` (one per used input)."""
        at = {k: g for g, k in enumerate(self.used)}
        tensors = {}
        for k, layout in zip(self.used, layouts):
            t = TensorDataType.unsigned_of_width(_words(self.inputs[k].dtype))
            tensors[k] = BufferTensorDesc(t, layout.sizes, layout.strides)
        nodes, input_edges, edges, output_edges, entries, index = [], [], [], [], {}, {}

        def entry(k):
            """The node that reads input ``k`` in its own order into a packed tensor."""
            if k not in entries:
                layout, tensor = layouts[at[k]], tensors[k]
                out = BufferTensorDesc(tensor.data_type, layout.out_sizes)
                nodes.append(Slice1OperatorDesc(tensor, out, *layout.window))
                entries[k] = len(nodes) - 1
                input_edges.append(GraphInputEdge(at[k], entries[k], 0))
            return entries[k]

        for node in self.nodes:
            feeds, replaced = [], {}
            for port, a in enumerate(node.inputs):
                kind, *rest = a._source
                if kind == "input":
                    k = rest[0]
                    direct = not layouts[at[k]].entry and node.desc.input_tensors[port].sizes == tensors[k].sizes
                    if direct:
                        replaced[port] = tensors[k]
                        feeds.append(("input", at[k]))
                    else:
                        feeds.append(("node", entry(k), 0))
                else:
                    feeds.append(("node", index[id(rest[0])], rest[1]))
            nodes.append(_replaced(node.desc, replaced) if replaced else node.desc)
            n = index[id(node)] = len(nodes) - 1
            for port, (kind, source, *source_port) in enumerate(feeds):
                if kind == "input":
                    input_edges.append(GraphInputEdge(source, n, port))
                else:
                    edges.append(GraphIntermediateEdge(source, source_port[0], n, port))
        for o, v in enumerate(self.graph_outputs):
            kind, *rest = v._source
            if kind == "input":
                output_edges.append(GraphOutputEdge(entry(rest[0]), 0, o))
            else:
                output_edges.append(GraphOutputEdge(index[id(rest[0])], rest[1], o))
        return GraphDesc(len(self.used), len(self.graph_outputs), nodes, input_edges, output_edges, edges)


def _assembler(structure, leaves):
    """What builds the structure the function returned from a call's ``values`` (one per
    output) and copies of its constant arrays: for a list or tuple of the outputs in order, or
    one output, without walking the structure."""
    if structure is None:  # (a backward program: its values are what its caller takes)
        return None
    if all(type(leaf) is int for leaf in leaves) and leaves == list(range(len(leaves))):  # the outputs in order
        if structure == _ARRAY:
            return operator.itemgetter(0)
        if structure[0] in (list, tuple) and all(s == _ARRAY for s in structure[1]):
            return structure[0]

    def assemble(values):
        return _rebuild(structure, iter([values[leaf] if isinstance(leaf, int) else _copy(leaf) for leaf in leaves]))

    return assemble


# ---- fuse -------------------------------------------------------------------------------------------


class Fused:
    """A function traced into one graph per layout of its arguments: what `fuse` returns.

    Calling it runs the function's graph; ``__wrapped__`` is the function. ``cache_clear()``
    drops the traces and compiled graphs it keeps.
    """

    def __init__(self, fn: Callable):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._programs = memory.KeptDict(_program_bytes)  # (the traces bounded in bytes)
        self._last = (None, None)  # the key and program of the latest call
        self._last_call = (None, None, None)  # NumPy's or CuPy's: its key, program and run
        self._lock = threading.Lock()
        _FUSED.add(self)

    def __repr__(self) -> str:
        return f"<cudadml.fuse of {getattr(self._fn, '__qualname__', self._fn)!r}>"

    def __get__(self, instance, owner=None):
        return self if instance is None else types.MethodType(self, instance)

    def cache_clear(self) -> None:
        """Drop every trace and compiled graph kept: the next call traces again."""
        with self._lock:
            self._programs.clear()
            self._last, self._last_call = (None, None), (None, None, None)

    def __call__(self, *args, **kwargs):
        first = type(args[0]) if args else None
        kind = _KINDS.get(first)
        if kind is not None and not kwargs and (len(args) == 1 or set(map(type, args)) == {first}):
            # Arrays of one type only, the common call: their structure without a walk.
            arrays, structure = args, _ONE_ARRAY if len(args) == 1 else ((tuple, (_ARRAY,) * len(args)), ())
        else:
            arrays, structure, kind = self._arguments(args, kwargs)
            if kind is None:  # called by a function being traced: part of its graph
                return self._fn(*args, **kwargs)
        if kind == "torch":
            return self._call_library(_half(kind), args, kwargs, structure, arrays)
        if kind == "numpy":
            return self._run(HOST, structure, arrays)
        memory = device_arrays(arrays[0].data.device_id)
        cuda = memory.xp.cuda
        if cuda.Device().id == memory.device:  # (entering the device costs more than asking)
            return self._run(memory, structure, arrays)
        with cuda.Device(memory.device):  # (its allocations and launch)
            return self._run(memory, structure, arrays)

    def _run(self, memory, structure, arrays):
        """The function's results for NumPy or CuPy ``arrays`` placed as ``structure``."""
        layouts = memory.layouts(arrays)
        key = (memory, structure, layouts)
        last_key, program, run = self._last_call
        if key != last_key:  # (most calls repeat the layouts of the one before: no lookup, no lock)
            metas = tuple([layout[:2] + layout[4:] for layout in layouts])  # dtype, shape (and device)
            if len({layout[4:] for layout in layouts}) > 1:
                devices = ", ".join(sorted({str(layout[4]) for layout in layouts}))
                raise TypeError(f"cudadml.fuse: arrays on several devices ({devices})")
            program = self._program((memory.kind, structure, metas), structure, lambda: [m[:2] for m in metas])
            run = program.find(memory, arrays)
            self._last_call = (key, program, run)
        if program.direct:
            return program.assemble(memory.call(run, arrays))
        return program.assemble(program.call(memory, run, arrays))

    def _arguments(self, args, kwargs):
        """``(arrays, structure, kind)`` of a call's arguments, refusing those a fused function
        cannot take; ``kind`` is None where the arrays are traced."""
        arrays, named = [], []
        try:
            positional = _flatten(args, arrays)
            for name, v in kwargs.items():
                named.append((name, _flatten(v, arrays, name)))
        except _Unhashable as e:
            raise e.refusal() from None
        if any(type(a) is Traced for a in arrays):
            return arrays, None, None
        name = getattr(self._fn, "__name__", "the function")
        if not arrays:
            raise TypeError(f"cudadml.fuse: {name} was given no array to trace")
        kinds = {_array_kind(a) for a in arrays}
        if len(kinds) > 1:
            raise TypeError(f"cudadml.fuse: {name} was given arrays of several kinds ({', '.join(sorted(kinds))})")
        return arrays, (positional, tuple(named)), kinds.pop()

    def _program(self, key, structure, avals):
        """The program kept under ``key``, or the function traced on arrays of ``avals()``."""
        last_key, program = self._last
        if last_key == key:  # most calls repeat the one before: no lookup, no lock
            return program
        program = self._programs.get(key)
        if program is not None:
            self._last = (key, program)
            with self._lock:
                try:
                    self._programs.move_to_end(key)
                except KeyError:  # (another thread dropped it meanwhile)
                    pass
            return program
        program = self._trace(structure, avals())
        with self._lock:
            self._programs[key] = program
            while len(self._programs) > PROGRAMS:
                self._programs.popitem(last=False)
        self._last = (key, program)
        return program

    def _trace(self, structure, avals):
        """Call the function on traced arrays of ``avals`` (dtype, shape) placed as ``structure``."""
        trace = Trace()
        inputs = [trace.value(("input", k), tuple(shape), np.dtype(dtype)) for k, (dtype, shape) in enumerate(avals)]
        leaves = iter(inputs)
        args_structure, kwargs_structure = structure
        args = _rebuild(args_structure, leaves)
        kwargs = {name: _rebuild(s, leaves) for name, s in kwargs_structure}
        try:
            with tracing():
                result = self._fn(*args, **kwargs)
        finally:
            trace.closed = True
        returned = []
        name = getattr(self._fn, "__name__", "the function")
        result_structure = _result_structure(result, returned, name)
        for leaf in returned:
            if type(leaf) is Traced and leaf._trace is not trace:
                raise TypeError(f"cudadml.fuse: {name} returned a traced array of another trace")
        return Program(inputs, returned, result_structure)

    def _call_library(self, half, args, kwargs, structure, arrays):
        """The function's results for arrays of a library whose half of fuse is ``half``."""
        if half.watched(arrays):  # (compiling, transforms, modes: the eager calls are what they see)
            return self._fn(*args, **kwargs)
        metas = half.metas(arrays)
        program = self._program((half.KIND, structure, metas), structure, lambda: half.avals(metas))
        return program.assemble(half.call(program, arrays))


#: The traces of every fused function, in ``cudadml.cache_info``.
_FUSED = memory.PerInstance(f"{__name__}.Fused", PROGRAMS, lambda fused: len(fused._programs), Fused.cache_clear)


def _half(kind):
    """The half of fuse that takes arrays of ``kind`` ("torch"), as ``interop`` provides it
    (``hooks.fuse_torch``): ``KIND``, ``watched(arrays)`` (run the function eagerly),
    ``metas(arrays)`` (what its programs are kept under, besides the structure),
    ``avals(metas)`` (the traced arrays' dtypes and shapes) and ``call(program, arrays)`` (the
    values of its outputs). Loaded at the first call holding such arrays."""
    half = _HALVES.get(kind)
    if half is None:
        half = _HALVES[kind] = _LOADERS[kind]()
    return half


_HALVES = {}  # per kind of array, its half of fuse
_LOADERS = {"torch": hooks.fuse_torch}


def _copy(constant):
    """A copy of an array the function returned without a traced call making it."""
    return constant.clone() if _array_kind(constant) == "torch" else constant.copy()


def fuse(fn: Callable | None = None) -> Fused | Callable[[Callable], Fused]:
    """Trace a function of data-movement calls into one graph, run as one launch per call.

    As ``cupy.fuse`` is to elementwise code: the function is traced once per layout of its
    arguments into a ``GraphDesc`` whose nodes are the descriptors its calls would build eagerly,
    compiled (the nodes' index maps composed, so no intermediate array exists and each byte moves
    once) and kept; each call runs that graph.

    Parameters
    ----------
    fn : callable
        A function of arrays (and other arguments) that returns an array, or lists and tuples
        of arrays. Usable as a decorator, ``@fuse`` or ``@fuse()``. Inside it, these calls on
        its arrays are traced:

        * the array functions ``slice``, ``slice1``, ``slice_grad``, ``split``, ``join``,
          ``strided_slice``, ``strided_slice_grad`` and ``slice1_batch`` (a SLICE1 per window);
        * ``cudadml.numpy``'s functions where they are such a chain: ``concatenate`` and the
          ``stack`` family, the ``split`` family, the flips, ``roll`` of one axis and ``pad``
          with 0;
        * basic indexing ``x[key]`` (as ``strided_slice``, elements moved as bits), ``reshape``,
          ``ravel``, ``copy`` and ``view`` to a dtype of the same size.

        Arrays and results may be used any number of times.

    Returns
    -------
    Fused
        A callable taking the function's arguments: NumPy arrays (run on the host backend), CuPy
        arrays (on their GPU) or PyTorch tensors (CPU or CUDA, with autograd), all of one kind,
        any strides; anything else must be hashable (it is part of the key the traces are kept
        under), and lists and tuples may hold arrays. It returns the function's structure with
        each array a new C-contiguous array of the arguments' kind, of the shape, dtype and bytes
        the eager calls give (NumPy's and CuPy's several results are disjoint parts of one
        allocation, as ``split``'s are; torch's are tensors of their own). A returned argument,
        or an array that no traced call made (a constant), is returned as a copy.

    Raises
    ------
    TypeError
        While tracing, for anything else that touches a traced array (arithmetic, NumPy's
        functions and ufuncs, ``numpy.asarray``, ``float()``, methods such as ``sum``, ``out=``,
        ``stream=``, ``cudadml.numpy.pad`` with a constant other than 0, a constant array given
        to an array call): the message names the call. It would run apart from the graph.
        Also for arguments of several kinds, unhashable non-array arguments, or a function
        that returns something other than arrays.
    DescriptorError, ValueError, IndexError
        As the eager calls raise them, in the same words, while tracing.

    Notes
    -----
    Traces are kept per argument structure, kind, dtype, shape and device, and the non-array
    arguments as the function sees them (the latest 64): of the same type and, for numbers, the
    same bits (0.0 and -0.0, or NaNs of two payloads, are two arguments; two NaNs of one payload
    are one), in tuples, lists, frozensets and slices too; other objects by ``==``. Each keeps a
    graph compiled per layout of its arrays (strides, and their address modulo 16: graph inputs
    are buffers, and a tensor's window reads an array that starts past its aligned address or
    has negative strides) (the latest 16). The function's Python code runs only when it is
    traced.

    With PyTorch, the backward is the graph of the gradients (SLICE and SLICE1 give SLICE_GRAD,
    SLICE_GRAD gives SLICE1, SPLIT and JOIN each other, the chain reversed), run as one launch.
    Where one array feeds several calls (or is returned and used), its gradient has several
    contributions: each is its own output of the backward graph, and torch adds them. Under
    ``torch.compile``, functorch transforms and dispatch modes the function runs eagerly.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> @cd.fuse
    ... def focus(x):  # space to depth: four strided slices joined on channels
    ...     return cd.join([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], axis=1)
    >>> x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    >>> focus(x)[0, :, 0]  # the first row of each channel
    array([[0., 2.],
           [4., 6.],
           [1., 3.],
           [5., 7.]], dtype=float32)
    >>> y = focus(x)  # traced once (for this shape and dtype): one launch
    >>> y.shape, y.flags.c_contiguous, np.array_equal(y, focus.__wrapped__(x))
    ((1, 4, 2, 2), True, True)
    """
    if fn is None:
        return fuse
    if not callable(fn):
        raise TypeError(f"cudadml.fuse takes a function, not {type(fn).__name__}")
    return Fused(fn)

"""Operations on NumPy and CuPy arrays: the one route every call takes.

``run`` turns an operation and its arrays into a ``Call`` (``calls``) and looks the call up in
a cache bounded in bytes (``CACHE_BYTES``); on a miss it builds the call's ``CompiledOperator``
from the call alone: the operation's descriptor (every DirectML rule, with its messages),
lowered with the layouts of the arrays, any address. ``CompiledOperator.execute``'s binding
rules then apply to every call; ``out=`` arrays are bindings like any other. Results are
allocated here: one array, or for several results (a split) one allocation that they are
views of. Empty results are made as NumPy makes them, without a descriptor.

Many windows (``slice1_batch`` and its gradient), whose call is no single descriptor of fixed
layouts (the windows are per-call data, a table), run by their own runs, found by the call's
type (``windows.RUNS``). What both allocate and check of arrays is ``results``'.

NumPy arrays run on the host backend; CuPy arrays (and CUDA arrays exposing
``__cuda_array_interface__`` or ``__dlpack__``, taken without a copy) through the kernels.
Adapters for other array libraries run their operations here on views of their arrays.
"""

from __future__ import annotations

import operator
import sys

import numpy as np

from ..backends import REFERENCE, host_backend
from ..core import memory, messages
from ..core.calls import Call, common_dtype
from ..core.errors import BindingError, DescriptorError
from ..core.memory import element_strides
from .bindings import check_element_dtype
from .compiled import CompiledOperator
from .results import WORD, check_unbound_outs, check_words_rank, empty, part_offsets, parts, result_view
from .windows import RUNS

__all__ = ["CACHE_BYTES", "ELEMENT_STRIDES", "PLAIN", "entry_for", "result_shapes", "run", "run_on_device"]

#: The most host memory, in bytes, that cudadml's caches hold together (64 MiB): the compiled
#: operators of the array functions' calls and everything else they keep (``core.memory``).
CACHE_BYTES = memory.CACHE_BYTES
_DTYPE, _SHAPE, _STRIDES = operator.attrgetter("dtype"), operator.attrgetter("shape"), operator.attrgetter("strides")
_PLAIN_KINDS = frozenset("biufc")
_new_call = tuple.__new__  # a Call from its fields without the keyword-taking constructor (per call)


class _Entry:
    """A call's compiled operator (None when nothing is moved), its result shapes, the inputs
    and results it binds (None: all), whether a result nothing moves into is zeros, and for
    several results the byte offset of each in their one allocation (``total`` bytes);
    ``nbytes``: its estimated size (``memory.entry_bytes``), ``used``: hit since the cache
    last passed over it."""

    __slots__ = ("bound_inputs", "bound_outputs", "nbytes", "offsets", "op", "shapes", "total", "used", "zeros")

    def __init__(self, op, shapes, bound_inputs=None, bound_outputs=None, *, zeros=False, offsets=None, total=0):
        self.op, self.shapes, self.zeros = op, shapes, zeros
        self.bound_inputs, self.bound_outputs = bound_inputs, bound_outputs
        self.offsets, self.total, self.used, self.nbytes = offsets, total, False, 0


#: The store of every cache whose entries grow with a call, bounded in estimated bytes: the
#: compiled calls (keyed by ``Call``), and what ``memory.kept`` memoizes beside them.
_CACHE = memory.CACHE
_ENTRIES = _CACHE._entries


class _Runs(dict):
    """Per call type, its own run (a windows batch's: ``windows.RUNS``), or None (one descriptor
    of fixed layouts), kept for each type at its first call: a lookup per call costs what a
    dict's does, where ``get`` would add a method call."""

    def __missing__(self, kind):
        self[kind] = None
        return None


_RUNS = _Runs(RUNS)


# ---- the arrays ---------------------------------------------------------------------------------


def as_array(x, name, role):
    """``(kind, array)``: CuPy for device memory (zero-copy), NumPy for everything else
    (``name``, ``role``: the call and the array's role in it, for messages).

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
                f"{name}: {role} is a {type(x).__name__}, a NumPy subclass whose meaning (a mask, matrix rules) "
                f"the plain result would drop; pass np.asarray(...) of it to work on its data"
            )
        return "numpy", x
    if isinstance(x, (str, bytes)):
        raise TypeError(
            f"{name}: {role} is {type(x).__name__}, not an array (NumPy would make it one 0-dimensional element)"
        )
    if hasattr(x, "__cuda_array_interface__"):
        import cupy

        return "cupy", cupy.asarray(x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__") and x.__dlpack_device__()[0] == 2:
        import cupy  # 2 is kDLCUDA

        return "cupy", cupy.from_dlpack(x)
    return "numpy", np.asarray(x)


def _input(x, name, role):
    """``(kind, array)`` for the input the call names ``role`` (``x``, ``xs[2]``). NumPy arrays
    must hold plain data; strides that are not whole elements (a record's field) get a copy.
    (CuPy has no object dtypes; its such strides bind nothing, which ``arrays.run_call`` meets.)"""
    kind, x = as_array(x, name, role)
    if kind == "numpy":
        if x.dtype.kind not in _PLAIN_KINDS:  # bool, integers, floats, complex are plain data
            check_element_dtype(x.dtype, f"{name}: {role}")
        # (A C-contiguous array's strides are whole elements wherever they move.)
        if not x.flags.c_contiguous and element_strides(x.shape, x.strides, x.itemsize) is None:
            x = np.ascontiguousarray(x)
    return kind, x


def _out(kind, out, name, role="out", source="x"):
    """``out`` as an array of ``kind``; ``TypeError`` for another memory kind or a non-plain dtype."""
    out_kind, out = as_array(out, name, role)
    if out_kind != kind:
        raise TypeError(f"{name}: {role} is in {out_kind} memory but {source} is in {kind} memory")
    if kind == "numpy":
        check_element_dtype(out.dtype, f"{name}: {role}")
    return out


# ---- running a call -----------------------------------------------------------------------------


def run(operation, inputs, outs=None, stream=None, chunks=None):
    """``operation`` on NumPy or CuPy arrays (of one kind and dtype), into ``outs`` where given:
    the list of results (``outs`` itself where given)."""
    if chunks is not None:
        raise TypeError(f"{operation.function}: chunks= is for Dask arrays; this call has none")
    own = _RUNS[type(operation)]  # a windows batch's run
    if own is not None:
        return own(operation, inputs, outs, stream)
    x = inputs[0]
    dtype = x.dtype  # 16-byte elements too: their entry binds them as pairs of words (``_build_words``)
    kind = "numpy" if isinstance(x, np.ndarray) else "cupy"
    call = _new_call(  # entry_for's lookup, inline: a call in between costs NumPy and CuPy calls 3%
        Call,
        (
            operation.function,
            operation,
            kind,
            None if kind == "numpy" else x.data.device_id,
            dtype,
            ((x.shape, x.strides),) if len(inputs) == 1 else tuple(zip(map(_SHAPE, inputs), map(_STRIDES, inputs))),
            None if outs is None else _out_layouts(outs),
        ),
    )
    entry = _ENTRIES.get(call)
    if entry is None:
        entry = _compiled(call)
    else:
        entry.used = True  # as Cache.get marks a hit, without the call
    if entry.bound_inputs is not None:
        inputs = [inputs[k] for k in entry.bound_inputs]
    if outs is not None:
        if entry.op is None or entry.bound_outputs is not None:
            check_unbound_outs(operation.NAME, outs, kind)
        bound = outs if entry.bound_outputs is None else [outs[k] for k in entry.bound_outputs]
        new = False
    elif entry.offsets is not None:  # several results: views of one allocation
        buffer = empty(kind, (entry.total // dtype.itemsize,), dtype)
        if entry.op is not None:
            bound = len(entry.shapes) if entry.bound_outputs is None else len(entry.bound_outputs)
            entry.op.execute_known_layouts(inputs, [buffer] * bound, stream, True)
        return parts(kind, buffer, entry.shapes, entry.offsets, dtype)  # built while the GPU copies
    else:
        outs = bound = [empty(kind, entry.shapes[0], dtype)]
        new = True
    if entry.op is not None:
        entry.op.execute_known_layouts(inputs, bound, stream, new)
    elif entry.zeros:  # the gradient of an empty selection: nothing was read
        out = outs[0]
        if kind == "cupy" and stream is not None:
            with stream:
                out.fill(0)
        else:
            out[...] = 0
    return outs


#: The ``kind`` of ``entry_for`` for device memory whose layouts give strides in elements.
ELEMENT_STRIDES = "device, strides in elements"


def entry_for(operation, kind, device, dtype, layouts, out_layouts):
    """The cached entry of ``operation`` on arrays of memory ``kind`` ("numpy" or "cupy": host
    or device; ``ELEMENT_STRIDES``: device, with strides in elements) on ``device``, of NumPy
    ``dtype`` and ``layouts`` (per input ``(shape, strides)``, strides in bytes unless said),
    into outputs of ``out_layouts`` (per output ``(shape, strides, dtype)``, or None for new
    results); built on a miss, which raises for a call that breaks a rule."""
    call = _new_call(Call, (operation.function, operation, kind, device, dtype, layouts, out_layouts))
    entry = _ENTRIES.get(call)
    if entry is None:
        return _compiled(call)
    entry.used = True  # as Cache.get marks a hit, without the call
    return entry


def run_on_device(entry, inputs, outputs, stream_ptr, new_outputs, device):
    """An ``entry_for`` device memory run on buffers given by address: ``inputs`` and
    ``outputs`` list the address of each array's element 0, laid out as the entry's key said
    (for several new results: the address of their one allocation, sized ``entry.total``),
    all on ``device``; launched on the stream ``stream_ptr`` (a handle), with ``device``
    current. For adapters of libraries whose device arrays are not CuPy's, without a CuPy view
    of each. A result nothing moves into (``entry.zeros``) is the caller's to fill."""
    op = entry.op
    if op is None:
        return
    if entry.bound_inputs is not None:
        inputs = [inputs[k] for k in entry.bound_inputs]
    if entry.bound_outputs is not None:
        outputs = [outputs[k] for k in entry.bound_outputs]
    op.execute_addresses(inputs, outputs, stream_ptr, new_outputs, device)


class _Plain:
    """The adapter of NumPy and CuPy arrays (and whatever ``np.asarray`` takes): the default."""

    def takes(self, inputs, outs):
        return True

    def arrays(self, operation, inputs, outs):
        name, cupy = operation.NAME, sys.modules.get("cupy")
        if cupy is not None and (
            type(inputs[0]) is cupy.ndarray
            if len(inputs) == 1
            else list(map(type, inputs)).count(cupy.ndarray) == len(inputs)
        ):
            kind = "cupy"  # CuPy arrays as they are (nothing to check), without a call per array
        elif len(inputs) == 1:
            kind, x = _input(inputs[0], name, operation.ARGUMENT)
            inputs = [x]
        else:
            what = operation.ARGUMENT
            converted = [_input(a, name, f"{what}[{k}]") for k, a in enumerate(inputs)]
            kind = converted[0][0]
            if any(k != kind for k, _ in converted):
                raise TypeError(f"{name}: {what} mix host (NumPy) and device (CuPy) memory")
            inputs = [a for _, a in converted]
        if len(inputs) > 1:
            common_dtype(name, list(map(_DTYPE, inputs)), operation.ARGUMENT)
        if outs is not None:
            parts = operation.function == "split"  # out= a list of parts; else one array
            source = operation.ARGUMENT if len(inputs) == 1 else f"{operation.ARGUMENT}[0]"
            outs = [_out(kind, o, name, f"out[{k}]" if parts else "out", source) for k, o in enumerate(outs)]
        return inputs, outs

    run = staticmethod(run)  # no method in between: every NumPy and CuPy call comes this way


PLAIN = _Plain()


def _out_layouts(outs):
    if len(outs) == 1:
        o = outs[0]
        return ((o.shape, o.strides, o.dtype),)
    return tuple((o.shape, o.strides, o.dtype) for o in outs)


def result_shapes(operation, dtype, shapes) -> tuple:
    """The result shapes of ``operation`` on arrays of ``dtype`` and ``shapes``, after every
    rule ``run`` applies before binding (for adapters that run it in pieces)."""
    if dtype.itemsize == 16 and operation.directml_types is False:
        check_words_rank(operation, shapes[0])
        try:
            words = operation.words().descriptor(np.dtype(np.uint64), [(*s, 2) for s in shapes])
        except DescriptorError as e:
            raise messages.of_words(e, dtype) from None
        return tuple(s[:-1] for s in words.shapes)
    return operation.descriptor(dtype, shapes).shapes


# ---- building a call's entry (from the call alone) -----------------------------------------------


def _element_view(name, k, layout, per_element, axes):
    """``(shape, element strides)`` of input ``k``'s ``(shape, strides)`` (``per_element`` stride
    units make an element: its bytes, or 1 for strides in elements), and where the tensor's
    dimensions are other axes (``axes``), the tensor's element strides."""
    shape, strides = layout
    elements = element_strides(shape, strides, per_element)
    if elements is None:
        where = f"{name}.execute: inputs[{k}]"
        raise BindingError([f"{where}: has strides {strides}, not whole {per_element}-byte elements"])
    view = tuple(shape), elements
    return view if axes is None else (*view, _mapped_strides(view[1], axes))


def _mapped_strides(strides, axes):
    """Element strides per tensor dimension: the array axis's, or 0 where the tensor has a
    dimension the array lacks (size 1)."""
    return tuple(0 if r is None else strides[r] for r in axes)


def _compiled(call):
    """The entry of ``call`` on a miss: built (which raises for a call that breaks a rule,
    leaving nothing behind), estimated and kept, or the one another thread kept meanwhile."""
    entry = _CACHE.get(call)
    if entry is None:
        entry = _build(call)
        kind, out_layouts = call.kind, call.out_layouts
        # The reference backend runs the plan itself; the kernels (and their emulation) prepare
        # launches, at the first run, for the backend of this thread (``host_backend``).
        launched = kind != "numpy" or host_backend() is not REFERENCE
        dims = memory.key_dims(call.layouts) + sum(map(len, entry.shapes))
        if out_layouts is not None:
            dims += memory.key_dims(out_layouts)
        entry.nbytes = memory.entry_bytes(dims, entry.op, len(call.layouts) + len(entry.shapes), launched)
        entry = _CACHE.add(call, entry)
    return entry


def _build(call):
    _, operation, kind, device, dtype, layouts, out_layouts = call
    if dtype.itemsize == 16 and operation.directml_types is False:
        return _build_words(operation, kind, device, dtype, layouts, out_layouts)
    return _build_entry(operation, kind, device, dtype, layouts, out_layouts)


def _build_entry(operation, kind, device, dtype, layouts, out_layouts):
    name = operation.NAME
    per_element = 1 if kind == ELEMENT_STRIDES else dtype.itemsize  # stride units in an element
    d = operation.descriptor(dtype, [shape for shape, _ in layouts])
    shapes = d.shapes
    outs = out_layouts or (None,) * len(shapes)
    bound_outputs = d.bound_outputs if d.desc is not None else ()
    for k in range(len(shapes)):  # out= of results nothing is bound for is checked all the same
        if k not in bound_outputs and outs[k] is not None:
            result_view(name, k, outs[k], shapes[k], dtype, per_element)
    offsets = total = None
    if getattr(operation, "MANY_RESULTS", False):  # results back to back in one allocation
        offsets, total = part_offsets(shapes, dtype.itemsize)
    if d.desc is None:
        return _Entry(None, shapes, (), bound_outputs, zeros=d.zeros, offsets=offsets, total=total or 0)
    in_views = [_element_view(name, k, layouts[k], per_element, d.input_axes) for k in d.bound_inputs]
    out_views = []
    for k in bound_outputs:
        view = result_view(name, k, outs[k], shapes[k], dtype, per_element)
        out_views.append(view if d.output_axes is None else (*view, _mapped_strides(view[1], d.output_axes)))
    placed_at = [offsets[k] for k in bound_outputs] if offsets is not None and out_layouts is None else None
    op = CompiledOperator(d.desc, device, views=(in_views, out_views), placed_at=placed_at, load=False)
    every_input, every_output = len(d.bound_inputs) == len(layouts), len(bound_outputs) == len(shapes)
    return _Entry(
        op,
        shapes,
        None if every_input else d.bound_inputs,
        None if every_output else bound_outputs,
        offsets=offsets,
        total=total or 0,
    )


# ---- 16-byte elements ---------------------------------------------------------------------------
# DirectML has no 16-byte data type: with directml_types=False, an array of 16-byte elements
# (complex128, V16, ...) is handed to the operators as pairs of 8-byte words, a trailing axis
# of 2 (one more dimension). The call's entry is compiled for the word layouts of its arrays'
# layouts, and binds the arrays themselves (a binding is an address; the entry's key fixed the
# layouts), so such a call costs what any other does. No byte is copied.


def _build_words(operation, kind, device, dtype, layouts, out_layouts):
    """``_build`` of a call on 16-byte elements: the entry of ``operation.words()`` on the word
    layouts of ``layouts``, whose results are the 16-byte elements' shapes."""
    check_words_rank(operation, layouts[0][0])
    if out_layouts is not None:
        for _, _, out_dtype in out_layouts:
            if out_dtype != dtype:
                raise TypeError(f"{operation.NAME}: out has dtype {out_dtype}; the result has dtype {dtype}")
        out_layouts = tuple((*_word_layout(kind, shape, strides), WORD) for shape, strides, _ in out_layouts)
    words = tuple(_word_layout(kind, shape, strides) for shape, strides in layouts)
    try:
        entry = _build_entry(operation.words(), kind, device, WORD, words, out_layouts)
    except DescriptorError as e:
        raise messages.of_words(e, dtype) from None
    entry.shapes = tuple(s[:-1] for s in entry.shapes)
    return entry


def _word_layout(kind, shape, strides):
    """The layout of pairs of 8-byte words that an array of 16-byte elements of ``shape`` and
    ``strides`` (in bytes, or in elements for ``ELEMENT_STRIDES``) is."""
    if kind == ELEMENT_STRIDES:
        return (*shape, 2), (*(2 * s for s in strides), 1)
    return (*shape, 2), (*strides, 8)

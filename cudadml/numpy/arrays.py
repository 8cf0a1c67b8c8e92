"""What cudadml.numpy's families share: their arguments read as arrays of one kind, the words
the kernels move each dtype's elements as, the runs of axes a call past 8 dimensions folds, and
the copies and joins they build on (past one DirectML buffer, a launch per array)."""

from __future__ import annotations

import math
import sys

import numpy as np

from ..core.tensor import MAX_DIMENSIONS, MAX_ELEMENTS
from ..run.arrays import join, run_call, strided_slice

try:  # (NumPy's axis checks, which every family's messages follow)
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple

__all__ = [
    "AS_IS_SIZES",
    "RAW",
    "WORD_SIZES",
    "alone",
    "as_array",
    "as_arrays",
    "as_words",
    "copy_of",
    "cupy_in",
    "exact",
    "fold",
    "folding",
    "from_words",
    "in_passes",
    "join_words",
    "new_array",
    "normalize_axis_index",
    "normalize_axis_tuple",
    "on_host",
    "past_one_buffer",
    "rank_limit",
    "run_operation",
    "traced",
    "words_of",
]

#: Kinds the array functions move as they are, at these element sizes (16: as pairs of words).
_AS_IS_KINDS, AS_IS_SIZES = frozenset("biufcmM"), frozenset((1, 2, 4, 8, 16))
WORD_SIZES = (8, 4, 2, 1)
#: What every call of the array functions passes: any dtype's elements move as raw bits.
RAW = {"directml_types": False}

# ---- arrays and dtypes ---------------------------------------------------------------------------


def cupy_in(values):
    """CuPy, where any of ``values`` is a CuPy array (then the call runs on the GPU), else None."""
    cupy = sys.modules.get("cupy")
    if cupy is not None and any(isinstance(v, cupy.ndarray) for v in values):
        return cupy
    return None


def as_arrays(values, name):
    """``values`` as arrays of one kind: CuPy arrays where any is one (lists and scalars made
    CuPy arrays), else NumPy arrays (``numpy.asarray``)."""
    cupy = cupy_in(values)
    if cupy is None:
        return [v if type(v) is np.ndarray else _plain(v, name) for v in values]
    arrays = []
    for v in values:
        if isinstance(v, np.ndarray):
            raise TypeError(f"{name}: the arrays mix NumPy and CuPy arrays; pass arrays of one kind")
        arrays.append(v if isinstance(v, cupy.ndarray) else cupy.asarray(v))
    return arrays


def _plain(value, name):
    """``numpy.asarray(value)``; a NumPy subclass but ``memmap`` (a masked array, a matrix) is
    refused, as the array functions refuse it: a plain result would drop its meaning. A traced
    array (``cudadml.fuse``) is taken as it is: its calls are recorded, not run."""
    if isinstance(value, np.ndarray) and not isinstance(value, np.memmap):
        raise TypeError(
            f"cudadml.numpy.{name}: a {type(value).__name__}, a NumPy subclass whose meaning (a mask, matrix "
            f"rules) a plain result would drop; use numpy.{name}, or pass numpy.asarray(...) of it"
        )
    if traced(value):
        return value
    return np.asarray(value)


def as_array(value, name):
    if type(value) is np.ndarray:
        return value
    cupy = sys.modules.get("cupy")
    if cupy is not None and type(value) is cupy.ndarray:
        return value
    return as_arrays([value], name)[0]


def traced(x):
    """Whether ``x`` is a traced array (``cudadml.fuse``): its calls are recorded as graph nodes."""
    return getattr(type(x), "__cudadml_traced__", False)


def exact(value):
    """Whether an argument is None, an int, or a tuple of ints or of tuples of ints, each of
    exactly that type: one a memo may key on by value (a float, bool or NumPy integer equal
    to an int hashes alike, but NumPy may read it otherwise, or refuse it)."""
    if type(value) is not tuple:
        return value is None or type(value) is int
    for v in value:  # (plain loops: every call checks its arguments)
        if type(v) is tuple:
            for w in v:
                if type(w) is not int:
                    return False
        elif type(v) is not int:
            return False
    return True


def run_operation(kind, x, operation):
    """``operation`` (of ``kind``, made once for the shapes and arguments of a call) on ``x`` by
    the array functions' one route (``run_call``: their adapters, their binding rules); the
    list of results. A traced array (``cudadml.fuse``) records it, or refuses it by name."""
    return run_call(kind, [x], None, lambda inputs: operation, None, None)


def on_host(value):
    """An argument that may be a CuPy array (a shift, widths) as NumPy takes it."""
    cupy = sys.modules.get("cupy")
    return cupy.asnumpy(value) if cupy is not None and isinstance(value, cupy.ndarray) else value


def new_array(like, shape, dtype):
    """A new array of ``like``'s kind (nothing is moved into it); for a traced array
    (``cudadml.fuse``), a traced value that nothing has been moved into."""
    if isinstance(like, np.ndarray):
        return np.empty(shape, dtype)
    if traced(like):
        return like.__cudadml_empty__(shape, dtype)
    return sys.modules["cupy"].empty(shape, dtype)


def words_of(dtype, name):
    """How the kernels move ``dtype``: None (as it is), or the width of the words its elements
    are moved as (one more, innermost, axis where an element is several)."""
    if dtype.kind in _AS_IS_KINDS and dtype.itemsize in AS_IS_SIZES and dtype.names is None:
        return None
    if dtype.hasobject:
        raise TypeError(
            f"cudadml.numpy.{name}: dtype {dtype} holds Python objects, which the kernels cannot move; use numpy.{name}"
        )
    if dtype.itemsize == 0:
        raise TypeError(f"cudadml.numpy.{name}: dtype {dtype} has elements of no bytes; use numpy.{name}")
    return next(w for w in WORD_SIZES if dtype.itemsize % w == 0)


def as_words(x, width):
    """``x`` as ``width``-byte words: a view (one more axis where an element is several words)."""
    if width is None:
        return x
    word = np.dtype(f"u{width}")
    if x.itemsize == width:
        return x.view(word)
    return x[..., None].view(word)  # NumPy only: CuPy has no such dtypes


def from_words(r, dtype, width):
    """The inverse of ``as_words``, for a result of the kernels (C-contiguous)."""
    if width is None:
        return r
    return r.view(dtype) if dtype.itemsize == width else r.view(dtype)[..., 0]


def rank_limit(dtype, name):
    """The most dimensions the kernels take for ``dtype``: DirectML's 8, less the axis of words
    that elements of more than 8 bytes (or moved as several words) take."""
    width = words_of(dtype, name)
    return MAX_DIMENSIONS - (dtype.itemsize > (width or 8))


def folding(keys):
    """Runs of consecutive axes that fold into one: an axis joins the previous one where their
    keys are equal and not None (None: the axis stays alone)."""
    groups = []
    for ax, key in enumerate(keys):
        if groups and key is not None and keys[groups[-1][-1]] == key:
            groups[-1].append(ax)
        else:
            groups.append([ax])
    return groups


def alone(ndim, axes):
    """The runs of axes a call that changes ``axes`` (pads or rolls them) folds into: each of
    ``axes`` alone, the runs of the others as one axis each."""
    return folding([None if ax in axes else "still" for ax in range(ndim)])


def in_passes(changed, runs, limit):
    """``changed`` (the axes a call flips, pads or rolls, in order) cut into passes of one launch
    each, each pass taking as many as it can while the runs of axes it folds into
    (``runs(axes)``, a set of axes) number at most ``limit``: so any rank runs, a pass per
    ``limit`` or so axes changed (each pass moves the whole array once)."""
    passes = [set()]
    for ax in changed:
        if passes[-1] and len(runs(passes[-1] | {ax})) > limit:
            passes.append(set())
        passes[-1].add(ax)
    return passes


def fold(x, groups):
    """``x`` with each run of ``groups`` one axis: a reshape (a view where the strides allow,
    else NumPy's or CuPy's copy), for arrays of more dimensions than the kernels take."""
    return x.reshape(tuple(math.prod(x.shape[a] for a in g) for g in groups))


def copy_of(x, name):
    """A new C-contiguous copy of ``x``, by one ``strided_slice``."""
    if x.size == 0:
        return new_array(x, x.shape, x.dtype)
    width = words_of(x.dtype, name)
    flat = x.ndim == 0 or x.ndim > rank_limit(x.dtype, name)  # copied as one axis
    r = strided_slice(as_words(x.reshape(-1) if flat else x, width), (), **RAW)
    r = from_words(r, x.dtype, width)
    return r.reshape(x.shape) if flat else r


# ---- past one DirectML buffer ----------------------------------------------------------------------
# DirectML's JOIN, SPLIT and SLICE_GRAD take tensors of at most MAX_ELEMENTS elements (sizes of 32
# bits); cudadml's index (``strided_slice``) and its gradient take any size, their kernels
# indexing in 64 bits. A call past that bound copies each array or part by the index instead: a
# launch per array rather than one, each moving billions of elements.


def past_one_buffer(shape, dtype):
    """Whether an array of ``shape`` and ``dtype`` (the words the kernels move; 16-byte
    elements count as the two words they move as) spans more than a DirectML buffer tensor."""
    return math.prod(shape) * max(dtype.itemsize // 8, 1) > MAX_ELEMENTS


def _placed(pieces, starts, target):
    """``target`` with each of ``pieces`` copied in at ``starts[k]`` on, by one ``strided_slice``
    each (the pieces past one DirectML buffer, as ``join_words`` places them)."""
    for piece, start in zip(pieces, starts):
        if piece.size:
            where = tuple(slice(a, a + n) for a, n in zip(start, piece.shape))
            strided_slice(piece, (), out=target[where], **RAW)
    return target


def join_words(raw, axis, out=None):
    """``cudadml.join`` of ``raw`` (arrays of one kernel word) along ``axis``, into ``out`` or new;
    past one DirectML buffer, each array placed into its part of the result (``_placed``)."""
    first = raw[0].shape
    shape = (*first[:axis], sum(x.shape[axis] for x in raw), *first[axis + 1 :])
    if not past_one_buffer(shape, raw[0].dtype):
        return join(raw, axis=axis, out=out, **RAW)
    starts, at = [], 0
    for x in raw:
        starts.append((0,) * axis + (at,) + (0,) * (x.ndim - axis - 1))
        at += x.shape[axis]
    return _placed(raw, starts, new_array(raw[0], shape, raw[0].dtype) if out is None else out)

"""NumPy's data-movement functions as drop-ins: ``import cudadml.numpy as cnp``.

``concatenate``, ``stack``, ``hstack``, ``vstack``, ``dstack``, ``column_stack``; ``split``,
``array_split``, ``hsplit``, ``vsplit``, ``dsplit``; ``flip``, ``fliplr``, ``flipud``; ``roll``;
``pad`` with ``mode="constant"``. Each has NumPy's name, signature, result (values, shape and
dtype) and exceptions, and takes NumPy arrays (run on the host backend), CuPy arrays (run by the
kernels on the GPU) and what ``numpy.asarray`` takes (lists, scalars). Each result is a new
C-contiguous array of the inputs' kind, made by cudadml's kernels through the array functions
of ``cudadml.run.arrays``, in one launch where the inputs share a dtype:

============================  =================================================================
``concatenate``, ``*stack``   one ``join`` (``stack``: of views with a new axis, no copies)
split family                  one ``split`` (overlapping sections, which NumPy allows: one
                              ``slice1_batch``); the parts are copies, views of one allocation
``flip``, ``fliplr/ud``       one ``strided_slice`` with negative steps (a copy, not a view)
``roll``                      one batch of strided copies, a job per block (``2**k`` of ``k``
                              rolled axes), their parameters passed by value
``pad`` (constant)            one pass of ``slice_grad``'s kernel with the constant (0 too) as
                              the fill it writes where the array does not land
============================  =================================================================

In a fused function (``cudadml.fuse``), whose calls are a graph's nodes, a roll of one axis is
one ``join`` of the two strided views and a pad of zeros one ``slice_grad``.

Arrays of any size the memory holds: past what one DirectML buffer tensor spans (2^32 - 1
elements, sizes of 32 bits), which DirectML's JOIN and SPLIT refuse, a join or split copies
each array or part by one ``strided_slice`` (a launch each); a flip, roll or pad, whose kernels
index in 64 bits, takes any size as it is.

What a call works out on the host (its arguments normalised as NumPy reads them, the
operation of its launch) is kept per call's arguments (shapes, dtypes, exact ints, the
constants' bytes), bounded with cudadml's other caches (``core.memory``): a call in a loop looks it
up. Constants are converted per call, with NumPy's warnings.

Dtypes follow NumPy: the result dtype is NumPy's ``result_type`` of the inputs, or ``dtype=``
(or ``out``'s), checked with ``numpy.can_cast`` under ``casting=``; inputs of another dtype are
converted first with their own ``astype`` (a launch of NumPy's or CuPy's per such input). The
kernels move raw bits, so every fixed-size dtype moves: bool, float16, complex, datetimes,
byte-swapped and structured dtypes, strings (dtypes of other than 1, 2, 4, 8 or 16 bytes move as
views of words with one more axis). Object dtypes are refused (``TypeError``). DirectML's
operators take up to 8 dimensions (7 for elements of 16 bytes or moved as several words):
arrays of more have the runs of axes that a call treats alike folded into one axis each (a
reshape: a view where the strides allow, else NumPy's or CuPy's copy first), and a flip, roll
or pad that still needs more (every other axis of a 10-dimensional array, every axis of an 8-D
complex128 array) runs in passes, a launch each, each changing as many of its axes as fold
into DirectML's dimensions: so every rank NumPy takes runs.
"""

from __future__ import annotations

from .flips import flip, fliplr, flipud
from .joins import column_stack, concatenate, dstack, hstack, stack, vstack
from .padding import pad
from .rolls import roll
from .splits import array_split, dsplit, hsplit, split, vsplit

__all__ = [
    "array_split",
    "column_stack",
    "concatenate",
    "dsplit",
    "dstack",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "pad",
    "roll",
    "split",
    "stack",
    "vsplit",
    "vstack",
]

for _name in __all__:  # shown as this module's: the name they are called by
    globals()[_name].__module__ = __name__

"""The worked examples of DirectML's SLICE, SLICE1, SLICE_GRAD and SPLIT pages (and JOIN as
SPLIT's first example inverted), as data.

Each example builds its descriptor, its input values and the output the page prints. The
self-check (``python -m cudadml``), the tests and the notebook all run these.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core.enums import TensorDataType
from .core.tensor import BufferTensorDesc
from .ops import JoinOperatorDesc, Slice1OperatorDesc, SliceGradOperatorDesc, SliceOperatorDesc, SplitOperatorDesc

__all__ = ["EXAMPLES", "Example"]

_F32 = TensorDataType.FLOAT32


def _t(*sizes):
    return BufferTensorDesc(_F32, sizes)


def _a(values, shape):
    return np.array(values, np.float32).reshape(shape)


@dataclass(frozen=True)
class Example:
    name: str
    desc: object
    inputs: tuple[np.ndarray, ...]
    expected: tuple[np.ndarray, ...]


def _example(name, desc, inputs, expected):
    """The ``Example`` of ``desc`` whose input and expected output arrays hold the values
    ``inputs`` and ``expected`` (one sequence each), each of its tensor's sizes."""

    def arrays(values, tensors):
        return tuple(_a(v, t.sizes) for v, t in zip(values, tensors, strict=True))

    return Example(name, desc, arrays(inputs, desc.input_tensors), arrays(expected, desc.output_tensors))


_GRID = range(1, 17)  # the 4x4 input of the SLICE and SLICE1 pages
_SPLIT_IN = range(1, 13)
_PARTS = ([1, 2, 3, 4], [5, 6], [7, 8, 9, 10, 11, 12])  # SPLIT example 1's, which JOIN joins
# SLICE_GRAD's page uses letters: a..p become 1..16, so [[a, c], [i, k]] is [[1, 3], [9, 11]].
_GRAD_IN = [1, 3, 9, 11]

EXAMPLES = (
    _example(
        "SLICE example 1 (contiguous)",
        SliceOperatorDesc(_t(1, 1, 4, 4), _t(1, 1, 3, 2), [0, 0, 1, 2], [1, 1, 3, 2], [1, 1, 1, 1]),
        [_GRID],
        [[7, 8, 11, 12, 15, 16]],
    ),
    _example(
        "SLICE example 2 (strided)",
        SliceOperatorDesc(_t(1, 1, 4, 4), _t(1, 1, 2, 2), [0, 0, 1, 0], [1, 1, 2, 2], [1, 1, 2, 3]),
        [_GRID],
        [[5, 8, 13, 16]],
    ),
    _example(
        "SLICE1 example 1 (positive strides)",
        Slice1OperatorDesc(_t(1, 1, 4, 4), _t(1, 1, 2, 2), [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, 2, 2]),
        [_GRID],
        [[2, 4, 10, 12]],
    ),
    _example(
        "SLICE1 example 2 (negative stride)",
        Slice1OperatorDesc(_t(1, 1, 4, 4), _t(1, 1, 2, 2), [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2]),
        [_GRID],
        [[14, 16, 6, 8]],
    ),
    _example(
        "SLICE_GRAD example",
        SliceGradOperatorDesc(_t(1, 1, 2, 2), _t(1, 1, 4, 4), [0, 0, 0, 0], [1, 1, 4, 4], [1, 1, 2, 2]),
        [_GRAD_IN],
        [[1, 0, 3, 0, 0, 0, 0, 0, 9, 0, 11, 0, 0, 0, 0, 0]],
    ),
    _example(
        "SPLIT example 1 (axis 2)",
        SplitOperatorDesc(_t(1, 1, 6, 2), [_t(1, 1, 2, 2), _t(1, 1, 1, 2), _t(1, 1, 3, 2)], axis=2),
        [_SPLIT_IN],
        _PARTS,
    ),
    _example(
        "SPLIT example 2 (axis 3)",
        SplitOperatorDesc(_t(1, 1, 6, 2), [_t(1, 1, 6, 1), _t(1, 1, 6, 1)], axis=3),
        [_SPLIT_IN],
        [[1, 3, 5, 7, 9, 11], [2, 4, 6, 8, 10, 12]],
    ),
    _example(
        "JOIN (SPLIT example 1 inverted)",
        JoinOperatorDesc([_t(1, 1, 2, 2), _t(1, 1, 1, 2), _t(1, 1, 3, 2)], _t(1, 1, 6, 2), axis=2),
        _PARTS,
        [_SPLIT_IN],
    ),
)

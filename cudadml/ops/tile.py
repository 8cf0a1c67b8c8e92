"""TILE: DirectML's ``DML_TILE_OPERATOR_DESC``.

One strided copy: each output axis seen as ``(repeat, element)``, the input read with stride 0
along the repeats; split along its outer axes where that passes the kernels' rank.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..core import operators
from ..core import plan as _plan
from ..core.enums import FeatureLevel, TensorDataType
from ..core.tensor import BufferTensorDesc

_L, _T = FeatureLevel, TensorDataType


@dataclass(frozen=True, repr=False)
class TileOperatorDesc(operators.OperatorDesc):
    """``DML_TILE_OPERATOR_DESC``: the input repeated ``repeats[i]`` times along each dimension.

    ``OutputTensor.Sizes[i] = InputTensor.Sizes[i] * Repeats[i]``; output element ``c`` is
    input element ``c mod InputTensor.Sizes``, as NumPy's tile gives it.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read.
    output_tensor : BufferTensorDesc
        The tensor written.
    repeats : sequence of int
        Per dimension, at least 1: how many copies along it (RepeatsCount is its length).
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> tile = cd.TileOperatorDesc(cd.BufferTensorDesc(f32, [1, 1, 2, 3]), cd.BufferTensorDesc(f32, [1, 1, 6, 9]),
    ...                            [1, 1, 3, 3])
    >>> tile.output_tensor.sizes
    (1, 1, 6, 9)
    """

    NAME = "Tile"
    SUPPORT = operators.OperatorSupport(
        _L.LEVEL_1_0,
        ((_L.LEVEL_1_0, 4, 4), (_L.LEVEL_3_1, 1, 8)),
        (
            (_L.LEVEL_1_0, frozenset({_T.FLOAT32, _T.FLOAT16})),
            (_L.LEVEL_2_1, operators.TYPES_2_1),
            (_L.LEVEL_4_1, operators.TYPES_2_1 | {_T.INT64, _T.UINT64}),  # no FLOAT64, as DirectML's table
        ),
    )
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    repeats: tuple[int, ...] = field(metadata=operators.UINT32_ARRAY)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    def _validate(self, v):
        for i, (n, r, out) in self._dims("input_tensor", "repeats", "output_tensor"):
            if r < 1:
                v.add(f"Repeats[{i}] = {r} must be at least 1")
            elif out != n * r:
                v.add(f"OutputTensor.Sizes[{i}] = {out} must equal InputTensor.Sizes[{i}] * Repeats[{i}] = {n * r}")

    def pieces(self, port: int) -> list:
        """{pieces}

        TILE's: one piece per tile, each the input whole.

        {pieces parameters}

        {pieces returns}
        """
        tiles = [[(k * n, 1, n, 0, 1) for k in range(r)] for n, r in zip(self.input_tensor.sizes, self.repeats)]
        return [(0, dims) for dims in itertools.product(*tiles)]

    def _lower(self, input_strides, output_strides):
        sizes, reads, writes = [], [], []
        for n, r, i, o in zip(self.input_tensor.sizes, self.repeats, input_strides[0], output_strides[0]):
            sizes += [r, n]
            reads += [0, i]
            writes += [n * o, o]
        job = _plan.CopyJob(0, 0, tuple(sizes), tuple(reads), tuple(writes), 0, 0)
        size = self.input_tensor.data_type.element_size
        return _plan.CopyPlan(size, tuple(_plan.best_walk(j, size) for j in _plan.within_rank(job)))

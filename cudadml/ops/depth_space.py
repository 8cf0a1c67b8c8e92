"""SPACE_TO_DEPTH1 and DEPTH_TO_SPACE1: DirectML's ``DML_SPACE_TO_DEPTH1_OPERATOR_DESC`` and
``DML_DEPTH_TO_SPACE1_OPERATOR_DESC``.

Each is one strided copy: the space side ``{N, C, H, W}`` seen as ``{N, C, H / B, B, W / B, B}``
and the depth side ``{N, C * B * B, H / B, W / B}`` as its channels split by the order, the same
six axes walked on both sides (``_six_axes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core import operators
from ..core import plan as _plan
from ..core.enums import DepthSpaceOrder, FeatureLevel
from ..core.errors import as_int
from ..core.tensor import BufferTensorDesc

_L = FeatureLevel
SUPPORT = operators.OperatorSupport(
    _L.LEVEL_2_1, ((_L.LEVEL_2_1, 4, 4),), ((_L.LEVEL_2_1, operators.TYPES_2_1), (_L.LEVEL_5_0, operators.TYPES_4_1))
)


def _six_axes(order, block, space_sizes, space_strides, depth_strides):
    """``(sizes, space strides, depth strides)`` over the six axes ``(n, r, q, c, h, w)``: cell
    ``(r, q)`` of the block at ``(h, w)`` of channel ``c`` of space, and its channel of depth."""
    n, c, _, _ = space_sizes
    sn, sc, sh, sw = space_strides
    dn, dc, dh, dw = depth_strides
    if order == DepthSpaceOrder.DEPTH_COLUMN_ROW:  # depth channel (r * B + q) * C + c
        dr, dq, dcc = block * c * dc, c * dc, dc
    else:  # c * B * B + r * B + q
        dr, dq, dcc = block * dc, dc, block * block * dc
    h, w = space_sizes[2] // block, space_sizes[3] // block
    sizes = (n, block, block, c, h, w)
    return sizes, (sn, sh, sw, sc, block * sh, block * sw), (dn, dr, dq, dcc, dh, dw)


class DepthSpaceRules(operators.OperatorDesc):
    """What SPACE_TO_DEPTH1 and DEPTH_TO_SPACE1 share: ``block_size`` and ``order``, the sizes
    rule between the space side (``_SPACE``, a tensor field) and the depth side, and the copy."""

    _SPACE = ""

    def __post_init__(self):
        object.__setattr__(self, "block_size", as_int(self.block_size, "BlockSize", self.NAME))
        object.__setattr__(self, "order", DepthSpaceOrder.coerce(self.order))
        super().__post_init__()

    @property
    def _sides(self):
        """``(space, depth)``: the tensor of each side."""
        depth = "output_tensor" if self._SPACE == "input_tensor" else "input_tensor"
        return getattr(self, self._SPACE), getattr(self, depth)

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, block_size={self.block_size}, order={self.order.name})"

    def _validate(self, v):
        b = self.block_size
        if b < 1:
            v.add(f"BlockSize = {b} must be at least 1")
            return
        space, depth = self._sides
        if space.dimension_count != 4 or depth.dimension_count != 4:
            return  # the shared rules report it
        if self._SPACE == "input_tensor":  # the space side given: its height and width split into blocks
            n, c, h, w = space.sizes
            uneven = [(i, space.sizes[i]) for i in (2, 3) if space.sizes[i] % b]
            for i, size in uneven:
                v.add(f"InputTensor.Sizes[{i}] = {size} is not a multiple of BlockSize = {b}")
            rule, made, want = (
                "{N, C * BlockSize^2, H / BlockSize, W / BlockSize}",
                depth,
                (n, c * b * b, h // b, w // b),
            )
        else:  # the depth side given: its channels hold the blocks' cells
            n, c, h, w = depth.sizes
            uneven = [(1, c)] if c % (b * b) else []
            for i, size in uneven:
                v.add(f"InputTensor.Sizes[{i}] = {size} is not a multiple of BlockSize^2 = {b * b}")
            rule, made, want = (
                "{N, C / BlockSize^2, H * BlockSize, W * BlockSize}",
                space,
                (n, c // (b * b), h * b, w * b),
            )
        if not uneven and made.sizes != want:
            v.add(f"OutputTensor.Sizes = {made.sizes} must be {want}: {rule} of InputTensor.Sizes")

    def _lower(self, input_strides, output_strides):
        space_is_input = self._SPACE == "input_tensor"
        space_strides = input_strides[0] if space_is_input else output_strides[0]
        depth_strides = output_strides[0] if space_is_input else input_strides[0]
        space = self._sides[0]
        sizes, by_space, by_depth = _six_axes(self.order, self.block_size, space.sizes, space_strides, depth_strides)
        reads, writes = (by_space, by_depth) if space_is_input else (by_depth, by_space)
        job = _plan.CopyJob(0, 0, sizes, reads, writes, 0, 0)
        return _plan.CopyPlan(space.data_type.element_size, (_plan.best_walk(job, space.data_type.element_size),))


@dataclass(frozen=True, repr=False)
class SpaceToDepth1OperatorDesc(DepthSpaceRules):
    """``DML_SPACE_TO_DEPTH1_OPERATOR_DESC``: blocks of height and width moved into the channels.

    Blocks of ``block_size`` x ``block_size`` cells, as YOLOv5's Focus and PyTorch's
    pixel_unshuffle move them.

    ``{N, C, H, W}`` becomes ``{N, C * B * B, H / B, W / B}``; output element
    ``[n, c', h, w]`` is input element ``[n, c, h * B + r, w * B + q]``, with ``c'`` from
    ``(r, q, c)`` by ``order``.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read, ``{N, C, H, W}``.
    output_tensor : BufferTensorDesc
        The tensor written, ``{N, C * B * B, H / B, W / B}``.
    block_size : int
        ``B``: the height and the width of a block; it divides H and W.
    order : DepthSpaceOrder, int or str
        Where a block's cells go among the channels.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> space, depth = cd.BufferTensorDesc(f32, [1, 2, 4, 6]), cd.BufferTensorDesc(f32, [1, 8, 2, 3])
    >>> s2d = cd.SpaceToDepth1OperatorDesc(space, depth, 2, cd.DepthSpaceOrder.DEPTH_COLUMN_ROW)
    >>> s2d.output_tensor.sizes
    (1, 8, 2, 3)
    """

    NAME = "SpaceToDepth1"
    SUPPORT = SUPPORT
    _SPACE = "input_tensor"
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    block_size: int
    order: DepthSpaceOrder
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)


@dataclass(frozen=True, repr=False)
class DepthToSpace1OperatorDesc(DepthSpaceRules):
    """``DML_DEPTH_TO_SPACE1_OPERATOR_DESC``: the channels' blocks moved into height and width.

    The inverse of SPACE_TO_DEPTH1, as PyTorch's pixel_shuffle and ONNX's DepthToSpace.

    ``{N, C * B * B, H, W}`` becomes ``{N, C, H * B, W * B}``; output element
    ``[n, c, h * B + r, w * B + q]`` is input element ``[n, c', h, w]``, with ``c'`` from
    ``(r, q, c)`` by ``order``.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read, ``{N, C * B * B, H, W}``.
    output_tensor : BufferTensorDesc
        The tensor written, ``{N, C, H * B, W * B}``.
    block_size : int
        ``B``: the height and the width of a block.
    order : DepthSpaceOrder, int or str
        Where a block's cells lie among the channels.
    {feature_level}

    Raises
    ------
    {raises}

    {examples}
    >>> depth, space = cd.BufferTensorDesc(f32, [1, 8, 2, 3]), cd.BufferTensorDesc(f32, [1, 2, 4, 6])
    >>> d2s = cd.DepthToSpace1OperatorDesc(depth, space, 2, "column_row_depth")
    >>> d2s.order
    <DepthSpaceOrder.COLUMN_ROW_DEPTH: 1>
    """

    NAME = "DepthToSpace1"
    SUPPORT = SUPPORT
    _SPACE = "output_tensor"
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    block_size: int
    order: DepthSpaceOrder
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

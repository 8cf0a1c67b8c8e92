"""``cudadml.numpy.pad``'s operation: a constant pad, SLICE_GRAD that writes a fill, or PADDING
in a mode that moves data (edge, reflect, symmetric, wrap).

cudadml's own, with no array function of its own: an array placed in a larger one, every other
element the constant (one pass of SLICE_GRAD's kernel) or copies of the array's elements as
the mode reads them (PADDING's copies). Registered as ``OPERATOR`` with the rules it has beyond
its call: its messages, and why a graph does not hold it.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from ..core import messages, operators
from ..core.calls import Description, data_type
from ..core.enums import FeatureLevel, PaddingMode
from ..core.tensor import BufferTensorDesc, beyond_directml_bounds
from .padding import PaddingOperatorDesc
from .slice_grad import SliceGradOperatorDesc


@dataclasses.dataclass(frozen=True, repr=False)
class FilledSliceGradOperatorDesc(SliceGradOperatorDesc):
    """SLICE_GRAD whose elements the window does not read receive ``fill`` (``plan.fill_pattern``
    of one element) instead of 0: ``pad``'s constant, written by the same one pass."""

    fill: bytes = dataclasses.field(default=bytes(16), kw_only=True)

    def _lower(self, input_strides, output_strides):
        return dataclasses.replace(super()._lower(input_strides, output_strides), fill=self.fill)


@dataclasses.dataclass(frozen=True, repr=False)
class NumpyPaddingOperatorDesc(PaddingOperatorDesc):
    """PADDING as NumPy's pad reads it: REFLECTION of a one-element axis repeats the element."""

    REFLECTS_ONE_ELEMENT = True


class Pad(NamedTuple):
    """The operation of a ``pad`` (as ``cudadml.core.calls``' operations are): ``x`` placed at
    ``before`` in an array of ``shape``, with ``fill`` elsewhere (``mode`` CONSTANT), or the
    elements ``mode`` reads there."""

    shape: tuple
    before: tuple
    fill: bytes
    mode: PaddingMode = PaddingMode.CONSTANT
    feature_level: FeatureLevel = FeatureLevel.newest()
    directml_types: bool = False

    function = "pad"
    ARGUMENT = "array"
    NAME = "pad"

    def descriptor(self, dtype, shapes):
        (x_shape,) = shapes
        t = data_type(dtype, self.directml_types)
        with beyond_directml_bounds():  # cudadml's own call, of any size (its kernel indexes in 64 bits)
            if self.mode != PaddingMode.CONSTANT:
                after = tuple(m - n - b for m, n, b in zip(self.shape, x_shape, self.before))
                tensors = BufferTensorDesc(t, x_shape), BufferTensorDesc(t, self.shape)
                desc = NumpyPaddingOperatorDesc(
                    *tensors, self.mode, 0.0, self.before, after, feature_level=self.feature_level
                )
                return Description(desc, (self.shape,))
            desc = FilledSliceGradOperatorDesc(
                BufferTensorDesc(t, x_shape),
                BufferTensorDesc(t, self.shape),
                self.before,
                x_shape,
                (1,) * len(x_shape),
                fill=self.fill,
                feature_level=self.feature_level,
            )
        return Description(desc, (self.shape,))

    def words(self):
        """The same pad on 16-byte elements seen as pairs of 8-byte words (the pattern is the
        element itself: word ``x % 2`` of it at innermost coordinate ``x``)."""
        return self._replace(shape=(*self.shape, 2), before=(*self.before, 0))


def _messages(op, shapes, window, given):
    """SLICE_GRAD's names in the words of a pad (``messages.fields``): the array read, placed
    whole at the widths before it in the padded result."""
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **messages.array("InputGradientTensor", "array"),
        **messages.derived("OutputGradientTensor", **{".Sizes[{i}]": "the padded shape[{i}]"}),
        "InputWindowOffsets[{i}]": "the width before axis {i}",
        "InputWindowSizes[{i}]": "array.shape[{i}]",
        "InputWindowStrides[{i}]": None,
        "DimensionCount": "array.ndim",
        **messages.bindings("array", "out"),
    }


OPERATOR = operators.register(
    operators.Operator(
        "pad",
        Pad,
        FilledSliceGradOperatorDesc,
        messages=_messages,
        not_a_node="pad with a constant other than 0 writes the constant, which no graph node does (SLICE_GRAD's "
        "gaps are zeros), and its other modes run apart from the graph; pad with 0 in the fused function, or call "
        "pad outside it",
    )
)

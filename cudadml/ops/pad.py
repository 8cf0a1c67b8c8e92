"""A constant pad: ``cudadml.numpy.pad``'s operation, SLICE_GRAD that writes a fill.

cudadml's own, with no array function of its own: an array placed in a larger one, every other
element the constant, by one pass of SLICE_GRAD's kernel. Registered as ``OPERATOR`` with the
one rule it has beyond its call: its messages.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from ..core import messages, operators
from ..core.calls import Description, data_type
from ..core.enums import FeatureLevel
from ..core.tensor import BufferTensorDesc, beyond_directml_bounds
from .slice_grad import SliceGradOperatorDesc


@dataclasses.dataclass(frozen=True, repr=False)
class FilledSliceGradOperatorDesc(SliceGradOperatorDesc):
    """SLICE_GRAD whose elements the window does not read receive ``fill`` (``plan.fill_pattern``
    of one element) instead of 0: ``pad``'s constant, written by the same one pass."""

    fill: bytes = dataclasses.field(default=bytes(16), kw_only=True)

    def _lower(self, input_strides, output_strides):
        return dataclasses.replace(super()._lower(input_strides, output_strides), fill=self.fill)


class Pad(NamedTuple):
    """The operation of a constant ``pad`` (as ``cudadml.core.calls``' operations are): ``x`` placed
    at ``before`` in an array of ``shape`` filled with ``fill`` elsewhere."""

    shape: tuple
    before: tuple
    fill: bytes
    feature_level: FeatureLevel = FeatureLevel.newest()
    directml_types: bool = False

    function = "pad"
    ARGUMENT = "array"
    NAME = "pad"

    def descriptor(self, dtype, shapes):
        (x_shape,) = shapes
        t = data_type(dtype, self.directml_types)
        with beyond_directml_bounds():  # cudadml's own call, of any size (its kernel indexes in 64 bits)
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
        "gaps are zeros); pad with 0 in the fused function, or call pad outside it",
    )
)

"""What every operator shares: the descriptor base, the support tables and the registry.

An operator is its fields, its rules and its lowering. Each field carries its role as its
dataclass metadata (``field(metadata=INPUT)``, ``field(metadata=UINT32_ARRAY)``, ...). From the
roles, the base class ``OperatorDesc`` normalises the fields (``TypeError`` for a wrong type),
finds the input and output tensors, and checks the rules every operator shares: feature level,
dimension counts and data types, array lengths and ranges, axis range, output tensors. The
operator adds its own rules (``_validate``), its lowering to a plan (``_lower``) and its
support (``SUPPORT``). Construction raises one ``DescriptorError`` listing every broken rule;
only a rule that needs a value another rule found unusable (an array of the wrong length, a
tensor of another dimension count) is skipped.

Each operator is defined, whole, in its module of ``cudadml.ops`` (descriptor, normalised call,
gradient, batching, chunking, picture and messages), which registers an ``Operator`` record
here; the adapters, the pictures and the tests find every operator through ``REGISTRY``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import cached_property
from types import MappingProxyType

from . import hooks, memory
from . import plan as _plan
from .enums import FeatureLevel, TensorDataType, TensorFlags
from .errors import Violations, as_int, int_tuple
from .indexing import window_reach, window_start
from .overlap import overlaps_itself
from .tensor import BOUNDS_RULE, UINT32_MAX, BufferTensorDesc, tensor_text

__all__ = ["REGISTRY", "Chunking", "Operator", "OperatorDesc", "OperatorSupport", "Picture", "register"]

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_L = FeatureLevel
_T = TensorDataType
TYPES_1_0 = frozenset({_T.FLOAT32, _T.FLOAT16, _T.INT32, _T.INT16, _T.UINT32, _T.UINT16})
TYPES_2_1 = TYPES_1_0 | {_T.INT8, _T.UINT8}
TYPES_4_1 = TYPES_2_1 | {_T.FLOAT64, _T.INT64, _T.UINT64}


@dataclass(frozen=True)
class OperatorSupport:
    """What an operator supports, as steps over feature levels (each entry holds from its level on)."""

    introduced: FeatureLevel
    dimension_counts: tuple[tuple[FeatureLevel, int, int], ...]
    data_types: tuple[tuple[FeatureLevel, frozenset], ...]

    def dimension_range(self, level: FeatureLevel) -> tuple[int, int]:
        return [(lo, hi) for since, lo, hi in self.dimension_counts if since <= level][-1]

    def types(self, level: FeatureLevel) -> frozenset:
        return [types for since, types in self.data_types if since <= level][-1]


#: The data types of SLICE, SPLIT and JOIN per level (SLICE1 and SLICE_GRAD appear later).
SLICE_TYPES = ((_L.LEVEL_1_0, TYPES_1_0), (_L.LEVEL_2_1, TYPES_2_1), (_L.LEVEL_4_1, TYPES_4_1))


@dataclass(frozen=True)
class Chunking:
    """Which Dask graph an operator's call has (``Operator.chunked``), which the Dask adapter
    builds, and ``piece``: the operation on one piece, a plain function of the call's operation
    and what the graph's kind gives (none for many windows, each run of them one task).

    ``kind``: "window" (its operation's ``windows`` and ``axis_map``: ``piece(operation,
    windows, rank)``), "gradient" (a window's gradient, its operation's ``windows_for(dy_shape)``:
    ``piece(operation, extents, steps, counts, dy_shape)``), "split" or "join" (parts along
    ``operation.axis``: ``piece(operation, counts)``) or "windows" (many windows)."""

    kind: str
    piece: Callable | None = None


@dataclass(frozen=True)
class Picture:
    """Which picture ``explain`` draws of an operator's call or descriptor (``Operator.picture``),
    from its geometry: ``kind``, "gather" (the cells a window reads, its operation's
    ``windows``), "scatter" (where a gradient lands, its operation's ``windows_for(dy_shape)``),
    "split" or "join" (the parts along the axis) or "batch" (many windows, whose descriptor's
    windows are data, not drawn). A batch's call is its operator's own: ``drawn(shapes, one,
    arguments, dtype)`` validates it as its function does (the shapes of its first argument,
    ``one`` an array, else a list of them, and the others in the function's order, for arrays
    of ``dtype``) and gives ``(title, grid shape, operation, counts, legend)``."""

    kind: str
    drawn: Callable | None = None


@dataclass(frozen=True)
class Operator:
    """One operator's pieces, registered by its module of ``cudadml.ops``.

    ``name``: its array function; ``call``: the normalised call (``of``, ``descriptor``,
    ``words``); ``desc``: the descriptor it builds (None: it builds another's). The rules the
    layers above read (None where the operator has none):

    * ``gradient(op, shapes, grads) -> (operation, grads)``: the gradient as a call of the
      family (PyTorch's autograd, ``cd.fuse``);
    * ``batched(op, size) -> operation``: the same call on a leading batch axis (``vmap``);
    * ``torch_schema``: the fields of its ``torch.ops.cudadml`` operator;
    * ``via(op) -> (operation, counts)``: for an operator without a torch operator of its own,
      the operation of one that runs it, on its array viewed as ``counts`` (an index runs as
      SLICE1 or SLICE_GRAD of its windows);
    * ``chunked``: which Dask graph its call has, with its operation on one piece (a
      ``Chunking``: data the Dask adapter builds from);
    * ``picture``: which picture ``explain`` draws of it (a ``Picture``: data the display
      draws from);
    * ``messages(op, shapes, window, given)``: its table of DirectML's names in the caller's
      words (``messages.fields``);
    * ``not_a_node``: why a graph cannot hold its call, in the words ``cd.fuse`` refuses it
      with (None: its descriptor is a graph node).
    """

    name: str
    call: type
    desc: type | None = None
    gradient: Callable | None = None
    batched: Callable | None = None
    torch_schema: str | None = None
    via: Callable | None = None
    chunked: Chunking | None = None
    picture: Picture | None = None
    messages: Callable | None = None
    not_a_node: str | None = None


#: Every operator, by array function name, in the order registered.
REGISTRY: dict[str, Operator] = {}


def register(operator: Operator) -> Operator:
    """Add ``operator`` to ``REGISTRY`` (its module does, once, at import)."""
    if operator.name in REGISTRY:
        raise ValueError(f"operator {operator.name!r} is registered twice")
    REGISTRY[operator.name] = operator
    return operator


def _type_names(types) -> str:
    return ", ".join(t.name for t in sorted(types, key=lambda t: t.name))


@dataclass(frozen=True)
class Role:
    """What a descriptor field holds, and so how the base class reads and checks it."""

    kind: str  # "tensor", "tensors" (a sequence of them), "array" (an integer per dimension) or "axis"
    output: bool = False  # tensors: written by the operator
    entry: str = ""  # arrays: what each entry must be, between low and high
    low: int = 0
    high: int = 0


def _metadata(*args, **kwargs):
    return MappingProxyType({"role": Role(*args, **kwargs)})


# A field's role, as its dataclass metadata: ``input_tensor: BufferTensorDesc = field(metadata=INPUT)``.
INPUT = _metadata("tensor")
OUTPUT = _metadata("tensor", output=True)
INPUTS = _metadata("tensors")
OUTPUTS = _metadata("tensors", output=True)
UINT32_ARRAY = _metadata("array", entry="an unsigned 32-bit value", low=0, high=UINT32_MAX)
INT32_ARRAY = _metadata("array", entry="a signed 32-bit value", low=INT32_MIN, high=INT32_MAX)
AXIS = _metadata("axis")


def directml_name(attr: str) -> str:
    """The DirectML name of a field: ``input_window_offsets`` is ``InputWindowOffsets``."""
    return "".join(word.capitalize() for word in attr.split("_"))


@memory.cache(256)  # (per descriptor class)
def roles(cls) -> tuple[tuple[str, str, Role], ...]:
    """``(attribute, DirectML name, role)`` of every field of ``cls`` with a role, in order."""
    return tuple((f.name, directml_name(f.name), f.metadata["role"]) for f in fields(cls) if "role" in f.metadata)


def _tensor(value, name, where) -> BufferTensorDesc:
    if not isinstance(value, BufferTensorDesc):
        raise TypeError(f"{where}: {name} must be a BufferTensorDesc, not {type(value).__name__}")
    return value


def _normalised(role: Role, value, name: str, where: str):
    """A field's value as the descriptor keeps it; ``TypeError`` naming the field for a wrong type."""
    if role.kind == "tensor":
        return _tensor(value, name, where)
    if role.kind == "tensors":
        if isinstance(value, (BufferTensorDesc, str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{where}: {name} must be a sequence of BufferTensorDesc, not {type(value).__name__}")
        return tuple(_tensor(t, f"{name}[{k}]", where) for k, t in enumerate(value))
    if role.kind == "axis":
        return as_int(value, name, where)
    return int_tuple(value, name, where)


# The docstring entries every operator shares, filled in by ``OperatorDesc.__init_subclass__``.
_SHARED_DOC = {
    "{feature_level}": """feature_level : FeatureLevel, int or str, optional
    The level to validate against (default: the newest).""",
    "{raises}": """DescriptorError
    Listing every broken rule.
TypeError
    For a field of the wrong type (a float offset, a tensor that is not a ``BufferTensorDesc``).""",
}


class OperatorDesc:
    """What every operator shares: normalising its fields, the shared rules, its tensors and
    ``compile()``. An operator is a frozen dataclass deriving from it that sets ``NAME`` and
    ``SUPPORT`` (an ``OperatorSupport``), declares its fields with their roles and ``feature_level``, and
    implements ``_validate`` (its own rules) and ``_lower`` (its plan).
    """

    NAME = ""
    SUPPORT: OperatorSupport

    def __init_subclass__(cls, **kwargs):
        """Fill in the docstring sections every operator shares."""
        super().__init_subclass__(**kwargs)
        for placeholder, text in _SHARED_DOC.items():
            cls.__doc__ = (cls.__doc__ or "").replace(placeholder, text.replace("\n", "\n    "))

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "feature_level", FeatureLevel.coerce(self.feature_level))
        for attr, name, role in roles(type(self)):
            set_(self, attr, _normalised(role, getattr(self, attr), name, self.NAME))
        v = Violations(self.NAME)
        self._check_shared(v)
        self._validate(v)
        v.raise_if_any()

    @cached_property
    def _tensors(self) -> tuple[tuple[str, BufferTensorDesc, bool], ...]:
        """``(DirectML name, tensor, is an output)`` of every tensor, in field order."""
        named = []
        for attr, name, role in roles(type(self)):
            value = getattr(self, attr)
            if role.kind == "tensor":
                named.append((name, value, role.output))
            elif role.kind == "tensors":
                named.extend((f"{name}[{k}]", t, role.output) for k, t in enumerate(value))
        return tuple(named)

    # Not properties: SPLIT's ``output_tensors`` and JOIN's ``input_tensors`` are fields, and
    # an instance's own value of a field wins over a cached_property of the same name.
    @cached_property
    def input_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The input tensors, in binding order."""
        return tuple(t for _, t, output in self._tensors if not output)

    @cached_property
    def output_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The output tensors, in binding order."""
        return tuple(t for _, t, output in self._tensors if output)

    @property
    def dimension_count(self) -> int:
        """DimensionCount: that of the first tensor, which every other tensor and array must match."""
        return self._tensors[0][1].dimension_count

    def _check_shared(self, v: Violations) -> None:
        """The rules every operator shares, read from the roles of its fields."""
        level, support = self.feature_level, self.SUPPORT
        introduced = level >= support.introduced
        if not introduced:
            v.add(f"the operator needs feature level {support.introduced} or newer; got {level}")
        else:  # the supported counts and types exist from the operator's level on
            lo, hi = support.dimension_range(level)
            types = support.types(level)
        tensors = self._tensors
        first_name, first = tensors[0][:2]
        n = first.dimension_count
        for k, (name, tensor, output) in enumerate(tensors):
            if introduced and not lo <= tensor.dimension_count <= hi:
                allowed = f"{lo}" if lo == hi else f"{lo} to {hi}"
                v.add(
                    f"{name}.DimensionCount = {tensor.dimension_count} is not supported at feature level "
                    f"{level} (supported: {allowed})"
                )
            if introduced and tensor.data_type not in types:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} is not supported at feature level "
                    f"{level} (supported: {_type_names(types)})"
                )
            if k and tensor.data_type != first.data_type:
                v.add(
                    f"{name}.DataType = {tensor.data_type.name} differs from "
                    f"{first_name}.DataType = {first.data_type.name}"
                )
            if k and tensor.dimension_count != n:
                v.add(
                    f"{name}.DimensionCount = {tensor.dimension_count} differs from {first_name}.DimensionCount = {n}"
                )
            if output:
                check_output(v, name, tensor)
        for attr, name, role in roles(type(self)):
            value = getattr(self, attr)
            if role.kind == "tensors" and not value:
                v.add(f"{name.replace('Tensors', 'Count')} = 0 must be greater than 0")
            elif role.kind == "array":
                if len(value) != n:
                    v.add(f"len({name}) = {len(value)} must equal DimensionCount = {n}")
                for i, entry in enumerate(value):
                    # Beyond DirectML's bounds (BOUNDS_RULE) only an unsigned array's sign holds.
                    if not role.low <= entry <= role.high and (BOUNDS_RULE.get() or entry < 0 <= role.low):
                        v.add(f"{name}[{i}] = {entry} must be {role.entry} ({role.low} to {role.high})")
            elif role.kind == "axis" and not 0 <= value < n:
                v.add(f"{name} = {value} must be in [0, {n - 1}] (DimensionCount = {n})")

    def _dims(self, *attrs) -> list[tuple[int, tuple[int, ...]]]:
        """``(i, values)`` for each dimension ``i``, with per named field an array's entry ``i``
        or a tensor's ``Sizes[i]``; empty when a field has not one per dimension (the shared
        rules report that), so the rule asking is skipped."""
        columns = [getattr(self, attr) for attr in attrs]
        columns = [c.sizes if isinstance(c, BufferTensorDesc) else c for c in columns]
        if any(len(c) != self.dimension_count for c in columns):
            return []
        return list(enumerate(zip(*columns)))

    def _validate(self, v: Violations) -> None:
        """The operator's own rules (none by default); each broken one is added to ``v``."""

    def to_plan(self, input_strides=None, output_strides=None):
        """Lower to a plan. Strides (signed, in elements) default to the tensors' own;
        the array layer passes the strides of the arrays it binds."""
        if input_strides is None:
            input_strides = [t.effective_strides for t in self.input_tensors]
        if output_strides is None:
            output_strides = [t.effective_strides for t in self.output_tensors]
        return self._lower(list(input_strides), list(output_strides))

    def _lower(self, input_strides, output_strides):
        raise NotImplementedError

    def __repr__(self) -> str:
        fields = [
            f"{attr}={getattr(self, attr)}" for attr, _, role in roles(type(self)) if role.kind in ("array", "axis")
        ]
        if self.feature_level != FeatureLevel.newest():
            fields.append(f"feature_level={self.feature_level}")
        return f"{type(self).__name__}({', '.join([desc_summary(self), *fields])})"

    def _repr_html_(self) -> str | None:
        picture = hooks.picture(self)
        return None if picture is None else picture._repr_html_()

    def compile(self, device: int | None = None) -> CompiledOperator:  # noqa: F821 (the class is provided: hooks)
        """Compile for execution: returns a ``CompiledOperator``.

        Parameters
        ----------
        device : int, optional
            CUDA device for CuPy bindings; the current device when omitted.
        """
        return hooks.compile(self, device=device)


def check_output(v: Violations, name: str, tensor: BufferTensorDesc) -> None:
    """The rules of a tensor the operator writes: not owned by DirectML, and no element of it
    at another one's address (an output must not overlap itself; inputs may)."""
    if tensor.flags & TensorFlags.OWNED_BY_DML:
        v.add(f"{name}.Flags has OWNED_BY_DML, which only input tensors may have")
    if tensor.strides is None:
        return  # packed
    zero = [i for i, (size, stride) in enumerate(zip(tensor.sizes, tensor.strides)) if stride == 0 and size > 1]
    for i in zero:
        v.add(f"{name}.Strides[{i}] = 0 with Sizes[{i}] = {tensor.sizes[i]} would make the output overlap itself")
    itemsize = tensor.data_type.element_size
    if not zero and overlaps_itself(tensor.sizes, [s * itemsize for s in tensor.strides], itemsize):
        v.add(
            f"{name}.Strides = {tensor.strides} with Sizes = {tensor.sizes} would make the output overlap itself "
            "(two indices reach one element)"
        )


class GatherDesc:
    """What the descriptors whose output reads one window of ``input_tensor``, element for
    element, share (SLICE's and SLICE1's): given their ``windows``, one strided copy."""

    def _lower(self, input_strides, output_strides):
        return _plan.plan_slice(
            self.input_tensor.data_type.element_size, self.windows, input_strides[0], output_strides[0]
        )


def window_support(introduced, any_rank):
    """The support of SLICE1's window, which SLICE_GRAD shares from a later level: from
    ``introduced``, 4 or 5 dimensions (1 to 8 from ``any_rank``) and the types of 1, 2 and 4
    bytes (of 8 from 4_1)."""
    return OperatorSupport(
        introduced,
        ((introduced, 4, 5), (any_rank, 1, 8)),
        ((introduced, TYPES_2_1), (FeatureLevel.LEVEL_4_1, TYPES_4_1)),
    )


class WindowDesc(OperatorDesc):
    """SLICE1's window (``input_window_offsets``, ``_sizes``, ``_strides``) and its rules, which
    SLICE_GRAD shares with its tensors in other roles: the window lies in ``_SOURCE`` (a tensor
    field), and ``_RESULT``'s sizes count the elements taken along each dimension."""

    _SOURCE = _RESULT = ""  # tensor fields, named by each operator

    @property
    def copy_start(self) -> tuple[int, ...]:
        """Where the copy starts in each dimension (the window's end for negative strides)."""
        return tuple(map(window_start, self.input_window_offsets, self.input_window_sizes, self.input_window_strides))

    @property
    def windows(self) -> tuple[tuple[int, int, int], ...]:
        """Per dimension ``(start, step, count)``: element ``c`` of ``_RESULT`` pairs with
        element ``start + step * c`` of ``_SOURCE`` (what the plan lowers, and what pictures draw)."""
        counts = getattr(self, self._RESULT).sizes
        return tuple(zip(self.copy_start, self.input_window_strides, counts))

    def _validate(self, v):
        source, result = directml_name(self._SOURCE), directml_name(self._RESULT)
        for i, stride in enumerate(self.input_window_strides):
            if stride == 0:
                v.add(f"InputWindowStrides[{i}] = 0 must be non-zero")
        for i, size in enumerate(self.input_window_sizes):
            if size < 1:
                v.add(f"InputWindowSizes[{i}] = {size} must be at least 1 (the window may not be empty)")
        for i, (offset, size, bound) in self._dims("input_window_offsets", "input_window_sizes", self._SOURCE):
            if size >= 1 and offset + size > bound:
                v.add(
                    f"InputWindowOffsets[{i}] + InputWindowSizes[{i}] = {offset + size} exceeds "
                    f"{source}.Sizes[{i}] = {bound}"
                )
        for i, (size, stride, count) in self._dims("input_window_sizes", "input_window_strides", self._RESULT):
            if size < 1 or stride == 0:
                continue  # reported above
            most = window_reach(size, stride)
            if count > most:
                v.add(
                    f"{result}.Sizes[{i}] = {count} exceeds MaxCopiedElements[{i}] = "
                    f"1 + (InputWindowSizes[{i}] - 1) / |InputWindowStrides[{i}]| = {most}"
                )


class PartsDesc(OperatorDesc):
    """SPLIT's size rules, which JOIN shares with its tensors in the other roles: the tensors of
    ``_PARTS`` match the tensor ``_WHOLE`` except along ``axis``, where they sum to it."""

    _WHOLE = _PARTS = ""  # tensor fields, named by each operator
    SUPPORT = OperatorSupport(
        FeatureLevel.LEVEL_1_0, ((FeatureLevel.LEVEL_1_0, 4, 4), (FeatureLevel.LEVEL_3_0, 1, 8)), SLICE_TYPES
    )

    def _validate(self, v):
        whole, parts, axis, n = getattr(self, self._WHOLE), getattr(self, self._PARTS), self.axis, self.dimension_count
        if not 0 <= axis < n or whole.dimension_count != n or not parts:
            return  # reported by the shared rules
        whole_name, parts_name = directml_name(self._WHOLE), directml_name(self._PARTS)
        comparable = [(k, part) for k, part in enumerate(parts) if part.dimension_count == n]
        for k, part in comparable:
            for d in range(n):
                if d != axis and part.sizes[d] != whole.sizes[d]:
                    v.add(
                        f"{parts_name}[{k}].Sizes[{d}] = {part.sizes[d]} differs from {whole_name}.Sizes[{d}] = "
                        f"{whole.sizes[d]} (only Sizes[Axis = {axis}] may differ)"
                    )
        total = sum(part.sizes[axis] for _, part in comparable)
        if len(comparable) == len(parts) and total != whole.sizes[axis]:
            v.add(f"{parts_name}' Sizes[{axis}] sum to {total}, not {whole_name}.Sizes[{axis}] = {whole.sizes[axis]}")


# ---- cudadml's own: many windows of one tensor ------------------------------------------------
# DirectML has no operator for a batch of windows whose places change from call to call (random
# crops, regions of interest): these are cudadml's, in DirectML's manner. The windows are data,
# a table bound like any input tensor (its rows: ``plan.window_table``, ``plan.grad_window_table``),
# so a new set of windows costs a table, not a compile, and ``execute`` copies nothing.


def tensors_text(tensors, most=3) -> str:
    """``(2, 3), (2, 1)``: the sizes (and other fields) of at most ``most`` tensors."""
    shown = [tensor_text(t).split(" ", 1)[1] for t in tensors[:most]]
    if len(tensors) > most:
        shown.append(f"... ({len(tensors)} tensors)")
    return ", ".join(shown)


def desc_summary(desc) -> str:
    """``FLOAT32 (1, 1, 4, 4) -> (1, 1, 2, 2)``: the data type and the tensors, in to out."""
    ins, outs = desc.input_tensors, desc.output_tensors
    return f"{ins[0].data_type.name} {tensors_text(ins)} -> {tensors_text(outs)}"

"""cudadml's own batch of windows: ``WindowsBatchOperatorDesc`` and its gradient, and the calls
of ``cudadml.slice1_batch`` and ``slice1_batch_grad`` (their windows are per-call data: a table,
which ``run/windows.py`` binds to an operator compiled for the layouts); registered as
``OPERATOR`` and ``GRAD_OPERATOR``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np

from ..core import calls, memory, messages, operators
from ..core import plan as _plan
from ..core.enums import FeatureLevel, TensorDataType, TensorFlags
from ..core.errors import DescriptorError, as_int, int_tuple, shown_value
from ..core.indexing import window_reach
from ..core.tensor import UINT32_MAX, BufferTensorDesc
from .slice1 import Slice1OperatorDesc


class _WindowsBatchDesc(operators.OperatorDesc):
    """What a batch of windows and its gradient share. The windows are SLICE1's, inside the
    tensor ``_WHOLE`` (less its sample axis with ``per_sample``), so SLICE1's rules of that
    tensor hold: the feature level, its dimension count and its data type, checked by SLICE1's
    own descriptor on a window of all of it (as the array functions check them:
    ``calls.Slice1Batch``). Each window's own rules (inside the tensor, sizes at least 1,
    strides non-zero 32-bit values) are rules of the table's values, which are data: kept by
    whoever fills the table (the array functions check every window before they build it), as
    DirectML leaves a tensor's values to its caller."""

    _WHOLE = ""  # the tensor field the windows lie in
    _TABLE_TYPE = TensorDataType.UNKNOWN  # the data type of the table's words

    def __post_init__(self):
        if not isinstance(self.per_sample, (bool, np.bool_)):
            raise TypeError(f"{self.NAME}: per_sample must be a bool, not {type(self.per_sample).__name__}")
        object.__setattr__(self, "per_sample", bool(self.per_sample))
        super().__post_init__()

    @property
    def table_owned(self) -> bool:
        """Whether the table is given when compiling (``OWNED_BY_DML``, as DirectML binds such a
        tensor at initialisation): its windows are then folded into copies, and ``execute``
        binds the other tensors."""
        return bool(self.window_table_tensor.flags & TensorFlags.OWNED_BY_DML)

    def _check_shared(self, v):
        whole_name = _DIRECTML_NAMES[self._WHOLE]
        whole = getattr(self, self._WHOLE)
        bounds = whole.sizes[self.per_sample :]
        if not bounds:
            v.add(f"{whole_name}.DimensionCount = 1 leaves the windows no dimension besides the sample axis")
        else:
            said = f"{whole_name}.DimensionCount - 1 (less the sample axis)" if self.per_sample else None
            broken = _slice1_rules(self._window_type, bounds, self.feature_level)
            for message in dict.fromkeys(_said_of(m, whole_name, said) for m in broken):
                v.add(message)
        table = self.window_table_tensor
        if table.data_type != self._TABLE_TYPE:
            v.add(f"WindowTableTensor.DataType = {table.data_type.name} must be {self._TABLE_TYPE.name}")
        if table.dimension_count != 2:
            v.add(f"WindowTableTensor.DimensionCount = {table.dimension_count} must be 2 (a row per window)")
        for name, tensor, output in self._tensors:
            if output and (tensor.strides is not None or tensor.flags is not TensorFlags.NONE):
                operators.check_output(v, name, tensor)  # (a packed tensor without flags keeps its rules)
        for attr, name, role in operators.roles(type(self)):
            if role.kind == "tensors" and not getattr(self, attr):
                v.add(f"{name.replace('Tensors', 'Count')} = 0 must be greater than 0")

    def _table_rule(self, v, columns, what):
        """The table's sizes: a row per window of ``columns`` words (``what`` says why)."""
        table, n = self.window_table_tensor, self.window_count
        if table.dimension_count == 2 and table.sizes != (n, columns):
            v.add(
                f"WindowTableTensor.Sizes = {table.sizes} must be ({n}, {columns}): a row per window of {columns} "
                f"words ({what})"
            )

    @property
    def window_count(self) -> int:
        """The number of windows: the table's rows."""
        return self.window_table_tensor.sizes[0]

    def __repr__(self) -> str:
        text = super().__repr__()
        return text[:-1] + ", per_sample=True)" if self.per_sample else text

    def _repr_html_(self) -> str:  # the pictures draw DirectML's operators; a table's windows are data
        return f"<pre>{html.escape(repr(self))}</pre>"


_DIRECTML_NAMES = {name: operators.directml_name(name) for name in ("input_tensor", "output_gradient_tensor")}


@memory.cache(256)
def _slice1_rules(data_type, bounds, feature_level) -> tuple[str, ...]:
    """The rules that SLICE1's descriptor finds broken by a window of all of a tensor of
    ``data_type`` and sizes ``bounds`` (its dimension count and data type at the level)."""
    try:
        t = BufferTensorDesc(data_type, bounds)
        n = len(bounds)
        Slice1OperatorDesc(t, t, (0,) * n, bounds, (1,) * n, feature_level=feature_level)
    except DescriptorError as e:
        return tuple(e.violations)
    return ()


def _said_of(message, whole_name, dimension_count=None):
    """A message of the SLICE1 descriptor that checks a windows batch's tensor, said of that
    tensor (``dimension_count``: how its dimension count is said, for a sample of it)."""
    message = message.removeprefix(f"{Slice1OperatorDesc.NAME}: ")
    for role in ("InputTensor", "OutputTensor"):  # the one tensor in both operators.roles
        if message.startswith(f"{role}."):
            message = f"{whole_name}.{message[len(role) + 1 :]}"
    if dimension_count is not None:
        message = message.replace(f"{whole_name}.DimensionCount", dimension_count, 1)
    return message


@dataclass(frozen=True, repr=False)
class WindowsBatchOperatorDesc(_WindowsBatchDesc):
    """Many SLICE1 windows of one tensor in one launch: cudadml's own operator, not DirectML's.

    Window ``n`` copies the box ``OutputTensor.Sizes[1:]`` to ``OutputTensor[n]``: its element
    ``c`` reads input element ``table[n, 0] + sum c_i * table[n, 1 + i]``, counted in elements
    (signed strides) from the input's element 0, where ``table`` is ``WindowTableTensor``
    (``plan.window_table``'s rows: a window's first element, then its steps). The table is an
    input tensor bound at ``execute`` like any other, so the windows change from call to call
    while the compiled operator stays. With ``OWNED_BY_DML`` on the table, its values are given
    when compiling (``CompiledOperator(..., constants={1: table})``; DirectML binds such a
    tensor at initialisation): the windows are then folded into copies, and the outputs may be
    one per window (windows of their own sizes) or a tensor whose windows are not packed.

    Parameters
    ----------
    input_tensor : BufferTensorDesc
        The tensor read; with ``per_sample``, its dimension 0 is the sample axis.
    window_table_tensor : BufferTensorDesc
        ``INT64``, of sizes ``(N, 1 + R)``: a row per window.
    output_tensors : sequence of BufferTensorDesc
        One tensor ``(N, *box)``, the box of ``R`` dimensions, each window's elements one run
        in order; or, with a table owned by DML, one tensor per window, its box (``R``
        dimensions each).
    per_sample : bool, default False
        Window ``n`` lies in sample ``n`` of the input (the table's offsets say where).
    {feature_level}

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> f32, i64 = cd.TensorDataType.FLOAT32, cd.TensorDataType.INT64
    >>> desc = WindowsBatchOperatorDesc(cd.BufferTensorDesc(f32, [4, 4]), cd.BufferTensorDesc(i64, [3, 3]),
    ...                                 [cd.BufferTensorDesc(f32, [3, 2, 2])])
    >>> desc.window_count
    3
    """

    NAME = "WindowsBatch"
    _WHOLE = "input_tensor"
    _TABLE_TYPE = TensorDataType.from_dtype(_plan.WINDOW_TABLE_DTYPE)
    input_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    window_table_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_tensors: tuple[BufferTensorDesc, ...] = field(metadata=operators.OUTPUTS)
    per_sample: bool = field(default=False, kw_only=True)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @property
    def _window_type(self) -> TensorDataType:
        return self.input_tensor.data_type

    @property
    def per_window(self) -> bool:
        """Whether the outputs are one per window, rather than one tensor that holds every
        window's: several, or with a table owned by DML, one whose box has one dimension fewer
        than the table's rows hold words."""
        outputs, table = self.output_tensors, self.window_table_tensor
        return len(outputs) > 1 or (
            self.table_owned
            and len(outputs) == 1
            and table.dimension_count == 2
            and outputs[0].dimension_count == table.sizes[1] - 1
        )

    def _validate(self, v):
        x, outputs, n = self.input_tensor, self.output_tensors, self.window_count
        for k, out in enumerate(outputs):
            if out.data_type != x.data_type:
                v.add(
                    f"OutputTensors[{k}].DataType = {out.data_type.name} differs from InputTensor.DataType = "
                    f"{x.data_type.name}"
                )
        if not outputs:
            return  # the shared rules say so
        what = "its first element, then a step per dimension"
        if self.per_window:
            if not self.table_owned:
                v.add(
                    f"OutputCount = {len(outputs)}: windows of their own sizes need a table given when "
                    "compiling (WindowTableTensor.Flags OWNED_BY_DML); else one tensor holds every window's"
                )
            if len(outputs) != n:
                v.add(f"OutputCount = {len(outputs)} differs from the table's {n} windows")
            ranks = {out.dimension_count for out in outputs}
            if len(ranks) > 1:
                v.add(f"OutputTensors' DimensionCounts {sorted(ranks)} differ: every window has as many dimensions")
            self._table_rule(v, 1 + outputs[0].dimension_count, what)
            return
        out = outputs[0]
        if out.dimension_count < 2:
            v.add(
                f"OutputTensors[0].DimensionCount = {out.dimension_count} must be at least 2: the windows, then "
                "their box"
            )
            return
        if out.sizes[0] != n:
            v.add(f"OutputTensors[0].Sizes[0] = {out.sizes[0]} differs from the table's {n} windows")
        self._table_rule(v, out.dimension_count, f"{what} of the box")
        strides = out.effective_strides
        if not self.table_owned and not _plan.is_packed(out.sizes[1:], strides[1:]):
            v.add(
                f"OutputTensors[0].Strides = {strides} leave a window's elements apart or out of order: the "
                "kernels write each window as one run (a table given when compiling, OWNED_BY_DML, lifts this)"
            )

    def to_plan(self, input_strides=None, output_strides=None, constants=None):
        """Lower to a plan: a ``WindowPlan`` reading the table as input 1, or with the table's
        values in ``constants`` (``{1: table}``, for a table owned by DML), a ``CopyPlan``.
        Strides as ``operators.OperatorDesc.to_plan``'s (the table's are not read)."""
        if input_strides is None:
            input_strides = [self.input_tensor.effective_strides]
        if output_strides is None:
            output_strides = [t.effective_strides for t in self.output_tensors]
        e = self.input_tensor.data_type.element_size
        table = (constants or {}).get(1)
        if self.table_owned != (table is not None):
            raise TypeError(
                f"{self.NAME}: the table's values are given when compiling (constants={{1: table}}) exactly when "
                "WindowTableTensor has OWNED_BY_DML"
            )
        if table is not None:
            if tuple(table.shape) != self.window_table_tensor.sizes:
                raise ValueError(
                    f"{self.NAME}: the table given has shape {tuple(table.shape)}; WindowTableTensor.Sizes = "
                    f"{self.window_table_tensor.sizes}"
                )
            if self.per_window:
                boxes = [t.sizes for t in self.output_tensors]
                return _plan.window_copies(e, table, boxes, output_strides)
            sizes, strides = self.output_tensors[0].sizes, output_strides[0]
            return _plan.window_copies(e, table, [sizes[1:]], [strides[1:]], strides[0])
        sizes, strides = self.output_tensors[0].sizes, tuple(output_strides[0])
        if not _plan.is_packed(sizes[1:], strides[1:]):
            raise ValueError(f"{self.NAME}: output strides {strides} leave a window's elements apart or out of order")
        in_strides, low, high = input_strides[0], 0, 0
        for size, stride in zip(self.input_tensor.sizes, in_strides):
            if stride < 0:
                low += (size - 1) * stride
            else:
                high += (size - 1) * stride
        return _plan.WindowPlan(e, sizes[1:], strides[1:], strides[0], self.window_count, low, high)


@dataclass(frozen=True, repr=False)
class WindowsBatchGradOperatorDesc(_WindowsBatchDesc):
    """The gradient of ``WindowsBatchOperatorDesc``: cudadml's own operator, not DirectML's.

    Every element of ``output_gradient_tensor`` receives the sum, in window order, of the
    gradients of the windows that read it (the first as it is, the others added), and 0 where
    none did; with ``per_sample``, its dimension 0 is the window index and only window ``n``
    reads sample ``n``. The table (``plan.grad_window_table``'s rows, as 8-byte words) says per
    window where its gradient's elements lie, counted from element 0 of the first input
    gradient, and which elements of the output gradient they go to. Binding order: the first
    input gradient, the table, then the other input gradients (the kernels read the table as
    input 1).

    How elements add follows the data types: floats add (``FLOAT16`` into a ``FLOAT32``
    output, which the caller rounds), integers wrap; with ``per_sample`` nothing adds, and
    elements of any type move.

    Parameters
    ----------
    input_gradient_tensors : sequence of BufferTensorDesc
        The windows' gradients: one tensor whose ``Sizes[0]`` is the number of windows, or one
        per window. Only their data type and bindings count: the table locates each element.
    window_table_tensor : BufferTensorDesc
        ``UINT64``, of sizes ``(N, W)``: a row of ``plan.grad_window_dtype(R)`` per window, ``W``
        8-byte words, ``R`` the output gradient's dimension count (less the sample axis).
    output_gradient_tensor : BufferTensorDesc
        The tensor the windows were read from: every element is written.
    per_sample : bool, default False
        Window ``n`` lies in sample ``n``: dimension 0 is the window index.
    {feature_level}

    Raises
    ------
    {raises}

    Examples
    --------
    >>> import cudadml as cd
    >>> from cudadml.core.plan import grad_window_dtype
    >>> f32, u64 = cd.TensorDataType.FLOAT32, cd.TensorDataType.UINT64
    >>> words = grad_window_dtype(2).itemsize // 8
    >>> desc = WindowsBatchGradOperatorDesc([cd.BufferTensorDesc(f32, [3, 2, 2])], cd.BufferTensorDesc(u64, [3, words]),
    ...                                     cd.BufferTensorDesc(f32, [4, 4]))
    >>> desc.compile().plan.kind  # floats add
    24
    """

    NAME = "WindowsBatchGrad"
    _WHOLE = "output_gradient_tensor"
    _TABLE_TYPE = TensorDataType.UINT64
    input_gradient_tensors: tuple[BufferTensorDesc, ...] = field(metadata=operators.INPUTS)
    window_table_tensor: BufferTensorDesc = field(metadata=operators.INPUT)
    output_gradient_tensor: BufferTensorDesc = field(metadata=operators.OUTPUT)
    per_sample: bool = field(default=False, kw_only=True)
    feature_level: FeatureLevel | None = field(default=None, kw_only=True)

    @cached_property
    def input_tensors(self) -> tuple[BufferTensorDesc, ...]:
        """The input tensors, in binding order: the first gradient, the table, the others."""
        first, *others = self.input_gradient_tensors or (None,)
        return tuple(t for t in (first, self.window_table_tensor, *others) if t is not None)

    @property
    def _window_type(self) -> TensorDataType:
        grads = self.input_gradient_tensors
        return grads[0].data_type if grads else self.output_gradient_tensor.data_type

    @property
    def kind(self) -> int:
        """How elements add (``plan.WindowGradPlan.kind``)."""
        t = self._window_type
        if self.per_sample:
            return t.element_size
        return (20 if t in _FLOATS else 10) + t.element_size

    def _validate(self, v):
        grads, out, n = self.input_gradient_tensors, self.output_gradient_tensor, self.window_count
        t = self._window_type
        for k, g in enumerate(grads[1:], 1):
            if g.data_type != t:
                v.add(
                    f"InputGradientTensors[{k}].DataType = {g.data_type.name} differs from "
                    f"InputGradientTensors[0].DataType = {t.name}"
                )
        if grads and len(grads) != n and (len(grads) != 1 or grads[0].sizes[0] != n):
            v.add(
                f"InputGradientCount = {len(grads)}: one tensor whose Sizes[0] is the table's {n} windows, "
                "or one per window"
            )
        summed = TensorDataType.FLOAT32 if t == TensorDataType.FLOAT16 and not self.per_sample else t
        if out.data_type != summed:
            why = "the sum of FLOAT16 gradients, rounded by the caller" if summed != t else "the gradients' type"
            v.add(f"OutputGradientTensor.DataType = {out.data_type.name} must be {summed.name} ({why})")
        if self.per_sample and out.sizes[0] != n:
            v.add(
                f"OutputGradientTensor.Sizes[0] = {out.sizes[0]} differs from the table's {n} windows "
                "(per_sample: one window per sample)"
            )
        rank = out.dimension_count - self.per_sample
        if rank:
            words = _plan.grad_window_dtype(rank).itemsize // 8
            self._table_rule(v, words, f"plan.grad_window_dtype({rank})")

    def _lower(self, input_strides, output_strides):
        out = self.output_gradient_tensor
        return _plan.WindowGradPlan(self.kind, out.sizes, tuple(output_strides[0]), self.per_sample, self.window_count)


_FLOATS = frozenset({TensorDataType.FLOAT16, TensorDataType.FLOAT32, TensorDataType.FLOAT64})


#: Windows whose broken rules a ``DescriptorError`` spells out; the rest are counted.
_WINDOWS_SHOWN = 3


def _window_array(value, field, name, d):
    """An argument of per-window integers as a NumPy array: int64, or of Python ints where one
    passes int64 (the rules then refuse it). ``TypeError`` for anything but integers."""
    if hasattr(value, "__cuda_array_interface__"):  # CuPy, CUDA tensors: read on the host, to check them
        import cupy

        value = cupy.asnumpy(cupy.asarray(value))
    try:
        a = np.asarray(value)
    except ValueError:  # rows of different lengths
        raise ValueError(f"{name}: {field} must be an array of rows of {d} integers") from None
    if a.size == 0:  # no windows: [] or an (0, d) array
        return a.astype(np.int64).reshape(0, d) if a.shape == (0,) else a.astype(np.int64)
    if a.dtype.kind == "O":
        flat = [as_int(v, f"{field}{_at(at)}", name, shown=True) for at, v in np.ndenumerate(a)]
        if all(-(2**63) <= v < 2**63 for v in flat):
            return np.array(flat, np.int64).reshape(a.shape)
        return np.array(flat, object).reshape(a.shape)
    if a.dtype.kind not in "iu":
        at = next(iter(np.ndindex(a.shape)))
        raise TypeError(f"{name}: {field} must hold integers, not {a.dtype} ({field}{_at(at)} = {a[at]!r})")
    if isinstance(value, (list, tuple)):
        given = np.asarray(value, dtype=object)
        for at, v in np.ndenumerate(given):
            if isinstance(v, (bool, np.bool_)):  # NumPy reads True among ints as 1; a bool is no integer here
                raise TypeError(f"{name}: {field} must hold integers, not bool ({field}{_at(at)} = {v!r})")
    if a.dtype == np.uint64 and a.max() >= 2**63:
        return a.astype(object)
    return a.astype(np.int64, copy=False)


def _at(index):
    """``[1][0]``: where an element is, as the caller indexes nested lists (or arrays)."""
    return "".join(f"[{j}]" for j in index)


def _rows(a, field, name, n, d, shared_ok):
    """``a`` as ``(N, d)`` rows, or (``shared_ok``) one ``(d,)`` row shared by every window."""
    if (a.ndim == 2 and a.shape == (n, d)) or (shared_ok and a.shape == (d,)):
        return a
    expected = f"({d},) for all windows or ({n}, {d})" if shared_ok else f"({n}, {d})"
    raise ValueError(f"{name}: {field} has shape {a.shape}; it must be {expected}: {d} integers per window")


@memory.cache(256)
def _shared_rules(t, bounds, feature_level):
    """SLICE1's rules of the tensors (ranks, types, feature level), on a window of all of x;
    ``DescriptorError`` in DirectML's words (``Slice1Batch._said`` says them the caller's way)."""
    whole = calls.call_tensor(t, bounds)
    Slice1OperatorDesc(whole, whole, (0,) * len(bounds), bounds, (1,) * len(bounds), feature_level=feature_level)


def _windows_of(name, source, shape, positional, offsets, sizes, strides, per_sample):
    """Many windows' arguments, normalised: ``(offsets, sizes, strides, per_sample)`` of
    windows on an array of ``shape`` (the argument ``source``: ``x``, or the gradient's
    ``input_shape``)."""
    if positional:
        raise messages.positional(name, positional)
    calls.required(offsets, "window_offsets", name, "an (N, d) array of integers: a row per window")
    calls.required(sizes, "window_sizes", name, "one row of integers for every window, or one per window")
    if per_sample is not True and per_sample is not False and not isinstance(per_sample, np.bool_):
        raise TypeError(
            f"{name}: per_sample = {shown_value(per_sample)} must be a bool, not {type(per_sample).__name__}"
        )
    per_sample = bool(per_sample)
    d = len(shape) - per_sample
    if d < 1:
        raise ValueError(
            f"{name}: {source} has {len(shape)} dimension(s); windows need at least one"
            + (" besides the sample axis (per_sample=True)" if per_sample else "")
        )
    offsets = _window_array(offsets, "window_offsets", name, d)
    if offsets.ndim != 2 or offsets.shape[1] != d:
        raise ValueError(f"{name}: window_offsets has shape {offsets.shape}; it must be (N, {d}): {d} per window")
    n = len(offsets)
    if per_sample and n != shape[0]:
        raise ValueError(
            f"{name}: {n} windows for {source} of {shape[0]} samples (per_sample=True takes one per sample)"
        )
    sizes = _rows(_window_array(sizes, "window_sizes", name, d), "window_sizes", name, n, d, True)
    strides = np.ones(d, np.int64) if strides is None else _window_array(strides, "window_strides", name, d)
    strides = _rows(strides, "window_strides", name, n, d, True)
    return offsets, sizes, strides, per_sample


class Slice1Batch(NamedTuple):
    """Many SLICE1 windows of one array (``per_sample``: window ``n`` of ``x[n]``)."""

    offsets: np.ndarray  # (N, d)
    sizes: np.ndarray  # (d,): one size for all, or (N, d)
    strides: np.ndarray  # (d,) or (N, d), signed
    per_sample: bool
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice1_batch"
    ARGUMENT = "x"
    NAME = "slice1_batch"
    POSITIONAL_HINT = (  # messages.positional: the array, the arguments by name, why, what else
        "x",
        messages.WINDOW_ARGUMENTS,
        "they are SLICE1's windows, as cd.slice1 takes them",
        "",
    )

    @classmethod
    def of(
        cls,
        shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        per_sample=False,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice1_batch(x, *positional, window_offsets=, window_sizes=, window_strides=,
        per_sample=)`` takes them: the windows by name."""
        windows = _windows_of(cls.NAME, "x", shape, positional, offsets, sizes, strides, per_sample)
        return calls.new_operation(cls, (*windows, *calls.options(feature_level, directml_types, cls.NAME)))

    @property
    def shared(self) -> bool:
        """Whether every window has one size (one result array), or each its own (a list)."""
        return self.sizes.ndim == 1

    @property
    def MANY_RESULTS(self) -> bool:
        """As the other operations' class attribute: whether the call gives a list."""
        return not self.shared

    def check(self, dtype, shape) -> np.ndarray:
        """Every window against SLICE1's rules on ``x`` of ``shape``; the elements each takes
        per dimension, ``(N, d)`` (``DescriptorError`` naming the windows that break a rule)."""
        return np.broadcast_to(self._check(dtype, shape), self.offsets.shape)

    def _check(self, dtype, shape) -> np.ndarray:
        """``check``'s counts, as one ``(d,)`` row where one row of sizes and one of strides
        (or steps of at most 1) give every window the same, else ``(N, d)``."""
        name, offsets, sizes, strides = self.NAME, self.offsets, self.sizes, self.strides
        n, d = offsets.shape
        said = dtype  # the messages name the caller's dtype
        if dtype.itemsize == 16 and self.directml_types is False:
            dtype = np.dtype(np.uint64)  # moved as pairs of words (``words``)
        t = calls.type_of(self, dtype)
        bounds = tuple(shape[1:] if self.per_sample else shape)
        if not n:
            return self._check_no_window(said, t, bounds)
        try:
            _shared_rules(t, bounds, self.feature_level)  # ranks, types, level: on all of x
        except DescriptorError as e:
            raise self._said(e, said) from None
        # Which windows break a rule of their own. The descriptor holds the rules and their
        # messages; it is asked about those windows only (a test keeps the two in step).
        huge = object in (offsets.dtype, sizes.dtype, strides.dtype)  # a value past int64
        ends = np.array(bounds, object if huge else np.int64)
        smallest, largest = (int(strides.min()), int(strides.max())) if not huge else (0, 0)
        if (  # reductions first: the common case, every window valid, in a few microseconds
            huge
            or int(offsets.min()) < 0
            or int(sizes.min()) < 1
            or smallest < operators.INT32_MIN
            or largest > operators.INT32_MAX
            or np.count_nonzero(strides) != strides.size
            or (offsets > ends - sizes).any()  # offsets + sizes > ends, which int64 could wrap
        ):
            row = (sizes < 1) | (strides == 0) | (strides < operators.INT32_MIN) | (strides > operators.INT32_MAX)
            bad = (offsets < 0) | (offsets > ends - np.maximum(sizes, 1)) | row
            self._refuse(said, t, bounds, np.flatnonzero(np.broadcast_to(bad, (n, d)).any(axis=1)))
        counts = sizes if smallest >= -1 and largest <= 1 else window_reach(sizes, strides)
        if self.shared and counts.ndim == 2 and (counts != counts[0]).any():
            k = int(np.flatnonzero((counts != counts[0]).any(axis=1))[0])
            raise ValueError(
                f"{name}: window {k} takes {tuple(map(int, counts[k]))} elements and window 0 "
                f"{tuple(map(int, counts[0]))}: windows of one size must take as many each (per-window "
                "window_sizes give a list of arrays)"
            )
        return counts

    def _check_no_window(self, dtype, t, bounds) -> np.ndarray:
        """``_check`` of no window: the rules of x, and of the shared sizes and strides, all the
        same (in the words of the caller's ``dtype``); no counts, ``(0, d)``."""
        d = self.offsets.shape[1]
        sizes = self.sizes if self.sizes.ndim == 1 else np.ones(d, np.int64)
        strides = self.strides if self.strides.ndim == 1 else np.ones(d, np.int64)
        window = (0,) * d, tuple(map(int, sizes)), tuple(map(int, strides))
        # The window's rules on a stand-in x that holds it (sizes past what a tensor holds
        # are the window's to refuse, not the stand-in's).
        held = [min(max(z, 1), UINT32_MAX) for z in window[1]]
        room = calls.room_for(calls.filled_sizes(bounds), window[0], held, [True] * d)
        counts = tuple(max(1, window_reach(z, s)) if s else 1 for z, s in zip(held, window[2]))
        try:
            _shared_rules(t, calls.filled_sizes(bounds), self.feature_level)
        except DescriptorError as e:
            raise self._said(e, dtype) from None
        try:
            with calls.stand_in("InputTensor", [True] * d):
                Slice1OperatorDesc(
                    calls.call_tensor(t, room),
                    calls.call_tensor(t, counts, "OutputTensor"),
                    *window,
                    feature_level=self.feature_level,
                )
        except DescriptorError as e:
            raise self._said(e, dtype) from None
        return np.zeros((0, d), np.int64)

    def _refuse(self, dtype, t, bounds, broken):
        """``DescriptorError`` with the descriptor's messages, in the caller's words, for the
        first broken windows."""
        name, n, d = self.NAME, *self.offsets.shape
        sizes, strides = np.broadcast_to(self.sizes, (n, d)), np.broadcast_to(self.strides, (n, d))
        lines = []
        for k in map(int, broken[:_WINDOWS_SHOWN]):
            window = tuple(tuple(map(int, a[k])) for a in (self.offsets, sizes, strides))
            counts = tuple(max(1, window_reach(z, s)) if s else 1 for z, s in zip(window[1], window[2]))
            try:
                Slice1OperatorDesc(
                    calls.call_tensor(t, bounds),
                    calls.call_tensor(t, counts, "OutputTensor"),
                    *window,
                    feature_level=self.feature_level,
                )
            except DescriptorError as e:
                lines.extend(self._said(e, dtype, k).violations)
        assert lines or not len(broken), "the descriptor accepts a window that the batch check refuses"
        # (A stride of -2^31, whose magnitude passes operators.INT32_MAX, comes here and breaks nothing.)
        if len(broken) > _WINDOWS_SHOWN:
            lines.append(f"{name}: and {len(broken) - _WINDOWS_SHOWN} more windows break a rule")
        if lines:
            raise DescriptorError(lines)

    def _said(self, error, dtype, window=None):
        """``error`` in the caller's words: of window ``window`` (None: of every window)."""
        table = messages.fields(self, window=window)
        prefix = "" if window is None else f"window {window}: "
        return messages.reworded(error, self.function, table, prefix=prefix, dtype=dtype)

    def shapes(self, dtype, shape):
        """The result shapes: ``(N, *counts)`` for windows of one size, else one per window."""
        return self.results(self._check(dtype, shape))

    def results(self, counts):
        """The result shapes of windows that take ``counts`` elements (``check``'s, or one row
        that every window takes)."""
        n, d = self.offsets.shape
        if self.shared:
            row = counts if counts.ndim == 1 else counts[0] if n else self._counts(d)
            return ((n, *map(int, row)),)
        return tuple(tuple(map(int, c)) for c in counts)  # per-window sizes: counts are (N, d)

    def words(self):
        """The same windows on 16-byte elements seen as pairs of 8-byte words."""

        def column(a, value):
            return np.append(a, value) if a.ndim == 1 else np.c_[a, np.full(len(a), value, a.dtype)]

        return self._replace(
            offsets=column(self.offsets, 0), sizes=column(self.sizes, 2), strides=column(self.strides, 1)
        )

    def _counts(self, d):
        """The elements a window of the shared sizes takes, for an empty batch (whose windows,
        with no strides of their own, step by 1)."""
        strides = self.strides if self.strides.ndim == 1 else np.ones(d, np.int64)
        return tuple(
            window_reach(int(n), int(s)) if s and n > 0 else max(int(n), 0) for n, s in zip(self.sizes, strides)
        )


class Slice1BatchGrad(NamedTuple):
    """The gradient of ``Slice1Batch``: its windows' gradients placed in, and summed into, an
    array of ``input_shape`` (zeros where no window read)."""

    input_shape: tuple
    offsets: np.ndarray
    sizes: np.ndarray
    strides: np.ndarray
    per_sample: bool
    feature_level: FeatureLevel
    directml_types: bool

    function = "slice1_batch_grad"
    ARGUMENT = "dy"
    NAME = "slice1_batch_grad"
    POSITIONAL_HINT = (  # messages.positional: the arrays, the arguments by name, why, what else
        "dy, input_shape",
        messages.WINDOW_ARGUMENTS,
        "they are SLICE1's windows, as cd.slice1_batch takes them",
        "",
    )
    shared = Slice1Batch.shared
    check = Slice1Batch.check
    _check = Slice1Batch._check
    _check_no_window = Slice1Batch._check_no_window
    _refuse = Slice1Batch._refuse
    _said = Slice1Batch._said
    results = Slice1Batch.results
    _counts = Slice1Batch._counts

    @classmethod
    def of(
        cls,
        input_shape,
        positional=(),
        offsets=None,
        sizes=None,
        strides=None,
        per_sample=False,
        feature_level=None,
        directml_types=True,
    ):
        """As ``slice1_batch_grad(dy, input_shape, *positional, window_offsets=, window_sizes=,
        window_strides=, per_sample=)`` takes them (``dy`` apart): the windows by name."""
        name = cls.NAME
        input_shape = int_tuple(input_shape, "input_shape", name, shown=True)
        negative = [i for i, n in enumerate(input_shape) if n < 0]
        if negative:
            i = negative[0]
            raise ValueError(f"{name}: input_shape[{i}] = {input_shape[i]} must not be negative")
        windows = _windows_of(name, "input_shape", input_shape, positional, offsets, sizes, strides, per_sample)
        return calls.new_operation(
            cls, (input_shape, *windows, *calls.options(feature_level, directml_types, cls.NAME))
        )

    def windows(self) -> Slice1Batch:
        """The forward operation."""
        return calls.new_operation(Slice1Batch, self[1:])

    def check_gradients(self, counts, dy_shapes):
        """``ValueError`` unless ``dy_shapes`` (one array's for windows of one size, else one per
        window) are the shapes of the results of windows that take ``counts`` (``check``'s)."""
        name, forward = self.NAME, self.results(counts)
        if list(map(tuple, dy_shapes)) != list(forward):
            if self.shared:
                raise ValueError(f"{name}: dy has shape {tuple(dy_shapes[0])}; the windows' results have {forward[0]}")
            if len(dy_shapes) != len(forward):
                raise ValueError(f"{name}: {len(dy_shapes)} gradients for {len(forward)} windows")
            k = next(k for k, (a, b) in enumerate(zip(dy_shapes, forward)) if tuple(a) != b)
            raise ValueError(f"{name}: dy[{k}] has shape {tuple(dy_shapes[k])}; window {k} takes {forward[k]}")


# ---- PyTorch: gradient and vmap ----


def _gradient(op, shapes, grads):
    """``slice1_batch_grad`` of the windows into ``x``'s shape, at the newest feature level."""
    level = calls.options(None, op.directml_types)[0]
    return Slice1BatchGrad(shapes[0], *op._replace(feature_level=level)), grads


def _gradient_grad(op, shapes, grads):
    """``slice1_batch`` of the windows, at the newest feature level."""
    return op.windows()._replace(feature_level=calls.options(None, op.directml_types)[0]), grads


# ---- pictures and messages ----


def _drawn(shapes, one, arguments, dtype):
    """Many windows drawn (``Picture.drawn``): a call of ``cd.slice1_batch`` on x of
    ``shapes[0]``, validated as the function validates it; each cell of x numbered with the
    windows that read it."""
    name = Slice1Batch.function
    if not one:
        raise TypeError(f"{name}: x is one array (or its shape), not a list of them")
    (shape,) = shapes
    operation = Slice1Batch.of(shape, *arguments.values())
    counts = operation.check(dtype, shape)
    result = operation.results(counts)[0] if operation.shared else f"{len(counts)} arrays, one per window"
    legend = f"{len(counts)} windows of x; each cell is numbered with the windows that read it"
    return f"cd.{name}: x {shape} -> {result}", shape, operation, counts, [legend]


def _grad_drawn(shapes, one, arguments, dtype):
    """The gradient of many windows drawn (``Picture.drawn``): a call of
    ``cd.slice1_batch_grad``, whose ``dy`` is one array (``one``) or a list of one per window
    for windows of their own sizes; each cell of the result numbered with the windows whose
    gradients it receives."""
    name = Slice1BatchGrad.function
    if not shapes:
        raise ValueError(f"{name}: dy is an empty list; the gradient of no windows has no dtype (pass zeros)")
    operation = Slice1BatchGrad.of(*arguments.values())
    if operation.shared != one:
        raise TypeError(
            f"{name}: windows of one size take dy as one array; per-window sizes take a list of one per window"
        )
    counts = operation.check(dtype, operation.input_shape)
    operation.check_gradients(counts, shapes)
    dy = shapes[0] if one else f"{len(shapes)} arrays"
    legend = f"{len(counts)} windows; each cell shows the windows whose gradients it receives, summed; . receives 0"
    shape = operation.input_shape
    return f"cd.{name}: dy {dy} -> {shape}", shape, operation, counts, [legend]


def _messages(op, shapes, window, given):
    """``slice1_batch``'s and its gradient's names (``messages.fields``): window ``window``'s
    (or, with None, those of the rows every window shares), on ``x`` (``input_shape`` for the
    gradient), whose axis ``i`` is ``i + 1`` with ``per_sample``."""
    grad = op.function == Slice1BatchGrad.function
    first = int(op.per_sample)
    if grad:
        source = {
            "InputTensor": "input_shape",
            "InputTensor.Sizes[{i}]": lambda i, k: f"input_shape[{i + first}]",
            "InputTensor.DimensionCount": "len(input_shape) - 1" if first else "len(input_shape)",
            "InputTensor.DataType": "dy.dtype",
        }
    else:
        source = {
            "InputTensor": f"x[{window}]" if first and window is not None else "x",
            "InputTensor.Sizes[{i}]": lambda i, k: f"x.shape[{i + first}]",
            "InputTensor.DimensionCount": "x.ndim - 1" if first else "x.ndim",
            "InputTensor.DataType": "x.dtype",
        }

    def row(name, shared):
        if window is None or shared:
            return f"{name}[{{i}}]"
        return f"{name}[{window}][{{i}}]"

    sizes, strides = row("window_sizes", op.sizes.ndim == 1), row("window_strides", op.strides.ndim == 1)
    table = {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        **source,
        **messages.derived("OutputTensor", **{".Sizes[{i}]": f"1 + ({sizes} - 1) // |{strides}|"}),
        "InputWindowOffsets[{i}]": row("window_offsets", False),
        "InputWindowSizes[{i}]": sizes,
        "InputWindowStrides[{i}]": strides,
        "len(InputWindowOffsets)": None,
        "len(InputWindowSizes)": None,
        "len(InputWindowStrides)": None,
        "DimensionCount": source["InputTensor.DimensionCount"],
        "outputs[{i}]": "out",
    }
    if grad:
        table["inputs[{i}]"] = "dy" if given in (None, 1) else "dy[{i}]"
    else:
        table["inputs[{i}]"] = "x"
    return table


OPERATOR = operators.register(
    operators.Operator(
        "slice1_batch",
        Slice1Batch,
        WindowsBatchOperatorDesc,
        gradient=_gradient,
        chunked=operators.Chunking("windows"),  # each run of windows one task, on the box of x it reads
        picture=operators.Picture("batch", _drawn),
        messages=_messages,
    )
)
GRAD_OPERATOR = operators.register(
    operators.Operator(
        "slice1_batch_grad",
        Slice1BatchGrad,
        WindowsBatchGradOperatorDesc,
        gradient=_gradient_grad,
        picture=operators.Picture("batch", _grad_drawn),
        messages=_messages,
        not_a_node="slice1_batch_grad adds the gradients of overlapping windows (cudadml.numpy.roll of several axes "
        "places its blocks with it), which no graph node does; call it outside the fused function",
    )
)

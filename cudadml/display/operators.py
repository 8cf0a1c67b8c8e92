"""The operators' pictures: an array function's call, or a descriptor, drawn as its operator
declares (``Operator.picture``, in its module of ``cudadml.ops``), with the generic pictures;
the call normalised and validated as its function does it."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import numpy as np

from ..core.errors import int_tuple
from ..core.operators import REGISTRY, desc_summary, tensors_text
from ..core.tensor import packed_strides, tensor_text
from ..ops import of_desc
from ..run.arrays import as_list
from ..run.runner import result_shapes
from .pictures import batch_picture, gather_picture, mults_of, parts_picture, scatter_picture


@dataclasses.dataclass(frozen=True)
class Call:
    """A call of an array function to draw: ``name``, its first argument ``given`` (the array,
    as an array or its shape, or a list of them), the others by the function's names in its
    order, defaults filled (``arguments``; ``out``, ``stream`` and ``chunks`` left out), and
    ``where`` (who asks, for the messages)."""

    name: str
    given: Any
    arguments: dict[str, Any]
    where: str


#: The dtype a call drawn is validated for, as the function validates it (so a picture raises
#: what the function would).
DTYPE = np.dtype(np.uint32)
_NOT_DRAWN = ("out", "stream", "chunks")  # arguments that play no part in a picture


def _shape(a, where) -> tuple[int, ...]:
    """The shape of ``a``: an array's, or ``a`` given as a shape."""
    return tuple(a.shape) if hasattr(a, "shape") else int_tuple(a, "shape", where)


def _of_one(cls, call):
    """``(operation, shape, results)``: ``call`` of one array normalised as its function does it
    (``cls.of``, the call class, takes the shape, then the other arguments in order), its
    array's shape and its result shapes."""
    shape = _shape(call.given, call.where)
    operation = cls.of(shape, *call.arguments.values())
    return operation, shape, result_shapes(operation, DTYPE, [shape])


def _desc_title(desc):
    return f"{type(desc).__name__}: {desc_summary(desc)}"


def _gather_of_call(operator, call):
    """The cells of x a window reads, each numbered with the output elements that read it."""
    operation, shape, (result,) = _of_one(operator.call, call)
    title, mults = f"cd.{call.name}: x {shape} -> {result}", mults_of(result, operation.axis_map)
    return gather_picture(title, operation.windows, mults, shape, packed_strides(shape), "x")


def _gather_of_desc(desc):
    """The cells of a gather descriptor's (``GatherDesc``) input that its window reads."""
    (x,), (y,) = desc.input_tensors, desc.output_tensors
    mults = packed_strides(y.sizes)
    return gather_picture(_desc_title(desc), desc.windows, mults, x.sizes, x.effective_strides, "InputTensor")


def _scatter_of_call(operator, call):
    """Each cell of the result showing the element of dy it receives (zeros elsewhere)."""
    operation, shape, (received,) = _of_one(operator.call, call)
    title = f"cd.{call.name}: dy {shape} -> {received}"
    mults = mults_of(shape, operation.axis_map)  # dy is indexed as the forward call's result
    return scatter_picture(title, operation.windows_for(shape), mults, received, packed_strides(received), "dy")


def _scatter_of_desc(desc):
    """Each cell of a gradient descriptor's (SLICE_GRAD's) result showing the element of its
    InputGradientTensor it receives."""
    (dy,), (grid,) = desc.input_tensors, desc.output_tensors
    mults = packed_strides(dy.sizes)
    return scatter_picture(
        _desc_title(desc), desc.windows, mults, grid.sizes, grid.effective_strides, "InputGradientTensor"
    )


def _split_of_call(operator, call):
    """Each cell of x showing the part it goes to, each part labelled with its shape."""
    operation, shape, results = _of_one(operator.call, call)
    title = f"cd.{call.name}: x {shape} -> {len(results)} parts along axis {call.arguments['axis']}"  # as given
    return parts_picture(title, shape, packed_strides(shape), operation.axis, [(s, s) for s in results], split=True)


def _split_of_desc(desc):
    """Each cell of a SPLIT descriptor's input showing the output it goes to."""
    (x,), outs, axis = desc.input_tensors, desc.output_tensors, desc.axis
    title = f"{type(desc).__name__}: {tensor_text(x)} -> {len(outs)} parts along axis {axis}"
    parts = [(tensors_text([t]), t.sizes) for t in outs]
    return parts_picture(title, x.sizes, x.effective_strides, axis, parts, split=True)


def _join_of_call(operator, call):
    """Each cell of the result showing the part it comes from, each part labelled with its shape."""
    shapes = [_shape(a, call.where) for a in call.given]
    if not shapes:
        raise ValueError(f"{call.name}: needs at least one array to join")
    operation = operator.call.of(
        shapes[0], *call.arguments.values()
    )  # as `join` calls it; result_shapes checks the rest
    (joined,) = result_shapes(operation, DTYPE, shapes)
    title = f"cd.{call.name}: {len(shapes)} parts along axis {call.arguments['axis']} -> {joined}"  # as given
    return parts_picture(title, joined, packed_strides(joined), operation.axis, [(s, s) for s in shapes], split=False)


def _join_of_desc(desc):
    """Each cell of a JOIN descriptor's output showing the input it comes from."""
    ins, (out,), axis = desc.input_tensors, desc.output_tensors, desc.axis
    title = f"{type(desc).__name__}: {len(ins)} parts along axis {axis} -> {tensor_text(out)}"
    parts = [(tensors_text([t]), t.sizes) for t in ins]
    return parts_picture(title, out.sizes, out.effective_strides, axis, parts, split=False)


def _batch_of_call(operator, call):
    """Many windows: the call validated by its operator (``Picture.drawn``), given the shapes of
    its first argument, one array (or shape) or a list of them."""
    given, where = call.given, call.where
    one = hasattr(given, "shape") or (
        isinstance(given, (tuple, list)) and bool(given) and all(isinstance(v, (int, np.integer)) for v in given)
    )
    what = operator.call.ARGUMENT
    shapes = [_shape(given, where)] if one else [_shape(a, where) for a in as_list(given, what, call.name)]
    return batch_picture(*operator.picture.drawn(shapes, one, call.arguments, DTYPE))


#: The picture of a call, and of a descriptor, of each kind (``Picture.kind``).
_OF_CALL = {
    "gather": _gather_of_call,
    "scatter": _scatter_of_call,
    "split": _split_of_call,
    "join": _join_of_call,
    "batch": _batch_of_call,
}
_OF_DESC = {"gather": _gather_of_desc, "scatter": _scatter_of_desc, "split": _split_of_desc, "join": _join_of_desc}


def _declared(operator):
    """``operator``'s picture declaration (``Operator.picture``)."""
    if operator.picture is None:
        raise TypeError(f"explain: {operator.name} has no picture")
    return operator.picture


def draws(desc) -> bool:
    """Whether ``desc``'s operator declares a picture (PADDING, SPACE_TO_DEPTH1 and TILE draw
    none yet: their reprs are text)."""
    try:
        return of_desc(desc).picture is not None
    except TypeError:  # a descriptor of no registered operator
        return False


def desc_picture(desc):
    """The `Explanation` of an operator descriptor, as its operator declares its picture."""
    if not draws(desc):
        raise TypeError(f"explain: {type(desc).__name__} has no picture yet; its repr says what it does")
    operator = of_desc(desc)
    kind = _declared(operator).kind
    if kind == "batch":
        raise TypeError(
            f"explain: a {type(desc).__name__}'s windows are data (its table's values), not drawn; "
            f"explain(cd.{operator.name}, ...) draws a call's"
        )
    return _OF_DESC[kind](desc)


def call_picture(fn, args, kwargs):
    """The `Explanation` of ``fn(*args, **kwargs)``, arrays given as shapes (or arrays): the
    call normalised as the function normalises it, and validated for ``DTYPE`` arrays by the
    rules it runs under (so it raises what the function would)."""
    name = fn.__name__
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    (_, given), *rest = [(k, v) for k, v in bound.arguments.items() if k not in _NOT_DRAWN]
    operator = REGISTRY[name]
    return _OF_CALL[_declared(operator).kind](operator, Call(name, given, dict(rest), f"explain(cd.{name})"))

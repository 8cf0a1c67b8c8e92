"""The error vocabulary: ``TypeError`` for wrong types, these ``ValueError`` subclasses for bad values."""

from __future__ import annotations

import operator
import re
import reprlib
from collections.abc import Mapping, Set

import numpy as np

__all__ = ["BindingError", "DescriptorError", "ValidationError", "as_int", "int_tuple", "shown_value"]


def fill_docstring(doc, texts):
    """``doc`` with each ``{name}`` that ``texts`` holds replaced by its text, the text's lines
    after the first indented as the line it stands on (blank lines left blank; on the summary
    line, which follows the quotes, as the docstring's body): the docstring sections that
    several functions or classes share, written once. Here, in the module that imports none of
    the others, so that every layer can use it."""

    def text(m):
        if m[0] not in texts:
            return m[0]
        start = doc.rfind("\n", 0, m.start()) + 1
        if start:
            line = doc[start : m.start()]
            indent = line[: len(line) - len(line.lstrip(" "))]
        else:
            body = _BODY.search(doc)
            indent = body[1] if body else ""
        return re.sub(r"\n(?=[^\n])", "\n" + indent, texts[m[0]])

    return _FIELD.sub(text, doc)


_FIELD = re.compile(r"\{[^{}\n]+\}")
_BODY = re.compile(r"\n( *)\S")  # a docstring's first line after the summary, and its indentation


class ValidationError(ValueError):
    """A DirectML rule was broken: the base of `DescriptorError` and `BindingError`.

    Parameters
    ----------
    violations : sequence of str
        Every broken rule, one line each, prefixed with the operator or tensor that broke it;
        kept as the tuple ``violations`` and joined by newlines as the message.

    Examples
    --------
    >>> import cudadml as cd
    >>> try:
    ...     cd.Slice1OperatorDesc(cd.BufferTensorDesc("float32", [2, 2]), cd.BufferTensorDesc("float32", [2, 3]),
    ...                           [0, 0], [2, 3], [1, 1])
    ... except cd.ValidationError as e:
    ...     print(e.violations)
    ('Slice1: InputWindowOffsets[1] + InputWindowSizes[1] = 3 exceeds InputTensor.Sizes[1] = 2',)
    """

    def __init__(self, violations):
        self.violations = tuple(violations)
        super().__init__("\n".join(self.violations))


def _violations(cls):
    """An error class whose docstring's ``{violations}`` is its one parameter, as `ValidationError`'s
    subclasses share it."""
    cls.__doc__ = fill_docstring(cls.__doc__, {"{violations}": _VIOLATIONS})
    return cls


_VIOLATIONS = """Parameters
----------
violations : sequence of str
    Every broken rule, one line each."""


@_violations
class DescriptorError(ValidationError):
    """A tensor or operator descriptor breaks a rule (raised at construction).

    {violations}

    Examples
    --------
    >>> import cudadml as cd
    >>> cd.BufferTensorDesc(cd.TensorDataType.FLOAT32, [2, 0], strides=[1])
    Traceback (most recent call last):
        ...
    cudadml.errors.DescriptorError: BufferTensorDesc: Sizes[1] = 0 must be at least 1 (a zero size is invalid)
    BufferTensorDesc: len(Strides) = 1 must equal DimensionCount = 2
    """


@_violations
class BindingError(ValidationError):
    """A binding given to ``CompiledOperator.execute`` breaks a rule (raised before launch).

    {violations}

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> x = np.arange(6.0)
    >>> cd.strided_slice(x, np.s_[::2], out=x[:3])
    Traceback (most recent call last):
        ...
    cudadml.errors.BindingError: strided_slice: out overlaps x in memory
    """


class Violations:
    """Collects every broken rule of one object, then raises them together.

    ``where`` prefixes each message, e.g. ``"Slice1"``, so a message reads
    ``Slice1: InputWindowStrides[1] = 0 must be non-zero``.
    """

    def __init__(self, where: str, error: type[ValidationError] = DescriptorError):
        self.where = where
        self.error = error
        self.messages: list[str] = []

    def add(self, message: str) -> None:
        self.messages.append(f"{self.where}: {message}")

    def extend(self, other: Violations) -> None:
        self.messages.extend(other.messages)

    def raise_if_any(self) -> None:
        if self.messages:
            raise self.error(self.messages)


def as_int(value, field: str, where: str | None = None, expected: str = "an integer", *, shown: bool = False) -> int:
    """``value`` as a Python int, by value (NumPy integers count as their value):
    ``TypeError`` naming ``field`` for anything else (floats, even 1.0, NaN, None, bools, strings).

    The one home of the rule "an integer by value"; ``expected`` words what the field takes,
    and ``shown`` puts the value in the message (``offsets[1] = 0.5 must be an integer``), as
    the array functions word their arguments.
    """
    if not isinstance(value, (bool, np.bool_)):  # operator.index takes True (and older NumPy's bool)
        try:
            return operator.index(value)
        except TypeError:
            pass
    prefix = f"{where}: " if where else ""
    given = f" = {shown_value(value)}" if shown else ""
    raise TypeError(f"{prefix}{field}{given} must be {expected}, not {type(value).__name__}")


def int_tuple(values, field: str, where: str, *, shown: bool = False) -> tuple[int, ...]:
    """``values`` as a tuple of Python ints (``as_int`` each); ``TypeError`` naming ``field``
    (and with ``shown``, the value) for anything else."""
    if type(values) in (list, tuple) and all(type(v) is int for v in values):
        return tuple(values)  # the common case: Python ints (not bools), without a call per entry
    # Not a sequence: a str (of characters), a set or a mapping (no order: a set of {4, 3} would
    # give sizes in its hash order), an array of objects (anything at all, not integers).
    if (
        isinstance(values, (str, bytes, Set, Mapping))
        or not hasattr(values, "__iter__")
        or (isinstance(values, np.ndarray) and values.dtype.hasobject)
    ):
        given = f" = {shown_value(values)}" if shown else ""
        kind = f"an array of dtype {values.dtype}" if isinstance(values, np.ndarray) else type(values).__name__
        raise TypeError(f"{where}: {field}{given} must be a sequence of integers, not {kind}")
    return tuple(as_int(v, f"{field}[{i}]", where, shown=shown) for i, v in enumerate(values))


_SHOWN = reprlib.Repr()
_SHOWN.maxlist = _SHOWN.maxtuple = 8
_SHOWN.maxstring = _SHOWN.maxother = 40


def shown_value(value) -> str:
    """``value`` as a message shows it: its ``repr``, cut short; an array as its kind and shape."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (np.generic, int, float)):
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    return _SHOWN.repr(value)

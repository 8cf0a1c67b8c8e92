"""The error vocabulary: ``TypeError`` for wrong types, these ``ValueError`` subclasses for bad values."""

from __future__ import annotations

import operator

__all__ = ["BindingError", "DescriptorError", "ValidationError"]


class ValidationError(ValueError):
    """A DirectML rule was broken. ``violations`` lists every broken rule, one line each,
    already prefixed with the operator or tensor that broke it."""

    def __init__(self, violations):
        self.violations = tuple(violations)
        super().__init__("\n".join(self.violations))


class DescriptorError(ValidationError):
    """A tensor or operator descriptor breaks a rule (raised at construction)."""


class BindingError(ValidationError):
    """A binding given to ``CompiledOperator.execute`` breaks a rule (raised before launch)."""


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


def int_tuple(values, field: str, where: str) -> tuple[int, ...]:
    """``values`` as a tuple of Python ints; ``TypeError`` naming ``field`` for anything else."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{where}: {field} must be a sequence of integers, not {type(values).__name__}")
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool):
            raise TypeError(f"{where}: {field}[{i}] must be an integer, not bool")
        try:
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{where}: {field}[{i}] must be an integer, not {type(v).__name__}") from None
    return tuple(out)

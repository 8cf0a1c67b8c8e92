"""The errors cudadml raises: ``TypeError`` for wrong types, these ``ValueError`` subclasses for
bad values. They are defined in ``cudadml.core.errors``, which every layer imports, and shown
as this module's: the name a user catches them by."""

from .core.errors import BindingError, DescriptorError, ValidationError

__all__ = ["BindingError", "DescriptorError", "ValidationError"]

for _error in (BindingError, DescriptorError, ValidationError):
    _error.__module__ = __name__

"""Where the core calls what the layers above it provide, without importing them.

A descriptor's ``compile()`` makes the execution layer's ``CompiledOperator``, and the
``_repr_html_`` of a tensor, a descriptor or a compiled operator is the pictures layer's
drawing. Those layers register what they provide here when they are imported (importing the
package imports both), so imports only go down the layers (``tests/test_layers.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["provide", "provided"]

_PROVIDED: dict[str, Any] = {}


def provide(name: str, value: Any) -> None:
    """Register ``value`` as what ``name`` is ("compile": descriptor -> CompiledOperator;
    "picture": object -> an Explanation)."""
    _PROVIDED[name] = value


def provided(name: str) -> Any:
    """What a higher layer registered as ``name``."""
    try:
        return _PROVIDED[name]
    except KeyError:
        raise RuntimeError(f"cudadml: nothing provides {name!r}; import the cudadml package") from None

"""Where a layer calls what the layers above it provide, without importing them.

A descriptor's ``compile()`` makes the execution layer's ``CompiledOperator``; the
``_repr_html_`` of a tensor, a descriptor, a compiled operator or a graph is the pictures'
drawing (``display``, top layer); a compiled graph takes the caller's arrays as ``interop``
(top layer) converts them. Those modules register what they provide here when they are
imported (importing the package imports them all), so imports only go down the layers
(``tests/test_layers.py``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["provide", "provided"]

_PROVIDED: dict[str, Any] = {}


def provide(name: str, value: Any) -> None:
    """Register ``value`` as what ``name`` is ("compile": descriptor -> CompiledOperator;
    "picture": object -> an Explanation; "caller arrays": a compiled graph's arguments ->
    ``(kind, arrays, place, wrap)``)."""
    _PROVIDED[name] = value


def provided(name: str) -> Any:
    """What a higher layer registered as ``name``."""
    try:
        return _PROVIDED[name]
    except KeyError:
        raise RuntimeError(f"cudadml: nothing provides {name!r}; import the cudadml package") from None

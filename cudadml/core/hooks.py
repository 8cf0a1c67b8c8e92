"""Where a layer calls what the layers above it provide, without importing them.

A descriptor's ``compile()`` makes the run layer's ``CompiledOperator`` (``compile``); the
``_repr_html_`` of a tensor, a descriptor, a compiled operator or a graph is the display's
drawing (``picture``); a compiled graph takes the caller's arrays as ``interop`` converts them
(``caller_arrays``), and ``fuse`` runs torch tensors by its PyTorch half (``fuse_torch``).
Each is a ``Hook`` here, which the module above fills when it is imported (importing the
package imports them all), so imports only go down the layers (``tests/test_layers.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Hook", "caller_arrays", "compile", "fuse_torch", "picture"]


class Hook:
    """One function a layer above provides (``provide``) and the layers below call."""

    __slots__ = ("_function", "name")

    def __init__(self, name: str):
        self.name, self._function = name, None

    def provide(self, function: Callable) -> None:
        self._function = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._function is None:
            raise RuntimeError(f"cudadml: nothing provides {self.name}; import the cudadml package")
        return self._function(*args, **kwargs)


#: descriptor, device= -> its ``CompiledOperator`` (``run.compiled``).
compile = Hook("compile")  # noqa: A001 (the descriptor's method it serves)
#: a tensor, descriptor, compiled operator or graph -> its ``Explanation``, or None where it has
#: no picture (``display``).
picture = Hook("picture")
#: a compiled graph's arguments, stream -> ``(kind, arrays, place, wrap)`` (``interop``).
caller_arrays = Hook("caller arrays")
#: () -> fuse's half for torch tensors, imported at the first (``interop.torch_fuse``).
fuse_torch = Hook("fuse torch")

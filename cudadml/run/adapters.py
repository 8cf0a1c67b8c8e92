"""Adapters: how an array library plugs into the array functions.

An adapter is an object with three methods:

* ``takes(inputs, outs)``: whether a call holding these arrays is its own (``inputs`` a list,
  ``outs`` a list or None);
* ``arrays(operation, inputs, outs)``: the call's arrays checked (``TypeError`` for another
  kind) and as it will run them, each with a ``shape``: the array function then normalises
  its call into an ``operation`` (a class of ``calls``, whose ``function``, ``ARGUMENT`` and
  ``NAME`` are there to word messages) from those shapes;
* ``run(operation, inputs, outs, stream, chunks)``: the normalised operation run on them,
  giving the list of results as arrays of its library (``outs`` where given).

NumPy and CuPy arrays need no adapter (``runner.PLAIN``). Other libraries register one with
``register_adapter`` (the package registers PyTorch's and Dask's): it is loaded only when a
call holds an array of the library, which its caller must then have imported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .runner import PLAIN

__all__ = ["Adapter", "adapter_for", "register_adapter"]


class Adapter(Protocol):
    def takes(self, inputs: list, outs: list | None) -> bool: ...

    def arrays(self, operation: type, inputs: list, outs: list | None) -> tuple[list, list | None]: ...

    def run(self, operation: Any, inputs: list, outs: list | None, stream: Any, chunks: Any) -> list: ...


#: ``(module, load)`` per library, asked in the order they were registered.
_REGISTERED: list[tuple[str, Callable[[], Adapter]]] = []
_LOADED: dict[str, Adapter] = {}
#: NumPy's and, once CuPy is imported, CuPy's array type: arrays that no adapter takes.
_PLAIN_TYPES = frozenset({np.ndarray})


def register_adapter(module: str, load: Callable[[], Adapter] | None) -> None:
    """Hand calls holding arrays of the library ``module`` to an adapter.

    Parameters
    ----------
    module : str
        The library's module (``"torch"``, ``"dask.array"``): its adapter is asked only while
        it is imported, so registering one imports nothing.
    load : callable or None
        Returns the adapter (an object with the methods ``takes``, ``arrays`` and ``run``
        described in ``cudadml.run.adapters``); called once, at the first call made while
        ``module`` is imported. ``None`` removes the module's adapter.

    Raises
    ------
    TypeError
        If ``module`` is not a str or ``load`` is neither callable nor None.

    Notes
    -----
    Adapters of the imported libraries are asked in the order they were registered; a later
    registration for the same module replaces the earlier one. The package registers Dask's
    adapter, then PyTorch's.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> from cudadml.run import runner
    >>> class Tagged(np.ndarray):
    ...     pass
    >>> class TaggedAdapter:
    ...     def takes(self, inputs, outs):
    ...         return isinstance(inputs[0], Tagged)
    ...     def arrays(self, operation, inputs, outs):
    ...         return inputs, outs
    ...     def run(self, operation, inputs, outs, stream, chunks):
    ...         results = runner.run(operation, [np.asarray(a) for a in inputs], outs, stream)
    ...         return [r.view(Tagged) for r in results]
    >>> cd.register_adapter(__name__, TaggedAdapter)
    >>> cd.slice1(np.arange(5).view(Tagged), window_offsets=[1], window_sizes=[3])
    Tagged([1, 2, 3])
    >>> cd.register_adapter(__name__, None)
    """
    if not isinstance(module, str) or not (load is None or callable(load)):
        raise TypeError(f"register_adapter takes a module name and a callable (or None), not {module!r}, {load!r}")
    _REGISTERED[:] = [(m, f) for m, f in _REGISTERED if m != module]
    if load is not None:
        _REGISTERED.append((module, load))
    _LOADED.pop(module, None)


def adapter_for(inputs: list, outs: list | None) -> Adapter:
    """The adapter whose call this is: the first registered one that takes it, else ``PLAIN``."""
    plain = _PLAIN_TYPES if len(_PLAIN_TYPES) == 2 else _plain_types()
    if len(inputs) == 1 and type(inputs[0]) in plain and (outs is None or (len(outs) == 1 and type(outs[0]) in plain)):
        return PLAIN  # a NumPy or CuPy array itself: no adapter to look for
    for module, load in _REGISTERED:
        if module in sys.modules:
            adapter = _LOADED.get(module)
            if adapter is None:
                adapter = _LOADED[module] = load()
            if adapter.takes(inputs, outs):
                return adapter
    return PLAIN


def _plain_types():
    global _PLAIN_TYPES
    ndarray = getattr(sys.modules.get("cupy"), "ndarray", None)
    if ndarray is not None:
        _PLAIN_TYPES = frozenset({np.ndarray, ndarray})
    return _PLAIN_TYPES

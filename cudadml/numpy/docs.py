"""The docstrings of cudadml.numpy's functions: the sections several of them share, filled in by
``documented``."""

from __future__ import annotations

from ..core.errors import fill_docstring

# Docstring sections several functions share, filled in by ``documented``.
_SHARED = {
    "{examples}": """Examples
--------
>>> import numpy as np, cudadml.numpy as cnp""",
    "{stack raises}": """Raises
------
ValueError, TypeError
    As `concatenate`; ``TypeError`` for ``tup`` that is not a sequence.""",
    "{split axis}": """axis : int, default 0
    The axis to split along.""",
    "{parts}": """Returns
-------
list of arrays
    The parts, in order.""",
    "{split raises}": """IndexError, numpy.exceptions.AxisError
    For an axis out of bounds, as NumPy.
TypeError
    For indices that are not integers.""",
}


def documented(template=None, **fields):
    """A decorator: the function's docstring, or ``template`` (with ``{name}``, the function's
    name), with the sections of ``_SHARED`` and ``fields`` (``{field}``) filled in."""

    def document(fn):
        texts = {**_SHARED, "{name}": fn.__name__, **{f"{{{k}}}": v for k, v in fields.items()}}
        fn.__doc__ = fill_docstring(fn.__doc__ if template is None else template, texts)
        return fn

    return document

"""Reprs and pictures: what a descriptor, a tensor or an array-function call does, drawn.

A picture is drawn from the geometry that runs, not a second formula: a descriptor's windows
(``windows``: per dimension ``(start, step, count)``, what it lowers to its plan) and SPLIT's and
JOIN's parts along their axis; an array function's call normalised and validated as the
function does it (``calls``, ``runner.result_shapes``), whose windows are the descriptor's. Which
picture an operator's call or descriptor is, the operator declares (``Operator.picture``, in
its module of ``cudadml.ops``); this module draws each kind with its generic pictures, and
knows no operator by name.

What is drawn follows the windows. The 2-D slices drawn are the first that a window reads (a
tensor, SPLIT and JOIN: the first slices). A slice of at most ``MAX_ROWS`` by ``MAX_COLUMNS``
cells is drawn whole, cell by cell; a larger one is drawn whole at a reduced scale (an
overview, each window outlined on it), and each window at cell scale where its cells are: whole
where it fits, else its corners (``CORNER`` cells of each side). Many windows
(``slice1_batch``) are sampled: ``MAX_OUTLINES`` outlined, the count said, and the first few
of them drawn at cell scale. Marks are made only for the cells drawn at cell scale, and those are
at most ``MAX_CELLS`` a picture, so a picture costs what it shows, whatever the tensor's size,
and its SVG is at most ``MAX_BYTES``.

``Explanation`` draws the result as inline SVG for Jupyter (``_repr_html_``) and as text
(``repr``, the cell-scale parts only): padding between rows hatched (``#``), the cells a window
reads numbered in output order, SPLIT and JOIN parts coloured; many windows each outlined and
numbered, each cell numbered with the windows that read it. Window outlines, and nothing else,
are drawn in ``OUTLINE``; the SVG's groups carry their geometry as ``data-`` attributes (for
tests that look at a rendered picture).

One module a concern: ``explanation`` (the picture, as text and as an SVG document), ``svg``
(its pieces, colours and sizes), ``layout`` (the slices drawn and their views at cell scale, and
their limits), ``marks`` (the labels of the cells drawn), ``pictures`` (the generic pictures: a
copy's cells read, a gradient's written, parts, many windows, a tensor), ``operators`` (a call
or descriptor drawn as its operator declares) and ``graph`` (a compiled graph); this one is
the public face.
"""

from __future__ import annotations

from typing import Any

from ..core import hooks
from ..core.operators import REGISTRY, OperatorDesc
from ..core.tensor import BufferTensorDesc
from ..graphs.graph import CompiledGraph, GraphDesc
from ..run import arrays
from ..run.compiled import CompiledOperator
from .explanation import Explanation
from .graph import GraphPicture
from .operators import call_picture, desc_picture, draws
from .pictures import tensor_picture

__all__ = ["Explanation", "explain"]


def explain(what: Any, *args: Any, **kwargs: Any) -> Explanation:
    """Draw what an operator does: the cells it reads, in what order, and where they go.

    The picture comes from the geometry that runs: the descriptor's windows (what it lowers to
    its plan), or the call normalised and validated as the array function does it, so it shows
    exactly what runs. It draws the 2-D slices of the tensor (the input of a slice, the result of
    a gradient, the whole of a SPLIT or JOIN) that the windows read, with the cells a window
    reads numbered in output order and outlined, the axes read backwards marked, the padding
    between rows of a descriptor's tensor hatched (``#``) and SPLIT or JOIN parts coloured. A
    slice larger than ``MAX_ROWS`` by ``MAX_COLUMNS`` cells is drawn whole at a reduced scale with
    each window outlined on it, and each window at cell scale where its cells are: whole where it
    fits, else its corners (``CORNER`` cells of each side, with the tensor's row and column
    numbers). Many windows (``slice1_batch`` and its gradient) are sampled: each cell numbered
    with the windows that read it, the first ``MAX_OUTLINES`` windows outlined and numbered, with
    an arrow along a drawn axis they read backwards, the count said, and the first
    ``MAX_LISTED`` listed in the text. In Jupyter it is drawn as SVG (at most ``MAX_BYTES``);
    elsewhere its ``repr`` is the cell-scale part as text. Only what is drawn is computed, at
    most ``MAX_CELLS`` cells: a picture costs about the same whatever the tensor's size (or, for
    many windows, a word operation per 64 windows and cell drawn).

    Parameters
    ----------
    what : descriptor, CompiledOperator, BufferTensorDesc, GraphDesc or array function
        An operator descriptor (``SliceOperatorDesc``, ...), a compiled one, a tensor (drawn
        with its padding), a graph (its nodes, edges and the copies they became), or one of the
        array functions (``cd.slice``, ``cd.split``, ...).
    *args, **kwargs
        For an array function, its arguments, with each array given as its shape (or as the
        array, whose shape is all that is used); ``out`` and ``stream`` are ignored.
        ``slice1_batch_grad``'s ``dy`` is one shape (or array), or a list of them for windows
        of their own sizes.

    Returns
    -------
    Explanation
        The picture: ``repr()`` for text, ``_repr_html_()`` or ``svg`` for SVG.

    Raises
    ------
    TypeError
        If ``what`` is none of the above, or a descriptor is given further arguments.
    DescriptorError
        If the call breaks a DirectML rule, as the array function would raise.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.explain(cd.strided_slice, (3, 4), np.s_[::-2, 1:])
    cd.strided_slice: x (3, 4) -> (2, 3)
    6 of 12 cells of x read; each is numbered with the output elements that read it
    rows: axis 0, step -2 (upwards); columns: axis 1, step 1
       0 1 2 3
    0  . 3 4 5
    1  . . . .
    2  . 0 1 2
    """
    if isinstance(what, (GraphDesc, CompiledGraph)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return GraphPicture(what if isinstance(what, CompiledGraph) else what.compile(load=False))
    if isinstance(what, CompiledOperator):
        what = what.desc
    if isinstance(what, (OperatorDesc, BufferTensorDesc)):
        if args or kwargs:
            raise TypeError(f"explain: a {type(what).__name__} takes no further arguments")
        return tensor_picture(what) if isinstance(what, BufferTensorDesc) else desc_picture(what)
    name = getattr(what, "__name__", "")
    if name not in REGISTRY or getattr(arrays, name, what) is not what:  # (an operator's own function too)
        raise TypeError(
            "explain: takes an operator descriptor, a CompiledOperator, a BufferTensorDesc or a cudadml array "
            f"function, not {what!r}"
        )
    return call_picture(what, args, kwargs)


def _repr_picture(what):
    """``explain(what)`` for the reprs, or None where there is no picture to draw (a descriptor
    whose operator declares none): then the repr is text."""
    if isinstance(what, CompiledOperator):
        what = what.desc
    if isinstance(what, OperatorDesc) and not draws(what):
        return None
    return explain(what)


hooks.picture.provide(_repr_picture)

"""Errors in the caller's words: what the array functions say when a call breaks a rule.

The rules live once, in the descriptors (``operators``, ``tensor``) and the binding checks
(``bindings``), which word them in DirectML's names (``InputWindowOffsets[1]``,
``InputTensor.Sizes[1]``, ``outputs[0]``). An array function builds the descriptor of its call
(``calls``), so a broken rule reaches it as those words; this module says it again in the
caller's (``window_offsets[1]``, ``x.shape[1]``, ``out``), keeping DirectML's in parentheses
for those who know them::

    slice1: window_offsets[1] + window_sizes[1] = 14 exceeds x.shape[1] = 12
    (DirectML: InputWindowOffsets[1] + InputWindowSizes[1] exceeds InputTensor.Sizes[1])

Each array function has a table (``fields``) from DirectML's names to the arguments of the
call they came from: a tensor is the array it binds or the argument its sizes come from, a
field the argument of the same meaning. ``reworded`` translates one error's violations through
it: every DirectML name in a message is looked up (a name that maps to ``None`` is a tensor
the call derives whose every rule another violation already says in the caller's words: that
violation is dropped), a few DirectML sentence shapes are said the Python way (``//`` for the
integer division, a feature level as the ``feature_level`` argument), and one complaint is
kept per value. The descriptors called directly keep DirectML's words exactly.

It also words the calls that NumPy or PyTorch would read differently (``positional``): the
DirectML-named functions take their window and split arguments by name, and say why.
"""

from __future__ import annotations

import operator
import re

import numpy as np

from .errors import BindingError, ValidationError, shown_value

__all__ = ["fields", "in_callers_words", "of_words", "positional", "reworded"]

# A DirectML name in a message: a field (``InputWindowOffsets[1]``, ``len(Offsets)``, ``Axis``),
# a tensor or one of its fields (``InputTensor``, ``InputTensors[2].Sizes[0]``,
# ``OutputTensors'``), or a binding of execute (``outputs[0]``).
_TOKEN = re.compile(
    r"(?P<len>len\()?(?P<name>[A-Z][a-z][A-Za-z]*|inputs|outputs)(?:\[(?P<k>\d+)\])?(?P<apos>')?"
    r"(?:\.(?P<attr>[A-Z][a-z][A-Za-z]*)(?:\[(?P<i>\d+)\])?)?(?(len)\))"
)
# Where a message starts with who says it: ``Slice1: ``, ``BufferTensorDesc: ``, ``slice.execute: ``.
_WHO = re.compile(r"^[A-Za-z0-9_]+(?:\.execute)?: ")
# A value after ``=`` in DirectML's words (an integer, a type name): the parenthesis shows the
# rule without them (the caller's words have them).
_VALUE = re.compile(r" = (?:-?\d+|[A-Z][A-Z0-9_]*)(?=$|[,;)]| [a-z(])")

#: DirectML's sentence shapes said the Python way, before the names are translated.
_PHRASES = (
    (re.compile(r"\(only Sizes\[Axis = (\d+)\] may differ\)"), r"(only axis \1 may differ)"),
    (
        re.compile(r"exceeds MaxCopiedElements\[(\d+)\] = 1 \+ \((\S+) - 1\) / \|(\S+)\| = (\d+)"),
        r"exceeds 1 + (\2 - 1) // |\3| = \4, the most the window reaches",
    ),
    (re.compile(r"(\S+)' Sizes\[\d+\] sum to"), r"\1 sum to"),
    # In the array layer a size of 0 is an empty result (nothing runs): what reaches a tensor
    # below 1 is negative.
    (re.compile(r"must be at least 1 \(a zero size is invalid\)"), "must not be negative"),
)
#: ... and after: a binding's own phrases, and DirectML's type names as NumPy's dtype names.
_AFTER = (
    (re.compile(r"^(out(?:\[\d+\])?): out has"), r"\1 has"),
    (re.compile(r"^out\[(\d+)\] (has shape .*); the result has"), r"out[\1] \2; part \1 has"),
    (re.compile(r"^(out(?:\[\d+\])?): the buffer is read-only"), r"\1 is read-only"),
    (re.compile(r"the operator was compiled for device"), "the call runs on device"),
    (re.compile(r"\b(FLOAT|U?INT)(\d+)\b(?! max)"), lambda m: m.group(0).lower()),
)
_LEVEL = re.compile(r"the operator needs feature level (\S+) or newer; got (\S+)")
_UNSUPPORTED = " is not supported at feature level "


def _key(m) -> tuple[str, int, int]:
    """A name's table key (``InputTensors[{k}].Sizes[{i}]``, ``InputWindowOffsets[{i}]``) and
    its indices: ``k`` a tensor's in a list, ``i`` a dimension's (or a lone index)."""
    name, k, apos, attr, i = m.group("name", "k", "apos", "attr", "i")
    if m.group("len"):
        return f"len({name})", 0, 0
    if attr is None:  # a lone index is a dimension's (an array field's) or a binding's
        return name + ("[{i}]" if k is not None else "") + (apos or ""), int(k or 0), 0
    index = "[{i}]" if i is not None else ""
    return f"{name}{'[{k}]' if k is not None else ''}{apos or ''}.{attr}{index}", int(i or 0), int(k or 0)


def _said(value, i, k):
    return value(i, k) if callable(value) else value.format(i=i, k=k)


def _caller(body, table, dtype):
    """``body`` (DirectML's words, without who says it) in the caller's words, or None where
    a name maps to None (a derived tensor: another violation says it)."""
    text = _LEVEL.sub(rf"feature_level = \2 is older than \1, the first level with {table['OPERATOR']}", body)
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    dropped = []

    def name(m):
        key, i, k = _key(m)
        if key not in table:
            return m.group(0)  # not DirectML's, or said as it is (tests pin every message)
        value = table[key]
        if value is None:
            dropped.append(key)
            return m.group(0)
        said = _said(value, i, k)
        if said is None:
            dropped.append(key)
            return m.group(0)
        return said

    text = _TOKEN.sub(name, text)
    if dropped:
        return None
    for pattern, replacement in _AFTER:
        text = pattern.sub(replacement, text)
    for pattern, hint in table.get("HINTS", ()):
        if re.search(pattern, text):
            text += f"; {hint}"
            break
    if dtype is not None:  # a dtype moved as another (directml_types=False): say both
        text = re.sub(r"\.dtype = (\w+)", lambda m: _dtype_said(m, dtype), text)
    return text


def _dtype_said(m, dtype):
    moved = m.group(1)
    return m.group(0) if moved == dtype.name else f".dtype = {dtype} (moved as {moved})"


def _directml(body):
    """DirectML's words of a rule, without the values (the caller's words have them)."""
    return _VALUE.sub("", re.sub(r"sum to -?\d+, not", "must sum to", body))


def reworded(error: ValidationError, function: str, table: dict, *, prefix: str = "", dtype=None) -> ValidationError:
    """``error`` (a ``DescriptorError`` or ``BindingError`` in DirectML's words) in the caller's:
    each violation ``function: prefix <caller's words> (DirectML: <rule>)``.

    ``table``: ``fields``'s for the call; ``prefix``: what each line says first (``window 3: ``);
    ``dtype``: the array's, where DirectML's type names stand for it."""
    lines, subjects = [], set()
    first = table["FIRST"]
    for violation in error.violations:
        body = _WHO.sub("", violation, count=1)
        if _UNSUPPORTED in body and not body.startswith(first):
            continue  # every tensor has the first's rank and type, which that line says
        caller = _caller(body, table, dtype)
        if caller is None:
            continue
        subject = caller.split(" must ", 1)[0] if " must " in caller else None
        if subject is not None and subject in subjects:
            continue  # one complaint per value (a negative size is not unsigned, nor at least 1)
        subjects.add(subject)
        said = f"{function}: {prefix}{caller}"
        if caller != body and not isinstance(error, BindingError):
            said += f" (DirectML: {_directml(body)})"
        lines.append(said)
    if not lines:  # a rule only a derived tensor breaks: said in DirectML's words, not lost
        lines = [f"{function}: {prefix}{_WHO.sub('', v, count=1)}" for v in error.violations]
    return type(error)(lines)


# ---- the tables: per array function, DirectML's names -> the arguments of the call ------------------


def _array(tensor, name, *, sizes=None, ndim=None):
    """The entries of a DirectML tensor that is the caller's array ``name`` (``sizes``,
    ``ndim``: where its sizes are said otherwise, as an index's counts)."""
    return {
        tensor: name,
        f"{tensor}.Sizes[{{i}}]": sizes or f"{name}.shape[{{i}}]",
        f"{tensor}.DimensionCount": ndim or f"{name}.ndim",
        f"{tensor}.DataType": f"{name}.dtype",
    }


_DERIVED = {".Sizes[{i}]": None, ".DimensionCount": None, ".DataType": None, "": None}


def _derived(tensor, **said):
    """A tensor the call derives (a result's shape), each of whose rules another violation
    says in the caller's words (None), except the fields given in ``said``."""
    table = {f"{tensor}{attr}": None for attr in _DERIVED}
    table.update({f"{tensor}{attr}": v for attr, v in said.items()})
    return table


def _window(offsets, sizes, strides):
    """SLICE1's window arrays as the caller's arguments of those names."""
    table = {}
    for field, name in (("InputWindowOffsets", offsets), ("InputWindowSizes", sizes), ("InputWindowStrides", strides)):
        table[f"{field}[{{i}}]"] = f"{name}[{{i}}]"
        table[f"len({field})"] = f"len({name})"
    return table


_BY_KEY = {
    "InputWindowOffsets[{i}]": "the start of key along axis {i}",
    "InputWindowSizes[{i}]": "the span of key along axis {i}",
    "InputWindowStrides[{i}]": "the step of key along axis {i}",
}


def _bindings(inputs, outputs):
    return {"inputs[{i}]": inputs, "outputs[{i}]": outputs}


def fields(operation, shapes=(), *, window=None, binding_inputs=None) -> dict:
    """The table of ``operation``'s call on arrays of ``shapes``: DirectML's names (keys with
    ``{i}`` for a dimension, ``{k}`` for a tensor in a list) to the caller's words (a format
    string, a function of ``(i, k)``, or None: dropped, said by another violation).

    ``window``: for many windows, the window the names are of (None: of every window: a
    shared row, the tensors); ``binding_inputs``: for ``slice1_batch_grad``, how many arrays
    ``dy`` is (one array, or a list)."""
    return _TABLES[operation.function](operation, shapes, window, binding_inputs)


#: Ways around a rule that NumPy's indexing has, and the function that takes them.
_PAST_THE_END = (r"exceeds x\.shape|reads past x\.shape", "cd.strided_slice(x, key) clips to x, as NumPy's slices do")
_NEGATIVE_OFFSET = (
    r"^(window_)?offsets\[\d+\] = -",
    "cd.strided_slice(x, key) takes indices from the end, as NumPy does",
)


def _slice(op, shapes, window, given):
    return {
        "OPERATOR": "SLICE",
        "FIRST": "InputTensor",
        "HINTS": (
            (r"^strides\[\d+\] = -", "cd.slice1 (window_strides=) and cd.strided_slice take negative steps"),
            _NEGATIVE_OFFSET,
            _PAST_THE_END,
        ),
        **_array("InputTensor", "x"),
        **_derived("OutputTensor", **{"": "the result", ".Sizes[{i}]": "sizes[{i}]"}),
        "Offsets[{i}]": "offsets[{i}]",
        "Sizes[{i}]": "sizes[{i}]",
        "Strides[{i}]": "strides[{i}]",
        "len(Offsets)": "len(offsets)",
        "len(Sizes)": "len(sizes)",
        "len(Strides)": "len(strides)",
        "DimensionCount": "x.ndim",
        **_bindings("x", "out"),
    }


def _default_counts(op):
    return tuple(1 + (n - 1) // abs(st) if st and n > 0 else 0 for n, st in zip(op.sizes, op.strides))


def _slice1(op, shapes, window, given):
    if op.output_sizes == _default_counts(op):  # as defaulted: the window's reach, whose rules say it
        result = {".Sizes[{i}]": "1 + (window_sizes[{i}] - 1) // |window_strides[{i}]|", "": "the result"}
    else:
        result = {".Sizes[{i}]": "output_sizes[{i}]", ".DimensionCount": "len(output_sizes)", "": "the result"}
    return {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        "HINTS": (
            (r"^window_strides\[\d+\] = 0 ", "cd.slice's strides take 0 (one element, repeated)"),
            _NEGATIVE_OFFSET,
            _PAST_THE_END,
        ),
        **_array("InputTensor", "x"),
        **_derived("OutputTensor", **result),
        **_window("window_offsets", "window_sizes", "window_strides"),
        "DimensionCount": "x.ndim",
        **_bindings("x", "out"),
    }


def _slice_grad(op, shapes, window, given):
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **_array("InputGradientTensor", "dy"),
        **_derived(
            "OutputGradientTensor",
            **{"": "input_shape", ".Sizes[{i}]": "input_shape[{i}]", ".DimensionCount": "len(input_shape)"},
        ),
        **_window("window_offsets", "window_sizes", "window_strides"),
        "len(OutputGradientTensor)": "len(input_shape)",
        "DimensionCount": "dy.ndim",
        **_bindings("dy", "out"),
    }


def _split(op, shapes, window, given):
    parts = op.results(shapes[0]) if shapes else ()
    bound = [k for k, s in enumerate(parts) if 0 not in s] or list(range(len(parts)))
    axis = op.axis

    def part_size(i, k):  # a part's size along the axis is its split size; the others are x's
        return f"split_sizes[{bound[k] if k < len(bound) else k}]" if i == axis else None

    return {
        "OPERATOR": "SPLIT",
        "FIRST": "InputTensor",
        **_array("InputTensor", "x"),
        **_derived("OutputTensors[{k}]", **{".Sizes[{i}]": part_size}),
        "OutputTensors": "split_sizes",
        "OutputCount": "len(split_sizes)",
        "Axis": "axis",
        "DimensionCount": "x.ndim",
        "inputs[{i}]": "x",
        "outputs[{i}]": lambda i, k: f"out[{bound[i] if i < len(bound) else i}]",
    }


def _join(op, shapes, window, given):
    bound = [k for k, s in enumerate(shapes) if 0 not in s] or list(range(len(shapes)))

    def xs(k):
        return f"xs[{bound[k] if k < len(bound) else k}]"

    axis = op.axis
    return {
        "OPERATOR": "JOIN",
        "FIRST": "InputTensors[0]",
        "InputTensors[{i}]": lambda i, k: xs(i),
        "InputTensors[{k}].Sizes[{i}]": lambda i, k: f"{xs(k)}.shape[{i}]",
        "InputTensors[{k}].DimensionCount": lambda i, k: f"{xs(k)}.ndim",
        "InputTensors[{k}].DataType": lambda i, k: f"{xs(k)}.dtype",
        **_derived(
            "OutputTensor",
            **{"": "the result", ".Sizes[{i}]": lambda i, k: None if i == axis else f"{xs(0)}.shape[{i}]"},
        ),
        "InputCount": "len(xs)",
        "Axis": "axis",
        "DimensionCount": f"{xs(0)}.ndim",
        "inputs[{i}]": lambda i, k: xs(i),
        "outputs[{i}]": "out",
    }


def _strided_slice(op, shapes, window, given):
    return {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        **_array("InputTensor", "x"),
        **_derived("OutputTensor"),
        **_BY_KEY,
        "DimensionCount": "x.ndim",
        **_bindings("x", "out"),
    }


def _strided_slice_grad(op, shapes, window, given):
    return {
        "OPERATOR": "SLICE_GRAD",
        "FIRST": "InputGradientTensor",
        **_array("InputGradientTensor", "dy", sizes="the count of key along axis {i}", ndim="len(input_shape)"),
        **_derived(
            "OutputGradientTensor",
            **{"": "input_shape", ".Sizes[{i}]": "input_shape[{i}]", ".DimensionCount": "len(input_shape)"},
        ),
        **_BY_KEY,
        "DimensionCount": "len(input_shape)",
        **_bindings("dy", "out"),
    }


def _batch(op, shapes, window, given):
    """``slice1_batch`` and its gradient: window ``window``'s names (or, with None, those of the
    rows every window shares), on ``x`` (``input_shape`` for the gradient), whose axis ``i`` is
    ``i + 1`` with ``per_sample``."""
    grad = op.function == "slice1_batch_grad"
    first = int(op.per_sample)
    if grad:
        source = {
            "InputTensor": "input_shape",
            "InputTensor.Sizes[{i}]": lambda i, k: f"input_shape[{i + first}]",
            "InputTensor.DimensionCount": "len(input_shape) - 1" if first else "len(input_shape)",
            "InputTensor.DataType": "dy.dtype",
        }
    else:
        source = {
            "InputTensor": f"x[{window}]" if first and window is not None else "x",
            "InputTensor.Sizes[{i}]": lambda i, k: f"x.shape[{i + first}]",
            "InputTensor.DimensionCount": "x.ndim - 1" if first else "x.ndim",
            "InputTensor.DataType": "x.dtype",
        }

    def row(name, shared):
        if window is None or shared:
            return f"{name}[{{i}}]"
        return f"{name}[{window}][{{i}}]"

    sizes, strides = row("window_sizes", op.sizes.ndim == 1), row("window_strides", op.strides.ndim == 1)
    table = {
        "OPERATOR": "SLICE1",
        "FIRST": "InputTensor",
        **source,
        **_derived("OutputTensor", **{".Sizes[{i}]": f"1 + ({sizes} - 1) // |{strides}|"}),
        "InputWindowOffsets[{i}]": row("window_offsets", False),
        "InputWindowSizes[{i}]": sizes,
        "InputWindowStrides[{i}]": strides,
        "len(InputWindowOffsets)": None,
        "len(InputWindowSizes)": None,
        "len(InputWindowStrides)": None,
        "DimensionCount": source["InputTensor.DimensionCount"],
        "outputs[{i}]": "out",
    }
    if grad:
        table["inputs[{i}]"] = "dy" if given in (None, 1) else "dy[{i}]"
    else:
        table["inputs[{i}]"] = "x"
    return table


_TABLES = {
    "slice": _slice,
    "slice1": _slice1,
    "slice_grad": _slice_grad,
    "split": _split,
    "join": _join,
    "strided_slice": _strided_slice,
    "strided_slice_grad": _strided_slice_grad,
    "slice1_batch": _batch,
    "slice1_batch_grad": _batch,
}


def of_words(error: ValidationError, dtype) -> ValidationError:
    """``error`` of a call on 16-byte elements, which is described on pairs of 8-byte words (one
    more axis, of ``uint64``), said of the caller's arrays of ``dtype``."""
    lines = []
    for line in error.violations:
        caller, paren, rest = line.partition(" (DirectML: ")
        caller = re.sub(r"(\S+\.ndim|len\([^)]*\)) = ", r"\1 + 1 = ", caller)
        caller = caller.replace(".dtype = uint64", f".dtype = {dtype} (as pairs of uint64 words)")
        lines.append(caller + paren + rest)
    return type(error)(lines)


def in_callers_words(operation, error: ValidationError, shapes=(), *, dtype=None, **kwargs) -> ValidationError:
    """``reworded`` with ``operation``'s table (``fields``'s arguments in ``kwargs``)."""
    return reworded(error, operation.function, fields(operation, shapes, **kwargs), dtype=dtype)


# ---- calls that NumPy or PyTorch would read otherwise ----------------------------------------------

#: Per function: its array argument(s) shown first, the arguments it takes by name after them,
#: and why.
_WINDOW = ("window_offsets", "window_sizes", "window_strides")
_BY_NAME = {
    "slice": (
        "x",
        ("offsets", "sizes", "strides"),
        "SLICE's sizes are the result's shape, where cd.slice1's window_sizes are the window read and "
        "ONNX's and JAX's slices take ends",
    ),
    "slice1": (
        "x",
        _WINDOW,
        "SLICE1's window_sizes are the window read (the result takes 1 + (window_sizes[i] - 1) // "
        "|window_strides[i]| elements), where cd.slice's sizes are the result's shape and ONNX's and JAX's "
        "slices take ends",
    ),
    "slice_grad": ("dy, input_shape", _WINDOW, "they are SLICE1's window, as cd.slice1 takes them"),
    "slice1_batch": ("x", _WINDOW, "they are SLICE1's windows, as cd.slice1 takes them"),
    "slice1_batch_grad": ("dy, input_shape", _WINDOW, "they are SLICE1's windows, as cd.slice1_batch takes them"),
}
#: What else the caller may have meant.
_INSTEAD = {"slice": ", or cd.strided_slice(x, key) for x[key]", "slice1": ", or cd.strided_slice(x, key) for x[key]"}


def positional(function: str, given: tuple) -> TypeError:
    """The ``TypeError`` for ``function`` called with ``given`` where its arguments are taken
    by name: it says how NumPy or PyTorch would read the call, and the call to write."""
    shown = ", ".join(shown_value(v) for v in given)
    if function == "split":
        return _split_positional(given, shown)
    arrays, names, why = _BY_NAME[function]
    written = ", ".join(f"{n}={_written(v)}" for n, v in zip(names, given))
    extra = len(given) - len(names)
    more = f" ({extra} more positional argument{'s' * (extra > 1)} than it takes)" if extra > 0 else ""
    return TypeError(
        f"cd.{function}({arrays}, {shown}): pass {', '.join(n + '=' for n in names)} by name{more}: {why}; "
        f"write cd.{function}({arrays}, {written}){_INSTEAD.get(function, '')}"
    )


def _written(value) -> str:
    """``value`` as the call to write shows it: a literal as it is, anything else as ``...``."""
    shown = shown_value(value)
    return shown if isinstance(value, (int, list, tuple)) and "..." not in shown else "..."


def _split_positional(given, shown):
    first = given[0]
    axis = f", axis={shown_value(given[1])}" if len(given) > 1 else ""
    if isinstance(first, (int, np.integer)) and not isinstance(first, (bool, np.bool_)):
        return TypeError(
            f"cd.split(x, {shown}): an integer by position reads as a number of parts to np.split but as a part "
            f"size to torch.split; pass parts={int(first)}{axis} ({int(first)} equal parts), or split_sizes= for "
            "the size of each part"
        )
    return TypeError(
        f"cd.split(x, {shown}): DirectML's split_sizes are part sizes, where np.split takes indices and "
        f"torch.split sizes or a part size; pass split_sizes={_written(first)}{axis} ({_parts(first)}), or use "
        "cudadml.numpy.split for NumPy's meaning"
    )


def _parts(sizes) -> str:
    """``parts of 5 and 5``: what sizes given as ``split_sizes`` make."""
    try:
        sizes = [operator.index(s) for s in sizes]
    except TypeError:
        return "parts of those sizes"
    if not sizes:
        return "no parts"
    if len(sizes) == 1:
        return f"one part of {sizes[0]}"
    return f"parts of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]}"

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
field the argument of the same meaning. The tables are the operators' own, each registered by
its module of ``cudadml.ops`` (``Operator.messages``), built with the pieces here (``array``,
``derived``, ``window``, ``bindings``, ...). ``reworded`` translates one error's violations through
it: every DirectML name in a message is looked up (a name that maps to ``None`` is a tensor
the call derives whose every rule another violation already says in the caller's words: that
violation is dropped), a few DirectML sentence shapes are said the Python way (``//`` for the
integer division, a feature level as the ``feature_level`` argument), and one complaint is
kept per value. The descriptors called directly keep DirectML's words exactly.

It also words the calls that NumPy or PyTorch would read differently (``positional``): the
DirectML-named functions take their window and split arguments by name, and say why (each
call class's ``POSITIONAL_HINT``).
"""

from __future__ import annotations

import re

from .errors import BindingError, ValidationError, shown_value
from .operators import REGISTRY
from .tensor import BOUNDS_HINT

__all__ = [
    "BY_KEY",
    "NEGATIVE_OFFSET",
    "PAST_THE_END",
    "WINDOW_ARGUMENTS",
    "array",
    "bindings",
    "derived",
    "fields",
    "in_callers_words",
    "of_words",
    "positional",
    "reworded",
    "window",
    "written",
]

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
    """DirectML's words of a rule, without the values (the caller's words have them, and the
    hint of what takes larger arrays)."""
    return _VALUE.sub("", re.sub(r"sum to -?\d+, not", "must sum to", body.replace(BOUNDS_HINT, "")))


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


# ---- the tables' pieces: each operator's module builds its table with them -------------------------


def array(tensor, name, *, sizes=None, ndim=None):
    """The entries of a DirectML tensor that is the caller's array ``name`` (``sizes``,
    ``ndim``: where its sizes are said otherwise, as an index's counts)."""
    return {
        tensor: name,
        f"{tensor}.Sizes[{{i}}]": sizes or f"{name}.shape[{{i}}]",
        f"{tensor}.DimensionCount": ndim or f"{name}.ndim",
        f"{tensor}.DataType": f"{name}.dtype",
    }


_DERIVED = {".Sizes[{i}]": None, ".DimensionCount": None, ".DataType": None, "": None}


def derived(tensor, **said):
    """A tensor the call derives (a result's shape), each of whose rules another violation
    says in the caller's words (None), except the fields given in ``said``."""
    table = {f"{tensor}{attr}": None for attr in _DERIVED}
    table.update({f"{tensor}{attr}": v for attr, v in said.items()})
    return table


def window(offsets, sizes, strides):
    """SLICE1's window arrays as the caller's arguments of those names."""
    table = {}
    for field, name in (("InputWindowOffsets", offsets), ("InputWindowSizes", sizes), ("InputWindowStrides", strides)):
        table[f"{field}[{{i}}]"] = f"{name}[{{i}}]"
        table[f"len({field})"] = f"len({name})"
    return table


#: SLICE1's window arrays, said of an index (``strided_slice`` and its gradient).
BY_KEY = {
    "InputWindowOffsets[{i}]": "the start of key along axis {i}",
    "InputWindowSizes[{i}]": "the span of key along axis {i}",
    "InputWindowStrides[{i}]": "the step of key along axis {i}",
}


def bindings(inputs, outputs):
    """The bindings of execute (``inputs[0]``, ``outputs[0]``) as the caller's arrays."""
    return {"inputs[{i}]": inputs, "outputs[{i}]": outputs}


def fields(operation, shapes=(), *, window=None, binding_inputs=None) -> dict:
    """The table of ``operation``'s call on arrays of ``shapes``: DirectML's names (keys with
    ``{i}`` for a dimension, ``{k}`` for a tensor in a list) to the caller's words (a format
    string, a function of ``(i, k)``, or None: dropped, said by another violation).

    ``window``: for many windows, the window the names are of (None: of every window: a
    shared row, the tensors); ``binding_inputs``: for ``slice1_batch_grad``, how many arrays
    ``dy`` is (one array, or a list). The table is the operator's (``Operator.messages``)."""
    return REGISTRY[operation.function].messages(operation, shapes, window, binding_inputs)


#: Ways around a rule that NumPy's indexing has, and the function that takes them (a table's
#: ``HINTS``: a pattern of the caller's words, and what to say after them).
PAST_THE_END = (r"exceeds x\.shape|reads past x\.shape", "cd.strided_slice(x, key) clips to x, as NumPy's slices do")
NEGATIVE_OFFSET = (
    r"^(window_)?offsets\[\d+\] = -",
    "cd.strided_slice(x, key) takes indices from the end, as NumPy does",
)


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

#: The window arguments, by name (a ``POSITIONAL_HINT``'s names).
WINDOW_ARGUMENTS = ("window_offsets", "window_sizes", "window_strides")


def positional(function: str, given: tuple) -> TypeError:
    """The ``TypeError`` for ``function`` called with ``given`` where its arguments are taken
    by name: it says how NumPy or PyTorch would read the call, and the call to write.

    The words are the call class's ``POSITIONAL_HINT``: ``(arrays, names, why, instead)``, its
    array argument(s) shown first, the arguments it takes by name after them, why, and what else
    the caller may have meant; or a function of ``given`` that words the error itself."""
    hint = REGISTRY[function].call.POSITIONAL_HINT
    if callable(hint):
        return hint(given)
    arrays, names, why, instead = hint
    shown = ", ".join(shown_value(v) for v in given)
    said = ", ".join(f"{n}={written(v)}" for n, v in zip(names, given))
    extra = len(given) - len(names)
    more = f" ({extra} more positional argument{'s' * (extra > 1)} than it takes)" if extra > 0 else ""
    return TypeError(
        f"cd.{function}({arrays}, {shown}): pass {', '.join(n + '=' for n in names)} by name{more}: {why}; "
        f"write cd.{function}({arrays}, {said}){instead}"
    )


def written(value) -> str:
    """``value`` as the call to write shows it: a literal as it is, anything else as ``...``."""
    shown = shown_value(value)
    return shown if isinstance(value, (int, list, tuple)) and "..." not in shown else "..."

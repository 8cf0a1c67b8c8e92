"""The package's house rules: imports only go down the layers, and an array library plugs in
through the adapter interface alone."""

import ast
import pathlib

import numpy as np
import pytest

import cudadml as cd
from cudadml.run import adapters, runner

PACKAGE = pathlib.Path(cd.__file__).parent

#: The layers, bottom first: each a folder of the package, and last the package's own modules (the
#: public face). A module may import only modules of its own layer or below, with no cycle.
LAYERS = ["core", "ops", "backends", "run", "numpy", "graphs", "interop", "display", ""]
#: The most modules the top of the package holds: the public face, whose layers are folders.
TOP_MODULES = 8


def _layer(module):
    """``module``'s layer: the folder of the package it lies in ("" for the package's own modules)."""
    first = module.split(".")[1:2]
    return first[0] if first and first[0] in LAYERS else ""


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path, source=None):
    """Every cudadml module ``path`` imports (``source``: its text, read by default), at
    module level or inside a function."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "cudadml")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            if module.split(".")[0] != "cudadml":
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                sub = f"{module}.{alias.name}"
                found.add(sub if sub in MODULES else module)
    return found - {name}


MODULES = {_module_name(p) for p in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.c")]}
GRAPH = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}
GRAPH.update({_module_name(p): set() for p in PACKAGE.rglob("*.c")})  # compiled modules import nothing of ours
RANK = {m: LAYERS.index(_layer(m)) for m in GRAPH}


def test_every_folder_is_a_layer():
    folders = {p.parent.relative_to(PACKAGE).parts[0] for p in PACKAGE.glob("*/__init__.py")}
    assert folders == set(LAYERS) - {""}


def test_the_top_holds_the_public_face_only():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= TOP_MODULES, top


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_go_down_the_layers(module):
    up = sorted(m for m in GRAPH[module] if RANK[m] > RANK[module])
    assert not up, f"{module} ({_layer(module) or 'top'}) imports {up} from a layer above it"


def test_no_import_cycle():
    done, path = set(), []

    def visit(module):
        if module in path:
            raise AssertionError(f"import cycle: {' -> '.join([*path[path.index(module) :], module])}")
        if module in done:
            return
        path.append(module)
        for m in sorted(GRAPH[module]):
            visit(m)
        path.pop()
        done.add(module)

    for module in sorted(GRAPH):
        visit(module)


def _private_uses(path, source=None):
    """``name`` for every private name of another module that ``path`` reaches: imported from it
    (``from .x import _y``) or read off it (``x._y``). A package's private module (``_launch``,
    ``_bench``) is no name of another module."""
    tree = ast.parse(path.read_text() if source is None else source)
    ours, found = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "cudadml"):
            for alias in node.names:
                module = f"{node.module}.{alias.name}" if node.module else alias.name
                is_module = any(m.endswith(f".{alias.name}") or m.endswith(module) for m in MODULES)
                if alias.name.startswith("_") and not alias.name.startswith("__") and not is_module:
                    found.append(alias.name)
                ours.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in ours
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m != "cudadml.backends._launch"))
def test_no_module_reaches_for_another_modules_private_names(module):
    path = PACKAGE.parent.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    assert _private_uses(path) == []


def test_the_private_names_test_finds_them():
    path = PACKAGE / "run" / "arrays.py"
    source = path.read_text() + "\n\nfrom .runner import _ENTRIES\nfrom . import runner\nrunner._compiled\n"
    assert _private_uses(path, source) == ["_ENTRIES", "runner._compiled"]


def test_the_layering_test_finds_a_lazy_climb():
    """A function-level import counts: the core reaching up to the pictures is found."""
    path = PACKAGE / "core" / "operators.py"
    found = _imports(path, path.read_text() + "\n\ndef _draw(self):\n    from ..display import explain\n")
    assert "cudadml.display" in found - GRAPH["cudadml.core.operators"]
    assert RANK["cudadml.display"] > RANK["cudadml.core.operators"]


# ---- a toy adapter: a NumPy subclass that keeps its kind ---------------------------------------------


class Tagged(np.ndarray):
    """A NumPy subclass the plain route refuses (its meaning would be dropped)."""


class TaggedAdapter:
    """Only the interface of ``cudadml.run.adapters``: recognise, check, run and make results."""

    def takes(self, inputs, outs):
        return any(isinstance(a, Tagged) for a in [*inputs, *(outs or ())])

    def arrays(self, operation, inputs, outs):
        for a in [*inputs, *(outs or ())]:
            if not isinstance(a, Tagged):
                raise TypeError(f"{operation.function}: a Tagged call takes only Tagged arrays")
        return inputs, outs

    def run(self, operation, inputs, outs, stream, chunks):
        views = [np.asarray(a) for a in inputs]
        out_views = None if outs is None else [np.asarray(o) for o in outs]
        results = runner.run(operation, views, out_views, stream)
        return outs if outs is not None else [r.view(Tagged) for r in results]


@pytest.fixture
def tagged():
    cd.register_adapter(__name__, TaggedAdapter)
    yield
    cd.register_adapter(__name__, None)


def test_a_toy_adapter_takes_only_the_interface(tagged, rng):
    x = rng.integers(0, 100, (6, 8)).astype(np.int32)
    t = x.view(Tagged)
    y = cd.slice1(t, window_offsets=[1, 2], window_sizes=[4, 6], window_strides=[-2, 3])
    assert type(y) is Tagged and np.array_equal(y, x[4:0:-2, 2:8:3])
    parts = cd.split(t, split_sizes=[1, 5], axis=0)
    assert [type(p) for p in parts] == [Tagged, Tagged] and np.array_equal(parts[1], x[1:])
    joined = cd.join([t, t], axis=1)
    assert type(joined) is Tagged and np.array_equal(joined, np.concatenate([x, x], 1))
    assert np.array_equal(cd.strided_slice(t, np.s_[::-1, 3]), x[::-1, 3])
    out = np.full((3, 8), -1, np.int32).view(Tagged)
    assert cd.strided_slice(t, np.s_[::2], out=out) is out and np.array_equal(out, x[::2])
    with pytest.raises(TypeError, match="a Tagged call takes only Tagged arrays"):
        cd.join([t, x])
    with pytest.raises(TypeError, match=r"slice1: window_offsets\[0\] = 1.0 must be an integer, not float"):
        cd.slice1(t, window_offsets=[1.0, 2], window_sizes=[4, 6])
    with pytest.raises(cd.DescriptorError, match=r"exceeds x\.shape"):
        cd.slice1(t, window_offsets=[5, 0], window_sizes=[4, 6])


def test_without_the_adapter_the_subclass_is_refused(rng):
    t = np.zeros((2, 2), np.float32).view(Tagged)
    with pytest.raises(TypeError, match="a NumPy subclass whose meaning"):
        cd.slice1(t, window_offsets=[0, 0], window_sizes=[1, 1])


def test_adapters_are_asked_only_for_libraries_in_use(monkeypatch):
    loaded = []
    monkeypatch.setattr(adapters, "_REGISTERED", [("no.such.library", lambda: loaded.append(1))])
    monkeypatch.setattr(adapters, "_LOADED", {})
    assert np.array_equal(cd.join([np.arange(2), np.arange(3)]), [0, 1, 0, 1, 2])
    assert loaded == []


@pytest.mark.parametrize(("module", "load"), [(None, TaggedAdapter), ("mylib", "not callable"), (b"mylib", None)])
def test_register_adapter_takes_a_module_name_and_a_callable(module, load):
    with pytest.raises(TypeError, match="register_adapter takes a module name and a callable"):
        cd.register_adapter(module, load)


def test_dir_lists_the_public_names_only():
    import importlib
    import subprocess
    import sys

    listed = subprocess.run(
        [sys.executable, "-c", "import cudadml; print(' '.join(dir(cudadml)))"], capture_output=True, text=True
    ).stdout.split()
    assert listed == sorted([*cd.__all__, "CACHE_BYTES", "__version__", "numpy", "onnx", "testing"])
    assert not {"arrays", "calls", "runner", "backends", "operators"} & set(listed)
    assert cd.numpy.concatenate is importlib.import_module("cudadml.numpy").concatenate


# ---- one place per operator -----------------------------------------------------------------


def _rules(op):
    """The functions ``op`` registers: its rules, and those its declarations hold (a Dask
    graph's piece, a picture's call)."""
    fields = ("gradient", "batched", "via", "messages")
    rules = {f: getattr(op, f, None) for f in fields}
    if op.chunked is not None:
        rules["chunked.piece"] = op.chunked.piece
    if op.picture is not None:
        rules["picture.drawn"] = op.picture.drawn
    return {f: rule for f, rule in rules.items() if rule is not None}


def test_each_operator_is_defined_in_its_module_of_ops():
    """Its call, its descriptor and every rule it registers come from one module of cudadml.ops,
    and every module there registers what it defines."""
    from cudadml import ops
    from cudadml.core.operators import REGISTRY

    modules = set()
    for name, op in REGISTRY.items():
        home = op.call.__module__
        assert home.startswith("cudadml.ops."), name
        modules.add(home)
        if op.desc is not None:
            assert op.desc.__module__ == home, (name, op.desc)
        for field, rule in _rules(op).items():
            assert getattr(rule, "__module__", home) == home, (name, field, rule)
    assert modules == {f"cudadml.ops.{p.stem}" for p in pathlib.Path(ops.__file__).parent.glob("*.py")} - {
        "cudadml.ops.__init__"
    }


def test_each_registered_operator_has_a_table_of_cases():
    """The generic GPU, emulated, PyTorch and Dask tests read tests/cases.py: an operator without
    a table would go untested."""
    import cases

    from cudadml.core.operators import REGISTRY

    assert {op.name for op in cases.OPS} == set(REGISTRY)


def test_no_adapter_names_an_operator():
    """The other layers find the operators through the registry, and build their graphs and
    pictures from what each declares (``Operator.chunked``, ``Operator.picture``): no module
    outside cudadml.ops imports an operator's module or its call classes."""
    from cudadml.core.operators import REGISTRY

    calls = {op.call.__name__ for op in REGISTRY.values()}
    modules = ("core/messages.py", "graphs/graph.py", "run/runner.py", "interop/torch.py", "interop/dask.py")
    for path in [*PACKAGE.joinpath("display").glob("*.py"), *(PACKAGE / m for m in modules)]:
        module, text = path.relative_to(PACKAGE), path.read_text()
        tree = ast.parse(text)
        named = {
            a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module and "ops" in node.module.split(".")
            for a in node.names
        }
        assert not named & calls, (module, named & calls)
        assert not any(f"ops.{c}" in text for c in calls), module


# ---- the public paths -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "names"),
    [
        ("cudadml", ["slice1", "SliceOperatorDesc", "fuse", "explain", "GraphDesc", "CACHE_BYTES"]),
        ("cudadml.numpy", ["concatenate", "pad", "roll"]),
        ("cudadml.onnx", ["load", "InferenceSession"]),
        ("cudadml.testing", ["aligned_empty", "random_array", "TensorBuffer"]),
        ("cudadml.errors", ["BindingError", "DescriptorError", "ValidationError"]),
    ],
)
def test_the_paths_the_docs_name_import(module, names):
    """The README, the guide and the API reference name these: the folders inside may move, these
    stay."""
    import importlib

    imported = importlib.import_module(module)
    assert all(hasattr(imported, n) for n in names), [n for n in names if not hasattr(imported, n)]


def test_the_errors_are_shown_by_their_public_module():
    assert cd.errors.DescriptorError.__module__ == "cudadml.errors"
    assert cd.CACHE_BYTES == 64 * 2**20


# ---- operators found from their folder --------------------------------------------------------------

#: An operator of its own module: SLICE1 of the 2 x 2 window at the origin, under a name of its
#: own, with what the layers above build from: its Dask graph (a window per chunk) and its picture.
_CORNER = """
from cudadml.core import operators
from cudadml.ops.slice1 import Slice1


class Corner(Slice1):
    __slots__ = ()
    function = NAME = "corner"

    @classmethod
    def of(cls, shape):
        return super().of(shape, (), [0, 0], [2, 2], [1, 1], None, None, True)


def _piece(operation, windows, rank):
    offsets = tuple(start for start, _, _ in windows)
    counts = tuple(count for _, _, count in windows)
    return operation._replace(offsets=offsets, sizes=counts, strides=(1,) * rank, output_sizes=counts)


OPERATOR = operators.register(
    operators.Operator(
        "corner", Corner, chunked=operators.Chunking("window", _piece), picture=operators.Picture("gather")
    )
)
"""


def corner(x):
    """The toy operator's array function, as ``cudadml.run.arrays`` writes each: its operation
    normalised from the arrays the adapter holds, run by the route every call takes."""
    from cudadml.core.operators import REGISTRY
    from cudadml.run.arrays import run_call

    call = REGISTRY["corner"].call
    return run_call(call, [x], None, lambda inputs: call.of(inputs[0].shape), None, None)[0]


def test_an_operator_is_its_module_in_the_ops_folder(tmp_path):
    """A module added to the folder, and nothing else: registered when the package discovers its
    operators, run on NumPy arrays, traced by ``cd.fuse`` as a graph node, drawn by ``explain``
    and chunked by the Dask adapter."""
    import sys

    from cudadml import ops
    from cudadml.core.operators import REGISTRY

    (tmp_path / "corner.py").write_text(_CORNER)
    ops.__path__.append(str(tmp_path))
    try:
        ops.discover()
        assert list(REGISTRY)[-1] == "corner"
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        assert corner(x).tolist() == [[0, 1], [4, 5]]
        fused = cd.fuse(lambda a: corner(a[::-1]))
        assert fused(x).tolist() == [[8, 9], [4, 5]]  # (a call no graph node holds is refused)
        assert "corner" in repr(cd.explain(corner, (3, 4)))
        da = pytest.importorskip("dask.array")
        chunked = corner(da.from_array(x, chunks=(2, 3)))
        assert type(chunked) is da.Array and chunked.compute().tolist() == [[0, 1], [4, 5]]
    finally:
        ops.__path__.remove(str(tmp_path))
        REGISTRY.pop("corner", None)
        sys.modules.pop("cudadml.ops.corner", None)
        vars(ops).pop("corner", None)

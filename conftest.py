"""Doctests that need an optional library run where it is installed and are skipped, by name,
where it is not: the package modules that import one are not collected, and README.md's
sections whose examples import one are skipped. The run's summary names each and the library."""

import doctest
import importlib.util
import pathlib
import re

import pytest

#: The optional libraries, and the extra that installs each.
EXTRAS = {
    "torch": "torch",
    "dask": "dask",
    "distributed": "dask",
    "matplotlib": "docs",
    "onnx": "onnx",
    "onnxruntime": "onnx",
}
_IMPORT = re.compile(r"^\s*(?:import|from)\s+(\w+)", re.MULTILINE)
_HEADING = re.compile(r"^#{2,6} (.+)$", re.MULTILINE)
_skipped: list[str] = []


def _missing(module):
    return module in EXTRAS and importlib.util.find_spec(module) is None


def _why(module):
    return f'{module} is not installed (pip install -e ".[{EXTRAS[module]}]")'


_TOP_LEVEL_IMPORT = re.compile(r"^(?:import|from)\s+(\w+)", re.MULTILINE)  # (at module level: no indent)

collect_ignore = []
for _file in sorted(pathlib.Path(__file__).parent.glob("cudadml/**/*.py")):
    _path = _file.relative_to(pathlib.Path(__file__).parent).as_posix()
    for _module in dict.fromkeys(_TOP_LEVEL_IMPORT.findall(_file.read_text())):
        if _missing(_module):
            collect_ignore.append(_path)
            _skipped.append(f"{_path}: doctests not collected: {_why(_module)}")
            break


def _skip_sections(item):
    """Marks SKIP on the examples of each section of a Markdown doctest that imports a missing
    optional library (a section runs whole or not at all: its examples build on each other)."""
    text = item.dtest.docstring
    starts = [0, *(text.count("\n", 0, m.start()) for m in _HEADING.finditer(text))]
    titles = ["(top)", *(m.group(1) for m in _HEADING.finditer(text))]
    sections = {}
    for example in item.dtest.examples:
        k = max(i for i, start in enumerate(starts) if start <= example.lineno)
        sections.setdefault(k, []).append(example)
    for k, examples in sections.items():
        missing = sorted({m for e in examples for m in _IMPORT.findall(e.source) if _missing(m)})
        if missing:
            for example in examples:
                example.options[doctest.SKIP] = True
            _skipped.append(
                f"{item.name}: the {len(examples)} examples of section {titles[k]!r} skipped: "
                + "; ".join(map(_why, missing))
            )


def pytest_collection_modifyitems(items):
    for item in items:
        if isinstance(item, pytest.DoctestItem) and item.name.endswith(".md"):
            _skip_sections(item)


def pytest_terminal_summary(terminalreporter):
    if _skipped:
        terminalreporter.section("optional libraries")
        for line in _skipped:
            terminalreporter.line(line)

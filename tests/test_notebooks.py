"""Execute every notebook in notebooks/ and fail on any cell error.

The kernel is pinned to the interpreter running pytest: a ``python3`` kernel spec written
to a temporary ``JUPYTER_PATH`` (which takes precedence over user and system kernel specs)
launches ``sys.executable``, and the kernel sees the same ``cudadml`` as this process.
A cell prepended in memory checks both before the notebook's own cells run.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import cudadml  # noqa: E402

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
TIMEOUT_S = 300


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOKS_DIR}"


def _prepend_path(monkeypatch, name, entry):
    rest = [p for p in os.environ.get(name, "").split(os.pathsep) if p]
    monkeypatch.setenv(name, os.pathsep.join([entry, *rest]))


@pytest.fixture
def python3_kernel(tmp_path, monkeypatch):
    """A ``python3`` kernel spec that runs this interpreter, with this process's cudadml importable."""
    spec_dir = tmp_path / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (pytest)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    _prepend_path(monkeypatch, "JUPYTER_PATH", str(tmp_path / "jupyter"))
    _prepend_path(monkeypatch, "PYTHONPATH", str(Path(cudadml.__file__).resolve().parents[1]))
    return "python3"


def _environment_check_cell():
    expected = {"executable": sys.executable, "prefix": sys.prefix, "cudadml": str(Path(cudadml.__file__).resolve())}
    source = (
        "import sys, pathlib, cudadml\n"
        f"_expected = {expected!r}\n"
        "_got = {'executable': sys.executable, 'prefix': sys.prefix,\n"
        "        'cudadml': str(pathlib.Path(cudadml.__file__).resolve())}\n"
        "assert _got == _expected, f'the kernel runs {_got}, the tests run {_expected}'\n"
        "del _expected, _got"
    )
    return nbformat.v4.new_code_cell(source)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, python3_kernel):
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, _environment_check_cell())
    client = nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT_S,
        kernel_name=python3_kernel,
        allow_errors=False,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [
        output
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, errors

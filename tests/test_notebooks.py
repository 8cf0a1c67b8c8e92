"""Execute every notebook in notebooks/ and compare its outputs with the committed ones.

The notebooks are committed executed. The test runs each again and compares, cell by cell,
the text of what each code cell printed and displayed (``text/plain``, ``text/html``, SVG);
not images (PNG bytes depend on the matplotlib build), execution counts or metadata, nor the
outputs of cells tagged ``volatile`` (the machine's backend, say). After a change that
alters an output, run ``python tests/test_notebooks.py`` to execute the notebooks again and
write their new outputs.

The kernel is pinned to the interpreter running pytest: a ``python3`` kernel spec written
to a temporary ``JUPYTER_PATH`` (which takes precedence over user and system kernel specs)
launches ``sys.executable``, and the kernel sees the same ``cudadml`` as this process.
A cell prepended in memory checks both before the notebook's own cells run.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

import cudadml  # noqa: E402

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
TIMEOUT_S = 300
VOLATILE = "volatile"
COMPARED = ("text/plain", "text/html", "image/svg+xml")
#: The optional packages a notebook may need; each one it imports is named in its first cell.
#: (04 imports torchvision where it is installed, and does the same without it.)
OPTIONAL = ("torch", "dask", "matplotlib")
_NEEDS = re.compile(r"^\*\*Needs:\*\* (.*)$", re.MULTILINE)


def needs(nb) -> list[str]:
    """The packages named (in backquotes) on the ``**Needs:**`` line of the first cell."""
    found = _NEEDS.search(nb.cells[0].source)
    assert found, "the first cell has no **Needs:** line"
    return re.findall(r"`(\w+)`", found.group(1))


def test_there_are_notebooks():
    assert NOTEBOOKS, f"no notebooks in {NOTEBOOKS_DIR}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_the_first_cell_names_every_optional_package_the_notebook_imports(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    imported = set(re.findall(r"^\s*(?:import|from) (\w+)", code, re.MULTILINE))
    imported |= {"matplotlib"} if "bandwidth_chart" in code else set()  # benchmarks/chart.py draws with it
    assert sorted(imported & set(OPTIONAL)) == sorted(needs(nb))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_no_committed_output_rounds_a_share_down_to_0_percent(path):
    """A share of 0.27% printed as "0%" reads as nothing at all."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            text = output.get("text", "") + output.get("data", {}).get("text/plain", "")
            assert not re.search(r"(?<![\d.])0%", text), f"{path.name}: {text}"


def test_the_chart_legend_says_what_a_revision_is():
    """bench.py names the revision it times against by its commit ("cudadml at 38b83d9"), which
    a reader of the chart cannot place: notebook 02 gives each such participant a label."""
    pytest.importorskip("matplotlib")
    sys.path.insert(0, str(NOTEBOOKS_DIR.parent / "benchmarks"))
    try:
        from chart import bandwidth_chart
    finally:
        sys.path.pop(0)
    results = NOTEBOOKS_DIR.parent / "benchmarks" / "results" / "h100.json"
    code = "\n".join(c.source for c in nbformat.read(NOTEBOOKS_DIR / "02_tasks.ipynb", as_version=4).cells)
    labels = ast.literal_eval(re.search(r"^labels = (\{.*\})$", code, re.MULTILINE).group(1))
    figure = bandwidth_chart(results, labels=labels)
    legend = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
    assert "cudadml (this release)" in legend
    assert not any(re.search(r" at [0-9a-f]{7,}$", label) for label in legend), legend


def _prepended(name, entry):
    rest = [p for p in os.environ.get(name, "").split(os.pathsep) if p]
    return os.pathsep.join([entry, *rest])


def _kernel_environment(directory):
    """The variables under which a ``python3`` kernel runs this interpreter, with this
    process's cudadml importable; the kernel spec is written below ``directory``."""
    spec_dir = Path(directory) / "jupyter" / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (cudadml)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return {
        "JUPYTER_PATH": _prepended("JUPYTER_PATH", str(Path(directory) / "jupyter")),
        "PYTHONPATH": _prepended("PYTHONPATH", str(Path(cudadml.__file__).resolve().parents[1])),
    }


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


def execute(nb):
    """Run the notebook ``nb`` in place with the ``python3`` kernel (its environment set up by
    the caller); raises ``CellExecutionError`` on the first failing cell."""
    nbclient.NotebookClient(
        nb,
        timeout=TIMEOUT_S,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(NOTEBOOKS_DIR)}},
    ).execute()


def compared(nb):
    """Per code cell not tagged volatile: its outputs as compared, streams of one name joined."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code" or VOLATILE in cell.metadata.get("tags", []):
            continue
        outputs = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                if outputs and outputs[-1][0] == output.name:
                    outputs[-1] = (output.name, outputs[-1][1] + output.text)
                else:
                    outputs.append((output.name, output.text))
            elif output.output_type == "error":
                outputs.append(("error", output.ename, output.evalue))
            else:
                outputs.append(("data", {k: v for k, v in output.data.items() if k in COMPARED}))
        cells.append((cell.source, outputs))
    return cells


@pytest.fixture
def kernel_environment(tmp_path, monkeypatch):
    for name, value in _kernel_environment(tmp_path).items():
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_and_shows_what_was_committed(path, kernel_environment):
    committed = nbformat.read(path, as_version=4)
    missing = [p for p in needs(committed) if importlib.util.find_spec(p) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        pytest.skip(f'{path.name} needs {", ".join(missing)}, which {verb} not installed (pip install -e ".[all]")')
    assert any(cell.get("outputs") for cell in committed.cells), f"{path.name} is committed without outputs"
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, _environment_check_cell())
    execute(nb)
    nb.cells.pop(0)
    for (source, got), (_, expected) in zip(compared(nb), compared(committed)):
        assert got == expected, f"{path.name}: the cell\n{source}\nnow shows {got}, committed {expected}"


if __name__ == "__main__":  # execute every notebook and write its outputs
    with tempfile.TemporaryDirectory() as directory:
        os.environ.update(_kernel_environment(directory))
        for path in NOTEBOOKS:
            nb = nbformat.read(path, as_version=4)
            execute(nb)
            nbformat.write(nb, path)
            print(f"executed {path.name}")

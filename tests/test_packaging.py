"""What the README and CI promise about installing and testing: extras that pull only the
CUDA components cudadml uses, a default test run that leaves the minutes of building every
kernel to ``pytest -m every_kernel``, which CI runs, and CI's first stage running the README's
two commands as they are written."""

import configparser
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("cuda", ["12", "13"])
def test_cuda_extras_pull_cupy_with_only_nvrtc_and_the_runtime(cuda):
    setup = configparser.ConfigParser()
    setup.read(ROOT / "setup.cfg")
    extra = setup["options.extras_require"][f"cuda{cuda}"].split()
    assert extra == [f"cupy-cuda{cuda}x>=14", f"cuda-toolkit[cudart,nvrtc]=={cuda}.*"]


def test_the_default_run_deselects_every_kernel_and_ci_runs_it(pytestconfig):
    addopts = " ".join(pytestconfig.getini("addopts"))
    assert re.search(r"-m '?not every_kernel and not fuzz'?$", addopts)
    assert re.search(r"^pytest -m every_kernel\b", (ROOT / ".ci" / "run").read_text(), re.M)


def readme_commands():
    """The README's Quickstart commands: its first two ``bash`` blocks, one line each."""
    blocks = re.findall(r"^```bash\n(.*?)^```$", (ROOT / "README.md").read_text(), re.M | re.S)
    return [block.strip() for block in blocks[:2]]


def test_the_readme_gives_two_commands_and_ci_runs_them_before_installing_anything_else():
    assert readme_commands() == [
        'pip install -e ".[cuda13]" && python -m cudadml',
        'pip install -e ".[cuda13,test]" && pytest',
    ]
    code = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if not line.lstrip().startswith("#")]
    first_install = next(k for k, line in enumerate(code) if "pip install" in line or "apt-get install" in line)
    first_stage = next(k for k, line in enumerate(code) if "< <(readme_commands)" in line)
    assert first_stage < first_install


def test_the_readme_is_a_short_tour_and_the_guide_has_the_long_form():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    assert "## Which function do I want" in readme and "docs/guide.md" in readme
    assert "## Descriptor layer" in (ROOT / "docs" / "guide.md").read_text()


def test_a_newcomer_is_told_how_to_open_the_notebooks_and_install_pytorch_without_a_gpu():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    extra = config["options.extras_require"]["notebooks"].split()
    assert {re.match(r"[\w-]+", requirement).group() for requirement in extra} == {"jupyterlab", "nbconvert"}
    command = 'pip install -e ".[notebooks]" && jupyter lab notebooks/'
    assert command in (ROOT / "README.md").read_text() and command not in readme_commands()
    guide = (ROOT / "docs" / "guide.md").read_text()
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in guide


def test_every_subpackage_is_in_the_wheel():
    """setup.cfg lists its packages by name: a new folder of modules left out installs without
    them (the editable install of development would not notice)."""
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    listed = set(config["options"]["packages"].split())
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "cudadml").rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)

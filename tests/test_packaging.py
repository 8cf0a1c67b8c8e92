"""What the README and CI promise about installing and testing: extras that pull only the
CUDA components cudadml uses, and a default test run that leaves the minutes of NVRTC
compiling to ``pytest -m nvrtc``, which CI runs."""

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


def test_the_default_run_deselects_nvrtc_and_ci_runs_it(pytestconfig):
    addopts = " ".join(pytestconfig.getini("addopts"))
    assert re.search(r"-m '?not nvrtc'?$", addopts)
    assert re.search(r"^pytest -m nvrtc\b", (ROOT / ".ci" / "run").read_text(), re.M)

"""Shared fixtures: the array module under test (NumPy always, on the reference backend and on
the emulated kernels; CuPy where a GPU is usable)."""

import zlib

import numpy as np
import pytest

from cudadml.backends import gpu_status
from cudadml.testing import emulated

GPU, GPU_REASON = gpu_status()


def pytest_configure(config):
    config.addinivalue_line("markers", "emulate: runs the CUDA kernels emulated on the host (needs a C++ compiler)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # Skipped here rather than by a skip mark: pytest -ra reports a mark's skip at each test's
    # own line (one summary line per test), an explicit skip where it is raised (one line for all).
    if not GPU and "gpu" in item.keywords and not any(item.iter_markers("skip")):
        pytest.skip(f"GPU tests: {GPU_REASON}")


def _cupy():
    import cupy

    return cupy


@pytest.fixture(scope="session")
def say(pytestconfig):
    """Writes a line to the terminal at once, past output capture: for fixtures that take a while."""
    plugins = pytestconfig.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")

    def say(text):
        if reporter is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(text)

    return say


@pytest.fixture(
    params=["numpy", pytest.param("emulate", marks=pytest.mark.emulate), pytest.param("cupy", marks=pytest.mark.gpu)]
)
def xp(request):
    """The array module whose arrays the operators run on: NumPy on the reference backend,
    NumPy through the kernels emulated on the host (each group of kernels built on first use),
    or CuPy through the kernels on the GPU."""
    if request.param == "emulate":
        with emulated():
            yield np
    else:
        yield np if request.param == "numpy" else _cupy()


@pytest.fixture
def rng(request):
    """A generator seeded per test, so a failure reproduces."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))

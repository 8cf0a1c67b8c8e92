"""Shared fixtures: the array module under test (NumPy always, on the reference backend and on
the emulated kernels; CuPy where a GPU is usable)."""

import time
import zlib

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import gpu_status
from cudadml.testing import emulated

GPU, GPU_REASON = gpu_status()


def pytest_configure(config):
    config.addinivalue_line("markers", "emulate: runs the CUDA kernels emulated on the host (needs a C++ compiler)")


def pytest_collection_modifyitems(config, items):
    if GPU:
        return
    skip = pytest.mark.skip(reason=f"no usable GPU: {GPU_REASON}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


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


@pytest.fixture(scope="session")
def emulation_libraries(say):
    """Every emulated kernel built once, on all cores (kept on disk, so later runs load them)."""
    from cudadml.backends import emulate

    say(f"emulation: building (or loading) every kernel with {emulate.compiler()} in {emulate.cache_dir()} ...")
    started = time.perf_counter()
    count = cd.precompile(backend="emulate", progress=False)
    say(f"emulation: {count} kernels ready in {time.perf_counter() - started:.1f} s")


@pytest.fixture(
    params=["numpy", pytest.param("emulate", marks=pytest.mark.emulate), pytest.param("cupy", marks=pytest.mark.gpu)]
)
def xp(request):
    """The array module whose arrays the operators run on: NumPy on the reference backend,
    NumPy through the kernels emulated on the host, or CuPy through the kernels on the GPU."""
    if request.param == "emulate":
        request.getfixturevalue("emulation_libraries")
        with emulated():
            yield np
    else:
        yield np if request.param == "numpy" else _cupy()


@pytest.fixture
def rng(request):
    """A generator seeded per test, so a failure reproduces."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))

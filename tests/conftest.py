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
def emulation_libraries():
    """Every emulated kernel built once, on all cores (the libraries are cached on disk too)."""
    from cudadml.backends import emulate

    return emulate.build_all()


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

"""Shared fixtures: the array module under test (NumPy always; CuPy where a GPU is usable)."""

import zlib

import numpy as np
import pytest

from cudadml.backends import gpu_status

GPU, GPU_REASON = gpu_status()


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


@pytest.fixture(params=["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def xp(request):
    """The array module whose arrays the operators run on: the reference backend, or the kernels."""
    return np if request.param == "numpy" else _cupy()


@pytest.fixture
def rng(request):
    """A generator seeded per test, so a failure reproduces."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))

"""CuPy's own tests of the functions that ``cudadml.numpy`` provides, run against it.

The ``test_*.py`` files here are CuPy's, as CuPy wrote them (github.com/cupy/cupy, commit
6b6d9563c4f7410cd1866a11b2f71a60dd45a68c: tests/cupy_tests/manipulation_tests/test_join.py,
test_split.py, test_rearrange.py and padding_tests/test_pad.py; MIT licence, LICENSE_CUPY).
For the duration of each of their tests, ``cupy.concatenate`` ... ``cupy.pad`` are
``cudadml.numpy``'s functions, so every ``xp.concatenate(...)`` with ``xp`` CuPy (and every
``cupy.concatenate(...)``) runs cudadml's kernels and is compared with NumPy as CuPy compares
its own. Every test here needs a GPU: each is marked ``gpu`` (skipped without one), and none is
collected where CuPy cannot be imported.

Tests of what is not ``cudadml.numpy``'s are skipped, with the reason (``NOT_OURS``): CuPy's own
``row_stack`` and ``rot90``, and arrays on two GPUs. ``pad`` runs every mode (those that compute
values by CuPy's own pad).
"""

from __future__ import annotations

import pathlib

import pytest

#: The functions patched onto the ``cupy`` module.
FUNCTIONS = (
    "concatenate",
    "stack",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "pad",
)

HERE = pathlib.Path(__file__).parent

try:
    import cupy
    import cupy.testing
except Exception:  # no CuPy (or one that cannot load): nothing here can run
    collect_ignore_glob = ["test_*.py"]
    cupy = None

#: Tests of what is not cudadml.numpy's, by file and name prefix: the reason each is skipped.
NOT_OURS = {
    "test_join.py": {
        "test_row_stack": "row_stack is CuPy's own (NumPy deprecated it), not one of cudadml.numpy's functions",
        "test_concatenate_large_different_devices": (
            "arrays on two GPUs: CuPy's peer-access warning; cudadml binds arrays of one device"
        ),
    },
    "test_rearrange.py": {"TestRot90": "rot90 is CuPy's own, not one of cudadml.numpy's functions"},
}


def pytest_configure(config):
    """CuPy's markers (cupy.testing's and its suite's), for --strict-markers."""
    config.addinivalue_line("markers", "thread_unsafe(reason): CuPy's marker, for free-threaded test runs")
    config.addinivalue_line("markers", "multi_gpu(n): CuPy's marker, a test that needs n GPUs")


def _not_ours(item) -> str | None:
    path = pathlib.Path(str(item.fspath))
    cls = getattr(item, "cls", None)
    names = [item.name, getattr(item, "originalname", item.name)]
    if cls is not None:
        names.append(cls.__name__)
    for prefix, reason in NOT_OURS.get(path.name, {}).items():
        if any(n.startswith(prefix) for n in names):
            return reason
    return None


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py's, which skips what is marked gpu
def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE not in pathlib.Path(str(item.fspath)).parents:
            continue
        item.add_marker(pytest.mark.gpu)
        reason = _not_ours(item)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"not cudadml.numpy's: {reason}"))


@pytest.fixture(autouse=True)
def _cupy_is_cudadml_numpy(monkeypatch):
    """``cupy.concatenate`` ... ``cupy.pad`` are cudadml.numpy's for the test."""
    import cudadml.numpy as cnp

    for name in FUNCTIONS:
        monkeypatch.setattr(cupy, name, getattr(cnp, name))

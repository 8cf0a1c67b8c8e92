"""``benchmarks/bench.py --against REV`` without a GPU: a revision (or a directory of its tree)
imports as a second package beside the working tree's, with its own kernels; a revision that
is neither is named in one line."""

import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import cudadml as cd

pytest.importorskip("cupy")  # bench.py times CuPy and PyTorch; importing it needs CuPy, not a GPU
ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench  # noqa: E402


def _checkout():
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "HEAD"], capture_output=True, text=True)
    if found.returncode:
        pytest.skip("not a git checkout")
    return found.stdout.strip()


def test_a_revision_imports_as_a_second_package_with_its_own_kernels():
    sha = _checkout()
    label, package = bench.load_revision("HEAD")
    assert label == sha[:7] and package.__name__ == f"cudadml_at_{label}"
    assert package is not cd and package.strided_slice is not cd.strided_slice
    kernels = pathlib.Path(str(package.backends.kernels.kernel_files()))
    assert kernels.name == "kernels_cu" and kernels.parent != ROOT and (kernels / "strided_copy.cu").is_file()
    x = np.arange(6 * 7, dtype=np.int16).reshape(6, 7)
    key = np.s_[::-2, 1::3]
    assert np.array_equal(package.strided_slice(x, key), cd.strided_slice(x, key))
    again, same = bench.load_revision(str(kernels.parent))  # the extracted tree, as a directory
    assert again == kernels.parent.name and np.array_equal(same.strided_slice(x, key), x[key])


@pytest.mark.parametrize(
    ("rev", "why"),
    [("no-such-revision", "neither a directory nor a commit"), (str(ROOT / "benchmarks"), "holds no cudadml/")],
)
def test_a_revision_that_is_neither_is_named(rev, why):
    _checkout()
    with pytest.raises(SystemExit, match=f"--against {re.escape(rev)}: .*{why}"):
        bench.load_revision(rev)


def test_a_revision_with_the_torch_operators_runs_tensors_beside_the_working_tree(tmp_path):
    """Both copies are given tensors: the operators' namespace is defined once, by the first.
    (The copy is this tree's, taken as a directory: the GPU machine has no checkout.)"""
    torch = pytest.importorskip("torch")
    import shutil

    for part in ("cudadml", "kernels_cu"):
        shutil.copytree(ROOT / part, tmp_path / "tree" / part, ignore=shutil.ignore_patterns("__pycache__"))
    _, package = bench.load_revision(str(tmp_path / "tree"))
    x = torch.arange(42.0).reshape(6, 7)
    key = np.s_[::-2, 1::3]
    assert torch.equal(cd.strided_slice(x, key), package.strided_slice(x, key))
    assert torch.equal(torch.func.vmap(lambda t: package.strided_slice(t, np.s_[::2]))(x), x[:, ::2])

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
    tree = kernels.parents[2]
    again, same = bench.load_revision(str(tree))  # the extracted tree, as a directory
    assert again == tree.name and np.array_equal(same.strided_slice(x, key), x[key])


#: The last revision whose kernels lie at the root (``kernels_cu/``) and whose layers are flat modules.
FLAT_LAYOUT = "34fc7a1"


def test_a_revision_of_the_flat_layout_imports_with_the_kernels_at_the_root():
    _checkout()
    found = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{FLAT_LAYOUT}^{{commit}}"])
    if found.returncode:
        pytest.skip(f"{FLAT_LAYOUT} is not in this clone's history")
    label, package = bench.load_revision(FLAT_LAYOUT)
    kernels = pathlib.Path(str(package.backends.kernels.kernel_files()))
    assert label == FLAT_LAYOUT and kernels.name == "kernels_cu" and (kernels.parent / "cudadml").is_dir()
    x = np.arange(6 * 7, dtype=np.int16).reshape(6, 7)
    assert np.array_equal(package.strided_slice(x, np.s_[::-2, 1::3]), x[::-2, 1::3])


@pytest.mark.parametrize(
    ("rev", "why"),
    [("no-such-revision", "neither a directory nor a commit"), (str(ROOT / "benchmarks"), "holds no cudadml/ package")],
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

    shutil.copytree(ROOT / "cudadml", tmp_path / "tree" / "cudadml", ignore=shutil.ignore_patterns("__pycache__"))
    _, package = bench.load_revision(str(tmp_path / "tree"))
    x = torch.arange(42.0).reshape(6, 7)
    key = np.s_[::-2, 1::3]
    assert torch.equal(cd.strided_slice(x, key), package.strided_slice(x, key))
    assert torch.equal(torch.func.vmap(lambda t: package.strided_slice(t, np.s_[::2]))(x), x[:, ::2])


# ---- graph_bench.py: every workload and participant on the host, in seconds --------------------

GRAPH_WORKLOADS = ["focus float16", "focus float32", "qkv float16", "crops uint8", "split-rejoin float32"]


def _graph_bench_run(tmp_path, *argv):
    """``graph_bench.main`` on the host with tiny shapes: ``(exit status, the JSON run)``."""
    import json

    import graph_bench

    path = tmp_path / "graph_bench.json"
    status = graph_bench.main(["--quick", "--host", "--reps", "2", "--json", str(path), *argv])
    return status, json.loads(path.read_text())


def test_graph_bench_runs_every_workload_and_agrees_with_every_participant(tmp_path):
    """Each workload's compiled graph agrees with the peer's chain (NumPy's here) and is the
    reference every other participant is compared with; all are timed; torch.compile is GPU only."""
    status, run = _graph_bench_run(tmp_path)
    assert [w["name"] for w in run["workloads"]] == GRAPH_WORKLOADS
    assert run["host"] and run["quick"] and run["versions"]["cudadml"] == cd.__version__
    timed = ["graph", "graph, allocating", "op by op", "NumPy", "copy"]
    if bench.torch is not None:
        timed.append("PyTorch")
    for w in run["workloads"]:
        assert w["failed"] == [] and w["reference"] == "graph", (w["name"], w["failed"])
        assert w["graph"].startswith("<CompiledOperator graph of"), w["graph"]
        rows = {r["participant"]: r for r in w["rows"]}
        for who in timed:
            assert rows[who]["whole_us"] > 0 and rows[who]["note"] is None, (w["name"], who, rows[who])
        assert rows["graph"]["whole_vs_graph"] == 1
        assert rows["torch.compile"]["whole_us"] is None and rows["torch.compile"]["note"] == "GPU only"
        if not hasattr(cd, "fuse"):
            assert rows["fuse"]["note"] == "cudadml has no fuse"
    assert status == 0


def test_graph_bench_leaves_a_participant_with_other_bytes_untimed_and_exits_1(tmp_path, monkeypatch, capsys):
    import graph_bench

    every = graph_bench.workloads

    def rejoin_not_reversed(quick):
        (w,) = [w for w in every(quick) if w.name == "split-rejoin float32"]
        w.ops = lambda x: [cd.join(cd.split(x, parts=3, axis=1), axis=1)]
        return [w]

    monkeypatch.setattr(graph_bench, "workloads", rejoin_not_reversed)
    status, run = _graph_bench_run(tmp_path)
    assert status == 1 and "FAILED" in capsys.readouterr().out
    (w,) = run["workloads"]
    rows = {r["participant"]: r for r in w["rows"]}
    assert rows["op by op"]["note"].startswith("DIFFERS from the graph: output 0: ")
    assert rows["op by op"]["whole_us"] is None and rows["graph"]["whole_us"] > 0
    # cd.fuse of the same (wrong) function differs too.
    assert w["failed"][0] == f"op by op: {rows['op by op']['note'].removeprefix('DIFFERS from the graph: ')}"
    assert [f.split(":")[0] for f in w["failed"]] == ["op by op", "fuse"]

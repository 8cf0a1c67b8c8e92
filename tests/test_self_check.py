"""``python -m cudadml``: every backend the machine can run, each row labelled with the backend
that really ran it, ``--help``, ``--backend`` and ``--bench``, and the exit status."""

import os
import re
import subprocess
import sys

import pytest

from cudadml import __main__ as self_check
from cudadml.backends import gpu_status, reference
from cudadml.examples import EXAMPLES

GPU, GPU_REASON = gpu_status()
CASES = len(EXAMPLES) + 16  # 4 random cases for each of 4 element widths


def _rows(text):
    """``{backend: [result, ...]}`` of the table."""
    rows = {}
    for line in text.splitlines():
        m = re.match(r"^(.+?)\s{2,}(cuda|emulate|reference)\s{2,}(\S.*)$", line)
        if m:
            rows.setdefault(m[2], []).append(m[3])
    return rows


def _main(capsys, *argv):
    status = self_check.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.emulate
def test_every_backend_the_machine_can_run_runs_and_matches():
    env = {**os.environ, "CUDADML_BACKEND": "emulate"}  # the reference rows must still be the reference
    result = subprocess.run([sys.executable, "-m", "cudadml"], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = _rows(result.stdout)
    expected = {"emulate", "reference"} | ({"cuda"} if GPU else set())
    assert set(rows) == expected
    assert all(results == ["match"] * CASES for results in rows.values())
    assert re.search(r"^  emulate    the CUDA kernels compiled for the host by \S+ \(", result.stdout, re.M)
    built = r"^ {13}\(the kernels a case needs are built on first use, and kept in \S+\)$"
    assert re.search(built, result.stdout, re.M)
    assert f"{CASES * len(expected)} of {CASES * len(expected)} matched (" in result.stdout
    if not GPU:
        assert "  cuda       not run: " in result.stdout


@pytest.mark.emulate
def test_rows_name_the_backend_that_ran(monkeypatch, capsys):
    def refuse(*args):
        raise AssertionError("the reference ran")

    monkeypatch.setattr(reference, "run", refuse)
    status, out, _ = _main(capsys, "--backend", "emulate")
    assert (status, _rows(out)) == (0, {"emulate": ["match"] * CASES})
    status, out, _ = _main(capsys, "--backend", "reference")
    assert status == 1
    assert _rows(out) == {"reference": ["ERROR AssertionError: the reference ran"] * CASES}
    assert re.search(rf"^0 of {CASES} matched \(reference \d+\.\d\d s\); {CASES} FAILED$", out, re.M)


def test_the_self_check_counts_its_cases_on_a_progress_bar(monkeypatch, capsys):
    bars = []

    class Bar:
        def __init__(self, total, description, unit):
            self.total, self.description, self.unit, self.updates, self.closed = total, description, unit, 0, False
            bars.append(self)

        def update(self):
            self.updates += 1

        def close(self):
            self.closed = True

    monkeypatch.setattr(self_check, "progress_bar", Bar)
    assert _main(capsys, "--backend", "reference")[0] == 0
    ((bar),) = bars
    assert (bar.total, bar.updates, bar.closed, bar.description, bar.unit) == (
        CASES,
        CASES,
        True,
        "cudadml: self-check",
        "case",
    )


def test_a_mismatch_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(reference, "run", lambda *args: None)  # outputs keep their poison
    status, out, _ = _main(capsys, "--backend", "reference")
    assert status == 1
    assert _rows(out)["reference"][: len(EXAMPLES)] == ["MISMATCH"] * len(EXAMPLES)  # poisoned buffers
    assert re.search(r"^\d+ of \d+ matched .*; \d+ FAILED$", out, re.M)


def test_an_emulation_without_a_compiler_is_reported_not_run(monkeypatch, capsys):
    monkeypatch.setenv("CXX", "no-such-compiler")
    status, out, _ = _main(capsys)
    assert status == 0
    assert "  emulate    not run: no C++ compiler 'no-such-compiler' (install g++, or set CXX)" in out
    assert "emulate" not in _rows(out)
    status, _, err = _main(capsys, "--backend", "emulate")
    assert status == 2
    assert "backend emulate cannot run here: no C++ compiler 'no-such-compiler'" in err


def test_help_explains_and_runs_nothing():
    result = subprocess.run([sys.executable, "-m", "cudadml", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert result.stdout.startswith("usage: python -m cudadml [-h] [--backend NAME] [--bench]")
    assert "--backend NAME" in result.stdout and "--bench" in result.stdout and "Exit status:" in result.stdout
    assert "matched" not in result.stdout


def test_an_unknown_backend_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stopped:
        self_check.main(["--backend", "gpu"])
    assert stopped.value.code == 2
    assert "invalid choice: 'gpu'" in capsys.readouterr().err


def test_without_a_gpu_cuda_and_bench_say_why_and_exit_2(capsys):
    if GPU:
        pytest.skip("a GPU is usable here")
    status, _, err = _main(capsys, "--backend", "cuda")
    assert (status, err) == (2, f"backend cuda cannot run here: {GPU_REASON}\n")
    status, _, err = _main(capsys, "--bench")
    assert (status, err) == (2, f"--bench needs a GPU: {GPU_REASON}\n")


@pytest.mark.gpu
def test_bench_times_cudadml_beside_cupy_and_pytorch(capsys):
    status, out, _ = _main(capsys, "--bench")
    assert status == 0, out
    assert "DIFFERS" not in out
    lines = [line for line in out.splitlines() if re.match(r"^(strided_slice|split|join)", line)]
    assert len(lines) == 5
    assert all(re.search(r"\d+ \(\d+\)\s+\d+ \(\d+\)", line) for line in lines)


@pytest.mark.parametrize(
    "present, expected",
    [
        (False, "no usable NVIDIA GPU or driver found (CuPy 99.0; no /dev/nvidia* device, no nvidia-smi)"),
        (True, "CuPy 99.0 finds no usable GPU (RuntimeError: cudaErrorInsufficientDriver: CUDA driver version"),
    ],
)
def test_without_a_gpu_the_reason_says_so_not_upgrade_your_driver(monkeypatch, present, expected):
    import types

    from cudadml import backends

    def refuse():
        raise RuntimeError("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version")

    runtime = types.SimpleNamespace(getDeviceCount=refuse)
    fake = types.SimpleNamespace(__version__="99.0", cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(backends, "_nvidia_present", lambda: present)
    usable, why = backends.gpu_status()
    assert not usable and why.startswith(expected)


@pytest.mark.skipif(GPU, reason="the GPU tests run here")
def test_the_gpu_tests_skip_in_one_summary_line():
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-ra",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=",
        "tests/test_gpu.py",
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(lines) == 1 and re.match(
        rf"^SKIPPED \[\d+\] tests/conftest\.py:\d+: GPU tests: {re.escape(GPU_REASON)}$", lines[0]
    )

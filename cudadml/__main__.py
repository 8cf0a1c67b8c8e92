"""``python -m cudadml``: the self-check.

Runs every operator on the DirectML pages' worked examples (through descriptors and buffer
bindings) and on larger random cases (through the array functions), on every backend this
machine can run: the CUDA kernels on the GPU ("cuda"), the same kernel sources compiled for
the host by the C++ compiler ("emulate"), and the NumPy reference ("reference"). Each result
is compared exactly with the pages' outputs or with NumPy indexing, and each row names the
backend that really ran it. Exits 1 on any mismatch, 2 when a backend asked for cannot run.
"""

from __future__ import annotations

import argparse
import contextlib
import platform
import shutil
import subprocess
import sys
import time

import numpy as np

import cudadml as cd
from cudadml.backends import emulate, gpu_status
from cudadml.examples import EXAMPLES
from cudadml.run.warmup import BACKENDS, progress_bar
from cudadml.testing import TensorBuffer, random_array, to_host


def _run_example(example, xp):
    inputs = [TensorBuffer(t, xp).fill(v) for t, v in zip(example.desc.input_tensors, example.inputs)]
    outputs = [TensorBuffer(t, xp) for t in example.desc.output_tensors]
    example.desc.compile().execute([b.binding for b in inputs], [b.binding for b in outputs])
    return all(
        np.array_equal(o.host_elements(), e) and o.untouched_outside() for o, e in zip(outputs, example.expected)
    )


def _random_cases(rng):
    """``(name, run(xp) -> list of results, expected list)`` over every element width."""
    for dtype in (np.int8, np.float16, np.float32, np.float64):
        x = random_array((6, 7, 8, 9), dtype, rng)
        key = (slice(1, -1), slice(None, None, -2), slice(2, 8, 3), slice(None))
        width = np.dtype(dtype).itemsize * 8
        yield (
            f"strided_slice {width}-bit 4-D",
            lambda xp, x=x, key=key: [cd.strided_slice(xp.asarray(x), key)],
            [x[key]],
        )
        grad = np.zeros_like(x)
        grad[key] = x[key]
        yield (
            f"strided_slice_grad {width}-bit",
            lambda xp, x=x, key=key: [cd.strided_slice_grad(xp.asarray(np.ascontiguousarray(x[key])), x.shape, key)],
            [grad],
        )
        yield (
            f"split {width}-bit into 3",
            lambda xp, x=x: cd.split(xp.asarray(x), split_sizes=[2, 4, 1], axis=1),
            np.split(x, [2, 6], axis=1),
        )
        parts = np.split(x, [3, 4], axis=3)
        yield (
            f"join {width}-bit of 3",
            lambda xp, parts=parts: [cd.join([xp.asarray(p) for p in parts], axis=3)],
            [np.concatenate(parts, axis=3)],
        )


def _cases():
    """``(name, check(xp) -> bool)`` for every example and random case."""
    for example in EXAMPLES:
        yield example.name, lambda xp, example=example: _run_example(example, xp)
    for name, run, expected in _random_cases(np.random.default_rng(2026)):

        def check(xp, run=run, expected=expected):
            got = [to_host(a) for a in run(xp)]
            return len(got) == len(expected) and all(
                g.shape == e.shape and g.tobytes() == np.ascontiguousarray(e).tobytes() for g, e in zip(got, expected)
            )

        yield name, check


def _availability():
    """``{backend: (runnable, what it is or why it cannot run)}``."""
    usable, gpu = gpu_status()
    cxx = emulate.compiler()
    if shutil.which(cxx):
        version = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.partition("\n")[0]
        host = (True, f"the CUDA kernels compiled for the host by {cxx} ({version})")
    else:
        host = (False, f"no C++ compiler {cxx!r} (install g++, or set CXX)")
    return {"cuda": (usable, gpu), "emulate": host, "reference": (True, "the NumPy reference")}


def _runner(backend):
    """``(array module, context)`` in which a check runs on ``backend`` and on no other."""
    if backend == "cuda":
        import cupy

        return cupy, contextlib.nullcontext()
    return np, cd.use_host_backend(backend)  # whatever CUDADML_BACKEND says


def _status(check, xp) -> str:
    try:
        return "match" if check(xp) else "MISMATCH"
    except Exception as e:  # report and go on: the table should show every case
        return f"ERROR {type(e).__name__}: {e}"


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m cudadml",
        description=(
            "Self-check: run every operator on DirectML's worked examples and on random cases, on every "
            "backend this machine can run (cuda: the GPU kernels; emulate: the same kernels compiled for the "
            "host by the C++ compiler; reference: NumPy), compare each result exactly, and print what ran where."
        ),
        epilog="Exit status: 0 when every row matches, 1 on any mismatch, 2 when a backend asked for cannot run.",
    )
    parser.add_argument(
        "--backend",
        action="append",
        choices=BACKENDS,
        metavar="NAME",
        help=f"run only this backend ({', '.join(BACKENDS)}); repeat for several. Default: every one that can run",
    )
    parser.add_argument(
        "--bench",
        action="store_true",
        help="instead of the check, time cudadml against CuPy and PyTorch (if installed) on a few cases; needs a GPU",
    )
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    available = _availability()
    print(f"cudadml {cd.__version__}, NumPy {np.__version__}, Python {platform.python_version()}")
    if args.bench:
        usable, why = available["cuda"]
        if not usable:
            print(f"--bench needs a GPU: {why}", file=sys.stderr)
            return 2
        from cudadml import _bench

        return _bench.main()
    if args.backend:
        missing = [b for b in args.backend if not available[b][0]]
        for backend in missing:
            print(f"backend {backend} cannot run here: {available[backend][1]}", file=sys.stderr)
        if missing:
            return 2
    chosen = args.backend or BACKENDS
    runs = [b for b in chosen if available[b][0]]
    print("backends:")
    for backend in chosen:
        runnable, what = available[backend]
        print(f"  {backend:<10} {what if runnable else 'not run: ' + what}")
        if backend == "emulate" and runnable:
            print(f"  {'':<10} (the kernels a case needs are built on first use, and kept in {emulate.cache_dir()})")
    sys.stdout.flush()  # before the progress bar, on stderr, can show
    cases = list(_cases())
    results, seconds = {}, {}
    bar = progress_bar(len(cases) * len(runs), "cudadml: self-check", "case")
    try:
        for backend in runs:
            xp, context = _runner(backend)
            started = time.perf_counter()
            with context:
                results[backend] = []
                for _, check in cases:
                    results[backend].append(_status(check, xp))
                    bar.update()
            seconds[backend] = time.perf_counter() - started
    finally:
        bar.close()
    width = max(len(name) for name, _ in cases)
    print(f"\n{'case':<{width}}  {'backend':<10}  result")
    for k, (name, _) in enumerate(cases):
        for backend in runs:
            print(f"{name:<{width}}  {backend:<10}  {results[backend][k]}")
    total = len(cases) * len(runs)
    failed = sum(r != "match" for column in results.values() for r in column)
    times = ", ".join(f"{b} {s:.2f} s" for b, s in seconds.items())
    print(f"\n{total - failed} of {total} matched ({times})" + (f"; {failed} FAILED" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

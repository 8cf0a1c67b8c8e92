"""``python -m cudadml``: the self-check.

Runs every operator on the DirectML pages' worked examples (through descriptors and buffer
bindings) and on larger random cases (through the array functions), on every backend this
machine has, compares each result with NumPy exactly, and prints what ran where. Exits 1 on
any mismatch.
"""

from __future__ import annotations

import sys

import numpy as np

import cudadml as cd
from cudadml.backends import gpu_status
from cudadml.examples import EXAMPLES
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
            lambda xp, x=x: cd.split(xp.asarray(x), [2, 4, 1], axis=1),
            np.split(x, [2, 6], axis=1),
        )
        parts = np.split(x, [3, 4], axis=3)
        yield (
            f"join {width}-bit of 3",
            lambda xp, parts=parts: [cd.join([xp.asarray(p) for p in parts], axis=3)],
            [np.concatenate(parts, axis=3)],
        )


def main() -> int:
    usable, gpu = gpu_status()
    print(f"cudadml {cd.__version__}, NumPy {np.__version__}")
    print(f"GPU: {gpu}" if usable else f"GPU: none ({gpu}); running the NumPy backend only")
    backends = [("numpy", np)]
    if usable:
        import cupy

        backends.append(("cupy kernels", cupy))
    rows = []
    for example in EXAMPLES:
        for backend, xp in backends:
            rows.append((example.name, backend, _status(lambda e=example, xp=xp: _run_example(e, xp))))
    rng = np.random.default_rng(2026)
    for name, run, expected in _random_cases(rng):
        for backend, xp in backends:

            def check(run=run, xp=xp, expected=expected):
                got = [to_host(a) for a in run(xp)]
                return len(got) == len(expected) and all(
                    g.shape == e.shape and g.tobytes() == np.ascontiguousarray(e).tobytes()
                    for g, e in zip(got, expected)
                )

            rows.append((name, backend, _status(check)))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'case':<{width}}  {'backend':<12}  result")
    for name, backend, result in rows:
        print(f"{name:<{width}}  {backend:<12}  {result}")
    failed = sum(r[2] != "match" for r in rows)
    print(f"\n{len(rows) - failed} of {len(rows)} matched NumPy" + (f"; {failed} FAILED" if failed else ""))
    return 1 if failed else 0


def _status(check) -> str:
    try:
        return "match" if check() else "MISMATCH"
    except Exception as e:  # report and go on: the table should show every case
        return f"ERROR {type(e).__name__}: {e}"


if __name__ == "__main__":
    sys.exit(main())

"""Backends run plans: ``reference`` (NumPy, host memory), the CUDA kernels (CuPy memory), and
``emulate`` (the CUDA kernels compiled for the host, on NumPy memory; for CI without a GPU)."""

from __future__ import annotations

import os

from . import kernels, reference

HOST_BACKENDS = ("reference", "emulate")


def backend_for_host() -> str:
    """The backend for NumPy memory, from ``CUDADML_BACKEND``: "reference" (the default) or
    "emulate" (the CUDA kernels run on the host by ``backends.emulate``)."""
    name = os.environ.get("CUDADML_BACKEND", "reference")
    if name not in HOST_BACKENDS:
        raise ValueError(f"CUDADML_BACKEND={name!r}: expected one of {', '.join(map(repr, HOST_BACKENDS))}")
    return name


def execute(kind, plan, launches, inputs, outputs, stream=None) -> None:
    """Run ``plan`` on the memory ``kind`` holds: "numpy" on the host backend that
    ``backend_for_host()`` names, "cupy" through ``launches`` (``kernels.prepare(plan)``, which
    the emulation also runs, computed here when a NumPy caller passes None).
    ``inputs``/``outputs`` are ``(owner, address)`` pairs, one per binding."""
    if kind == "numpy":
        if backend_for_host() == "emulate":
            from . import emulate

            emulate.run(kernels.prepare(plan) if launches is None else launches, inputs, outputs)
        else:
            reference.run(plan, inputs, outputs)
    else:
        kernels.run(launches, [a for _, a in inputs], [a for _, a in outputs], stream)


def gpu_status() -> tuple[bool, str]:
    """``(usable, description)``: whether CuPy is installed and sees a CUDA device."""
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, or a driver too old: CuPy raises its runtime error
        return False, f"CuPy {cupy.__version__} finds no usable GPU ({type(e).__name__}: {e})"
    if count == 0:
        return False, f"CuPy {cupy.__version__} finds no CUDA device"
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    return True, f"{name} (CuPy {cupy.__version__}, {count} device(s))"

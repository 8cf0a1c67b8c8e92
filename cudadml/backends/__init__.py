"""Backends run plans: ``reference`` (NumPy, host memory) and the CUDA kernels (CuPy memory)."""

from __future__ import annotations

from . import kernels, reference


def execute(kind, plan, launches, inputs, outputs, stream=None) -> None:
    """Run ``plan`` on the memory ``kind`` holds: "numpy" on the host reference backend,
    "cupy" through ``launches`` (``kernels.prepare(plan)``). ``inputs``/``outputs`` are
    ``(owner, address)`` pairs, one per binding."""
    if kind == "numpy":
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

"""Backends run plans: ``reference`` (NumPy, host memory) and the CUDA kernels (CuPy memory)."""

from __future__ import annotations


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

"""``precompile``: compile the kernels a workload will need before its first call needs them."""

from __future__ import annotations

import concurrent.futures
import importlib.util
import logging
import os
import time

import numpy as np

from ..backends import CUDA, EMULATE, REFERENCE, emulate, gpu_status, host_backend, kernels
from ..core.operators import OperatorDesc
from .compiled import CompiledOperator

__all__ = ["precompile"]

BACKENDS = (CUDA.name, EMULATE.name, REFERENCE.name)
_log = logging.getLogger(__name__)


def precompile(*work, backend=None, progress=True) -> int:
    """Compile now the kernels that ``work`` will need, so that no later call waits for a compiler.

    Otherwise the first call that needs a kernel compiles it: NVRTC for the GPU (a fraction of
    a second per kernel), the C++ compiler for the emulation (a second or two per group of
    kernels, kept on disk). Both report each compile, with its time, at INFO level on
    ``logging.getLogger("cudadml")``. Groups of kernels compile in parallel, one per core.

    Parameters
    ----------
    *work : dtype, descriptor or CompiledOperator
        What will run. A NumPy dtype or scalar type: every kernel that moves elements of its
        size (8-byte words for 16-byte elements), for any rank and layout (what the array
        functions can ask for on arrays of that dtype at element-aligned addresses). A
        descriptor or ``CompiledOperator``: the kernels of its plan. Nothing: every kernel.
    backend : {"cuda", "emulate", "reference"}, optional
        Where the work will run: "cuda" compiles with NVRTC for the current device, "emulate"
        with the C++ compiler for the host, and "reference" needs nothing. By default "cuda"
        where CuPy sees a GPU, else the host backend in effect (``use_host_backend``).
    progress : bool
        Show a progress bar (tqdm's, in a terminal or a notebook) once the compiles take 2 s.

    Returns
    -------
    int
        The number of kernels the work needs, all of them now compiled and loaded.

    Raises
    ------
    TypeError
        For a work item that is not a dtype, descriptor or ``CompiledOperator``.
    ValueError
        For an unknown backend, or a dtype whose elements are not 1, 2, 4, 8 or 16 bytes.
    RuntimeError
        For backend "cuda" where CuPy sees no GPU; ``KernelCompileError`` or
        ``EmulationError`` (both subclasses) where a compiler fails.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> cd.precompile(np.float32, backend="reference")  # the NumPy reference compiles nothing
    0
    """
    if backend is None:
        backend = CUDA.name if gpu_status()[0] else host_backend().name
    elif backend not in BACKENDS:
        raise ValueError(f"precompile: backend {backend!r} is not one of {', '.join(map(repr, BACKENDS))}")
    names = _kernel_names(work)
    if backend == "reference":
        return 0
    started = time.perf_counter()
    if backend == CUDA.name:
        jobs, build = _nvrtc_jobs(names)
    else:
        jobs = sorted({emulate.group_of(name) for name in names})
        build = _emulation_build
    _run(jobs, build, f"cudadml: {backend} kernels", progress)
    _log.info("precompile: %d kernels ready for %s in %.2f s", len(names), backend, time.perf_counter() - started)
    return len(names)


def _kernel_names(work) -> list[str]:
    every = [name for names in kernels.all_kernel_names().values() for name in names]
    if not work:
        return every
    wanted: dict[str, None] = {}  # ordered and without repeats
    for item in work:
        if isinstance(item, (OperatorDesc, CompiledOperator)):
            plan = item.plan if isinstance(item, CompiledOperator) else item.to_plan()
            wanted.update(dict.fromkeys(launch.name for launch in kernels.prepare(plan)))
            continue
        dtype = _dtype(item)
        if dtype.itemsize not in (1, 2, 4, 8, 16):
            raise ValueError(f"precompile: dtype {dtype} has {dtype.itemsize}-byte elements, not 1, 2, 4, 8 or 16")
        width = str(min(dtype.itemsize, 8))  # 16-byte elements move as pairs of 8-byte words
        wanted.update(dict.fromkeys(name for name in every if kernels.group_key(name)[2] == width))
    return list(wanted)


def _dtype(item):
    try:
        if item is not None:  # np.dtype(None) is float64
            return np.dtype(item)
    except TypeError:
        pass
    raise TypeError(f"precompile: work items are dtypes, descriptors or CompiledOperators, not {type(item).__name__}")


def _nvrtc_jobs(names):
    usable, why = gpu_status()
    if not usable:
        raise RuntimeError(f"precompile: backend 'cuda' needs a GPU: {why}")
    import cupy

    device = cupy.cuda.Device().id
    groups: dict[tuple, list[str]] = {}
    for name in names:
        if not kernels.is_compiled(device, name):
            groups.setdefault(kernels.group_key(name), []).append(name)

    def build(group):
        with cupy.cuda.Device(device):  # the current device is per thread
            kernels.compile_kernels(group)

    return [tuple(group) for group in groups.values()], build


def _emulation_build(key):
    emulate.library(*key)


def _run(jobs, build, description, progress):
    """``build(job)`` for every job, in parallel (the compilers run outside the GIL)."""
    bar = progress_bar(len(jobs), description, "group") if progress and jobs else None
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        futures = [pool.submit(build, job) for job in jobs]
        try:
            for future in concurrent.futures.as_completed(futures):
                future.result()
                if bar is not None:
                    bar.update()
        finally:
            for future in futures:  # after a failure, start no more
                future.cancel()
            if bar is not None:
                bar.close()


def progress_bar(total: int, description: str, unit: str):
    """tqdm's bar on stderr, shown once the work has taken 2 s: a widget in Jupyter where
    ipywidgets is installed, else a line of text (which Jupyter shows as well)."""
    if importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm  # tqdm.auto would warn in Jupyter that ipywidgets is missing
    else:
        from tqdm.auto import tqdm
    return tqdm(total=total, desc=description, unit=unit, delay=2)

"""Backends run plans. Each is an object with ``prepare(plan, out_extents)`` (once, at compile
time) and ``run(prepared, addresses, owners, stream, address_bits)`` (per call):

* ``CUDA``: the kernels of ``kernels_cu/`` on CuPy memory, on the current or given stream;
* ``REFERENCE``: NumPy views on host memory (the oracle);
* ``EMULATE``: the same kernel sources compiled for the host, on host memory (for CI).

Each also has ``stage(table, device, stream)``: a host table (``plan``'s windows' tables) placed
where a launch of it reads it, on the backend's memory, before an ``execute`` that binds it
(the CUDA backend copies it to the device beside the caller's stream; the host backends take it
as it is). ``execute`` itself never copies.

``out_extents`` holds, per output, the ``(low, high)`` byte offsets from its element 0 between
which its elements lie (the bounds of what a kernel may write). ``addresses`` and ``owners``
are ``(inputs, outputs)`` pairs of lists: the byte address of each binding's element 0, and
the array that holds it; ``address_bits`` is the OR of all addresses. Which backend runs a
call follows from the memory kind (device memory: ``CUDA``) and, for host memory, from
``host_backend()``: the innermost ``use_host_backend(name)`` block of the calling thread, else
``CUDADML_BACKEND`` (read once; empty means unset), else ``"reference"``.
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
from collections.abc import Iterator

import numpy as np

from ..core import memory
from ..core.plan import WindowGradPlan, WindowPlan
from . import kernels, reference

__all__ = ["CUDA", "EMULATE", "REFERENCE", "backend_for", "gpu_status", "host_backend", "use_host_backend"]


class _Kernels:
    """Shared by the CUDA and emulation backends: launches for each access width.

    A plan moves ``element_size``-byte elements; where a call's addresses are not multiples
    of that, the same plan runs as narrower words (``plan.narrowed``), so no kernel ever makes
    a misaligned access. Launches for each width are built on first need and kept.
    """

    def prepare(self, plan, out_extents):
        if type(plan) in _SHARED_PLANS:
            return _shared_launches(plan, tuple((int(low), int(high)) for low, high in out_extents))
        return _Launches(plan, out_extents)


class _Launches:
    __slots__ = ("by_width", "element_size", "out_extents", "plan")

    def __init__(self, plan, out_extents):
        self.plan, self.element_size = plan, plan.element_size
        self.out_extents = tuple((int(low), int(high)) for low, high in out_extents)
        self.by_width = {plan.element_size: kernels.prepare(plan)}

    def for_addresses(self, address_bits):
        """The launches whose accesses are aligned for addresses whose OR is ``address_bits``."""
        if not address_bits & (self.element_size - 1) or not hasattr(self.plan, "narrowed"):
            # Window plans have no narrower form: their bindings come aligned, each to its own
            # element size (a half's gradient summed into floats: 2-byte reads, 4-byte stores).
            return self.by_width[self.element_size]
        width = self.element_size
        while address_bits & (width - 1):
            width >>= 1
        launches = self.by_width.get(width)
        if launches is None:
            launches = self.by_width[width] = kernels.prepare(self.plan.narrowed(width))
        return launches


#: Plans whose launches operators of equal plans share (``_shared_launches``): the windows',
#: a few fields each, so cheap to compare. A windows batch of per-window gradients compiles
#: an operator per new set of layouts, whose plan (the result's layout and the number of
#: windows) is often one seen before; its launches are then not built again.
_SHARED_PLANS = frozenset({WindowPlan, WindowGradPlan})


@memory.cache(maxsize=256)
def _shared_launches(plan, out_extents):
    return _Launches(plan, out_extents)


def _as_given(table, device, stream):
    """``stage`` of the host backends: host memory is theirs, so the table is read where it is."""
    return table, stream, None


class CudaBackend(_Kernels):
    name = "cuda"

    def __init__(self):
        #: Per device, the stream that tables travel on, beside the caller's: the copy runs
        #: while the GPU finishes earlier work, instead of after it.
        self._table_streams = {}
        #: ``(event, pinned host copy, device copy)`` of tables that a launch may still read,
        #: until the event after that launch completes: neither memory is handed out again before.
        self._staged = collections.deque()
        self._staged_lock = threading.Lock()

    def stage(self, table, device, stream):
        """A device copy of the host (NumPy) array ``table`` on ``device``, for a launch on
        ``stream`` (a CuPy stream; None: the device's current one): copied from pinned memory
        on the device's table stream, which ``stream`` then waits for. Returns ``(copy, stream,
        release)``: the stream to launch on, and ``release()``, to call once the launch that
        reads the copy is queued (the copy and its pinned memory are kept until it has run)."""
        cupy = sys.modules["cupy"]
        staged = self._staged
        with self._staged_lock:  # threads share it: each entry leaves once, when its launch is done
            while staged and staged[0][0].done:
                staged.popleft()
        with cupy.cuda.Device(device):
            stream = stream or cupy.cuda.get_current_stream()
            side = self._table_streams.get(device)
            if side is None:
                side = self._table_streams.setdefault(device, cupy.cuda.Stream(non_blocking=True))
            with side:
                copy = cupy.empty(table.shape, table.dtype)
            pinned = cupy.cuda.alloc_pinned_memory(table.nbytes)
            np.frombuffer(pinned, table.dtype, table.size)[...] = table.ravel()
            cupy.cuda.runtime.memcpyAsync(copy.data.ptr, pinned.ptr, table.nbytes, 1, side.ptr)  # 1: host to device
            copied = cupy.cuda.Event(block=False, disable_timing=True)
            copied.record(side)
            stream.wait_event(copied)
            launched = cupy.cuda.Event(block=False, disable_timing=True)

        def release():
            launched.record(stream)
            with self._staged_lock:
                staged.append((launched, pinned, copy))

        return copy, stream, release

    def load(self, prepared) -> None:
        """Compile (NVRTC) and load the full-width kernels on the current device now."""
        for launch in prepared.by_width[prepared.element_size]:
            launch.load()

    def run(self, prepared, addresses, owners, stream, address_bits) -> None:
        kernels.run(prepared.for_addresses(address_bits), addresses[0], addresses[1], stream)


class EmulateBackend(_Kernels):
    """The kernels run on the host, each load checked against the input arrays' bytes and each
    store against the output elements' extents; and since a plan writes every output element
    exactly once, the launches must store exactly the plan's ``output_bytes``."""

    name = "emulate"
    stage = staticmethod(_as_given)

    def run(self, prepared, addresses, owners, stream, address_bits) -> None:
        from . import emulate

        launches = prepared.for_addresses(address_bits)
        readable = [memory.byte_extent(owner) for owner in owners[0]]
        writable = [(a + low, a + high) for a, (low, high) in zip(addresses[1], prepared.out_extents)]
        stored = emulate.run(launches, addresses[0], addresses[1], readable, writable)
        if stored != prepared.plan.output_bytes:
            raise emulate.EmulationError(
                f"{', '.join(launch.name for launch in launches)}: the stores wrote {stored} bytes; "
                f"the outputs' elements are {prepared.plan.output_bytes} bytes, each to be written once"
            )


class ReferenceBackend:
    name = "reference"
    stage = staticmethod(_as_given)

    def prepare(self, plan, out_extents):
        return plan

    def run(self, prepared, addresses, owners, stream, address_bits) -> None:
        reference.run(prepared, addresses[0], addresses[1])


CUDA = CudaBackend()
EMULATE = EmulateBackend()
REFERENCE = ReferenceBackend()
HOST_BACKENDS = {b.name: b for b in (REFERENCE, EMULATE)}


def _named(name, where):
    backend = HOST_BACKENDS.get(name)
    if backend is None:
        raise ValueError(f"{where}: host backend {name!r} is not one of {', '.join(map(repr, HOST_BACKENDS))}")
    return backend


_local = threading.local()


@memory.cache(maxsize=1)
def _default():
    # Set but empty (CUDADML_BACKEND= in a shell or a CI matrix) means unset, as for CXX or CC.
    return _named(os.environ.get("CUDADML_BACKEND", "").strip() or "reference", "CUDADML_BACKEND")


def host_backend():
    """The backend that runs calls on host (NumPy) memory in this thread."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else _default()


@contextlib.contextmanager
def use_host_backend(name: str) -> Iterator[object]:
    """Run host (NumPy) memory on another backend inside the block, in this thread only.

    Other threads keep theirs; blocks nest.

    Parameters
    ----------
    name : {"reference", "emulate"}
        The NumPy reference backend, or the CUDA kernels compiled for the host by the system
        C++ compiler and emulated thread by thread.

    Yields
    ------
    object
        The backend.

    Raises
    ------
    ValueError
        For another name.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> with cd.use_host_backend("reference"):
    ...     cd.strided_slice(np.arange(4), np.s_[::-1])
    array([3, 2, 1, 0])
    """
    backend = _named(name, "use_host_backend")
    stack = _local.__dict__.setdefault("stack", [])
    stack.append(backend)
    try:
        yield backend
    finally:
        stack.pop()


def backend_for(kind: str):
    """The backend for memory of ``kind``: "cupy" (device) or "numpy" (host)."""
    return CUDA if kind == "cupy" else host_backend()


#: Where an NVIDIA driver shows itself: its device nodes (Linux), its /proc entry, WSL's GPU node.
_NVIDIA_NODES = ("/dev/nvidia[0-9]*", "/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg")
_NO_GPU = "no usable NVIDIA GPU or driver found"


def _nvidia_present() -> bool:
    """Whether the machine shows any sign of an NVIDIA GPU or driver."""
    import glob
    import shutil

    return any(glob.glob(node) for node in _NVIDIA_NODES) or shutil.which("nvidia-smi") is not None


def gpu_status() -> tuple[bool, str]:
    """``(usable, description)``: whether CuPy is installed and sees a CUDA device.

    Without a GPU, the CUDA runtime reports ``cudaErrorInsufficientDriver`` (it takes a missing
    driver for one too old) or ``cudaErrorNoDevice``; where the machine shows no NVIDIA device
    node and no ``nvidia-smi``, the description says so instead of "upgrade your driver".
    """
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed"
    none = f"{_NO_GPU} (CuPy {cupy.__version__}; no /dev/nvidia* device, no nvidia-smi)"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, or a driver too old: CuPy raises its runtime error
        if not _nvidia_present():
            return False, none
        return False, f"CuPy {cupy.__version__} finds no usable GPU ({type(e).__name__}: {e})"
    if count == 0:
        return False, none if not _nvidia_present() else f"CuPy {cupy.__version__} finds no CUDA device"
    name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"].decode()
    return True, f"{name} (CuPy {cupy.__version__}, {count} device(s))"

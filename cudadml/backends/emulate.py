"""Host emulation of the CUDA kernels: the real ``kernels_cu/`` code, run on NumPy buffers.

``kernels_cu/emulation.h`` maps the CUDA C the kernels use onto the host; with it the
unmodified kernel sources compile with the system C++ compiler (``$CXX``, else ``g++``) into
shared libraries, cached on disk under ``$CUDADML_CACHE_DIR`` (default ``~/.cache/cudadml``)
by a hash of their text. ``run`` takes the launches ``kernels.prepare`` made for the GPU and
runs each with the same kernel, grid, block and parameter struct bytes, block by block and
thread by thread, reading and writing the NumPy buffers in place; every load and every store
is checked (aligned, and inside the inputs or the outputs' elements). Selected for NumPy
inputs by ``CUDADML_BACKEND=emulate`` (see ``cudadml.backends.host_backend``).

The cache is shared by threads and processes: each build writes its source and library
under names of its own, checks that the library loads with every symbol it should have, and
only then renames both into place (``os.replace``, atomic), so no builder ever sees a partial
or foreign file under a final name, and a failed build leaves nothing behind. A library found
in the cache that does not load, or lacks a symbol, is rebuilt.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import logging
import os
import pathlib
import subprocess
import tempfile
import threading
import time

from ..core import memory
from . import kernels


# -O0: the emulation checks what the kernels do, not how fast they run on the host, and -O0
# builds six times faster than -O2 (0.5 s against 3.1 s for 40 specialisations) with the tests'
# emulated runs no slower; no optimisation also means no undefined behaviour exploited away.
def cxx_flags() -> tuple[str, ...]:
    """The C++ compiler's flags, with the launch shape this process's grids are sized for."""
    return ("-O0", "-shared", "-fPIC", "-std=c++17", "-fno-strict-aliasing", *kernels.defines())


_LOCK = threading.Lock()  # the emulation header keeps its thread indices in globals
_log = logging.getLogger(__name__)


class EmulationError(RuntimeError):
    """The emulated kernels could not be built, or a launch failed as it would on a GPU."""


class _Fault(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int),
        ("block", ctypes.c_uint),
        ("thread", ctypes.c_uint),
        ("address", ctypes.c_ulonglong),
    ]


_FAULTS = {
    1: "a misaligned __ldg",
    2: "an __ldg outside every input",
    3: "a misaligned store",
    4: "a store outside every output",
}


def compiler() -> str:
    return os.environ.get("CXX") or "g++"


def cache_dir() -> pathlib.Path:
    root = os.environ.get("CUDADML_CACHE_DIR") or pathlib.Path.home() / ".cache" / "cudadml"
    return pathlib.Path(root) / "emulate"


def translation_unit(source_file: str, names) -> str:
    """emulation.h, the kernel source, and per kernel ``k`` (``names[k]``) the wrappers
    ``cudadml_launch_k`` (runs a launch) and ``cudadml_param_size_k`` (sizeof its struct)."""
    parts = [kernels.kernel_source("emulation.h"), kernels.kernel_source(source_file), 'extern "C" {']
    for k, name in enumerate(names):
        parts.append(
            f"typedef CudadmlParam<decltype({name})>::type cudadml_param_{k};\n"
            f"int cudadml_launch_{k}(const void* params, unsigned long long size, unsigned long long grid,\n"
            f"        unsigned block, const unsigned long long* reads, int num_reads,\n"
            f"        const unsigned long long* writes, int num_writes, CudadmlFault* fault,\n"
            f"        unsigned long long* stored) {{\n"
            f"    return cudadml_launch<cudadml_param_{k}>([](const cudadml_param_{k}& p) {{ {name}(p); }},\n"
            f"        params, size, grid, block, reads, num_reads, writes, num_writes, fault, stored);\n"
            f"}}\n"
            f"unsigned long long cudadml_param_size_{k}() {{ return sizeof(cudadml_param_{k}); }}"
        )
    parts.append("}")
    return "\n".join(parts) + "\n"


def layout_problems(source_file: str) -> list[str]:
    """Where the C++ structs of ``source_file`` are not laid out as the NumPy dtypes that
    mirror them, as the host compiler lays them out: ``kernels.layout_failures`` of
    ``kernels.layout_check`` compiled after emulation.h (syntax only: a second or so). Empty
    when they agree.

    Raises
    ------
    EmulationError
        When the program does not compile for another reason (no compiler; a field of a dtype
        that the C++ struct lacks), with the compiler's first errors.
    """
    text = kernels.kernel_source("emulation.h") + kernels.layout_check(source_file)
    command = [
        compiler(),
        *(f for f in cxx_flags() if f not in ("-shared", "-fPIC")),
        "-fsyntax-only",
        "-x",
        "c++",
        "-",
    ]
    try:
        result = subprocess.run(command, input=text, capture_output=True, text=True)
    except FileNotFoundError:
        raise EmulationError(
            f"no C++ compiler {command[0]!r} (set CXX, or install g++) to check {source_file}"
        ) from None
    problems = kernels.layout_failures(result.stderr)
    if result.returncode and not problems:
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        raise EmulationError(
            f"{command[0]} could not compile the layout check of {source_file} ({len(errors)} errors):\n"
            + "\n".join(errors[:20])
        )
    return problems


class Library:
    """One compiled group of specialisations: ``launch[name]`` and ``param_size[name]``.

    Raises ``OSError`` when ``path`` is not a library the host can load, and ``AttributeError``
    when it lacks a wrapper of ``names``.
    """

    def __init__(self, path, names):
        self.path = path
        self._dll = ctypes.CDLL(str(path))
        self.launch, self.param_size = {}, {}
        for k, name in enumerate(names):
            f = getattr(self._dll, f"cudadml_launch_{k}")
            f.restype = ctypes.c_int
            f.argtypes = [
                ctypes.c_char_p,
                ctypes.c_ulonglong,
                ctypes.c_ulonglong,
                ctypes.c_uint,
                ctypes.POINTER(ctypes.c_ulonglong),
                ctypes.c_int,
                ctypes.POINTER(ctypes.c_ulonglong),
                ctypes.c_int,
                ctypes.POINTER(_Fault),
                ctypes.POINTER(ctypes.c_ulonglong),
            ]
            size = getattr(self._dll, f"cudadml_param_size_{k}")
            size.restype = ctypes.c_ulonglong
            self.launch[name], self.param_size[name] = f, size()


def cache_entry(source_file: str, names: tuple[str, ...], directory=None):
    """``(path, text, command)``: where the library of ``names`` lives in ``directory`` (by
    default ``cache_dir()``), the translation unit it is built from, and the compiler command."""
    text = translation_unit(source_file, names)
    command = [compiler(), *cxx_flags()]
    key = hashlib.sha256(repr((command, text)).encode()).hexdigest()[:32]
    return pathlib.Path(cache_dir() if directory is None else directory) / f"{key}.so", text, command


_building: dict[pathlib.Path, threading.Lock] = {}  # per library path: one build per process at a time
_building_lock = threading.Lock()


@memory.cache(64)  # (per kernel file and group: a few dozen at most)
def library(source_file: str, names: tuple[str, ...]) -> Library:
    """The library of ``names`` (specialisations in ``source_file``), built unless cached."""
    return load(source_file, names)


def load(source_file: str, names: tuple[str, ...], directory=None) -> Library:
    """``library`` without the per-process memo, in ``directory`` (default ``cache_dir()``):
    the cached library if it loads with all its symbols, else one built now and cached."""
    path, text, command = cache_entry(source_file, names, directory)
    with _building_lock:
        lock = _building.setdefault(path, threading.Lock())
    with lock:  # threads of this process wait for one build; other processes build their own
        if path.exists():
            try:
                library = Library(path, names)
                _log.debug("emulation: %s loaded from %s", kernels.group_label(names), path)
                return library
            except (OSError, AttributeError):
                pass  # truncated, foreign or stale: rebuilt below, and loaded under another name
        started = time.perf_counter()
        library = _build(source_file, names, path, text, command)
        _log.info(
            "emulation: %s built by %s in %.2f s into %s",
            kernels.group_label(names),
            command[0],
            time.perf_counter() - started,
            path,
        )
        return library


def _build(source_file, names, path, text, command) -> Library:
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, source = tempfile.mkstemp(prefix=f"{path.stem}.", suffix=".cpp", dir=directory)
    except OSError as e:
        raise EmulationError(
            f"the emulation cache directory {directory} is unusable ({e.strerror or e}); "
            f"set CUDADML_CACHE_DIR to a writable directory"
        ) from None
    built = None
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        fd, built = tempfile.mkstemp(prefix=f"{path.stem}.", suffix=".so", dir=directory)
        os.close(fd)
        try:
            result = subprocess.run([*command, "-x", "c++", "-o", built, source], capture_output=True, text=True)
        except FileNotFoundError:
            raise EmulationError(
                f"no C++ compiler {command[0]!r} (set CXX, or install g++) to emulate the kernels of {source_file}"
            ) from None
        if result.returncode:
            raise EmulationError(
                f"{command[0]} could not compile the emulated {source_file} ({len(names)} kernels):\n{result.stderr}"
            )
        # Loaded under its temporary name: a broken library that was found at ``path`` may be
        # loaded already, and the dynamic loader would hand that one back for ``path``.
        try:
            library = Library(built, names)
        except (OSError, AttributeError) as e:
            raise EmulationError(
                f"{command[0]} built a library of the emulated {source_file} ({len(names)} kernels) "
                f"that cannot be used: {e}"
            ) from None
        os.replace(source, path.with_suffix(".cpp"))  # kept beside the library, for debugging
        os.replace(built, path)
        library.path = path
        return library
    finally:
        for leftover in (source, built):
            if leftover is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(leftover)


@memory.cache(1)
def _groups() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every specialisation's ``(source file, group)``: the plan's kernels by family, width and
    index type (``kernels.group_key``), so one build (a second or two) serves all their launches."""
    grouped: dict[tuple, list[str]] = {}
    for names in kernels.all_kernel_names().values():
        for name in names:
            grouped.setdefault(kernels.group_key(name), []).append(name)
    return {name: (key[0], tuple(names)) for key, names in grouped.items() for name in names}


def group_of(name: str) -> tuple[str, tuple[str, ...]]:
    """``(source file, names)`` of the library that holds specialisation ``name`` (alone, if
    the plan's lists lack it)."""
    return _groups().get(name, (kernels.source_file(name), (name,)))


def library_for(name: str) -> Library:
    """The library holding specialisation ``name``."""
    return library(*group_of(name))


def run(launches, inputs, outputs, readable, writable) -> int:
    """Run ``launches`` on host memory; returns the bytes that their stores wrote.

    ``inputs`` and ``outputs`` are the bindings' byte addresses; each launch gets the struct
    bytes ``launch.struct_bytes`` builds for them, which is what a GPU launch gets. Kernels may
    load only from the ``[low, high)`` byte ranges of ``readable`` and store only into those of
    ``writable``; a load or store outside them, or not aligned to its width, is a fault.

    Raises
    ------
    EmulationError
        For a fault (naming the kernel, the access, its address, block and thread), a struct
        whose size differs in C++, or a launch configuration that a GPU refuses.
    """
    reads = _ranges(readable)
    writes = _ranges(writable)
    stored_total = 0
    for launch in launches:
        library = library_for(launch.name)
        params = bytes(launch.struct_bytes(inputs, outputs))
        fault, stored = _Fault(), ctypes.c_ulonglong()
        with _LOCK:
            status = library.launch[launch.name](
                params,
                len(params),
                launch.grid,
                kernels.BLOCK,
                reads,
                len(readable),
                writes,
                len(writable),
                ctypes.byref(fault),
                ctypes.byref(stored),
            )
        if status == -1:
            raise EmulationError(
                f"{launch.name}: the parameter struct is {len(params)} bytes in NumPy, "
                f"{library.param_size[launch.name]} in C++"
            )
        if status == -2:
            raise EmulationError(
                f"{launch.name}: invalid launch configuration ({launch.grid} blocks of {kernels.BLOCK} threads)"
            )
        if status:
            raise EmulationError(
                f"{launch.name}: {_FAULTS.get(fault.kind, f'fault {fault.kind}')} at address "
                f"{fault.address:#x} in block {fault.block}, thread {fault.thread}"
            )
        stored_total += stored.value
    return stored_total


def _ranges(pairs):
    return (ctypes.c_ulonglong * (2 * len(pairs)))(*(int(x) for pair in pairs for x in pair))

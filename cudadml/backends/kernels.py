"""The CUDA backend: loads ``kernels_cu/`` through NVRTC and launches plans on CuPy memory.

``prepare(plan)`` turns a plan into launches once (kernel choice, index type, the parameter
struct with everything but the buffer addresses); ``Launch.__call__`` fills in the addresses
and launches. No allocation, host-to-device copy or synchronisation happens per call, so a
call can be captured in a CUDA graph.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import logging
import math
import pathlib
import re
import struct
import threading
import time

import numpy as np

from ..core import memory
from ..core.overlap import reach
from ..core.plan import (
    CopyPlan,
    SliceGradPlan,
    WindowGradPlan,
    WindowPlan,
    fast_division,
    grad_element_size,
    grad_window_dtype,
    is_packed,
)

try:  # the compiled launcher, where the install found a C compiler (setup.py); else Launch's Python route
    from . import _launch as _native

    #: Its statuses that the Python route handles: no kernel loaded on the current device, no
    #: libcuda to call, no context current in this thread.
    _PYTHON_ROUTE = frozenset({_native.NO_FUNCTION, _native.NO_DRIVER, _native.NO_CONTEXT})
except ImportError:
    _native = None

# The launch shape. Small blocks put more independent blocks on each SM than 256 x 4 (H100,
# int8 window 87% -> 93% of a copy, f16 92% -> 97%, 8-D window 50% -> 58%; H200 likewise:
# tune_launch.py, 128 threads at least as fast as 256 on every case).
BLOCK = 128  # threads per block
#: Work items per thread, by kernel family, for each memory system measured (tune_launch.py over
#: bench.py's large cases), keyed by its memory bandwidth per SM in GB/s: a device takes the
#: table measured nearest its own (``items_per_thread()``). What moves more bytes per SM needs
#: more loads in flight where an item is one element.
#: H100 SXM (3.35 TB/s over 132 SMs): one item where an item's loads wait on a long index
#: computation (a 16-byte chunk found through every dimension): the most threads, each with
#: its loads in flight soonest (against two items: int8 window 92% -> 96% of a copy, 4096
#: regions 109% -> 113%, the sums of 64 crops' gradient 12% -> 23%). Two where an item is one
#: element (stride-2 gather 56% -> 68% against one item) or one window's gradient sample
#: (78% -> 87%), and for batches of copy jobs ("copy_batch": SPLIT, JOIN), whose blocks each
#: first search for their job (64 parts along axis 0: 97% -> 98%).
#: H200 (4.8 TB/s over 132 SMs), against the H100's table (bench.py --against): four items of
#: one element (reverse innermost 79% -> 92%), four of a window's gradient sample (256 crops:
#: 77% -> 81%); the other families as the H100's, one or two items best there too (two of the
#: slice gradient, step -2 80% -> 84% in tune_launch.py, spill the 64-bit index kernels of
#: 1-byte elements: not taken).
_H100_ITEMS = {
    "gather_elements": 2,
    "gather_rows": 1,
    "gather_flat": 1,
    "gather_lanes": 2,
    "copy_batch": 2,
    "slice_grad": 1,
    "gather_windows": 1,
    "window_grad": 1,
    "window_grad_per_sample": 2,
}
ITEMS_BY_BANDWIDTH = {
    25: _H100_ITEMS,
    36: {**_H100_ITEMS, "gather_elements": 4, "window_grad_per_sample": 4},
}
_DEFAULT_BANDWIDTH = 25  # no CUDA device (the host emulation), or none that answers
_MOST_ITEMS = max(n for table in ITEMS_BY_BANDWIDTH.values() for n in table.values())  # bounds every work index
CHUNK = 16  # gather_rows moves 16-byte chunks
#: The most blocks a grid takes (gridDim.x, and the kernels' int block indices): 2^31 - 1
#: blocks of BLOCK threads move terabytes, more than a device holds.
MAX_GRID = 2**31 - 1
MAX_RANK = 8
#: Batch capacities compiled for; a batch of more jobs is launched in groups of the largest.
JOB_CAPACITIES = (1, 4, 16, 64, 128)
#: Kernel parameter space (CUDA 12.1+ on Volta and newer).
MAX_PARAM_BYTES = 32764
#: Rows shorter than this go through gather_elements (a 16-byte chunk would be mostly empty).
MIN_ROW_BYTES = 16
COPY_FAMILIES = ("gather_elements", "gather_rows", "gather_flat")
#: gather_lanes: element widths and innermost sizes it is built for (where an element's index
#: arithmetic costs more than its traffic: H100, Focus in float16, 59% -> see benchmarks).
LANE_WIDTHS, LANES = (1, 2), 2
_ADDRESS = struct.Struct("<Q")
_ONE_POINTER = ctypes.c_void_p * 1
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$', re.MULTILINE)
_log = logging.getLogger(__name__)


def kernel_files():
    """Where the kernel sources are: ``kernels_cu/`` beside this module."""
    return pathlib.Path(__file__).resolve().parent / "kernels_cu"


def kernel_source(name: str) -> str:
    """The text of ``kernels_cu/name`` with its local ``#include "..."`` lines inlined, so
    CuPy's on-disk cache key (the source text) changes whenever a header does."""
    files = kernel_files()
    seen: set[str] = set()

    def expand(file_name):
        if file_name in seen:  # headers use #pragma once; inline each once
            return ""
        seen.add(file_name)
        text = (files / file_name).read_text()
        return _INCLUDE.sub(lambda m: expand(m.group(1)), text)

    return expand(name)


class KernelCompileError(RuntimeError):
    """NVRTC rejected a kernel: names the specialisation and carries the compiler log."""


def _index_name(index_type) -> str:
    return "int" if np.dtype(index_type) == np.int32 else "long long"


def kernel_name(family: str, *args) -> str:
    """The C++ name of one specialisation, e.g. ``gather_rows<4, int, 3, 1>``."""
    return f"{family}<{', '.join(_index_name(a) if isinstance(a, type) else str(a) for a in args)}>"


_SOURCES = {
    "gather_elements": "strided_copy.cu",
    "gather_rows": "strided_copy.cu",
    "gather_flat": "strided_copy.cu",
    "gather_lanes": "strided_copy.cu",
    "slice_grad": "slice_grad.cu",
    "gather_windows": "windows.cu",
    "window_grad": "windows.cu",
}
#: window_grad's kinds (windows.cu's GradKind): words moved (per sample), integers wrapped,
#: floats added.
MOVE_KINDS, SUM_KINDS = (1, 2, 4, 8), (11, 12, 14, 18, 22, 24, 28)
#: window_grad's elements per work item along a contiguous innermost axis, at most.
GRAD_LANES = 4
_items = None  # the table this process launches with, chosen at the first launch shape asked for


def items_per_thread() -> dict:
    """Work items per thread by kernel family: the table measured nearest the current CUDA
    device's memory bandwidth per SM, chosen once per process (so every grid and every kernel
    build, the host emulation's too, agree)."""
    global _items
    if _items is None:
        per_sm = _bandwidth_per_sm()
        _items = ITEMS_BY_BANDWIDTH[min(ITEMS_BY_BANDWIDTH, key=lambda k: abs(math.log(k / per_sm)))]
    return _items


def _bandwidth_per_sm() -> float:
    """GB/s of memory bandwidth per SM of the current CUDA device (double data rate over the
    bus), or the default where CuPy sees none."""
    try:
        from cupy_backends.cuda.api import runtime

        device = runtime.getDevice()
        attribute = functools.partial(runtime.deviceGetAttribute, device=device)
        clock_khz = attribute(runtime.cudaDevAttrMemoryClockRate)
        bus_bits = attribute(runtime.cudaDevAttrGlobalMemoryBusWidth)
        sms = attribute(runtime.cudaDevAttrMultiProcessorCount)
    except Exception:  # no CuPy, no driver, no device
        return _DEFAULT_BANDWIDTH
    if not (clock_khz > 0 and bus_bits > 0 and sms > 0):
        return _DEFAULT_BANDWIDTH
    return 2 * clock_khz * 1e3 * bus_bits / 8 / sms / 1e9


def use_launch_shape(block: int, items: dict) -> None:
    """Launch with ``block`` threads per block and ``items`` (family: work items per thread)
    from now on; for a process that has compiled and prepared nothing yet (tune_launch.py)."""
    global BLOCK, _items, _MOST_ITEMS
    BLOCK, _items = block, dict(items)
    _MOST_ITEMS = max(_MOST_ITEMS, *items.values())


def defines(table=None) -> tuple[str, ...]:
    """The launch shape as -D options (``items_per_thread()``, or another ``table`` of items by
    family): it reaches the kernels from here (common.cuh refuses to compile without it), so the
    grid sizes and the kernels' indexing cannot disagree."""
    table = items_per_thread() if table is None else table
    return (f"-DCUDADML_BLOCK={BLOCK}", *(f"-DCUDADML_ITEMS_{family.upper()}={n}" for family, n in table.items()))


def options(table=None) -> tuple[str, ...]:
    """NVRTC's options for a kernel build (``table`` as ``defines`` takes it)."""
    return ("--std=c++17", *defines(table))


_GROUP = re.compile(r"(\w+)<(\d+),.*\b(int|long long)\b")  # family, element width, index type


def source_file(name: str) -> str:
    """The file in ``kernels_cu/`` that defines specialisation ``name``."""
    return _SOURCES[name.split("<", 1)[0]]


def group_key(name: str) -> tuple[str, str, str, str]:
    """``(source file, family, width, index type)``: specialisations that differ only in rank
    and capacity share a key, and are compiled together where many are wanted."""
    return (source_file(name), *_GROUP.match(name).groups())


def group_label(names) -> str:
    """A short description of a group of specialisations for logs, e.g.
    ``40 kernels gather_rows<4, int, ...> of strided_copy.cu``."""
    if len(names) == 1:
        return names[0]
    _, family, width, index = group_key(names[0])
    return f"{len(names)} kernels {family}<{width}, {index}, ...> of {source_file(names[0])}"


_driver = _runtime = _current_stream = None  # cupy_backends' CUDA APIs and CuPy's stream, bound by _loader()
#: ``(device id, name) -> CuPy RawKernel`` of every kernel compiled and loaded in this process.
_compiled: dict[tuple[int, str], object] = {}


@memory.cache(maxsize=1)
def _loader():
    global _driver, _runtime, _current_stream
    import cupy
    from cupy_backends.cuda.api import driver, runtime

    _driver, _runtime, _current_stream = driver, runtime, cupy.cuda.get_current_stream
    return cupy


def is_compiled(device: int, name: str) -> bool:
    """Whether the kernel ``name`` is compiled and loaded on ``device`` in this process."""
    return (device, name) in _compiled


def load(name: str):
    """The kernel ``name`` on the current device, compiled on first use."""
    _loader()
    function = _compiled.get((_runtime.getDevice(), name))
    return function if function is not None else compile_kernels((name,))[name]


def compile_kernels(names) -> dict:
    """Compile ``names`` (specialisations of one source file) as one NVRTC program, load them on
    the current device and keep them for ``load``; ``{name: CuPy RawKernel}``."""
    cupy = _loader()
    started = time.perf_counter()
    module = cupy.RawModule(code=kernel_source(source_file(names[0])), options=options(), name_expressions=list(names))
    try:
        functions = {name: module.get_function(name) for name in names}
    except cupy.cuda.compiler.CompileException as e:
        raise KernelCompileError(f"NVRTC could not compile {group_label(names)}:\n{e.get_message()}") from e
    device = _runtime.getDevice()
    for name, function in functions.items():
        _compiled[device, name] = function
    _log.info(
        "NVRTC: %s ready on device %d in %.2f s (compiled, or from CuPy's kernel cache)",
        group_label(names),
        device,
        time.perf_counter() - started,
    )
    return functions


# ---- parameter structs (the C++ structs' layout, by NumPy's align=True; see layout_check) -------


def divider_dtype(index_type):
    """common.cuh's ``Divider<I>``: a divisor with its ``fast_division`` magic (of the index's
    width) and shift."""
    i = np.dtype(index_type)
    return np.dtype([("d", i), ("magic", np.dtype(f"u{i.itemsize}")), ("shift", np.uint32)], align=True)


def set_dividers(field, divisors) -> None:
    """Fill a ``Divider`` array field of a parameter struct with ``divisors``."""
    bits = 8 * field.dtype["d"].itemsize
    field["d"] = divisors
    field["magic"], field["shift"] = zip(*(fast_division(int(d), bits) for d in divisors))


def _struct(*fields):
    """The dtype of a C++ struct of ``fields`` (``(name, dtype)`` or ``(name, dtype, shape)``, in
    order), laid out as the compilers lay it out."""
    return np.dtype(list(fields), align=True)


#: The fields a kernel's parameters begin with (``u64 src, dst;``): where it reads and writes.
_ADDRESSES = (("src", np.uint64), ("dst", np.uint64))


def copy_job_dtype(index_type, rank):
    i = np.dtype(index_type)
    return _struct(
        *_ADDRESSES,
        ("count", i),
        ("row", i),
        ("bytes", i),
        ("src_low", i),
        ("src_high", i),
        ("sizes", divider_dtype(i), (rank,)),
        ("src_strides", i, (rank,)),
        ("dst_strides", i, (rank,)),
    )


def copy_batch_dtype(index_type, rank, capacity):
    return _struct(
        ("jobs", copy_job_dtype(index_type, rank), (capacity,)),
        ("block_start", np.int32, (capacity + 1,)),
        ("num_jobs", divider_dtype(np.int32)),
        ("interleaved", np.int32),
    )


def grad_params_dtype(index_type, rank):
    i = np.dtype(index_type)
    return _struct(
        *_ADDRESSES,
        ("fill", np.uint32, (4,)),
        ("count", i),
        ("inner", i),
        ("sizes", divider_dtype(i), (rank,)),
        ("dst_strides", i, (rank,)),
        ("starts", i, (rank,)),
        ("steps", divider_dtype(i), (rank,)),
        ("counts", i, (rank,)),
        ("src_strides", i, (rank,)),
    )


def window_params_dtype(index_type, rank):
    i = np.dtype(index_type)
    return _struct(
        *_ADDRESSES,
        ("table", np.uint64),
        ("dst_window", np.int64),
        ("count", i),
        ("bytes", i),
        ("src_low", i),
        ("src_high", i),
        ("sizes", divider_dtype(i), (rank,)),
        ("blocks", divider_dtype(np.int32)),
    )


def window_grad_params_dtype(index_type, rank):
    i = np.dtype(index_type)
    return _struct(
        *_ADDRESSES,
        ("table", np.uint64),
        ("count", i),
        ("inner", i),
        ("sizes", divider_dtype(i), (rank,)),
        ("dst_strides", i, (rank,)),
        ("windows", np.int32),
    )


# ---- the structs' layout, checked field by field by the compilers -----------------------------

INDEX_TYPES = (np.int32, np.int64)
#: The first words of every message of ``layout_assertions``, by which ``layout_failures``
#: finds them in a compiler's log.
LAYOUT_FAILURE = "struct layout: "
#: ``CudadmlBare<T&>::type`` is T: a field's type from ``decltype`` of an access to it.
_BARE = (
    "template <typename T> struct CudadmlBare { typedef T type; };\n"
    "template <typename T> struct CudadmlBare<T&> { typedef T type; };\n"
)


def parameter_structs() -> dict[str, list[tuple[str, np.dtype]]]:
    """Every struct that the host hands to the kernels, with the dtype that mirrors it, by the
    source file that defines (or includes) it: ``{source file: [(C++ type, dtype)]}``. Each for
    both index types, every rank up to ``MAX_RANK`` and every batch capacity; ``Divider``
    (common.cuh), which they all hold, in every file."""
    structs = {
        name: [(f"Divider<{_index_name(i)}>", divider_dtype(i)) for i in INDEX_TYPES]
        for name in sorted(set(_SOURCES.values()))
    }
    for i in INDEX_TYPES:
        n = _index_name(i)
        for r in range(1, MAX_RANK + 1):
            structs["strided_copy.cu"].append((f"CopyJob<{n}, {r}>", copy_job_dtype(i, r)))
            structs["strided_copy.cu"] += [
                (f"CopyBatch<{n}, {r}, {c}>", copy_batch_dtype(i, r, c)) for c in JOB_CAPACITIES
            ]
            structs["slice_grad.cu"].append((f"GradParams<{n}, {r}>", grad_params_dtype(i, r)))
            structs["windows.cu"].append((f"WindowParams<{n}, {r}>", window_params_dtype(i, r)))
            structs["windows.cu"].append((f"WindowGradParams<{n}, {r}>", window_grad_params_dtype(i, r)))
    structs["windows.cu"] += [(f"GradWindow<{d}>", grad_window_dtype(d)) for d in range(1, MAX_RANK + 1)]
    structs["windows.cu"].append(("GradDim", grad_window_dtype(1)["dims"].base))
    return structs


def _field_checks(dtype, struct, prefix="", at=0):
    """``(field, what, C++ expression, NumPy's value)`` for every field of ``dtype`` (nested at
    byte ``at`` of type ``struct``, under member path ``prefix``): its offset, size, alignment
    and, of an integer, signedness (then the expression is a truth, ``what`` says what its
    failure means and the value is None); into nested structs; of an array field its whole
    size, then its first and last elements."""
    for name in dtype.names:
        field, offset = dtype.fields[name][:2]
        path = prefix + name
        if field.subdtype is None:
            yield from _element_checks(field, struct, path, at + offset)
            continue
        base, shape = field.subdtype
        yield path, "size", f"sizeof((({struct}*)nullptr)->{path})", field.itemsize
        for index in sorted({(0,) * len(shape), tuple(n - 1 for n in shape)}):
            element = at + offset + base.itemsize * int(np.ravel_multi_index(index, shape))
            yield from _element_checks(base, struct, path + "".join(f"[{k}]" for k in index), element)


def _element_checks(dtype, struct, path, at):
    bare = f"CudadmlBare<decltype((({struct}*)nullptr)->{path})>::type"
    yield path, "offset", f"__builtin_offsetof({struct}, {path})", at
    yield path, "size", f"sizeof({bare})", dtype.itemsize
    yield path, "alignment", f"alignof({bare})", dtype.alignment
    if dtype.kind in "iu":
        signed = dtype.kind == "i"
        said = "signed in NumPy, unsigned in C++" if signed else "unsigned in NumPy, signed in C++"
        yield path, said, f"(({bare})-1 < 0) == {str(signed).lower()}", None
    if dtype.names:
        yield from _field_checks(dtype, struct, path + ".", at)


def layout_assertions(cpp_type: str, dtype, alias: str) -> list[str]:
    """``static_assert`` lines that hold iff the C++ struct ``cpp_type`` is laid out as ``dtype``:
    its size and alignment, and every check of ``_field_checks``. ``alias`` names the struct
    (declared by a typedef: no comma of a template's arguments reaches ``__builtin_offsetof``).
    A failure's message is ``LAYOUT_FAILURE``, the struct, the field and NumPy's value."""
    checks = [("", "size", f"sizeof({alias})", dtype.itemsize), ("", "alignment", f"alignof({alias})", dtype.alignment)]
    lines = []
    for field, what, expression, value in [*checks, *_field_checks(dtype, alias)]:
        where = f"{cpp_type}{'::' if field else ''}{field}"
        if value is None:
            lines.append(f'static_assert({expression}, "{LAYOUT_FAILURE}{where}: {what}");')
        else:
            lines.append(f'static_assert({expression} == {value}, "{LAYOUT_FAILURE}{where}: {what} {value} in NumPy");')
    return lines


def layout_check(source_file: str) -> str:
    """``source_file`` (includes inlined) followed by ``layout_assertions`` of each of its
    ``parameter_structs``: a program that compiles iff the C++ structs are laid out as their
    dtypes. It instantiates no kernel; the emulation compiles it after emulation.h."""
    parts = [kernel_source(source_file), "// The parameter structs' layout, as the NumPy dtypes give it.", _BARE]
    for k, (cpp_type, dtype) in enumerate(parameter_structs()[source_file]):
        alias = f"cudadml_struct_{k}"
        parts.append(f"typedef {cpp_type} {alias};")
        parts += layout_assertions(cpp_type, dtype, alias)
    return "\n".join(parts) + "\n"


_ASSERTION = re.compile(r'static assertion failed(?: with)?:? "?' + re.escape(LAYOUT_FAILURE) + r'([^"\n]*)')
#: g++'s "the comparison reduces to '(320 == 336)'", NVRTC's "the final comparison was 320 == 336".
_COMPARISON = re.compile(r"(?:comparison reduces to \W*|final comparison was )(\d+) == \d+")


def layout_failures(log: str) -> list[str]:
    """The failed ``layout_assertions`` in a compiler's log (g++'s or NVRTC's), each as the
    struct, the field and NumPy's value, with the compiler's where its note gives it: e.g.
    ``CopyJob<int, 2>::count: offset 16 in NumPy, 20 in C++``."""
    problems = []
    noted = True
    for line in log.splitlines():
        if m := _ASSERTION.search(line):
            problems.append(m.group(1))
            noted = False
        elif not noted and "error" in line:
            noted = True
        elif not noted and problems[-1].endswith("in NumPy") and (m := _COMPARISON.search(line)):
            problems[-1] += f", {m.group(1)} in C++"
            noted = True
    return problems


def _index_type(element_size, count, *stride_sets):
    """int32 when every work index a launch forms (up to a whole block past ``count``) and
    every byte offset from a job's first element fit in 31 bits, else int64."""
    span = max(sum((n - 1) * abs(s) for n, s in strides) for strides in stride_sets) * element_size
    return np.int32 if max(span + element_size, count + BLOCK * _MOST_ITEMS) < 2**31 else np.int64


def _pad(values, rank, fill):
    return (fill,) * (rank - len(values)) + tuple(values)


def _blocks(count: int, items: int) -> int:
    return -(-count // (BLOCK * items))


#: Up to this many address fields, a launch rewrites them one by one (cheaper than NumPy).
_FEW_SLOTS = 16


class Launch:
    """One kernel launch with its parameter struct; the buffer addresses come per call.

    ``slots`` lists ``(byte position, role, binding, byte offset)`` for every address field of
    the struct: before each launch it receives the address of binding ``binding`` of the
    inputs (role 0) or outputs (role 1), plus the offset. The struct travels as bytes straight
    to ``cuLaunchKernel`` (CuPy's generic argument packing costs more than the kernel at small
    sizes): ``cuLaunchKernel`` copies the parameters before it returns. The compiled launcher
    (``_launch.c`` beside this file, built where the install found a C compiler) fills a copy of the
    template and launches in one call; without it, a call rewrites only the address fields of a
    copy kept per thread, in Python (0.8 us more per launch, 10 us more for 128 addresses).
    """

    def __init__(self, name, grid, params, slots):
        if grid > MAX_GRID:  # said here rather than by the driver at the launch
            raise ValueError(f"{name}: a grid of {grid} blocks, more than the {MAX_GRID} a launch takes")
        self.name, self.grid, self.params = name, grid, params
        self._template = params.tobytes()
        assert len(self._template) % 8 == 0 and all(p % 8 == 0 for p, *_ in slots)
        self._slots = [(int(p) // 8, r, int(b), int(o)) for p, r, b, o in slots]
        self._many = None
        if len(self._slots) > _FEW_SLOTS:  # rewritten as one NumPy gather (``_gather``)
            words, roles, bindings, offsets = np.array(self._slots, np.int64).T
            self._many = (words, roles, bindings, offsets.astype(np.uint64))
            self._gathers = {}  # number of inputs -> (words, positions in inputs + outputs, offsets)
        self._functions = {}  # device id -> CUfunction
        self._packed_slots = np.array(self._slots, np.int64).reshape(-1).tobytes()  # for _native
        self._words = ctypes.c_uint64 * (len(self._template) // 8)
        self._local = threading.local()

    def load(self):
        """The kernel on the current device, compiled on first use (NVRTC, then CuPy's caches)."""
        return load(self.name)

    def struct_bytes(self, inputs, outputs) -> bytearray:
        """The parameter struct's bytes for these binding addresses (written as a launch writes
        them: by the compiled launcher where there is one)."""
        buffer = bytearray(self._template)
        if _native is not None:
            _native.fill(buffer, self._packed_slots, inputs, outputs)
            return buffer
        bound = (inputs, outputs)
        for word, role, index, offset in self._slots:
            _ADDRESS.pack_into(buffer, 8 * word, bound[role][index] + offset)
        return buffer

    def struct(self, inputs, outputs):
        """The parameter struct for these binding addresses, as a NumPy structured scalar."""
        return np.frombuffer(self.struct_bytes(inputs, outputs), self.params.dtype)[0]

    def _arguments(self):
        """This thread's parameter words and the address of the pointer array that holds them,
        made on the thread's first launch of this kernel; which also makes sure the thread has
        a current context: the driver's launch needs one, and a thread that has made no CUDA
        runtime call (a worker of Dask's or of a thread pool, given arrays made elsewhere) has
        none."""
        if _driver.ctxGetCurrent() == 0:
            _runtime.setDevice(_runtime.getDevice())
        words = self._words.from_buffer_copy(self._template)
        argv = _ONE_POINTER(ctypes.addressof(words))
        self._local.arguments = arguments = (words, ctypes.addressof(argv), argv, np.frombuffer(words, np.uint64))
        return arguments

    def __call__(self, inputs, outputs, stream_ptr):
        if _native is not None:
            status = _native.launch(
                self._functions, self.grid, BLOCK, stream_ptr, self._template, self._packed_slots, inputs, outputs
            )
            if status == 0:
                return
            if status not in _PYTHON_ROUTE:  # the driver refused the launch
                raise _driver.CUDADriverError(status)
            # Nothing was launched: the Python route loads the kernel on a device it has not run
            # on yet, or makes a context current in a thread that has none.
        device = _runtime.getDevice()
        function = self._functions.get(device)
        if function is None:
            function = self._functions[device] = self.load().kernel.ptr
        arguments = getattr(self._local, "arguments", None) or self._arguments()
        if self._many is None:
            words = arguments[0]
            bound = (inputs, outputs)
            for word, role, index, offset in self._slots:
                words[word] = bound[role][index] + offset
        else:
            # The same address lists again (a batch's remembered bindings; lists are never
            # changed once passed) leave the words as they are.
            bound = self._local.__dict__.get("bound")
            if bound is None or bound[0] is not inputs or bound[1] is not outputs:
                gather = self._gathers.get(len(inputs)) or self._gather(len(inputs))
                arguments[3][gather[0]] = np.array(inputs + outputs, np.uint64)[gather[1]] + gather[2]
                self._local.bound = (inputs, outputs)
        _driver.launchKernel(function, self.grid, 1, 1, BLOCK, 1, 1, 0, stream_ptr, arguments[1], 0)

    def _gather(self, num_inputs):
        """For calls of ``num_inputs`` inputs: each address field's word, the position of its
        binding in ``inputs + outputs``, and its offset."""
        words, roles, bindings, offsets = self._many
        self._gathers[num_inputs] = gather = (words, bindings + roles * num_inputs, offsets)
        return gather

    def __repr__(self):
        return f"<Launch {self.name} grid={self.grid}>"


def _copy_launches(plan: CopyPlan) -> list[Launch]:
    """One launch for the whole batch, unless its parameter struct would pass the driver's
    limit: then groups of the largest capacity that fits. Every group uses one kernel:

    * gather_flat where rows (the innermost dimension) are contiguous on both sides and at
      least 16 bytes, and each job's output is packed: aligned 16-byte chunks of the whole
      output, so rows of any length and alignment leave in full 16-byte stores;
    * gather_rows where rows qualify but some output is not packed (JOIN's parts of one
      output, ``out=`` views): aligned 16-byte chunks of each row;
    * gather_lanes where elements are narrow and every job's innermost dimension has
      ``LANES`` elements: one work item moves them all;
    * gather_elements otherwise: one element per work item.
    """
    e = plan.element_size
    rows = all(j.in_strides[-1] == 1 and j.out_strides[-1] == 1 and j.sizes[-1] * e >= MIN_ROW_BYTES for j in plan.jobs)
    flat = rows and all(is_packed(j.sizes, j.out_strides) for j in plan.jobs)
    lanes = not rows and e in LANE_WIDTHS and all(len(j.sizes) > 1 and j.sizes[-1] == LANES for j in plan.jobs)
    boxes = []
    for j in plan.jobs:
        src, dst = (*j.in_strides[:-1], 0), (*j.out_strides[:-1], 0)
        if lanes:  # the innermost dimension leaves the box: each item walks it
            sizes, src, dst = j.sizes[:-1], j.in_strides[:-1], j.out_strides[:-1]
            count = math.prod(sizes)
        elif flat:
            sizes = (*j.sizes[:-1], j.sizes[-1] * e)  # the innermost in bytes
            count = -(-j.count * e // CHUNK) + 1  # enough for any alignment of the output
        elif rows:
            sizes = (*j.sizes[:-1], -(-j.sizes[-1] * e // CHUNK) + 1)  # any alignment of a row's start
            count = math.prod(sizes)
        else:
            sizes, src, dst = j.sizes, j.in_strides, j.out_strides
            count = math.prod(sizes)
        boxes.append((j, sizes, src, dst, count))
    rank = max(len(b[1]) for b in boxes)
    wide = any(
        _index_type(e, count, list(zip(j.sizes, j.in_strides)), list(zip(j.sizes, j.out_strides))) == np.int64
        or (flat and j.count * e + CHUNK >= 2**31)
        for j, _, _, _, count in boxes
    )
    index_type = np.int64 if wide else np.int32
    fits = _capacities(index_type, rank)
    family = "gather_flat" if flat else "gather_rows" if rows else "gather_lanes" if lanes else "gather_elements"
    return [
        _copy_launch(family, e, index_type, rank, fits, boxes[k : k + fits[-1]]) for k in range(0, len(boxes), fits[-1])
    ]


#: An interleaved grid has num_jobs * (most blocks of a job) blocks; beyond this many times the
#: blocks with work, the empty ones would cost more than the shared rows save.
_INTERLEAVE_SLACK = 1.125


def _walk_together(jobs) -> bool:
    """Whether neighbouring jobs reach into each other's span of a binding they share (SPLIT
    along an inner axis reads rows that every part takes a piece of; JOIN writes them): then
    their blocks should advance together."""

    def meet(a, b):
        return a[0] <= b[1] and b[0] <= a[1]

    return any(
        (
            a.input == b.input
            and meet(reach(a.in_offset, a.sizes, a.in_strides), reach(b.in_offset, b.sizes, b.in_strides))
        )
        or (
            a.output == b.output
            and meet(reach(a.out_offset, a.sizes, a.out_strides), reach(b.out_offset, b.sizes, b.out_strides))
        )
        for a, b in itertools.pairwise(jobs)
    )


def _copy_launch(family, e, index_type, rank, capacities, boxes) -> Launch:
    capacity = next(c for c in capacities if c >= len(boxes))
    params = np.zeros((), copy_batch_dtype(index_type, rank, capacity))
    block_start, items = [0], items_per_thread()[family if capacity == 1 else "copy_batch"]
    for k, (j, sizes, src, dst, count) in enumerate(boxes):
        job = params["jobs"][k]
        job["count"], job["row"], job["bytes"] = count, j.sizes[-1], j.count * e
        if family == "gather_lanes":
            job["row"], job["bytes"] = j.in_strides[-1], j.out_strides[-1]
        low, high = reach(0, j.sizes[:-1], j.in_strides[:-1])
        job["src_low"], job["src_high"] = low * e, high * e + j.sizes[-1] * e
        set_dividers(job["sizes"], _pad(sizes, rank, 1))
        job["src_strides"], job["dst_strides"] = _pad(src, rank, 0), _pad(dst, rank, 0)
        block_start.append(block_start[-1] + _blocks(count, items))
    params["block_start"][: len(block_start)] = block_start
    set_dividers(params["num_jobs"][None], [len(boxes)])
    grid = block_start[-1]
    most = max(b - a for a, b in itertools.pairwise(block_start))
    if len(boxes) > 1 and _walk_together([j for j, *_ in boxes]) and len(boxes) * most <= grid * _INTERLEAVE_SLACK:
        params["interleaved"] = 1
        grid = len(boxes) * most
    job_dtype = params.dtype["jobs"].base
    jobs_at = params.dtype.fields["jobs"][1]
    slots = []
    for k, (j, *_) in enumerate(boxes):
        at = jobs_at + k * job_dtype.itemsize
        slots.append((at + job_dtype.fields["src"][1], 0, j.input, j.in_offset * e))
        slots.append((at + job_dtype.fields["dst"][1], 1, j.output, j.out_offset * e))
    return Launch(_copy_kernel(family, e, index_type, rank, capacity), grid, params, slots)


def _capacities(index_type, rank) -> list[int]:
    """The job capacities of a copy batch whose parameter struct the driver takes."""
    return [c for c in JOB_CAPACITIES if copy_batch_dtype(index_type, rank, c).itemsize <= MAX_PARAM_BYTES]


def _copy_kernel(family, e, index_type, rank, capacity) -> str:
    """The kernel of a copy batch of ``family`` (gather_lanes: its lanes one more dimension)."""
    lanes = (LANES,) if family == "gather_lanes" else ()
    return kernel_name(family, e, index_type, rank, capacity, *lanes)


def _grad_launch(plan: SliceGradPlan) -> Launch:
    e, rank = plan.element_size, len(plan.sizes)
    inner = plan.sizes[-1]
    vector = _grad_vector(e, plan.out_strides[-1] == 1 and inner >= CHUNK // e)
    sizes = (*plan.sizes[:-1], -(-inner // vector))
    count = math.prod(sizes)
    index_type = _index_type(e, count, list(zip(plan.sizes, plan.out_strides)), list(zip(plan.counts, plan.in_strides)))
    params = np.zeros((), grad_params_dtype(index_type, rank))
    params["fill"] = np.frombuffer(plan.fill, "<u4")  # the words as the kernel's 16-byte lanes hold them
    params["count"], params["inner"] = count, inner
    set_dividers(params["sizes"], sizes)
    params["dst_strides"], params["starts"] = plan.out_strides, plan.starts
    set_dividers(params["steps"], plan.steps)
    params["counts"], params["src_strides"] = plan.counts, plan.in_strides
    fields = params.dtype.fields
    slots = [(fields["src"][1], 0, 0, plan.in_offset * e), (fields["dst"][1], 1, 0, 0)]
    name = kernel_name("slice_grad", e, vector, index_type, rank)
    return Launch(name, _blocks(count, items_per_thread()["slice_grad"]), params, slots)


def _window_launch(plan: WindowPlan) -> Launch:
    e, rank = plan.element_size, len(plan.sizes)
    sizes = (*plan.sizes[:-1], plan.sizes[-1] * e)  # the innermost in bytes
    nbytes = math.prod(plan.sizes) * e
    count = -(-nbytes // CHUNK) + 1  # enough for any alignment of the window's output
    span = (plan.in_high - plan.in_low + 1) * e
    wide = max(span, nbytes + CHUNK, count + BLOCK * _MOST_ITEMS) >= 2**31
    index_type = np.int64 if wide else np.int32
    params = np.zeros((), window_params_dtype(index_type, rank))
    params["dst_window"], params["count"], params["bytes"] = plan.out_window, count, nbytes
    params["src_low"], params["src_high"] = plan.in_low * e, (plan.in_high + 1) * e
    set_dividers(params["sizes"], sizes)
    blocks = _blocks(count, items_per_thread()["gather_windows"])
    set_dividers(params["blocks"][None], [blocks])
    fields = params.dtype.fields
    slots = [(fields["src"][1], 0, 0, 0), (fields["table"][1], 0, 1, 0), (fields["dst"][1], 1, 0, 0)]
    grid = plan.num_windows * blocks
    return Launch(kernel_name("gather_windows", e, index_type, rank), grid, params, slots)


#: Sums take lanes only where this many work items remain: each element asks every window, so
#: lanes save table reads per element (4096 regions' gradient on an H100: 30 ms -> 9.6 ms) but
#: fewer items can leave the GPU short of threads (64 crops' gradient: 114 us -> 158 us).
SUM_LANES_FROM = 2**19


def _grad_lanes(kind, per_sample, rank, elements=None) -> int:
    """window_grad's V where the innermost axis is contiguous: elements of up to 16 bytes in
    all, at most GRAD_LANES. Sums of rank 7 and 8 stay at 1 (the lanes' registers would
    spill), and so do sums of fewer than SUM_LANES_FROM * V elements (``elements``; None: any)."""
    lanes = min(GRAD_LANES, CHUNK // grad_element_size(kind))
    if not per_sample and (rank >= MAX_RANK - 1 or (elements is not None and elements < SUM_LANES_FROM * lanes)):
        return 1
    return lanes


def _window_grad_launch(plan: WindowGradPlan) -> Launch:
    rank, e, inner = len(plan.sizes), plan.element_size, plan.sizes[-1]
    lanes = _grad_lanes(plan.kind, plan.per_sample, rank, math.prod(plan.sizes))
    vector = lanes if plan.out_strides[-1] == 1 and inner >= lanes else 1
    sizes = (*plan.sizes[:-1], -(-inner // vector))
    count = math.prod(sizes)
    index_type = _index_type(e, count, list(zip(plan.sizes, plan.out_strides)))
    params = np.zeros((), window_grad_params_dtype(index_type, rank))
    params["count"], params["inner"], params["windows"] = count, inner, plan.num_windows
    set_dividers(params["sizes"], sizes)
    params["dst_strides"] = plan.out_strides
    fields = params.dtype.fields
    slots = [(fields["src"][1], 0, 0, 0), (fields["table"][1], 0, 1, 0), (fields["dst"][1], 1, 0, 0)]
    name = kernel_name("window_grad", plan.kind, vector, index_type, rank, int(plan.per_sample))
    per_thread = items_per_thread()["window_grad_per_sample" if plan.per_sample else "window_grad"]
    return Launch(name, _blocks(count, per_thread), params, slots)


def _grad_vector(e, contiguous) -> int:
    """slice_grad's elements per work item: a 16-byte chunk where the output's rows are
    ``contiguous`` for one, else 1."""
    return CHUNK // e if contiguous else 1


def prepare(plan) -> tuple[Launch, ...]:
    """The launches that run ``plan`` (several only for batches past the largest capacity)."""
    if isinstance(plan, CopyPlan):
        return tuple(_copy_launches(plan))
    if isinstance(plan, SliceGradPlan):
        return (_grad_launch(plan),)
    if isinstance(plan, WindowPlan):
        return (_window_launch(plan),) if plan.num_windows else ()
    if isinstance(plan, WindowGradPlan):
        return (_window_grad_launch(plan),) if math.prod(plan.sizes) else ()
    raise TypeError(f"unknown plan {type(plan).__name__}")


def run(launches, inputs, outputs, stream=None) -> None:
    """Launch on ``stream`` (a CuPy stream or a stream handle; the current CuPy stream when
    None); addresses are ints."""
    if _runtime is None:
        _loader()
    stream_ptr = stream if type(stream) is int else stream.ptr if stream is not None else _current_stream().ptr
    for launch in launches:
        launch(inputs, outputs, stream_ptr)


def all_kernel_names() -> dict[str, list[str]]:
    """Every specialisation the plans can ask for, by source file: each launch's choice of
    kernel (``_copy_kernel``, ``_grad_vector``, ``_grad_lanes``) over every case it tells apart."""
    names: dict[str, list[str]] = {"strided_copy.cu": [], "slice_grad.cu": [], "windows.cu": []}
    for e in (1, 2, 4, 8):
        for index_type in (np.int32, np.int64):
            for rank in range(1, MAX_RANK + 1):
                # gather_lanes: the lanes are a dimension beyond the box, of narrow elements only
                lanes = ("gather_lanes",) if e in LANE_WIDTHS and rank < MAX_RANK else ()
                for capacity in _capacities(index_type, rank):
                    for family in (*COPY_FAMILIES, *lanes):
                        names["strided_copy.cu"].append(_copy_kernel(family, e, index_type, rank, capacity))
                for vector in sorted({_grad_vector(e, False), _grad_vector(e, True)}):
                    names["slice_grad.cu"].append(kernel_name("slice_grad", e, vector, index_type, rank))
                names["windows.cu"].append(kernel_name("gather_windows", e, index_type, rank))
    for index_type in (np.int32, np.int64):
        for rank in range(1, MAX_RANK + 1):
            for per_sample, kinds in ((0, SUM_KINDS), (1, MOVE_KINDS if rank > 1 else ())):  # a sample's
                for kind in kinds:  # window has rank - 1 dimensions
                    for vector in sorted({1, _grad_lanes(kind, per_sample, rank)}):
                        name = kernel_name("window_grad", kind, vector, index_type, rank, per_sample)
                        names["windows.cu"].append(name)
    return names

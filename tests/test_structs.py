"""The parameter structs: each C++ struct of the kernels (backends/kernels_cu/) against its NumPy dtype.

``kernels.layout_check`` appends to each kernel source a ``static_assert`` per field (offset,
size, alignment, signedness; nested structs; an array's first and last elements) for every
index type, rank and capacity; it must compile with the host compiler (here, in the default
run) and with NVRTC (``-m every_kernel``). A dtype changed without its struct, or a struct
without its dtype, fails naming the struct and the field.
"""

import time

import numpy as np
import pytest

from cudadml.backends import emulate, kernels

SOURCES = tuple(kernels.parameter_structs())


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as e:  # no CuPy, or no NVRTC library to load
        pytest.skip(f"NVRTC cannot be loaded: {type(e).__name__}: {e}")
    return nvrtc


def nvrtc_layout_problems(source_file):
    """``emulate.layout_problems`` with NVRTC (the device's layout) instead of the host compiler."""
    nvrtc = _nvrtc()
    program = nvrtc.createProgram(kernels.layout_check(source_file), source_file, [], [])
    try:
        try:
            nvrtc.compileProgram(program, list(kernels.options()))
        except nvrtc.NVRTCError:
            log = nvrtc.getProgramLog(program)
            log = log.decode() if isinstance(log, bytes) else log
            problems = kernels.layout_failures(log)
            assert problems, f"NVRTC could not compile the layout check of {source_file}:\n{log}"
            return problems
        return []
    finally:
        nvrtc.destroyProgram(program)


LAYOUT_PROBLEMS = {
    "host": emulate.layout_problems,
    "nvrtc": nvrtc_layout_problems,
}
#: The host compiler ($CXX, else g++) in the default run; NVRTC with the other builds of every kernel.
COMPILERS = ["host", pytest.param("nvrtc", marks=pytest.mark.every_kernel)]


@pytest.mark.emulate
@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("source_file", SOURCES)
def test_every_struct_is_laid_out_as_its_dtype(compiler, source_file):
    started = time.perf_counter()
    problems = LAYOUT_PROBLEMS[compiler](source_file)
    assert not problems, f"{len(problems)} layout checks of {source_file} fail:\n" + "\n".join(problems[:40])
    count = len(kernels.parameter_structs()[source_file])
    print(f"{source_file}: {count} structs checked by {compiler} in {time.perf_counter() - started:.2f} s")


def test_the_check_covers_every_struct_and_specialisation():
    structs = {name.split("<")[0] for file in kernels.parameter_structs().values() for name, _ in file}
    assert structs == {
        "Divider",
        "CopyJob",
        "CopyBatch",
        "GradParams",
        "WindowParams",
        "WindowGradParams",
        "GradWindow",
        "GradDim",
    }
    names = [name for name, _ in kernels.parameter_structs()["strided_copy.cu"]]
    for index in ("int", "long long"):
        for rank in range(1, kernels.MAX_RANK + 1):
            assert f"CopyJob<{index}, {rank}>" in names
            assert all(f"CopyBatch<{index}, {rank}, {c}>" in names for c in kernels.JOB_CAPACITIES)


def test_the_assertions_reach_every_field_and_both_ends_of_an_array():
    dtype = kernels.copy_batch_dtype(np.int64, 3, 4)
    text = "\n".join(kernels.layout_assertions("CopyBatch<long long, 3, 4>", dtype, "B"))
    assert f"sizeof(B) == {dtype.itemsize}," in text and "alignof(B) == 8," in text
    job = dtype["jobs"].base
    for k in (0, 3):  # the first and the last job, every field of each
        for field in job.names:
            at = dtype.fields["jobs"][1] + k * job.itemsize + job.fields[field][1]
            first = "[0]" if job[field].shape else ""
            assert f"__builtin_offsetof(B, jobs[{k}].{field}{first}) == {at}," in text
    for field in ("sizes", "src_strides", "dst_strides"):
        assert f"__builtin_offsetof(B, jobs[3].{field}[2]) ==" in text and f"jobs[3].{field}[1]" not in text
    assert "__builtin_offsetof(B, jobs[3].sizes[2].magic) ==" in text  # into the nested Divider
    assert "sizeof(((B*)nullptr)->block_start) == 20," in text and "block_start[4]) ==" in text
    assert "(B, num_jobs.shift) ==" in text
    assert '::type)-1 < 0) == true, "struct layout: CopyBatch<long long, 3, 4>::interleaved: signed in' in text


def _swapped(dtype_function, a, b):
    """``dtype_function`` with fields ``a`` and ``b`` of its dtype in each other's place."""

    def swapped(*args):
        dtype = dtype_function(*args)
        names = list(dtype.names)
        i, j = names.index(a), names.index(b)
        names[i], names[j] = names[j], names[i]
        return np.dtype([(n, dtype.fields[n][0]) for n in names], align=True)

    return swapped


def _retyped(dtype_function, field, new_type):
    """``dtype_function`` with ``field`` of its dtype of type ``new_type``."""

    def retyped(*args):
        dtype = dtype_function(*args)
        return np.dtype([(n, new_type if n == field else dtype.fields[n][0]) for n in dtype.names], align=True)

    return retyped


@pytest.mark.emulate
@pytest.mark.parametrize("compiler", COMPILERS)
def test_two_fields_swapped_in_a_dtype_are_named(compiler, monkeypatch):
    monkeypatch.setattr(kernels, "copy_job_dtype", _swapped(kernels.copy_job_dtype, "row", "bytes"))
    problems = LAYOUT_PROBLEMS[compiler]("strided_copy.cu")
    assert problems[:4] == [
        "CopyJob<int, 1>::bytes: offset 20 in NumPy, 24 in C++",
        "CopyJob<int, 1>::row: offset 24 in NumPy, 20 in C++",
        "CopyBatch<int, 1, 1>::jobs[0].bytes: offset 20 in NumPy, 24 in C++",
        "CopyBatch<int, 1, 1>::jobs[0].row: offset 24 in NumPy, 20 in C++",
    ]
    if compiler == "host":  # NVRTC stops at its error limit
        assert "CopyBatch<long long, 8, 128>::jobs[127].row: offset 47784 in NumPy, 47776 in C++" in problems
    assert all("::row:" in p or "::bytes:" in p or ".row:" in p or ".bytes:" in p for p in problems)
    assert not LAYOUT_PROBLEMS[compiler]("slice_grad.cu")


@pytest.mark.emulate
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_field_of_another_type_is_named(compiler, monkeypatch):
    monkeypatch.setattr(kernels, "grad_params_dtype", _retyped(kernels.grad_params_dtype, "inner", np.int64))
    problems = LAYOUT_PROBLEMS[compiler]("slice_grad.cu")
    assert problems[:5] == [
        "GradParams<int, 1>: size 88 in NumPy, 80 in C++",
        "GradParams<int, 1>::inner: offset 40 in NumPy, 36 in C++",
        "GradParams<int, 1>::inner: size 8 in NumPy, 4 in C++",
        "GradParams<int, 1>::inner: alignment 8 in NumPy, 4 in C++",
        "GradParams<int, 1>::sizes[0]: offset 48 in NumPy, 40 in C++",
    ]


@pytest.mark.emulate
@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_field_of_other_signedness_is_named(compiler, monkeypatch):
    """Same bytes in the same place, read as another value past 2**31."""
    monkeypatch.setattr(
        kernels, "window_grad_params_dtype", _retyped(kernels.window_grad_params_dtype, "windows", np.uint32)
    )
    problems = LAYOUT_PROBLEMS[compiler]("windows.cu")
    assert problems == [
        f"WindowGradParams<{i}, {r}>::windows: unsigned in NumPy, signed in C++"
        for i in ("int", "long long")
        for r in range(1, kernels.MAX_RANK + 1)
    ]


@pytest.mark.emulate
def test_a_field_that_the_struct_lacks_is_named(monkeypatch):
    window_params_dtype = kernels.window_params_dtype

    def renamed(*args):
        dtype = window_params_dtype(*args)
        return np.dtype([("block" if n == "blocks" else n, dtype.fields[n][0]) for n in dtype.names], align=True)

    monkeypatch.setattr(kernels, "window_params_dtype", renamed)
    with pytest.raises(
        emulate.EmulationError,
        match=r"layout check of windows.cu (.|\n)*WindowParams<int, 1>.* no member named .block.",
    ):
        emulate.layout_problems("windows.cu")

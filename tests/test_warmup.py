"""``cd.precompile`` and the compile log: what a workload needs is compiled up front, each
compile is logged at INFO on the "cudadml" logger, and the progress bar is tqdm's where tqdm is."""

import functools
import importlib.util
import logging
import sys
import types

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import emulate, gpu_status, kernels

GPU, GPU_REASON = gpu_status()
ALL = [name for names in kernels.all_kernel_names().values() for name in names]


def _slice_desc(data_type=cd.TensorDataType.INT16):
    return cd.SliceOperatorDesc(
        cd.BufferTensorDesc(data_type, [4, 6]), cd.BufferTensorDesc(data_type, [2, 3]), [1, 0], [2, 3], [2, 2]
    )


@pytest.fixture
def fresh_emulation(tmp_path, monkeypatch):
    """An empty emulation cache on disk and in this process."""
    monkeypatch.setenv("CUDADML_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(emulate, "library", functools.cache(emulate.load))


@pytest.mark.emulate
def test_precompile_builds_a_descriptors_kernels_and_logs_each_build(fresh_emulation, caplog):
    desc = _slice_desc()
    names = [launch.name for launch in kernels.prepare(desc.to_plan())]
    caplog.set_level(logging.INFO, logger="cudadml")
    assert cd.precompile(desc, desc.compile(), backend="emulate", progress=False) == len(names) == 1
    (build,) = [r for r in caplog.records if r.name == "cudadml.backends.emulate"]
    group = emulate.group_of(names[0])[1]
    assert build.levelno == logging.INFO
    assert f"emulation: {kernels.group_label(group)} built by {emulate.compiler()} in " in build.getMessage()
    assert group[0] != group[-1] and names[0] in group  # one build serves the whole group
    assert caplog.records[-1].getMessage().startswith("precompile: 1 kernels ready for emulate in ")
    caplog.clear()
    with cd.use_host_backend("emulate"):
        x = np.arange(24, dtype=np.int16).reshape(4, 6)
        assert np.array_equal(cd.slice(x, offsets=[1, 0], sizes=[2, 3], strides=[2, 2]), x[1::2, ::2])
    assert not [r for r in caplog.records if "built" in r.getMessage()]  # nothing left to compile


@pytest.mark.emulate
def test_a_cached_library_is_loaded_with_a_debug_record(fresh_emulation, monkeypatch, caplog):
    cd.precompile(_slice_desc(), backend="emulate", progress=False)
    monkeypatch.setattr(emulate, "library", functools.cache(emulate.load))  # a new process, the same disk
    caplog.set_level(logging.DEBUG, logger="cudadml")
    cd.precompile(_slice_desc(), backend="emulate", progress=False)
    (record,) = [r for r in caplog.records if r.name == "cudadml.backends.emulate"]
    assert record.levelno == logging.DEBUG and " loaded from " in record.getMessage()


@pytest.fixture
def builds(monkeypatch):
    """The emulation's groups that precompile asks for, recorded instead of built."""
    asked = []
    monkeypatch.setattr(emulate, "library", lambda *group: asked.append(group))
    return asked


def test_work_items_name_the_kernels(builds):
    width_4 = [name for name in ALL if kernels.group_key(name)[2] == "4"]
    assert cd.precompile(np.float32, "int32", backend="emulate", progress=False) == len(width_4) > 100
    width_8 = [name for name in ALL if kernels.group_key(name)[2] == "8"]
    assert cd.precompile(np.complex128, backend="emulate", progress=False) == len(width_8)  # 8-byte word pairs
    assert cd.precompile(backend="emulate", progress=False) == len(ALL)
    assert set(builds) == {emulate.group_of(name) for name in ALL}  # every group, nothing else


@pytest.mark.emulate
def test_the_default_backend_is_the_gpu_or_the_host_backend(fresh_emulation):
    if GPU:
        pytest.skip("a GPU is the default here")
    assert cd.precompile(_slice_desc(), progress=False) == 0  # the reference compiles nothing
    with cd.use_host_backend("emulate"):
        assert cd.precompile(_slice_desc(), progress=False) == 1


@pytest.mark.parametrize(
    "work, error, message",
    [
        ((None,), TypeError, "precompile: work items are dtypes, descriptors or CompiledOperators, not NoneType"),
        (("all",), TypeError, "not str"),
        ((3,), TypeError, "not int"),
        ((np.dtype("V12"),), ValueError, "dtype |V12 has 12-byte elements, not 1, 2, 4, 8 or 16"),
    ],
)
def test_wrong_work_is_refused_before_anything_compiles(work, error, message):
    with pytest.raises(error, match=message):
        cd.precompile(*work, backend="reference")


def test_an_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="precompile: backend 'gpu' is not one of 'cuda', 'emulate', 'reference'"):
        cd.precompile(np.float32, backend="gpu")


def test_cuda_without_a_gpu_says_why():
    if GPU:
        pytest.skip("a GPU is usable here")
    with pytest.raises(RuntimeError, match="precompile: backend 'cuda' needs a GPU: "):
        cd.precompile(np.float32, backend="cuda")


class _Bar:
    def __init__(self, total, desc, unit, delay):
        self.total, self.desc, self.unit, self.delay, self.updates, self.closed = total, desc, unit, delay, 0, False
        _Bar.made.append(self)

    def update(self):
        self.updates += 1

    def close(self):
        self.closed = True


def test_the_progress_bar_is_tqdms_shown_after_two_seconds(builds, monkeypatch):
    _Bar.made = []
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # no ipywidgets: tqdm's text bar
    monkeypatch.setitem(sys.modules, "tqdm.std", types.SimpleNamespace(tqdm=_Bar))
    cd.precompile(np.float16, backend="emulate")
    (bar,) = _Bar.made
    groups = {emulate.group_of(name) for name in ALL if kernels.group_key(name)[2] == "2"}
    assert (bar.total, bar.updates, bar.closed, bar.delay) == (len(groups), len(groups), True, 2)
    assert (bar.desc, bar.unit) == ("cudadml: emulate kernels", "group")
    cd.precompile(np.float16, backend="emulate", progress=False)
    assert len(_Bar.made) == 1
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())  # ipywidgets: tqdm.auto's widget
    monkeypatch.setitem(sys.modules, "tqdm.auto", types.SimpleNamespace(tqdm=_Bar))
    cd.precompile(np.float16, backend="emulate")
    assert len(_Bar.made) == 2 and _Bar.made[1].updates == len(groups)


@pytest.mark.gpu
def test_precompile_for_the_gpu_loads_every_kernel_of_a_width_and_logs_nvrtc(caplog, rng):
    import cupy

    width_2 = [name for name in ALL if kernels.group_key(name)[2] == "2"]
    device = cupy.cuda.Device().id
    for name in width_2:
        kernels._compiled.pop((device, name), None)
    caplog.set_level(logging.INFO, logger="cudadml")
    assert cd.precompile(np.float16, backend="cuda", progress=False) == len(width_2)
    assert all(kernels.is_compiled(device, name) for name in width_2)
    nvrtc = [r.getMessage() for r in caplog.records if r.name == "cudadml.backends.kernels"]
    assert len(nvrtc) == len({kernels.group_key(name) for name in width_2})
    assert all(m.startswith("NVRTC: ") and f" ready on device {device} in " in m for m in nvrtc)
    caplog.clear()
    x = cupy.asarray(rng.standard_normal((5, 6, 7)).astype(np.float16))
    assert cupy.array_equal(cd.strided_slice(x, np.s_[::-1, 1:, ::2]), x[::-1, 1:, ::2])
    assert not [r for r in caplog.records if r.name == "cudadml.backends.kernels"]  # compiled already


@pytest.mark.gpu
def test_a_kernel_compiled_on_first_use_is_logged(caplog):
    import cupy

    name = kernels.kernel_name("gather_elements", 1, np.int64, 3, 4)
    kernels._compiled.pop((cupy.cuda.Device().id, name), None)
    caplog.set_level(logging.INFO, logger="cudadml")
    kernels.load(name)
    (record,) = caplog.records
    assert record.getMessage().startswith(f"NVRTC: {name} ready on device ")

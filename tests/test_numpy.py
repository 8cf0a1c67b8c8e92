"""cudadml.numpy against NumPy: the same bytes, dtype and shape for what NumPy takes, the same
exception types (and, where cudadml words them as NumPy does, messages) for what it refuses;
on NumPy arrays (reference backend), through the emulated kernels, and on CuPy arrays."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import cudadml as cd
import cudadml.numpy as cnp
from cudadml import backends
from cudadml.backends import reference
from cudadml.numpy import flips, padding, rolls, splits
from cudadml.testing import aligned_empty, random_array, to_host

# ---- helpers -------------------------------------------------------------------------------------


def _host(a):
    """A result as a NumPy array (CuPy results copied to the host)."""
    return a if isinstance(a, np.ndarray) else a.get()


def _to(xp, value):
    """NumPy arrays (also inside lists, tuples and keyword dicts) as arrays of ``xp``."""
    if xp is np:
        return value
    if isinstance(value, np.ndarray):
        return xp.asarray(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(xp, v) for v in value)
    if isinstance(value, dict):
        return {k: _to(xp, v) for k, v in value.items()}
    return value


def assert_same(ours, theirs):
    """Exactly NumPy's result: shape, dtype (byte order included) and bytes; a list of them too.
    Our arrays are C-contiguous."""
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
        return
    if not isinstance(theirs, np.ndarray):  # a NumPy scalar (flip of a 0-d array)
        assert type(ours) is type(theirs) or (ours.shape == () and not isinstance(ours, np.generic))
        ours, theirs = np.asarray(_host(ours) if hasattr(ours, "get") else ours), np.asarray(theirs)
    host = _host(ours)
    assert host.shape == theirs.shape
    assert host.dtype == theirs.dtype and host.dtype.str == theirs.dtype.str, (host.dtype, theirs.dtype)
    assert _meaningful(host).tobytes() == _meaningful(theirs).tobytes()
    assert ours.flags.c_contiguous


def _meaningful(a):
    """``a``'s bytes that hold its values: x86's long doubles leave 6 of 16 bytes unused (NumPy
    leaves them as it found them where it assigns a constant)."""
    real = np.dtype(a.dtype.char.lower()) if a.dtype.kind == "c" else a.dtype
    if real.kind != "f" or real.itemsize <= 8 or np.finfo(real).nmant != 63:
        return a
    return np.ascontiguousarray(a).view(np.uint8).reshape(-1, real.itemsize)[:, :10]


def run_both(xp, name, args, kwargs):
    """``numpy.name`` and ``cudadml.numpy.name`` on the same (fresh) arguments; NumPy's result."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        warnings.simplefilter("ignore", RuntimeWarning)  # casts of random bits overflow
        theirs = getattr(np, name)(*_copied(args), **_copied(kwargs))
        ours = getattr(cnp, name)(*_to(xp, args), **_to(xp, kwargs))
    assert_same(ours, theirs)
    return ours, theirs


def _copied(value):
    if isinstance(value, np.ndarray):
        return value.copy() if value.flags.writeable else value
    if isinstance(value, (list, tuple)):
        return type(value)(_copied(v) for v in value)
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


def assert_same_error(xp, name, args, kwargs, message=True):
    """NumPy raises; cudadml.numpy raises the same type (and message)."""
    with pytest.raises(Exception) as theirs:
        getattr(np, name)(*args, **kwargs)
    with pytest.raises(Exception) as ours:
        getattr(cnp, name)(*_to(xp, args), **_to(xp, kwargs))
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    if message:
        assert str(ours.value) == str(theirs.value)


@pytest.fixture
def launches(monkeypatch):
    """How many plans the reference backend runs (the GPU's launches: one per plan here)."""
    count = [0]
    run = reference.run

    def counting(*args, **kwargs):
        count[0] += 1
        return run(*args, **kwargs)

    monkeypatch.setattr(reference, "run", counting)
    return count


def cupy_has(dtype) -> bool:
    """Whether CuPy has arrays of ``dtype`` (numbers and bools of up to 8 bytes a part, native)."""
    dtype = np.dtype(dtype)
    part = dtype.itemsize // 2 if dtype.kind == "c" else dtype.itemsize
    return dtype.kind in "biufc" and dtype.names is None and dtype.isnative and part <= 8


def _arrays_in(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays_in(v)


def skip_unless_cupy_has(xp, *values):
    """Skip a CuPy run of arguments holding arrays of a dtype CuPy lacks."""
    if xp is not np and not all(cupy_has(a.dtype) for v in values for a in _arrays_in(v)):
        pytest.skip("CuPy has no such dtype")


def data(rng, shape, dtype):
    """Fresh random elements of any dtype: random bytes for plain kinds (NaN payloads and all),
    and values for strings, bools and structured dtypes."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "US":
        return rng.integers(0, 1000, shape).astype(dtype)
    raw = rng.integers(0, 256, (*shape, dtype.itemsize), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


# ---- concatenate and the stack family ------------------------------------------------------------


def _views(rng):
    """Non-contiguous and negative-stride inputs of shape (3, 4)."""
    base = data(rng, (6, 9), np.int32)
    return [base[::2, 1:9:2], base[5:0:-2, 8:0:-2], data(rng, (4, 3), np.int32).T]


CONCATENATE = {
    "axis 0": lambda r: ([data(r, (2, 3), "f4"), data(r, (4, 3), "f4")], {}),
    "axis 1": lambda r: ([data(r, (2, 3), "i2"), data(r, (2, 1), "i2"), data(r, (2, 5), "i2")], {"axis": 1}),
    "axis -1, 3-d": lambda r: ([data(r, (2, 3, 4), "u1"), data(r, (2, 3, 2), "u1")], {"axis": -1}),
    "axis as np.int64": lambda r: ([data(r, (2, 3), "f8")] * 2, {"axis": np.int64(1)}),
    "axis None": lambda r: ([data(r, (2, 3), "i8"), data(r, (3, 5, 2), "i8"), data(r, (7,), "i8")], {"axis": None}),
    "axis None, 0-d and views": lambda r: ([np.float64(2.5), *_views(r)], {"axis": None}),
    "views": lambda r: (_views(r), {}),
    "views axis 1": lambda r: (_views(r), {"axis": 1}),
    "one array": lambda r: ([data(r, (3, 2), "c8")], {}),
    "empty parts": lambda r: ([data(r, (0, 3), "f2"), data(r, (2, 3), "f2"), data(r, (0, 3), "f2")], {}),
    "all empty": lambda r: ([data(r, (0, 3), "f4"), data(r, (0, 3), "f4")], {}),
    "empty off the axis": lambda r: ([data(r, (2, 0), "f4"), data(r, (3, 0), "f4")], {}),
    "int8 + float16": lambda r: ([data(r, (2,), "i1"), data(r, (3,), "f2")], {}),
    "bool + int32": lambda r: ([data(r, (2, 2), "?"), data(r, (1, 2), "i4")], {}),
    "uint64 + int64": lambda r: ([data(r, (2,), "u8"), data(r, (2,), "i8")], {}),
    "bool": lambda r: ([data(r, (5,), "?"), data(r, (3,), "?")], {}),
    "byte-swapped": lambda r: ([data(r, (2, 3), ">i4"), data(r, (1, 3), ">i4")], {}),
    "byte-swapped + native": lambda r: ([data(r, (2, 3), ">f8"), data(r, (1, 3), "<f8")], {}),
    "complex128": lambda r: ([data(r, (2, 3), "c16"), data(r, (2, 3), "c16")[:, ::-1]], {"axis": 1}),
    "longdouble": lambda r: ([data(r, (2, 3), np.longdouble), data(r, (1, 3), np.longdouble)], {}),
    "clongdouble": lambda r: ([data(r, (2,), np.clongdouble), data(r, (1,), np.clongdouble)], {}),
    "strings U3 + U5": lambda r: ([data(r, (2, 2), "U3"), data(r, (1, 2), "U5")], {}),
    "bytes S3": lambda r: ([data(r, (2,), "S3"), data(r, (4,), "S3")[::-1]], {}),
    "structured": lambda r: ([data(r, (3,), [("a", ">i4"), ("b", "u1")])] * 2, {}),
    "datetime64": lambda r: ([np.arange(3).astype("M8[s]"), np.arange(2).astype("M8[ms]")], {}),
    "lists": lambda r: ([[1, 2], [3.5]], {}),
    "a 2-d array as the sequence": lambda r: (data(r, (3, 4), "i4"), {}),
    "dtype= unsafe": lambda r: ([r.uniform(-1e3, 1e3, 5), data(r, (2,), "i8")], {"dtype": "i2", "casting": "unsafe"}),
    "dtype= same_kind": lambda r: ([data(r, (2,), "f8")], {"dtype": "f4"}),
    "dtype= complex to float, unsafe": lambda r: ([data(r, (3,), "c8")], {"dtype": "f4", "casting": "unsafe"}),
    "dtype=U": lambda r: ([np.arange(3), np.arange(2)], {"dtype": "U"}),
    # A datetime or timedelta dtype of no unit keeps the arrays' units (the finest of them).
    "dtype=M8 keeps the unit": lambda r: ([np.arange(3).astype("M8[D]")] * 2, {"dtype": "M8"}),
    "dtype=M8, casting no": lambda r: ([np.arange(3).astype("M8[D]")] * 2, {"dtype": "M8", "casting": "no"}),
    "dtype=M8 of two units": lambda r: ([np.arange(3).astype("M8[D]"), np.arange(2).astype("M8[s]")], {"dtype": "M8"}),
    "dtype=m8 keeps the unit": lambda r: ([np.arange(3).astype("m8[h]")], {"dtype": "m8"}),
    "dtype=M8[generic]": lambda r: ([np.arange(3).astype("M8[ms]")], {"dtype": "M8[generic]", "casting": "safe"}),
    "dtype=M8 of timedeltas, unsafe": lambda r: ([np.arange(3).astype("m8[D]")], {"dtype": "M8", "casting": "unsafe"}),
    "dtype=m8 of integers": lambda r: ([np.arange(3)], {"dtype": "m8"}),
    "casting equiv": lambda r: ([data(r, (2,), ">f8")], {"dtype": "f8", "casting": "equiv"}),
    "many": lambda r: ([data(r, (1, 2), "i4") for _ in range(300)], {"axis": 0}),
}


@pytest.mark.parametrize("case", CONCATENATE.values(), ids=CONCATENATE.keys())
def test_concatenate(xp, rng, case):
    args, kwargs = case(rng)
    skip_unless_cupy_has(xp, [np.asarray(a) for a in args])
    if xp is not np and "dtype" in kwargs and not cupy_has(kwargs["dtype"]):
        pytest.skip("CuPy has no such dtype")
    run_both(xp, "concatenate", (args,), kwargs)


OUT = {
    "contiguous": lambda r: ([data(r, (2, 3), "i4"), data(r, (1, 3), "i4")], {}, np.full((3, 3), -1, "i4")),
    "strided": lambda r: ([data(r, (2, 3), "i4"), data(r, (1, 3), "i4")], {}, np.full((6, 6), -1, "i4")[::2, ::-2]),
    "float64 into float32": lambda r: ([data(r, (2,), "f8"), data(r, (3,), "f8")], {}, np.zeros(5, "f4")),
    "unsafe into int8": lambda r: ([data(r, (2,), "f8")], {"casting": "unsafe"}, np.zeros(2, "i1")),
    "byte-swapped out": lambda r: ([data(r, (2, 2), "<i8")] * 2, {"axis": 1}, np.zeros((2, 4), ">i8")),
    "axis None": lambda r: ([data(r, (2, 3), "u2"), data(r, (2,), "u2")], {"axis": None}, np.zeros(8, "u2")),
}


@pytest.mark.parametrize("case", OUT.values(), ids=OUT.keys())
def test_concatenate_out(xp, rng, case):
    args, kwargs, out = case(rng)
    skip_unless_cupy_has(xp, args, out)
    theirs, ours = out.copy(), _to(xp, out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # casts of random bits overflow
        np.concatenate(args, out=theirs, **kwargs)
        assert cnp.concatenate(_to(xp, args), out=ours, **kwargs) is ours
    assert _host(ours).tobytes() == theirs.tobytes()


def test_concatenate_out_overlapping_an_input_reads_the_inputs_first(xp):
    """NumPy copies input by input, so an input that out overwrites first is read changed;
    cudadml reads every input before it writes (a temporary, then a copy into out)."""
    b = xp.arange(4.0)
    assert cnp.concatenate([b[2:], b[:2]], out=b) is b
    assert _host(b).tolist() == [2.0, 3.0, 0.0, 1.0]


def test_concatenate_and_stack_run_one_launch(launches, rng):
    xs = [data(rng, (3, 4), "f4") for _ in range(5)]
    for call in (
        lambda: cnp.concatenate(xs, axis=1),
        lambda: cnp.stack(xs, axis=2),
        lambda: cnp.hstack(xs),
        lambda: cnp.vstack(xs),
        lambda: cnp.dstack(xs),
        lambda: cnp.column_stack([x[:, 0] for x in xs]),
        lambda: cnp.concatenate(_views(rng)),
    ):
        launches[0] = 0
        call()
        assert launches[0] == 1


def test_concatenate_of_10000_arrays(rng):
    xs = [data(rng, (2,), "i2") for _ in range(10_000)]
    assert_same(cnp.concatenate(xs), np.concatenate(xs))
    assert_same(cnp.stack(xs, axis=1), np.stack(xs, axis=1))


A = np.arange(6).reshape(2, 3)
CONCATENATE_ERRORS = {
    "no arrays": (([],), {}),
    "0-d arrays": (([np.array(1), np.array(2)],), {}),
    "ranks differ": (([A, np.arange(3)],), {}),
    "shapes differ": (([A, A[:, :2]],), {}),
    "axis out of bounds": (([A, A],), {"axis": 2}),
    "axis -3": (([A, A],), {"axis": -3}),
    "axis True": (([A, A],), {"axis": True}),
    "a dict": (({(1, 2): 0, (3,): 0},), {}),  # (its keys would be arrays; NumPy: not a sequence)
    "dtype=M8 of two units, casting equiv": (
        ([np.arange(3).astype("M8[D]"), np.arange(2).astype("M8[s]")],),
        {"dtype": "M8", "casting": "equiv"},
    ),
    "dtype=M8 of timedeltas": (([np.arange(3).astype("m8[D]")],), {"dtype": "M8"}),
    "axis 1.0": (([A, A],), {"axis": 1.0}),
    "out and dtype": (([A, A],), {"out": np.empty((4, 3)), "dtype": float}),
    "unknown casting": (([A, A],), {"casting": "foo"}),
    "cast refused": (([A, A.astype(float)],), {"dtype": int}),
    "cast refused, no": (([np.zeros(2, ">f8")],), {"casting": "no"}),
    "cast to out refused": (([A, A.astype(float)],), {"out": np.empty((4, 3), int)}),
    "out of another shape": (([A, A],), {"out": np.empty((4, 2))}),
    "out of another rank": (([A, A],), {"out": np.empty((4, 3, 1))}),
    "out not an array": (([A, A],), {"out": [1]}),
    "a generator": (((x for x in [A]),), {}),
    "unknown dtype": (([A],), {"dtype": "foo"}),
}


@pytest.mark.parametrize("case", CONCATENATE_ERRORS.values(), ids=CONCATENATE_ERRORS.keys())
def test_concatenate_errors(xp, case):
    args, kwargs = case
    skip_unless_cupy_has(xp, args)
    assert_same_error(xp, "concatenate", args, kwargs, message="out" not in kwargs or xp is np)


class Tagged(np.ndarray):
    """A NumPy subclass: its meaning, whatever it is, a plain result would drop."""


@pytest.mark.parametrize(
    "subclass", [np.ma.masked_array([1, 2], mask=[0, 1]), np.arange(2).view(Tagged)], ids=["masked", "tagged"]
)
def test_numpy_subclasses_are_refused_naming_numpy(subclass):
    with pytest.raises(TypeError, match=r"NumPy subclass.*use numpy\.flip"):
        cnp.flip(subclass)
    with pytest.raises(TypeError, match=r"NumPy subclass.*use numpy\.concatenate"):
        cnp.concatenate([subclass, subclass])


def test_concatenate_refuses_objects_naming_numpy():
    with pytest.raises(TypeError, match=r"holds Python objects.*use numpy\.concatenate"):
        cnp.concatenate([np.array([1, None], dtype=object)])


@pytest.mark.gpu
def test_concatenate_of_numpy_and_cupy_arrays_is_refused():
    import cupy

    with pytest.raises(TypeError, match="mix NumPy and CuPy"):
        cnp.concatenate([np.zeros(2), cupy.zeros(2)])


STACKS = {
    ("stack", "axis 0"): lambda r: ((_views(r),), {}),
    ("stack", "axis -1"): lambda r: (([data(r, (2, 3), "f2")] * 3,), {"axis": -1}),
    ("stack", "axis True"): lambda r: (([data(r, (2, 3), "f2")] * 2,), {"axis": True}),
    ("stack", "0-d"): lambda r: (([np.array(1), np.array(2.5)],), {}),
    ("stack", "dtype="): lambda r: (([data(r, (2,), "i4")] * 2,), {"dtype": "f8"}),
    ("stack", "empty"): lambda r: (([data(r, (0, 2), "u1")] * 3,), {"axis": 1}),
    ("stack", "a dict's keys"): lambda r: (({(1, 2): 0, (3, 4): 0},), {}),  # (NumPy takes them: tuple(arrays))
    ("stack", "dtype=M8"): lambda r: (([np.arange(3).astype("M8[s]")] * 2,), {"dtype": "M8"}),
    ("hstack", "dtype=m8"): lambda r: (
        ([np.arange(3).astype("m8[D]"), np.arange(2).astype("m8[h]")],),
        {"dtype": "m8"},
    ),
    ("vstack", "dtype=M8, casting no"): lambda r: (
        ([np.arange(3).astype("M8[D]")] * 2,),
        {"dtype": "M8", "casting": "no"},
    ),
    ("hstack", "1-d"): lambda r: (([data(r, (2,), "i4"), data(r, (3,), "i4")],), {}),
    ("hstack", "0-d"): lambda r: (([np.int8(1), np.int8(2)],), {}),
    ("hstack", "2-d, dtype="): lambda r: (([data(r, (2, 1), "i4"), data(r, (2, 2), "u1")],), {"dtype": "i8"}),
    ("vstack", "1-d rows"): lambda r: (([data(r, (3,), "?"), data(r, (3,), "?")],), {}),
    ("vstack", "mixed"): lambda r: (([data(r, (3,), "f4"), data(r, (2, 3), "f8")],), {"casting": "safe"}),
    ("dstack", "1-d"): lambda r: (([data(r, (2,), "i4"), data(r, (2,), "i4")],), {}),
    ("dstack", "2-d and 3-d"): lambda r: (([data(r, (2, 3), "i4"), data(r, (2, 3, 2), "i4")],), {}),
    ("dstack", "0-d"): lambda r: (([np.float32(1)],), {}),
    ("column_stack", "1-d and 2-d"): lambda r: (([data(r, (3,), "i4"), data(r, (3, 2), "i4")],), {}),
    ("column_stack", "strided 1-d"): lambda r: (([data(r, (6,), "c16")[::2], data(r, (6,), "c16")[::-2]],), {}),
}


@pytest.mark.parametrize(("name", "case"), [(n, c) for (n, _), c in STACKS.items()], ids=[" ".join(k) for k in STACKS])
def test_stacks(xp, rng, name, case):
    args, kwargs = case(rng)
    skip_unless_cupy_has(xp, args)
    run_both(xp, name, args, kwargs)


STACK_ERRORS = {
    ("stack", "no arrays"): (([],), {}),
    ("stack", "shapes differ"): (([A, A.T],), {}),
    ("stack", "axis out of bounds"): (([A, A],), {"axis": 3}),
    ("stack", "axis 1.0"): (([A, A],), {"axis": 1.0}),
    ("stack", "a generator"): (((x for x in [A]),), {}),
    ("stack", "cast refused"): (([A, A],), {"dtype": "i1", "casting": "safe"}),
    ("stack", "dtype=M8 of timedeltas"): (([np.arange(3).astype("m8[D]")] * 2,), {"dtype": "M8"}),
    ("hstack", "no arrays"): (([],), {}),
    ("hstack", "not a sequence"): ((5,), {}),
    ("vstack", "shapes differ"): (([np.arange(3), np.arange(2)],), {}),
    ("dstack", "no arrays"): (([],), {}),
    ("column_stack", "0-d and 1-d"): (([np.zeros(()), np.zeros(3)],), {}),
    ("column_stack", "3-d and 2-d"): (([np.zeros((3, 2, 3)), np.zeros((3, 2))],), {}),
}


@pytest.mark.parametrize(
    ("name", "case"), [(n, c) for (n, _), c in STACK_ERRORS.items()], ids=[" ".join(k) for k in STACK_ERRORS]
)
def test_stack_errors(xp, name, case):
    skip_unless_cupy_has(xp, case[0])
    assert_same_error(xp, name, *case)


# ---- the split family ----------------------------------------------------------------------------

SPLITS = {
    ("split", "sections"): lambda r: (data(r, (6, 4), "f4"), 3),
    ("split", "sections axis 1"): lambda r: (data(r, (2, 8), "i1"), 4, 1),
    ("split", "indices"): lambda r: (data(r, (3, 11), "u2"), (2, 4, 9), -1),
    ("split", "negative indices"): lambda r: (data(r, (3, 11), "u2"), (-9, 4, -2), 1),
    ("split", "indices past the end"): lambda r: (data(r, (2, 3), "i8"), [3]),
    ("split", "decreasing indices"): lambda r: (data(r, (5, 2), "i8"), [4, 2]),
    ("split", "None index"): lambda r: (data(r, (4,), "f8"), [None, 2]),
    ("split", "numpy indices"): lambda r: (data(r, (4,), "f8"), np.array([1, 3])),
    ("split", "empty array"): lambda r: (data(r, (0,), "f8"), [1]),
    ("split", "empty off the axis"): lambda r: (data(r, (4, 0), "f4"), 2),
    ("split", "axis True"): lambda r: (data(r, (2, 3), "i4"), 3, True),
    ("split", "views"): lambda r: (_views(r)[1], 2, 1),
    ("split", "byte-swapped"): lambda r: (data(r, (4, 2), ">u4"), 2),
    ("split", "strings"): lambda r: (data(r, (4, 3), "U3"), [1], 1),
    ("split", "bool"): lambda r: (data(r, (6,), "?"), 3),
    ("split", "complex128"): lambda r: (data(r, (4, 3), "c16")[::-1], [1, 2]),
    ("split", "2.0 sections"): lambda r: (data(r, (4,), "i4"), 2.0),
    ("split", "a set of indices"): lambda r: (data(r, (6,), "i4"), {4, 1}),  # (NumPy: list(indices))
    ("array_split", "a dict's keys as indices"): lambda r: (data(r, (6,), "i4"), {3: 0, 1: 0}),
    ("array_split", "uneven"): lambda r: (data(r, (5, 3), "f4"), 4),
    ("array_split", "more sections than elements"): lambda r: (data(r, (4,), "f4"), 6),
    ("array_split", "no indices"): lambda r: (data(r, (3, 11), "f4"), []),
    ("array_split", "2.5 sections"): lambda r: (data(r, (4,), "f4"), 2.5),
    ("array_split", "empty"): lambda r: (data(r, (5, 0), "f4"), [2, 4], 0),
    ("array_split", "decreasing, 3-d"): lambda r: (data(r, (2, 7, 3), "i2"), [5, 1, 6], 1),
    ("hsplit", "2-d"): lambda r: (data(r, (3, 12), "i4"), 4),
    ("hsplit", "1-d"): lambda r: (data(r, (12,), "i4"), [3, 5]),
    ("vsplit", "2-d"): lambda r: (data(r, (12, 3), "i4"), 4),
    ("dsplit", "3-d"): lambda r: (data(r, (3, 3, 12), "f2"), 4),
}


@pytest.mark.parametrize(("name", "case"), [(n, c) for (n, _), c in SPLITS.items()], ids=[" ".join(k) for k in SPLITS])
def test_splits(xp, rng, name, case):
    args = case(rng)
    skip_unless_cupy_has(xp, args)
    ours, _ = run_both(xp, name, args, {})
    x = _to(xp, args[0])
    for part in ours:  # copies, not views
        assert not np.shares_memory(_host(part), _host(x)) if xp is np else True


def test_split_runs_one_launch(launches, rng):
    x = data(rng, (5, 6), "i4")
    for call in (
        lambda: cnp.split(x, 3, axis=1),
        lambda: cnp.array_split(x, 4),
        lambda: cnp.split(x, [4, 2]),  # overlapping sections: a batch of windows
        lambda: cnp.hsplit(x, [1]),
    ):
        launches[0] = 0
        call()
        assert launches[0] == 1


SPLIT_ERRORS = {
    ("split", "unequal division"): ((np.arange(5), 2), {}),
    ("split", "0 sections"): ((np.arange(4), 0), {}),
    ("split", "axis out of bounds"): ((np.arange(4), 2), {"axis": 1}),
    ("split", "indices, axis out of bounds"): ((np.arange(4), [2]), {"axis": 1}),
    ("split", "float indices"): ((np.arange(4), [1.5]), {}),
    ("split", "0-d"): ((np.array(3), 1), {}),
    ("array_split", "0 sections"): ((np.arange(4), 0), {}),
    ("array_split", "-1 sections"): ((np.arange(4), -1), {}),
    ("hsplit", "0-d"): ((np.array(1), 2), {}),
    ("vsplit", "1-d"): ((np.arange(3), 2), {}),
    ("dsplit", "2-d"): ((np.zeros((2, 2)), 2), {}),
}


@pytest.mark.parametrize(
    ("name", "case"), [(n, c) for (n, _), c in SPLIT_ERRORS.items()], ids=[" ".join(k) for k in SPLIT_ERRORS]
)
def test_split_errors(xp, name, case):
    assert_same_error(xp, name, *case)


# ---- flips ---------------------------------------------------------------------------------------

FLIPS = {
    ("flip", "all axes"): lambda r: ((data(r, (3, 4), "f4"),), {}),
    ("flip", "axis 1"): lambda r: ((data(r, (3, 4), "f4"),), {"axis": 1}),
    ("flip", "axis tuple"): lambda r: ((data(r, (3, 4, 2), "i1"),), {"axis": (0, 2)}),
    ("flip", "axis -1"): lambda r: ((data(r, (3, 4, 2), "u8"),), {"axis": -1}),
    ("flip", "axis True"): lambda r: ((data(r, (3, 4), "u8"),), {"axis": True}),
    ("flip", "no axes"): lambda r: ((data(r, (3, 4), "u8"),), {"axis": ()}),
    ("flip", "0-d"): lambda r: ((np.array(2.5),), {}),
    ("flip", "empty"): lambda r: ((data(r, (1, 0, 1), "f4"),), {"axis": 1}),
    ("flip", "views"): lambda r: ((_views(r)[1],), {}),
    ("flip", "list"): lambda r: (([1, 2, 3],), {}),
    ("flip", "bool"): lambda r: ((data(r, (7,), "?"),), {}),
    ("flip", "byte-swapped"): lambda r: ((data(r, (2, 3), ">c8"),), {"axis": 0}),
    ("flip", "complex128"): lambda r: ((data(r, (5, 3), "c16"),), {}),
    ("flip", "strings"): lambda r: ((data(r, (5, 3), "U3"),), {"axis": 1}),
    ("fliplr", "2-d"): lambda r: ((data(r, (3, 4), "i2"),), {}),
    ("fliplr", "3-d"): lambda r: ((data(r, (3, 4, 2), "i2"),), {}),
    ("flipud", "1-d"): lambda r: ((data(r, (3,), "f8"),), {}),
    ("flipud", "2-d views"): lambda r: ((_views(r)[0],), {}),
}


@pytest.mark.parametrize(("name", "case"), [(n, c) for (n, _), c in FLIPS.items()], ids=[" ".join(k) for k in FLIPS])
def test_flips(xp, rng, name, case):
    args, kwargs = case(rng)
    skip_unless_cupy_has(xp, args)
    run_both(xp, name, args, kwargs)


def test_flip_runs_one_launch(launches, rng):
    flip = cnp.flip(data(rng, (3, 4, 5), "f4"), axis=(0, 2))
    assert launches[0] == 1 and flip.flags.c_contiguous


FLIP_ERRORS = {
    ("flip", "repeated axis"): ((A,), {"axis": (0, 0)}),
    ("flip", "axis out of bounds"): ((A,), {"axis": 2}),
    ("flip", "negative axis out of bounds"): ((A,), {"axis": -3}),
    ("flip", "0-d, axis 0"): ((np.array(1),), {"axis": 0}),
    ("fliplr", "1-d"): ((np.arange(3),), {}),
    ("flipud", "0-d"): ((np.array(3),), {}),
}


@pytest.mark.parametrize(
    ("name", "case"), [(n, c) for (n, _), c in FLIP_ERRORS.items()], ids=[" ".join(k) for k in FLIP_ERRORS]
)
def test_flip_errors(xp, name, case):
    assert_same_error(xp, name, *case)


# ---- roll ----------------------------------------------------------------------------------------

ROLLS = {
    "flat": lambda r: (data(r, (10,), "i4"), 2, None),
    "flat 2-d": lambda r: (data(r, (5, 2), "i4"), -2, None),
    "flat views": lambda r: (_views(r)[2], 5, None),
    "axis 0": lambda r: (data(r, (5, 2), "f8"), 1, 0),
    "axis -1": lambda r: (data(r, (5, 3), "f8"), 1, -1),
    "shift past the size": lambda r: (data(r, (5, 2), "u1"), 11, 0),
    "negative shift": lambda r: (data(r, (5, 3), "u1"), -7, 1),
    "huge shift": lambda r: (data(r, (5, 3), "c8"), 10**30 + 1, 1),
    "numpy shift and axis": lambda r: (data(r, (5, 3), "c8"), np.int8(2), np.int64(0)),
    "two axes": lambda r: (data(r, (5, 4), "i2"), (2, 1), (0, 1)),
    "one shift, two axes": lambda r: (data(r, (5, 4, 3), "f2"), 1, (0, 2)),
    "three axes": lambda r: (data(r, (3, 4, 5), "f4"), (1, -1, 2), (0, 1, 2)),
    "repeated axis": lambda r: (data(r, (5, 2), "i4"), 1, (0, 0)),
    "shifts cancelling": lambda r: (data(r, (5, 2), "i4"), (2, 3), (0, 0)),
    "several shifts, no axis": lambda r: (data(r, (5, 2), "i4"), (2, 1, 3), None),
    "zero shift": lambda r: (data(r, (4, 3), "i4"), 0, 1),
    "whole turn": lambda r: (data(r, (4, 3), "i4"), 4, 0),
    "0-d": lambda r: (np.array(7), 5, None),
    "empty": lambda r: (data(r, (0, 3), "f4"), 2, 1),
    "axis True": lambda r: (data(r, (2, 3), "f4"), 1, True),
    "string shift": lambda r: (data(r, (5, 2), "f4"), "1", 0),
    "float shift": lambda r: (data(r, (5, 2), "f4"), 1.5, 0),
    "views, two axes": lambda r: (_views(r)[1], (1, 2), (0, 1)),
    "bool, two axes": lambda r: (data(r, (3, 4), "?"), (1, 1), (0, 1)),
    "byte-swapped, two axes": lambda r: (data(r, (3, 4), ">f8"), (1, 3), (0, 1)),
    "complex128, two axes": lambda r: (data(r, (3, 4), "c16"), (1, 3), (1, 0)),
    "strings, two axes": lambda r: (data(r, (3, 4), "U3"), (2, 3), (1, 0)),
    "clongdouble": lambda r: (data(r, (3, 4), np.clongdouble), 2, 1),
}


@pytest.mark.parametrize("case", ROLLS.values(), ids=ROLLS.keys())
def test_roll(xp, rng, case):
    a, shift, axis = case(rng)
    skip_unless_cupy_has(xp, a)
    run_both(xp, "roll", (a, shift), {"axis": axis})


@pytest.mark.gpu
def test_roll_takes_a_cupy_shift():
    import cupy

    a = np.arange(10).reshape(5, 2)
    assert_same(cnp.roll(cupy.asarray(a), cupy.array([2, 1]), axis=(0, 1)), np.roll(a, [2, 1], axis=(0, 1)))


def test_roll_runs_one_launch(launches, rng):
    a = data(rng, (4, 5, 6), "f4")
    for shift, axis in ((2, 1), ((1, 2), (0, 2)), ((1, 2, 3), (0, 1, 2)), (7, None)):
        launches[0] = 0
        cnp.roll(a, shift, axis)
        assert launches[0] == 1, (shift, axis)


ROLL_ERRORS = {
    "shifts and axes do not broadcast": ((np.zeros((5, 2, 3)), (2, 2, 2)), {"axis": (0, 1)}),
    "2-d shift": ((np.zeros((5, 2)), [[1, 2]]), {"axis": (0, 1)}),
    "axis out of bounds": ((np.zeros((5, 2)), 1), {"axis": 2}),
    "negative axis out of bounds": ((np.zeros((5, 2)), 1), {"axis": (1, -3)}),
    "string axis": ((np.zeros((5, 2)), 2), {"axis": "0"}),
    "shift not a number": ((np.zeros((5, 2)), "a"), {"axis": 0}),
    "shift None": ((np.zeros((5, 2)), None), {"axis": 1}),
    "0-d with an axis": ((np.array(5), 3), {"axis": 0}),
}


@pytest.mark.parametrize("case", ROLL_ERRORS.values(), ids=ROLL_ERRORS.keys())
def test_roll_errors(xp, case):
    assert_same_error(xp, "roll", *case)


# ---- pad -----------------------------------------------------------------------------------------

PADS = {
    "zeros": lambda r: (data(r, (2, 3), "f4"), 1, {}),
    "pairs": lambda r: (data(r, (2, 3), "i4"), [1, 2], {"constant_values": 3}),
    "per axis": lambda r: (data(r, (2, 3), "i4"), [[1, 2], [3, 4]], {"constant_values": 7}),
    "per axis and side": lambda r: (data(r, (2, 3), "u1"), [[1, 2], [3, 4]], {"constant_values": [[3, 4], [5, 6]]}),
    "per side": lambda r: (data(r, (4,), "f8"), [1, 2], {"constant_values": [-1.5, 2]}),
    "equal constants per side": lambda r: (data(r, (2, 3), "i2"), 2, {"constant_values": [[9, 9], [9, 9]]}),
    "constants of unpadded axes": lambda r: (
        data(r, (2, 3), "i2"),
        [[0, 0], [1, 1]],
        {"constant_values": [[1, 2], [3, 3]]},
    ),
    "dict widths": lambda r: (data(r, (2, 3, 2), "f4"), {0: 1, -1: (0, 2)}, {"constant_values": 1}),
    "no padding": lambda r: (data(r, (2, 3), "f4"), 0, {"constant_values": 5}),
    "0-d": lambda r: (np.array(1.5), 1, {"constant_values": 3}),
    "empty": lambda r: (np.zeros(0), 1, {"constant_values": 3}),
    "empty 2-d": lambda r: (data(r, (0, 2), "i4"), [[1, 1], [0, 2]], {"constant_values": [[1, 2], [3, 4]]}),
    "list": lambda r: ([0, 1, 2, 3], [1, 2], {"constant_values": 3}),
    "float width 1.0": lambda r: (data(r, (2,), "i4"), np.int64(2), {}),
    "float constant into ints": lambda r: (data(r, (3,), "i4"), 1, {"constant_values": 2.7}),
    "negative into uint8 (NumPy scalar)": lambda r: (data(r, (3,), "u1"), 1, {"constant_values": -1}),
    "None into floats": lambda r: (data(r, (3,), "f4"), 1, {"constant_values": None}),
    "complex into floats": lambda r: (data(r, (3,), "f4"), 1, {"constant_values": 1 + 2j}),
    "bool": lambda r: (data(r, (3, 2), "?"), 1, {"constant_values": True}),
    "float16": lambda r: (data(r, (3, 2), "f2"), (2, 3), {"constant_values": np.nan}),
    "views": lambda r: (_views(r)[1], [[2, 1], [0, 3]], {"constant_values": -3}),
    "byte-swapped": lambda r: (data(r, (3, 2), ">i4"), 2, {"constant_values": 258}),
    "complex128": lambda r: (data(r, (3, 2), "c16"), [[1, 1], [2, 0]], {"constant_values": 1 - 2j}),
    "complex128 zeros": lambda r: (data(r, (3, 2), "c16"), 1, {}),
    "complex128 per side": lambda r: (data(r, (3, 2), "c16"), 1, {"constant_values": [[1, 2j], [3, 4]]}),
    "clongdouble": lambda r: (data(r, (3, 2), np.clongdouble), 1, {"constant_values": 2 + 1j}),
    "longdouble": lambda r: (data(r, (3, 2), np.longdouble), 1, {"constant_values": 2.5}),
    "datetime64": lambda r: (np.arange(3).astype("M8[D]"), 1, {"constant_values": np.datetime64("2001-01-01")}),
    "strings U3": lambda r: (data(r, (3, 2), "U3"), 1, {"constant_values": "ab"}),
    "strings U3 zeros": lambda r: (data(r, (3, 2), "U3"), 1, {}),
    "bytes S4": lambda r: (data(r, (3,), "S4"), 2, {"constant_values": b"xyz"}),
    "structured": lambda r: (data(r, (3,), [("a", "<i4"), ("b", "<f4")]), 1, {"constant_values": 0}),
    # A record's field (strides of 5 bytes, not whole elements): the constants' route copies it.
    "a record's field": lambda r: (data(r, (3, 2), [("k", "u1"), ("v", "<f4")])["v"], 1, {"constant_values": 5}),
    "a record's field, zeros": lambda r: (data(r, (3, 2), [("k", "u1"), ("v", "<f4")])["v"], 1, {}),
    "a record's field per side": lambda r: (
        data(r, (3,), [("k", "u1"), ("v", "<i8")])["v"],
        (1, 2),
        {"constant_values": (5, 6)},
    ),
    "4-d": lambda r: (data(r, (2, 1, 3, 2), "i8"), [[0, 1], [2, 0], [1, 1], [0, 3]], {"constant_values": 11}),
}


@pytest.mark.parametrize("case", PADS.values(), ids=PADS.keys())
def test_pad(xp, rng, case):
    array, width, kwargs = case(rng)
    skip_unless_cupy_has(xp, np.asarray(array))
    run_both(xp, "pad", (array, width), kwargs)


@pytest.mark.parametrize("dtype", ["i1", "u2", "f4", "c8", "f8", "c16"])
def test_pad_constant_in_one_pass_at_every_alignment(launches, rng, dtype):
    """Inputs at addresses off their element size run the kernels on narrower words: the fill
    pattern lines up all the same."""
    dtype = np.dtype(dtype)
    for shift in range(1, dtype.itemsize):
        buffer = np.zeros(5 * 4 * dtype.itemsize + shift, np.uint8)
        x = buffer[shift:].view(dtype).reshape(5, 4)
        x[...] = data(rng, (5, 4), dtype)
        with cd.use_host_backend("emulate"):
            assert_same(cnp.pad(x, [[1, 2], [3, 1]], constant_values=7), np.pad(x, [[1, 2], [3, 1]], constant_values=7))
    launches[0] = 0
    cnp.pad(data(rng, (5, 4), dtype), 2, constant_values=3)
    assert launches[0] == 1


def test_pad_runs_one_launch_for_one_constant(launches, rng):
    x = data(rng, (4, 5), "f4")
    for kwargs in ({}, {"constant_values": 2}, {"constant_values": [[2, 2], [2, 2]]}):
        launches[0] = 0
        cnp.pad(x, [[1, 2], [0, 3]], **kwargs)
        assert launches[0] == 1


PAD_ERRORS = {
    "negative width": ((np.arange(4), [-1, 1]), {"constant_values": 3}),
    "widths that do not broadcast": ((np.arange(4), [[3, 4], [5, 6]]), {}),
    "no widths": ((np.arange(4), []), {}),
    "float widths": ((np.arange(4), 1.5), {}),
    "unknown keyword": ((np.arange(4), [1]), {"notallowedkeyword": 3}),
    "unknown mode": ((np.arange(4), 1, "foo"), {}),
    "another mode's keyword": ((np.arange(4), 1), {"stat_length": 3}),
    "constants that do not broadcast": ((np.zeros((2, 2)), 1), {"constant_values": [1, 2, 3]}),
    "Python int out of range": ((np.zeros((2, 2), "u1"), 1), {"constant_values": [[300, 1], [1, 1]]}),
    "None into ints": ((np.zeros(2, "i4"), 1), {"constant_values": None}),
    "edge of an empty axis": ((np.zeros(0), 1, "edge"), {}),
    "dict of a float width": ((np.zeros(2), {0: 1.5}), {}),
}


@pytest.mark.parametrize("case", PAD_ERRORS.values(), ids=PAD_ERRORS.keys())
def test_pad_errors(xp, case):
    assert_same_error(xp, "pad", *case)


def _pad_function(vector, pad_width, iaxis, kwargs):
    vector[: pad_width[0]] = -1  # NumPy's example of a padding function
    vector[vector.size - pad_width[1] :] = 7


@pytest.mark.parametrize(
    ("mode", "kwargs"),
    [
        ("edge", {}),
        ("wrap", {}),
        ("reflect", {}),
        ("symmetric", {}),
        ("reflect", {"reflect_type": "odd"}),
        ("symmetric", {"reflect_type": "odd"}),
        ("mean", {}),
        ("maximum", {"stat_length": 2}),
        ("linear_ramp", {"end_values": 3}),
        (_pad_function, {}),
    ],
    ids=str,
)
@pytest.mark.parametrize(
    ("shape", "width"),
    [((5,), 3), ((3, 4), ((1, 9), (11, 0))), ((1, 4), 2), ((2, 1, 3), ((0, 0), (4, 3), (1, 2))), ((2,) * 9, 1)],
    ids=["1-d", "past the size", "one-element axis", "3-d", "9-d in passes"],
)
def test_pad_in_every_mode_is_numpys(xp, rng, mode, kwargs, shape, width):
    """The modes that move data are PADDING's copies (reflect and symmetric fold past the size,
    and a one-element axis repeats its element, as NumPy's); those that compute are the array
    library's own pad (CuPy's odd reflection past the size is not NumPy's: a CuPy user gets
    CuPy's)."""
    x = random_array(shape, np.int16, rng)
    got = cnp.pad(xp.asarray(x), width, mode, **kwargs)
    assert type(got) is type(xp.asarray(x)) and got.flags.c_contiguous
    moves_data = mode in ("edge", "wrap", "reflect", "symmetric") and kwargs.get("reflect_type", "even") == "even"
    want = (
        np.pad(x, width, mode, **kwargs)
        if moves_data or xp is np
        else to_host(xp.pad(xp.asarray(x), width, mode, **kwargs))
    )
    assert np.array_equal(to_host(got), want)


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_moves_16_byte_elements_in_every_data_mode(xp, rng, mode):
    x = random_array((3, 4), np.complex128, rng)
    got = to_host(cnp.pad(xp.asarray(x), ((2, 5), (7, 1)), mode))
    want = np.pad(x, ((2, 5), (7, 1)), mode)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize(
    "x",
    [np.array(["ab", "cde", "f"]), np.array([b"ab", b"cde", b"f"]), np.array([(1, 2.5), (3, 4.5)], "i1, f8")],
    ids=["unicode", "bytes", "record"],
)
def test_pad_copies_elements_of_several_words_in_every_data_mode(mode, x):
    """Strings and records move as runs of words; no constant is assigned to their sides (a
    string array's 0 would read '0')."""
    got, want = cnp.pad(x, 2, mode), np.pad(x, 2, mode)
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_pad_empty_mode_gives_its_shape(xp):
    assert cnp.pad(xp.arange(4), 2, "empty").shape == (8,)


# ---- what a call keeps ---------------------------------------------------------------------------
# What a call works out on the host is kept per call's arguments; each sequence below runs calls
# that differ from the ones before in one thing the kept value depends on, so a key that misses
# it gives the earlier call's result.


def _nan32(payload):
    return np.array([0x7FC00000 | payload], np.uint32).view(np.float32)[0]


#: Sequences of ``(name, make(rng) -> (args, kwargs))``, run in order, each against NumPy.
KEPT_APART = {
    "roll: the shift": [("roll", lambda r, s=s: ((data(r, (5, 4), "i4"), s, 0), {})) for s in (1, 2, -1, 6)],
    "roll: the axes": [
        ("roll", lambda r, axis=axis: ((data(r, (5, 4), "i4"), (1, 2), axis), {})) for axis in ((0, 1), (1, 0), (0, 0))
    ],
    "roll: the shape": [
        ("roll", lambda r, shape=shape: ((data(r, shape, "i4"), 3, 0), {})) for shape in ((5, 4), (4, 4))
    ],
    "roll: the dtype": [
        ("roll", lambda r, dtype=dtype: ((data(r, (5, 4), dtype), (1, 2), (0, 1)), {}))
        for dtype in ("i4", "c16", "U2", "?")
    ],
    "roll: the strides": [("roll", lambda r, k=k: ((_views(r)[k], (1, 2), (0, 1)), {})) for k in range(3)],
    "flip: the axes": [("flip", lambda r, axis=axis: ((data(r, (3, 4), "f4"), axis), {})) for axis in (0, 1, None, ())],
    "flip: the dtype": [
        ("flip", lambda r, dtype=dtype: ((data(r, (3, 4), dtype), 1), {})) for dtype in ("f4", "c16", "U3", "u1")
    ],
    "flip: the strides": [("flip", lambda r, k=k: ((_views(r)[k], 0), {})) for k in range(3)],
    "flipud, fliplr": [(name, lambda r: ((data(r, (3, 4), "i2"),), {})) for name in ("flipud", "fliplr")],
    "pad: the widths": [
        ("pad", lambda r, w=w: ((data(r, (3, 4), "i2"), w), {}))
        for w in (1, (1, 2), ((1, 2), (0, 3)), ((0, 0), (2, 0)))
    ],
    "pad: the constant's bits": [
        ("pad", lambda r, v=v: ((data(r, (3, 4), "f4"), 2), {"constant_values": v}))
        for v in (0.0, -0.0, _nan32(1), _nan32(2), np.float32(np.inf))
    ],
    "pad: the dtype": [
        ("pad", lambda r, dtype=dtype: ((data(r, (3, 4), dtype), 1), {"constant_values": 0}))
        for dtype in ("f4", "i4", "V4", "U1", "c8")
    ],
    "pad: a constant per side": [
        ("pad", lambda r, v=v: ((data(r, (3, 4), "u1"), 1), {"constant_values": v}))
        for v in (3, ((3, 3), (3, 3)), ((3, 4), (3, 3)), ((3, 3), (4, 3)))
    ],
    "array_split: the sections": [
        ("array_split", lambda r, k=k: ((data(r, (7, 2), "i4"), k), {})) for k in (3, 2, (3,), [3], (1, 5))
    ],
    "array_split: the axis length": [
        ("array_split", lambda r, shape=shape: ((data(r, shape, "i4"), (2, 5)), {})) for shape in ((7, 2), (4, 2))
    ],
}


@pytest.mark.parametrize("calls", KEPT_APART.values(), ids=KEPT_APART.keys())
def test_what_a_call_keeps_is_kept_apart_by_what_it_depends_on(xp, rng, calls):
    for name, make in calls:
        args, kwargs = make(rng)
        if xp is np or cupy_has(args[0].dtype):
            run_both(xp, name, args, kwargs)


#: ``(calls, refused)``: calls with exact ints, then one whose argument equals theirs (and
#: hashes alike) but that NumPy refuses: it raises as NumPy, whatever was kept before.
KEPT_BY_TYPE = {
    "flip: axis 1.0": ([("flip", (A, 1), {})], ("flip", (A, 1.0), {})),
    "roll: axis 0.0": ([("roll", (A, 1, 0), {})], ("roll", (A, 1, 0.0), {})),
    "roll: axis (0.0, 1)": ([("roll", (A, 1, (0, 1)), {})], ("roll", (A, 1, (0.0, 1)), {})),
    "pad: width 1.0": ([("pad", (A, 1), {})], ("pad", (A, 1.0), {})),
    "pad: width True": ([("pad", (A, 1), {})], ("pad", (A, True), {})),
    "pad: widths (1.0, 2)": ([("pad", (A, (1, 2)), {})], ("pad", (A, (1.0, 2)), {})),
    "pad: widths ((1.0, 2), (0, 1))": ([("pad", (A, ((1, 2), (0, 1))), {})], ("pad", (A, ((1.0, 2), (0, 1))), {})),
    "array_split: index 2.0": ([("array_split", (A, [2]), {})], ("array_split", (A, [2.0]), {})),
}


@pytest.mark.parametrize(("calls", "refused"), KEPT_BY_TYPE.values(), ids=KEPT_BY_TYPE.keys())
def test_what_a_call_keeps_is_kept_by_exact_ints(xp, calls, refused):
    for name, args, kwargs in calls:
        run_both(xp, name, args, kwargs)
    assert_same_error(xp, *refused)


def test_constants_are_converted_per_call(xp):
    """NumPy warns at each assignment of a constant that overflows the dtype: so does every call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = np.pad(np.zeros(3, np.float16), 1, constant_values=1e6)
    x = xp.zeros(3, xp.float16)
    for _ in range(2):
        with pytest.warns(RuntimeWarning, match="overflow"):
            assert_same(cnp.pad(x, 1, constant_values=1e6), want)


@pytest.fixture
def no_tables(monkeypatch):
    """Refuses a windows' table, built (``plan``) or copied to the device (``CUDA.stage``)."""
    from cudadml.backends import CUDA
    from cudadml.core import plan

    def refuse(*args, **kwargs):
        raise AssertionError("a window table was built or staged")

    for module, name in ((plan, "window_table"), (plan, "grad_window_table"), (CUDA, "stage")):
        monkeypatch.setattr(module, name, refuse)


def test_a_call_in_a_loop_makes_nothing_again(xp, rng, no_tables, launches, monkeypatch):
    """Repeated calls look up what the first one made: their normalised arguments, their
    operations, their compiled plans (a roll's blocks are lowered once; no window table), and
    launch once each."""
    lowered = [0]
    lower = rolls._RolledSlice._lower

    def counting(self, *args):
        lowered[0] += 1
        return lower(self, *args)

    monkeypatch.setattr(rolls._RolledSlice, "_lower", counting)
    a, h = _to(xp, data(rng, (7, 9), "f4")), _to(xp, data(rng, (3, 7, 9), "u1"))
    calls = [
        (lambda: cnp.roll(a, 3, axis=0), lambda: np.roll(_host(a), 3, axis=0)),
        (lambda: cnp.roll(a, (3, -5), axis=(0, 1)), lambda: np.roll(_host(a), (3, -5), axis=(0, 1))),
        (lambda: cnp.pad(h, ((0, 0), (8, 8), (8, 8))), lambda: np.pad(_host(h), ((0, 0), (8, 8), (8, 8)))),
        (lambda: cnp.pad(a, 2, constant_values=3), lambda: np.pad(_host(a), 2, constant_values=3)),
        (lambda: cnp.flip(a, axis=1), lambda: np.flip(_host(a), axis=1)),
        (lambda: cnp.flipud(h), lambda: np.flipud(_host(h))),
        (lambda: cnp.array_split(a, 3), lambda: np.array_split(_host(a), 3)),
    ]
    memos = [
        rolls._roll_shifts,
        padding._pad_widths,
        padding._pad_call,
        flips._flip_call,
        splits._split_points,
        splits._split_windows,
    ]
    for ours, _ in calls:
        ours()  # the first call makes what the others look up
    misses = [m.cache_info().misses for m in memos]
    lowered[0] = launches[0] = 0
    for _ in range(3):
        for ours, theirs in calls:
            assert_same(ours(), theirs())
    assert [m.cache_info().misses for m in memos] == misses
    assert lowered[0] == 0
    if xp is np and backends.host_backend() is backends.REFERENCE:  # (the launches it counts)
        assert launches[0] == 3 * len(calls)


# ---- hostile callers -----------------------------------------------------------------------------


def test_results_are_new_arrays_nothing_shares_memory_with_the_input(rng):
    x = data(rng, (4, 6), "i4")
    results = [
        cnp.concatenate([x]),
        cnp.stack([x]),
        cnp.flip(x),
        cnp.roll(x, 0),
        cnp.pad(x, 0),
        *cnp.split(x, 2),
        *cnp.array_split(x, [3, 1]),
    ]
    for r in results:
        assert not np.shares_memory(r, x)
        assert r.flags.c_contiguous and r.flags.writeable


HIGH_RANK = {
    "concatenate": lambda x: (((x, x[:, ::-1]),), {"axis": 1}),
    "stack": lambda x: (((x, x),), {"axis": -1}),
    "array_split": lambda x: ((x, 3, -2), {}),
    "split": lambda x: ((x, [2, 1], 3), {}),
    "flip": lambda x: ((x, (1, 2, 3)), {}),
    "roll": lambda x: ((x, (1, 2), (0, 7)), {}),
    "pad": lambda x: ((x, [(1, 0)] + [(0, 0)] * 7 + [(0, 2)]), {"constant_values": 3}),
}


@pytest.mark.parametrize(("name", "case"), HIGH_RANK.items(), ids=HIGH_RANK.keys())
@pytest.mark.parametrize("dtype", ["i2", "c16"])
def test_more_dimensions_than_directml_fold_into_fewer(xp, rng, name, case, dtype):
    """Up to NumPy's 64 dimensions: runs of axes that a function treats alike move as one."""
    x = data(rng, (2, 3, 1, 2, 1, 2, 1, 1, 3), dtype).transpose(8, 1, 2, 3, 4, 5, 6, 7, 0)
    run_both(xp, name, *case(x))


#: Calls whose axes flipped, padded or rolled make more runs than the kernels take (8, or 7 for
#: 16-byte elements, moved as pairs of words): they run in passes of as many runs as fit.
MANY_RUNS = {
    "flip every other axis": lambda x: ((x, tuple(range(0, x.ndim, 2))), {}),
    "flip all but the last": lambda x: ((x[..., ::-1], tuple(range(x.ndim - 1))), {}),
    "pad every axis": lambda x: ((x, 1), {"constant_values": 3}),
    "pad every axis with zeros": lambda x: ((x, [(1, 0), (0, 2)] * (x.ndim // 2) + [(1, 1)] * (x.ndim % 2)), {}),
    "pad every axis, a constant per axis": lambda x: (
        (x, 1),
        {"constant_values": [[k, -k] for k in range(x.ndim)]},
    ),
    "pad every other axis": lambda x: ((x, [(1, 2), (0, 0)] * (x.ndim // 2) + [(0, 0)] * (x.ndim % 2)), {}),
    "roll every axis": lambda x: ((x, 1, tuple(range(x.ndim))), {}),
    "roll every other axis": lambda x: ((x[::-1], 2, tuple(range(0, x.ndim, 2))), {}),
    "concatenate": lambda x: (([x, x[:, ::-1]],), {"axis": 1}),
    "stack": lambda x: (([x, x],), {"axis": 3}),
    "split": lambda x: ((x, [1], 2), {}),
}


@pytest.mark.parametrize("rank", [8, 9, 11])
@pytest.mark.parametrize(("name", "case"), MANY_RUNS.items(), ids=MANY_RUNS.keys())
@pytest.mark.parametrize("dtype", ["i2", "c16", "U3"])
def test_more_runs_than_directml_takes_run_in_passes(xp, rng, name, case, dtype, rank):
    """8-D complex128 (9 dimensions of words) and 9 to 11 dimensions, every axis changed."""
    skip_unless_cupy_has(xp, np.zeros(0, dtype))
    x = data(rng, (2, 3) * (rank // 2) + (2,) * (rank % 2), dtype)
    args, kwargs = case(x)
    run_both(xp, name.split()[0], args, kwargs)


def test_flips_of_more_runs_than_directml_takes_run_in_passes(launches, rng):
    x = data(rng, (2,) * 10, "f8")
    assert_same(cnp.flip(x, (0, 2, 4, 6, 8)), np.flip(x, (0, 2, 4, 6, 8)))
    assert launches[0] == 2  # axes 0, 2, 4 and 6 (8 runs), then axis 8


#: Every function on empty arrays of more dimensions than DirectML's (each result's shape its own).
EMPTY_PAST_THE_RANK = {
    "concatenate": lambda x: (([x, x],), {"axis": 1}),
    "concatenate axis None": lambda x: (([x, x],), {"axis": None}),
    "stack": lambda x: (([x, x],), {"axis": -1}),
    "hstack": lambda x: (([x, x],), {}),
    "vstack": lambda x: (([x, x],), {}),
    "dstack": lambda x: (([x, x],), {}),
    "column_stack": lambda x: (([x, x],), {}),
    "split": lambda x: ((x, 1, 1), {}),
    "split indices": lambda x: ((x, [1, 5], -1), {}),
    "split overlapping": lambda x: ((x, [2, 1], 1), {}),
    "array_split": lambda x: ((x, 3, 2), {}),
    "hsplit": lambda x: ((x, 2), {}),
    "vsplit": lambda x: ((x, [1]), {}),
    "dsplit": lambda x: ((x, 1), {}),
    "flip": lambda x: ((x, (1, 3)), {}),
    "fliplr": lambda x: ((x,), {}),
    "flipud": lambda x: ((x,), {}),
    "roll": lambda x: ((x, 1, (1, 3)), {}),
    "pad": lambda x: ((x, 1), {"constant_values": 3}),
}


@pytest.mark.parametrize("rank", [9, 10, 11])
@pytest.mark.parametrize(("name", "case"), EMPTY_PAST_THE_RANK.items(), ids=EMPTY_PAST_THE_RANK.keys())
def test_every_function_on_empty_arrays_past_directmls_rank(xp, rng, name, case, rank):
    x = data(rng, (0, 2, 2, 1) + (2,) * (rank - 4), "f4")
    args, kwargs = case(x)
    run_both(xp, name.split()[0], args, kwargs)


def test_concatenate_and_stack_into_a_records_field(xp, rng):
    """``out=`` a record's field (strides not whole elements): the result in its elements, the
    other field's bytes as they were."""
    from test_arrays import record_field

    xs = [data(rng, (2, 3), "i4"), data(rng, (2, 3), "i4")]
    for name, kwargs, shape in (("concatenate", {"axis": 1}, (2, 6)), ("stack", {"axis": 2}, (2, 3, 2))):
        out, buffer, records = record_field(shape, np.int32, xp, rng)
        assert getattr(cnp, name)(_to(xp, xs), out=out, **kwargs) is out
        records["v"] = getattr(np, name)(xs, **kwargs)
        assert _host(buffer).tobytes() == records.tobytes()


@pytest.mark.parametrize("backend", ["reference", pytest.param("emulate", marks=pytest.mark.emulate)])
def test_every_function_on_one_array_per_backend(backend, rng):
    """One pass over every function on a 3-d array of each element width, on each host backend."""
    context = cd.use_host_backend(backend) if backend else contextlib.nullcontext()
    with context:
        for dtype in ("u1", "i2", "f4", "c8", "c16"):
            x = data(rng, (3, 4, 5), dtype)
            assert_same(cnp.concatenate([x, x[:, ::-1]], axis=1), np.concatenate([x, x[:, ::-1]], axis=1))
            assert_same(cnp.stack([x, x], axis=-1), np.stack([x, x], axis=-1))
            assert_same(cnp.split(x, [1, 4], axis=2), np.split(x, [1, 4], axis=2))
            assert_same(cnp.flip(x, (0, 2)), np.flip(x, (0, 2)))
            assert_same(cnp.roll(x, (1, 2), (1, 2)), np.roll(x, (1, 2), (1, 2)))
            assert_same(cnp.pad(x, 1, constant_values=5), np.pad(x, 1, constant_values=5))


# ---- the slice_grad kernel's fill ----------------------------------------------------------------

FILL_WINDOWS = {
    "strided and reversed": ((5, 7, 40), (1, 0, 2), (4, 7, 36), (2, -3, 1)),
    "holes in rows": ((3, 50), (0, 3), (3, 45), (1, 4)),
    "reversed rows": ((4, 33), (1, 1), (2, 31), (1, -2)),
    "one column": ((6, 1), (2, 0), (3, 1), (-1, 1)),
}


@pytest.mark.parametrize("window", FILL_WINDOWS.values(), ids=FILL_WINDOWS.keys())
@pytest.mark.parametrize("dtype", ["u1", "u2", "u4", "u8"])
def test_the_slice_grad_kernel_writes_its_fill_where_the_window_does_not_read(rng, window, dtype):
    """SLICE_GRAD with a fill (pad's constant): elements the window reads get the gradient, every
    other element the fill, on the emulated kernels (16-byte groups and single elements) as on
    the reference; and read elements, as SLICE_GRAD itself places them."""
    from cudadml.core.plan import fill_pattern
    from cudadml.ops.padding import FilledSliceGradOperatorDesc

    shape, offsets, sizes, strides = window
    dtype = np.dtype(dtype)
    counts = tuple(1 + (n - 1) // abs(s) for n, s in zip(sizes, strides))
    dy = data(rng, counts, dtype)
    fill = data(rng, (), dtype)
    t = cd.TensorDataType.from_dtype(dtype)
    desc = FilledSliceGradOperatorDesc(
        cd.BufferTensorDesc(t, counts),
        cd.BufferTensorDesc(t, shape),
        offsets,
        sizes,
        strides,
        fill=fill_pattern(fill.tobytes()),
    )
    window = {"window_offsets": offsets, "window_sizes": sizes, "window_strides": strides}
    placed = cd.slice_grad(dy, shape, **window)
    read = cd.slice_grad(np.ones(counts, np.uint8), shape, **window).astype(bool)
    expected = np.where(read, placed, fill)
    (dy_tensor,), (out_tensor,) = desc.input_tensors, desc.output_tensors
    source = aligned_empty(dy_tensor.total_tensor_size_in_bytes).view(dtype)
    source[: dy.size] = dy.ravel()
    for backend in ("reference", "emulate"):
        with cd.use_host_backend(backend):
            out = aligned_empty(out_tensor.total_tensor_size_in_bytes).view(dtype)
            desc.compile().execute([source], [out])
            assert out[: expected.size].tobytes() == expected.tobytes(), backend


def test_stacking_empty_arrays_past_directmls_rank():
    """Empty 8-D arrays stacked into 9 dimensions (folded, then given their shape back)."""
    x = np.zeros((0,) * 8, np.uint8)
    assert cnp.stack([x, x]).shape == np.stack([x, x]).shape == (2, *x.shape)
    assert cnp.concatenate([x[None], x[None]], axis=3).shape == (1, 0, 0, 0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize("axis, error", [(2**31, ValueError), (-(2**31) - 1, ValueError), (2**63, OverflowError)])
def test_an_axis_past_a_c_int_is_refused_as_numpy_refuses_it(axis, error):
    for module in (np, cnp):
        with pytest.raises(error):
            module.concatenate([np.zeros(2), np.zeros(2)], axis=axis)

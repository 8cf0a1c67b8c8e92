"""The array functions' cases, one place per operator (after PyTorch's OpInfo tables).

``OPS`` holds an ``OpInfo`` per array function: its name and function, sample calls (shapes,
dtypes and arguments, made by a ``Maker``) with a NumPy oracle (``reference``) for each, the
function that is its gradient and how a sample's gradient call is made, and error calls with
the exception and the whole message each gives. The NumPy, emulated, CuPy (GPU), PyTorch and
Dask tests read these tables; none keeps a list of operators or cases of its own.

A ``Sample`` holds NumPy arrays; a test moves them to its own kind of array (``Sample.map``)
and compares what the function gives with ``expected(op, sample)``, the oracle's results on
the NumPy arrays, byte for byte. The oracles read windows through NumPy's basic indexing, so
they run on CuPy arrays too (the 3 GiB samples are made and checked on the device).
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import cudadml as cd
from cudadml.testing import POISON, random_array

__all__ = [
    "BY_NAME",
    "OPS",
    "ErrorInput",
    "IntegerArgument",
    "Maker",
    "OpInfo",
    "Sample",
    "expected",
    "listed",
    "moves_raw_bits",
    "params",
    "poisoned",
]


# ---- samples --------------------------------------------------------------------------------------


class Maker:
    """``make(shape)``: a fresh NumPy array of ``dtype`` for a sample. ``values="bits"`` gives
    random bits (NaN payloads included, never the poison byte); ``"integers"`` small integers,
    which every sum keeps exact (for functions that add, and for gradients)."""

    def __init__(self, dtype, rng, values="bits"):
        self.dtype, self.rng, self.values = np.dtype(dtype), rng, values

    def __call__(self, shape):
        shape = tuple(shape)
        if self.values == "bits":
            return random_array(shape, self.dtype, self.rng)
        if self.dtype == np.bool_:
            return self.rng.integers(0, 2, shape).astype(bool)
        low = 0 if self.dtype.kind == "u" else -50
        return self.rng.integers(low, 50, shape).astype(self.dtype)


def _is_array(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, (tuple, np.dtype))


@dataclasses.dataclass(frozen=True, repr=False)
class Sample:
    """One call of an array function: ``function(*args, **kwargs)``. The arrays are positional
    (``x``, ``dy``, the list ``xs``); shapes are tuples, window arguments lists."""

    name: str
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)

    def arrays(self) -> list:
        """The array arguments, in order (a list argument's arrays in its place)."""
        found = []
        for a in self.args:
            if isinstance(a, list):
                found.extend(a)
            elif _is_array(a):
                found.append(a)
        return found

    def with_arrays(self, arrays) -> Sample:
        """The same call with ``arrays`` in place of ``arrays()``, in order."""
        arrays, args = list(arrays), []
        for a in self.args:
            if isinstance(a, list):
                args.append([arrays.pop(0) for _ in a])
            elif _is_array(a):
                args.append(arrays.pop(0))
            else:
                args.append(a)
        return dataclasses.replace(self, args=tuple(args))

    def map(self, convert) -> Sample:
        """The same call with every array ``a`` replaced by ``convert(a)``."""
        return self.with_arrays([convert(a) for a in self.arrays()])

    def caller(self, function, **kwargs):
        """``f(*arrays)``: the call of ``function`` with ``arrays`` in place of ``arrays()``
        (plain Python, which PyTorch's compilers trace)."""
        args, merged = self.args, {**self.kwargs, **kwargs}
        counts = [len(a) if isinstance(a, list) else 1 if _is_array(a) else 0 for a in args]
        lists = [isinstance(a, list) for a in args]

        def f(*arrays):
            given, k = [], 0
            for a, n, is_list in zip(args, counts, lists):
                given.append(list(arrays[k : k + n]) if is_list else arrays[k] if n else a)
                k += n
            return function(*given, **merged)

        return f

    def with_kwargs(self, **kwargs) -> Sample:
        return dataclasses.replace(self, kwargs={**self.kwargs, **kwargs})

    def call(self, function, **kwargs):
        return function(*self.args, **{**self.kwargs, **kwargs})

    def __repr__(self):
        """The sample's name and call, each array said by its dtype and shape."""

        def said(a):
            if isinstance(a, list):
                return f"[{', '.join(map(said, a))}]"
            return f"<{a.dtype} {tuple(a.shape)}>" if _is_array(a) else repr(a)

        return f"{self.name}({', '.join([*map(said, self.args), *(f'{k}={v!r}' for k, v in self.kwargs.items())])})"


def listed(result) -> list:
    """A function's result as a list (`split` and per-window `slice1_batch` give one)."""
    return list(result) if isinstance(result, (list, tuple)) else [result]


def expected(op, sample) -> list:
    """The oracle's results of ``sample`` (NumPy arrays for NumPy arrays, CuPy for CuPy)."""
    return listed(sample.call(op.reference))


def moves_raw_bits(dtype) -> bool:
    """Whether a dtype has no DirectML type, so its calls take ``directml_types=False``."""
    try:
        cd.TensorDataType.from_dtype(dtype)
    except (ValueError, TypeError):
        return True
    return False


def poisoned(shape, dtype, xp=np):
    """An array of ``shape`` whose every byte is the poison byte: an output no run wrote."""
    a = xp.empty(shape, dtype)
    a.view(np.uint8)[...] = POISON
    return a


# ---- the NumPy oracles ------------------------------------------------------------------------------


def _xp(a):
    """NumPy, or CuPy for CuPy arrays: the oracles index either alike."""
    return sys.modules["cupy"] if type(a).__module__.startswith("cupy") else np


def _counts(sizes, strides):
    return [0 if n <= 0 else 1 + (n - 1) // abs(s) for n, s in zip(sizes, strides)]


def _starts(offsets, sizes, strides):
    """The first element a window reads per axis: its end where it reads backwards."""
    return [o if s > 0 else o + n - 1 for o, n, s in zip(offsets, sizes, strides)]


def _key(starts, steps, counts):
    """Basic indexing reading ``start + step * k`` for ``k < count`` per axis (a step of 0: the
    one element ``start``, which ``_window`` repeats)."""
    key = []
    for start, step, count in zip(starts, steps, counts):
        if count == 0:
            key.append(slice(0, 0))
        elif step == 0:
            key.append(slice(start, start + 1))
        else:
            stop = start + step * count
            key.append(slice(start, stop if stop >= 0 else None, step))
    return tuple(key)


def _window(x, starts, steps, counts):
    y = x[_key(starts, steps, counts)]
    for axis, (step, count) in enumerate(zip(steps, counts)):
        if step == 0 and count > 1:
            y = _xp(x).repeat(y, count, axis=axis)
    return y


def _zeros(shape, like):
    return _xp(like).zeros(tuple(shape), like.dtype)


def reference_slice(x, *, offsets, sizes, strides=None, **_):
    """``out[c] = x[offsets + strides * c]``: a window of basic slices, a stride of 0 repeating."""
    strides = [1] * x.ndim if strides is None else strides
    return _window(x, offsets, strides, sizes)


def reference_slice1(x, *, window_offsets, window_sizes, window_strides=None, output_sizes=None, **_):
    """The window read from its end along axes of negative stride; ``output_sizes`` elements of it."""
    steps = [1] * x.ndim if window_strides is None else window_strides
    counts = _counts(window_sizes, steps) if output_sizes is None else output_sizes
    return _window(x, _starts(window_offsets, window_sizes, steps), steps, counts)


def reference_slice_grad(dy, input_shape, *, window_offsets, window_sizes, window_strides=None, **_):
    """Zeros of ``input_shape`` with ``dy`` assigned where `slice1`'s window read."""
    steps = [1] * dy.ndim if window_strides is None else window_strides
    dx = _zeros(input_shape, dy)
    dx[_key(_starts(window_offsets, window_sizes, steps), steps, dy.shape)] = dy
    return dx


def reference_split(x, *, split_sizes=None, parts=None, axis=0, **_):
    """``np.split`` at the cumulative part sizes (or into equal parts)."""
    xp = _xp(x)
    if parts is not None:
        return xp.split(x, parts, axis=axis)
    if isinstance(split_sizes, int):  # torch.split's part size: the cuts at its multiples
        return xp.split(x, list(range(split_sizes, x.shape[axis], split_sizes)), axis=axis)
    return xp.split(x, [int(c) for c in np.cumsum(split_sizes)[:-1]], axis=axis)


def reference_join(xs, axis=0, **_):
    """``np.concatenate``."""
    return _xp(xs[0]).concatenate(xs, axis=axis)


def reference_strided_slice(x, key, **_):
    """``x[key]``."""
    key = key if isinstance(key, tuple) else (key,)
    if not any(k is Ellipsis for k in key):
        key = (*key, Ellipsis)  # a 0-dimensional result as a view, not a scalar (which would read a bool)
    return x[key]


def reference_strided_slice_grad(dy, input_shape, key, **_):
    """Zeros of ``input_shape`` with ``dy`` assigned at ``key``."""
    dx = _zeros(input_shape, dy)
    dx[key] = dy
    return dx


def _windows(n, d, window_offsets, window_sizes, window_strides):
    """Per window: ``(offsets, sizes, strides)`` rows, the shared rows repeated."""

    def rows(a):
        a = np.asarray(a if a is not None else [1] * d, np.int64).reshape(-1, d)
        return np.broadcast_to(a, (n, d)) if len(a) == 1 else a

    return [tuple(map(list, row)) for row in zip(*map(rows, (window_offsets, window_sizes, window_strides)))]


def reference_slice1_batch(x, *, window_offsets, window_sizes, window_strides=None, per_sample=False, **_):
    """Each window's `slice1` (of ``x[n]`` with ``per_sample``): stacked, or a list for per-window sizes."""
    n, d = len(window_offsets), x.ndim - per_sample
    results = []
    for k, (offsets, sizes, steps) in enumerate(_windows(n, d, window_offsets, window_sizes, window_strides)):
        results.append(_window(x[k] if per_sample else x, _starts(offsets, sizes, steps), steps, _counts(sizes, steps)))
    if np.ndim(window_sizes) == 1:  # windows of one size: one array
        counts = _counts(window_sizes, window_strides if np.ndim(window_strides) == 1 else [1] * d)
        return _xp(x).stack(results) if results else _xp(x).empty((0, *counts), x.dtype)
    return results


def reference_slice1_batch_grad(
    dy, input_shape, *, window_offsets, window_sizes, window_strides=None, per_sample=False, **_
):
    """Zeros of ``input_shape``; each window's gradient added where it read, in window order
    (assigned with ``per_sample``, whose windows never overlap)."""
    grads = dy if isinstance(dy, list) else list(dy)
    like = grads[0] if grads else dy
    xp, n, d = _xp(like), len(window_offsets), len(input_shape) - per_sample
    # Overlapping windows add in window order: floats in their own precision, halves in float32.
    dtype = np.dtype(np.float32) if like.dtype == np.float16 and not per_sample else like.dtype
    dx = xp.zeros(tuple(input_shape), dtype)
    for k, (offsets, sizes, steps) in enumerate(_windows(n, d, window_offsets, window_sizes, window_strides)):
        target = dx[k] if per_sample else dx
        key = _key(_starts(offsets, sizes, steps), steps, grads[k].shape)
        if per_sample:
            target[key] = grads[k]
        else:
            target[key] += grads[k].astype(dtype)
    return dx.astype(like.dtype)


# ---- the tables ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ErrorInput:
    """A call that breaks a rule: ``call(xp, x)`` (``x``: ``xp.arange(16.0).reshape(4, 4)`` as
    float32) raises ``error`` with exactly ``message``. ``dask``: whether the call on Dask arrays
    raises the same, at call time (``False`` for ``out=``, which Dask arrays refuse first, and
    where a Dask array's rule differs: its chunks, not the whole array, must fit a tensor)."""

    name: str
    call: Callable
    error: type
    message: str
    dask: bool = True


@dataclasses.dataclass(frozen=True)
class IntegerArgument:
    """An integer argument: how messages name it, a call with ``v`` in it (on a (4, 4)
    float32 ``x``), and a value the call takes."""

    argument: str
    call: Callable
    valid: int


def _one_out(sample, outs):
    return outs[0]


@dataclasses.dataclass(frozen=True)
class OpInfo:
    """One array function's cases.

    Samples, made by ``make`` (a ``Maker`` of the test's dtype):

    - ``samples(make)``: the named samples: edge cases (empty results, zero strides, empty
      parts, 0-dimensional results) and the shapes each kernel family takes;
    - ``random_sample(make, rng)``: one random call;
    - ``rank_sample(make, rank)``: a call on ``rank`` dimensions, none of size 1 (so that
      coalescing keeps them), read backwards on every other one;
    - ``huge_sample(make)``, where given: a call whose byte offsets pass 2^31 (3 GiB of int8);
    - ``examples``: DirectML's and the docstrings' examples, with the results they give.

    ``reference`` is the NumPy oracle, called as the function is. ``gradient`` names the OpInfo
    whose function is this one's gradient; ``gradient_sample(sample, dys)`` is its call for the
    results' gradients ``dys`` (a list). ``error_inputs`` and ``integer_arguments``: calls that
    break each rule, and each integer argument. ``out(sample, outs)``: what ``out=`` takes for
    result arrays ``outs`` (None: the call takes none).

    What the function takes: ``operator`` names the ``torch.ops.cudadml`` operator the function
    is; ``traced``: whether it runs under PyTorch's transforms, compilers and export; ``dask``:
    whether it takes Dask arrays; ``adds``: whether its results add elements (its samples then
    hold small integers, and dtypes that cannot add are refused); ``windows``: whether it takes
    many windows as data (it runs windows.cu's kernels, which choose their index type from each
    window's span where the others ask ``kernels._index_type``, and on Dask arrays each result
    chunk is a run of windows, ``chunks=`` counting windows, read from the box of ``x`` they
    cover made one chunk); ``descriptor``: the DirectML operator whose rules (dimension counts
    per feature level) it keeps.
    """

    name: str
    function: Callable
    reference: Callable
    samples: Callable[[Maker], Iterator[Sample]]
    random_sample: Callable[[Maker, np.random.Generator], Sample]
    rank_sample: Callable[[Maker, int], Sample]
    descriptor: str
    error_inputs: tuple[ErrorInput, ...]
    integer_arguments: tuple[IntegerArgument, ...] = ()
    examples: tuple[tuple[Sample, list], ...] = ()
    gradient: str | None = None
    gradient_sample: Callable[[Sample, list], Sample] | None = None
    huge_sample: Callable[[Maker], Sample] | None = None
    out: Callable[[Sample, list], Any] = _one_out
    operator: str | None = None
    traced: bool = True
    dask: bool = True
    adds: bool = False
    windows: bool = False
    max_rank: int = 8

    def __str__(self):
        return self.name

    def maker(self, dtype, rng):
        """The ``Maker`` of this function's samples: small integers where its results add."""
        return Maker(dtype, rng, "integers" if self.adds else "bits")

    def supports(self, dtype) -> bool:
        """Whether calls take arrays of ``dtype`` (moved as raw bits where it has no DirectML
        type); where results add, only dtypes that add."""
        return not self.adds or np.dtype(dtype).kind in "iufc"

    def rank_limits(self):
        """``(feature_level, fewest, most)``: the dimensions a call may have, at the newest
        level (None) and at the newest level that allows fewer."""
        from cudadml.core.operators import REGISTRY

        descs = {op.desc.NAME: op.desc for op in REGISTRY.values() if op.desc is not None}
        support, limits = descs[self.descriptor].SUPPORT, [(None, 1, self.max_rank)]
        levels = [level for level in cd.FeatureLevel if support.introduced <= level]
        lower = [level for level in levels if support.dimension_range(level)[1] < self.max_rank]
        if lower:
            limits.append((str(lower[-1]), *support.dimension_range(lower[-1])))
        return limits


def params(ops):
    """``ops`` as ``pytest.param``s named by their function."""
    return [pytest.param(op, id=op.name) for op in ops]


_RANK_SHAPE = (3, 2, 3, 2, 3, 2, 3, 4)


def _rank_shape(rank):
    return _RANK_SHAPE[:rank]


def _flips(rank):
    return [-1 if d % 2 else 1 for d in range(rank)]


def _random_shape(rng, low=1, high=6, rank=None):
    rank = int(rng.integers(1, 4)) if rank is None else rank
    return tuple(int(n) for n in rng.integers(low, high + 1, rank))


def _random_window(rng, shape, steps=(1, 2, -1, -3)):
    offsets = [int(rng.integers(0, n)) for n in shape]
    sizes = [int(rng.integers(1, n - o + 1)) for n, o in zip(shape, offsets)]
    strides = [int(rng.choice(steps)) for _ in shape]
    return offsets, sizes, strides


# slice ------------------------------------------------------------------------------------------


def _slice(name, make, shape, offsets, sizes, strides=None):
    kwargs = {"offsets": offsets, "sizes": sizes}
    return Sample(name, (make(shape),), kwargs if strides is None else {**kwargs, "strides": strides})


def _slice_samples(make):
    yield _slice("zero_stride", make, (3, 4, 8), [1, 0, 2], [2, 3, 2], [1, 0, 3])  # backward sums
    yield _slice("rows", make, (6, 40), [1, 2], [5, 36])
    yield _slice("elements", make, (6, 40), [0, 1], [3, 13], [2, 3])
    yield _slice("steps_across_chunks", make, (16, 10), [1, 0], [5, 10], [3, 1])
    yield _slice("repeated", make, (16, 10), [4, 2], [7, 3], [0, 2])
    yield _slice("one_axis", make, (9,), [2], [3], [3])
    yield _slice("empty", make, (4, 4), [4, 0], [0, 4])  # x[4:4], as NumPy
    yield _slice("empty_at_0", make, (16, 10), [0, 0], [0, 4])


def _slice_random(make, rng):
    shape = _random_shape(rng, 2, 5, rank=int(rng.integers(1, 5)))
    offsets = [int(rng.integers(0, n)) for n in shape]
    strides = [int(rng.integers(0, 3)) for _ in shape]  # 0 repeats an element
    sizes = [
        int(rng.integers(1, 4)) if s == 0 else int(rng.integers(1, (n - o - 1) // s + 2))
        for n, o, s in zip(shape, offsets, strides)
    ]
    return _slice("random", make, shape, offsets, sizes, strides)


def _slice_rank(make, rank):
    shape = _rank_shape(rank)
    # odd axes: their last element, repeated (a zero stride); even axes: all but the first
    offsets = [n - 1 if d % 2 else 1 for d, n in enumerate(shape)]
    sizes = [2 if d % 2 else n - 1 for d, n in enumerate(shape)]
    strides = [0 if d % 2 else 1 for d in range(rank)]
    return _slice(f"rank_{rank}", make, shape, offsets, sizes, strides)


def _slice_gradient(sample, dys):
    """SLICE_GRAD, after summing the gradients of an element read several times (a zero stride)."""
    (x,), (dy,) = sample.arrays(), dys
    strides = sample.kwargs.get("strides") or [1] * x.ndim
    repeated = tuple(d for d, (n, s) in enumerate(zip(sample.kwargs["sizes"], strides)) if s == 0 and n > 1)
    if repeated:
        dy = dy.sum(axis=repeated, keepdims=True).astype(dy.dtype)
    steps = [s or 1 for s in strides]
    window = {
        "window_offsets": sample.kwargs["offsets"],
        "window_sizes": [(n - 1) * s + 1 if n else 0 for n, s in zip(dy.shape, steps)],
        "window_strides": steps,
    }
    return Sample(f"{sample.name}_gradient", (dy, tuple(x.shape)), window)


# slice1 -----------------------------------------------------------------------------------------


def _slice1(name, make, shape, offsets, sizes, strides=None, output_sizes=None):
    kwargs = {"window_offsets": offsets, "window_sizes": sizes}
    if strides is not None:
        kwargs["window_strides"] = strides
    if output_sizes is not None:
        kwargs["output_sizes"] = output_sizes
    return Sample(name, (make(shape),), kwargs)


def _slice1_samples(make):
    yield _slice1("negative_steps", make, (3, 4, 8), [0, 1, 1], [3, 3, 6], [2, -1, -3])
    yield _slice1("across_chunks", make, (16, 10), [1, 2], [14, 7], [-3, 2])
    yield _slice1("flipped", make, (16, 10), [0, 0], [16, 10], [1, -1])
    yield _slice1("fewer_outputs", make, (16, 10), [2, 1], [13, 9], [5, -4], [2, 2])  # fewer than it reaches
    yield _slice1("one_element", make, (16, 10), [7, 3], [1, 1], [-9, 9])
    yield _slice1("one_axis", make, (9,), [1], [7], [-2])
    yield _slice1("empty_window", make, (4, 4), [0, 0], [0, 4])
    yield _slice1("no_outputs", make, (3, 4), [0, 0], [3, 4], None, [0, 4])


def _slice1_random(make, rng):
    shape = _random_shape(rng, 2, 5, rank=int(rng.integers(1, 5)))
    offsets, sizes, strides = _random_window(rng, shape)
    return _slice1("random", make, shape, offsets, sizes, strides, _counts(sizes, strides))


def _slice1_rank(make, rank):
    shape = _rank_shape(rank)
    return _slice1(f"rank_{rank}", make, shape, [0] * rank, list(shape), _flips(rank))


def _window_kwargs(sample):
    return {k: sample.kwargs[k] for k in ("window_offsets", "window_sizes", "window_strides") if k in sample.kwargs}


def _slice1_gradient(sample, dys):
    (x,), (dy,) = sample.arrays(), dys
    return Sample(f"{sample.name}_gradient", (dy, tuple(x.shape)), _window_kwargs(sample))


# slice_grad -------------------------------------------------------------------------------------


def _slice_grad(name, make, counts, input_shape, offsets, sizes, strides=None):
    kwargs = {"window_offsets": offsets, "window_sizes": sizes}
    if strides is not None:
        kwargs["window_strides"] = strides
    return Sample(name, (make(counts), tuple(input_shape)), kwargs)


def _slice_grad_samples(make):
    yield _slice_grad("negative_steps", make, (2, 3, 2), (3, 4, 8), [0, 1, 1], [3, 3, 6], [2, -1, -3])
    yield _slice_grad("strided", make, (3, 13), (6, 40), [0, 1], [6, 39], [2, 3])
    yield _slice_grad("dense", make, (4, 30), (6, 40), [1, 5], [4, 30])
    yield _slice_grad("across_chunks", make, (5, 4), (16, 10), [1, 2], [14, 7], [-3, 2])
    yield _slice_grad("fewer_outputs", make, (2, 2), (16, 10), [2, 1], [13, 9], [5, -4])
    yield _slice_grad("misses_most", make, (3, 4), (40, 30), [20, 5], [7, 8], [3, -2])
    yield _slice_grad("empty", make, (0, 4), (4, 4), [4, 0], [0, 4])


def _slice_grad_random(make, rng):
    shape = _random_shape(rng, 2, 5, rank=int(rng.integers(1, 5)))
    offsets, sizes, strides = _random_window(rng, shape)
    return _slice_grad("random", make, _counts(sizes, strides), shape, offsets, sizes, strides)


def _slice_grad_rank(make, rank):
    shape = _rank_shape(rank)
    return _slice_grad(f"rank_{rank}", make, shape, shape, [0] * rank, list(shape), _flips(rank))


def _slice_grad_gradient(sample, dys):
    (dy,), (g,) = sample.arrays(), dys
    return Sample(f"{sample.name}_gradient", (g,), {**_window_kwargs(sample), "output_sizes": list(dy.shape)})


# split ------------------------------------------------------------------------------------------


def _split(name, make, shape, axis, split_sizes=None, parts=None):
    kwargs = {"axis": axis, **({"parts": parts} if parts is not None else {"split_sizes": split_sizes})}
    return Sample(name, (make(shape),), kwargs)


def _split_samples(make):
    yield _split("an_empty_part", make, (3, 4, 8), 1, [1, 0, 3])
    yield _split("rows", make, (6, 40), 1, [7, 30, 3])
    yield _split("across_chunks", make, (16, 10), 0, [3, 6, 0, 7])
    yield _split("on_chunk_bounds", make, (16, 10), 0, [8, 1, 1, 6])
    yield _split("a_part_size", make, (16, 10), 0, 3)  # an integer split_sizes: parts of 3, the last of 1
    yield _split("a_part_size_over", make, (16, 10), 1, 12)  # one part of 10, as torch.split(t, 12)
    yield _split("inner_axis", make, (16, 10), 1, [4, 4, 2])
    yield _split("negative_axis", make, (16, 10), -1, [1, 9])
    yield _split("parts", make, (4, 6), -1, parts=3)
    yield _split("empty_parts", make, (3, 4), 0, [0, 3, 0])


def _split_random(make, rng):
    shape = _random_shape(rng, 1, 6, rank=int(rng.integers(1, 5)))
    axis = int(rng.integers(-len(shape), len(shape)))
    cut = int(rng.integers(0, shape[axis] + 1))
    return _split("random", make, shape, axis, [cut, shape[axis] - cut])


def _split_rank(make, rank):
    shape = _rank_shape(rank)
    return _split(f"rank_{rank}", make, shape, -1, [1, shape[-1] - 1])


def _split_gradient(sample, dys):
    return Sample(f"{sample.name}_gradient", (list(dys),), {"axis": sample.kwargs["axis"]})


# join -------------------------------------------------------------------------------------------


def _join(name, make, shapes, axis):
    return Sample(name, ([make(s) for s in shapes], axis))


def _join_samples(make):
    yield _join("an_empty_part", make, [(3, 3, 8), (3, 0, 8), (3, 1, 8)], -2)
    yield _join("rows", make, [(6, 9), (6, 40)], 1)
    yield _join("inner_axis", make, [(16, 10), (16, 3), (16, 5)], 1)
    yield _join("outer_axis", make, [(8, 10), (1, 10), (7, 10)], 0)
    yield _join("one", make, [(5,)], 0)
    yield _join("empties", make, [(0, 4), (0, 4)], 0)


def _join_random(make, rng):
    shape = _random_shape(rng, 1, 6, rank=int(rng.integers(1, 5)))
    axis = int(rng.integers(-len(shape), len(shape)))
    k = axis % len(shape)
    sizes = [int(n) for n in rng.integers(0, shape[k] + 1, int(rng.integers(1, 4)))]
    return _join("random", make, [(*shape[:k], n, *shape[k + 1 :]) for n in sizes], axis)


def _join_rank(make, rank):
    shape = _rank_shape(rank)
    return _join(f"rank_{rank}", make, [(*shape[:-1], 1), (*shape[:-1], shape[-1] - 1)], -1)


def _join_gradient(sample, dys):
    xs, axis = sample.args
    return Sample(f"{sample.name}_gradient", (dys[0],), {"split_sizes": [x.shape[axis] for x in xs], "axis": axis})


# strided_slice ----------------------------------------------------------------------------------

_KEYS = [  # on a (16, 10) array
    ("across_chunks", np.s_[1:14:2, ::-3]),
    ("an_integer", np.s_[::-1, 2]),
    ("new_axes", np.s_[None, 5, None, 1:9]),
    ("backwards", np.s_[15:2:-4, 9:0:-7]),
    ("ellipsis", np.s_[..., None]),
    ("zero_dimensional", np.s_[3, 4]),
    ("empty", np.s_[4:4, :]),
    ("rows", np.s_[2:9]),
    ("empty_both", np.s_[4:4, 11:]),
]
_KEY = (slice(None, None, -2), None, 1, slice(5, 0, -2))  # on a (3, 4, 8) array


def _strided_slice_samples(make):
    yield Sample("steps_and_axes", (make((3, 4, 8)), _KEY))
    for name, key in _KEYS:
        yield Sample(name, (make((16, 10)), key))


def _random_slice(rng, n):
    step = int(rng.choice([1, 2, 3, -1, -2, -5]))
    start, stop = (int(v) for v in rng.integers(-n - 1, n + 2, size=2))
    return [slice(start, stop, step), slice(None, None, step), slice(start, None, step)][int(rng.integers(0, 3))]


def _random_key(rng, shape):
    key = [_random_slice(rng, n) if rng.random() < 0.8 else int(rng.integers(-n, n)) for n in shape]
    if rng.random() < 0.3:
        key.insert(int(rng.integers(0, len(key) + 1)), None)
    return tuple(key)


def _strided_slice_random(make, rng):
    shape = _random_shape(rng, 1, 8)
    return Sample("random", (make(shape), _random_key(rng, shape)))


def _strided_slice_rank(make, rank):
    key = tuple(slice(None, None, -1) if d % 2 else slice(None) for d in range(rank))
    return Sample(f"rank_{rank}", (make(_rank_shape(rank)), key))


def _strided_slice_gradient(sample, dys):
    x, key = sample.args
    return Sample(f"{sample.name}_gradient", (dys[0], tuple(x.shape), key))


# strided_slice_grad -----------------------------------------------------------------------------


def _strided_slice_grad(name, make, shape, key):
    return Sample(name, (make(np.empty(shape, np.int8)[key].shape), tuple(shape), key))


def _strided_slice_grad_samples(make):
    yield _strided_slice_grad("steps_and_axes", make, (3, 4, 8), _KEY)
    for name, key in _KEYS:
        yield _strided_slice_grad(name, make, (16, 10), key)
    yield _strided_slice_grad("every_other", make, (3, 4, 5), np.s_[1:, ::2])


def _strided_slice_grad_random(make, rng):
    shape = _random_shape(rng, 1, 8)
    return _strided_slice_grad("random", make, shape, _random_key(rng, shape))


def _strided_slice_grad_rank(make, rank):
    key = tuple(slice(None, None, -1) if d % 2 else slice(None) for d in range(rank))
    return _strided_slice_grad(f"rank_{rank}", make, _rank_shape(rank), key)


def _strided_slice_grad_gradient(sample, dys):
    _, _, key = sample.args
    return Sample(f"{sample.name}_gradient", (dys[0], key))


# slice1_batch -----------------------------------------------------------------------------------


def _batch(name, make, shape, offsets, sizes, strides=None, per_sample=False):
    kwargs = {"window_offsets": offsets, "window_sizes": sizes}
    if strides is not None:
        kwargs["window_strides"] = strides
    if per_sample:
        kwargs["per_sample"] = True
    return Sample(name, (make(shape),), kwargs)


_ONE_SIZE = (
    [[0, 1, 2], [4, 6, 7], [1, 0, 3], [3, 5, 0]],
    [2, 3, 4],
    [[1, 1, 1], [-1, 1, -1], [1, -1, 1], [-1, -1, -1]],
)
_OWN_SIZES = (
    [[0, 1, 2], [4, 6, 7], [1, 0, 3]],
    [[2, 3, 4], [1, 2, 3], [5, 9, 8]],
    [[1, 1, 1], [-1, 2, -1], [1, -1, 3]],
)
_PER_SAMPLE = (
    [[0, 2], [4, 0], [1, 1], [6, 3], [2, 6], [0, 0]],
    [3, 5],
    [[1, 1], [-1, 1], [1, -1], [-1, -1], [1, 1], [1, -1]],
)


def _slice1_batch_samples(make):
    yield _batch("one_size", make, (6, 9, 11), *_ONE_SIZE)
    yield _batch("own_sizes", make, (6, 9, 11), *_OWN_SIZES)
    yield _batch("per_sample", make, (6, 9, 11), *_PER_SAMPLE, per_sample=True)
    own = [[3, 5], [2, 9], [6, 1], [1, 1], [7, 4], [9, 11]]
    yield _batch("per_sample_own_sizes", make, (6, 9, 11), [[0, 0]] * 6, own, [[1, -1]] * 6, per_sample=True)
    yield _batch("overlapping", make, (4, 4), [[0, 0], [1, 1], [2, 2]], [2, 2], [[1, 1], [-1, 1], [1, -1]])


def _slice1_batch_random(make, rng):
    shape = _random_shape(rng, 2, 6)
    n = int(rng.integers(1, 5))
    sizes = [int(rng.integers(1, d + 1)) for d in shape]
    offsets = [[int(rng.integers(0, d - s + 1)) for d, s in zip(shape, sizes)] for _ in range(n)]
    strides = [[int(rng.choice([1, -1])) for _ in shape] for _ in range(n)]
    return _batch("random", make, shape, offsets, sizes, strides)


def _slice1_batch_rank(make, rank):
    shape = _rank_shape(rank)
    return _batch(f"rank_{rank}", make, shape, [[0] * rank, [1] * rank], [n - 1 for n in shape], _flips(rank))


def _batch_kwargs(sample):
    keys = ("window_offsets", "window_sizes", "window_strides", "per_sample")
    return {k: sample.kwargs[k] for k in keys if k in sample.kwargs}


def _slice1_batch_gradient(sample, dys):
    (x,) = sample.arrays()
    dy = dys[0] if np.ndim(sample.kwargs["window_sizes"]) == 1 else list(dys)
    return Sample(f"{sample.name}_gradient", (dy, tuple(x.shape)), _batch_kwargs(sample))


def _slice1_batch_out(sample, outs):
    return outs[0] if np.ndim(sample.kwargs["window_sizes"]) == 1 else None  # per-window sizes: new arrays


# slice1_batch_grad ------------------------------------------------------------------------------


def _batch_grad(make, forward):
    """The gradient call of a `slice1_batch` sample: ``dy`` of its results' shapes."""
    shapes = [r.shape for r in expected(BY_NAME["slice1_batch"], forward)]
    dy = [make(s) for s in shapes] if np.ndim(forward.kwargs["window_sizes"]) == 2 else make(shapes[0])
    return Sample(forward.name, (dy, tuple(forward.args[0].shape)), _batch_kwargs(forward))


def _shapes_only(shape):
    return np.empty(shape, np.int8)


def _slice1_batch_grad_samples(make):
    for forward in _slice1_batch_samples(_shapes_only):
        yield _batch_grad(make, forward)


def _slice1_batch_grad_random(make, rng):
    return _batch_grad(make, _slice1_batch_random(_shapes_only, rng))


def _slice1_batch_grad_rank(make, rank):
    return _batch_grad(make, _slice1_batch_rank(_shapes_only, rank))


def _slice1_batch_grad_gradient(sample, dys):
    return Sample(f"{sample.name}_gradient", (dys[0],), _batch_kwargs(sample))


# huge samples: byte offsets past 2^31 (3 GiB of int8) --------------------------------------------

_G = 2**30


def _huge_slice1(make):
    return _slice1("huge", make, (3, _G), [0, 3], [3, _G - 3], [-2, 4])


def _huge_split(make):
    return _split("huge", make, (3, _G), 0, [1, 2])


def _huge_join(make):
    return _join("huge", make, [(2, _G), (1, _G)], 0)


def _huge_slice_grad(make):
    return _slice_grad("huge", make, (1, 2**28), (3, _G), [2, 1], [1, _G - 1], [1, 4])


# examples: DirectML's and the docstrings', with the results they give -------------------------------


def _grid():
    return np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)


def _f32(rows):
    return np.array(rows, np.float32)


_SLICE_EXAMPLES = (
    (
        Sample("spec", (_grid(),), {"offsets": [0, 0, 1, 2], "sizes": [1, 1, 3, 2]}),
        [_f32([[[[7, 8], [11, 12], [15, 16]]]])],
    ),
    (
        Sample("docstring", (_grid(),), {"offsets": [0, 0, 1, 0], "sizes": [1, 1, 2, 2], "strides": [1, 1, 2, 3]}),
        [_f32([[[[5, 8], [13, 16]]]])],
    ),
)
_SLICE1_EXAMPLES = (
    (
        Sample(
            "spec",
            (_grid(),),
            {"window_offsets": [0, 0, 0, 1], "window_sizes": [1, 1, 4, 3], "window_strides": [1, 1, -2, 2]},
        ),
        [_f32([[[[14, 16], [6, 8]]]])],
    ),
)
_SLICE_GRAD_EXAMPLES = (
    (
        Sample(
            "spec",
            (_f32([[[[1, 3], [9, 11]]]]), (1, 1, 4, 4)),
            {"window_offsets": [0, 0, 0, 0], "window_sizes": [1, 1, 4, 4], "window_strides": [1, 1, 2, 2]},
        ),
        [_f32([[[[1, 0, 3, 0], [0, 0, 0, 0], [9, 0, 11, 0], [0, 0, 0, 0]]]])],
    ),
)
_SPLIT_EXAMPLES = (
    (
        Sample(
            "spec", (np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2),), {"split_sizes": [2, 1, 3], "axis": 2}
        ),
        [_f32([[[[1, 2], [3, 4]]]]), _f32([[[[5, 6]]]]), _f32([[[[7, 8], [9, 10], [11, 12]]]])],
    ),
    (
        Sample("parts", (np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2),), {"parts": 2, "axis": 3}),
        [_f32([1, 3, 5, 7, 9, 11]).reshape(1, 1, 6, 1), _f32([2, 4, 6, 8, 10, 12]).reshape(1, 1, 6, 1)],
    ),
)
_JOIN_EXAMPLES = (
    (
        Sample(
            "spec",
            ([_f32([[[[1, 2], [3, 4]]]]), _f32([[[[5, 6]]]]), _f32([[[[7, 8], [9, 10], [11, 12]]]])], 2),
        ),
        [np.arange(1, 13, dtype=np.float32).reshape(1, 1, 6, 2)],
    ),
    (Sample("docstring", ([np.arange(2), np.arange(3)],)), [np.array([0, 1, 0, 1, 2])]),
)
_STRIDED_SLICE_EXAMPLES = ((Sample("docstring", (np.arange(12).reshape(3, 4), np.s_[::-2, 1])), [np.array([9, 1])]),)
_STRIDED_SLICE_GRAD_EXAMPLES = (
    (Sample("docstring", (np.array([7, 8]), (5,), np.s_[::-3])), [np.array([0, 8, 0, 0, 7])]),
)
_SLICE1_BATCH_EXAMPLES = (
    (
        Sample(
            "docstring",
            (np.arange(16).reshape(4, 4),),
            {
                "window_offsets": [[0, 0], [1, 2], [2, 1]],
                "window_sizes": [2, 2],
                "window_strides": [[1, 1], [1, -1], [-1, 1]],
            },
        ),
        [np.array([[[0, 1], [4, 5]], [[7, 6], [11, 10]], [[13, 14], [9, 10]]])],
    ),
)
_SLICE1_BATCH_GRAD_EXAMPLES = (
    (
        Sample(
            "docstring",
            (np.ones((2, 2, 2), np.float32), (3, 3)),
            {"window_offsets": [[0, 0], [1, 1]], "window_sizes": [2, 2]},
        ),
        [_f32([[1, 1, 0], [1, 2, 1], [0, 1, 1]])],
    ),
)


# ---- error inputs: every rule each function can reach, the exception and the whole message ---------


def _error(name, call, error, message, dask=True):
    return ErrorInput(name, call, error, message, dask)


_SLICE_ERRORS = [
    _error(
        "positional",
        lambda xp, x: cd.slice(x, [0, 0], [2, 3], [2, 2]),
        TypeError,
        (
            "cd.slice(x, [0, 0], [2, 3], [2, 2]): pass offsets=, sizes=, strides= by name: SLICE's "
            "sizes are the result's shape, where cd.slice1's window_sizes are the window read and "
            "ONNX's and JAX's slices take ends; write cd.slice(x, offsets=[0, 0], sizes=[2, 3], "
            "strides=[2, 2]), or cd.strided_slice(x, key) for x[key]"
        ),
    ),
    _error(
        "positional_extra",
        lambda xp, x: cd.slice(x, [0, 0], [1, 1], [1, 1], [1, 1]),
        TypeError,
        (
            "cd.slice(x, [0, 0], [1, 1], [1, 1], [1, 1]): pass offsets=, sizes=, strides= by name "
            "(1 more positional argument than it takes): SLICE's sizes are the result's shape, "
            "where cd.slice1's window_sizes are the window read and ONNX's and JAX's slices take "
            "ends; write cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[1, 1]), or "
            "cd.strided_slice(x, key) for x[key]"
        ),
    ),
    _error(
        "offsets_required",
        lambda xp, x: cd.slice(x, sizes=[1, 1]),
        TypeError,
        "slice: offsets= is required (one integer per axis)",
    ),
    _error(
        "sizes_required",
        lambda xp, x: cd.slice(x, offsets=[0, 0]),
        TypeError,
        "slice: sizes= is required (one integer per axis)",
    ),
    _error(
        "offsets_not_a_sequence",
        lambda xp, x: cd.slice(x, offsets=3, sizes=[1, 1]),
        TypeError,
        "slice: offsets = 3 must be a sequence of integers, not int",
    ),
    _error(
        "offsets_nan",
        lambda xp, x: cd.slice(x, offsets=[0, float("nan")], sizes=[1, 1]),
        TypeError,
        "slice: offsets[1] = nan must be an integer, not float",
    ),
    _error(
        "offsets_float",
        lambda xp, x: cd.slice(x, offsets=[0, 1.0], sizes=[1, 1]),
        TypeError,
        "slice: offsets[1] = 1.0 must be an integer, not float",
    ),
    _error(
        "sizes_none",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[None, 1]),
        TypeError,
        "slice: sizes[0] = None must be an integer, not NoneType",
    ),
    _error(
        "sizes_bool",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[True, 1]),
        TypeError,
        "slice: sizes[0] = True must be an integer, not bool",
    ),
    _error(
        "strides_numpy_float",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[np.float64(1), 1]),
        TypeError,
        "slice: strides[0] = np.float64(1.0) must be an integer, not float64",
    ),
    _error(
        "strides_str",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=["1", 1]),
        TypeError,
        "slice: strides[0] = '1' must be an integer, not str",
    ),
    _error(
        "zero_dimensional",
        lambda xp, x: cd.slice(x[0, 0], offsets=[], sizes=[]),
        ValueError,
        "slice: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    _error(
        "lengths",
        lambda xp, x: cd.slice(x, offsets=[0], sizes=[1], strides=[1]),
        cd.DescriptorError,
        (
            "slice: len(offsets) = 1 must equal x.ndim = 2 (DirectML: len(Offsets) must equal "
            "DimensionCount)\nslice: len(sizes) = 1 must equal x.ndim = 2 (DirectML: len(Sizes) "
            "must equal DimensionCount)\nslice: len(strides) = 1 must equal x.ndim = 2 (DirectML: "
            "len(Strides) must equal DimensionCount)"
        ),
    ),
    _error(
        "offset_negative",
        lambda xp, x: cd.slice(x, offsets=[-1, 0], sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] = -1 must be an unsigned 32-bit value (0 to 4294967295); "
            "cd.strided_slice(x, key) takes indices from the end, as NumPy does (DirectML: "
            "Offsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "offset_huge",
        lambda xp, x: cd.slice(x, offsets=[2**40, 0], sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] = 1099511627776 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: Offsets[0] must be an unsigned 32-bit value (0 to 4294967295))\nslice: "
            "offsets[0] + strides[0] * (sizes[0] - 1) = 1099511627776 reads past x.shape[0] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: Offsets[0] + "
            "Strides[0] * (Sizes[0] - 1) reads past InputTensor.Sizes[0])"
        ),
    ),
    _error(
        "size_negative",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[-1, 1]),
        cd.DescriptorError,
        (
            "slice: sizes[0] = -1 must not be negative (DirectML: OutputTensor.Sizes[0] must be at "
            "least 1 (a zero size is invalid))"
        ),
    ),
    _error(
        "size_huge",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice: sizes[0] = 4294967296 exceeds UINT32 max 4294967295 (DirectML's limit; "
            "cudadml.numpy's functions and cd.strided_slice take larger arrays) (DirectML: "
            "OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    _error(
        "stride_negative",
        lambda xp, x: cd.slice(x, offsets=[3, 0], sizes=[2, 1], strides=[-1, 1]),
        cd.DescriptorError,
        (
            "slice: strides[0] = -1 must be an unsigned 32-bit value (0 to 4294967295); cd.slice1 "
            "(window_strides=) and cd.strided_slice take negative steps (DirectML: Strides[0] must "
            "be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "stride_huge",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice: strides[0] = 4294967296 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: Strides[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "reads_past",
        lambda xp, x: cd.slice(x, offsets=[3, 0], sizes=[2, 4], strides=[2, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[0] + strides[0] * (sizes[0] - 1) = 5 reads past x.shape[0] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: Offsets[0] + "
            "Strides[0] * (Sizes[0] - 1) reads past InputTensor.Sizes[0])"
        ),
    ),
    _error(
        "rank_past_8",
        lambda xp, x: cd.slice(x.reshape((1,) * 7 + (4, 4)), offsets=[0] * 9, sizes=[1] * 9),
        cd.DescriptorError,
        ("slice: x.ndim = 9 must be between 1 and 8 (DirectML: InputTensor.DimensionCount must be between 1 and 8)"),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_1 (supported: 4 to 5))"
        ),
    ),
    _error(
        "type_at_level",
        lambda xp, x: cd.slice(
            x.reshape(1, 1, 4, 4).astype(np.int8), offsets=[0] * 4, sizes=[1] * 4, feature_level="1_0"
        ),
        cd.DescriptorError,
        (
            "slice: x.dtype = int8 is not supported at feature level 1_0 (supported: float16, "
            "float32, int16, int32, uint16, uint32) (DirectML: InputTensor.DataType is not "
            "supported at feature level 1_0 (supported: FLOAT16, FLOAT32, INT16, INT32, UINT16, "
            "UINT32))"
        ),
    ),
    _error(
        "raw_bits_at_level",
        lambda xp, x: cd.slice(
            x.reshape(1, 1, 4, 4).astype(bool),
            offsets=[0] * 4,
            sizes=[1] * 4,
            feature_level="1_0",
            directml_types=False,
        ),
        cd.DescriptorError,
        (
            "slice: x.dtype = bool (moved as uint8) is not supported at feature level 1_0 "
            "(supported: float16, float32, int16, int32, uint16, uint32) (DirectML: "
            "InputTensor.DataType is not supported at feature level 1_0 (supported: FLOAT16, "
            "FLOAT32, INT16, INT32, UINT16, UINT32))"
        ),
    ),
    _error(
        "result_spans_too_much",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2**16, 2**16 + 1], strides=[0, 0]),
        cd.DescriptorError,
        (
            "slice: the result spans 4295032832 elements, more than the 2^32 - 1 a buffer tensor "
            "may span (DirectML's limit; cudadml.numpy's functions and cd.strided_slice take larger "
            "arrays) (DirectML: OutputTensor spans 4295032832 elements, more than the 2^32 - 1 a "
            "buffer tensor may span)"
        ),
        dask=False,  # a Dask array's chunks each need to fit one buffer tensor, not the whole array
    ),
    _error(
        "no_directml_type",
        lambda xp, x: cd.slice(x.astype(bool), offsets=[0, 0], sizes=[1, 1]),
        TypeError,
        (
            "slice: x.dtype = bool has no DirectML tensor data type (supported: float32, float16, "
            "uint32, uint16, uint8, int32, int16, int8, float64, uint64, int64); pass "
            "directml_types=False to move its elements as raw bits"
        ),
    ),
    _error(
        "feature_level_type",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level=2.5),
        TypeError,
        "slice: feature_level = 2.5 must be a FeatureLevel, int or str, not float",
    ),
    _error(
        "feature_level_unknown",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], feature_level="9_9"),
        ValueError,
        (
            "slice: feature_level: unknown feature level '9_9' (known: 1_0, 2_0, 2_1, 3_0, 3_1, "
            "4_0, 4_1, 5_0, 5_1, 5_2, 6_0, 6_1, 6_2, 6_3, 6_4)"
        ),
    ),
    _error(
        "directml_types_type",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[1, 1], directml_types=1),
        TypeError,
        "slice: directml_types = 1 must be a bool, not int",
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.zeros((2, 3), np.float32)),
        cd.BindingError,
        "slice: out has shape (2, 3); the result has shape (2, 2)",
        dask=False,
    ),
    _error(
        "out_dtype",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.zeros((2, 2), np.float64)),
        TypeError,
        "slice: out has dtype float64; the result has dtype float32",
        dask=False,
    ),
    _error(
        "out_overlaps_x",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=x[:2, 2:]),
        cd.BindingError,
        "slice: out overlaps x in memory",
        dask=False,
    ),
    _error(
        "out_overlaps_itself",
        lambda xp, x: cd.slice(x, offsets=[0, 0], sizes=[2, 2], out=xp.broadcast_to(xp.zeros(2, np.float32), (2, 2))),
        cd.BindingError,
        ("slice: out overlaps itself: shape (2, 2) with byte strides (0, 4) reaches one element from two indices"),
        dask=False,
    ),
    _error(
        "reads_past_the_end_of_ones",
        lambda xp, x: cd.slice(xp.ones((4, 4)), offsets=[0, 3], sizes=[1, 2], strides=[1, 1]),
        cd.DescriptorError,
        (
            "slice: offsets[1] + strides[1] * (sizes[1] - 1) = 4 reads past x.shape[1] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: Offsets[1] + "
            "Strides[1] * (Sizes[1] - 1) reads past InputTensor.Sizes[1])"
        ),
    ),
    _error(
        "empty_offset_negative",
        lambda xp, x: cd.slice(x, offsets=[-5, 0], sizes=[0, 4]),
        cd.DescriptorError,
        (
            "slice: offsets[0] = -5 must be an unsigned 32-bit value (0 to 4294967295); "
            "cd.strided_slice(x, key) takes indices from the end, as NumPy does (DirectML: "
            "Offsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "empty_rank_at_level",
        lambda xp, x: cd.slice(x[None], offsets=[0, 0, 0], sizes=[1, 0, 4], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice: x.ndim = 3 is not supported at feature level 2_1 (supported: 4 to 5) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_1 (supported: 4 to 5))"
        ),
    ),
    _error(
        "positional_one_axis",
        lambda xp, x: cd.slice(xp.arange(10), [0], [2], [2]),
        TypeError,
        (
            "cd.slice(x, [0], [2], [2]): pass offsets=, sizes=, strides= by name: SLICE's sizes are "
            "the result's shape, where cd.slice1's window_sizes are the window read and ONNX's and "
            "JAX's slices take ends; write cd.slice(x, offsets=[0], sizes=[2], strides=[2]), or "
            "cd.strided_slice(x, key) for x[key]"
        ),
    ),
]
_SLICE1_ERRORS = [
    _error(
        "positional",
        lambda xp, x: cd.slice1(x, [0, 0], [2, 3], [2, 2]),
        TypeError,
        (
            "cd.slice1(x, [0, 0], [2, 3], [2, 2]): pass window_offsets=, window_sizes=, "
            "window_strides= by name: SLICE1's window_sizes are the window read (the result takes 1 "
            "+ (window_sizes[i] - 1) // |window_strides[i]| elements), where cd.slice's sizes are "
            "the result's shape and ONNX's and JAX's slices take ends; write cd.slice1(x, "
            "window_offsets=[0, 0], window_sizes=[2, 3], window_strides=[2, 2]), or "
            "cd.strided_slice(x, key) for x[key]"
        ),
    ),
    _error(
        "required",
        lambda xp, x: cd.slice1(x, window_sizes=[1, 1]),
        TypeError,
        "slice1: window_offsets= is required (one integer per axis)",
    ),
    _error(
        "window_offsets_float",
        lambda xp, x: cd.slice1(x, window_offsets=[0.0, 0], window_sizes=[1, 1]),
        TypeError,
        "slice1: window_offsets[0] = 0.0 must be an integer, not float",
    ),
    _error(
        "output_sizes_nan",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[float("nan"), 1]),
        TypeError,
        "slice1: output_sizes[0] = nan must be an integer, not float",
    ),
    _error(
        "zero_dimensional",
        lambda xp, x: cd.slice1(x[0, 0], window_offsets=[], window_sizes=[]),
        ValueError,
        "slice1: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    _error(
        "lengths",
        lambda xp, x: cd.slice1(x, window_offsets=[0], window_sizes=[1, 1], window_strides=[1]),
        cd.DescriptorError,
        (
            "slice1: len(window_offsets) = 1 must equal x.ndim = 2 (DirectML: "
            "len(InputWindowOffsets) must equal DimensionCount)\nslice1: len(window_strides) = 1 "
            "must equal x.ndim = 2 (DirectML: len(InputWindowStrides) must equal DimensionCount)"
        ),
    ),
    _error(
        "output_sizes_length",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[1]),
        cd.DescriptorError,
        (
            "slice1: len(output_sizes) = 1 differs from x.ndim = 2 (DirectML: "
            "OutputTensor.DimensionCount differs from InputTensor.DimensionCount)"
        ),
    ),
    _error(
        "offset_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[-2, 0], window_sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice1: window_offsets[0] = -2 must be an unsigned 32-bit value (0 to 4294967295); "
            "cd.strided_slice(x, key) takes indices from the end, as NumPy does (DirectML: "
            "InputWindowOffsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "size_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[-1, 1]),
        cd.DescriptorError,
        (
            "slice1: window_sizes[0] = -1 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: InputWindowSizes[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
    _error(
        "size_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2**32, 1]),
        cd.DescriptorError,
        (
            "slice1: 1 + (window_sizes[0] - 1) // |window_strides[0]| = 4294967296 exceeds UINT32 "
            "max 4294967295 (DirectML's limit; cudadml.numpy's functions and cd.strided_slice take "
            "larger arrays) (DirectML: OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    _error(
        "stride_zero",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[0, 1]),
        cd.DescriptorError,
        (
            "slice1: window_strides[0] = 0 must be non-zero; cd.slice's strides take 0 (one "
            "element, repeated) (DirectML: InputWindowStrides[0] must be non-zero)"
        ),
    ),
    _error(
        "stride_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[2**31, 1]),
        cd.DescriptorError,
        (
            "slice1: window_strides[0] = 2147483648 must be a signed 32-bit value (-2147483648 to "
            "2147483647) (DirectML: InputWindowStrides[0] must be a signed 32-bit value "
            "(-2147483648 to 2147483647))"
        ),
    ),
    _error(
        "window_past_x",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 10], window_sizes=[4, 4]),
        cd.DescriptorError,
        (
            "slice1: window_offsets[1] + window_sizes[1] = 14 exceeds x.shape[1] = 4; "
            "cd.strided_slice(x, key) clips to x, as NumPy's slices do (DirectML: "
            "InputWindowOffsets[1] + InputWindowSizes[1] exceeds InputTensor.Sizes[1])"
        ),
    ),
    _error(
        "output_past_reach",
        lambda xp, x: cd.slice1(
            x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[2, 1], output_sizes=[3, 4]
        ),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = 3 exceeds 1 + (window_sizes[0] - 1) // |window_strides[0]| = "
            "2, the most the window reaches (DirectML: OutputTensor.Sizes[0] exceeds "
            "MaxCopiedElements[0] = 1 + (InputWindowSizes[0] - 1) / |InputWindowStrides[0]|)"
        ),
    ),
    _error(
        "output_sizes_negative",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], output_sizes=[-1, 4]),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = -1 must not be negative (DirectML: OutputTensor.Sizes[0] "
            "must be at least 1 (a zero size is invalid))"
        ),
    ),
    _error(
        "output_sizes_huge",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], output_sizes=[2**32, 4]),
        cd.DescriptorError,
        (
            "slice1: output_sizes[0] = 4294967296 exceeds UINT32 max 4294967295 (DirectML's limit; "
            "cudadml.numpy's functions and cd.strided_slice take larger arrays) (DirectML: "
            "OutputTensor.Sizes[0] exceeds UINT32 max 4294967295)"
        ),
    ),
    _error(
        "level_too_old",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], feature_level="2_0"),
        cd.DescriptorError,
        (
            "slice1: feature_level = 2_0 is older than 2_1, the first level with SLICE1 (DirectML: "
            "the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice1: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    _error(
        "out_overlaps_x",
        lambda xp, x: cd.slice1(x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[-1, 1], out=x),
        cd.BindingError,
        "slice1: out overlaps x in memory",
        dask=False,
    ),
    _error(
        "stride_zero_in_ones",
        lambda xp, x: cd.slice1(xp.ones((4, 4)), window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[1, 0]),
        cd.DescriptorError,
        (
            "slice1: window_strides[1] = 0 must be non-zero; cd.slice's strides take 0 (one "
            "element, repeated) (DirectML: InputWindowStrides[1] must be non-zero)"
        ),
    ),
    _error(
        "rank_and_type_at_level",
        lambda xp, x: cd.slice1(xp.ones((2, 2, 2)), window_offsets=[0] * 3, window_sizes=[2] * 3, feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice1: x.ndim = 3 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))\nslice1: x.dtype = float64 is not supported at feature level 2_1 "
            "(supported: float16, float32, int16, int32, int8, uint16, uint32, uint8) (DirectML: "
            "InputTensor.DataType is not supported at feature level 2_1 (supported: FLOAT16, "
            "FLOAT32, INT16, INT32, INT8, UINT16, UINT32, UINT8))"
        ),
    ),
    _error(
        "zero_dimensional_ones",
        lambda xp, x: cd.slice1(xp.ones(()), window_offsets=[], window_sizes=[]),
        ValueError,
        "slice1: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    _error(
        "empty_stride_zero",
        lambda xp, x: cd.slice1(
            x, window_offsets=[0, 0], window_sizes=[4, 4], window_strides=[0, 1], output_sizes=[0, 4]
        ),
        cd.DescriptorError,
        (
            "slice1: window_strides[0] = 0 must be non-zero; cd.slice's strides take 0 (one "
            "element, repeated) (DirectML: InputWindowStrides[0] must be non-zero)"
        ),
    ),
    _error(
        "positional_one_axis",
        lambda xp, x: cd.slice1(xp.arange(10), [0], [2], [2]),
        TypeError,
        (
            "cd.slice1(x, [0], [2], [2]): pass window_offsets=, window_sizes=, window_strides= by "
            "name: SLICE1's window_sizes are the window read (the result takes 1 + (window_sizes[i] "
            "- 1) // |window_strides[i]| elements), where cd.slice's sizes are the result's shape "
            "and ONNX's and JAX's slices take ends; write cd.slice1(x, window_offsets=[0], "
            "window_sizes=[2], window_strides=[2]), or cd.strided_slice(x, key) for x[key]"
        ),
    ),
]
_SLICE_GRAD_ERRORS = [
    _error(
        "positional",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), [0, 0], [4, 4], [2, 2]),
        TypeError,
        (
            "cd.slice_grad(dy, input_shape, [0, 0], [4, 4], [2, 2]): pass window_offsets=, "
            "window_sizes=, window_strides= by name: they are SLICE1's window, as cd.slice1 takes "
            "them; write cd.slice_grad(dy, input_shape, window_offsets=[0, 0], window_sizes=[4, 4], "
            "window_strides=[2, 2])"
        ),
    ),
    _error(
        "required",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0]),
        TypeError,
        "slice_grad: window_sizes= is required (one integer per axis)",
    ),
    _error(
        "input_shape_float",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4.0), window_offsets=[0, 0], window_sizes=[2, 2]),
        TypeError,
        "slice_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    _error(
        "input_shape_not_a_sequence",
        lambda xp, x: cd.slice_grad(x[:2, :2], 4, window_offsets=[0, 0], window_sizes=[2, 2]),
        TypeError,
        "slice_grad: input_shape = 4 must be a sequence of integers, not int",
    ),
    _error(
        "input_shape_negative",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, -4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: input_shape[1] = -4 must not be negative (DirectML: "
            "OutputGradientTensor.Sizes[1] must be at least 1 (a zero size is invalid))"
        ),
    ),
    _error(
        "input_shape_huge",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 2**32), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: input_shape[1] = 4294967296 exceeds UINT32 max 4294967295 (DirectML's "
            "limit; cudadml.numpy's functions and cd.strided_slice take larger arrays) (DirectML: "
            "OutputGradientTensor.Sizes[1] exceeds UINT32 max 4294967295)"
        ),
    ),
    _error(
        "input_shape_length",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4, 4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: len(input_shape) = 3 differs from dy.ndim = 2 (DirectML: "
            "OutputGradientTensor.DimensionCount differs from InputGradientTensor.DimensionCount)"
        ),
    ),
    _error(
        "dy_zero_dimensional",
        lambda xp, x: cd.slice_grad(x[0, 0], (), window_offsets=[], window_sizes=[]),
        ValueError,
        "slice_grad: dy is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    _error(
        "dy_past_reach",
        lambda xp, x: cd.slice_grad(x[:3, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: dy.shape[0] = 3 exceeds 1 + (window_sizes[0] - 1) // |window_strides[0]| = "
            "2, the most the window reaches (DirectML: InputGradientTensor.Sizes[0] exceeds "
            "MaxCopiedElements[0] = 1 + (InputWindowSizes[0] - 1) / |InputWindowStrides[0]|)"
        ),
    ),
    _error(
        "window_past_input_shape",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[3, 0], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice_grad: window_offsets[0] + window_sizes[0] = 5 exceeds input_shape[0] = 4 "
            "(DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "OutputGradientTensor.Sizes[0])"
        ),
    ),
    _error(
        "stride_zero",
        lambda xp, x: cd.slice_grad(
            x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], window_strides=[1, 0]
        ),
        cd.DescriptorError,
        ("slice_grad: window_strides[1] = 0 must be non-zero (DirectML: InputWindowStrides[1] must be non-zero)"),
    ),
    _error(
        "level_too_old",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice_grad: feature_level = 2_1 is older than 3_0, the first level with SLICE_GRAD "
            "(DirectML: the operator needs feature level 3_0 or newer; got 2_1)"
        ),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], feature_level="3_0"),
        cd.DescriptorError,
        (
            "slice_grad: dy.ndim = 2 is not supported at feature level 3_0 (supported: 4 to 5) "
            "(DirectML: InputGradientTensor.DimensionCount is not supported at feature level 3_0 "
            "(supported: 4 to 5))"
        ),
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.slice_grad(
            x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], out=xp.zeros((4, 5), np.float32)
        ),
        cd.BindingError,
        "slice_grad: out has shape (4, 5); the result has shape (4, 4)",
        dask=False,
    ),
    _error(
        "out_overlaps_dy",
        lambda xp, x: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, 0], window_sizes=[2, 2], out=x),
        cd.BindingError,
        "slice_grad: out overlaps dy in memory",
        dask=False,
    ),
    _error(
        "empty_offset_negative",
        lambda xp, x: cd.slice_grad(x[:0], (4, 4), window_offsets=[-1, 0], window_sizes=[0, 4]),
        cd.DescriptorError,
        (
            "slice_grad: window_offsets[0] = -1 must be an unsigned 32-bit value (0 to 4294967295) "
            "(DirectML: InputWindowOffsets[0] must be an unsigned 32-bit value (0 to 4294967295))"
        ),
    ),
]
_SPLIT_ERRORS = [
    _error(
        "positional_sizes",
        lambda xp, x: cd.split(xp.arange(10), [5, 5]),
        TypeError,
        (
            "cd.split(x, [5, 5]): DirectML's split_sizes are part sizes, where np.split takes "
            "indices and torch.split sizes or a part size; pass split_sizes=[5, 5] (parts of 5 and "
            "5), or use cudadml.numpy.split for NumPy's meaning"
        ),
    ),
    _error(
        "positional_count",
        lambda xp, x: cd.split(xp.arange(10), 5),
        TypeError,
        (
            "cd.split(x, 5): an integer by position reads as a number of parts to np.split but as a "
            "part size to torch.split; pass parts=5 (5 equal parts), or split_sizes=5 (parts of "
            "5, the last one smaller, as torch.split makes)"
        ),
    ),
    _error(
        "positional_count_and_axis",
        lambda xp, x: cd.split(x, 2, 1),
        TypeError,
        (
            "cd.split(x, 2, 1): an integer by position reads as a number of parts to np.split but "
            "as a part size to torch.split; pass parts=2, axis=1 (2 equal parts), or "
            "split_sizes=2, axis=1 (parts of 2, the last one smaller, as torch.split makes)"
        ),
    ),
    _error(
        "neither",
        lambda xp, x: cd.split(x),
        TypeError,
        ("split: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got neither"),
    ),
    _error(
        "both",
        lambda xp, x: cd.split(x, split_sizes=[2, 2], parts=2),
        TypeError,
        ("split: pass split_sizes= (the size of each part) or parts= (a number of equal parts); got both"),
    ),
    _error(
        "parts_a_list",
        lambda xp, x: cd.split(x, parts=[2, 2]),
        TypeError,
        (
            "split: parts = [2, 2] must be an integer (a number of equal parts), not list; the size "
            "of each part goes in split_sizes="
        ),
    ),
    _error(
        "parts_nan",
        lambda xp, x: cd.split(x, parts=float("nan")),
        TypeError,
        "split: parts = nan must be an integer (a number of equal parts), not float",
    ),
    _error(
        "parts_bool",
        lambda xp, x: cd.split(x, parts=True),
        TypeError,
        "split: parts = True must be an integer (a number of equal parts), not bool",
    ),
    _error("parts_zero", lambda xp, x: cd.split(x, parts=0), ValueError, "split: parts = 0 must be at least 1"),
    _error(
        "parts_do_not_divide",
        lambda xp, x: cd.split(x, parts=3),
        ValueError,
        (
            "split: parts = 3: x.shape[0] = 4 does not divide into 3 equal parts; pass split_sizes= "
            "for parts of other sizes (cudadml.numpy.array_split(x, 3) makes parts that differ by "
            "at most 1, as NumPy's does)"
        ),
    ),
    _error(
        "part_size_zero",
        lambda xp, x: cd.split(x, split_sizes=0, axis=1),
        ValueError,
        (
            "split: split_sizes = 0, a part size, can only be 0 where x.shape[1] is 0, not 4 (as in "
            "torch.split); pass parts= for a number of equal parts"
        ),
    ),
    _error(
        "part_size_negative",
        lambda xp, x: cd.split(x, split_sizes=-2),
        ValueError,
        "split: split_sizes = -2, a part size, must not be negative",
    ),
    _error(
        "split_sizes_float",
        lambda xp, x: cd.split(x, split_sizes=[2, 2.0]),
        TypeError,
        "split: split_sizes[1] = 2.0 must be an integer, not float",
    ),
    _error(
        "split_sizes_not_a_sequence",
        lambda xp, x: cd.split(x, split_sizes="22"),
        TypeError,
        "split: split_sizes = '22' must be a sequence of integers, not str",
    ),
    _error(
        "split_sizes_negative",
        lambda xp, x: cd.split(x, split_sizes=[6, -2]),
        ValueError,
        "split: split_sizes[1] = -2 must not be negative",
    ),
    _error(
        "split_sizes_sum",
        lambda xp, x: cd.split(x, split_sizes=[2, 3], axis=-1),
        cd.DescriptorError,
        (
            "split: split_sizes sum to 5, not x.shape[1] = 4 (DirectML: OutputTensors' Sizes[1] "
            "must sum to InputTensor.Sizes[1])"
        ),
    ),
    _error(
        "no_parts",
        lambda xp, x: cd.split(x[:0], split_sizes=[]),
        cd.DescriptorError,
        ("split: len(split_sizes) = 0 must be greater than 0 (DirectML: OutputCount must be greater than 0)"),
    ),
    _error(
        "axis_float",
        lambda xp, x: cd.split(x, parts=2, axis=1.0),
        TypeError,
        "split: axis = 1.0 must be an integer, not float",
    ),
    _error(
        "axis_out_of_range",
        lambda xp, x: cd.split(x, parts=2, axis=2),
        np.exceptions.AxisError,
        "split: axis 2 is out of bounds for array of dimension 2",
    ),
    _error(
        "zero_dimensional",
        lambda xp, x: cd.split(x[0, 0], parts=1),
        ValueError,
        "split: x is a 0-dimensional array (shape ()), which has nothing to split",
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.split(x, parts=2, feature_level="2_0"),
        cd.DescriptorError,
        (
            "split: x.ndim = 2 is not supported at feature level 2_0 (supported: 4) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_0 (supported: 4))"
        ),
    ),
    _error(
        "out_count",
        lambda xp, x: cd.split(x, parts=2, out=[xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out has 1 array; the call makes 2 parts",
        dask=False,
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.split(x, split_sizes=[1, 3], out=[xp.zeros((1, 4), np.float32), xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out[1] has shape (2, 4); part 1 has shape (3, 4)",
        dask=False,
    ),
    _error(
        "out_overlaps_x",
        lambda xp, x: cd.split(x, parts=2, out=[x[2:], xp.zeros((2, 4), np.float32)]),
        cd.BindingError,
        "split: out[0] overlaps x in memory",
        dask=False,
    ),
    _error(
        "outs_overlap",
        lambda xp, x: cd.split(x.copy(), parts=2, out=[x[:2], x[:2]]),
        cd.BindingError,
        "split: out[1] overlaps out[0] in memory",
        dask=False,
    ),
    _error(
        "parts_do_not_divide_ones",
        lambda xp, x: cd.split(xp.ones((5, 2)), parts=2),
        ValueError,
        (
            "split: parts = 2: x.shape[0] = 5 does not divide into 2 equal parts; pass split_sizes= "
            "for parts of other sizes (cudadml.numpy.array_split(x, 2) makes parts that differ by "
            "at most 1, as NumPy's does)"
        ),
    ),
    _error(
        "split_sizes_sum_in_ones",
        lambda xp, x: cd.split(xp.ones((5, 2)), split_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "split: split_sizes sum to 4, not x.shape[0] = 5 (DirectML: OutputTensors' Sizes[0] "
            "must sum to InputTensor.Sizes[0])"
        ),
    ),
    _error(
        "axis_out_of_range_in_ones",
        lambda xp, x: cd.split(xp.ones((5, 2)), split_sizes=[2, 3], axis=2),
        np.exceptions.AxisError,
        "split: axis 2 is out of bounds for array of dimension 2",
    ),
    _error(
        "empty_rank_at_level",
        lambda xp, x: cd.split(x[:0], split_sizes=[0, 0], axis=0, feature_level="2_1"),
        cd.DescriptorError,
        (
            "split: x.ndim = 2 is not supported at feature level 2_1 (supported: 4) (DirectML: "
            "InputTensor.DimensionCount is not supported at feature level 2_1 (supported: 4))"
        ),
    ),
    _error(
        "empty_sum",
        lambda xp, x: cd.split(x[:0], split_sizes=[1], axis=0),
        cd.DescriptorError,
        (
            "split: split_sizes sum to 1, not x.shape[0] = 0 (DirectML: OutputTensors' Sizes[0] "
            "must sum to InputTensor.Sizes[0])"
        ),
    ),
    _error(
        "positional_count_one_axis",
        lambda xp, x: cd.split(xp.arange(10), 2),
        TypeError,
        (
            "cd.split(x, 2): an integer by position reads as a number of parts to np.split but as a "
            "part size to torch.split; pass parts=2 (2 equal parts), or split_sizes=2 (parts of "
            "2, the last one smaller, as torch.split makes)"
        ),
    ),
    _error(
        "positional_sizes_and_axis",
        lambda xp, x: cd.split(xp.arange(10), [1, 9], 0),
        TypeError,
        (
            "cd.split(x, [1, 9], 0): DirectML's split_sizes are part sizes, where np.split takes "
            "indices and torch.split sizes or a part size; pass split_sizes=[1, 9], axis=0 (parts "
            "of 1 and 9), or use cudadml.numpy.split for NumPy's meaning"
        ),
    ),
]
_JOIN_ERRORS = [
    _error("xs_empty", lambda xp, x: cd.join([]), ValueError, "join: xs is empty; it needs at least one array to join"),
    _error("xs_not_a_sequence", lambda xp, x: cd.join(3), TypeError, "join: xs must be a sequence of arrays, not int"),
    _error(
        "zero_dimensional",
        lambda xp, x: cd.join([x[0, 0]]),
        ValueError,
        "join: xs[0] is a 0-dimensional array (shape ()), which has nothing to join",
    ),
    _error("ranks", lambda xp, x: cd.join([x, x[0]]), ValueError, "join: xs[1].ndim = 1 differs from xs[0].ndim = 2"),
    _error(
        "shapes",
        lambda xp, x: cd.join([x, x[:, :3]]),
        cd.DescriptorError,
        (
            "join: xs[1].shape[1] = 3 differs from xs[0].shape[1] = 4 (only axis 0 may differ) "
            "(DirectML: InputTensors[1].Sizes[1] differs from OutputTensor.Sizes[1] (only "
            "Sizes[Axis = 0] may differ))"
        ),
    ),
    _error(
        "shapes_when_empty",
        lambda xp, x: cd.join([x[:0], x[:0, :3]]),
        ValueError,
        "join: xs[1].shape[1] = 3 differs from xs[0].shape[1] = 4 (only axis 0 may differ)",
    ),
    _error(
        "dtypes",
        lambda xp, x: cd.join([x, x.astype(np.float64)]),
        TypeError,
        (
            "join: xs[1] has dtype float64, xs[0] has float32; join does not promote "
            "(cudadml.numpy.concatenate promotes as NumPy does)"
        ),
    ),
    _error(
        "dtypes_int64_float32",
        lambda xp, x: cd.join([x.astype(np.int64), x]),
        TypeError,
        (
            "join: xs[1] has dtype float32, xs[0] has int64; join does not promote "
            "(cudadml.numpy.concatenate promotes as NumPy does)"
        ),
    ),
    _error(
        "axis_out_of_range",
        lambda xp, x: cd.join([x, x], axis=-3),
        np.exceptions.AxisError,
        "join: axis -3 is out of bounds for array of dimension 2",
    ),
    _error(
        "axis_none",
        lambda xp, x: cd.join([x, x], axis=None),
        TypeError,
        "join: axis = None must be an integer, not NoneType",
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.join([x[:0], x], feature_level="2_0"),
        cd.DescriptorError,
        (
            "join: xs[1].ndim = 2 is not supported at feature level 2_0 (supported: 4) (DirectML: "
            "InputTensors[0].DimensionCount is not supported at feature level 2_0 (supported: 4))"
        ),
    ),
    _error(
        "out_overlaps_an_input",
        lambda xp, x: cd.join([x[:, :1], x[:, 1:2]], axis=1, out=x[:, 1:3]),
        cd.BindingError,
        "join: out overlaps xs[1] in memory",
        dask=False,
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.join([x, x], out=xp.zeros((4, 4), np.float32)),
        cd.BindingError,
        "join: out has shape (4, 4); the result has shape (8, 4)",
        dask=False,
    ),
    _error(
        "shapes_of_ones",
        lambda xp, x: cd.join([xp.ones((2, 2)), xp.ones((2, 3))]),
        cd.DescriptorError,
        (
            "join: xs[1].shape[1] = 3 differs from xs[0].shape[1] = 2 (only axis 0 may differ) "
            "(DirectML: InputTensors[1].Sizes[1] differs from OutputTensor.Sizes[1] (only "
            "Sizes[Axis = 0] may differ))"
        ),
    ),
    _error(
        "dtypes_of_ones",
        lambda xp, x: cd.join([xp.ones(2, np.float32), xp.ones(2)]),
        TypeError,
        (
            "join: xs[1] has dtype float64, xs[0] has float32; join does not promote "
            "(cudadml.numpy.concatenate promotes as NumPy does)"
        ),
    ),
    _error(
        "shapes_off_the_axis",
        lambda xp, x: cd.join([xp.zeros((2, 3), np.float32), xp.zeros((2, 4), np.float32)], 0),
        cd.DescriptorError,
        (
            "join: xs[1].shape[1] = 4 differs from xs[0].shape[1] = 3 (only axis 0 may differ) "
            "(DirectML: InputTensors[1].Sizes[1] differs from OutputTensor.Sizes[1] (only "
            "Sizes[Axis = 0] may differ))"
        ),
    ),
    _error(
        "dtypes_int8",
        lambda xp, x: cd.join([xp.zeros((2, 3), np.float32), xp.zeros((2, 3), np.int8)], 0),
        TypeError,
        (
            "join: xs[1] has dtype int8, xs[0] has float32; join does not promote "
            "(cudadml.numpy.concatenate promotes as NumPy does)"
        ),
    ),
    _error(
        "axis_past_the_rank",
        lambda xp, x: cd.join([xp.zeros((2, 3), np.float32), xp.zeros((2, 4), np.float32)], 2),
        np.exceptions.AxisError,
        "join: axis 2 is out of bounds for array of dimension 2",
    ),
    _error(
        "axis_past_the_first_rank",
        lambda xp, x: cd.join([xp.zeros(3, np.float32), xp.zeros((2, 4), np.float32)], 1),
        np.exceptions.AxisError,
        "join: axis 1 is out of bounds for array of dimension 1",
    ),
    _error(
        "empty_rank_at_level",
        lambda xp, x: cd.join([x[:0], x[:0]], feature_level="2_1"),
        cd.DescriptorError,
        (
            "join: xs[0].ndim = 2 is not supported at feature level 2_1 (supported: 4) (DirectML: "
            "InputTensors[0].DimensionCount is not supported at feature level 2_1 (supported: 4))"
        ),
    ),
]
_STRIDED_SLICE_ERRORS = [
    _error(
        "too_many_indices",
        lambda xp, x: cd.strided_slice(x, (0, 0, 0)),
        IndexError,
        ("strided_slice: key (0, 0, 0): too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ),
    _error(
        "out_of_bounds",
        lambda xp, x: cd.strided_slice(x, np.s_[:, 7]),
        IndexError,
        ("strided_slice: key (slice(None, None, None), 7): index 7 is out of bounds for axis 1 with size 4"),
    ),
    _error(
        "two_ellipses",
        lambda xp, x: cd.strided_slice(x, (..., ...)),
        IndexError,
        ("strided_slice: key (Ellipsis, Ellipsis): an index can only have a single ellipsis ('...')"),
    ),
    _error(
        "zero_step",
        lambda xp, x: cd.strided_slice(x, np.s_[::0]),
        ValueError,
        "strided_slice: key slice(None, None, 0): slice step cannot be zero",
    ),
    _error(
        "not_basic",
        lambda xp, x: cd.strided_slice(x, ([0, 1],)),
        TypeError,
        ("strided_slice: key ([0, 1],): only basic indices (int, slice, ..., None) are supported, not list"),
    ),
    _error(
        "float_index",
        lambda xp, x: cd.strided_slice(x, 1.0),
        TypeError,
        ("strided_slice: key 1.0: only basic indices (int, slice, ..., None) are supported, not float"),
    ),
    _error(
        "float_step",
        lambda xp, x: cd.strided_slice(x, np.s_[::2.0]),
        TypeError,
        (
            "strided_slice: key slice(None, None, 2.0): slice indices must be integers or None or "
            "have an __index__ method, not float"
        ),
    ),
    _error(
        "zero_dimensional",
        lambda xp, x: cd.strided_slice(x[0, 0], ...),
        ValueError,
        "strided_slice: x is a 0-dimensional array (shape ()), which has nothing to slice",
    ),
    _error(
        "rank_past_8",
        lambda xp, x: cd.strided_slice(x.reshape((1,) * 7 + (4, 4)), ...),
        cd.DescriptorError,
        (
            "strided_slice: x.ndim = 9 must be between 1 and 8 (DirectML: "
            "InputTensor.DimensionCount must be between 1 and 8)"
        ),
    ),
    _error(
        "level_too_old",
        lambda xp, x: cd.strided_slice(x, ..., feature_level="2_0"),
        cd.DescriptorError,
        (
            "strided_slice: feature_level = 2_0 is older than 2_1, the first level with SLICE1 "
            "(DirectML: the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.strided_slice(x, ..., feature_level="2_1"),
        cd.DescriptorError,
        (
            "strided_slice: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    _error(
        "out_overlaps_x",
        lambda xp, x: cd.strided_slice(x, np.s_[::-1], out=x),
        cd.BindingError,
        "strided_slice: out overlaps x in memory",
        dask=False,
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.strided_slice(x, np.s_[::2], out=xp.zeros((4, 4), np.float32)),
        cd.BindingError,
        "strided_slice: out has shape (4, 4); the result has shape (2, 4)",
        dask=False,
    ),
    _error(
        "too_many_indices_of_ones",
        lambda xp, x: cd.strided_slice(xp.ones((2, 3)), (0, 0, 0)),
        IndexError,
        ("strided_slice: key (0, 0, 0): too many indices for array: array is 2-dimensional, but 3 were indexed"),
    ),
    _error(
        "out_of_bounds_of_ones",
        lambda xp, x: cd.strided_slice(xp.ones((2, 3)), (5,)),
        IndexError,
        "strided_slice: key (5,): index 5 is out of bounds for axis 0 with size 2",
    ),
    _error(
        "not_basic_of_ones",
        lambda xp, x: cd.strided_slice(xp.ones((2, 3)), ([0, 1],)),
        TypeError,
        "strided_slice: key ([0, 1],): only basic indices (int, slice, ..., None) are supported, not list",
    ),
    _error(
        "out_shape_of_ones",
        lambda xp, x: cd.strided_slice(xp.ones(9), slice(None), out=xp.ones(8)),
        cd.BindingError,
        "strided_slice: out has shape (8,); the result has shape (9,)",
        dask=False,
    ),
    _error(
        "out_dtype",
        lambda xp, x: cd.strided_slice(xp.ones(9), slice(None), out=xp.ones(9, np.float32)),
        TypeError,
        "strided_slice: out has dtype float32; the result has dtype float64",
        dask=False,
    ),
    _error(
        "out_overlaps_itself",
        lambda xp, x: cd.strided_slice(xp.ones((3, 3)), slice(None), out=xp.broadcast_to(xp.ones(3), (3, 3))),
        cd.BindingError,
        (
            "strided_slice: out overlaps itself: shape (3, 3) with byte strides (0, 8) reaches one "
            "element from two indices"
        ),
        dask=False,
    ),
    _error(
        "empty_rank_past_8",
        lambda xp, x: cd.strided_slice(x.reshape((1,) * 7 + (4, 4))[..., :0], ...),
        cd.DescriptorError,
        (
            "strided_slice: x.ndim = 9 must be between 1 and 8 (DirectML: "
            "InputTensor.DimensionCount must be between 1 and 8)"
        ),
    ),
]
_STRIDED_SLICE_GRAD_ERRORS = [
    _error(
        "input_shape_float",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4.0), ...),
        TypeError,
        "strided_slice_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    _error(
        "input_shape_negative",
        lambda xp, x: cd.strided_slice_grad(x, (4, -4), ...),
        ValueError,
        "strided_slice_grad: input_shape[1] = -4 must not be negative",
    ),
    _error(
        "input_shape_empty",
        lambda xp, x: cd.strided_slice_grad(x, (), ...),
        ValueError,
        "strided_slice_grad: input_shape = () is 0-dimensional, which has nothing to slice",
    ),
    _error(
        "key_out_of_bounds",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), np.s_[9]),
        IndexError,
        "strided_slice_grad: key 9: index 9 is out of bounds for axis 0 with size 4",
    ),
    _error(
        "dy_shape",
        lambda xp, x: cd.strided_slice_grad(x, (9,), np.s_[::2]),
        ValueError,
        "strided_slice_grad: dy has shape (4, 4); x[key] has shape (5,) (x of input_shape (9,))",
    ),
    _error(
        "level_too_old",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), ..., feature_level="2_1"),
        cd.DescriptorError,
        (
            "strided_slice_grad: feature_level = 2_1 is older than 3_0, the first level with "
            "SLICE_GRAD (DirectML: the operator needs feature level 3_0 or newer; got 2_1)"
        ),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.strided_slice_grad(x, (4, 4), ..., feature_level="3_0"),
        cd.DescriptorError,
        (
            "strided_slice_grad: len(input_shape) = 2 is not supported at feature level 3_0 "
            "(supported: 4 to 5) (DirectML: InputGradientTensor.DimensionCount is not supported at "
            "feature level 3_0 (supported: 4 to 5))"
        ),
    ),
    _error(
        "no_directml_type",
        lambda xp, x: cd.strided_slice_grad(x[0, :2].astype(bool), (4,), np.s_[::2]),
        TypeError,
        (
            "strided_slice_grad: dy.dtype = bool has no DirectML tensor data type (supported: "
            "float32, float16, uint32, uint16, uint8, int32, int16, int8, float64, uint64, int64); "
            "pass directml_types=False to move its elements as raw bits"
        ),
    ),
    _error(
        "out_overlaps_dy",
        lambda xp, x: cd.strided_slice_grad(x[:2], (4, 4), np.s_[::2], out=x),
        cd.BindingError,
        "strided_slice_grad: out overlaps dy in memory",
        dask=False,
    ),
    _error(
        "dy_shape_of_ones",
        lambda xp, x: cd.strided_slice_grad(xp.ones(3), (9,), slice(None, None, 2)),
        ValueError,
        "strided_slice_grad: dy has shape (3,); x[key] has shape (5,) (x of input_shape (9,))",
    ),
]
_SLICE1_BATCH_ERRORS = [
    _error(
        "positional",
        lambda xp, x: cd.slice1_batch(x, [[0, 0], [1, 1]], [2, 2]),
        TypeError,
        (
            "cd.slice1_batch(x, [[0, 0], [1, 1]], [2, 2]): pass window_offsets=, window_sizes=, "
            "window_strides= by name: they are SLICE1's windows, as cd.slice1 takes them; write "
            "cd.slice1_batch(x, window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2])"
        ),
    ),
    _error(
        "offsets_required",
        lambda xp, x: cd.slice1_batch(x, window_sizes=[2, 2]),
        TypeError,
        ("slice1_batch: window_offsets= is required (an (N, d) array of integers: a row per window)"),
    ),
    _error(
        "sizes_required",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]]),
        TypeError,
        ("slice1_batch: window_sizes= is required (one row of integers for every window, or one per window)"),
    ),
    _error(
        "offsets_shape",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[0, 0], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch: window_offsets has shape (2,); it must be (N, 2): 2 per window",
    ),
    _error(
        "ragged_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [1]], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch: window_offsets must be an array of rows of 2 integers",
    ),
    _error(
        "sizes_shape",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2, 2]),
        ValueError,
        ("slice1_batch: window_sizes has shape (3,); it must be (2,) for all windows or (1, 2): 2 integers per window"),
    ),
    _error(
        "float_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0.5]], window_sizes=[2, 2]),
        TypeError,
        ("slice1_batch: window_offsets must hold integers, not float64 (window_offsets[0][0] = np.float64(0.0))"),
    ),
    _error(
        "none_offsets",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, None]], window_sizes=[2, 2]),
        TypeError,
        "slice1_batch: window_offsets[0][1] = None must be an integer, not NoneType",
    ),
    _error(
        "bool_sizes",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, True]),
        TypeError,
        "slice1_batch: window_sizes must hold integers, not bool (window_sizes[1] = True)",
    ),
    _error(
        "per_sample_type",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0]] * 4, window_sizes=[1], per_sample=1),
        TypeError,
        "slice1_batch: per_sample = 1 must be a bool, not int",
    ),
    _error(
        "per_sample_count",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0]] * 3, window_sizes=[1], per_sample=True),
        ValueError,
        "slice1_batch: 3 windows for x of 4 samples (per_sample=True takes one per sample)",
    ),
    _error(
        "one_dimension_per_sample",
        lambda xp, x: cd.slice1_batch(x[0], window_offsets=[[]] * 4, window_sizes=[], per_sample=True),
        ValueError,
        ("slice1_batch: x has 1 dimension(s); windows need at least one besides the sample axis (per_sample=True)"),
    ),
    _error(
        "window_past_x",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [3, 3]], window_sizes=[2, 2]),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds x.shape[0] "
            "= 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch: window 1: window_offsets[1][1] + window_sizes[1] "
            "= 5 exceeds x.shape[1] = 4 (DirectML: InputWindowOffsets[1] + InputWindowSizes[1] "
            "exceeds InputTensor.Sizes[1])"
        ),
    ),
    _error(
        "window_past_x_per_sample",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0], [3], [0], [0]], window_sizes=[2], per_sample=True),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds x.shape[1] "
            "= 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])"
        ),
    ),
    _error(
        "own_size_zero",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0], [1, 1]], window_sizes=[[2, 2], [0, 1]]),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_sizes[1][0] = 0 must be at least 1 (the window may not "
            "be empty) (DirectML: InputWindowSizes[0] must be at least 1 (the window may not be "
            "empty))"
        ),
    ),
    _error(
        "stride_zero",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2], window_strides=[[1, 1], [1, 0]]
        ),
        cd.DescriptorError,
        (
            "slice1_batch: window 1: window_strides[1][1] = 0 must be non-zero (DirectML: "
            "InputWindowStrides[1] must be non-zero)"
        ),
    ),
    _error(
        "many_broken",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[-1, 0], [9, 0], [0, 9], [5, 5], [6, 6]], window_sizes=[1, 1]),
        cd.DescriptorError,
        (
            "slice1_batch: window 0: window_offsets[0][0] = -1 must be an unsigned 32-bit value (0 "
            "to 4294967295) (DirectML: InputWindowOffsets[0] must be an unsigned 32-bit value (0 to "
            "4294967295))\nslice1_batch: window 1: window_offsets[1][0] + window_sizes[0] = 10 "
            "exceeds x.shape[0] = 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch: window 2: window_offsets[2][1] + window_sizes[1] "
            "= 10 exceeds x.shape[1] = 4 (DirectML: InputWindowOffsets[1] + InputWindowSizes[1] "
            "exceeds InputTensor.Sizes[1])\nslice1_batch: and 2 more windows break a rule"
        ),
    ),
    _error(
        "counts_differ",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0], [0, 0]], window_sizes=[3, 2], window_strides=[[1, 1], [2, 1]]
        ),
        ValueError,
        (
            "slice1_batch: window 1 takes (2, 2) elements and window 0 (3, 2): windows of one size "
            "must take as many each (per-window window_sizes give a list of arrays)"
        ),
    ),
    _error(
        "empty_batch_size_zero",
        lambda xp, x: cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[0, 2]),
        cd.DescriptorError,
        (
            "slice1_batch: window_sizes[0] = 0 must be at least 1 (the window may not be empty) "
            "(DirectML: InputWindowSizes[0] must be at least 1 (the window may not be empty))"
        ),
    ),
    _error(
        "empty_batch_size_huge",
        lambda xp, x: cd.slice1_batch(x, window_offsets=np.zeros((0, 2), int), window_sizes=[1, 2**40]),
        cd.DescriptorError,
        (
            "slice1_batch: window_sizes[1] = 1099511627776 must be an unsigned 32-bit value (0 to "
            "4294967295) (DirectML: InputWindowSizes[1] must be an unsigned 32-bit value (0 to "
            "4294967295))"
        ),
    ),
    _error(
        "level_too_old",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], feature_level="2_0"),
        cd.DescriptorError,
        (
            "slice1_batch: feature_level = 2_0 is older than 2_1, the first level with SLICE1 "
            "(DirectML: the operator needs feature level 2_1 or newer; got 2_0)"
        ),
    ),
    _error(
        "rank_at_level",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], feature_level="2_1"),
        cd.DescriptorError,
        (
            "slice1_batch: x.ndim = 2 is not supported at feature level 2_1 (supported: 4 to 5) "
            "(DirectML: InputTensor.DimensionCount is not supported at feature level 2_1 "
            "(supported: 4 to 5))"
        ),
    ),
    _error(
        "out_with_own_sizes",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0]], window_sizes=[[2, 2]], out=xp.zeros((1, 2, 2), np.float32)
        ),
        TypeError,
        ("slice1_batch: out= takes one array, for windows of one size; per-window sizes give new arrays"),
        dask=False,
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.slice1_batch(
            x, window_offsets=[[0, 0]], window_sizes=[2, 2], out=xp.zeros((1, 2, 3), np.float32)
        ),
        cd.BindingError,
        "slice1_batch: out has shape (1, 2, 3); the result has shape (1, 2, 2)",
        dask=False,
    ),
    _error(
        "out_overlaps_x",
        lambda xp, x: cd.slice1_batch(x, window_offsets=[[0, 0]], window_sizes=[2, 2], out=x[None, 2:, 2:]),
        cd.BindingError,
        "slice1_batch: out overlaps x in memory",
        dask=False,
    ),
    _error(
        "positional_one_axis",
        lambda xp, x: cd.slice1_batch(xp.arange(10), [[0]], [2]),
        TypeError,
        (
            "cd.slice1_batch(x, [[0]], [2]): pass window_offsets=, window_sizes=, window_strides= "
            "by name: they are SLICE1's windows, as cd.slice1 takes them; write "
            "cd.slice1_batch(x, window_offsets=[[0]], window_sizes=[2])"
        ),
    ),
]
_SLICE1_BATCH_GRAD_ERRORS = [
    _error(
        "positional",
        lambda xp, x: cd.slice1_batch_grad(xp.zeros((2, 2, 2), np.float32), (4, 4), [[0, 0], [1, 1]], [2, 2]),
        TypeError,
        (
            "cd.slice1_batch_grad(dy, input_shape, [[0, 0], [1, 1]], [2, 2]): pass window_offsets=, "
            "window_sizes=, window_strides= by name: they are SLICE1's windows, as cd.slice1_batch "
            "takes them; write cd.slice1_batch_grad(dy, input_shape, window_offsets=[[0, 0], [1, "
            "1]], window_sizes=[2, 2])"
        ),
    ),
    _error(
        "dy_empty_list",
        lambda xp, x: cd.slice1_batch_grad([], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        ValueError,
        ("slice1_batch_grad: dy is an empty list; the gradient of no windows has no dtype (pass zeros)"),
    ),
    _error(
        "dy_one_for_own_sizes",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[[2, 2]]),
        TypeError,
        ("slice1_batch_grad: windows of one size take dy as one array; per-window sizes take a list of one per window"),
    ),
    _error(
        "dy_shape",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 3, 2), np.float32), (4, 4), window_offsets=[[0, 0], [1, 1]], window_sizes=[2, 2]
        ),
        ValueError,
        "slice1_batch_grad: dy has shape (2, 3, 2); the windows' results have (2, 2, 2)",
    ),
    _error(
        "input_shape_negative",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, -4), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        ValueError,
        "slice1_batch_grad: input_shape[1] = -4 must not be negative",
    ),
    _error(
        "input_shape_float",
        lambda xp, x: cd.slice1_batch_grad(x[None, :2, :2], (4, 4.0), window_offsets=[[0, 0]], window_sizes=[2, 2]),
        TypeError,
        "slice1_batch_grad: input_shape[1] = 4.0 must be an integer, not float",
    ),
    _error(
        "window_past_input_shape",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 2, 2), np.float32), (4, 4), window_offsets=[[0, 0], [3, 3]], window_sizes=[2, 2]
        ),
        cd.DescriptorError,
        (
            "slice1_batch_grad: window 1: window_offsets[1][0] + window_sizes[0] = 5 exceeds "
            "input_shape[0] = 4 (DirectML: InputWindowOffsets[0] + InputWindowSizes[0] exceeds "
            "InputTensor.Sizes[0])\nslice1_batch_grad: window 1: window_offsets[1][1] + "
            "window_sizes[1] = 5 exceeds input_shape[1] = 4 (DirectML: InputWindowOffsets[1] + "
            "InputWindowSizes[1] exceeds InputTensor.Sizes[1])"
        ),
    ),
    _error(
        "per_sample_count",
        lambda xp, x: cd.slice1_batch_grad(
            x[:2, :2], (4, 4), window_offsets=[[0], [1]], window_sizes=[2], per_sample=True
        ),
        ValueError,
        ("slice1_batch_grad: 2 windows for input_shape of 4 samples (per_sample=True takes one per sample)"),
    ),
    _error(
        "bool_sums",
        lambda xp, x: cd.slice1_batch_grad(
            xp.zeros((2, 2, 2), bool),
            (4, 4),
            window_offsets=[[0, 0], [1, 1]],
            window_sizes=[2, 2],
            directml_types=False,
        ),
        TypeError,
        (
            "slice1_batch_grad: overlapping windows' gradients are added, which needs a float, "
            "complex or integer dtype, not bool (per_sample=True moves any dtype)"
        ),
    ),
    _error(
        "out_shape",
        lambda xp, x: cd.slice1_batch_grad(
            x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2], out=xp.zeros((4, 5), np.float32)
        ),
        cd.BindingError,
        "slice1_batch_grad: out has shape (4, 5); the result has shape (4, 4)",
    ),
    _error(
        "out_overlaps_dy",
        lambda xp, x: cd.slice1_batch_grad(
            x[None, :2, :2], (4, 4), window_offsets=[[0, 0]], window_sizes=[2, 2], out=x
        ),
        cd.BindingError,
        "slice1_batch_grad: out overlaps dy in memory",
    ),
]


# ---- integer arguments: each, with a value in it (for hostile values: floats, None, huge) ----------


def _integer(argument, call, valid=None):
    if valid is None:
        valid = 0 if "offsets" in argument or argument == "axis" else 2
    return IntegerArgument(argument, call, valid)


_SLICE_INTEGERS = (
    _integer("offsets[1]", lambda x, v: cd.slice(x, offsets=[0, v], sizes=[1, 1])),
    _integer("sizes[0]", lambda x, v: cd.slice(x, offsets=[0, 0], sizes=[v, 1])),
    _integer("strides[0]", lambda x, v: cd.slice(x, offsets=[0, 0], sizes=[1, 1], strides=[v, 1]), 1),
)
_SLICE1_INTEGERS = (
    _integer("window_offsets[0]", lambda x, v: cd.slice1(x, window_offsets=[v, 0], window_sizes=[1, 1])),
    _integer("window_sizes[0]", lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[v, 1])),
    _integer(
        "window_strides[0]",
        lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], window_strides=[v, 1]),
        1,
    ),
    _integer(
        "output_sizes[0]",
        lambda x, v: cd.slice1(x, window_offsets=[0, 0], window_sizes=[1, 1], output_sizes=[v, 1]),
        1,
    ),
)
_SLICE_GRAD_INTEGERS = (
    _integer(
        "input_shape[1]",
        lambda x, v: cd.slice_grad(x[:2, :2], (4, v), window_offsets=[0, 0], window_sizes=[2, 2]),
        4,
    ),
    _integer(
        "window_offsets[1]",
        lambda x, v: cd.slice_grad(x[:2, :2], (4, 4), window_offsets=[0, v], window_sizes=[2, 2]),
    ),
)
_SPLIT_INTEGERS = (
    _integer("split_sizes[0]", lambda x, v: cd.split(x, split_sizes=[v, 2])),
    _integer("parts", lambda x, v: cd.split(x, parts=v), 2),
    _integer("axis", lambda x, v: cd.split(x, parts=2, axis=v)),
)
_JOIN_INTEGERS = (_integer("axis", lambda x, v: cd.join([x, x], axis=v)),)
_STRIDED_SLICE_GRAD_INTEGERS = (_integer("input_shape[1]", lambda x, v: cd.strided_slice_grad(x, (4, v), ...), 4),)
_SLICE1_BATCH_INTEGERS = (
    _integer("window_offsets[0][1]", lambda x, v: cd.slice1_batch(x, window_offsets=[[0, v]], window_sizes=[1, 1])),
)
_SLICE1_BATCH_GRAD_INTEGERS = (
    _integer(
        "input_shape[1]",
        lambda x, v: cd.slice1_batch_grad(x[None, :1, :1], (4, v), window_offsets=[[0, 0]], window_sizes=[1, 1]),
        4,
    ),
)


# ---- the table ----------------------------------------------------------------------------------

OPS = (
    OpInfo(
        "slice",
        cd.slice,
        reference_slice,
        _slice_samples,
        _slice_random,
        _slice_rank,
        "Slice",
        tuple(_SLICE_ERRORS),
        _SLICE_INTEGERS,
        _SLICE_EXAMPLES,
        gradient="slice_grad",
        gradient_sample=_slice_gradient,
        operator="slice",
    ),
    OpInfo(
        "slice1",
        cd.slice1,
        reference_slice1,
        _slice1_samples,
        _slice1_random,
        _slice1_rank,
        "Slice1",
        tuple(_SLICE1_ERRORS),
        _SLICE1_INTEGERS,
        _SLICE1_EXAMPLES,
        gradient="slice_grad",
        gradient_sample=_slice1_gradient,
        huge_sample=_huge_slice1,
        operator="slice1",
    ),
    OpInfo(
        "slice_grad",
        cd.slice_grad,
        reference_slice_grad,
        _slice_grad_samples,
        _slice_grad_random,
        _slice_grad_rank,
        "SliceGrad",
        tuple(_SLICE_GRAD_ERRORS),
        _SLICE_GRAD_INTEGERS,
        _SLICE_GRAD_EXAMPLES,
        gradient="slice1",
        gradient_sample=_slice_grad_gradient,
        huge_sample=_huge_slice_grad,
        operator="slice_grad",
    ),
    OpInfo(
        "split",
        cd.split,
        reference_split,
        _split_samples,
        _split_random,
        _split_rank,
        "Split",
        tuple(_SPLIT_ERRORS),
        _SPLIT_INTEGERS,
        _SPLIT_EXAMPLES,
        gradient="join",
        gradient_sample=_split_gradient,
        huge_sample=_huge_split,
        out=lambda sample, outs: list(outs),
        operator="split",
    ),
    OpInfo(
        "join",
        cd.join,
        reference_join,
        _join_samples,
        _join_random,
        _join_rank,
        "Join",
        tuple(_JOIN_ERRORS),
        _JOIN_INTEGERS,
        _JOIN_EXAMPLES,
        gradient="split",
        gradient_sample=_join_gradient,
        huge_sample=_huge_join,
        operator="join",
    ),
    OpInfo(
        "strided_slice",
        cd.strided_slice,
        reference_strided_slice,
        _strided_slice_samples,
        _strided_slice_random,
        _strided_slice_rank,
        "Slice1",
        tuple(_STRIDED_SLICE_ERRORS),
        (),
        _STRIDED_SLICE_EXAMPLES,
        gradient="strided_slice_grad",
        gradient_sample=_strided_slice_gradient,
    ),
    OpInfo(
        "strided_slice_grad",
        cd.strided_slice_grad,
        reference_strided_slice_grad,
        _strided_slice_grad_samples,
        _strided_slice_grad_random,
        _strided_slice_grad_rank,
        "SliceGrad",
        tuple(_STRIDED_SLICE_GRAD_ERRORS),
        _STRIDED_SLICE_GRAD_INTEGERS,
        _STRIDED_SLICE_GRAD_EXAMPLES,
        gradient="strided_slice",
        gradient_sample=_strided_slice_grad_gradient,
    ),
    OpInfo(
        "slice1_batch",
        cd.slice1_batch,
        reference_slice1_batch,
        _slice1_batch_samples,
        _slice1_batch_random,
        _slice1_batch_rank,
        "Slice1",
        tuple(_SLICE1_BATCH_ERRORS),
        _SLICE1_BATCH_INTEGERS,
        _SLICE1_BATCH_EXAMPLES,
        gradient="slice1_batch_grad",
        gradient_sample=_slice1_batch_gradient,
        out=_slice1_batch_out,
        traced=False,
        windows=True,
    ),
    OpInfo(
        "slice1_batch_grad",
        cd.slice1_batch_grad,
        reference_slice1_batch_grad,
        _slice1_batch_grad_samples,
        _slice1_batch_grad_random,
        _slice1_batch_grad_rank,
        "Slice1",
        tuple(_SLICE1_BATCH_GRAD_ERRORS),
        _SLICE1_BATCH_GRAD_INTEGERS,
        _SLICE1_BATCH_GRAD_EXAMPLES,
        gradient="slice1_batch",
        gradient_sample=_slice1_batch_grad_gradient,
        traced=False,
        dask=False,
        adds=True,
        windows=True,
    ),
)
BY_NAME = {op.name: op for op in OPS}


# ---- cudadml.numpy.pad's operator (cudadml.ops.padding) ---------------------------------------------
# No array function of its own: ``pad_operator`` runs it as the array functions run theirs, so
# the generic tests (values, out=, streams, the kernels, the messages) cover it like the others.
# It takes arrays with elements only (``cudadml.numpy.pad`` makes empty results itself).


def pad_operator(x, pad_width, constant=0, *, out=None, stream=None, feature_level=None, directml_types=True):
    """``x`` padded by ``pad_width`` (a pair per axis) with ``constant`` (converted to ``x``'s
    dtype) by the constant pad's operator, through the array functions' route (``run_call``)."""
    from cudadml.core.plan import fill_pattern
    from cudadml.ops.padding import Pad
    from cudadml.run.arrays import run_call

    def operation(inputs):
        (x,) = inputs
        element = np.asarray(constant).astype(x.dtype).tobytes()
        shape = tuple(b + n + a for n, (b, a) in zip(x.shape, pad_width))
        level = cd.FeatureLevel.coerce(feature_level)
        return Pad(shape, tuple(b for b, _ in pad_width), fill_pattern(element), level, directml_types)

    outs = None if out is None else [out]
    (result,) = run_call(Pad, [x], outs, operation, stream, None)
    return result


def reference_pad(x, pad_width, constant=0, **_):
    shape = tuple(b + n + a for n, (b, a) in zip(x.shape, pad_width))
    result = _xp(x).full(shape, np.asarray(constant).astype(x.dtype), x.dtype)
    result[tuple(slice(b, b + n) for n, (b, _) in zip(x.shape, pad_width))] = x
    return result


def _pad(name, make, shape, pad_width, constant=0):
    return Sample(name, (make(shape), tuple(pad_width)), {"constant": constant})


def _pad_samples(make):
    yield _pad("zeros", make, (3, 5), [(1, 2), (0, 3)])
    yield _pad("constant", make, (2, 3, 4), [(2, 0), (1, 1), (0, 5)], 3)
    yield _pad("rows", make, (4, 33), [(0, 0), (7, 9)], 1)
    yield _pad("nothing", make, (3, 4), [(0, 0), (0, 0)], 2)


def _pad_random(make, rng):
    shape = _random_shape(rng, 1, 6, rank=int(rng.integers(1, 5)))
    widths = [tuple(int(w) for w in rng.integers(0, 4, 2)) for _ in shape]
    return _pad("random", make, shape, widths, int(rng.integers(0, 3)))


def _pad_rank(make, rank):
    shape = _rank_shape(rank)
    return _pad(f"rank_{rank}", make, shape, [(k % 2, 1 - k % 2) for k in range(rank)], 1)


_PAD_ERRORS = [
    _error(
        "out_shape",
        lambda xp, x: pad_operator(x, ((1, 1), (1, 1)), out=xp.empty((4, 4), np.float32)),
        cd.BindingError,
        "pad: out has shape (4, 4); the result has shape (6, 6)",
        dask=False,
    ),
]

OPS = (
    *OPS,
    OpInfo(
        "pad",
        pad_operator,
        reference_pad,
        _pad_samples,
        _pad_random,
        _pad_rank,
        "SliceGrad",
        tuple(_PAD_ERRORS),
        traced=False,
        dask=False,
    ),
)
BY_NAME = {op.name: op for op in OPS}

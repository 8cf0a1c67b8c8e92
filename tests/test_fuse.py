"""``cudadml.fuse``: functions of data-movement calls traced into one graph, against the same
functions run eagerly (NumPy on the reference backend and on the emulated kernels, CuPy on the
GPU), bit for bit; the trace cache; a fuzzer of random functions (30 per backend, ``pytest -m
fuzz``: 4000); the refusals; PyTorch's forward and backward."""

import collections
import math
import numbers
import pickle
import re
import struct
import sys
import zlib
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import cudadml as cd
import cudadml.numpy as cnp
from cudadml.core.memory import address_of
from cudadml.graphs.graph import CompiledGraph
from cudadml.testing import CANARY, POISON, aligned_empty, random_array, to_host

fuse_module = sys.modules["cudadml.graphs.fuse"]  # the module (cd.fuse is the function)


@pytest.fixture
def poisoned(monkeypatch):
    """Every allocation of a fused call's results is poisoned, between poisoned canaries:
    returns the check that every byte of it outside the results' elements (canaries, the gaps
    between results) is still poison (results are compared with the eager bytes, which hold no
    poison byte, so an unwritten element shows)."""
    regions = []

    def poisoned_allocate(xp, parts, total):
        raw = aligned_empty(CANARY + total + CANARY, xp)
        raw[...] = POISON
        elements = np.zeros(raw.size, bool)
        outs = []
        for shape, dtype, offset in parts:
            nbytes = math.prod(shape) * np.dtype(dtype).itemsize
            elements[CANARY + offset : CANARY + offset + nbytes] = True
            outs.append(raw[CANARY + offset : CANARY + offset + nbytes].view(dtype).reshape(shape))
        regions.append((raw, elements))
        base = address_of(raw)
        return outs, [base + CANARY + offset for _, _, offset in parts]

    monkeypatch.setattr(sys.modules["cudadml.graphs.fused_arrays"], "allocate", poisoned_allocate)

    def canaries_intact():
        for raw, elements in regions:
            assert (to_host(raw)[~elements] == POISON).all()
        regions.clear()
        return True

    return canaries_intact


def _same(fused, eager):
    """The same structure of arrays, each C-contiguous, of the eager result's shape, dtype and bytes."""
    if isinstance(eager, (list, tuple)):
        assert type(fused) is type(eager) and len(fused) == len(eager)
        for f, e in zip(fused, eager):
            _same(f, e)
        return
    assert type(fused) is type(eager)
    assert fused.shape == eager.shape and fused.dtype == eager.dtype and fused.flags.c_contiguous
    assert to_host(fused).tobytes() == np.ascontiguousarray(to_host(eager)).tobytes()


def _layouts(x, xp):
    """``x`` as it comes, and as views of it: offset (an address past 16-byte alignment),
    reversed on some axes, and strided."""
    big = xp.empty((*x.shape[:-1], x.shape[-1] + 3), x.dtype)
    big[..., 1 : 1 + x.shape[-1]] = x
    flipped = xp.empty_like(x)[..., ::-1] if x.ndim == 1 else xp.empty_like(x)[::-1, ..., ::-1]
    flipped[...] = x
    gapped = xp.empty((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)[..., ::2]
    gapped[...] = x
    return [x, big[..., 1 : 1 + x.shape[-1]], flipped, gapped]


# ---- the cases: functions of array calls --------------------------------------------------------------


def focus(x):
    """Space to depth: four strided slices joined on channels."""
    return cd.join([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], axis=1)


def focus_numpy(x):
    return cnp.concatenate([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], axis=1)


def qkv_heads(x, heads):
    """(B, T, 3C) split into queries, keys and values, each as (B, heads, T, C / heads)."""
    q, k, v = cd.split(x, parts=3, axis=-1)
    b, t, c = q.shape

    def split_heads(y):
        y = y.reshape(b, t, heads, c // heads)
        return cd.join([y[:, None, :, h] for h in range(heads)], axis=1)

    return split_heads(q), split_heads(k), split_heads(v)


def crops(x):
    """Crops of one image joined on the batch axis, two read backwards."""
    flipped = cd.slice1(x, window_offsets=[0, 0, 1, 2], window_sizes=[1, 3, 4, 4], window_strides=[1, 1, -1, 1])
    mirrored = cd.strided_slice(x, np.s_[..., 3:, ::-1])
    return cd.join([x[..., 0:4, 1:5], flipped, mirrored[..., :4, :4]], axis=0)


def rejoin_reversed(x):
    parts = cd.split(x, split_sizes=[1, 3, 2], axis=1)
    return cd.join(parts[::-1], axis=1)


def rejoin_numpy(x):
    return cnp.concatenate(cnp.array_split(x, 3, axis=-1)[::-1], axis=-1)


def pads(x):
    return cnp.pad(x, ((0, 0), (1, 2), (0, 0), (3, 1))), cnp.pad(x[:, :, 1:-1], 1)


def gradients(x):
    """SLICE_GRAD and the gradient of an index, fed by and feeding other calls; SLICE reading
    elements again (a zero stride)."""
    window = {"window_offsets": [0, 1, 2, 0], "window_sizes": [2, 3, 7, 8], "window_strides": [1, 1, -3, 1]}
    placed = cd.slice_grad(x[:, :3, :3], (2, 6, 9, 8), **window)
    key = np.s_[:, ::-2, 1, 1::3]
    indexed = cd.strided_slice_grad(cd.strided_slice(x, key), x.shape, key)
    repeated = cd.slice(x, offsets=[1, 0, 2, 1], sizes=[1, 3, 2, 4], strides=[1, 2, 0, 1])
    return placed[:, 1:], indexed, repeated


def mixed(x):
    """Flips, rolls of one axis, the stack family, splits at decreasing indices (overlapping
    sections), windows per sample; an input used several times and returned, an intermediate
    used several times and returned."""
    top = cnp.flipud(x[0])
    rolled = cnp.roll(top, 2, axis=-1)
    parts = cnp.split(x, [2, 1], axis=2)  # sections overlap: a window each
    windows = cd.slice1_batch(
        x[1], window_offsets=[[0, 0, 0], [1, 2, 3]], window_sizes=[2, 3, 4], window_strides=[1, -1, 2]
    )
    return (
        cnp.concatenate([x[0], x.reshape(8, -1)[::3]], axis=None),
        cnp.vstack([top, rolled, top]),
        cnp.hstack([x[1, 0], x[0, 1]]),
        parts,
        windows,
        top,
        x,
        [cnp.fliplr(top), [cnp.dstack([x[0, 0], x[1, 1]])]],
    )


CASES = {
    "focus": (focus, (2, 3, 6, 8), ()),
    "focus_numpy": (focus_numpy, (2, 3, 6, 8), ()),
    "qkv_heads": (qkv_heads, (2, 5, 24), (4,)),
    "crops": (crops, (1, 3, 8, 8), ()),
    "rejoin_reversed": (rejoin_reversed, (2, 6, 3, 7), ()),
    "rejoin_numpy": (rejoin_numpy, (2, 6, 3, 7), ()),
    "pads": (pads, (2, 3, 5, 4), ()),
    "gradients": (gradients, (2, 6, 5, 8), ()),
    "mixed": (mixed, (2, 4, 6, 8), ()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_fused_is_eager(xp, rng, poisoned, case):
    fn, shape, extra = CASES[case]
    fused = cd.fuse(fn)
    for x in _layouts(random_array(shape, np.float32, rng, xp), xp):
        _same(fused(x, *extra), fn(x, *extra))
        assert poisoned()
    for program in fused._programs.values():  # one trace, a graph per layout, each one launch
        assert program.graphs
        for run in program.graphs.values():
            assert " in 1 launch" in repr(run.compiled.op)


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.float16, np.int32, np.int64, np.complex128])
def test_every_element_size(xp, rng, poisoned, dtype):
    fused = cd.fuse(focus_numpy)
    for x in _layouts(random_array((1, 2, 4, 6), dtype, rng, xp), xp)[:2]:
        _same(fused(x), focus_numpy(x))
        assert poisoned()


def test_arrays_of_any_layout(xp, rng, poisoned):
    """Broadcast axes, 0-dimensional, empty and 8-dimensional arrays, offsets that no
    dimension's stride divides, misaligned addresses (a copy), 16-byte elements."""

    def fn(a, b):
        return a[::-1], cd.join([a, b], axis=1), a, b.reshape(-1)[::-3]

    x = random_array((4, 6), np.float32, rng, xp)
    cases = [(xp.broadcast_to(x[1:2], (4, 6)), x), (x, x[:, ::-1])]
    if xp is np:  # element 0 at an odd address: the array is copied first
        odd = np.zeros(4 * 24 + 1, np.uint8)[1:].view(np.float32).reshape(4, 6)
        odd[...] = x
        cases.append((odd, odd))
    for a, b in cases:
        _same(cd.fuse(fn)(a, b), fn(a, b))
    z = random_array((3, 5), np.complex128, rng, xp)
    words = cd.fuse(lambda z: (cnp.flip(z, 1), cnp.pad(z, 1), z, cnp.split(z, [1, 4], axis=1)))
    for view in _layouts(z, xp):
        _same(words(view), words.__wrapped__(view))
    eight = random_array((2,) * 7 + (5,), np.int16, rng, xp)
    folded = cd.fuse(lambda a: (cnp.flip(a, 3), a))
    for view in (eight[..., 1:3], eight[..., 1:4], eight[..., ::-2]):  # offsets of 2, 4 bytes; reversed
        _same(folded(view), folded.__wrapped__(view))
    scalar = xp.asarray(np.float32(2.5))
    _same(cd.fuse(lambda s: (s, s.reshape(1, 1)))(scalar), (scalar, scalar.reshape(1, 1)))
    empty = xp.zeros((0, 3), np.float32)
    _same(cd.fuse(lambda e, b: (e, cd.join([e, e]), b[1:]))(empty, x), (empty, empty[:0], x[1:]))
    assert poisoned()


#: Arrays of more dimensions than a tensor holds (8; as pairs of 8-byte words, 7 of 16-byte elements).
HIGH_RANKS = [
    ((2, 1, 3, 1, 2, 2, 1, 2, 2), np.float32),
    ((1, 2) * 5, np.uint8),
    ((2, 1, 2, 1, 1, 3, 1, 2, 1, 1, 2), np.int16),
    ((2, 1, 2, 1, 3, 1, 2, 2), np.complex128),
    ((3, 1, 2, 1, 2, 1, 2), np.complex128),
]
HIGH_RANK_FNS = {
    "itself": lambda x: x,
    "every_other": lambda x: x.reshape(-1)[::2],
    "reshaped": lambda x: (
        x[None],
        cd.join([x.reshape(-1)[1::2], x.reshape(-1)], axis=0, directml_types=False),
        cd.strided_slice(x.reshape(2, -1), np.s_[::-1, 1::2], directml_types=False),
        x,
    ),
}
NUMPY_HIGH_RANK_FNS = {  # (cudadml.numpy takes NumPy arrays; torch's copy is clone)
    "copied": lambda x: x.copy(),
    "numpy": lambda x: (cnp.flip(x, 1), cnp.concatenate([x, x], axis=-1), cnp.stack([x, cnp.flip(x, 0)]), x),
}


@pytest.mark.parametrize("fn", sorted({**HIGH_RANK_FNS, **NUMPY_HIGH_RANK_FNS}))
@pytest.mark.parametrize(("shape", "dtype"), HIGH_RANKS)
def test_arrays_of_more_dimensions_than_a_tensor_holds(xp, rng, poisoned, shape, dtype, fn):
    """Bound as one dimension where C-contiguous (else copied first), as the eager calls take them."""
    fn = {**HIGH_RANK_FNS, **NUMPY_HIGH_RANK_FNS}[fn]
    fused = cd.fuse(fn)
    x = random_array(shape, dtype, rng, xp)
    shifted = xp.empty(x.size + 1, x.dtype)[1:].reshape(shape)  # C-contiguous, past 16-byte alignment
    shifted[...] = x
    for view in [*_layouts(x, xp), shifted]:
        _same(fused(view), fn(view))
        assert poisoned()


def test_torch_arrays_of_more_dimensions_than_a_tensor_holds(torch):
    for shape, dtype in [((2, 1, 3, 1, 2, 2, 1, 2, 2), torch.float64), ((2, 1, 2, 1, 3, 1, 2, 2), torch.complex128)]:
        _check_torch(torch, HIGH_RANK_FNS["reshaped"], shape, dtype=dtype)  # forward and backward
        x = _integers(torch, shape, torch.Generator().manual_seed(1), dtype=dtype).flip(0)  # (copied first)
        for fn in HIGH_RANK_FNS.values():
            got, expected = _leaves(cd.fuse(fn)(x)), _leaves(fn(x))
            assert len(got) == len(expected) and all(torch.equal(g, e) for g, e in zip(got, expected))


def _offsets(x, xp):
    """``x`` at element offsets 0 to 3 of a wider array: the same strides, other addresses
    modulo 16."""
    views = [xp.empty((*x.shape[:-1], x.shape[-1] + 3), x.dtype)[..., k : k + x.shape[-1]] for k in range(4)]
    for view in views:
        view[...] = x
    return views


def test_each_call_runs_on_its_own_layout(xp, rng, poisoned, monkeypatch):
    """What a trace keeps per layout of its arrays (a graph, where each tensor starts below its
    array's elements, which arrays are copied first) and for the latest call serves only calls
    of that layout: calls alternating between addresses modulo 16 (strides alike), strides,
    flips, the arrays of other arguments, each gives the eager bytes, its graph's input
    tensors bound at 16-byte aligned addresses (the binding rule the kernels' accesses rely on)."""
    launches, run = [], CompiledGraph._run

    def spied(op, bound, stream):
        launches.append(bound[1][0])  # the input tensors' addresses
        return run(op, bound, stream)

    monkeypatch.setattr(CompiledGraph, "_run", spied)

    def fn(a, b):
        return crops(a), cd.join([b[::-1], b], axis=0)

    fused = cd.fuse(fn)
    x, y = random_array((1, 3, 8, 8), np.float32, rng, xp), random_array((2, 5), np.int16, rng, xp)
    views = [*_offsets(x, xp), *_layouts(x, xp)[2:]]
    others = [*_offsets(y, xp), y[::-1][::-1], xp.asarray(np.asfortranarray(to_host(y)))]
    if xp is np:  # element 0 at an odd address: copied first
        odd = np.zeros(y.nbytes + 1, np.uint8)[1:].view(y.dtype).reshape(y.shape)
        odd[...] = y
        others.append(odd)
    calls = [(a, b) for a in views for b in others[:2]] + [(views[0], b) for b in others]
    for a, b in calls + calls[::-1] + calls:
        _same(fused(a, b), fn(a, b))
        assert poisoned()
    assert len(fused._programs) == 1
    assert len(launches) == 3 * len(calls) and all(address % 16 == 0 for ins in launches for address in ins)


def test_results_are_apart(xp, rng):
    """Several results share an allocation without sharing a byte, each writable alone."""
    fused = cd.fuse(lambda x: cd.split(x, split_sizes=[1, 3, 2], axis=1))
    x = random_array((2, 6, 3), np.float16, rng, xp)
    parts = fused(x)
    if xp is np:
        assert not any(np.shares_memory(a, b) for a in parts for b in parts if a is not b)
    parts[1][...] = 0
    _same([parts[0], parts[2]], fused(x)[::2])


def test_the_function_is_traced_once_per_layout_of_its_arguments(rng):
    traces = []

    @cd.fuse
    def flip(x, axis, *, parts):
        if isinstance(x, fuse_module.Traced):  # (the eager runs below call it too)
            traces.append(x.shape)
        return cnp.array_split(cnp.flip(x, axis), parts, axis=axis)

    x = random_array((4, 6), np.int16, rng)
    _same(flip(x, 0, parts=3), flip.__wrapped__(x, 0, parts=3))
    _same(flip(x + 1, 0, parts=3), flip.__wrapped__(x + 1, 0, parts=3))
    assert len(traces) == 1
    for view in _layouts(x, np)[1:]:  # other strides and alignment: compiled again, not traced
        _same(flip(view, 0, parts=3), flip.__wrapped__(view, 0, parts=3))
    assert len(traces) == 1
    (program,) = flip._programs.values()
    assert len(program.graphs) == 4
    flip(x, 1, parts=3)
    flip(x, 0, parts=2)
    flip(x[:3], 0, parts=3)
    flip(x.astype(np.float32), 0, parts=3)
    assert len(traces) == 5
    flip(x, np.int64(1), parts=3)  # another type is another key
    assert len(traces) == 6
    flip.cache_clear()
    flip(x, 0, parts=3)
    assert len(traces) == 7


def test_the_cache_is_bounded(rng, monkeypatch):
    monkeypatch.setattr(fuse_module, "PROGRAMS", 3)
    fused = cd.fuse(lambda x, k: x[k:])
    x = random_array((8,), np.uint8, rng)
    for k in range(6):
        assert np.array_equal(fused(x, k), x[k:])
    assert len(fused._programs) == 3


def _nan(payload, sign=0):
    """A float NaN of ``payload`` (its low mantissa bits): a new object at each call."""
    return struct.unpack("<d", struct.pack("<Q", sign << 63 | 0x7FF8 << 48 | payload))[0]


def _nan32(payload):
    return np.uint32(0x7FC00000 | payload).view(np.float32)


Point = collections.namedtuple("Point", "x y")

#: Arguments that ``==`` (or nothing, for NaNs) takes for one another, but which a function can
#: tell apart (their types, signs, payloads, exponents, units): each is an argument of its own.
LOOKALIKES = {
    "zeros": [0.0, -0.0, 0, False, np.float64(0.0), np.float64(-0.0), np.float32(-0.0), np.float16(0.0),
              np.int64(0), np.bool_(False), 0j, complex(0.0, -0.0), complex(-0.0, 0.0), np.complex64(-0.0),
              Decimal("0"), Decimal("-0"), Decimal("0.00"), Fraction(0)],
    "ones": [1, True, 1.0, np.int64(1), np.int32(1), np.uint8(1), np.float32(1), np.float64(1), np.bool_(True),
             1 + 0j, np.complex64(1), Decimal("1"), Decimal("1.0"), Fraction(1)],
    "nans": [_nan(0), _nan(1), _nan(0, sign=1), _nan(2**51 - 1), np.float64(_nan(5)), _nan32(0), _nan32(3),
             complex(_nan(0), 0.0), complex(_nan(7), 0.0), complex(0.0, _nan(0))],
    "others": [np.datetime64(1, "D"), np.datetime64(24, "h"), "a", np.str_("a"), b"a", np.bytes_(b"a"), None],
    "containers": [(0.0, 1), (-0.0, 1), (0.0, True), (_nan(1),), (_nan(2),), [0.0], [-0.0], [False],
                   Point(0.0, 1), Point(-0.0, 1), frozenset({0.0}), frozenset({-0.0}), frozenset({False}),
                   ((0.0,),), ((-0.0,),), (None,)],
}  # fmt: skip
if sys.version_info >= (3, 12):  # slices are hashable
    LOOKALIKES["containers"] += [slice(0.0), slice(-0.0), slice(False)]


@pytest.mark.parametrize("group", sorted(LOOKALIKES))
def test_a_trace_is_kept_per_argument_as_the_function_sees_it(rng, group):
    values = LOOKALIKES[group]
    index = {pickle.dumps(v): k for k, v in enumerate(values)}  # its bytes: all a function can read of it
    assert len(index) == len(values)
    fused = cd.fuse(lambda x, v: x[index[pickle.dumps(v)] :])
    x = random_array((len(values) + 1,), np.float32, rng)
    for v in [*values, *values]:
        _same(fused(x, v), fused.__wrapped__(x, v))
    assert len(fused._programs) == len(values)


def test_a_nan_argument_finds_its_trace(rng):
    """Arguments equal in type and bits are one argument, NaNs (which ``==`` never equates) too."""
    traces = []

    @cd.fuse
    def fn(x, v):
        traces.append(v)
        return x[::-1]

    x = random_array((4,), np.int8, rng)
    for make in (lambda: _nan(3), lambda: np.float64(_nan(3)), lambda: complex(0.0, _nan(3)), lambda: (_nan(3),)):
        fn(x, make())
        fn(x, make())
    assert len(traces) == 4


def test_arguments_results_and_copies(rng):
    """Lists of arrays in, nested lists and tuples out; an argument returned as it is, an array
    no traced call made (a constant) and empty results are new arrays."""
    constant = np.arange(3)

    @cd.fuse
    def f(xs, *, axis=0):
        a, b = xs
        joined = cd.join([a, b], axis=axis)
        return (
            joined,
            [a, (joined, constant)],
            a[:0],
            cd.slice_grad(a[:0], (2, 3), window_offsets=[0, 0], window_sizes=[0, 3]),
        )

    a, b = random_array((2, 3), np.float64, rng), random_array((2, 3), np.float64, rng)
    joined, (a_copy, (joined_again, constant_copy)), empty, zeros = f([a, b])
    assert joined is joined_again and np.array_equal(joined, np.concatenate([a, b]))
    assert a_copy is not a and not np.shares_memory(a_copy, a) and np.array_equal(a_copy, a)
    assert constant_copy is not constant and np.array_equal(constant_copy, constant)
    assert empty.shape == (0, 3) and zeros.shape == (2, 3) and not zeros.any()
    assert np.array_equal(f((a, b), axis=1)[0], np.concatenate([a, b], axis=1))


def test_a_fused_function_calls_another_in_its_graph(rng):
    inner = cd.fuse(lambda x: cnp.flip(x, 0))
    outer = cd.fuse(lambda x: cnp.concatenate([inner(x), x]))
    x = random_array((3, 2), np.int8, rng)
    assert np.array_equal(outer(x), np.concatenate([x[::-1], x]))
    assert not inner._programs  # traced as part of outer


def test_descriptor_errors_are_the_eager_calls(rng):
    fused = cd.fuse(lambda x: cd.slice1(x, window_offsets=[5], window_sizes=[4]))
    x = random_array((6,), np.float32, rng)
    with pytest.raises(cd.DescriptorError) as fused_error:
        fused(x)
    with pytest.raises(cd.DescriptorError) as eager_error:
        fused.__wrapped__(x)
    assert str(fused_error.value) == str(eager_error.value)


# ---- the fuzzer: random functions of array calls, fused against their eager calls ----------------------
#
# A drawn function chains calls on its array argument: ``cudadml.numpy``'s (any number of
# dimensions), reshapes and new axes, and where a tensor holds the dimensions (8, 16-byte elements
# as pairs of words: 7), basic indexing, ``pad`` and ``split``; some of them under conditions that
# read its scalar argument (its sign, type, NaN-ness, bytes). Arrays of 1 to 11 dimensions (16-byte
# elements: 1 to 8), of fresh random bits at each call, laid out in several ways; one fused function
# is called several times with scalars that ``==`` may take for one another. Each result must be
# the eager call's, byte for byte (or the same error). A failure prints the case as Python.

#: Scalar arguments, as code (evaluated at each call: a new object each time, NaNs too).
SCALARS = ["0.0", "-0.0", "0", "False", "True", "1", "1.0", "1j", "np.int64(1)", "np.float32(1)", "np.float32(-0.0)",
           "np.float64(-0.0)", "np.bool_(True)", "complex(0.0, -0.0)", "_nan(0)", "_nan(1)", "_nan(0, sign=1)",
           "_nan32(2)", "np.float64(_nan(3))", "None", "'a'", "(0.0, True)", "(-0.0, 1)", "(_nan(1),)",
           "Decimal('-0')", "Decimal('0.0')"]  # fmt: skip
#: Conditions on the scalar ``v`` that a drawn function branches on.
READINGS = ["_sign(v) < 0", "type(v) is bool", "v != v", "_bits(v) % 3 == 0", "isinstance(v, np.generic)"]
LAYOUTS = ["contiguous", "shifted", "reversed", "gapped", "broadcast"]
FUZZ_DTYPES = ["uint8", "bool", "float16", "float32", "int64", "complex128"]
MOST_ELEMENTS = 2048  # per value a drawn function makes


def _sign(v):
    """The sign of the first number in ``v`` (a tuple's items too), as ``math.copysign`` reads it."""
    for u in v if type(v) is tuple else (v,):
        if isinstance(u, (numbers.Number, np.bool_)):
            return math.copysign(1.0, u.real)
    return 1.0


def _bits(v):
    """A number of every byte of ``v``."""
    return zlib.crc32(pickle.dumps(v))


def _laid_out(x, layout, xp=np):
    """``x``'s values in a view of ``layout``: C-contiguous, C-contiguous one word (at most 8
    bytes) past a 16-byte-aligned address, reversed on the first axis, every other element of a
    wider array, or the first row broadcast along the first axis (the values change)."""
    if layout == "broadcast":
        return xp.broadcast_to(x[:1], x.shape)
    if layout == "contiguous":
        return x
    if layout == "shifted":
        # (CuPy's own kernels, its copies among them, take a complex128 array as 16-byte aligned)
        word = 16 if xp is not np and x.dtype.itemsize == 16 else min(x.itemsize, 8)
        view = aligned_empty(x.nbytes + word, xp)[word:].view(x.dtype).reshape(x.shape)
    elif layout == "reversed":
        view = xp.empty_like(x)[::-1]
    else:
        view = xp.empty((*x.shape[:-1], 2 * x.shape[-1]), x.dtype)[..., ::2]
    view[...] = x
    return view


def _split_sizes(n, parts):
    """The sizes of ``numpy.array_split``'s parts."""
    return [n // parts + (k < n % parts) for k in range(parts)]


def _regroup(draw, size):
    """A shape of 1 to 11 dimensions holding ``size`` elements."""
    shape = [1] * draw(st.integers(1, 11))
    rest, p = size, 2
    while rest > 1:
        while rest % p == 0:
            shape[draw(st.integers(0, len(shape) - 1))] *= p
            rest //= p
        p += 1
    return tuple(shape)


def _call(draw, shape, dtype, same_shape):
    """A drawn call on ``y`` of ``shape`` (as code) and its result's shape: one that keeps the
    shape, or with ``same_shape`` false, any. Calls that record a node of ``y``'s own shape only
    where a tensor holds its dimensions."""
    rank, size = len(shape), math.prod(shape)
    held = rank + (np.dtype(dtype).itemsize == 16) <= 8
    axis = draw(st.integers(0, rank - 1))
    calls = ["flip", "roll", "rejoin", "reversed"]
    if not same_shape:
        calls += ["twice", "stack", "part", "flat", "regroup", "new_axis"]
        calls += ["index", "pad", "split"] if held else []
    call = draw(st.sampled_from(calls))
    n = shape[axis]
    if call == "flip":
        return f"cnp.flip(y, {draw(st.sampled_from([None, axis]))})", shape
    if call == "roll":
        return f"cnp.roll(y, {draw(st.integers(-3, 3))}, axis={axis})", shape
    if call == "rejoin":
        return f"cnp.concatenate(cnp.array_split(y, {draw(st.integers(1, 3))}, axis={axis})[::-1], axis={axis})", shape
    if call == "reversed":
        return f"y.reshape(-1)[::-1].reshape({shape})", shape
    if call == "twice" and 2 * size <= MOST_ELEMENTS:
        return f"cnp.concatenate([y, cnp.flip(y, {axis})], axis={axis})", (*shape[:axis], 2 * n, *shape[axis + 1 :])
    if call == "stack" and 2 * size <= MOST_ELEMENTS and rank < 12:
        at = draw(st.integers(0, rank))
        return f"cnp.stack([y, cnp.roll(y, 1, axis={axis})], axis={at})", (*shape[:at], 2, *shape[at:])
    if call == "part":
        parts = draw(st.integers(1, 3))
        k = draw(st.integers(0, parts - 1))
        along = _split_sizes(n, parts)[k]
        return f"cnp.array_split(y, {parts}, axis={axis})[{k}]", (*shape[:axis], along, *shape[axis + 1 :])
    if call == "flat":
        start, step = draw(st.integers(0, 3)), draw(st.sampled_from([1, 2, -1, -3]))
        return f"y.reshape(-1)[{start}::{step}]", (len(range(size)[start::step]),)
    if call == "regroup" and size:
        new = _regroup(draw, size)
        return f"y.reshape{new}", new
    if call == "new_axis" and rank < 12:
        at = draw(st.integers(0, rank))
        return f"y[{'..., ' if at == rank else ':, ' * at}None]", (*shape[:at], 1, *shape[at:])
    if call == "index":
        key, out = [], []
        for at, d in enumerate(shape):
            if d and draw(st.integers(0, 4)) == 0 and (out or at < rank - 1):  # (ints alone give NumPy a scalar)
                key.append(str(draw(st.integers(-d, d - 1))))
                continue
            start, stop = draw(st.sampled_from([None, 0, 1, -1])), draw(st.sampled_from([None, 2, -1]))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            bounds = (start, stop) if step is None else (start, stop, step)
            key.append(":".join("" if b is None else str(b) for b in bounds))
            out.append(len(range(d)[start:stop:step]))
        return f"y[{', '.join(key)},]", tuple(out)
    if call == "pad" and size and 2 * size <= MOST_ELEMENTS:
        widths = [(draw(st.integers(0, 1)), draw(st.integers(0, 1))) for _ in shape]
        return f"cnp.pad(y, {widths})", tuple(d + a + b for d, (a, b) in zip(shape, widths))
    if call == "split" and n:
        parts = draw(st.sampled_from([p for p in (1, 2, 3) if n % p == 0]))
        k = draw(st.integers(0, parts - 1))
        code = f"cd.split(y, parts={parts}, axis={axis}, directml_types=False)[{k}]"
        return code, (*shape[:axis], n // parts, *shape[axis + 1 :])
    return f"cnp.flip(y, {axis})", shape


@dataclass
class FusedCase:
    """A drawn function (its source), the shape and dtype of its array, and its calls: per call,
    the seed of the array's bits, its layout and the scalar (as code)."""

    source: str
    shape: tuple
    dtype: str
    calls: list

    def text(self):
        """The case as Python (with this file's helpers)."""
        return "\n".join(
            [
                "from tests.test_fuse import Decimal, _bits, _laid_out, _nan, _nan32, _same, _sign, cd, cnp, np",
                "from cudadml.testing import random_array",
                self.source,
                "fused = cd.fuse(fn)",
                f"for seed, layout, v in [{', '.join(f'({s}, {layout!r}, {v})' for s, layout, v in self.calls)}]:",
                f"    x = _laid_out(random_array({self.shape}, {self.dtype!r}, np.random.default_rng(seed)), layout)",
                "    _same(fused(x, v), fn(x, v))",
            ]
        )


@st.composite
def fused_cases(draw):
    dtype = draw(st.sampled_from(FUZZ_DTYPES))
    high, most = (8, 8) if dtype == "complex128" else (9, 11)  # from high on, more than a tensor holds
    rank = draw(st.one_of(st.integers(1, high - 1), st.integers(high, most)))
    shape = [draw(st.integers(1, 3)) for _ in range(rank)]
    while math.prod(shape) > 256:
        shape[shape.index(max(shape))] -= 1
    shape = first = tuple(shape)
    lines = ["def fn(x, v):", "    y = x"]
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 2)) == 0:  # a branch on the scalar
            (a, _), (b, _) = _call(draw, shape, dtype, True), _call(draw, shape, dtype, True)
            lines += [f"    if {draw(st.sampled_from(READINGS))}:", f"        y = {a}", "    else:", f"        y = {b}"]
        else:
            code, shape = _call(draw, shape, dtype, False)
            lines.append(f"    y = {code}")
    lines.append(f"    return {draw(st.sampled_from(['y', '(y, x)', '[y, (x[None], y)]']))}")
    calls = [
        (draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(SCALARS)))
        for _ in range(draw(st.integers(1, 4)))
    ]
    return FusedCase("\n".join(lines), first, dtype, calls)


def _check_fused_case(xp, poisoned, case):
    note(case.text())
    event(f"{len(case.shape)} dimensions" + (" of complex128" if case.dtype == "complex128" else ""))
    if "    if " in case.source:
        event("branches on its scalar")
    names = {"np": np, "cd": cd, "cnp": cnp, "Decimal": Decimal, "_sign": _sign, "_bits": _bits}
    names |= {"_nan": _nan, "_nan32": _nan32}
    exec(case.source, names)
    fn = names["fn"]
    fused = cd.fuse(fn)
    for seed, layout, scalar in case.calls:
        x = _laid_out(random_array(case.shape, case.dtype, np.random.default_rng(seed), xp), layout, xp)
        v = eval(scalar, names)
        try:
            want = fn(x, v)
        except Exception as e:  # the traced calls must refuse it in the same words
            event(f"refused: {type(e).__name__}")
            with pytest.raises(type(e)) as got:
                fused(x, v)
            assert str(got.value) == str(e)
            continue
        _same(fused(x, v), want)
        assert poisoned()


FUZZ_SHORT = settings(
    max_examples=30, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
FUZZ_LONG = settings(
    max_examples=4000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ_SHORT
@given(case=fused_cases())
def test_random_functions_fused_are_eager(xp, poisoned, case):
    _check_fused_case(xp, poisoned, case)


@pytest.mark.fuzz
@FUZZ_LONG
@given(case=fused_cases())
def test_many_random_functions_fused_are_eager(xp, poisoned, case):
    _check_fused_case(xp, poisoned, case)


# ---- refusals -----------------------------------------------------------------------------------------


def _apart(what):
    return re.escape(f"cudadml.fuse: {what} on a traced array would run apart from the fused graph")


CONSTANT = np.ones(3, np.float32)
REFUSED = [
    (lambda x: x + 1, _apart("the operator +")),
    (lambda x: -x[0], _apart("the operator unary -")),
    (lambda x: np.asarray(x), _apart("numpy.asarray (__array__)")),
    (lambda x: x[0, 0] * float(x[0, 0]), _apart("float()")),
    (lambda x: x.sum(), _apart("x.sum")),
    (lambda x: np.sin(x), _apart("numpy.sin")),
    (lambda x: np.add.reduce(x), _apart("numpy.add.reduce")),
    (lambda x: np.concatenate([x, x]), _apart("numpy.concatenate (cudadml.numpy.concatenate is traced)")),
    (lambda x: cnp.pad(x, 1, constant_values=5), "cudadml.fuse: pad with a constant other than 0"),
    (lambda x: cnp.roll(x, 1, axis=(0, 1)), "cudadml.fuse: slice1_batch_grad adds"),
    (lambda x: cd.join([x, x], out=np.empty((8, 6), np.float32)), re.escape("cudadml.fuse: join(..., out=...)")),
    (
        lambda x: cnp.concatenate([x, x], out=np.empty((8, 6), np.float32)),
        "cudadml.fuse: out= with a traced array",
    ),
    (lambda x: cd.strided_slice(x, 1, stream=1), re.escape("cudadml.fuse: strided_slice(..., stream=...)")),
    (
        lambda x: cd.join([x[0, :3], CONSTANT]),
        "cudadml.fuse: join: xs.1. is a numpy.ndarray, not a traced array",
    ),
    (lambda x: cnp.concatenate([x, x.view(np.int32)]), _apart("x.astype")),
    (lambda x: x.T, _apart("x.T")),
    (lambda x: [x[0] == x[1]], _apart("the operator ==")),
    (lambda x: x.__setitem__(0, 1), _apart("item assignment (x[...] = ...)")),
    (lambda x: None, "cudadml.fuse: <lambda> returned a NoneType"),
    (lambda x: x.shape, "cudadml.fuse: <lambda> returned a int"),
]


@pytest.mark.parametrize(("fn", "message"), REFUSED)
def test_what_would_run_apart_is_refused_by_name(rng, fn, message):
    x = random_array((4, 6), np.float32, rng)
    with pytest.raises(TypeError, match=message):
        cd.fuse(fn)(x)


def test_arguments_are_refused_by_name(rng):
    fused = cd.fuse(lambda x, table: x)
    x = random_array((4,), np.float32, rng)
    with pytest.raises(TypeError, match=r"cudadml.fuse: table is a dict, which is not hashable"):
        fused(x, table={})
    with pytest.raises(TypeError, match=r"cudadml.fuse: args\[1\]\[0\]\[1\] is a dict, which is not hashable"):
        fused(x, [(1, {})])
    with pytest.raises(TypeError, match=r"cudadml\.fuse: <lambda> was given no array to trace"):
        fused(1, 2)
    with pytest.raises(TypeError, match="a MaskedArray, a NumPy subclass"):
        fused(np.ma.masked_array(x), None)
    with pytest.raises(TypeError, match=r"cudadml\.fuse takes a function, not int"):
        cd.fuse(3)


def test_a_traced_array_that_escapes_has_no_values(rng):
    kept = []
    fused = cd.fuse(lambda x: kept.append(x) or x[::-1])
    x = random_array((4,), np.float32, rng)
    fused(x)
    with pytest.raises(TypeError, match="used after its fused function returned"):
        cd.join([kept[0], kept[0]])
    with pytest.raises(TypeError, match="used after its fused function returned"):
        np.asarray(kept[0])


# ---- PyTorch ------------------------------------------------------------------------------------------


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _integers(torch, shape, generator, device="cpu", dtype=None):
    """Small integers as floats: any order of adding them gives the same bits."""
    dtype = dtype or torch.float64
    return torch.randint(-8, 9, shape, generator=generator, dtype=torch.int64).to(dtype=dtype, device=device)


def _leaves(result):
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


def _check_torch(torch, fn, shape, *extra, device="cpu", seed=0, dtype=None):
    generator = torch.Generator().manual_seed(seed)
    fused = cd.fuse(fn)
    x = _integers(torch, shape, generator, device, dtype).requires_grad_()
    got, expected = _leaves(fused(x, *extra)), _leaves(fn(x, *extra))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype and g.device == e.device and g.is_contiguous() and torch.equal(g, e)
        assert g.grad_fn is not None and type(g.grad_fn).__name__ == "FusedCallBackward"
    grads = [_integers(torch, e.shape, generator, device, e.dtype) for e in expected]
    (fused_grad,) = torch.autograd.grad(got, x, grads)
    (eager_grad,) = torch.autograd.grad(expected, x, grads)
    assert torch.equal(fused_grad, eager_grad)
    return fused


@pytest.mark.parametrize("case", ["focus", "qkv_heads", "crops", "rejoin_reversed", "gradients"])
def test_torch_forward_and_backward(torch, case):
    fn, shape, extra = CASES[case]
    _check_torch(torch, fn, shape, *extra)


def test_torch_gradients_of_shared_values_are_added(torch):
    """An input fed to several calls and returned, an intermediate used twice, parts of a split
    used twice or never: each gradient contribution is an output of the one backward graph."""

    def fn(x):
        a, b, _ = cd.split(x, split_sizes=[1, 2, 3], axis=0)  # the last part's gradient is zeros
        return cd.join([b, b, x[::2]], axis=0), cd.join([a, b], axis=0), x, cd.strided_slice(x, np.s_[1:, ::-1])

    fused = _check_torch(torch, fn, (6, 5))
    (program,) = fused._programs.values()
    backward = next(iter(program.backwards.values()))
    assert len(backward.targets) > 1 and set(backward.targets) == {0}
    (run,) = backward.graphs.values()
    assert " in 1 launch" in repr(run.compiled.op)


def test_torch_gradient_of_a_slice_that_reads_elements_again(torch):
    _check_torch(torch, lambda x: cd.slice(x, offsets=[1, 0], sizes=[3, 4], strides=[0, 1]), (3, 4))


def test_torch_gradcheck_and_second_derivatives(torch):
    fused = cd.fuse(lambda x: focus(x)[:, 1:])
    x = torch.randn(1, 2, 4, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(fused, (x,))
    assert torch.autograd.gradgradcheck(fused, (x,))


def test_torch_without_grad_forward_mode_and_transforms(torch):
    fused = cd.fuse(focus)
    x = torch.randn(2, 2, 4, 6)
    y = fused(x)
    assert y.grad_fn is None and torch.equal(y, focus(x))
    with torch.no_grad():
        assert fused(x.requires_grad_()).grad_fn is None
    tangent = torch.randn(2, 2, 4, 6)
    import torch.autograd.forward_ad as fw

    with fw.dual_level():
        dual = fused(fw.make_dual(x.detach(), tangent))
        assert torch.equal(fw.unpack_dual(dual).tangent, focus(tangent))
    samples = torch.randn(3, 2, 2, 4, 6)
    batched = torch.func.vmap(fused)(samples)  # under a transform: the eager calls, which it sees
    assert torch.equal(batched, torch.stack([focus(s) for s in samples]))
    parameter = torch.nn.Parameter(torch.randn(1, 2, 4, 4))
    fused(parameter).sum().backward()
    assert torch.equal(parameter.grad, torch.ones_like(parameter))


@pytest.mark.parametrize("requires_grad", [True, False], ids=["requires_grad", "frozen"])
def test_torch_a_parameter_is_a_plain_tensor_to_fused_and_eager_calls_alike(torch, monkeypatch, requires_grad):
    """One rule (``interop.torch.watched``) for both: a parameter runs as the plain tensor it
    holds, fused as one node that autograd records where it requires grad, eagerly as the
    array functions' own nodes; neither goes through ``torch.ops.cudadml`` (the route of
    subclasses, transforms and modes), which a subclass takes on both."""
    from cudadml.interop import torch as adapter

    called, real = [], adapter._call_operator
    monkeypatch.setattr(adapter, "_call_operator", lambda op, *a: called.append(op.function) or real(op, *a))

    def fn(x):  # the array functions called on the parameter itself
        return cd.join([cd.strided_slice(x, np.s_[:, ::-1, ::2]), *cd.split(x, parts=2, axis=2)], axis=2)

    fused = cd.fuse(fn)
    values = torch.randn(2, 4, 6, dtype=torch.float64)
    parameter = torch.nn.Parameter(values.clone(), requires_grad)
    got = fused(parameter)
    assert called == []
    expected = fn(parameter)
    assert called == [] and torch.equal(got, expected)
    assert type(got.grad_fn).__name__ == ("FusedCallBackward" if requires_grad else "NoneType")
    assert type(expected.grad_fn).__name__ == ("JoinBackward" if requires_grad else "NoneType")
    if requires_grad:
        grad = torch.randn_like(expected)
        (fused_grad,) = torch.autograd.grad(got, parameter, grad)
        (eager_grad,) = torch.autograd.grad(expected, parameter, grad)
        assert torch.equal(fused_grad, eager_grad)
    with torch.no_grad():
        assert fused(parameter).grad_fn is None and fn(parameter).grad_fn is None and called == []

    class Marked(torch.Tensor):
        pass

    marked = torch.nn.Parameter(values.clone(), requires_grad).as_subclass(Marked)
    got = fused(marked)
    assert type(got) is Marked and torch.equal(got, expected) and len(called) > 0
    eager = list(called)
    called.clear()
    fn(marked)
    assert called == eager


def test_torch_dtypes_numpy_lacks(torch):
    fused = cd.fuse(lambda x: cd.join([x[1:], x[:1]], axis=0, directml_types=False))
    x = torch.randn(4, 3).to(torch.bfloat16)
    y = fused(x)
    assert y.dtype == torch.bfloat16 and torch.equal(y, torch.cat([x[1:], x[:1]]))


def test_torch_each_call_runs_on_its_own_tensors(torch):
    """Conjugate and negative views (read as their values: copies), offsets, strides and
    transposes, alternating: each call gives the eager values."""

    def fn(z):
        parts = [cd.strided_slice(z, key, directml_types=False) for key in (np.s_[::-1], np.s_[:, 1:])]
        return cd.join(parts, axis=1, directml_types=False)

    fused = cd.fuse(fn)
    z = torch.randn(4, 6, dtype=torch.complex64)
    big = torch.zeros(4, 9, dtype=torch.complex64)
    offsets = [big[:, k : k + 6] for k in range(3)]  # 8-byte elements: addresses 0, 8, 16 past z's
    for view in offsets:
        view.copy_(z)
    transposed = z.t().contiguous().t()
    tensors = [z, z.conj(), offsets[1], offsets[1].conj(), transposed, torch._neg_view(z), offsets[2]]
    for t in tensors + tensors[::-1]:
        assert torch.equal(fused(t), fn(t.resolve_conj().resolve_neg()))
    real = cd.fuse(lambda x: cd.strided_slice(x, np.s_[::-1]))
    for t in (torch._neg_view(z.real), z.real, torch._neg_view(z.real)):
        assert torch.equal(real(t), -z.real.flip(0) if t.is_neg() else z.real.flip(0))


def test_torch_results_are_tensors_of_their_own(torch):
    """Each result is its own tensor, as torch's own ops return them: writing one moves no
    other's version counter (which autograd checks of a tensor it saved)."""
    fused = cd.fuse(lambda x: cd.split(x, split_sizes=[1, 3, 2], axis=1))
    x = torch.randn(2, 6, 3)
    parts = fused(x)
    versions = [p._version for p in parts]
    parts[1].add_(1)
    assert [p._version for p in parts] == [versions[0], versions[1] + 1, versions[2]]
    w = torch.randn(2, 2, 3, requires_grad=True)
    product = (w * parts[2]).sum()  # saves parts[2] for the backward
    parts[0].add_(1)
    product.backward()
    assert torch.equal(w.grad, parts[2])


def test_torch_devices_other_than_cpu_and_cuda_are_refused(torch):
    with pytest.raises(TypeError, match="tensors on meta are not supported"):
        cd.fuse(focus)(torch.empty(2, 2, 4, 4, device="meta"))


@pytest.mark.gpu
def test_torch_on_the_gpu(torch):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    for case in ("focus", "qkv_heads", "gradients"):
        fn, shape, extra = CASES[case]
        _check_torch(torch, fn, shape, *extra, device="cuda")

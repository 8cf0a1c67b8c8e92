"""``CompiledOperator.execute`` on NumPy buffers: DirectML's binding rules, and exact results.

Every run binds fresh random inputs and poisoned, canaried outputs (``cudadml.testing``). A
binding that breaks a rule must raise ``BindingError`` before anything runs: every byte of
every buffer involved is compared before and after.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import replace

import numpy as np
import pytest

import cudadml as cd
from cudadml import TensorDataType as T
from cudadml.core import overlap
from cudadml.testing import POISON, TensorBuffer, aligned_empty, random_array

F32 = T.FLOAT32
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def tensor(sizes, data_type=F32, **kw):
    return cd.BufferTensorDesc(data_type, sizes, **kw)


def assert_same_bits(actual, expected):
    """Exact equality of the bit patterns (random floats include NaNs with payloads)."""
    actual, expected = np.ascontiguousarray(actual), np.ascontiguousarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    unsigned = _UNSIGNED[actual.dtype.itemsize]
    assert np.array_equal(actual.view(unsigned), expected.view(unsigned))


# ---------------------------------------------------------------------------------------------
# Descriptors. Each ``*_desc`` takes the data type and per-tensor keyword arguments, and comes
# with the NumPy expression of its result.


def slice_desc(dtype=F32, input_kw=None, output_kw=None):
    return cd.SliceOperatorDesc(
        tensor((1, 1, 4, 4), dtype, **(input_kw or {})),
        tensor((1, 1, 2, 2), dtype, **(output_kw or {})),
        [0, 0, 1, 2],
        [1, 1, 2, 2],
        [1, 1, 1, 1],
    )


def slice_expected(x):
    return [x[:, :, 1:3, 2:4]]


def slice_repeat_desc(dtype=F32, input_kw=None, output_kw=None):  # stride 0 repeats one column
    return cd.SliceOperatorDesc(
        tensor((2, 3, 5), dtype, **(input_kw or {})),
        tensor((2, 2, 3), dtype, **(output_kw or {})),
        [0, 1, 4],
        [2, 2, 3],
        [1, 1, 0],
    )


def slice_repeat_expected(x):
    return [np.repeat(x[:, 1:3, 4:5], 3, axis=2)]


def slice1_desc(dtype=F32, input_kw=None, output_kw=None):  # SLICE1's negative-stride example
    return cd.Slice1OperatorDesc(
        tensor((1, 1, 4, 4), dtype, **(input_kw or {})),
        tensor((1, 1, 2, 2), dtype, **(output_kw or {})),
        [0, 0, 0, 1],
        [1, 1, 4, 3],
        [1, 1, -2, 2],
    )


def slice1_expected(x):
    return [x[:, :, 3::-2, 1:4:2]]


def grad_desc(dtype=F32, input_kw=None, output_kw=None):
    return cd.SliceGradOperatorDesc(
        tensor((1, 1, 2, 2), dtype, **(input_kw or {})),
        tensor((1, 1, 4, 4), dtype, **(output_kw or {})),
        [0, 0, 0, 1],
        [1, 1, 4, 3],
        [1, 1, -2, 2],
    )


def grad_expected(dy):
    dx = np.zeros((1, 1, 4, 4), dy.dtype)
    dx[:, :, 3::-2, 1:4:2] = dy
    return [dx]


SPLIT_PARTS = ((1, 1, 2, 2), (1, 1, 1, 2), (1, 1, 3, 2))


def split_desc(dtype=F32, input_kw=None, output_kw=None):
    return cd.SplitOperatorDesc(
        tensor((1, 1, 6, 2), dtype, **(input_kw or {})),
        [tensor(s, dtype, **(output_kw or {})) for s in SPLIT_PARTS],
        axis=2,
    )


def split_expected(x):
    return np.split(x, [2, 3], axis=2)


def join_desc(dtype=F32, input_kw=None, output_kw=None):
    return cd.JoinOperatorDesc(
        [tensor(s, dtype, **(input_kw or {})) for s in SPLIT_PARTS],
        tensor((1, 1, 6, 2), dtype, **(output_kw or {})),
        axis=2,
    )


def join_expected(*xs):
    return [np.concatenate(xs, axis=2)]


KEEP = object()


class Setup:
    """A compiled operator, its inputs filled with random data, its outputs poisoned.

    ``inputs``/``outputs`` are the bindings ``execute`` gets; ``rebind`` changes one and
    records its buffer, so ``watched`` holds every buffer a run could touch.
    """

    def __init__(self, desc, seed, input_alignment=0, output_alignment=0):
        rng = np.random.default_rng(seed)
        self.desc = desc
        self.compiled = desc.compile()
        self.in_bufs = [
            TensorBuffer(t, offset_alignment=input_alignment).fill(random_array(t.sizes, t.data_type.numpy_dtype, rng))
            for t in desc.input_tensors
        ]
        self.out_bufs = [TensorBuffer(t, offset_alignment=output_alignment) for t in desc.output_tensors]
        self.inputs = [b.binding for b in self.in_bufs]
        self.outputs = [b.binding for b in self.out_bufs]
        self.watched = [b.raw for b in (*self.in_bufs, *self.out_bufs)]

    def rebind(self, role, k, *, buffer=KEEP, offset=KEEP, size=KEEP):
        """Replace binding ``k`` of ``role`` ("inputs"/"outputs"); fields not given keep their value
        (``size=None`` means the rest of the buffer)."""
        bindings = getattr(self, role)
        changes = {
            name: value
            for name, value in (("buffer", buffer), ("offset", offset), ("size_in_bytes", size))
            if value is not KEEP
        }
        bindings[k] = replace(bindings[k], **changes)
        if buffer is not KEEP:
            self.watched.append(buffer.base if buffer.base is not None and not buffer.flags.c_contiguous else buffer)
        return self

    def snapshot(self):
        return [(buf, buf.copy()) for buf in self.watched]

    def execute(self):
        self.compiled.execute(self.inputs, self.outputs)


def assert_unchanged(snapshot):
    for buf, before in snapshot:
        assert buf.tobytes() == before.tobytes()


def noncontiguous_buffer():
    base = aligned_empty(1024)
    base[...] = POISON
    return base[::2]


def readonly(s):
    s.out_bufs[0].raw.flags.writeable = False
    return s


# ---------------------------------------------------------------------------------------------
# (descriptor, mutation of the Setup, message). Output TensorBuffers put the tensor at byte 64
# of a 256-aligned buffer of 64 + TotalTensorSizeInBytes + 64 bytes: Slice's output occupies
# [64, 80) of 144 bytes, its input [64, 128) of 192 bytes.
VIOLATIONS = [
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, size=12),
        "outputs[0]: the bound range of 12 bytes is smaller than TotalTensorSizeInBytes = 16",
        id="output-range-below-total",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("inputs", 0, size=60),
        "inputs[0]: the bound range of 60 bytes is smaller than TotalTensorSizeInBytes = 64",
        id="input-range-below-total",
    ),
    pytest.param(
        lambda: slice_desc(output_kw={"total_tensor_size_in_bytes": 48}),
        lambda s: s.rebind("outputs", 0, size=16),
        "outputs[0]: the bound range of 16 bytes is smaller than TotalTensorSizeInBytes = 48",
        id="output-range-below-padded-total",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, offset=128, size=32),
        "outputs[0]: the range [128, 160) lies outside the buffer's 144 bytes",
        id="output-range-past-end",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("inputs", 0, offset=-16, size=64),
        "inputs[0]: the range [-16, 48) lies outside the buffer's 192 bytes",
        id="input-negative-offset",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, offset=144, size=16),
        "outputs[0]: the range [144, 160) lies outside the buffer's 144 bytes",
        id="output-range-at-end",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, offset=72),
        "outputs[0]: the bound address is 8 bytes past a multiple of 16 (buffer tensors' minimum alignment)",
        id="output-address-not-16-aligned",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("inputs", 0, offset=68, size=64),
        "inputs[0]: the bound address is 4 bytes past a multiple of 16 (buffer tensors' minimum alignment)",
        id="input-address-not-16-aligned",
    ),
    pytest.param(
        lambda: slice_desc(output_kw={"guaranteed_base_offset_alignment": 64}),
        lambda s: s.rebind("outputs", 0, offset=96),
        "outputs[0]: the bound address is 32 bytes past a multiple of 64 (GuaranteedBaseOffsetAlignment)",
        id="output-address-16-but-not-64-aligned",
    ),
    pytest.param(
        lambda: slice_desc(input_kw={"guaranteed_base_offset_alignment": 64}),
        lambda s: s.rebind("inputs", 0, offset=80, size=64),
        "inputs[0]: the bound address is 16 bytes past a multiple of 64 (GuaranteedBaseOffsetAlignment)",
        id="input-address-16-but-not-64-aligned",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, buffer=s.in_bufs[0].raw, offset=96),
        "outputs[0] overlaps inputs[0] in memory",
        id="output-inside-input",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, buffer=s.in_bufs[0].raw, offset=112),
        "outputs[0] overlaps inputs[0] in memory",
        id="output-overlaps-input-tail",
    ),
    pytest.param(
        join_desc,
        lambda s: s.rebind("outputs", 0, buffer=s.in_bufs[2].raw, offset=64),
        "outputs[0] overlaps inputs[2] in memory",
        id="join-output-over-third-input",
    ),
    pytest.param(
        split_desc,
        lambda s: s.rebind("outputs", 1, buffer=s.out_bufs[0].raw, offset=64),
        "outputs[1] overlaps outputs[0] in memory",
        id="split-outputs-overlap",
    ),
    pytest.param(
        split_desc,
        lambda s: s.rebind("outputs", 2, buffer=s.out_bufs[0].raw, offset=64),
        "outputs[2] overlaps outputs[0] in memory",
        id="split-outputs-overlap-first-and-last",
    ),
    pytest.param(
        slice_desc,
        lambda s: setattr(s, "inputs", s.inputs * 2),
        "2 inputs bound; the operator has 1",
        id="too-many-inputs",
    ),
    pytest.param(
        slice_desc, lambda s: setattr(s, "outputs", []), "0 outputs bound; the operator has 1", id="no-outputs"
    ),
    pytest.param(
        split_desc,
        lambda s: setattr(s, "outputs", s.outputs[:2]),
        "2 outputs bound; the operator has 3",
        id="split-missing-output",
    ),
    pytest.param(
        join_desc,
        lambda s: setattr(s, "inputs", s.inputs[:1]),
        "1 inputs bound; the operator has 3",
        id="join-missing-inputs",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("outputs", 0, buffer=noncontiguous_buffer(), offset=0),
        "outputs[0]: the buffer must be a C-contiguous array (its bytes are the buffer)",
        id="output-noncontiguous-buffer",
    ),
    pytest.param(
        slice_desc,
        lambda s: s.rebind("inputs", 0, buffer=noncontiguous_buffer(), offset=0),
        "inputs[0]: the buffer must be a C-contiguous array (its bytes are the buffer)",
        id="input-noncontiguous-buffer",
    ),
    pytest.param(slice_desc, readonly, "outputs[0]: the buffer is read-only", id="output-read-only"),
    pytest.param(
        split_desc,
        lambda s: s.rebind("outputs", 2, size=8),
        "outputs[2]: the bound range of 8 bytes is smaller than TotalTensorSizeInBytes = 24",
        id="split-last-output-range-below-total",
    ),
]


@pytest.mark.parametrize(("make_desc", "mutate", "message"), VIOLATIONS)
def test_binding_violation_raises_and_writes_nothing(make_desc, mutate, message):
    s = Setup(make_desc(), seed=1234)
    mutate(s)
    before = s.snapshot()
    with pytest.raises(cd.BindingError, match=re.escape(message)) as e:
        s.execute()
    assert isinstance(e.value, ValueError)
    assert all(line.startswith(f"{s.desc.NAME}.execute: ") for line in e.value.violations), e.value.violations
    assert_unchanged(before)


def test_binding_violations_are_collected_into_one_error():
    s = Setup(slice_desc(output_kw={"guaranteed_base_offset_alignment": 64}), seed=7)
    s.rebind("inputs", 0, offset=72, size=60)
    s.rebind("outputs", 0, offset=80, size=8)
    before = s.snapshot()
    with pytest.raises(cd.BindingError) as e:
        s.execute()
    assert list(e.value.violations) == [
        "Slice.execute: inputs[0]: the bound range of 60 bytes is smaller than TotalTensorSizeInBytes = 64",
        "Slice.execute: inputs[0]: the bound address is 8 bytes past a multiple of 16 "
        "(buffer tensors' minimum alignment)",
        "Slice.execute: outputs[0]: the bound range of 8 bytes is smaller than TotalTensorSizeInBytes = 16",
        "Slice.execute: outputs[0]: the bound address is 16 bytes past a multiple of 64 "
        "(GuaranteedBaseOffsetAlignment)",
    ]
    assert_unchanged(before)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        pytest.param(
            lambda s: setattr(s, "outputs", [[0] * 16]),
            "Slice.execute: outputs[0] must be a NumPy/CuPy array or a BufferBinding of one, not list",
            id="list-as-output",
        ),
        pytest.param(
            lambda s: setattr(s, "inputs", [cd.BufferBinding(list(range(16)), 0, 64)]),
            "Slice.execute: inputs[0] must be a NumPy/CuPy array or a BufferBinding of one, not list",
            id="binding-of-list-as-input",
        ),
        pytest.param(
            lambda s: setattr(s, "inputs", [bytearray(192)]),
            "Slice.execute: inputs[0] must be a NumPy/CuPy array or a BufferBinding of one, not bytearray",
            id="bytearray-as-input",
        ),
    ],
)
def test_binding_of_wrong_type_raises_type_error(mutate, message):
    s = Setup(slice_desc(), seed=99)
    mutate(s)
    before = s.snapshot()
    with pytest.raises(TypeError, match=re.escape(message)):
        s.execute()
    assert_unchanged(before)


# ---------------------------------------------------------------------------------------------
# (descriptor, its NumPy result, Setup keyword arguments, mutation): each must run, give
# exactly NumPy's result, and leave every byte that is not an output element poisoned.
WORKS = [
    pytest.param(slice_desc, slice_expected, {}, None, id="slice"),
    pytest.param(
        lambda d: slice_desc(d, output_kw={"total_tensor_size_in_bytes": 64}),
        slice_expected,
        {},
        None,
        id="slice-output-total-above-minimum",
    ),
    pytest.param(
        lambda d: slice_desc(d, input_kw={"total_tensor_size_in_bytes": 256}),
        slice_expected,
        {},
        None,
        id="slice-input-total-above-minimum",
    ),
    pytest.param(
        slice_desc, slice_expected, {}, lambda s: s.rebind("outputs", 0, size=48), id="slice-output-range-above-total"
    ),
    pytest.param(
        slice_desc,
        slice_expected,
        {},
        lambda s: s.rebind("inputs", 0, size=None),
        id="slice-input-range-rest-of-buffer",
    ),
    pytest.param(
        lambda d: slice_desc(d, output_kw={"total_tensor_size_in_bytes": 64}),
        slice_expected,
        {},
        lambda s: s.rebind("outputs", 0, size=96),
        id="slice-output-total-and-range-above-minimum",
    ),
    pytest.param(
        lambda d: slice_desc(d, output_kw={"strides": (16, 16, 8, 2)}),
        slice_expected,
        {},
        None,
        id="slice-output-padded-strides",
    ),
    pytest.param(
        lambda d: slice_desc(d, output_kw={"guaranteed_base_offset_alignment": 64}),
        slice_expected,
        {"output_alignment": 64},
        None,
        id="slice-output-alignment-64-at-64",
    ),
    pytest.param(
        lambda d: slice_desc(d, output_kw={"guaranteed_base_offset_alignment": 64}),
        slice_expected,
        {"output_alignment": 128},
        None,
        id="slice-output-alignment-64-at-128",
    ),
    pytest.param(
        lambda d: slice_desc(
            d, input_kw={"guaranteed_base_offset_alignment": 64}, output_kw={"guaranteed_base_offset_alignment": 64}
        ),
        slice_expected,
        {"input_alignment": 64, "output_alignment": 64},
        None,
        id="slice-both-alignment-64",
    ),
    pytest.param(
        slice_desc, slice_expected, {}, lambda s: s.in_bufs[0].raw.setflags(write=False), id="slice-read-only-input"
    ),
    pytest.param(slice_repeat_desc, slice_repeat_expected, {}, None, id="slice-stride-0"),
    pytest.param(
        lambda d: slice1_desc(d, output_kw={"total_tensor_size_in_bytes": 80}),
        slice1_expected,
        {},
        None,
        id="slice1-negative-stride-padded-total",
    ),
    pytest.param(
        lambda d: grad_desc(d, output_kw={"total_tensor_size_in_bytes": 128}),
        grad_expected,
        {},
        None,
        id="slicegrad-padded-total",
    ),
    pytest.param(
        lambda d: grad_desc(d, output_kw={"strides": (32, 32, 8, 1)}),
        grad_expected,
        {},
        None,
        id="slicegrad-padded-rows",
    ),
    pytest.param(
        lambda d: split_desc(d, output_kw={"guaranteed_base_offset_alignment": 64}),
        split_expected,
        {"output_alignment": 64},
        lambda s: s.rebind("outputs", 1, size=64),
        id="split-aligned-outputs",
    ),
    # inputs may overlap each other: input 1 reads the first elements of input 0
    pytest.param(
        join_desc, join_expected, {}, lambda s: s.rebind("inputs", 1, buffer=s.in_bufs[0].raw), id="join-inputs-overlap"
    ),
]

DTYPES = [np.float32, np.float16, np.int8, np.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize(("make_desc", "expected", "setup_kw", "mutate"), WORKS)
def test_valid_bindings_execute_exactly(make_desc, expected, setup_kw, mutate, dtype, request):
    s = Setup(make_desc(T.from_dtype(dtype)), seed=zlib.crc32(request.node.name.encode()), **setup_kw)
    if mutate is not None:
        mutate(s)
    inputs_before = [(b.raw, b.raw.copy()) for b in s.in_bufs]
    s.execute()
    # what the inputs' bindings point at, read back through their tensor descriptions
    xs = [_elements_of(binding, t) for binding, t in zip(s.inputs, s.desc.input_tensors)]
    want = expected(*xs)
    assert len(want) == len(s.out_bufs)
    for out, w in zip(s.out_bufs, want):
        assert_same_bits(out.host_elements(), w)
        assert out.untouched_outside()
    assert_unchanged(inputs_before)


def _elements_of(binding, t):
    """The elements of tensor ``t`` in the range ``binding`` binds."""
    dtype = t.data_type.numpy_dtype
    raw = binding.buffer[binding.offset :]
    return np.lib.stride_tricks.as_strided(
        raw[: t.total_tensor_size_in_bytes].view(dtype),
        shape=t.sizes,
        strides=[s * dtype.itemsize for s in t.effective_strides],
    ).copy()


def test_inputs_and_output_adjacent_in_one_buffer():
    """Overlap is half-open: an output starting right where an input's range ends is fine."""
    rng = np.random.default_rng(5)
    desc = slice_desc()
    raw = aligned_empty(256)
    raw[...] = POISON
    x = random_array((1, 1, 4, 4), np.float32, rng)
    raw[64:128] = x.view(np.uint8).ravel()
    desc.compile().execute([cd.BufferBinding(raw, 64, 64)], [cd.BufferBinding(raw, 128, 16)])
    assert_same_bits(raw[128:144].view(np.float32).reshape(1, 1, 2, 2), slice_expected(x)[0])
    assert_same_bits(raw[64:128].view(np.float32).reshape(x.shape), x)
    assert np.all(raw[:64] == POISON) and np.all(raw[144:] == POISON)


def test_output_total_size_reaching_into_input_shares_no_element():
    """Overlap is decided on elements: an output whose TotalTensorSizeInBytes reaches into the
    input's range, while its elements end before it, is accepted and writes only its elements."""
    rng = np.random.default_rng(6)
    desc = slice_desc(output_kw={"total_tensor_size_in_bytes": 32})
    raw = aligned_empty(256)
    raw[...] = POISON
    x = random_array((1, 1, 4, 4), np.float32, rng)
    raw[64:128] = x.view(np.uint8).ravel()
    desc.compile().execute([cd.BufferBinding(raw, 64, 64)], [cd.BufferBinding(raw, 48, 32)])
    assert_same_bits(raw[48:64].view(np.float32).reshape(1, 1, 2, 2), slice_expected(x)[0])
    assert_same_bits(raw[64:128].view(np.float32).reshape(x.shape), x)
    assert np.all(raw[:48] == POISON) and np.all(raw[128:] == POISON)


def test_outputs_meet_agrees_with_every_pair(rng):
    """The vectorised extent check of many bindings against the pairwise rule: an output's
    extent may meet no other binding's; inputs may meet each other."""
    for _ in range(3000):
        n = int(rng.integers(1, 9))
        first_output = int(rng.integers(0, n + 1))
        lows = rng.integers(0, 60, n)
        highs = lows + rng.integers(1, 12, n)
        expected = any(
            lows[j] < highs[k] and lows[k] < highs[j] for k in range(first_output, n) for j in range(n) if j != k
        )
        assert overlap.outputs_meet(lows, highs, first_output) == expected


def test_remembered_bindings_are_forgotten_when_one_dies():
    """Ids identify remembered arrays only while they live: the death of one forgets them all,
    before its id can be reused."""
    from cudadml.run.bindings import _remembered

    class Array:
        pass

    arrays = [Array(), Array()]
    state = _remembered(arrays, ([1], [2]), 3)
    assert state[0] == tuple(map(id, arrays))
    del arrays[0]
    assert state[0] is None

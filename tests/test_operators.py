"""Every operator against the NumPy oracle, through descriptors and buffer bindings.

Random valid descriptors (hypothesis): ranks 1 to 8, element widths 1/2/4/8, negative window
strides, zero-stride and padded input tensors, padded output tensors. Inputs hold fresh random
bits; outputs start poisoned inside canaried buffers, so an unwritten element or a stray write
fails. Runs on the reference backend and, with a GPU, on the kernels (``xp`` fixture).
"""

import dataclasses
import inspect
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cudadml as cd
from cudadml.examples import EXAMPLES
from cudadml.testing import TensorBuffer, random_array

TYPES = [cd.TensorDataType.UINT8, cd.TensorDataType.FLOAT16, cd.TensorDataType.INT32, cd.TensorDataType.FLOAT64]
HYPOTHESIS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def run(desc, inputs, xp):
    """Execute ``desc`` on canaried buffers holding ``inputs``; returns the output buffers."""
    bound_in = [TensorBuffer(t, xp).fill(v) for t, v in zip(desc.input_tensors, inputs)]
    bound_out = [TensorBuffer(t, xp) for t in desc.output_tensors]
    desc.compile().execute([b.binding for b in bound_in], [b.binding for b in bound_out])
    return bound_out


def stored(tensor, values):
    """``values`` as a buffer laid out like ``tensor`` holds them: where zero strides alias
    elements, the last write wins, so the oracle must read them back."""
    return TensorBuffer(tensor).fill(values).host_elements()


def assert_outputs(buffers, expected):
    assert len(buffers) == len(expected)
    for buffer, want in zip(buffers, expected):
        got = buffer.host_elements()
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == np.ascontiguousarray(want).tobytes()  # bit-exact, NaN payloads too
        assert buffer.untouched_outside(), "a byte outside the output's elements changed"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.name)
def test_worked_examples(example, xp):
    assert_outputs(run(example.desc, example.inputs, xp), example.expected)


# ---- random tensors ------------------------------------------------------------------------------


@st.composite
def layouts(draw, sizes, output=False):
    """Strides for ``sizes``: packed (None), padded, or (inputs only) broadcast with zeros."""
    kind = draw(st.sampled_from(["packed", "padded"] if output else ["packed", "padded", "broadcast"]))
    if kind == "packed":
        return None
    strides, step = [], 1
    for size in reversed(sizes):
        zero = kind == "broadcast" and draw(st.booleans())
        strides.append(0 if zero else step)
        step = step * size + (draw(st.integers(0, 3)) if kind == "padded" else 0)
    return tuple(reversed(strides))


@st.composite
def tensor(draw, data_type, sizes, output=False):
    strides = draw(layouts(sizes, output))
    minimum = cd.calc_buffer_tensor_size(data_type, sizes, strides)
    extra = draw(st.sampled_from([0, 0, 4, 36]))  # TotalTensorSizeInBytes past the minimum
    return cd.BufferTensorDesc(data_type, sizes, strides, total_tensor_size_in_bytes=minimum + extra)


@st.composite
def shapes(draw, min_rank=1, max_rank=8):
    rank = draw(st.integers(min_rank, max_rank))
    cap = {1: 40, 2: 12, 3: 7}.get(rank, 4)
    return tuple(draw(st.integers(1, cap)) for _ in range(rank))


def logical(desc_tensor, rng):
    """Random values for a tensor's elements, as its buffer will hold them."""
    return stored(desc_tensor, random_array(desc_tensor.sizes, desc_tensor.data_type.numpy_dtype, rng))


@st.composite
def windows(draw, shape):
    """SLICE1 window arrays within ``shape``, with signed non-zero strides and output sizes."""
    offsets, sizes, strides, out = [], [], [], []
    for n in shape:
        offset = draw(st.integers(0, n - 1))
        size = draw(st.integers(1, n - offset))
        stride = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))
        most = 1 + (size - 1) // abs(stride)
        offsets.append(offset)
        sizes.append(size)
        strides.append(stride)
        out.append(draw(st.integers(1, most)))
    return offsets, sizes, strides, out


def window_index(offsets, sizes, strides, out):
    """Per axis, the input indices the forward slice reads (DirectML's CopyStart rule)."""
    return np.ix_(
        *[(o + s - 1 if st_ < 0 else o) + st_ * np.arange(n) for o, s, st_, n in zip(offsets, sizes, strides, out)]
    )


@given(data=st.data())
@HYPOTHESIS
def test_slice1_random(xp, rng, data):
    data_type = data.draw(st.sampled_from(TYPES))
    shape = data.draw(shapes())
    offsets, sizes, strides, out = data.draw(windows(shape))
    desc = cd.Slice1OperatorDesc(
        data.draw(tensor(data_type, shape)), data.draw(tensor(data_type, out, output=True)), offsets, sizes, strides
    )
    x = logical(desc.input_tensor, rng)
    assert_outputs(run(desc, [x], xp), [x[window_index(offsets, sizes, strides, out)]])


@given(data=st.data())
@HYPOTHESIS
def test_slice_random(xp, rng, data):
    data_type = data.draw(st.sampled_from(TYPES))
    shape = data.draw(shapes())
    offsets, sizes, strides = [], [], []
    for n in shape:
        stride = data.draw(st.integers(0, 3))
        offset = data.draw(st.integers(0, n - 1))
        size = (
            data.draw(st.integers(1, 5)) if stride == 0 else data.draw(st.integers(1, (n - 1 - offset) // stride + 1))
        )
        offsets.append(offset)
        sizes.append(size)
        strides.append(stride)
    desc = cd.SliceOperatorDesc(
        data.draw(tensor(data_type, shape)), data.draw(tensor(data_type, sizes, output=True)), offsets, sizes, strides
    )
    x = logical(desc.input_tensor, rng)
    index = np.ix_(*[o + s * np.arange(n) for o, s, n in zip(offsets, strides, sizes)])
    assert_outputs(run(desc, [x], xp), [x[index]])


@given(data=st.data())
@HYPOTHESIS
def test_slice_grad_random(xp, rng, data):
    data_type = data.draw(st.sampled_from(TYPES))
    shape = data.draw(shapes())
    offsets, sizes, strides, out = data.draw(windows(shape))
    desc = cd.SliceGradOperatorDesc(
        data.draw(tensor(data_type, out)), data.draw(tensor(data_type, shape, output=True)), offsets, sizes, strides
    )
    dy = logical(desc.input_gradient_tensor, rng)
    expected = np.zeros(shape, dy.dtype)
    expected[window_index(offsets, sizes, strides, out)] = dy
    assert_outputs(run(desc, [dy], xp), [expected])


@st.composite
def parts(draw, shape):
    axis = draw(st.integers(0, len(shape) - 1))
    total = shape[axis]
    cuts = sorted(draw(st.sets(st.integers(1, total - 1), max_size=min(total - 1, 6)))) if total > 1 else []
    bounds = [0, *cuts, total]
    sizes = [b - a for a, b in itertools.pairwise(bounds)]
    return axis, [(*shape[:axis], s, *shape[axis + 1 :]) for s in sizes], cuts


@given(data=st.data())
@HYPOTHESIS
def test_split_random(xp, rng, data):
    data_type = data.draw(st.sampled_from(TYPES))
    shape = data.draw(shapes())
    axis, part_shapes, cuts = data.draw(parts(shape))
    desc = cd.SplitOperatorDesc(
        data.draw(tensor(data_type, shape)), [data.draw(tensor(data_type, s, output=True)) for s in part_shapes], axis
    )
    x = logical(desc.input_tensor, rng)
    assert_outputs(run(desc, [x], xp), np.split(x, cuts, axis=axis))


@given(data=st.data())
@HYPOTHESIS
def test_join_random(xp, rng, data):
    data_type = data.draw(st.sampled_from(TYPES))
    shape = data.draw(shapes())
    axis, part_shapes, _ = data.draw(parts(shape))
    desc = cd.JoinOperatorDesc(
        [data.draw(tensor(data_type, s)) for s in part_shapes], data.draw(tensor(data_type, shape, output=True)), axis
    )
    xs = [logical(t, rng) for t in desc.input_tensors]
    assert_outputs(run(desc, xs, xp), [np.concatenate(xs, axis=axis)])


def test_split_of_many_outputs_is_one_batch(xp, rng):
    """Past the largest compiled batch capacity SPLIT still runs (in groups) and is exact."""
    x = random_array((300, 3, 5), np.float32, rng)
    t = cd.TensorDataType.FLOAT32
    desc = cd.SplitOperatorDesc(cd.BufferTensorDesc(t, x.shape), [cd.BufferTensorDesc(t, (1, 3, 5))] * 300, 0)
    assert_outputs(run(desc, [x], xp), np.split(x, 300, axis=0))


def _batches(desc):
    """``(interleaved, grid, blocks of each job)`` of each launch of ``desc``'s kernels."""
    from cudadml.backends import kernels

    return [
        (int(p["interleaved"]), launch.grid, tuple(np.diff(p["block_start"][: int(p["num_jobs"]["d"]) + 1]).tolist()))
        for launch in kernels.prepare(desc.compile().plan)
        for p in [launch.params]
    ]


@pytest.mark.parametrize(
    ("parts", "axis", "interleaved"),
    [
        ([36, 28], 1, True),  # jobs of unequal widths: the blocks past a job's end do nothing
        ([16] * 4, 1, True),
        ([256, 256], 0, False),
    ],
)
def test_parts_that_share_rows_walk_them_together(xp, rng, parts, axis, interleaved):
    """SPLIT and JOIN along an inner axis interleave their jobs' blocks (a grid of jobs x the
    most blocks of a job); along axis 0 each part's rows are its own and the jobs run one after
    another (a grid of the blocks with work). Exact either way."""
    shape = [512, 64, 3]
    x = random_array(tuple(shape), np.float32, rng)
    t = cd.TensorDataType.FLOAT32
    part_shapes = [tuple(p if d == axis else n for d, n in enumerate(shape)) for p in parts]
    split = cd.SplitOperatorDesc(cd.BufferTensorDesc(t, shape), [cd.BufferTensorDesc(t, s) for s in part_shapes], axis)
    join = cd.JoinOperatorDesc([cd.BufferTensorDesc(t, s) for s in part_shapes], cd.BufferTensorDesc(t, shape), axis)
    for desc in (split, join):
        ((together, grid, blocks),) = _batches(desc)
        assert together == interleaved and len(blocks) == len(parts)
        assert grid == (len(blocks) * max(blocks) if interleaved else sum(blocks))
        assert (sum(blocks) < grid) == (len(set(blocks)) > 1 and interleaved)
    expected = np.split(x, np.cumsum(parts)[:-1], axis=axis)
    assert_outputs(run(split, [x], xp), expected)
    assert_outputs(run(join, expected, xp), [x])


def test_execute_reuses_compiled_operator_with_new_data(xp, rng):
    desc = EXAMPLES[3].desc
    compiled = desc.compile()
    for _ in range(3):
        x = logical(desc.input_tensor, rng)
        source = TensorBuffer(desc.input_tensor, xp).fill(x)
        target = TensorBuffer(desc.output_tensor, xp)
        compiled.execute([source.binding], [target.binding])
        assert_outputs(
            [target],
            [
                x[
                    window_index(
                        desc.input_window_offsets,
                        desc.input_window_sizes,
                        desc.input_window_strides,
                        desc.output_tensor.sizes,
                    )
                ]
            ],
        )


# ---- descriptors as data ------------------------------------------------------------------------

SIGNATURES = [
    (cd.SliceOperatorDesc, ["input_tensor", "output_tensor", "offsets", "sizes", "strides"]),
    (
        cd.Slice1OperatorDesc,
        ["input_tensor", "output_tensor", "input_window_offsets", "input_window_sizes", "input_window_strides"],
    ),
    (
        cd.SliceGradOperatorDesc,
        [
            "input_gradient_tensor",
            "output_gradient_tensor",
            "input_window_offsets",
            "input_window_sizes",
            "input_window_strides",
        ],
    ),
    (cd.SplitOperatorDesc, ["input_tensor", "output_tensors", "axis"]),
    (cd.JoinOperatorDesc, ["input_tensors", "output_tensor", "axis"]),
]


@pytest.mark.parametrize(("cls", "names"), SIGNATURES, ids=lambda c: getattr(c, "__name__", ""))
def test_descriptor_fields_and_keywords(cls, names):
    """The public shape of each descriptor: its fields in order, then ``feature_level`` by keyword."""
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    expected = [(name, positional, inspect.Parameter.empty) for name in names]
    expected.append(("feature_level", inspect.Parameter.KEYWORD_ONLY, None))
    assert [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()] == expected
    assert [f.name for f in dataclasses.fields(cls)] == [*names, "feature_level"]


def test_an_operator_is_its_fields_rules_and_lowering(monkeypatch, rng):
    """An operator declared as fields with roles, one rule of its own and a lowering: the base
    class normalises its fields, finds its tensors, checks the shared rules and compiles it."""
    from cudadml.core import operators, plan

    @dataclasses.dataclass(frozen=True)
    class ShiftOperatorDesc(operators.OperatorDesc):
        """The window of the input at ``offsets`` with the output's sizes."""

        NAME = "Shift"
        SUPPORT = cd.SliceOperatorDesc.SUPPORT
        input_tensor: cd.BufferTensorDesc = dataclasses.field(metadata=operators.INPUT)
        output_tensor: cd.BufferTensorDesc = dataclasses.field(metadata=operators.OUTPUT)
        offsets: tuple[int, ...] = dataclasses.field(metadata=operators.UINT32_ARRAY)
        feature_level: cd.FeatureLevel | None = dataclasses.field(default=None, kw_only=True)

        def _validate(self, v):
            for i, (offset, size, bound) in self._dims("offsets", "output_tensor", "input_tensor"):
                if offset + size > bound:
                    v.add(
                        f"Offsets[{i}] + OutputTensor.Sizes[{i}] = {offset + size} exceeds "
                        f"InputTensor.Sizes[{i}] = {bound}"
                    )

        def _lower(self, input_strides, output_strides):
            sizes = self.output_tensor.sizes
            size = self.input_tensor.data_type.element_size
            windows = tuple(zip(self.offsets, (1,) * len(sizes), sizes))
            return plan.plan_slice(size, windows, input_strides[0], output_strides[0])

    f32 = cd.TensorDataType.FLOAT32
    x_desc, y_desc = cd.BufferTensorDesc(f32, (4, 6)), cd.BufferTensorDesc(f32, (2, 3))
    desc = ShiftOperatorDesc(x_desc, y_desc, np.array([1, 2]))
    assert desc.offsets == (1, 2) and all(type(o) is int for o in desc.offsets)
    assert (desc.input_tensors, desc.output_tensors) == ((x_desc,), (y_desc,))
    assert desc.dimension_count == 2 and desc.feature_level is cd.FeatureLevel.newest()
    x = random_array((4, 6), np.float32, rng)
    assert_outputs(run(desc, [x], np), [x[1:3, 2:5]])

    bad_output = cd.BufferTensorDesc(cd.TensorDataType.INT32, (2, 5), (0, 1), flags=cd.TensorFlags.OWNED_BY_DML)
    with pytest.raises(cd.DescriptorError) as e:
        ShiftOperatorDesc(x_desc, bad_output, (2, 2**32))
    assert e.value.violations == (
        "Shift: OutputTensor.DataType = INT32 differs from InputTensor.DataType = FLOAT32",
        "Shift: OutputTensor.Flags has OWNED_BY_DML, which only input tensors may have",
        "Shift: OutputTensor.Strides[0] = 0 with Sizes[0] = 2 would make the output overlap itself",
        "Shift: Offsets[1] = 4294967296 must be an unsigned 32-bit value (0 to 4294967295)",
        "Shift: Offsets[1] + OutputTensor.Sizes[1] = 4294967301 exceeds InputTensor.Sizes[1] = 6",
    )
    with pytest.raises(TypeError, match=r"^Shift: Offsets\[0\] must be an integer, not float$"):
        ShiftOperatorDesc(x_desc, y_desc, (1.0, 2))

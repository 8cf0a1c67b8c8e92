"""``cd.compile_batch``: a mix of SLICE, SLICE1, SPLIT and JOIN descriptors as one operator.

A batch must write exactly what its descriptors write when each runs alone (fresh random bits
in, poisoned and canaried buffers out), in one launch per element size, and keep every
binding rule across the whole batch: an output may overlap no binding of any operator.
"""

from __future__ import annotations

import re
import weakref

import numpy as np
import pytest

import cudadml as cd
from cudadml.backends import kernels
from cudadml.testing import POISON, TensorBuffer, aligned_empty, random_array, to_host

T = cd.TensorDataType
#: Element sizes 1, 2, 4 and 8, two types each: a batch groups by size, never by type.
TYPES = [T.UINT8, T.INT8, T.FLOAT16, T.UINT16, T.FLOAT32, T.INT32, T.FLOAT64, T.INT64]
F32, U8 = T.FLOAT32, T.UINT8


# ---- random descriptors --------------------------------------------------------------------------


def _tensor(data_type, sizes, rng):
    """Packed, or padded between rows (positive strides with gaps)."""
    if rng.random() < 0.5:
        return cd.BufferTensorDesc(data_type, sizes)
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step = step * n + int(rng.integers(0, 3))
    return cd.BufferTensorDesc(data_type, sizes, tuple(reversed(strides)))


def _parts(shape, axis, rng):
    """Shapes of parts of ``shape`` along ``axis``, in order."""
    total = shape[axis]
    cuts = sorted(rng.choice(np.arange(1, total), size=int(rng.integers(0, min(total, 4))), replace=False).tolist())
    return [(*shape[:axis], b - a, *shape[axis + 1 :]) for a, b in zip([0, *cuts], [*cuts, total])]


def random_desc(rng):
    """A valid SLICE, SLICE1 (negative strides too), SPLIT or JOIN of a random type and shape."""
    data_type = TYPES[rng.integers(len(TYPES))]
    shape = [int(rng.integers(1, 7)) for _ in range(rng.integers(1, 5))]
    kind = rng.integers(4)
    if kind == 0:
        offsets, sizes, strides = [], [], []
        for n in shape:
            offsets.append(int(rng.integers(n)))
            strides.append(int(rng.integers(1, 4)))
            sizes.append(int(rng.integers(1, (n - 1 - offsets[-1]) // strides[-1] + 2)))
        return cd.SliceOperatorDesc(
            _tensor(data_type, shape, rng), _tensor(data_type, sizes, rng), offsets, sizes, strides
        )
    if kind == 1:
        offsets, sizes, strides, out = [], [], [], []
        for n in shape:
            offsets.append(int(rng.integers(n)))
            sizes.append(int(rng.integers(1, n - offsets[-1] + 1)))
            strides.append(int(rng.integers(1, 4)) * int(rng.choice([1, -1])))
            out.append(int(rng.integers(1, 1 + (sizes[-1] - 1) // abs(strides[-1]) + 1)))
        return cd.Slice1OperatorDesc(
            _tensor(data_type, shape, rng), _tensor(data_type, out, rng), offsets, sizes, strides
        )
    axis = int(rng.integers(len(shape)))
    parts = [_tensor(data_type, s, rng) for s in _parts(shape, axis, rng)]
    whole = _tensor(data_type, shape, rng)
    return cd.SplitOperatorDesc(whole, parts, axis) if kind == 2 else cd.JoinOperatorDesc(parts, whole, axis)


def random_batch(rng, count):
    descs = [random_desc(rng) for _ in range(count)]
    values = [[random_array(t.sizes, t.data_type.numpy_dtype, rng) for t in d.input_tensors] for d in descs]
    return descs, values


# ---- running ---------------------------------------------------------------------------------------


def _buffers(descs, values, xp):
    """Input buffers holding ``values`` and poisoned, canaried output buffers, all descriptors' in order."""
    inputs = [TensorBuffer(t, xp).fill(v) for d, vs in zip(descs, values) for t, v in zip(d.input_tensors, vs)]
    outputs = [TensorBuffer(t, xp) for d in descs for t in d.output_tensors]
    return inputs, outputs


def run_each(descs, values, xp):
    """The outputs of every descriptor run alone, through its own ``compile().execute``."""
    outputs = []
    for desc, vs in zip(descs, values):
        bound_in, bound_out = _buffers([desc], [vs], xp)
        desc.compile().execute([b.binding for b in bound_in], [b.binding for b in bound_out])
        outputs += bound_out
    return outputs


def run_batch(descs, values, xp):
    bound_in, bound_out = _buffers(descs, values, xp)
    cd.compile_batch(descs).execute([b.binding for b in bound_in], [b.binding for b in bound_out])
    return bound_out


def assert_same_bytes(got, expected):
    assert len(got) == len(expected)
    for k, (a, b) in enumerate(zip(got, expected)):
        raw = to_host(a.raw)
        assert raw.tobytes() == to_host(b.raw).tobytes(), f"outputs[{k}] differs from its operator run alone"
        assert a.untouched_outside(), f"outputs[{k}]: a byte outside its elements changed"
        assert np.all(raw[a.element_mask()] != POISON), f"outputs[{k}]: an element was not written"


@pytest.mark.parametrize("seed", range(12))
def test_a_random_mix_writes_what_each_operator_writes_alone(xp, seed):
    descs, values = random_batch(np.random.default_rng(seed), 10)
    assert_same_bytes(run_batch(descs, values, xp), run_each(descs, values, xp))


def test_sixty_four_mixed_operators(xp, rng):
    descs, values = random_batch(rng, 64)
    assert {d.input_tensors[0].data_type.element_size for d in descs} == {1, 2, 4, 8}
    assert_same_bytes(run_batch(descs, values, xp), run_each(descs, values, xp))


@pytest.mark.parametrize("count", [1, 10, 64])
def test_one_launch_per_element_size(rng, count):
    """The CUDA backend's launches, prepared without a GPU: all copies of one size in one."""
    descs, _ = random_batch(rng, count)
    batch = cd.compile_batch(descs)
    sizes = {d.input_tensors[0].data_type.element_size for d in descs}
    assert sorted(plan.element_size for plan in batch.plans) == sorted(sizes)
    for plan in batch.plans:
        alone = [d.to_plan() for d in descs if d.input_tensors[0].data_type.element_size == plan.element_size]
        assert len(plan.jobs) == sum(len(p.jobs) for p in alone)
        assert len(kernels.prepare(plan)) == 1
    assert f"in {len(sizes)} launch" in repr(batch)


# ---- the binding rules across the batch ----------------------------------------------------------


def _three():
    """A SLICE (f32 4x4 -> 2x2), a SPLIT (u8 8 -> 4, 4) and a JOIN (f32 2x4, 2x4 -> 4x4)."""
    return [
        cd.SliceOperatorDesc(
            cd.BufferTensorDesc(F32, [4, 4]), cd.BufferTensorDesc(F32, [2, 2]), [1, 1], [2, 2], [1, 2]
        ),
        cd.SplitOperatorDesc(cd.BufferTensorDesc(U8, [8]), [cd.BufferTensorDesc(U8, [4])] * 2, 0),
        cd.JoinOperatorDesc([cd.BufferTensorDesc(F32, [2, 4])] * 2, cd.BufferTensorDesc(F32, [4, 4]), 0),
    ]


@pytest.mark.parametrize(
    ("other", "message"),
    [
        (
            ("inputs", 0),
            r"outputs\[3\] \(descs\[2\] Join outputs\[0\]\) overlaps inputs\[0\] \(descs\[0\] Slice inputs\[0\]\)",
        ),
        (("outputs", 0), r"outputs\[3\] \(descs\[2\] Join outputs\[0\]\) overlaps outputs\[0\] \(descs\[0\] Slice"),
        (
            ("inputs", 3),
            r"outputs\[3\] \(descs\[2\] Join outputs\[0\]\) overlaps inputs\[3\] \(descs\[2\] Join inputs\[1\]",
        ),
    ],
)
def test_an_output_overlapping_another_operators_binding_is_refused(xp, rng, other, message):
    descs = _three()
    values = [[random_array(t.sizes, t.data_type.numpy_dtype, rng) for t in d.input_tensors] for d in descs]
    bound_in, bound_out = _buffers(descs, values, xp)
    inputs, outputs = [b.binding for b in bound_in], [b.binding for b in bound_out]
    role, k = other
    shared = (inputs if role == "inputs" else outputs)[k]
    outputs[3] = cd.BufferBinding(shared.buffer, shared.offset)  # the JOIN's output over that binding's bytes
    before = [to_host(b.raw).copy() for b in bound_in + bound_out]
    with pytest.raises(cd.BindingError, match=message):
        cd.compile_batch(descs).execute(inputs, outputs)
    assert all(np.array_equal(to_host(b.raw), was) for b, was in zip(bound_in + bound_out, before))


def test_inputs_may_be_shared_across_the_batch(xp, rng):
    """The SLICE's input buffer also holds the JOIN's two inputs (its halves)."""
    descs = _three()
    x = random_array((4, 4), np.float32, rng)
    values = [[x], [random_array((8,), np.uint8, rng)], [x[:2], x[2:]]]
    bound_in, bound_out = _buffers(descs, values, xp)
    inputs = [b.binding for b in bound_in]
    inputs[2], inputs[3] = (
        cd.BufferBinding(inputs[0].buffer, inputs[0].offset),
        cd.BufferBinding(inputs[0].buffer, inputs[0].offset + 32),
    )
    cd.compile_batch(descs).execute(inputs, [b.binding for b in bound_out])
    assert_same_bytes(bound_out, run_each(descs, values, xp))
    assert np.array_equal(bound_out[3].host_elements(), x)


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        (lambda i, o: (i[:-1], o), "3 inputs bound; the operator has 4"),
        (lambda i, o: (i, o + o[:1]), "5 outputs bound; the operator has 4"),
        (
            lambda i, o: (i[:1], o[:1]),
            "1 inputs bound; the operator has 4\ncompile_batch.execute: 1 outputs bound; the operator has 4",
        ),
    ],
)
def test_wrong_numbers_of_bindings_are_refused(cut, message):
    descs = _three()
    bound_in, bound_out = _buffers(
        descs, [[np.ones(t.sizes, t.data_type.numpy_dtype) for t in d.input_tensors] for d in descs], np
    )
    inputs, outputs = cut([b.binding for b in bound_in], [b.binding for b in bound_out])
    with pytest.raises(cd.BindingError, match=f"compile_batch.execute: {message}"):
        cd.compile_batch(descs).execute(inputs, outputs)
    assert all(np.all(b.raw == POISON) for b in bound_out)


# ---- what a batch takes --------------------------------------------------------------------------

GRAD = cd.SliceGradOperatorDesc(cd.BufferTensorDesc(F32, [2]), cd.BufferTensorDesc(F32, [4]), [0], [4], [2])


@pytest.mark.parametrize(
    ("descs", "error", "message"),
    [
        (lambda: [], ValueError, "the list of descriptors is empty"),
        (lambda: _three()[0], TypeError, "takes a list of operator descriptors, not one SliceOperatorDesc"),
        (lambda: 3, TypeError, "takes a list of operator descriptors, not one int"),
        (lambda: [GRAD], TypeError, r"descs\[0\] is SliceGrad, not a strided copy"),
        (
            lambda: [*_three(), "Slice", GRAD, _three()[0].compile()],
            TypeError,
            r"descs\[3\] is a str, not an operator descriptor; descs\[4\] is SliceGrad, not a strided copy .*; "
            r"descs\[5\] is a CompiledOperator, not an operator descriptor$",
        ),
    ],
)
def test_only_lists_of_copy_descriptors_are_taken(descs, error, message):
    with pytest.raises(error, match=f"^compile_batch: .*{message}"):
        cd.compile_batch(descs())


def test_a_batch_describes_itself():
    batch = cd.compile_batch(iter(_three()))  # any iterable
    assert batch.desc == tuple(_three())
    assert repr(batch) == (
        "<CompiledOperator batch of 3 operators: 5 strided copies in 2 launches (4-byte elements: 3 copies, "
        "1 launch; 1-byte elements: 2 copies, 1 launch), 88 bytes out>"
    )
    html = batch._repr_html_()
    assert re.findall(r"<li>(\w+) .*?: (inputs \[[\d, ]*\], outputs \[[\d, ]*\])</li>", html) == [
        ("Slice", "inputs [0], outputs [0]"),
        ("Split", "inputs [1], outputs [1, 2]"),
        ("Join", "inputs [2, 3], outputs [3]"),
    ]


def test_a_batch_is_bound_like_any_operator(rng):
    """Arrays bound whole work as for one operator, and the binding names say whose they are."""
    descs = _three()
    x, b = aligned_empty(64).view(np.float32), aligned_empty(16)
    x[:], b[:8] = random_array((16,), np.float32, rng), np.arange(8)
    outs = [aligned_empty(n) for n in (16, 16, 16, 64)]
    batch = cd.compile_batch(descs)
    batch.execute([x, b, x, x[8:]], outs)
    assert np.array_equal(outs[0].view(np.float32).reshape(2, 2), x.reshape(4, 4)[1:3, 1:4:2])
    assert outs[1][:4].tolist() == [0, 1, 2, 3] and outs[2][:4].tolist() == [4, 5, 6, 7]
    assert np.array_equal(outs[3].view(np.float32)[:8], x[:8]) and np.array_equal(outs[3].view(np.float32)[8:], x[8:])
    with pytest.raises(cd.BindingError, match=r"inputs\[1\] \(descs\[1\] Split inputs\[0\]\): the bound range of 4"):
        batch.execute([x, b[:4], x, x[8:]], outs)


@pytest.mark.gpu
def test_the_same_cupy_arrays_again_are_bound_without_checking_them_again(rng):
    """A batch executed in a loop on the same buffers pays one identity test per binding; new
    arrays, in any position, are checked again (an output over an input is still refused)."""
    import cupy

    descs = _three() * 3  # 9 operators, 12 inputs and 12 outputs: the many-bindings path
    inputs = [cupy.asarray(random_array(t.sizes, t.data_type.numpy_dtype, rng)) for d in descs for t in d.input_tensors]
    outputs = [cupy.empty(t.sizes, t.data_type.numpy_dtype) for d in descs for t in d.output_tensors]
    batch = cd.compile_batch(descs)
    for _ in range(3):  # new values in the same arrays: each run moves them
        for x in inputs:
            x[...] = cupy.asarray(random_array(x.shape, x.dtype, rng))
        batch.execute(inputs, outputs)
        assert to_host(outputs[0]).tobytes() == to_host(inputs[0][1:3, 1::2]).tobytes()
        assert to_host(outputs[3]).tobytes() == to_host(cupy.concatenate(inputs[2:4])).tobytes()
    over = list(outputs)
    over[3] = inputs[0].view(np.uint8)[:64].view(np.float32).reshape(4, 4)  # the JOIN's output over inputs[0]
    before = to_host(inputs[0]).copy()
    with pytest.raises(cd.BindingError, match=r"outputs\[3\] .* overlaps inputs\[0\]"):
        batch.execute(inputs, over)
    assert to_host(inputs[0]).tobytes() == before.tobytes()
    outputs[0] = cupy.empty_like(outputs[0])  # a new array where the old one was
    batch.execute(inputs, outputs)
    assert to_host(outputs[0]).tobytes() == to_host(inputs[0][1:3, 1::2]).tobytes()


# ---- bound once, executed many times (CompiledOperator.bind) ---------------------------------------


@pytest.mark.parametrize("count", [1, 64])
def test_a_bound_batch_moves_new_values_at_each_execute(xp, rng, count):
    """``bind`` checks once; each ``execute`` of the bound operator moves what its buffers hold
    then, as ``execute`` with the same bindings would."""
    descs, values = random_batch(rng, count)
    bound_in, bound_out = _buffers(descs, values, xp)
    bound = cd.compile_batch(descs).bind([b.binding for b in bound_in], [b.binding for b in bound_out])
    for _ in range(2):
        values = [[random_array(t.sizes, t.data_type.numpy_dtype, rng) for t in d.input_tensors] for d in descs]
        for b, v in zip(bound_in, (v for vs in values for v in vs)):
            b.fill(v)
        for b in bound_out:
            b.raw[...] = POISON
        bound.execute()
        assert_same_bytes(bound_out, run_each(descs, values, xp))


def test_bind_refuses_what_execute_refuses_and_changes_nothing(xp, rng):
    descs = _three()
    values = [[random_array(t.sizes, t.data_type.numpy_dtype, rng) for t in d.input_tensors] for d in descs]
    bound_in, bound_out = _buffers(descs, values, xp)
    inputs, outputs = [b.binding for b in bound_in], [b.binding for b in bound_out]
    outputs[3] = cd.BufferBinding(inputs[0].buffer, inputs[0].offset)
    before = [to_host(b.raw).copy() for b in bound_in + bound_out]
    batch = cd.compile_batch(descs)
    with pytest.raises(cd.BindingError, match=r"outputs\[3\] \(descs\[2\] Join outputs\[0\]\) overlaps inputs\[0\]"):
        batch.bind(inputs, outputs)
    with pytest.raises(cd.BindingError, match=r"3 inputs bound; the operator has 4"):
        batch.bind(inputs[:3], outputs)
    with pytest.raises(TypeError, match=r"inputs must be a list of bindings, one per tensor; got one"):
        batch.bind(inputs[0].buffer, outputs)
    assert all(np.array_equal(to_host(b.raw), was) for b, was in zip(bound_in + bound_out, before))


def _flip_8_to_4():
    return cd.Slice1OperatorDesc(cd.BufferTensorDesc(F32, [8]), cd.BufferTensorDesc(F32, [4]), [1], [8 - 1], [-2])


def test_a_bound_operator_holds_its_own_bindings(rng):
    """Changing the caller's lists after ``bind``, or dropping its arrays, changes nothing the
    bound operator runs on; bindings given as generators are taken once; what it holds cannot
    be reassigned (``execute`` trusts the pairing of operator and checked bindings)."""
    x, y = aligned_empty(32).view(np.float32), aligned_empty(16).view(np.float32)
    x[:] = random_array((8,), np.float32, rng)
    inputs, outputs = [x], [y]
    bound = _flip_8_to_4().compile().bind(inputs, outputs)
    assert repr(bound) == "<BoundOperator of 1 input and 1 output: Slice1 FLOAT32 (8,) -> (4,)>"
    inputs[0], outputs[0] = aligned_empty(32).view(np.float32), aligned_empty(16).view(np.float32)
    expected, y_ref = x[7:0:-2].copy(), weakref.ref(y)
    del x, y
    bound.execute()
    assert y_ref() is not None and y_ref().tobytes() == expected.tobytes()
    assert bound.inputs[0] is not inputs[0] and bound.outputs[0] is y_ref()
    x = aligned_empty(32).view(np.float32)
    x[:] = random_array((8,), np.float32, rng)
    taken = _flip_8_to_4().compile().bind((a for a in [x]), (b for b in [outputs[0]]))
    taken.execute()
    assert outputs[0].tobytes() == x[7:0:-2].tobytes()
    for name in ("compiled", "inputs", "outputs"):
        with pytest.raises(AttributeError):
            setattr(bound, name, getattr(taken, name))


@pytest.mark.gpu
def test_a_bound_operator_holds_the_arrays_it_checked(rng):
    """A sequence that gives other arrays each time it is iterated is iterated once: the CuPy
    arrays that were checked are the ones held and run (bound CuPy bindings are not checked
    again)."""
    import gc

    import cupy

    made = []

    class Fickle(list):
        def __iter__(self):
            a = cupy.asarray(random_array((8,), np.float32, rng))
            made.append(weakref.ref(a))
            return iter([a])

    y = cupy.full(4, np.float32(7), np.float32)
    bound = _flip_8_to_4().compile().bind(Fickle([None]), [y])
    gc.collect()
    assert len(made) == 1 and made[0]() is bound.inputs[0]
    bound.execute()
    assert to_host(y).tobytes() == to_host(bound.inputs[0][7:0:-2]).tobytes()


def test_host_bindings_are_checked_at_each_execute(rng):
    """A NumPy output made read-only after ``bind`` is refused at ``execute``, and not written
    (CuPy has no read-only arrays)."""
    descs = _three()
    values = [[random_array(t.sizes, t.data_type.numpy_dtype, rng) for t in d.input_tensors] for d in descs]
    bound_in, bound_out = _buffers(descs, values, np)
    bound = cd.compile_batch(descs).bind([b.binding for b in bound_in], [b.binding for b in bound_out])
    bound_out[1].raw.flags.writeable = False
    with pytest.raises(cd.BindingError, match=r"outputs\[1\] \(descs\[1\] Split outputs\[0\]\): the buffer is read"):
        bound.execute()
    assert all((b.raw == POISON).all() for b in bound_out)


@pytest.mark.gpu
def test_bound_batches_run_from_many_threads_and_in_a_cuda_graph(rng):
    """Eight threads execute their own bound copies of one compiled batch at once; one of them
    is captured in a CUDA graph and replayed on new values."""
    import concurrent.futures

    import cupy

    descs = _three() * 8  # 24 operators, 32 inputs and 32 outputs: the many-bindings path
    batch = cd.compile_batch(descs)

    def fresh():
        inputs = [
            cupy.asarray(random_array(t.sizes, t.data_type.numpy_dtype, rng)) for d in descs for t in d.input_tensors
        ]
        outputs = [cupy.full(t.sizes, 7, t.data_type.numpy_dtype) for d in descs for t in d.output_tensors]
        return inputs, outputs

    def check(inputs, outputs):
        for k in range(0, len(inputs), 4):
            assert to_host(outputs[k]).tobytes() == to_host(inputs[k][1:3, 1::2]).tobytes()
            assert to_host(outputs[k + 1]).tobytes() == to_host(inputs[k + 1][:4]).tobytes()
            assert to_host(outputs[k + 2]).tobytes() == to_host(inputs[k + 1][4:]).tobytes()
            assert to_host(outputs[k + 3]).tobytes() == to_host(cupy.concatenate(inputs[k + 2 : k + 4])).tobytes()

    sets = [fresh() for _ in range(8)]
    bounds = [batch.bind(*s) for s in sets]

    def work(bound):
        stream = cupy.cuda.Stream(non_blocking=True)
        for _ in range(50):
            bound.execute(stream=stream)
        stream.synchronize()

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(work, bounds))
    for s in sets:
        check(*s)
    inputs, outputs = sets[0]
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        bounds[0].execute(stream=stream)
        graph = stream.end_capture()
    for _ in range(2):
        for x in inputs:
            x[...] = cupy.asarray(random_array(x.shape, x.dtype, rng))
        graph.launch(stream)
        stream.synchronize()
        check(inputs, outputs)

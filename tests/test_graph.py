"""Graphs: ``GraphDesc``'s rules one by one, and compiled graphs against the same chain run
node by node with NumPy slicing (exact bytes, poisoned outputs, canaries around them), on the
reference and emulated backends and, where there is a GPU, on it."""

from __future__ import annotations

import re

import numpy as np
import pytest

import cudadml as cd
from cudadml.core import plan as plan_module
from cudadml.graphs import graph as graph_module
from cudadml.testing import aligned_empty

F32, F16, U8 = cd.TensorDataType.FLOAT32, cd.TensorDataType.FLOAT16, cd.TensorDataType.UINT8
IN, OUT, MID = cd.GraphInputEdge, cd.GraphOutputEdge, cd.GraphIntermediateEdge


def t(*sizes, dtype=F32, **kw):
    return cd.BufferTensorDesc(dtype, sizes, **kw)


def split_rejoin(n=6, dtype=F32):
    split = cd.SplitOperatorDesc(t(n, dtype=dtype), [t(2, dtype=dtype), t(n - 2, dtype=dtype)], axis=0)
    join = cd.JoinOperatorDesc([t(n - 2, dtype=dtype), t(2, dtype=dtype)], t(n, dtype=dtype), axis=0)
    return cd.GraphDesc(1, 1, [split, join], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 1, 1, 0), MID(0, 0, 1, 1)])


def focus(shape=(2, 3, 8, 6), dtype=F32):
    b, c, h, w = shape
    nodes, ins, mids = [], [], []
    for k, (p, q) in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)]):
        half = (b, c, h // 2, w // 2)
        nodes.append(
            cd.SliceOperatorDesc(t(*shape, dtype=dtype), t(*half, dtype=dtype), [0, 0, p, q], half, [1, 1, 2, 2])
        )
        ins.append(IN(0, k, 0))
        mids.append(MID(k, 0, 4, k))
    nodes.append(cd.JoinOperatorDesc([t(*half, dtype=dtype)] * 4, t(b, 4 * c, h // 2, w // 2, dtype=dtype), 1))
    return cd.GraphDesc(1, 1, nodes, ins, [OUT(4, 0, 0)], mids)


def focus_oracle(x):
    return np.concatenate([x[..., ::2, ::2], x[..., 1::2, ::2], x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)


# ---------------------------------------------------------------------------------------------
# The rules, one by one.


def test_a_valid_graph_has_its_tensors():
    g = split_rejoin()
    assert g.input_tensors == (t(6),)
    assert g.output_tensors == (t(6),)
    assert all(isinstance(node, cd.GraphNode) for node in g.nodes)


def _raises(message, build):
    with pytest.raises(cd.GraphError, match=re.escape(message)):
        build()


SPLIT = cd.SplitOperatorDesc(t(6), [t(2), t(4)], axis=0)
JOIN = cd.JoinOperatorDesc([t(4), t(2)], t(6), axis=0)
SLICE = cd.SliceOperatorDesc(t(6), t(3), [0], [3], [2])


@pytest.mark.parametrize(
    ("message", "kwargs"),
    [
        ("NodeCount = 0 must be greater than 0", dict(nodes=[], input_edges=[], output_edges=[])),
        ("InputCount = 0 must be greater than 0", dict(input_count=0)),
        ("OutputCount = 0 must be greater than 0", dict(output_count=0, output_edges=[])),
        ("input_edges[0]: node index 5 is out of range (1 nodes)", dict(input_edges=[IN(0, 5, 0)])),
        ("input_edges[0]: nodes[0] (Slice) has no input 1 (1 inputs)", dict(input_edges=[IN(0, 0, 1)])),
        (
            "input_edges[1]: GraphInputIndex = 3 is out of range (InputCount = 1)",
            dict(input_edges=[IN(0, 0, 0), IN(3, 0, 0)]),
        ),
        (
            "nodes[0] (Slice) input 0 is fed by 2 edges: input_edges[0], input_edges[1]",
            dict(input_edges=[IN(0, 0, 0), IN(0, 0, 0)]),
        ),
        ("nodes[0] (Slice) input 0 is fed by no edge", dict(input_count=1, input_edges=[])),
        ("graph input 1 feeds no node", dict(input_count=2)),
        ("output_edges[0]: GraphOutputIndex = 2 is out of range (OutputCount = 1)", dict(output_edges=[OUT(0, 0, 2)])),
        ("output_edges[0]: nodes[0] (Slice) has no output 1 (1 outputs)", dict(output_edges=[OUT(0, 1, 0)])),
        (
            "graph output 0 is fed by 2 edges: output_edges[0], output_edges[1]",
            dict(output_edges=[OUT(0, 0, 0), OUT(0, 0, 0)]),
        ),
        ("graph output 1 is fed by 0 edges", dict(output_count=2)),
    ],
)
def test_each_rule_of_one_slice_graph(message, kwargs):
    fields = dict(input_count=1, output_count=1, nodes=[SLICE], input_edges=[IN(0, 0, 0)], output_edges=[OUT(0, 0, 0)])
    fields.update(kwargs)
    _raises(message, lambda: cd.GraphDesc(**fields))


def test_every_violation_is_reported_at_once_with_the_edge_names():
    with pytest.raises(cd.GraphError) as info:
        cd.GraphDesc(2, 2, [SLICE], [IN(0, 0, 0, name="x"), IN(0, 0, 0)], [OUT(0, 0, 5, name="y")])
    text = str(info.value)
    for part in (
        "nodes[0] (Slice) input 0 is fed by 2 edges: input_edges[0] (x), input_edges[1]",
        "graph input 1 feeds no node",
        "output_edges[0] (y): GraphOutputIndex = 5 is out of range (OutputCount = 2)",
        "graph output 0 is fed by 0 edges",
        "graph output 1 is fed by 0 edges",
    ):
        assert part in text


def test_a_cycle_is_named_node_by_node():
    a = cd.SliceOperatorDesc(t(6), t(6), [0], [6], [1])
    join = cd.JoinOperatorDesc([t(6), t(6)], t(12), 0)
    back = cd.SliceOperatorDesc(t(12), t(6), [0], [6], [1])
    _raises(
        "the edges make a cycle: nodes[1] (Join) -> nodes[2] (Slice) -> nodes[1] (Join)",
        lambda: cd.GraphDesc(
            1, 1, [a, join, back], [IN(0, 0, 0)], [OUT(0, 0, 0)], [MID(0, 0, 1, 0), MID(1, 0, 2, 0), MID(2, 0, 1, 1)]
        ),
    )


def test_an_intermediate_edge_must_carry_one_type_and_one_layout_or_a_reshape():
    to_f16 = cd.SliceOperatorDesc(t(6, dtype=F16), t(6, dtype=F16), [0], [6], [1])
    _raises(
        "intermediate_edges[0]: the producer's output is FLOAT32, the consumer's input FLOAT16",
        lambda: cd.GraphDesc(1, 1, [SLICE, to_f16], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)]),
    )
    strided = cd.SliceOperatorDesc(t(3, strides=[2]), t(3), [0], [3], [1])
    _raises(
        "intermediate_edges[0]: the producer's output (sizes (3,), strides (1,)) and the consumer's input "
        "(sizes (3,), strides (2,)) must have the same sizes and strides",
        lambda: cd.GraphDesc(1, 1, [SLICE, strided], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)]),
    )
    other_count = cd.SliceOperatorDesc(t(2, 2), t(2, 2), [0, 0], [2, 2], [1, 1])
    _raises(
        "must have the same sizes and strides, or both be packed with the same element count (a reshape)",
        lambda: cd.GraphDesc(1, 1, [SLICE, other_count], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)]),
    )


def test_the_edges_of_one_graph_input_must_agree():
    other = cd.SliceOperatorDesc(t(2, 3), t(2, 3), [0, 0], [2, 3], [1, 1])
    _raises(
        "input_edges[1] gives graph input 0 the tensor FLOAT32 sizes (2, 3) strides (3, 1), and input_edges[0] "
        "FLOAT32 sizes (6,) strides (1,): the edges of one graph input must agree",
        lambda: cd.GraphDesc(1, 2, [SLICE, other], [IN(0, 0, 0), IN(0, 1, 0)], [OUT(0, 0, 0), OUT(1, 0, 1)]),
    )


def test_a_graph_input_binding_needs_the_most_any_edge_assumes():
    wide = cd.SliceOperatorDesc(
        t(6, total_tensor_size_in_bytes=64, guaranteed_base_offset_alignment=32), t(3), [0], [3], [2]
    )
    g = cd.GraphDesc(1, 2, [SLICE, wide], [IN(0, 0, 0), IN(0, 1, 0)], [OUT(0, 0, 0), OUT(1, 0, 1)])
    (x,) = g.input_tensors
    assert (x.total_tensor_size_in_bytes, x.guaranteed_base_offset_alignment) == (64, 32)
    compiled = g.compile()
    buffer = aligned_empty(128).view(np.float32)
    with pytest.raises(
        cd.BindingError, match=re.escape("inputs[0]: the bound address is 16 bytes past a multiple of 32")
    ):
        compiled.execute([buffer[4:]], [np.empty(4, np.float32), np.empty(4, np.float32)])


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: IN(-1, 0, 0), ValueError, "graph_input_index = -1 must be a non-negative integer"),
        (lambda: IN(0.0, 0, 0), TypeError, "graph_input_index = 0.0 must be a non-negative integer"),
        (lambda: OUT(0, None, 0), TypeError, "from_node_output_index = None must be a non-negative integer"),
        (lambda: MID(0, 0, 0, 0, name=3), TypeError, "name must be a str or None, not int"),
        (
            lambda: cd.GraphDesc(1, 1, [3], [], []),
            TypeError,
            "nodes[0] must be an operator descriptor or GraphNode, not int",
        ),
        (
            lambda: cd.GraphDesc(1, 1, [SLICE], [OUT(0, 0, 0)], []),
            TypeError,
            "input_edges[0] must be a GraphInputEdge, not GraphOutputEdge",
        ),
        (lambda: cd.GraphDesc(1, 1, SLICE, [], []), TypeError, "nodes must be a sequence, not SliceOperatorDesc"),
    ],
)
def test_wrong_types_are_refused_by_name(build, error, message):
    with pytest.raises(error, match=re.escape(message)):
        build()


def test_numpy_integers_are_taken_by_value():
    edge = IN(np.int64(0), np.uint8(0), np.int32(0))
    assert (edge.graph_input_index, edge.to_node_index) == (0, 0)
    assert type(edge.to_node_input_index) is int


# ---------------------------------------------------------------------------------------------
# Composition, against node-by-node NumPy.


def run(compiled, inputs, output_shapes, dtype, xp=np):
    """Each output bound in the middle of a poisoned buffer, with room up to DirectML's
    rounded size; checks that no byte but the elements' changed and that inputs stayed."""
    before = [a.copy() for a in inputs]
    item = np.dtype(dtype).itemsize
    outs, bindings, buffers = [], [], []
    for shape in output_shapes:
        n = int(np.prod(shape)) * item
        buffer = aligned_empty(n + 128, xp)
        buffer[:] = 0xA5
        buffers.append(buffer)
        bindings.append(cd.BufferBinding(buffer, 64, -(-n // 4) * 4))
        outs.append(buffer[64 : 64 + n].view(dtype).reshape(shape))
    compiled.execute(inputs, bindings)
    for shape, buffer in zip(output_shapes, buffers):
        n = int(np.prod(shape)) * item
        assert bool((buffer[:64] == 0xA5).all()) and bool((buffer[64 + n :] == 0xA5).all())
    for a, b in zip(inputs, before):
        assert bool((a.view(np.uint8) == b.view(np.uint8)).all())
    return outs


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


BACKENDS = ["reference", "emulate"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    with cd.use_host_backend(request.param):
        yield request.param


def test_focus_is_one_copy_that_reads_the_input_in_order(backend):
    g = focus((2, 3, 8, 64))
    compiled = g.compile()
    (plan,) = compiled.plans
    (job,) = plan.jobs
    assert job.in_strides[-1] == 1  # walked in the input's order
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 64)).astype(np.float32)
    (y,) = run(compiled, [x], [(2, 12, 4, 32)], np.float32)
    assert same_bits(y, focus_oracle(x))


def test_split_then_rejoin_reversed(backend):
    compiled = split_rejoin(10, F16).compile()
    x = np.random.default_rng(2).standard_normal(10).astype(np.float16)
    (y,) = run(compiled, [x], [(10,)], np.float16)
    assert same_bits(y, np.concatenate([x[2:], x[:2]]))
    assert len(compiled.plans[0].jobs) == 2


def test_pad_of_a_crop_writes_each_zero_once(backend):
    crop = cd.Slice1OperatorDesc(t(6, 7), t(3, 4), [1, 2], [5, 4], [-2, 1])
    pad = cd.SliceGradOperatorDesc(t(3, 4), t(8, 9), [2, 1], [5, 7], [2, -2])
    g = cd.GraphDesc(1, 1, [crop, pad], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    x = np.random.default_rng(3).integers(1, 255, (6, 7)).astype(np.float32)
    (y,) = run(g.compile(), [x], [(8, 9)], np.float32)
    cropped = x[1:6][::-2][:3, 2:6]
    expected = np.zeros((8, 9), np.float32)
    expected[2:7:2, 1:8][:, ::-2][:, :4] = cropped
    assert same_bits(y, expected)


def test_two_slice_grads_in_a_row_and_a_slice_of_their_zeros(backend):
    first = cd.SliceGradOperatorDesc(t(2, 3), t(5, 7), [1, 0], [4, 7], [3, -3])
    second = cd.SliceGradOperatorDesc(t(5, 7), t(9, 8), [2, 1], [5, 7], [1, 1])
    tail = cd.SliceOperatorDesc(t(9, 8), t(4, 3), [1, 0], [4, 3], [2, 3])
    g = cd.GraphDesc(
        1, 2, [first, second, tail], [IN(0, 0, 0)], [OUT(1, 0, 0), OUT(2, 0, 1)], [MID(0, 0, 1, 0), MID(1, 0, 2, 0)]
    )
    dy = np.random.default_rng(4).integers(1, 1000, (2, 3)).astype(np.float32)
    a = np.zeros((5, 7), np.float32)
    a[1:5:3, 0:7][:, ::-3][:, :3] = dy
    b = np.zeros((9, 8), np.float32)
    b[2:7, 1:8] = a
    y0, y1 = run(g.compile(), [dy], [(9, 8), (4, 3)], np.float32)
    assert same_bits(y0, b) and same_bits(y1, b[1:9:2, 0:9:3])


@pytest.mark.parametrize(
    ("shape", "reshaped"),
    [((4, 6), (2, 2, 3, 2)), ((4, 6), (6, 4)), ((2, 3, 4), (24,)), ((5, 1, 3), (3, 5))],
)
def test_a_reshape_edge_re_describes_the_packed_buffer(backend, shape, reshaped):
    n = int(np.prod(shape))
    flip = cd.Slice1OperatorDesc(t(*shape), t(*shape), [0] * len(shape), shape, [-1] + [1] * (len(shape) - 1))
    window = [max(1, s - 1) for s in reshaped]
    take = cd.Slice1OperatorDesc(
        t(*reshaped), t(*[(w + 1) // 2 for w in window]), [0] * len(reshaped), window, [2] * len(reshaped)
    )
    g = cd.GraphDesc(1, 1, [flip, take], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    x = np.arange(1, n + 1, dtype=np.float32).reshape(shape)
    expected = x[::-1].reshape(reshaped)[tuple(slice(0, w, 2) for w in window)]
    (y,) = run(g.compile(), [x], [expected.shape], np.float32)
    assert same_bits(y, expected)


def test_an_unused_split_part_costs_nothing_and_a_node_output_may_feed_several(backend):
    split = cd.SplitOperatorDesc(t(4, 6, dtype=U8), [t(4, 1, dtype=U8), t(4, 2, dtype=U8), t(4, 3, dtype=U8)], axis=1)
    again = cd.SliceOperatorDesc(t(4, 3, dtype=U8), t(2, 3, dtype=U8), [1, 0], [2, 3], [2, 1])
    g = cd.GraphDesc(1, 3, [split, again], [IN(0, 0, 0)], [OUT(0, 2, 0), OUT(1, 0, 1), OUT(0, 2, 2)], [MID(0, 2, 1, 0)])
    compiled = g.compile()
    assert sum(len(p.jobs) for p in compiled.plans) == 3
    x = np.random.default_rng(5).integers(1, 256, (4, 6), dtype=np.uint8)
    y0, y1, y2 = run(compiled, [x], [(4, 3), (2, 3), (4, 3)], np.uint8)
    assert same_bits(y0, x[:, 3:]) and same_bits(y1, x[1:4:2, 3:]) and same_bits(y2, x[:, 3:])


def test_strided_graph_outputs_and_inputs(backend):
    # The graph input is a padded layout, the output reversed-in-place by strides of its desc.
    source = t(3, 4, strides=[8, 2])
    flip = cd.Slice1OperatorDesc(source, t(3, 4, strides=[5, 1]), [0, 0], [3, 4], [-1, 1])
    g = cd.GraphDesc(1, 1, [flip], [IN(0, 0, 0)], [OUT(0, 0, 0)])
    buffer = np.random.default_rng(6).standard_normal(24).astype(np.float32)
    out = np.full(16, np.nan, np.float32)
    g.compile().execute([buffer], [out])
    x = np.lib.stride_tricks.as_strided(buffer, (3, 4), (32, 8))
    y = np.lib.stride_tricks.as_strided(out, (3, 4), (20, 4))
    assert same_bits(np.ascontiguousarray(y), x[::-1])
    assert np.isnan(out[[4, 9, 14, 15]]).all()  # the gaps stay as they were


def test_graph_execute_keeps_the_binding_rules():
    compiled = split_rejoin().compile()
    x = np.arange(6, dtype=np.float32)
    with pytest.raises(cd.BindingError, match=re.escape("outputs[0] overlaps inputs[0] in memory")):
        compiled.execute([x], [x])
    with pytest.raises(cd.BindingError, match="2 inputs bound; the operator has 1"):
        compiled.execute([x, x], [np.empty(6, np.float32)])


def test_repr_and_picture_name_nodes_and_copies():
    compiled = focus().compile()
    assert repr(compiled) == (
        "<CompiledOperator graph of 5 nodes, 1 input and 1 output: 1 strided copy in 1 launch, 1152 bytes out>"
    )
    page = compiled._repr_html_()
    assert "nodes[4] (Join)" in page and "inputs[0] -&gt; outputs[0]" in page
    assert repr(focus()).startswith("GraphDesc(1 inputs, 1 outputs, 5 nodes: Slice, Slice, Slice, Slice, Join)")


def test_too_many_pieces_are_refused_with_a_reason(monkeypatch):
    monkeypatch.setattr(graph_module, "MOST_PIECES", 4)
    grad = cd.SliceGradOperatorDesc(t(2, 2), t(9, 9), [0, 0], [9, 9], [5, 5])
    g = cd.GraphDesc(1, 1, [grad], [IN(0, 0, 0)], [OUT(0, 0, 0)])
    with pytest.raises(cd.GraphError, match="composing the graph needs more than 4 copies"):
        g.compile()


def test_merge_phases_folds_offsets_a_fixed_step_apart():
    job = plan_module.CopyJob(0, 0, (3,), (2,), (1,), 0, 0)
    jobs = [plan_module.CopyJob(0, 0, (3,), (2,), (1,), i, o) for i, o in [(0, 0), (1, 3), (10, 6), (11, 9)]]
    (merged,) = plan_module.merge_phases(jobs)
    assert merged.sizes == (3, 2, 2) and merged.in_strides == (2, 1, 10) and merged.out_strides == (1, 3, 6)
    # Offsets that are no lattice stay apart.
    assert (
        len(
            plan_module.merge_phases(
                [
                    job,
                    plan_module.CopyJob(0, 0, (3,), (2,), (1,), 1, 3),
                    plan_module.CopyJob(0, 0, (3,), (2,), (1,), 5, 6),
                ]
            )
        )
        >= 2
    )


# ---------------------------------------------------------------------------------------------
# On the GPU, the same graphs.


def _cupy():
    from cudadml.backends import gpu_status

    ok, why = gpu_status()
    if not ok:
        pytest.skip(f"no usable GPU: {why}")
    import cupy

    return cupy


@pytest.mark.parametrize("dtype", [F16, F32])
def test_focus_on_the_gpu(dtype):
    cp = _cupy()
    npdt = np.float16 if dtype == F16 else np.float32
    compiled = focus((2, 3, 64, 48), dtype).compile()
    x = np.random.default_rng(7).standard_normal((2, 3, 64, 48)).astype(npdt)
    (y,) = run(compiled, [cp.asarray(x)], [(2, 12, 32, 24)], npdt, cp)
    assert same_bits(cp.asnumpy(y), focus_oracle(x))


def test_pad_and_split_on_the_gpu():
    cp = _cupy()
    crop = cd.Slice1OperatorDesc(t(6, 7), t(3, 4), [1, 2], [5, 4], [-2, 1])
    pad = cd.SliceGradOperatorDesc(t(3, 4), t(8, 9), [2, 1], [5, 7], [2, -2])
    g = cd.GraphDesc(1, 1, [crop, pad], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    x = np.random.default_rng(3).integers(1, 255, (6, 7)).astype(np.float32)
    (y,) = run(g.compile(), [cp.asarray(x)], [(8, 9)], np.float32, cp)
    with cd.use_host_backend("reference"):
        (expected,) = run(g.compile(), [x], [(8, 9)], np.float32)
    assert same_bits(cp.asnumpy(y), expected)
    compiled = split_rejoin(1000, F16).compile()
    x = np.random.default_rng(8).standard_normal(1000).astype(np.float16)
    (y,) = run(compiled, [cp.asarray(x)], [(1000,)], np.float16, cp)
    assert same_bits(cp.asnumpy(y), np.concatenate([x[2:], x[:2]]))


def test_a_chain_of_2000_nodes_and_a_graph_of_3000_outputs_compile(backend):
    u8 = cd.TensorDataType.UINT8
    m = 2000
    flips = [cd.Slice1OperatorDesc(t(64, dtype=u8), t(64, dtype=u8), [0], [64], [-1])] * m
    chain = cd.GraphDesc(1, 1, flips, [IN(0, 0, 0)], [OUT(m - 1, 0, 0)], [MID(k, 0, k + 1, 0) for k in range(m - 1)])
    x = np.random.default_rng(9).integers(1, 256, 64, dtype=np.uint8)
    (y,) = run(chain.compile(), [x], [(64,)], np.uint8)
    assert same_bits(y, x)  # an even number of flips
    n = 3000
    rows = [cd.SliceOperatorDesc(t(n, 8, dtype=u8), t(1, 8, dtype=u8), [k, 0], [1, 8], [1, 1]) for k in range(n)]
    wide = cd.GraphDesc(1, n, rows, [IN(0, k, 0) for k in range(n)], [OUT(k, 0, k) for k in range(n)])
    x = np.random.default_rng(10).integers(1, 256, (n, 8), dtype=np.uint8)
    outs = run(wide.compile(), [x], [(1, 8)] * n, np.uint8)
    assert all(same_bits(o, x[k : k + 1]) for k, o in enumerate(outs))


@pytest.mark.parametrize(("dtype", "npdt"), [(F16, np.float16), (U8, np.uint8)])
def test_focus_of_narrow_elements_moves_each_phase_pair_in_one_work_item(backend, dtype, npdt):
    from cudadml.backends import kernels

    compiled = focus((2, 3, 8, 64), dtype).compile()
    (plan,) = compiled.plans
    (launch,) = kernels.prepare(plan)
    assert launch.name.startswith(f"gather_lanes<{np.dtype(npdt).itemsize}, int, ")
    x = np.random.default_rng(11).integers(1, 255, (2, 3, 8, 64)).astype(npdt)
    (y,) = run(compiled, [x], [(2, 12, 4, 32)], npdt)
    assert same_bits(y, focus_oracle(x))


def test_a_flattened_join_stays_two_copies_and_a_strided_read_of_it_is_exact(backend):
    n = 40000
    join = cd.JoinOperatorDesc([t(n, 3), t(n, 5)], t(n, 8), 1)
    whole = cd.Slice1OperatorDesc(t(8 * n), t(8 * n), [0], [8 * n], [1])
    graph = cd.GraphDesc(2, 1, [join, whole], [IN(0, 0, 0), IN(1, 0, 1)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    compiled = graph.compile()
    assert sum(len(p.jobs) for p in compiled.plans) == 2
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal((n, 5)).astype(np.float32)
    (y,) = run(compiled, [a, b], [(8 * n,)], np.float32)
    assert same_bits(y, np.concatenate([a, b], 1).ravel())
    # A read that is not the whole dimension in order unrolls the rows (a few here).
    m = 6
    join = cd.JoinOperatorDesc([t(m, 3), t(m, 5)], t(m, 8), 1)
    every_third = cd.Slice1OperatorDesc(t(8 * m), t(16), [1], [46], [-3])
    graph = cd.GraphDesc(2, 1, [join, every_third], [IN(0, 0, 0), IN(1, 0, 1)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    a, b = rng.standard_normal((m, 3)).astype(np.float32), rng.standard_normal((m, 5)).astype(np.float32)
    (y,) = run(graph.compile(), [a, b], [(16,)], np.float32)
    assert same_bits(y, np.concatenate([a, b], 1).ravel()[1:47][::-3])


def test_a_strided_pad_re_described_as_rows_compiles(backend):
    # SLICE_GRAD with step 3 into a flat tensor read as (258, 256): pieces with extra axes.
    u8 = cd.TensorDataType.UINT8
    n = 22016
    grad = cd.SliceGradOperatorDesc(t(n, dtype=u8), t(3 * n, dtype=u8), [0], [3 * n], [3])
    rows = cd.SliceOperatorDesc(t(258, 256, dtype=u8), t(258, 256, dtype=u8), [0, 0], [258, 256], [1, 1])
    graph = cd.GraphDesc(1, 1, [grad, rows], [IN(0, 0, 0)], [OUT(1, 0, 0)], [MID(0, 0, 1, 0)])
    dy = np.random.default_rng(13).integers(1, 256, n, dtype=np.uint8)
    expected = np.zeros(3 * n, np.uint8)
    expected[: 3 * n : 3] = dy
    (y,) = run(graph.compile(), [dy], [(258, 256)], np.uint8)
    assert same_bits(y, expected.reshape(258, 256))


def test_bind_checks_once_and_runs_again_with_the_zeros(backend):
    pad = cd.SliceGradOperatorDesc(t(2, 3), t(4, 5), [1, 1], [2, 3], [1, 1])
    compiled = cd.GraphDesc(1, 1, [pad], [IN(0, 0, 0)], [OUT(0, 0, 0)]).compile()
    x = np.random.default_rng(14).standard_normal((2, 3)).astype(np.float32)
    y = np.full((4, 5), np.nan, np.float32)
    bound = compiled.bind([x], [y])
    bound.execute()
    expected = np.zeros((4, 5), np.float32)
    expected[1:3, 1:4] = x
    assert same_bits(y, expected)
    x[:] = 7
    bound.execute()
    expected[1:3, 1:4] = 7
    assert same_bits(y, expected)


def test_a_compiled_graph_is_captured_in_a_cuda_graph():
    cp = _cupy()
    pad = cd.SliceGradOperatorDesc(t(2, 3), t(4, 5), [1, 1], [2, 3], [1, -1])
    compiled = cd.GraphDesc(1, 1, [pad], [IN(0, 0, 0)], [OUT(0, 0, 0)]).compile()
    x = cp.asarray(np.random.default_rng(15).standard_normal((2, 3)).astype(np.float32))
    y = cp.full((4, 5), np.nan, np.float32)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        compiled.execute([x], [y], stream=stream)
        captured = stream.end_capture()
    assert bool(cp.isnan(y).all())  # captured, not run
    captured.launch(stream)
    stream.synchronize()
    expected = np.zeros((4, 5), np.float32)
    expected[1:3, 1:4] = cp.asnumpy(x)[:, ::-1]
    assert same_bits(cp.asnumpy(y), expected)

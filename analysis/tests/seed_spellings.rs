//! The seed documents' own spellings (the tutorial's and the spec's), each taken with the
//! meaning its text gives: `Channel(capacity=4)` and an unnamed channel or event named after
//! its variable, `TensorLayout.replicated(rank=2)`, `relayout(x, to=...)`,
//! `TimingPolicy.batched(batch_size=16)`; and `interleaved(priority=1)`, which nothing gives a
//! meaning, refused with what to write instead.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=randn(seed=0))
T0 = Tensor((4, 16, 16), F32)
Y = Tensor((4, 16, 16), F32)
tiles = Dense[4]()

@kernel
def load_tile(src: In[Tile[16, 16, F32]], dst: Out[Tile[16, 16, F32]]):
    pto.store(dst, src)

@kernel
def square_tile(src: In[Tile[16, 16, F32]], dst: Out[Tile[16, 16, F32]]):
    pto.store(dst, pto.mul(src, src))
"#;

/// The diagnostics, or for a clean file the lowered programs from the first workload on.
fn shown(text: &str) -> String {
    common::diagnostics_or_lowered(text, |p| {
        let text = p.to_string();
        text[text.find("\nworkload").unwrap_or(0)..].to_string()
    })
}

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&shown(&format!("{HEADER}{body}")));
}

const PIPELINE: &str = r#"
@workload
def pipeline(tiles):
    with P.pipe():
        for i in P.seq(tiles):
            send(load_to_compute, load_tile[i](src=X[i], dst=T0[i]))
        with consume(load_to_compute) as t:
            square_tile[t](src=T0[t], dst=Y[t])

program = pipeline(tiles).compile(target="cpu_sim")
"#;

#[test]
fn an_unnamed_channel_takes_its_variables_name_and_capacity_is_depth() {
    check(
        &format!("load_to_compute = Channel(capacity=4)\n{PIPELINE}"),
        expect![[r#"

            workload #0 pipeline(tiles)
              pipeline
                loop Sequential i in tiles Dense x4
                  task #0 load_tile[i] fields (i) (src: In X[i], dst: Out T0[i])
                  send load_to_compute task #0
                consume load_to_compute as t
                  task #1 square_tile[t] fields (t) (src: In T0[t], dst: Out Y[t])

            root #0
        "#]],
    );
    // The same plan as the spec's spelling.
    assert_eq!(
        shown(&format!(
            "{HEADER}load_to_compute = Channel(capacity=4)\n{PIPELINE}"
        )),
        shown(&format!(
            "{HEADER}load_to_compute = Channel(\"load_to_compute\", depth=4)\n{PIPELINE}"
        ))
    );
    check(
        &format!("load_to_compute = Channel(\"l\", depth=2, capacity=4)\n{PIPELINE}"),
        expect![[r#"
            WSP203 `capacity=4`: `Channel` got `depth` twice
        "#]],
    );
}

const COPY: &str = r#"
@workload
def copy(tiles):
    for i in P(tiles):
        load_tile[i](src=X[i], dst=T0[i])
"#;

#[test]
fn the_tutorials_layout_and_timing_spellings_mean_the_specs() {
    check(
        &format!(
            r#"
A = Tensor((4, 16), F32, layout=TensorLayout.sharded(dim=0, rank=2))
B = relayout(A, to=TensorLayout.replicated(rank=2))
C = relayout(A, layout=TensorLayout.default(2))
done = Event()
{COPY}
program = copy(tiles).timing(TimingPolicy.batched(batch_size=16)).compile(target="cpu_sim")
"#
        ),
        expect![[r#"

            workload #0 copy(tiles)
              loop Independent i in tiles Dense x4
                task #0 load_tile[i] fields (i) (src: In X[i], dst: Out T0[i])

            root #0
            schedule timing batched(16)
        "#]],
    );
    check(
        &format!(
            "{COPY}\nbad = copy(tiles).timing(TimingPolicy.interleaved(priority=1)).compile(target=\"cpu_sim\")\n"
        ),
        expect![[r#"
            WSP203 `priority`: `TimingPolicy.interleaved` has no `priority`: it takes how many tasks a stream issues in its turn, `interleaved(n)` (the spec writes `interleaved(streams)`); the tutorial's `interleaved(priority=1)` means nothing the original framework does
        "#]],
    );
}

#[test]
fn a_collective_without_a_mesh_axis_takes_the_one_its_tensor_is_sharded_on() {
    let with = |call: &str| {
        format!(
            r#"{HEADER}
partial = Tensor((2, 16), F32, layout=TensorLayout.sharded(dim=0, rank=2, mesh_axis=1))
total = {call}
again = allgather(total)
"#
        )
    };
    // The sum is replicated: gathering it again has nothing to gather.
    assert_eq!(
        shown(&with("allreduce(partial)")),
        "WSP203 `allgather(total)`: `allgather` without `mesh_axis`: `total` is not sharded\n"
    );
    assert_eq!(
        shown(&with("allreduce(partial)")),
        shown(&with("allreduce(partial, mesh_axis=1)"))
    );
    check(
        r#"
both = Tensor((2, 16), F32, layout=TensorLayout((TensorShard(0), TensorShard(1))))
plain = Tensor((2, 16), F32)
a = allreduce(both)
b = allgather(plain)
"#,
        expect![[r#"
            WSP203 `allreduce(both)`: `allreduce` without `mesh_axis`: `both` is sharded on several mesh axes: give one of mesh_axis=0, mesh_axis=1
            WSP203 `allgather(plain)`: `allgather` without `mesh_axis`: `plain` is not sharded
        "#]],
    );
}

/// The spec's `TensorLayout(dist_tuple, mem=MemLayout.row_major(shape))`: kept in the IR; a
/// column-major tensor reads a storage tensor in its order, as a view does.
#[test]
fn a_memory_layout_is_kept_and_a_column_major_tensor_reads_its_storage() {
    // The tensors and the tasks, as lowered. (The 910B could not load `C`'s tiles, a warning
    // for this cpu_sim program.)
    let check = |body: &str, expect: Expect| {
        expect.assert_eq(&common::errors_or_lowered(
            &format!("{HEADER}{body}"),
            |p| {
                let text = p.to_string();
                let tensors: Vec<&str> = text
                    .lines()
                    .filter(|l| l.starts_with("tensor A") || l.starts_with("tensor C"))
                    .collect();
                let tasks: Vec<&str> = text.lines().filter(|l| l.contains("task #")).collect();
                format!("{}\n{}\n", tensors.join("\n"), tasks.join("\n"))
            },
        ))
    };
    check(
        r#"
B, H, S, D = 2, 2, 16, 16
A = Tensor((B, H, S, D), F32, init=arange(),
    layout=TensorLayout((TensorShard(0), TensorReplicate(), TensorReplicate(), TensorReplicate()),
                        mem=MemLayout.row_major((B, H, S, D))))
C = Tensor((4, 16, 16), F32, init=arange(), layout=TensorLayout((TensorReplicate(), TensorReplicate(), TensorReplicate()), mem=MemLayout.col_major((4, 16, 16))))

@workload
def w():
    for i in P(Dense[4]):
        square_tile[i](src=C[i], dst=Y[i])

program = w().compile(target="cpu_sim")
"#,
        expect![[r#"
            tensor A [2,2,16,16] F32 layout [S(0), R, R, R] mem strides (512, 256, 16, 1) init arange
            tensor C.storage [16,16,4] F32 layout [R, R, R] init arange of [4,16,16] stored in order (2, 1, 0)
            tensor C [4,16,16] F32 layout [R, R, R] mem strides (1, 4, 64) = view(C.storage; 1*2, 1*1, 1*0)
                task #0 square_tile[i] fields (i) (src: In C[i], dst: Out Y[i])
        "#]],
    );
}

#[test]
fn a_memory_layout_that_is_not_a_dense_order_is_refused() {
    check(
        r#"
A = Tensor((4, 16), F32, layout=TensorLayout((TensorReplicate(), TensorReplicate()), mem=MemLayout(strides=(32, 1))))
B = Tensor((4, 16), F32, layout=TensorLayout((TensorShard(0), TensorReplicate()), mem=MemLayout.col_major((4, 16))))
L = TensorLayout((TensorReplicate(), TensorReplicate()), mem=MemLayout.row_major((4, 16, 2)))
M = TensorLayout((TensorReplicate(), TensorReplicate()), mem=3)
"#,
        expect![[r#"
            WSP401 `TensorLayout((TensorReplicate(), TensorReplicate()), mem=MemLayout(strides=(32, 1)))`: the memory strides (32, 1) do not lay out a [4,16] tensor densely: give its dimensions an order, `MemLayout.row_major((4, 16))` or `MemLayout.col_major((4, 16))`
            WSP401 `TensorLayout((TensorShard(0), TensorReplicate()), mem=MemLayout.col_major((4, 16)))`: a memory order other than row-major is for a replicated tensor: each shard of a sharded one is laid out row-major
            WSP401 `MemLayout.row_major((4, 16, 2))`: the memory layout has 3 strides but the layout 2 dimensions
            WSP210 `3`: `mem` is a MemLayout, not the integer 3
        "#]],
    );
}

/// The spec's typed channel, `Channel[Tile](depth=2)`: the same channel (it carries tasks'
/// completions; the element type adds nothing).
#[test]
fn a_typed_channel_is_a_channel() {
    check(
        &format!("load_to_compute = Channel[Tile](depth=2)\nevent = Channel(depth=0)\n{PIPELINE}"),
        expect![[r#"

            workload #0 pipeline(tiles)
              pipeline
                loop Sequential i in tiles Dense x4
                  task #0 load_tile[i] fields (i) (src: In X[i], dst: Out T0[i])
                  send load_to_compute task #0
                consume load_to_compute as t
                  task #1 square_tile[t] fields (t) (src: In T0[t], dst: Out Y[t])

            root #0
        "#]],
    );
}

/// `(TensorReplicate(),) * 3` and `[0] * n` repeat a sequence as Python does, up to a bound.
#[test]
fn a_repeated_sequence_is_built_when_checked() {
    expect![[r#"
        WSP002 `[0] * 100000`: a repeated sequence of 100000 items is more than the 65536 a file may build
    "#]]
    .assert_eq(&common::diagnostics_shown(&format!(
        "{HEADER}L = TensorLayout((TensorReplicate(),) * 3)\nZ = Tensor((4, 16, 16), F32, layout=L)\nN = [1, 2] * 2\nM = 2 * (1,)\nB = [0] * 100000\n"
    )));
    expect![[r#"
        Print([Text("[1, 2, 1, 2]"), Text("(1, 1)"), Text("[]")])
    "#]]
    .assert_eq(&common::diagnostics_or_actions(&format!(
        "{HEADER}print([1, 2] * 2, 2 * (1,), [0] * 0)\n"
    )));
}

/// The tutorial's `"""Tiled matrix multiplication."""`: a def's docstring is documentation, in
/// kernels, `cpp_src` kernels and workloads; a string anywhere else in a body is still not a
/// statement WSP runs.
#[test]
fn a_docstring_documents_and_does_nothing() {
    expect![[r#"
        WSP002 `"""not a docstring"""`: a workload statement is a task `kernel[i](...)`, `send(...)` or `slot_load_u64(...)`
    "#]]
    .assert_eq(&common::diagnostics_shown(&format!(
        r#"{HEADER}
@kernel
def dbl(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    """Doubles x."""
    pto.store(y, pto.add(x, x))

@kernel(cpp_src="y[0] = 1;")
def custom(y: Out[Tile[16, 16, F32]]):
    """Custom."""
    pass

@workload
def w():
    """Every tile."""
    for b in P(Dense[4]):
        """not a docstring"""
        dbl[b](x=X[b], y=Y[b])
"#
    )));
}

/// The spec's `tiered_attention(batch, seq_lens)`: a predicate on a workload parameter is read
/// once the workload is called; checked for any arguments, its `P.otherwise()` still follows a
/// `P.when(...)` (it was WSP210 there).
#[test]
fn a_predicate_on_a_parameter_still_opens_a_when_chain() {
    expect![[r#""#]].assert_eq(&common::diagnostics_shown(&format!(
        r#"{HEADER}
I32 = DType.I32
SeqLens = Tensor((4,), I32, init=arange())

@workload
def tiered(batch, seq_lens):
    for b in P(batch):
        with P.when(seq_lens[b] <= 2048):
            load_tile[b](src=X[b], dst=Y[b])
        with P.otherwise():
            square_tile[b](src=X[b], dst=Y[b])
"#
    )));
}

/// The spec's `combine(rms_norm, attention, ffn)` and `sequential(load, compute, store)`: a
/// workload without parameters, uncalled, stands for its one call; one with parameters is
/// still refused.
#[test]
fn composition_takes_a_parameterless_workload_uncalled() {
    check(
        r#"
@workload
def load():
    for t in P(tiles):
        load_tile[t](src=X[t], dst=T0[t])

@workload
def square():
    for t in P(tiles):
        square_tile[t](src=T0[t], dst=Y[t])

@workload
def square_of(n):
    for t in P(n):
        square_tile[t](src=T0[t], dst=Y[t])

a = sequential(load, square).compile()
b = sequential(load, square_of).compile()
"#,
        expect![[r#"
            WSP210 `square_of`: `sequential` takes workload calls, not a workload with parameters: call it with its arguments
        "#]],
    );
}

/// The spec's task-graph imports: `StartPolicy` and `TracePolicy` are accepted in
/// `task_graph(start=..., trace=...)` with what each target does instead (WSP501), their
/// arguments checked; `Program` is importable and not callable.
#[test]
fn start_and_trace_policies_say_what_runs_instead() {
    check(
        r#"
from pto_wsp import StartPolicy, TracePolicy, Program

@workload
def w():
    for t in P(tiles):
        load_tile[t](src=X[t], dst=Y[t])

a = (w()
    .task_graph(start=StartPolicy.threshold(100), trace=TracePolicy.cycles(lambda t: t.t * 10))
    .compile(target="cpu_sim"))
b = w().task_graph(start=StartPolicy.after_orchestration(), trace=TracePolicy.none()).compile(target="ascend_npu")
c = w().task_graph(start=StartPolicy.threshold(0)).compile()
d = w().task_graph(trace=TracePolicy.cycles(lambda t: t.zz)).compile()
e = w().task_graph(start=TracePolicy.none()).compile()
q = Program()
"#,
        expect![[r#"
            WSP501 `task_graph(start=StartPolicy.threshold(100), trace=TracePolicy.cycles(lambda t: t.t * 10))`: `task_graph(start=...)` is only partly enforced on cpu_sim: each task starts once it is dispatched and its dependencies are done, while later tasks are still being built; the start policy is ignored
            WSP501 `task_graph(start=StartPolicy.threshold(100), trace=TracePolicy.cycles(lambda t: t.t * 10))`: `task_graph(trace=...)` is only partly enforced on cpu_sim: the simulated clock always runs, with the target's cost model (a `cost_fn` is not used); `program.enable_tracing(...)` chooses what is recorded
            WSP501 `task_graph(start=StartPolicy.after_orchestration(), trace=TracePolicy.none())`: `task_graph(start=...)` is only partly enforced on ascend_npu: the emitted expander issues each task as soon as it is expanded; the start policy is ignored
            WSP501 `task_graph(start=StartPolicy.after_orchestration(), trace=TracePolicy.none())`: `task_graph(trace=...)` is only partly enforced on ascend_npu: the tree runs on the device, which keeps no cycle trace; the policy is ignored
            WSP210 `0`: a task count must be a positive integer, not 0
            WSP501 `task_graph(trace=TracePolicy.cycles(lambda t: t.zz))`: `task_graph(trace=...)` is only partly enforced on cpu_sim: the simulated clock always runs, with the target's cost model (a `cost_fn` is not used); `program.enable_tracing(...)` chooses what is recorded
            WSP503 `TracePolicy.none()`: this argument takes a StartPolicy, not a policy
            WSP210 `Program`: `Program` is not called here: the type of a compiled program: `.compile()` makes one.
        "#]],
    );
}

/// The original's `Workload("task", kernel=..., params=[...], resources=...)`, imported from its
/// submodule as its tests do, is `task(...)`: at module level, in a process body; another kind,
/// a missing or unknown argument, and a name a submodule does not have here are located.
#[test]
fn the_originals_workload_constructor_is_a_task() {
    check(
        r#"
from pto_wsp.csp import Channel, send, record
from pto_wsp.workload import Workload

a = Workload("cond", kernel=load_tile, params=[0], resources={"src": X[0], "dst": T0[0]})
b = Workload("task", kernel=load_tile, params=[0])
c = Workload("task", kernel=load_tile, params=[0], resources=[X[0], T0[0]], extra=1)
ch = Channel("ch", depth=1)
loader = process("loader").produces(ch).body(
    for_each(tiles, lambda t: send(ch, Workload("task", kernel=load_tile, params=[t], resources=[X[t], T0[t]]))))
storer = process("storer").consumes(ch).body(
    consume(ch, lambda t: Workload("nope", kernel=square_tile, params=[t], resources=[T0[t], Y[t]])))
q = connect([loader, storer], [ch]).compile()
"#,
        expect![[r#"
            WSP101 `record`: `pto_wsp.csp` has no `record` here; it has `Channel`, `Event`, `process`, `send`, `consume`, `connect`, `replicate`
            WSP210 `"cond"`: `Workload(...)` here builds a task, `Workload("task", kernel=k, params=[i], resources={...})`, not `"cond"`: write a `@workload`, `sequential(...)`, `combine(...)` or `cond(...)` for the others
            WSP203 `("task", kernel=load_tile, params=[0])`: `Workload` is missing `resources`
            WSP203 `extra=1`: `Workload` has no parameter `extra`
            WSP210 `"nope"`: `Workload(...)` here builds a task: `Workload("task", kernel=k, params=[i], resources={...})`
        "#]],
    );
    check(
        r#"
from pto_wsp.primitives import sequential
from pto_wsp.workload import Workload

first = Workload("task", kernel=load_tile, params=[0], resources={"src": X[0], "dst": T0[0]})
second = Workload("task", kernel=square_tile, params=[0], resources=[T0[0], Y[0]])
program = sequential(first, second).compile()
"#,
        expect![[r#"

            workload #0 first("task", kernel=load_tile, params=[0], resources={"src": X[0], "dst": T0[0]})
              task #0 load_tile[0] fields (i0) (src: In X[0], dst: Out T0[0])

            workload #1 second("task", kernel=square_tile, params=[0], resources=[T0[0], Y[0]])
              task #0 square_tile[0] fields (i0) (src: In T0[0], dst: Out Y[0])

            root sequential(#0, #1)
        "#]],
    );
}

//! The original's run-time scalar expressions as the checker sees them: what they lower to in
//! predicates and keys, the symbols a program then takes, and the mistakes, located.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *
from pto_wsp.scalar_expr import axis, symbol_u64, slot_i64

F32 = DType.F32
X = Tensor((4, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)
rows = DenseDyn(0)

@kernel
def k(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.exp(x))
"#;

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_or_lowered(
        &format!("{HEADER}{body}"),
        |p| {
            let text = p.to_string();
            let from = text.find("symbol").unwrap_or(0);
            let to = text.find("\ntensor").unwrap_or(0);
            let symbols = if from < to { &text[from..to] } else { "" };
            format!(
                "{symbols}\n{}",
                &text[text.find("\nworkload").unwrap_or(0)..]
            )
        },
    ));
}

#[test]
fn predicates_and_keys_lower_to_run_time_expressions() {
    check(
        r#"
@workload
def w(rows):
    for b in P(rows):
        with P.when((axis("b") & 1) == (symbol_u64("cut") >> 2) if b < 3 else ~b < slot_i64(0)):
            k[b](x=X[b], y=Y[b])

program = (w(rows)
    .dispatch(DispatchPolicy.hash(lambda t: (t.b == symbol_u64("hot")).where(0, t.tags["spread"] ^ t.b).cast_u64()))
    .compile(target="cpu_sim"))
program.execute(rows=4, cut=8, hot=1, spread=3)
"#,
        expect![[r#"
            symbol rows = 0
            symbol cut = 0
            symbol hot = 0
            symbol spread = 0

            workload #0 w(rows)
              loop Independent b in rows DenseDyn x0
                when (((b & 1) == (symbol_u64("cut") >> 2)) if (b < 3) else (((-b) - 1) < slot_u64(0)))
                  task #0 k[b] fields (b) (x: In X[b], y: Out Y[b])

            root #0
            schedule dispatch hash((0 if (b == symbol_u64("hot")) else (symbol_u64("spread") ^ b)))
        "#]],
    );
}

#[test]
fn mistakes_are_located() {
    check(
        r#"
@workload
def w(rows):
    for b in P(rows):
        with P.when(axis("c") < 2):
            k[b](x=X[b], y=Y[b])
        with P.when(symbol_u64(3) < b.where(1)):
            k[b](x=X[b], y=Y[b])
        with P.when(b.cast_f32() < 2):
            k[b](x=X[b], y=Y[b])

program = w(rows).compile(target="cpu_sim")
program.execute(rows=-1, nope=2)
"#,
        expect![[r#"
            WSP101 `"c"`: no loop variable `c` here: `axis("c")` reads a variable of an enclosing `for ... in P(...)`
            WSP210 `3`: expected a string, not the integer 3
            WSP203 `(1)`: `.where` is missing `otherwise`
            WSP102 `cast_f32`: `Expr` has no member `cast_f32`
            WSP210 `-1`: `rows` is bound to an integer, 0 or more, not the integer -1
            WSP102 `nope`: `nope` is not a run-time symbol of this program (a DenseDyn axis it iterates, or a `symbol_u64(...)` its predicates and keys read); they are `rows` (default 0)
        "#]],
    );
}

#[test]
fn module_level_tasks_slot_loads_and_cond_lower_to_workloads() {
    check(
        r#"
first = task(k, [0], {"x": X[0], "y": Y[0]})
load = slot_load_u64(0, Y[0], row=0, col=0)
then = task(k, [1], {"x": X[1], "y": Y[1]})
other = cond(slot_u64(0) > 2, task(k, [2], {"x": X[2], "y": Y[2]}), task(k, [3], {"x": X[3], "y": Y[3]}))
branch = cond(slot_u64(0) != 0, then, other)
program = sequential(first, load, branch).compile(target="cpu_sim")
"#,
        expect![[r#"
            program program target cpu_sim (ir v3)

            workload #0 first(k, [0], {"x": X[0], "y": Y[0]})
              task #0 k[0] fields (i0) (x: In X[0], y: Out Y[0])

            workload #1 load(0, Y[0], row=0, col=0)
              slot 0 = Y[0][0, 0]

            workload #2 branch(slot_u64(0) != 0, then, other)
              when (slot_u64(0) != 0)
                task #0 k[1] fields (i0) (x: In X[1], y: Out Y[1])
              otherwise
                when (slot_u64(0) > 2)
                  task #1 k[2] fields (i0) (x: In X[2], y: Out Y[2])
                otherwise
                  task #2 k[3] fields (i0) (x: In X[3], y: Out Y[3])

            root sequential(#0, #1, #2)
        "#]],
    );
}

#[test]
fn a_cond_takes_a_predicate_and_two_workloads() {
    check(
        r#"
then = task(k, [1], {"x": X[1], "y": Y[1]})
bad = cond(X, then, then)
worse = cond(slot_u64(0) != 0, then, 3)
"#,
        expect![[r#"
            WSP210 `X`: a `cond` predicate is an integer expression read when it runs (`slot_u64(0) != 0`), not the tensor `X` [4,16,16] F32
            WSP210 `3`: a `cond` branch is one workload: a task, a slot load, a `cond` or a workload's call, not the integer 3
        "#]],
    );
}

/// The spec's `with P.when(seq_lens[b] <= 2048)` with `seq_lens` a list: a lookup of its
/// integers by the loop variable, a balanced tree of selects, when every value of `b` the
/// call's extents give is inside the list.
#[test]
fn a_list_indexed_by_a_loop_variable_is_a_run_time_lookup() {
    check(
        r#"
seq_lens = [512, 2048, 8192, 32768, 128]

@workload
def tiered(batch, seq_lens):
    for b in P(batch):
        with P.when(seq_lens[b] <= 2048):
            k[b](x=X[b], y=Y[b])
        with P.when(seq_lens[-1] + seq_lens[1:3][0] == len(seq_lens[:2]) * 1088):
            k[b](x=X[b], y=Y[b])

program = tiered(Dense[4], seq_lens).compile(target="cpu_sim")
"#,
        expect![[r#"
            program program target cpu_sim (ir v3)

            workload #0 tiered(Dense[4], seq_lens)
              loop Independent b in range Dense x4
                when (((512 if (b < 1) else 2048) if (b < 2) else (8192 if (b < 3) else (32768 if (b < 4) else 128))) <= 2048)
                  task #0 k[b] fields (b) (x: In X[b], y: Out Y[b])
                when 1
                  task #1 k[b] fields (b) (x: In X[b], y: Out Y[b])

            root #0
        "#]],
    );
}

/// Out of range, for a constant or for some value of the loop variable; an extent known only
/// at run time; items that are not integers; a step.
#[test]
fn list_indices_out_of_range_or_unknown_are_located() {
    check(
        r#"
seq_lens = [512, 2048]
names = ["a", "b", "c", "d"]

@workload
def tiered(batch, seq_lens):
    for b in P(batch):
        with P.when(seq_lens[b] <= 2048):
            k[b](x=X[b], y=Y[b])

@workload
def named(batch):
    for b in P(batch):
        with P.when(names[b] == 1):
            k[b](x=X[b], y=Y[b])

x = seq_lens[2]
y = seq_lens[::2]
a = tiered(Dense[4], seq_lens).compile(target="cpu_sim")
c = tiered(rows, seq_lens).compile(target="cpu_sim")
d = named(Dense[4]).compile(target="cpu_sim")
"#,
        expect![[r#"
            WSP210 `b`: a list indexed by a loop variable holds integers (its item is read when the task runs)
            WSP208 `2`: index 2 is out of range for a list of 2 items
            WSP002 `::2`: a list slice has no step here: `lo:hi`
            WSP208 `tiered(Dense[4], seq_lens)`: in this call of `tiered`: `b` reaches 3, out of range for a list of 2 items
            WSP210 `tiered(rows, seq_lens)`: in this call of `tiered`: `b` indexes a list, so its values must be known when the file is checked (a static axis, `Dense[n]`); for lengths bound at run time, read an integer tensor (`SeqLens[b]`)
        "#]],
    );
}

/// The original's `t.params[k]`: each task's k-th index field, once the program's tasks are
/// known; a position some task lacks, or where tasks have different fields, is located at the
/// directive.
#[test]
fn task_params_name_each_tasks_index_fields() {
    check(
        r#"
@workload
def w():
    for b in P(Dense[4]):
        k[b](x=X[b], y=Y[b])

@workload
def v():
    for h in P(Dense[4]):
        k[h](x=X[h], y=Y[h])

a = w().dispatch(DispatchPolicy.affinity(lambda t: (t.params[0] & 1, t.params[0]))).compile(target="cpu_sim")
"#,
        expect![[r#"
            program a target cpu_sim (ir v3)

            workload #0 w()
              loop Independent b in range Dense x4
                task #0 k[b] fields (b) (x: In X[b], y: Out Y[b])

            root #0
            schedule dispatch affinity((((b & 1) * 4) + b))
        "#]],
    );
    check(
        r#"
@workload
def w():
    for b in P(Dense[4]):
        k[b](x=X[b], y=Y[b])

@workload
def v():
    for h in P(Dense[4]):
        k[h](x=X[h], y=Y[h])

a = w().dispatch(DispatchPolicy.hash(lambda t: t.params[1])).compile(target="cpu_sim")
b = sequential(w(), v()).dispatch(DispatchPolicy.dispatch_by(lambda t: t.params[0])).compile(target="cpu_sim")
c = w().stream_by(lambda t: t.params["b"]).compile(target="cpu_sim")
"#,
        expect![[r#"
            WSP504 `dispatch(DispatchPolicy.hash(lambda t: t.params[1]))`: `t.params[1]` is a task's parameter 1 (counted from 0), and the tasks of `k` have 1 parameter
            WSP504 `dispatch(DispatchPolicy.dispatch_by(lambda t: t.params[0]))`: `t.params[0]` is a different field in different tasks (`b`, `h`); name the field (`t.b`)
            WSP504 `t.params["b"]`: a parameter numbered by a string in a key: a key may use task fields (`t.b`, `t.get("b")`), integer constants and `slot_u64(i)`
        "#]],
    );
}

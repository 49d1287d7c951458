//! The CSP process builder of the spec (§3.7) and the original: `process(name).consumes(...)
//! .produces(...).body(...)`, `for_each`, `consume(ch, lambda t: ...)`, `task(kernel, [i],
//! {...})`, `replicate` and `connect`. It makes the plan `with P.pipe():` makes, so it runs the
//! same and gets the same checks (WSP303, WSP304), plus checks of what each process declares.

mod common;

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, file_diagnostics};

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

l2c = Channel("l2c", depth=2)
"#;

/// The diagnostics, or for a clean file its lowered programs' workloads.
fn shown(text: &str) -> String {
    common::diagnostics_or_lowered(text, |p| {
        let text = p.to_string();
        // From the first workload on: the header names the program, which differs.
        text[text.find("\nworkload").unwrap_or(0)..].to_string()
    })
}

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&shown(&format!("{HEADER}{body}")));
}

const BUILDER: &str = r#"
loader = process("loader").produces(l2c).body(
    for_each(tiles, lambda t: send(l2c, task(load_tile, [t], {"src": X[t], "dst": T0[t]})))
)
squarer = process("squarer").consumes(l2c).body(
    consume(l2c, lambda t: square_tile[t](src=T0[t], dst=Y[t]))
)
program = connect([loader, squarer], [l2c]).compile()
"#;

#[test]
fn the_builder_makes_the_plan_p_pipe_makes() {
    let statements = shown(&format!(
        "{HEADER}{}",
        r#"
@workload
def pipeline(tiles):
    with P.pipe():
        for t in P.seq(tiles):
            send(l2c, load_tile[t](src=X[t], dst=T0[t]))
        with consume(l2c) as t:
            square_tile[t](src=T0[t], dst=Y[t])

program = pipeline(tiles).compile()
"#
    ));
    let builder = shown(&format!("{HEADER}{BUILDER}"));
    assert!(!builder.contains("WSP"), "{builder}");
    let body = |s: &str| s[s.find("\n  ").unwrap()..].to_string();
    assert_eq!(body(&builder), body(&statements));
    expect![[r#"

        workload #0 program(process "loader", process "squarer")
          pipeline
            loop Sequential t in tiles Dense x4
              task #0 load_tile[t] fields (t) (src: In X[t], dst: Out T0[t])
              send l2c task #0
            consume l2c as t
              task #1 square_tile[t] fields (t) (src: In T0[t], dst: Out Y[t])

        root #0
    "#]]
    .assert_eq(&builder);
}

#[test]
fn resources_may_be_a_list_in_parameter_order_and_processes_inline() {
    let listed = shown(&format!(
        "{HEADER}{}",
        r#"
program = connect(
    [
        process("loader").produces(l2c).body(
            for_each(tiles, lambda t: send(l2c, task(load_tile, [t], [X[t], T0[t]])))
        ),
        replicate(
            process("squarer").consumes(l2c).body(
                consume(l2c, lambda t: task(square_tile, [t], {"src": T0[t], "dst": Y[t]}))
            ),
            4,
        ),
    ],
    [l2c],
).compile()
"#
    ));
    assert_eq!(listed, shown(&format!("{HEADER}{BUILDER}")));
}

#[test]
fn processes_declare_the_channels_they_use() {
    check(
        r#"
c2s = Channel("c2s", depth=2)
loader = process("loader").body(
    for_each(tiles, lambda t: send(l2c, task(load_tile, [t], {"src": X[t], "dst": T0[t]})))
)
squarer = process("squarer").consumes(l2c).produces(c2s).body(
    consume(l2c, lambda t: square_tile[t](src=T0[t], dst=Y[t]))
)
program = connect([loader, squarer], [l2c]).compile()
"#,
        expect![[r#"
            WSP303 `send(l2c, task(load_tile, [t], {"src": X[t], "dst": T0[t]}))`: the process `loader` sends on `l2c` but does not declare it: add `.produces(l2c)`
            WSP303 `[l2c]`: the process `squarer` uses the channel `c2s`, which `connect` does not list
        "#]],
    );
}

#[test]
fn unmatched_channels_and_deadlocks_are_found_as_in_p_pipe() {
    check(
        r#"
c2s = Channel("c2s", depth=0)
loader = process("loader").produces(l2c).body(
    for_each(tiles, lambda t: send(l2c, task(load_tile, [t], {"src": X[t], "dst": T0[t]})))
)
squarer = process("squarer").consumes(c2s).body(
    consume(c2s, lambda t: square_tile[t](src=T0[t], dst=Y[t]))
)
program = connect([loader, squarer], [l2c, c2s]).compile()
"#,
        expect![[r#"
            WSP303 `send(l2c, task(load_tile, [t], {"src": X[t], "dst": T0[t]}))`: channel `l2c` is sent on but never consumed: add `with consume(l2c) as t:` in the pipeline
            WSP303 `consume(c2s, lambda t: square_tile[t](src=T0[t], dst=Y[t]))`: channel `c2s` is consumed but nothing is sent on it: add `send(c2s, task)` to a stage
            WSP304 `connect([loader, squarer], [l2c, c2s])`: this pipeline deadlocks: stage 1 waits to send on `l2c`, which is full
        "#]],
    );
}

#[test]
fn builder_mistakes_are_located() {
    check(
        r#"
a = process("a").produces(l2c)
b = process("b").body(task(load_tile, [0], {"src": X[0], "dst": T0[0]})).body(task(load_tile, [1], {"src": X[1], "dst": T0[1]}))
c = process("c").body(for_each(tiles, lambda t, u: task(load_tile, [t], {"src": X[t], "dst": T0[t]})))
d = process("d").body(for_each(tiles, lambda t: task("load_tile", [t], {"src": X[t], "dst": T0[t]})))
e = process("e").body(for_each(tiles, lambda t: task(load_tile, [t], {"src": X[t], "dts": T0[t]})))
f = replicate(process("f").body(task(load_tile, [0], {"src": X[0], "dst": T0[0]})), 2)
g = for_each(tiles, lambda t: t)
h = process("h").body(X[0])
program = connect([a], [l2c]).compile()
"#,
        expect![[r#"
            WSP203 `body`: the process `b` has a body already
            WSP210 `lambda t, u: task(load_tile, [t], {"src": X[t], "dst": T0[t]})`: the work is a lambda of one index: `for_each(axis, lambda t: ...)`
            WSP210 `"load_tile"`: `task` takes the kernel itself, `task(my_kernel, [i], {...})`: a kernel named by a string is the original's enumerate-only mode, which runs nothing
            WSP203 `(load_tile, [t], {"src": X[t], "dts": T0[t]})`: `load_tile` is missing `dst`
            WSP203 `dts`: `load_tile` has no parameter `dts`; did you mean `dst`?
            WSP210 `process("f").body(task(load_tile, [0], {"src": X[0], "dst": T0[0]}))`: `replicate` makes workers that share the tasks of the channels a process consumes, but `f` consumes none: add `.consumes(ch)`
            WSP210 `for_each`: `for_each` is not called here: `for_each(axis, body)`: a process body's sequential loop: `for_each(axis, lambda t: ...)`, each iteration after the one before.
            WSP210 `X[0]`: a process's work is `for_each(axis, lambda t: ...)`, `consume(ch, lambda t: ...)`, `send(ch, task)` or a task
            WSP203 `[a]`: the process `a` has no body: `process("a")...body(for_each(axis, lambda t: ...))`
        "#]],
    );
}

/// A consumer's iterations run in no order among themselves: two of them writing one tile race,
/// and the message says so of the `consume` block, not of a parallel loop.
#[test]
fn a_race_between_consumer_iterations_names_the_consume_block() {
    let text = format!(
        r#"{HEADER}
@workload
def pipe():
    with P.pipe():
        for t in P.seq(tiles):
            send(l2c, load_tile[t](src=X[t], dst=T0[t]))
        with consume(l2c) as t:
            square_tile[t](src=T0[t], dst=Y[0])

program = pipe().compile(target="cpu_sim")
"#
    );
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "csp.wsp".into(), text.clone());
    let mut out = String::new();
    for d in file_diagnostics(&db, file) {
        let _ = writeln!(
            out,
            "{} `{}`: {}",
            d.code.as_str(),
            &text[d.range],
            d.message
        );
        for (range, message) in &d.related {
            let _ = writeln!(out, "  `{}`: {message}", &text[*range]);
        }
    }
    expect![[r#"
        WSP301 `Y[0]`: `Y[0]` is written by parallel iterations (t=0) and (t=1) of this `consume` block, which both write `Y[0]`
          `consume(l2c)`: the consume block: an iteration per task received, in no order
          `pipe()`: for this call
    "#]].assert_eq(&out);
}

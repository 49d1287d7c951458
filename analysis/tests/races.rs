//! Races in parallel loops too large to enumerate (more than 2^20 iterations) are decided from
//! the affine indices, with the witness enumeration would give; what the search cannot decide
//! is a WSP306 warning, never silence.

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, file_diagnostics};

/// A `gemm`-like workload: `m` over 4, `k` over `extent`, and the task's arguments.
fn program(extent: u64, task: &str) -> String {
    format!(
        r#"from pto_wsp import *

F16 = DType.F16
F32 = DType.F32
tm = Dense[4]
tk = Dense[{extent}]
A = Tensor((4, {extent}, 4, 4), F16, init=randn(seed=1))
C = Tensor((4, {twice}, 4, 4), F32, init=randn(seed=2))

@kernel
def mm(a: In[Tile[4, 4, F16]], c: InOut[Tile[4, 4, F32]]):
    pto.store(c, pto.add(pto.cast(a, F32), pto.load(c)))

@workload
def gemm(tm, tk):
    for m in P(tm):
        for k in P(tk):
            {task}

program = gemm(tm, tk).compile(target="cpu_sim")
"#,
        twice = 2 * extent + 2,
    )
}

fn check(text: String, expect: Expect) {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "races.wsp".into(), text);
    let shown: Vec<String> = file_diagnostics(&db, file)
        .iter()
        .map(|d| format!("{} {}", d.code.as_str(), d.message))
        .collect();
    expect.assert_eq(&shown.join("\n"));
}

#[test]
fn a_race_in_four_million_iterations_is_found_with_its_first_witness() {
    // Every `k` writes `C[m, 0]`.
    check(
        program(1 << 20, "mm[m, k](a=A[m, k], c=C[m, 0])"),
        expect![
            "WSP301 `C[m, 0]` is written by parallel iterations (k=0) and (k=1) of this `P` loop, which both write `C[0, 0]`"
        ],
    );
    // Iteration `k + 1` reads and writes the tile iteration `k` wrote (`c` is `InOut`).
    check(
        program(
            1 << 20,
            "mm[m, k](a=A[m, k], c=C[m, 2 * k + 2])\n            mm[m, k](a=A[m, k], c=C[m, 2 * k])",
        ),
        expect![[r#"
            WSP302 `C[m, 2*k + 2]` is written by iteration (k=0) of this `P` loop and read as `C[m, 2*k]` by iteration (k=1): both touch `C[0, 2]`, with no order between them
            WSP301 `C[m, 2*k]` is written by parallel iterations (k=0) and (k=1) of this `P` loop, which both write `C[0, 2]`
            WSP302 `C[m, 2*k]` is written by iteration (k=1) of this `P` loop and read as `C[m, 2*k + 2]` by iteration (k=0): both touch `C[0, 2]`, with no order between them"#]],
    );
}

#[test]
fn disjoint_tiles_of_four_million_iterations_are_no_race() {
    check(
        program(
            1 << 20,
            "mm[m, k](a=A[m, k], c=C[m, 2 * k + 1])\n            mm[m, k](a=A[m, k], c=C[m, 2 * k])",
        ),
        expect![[""]],
    );
}

/// A `DenseDyn` loop is decided for every size it may be bound to, not its default alone: the
/// race of `X[i]` against `X[i + 8]` needs 9 iterations, one more than the default.
#[test]
fn a_run_time_sized_loop_is_decided_for_every_size() {
    let text = r#"from pto_wsp import *

F32 = DType.F32
seq = DenseDyn(8)
X = Tensor((64, 16, 16), F32)

@kernel
def bump(x: InOut[Tile[16, 16, F32]]):
    pto.store(x, pto.load(x))

@workload
def dyn(seq):
    for i in P(seq):
        bump[i](x=X[i])
        bump[i](x=X[i + 8])

program = dyn(seq).compile(target="cpu_sim")
"#;
    check(
        text.to_string(),
        expect![[r#"
            WSP302 `X[i]` is written by iteration (i=8) of this `P` loop and read as `X[i + 8]` by iteration (i=0): both touch `X[8]`, with no order between them; `i` runs over `seq`, a `DenseDyn` axis: this happens at every binding of at least 9 iterations
            WSP301 `X[i + 8]` is written by parallel iterations (i=0) and (i=8) of this `P` loop, which both write `X[8]`; `i` runs over `seq`, a `DenseDyn` axis: this happens at every binding of at least 9 iterations
            WSP302 `X[i + 8]` is written by iteration (i=0) of this `P` loop and read as `X[i]` by iteration (i=8): both touch `X[8]`, with no order between them; `i` runs over `seq`, a `DenseDyn` axis: this happens at every binding of at least 9 iterations"#]],
    );
    // Tiles that never meet are no race at any size.
    let disjoint = text
        .replace("X[i]", "X[2 * i]")
        .replace("X[i + 8]", "X[2 * i + 1]");
    check(disjoint, expect![[""]]);
}

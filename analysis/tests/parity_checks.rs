//! Races in selected loops over routing read from tensors (`Sparse(n, indptr=T, indices=U)`):
//! decided for any routing, as a race "whenever a row selects 2 or more entries", with
//! `P.seq(routing[b])`, the sequential selected loop an expert combine accumulates in, as the fix.

mod common;

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, file_diagnostics};

fn check(loop_: &str, write: &str, expect: Expect) {
    let text = format!(
        r#"from pto_wsp import *

F32 = DType.F32
I32 = DType.I32
Indptr = Tensor((5,), I32, init=load_npy("indptr.npy"))
Indices = Tensor((8,), I32, init=load_npy("indices.npy"))
routing = Sparse(4, indptr=Indptr, indices=Indices)
Gate = Tensor((4, 8, 16, 16), F32, init=randn(seed=1))
Y = Tensor((4, 16, 16), F32)
Z = Tensor((4, 8, 16, 16), F32)

@kernel
def accumulate(g: In[Tile[16, 16, F32]], y: InOut[Tile[16, 16, F32]]):
    pto.store(y, pto.add(y, g))

@workload
def moe():
    for b in P(Dense[4]):
        for e in {loop_}(routing[b]):
            accumulate[b, e](Gate[b, e], {write})

program = moe().compile(target="cpu_sim")
"#
    );
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "moe.wsp".into(), text.clone());
    let mut shown = String::new();
    for d in file_diagnostics(&db, file) {
        let fix = d
            .fix
            .as_ref()
            .map_or(String::new(), |f| format!(" [fix: {}]", f.title));
        let _ = writeln!(
            shown,
            "{} `{}`: {}{fix}",
            d.code.as_str(),
            &text[d.range],
            d.message
        );
    }
    expect.assert_eq(&shown);
}

#[test]
fn a_selected_loop_over_runtime_routing_writing_one_region_races() {
    check(
        "P.sel",
        "Y[b]",
        expect![[r#"
            WSP301 `Y[b]`: `Y[b]` is written by parallel iterations (e=0) and (e=1) of this `P.sel` loop, which both write `Y[0]`; `e` runs over a row of `routing`, read from tensor data at run time: this happens whenever a row selects 2 or more entries [fix: make the loop sequential: `P.sel` → `P.seq`]
        "#]],
    );
}

#[test]
fn the_sequential_selected_loop_accumulates_and_distinct_regions_do_not_race() {
    check("P.seq", "Y[b]", expect![[r#""#]]);
    check("P.sel", "Z[b, e]", expect![[r#""#]]);
}

/// A workload whose `program = ...` line is not typed yet.
const UNCALLED: &str = r#"from pto_wsp import *
F32 = DType.F32
X = Tensor((4, 8, 16, 16), F32, init=ones())
Y = Tensor((4, 16, 16), F32)

@kernel
def copy(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.load(x))

@workload
def reduce(batch, tiles):
    for b in P(batch):
        for t in P(tiles):
            copy[b, t](X[b, t], Y[b])
"#;

#[test]
fn a_workload_nobody_calls_yet_is_checked_for_races_over_any_axes() {
    expect![[r#"
        WSP301 `Y[b]`: `Y[b]` is written by parallel iterations (t=0) and (t=1) of this `P` loop, which both write `Y[0]`; `t` runs over an axis the workload's caller gives: this happens in every call whose axis has 2 or more iterations
    "#]].assert_eq(&common::diagnostics_shown(UNCALLED));
    // Once called, the call's own extents decide, once: one tile per row cannot race.
    let called =
        format!("{UNCALLED}\nprogram = reduce(Dense[4], Dense[1]).compile(target=\"cpu_sim\")\n");
    expect![[r#""#]].assert_eq(&common::diagnostics_shown(&called));
    let called =
        format!("{UNCALLED}\nprogram = reduce(Dense[4], Dense[8]).compile(target=\"cpu_sim\")\n");
    expect![[r#"
        WSP301 `Y[b]`: `Y[b]` is written by parallel iterations (t=0) and (t=1) of this `P` loop, which both write `Y[0]`
    "#]].assert_eq(&common::diagnostics_shown(&called));
}

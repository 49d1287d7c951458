//! Views with variable-offset slices, as chunked attention writes them: `K[h, c*CH:(c+1)*CH]`
//! inside `for c in P.seq(chunks)` (an affine start, a constant extent), checked for bounds over
//! every iteration and for races as intervals.

mod common;

use expect_test::{Expect, expect};

fn check(loop_: &str, read: &str, write: &str, expect: Expect) {
    let text = format!(
        r#"from pto_wsp import *

F32 = DType.F32
CH = 16
K = Tensor((2, 64, 16), F32, init=randn(seed=1))
S = Tensor((2, 64, 16), F32)

@kernel
def acc(k: In[Tile[16, 16, F32]], s: InOut[Tile[16, 16, F32]]):
    pto.store(s, pto.add(s, k))

@workload
def chunks():
    for h in P(Dense[2]):
        for c in {loop_}:
            acc[h, c]({read}, {write})

program = chunks().compile(target="cpu_sim")
"#
    );
    let shown = common::diagnostics_or_lowered(&text, |p| {
        let text = p.to_string();
        let tasks = text.lines().filter(|l| l.contains("task"));
        tasks.map(|l| format!("{}\n", l.trim())).collect()
    });
    expect.assert_eq(&shown);
}

#[test]
fn an_affine_start_and_a_constant_extent_make_a_slice() {
    check(
        "P.seq(Dense[4])",
        "K[h, c*CH:(c+1)*CH]",
        "S[h, 0:16]",
        expect![[r#"
            task #0 acc[h, c] fields (h, c) (k: In K[h, 16*c:16*c + 16], s: InOut S[h, 0:16])
        "#]],
    );
    check(
        "P.seq(Dense[4])",
        "K[h, c*CH:c*CH + 16]",
        "S[h, 0:16]",
        expect![[r#"
        task #0 acc[h, c] fields (h, c) (k: In K[h, 16*c:16*c + 16], s: InOut S[h, 0:16])
    "#]],
    );
}

#[test]
fn a_slice_must_stay_inside_its_dimension_and_keep_its_extent() {
    check(
        "P.seq(Dense[5])",
        "K[h, c*CH:(c+1)*CH]",
        "S[h, 0:16]",
        expect![[r#"
            WSP208 `c*CH:(c+1)*CH`: the slice `16*c:16*c + 16` reaches 64:80, outside dimension 1 of `K`, which has extent 64
        "#]],
    );
    check(
        "P.seq(Dense[4])",
        "K[h, c:2*c]",
        "S[h, 0:16]",
        expect![[r#"
        WSP210 `c:2*c`: the slice `c:2*c` must keep a constant, positive extent (its end minus its start is `c`); write it as `start:start + N`
    "#]],
    );
    check(
        "P.seq(Dense[4])",
        "K[h, c*CH:(c+1)*CH + 1]",
        "S[h, 0:16]",
        expect![[r#"
        WSP208 `c*CH:(c+1)*CH + 1`: the slice `16*c:16*c + 17` reaches 48:65, outside dimension 1 of `K`, which has extent 64
    "#]],
    );
}

#[test]
fn slices_race_as_intervals() {
    // Disjoint windows: no race between parallel iterations.
    check(
        "P(Dense[4])",
        "K[h, c*CH:(c+1)*CH]",
        "S[h, c*CH:(c+1)*CH]",
        expect![[r#"
        task #0 acc[h, c] fields (h, c) (k: In K[h, 16*c:16*c + 16], s: InOut S[h, 16*c:16*c + 16])
    "#]],
    );
    // Windows 8 apart and 16 long overlap their neighbours.
    check(
        "P(Dense[4])",
        "K[h, c*CH:(c+1)*CH]",
        "S[h, c*8:c*8 + 16]",
        expect![[r#"
            WSP301 `S[h, c*8:c*8 + 16]`: `S[h, 8*c:8*c + 16]` is written by parallel iterations (c=0) and (c=1) of this `P` loop, which both write `S[0, 8:16]`
        "#]],
    );
    // A window against a constant range it reaches.
    check(
        "P(Dense[4])",
        "S[h, 32:48]",
        "S[h, c*CH:(c+1)*CH]",
        expect![[r#"
        WSP302 `S[h, c*CH:(c+1)*CH]`: `S[h, 16*c:16*c + 16]` is written by iteration (c=2) of this `P` loop and read as `S[h, 32:48]` by iteration (c=0): both touch `S[0, 32:48]`, with no order between them
    "#]],
    );
}

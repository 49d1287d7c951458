//! Tensors over the bytes of others: `X.T`, `X.transpose(...)`, `X.reshape(...)`/`X.view(...)`,
//! as the original's examples pass transposed and re-tiled NumPy views. A region of a view is a
//! region of its base, so races and reads are found across the two.

mod common;

use expect_test::{Expect, expect};

/// The diagnostics of a file with `decls` and a workload body `body` (under
/// `for b in P(Dense[2]):`), or the lowered tensors and tasks.
fn shown(decls: &str, body: &str) -> String {
    let text = format!(
        r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((2, 16, 32), F32, init=randn(seed=1))
A = Tensor((64, 64), F32, init=randn(seed=2))
Z = Tensor((2, 16, 32), F32)
{decls}

@kernel
def copy(x: In[Tile[32, 16, F32]], y: Out[Tile[32, 16, F32]]):
    pto.store(y, x)

@kernel
def bump(t: InOut[Tile[16, 16, F32]]):
    pto.store(t, pto.add(pto.load(t), 1.0))

@workload
def w():
    for b in P(Dense[2]):
        {body}

program = w().compile(target="cpu_sim")
"#
    );
    common::diagnostics_or_lowered(&text, |p| {
        let text = p.to_string();
        let lines = text.lines().map(str::trim).filter(|line| {
            line.starts_with("tensor") && line.contains("view") || line.starts_with("task")
        });
        lines.map(|l| format!("{l}\n")).collect()
    })
}

fn check(decls: &str, body: &str, expect: Expect) {
    expect.assert_eq(&shown(decls, body));
}

#[test]
fn transposed_and_retiled_views_lower_to_their_base() {
    check(
        "Xt = X.transpose(0, 2, 1)\nY = Tensor((2, 32, 16), F32)\nAt = A.reshape(4, 16, 4, 16).transpose(0, 2, 1, 3)",
        "copy[b](x=Xt[b], y=Y[b])\n        bump[b](t=At[b, b + 1])",
        expect![[r#"
            tensor Xt [2,32,16] F32 layout [R, R, R] = view(X; 1*0, 1*2, 1*1)
            tensor At [4,4,16,16] F32 layout [R, R, R, R] = view(A; 16*0, 16*1, 1*0, 1*1)
            task #0 copy[b] fields (b) (x: In Xt[b], y: Out Y[b])
            task #1 bump[b] fields (b) (t: InOut At[b, b + 1])
        "#]],
    );
}

#[test]
fn t_reverses_and_views_compose() {
    // `X.T.T` is X's own order; `.view` is `.reshape`.
    check(
        "Xtt = X.T.T\nAv = A.view(64, 4, 16)\nY = Tensor((2, 32, 16), F32)",
        "copy[b](x=Av[0:32, b], y=Xtt.transpose(0, 2, 1)[b])",
        expect![[r#"
            WSP210 `transpose`: a view of a tensor is declared at module level, with a name: `Xt = X.T`, then `Xt[b]` here
        "#]],
    );
    check(
        "Xtt = X.T.T\nAv = A.view(64, 4, 16)\nXt = Xtt.transpose(0, 2, 1)",
        "copy[b](x=Av[0:32, b], y=Xt[b])",
        expect![[r#"
            tensor Xtt [2,16,32] F32 layout [R, R, R] = view(X; 1*0, 1*1, 1*2)
            tensor Av [64,4,16] F32 layout [R, R, R] = view(A; 1*0, 16*1, 1*1)
            tensor Xt [2,32,16] F32 layout [R, R, R] = view(X; 1*0, 1*2, 1*1)
            task #0 copy[b] fields (b) (x: In Av[0:32, b], y: Out Xt[b])
        "#]],
    );
}

#[test]
fn races_and_reads_are_decided_on_the_bytes() {
    // Writing the transposed view of Z while reading Z itself, in parallel iterations.
    check(
        "Zt = Z.transpose(0, 2, 1)\nY = Tensor((2, 32, 16), F32)",
        "copy[b](x=Zt[1 - b], y=Y[b])\n        copy[b](x=Y[b], y=Zt[b])",
        expect![[r#"
            WSP302 `Zt[b]`: `Zt[b]` is written by iteration (b=1) of this `P` loop and read as `Zt[-b + 1]` by iteration (b=0): both touch `Z[1, 0:16, 0:32]`, with no order between them
        "#]],
    );
    // Each iteration bumps the same tile of A through the re-tiled view.
    check(
        "At = A.reshape(4, 16, 4, 16).transpose(0, 2, 1, 3)",
        "bump[b](t=At[0, 1])",
        expect![[r#"
            WSP301 `At[0, 1]`: `At[0, 1]` is written by parallel iterations (b=0) and (b=1) of this `P` loop, which both write `A[0:16, 16:32]`
        "#]],
    );
    // Z has no init and nothing writes it: reading it through a view reads zeros.
    check(
        "Zt = Z.transpose(0, 2, 1)\nY = Tensor((2, 32, 16), F32)",
        "copy[b](x=Zt[b], y=Y[b])",
        expect![[r#"
            WSP305 `Zt[b]`: `Z` is read here but no task writes it and it has no `init`, so it is all zeros; give it an `init=` or write it first
        "#]],
    );
}

#[test]
fn a_reshape_that_is_not_a_view_is_an_error() {
    check(
        "V1 = A.reshape(3, -1)\nV2 = X.transpose(0, 2, 1).reshape(2, 512)\nV3 = X.transpose(0, 1)\nV4 = X.reshape(2, 16, 2, 16)\nV5 = X.reshape((4, 8, 32))\nV6 = X.reshape(2, -1, -1)",
        "pass",
        expect![[r#"
            WSP203 `A.reshape(3, -1)`: cannot reshape `A` [64,64] (4096 elements) into (3, -1)
            WSP203 `X.transpose(0, 2, 1).reshape(2, 512)`: the view [2,32,16] → [2,512] is not a view of the same bytes: a reshape here splits a dimension into several or merges back dimensions split from one, in order
            WSP203 `X.transpose(0, 1)`: `X` has 3 dimensions but `transpose` orders 2
            WSP203 `X.reshape((4, 8, 32))`: `X` [2,16,32] → [4,8,32] is not a view of the same bytes: a reshape here splits a dimension into several or merges back dimensions split from one, in order
            WSP203 `X.reshape(2, -1, -1)`: cannot reshape `X` [2,16,32] (1024 elements) into (2, -1, -1)
        "#]],
    );
}

//! One mistake hides no other and invents none: a wrong task argument leaves the task's other
//! arguments checked (a race on them is still found), and a loop left out of the plan by an
//! error does not make the program's run-time symbol unknown; a binding known at check time is
//! bounds-checked then, not first in the run; and a kernel value with a shape error keeps its
//! dtype, so a dtype error after it is found.

mod common;

use expect_test::{Expect, expect};

fn check(text: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_shown(text));
}

#[test]
fn a_wrong_argument_hides_no_race_on_another() {
    check(
        r#"from pto_wsp import *

F32 = DType.F32
A = Tensor((4, 16, 16), F32, init=ones())
B = Tensor((4, 16, 8), F32, init=ones())
C = Tensor((4, 16, 16), F32)

@kernel
def k(a: In[Tile[16, 16, F32]], b: In[Tile[16, 16, F32]], c: Out[Tile[16, 16, F32]]):
    pto.store(c, pto.add(a, b))

@workload
def w():
    for i in P(Dense[4]):
        k[i](a=A[i], b=B[i], c=C[0])

program = w().compile(target="cpu_sim")
"#,
        expect![[r#"
            WSP206 `B[i]`: `b` is a tile [16,16] F32 but `B[i]` is [16,8] F32
            WSP301 `C[0]`: `C[0]` is written by parallel iterations (i=0) and (i=1) of this `P` loop, which both write `C[0]`
        "#]],
    );
}

#[test]
fn a_loop_in_error_leaves_its_symbol_known() {
    check(
        r#"from pto_wsp import *

F32 = DType.F32
seqs = DenseDyn(8)
X = Tensor((8, 16, 16), F32, init=ones())
Y = Tensor((8, 16, 16), F32)

@kernel
def k(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, x)

@workload
def w(seqs):
    for s in P.sel(seqs):
        k[s](x=X[s], y=Y[s])

program = w(seqs).compile(target="cpu_sim")
program.execute(seqs=4)
"#,
        expect![[r#"
            WSP210 `w(seqs)`: in this call of `w`: `P.sel` needs a Sparse axis, but this is a DenseDyn axis
        "#]],
    );
}

/// A binding known when the file is checked (`execute(n=9)`) is checked against the shapes,
/// which are static, before anything is built: every view and predicate read a loop over the
/// symbol indexes.
#[test]
fn a_numeric_binding_is_bounds_checked_before_the_run() {
    let text = |n: u64| {
        format!(
            r#"from pto_wsp import *

F32 = DType.F32
n = DenseDyn(8)
Flags = Tensor((8,), DType.I32, init=ones())
X = Tensor((8, 16, 16), F32, init=ones())
Y = Tensor((8, 16, 16), F32)

@kernel
def twice(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, pto.mul(x, 2.0))

@workload
def w(n):
    for i in P(n):
        with P.when(Flags[i] == 1):
            twice[i](x=X[i], y=Y[i])

program = w(n).compile(target="cpu_sim")
program.execute(n={n})
"#
        )
    };
    check(&text(8), expect![[r#""#]]);
    check(
        &text(9),
        expect![[r#"
            WSP208 `9`: with `n` = 9, `Flags[i]` reaches 8, out of range for dimension 0 of `Flags`, which has extent 8
            WSP208 `9`: with `n` = 9, `X[i]` reaches 8, out of range for dimension 0 of `X`, which has extent 8
            WSP208 `9`: with `n` = 9, `Y[i]` reaches 8, out of range for dimension 0 of `Y`, which has extent 8
        "#]],
    );
}

/// A kernel with a shape error and a dtype error after it: the value the shape error leaves
/// has no shape, but its dtype is known, so the dtype error is still found, and no error is
/// invented where only the shape is unknown.
fn kernel_body(body: &str) -> String {
    format!(
        r#"from pto_wsp import *

F16 = DType.F16
F32 = DType.F32

@kernel
def k(x: In[Tile[16, 128, F32]], w: In[Tile[16, 64, F32]], h: In[Tile[16, 128, F16]],
      out: Out[Tile[16, 128, F16]], full: Out[Tile[16, 128, F32]]):
{body}
"#
    )
}

#[test]
fn a_shape_error_hides_no_dtype_error_after_it() {
    check(
        &kernel_body("    y = pto.add(x, w)\n    pto.store(out, y)\n    pto.store(full, x)"),
        expect![[r#"
            WSP201 `pto.add(x, w)`: `pto.add`: `x` is [16,128] F32 and `w` is [16,64] F32; the shapes do not broadcast
            WSP202 `y`: `pto.store`: `out` is Tile[16,128] F16 but `y` has dtype F32
        "#]],
    );
    check(
        &kernel_body("    pto.store(out, pto.exp((pto.add(x, w))))\n    pto.store(full, x)"),
        expect![[r#"
            WSP202 `pto.exp((pto.add(x, w)))`: `pto.store`: `out` is Tile[16,128] F16 but `pto.exp((pto.add(x, w)))` has dtype F32
            WSP201 `pto.add(x, w)`: `pto.add`: `x` is [16,128] F32 and `w` is [16,64] F32; the shapes do not broadcast
        "#]],
    );
    check(
        &kernel_body(
            "    y = pto.add(x, w)\n    pto.store(out, pto.add(h, y))\n    pto.store(full, x)",
        ),
        expect![[r#"
            WSP201 `pto.add(x, w)`: `pto.add`: `x` is [16,128] F32 and `w` is [16,64] F32; the shapes do not broadcast
            WSP202 `y`: `pto.add`: `h` is Tile[16,128] F16 but `y` has dtype F32; convert one with `pto.cast`
        "#]],
    );
    check(
        &kernel_body("    pto.store(full, pto.matmul(x, w))\n    pto.store(out, h)"),
        expect![[r#"
            WSP201 `pto.matmul(x, w)`: `pto.matmul`: `x` is [16,128] F32 and `w` is [16,64] F32; the inner dimensions 128 and 16 differ
        "#]],
    );
}

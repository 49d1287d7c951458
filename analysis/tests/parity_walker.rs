//! Workload bodies as the spec and the original write them: positional task arguments in
//! parameter order (`attn[b, h](Q[b, h], K[b], V[b], O[b, h])`), mixed with keywords as Python
//! allows, and Python's errors where Python errs.

use std::fmt::Write;

use expect_test::{Expect, expect};
use wsp_analysis::{Database, File, Workspace, file_diagnostics, lower_file};

fn program(body: &str) -> String {
    format!(
        r#"from pto_wsp import *

F32 = DType.F32
Q = Tensor((2, 4, 16, 16), F32, init=randn(seed=1))
K = Tensor((2, 16, 16), F32, init=randn(seed=2))
O = Tensor((2, 4, 16, 16), F32)

@kernel
def attn(q: In[Tile[16, 16, F32]], k: In[Tile[16, 16, F32]], o: Out[Tile[16, 16, F32]], scale: Scalar[F32] = 0.25):
    pto.store(o, pto.mul(pto.matmul(q, k), scale))

@workload
def w():
    for b, h in P(Dense[2], Dense[4]):
        {body}

program = w().compile(target="cpu_sim")
"#
    )
}

/// The diagnostics, or for a clean file its lowered programs.
fn shown(text: &str) -> String {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "walker.wsp".into(), text.to_string());
    let mut out = String::new();
    for d in file_diagnostics(&db, file) {
        let at = &text[d.range];
        let _ = writeln!(out, "{} `{at}`: {}", d.code.as_str(), d.message);
    }
    if out.is_empty() {
        for p in &lower_file(&db, file).clone().expect("lowered").programs {
            let _ = write!(out, "{p}");
        }
    }
    out
}

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&shown(&program(body)));
}

#[test]
fn positional_task_arguments_bind_in_parameter_order() {
    let keywords = shown(&program("attn[b, h](q=Q[b, h], k=K[b], o=O[b, h])"));
    assert!(!keywords.contains("WSP"), "{keywords}");
    assert_eq!(
        shown(&program("attn[b, h](Q[b, h], K[b], O[b, h])")),
        keywords
    );
    assert_eq!(
        shown(&program("attn[b, h](Q[b, h], K[b], o=O[b, h])")),
        keywords
    );
    let scaled = shown(&program("attn[b, h](Q[b, h], K[b], O[b, h], 0.5)"));
    assert_eq!(
        scaled,
        shown(&program(
            "attn[b, h](q=Q[b, h], k=K[b], o=O[b, h], scale=0.5)"
        ))
    );
    assert_ne!(scaled, keywords);
}

#[test]
fn positional_arguments_get_pythons_errors() {
    check(
        "attn[b, h](Q[b, h], K[b], O[b, h], 0.5, 1.0)",
        expect![[r#"
            WSP203 `1.0`: `attn` takes 4 positional arguments but 5 were given
        "#]],
    );
    check(
        "attn[b, h](Q[b, h], K[b], q=Q[b, h], o=O[b, h])",
        expect![[r#"
            WSP203 `q=Q[b, h]`: `attn` got multiple values for `q`
        "#]],
    );
    check(
        "attn[b, h](Q[b, h], K[b])",
        expect![[r#"
        WSP203 `(Q[b, h], K[b])`: `attn` is missing `o`
    "#]],
    );
    check(
        "attn[b, h](Q[b, h], O[b, h], K[b])",
        expect![[r#"
            WSP305 `O[b, h]`: `O` is read here but no task writes it and it has no `init`, so it is all zeros; give it an `init=` or write it first
            WSP301 `K[b]`: `K[b]` is written by parallel iterations (b=0, h=0) and (b=0, h=1) of this `P` loop, which both write `K[0]`
        "#]],
    );
}

/// A tier choice as the original's lightning indexer makes it: a tensor element loaded into a
/// slot, then `P.when` on the slot.
const TIERS: &str = r#"from pto_wsp import *

F32 = DType.F32
U64 = DType.U64
EffSeq = Tensor((2, 3, 1, 1), U64, init=arange())
X = Tensor((2, 3, 16, 16), F32, init=ones())
Y = Tensor((2, 3, 16, 16), F32)

@kernel
def scale(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]], s: Scalar[F32]):
    pto.store(y, pto.mul(x, s))

@workload
def w():
    for b in P(Dense[2], names=["b"]):
        for s in P.seq(Dense[3], name="s"):
            slot_load_u64(0, EffSeq[b][s], row=0, col=0)
            with P.when(slot_u64(0) <= 2):
                scale[b, s](X[b, s], Y[b, s], 2.0)
            with P.otherwise():
                scale[b, s](X[b, s], Y[b, s], 3.0)

program = w().compile(target="cpu_sim")
"#;

#[test]
fn slots_decide_predicates() {
    let text = shown(TIERS);
    assert!(!text.contains("WSP"), "{text}");
    let when: Vec<&str> = text.lines().filter(|l| l.contains("when")).collect();
    expect![[r#"
        [
            "      when (slot_u64(0) <= 2)",
        ]
    "#]]
    .assert_debug_eq(&when);
}

#[test]
fn loop_keywords_name_the_loop_variables_or_are_errors() {
    let renamed = TIERS.replace("names=[\"b\"]", "names=[\"batch\"]");
    expect![[r#"
        WSP203 `names=["batch"]`: `names=` says `batch` but the loop variable is `b`; the `for` names them, and keys use those names
    "#]].assert_eq(&shown(&renamed));
    let misspelled = TIERS.replace("name=\"s\"", "nme=\"s\"");
    expect![[r#"
        WSP203 `nme`: `P.seq(...)` takes axes and `name=`, not `nme=`
    "#]]
    .assert_eq(&shown(&misspelled));
}

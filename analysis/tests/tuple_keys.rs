//! Tuple keys (`DispatchPolicy.hash(lambda t: (t.get("batch"), t.get("head")))`): hashed as one
//! key by `hash`, combined row-major over the fields' static extents by `affinity`,
//! `dispatch_by` and `stream_by`; a part without a static extent is WSP504.

mod common;

use expect_test::{Expect, expect};

const HEADER: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((8, 3, 1, 16), F32, init=ones())
Y = Tensor((8, 3, 1, 16), F32)
seq = DenseDyn(3)

@kernel
def tiny(x: In[Tile[1, 16, F32]], y: Out[Tile[1, 16, F32]]):
    pto.store(y, pto.add(x, x))

@workload
def w():
    for batch, head in P(Dense[8], Dense[3]):
        tiny[batch, head](x=X[batch, head], y=Y[batch, head])

@workload
def v():
    for batch, head in P(Dense[8], seq):
        tiny[batch, head](x=X[batch, head], y=Y[batch, head])
"#;

fn check(body: &str, expect: Expect) {
    expect.assert_eq(&common::diagnostics_or_lowered(
        &format!("{HEADER}{body}"),
        |p| p.schedule.iter().map(|d| format!("{d}\n")).collect(),
    ));
}

#[test]
fn a_tuple_is_hashed_whole_or_combined_row_major() {
    check(
        r#"
a = w().dispatch(DispatchPolicy.hash(lambda t: (t.get("batch"), t.get("head")))).compile()
b = w().dispatch(DispatchPolicy.affinity(lambda t: (t.batch, t.head))).compile()
c = w().dispatch(DispatchPolicy.dispatch_by(lambda t: (t.head, t.batch), num_aicpus=4)).compile()
d = w().streams(2).stream_by(lambda t: (t.batch % 2, t.head)).compile()
e = v().dispatch(DispatchPolicy.hash(lambda t: (t.batch, t.head % 2, 7))).compile()
"#,
        expect![[r#"
            dispatch hash(((batch * 1000003) + head))
            dispatch affinity(((batch * 3) + head))
            dispatch dispatch_by(((head * 8) + batch), num_aicpus=4)
            streams 2
            stream_by (((batch % 2) * 3) + head)
            dispatch hash(((((batch * 1000003) + (head % 2)) * 1000003) + 7))
        "#]],
    );
}

#[test]
fn a_part_without_a_static_extent_is_wsp504() {
    check(
        r#"
a = v().dispatch(DispatchPolicy.affinity(lambda t: (t.batch, t.head))).compile()
b = w().dispatch(DispatchPolicy.dispatch_by(lambda t: (t.batch, t.head % 2))).compile()
c = w().dispatch(DispatchPolicy.affinity(lambda t: (t.batch, t.nope))).compile()
d = w().dispatch(DispatchPolicy.hash(lambda t: ())).compile()
"#,
        expect![[r#"
            WSP504 `dispatch(DispatchPolicy.affinity(lambda t: (t.batch, t.head)))`: a tuple key combines its parts row-major, each after the first a task field with a static extent, and `head` is a field whose extent is known only at run time; write the combination out (`lambda t: t.b * N + t.h`) or use `DispatchPolicy.hash`, which hashes a tuple whole
            WSP504 `dispatch(DispatchPolicy.dispatch_by(lambda t: (t.batch, t.head % 2)))`: a tuple key combines its parts row-major, each after the first a task field with a static extent, and `(head % 2)` is not a task field; write the combination out (`lambda t: t.b * N + t.h`) or use `DispatchPolicy.hash`, which hashes a tuple whole
            WSP504 `dispatch(DispatchPolicy.affinity(lambda t: (t.batch, t.nope)))`: the key uses the task field `nope`, which no task has; the tasks' fields are `batch`, `head`
            WSP504 `lambda t: ()`: an empty tuple in a key: a key may use task fields (`t.b`, `t.get("b")`), integer constants and `slot_u64(i)`
        "#]],
    );
}

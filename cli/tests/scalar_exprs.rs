//! The original's run-time scalar expressions (its `tests/test_codegen_cond.py` and
//! `test_codegen_scalar_expr_eval.py`, ported): `axis("b")`, `symbol_u64("cut")` bound
//! without a rebuild, `&`, `|`, `^`, `<<`, `>>`, `~`, `x if c else y`, `c.where(x, y)`,
//! `.cast_u64()`, task tags and parameters (`t.params[0]`); in predicates (which tasks run) and keys (where they run),
//! the same in `wsp run` and the emitted expander's replay.

mod common;

use std::path::Path;

const HEADER: &str = r#"from pto_wsp import *
from pto_wsp.scalar_expr import axis, symbol_u64

F32 = DType.F32
batch = Dense[4]()
tiles = Dense[6]()
A0 = Tensor((4, 1, 2, 2), F32, init=full(1.0))
A1 = Tensor((4, 1, 2, 2), F32, init=full(2.0))
C = Tensor((4, 1, 2, 2), F32)
S = Tensor((6, 4, 4), F32, init=arange())
D = Tensor((6, 4, 4), F32)

@kernel
def first(src: In[Tile[2, 2, F32]], out: Out[Tile[2, 2, F32]]):
    pto.store(out, pto.load(src))

@kernel
def second(src: In[Tile[2, 2, F32]], out: Out[Tile[2, 2, F32]]):
    pto.store(out, pto.load(src))

@kernel
def copy_tile(src: In[Tile[4, 4, F32]], dst: Out[Tile[4, 4, F32]]):
    pto.store(dst, src)

@workload
def by_symbol():
    for b in P(batch):
        with P.when(axis("b") < symbol_u64("cut").cast_i64()):
            first[b](src=A0[b][0], out=C[b][0])
        with P.otherwise():
            second[b](src=A1[b][0], out=C[b][0])

@workload
def by_bits():
    for b in P(batch):
        with P.when(((b & 1) | (b >> 1 << 3) ^ ~0) != -1 if b > 0 else False):
            first[b](src=A0[b][0], out=C[b][0])
        with P.otherwise():
            second[b](src=A1[b][0], out=C[b][0])

@workload
def wl():
    for t in P(tiles):
        copy_tile[t](src=S[t], dst=D[t])
"#;

/// Runs `body` after the header; the folder (with `tasks.txt`, the task stream) and stdout.
fn run(name: &str, body: &str) -> (std::path::PathBuf, String) {
    let program = format!("{HEADER}{body}");
    common::wsp_run(
        "scalar_exprs",
        name,
        &program,
        &["--dump-tasks", "tasks.txt"],
    )
}

/// Each `copy_tile` task's AICPU, per execution, from the task stream.
fn aicpus(dir: &Path) -> Vec<Vec<u32>> {
    let text = std::fs::read_to_string(dir.join("tasks.txt")).unwrap();
    let mut out: Vec<Vec<u32>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("execution ") {
            out.push(Vec::new());
        } else if line.contains("name=copy_tile") {
            let q = line
                .split("aicpu=")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap();
            out.last_mut().unwrap().push(q.parse().unwrap());
        }
    }
    out
}

/// Which kernel (`first` or `second`) each index ran, per execution, from the task stream.
fn branches(dir: &Path) -> Vec<Vec<(String, i64)>> {
    let text = std::fs::read_to_string(dir.join("tasks.txt")).unwrap();
    let mut out: Vec<Vec<(String, i64)>> = Vec::new();
    for line in text.lines() {
        if line.starts_with("execution ") {
            out.push(Vec::new());
        }
        for k in ["first", "second"] {
            if line.contains(&format!("name={k} ")) {
                let i = line
                    .split("index=")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap();
                out.last_mut()
                    .unwrap()
                    .push((k.to_string(), i.parse().unwrap()));
            }
        }
    }
    for run in &mut out {
        run.sort_by_key(|(_, i)| *i);
    }
    out
}

fn names(run: &[(String, i64)]) -> Vec<&str> {
    run.iter().map(|(k, _)| k.as_str()).collect()
}

#[test]
fn a_symbol_moves_the_predicate_without_a_rebuild() {
    let (dir, _) = run(
        "cond",
        r#"
program = by_symbol().compile(target="cpu_sim")
program.set_symbol_u64("cut", 2)
program.execute()
program.execute(cut=3)
program.execute()
"#,
    );
    let runs = branches(&dir);
    assert_eq!(names(&runs[0]), ["first", "first", "second", "second"]);
    assert_eq!(names(&runs[1]), ["first", "first", "first", "second"]);
    // `set_symbol_u64` holds for later runs; `execute(cut=3)` for its own.
    assert_eq!(names(&runs[2]), ["first", "first", "second", "second"]);
}

#[test]
fn bit_operators_and_a_conditional_expression_decide_at_run_time() {
    let (dir, _) = run(
        "bits",
        r#"
program = by_bits().compile(target="cpu_sim")
program.execute()
"#,
    );
    // As Python computes it for b = 0..3.
    let python = |b: i64| {
        if b > 0 {
            ((b & 1) | ((b >> 1) << 3) ^ !0) != -1
        } else {
            false
        }
    };
    let expect: Vec<&str> = (0..4)
        .map(|b| if python(b) { "first" } else { "second" })
        .collect();
    assert_eq!(names(&branches(&dir)[0]), expect);
}

#[test]
fn keys_read_tags_symbols_and_select_without_a_rebuild() {
    let (dir, _) = run(
        "keys",
        r#"
p1 = wl().dispatch(DispatchPolicy.affinity(lambda t: (t.tags["mask"] & t.params[0].cast_u64()), num_aicpus=2)).compile(target="cpu_sim")
p1.set_symbol_u64("mask", 0)
p1.execute()
p1.set_symbol_u64("mask", 1)
p1.execute()
p2 = wl().dispatch(DispatchPolicy.affinity(lambda t: (t.params[0] == symbol_u64("special").cast_i64()).where(0, 1).cast_u64(), num_aicpus=2)).compile(target="cpu_sim")
p2.execute(special=0)
p2.execute(special=7)
p3 = wl().dispatch(DispatchPolicy.dispatch_by(lambda t: 0 if t.t < 3 else 1)).compile(target="cpu_sim")
p3.execute()
"#,
    );
    let runs = aicpus(&dir);
    assert_eq!(runs[0], [0, 0, 0, 0, 0, 0], "mask 0: every key is 0");
    assert_eq!(runs[1], [0, 1, 0, 1, 0, 1], "mask 1: by parity");
    assert_eq!(runs[2], [0, 1, 1, 1, 1, 1], "task 0 is special");
    assert_eq!(runs[3], [1, 1, 1, 1, 1, 1], "no task is 7");
    assert_eq!(runs[4], [0, 0, 0, 1, 1, 1]);
}

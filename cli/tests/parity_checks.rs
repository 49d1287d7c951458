//! An expert combine that accumulates over routing read from tensors, in the sequential
//! selected loop `P.seq(routing[b])`: each row's experts add into one output tile in order,
//! checked against NumPy.

use std::process::Command;

mod common;

const COMBINE: &str = r#"from pto_wsp import *

F32 = DType.F32
I32 = DType.I32
Indptr = Tensor((5,), I32, init=load_npy("indptr.npy"))
Indices = Tensor((8,), I32, init=load_npy("indices.npy"))
routing = Sparse(4, indptr=Indptr, indices=Indices)
Gate = Tensor((4, 8, 16, 16), F32, init=randn(seed=1))
Y = Tensor((4, 16, 16), F32)

@kernel
def accumulate(g: In[Tile[16, 16, F32]], y: InOut[Tile[16, 16, F32]]):
    pto.store(y, pto.add(y, g))

@workload
def moe():
    for b in P(Dense[4]):
        for e in P.seq(routing[b]):
            accumulate[b, e](Gate[b, e], Y[b])

program = moe().compile(target="cpu_sim")
program.execute()
"#;

const INPUTS: &str = r#"
import sys, numpy as np
d = sys.argv[1]
np.save(f"{d}/indptr.npy", np.array([0, 2, 3, 6, 8], dtype=np.int32))
np.save(f"{d}/indices.npy", np.array([1, 3, 0, 2, 5, 7, 2, 6], dtype=np.int32))
"#;

const CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
G, Y = np.load(f"{d}/dump/Gate.npy"), np.load(f"{d}/dump/Y.npy")
ip, ix = np.load(f"{d}/indptr.npy"), np.load(f"{d}/indices.npy")
want = np.zeros_like(Y)
for b in range(4):
    for e in ix[ip[b]:ip[b + 1]]:
        want[b] += G[b, e]
assert np.array_equal(Y, want), np.abs(Y - want).max()
"#;

fn python(script: &str, dir: &std::path::Path) {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let out = Command::new(python)
        .args(["-c", script])
        .arg(dir)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sequential_selected_loop_accumulates_each_rows_experts() {
    let dir = common::scratch("parity_checks", "combine");
    python(INPUTS, &dir);
    let file = dir.join("combine.wsp");
    std::fs::write(&file, COMBINE).unwrap();
    let out = common::wsp()
        .arg("run")
        .arg(&file)
        .args(["--workers", "2", "--dump-tensors"])
        .arg(dir.join("dump"))
        .output()
        .expect("run wsp");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    python(CHECK, &dir);
}

//! Infinities end to end: a running max initialised with `full(-math.inf)`, `-math.inf` as an
//! op operand and as a scalar default reach the C++ kernels and the tensors intact (they once
//! crashed `wsp run` with "malformed job"), checked against NumPy.

use std::process::Command;

mod common;

const ROWMAX: &str = r#"from pto_wsp import *
import math

F32 = DType.F32
X = Tensor((2, 16, 64), F32, init=randn(seed=3))
M = Tensor((2, 16, 1), F32, init=full(-math.inf))
N = Tensor((2, 16, 1), F32, init=full(float("-inf")))

@kernel
def rowmax(x: In[Tile[16, 64, F32]], m: InOut[Tile[16, 1, F32]], n: InOut[Tile[16, 1, F32]], floor: Scalar[F32] = -math.inf):
    pto.store(m, pto.max(pto.max(pto.load(m), pto.rowmax(pto.load(x))), floor))
    pto.store(n, pto.max(pto.load(n), -math.inf))

@workload
def w():
    for b in P(Dense[2]):
        rowmax[b](x=X[b], m=M[b], n=N[b])

program = w().compile(target="cpu_sim")
program.execute()
"#;

const CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
X, M, N = (np.load(f"{d}/{n}.npy") for n in "XMN")
assert np.array_equal(M[..., 0], X.max(-1)), (M[..., 0], X.max(-1))
assert np.all(np.isneginf(N)), N
print("ok")
"#;

#[test]
fn infinities_reach_the_kernels_and_tensors() {
    let python = std::env::var("WSP_TEST_PYTHON").expect(
        "WSP_TEST_PYTHON is not set: run the tests with `cargo xtask test`, which makes the NumPy venv",
    );
    let dir = common::scratch("parity_numbers", "rowmax");
    let file = dir.join("rowmax.wsp");
    std::fs::write(&file, ROWMAX).unwrap();
    let dump = dir.join("dump");
    let out = common::wsp()
        .arg("run")
        .arg(&file)
        .arg("--dump-tensors")
        .arg(&dump)
        .output()
        .expect("run wsp");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let check = Command::new(python)
        .args(["-c", CHECK])
        .arg(&dump)
        .output()
        .expect("run python");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

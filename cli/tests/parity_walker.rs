//! Slots in predicates end to end: `slot_load_u64` then `with P.when(slot_u64(0) <= 2):` picks
//! each task's branch at run time from tensor data, as the original's lightning indexer picks
//! its tier; checked against NumPy.

mod common;

const TIERS: &str = r#"from pto_wsp import *

F32 = DType.F32
U64 = DType.U64
EffSeq = Tensor((2, 3, 1, 1), U64, init=arange())
X = Tensor((2, 3, 16, 16), F32, init=randn(seed=4))
Y = Tensor((2, 3, 16, 16), F32)

@kernel
def scale(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]], s: Scalar[F32]):
    pto.store(y, pto.mul(x, s))

@workload
def w():
    for b in P(Dense[2]):
        for s in P.seq(Dense[3]):
            slot_load_u64(0, EffSeq[b][s], row=0, col=0)
            with P.when(slot_u64(0) <= 2):
                scale[b, s](X[b, s], Y[b, s], 2.0)
            with P.otherwise():
                scale[b, s](X[b, s], Y[b, s], 3.0)

program = w().compile(target="cpu_sim")
program.execute()
"#;

const CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
E, X, Y = (np.load(f"{d}/{n}.npy") for n in ("EffSeq", "X", "Y"))
factor = np.where(E <= 2, 2.0, 3.0).astype(np.float32)
assert np.array_equal(Y, X * factor), (E[..., 0, 0], Y[:, :, 0, 0] / X[:, :, 0, 0])
"#;

#[test]
fn a_slot_predicate_picks_each_tasks_branch_from_tensor_data() {
    common::run_and_check("parity_walker", "tiers", TIERS, &[], CHECK);
}

//! The original framework's TopK ops (`pto.iota_u32`, `pto.tsort32`,
//! `pto.extract_topk_indices`, its DeepSeek lightning indexer's `pto` variant) against NumPy's
//! stable descending order, including ties (lower index first).

mod common;

const TOPK: &str = r#"from pto_wsp import *

F32 = DType.F32
I32 = DType.I32
Scores = Tensor((3, 5, 1, 32), F32, init=randn(seed=7))
Ties = Tensor((2, 1, 32), F32, init=ones())
OutIdx = Tensor((3, 5, 1, 8), I32)
TieIdx = Tensor((2, 1, 3), I32)

@kernel
def topk(scores_tile: In[Tile[1, 32, F32]], out_idx_tile: Out[Tile[1, 8, I32]]):
    idx = pto.iota_u32(32)
    pairs = pto.tsort32(scores_tile, idx)
    pto.store(out_idx_tile, pto.extract_topk_indices(pairs, 8))

@kernel
def top3(scores_tile: In[Tile[1, 32, F32]], out_idx_tile: Out[Tile[1, 3, I32]]):
    pairs = pto.tsort32(scores_tile, pto.iota_u32(32))
    pto.store(out_idx_tile, pto.extract_topk_indices(pairs, 3))

@workload
def indexer():
    for b in P(Dense[3]):
        for s in P(Dense[5]):
            topk[b, s](scores_tile=Scores[b][s], out_idx_tile=OutIdx[b][s])
    for t in P(Dense[2]):
        top3[t](scores_tile=Ties[t], out_idx_tile=TieIdx[t])

program = indexer().compile(target="cpu_sim")
program.execute()
"#;

// The original's golden (examples/deepseek_lightning_indexer/golden.py): score descending,
// then index ascending.
const CHECK: &str = r#"
import sys, numpy as np
d = sys.argv[1]
S = np.load(f"{d}/Scores.npy")[:, :, 0, :]
O = np.load(f"{d}/OutIdx.npy")[:, :, 0, :]
idx = np.arange(32)
want = np.array([[np.lexsort((idx, -S[b, s].astype(np.float64)))[:8] for s in range(5)] for b in range(3)])
assert np.array_equal(O, want), (O, want)
assert np.array_equal(np.load(f"{d}/TieIdx.npy")[:, 0, :], [[0, 1, 2], [0, 1, 2]])
"#;

#[test]
fn topk_ops_match_numpys_stable_descending_order() {
    common::run_and_check("parity_ops", "topk", TOPK, &[], CHECK);
}

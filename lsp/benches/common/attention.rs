//! The generated attention-style program the language server is measured and tested on: a
//! header, then blocks of a score kernel, its workload and its program, each with its own
//! names. `benches/lsp.rs` edits a 10,000-line one; `tests/publish.rs` a smaller one.

pub const HEADER: &str = r#""""A generated attention-style program for the language server benchmark."""
from pto_wsp import *

F32 = DType.F32
heads = Dense[8]
blocks = Dense[4]
Q = Tensor((8, 4, 32, 64), F32, init=randn(seed=3))
K = Tensor((8, 4, 32, 64), F32, init=randn(seed=4))
"#;

/// A score kernel and its workload (20 lines); `{i}` makes the names unique. The benchmark's
/// edits flip `pto.exp` and `pto.log` in one of these.
const BLOCK: &str = r#"
S{i} = Tensor((8, 4, 32, 32), F32)


@kernel
def scores{i}(q: In[Tile[32, 64, F32]], k: In[Tile[32, 64, F32]], s: Out[Tile[32, 32, F32]]):
    logits = pto.matmul(q, pto.transpose(k))
    shifted = pto.sub(logits, pto.rowmax(logits))
    pto.store(s, pto.exp(shifted))


@workload
def attend{i}(heads, blocks):
    for h in P(heads):
        for b in P.seq(blocks):
            scores{i}[h, b](q=Q[h, b], k=K[h, b], s=S{i}[h, b])


program{i} = attend{i}(heads, blocks).compile(target="cpu_sim")
"#;

/// Block `i`: its tensor, kernel, workload and program, named with `i`.
pub fn block(i: usize) -> String {
    BLOCK.replace("{i}", &i.to_string())
}

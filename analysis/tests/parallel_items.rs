//! A file's first diagnostics analyze its items on rayon's threads first
//! (`analyze_items_in_parallel`); the diagnostics must be those of analyzing it on one thread.

use wsp_analysis::{Database, File, Workspace};

/// A kernel with a shape error, a workload and a program, `{i}` making the names unique.
const BLOCK: &str = r#"
Y{i} = Tensor((4, 8, 16, 128), F32)


@kernel
def norm{i}(x: In[Tile[16, 128, F32]], w: In[Tile[128, 128, F16]], out: Out[Tile[16, 128, F32]]):
    h = pto.matmul(pto.cast(x, F16), w)
    pto.store(out, pto.add(h, w))


@workload
def run{i}(batch, heads):
    for b, h in P(batch, heads):
        norm{i}[b, h](x=X[b, h], w=W[h], out=Y{i}[b, h])


program{i} = run{i}(batch, heads).compile(target="cpu_sim")
"#;

const HEADER: &str = r#"from pto_wsp import *

F32 = DType.F32
F16 = DType.F16
batch = Dense[4]
heads = Dense[8]
X = Tensor((4, 8, 16, 128), F32, init=randn(seed=1))
W = Tensor((8, 128, 128), F16, init=randn(seed=2, std=0.05))
"#;

#[test]
fn items_analyzed_in_parallel_give_the_diagnostics_of_one_thread() {
    let mut text = HEADER.to_string();
    for i in 0..40 {
        text.push_str(&BLOCK.replace("{i}", &i.to_string()));
    }
    let diagnostics = |parallel: bool| {
        let db = Database::default();
        let ws = Workspace::new(&db, Vec::new());
        let file = File::new(&db, ws, "/x/blocks.wsp".into(), text.clone());
        if parallel {
            wsp_analysis::analyze_items_in_parallel(&db, file);
        }
        wsp_analysis::file_diagnostics(&db, file).clone()
    };
    let alone = diagnostics(false);
    assert!(alone.len() >= 40, "each block has an error: {alone:#?}");
    assert_eq!(diagnostics(true), alone);
}

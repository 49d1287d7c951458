//! Inlay hints do work linear in the file. The work is counted (`wsp_analysis::work_steps`),
//! not timed, so the test is deterministic.

use wsp_analysis::{Database, File, Workspace, file_diagnostics, work_steps};

/// Inlay hints over a whole file of workloads, each called by a program, do work linear in
/// the file (each workload's hints show its first call's plan).
#[test]
fn inlay_hints_work_grows_linearly_with_the_workloads() {
    let hints = |n: usize| {
        let mut text = String::from(
            "from pto_wsp import *\nF32 = DType.F32\nrows = Dense[4]\nX = Tensor((4, 16, 16), F32, init=randn(seed=1))\n",
        );
        for i in 0..n {
            text.push_str(&format!(
                "Y{i} = Tensor((4, 16, 16), F32)\n\n@kernel\ndef k{i}(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):\n    pto.store(y, pto.exp(x))\n\n@workload\ndef w{i}(rows):\n    for r in P(rows):\n        k{i}[r](x=X[r], y=Y{i}[r])\n\np{i} = w{i}(rows).compile(target=\"cpu_sim\")\n"
            ));
        }
        let db = Database::default();
        let ws = Workspace::new(&db, Vec::new());
        let file = File::new(&db, ws, "hints.wsp".into(), text);
        assert!(file_diagnostics(&db, file).is_empty());
        let end = wsp_analysis::TextSize::of(file.text(&db).as_str());
        let before = work_steps();
        let found = wsp_ide::inlay_hints(&db, file, wsp_analysis::TextRange::up_to(end));
        (work_steps() - before, found.len())
    };
    let (small, small_hints) = hints(500);
    let (large, large_hints) = hints(2_000);
    assert!(small_hints >= 500, "{small_hints}");
    assert_eq!(large_hints, 4 * small_hints);
    assert!(
        large <= 4 * small + small / 4,
        "4x the workloads took {large} steps, against {small}: more than linear"
    );
}

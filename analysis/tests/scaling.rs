//! `file_diagnostics` does work linear in the number of top-level statements. The work is
//! counted (`wsp_analysis::work_steps`: items visited, names and items looked up, names
//! compared for a suggestion, diagnostics placed), not timed, so the test is deterministic: a scan over all items nested in a loop
//! over items shows as a count that grows 16-fold when the file grows 4-fold.

#[path = "../benches/common/statements.rs"]
mod statements;

use wsp_analysis::{Code, Database, File, Workspace, file_diagnostics, work_steps};

/// The steps and the diagnostics (by code) of checking a fresh file of `n` statements.
fn check(n: usize) -> (u64, Vec<(Code, usize)>) {
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "scale.wsp".into(), statements::mixed_statements(n));
    let before = work_steps();
    let diags = file_diagnostics(&db, file);
    let steps = work_steps() - before;
    let mut counts: Vec<(Code, usize)> = Vec::new();
    for d in diags {
        match counts.iter_mut().find(|(c, _)| *c == d.code) {
            Some((_, k)) => *k += 1,
            None => counts.push((d.code, 1)),
        }
    }
    counts.sort();
    (steps, counts)
}

#[test]
fn checking_work_grows_linearly_with_the_statements() {
    let n = 3_000;
    let (small, small_diags) = check(n);
    let (large, large_diags) = check(4 * n);
    // The mix is really analyzed: every kind of diagnostic it makes, four times as often.
    let codes: Vec<Code> = small_diags.iter().map(|(c, _)| *c).collect();
    assert_eq!(
        codes,
        [
            Code::Syntax,
            Code::OutsideSubset,
            Code::UnknownName,
            Code::Duplicate
        ],
        "{small_diags:?}"
    );
    for ((_, a), (_, b)) in small_diags.iter().zip(&large_diags) {
        assert!(
            4 * a - 4 <= *b && *b <= 4 * a + 4,
            "{small_diags:?} {large_diags:?}"
        );
    }
    assert!(small > n as u64, "the steps are counted: {small}");
    assert!(
        large <= 4 * small + small / 4,
        "4x the statements took {large} steps, against {small}: more than linear"
    );
}

/// In a module of many names, the suggestion for a misspelt name is still the name one edit
/// away, though not every name is compared with it.
#[test]
fn a_large_module_still_suggests_the_name_one_edit_away() {
    let mut text = String::from("from pto_wsp import *\n");
    for i in 0..5_000 {
        text.push_str(&format!("weight{i} = {i}\n"));
    }
    text.push_str("x = wieght4321 + wight17 + weihgt4999\n");
    let db = Database::default();
    let ws = Workspace::new(&db, Vec::new());
    let file = File::new(&db, ws, "names.wsp".into(), text);
    let messages: Vec<&str> = file_diagnostics(&db, file)
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(
        messages,
        [
            "unknown name `wieght4321`; did you mean `weight4321`?",
            "unknown name `wight17`; did you mean `weight17`?",
            "unknown name `weihgt4999`; did you mean `weight4999`?",
        ]
    );
}

/// Checking a file of workloads that all read one tensor without `init` (written by the last)
/// does work linear in the workloads: each read looks the tensor up among the written ones.
#[test]
fn checking_work_grows_linearly_with_the_workloads() {
    let check = |n: usize| {
        let mut text = String::from(
            "from pto_wsp import *\nF32 = DType.F32\nrows = Dense[4]\nX = Tensor((4, 16, 16), F32)\n\n@kernel\ndef k(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):\n    pto.store(y, pto.exp(x))\n",
        );
        for i in 0..n {
            text.push_str(&format!(
                "Y{i} = Tensor((4, 16, 16), F32)\n\n@workload\ndef w{i}(rows):\n    for r in P(rows):\n        k[r](x=X[r], y=Y{i}[r])\n\np{i} = w{i}(rows).compile(target=\"cpu_sim\")\n"
            ));
        }
        text.push_str("\n@workload\ndef fill(rows):\n    for r in P(rows):\n        k[r](x=Y0[r], y=X[r])\n\nfilled = fill(rows).compile(target=\"cpu_sim\")\n");
        let db = Database::default();
        let ws = Workspace::new(&db, Vec::new());
        let file = File::new(&db, ws, "workloads.wsp".into(), text);
        let before = work_steps();
        let diags = file_diagnostics(&db, file);
        assert!(diags.is_empty(), "{diags:?}");
        work_steps() - before
    };
    let (small, large) = (check(500), check(2_000));
    assert!(
        large <= 4 * small + small / 4,
        "4x the workloads took {large} steps, against {small}: more than linear"
    );
}

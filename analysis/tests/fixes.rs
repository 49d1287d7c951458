//! Every machine-applicable fix in the diagnostic fixtures does what it says: applied to the
//! text, the diagnostic it belongs to is gone and no new error appears.

use std::path::Path;

use wsp_analysis::{Applicability, Database, Diagnostic, File, Severity, Workspace};

fn analyze(text: &str) -> Vec<Diagnostic> {
    let db = Database::default();
    let workspace = Workspace::new(&db, Vec::new());
    let file = File::new(&db, workspace, "fixed.wsp".into(), text.to_string());
    wsp_analysis::file_diagnostics(&db, file).clone()
}

#[test]
fn fixes_remove_their_diagnostic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/diagnostics");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
        .collect();
    paths.sort();
    let mut applied = 0;
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("fixture");
        let before = analyze(&text);
        let machine_applicable = |d: &&Diagnostic| {
            d.fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::MachineApplicable)
        };
        for d in before.iter().filter(machine_applicable) {
            let fix = d.fix.as_ref().expect("a fix");
            let fixed = fix.apply(&text);
            let after = analyze(&fixed);
            let count = |ds: &[Diagnostic]| ds.iter().filter(|x| x.code == d.code).count();
            assert!(
                count(&after) < count(&before),
                "{}: the fix `{}` left {} in place:\n{fixed}",
                path.display(),
                fix.title,
                d.code.as_str()
            );
            let errors =
                |ds: &[Diagnostic]| ds.iter().filter(|x| x.severity == Severity::Error).count();
            assert!(
                errors(&after) < errors(&before) || d.severity == Severity::Warning,
                "{}: {after:#?}",
                path.display()
            );
            applied += 1;
        }
    }
    assert!(applied >= 6, "only {applied} fixes were exercised");
}

/// A kernel applying `op` to two loaded tiles.
fn kernel_with(op: &str) -> String {
    format!(
        r#"from pto_wsp import *

F32 = DType.F32

@kernel
def k(a: In[Tile[8, 8, F32]], b: In[Tile[8, 8, F32]], c: Out[Tile[8, 8, F32]]):
    pto.store(c, pto.{op}(pto.load(a), pto.load(b)))
"#
    )
}

fn shown(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|d| {
            let fix = d.fix.as_ref().map_or(String::new(), |f| {
                format!(" [{:?}: {}]", f.applicability, f.title)
            });
            format!("{} {}{fix}", d.code.as_str(), d.message)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_originals_aliases_are_ops_and_other_known_names_get_a_safe_fix() {
    // `pto.max`/`pto.min` are the original's own aliases of maximum/minimum.
    expect_test::expect![""].assert_eq(&shown(&analyze(&kernel_with("max"))));
    expect_test::expect![""].assert_eq(&shown(&analyze(&kernel_with("min"))));
    // NumPy's name for `mul` means exactly `mul`: the fix keeps the meaning.
    expect_test::expect![[r#"WSP102 `pto` has no op `multiply`; `multiply` is NumPy's name for `mul` [MachineApplicable: replace with `mul`]"#]]
        .assert_eq(&shown(&analyze(&kernel_with("multiply"))));
    // A spelling guess may change the meaning: offered, never machine-applicable.
    expect_test::expect![[
        r#"WSP102 `pto` has no op `mak`; did you mean `max`? [MaybeIncorrect: replace with `max`]"#
    ]]
    .assert_eq(&shown(&analyze(&kernel_with("mak"))));
}

#[test]
fn every_did_you_mean_in_the_fixtures_is_a_guess() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/diagnostics");
    let mut guesses = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "wsp") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("fixture");
        for d in analyze(&text) {
            if d.message.contains("did you mean") {
                let fix = d.fix.as_ref().expect("a did-you-mean offers its fix");
                assert_eq!(
                    fix.applicability,
                    Applicability::MaybeIncorrect,
                    "{}: {}",
                    path.display(),
                    d.message
                );
                guesses += 1;
            }
        }
    }
    assert!(guesses >= 3, "only {guesses} guesses were seen");
}

//! Every machine-applicable fix in the diagnostic fixtures does what it says: applied to the
//! text, the diagnostic it belongs to is gone and no new error appears.

use std::path::Path;

use wsp_analysis::{Database, Diagnostic, File, Severity, Workspace};

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
        for d in before.iter().filter(|d| d.fix.is_some()) {
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

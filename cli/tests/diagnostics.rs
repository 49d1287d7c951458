//! One fixture per diagnostic code (`analysis/test_data/diagnostics/WSPnnn.wsp`), each beside the
//! exact output of `wsp check` on it (`WSPnnn.out`). `UPDATE_EXPECT=1` rewrites the snapshots.

use std::path::Path;
use std::process::Command;

use expect_test::expect_file;

const FIXTURES: &str = "analysis/test_data/diagnostics";

#[test]
fn each_code_has_a_fixture_with_its_exact_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut fixtures: Vec<_> = std::fs::read_dir(root.join(FIXTURES))
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "wsp"))
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    for path in fixtures {
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("name");
        let relative = format!("{FIXTURES}/{stem}.wsp");
        let out = Command::new(env!("CARGO_BIN_EXE_wsp"))
            .args(["check", &relative])
            .current_dir(&root)
            .output()
            .expect("wsp runs");
        let text = String::from_utf8(out.stdout).expect("utf-8");
        // The fixture shows its own code, and the exit code follows the severity.
        let code = &stem[..6];
        assert!(
            text.contains(&format!("[{code}]")),
            "{relative} does not report {code}:\n{text}"
        );
        let has_error = text.lines().any(|l| l.starts_with("error["));
        assert_eq!(
            out.status.code(),
            Some(if has_error { 1 } else { 0 }),
            "{relative}"
        );
        expect_file![path.with_extension("out")].assert_eq(&text);
    }
}

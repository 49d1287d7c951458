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

/// Every code has its page, and the page's example is its fixture and the fixture's exact
/// output (`UPDATE_EXPECT=1` rewrites the example section).
#[test]
fn each_code_has_a_page_showing_its_fixture() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    for code in wsp_analysis::Code::ALL {
        let code = code.as_str();
        let page_path = root.join(format!("docs/diagnostics/{code}.md"));
        let page = std::fs::read_to_string(&page_path)
            .unwrap_or_else(|_| panic!("docs/diagnostics/{code}.md is missing"));
        let wsp =
            std::fs::read_to_string(root.join(format!("{FIXTURES}/{code}.wsp"))).expect("fixture");
        let out =
            std::fs::read_to_string(root.join(format!("{FIXTURES}/{code}.out"))).expect("snapshot");
        let example = format!(
            "## Example\n\n`{FIXTURES}/{code}.wsp`:\n\n```python\n{}\n```\n\n`wsp check` prints:\n\n```text\n{}\n```\n\n",
            wsp.trim_end(),
            out.trim_end()
        );
        let (Some(start), Some(end)) = (page.find("## Example\n"), page.find("## Fix\n")) else {
            panic!("docs/diagnostics/{code}.md needs `## Example` and `## Fix` sections");
        };
        assert!(
            page.starts_with(&format!("# {code}: ")),
            "{code}.md starts with its title"
        );
        for section in ["## What it means", "## Why it matters"] {
            assert!(page.contains(section), "{code}.md lacks {section}");
        }
        if page[start..end] != example {
            if update {
                let new = format!("{}{example}{}", &page[..start], &page[end..]);
                std::fs::write(&page_path, new).expect("write");
            } else {
                panic!("docs/diagnostics/{code}.md's example is stale; run with UPDATE_EXPECT=1");
            }
        }
    }
}

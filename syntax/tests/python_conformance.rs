//! Conformance with Python: every example and valid fixture is accepted by both our parser and
//! CPython's `ast.parse`; every invalid fixture is rejected by both.

use std::io::Write;
use std::path::{Path, PathBuf};

mod common;
use common::{dir, wsp_files};
use std::process::{Command, Stdio};

/// For each file, whether `ast.parse` accepts it, from one python3 process.
fn python_accepts(files: &[PathBuf]) -> Vec<bool> {
    const SCRIPT: &str = r#"
import ast, sys
for path in sys.stdin.read().splitlines():
    try:
        ast.parse(open(path, encoding="utf-8").read(), filename=path)
        print("ok")
    except SyntaxError as e:
        print("error", e.msg)
"#;
    let mut child = Command::new("python3")
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 must be installed to check conformance with Python's parser");
    let list: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(list.join("\n").as_bytes())
        .expect("write paths");
    let out = child.wait_with_output().expect("python3 runs");
    assert!(
        out.status.success(),
        "python3 failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), files.len(), "one verdict per file");
    lines.iter().map(|l| l == "ok").collect()
}

fn ours_accepts(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).expect("readable file");
    wsp_syntax::parse(&text).errors().is_empty()
}

#[test]
fn both_parsers_accept_examples_and_valid_fixtures() {
    let mut files = wsp_files(&dir("../examples"));
    assert!(files.len() >= 9, "the examples are missing");
    files.extend(wsp_files(&dir("test_data/parser/ok")));
    let python = python_accepts(&files);
    for (path, py) in files.iter().zip(python) {
        assert!(py, "Python rejects {}", path.display());
        assert!(ours_accepts(path), "we reject {}", path.display());
    }
}

#[test]
fn both_parsers_reject_invalid_fixtures() {
    let files = wsp_files(&dir("test_data/parser/err"));
    assert!(
        files.len() >= 30,
        "the invalid corpus must hold at least 30 snippets, has {}",
        files.len()
    );
    let python = python_accepts(&files);
    for (path, py) in files.iter().zip(python) {
        assert!(!py, "Python accepts {}", path.display());
        assert!(!ours_accepts(path), "we accept {}", path.display());
    }
}

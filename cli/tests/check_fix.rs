//! `wsp check --fix`, `--unsafe-fixes` and `--diff` on a copy of every diagnostics fixture that
//! has a fix, and the fixes in `--format json`, validated against `docs/wsp-check.schema.json`.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

const FIXTURES: &str = "analysis/test_data/diagnostics";

fn json(dir: &Path, path: &str) -> serde_json::Value {
    let out = common::wsp()
        .args(["check", "--format", "json", path])
        .current_dir(dir)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn json_fixes_validate_against_the_committed_schema() {
    let all = json(&common::root(), FIXTURES);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(common::root().join("docs/wsp-check.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft202012::new(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&all)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let kinds: BTreeSet<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["fix"]["applicability"].as_str())
        .collect();
    assert_eq!(kinds, BTreeSet::from(["safe", "unsafe"]));
}

/// `wsp check ARGS FILE` in `dir`: exit code, standard output, standard error.
fn wsp_check(dir: &Path, args: &[&str], file: &str) -> (i32, String, String) {
    let out = common::wsp()
        .arg("check")
        .args(args)
        .arg(file)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// For each fixture with a fix: `--fix` (with `--unsafe-fixes` where its fixes are guesses)
/// leaves no diagnostic of its code but those that had no fix, changes only the lines the fixes' edits touch, and a
/// second `--fix` changes nothing; `--diff` prints what `patch -p1` turns into the same file,
/// and writes nothing.
#[test]
fn fix_and_diff_on_every_fixture_with_a_fix() {
    let root = common::root();
    let mut fixed = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(root.join(FIXTURES))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wsp"))
        .collect();
    names.sort();
    for name in names {
        let code = &name[..6];
        let original = std::fs::read_to_string(root.join(FIXTURES).join(&name)).unwrap();
        let dir = common::scratch("check_fix", code);
        std::fs::write(dir.join(&name), &original).unwrap();
        let before = json(&dir, &name);
        let fixes: Vec<&serde_json::Value> = before
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["code"] == code && !d["fix"].is_null())
            .collect();
        if fixes.is_empty() {
            continue;
        }
        let guess = fixes.iter().any(|d| d["fix"]["applicability"] == "unsafe");
        let args: &[&str] = if guess {
            &["--fix", "--unsafe-fixes"]
        } else {
            &["--fix"]
        };
        // Lines (1-based) the fixes' edits touch.
        let touched: BTreeSet<u64> = before
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["fix"]["edits"].as_array())
            .flatten()
            .flat_map(|e| e["line"].as_u64().unwrap()..=e["end_line"].as_u64().unwrap())
            .collect();

        // --diff writes nothing and exits 1.
        let (exit, diff, _) = wsp_check(&dir, &[args, &["--diff"]].concat()[1..], &name);
        assert_eq!(exit, 1, "{name}: --diff of a fixable file");
        assert_eq!(std::fs::read_to_string(dir.join(&name)).unwrap(), original);

        let (_, _, stderr) = wsp_check(&dir, args, &name);
        assert!(stderr.starts_with("applied "), "{name}: {stderr}");
        let after = std::fs::read_to_string(dir.join(&name)).unwrap();
        assert_ne!(after, original, "{name}");
        // Of its code, only what had no fix is left.
        let messages = |v: &serde_json::Value, unfixable: bool| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .filter(|d| d["code"] == code && (!unfixable || d["fix"].is_null()))
                .map(|d| d["message"].as_str().unwrap().to_string())
                .collect()
        };
        let left = json(&dir, &name);
        assert_eq!(messages(&left, false), messages(&before, true), "{name}");
        for op in similar::TextDiff::from_lines(&original, &after).ops() {
            if op.tag() != similar::DiffTag::Equal {
                let lines = op.old_range();
                let changed = (lines.start as u64 + 1)..=(lines.end.max(lines.start + 1) as u64);
                assert!(
                    changed.clone().all(|l| touched.contains(&l)),
                    "{name}: lines {changed:?} changed, but the fixes touch {touched:?}"
                );
            }
        }

        // Again: nothing to do.
        let (_, _, stderr) = wsp_check(&dir, args, &name);
        assert!(
            stderr.starts_with("applied 0 fixes in 0 files"),
            "{name}: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(dir.join(&name)).unwrap(), after);

        // The diff, applied by patch to the original, gives the fixed file.
        let patched = common::scratch("check_fix", &format!("{code}-patch"));
        std::fs::write(patched.join(&name), &original).unwrap();
        let mut child = std::process::Command::new("patch")
            .args(["-p1", "--silent"])
            .current_dir(&patched)
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("patch");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(diff.as_bytes())
            .unwrap();
        assert!(
            child.wait().unwrap().success(),
            "{name}: patch failed on\n{diff}"
        );
        assert_eq!(
            std::fs::read_to_string(patched.join(&name)).unwrap(),
            after,
            "{name}"
        );
        fixed.push(code.to_string());
    }
    assert_eq!(
        fixed,
        [
            "WSP003", "WSP101", "WSP102", "WSP104", "WSP202", "WSP205", "WSP301", "WSP302",
            "WSP401", "WSP503"
        ]
    );
}

/// A guess is applied only with `--unsafe-fixes`; without it the file keeps the guessed spot.
#[test]
fn a_guess_needs_unsafe_fixes() {
    let dir = common::scratch("check_fix", "guess");
    std::fs::write(
        dir.join("g.wsp"),
        "from pto_wsp import *\n\nF32 = DTyp.F32\n",
    )
    .unwrap();
    let (exit, _, stderr) = wsp_check(&dir, &["--fix"], "g.wsp");
    assert_eq!((exit, stderr.as_str()), (1, "applied 0 fixes in 0 files\n"));
    let (exit, _, stderr) = wsp_check(&dir, &["--fix", "--unsafe-fixes"], "g.wsp");
    assert_eq!((exit, stderr.as_str()), (0, "applied 1 fix in 1 file\n"));
    assert_eq!(
        std::fs::read_to_string(dir.join("g.wsp")).unwrap(),
        "from pto_wsp import *\n\nF32 = DType.F32\n"
    );
}

/// SARIF carries every fix, safe or a guess, its applicability in its properties, and stays
/// valid SARIF 2.1.0.
#[test]
fn sarif_carries_every_fix_with_its_applicability() {
    let out = common::wsp()
        .args(["check", "--format", "sarif", FIXTURES])
        .current_dir(common::root())
        .output()
        .unwrap();
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("data/sarif-schema-2.1.0.json")).unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("a valid schema");
    assert!(validator.is_valid(&log));
    let json = json(&common::root(), FIXTURES);
    let with_fix = json
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| !d["fix"].is_null())
        .count();
    let fixes: Vec<&serde_json::Value> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["fixes"].as_array().unwrap())
        .collect();
    assert_eq!(fixes.len(), with_fix);
    let kinds: BTreeSet<&str> = fixes
        .iter()
        .map(|f| f["properties"]["applicability"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, BTreeSet::from(["safe", "unsafe"]));
}

//! `wsp check` end to end: the real binary on the examples and the invalid corpus.

use std::path::Path;
use std::process::{Command, Output};

use expect_test::expect;

fn wsp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsp"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("wsp runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 output")
}

#[test]
fn examples_check_clean() {
    let out = wsp(&["check", "examples/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    expect![[r#"
        32 files checked: 0 errors, 0 warnings
    "#]]
    .assert_eq(&stdout(&out));
}

#[test]
fn human_output_shows_the_source() {
    let out = wsp(&[
        "check",
        "syntax/test_data/parser/err/missing_close_paren_in_kernel.wsp",
        "syntax/test_data/parser/err/non_default_after_default.wsp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        error[WSP001]: expected `)` to close the `(` at 3:14, found newline
          ┌─ syntax/test_data/parser/err/missing_close_paren_in_kernel.wsp:3:28
          │
        3 │     pto.store(y, pto.exp(x)
          │                            ^

        error[WSP101]: unknown name `X`
          ┌─ syntax/test_data/parser/err/missing_close_paren_in_kernel.wsp:8:16
          │
        8 │         k[b](x=X[b], y=Y[b])
          │                ^

        error[WSP101]: unknown name `Y`
          ┌─ syntax/test_data/parser/err/missing_close_paren_in_kernel.wsp:8:24
          │
        8 │         k[b](x=X[b], y=Y[b])
          │                        ^

        error[WSP001]: non-default argument follows default argument
          ┌─ syntax/test_data/parser/err/non_default_after_default.wsp:1:12
          │
        1 │ def f(a=1, b):
          │            ^

        2 files checked: 4 errors, 0 warnings
    "#]]
    .assert_eq(&stdout(&out));
}

#[test]
fn json_output_follows_the_contract() {
    let out = wsp(&[
        "check",
        "--format",
        "json",
        "syntax/test_data/parser/err/lambda_missing_colon.wsp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        [
          {
            "file": "syntax/test_data/parser/err/lambda_missing_colon.wsp",
            "code": "WSP001",
            "severity": "error",
            "line": 1,
            "column": 16,
            "end_line": 1,
            "end_column": 17,
            "message": "expected `,` between parameters, found name `t`",
            "related": []
          },
          {
            "file": "syntax/test_data/parser/err/lambda_missing_colon.wsp",
            "code": "WSP001",
            "severity": "error",
            "line": 1,
            "column": 17,
            "end_line": 1,
            "end_column": 18,
            "message": "expected `:`, found `.`",
            "related": []
          }
        ]
    "#]]
    .assert_eq(&stdout(&out));
    // The notes at other places, as SARIF keeps them.
    let out = wsp(&[
        "check",
        "--format",
        "json",
        "analysis/test_data/diagnostics/WSP301.wsp",
    ]);
    expect![[r#"
        [
          {
            "file": "analysis/test_data/diagnostics/WSP301.wsp",
            "code": "WSP301",
            "severity": "error",
            "line": 19,
            "column": 43,
            "end_line": 19,
            "end_column": 47,
            "message": "`C[m]` is written by parallel iterations (k=0) and (k=1) of this `P` loop, which both write `C[0]`",
            "related": [
              {
                "line": 18,
                "column": 9,
                "end_line": 18,
                "end_column": 23,
                "message": "the parallel loop"
              },
              {
                "line": 21,
                "column": 11,
                "end_line": 21,
                "end_column": 23,
                "message": "for this call"
              }
            ],
            "fix": {
              "title": "make the loop sequential: `P` → `P.seq`",
              "applicability": "safe",
              "edits": [
                {
                  "line": 18,
                  "column": 18,
                  "end_line": 18,
                  "end_column": 19,
                  "content": "P.seq"
                }
              ]
            }
          }
        ]
    "#]].assert_eq(&stdout(&out));
}

/// `match` is valid Python: never a syntax error, always "outside the subset", at module level
/// and in kernel and workload bodies.
#[test]
fn match_statement_is_outside_the_subset() {
    let out = wsp(&[
        "check",
        "--format",
        "json",
        "cli/tests/data/match_statement.wsp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let diagnostics: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("a JSON array");
    let lines: Vec<String> = diagnostics
        .iter()
        .map(|d| {
            format!(
                "{}:{} {} {}",
                d["line"], d["column"], d["code"], d["message"]
            )
        })
        .collect();
    expect![[r#"
        8:1 "WSP002" "a `match` statement is not part of WSP"
        15:5 "WSP002" "a `match` statement is not part of a kernel body (assignments of `pto.*` ops, `pto.store` and `for` loops over a range)"
        24:9 "WSP002" "a `match` statement is not part of a workload body (loops over `P`, `with` blocks and tasks)""#]]
    .assert_eq(&lines.join("\n"));
}

#[test]
fn every_invalid_fixture_is_reported_in_json() {
    let dir = "syntax/test_data/parser/err";
    let out = wsp(&["check", "--format", "json", dir]);
    assert_eq!(out.status.code(), Some(1));
    let diagnostics: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).expect("a JSON array");
    // Every fixture has a syntax error (it may have other diagnostics too).
    let mut files: Vec<&str> = diagnostics
        .iter()
        .filter(|d| d["code"] == "WSP001")
        .map(|d| d["file"].as_str().expect("file"))
        .collect();
    files.dedup();
    let fixtures = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir))
        .expect("fixtures")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "wsp"))
        })
        .count();
    assert_eq!(
        files.len(),
        fixtures,
        "one or more invalid fixtures passed the check"
    );
    for d in &diagnostics {
        assert!(d["code"].as_str().is_some_and(|c| c.starts_with("WSP")));
        assert!(d["severity"] == "error" || d["severity"] == "warning");
        for key in ["line", "column", "end_line", "end_column"] {
            assert!(
                d[key].as_u64().is_some_and(|n| n >= 1),
                "{key} must be 1-based: {d}"
            );
        }
    }
}

#[test]
fn wsp_check_alias_and_exit_codes() {
    let alias = Command::new(env!("CARGO_BIN_EXE_wsp-check"))
        .arg("examples/hello_add.wsp")
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .output()
        .expect("wsp-check runs");
    assert_eq!(alias.status.code(), Some(0));
    assert_eq!(stdout(&alias), "1 file checked: 0 errors, 0 warnings\n");

    let missing = wsp(&["check", "no/such/file.wsp"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no/such/file.wsp"));
    assert_eq!(
        stdout(&missing),
        "0 files checked (1 path could not be read): 0 errors, 0 warnings\n"
    );

    let usage = wsp(&["check", "--format", "yaml"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let out = wsp(&[
        "check",
        "--format",
        "sarif",
        "analysis/test_data/diagnostics",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    // The OASIS schema as shipped with serde-sarif, with one fix: its `language` pattern
    // (`^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$`) is not a valid regular expression, so it
    // reads `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$`, what it evidently means.
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("data/sarif-schema-2.1.0.json")).expect("schema");
    let validator = jsonschema::draft7::new(&schema).expect("a valid schema");
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert!(results.iter().any(|r| {
        r["ruleId"] == "WSP301"
            && r["relatedLocations"]
                .as_array()
                .is_some_and(|l| !l.is_empty())
    }));
    assert!(
        results
            .iter()
            .any(|r| r["fixes"].as_array().is_some_and(|f| !f.is_empty()))
    );
}

#[test]
fn github_output_prints_workflow_annotations() {
    let out = wsp(&[
        "check",
        "--format",
        "github",
        "analysis/test_data/diagnostics/WSP201.wsp",
        "analysis/test_data/diagnostics/WSP205.wsp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        ::error file=analysis/test_data/diagnostics/WSP201.wsp,line=7,col=18,endLine=7,endColumn=31,title=WSP201::`pto.add`: `x` is [16,128] F32 and `b` is [16,64] F32; the shapes do not broadcast
        ::warning file=analysis/test_data/diagnostics/WSP205.wsp,line=6,col=64,endLine=6,endColumn=65,title=WSP205::`Out` parameter `s` is never stored: add `pto.store(s, ...)`
        ::warning file=analysis/test_data/diagnostics/WSP205.wsp,line=11,col=38,endLine=11,endColumn=41,title=WSP205::`InOut` parameter `acc` is never stored, so it keeps its old value: add `pto.store(acc, ...)`, or declare it `In` if the kernel only reads it
    "#]]
    .assert_eq(&stdout(&out));
}

/// A flood of errors is cut at `SHOWN_PER_FILE` per file in every format, with a note of how
/// many were left out; the summary and the exit code still count them all.
#[test]
fn a_flood_of_diagnostics_is_cut_at_one_hundred_per_file() {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join("flood.wsp");
    std::fs::write(&path, "$\n".repeat(150)).expect("write the flood");
    let path = path.to_str().expect("UTF-8 path");

    let human = wsp(&["check", path]);
    assert_eq!(human.status.code(), Some(1));
    let text = stdout(&human);
    assert_eq!(text.matches("error[WSP001]").count(), 100);
    assert!(
        text.contains(&format!(
            "note: 50 more diagnostics in {path} are not shown (the first 100 are)"
        )),
        "{text}"
    );
    assert!(
        text.ends_with("1 file checked: 150 errors, 0 warnings\n"),
        "{text}"
    );

    for (format, each) in [
        ("json", r#""code": "WSP001""#),
        ("sarif", r#""ruleId": "WSP001""#),
        ("github", "title=WSP001"),
    ] {
        let out = wsp(&["check", "--format", format, path]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(stdout(&out).matches(each).count(), 100, "{format}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("50 more diagnostics"));
    }
}

#[test]
fn a_view_a_kernel_cannot_read_on_the_npu_is_reported_where_the_program_compiles() {
    let out = wsp(&[
        "check",
        "cli/tests/data/transposed_view_read_by_vector_work.wsp",
        "cli/tests/data/strided_column_view.wsp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    expect![[r#"
        error[WSP508]: kernel `copy`: `w` is given `Wt`, whose columns are 32 elements apart (a transposed view); an Ascend 910B (A2/A3) reads such a tile only as a matmul's right operand (`pto.matmul(a, w)`), which this kernel does not: declare the tensor in the order the kernel reads it
           ┌─ cli/tests/data/transposed_view_read_by_vector_work.wsp:18:17
           │
        18 │ program = run().compile(target="ascend_npu")
           │                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

        error[WSP508]: kernel `twice`: its column `g` ([16,1] F32) is given `Gc[i]`, whose rows are 4 elements apart; an Ascend 910B (A2/A3) loads and stores a column tile only as contiguous elements: give it a tensor whose last dimension is 1, or a [1, 16] row
           ┌─ cli/tests/data/strided_column_view.wsp:20:21
           │
        20 │ program = run(rows).compile(target="ascend_npu")
           │                     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^

        2 files checked: 2 errors, 0 warnings
    "#]].assert_eq(&stdout(&out));
}

/// A program compiled for cpu_sim whose tiles would overflow the 910B's UB: `wsp check` warns
/// (the program runs here, and exists to run there), `--target ascend_npu` makes it an error.
#[test]
fn what_the_910b_would_refuse_is_a_warning_until_it_is_the_target() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("check-advisory");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big_tiles.wsp");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../analysis/test_data/diagnostics/WSP506.wsp"),
    )
    .unwrap()
    .replace("target=\"ascend_npu\"", "target=\"cpu_sim\"");
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let out = wsp(&["check", path, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let shown: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let codes: Vec<(String, String)> = shown
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(codes, [("WSP506".to_string(), "warning".to_string())]);
    let out = wsp(&["check", path, "--target", "ascend_npu"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("error[WSP506]"), "{}", stdout(&out));
}

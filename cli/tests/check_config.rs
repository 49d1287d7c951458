//! `wsp check` as a CI tool: `--select`, `--extend-select` and `--ignore` (codes and prefixes),
//! `[check]` in `wsp.toml` (`select`, `ignore`, `per-file-ignores`, `warnings-as-errors`,
//! `severity`) under the command line, `--statistics`, `--quiet`, `--exit-zero` and
//! `--output-file`; and a bad configuration refused with what is wrong.

mod common;

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};

/// One warning of each of WSP104, WSP305 and WSP501 and one WSP101 error.
const FILE: &str = r#"from pto_wsp import *

F32 = DType.F32
X = Tensor((4, 16, 16), F32)
Y = Tensor((4, 16, 16), F32)

@kernel
def act(x: In[Tile[16, 16, F32]], y: Out[Tile[16, 16, F32]]):
    pto.store(y, tl.relu(x))

@workload
def w():
    for b in P(Dense[4]):
        act[b](x=X[b], y=Y[b])

p = w().task_graph(ready=ReadyPolicy.work_steal()).compile()
q = undefined_name
"#;

/// A project: `a.wsp` and `sub/b.wsp`, both `FILE`, and `wsp.toml` if given.
fn project(name: &str, toml: Option<&str>) -> PathBuf {
    let dir = common::scratch("check_config", name);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("a.wsp"), FILE).unwrap();
    std::fs::write(dir.join("sub/b.wsp"), FILE).unwrap();
    if let Some(t) = toml {
        std::fs::write(dir.join("wsp.toml"), t).unwrap();
    }
    dir
}

/// `wsp check ARGS .` in `dir`: the exit code, then standard output, then standard error.
fn check_in(dir: &Path, args: &[&str]) -> String {
    let out = common::wsp()
        .arg("check")
        .args(args)
        .arg(".")
        .current_dir(dir)
        .output()
        .unwrap();
    format!(
        "exit {}\n{}{}",
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn statistics(dir: &Path, args: &[&str], expect: Expect) {
    let mut all = vec!["--statistics"];
    all.extend_from_slice(args);
    expect.assert_eq(&check_in(dir, &all));
}

#[test]
fn selectors_take_codes_and_prefixes_the_most_specific_deciding() {
    let dir = project("selectors", None);
    statistics(
        &dir,
        &[],
        expect![[r#"
        exit 1
        2  WSP101  unknown name
        2  WSP104  deprecated spelling
        2  WSP305  tensor read but never written and has no `init`
        2  WSP501  schedule directive not fully enforced on the target
    "#]],
    );
    // Only WSP1 and WSP5; of WSP1, not WSP101 (more specific).
    statistics(
        &dir,
        &["--select", "WSP1,WSP5", "--ignore", "WSP101"],
        expect![[r#"
        exit 0
        2  WSP104  deprecated spelling
        2  WSP501  schedule directive not fully enforced on the target
    "#]],
    );
    // A tie goes to `ignore`.
    statistics(
        &dir,
        &["--select", "WSP104", "--ignore", "WSP104"],
        expect![[r#"
        exit 0
    "#]],
    );
    // `--extend-select` adds to a `--select`, and is repeatable.
    statistics(
        &dir,
        &[
            "--select",
            "WSP101",
            "--extend-select",
            "WSP305",
            "--extend-select",
            "WSP104",
        ],
        expect![[r#"
            exit 1
            2  WSP101  unknown name
            2  WSP104  deprecated spelling
            2  WSP305  tensor read but never written and has no `init`
        "#]],
    );
    // No error reported: exit 0.
    statistics(
        &dir,
        &["--ignore", "WSP101"],
        expect![[r#"
        exit 0
        2  WSP104  deprecated spelling
        2  WSP305  tensor read but never written and has no `init`
        2  WSP501  schedule directive not fully enforced on the target
    "#]],
    );
}

#[test]
fn the_command_line_decides_over_wsp_toml() {
    let dir = project(
        "precedence",
        Some("[check]\nselect = [\"WSP1\", \"WSP3\"]\nignore = [\"WSP104\"]\n"),
    );
    statistics(
        &dir,
        &[],
        expect![[r#"
        exit 1
        2  WSP101  unknown name
        2  WSP305  tensor read but never written and has no `init`
    "#]],
    );
    // The command line re-selects what wsp.toml ignores, and its `--select` replaces the file's.
    statistics(
        &dir,
        &["--extend-select", "WSP104"],
        expect![[r#"
        exit 1
        2  WSP101  unknown name
        2  WSP104  deprecated spelling
        2  WSP305  tensor read but never written and has no `init`
    "#]],
    );
    statistics(
        &dir,
        &["--select", "WSP5"],
        expect![[r#"
        exit 0
        2  WSP501  schedule directive not fully enforced on the target
    "#]],
    );
}

#[test]
fn per_file_ignores_and_severities() {
    let dir = project(
        "per_file",
        Some(
            r#"[check]
per-file-ignores = { "sub/*.wsp" = ["WSP5", "WSP101"], "a.wsp" = ["WSP305"] }
warnings-as-errors = true

[check.severity]
WSP104 = "warning"
WSP1 = "error"
"#,
        ),
    );
    expect![[r#"
        exit 1
        [
          {
            "file": "./a.wsp",
            "code": "WSP104",
            "severity": "warning",
            "line": 9,
            "column": 18,
            "end_line": 9,
            "end_column": 20,
            "message": "`tl.*` is a deprecated spelling of `pto.*`",
            "related": [],
            "fix": {
              "title": "replace `tl` with `pto`",
              "applicability": "safe",
              "edits": [
                {
                  "line": 9,
                  "column": 18,
                  "end_line": 9,
                  "end_column": 20,
                  "content": "pto"
                }
              ]
            }
          },
          {
            "file": "./a.wsp",
            "code": "WSP501",
            "severity": "error",
            "line": 16,
            "column": 9,
            "end_line": 16,
            "end_column": 51,
            "message": "`task_graph(ready=...)` is only partly enforced on cpu_sim: ready tasks are issued in dispatch order; the ready policy is ignored",
            "related": []
          },
          {
            "file": "./a.wsp",
            "code": "WSP101",
            "severity": "error",
            "line": 17,
            "column": 5,
            "end_line": 17,
            "end_column": 19,
            "message": "unknown name `undefined_name`",
            "related": []
          },
          {
            "file": "./sub/b.wsp",
            "code": "WSP104",
            "severity": "warning",
            "line": 9,
            "column": 18,
            "end_line": 9,
            "end_column": 20,
            "message": "`tl.*` is a deprecated spelling of `pto.*`",
            "related": [],
            "fix": {
              "title": "replace `tl` with `pto`",
              "applicability": "safe",
              "edits": [
                {
                  "line": 9,
                  "column": 18,
                  "end_line": 9,
                  "end_column": 20,
                  "content": "pto"
                }
              ]
            }
          },
          {
            "file": "./sub/b.wsp",
            "code": "WSP305",
            "severity": "error",
            "line": 14,
            "column": 18,
            "end_line": 14,
            "end_column": 22,
            "message": "`X` is read here but no task writes it and it has no `init`, so it is all zeros; give it an `init=` or write it first",
            "related": [
              {
                "line": 4,
                "column": 1,
                "end_line": 4,
                "end_column": 2,
                "message": "`X` is declared here"
              }
            ]
          }
        ]
    "#]].assert_eq(&check_in(&dir, &["--format", "json"]));
    // `--exit-zero` keeps the report and exits 0.
    let report = check_in(&dir, &["--exit-zero", "--quiet"]);
    assert!(
        report.starts_with("exit 0\n") && report.contains("error[WSP501]"),
        "{report}"
    );
    assert!(
        !report.contains("files checked"),
        "--quiet prints the diagnostics alone"
    );
}

#[test]
fn statistics_as_json_and_the_report_written_to_a_file() {
    let dir = project("output", None);
    statistics(
        &dir,
        &["--format", "json", "--select", "WSP3,WSP5"],
        expect![[r#"
        exit 0
        [
          {
            "code": "WSP305",
            "count": 2,
            "title": "tensor read but never written and has no `init`"
          },
          {
            "code": "WSP501",
            "count": 2,
            "title": "schedule directive not fully enforced on the target"
          }
        ]
    "#]],
    );
    let shown = check_in(&dir, &["--format", "sarif"]);
    let written = check_in(
        &dir,
        &["--format", "sarif", "--output-file", "out/report.sarif"],
    );
    assert_eq!(written, "exit 1\n", "nothing on standard output");
    let file = std::fs::read_to_string(dir.join("out/report.sarif")).unwrap();
    assert_eq!(format!("exit 1\n{file}"), shown);
}

#[test]
fn a_bad_configuration_is_refused_with_what_is_wrong() {
    for (toml, args, expect) in [
        (
            "[check]\nignore = [\"WSP9\"]\n",
            &[][..],
            expect![[r#"
                exit 2
                error: wsp.toml [check]: `WSP9` is no WSP code nor a prefix of one (a code is `WSP` and three digits: `WSP306`, or a prefix such as `WSP3`)
            "#]],
        ),
        (
            "[check]\nseverity = { WSP104 = \"fatal\" }\n",
            &[][..],
            expect![[r#"
                exit 2
                error: wsp.toml [check.severity]: `WSP104` is `error` or `warning`, not `fatal`
            "#]],
        ),
        (
            "[check]\nper-file-ignores = { \"[a\" = [\"WSP104\"] }\n",
            &[][..],
            expect![[r#"
                exit 2
                error: wsp.toml [check] per-file-ignores: `[a` is no glob: Pattern syntax error near position 0: invalid range pattern
            "#]],
        ),
        (
            "[check]\nignores = [\"WSP104\"]\n",
            &[][..],
            expect![[r#"
            exit 2
            error: DIR/wsp.toml: TOML parse error at line 2, column 1
              |
            2 | ignores = ["WSP104"]
              | ^^^^^^^
            unknown field `ignores`, expected one of `targets`, `select`, `extend-select`, `ignore`, `per-file-ignores`, `warnings-as-errors`, `severity`

        "#]],
        ),
        (
            "",
            &["--select", "E501"][..],
            expect![[r#"
            exit 2
            error: the command line: `E501` is no WSP code nor a prefix of one (a code is `WSP` and three digits: `WSP306`, or a prefix such as `WSP3`)
        "#]],
        ),
        (
            "",
            &["--statistics", "--format", "github"][..],
            expect![[r#"
            exit 2
            error: `--statistics` prints text or JSON (`--format human` or `json`)
        "#]],
        ),
    ] {
        let dir = project("bad", Some(toml));
        let out = check_in(&dir, args);
        expect.assert_eq(&out.replace(&dir.display().to_string(), "DIR"));
    }
}

/// docs/ci.md's example `wsp.toml` is one `wsp check` accepts.
#[test]
fn the_documented_configuration_is_accepted() {
    let doc = std::fs::read_to_string(common::root().join("docs/ci.md")).unwrap();
    let toml = doc
        .split("```toml\n")
        .nth(1)
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let dir = project("documented", Some(toml));
    let out = check_in(&dir, &["--statistics"]);
    assert!(out.starts_with("exit 1\n"), "{out}");
    assert!(!out.contains("WSP306"), "{out}");
}

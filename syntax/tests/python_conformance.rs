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

/// What `SCRIPT` prints when run by the Python that judges: the test venv's
/// (`WSP_TEST_PYTHON`, set by `cargo xtask test`), or `python3`.
fn run_python(script: &str) -> Vec<u8> {
    let python = std::env::var("WSP_TEST_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let out = Command::new(python)
        .args(["-c", script])
        .stderr(Stdio::inherit())
        .output()
        .expect("python3 must be installed to check conformance with Python's parser");
    assert!(out.status.success(), "the Python side of the test failed");
    out.stdout
}

/// Every `.py` file of the judging Python's standard library (its `site-packages` aside, which
/// differs between machines) with `ast.parse`'s verdict: `None` if it accepts the file, else
/// CPython's message and line. Files that are not UTF-8 are left out: a `.wsp` file is UTF-8.
fn stdlib_verdicts() -> Vec<(PathBuf, String, Option<String>)> {
    const SCRIPT: &str = r#"
import ast, os, sys, sysconfig, warnings
warnings.simplefilter("ignore")
root = sysconfig.get_paths()["stdlib"]
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = sorted(d for d in dirnames if d not in ("site-packages", "__pycache__"))
    for name in sorted(filenames):
        if not name.endswith(".py"):
            continue
        path = os.path.join(dirpath, name)
        try:
            text = open(path, encoding="utf-8-sig", newline="").read()
        except (UnicodeDecodeError, OSError):
            continue
        try:
            ast.parse(text, filename=path)
            verdict = "ok"
        except SyntaxError as e:
            verdict = f"error {e.lineno}: {e.msg}"
        except (ValueError, RecursionError, MemoryError) as e:
            verdict = f"error: {type(e).__name__}: {e}"
        print(path + "\t" + verdict.replace("\n", " ").replace("\t", " "))
"#;
    String::from_utf8(run_python(SCRIPT))
        .expect("UTF-8 paths")
        .lines()
        .map(|line| {
            let (path, verdict) = line.split_once('\t').expect("path, tab, verdict");
            let path = PathBuf::from(path);
            let text = std::fs::read_to_string(&path).expect("the walk read it as UTF-8");
            let error = (verdict != "ok").then(|| verdict.to_string());
            (path, text, error)
        })
        .collect()
}

/// A `.wsp` file is Python: on every file of CPython's own standard library (some 1,800 files,
/// among them test files that are meant to be rejected), we reject exactly what `ast.parse`
/// rejects.
#[test]
fn same_verdict_as_ast_parse_on_the_standard_library() {
    let files = stdlib_verdicts();
    assert!(
        files.len() > 1000,
        "expected the standard library, found {} files",
        files.len()
    );
    let rejected = files.iter().filter(|f| f.2.is_some()).count();
    let mismatches: Vec<String> = std::thread::scope(|s| {
        let half = files.len() / 2;
        let (a, b) = files.split_at(half);
        let check = |part: &[(PathBuf, String, Option<String>)]| {
            part.iter()
                .filter_map(|(path, text, python)| {
                    let ours = wsp_syntax::parse(text);
                    match (python, ours.errors().first()) {
                        (None, Some(e)) => {
                            let (line, col) = wsp_syntax::line_col(
                                &wsp_syntax::LineIndex::new(text),
                                e.range.start(),
                            );
                            Some(format!(
                                "{}: Python accepts, we reject at {line}:{col}: {}",
                                path.display(),
                                e.message
                            ))
                        }
                        (Some(py), None) => Some(format!(
                            "{}: Python rejects ({py}), we accept",
                            path.display()
                        )),
                        _ => None,
                    }
                })
                .collect::<Vec<_>>()
        };
        let other = s.spawn(move || check(b));
        let mut out = check(a);
        out.extend(other.join().expect("no panic"));
        out
    });
    assert!(
        mismatches.is_empty(),
        "{} of {} files ({rejected} rejected by Python) get another verdict:\n{}",
        mismatches.len(),
        files.len(),
        mismatches.join("\n")
    );
}

/// A large file is parsed in runs of top-level statements on several threads: the tree and
/// errors must be those of parsing it whole, on every file of the standard library that can be
/// cut, errors included (a file whose runs have a parser error is parsed whole).
#[test]
fn parsing_in_runs_of_statements_equals_parsing_whole() {
    let files = stdlib_verdicts();
    let mut cut = 0;
    for (path, text, _) in &files {
        let Some(chunked) = wsp_syntax::parse_in_chunks(text) else {
            continue;
        };
        cut += 1;
        assert!(
            chunked == wsp_syntax::parse_sequential(text),
            "{}: parsed in runs, it differs from the whole parse",
            path.display()
        );
    }
    assert!(cut > 300, "only {cut} of {} files were cut", files.len());
}

/// Python's limits: 200 nested brackets, 99 indented blocks, and expressions some 3,000 levels
/// deep (CPython's recursion limit; 2,985 unary minuses parse, 3,100 do not). Each case is
/// generated on both sides of a limit, and both parsers must agree.
#[test]
fn same_limits_as_cpython() {
    const SCRIPT: &str = r#"
import ast, json, sys
gens = {
    "parens": lambda n: "(" * n + "1" + ")" * n,
    "brackets": lambda n: "x = " + "[" * n + "1" + "]" * n,
    "dicts": lambda n: "x = " + "{1: " * n + "1" + "}" * n,
    "calls": lambda n: "f(" * n + "1" + ")" * n,
    "blocks": lambda n: "".join(" " * i + "if 1:\n" for i in range(n)) + " " * n + "pass\n",
    "minus": lambda n: "x = " + "-" * n + "1",
    "not": lambda n: "x = " + "not " * n + "1",
    "power": lambda n: "2**" * n + "2",
    "sum": lambda n: "1" + "+1" * n,
    "attributes": lambda n: "a" + ".b" * n,
    "conditional": lambda n: "1 if 1 else " * n + "1",
}
sizes = {"parens": [200, 201], "brackets": [199, 201], "dicts": [200, 201], "calls": [200, 201],
         "blocks": [99, 100]}
cases = []
for name, gen in gens.items():
    for n in sizes.get(name, [1000, 2900, 3100]):
        text = gen(n)
        try:
            ast.parse(text)
            ok = True
        except (SyntaxError, RecursionError, MemoryError):
            ok = False
        cases.append([f"{name} {n}", text, ok])
json.dump(cases, sys.stdout)
"#;
    let cases: Vec<(String, String, bool)> =
        serde_json::from_slice(&run_python(SCRIPT)).expect("cases as JSON");
    let mut wrong = Vec::new();
    for (name, text, python_ok) in &cases {
        let ours = wsp_syntax::parse(text);
        if ours.errors().is_empty() != *python_ok {
            wrong.push(format!(
                "{name}: Python {}, we {} ({:?})",
                if *python_ok { "accepts" } else { "rejects" },
                if *python_ok { "reject" } else { "accept" },
                ours.errors().first().map(|e| &e.message)
            ));
        }
        // Past a limit, one error says so: no flood of echoes.
        assert!(ours.errors().len() <= 3, "{name}: {:?}", ours.errors());
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `2**` repeated a million times is one error, not one per token.
#[test]
fn an_expression_past_the_limit_is_one_error() {
    let text = "x = ".to_string() + &"2**".repeat(1_000_000) + "2\n";
    let parse = wsp_syntax::parse(&text);
    assert_eq!(parse.errors().len(), 1, "{:?}", &parse.errors()[..3]);
    assert!(parse.errors()[0].message.contains("nested too deeply"));
}

/// Broken Python nobody here wrote: 1,000 copies of standard-library files, each with a few
/// random cuts, insertions of Python fragments and moved spans (seeded, so the same each run),
/// get `ast.parse`'s verdict.
#[test]
fn same_verdict_as_ast_parse_on_mutated_standard_library_files() {
    const SCRIPT: &str = r##"
import ast, json, os, random, sys, sysconfig, warnings
warnings.simplefilter("ignore")
rng = random.Random(20261123)
root = sysconfig.get_paths()["stdlib"]
files = []
for d, ds, fs in os.walk(root):
    ds[:] = sorted(x for x in ds if x not in ("site-packages", "__pycache__"))
    files += [os.path.join(d, f) for f in sorted(fs) if f.endswith(".py")]
rng.shuffle(files)
fragments = ["(", ")", "[", "]", "{", "}", ":", ",", "\n", "\n    ", " = ", "lambda ", "if ",
             " else ", "f'{", "}'", '"', "'", "\\\n", "match ", "case ", "*", "**", "not ", "-",
             "@", ";", "def ", "    ", "\t", "#", "yield ", "await ", ":=", "async ", "for ",
             " in ", "with ", " as ", "\\x", "\\N{", "b'\xe9'", "0x", "1_", "...", "->"]
cases = []
for path in files:
    if len(cases) >= 1000:
        break
    try:
        text = open(path, encoding="utf-8-sig").read()
    except (UnicodeDecodeError, OSError):
        continue
    if len(text) > 30000:
        continue
    for _ in range(4):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t) + 1)
            r = rng.random()
            if r < 0.4:
                t = t[:i] + rng.choice(fragments) + t[i:]
            elif r < 0.8:
                t = t[:i] + t[i + rng.randint(1, 4):]
            else:
                j = rng.randrange(len(t) + 1)
                a, b = min(i, j), max(i, j)
                t = t[:a] + t[b:b + 30] + t[a:]
        try:
            ast.parse(t)
            verdict = None
        except SyntaxError as e:
            verdict = f"{e.lineno}: {e.msg}"
        except (ValueError, RecursionError, MemoryError) as e:
            verdict = type(e).__name__
        cases.append([path, t, verdict])
json.dump(cases, sys.stdout)
"##;
    let cases: Vec<(String, String, Option<String>)> =
        serde_json::from_slice(&run_python(SCRIPT)).expect("cases as JSON");
    assert_eq!(cases.len(), 1000);
    let rejected = cases.iter().filter(|c| c.2.is_some()).count();
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(path, text, python)| {
            let ours = wsp_syntax::parse(text);
            (ours.errors().is_empty() != python.is_none()).then(|| {
                format!(
                    "a mutation of {path}: Python {python:?}, we {:?}\n{text}",
                    ours.errors().first().map(|e| &e.message)
                )
            })
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of 1000 mutations ({rejected} rejected by Python) get another verdict:\n{}",
        wrong.len(),
        wrong.join("\n----\n")
    );
}

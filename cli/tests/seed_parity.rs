//! The seed-parity table (`docs/seed-parity.md`) is kept true. Every fenced code block of the
//! seed tutorial and API spec is vendored under `tests/seeds/blocks/` (and compared with
//! `../shared/seeds/` wherever that folder is present; `UPDATE_EXPECT=1` re-vendors), and each
//! block's row in the table is checked against what `wsp` does with it:
//! - `runs as written`: the block alone checks without errors and `wsp run` exits 0;
//! - `checks as written`: it checks without errors and declares only, so `wsp run` says there is
//!   nothing to run;
//! - `runs once completed`: alone it has errors; `tests/seeds/completed/BLOCK.wsp` holds its
//!   lines in order (only `...` elisions may be filled in or left out, and placeholders the file
//!   names in `# seed-parity: OLD => NEW` lines replaced) with the missing context the row names,
//!   and that file checks without errors and runs;
//! - `differs on purpose`: the block (completed, where a completion exists) has exactly the error
//!   codes the row's reason names; a block in another language than Python names none.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The seed documents whose blocks the table lists, by file-name prefix, and the table's name.
const DOCUMENTS: [(&str, &str); 2] = [("000_", "tutorial"), ("003_", "spec")];

const STATUSES: [&str; 4] = [
    "runs as written",
    "checks as written",
    "runs once completed",
    "differs on purpose",
];

/// One fenced block: `tutorial-02.py`, say.
struct Block {
    name: String,
    lang: String,
    text: String,
}

/// The fenced blocks of a Markdown text, in order, numbered from 1 in each document.
fn extract(document: &str, markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<&str>)> = None;
    for line in markdown.lines() {
        match &mut open {
            None => {
                if let Some(lang) = line.trim_end().strip_prefix("```") {
                    open = Some((lang.to_string(), Vec::new()));
                }
            }
            Some((lang, lines)) => {
                if line.trim_end() == "```" {
                    let extension = if lang == "python" {
                        "py"
                    } else {
                        lang.as_str()
                    };
                    blocks.push(Block {
                        name: format!("{document}-{:02}.{extension}", blocks.len() + 1),
                        lang: lang.clone(),
                        text: lines.iter().map(|l| format!("{l}\n")).collect(),
                    });
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    assert!(open.is_none(), "{document}: a code fence is not closed");
    blocks
}

fn vendored_dir() -> PathBuf {
    common::root().join("tests/seeds/blocks")
}

/// The vendored blocks, in name order.
fn vendored() -> Vec<Block> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(vendored_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // The table's order: the documents in DOCUMENTS' order, each block by number.
    paths.sort_by_key(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let document = DOCUMENTS.iter().position(|(_, d)| name.starts_with(d));
        (document, name)
    });
    paths
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let lang = match p.extension().unwrap().to_str().unwrap() {
                "py" => "python".to_string(),
                other => other.to_string(),
            };
            Block {
                name,
                lang,
                text: std::fs::read_to_string(&p).unwrap(),
            }
        })
        .collect()
}

#[test]
fn vendored_blocks_are_the_seed_documents_blocks() {
    let seeds = common::root().join("../shared/seeds");
    if !seeds.is_dir() {
        eprintln!(
            "skipped: {} is absent; the vendored blocks stand",
            seeds.display()
        );
        return;
    }
    let mut extracted = Vec::new();
    for (prefix, document) in DOCUMENTS {
        let file = std::fs::read_dir(&seeds)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}* in {}", seeds.display()));
        extracted.extend(extract(document, &std::fs::read_to_string(file).unwrap()));
    }
    let have: Vec<(String, String)> = vendored().into_iter().map(|b| (b.name, b.text)).collect();
    let want: Vec<(String, String)> = extracted.into_iter().map(|b| (b.name, b.text)).collect();
    if have == want {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        let dir = vendored_dir();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &want {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let names = |v: &[(String, String)]| v.iter().map(|b| b.0.clone()).collect::<Vec<_>>();
    panic!(
        "tests/seeds/blocks/ differs from ../shared/seeds/ (vendored {:?}, seeds {:?}, or a block's \
         text); run with UPDATE_EXPECT=1 and update docs/seed-parity.md",
        names(&have),
        names(&want)
    );
}

/// One row of the table.
struct Row {
    block: String,
    status: String,
    why: String,
}

/// The table's rows: `| tutorial 2 | section | status | context or reason |`.
fn table() -> (Vec<Row>, String) {
    let doc = std::fs::read_to_string(common::root().join("docs/seed-parity.md")).unwrap();
    let mut rows = Vec::new();
    for line in doc.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| a | b | c | d |` splits into an empty cell at each end.
        if cells.len() != 6 || !DOCUMENTS.iter().any(|(_, d)| cells[1].starts_with(d)) {
            continue;
        }
        let (document, number) = cells[1].split_once(' ').unwrap();
        let number: usize = number.parse().unwrap();
        rows.push(Row {
            block: format!("{document}-{number:02}"),
            status: cells[3].to_string(),
            why: cells[4].to_string(),
        });
    }
    (rows, doc)
}

/// The error codes `wsp check` reports for `file`.
fn error_codes(file: &Path) -> BTreeSet<String> {
    let out = common::wsp()
        .args(["check", "--format", "json"])
        .arg(file)
        .output()
        .unwrap();
    let diagnostics: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: no JSON from wsp check ({e}): {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    diagnostics
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect()
}

/// `wsp run FILE` in FILE's folder: its exit code and its stderr.
fn run(file: &Path) -> (i32, String) {
    let out = common::wsp()
        .arg("run")
        .arg(file.file_name().unwrap())
        .current_dir(file.parent().unwrap())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Where `completed` fails to hold `block`'s lines in order (leading space aside, blank lines
/// skipped), a line containing `...` being an elision that may be filled in or left out. The
/// completion's `# seed-parity: OLD => NEW` lines name the placeholders it replaces (the spec's
/// `workload` standing for any workload, say), applied to the block first.
fn missing_from(block: &str, completed: &str) -> Option<String> {
    let mut block = block.to_string();
    for line in completed.lines() {
        if let Some(rule) = line.trim().strip_prefix("# seed-parity: ") {
            let (old, new) = rule
                .split_once(" => ")
                .expect("`# seed-parity: OLD => NEW`");
            block = block.replace(old, new);
        }
    }
    let mut have = completed.lines().map(str::trim);
    for line in block.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.contains("...") {
            continue;
        }
        if !have.any(|l| l == line) {
            return Some(line.to_string());
        }
    }
    None
}

#[test]
fn every_block_has_the_status_the_table_gives_it() {
    let (rows, doc) = table();
    let blocks = vendored();
    let listed: Vec<&str> = rows.iter().map(|r| r.block.as_str()).collect();
    let stems: Vec<&str> = blocks
        .iter()
        .map(|b| b.name.rsplit_once('.').unwrap().0)
        .collect();
    assert_eq!(
        listed, stems,
        "docs/seed-parity.md lists other blocks than tests/seeds/blocks/"
    );

    let completed_dir = common::root().join("tests/seeds/completed");
    let mut failures = Vec::new();
    let mut counts = [0usize; 4];
    for (block, row) in blocks.iter().zip(&rows) {
        let Some(status) = STATUSES.iter().position(|s| *s == row.status) else {
            failures.push(format!("{}: unknown status `{}`", row.block, row.status));
            continue;
        };
        counts[status] += 1;
        let dir = common::scratch("seed_parity", &row.block);
        let written = dir.join("block.wsp");
        std::fs::write(&written, &block.text).unwrap();
        let completion = completed_dir.join(format!("{}.wsp", row.block));
        let completion = completion.exists().then(|| {
            let text = std::fs::read_to_string(&completion).unwrap();
            if let Some(line) = missing_from(&block.text, &text) {
                failures.push(format!(
                    "{}: the completion lacks the block's line `{line}` (or has it out of order)",
                    row.block
                ));
            }
            let path = dir.join("completed.wsp");
            std::fs::write(&path, text).unwrap();
            path
        });
        if block.lang != "python" {
            if status != 3 || row.why.contains("WSP") {
                failures.push(format!(
                    "{}: a {} block differs on purpose and names no code",
                    row.block, block.lang
                ));
            }
            continue;
        }
        let errors = error_codes(&written);
        match status {
            0 | 1 => {
                if !errors.is_empty() {
                    failures.push(format!("{}: errors {errors:?} as written", row.block));
                    continue;
                }
                let (code, stderr) = run(&written);
                let ran = code == 0;
                let nothing = stderr.contains("compiles no program and does nothing");
                if (status == 0 && !ran) || (status == 1 && !nothing) {
                    failures.push(format!("{}: wsp run exits {code}: {stderr}", row.block));
                }
            }
            2 => {
                if errors.is_empty() {
                    failures.push(format!(
                        "{}: checks as written, so it is not a fragment",
                        row.block
                    ));
                }
                let Some(path) = completion else {
                    failures.push(format!(
                        "{}: no tests/seeds/completed/{}.wsp",
                        row.block, row.block
                    ));
                    continue;
                };
                let errors = error_codes(&path);
                if !errors.is_empty() {
                    failures.push(format!(
                        "{}: the completion has errors {errors:?}",
                        row.block
                    ));
                    continue;
                }
                let (code, stderr) = run(&path);
                if code != 0 {
                    failures.push(format!(
                        "{}: the completion exits {code}: {stderr}",
                        row.block
                    ));
                }
            }
            _ => {
                let errors = completion.as_deref().map_or(errors, error_codes);
                let named: BTreeSet<String> = row
                    .why
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| w.len() == 6 && w.starts_with("WSP"))
                    .map(str::to_string)
                    .collect();
                if errors != named {
                    failures.push(format!(
                        "{}: the reason names {named:?}, wsp check reports {errors:?}",
                        row.block
                    ));
                }
            }
        }
    }
    let summary = format!(
        "{} runs as written, {} checks as written, {} runs once completed, {} differs on purpose",
        counts[0], counts[1], counts[2], counts[3]
    );
    if !doc.contains(&summary) {
        failures.push(format!("docs/seed-parity.md does not say `{summary}`"));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

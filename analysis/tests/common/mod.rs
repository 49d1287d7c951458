//! Helpers shared by the analyzer's test files.

use std::fmt::Write;

use wsp_analysis::{Database, Diagnostic, File, Workspace, file_diagnostics, lower_file};

// Not every test file uses every helper below.

/// `text`'s diagnostics, one a line: the code, the text it points at, the message.
#[allow(dead_code)]
pub fn diagnostics_shown(text: &str) -> String {
    let db = Database::default();
    diagnostics(&db, file(&db, text), text)
}

/// `text`'s diagnostics as [`diagnostics_shown`] gives them or, for a file without any, what
/// `lowered` shows of each program the file lowers to.
#[allow(dead_code)]
pub fn diagnostics_or_lowered(text: &str, lowered: impl Fn(&wsp_ir::Program) -> String) -> String {
    kept_or_lowered(text, |_| true, lowered)
}

/// As [`diagnostics_or_lowered`], with warnings left out.
#[allow(dead_code)]
pub fn errors_or_lowered(text: &str, lowered: impl Fn(&wsp_ir::Program) -> String) -> String {
    kept_or_lowered(
        text,
        |d| d.severity == wsp_analysis::Severity::Error,
        lowered,
    )
}

/// The diagnostics `keep` keeps or, for a file with none, what `lowered` shows of each program.
fn kept_or_lowered(
    text: &str,
    keep: impl Fn(&Diagnostic) -> bool,
    lowered: impl Fn(&wsp_ir::Program) -> String,
) -> String {
    let db = Database::default();
    let file = file(&db, text);
    let mut shown = listed(text, file_diagnostics(&db, file).iter().filter(|d| keep(d)));
    if shown.is_empty() {
        for p in &lower_file(&db, file).clone().expect("lowered").programs {
            shown.push_str(&lowered(p));
        }
    }
    shown
}

fn file(db: &Database, text: &str) -> File {
    let ws = Workspace::new(db, Vec::new());
    File::new(db, ws, "m.wsp".into(), text.to_string())
}

fn diagnostics(db: &Database, file: File, text: &str) -> String {
    listed(text, file_diagnostics(db, file))
}

/// Diagnostics one a line: the code, the text it points at, the message.
fn listed<'a>(text: &str, diagnostics: impl IntoIterator<Item = &'a Diagnostic>) -> String {
    let mut shown = String::new();
    for d in diagnostics {
        let _ = writeln!(
            shown,
            "{} `{}`: {}",
            d.code.as_str(),
            &text[d.range],
            d.message
        );
    }
    shown
}

/// `text`'s diagnostics as [`diagnostics_shown`] gives them or, for a file without any, its
/// top-level actions, one a line.
#[allow(dead_code)]
pub fn diagnostics_or_actions(text: &str) -> String {
    let db = Database::default();
    let file = file(&db, text);
    let mut shown = diagnostics(&db, file, text);
    if shown.is_empty() {
        for (_, a) in &lower_file(&db, file).clone().expect("lowered").actions {
            let _ = writeln!(shown, "{a:?}");
        }
    }
    shown
}

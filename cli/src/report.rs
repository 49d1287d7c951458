//! Printing diagnostics: with source snippets for people (codespan-reporting), or as JSON with
//! 1-based lines and columns (columns count characters) for tools.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use codespan_reporting::diagnostic::{Diagnostic as Rendered, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use serde::Serialize;
use wsp_syntax::{LineIndex, TextRange, TextSize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Error,
}

#[derive(Debug, Clone)]
pub(crate) struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub range: TextRange,
    pub message: String,
}

pub(crate) struct SourceFile {
    path: PathBuf,
    text: String,
    index: LineIndex,
}

impl SourceFile {
    pub(crate) fn new(path: PathBuf, text: String) -> SourceFile {
        let index = LineIndex::new(&text);
        SourceFile { path, text, index }
    }

    fn line_col(&self, offset: TextSize) -> (u32, u32) {
        wsp_syntax::line_col(&self.index, offset)
    }
}

pub(crate) fn print_human(checked: &[(SourceFile, Vec<Diagnostic>)], errors: usize) {
    let choice = if std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        termcolor::ColorChoice::Auto
    } else {
        termcolor::ColorChoice::Never
    };
    let mut out = termcolor::StandardStream::stdout(choice);
    let config = term::Config::default();
    for (file, diagnostics) in checked {
        let source = SimpleFile::new(file.path.display().to_string(), file.text.as_str());
        for d in diagnostics {
            let rendered = Rendered::error()
                .with_code(d.code)
                .with_message(&d.message)
                .with_labels(vec![Label::primary((), d.range)]);
            if term::emit_to_write_style(&mut out, &config, &source, &rendered).is_err() {
                return;
            }
        }
    }
    let files = checked.len();
    let _ = writeln!(
        out,
        "{files} file{} checked: {errors} error{}",
        if files == 1 { "" } else { "s" },
        if errors == 1 { "" } else { "s" }
    );
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: String,
    code: &'a str,
    severity: Severity,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
}

pub(crate) fn print_json(checked: &[(SourceFile, Vec<Diagnostic>)]) {
    let mut all = Vec::new();
    for (file, diagnostics) in checked {
        for d in diagnostics {
            let (line, column) = file.line_col(d.range.start());
            let (end_line, end_column) = file.line_col(d.range.end());
            all.push(JsonDiagnostic {
                file: file.path.display().to_string(),
                code: d.code,
                severity: d.severity,
                line,
                column,
                end_line,
                end_column,
                message: &d.message,
            });
        }
    }
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer_pretty(&mut out, &all);
    let _ = writeln!(out);
}

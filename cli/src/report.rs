//! Printing diagnostics: with source snippets for people (codespan-reporting), as JSON with
//! 1-based lines and columns (columns count characters), as SARIF 2.1.0, or as GitHub
//! workflow annotations.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use codespan_reporting::diagnostic::{Diagnostic as Rendered, Label, Severity as Level};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor};
use serde::Serialize;
use serde_sarif::sarif;
use wsp_analysis::{Applicability, Code, Diagnostic, Severity};
use wsp_syntax::{LineIndex, TextSize};

/// One file's text and diagnostics.
pub(crate) struct Checked {
    pub path: PathBuf,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
}

struct Positions {
    index: LineIndex,
}

impl Positions {
    fn new(text: &str) -> Positions {
        Positions {
            index: LineIndex::new(text),
        }
    }

    fn at(&self, offset: TextSize) -> (u32, u32) {
        wsp_syntax::line_col(&self.index, offset)
    }
}

/// Where diagnostics go: `wsp check`'s are its output; `wsp run`'s go to standard error, since
/// standard output is the program's own (`print`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    /// Colours on a terminal, unless NO_COLOR is set.
    pub(crate) fn buffered(self) -> termcolor::BufferedStandardStream {
        let terminal = match self {
            Stream::Stdout => std::io::stdout().is_terminal(),
            Stream::Stderr => std::io::stderr().is_terminal(),
        };
        let choice = if terminal && std::env::var_os("NO_COLOR").is_none() {
            termcolor::ColorChoice::Auto
        } else {
            termcolor::ColorChoice::Never
        };
        // Buffered: a file of many diagnostics is written in few system calls.
        match self {
            Stream::Stdout => termcolor::BufferedStandardStream::stdout(choice),
            Stream::Stderr => termcolor::BufferedStandardStream::stderr(choice),
        }
    }

    fn write_json(self, value: &impl Serialize) {
        fn to(mut out: impl Write, value: &impl Serialize) {
            let _ = serde_json::to_writer_pretty(&mut out, value);
            let _ = writeln!(out);
        }
        match self {
            Stream::Stdout => to(std::io::stdout().lock(), value),
            Stream::Stderr => to(std::io::stderr().lock(), value),
        }
    }
}

/// A diagnostic of a run (WSP601, WSP602) in the run's file, in the shape of a check
/// diagnostic, so that every format shows it as one.
pub(crate) struct RunDiagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    /// Byte ranges in the file: whether primary, and the label.
    pub labels: Vec<(std::ops::Range<usize>, bool, String)>,
    pub notes: Vec<String>,
}

impl RunDiagnostic {
    /// A check diagnostic of the run's file, with its fix as a note.
    pub(crate) fn from_check(d: &Diagnostic) -> RunDiagnostic {
        let range = |r: wsp_syntax::TextRange| usize::from(r.start())..usize::from(r.end());
        let mut labels = vec![(range(d.range), true, String::new())];
        labels.extend(d.related.iter().map(|(r, m)| (range(*r), false, m.clone())));
        RunDiagnostic {
            code: d.code.as_str(),
            severity: d.severity,
            message: d.message.clone(),
            labels,
            notes: d.fix.iter().map(fix_note).collect(),
        }
    }
}

fn fix_note(fix: &wsp_analysis::FileFix) -> String {
    match fix.applicability {
        Applicability::MachineApplicable => format!("fix: {}", fix.title),
        Applicability::MaybeIncorrect => format!("help: {} (a guess from spelling)", fix.title),
    }
}

/// Run diagnostics on standard error, as `format` says.
pub(crate) fn print_run(
    format: RunFormat,
    path: &std::path::Path,
    text: &str,
    ds: &[RunDiagnostic],
) {
    let ranged = |r: &std::ops::Range<usize>| {
        let end = r.end.min(text.len());
        wsp_syntax::TextRange::new(
            TextSize::from(r.start.min(end) as u32),
            TextSize::from(end as u32),
        )
    };
    match format {
        RunFormat::Human => {
            let source = SimpleFile::new(path.display().to_string(), text);
            let mut out = Stream::Stderr.buffered();
            for d in ds {
                let labels = d
                    .labels
                    .iter()
                    .map(|(r, primary, label)| {
                        let l = if *primary {
                            Label::primary((), ranged(r))
                        } else {
                            Label::secondary((), ranged(r))
                        };
                        l.with_message(label)
                    })
                    .collect();
                let level = match d.severity {
                    Severity::Error => Level::Error,
                    Severity::Warning => Level::Warning,
                };
                let rendered = Rendered::new(level)
                    .with_code(d.code)
                    .with_message(&d.message)
                    .with_labels(labels)
                    .with_notes(d.notes.clone());
                let _ = term::emit_to_write_style(
                    &mut out,
                    &term::Config::default(),
                    &source,
                    &rendered,
                );
            }
            let _ = out.flush();
        }
        RunFormat::Json => {
            let pos = Positions::new(text);
            let file = path.display().to_string();
            let all: Vec<JsonDiagnostic> = ds
                .iter()
                .map(|d| {
                    // The primary label (the first one if none is); the others are related.
                    let first = d.labels.iter().position(|l| l.1).unwrap_or(0);
                    let primary = d
                        .labels
                        .get(first)
                        .map_or(ranged(&(0..0)), |l| ranged(&l.0));
                    let related = d
                        .labels
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != first)
                        .map(|(_, (r, _, m))| (ranged(r), m.as_str()));
                    json_diagnostic(
                        &pos,
                        &file,
                        d.code,
                        d.severity.as_str(),
                        primary,
                        &d.message,
                        related,
                    )
                })
                .collect();
            Stream::Stderr.write_json(&all);
        }
    }
}

/// How `wsp run` prints its diagnostics (check, build and run-time ones), on standard error.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum RunFormat {
    /// Source snippets with the offending text underlined.
    Human,
    /// One JSON array of diagnostics, as `wsp check --format json` writes.
    Json,
}

/// `wsp run`'s and `wsp emit`'s check diagnostics of their one file, on standard error.
pub(crate) fn print_human_to_stderr(checked: Checked) {
    let mut out = Stream::Stderr.buffered();
    print_human(&[checked], 0, &mut out, false);
    let _ = out.flush();
}

/// The diagnostics with source snippets, then (unless `quiet`) the count of files, errors and
/// warnings.
pub(crate) fn print_human(
    checked: &[Checked],
    unreadable: usize,
    out: &mut dyn termcolor::WriteColor,
    quiet: bool,
) {
    let config = term::Config::default();
    let (mut errors, mut warnings) = (0, 0);
    for file in checked {
        let source = SimpleFile::new(file.path.display().to_string(), file.text.as_str());
        for d in &file.diagnostics {
            match d.severity {
                Severity::Error => errors += 1,
                Severity::Warning => warnings += 1,
            }
        }
        let (shown, hidden) = wsp_analysis::shown(&file.diagnostics);
        for d in shown {
            let level = match d.severity {
                Severity::Error => Level::Error,
                Severity::Warning => Level::Warning,
            };
            let mut labels = vec![Label::primary((), d.range)];
            labels.extend(
                d.related
                    .iter()
                    .map(|(range, message)| Label::secondary((), *range).with_message(message)),
            );
            let notes: Vec<String> = d.fix.iter().map(fix_note).collect();
            let rendered = Rendered::new(level)
                .with_code(d.code.as_str())
                .with_message(&d.message)
                .with_labels(labels)
                .with_notes(notes);
            if term::emit_to_write_style(out, &config, &source, &rendered).is_err() {
                return;
            }
        }
        if hidden > 0 {
            let note = Rendered::note().with_message(not_shown(file, hidden));
            if term::emit_to_write_style(out, &config, &source, &note).is_err() {
                return;
            }
        }
    }
    if quiet {
        return;
    }
    let files = checked.len();
    // A path that could not be read was said on stderr; the count must not read as clean.
    let unread = if unreadable > 0 {
        format!(
            " ({unreadable} path{} could not be read)",
            plural(unreadable)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{files} file{} checked{unread}: {errors} error{}, {warnings} warning{}",
        plural(files),
        plural(errors),
        plural(warnings)
    );
}

/// How many reported diagnostics each code has, most first (ties by code): `COUNT  CODE
/// title` lines, or with `--format json` an array of `{"code", "count", "title"}`.
pub(crate) fn print_statistics(
    checked: &[Checked],
    format: crate::Format,
    out: &mut dyn termcolor::WriteColor,
) {
    let mut counts: Vec<(Code, usize)> = Vec::new();
    for d in checked.iter().flat_map(|c| &c.diagnostics) {
        match counts.iter_mut().find(|(c, _)| *c == d.code) {
            Some((_, n)) => *n += 1,
            None => counts.push((d.code, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.as_str().cmp(b.0.as_str())));
    if let crate::Format::Json = format {
        let all: Vec<serde_json::Value> = counts
            .iter()
            .map(|(c, n)| serde_json::json!({"code": c.as_str(), "count": n, "title": c.title()}))
            .collect();
        let _ = serde_json::to_writer_pretty(&mut *out, &all);
        let _ = writeln!(out);
        return;
    }
    let width = counts.first().map_or(1, |(_, n)| n.to_string().len());
    for (code, n) in &counts {
        let _ = writeln!(out, "{n:>width$}  {}  {}", code.as_str(), code.title());
    }
}

fn not_shown(file: &Checked, hidden: usize) -> String {
    wsp_analysis::not_shown(hidden, &file.path.display().to_string())
}

/// The diagnostics of a file for the machine-readable formats, with the note of those left out
/// on standard error.
fn shown_noted(file: &Checked) -> &[Diagnostic] {
    let (shown, hidden) = wsp_analysis::shown(&file.diagnostics);
    if hidden > 0 {
        eprintln!("note: {}", not_shown(file, hidden));
    }
    shown
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    file: String,
    code: &'a str,
    severity: &'a str,
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
    /// The notes at other places of the same file, as SARIF's related locations.
    related: Vec<JsonRelated<'a>>,
    /// Its fix, if it has one (docs/wsp-check.schema.json).
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    /// `safe` keeps the meaning the text evidently has (`--fix` applies it); `unsafe` is a
    /// guess from spelling (only `--unsafe-fixes` applies it).
    applicability: &'static str,
    /// Replace each range with its content; ranges do not overlap.
    edits: Vec<JsonEdit<'a>>,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    content: &'a str,
}

fn json_fix<'a>(pos: &Positions, fix: &'a wsp_analysis::FileFix) -> JsonFix<'a> {
    JsonFix {
        title: &fix.title,
        applicability: match fix.applicability {
            Applicability::MachineApplicable => "safe",
            Applicability::MaybeIncorrect => "unsafe",
        },
        edits: fix
            .edits
            .iter()
            .map(|(r, content)| {
                let (line, column) = pos.at(r.start());
                let (end_line, end_column) = pos.at(r.end());
                JsonEdit {
                    line,
                    column,
                    end_line,
                    end_column,
                    content,
                }
            })
            .collect(),
    }
}

#[derive(Serialize)]
struct JsonRelated<'a> {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
    message: &'a str,
}

fn json_diagnostic<'a>(
    pos: &Positions,
    file: &str,
    code: &'a str,
    severity: &'a str,
    range: wsp_syntax::TextRange,
    message: &'a str,
    related: impl Iterator<Item = (wsp_syntax::TextRange, &'a str)>,
) -> JsonDiagnostic<'a> {
    let (line, column) = pos.at(range.start());
    let (end_line, end_column) = pos.at(range.end());
    JsonDiagnostic {
        file: file.to_string(),
        code,
        severity,
        line,
        column,
        end_line,
        end_column,
        message,
        related: related
            .map(|(r, message)| {
                let (line, column) = pos.at(r.start());
                let (end_line, end_column) = pos.at(r.end());
                JsonRelated {
                    line,
                    column,
                    end_line,
                    end_column,
                    message,
                }
            })
            .collect(),
        fix: None,
    }
}

pub(crate) fn print_json(checked: &[Checked], out: &mut dyn Write) {
    let mut all = Vec::new();
    for file in checked {
        let pos = Positions::new(&file.text);
        let path = file.path.display().to_string();
        for d in shown_noted(file) {
            let mut shown = json_diagnostic(
                &pos,
                &path,
                d.code.as_str(),
                d.severity.as_str(),
                d.range,
                &d.message,
                d.related.iter().map(|(r, m)| (*r, m.as_str())),
            );
            shown.fix = d.fix.as_ref().map(|f| json_fix(&pos, f));
            all.push(shown);
        }
    }
    let _ = serde_json::to_writer_pretty(&mut *out, &all);
    let _ = writeln!(out);
}

/// `::error file=F,line=L,col=C,endLine=L2,endColumn=C2,title=WSP201::message`
pub(crate) fn print_github(checked: &[Checked], out: &mut dyn Write) {
    for file in checked {
        let pos = Positions::new(&file.text);
        for d in shown_noted(file) {
            let (line, col) = pos.at(d.range.start());
            let (end_line, end_col) = pos.at(d.range.end());
            let _ = writeln!(
                out,
                "::{} file={},line={line},col={col},endLine={end_line},endColumn={end_col},title={}::{}",
                d.severity.as_str(),
                escape_property(&file.path.display().to_string()),
                d.code.as_str(),
                escape_data(&d.message)
            );
        }
    }
}

/// GitHub's workflow-command escaping of a message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// ... and of a property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn sarif_region(pos: &Positions, range: wsp_syntax::TextRange) -> sarif::Region {
    let (start_line, start_column) = pos.at(range.start());
    let (end_line, end_column) = pos.at(range.end());
    sarif::Region::builder()
        .start_line(start_line as i64)
        .start_column(start_column as i64)
        .end_line(end_line as i64)
        .end_column(end_column as i64)
        .build()
}

fn sarif_location(uri: &str, region: sarif::Region, message: Option<&str>) -> sarif::Location {
    let physical = sarif::PhysicalLocation::builder()
        .artifact_location(sarif::ArtifactLocation::builder().uri(uri).build())
        .region(region)
        .build();
    match message {
        Some(m) => sarif::Location::builder()
            .physical_location(physical)
            .message(sarif::Message::builder().text(m).build())
            .build(),
        None => sarif::Location::builder()
            .physical_location(physical)
            .build(),
    }
}

pub(crate) fn print_sarif(checked: &[Checked], out: &mut dyn Write) {
    let rules: Vec<sarif::ReportingDescriptor> = Code::ALL
        .iter()
        .map(|c| {
            sarif::ReportingDescriptor::builder()
                .id(c.as_str())
                .short_description(
                    sarif::MultiformatMessageString::builder()
                        .text(c.title())
                        .build(),
                )
                .help(
                    sarif::MultiformatMessageString::builder()
                        .text(format!(
                            "See docs/diagnostics/{}.md in the WSP toolkit.",
                            c.as_str()
                        ))
                        .build(),
                )
                .build()
        })
        .collect();
    let mut results = Vec::new();
    for file in checked {
        let pos = Positions::new(&file.text);
        let uri = file.path.display().to_string().replace('\\', "/");
        for d in shown_noted(file) {
            let level = match d.severity {
                Severity::Error => sarif::ResultLevel::Error,
                Severity::Warning => sarif::ResultLevel::Warning,
            };
            let related: Vec<sarif::Location> = d
                .related
                .iter()
                .map(|(r, m)| sarif_location(&uri, sarif_region(&pos, *r), Some(m)))
                .collect();
            // Every fix, its applicability in its properties (`safe` or `unsafe`); a guess says
            // so in its description too, since SARIF consumers may apply fixes unasked.
            let fixes: Vec<sarif::Fix> = d
                .fix
                .iter()
                .map(|f| {
                    let replacements: Vec<sarif::Replacement> = f
                        .edits
                        .iter()
                        .map(|(r, text)| {
                            sarif::Replacement::builder()
                                .deleted_region(sarif_region(&pos, *r))
                                .inserted_content(
                                    sarif::ArtifactContent::builder()
                                        .text(text.as_str())
                                        .build(),
                                )
                                .build()
                        })
                        .collect();
                    let (applicability, description) = match f.applicability {
                        Applicability::MachineApplicable => ("safe", f.title.clone()),
                        Applicability::MaybeIncorrect => (
                            "unsafe",
                            format!(
                                "{} (a guess from spelling: review before applying)",
                                f.title
                            ),
                        ),
                    };
                    let properties = sarif::PropertyBag::builder()
                        .additional_properties(std::collections::BTreeMap::from([(
                            "applicability".to_string(),
                            serde_json::Value::from(applicability),
                        )]))
                        .build();
                    sarif::Fix::builder()
                        .description(sarif::Message::builder().text(description).build())
                        .properties(properties)
                        .artifact_changes(vec![
                            sarif::ArtifactChange::builder()
                                .artifact_location(
                                    sarif::ArtifactLocation::builder().uri(uri.as_str()).build(),
                                )
                                .replacements(replacements)
                                .build(),
                        ])
                        .build()
                })
                .collect();
            let result = sarif::Result::builder()
                .rule_id(d.code.as_str())
                .level(level)
                .message(sarif::Message::builder().text(d.message.as_str()).build())
                .locations(vec![sarif_location(
                    &uri,
                    sarif_region(&pos, d.range),
                    None,
                )])
                .related_locations(related)
                .fixes(fixes)
                .build();
            results.push(result);
        }
    }
    let driver = sarif::ToolComponent::builder()
        .name("wsp")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = sarif::Run::builder()
        .tool(sarif::Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let log = sarif::Sarif::builder()
        .version(serde_json::to_value(sarif::Version::V2_1_0).unwrap_or_default())
        .schema(sarif::SCHEMA_URL)
        .runs(vec![run])
        .build();
    let _ = serde_json::to_writer_pretty(&mut *out, &log);
    let _ = writeln!(out);
}

//! Between the analyzer's byte offsets and the protocol's UTF-16 line/character positions, and
//! from the analyzer's diagnostics to the protocol's.

use std::path::Path;

use tower_lsp_server::ls_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag,
    Location, NumberOrString, Position, Range, TextDocumentContentChangeEvent, Uri,
};
use wsp_analysis::{Code, Severity};
use wsp_syntax::{LineIndex, TextRange, TextSize, WideEncoding, WideLineCol};

/// A text's lines, for converting positions.
pub struct Lines<'a> {
    text: &'a str,
    index: LineIndex,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Lines<'a> {
        Lines {
            text,
            index: LineIndex::new(text),
        }
    }

    /// The byte offset of a position. Past the end of its line it is the line's end (before
    /// its line break), past the last line the text's end, and inside a character (between
    /// the halves of a surrogate pair) that character's start.
    pub fn offset(&self, p: Position) -> TextSize {
        let Some(line) = self.index.line(p.line) else {
            return self.index.len();
        };
        let body = self.text[line].trim_end_matches(['\n', '\r']);
        let end = usize::from(line.start()) + body.len();
        let wide = WideLineCol {
            line: p.line,
            col: p.character,
        };
        let mut at = self
            .index
            .to_utf8(WideEncoding::Utf16, wide)
            .and_then(|lc| self.index.offset(lc))
            .map_or(end, |o| usize::from(o).min(end));
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        TextSize::from(at as u32)
    }

    pub fn position(&self, offset: TextSize) -> Position {
        let lc = self.index.line_col(offset.min(self.index.len()));
        let col = self
            .index
            .to_wide(WideEncoding::Utf16, lc)
            .map_or(lc.col, |w| w.col);
        Position::new(lc.line, col)
    }

    pub fn range(&self, r: TextRange) -> Range {
        Range::new(self.position(r.start()), self.position(r.end()))
    }
}

/// The byte range of `text` that a change of an incremental sync replaces; `None` for a change
/// that replaces the whole text.
pub fn change_range(text: &str, change: &TextDocumentContentChangeEvent) -> Option<TextRange> {
    let range = change.range?;
    let lines = Lines::new(text);
    let start = lines.offset(range.start);
    Some(TextRange::new(start, lines.offset(range.end).max(start)))
}

/// The page that documents a diagnostic code.
fn docs_page(code: Code) -> Option<Uri> {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()?
        .join("docs/diagnostics");
    Uri::from_file_path(docs.join(format!("{}.md", code.as_str())))
}

/// A file's diagnostics as the editor gets them: the first `SHOWN_PER_FILE`, then one
/// information at the first of the rest saying how many are not shown.
pub fn diagnostics(all: &[wsp_analysis::Diagnostic], lines: &Lines, uri: &Uri) -> Vec<Diagnostic> {
    let (shown, hidden) = wsp_analysis::shown(all);
    let mut out: Vec<Diagnostic> = shown.iter().map(|d| diagnostic(d, lines, uri)).collect();
    if let Some(first_hidden) = all.get(shown.len()) {
        out.push(Diagnostic {
            range: lines.range(first_hidden.range),
            severity: Some(DiagnosticSeverity::INFORMATION),
            source: Some("wsp".into()),
            message: wsp_analysis::not_shown(hidden, "this file"),
            ..Diagnostic::default()
        });
    }
    out
}

pub fn diagnostic(d: &wsp_analysis::Diagnostic, lines: &Lines, uri: &Uri) -> Diagnostic {
    Diagnostic {
        range: lines.range(d.range),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.as_str().into())),
        code_description: docs_page(d.code).map(|href| CodeDescription { href }),
        source: Some("wsp".into()),
        message: d.message.clone(),
        related_information: (!d.related.is_empty()).then(|| {
            d.related
                .iter()
                .map(|(r, message)| DiagnosticRelatedInformation {
                    location: Location::new(uri.clone(), lines.range(*r)),
                    message: message.clone(),
                })
                .collect()
        }),
        tags: (d.code == Code::Deprecated).then(|| vec![DiagnosticTag::DEPRECATED]),
        data: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.into(),
        }
    }

    #[test]
    fn positions_count_utf16_units_and_clamp() {
        // "😀" is 4 bytes and 2 UTF-16 units; "é" 2 bytes and 1 unit.
        let text = "a😀é = 1\nx\n";
        let lines = Lines::new(text);
        assert_eq!(lines.offset(Position::new(0, 3)), TextSize::from(5));
        assert_eq!(lines.offset(Position::new(0, 4)), TextSize::from(7));
        assert_eq!(lines.position(TextSize::from(7)), Position::new(0, 4));
        // Past a line's end: its end (before the newline); past the last line: the text's end.
        assert_eq!(lines.offset(Position::new(1, 99)), TextSize::from(13));
        assert_eq!(lines.offset(Position::new(9, 0)), TextSize::from(14));
        assert_eq!(lines.position(TextSize::from(99)), Position::new(2, 0));
    }

    /// What the server does with a change (there through `File::apply_edit`).
    fn apply(text: &mut String, change: TextDocumentContentChangeEvent) {
        match change_range(text, &change) {
            Some(r) => text.replace_range(std::ops::Range::<usize>::from(r), &change.text),
            None => *text = change.text,
        }
    }

    #[test]
    fn changes_apply_in_order_and_never_split_a_character() {
        let mut text = "a😀é\nb".to_string();
        apply(&mut text, change(0, 3, 0, 4, "e"));
        assert_eq!(text, "a😀e\nb");
        apply(&mut text, change(1, 0, 1, 1, "c\nd"));
        assert_eq!(text, "a😀e\nc\nd");
        // Inside the surrogate pair of 😀, and a range given backwards: still on boundaries.
        apply(&mut text, change(0, 2, 0, 1, "!"));
        assert_eq!(text, "a!😀e\nc\nd");
        apply(
            &mut text,
            TextDocumentContentChangeEvent {
                range: None,
                range_length: None,
                text: "new".into(),
            },
        );
        assert_eq!(text, "new");
    }
}

//! Layout: Python's logical lines. Turns raw tokens into the parser's input by deciding which line
//! breaks end a logical line (`NEWLINE`) and which are trivia (`NL`: inside brackets, blank lines),
//! and by synthesizing zero-width `INDENT`/`DEDENT` tokens from an indentation stack.
//!
//! Recovery goes beyond Python, for a bracket that is never closed (no closing bracket of its
//! kind matches it; Python's tokenizer matches brackets the same way): inside it, a line indented
//! no deeper than the line that opened the bracket ends the bracketed line when it starts with a
//! keyword that only a statement can start (`def`, `@`, `return`, ...) or with an assignment
//! `NAME =`; so does the line break after a compound statement's header that ends with `:`. A
//! missing `)` then costs one statement, not the rest of the file. Brackets that are closed are
//! laid out exactly as Python does, so a correct file never meets this recovery (a keyword
//! argument flush with its call's first line, `f(\nx=1)`, stays an argument).

use rowan::{TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::{self, *};
use crate::lexer::RawToken;

/// Max brackets open at once, as CPython's tokenizer ("too many nested parentheses").
const MAX_BRACKETS: usize = 200;

/// Marks a parser token that has no raw token (INDENT, DEDENT, EOF, a final NEWLINE).
pub(crate) const SYNTHETIC: u32 = u32::MAX;

/// The significant tokens the parser reads.
#[derive(Debug, Default)]
pub(crate) struct Input {
    pub kinds: Vec<SyntaxKind>,
    pub ranges: Vec<TextRange>,
    /// Index of the raw token behind each parser token, or `SYNTHETIC`.
    pub raw: Vec<u32>,
}

impl Input {
    fn push(&mut self, kind: SyntaxKind, range: TextRange, raw: u32) {
        self.kinds.push(kind);
        self.ranges.push(range);
        self.raw.push(raw);
    }

    /// The raw token where a run of statements from parser token `token` starts: its own,
    /// as trivia before it ends the run before; 0 for the first, `raw_len` past the end.
    pub(crate) fn raw_at(&self, token: usize, raw_len: usize) -> usize {
        match self.raw.get(token) {
            Some(&r) if token > 0 => r as usize,
            Some(_) => 0,
            None => raw_len,
        }
    }

    /// The parser token of a top-level statement that starts at `offset`, at the start of a
    /// line, after a logical line's end: where the layout is back at the top level, with no
    /// bracket open. Offset 0 is the start of the file. The file's first token after leading
    /// trivia is none: a run from it would take that trivia in (`raw_at`).
    pub(crate) fn statement_at(&self, text: &str, offset: TextSize) -> Option<usize> {
        if offset == TextSize::from(0) {
            return Some(0);
        }
        let first = self.ranges.partition_point(|r| r.start() < offset);
        // Dedents at the offset close the blocks before it.
        let i = (first..self.kinds.len()).find(|&i| self.raw[i] != SYNTHETIC)?;
        let at = usize::from(offset);
        (i > 0
            && self.ranges[i].start() == offset
            && matches!(self.kinds[i - 1], NEWLINE | DEDENT)
            && text.as_bytes().get(at - 1) == Some(&b'\n'))
        .then_some(i)
    }

    /// Where the file may be cut into runs of top-level statements of at least `min_bytes`
    /// each, that parse alone to what they parse to in the file: the index of a token that
    /// starts a line at column 0 after a logical line's end, so no block, bracket or string is
    /// open. Not before a clause that continues a statement (`else`, `except`, ...), nor after
    /// a decorator's line, which belongs to the `def` or `class` below it.
    pub(crate) fn statement_cuts(&self, text: &str, min_bytes: usize) -> Vec<usize> {
        let mut cuts = Vec::new();
        let mut last_cut_at = 0usize;
        let mut line_first = EOF;
        for i in 1..self.kinds.len() {
            let kind = self.kinds[i];
            let before = self.kinds[i - 1];
            if self.raw[i] == SYNTHETIC || !matches!(before, NEWLINE | INDENT | DEDENT) {
                continue;
            }
            let start = usize::from(self.ranges[i].start());
            let cut = before != INDENT
                && start >= last_cut_at + min_bytes
                && text.as_bytes()[start - 1] == b'\n'
                && line_first != AT
                && !matches!(kind, ELSE_KW | ELIF_KW | EXCEPT_KW | FINALLY_KW);
            if cut {
                cuts.push(i);
                last_cut_at = start;
            }
            line_first = kind;
        }
        cuts
    }
}

/// One level of the indentation stack. `real: false` is a level entered by an inconsistent dedent:
/// it is kept so later lines at that column are not "unexpected indents", but it owns no token.
struct Level {
    width: u32,
    real: bool,
}

/// Python's rule: a tab advances to the next multiple of 8, a form feed resets the column.
fn indent_width(whitespace: &str, start: u32) -> u32 {
    whitespace.chars().fold(start, |col, c| match c {
        '\t' => (col / 8 + 1) * 8,
        '\x0C' => 0,
        '\u{FEFF}' => col,
        _ => col + 1,
    })
}

fn starts_statement_only(kind: SyntaxKind) -> bool {
    matches!(
        kind,
        DEF_KW
            | CLASS_KW
            | AT
            | RETURN_KW
            | PASS_KW
            | IMPORT_KW
            | WITH_KW
            | WHILE_KW
            | TRY_KW
            | EXCEPT_KW
            | FINALLY_KW
            | ELIF_KW
            | RAISE_KW
            | DEL_KW
            | GLOBAL_KW
            | NONLOCAL_KW
            | ASSERT_KW
            | BREAK_KW
            | CONTINUE_KW
    )
}

pub(crate) fn layout(text: &str, raw: &mut [RawToken], errors: &mut Vec<SyntaxError>) -> Input {
    let mut input = Input::default();
    let mut levels = vec![Level {
        width: 0,
        real: true,
    }];
    let unclosed = unclosed_brackets(raw);
    // Raw indices of the brackets open now, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut open_line_indent = 0u32;
    let mut line_indent = 0u32;
    let mut physical_line_start = true;
    let mut logical_line_start = true;
    let mut last_newline: Option<usize> = None;
    let mut compound_header = false;
    let mut last_kind = EOF;

    for i in 0..raw.len() {
        let RawToken { kind, range } = raw[i];
        match kind {
            WHITESPACE => {
                if physical_line_start {
                    line_indent = indent_width(&text[range], line_indent);
                }
                continue;
            }
            COMMENT => continue,
            LINE_CONTINUATION => {
                physical_line_start = false;
                continue;
            }
            NEWLINE => {
                if open.is_empty() && !logical_line_start {
                    input.push(NEWLINE, range, i as u32);
                    logical_line_start = true;
                } else {
                    raw[i].kind = NL;
                }
                physical_line_start = true;
                line_indent = 0;
                last_newline = Some(i);
                continue;
            }
            _ => {}
        }

        // Inside a bracket that is never closed, a compound statement's header that ends its
        // line with `:` ends the bracketed line.
        let in_unclosed = open.last().is_some_and(|&b| unclosed[b]);
        let header_ended =
            in_unclosed && physical_line_start && compound_header && last_kind == COLON;
        // Or a line that starts a statement: one that only a statement can start, at most as
        // deep as the bracket's line, or an assignment `NAME =` no deeper than that line.
        let statement_ahead = in_unclosed
            && physical_line_start
            && (starts_statement_only(kind) && line_indent <= open_line_indent
                || kind == NAME
                    && line_indent <= open_line_indent
                    && next_significant(raw, i) == Some(EQ));
        if (header_ended || statement_ahead)
            && let Some(nl) = last_newline
        {
            open.clear();
            raw[nl].kind = NEWLINE;
            input.push(NEWLINE, raw[nl].range, nl as u32);
            logical_line_start = true;
        }

        if logical_line_start {
            compound_header = matches!(
                kind,
                DEF_KW
                    | CLASS_KW
                    | FOR_KW
                    | WITH_KW
                    | IF_KW
                    | ELIF_KW
                    | WHILE_KW
                    | EXCEPT_KW
                    | ASYNC_KW
                    | AT
            );
            let at = TextRange::empty(range.start());
            let top = levels.last().map_or(0, |l| l.width);
            if line_indent > top {
                levels.push(Level {
                    width: line_indent,
                    real: true,
                });
                input.push(INDENT, at, SYNTHETIC);
            } else if line_indent < top {
                while levels.len() > 1 && line_indent < levels.last().map_or(0, |l| l.width) {
                    if levels.pop().is_some_and(|l| l.real) {
                        input.push(DEDENT, at, SYNTHETIC);
                    }
                }
                if line_indent != levels.last().map_or(0, |l| l.width) {
                    errors.push(SyntaxError::new(
                        "unindent does not match any outer indentation level".to_string(),
                        TextRange::new(text_line_start(text, range.start()), range.start()),
                    ));
                    levels.push(Level {
                        width: line_indent,
                        real: false,
                    });
                }
            }
            logical_line_start = false;
        }
        physical_line_start = false;

        input.push(kind, range, i as u32);
        last_kind = kind;
        match kind {
            L_PAREN | L_BRACK | L_CURLY => {
                if open.len() == MAX_BRACKETS {
                    errors.push(SyntaxError::new(
                        format!("too many nested parentheses (the limit is {MAX_BRACKETS})"),
                        range,
                    ));
                }
                if open.is_empty() {
                    open_line_indent = levels.last().map_or(0, |l| l.width);
                }
                open.push(i);
            }
            R_PAREN | R_BRACK | R_CURLY => {
                close_bracket(&mut open, raw, kind);
            }
            _ => {}
        }
    }

    let end = TextRange::empty(TextSize::of(text));
    if !logical_line_start {
        input.push(NEWLINE, end, SYNTHETIC);
    }
    for level in levels.drain(1..).rev() {
        if level.real {
            input.push(DEDENT, end, SYNTHETIC);
        }
    }
    input.push(EOF, end, SYNTHETIC);
    input
}

/// Closes the innermost open bracket of `closer`'s kind, and every bracket opened inside it
/// (those are never closed); a closer with no opener of its kind is stray and closes nothing.
/// `open` holds raw indices of opening brackets, innermost last. Python's tokenizer matches
/// brackets the same way, so on a correct file this is plain nesting.
fn close_bracket(
    open: &mut Vec<usize>,
    raw: &[RawToken],
    closer: SyntaxKind,
) -> Option<Vec<usize>> {
    let opener = match closer {
        R_PAREN => L_PAREN,
        R_BRACK => L_BRACK,
        _ => L_CURLY,
    };
    let at = open.iter().rposition(|&b| raw[b].kind == opener)?;
    let inner = open.split_off(at + 1);
    open.pop();
    Some(inner)
}

/// Whether the brackets outside the raw tokens `region` match as they would without it: none is
/// open where it starts, and every closing bracket after it matches one after it. Then no
/// bracket of the region is matched from outside, so what lies outside is laid out as before
/// whatever the region holds.
pub(crate) fn brackets_apart(raw: &[RawToken], region: std::ops::Range<usize>) -> bool {
    let mut open: Vec<usize> = Vec::new();
    for (i, t) in raw[..region.start].iter().enumerate() {
        match t.kind {
            L_PAREN | L_BRACK | L_CURLY => open.push(i),
            R_PAREN | R_BRACK | R_CURLY => {
                close_bracket(&mut open, raw, t.kind);
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return false;
    }
    for (i, t) in raw.iter().enumerate().skip(region.end) {
        match t.kind {
            L_PAREN | L_BRACK | L_CURLY => open.push(i),
            R_PAREN | R_BRACK | R_CURLY if close_bracket(&mut open, raw, t.kind).is_none() => {
                return false;
            }
            _ => {}
        }
    }
    true
}

/// For each raw token, whether it is an opening bracket that no closing bracket matches.
fn unclosed_brackets(raw: &[RawToken]) -> Vec<bool> {
    let mut unclosed = vec![false; raw.len()];
    let mut open: Vec<usize> = Vec::new();
    for (i, t) in raw.iter().enumerate() {
        match t.kind {
            L_PAREN | L_BRACK | L_CURLY => open.push(i),
            R_PAREN | R_BRACK | R_CURLY => {
                for inner in close_bracket(&mut open, raw, t.kind).unwrap_or_default() {
                    unclosed[inner] = true;
                }
            }
            _ => {}
        }
    }
    for i in open {
        unclosed[i] = true;
    }
    unclosed
}

/// The kind of the first non-trivia raw token after `i`.
fn next_significant(raw: &[RawToken], i: usize) -> Option<SyntaxKind> {
    raw[i + 1..]
        .iter()
        .map(|t| t.kind)
        .find(|k| !matches!(k, WHITESPACE | COMMENT | LINE_CONTINUATION | NEWLINE))
}

fn text_line_start(text: &str, offset: TextSize) -> TextSize {
    let before = &text[..usize::from(offset)];
    TextSize::from(before.rfind(['\n', '\r']).map_or(0, |i| i + 1) as u32)
}

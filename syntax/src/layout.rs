//! Layout: Python's logical lines. Turns raw tokens into the parser's input by deciding which line
//! breaks end a logical line (`NEWLINE`) and which are trivia (`NL`: inside brackets, blank lines),
//! and by synthesizing zero-width `INDENT`/`DEDENT` tokens from an indentation stack.
//!
//! Recovery goes beyond Python: inside an unclosed bracket, a line indented no deeper than the
//! line that opened the bracket ends the bracketed line when it starts with a keyword that only a
//! statement can start (`def`, `@`, `return`, ...) or with an assignment `NAME =`; so does the
//! line break after a compound statement's header that ends with `:`. A missing `)` then costs
//! one statement, not the rest of the file. The price: a keyword argument written flush with
//! its call's first line (`f(\nx=1)`) reads as an unclosed `(`.

use rowan::{TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::{self, *};
use crate::lexer::RawToken;

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
    let mut depth = 0u32;
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
                if depth == 0 && !logical_line_start {
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

        // A compound statement's header that ends its line with `:` while a bracket is open: the
        // bracket was never closed (`def f(x:` + newline is legal Python, but nobody writes it).
        let header_ended =
            depth > 0 && physical_line_start && compound_header && last_kind == COLON;
        // Or a line that starts a statement: one that only a statement can start, at most as
        // deep as the bracket's line, or an assignment `NAME =` no deeper than that line.
        let statement_ahead = depth > 0
            && physical_line_start
            && (starts_statement_only(kind) && line_indent <= open_line_indent
                || kind == NAME
                    && line_indent <= open_line_indent
                    && next_significant(raw, i) == Some(EQ));
        if (header_ended || statement_ahead)
            && let Some(nl) = last_newline
        {
            depth = 0;
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
                if depth == 0 {
                    open_line_indent = levels.last().map_or(0, |l| l.width);
                }
                depth += 1;
            }
            R_PAREN | R_BRACK | R_CURLY => depth = depth.saturating_sub(1),
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

//! Lexing: text into lossless raw tokens (every byte belongs to exactly one token) plus errors.
//!
//! Logos does the work; this module adds what its rules cannot decide: a leading byte-order mark,
//! and whether a non-ASCII name is a valid Python identifier.

use logos::Logos;
use rowan::{TextRange, TextSize};

use crate::{SyntaxError, SyntaxKind};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawToken {
    pub kind: SyntaxKind,
    pub range: TextRange,
}

pub fn lex(text: &str) -> (Vec<RawToken>, Vec<SyntaxError>) {
    let mut tokens = Vec::with_capacity(text.len() / 3);
    let mut errors = Vec::new();
    let mut start = 0usize;
    if text.starts_with('\u{FEFF}') {
        start = '\u{FEFF}'.len_utf8();
        tokens.push(RawToken {
            kind: SyntaxKind::WHITESPACE,
            range: range(0, start),
        });
    }
    let mut lexer = SyntaxKind::lexer(&text[start..]);
    while let Some(result) = lexer.next() {
        let span = lexer.span();
        let range = range(span.start + start, span.end + start);
        let kind = match result {
            Ok(SyntaxKind::NAME) if !lexer.slice().is_ascii() => {
                match invalid_identifier_char(lexer.slice()) {
                    Some(c) => {
                        errors.push(SyntaxError::new(
                            format!("invalid character `{c}` (U+{:04X}) in name", c as u32),
                            range,
                        ));
                        SyntaxKind::ERROR_TOKEN
                    }
                    None => SyntaxKind::NAME,
                }
            }
            Ok(kind) => kind,
            Err(err) => {
                let message = match err {
                    crate::LexError::UnexpectedCharacter => {
                        let c = lexer.slice().chars().next().unwrap_or('?');
                        if c == '\\' {
                            "unexpected character after line continuation character: `\\` must end its line"
                                .to_string()
                        } else {
                            format!(
                                "invalid character `{}` (U+{:04X})",
                                c.escape_debug(),
                                c as u32
                            )
                        }
                    }
                    other => other.message().to_string(),
                };
                errors.push(SyntaxError::new(message, range));
                // An unterminated string is still a string to the parser, so recovery is natural.
                match err {
                    crate::LexError::UnterminatedString
                    | crate::LexError::UnterminatedTripleString => SyntaxKind::STRING,
                    crate::LexError::InvalidNumber => SyntaxKind::INT_NUMBER,
                    crate::LexError::UnexpectedCharacter => SyntaxKind::ERROR_TOKEN,
                }
            }
        };
        tokens.push(RawToken { kind, range });
    }
    // A line continued past the end of the file: Python's "unexpected EOF while parsing" (it
    // takes a final `\` + CRLF, which its reader turns into a plain line end).
    if let Some(last) = tokens.last()
        && last.kind == SyntaxKind::LINE_CONTINUATION
        && !text.ends_with("\r\n")
    {
        errors.push(SyntaxError::new(
            "unexpected end of file: the line continued by `\\` has no next line".to_string(),
            last.range,
        ));
    }
    (tokens, errors)
}

fn range(start: usize, end: usize) -> TextRange {
    TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
}

/// The first character of `name` that Python would not accept in an identifier.
fn invalid_identifier_char(name: &str) -> Option<char> {
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first == '_' || unicode_ident::is_xid_start(first)) {
        return Some(first);
    }
    chars.find(|&c| !unicode_ident::is_xid_continue(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn check(text: &str, expect: Expect) {
        let (tokens, errors) = lex(text);
        let mut out = String::new();
        for t in tokens {
            out.push_str(&format!("{:?} {:?}\n", t.kind, &text[t.range]));
        }
        for e in errors {
            out.push_str(&format!("error {:?}: {}\n", e.range, e.message));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn numbers() {
        check(
            "1_000 1e-6 .5 3. 0x1F 2j 08 1_",
            expect![[r#"
                INT_NUMBER "1_000"
                WHITESPACE " "
                FLOAT_NUMBER "1e-6"
                WHITESPACE " "
                FLOAT_NUMBER ".5"
                WHITESPACE " "
                FLOAT_NUMBER "3."
                WHITESPACE " "
                INT_NUMBER "0x1F"
                WHITESPACE " "
                IMAG_NUMBER "2j"
                WHITESPACE " "
                INT_NUMBER "08"
                WHITESPACE " "
                INT_NUMBER "1_"
                error 25..27: invalid number literal
                error 28..30: invalid number literal
            "#]],
        );
    }

    #[test]
    fn strings() {
        check(
            "'a' r\"b\\\"\" '''x\n'y''' b'z' 'open\n",
            expect![[r#"
                STRING "'a'"
                WHITESPACE " "
                STRING "r\"b\\\"\""
                WHITESPACE " "
                STRING "'''x\n'y'''"
                WHITESPACE " "
                STRING "b'z'"
                WHITESPACE " "
                STRING "'open"
                NEWLINE "\n"
                error 27..32: unterminated string literal: a quoted string must close on the line it starts (use a triple-quoted string for several lines)
            "#]],
        );
    }

    #[test]
    fn operators_keywords_and_odd_characters() {
        check(
            "def f(x) -> y: x **= 2 // 3 $ \\\n élan ∂",
            expect![[r#"
                DEF_KW "def"
                WHITESPACE " "
                NAME "f"
                L_PAREN "("
                NAME "x"
                R_PAREN ")"
                WHITESPACE " "
                ARROW "->"
                WHITESPACE " "
                NAME "y"
                COLON ":"
                WHITESPACE " "
                NAME "x"
                WHITESPACE " "
                DOUBLE_STAR_EQ "**="
                WHITESPACE " "
                INT_NUMBER "2"
                WHITESPACE " "
                DOUBLE_SLASH "//"
                WHITESPACE " "
                INT_NUMBER "3"
                WHITESPACE " "
                ERROR_TOKEN "$"
                WHITESPACE " "
                LINE_CONTINUATION "\\\n"
                WHITESPACE " "
                NAME "élan"
                WHITESPACE " "
                ERROR_TOKEN "∂"
                error 28..29: invalid character `$` (U+0024)
                error 39..42: invalid character `∂` (U+2202) in name
            "#]],
        );
    }
}

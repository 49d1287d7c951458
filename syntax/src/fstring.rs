//! f-strings as Python 3.11 reads them: one STRING token whose replacement fields (`{expr!r:spec}`)
//! are checked here, after lexing, as CPython's string parser does. Each expression is parsed
//! with our own parser, in parentheses as CPython does, so `f"{a b}"` is the same error as `(a b)`.

use rowan::{TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::*;
use crate::escapes::{self, Literal};

/// Max nesting of replacement fields inside format specs (`f"{x:{y}}"` is the deepest), as
/// CPython's.
const MAX_FIELD_DEPTH: u32 = 2;
/// Max brackets open inside one expression, as CPython's f-string scanner.
const MAX_BRACKETS: usize = 200;
/// What Python's tokenizer skips between tokens.
const WHITESPACE: [char; 5] = [' ', '\t', '\n', '\r', '\x0c'];

/// A piece of an f-string: literal text (escapes and `{{` decoded), or a replacement field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FStringPart {
    Text(String),
    Field(FStringField),
}

/// `{expr=!r:spec}`: the expression's text and where it starts in the token, the `expr=` text
/// to print before the value (`=` fields), the conversion and the format spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FStringField {
    pub expr: String,
    pub expr_offset: usize,
    pub debug: Option<String>,
    pub conversion: Option<char>,
    /// `None` when the spec has fields of its own (`{x:{width}}`).
    pub spec: Option<String>,
}

/// The parts of a valid f-string token (`None` if it does not scan).
pub(crate) fn parts(token: &str) -> Option<Vec<FStringPart>> {
    let lit = Literal::of(token)?;
    let mut errors = Vec::new();
    let mut scanner = Scanner {
        body: lit.body,
        raw: lit.raw,
        base: TextSize::from(0),
        errors: &mut errors,
    };
    let mut out = Vec::new();
    let mut text = String::new();
    let body = lit.body;
    let bytes = body.as_bytes();
    let mut pos = 0;
    let mut run = 0;
    let flush = |text: &mut String, run: usize, end: usize| {
        let raw = &body[run..end];
        if lit.raw {
            text.push_str(raw);
        } else {
            text.push_str(&escapes::unescape(raw));
        }
    };
    while pos < bytes.len() {
        match bytes[pos] {
            b'\\' if !lit.raw => {
                // An escape is decoded with its run; `\{` is a backslash, then a field.
                pos += if matches!(bytes.get(pos + 1), Some(b'{' | b'}')) {
                    1
                } else {
                    escapes::escape(body, pos, false).ok()?
                };
            }
            b'{' | b'}' if bytes.get(pos + 1) == Some(&bytes[pos]) => {
                flush(&mut text, run, pos + 1);
                pos += 2;
                run = pos;
            }
            b'{' => {
                flush(&mut text, run, pos);
                if !text.is_empty() {
                    out.push(FStringPart::Text(std::mem::take(&mut text)));
                }
                pos += 1;
                let start = pos;
                let end = scanner.expression_end(&mut pos).ok()?;
                let expr = body[start..end].to_string();
                let mut debug = None;
                if bytes.get(pos) == Some(&b'=') {
                    pos += 1;
                    while bytes
                        .get(pos)
                        .is_some_and(|c| WHITESPACE.contains(&(*c as char)))
                    {
                        pos += 1;
                    }
                    debug = Some(body[start..pos].to_string());
                }
                let mut conversion = None;
                if bytes.get(pos) == Some(&b'!') {
                    conversion = Some(*bytes.get(pos + 1)? as char);
                    pos += 2;
                }
                let mut spec = Some(String::new());
                if bytes.get(pos) == Some(&b':') {
                    pos += 1;
                    let spec_start = pos;
                    while pos < bytes.len() && bytes[pos] != b'}' {
                        if bytes[pos] == b'{' {
                            spec = None;
                            scanner.literal(&mut pos, 1).ok()?;
                            break;
                        }
                        pos += 1;
                    }
                    if let Some(s) = spec.as_mut() {
                        s.push_str(&body[spec_start..pos]);
                    }
                }
                if bytes.get(pos) != Some(&b'}') {
                    return None;
                }
                pos += 1;
                run = pos;
                out.push(FStringPart::Field(FStringField {
                    expr,
                    expr_offset: lit.body_start + start,
                    debug,
                    conversion,
                    spec,
                }));
            }
            _ => pos = scanner.char_end(pos),
        }
    }
    flush(&mut text, run, bytes.len());
    if !text.is_empty() {
        out.push(FStringPart::Text(text));
    }
    Some(out)
}

/// Checks `lit`, of the token at `at`, if it is an f-string; appends what Python would reject.
pub(crate) fn check(lit: &Literal<'_>, at: TextSize, errors: &mut Vec<SyntaxError>) {
    if !lit.formatted {
        return;
    }
    let mut scanner = Scanner {
        body: lit.body,
        raw: lit.raw,
        base: at + TextSize::from(lit.body_start as u32),
        errors,
    };
    let mut pos = 0;
    // The first error in an f-string is the one Python reports; the rest would be echoes.
    let _ = scanner.literal(&mut pos, 0);
}

struct Scanner<'a, 'e> {
    body: &'a str,
    raw: bool,
    /// Offset of `body` in the file.
    base: TextSize,
    errors: &'e mut Vec<SyntaxError>,
}

/// An error was reported; scanning stops.
struct Reported;

impl Scanner<'_, '_> {
    fn range(&self, start: usize, end: usize) -> TextRange {
        TextRange::new(
            self.base + TextSize::from(start as u32),
            self.base + TextSize::from(end as u32),
        )
    }

    fn error(&mut self, message: &str, start: usize, end: usize) -> Reported {
        let range = self.range(start, end);
        self.errors
            .push(SyntaxError::new(format!("f-string: {message}"), range));
        Reported
    }

    fn char_end(&self, pos: usize) -> usize {
        pos + self.body[pos..].chars().next().map_or(0, char::len_utf8)
    }

    /// Literal text up to the end, or (inside a format spec, `depth > 0`) up to the `}` that
    /// closes the field, which is left at `pos`.
    fn literal(&mut self, pos: &mut usize, depth: u32) -> Result<(), Reported> {
        let bytes = self.body.as_bytes();
        while *pos < bytes.len() {
            match bytes[*pos] {
                // `\N{NAME}` is an escape, not a field; `\{` is a backslash, then a field.
                b'\\' if !self.raw && matches!(bytes.get(*pos + 1), Some(b'{' | b'}')) => {
                    *pos += 1;
                }
                b'\\' if !self.raw => match escapes::escape(self.body, *pos, false) {
                    Ok(len) => *pos += len,
                    Err((message, len)) => {
                        let range = self.range(*pos, *pos + len);
                        self.errors.push(SyntaxError::new(message, range));
                        return Err(Reported);
                    }
                },
                b'{' if depth == 0 && bytes.get(*pos + 1) == Some(&b'{') => *pos += 2,
                b'{' => {
                    *pos += 1;
                    self.field(pos, depth)?;
                }
                b'}' if depth > 0 => return Ok(()),
                b'}' if bytes.get(*pos + 1) == Some(&b'}') => *pos += 2,
                b'}' => return Err(self.error("single '}' is not allowed", *pos, *pos + 1)),
                _ => *pos = self.char_end(*pos),
            }
        }
        Ok(())
    }

    /// A replacement field after its `{`: expression, optional `=`, `!conversion`, `:spec`,
    /// then `}`.
    fn field(&mut self, pos: &mut usize, depth: u32) -> Result<(), Reported> {
        let open = *pos - 1;
        if depth >= MAX_FIELD_DEPTH {
            return Err(self.error("expressions nested too deeply", open, *pos));
        }
        let start = *pos;
        let end = self.expression_end(pos)?;
        let expr = &self.body[start..end];
        let bytes = self.body.as_bytes();
        if expr.trim_matches(WHITESPACE).is_empty() {
            let message = if bytes.get(*pos) == Some(&b'!') {
                "expression required before '!'"
            } else {
                "empty expression not allowed"
            };
            return Err(self.error(message, open, *pos));
        }
        self.parse_expression(expr, start)?;
        // `{x = }`: the text of the expression, the `=` and the spaces around it are printed.
        if bytes.get(*pos) == Some(&b'=') {
            *pos += 1;
            while bytes
                .get(*pos)
                .is_some_and(|c| WHITESPACE.contains(&(*c as char)))
            {
                *pos += 1;
            }
        }
        if bytes.get(*pos) == Some(&b'!') {
            *pos += 1;
            match bytes.get(*pos) {
                Some(b's' | b'r' | b'a') => *pos += 1,
                _ => {
                    let end = self.char_end(*pos).min(bytes.len());
                    return Err(self.error(
                        "invalid conversion character: expected 's', 'r', or 'a'",
                        *pos - 1,
                        end,
                    ));
                }
            }
        }
        if bytes.get(*pos) == Some(&b':') {
            *pos += 1;
            self.literal(pos, depth + 1)?;
        }
        if bytes.get(*pos) == Some(&b'}') {
            *pos += 1;
            return Ok(());
        }
        let end = if *pos < bytes.len() {
            self.char_end(*pos)
        } else {
            *pos
        };
        Err(self.error("expecting '}'", open, end))
    }

    /// Moves `pos` past the expression of a field, to its `=`, `!`, `:` or `}`; the end of
    /// the expression's text.
    fn expression_end(&mut self, pos: &mut usize) -> Result<usize, Reported> {
        let bytes = self.body.as_bytes();
        let mut brackets: Vec<(u8, usize)> = Vec::new();
        while *pos < bytes.len() {
            let c = bytes[*pos];
            match c {
                b'\\' => {
                    return Err(self.error(
                        "expression part cannot include a backslash",
                        *pos,
                        *pos + 1,
                    ));
                }
                b'\'' | b'"' => self.nested_string(pos)?,
                b'#' => {
                    return Err(self.error("expression part cannot include '#'", *pos, *pos + 1));
                }
                b'(' | b'[' | b'{' => {
                    if brackets.len() >= MAX_BRACKETS {
                        return Err(self.error("too many nested parenthesis", *pos, *pos + 1));
                    }
                    brackets.push((c, *pos));
                    *pos += 1;
                }
                b')' | b']' | b'}' if !brackets.is_empty() => {
                    let (opener, _) = brackets.pop().unwrap_or((b'(', 0));
                    let expected = match opener {
                        b'(' => b')',
                        b'[' => b']',
                        _ => b'}',
                    };
                    if c != expected {
                        return Err(self.error(
                            &format!(
                                "closing parenthesis '{}' does not match opening parenthesis '{}'",
                                c as char, opener as char
                            ),
                            *pos,
                            *pos + 1,
                        ));
                    }
                    *pos += 1;
                }
                b')' | b']' => {
                    return Err(self.error(&format!("unmatched '{}'", c as char), *pos, *pos + 1));
                }
                b'}' => return Ok(*pos),
                b'!' | b':' if brackets.is_empty() && bytes.get(*pos + 1) != Some(&b'=') => {
                    return Ok(*pos);
                }
                // `a:=b` is a format spec `=b` at the top level, as in CPython.
                b':' if brackets.is_empty() => return Ok(*pos),
                b'=' | b'!' | b'<' | b'>' if bytes.get(*pos + 1) == Some(&b'=') => *pos += 2,
                b'=' if brackets.is_empty() => return Ok(*pos),
                _ => *pos = self.char_end(*pos),
            }
        }
        if let Some(&(_, at)) = brackets.last() {
            return Err(self.error("expecting '}'", at, at + 1));
        }
        Err(self.error("expecting '}'", *pos, *pos))
    }

    /// Skips a string inside an expression (`f"{d['k']}"`); its quote cannot be the f-string's.
    fn nested_string(&mut self, pos: &mut usize) -> Result<(), Reported> {
        let bytes = self.body.as_bytes();
        let q = bytes[*pos];
        let start = *pos;
        let triple = bytes.get(*pos + 1) == Some(&q) && bytes.get(*pos + 2) == Some(&q);
        *pos += if triple { 3 } else { 1 };
        while *pos < bytes.len() {
            let c = bytes[*pos];
            if c == b'\\' {
                return Err(self.error(
                    "expression part cannot include a backslash",
                    *pos,
                    *pos + 1,
                ));
            }
            if c == q && (!triple || bytes[*pos..].starts_with(&[q, q, q])) {
                *pos += if triple { 3 } else { 1 };
                return Ok(());
            }
            *pos = self.char_end(*pos);
        }
        Err(self.error("unterminated string", start, bytes.len()))
    }

    /// Parses a field's expression as `(expr)`, as CPython does; its first error is the
    /// f-string's.
    fn parse_expression(&mut self, expr: &str, start: usize) -> Result<(), Reported> {
        let wrapped = format!("({expr})");
        let parse = crate::parse(&wrapped);
        let inner_error = parse.errors().first().map(|e| {
            // Back from the wrapped text to the expression's place in the file.
            let clamp = |o: TextSize| (usize::from(o).saturating_sub(1)).min(expr.len());
            (
                e.message.clone(),
                clamp(e.range.start()),
                clamp(e.range.end()),
            )
        });
        if let Some((mut message, s, e)) = inner_error {
            // The parentheses are ours: an expression that ends too early is plain bad syntax.
            if message.contains("to close the `(` at 1:1") {
                message = "invalid syntax".to_string();
            }
            let (s, e) = (snap(expr, s), snap(expr, e).max(snap(expr, s)));
            return Err(self.error(&message, start + s, start + e));
        }
        let starred = parse
            .syntax_node()
            .descendants()
            .find(|n| n.kind() == PAREN_EXPR)
            .and_then(|n| n.children().next())
            .is_some_and(|c| c.kind() == STARRED_EXPR);
        if starred {
            return Err(self.error(
                "cannot use starred expression here",
                start,
                start + expr.len(),
            ));
        }
        Ok(())
    }
}

/// The nearest character boundary of `text` at or before `at`.
fn snap(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

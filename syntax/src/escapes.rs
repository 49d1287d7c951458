//! Escape sequences and characters of string literals, as CPython decodes them: a truncated
//! `\x`, `\u` or `\U`, a code point past U+10FFFF, a `\N{...}` that names no character, and a
//! non-ASCII character in a bytes literal are syntax errors. Unknown escapes (`\d`) are only
//! Python warnings, so they pass.

use rowan::{TextRange, TextSize};

use crate::SyntaxError;

/// A string literal's prefix and body, or `None` if the lexer already reported it unterminated.
pub(crate) struct Literal<'a> {
    pub raw: bool,
    pub bytes: bool,
    pub formatted: bool,
    pub body: &'a str,
    /// Offset of `body` in the token.
    pub body_start: usize,
}

impl<'a> Literal<'a> {
    pub(crate) fn of(token: &'a str) -> Option<Literal<'a>> {
        let prefix_len = token.bytes().take_while(u8::is_ascii_alphabetic).count();
        let prefix = &token[..prefix_len];
        let has = |c: u8| prefix.bytes().any(|p| p.eq_ignore_ascii_case(&c));
        let rest = &token[prefix_len..];
        let quote = if rest.starts_with("\"\"\"") || rest.starts_with("'''") {
            3
        } else {
            1
        };
        if rest.len() < 2 * quote || !rest.ends_with(&rest[..quote]) {
            return None;
        }
        Some(Literal {
            raw: has(b'r'),
            bytes: has(b'b'),
            formatted: has(b'f'),
            body: &token[prefix_len + quote..token.len() - quote],
            body_start: prefix_len + quote,
        })
    }
}

/// Checks the string literal `lit` of the token at `at` (an f-string's fields aside: `fstring`
/// calls [`escape`] on its literal parts).
pub(crate) fn check(lit: &Literal<'_>, at: TextSize, errors: &mut Vec<SyntaxError>) {
    let base = at + TextSize::from(lit.body_start as u32);
    let range = |start: usize, end: usize| {
        TextRange::new(
            base + TextSize::from(start as u32),
            base + TextSize::from(end as u32),
        )
    };
    if lit.bytes
        && let Some(i) = lit.body.find(|c: char| !c.is_ascii())
    {
        let end = i + lit.body[i..].chars().next().map_or(1, char::len_utf8);
        errors.push(SyntaxError::new(
            "bytes can only contain ASCII literal characters".to_string(),
            range(i, end),
        ));
        return;
    }
    if lit.raw || lit.formatted {
        return;
    }
    let mut pos = 0;
    while let Some(i) = lit.body[pos..].find('\\') {
        let start = pos + i;
        match escape(lit.body, start, lit.bytes) {
            Ok(len) => pos = start + len,
            Err((message, len)) => {
                errors.push(SyntaxError::new(message, range(start, start + len)));
                return;
            }
        }
    }
}

/// The escape sequence at `body[pos..]`, which starts with `\`: its length, or what is wrong
/// with it and the length of the bad part.
pub(crate) fn escape(body: &str, pos: usize, bytes: bool) -> Result<usize, (String, usize)> {
    let rest = &body[pos + 1..];
    let Some(c) = rest.chars().next() else {
        return Ok(1);
    };
    let hex = |digits: usize, name: &str| -> Result<usize, (String, usize)> {
        let found = rest[1..]
            .bytes()
            .take(digits)
            .take_while(u8::is_ascii_hexdigit)
            .count();
        if found < digits {
            return Err((
                format!("truncated `\\{name}` escape: it takes {digits} hex digits"),
                2 + found,
            ));
        }
        Ok(2 + digits)
    };
    match c {
        'x' => hex(2, "x"),
        'u' if !bytes => hex(4, "u"),
        'U' if !bytes => {
            let len = hex(8, "U")?;
            // Lone surrogates are fine in a Python str.
            let value = u32::from_str_radix(&rest[1..9], 16).unwrap_or(u32::MAX);
            if value > 0x10FFFF {
                return Err((format!("illegal Unicode character `\\U{:08X}`", value), len));
            }
            Ok(len)
        }
        'N' if !bytes => {
            let malformed = || ("malformed `\\N{...}` character escape".to_string(), 2);
            let name = rest[1..].strip_prefix('{').ok_or_else(malformed)?;
            let close = name.find('}').ok_or_else(malformed)?;
            let name = &name[..close];
            if name.is_empty() {
                return Err(malformed());
            }
            let len = 2 + 1 + close + 1;
            if unicode_names2::character(name).is_none() {
                return Err((format!("unknown Unicode character name `{name}`"), len));
            }
            Ok(len)
        }
        c => Ok(1 + c.len_utf8()),
    }
}

/// A string body with Python's escapes applied (a raw string's body is used as it is).
pub(crate) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\r' => {
                chars.next_if_eq(&'\n');
            }
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.extend(char::from_u32(v));
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..n)
                    .filter_map(|_| chars.next_if(|c| c.is_ascii_hexdigit()))
                    .collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) if hex.len() == n => out.push(ch),
                    _ => {
                        out.push('\\');
                        out.push(e);
                        out.push_str(&hex);
                    }
                }
            }
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0C'),
            'v' => out.push('\x0B'),
            '\\' | '\'' | '"' => out.push(e),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

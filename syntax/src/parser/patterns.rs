//! The `match` statement (PEP 634) and the patterns of its `case` clauses.
//!
//! `match` and `case` are soft keywords: they stay NAME tokens, and a line is a `match`
//! statement only when it reads as one (`match SUBJECT:` closing the logical line), as in
//! CPython's grammar. WSP does not use `match`; it parses so the analyzer can report it (WSP002)
//! and so a correct Python file never gets a syntax error.

use super::expressions::{EXPR_FIRST, named_expression, star_named_expression};
use super::{CompletedMarker, LINE_END, Parser, TokenSet};
use crate::SyntaxKind::{self, *};

/// Whether the statement at the current NAME token is a `match` statement: the name is `match`,
/// an expression follows, and the logical line ends with `:`.
pub(crate) fn at_match_stmt(p: &Parser<'_>) -> bool {
    if !p.at_contextual("match") || !EXPR_FIRST.contains(p.nth(1)) {
        return false;
    }
    let mut n = 1;
    loop {
        match p.nth(n) {
            NEWLINE | EOF | INDENT | DEDENT => return p.nth(n - 1) == COLON,
            _ => n += 1,
        }
    }
}

/// `match subject: NEWLINE INDENT case_clause+ DEDENT`
pub(crate) fn match_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    let header = p.current_range().start();
    p.bump();
    subject(p);
    p.expect(COLON);
    if !p.eat(NEWLINE) || !p.at(INDENT) {
        let (line, _) = p.line_col(header);
        p.error(format!(
            "expected an indented block of `case` clauses after `match` on line {line}"
        ));
        m.complete(p, MATCH_STMT);
        return;
    }
    super::statements::indented(p, |p| {
        if p.at_contextual("case") {
            case_clause(p);
        } else {
            let e = p.start();
            let found = p.found();
            p.error(format!(
                "expected `case` in the `match` block, found {found}"
            ));
            super::statements::statement(p);
            e.complete(p, ERROR);
        }
    });
    m.complete(p, MATCH_STMT);
}

/// `a`, `a, *b`, `x := f()`: a named expression or a tuple of starred ones.
fn subject(p: &mut Parser<'_>) {
    let m = p.start();
    star_named_expression(p);
    if !p.at(COMMA) {
        m.abandon(p);
        return;
    }
    while p.eat(COMMA) {
        if !p.at_ts(EXPR_FIRST) {
            break;
        }
        star_named_expression(p);
    }
    m.complete(p, TUPLE_EXPR);
}

/// `case patterns [if guard]: block`
fn case_clause(p: &mut Parser<'_>) {
    let m = p.start();
    let header = p.current_range().start();
    p.bump();
    open_sequence(p);
    if p.at(IF_KW) {
        let g = p.start();
        p.bump();
        named_expression(p);
        g.complete(p, GUARD);
    }
    super::statements::block(p, "`case` clause", header);
    m.complete(p, CASE_CLAUSE);
}

/// Tokens at which a missing pattern is reported without consuming them.
const PATTERN_RECOVERY: TokenSet = TokenSet::new(&[
    COLON, COMMA, R_PAREN, R_BRACK, R_CURLY, PIPE, IF_KW, AS_KW, EQ,
]);

/// `p1, *rest` without brackets (a sequence pattern) or one pattern.
fn open_sequence(p: &mut Parser<'_>) {
    let (at, star) = (p.current_range(), p.at(STAR));
    let Some(first) = maybe_star(p) else { return };
    if !p.at(COMMA) {
        if star {
            p.error_at(
                "a star pattern must be inside a sequence pattern".to_string(),
                at.cover(p.prev_range()),
            );
        }
        return;
    }
    let m = first.precede(p);
    while p.eat(COMMA) {
        if p.at(COLON) || p.at(IF_KW) || p.at_ts(LINE_END) {
            break;
        }
        maybe_star(p);
    }
    m.complete(p, SEQUENCE_PATTERN);
}

/// `*name` or a pattern.
fn maybe_star(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if !p.at(STAR) {
        return pattern(p);
    }
    let m = p.start();
    p.bump();
    if !p.eat(NAME) {
        let found = p.found();
        p.error(format!(
            "expected a name after `*` in a pattern, found {found}"
        ));
    }
    Some(m.complete(p, STAR_PATTERN))
}

/// `or_pattern [as NAME]`
fn pattern(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    p.nested(|p| {
        let alt = or_pattern(p)?;
        if !p.at(AS_KW) {
            return Some(alt);
        }
        let m = alt.precede(p);
        p.bump();
        capture_target(p, "`as`");
        Some(m.complete(p, AS_PATTERN))
    })
}

/// The name a pattern binds after `as` or `**`: any name but `_`.
fn capture_target(p: &mut Parser<'_>, after: &str) {
    if p.at_contextual("_") {
        p.error("cannot use `_` as a target".to_string());
        p.bump();
    } else if !p.eat(NAME) {
        let found = p.found();
        p.error(format!("expected a name after {after}, found {found}"));
    }
}

/// `closed ('|' closed)*`
fn or_pattern(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let first = closed_pattern(p)?;
    if !p.at(PIPE) {
        return Some(first);
    }
    let m = first.precede(p);
    while p.eat(PIPE) {
        closed_pattern(p);
    }
    Some(m.complete(p, OR_PATTERN))
}

fn closed_pattern(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    match p.current() {
        INT_NUMBER | FLOAT_NUMBER | IMAG_NUMBER | MINUS => Some(number(p)),
        STRING => {
            let m = p.start();
            while p.at(STRING) {
                p.bump();
            }
            Some(m.complete(p, LITERAL_PATTERN))
        }
        NONE_KW | TRUE_KW | FALSE_KW => {
            let m = p.start();
            p.bump();
            Some(m.complete(p, LITERAL_PATTERN))
        }
        NAME => Some(name_pattern(p).0),
        L_PAREN => Some(p.nested(|p| Some(paren_pattern(p)))?),
        L_BRACK => Some(p.nested(|p| Some(list_pattern(p)))?),
        L_CURLY => Some(p.nested(|p| Some(mapping_pattern(p)))?),
        _ => {
            let found = p.found();
            p.err_recover(
                format!("expected a pattern, found {found}"),
                PATTERN_RECOVERY,
            );
            None
        }
    }
}

/// `1`, `-1.5`, `1 + 2j`, `-1 - 2j`: a LITERAL_PATTERN.
fn number(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let real = signed_number(p);
    if matches!(p.current(), PLUS | MINUS) {
        if real == Some(IMAG_NUMBER) {
            p.error_at(
                "real number required in complex literal".to_string(),
                p.prev_range(),
            );
        }
        p.bump();
        if p.at(IMAG_NUMBER) {
            p.bump();
        } else if matches!(p.current(), INT_NUMBER | FLOAT_NUMBER) {
            p.error("imaginary number required in complex literal".to_string());
            p.bump();
        } else {
            let found = p.found();
            p.error(format!("expected a number, found {found}"));
        }
    }
    m.complete(p, LITERAL_PATTERN)
}

/// `[-]NUMBER`; the number's kind.
fn signed_number(p: &mut Parser<'_>) -> Option<SyntaxKind> {
    p.eat(MINUS);
    let kind = p.current();
    if matches!(kind, INT_NUMBER | FLOAT_NUMBER | IMAG_NUMBER) {
        p.bump();
        Some(kind)
    } else {
        let found = p.found();
        p.error(format!("expected a number after `-`, found {found}"));
        None
    }
}

/// `_`, `x`, `a.b`, `Point(...)`, `a.B(...)`, with the kind of pattern it is.
fn name_pattern(p: &mut Parser<'_>) -> (CompletedMarker, SyntaxKind) {
    let m = p.start();
    let wildcard = p.at_contextual("_");
    p.bump();
    let mut dotted = false;
    while p.at(DOT) {
        dotted = true;
        p.bump();
        if !p.eat(NAME) {
            let found = p.found();
            p.error(format!("expected a name after `.`, found {found}"));
            break;
        }
    }
    let kind = if p.at(L_PAREN) {
        class_args(p);
        CLASS_PATTERN
    } else if dotted {
        VALUE_PATTERN
    } else if wildcard {
        WILDCARD_PATTERN
    } else {
        CAPTURE_PATTERN
    };
    (m.complete(p, kind), kind)
}

/// `(p1, p2, k=p3)` of a class pattern: positional patterns, then keyword ones.
fn class_args(p: &mut Parser<'_>) {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    let mut keyword_seen = false;
    while !p.at(R_PAREN) && !p.at_ts(LINE_END) {
        if p.at(NAME) && p.nth(1) == EQ {
            keyword_seen = true;
            let k = p.start();
            p.bump();
            p.bump();
            pattern(p);
            k.complete(p, KEYWORD_PATTERN);
        } else {
            let at = p.current_range();
            if pattern(p).is_none() {
                break;
            }
            if keyword_seen {
                p.error_at(
                    "positional patterns follow keyword patterns".to_string(),
                    at.cover(p.prev_range()),
                );
            }
        }
        if !p.eat(COMMA) {
            break;
        }
    }
    p.expect_closing(R_PAREN, open);
    m.complete(p, PATTERN_ARGS);
}

/// `()`, `(p)` (a group), `(p,)`, `(p1, *ps)`.
fn paren_pattern(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    if p.eat(R_PAREN) {
        return m.complete(p, SEQUENCE_PATTERN);
    }
    let (at, star) = (p.current_range(), p.at(STAR));
    let first = maybe_star(p);
    let kind = if p.at(COMMA) {
        sequence_rest(p, R_PAREN);
        SEQUENCE_PATTERN
    } else {
        if star && first.is_some() {
            p.error_at(
                "a star pattern must be inside a sequence pattern".to_string(),
                at.cover(p.prev_range()),
            );
        }
        GROUP_PATTERN
    };
    p.expect_closing(R_PAREN, open);
    m.complete(p, kind)
}

/// `[p1, *ps, p2]`
fn list_pattern(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    if !p.at(R_BRACK) && maybe_star(p).is_some() {
        sequence_rest(p, R_BRACK);
    }
    p.expect_closing(R_BRACK, open);
    m.complete(p, SEQUENCE_PATTERN)
}

/// `, p2, p3,` up to `close`.
fn sequence_rest(p: &mut Parser<'_>, close: SyntaxKind) {
    while p.eat(COMMA) {
        if p.at(close) || p.at_ts(LINE_END) {
            break;
        }
        if maybe_star(p).is_none() {
            break;
        }
    }
}

/// `{key: p, **rest}`: keys are literals or dotted names (`a.B`); `**rest` comes last.
fn mapping_pattern(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    let mut rest_seen = false;
    while !p.at(R_CURLY) && !p.at_ts(LINE_END) {
        if rest_seen {
            p.error("`**` pattern must come last in a mapping pattern".to_string());
        }
        if p.at(DOUBLE_STAR) {
            rest_seen = true;
            let d = p.start();
            p.bump();
            capture_target(p, "`**`");
            d.complete(p, DOUBLE_STAR_PATTERN);
        } else if !key_value(p) {
            break;
        }
        if !p.eat(COMMA) {
            break;
        }
    }
    p.expect_closing(R_CURLY, open);
    m.complete(p, MAPPING_PATTERN)
}

/// `key: pattern`; false if nothing could be read.
fn key_value(p: &mut Parser<'_>) -> bool {
    let m = p.start();
    let key_ok = match p.current() {
        INT_NUMBER | FLOAT_NUMBER | IMAG_NUMBER | MINUS | STRING | NONE_KW | TRUE_KW | FALSE_KW => {
            closed_pattern(p).is_some()
        }
        NAME => {
            let at = p.current_range();
            if name_pattern(p).1 != VALUE_PATTERN {
                p.error_at(
                    "a mapping pattern's key must be a literal or a dotted name (`a.B`)"
                        .to_string(),
                    at.cover(p.prev_range()),
                );
            }
            true
        }
        _ => {
            let found = p.found();
            p.err_recover(
                format!("expected a key of a mapping pattern, found {found}"),
                PATTERN_RECOVERY,
            );
            false
        }
    };
    if !key_ok {
        m.abandon(p);
        return false;
    }
    if p.expect(COLON) {
        pattern(p);
    }
    m.complete(p, KEY_VALUE_PATTERN);
    true
}

impl Parser<'_> {
    /// Whether the current token is the NAME `word` (a soft keyword).
    pub(crate) fn at_contextual(&self, word: &str) -> bool {
        self.at(NAME) && &self.text[self.current_range()] == word
    }
}

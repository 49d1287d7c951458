//! Expression grammar: Python's precedence levels by binding power, then primaries and atoms.
//!
//! From loosest to tightest: lambda, `x if c else y`, `or`, `and`, `not`, comparisons, `|`, `^`,
//! `&`, shifts, `+ -`, `* / // % @`, unary `+ - ~`, `**`, `await`, then `.x`, calls and subscripts.

use super::statements::lambda_param_list;
use super::{CompletedMarker, MAX_EXPR_DEPTH, Parser, TokenSet};
use crate::SyntaxKind::{self, *};

/// Binding-power levels; an operator binds operands at its level or tighter.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Or = 1,
    And,
    Not,
    Compare,
    BitOr,
    BitXor,
    BitAnd,
    Shift,
    Arith,
    Term,
    Unary,
    Power,
}

impl Level {
    fn next(self) -> Level {
        match self {
            Level::Or => Level::And,
            Level::And => Level::Not,
            Level::Not => Level::Compare,
            Level::Compare => Level::BitOr,
            Level::BitOr => Level::BitXor,
            Level::BitXor => Level::BitAnd,
            Level::BitAnd => Level::Shift,
            Level::Shift => Level::Arith,
            Level::Arith => Level::Term,
            Level::Term => Level::Unary,
            Level::Unary | Level::Power => Level::Power,
        }
    }
}

/// Tokens that can start an expression.
pub(crate) const EXPR_FIRST: TokenSet = TokenSet::new(&[
    NAME,
    INT_NUMBER,
    FLOAT_NUMBER,
    IMAG_NUMBER,
    STRING,
    TRUE_KW,
    FALSE_KW,
    NONE_KW,
    ELLIPSIS,
    L_PAREN,
    L_BRACK,
    L_CURLY,
    MINUS,
    PLUS,
    TILDE,
    NOT_KW,
    LAMBDA_KW,
    AWAIT_KW,
    STAR,
]);

/// Tokens at which a missing expression is reported without consuming them.
const ATOM_RECOVERY: TokenSet = TokenSet::new(&[
    R_PAREN, R_BRACK, R_CURLY, COMMA, COLON, EQ, SEMICOLON, ELSE_KW, AS_KW, IN_KW, FOR_KW, IF_KW,
    ARROW,
]);

/// `expression`: a lambda, a conditional expression, or anything tighter.
pub(crate) fn expression(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    p.nested(|p| {
        if p.at(LAMBDA_KW) {
            return Some(lambda(p));
        }
        let cond = expr_bp(p, Level::Or)?;
        if !p.at(IF_KW) {
            return Some(cond);
        }
        let m = cond.precede(p);
        p.bump();
        expr_bp(p, Level::Or);
        if p.expect(ELSE_KW) {
            expression(p);
        }
        Some(m.complete(p, COND_EXPR))
    })
}

/// `NAME := expression` or `expression`.
pub(crate) fn named_expression(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at(NAME) && p.nth(1) == COLON_EQ {
        let m = p.start();
        p.bump();
        p.bump();
        expression(p);
        return Some(m.complete(p, NAMED_EXPR));
    }
    expression(p)
}

/// `*x` or a named expression: an element of a tuple, list or set display.
pub(crate) fn star_named_expression(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at(STAR) {
        Some(starred(p))
    } else {
        named_expression(p)
    }
}

pub(crate) fn starred(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump();
    expr_bp(p, Level::BitOr);
    m.complete(p, STARRED_EXPR)
}

/// `a, *b, c` as in an assignment or `return`: a TUPLE_EXPR when there is a comma.
pub(crate) fn star_expressions(p: &mut Parser<'_>) -> bool {
    comma_list(p, |p| {
        if p.at(STAR) {
            Some(starred(p))
        } else {
            expression(p)
        }
    })
}

/// Assignment targets of `for`, `del` and comprehensions: `a, (b, c), *d`.
pub(crate) fn target_list(p: &mut Parser<'_>) -> bool {
    comma_list(p, target)
}

/// One target: `*x` or an expression at `|` level (so that `in` ends it).
pub(crate) fn target(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at(STAR) {
        Some(starred(p))
    } else {
        expr_bp(p, Level::BitOr)
    }
}

fn comma_list(p: &mut Parser<'_>, element: fn(&mut Parser<'_>) -> Option<CompletedMarker>) -> bool {
    let m = p.start();
    let first = element(p);
    if !p.at(COMMA) {
        m.abandon(p);
        return first.is_some();
    }
    while p.eat(COMMA) {
        if !p.at_ts(EXPR_FIRST) {
            break;
        }
        element(p);
    }
    m.complete(p, TUPLE_EXPR);
    true
}

/// `yield [from] ...`
pub(crate) fn yield_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let m = p.start();
    p.bump();
    if p.eat(FROM_KW) {
        expression(p);
    } else if p.at_ts(EXPR_FIRST) {
        star_expressions(p);
    }
    Some(m.complete(p, YIELD_EXPR))
}

fn lambda(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump();
    lambda_param_list(p);
    if p.expect(COLON) {
        expression(p);
    }
    m.complete(p, LAMBDA_EXPR)
}

/// The infix operator at the current token: its level and how many tokens it spans.
fn infix_op(p: &Parser<'_>) -> Option<(Level, usize)> {
    let level = match p.current() {
        OR_KW => Level::Or,
        AND_KW => Level::And,
        LT | GT | LT_EQ | GT_EQ | EQ_EQ | NOT_EQ | IN_KW => Level::Compare,
        IS_KW => return Some((Level::Compare, if p.nth(1) == NOT_KW { 2 } else { 1 })),
        NOT_KW if p.nth(1) == IN_KW => return Some((Level::Compare, 2)),
        PIPE => Level::BitOr,
        CARET => Level::BitXor,
        AMP => Level::BitAnd,
        SHL | SHR => Level::Shift,
        PLUS | MINUS => Level::Arith,
        STAR | SLASH | DOUBLE_SLASH | PERCENT | AT => Level::Term,
        DOUBLE_STAR => Level::Power,
        _ => return None,
    };
    Some((level, 1))
}

/// An expression whose operators all bind at `min` or tighter.
pub(crate) fn expr_bp(p: &mut Parser<'_>, min: Level) -> Option<CompletedMarker> {
    p.nested(|p| {
        let mut lhs = prefix(p, min)?;
        let chain_start = p.chain;
        while let Some((level, width)) = infix_op(p) {
            // `**` nests (it is right-associative), so its depth is counted by `nested`.
            if level < min || (level != Level::Power && !p.extend_chain()) {
                break;
            }
            let m = lhs.precede(p);
            let kind = match level {
                Level::Compare => {
                    // `a < b < c` is one chained comparison.
                    while let Some((Level::Compare, width)) = infix_op(p) {
                        for _ in 0..width {
                            p.bump();
                        }
                        expr_bp(p, Level::BitOr);
                    }
                    COMPARE_EXPR
                }
                Level::Or | Level::And => {
                    p.bump();
                    expr_bp(p, level.next());
                    BOOL_EXPR
                }
                // `**` is right-associative and its right operand may be unary: `2 ** -x`.
                Level::Power => {
                    p.bump();
                    expr_bp(p, Level::Unary);
                    BIN_EXPR
                }
                _ => {
                    for _ in 0..width {
                        p.bump();
                    }
                    expr_bp(p, level.next());
                    BIN_EXPR
                }
            };
            lhs = m.complete(p, kind);
        }
        p.chain = chain_start;
        Some(lhs)
    })
}

fn prefix(p: &mut Parser<'_>, min: Level) -> Option<CompletedMarker> {
    match p.current() {
        NOT_KW if min <= Level::Not => {
            let m = p.start();
            p.bump();
            expr_bp(p, Level::Not);
            Some(m.complete(p, UNARY_EXPR))
        }
        MINUS | PLUS | TILDE => {
            let m = p.start();
            p.bump();
            expr_bp(p, Level::Unary);
            Some(m.complete(p, UNARY_EXPR))
        }
        AWAIT_KW => {
            let m = p.start();
            p.bump();
            primary(p);
            Some(m.complete(p, AWAIT_EXPR))
        }
        _ => primary(p),
    }
}

/// An atom followed by `.name`, `(args)` and `[subscript]` trailers.
fn primary(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let mut lhs = atom(p)?;
    let chain_start = p.chain;
    loop {
        let kind = match p.current() {
            DOT | L_PAREN | L_BRACK if !p.extend_chain() => break,
            DOT => {
                let m = lhs.precede(p);
                p.bump();
                if !p.eat(NAME) {
                    let found = p.found();
                    p.error(format!(
                        "expected an attribute name after `.`, found {found}"
                    ));
                }
                (m, ATTRIBUTE_EXPR)
            }
            L_PAREN => {
                let m = lhs.precede(p);
                arg_list(p);
                (m, CALL_EXPR)
            }
            L_BRACK => {
                let m = lhs.precede(p);
                subscript(p);
                (m, SUBSCRIPT_EXPR)
            }
            _ => break,
        };
        lhs = kind.0.complete(p, kind.1);
    }
    p.chain = chain_start;
    Some(lhs)
}

fn atom(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let m = p.start();
    let kind = match p.current() {
        NAME => {
            p.bump();
            NAME_EXPR
        }
        INT_NUMBER | FLOAT_NUMBER | IMAG_NUMBER | TRUE_KW | FALSE_KW | NONE_KW | ELLIPSIS => {
            p.bump();
            LITERAL
        }
        STRING => {
            // Adjacent strings are one literal: `"a" "b"`.
            while p.at(STRING) {
                p.bump();
            }
            LITERAL
        }
        L_PAREN => {
            m.abandon(p);
            return p.nested(|p| Some(paren(p)));
        }
        L_BRACK => {
            m.abandon(p);
            return p.nested(|p| Some(list(p)));
        }
        L_CURLY => {
            m.abandon(p);
            return p.nested(|p| Some(dict_or_set(p)));
        }
        _ => {
            m.abandon(p);
            let found = p.found();
            p.err_recover(
                format!("expected an expression, found {found}"),
                ATOM_RECOVERY,
            );
            return None;
        }
    };
    Some(m.complete(p, kind))
}

/// `()`, `(x)`, `(x,)`, `(x for ...)`, `(yield x)`.
fn paren(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    if p.eat(R_PAREN) {
        return m.complete(p, TUPLE_EXPR);
    }
    if p.at(YIELD_KW) {
        yield_expr(p);
        p.expect_closing(R_PAREN, open);
        return m.complete(p, PAREN_EXPR);
    }
    star_named_expression(p);
    let kind = if comprehension(p) {
        GENERATOR_EXPR
    } else if p.at(COMMA) {
        elements(p, R_PAREN);
        TUPLE_EXPR
    } else {
        PAREN_EXPR
    };
    p.expect_closing(R_PAREN, open);
    m.complete(p, kind)
}

/// `[a, b]` or `[x for ...]`.
fn list(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    if p.eat(R_BRACK) {
        return m.complete(p, LIST_EXPR);
    }
    star_named_expression(p);
    let kind = if comprehension(p) {
        LIST_COMP
    } else {
        elements(p, R_BRACK);
        LIST_EXPR
    };
    p.expect_closing(R_BRACK, open);
    m.complete(p, kind)
}

/// The rest of a display after its first element: `, b, c,` up to `close`.
fn elements(p: &mut Parser<'_>, close: SyntaxKind) {
    while p.eat(COMMA) {
        if p.at(close) || p.at_ts(super::LINE_END) {
            break;
        }
        star_named_expression(p);
    }
}

/// `{}`, `{k: v, **d}`, `{k: v for ...}`, `{a, *b}`, `{a for ...}`.
fn dict_or_set(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    if p.eat(R_CURLY) {
        return m.complete(p, DICT_EXPR);
    }
    let is_dict = match p.current() {
        DOUBLE_STAR => {
            double_star_entry(p);
            true
        }
        STAR => {
            starred(p);
            false
        }
        _ => dict_entry(p, false),
    };
    let kind = match (is_dict, comprehension(p)) {
        (true, true) => DICT_COMP,
        (false, true) => SET_COMP,
        (true, false) => {
            while p.eat(COMMA) {
                if p.at(R_CURLY) || p.at_ts(super::LINE_END) {
                    break;
                }
                if p.at(DOUBLE_STAR) {
                    double_star_entry(p);
                } else {
                    dict_entry(p, true);
                }
            }
            DICT_EXPR
        }
        (false, false) => {
            elements(p, R_CURLY);
            SET_EXPR
        }
    };
    p.expect_closing(R_CURLY, open);
    m.complete(p, kind)
}

/// `key: value` as a DICT_ENTRY (true). Without the `:` the key stays a bare expression, the
/// first element of a set (false), unless the display is already known to be a dict.
fn dict_entry(p: &mut Parser<'_>, in_dict: bool) -> bool {
    let m = p.start();
    named_expression(p);
    if p.eat(COLON) || in_dict && p.expect(COLON) {
        expression(p);
        m.complete(p, DICT_ENTRY);
        true
    } else if in_dict {
        m.complete(p, DICT_ENTRY);
        true
    } else {
        m.abandon(p);
        false
    }
}

/// `**mapping` inside a dict display.
fn double_star_entry(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    expr_bp(p, Level::BitOr);
    m.complete(p, DICT_ENTRY);
}

/// `for targets in iterable [if cond]...` clauses, if present.
fn comprehension(p: &mut Parser<'_>) -> bool {
    let mut any = false;
    while p.at(FOR_KW) || (p.at(ASYNC_KW) && p.nth(1) == FOR_KW) {
        any = true;
        let m = p.start();
        p.eat(ASYNC_KW);
        p.bump();
        target_list(p);
        p.expect(IN_KW);
        expr_bp(p, Level::Or);
        while p.at(IF_KW) {
            let c = p.start();
            p.bump();
            expr_bp(p, Level::Or);
            c.complete(p, COMP_IF);
        }
        m.complete(p, COMP_FOR);
    }
    any
}

/// `(args)` of a call or a class: positional, `name=value`, `*xs`, `**kw`, or one generator.
pub(crate) fn arg_list(p: &mut Parser<'_>) {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    while !p.at(R_PAREN) && !p.at_ts(super::LINE_END) {
        let a = p.start();
        match p.current() {
            STAR | DOUBLE_STAR => {
                p.bump();
                expression(p);
            }
            NAME if p.nth(1) == EQ => {
                p.bump();
                p.bump();
                expression(p);
            }
            _ => {
                if let Some(e) = named_expression(p)
                    && (p.at(FOR_KW) || p.at(ASYNC_KW))
                {
                    let g = e.precede(p);
                    comprehension(p);
                    g.complete(p, GENERATOR_EXPR);
                }
            }
        }
        a.complete(p, ARG);
        if !p.eat(COMMA) {
            // `f(a b)`: report the comma and go on with `b`, rather than give up on the list.
            if p.at_ts(EXPR_FIRST) || p.at(DOUBLE_STAR) {
                p.error(format!(
                    "expected `,` between arguments, found {}",
                    p.found()
                ));
                continue;
            }
            break;
        }
    }
    p.expect_closing(R_PAREN, open);
    m.complete(p, ARG_LIST);
}

/// `[i]`, `[i, j]`, `[a:b:c, ...]`.
fn subscript(p: &mut Parser<'_>) {
    let open = p.current_range();
    p.bump();
    let m = p.start();
    slice_item(p);
    if p.at(COMMA) {
        while p.eat(COMMA) {
            if p.at(R_BRACK) || p.at_ts(super::LINE_END) {
                break;
            }
            slice_item(p);
        }
        m.complete(p, TUPLE_EXPR);
    } else {
        m.abandon(p);
    }
    p.expect_closing(R_BRACK, open);
}

fn slice_item(p: &mut Parser<'_>) {
    let m = p.start();
    if !p.at(COLON) {
        star_named_expression(p);
        if !p.at(COLON) {
            m.abandon(p);
            return;
        }
    }
    p.bump();
    if !p.at_ts(TokenSet::new(&[COLON, COMMA, R_BRACK])) {
        expression(p);
    }
    if p.eat(COLON) && !p.at_ts(TokenSet::new(&[COMMA, R_BRACK])) {
        expression(p);
    }
    m.complete(p, SLICE);
}

impl Parser<'_> {
    /// Allows one more operator in the expressions now open, or reports the limit once: each
    /// operator is one more level of the tree, so chains count against `MAX_EXPR_DEPTH` too.
    fn extend_chain(&mut self) -> bool {
        if self.expr_depth + self.chain >= MAX_EXPR_DEPTH {
            self.error(format!(
                "expression too long: more than {MAX_EXPR_DEPTH} levels of operators"
            ));
            self.skip_line();
            return false;
        }
        self.chain += 1;
        true
    }
}

//! Statement grammar: the module, compound statements with their blocks, simple statements.
//!
//! Constructs outside the WSP subset (`class`, `while`, `try`, `if`, `async`, ...) get proper nodes
//! here; the analyzer reports them (WSP002), the parser does not.

use rowan::{TextRange, TextSize};

use super::expressions::{
    expression, named_expression, star_expressions, target, target_list, yield_expr,
};
use super::{LINE_END, MAX_BLOCK_DEPTH, Marker, Parser, TokenSet};
use crate::SyntaxKind::{self, *};

/// The statements up to token `end` (or the end of the file).
pub(crate) fn source_file(p: &mut Parser<'_>, end: usize) {
    let m = p.start();
    while p.pos < end && !p.at(EOF) {
        statement(p);
    }
    m.complete(p, SOURCE_FILE);
}

const AUG_ASSIGN_OPS: TokenSet = TokenSet::new(&[
    PLUS_EQ,
    MINUS_EQ,
    STAR_EQ,
    SLASH_EQ,
    DOUBLE_SLASH_EQ,
    PERCENT_EQ,
    DOUBLE_STAR_EQ,
    AT_EQ,
    AMP_EQ,
    PIPE_EQ,
    CARET_EQ,
    SHL_EQ,
    SHR_EQ,
]);

const PARAM_FIRST: TokenSet = TokenSet::new(&[NAME, STAR, DOUBLE_STAR, SLASH]);

const STMT_END: TokenSet = TokenSet::new(&[NEWLINE, SEMICOLON, EOF]);

pub(crate) fn statement(p: &mut Parser<'_>) {
    match p.current() {
        NAME if super::patterns::at_match_stmt(p) => super::patterns::match_stmt(p),
        AT => decorated(p),
        DEF_KW => {
            let m = p.start();
            function_def(p, m);
        }
        CLASS_KW => {
            let m = p.start();
            class_def(p, m);
        }
        ASYNC_KW => async_statement(p),
        FOR_KW => {
            let m = p.start();
            for_stmt(p, m);
        }
        WITH_KW => {
            let m = p.start();
            with_stmt(p, m);
        }
        IF_KW => if_stmt(p),
        WHILE_KW => while_stmt(p),
        TRY_KW => try_stmt(p),
        ELIF_KW | ELSE_KW | EXCEPT_KW | FINALLY_KW => orphan_clause(p),
        INDENT => unexpected_indent(p),
        NEWLINE | DEDENT => {
            let m = p.start();
            p.error(format!("unexpected {}", p.current().describe()));
            p.bump();
            m.complete(p, ERROR);
        }
        _ => simple_statements(p),
    }
}

/// `simple_stmt (';' simple_stmt)* [';'] NEWLINE`
pub(crate) fn simple_statements(p: &mut Parser<'_>) {
    loop {
        simple_statement(p);
        if p.eat(SEMICOLON) {
            if p.at_ts(LINE_END) {
                break;
            }
            continue;
        }
        break;
    }
    if p.eat(NEWLINE) {
        return;
    }
    let found = p.found();
    p.error(format!(
        "expected a newline or `;` after the statement, found {found}"
    ));
    skip_to(p, TokenSet::new(&[]));
    p.eat(NEWLINE);
}

/// Wraps tokens up to one in `stop` or the end of the line in an ERROR node.
fn skip_to(p: &mut Parser<'_>, stop: TokenSet) {
    if p.at_ts(stop) || p.at_ts(LINE_END) {
        return;
    }
    let m = p.start();
    while !p.at_ts(stop) && !p.at_ts(LINE_END) {
        p.bump();
    }
    m.complete(p, ERROR);
}

fn simple_statement(p: &mut Parser<'_>) {
    let m = p.start();
    let kind = match p.current() {
        PASS_KW => {
            p.bump();
            PASS_STMT
        }
        BREAK_KW => {
            p.bump();
            BREAK_STMT
        }
        CONTINUE_KW => {
            p.bump();
            CONTINUE_STMT
        }
        RETURN_KW => {
            p.bump();
            if !p.at_ts(STMT_END) {
                star_expressions(p);
            }
            RETURN_STMT
        }
        IMPORT_KW => {
            import_stmt(p);
            IMPORT_STMT
        }
        FROM_KW => {
            from_import_stmt(p);
            FROM_IMPORT_STMT
        }
        GLOBAL_KW | NONLOCAL_KW => {
            let kind = if p.at(GLOBAL_KW) {
                GLOBAL_STMT
            } else {
                NONLOCAL_STMT
            };
            p.bump();
            name_after(p, "a name");
            while p.eat(COMMA) {
                name_after(p, "a name");
            }
            kind
        }
        DEL_KW => {
            p.bump();
            target_list(p);
            DEL_STMT
        }
        ASSERT_KW => {
            p.bump();
            expression(p);
            if p.eat(COMMA) {
                expression(p);
            }
            ASSERT_STMT
        }
        RAISE_KW => {
            p.bump();
            if !p.at_ts(STMT_END) {
                expression(p);
                if p.eat(FROM_KW) {
                    expression(p);
                }
            }
            RAISE_STMT
        }
        _ => expression_statement(p),
    };
    m.complete(p, kind);
}

fn expression_statement(p: &mut Parser<'_>) -> SyntaxKind {
    let parsed = if p.at(YIELD_KW) {
        yield_expr(p).is_some()
    } else {
        star_expressions(p)
    };
    if !parsed {
        return ERROR;
    }
    if p.at(EQ) {
        while p.eat(EQ) {
            assigned_value(p);
        }
        ASSIGN_STMT
    } else if p.at_ts(AUG_ASSIGN_OPS) {
        p.bump();
        assigned_value(p);
        AUG_ASSIGN_STMT
    } else if p.at(COLON) {
        p.bump();
        expression(p);
        if p.eat(EQ) {
            assigned_value(p);
        }
        ANN_ASSIGN_STMT
    } else {
        EXPR_STMT
    }
}

fn assigned_value(p: &mut Parser<'_>) {
    if p.at(YIELD_KW) {
        yield_expr(p);
    } else {
        star_expressions(p);
    }
}

fn name_after(p: &mut Parser<'_>, what: &str) -> bool {
    if p.eat(NAME) {
        return true;
    }
    let found = p.found();
    p.error(format!("expected {what}, found {found}"));
    false
}

/// `import a.b [as c], ...`
fn import_stmt(p: &mut Parser<'_>) {
    p.bump();
    loop {
        let m = p.start();
        dotted_name(p);
        if p.eat(AS_KW) {
            name_after(p, "a name after `as`");
        }
        m.complete(p, IMPORT_ALIAS);
        if !p.eat(COMMA) {
            break;
        }
    }
}

fn dotted_name(p: &mut Parser<'_>) {
    let m = p.start();
    if name_after(p, "a module name") {
        while p.at(DOT) {
            p.bump();
            name_after(p, "a name after `.`");
        }
    }
    m.complete(p, DOTTED_NAME);
}

/// `from .a.b import x [as y], ...` or `import (x, y,)` or `import *`
fn from_import_stmt(p: &mut Parser<'_>) {
    p.bump();
    let mut dots = false;
    while p.at(DOT) || p.at(ELLIPSIS) {
        p.bump();
        dots = true;
    }
    if p.at(NAME) || !dots {
        dotted_name(p);
    }
    if !p.expect(IMPORT_KW) {
        skip_to(p, TokenSet::new(&[IMPORT_KW]));
        if !p.eat(IMPORT_KW) {
            return;
        }
    }
    if p.eat(STAR) {
        return;
    }
    let open = p.current_range();
    let parenthesized = p.eat(L_PAREN);
    loop {
        let m = p.start();
        name_after(p, "a name to import");
        if p.eat(AS_KW) {
            name_after(p, "a name after `as`");
        }
        m.complete(p, IMPORT_ALIAS);
        if !p.at(COMMA) {
            break;
        }
        let comma = p.current_range();
        p.bump();
        if parenthesized && p.at(R_PAREN) {
            break;
        }
        if !parenthesized && p.at_ts(STMT_END) {
            p.error_at(
                "trailing comma not allowed without surrounding parentheses".to_string(),
                comma,
            );
            break;
        }
    }
    if parenthesized {
        p.expect_closing(R_PAREN, open);
    }
}

fn decorated(p: &mut Parser<'_>) {
    let m = p.start();
    while p.at(AT) {
        let d = p.start();
        p.bump();
        named_expression(p);
        if !p.eat(NEWLINE) {
            let found = p.found();
            p.error(format!(
                "expected a newline after the decorator, found {found}"
            ));
            skip_to(p, TokenSet::new(&[]));
            p.eat(NEWLINE);
        }
        d.complete(p, DECORATOR);
    }
    match p.current() {
        DEF_KW => function_def(p, m),
        ASYNC_KW if p.nth(1) == DEF_KW => {
            p.bump();
            function_def(p, m);
        }
        CLASS_KW => class_def(p, m),
        _ => {
            let found = p.found();
            p.error(format!(
                "expected `def` or `class` after the decorator, found {found}"
            ));
            m.complete(p, ERROR);
        }
    }
}

fn async_statement(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump();
    match p.current() {
        DEF_KW => function_def(p, m),
        FOR_KW => for_stmt(p, m),
        WITH_KW => with_stmt(p, m),
        _ => {
            let found = p.found();
            p.error(format!(
                "expected `def`, `for` or `with` after `async`, found {found}"
            ));
            m.complete(p, ERROR);
        }
    }
}

/// `def NAME(params) [-> expr]: block`, with `m` started before any decorators or `async`.
fn function_def(p: &mut Parser<'_>, m: Marker) {
    let header = p.current_range().start();
    p.bump();
    name_after(p, "a function name after `def`");
    if p.at(L_PAREN) {
        param_list(p);
    } else {
        let found = p.found();
        p.error(format!(
            "expected `(` to start the parameter list, found {found}"
        ));
    }
    if p.at(ARROW) {
        let r = p.start();
        p.bump();
        expression(p);
        r.complete(p, RETURN_TYPE);
    }
    block(p, "function definition", header);
    m.complete(p, FUNCTION_DEF);
}

/// `( param, ... )` of a `def`.
fn param_list(p: &mut Parser<'_>) {
    let m = p.start();
    let open = p.current_range();
    p.bump();
    params(p, R_PAREN, true);
    p.expect_closing(R_PAREN, open);
    m.complete(p, PARAM_LIST);
}

/// The parameters of a `lambda`, up to its `:`.
pub(crate) fn lambda_param_list(p: &mut Parser<'_>) {
    let m = p.start();
    params(p, COLON, false);
    m.complete(p, PARAM_LIST);
}

/// Comma-separated parameters up to `end`; a missing comma is reported and parsing goes on.
fn params(p: &mut Parser<'_>, end: SyntaxKind, annotated: bool) {
    while !p.at(end) && !p.at_ts(LINE_END) {
        if !param(p, annotated) {
            break;
        }
        if !p.eat(COMMA) {
            if p.at_ts(PARAM_FIRST) {
                p.error(format!(
                    "expected `,` between parameters, found {}",
                    p.found()
                ));
                continue;
            }
            break;
        }
    }
}

/// One parameter: `name[: T][= default]`, `*`, `*args`, `**kwargs`, `/`. False if none was there.
fn param(p: &mut Parser<'_>, annotated: bool) -> bool {
    let m = p.start();
    match p.current() {
        STAR => {
            p.bump();
            // `*args: *Ts` unpacks a TypeVarTuple (PEP 646).
            if p.eat(NAME) && annotated && p.eat(COLON) {
                if p.at(STAR) {
                    super::expressions::starred(p);
                } else {
                    expression(p);
                }
            }
        }
        DOUBLE_STAR => {
            p.bump();
            if name_after(p, "a parameter name after `**`") && annotated && p.eat(COLON) {
                expression(p);
            }
        }
        SLASH => p.bump(),
        NAME => {
            p.bump();
            if annotated && p.eat(COLON) {
                expression(p);
            }
            if p.eat(EQ) {
                expression(p);
            }
        }
        _ => {
            m.abandon(p);
            let found = p.found();
            p.err_recover(
                format!("expected a parameter name, found {found}"),
                TokenSet::new(&[R_PAREN, COMMA, COLON]),
            );
            return false;
        }
    }
    m.complete(p, PARAM);
    true
}

fn class_def(p: &mut Parser<'_>, m: Marker) {
    let header = p.current_range().start();
    p.bump();
    name_after(p, "a class name after `class`");
    if p.at(L_PAREN) {
        super::expressions::arg_list(p);
    }
    block(p, "class definition", header);
    m.complete(p, CLASS_DEF);
}

/// `for targets in iterable: block [else: block]`
fn for_stmt(p: &mut Parser<'_>, m: Marker) {
    let header = p.current_range().start();
    p.bump();
    target_list(p);
    if !p.expect(IN_KW) {
        skip_to(p, TokenSet::new(&[IN_KW, COLON]));
        p.eat(IN_KW);
    }
    if !p.at(COLON) {
        star_expressions(p);
    }
    block(p, "`for` statement", header);
    else_clause(p);
    m.complete(p, FOR_STMT);
}

/// `with item, ...: block` or `with (item, ...,): block`
fn with_stmt(p: &mut Parser<'_>, m: Marker) {
    let header = p.current_range().start();
    p.bump();
    if p.at(L_PAREN) && parenthesized_with_items(p) {
        let open = p.current_range();
        p.bump();
        while !p.at(R_PAREN) && !p.at_ts(LINE_END) {
            with_item(p);
            if !p.eat(COMMA) {
                break;
            }
        }
        p.expect_closing(R_PAREN, open);
    } else {
        with_item(p);
        while p.eat(COMMA) {
            with_item(p);
        }
    }
    block(p, "`with` statement", header);
    m.complete(p, WITH_STMT);
}

/// Whether the `(` after `with` encloses the item list (`with (a as b, c):`) rather than starts
/// an expression (`with (a).b:`): it does when its `)` is followed by the `:`.
fn parenthesized_with_items(p: &Parser<'_>) -> bool {
    let mut depth = 0usize;
    let mut n = 0;
    loop {
        match p.nth(n) {
            L_PAREN | L_BRACK | L_CURLY => depth += 1,
            R_PAREN | R_BRACK | R_CURLY => {
                depth -= 1;
                if depth == 0 {
                    return p.nth(n + 1) == COLON;
                }
            }
            NEWLINE | EOF => return false,
            _ => {}
        }
        n += 1;
    }
}

fn with_item(p: &mut Parser<'_>) {
    let m = p.start();
    expression(p);
    if p.eat(AS_KW) {
        target(p);
    }
    m.complete(p, WITH_ITEM);
}

fn if_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    let header = p.current_range().start();
    p.bump();
    named_expression(p);
    block(p, "`if` statement", header);
    while p.at(ELIF_KW) {
        let c = p.start();
        let header = p.current_range().start();
        p.bump();
        named_expression(p);
        block(p, "`elif` statement", header);
        c.complete(p, ELIF_CLAUSE);
    }
    else_clause(p);
    m.complete(p, IF_STMT);
}

fn else_clause(p: &mut Parser<'_>) {
    if p.at(ELSE_KW) {
        let c = p.start();
        let header = p.current_range().start();
        p.bump();
        block(p, "`else` statement", header);
        c.complete(p, ELSE_CLAUSE);
    }
}

fn while_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    let header = p.current_range().start();
    p.bump();
    named_expression(p);
    block(p, "`while` statement", header);
    else_clause(p);
    m.complete(p, WHILE_STMT);
}

fn try_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    let header = p.current_range().start();
    p.bump();
    block(p, "`try` statement", header);
    let mut handlers = false;
    while p.at(EXCEPT_KW) {
        handlers = true;
        let c = p.start();
        let header = p.current_range().start();
        p.bump();
        p.eat(STAR);
        if !p.at(COLON) {
            expression(p);
            if p.eat(AS_KW) {
                name_after(p, "a name after `as`");
            }
        }
        block(p, "`except` clause", header);
        c.complete(p, EXCEPT_CLAUSE);
    }
    if handlers {
        else_clause(p);
    }
    if p.at(FINALLY_KW) {
        let c = p.start();
        let header = p.current_range().start();
        p.bump();
        block(p, "`finally` clause", header);
        c.complete(p, FINALLY_CLAUSE);
    } else if !handlers {
        let found = p.found();
        p.error(format!(
            "expected `except` or `finally` after the `try` block, found {found}"
        ));
    }
    m.complete(p, TRY_STMT);
}

/// `else:`, `elif`, `except`, `finally` with nothing to attach to: parsed, reported, kept.
fn orphan_clause(p: &mut Parser<'_>) {
    let m = p.start();
    let kind = p.current();
    let owner = match kind {
        ELIF_KW => "an `if`",
        ELSE_KW => "an `if`, `for`, `while` or `try`",
        _ => "a `try`",
    };
    p.error(format!(
        "{} without {owner} before it at the same indentation",
        kind.describe()
    ));
    let header = p.current_range().start();
    p.bump();
    if !p.at(COLON) && !p.at_ts(LINE_END) {
        named_expression(p);
        if p.eat(AS_KW) {
            name_after(p, "a name after `as`");
        }
    }
    block(p, "this clause", header);
    m.complete(p, ERROR);
}

fn unexpected_indent(p: &mut Parser<'_>) {
    let next = p.nth_range(1);
    p.error_at("unexpected indent".to_string(), next);
    let m = p.start();
    indented(p, statement);
    m.complete(p, ERROR);
}

/// `INDENT item+ DEDENT`, at the current INDENT, each item read by `item` (a statement, or a
/// `case` clause).
pub(crate) fn indented(p: &mut Parser<'_>, mut item: impl FnMut(&mut Parser<'_>)) {
    if p.block_depth >= MAX_BLOCK_DEPTH {
        p.error_at(
            format!("too many levels of indentation (the limit is {MAX_BLOCK_DEPTH})"),
            p.nth_range(1),
        );
        let mut open = 0usize;
        loop {
            match p.current() {
                INDENT => open += 1,
                DEDENT => open -= 1,
                EOF => break,
                _ => {}
            }
            p.bump();
            if open == 0 {
                break;
            }
        }
        return;
    }
    p.bump();
    p.block_depth += 1;
    while !p.at(DEDENT) && !p.at(EOF) {
        item(p);
    }
    p.block_depth -= 1;
    p.eat(DEDENT);
}

/// `: NEWLINE INDENT stmt+ DEDENT` or `: simple_stmts` after a compound statement header.
pub(crate) fn block(p: &mut Parser<'_>, what: &str, header: TextSize) {
    if !p.expect(COLON) {
        skip_to(p, TokenSet::new(&[COLON]));
        p.eat(COLON);
    }
    let m = p.start();
    if p.eat(NEWLINE) {
        if p.at(INDENT) {
            indented(p, statement);
        } else {
            let (line, _) = p.line_col(header);
            let range = p.current_range();
            p.error_at(
                format!("expected an indented block after {what} on line {line}"),
                range,
            );
        }
    } else if p.at_ts(LINE_END) {
        let found = p.found();
        p.error(format!("expected a block after {what}, found {found}"));
    } else {
        simple_statements(p);
    }
    m.complete(p, BLOCK);
}

impl Parser<'_> {
    /// The range of the `n`th token ahead (an INDENT's is empty; this finds the text after it).
    fn nth_range(&self, n: usize) -> TextRange {
        let mut r = self.range_of(self.pos + n);
        let mut k = n;
        while r.is_empty() && matches!(self.nth(k), INDENT | DEDENT) {
            k += 1;
            r = self.range_of(self.pos + k);
        }
        r
    }
}

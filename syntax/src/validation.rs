//! Checks on the finished tree for what Python's parser rejects but a context-free grammar
//! accepts: assignment and deletion targets, argument order, parameter order.

use rowan::TextRange;

use crate::SyntaxError;
use crate::SyntaxKind::*;
use crate::SyntaxNode;
use crate::ast::{self, AstNode, ArgKind, Expr, LiteralKind, ParamKind};

pub(crate) fn validate(root: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    for node in root.descendants() {
        match node.kind() {
            ASSIGN_STMT => {
                let stmt = ast::AssignStmt::cast(node).expect("kind checked");
                for target in stmt.targets() {
                    check_target(&target, Target::Assign, errors);
                }
            }
            AUG_ASSIGN_STMT | ANN_ASSIGN_STMT => {
                let target = node.children().find_map(Expr::cast);
                if let Some(target) = target {
                    check_single_target(&target, node.kind() == AUG_ASSIGN_STMT, errors);
                }
            }
            FOR_STMT | COMP_FOR | WITH_ITEM => {
                let nth = if node.kind() == WITH_ITEM { 1 } else { 0 };
                if let Some(target) = node.children().filter_map(Expr::cast).nth(nth) {
                    check_target(&target, Target::Assign, errors);
                }
            }
            DEL_STMT => {
                for target in node.children().filter_map(Expr::cast) {
                    check_target(&target, Target::Delete, errors);
                }
            }
            ARG_LIST => check_args(&ast::ArgList::cast(node).expect("kind checked"), errors),
            LITERAL => check_string_parts(&node, errors),
            TRY_STMT => check_except_kinds(&node, errors),
            PARAM_LIST => check_params(&ast::ParamList::cast(node).expect("kind checked"), errors),
            _ => {}
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Assign,
    Delete,
}

fn check_target(e: &Expr, mode: Target, errors: &mut Vec<SyntaxError>) {
    match e {
        Expr::NameExpr(_) | Expr::AttributeExpr(_) | Expr::SubscriptExpr(_) => {}
        Expr::TupleExpr(t) => t.elements().for_each(|e| check_target(&e, mode, errors)),
        Expr::ListExpr(l) => l.elements().for_each(|e| check_target(&e, mode, errors)),
        Expr::ParenExpr(p) => {
            if let Some(inner) = p.expr() {
                check_target(&inner, mode, errors);
            }
        }
        Expr::StarredExpr(s) if mode == Target::Assign => {
            if let Some(inner) = s.expr() {
                check_target(&inner, mode, errors);
            }
        }
        other => {
            let verb = if mode == Target::Assign { "assign to" } else { "delete" };
            errors.push(SyntaxError::new(format!("cannot {verb} {}", describe(other)), range(other)));
        }
    }
}

/// Targets of `x += 1` and `x: T = v` must be one name, attribute or subscript.
fn check_single_target(e: &Expr, augmented: bool, errors: &mut Vec<SyntaxError>) {
    let inner = match e {
        Expr::ParenExpr(p) if !augmented => p.expr(),
        _ => Some(e.clone()),
    };
    match inner {
        Some(Expr::NameExpr(_) | Expr::AttributeExpr(_) | Expr::SubscriptExpr(_)) | None => {}
        Some(Expr::TupleExpr(_)) if !augmented => errors.push(SyntaxError::new(
            "only a single target (not a tuple) can be annotated".to_string(),
            range(e),
        )),
        Some(other) => {
            let message = if augmented {
                format!("{} is an illegal target for augmented assignment", describe(&other))
            } else {
                format!("{} cannot be annotated", describe(&other))
            };
            errors.push(SyntaxError::new(message, range(&other)));
        }
    }
}

fn describe(e: &Expr) -> &'static str {
    match e {
        Expr::Literal(l) => match l.kind() {
            Some(LiteralKind::True) => "`True`",
            Some(LiteralKind::False) => "`False`",
            Some(LiteralKind::None) => "`None`",
            Some(LiteralKind::Ellipsis) => "`...`",
            _ => "a literal",
        },
        Expr::CallExpr(_) => "a function call",
        Expr::BinExpr(_) | Expr::UnaryExpr(_) | Expr::BoolExpr(_) => "an expression",
        Expr::CompareExpr(_) => "a comparison",
        Expr::LambdaExpr(_) => "a lambda",
        Expr::CondExpr(_) => "a conditional expression",
        Expr::DictExpr(_) => "a dict literal",
        Expr::SetExpr(_) => "a set display",
        Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) => "a comprehension",
        Expr::GeneratorExpr(_) => "a generator expression",
        Expr::NamedExpr(_) => "a named expression",
        Expr::YieldExpr(_) => "a yield expression",
        Expr::AwaitExpr(_) => "an await expression",
        Expr::StarredExpr(_) => "a starred expression",
        Expr::Slice(_) => "a slice",
        Expr::TupleExpr(_) => "a tuple",
        Expr::ListExpr(_) => "a list",
        Expr::ParenExpr(_) | Expr::NameExpr(_) | Expr::AttributeExpr(_) | Expr::SubscriptExpr(_) => {
            "this expression"
        }
    }
}

fn range(e: &Expr) -> TextRange {
    let node = e.syntax();
    // Without trailing trivia: the node's first to last non-trivia token.
    let first = node.first_token().map(|t| t.text_range().start());
    let last = node.last_token().map(|t| t.text_range().end());
    match (first, last) {
        (Some(s), Some(e)) if s <= e => TextRange::new(s, e),
        _ => node.text_range(),
    }
}

fn check_args(list: &ast::ArgList, errors: &mut Vec<SyntaxError>) {
    let args: Vec<ast::Arg> = list.args().collect();
    let (mut keyword, mut unpack_keywords) = (false, false);
    for arg in &args {
        let r = arg.syntax().text_range();
        match arg.kind() {
            ArgKind::Positional if unpack_keywords => errors.push(SyntaxError::new(
                "positional argument follows keyword argument unpacking".to_string(),
                r,
            )),
            ArgKind::Positional if keyword => {
                errors.push(SyntaxError::new("positional argument follows keyword argument".to_string(), r))
            }
            ArgKind::Unpack if unpack_keywords => errors.push(SyntaxError::new(
                "iterable argument unpacking follows keyword argument unpacking".to_string(),
                r,
            )),
            ArgKind::Keyword => keyword = true,
            ArgKind::UnpackKeywords => unpack_keywords = true,
            _ => {}
        }
        if args.len() > 1
            && let Some(Expr::GeneratorExpr(g)) = arg.value()
            && ast::first_token(g.syntax()).is_none_or(|t| t.kind() != L_PAREN)
        {
            errors.push(SyntaxError::new(
                "generator expression must be parenthesized when it is not the only argument".to_string(),
                g.syntax().text_range(),
            ));
        }
    }
}

fn check_params(list: &ast::ParamList, errors: &mut Vec<SyntaxError>) {
    let params: Vec<ast::Param> = list.params().collect();
    let (mut default_seen, mut star_seen, mut slash_seen) = (false, false, false);
    for (i, param) in params.iter().enumerate() {
        let r = param.syntax().text_range();
        let mut error = |message: &str| errors.push(SyntaxError::new(message.to_string(), r));
        if i > 0 && params[i - 1].kind() == ParamKind::VarKeyword {
            error("no parameter may follow the `**` parameter");
            break;
        }
        match param.kind() {
            ParamKind::Normal => {
                if param.default().is_some() {
                    default_seen = true;
                } else if default_seen && !star_seen {
                    error("non-default argument follows default argument");
                }
            }
            ParamKind::VarPositional | ParamKind::KeywordOnlyMarker => {
                if star_seen {
                    error("`*` may appear only once in a parameter list");
                }
                star_seen = true;
                let next = params.get(i + 1).map(|p| p.kind());
                if param.kind() == ParamKind::KeywordOnlyMarker && !matches!(next, Some(ParamKind::Normal)) {
                    error("named arguments must follow bare `*`");
                }
            }
            ParamKind::PositionalOnlyMarker => {
                if i == 0 {
                    error("at least one argument must precede `/`");
                } else if slash_seen {
                    error("`/` may appear only once in a parameter list");
                } else if star_seen {
                    error("`/` must be ahead of `*`");
                }
                slash_seen = true;
            }
            ParamKind::VarKeyword => {}
        }
    }
}

/// Adjacent string literals concatenate, which Python refuses between `bytes` and `str`.
fn check_string_parts(node: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    let mut parts = node.children_with_tokens().filter_map(|e| e.into_token()).filter(|t| t.kind() == STRING);
    let Some(first) = parts.next() else { return };
    let is_bytes = |t: &crate::SyntaxToken| {
        t.text().chars().take_while(|c| c.is_ascii_alphabetic()).any(|c| c.eq_ignore_ascii_case(&'b'))
    };
    let first_bytes = is_bytes(&first);
    if let Some(other) = parts.find(|t| is_bytes(t) != first_bytes) {
        errors.push(SyntaxError::new(
            "cannot mix bytes and non-bytes literals".to_string(),
            TextRange::new(first.text_range().start(), other.text_range().end()),
        ));
    }
}

/// A `try` has `except` handlers or `except*` handlers, not both.
fn check_except_kinds(node: &SyntaxNode, errors: &mut Vec<SyntaxError>) {
    // `except*`: the clause's second token is the star.
    let star = |c: &SyntaxNode| {
        c.children_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| !t.kind().is_trivia())
            .nth(1)
            .is_some_and(|t| t.kind() == STAR)
    };
    let handlers: Vec<SyntaxNode> = node.children().filter(|c| c.kind() == EXCEPT_CLAUSE).collect();
    if let Some(first) = handlers.first() {
        let first_star = star(first);
        if let Some(other) = handlers.iter().find(|h| star(h) != first_star) {
            let head = ast::first_token(other).map_or(other.text_range(), |t| t.text_range());
            errors.push(SyntaxError::new(
                "cannot have both `except` and `except*` on the same `try`".to_string(),
                head,
            ));
        }
    }
}

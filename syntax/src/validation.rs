//! Checks on the finished tree for what Python's parser rejects but a context-free grammar
//! accepts: assignment and deletion targets, argument order, parameter order, bytes mixed with
//! str, `except` mixed with `except*`.
//!
//! The tree builder runs it on each node as it finishes it, with the node's offset: no red nodes
//! are allocated and the tree is not walked again, which keeps this a small part of parsing.

use rowan::{GreenNodeData, GreenTokenData, NodeOrToken, TextRange, TextSize};

use crate::SyntaxError;
use crate::SyntaxKind::{self, *};

type Element<'a> = NodeOrToken<&'a GreenNodeData, &'a GreenTokenData>;

fn kind_of(e: Element<'_>) -> SyntaxKind {
    SyntaxKind::from_raw(e.kind().0)
}

/// A green node with the offset where it starts.
#[derive(Clone, Copy)]
struct Node<'a> {
    green: &'a GreenNodeData,
    offset: TextSize,
}

impl<'a> Node<'a> {
    fn kind(self) -> SyntaxKind {
        SyntaxKind::from_raw(self.green.kind().0)
    }

    fn range(self) -> TextRange {
        TextRange::at(self.offset, self.green.text_len())
    }

    /// Children with their offsets.
    fn children(self) -> impl Iterator<Item = (Element<'a>, TextSize)> {
        let mut offset = self.offset;
        self.green.children().map(move |child| {
            let at = offset;
            offset += child.text_len();
            (child, at)
        })
    }

    fn child_nodes(self) -> impl Iterator<Item = Node<'a>> {
        self.children()
            .filter_map(|(e, offset)| e.into_node().map(|green| Node { green, offset }))
    }

    /// Child nodes that are expressions.
    fn exprs(self) -> impl Iterator<Item = Node<'a>> {
        self.child_nodes().filter(|n| is_expr(n.kind()))
    }

    /// Non-trivia child tokens, in order.
    fn tokens(self) -> impl Iterator<Item = (&'a GreenTokenData, TextSize)> {
        self.children().filter_map(|(e, offset)| match e {
            NodeOrToken::Token(t) if !SyntaxKind::from_raw(t.kind().0).is_trivia() => {
                Some((t, offset))
            }
            _ => None,
        })
    }

    fn has_token(self, kind: SyntaxKind) -> bool {
        self.tokens()
            .any(|(t, _)| SyntaxKind::from_raw(t.kind().0) == kind)
    }

    /// The kind of the first non-trivia child, node or token.
    fn first_kind(self) -> Option<SyntaxKind> {
        self.children()
            .map(|(e, _)| kind_of(e))
            .find(|k| !k.is_trivia())
    }
}

fn is_expr(kind: SyntaxKind) -> bool {
    (NAME_EXPR as u16..=AWAIT_EXPR as u16).contains(&(kind as u16))
        && !matches!(kind, ARG_LIST | ARG | DICT_ENTRY | COMP_FOR | COMP_IF)
}

/// Checks one finished node, starting at `offset`, for what its kind forbids. The tree builder
/// calls it as it finishes each node (shared ones at each place they occur), so no pass walks the
/// tree again.
pub(crate) fn validate_node(
    green: &GreenNodeData,
    offset: TextSize,
    errors: &mut Vec<SyntaxError>,
) {
    let node = Node { green, offset };
    match node.kind() {
        ASSIGN_STMT => {
            let targets: Vec<Node<'_>> = node.exprs().collect();
            for &target in &targets[..targets.len().saturating_sub(1)] {
                check_target(target, Target::Assign, errors);
            }
        }
        AUG_ASSIGN_STMT | ANN_ASSIGN_STMT => {
            if let Some(target) = node.exprs().next() {
                check_single_target(target, node.kind() == AUG_ASSIGN_STMT, errors);
            }
        }
        FOR_STMT | COMP_FOR => {
            if let Some(target) = node.exprs().next() {
                check_target(target, Target::Assign, errors);
            }
        }
        WITH_ITEM => {
            if let Some(target) = node.exprs().nth(1) {
                check_target(target, Target::Assign, errors);
            }
        }
        DEL_STMT => node
            .exprs()
            .for_each(|t| check_target(t, Target::Delete, errors)),
        ARG_LIST => check_args(node, errors),
        PARAM_LIST => check_params(node, errors),
        LITERAL => check_string_parts(node, errors),
        LITERAL_PATTERN => check_string_parts(node, errors),
        TRY_STMT => check_except_kinds(node, errors),
        _ => {}
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Assign,
    Delete,
}

fn check_target(e: Node<'_>, mode: Target, errors: &mut Vec<SyntaxError>) {
    match e.kind() {
        NAME_EXPR | ATTRIBUTE_EXPR | SUBSCRIPT_EXPR => {}
        TUPLE_EXPR | LIST_EXPR | PAREN_EXPR => {
            e.exprs().for_each(|t| check_target(t, mode, errors))
        }
        STARRED_EXPR if mode == Target::Assign => {
            e.exprs().for_each(|t| check_target(t, mode, errors))
        }
        _ => {
            let verb = if mode == Target::Assign {
                "assign to"
            } else {
                "delete"
            };
            errors.push(SyntaxError::new(
                format!("cannot {verb} {}", describe(e)),
                e.range(),
            ));
        }
    }
}

/// Targets of `x += 1` and `x: T = v` must be one name, attribute or subscript, in any number
/// of parentheses (Python's `single_target`).
fn check_single_target(e: Node<'_>, augmented: bool, errors: &mut Vec<SyntaxError>) {
    let mut inner = e;
    while inner.kind() == PAREN_EXPR {
        let Some(next) = inner.exprs().next() else {
            return;
        };
        inner = next;
    }
    let message = match inner.kind() {
        NAME_EXPR | ATTRIBUTE_EXPR | SUBSCRIPT_EXPR => return,
        TUPLE_EXPR if !augmented => {
            "only a single target (not a tuple) can be annotated".to_string()
        }
        _ if augmented => format!(
            "{} is an illegal target for augmented assignment",
            describe(inner)
        ),
        _ => format!("{} cannot be annotated", describe(inner)),
    };
    errors.push(SyntaxError::new(message, inner.range()));
}

fn describe(e: Node<'_>) -> &'static str {
    match e.kind() {
        LITERAL => match e.first_kind() {
            Some(TRUE_KW) => "`True`",
            Some(FALSE_KW) => "`False`",
            Some(NONE_KW) => "`None`",
            Some(ELLIPSIS) => "`...`",
            _ => "a literal",
        },
        CALL_EXPR => "a function call",
        BIN_EXPR | UNARY_EXPR | BOOL_EXPR => "an expression",
        COMPARE_EXPR => "a comparison",
        LAMBDA_EXPR => "a lambda",
        COND_EXPR => "a conditional expression",
        DICT_EXPR => "a dict literal",
        SET_EXPR => "a set display",
        LIST_COMP | SET_COMP | DICT_COMP => "a comprehension",
        GENERATOR_EXPR => "a generator expression",
        NAMED_EXPR => "a named expression",
        YIELD_EXPR => "a yield expression",
        AWAIT_EXPR => "an await expression",
        STARRED_EXPR => "a starred expression",
        SLICE => "a slice",
        TUPLE_EXPR => "a tuple",
        LIST_EXPR => "a list",
        _ => "this expression",
    }
}

#[derive(Clone, Copy, PartialEq)]
enum ArgKind {
    Positional,
    Keyword,
    Unpack,
    UnpackKeywords,
}

fn arg_kind(arg: Node<'_>) -> ArgKind {
    match arg.first_kind() {
        Some(STAR) => ArgKind::Unpack,
        Some(DOUBLE_STAR) => ArgKind::UnpackKeywords,
        Some(NAME) if arg.has_token(EQ) => ArgKind::Keyword,
        _ => ArgKind::Positional,
    }
}

fn check_args(list: Node<'_>, errors: &mut Vec<SyntaxError>) {
    let args: Vec<Node<'_>> = list.child_nodes().filter(|n| n.kind() == ARG).collect();
    let (mut keyword, mut unpack_keywords) = (false, false);
    for &arg in &args {
        let message = match arg_kind(arg) {
            ArgKind::Positional if unpack_keywords => {
                Some("positional argument follows keyword argument unpacking")
            }
            ArgKind::Positional if keyword => Some("positional argument follows keyword argument"),
            ArgKind::Unpack if unpack_keywords => {
                Some("iterable argument unpacking follows keyword argument unpacking")
            }
            ArgKind::Keyword => {
                keyword = true;
                None
            }
            ArgKind::UnpackKeywords => {
                unpack_keywords = true;
                None
            }
            _ => None,
        };
        if let Some(message) = message {
            errors.push(SyntaxError::new(message.to_string(), arg.range()));
        }
        if args.len() > 1
            && let Some(generator) = arg.exprs().find(|e| e.kind() == GENERATOR_EXPR)
            && generator.first_kind() != Some(L_PAREN)
        {
            errors.push(SyntaxError::new(
                "generator expression must be parenthesized when it is not the only argument"
                    .to_string(),
                generator.range(),
            ));
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum ParamKind {
    Normal { default: bool },
    VarPositional,
    KeywordOnlyMarker,
    VarKeyword,
    PositionalOnlyMarker,
}

fn param_kind(param: Node<'_>) -> ParamKind {
    match param.first_kind() {
        Some(STAR) if param.has_token(NAME) => ParamKind::VarPositional,
        Some(STAR) => ParamKind::KeywordOnlyMarker,
        Some(DOUBLE_STAR) => ParamKind::VarKeyword,
        Some(SLASH) => ParamKind::PositionalOnlyMarker,
        _ => ParamKind::Normal {
            default: param.has_token(EQ),
        },
    }
}

fn check_params(list: Node<'_>, errors: &mut Vec<SyntaxError>) {
    let params: Vec<(Node<'_>, ParamKind)> = list
        .child_nodes()
        .filter(|n| n.kind() == PARAM)
        .map(|n| (n, param_kind(n)))
        .collect();
    let (mut default_seen, mut star_seen, mut slash_seen) = (false, false, false);
    for (i, &(param, kind)) in params.iter().enumerate() {
        let mut error =
            |message: &str| errors.push(SyntaxError::new(message.to_string(), param.range()));
        if i > 0 && params[i - 1].1 == ParamKind::VarKeyword {
            error("no parameter may follow the `**` parameter");
            break;
        }
        match kind {
            ParamKind::Normal { default: true } => default_seen = true,
            ParamKind::Normal { default: false } => {
                if default_seen && !star_seen {
                    error("non-default argument follows default argument");
                }
            }
            ParamKind::VarPositional | ParamKind::KeywordOnlyMarker => {
                if star_seen {
                    error("`*` may appear only once in a parameter list");
                }
                star_seen = true;
                let next = params.get(i + 1).map(|p| p.1);
                if kind == ParamKind::KeywordOnlyMarker
                    && !matches!(next, Some(ParamKind::Normal { .. }))
                {
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
fn check_string_parts(node: Node<'_>, errors: &mut Vec<SyntaxError>) {
    let is_bytes = |t: &GreenTokenData| {
        t.text()
            .bytes()
            .take_while(u8::is_ascii_alphabetic)
            .any(|c| c.eq_ignore_ascii_case(&b'b'))
    };
    let mut parts = node
        .tokens()
        .filter(|(t, _)| SyntaxKind::from_raw(t.kind().0) == STRING);
    let Some((first, start)) = parts.next() else {
        return;
    };
    for (t, at) in node
        .tokens()
        .filter(|(t, _)| SyntaxKind::from_raw(t.kind().0) == STRING)
    {
        // An unterminated string is the lexer's error already.
        if let Some(lit) = crate::escapes::Literal::of(t.text()) {
            crate::escapes::check(&lit, at, errors);
            crate::fstring::check(&lit, at, errors);
        }
    }
    let first_bytes = is_bytes(first);
    if let Some((other, at)) = parts.find(|(t, _)| is_bytes(t) != first_bytes) {
        errors.push(SyntaxError::new(
            "cannot mix bytes and non-bytes literals".to_string(),
            TextRange::new(start, at + other.text_len()),
        ));
    }
}

/// A `try` has `except` handlers or `except*` handlers, not both.
fn check_except_kinds(node: Node<'_>, errors: &mut Vec<SyntaxError>) {
    // `except*`: the clause's second token is the star.
    let star = |c: Node<'_>| {
        c.tokens()
            .nth(1)
            .is_some_and(|(t, _)| SyntaxKind::from_raw(t.kind().0) == STAR)
    };
    let mut handlers = node.child_nodes().filter(|c| c.kind() == EXCEPT_CLAUSE);
    let Some(first) = handlers.next() else { return };
    let first_star = star(first);
    if let Some(other) = handlers.find(|&h| star(h) != first_star) {
        let head = other
            .tokens()
            .next()
            .map_or(other.range(), |(t, at)| TextRange::at(at, t.text_len()));
        errors.push(SyntaxError::new(
            "cannot have both `except` and `except*` on the same `try`".to_string(),
            head,
        ));
    }
}

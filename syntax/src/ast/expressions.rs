//! Expression nodes: names, literals, attributes, calls, subscripts, displays, operators, lambdas.

use super::{AstNode, ast_enum, ast_node, child, children, first_token, token};
use crate::SyntaxKind::{self, *};
use crate::SyntaxToken;

ast_node!(NameExpr, NAME_EXPR);
ast_node!(Literal, LITERAL);
ast_node!(AttributeExpr, ATTRIBUTE_EXPR);
ast_node!(CallExpr, CALL_EXPR);
ast_node!(ArgList, ARG_LIST);
ast_node!(Arg, ARG);
ast_node!(SubscriptExpr, SUBSCRIPT_EXPR);
ast_node!(Slice, SLICE);
ast_node!(TupleExpr, TUPLE_EXPR);
ast_node!(ParenExpr, PAREN_EXPR);
ast_node!(ListExpr, LIST_EXPR);
ast_node!(DictExpr, DICT_EXPR);
ast_node!(DictEntry, DICT_ENTRY);
ast_node!(SetExpr, SET_EXPR);
ast_node!(ListComp, LIST_COMP);
ast_node!(SetComp, SET_COMP);
ast_node!(DictComp, DICT_COMP);
ast_node!(GeneratorExpr, GENERATOR_EXPR);
ast_node!(CompFor, COMP_FOR);
ast_node!(CompIf, COMP_IF);
ast_node!(BinExpr, BIN_EXPR);
ast_node!(UnaryExpr, UNARY_EXPR);
ast_node!(BoolExpr, BOOL_EXPR);
ast_node!(CompareExpr, COMPARE_EXPR);
ast_node!(CondExpr, COND_EXPR);
ast_node!(LambdaExpr, LAMBDA_EXPR);
ast_node!(StarredExpr, STARRED_EXPR);
ast_node!(NamedExpr, NAMED_EXPR);
ast_node!(YieldExpr, YIELD_EXPR);
ast_node!(AwaitExpr, AWAIT_EXPR);
ast_node!(ParamList, PARAM_LIST);
ast_node!(Param, PARAM);

ast_enum!(
    /// Any expression. Comprehensions, `yield`, `await` and `:=` parse so they can be reported.
    Expr {
        NameExpr,
        Literal,
        AttributeExpr,
        CallExpr,
        SubscriptExpr,
        Slice,
        TupleExpr,
        ParenExpr,
        ListExpr,
        BinExpr,
        UnaryExpr,
        BoolExpr,
        CompareExpr,
        LambdaExpr,
        CondExpr,
        StarredExpr,
        DictExpr,
        SetExpr,
        ListComp,
        SetComp,
        DictComp,
        GeneratorExpr,
        NamedExpr,
        YieldExpr,
        AwaitExpr,
    }
);

impl NameExpr {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, NAME)
    }
    pub fn text(&self) -> String {
        self.name()
            .map(|t| t.text().to_string())
            .unwrap_or_default()
    }
}

/// What a literal is, with the decoded value where one is cheap to give.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteralKind {
    Int(Option<i128>),
    Float(Option<f64>),
    Imaginary,
    /// Adjacent string parts concatenated and unescaped; `bytes` for `b'...'`.
    String {
        value: String,
        bytes: bool,
        fstring: bool,
    },
    True,
    False,
    None,
    Ellipsis,
}

impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }

    /// The parts of an f-string (adjacent strings concatenated, plain ones as text), with each
    /// field's expression offset relative to the literal's start; `None` for other literals or
    /// one that does not scan.
    pub fn fstring_parts(&self) -> Option<Vec<crate::fstring::FStringPart>> {
        use crate::fstring::FStringPart;
        let start = self.syntax.text_range().start();
        let mut out = Vec::new();
        let mut any = false;
        for part in self
            .syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
        {
            if part.kind() != STRING {
                continue;
            }
            let s = decode_string(part.text());
            if !s.fstring {
                out.push(FStringPart::Text(s.value));
                continue;
            }
            any = true;
            let shift = usize::from(part.text_range().start() - start);
            for p in crate::fstring::parts(part.text())? {
                out.push(match p {
                    FStringPart::Field(mut f) => {
                        f.expr_offset += shift;
                        FStringPart::Field(f)
                    }
                    text => text,
                });
            }
        }
        any.then_some(out)
    }

    pub fn kind(&self) -> Option<LiteralKind> {
        let t = self.token()?;
        Some(match t.kind() {
            INT_NUMBER => LiteralKind::Int(parse_int(t.text())),
            FLOAT_NUMBER => LiteralKind::Float(t.text().replace('_', "").parse().ok()),
            IMAG_NUMBER => LiteralKind::Imaginary,
            TRUE_KW => LiteralKind::True,
            FALSE_KW => LiteralKind::False,
            NONE_KW => LiteralKind::None,
            ELLIPSIS => LiteralKind::Ellipsis,
            STRING => {
                let mut value = String::new();
                let (mut bytes, mut fstring) = (false, false);
                for part in self
                    .syntax
                    .children_with_tokens()
                    .filter_map(|e| e.into_token())
                {
                    if part.kind() == STRING {
                        let s = decode_string(part.text());
                        value.push_str(&s.value);
                        bytes |= s.bytes;
                        fstring |= s.fstring;
                    }
                }
                LiteralKind::String {
                    value,
                    bytes,
                    fstring,
                }
            }
            _ => return None,
        })
    }
}

fn parse_int(text: &str) -> Option<i128> {
    let digits = text.replace('_', "");
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = match lower.get(..2) {
        Some("0x") => (16, &lower[2..]),
        Some("0o") => (8, &lower[2..]),
        Some("0b") => (2, &lower[2..]),
        _ => (10, lower.as_str()),
    };
    i128::from_str_radix(body, radix).ok()
}

struct DecodedString {
    value: String,
    bytes: bool,
    fstring: bool,
}

/// Strips prefix and quotes and applies Python's escapes (raw strings keep them).
fn decode_string(text: &str) -> DecodedString {
    let prefix_len = text.find(['\'', '"']).unwrap_or(text.len());
    let prefix = text[..prefix_len].to_ascii_lowercase();
    let body = &text[prefix_len..];
    let quote = if body.starts_with("\"\"\"") || body.starts_with("'''") {
        3
    } else {
        1
    };
    let inner = if body.len() >= 2 * quote && (body.ends_with(&body[..quote])) {
        &body[quote..body.len() - quote]
    } else {
        body.get(quote..).unwrap_or("")
    };
    let value = if prefix.contains('r') {
        inner.to_string()
    } else {
        crate::escapes::unescape(inner)
    };
    DecodedString {
        value,
        bytes: prefix.contains('b'),
        fstring: prefix.contains('f'),
    }
}

impl AttributeExpr {
    /// `pto` in `pto.add`.
    pub fn receiver(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// `add` in `pto.add`.
    pub fn attr(&self) -> Option<SyntaxToken> {
        token(&self.syntax, NAME)
    }
}

impl CallExpr {
    pub fn callee(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn arg_list(&self) -> Option<ArgList> {
        child(&self.syntax)
    }
    pub fn args(&self) -> impl Iterator<Item = Arg> + use<> {
        self.arg_list().into_iter().flat_map(|l| l.args())
    }
}

impl ArgList {
    pub fn args(&self) -> impl Iterator<Item = Arg> + use<> {
        children(&self.syntax)
    }
}

/// How an argument is passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    Positional,
    Keyword,
    /// `*xs`
    Unpack,
    /// `**kw`
    UnpackKeywords,
}

impl Arg {
    pub fn kind(&self) -> ArgKind {
        match first_token(&self.syntax).map(|t| t.kind()) {
            Some(STAR) => ArgKind::Unpack,
            Some(DOUBLE_STAR) => ArgKind::UnpackKeywords,
            Some(NAME) if token(&self.syntax, EQ).is_some() => ArgKind::Keyword,
            _ => ArgKind::Positional,
        }
    }
    /// `x` in `f(x=X[b])`.
    pub fn keyword(&self) -> Option<SyntaxToken> {
        (self.kind() == ArgKind::Keyword)
            .then(|| token(&self.syntax, NAME))
            .flatten()
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl SubscriptExpr {
    /// `X` in `X[b, h]`.
    pub fn base(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// The index as written: one expression, a Slice, or a TupleExpr for `[b, h]`.
    pub fn index(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
    /// The indices, with `[b, h]` flattened: `b`, `h`.
    pub fn indices(&self) -> Vec<Expr> {
        match self.index() {
            Some(Expr::TupleExpr(t)) => t.elements().collect(),
            Some(e) => vec![e],
            None => Vec::new(),
        }
    }
}

impl Slice {
    /// The parts `lower : upper : step`, each absent when omitted.
    pub fn parts(&self) -> [Option<Expr>; 3] {
        let mut parts = [None, None, None];
        let mut i = 0;
        for e in self.syntax.children_with_tokens() {
            match e {
                rowan::NodeOrToken::Token(t) if t.kind() == COLON => i += 1,
                rowan::NodeOrToken::Node(n) => {
                    if let (Some(slot), Some(expr)) = (parts.get_mut(i), Expr::cast(n)) {
                        *slot = Some(expr);
                    }
                }
                _ => {}
            }
        }
        parts
    }
}

impl TupleExpr {
    pub fn elements(&self) -> impl Iterator<Item = Expr> + use<> {
        children(&self.syntax)
    }
    pub fn is_parenthesized(&self) -> bool {
        token(&self.syntax, L_PAREN).is_some()
    }
}

impl ParenExpr {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ListExpr {
    pub fn elements(&self) -> impl Iterator<Item = Expr> + use<> {
        children(&self.syntax)
    }
}

impl SetExpr {
    pub fn elements(&self) -> impl Iterator<Item = Expr> + use<> {
        children(&self.syntax)
    }
}

impl DictExpr {
    pub fn entries(&self) -> impl Iterator<Item = DictEntry> + use<> {
        children(&self.syntax)
    }
}

impl DictEntry {
    /// None for a `**mapping` entry.
    pub fn key(&self) -> Option<Expr> {
        if token(&self.syntax, DOUBLE_STAR).is_some() {
            None
        } else {
            child(&self.syntax)
        }
    }
    pub fn value(&self) -> Option<Expr> {
        if token(&self.syntax, DOUBLE_STAR).is_some() {
            child(&self.syntax)
        } else {
            children(&self.syntax).nth(1)
        }
    }
}

impl BinExpr {
    pub fn lhs(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn op(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn op_kind(&self) -> Option<SyntaxKind> {
        self.op().map(|t| t.kind())
    }
    pub fn rhs(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
}

impl BoolExpr {
    pub fn lhs(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// `and` or `or`.
    pub fn op_kind(&self) -> Option<SyntaxKind> {
        first_token(&self.syntax).map(|t| t.kind())
    }
    pub fn rhs(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
}

impl UnaryExpr {
    /// `-`, `+`, `~` or `not`.
    pub fn op_kind(&self) -> Option<SyntaxKind> {
        first_token(&self.syntax).map(|t| t.kind())
    }
    pub fn operand(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

/// A comparison operator; `not in` and `is not` are one operator each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Lt,
    Gt,
    LtEq,
    GtEq,
    Eq,
    NotEq,
    In,
    NotIn,
    Is,
    IsNot,
}

impl CompareExpr {
    /// The operands in order: `a`, `b`, `c` in `a < b <= c`.
    pub fn operands(&self) -> impl Iterator<Item = Expr> + use<> {
        children(&self.syntax)
    }
    pub fn ops(&self) -> Vec<CompareOp> {
        let tokens: Vec<SyntaxKind> = self
            .syntax
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .map(|t| t.kind())
            .filter(|k| !k.is_trivia())
            .collect();
        let mut ops = Vec::new();
        let mut i = 0;
        while i < tokens.len() {
            let next = tokens.get(i + 1).copied();
            let op = match (tokens[i], next) {
                (LT, _) => CompareOp::Lt,
                (GT, _) => CompareOp::Gt,
                (LT_EQ, _) => CompareOp::LtEq,
                (GT_EQ, _) => CompareOp::GtEq,
                (EQ_EQ, _) => CompareOp::Eq,
                (NOT_EQ, _) => CompareOp::NotEq,
                (IN_KW, _) => CompareOp::In,
                (NOT_KW, Some(IN_KW)) => {
                    i += 1;
                    CompareOp::NotIn
                }
                (IS_KW, Some(NOT_KW)) => {
                    i += 1;
                    CompareOp::IsNot
                }
                (IS_KW, _) => CompareOp::Is,
                _ => {
                    i += 1;
                    continue;
                }
            };
            ops.push(op);
            i += 1;
        }
        ops
    }
}

impl CondExpr {
    /// `a`, `c`, `b` in `a if c else b`.
    pub fn then_branch(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn condition(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
    pub fn else_branch(&self) -> Option<Expr> {
        children(&self.syntax).nth(2)
    }
}

impl LambdaExpr {
    pub fn param_list(&self) -> Option<ParamList> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl StarredExpr {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl NamedExpr {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, NAME)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ParamList {
    pub fn params(&self) -> impl Iterator<Item = Param> + use<> {
        children(&self.syntax)
    }
}

/// What sort of parameter a `Param` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    Normal,
    /// `*args`
    VarPositional,
    /// bare `*`
    KeywordOnlyMarker,
    /// `**kwargs`
    VarKeyword,
    /// `/`
    PositionalOnlyMarker,
}

impl Param {
    pub fn kind(&self) -> ParamKind {
        match first_token(&self.syntax).map(|t| t.kind()) {
            Some(STAR) if self.name().is_some() => ParamKind::VarPositional,
            Some(STAR) => ParamKind::KeywordOnlyMarker,
            Some(DOUBLE_STAR) => ParamKind::VarKeyword,
            Some(SLASH) => ParamKind::PositionalOnlyMarker,
            _ => ParamKind::Normal,
        }
    }
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, NAME)
    }
    /// `In[Tile[16, 128, F32]]` in `x: In[Tile[16, 128, F32]]`.
    pub fn annotation(&self) -> Option<Expr> {
        token(&self.syntax, COLON)?;
        child(&self.syntax)
    }
    /// `1e-6` in `eps: Scalar[F32] = 1e-6`.
    pub fn default(&self) -> Option<Expr> {
        token(&self.syntax, EQ)?;
        children(&self.syntax).last()
    }
}

impl YieldExpr {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl AwaitExpr {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl GeneratorExpr {
    pub fn element(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn clauses(&self) -> impl Iterator<Item = CompFor> + use<> {
        children(&self.syntax)
    }
}

impl CompFor {
    pub fn target(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn iterable(&self) -> Option<Expr> {
        children(&self.syntax).nth(1)
    }
    pub fn conditions(&self) -> impl Iterator<Item = CompIf> + use<> {
        children(&self.syntax)
    }
}

impl CompIf {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

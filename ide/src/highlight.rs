//! The file's structure for the editor: a class for every token (semantic highlighting), read
//! off the checker's record of what each name refers to, and the ranges that fold.

use wsp_analysis::semantic::{
    Builtin, Symbol, SymbolKind, item_offsets, item_uses, module_items, symbol_kind,
};
use wsp_analysis::{File, semantic};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, SyntaxToken, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenClass {
    Keyword,
    Comment,
    String,
    Number,
    Decorator,
    /// A `pto_wsp` namespace: `pto`, `P`, `DType`, `DispatchPolicy`, ...
    Namespace,
    /// A `pto_wsp` type or constructor: `Tensor`, `Dense`, `In`, `Tile`, ...
    Type,
    /// A kernel, a workload, a `pto.*` op or a `pto_wsp` function.
    Function,
    /// A schedule or program method.
    Method,
    /// A namespace member: `DType.F32`, `P.seq`, `DispatchPolicy.round_robin`.
    Member,
    Parameter,
    Variable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Highlight {
    pub range: TextRange,
    pub class: TokenClass,
    /// Where the name is bound.
    pub definition: bool,
    /// A module-level value (tensor, axis, constant, ...), bound once.
    pub readonly: bool,
    /// A `pto_wsp` name.
    pub library: bool,
}

/// Every token that has a class, in order.
pub fn highlights(db: &dyn salsa::Database, file: File) -> Vec<Highlight> {
    let mut out = Vec::new();
    let items = module_items(db, file);
    let offsets = item_offsets(db, file);
    let mut at = 0;
    while at < items.len() {
        // The items of one statement (`a, b = ...` makes one per name) share its tokens: their
        // uses are walked together, once.
        let base = offsets[at];
        let group = offsets[at..].iter().take_while(|&&o| o == base).count();
        let statement = &items[at..at + group];
        at += group;
        let item = statement[0];
        let mut uses: Vec<_> = statement
            .iter()
            .flat_map(|&i| item_uses(db, i).iter().cloned())
            .collect();
        if group > 1 {
            uses.sort_by_key(|u| (u.range.start(), u.range.end()));
        }
        let mut next = 0;
        let root = item.syntax(db);
        for token in root
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
        {
            let range = token.text_range();
            while next < uses.len() && uses[next].range.end() <= range.start() {
                next += 1;
            }
            let found = uses
                .get(next)
                .filter(|u| u.range.contains_range(range) && token.kind() == SyntaxKind::NAME);
            let h = match found {
                Some(u) => {
                    let kind = symbol_kind(db, u.symbol);
                    let definition = match u.symbol {
                        Symbol::Local { def, .. } => def == u.range,
                        Symbol::Item(i) => {
                            statement.contains(&i) && semantic::name_range(db, i) == Some(u.range)
                        }
                    };
                    Some(Highlight {
                        range,
                        class: match kind {
                            SymbolKind::Kernel | SymbolKind::Workload => TokenClass::Function,
                            SymbolKind::Parameter => TokenClass::Parameter,
                            _ => TokenClass::Variable,
                        },
                        definition,
                        readonly: !matches!(
                            kind,
                            SymbolKind::Parameter
                                | SymbolKind::Variable
                                | SymbolKind::Kernel
                                | SymbolKind::Workload
                        ),
                        library: false,
                    })
                }
                None => classify(&token).map(|(class, library)| Highlight {
                    range,
                    class,
                    definition: false,
                    readonly: false,
                    library,
                }),
            };
            out.extend(h.map(|h| Highlight {
                range: h.range + base,
                ..h
            }));
        }
    }
    out
}

/// A token the checker did not resolve to a symbol of the file: its class, and whether it is
/// a `pto_wsp` name.
fn classify(token: &SyntaxToken) -> Option<(TokenClass, bool)> {
    let kind = token.kind();
    Some(match kind {
        SyntaxKind::COMMENT => (TokenClass::Comment, false),
        SyntaxKind::STRING => (TokenClass::String, false),
        SyntaxKind::INT_NUMBER | SyntaxKind::FLOAT_NUMBER | SyntaxKind::IMAG_NUMBER => {
            (TokenClass::Number, false)
        }
        SyntaxKind::AT
            if token
                .parent()
                .is_some_and(|p| p.kind() == SyntaxKind::DECORATOR) =>
        {
            (TokenClass::Decorator, false)
        }
        k if k.is_keyword() => (TokenClass::Keyword, false),
        SyntaxKind::NAME => return classify_name(token),
        _ => return None,
    })
}

fn classify_name(token: &SyntaxToken) -> Option<(TokenClass, bool)> {
    let parent = token.parent()?;
    if parent
        .ancestors()
        .any(|a| a.kind() == SyntaxKind::DECORATOR)
    {
        return Some((TokenClass::Decorator, true));
    }
    // `param=` in a call: a keyword the checker did not tie to a kernel or workload.
    if ast::Arg::cast(parent.clone()).is_some_and(|a| a.keyword().is_some_and(|k| k == *token)) {
        return Some((TokenClass::Parameter, false));
    }
    if let Some(attr) = ast::AttributeExpr::cast(parent.clone())
        && attr.attr().is_some_and(|a| a == *token)
    {
        let receiver = match attr.receiver() {
            Some(Expr::NameExpr(n)) => Builtin::lookup(&n.text()),
            _ => None,
        };
        return Some(match receiver {
            Some(Builtin::Pto | Builtin::Tl) => (TokenClass::Function, true),
            Some(_) => (TokenClass::Member, true),
            // `program.execute()` calls a method; `program.stats` reads a member.
            None if attr
                .syntax()
                .parent()
                .is_some_and(|p| ast::CallExpr::can_cast(p.kind())) =>
            {
                (TokenClass::Method, false)
            }
            None => (TokenClass::Member, false),
        });
    }
    let b = Builtin::lookup(token.text())?;
    let class = if matches!(
        b,
        Builtin::Pto | Builtin::Tl | Builtin::DType | Builtin::WindowMode
    ) || !b.members().is_empty()
    {
        TokenClass::Namespace
    } else if b.name().starts_with(char::is_uppercase) {
        TokenClass::Type
    } else {
        TokenClass::Function
    };
    Some((class, true))
}

//! Completion. Every candidate comes from a table the checker reads (the op
//! table, the vocabulary, `member_names`) or from what it resolved (scopes, signatures); which
//! names are visible where is read off the checker's record of uses and blocks.

use crate::symbols::{annotation_text, item_detail};
use wsp_analysis::semantic::{
    Builtin, Item, ItemKind, Symbol, SymbolKind, Value, item_at, item_kind, kernel_body,
    kernel_signature, member_names, member_rows, method, module_scope, scope_at, symbol_kind,
    value_of, workload_generic, workload_params,
};
use wsp_analysis::{File, ops};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize, TokenAtOffset};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub label: String,
    pub kind: CompletionKind,
    /// A signature or a type.
    pub detail: String,
    /// Markdown.
    pub doc: String,
    /// What to insert, when it is not the label (`x=` for a keyword argument).
    pub insert: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionKind {
    /// A `pto.*` op.
    Op,
    /// A member of a namespace (`P.seq`, `DType.F32`, `DispatchPolicy.round_robin`).
    Member,
    /// A method of a schedule or program.
    Method,
    /// A parameter given by keyword in a call.
    Keyword,
    Builtin,
    Symbol(SymbolKind),
}

/// What may be written at `offset`.
pub fn completions(db: &dyn salsa::Database, file: File, offset: TextSize) -> Vec<Completion> {
    let Some((item, base)) = item_at(db, file, offset) else {
        return names_in_scope(db, file, None, offset);
    };
    let root = item.syntax(db);
    let local = offset - base;
    let Some(anchor) = anchor(&root, local) else {
        return names_in_scope(db, file, Some(item), local);
    };
    // `receiver.|`
    if anchor.kind() == SyntaxKind::DOT {
        let receiver = anchor
            .parent()
            .and_then(ast::AttributeExpr::cast)
            .and_then(|a| a.receiver());
        return receiver.map_or_else(Vec::new, |r| members(db, item, &r));
    }
    let mut out = Vec::new();
    if matches!(anchor.kind(), SyntaxKind::L_PAREN | SyntaxKind::COMMA)
        && let Some(call) = anchor
            .parent()
            .and_then(ast::ArgList::cast)
            .and_then(|l| l.syntax().parent())
            .and_then(ast::CallExpr::cast)
    {
        out.extend(keywords(db, item, &call));
    }
    out.extend(names_in_scope(db, file, Some(item), local));
    out
}

/// The token before the cursor that decides what may follow, skipping trivia and the name
/// being typed.
fn anchor(root: &SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    let mut token = match root.token_at_offset(offset) {
        TokenAtOffset::None => return None,
        TokenAtOffset::Single(t) if t.text_range().start() == offset => t.prev_token()?,
        TokenAtOffset::Single(t) => t,
        TokenAtOffset::Between(l, _) => l,
    };
    if token.kind() == SyntaxKind::NAME || token.kind().is_keyword() {
        token = token.prev_token()?;
    }
    while token.kind().is_trivia() || token.kind() == SyntaxKind::INDENT {
        token = token.prev_token()?;
    }
    Some(token)
}

fn members(db: &dyn salsa::Database, item: Item<'_>, receiver: &Expr) -> Vec<Completion> {
    if let Expr::NameExpr(n) = receiver
        && matches!(n.text().as_str(), "pto" | "tl")
    {
        return ops::all()
            .map(|op| Completion {
                label: op.name.to_string(),
                kind: CompletionKind::Op,
                detail: op.signature(),
                doc: op.doc.to_string(),
                insert: None,
            })
            .collect();
    }
    let value = value_of(db, item, receiver);
    let kind = match &value {
        Value::Builtin(_) => CompletionKind::Member,
        _ => CompletionKind::Method,
    };
    member_names(&value)
        .into_iter()
        .map(|m| {
            let (detail, doc) = match &value {
                Value::Builtin(b) => {
                    let own = b.member(m).map_or("", |row| row.doc);
                    let doc = if own.is_empty() {
                        b.doc()
                    } else {
                        own.to_string()
                    };
                    (format!("{}.{m}", b.name()), doc)
                }
                _ if !member_rows(&value).is_empty() => {
                    let doc = method(member_rows(&value), m).map_or_else(String::new, |row| {
                        format!("`{}`: {}", row.signature(), row.doc)
                    });
                    (format!(".{m}"), doc)
                }
                _ => (format!(".{m}"), String::new()),
            };
            Completion {
                label: m.to_string(),
                kind,
                detail,
                doc,
                insert: None,
            }
        })
        .collect()
}

/// The parameters of the kernel or workload a call names that it does not give yet.
fn keywords(db: &dyn salsa::Database, item: Item<'_>, call: &ast::CallExpr) -> Vec<Completion> {
    let Some(target) = callee_item(db, item, call) else {
        return Vec::new();
    };
    let given: Vec<String> = call
        .args()
        .filter_map(|a| a.keyword().map(|k| k.text().to_string()))
        .collect();
    let params: Vec<(String, String)> = match target.kind(db) {
        ItemKind::Kernel => kernel_signature(db, target)
            .params
            .iter()
            .map(|p| (p.name.clone(), p.ty.to_string()))
            .collect(),
        _ => workload_params(db, target)
            .0
            .iter()
            .map(|p| {
                (
                    p.name.clone(),
                    format!("a parameter of `{}`", target.name(db)),
                )
            })
            .collect(),
    };
    params
        .into_iter()
        .filter(|(name, _)| !given.contains(name))
        .map(|(name, detail)| Completion {
            insert: Some(format!("{name}=")),
            label: format!("{name}="),
            kind: CompletionKind::Keyword,
            detail,
            doc: String::new(),
        })
        .collect()
}

/// The kernel of `k[...](...)` or the workload of `w(...)`.
pub(crate) fn callee_item<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    call: &ast::CallExpr,
) -> Option<Item<'db>> {
    let name = match call.callee()? {
        Expr::SubscriptExpr(s) => s.base()?,
        e => e,
    };
    let Expr::NameExpr(n) = name else { return None };
    let target = module_scope(db, item.file(db)).lookup(&n.text())?.item;
    matches!(target.kind(db), ItemKind::Kernel | ItemKind::Workload).then_some(target)
}

fn names_in_scope(
    db: &dyn salsa::Database,
    file: File,
    item: Option<Item<'_>>,
    offset: TextSize,
) -> Vec<Completion> {
    let mut out: Vec<Completion> = Vec::new();
    let mut push = |c: Completion| {
        if !out.iter().any(|o| o.label == c.label) {
            out.push(c);
        }
    };
    for entry in scope_at(db, file, item, offset) {
        let (kind, detail) = match entry.symbol {
            Symbol::Item(target) => (item_kind(db, target), item_detail(db, target)),
            Symbol::Local { item, def } => {
                (symbol_kind(db, entry.symbol), local_detail(db, item, def))
            }
        };
        push(Completion {
            label: entry.name,
            kind: CompletionKind::Symbol(kind),
            detail,
            doc: String::new(),
            insert: None,
        });
    }
    // A Python module (`math`) is a name only after its `import`.
    let scope = module_scope(db, file);
    for b in Builtin::ALL
        .iter()
        .filter(|b| !b.is_module() || scope.import_of(**b).is_some())
    {
        push(Completion {
            label: b.name().to_string(),
            kind: CompletionKind::Builtin,
            detail: String::new(),
            doc: b.doc(),
            insert: None,
        });
    }
    out
}

/// What a local is, in a few words: a kernel value's type, "loop variable", a workload
/// parameter's annotation.
fn local_detail(db: &dyn salsa::Database, item: Item<'_>, def: TextRange) -> String {
    match item.kind(db) {
        ItemKind::Kernel => kernel_signature(db, item)
            .params
            .iter()
            .find(|p| p.range == def)
            .map(|p| p.ty.to_string())
            .or_else(|| {
                kernel_body(db, item)
                    .types
                    .iter()
                    .find(|(r, _)| *r == def)
                    .map(|(_, t)| t.to_string())
            })
            .unwrap_or_default(),
        _ if workload_generic(db, item)
            .blocks
            .iter()
            .any(|b| b.header.contains_range(def)) =>
        {
            "loop variable".into()
        }
        _ => workload_params(db, item)
            .0
            .iter()
            .find(|p| p.range == def)
            .map(|p| annotation_text(p.annotation))
            .unwrap_or_default(),
    }
}

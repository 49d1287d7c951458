//! The item tree: one item per top-level statement, named by what it binds (one per name for
//! `B, S = 2, 16`, sharing the statement). An item's identity
//! is its file, kind and name, and its syntax (position-free, a green node) is a tracked field:
//! editing one definition changes only that item's syntax, so only queries reading it re-run.

use std::collections::HashMap;

use wsp_syntax::ast::{self, AstNode, Expr, Stmt};
use wsp_syntax::{GreenNode, SyntaxNode, TextSize};

use crate::files::File;

/// How many kinds of item there are (`ItemKind`'s variants, `Other` the last).
const ITEM_KINDS: usize = ItemKind::Other as usize + 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ItemKind {
    Import,
    /// `NAME = expr`
    Assign,
    /// `@kernel` / `@jit_kernel`
    Kernel,
    /// `@workload`
    Workload,
    /// `program.execute()`, `print(...)`, ...; and the blocks a file runs at module level:
    /// `with open(...) as f: json.dump(...)` and `for NAME in LIST: print(...)`.
    Expr,
    /// Anything else (an unsupported statement, a def without a known decorator, ...).
    Other,
}

#[salsa::tracked(debug)]
pub struct Item<'db> {
    #[returns(copy)]
    pub file: File,
    #[returns(copy)]
    pub kind: ItemKind,
    /// What the item binds; empty for imports and expression statements.
    #[returns(ref)]
    pub name: String,
    /// How many earlier items of the file have the same kind and name. Salsa tells apart
    /// structs with equal identity fields by a counter, but files them under one hash, so
    /// 80,000 `pass` statements made one chain probed 80,000 times: distinct fields keep the
    /// identity map linear, and identity the same as salsa's own counter would give.
    #[returns(copy)]
    pub occurrence: u32,
    #[tracked]
    #[returns(ref)]
    pub green: ItemSyntax,
}

/// An item's statement as a position-free green node. Two are equal when they are the same
/// node, as every statement an edit does not touch stays (`Parse::reparse`), or else the same
/// tree; the address comes first so that an edit does not compare the whole file.
#[derive(Debug, Clone, Eq)]
pub struct ItemSyntax(GreenNode);

impl PartialEq for ItemSyntax {
    fn eq(&self, other: &ItemSyntax) -> bool {
        std::ptr::eq(&*self.0, &*other.0) || self.0 == other.0
    }
}

impl std::ops::Deref for ItemSyntax {
    type Target = GreenNode;
    fn deref(&self) -> &GreenNode {
        &self.0
    }
}

impl<'db> Item<'db> {
    /// The item's statement, with offsets relative to its start.
    pub fn syntax(self, db: &'db dyn salsa::Database) -> SyntaxNode {
        SyntaxNode::new_root(GreenNode::clone(self.green(db)))
    }

    pub fn stmt(self, db: &'db dyn salsa::Database) -> Option<Stmt> {
        Stmt::cast(self.syntax(db))
    }
}

/// The file's items, in order.
#[salsa::tracked(returns(ref))]
pub fn module_items(db: &dyn salsa::Database, file: File) -> Vec<Item<'_>> {
    let tree = file.parse(db).tree();
    // Each name's items so far, by kind (`ItemKind as usize`): looked up by `&str`, so a name
    // is copied once, not once per statement.
    let mut seen: HashMap<String, [u32; ITEM_KINDS]> =
        HashMap::with_capacity(tree.syntax().green().children().len());
    let mut items: Vec<Item<'_>> = tree
        .statements()
        .flat_map(|stmt| {
            let green = ItemSyntax(stmt.syntax().green().into_owned());
            crate::work::step(1);
            // `B, S = 2, 16` binds two names: one item each, sharing the statement.
            classify(&stmt)
                .into_iter()
                .map(|(kind, name)| {
                    let counts = match seen.get_mut(name.as_str()) {
                        Some(counts) => counts,
                        None => seen.entry(name.clone()).or_default(),
                    };
                    let occurrence = counts[kind as usize];
                    counts[kind as usize] += 1;
                    Item::new(db, file, kind, name, occurrence, green.clone())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Kept for the file's life: no growth slack (a file may have millions of statements).
    items.shrink_to_fit();
    items
}

/// What one name of an unpacking assignment takes.
pub(crate) enum Part {
    /// `B, S = 2, 16`: the value written for it.
    Own(Expr),
    /// `best, summary = scheduler.explore(space)`: element `i` of the value's tuple.
    Element(Expr, usize),
}

/// Each name of a module-level assignment that unpacks into names, with what it takes: its own
/// value when the tuple is written out with one value per name, else an element of the value.
pub(crate) fn unpacked(stmt: &Stmt) -> Option<Vec<(ast::NameExpr, Part)>> {
    let Stmt::AssignStmt(a) = stmt else {
        return None;
    };
    let targets: Vec<Expr> = a.targets().collect();
    let [target] = targets.as_slice() else {
        return None;
    };
    let names: Vec<Expr> = match target {
        Expr::TupleExpr(t) => t.elements().collect(),
        Expr::ListExpr(l) => l.elements().collect(),
        _ => return None,
    };
    let value = a.value()?;
    let values: Option<Vec<Expr>> = match &value {
        Expr::TupleExpr(t) => Some(t.elements().collect()),
        Expr::ListExpr(l) => Some(l.elements().collect()),
        _ => None,
    };
    if names.is_empty() {
        return None;
    }
    let parts: Vec<Part> = match values {
        Some(values) if values.len() == names.len() => values.into_iter().map(Part::Own).collect(),
        _ => (0..names.len())
            .map(|i| Part::Element(value.clone(), i))
            .collect(),
    };
    names
        .into_iter()
        .zip(parts)
        .map(|(n, v)| match n {
            Expr::NameExpr(n) => Some((n, v)),
            _ => None,
        })
        .collect()
}

/// How many names an unpacking assignment binds (0 for any other statement).
pub(crate) fn unpacked_count(stmt: &Option<Stmt>) -> usize {
    stmt.as_ref().and_then(unpacked).map_or(0, |p| p.len())
}

/// Where each item starts in the file (re-computed on every edit, read only to place results).
#[salsa::tracked(returns(ref))]
pub fn item_offsets(db: &dyn salsa::Database, file: File) -> Vec<TextSize> {
    let mut offsets: Vec<TextSize> = file
        .parse(db)
        .tree()
        .statements()
        .flat_map(|s| {
            let start = s.syntax().text_range().start();
            std::iter::repeat_n(start, item_count(&s))
        })
        .collect();
    offsets.shrink_to_fit();
    offsets
}

/// How many items a statement makes (`classify(stmt).len()`), without classifying the ones
/// that make one: every statement but an assignment to a tuple or list of names.
fn item_count(stmt: &Stmt) -> usize {
    if unpacks(stmt) {
        classify(stmt).len()
    } else {
        1
    }
}

/// Whether `stmt` assigns to a tuple or list, so that it may bind several names (`unpacked`).
fn unpacks(stmt: &Stmt) -> bool {
    matches!(stmt, Stmt::AssignStmt(_))
        && matches!(
            stmt.syntax().children().find_map(Expr::cast),
            Some(Expr::TupleExpr(_) | Expr::ListExpr(_))
        )
}

/// The items a statement makes: its kind and the name each binds (several for unpacking).
fn classify(stmt: &Stmt) -> Vec<(ItemKind, String)> {
    if unpacks(stmt)
        && let Some(pairs) = unpacked(stmt)
    {
        return pairs
            .into_iter()
            .map(|(n, _)| (ItemKind::Assign, n.text()))
            .collect();
    }
    vec![classify_one(stmt)]
}

fn classify_one(stmt: &Stmt) -> (ItemKind, String) {
    match stmt {
        Stmt::FromImportStmt(_) | Stmt::ImportStmt(_) => (ItemKind::Import, String::new()),
        Stmt::AssignStmt(a) => {
            let targets: Vec<Expr> = a.targets().collect();
            match targets.as_slice() {
                [Expr::NameExpr(n)] => (ItemKind::Assign, n.text()),
                _ => (ItemKind::Other, String::new()),
            }
        }
        Stmt::FunctionDef(f) => {
            let name = f.name().map(|t| t.text().to_string()).unwrap_or_default();
            let kind = match def_decorator(f).as_deref() {
                Some("kernel" | "jit_kernel") => ItemKind::Kernel,
                Some("workload") => ItemKind::Workload,
                _ => ItemKind::Other,
            };
            (kind, name)
        }
        Stmt::ExprStmt(_) | Stmt::WithStmt(_) | Stmt::ForStmt(_) => (ItemKind::Expr, String::new()),
        _ => (ItemKind::Other, String::new()),
    }
}

/// The name of a def's only decorator (`@kernel`, `@kernel(...)`, `@pto_wsp.kernel`).
pub(crate) fn def_decorator(f: &ast::FunctionDef) -> Option<String> {
    let mut decorators = f.decorators();
    let d = decorators.next()?;
    if decorators.next().is_some() {
        return None;
    }
    let mut e = d.expr()?;
    if let Expr::CallExpr(c) = &e {
        e = c.callee()?;
    }
    match e {
        Expr::NameExpr(n) => Some(n.text()),
        Expr::AttributeExpr(a) => a.attr().map(|t| t.text().to_string()),
        _ => None,
    }
}

/// Whether a statement is a def's docstring: a plain string as the first statement of its body,
/// which Python keeps as documentation and runs as nothing.
pub(crate) fn is_docstring(stmt: &Stmt) -> bool {
    let Stmt::ExprStmt(s) = stmt else {
        return false;
    };
    let Some(Expr::Literal(l)) = s.expr() else {
        return false;
    };
    let plain = matches!(
        l.kind(),
        Some(ast::LiteralKind::String {
            bytes: false,
            fstring: false,
            ..
        })
    );
    let block = stmt.syntax().parent();
    let first = block
        .as_ref()
        .cloned()
        .and_then(ast::Block::cast)
        .and_then(|b| b.statements().next())
        .is_some_and(|f| f.syntax() == stmt.syntax());
    let of_def = block
        .and_then(|b| b.parent())
        .is_some_and(|d| ast::FunctionDef::can_cast(d.kind()));
    plain && first && of_def
}

//! The semantic model: the one door the editor features (`wsp-ide`) have into the checker.
//! It answers what an editor asks — the item at an offset, what a name refers to and where it
//! is bound, the names in scope, the value (type) of an expression, the members of a value,
//! a builtin's row — and re-exports the facts the checker computed (kernel signatures and
//! bodies, workload plans, module values) as read-only data. Nothing here reports
//! diagnostics: evaluating an expression for an editor drops what evaluating it found.

use crate::diagnostics::Severity;
use crate::eval::Eval;
pub use crate::eval::{Annotation, item_value, workload_params};
use crate::files::File;
pub use crate::items::{Item, ItemKind, item_offsets, module_items};
pub use crate::kernels::{KernelSignature, kernel_body, kernel_signature};
pub use crate::names::{module_scope, name_range};
pub use crate::symbols::Symbol;
use crate::symbols::Use;
pub use crate::types::shape_text;
pub use crate::values::schedule::{Applicability, applicability};
pub use crate::values::{Axis, AxisKind, Composite, Init, IntSource, Tensor, TensorOrigin, Value};
pub use crate::vocabulary::{
    Builtin, Member, PROCESS_METHODS, PROGRAM_MEMBERS, Param, SCHEDULE_METHODS, method,
};
pub use crate::workloads::{
    Block, BlockKind, LoopVar, PlanNode, TaskArg, first_call_plan, plan_nodes, static_task_count,
    workload_generic,
};
use crate::workloads::{process_generic, workload_instance};
use wsp_syntax::ast::{self, AstNode, Expr};
use wsp_syntax::{SyntaxKind, SyntaxToken, TextRange, TextSize};

/// Whether a workload's body has errors (its plan then lacks what they broke).
pub fn body_has_errors(db: &dyn salsa::Database, item: Item<'_>) -> bool {
    let checks = crate::checks::body_checks(db, item);
    workload_generic(db, item)
        .diags
        .iter()
        .chain(&checks)
        .any(|d| d.severity() == Severity::Error)
}

/// The value of `expr` evaluated in `item`'s module scope (the type an editor shows), without
/// its diagnostics.
pub fn value_of<'db>(db: &'db dyn salsa::Database, item: Item<'db>, expr: &Expr) -> Value<'db> {
    Eval::new(db, item).expr(expr)
}

/// Every name in an item that refers to a symbol of the file (definitions included), in order.
#[salsa::tracked(returns(ref))]
pub fn item_uses<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Use<'db>> {
    let mut uses = Vec::new();
    if let Some(r) = name_range(db, item).filter(|_| !item.name(db).is_empty()) {
        uses.push(Use::new(r, Symbol::Item(item)));
    }
    match item.kind(db) {
        ItemKind::Kernel => {
            uses.extend_from_slice(&kernel_signature(db, item).uses);
            uses.extend_from_slice(&kernel_body(db, item).uses);
        }
        ItemKind::Workload => uses.extend_from_slice(&workload_generic(db, item).uses),
        ItemKind::Assign | ItemKind::Expr => {
            let value = item_value(db, item);
            uses.extend_from_slice(&value.uses);
            // The bodies of the processes it binds or `connect`s in place.
            uses.extend_from_slice(&process_generic(db, item).uses);
            for &call in value.calls.iter().filter(|c| c.workload(db) == item) {
                uses.extend_from_slice(&workload_instance(db, call).0.uses);
            }
        }
        ItemKind::Import | ItemKind::Other => {}
    }
    uses.sort_by_key(|u| (u.range.start(), u.range.end()));
    uses.dedup();
    uses
}

/// What kind of thing a symbol is, for symbols and semantic tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    Kernel,
    Workload,
    Tensor,
    Axis,
    Channel,
    /// A schedule or a compiled program.
    Program,
    Constant,
    Parameter,
    /// A loop variable or a local value.
    Variable,
}

/// The symbol named at `offset`, its name token and the token's range in the file.
pub fn symbol_at<'db>(
    db: &'db dyn salsa::Database,
    file: File,
    offset: TextSize,
) -> Option<(Symbol<'db>, SyntaxToken, TextRange)> {
    let (item, base) = item_at(db, file, offset)?;
    let token = name_token(item.syntax(db), offset - base)?;
    let range = token.text_range();
    let symbol = item_uses(db, item)
        .iter()
        .find(|u| u.range.contains_range(range))?
        .symbol;
    Some((symbol, token, range + base))
}

/// The item whose text holds `offset`, and where it starts.
pub fn item_at(
    db: &dyn salsa::Database,
    file: File,
    offset: TextSize,
) -> Option<(Item<'_>, TextSize)> {
    let offsets = item_offsets(db, file);
    let mut i = offsets
        .partition_point(|&start| start <= offset)
        .checked_sub(1)?;
    let items = module_items(db, file);
    // `B, S = 2, 16` is one item per name: the one whose name or value holds the offset.
    let at = offset - offsets[i];
    let first = offsets.partition_point(|&start| start < offsets[i]);
    if let Some(j) = (first..i).find(|&j| {
        let item = items[j];
        item.stmt(db)
            .as_ref()
            .and_then(crate::items::unpacked)
            .and_then(|pairs| {
                let (n, v) = pairs
                    .into_iter()
                    .find(|(n, _)| n.text() == *item.name(db))?;
                // An element of one value: the first name's item evaluated it.
                let value = match v {
                    crate::items::Part::Own(e) | crate::items::Part::Element(e, 0) => {
                        e.syntax().text_range().contains_inclusive(at)
                    }
                    crate::items::Part::Element(..) => false,
                };
                Some(n.syntax().text_range().contains_inclusive(at) || value)
            })
            .unwrap_or(false)
    }) {
        i = j;
    }
    let item = *items.get(i)?;
    (at <= item.syntax(db).text_range().end()).then_some((item, offsets[i]))
}

/// Where an item starts in its file.
fn item_start(db: &dyn salsa::Database, item: Item<'_>) -> Option<TextSize> {
    let file = item.file(db);
    let i = module_items(db, file).iter().position(|&i| i == item)?;
    item_offsets(db, file).get(i).copied()
}

/// The name token touching `offset` in an item's syntax.
fn name_token(root: wsp_syntax::SyntaxNode, offset: TextSize) -> Option<SyntaxToken> {
    if offset > root.text_range().end() {
        return None;
    }
    root.token_at_offset(offset)
        .find(|t| t.kind() == SyntaxKind::NAME)
}

/// Where a symbol is bound, in its file.
pub fn definition_range(db: &dyn salsa::Database, symbol: Symbol<'_>) -> Option<TextRange> {
    let (item, range) = match symbol {
        Symbol::Item(item) => (item, name_range(db, item)?),
        Symbol::Local { item, def } => (item, def),
    };
    Some(range + item_start(db, item)?)
}

pub fn symbol_kind(db: &dyn salsa::Database, symbol: Symbol<'_>) -> SymbolKind {
    match symbol {
        Symbol::Item(item) => item_kind(db, item),
        Symbol::Local { item, def } => {
            let is_param = match item.kind(db) {
                ItemKind::Kernel => kernel_signature(db, item)
                    .params
                    .iter()
                    .any(|p| p.range == def),
                ItemKind::Workload => workload_params(db, item).0.iter().any(|p| p.range == def),
                _ => false,
            };
            if is_param {
                SymbolKind::Parameter
            } else {
                SymbolKind::Variable
            }
        }
    }
}

/// What a module-level item binds.
pub fn item_kind(db: &dyn salsa::Database, item: Item<'_>) -> SymbolKind {
    match item.kind(db) {
        ItemKind::Kernel => SymbolKind::Kernel,
        ItemKind::Workload => SymbolKind::Workload,
        _ => match item_value(db, item).value {
            Value::Tensor(_) => SymbolKind::Tensor,
            Value::Axis(_) => SymbolKind::Axis,
            Value::Channel(_) => SymbolKind::Channel,
            Value::Schedule(_) | Value::Program(_) => SymbolKind::Program,
            _ => SymbolKind::Constant,
        },
    }
}

/// A name visible at an offset and what it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeEntry<'db> {
    pub name: String,
    pub symbol: Symbol<'db>,
}

/// The names visible at `offset` (relative to `item` when given, else a file offset between
/// items), innermost first: the def's locals, then the module names bound before it. The
/// builtins (`Builtin::ALL`) are visible everywhere besides these.
pub fn scope_at<'db>(
    db: &'db dyn salsa::Database,
    file: File,
    item: Option<Item<'db>>,
    offset: TextSize,
) -> Vec<ScopeEntry<'db>> {
    let mut out = Vec::new();
    if let Some(item) = item {
        out.extend(locals_at(db, item, offset));
    }
    let scope = module_scope(db, file);
    // Names bound by the items before this one (before the cursor, between items).
    let position = match item {
        Some(item) => scope.position(item),
        None => item_offsets(db, file).partition_point(|&s| s <= offset),
    }
    .min(module_items(db, file).len());
    for name in scope.names() {
        let Some(b) = scope.lookup(name) else {
            continue;
        };
        if (b.index as usize) < position {
            out.push(ScopeEntry {
                name: name.to_string(),
                symbol: Symbol::Item(b.item),
            });
        }
    }
    out
}

/// The def's local names visible at `offset`, innermost first.
fn locals_at<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    offset: TextSize,
) -> Vec<ScopeEntry<'db>> {
    let root = item.syntax(db);
    let blocks = match item.kind(db) {
        ItemKind::Workload => &workload_generic(db, item).blocks[..],
        ItemKind::Kernel => &[],
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    for u in item_uses(db, item).iter().rev() {
        let Symbol::Local { item: owner, def } = u.symbol else {
            continue;
        };
        if owner != item || u.range != def {
            continue;
        }
        // A loop variable is visible in its block; a parameter everywhere; a local after it.
        let visible = match blocks.iter().find(|b| b.header.contains_range(def)) {
            Some(b) => b.scope.contains(offset),
            None => {
                symbol_kind(db, u.symbol) == SymbolKind::Parameter
                    || statement_end(&root, def) <= offset
            }
        };
        if visible {
            out.push(ScopeEntry {
                name: root.text().slice(def).to_string(),
                symbol: u.symbol,
            });
        }
    }
    out
}

/// Where the statement that binds `def` ends: a local is visible after it.
fn statement_end(root: &wsp_syntax::SyntaxNode, def: TextRange) -> TextSize {
    root.covering_element(def)
        .ancestors()
        .find(|n| ast::AssignStmt::can_cast(n.kind()))
        .map_or(def.end(), |n| n.text_range().end())
}

/// The rows of a value's methods and members, with their docs.
pub fn member_rows(v: &Value) -> &'static [Member] {
    use wsp_ir::explore::ExploreQuery;
    match v {
        Value::Schedule(_) => SCHEDULE_METHODS,
        Value::Program(_) => PROGRAM_MEMBERS,
        Value::Process(_) => PROCESS_METHODS,
        Value::Space(_) => crate::vocabulary::SPACE_METHODS,
        Value::Scheduler(_) => crate::vocabulary::SCHEDULER_METHODS,
        Value::Explored(e) if e.query == ExploreQuery::Summary => {
            crate::vocabulary::SUMMARY_MEMBERS
        }
        _ => &[],
    }
}

/// What may follow `v.`: the members `attribute` and `method` accept (for completion).
pub fn member_names(v: &Value) -> Vec<&'static str> {
    let rows = member_rows(v);
    if !rows.is_empty() {
        let mut names: Vec<&str> = rows.iter().map(|m| m.name).collect();
        if matches!(v, Value::Space(_)) {
            names.push("size");
        }
        return names;
    }
    match v {
        Value::Builtin(b) => b.member_names(),
        Value::Explored(e) if e.query == wsp_ir::explore::ExploreQuery::BestConfig => {
            wsp_ir::explore::CONFIG_FIELDS.to_vec()
        }
        Value::Tensor(_) => crate::eval::TENSOR_MEMBERS.to_vec(),
        Value::Stats => wsp_ir::STATS_FIELDS.to_vec(),
        Value::Trace(t) if t.1 == wsp_ir::TraceQuery::Trace => crate::vocabulary::TRACE_METHODS
            .iter()
            .map(|m| m.name)
            .collect(),
        _ => Vec::new(),
    }
}

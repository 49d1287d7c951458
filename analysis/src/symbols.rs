//! Navigation: what each name refers to, as the checker resolved it. The checker records every
//! resolution as it makes it (`Eval::resolve`, the kernel body checker, keywords of task and
//! workload calls), so scoping is decided in one place; definition, references and rename read
//! the record back. WSP files import nothing from one another, so a symbol lives in one file.

use wsp_syntax::{SyntaxKind, SyntaxToken, TextRange, TextSize};
use crate::eval::{item_value, Annotation, workload_params};
use crate::files::File;
use crate::items::{Item, ItemKind, item_offsets, module_items};
use crate::kernels::{kernel_body, kernel_signature};
use crate::names::{module_scope, name_range};
use crate::types::shape_text;
use crate::values::Value;
use crate::vocabulary::Builtin;
use crate::workloads::workload_generic;


/// What a name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Symbol<'db> {
    /// A module-level binding: the item that binds it.
    Item(Item<'db>),
    /// A name bound inside a def (a parameter, a loop variable, a local value): the def, and
    /// where the name is bound, relative to it.
    Local { item: Item<'db>, def: TextRange },
}

/// One occurrence of a name, relative to the item it is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Use<'db> {
    pub range: TextRange,
    pub symbol: Symbol<'db>,
}

impl<'db> Use<'db> {
    pub fn new(range: TextRange, symbol: Symbol<'db>) -> Use<'db> {
        Use { range, symbol }
    }
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
        ItemKind::Assign | ItemKind::Expr => uses.extend_from_slice(&item_value(db, item).uses),
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

/// A name under the cursor and the symbol it refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameRef {
    /// The name's range in the file.
    pub range: TextRange,
    pub name: String,
    pub kind: SymbolKind,
    /// Where the symbol is bound, in the file.
    pub definition: TextRange,
}

/// The symbol named at `offset`, if any.
pub fn name_at(db: &dyn salsa::Database, file: File, offset: TextSize) -> Option<NameRef> {
    let (symbol, token, range) = symbol_at(db, file, offset)?;
    Some(NameRef {
        range,
        name: token.text().to_string(),
        kind: symbol_kind(db, symbol),
        definition: definition_range(db, symbol)?,
    })
}

/// Every occurrence in `file` of the symbol named at `offset`, its definition first.
pub fn references(db: &dyn salsa::Database, file: File, offset: TextSize) -> Vec<TextRange> {
    let Some((symbol, ..)) = symbol_at(db, file, offset) else {
        return Vec::new();
    };
    let def = definition_range(db, symbol);
    let mut found: Vec<TextRange> = def.into_iter().collect();
    for (&item, &base) in module_items(db, file).iter().zip(item_offsets(db, file)) {
        for u in item_uses(db, item) {
            if u.symbol == symbol && Some(u.range + base) != def {
                found.push(u.range + base);
            }
        }
    }
    found
}

/// The edits that rename the symbol at `offset` to `new_name`: the range of every occurrence.
/// An error says why the rename would change what the program means.
pub fn rename(
    db: &dyn salsa::Database,
    file: File,
    offset: TextSize,
    new_name: &str,
) -> Result<Vec<TextRange>, String> {
    let Some((symbol, ..)) = symbol_at(db, file, offset) else {
        return Err("there is no kernel, workload, tensor, axis or parameter here".into());
    };
    let (tokens, errors) = wsp_syntax::lex(new_name);
    if !errors.is_empty()
        || tokens.len() != 1
        || tokens[0].kind != SyntaxKind::NAME
        || tokens[0].range.len() != TextSize::of(new_name)
    {
        return Err(format!("`{new_name}` is not a name"));
    }
    if Builtin::lookup(new_name).is_some() {
        return Err(format!("`{new_name}` is a `pto_wsp` name"));
    }
    if module_scope(db, file).lookup(new_name).is_some() {
        return Err(format!("`{new_name}` is already defined in this file"));
    }
    // A local must not take the name of another one where it is used.
    if let Symbol::Local { item, .. } = symbol {
        let root = item.syntax(db);
        let taken = item_uses(db, item)
            .iter()
            .any(|u| u.symbol != symbol && root.text().slice(u.range) == new_name);
        if taken {
            return Err(format!(
                "`{new_name}` is already used in `{}`",
                item.name(db)
            ));
        }
    }
    Ok(references(db, file, offset))
}

/// The symbol named at `offset`, its name token and the token's range in the file.
fn symbol_at<'db>(
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
pub(crate) fn item_at(
    db: &dyn salsa::Database,
    file: File,
    offset: TextSize,
) -> Option<(Item<'_>, TextSize)> {
    let offsets = item_offsets(db, file);
    let i = offsets
        .partition_point(|&start| start <= offset)
        .checked_sub(1)?;
    let item = *module_items(db, file).get(i)?;
    (offset - offsets[i] <= item.syntax(db).text_range().end()).then_some((item, offsets[i]))
}

/// Where an item starts in its file.
pub(crate) fn item_start(db: &dyn salsa::Database, item: Item<'_>) -> Option<TextSize> {
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

/// The file's module-level definitions in order, with the parameters of kernels and workloads.
pub fn file_symbols(db: &dyn salsa::Database, file: File) -> Vec<FileSymbol> {
    let mut out = Vec::new();
    for (&item, &base) in module_items(db, file).iter().zip(item_offsets(db, file)) {
        let name = item.name(db);
        let Some(name_range) = name_range(db, item).filter(|_| !name.is_empty()) else {
            continue;
        };
        let param = |name: &str, range: TextRange, detail: String| FileSymbol {
            name: name.to_string(),
            kind: SymbolKind::Parameter,
            range: range + base,
            name_range: range + base,
            detail,
            children: Vec::new(),
        };
        let children = match item.kind(db) {
            ItemKind::Kernel => kernel_signature(db, item)
                .params
                .iter()
                .map(|p| param(&p.name, p.range, p.ty.to_string()))
                .collect(),
            ItemKind::Workload => workload_params(db, item)
                .0
                .iter()
                .map(|p| param(&p.name, p.range, annotation_text(p.annotation)))
                .collect(),
            _ => Vec::new(),
        };
        out.push(FileSymbol {
            name: name.clone(),
            kind: item_kind(db, item),
            range: item.syntax(db).text_range() + base,
            name_range: name_range + base,
            detail: item_detail(db, item),
            children,
        });
    }
    out
}

/// A definition, for the editor's outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSymbol {
    pub name: String,
    pub kind: SymbolKind,
    /// The whole definition.
    pub range: TextRange,
    pub name_range: TextRange,
    /// A short description: a tensor's shape and dtype, an axis's kind and size, a type.
    pub detail: String,
    pub children: Vec<FileSymbol>,
}

/// What a module-level item is, in a few words: `kernel(x, out, eps)`, `[4,16,128] F32`.
pub fn item_detail(db: &dyn salsa::Database, item: Item<'_>) -> String {
    let list = |names: Vec<&str>| names.join(", ");
    match item.kind(db) {
        ItemKind::Kernel => {
            let params = &kernel_signature(db, item).params;
            format!(
                "kernel({})",
                list(params.iter().map(|p| p.name.as_str()).collect())
            )
        }
        ItemKind::Workload => {
            let params = &workload_params(db, item).0;
            format!(
                "workload({})",
                list(params.iter().map(|p| p.name.as_str()).collect())
            )
        }
        _ => match &item_value(db, item).value {
            Value::Tensor(t) => format!("{} {}", shape_text(&t.shape), t.dtype),
            Value::Axis(a) => format!("{} {}", a.kind.name(), a.size),
            v => v.describe(),
        },
    }
}

/// A workload parameter's annotation as written: `Dense`, `Tensor`, or nothing.
pub(crate) fn annotation_text(a: Option<Annotation>) -> String {
    match a {
        Some(Annotation::Axis(Some(k))) => k.name().to_string(),
        Some(Annotation::Axis(None)) => "axis".to_string(),
        Some(Annotation::Tensor) => "Tensor".to_string(),
        None => String::new(),
    }
}

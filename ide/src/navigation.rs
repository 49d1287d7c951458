//! Navigation: the symbol under the cursor, its references and renaming it, read off the
//! checker's record of what each name refers to (`semantic::item_uses`).

use wsp_analysis::File;
use wsp_analysis::semantic::{
    Builtin, Symbol, SymbolKind, definition_range, item_offsets, item_uses, module_items,
    module_scope, symbol_at, symbol_kind,
};
use wsp_syntax::{SyntaxKind, TextRange, TextSize};

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

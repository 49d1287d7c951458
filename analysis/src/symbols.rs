//! Symbols: what each name refers to, as the checker resolved it. The checker records every
//! resolution as it makes it (`Eval::resolve`, the kernel body checker, keywords of task and
//! workload calls) as a `Use`, so scoping is decided in one place; definition, references and
//! rename read the record back (`semantic::item_uses`). WSP files import nothing from one
//! another, so a symbol lives in one file.

use wsp_syntax::TextRange;

use crate::items::Item;

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

//! Name resolution at module level: what each top-level name binds, imports checked against the
//! `pto_wsp` vocabulary, duplicates and rebound `pto_wsp` names (WSP103).

use std::collections::HashMap;

use wsp_syntax::TextRange;
use wsp_syntax::ast::{AstNode, Stmt};

use crate::diagnostics::{Code, Diag, Span};
use crate::files::File;
use crate::items::{Item, ItemKind, module_items};
use crate::vocabulary::Builtin;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct Binding<'db> {
    pub item: Item<'db>,
    /// The item's position among the file's items: a name is visible to later items only.
    pub index: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct ModuleScope<'db> {
    /// The first binding of each name, sorted by name.
    bindings: Vec<(Box<str>, Binding<'db>)>,
    /// Each item's position, sorted by the item's id: a file of millions of items keeps 8
    /// bytes an item here, where a hash map kept three times that.
    positions: Vec<(salsa::Id, u32)>,
    /// The Python modules imported (`import math`), each with the item importing it.
    modules: Vec<(String, Item<'db>)>,
    pub diags: Vec<Diag<'db>>,
}

/// The module's names indexed for suggestions, built when a name is first unknown.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct NameIndex {
    /// The hash of each name, and of each name less one character, with the binding so
    /// spelled (its position in `ModuleScope::bindings`), sorted: two names one edit apart (an
    /// insertion, deletion, substitution or transposition) share a key. Hashes, not strings:
    /// a module of millions of names would hold several strings per name. A collision only
    /// adds a candidate, which `suggest` then measures.
    one_edit: Vec<(u64, u32)>,
    /// The bindings by name length in characters, then name.
    by_length: Vec<(u32, u32)>,
}

#[salsa::tracked(returns(ref))]
pub fn name_index(db: &dyn salsa::Database, file: File) -> NameIndex {
    let bindings = &module_scope(db, file).bindings;
    let mut one_edit = Vec::with_capacity(bindings.len() * 4);
    let mut by_length = Vec::with_capacity(bindings.len());
    for (at, (name, _)) in bindings.iter().enumerate() {
        crate::work::step(1);
        one_edit.extend(one_edit_keys(name).into_iter().map(|k| (k, at as u32)));
        by_length.push((name.chars().count() as u32, at as u32));
    }
    one_edit.sort_unstable();
    by_length.sort_unstable();
    NameIndex {
        one_edit,
        by_length,
    }
}

/// Names examined beyond those one edit away when suggesting a spelling, the closest in length
/// first: every name within reach in a module of up to this many names, and a bounded cost
/// per unknown name in a larger one (80,000 unknown names against 80,000 definitions were
/// 80,000² distance computations).
const SUGGESTION_CANDIDATES: usize = 256;

/// The hashes of `name` and of `name` less each one of its characters, each once.
fn one_edit_keys(name: &str) -> Vec<u64> {
    use std::hash::Hasher;
    // Two writes hash as their concatenation would: the key is the string, however split.
    let hash = |a: &str, b: &str| {
        let mut h = std::hash::DefaultHasher::new();
        h.write(a.as_bytes());
        h.write(b.as_bytes());
        h.finish()
    };
    let mut keys = vec![hash(name, "")];
    for (at, c) in name.char_indices() {
        keys.push(hash(&name[..at], &name[at + c.len_utf8()..]));
    }
    keys.sort_unstable();
    keys.dedup();
    keys
}

impl<'db> ModuleScope<'db> {
    pub fn lookup(&self, name: &str) -> Option<Binding<'db>> {
        self.bindings
            .binary_search_by(|(n, _)| (**n).cmp(name))
            .ok()
            .map(|i| self.bindings[i].1)
    }

    pub fn position(&self, item: Item<'db>) -> usize {
        use salsa::plumbing::AsId;
        crate::work::step(1);
        let id = item.as_id();
        self.positions
            .binary_search_by_key(&id, |(i, _)| *i)
            .map_or(usize::MAX, |at| self.positions[at].1 as usize)
    }

    /// Every module-level name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.bindings.iter().map(|(n, _)| &**n)
    }

    /// The module-level names `suggest` may pick for `name`: every name one edit away, and
    /// names of a length within the distance `suggest` accepts, the closest in length first,
    /// at most `SUGGESTION_CANDIDATES` of them. The suggestion is the one a scan of every name
    /// gives whenever a name one edit away exists or the module has few names.
    pub fn names_near(&self, index: &NameIndex, name: &str) -> Vec<&str> {
        let NameIndex {
            one_edit,
            by_length,
        } = index;
        let mut near: Vec<u32> = Vec::new();
        for key in one_edit_keys(name) {
            let start = one_edit.partition_point(|(k, _)| *k < key);
            let end = one_edit.partition_point(|(k, _)| *k <= key);
            near.extend(one_edit[start..end].iter().map(|(_, at)| *at));
        }
        let len = name.chars().count() as u32;
        let reach = 2.max(name.len() / 3) as u32;
        let band = |l: u32| {
            let start = by_length.partition_point(|(m, _)| *m < l);
            let end = by_length.partition_point(|(m, _)| *m <= l);
            &by_length[start..end]
        };
        let mut budget = SUGGESTION_CANDIDATES;
        'bands: for delta in 0..=reach {
            let mut lengths = vec![len + delta];
            if delta > 0 && delta <= len {
                lengths.push(len - delta);
            }
            for l in lengths {
                for &(_, at) in band(l) {
                    if budget == 0 {
                        break 'bands;
                    }
                    budget -= 1;
                    near.push(at);
                }
            }
        }
        near.sort_unstable();
        near.dedup();
        near.iter()
            .map(|&at| &*self.bindings[at as usize].0)
            .collect()
    }
}

#[salsa::tracked(returns(ref))]
pub fn module_scope(db: &dyn salsa::Database, file: File) -> ModuleScope<'_> {
    let items = module_items(db, file);
    // Exactly sized: a file of millions of names keeps this list.
    let mut bindings: Vec<(Box<str>, Binding)> = Vec::with_capacity(
        items
            .iter()
            .filter(|i| {
                matches!(
                    i.kind(db),
                    ItemKind::Assign | ItemKind::Kernel | ItemKind::Workload
                ) && !i.name(db).is_empty()
            })
            .count(),
    );
    // Where each name's first binding is in `bindings`.
    let mut first: HashMap<&str, usize> = HashMap::new();
    let mut diags = Vec::new();
    let mut positions = Vec::with_capacity(items.len());
    let mut modules = Vec::new();
    for (index, &item) in items.iter().enumerate() {
        crate::work::step(1);
        positions.push((salsa::plumbing::AsId::as_id(&item), index as u32));
        match item.kind(db) {
            ItemKind::Import => check_import(db, item, &mut diags, &mut modules),
            ItemKind::Assign | ItemKind::Kernel | ItemKind::Workload => {
                let name = item.name(db);
                if name.is_empty() {
                    continue;
                }
                // Ranges are read only for a diagnostic: reading an item's syntax here would
                // make every name depend on every definition's text.
                let span = || Span {
                    item,
                    range: name_range(db, item).unwrap_or_default(),
                };
                if let Some(first) = first.get(name.as_str()).map(|&at| bindings[at].1) {
                    let first_span = Span {
                        item: first.item,
                        range: name_range(db, first.item).unwrap_or_default(),
                    };
                    diags.push(
                        Diag::new(
                            Code::Duplicate,
                            span(),
                            format!(
                                "`{name}` is already defined; a module-level name is bound once"
                            ),
                        )
                        .with_related(first_span, format!("`{name}` is first defined here")),
                    );
                    continue;
                }
                if let Some(b) = Builtin::lookup(name) {
                    diags.push(Diag::new(
                        Code::Duplicate,
                        span(),
                        format!(
                            "`{name}` rebinds the `pto_wsp` name `{}`; choose another name",
                            b.name()
                        ),
                    ));
                }
                first.insert(name, bindings.len());
                bindings.push((
                    name.as_str().into(),
                    Binding {
                        item,
                        index: index as u32,
                    },
                ));
            }
            ItemKind::Expr | ItemKind::Other => {}
        }
    }
    bindings.sort_by(|a, b| a.0.cmp(&b.0));
    positions.sort_unstable();
    ModuleScope {
        bindings,
        positions,
        modules,
        diags,
    }
}

/// The statements that change a search space in place, as the original's methods do
/// (`space.add_streams([1, 2])` on a line of its own): the name, then the statement's
/// position among the items, sorted. A later use of the name sees the space the last of them
/// before it made.
#[salsa::tracked(returns(ref))]
pub fn space_updates(db: &dyn salsa::Database, file: File) -> Vec<(Box<str>, u32)> {
    use wsp_syntax::ast::Expr;
    let mut out: Vec<(Box<str>, u32)> = Vec::new();
    for (index, &item) in module_items(db, file).iter().enumerate() {
        if item.kind(db) != ItemKind::Expr {
            continue;
        }
        let Some(Stmt::ExprStmt(s)) = item.stmt(db) else {
            continue;
        };
        let Some(Expr::CallExpr(c)) = s.expr() else {
            continue;
        };
        let Some(Expr::AttributeExpr(a)) = c.callee() else {
            continue;
        };
        let (Some(Expr::NameExpr(n)), Some(m)) = (a.receiver(), a.attr()) else {
            continue;
        };
        if crate::vocabulary::SPACE_METHODS
            .iter()
            .any(|s| s.name == m.text())
        {
            out.push((n.text().into(), index as u32));
        }
    }
    out.sort();
    out
}

/// The range of the name an item binds, relative to the item.
pub fn name_range(db: &dyn salsa::Database, item: Item<'_>) -> Option<TextRange> {
    let stmt = item.stmt(db)?;
    if let Some(pairs) = crate::items::unpacked(&stmt) {
        let name = item.name(db);
        return pairs
            .iter()
            .find(|(n, _)| n.text() == *name)
            .map(|(n, _)| n.syntax().text_range());
    }
    match stmt {
        Stmt::AssignStmt(a) => a.targets().next().map(|t| t.syntax().text_range()),
        Stmt::FunctionDef(f) => f.name().map(|t| t.text_range()),
        _ => None,
    }
}

fn check_import<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    diags: &mut Vec<Diag<'db>>,
    modules: &mut Vec<(String, Item<'db>)>,
) {
    let span = |range| Span { item, range };
    match item.stmt(db) {
        Some(Stmt::FromImportStmt(imp)) => {
            let module = imp.module().map(|m| m.text()).unwrap_or_default();
            // The original's submodules (`pto_wsp.scalar_expr`, `pto_wsp.csp`, ...): their names
            // are `pto_wsp`'s here.
            if let Some((_, exported)) = Builtin::SUBMODULES.iter().find(|(m, _)| *m == module)
                && imp.level() == 0
            {
                for alias in imp.names() {
                    let Some(path) = alias.path() else { continue };
                    let range = alias.path_range().unwrap_or(alias.syntax().text_range());
                    if !exported.iter().any(|b| b.name() == path) {
                        let names: Vec<String> =
                            exported.iter().map(|b| format!("`{}`", b.name())).collect();
                        diags.push(Diag::new(
                            Code::UnknownName,
                            span(range),
                            format!(
                                "`{module}` has no `{path}` here; it has {}",
                                names.join(", ")
                            ),
                        ));
                    }
                }
                return;
            }
            if module != "pto_wsp" || imp.level() > 0 {
                diags.push(Diag::new(
                    Code::OutsideSubset,
                    span(imp.syntax().text_range()),
                    format!(
                        "only `from pto_wsp import ...` is supported, not an import from `{}{module}`",
                        ".".repeat(imp.level())
                    ),
                ));
                return;
            }
            for alias in imp.names() {
                let Some(path) = alias.path() else { continue };
                let range = alias.path_range().unwrap_or(alias.syntax().text_range());
                match Builtin::lookup(&path) {
                    Some(b) if !b.is_python_builtin() => {
                        if let Some(a) = alias.alias()
                            && a.text() != path
                        {
                            diags.push(Diag::new(
                                Code::OutsideSubset,
                                span(a.text_range()),
                                format!("`import {path} as {}` is not supported; import `{path}` under its own name", a.text()),
                            ));
                        }
                    }
                    _ => {
                        let mut d = Diag::new(
                            Code::UnknownName,
                            span(range),
                            format!("`pto_wsp` has no `{path}`"),
                        );
                        if let Some(best) = suggest(&path, exported_names()) {
                            d = d.with_guess(
                                format!("import `{best}`"),
                                vec![(span(range), best.to_string())],
                            );
                            d.message.push_str(&format!("; did you mean `{best}`?"));
                        }
                        diags.push(d);
                    }
                }
            }
        }
        Some(Stmt::ImportStmt(imp)) => {
            for alias in imp.aliases() {
                let path = alias.path().unwrap_or_default();
                let range = alias.path_range().unwrap_or(alias.syntax().text_range());
                match Builtin::lookup(&path).filter(|b| b.is_module()) {
                    Some(b) if alias.alias().is_none_or(|a| a.text() == path) => {
                        modules.push((b.name().to_string(), item));
                    }
                    Some(_) => diags.push(Diag::new(
                        Code::OutsideSubset,
                        span(alias.syntax().text_range()),
                        format!("import `{path}` under its own name: `import {path}`"),
                    )),
                    None => diags.push(Diag::new(
                        Code::OutsideSubset,
                        span(range),
                        format!("`import {path}` is not supported; the one module a file may import is `math`, and `pto_wsp`'s names come with `from pto_wsp import ...`"),
                    )),
                }
            }
        }
        _ => {}
    }
}

impl<'db> ModuleScope<'db> {
    /// The item importing the module `b` (`import math`), if the file imports it.
    pub fn import_of(&self, b: Builtin) -> Option<Item<'db>> {
        self.modules
            .iter()
            .find(|(m, _)| m == b.name())
            .map(|(_, i)| *i)
    }
}

fn exported_names() -> impl Iterator<Item = &'static str> {
    Builtin::ALL
        .iter()
        .filter(|b| !b.is_python_builtin())
        .map(|b| b.name())
}

/// The closest of `candidates` to `name`, if it is close enough to be a likely typo: the least
/// distance, then the first name in order. A candidate whose cheap lower bounds (length and
/// letter counts) already exceed what it must beat is not measured; in a file of thousands of
/// misspellings those measurements were most of `wsp check`'s time.
pub fn suggest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let name_chars = name.chars().count();
    let mut letters = Letters::of(name);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        crate::work::step(1);
        if c == name {
            continue;
        }
        // Close enough: within a third of the shorter name (at least 2), and less than the
        // whole name.
        let limit = 2
            .max(name.len().min(c.len()) / 3)
            .min(name.len().max(1) - 1);
        let beat = best.map_or(limit, |(d, _)| d.min(limit));
        if limit == 0
            || name_chars.abs_diff(c.chars().count()) > beat
            || letters.as_mut().is_some_and(|l| l.excess(c) > beat)
        {
            continue;
        }
        let d = strsim::osa_distance(name, c);
        if d <= limit && best.is_none_or(|b| (d, c) < b) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// The letter counts of an ASCII name, to bound its distance to others from below.
struct Letters {
    /// How many times each byte occurs in the name.
    counts: [i32; 128],
    /// The name's distinct bytes.
    distinct: Vec<u8>,
    len: usize,
}

impl Letters {
    fn of(name: &str) -> Option<Letters> {
        let mut counts = [0; 128];
        let mut distinct = Vec::new();
        for b in name.bytes() {
            let slot = counts.get_mut(usize::from(b))?;
            if *slot == 0 {
                distinct.push(b);
            }
            *slot += 1;
        }
        Some(Letters {
            counts,
            distinct,
            len: name.len(),
        })
    }

    /// The larger of the letters each of the name and `other` has beyond the other's (0 for
    /// text that is not ASCII). No edit sequence is shorter: an insertion, deletion or
    /// substitution removes at most one such excess on each side, and a transposition none.
    fn excess(&mut self, other: &str) -> usize {
        if !other.is_ascii() {
            return 0;
        }
        for b in other.bytes() {
            self.counts[usize::from(b)] -= 1;
        }
        let mine: i32 = self
            .distinct
            .iter()
            .map(|&b| self.counts[usize::from(b)].max(0))
            .sum();
        for b in other.bytes() {
            self.counts[usize::from(b)] += 1;
        }
        // Both sides' excesses differ by the difference in length.
        let mine = mine as usize;
        let theirs = (mine + other.len()).saturating_sub(self.len);
        mine.max(theirs)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// `suggest` as it read before its bounds: every candidate measured.
    fn suggest_measuring_all<'a>(name: &str, candidates: &[&'a str]) -> Option<&'a str> {
        candidates
            .iter()
            .filter(|c| **c != name)
            .map(|c| (strsim::osa_distance(name, c), *c))
            .filter(|(d, c)| *d <= 2.max(name.len().min(c.len()) / 3) && *d < name.len().max(1))
            .min_by_key(|(d, c)| (*d, *c))
            .map(|(_, c)| c)
    }

    proptest! {
        /// The bounds only skip candidates that could not win: the same suggestion as
        /// measuring every one, over short names from a few letters (so that many are close),
        /// with and without non-ASCII letters.
        #[test]
        fn suggest_picks_what_measuring_every_candidate_picks(
            name in "[abcé1]{0,7}",
            candidates in proptest::collection::vec("[abcdé12]{0,9}", 0..40),
        ) {
            let candidates: Vec<&str> = candidates.iter().map(String::as_str).collect();
            prop_assert_eq!(
                super::suggest(&name, candidates.iter().copied()),
                suggest_measuring_all(&name, &candidates)
            );
        }
    }
}

//! Inlay hints: facts the checker inferred, shown inline. The tile type of each kernel local,
//! the dependency kind of each workload loop, and a workload's task count when it is static.

use wsp_analysis::File;
use wsp_analysis::semantic::{
    BlockKind, ItemKind, Symbol, body_has_errors, first_call_plan, item_offsets, item_uses,
    kernel_body, module_items, static_task_count,
};
use wsp_syntax::ast::{self, AstNode};
use wsp_syntax::{TextRange, TextSize};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    /// Where the hint is shown, in the file.
    pub offset: TextSize,
    pub label: String,
    pub kind: InlayKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InlayKind {
    /// A type after a name: `: Tile[16,128] F32`.
    Type,
    /// A note after a header: a loop's dependency kind, a workload's task count.
    Note,
}

/// The hints of the items that overlap `range`.
pub fn inlay_hints(db: &dyn salsa::Database, file: File, range: TextRange) -> Vec<InlayHint> {
    let mut out = Vec::new();
    for (&item, &base) in module_items(db, file).iter().zip(item_offsets(db, file)) {
        let root = item.syntax(db);
        if (root.text_range() + base).intersect(range).is_none() {
            continue;
        }
        match item.kind(db) {
            ItemKind::Kernel => {
                let types = &kernel_body(db, item).types;
                for u in item_uses(db, item) {
                    // A local's definition: the type the checker gave the value it binds.
                    if u.symbol == (Symbol::Local { item, def: u.range })
                        && let Some((_, ty)) = types.iter().find(|(r, _)| *r == u.range)
                    {
                        out.push(InlayHint {
                            offset: u.range.end() + base,
                            label: format!(": {ty}"),
                            kind: InlayKind::Type,
                        });
                    }
                }
            }
            ItemKind::Workload => {
                let plan = first_call_plan(db, item);
                // A body with errors lost the tasks it could not build: no count then.
                let sound = !body_has_errors(db, item);
                if sound
                    && let Some(n) = static_task_count(&plan.body)
                    && let Some(def) = ast::FunctionDef::cast(root.clone())
                    && let Some(params) = def.param_list()
                {
                    out.push(InlayHint {
                        offset: params.syntax().text_range().end() + base,
                        label: format!("{n} task{}", if n == 1 { "" } else { "s" }),
                        kind: InlayKind::Note,
                    });
                }
                for b in &plan.blocks {
                    if let BlockKind::Loop(kind) = b.kind {
                        out.push(InlayHint {
                            offset: b.header.end() + base,
                            label: kind.name().to_string(),
                            kind: InlayKind::Note,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out.retain(|h| range.contains_inclusive(h.offset));
    out
}

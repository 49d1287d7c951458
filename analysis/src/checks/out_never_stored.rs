//! WSP205 (`Out` or `InOut` parameter never stored): a kernel's `Out` tile that no `pto.store`
//! writes keeps whatever the tensor held; an `InOut` one silently keeps its old value, and the
//! dependency analysis orders other tasks after a write that never happens. Page:
//! docs/diagnostics/WSP205.md.

use wsp_syntax::{TextRange, TextSize};

use crate::diagnostics::{Code, Diag, Span};
use crate::items::Item;
use crate::kernels::{Direction, ParamType, kernel_body, kernel_signature};

pub fn check<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let signature = kernel_signature(db, item);
    // A `cpp_src` kernel's stores are in its C++.
    if signature.cpp.is_some() {
        return Vec::new();
    }
    let body = kernel_body(db, item);
    let stored = &body.stored;
    let mut out = Vec::new();
    for p in &signature.params {
        let (ParamType::Tile(dir @ (Direction::Out | Direction::InOut), _)
        | ParamType::Jit(dir @ (Direction::Out | Direction::InOut), _)) = p.ty
        else {
            continue;
        };
        if stored.contains(&p.name) {
            continue;
        }
        let span = Span {
            item,
            range: p.range,
        };
        let name = &p.name;
        if dir == Direction::Out {
            out.push(Diag::new(
                Code::OutNeverStored,
                span,
                format!("`Out` parameter `{name}` is never stored: add `pto.store({name}, ...)`"),
            ));
            continue;
        }
        let mut d = Diag::new(
            Code::OutNeverStored,
            span,
            format!(
                "`InOut` parameter `{name}` is never stored, so it keeps its old value: add `pto.store({name}, ...)`, or declare it `In` if the kernel only reads it"
            ),
        );
        // `acc: InOut[...]` → `acc: In[...]`: the kernel only reads it, so `In` says what it
        // does.
        let text = item.syntax(db).text().to_string();
        let end = usize::from(p.range.end());
        let after = text.get(end..).unwrap_or("");
        let colon = after.len() - after.trim_start().len();
        let rest = after[colon..].strip_prefix(':').unwrap_or("");
        let gap = rest.len() - rest.trim_start().len();
        if after[colon..].starts_with(':') && rest[gap..].starts_with("InOut[") {
            let from = TextSize::from((end + colon + 1 + gap) as u32);
            let edit = Span {
                item,
                range: TextRange::at(from, TextSize::from(5)),
            };
            d = d.with_fix(format!("declare `{name}` `In`"), vec![(edit, "In".into())]);
        }
        out.push(d);
    }
    out
}

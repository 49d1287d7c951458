//! WSP205 (`Out` parameter never stored): a kernel's `Out` tile that no `pto.store` writes
//! keeps whatever the tensor held. Page: docs/diagnostics/WSP205.md.

use crate::diagnostics::{Code, Diag, Span};
use crate::items::Item;
use crate::kernels::{Direction, ParamType, kernel_body, kernel_signature};

pub fn check<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let signature = kernel_signature(db, item);
    // A `cpp_src` kernel's stores are in its C++.
    if signature.cpp.is_some() {
        return Vec::new();
    }
    let stored = &kernel_body(db, item).stored;
    signature
        .params
        .iter()
        .filter(|p| matches!(p.ty, ParamType::Tile(Direction::Out, _)) && !stored.contains(&p.name))
        .map(|p| {
            Diag::new(
                Code::OutNeverStored,
                Span {
                    item,
                    range: p.range,
                },
                format!(
                    "`Out` parameter `{}` is never stored: add `pto.store({}, ...)`",
                    p.name, p.name
                ),
            )
        })
        .collect()
}

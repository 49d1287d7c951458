//! WSP501 (directive not fully enforced) and WSP502 (directive rejected): each directive of a
//! compiled program against the applicability table (`wsp_ir::schedule::applicability`) of
//! every target the program is checked for. Pages: docs/diagnostics/WSP501.md, WSP502.md.

use super::programs::program_targets;
use crate::diagnostics::{Code, Diag};
use crate::items::Item;
use crate::values::Schedule;
use crate::values::schedule::{Applicability, applicability};

pub(crate) fn check<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    s: &Schedule<'db>,
) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    let targets = program_targets(db, item, s);
    for d in &s.directives {
        for &t in &targets {
            let what = d.kind.spelling();
            match applicability(t, d.kind) {
                Applicability::Enforced => {}
                Applicability::Partial(note) => out.push(Diag::new(
                    Code::NotEnforced,
                    d.span,
                    format!("`{what}` is only partly enforced on {}: {note}", t.name()),
                )),
                Applicability::EmitOnly(note) => out.push(Diag::new(
                    Code::NotEnforced,
                    d.span,
                    format!("`{what}` is not enforced on {}: {note}", t.name()),
                )),
                Applicability::Rejected(why) => out.push(Diag::new(
                    Code::Rejected,
                    d.span,
                    format!("`{what}` is rejected by {}: {why}", t.name()),
                )),
            }
        }
    }
    out
}

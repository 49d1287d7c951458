//! WSP305 (read, never written): a tensor that tasks read, that no task writes and that has
//! no `init`, is all zeros. Page: docs/diagnostics/WSP305.md.

use std::collections::HashSet;

use crate::diagnostics::{Code, Diag};
use crate::values::{TensorOrigin, View};
use crate::workloads::{PlanNode, TaskArg, plan_nodes};

/// WSP305 over a set of plans: tensors read, never written by any task, and without `init`.
pub fn read_never_written<'db>(plans: &[&[PlanNode<'db>]]) -> Vec<Diag<'db>> {
    let mut reads: Vec<&View<'db>> = Vec::new();
    // By the declared tensor: a write through a view writes its base.
    let mut written: HashSet<&str> = HashSet::new();
    for n in plans.iter().flat_map(|p| plan_nodes(p)) {
        crate::work::step(1);
        match n {
            PlanNode::Task(t) => {
                for a in &t.args {
                    if let TaskArg::Tile {
                        direction, view, ..
                    } = a
                    {
                        if direction.writes() {
                            written.insert(&view.tensor.base().name);
                        } else {
                            reads.push(view);
                        }
                    }
                }
            }
            PlanNode::SlotLoad { view, .. } => reads.push(view),
            _ => {}
        }
    }
    let mut out: Vec<Diag<'db>> = Vec::new();
    let mut done: HashSet<&str> = HashSet::new();
    for v in reads {
        crate::work::step(1);
        let t = v.tensor.base();
        if t.init.is_some()
            || t.origin != TensorOrigin::Declared
            || written.contains(t.name.as_str())
            || !done.insert(t.name.as_str())
        {
            continue;
        }
        out.push(
            Diag::new(
                Code::ReadNeverWritten,
                v.span,
                format!("`{}` is read here but no task writes it and it has no `init`, so it is all zeros; give it an `init=` or write it first", t.name),
            )
            .with_related(t.def, format!("`{}` is declared here", t.name)),
        );
    }
    out
}

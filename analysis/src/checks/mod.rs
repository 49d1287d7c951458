//! Flow and program checks over what the evaluator and the workload walker built: one file per
//! rule, each naming its code and page. The type-checking codes stay with the checker that
//! finds them (`kernels`, `workloads`, `eval`), in one table (`diagnostics::Code`).
//!
//! Checks of a workload's body that do not depend on its arguments run on the generic plan
//! (`body_checks`); a call's plan is checked again and what is new is placed at the call
//! (`call_checks`), as `workload_instance` does for the walker's own diagnostics.
//!
//! The cheap checks are plain functions that `file_diagnostics` calls, not queries: a query
//! per item and rule would add a node to the dependency graph that every edit anywhere in the
//! workspace re-verifies. The race search, which is not cheap, is its own query (`check.rs`).

pub(crate) mod applicability;
mod channels;
pub(crate) mod deadlock;
mod layouts;
pub(crate) mod npu_kernels;
pub(crate) mod out_never_stored;
mod overlap;
pub(crate) mod programs;
pub(crate) mod races;
pub(crate) mod read_never_written;

use crate::diagnostics::Diag;
use crate::items::Item;
use crate::values::WorkloadCall;
use crate::workloads::{PlanNode, at_call, workload_generic, workload_instance};

/// The plan checks that need no extents: channel pairing and task layouts.
fn plan_checks<'db>(body: &[PlanNode<'db>]) -> Vec<Diag<'db>> {
    let mut out = channels::check(body);
    out.extend(layouts::check(body));
    out
}

/// The plan checks of a workload's body, for any arguments.
pub fn body_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    plan_checks(&workload_generic(db, item).body)
}

/// The plan checks of one call's body that its generic body does not have, at the call.
pub fn call_checks<'db>(db: &'db dyn salsa::Database, call: WorkloadCall<'db>) -> Vec<Diag<'db>> {
    let found = plan_checks(&workload_instance(db, call).0.body);
    at_call(db, call, found, &body_checks(db, call.workload(db)))
}

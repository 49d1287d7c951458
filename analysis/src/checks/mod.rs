//! Flow and program checks over what the evaluator and the workload walker built: one file per
//! rule, each naming its code and page. The type-checking codes stay with the checker that
//! finds them (`kernels`, `workloads`, `eval`), in one table (`diagnostics::Code`).
//!
//! Checks of a workload's body that do not depend on its arguments run on the generic plan
//! (`body_checks`); a call's plan is checked again and what is new is placed at the call
//! (`call_checks`), as `workload_instance` does for the walker's own diagnostics.
//!
//! All of them run in one query per file, `file_plan_checks`, apart from the rest of
//! `file_diagnostics` so that an edit that leaves every plan equal (a kernel body's) does not
//! repeat them; and one query rather than one per item and rule, because every node of the
//! dependency graph is re-verified on every edit anywhere in the workspace.

pub(crate) mod applicability;
mod channels;
mod deadlock;
mod layouts;
pub(crate) mod npu_kernels;
pub(crate) mod out_never_stored;
mod overlap;
pub(crate) mod programs;
mod races;
mod read_never_written;
pub(crate) mod unused_values;

use crate::diagnostics::Diag;
use crate::eval::item_value;
use crate::files::File;
use crate::items::{Item, ItemKind, module_items};
use crate::names::module_scope;
use crate::values::{Value, WorkloadCall};
use crate::workloads::{PlanNode, at_call, workload_generic, workload_instance};
use std::collections::{HashMap, HashSet};

/// A JIT-style kernel (`In[Tensor]`) checked once per binding its tasks make: what its body
/// and (for ascend_npu) its fit say with those tile types that they do not say untyped, at
/// the kernel, with the first task call that bound them.
fn jit_instance_checks<'db>(
    db: &'db dyn salsa::Database,
    plans: &[&[PlanNode<'db>]],
) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for plan in plans {
        for n in crate::workloads::plan_nodes(plan) {
            let PlanNode::Task(t) = n else { continue };
            if t.instance.tiles(db).is_empty() || !seen.insert(t.instance) {
                continue;
            }
            let plain = &crate::kernels::kernel_body(db, t.kernel).diags;
            let bound = crate::kernels::instance_body(db, t.instance).diags.iter();
            let npu = npu_kernels::npu_instance_checks(db, t.instance).iter();
            let unused = unused_values::check(db, t.instance);
            for d in bound.chain(npu).chain(&unused) {
                let known = plain
                    .iter()
                    .any(|p| p.code == d.code && p.span == d.span && p.message == d.message);
                if known {
                    continue;
                }
                let why = format!("with {} from this task", t.instance.binding_text(db));
                out.push(d.clone().with_related(t.span, why));
            }
        }
    }
    out
}

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

/// The plan checks of one call's body that its generic body (whose checks are `generic`) does
/// not have, at the call.
fn call_checks<'db>(
    db: &'db dyn salsa::Database,
    call: WorkloadCall<'db>,
    generic: &[Diag<'db>],
) -> Vec<Diag<'db>> {
    let found = plan_checks(&workload_instance(db, call).0.body);
    at_call(db, call, found, generic)
}

/// The checks over a file's plans and programs: each call's body for its arguments (the
/// walker's diagnostics and the plan checks, at the call), each body's plan checks, `execute`
/// bindings, races of each call (its extents known), tensors read but never written, and
/// pipeline deadlocks.
#[salsa::tracked(returns(ref))]
pub fn file_plan_checks(db: &dyn salsa::Database, file: File) -> Vec<Diag<'_>> {
    let mut diags = Vec::new();
    let mut call_list: Vec<WorkloadCall> = Vec::new();
    let mut listed: HashSet<WorkloadCall> = HashSet::new();
    let mut plans: Vec<&[PlanNode]> = Vec::new();
    // Each workload's body checks, computed once for its own diagnostics and all its calls.
    let mut generic: HashMap<Item, Vec<Diag>> = HashMap::new();
    // The workloads some statement calls.
    let mut called: HashSet<Item> = HashSet::new();
    for &item in module_items(db, file) {
        crate::work::step(1);
        match item.kind(db) {
            ItemKind::Assign | ItemKind::Expr => {
                let value = item_value(db, item);
                for &call in &value.calls {
                    crate::work::step(1);
                    called.insert(call.workload(db));
                    diags.extend(workload_instance(db, call).1.iter().cloned());
                    let w = call.workload(db);
                    let generic = generic.entry(w).or_insert_with(|| body_checks(db, w));
                    diags.extend(call_checks(db, call, generic));
                }
                diags.extend(programs::execute_checks(db, item));
                if let Value::Schedule(s) | Value::Program(s) = &value.value {
                    for c in s.calls() {
                        crate::work::step(1);
                        if listed.insert(c) {
                            call_list.push(c);
                        }
                    }
                }
            }
            ItemKind::Workload => {
                plans.push(&workload_generic(db, item).body);
                let checks = generic.entry(item).or_insert_with(|| body_checks(db, item));
                diags.extend(checks.iter().cloned());
            }
            _ => {}
        }
    }
    for &call in &call_list {
        let plan = &workload_instance(db, call).0;
        diags.extend(races::races(&plan.body, Some(call.site(db))));
        plans.push(&plan.body);
    }
    // A workload no program calls yet (its `program = w(...)` line not typed yet) is checked
    // for races over any axes its caller could give; once called, each call is checked with
    // its own extents, above, so nothing is reported twice.
    called.extend(call_list.iter().map(|c| c.workload(db)));
    for &item in module_items(db, file) {
        if item.kind(db) == ItemKind::Workload && !called.contains(&item) {
            diags.extend(races::races(&workload_generic(db, item).body, None));
        }
    }
    diags.extend(read_never_written::read_never_written(&plans));
    diags.extend(jit_instance_checks(db, &plans));
    let scope = module_scope(db, file);
    let depth_of = |name: &str| match &item_value(db, scope.lookup(name)?.item).value {
        Value::Channel(c) => Some(c.depth),
        _ => None,
    };
    for plan in &plans {
        diags.extend(deadlock::deadlocks(plan, &depth_of));
    }
    diags
}

//! Programs: a compiled schedule's keys against the tasks' fields (WSP504), its shards against
//! the spatial grid (WSP402), its tensors against the memory of each target it is checked for
//! (WSP505), and `execute(...)` bindings against its run-time symbols (WSP102, WSP210); its
//! directives go to `applicability` (WSP501/502). These share the walk over the program's
//! calls, so they stay together. Pages: docs/diagnostics/WSP402.md, WSP504.md, WSP505.md.

use crate::diagnostics::{Code, Diag, Span};
use crate::eval::item_value;
use crate::files::File;
use crate::items::{Item, ItemKind, module_items};
use crate::lower::runtime_symbols;
use crate::values::schedule::{DirectiveDetail, DirectiveKind, Target};
use crate::values::{CompileTarget, Policy, Schedule, Value};
use crate::workloads::{PlanNode, TaskArg, plan_nodes, workload_instance};
use wsp_ir::{ScalarExpr, memory};

/// `program.execute(name=value, ...)`: each name is a run-time symbol of the program, bound to
/// a positive integer. The evaluator records the bindings (`Execute`); they are checked here
/// because the symbols come from the workload bodies.
pub fn execute_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    for execute in &item_value(db, item).executes {
        let symbols = runtime_symbols(db, &execute.program);
        for b in &execute.bindings {
            let name = &b.name;
            // Every program takes the original's channel latency, in cycles (the clock's).
            if name == wsp_ir::CHANNEL_LATENCY_SYMBOL {
                if !matches!(b.value, Value::Int(n) if n >= 0) && b.value != Value::Unknown {
                    let at = Span {
                        item,
                        range: b.value_range,
                    };
                    out.push(Diag::new(Code::WrongKind, at, format!("`{name}` is the cycles each channel delivery takes in the simulated clock: a whole number, 0 or more, not {}", b.value.describe())));
                }
                continue;
            }
            // An axis the program's workloads take, whose loop an error there left out of the
            // plan: that error is the one to fix, not this binding.
            let left_out = || {
                execute.program.calls().into_iter().any(|call| {
                    let takes = call
                        .args(db)
                        .iter()
                        .any(|v| matches!(v, Value::Axis(a) if a.name == *name));
                    let errors = workload_instance(db, call)
                        .1
                        .iter()
                        .any(|d| d.code.severity() == crate::diagnostics::Severity::Error);
                    takes && errors
                })
            };
            if !symbols.iter().any(|(n, _)| n == name) && left_out() {
                continue;
            }
            if !symbols.iter().any(|(n, _)| n == name) {
                let list: Vec<String> = symbols
                    .iter()
                    .map(|(n, d)| format!("`{n}` (default {d})"))
                    .collect();
                let known = if list.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("they are {}", list.join(", "))
                };
                out.push(Diag::new(Code::UnknownMember, Span { item, range: b.name_range }, format!("`{name}` is not a run-time symbol of this program (a DenseDyn axis it iterates); {known}")));
                continue;
            }
            match &b.value {
                Value::Int(n) if *n > 0 => {
                    // What the run would read or write out of its tensors, before it builds.
                    if let Some((view, dim, reach, extent)) =
                        out_of_bounds_at(db, &execute.program, name, &int_bindings(execute))
                    {
                        let d = Diag::new(
                            Code::IndexOutOfRange,
                            Span {
                                item,
                                range: b.value_range,
                            },
                            format!(
                                "with `{name}` = {n}, `{}` reaches {reach}, out of range for dimension {dim} of `{}`, which has extent {extent}",
                                view.text(),
                                view.tensor.name
                            ),
                        )
                        .with_related(view.span, "the view, in the workload");
                        out.push(d);
                    }
                }
                Value::Unknown => {}
                v => out.push(Diag::new(
                    Code::WrongKind,
                    Span {
                        item,
                        range: b.value_range,
                    },
                    format!(
                        "`{name}` is bound to a positive integer, not {}",
                        v.describe()
                    ),
                )),
            }
        }
    }
    out
}

/// An execution's bindings to numbers.
fn int_bindings(execute: &crate::eval::Execute<'_>) -> Vec<(String, u64)> {
    execute
        .bindings
        .iter()
        .filter_map(|b| match b.value {
            Value::Int(n) if n >= 0 => Some((b.name.clone(), n as u64)),
            _ => None,
        })
        .collect()
}

/// The first view a run with its run-time symbols bound as `bound` says (the others at their
/// defaults) would take outside its tensor, among those whose index depends on a loop over
/// `name` (the others are checked at their static extents, WSP208): the view, its dimension,
/// how far it reaches, and the extent.
fn out_of_bounds_at<'db>(
    db: &'db dyn salsa::Database,
    s: &Schedule<'db>,
    name: &str,
    bound: &[(String, u64)],
) -> Option<(crate::values::View<'db>, usize, i64, u64)> {
    fn walk<'db>(
        nodes: &[PlanNode<'db>],
        vars: &mut Vec<(String, Option<u64>, bool)>,
        name: &str,
        bound: &[(String, u64)],
    ) -> Option<(crate::values::View<'db>, usize, i64, u64)> {
        for n in nodes {
            let depth = vars.len();
            let found = match n {
                PlanNode::Loop { vars: lv, body, .. } => {
                    let mut empty = false;
                    for v in lv {
                        let dynamic = v.axis_kind == wsp_ir::plan::AxisKind::DenseDyn;
                        let value = bound.iter().rev().find(|(n, _)| *n == v.axis);
                        let e = match value {
                            Some((_, n)) if dynamic => Some(*n),
                            _ => v.extent,
                        };
                        empty |= e == Some(0);
                        vars.push((v.name.clone(), e, dynamic && v.axis == name));
                    }
                    // A loop of no iterations reaches nothing.
                    if empty {
                        None
                    } else {
                        walk(body, vars, name, bound)
                    }
                }
                PlanNode::Consume {
                    var, extent, body, ..
                } => {
                    vars.push((var.clone(), *extent, false));
                    walk(body, vars, name, bound)
                }
                PlanNode::Task(t) => t.args.iter().find_map(|a| {
                    let TaskArg::Tile { view, .. } = a else {
                        return None;
                    };
                    let extent_of =
                        |v: &str| vars.iter().rev().find(|x| x.0 == v).and_then(|x| x.1);
                    let rebound = |a: &wsp_ir::Affine| {
                        a.terms.iter().any(|(v, _)| {
                            vars.iter().rev().find(|x| x.0 == *v).is_some_and(|x| x.2)
                        })
                    };
                    view.indices.iter().enumerate().find_map(|(d, idx)| {
                        let extent = *view.tensor.shape.get(d)?;
                        let (a, len) = match idx {
                            wsp_ir::plan::ViewIndex::At(a) => (a, 1),
                            wsp_ir::plan::ViewIndex::Slice(a, len) => (a, *len as i64),
                            wsp_ir::plan::ViewIndex::Range(..) => return None,
                        };
                        if !rebound(a) {
                            return None;
                        }
                        let (lo, hi) = a.bounds(extent_of)?;
                        let reach = hi.checked_add(len - 1)?;
                        (lo < 0 || reach >= extent as i64)
                            .then(|| (view.clone(), d, if lo < 0 { lo } else { reach }, extent))
                    })
                }),
                PlanNode::Conditional { branches, .. } => branches
                    .iter()
                    .find_map(|b| walk(&b.body, vars, name, bound)),
                PlanNode::Pipeline { stages, .. } => walk(stages, vars, name, bound),
                PlanNode::Send { .. } | PlanNode::SlotLoad { .. } => None,
            };
            vars.truncate(depth);
            if found.is_some() {
                return found;
            }
        }
        None
    }
    s.calls().into_iter().find_map(|call| {
        walk(
            &workload_instance(db, call).0.body,
            &mut Vec::new(),
            name,
            bound,
        )
    })
}

/// WSP208 for each view a run would take out of its tensor with the run-time symbols bound
/// from outside the file (`--bind`, `%bind`, shown as `how(name, value)`), which win over an
/// `execute(...)`'s own: found from the static shapes before anything is built. At the view,
/// with a note at each execution it happens in.
pub fn binding_checks<'db>(
    db: &'db dyn salsa::Database,
    file: File,
    bindings: &[(String, u64)],
    how: &dyn Fn(&str, u64) -> String,
) -> Vec<Diag<'db>> {
    let mut out: Vec<Diag<'db>> = Vec::new();
    for &item in module_items(db, file) {
        for execute in item_value(db, item).executes.iter().filter(|e| e.runs) {
            let symbols = runtime_symbols(db, &execute.program);
            let mut bound = int_bindings(execute);
            bound.extend(bindings.iter().cloned());
            for (name, value) in bindings {
                if !symbols.iter().any(|(n, _)| n == name) {
                    continue;
                }
                let Some((view, dim, reach, extent)) =
                    out_of_bounds_at(db, &execute.program, name, &bound)
                else {
                    continue;
                };
                let message = format!(
                    "with {}, `{}` reaches {reach}, out of range for dimension {dim} of `{}`, which has extent {extent}",
                    how(name, *value),
                    view.text(),
                    view.tensor.name
                );
                let at = Span {
                    item,
                    range: execute.range,
                };
                match out
                    .iter_mut()
                    .find(|d| d.span == view.span && d.message == message)
                {
                    Some(d) => *d = d.clone().with_related(at, "in this execution"),
                    None => out.push(
                        Diag::new(Code::IndexOutOfRange, view.span, message)
                            .with_related(at, "in this execution"),
                    ),
                }
            }
        }
    }
    out
}

/// The checks of a compiled program item.
#[salsa::tracked(returns(ref))]
pub fn program_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let Value::Program(s) = &item_value(db, item).value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    out.extend(super::applicability::check(db, item, s));
    // Keys use task fields.
    let mut fields: Vec<String> = Vec::new();
    let mut tensors = Vec::new();
    for call in s.calls() {
        let plan = &workload_instance(db, call).0;
        for n in plan_nodes(&plan.body) {
            if let PlanNode::Task(t) = n {
                for f in &t.fields {
                    if !fields.contains(f) {
                        fields.push(f.clone());
                    }
                }
                for a in &t.args {
                    if let TaskArg::Tile { view, .. } = a
                        && !tensors
                            .iter()
                            .any(|x: &crate::values::Tensor| x.name == view.tensor.name)
                    {
                        tensors.push(view.tensor.clone());
                    }
                }
            }
        }
    }
    for d in &s.directives {
        let key = match &d.detail {
            DirectiveDetail::Key(k) => Some(k),
            DirectiveDetail::Policy(
                Policy::Affinity(k, _) | Policy::Hash(k, _) | Policy::DispatchBy(k, _),
            ) => Some(k),
            _ => None,
        };
        if let Some(k) = key {
            let mut used = Vec::new();
            key_vars(&k.expr, &mut used);
            for v in used {
                if !fields.contains(&v) {
                    let list = if fields.is_empty() {
                        "the program has no tasks".to_string()
                    } else {
                        format!(
                            "the tasks' fields are {}",
                            fields
                                .iter()
                                .map(|f| format!("`{f}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    };
                    out.push(Diag::new(
                        Code::KeyExpression,
                        d.span,
                        format!("the key uses the task field `{v}`, which no task has; {list}"),
                    ));
                }
            }
        }
    }
    // Shards fit the spatial grid.
    let grid = s.directives.iter().find_map(|d| match &d.detail {
        DirectiveDetail::Grid(g) if d.kind == DirectiveKind::SpatialMap => {
            Some((g.clone(), d.span))
        }
        _ => None,
    });
    for t in &tensors {
        for (dim, m) in t.layout.mesh_axes() {
            let rank = grid.as_ref().map_or(0, |(g, _)| g.len());
            if (m as usize) < rank {
                continue;
            }
            let msg = match &grid {
                Some((g, _)) => format!(
                    "`{}` shards dimension {dim} onto mesh axis {m}, but the spatial grid {:?} has {} ax{}",
                    t.name,
                    g,
                    g.len(),
                    if g.len() == 1 { "is" } else { "es" }
                ),
                None => format!(
                    "`{}` shards dimension {dim} onto mesh axis {m}, but the program has no spatial grid: add `.spatial_map(grid=(...))`",
                    t.name
                ),
            };
            let mut d = Diag::new(Code::MeshAxis, t.def, msg);
            if let Some((_, span)) = &grid {
                d = d.with_related(*span, "the grid is set here");
            } else {
                d = d.with_related(
                    Span {
                        item,
                        range: Default::default(),
                    },
                    "in this program",
                );
            }
            out.push(d);
        }
    }
    out
}

/// The targets a program is checked for: the one it compiles for, then the workspace's.
pub(crate) fn program_targets<'db>(
    db: &'db dyn salsa::Database,
    item: Item<'db>,
    s: &Schedule<'db>,
) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    if let Some(CompileTarget { target: t, .. }) = s.target {
        targets.push(t);
    }
    for t in item.file(db).workspace(db).extra_targets(db) {
        if !targets.contains(t) {
            targets.push(*t);
        }
    }
    targets
}

/// WSP505: every tensor of the file is resident in a program's memory for the whole run (the
/// lowered program holds them all), so each must fit in the memory of each target a program is
/// checked for: the NPU's global memory, or for cpu_sim the host's (`wsp_ir::memory`, which the
/// runtime reads too). One query for the file, not one per program: a per-program pass over
/// every item made each edit verify programs × items dependencies.
#[salsa::tracked(returns(ref))]
pub fn tensor_size_checks(db: &dyn salsa::Database, file: File) -> Vec<Diag<'_>> {
    // Each target, with the first program checked for it.
    let mut targets: Vec<(Target, Span)> = Vec::new();
    let mut tensors = Vec::new();
    for &item in module_items(db, file) {
        if !matches!(item.kind(db), ItemKind::Assign | ItemKind::Expr) {
            continue;
        }
        match &item_value(db, item).value {
            Value::Program(s) => {
                let compiled = s.target.as_ref().map_or(
                    Span {
                        item,
                        range: Default::default(),
                    },
                    |c| c.span,
                );
                for t in program_targets(db, item, s) {
                    if !targets.iter().any(|(k, _)| *k == t) {
                        targets.push((t, compiled));
                    }
                }
            }
            // A view's bytes are its base's.
            Value::Tensor(t)
                if t.name == *item.name(db)
                    && !matches!(t.origin, crate::values::TensorOrigin::View { .. }) =>
            {
                tensors.push(t)
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for t in tensors {
        let bytes = memory::tensor_bytes(&t.shape, t.dtype);
        for &(target, compiled) in &targets {
            if bytes.is_some_and(|b| b <= target.memory_bytes()) {
                continue;
            }
            out.push(
                Diag::new(
                    Code::TooLarge,
                    t.def,
                    format!(
                        "`{}` ({} {}) needs {}, more than {}",
                        t.name,
                        t.dtype.name(),
                        wsp_ir::shape_text(&t.shape),
                        memory::size_text(bytes),
                        target.memory_text()
                    ),
                )
                .with_related(
                    compiled,
                    format!("in this program, checked for {}", target.name()),
                ),
            );
        }
    }
    out
}

fn key_vars(e: &ScalarExpr, out: &mut Vec<String>) {
    match e {
        ScalarExpr::Var(v) => {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        ScalarExpr::Not(x) | ScalarExpr::Neg(x) => key_vars(x, out),
        ScalarExpr::Binary(_, a, b) => {
            key_vars(a, out);
            key_vars(b, out);
        }
        ScalarExpr::Element(_, idx) => idx.iter().for_each(|i| key_vars(i, out)),
        ScalarExpr::Const(_) | ScalarExpr::Slot(_) => {}
    }
}

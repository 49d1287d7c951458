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
use crate::values::{CompileTarget, Schedule, Value};
use crate::workloads::{PlanNode, TaskArg, plan_nodes, workload_instance};
use wsp_ir::{ScalarExpr, memory};

/// `program.execute(name=value, ...)`: each name is a run-time symbol of the program, bound to
/// a positive integer. The evaluator records the bindings (`Execute`); they are checked here
/// because the symbols come from the workload bodies.
pub fn execute_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    for k in &item_value(db, item).kernel_names {
        let kernels = program_kernels(db, &k.program);
        if kernels.contains(&k.name) {
            continue;
        }
        let mut message = format!("the program runs no kernel `{}`", k.name);
        if let Some(best) = crate::names::suggest(&k.name, kernels.iter().map(String::as_str)) {
            message.push_str(&format!("; did you mean `{best}`?"));
        }
        let list: Vec<String> = kernels.iter().map(|k| format!("`{k}`")).collect();
        message.push_str(&format!(" (it runs {})", list.join(", ")));
        let at = Span {
            item,
            range: k.range,
        };
        out.push(Diag::new(Code::UnknownName, at, message));
    }
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
                        .any(|d| d.severity() == crate::diagnostics::Severity::Error);
                    takes && errors
                })
            };
            if !symbols.iter().any(|(n, _)| n == name) && left_out() {
                continue;
            }
            if !symbols.iter().any(|(n, _)| n == name) {
                let known = known_symbols(&symbols);
                out.push(Diag::new(Code::UnknownMember, Span { item, range: b.name_range }, format!("`{name}` is not a run-time symbol of this program (a DenseDyn axis it iterates, or a `symbol_u64(...)` its predicates and keys read); {known}")));
                continue;
            }
            match &b.value {
                // A DenseDyn bound to 0 runs none of its iterations.
                Value::Int(n) if *n >= 0 => {
                    // What the run would read or write out of its tensors, before it builds.
                    let bound = int_bindings(execute);
                    let file = item.file(db);
                    for r in out_of_bounds_at(db, file, &execute.program, name, &bound) {
                        let d = Diag::new(
                            Code::IndexOutOfRange,
                            Span {
                                item,
                                range: b.value_range,
                            },
                            r.message(&format!("`{name}` = {n}")),
                        )
                        .with_related(r.span, "there, in the workload");
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
                        "`{name}` is bound to an integer, 0 or more, not {}",
                        v.describe()
                    ),
                )),
            }
        }
    }
    out
}

/// An execution's bindings to numbers.
/// What a message says of a program's run-time symbols: "they are `seq` (default 16), ...".
fn known_symbols(symbols: &[(String, u64)]) -> String {
    if symbols.is_empty() {
        return "it has none".to_string();
    }
    let list: Vec<String> = symbols
        .iter()
        .map(|(n, d)| format!("`{n}` (default {d})"))
        .collect();
    format!("they are {}", list.join(", "))
}

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

/// A place a run would take outside its tensor: a task's view, or an element a `P.when`
/// predicate reads.
struct Reach<'db> {
    /// As written: `X[i]`, `T[i]`.
    text: String,
    tensor: String,
    dim: usize,
    /// How far it reaches, and the dimension's extent.
    reach: i64,
    extent: u64,
    /// The view, or the `P.when(...)` call.
    span: Span<'db>,
}

impl Reach<'_> {
    /// WSP208's message, for a run with `binding` (`` `n` = 9 ``, `` `--bind n=9` ``).
    fn message(&self, binding: &str) -> String {
        format!(
            "with {binding}, `{}` reaches {}, out of range for dimension {} of `{}`, which has extent {}",
            self.text, self.reach, self.dim, self.tensor, self.extent
        )
    }
}

/// Each place a run with its run-time symbols bound as `bound` says (the others at their
/// defaults) would take outside its tensor, among those whose index depends on a loop over
/// `name` (the others are checked at their static extents, WSP208), in plan order.
fn out_of_bounds_at<'db>(
    db: &'db dyn salsa::Database,
    file: File,
    s: &Schedule<'db>,
    name: &str,
    bound: &[(String, u64)],
) -> Vec<Reach<'db>> {
    let mut walk = BoundsWalk {
        db,
        file,
        name,
        bound,
        vars: Vec::new(),
        found: Vec::new(),
    };
    for call in s.calls() {
        walk.nodes(&workload_instance(db, call).0.body);
    }
    // A workload called twice reaches the same places.
    let mut seen = std::collections::HashSet::new();
    walk.found
        .retain(|r| seen.insert((r.span, r.text.clone(), r.dim)));
    walk.found
}

/// The walk of [`out_of_bounds_at`] over a plan.
struct BoundsWalk<'a, 'db> {
    db: &'db dyn salsa::Database,
    file: File,
    name: &'a str,
    bound: &'a [(String, u64)],
    /// Each loop variable in scope: its extent, and whether it runs over `name`.
    vars: Vec<(String, Option<u64>, bool)>,
    found: Vec<Reach<'db>>,
}

impl<'db> BoundsWalk<'_, 'db> {
    /// How far index `a` (with `len` elements from it) reaches outside `0..extent`, when it
    /// depends on the rebound symbol and does.
    fn past(&self, a: &wsp_ir::Affine, len: i64, extent: u64) -> Option<i64> {
        let var = |v: &str| self.vars.iter().rev().find(|x| x.0 == v);
        if !a.terms.iter().any(|(v, _)| var(v).is_some_and(|x| x.2)) {
            return None;
        }
        let (lo, hi) = a.bounds(|v| var(v).and_then(|x| x.1))?;
        let reach = hi.checked_add(len - 1)?;
        if lo < 0 {
            Some(lo)
        } else {
            (reach >= extent as i64).then_some(reach)
        }
    }

    fn shape_of(&self, tensor: &str) -> Option<Vec<u64>> {
        let b = crate::names::module_scope(self.db, self.file).lookup(tensor)?;
        match &item_value(self.db, b.item).value {
            Value::Tensor(t) => Some(t.shape.clone()),
            _ => None,
        }
    }

    /// The element reads of a predicate.
    fn reads(&mut self, e: &ScalarExpr, span: Span<'db>) {
        match e {
            ScalarExpr::Element(tensor, idx) => {
                if let Some(shape) = self.shape_of(tensor) {
                    let past = idx.iter().enumerate().find_map(|(d, i)| {
                        let extent = *shape.get(d)?;
                        Some((d, self.past(&i.as_affine()?, 1, extent)?, extent))
                    });
                    if let Some((dim, reach, extent)) = past {
                        self.found.push(Reach {
                            text: e.to_string(),
                            tensor: tensor.clone(),
                            dim,
                            reach,
                            extent,
                            span,
                        });
                    }
                }
                for i in idx {
                    self.reads(i, span);
                }
            }
            e => {
                for x in e.children() {
                    self.reads(x, span);
                }
            }
        }
    }

    fn nodes(&mut self, nodes: &[PlanNode<'db>]) {
        for n in nodes {
            let depth = self.vars.len();
            match n {
                PlanNode::Loop { vars: lv, body, .. } => {
                    let mut empty = false;
                    for v in lv {
                        let dynamic = v.axis_kind == wsp_ir::plan::AxisKind::DenseDyn;
                        let value = self.bound.iter().rev().find(|(n, _)| *n == v.axis);
                        let e = match value {
                            Some((_, n)) if dynamic => Some(*n),
                            _ => v.extent,
                        };
                        empty |= e == Some(0);
                        let rebound = dynamic && v.axis == self.name;
                        self.vars.push((v.name.clone(), e, rebound));
                    }
                    // A loop of no iterations reaches nothing.
                    if !empty {
                        self.nodes(body);
                    }
                }
                PlanNode::Consume {
                    var, extent, body, ..
                } => {
                    self.vars.push((var.clone(), *extent, false));
                    self.nodes(body);
                }
                PlanNode::Task(t) => {
                    for a in &t.args {
                        let TaskArg::Tile { view, .. } = a else {
                            continue;
                        };
                        let past = view.indices.iter().enumerate().find_map(|(d, idx)| {
                            let extent = *view.tensor.shape.get(d)?;
                            let (a, len) = match idx {
                                wsp_ir::plan::ViewIndex::At(a) => (a, 1),
                                wsp_ir::plan::ViewIndex::Slice(a, len) => (a, *len as i64),
                                wsp_ir::plan::ViewIndex::Range(..) => return None,
                            };
                            Some((d, self.past(a, len, extent)?, extent))
                        });
                        if let Some((dim, reach, extent)) = past {
                            self.found.push(Reach {
                                text: view.text(),
                                tensor: view.tensor.name.clone(),
                                dim,
                                reach,
                                extent,
                                span: view.span,
                            });
                        }
                    }
                }
                PlanNode::Conditional { branches, .. } => {
                    for b in branches {
                        if let (Some(p), Some(span)) = (&b.predicate, b.span) {
                            self.reads(p, span);
                        }
                        self.nodes(&b.body);
                    }
                }
                PlanNode::Pipeline { stages, .. } => self.nodes(stages),
                PlanNode::Send { .. } | PlanNode::SlotLoad { .. } => {}
            }
            self.vars.truncate(depth);
        }
    }
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
                for r in out_of_bounds_at(db, file, &execute.program, name, &bound) {
                    let message = r.message(&how(name, *value));
                    let at = Span {
                        item,
                        range: execute.range,
                    };
                    match out
                        .iter_mut()
                        .find(|d| d.span == r.span && d.message == message)
                    {
                        Some(d) => *d = d.clone().with_related(at, "in this execution"),
                        None => out.push(
                            Diag::new(Code::IndexOutOfRange, r.span, message)
                                .with_related(at, "in this execution"),
                        ),
                    }
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
    let (s, unresolved) = crate::workloads::resolve_task_params(db, s);
    let s = &s;
    for (span, message) in unresolved {
        out.push(Diag::new(Code::KeyExpression, span, message));
    }
    // Keys use task fields.
    let fields = crate::workloads::task_fields(db, s);
    let mut tensors = Vec::new();
    for call in s.calls() {
        let plan = &workload_instance(db, call).0;
        for n in plan_nodes(&plan.body) {
            if let PlanNode::Task(t) = n {
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
    let extents = crate::workloads::field_extents(db, s);
    for d in &s.directives {
        out.extend(key_checks(&fields, &extents, d));
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

/// The checks of the explorations an item makes: the keys of the explored workload's schedule
/// and of the space's configurations use task fields (WSP504).
#[salsa::tracked(returns(ref))]
pub fn exploration_checks<'db>(db: &'db dyn salsa::Database, item: Item<'db>) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    for e in item_value(db, item).explores.iter() {
        let symbols = crate::lower::runtime_symbols(db, &e.schedule);
        for (name, _) in &e.space.bindings {
            if !symbols.iter().any(|(n, _)| n == name) {
                let known = known_symbols(&symbols);
                out.push(Diag::new(
                    Code::UnknownMember,
                    e.span,
                    format!("the space binds `{name}`, which is not a run-time symbol of the explored workload; {known}"),
                ));
            }
        }
        let (s, unresolved) = crate::workloads::resolve_task_params(db, &e.schedule);
        for (span, message) in unresolved {
            out.push(Diag::new(Code::KeyExpression, span, message));
        }
        let fields = crate::workloads::task_fields(db, &s);
        let extents = crate::workloads::field_extents(db, &s);
        for d in &s.directives {
            out.extend(key_checks(&fields, &extents, d));
        }
        // Each key of the space once, reported at the exploration.
        let mut keys: Vec<&crate::values::Key> = Vec::new();
        let space = &e.space;
        let given = space
            .dispatch
            .iter()
            .filter_map(|d| d.2.as_ref())
            .chain(space.stream_keys.iter().flatten());
        for k in given {
            if keys.contains(&&k.key) {
                continue;
            }
            keys.push(&k.key);
            let d = crate::values::schedule::Directive {
                kind: DirectiveKind::StreamBy,
                span: e.span,
                detail: DirectiveDetail::Key(k.key.clone()),
            };
            for mut diag in key_checks(&fields, &extents, &d) {
                diag.message = format!("`{}`: {}", k.text, diag.message);
                out.push(diag);
            }
        }
    }
    out
}

/// WSP504 for a directive's key: every field it uses is a task field, and a tuple key's parts
/// after the first have static extents.
pub(crate) fn key_checks<'db>(
    fields: &[String],
    extents: &std::collections::HashMap<String, u64>,
    d: &crate::values::schedule::Directive<'db>,
) -> Vec<Diag<'db>> {
    let mut out = Vec::new();
    let key = d.key();
    // A part that is no task field at all is reported below.
    if let Some((k, true)) = key
        && let Err(part) = k.row_major(|f| extents.get(f).copied())
        && !matches!(&part, wsp_ir::ScalarExpr::Var(f) if !fields.contains(f))
    {
        out.push(Diag::new(
            Code::KeyExpression,
            d.span,
            format!(
                "a tuple key combines its parts row-major, each after the first a task field with a static extent, and `{part}` is {}; write the combination out (`lambda t: t.b * N + t.h`) or use `DispatchPolicy.hash`, which hashes a tuple whole",
                if matches!(part, wsp_ir::ScalarExpr::Var(_)) {
                    "a field whose extent is known only at run time"
                } else {
                    "not a task field"
                }
            ),
        ));
    }
    if let Some((k, _)) = key {
        let mut used = Vec::new();
        key_vars(&k.expr, &mut used);
        for v in used {
            // An unresolved `t.params[k]` is reported above.
            if !fields.contains(&v) && !v.starts_with("params[") {
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
        e => e.children().into_iter().for_each(|x| key_vars(x, out)),
    }
}

/// The names of the kernels a program's tasks run, in the order they first appear.
fn program_kernels(db: &dyn salsa::Database, p: &crate::values::Schedule<'_>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for call in p.calls() {
        for n in crate::workloads::plan_nodes(&workload_instance(db, call).0.body) {
            if let crate::workloads::PlanNode::Task(t) = n
                && !out.contains(&t.kernel_name)
            {
                out.push(t.kernel_name.clone());
            }
        }
    }
    out
}
